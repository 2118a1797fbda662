#!/usr/bin/env python3
"""gen_case_study.py — write the chip/cluster case study's nine examples as
MSCCL XML schedules (schedules/cs-*.xml).

The case study (docs/design.md §4) reduces 256-byte [C, D] i32 tiles over 4 chips
and over 2 clusters: ReduceScatter, AllGather, the two composed, a direct
(cyclic) AllReduce, a butterfly AllReduce on chips, and the cluster swap
AllReduce.  One chunk here is one tile, so a file made for nchunksperloop N
runs at size N * 256 bytes.

Every schedule is built as plain data, then checked before anything is
written: structure and runtime rules (dense ids, one tb per channel and peer,
buffer bounds, send/recv pairing with equal counts, hasdep on every
depended-on step), a happens-before analysis (no deadlock, no two tbs of a
rank touching one chunk unordered when one writes, no read of an unwritten
output chunk) and a symbolic run that checks the collective's result.  A
schedule failing any check stops the script before it writes a file.

The output carries no topology; the project's tools add it afterwards.
Output is deterministic: the same bytes every run.

Usage: python3 scripts/gen_case_study.py [--outdir DIR] [--quiet]
"""

import argparse
import collections
import os
import sys

CHUNK_BYTES = 256                       # one [C, D] i32 tile: 8 * 8 * 4

SEND_TYPES = {"s", "rcs", "rrs", "rrcs"}
RECV_TYPES = {"r", "rcs", "rrs", "rrc", "rrcs"}
REDUCE_TYPES = {"rrs", "rrc", "rrcs", "re"}
READS_SRC = {"s", "rrs", "rrc", "rrcs", "cpy", "re"}
WRITES_DST = {"r", "rcs", "rrc", "rrcs", "cpy", "re"}
STEP_TYPES = SEND_TYPES | RECV_TYPES | {"cpy", "re", "nop"}

MAX_STEPS_PER_TB = 64                   # the newer executor's limit (legacy: 256)
MAX_CNT = 72                            # cnt must be below this
MAX_DEPID = 127
MAX_OUTSTANDING = 8                     # unreceived sends per connection


# ---------------------------------------------------------------- the model

class Step:
    def __init__(self, typ, srcbuf, srcoff, dstbuf, dstoff, cnt, dep):
        self.type = typ
        self.srcbuf, self.srcoff = srcbuf, srcoff
        self.dstbuf, self.dstoff = dstbuf, dstoff
        self.cnt = cnt
        self.dep = dep                  # (tb id, step index) or None
        self.hasdep = 0


class Tb:
    def __init__(self, tid, send, recv, chan):
        self.id, self.send, self.recv, self.chan = tid, send, recv, chan
        self.steps = []


class Gpu:
    def __init__(self, rank, i_chunks, o_chunks, s_chunks):
        self.id = rank
        self.chunks = {"i": i_chunks, "o": o_chunks, "s": s_chunks}
        self.tbs = []


def coll_shape(coll, n, c):
    """Per-rank (input, output) chunk counts, as src/model/collective.c."""
    if coll == "allgather":
        return c // n, c
    if coll == "reduce_scatter":
        return c, c // n
    return c, c


