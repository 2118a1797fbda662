#!/usr/bin/env bash
# tier: sanitized  (make check runs it in its sanitized lane only, every check
#              with the sanitizers on; make check-full in both)
# test_topo_import.sh — taccl-topo import over topology dumps nobody here
# wrote (tests/data/nccl-topo/README.md says where each came from): each
# imports, the JSON loads, a ring AllGather synthesized on it verifies in
# taccl-run; where we bundle the same machine the figures equal ours or
# differ by the documented reason; partial files are refused naming the
# option that supplies what is missing; malformed ones exit 2 naming file,
# line and element, and nothing is written.
source "$(dirname "$0")/lib.sh"
T="$BIN/taccl-topo"
D="$ROOT/tests/data/nccl-topo"

# usage
expect "help exits 0" 0 "usage: taccl-topo import" -- "$T" --help
expect "import --help exits 0" 0 "partial file" -- "$T" import --help
expect "no command is exit 2" 2 "a command is needed" -- "$T"
expect "unknown command is exit 2" 2 "unknown command 'list'" -- "$T" list x.xml
expect "no output is exit 2" 2 "needs -o" -- "$T" import "$D/rccl-topo_8p_940.xml"
expect "unknown option is exit 2" 2 "unknown option '--fast'" -- "$T" import "$D/rccl-topo_8p_940.xml" -o "$TMP/x.json" --fast
expect "bad --nodes is exit 2" 2 "--nodes: expected" -- "$T" import "$D/rccl-topo_8p_940.xml" -o "$TMP/x.json" --nodes 0
expect "output onto the input is exit 2" 2 "" -- "$T" import "$D/rccl-topo_8p_940.xml" -o "$D/rccl-topo_8p_940.xml"

# The options a partial file needs: Azure's VM-size pages (README.md).
opts_of() {
    case $(basename "$1") in
    azure-ndv2-topo.xml) echo "--gpu v100 --nvlink cube-mesh --net 100Gb/s" ;;
    azure-ndv4-topo.xml) echo "--gpu a100 --nvlink switch:12 --net 200Gb/s" ;;
    azure-ndv5-topo.xml) echo "--gpu h100 --nvlink switch:18 --net 400Gb/s" ;;
    esac
}

# make check (few: TACCL_FEW, TACCL_QUICK) synthesizes and runs on a few dumps, one of each
# kind; make check-full on every one.
FEW_DUMPS="azure-ncv4-topo azure-ndv2-topo azure-ndv4-topo azure-ndv5-topo simai-topo_8A100_4CX6 rccl-topo_8p_940 rccl-topo_16p1h rccl-topo_8p6l rccl-topo_8p_pcie"

