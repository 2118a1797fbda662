#!/usr/bin/env bash
# fuzz.sh BUILD SECONDS — run every libFuzzer target for SECONDS seconds each.
#
# Targets are BUILD/fuzz/fuzz_<x> (built by `make fuzz` with clang
# -fsanitize=fuzzer,address,undefined against a library built with the same
# flags).  Each one runs in turn (not in parallel: the machine is small) on
#   - its seed corpus, assembled here afresh from the bundled files
#     (sketches/, topologies/, schedules/, tests/data/, tests/bad/), and
#   - its working corpus BUILD/corpus/<x>, which keeps what libFuzzer found
#     interesting across runs,
# with -timeout (an input running longer is a hang), -rss_limit_mb, and
# -max_len; crashes, leaks, hangs and out-of-memory inputs go to
# BUILD/artifacts/<x>-*.  One summary line per target, then
# "fuzz: N targets, M failed"; exit 1 if any target failed.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
build=${1:?usage: fuzz.sh BUILD SECONDS}
fuzz_secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$build" in /*) ;; *) build=$root/$build ;; esac
case "$fuzz_secs" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$fuzz_secs'" >&2; exit 2 ;; esac

# Which bundled files seed which target.
seeds_of() {
    case "$1" in
    sketch) echo sketches tests/data/sketch_bad tests/bad/sketch ;;
    topo)   echo topologies tests/data/topo_bad tests/bad/topo ;;
    xml)    echo schedules tests/data/xml tests/data/run tests/bad/xml ;;
    esac
}

mkdir -p "$build/artifacts"
failed=0 ran=0
for t in sketch topo xml; do
    bin=$build/fuzz/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "fuzz_$t: FAILED: $bin is not built"
        failed=$((failed + 1)); continue
    fi
    seeds=$build/seeds/$t corpus=$build/corpus/$t
    rm -rf "$seeds"
    mkdir -p "$seeds" "$corpus"
    for d in $(seeds_of $t); do
        [ -d "$root/$d" ] || continue
        # Regular files only (tests/bad holds a directory on purpose), each
        # under 1 MiB (the big-attribute inputs are generated, not seeds).
        find "$root/$d" -maxdepth 1 -type f ! -name '*.md' ! -name 'EXPECT' -size -1024k \
            -exec cp {} "$seeds/" \;
    done
    log=$build/fuzz-$t.log
    case "$t" in xml) dict=$root/tests/fuzz/xml.dict ;; *) dict=$root/tests/fuzz/json.dict ;; esac
    dict_arg=()
    [ -f "$dict" ] && dict_arg=(-dict="$dict")
    TACCL_FUZZ_TOPOLOGIES=$root/topologies \
    "$bin" -max_total_time="$fuzz_secs" -timeout=10 -rss_limit_mb=2048 -max_len=32768 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "${dict_arg[@]}" \
        "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    ran=$((ran + 1))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ncorp=$(find "$corpus" -type f | wc -l)
    nseeds=$(find "$seeds" -type f | wc -l)
    if [ "$rc" -eq 0 ]; then
        verdict=ok
    else
        verdict="FAILED (exit $rc; see $log and $build/artifacts)"
        failed=$((failed + 1))
    fi
    echo "fuzz_$t: ${fuzz_secs} s, ${execs:-?} executions, cov ${cov:-?} edges, ft ${ft:-?} features, $nseeds seeds, corpus $ncorp: $verdict"
    [ "$rc" -eq 0 ] || grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|Test unit written' "$log" | head -5 | sed 's/^/  /'
done
echo "fuzz: $ran targets, $failed failed"
[ "$failed" -eq 0 ]
