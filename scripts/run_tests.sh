#!/usr/bin/env bash
# run_tests.sh — run every cmocka test binary and every CLI test script,
# then print one summary line "N passed, N failed".
#
#   run_tests.sh BUILD             the suite against BUILD/tests and BUILD/bin
#   run_tests.sh --asan BUILD      the same against a build made with
#                                  -fsanitize=address,undefined (make check-asan)
#   run_tests.sh --valgrind BUILD  the CLI scripts only, each taccl-run and
#                                  taccl-synth call under valgrind memcheck
#   run_tests.sh --units BUILD     the cmocka unit tests alone (make test)
#   run_tests.sh --total TALLY N   sum the N runs recorded in TALLY
#
# With TACCL_TIER=quick, a CLI script carrying the line "# tier: full" (the
# loops over every bundled sketch and collective) or "# tier: plain" (the
# scripts whose programs' code paths the others take, or that run none) is
# left out, said on a "# skip - " line: make check runs the sanitized suite
# that way (and those scripts in its plain suite).  With TACCL_TIER=few
# (make check's plain suite) a script carrying "# tier: sanitized" (one
# whose every check the sanitized suite runs too, with the sanitizers on) is
# left out the same way: make check runs it once, sanitized.  So are the
# cmocka unit binaries (the sanitized lane runs every one of them; its
# build is the same code under clang with the sanitizers).  A script
# carrying "# tier: extended" (the tests of the bench scripts, whose runs
# make bench makes) is left out of both (TACCL_TIER few or quick).  make
# check-full runs everything in both.
#
# cmocka binaries report "[  PASSED  ] N test(s)." and "[  FAILED  ] N
# test(s)"; CLI scripts (tests/cli/*.sh) print "ok - ..." / "not ok - ..."
# lines.  A binary or script that crashes or prints no summary counts as one
# failure, so a broken test can never pass silently.
#
# Under --asan and --valgrind every report is also written to a log
# directory, which is read after each binary or script: a report fails that
# binary or script even when the command that made it was run outside a
# check (its output thrown away, its exit code not looked at).  Reports also
# end the process with exit code 23, which no tool of ours uses, so a check
# that expects exit 1 or 2 cannot pass on a sanitizer's exit.
#
# --asan and --valgrind set TACCL_QUICK=1 unless it is set already (empty:
# every case): CLI scripts then skip their 64-rank sketches (lib.sh
# quick_skip), each skip a "# skip - " line the summary counts.
# They also set
# TACCL_CHECKER (asan, valgrind) and TACCL_SLOW (3, 30 unless set), by which
# the CLI scripts scale their wall-clock checks (lib.sh).
#
# Each binary or script runs under timeout(1): TACCL_TEST_TIMEOUT seconds
# (default 900 plain, 1800 under --asan, 3600 under --valgrind), then it and
# everything it started are killed and it counts as one failure, so a hang
# ends the run instead of CI's budget.  Each result line gives its time.
#
# With TACCL_TALLY=FILE set, the run appends "PASSED FAILED" to FILE
# (make check adds the normal and the sanitized runs this way).
#
# TACCL_ONLY=REGEX runs only the CLI scripts whose file name matches (no
# unit binaries); TACCL_EXCEPT=REGEX leaves those scripts out, each said on
# a "# elsewhere - " line (not counted as skipped: for splitting one suite
# over several runs, each running its share).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mode=plain
case "${1:-}" in
--asan | --valgrind | --units) mode=${1#--}; shift ;;
--total)
    tally=$2 want=$3 p=0 f=0 runs=0
    [ -f "$tally" ] && while read -r a b; do
        p=$((p + a)); f=$((f + b)); runs=$((runs + 1))
    done <"$tally"
    if [ "$runs" -ne "$want" ]; then
        echo "FAIL: $runs of $want test runs reported a count (a build or a run broke)"
        f=$((f + 1))
    fi
    echo "$p passed, $f failed"
    [ "$f" -eq 0 ]
    exit
    ;;
