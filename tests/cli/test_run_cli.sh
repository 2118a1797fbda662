#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_run_cli.sh — taccl-run over real files: verdicts, exit codes, messages.
source "$(dirname "$0")/lib.sh"
R="$BIN/taccl-run"
D="$ROOT/tests/data/run"

# usage and flags
expect "help exits 0" 0 "usage: taccl-run" -- "$R" --help
expect "no file is exit 2" 2 "no schedule file" -- "$R"
expect "unknown flag is exit 2" 2 "unknown option '--frobnicate'" -- "$R" "$D/ok-allgather2.xml" --frobnicate
expect "bad target is exit 2, naming every runtime" 2 "--target: expected msccl, msccl-executor, mscclpp or unlimited, got 'nccl'" -- "$R" "$D/ok-allgather2.xml" --target nccl
expect "--target mscclpp: one line, exit 2" 2 "^taccl-run: --target mscclpp: this build cannot write MSCCL\+\+ plans yet$" -- "$R" "$D/ok-allgather2.xml" --target mscclpp
expect "--target mscclpp --json: the error as JSON" 2 '"error":"--target mscclpp: this build cannot write MSCCL\+\+ plans yet"' -- bash -c "'$R' '$D/ok-allgather2.xml' --target mscclpp --json 2>/dev/null"
expect "bad size is exit 2" 2 "--size: not a size" -- "$R" "$D/ok-allgather2.xml" --size 12parsecs
expect "bad dtype is exit 2" 2 "--dtype: expected i32, f32, bf16 or f16, got 'f64'" -- "$R" "$D/ok-allgather2.xml" --dtype f64
expect "flag without value is exit 2" 2 "--topo needs a value" -- "$R" "$D/ok-allgather2.xml" --topo
expect "two files is exit 2" 2 "only one schedule file" -- "$R" "$D/ok-allgather2.xml" "$D/race.xml"

# unusable inputs: exit 2, one line naming the file
expect "missing file" 2 "nonexistent.xml" -- "$R" "$D/nonexistent.xml"
expect "directory instead of a file" 2 "$D" -- "$R" "$D"
: >"$TMP/empty.xml"
expect "empty file" 2 "empty.xml" -- "$R" "$TMP/empty.xml"
expect "truncated xml names a line" 2 "truncated.xml:[0-9]+" -- "$R" "$D/truncated.xml"
expect "wrong attribute type names line and attribute" 2 "bad-attr.xml:4:.*cnt" -- "$R" "$D/bad-attr.xml"
expect "size not a multiple of the chunks" 2 "size" -- "$R" "$D/ok-allgather2.xml" --size 6
expect "topology rank mismatch" 2 "ranks but the schedule has ngpus=2" -- "$R" "$D/ok-allgather2.xml" --topo "$ROOT/topologies/ndv2-x1.json"
printf '{"name": "x", "nodes": "two", "ranks_per_node": 2}' >"$TMP/bad-topo.json"
expect "bad topology is exit 2 naming the field" 2 "bad-topo.json.*nodes" -- "$R" "$D/ok-allgather2.xml" --topo "$TMP/bad-topo.json"

# verdicts
expect "correct schedule verifies" 0 "verified" -- "$R" "$D/ok-allgather2.xml"
expect "default topology is labelled" 0 "default: 2 ranks fully connected" -- "$R" "$D/ok-allgather2.xml"
expect "f32 works" 0 "verified" -- "$R" "$D/ok-allgather2.xml" --dtype f32
expect "bf16 works" 0 "bf16, data moved and checked" -- "$R" "$D/ok-allgather2.xml" --dtype bf16
expect "f16 works" 0 "verified" -- "$R" "$D/ok-allgather2.xml" --dtype f16
# bf16/f16 reductions round each step to nearest even: a ring AllReduce
# (one order, then copies) gives identical replicas, a direct one (each rank
# sums in its own order) does not, and the report says so
"$BIN/taccl-synth" --algo ring "$ROOT/topologies/dgx-a100-x1.json" --collective allreduce \
    -o "$TMP/ar-ring.xml" -q 2>/dev/null
