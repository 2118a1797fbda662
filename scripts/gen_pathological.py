#!/usr/bin/env python3
"""gen_pathological.py — write the schedules that made taccl-run's ordering
checks quadratic (issue 37), so they need not be committed.

usage: gen_pathological.py repeat [--chunks C] [--reps N] OUT.xml
       gen_pathological.py wide [--ranks R] [--tbs T] [--steps K] [--cnt C] OUT.xml

repeat  2 ranks, one threadblock each: rank 0 copies its input, sends the
        same C chunks N times and receives rank 1's input once; rank 1
        copies its input, receives the C chunks into the same output slots
        N times and sends its input once.  A correct AllGather with C
        chunks per rank (it verifies with data); N-1 of the N receives and
        their sends are dead traffic.  Every output slot of rank 1 has N
        writes in one threadblock.  Defaults C=71, N=40000 (9.4 MB).
wide    R ranks of T threadblocks of K steps each (T < R): tb t of rank r
        sends to r+t+1 and receives from r-t-1 (channel 0): a send of its
        input, then K-2 rcs (receive into output chunk 0, send it on), then
        a receive into output chunk 0, C chunks each.  So every step but the
        first of every tb writes the same C output slots of its rank:
        T*(K-1) writes per slot from T threadblocks, unordered between the
        tbs.  An AllGather with C chunks per rank that does not gather and
        races (run it with --no-data; exit 1, and none of it is dead:
        every receive feeds the chain to a last write).  Defaults R=44,
        T=16, K=251, C=71 (20.8 MB; 71 is the runtimes' largest cnt).

The files are meant for `taccl-run OUT.xml --target unlimited --no-data`
(scripts/scale.sh times them; tests/cli/test_run_cli.sh checks the verdict
of a small one).  Same arguments, same bytes out.
"""
import argparse
import sys

STEP = ('      <step s="{s}" type="{t}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
        'dstoff="{do}" cnt="{c}" depid="-1" deps="-1" hasdep="0"/>')


def header(name, n, chunks):
    return (f'<algo name="{name}" proto="Simple" nchannels="1" nchunksperloop="{n * chunks}" '
            f'ngpus="{n}" coll="allgather" inplace="0" outofplace="1" minBytes="0" maxBytes="0">')


def tb_lines(out, tid, send, recv, steps):
    out.append(f'    <tb id="{tid}" send="{send}" recv="{recv}" chan="0">')
    for s, (t, sb, so, db, do, c) in enumerate(steps):
        out.append(STEP.format(s=s, t=t, sb=sb, so=so, db=db, do=do, c=c))
    out.append('    </tb>')


def repeat(chunks, reps):
    c = chunks
    out = [header(f"pathological repeat: {reps} receives of the same {c} chunks", 2, c)]
    for r in range(2):
        peer = 1 - r
        out.append(f'  <gpu id="{r}" i_chunks="{c}" o_chunks="{2 * c}" s_chunks="0">')
        steps = [("cpy", "i", 0, "o", r * c, c)]
        if r == 0:
            steps += [("s", "i", 0, "o", 0, c)] * reps + [("r", "i", 0, "o", c, c)]
        else:
            steps += [("r", "i", 0, "o", 0, c)] * reps + [("s", "i", 0, "o", c, c)]
        tb_lines(out, 0, peer, peer, steps)
        out.append('  </gpu>')
    out.append('</algo>')
    return out


def wide(ranks, tbs, nsteps, cnt):
    out = [header(f"pathological wide: {ranks} ranks x {tbs} tbs x {nsteps} steps "
                  f"writing the same {cnt} output chunks", ranks, cnt)]
    for r in range(ranks):
        out.append(f'  <gpu id="{r}" i_chunks="{cnt}" o_chunks="{ranks * cnt}" s_chunks="0">')
        for t in range(tbs):
            d = t + 1
            steps = [("s", "i", 0, "o", 0, cnt)]
            steps += [("rcs", "o", 0, "o", 0, cnt)] * (nsteps - 2)
            steps.append(("r", "o", 0, "o", 0, cnt))
            tb_lines(out, t, (r + d) % ranks, (r - d) % ranks, steps)
        out.append('  </gpu>')
    out.append('</algo>')
    return out


def main():
    ap = argparse.ArgumentParser(prog="gen_pathological.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="kind", required=True)
    p = sub.add_parser("repeat", help="2 ranks, the same chunks received N times")
    p.add_argument("--chunks", type=int, default=71)
    p.add_argument("--reps", type=int, default=40000)
    p.add_argument("out")
    p = sub.add_parser("wide", help="R ranks x T tbs x K steps, all writing output chunk 0")
    p.add_argument("--ranks", type=int, default=44)
    p.add_argument("--tbs", type=int, default=16)
    p.add_argument("--steps", type=int, default=251)
    p.add_argument("--cnt", type=int, default=71)
    p.add_argument("out")
    a = ap.parse_args()
    if a.kind == "repeat":
        if a.chunks < 1 or a.reps < 1:
            sys.exit("gen_pathological.py: --chunks and --reps must be at least 1")
        lines = repeat(a.chunks, a.reps)
    else:
        if a.ranks < 2 or not 1 <= a.tbs < a.ranks or a.steps < 2 or a.cnt < 1:
            sys.exit("gen_pathological.py: need --ranks >= 2, 1 <= --tbs < --ranks, "
                     "--steps >= 2, --cnt >= 1")
        lines = wide(a.ranks, a.tbs, a.steps, a.cnt)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
