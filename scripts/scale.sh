#!/usr/bin/env bash
# scale.sh — how the tools scale with the number of ranks: wall time and
# peak resident memory (/usr/bin/time -v), measured, not asserted by any
# test (make scale).
#
#   executor     taccl-run --no-data (timing only) on a ring AllReduce of 64,
#                256 and 1024 ranks: `taccl-synth --algo ring --channels 1
#                --target unlimited` on a ring topology (gen_topologies.py
#                ring(n)), 2 n (n - 1) steps;
#   synthesizer  taccl-synth AllGather on 2D tori of 16, 32, 64 and 128 ranks
#                (the bundled 4x4 and 8x8 sketches; 4x8 and 8x16 with the same
#                symmetries), 1 MiB per rank, the default time limits (60 s
#                routing, 30 s contiguity; --json says whether one stopped a
#                stage); the same with 1 KiB chunks and --time-limit 10; and
#                on the largest bundled topology, torus-2d-32x32 (1024 ranks):
#                with its symmetries, and with a sketch of no keys but nnodes.
#
# usage: scripts/scale.sh [BIN_DIR] [--base REV] [--timeout S] [--mem-cap MB] [--no-1024]
#   --base REV   also build REV (git archive into a temporary directory) and
#                measure it the same way in the same run: a before/after table
#   --timeout S  a run still going after S seconds is stopped and shown as
#                such (default 900)
#   --mem-cap MB a run may map at most MB MiB (ulimit -v; default none), so a
#                blow-up ends in the table instead of on the machine
#   --no-1024    skip the 1024-rank synthesizer runs (minutes each)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
base="" limit=900 big=1 cap=
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --mem-cap) cap=$2; shift 2 ;;
        --no-1024) big=0; shift ;;
        *) bin=$(cd "$1" && pwd); shift ;;
    esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x /usr/bin/time ] || { echo "scale.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

bins=("$bin")
labels=("this tree")
if [ -n "$base" ]; then
    mkdir "$work/base"
    git -C "$root" archive "$base" | tar -x -C "$work/base" || exit 2
    echo "building $base ..." >&2
    make -C "$work/base" --no-print-directory -s all >"$work/base.log" 2>&1 ||
        { cat "$work/base.log" >&2; exit 2; }
    bins+=("$work/base/build/bin")
    labels+=("$base")
fi

# measure OUT CMD... : "seconds peak_MiB status" into OUT (status: the exit
# code, or "timeout" when the run was stopped after $limit seconds)
measure() {
    local out=$1
    shift
    (
        [ -n "$cap" ] && ulimit -v $((cap * 1024))
        exec /usr/bin/time -v -o "$work/tv" timeout "$limit" "$@"
    ) >"$work/stdout" 2>"$work/stderr"
    local rc=$? secs kb
    secs=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/tv" |
           awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    kb=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$work/tv")
    [ $rc -eq 124 ] && rc=timeout
    echo "$secs $(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }') $rc" >"$out"
}

row() {
    printf '|'
    printf ' %s |' "$@"
    echo
}

python3 - "$work" "$root" <<'EOF'
import json, os, sys
work, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "scripts"))
import gen_topologies as g
for n in (64, 256, 1024):
    json.dump(g.ring(n), open(os.path.join(work, "ring-%d.json" % n), "w"))
for w, h in ((4, 8), (8, 16)):
    n = w * h
    json.dump(g.torus_2d(w, h), open(os.path.join(work, "torus-%dx%d.json" % (w, h)), "w"))
    json.dump({"name": "torus-%dx%d-sym" % (w, h), "nnodes": 1,
               "symmetry_offsets": [[1, w], [w, n]], "input_size": "%dMB" % n},
              open(os.path.join(work, "torus-%dx%d-sk.json" % (w, h)), "w"))
json.dump({"name": "torus-32x32-sym", "nnodes": 1, "symmetry_offsets": [[1, 32], [32, 1024]],
           "input_size": "1024MB"}, open(os.path.join(work, "torus-32x32-sk.json"), "w"))
json.dump({"name": "torus-32x32-plain", "nnodes": 1, "input_size": "1024MB"},
          open(os.path.join(work, "torus-32x32-plain.json"), "w"))
EOF

header() {
    local cols=("$@")
    local line="|" sep="|"
    for c in "${cols[@]}"; do line="$line $c |"; sep="$sep---|"; done
    echo "$line"
    echo "$sep"
}

