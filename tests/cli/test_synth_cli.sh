#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: its syntheses take 2 minutes
#              sanitized, and test_bad.sh, test_synth_limits.sh,
#              test_predict_random.sh and test_plan.sh run taccl-synth
#              sanitized; make check-full and make check-asan also sanitized)
# test_synth_cli.sh — taccl-synth --algo: every refusal is exit 2 with one
# line saying why, and writes nothing (a missing -o file stays missing, an
# existing one keeps its bytes); every algorithm writes a file taccl-run
# verifies with no other argument; output is byte-for-byte deterministic.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
T="$ROOT/topologies"

# full_mesh N FILE — a one-node topology of N ranks, every pair linked
full_mesh() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
pairs = [[a, b] for a in range(n) for b in range(a + 1, n)]
json.dump({"name": "mesh%d" % n, "nodes": 1, "ranks_per_node": n,
           "local": {"copy_gbps": 500, "reduce_gbps": 500, "source": "assumed: test"},
           "links": [{"pairs": pairs, "alpha_us": 0.7, "bandwidth_gbps": 50,
                      "source": "assumed: test"}]}, open(path, "w"))
EOF
}
full_mesh 6 "$TMP/six.json"
full_mesh 65 "$TMP/sixtyfive.json"
cat >"$TMP/star.json" <<'EOF'
{"name": "star", "nodes": 1, "ranks_per_node": 4,
 "local": {"copy_gbps": 100, "reduce_gbps": 100, "source": "assumed: test"},
 "links": [{"pairs": [[0, 1], [0, 2], [0, 3]], "alpha_us": 1, "bandwidth_gbps": 10,
            "source": "assumed: test"}]}
EOF

# refuse NAME REGEX -- ARGS... : exit 2, message, -o file not created, and an
# existing -o file left exactly as it was
refuse() {
    local name=$1 re=$2
    shift 3
    rm -f "$TMP/none.xml"
    expect "$name: exit 2 and says why" 2 "$re" -- "$S" "$@" -o "$TMP/none.xml"
    if [ -e "$TMP/none.xml" ]; then echo "not ok - $name: wrote a file"; else echo "ok - $name: nothing written"; fi
    printf 'keep me\n' >"$TMP/keep.xml"
    "$S" "$@" -o "$TMP/keep.xml" >/dev/null 2>&1
    if [ "$(cat "$TMP/keep.xml")" = "keep me" ]; then echo "ok - $name: existing file untouched"
    else echo "not ok - $name: existing -o file changed"; fi
    local lines
    lines=$("$S" "$@" -o "$TMP/none.xml" 2>&1 >/dev/null | wc -l)
    if [ "$lines" -eq 1 ]; then echo "ok - $name: one line"; else echo "not ok - $name: $lines lines on stderr"; fi
}

# usage and flags
expect "help exits 0" 0 "usage: taccl-synth" -- "$S" --help
expect "list names every algorithm" 0 "ring.*direct.*butterfly.*rsag.*tree" -- bash -c "'$S' --list | tr '\n' ' '"
expect "no arguments is exit 2" 2 "give a sketch and a topology file, or --algo" -- "$S"
refuse "unknown flag" "unknown option '--frobnicate'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --frobnicate
refuse "unknown algorithm" "unknown algorithm 'msccl'; known: ring, direct, butterfly, rsag, tree, hier, nccl, nvls, hier-nvls, pat, allpairs" -- --algo msccl "$T/ndv2-x1.json" --collective allgather
refuse "missing collective" "--collective is required" -- --algo ring "$T/ndv2-x1.json"
refuse "bad collective" "--collective: expected" -- --algo ring "$T/ndv2-x1.json" --collective broadcast
refuse "bad channels" "--channels: expected an integer 1..32" -- --algo ring "$T/ndv2-x1.json" --collective allgather --channels 0
refuse "bad chunks" "--chunks: expected an integer 1\.\.1048576, got 'x'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --chunks x
refuse "bad size" "--size: not a size" -- --algo ring "$T/ndv2-x1.json" --collective allgather --size 12parsecs
refuse "bad target" "--target: expected msccl, msccl-executor, mscclpp or unlimited, got 'gpu'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --target gpu
# MSCCL++ is a runtime (model/runtime.c) whose plans this build cannot write yet
# --target mscclpp writes an MSCCL++ execution plan (whatever -o's name),
# which taccl-run reads by its content and verifies with data
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather --target mscclpp -q -o "$TMP/mpp-ring.xml"
expect "mscclpp target: an MSCCL++ plan, whatever the name" 0 '"gpus"' -- head -c 4000 "$TMP/mpp-ring.xml"
expect "... taccl-run verifies it" 0 "verified" -- "$R" "$TMP/mpp-ring.xml"
"$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --target mscclpp -q -o "$TMP/mpp-sk.json"
expect "mscclpp target, sketch mode: the plan verifies" 0 "verified" -- "$R" "$TMP/mpp-sk.json"
refuse "missing topology" "nonexistent.json" -- --algo ring "$T/nonexistent.json" --collective allgather
refuse "two topologies with --algo" "one topology file" -- --algo ring "$T/ndv2-x1.json" "$T/ndv2-x2.json" --collective allgather
expect "missing -o is exit 2" 2 "-o OUT.xml is required" -- "$S" --algo ring "$T/ndv2-x1.json" --collective allgather

