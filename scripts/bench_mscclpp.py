#!/usr/bin/env python3
"""bench_mscclpp.py — the same schedule as MSCCL XML and as an MSCCL++ plan, side by side.

Issue 38 item 6.  For each bundled multi-node GPU machine (topologies/*.json
with "nodes" >= 2 and a GPU device), each collective (allgather,
reducescatter, allreduce), each schedule (synthesized from every bundled
sketch whose "topology" is that machine, and --algo nccl) and each size,
taccl-synth writes the schedule twice, once as MSCCL XML and once with
--target mscclpp as an MSCCL++ execution plan (the same command and size
otherwise), and taccl-run runs both on the machine (--topo) with --json and
--trace.  One row per schedule and size: both times, their ratio, the lower
bound, a verdict, and, where the plan is more than 2 % faster or slower,
what its time is made of.

The explanation comes from the runs' traces, not from a model of our own:
the plan's critical path is walked back from the op that ends last; on a
block, an op that started later than its predecessor ended was blocked,
and the path jumps to what released it, matched as the executor matches it
(the k-th wait of a channel to the k-th signal, pws or pwsf of its paired
channel on the peer; the k-th sem_acquire of a semaphore to its k-th
sem_release; a packet read to the transfer that landed its packets).  The
path's time is split into the ops it runs through (busy) and the releases
it waits on (e.g. "signal->wait": from the peer's signal to the wait that
it releases, the channel's latency; "pwsf->wait": a port put landing and
its signal).  The XML's critical path is walked the same way through the
trace's send->receive arrows.  The item by which the slower path most
exceeds the other is named (the forms' items differ in name, so in effect
the slower path's largest), then each path's top three.

    scripts/bench_mscclpp.py BIN_DIR [--out bench/mscclpp.md] [--json bench/mscclpp.json]
        [--sizes 1M,64M,1G] [--only REGEX] [--jobs N] [--no-data-above SIZE]
        [--time-limit S] [--keep DIR] [--first-sketch] [--from-json FILE]

--sizes: comma-separated sizes (K/M/G powers of 1024); default 1M,64M,1G.
--only REGEX: only rows whose "machine collective schedule" matches.
--no-data-above SIZE: run with --no-data above SIZE per rank (default 64M;
  taccl-run refuses to hold the buffers of the larger sizes).
--time-limit S: taccl-synth --time-limit for the sketches (default 30).
--keep DIR: keep the schedules, plans and traces in DIR.
--first-sketch: only each machine's first bundled sketch (sorted by file name).
--from-json FILE: write the page (and --json) again from FILE, running nothing.
Exit 0 when every row ran (a plan that fails is a row, not an error); 1 when
a tool could not be run at all.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_report  # noqa: E402  (table(): a long cell becomes a numbered note)

HEAD = ["machine", "collective", "schedule", "size", "XML time us", "plan time us", "ratio",
        "bound us", "verdict"]
COLLS = ["allgather", "reducescatter", "allreduce"]
EPS = 1e-6
SAME = 0.02      # |plan / xml - 1| at most this: "same"
PACKET_OPS = {"upkt", "rppkt", "repkt", "respkt", "recpkt", "recspkt", "gstorepkt"}


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip())
    if not m:
        raise argparse.ArgumentTypeError("size %r: want N, NK, NM or NG" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def machines():
    out = []
    for f in sorted(os.listdir(os.path.join(ROOT, "topologies"))):
        if not f.endswith(".json"):
            continue
        t = json.load(open(os.path.join(ROOT, "topologies", f)))
        if t.get("nodes", 1) >= 2 and t.get("device", {}).get("kind") == "gpu":
            out.append(f[:-5])
    return out


def sketches_for(machine):
    out = []
    d = os.path.join(ROOT, "sketches")
    for f in sorted(os.listdir(d)):
        if f.endswith(".json") and f != "README.md":
            s = json.load(open(os.path.join(d, f)))
            if os.path.basename(s.get("topology", "")) == machine + ".json":
                out.append(f[:-5])
    return out


# ------------------------------------------------------------ traces

def trace_events(path):
    d = json.load(open(path))
    return d["traceEvents"] if isinstance(d, dict) else d


def plan_path(plan, trace, time_us=None):
    """The plan's critical path as {label: us}, or a string saying why not."""
    n = len(plan["gpus"])
    blocks = collections.defaultdict(list)   # (rank, tb) -> [event]
    owner = {}                                # id(xfer event) -> the op event issuing it
    sent = collections.defaultdict(list)      # id(op event) -> its transfers
    pending = []
    xfers_to = collections.defaultdict(list)  # rank -> [xfer event]
    for e in trace:
        if e.get("ph") != "X":
            continue
        if e["pid"] >= n:
            pending.append(e)
            a, b = (int(x) for x in e["name"].split()[1].split("->"))
            e["_dst"] = b
            xfers_to[b].append(e)
            continue
        e["_blk"] = (e["pid"], e["tid"])
        e["_idx"] = len(blocks[e["_blk"]])
        e["_end"] = e["ts"] + e["dur"]
        blocks[e["_blk"]].append(e)
        for x in pending:        # transfers are recorded just before their op
            owner[id(x)] = e
            sent[id(e)].append(x)
        pending = []
    # the ops behind the events, block by block (no pipelines in our plans)
    ops = {}
    for r, g in enumerate(plan["gpus"]):
        conn = collections.defaultdict(list)
        for c in g.get("channels", []):
            conn[c["channel_type"]] += c.get("connected_to", [])
        for tb in g["threadblocks"]:
            key = (r, tb["id"])
            ev = blocks.get(key, [])
            if len(ev) != len(tb["ops"]) or any(e["name"] != o["name"] for e, o in zip(ev, tb["ops"])):
                return "rank %d tb %d: trace events do not match its ops" % key
            local = collections.defaultdict(list)
            for c in tb.get("channels", []):
                local[c["channel_type"]] += c.get("channel_ids", [])
            for e, o in zip(ev, tb["ops"]):
                ty = o.get("channel_type")
                e["_chan"] = [(ty, local[ty][i]) for i in o.get("channel_ids", [])]
                e["_sems"] = o.get("semaphore_ids", [])
        ops[r] = conn

    def pair(r, ty, c):
        conn = ops[r][ty]
        p = conn[c]
        k = sum(1 for i in range(c) if conn[i] == p)
        peer = [i for i, q in enumerate(ops[p][ty]) if q == r]
        return (p, ty, peer[k]) if k < len(peer) else None

    order = sorted((e for es in blocks.values() for e in es),
                   key=lambda e: (e["ts"], e["_blk"][0], e["_blk"][1], e["_idx"]))
    sigq = collections.defaultdict(collections.deque)
    semq = collections.defaultdict(collections.deque)
    init = {(r, i): s.get("init_value", 0) for r, g in enumerate(plan["gpus"])
            for i, s in enumerate(g.get("semaphores", []))}
    dep = {}
    for e in order:
        r = e["_blk"][0]
        nm = e["name"]
        if nm in ("signal", "rlxsignal") or (nm in ("pws", "pwsf") and e["_chan"] and
                                               e["_chan"][0][0] == "port"):
            for ty, c in e["_chan"]:
                pc = pair(r, ty, c)
                if pc:
                    sigq[pc].append(e)
        elif nm in ("wait", "rlxwait"):
            for ty, c in e["_chan"]:
                q = sigq[(r, ty, c)]
                if q:
                    s = q.popleft()
                    if id(e) not in dep or s["ts"] > dep[id(e)]["ts"]:
                        dep[id(e)] = s
        elif nm == "sem_release":
            for i in e["_sems"]:
                semq[(r, i)].append(e)
        elif nm == "sem_acquire":
            for i in e["_sems"]:
                if init.get((r, i), 0) > 0:
                    init[(r, i)] -= 1
                    continue
                q = semq[(r, i)]
                if q:
                    s = q.popleft()
                    if id(e) not in dep or s["ts"] > dep[id(e)]["ts"]:
                        dep[id(e)] = s

    def landed(e):
        """The op whose transfer into e's rank landed when e started."""
        best = None
        for x in xfers_to[e["_blk"][0]]:
            xe = x["ts"] + x["dur"]
            if abs(xe - e["ts"]) <= EPS * max(1.0, e["ts"]) and id(x) in owner:
                best = owner[id(x)]
        return best

    last = max(order, key=lambda e: (e["_end"], e["_blk"]))
    comp = collections.Counter()
    if time_us is not None and time_us > last["_end"] + EPS * max(1.0, time_us):
        # the run ends when a port put lands after the last op
        comp["port put landing after the last op"] += time_us - last["_end"]
    cur, t_at = last, last["_end"]
    for _ in range(len(order) * 2 + 10):
        comp["busy " + cur["name"]] += t_at - cur["ts"]
        blk = blocks[cur["_blk"]]
        prev = blk[cur["_idx"] - 1] if cur["_idx"] > 0 else None
        pend = prev["_end"] if prev else 0.0
        gap = cur["ts"] - pend
        if gap <= EPS * max(1.0, cur["ts"]):
            if prev is None:
                break
            cur, t_at = prev, prev["_end"]
            continue
        d = dep.get(id(cur))
        if d is None and (cur["name"] in PACKET_OPS or cur["name"] in ("flush", "put", "pws", "pwsf")):
            d = landed(cur)
        if d is None or d["ts"] > cur["ts"] + EPS:
            comp["blocked in %s (unmatched)" % cur["name"]] += gap
            if prev is None:
                break
            cur, t_at = prev, prev["_end"]
            continue
        kind = d["name"]
        if kind == "signal" and d["_idx"] == 0:
            kind = "ready signal"
        # a put-like op: its transfer into this rank, and the time it queued
        # before it (the port FIFO or a busy link/NIC lane)
        xs = [x for x in sent.get(id(d), []) if x["_dst"] == cur["_blk"][0]
              and x["ts"] <= cur["ts"] + EPS]
        if xs:
            x = max(xs, key=lambda x: x["ts"])
            comp["%s transfer->%s" % (kind, cur["name"])] += cur["ts"] - x["ts"]
            if x["ts"] > d["ts"]:
                comp["%s queued (port FIFO / busy lane)" % kind] += x["ts"] - d["ts"]
        else:
            comp["%s->%s" % (kind, cur["name"])] += cur["ts"] - d["ts"]
        cur, t_at = d, d["ts"]
    return {k: v for k, v in comp.items() if v > 1e-9}


