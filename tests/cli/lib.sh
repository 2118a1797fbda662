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
# python3 behind a version manager's shim (pyenv's is a shell script) costs
# about 0.3 s a start, and the scripts start it hundreds of times: put the
# interpreter's own directory first on PATH, once.
if py=$(python3 -c 'import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))' \
    2>/dev/null) && [ -n "$py" ]; then
    PATH="$py:$PATH"
fi
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

# writes NAME MD JSON -- CMD ARGS...: runs a bench script's CMD (stdout and
# stderr kept), passes when it exits 0 and wrote both the page MD and its
# JSON; else prints the exit code and the output's last lines.
writes() {
    local name=$1 md=$2 json=$3 out rc
    shift 3
    [ "$1" = "--" ] && shift
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && [ -s "$md" ] && [ -s "$json" ]; then
        echo "ok - $name"
    else
        echo "not ok - $name (exit $rc)"
        sed 's/^/  | /' <<<"$out" | tail -10
    fi
}

# few — whether this is one of make check's runs: TACCL_FEW (its plain lane)
# or TACCL_QUICK (its sanitized lane, valgrind).  A loop over machines,
# seeds or corpus files then takes a few of each kind; make check-full runs
# every one.
few() { [ -n "${TACCL_FEW:-}${TACCL_QUICK:-}" ]; }

# FEW_SKETCHES: the bundled sketches the loops over every sketch
# (test_synth_reduce.sh, test_synth_predict.sh, each half of them;
# test_mpp_write.sh) run when TACCL_FEW is set,
# as make check sets it; make check-full runs every one.  One of each kind
# of machine and code path: the chip device's DMA rule across clusters,
# TACCL's NDv2 relay (and its small-chunk variant, where stage 3 must reject
# groups that wait on their own data), DGX-2's shared NICs and switch ports
# at 32 ranks, a torus with chunk-up 4, and a modern NVSwitch node with a
# NIC per GPU.
FEW_SKETCHES="cs-chip4x2-sk-1 ndv2-x2-sk-1 ndv2-x2-sk-2 dgx2-x2-sk-1 torus-2d-4x4-sk-1-cup4 dgx-h100-x2-sk-1"

# sketch_skip NAME SKETCH [HALF] — whether this run leaves the bundled
# sketch NAME out of a loop over every sketch: with TACCL_FEW set, every
# sketch not in FEW_SKETCHES, and with HALF (1 or 2) also those of the other
# half (the 1st, 3rd, 5th ... of FEW_SKETCHES or the 2nd, 4th, 6th ...): two
# scripts whose loops take the same code paths share the few between them;
# with TACCL_QUICK set, as quick_skip.  A case left out gets a "# skip - "
# line (counted neither passed nor failed) and status 0.
sketch_skip() {
    if [ -n "${TACCL_FEW:-}" ]; then
        local i=0 keep="" s
        for s in $FEW_SKETCHES; do
            i=$((i + 1))
            [ -n "${3:-}" ] && [ $(((i + ${3:-0}) % 2)) -ne 0 ] && continue
            [ "$s" = "$1" ] && keep=1
        done
        if [ -z "$keep" ]; then
            echo "# skip - $1: make check runs a few sketches (TACCL_FEW${3:+, half $3}), make check-full every one"
            return 0
        fi
    fi
    quick_skip "$1" "$2"
}

# quick_skip NAME SKETCH — with TACCL_QUICK set (make check-asan and
# make check-valgrind set it), skip a case whose sketch's topology has more
# than 32 ranks: print a "# skip" line, counted neither passed nor failed,
# and return 0.  The 64-rank cases take the code paths of the smaller ones
# at 3-4 times their cost under AddressSanitizer; make check-full runs them
# plain.
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