class Sched:
    """One schedule under construction.  Steps refer to each other by
    (rank, tb id, step index)."""

    def __init__(self, filename, name, coll, ngpus, nchunks):
        self.filename, self.name, self.coll = filename, name, coll
        self.ngpus, self.nchunks = ngpus, nchunks
        i_chunks, o_chunks = coll_shape(coll, ngpus, nchunks)
        self.gpus = [Gpu(r, i_chunks, o_chunks, 0) for r in range(ngpus)]
        self.expect_identical = None    # f32 replicas identical? (AllReduce)

    def peer_tbs(self, rank, peers, chan=0):
        """Create one tb per peer (send=recv=peer), in ascending peer order."""
        for q in sorted(set(peers)):
            g = self.gpus[rank]
            g.tbs.append(Tb(len(g.tbs), q, q, chan))

    def local_tb(self, rank, chan=0):
        g = self.gpus[rank]
        g.tbs.append(Tb(len(g.tbs), -1, -1, chan))
        return g.tbs[-1].id

    def tb_of_peer(self, rank, peer, chan=0):
        for tb in self.gpus[rank].tbs:
            if tb.chan == chan and peer >= 0 and (tb.send == peer or tb.recv == peer):
                return tb
        raise AssertionError("%s: rank %d has no tb for peer %d" % (self.filename, rank, peer))

    def _append(self, rank, tb, typ, src, dst, cnt, after):
        dep = None
        if after is not None:
            arank, atb, astep = after
            assert arank == rank, "dependencies stay within one rank"
            if atb != tb.id:            # within one tb program order suffices
                self.gpus[rank].tbs[atb].steps[astep].hasdep = 1
                dep = (atb, astep)
            else:
                assert astep < len(tb.steps)
        tb.steps.append(Step(typ, src[0], src[1], dst[0], dst[1], cnt, dep))
        return (rank, tb.id, len(tb.steps) - 1)

    def send(self, rank, peer, src, remote_dst, cnt=1, after=None):
        """rank sends its chunk src=(buf, off) to peer, landing at remote_dst."""
        return self._append(rank, self.tb_of_peer(rank, peer), "s", src, remote_dst, cnt, after)

    def recv(self, rank, peer, dst, remote_src, cnt=1, after=None):
        """dst = what peer sent (remote_src names it, for the record)."""
        return self._append(rank, self.tb_of_peer(rank, peer), "r", remote_src, dst, cnt, after)

    def recv_reduce(self, rank, peer, local_src, dst, cnt=1, after=None):
        """dst = received + local_src."""
        return self._append(rank, self.tb_of_peer(rank, peer), "rrc", local_src, dst, cnt, after)

    def copy(self, rank, tb_id, src, dst, cnt=1, after=None):
        return self._append(rank, self.gpus[rank].tbs[tb_id], "cpy", src, dst, cnt, after)


# --------------------------------------------------------- the nine examples

def chip_reduce_scatter_steps(sc, out_off):
    """The chip ReduceScatter on 4 chips: shuffle chain k (target t takes
    source (t+k)%4, B coordinate t) is the identity for k = 0 and a transfer
    for k = 1..3; chip s then adds the routed values in chain order:
    o = round1 + i[s], o = round2 + o, o = round3 + o.  The result lands at
    o[out_off(s)].  Returns, per rank, the reference of its last add."""
    n = sc.ngpus
    for p in range(n):                                  # all sends first
        for k in range(1, n):
            t = (p - k) % n                             # chip t takes source p in chain k
            sc.send(p, t, ("i", t), ("o", out_off(t)))
    last = []
    for s in range(n):
        prev = None
        for k in range(1, n):
            src = (s + k) % n
            local = ("i", s) if k == 1 else ("o", out_off(s))
            prev = sc.recv_reduce(s, src, local, ("o", out_off(s)), after=prev)
        last.append(prev)
    return last


def chip_all_gather_steps(sc, out_off_src, ready=None):
    """Every chip's shard to every other chip; the shard of chip p is
    (buf, off) = out_off_src(p) and lands at o[p] everywhere.  ready[p], if
    given, is the step each send must follow."""
    n = sc.ngpus
    for p in range(n):
        for q in range(n):
            if q != p:
                sc.send(p, q, out_off_src(p), ("o", p), after=ready[p] if ready else None)
    for p in range(n):
        for q in range(n):
            if q != p:
                sc.recv(p, q, ("o", q), out_off_src(q))


def chip_reducescatter():
    sc = Sched("cs-chip-reducescatter.xml",
               "case study chip ReduceScatter: 4 chips, 3 shuffle-slice transfers per chip, "
               "3 chained adds per chip",
               "reduce_scatter", 4, 4)
    for p in range(4):
        sc.peer_tbs(p, [q for q in range(4) if q != p])
    chip_reduce_scatter_steps(sc, lambda s: 0)
    return sc


def chip_allgather():
    sc = Sched("cs-chip-allgather.xml",
               "case study chip AllGather: 4 chips, one broadcast of every shard plus the local copy",
               "allgather", 4, 4)
    for p in range(4):
        sc.peer_tbs(p, [q for q in range(4) if q != p])
    chip_all_gather_steps(sc, lambda p: ("i", 0))
    for p in range(4):
        sc.copy(p, sc.local_tb(p), ("i", 0), ("o", p))
    return sc


