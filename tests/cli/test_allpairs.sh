#!/usr/bin/env bash
# tier: plain
# test_allpairs.sh — --algo allpairs, the ReduceScatter written straight as
# an MSCCL++ plan (sched/mpp_allpairs.c, docs/mscclpp.md section 12.9):
# every rank puts each peer's block into that peer's scratch in pieces and
# the owner sums each piece from every peer in one reduce as it lands.
#   * on DGX A100 x1 (8 ranks) and DGX-2 x1 (16: a reduce of 16 buffers is
#     two re ops of at most ten) the plan verifies with data in both buffer
#     modes in taccl-run and passes scripts/mpp_check.py (its own reading of
#     MSCCL++'s rules; run with data on a plan of few pieces);
#   * at 1 GiB it is within 0.95 of taccl-run's bound on DGX A100 x1 and
#     DGX H100 x1, and at least 1.3x faster than the direct ReduceScatter
#     lowered from MSCCL steps (which sums the peers one after another);
#   * the MSCCL XML target, several nodes, a pair with no link, AllGather,
#     more operations than a block holds and --proto are refused in one
#     line, exit 2;
#   * a plan for MSCCL++ on MI300X x1 keeps it for 1 GiB, where it beats
#     NCCL's ring in every model variant, and says which sizes its file
#     takes (its plan's chunks', not the stand-in program's).
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
T="$ROOT/topologies"

for m in dgx-a100-x1 dgx2-x1; do
    expect "$m: written as an MSCCL++ plan" 0 "" -- \
        "$S" --algo allpairs "$T/$m.json" --collective reducescatter --target mscclpp \
        -o "$TMP/$m.json" -q
    expect "$m: verified with data out of place" 0 "result +verified" -- \
        "$R" "$TMP/$m.json" --topo "$T/$m.json" --size 2M
    expect "$m: verified with data in place" 0 "result +verified" -- \
        "$R" "$TMP/$m.json" --topo "$T/$m.json" --size 2M --inplace
    expect "$m: mpp_check.py passes it" 0 "" -- \
        python3 "$ROOT/scripts/mpp_check.py" --quiet "$TMP/$m.json"
done
# mpp_check.py's run with data on a plan of few pieces (its simulation
# takes a second per thousand operations)
"$S" --algo allpairs "$T/dgx-a100-x1.json" --collective reducescatter --chunks 1 --channels 2 \
    --target mscclpp -o "$TMP/small.json" -q
expect "mpp_check.py passes it, run with data" 0 "" -- \
    python3 "$ROOT/scripts/mpp_check.py" --quiet --run "$TMP/small.json"
expect "DGX-2 x1: 16 buffers a piece take two re ops of at most ten" 0 "^10 7$" -- \
    python3 -c 'import json, sys
ops = [o for t in json.load(open(sys.argv[1]))["gpus"][0]["threadblocks"] for o in t["ops"]
       if o["name"] == "re"]
print(max(len(o["src_buff"]) for o in ops), min(len(o["src_buff"]) for o in ops))' "$TMP/dgx2-x1.json"

# 1 GiB without data: within 0.95 of the bound, and the lowered direct
# ReduceScatter (the same data flow in MSCCL steps) far behind
for m in dgx-a100-x1 dgx-h100-x1; do
    "$S" --algo allpairs "$T/$m.json" --collective reducescatter --target mscclpp \
        -o "$TMP/ap-$m.json" -q
    "$S" --algo direct "$T/$m.json" --collective reducescatter --target mscclpp \
        -o "$TMP/direct-$m.json" -q
    "$R" "$TMP/ap-$m.json" --topo "$T/$m.json" --size 1G --no-data --json >"$TMP/ap-$m.run" 2>&1
    "$R" "$TMP/direct-$m.json" --topo "$T/$m.json" --size 1G --no-data --json \
        >"$TMP/direct-$m.run" 2>&1
    expect "$m 1 GiB: at least 0.95 of the bound, 1.3x the lowered direct" 0 "^ok" -- \
        python3 -c 'import json, sys
a, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
r = a["bound_us"] / a["time_us"]
print("ok" if 0.95 <= r <= 1 and d["time_us"] >= 1.3 * a["time_us"] else "no",
      a["time_us"], a["bound_us"], d["time_us"])' "$TMP/ap-$m.run" "$TMP/direct-$m.run"
done

expect "the MSCCL XML target is refused" 2 \
    "^taccl-synth: allpairs sums several buffers in one reduce, which MSCCL XML cannot express" -- \
    "$S" --algo allpairs "$T/dgx-a100-x1.json" --collective reducescatter -o "$TMP/ap.xml"
expect "several nodes are refused" 2 "allpairs: dgx-a100-x2 is several nodes" -- \
    "$S" --algo allpairs "$T/dgx-a100-x2.json" --collective reducescatter --target mscclpp \
    -o "$TMP/x.json"
expect "a pair with no link is refused" 2 "allpairs: ranks 0 and 5 of dgx1 have no link" -- \
    "$S" --algo allpairs "$T/dgx1.json" --collective reducescatter --target mscclpp \
    -o "$TMP/x.json"
expect "AllGather is refused" 2 "allpairs has no AllGather" -- \
    "$S" --algo allpairs "$T/dgx-a100-x1.json" --collective allgather --target mscclpp \
    -o "$TMP/x.json"
expect "more operations than a block holds are refused" 2 \
    "10 body pieces .* need 65 operations in a sender block .* of MSCCL\+\+'s 64" -- \
    "$S" --algo allpairs "$T/dgx-a100-x1.json" --collective reducescatter --chunks 10 \
    --target mscclpp -o "$TMP/x.json"
expect "--proto is refused (the plan is Simple)" 2 "allpairs runs .* Simple protocol; --proto does not apply" -- \
    "$S" --algo allpairs "$T/dgx-a100-x1.json" --collective reducescatter --proto LL \
    --target mscclpp -o "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && [ ! -e "$TMP/ap.xml" ] && echo "ok - a refusal writes nothing" ||
    echo "not ok - a refusal wrote a file"

# the plan: on MI300X x1 the 1 GiB file is the all-pairs plan, faster than
# NCCL's ring in every model variant, and as fast as taccl-run measures it
"$S" --plan "$T/mi300x-x1.json" --collective reducescatter --sizes 1G:1G --time-budget 30 \
    --target mscclpp -o "$TMP/plan" -q
expect "MI300X x1 plan for MSCCL++: the 1 GiB file is allpairs, no slower in any variant" 0 \
    "^ok" -- python3 -c 'import json, subprocess, sys
d = sys.argv[1]
p = json.load(open(d + "/plan.json"))
f = next(f for f in p["files"] if f["mode"] == "outofplace")
s = f["sizes"][0]
r = json.loads(subprocess.run([sys.argv[2], d + "/" + f["file"], "--topo", sys.argv[3], "--size",
                               "1G", "--no-data", "--json"], capture_output=True, text=True).stdout)
ok = (f["from"].startswith("allpairs") and s["x_nccl_worst"] >= 1 and
      abs(r["time_us"] - s["predicted_us"]) < 1e-6 * r["time_us"] and
      r["bound_us"] / r["time_us"] >= 0.95)
print("ok" if ok else "no", f["from"], s["x_nccl_worst"], r["time_us"], s["predicted_us"])' \
    "$TMP/plan" "$R" "$T/mi300x-x1.json"
expect "...plan.json says the sizes it takes: multiples of 16 bytes x its 65536 chunks" 0 \
    "multiple of 1048576 \(whole 16-byte vectors" -- grep -h '"serves"' "$TMP/plan/plan.json"