def xml_path(trace):
    """The XML's critical path through its steps and send->receive arrows."""
    steps = collections.defaultdict(list)
    flows_s, flows_f = {}, collections.defaultdict(list)
    for e in trace:
        if e.get("ph") == "X" and e.get("cat") == "step":
            steps[(e["pid"], e["tid"])].append(e)
        elif e.get("ph") == "s":
            flows_s[e["id"]] = e
        elif e.get("ph") == "f":
            flows_f[(e["pid"], e["tid"])].append(e)
    if not steps:
        return "no steps in the trace"
    for k, es in steps.items():
        es.sort(key=lambda e: (e["ts"], e["args"]["step"]))
        for i, e in enumerate(es):
            e["_blk"], e["_idx"], e["_end"] = k, i, e["ts"] + e["dur"]
    allst = [e for es in steps.values() for e in es]
    last = max(allst, key=lambda e: (e["_end"], e["_blk"]))
    comp = collections.Counter()
    cur, t_at = last, last["_end"]
    for _ in range(len(allst) * 2 + 10):
        # a receiving step ends when its data arrives: the arrow into it
        # that arrived last; when its send began after the step did, the
        # step was waiting for the sender
        arr = [f for f in flows_f[cur["_blk"]] if f["id"] in flows_s and
               cur["ts"] - EPS <= f["ts"] <= t_at + EPS]
        if arr:
            f = max(arr, key=lambda f: f["ts"])
            s = flows_s[f["id"]]
            cands = [e for e in steps.get((s["pid"], s["tid"]), []) if e["ts"] - EPS <= s["ts"]]
            if s["ts"] > cur["ts"] + EPS and cands:
                comp["busy " + cur["name"]] += max(0.0, t_at - f["ts"])
                comp["transfer->%s" % cur["name"]] += f["ts"] - s["ts"]
                cur, t_at = cands[-1], s["ts"]
                continue
        comp["busy " + cur["name"]] += t_at - cur["ts"]
        blk = steps[cur["_blk"]]
        prev = blk[cur["_idx"] - 1] if cur["_idx"] > 0 else None
        pend = prev["_end"] if prev else 0.0
        gap = cur["ts"] - pend
        if gap > EPS * max(1.0, cur["ts"]):
            comp["blocked in %s" % cur["name"]] += gap
        if prev is None:
            break
        cur, t_at = prev, prev["_end"]
    return {k: v for k, v in comp.items() if v > 1e-9}


