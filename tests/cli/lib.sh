# lib.sh — helpers for CLI tests: each check prints "ok - NAME" or
# "not ok - NAME" followed by what went wrong.  Source it from a test script.
#
#   expect NAME CODE REGEX -- CMD ARGS...
#       runs CMD, passes when its exit code is CODE and its combined
#       stdout+stderr matches the extended REGEX ("" matches anything).
set -u
BIN=${TACCL_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin}
ROOT=${TACCL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# SLOW: how many times slower the programs run than a plain build (run_tests.sh
# sets TACCL_SLOW under ASan and valgrind); checks that depend on wall-clock
# time (a time limit meant to stop a search part-way, how soon SIGINT is
# served) scale by it.  TACCL_CHECKER: "asan" or "valgrind" under those runs.
SLOW=${TACCL_SLOW:-1}
CHECKER=${TACCL_CHECKER:-}

expect() {
    local name=$1 code=$2 re=$3
    shift 3
    [ "$1" = "--" ] && shift
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -eq "$code" ] && { [ -z "$re" ] || grep -Eq -- "$re" <<<"$out"; }; then
        echo "ok - $name"
    else
        echo "not ok - $name"
        echo "  command: $*"
        echo "  exit: $rc (wanted $code); wanted output matching: $re"
        sed 's/^/  | /' <<<"$out" | head -15
    fi
}

# quick_skip NAME SKETCH — with TACCL_QUICK set (make check-asan and
# make check-valgrind set it), skip a case whose sketch's topology has more
# than 32 ranks: print a "# skip" line, counted neither passed nor failed,
# and return 0.  The 64-rank cases take the code paths of the smaller ones
# at 3-4 times their cost under AddressSanitizer; the normal suite runs them.
quick_skip() {
    [ -n "${TACCL_QUICK:-}" ] || return 1
    local ranks
    ranks=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2] + "/" + s["topology"]))
print(t.get("nodes", 1) * t["ranks_per_node"])' "$2" "$ROOT") || return 1
    [ "$ranks" -gt 32 ] || return 1
    echo "# skip - $1: $ranks ranks (TACCL_QUICK runs sketches of up to 32)"
}