esac
build=${1:-build}
case "$build" in /*) bdir=$build ;; *) bdir=$root/$build ;; esac
export TACCL_BIN="$bdir/bin" TACCL_ROOT="$root"
passed=0 failed=0
case $mode in plain | units) limit=900 ;; asan) limit=1800 ;; valgrind) limit=3600 ;; esac
limit=${TACCL_TEST_TIMEOUT:-$limit}
log=$(mktemp)
sanlog=$(mktemp -d)
trap 'rm -rf "$log" "$sanlog"' EXIT

case $mode in
plain) echo "== suite: $build" ;;
units) echo "== unit tests: $build" ;;
asan)
    echo "== sanitized suite (AddressSanitizer + UndefinedBehaviorSanitizer): $build"
    export TACCL_QUICK=${TACCL_QUICK-1} TACCL_CHECKER=asan TACCL_SLOW=${TACCL_SLOW:-3}
    export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=23:detect_leaks=1:\
check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:\
log_path=$sanlog/asan"
    export UBSAN_OPTIONS="halt_on_error=1:exitcode=23:print_stacktrace=1:log_path=$sanlog/ubsan"
    ;;
valgrind)
    command -v valgrind >/dev/null || { echo "FAIL: valgrind is not installed"; exit 1; }
    echo "== CLI tests under valgrind memcheck: $build/bin"
    export TACCL_QUICK=${TACCL_QUICK-1} TACCL_CHECKER=valgrind TACCL_SLOW=${TACCL_SLOW:-30}
    # a directory of wrappers named like the tools: the CLI scripts call
    # "$TACCL_BIN/taccl-run" and get valgrind around the real one; the fuzz
    # targets' replay programs likewise in fuzz/ beside it, where
    # test_bad.sh looks for them
    for tool in "$bdir"/bin/* "$bdir"/fuzz/replay_*; do
        [ -x "$tool" ] || continue
        w=$sanlog/$(basename "$(dirname "$tool")")/$(basename "$tool")
        mkdir -p "$(dirname "$w")"
        cat >"$w" <<EOF
#!/bin/sh
exec valgrind -q --error-exitcode=23 --leak-check=full --track-origins=yes \\
    --errors-for-leak-kinds=definite,indirect,possible \\
    --show-leak-kinds=definite,indirect,possible \\
    --log-file="$sanlog/vg.%p" "$tool" "\$@"
EOF
        chmod +x "$w"
    done
    export TACCL_BIN=$sanlog/bin
    ;;
esac

# reports NAME — after a binary or script: show the sanitizer or valgrind
# reports it caused (the first three in full) and empty the log directory;
# status 1 if there was one
reports() {
    local r n=0
    for r in "$sanlog"/asan.* "$sanlog"/ubsan.* "$sanlog"/vg.*; do
        [ -s "$r" ] || { rm -f "$r"; continue; }
        n=$((n + 1))
        [ $n = 1 ] && echo "FAIL $1: sanitizer/valgrind report"
        [ $n -le 3 ] && head -40 "$r" | sed 's/^/  | /'
        rm -f "$r"
    done
    [ $n -le 3 ] || echo "  ($n reports in all)"
    [ $n = 0 ]
}

# run CMD... — run one binary or script under the time limit, output to
# $log; sets rc and secs, and says so when the limit killed it
run() {
    local t0=$SECONDS
    timeout -k 10 "$limit" "$@" >"$log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        echo "not ok - killed after $secs s: over the ${limit} s limit (TACCL_TEST_TIMEOUT)" >>"$log"
        echo "[  FAILED  ] 1 test(s), killed after $secs s: over the ${limit} s limit" >>"$log"
    fi
}

# tally NAME P F — add one binary's or script's counts; a sanitizer or
# valgrind report is one more failure
tally() {
    local f=$3
    if [ "$f" != 0 ]; then
        echo "FAIL $1: $f failed (${secs} s)"
        grep -E "$4" "$log" | head -40
    fi
    reports "$1" || f=$((f + 1))
    local skip
    skip=$(grep -c '^# skip - ' "$log")
    [ "$skip" = 0 ] && skip="" || skip=" ($skip skipped, each on a # skip line)"
    [ "$f" != 0 ] || echo "ok   $1: $2 passed$skip, ${secs} s"
    passed=$((passed + $2)); failed=$((failed + f))
}

skipped=0
if [ "$mode" = plain ] && [ "${TACCL_TIER:-}" = few ] && [ -z "${TACCL_ONLY:-}" ]; then
    # make check's plain lane builds no unit binary: named from their sources
    for c in "$root"/tests/test_*.c; do
        echo "# skip - $(basename "$c" .c): unit tests run sanitized (make check's other lane; make check-full here)"
        skipped=$((skipped + 1))
    done
elif [ "$mode" != valgrind ] && [ -z "${TACCL_ONLY:-}" ]; then
    for t in "$build"/tests/test_*; do
        [ -x "$t" ] || continue
        case "$t" in *.d|*.o) continue ;; esac
        run "$t"
        p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        p=${p:-0}; f=${f:-0}
        if [ "$p" = 0 ] && [ "$f" = 0 ] || { [ $rc -ne 0 ] && [ "$f" = 0 ]; }; then
            f=$((f + 1))
            echo "FAIL $(basename "$t"): exit $rc ($p passed, no failure reported)"
            tail -20 "$log"
        fi
        tally "$(basename "$t")" "$p" "$f" '^\[  (FAILED|ERROR)|error:|Failure'
    done
fi

for s in "$root"/tests/cli/*.sh; do
    [ "$mode" != units ] || break
    [ -f "$s" ] || continue
    case "$s" in */lib.sh) continue ;; esac
    if [ -n "${TACCL_ONLY:-}" ] && ! [[ $(basename "$s") =~ $TACCL_ONLY ]]; then
        continue
    fi
    if [ -n "${TACCL_EXCEPT:-}" ] && [[ $(basename "$s") =~ $TACCL_EXCEPT ]]; then
        echo "# elsewhere - $(basename "$s"): the other lane runs it"
        continue
    fi
    tier=$(sed -n 's/^# tier: \([a-z]*\).*/\1/p;T;q' "$s")
    if { [ "${TACCL_TIER:-}" = quick ] && { [ "$tier" = full ] || [ "$tier" = plain ]; }; } ||
        { [ "${TACCL_TIER:-}" = few ] && [ "$tier" = sanitized ]; } ||
        { [ -n "${TACCL_TIER:-}" ] && [ "$tier" = extended ]; }; then
        echo "# skip - $(basename "$s"): tier $tier (make check runs it in its other lane, make check-full here)"
        skipped=$((skipped + 1))
        continue
    fi
    run bash "$s"
    p=$(grep -c '^ok - ' "$log")
    f=$(grep -c '^not ok - ' "$log")
    if [ "$p" = 0 ] && [ "$f" = 0 ]; then
        f=1; echo "FAIL $(basename "$s"): exit $rc, no results"; tail -20 "$log"
    fi
    tally "$(basename "$s")" "$p" "$f" '^not ok - |^  '
done

if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ -z "${TACCL_TALLY:-}" ] || echo "$passed $failed" >>"$TACCL_TALLY"
[ "$failed" -eq 0 ]