def top(comp, k=3):
    if isinstance(comp, str):
        return "(%s)" % comp
    return ", ".join("%s %.1f" % (n, v) for n, v in
                     sorted(comp.items(), key=lambda kv: (-kv[1], kv[0]))[:k])


def explain(xr, pr, xcomp, pcomp):
    """Why the plan's time differs from the XML's, from the two paths."""
    parts = []
    if xr.get("proto") != pr.get("proto"):
        parts.append("the plan runs %s where the XML runs %s" % (pr.get("proto"), xr.get("proto")))
    if isinstance(pcomp, str) or isinstance(xcomp, str):
        parts.append("critical path: %s" % (pcomp if isinstance(pcomp, str) else xcomp))
        return "; ".join(parts)
    delta = pr["time_us"] - xr["time_us"]
    # what the slower form's path has more of than the other's
    if delta > 0:
        k, v = max(pcomp.items(), key=lambda kv: (kv[1] - xcomp.get(kv[0], 0.0), kv[0]))
        parts.append("largest item on the plan's critical path: %s %.1f us" % (k, v))
    else:
        k, v = max(xcomp.items(), key=lambda kv: (kv[1] - pcomp.get(kv[0], 0.0), kv[0]))
        parts.append("largest item on the XML's critical path: %s %.1f us" % (k, v))
    parts.append("plan path: %s; XML path: %s" % (top(pcomp), top(xcomp)))
    return "; ".join(parts)


