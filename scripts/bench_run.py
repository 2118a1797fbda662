#!/usr/bin/env python3
"""bench_run.py — run the benchmark and write bench/results.md, its pages and plots.

For every configuration of docs/references.md (a topology and a collective)
it writes each baseline schedule with `taccl-synth --algo A`, runs it with
`taccl-run --sweep LO:HI --json` over the configuration's sizes, and hands
the rows to bench_report.py, which puts them beside the published figures.
An algorithm that does not apply (taccl-synth exits 2, e.g. butterfly on a
non-power-of-two rank count) is listed as "n/a (reason)".

Beside the ring, the "nccl" row is what NCCL itself runs: NCCL's schedule
depends on the size (its tuning model picks ring or tree, the protocol and
the channels), so at every size S of the sweep it is written with
`taccl-synth --algo nccl --size S` and run at S alone.  Every "× NCCL" of
the report is that row's time over another's; "× ring" is our ring's.

Every bundled sketch (sketches/*.json, paired with its topology) is
synthesized with `taccl-synth SKETCH TOPO --size S --time-limit T --json`
at several anchor sizes S of its configuration (anchor_sizes()), and each
anchor's schedule is swept over the configuration's whole size range like a
baseline; the report takes, per size, the fastest verified synthesized row
("taccl (best)").  A size the synthesizer refuses (exit 2) is "n/a (reason)";
a collective it does not implement yet is "unavailable (reason)".  Each
sketch is also timed at its own input_size with `--solver cbc`, and TACCL's
Table 2 (sketch, collective) pairs are synthesized at the sketch's size.
The (sketch, collective, instances) of bench_ref.CALIBRATION (TACCL's
measured speed-ups over NCCL) are synthesized at every anchor: the report's
calibration table (and calibration.json beside results.md) puts NCCL's time
over the fastest schedule from that sketch beside TACCL's published range.

Anything that should verify and does not (taccl-run exit 1 or a row with
verified false), any tool crash, timeout or unusable output, fails the run:
the report is still written (naming the failures) and the exit code is 1.

    bench_run.py --bin DIR [--out DIR] [--quick] [--jobs N] [--only REGEX]
                 [--command TEXT] [--via-make]
                 [--topo T.json [--sketch S.json ...] [--collectives C,...]]

With --topo, the same report and plots for a user's machine instead: each
collective swept 1 KiB-1 GiB with every baseline, and each --sketch
synthesized at its anchors, beside the topology's lower bound.

Python 3 standard library only.  Called by scripts/bench.sh.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_calib  # noqa: E402
import bench_ref  # noqa: E402
import bench_report  # noqa: E402

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Baselines: (label, taccl-synth arguments, collectives it is tried on or
# None for all; taccl-synth itself says n/a where it does not apply).
ALGOS = [
    ("ring", ["--algo", "ring"], None),
    ("direct", ["--algo", "direct"], None),
    ("butterfly", ["--algo", "butterfly"], None),
    ("rsag", ["--algo", "rsag"], None),
    ("rsag via ring", ["--algo", "rsag", "--via", "ring"], ("allreduce",)),
    ("rsag via butterfly", ["--algo", "rsag", "--via", "butterfly"],
     ("allreduce",)),
    ("tree", ["--algo", "tree"], None),
]
TIMEOUT_S = 600          # one tool call; a hang fails the run, not the clock

# Synthesizer: --time-limit per MILP stage (routing, contiguity), seconds.
# Chosen so that the full run stays within ~20 min and QUICK within ~3 min
# on a 2-core machine (a stage may overrun its limit a little).
SYNTH_LIMIT_S = 20
SYNTH_LIMIT_QUICK_S = 5
# Anchor sizes tried in every range section (those inside its sweep), beside
# docs/references.md's reference sizes and the sketch's own input_size.  QUICK uses
# only the reference sizes and the sketch's own size.
ANCHORS = (KIB, 64 * KIB, MIB, 16 * MIB, GIB)

# Report groups, in order: (id, title).
GROUPS = [
    ("ndv2-x2", "NDv2 ×2 (16 GPUs)"),
    ("dgx2-x2", "DGX-2 ×2 (32 GPUs)"),
    ("ndv2-x4", "NDv2 ×4 (32 GPUs)"),
    ("modern", "Modern machines: DGX A100, DGX H100, Azure NDv4, NDv5 "
               "(×1, ×2, ×4; 8 GPUs and 8 NICs per node)"),
    ("tacos", "TACOS direct-connect networks (AllGather)"),
    ("chip", "Chip/cluster device (case study)"),
    ("synth", "Synthesized schedules on other configurations"),
]

COLL_TITLE = {"allgather": "AllGather", "alltoall": "AllToAll",
              "reducescatter": "ReduceScatter", "allreduce": "AllReduce"}


class Section:
    """One table and one plot: a topology, a collective, sizes, algorithms."""

    def __init__(self, group, topo, coll, ranges, nodata=False, target=None,
                 extras=(), title=None, note=None, run_flags=(), path=None):
        self.group = group
        self.topo = topo                      # stem of topologies/<topo>.json
        self.path = path                      # a user's topology file, or None
        self.coll = coll
        self.key = "%s-%s" % (topo, coll)
        self.ranges = ranges                  # [(lo, hi)] power-of-two sweeps
        self.nodata = nodata                  # timing only at every size
        self.target = target                  # None or "unlimited"
        self.extras = list(extras)            # [(label, schedules/X.xml)]
        self.title = title or "%s on %s" % (COLL_TITLE[coll], topo)
        self.note = note
        self.run_flags = list(run_flags)      # more taccl-run flags
        self.ranks, self.dma_bytes = topo_facts(self.topo_path)

    @property
    def topo_path(self):
        return self.path or os.path.join(ROOT, "topologies", self.topo + ".json")


def topo_facts(path):
    """(rank count, DMA segment bytes or 0) of the topology file at path."""
    with open(path) as f:
        t = json.load(f)
    dev = t.get("device") or {}
    dma = dev.get("dma_bytes", 0) if dev.get("kind") == "chip" else 0
    return t["nodes"] * t["ranks_per_node"], dma


def topo_ranks(stem):
    return topo_facts(os.path.join(ROOT, "topologies", stem + ".json"))[0]


def user_sections(path, colls, quick):
    """make bench TOPO=PATH: one configuration per collective of the user's
    topology, swept like the bundled GPU machines."""
    gpu = points(KIB, 64 * KIB, MIB, GIB) if quick else [(KIB, GIB)]
    stem = os.path.splitext(os.path.basename(path))[0]
    return [Section("user", stem, c, gpu, path=os.path.abspath(path)) for c in colls]


def points(*sizes):
    return [(s, s) for s in sizes]


def sections(quick):
    """Every configuration docs/references.md asks for, with its sizes."""
    gpu = points(KIB, 64 * KIB, MIB, GIB) if quick else [(KIB, GIB)]
    chip = points(KIB, 32 * KIB, MIB) if quick else [(KIB, MIB)]
    out = []
    for coll in ("allgather", "alltoall", "allreduce"):
        out.append(Section("ndv2-x2", "ndv2-x2", coll, gpu))
    # AllToAll on DGX-2 and AllReduce on NDv2 x4: TACCL's Figures 7-8
    # (the calibration against TACCL's speed-ups over NCCL)
    for coll in ("allgather", "alltoall", "allreduce"):
        out.append(Section("dgx2-x2", "dgx2-x2", coll, gpu))
    for coll in ("allgather", "allreduce"):
        out.append(Section("ndv2-x4", "ndv2-x4", coll, gpu))
    for machine in ("dgx-a100", "dgx-h100", "ndv4", "ndv5"):
        for nodes in (1, 2, 4):
            for coll in ("allgather", "allreduce"):
                out.append(Section("modern", "%s-x%d" % (machine, nodes),
                                   coll, gpu))
    for topo in ("torus-2d-4x4", "torus-2d-8x8", "torus-2d-32x32",
                 "mesh-2d-8x8", "torus-3d-4x4x4"):
        n = topo_ranks(topo)
        big = topo == "torus-2d-32x32"
        sizes = [n * MIB] if (big and quick) else [n * MIB, 64 * n * MIB]
        note = None
        if big:
            note = ("1024 ranks: timing only (--no-data), out of place only "
                    "(--outofplace: the schedule file is ~0.5 GB, taccl-run "
                    "needs ~12 GB for it, and each buffer mode costs "
                    "~25 s more), and no runtime step limits "
                    "(--target unlimited: a 1024-rank ring needs more than "
                    "MSCCL's 256 steps per threadblock)")
            if quick:
                note += "; QUICK skips the 64 MiB-per-NPU run"
        out.append(Section("tacos", topo, "allgather", points(*sizes),
                           nodata=big, target="unlimited" if big else None,
                           run_flags=["--outofplace"] if big else [],
                           title="AllGather on %s (%d NPUs)" % (topo, n),
                           note=note))
    cs = {
        "cs-chip4": {
            "allreduce": [("case-study direct", "cs-chip-allreduce-direct"),
                          ("case-study butterfly",
                           "cs-chip-allreduce-butterfly"),
                          ("case-study rs-ag", "cs-chip-rs-ag")],
            "allgather": [("case-study", "cs-chip-allgather")],
            "reducescatter": [("case-study", "cs-chip-reducescatter")],
        },
        "cs-cluster2": {
            "allreduce": [("case-study", "cs-cluster-allreduce"),
                          ("case-study rs-ag", "cs-cluster-rs-ag")],
            "allgather": [("case-study", "cs-cluster-allgather")],
            "reducescatter": [("case-study", "cs-cluster-reducescatter")],
        },
        "cs-chip4x2": {},
    }
    for topo, extras in cs.items():
        for coll in ("allreduce", "allgather", "reducescatter"):
            ex = [(label, os.path.join(ROOT, "schedules", name + ".xml"))
                  for label, name in extras.get(coll, [])]
            out.append(Section("chip", topo, coll, chip, extras=ex))
    return out


# ------------------------------------------------------------- sketches

def sketch_topology(path, sketch):
    """The topology stem a bundled sketch is meant for, or None.

    Its "topology" key (a path or a stem) wins; else the longest topology
    stem the file name starts with (ndv2-x2-sk-1.json -> ndv2-x2); else
    TACCL's naming (ndv2-sk-1.json -> ndv2-x<nnodes>).
    TODO(synthesizer): keep in step with the bundled sketches' convention."""
    def exists(stem):
        return os.path.exists(os.path.join(ROOT, "topologies",
                                           stem + ".json"))
    topo = sketch.get("topology")
    if isinstance(topo, str):
        stem = os.path.splitext(os.path.basename(topo))[0]
        if exists(stem):
            return stem
    base = os.path.splitext(os.path.basename(path))[0]
    stems = sorted((os.path.splitext(os.path.basename(t))[0] for t in
                    glob.glob(os.path.join(ROOT, "topologies", "*.json"))),
                   key=len, reverse=True)
    for stem in stems:
        if base.startswith(stem + "-"):
            return stem
    m = re.match(r"(ndv2|dgx2)-", base)
    if m and exists("%s-x%d" % (m.group(1), sketch.get("nnodes", 1))):
        return "%s-x%d" % (m.group(1), sketch.get("nnodes", 1))
    return None


