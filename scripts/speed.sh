#!/usr/bin/env bash
# speed.sh — executor speed, measured (not asserted by any test).
#
#  1. timing-only run of a 64-rank ring AllGather with 1 MiB chunks:
#     steps executed per second;
#  2. data-mode run of a 16-rank ring AllGather of 256 MiB per rank:
#     bytes moved per second next to a plain memcpy of the same bytes in the
#     same piece size, on the same machine, in the same run.
# Figures come from taccl-run --json (exec_seconds covers the event loop,
# not buffer set-up or the final check).  Usage: scripts/speed.sh [BIN_DIR]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
bin=${1:-build/bin}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jget() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

cc -O2 -o "$work/memcpy_bw" "$root/scripts/memcpy_bw.c"

python3 "$root/scripts/gen_ring.py" 64 "$work/ring64.xml"
"$bin/taccl-run" "$work/ring64.xml" --no-data --size 64M --json >"$work/t64.json"
steps=$(jget "$work/t64.json" steps_run)
secs=$(jget "$work/t64.json" exec_seconds)
echo "timing-only  64-rank ring AllGather, 1 MiB chunks: $steps steps in $secs s" \
     "= $(python3 -c "print(f'{$steps/max($secs,1e-9):.0f}')") steps/s" \
     "(simulated $(jget "$work/t64.json" time_us) us)"

python3 "$root/scripts/gen_ring.py" 16 "$work/ring16.xml"
/usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$work/time16" \
    "$bin/taccl-run" "$work/ring16.xml" --size 256M --json >"$work/d16.json"
moved=$(jget "$work/d16.json" bytes_moved)
secs=$(jget "$work/d16.json" exec_seconds)
verified=$(jget "$work/d16.json" verified)
ours=$(python3 -c "print(f'{$moved/max($secs,1e-9)/1e9:.2f}')")
mc=$("$work/memcpy_bw" "${moved%.*}" $((16 << 20)))
mcbw=$(awk '{print $2}' <<<"$mc")
echo "data mode    16-rank ring AllGather, 256 MiB per rank: moved $moved bytes in $secs s" \
     "= $ours GB/s (verified=$verified; whole process $(cat "$work/time16"))"
echo "memcpy       same bytes, 16 MiB pieces: $mcbw GB/s (median of 3)"
echo "ratio        executor / memcpy = $(python3 -c "print(f'{$ours/$mcbw:.2f}')") (target >= 0.50)"
