#!/usr/bin/env bash
# tier: plain  (make check runs it plain only; make check-full also sanitized)
# test_sweep_tiles.sh — a sweep in the runtimes' passes runs every size of
# a file whose chunk count is not a power of two.  A ring AllGather on 6
# channels of 8 ranks has 48 chunks; at 512 MiB the sweep rounded the size
# to whole elements only (536870976 B: chunks of 2796203 elements, a prime),
# whose equal tiles needed 2796203 passes where the runtime makes 6, and
# the whole sweep stopped (make bench: TACCL's
# ndv2-x1-sk-1-cup6 schedule "did not verify").  It now rounds each size to
# a chunk the runtime's own pass count splits; a single --size that cannot
# be run so says which size can.
source "$(dirname "$0")/lib.sh"

T=$ROOT/topologies/ndv2-x1.json
"$BIN/taccl-synth" --algo ring "$T" --collective allgather --channels 6 -q -o "$TMP/r6.xml"

"$BIN/taccl-run" "$TMP/r6.xml" --topo "$T" --sweep 1K:1G --no-data --json >"$TMP/sw.json"
expect "the 48-chunk ring sweeps 1K-1G in the passes" 0 "" -- test $? -eq 0
expect "every power of two up to 512 MiB is a row, each in the runtime's own passes" 0 "" -- \
    python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
ok = len(rows) == 20 and all(r["verified"] for r in rows)
for r in rows:
    t = r.get("tiles")
    ok = ok and (t is None or t["passes"] == t["runtime_passes"])
sys.exit(0 if ok else 1)' "$TMP/sw.json"
expect "a size whose equal tiles need millions of passes names one that runs" 2 \
    "or at 536871168 B" -- \
    "$BIN/taccl-run" "$TMP/r6.xml" --topo "$T" --size 536870976 --no-data
