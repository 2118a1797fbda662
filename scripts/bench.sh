#!/usr/bin/env bash
# bench.sh — the benchmark: every baseline schedule (and NCCL's own, written
# per size by --algo nccl, the yardstick of every "x NCCL") and every bundled
# sketch's synthesized schedules on the configurations of docs/references.md, swept over
# sizes, each row beside its lower bound and the published TACCL / TE-CCL /
# TACOS figures, and the calibration against TACCL's measured speed-ups over
# NCCL (with the model variants that move it: scripts/bench_calib.py).
# Writes results.md (the summary page), results/<topology>.md (every row,
# per machine), results/{calibration,published,synthesizer}.md,
# results.json (every row, from which scripts/bench_report.py rebuilds the
# pages), calibration.json and one PNG plot per configuration
# (results/<topology>-<collective>.png, results/tacos.png), each
# atomically, into BUILD/bench/ (BUILD: the folder holding BIN_DIR),
# outside the tracked tree; UPDATE=1 writes the tracked bench/ instead, on
# purpose.
#
#   scripts/bench.sh [BIN_DIR]          (make bench; BIN_DIR default build/bin)
#   TOPO=T.json [SKETCHES="a.json b.json"] [COLLECTIVES="allgather allreduce"]
#                  the same report and plots for a user's topology instead,
#                  into BUILD/bench/<topology file's stem>/ (every baseline
#                  and each sketch given, every collective unless said)
#   QUICK=1 scripts/bench.sh [BIN_DIR]  (make bench QUICK=1: sizes 1K, 64K, 1M,
#                                        1G only, no 64 MiB-per-NPU 32x32 torus,
#                                        sketches at their own and reference sizes)
#   BENCH_JOBS=N   parallel tool runs (default: nproc)
#   BENCH_ONLY=RE  only the configurations whose key (topology-collective)
#                  matches the Python regular expression RE
#
# Exit 0 when every schedule that should verify did; 1 (with the failures
# named on stderr and in results.md) otherwise.  The work is done by
# scripts/bench_run.py and scripts/bench_report.py (Python 3 standard
# library); gnuplot draws.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
bin=${1:-build/bin}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench"

case "${QUICK:-}" in
    ""|0|no|false) quick=() ; what="" ;;
    *) quick=(--quick) ; what="QUICK=1 " ;;
esac
[ -n "${BENCH_ONLY:-}" ] && what="${what}BENCH_ONLY='$BENCH_ONLY' "
user=()
if [ -n "${TOPO:-}" ]; then
    user=(--topo "$TOPO")
    what="${what}TOPO=$TOPO "
    for sk in ${SKETCHES:-}; do user+=(--sketch "$sk"); done
    [ -n "${SKETCHES:-}" ] && what="${what}SKETCHES='$SKETCHES' "
    [ -n "${COLLECTIVES:-}" ] && { user+=(--collectives "$COLLECTIVES"); what="${what}COLLECTIVES='$COLLECTIVES' "; }
    stem=$(basename "$TOPO" .json)
    out="$(cd "$(dirname "$bin")" && pwd)/bench/$stem"
elif [ -n "${UPDATE:-}" ] && [ "${UPDATE}" != 0 ]; then
    what="${what}UPDATE=1 "
else
    out="$(cd "$(dirname "$bin")" && pwd)/bench"
fi
cmd="${what}scripts/bench.sh $bin"
via=()
[ -n "${MAKELEVEL:-}" ] && via=(--via-make)

for tool in taccl-run taccl-synth; do
    if [ ! -x "$bin/$tool" ]; then
        echo "bench: $bin/$tool is missing (run make all)" >&2
        exit 1
    fi
done
command -v gnuplot >/dev/null 2>&1 || {
    echo "bench: gnuplot is missing (scripts/deps.sh installs it)" >&2
    exit 1
}

start=$(date +%s)
rc=0
python3 "$root/scripts/bench_run.py" --bin "$bin" --out "$out" \
    --jobs "${BENCH_JOBS:-$(nproc)}" ${BENCH_ONLY:+--only "$BENCH_ONLY"} \
    --command "$cmd" "${via[@]}" "${quick[@]}" "${user[@]}" || rc=$?
echo "bench: $(( $(date +%s) - start )) s wall, exit $rc" >&2
exit "$rc"
