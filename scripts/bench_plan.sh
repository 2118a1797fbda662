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
# size (plan time / the fastest of the others); a summary before it gives
# one line per machine (scripts/bench_plan_report.py writes both).  All
# times are the executor's model (docs/design.md section 4).
#
# usage: scripts/bench_plan.sh [BIN_DIR] [--topos "T ..."] [--collectives "C ..."]
#                              [--budget S] [--out FILE]
#   BIN_DIR        taccl-synth and taccl-run (default build/bin)
#   --topos        names under topologies/ (default: ndv2-x2 ndv2-x4 dgx2-x2
#                  and every DGX A100/H100, NDv4/NDv5 x1, x2, x4)
#   --collectives  default: allgather reducescatter allreduce alltoall
#   --budget       --time-budget of each plan, seconds (default 120)
#   --out          also write the report to FILE, and every sweep to
#                  FILE.json (scripts/bench_plan_report.py --json FILE.json
#                  writes the report again from it)
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

python3 "$root/scripts/bench_plan_report.py" --tsv "$work/rows.tsv" --budget "$budget" \
    ${out:+--out "$out"}
