#!/usr/bin/env bash
# scale.sh — how the tools scale with the number of ranks: wall time and
# peak resident memory (/usr/bin/time -v), measured, not asserted by any
# test (make scale).
#
#   executor     taccl-run --no-data (timing only) on a ring AllReduce of 64,
#                256 and 1024 ranks: `taccl-synth --algo ring --channels 1
#                --target unlimited` on a ring topology (gen_topologies.py
#                ring(n)), 2 n (n - 1) steps; the fastest of 3 runs;
#   pathological taccl-run --target unlimited --no-data on the adversarial
#                files of scripts/gen_pathological.py (issue 37), at growing
#                sizes: `repeat` (2 ranks, one tb each, the same 71 chunks
#                received N times: N = 8000, 25000, 40000, 80000) and `wide`
#                (R ranks x 16 tbs x 251 steps, every tb writing the same 71
#                output chunks: R = 17, 22, 33, 44); the fastest of 3 runs (one
#                run when it takes over 10 s);
#   synthesizer  taccl-synth AllGather on 2D tori of 16, 32, 64 and 128 ranks
#                (the bundled 4x4 and 8x8 sketches; 4x8 and 8x16 with the same
#                symmetries), 1 MiB per rank, the default time limits (60 s
#                routing, 30 s contiguity; --json says whether one stopped a
#                stage); the same with 1 KiB chunks and --time-limit 10; and
#                on the largest bundled topology, torus-2d-32x32 (1024 ranks):
#                with its symmetries, and with a sketch of no keys but nnodes;
#   clusters     hierarchical synthesis (taccl-synth's default from 64 ranks on
#                2+ nodes) on DGX-2 x8, NDv2 x16, DGX A100 x16 and DGX H100 x16
#                (128 GPUs) and DGX A100 x128 and DGX H100 x128 (1024 GPUs;
#                gen_topologies.py), sketches of no keys but nnodes (DGX-2
#                also input_chunkup 4): AllGather --size 1G --target
#                unlimited (time, peak memory, whether hierarchical), then
#                taccl-run --no-data on it (verified, its lower bound over its
#                time); whether the default --target msccl takes it (the
#                refusal if not; not tried after a synthesis over 120 s);
#                taccl-run with data on the same synthesized at 1 MiB;
#                DGX-2 x8 AllReduce the same way.  Then the growth exponent of
#                time and memory from 128 to 1024 GPUs (A100, H100) and each
#                row against the targets: synthesis <= 2 min at 128 GPUs and
#                <= 10 min at 1024, AllGather >= 0.90 of the bound (each
#                row, and each cluster by its best sketch), < 4 GiB;
#                and torus-2d-32x32 AllGather (flat, its symmetries, default
#                limits) in the same table, against <= 30 s at >= 0.97 of the
#                bound.
#                This tree only, not --base.
#   bandwidth    ReduceScatter and AllReduce at 1 GiB on DGX-2 x8, DGX A100
#                x16 and DGX H100 x16 (128 GPUs, sketches of no keys but
#                nnodes, --target unlimited): the default taccl-synth beside
#                NCCL's schedule (--algo nccl) and --algo hier at the same
#                size, each run with taccl-run --no-data; the time over the
#                partial-sums floor (AllReduce: taccl-run's
#                partial_sums_floor_us, 2(N-1)/N S through a node's NICs;
#                ReduceScatter: its bound, the same thing) and over our
#                bound, the synthesis time and the candidate kept; then the
#                targets (issue on cluster scale, item 2): synthesized <=
#                NCCL's schedule in every row, AllReduce >= 0.90 of the
#                partial-sums floor on each cluster.  This tree only.
#
# usage: scripts/scale.sh [BIN_DIR] [--base REV] [--timeout S] [--mem-cap MB] [--no-1024]
#                         [--only SECTIONS]
#   --base REV   also build REV (git archive into a temporary directory) and
#                measure it the same way in the same run: a before/after table
#   --timeout S  a run still going after S seconds is stopped and shown as
#                such (default 900)
#   --mem-cap MB a run may map at most MB MiB (ulimit -v; default none), so a
#                blow-up ends in the table instead of on the machine
#   --no-1024    skip the 1024-rank synthesizer and cluster runs (minutes each)
#   --only S,..  run only these sections (executor, pathological,
#                synthesizer, clusters, bandwidth; default all)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
base="" limit=900 big=1 cap= only=executor,pathological,synthesizer,clusters,bandwidth
while [ $# -gt 0 ]; do
    case $1 in
        --only) only=$2; shift 2 ;;
        --base) base=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --mem-cap) cap=$2; shift 2 ;;
        --no-1024) big=0; shift ;;
        *) bin=$(cd "$1" && pwd); shift ;;
    esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
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
for make, n in ((g.dgx2, 8), (g.ndv2, 16), (g.dgx_a100, 16), (g.dgx_h100, 16),
                (g.dgx_a100, 128), (g.dgx_h100, 128)):
    t = "%s-%d" % (make.__name__, n)
    json.dump(make(n), open(os.path.join(work, t + ".json"), "w"))
    json.dump({"name": "plain", "nnodes": n}, open(os.path.join(work, t + "-plain.json"), "w"))
    json.dump({"name": "cu4", "nnodes": n, "hyperparameters": {"input_chunkup": 4}},
              open(os.path.join(work, t + "-cu4.json"), "w"))
