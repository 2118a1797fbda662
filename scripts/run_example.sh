#!/usr/bin/env bash
# run_example.sh — what `make run` shows: the executor judging bundled
# schedules (the case study's chip AllReduce as ReduceScatter then AllGather,
# in i32 and in f32, and the direct AllReduce in f32 for contrast).
set -euo pipefail
bin=${1:-build/bin}
cd "$(dirname "$0")/.."
for args in "schedules/cs-chip-rs-ag.xml" \
            "schedules/cs-chip-rs-ag.xml --dtype f32" \
            "schedules/cs-chip-allreduce-direct.xml --dtype f32 --seed 3"; do
    echo "\$ taccl-run $args"
    # shellcheck disable=SC2086
    "$bin/taccl-run" $args
    echo
done