def parse_size(v):
    """A sketch's input_size in bytes (number, or "16MB", "32K", "1GiB":
    K/M/G are powers of 1024, as taccl-synth reads them), or None."""
    if isinstance(v, (int, float)) and v > 0:
        return int(v)
    m = re.match(r"^\s*(\d+)\s*([KMG]?)(i?B)?\s*$", str(v), re.I)
    if not m:
        return None
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[
        m.group(2).upper()]


def norm_coll(c):
    return str(c).lower().replace("_", "").replace("-", "")


def ref_sizes(sec):
    """docs/references.md's reference sizes for this configuration: the TACCL/TE-CCL
    sizes and TACOS's 1 MiB per NPU."""
    out = {p[2] for p in bench_ref.PUBLISHED
           if p[0] == sec.topo and p[1] == sec.coll}
    if sec.topo in bench_ref.TACOS and sec.coll == "allgather":
        out.add(bench_ref.TACOS[sec.topo][0] * MIB)
    return out


def in_sweep(sec, size):
    return any(lo <= size <= hi for lo, hi in sec.ranges)


def anchor_sizes(sec, own, quick):
    """The sizes to synthesize a sketch at for this section: docs/references.md's
    reference sizes inside the sweep and (full run) ANCHORS inside it, plus
    (always) the sketch's own input_size, None standing for it."""
    want = {s for s in ref_sizes(sec) if in_sweep(sec, s)}
    if not quick:
        want |= {s for s in ANCHORS if in_sweep(sec, s)}
        # a point sweep (TACOS networks): every point is an anchor
        want |= {lo for lo, hi in sec.ranges if lo == hi}
    want.discard(own)
    return [None] + sorted(want)