EOF

header() {
    local cols=("$@")
    local line="|" sep="|"
    for c in "${cols[@]}"; do line="$line $c |"; sep="$sep---|"; done
    echo "$line"
    echo "$sep"
}

# py: what the Python of the clusters and bandwidth sections shares:
# load(FILE), the JSON object FILE holds ({} when unreadable), and
# cell(TEXT), TEXT cut to ~100 characters with | escaped for the table
py='
import json, sys
def load(f):
    try:
        j = json.load(open(f))
    except Exception:
        j = {}
    return j if isinstance(j, dict) else {}
def cell(e):
    return (e[:100] + ("..." if len(e) > 100 else "")).replace("|", "\\|")
'

if want executor; then
echo "## executor: taccl-run --no-data, ring AllReduce (1 channel, 2n(n-1) steps), the fastest of 3 runs"
echo
cols=("ranks" "steps")
for l in "${labels[@]}"; do cols+=("$l: time s" "$l: peak MiB"); done
header "${cols[@]}"
for n in 64 256 1024; do
    "$bin/taccl-synth" --algo ring "$work/ring-$n.json" --collective allreduce --channels 1 \
        --target unlimited -q -o "$work/ring$n.xml" || exit 1
    cells=("$n" "$((2 * n * (n - 1)))")
    for b in "${bins[@]}"; do
        # the fastest of 3 (these machines are shared: one run can be 1.5x
        # another); its peak memory with it
        best=
        for _ in 1 2 3; do
            measure "$work/m" "$b/taccl-run" "$work/ring$n.xml" --no-data --target unlimited -q
            read -r s m rc <"$work/m"
            [ "$rc" = 0 ] || { best="$s ($rc) $m"; break; }
            if [ -z "$best" ] || awk -v a="$s" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
                best="$s $m"
            fi
        done
        cells+=("${best% *}" "${best##* }")
    done
    row "${cells[@]}"
done
echo

fi