n=0
for f in "$D"/*.xml; do
    name=$(basename "$f" .xml)
    out="$TMP/$name.json"
    # shellcheck disable=SC2046
    expect "$name imports" 0 "" -- "$T" import "$f" -o "$out" $(opts_of "$f")
    n=$((n + 1))
    [ -f "$out" ] || continue
    if few && [[ " $FEW_DUMPS " != *" $name "* ]]; then
        expect "$name: the JSON loads" 0 "" -- python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out"
        continue
    fi
    expect "$name: ring allgather synthesizes" 0 "" -- "$BIN/taccl-synth" --algo ring "$out" \
        --collective allgather -o "$TMP/$name.xml" --strict
    expect "$name: and verifies in taccl-run" 0 "verified" -- "$BIN/taccl-run" "$TMP/$name.xml"
done
expect "every committed dump was tried (62)" 0 "" -- test "$n" -eq 62

# Partial files: refused without options, one line naming what is missing.
for m in ndv2 ndv4 ndv5; do
    rm -f "$TMP/p.json"
    expect "azure $m without options: names line, element and --gpu" 2 \
        "azure-$m-topo.xml:[0-9]+: pci: GPU [0-9a-f:.]+ has no <gpu> element.*--gpu" -- \
        "$T" import "$D/azure-$m-topo.xml" -o "$TMP/p.json"
    expect "azure $m: nothing written" 1 "" -- test -e "$TMP/p.json"
done
expect "azure ndv4 with --gpu only: names --net" 2 "pci: NIC 0103:00:00.0 has no <nic><net>.*--net BW" -- \
    "$T" import "$D/azure-ndv4-topo.xml" -o "$TMP/p.json" --gpu a100
expect "azure ndv4 with --gpu and --net: names --nvlink" 2 "no <nvlink> or <xgmi>.*--nvlink" -- \
    "$T" import "$D/azure-ndv4-topo.xml" -o "$TMP/p.json" --gpu a100 --net 200Gb/s
expect "azure ndv4: nothing written" 1 "" -- test -e "$TMP/p.json"
expect "what was assumed is in the JSON" 0 "" -- grep -q 'assumed (--gpu h100)' "$TMP/azure-ndv5-topo.json"

# Malformed: exit 2, FILE:LINE: element: problem, nothing written.
printf '<system>\n <cpu>\n  <pci busid="0000:01:00.0" class="0x030200">\n   <gpu sm="80">\n  </pci>\n </cpu>\n</system>\n' >"$TMP/bad1.xml"
printf '<system>\n <cpu>\n  <pci busid="0000:01:00.0" class="0x030200">\n   <gpu sm="80">\n    <nvlink count="2" tclass="0x030200"/>\n   </gpu>\n  </pci>\n </cpu>\n</system>\n' >"$TMP/bad2.xml"
printf '<system>\n <cpu>\n  <pci busid="0000:01:00.0" class="0x030200">\n   <gpu rank="0"/>\n  </pci>\n </cpu>\n</system>\n' >"$TMP/bad3.xml"
head -c 3000 "$D/rccl-topo_8p_940.xml" >"$TMP/bad4.xml"
expect "mismatched tag names line and element" 2 "bad1.xml:5: gpu: .*mismatch" -- "$T" import "$TMP/bad1.xml" -o "$TMP/b.json"
expect "nvlink without target names line and element" 2 "bad2.xml:5: nvlink: no target" -- "$T" import "$TMP/bad2.xml" -o "$TMP/b.json"
expect "gpu without sm names line and element" 2 "bad3.xml:4: gpu: no sm" -- "$T" import "$TMP/bad3.xml" -o "$TMP/b.json"
expect "truncated dump names a line" 2 "bad4.xml:[0-9]+: [a-z]+: " -- "$T" import "$TMP/bad4.xml" -o "$TMP/b.json"
expect "missing dump is exit 2" 2 "nope.xml: cannot read" -- "$T" import "$TMP/nope.xml" -o "$TMP/b.json"
expect "malformed: nothing written" 1 "" -- test -e "$TMP/b.json"

# Deterministic: the same dump gives the same bytes.
"$T" import "$D/rccl-topo_16p1h.xml" -o "$TMP/d1.json" && "$T" import "$D/rccl-topo_16p1h.xml" -o "$TMP/d2.json"
expect "deterministic output" 0 "" -- cmp "$TMP/d1.json" "$TMP/d2.json"

# Machines we bundle: the imported figures against ours.  Each figure is
# equal, or differs by a ratio the docs explain (docs/topo-import.md):
#   nvlink: NCCL's per-link NVLink figure (20 GB/s sm70/80, 20.6 sm90) over
#           the datasheet's 25 GB/s per link that ours use;
#   xgmi:   RCCL's per-link xGMI figure (36 GB/s gfx90a, 48 gfx94x) over
#           AMD's datasheet figure (50, 64 GB/s each way) that ours use;
#   nics:   the machine has fewer NICs than ours (SimAI's 4 bonds for 8 GPUs),
#           or (null) NICs of another kind (a 1 Gb/s Ethernet port).
compare() {
    python3 - "$@" <<'EOF'
import json, sys
imp, ours, want = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
a, b = json.load(open(imp)), json.load(open(ours))
def links(t):
    d = {}
    for l in t.get("links", []):
        for p, q in l["pairs"]:
            d[(p, q)] = l["bandwidth_gbps"]
            if l.get("bidirectional", True):
                d[(q, p)] = l["bandwidth_gbps"]
    return d
def nvswitch(t):   # the switch with every rank and the NVLink alpha source
    s = [s for s in t.get("switches", []) if "NVSwitch" in s.get("source", "")]
    return s[0]["bandwidth_gbps"] if s else None
bad = []
la, lb = links(a), links(b)
if set(la) != set(lb):
    bad.append("linked pairs differ: %s vs %s" % (sorted(set(la) ^ set(lb))[:6], ""))
for k in lb:
    if k in la and abs(la[k] / lb[k] - want["nvlink"]) > 1e-6:
        bad.append("link %s: %g vs %g" % (k, la[k], lb[k]))
sa, sb = nvswitch(a), nvswitch(b)
if (sa is None) != (sb is None) or (sa and abs(sa / sb - want["nvlink"]) > 1e-6):
    bad.append("NVSwitch port: %s vs %s" % (sa, sb))
na = sorted(n["bandwidth_gbps"] for n in a["nics"])
nb = sorted(n["bandwidth_gbps"] for n in b["nics"])
if want.get("nics", 1) is not None:     # null: the dump's NICs are another machine's
    if set(na) != set(nb):
        bad.append("NIC bandwidths %s vs %s" % (na, nb))
    if len(na) != len(nb) * want.get("nics", 1):
        bad.append("NIC count %d vs %d" % (len(na), len(nb)))
if a.get("device", {}).get("arch") != b.get("device", {}).get("arch"):
    bad.append("arch")
print("\n".join(bad) if bad else "same or explained")
sys.exit(1 if bad else 0)
EOF
}
TP="$ROOT/topologies"
expect "NDv2: cube-mesh pairs equal, NVLink 20 vs 25 GB/s per link (NCCL's sm70 figure), NIC equal" 0 "" -- \
    compare "$TMP/azure-ndv2-topo.json" "$TP/ndv2-x1.json" '{"nvlink": 0.8}'
expect "NDv4: NVSwitch 240 vs 300 GB/s (NCCL's 20 GB/s x 12), NICs equal" 0 "" -- \
    compare "$TMP/azure-ndv4-topo.json" "$TP/ndv4-x1.json" '{"nvlink": 0.8}'
expect "NDv5: NVSwitch 370.8 vs 450 GB/s (NCCL's 20.6 GB/s x 18), NICs equal" 0 "" -- \
    compare "$TMP/azure-ndv5-topo.json" "$TP/ndv5-x1.json" '{"nvlink": 0.824}'
expect "DGX H100 = NDv5's figures" 0 "" -- \
    compare "$TMP/azure-ndv5-topo.json" "$TP/dgx-h100-x1.json" '{"nvlink": 0.824}'
expect "SimAI 8xA100 vs DGX A100: NVSwitch 240 vs 300, 4 NICs of 25 GB/s for our 8" 0 "" -- \
    compare "$TMP/simai-topo_8A100_4CX6.json" "$TP/dgx-a100-x1.json" '{"nvlink": 0.8, "nics": 0.5}'
expect "RCCL 8p_940 vs our MI300X: same 28 pairs, xGMI 48 vs 64 GB/s (RCCL's gfx94x figure), NICs equal" 0 "" -- \
    compare "$TMP/rccl-topo_8p_940.json" "$TP/mi300x-x1.json" '{"nvlink": 0.75}'
expect "RCCL 8p_90a vs our MI250: same 12 pairs, xGMI 36 vs 50 GB/s (RCCL's gfx90a figure); its NIC is a 1 Gb/s Ethernet" 0 "" -- \
    compare "$TMP/rccl-topo_8p_90a.json" "$TP/mi250-x1.json" '{"nvlink": 0.72, "nics": null}'
# The comparison can fail: a wrong explanation is caught.
expect "a wrong ratio is caught" 1 "NVSwitch port" -- \
    compare "$TMP/azure-ndv4-topo.json" "$TP/ndv4-x1.json" '{"nvlink": 1.0}'

# show: what a topology holds, and the bound of each collective.
S="$ROOT/topologies"
expect "show lists ranks and nodes" 0 "ndv2-x2: 2 node\(s\) x 8 ranks = 16 ranks, gpu, arch volta" -- "$T" show "$S/ndv2-x2.json"
expect "show lists links with bandwidth, alpha and source" 0 "link group 0: 0->1 1->0 .* 50 GB/s, alpha 0.7 us" -- "$T" show "$S/ndv2-x2.json"
expect "show gives every figure's source" 0 "source: TE-CCL teccl/topologies/ndv2.py" -- "$T" show "$S/ndv2-x2.json"
expect "show lists NICs per node with their rail" 0 "nic 7: 7 +50 GB/s, alpha 2.6 us, rail 7" -- "$T" show "$S/dgx-h100-x2.json"
expect "show imports a dump on the way" 0 "nics +4 per node.*" -- "$T" show "$D/simai-topo_8A100_4CX6.xml" --nodes 2
expect "show refuses a partial dump as import does" 2 "--gpu" -- "$T" show "$D/azure-ndv5-topo.xml"
expect "show takes no -o" 2 "--output is for import, not show" -- "$T" show "$S/ndv2-x2.json" -o "$TMP/s.json"
# The bound it shows is the one taccl-run reports for a schedule on it.
"$T" show "$S/ndv2-x2.json" >"$TMP/show.txt"
"$BIN/taccl-synth" --algo ring "$S/ndv2-x2.json" --collective allgather -o "$TMP/ndv2-ring.xml" 2>/dev/null
want=$(awk '$1 == "allgather" {print $2}' "$TMP/show.txt")
expect "show's allgather bound at 1 MiB is taccl-run's ($want us)" 0 "bound +$want us lower bound" -- "$BIN/taccl-run" "$TMP/ndv2-ring.xml"
expect "show's bounds: all four collectives at 1 MiB and 1 GiB" 0 "^4$" -- \
    bash -c "grep -cE '^  (allgather|alltoall|reducescatter|allreduce) +[0-9.]+ +[0-9.]+$' '$TMP/show.txt'"

# --fabric: the network between nodes (default fat-tree: every NIC reaches
# every other node's NICs, as the format assumed before; rails: NIC i of a
# node reaches NIC i of the others only).  SimAI's 8 x A100 has 4 NICs, each
# serving two GPUs, so a ring can leave a node by the NIC it entered by.
SIM="$D/simai-topo_8A100_4CX6.xml"
"$T" import "$SIM" -o "$TMP/sim-ft.json" --nodes 2 2>/dev/null
"$T" import "$SIM" -o "$TMP/sim-rails.json" --nodes 2 --fabric rails 2>/dev/null
expect "--nodes 2: fat-tree by default, said in the notes" 0 "fabric fat-tree \(the default; --fabric rails" -- \
    cat "$TMP/sim-ft.json"
expect "--nodes 2: no fabric key by default (the loader's default, fat-tree)" 1 "" -- \
    grep -q '"fabric"' "$TMP/sim-ft.json"
expect "--fabric rails writes fabric rails" 0 '"fabric":[[:space:]]+"rails"' -- cat "$TMP/sim-rails.json"
expect "--fabric rails: the notes say who set it" 0 "fabric rails \(--fabric rails\)" -- cat "$TMP/sim-rails.json"
expect "--fabric fat-tree: the notes say who set it" 0 "fabric fat-tree \(--fabric fat-tree\)" -- \
    "$T" import "$SIM" -o /dev/stdout --nodes 2 --fabric fat-tree
expect "--fabric on one node: said to change nothing" 0 "--fabric rails: one node" -- \
    "$T" import "$SIM" -o /dev/stdout --fabric rails
expect "a bad --fabric is exit 2" 2 "--fabric: expected rails or fat-tree, got 'torus'" -- \
    "$T" import "$SIM" -o "$TMP/x.json" --nodes 2 --fabric torus
expect "show: fat-tree" 0 "^fabric +fat-tree" -- "$T" show "$TMP/sim-ft.json"
expect "show: rails" 0 "^fabric +rails" -- "$T" show "$TMP/sim-rails.json"
# rails: direct needs a route between GPUs of two rails and is refused; the
# ring stays on its rail between nodes (the sender's and receiver's NICs
# have one index) and verifies; on fat-tree direct runs.
expect "rails: direct between rails is refused" 2 "no link, switch or NIC between them" -- \
    "$BIN/taccl-synth" --algo direct "$TMP/sim-rails.json" --collective allgather -o "$TMP/x.xml"
expect "fat-tree: direct verifies" 0 "" -- \
    "$BIN/taccl-synth" --algo direct "$TMP/sim-ft.json" --collective allgather -o "$TMP/sim-ft-direct.xml"
expect "fat-tree: direct runs" 0 "result +verified" -- "$BIN/taccl-run" "$TMP/sim-ft-direct.xml"
expect "rails: the ring is built" 0 "" -- \
    "$BIN/taccl-synth" --algo ring "$TMP/sim-rails.json" --collective allreduce -o "$TMP/sim-rails-ring.xml"
expect "rails: the ring verifies" 0 "result +verified" -- "$BIN/taccl-run" "$TMP/sim-rails-ring.xml"
expect "rails: every hop between nodes stays on one rail" 0 "^on-rail [1-9][0-9]*$" -- python3 - "$TMP/sim-rails.json" "$TMP/sim-rails-ring.xml" <<'P'
import json, sys, xml.etree.ElementTree as E
t = json.load(open(sys.argv[1]))
rpn = t["ranks_per_node"]
nic = {}
for i, n in enumerate(t["nics"]):
    for r in n["ranks"]:
        nic[r] = i
hops, bad = 0, []
for g in E.parse(sys.argv[2]).getroot().iter("gpu"):
    a = int(g.get("id"))
    for tb in g.iter("tb"):
        b = int(tb.get("send"))
        if b >= 0 and a // rpn != b // rpn:
            hops += 1
            if nic[a % rpn] != nic[b % rpn]:
                bad.append((a, b))
print("off-rail %s" % bad if bad else "on-rail %d" % hops)
P
# --net overrides a full dump's NIC speed, and the source says so.
expect "--net overrides the dump's speed, said in the source" 0 \
    '"bandwidth_gbps":[[:space:]]+12.5,.*"source":[[:space:]]+"assumed \(--net 100Gb/s\), overriding the dump.s speed' -- \
    bash -c "'$T' import '$SIM' -o /dev/stdout --net 100Gb/s | tr -d '\n'"
# Several hosts (host_hash) are several nodes: SimAI's dump, its <cpu>s
# listed again under a second host_hash (the figures are the dump's).
python3 - "$SIM" "$TMP/sim-2hosts.xml" <<'P'
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
cpus = [c for c in root if c.tag == "cpu"]
for c in cpus:
    c.set("host_hash", "0x1")
for c in cpus:
    d = E.fromstring(E.tostring(c))
    d.set("host_hash", "0x2")
    root.append(d)
E.ElementTree(root).write(sys.argv[2])
P
expect "two host_hash values are two nodes" 0 '"nodes":[[:space:]]+2,' -- \
    "$T" import "$TMP/sim-2hosts.xml" -o /dev/stdout
expect "two hosts: the notes say so" 0 "2 hosts \(host_hash\) read as 2 nodes" -- \
    "$T" import "$TMP/sim-2hosts.xml" -o /dev/stdout
expect "two hosts and --nodes 3 disagree" 2 "--nodes 3, but the dump lists 2 hosts" -- \
    "$T" import "$TMP/sim-2hosts.xml" -o "$TMP/x.json" --nodes 3
