#!/usr/bin/env bash
# make_schedules.sh — regenerate the case study's schedules in schedules/ and
# embed in each the topology and size it is meant for, so that
# `taccl-run schedules/X.xml` needs no other argument.
# usage: scripts/make_schedules.sh [BIN_DIR]   (run `make all` first)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
bin=${1:-build/bin}
cd "$(dirname "$0")/.."
python3 scripts/gen_case_study.py --quiet
for f in schedules/cs-*.xml; do
    case "$f" in
        schedules/cs-chip-*) topo=topologies/cs-chip4.json ;;
        schedules/cs-cluster-*) topo=topologies/cs-cluster2.json ;;
        *) continue ;;
    esac
    # one chunk is one 256-byte [C, D] i32 tile
    n=$(sed -n 's/.*nchunksperloop="\([0-9]*\)".*/\1/p' "$f" | head -1)
    # taccl-run never writes over its input: embed into a new file, then
    # replace the old one with it
    "$bin/taccl-run" "$f" --topo "$topo" --size $((n * 256)) --embed-to "$f.embedded" -q
    mv "$f.embedded" "$f"
done
echo "make_schedules: $(ls schedules/cs-*.xml | wc -l) schedules written and verified"
