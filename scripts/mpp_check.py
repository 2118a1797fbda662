#!/usr/bin/env python3
"""mpp_check.py — check MSCCL++ execution plans against docs/mscclpp.md.

Why: nobody may commit MSCCL++ or a recipe that builds it, so the plans
taccl-synth writes (--target mscclpp, or -o NAME.json) are judged here
instead, by the rules docs/mscclpp.md §2-§7 states for MSCCL++ commit
1f5f065, and then run on an abstract machine that moves symbolic chunks:

  structure  every key the parser reads present and typed (§2-§4); gpus[r].id
             = r; threadblock ids 0..n-1 in order; chunk counts non-zero and
             consistent with the collective (§6)
  channels   types known; every rank-level channel id a block names exists;
             between two ranks both sides declare as many channels of a type
             (the k-th meets the k-th, §3.1)
  buffers    remote buffers owned by another rank, of a type it has, reached
             over a channel type it is connected by; every buffer_id a
             valid block-local index of the op's channel type (§3.2, §4)
  ops        known names (§5.2), fields each needs, chunk ranges inside their
             buffers, semaphore ids, the limits of §7 (64 ops per block,
             16 channels and buffers per block and type, 8 channel ids per
             op, 10 buffer refs per op, 16 semaphores per op, 1024 threads)
  threads    a nop (__syncthreads) between a one-thread op (wait, signal,
             port put, semaphore) and an all-thread data op, either way,
             anywhere since the last nop (not only the op before)
  balance    per channel pair, signals sent = waits on the other side;
             per semaphore, init + releases = acquires
  data flow  (--run, collectives only) every block run to its end on a
             machine where signals, waits and semaphores block as MSCCL++'s
             do, under several interleavings, with each put's bytes landing
             at the put ("early") or only once the receiver waited for the
             signal after it ("late"); no deadlock, no read of unwritten
             chunks, and the outputs hold what the collective says

Usage: mpp_check.py [--run] [--quiet] PLAN.json ...
Exit 0 if every plan passes, 1 if one breaks a rule (each failure on stderr
as "PLAN: rule: what"), 2 on unusable input.  Standard library only.
"""
import json
import random
import sys

TOP = {"name": str, "collective": str, "protocol": str, "inplace": bool,
       "reuse_resources": bool, "gpus": list, "num_threads_per_block": int,
       "use_double_scratch_buffer": bool, "buffer_alignment": int,
       "min_message_size": int, "max_message_size": int}
OPS = {"nop", "barrier", "signal", "rlxsignal", "wait", "rlxwait", "flush", "put",
       "pws", "pwsf", "get", "copy", "re", "res", "rre", "rres", "ppkt", "rppkt",
       "cpkt", "upkt", "repkt", "respkt", "recpkt", "recspkt", "glres", "gstore",
       "gstorepkt", "pipeline", "sem_acquire", "sem_release"}
MAX_OPERATION, MAX_CHANNEL, MAX_CHANNEL_PER_OP, MAX_BUFS_PER_OP = 64, 16, 8, 10
MAX_SEMS_PER_OP, MAX_THREADS, MAX_U64 = 16, 1024, 2**64 - 1
SIGNALS = {"signal", "rlxsignal", "pws", "pwsf"}
WAITS = {"wait", "rlxwait"}
DATA_ALL = {"copy", "re", "res", "rre", "rres", "get"}   # every thread works


