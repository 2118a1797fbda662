#!/usr/bin/env python3
"""bench_run.py — run the benchmark and write bench/results.md and plots.

For every configuration of ../shared/BENCH.md (a topology and a collective)
it writes each baseline schedule with `taccl-synth --algo A`, runs it with
`taccl-run --sweep LO:HI --json` over the configuration's sizes, and hands
the rows to bench_report.py, which puts them beside the published figures.
An algorithm that does not apply (taccl-synth exits 2, e.g. butterfly on a
non-power-of-two rank count) is listed as "n/a (reason)".  Schedules from
the synthesizer proper (`taccl-synth SKETCH TOPO`) are included when it
works; until then the report says "synthesizer: not yet available".

Anything that should verify and does not (taccl-run exit 1 or a row with
verified false), any tool crash, timeout or unusable output, fails the run:
the report is still written (naming the failures) and the exit code is 1.

    bench_run.py --bin DIR [--out DIR] [--quick] [--jobs N] [--only REGEX]
                 [--command TEXT] [--via-make]

Python 3 standard library only.  Called by scripts/bench.sh.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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

# Report groups, in order: (id, title).
GROUPS = [
    ("ndv2-x2", "NDv2 ×2 (16 GPUs)"),
    ("dgx2-x2", "DGX-2 ×2 (32 GPUs)"),
    ("ndv2-x4", "NDv2 ×4 (32 GPUs)"),
    ("tacos", "TACOS direct-connect networks (AllGather)"),
    ("chip", "Chip/cluster device (case study)"),
    ("synth", "Synthesized schedules on other configurations"),
]

COLL_TITLE = {"allgather": "AllGather", "alltoall": "AllToAll",
              "reducescatter": "ReduceScatter", "allreduce": "AllReduce"}


class Section:
    """One table and one plot: a topology, a collective, sizes, algorithms."""

    def __init__(self, group, topo, coll, ranges, nodata=False, target=None,
                 extras=(), title=None, note=None, run_flags=()):
        self.group = group
        self.topo = topo                      # stem of topologies/<topo>.json
        self.coll = coll
        self.key = "%s-%s" % (topo, coll)
        self.ranges = ranges                  # [(lo, hi)] power-of-two sweeps
        self.nodata = nodata                  # timing only at every size
        self.target = target                  # None or "unlimited"
        self.extras = list(extras)            # [(label, schedules/X.xml)]
        self.title = title or "%s on %s" % (COLL_TITLE[coll], topo)
        self.note = note
        self.run_flags = list(run_flags)      # more taccl-run flags
        self.ranks, self.dma_bytes = topo_facts(topo)

    @property
    def topo_path(self):
        return os.path.join(ROOT, "topologies", self.topo + ".json")


def topo_facts(stem):
    """(rank count, DMA segment bytes or 0) of topologies/<stem>.json."""
    with open(os.path.join(ROOT, "topologies", stem + ".json")) as f:
        t = json.load(f)
    dev = t.get("device") or {}
    dma = dev.get("dma_bytes", 0) if dev.get("kind") == "chip" else 0
    return t["nodes"] * t["ranks_per_node"], dma


def topo_ranks(stem):
    return topo_facts(stem)[0]


def points(*sizes):
    return [(s, s) for s in sizes]


def sections(quick):
    """Every configuration BENCH.md asks for, with its sizes."""
    gpu = points(KIB, 64 * KIB, MIB, GIB) if quick else [(KIB, GIB)]
    chip = points(KIB, 32 * KIB, MIB) if quick else [(KIB, MIB)]
    out = []
    for coll in ("allgather", "alltoall", "allreduce"):
        out.append(Section("ndv2-x2", "ndv2-x2", coll, gpu))
    for coll in ("allgather", "allreduce"):
        out.append(Section("dgx2-x2", "dgx2-x2", coll, gpu))
    out.append(Section("ndv2-x4", "ndv2-x4", "allgather", gpu))
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


def sketch_tasks(secs, quick):
    """(section, label, sketch path) for every bundled sketch, notes on the
    sketches left out, and the new sections for configurations the
    benchmark does not list itself."""
    tasks, notes, extra = [], [], []
    for path in sorted(glob.glob(os.path.join(ROOT, "sketches", "*.json"))):
        try:
            with open(path) as f:
                sk = json.load(f)
        except (OSError, ValueError) as e:
            notes.append("%s: unreadable (%s)" % (os.path.basename(path), e))
            continue
        topo = sketch_topology(path, sk)
        if topo is None:
            notes.append("%s: no topology paired with it (see "
                         "sketch_topology in scripts/bench_run.py)"
                         % os.path.basename(path))
            continue
        coll = str(sk.get("collective", "allgather")).lower()
        coll = coll.replace("_", "").replace("-", "")
        if coll not in COLL_TITLE:
            notes.append("%s: unknown collective %r" % (path, coll))
            continue
        sec = next((s for s in secs + extra
                    if s.topo == topo and s.coll == coll), None)
        if sec is None:
            gpu = points(KIB, MIB, GIB) if quick else [(KIB, GIB)]
            sec = Section("synth", topo, coll, gpu)
            extra.append(sec)
        # TODO(synthesizer): TACCL's Table 2 runs one sketch for several
        # collectives; here each sketch runs for its own "collective" only.
        label = "taccl " + os.path.splitext(os.path.basename(path))[0]
        tasks.append((sec, label, path))
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

    def sh(self, cmd):
        t0 = time.monotonic()
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
        """kind 'algo' (arg = taccl-synth arguments), 'sketch' (arg = path)
        or 'xml' (arg = an existing schedule)."""
        res = {"key": sec.key, "label": label, "kind": kind, "status": "ok",
               "reason": None, "synth_s": 0.0, "run_s": 0.0, "rows": [],
               "model": None, "commands": []}
        target = ["--target", sec.target] if sec.target else []
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
                cmd = [self.synth, arg, sec.topo_path, "-o", xml]
            res["commands"].append(cmd)
            rc, _, err, secs = self.sh(cmd)
            res["synth_s"] = secs
            msg = first_line(err)
            if rc == 2 and kind == "sketch" and \
                    "not implemented" in err.lower():
                res["status"], res["reason"] = "unavailable", msg
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
        for lo, hi in sec.ranges:
            cmd = [self.run, xml, "--topo", sec.topo_path,
                   "--sweep", "%d:%d" % (lo, hi), "--json"] + target
            if sec.nodata:
                cmd.append("--no-data")
            cmd += sec.run_flags
            res["commands"].append(cmd)
            rc, out, err, secs = self.sh(cmd)
            res["run_s"] += secs
            obj = parse_json(out)
            bad = None
            if obj is None:
                bad = "taccl-run exit %d, no JSON: %s" % (rc, first_line(err))
            else:
                rows = obj.get("rows")
                if rows is None and "time_us" in obj:      # single-size form
                    rows = [obj]
                rows = rows or []
                size = lo
                for row in rows:
                    row["nominal"] = size
                    size *= 2
                    if not row.get("verified"):
                        na = dma_exempt(sec, row, res["nchunks"])
                        if na:
                            row["na"] = na
                res["rows"].extend(rows)
                if obj.get("lower_bound_model"):
                    res["model"] = obj["lower_bound_model"]
                wrong = [r for r in rows
                         if not r.get("verified") and not r.get("na")]
                exempt = any(r.get("na") for r in rows)
                if wrong:
                    w = wrong[0]
                    bad = ("%d of %d sizes did not verify; at %s: %s "
                           "(%s wrong elements)" % (
                               len(wrong), len(rows),
                               bench_report.fmt_size(w.get("size_bytes", 0)),
                               w.get("error") or first_line(err),
                               w.get("wrong")))
                elif rc == 2 or not rows:
                    bad = "taccl-run exit %d: %s" % (
                        rc, obj.get("error") or first_line(err))
                elif rc != 0 and not exempt:
                    bad = "taccl-run exit %d though every row verified: %s" % (
                        rc, obj.get("error") or first_line(err))
            if bad:
                res["status"], res["reason"] = "failed", bad.strip()
                break
        return self.finish(res)

    def finish(self, res):
        self.progress(res)
        return res

    def run_all(self, tasks):
        self.total = len(tasks)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futs = [pool.submit(self.task, *t) for t in tasks]
            return [f.result() for f in futs]


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


def cost(sec):
    """Rough relative run time, to start the slow tasks first."""
    top = max(hi for _, hi in sec.ranges)
    return sec.ranks * sec.ranks * (1 + (0 if sec.nodata else top / GIB))


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
    a = ap.parse_args()
    t0 = time.monotonic()
    for tool in ("taccl-run", "taccl-synth"):
        if not os.access(os.path.join(a.bin, tool), os.X_OK):
            sys.exit("bench: %s/%s is missing (make all)" % (a.bin, tool))
    secs = sections(a.quick)
    sk_tasks, sk_notes, extra = sketch_tasks(secs, a.quick)
    if a.only:
        secs = [s for s in secs if re.search(a.only, s.key)]
        extra = [s for s in extra if re.search(a.only, s.key)]
        sk_tasks = [t for t in sk_tasks if re.search(a.only, t[0].key)]
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taccl-bench.") as work:
        runner = Runner(a.bin, work, max(1, a.jobs))
        # Probe the synthesizer with the first sketch: while it is not
        # implemented, the other sketches (and the configurations only they
        # would add) are skipped.
        probe = []
        if sk_tasks:
            s0, label0, path0 = sk_tasks[0]
            runner.total = 1
            probe = [runner.one(s0, label0, "sketch", path0)]
            if probe[0]["status"] == "unavailable":
                for s1, label1, _ in sk_tasks[1:]:
                    r = dict(probe[0], key=s1.key, label=label1,
                             commands=[])
                    probe.append(r)
                sk_tasks, extra = [], []
            else:
                sk_tasks = sk_tasks[1:]
            runner.done = 0
        secs += extra
        tasks = []
        for s in secs:
            tasks += [(s, label, "algo", args) for label, args, colls
                      in ALGOS if colls is None or s.coll in colls]
            tasks += [(s, label, "xml", path) for label, path in s.extras]
        tasks += [(s, label, "sketch", path) for s, label, path in sk_tasks]
        order = sorted(range(len(tasks)), key=lambda i: -cost(tasks[i][0]))
        done = runner.run_all([tasks[i] for i in order])
        results = [None] * len(tasks)
        for i, r in zip(order, done):
            results[i] = r
        results = probe + [r for rs in results for r in rs]
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
            "partial": bool(a.only),
            "groups": GROUPS,
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
