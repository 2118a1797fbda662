#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_pat.sh — NCCL's PAT (AllGather and ReduceScatter with one GPU per
# node, src/synth/baseline_pat.c): --algo pat verifies with data in and out
# of place, with and without aggregation, on power-of-two and other rank
# counts; it is refused in one line where NCCL does not run it; --algo nccl
# writes it where NCCL's tuning model picks it, and says so in --json.
source "$(dirname "$0")/lib.sh"

S="$BIN/taccl-synth"
R="$BIN/taccl-run"
T="$ROOT/topologies"

# machines of one H100 per node (one ConnectX-7 each), from DGX H100 x2
python3 - "$T/dgx-h100-x2.json" "$TMP" <<'PY'
import json, sys
src, tmp = sys.argv[1:3]
for n in (6, 8, 64):
    t = json.load(open(src))
    t.update(name="h100-one-gpu-x%d" % n, nodes=n, ranks_per_node=1, switches=[],
             nics=t["nics"][:1])
    json.dump(t, open("%s/one%d.json" % (tmp, n), "w"))
PY

# ---- data, in and out of place: 64 KiB aggregates several ranks' pieces
# per message, 2 MiB cuts each share into pieces; 6 ranks skip the offsets
# past the rank count
expect "pat verifies with data, in and out of place" 0 "16 runs" -- python3 - "$S" "$R" "$TMP" <<'PY'
import subprocess, sys
S, R, TMP = sys.argv[1:4]
bad = runs = 0
for n in (8, 6):
    for coll in ("allgather", "reducescatter"):
        for size in ("64K", "2M"):
            f = f"{TMP}/pat-{n}-{coll}-{size}.xml"
            p = subprocess.run([S, "-q", "--algo", "pat", f"{TMP}/one{n}.json", "--collective", coll,
                                "--size", size, "-o", f], capture_output=True, text=True)
            if p.returncode:
                print("synth", n, coll, size, p.stderr); bad += 1; continue
            for mode in ([], ["--inplace"]):
                q = subprocess.run([R, f] + mode, capture_output=True, text=True)
                runs += 1
                if q.returncode or "result    verified" not in q.stdout:
                    print(n, coll, size, mode, q.stdout[-400:], q.stderr[-400:]); bad += 1
print(f"{runs} runs" if not bad else f"{bad} bad")
PY
expect "64 KiB on 8 ranks: NCCL's aggregation, 4 pieces a message" 0 \
    "up to 4 pieces per message" -- "$S" --algo pat "$TMP/one8.json" --collective allgather \
    --size 64K -o "$TMP/a.xml"
expect "2 MiB on 8 ranks: no aggregation, 2 pieces of NCCL's PAT chunk" 0 \
    "1 piece per message" -- "$S" --algo pat "$TMP/one8.json" --collective reducescatter \
    --size 2M --channels 1 --chunks 2 -o "$TMP/b.xml"

# ---- a dimension whose steps pass the target's steps-per-tb limit is dealt
# over more threadblocks, one MSCCL channel each (the executor allows 64:
# 8 pieces x 10 steps of dimension 0 take two)
expect "pat spreads dimension 0 over two threadblocks under msccl-executor" 0 \
    "at most 5 tbs per rank and 48 steps per tb \(msccl-executor limit 64\)" -- "$S" --algo pat \
    "$TMP/one8.json" --collective allgather --size 64K --chunks 8 --target msccl-executor \
    -o "$TMP/e.xml"
expect "... and verifies in and out of place" 0 "result    verified \(out-of-place and in-place\)" \
    -- "$R" "$TMP/e.xml"

# ---- refusals, one line, exit 2
expect "pat refuses more than one GPU per node" 2 "^taccl-synth: pat: NCCL runs PAT with one GPU per node" \
    -- "$S" --algo pat "$T/dgx-h100-x2.json" --collective allgather -o "$TMP/c.xml"
expect "pat has no AllReduce" 2 "pat has no AllReduce" \
    -- "$S" --algo pat "$TMP/one8.json" --collective allreduce -o "$TMP/c.xml"
expect "pat has no AllToAll" 2 "pat has no AllToAll" \
    -- "$S" --algo pat "$TMP/one8.json" --collective alltoall -o "$TMP/c.xml"

# ---- --algo nccl writes PAT where NCCL's model picks it
expect "64 nodes of one GPU, AllGather 8M: NCCL's PAT is written, no fallback" 0 \
    '"nccl":\{"algo":"pat","proto":"Simple","channels":2,.*"estimate_us":434\.89[0-9]*,"would_run":null' -- \
    "$S" --algo nccl "$TMP/one64.json" --collective allgather --size 8M -o "$TMP/n64.xml" --json
expect "PAT at 64M: the ring is NCCL's own pick" 0 '"nccl":\{"algo":"ring".*"would_run":null' -- \
    "$S" --algo nccl "$TMP/one64.json" --collective allgather --size 64M -o "$TMP/n64r.xml" --json
for c in allgather reducescatter; do
    expect "nccl $c 256K on 8 nodes of one GPU: PAT, verified out of place" 0 \
        "result    verified" -- bash -c "\"$S\" --algo nccl \"$TMP/one8.json\" --collective $c \
        --size 256K -o \"$TMP/n8$c.xml\" 2>&1 | grep -q 'nccl at 262144 bytes: pat Simple' && \
        \"$R\" \"$TMP/n8$c.xml\""
    expect "nccl $c 256K PAT verified in place" 0 "result    verified \(in-place\)" \
        -- "$R" "$TMP/n8$c.xml" --inplace
done
# MSCCL++ (the XML program lowered to a plan) verifies too
expect "nccl allgather 256K PAT as an MSCCL++ plan verifies" 0 "result    verified" -- bash -c \
    "\"$S\" -q --algo nccl \"$TMP/one8.json\" --collective allgather --size 256K --target mscclpp \
    -o \"$TMP/n8.json\" && \"$R\" \"$TMP/n8.json\" --topo \"$TMP/one8.json\" --size 256K"
