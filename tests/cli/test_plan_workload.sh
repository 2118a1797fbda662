#!/usr/bin/env bash
# tier: plain
# test_plan_workload.sh — plans for the calls a job makes: a call of any
# byte size runs a file padded to whole elements per chunk (the runtimes
# have no remainder handling) and says so; every NCCL fallback says its
# true reason (NCCL fastest, or dropped by the legacy runtime's 4-file
# limit with the time it saves); --profile decides which files the 4-file
# runtime keeps; a bad profile is refused naming file and line; file names
# say the byte range they cover.  Baselines only (--no-propose), small
# machines: a few seconds.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
T="$ROOT/topologies"

# ------------------------------------------------- any byte size is served
P="$TMP/dgx1"
# picked by the default model alone (--by-default), on DGX-1 without the
# runtime's latency: this block tests file names, padding and fallbacks,
# which need files at 1M..8M (with the runtime's latency, and under NCCL's
# latency model, NCCL's 8-channel rings beat every baseline there)
python3 - "$T/dgx1.json" "$TMP/dgx1-bare.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t.pop("runtime_latency")
json.dump(t, open(sys.argv[2], "w"))
PY
"$S" --plan "$TMP/dgx1-bare.json" --collective allreduce --no-propose --sizes 1M:32M --by-default \
    -o "$P" -q
expect "file names say the half-open range, the top one its last size" 0 \
    "allreduce-1M-lt4M-outofplace.xml" -- ls "$P"
expect "... (4M <= size < 16M)" 0 "allreduce-4M-lt16M-inplace.xml" -- ls "$P"
# 5,000,004 B = 1,250,001 elements: no multiple of the file's 32 chunks
expect "an odd size runs the file, padded, and says how" 0 \
    "^ +5000004 .*allreduce-4M-lt16M-outofplace\.xml \(padded to 5000064 B, \+60: .*32 chunks" \
    -- "$R" "$P" --size 5000004
expect "... in place, a size not even of whole 4-byte elements" 0 \
    "^ +5000003 .*allreduce-4M-lt16M-inplace\.xml \(padded to 5000064 B, \+61" \
    -- "$R" "$P" --size 5000003 --inplace
expect "... JSON: padded_to, pad_bytes, verified" 0 \
    '"picked":"allreduce-4M-lt16M-outofplace.xml","nccl_fallback":false,"padded_to":5000064,"pad_bytes":60,.*"verified":true' \
    -- "$R" "$P" --size 5000004 --json
expect "plan.json says which sizes a file serves and how to pad" 0 \
    "whole elements|multiple of nchunksperloop \(32\)" -- grep -h '"serves"' "$P/plan.json"
expect "a size NCCL is fastest at says so" 0 \
    "^ +25000004 .*NCCL fallback \(NCCL's schedule is the fastest" -- "$R" "$P" --size 25000004
expect "... in plan.json's fallback too" 0 '"why":[[:space:]]+"nccl_fastest"' -- cat "$P/plan.json"

# ---------------------------------------------- the 4-file limit's drops
C="$TMP/cs"
"$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --sizes 1K:1M -o "$C" -q
expect "a dropped file's range says it was dropped and what it saved" 0 \
    "^ +2048 .*NCCL fallback \(dropped: msccl \(the legacy runtime\) loads at most 4 files.*direct Simple was the fastest here and saves 2\.4 us" \
    -- "$R" "$C" --size 2K
expect "... in plan.json, beside what the kept files save" 0 "ok" -- python3 - "$C/plan.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
fb = [f for f in j["nccl_fallback"] if f["why"] == "file_limit"]
assert len(fb) == 2, fb
kept = min(f["saved_us"] for f in j["files"])
assert all(f["saved_us"] < kept == f["kept_least_saved_us"] for f in fb), (fb, kept)
assert j["profile"]["file"] is None and j["profile"]["calls_per_size"] == [1] * 11, j["profile"]
print("ok")
PY
expect "default: the 128K files are kept" 0 "allreduce-128K-lt1M-outofplace.xml" -- ls "$C"

# ------------------------------------------------------------ --profile
# a job calling 4 KiB a thousand times: the small-size file saves more
printf '# bytes count\n4096 1000\n 262144, 3\n' >"$TMP/prof.txt"
"$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --sizes 1K:1M \
    --profile "$TMP/prof.txt" -o "$TMP/csp" -q
expect "--profile keeps the files saving the most over the job's calls" 0 \
    "allreduce-1K-lt128K-outofplace.xml" -- ls "$TMP/csp"
