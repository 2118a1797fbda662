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