"$BIN/taccl-synth" --algo direct "$ROOT/topologies/dgx-a100-x1.json" --collective allreduce \
    -o "$TMP/ar-direct.xml" -q 2>/dev/null
for dt in bf16 f16; do
    expect "$dt ring AllReduce: verified, replicas bit-identical" 0 "replicas  bit-identical" -- "$R" "$TMP/ar-ring.xml" --dtype $dt --size 256K
    expect "$dt direct AllReduce: verified, replicas differ" 0 "replicas  differ" -- "$R" "$TMP/ar-direct.xml" --dtype $dt --size 256K
    expect "$dt direct AllReduce --json: replicas_identical false" 0 '"replicas_identical":false' -- "$R" "$TMP/ar-direct.xml" --dtype $dt --size 256K --json
done
expect "bf16 sweep: nccl-tests' type name" 0 "bfloat16" -- "$R" "$TMP/ar-ring.xml" --dtype bf16 --sweep 64K:128K
expect "timing only says so" 0 "timing only" -- "$R" "$D/ok-allgather2.xml" --no-data
expect "wrong data is exit 1 naming rank and chunk" 1 "rank [01].*o\[[01]\]" -- "$R" "$D/wrong-data.xml"
expect "offset+cnt overflow is exit 1" 1 "rank 0 tb 0 step 2.*(exceeds|beyond)" -- "$R" "$D/bounds.xml"
expect "send/recv count mismatch" 1 "2 sends? but 1 rec" -- "$R" "$D/count-mismatch.xml"
expect "dependency without hasdep" 1 "hasdep" -- "$R" "$D/missing-hasdep.xml"
# dependencies as the runtimes number them (exec/rtdep.h)
expect "a trailing nop's wait is dropped, as the runtimes do" 0 "waits +1 released later.*dropped" -- "$R" "$D/trailing-nop-wait.xml"
expect "a wait released by a later hasdep step can deadlock" 1 "deadlock.*rank 0 tb 0 step 1.*rank 0 tb 2 step 0" -- "$R" "$D/hasdep-later.xml"
expect "a nop without a dependency shifts the numbering" 1 "count a nop only if it carries a dependency.*counts as 0, below 1" -- "$R" "$D/bare-nop.xml"
expect "fused re steps with different cnt" 1 "rank 0 tb 4 step 2: the runtimes fuse re steps 2 to 3.*cnt 1.*cnt 2" -- "$R" "$D/re-fuse-cnt.xml"
expect "fused re steps with one cnt verify" 0 "verified" -- "$R" "$D/re-fuse-same.xml"
expect "a nop chain before a step with no depid is refused (exit 2)" 2 "refuse a nop chain" -- "$R" "$D/nop-chain.xml"
expect "a coll spelling neither runtime loads is refused with no --target (exit 2)" 2 "coll \"AllGather\": the MSCCL runtimes refuse.*\"allgather\"" -- "$R" "$D/coll-case.xml"
expect "an offset past 16 bits wraps in the runtimes" 1 "rank 0 tb 0 step 1: srcoff 39990 exceeds the runtime limit 32767.*wraps to -25546" -- "$R" "$D/offset-16bit.xml" --size 160000
expect "two tbs on one connection" 1 "tb" -- "$R" "$D/duplicate-tb.xml"
expect "depid over 127" 1 "127" -- "$R" "$D/depid-limit.xml"
expect "deadlock is exit 1 naming a place" 1 "deadlock.*rank [01] tb 0 step 1" -- "$R" "$D/deadlock.xml"
expect "uninitialized read" 1 "rank 0 tb 0 step 1.*o\[1\]" -- "$R" "$D/uninit.xml"
expect "data race" 1 "race|unordered|no dependency" -- "$R" "$D/race.xml"
expect "race ordered by a dependency is clean" 0 "verified" -- "$R" "$D/race-fixed.xml"
expect "65 steps pass the legacy runtime" 0 "verified" -- "$R" "$D/many-steps.xml"
expect "65 steps: msccl-executor refuses to load it (exit 2)" 2 "65 steps exceed the runtime limit of 64 .*msccl-executor refuses" -- "$R" "$D/many-steps.xml" --target msccl-executor