def sketch_tasks(secs, quick, paths=None, user_topo=None, user_path=None):
    """(section, label, spec) for every bundled sketch at every anchor size
    of its configuration (spec: dict for Runner.one), the CBC timing tasks,
    notes on the sketches left out, and the new sections for configurations
    the benchmark does not list itself.

    A sketch runs for its own "collective" at every anchor; TACCL's Table 2
    (bench_ref.SYNTH_TIME) also runs some sketches for other collectives:
    those pairs run at the sketch's own size only (for the synthesis-time
    comparison), their schedule swept like any other."""
    tasks, notes, extra = [], [], []
    limit = SYNTH_LIMIT_QUICK_S if quick else SYNTH_LIMIT_S

    def section(topo, coll, own):
        sec = next((s for s in secs + extra
                    if s.topo == topo and s.coll == coll), None)
        if sec is None:
            if coll == "allgather" or coll == "allreduce":
                gpu = points(KIB, MIB, GIB) if quick else [(KIB, GIB)]
            else:               # a Table 2 pair only: its own size
                gpu = points(own or MIB)
            sec = Section("user" if user_path else "synth", topo, coll, gpu,
                          path=user_path)
            extra.append(sec)
        return sec

    table2 = {}
    for coll, name, _ in bench_ref.SYNTH_TIME:
        table2.setdefault(name, []).append(coll)
    # the calibration's (collective, instances) per sketch file: at every
    # anchor, like a sketch's own collective
    calib = {}
    if user_topo is None:
        for row in bench_ref.CALIBRATION:
            if row[3]:
                calib.setdefault(row[3], set()).add((row[2], row[5]))
    if paths is None:
        paths = sorted(glob.glob(os.path.join(ROOT, "sketches", "*.json")))
    for path in paths:
        base = os.path.splitext(os.path.basename(path))[0]
        try:
            with open(path) as f:
                sk = json.load(f)
        except (OSError, ValueError) as e:
            notes.append("%s: unreadable (%s)" % (os.path.basename(path), e))
            continue
        topo = user_topo or sketch_topology(path, sk)
        if topo is None:
            notes.append("%s: no topology paired with it (see "
                         "sketch_topology in scripts/bench_run.py)"
                         % os.path.basename(path))
            continue
        coll = norm_coll(sk.get("collective", "allgather"))
        if coll not in COLL_TITLE:
            notes.append("%s: unknown collective %r" % (path, coll))
            continue
        own = parse_size(sk.get("input_size"))
        tname = bench_ref.taccl_name(base)
        want = calib.get(base, set())
        # (collective, at every anchor?, instances)
        colls = [(coll, True, 1)]
        for c in table2.get(tname, []):
            if c != coll:
                colls.append((c, (c, 1) in want, 1))
        for c, k in sorted(want):
            if not any(x[0] == c and x[2] == k for x in colls):
                colls.append((c, True, k))
        for c, anchors, k in colls:
            sec = section(topo, c, own)
            sizes = anchor_sizes(sec, own, quick) if anchors else [None]
            name = base + ("" if c == coll else " as " + c) + \
                ("" if k == 1 else ", %d instances" % k)
            for size in sizes:
                spec = {"path": path, "sketch": base, "coll": c,
                        "own_coll": coll, "size": size, "own": own,
                        "limit": limit, "solver": "glpk", "instances": k}
                at = bench_report.fmt_size(size if size is not None
                                           else own or 0) + \
                    (" (own)" if size is None else "")
                tasks.append((sec, "taccl %s @%s" % (name, at), spec))
            if k != 1 or (c != coll and c not in table2.get(tname, [])):
                continue        # CBC is timed for Table 2's pairs only
            spec = {"path": path, "sketch": base, "coll": c,
                    "own_coll": coll, "size": None, "own": own,
                    "limit": limit, "solver": "cbc", "instances": 1}
            tasks.append((sec, "taccl %s%s @%s (own), CBC" % (
                base, "" if c == coll else " as " + c,
                bench_report.fmt_size(own or 0)), spec))
    return tasks, notes, extra


