#!/usr/bin/env bash
# tier: full  (the whole matrix; make check runs it plain on a handful)
# test_mpp_run_matrix.sh — the MSCCL++ plans taccl-synth writes run in
# taccl-run with data and verify, and scripts/mpp_check.py agrees
# (scripts/mpp_matrix.sh --check; docs/mscclpp.md §12.8).
#
#   * with TACCL_FEW or TACCL_QUICK (make check): a handful, one single-node
#     and one two-node plan per collective and a sketch whose blocks are
#     cut at 64 ops: dgx1 --algo nccl (LL: plain temps in the doubled
#     packet scratch), ndv2-x2 --algo ring and nccl (port channels: a
#     forwarding pwsf right after the wait on the same thread; a pwsf of
#     data another block reduced, after the acquire), ndv2-x2-sk-1-cup4
#     AllGather (a signal between an acquire and a put needs a nop before
#     the put)
#   * otherwise every bundled GPU topology up to 64 ranks x allgather,
#     reducescatter, allreduce x {--algo ring, --algo nccl, each bundled
#     sketch of the topology}
# Each case is one line: ok when the plan was written, taccl-run verified
# it (exit 0) and mpp_check.py passed it (with --run up to 16 ranks).
source "$(dirname "$0")/lib.sh"
M="$ROOT/scripts/mpp_matrix.sh"

if [ -n "${TACCL_FEW:-}${TACCL_QUICK:-}" ]; then
    only='^(dgx1 nccl|ndv2-x2 nccl|ndv2-x2 ring allgather|ndv2-x2 ndv2-x2-sk-1-cup4 allgather)'
    args=(--only "$only" --max-ranks 16)
else
    args=(--max-ranks 64)
fi
out=$(bash "$M" --check "${args[@]}" "$BIN" 2>&1)
n=0
while read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    n=$((n + 1))
    read -r topo src coll _ <<<"$line"
    if grep -q 'synth=0 run=0 chk=0 *$' <<<"$line"; then
        echo "ok - $topo $src $coll: written, verified by taccl-run, passes mpp_check"
    else
        echo "not ok - $topo $src $coll"
        echo "  | $line"
    fi
done <<<"$out"
grep '^# [0-9]* cases' <<<"$out"
if [ "$n" -gt 0 ]; then echo "ok - the matrix ran $n cases"
else
    echo "not ok - the matrix ran no case"
    sed 's/^/  | /' <<<"$out" | head -5
fi
