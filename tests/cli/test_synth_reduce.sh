#!/usr/bin/env bash
# tier: full  (every sketch x collective: make check runs it plain on a few
#              sketches, TACCL_FEW; make check-full on every one, and also
#              under the sanitizers)
# test_synth_reduce.sh — ReduceScatter and AllReduce synthesis (issue 5) on
# every bundled (sketch, topology) pair: taccl-synth builds each collective
# at a small size (one 256-byte segment per chunk, so the chip device's DMA
# rule holds too) under a short time limit, and taccl-run verifies it in
# i32, where sums are exact, in every buffer mode the file allows.  For
# AllReduce, taccl-run --dtype f32 with several seeds must find every
# replica bit-identical: ReduceScatter then AllGather reduces each shard
# once, at its owner, and copies those bits everywhere.  The direct
# AllReduce of the case study is the contrast: its replicas sum in
# different orders (test_case_study.sh shows they can differ).
#
# At these sizes a chunk costs less than its alpha, so by default stage 1
# would build both routings (--route auto, docs/design.md section 6) and
# stage 3 run twice.  The loop over every sketch pins each routing in turn
# where it is cheap enough: the MILP's on every sketch, the latency-first
# one on a two-node and a one-node sketch (each schedule verified as
# above); the choice between them is tested in test_synth_cli.sh.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"

# small SKETCH TOPO — bytes for one 256-byte segment per chunk
small() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
s, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ranks = t["nodes"] * t["ranks_per_node"]
print(ranks * s.get("hyperparameters", {}).get("input_chunkup", 1) * 256)
EOF
}

# reduce_pair SKETCH-NAME ROUTE — both collectives on the sketch's own
# topology, stage 1 by --route ROUTE
reduce_pair() {
    local name=$1 route=$2 sk=$ROOT/sketches/$1.json topo size
    [ "$route" = milp ] || name=$1-$route
    topo=$ROOT/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"])' "$sk")
    size=$(small "$sk" "$topo")
    for coll in reducescatter allreduce; do
        local out=$TMP/$name.$coll.xml
        if ! "$S" "$sk" "$topo" --collective "$coll" --size "$size" --time-limit 1 -q \
            --route "$route" -o "$out" 2>"$TMP/err"; then
            echo "not ok - $name $coll: taccl-synth failed"
            sed 's/^/  | /' "$TMP/err" | head -5
            continue
        fi
        expect "$name $coll ($size B): verified in i32" 0 "verified" -- "$R" "$out"
        if [ "$coll" = allreduce ]; then
            local seed bad=""
            for seed in 1 2 3; do
                "$R" "$out" --dtype f32 --seed "$seed" --json >"$TMP/f32.json" 2>/dev/null
                python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if j["verified"] and j["replicas_identical"] is True else 1)' "$TMP/f32.json" ||
                    bad="$bad $seed"
            done
            if [ -z "$bad" ]; then
                echo "ok - $name allreduce: f32 replicas bit-identical (seeds 1 2 3)"
            else
                echo "not ok - $name allreduce: f32 replicas differ or unverified (seeds$bad)"
                head -c 600 "$TMP/f32.json" | sed 's/^/  | /'
            fi
        fi
    done
}

for f in "$ROOT"/sketches/*.json; do
    sketch_skip "$(basename "$f" .json)" "$f" 1 && continue
    reduce_pair "$(basename "$f" .json)" milp
done
for f in ndv2-x2-sk-1 torus-2d-4x4-sk-1; do
    reduce_pair "$f" latency
done

# The ReduceScatter phase is the AllGather reversed: on a topology fast
# equally both ways it takes no longer than the AllGather it came from.
# (2 s a stage: both files are the same bytes as at 5, which the
# ReduceScatter's stages spend whole.)
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$ROOT/topologies/ndv2-x2.json" --collective allgather \
    --size 1M --time-limit 2 -q --json -o "$TMP/ag.xml" >"$TMP/ag.json"
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$ROOT/topologies/ndv2-x2.json" --collective reducescatter \
    --size 1M --time-limit 2 -q --json -o "$TMP/rs.xml" >"$TMP/rs.json"
expect "reducescatter predicted no slower than its allgather (+ reduce cost)" 0 "" -- python3 -c '
import json, sys
ag, rs = (json.load(open(f)) for f in sys.argv[1:3])
assert rs["collective"] == "reducescatter" and rs["error"] is None, rs
assert rs["predicted_us"] <= ag["predicted_us"] * 1.02, (rs["predicted_us"], ag["predicted_us"])
' "$TMP/ag.json" "$TMP/rs.json"

# --json reports the AllReduce phases and the join kept
"$S" "$ROOT/sketches/cs-chip4-sk-1.json" "$ROOT/topologies/cs-chip4.json" -q --json \
    -o "$TMP/ar.xml" >"$TMP/ar.json"
expect "allreduce --json: phases and join" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["collective"] == "allreduce", j
assert j["join"] in ("barrier", "pipeline"), j
assert 0 < j["reducescatter_us"] < j["predicted_us"], j
assert j["predicted_us"] <= min(j["barrier_us"], j["pipeline_us"]) + 1e-9, j
' "$TMP/ar.json"

# progress: one line per stage on stderr, none with -q
expect "reducescatter progress names the reversal" 0 "synth: reverse: .* reduce sends" -- \
    "$S" "$ROOT/sketches/cs-chip4-sk-1.json" "$ROOT/topologies/cs-chip4.json" \
    --collective reducescatter -o "$TMP/p.xml"
expect "-q is silent for allreduce" 0 "^$" -- \
    "$S" "$ROOT/sketches/cs-chip4-sk-1.json" "$ROOT/topologies/cs-chip4.json" -q -o "$TMP/q.xml"

# deterministic: the same inputs give the same bytes
"$S" "$ROOT/sketches/cs-chip4x2-sk-1.json" "$ROOT/topologies/cs-chip4x2.json" -q -o "$TMP/d1.xml"
"$S" "$ROOT/sketches/cs-chip4x2-sk-1.json" "$ROOT/topologies/cs-chip4x2.json" -q -o "$TMP/d2.xml"
expect "allreduce synthesis is deterministic" 0 "" -- cmp "$TMP/d1.xml" "$TMP/d2.xml"