def chip_rs_ag():
    sc = Sched("cs-chip-rs-ag.xml",
               "case study chip ReduceScatter then AllGather as one AllReduce: 4 chips, "
               "each shard reduced once on its owner",
               "allreduce", 4, 4)
    for p in range(4):
        sc.peer_tbs(p, [q for q in range(4) if q != p])
    last = chip_reduce_scatter_steps(sc, lambda s: s)
    chip_all_gather_steps(sc, lambda p: ("o", p), ready=last)
    sc.expect_identical = True
    return sc


def chip_allreduce_direct():
    sc = Sched("cs-chip-allreduce-direct.xml",
               "case study chip direct AllReduce: 4 chips, cyclic shuffles [1,2,3,0] [2,3,0,1] "
               "[3,0,1,2], adds sum01 sum012 sum",
               "allreduce", 4, 1)
    n = 4
    for p in range(n):
        sc.peer_tbs(p, [q for q in range(n) if q != p])
    # Shuffle k as a permutation: target p takes source perm_k[p] = (p+k)%4.
    perms = {k: [(t + k) % n for t in range(n)] for k in range(1, n)}
    assert perms[1] == [1, 2, 3, 0] and perms[2] == [2, 3, 0, 1] and perms[3] == [3, 0, 1, 2]
    for k in range(1, n):                               # round k: all sends
        for t in range(n):
            sc.send(perms[k][t], t, ("i", 0), ("o", 0))
    for p in range(n):
        # sum01 = round0 + round1; sum012 = round2 + sum01; sum = round3 + sum012
        prev = sc.recv_reduce(p, perms[1][p], ("i", 0), ("o", 0))
        prev = sc.recv_reduce(p, perms[2][p], ("o", 0), ("o", 0), after=prev)
        sc.recv_reduce(p, perms[3][p], ("o", 0), ("o", 0), after=prev)
    sc.expect_identical = False
    return sc


def chip_allreduce_butterfly():
    sc = Sched("cs-chip-allreduce-butterfly.xml",
               "case study chip butterfly AllReduce: 4 chips, XOR partners [1,0,3,2] then "
               "[2,3,0,1], one add per round",
               "allreduce", 4, 1)
    n = 4
    for p in range(n):
        sc.peer_tbs(p, [p ^ 1, p ^ 2])
    assert [p ^ 1 for p in range(n)] == [1, 0, 3, 2] and [p ^ 2 for p in range(n)] == [2, 3, 0, 1]
    first = []
    for p in range(n):                                  # round 1: swap partials
        sc.send(p, p ^ 1, ("i", 0), ("o", 0))
    for p in range(n):                                  # first = swapped + partials
        first.append(sc.recv_reduce(p, p ^ 1, ("i", 0), ("o", 0)))
    for p in range(n):                                  # round 2: swap the round-1 sums
        sc.send(p, p ^ 2, ("o", 0), ("o", 0), after=first[p])
    for p in range(n):                                  # sum = swapped + first
        sc.recv_reduce(p, p ^ 2, ("o", 0), ("o", 0))
    sc.expect_identical = True                          # (a+b)+(c+d) on every chip
    return sc


def cluster_reducescatter():
    sc = Sched("cs-cluster-reducescatter.xml",
               "case study cluster ReduceScatter: 2 clusters, one swap of the other shard, one add",
               "reduce_scatter", 2, 2)
    for c in range(2):
        sc.peer_tbs(c, [1 - c])
    for c in range(2):
        sc.send(c, 1 - c, ("i", 1 - c), ("o", 0))
    for c in range(2):
        sc.recv_reduce(c, 1 - c, ("i", c), ("o", 0))
    return sc


def cluster_allgather():
    sc = Sched("cs-cluster-allgather.xml",
               "case study cluster AllGather: 2 clusters, one swap of the shards plus the local copy",
               "allgather", 2, 2)
    for c in range(2):
        sc.peer_tbs(c, [1 - c])
    for c in range(2):
        sc.send(c, 1 - c, ("i", 0), ("o", c))
    for c in range(2):
        sc.recv(c, 1 - c, ("o", 1 - c), ("i", 0))
    for c in range(2):
        sc.copy(c, sc.local_tb(c), ("i", 0), ("o", c))
    return sc


