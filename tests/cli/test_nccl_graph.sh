#!/usr/bin/env bash
# tier: plain  (make check runs it plain only: its programs' code paths the
#              sanitized scripts take; make check-full also sanitized)
# test_nccl_graph.sh — taccl-synth --algo nccl --graph GRAPH.xml: NCCL's own
# channels from its graph dump (NCCL_GRAPH_DUMP_FILE), dumps nobody here
# wrote (tests/data/nccl-graph/README.md): the graph's ring order shows as
# each channel's send/recv peers in the written file, the result verifies in
# taccl-run, nodes are joined as NCCL's connectRings joins them; graphs that
# do not match the topology are refused with exit 2 naming file, line and
# element, nothing written; --graph outside --algo nccl is refused by the
# option table's mode check.
source "$(dirname "$0")/lib.sh"
S="$BIN/taccl-synth"
R="$BIN/taccl-run"
G="$ROOT/tests/data/nccl-graph"

# The machines the dumps came from.  Azure NC A100 v4: its own topology file
# (tests/data/nccl-topo), imported.  Issue 1406: one GPU and one NIC per
# node, two nodes; issue 524: four GPUs and four NICs per node (NICs 0 and 3
# are named), two nodes; both described here since the issues give no
# topology dump.
"$BIN/taccl-topo" import "$ROOT/tests/data/nccl-topo/azure-ncv4-topo.xml" -o "$TMP/ncv4.json" \
    2>/dev/null
"$BIN/taccl-topo" import "$ROOT/tests/data/nccl-topo/azure-ncv4-topo.xml" -o "$TMP/ncv4-x2.json" \
    --nodes 2 2>/dev/null
cat > "$TMP/one-x2.json" <<'J'
{"name": "one-gpu-x2", "nodes": 2, "ranks_per_node": 1, "device": {"kind": "gpu", "arch": "ampere"},
 "local": {"copy_gbps": 700, "reduce_gbps": 500, "source": "test"},
 "nics": [{"ranks": [0], "alpha_us": 14, "bandwidth_gbps": 25, "source": "test"}]}
J
cat > "$TMP/four-x2.json" <<'J'
{"name": "four-gpu-x2", "nodes": 2, "ranks_per_node": 4, "device": {"kind": "gpu", "arch": "ampere"},
 "local": {"copy_gbps": 700, "reduce_gbps": 500, "source": "test"},
 "switches": [{"ranks": [0, 1, 2, 3], "alpha_us": 5.7, "bandwidth_gbps": 24, "source": "test"}],
 "nics": [{"ranks": [0], "alpha_us": 14, "bandwidth_gbps": 25, "source": "test"},
          {"ranks": [1], "alpha_us": 14, "bandwidth_gbps": 25, "source": "test"},
          {"ranks": [2], "alpha_us": 14, "bandwidth_gbps": 25, "source": "test"},
          {"ranks": [3], "alpha_us": 14, "bandwidth_gbps": 25, "source": "test"}]}
J

# peers FILE — "rank:chan:send:recv" of every tb with a peer, one a line.
peers() {
    python3 - "$1" <<'P'
import sys, xml.etree.ElementTree as E
for g in E.parse(sys.argv[1]).getroot().iter("gpu"):
    for t in g.iter("tb"):
        if t.get("send") != "-1" or t.get("recv") != "-1":
            print("%s:%s:%s:%s" % (g.get("id"), t.get("chan"), t.get("send"), t.get("recv")))
P
}

# has NAME FILE LINE... — each LINE is among peers FILE.
has() {
    local name=$1 f=$2
    shift 2
    local got miss=""
    got=$(peers "$f")
    for l in "$@"; do grep -qx -- "$l" <<<"$got" || miss="$miss $l"; done
    if [ -z "$miss" ]; then echo "ok - $name"; else echo "not ok - $name"; echo "  missing:$miss"; fi
}

