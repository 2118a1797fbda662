#!/usr/bin/env bash
# gen_big.sh DIR — write the corpus inputs too big to commit into DIR.
#
# Each holds one 100 MB value (104857600 bytes of 'a'): an attribute of a
# schedule (on <algo> line 1 and, unknown to the reader, on a <tb> of line
# 3) and a string of a sketch and of a topology.  tests/bad/EXPECT names
# them gen/<file>; tests/cli/test_bad.sh calls this with a temporary DIR.
set -eu
dir=${1:?usage: gen_big.sh DIR}
mkdir -p "$dir"
big() { head -c 104857600 /dev/zero | tr '\0' a; }
{
    printf '<algo name="'; big
    printf '" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">\n'
    printf '</algo>\n'
} >"$dir/big-name.xml"
{
    printf '<algo name="big" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">\n'
    printf '  <gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">\n'
    printf '    <tb id="0" send="1" recv="1" chan="0" note="'; big; printf '">\n'
    printf '    </tb>\n  </gpu>\n</algo>\n'
} >"$dir/big-attr.xml"
{
    printf '{\n  "name": "big",\n  "description": "'; big; printf '",\n  "nnodes": 1\n}\n'
} >"$dir/big-string-sketch.json"
{
    printf '{\n  "name": "big",\n  "description": "'; big; printf '",\n  "nodes": 1\n}\n'
} >"$dir/big-string-topo.json"