def cluster_rs_ag():
    sc = Sched("cs-cluster-rs-ag.xml",
               "case study cluster ReduceScatter then AllGather as one AllReduce: 2 clusters, "
               "each shard reduced once on its owner",
               "allreduce", 2, 2)
    for c in range(2):
        sc.peer_tbs(c, [1 - c])
    for c in range(2):
        sc.send(c, 1 - c, ("i", 1 - c), ("o", 1 - c))
    for c in range(2):
        sc.recv_reduce(c, 1 - c, ("i", c), ("o", c))
    for c in range(2):                                  # same tb: follows the add
        sc.send(c, 1 - c, ("o", c), ("o", c))
    for c in range(2):
        sc.recv(c, 1 - c, ("o", 1 - c), ("o", 1 - c))
    sc.expect_identical = True
    return sc


def cluster_allreduce():
    sc = Sched("cs-cluster-allreduce.xml",
               "case study cluster AllReduce: 2 clusters, one swap of the partials, one add",
               "allreduce", 2, 1)
    for c in range(2):
        sc.peer_tbs(c, [1 - c])
    for c in range(2):
        sc.send(c, 1 - c, ("i", 0), ("o", 0))
    for c in range(2):
        sc.recv_reduce(c, 1 - c, ("i", 0), ("o", 0))
    sc.expect_identical = True                          # a+b and b+a round alike
    return sc


BUILDERS = [chip_reducescatter, chip_allgather, chip_rs_ag, chip_allreduce_direct,
            chip_allreduce_butterfly, cluster_reducescatter, cluster_allgather,
            cluster_rs_ag, cluster_allreduce]


# ------------------------------------------------------------------ checks

class Broken(Exception):
    pass


def need(cond, sc, msg):
    if not cond:
        raise Broken("%s: %s" % (sc.filename, msg))


def in_buffer(g, buf, off, cnt):
    return buf in g.chunks and 0 <= off and off + cnt <= g.chunks[buf]


def check_structure(sc):
    """Ids, peers, limits, bounds and dependency targets."""
    need(len(sc.name) <= 255 and '"' not in sc.name and "<" not in sc.name and "&" not in sc.name,
         sc, "name must be a plain attribute value under 256 characters")
    i_chunks, o_chunks = coll_shape(sc.coll, sc.ngpus, sc.nchunks)
    need(sc.coll == "allreduce" or sc.nchunks % sc.ngpus == 0, sc, "nchunksperloop vs ngpus")
    for r, g in enumerate(sc.gpus):
        need(g.id == r, sc, "gpu ids dense")
        need(g.chunks["i"] == i_chunks and g.chunks["o"] == o_chunks, sc,
             "rank %d buffer sizes do not match %s" % (r, sc.coll))
        seen_send, seen_recv = set(), set()
        need(len(g.tbs) - 1 <= MAX_DEPID, sc, "too many tbs for depid")
        for t, tb in enumerate(g.tbs):
            where = "rank %d tb %d" % (r, t)
            need(tb.id == t, sc, where + ": tb ids dense from 0")
            need(tb.chan == 0, sc, where + ": one channel")
            for peer, seen, what in ((tb.send, seen_send, "send"), (tb.recv, seen_recv, "recv")):
                if peer == -1:
                    continue
                need(0 <= peer < sc.ngpus and peer != r, sc, where + ": bad %s peer" % what)
                need((tb.chan, peer) not in seen, sc, where + ": second tb on (chan, %s peer)" % what)
                seen.add((tb.chan, peer))
            need(1 <= len(tb.steps) <= MAX_STEPS_PER_TB, sc, where + ": step count")
            for k, st in enumerate(tb.steps):
                w = "%s step %d" % (where, k)
                need(st.type in STEP_TYPES and st.type != "nop", sc, w + ": step type")
                need(1 <= st.cnt < MAX_CNT, sc, w + ": cnt")
                need(st.type not in SEND_TYPES or tb.send >= 0, sc, w + ": sends from a tb with no send peer")
                need(st.type not in RECV_TYPES or tb.recv >= 0, sc, w + ": receives in a tb with no recv peer")
                # Both operands always name a real chunk range (the runtime
                # parses them even where the step ignores one); all ranks
                # share buffer sizes, so the remote side's names fit too.
                need(in_buffer(g, st.srcbuf, st.srcoff, st.cnt), sc, w + ": src out of bounds")
                need(in_buffer(g, st.dstbuf, st.dstoff, st.cnt), sc, w + ": dst out of bounds")
                if st.dep is not None:
                    dt, ds = st.dep
                    need(0 <= dt < len(g.tbs) and dt != t, sc, w + ": depid")
                    need(0 <= ds < len(g.tbs[dt].steps), sc, w + ": deps")
                    need(any(x.hasdep for x in g.tbs[dt].steps[ds:]), sc,
                         w + ": depends on tb %d step %d but no hasdep there" % (dt, ds))
        # Every hasdep marks a step something waits for (no stray flags).
        waited = {st.dep for tb in g.tbs for st in tb.steps if st.dep is not None}
        for t, tb in enumerate(g.tbs):
            for k, st in enumerate(tb.steps):
                need(not st.hasdep or (t, k) in waited, sc, "rank %d tb %d step %d: stray hasdep" % (r, t, k))