# sketch mode: bad inputs are refused
refuse "missing sketch" "any.json" -- "$ROOT/sketches/any.json" "$T/ndv2-x1.json"
refuse "sketch for another topology" "nnodes" -- "$ROOT/sketches/ndv2-x2-sk-1.json" "$T/ndv2-x1.json"
refuse "reduction size not whole chunks" "1001 bytes is not a multiple of 32" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --collective allreduce --size 1001
refuse "sketch chunks not whole elements" "8 bytes is not a multiple of 32: .*whole number of 4-byte elements" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --size 8
refuse "instances that split chunks below a DMA segment" "--instances 2 splits each 256-byte chunk into parts of 128 bytes, not whole 256-byte DMA segments" -- "$ROOT/sketches/cs-chip4x2-sk-1.json" "$T/cs-chip4x2.json" --instances 2
refuse "a range msccl-executor would read as no limit" "--bytes 0:1: .*reads the maxBytes it would need \(0\) as no limit" -- --algo ring "$T/ndv2-x1.json" --collective allgather --bytes 0:1 --target msccl-executor
refuse "a sketch-mode option with --algo" "--instances is for sketch mode, not --algo baselines" -- --algo ring "$T/ndv2-x1.json" --collective allgather --instances 2
refuse "a baseline option in sketch mode" "--chunks is for --algo baselines, not sketch mode" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --chunks 2
refuse "a plan option outside --plan" "--sizes is for --plan, not --algo baselines" -- --algo ring "$T/ndv2-x1.json" --collective allgather --sizes 1K:1M
expect "--algo nccl says NCCL's estimates without a stray comma" 0 "NCCL's estimates \(us\): [a-z]" -- "$S" --algo nccl "$T/ndv2-x2.json" --collective allgather --size 1M -o "$TMP/nccl-note.xml"
cp "$T/ndv2-x1.json" "$TMP/topo-copy.json"
expect "-o naming an input is exit 2" 2 "-o .*topo-copy.json is the input .*topo-copy.json: writing the schedule would replace it" -- "$S" --algo ring "$TMP/topo-copy.json" --collective allgather -o "$TMP/topo-copy.json"
if cmp -s "$T/ndv2-x1.json" "$TMP/topo-copy.json"; then echo "ok - -o naming an input leaves the input as it was"
else echo "not ok - -o naming an input leaves the input as it was"; fi
refuse "bad time limit" "--time-limit: expected seconds > 0" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --time-limit -3
# the numbers of the options: a refusal names the whole domain, so a value
# out of range reads the bound it broke (--chunks 2000000 said "a positive
# integer", --time-limit 1e308 "> 0"); integers are digits alone and real
# numbers decimal (no sign, blank, hexadecimal, inf or nan: strtol took
# " +4" as 4 and strtod "0x10" as 16)
SK1=$ROOT/sketches/ndv2-x1-sk-1.json
refuse "--chunks over its limit" "--chunks: expected an integer 1\.\.1048576, got '2000000'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --chunks 2000000
refuse "--chunks with a sign" "--chunks: expected an integer 1\.\.1048576, got '\+4'; write the number without '\+'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --chunks +4
refuse "--chunks with a blank" "--chunks: expected an integer 1\.\.1048576, got ' 4'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --chunks " 4"
refuse "--channels in hexadecimal" "--channels: expected an integer 1\.\.32, got '0x4'; hexadecimal is not accepted" -- --algo ring "$T/ndv2-x1.json" --collective allgather --channels 0x4
refuse "--time-limit over its limit" "--time-limit: expected seconds > 0 and < 1e7, got '1e308'" -- "$SK1" "$T/ndv2-x1.json" --time-limit 1e308
refuse "--time-limit in hexadecimal" "--time-limit: expected seconds > 0 and < 1e7, got '0x10'; hexadecimal is not accepted" -- "$SK1" "$T/ndv2-x1.json" --time-limit 0x10
refuse "--time-limit inf" "--time-limit: expected seconds > 0 and < 1e7, got 'inf'; inf and nan are not accepted" -- "$SK1" "$T/ndv2-x1.json" --time-limit inf
refuse "--gap as a sketch's mip_gap" "--gap: expected a relative gap 0 <= G < 1 .*got '1'" -- "$SK1" "$T/ndv2-x1.json" --gap 1
refuse "--gap over its limit" "--gap: expected a relative gap 0 <= G < 1 .*got '1e308'" -- "$SK1" "$T/ndv2-x1.json" --gap 1e308
refuse "--instances over its limit" "--instances: expected an integer 1\.\.32, got '33'" -- "$SK1" "$T/ndv2-x1.json" --instances 33
refuse "--mem-limit over its limit" "--mem-limit: expected a whole number of MiB in 1\.\.2147483647, got '99999999999'" -- "$SK1" "$T/ndv2-x1.json" --mem-limit 99999999999
refuse "--time-budget over its limit" "--time-budget: expected seconds > 0 and < 1e7, got '1e9'" -- --plan "$T/ndv2-x1.json" --collective allgather --time-budget 1e9
refuse "--size over its limit" "--size: at most 4194304T \(2\^62 bytes\), got '99999999999999999999'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --size 99999999999999999999
refuse "--size 0" "--size: at least 1 byte, got '0'" -- --algo ring "$T/ndv2-x1.json" --collective allgather --size 0
# a baseline past what this tool builds is refused before it is built, naming
# the limit (--chunks 1000000 --target unlimited aborted out of memory)
refuse "--chunks too many to build" "ring: 32000000 chunks per loop over 8 ranks need at least 4\.48e\+08 steps, more than this tool builds \(16777216\)" -- --algo ring "$T/ndv2-x1.json" --collective allreduce --chunks 1000000 --target unlimited
refuse "--chunks too many for the runtime" "ring: 3200000 chunks per loop over 8 ranks need at least 5600000 steps per rank; the msccl runtime holds 216 tbs of 256 steps" -- --algo ring "$T/ndv2-x1.json" --collective allreduce --chunks 100000
expect "--gap just below 1 is taken" 0 "" -- "$S" "$SK1" "$T/ndv2-x1.json" --gap 0.99 --time-limit 5 -q -o "$TMP/gap.xml"
expect "sketch synthesis writes a schedule" 0 "predicted" -- "$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --time-limit 10 -o "$TMP/syn.xml"
expect "the synthesized schedule verifies" 0 "verified" -- "$BIN/taccl-run" "$TMP/syn.xml"
"$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --time-limit 10 -q -o "$TMP/syn2.xml"
expect "sketch synthesis is deterministic" 0 "" -- cmp "$TMP/syn.xml" "$TMP/syn2.xml"

