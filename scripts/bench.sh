#!/usr/bin/env bash
# bench.sh — the benchmark: every baseline schedule and every bundled
# sketch's synthesized schedules on the configurations of docs/references.md, swept over
# sizes, each row beside its lower bound and the published TACCL / TE-CCL /
# TACOS figures.  Writes bench/results.md and one PNG plot per configuration
# (bench/<topology>-<collective>.png, bench/tacos.png), each atomically.
#
#   scripts/bench.sh [BIN_DIR]          (make bench; BIN_DIR default build/bin)
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
set -euo pipefail
bin=${1:-build/bin}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench"

case "${QUICK:-}" in
    ""|0|no|false) quick=() ; what="" ;;
    *) quick=(--quick) ; what="QUICK=1 " ;;
esac
[ -n "${BENCH_ONLY:-}" ] && what="${what}BENCH_ONLY='$BENCH_ONLY' "
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
    --command "$cmd" "${via[@]}" "${quick[@]}" || rc=$?
echo "bench: $(( $(date +%s) - start )) s wall, exit $rc" >&2
exit "$rc"