# ------------------------------------------------------------- running

class Runner:
    def __init__(self, bindir, work, jobs):
        self.synth = os.path.join(bindir, "taccl-synth")
        self.run = os.path.join(bindir, "taccl-run")
        self.work = work
        self.jobs = jobs
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0

    def sh(self, cmd, max_file=None):
        """Run cmd: (exit code, stdout, stderr, seconds).  max_file: no
        file it writes may pass that many bytes (ulimit -f; a write past it
        kills it with SIGXFSZ: exit code -SIGXFSZ)."""
        t0 = time.monotonic()
        if max_file:
            cmd = ["bash", "-c", 'ulimit -c 0 && ulimit -f %d && exec "$@"' % (
                max_file // 1024), "bash"] + cmd
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=TIMEOUT_S)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = -1, b"", b"timed out after %d s" % TIMEOUT_S
        return (rc, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"), time.monotonic() - t0)

    def progress(self, res):
        with self.lock:
            self.done += 1
            what = res["status"]
            if res["status"] == "ok":
                what = "ok, %d rows" % len(res["rows"])
            elif res.get("reason"):
                what += " (%s)" % res["reason"]
            print("bench: [%d/%d] %s %s: %s, %.1f s" % (
                self.done, self.total, res["key"], res["label"], what,
                res["synth_s"] + res["run_s"]), file=sys.stderr, flush=True)

    def task(self, sec, label, kind, arg):
        """The results of one task: the schedule asked for and, on the chip
        device, a variant with a power-of-two channel count when the
        default's chunk count can never divide a power-of-two size into
        whole DMA segments (a 6-ring ring on 8 ranks: 48 chunks)."""
        res = self.one(sec, label, kind, arg)
        out = [res]
        ch = pow2_channels(sec, res, arg) if kind == "algo" else None
        if ch:
            with self.lock:
                self.total += 1
            out.append(self.one(sec, "%s, %d channels" % (label, ch), kind,
                                arg + ["--channels", str(ch)]))
        return out

    def one(self, sec, label, kind, arg):
        """kind 'algo' (arg = taccl-synth arguments), 'sketch' (arg = path),
        'xml' (arg = an existing schedule) or 'nccl' (arg unused: NCCL's
        schedule, written for each size of the sweep)."""
        res = {"key": sec.key, "label": label, "kind": kind, "status": "ok",
               "reason": None, "synth_s": 0.0, "run_s": 0.0, "rows": [],
               "model": None, "commands": []}
        target = ["--target", sec.target] if sec.target else []
        if kind == "nccl":
            self.nccl(sec, res, target)
            return self.finish(res)
        if kind == "xml":
            xml = arg
        else:
            xml = os.path.join(self.work, "%s.%s.xml" % (
                sec.key, re.sub(r"[^A-Za-z0-9_.-]", "_", label)))
            if kind == "algo":
                cmd = [self.synth] + arg + [sec.topo_path, "--collective",
                                            sec.coll, "-o", xml, "-q"] + \
                    target
            else:
                res["spec"] = arg
                cmd = [self.synth, arg["path"], sec.topo_path, "-o", xml,
                       "-q", "--json", "--time-limit", str(arg["limit"]),
                       "--solver", arg["solver"]] + target
                if arg["size"] is not None:
                    cmd += ["--size", str(arg["size"])]
                if arg["coll"] != arg["own_coll"]:
                    cmd += ["--collective", arg["coll"]]
                if arg.get("instances", 1) != 1:
                    cmd += ["--instances", str(arg["instances"])]
            res["commands"].append(cmd)
            rc, out, err, secs = self.sh(cmd)
            res["synth_s"] = secs
            msg = first_line(err)
            if kind == "sketch":
                res["synth"] = parse_json(out)
                why = (res["synth"] or {}).get("error") or msg
                if rc == 2 and "not implemented" in err.lower():
                    res["status"], res["reason"] = "unavailable", why
                    return self.finish(res)
                if rc == 2 and arg["solver"] == "cbc" and \
                        "cbc" in err.lower():
                    res["status"], res["reason"] = "unavailable", why
                    return self.finish(res)
                # a size it refuses (not whole chunks, DMA segments) is
                # n/a; at the sketch's own size a refusal is a failure
                if rc == 2 and arg["size"] is not None and \
                        not re.search(r"unknown option|usage:", err):
                    res["status"], res["reason"] = "n/a", why
                    return self.finish(res)
            if rc == 2 and kind == "algo" and \
                    not re.search(r"unknown option|usage:", err):
                res["status"], res["reason"] = "n/a", msg
                return self.finish(res)
            if rc != 0 or not os.path.exists(xml):
                res["status"] = "failed"
                res["reason"] = "taccl-synth exit %d: %s" % (rc, msg)
                return self.finish(res)
        res["nchunks"] = nchunks(xml)
        ranges = sec.ranges
        if kind == "sketch" and arg["solver"] == "cbc":
            # CBC is timed, and its schedule checked at its own size only
            size = (res.get("synth") or {}).get("size_bytes")
            ranges = [(int(size), int(size))] if size else sec.ranges
        elif kind == "sketch":
            # the anchor itself is always run, even off a point sweep
            size = (res.get("synth") or {}).get("size_bytes")
            if size and not in_sweep(sec, int(size)):
                ranges = ranges + [(int(size), int(size))]
        for lo, hi in ranges:
            bad = self.sweep(sec, res, xml, lo, hi, target)
            if bad:
                res["status"], res["reason"] = "failed", bad
                break
        if sec.group == "chip" and res["status"] == "ok":
            self.device_facts(sec, res, xml, target)
        return self.finish(res)

    def sweep(self, sec, res, xml, lo, hi, target, nominal=None):
        """Run xml over lo..hi (powers of two) as the section runs every
        schedule; append its rows to res.  Returns why it failed, or None.
        nominal: the size a one-size run stands for, where the file runs at
        its own size (lo = hi) instead."""
        cmd = [self.run, xml, "--topo", sec.topo_path,
               "--sweep", "%d:%d" % (lo, hi), "--json", "--variants"] + target
        if sec.nodata:
            cmd.append("--no-data")
        cmd += sec.run_flags
        res["commands"].append(cmd)
        rc, out, err, secs = self.sh(cmd)
        res["run_s"] += secs
        obj = parse_json(out)
        if obj is None:
            return ("taccl-run exit %d, no JSON: %s" % (
                rc, first_line(err))).strip()
        rows = obj.get("rows")
        if rows is None and "time_us" in obj:      # single-size form
            rows = [obj]
        rows = rows or []
        size = nominal or lo
        for row in rows:
            row["nominal"] = size
            size *= 2
            if not row.get("verified"):
                na = dma_exempt(sec, row, res.get("nchunks"))
                if na:
                    row["na"] = na
        res["rows"].extend(rows)
        if obj.get("lower_bound_model"):
            res["model"] = obj["lower_bound_model"]
        wrong = [r for r in rows if not r.get("verified") and not r.get("na")]
        exempt = any(r.get("na") for r in rows)
        bad = None
        if wrong:
            w = wrong[0]
            bad = ("%d of %d sizes did not verify; at %s: %s "
                   "(%s wrong elements)" % (
                       len(wrong), len(rows),
                       bench_report.fmt_size(w.get("size_bytes") or lo),
                       w.get("error") or first_line(err), w.get("wrong")))
        elif rc == 2 or not rows:
            bad = "taccl-run exit %d: %s" % (
                rc, obj.get("error") or first_line(err))
        elif rc != 0 and not exempt:
            bad = "taccl-run exit %d though every row verified: %s" % (
                rc, obj.get("error") or first_line(err))
        return bad.strip() if bad else None

    def nccl(self, sec, res, target):
        """NCCL's own schedule depends on the size (its tuning picks ring
        or tree, the protocol and the channels for each call): at every
        size S of the sweep, `taccl-synth --algo nccl --size S`, then that
        file run at S alone.  A size it refuses is n/a at that size, every
        size refused (a chip device) n/a for the row; a file taccl-run
        could not hold in this machine's memory is n/a at its size."""
        res["nccl"] = {}
        res["nchunks_by_size"] = {}
        refused = []
        for size in sweep_sizes(sec):
            xml = os.path.join(self.work, "%s.nccl.%d.xml" % (sec.key, size))
            cmd = [self.synth, "--algo", "nccl", sec.topo_path,
                   "--collective", sec.coll, "--size", str(size), "-o", xml,
                   "-q", "--json"] + target
            res["commands"].append(cmd)
            # a file taccl-run could not read is not written to its end
            rc, out, err, secs = self.sh(cmd, max_file=XML_READER_MAX)
            res["synth_s"] += secs
            j = parse_json(out) or {}
            why = j.get("error") or first_line(err)
            na = None
            if rc == -signal.SIGXFSZ:
                na = "the schedule file passes 2 GB, more than taccl-run's " \
                    "XML reader takes"
            elif rc == 2 and not re.search(r"unknown option|usage:", err):
                na = re.sub(r"^nccl:\s*", "", why)
            elif rc != 0 or not os.path.exists(xml):
                res["status"] = "failed"
                res["reason"] = "taccl-synth --algo nccl --size %s exit %d: " \
                    "%s" % (bench_report.fmt_size(size), rc, why)
                return
            else:
                res["nccl"][size] = j.get("nccl")
                res["nchunks"] = res["nchunks_by_size"][size] = nchunks(xml)
                # at its own size: S rounded up to whole chunks (12 ring
                # channels of 8 ranks at 512 KiB: 96 chunks, 524544 B)
                own = j.get("size_bytes") or size
                na = too_big(xml)
            if na:
                refused.append(na)
                res["rows"].append({"size_bytes": size, "nominal": size,
                                    "na": na, "verified": False})
            else:
                bad = self.sweep(sec, res, xml, own, own, target,
                                 nominal=size)
                if bad:
                    res["status"] = "failed"
                    res["reason"] = "at %s: %s" % (bench_report.fmt_size(size),
                                                   bad)
            # up to a GB each, one at a time (and what a stopped
            # taccl-synth left: its X.xml.tmp.*)
            for f in glob.glob(glob.escape(xml) + "*"):
                os.remove(f)
            if res["status"] != "ok":
                return
        if refused and len(refused) == len(res["rows"]):
            res["status"] = "n/a"
            res["reason"] = "; ".join(dict.fromkeys(refused))
            res["rows"] = []

    def device_facts(self, sec, res, xml, target):
        """On the chip/cluster device: at the smallest size that verified,
        the transfers needing ChipSync / ClusterSync and, for AllReduce,
        whether f32 replicas came out bit-identical (seeds 1-3) — the case
        study's points, side by side per schedule."""
        ok = [r for r in res["rows"] if r.get("verified")]
        if not ok:
            return
        size = int(ok[0]["size_bytes"])
        base = [self.run, xml, "--topo", sec.topo_path, "--size", str(size),
                "--json"] + target
        res["commands"].append(base)
        rc, out, err, secs = self.sh(base)
        res["run_s"] += secs
        obj = parse_json(out) or {}
        dev = {"size": size, "time_us": obj.get("time_us"),
               "chip_syncs": obj.get("chip_syncs"),
               "cluster_syncs": obj.get("cluster_syncs"),
               "replicas_identical": None}
        if sec.coll == "allreduce":
            same = True
            for seed in (1, 2, 3):
                cmd = base + ["--dtype", "f32", "--seed", str(seed)]
                res["commands"].append(cmd)
                rc, out, err, secs = self.sh(cmd)
                res["run_s"] += secs
                o = parse_json(out) or {}
                if not o.get("verified"):
                    res["status"] = "failed"
                    res["reason"] = "f32 seed %d did not verify: %s" % (
                        seed, o.get("error") or first_line(err))
                    return
                same = same and o.get("replicas_identical") is True
            dev["replicas_identical"] = same
        res["device"] = dev

    def finish(self, res):
        self.progress(res)
        return res

    def run_all(self, tasks):
        self.total = len(tasks)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futs = [pool.submit(self.task, *t) for t in tasks]
            return [f.result() for f in futs]


def sweep_sizes(sec):
    """Every size the section runs: each power of two of each range."""
    return [size for lo, hi in sec.ranges
            for size in bench_report.pow2_sizes(lo, hi)]


# taccl-run's peak memory per byte of schedule file, rounded up (measured:
# NCCL's 8-channel AllGather on the 1024-rank torus, a 1.03 GB file, peaks
# at 0.67 GB timing-only)
RUN_MEMORY_PER_FILE_BYTE = 1


# the largest file taccl-run's XML reader takes (src/sched/xml_read.c).
# NCCL's schedule grows with the size (a step per slice of the buffer): on
# the 1024-rank torus at 64 GiB per rank it is 8.4 GB, so taccl-synth is
# stopped there rather than left to write it.
XML_READER_MAX = (1 << 31) - 1


def too_big(xml):
    """Why taccl-run cannot run this file on this machine (more memory than
    the machine has), or None."""
    size = os.path.getsize(xml)
    need = size * RUN_MEMORY_PER_FILE_BYTE
    have = mem_total()
    if not have or need <= have:
        return None
    return ("the schedule file is %.2f GB: taccl-run would need ~%.0f GB, "
            "more than this machine's %.0f GB" % (
                size / 1e9, need / 1e9, have / 1e9))


def mem_total():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def pow2_channels(sec, res, args):
    """A power-of-two channel count to retry a DMA-device schedule with,
    or None when the default is fine."""
    def pow2(x):
        return x > 0 and x & (x - 1) == 0
    chunks = res.get("nchunks")
    if not sec.dma_bytes or "--channels" in args or res["status"] != "ok" \
            or not chunks or pow2(chunks) or not pow2(sec.ranks):
        return None
    per = chunks // sec.ranks
    if per < 2:
        return None
    ch = 1
    while ch * 2 <= per:
        ch *= 2
    return ch


def dma_exempt(sec, row, chunks):
    """Why an unverified row is expected not to run, or None.

    On the chip/cluster device DMA moves whole dma_bytes segments, so a
    schedule cannot run at a size whose chunk (size / nchunksperloop) is
    not a whole number of segments: that size is n/a for this schedule,
    not a failure.  Only that case, checked by arithmetic and by the
    executor's own message, is exempt."""
    seg = sec.dma_bytes
    size = row.get("size_bytes")
    if not seg or not chunks or not size:
        return None
    if "DMA" not in (row.get("error") or ""):
        return None
    chunk = size / chunks
    if chunk == int(chunk) and int(chunk) % seg == 0:
        return None
    return "chunk %s B is not whole %d-byte DMA segments" % (
        ("%d" % chunk) if chunk == int(chunk) else ("%.1f" % chunk), seg)


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return re.sub(r"^taccl-(synth|run):\s*", "", line)
    return ""


def parse_json(text):
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text, strict=False)
    except ValueError:
        return None


def nchunks(xml):
    try:
        with open(xml, encoding="utf-8", errors="replace") as f:
            m = re.search(r'nchunksperloop="(\d+)"', f.read(4096))
        return int(m.group(1)) if m else None
    except OSError:
        return None


def cost(task):
    """Rough relative run time, to start the slow tasks first (a synthesis
    may take up to two time limits)."""
    sec, kind = task[0], task[2]
    top = max(hi for _, hi in sec.ranges)
    c = sec.ranks * sec.ranks * (1 + (0 if sec.nodata else top / GIB))
    if kind == "sketch":
        c += 2 * task[3]["limit"] * 1000
    return c


def git_commit():
    def git(*a):
        try:
            return subprocess.run(["git", "-C", ROOT] + list(a),
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL,
                                  timeout=30).stdout.decode().strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + (" + uncommitted changes" if dirty else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", help="run only sections whose key matches")
    ap.add_argument("--command", default="scripts/bench.sh")
    ap.add_argument("--via-make", action="store_true",
                    help="the command was run by make bench")
    ap.add_argument("--topo", help="a user's topology: benchmark it instead "
                    "of the bundled configurations")
    ap.add_argument("--sketch", action="append", default=[],
                    help="with --topo: a sketch to synthesize (repeatable)")
    ap.add_argument("--collectives", default="allgather,reducescatter,"
                    "allreduce,alltoall",
                    help="with --topo: which collectives (comma or space "
                    "separated)")
    a = ap.parse_args()
    t0 = time.monotonic()
    for tool in ("taccl-run", "taccl-synth"):
        if not os.access(os.path.join(a.bin, tool), os.X_OK):
            sys.exit("bench: %s/%s is missing (make all)" % (a.bin, tool))
    if a.topo:
        colls = [c for c in re.split(r"[,\s]+", a.collectives) if c]
        bad = [c for c in colls if c not in COLL_TITLE]
        if bad or not colls:
            sys.exit("bench: COLLECTIVES: expected some of %s, got %r"
                     % (", ".join(COLL_TITLE), a.collectives))
        if not os.path.isfile(a.topo):
            sys.exit("bench: TOPO: no such file: %s" % a.topo)
        for sk in a.sketch:
            if not os.path.isfile(sk):
                sys.exit("bench: SKETCHES: no such file: %s" % sk)
        secs = user_sections(a.topo, colls, a.quick)
        sk_tasks, sk_notes, extra = sketch_tasks(
            secs, a.quick, paths=[os.path.abspath(x) for x in a.sketch],
            user_topo=secs[0].topo, user_path=secs[0].path)
    else:
        secs = sections(a.quick)
        sk_tasks, sk_notes, extra = sketch_tasks(secs, a.quick)
    if a.only:
        secs = [s for s in secs if re.search(a.only, s.key)]
        extra = [s for s in extra if re.search(a.only, s.key)]
        sk_tasks = [t for t in sk_tasks if re.search(a.only, t[0].key)]
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taccl-bench.") as work:
        runner = Runner(a.bin, work, max(1, a.jobs))
        secs += extra
        tasks = []
        for s in secs:
            algos = [(s, label, "algo", args) for label, args, colls
                     in ALGOS if colls is None or s.coll in colls]
            # NCCL's own schedule, beside our ring (a row of its own)
            tasks += algos[:1] + [(s, "nccl", "nccl", None)] + algos[1:]
            tasks += [(s, label, "xml", path) for label, path in s.extras]
        tasks += [(s, label, "sketch", path) for s, label, path in sk_tasks]
        order = sorted(range(len(tasks)), key=lambda i: -cost(tasks[i]))
        done = runner.run_all([tasks[i] for i in order])
        results = [None] * len(tasks)
        for i, r in zip(order, done):
            results[i] = r
        results = [r for rs in results for r in rs]
        calib = {}
        if not a.topo:
            print("bench: calibration: protocols and model variants",
                  file=sys.stderr)
            calib = bench_calib.experiments(
                runner, work, secs, results, bench_ref.CALIBRATION,
                bench_report.Data(secs, results))
        meta = {
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "nproc": os.cpu_count(),
            "machine": os.uname().machine,
            "kernel": os.uname().sysname + " " + os.uname().release,
            "cpu": cpu_model(),
            "commit": git_commit(),
            "command": a.command,
            "via_make": a.via_make,
            "quick": a.quick,
            "jobs": runner.jobs,
            "wall_s": time.monotonic() - t0,
            "sketch_notes": sk_notes,
            "synth_limit_s": SYNTH_LIMIT_QUICK_S if a.quick
            else SYNTH_LIMIT_S,
            "anchors": [] if a.quick else list(ANCHORS),
            "partial": bool(a.only),
            "groups": GROUPS if not a.topo else [
                ("user", "%s (%d ranks)" % (secs[0].topo, secs[0].ranks))],
            "user_topo": a.topo,
            "calib": calib,
        }
        failed = bench_report.write_all(a.out, work, secs, results, meta)
    print("bench: wrote %s and its plots" % os.path.join(a.out, "results.md"),
          file=sys.stderr)
    if failed:
        print("bench: FAILED: %d schedule(s) did not verify or a tool "
              "failed; see %s" % (failed, os.path.join(a.out, "results.md")),
              file=sys.stderr)
        return 1
    return 0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