# the <algo name> made of the sketch's and the topology's names fits the
# runtimes' 255 bytes, cut between characters: names of 100 two-byte
# characters each (200 bytes, the most either file takes) made the writer
# refuse a name cut inside a character ("not UTF-8")
python3 - "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" "$TMP" <<'EOF2'
import json, sys
s, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s["name"], t["name"] = "\u00e9" * 100, "\u00e8" * 100
json.dump(s, open(sys.argv[3] + "/long-name-sk.json", "w"), ensure_ascii=False)
json.dump(t, open(sys.argv[3] + "/long-name-topo.json", "w"), ensure_ascii=False)
EOF2
expect "names of 200 bytes each are synthesized" 0 "" -- "$S" "$TMP/long-name-sk.json" "$TMP/long-name-topo.json" --time-limit 5 -q -o "$TMP/long-name.xml"
expect "the <algo name> is 255 bytes at most, whole characters" 0 "" -- python3 -c "
import re, sys
m = re.search(rb'<algo name=\"([^\"]*)\"', open(sys.argv[1], 'rb').read())
assert m and len(m.group(1)) <= 255, m and len(m.group(1))
m.group(1).decode('utf-8')
" "$TMP/long-name.xml"
expect "the schedule with the long name verifies" 0 "result +verified" -- "$R" "$TMP/long-name.xml"
# and characters the writer escapes become '_': the runtimes read "&amp;" as
# written, so taccl-run refused the file a sketch or topology named "R&D" made
python3 - "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" "$TMP" <<'EOF2'
import json, sys
s, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s["name"], t["name"] = 'R&D "x" <y>', "a&b"
json.dump(s, open(sys.argv[3] + "/amp-sk.json", "w"))
json.dump(t, open(sys.argv[3] + "/amp-topo.json", "w"))
EOF2
"$S" "$TMP/amp-sk.json" "$TMP/amp-topo.json" --time-limit 5 -q -o "$TMP/amp.xml"
expect "a name with & < > \" is written plain" 0 '<algo name="taccl allgather R_D _x_ _y_ on a_b"' -- head -1 "$TMP/amp.xml"
expect "the schedule named with & verifies for its runtime" 0 "result +verified" -- "$R" "$TMP/amp.xml"
"$S" --algo nccl "$TMP/amp-topo.json" --collective allgather -q -o "$TMP/amp-nccl.xml"
expect "NCCL's schedule on a topology named with & verifies" 0 "result +verified" -- "$R" "$TMP/amp-nccl.xml"

# hierarchical synthesis: one node's routing joined by rails; refused on one
# node and with --flat; the reductions and AllToAll verify with their data
# checked, in place too; --json says which stage 1 ran; the default is flat
# below 64 ranks
refuse "--hierarchical on one node" "needs a cluster of at least 2 nodes" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --hierarchical
refuse "--hierarchical with --flat" "--hierarchical and --flat do not go together" -- "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --hierarchical --flat
echo '{"name": "plain4", "nnodes": 4}' >"$TMP/plain4.json"
for c in allgather reducescatter allreduce alltoall; do
    if few && { [ "$c" = reducescatter ] || [ "$c" = alltoall ]; }; then
        echo "# skip - hierarchical $c on dgx-a100-x4: make check runs allgather and allreduce (its reducescatter inside)"
        continue
    fi
    expect "hierarchical $c on dgx-a100-x4 is written" 0 "" -- "$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective "$c" --size 4M --hierarchical --time-limit 1 -q -o "$TMP/h-$c.xml"
    expect "hierarchical $c verifies, data checked" 0 "result +verified" -- "$R" "$TMP/h-$c.xml"
done
expect "hierarchical allreduce verifies in place" 0 "result +verified" -- "$R" "$TMP/h-allreduce.xml" --inplace
expect "--json says hierarchical" 0 '"hierarchical":true' -- "$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allgather --size 1G --hierarchical -q --json -o "$TMP/h-j.xml"
expect "32 ranks default to flat" 0 '"hierarchical":false' -- "$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allgather --size 1G --time-limit 1 -q --json -o "$TMP/h-f.xml"
expect "--rails blocks is written" 0 '"hierarchical_blocks":true' -- "$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allgather --size 4M --hierarchical --rails blocks -q --json -o "$TMP/h-b.xml"
expect "node blocks verify, data checked" 0 "result +verified" -- "$R" "$TMP/h-b.xml"
expect "node blocks cross nodes one transfer per block" 0 "" -- bash -c "'$R' '$TMP/h-b.xml' --trace '$TMP/h-b.trace.json' -q && grep -q '\"0->8, 8 chunks\"' '$TMP/h-b.trace.json'"
refuse "--rails blocks for allreduce" "--rails blocks needs a hierarchical allgather; this call is allreduce" -- "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allreduce --hierarchical --rails blocks
refuse "--rails blocks when flat" "this call is a flat allgather" -- "$TMP/plain4.json" "$T/dgx-a100-x4.json" --flat --rails blocks
refuse "--rails with a bad value" "--rails: expected ring, blocks or best, got 'tree'" -- "$TMP/plain4.json" "$T/dgx-a100-x4.json" --hierarchical --rails tree
"$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allgather --size 1G --hierarchical -q -o "$TMP/h-j2.xml"
expect "hierarchical synthesis is deterministic" 0 "" -- cmp "$TMP/h-j.xml" "$TMP/h-j2.xml"