echo "## executor: taccl-run --no-data, ring AllReduce (1 channel, 2n(n-1) steps)"
echo
cols=("ranks" "steps")
for l in "${labels[@]}"; do cols+=("$l: time s" "$l: peak MiB"); done
header "${cols[@]}"
for n in 64 256 1024; do
    "$bin/taccl-synth" --algo ring "$work/ring-$n.json" --collective allreduce --channels 1 \
        --target unlimited -q -o "$work/ring$n.xml" || exit 1
    cells=("$n" "$((2 * n * (n - 1)))")
    for b in "${bins[@]}"; do
        measure "$work/m" "$b/taccl-run" "$work/ring$n.xml" --no-data --target unlimited -q
        read -r s m rc <"$work/m"
        [ "$rc" = 0 ] || s="$s ($rc)"
        cells+=("$s" "$m")
    done
    row "${cells[@]}"
done
echo

echo "## synthesizer: taccl-synth AllGather, 1 MiB per rank, default time limits (60 s routing, 30 s contiguity)"
echo
cols=("ranks" "topology, sketch")
for l in "${labels[@]}"; do cols+=("$l: time s" "$l: peak MiB" "$l: stopped by a time limit"); done
header "${cols[@]}"
synth_case() {
    local n=$1 what=$2 sk=$3 tp=$4
    shift 4
    local cells=("$n" "$what")
    for b in "${bins[@]}"; do
        rm -f "$work/out.json"
        measure "$work/m" "$b/taccl-synth" "$sk" "$tp" --target unlimited -q -o "$work/s.xml" \
            --json "$@"
        cp "$work/stdout" "$work/out.json"
        read -r s m rc <"$work/m"
        local tl
        tl=$(python3 -c '
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print("-"); sys.exit()
if j.get("error"):
    e = j["error"]
    e = e[e.find(": ") + 2:] if e.startswith("/") else e
    print("refused: " + e[:110].replace("|", "/") + ("..." if len(e) > 110 else ""))
else:
    print({True: "yes", False: "no", None: "(not reported)"}.get(j.get("time_limited"), "?"))
' "$work/out.json")
        [ "$rc" = 0 ] || s="$s ($rc)"
        cells+=("$s" "$m" "$tl")
    done
    row "${cells[@]}"
}
synth_case 16 "torus-2d-4x4, torus-2d-4x4-sk-1" "$root/sketches/torus-2d-4x4-sk-1.json" "$root/topologies/torus-2d-4x4.json"
synth_case 32 "torus 4x8, its symmetries" "$work/torus-4x8-sk.json" "$work/torus-4x8.json"
synth_case 64 "torus-2d-8x8, torus-2d-8x8-sk-1" "$root/sketches/torus-2d-8x8-sk-1.json" "$root/topologies/torus-2d-8x8.json"
synth_case 128 "torus 8x16, its symmetries" "$work/torus-8x16-sk.json" "$work/torus-8x16.json"
if [ $big = 1 ]; then
    synth_case 1024 "torus-2d-32x32, its symmetries" "$work/torus-32x32-sk.json" "$root/topologies/torus-2d-32x32.json"
    synth_case 1024 "torus-2d-32x32, no keys but nnodes" "$work/torus-32x32-plain.json" "$root/topologies/torus-2d-32x32.json"
fi
echo
echo "## synthesizer: the same AllGathers with 1 KiB chunks, where the contiguity MILP has work: --time-limit 10 (each stage)"
echo
header "${cols[@]}"
synth_case 16 "torus-2d-4x4, torus-2d-4x4-sk-1" "$root/sketches/torus-2d-4x4-sk-1.json" "$root/topologies/torus-2d-4x4.json" --size 16K --time-limit 10
synth_case 32 "torus 4x8, its symmetries" "$work/torus-4x8-sk.json" "$work/torus-4x8.json" --size 32K --time-limit 10
synth_case 64 "torus-2d-8x8, torus-2d-8x8-sk-1" "$root/sketches/torus-2d-8x8-sk-1.json" "$root/topologies/torus-2d-8x8.json" --size 64K --time-limit 10
synth_case 128 "torus 8x16, its symmetries" "$work/torus-8x16-sk.json" "$work/torus-8x16.json" --size 128K --time-limit 10
echo
echo "(time in seconds of wall clock and peak resident memory from /usr/bin/time -v; a" \
     "status after the time is the exit code, or timeout after ${limit} s${cap:+; each run capped at $cap MiB of address space})"