# --json: one object with the documented keys, also on failure
"$R" "$D/ok-allgather2.xml" --json >"$TMP/ok.json" 2>/dev/null
expect "json has the documented keys" 0 "" -- python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
need=["verified","collective","ngpus","size_bytes","time_us","algbw_gbps","busbw_gbps",
      "chip_syncs","cluster_syncs","replicas_identical","error"]
missing=[k for k in need if k not in j]
assert not missing, missing
assert j["verified"] is True and j["error"] is None and j["collective"]=="allgather", j
' "$TMP/ok.json"
"$R" "$D/deadlock.xml" --json >"$TMP/dl.json" 2>/dev/null
expect "json on failure carries the error" 0 "" -- python3 -c '
import json,sys
j=json.load(open(sys.argv[1])); assert j["verified"] is False and "deadlock" in j["error"], j' "$TMP/dl.json"
"$R" "$D/truncated.xml" --json >"$TMP/tr.json" 2>/dev/null
expect "json for unusable input" 0 "" -- python3 -c '
import json,sys
j=json.load(open(sys.argv[1])); assert j["verified"] is False and j["error"], j' "$TMP/tr.json"

# --embed-to writes a self-contained copy atomically
expect "embed topology" 0 "" -- "$R" "$D/ok-allgather2.xml" --topo "$ROOT/topologies/cs-cluster2.json" --size 512 --embed-to "$TMP/emb.xml" -q
expect "embedded copy runs alone on its topology" 0 "topology  cs-cluster2" -- "$R" "$TMP/emb.xml"
expect "embedded copy keeps its size" 0 "512 B per rank.*from the file" -- "$R" "$TMP/emb.xml"

# files in other generators' styles run as they are
X="$ROOT/tests/data/xml"
expect "msccl-tools style ring AllGather verifies" 0 "verified" -- "$R" "$X/ring_allgather_4.xml"
expect "TACCL style file with <copy> elements verifies in place" 0 "verified \(in-place\)" -- "$R" "$X/taccl_copy.xml"

# lower bound and sweep
expect "report states the lower bound and ratio" 0 "bound .* lower bound, ratio 0\.[0-9]+" -- "$R" "$D/ok-allgather2.xml"
"$R" "$D/ok-allgather2.xml" --json >"$TMP/b.json" 2>/dev/null
expect "json carries lower_bound_us and bound_ratio <= 1" 0 "" -- python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
assert 0 < j["lower_bound_us"] <= j["time_us"], j
assert abs(j["bound_ratio"] - j["lower_bound_us"]/j["time_us"]) < 1e-9, j' "$TMP/b.json"
expect "sweep prints one row per power of two" 0 "" -- bash -c \
    "test \$('$R' '$D/ok-allgather2.xml' --sweep 1K:1M | grep -vc '^#') -eq 11"
"$R" "$D/ok-allgather2.xml" --sweep 1K:4K --json >"$TMP/s.json"
expect "sweep json rows have the nccl-tests columns" 0 "" -- python3 -c '
import json,sys
j=json.load(open(sys.argv[1]))
rows=j["rows"]; assert [r["size_bytes"] for r in rows]==[1024,2048,4096], rows
for r in rows:
    for k in ["size_bytes","count","type","redop","time_us","algbw_gbps","busbw_gbps","wrong","lower_bound_us","bound_ratio","data_checked","verified"]:
        assert k in r, (k, r)
    assert r["data_checked"] and r["verified"] and r["wrong"]==0' "$TMP/s.json"
