#!/usr/bin/env bash
# tier: plain
# test_collnet.sh — a network that reduces (SHARP), NCCL's CollNet: the
# topology's "collnet" object, good and bad; `--algo nccl` weighs
# CollNetDirect, CollNetChain and NVLS across nodes where it is declared,
# estimates them as NCCL's tuning model does, and, since no output here can
# express a reduction in the network, writes NCCL's best choice without them
# and names its own pick in `would_run`.  The topologies are the bundled
# machines with the object added (as a user declares it).
source "$(dirname "$0")/lib.sh"

S="$BIN/taccl-synth"
TP="$BIN/taccl-topo"
T="$ROOT/topologies"

python3 - "$T" "$TMP" <<'PY'
import json, sys
T, O = sys.argv[1], sys.argv[2]
def cn(**extra):
    d = {"reductions": ["sum", "max"], "dtypes": ["f32", "bf16"], "source": "test: SHARP"}
    d.update(extra)
    return d
def with_collnet(machine, name, obj, kind=None):
    t = json.load(open(f"{T}/{machine}.json"))
    d = {}
    for k, v in t.items():
        d[k] = v
        if k == "ranks_per_node":
            d["collnet"] = obj
    d["name"] = name
    if kind:
        d["device"] = kind
    json.dump(d, open(f"{O}/{name}.json", "w"), indent=1)
for m in ("dgx-a100-x2", "dgx-h100-x2", "dgx-h100-x4", "dgx-a100-x1", "ndv2-x2"):
    with_collnet(m, m + "-sharp", cn())
with_collnet("dgx-a100-x2", "maxonly", cn(reductions=["max"]))
with_collnet("dgx-a100-x2", "bad_red", cn(reductions=["prod"]))
with_collnet("dgx-a100-x2", "bad_key", cn(ports=4))
with_collnet("dgx-a100-x2", "bad_obj", "yes")
with_collnet("dgx-a100-x2", "bad_bool", cn(allgather="yes"))
with_collnet("cs-cluster2", "bad_chip", cn())
PY

# ---- schema
expect "show names the reducing network and its source" 0 \
    "collnet   the network reduces \(NCCL's CollNet, SHARP; --algo nccl weighs it\): reductions sum,max, dtypes f32,bf16, allgather no, reducescatter no" \
    -- "$TP" show "$TMP/dgx-a100-x2-sharp.json"
expect "on one node it is said to count from two nodes on" 0 "weighs it from two nodes on" \
    -- "$TP" show "$TMP/dgx-a100-x1-sharp.json"
bad() {     # NAME FILE REGEX
    expect "bad collnet: $1" 2 "^taccl-topo: [^ ]*$2.json:[0-9]+: collnet$3" -- "$TP" show "$TMP/$2.json"
}
bad "unknown reduction" bad_red "\.reductions\[0\]: expected sum, avg or max, got 'prod'"
bad "unknown key" bad_key '\.ports: unknown key'
bad "not an object" bad_obj ': expected an object'
bad "not a boolean" bad_bool '\.allgather: expected true or false'
bad "on a chip device" bad_chip ': a reducing network .* belongs to a GPU device'

# ---- NCCL's choice.  DGX A100 x2, AllReduce 1 GiB: CollNetDirect, 8 heads
# at bwIntra 48 (x0.5): 2 x (3.7 + 7 x 0.4) + 31 + 2^30 / 192000 = 5636.4 us
nccl() {    # TOPO SIZE [extra...] -> nccl object of the --json result
    local t=$1 s=$2
    shift 2
    "$S" --algo nccl "$TMP/$t.json" --collective allreduce --size "$s" -o "$TMP/n.xml" --json -q "$@" \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); n=d["nccl"]; w=n["would_run"]
print(n["algo"], "%.1f" % n["estimate_us"], (w or {}).get("algo"), "%.1f" % (w or {}).get("estimate_us", -1))'
}
check() {   # NAME WANT TOPO SIZE [extra...]
    local name=$1 want=$2
    shift 2
    local got
    got=$(nccl "$@" 2>&1)
    if [ "$got" = "$want" ]; then echo "ok - $name"; else
        echo "not ok - $name"; echo "  wanted: $want"; echo "  got:    $got"; fi
}
check "DGX A100 x2 1 GiB: NCCL would run CollNetDirect; the file is its tree" \
    "tree 6900.5 collnetdirect 5636.4" dgx-a100-x2-sharp 1G