# latency-first routing (--route): at 1 KiB on NDv2 x2 without the runtime's
# latency every chunk on its fewest-alpha tree, shared below the relay,
# beats the MILP's routing (which pays an alpha per chunk and spreads them):
# auto tries both there and keeps it, the file verifies with its data
# checked, and is the same bytes twice; --route milp keeps the MILP's and
# builds no other.  (With the runtime's latency, which the MILP's hop costs
# carry, the two routings tie there.)
LB="$TMP/ndv2-x2-bare.json"
python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t.pop("runtime_latency")
json.dump(t, open(sys.argv[2], "w"))' "$T/ndv2-x2.json" "$LB"
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$LB" --size 1K --time-limit 5 -q --json -o "$TMP/lat.xml" >"$TMP/lat.json"
expect "1 KiB allgather keeps the latency-first routing" 0 "" -- python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['latency_first'] and d['latency_first_us'] < d['milp_routing_us'] - 1.0, d" "$TMP/lat.json"
expect "latency-first allgather verifies, data checked" 0 "result +verified" -- "$R" "$TMP/lat.xml"
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$LB" --size 1K --time-limit 5 -q -o "$TMP/lat2.xml"
expect "latency-first synthesis is deterministic" 0 "" -- cmp "$TMP/lat.xml" "$TMP/lat2.xml"
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$LB" --size 1K --time-limit 5 --route milp -q --json -o "$TMP/lat-m.xml" >"$TMP/lat-m.json"
expect "--route milp builds no latency-first routing" 0 '"latency_first":false,"latency_first_us":null' -- cat "$TMP/lat-m.json"
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$T/ndv2-x2.json" --collective allreduce --size 1K --time-limit 1 --route latency -q --json -o "$TMP/lat-ar.xml" >"$TMP/lat-ar.json"
expect "latency-first allreduce verifies in place" 0 "result +verified" -- "$R" "$TMP/lat-ar.xml" --inplace
refuse "--route with a bad value" "--route: expected auto, milp, latency, best or trees, got 'fast'" -- "$ROOT/sketches/ndv2-x2-sk-1.json" "$T/ndv2-x2.json" --route fast

# the candidates (--json): every strategy the call considered, in the order
# tried, each with its predicted time or why it failed or was not tried; one
# winner, named, and no built candidate faster than it (ties within 1e-9
# us); the entries as label=status, in order; the older keys agree with them
CANDS_PY='
import json, sys
d = json.load(open(sys.argv[1]))
c = d["candidates"]
got = ",".join("%s=%s" % (e["label"], e["status"]) for e in c)
assert got == sys.argv[2], (got, sys.argv[2])
win = [e for e in c if e["winner"]]
assert len(win) == 1 and win[0]["label"] == d["winner"] and win[0]["status"] == "ok", d
assert d["winner_reason"], d
built = [e["predicted_us"] for e in c if e["status"] == "ok"]
assert all(isinstance(t, (int, float)) and t > 0 for t in built), c
assert win[0]["predicted_us"] <= min(built) + 1e-9, c
for e in c:
    if e["status"] != "ok":
        assert e["predicted_us"] is None and e["note"], e
assert d["latency_first"] == (win[0]["routing"] == "latency-first"), d
assert d["hierarchical_blocks"] == (win[0]["routing"] == "hier-blocks"), d
assert d["join"] == win[0]["join"], d
'
cands_ok() {    # NAME FILE LABELS
    expect "candidates: $1" 0 "" -- python3 -c "$CANDS_PY" "$2" "$3"
}
cands_ok "auto at 1 KiB tries both routings and the packed trees" "$TMP/lat.json" "milp=ok,latency-first=ok,trees=ok,trees-lanes=ok"
expect "candidates: the latency-first routing wins at 1 KiB" 0 '"winner":"latency-first"' -- cat "$TMP/lat.json"
cands_ok "--route milp skips the latency-first routing" "$TMP/lat-m.json" "milp=ok,latency-first=skipped,trees=ok,trees-lanes=ok"
expect "candidates: the skipped entry says why" 0 '"status":"skipped","predicted_us":null,"note":"--route milp"' -- cat "$TMP/lat-m.json"
cands_ok "allreduce: one entry per join" "$TMP/lat-ar.json" "milp=skipped,latency-first/barrier=ok,latency-first/pipeline=ok"
"$S" "$TMP/plain4.json" "$T/dgx-a100-x4.json" --collective allgather --size 4M --hierarchical --time-limit 2 -q --json -o "$TMP/h-best.xml" >"$TMP/h-best.json"
cands_ok "hierarchical allgather: rings, then node blocks" "$TMP/h-best.json" "hier-rings=ok,hier-blocks=ok"

# minBytes/maxBytes: by default every size (the legacy runtime never picks a
# schedule with maxBytes 0); --bytes as each target reads it
expect "default size range: all sizes (legacy)" 0 'minBytes="0" maxBytes="9223372036854775807"' -- head -1 "$TMP/syn.xml"
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather -q -o "$TMP/br.xml" --bytes 64K:1M
expect "--bytes LO:HI: legacy maxBytes exclusive" 0 'minBytes="65536" maxBytes="1048576"' -- head -1 "$TMP/br.xml"
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather -q -o "$TMP/be.xml" --bytes 64K:1M --target msccl-executor
expect "--bytes LO:HI: executor maxBytes inclusive" 0 'minBytes="65536" maxBytes="1048575"' -- head -1 "$TMP/be.xml"
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather -q -o "$TMP/bi.xml" --target msccl-executor
expect "executor: no limit is maxBytes 0" 0 'minBytes="0" maxBytes="0"' -- head -1 "$TMP/bi.xml"
refuse "--bytes reversed" "--bytes: expected LO:HI with LO < HI" -- --algo ring "$T/ndv2-x1.json" --collective allgather --bytes 1M:64K
refuse "--bytes not a range" "--bytes: expected LO:HI" -- --algo ring "$T/ndv2-x1.json" --collective allgather --bytes 64K
refuse "--bytes empty" "--bytes: expected LO:HI with LO < HI" -- --algo ring "$T/ndv2-x1.json" --collective allgather --bytes 1M:1M