"$R" "$TMP/ar-ring.xml" --sweep 64M:64M --no-data --variants --json >"$TMP/v.json"
expect "--variants: each row timed under every model variant, the default its own time" 0 "" -- python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))["rows"][0]; v=r["variants"]
assert sorted(v)==["default","delay","ports","rt-lat","steps"], v
assert v["default"]==r["time_us"] and all(isinstance(x,float) for x in v.values()), v
assert v["steps"]!=v["default"] and v["rt-lat"]<v["default"], v' "$TMP/v.json"
expect "--variants without --sweep is exit 2" 2 "--variants: times the rows of a sweep" -- "$R" "$TMP/ar-ring.xml" --variants
expect "sweep marks large sizes timing only" 0 "timing only" -- "$R" "$D/ok-allgather2.xml" --sweep 1G:1G
expect "sweep of a wrong schedule exits 1" 1 "FAILED" -- "$R" "$D/wrong-data.xml" --sweep 1K:2K
expect "bad sweep range is exit 2" 2 "--sweep: expected LO:HI" -- "$R" "$D/ok-allgather2.xml" --sweep 4K:1K
python3 "$ROOT/scripts/gen_ring.py" 300 "$TMP/ring300.xml"
expect "a 300-rank ring exceeds the runtimes' 256 steps per tb (refused: exit 2)" 2 "256 steps per tb.*refuse to load" -- "$R" "$TMP/ring300.xml" --no-data --size 1200K
expect "unlimited target lifts the step limit" 0 "completed" -- "$R" "$TMP/ring300.xml" --no-data --size 1200K --target unlimited

# Issue 37: the checks stay near-linear on adversarial files
# (scripts/gen_pathological.py; scripts/scale.sh times the large ones).
# 8000 receives of the same 71 chunks into one threadblock took 7 s when
# the dead-traffic slice compared every pair of writes of a slot; 12 ranks
# whose 6 threadblocks each write the same 71 chunks 100 times, 3.7 s.
# The verdicts, not the time, are asserted here.
python3 "$ROOT/scripts/gen_pathological.py" repeat --reps 8000 "$TMP/repeat.xml"
expect "8000 receives of the same chunks: completed, all but the last receive and its send dead" 0 \
    "dead +15998 of 16004 steps carry data that never reaches the result" -- \
    "$R" "$TMP/repeat.xml" --target unlimited --no-data
"$R" "$TMP/repeat.xml" --target unlimited --no-data --json >"$TMP/repeat.json" 2>/dev/null
expect "...and the slice is complete (no budget note)" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d = j["dead_traffic"]
assert d["steps"] == 15998 and d["steps_total"] == 16004 and d["complete"] is True, d
assert j["race_checked"] is True and j["hazards"] == [], j["hazards"]' "$TMP/repeat.json"
python3 "$ROOT/scripts/gen_pathological.py" wide --ranks 12 --tbs 6 --steps 101 "$TMP/wide.xml"
expect "6 tbs of a rank writing the same chunks race, and none of it is dead" 1 \
    "wide.xml:5: rank 0 tb 0 step 1: writes o\[0\] while tb 1 step 1 writes it with no dependency" -- \
    "$R" "$TMP/wide.xml" --target unlimited --no-data
"$R" "$TMP/wide.xml" --target unlimited --no-data --json >"$TMP/wide.json" 2>/dev/null
expect "...the races are errors, the slice complete" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d = j["dead_traffic"]
assert j["warnings"] == 0 and d["steps"] == 0 and d["complete"] is True, (j["warnings"], d)
races = [h for h in j["hazards"] if h["kind"] == "race"]
assert races and not any(h["warning"] for h in races), races[:3]' "$TMP/wide.json"

