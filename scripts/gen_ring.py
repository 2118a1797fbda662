#!/usr/bin/env python3
"""gen_ring.py — write a plain ring AllGather as MSCCL XML (for the speed script).

usage: gen_ring.py NRANKS OUT.xml

One threadblock per rank sends to rank+1 and receives from rank-1: it copies
its own input into its output slot, sends it on, forwards n-2 chunks with
rcs and receives the last one.  Out of place.  Deterministic output.
"""
import sys


def ring_allgather(n):
    lines = [f'<algo name="ring_allgather_{n}" proto="Simple" nchannels="1" '
             f'nchunksperloop="{n}" ngpus="{n}" coll="allgather" inplace="0" '
             f'outofplace="1" minBytes="0" maxBytes="0">']
    for r in range(n):
        nxt, prv = (r + 1) % n, (r - 1) % n
        lines.append(f'  <gpu id="{r}" i_chunks="1" o_chunks="{n}" s_chunks="0">')
        lines.append(f'    <tb id="0" send="{nxt}" recv="{prv}" chan="0">')
        steps = [("cpy", "i", 0, "o", r), ("s", "i", 0, "o", r)]
        for k in range(1, n - 1):
            c = (r - k) % n
            steps.append(("rcs", "o", c, "o", c))
        c = (r - (n - 1)) % n
        steps.append(("r", "o", c, "o", c))
        for s, (t, sb, so, db, do) in enumerate(steps):
            lines.append(f'      <step s="{s}" type="{t}" srcbuf="{sb}" srcoff="{so}" '
                         f'dstbuf="{db}" dstoff="{do}" cnt="1" depid="-1" deps="-1" hasdep="0"/>')
        lines.append('    </tb>')
        lines.append('  </gpu>')
    lines.append('</algo>')
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = int(sys.argv[1])
    if n < 2:
        sys.exit("gen_ring.py: NRANKS must be at least 2")
    with open(sys.argv[2], "w") as f:
        f.write(ring_allgather(n))


if __name__ == "__main__":
    main()