def connections(sc):
    """{(chan, A, B): ([A's sending steps], [B's receiving steps])} as
    (rank, tb, step) references, each list in step order."""
    conns = collections.defaultdict(lambda: ([], []))
    for g in sc.gpus:
        for tb in g.tbs:
            for k, st in enumerate(tb.steps):
                if st.type in SEND_TYPES:
                    conns[(tb.chan, g.id, tb.send)][0].append((g.id, tb.id, k))
                if st.type in RECV_TYPES:
                    conns[(tb.chan, tb.recv, g.id)][1].append((g.id, tb.id, k))
    return conns


def step_at(sc, ref):
    r, t, k = ref
    return sc.gpus[r].tbs[t].steps[k]


def check_pairing(sc, conns):
    """k-th send pairs with the k-th receive on each connection, same cnt;
    the two ends name the same destination chunk."""
    for (chan, a, b), (sends, recvs) in sorted(conns.items()):
        where = "connection chan %d %d->%d" % (chan, a, b)
        need(len(sends) == len(recvs), sc, "%s: %d sends, %d receives" % (where, len(sends), len(recvs)))
        need(len(sends) <= MAX_OUTSTANDING, sc, where + ": more sends than the runtime buffers")
        for k, (sref, rref) in enumerate(zip(sends, recvs)):
            s, r = step_at(sc, sref), step_at(sc, rref)
            need(s.cnt == r.cnt, sc, "%s: transfer %d cnt %d vs %d" % (where, k, s.cnt, r.cnt))
            if s.type == "s" and r.type in WRITES_DST:
                need((s.dstbuf, s.dstoff) == (r.dstbuf, r.dstoff), sc,
                     "%s: transfer %d ends disagree on the destination" % (where, k))
            if s.type == "s" and r.type == "r":
                need((s.srcbuf, s.srcoff) == (r.srcbuf, r.srcoff), sc,
                     "%s: transfer %d ends disagree on the source" % (where, k))


