#!/usr/bin/env bash
# tier: plain  (make check runs it plain only; make check-full also sanitized)
# test_trees.sh — the packed trees as candidates (synth/pack.h, issue 43):
# on ForestColl's MI250 x2 the `trees` and `trees-lanes` entries are built
# beside the MILP's in `taccl-synth --json`, the schedule kept verifies in
# taccl-run with data (AllGather and ReduceScatter); with --tiles the kept
# entry's time is the one `taccl-run --tiles` measures and no built entry
# is faster; and ForestColl's own schedules (tests/data/forestcoll/*-k1.xml,
# scripts/gen_forestcoll_xml.py) load and verify in taccl-run with data.
source "$(dirname "$0")/lib.sh"
FC="$ROOT/tests/data/forestcoll"
printf '{"name": "pk1", "nnodes": 2, "hyperparameters": {"input_chunkup": 1}}\n' >"$TMP/pk1.json"

for coll in allgather reducescatter; do
    if few && [ "$coll" = reducescatter ]; then
        echo "# skip - $coll with --tiles: make check synthesizes the allgather (check-full both)"
        continue
    fi
    expect "$coll: synthesized with --tiles" 0 "" -- sh -c '"$1" "$2" "$3" --collective "$4" \
        --size 4M --time-limit 5 --route milp --tiles --json -q -o "$5.xml" >"$5.json"' sh \
        "$BIN/taccl-synth" "$TMP/pk1.json" "$FC/forestcoll-mi250-x2.json" "$coll" "$TMP/$coll"
    "$BIN/taccl-run" "$TMP/$coll.xml" --tiles --json -q >"$TMP/$coll-run.json" 2>/dev/null
    expect "$coll: trees and trees-lanes built, the kept one is the fastest and is what taccl-run --tiles measures" 0 "^ok" -- \
        python3 - "$TMP/$coll.json" "$TMP/$coll-run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
c = {x["label"]: x for x in d["candidates"]}
for lab in ("trees", "trees-lanes", "milp"):
    assert lab in c and c[lab]["status"] == "ok", (lab, c.get(lab))
built = [x["predicted_us"] for x in d["candidates"] if x["status"] == "ok"]
kept = c[d["winner"]]["predicted_us"]
assert kept <= min(built) + 1e-9, (kept, built)
assert abs(kept - r["time_us"]) <= 1e-6 * kept, (kept, r["time_us"])
assert r["verified"], r
print("ok", d["winner"], kept)
PY
    expect "$coll: the schedule kept verifies with data" 0 "result +verified" -- \
        "$BIN/taccl-run" "$TMP/$coll.xml"
done

for fab in mi250-x2 a100-x2; do
    for coll in allgather reducescatter; do
        expect "ForestColl's $fab $coll schedule verifies in taccl-run" 0 "result +verified" -- \
            "$BIN/taccl-run" "$FC/forestcoll-$fab-$coll-k1.xml" --topo "$FC/forestcoll-$fab.json" \
            --size 4M
    done
done