if want pathological; then
echo "## executor: pathological files (scripts/gen_pathological.py, issue 37), taccl-run --target unlimited --no-data"
echo
cols=("file" "steps" "MB")
for l in "${labels[@]}"; do cols+=("$l: time s" "$l: peak MiB" "$l: exit"); done
header "${cols[@]}"
# patho_case NAME GENERATOR-ARGS...: one row; the fastest of 3 runs of each
# binary, or its one run when that took over 10 s (the quadratic ones)
patho_case() {
    local name=$1
    shift
    python3 "$root/scripts/gen_pathological.py" "$@" "$work/p.xml" || exit 1
    local steps mb
    steps=$(grep -c '<step ' "$work/p.xml")
    mb=$(awk -v b="$(wc -c <"$work/p.xml")" 'BEGIN { printf "%.1f", b / 1e6 }')
    local cells=("$name" "$steps" "$mb")
    for b in "${bins[@]}"; do
        local best= code=
        for _ in 1 2 3; do
            measure "$work/m" "$b/taccl-run" "$work/p.xml" --target unlimited --no-data -q
            read -r s m rc <"$work/m"
            if [ -z "$best" ] || awk -v a="$s" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
                best="$s $m" code=$rc
            fi
            [ "$rc" = timeout ] || awk -v a="$s" 'BEGIN { exit !(a > 10) }' && break
        done
        cells+=("${best% *}" "${best##* }" "$code")
    done
    row "${cells[@]}"
    rm -f "$work/p.xml"
}
for n in 8000 25000 40000 80000; do
    patho_case "repeat: 2 ranks, 71 chunks received $n times" repeat --chunks 71 --reps "$n"
done
for r in 17 22 33 44; do
    patho_case "wide: $r ranks x 16 tbs x 251 steps, 71 chunks each" wide --ranks "$r" --tbs 16 \
        --steps 251 --cnt 71
done
echo
echo "(exit 0: completed; 1: the races that wide is made of, its expected verdict)"
echo
fi

if want synthesizer; then
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
fi
if want clusters; then
echo
echo "## clusters: hierarchical taccl-synth, --size 1G --target unlimited, then taccl-run --no-data; loadable by the default --target msccl; data checked at 1 MiB"
echo
# jfield FILE KEY...: each KEY's value in the JSON object FILE holds, one a
# line (true/false in lower case; "-" when absent, null or unreadable)
jfield() {
    python3 -c "$py"'
for k in sys.argv[2:]:
    v = load(sys.argv[1]).get(k)
    print("-" if v is None else str(v).lower() if isinstance(v, bool) else v)
' "$@"
}
# refusal: the last line taccl-synth wrote on stderr (its reason), for a cell
refusal() {
    python3 -c "$py"'
e = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
e = ([l for l in e if l.startswith("taccl-synth: ")] or e or ["(no message)"])[-1]
print(cell(e[len("taccl-synth: "):] if e.startswith("taccl-synth: ") else e))
' "$work/stderr"
}
# verdict RC OK [data]: OK when taccl-run (exit RC, its --json in
# $work/stdout) verified the schedule (with "data": and checked the data it
# moved), else "FAILED" and why, for a cell
verdict() {
    python3 -c "$py"'
j, rc, ok, data = load(sys.argv[1]), sys.argv[2], sys.argv[3], len(sys.argv) > 4
if rc == "0" and j.get("verified") and (j.get("data_checked") or not data):
    print(ok)
else:
    e = (j.get("error") or j.get("wrong_elements") and "%s wrong elements" % j["wrong_elements"]
         or not j and "no --json output" or j.get("verified") and "data not checked"
         or "not verified")
    print(cell("FAILED (exit %s): %s" % (rc, e)))
' "$work/stdout" "$@"
}
header "cluster" "GPUs" "collective" "sketch" "synth s" "synth peak MiB" "hierarchical" \
    "bound ratio" "verified" "taccl-run s" "loadable (--target msccl)" "data checked (1 MiB)"