# More ranks than the default topology can hold, and no topology given.
python3 -c '
print("<algo name=\"big\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2100\" ngpus=\"2100\" coll=\"allgather\" inplace=\"0\">")
for r in range(2100):
    print("  <gpu id=\"%d\" i_chunks=\"1\" o_chunks=\"2100\" s_chunks=\"0\"/>" % r)
print("</algo>")' >"$TMP/big.xml"
expect "too many ranks for the default topology is exit 2, said" 2 \
    "big.xml:1: <algo> attribute ngpus: 2100 ranks are too many for the fully connected default topology.*pass --topo" -- \
    "$R" "$TMP/big.xml"

# --trace: a Chrome/Perfetto trace of the run.  Checked against the run's own
# --json: an event per step and per resource a transfer held, a flow arrow
# from each send to its receive, named tracks; and what the executor must
# keep: a threadblock's steps never overlap, nor do two transfers on one
# resource lane.  Then a NIC-bound run's utilisation names the NIC.
"$BIN/taccl-synth" --algo ring "$ROOT/topologies/ndv2-x2.json" --collective allreduce \
    --size 1M -o "$TMP/tr.xml" -q
"$R" "$TMP/tr.xml" --outofplace --trace "$TMP/tr.json" --json >"$TMP/tr.run.json"
expect "--trace: the trace matches the run" 0 "" -- python3 -c '
import json, sys, collections
tr, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = tr["traceEvents"]
steps = [e for e in ev if e.get("cat") == "step"]
xfers = [e for e in ev if e.get("cat") == "transfer"]
flows = collections.Counter(e["ph"] for e in ev if e.get("cat") == "flow")
assert len(steps) == run["steps_run"], (len(steps), run["steps_run"])
assert flows["s"] == flows["f"] == run["transfers"], (flows, run["transfers"])
assert abs(sum(r["busy_us"] for r in run["resources"]) - sum(e["dur"] for e in xfers)) < 1e-6
assert abs(max(e["ts"] + e["dur"] for e in steps) + run["call_us"] - run["time_us"]) < 1e-9
names = {(e["pid"], e.get("tid")) for e in ev if e["ph"] == "M"}
assert all((e["pid"], e["tid"]) in names for e in steps + xfers)
for group in (steps, xfers):
    track = collections.defaultdict(list)
    for e in group:
        track[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for k, v in track.items():
        v.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(v, v[1:])), k
' "$TMP/tr.json" "$TMP/tr.run.json"
expect "--trace with --sweep is exit 2" 2 "--trace: one run at one size" -- \
    "$R" "$TMP/tr.xml" --sweep 1K:4K --trace "$TMP/x.json"
expect "--trace to a directory is exit 2" 2 "cannot write: is a directory" -- \
    "$R" "$TMP/tr.xml" --trace "$TMP"
"$BIN/taccl-synth" --algo ring "$ROOT/topologies/dgx2-x2.json" --collective allgather \
    --size 64M -o "$TMP/nic.xml" -q
expect "the busiest resource of a one-ring DGX-2 x2 run is a NIC" 0 "^busiest   NIC [0-9]+ \(node [01]\) (egress|ingress): (100\.0|99\.[5-9]) % busy" -- \
    "$R" "$TMP/nic.xml" --no-data

# --routes: the routes the run used as a Graphviz graph.  A one-ring AllGather
# on NDv2 x2 has one edge per ring hop, the two that cross nodes through a
# NIC; every edge carries the same bytes; Graphviz renders it.
"$R" "$TMP/tr.xml" --routes "$TMP/tr.dot" -q
"$BIN/taccl-synth" --algo ring "$ROOT/topologies/ndv2-x2.json" --collective allgather --channels 1 \
    --size 1M -o "$TMP/ring1.xml" -q
