#!/usr/bin/env bash
# run_example.sh — what `make run` shows: the bundled default synthesized
# (NDv2 x2 AllGather from TACCL's sketch sk-1) and judged next to what NCCL
# runs for the same call (--algo nccl), then the executor on the case
# study's chip AllReduce (ReduceScatter then AllGather, i32 and f32) and the
# direct AllReduce in f32 for contrast (its replicas differ).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
bin=${1:-build/bin}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "\$ taccl-synth sketches/ndv2-x2-sk-1.json topologies/ndv2-x2.json -o synth.xml --time-limit 60"
"$bin/taccl-synth" sketches/ndv2-x2-sk-1.json topologies/ndv2-x2.json -o "$work/synth.xml" \
    --time-limit 60
echo "\$ taccl-run synth.xml"
"$bin/taccl-run" "$work/synth.xml"
echo
size=$(sed -n 's/.*<taccl size_bytes="\([0-9]*\)".*/\1/p' "$work/synth.xml" | head -1)
echo "\$ taccl-synth --algo nccl topologies/ndv2-x2.json --collective allgather --size $size -o nccl.xml"
"$bin/taccl-synth" --algo nccl topologies/ndv2-x2.json --collective allgather --size "$size" \
    -o "$work/nccl.xml" -q
echo "\$ taccl-run nccl.xml"
"$bin/taccl-run" "$work/nccl.xml"
echo
for args in "schedules/cs-chip-rs-ag.xml" \
            "schedules/cs-chip-rs-ag.xml --dtype f32" \
            "schedules/cs-chip-allreduce-direct.xml --dtype f32 --seed 3"; do
    echo "\$ taccl-run $args"
    # shellcheck disable=SC2086
    "$bin/taccl-run" $args
    echo
done