# --sizes LO:HI is inclusive, as taccl-run's --sweep: LO = HI is a plan of
# one size (it was refused); HI below LO is not
refuse "--sizes reversed" "--sizes: expected LO:HI sizes with 0 < LO <= HI" -- --plan "$T/ndv2-x1.json" --collective allgather --sizes 16K:8K
expect "--sizes LO:LO makes a one-size plan" 0 "" -- "$S" --plan "$T/ndv2-x1.json" --collective allgather --sizes 16K:16K --no-propose -q -o "$TMP/plan1"
expect "the one-size plan covers that size in each mode" 0 "" -- python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['sizes'] == [16384, 16384], d['sizes']
assert [n['size_bytes'] for n in d['nccl']] == [16384], d['nccl']
for f in d['files']:
    assert f['min_bytes'] <= 16384 < f['max_bytes_excl'], f
" "$TMP/plan1/plan.json"
expect "the one-size plan runs at that size" 0 "16384" -- "$R" "$TMP/plan1" --sweep 16K:16K

# a --sketch given twice, by the same name or another, is refused: the plan
# synthesized it twice
cp "$SK1" "$TMP/twice.json"
ln -s twice.json "$TMP/twice-link.json"
refuse "--sketch given twice" "--sketch .*twice.json is the same file as the earlier --sketch .*twice.json: give each sketch once" -- --plan "$T/ndv2-x1.json" --collective allgather --sketch "$TMP/twice.json" --sketch "$TMP/twice.json"
refuse "--sketch given twice by two names" "--sketch .*twice-link.json is the same file as the earlier --sketch .*twice.json" -- --plan "$T/ndv2-x1.json" --collective allgather --sketch "$TMP/twice.json" --sketch "$TMP/twice-link.json"

# -o onto something that is not a regular file: a FIFO (like /dev/null) is
# written through and stays a FIFO (an atomic rename would replace the
# device itself); a directory is refused
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
reader=$!
expect "-o onto a FIFO writes through it" 0 "" -- "$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --time-limit 10 -q -o "$TMP/fifo"
wait "$reader"
expect "the FIFO is still a FIFO" 0 "" -- test -p "$TMP/fifo"
expect "the FIFO carried the whole schedule" 0 "" -- cmp "$TMP/syn.xml" "$TMP/fifo.out"
mkdir "$TMP/outdir"
expect "-o onto a directory is exit 2" 2 "outdir: cannot write: is a directory" -- "$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" -q -o "$TMP/outdir"
expect "the directory is untouched" 0 "" -- test -d "$TMP/outdir"

# sketch mode with CBC: a schedule taccl-run verifies, stdout exactly one
# JSON object (CBC logs to stdout unless the wrapper stops it), both MILP
# stages on CBC, the sketch's solver.backend used when --solver is absent
SK2="$ROOT/sketches/ndv2-x2-sk-1.json"
expect "cbc: synthesis exits 0" 0 "" -- \
    bash -c "'$S' '$SK2' '$T/ndv2-x2.json' --solver cbc -o '$TMP/cbc.xml' --json -q >'$TMP/cbc.json' 2>'$TMP/cbc.err'"
expect "cbc: -q leaves stderr empty" 0 "" -- test ! -s "$TMP/cbc.err"
expect "cbc: taccl-run verifies the schedule" 0 "result +verified" -- "$R" "$TMP/cbc.xml"
expect "cbc: --json stdout is one JSON object" 0 "" -- python3 -c '
import json, sys
j = json.loads(open(sys.argv[1]).read())
assert j["error"] is None and j["output"].endswith("cbc.xml") and j["predicted_us"] > 0, j' "$TMP/cbc.json"
expect "cbc: both MILP stages run on CBC" 0 "route: CBC: optimal.*contig: optimal: .*; CBC [0-9.]+ s" -- \
    bash -c "'$S' '$SK2' '$T/ndv2-x2.json' --solver cbc -o '$TMP/cbc2.xml' 2>&1 | tr '\n' ' '"
"$S" "$SK2" "$T/ndv2-x2.json" --solver cbc -v -o "$TMP/cbc3.xml" --json >"$TMP/cbc3.json" 2>"$TMP/cbc3.err"
expect "cbc -v: CBC's log is on stderr" 0 "Welcome to the CBC MILP Solver" -- cat "$TMP/cbc3.err"
expect "cbc -v: stdout is still one JSON object" 0 "" -- python3 -c '
import json, sys
json.loads(open(sys.argv[1]).read())' "$TMP/cbc3.json"
sed 's/"backend": *"glpk"/"backend": "cbc"/' "$SK2" >"$TMP/sk-cbc.json"
expect "sketch asks for cbc" 0 '"backend": "cbc"' -- cat "$TMP/sk-cbc.json"
expect "the sketch's backend is used without --solver" 0 "route: CBC: .*; CBC [0-9.]+ s" -- \
    bash -c "'$S' '$TMP/sk-cbc.json' '$T/ndv2-x2.json' -o '$TMP/cbc4.xml' 2>&1 | tr '\n' ' '"
expect "--solver glpk overrides the sketch" 0 "route: GLPK: .*; GLPK [0-9.]+ s" -- \
    bash -c "'$S' '$TMP/sk-cbc.json' '$T/ndv2-x2.json' --solver glpk -o '$TMP/cbc5.xml' 2>&1 | tr '\n' ' '"

