#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_mscclpp_run.sh — taccl-run on MSCCL++ execution plans: every plan of
# tests/data/mscclpp/ against tests/data/mscclpp/EXPECT (a plan not listed
# must verify), then plans mutated from the corpus (a wait, signal, nop or
# release removed, a relaxed pair, a corrupted reduce, an unknown op, broken
# structure) must give the hazard, hang, wrong element or refusal, and the
# options (--json, --trace, --routes, --sweep, --topo, --size) work on a plan.
source "$(dirname "$0")/lib.sh"
R="$BIN/taccl-run"
C="$ROOT/tests/data/mscclpp"

# ------------------------------------------------------------ the corpus
declare -A want_rc want_re
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
while IFS='|' read -r path rc re _why; do
    path=$(trim "$path")
    [ -z "$path" ] && continue
    case "$path" in \#*) continue ;; esac
    want_rc[$path]=$(trim "$rc")
    want_re[$path]=$(trim "$re")
done <"$C/EXPECT"
nexp=0
while IFS= read -r f; do
    rel=${f#"$C"/}
    if [ -n "${want_rc[$rel]:-}" ]; then
        nexp=$((nexp + 1))
        expect "corpus $rel: exit ${want_rc[$rel]} as EXPECT says" "${want_rc[$rel]}" "${want_re[$rel]}" -- "$R" "$f" -q
    else
        expect "corpus $rel verifies" 0 "" -- "$R" "$f" -q
    fi
done < <(find "$C" -name '*.json' | LC_ALL=C sort)
for rel in "${!want_rc[@]}"; do
    [ -f "$C/$rel" ] || echo "not ok - EXPECT names $rel, which is not in the corpus"
done
[ "$nexp" -eq "${#want_rc[@]}" ] && echo "ok - every EXPECT line is a corpus plan" ||
    echo "not ok - EXPECT has ${#want_rc[@]} lines, $nexp matched"

# A plan that verifies says so with the data checked.
expect "allreduce verifies with data" 0 "result +verified" -- "$R" "$C/executor-tests/reduce.json"
expect "a test plan has no postcondition" 0 "no postcondition for collective test" -- "$R" "$C/dsl-tests/unit_tests/copy_test.json"
expect "f32 data" 0 "verified" -- "$R" "$C/dsl-tests/single_node/allreduce_n4.json" --dtype f32
expect "timing only" 0 "timing only" -- "$R" "$C/dsl-tests/single_node/allreduce_pkt_n2.json" --no-data
# packet copies (rppkt) carry the packets' flags without data too: the
# reader's poll sees them (it hung before)
expect "rppkt's flags without data" 0 "completed, no hazard" -- "$R" "$C/executor-tests/transfer_pack.json" --no-data
expect "an out-of-place plan runs out of place" 0 "out of place.*data moved and checked" -- "$R" "$C/default_algos/allgather_multi_nodes.json"
expect "an in-place plan run out of place leaves the output unwritten" 1 "rank 0 output \(o\) chunk 0 element 0 is 0x7fbadbad" -- "$R" "$C/dsl-tests/single_node/allgather_pkt_n2.json" --outofplace -q

# ------------------------------------------------------------ mutations
mut() { # NAME SRC PYTHON-BODY (d is the plan, g(r, t) a block's ops)
    python3 - "$C/$2" "$TMP/$1.json" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def g(r, t):
    return d["gpus"][r]["threadblocks"][t]["ops"]
def first(ops, name, after=0):
    return [k for k, o in enumerate(ops) if o["name"] == name and k >= after][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
mut nowait executor-tests/reduce.json 'o = g(0, 0); del o[first(o, "wait")]'
expect "a wait removed: the read before the wait that orders it" 1 \
    "ops\[5\] \(rres\) reads rank 1's s buffer at byte 0 before the wait that orders gpus\[1\]\.threadblocks\[0\]\.ops\[0\] \(copy\)" -- "$R" "$TMP/nowait.json"
expect "a wait removed: a put into a buffer its owner has not released" 1 \
    "writes into rank 1's i buffer at byte 0, which its owner has not released" -- "$R" "$TMP/nowait.json"
expect "a wait removed: the surplus signal" 1 "signalled 2 times and waited 1" -- "$R" "$TMP/nowait.json"
mut nosignal executor-tests/reduce.json 'o = g(1, 0); del o[first(o, "signal")]'
expect "a signal removed: a hang, waited more often than signalled" 1 \
    "gpus\[0\]\.threadblocks\[0\]\.ops\[13\]: wait on memory channel 0 \(to rank 1\) waits for signal 2 but rank 1 signals it 1 time: waited more often than signalled: a hang" -- "$R" "$TMP/nosignal.json" -q
mut nonop executor-tests/reduce.json 'o = g(1, 0); k = first(o, "signal"); assert o[k-1]["name"] == "nop"; del o[k-1]'
expect "the nop before a signal removed: the copy is not ordered" 1 \
    "\(rres\) reads rank 1's s buffer at byte 0 before the wait" -- "$R" "$TMP/nonop.json" -q
mut relaxed executor-tests/reduce.json '
for r in (0, 1):
    o = g(r, 0); o[first(o, "signal")]["name"] = "rlxsignal"; o[first(o, "wait")]["name"] = "rlxwait"'
expect "a relaxed signal/wait orders no data" 1 "reads rank 1's s buffer at byte 0 before the wait" -- "$R" "$TMP/relaxed.json" -q
mut waitnop executor-tests/reduce.json 'o = g(0, 0); k = first(o, "wait"); assert o[k+1]["name"] == "nop"; del o[k+1]'
expect "the nop after a wait removed: only the waiting thread is ordered" 1 \
    "ops\[5\] \(rres\) reads rank 1's s buffer at byte 0 before the wait" -- "$R" "$TMP/waitnop.json" -q
mut shifted executor-tests/reduce.json '
o = g(1, 0); k = first(o, "rre"); assert o[k+1]["name"] == "nop"; del o[k+1]
o[k+1]["src_buff"][0]["index"] = 3; o[k+1]["src_buff"][0]["size"] = 1; o[k+1]["dst_buff"][0]["size"] = 1'
expect "no nop between a reduce and a copy of part of its result" 1 \
    "\(copy\) reads rank 1's i buffer at byte 48000, which gpus\[1\]\.threadblocks\[0\]\.ops\[6\] \(rre\) of the same threadblock wrote with no nop" -- "$R" "$TMP/shifted.json" --size 64000
mut badreduce executor-tests/reduce.json 'o = g(0, 0); o[first(o, "rres")]["src_buff"][0]["index"] = 3'
expect "a corrupted reduce fails the postcondition element-wise" 1 \
    "rank 0 output \(o\) chunk 0 element 0 is 0x[0-9a-f]{8}, the allreduce needs 0x[0-9a-f]{8} \(the sum over the ranks\)" -- "$R" "$TMP/badreduce.json" -q
expect "a corrupted reduce counts its wrong elements" 1 "[0-9]+ wrong output elements" -- "$R" "$TMP/badreduce.json"
mut badpkt dsl-tests/single_node/allgather_pkt_n2.json 'o = g(1, 1); o[0]["src_buff"][0]["index"] = 1'
expect "unpacking packets nobody writes: a hang" 1 "upkt polls LL packets at rank 1's s buffer.*never set.*a hang" -- "$R" "$TMP/badpkt.json" -q
mut norel dsl-tests/single_node/allreduce_pipeline.json '
for t in range(len(d["gpus"][0]["threadblocks"])):
    for op in g(0, t):
        op["ops"] = [x for x in op.get("ops", []) if x["name"] != "sem_release"] if op["name"] == "pipeline" else op.get("ops")
        if op["ops"] is None: del op["ops"]'
expect "a sem_release removed: a hang" 1 "sem_acquire of semaphore 0 waits for a sem_release that never comes" -- "$R" "$TMP/norel.json" -q
mut unknown executor-tests/reduce.json 'g(1, 0)[3]["name"] = "frobnicate"'
expect "an unknown op: exit 2 naming op, line and path" 2 \
    "unknown\.json:[0-9]+: gpus\[1\]\.threadblocks\[0\]\.ops\[3\]\.name: unknown op 'frobnicate'" -- "$R" "$TMP/unknown.json"
mut nochan executor-tests/reduce.json 'del d["gpus"][1]["channels"]'
expect "a missing channels key" 2 "gpus\[1\]\.channels: missing" -- "$R" "$TMP/nochan.json"
mut badid executor-tests/reduce.json 'd["gpus"][1]["id"] = 0'
expect "a gpu id out of place" 2 "GPU rank does not match" -- "$R" "$TMP/badid.json"
mut tbid executor-tests/reduce.json 'd["gpus"][0]["threadblocks"][0]["id"] = 1'
expect "a threadblock id out of order" 2 "threadblocks\[0\]: id 1 at position 0" -- "$R" "$TMP/tbid.json"
mut badbuf executor-tests/reduce.json 'o = g(0, 0); o[first(o, "rres")]["src_buff"][1]["buffer_id"] = 5'
expect "a buffer_id past the block's table" 2 "src_buff\[1\]: buffer_id 5: the threadblock has 2 remote buffers" -- "$R" "$TMP/badbuf.json"
mut badidx executor-tests/reduce.json 'g(0, 0)[0]["dst_buff"][0]["index"] = 3'
expect "a chunk past the buffer" 2 "chunks 3\.\.4 of buffer s of rank 0, which has 4" -- "$R" "$TMP/badidx.json"
mut badch executor-tests/reduce.json 'o = g(0, 0); o[first(o, "signal")]["channel_ids"] = [1]'
expect "a channel id past the block's channels" 2 "channel_ids: \[0\]: the threadblock has 1 memory channels" -- "$R" "$TMP/badch.json"
mut toomany executor-tests/reduce.json 'o = g(0, 0); o += [{"name": "nop"}] * 60'
expect "more than 64 ops in a block" 2 "MAX_OPERATION" -- "$R" "$TMP/toomany.json"
mut noinplace executor-tests/reduce.json 'del d["inplace"]'
expect "a missing inplace" 2 "inplace: missing" -- "$R" "$TMP/noinplace.json"
mut bigbar dsl-tests/single_node/allgather_tbg.json '
for t in range(len(d["gpus"][0]["threadblocks"])):
    for op in g(0, t):
        if op["name"] == "barrier": op["num_threadblocks"] = 9'
expect "a barrier over more blocks than launched" 2 "num_threadblocks 9 but the rank launches 4 blocks" -- "$R" "$TMP/bigbar.json"
printf '{"gpus": [' >"$TMP/trunc.json"
expect "truncated JSON" 2 "trunc\.json:1:[0-9]+: JSON syntax error" -- "$R" "$TMP/trunc.json"

# ------------------------------------------------------------ by content, options
cp "$C/executor-tests/reduce.json" "$TMP/plan.xml"
expect "a plan named .xml is still a plan" 0 "MSCCL\+\+ plan 'reduce'" -- "$R" "$TMP/plan.xml"
cp "$ROOT/tests/data/run/ok-allgather2.xml" "$TMP/sched.json"
expect "an XML file named .json is still XML" 0 "schedule" -- "$R" "$TMP/sched.json"
expect "--json is one object" 0 '^\{"file":.*"format":"mscclpp","verified":true.*"busbw_gbps"' -- "$R" "$C/executor-tests/reduce.json" --json
expect "--json on a refusal" 2 '"verified":false,"error":".*unknown op' -- "$R" "$TMP/unknown.json" --json
expect "--json on a hazard lists it" 1 '"hazards":\[\{"kind":"race"' -- "$R" "$TMP/nowait.json" --json
expect "--sweep prints a row per size" 0 "262144 .*verified" -- "$R" "$C/dsl-tests/single_node/allreduce_n2.json" --sweep 64K:256K
expect "--sweep --json" 0 '"rows":\[\{"size_bytes":65536' -- "$R" "$C/dsl-tests/single_node/allreduce_n2.json" --sweep 64K:256K --json
expect "--trace writes a trace" 0 "verified" -- "$R" "$C/executor-tests/reduce_pack.json" --trace "$TMP/t.json" --routes "$TMP/r.dot"
expect "the trace is JSON with events" 0 "ok" -- python3 -c "import json,sys; d=json.load(open('$TMP/t.json')); assert any(e.get('ph')=='X' for e in d['traceEvents']); print('ok')"
expect "the routes are a graph" 0 "r0 -> r1" -- cat "$TMP/r.dot"
expect "--size not divisible" 2 "do not divide into 4 chunks" -- "$R" "$C/executor-tests/reduce.json" --size 1000
expect "--size outside the plan's range" 2 "outside the plan's \[min_message_size" -- "$R" "$C/dsl-tests/single_node/allgather_nvls_zero_copy_pkt_n2.json" --size 4M
expect "--topo with the wrong rank count" 2 "topology .* has 8 ranks but the plan has 2" -- "$R" "$C/executor-tests/reduce.json" --topo "$ROOT/topologies/dgx-h100-x1.json"
cat >"$TMP/links2.json" <<'T'
{"name": "links2", "nodes": 1, "ranks_per_node": 2, "local": {"copy_gbps": 500, "reduce_gbps": 500, "source": "test"},
 "links": [{"pairs": [[0, 1]], "alpha_us": 1, "bandwidth_gbps": 50, "source": "test"}]}
T
expect "memory channels run over links" 0 "verified" -- "$R" "$C/executor-tests/reduce.json" --topo "$TMP/links2.json"
expect "switch ops need a switch that reduces and multicasts" 2 "^taccl-run: [^ ]*reduce_nvls.json: rank 0's switch channel 0 \(multimem, NVLS\) needs its 2 ranks on one switch that reduces and multicasts, and topology links2 has none" -- "$R" "$C/executor-tests/reduce_nvls.json" --topo "$TMP/links2.json" -q
expect "--embed-to is refused for a plan" 2 "--embed-to is for a schedule file, not an MSCCL\+\+ plan" -- "$R" "$C/executor-tests/reduce.json" --embed-to "$TMP/x.xml"
expect "--tiles is refused for a plan" 2 "--tiles is for .*not an MSCCL\+\+ plan" -- "$R" "$C/executor-tests/reduce.json" --tiles
# 2-byte elements (bf16, f16): each reduction step rounded to the type, and
# for AllReduce whether every rank's result is bit-identical
S="$BIN/taccl-synth"
T="$ROOT/topologies"
"$S" -q --algo ring "$T/ndv2-x1.json" --collective allreduce --target mscclpp -o "$TMP/ring.json"
"$S" -q --algo direct "$T/dgx-h100-x1.json" --collective allreduce --target mscclpp -o "$TMP/direct.json"
for dt in bf16 f16; do
    expect "ring allreduce plan verifies in $dt, replicas identical" 0 "replicas  bit-identical \($dt\)" -- "$R" "$TMP/ring.json" --topo "$T/ndv2-x1.json" --dtype "$dt" --size 256K
done
expect "--json says replicas_identical and the dtype" 0 '"wrong_elems":0,"dtype":"bf16","replicas_identical":true' -- "$R" "$TMP/ring.json" --topo "$T/ndv2-x1.json" --dtype bf16 --size 256K --json
expect "direct allreduce in bf16: each rank sums in its own order, replicas differ" 0 "replicas  differ \\(bf16; " -- "$R" "$TMP/direct.json" --topo "$T/dgx-h100-x1.json" --dtype bf16 --size 256K
expect "direct allreduce in i32: exact sums, replicas identical" 0 "replicas  bit-identical \\(i32\\)" -- "$R" "$TMP/direct.json" --topo "$T/dgx-h100-x1.json" --size 256K
t_data=$("$R" "$TMP/ring.json" --topo "$T/ndv2-x1.json" --dtype bf16 --size 256K | grep '^time')
t_none=$("$R" "$TMP/ring.json" --topo "$T/ndv2-x1.json" --dtype bf16 --size 256K --no-data | grep '^time')
[ -n "$t_data" ] && [ "$t_data" = "$t_none" ] && echo "ok - bf16 --no-data times as with data" ||
    echo "not ok - bf16 --no-data times as with data: '$t_data' vs '$t_none'"
"$S" -q --algo nccl "$T/dgx-h100-x1.json" --collective allreduce --size 64M --target mscclpp -o "$TMP/nvls.json"
expect "an NVLS plan (glres) verifies in bf16 on DGX H100" 0 "result +verified" -- "$R" "$TMP/nvls.json" --topo "$T/dgx-h100-x1.json" --dtype bf16 --size 1M
python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))
for s in t['switches']:
    if 'nvls' in s: s['nvls']['dtypes'] = ['i32', 'f32']
json.dump(t, open(sys.argv[2], 'w'))" "$T/dgx-h100-x1.json" "$TMP/h100-nobf16.json"
expect "glres in a type the topology's switch does not reduce is refused" 2 "^taccl-run: .*switch [0-9]+ does not reduce bf16 in the switch" -- "$R" "$TMP/nvls.json" --topo "$TMP/h100-nobf16.json" --dtype bf16 --size 1M -q
expect "--sweep: sizes outside the plan's range are rows not run, not failures" 0 "2097152 .* not run: .*outside the plan's" -- "$R" "$C/dsl-tests/single_node/allgather_nvls_zero_copy_pkt_n4.json" --sweep 512K:2M
expect "--sweep: no size that can run is exit 2" 2 "no size in the range can run" -- "$R" "$C/dsl-tests/single_node/allgather_nvls_zero_copy_pkt_n4.json" --sweep 2M:4M
expect "--sweep: a racy plan fails its rows" 1 "some sizes did not verify" -- "$R" "$TMP/nowait.json" --sweep 64K:128K

# A transfer does not book its link or port ahead while it waits: taccl's
# direct AllGather on DGX H100 x1 (8 blocks a rank, each putting to one
# peer) runs in the time its ports need, as the same schedule's MSCCL XML
# does in one pass (what a plan predicts for an MSCCL++ file); booking
# ahead had left ports idle for 6279.6 us, 3x its bound.
"$BIN/taccl-synth" --algo direct "$T/dgx-h100-x1.json" --collective allgather --proto Simple -o "$TMP/direct.json" -q
"$BIN/taccl-synth" --algo direct "$T/dgx-h100-x1.json" --collective allgather --proto Simple -o "$TMP/direct.xml" -q
expect "an MSCCL++ plan's time is its XML's in one pass, within 1 %, and near its bound (lower_bound_us, bound_ratio)" 0 "^ok" -- python3 -c '
import json, subprocess, sys
R, j, x, t = sys.argv[1:5]
run = lambda *a: json.loads(subprocess.run([R, *a, "--topo", t, "--size", "1G", "--no-data", "--json"],
                                           capture_output=True, text=True).stdout)
a, b = run(j), run(x, "--steps")
assert abs(a["time_us"] / b["time_us"] - 1) < 0.01, (a["time_us"], b["time_us"])
assert a["time_us"] < 1.02 * a["bound_us"], (a["time_us"], a["bound_us"])
# the bound under the names an MSCCL file run gives it
assert a["lower_bound_us"] == a["bound_us"] and abs(a["bound_ratio"] - a["bound_us"] / a["time_us"]) < 1e-12, a
print("ok %.1f %.1f" % (a["time_us"], b["time_us"]))' "$R" "$TMP/direct.json" "$TMP/direct.xml" "$T/dgx-h100-x1.json"

# taccl-run DIR picks among MSCCL XML files: on a plan of MSCCL++ files it
# would find none and print every size as NCCL's; it says what to run.
"$S" --plan "$T/dgx-h100-x1.json" --collective allgather --sizes 1G:1G --no-propose --target mscclpp \
    --time-budget 30 -q -o "$TMP/mpp-plan"
expect "taccl-run DIR on an MSCCL++ plan: exit 2, naming a file to run instead" 2 \
    '^taccl-run: .*/plan.json: "target": "mscclpp": taccl-run DIR picks among MSCCL XML files, not MSCCL\+\+ plans; run each file.*taccl-run .*/allgather-1G-le1G-outofplace.json --sweep LO:HI' \
    -- "$R" "$TMP/mpp-plan" --size 1G --no-data