"$R" "$TMP/ring1.xml" --routes "$TMP/ring1.dot" -q
expect "--routes: a ring's 16 hops, 2 through NICs, 14 over links" 0 "" -- python3 -c '
import re, sys
d = open(sys.argv[1]).read()
edges = re.findall(r"r(\d+) -> r(\d+) \[label=\"(\d+) x, ([0-9.e+]+) MB \((\w+)\)\"", d)
assert len(edges) == 16, len(edges)
assert sorted(e[4] for e in edges).count("NIC") == 2 and [e[4] for e in edges].count("link") == 14, edges
assert len({e[3] for e in edges}) == 1, edges
assert d.count("subgraph cluster_node") == 2 and d.rstrip().endswith("}")
outs = sorted(int(e[0]) for e in edges); ins = sorted(int(e[1]) for e in edges)
assert outs == ins == list(range(16)), (outs, ins)
' "$TMP/ring1.dot"
if command -v dot >/dev/null 2>&1; then
    expect "--routes: graphviz renders it" 0 "" -- dot -Tsvg "$TMP/tr.dot" -o "$TMP/tr.svg"
else
    echo "# skip - --routes: graphviz renders it (no dot; make deps installs graphviz)"
fi
expect "--routes with --sweep is exit 2" 2 "--routes: one run at one size" -- \
    "$R" "$TMP/tr.xml" --sweep 1K:4K --routes "$TMP/x.dot"

# --tiles: timed as the MSCCL runtimes' interpreter runs a file, the whole
# program once per tile pass (docs/design.md section 8), on a file that
# msccl-tools wrote: 64 MiB of an 8-chunk ring AllReduce under LL128 is 8
# MiB a chunk, 15 passes of 576000 bytes in the runtime, 16 equal ones here
MT="$ROOT/tests/interop/msccl-tools/allreduce_a100_ring_ch1_allreduce_r8_i1_LL128_inplace.xml"
"$R" "$MT" --size 64M --tiles >"$TMP/tiled.txt" 2>&1
expect "--tiles: a msccl-tools file in the runtime's passes, data checked" 0 \
    "tiles +the runtimes' passes: 16 of 524288 bytes per chunk of 8388608" -- grep -E -A30 "^result +verified" "$TMP/tiled.txt"
expect "--tiles: says where the runtime's pass count differs" 0 "runtime makes 15 passes" -- cat "$TMP/tiled.txt"
"$R" "$MT" --size 64M --steps --no-data --json >"$TMP/whole.json" 2>/dev/null
"$R" "$MT" --size 64M --tiles --no-data --json >"$TMP/tiled.json" 2>/dev/null
expect "--tiles --json: the passes, and more transfers than steps (timing only)" 0 "" -- python3 -c '
import json,sys
w=json.load(open(sys.argv[1])); t=json.load(open(sys.argv[2]))
assert w["tiles"] is None, w
x=t["tiles"]
assert (x["passes"], x["runtime_passes"], x["tile_bytes"], x["max_count"]) == (16, 15, 524288, 1), x
assert t["transfers"] == 16 * w["transfers"], (t["transfers"], w["transfers"])
assert t["time_us"] != w["time_us"], t
' "$TMP/whole.json" "$TMP/tiled.json"
expect "--tiles: small chunks run as the file says" 0 "tiles +the runtimes' passes: 1 of" -- \
    "$R" "$MT" --size 1M --tiles
"$BIN/taccl-synth" --algo ring "$ROOT/topologies/cs-chip4.json" --collective allgather -q -o "$TMP/chip.xml"
expect "--tiles with --trace is exit 2" 2 "--trace: follows the file's own steps; it does not go with --tiles" -- \
    "$R" "$MT" --size 64M --tiles --trace "$TMP/tiles-trace.json"
expect "--tiles with --routes is exit 2" 2 "--routes: follows the file's own steps" -- \
    "$R" "$MT" --size 64M --tiles --routes "$TMP/tiles.dot"