# algorithms that do not exist for a collective or a topology
refuse "ring has no alltoall" "^taccl-synth: ring has no AllToAll; use direct$" -- --algo ring "$T/ndv2-x1.json" --collective alltoall
refuse "tree is allreduce only" "tree is an AllReduce algorithm and has no AllGather" -- --algo tree "$T/ndv2-x1.json" --collective allgather
refuse "butterfly needs a power of two" "butterfly needs a power-of-two number of ranks; mesh6 has 6" -- --algo butterfly "$TMP/six.json" --collective allreduce
refuse "rsag via butterfly needs a power of two" "power-of-two" -- --algo rsag --via butterfly "$TMP/six.json" --collective allreduce
refuse "via is rsag only" "--via applies to rsag only" -- --algo ring --via direct "$T/ndv2-x1.json" --collective allreduce
refuse "no ring on a star" "ring: found no ring through all 4 ranks of star" -- --algo ring "$TMP/star.json" --collective allgather
refuse "direct needs every pair linked" "ranks 0 and 5 of ndv2-x1 have no link" -- --algo direct "$T/ndv2-x1.json" --collective allgather
refuse "direct alltoall needs a relay" "no link, switch or NIC between them nor a rank joined to both" -- --algo direct "$T/torus-2d-4x4.json" --collective alltoall
refuse "butterfly partners not linked" "no link, switch or NIC" -- --algo butterfly "$T/torus-2d-4x4.json" --collective allgather

# runtime limits: 65 steps per tb exceed the newer executor's 64 ...
refuse "executor step limit" "65 steps in one threadblock.*allows 64 per tb.*--target unlimited" -- --algo ring "$TMP/sixtyfive.json" --collective allgather --channels 1 --target msccl-executor
# ... but not the legacy runtime's 256, and unlimited lifts it (and says so)
expect "legacy runtime takes 65 steps" 0 "wrote" -- "$S" --algo ring "$TMP/sixtyfive.json" --collective allgather --channels 1 -o "$TMP/r65.xml"
expect "65-step ring verifies" 0 "verified" -- "$R" "$TMP/r65.xml"
expect "unlimited says the runtimes will not load it" 0 "will not load in the MSCCL runtimes" -- "$S" --algo ring "$TMP/sixtyfive.json" --collective allgather --channels 1 --target unlimited -o "$TMP/r65u.xml"
expect "unlimited file runs with taccl-run --target unlimited" 0 "verified" -- "$R" "$TMP/r65u.xml" --target unlimited

# one success per algorithm, judged by taccl-run with nothing but the file
ok_run() {
    local name=$1
    shift
    rm -f "$TMP/ok.xml"
    expect "$name: written" 0 "wrote .*ok.xml" -- "$S" "$@" -o "$TMP/ok.xml"
    expect "$name: taccl-run verifies it" 0 "result +verified" -- "$R" "$TMP/ok.xml"
}
ok_run "ring allgather ndv2-x2" --algo ring "$T/ndv2-x2.json" --collective allgather
ok_run "ring reducescatter torus" --algo ring "$T/torus-2d-4x4.json" --collective reducescatter --chunks 2
ok_run "ring allreduce dgx2" --algo ring "$T/dgx2-x1.json" --collective allreduce --channels 3
ok_run "direct alltoall dgx2" --algo direct "$T/dgx2-x1.json" --collective alltoall
ok_run "direct reducescatter six" --algo direct "$TMP/six.json" --collective reducescatter --chunks 3
ok_run "direct allreduce chip" --algo direct "$T/cs-chip4.json" --collective allreduce
ok_run "direct alltoall through relays (cube-mesh)" --algo direct "$T/ndv2-x1.json" --collective alltoall

# --algo nccl: NCCL's choice at --size, said in --json and in the file
refuse "nccl takes no --proto auto" "--algo nccl chooses its protocol as NCCL's tuning model does" -- --algo nccl "$T/ndv2-x2.json" --collective allgather --proto auto
expect "nccl --proto LL128 keeps NCCL's pick to LL128 (NCCL_PROTO)" 0 "ring LL128 \(--proto: NCCL_PROTO\)" -- \
    "$BIN/taccl-synth" --algo nccl "$T/ndv2-x2.json" --collective allgather --size 64K --proto LL128 -o "$TMP/nccl-ll128.xml"
expect "nccl --proto LL128 verifies" 0 "protocol LL128.*result +verified" -- bash -c "'$BIN/taccl-run' '$TMP/nccl-ll128.xml' | tr '\n' ' '"
expect "nccl without --proto picks LL at 64 KiB there" 0 "ring LL, " -- \
    "$BIN/taccl-synth" --algo nccl "$T/ndv2-x2.json" --collective allgather --size 64K -o "$TMP/nccl-ll.xml"
refuse "nccl --proto on AllToAll" "whose protocol .* --proto does not set" -- --algo nccl "$T/ndv2-x2.json" --collective alltoall --proto LL
refuse "nccl sets its own channels" "nccl chooses its channels" -- --algo nccl "$T/ndv2-x2.json" --collective allgather --channels 2
refuse "nccl is for GPUs" "NCCL runs on GPUs" -- --algo nccl "$T/cs-chip4.json" --collective allgather
expect "--list names nccl" 0 "^nccl +allgather,alltoall,reducescatter,allreduce +what NCCL runs" -- "$S" --list
for sz in 4K 1G; do
    "$S" --algo nccl "$T/dgx2-x2.json" --collective allgather --size $sz -o "$TMP/nccl$sz.xml" --json >"$TMP/nccl$sz.json" 2>/dev/null