# ------------------------------------------------------------ runs

def sh(args):
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def one_run(bin_dir, f, topo, size, no_data, trace):
    args = [os.path.join(bin_dir, "taccl-run"), f, "--topo", topo, "--size", str(size), "--json",
            "--trace", trace]
    if no_data:
        args.append("--no-data")
    rc, out, err = sh(args)
    try:
        d = json.loads(out)
    except ValueError:
        return {"rc": rc, "error": (err.strip().splitlines() or ["no report"])[-1]}
    d["rc"] = rc
    d["command"] = "taccl-run %s --topo %s --size %d --json%s" % (
        os.path.basename(f), os.path.relpath(topo, ROOT), size, " --no-data" if no_data else "")
    return d


def case(a, machine, coll, sched, size, work):
    topo = os.path.join(ROOT, "topologies", machine + ".json")
    stem = "%s-%s-%s-%d" % (machine, coll, sched, size)
    if sched == "nccl":
        synth = ["--algo", "nccl", topo]
        shown = "taccl-synth --algo nccl topologies/%s.json" % machine
    else:
        synth = [os.path.join(ROOT, "sketches", sched + ".json"), topo, "--time-limit", str(a.time_limit)]
        shown = "taccl-synth sketches/%s.json topologies/%s.json --time-limit %s" % (sched, machine,
                                                                                    a.time_limit)
    synth += ["--collective", coll, "--size", str(size), "-q", "--json"]
    shown += " --collective %s --size %d" % (coll, size)
    row = {"machine": machine, "collective": coll, "schedule": sched, "size": size,
           "synth": shown + " -o X.xml | --target mscclpp -o X.json"}
    no_data = size > a.no_data_above
    res = {}
    for form, ext, extra in (("xml", "xml", []), ("plan", "json", ["--target", "mscclpp"])):
        out = os.path.join(work, "%s.%s" % (stem, ext))
        rc, so, se = sh([os.path.join(a.bin, "taccl-synth")] + synth + extra + ["-o", out])
        if rc != 0:
            res[form] = {"rc": rc, "error": "taccl-synth: " +
                         ((se.strip().splitlines() or ["exit %d" % rc])[-1])}
            continue
        try:
            row[form + "_predicted_us"] = json.loads(so).get("predicted_us")
        except ValueError:
            pass
        tr = os.path.join(work, "%s-%s.trace.json" % (stem, form))
        d = one_run(a.bin, out, topo, size, no_data, tr)
        if os.path.exists(tr):
            try:
                ev = trace_events(tr)
                if form == "plan":
                    d["path"] = plan_path(json.load(open(out)), ev, d.get("time_us"))
                else:
                    d["path"] = xml_path(ev)
                    # the runtime's base latency of the call, after the
                    # last step (taccl-run's call_us, design.md section 4)
                    if isinstance(d["path"], dict) and d.get("call_us"):
                        d["path"]["runtime base latency"] = d["call_us"]
            except (ValueError, KeyError, IndexError) as e:
                d["path"] = "trace not read: %s" % e
            if not a.keep:
                os.remove(tr)
        res[form] = d
    row["xml"], row["plan"] = res.get("xml"), res.get("plan")
    return row