: >"$work/clusters.tsv"
# cluster_case NAME GPUS TOPO SKETCH COLLECTIVE: TOPO and SKETCH name the
# files the Python above wrote into $work
cluster_case() {
    local name=$1 n=$2 tp=$work/$3.json sk=$work/$3-$4.json what=$4 coll=$5
    shift 5
    local extra=("$@")     # more taccl-synth flags for every synthesis of the row
    local s m rc hier ratio ver rs rrc load data
    rm -f "$work/c.xml"
    measure "$work/m" "$bin/taccl-synth" "$sk" "$tp" --collective "$coll" --size 1G \
        --target unlimited -q --json -o "$work/c.xml" "${extra[@]}"
    read -r s m rc <"$work/m"
    cp "$work/stdout" "$work/synth.json"
    hier=$(jfield "$work/synth.json" hierarchical)
    ratio=- ver="not run" rs=-
    if [ "$rc" = 0 ]; then
        measure "$work/m" "$bin/taccl-run" "$work/c.xml" --target unlimited --no-data --json -q
        read -r rs _ rrc <"$work/m"
        ver=$(verdict "$rrc" true)
        ratio=$(jfield "$work/stdout" bound_ratio)
        [ "$ratio" = - ] || ratio=$(printf '%.3f' "$ratio")
        [ "$rrc" = 0 ] || rs="$rs ($rrc)"
    else
        s="$s ($rc)"
    fi
    rm -f "$work/c.xml"
    if awk -v s="${s%% *}" 'BEGIN { exit !(s > 120) }'; then
        load="not tried"
    else
        measure "$work/m" "$bin/taccl-synth" "$sk" "$tp" --collective "$coll" --size 1G \
            --target msccl -q -o "$work/c.xml" "${extra[@]}"
        read -r _ _ rc <"$work/m"
        case $rc in
            0) load=yes ;;
            2) load=$(refusal) ;;
            *) load="synthesis failed ($rc): $(refusal)" ;;
        esac
        rm -f "$work/c.xml"
    fi
    # data checked on every row: 1 MiB a rank is about 1 GiB of buffers at
    # 1024 GPUs (taccl-run in about 8 s)
    measure "$work/m" "$bin/taccl-synth" "$sk" "$tp" --collective "$coll" --size 1M \
        --target unlimited -q -o "$work/c.xml" "${extra[@]}"
    read -r _ _ rc <"$work/m"
    if [ "$rc" != 0 ]; then
        data="not synthesized ($rc): $(refusal)"
    else
        measure "$work/m" "$bin/taccl-run" "$work/c.xml" --target unlimited --json -q
        read -r _ _ rrc <"$work/m"
        data=$(verdict "$rrc" verified data)
    fi
    rm -f "$work/c.xml"
    row "$name" "$n" "$coll" "$what" "$s" "$m" "$hier" "$ratio" "$ver" "$rs" "$load" "$data"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$coll" "$what" "$s" "$m" "$ratio" \
        >>"$work/clusters.tsv"
}
cluster_case "DGX-2 x8" 128 dgx2-8 plain allgather
cluster_case "DGX-2 x8" 128 dgx2-8 cu4 allgather
cluster_case "DGX-2 x8" 128 dgx2-8 plain allreduce
cluster_case "DGX-2 x8" 128 dgx2-8 cu4 allreduce
cluster_case "NDv2 x16" 128 ndv2-16 plain allgather
cluster_case "DGX A100 x16" 128 dgx_a100-16 plain allgather
cluster_case "DGX H100 x16" 128 dgx_h100-16 plain allgather
if [ $big = 1 ]; then
    cluster_case "DGX A100 x128" 1024 dgx_a100-128 plain allgather
    cluster_case "DGX H100 x128" 1024 dgx_h100-128 plain allgather
    # one node of 1024 ranks: flat, its symmetries, default limits (the
    # routing stops at its default 0.1 % gap, reached in about 2 s)
    cp "$root/topologies/torus-2d-32x32.json" "$work/torus32.json"
    cp "$work/torus-32x32-sk.json" "$work/torus32-sym.json"
    cluster_case "torus-2d-32x32" 1024 torus32 sym allgather
fi
echo
echo "(bound ratio: taccl-run's lower bound over its time for the schedule;" \
     "data checked: the same sketch and collective synthesized at --size 1M, run with data)"
echo
python3 - "$work/clusters.tsv" "$big" <<'EOF'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]


def num(v):
    try:
        return float(v)
    except ValueError:          # "- ", "12.3 (timeout)": no usable figure
        return None


def cells(*c):
    print("| " + " | ".join(str(x) for x in c) + " |")


print("### growth exponent from 128 to 1024 GPUs: log(x1024 / x128) / log(1024 / 128)")
print()
if sys.argv[2] != "1":
    print("(not measured: --no-1024)")