check "the same with --target mscclpp (no plan holds it either)" \
    "tree 6900.5 collnetdirect 5636.4" dgx-a100-x2-sharp 1G --target mscclpp
cp "$T/dgx-a100-x2.json" "$TMP/plain.json"
check "without the object NCCL's pick is the tree itself" "tree 6900.5 None -1.0" plain 1G
expect "the note says why the file is not CollNet" 0 \
    "NCCL would run CollNetDirect \(estimate 5636.4 us: the network reduces \(CollNet, SHARP\)\), which no output here can express" \
    -- "$S" --algo nccl "$TMP/dgx-a100-x2-sharp.json" --collective allreduce --size 1G -o "$TMP/n.xml"
check "a network that only takes max: no CollNet for a sum" "tree 6900.5 None -1.0" maxonly 1G
case "$(nccl dgx-a100-x1-sharp 1G)" in
    *" None -1.0") echo "ok - one node: no CollNet (NCCL's node threshold is two)" ;;
    *) echo "not ok - one node: no CollNet (NCCL's node threshold is two)"; nccl dgx-a100-x1-sharp 1G ;;
esac
# no NVSwitch (NDv2's hybrid cube mesh): CollNetDirect is off, the chain is not
case "$(nccl ndv2-x2-sharp 1G)" in
    *collnetdirect*) echo "not ok - NDv2: no CollNetDirect without an NVSwitch"; nccl ndv2-x2-sharp 1G ;;
    *) echo "ok - NDv2: no CollNetDirect without an NVSwitch" ;;
esac
# DGX H100 x4: NVLS across nodes runs on CollNet; the file is the best without it
check "DGX H100 x4 1 GiB: NCCL would run NVLS across nodes" "ring 5596.9 nvls 5460.6" \
    dgx-h100-x4-sharp 1G --target mscclpp
expect "the note says NVLS across nodes runs on the network's reduction" 0 \
    "NCCL would run NVLS across nodes \(estimate 5460.6 us: the network reduces" \
    -- "$S" --algo nccl "$TMP/dgx-h100-x4-sharp.json" --collective allreduce --size 1G -o "$TMP/n.xml"
# DGX H100 x2: NVLSTree stays NCCL's pick at 1 GiB and is written as before
check "DGX H100 x2 1 GiB: NVLSTree is still written" "nvlstree 4428.3 None -1.0" \
    dgx-h100-x2-sharp 1G --target mscclpp

# ---- import: RCCL's own dumps of an MI100 host whose four NICs are CollNet
# devices (coll="1"; tests/data/nccl-topo, not written here)
N="$ROOT/tests/data/nccl-topo"
expect "import: coll=\"1\" on every NIC, two nodes: the network reduces" 0 \
    "collnet   the network reduces .*reductions sum, dtypes f32, allgather no, reducescatter no" \
    -- "$TP" show "$N/rccl-topo_collnet_n4.xml" --nodes 2
expect "import: the source names the dump's attribute and what is assumed" 0 \
    "source: NCCL rule: a <net coll=\"1\"> is a device of a loaded CollNet plugin .*assumed: NCCL_COLLNET_ENABLE=1" \
    -- "$TP" show "$N/rccl-topo_collnet_n1.xml" --nodes 2
if "$TP" show "$N/rccl-topo_collnet_n4.xml" | grep -q "^collnet"; then
    echo "not ok - import: one node, no collnet"; else echo "ok - import: one node, no collnet"; fi
"$TP" import "$N/rccl-topo_collnet_n4.xml" --nodes 2 -o "$TMP/mi100x2.json" 2>/dev/null
case "$(nccl mi100x2 1G)" in
    *" collnetchain "*|*" collnetdirect "*) echo "ok - the imported MI100 x2: NCCL would run CollNet at 1 GiB" ;;
    *) echo "not ok - the imported MI100 x2: NCCL would run CollNet at 1 GiB"; nccl mi100x2 1G ;;
esac