def ok(d):
    return d is not None and d.get("rc") == 0 and d.get("time_us") is not None


def first_error(d):
    err = (d or {}).get("error") or "exit %s" % (d or {}).get("rc")
    return re.sub(r"\s+", " ", err)


def verdict(row):
    """'status (why)': status short (bench_report.table() keeps it in the
    cell and moves a long why to a numbered note under the table)."""
    x, p = row["xml"], row["plan"]
    if not ok(x):
        return "XML fails (%s)" % first_error(x), None
    if not ok(p):
        return "plan fails (%s)" % first_error(p), None
    ratio = p["time_us"] / x["time_us"]
    xp, pp = row.get("xml_predicted_us"), row.get("plan_predicted_us")
    if xp is not None and pp is not None and abs(xp - pp) > 1e-6 * max(1.0, xp):
        return ("not the same schedule (taccl-synth predicted %.2f us for the XML and %.2f us for "
                "the plan: a solver time limit ended them apart)" % (xp, pp)), ratio
    if abs(ratio - 1) <= SAME:
        return "same (within 2 %)", ratio
    what = "plan slower" if ratio > 1 else "plan faster"
    why = explain(x, p, x.get("path", "no trace"), p.get("path", "no trace"))
    return "%s by %.1f us (%s)" % (what, abs(p["time_us"] - x["time_us"]), why), ratio