else:
    cells("family", "synth s 128", "synth s 1024", "time exponent",
          "peak MiB 128", "peak MiB 1024", "memory exponent")
    print("|---" * 7 + "|")
    for fam in ("A100", "H100"):
        pick = {int(r[1]): r for r in rows
                if fam in r[0] and r[2] == "allgather" and r[3] == "plain"}
        a, b = pick.get(128), pick.get(1024)
        if not a or not b:
            continue

        def exp(i):
            x, y = num(a[i]), num(b[i])
            if not x or not y:
                return "-"
            return "%.2f" % (math.log(y / x) / math.log(1024 / 128))
        cells("DGX " + fam, a[4], b[4], exp(4), a[5], b[5], exp(5))
print()
print("### targets: synthesis <= 2 min at 128 GPUs and <= 10 min at 1024; "
      "AllGather >= 0.90 of the bound at 1 GiB; peak memory < 4 GiB")
print()
cells("cluster", "GPUs", "collective", "sketch", "synthesis time", "AllGather bound ratio",
      "peak memory")
print("|---" * 7 + "|")
seen = {}                       # target: [(measured, met)] over the rows


def mark(target, value, ok, shown):
    seen.setdefault(target, []).append((value, ok))
    return "%s (%s)" % ("met" if ok else "not met", shown)


for name, n, coll, sk, s, m, ratio in rows:
    lim = 120 if int(n) <= 128 else 600
    t, mem, r = num(s), num(m), num(ratio)
    tc = mark("synthesis <= %d s at %s GPUs" % (lim, n), t, t is not None and t <= lim,
              "%s s" % s)
    rc = (mark("AllGather >= 0.90 of the bound, every sketch", r, r is not None and r >= 0.90,
               ratio)
          if coll == "allgather" else "n/a (%s)" % coll)
    mc = mark("peak memory < 4096 MiB", mem, t is not None and mem is not None and mem < 4096,
              "%s MiB" % m)
    cells(name, n, coll, sk, tc, rc, mc)
print()
out = []
for target, v in seen.items():
    got = [x for x, _ in v if x is not None]
    if target.startswith("AllGather"):
        shown = "lowest %.3f" % min(got) if got else "no figure"
    else:
        shown = "highest %g" % max(got) if got else "no figure"
    out.append("%s: %s, %s (%d of %d rows)" % (
        target, shown, "met" if all(ok for _, ok in v) else "not met",
        sum(ok for _, ok in v), len(v)))
# the AllGather target is per cluster: its best sketch (DGX-2 x8 is tried
# with chunkup 1 and 4); rows below 0.90 are named, not hidden
best = {}
for name, n, coll, sk, s, m, ratio in rows:
    if coll == "allgather":
        r = num(ratio)
        best[name] = max(best.get(name, -1.0), r if r is not None else -1.0)
if best:
    low = min(best.values())
    below = ["%s %s %s" % (name, sk, ratio) for name, n, coll, sk, s, m, ratio in rows
             if coll == "allgather" and (num(ratio) is None or num(ratio) < 0.90)]
    out.append("AllGather >= 0.90 of the bound, the best sketch of each cluster: lowest %.3f, "
               "%s (%d of %d clusters)%s" % (
                   low, "met" if low >= 0.90 else "not met",
                   sum(v >= 0.90 for v in best.values()), len(best),
                   "; rows below 0.90: " + ", ".join(below) if below else ""))
print("targets against the measured values: " + "; ".join(out))
for name, n, coll, sk, s, m, ratio in rows:
    if name.startswith("torus"):
        t, r = num(s), num(ratio)
        ok = t is not None and t <= 30 and r is not None and r >= 0.97
        print()
        print("%s: %s s at %s of the bound; target <= 30 s at >= 0.97 (TACOS, greedy: 107 s "
              "at 0.968): %s" % (name, s, ratio, "met" if ok else "not met"))
EOF
fi
if want bandwidth; then
echo
echo "## bandwidth: ReduceScatter and AllReduce at 1 GiB, 128 GPUs: taccl-synth (default) against NCCL's schedule and --algo hier"
echo
header "cluster" "collective" "synth us" "NCCL us" "hier us" "synth / partial-sums floor" \
    "synth / bound" "synth s" "kept"