class Bad(Exception):
    pass


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Checker:
    def __init__(self, path, plan):
        self.path, self.p, self.errs = path, plan, []
        self.ll = isinstance(plan, dict) and plan.get("protocol") == "LL"
        self.sbytes = {}

    def err(self, rule, msg):
        self.errs.append("%s: %s: %s" % (self.path, rule, msg))

    # ---- structure ----------------------------------------------------
    def top(self):
        p = self.p
        if not isinstance(p, dict):
            raise Bad("the plan is not a JSON object")
        for k, t in TOP.items():
            if k not in p:
                self.err("keys", "top-level key '%s' missing" % k)
            elif not (is_int(p[k]) if t is int else isinstance(p[k], t)):
                self.err("keys", "'%s' is not a %s" % (k, t.__name__))
        if self.errs:
            raise Bad("top level unusable")
        if p["num_threads_per_block"] < 1 or p["num_threads_per_block"] > MAX_THREADS:
            self.err("limits", "num_threads_per_block %d outside 1..%d" %
                     (p["num_threads_per_block"], MAX_THREADS))
        if p["buffer_alignment"] < 1:
            self.err("keys", "buffer_alignment %d" % p["buffer_alignment"])
        if not 0 <= p["min_message_size"] <= p["max_message_size"] <= MAX_U64:
            self.err("keys", "message range %d..%d" % (p["min_message_size"],
                                                         p["max_message_size"]))
        if p["protocol"] not in ("Simple", "LL"):
            self.err("keys", "protocol '%s' (MSCCL++ reads LL or anything else as Simple)"
                     % p["protocol"])

    def gpus(self):
        g = self.p["gpus"]
        self.n = len(g)
        if not self.n:
            raise Bad("no gpus")
        for r, gpu in enumerate(g):
            for k in ("id", "input_chunks", "output_chunks", "scratch_chunks"):
                if not is_int(gpu.get(k)) or gpu[k] < 0:
                    self.err("gpu", "rank %d: '%s' missing or not a count" % (r, k))
            for k in ("channels", "remote_buffers", "threadblocks"):
                if not isinstance(gpu.get(k), list):
                    self.err("gpu", "rank %d: '%s' missing or not a list" % (r, k))
            if "semaphores" in gpu and not isinstance(gpu["semaphores"], list):
                self.err("gpu", "rank %d: 'semaphores' not a list" % r)
        if self.errs:
            raise Bad("gpus unusable")
        for r, gpu in enumerate(g):
            if gpu["id"] != r:
                self.err("gpu", "gpus[%d] has id %d" % (r, gpu["id"]))
            if gpu["input_chunks"] == 0 or gpu["output_chunks"] == 0:
                self.err("chunks", "rank %d: a 0 chunk count divides by zero in the size check"
                         % r)
            for i, tb in enumerate(gpu["threadblocks"]):
                if not isinstance(tb, dict) or tb.get("id") != i:
                    self.err("threadblock", "rank %d: threadblocks[%d] has id %s" %
                             (r, i, tb.get("id") if isinstance(tb, dict) else "?"))
        c0 = g[0]
        coll, n = self.p["collective"], self.n
        for r, gpu in enumerate(g):
            if (gpu["input_chunks"], gpu["output_chunks"]) != (c0["input_chunks"],
                                                               c0["output_chunks"]):
                self.err("chunks", "rank %d has other chunk counts than rank 0" % r)
        i, o = c0["input_chunks"], c0["output_chunks"]
        want = {"allgather": o == n * i, "reducescatter": i == n * o,
                "allreduce": i == o, "alltoall": i == o and i % n == 0}
        if coll in want and not want[coll]:
            self.err("chunks", "%s with %d input and %d output chunks on %d ranks" %
                     (coll, i, o, n))

    def chunks_of(self, r, t):
        g = self.p["gpus"][r]
        return {"i": g["input_chunks"], "o": g["output_chunks"],
                "s": g["scratch_chunks"]}.get(t)

    def channels(self):
        """Rank-level channels: self.ch[r][type] = list of peers."""
        self.ch = []
        for r, gpu in enumerate(self.p["gpus"]):
            d = {"memory": [], "port": [], "switch": []}
            for c in gpu["channels"]:
                t = c.get("channel_type")
                if t in ("memory", "port"):
                    to = c.get("connected_to")
                    if not isinstance(to, list):
                        self.err("channels", "rank %d: %s entry without connected_to" % (r, t))
                        continue
                    for peer in to:
                        if not is_int(peer) or not 0 <= peer < self.n or peer == r:
                            self.err("channels", "rank %d: %s channel to %r" % (r, t, peer))
                        d[t].append(peer)
                elif t == "switch":
                    d[t].extend(c.get("rank_groups", []))
                else:
                    self.err("channels", "rank %d: channel_type %r" % (r, t))
            self.ch.append(d)
        for r in range(self.n):
            for t in ("memory", "port"):
                for p in set(self.ch[r][t]):
                    a, b = self.ch[r][t].count(p), self.ch[p][t].count(r)
                    if a != b:
                        self.err("pairing", "rank %d has %d %s channels to rank %d, which has "
                                 "%d back" % (r, a, t, p, b))

    def pair_index(self, r, t, k):
        """(peer, j): rank-level channel k of type t of r is its j-th to peer."""
        peers = self.ch[r][t]
        peer = peers[k]
        return peer, peers[:k].count(peer)

    def remote_buffers(self):
        self.rb = []
        for r, gpu in enumerate(self.p["gpus"]):
            lst = []
            for k, b in enumerate(gpu["remote_buffers"]):
                owner, t = b.get("rank"), b.get("type")
                acc = b.get("access_channel_types")
                if not is_int(owner) or not 0 <= owner < self.n or owner == r:
                    self.err("remote_buffers", "rank %d: remote buffer %d owned by %r" %
                             (r, k, owner))
                    owner = None
                if t not in ("i", "o", "s"):
                    self.err("remote_buffers", "rank %d: remote buffer %d type %r" % (r, k, t))
                elif owner is not None and not self.chunks_of(owner, t):
                    self.err("remote_buffers", "rank %d: remote buffer %d is rank %d's '%s', "
                             "which has no chunks" % (r, k, owner, t))
                if not isinstance(acc, list) or not acc or \
                        any(a not in ("memory", "port") for a in acc):
                    self.err("remote_buffers", "rank %d: remote buffer %d access types %r" %
                             (r, k, acc))
                    acc = []
                for a in acc:
                    if owner is not None and owner not in self.ch[r][a]:
                        self.err("remote_buffers", "rank %d: remote buffer %d is reached over "
                                 "%s channels, but rank %d has none to rank %d" %
                                 (r, k, a, r, owner))
                lst.append((owner, t, acc))
            self.rb.append(lst)

    # ---- blocks and ops -----------------------------------------------
    def block(self, r, tb):
        loc_ch = {"memory": [], "port": [], "switch": []}
        for c in tb.get("channels", None) if isinstance(tb.get("channels"), list) else []:
            t, ids = c.get("channel_type"), c.get("channel_ids")
            if t not in loc_ch or not isinstance(ids, list):
                self.err("threadblock", "rank %d tb %d: channels entry %r" % (r, tb["id"], c))
                continue
            for i in ids:
                if not is_int(i) or not 0 <= i < len(self.ch[r][t]):
                    self.err("threadblock", "rank %d tb %d: %s channel %r does not exist" %
                             (r, tb["id"], t, i))
                loc_ch[t].append(i)
        if "channels" not in tb:
            self.err("threadblock", "rank %d tb %d: 'channels' missing" % (r, tb["id"]))
        loc_buf = {"memory": [], "port": []}
        for c in tb.get("remote_buffer_refs", []):
            t, ids = c.get("access_channel_type"), c.get("remote_buffer_ids")
            if t not in loc_buf or not isinstance(ids, list):
                self.err("threadblock", "rank %d tb %d: remote_buffer_refs entry %r" %
                         (r, tb["id"], c))
                continue
            for i in ids:
                if not is_int(i) or not 0 <= i < len(self.rb[r]):
                    self.err("threadblock", "rank %d tb %d: remote buffer %r does not exist" %
                             (r, tb["id"], i))
                elif t not in self.rb[r][i][2]:
                    self.err("threadblock", "rank %d tb %d: remote buffer %d is not reached "
                             "over %s" % (r, tb["id"], i, t))
                loc_buf[t].append(i)
        for t in ("memory", "port", "switch"):
            if len(loc_ch[t]) > MAX_CHANNEL:
                self.err("limits", "rank %d tb %d: %d %s channels (MAX_CHANNEL %d)" %
                         (r, tb["id"], len(loc_ch[t]), t, MAX_CHANNEL))
        for t in ("memory", "port"):
            if len(loc_buf[t]) > MAX_CHANNEL:
                self.err("limits", "rank %d tb %d: %d %s remote buffers (MAX_CHANNEL %d)" %
                         (r, tb["id"], len(loc_buf[t]), t, MAX_CHANNEL))
        self.loc_switch = loc_ch["switch"]
        ops = tb.get("ops")
        if not isinstance(ops, list):
            self.err("threadblock", "rank %d tb %d: 'ops' missing" % (r, tb["id"]))
            return None
        nops = len(ops) + sum(len(o.get("ops", [])) for o in ops if o.get("name") == "pipeline")
        if nops > MAX_OPERATION:
            self.err("limits", "rank %d tb %d: %d operations (MAX_OPERATION %d)" %
                     (r, tb["id"], nops, MAX_OPERATION))
        out = []
        window = []     # the ops since the last nop
        for k, op in enumerate(ops):
            o = self.op(r, tb["id"], k, op, loc_ch, loc_buf)
            if o is None:
                continue
            why = self.needs_sync(window, o)
            if why:
                a = why[0]
                self.err("threads", "rank %d tb %d op %d (%s) follows %s (%s) with no nop "
                         "between: %s" % (r, tb["id"], k, o["name"], a["name"],
                                          self.threads(a), why[1]))
            window = [] if self.threads(o) == "nop" else window + [o]
            out.append(o)
        return out

    def needs_sync(self, window, b):
        """(op, why) when op of the window (the ops since the last nop) and
        then b need a __syncthreads between them, or None.  The one-thread
        ops run on thread 0 (or thread t for channel t) while the others go
        on: a data op after a wait or an acquire would read too early, one
        after a port put could overwrite what the proxy has not read; a
        signal, port put or release after a data op would publish before
        every thread wrote; several threads releasing after thread 0 waited
        would release before it.  A one-thread op in between (a signal
        between an acquire and a put) tells the other threads nothing."""
        y = self.threads(b)
        if y == "nop":
            return None
        port_put = lambda o: o["name"] in ("pws", "pwsf") or \
            (o["name"] == "put" and o["ctype"] == "port") or o["name"] == "flush"
        publishes = b["name"] in SIGNALS | {"sem_release", "flush"} or port_put(b)
        for a in window:
            x = self.threads(a)
            if y == "all" and x != "all" and (a["name"] in WAITS | {"sem_acquire"} or
                                              port_put(a)):
                return a, "the data op may run before %s is done" % a["name"]
            if x == "all" and y != "all" and publishes:
                return a, "%s may publish before every thread's writes" % b["name"]
            if x == "one" and y == "multi" and publishes:
                return a, "threads past 0 may publish before thread 0's %s" % a["name"]
        return None

    @staticmethod
    def threads(o):
        n = o["name"]
        if n in ("nop", "barrier"):     # a barrier syncs the block's threads too
            return "nop"
        if "pkt" in n or n in ("glres", "gstore"):
            return "nop"                # packets carry flags: no sync rule checked
        if n in DATA_ALL or (n == "put" and o["ctype"] == "memory"):
            return "all"
        if n in ("sem_acquire", "sem_release"):
            return "one" if len(o["sems"]) == 1 else "multi"
        return "one" if len(o.get("chans", [])) <= 1 else "multi"

    def ref(self, r, where, x, ctype, loc_buf, pkt=False):
        """(owner, buffer, index, size); buffer "p" for packets in the
        owner's scratch.  Under LL, plain scratch is 2 x scratch_chunks
        chunks long (the runtime doubles it for packets, §6)."""
        if not isinstance(x, dict) or not is_int(x.get("index")) or not is_int(x.get("size")):
            self.err("ops", "%s: buffer reference %r" % (where, x))
            return None
        idx, size = x["index"], x["size"]
        if "type" in x:
            n = self.chunks_of(r, x["type"])
            if n is None:
                self.err("ops", "%s: buffer type %r" % (where, x["type"]))
                return None
            owner, t = r, x["type"]
        elif "buffer_id" in x:
            if ctype not in loc_buf or not is_int(x["buffer_id"]) or \
                    not 0 <= x["buffer_id"] < len(loc_buf[ctype]):
                self.err("ops", "%s: buffer_id %r is no %s remote buffer of the block" %
                         (where, x["buffer_id"], ctype))
                return None
            owner, t, _ = self.rb[r][loc_buf[ctype][x["buffer_id"]]]
            if owner is None or t not in ("i", "o", "s"):
                return None
            n = self.chunks_of(owner, t)
        elif "switch_channel_id" in x:
            sid = x["switch_channel_id"]
            if not is_int(sid) or not 0 <= sid < len(self.loc_switch):
                self.err("ops", "%s: switch_channel_id %r is no switch channel of the block" %
                         (where, sid))
                return None
            return ("switch", sid, idx, size)
        else:
            self.err("ops", "%s: buffer reference %r names no buffer" % (where, x))
            return None
        if self.ll and t == "s" and not pkt:
            n *= 2
        if pkt and t != "s":
            self.err("ops", "%s: packets outside scratch (rank %d's '%s')" % (where, owner, t))
            return None
        if size < 1 or idx < 0 or idx + size > n:
            self.err("ops", "%s: chunks %d..%d of rank %d's '%s', which has %d" %
                     (where, idx, idx + size - 1, owner, t, n))
            return None
        if self.ll and t == "s":
            lo, hi = (2 * idx, 2 * (idx + size)) if pkt else (idx, idx + size)
            self.sbytes.setdefault(owner, []).append((lo, hi, pkt, where))
        return (owner, "p" if pkt else t, idx, size)

    @staticmethod
    def is_pkt(name, ctype, side, i):
        """Whether entry i of an op's src_buff/dst_buff holds LL packets."""
        if name == "ppkt":
            return side == "dst_buff" or ctype == "port"   # a port ppkt moves packets as is
        if name == "rppkt":
            return True
        if name == "cpkt":
            return side == "dst_buff"
        if name == "gstorepkt":
            return side == "src_buff"
        if name == "upkt":
            return side == "src_buff"
        if name in ("repkt", "respkt", "recpkt", "recspkt"):
            return i >= 1
        return False

    def scratch_overlap(self):
        """Under LL a packet chunk k takes plain chunks 2k and 2k+1: plain
        and packet ranges of one rank's scratch must not share bytes."""
        for owner, lst in self.sbytes.items():
            pk = sorted((lo, hi, w) for lo, hi, p, w in lst if p)
            starts = [x[0] for x in pk]
            import bisect
            for lo, hi, p, w in lst:
                if p:
                    continue
                j = bisect.bisect_right(starts, hi - 1) - 1
                while j >= 0 and pk[j][1] > lo:
                    if pk[j][0] < hi:
                        self.err("scratch", "%s: plain scratch of rank %d shares bytes with the "
                                 "packets of %s" % (w, owner, pk[j][2]))
                        return
                    j -= 1

    def op(self, r, t, k, op, loc_ch, loc_buf):
        where = "rank %d tb %d op %d" % (r, t, k)
        name = op.get("name") if isinstance(op, dict) else None
        if name not in OPS:
            self.err("ops", "%s: name %r" % (where, name))
            return None
        o = {"name": name}
        ctype = op.get("channel_type")
        o["ctype"] = ctype
        if "channel_ids" in op:
            ids = op["channel_ids"]
            if not isinstance(ids, list) or len(ids) > MAX_CHANNEL_PER_OP:
                self.err("limits", "%s: channel_ids %r (at most %d)" % (where, ids,
                                                                       MAX_CHANNEL_PER_OP))
                return None
            chans = []
            for i in ids:
                if ctype not in loc_ch or not is_int(i) or not 0 <= i < len(loc_ch[ctype]):
                    self.err("ops", "%s: channel %r is no %s channel of the block" %
                             (where, i, ctype))
                    return None
                chans.append(loc_ch[ctype][i])
            o["chans"] = chans
        if name in SIGNALS | WAITS | {"flush"} and ("chans" not in o or not o["chans"]):
            self.err("ops", "%s: %s without channel_ids" % (where, name))
            return None
        if name in ("pws", "pwsf") or (name == "put" and ctype == "port"):
            if len(o.get("chans", [])) != len(op.get("dst_buff", [])):
                self.err("ops", "%s: a port put needs one channel id per destination" % where)
                return None
        for side in ("src_buff", "dst_buff"):
            if side in op:
                lst = op[side]
                if not isinstance(lst, list) or len(lst) > MAX_BUFS_PER_OP:
                    self.err("limits", "%s: %s of %d entries (at most %d)" %
                             (where, side, len(lst) if isinstance(lst, list) else -1,
                              MAX_BUFS_PER_OP))
                    return None
                refs = [self.ref(r, where, x, ctype, loc_buf, self.is_pkt(name, ctype, side, i))
                        for i, x in enumerate(lst)]
                if None in refs:
                    return None
                o[side] = refs
        if name in ("sem_acquire", "sem_release"):
            ids = op.get("semaphore_ids")
            nsem = len(self.p["gpus"][r].get("semaphores", []))
            if not isinstance(ids, list) or not ids or len(ids) > MAX_SEMS_PER_OP or \
                    any(not is_int(i) or not 0 <= i < nsem for i in ids):
                self.err("ops", "%s: semaphore_ids %r (%d semaphores, at most %d per op)" %
                         (where, ids, nsem, MAX_SEMS_PER_OP))
                return None
            o["sems"] = ids
        if name in ("put", "pws", "pwsf", "copy", "re"):
            src, dst = o.get("src_buff"), o.get("dst_buff")
            if not src or not dst:
                self.err("ops", "%s: %s needs src_buff and dst_buff" % (where, name))
                return None
            remote_dst = name in ("put", "pws", "pwsf")
            if any(x[0] != r for x in src) or any((x[0] != r) == (not remote_dst) for x in dst):
                self.err("ops", "%s: %s with a %s source or a %s destination" %
                         (where, name, "remote", "local" if remote_dst else "remote"))
                return None
            if remote_dst:
                if ctype not in ("memory", "port"):
                    self.err("ops", "%s: put over %r" % (where, ctype))
                    return None
                if ctype == "port":
                    for x, c in zip(dst, o["chans"]):
                        if self.ch[r]["port"][c] != x[0]:
                            self.err("ops", "%s: port put to rank %d over a channel to rank %d"
                                     % (where, x[0], self.ch[r]["port"][c]))
                            return None
                else:
                    for x in dst:
                        if x[0] not in [self.ch[r]["memory"][c] for c in loc_ch["memory"]]:
                            self.err("ops", "%s: memory put to rank %d, which the block has no "
                                     "memory channel to" % (where, x[0]))
                            return None
            if name == "re" and len(src) < 1:
                self.err("ops", "%s: re without sources" % where)
                return None
        if name == "barrier":
            if not is_int(op.get("barrier_id")) or not 0 <= op["barrier_id"] < 16:
                self.err("ops", "%s: barrier_id %r" % (where, op.get("barrier_id")))
        return o

    # ---- balance -------------------------------------------------------
    def balance(self, blocks):
        sig, wai = {}, {}
        acq, rel = {}, {}
        for r, bl in enumerate(blocks):
            for ops in bl:
                for o in ops or []:
                    n = o["name"]
                    for c in o.get("chans", []):
                        key = (r, o["ctype"], c)
                        if n in SIGNALS:
                            sig[key] = sig.get(key, 0) + 1
                        elif n in WAITS:
                            wai[key] = wai.get(key, 0) + 1
                    for s in o.get("sems", []):
                        d = acq if n == "sem_acquire" else rel
                        d[(r, s)] = d.get((r, s), 0) + 1
        for r in range(self.n):
            for t in ("memory", "port"):
                for k in range(len(self.ch[r][t])):
                    peer, j = self.pair_index(r, t, k)
                    pk = [i for i, q in enumerate(self.ch[peer][t]) if q == r]
                    if j >= len(pk):
                        continue
                    s, w = sig.get((r, t, k), 0), wai.get((peer, t, pk[j]), 0)
                    if s != w:
                        self.err("balance", "rank %d signals its %s channel %d (to rank %d) %d "
                                 "times; rank %d waits on the other end %d times" %
                                 (r, t, k, peer, s, peer, w))
            for s, sem in enumerate(self.p["gpus"][r].get("semaphores", [])):
                init = sem.get("init_value") if isinstance(sem, dict) else None
                if not is_int(init) or init < 0:
                    self.err("semaphores", "rank %d semaphore %d init_value %r" % (r, s, init))
                    continue
                if init + rel.get((r, s), 0) != acq.get((r, s), 0):
                    self.err("balance", "rank %d semaphore %d: init %d + %d releases, %d "
                             "acquires" % (r, s, init, rel.get((r, s), 0), acq.get((r, s), 0)))

    def check(self):
        self.top()
        self.gpus()
        self.channels()
        self.remote_buffers()
        blocks = [[self.block(r, tb) for tb in g["threadblocks"]]
                  for r, g in enumerate(self.p["gpus"])]
        self.balance(blocks)
        self.scratch_overlap()
        return blocks