# --- Azure NCv4: ring channels 0 1 2 3 and 0 3 2 1 (its graph 0) ---------
expect "ncv4 graph: ring Simple at 1 MiB from the graph's 2 channels" 0 \
    "ring Simple, 4 of 4 channels \(2 channels of .*azure-ncv4-graph.xml, duplicated\)" -- \
    "$S" --algo nccl "$TMP/ncv4.json" --graph "$G/azure-ncv4-graph.xml" --collective allreduce \
    --size 1M -o "$TMP/ncv4-ar.xml"
# channel 0: 0 -> 1 -> 2 -> 3 -> 0; channel 1: 0 -> 3 -> 2 -> 1 -> 0; 2, 3 repeat them
has "ncv4 graph: channel 0 follows 0 1 2 3, channel 1 follows 0 3 2 1 (and their duplicates)" \
    "$TMP/ncv4-ar.xml" 0:0:1:3 1:0:2:0 2:0:3:1 3:0:0:2 0:1:3:1 3:1:2:0 2:1:1:3 1:1:0:2 \
    0:2:1:3 0:3:3:1
expect "ncv4 graph: AllReduce verifies" 0 "result +verified" -- "$R" "$TMP/ncv4-ar.xml"
# without the graph the ring search finds other orders on this PCI switch
expect "ncv4 without the graph: the search's rings" 0 "rings? found" -- \
    "$S" --algo nccl "$TMP/ncv4.json" --collective allreduce --size 1M -o "$TMP/ncv4-search.xml"
expect "ncv4 graph: AllGather at 64 KiB verifies" 0 "" -- \
    "$S" --algo nccl "$TMP/ncv4.json" --graph "$G/azure-ncv4-graph.xml" --collective allgather \
    --size 64K -o "$TMP/ncv4-ag.xml"
expect "ncv4 graph: AllGather runs" 0 "result +verified" -- "$R" "$TMP/ncv4-ag.xml"
expect "ncv4 graph: AllToAll says the channels are unused" 0 "channels are not used" -- \
    "$S" --algo nccl "$TMP/ncv4.json" --graph "$G/azure-ncv4-graph.xml" --collective alltoall \
    -o "$TMP/ncv4-a2a.xml"
# two nodes from a one-node graph: the last GPU of node 0 (3) sends to node 1's first (4)
expect "ncv4 graph on two nodes: nodes joined by the GPUs' own NICs" 0 "names no NIC" -- \
    "$S" --algo nccl "$TMP/ncv4-x2.json" --graph "$G/azure-ncv4-graph.xml" \
    --collective allreduce --size 1M -o "$TMP/ncv4-x2.xml"
has "ncv4 graph on two nodes: ring 0 1 2 3 4 5 6 7, ring 0 3 2 1 4 7 6 5" "$TMP/ncv4-x2.xml" \
    3:0:4:2 4:0:5:3 7:0:0:6 1:1:4:2 4:1:7:1 5:1:0:6
expect "ncv4 graph on two nodes verifies" 0 "result +verified" -- "$R" "$TMP/ncv4-x2.xml"

# --- issue 1406: one GPU per node, NIC 0 in and out -----------------------
expect "issue 1406 graph: two nodes of one GPU" 0 "1 channel of .*nccl-issue-1406-graph.xml" -- \
    "$S" --algo nccl "$TMP/one-x2.json" --graph "$G/nccl-issue-1406-graph.xml" \
    --collective allreduce --size 1M -o "$TMP/i1406.xml"
has "issue 1406 graph: 0 and 1 exchange on both channels" "$TMP/i1406.xml" 0:0:1:1 1:0:0:0 0:1:1:1
expect "issue 1406 graph verifies" 0 "result +verified" -- "$R" "$TMP/i1406.xml"

