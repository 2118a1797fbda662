#!/usr/bin/env bash
# run_tests.sh — run every cmocka test binary and every CLI test script,
# then print one summary line "N passed, N failed".
#
# cmocka binaries report "[  PASSED  ] N test(s)." and "[  FAILED  ] N
# test(s)"; CLI scripts (tests/cli/*.sh) print "ok - ..." / "not ok - ..."
# lines.  A binary or script that crashes or prints no summary counts as one
# failure, so a broken test can never pass silently.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$build" in /*) bdir=$build ;; *) bdir=$root/$build ;; esac
export TACCL_BIN="$bdir/bin" TACCL_ROOT="$root"
passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.d|*.o) continue ;; esac
    "$t" >"$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    p=${p:-0}; f=${f:-0}
    if [ "$p" = 0 ] && [ "$f" = 0 ] || { [ $rc -ne 0 ] && [ "$f" = 0 ]; }; then
        f=$((f + 1))
        echo "FAIL $(basename "$t"): exit $rc without a cmocka summary"
        tail -20 "$log"
    elif [ "$f" != 0 ]; then
        echo "FAIL $(basename "$t"): $f failed"
        grep -E '^\[  (FAILED|ERROR)|error:|Failure' "$log" | head -20
    else
        echo "ok   $(basename "$t"): $p passed"
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    case "$s" in */lib.sh) continue ;; esac
    bash "$s" >"$log" 2>&1
    rc=$?
    p=$(grep -c '^ok - ' "$log")
    f=$(grep -c '^not ok - ' "$log")
    if [ "$p" = 0 ] && [ "$f" = 0 ]; then
        f=1; echo "FAIL $(basename "$s"): exit $rc, no results"; tail -20 "$log"
    elif [ "$f" != 0 ]; then
        echo "FAIL $(basename "$s"): $f failed"
        grep -A3 '^not ok - ' "$log" | head -40
    else
        echo "ok   $(basename "$s"): $p passed"
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