done
python3 - "$TMP" <<'PY' && echo "ok - nccl --json: LL ring on 1 channel at 4K, Simple on 16 at 1G, the model's bandwidths" || echo "not ok - nccl --json"
import json, sys, re
d = sys.argv[1]
small = json.load(open(d + "/nccl4K.json"))["nccl"]
big = json.load(open(d + "/nccl1G.json"))["nccl"]
assert (small["algo"], small["proto"], small["channels"]) == ("ring", "LL", 1), small
assert (big["algo"], big["proto"], big["channels"], big["rings"]) == ("ring", "Simple", 16, 8), big
assert big["estimate_us"] > 0 and big["piece_bytes"] == 1 << 20, big
# the per-channel bandwidths NCCL's model took: a switch port (125 GB/s) over
# the 16 channels crossing it, a NIC (12.5 GB/s) over the 2 rings through it
assert (big["bw_intra_gbps"], big["bw_inter_gbps"]) == (7.8125, 6.25), big
assert re.search(r'proto="LL"', open(d + "/nccl4K.xml").read())
assert re.search(r'proto="Simple"', open(d + "/nccl1G.xml").read())
PY
expect "nccl 4K allgather runs and verifies" 0 "result +verified" -- "$R" "$TMP/nccl4K.xml"
ok_run "butterfly allreduce chip" --algo butterfly "$T/cs-chip4.json" --collective allreduce
ok_run "butterfly allgather ndv2" --algo butterfly "$T/ndv2-x1.json" --collective allgather
ok_run "rsag direct dgx2" --algo rsag "$T/dgx2-x1.json" --collective allreduce
ok_run "rsag via ring ndv2-x2" --algo rsag --via ring "$T/ndv2-x2.json" --collective allreduce
ok_run "rsag via butterfly ndv2" --algo rsag --via butterfly "$T/ndv2-x1.json" --collective allreduce
ok_run "tree allreduce ndv2-x2" --algo tree "$T/ndv2-x2.json" --collective allreduce
ok_run "tree allreduce six" --algo tree "$TMP/six.json" --collective allreduce --chunks 6

# the case study's sync counts from generated files
"$S" --algo direct "$T/cs-chip4.json" --collective allreduce -o "$TMP/d.xml" -q
"$S" --algo butterfly "$T/cs-chip4.json" --collective allreduce -o "$TMP/b.xml" -q
expect "direct allreduce: 12 chip syncs" 0 '"chip_syncs": ?12[,}]' -- "$R" "$TMP/d.xml" --json
expect "butterfly allreduce: 8 chip syncs" 0 '"chip_syncs": ?8[,}]' -- "$R" "$TMP/b.xml" --json

# deterministic: same inputs, same bytes
"$S" --algo ring "$T/ndv2-x2.json" --collective allreduce -o "$TMP/a1.xml" -q
"$S" --algo ring "$T/ndv2-x2.json" --collective allreduce -o "$TMP/a2.xml" -q
expect "same inputs give the same bytes (ring)" 0 "" -- cmp "$TMP/a1.xml" "$TMP/a2.xml"
"$S" --algo tree "$T/dgx2-x2.json" --collective allreduce -o "$TMP/t1.xml" -q
"$S" --algo tree "$T/dgx2-x2.json" --collective allreduce -o "$TMP/t2.xml" -q
expect "same inputs give the same bytes (tree)" 0 "" -- cmp "$TMP/t1.xml" "$TMP/t2.xml"

# -q prints nothing; --size is recorded (rounded up to whole elements per chunk)
expect "-q is silent" 0 "^$" -- "$S" --algo ring "$T/ndv2-x1.json" --collective allgather -o "$TMP/q.xml" -q
expect "size rounded and said" 0 "--size 1000 rounded up to 1024" -- "$S" --algo ring "$T/ndv2-x1.json" --collective allgather --size 1000 -o "$TMP/s.xml"
expect "taccl-run uses the recorded size" 0 '"size_bytes": ?1024[,}]' -- "$R" "$TMP/s.xml" --json

# the newer executor's spelling of reduce_scatter
"$S" --algo ring "$T/ndv2-x1.json" --collective reducescatter --target msccl-executor -o "$TMP/e.xml" -q
expect "msccl-executor spells reducescatter" 0 'coll="reducescatter"' -- head -1 "$TMP/e.xml"
"$S" --algo ring "$T/ndv2-x1.json" --collective reducescatter -o "$TMP/l.xml" -q
expect "msccl spells reduce_scatter" 0 'coll="reduce_scatter"' -- head -1 "$TMP/l.xml"

# --json: the documented keys
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather -o "$TMP/j.xml" -q --json >"$TMP/j.json"
expect "json has the documented keys" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
need = ["output", "algo", "collective", "ngpus", "nchunksperloop", "channels", "tbs", "steps"]
missing = [k for k in need if k not in j]
assert not missing, missing
assert j["algo"] == "ring" and j["collective"] == "allgather" and j["ngpus"] == 8, j
assert j["channels"] == 4 and j["nchunksperloop"] == 32 and j["rings_found"] == 4 and j["output"].endswith("j.xml"), j
' "$TMP/j.json"
"$S" --algo ring "$T/ndv2-x1.json" --collective alltoall -o "$TMP/n.xml" --json >"$TMP/err.json" 2>/dev/null
expect "json on failure carries the error" 0 "" -- python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); assert j["output"] is None and "AllToAll" in j["error"], j' "$TMP/err.json"

# --proto: the protocol the runtime moves data with, named or chosen by the
# cost model at the size; the file says it, taccl-run times it by it
refuse "--proto unknown" "--proto: expected Simple, LL, LL128 or auto, got 'll'" -- \
    --algo ring "$T/ndv2-x1.json" --collective allgather --proto ll
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather --proto LL128 -o "$TMP/p.xml" -q
expect "--proto LL128 is written" 0 'proto="LL128"' -- head -1 "$TMP/p.xml"
expect "taccl-run times it as LL128" 0 "protocol LL128" -- "$BIN/taccl-run" "$TMP/p.xml"
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather -o "$TMP/p0.xml" -q
expect "no --proto writes Simple" 0 'proto="Simple"' -- head -1 "$TMP/p0.xml"
for sz in 1K 64M; do
    "$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$T/ndv2-x1.json" --size $sz --proto auto --time-limit 10 \
        -o "$TMP/pa$sz.xml" --json >"$TMP/pa$sz.json" 2>"$TMP/pa$sz.err"
    "$BIN/taccl-run" "$TMP/pa$sz.xml" --json >"$TMP/pa$sz.run.json" 2>/dev/null
    expect "--proto auto at $sz: the fastest of the three, and its prediction is the run" 0 "" -- python3 -c '