: >"$work/bw.tsv"
# bw_case NAME TOPO COLLECTIVE: one row; TOPO names the files the Python
# above wrote into $work
bw_case() {
    local name=$1 tp=$work/$2.json sk=$work/$2-plain.json coll=$3 s rc a
    measure "$work/m" "$bin/taccl-synth" "$sk" "$tp" --collective "$coll" --size 1G \
        --target unlimited -q --json -o "$work/bw.xml"
    read -r s _ rc <"$work/m"
    cp "$work/stdout" "$work/bw-synth.json"
    echo '{}' >"$work/bw-run.json"
    [ "$rc" = 0 ] && "$bin/taccl-run" "$work/bw.xml" --target unlimited --no-data --json -q \
        >"$work/bw-run.json" 2>/dev/null
    for a in nccl hier; do
        echo '{}' >"$work/bw-$a.json"
        "$bin/taccl-synth" --algo "$a" "$tp" --collective "$coll" --size 1G --target unlimited \
            -q -o "$work/bw-$a.xml" 2>/dev/null &&
            "$bin/taccl-run" "$work/bw-$a.xml" --target unlimited --no-data --json -q \
                >"$work/bw-$a.json" 2>/dev/null
    done
    rm -f "$work"/bw*.xml
    python3 -c "$py"'
name, coll, s, rc = sys.argv[1:5]
r, j, n, h = (load(f) for f in sys.argv[5:9])
t, nt, ht = r.get("time_us"), n.get("time_us"), h.get("time_us")
fl = r.get("partial_sums_floor_us") or r.get("lower_bound_us")
f = lambda v: "-" if v is None else "%.1f" % v
cells = [name, coll, f(t) if r.get("verified") else "FAILED: %s" % cell(str(r.get("error"))),
         f(nt), f(ht), "%.3f" % (fl / t) if fl and t else "-",
         "%.3f" % r["bound_ratio"] if r.get("bound_ratio") else "-",
         s if rc == "0" else "%s (%s)" % (s, rc), j.get("winner") or "-"]
print("| " + " | ".join(cells) + " |")
with open(sys.argv[9], "a") as o:
    o.write("\t".join([name, coll, f(t), f(nt), "%.4f" % (fl / t) if fl and t else "-"]) + "\n")
' "$name" "$coll" "$s" "$rc" "$work/bw-run.json" "$work/bw-synth.json" "$work/bw-nccl.json" \
        "$work/bw-hier.json" "$work/bw.tsv"
}
for c in "DGX-2 x8:dgx2-8" "DGX A100 x16:dgx_a100-16" "DGX H100 x16:dgx_h100-16"; do
    for coll in reducescatter allreduce; do
        bw_case "${c%%:*}" "${c#*:}" "$coll"
    done
done
echo
python3 - "$work/bw.tsv" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
num = lambda v: None if v == "-" else float(v)
slow = ["%s %s (%s us, NCCL's %s us)" % (r[0], r[1], r[2], r[3]) for r in rows
        if num(r[2]) is None or num(r[3]) is None or num(r[2]) > num(r[3])]
ar = [r for r in rows if r[1] == "allreduce"]
low = ["%s %s" % (r[0], r[4]) for r in ar if num(r[4]) is None or num(r[4]) < 0.90]
print("targets against the measured values: synthesized <= NCCL's schedule: %s; AllReduce >= "
      "0.90 of the partial-sums floor: %s" % (
          "met in %d of %d rows" % (len(rows), len(rows)) if not slow else
          "not met: " + ", ".join(slow),
          "met (lowest %s)" % min(r[4] for r in ar) if not low and ar else
          "not met: " + ", ".join(low)))
EOF
fi
echo
echo "(time in seconds of wall clock and peak resident memory from /usr/bin/time -v; a" \
     "status after the time is the exit code, or timeout after ${limit} s${cap:+; each run capped at $cap MiB of address space})"