expect "... and drops the one for 1M (no call there), saying so" 0 \
    "^ +1048576 .*NCCL fallback \(dropped: .*tree Simple was the fastest here and saves 0\.0 us" \
    -- "$R" "$TMP/csp" --size 1M
expect "plan.json names the profile and its calls per size" 0 "ok" -- python3 - "$TMP/csp/plan.json" "$TMP/prof.txt" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
assert p["file"] == sys.argv[2] and p["calls"] == 1003, p
assert p["calls_per_size"][2] == 1000 and p["calls_per_size"][8] == 3, p
print("ok")
PY
# nccl-tests output: a call per row, its comments and NCCL's own lines skipped
cat >"$TMP/nt.txt" <<'NT'
# nThread 1 nGpus 1 minBytes 1024 maxBytes 8192 step: 2(factor) warmup iters: 5 iters: 20
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
node1:123:123 [0] NCCL INFO Launch mode Parallel
        4096          1024     float     sum      -1    10.07    0.41    0.41      0     9.92    0.41    0.41      0
        4096          1024     float     sum      -1    10.07    0.41    0.41      0     9.92    0.41    0.41      0
# Avg bus bandwidth    : 0.41
NT
expect "nccl-tests output is a profile (a call per row)" 0 '"calls":2,' -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --sizes 1K:1M \
    --profile "$TMP/nt.txt" -o "$TMP/csn" -q --json
# a PyTorch profiler trace (Kineto JSON; made here, in the shape of its
# events): the GPU kernels' calls of this collective, not the CPU op that
# records the same call; bytes = max(In, Out msg nelems) x the dtype's
cat >"$TMP/trace.json" <<'TR'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 1, "dur": 2, "args":
  {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 1024}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ts": 3, "dur": 5, "args":
  {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 1024}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ts": 9, "dur": 5, "args":
  {"Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 2048, "Out msg nelems": 2048}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "ts": 15, "dur": 5, "args":
  {"Collective name": "_allgather_base", "dtype": "Float", "In msg nelems": 256, "Out msg nelems": 512}}
]}
TR
expect "a PyTorch profiler trace is a profile: its kernels of the collective" 0 \
    '"calls":2,"calls_outside_sizes":0,"calls_per_size":\[0,0,2,0' -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --sizes 1K:1M \
    --profile "$TMP/trace.json" -o "$TMP/cst" -q --json
expect "... an AllGather's size is its output (the larger buffer)" 0 \
    '"calls":1,"calls_outside_sizes":0,"calls_per_size":\[0,1,0' -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allgather --no-propose --sizes 1K:1M \
    --profile "$TMP/trace.json" -o "$TMP/csg" -q --json
expect "... a trace without the collective: exit 2" 2 "trace\.json: the trace records no reducescatter call" -- \
    "$S" --plan "$T/cs-cluster2.json" --collective reducescatter --no-propose --profile "$TMP/trace.json" -o "$TMP/x"
printf '4096 10\n8192 ten\n' >"$TMP/bad.txt"
expect "a bad profile line: exit 2 naming file and line" 2 "bad\.txt:2: expected \"BYTES COUNT\"" -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --profile "$TMP/bad.txt" -o "$TMP/x"
printf '# nothing\n' >"$TMP/empty.txt"
expect "a profile with no call: exit 2" 2 "empty\.txt: lists no call" -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --profile "$TMP/empty.txt" -o "$TMP/x"
expect "a missing profile: exit 2, nothing written" 2 "no-such\.txt" -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --profile "$TMP/no-such.txt" -o "$TMP/x"
expect "... no plan directory left behind" 0 "" -- test ! -e "$TMP/x"
expect "--profile is a plan-mode option" 2 "--profile" -- \
    "$S" --algo ring "$T/cs-cluster2.json" --collective allreduce --profile "$TMP/prof.txt" -o "$TMP/y.xml"
mkdir -p "$TMP/own" && cp "$TMP/prof.txt" "$TMP/own/prof.txt"
expect "a profile inside -o DIR is refused (a plan replaces DIR)" 2 "the input .*own/prof\.txt is inside it" -- \
    "$S" --plan "$T/cs-cluster2.json" --collective allreduce --no-propose --profile "$TMP/own/prof.txt" -o "$TMP/own"
# 4..16 B AllGather on 8 ranks: fewer elements than any candidate's chunks
expect "sizes no candidate can serve say so" 0 "4 B\.\.16 B out of place: NCCL fallback \(no candidate verified and could be timed" -- \
    "$S" --plan "$T/dgx1.json" --collective allgather --no-propose --sizes 4:16 --proto Simple -o "$TMP/tiny"
expect "... in plan.json" 0 '"why":[[:space:]]+"no_candidate"' -- cat "$TMP/tiny/plan.json"