import json, re, sys
s, r, err = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
times = dict((k, float(v)) for k, v in re.findall(r"(Simple|LL128|LL) ([0-9.]+) us", err))
assert len(times) == 3, err
assert s["proto"] == min(times, key=times.get) == r["proto"] == sys.argv[4], (s["proto"], times)
assert r["verified"] and abs(r["time_us"] - s["predicted_us"]) <= 1e-6 * r["time_us"], (r, s)
' "$TMP/pa$sz.json" "$TMP/pa$sz.run.json" "$TMP/pa$sz.err" "$([ $sz = 1K ] && echo LL || echo Simple)"
done

# figures without a source: a warning naming file, line and field, and the
# schedule still written; --strict refuses (exit 2, one line, nothing written)
cat >"$TMP/u.json" <<'JSON'
{
  "name": "unsourced", "nodes": 2, "ranks_per_node": 1,
  "local": {"copy": "100 GB/s", "reduce": "100 GB/s", "source": "assumed: test"},
  "nics": [
    {"ranks": [0], "alpha": "1.3 us", "bandwidth": "100 Gb/s"}
  ]
}
JSON
"$S" --algo direct "$TMP/u.json" --collective allgather -o "$TMP/ns.xml" >/dev/null 2>"$TMP/ns.err"
expect "unsourced figures: a warning with file, line and field" 0 \
    "warning: .*u.json:5: nics\[0\].source: missing" -- cat "$TMP/ns.err"
expect "unsourced figures: the schedule is written and runs" 0 "result +verified" -- \
    "$BIN/taccl-run" "$TMP/ns.xml"
refuse "unsourced figures with --strict" "u.json:5: nics\[0\].source: missing.*\(--strict\)" -- \
    --algo direct "$TMP/u.json" --collective allgather --strict
expect "taccl-run --strict refuses an unsourced --topo" 2 "nics\[0\].source: missing.*\(--strict\)" -- \
    "$BIN/taccl-run" "$TMP/ns.xml" --topo "$TMP/u.json" --strict
expect "taccl-run warns on an unsourced --topo" 0 "warning: .*nics\[0\].source: missing" -- \
    "$BIN/taccl-run" "$TMP/ns.xml" --topo "$TMP/u.json"

# the "run it with" line gives the flags the file needs: --no-data where the
# buffers are more than taccl-run allocates, and the command it gives works
"$S" --algo ring "$T/dgx2-x2.json" --collective allgather --size 1G -o "$TMP/big.xml" 2>"$TMP/big.err"
expect "1 GiB on 32 ranks: run it with --no-data" 0 "run it with: taccl-run .*big.xml --no-data" -- \
    cat "$TMP/big.err"
expect "the suggested command runs" 0 "timing only" -- "$BIN/taccl-run" "$TMP/big.xml" --no-data
"$S" --algo ring "$T/ndv2-x1.json" --collective allgather --size 1M -o "$TMP/small.xml" 2>"$TMP/small.err"
expect "1 MiB: no --no-data suggested" 1 "" -- grep -q -- --no-data "$TMP/small.err"

# --inplace: the file for in-place calls, as msccl-tools writes one (the
# aliased buffer's references rewritten, a rank's copy of its own chunk a
# nop); as synthesized, an AllGather races in place.  A 1 s limit per stage:
# what is checked is the lowering, not how good the schedule is.
"$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$T/ndv2-x2.json" --collective allgather --size 64K \
    --time-limit 1 -q -o "$TMP/oop-ag.xml"
expect "an AllGather as synthesized does not run in place" 1 "result +FAILED" -- \
    "$BIN/taccl-run" "$TMP/oop-ag.xml" --inplace
for c in allgather reducescatter allreduce; do
    "$S" "$ROOT/sketches/ndv2-x2-sk-1.json" "$T/ndv2-x2.json" --collective $c --size 64K \
        --time-limit 1 -q --inplace -o "$TMP/ip-$c.xml"
    expect "--inplace $c: inplace=1 outofplace=0" 0 'inplace="1" outofplace="0"' -- cat "$TMP/ip-$c.xml"
    expect "--inplace $c: verifies in place" 0 "result +verified \(in-place\)" -- \
        "$BIN/taccl-run" "$TMP/ip-$c.xml"
done
expect "--inplace allgather: input never addressed (but by nops, written as msccl-tools does)" 1 "" -- \
    bash -c "grep -v 'type=\"nop\"' '$TMP/ip-allgather.xml' | grep -Eq 'i_chunks=\"[1-9]|buf=\"i\"'"
refuse "--inplace alltoall" "alltoall cannot run in place" -- \
    "$ROOT/sketches/ndv2-x2-sk-2.json" "$T/ndv2-x2.json" --collective alltoall --inplace
refuse "--inplace with --algo" "--inplace is for sketch mode" -- \
    --algo ring "$T/ndv2-x2.json" --collective allgather --inplace
# ... and with the same buffer convention as msccl-tools' own in-place files
# (tests/interop/msccl-tools: generated by msccl-tools, not by us): which
# buffer's count is 0 and which buffer the steps address
M="$ROOT/tests/interop/msccl-tools"
bufs() {    # "<zero-count buffers>/<addressed buffers>" of a file's non-nop steps
    local z
    z=$(grep -m1 '<gpu ' "$1" | grep -oE '[io]_chunks="0"' | cut -c1 | tr -d '\n')
    echo "$z/$(grep -v 'type="nop"' "$1" | grep -oE '(src|dst)buf="[io]"' | cut -d'"' -f2 | sort -u | tr -d '\n')"
}
for pair in allgather:allgather_a100_pcie_allgather_r4_i1_LL128_inplace.xml \
            reducescatter:driver_ring_reducescatter_reduce_scatter_r4_i1_Simple_inplace.xml \
            allreduce:simple_allreduce_ring_allreduce_r4_i1_Simple_inplace.xml; do
    c=${pair%%:*}
    expect "--inplace $c: buffers as msccl-tools writes them ($(bufs "$M/${pair#*:}"))" 0 \
        "^$(bufs "$M/${pair#*:}")\$" -- bufs "$TMP/ip-$c.xml"
done