# --- issue 524: NIC 3 in, NIC 0 out; its tree graph (pattern TREE) --------
expect "issue 524 graph: the NICs it names differ from the GPUs' own here" 0 \
    "2 channels \(first 0\) name NICs other than their end GPUs' own" -- \
    "$S" --algo nccl "$TMP/four-x2.json" --graph "$G/nccl-issue-524-graph.xml" \
    --collective allreduce --size 1M -o "$TMP/i524.xml"
has "issue 524 graph: node 0's last GPU (3) sends to node 1's first (4), 7 to 0" "$TMP/i524.xml" \
    3:0:4:2 4:0:5:3 7:0:0:6
expect "issue 524 graph verifies" 0 "result +verified" -- "$R" "$TMP/i524.xml"
expect "issue 524 graph: tree at 4 KiB" 0 "nccl at 4096 bytes: tree LL" -- \
    "$S" --algo nccl "$TMP/four-x2.json" --graph "$G/nccl-issue-524-graph.xml" \
    --collective allreduce --size 4K -o "$TMP/i524-tree.xml"
# tree channel 0: chains 0-1-2-3 and 4-5-6-7, node 1's head (4) under node 0's (0)
has "issue 524 tree: chains inside the nodes, 4 under 0" "$TMP/i524-tree.xml" \
    0:0:1:1 0:0:4:4 4:0:0:5 1:0:0:2 3:0:2:2
expect "issue 524 tree verifies" 0 "result +verified" -- "$R" "$TMP/i524-tree.xml"

# --- refusals: exit 2, FILE:LINE: element, nothing written ----------------
bad() {     # bad NAME REGEX TOPO GRAPH-TEXT
    local name=$1 re=$2 topo=$3
    printf '%s\n' "$4" > "$TMP/bad.xml"
    rm -f "$TMP/bad-out.xml"
    expect "$name" 2 "$re" -- "$S" --algo nccl "$topo" --graph "$TMP/bad.xml" \
        --collective allreduce -o "$TMP/bad-out.xml"
    if [ -e "$TMP/bad-out.xml" ]; then echo "not ok - $name: wrote the output"; fi
}
HEAD='<graphs version="1">
<graph id="0" pattern="4" crossnic="0" nchannels="1" speedintra="12" speedinter="12" typeintra="SYS" typeinter="PIX" samechannels="0">'
bad "a gpu dev out of range" "bad.xml:4: gpu: dev=8: a node of .* has 4 GPUs" "$TMP/ncv4.json" \
"$HEAD
<channel>
<gpu dev=\"0x8\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/>
</channel></graph></graphs>"
bad "a ring visiting a GPU twice" "bad.xml:4: gpu: dev=1: channel 0 lists GPU 1 twice" \
    "$TMP/ncv4.json" "$HEAD
<channel>
<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"1\"/><gpu dev=\"3\"/>
</channel></graph></graphs>"
bad "a ring missing a GPU" "bad.xml:3: channel: channel 0 lists 3 of the 4 GPUs .*GPU 3 missing" \
    "$TMP/ncv4.json" "$HEAD
<channel>
<gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/>
</channel></graph></graphs>"
bad "a net dev the topology lacks" "bad.xml:4: net: dev=7: a node of four-gpu-x2 has 4 NICs" \
    "$TMP/four-x2.json" "$HEAD
<channel>
<net dev=\"7\"/><gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/><net dev=\"0\"/>
</channel></graph></graphs>"
bad "more ranks than the topology" "bad.xml:4: gpu: rank=9: four-gpu-x2 has 8 ranks" \
    "$TMP/four-x2.json" "$HEAD
<channel>
<gpu dev=\"0\" rank=\"9\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/>
</channel></graph></graphs>"
bad "more GPUs in a channel than a node has" "bad.xml:5: gpu: channel 0 lists more GPUs" \
    "$TMP/one-x2.json" "$HEAD
<channel>
<gpu dev=\"0\"/>
<gpu dev=\"0\"/>
</channel></graph></graphs>"
bad "nchannels that disagrees with the channels" "bad.xml:2: graph: nchannels=\"1\", but 2" \
    "$TMP/ncv4.json" "$HEAD