def size_name(b):
    for sh_, u in ((30, "G"), (20, "M"), (10, "K")):
        if b % (1 << sh_) == 0:
            return "%d%s" % (b >> sh_, u)
    return str(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("bin", help="folder holding taccl-synth and taccl-run (build/bin)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "mscclpp.md"))
    ap.add_argument("--json", dest="json_out", default=None,
                    help="the rows as JSON (default: --out with .json)")
    ap.add_argument("--sizes", default="1M,64M,1G")
    ap.add_argument("--only", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-data-above", type=parse_size, default=64 << 20)
    ap.add_argument("--time-limit", type=int, default=30)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--from-json", default=None,
                    help="write the page again from a run's JSON (--json of that run), running "
                    "nothing")
    ap.add_argument("--first-sketch", action="store_true",
                    help="only the first bundled sketch of each machine (by name)")
    ap.add_argument("--command", default=None, help="the command to name in the page")
    a = ap.parse_args()
    if a.from_json:
        # the page again from the rows of a run (its verdicts as they were)
        d = json.load(open(a.from_json))
        a.command = a.command or d["command"]
        write(a, d["rows"], d["sizes"])
        return
    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    for tool in ("taccl-synth", "taccl-run"):
        if not os.access(os.path.join(a.bin, tool), os.X_OK):
            sys.exit("bench_mscclpp: %s/%s is missing (run make all)" % (a.bin, tool))
    only = re.compile(a.only) if a.only else None
    todo = []
    for m in machines():
        for c in COLLS:
            sk = sketches_for(m)
            for s in (sk[:1] if a.first_sketch else sk) + ["nccl"]:
                if only and not only.search("%s %s %s" % (m, c, s)):
                    continue
                for z in sizes:
                    todo.append((m, c, s, z))
    if not todo:
        sys.exit("bench_mscclpp: no case matches")
    work = a.keep or tempfile.mkdtemp(prefix="taccl-mppbench-")
    os.makedirs(work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        rows = list(ex.map(lambda t: case(a, *t, work), todo))
    if not a.keep:
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    for r in rows:
        r["verdict"], r["ratio"] = verdict(r)
    write(a, rows, sizes)


def write(a, rows, sizes):
    cmd = a.command or "scripts/bench_mscclpp.py %s --sizes %s%s --time-limit %d" % (
        a.bin, a.sizes, " --first-sketch" if a.first_sketch else "", a.time_limit)
    n = len(rows)
    both = [r for r in rows if r["ratio"] is not None]
    pfail = [r for r in rows if ok(r["xml"]) and not ok(r["plan"])]
    same = sum(1 for r in both if abs(r["ratio"] - 1) <= SAME)
    slower = sum(1 for r in both if r["ratio"] > 1 + SAME)
    faster = sum(1 for r in both if r["ratio"] < 1 - SAME)
    lines = [
        "# The same schedule as MSCCL XML and as an MSCCL++ plan (issue 38 item 6)",
        "",
        "Made by `%s`. Each row: one schedule (`taccl-synth` from a bundled sketch of that "
        "machine, or `--algo nccl`) at one size (per rank), written twice by the same command, "
        "once as MSCCL XML and once with `--target mscclpp` as an MSCCL++ execution plan, and both "
        "run by `taccl-run FILE --topo MACHINE --size S --json --trace T` (data moved and checked "
        "up to %s per rank, `--no-data` above). Times and the lower bound are taccl-run's (us); "
        "ratio = plan / XML. A plan that taccl-run does not verify is a `plan fails` row with "
        "its first error (in a numbered note under the table where it is long, as every long "
        "verdict). Sizes, schedules and the wall time: bench/README.md." % (
            cmd, size_name(a.no_data_above)),
        "",
        "Verdict: `same` within 2 %; otherwise the cause, from the runs' traces: each form's "
        "critical path walked back from the op (step) that ends last, through what released each "
        "op that waited (a wait to the signal, `pws` or `pwsf` of its paired channel, a "
        "`sem_acquire` to its `sem_release`, a packet read to the transfer that landed it; in the "
        "XML a receive to its send). Items are summed over the path by name. `busy OP`: time "
        "the path spends in that op (for a memory-channel `put`, `ppkt` or `rppkt`: the wait "
        "for a free link lane and the transfer, which hold the block, packets moving twice the "
        "bytes; for a `pwsf`: until the put lands, its flush); `A->B`: from A's "
        "start to the B it releases (a signal's channel latency, a port put landing); "
        "`A queued`: a port put waiting for the channel's FIFO or a busy lane before its "
        "transfer; "
        "`ready signal->wait`: the handshake that lets a sender put into the receiver's buffer; "
        "`transfer->STEP`: an XML send arriving. Named: the item by which the slower form's "
        "path most exceeds the other's (the two forms' items have different names but for "
        "`busy re`, so in effect the slower path's largest item; compare the two "
        "lists); then the top three items of each path (us).",
        "",
        "Rows: %d; both ran: %d (same %d, plan slower %d, plan faster %d); plan fails where the "
        "XML runs: %d; XML fails: %d." % (n, len(both), same, slower, faster, len(pfail),
                                          sum(1 for r in rows if not ok(r["xml"]))),
        "",
    ]

    def t(d):
        return "%.2f" % d["time_us"] if ok(d) else "-"

    body = []
    for r in rows:
        b = None
        for d in (r["xml"], r["plan"]):
            if d and d.get("time_us") is not None:
                b = d.get("lower_bound_us", d.get("bound_us"))
                if b is not None:
                    break
        body.append([r["machine"], r["collective"], r["schedule"], size_name(r["size"]),
                     t(r["xml"]), t(r["plan"]),
                     "%.3f" % r["ratio"] if r["ratio"] is not None else "-",
                     "%.2f" % b if b is not None else "-", r["verdict"]])
    lines.append(bench_report.table(HEAD, body))
    lines.append("")
    md = "\n".join(lines)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(md)
    os.replace(tmp, a.out)
    jout = a.json_out or re.sub(r"\.md$", "", a.out) + ".json"
    keep = ("rc", "verified", "error", "proto", "time_us", "lower_bound_us", "bound_us",
            "data_checked", "command", "path")
    data = {"command": cmd, "sizes": sizes, "rows": [
        {"machine": r["machine"], "collective": r["collective"], "schedule": r["schedule"],
         "size": r["size"], "synth": r["synth"], "ratio": r["ratio"], "verdict": r["verdict"],
         "xml_predicted_us": r.get("xml_predicted_us"), "plan_predicted_us": r.get("plan_predicted_us"),
         "xml": {k: v for k, v in (r["xml"] or {}).items() if k in keep},
         "plan": {k: v for k, v in (r["plan"] or {}).items() if k in keep}} for r in rows]}
    tmp = jout + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, jout)
    print(md)


if __name__ == "__main__":
    main()