def happens_before(sc, conns):
    """Nodes in a topological order and, per node, the set of nodes that
    happen before it (as an int bitset).  Raises on a cycle (deadlock)."""
    nodes = [(g.id, tb.id, k) for g in sc.gpus for tb in g.tbs for k in range(len(tb.steps))]
    index = {n: i for i, n in enumerate(nodes)}
    preds = [[] for _ in nodes]
    for g in sc.gpus:
        for tb in g.tbs:
            for k, st in enumerate(tb.steps):
                me = index[(g.id, tb.id, k)]
                if k > 0:
                    preds[me].append(index[(g.id, tb.id, k - 1)])
                if st.dep is not None:
                    preds[me].append(index[(g.id, st.dep[0], st.dep[1])])
    for sends, recvs in conns.values():
        for sref, rref in zip(sends, recvs):
            preds[index[rref]].append(index[sref])
    succs = [[] for _ in nodes]
    indeg = [len(p) for p in preds]
    for v, ps in enumerate(preds):
        for u in ps:
            succs[u].append(v)
    ready = [v for v in range(len(nodes)) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop(0)
        order.append(v)
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    need(len(order) == len(nodes), sc, "happens-before has a cycle: the schedule deadlocks")
    anc = [0] * len(nodes)
    for v in order:
        for u in preds[v]:
            anc[v] |= anc[u] | (1 << u)
    return nodes, index, order, anc


def accesses(st):
    """(buf, off, is_write) for every chunk a step touches locally."""
    out = []
    if st.type in READS_SRC:
        out += [(st.srcbuf, st.srcoff + j, False) for j in range(st.cnt)]
    if st.type == "re":
        out += [(st.dstbuf, st.dstoff + j, False) for j in range(st.cnt)]
    if st.type in WRITES_DST:
        out += [(st.dstbuf, st.dstoff + j, True) for j in range(st.cnt)]
    return out


def check_races(sc, nodes, index, anc):
    """Out of place (as the files declare): two tbs touching one chunk, one
    writing, must be ordered; o and s chunks are written before being read."""
    by_slot = collections.defaultdict(list)
    for (r, t, k) in nodes:
        for buf, off, wr in accesses(sc.gpus[r].tbs[t].steps[k]):
            by_slot[(r, buf, off)].append((index[(r, t, k)], t, wr))
    for (r, buf, off), acc in sorted(by_slot.items()):
        for x in range(len(acc)):
            a, ta, wa = acc[x]
            for y in range(x + 1, len(acc)):
                b, tb_, wb = acc[y]
                if ta == tb_ or not (wa or wb):
                    continue
                need(anc[b] >> a & 1 or anc[a] >> b & 1, sc,
                     "rank %d: %s[%d] touched unordered by tbs %d and %d" % (r, buf, off, ta, tb_))
            if not wa and buf != "i":
                need(any(w and (anc[a] >> v & 1) for v, _, w in acc), sc,
                     "rank %d: %s[%d] read before anything writes it" % (r, buf, off))


def canon(e):
    """Expression with each sum's operands sorted: IEEE addition is
    commutative, so equal canonical forms round identically."""
    if e[0] == "in":
        return e
    a, b = sorted([canon(e[1]), canon(e[2])])
    return ("+", a, b)


def leaves(e, acc):
    if e[0] == "in":
        acc[e] += 1
    else:
        leaves(e[1], acc)
        leaves(e[2], acc)
    return acc


def run_symbolic(sc, nodes, order, conns):
    """Run the steps in a happens-before order with symbolic values and
    check the postcondition.  Returns (transfers, adds, replicas identical)."""
    mem = {}
    for g in sc.gpus:
        for j in range(g.chunks["i"]):
            mem[(g.id, "i", j)] = ("in", g.id, j)
    pair_of = {}
    for sends, recvs in conns.values():
        for sref, rref in zip(sends, recvs):
            pair_of[rref] = sref
    sent = {}
    transfers = adds = 0

    def get(r, buf, off):
        key = (r, buf, off)
        need(key in mem, sc, "rank %d reads %s[%d] before it holds data" % key)
        return mem[key]

    for v in order:
        r, t, k = nodes[v]
        st = sc.gpus[r].tbs[t].steps[k]
        for j in range(st.cnt):
            src = lambda: get(r, st.srcbuf, st.srcoff + j)
            got = sent[(pair_of[(r, t, k)], j)] if st.type in RECV_TYPES else None
            if st.type in ("rrs", "rrc", "rrcs"):
                val = ("+", got, src())
            elif st.type == "re":
                val = ("+", get(r, st.dstbuf, st.dstoff + j), src())
            elif st.type in ("r", "rcs"):
                val = got
            else:                                       # s, cpy
                val = src()
            if st.type in WRITES_DST:
                mem[(r, st.dstbuf, st.dstoff + j)] = val
            if st.type in SEND_TYPES:
                sent[((r, t, k), j)] = val
        transfers += st.type in SEND_TYPES
        adds += st.type in REDUCE_TYPES

    n, c = sc.ngpus, sc.nchunks
    _, o_chunks = coll_shape(sc.coll, n, c)
    per = c // n
    for r in range(n):
        for j in range(o_chunks):
            if sc.coll == "allgather":
                want = collections.Counter({("in", j // per, j % per): 1})
            elif sc.coll == "reduce_scatter":
                want = collections.Counter({("in", q, r * per + j): 1 for q in range(n)})
            else:
                want = collections.Counter({("in", q, j): 1 for q in range(n)})
            got = leaves(get(r, "o", j), collections.Counter())
            need(got == want, sc, "rank %d o[%d] = %s, wanted %s" % (r, j, dict(got), dict(want)))
    identical = None
    if sc.coll == "allreduce":
        identical = all(canon(get(r, "o", j)) == canon(get(0, "o", j))
                        for r in range(n) for j in range(o_chunks))
        need(sc.expect_identical is None or identical == sc.expect_identical, sc,
             "replicas identical is %s, the design says %s" % (identical, sc.expect_identical))
    return transfers, adds, identical


def check(sc):
    check_structure(sc)
    conns = connections(sc)
    check_pairing(sc, conns)
    nodes, index, order, anc = happens_before(sc, conns)
    check_races(sc, nodes, index, anc)
    return run_symbolic(sc, nodes, order, conns)


# ------------------------------------------------------------------ output

def to_xml(sc):
    # Written for the legacy runtime (its spelling reduce_scatter), which
    # picks a file for minBytes <= n < maxBytes: every size (maxBytes 0 would
    # be never); no scratch, so nothing is allocated at init.  <taccl target>
    # tells taccl-run which loader to judge it by.
    lines = ['<algo name="%s" proto="Simple" nchannels="1" nchunksperloop="%d" ngpus="%d" '
             'coll="%s" inplace="0" outofplace="1" minBytes="0" maxBytes="9223372036854775807">'
             % (sc.name, sc.nchunks, sc.ngpus, sc.coll),
             '  <taccl target="msccl" generator="gen_case_study.py"/>']
    for g in sc.gpus:
        lines.append('  <gpu id="%d" i_chunks="%d" o_chunks="%d" s_chunks="%d">'
                     % (g.id, g.chunks["i"], g.chunks["o"], g.chunks["s"]))
        for tb in g.tbs:
            lines.append('    <tb id="%d" send="%d" recv="%d" chan="%d">' % (tb.id, tb.send, tb.recv, tb.chan))
            for k, st in enumerate(tb.steps):
                depid, deps = st.dep if st.dep is not None else (-1, -1)
                lines.append('      <step s="%d" type="%s" srcbuf="%s" srcoff="%d" dstbuf="%s" '
                             'dstoff="%d" cnt="%d" depid="%d" deps="%d" hasdep="%d"/>'
                             % (k, st.type, st.srcbuf, st.srcoff, st.dstbuf, st.dstoff, st.cnt,
                                depid, deps, st.hasdep))
            lines.append("    </tb>")
        lines.append("  </gpu>")
    lines.append("</algo>")
    return "\n".join(lines) + "\n"


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description="Write the case study's nine MSCCL XML schedules.")
    ap.add_argument("--outdir", default=os.path.join(root, "schedules"),
                    help="directory to write into (default: schedules/ of the project)")
    ap.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = ap.parse_args(argv)

    built = []
    try:
        for make in BUILDERS:
            sc = make()
            built.append((sc, to_xml(sc), check(sc)))
    except Broken as e:
        print("gen_case_study: refusing to write: %s" % e, file=sys.stderr)
        return 1
    os.makedirs(args.outdir, exist_ok=True)
    for sc, text, (transfers, adds, identical) in built:
        path = os.path.join(args.outdir, sc.filename)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
        if not args.quiet:
            print("%-32s %-14s ngpus %d  chunks %d  size %5d B  transfers %2d  adds %2d%s"
                  % (sc.filename, sc.coll, sc.ngpus, sc.nchunks, sc.nchunks * CHUNK_BYTES,
                     transfers, adds,
                     "" if identical is None else "  f32 replicas identical: %s" % identical))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