<channel><gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/></channel>
<channel><gpu dev=\"0\"/><gpu dev=\"1\"/><gpu dev=\"2\"/><gpu dev=\"3\"/></channel>
</graph></graphs>"
bad "a ring graph with a tree pattern" "bad.xml:2: graph: pattern=\"3\": graph 0 is the ring graph" \
    "$TMP/ncv4.json" '<graphs version="1">
<graph id="0" pattern="3" nchannels="0" speedintra="0" speedinter="0"/></graphs>'
bad "no ring graph" "bad.xml:1: graphs: no ring graph" "$TMP/ncv4.json" \
    '<graphs version="1"><graph id="1" pattern="3" nchannels="0"/></graphs>'
bad "another version" "bad.xml:1: graphs: version=\"2\": NCCL reads version 1 only" \
    "$TMP/ncv4.json" '<graphs version="2"></graphs>'
bad "a topology dump given as the graph" "bad.xml:1: system: the root element is not <graphs>" \
    "$TMP/ncv4.json" '<system version="1"></system>'
bad "malformed XML" "bad.xml:[0-9]+: graph: " "$TMP/ncv4.json" '<graphs version="1">
<graph id="0"'
# NDv2's cube mesh has no link between GPUs 0 and 6
bad "consecutive GPUs with no link" "bad.xml:3: channel: channel 0: GPUs 0 and 6 follow each other" \
    "$ROOT/topologies/ndv2-x1.json" '<graphs version="1">
<graph id="0" pattern="4" nchannels="1" speedintra="1" speedinter="1">
<channel><gpu dev="0"/><gpu dev="6"/><gpu dev="7"/><gpu dev="5"/><gpu dev="4"/><gpu dev="1"/><gpu dev="3"/><gpu dev="2"/></channel>
</graph></graphs>'
expect "a graph's gpu ranks from another node" 2 "rank=4 is not on the first node" -- \
    "$S" --algo nccl "$TMP/four-x2.json" --graph /dev/stdin --collective allreduce \
    -o "$TMP/x.xml" <<<'<graphs version="1"><graph id="0" pattern="4" nchannels="1" speedintra="1" speedinter="1"><channel><gpu dev="0" rank="4"/></channel></graph></graphs>'

# --- the option table: --graph belongs to --algo nccl ---------------------
expect "--graph with --algo ring is refused by the mode check" 2 \
    "--graph is for --algo nccl, not --algo baselines" -- \
    "$S" --algo ring "$TMP/ncv4.json" --graph "$G/azure-ncv4-graph.xml" --collective allreduce \
    -o "$TMP/x.xml"
expect "--graph in sketch mode is refused" 2 "--graph is for --algo nccl, not sketch mode" -- \
    "$S" "$ROOT/sketches/ndv2-x1-sk-1.json" "$ROOT/topologies/ndv2-x1.json" \
    --graph "$G/azure-ncv4-graph.xml" -o "$TMP/x.xml"
expect "--help lists --graph" 0 "--algo nccl TOPO.json --graph GRAPH.xml" -- "$S" --help
expect "-o onto the graph is refused" 2 "is the graph" -- \
    "$S" --algo nccl "$TMP/ncv4.json" --graph "$TMP/bad.xml" --collective allreduce \
    -o "$TMP/bad.xml"

# --json names the graph the channels came from (null without one)
expect "--json: nccl.graph names the file" 0 '"graph":"[^"]*azure-ncv4-graph.xml"' -- \
    "$S" --algo nccl "$TMP/ncv4.json" --graph "$G/azure-ncv4-graph.xml" --collective allreduce \
    -o "$TMP/j.xml" --json
expect "--json: nccl.graph is null without --graph" 0 '"graph":null' -- \
    "$S" --algo nccl "$TMP/ncv4.json" --collective allreduce -o "$TMP/j.xml" --json
