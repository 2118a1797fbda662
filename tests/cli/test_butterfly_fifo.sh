#!/usr/bin/env bash
# tier: plain  (make check runs it plain only; make check-full also sanitized)
# test_butterfly_fifo.sh — recursive doubling and halving hold in the
# runtimes' passes at every size.  On 32 ranks (DGX A100 x4) the last round
# sends a whole half, 16 contiguous chunks; once a chunk fills the runtimes'
# tile (64 MiB and up) the runtimes run such a step as 16 operations of one
# FIFO slot each, and both partners send before they receive: the files
# written as one step of 16 chunks deadlocked there (make bench: "waits for
# a full FIFO (8 sends not received)", 5 of 21 sizes).  The files are
# written once, without a size, and run at sizes on both sides of the tile.
source "$(dirname "$0")/lib.sh"

T=$ROOT/topologies/dgx-a100-x4.json

for spec in "allgather butterfly" "reducescatter butterfly" "allreduce rsag --via butterfly"; do
    set -- $spec
    coll=$1
    shift
    f=$TMP/$coll.xml
    expect "$coll $* on 32 ranks is written" 0 "" -- \
        "$BIN/taccl-synth" --algo "$@" "$T" --collective "$coll" -q -o "$f"
    # no step of more chunks than the FIFO holds
    expect "$coll $*: no step moves more than 8 chunks" 0 "" -- \
        python3 -c 'import sys, xml.etree.ElementTree as E
c = [int(s.get("cnt")) for s in E.parse(sys.argv[1]).iter("step") if s.get("type") in ("s", "r", "rrc")]
sys.exit(0 if c and max(c) <= 8 else 1)' "$f"
    expect "$coll $* verifies with data at 1 MiB" 0 "verified" -- \
        "$BIN/taccl-run" "$f" --topo "$T" --size 1M
    for s in 64M 1G; do
        expect "$coll $* runs through the passes at $s" 0 "completed" -- \
            "$BIN/taccl-run" "$f" --topo "$T" --size "$s" --no-data
    done
done
