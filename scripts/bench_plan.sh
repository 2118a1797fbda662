#!/usr/bin/env bash
# bench_plan.sh — plans made with no sketch, against NCCL's schedule and
# every baseline, at every power-of-two size (make bench-plan).
#
# For each topology and collective: `taccl-synth --plan` with no --sketch
# (sketches proposed from the topology, --time-budget S), then `taccl-run
# PLAN --sweep 1K:1G --outofplace --no-data --json`, which runs at each size
# the file the runtime would pick (or says NCCL fallback) and times NCCL's
# own schedule there (`--algo nccl` at that size); and each `--algo`
# baseline that supports the collective, written once and swept the same
# way.  Both modes: out of place and in place (--inplace: the file the
# runtime picks for an in-place call; a baseline that does not run in
# place is left out of that mode).  The table says, per topology,
# collective and mode, the plan's synthesis time, at how many sizes the
# plan is at least as fast as NCCL and as every baseline, and the worst
# size (plan time / the fastest of the others).  All times are the
# executor's model (docs/design.md section 4).
#
# usage: scripts/bench_plan.sh [BIN_DIR] [--topos "T ..."] [--collectives "C ..."]
#                              [--budget S] [--out FILE]
#   BIN_DIR        taccl-synth and taccl-run (default build/bin)
#   --topos        names under topologies/ (default: ndv2-x2 ndv2-x4 dgx2-x2
#                  and every DGX A100/H100, NDv4/NDv5 x1, x2, x4)
#   --collectives  default: allgather reducescatter allreduce alltoall
#   --budget       --time-budget of each plan, seconds (default 120)
#   --out          also write the table to FILE
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
topos="ndv2-x2 ndv2-x4 dgx2-x2 dgx-a100-x1 dgx-a100-x2 dgx-a100-x4 dgx-h100-x1 dgx-h100-x2 dgx-h100-x4 ndv4-x1 ndv4-x2 ndv4-x4 ndv5-x1 ndv5-x2 ndv5-x4"
colls="allgather reducescatter allreduce alltoall"
budget=120
out=
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --topos) topos=$2; shift 2 ;;
        --collectives) colls=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -*) echo "bench_plan.sh: unknown option '$1'" >&2; exit 2 ;;
        *) bin=$1; shift ;;
    esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/rows.tsv"

for tp in $topos; do
    tf=$root/topologies/$tp.json
    [ -f "$tf" ] || { echo "bench_plan.sh: no topology $tf" >&2; exit 2; }
    for c in $colls; do
        echo "bench_plan.sh: $tp $c: plan (--time-budget $budget)" >&2
        start=$(date +%s.%N)
        "$bin/taccl-synth" --plan "$tf" --collective "$c" --time-budget "$budget" -q \
            -o "$work/plan-$tp-$c" 2>"$work/err"
        rc=$?
        secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ $rc -ne 0 ]; then
            printf '%s\t%s\tplan\t%s\t-\t%s\n' "$tp" "$c" "$secs" "failed ($rc): $(head -1 "$work/err")" \
                >>"$work/rows.tsv"
            continue
        fi
        for m in outofplace inplace; do
            "$bin/taccl-run" "$work/plan-$tp-$c" --sweep 1K:1G --$m --no-data --json -q \
                >"$work/plan-$tp-$c-$m.json" 2>/dev/null
            printf '%s\t%s\tplan\t%s\t%s\t%s\n' "$tp" "$c" "$secs" "$m" \
                "$work/plan-$tp-$c-$m.json" >>"$work/rows.tsv"
        done
        for a in ring direct butterfly rsag tree; do
            "$bin/taccl-synth" --algo "$a" "$tf" --collective "$c" -q -o "$work/$a.xml" \
                2>/dev/null || continue
            # a baseline that does not run in place serves no in-place call
            for m in outofplace inplace; do
                "$bin/taccl-run" "$work/$a.xml" --sweep 1K:1G --$m --no-data --json -q \
                    >"$work/$tp-$c-$a-$m.json" 2>/dev/null || continue
                printf '%s\t%s\t%s\t-\t%s\t%s\n' "$tp" "$c" "$a" "$m" "$work/$tp-$c-$a-$m.json" \
                    >>"$work/rows.tsv"
            done
        done
    done
done

python3 - "$work/rows.tsv" "$budget" "${out:-}" <<'EOF'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]


def sweep(path):
    try:
        return {r["size_bytes"]: r for r in json.load(open(path))["rows"]}
    except (OSError, ValueError, KeyError):
        return {}


def size(b):
    for u, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= n:
            return "%d%s" % (b // n, u)
    return str(b)


lines = ["| topology | collective | mode | plan s | sizes | >= NCCL | >= every baseline | "
         "worst size: plan / fastest other | NCCL fallback sizes |", "|---" * 9 + "|"]
groups = {}
for tp, c, kind, secs, mode, what in rows:
    groups.setdefault((tp, c), []).append((kind, secs, mode, what))
for (tp, c), items in groups.items():
    plans = [x for x in items if x[0] == "plan"]
    if len(plans) == 1 and plans[0][2] == "-":
        lines.append("| %s | %s | - | %s | - | - | - | %s | - |" % (tp, c, plans[0][1], plans[0][3]))
        continue
    for _, secs, mode, what in plans:
        ps = sweep(what)
        base = {k: sweep(w) for k, _, m, w in items if k != "plan" and m == mode}
        n = ok_nccl = ok_base = fallback = 0
        worst, worst_at, worst_who = 0.0, None, ""
        for s, r in sorted(ps.items()):
            n += 1
            t, nc = r.get("time_us"), r.get("nccl_us")
            fallback += bool(r.get("nccl_fallback"))
            others = [(nc, "nccl")] + [(b[s]["time_us"], k) for k, b in base.items()
                                         if s in b and b[s].get("time_us") is not None]
            others = [(v, k) for v, k in others if v is not None]
            if t is None:       # nothing timed at this size (NCCL's schedule refused)
                continue
            ok_nccl += nc is None or t <= nc * (1 + 1e-9)
            ok_base += all(t <= v * (1 + 1e-9) for v, k in others if k != "nccl")
            if others:
                v, k = min(others)
                if t / v > worst:
                    worst, worst_at, worst_who = t / v, s, k
        lines.append("| %s | %s | %s | %s | %d | %d | %d | %s | %d |" % (
            tp, c, "in place" if mode == "inplace" else "out of place", secs, n, ok_nccl, ok_base,
            "%.3f at %s (%s)" % (worst, size(worst_at), worst_who) if worst_at else "-",
            fallback))
text = "\n".join(lines)
print(text)
if sys.argv[3]:
    open(sys.argv[3], "w").write(
        "Plans with no sketch (`taccl-synth --plan TOPO --collective C --time-budget %s`), "
        "swept 1 KiB-1 GiB in each mode with `taccl-run PLAN --sweep 1K:1G --outofplace|--inplace "
        "--no-data`, against NCCL's schedule at each size and every `--algo` baseline that runs "
        "in that mode (scripts/bench_plan.sh).\n\n%s\n" % (sys.argv[2], text))
EOF