# ---- the abstract machine --------------------------------------------
class Machine:
    """Runs the plan on symbolic chunks.  A chunk's value is a sorted tuple
    of (rank, input chunk) contributions, None while unwritten."""

    def __init__(self, ck, blocks, seed, late):
        self.ck, self.p, self.n = ck, ck.p, ck.n
        self.blocks, self.late = blocks, late
        self.rng = random.Random(seed) if seed is not None else None
        self.mem = {}
        for r, g in enumerate(self.p["gpus"]):
            for t in ("i", "o", "s"):
                self.mem[(r, t)] = [None] * (ck.chunks_of(r, t) * (2 if ck.ll and t == "s"
                                                                   else 1))
            self.mem[(r, "p")] = [None] * ck.chunks_of(r, "s")   # packets (flags)
            self.mem[(r, "i")] = [((r, k),) for k in range(g["input_chunks"])]
        self.alias()
        self.tokens = {}      # (rank, type, channel) -> list of pending-write lists
        self.pending = {}     # (rank, "port", channel) or (rank, block, owner) -> writes
        self.carry = {}       # (rank, semaphore) -> {owner: writes} a release handed on
        self.sem = {(r, s): g.get("semaphores", [])[s]["init_value"]
                    for r, g in enumerate(self.p["gpus"])
                    for s in range(len(g.get("semaphores", [])))}

    def alias(self):
        """In place: one buffer is a slice of the other (docs/design.md §8)."""
        self.view = {}
        if not self.p["inplace"]:
            return
        c = self.p["collective"]
        for r, g in enumerate(self.p["gpus"]):
            i, o = g["input_chunks"], g["output_chunks"]
            if c == "allgather":
                self.view[(r, "i")] = ((r, "o"), r * i)
                for k in range(i):
                    self.mem[(r, "o")][r * i + k] = self.mem[(r, "i")][k]
            elif c == "reducescatter":
                self.view[(r, "o")] = ((r, "i"), r * o)
            elif c in ("allreduce", "alltoall"):
                self.view[(r, "o")] = ((r, "i"), 0)

    def cell(self, owner, t, k):
        if (owner, t) in self.view:
            (o2, t2), base = self.view[(owner, t)]
            return self.mem[(o2, t2)], base + k
        return self.mem[(owner, t)], k

    def read(self, ref, where):
        owner, t, idx, size = ref
        out = []
        for k in range(idx, idx + size):
            arr, j = self.cell(owner, t, k)
            if arr[j] is None:
                raise Bad("%s reads rank %d's '%s' chunk %d before anything was written there"
                          % (where, owner, t, k))
            out.append(arr[j])
        return out

    def write(self, ref, vals):
        owner, t, idx, _ = ref
        for k, v in zip(range(idx, idx + len(vals)), vals):
            arr, j = self.cell(owner, t, k)
            arr[j] = v

    def cell_vals(self, ref):
        owner, t, idx, size = ref
        return [self.cell(owner, t, k)[0][self.cell(owner, t, k)[1]]
                for k in range(idx, idx + size)]

    def peer_key(self, r, t, c):
        peer, j = self.ck.pair_index(r, t, c)
        pk = [i for i, q in enumerate(self.ck.ch[peer][t]) if q == r][j]
        return (peer, t, pk)

    def step(self, r, b, o, where):
        """Run op o of rank r; False if it must wait."""
        n = o["name"]
        if n in WAITS:
            keys = [(r, o["ctype"], c) for c in o["chans"]]
            if any(not self.tokens.get(k) for k in keys):
                return False
            for k in keys:
                for ref, vals in self.tokens[k].pop(0):
                    self.write(ref, vals)
            return True
        if n == "sem_acquire":
            if any(self.sem[(r, s)] <= 0 for s in o["sems"]):
                return False
            for s in o["sems"]:
                self.sem[(r, s)] -= 1
                # what the releasing block had put but not yet signalled is
                # now this block's to publish (the release ordered it first)
                for owner, writes in self.carry.pop((r, s), {}).items():
                    self.pending.setdefault((r, b, owner), []).extend(writes)
            return True
        if n == "sem_release":
            for s in o["sems"]:
                self.sem[(r, s)] += 1
                for key in [k for k in self.pending if k[:2] == (r, b)]:
                    self.carry.setdefault((r, s), {}).setdefault(key[2], []).extend(
                        self.pending.pop(key))
            return True
        if n in ("put", "pws", "pwsf"):
            for i, (src, dst) in enumerate(zip(o["src_buff"], o["dst_buff"])):
                vals = self.read(src, where)
                if self.late and o["ctype"] == "port":
                    self.pending.setdefault((r, "port", o["chans"][i]), []).append((dst, vals))
                elif self.late:
                    # a memory put names no channel: its bytes are known to
                    # have landed once the block signals the owner next, or a
                    # block that acquired a semaphore the putting block
                    # released after the put does
                    self.pending.setdefault((r, b, dst[0]), []).append((dst, vals))
                else:
                    self.write(dst, vals)
        if n in SIGNALS:
            for c in o["chans"]:
                mine = (r, o["ctype"], c)
                if o["ctype"] == "memory":
                    mine = (r, b, self.ck.ch[r]["memory"][c])
                self.tokens.setdefault(self.peer_key(r, o["ctype"], c), []).append(
                    self.pending.pop(mine, []))
            return True
        if n in ("ppkt", "rppkt", "cpkt", "upkt", "repkt"):
            srcs = o["src_buff"]
            if any(s[1] == "p" and None in self.cell_vals(s) for s in srcs):
                return False            # a packet's flag is not there yet: poll
            cols = [self.read(s_, where) for s_ in srcs]
            if n == "repkt":
                vals = [tuple(sorted(sum(c, ()))) for c in zip(*cols)]
            else:
                vals = cols[0]
            for d in o["dst_buff"][:1]:
                self.write(d, vals)
            return True
        if n == "copy":
            self.write(o["dst_buff"][0], self.read(o["src_buff"][0], where))
        elif n == "re":
            cols = [self.read(s, where) for s in o["src_buff"]]
            self.write(o["dst_buff"][0], [tuple(sorted(sum(c, ()))) for c in zip(*cols)])
        elif n in ("put", "pws", "pwsf", "nop"):
            pass
        else:
            raise Bad("%s: the abstract machine does not run '%s'" % (where, n))
        return True

    def run(self):
        pcs = [(r, b, 0) for r in range(self.n) for b in range(len(self.blocks[r]))]
        state = {(r, b): 0 for r, b, _ in pcs}
        live = [k for k in state if self.blocks[k[0]][k[1]]]
        while live:
            order = list(live)
            if self.rng:
                self.rng.shuffle(order)
            moved = False
            for key in order:
                r, b = key
                ops = self.blocks[r][b]
                while state[key] < len(ops):
                    o = ops[state[key]]
                    if not self.step(r, b, o, "rank %d tb %d op %d" % (r, b, state[key])):
                        break
                    state[key] += 1
                    moved = True
                    if self.rng and self.rng.random() < 0.5:
                        break
            live = [k for k in live if state[k] < len(self.blocks[k[0]][k[1]])]
            if live and not moved:
                k = live[0]
                raise Bad("deadlock: rank %d tb %d waits at op %d (%s) and nothing else can "
                          "move" % (k[0], k[1], state[k], self.blocks[k[0]][k[1]][state[k]]
                                    ["name"]))
        for k, v in self.pending.items():
            if v and k[1] == "port":
                raise Bad("rank %d: a put over %s channel %d is never signalled" % k)
        self.post()

    def post(self):
        c, n = self.p["collective"], self.n
        g0 = self.p["gpus"][0]
        i, o = g0["input_chunks"], g0["output_chunks"]
        for r in range(n):
            for j in range(o):
                if c == "allgather":
                    want = ((j // i, j % i),)
                elif c == "alltoall":
                    cc = i // n
                    want = ((j // cc, r * cc + j % cc),)
                elif c == "reducescatter":
                    want = tuple(sorted((q, r * o + j) for q in range(n)))
                elif c == "allreduce":
                    want = tuple(sorted((q, j) for q in range(n)))
                else:
                    return
                arr, k = self.cell(r, "o", j)
                if arr[k] != want:
                    raise Bad("rank %d output chunk %d holds %s, not %s" % (r, j, arr[k], want))


def run_checks(path, plan, run):
    ck = Checker(path, plan)
    try:
        blocks = ck.check()
    except Bad as e:
        ck.err("structure", str(e))
        return ck.errs
    if ck.errs or not run or plan["collective"] not in ("allgather", "alltoall",
                                                        "reducescatter", "allreduce"):
        return ck.errs
    for seed, late in ((None, False), (None, True), (1, True), (2, False), (3, True)):
        try:
            Machine(ck, blocks, seed, late).run()
        except Bad as e:
            ck.err("data flow", "%s (%s landing%s)" % (e, "late" if late else "early",
                                                       ", seed %d" % seed if seed else ""))
            break
    return ck.errs


def main(argv):
    run = "--run" in argv
    quiet = "--quiet" in argv
    paths = [a for a in argv if not a.startswith("--")]
    if not paths or "--help" in argv or "-h" in argv:
        print(__doc__.strip())
        return 0 if paths or "--help" in argv or "-h" in argv else 2
    bad = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                plan = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: unusable: %s" % (path, e), file=sys.stderr)
            return 2
        errs = run_checks(path, plan, run)
        for e in errs[:20]:
            print(e, file=sys.stderr)
        if errs:
            bad += 1
        elif not quiet:
            print("%s: ok" % path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