expect "--tiles on a chip/cluster device is exit 2" 2 "--tiles: .*chip/cluster device" -- \
    "$R" "$TMP/chip.xml" --tiles

# the runtimes' mode selection: the legacy loader reads inplace alone;
# msccl-executor never selects a file with both flags 0
sed 's/inplace="0" outofplace="1"/inplace="1" outofplace="1"/' "$D/ok-allgather2.xml" >"$TMP/both-modes.xml"
expect "no target: both modes the file declares run" 0 "verified \(out-of-place and in-place\)" -- "$R" "$TMP/both-modes.xml"
expect "legacy loader: inplace=1 serves in-place calls only" 0 "modes +msccl \(the legacy runtime\) reads only inplace.*" -- "$R" "$TMP/both-modes.xml" --target msccl
expect "legacy loader: runs the in-place mode alone" 0 "verified \(in-place\)" -- "$R" "$TMP/both-modes.xml" --target msccl
sed 's/inplace="0" outofplace="1"/inplace="0" outofplace="0"/' "$D/ok-allgather2.xml" >"$TMP/no-mode.xml"
expect "msccl-executor selects a file with both flags 0 for no call (exit 2)" 2 "inplace=\"0\" and outofplace=\"0\": msccl-executor selects this file for no call" -- "$R" "$TMP/no-mode.xml" --target msccl-executor

# options that do not go together, and output that fails
expect "--embed-to with --no-data is exit 2" 2 "--embed-to: writes only a schedule whose data verified" -- "$R" "$D/ok-allgather2.xml" --no-data --embed-to "$TMP/e1.xml"
expect "--embed-to with --sweep is exit 2" 2 "--embed-to: writes the file for one size" -- "$R" "$D/ok-allgather2.xml" --sweep 8:16 --embed-to "$TMP/e2.xml"
out=$("$R" "$D/ok-allgather2.xml" --json --embed-to "$TMP/no/such/dir/e.xml" 2>/dev/null); rc=$?
if [ "$rc" -eq 2 ] && grep -q '"verified":false' <<<"$out" && grep -q '"error":".*cannot write' <<<"$out"; then
    echo "ok - --json says the embed failed (verified false, the error) as the exit code does"
else
    echo "not ok - --json says the embed failed (verified false, the error) as the exit code does"
    echo "  exit $rc: $out" | head -3
fi
out=$("$R" "$D/ok-allgather2.xml" --json --trace "$TMP/no/such/dir/t.json" 2>/dev/null); rc=$?
if [ "$rc" -eq 2 ] && grep -q '"error":".*cannot write' <<<"$out"; then
    echo "ok - --json prints its object when --trace cannot be written"
else
    echo "not ok - --json prints its object when --trace cannot be written"
    echo "  exit $rc: $out" | head -3
fi
expect "--tiles refuses a size that unrolls past its limit (exit 2)" 2 "tiles: [0-9]+ passes of 6 operations each unroll to more than" -- "$R" "$D/ok-allgather2.xml" --size 64T --no-data --tiles

# a plan directory
mkdir -p "$TMP/plan"
sed 's/maxBytes="0"/maxBytes="1073741824"/' "$D/ok-allgather2.xml" >"$TMP/plan/ok.xml"
expect "a plan on a topology of another rank count is exit 2" 2 "dgx1.json: topology dgx1 has 8 ranks but the plan's schedules have ngpus=2" -- "$R" "$TMP/plan" --size 1M --topo "$ROOT/topologies/dgx1.json"
sed 's/maxBytes="0"/maxBytes="1073741824"/' "$D/wrong-data.xml" >"$TMP/plan/a-wrong.xml"
expect "a plan says why its picked file failed" 1 "plan/a-wrong.xml at 1024 bytes: rank [0-9] o\[[0-9]+\]" -- "$R" "$TMP/plan" --size 1K --topo "$ROOT/topologies/cs-cluster2.json"
