#!/usr/bin/env python3
"""bench_nccl_model.py — our executor's time of NCCL's schedule beside NCCL's own tuning estimate.

Issue 41 item 4b.  For every bundled GPU machine (topologies/*.json whose
device is a GPU; the chip/cluster devices and the TACOS tori and meshes are
skipped: they are networks, not machines NCCL runs on), each collective
(allgather, reducescatter, allreduce) and each size, `taccl-synth --algo
nccl TOPO --collective C --size S --json -o F.xml` builds what NCCL runs
(its tuning model's algorithm, protocol and channels; on an NVLS machine
the best choice without NVLS, which MSCCL XML can express: the row says
NCCL would run NVLS; the page's last section writes those calls again with
--target mscclpp, NVLS and two-node NVLSTree as MSCCL++ plans, and times
them beside NCCL's estimate of them) and reports NCCL's own estimate for that pick
(nccl.estimate_us); `taccl-run F.xml --topo TOPO --size S' --no-data --json`
times the file (time_us) at its own size S' (taccl-synth's size_bytes: S
rounded up to whole chunks).  ratio = executor / NCCL's estimate; a row is
within tolerance when 1/1.25 <= ratio <= 1.25.

For each row outside, the same file is run again under one changed
assumption of the model at a time (VARIANTS below: the protocol
efficiencies, per-hop latency, alpha as occupancy or delay, NCCL's base
latency per call, the runtimes' tiles, switch ports, arbitration), and the
ratio under each is recorded.  Rows outside are grouped by NCCL's algorithm
and protocol, one node or several, and which side is slower; each group's
dominant cause is the variant that brings most of its rows within
tolerance (ties: the smaller median |log ratio|).  The model without the
runtime's latency (no-rt-lat, the default before it) and NCCL's latency
model (nccl-lat, the evidence for it) are also run on every row within, and
the summary counts the rows within under each.

    scripts/bench_nccl_model.py BIN_DIR [--out bench/nccl-model.md] [--json F]
        [--sizes 1K,4K,...] [--all-sizes] [--only REGEX] [--jobs N]
        [--no-variants] [--from-json FILE]

--sizes: comma-separated sizes (K/M/G powers of 1024); default every other
  power of two, 1K, 4K, 16K, ..., 1G (11 sizes: 4 to 8 minutes on two
  shared cores with the variants); --all-sizes: every power 1K-1G (21).
--only REGEX: only rows whose "machine collective" matches.
--no-variants: the table only, no runs under changed assumptions.
--from-json FILE: write the page (and --json) again from FILE, running nothing.
Exit 0 when every row ran; 1 when a tool could not be run or a row failed.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_calib   # noqa: E402  (variant_topology, BASE_LAT_US: the calibration's variants)
import bench_report  # noqa: E402  (table(): a long cell becomes a numbered note)
from bench_mscclpp import parse_size, sh, size_name  # noqa: E402

COLLS = ["allgather", "reducescatter", "allreduce"]
TOL = 1.25
SAMPLED = ",".join(n for n in ("1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M",
                               "256M", "1G"))
ALL = ",".join("%d%s" % (1 << (e % 10), "KMG"[e // 10 - 1]) for e in range(10, 31))

# NCCL's bandwidth factor of an algorithm and protocol against the
# executor's own (cost.c nccl_ring_bw: Simple 1, LL 0.5, LL128 0.92, the
# ring's for every algorithm): NCCL's tree LL busBw / 3.8, tree LL128
# x 7/9 on one node and x 120/128 on several, tree AllReduce x 0.92
# (src/synth/nccl_tune.c model_bw, NVIDIA/nccl src/graph/tuning.cc), and
# its tree AllReduce correction by size (nccl_tune.c TREE_CORRECTION, rows
# LL, LL128, Simple; index log2(bytes / 64)).
EXEC_EFF = {"Simple": 1.0, "LL": 0.5, "LL128": 0.92}
TREE_CORRECTION = {
    "LL": [1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0,
           1.0, 1.0, 1.0],
    "LL128": [1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9,
              .9, .9, 1.0, 1.0],
    "Simple": [.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7,
               .8, .9, .9],
}

# NCCL's per-step hardware latencies (us), NVLink and network, by algorithm
# and protocol (src/synth/nccl_tune.c HW_LAT_NVLINK, HW_LAT_NET: NVIDIA/nccl
# src/graph/tuning.cc hwLatencies), and on several nodes a ring's NVLink step
# at least NCCL's network overhead, 1 us (x 3 under Simple: getNetOverhead,
# nccl_tune.c model_lat).  The executor scales a hop's alpha (given for
# Simple) by the ring's latency ratios (cost.c nccl_ring_lat), so the
# nccl-lat variant gives every hop the Simple alpha that scales to NCCL's.
HW_LAT = {"nvlink": {"tree": {"LL": 0.6, "LL128": 1.25, "Simple": 4.0},
                     "ring": {"LL": 0.6, "LL128": 1.9, "Simple": 3.4}},
          "net": {"tree": {"LL": 5.0, "LL128": 8.5, "Simple": 14.0},
                  "ring": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0}}}

VARIANTS = [
    ("no-rt-lat", "no runtime latency: the topology without its runtime_latency (the hops' "
                  "alpha alone, no per-step or per-call latency of the runtime: the default "
                  "before 2026-12-06)"),
    ("nccl-lat", "NCCL's latency model: each hop's alpha NCCL's per-step latency for the "
                 "algorithm and protocol (tree LL128 1.25 us NVLink, 8.5 network; ring LL "
                 "on several nodes 1 us NVLink, its network overhead), as latency only "
                 "(alpha_mode delay), plus NCCL's base latency per call"),
    ("eff", "NCCL's bandwidth factors: every link, switch and NIC bandwidth x NCCL's factor for "
            "the algorithm and protocol (tree LL / 3.8, tree LL128 x 7/9 on one node, tree "
            "AllReduce x 0.92 and its correction by size) over the executor's (the ring's: LL "
            "0.5, LL128 0.92)"),
    ("latency", "NCCL's per-step latency as every hop's alpha (3.4 us NVLink, 14 us network, "
                "Simple; LL and LL128 scaled as usual) instead of the topology's (0.35-2.6 us)"),
    ("delay", "alpha as latency only (alpha_mode delay) instead of holding the hop's link, "
              "switch port or NIC for alpha + bytes / B"),
    ("launch", "NCCL's base latency per call added to the executor's time without its "
               "runtime latency (tree LL 6.8, LL128 14, Simple 8.4 us; ring LL 6.6, LL128 14, "
               "Simple 8.4)"),
    ("latency+launch", "both the latency and the launch changes"),
    ("latency+delay+launch", "NCCL's per-step latency as latency only, plus its base latency"),
    ("steps", "the program once, each step one transfer (taccl-run --steps; the default is "
              "the runtimes' tile passes)"),
    ("ports", "switch ports not shared: each switch as a link per pair of its ranks"),
    ("reserve", "arbitration reserve: a transfer books its resources ahead and they idle "
                "until then"),
]
ARITH = {"launch": "no-rt-lat", "latency+launch": "latency",
         "latency+delay+launch": "latency+delay"}


def machines():
    """(GPU machines, skipped with why)."""
    out, skipped = [], []
    for f in sorted(os.listdir(os.path.join(ROOT, "topologies"))):
        if not f.endswith(".json"):
            continue
        t = json.load(open(os.path.join(ROOT, "topologies", f)))
        kind = t.get("device", {}).get("kind")
        if kind != "gpu":
            skipped.append((f[:-5], "a %s device" % kind))
        elif re.match(r"(torus|mesh)-", f):
            skipped.append((f[:-5], "a TACOS network (torus or mesh), not a machine NCCL runs on"))
        else:
            out.append((f[:-5], t.get("nodes", 1)))
    return out, skipped


def last_line(s, rc):
    return (s.strip().splitlines() or ["exit %d" % rc])[-1]


def run(bin_dir, xml, topo, size, extra=()):
    args = [os.path.join(bin_dir, "taccl-run"), xml, "--topo", topo, "--size", str(size),
            "--no-data", "--json"] + list(extra)
    rc, out, err = sh(args)
    try:
        d = json.loads(out)
    except ValueError:
        return None, last_line(err, rc)
    if rc != 0 or d.get("time_us") is None:
        return None, d.get("error") or last_line(err, rc)
    return d["time_us"], None


def eff_factor(algo, proto, coll, nodes, size):
    """NCCL's bandwidth factor over the executor's for this pick."""
    f = 1.0
    if algo == "tree":
        if proto == "LL":
            f = (1 / 3.8) / EXEC_EFF["LL"]
        elif proto == "LL128":
            f = (7 / 9 if nodes == 1 else 120 / 128) / EXEC_EFF["LL128"]
        if coll == "allreduce":
            f *= 0.92
            lg = int(math.log2(size >> 6)) if size >> 6 else -1
            if 0 <= lg < 23:
                f *= TREE_CORRECTION[proto][lg]
    return f


def scaled_topology(path, f, out):
    t = json.load(open(path))
    for g in ("links", "switches", "nics"):
        for e in t.get(g, []):
            if "bandwidth_gbps" in e:
                e["bandwidth_gbps"] *= f
    t["name"] = "%s-eff" % t.get("name", "topo")
    with open(out, "w") as fo:
        json.dump(t, fo)


def nccl_lat_topology(path, algo, proto, nodes, out):
    t = json.load(open(path))
    nv, net = HW_LAT["nvlink"][algo][proto], HW_LAT["net"][algo][proto]
    if algo == "ring" and nodes > 1:
        nv = max(nv, 1.0 * (3 if proto == "Simple" else 1))
    ring = {k: HW_LAT[k]["ring"] for k in HW_LAT}
    for g, lat in (("links", nv * 3.4 / ring["nvlink"][proto]),
                   ("switches", nv * 3.4 / ring["nvlink"][proto]),
                   ("nics", net * 14.0 / ring["net"][proto])):
        for e in t.get(g, []):
            e.pop("alpha", None)
            e["alpha_us"] = lat
    t["alpha_mode"] = "delay"
    t.pop("runtime_latency", None)     # NCCL's latencies instead of the runtime's
    t["name"] = "%s-nccl-lat" % t.get("name", "topo")
    with open(out, "w") as fo:
        json.dump(t, fo)


def variants(a, row, xml, topo, work, stem, only=None):
    """{variant: ratio under it (or None: does not apply / failed)}; only:
    these variants."""
    est, size, base = row["estimate_us"], row["run_size"], row["time_us"]
    times = {}
    cache = {}

    def topo_run(which):
        if which in cache:
            return cache[which]
        vt = os.path.join(work, "%s.%s.json" % (stem, which))
        us = None
        if bench_calib.variant_topology(topo, which, vt):
            us, _ = run(a.bin, xml, vt, size)
            os.remove(vt)
        cache[which] = us
        return us

    for name, _ in VARIANTS:
        if only and name not in only:
            continue
        us = None
        if name == "eff":
            f = eff_factor(row["algo"], row["proto"], row["collective"], row["nodes"], row["size"])
            if abs(f - 1) > 1e-9:
                vt = os.path.join(work, stem + ".eff.json")
                scaled_topology(topo, f, vt)
                us, _ = run(a.bin, xml, vt, size)
                os.remove(vt)
        elif name == "nccl-lat":
            vt = os.path.join(work, stem + ".nccl-lat.json")
            nccl_lat_topology(topo, row["algo"], row["proto"], row["nodes"], vt)
            t, _ = run(a.bin, xml, vt, size)
            os.remove(vt)
            lat = bench_calib.BASE_LAT_US.get(row["algo"], {}).get(row["proto"])
            if t is not None and lat is not None:
                us = t + lat
        elif name in ARITH:
            t = base if ARITH[name] is None else topo_run(ARITH[name])
            lat = bench_calib.BASE_LAT_US.get(row["algo"], {}).get(row["proto"])
            if t is not None and lat is not None:
                us = t + lat
        elif name == "steps":
            us, _ = run(a.bin, xml, topo, size, ["--steps"])
        else:
            us = topo_run(name)
        times[name] = us
    return {k: (v / est if v is not None and est else None) for k, v in times.items()}


def case(a, machine, nodes, coll, size, work):
    topo = os.path.join(ROOT, "topologies", machine + ".json")
    stem = "%s-%s-%d" % (machine, coll, size)
    xml = os.path.join(work, stem + ".xml")
    row = {"machine": machine, "nodes": nodes, "collective": coll, "size": size,
           "synth": "taccl-synth --algo nccl topologies/%s.json --collective %s --size %d --json "
                    "-o F.xml" % (machine, coll, size),
           "run": "taccl-run F.xml --topo topologies/%s.json --size SIZE_BYTES --no-data --json "
                  "(SIZE_BYTES: taccl-synth's size_bytes)" % machine}
    rc, so, se = sh([os.path.join(a.bin, "taccl-synth"), "--algo", "nccl", topo, "--collective",
                     coll, "--size", str(size), "--json", "-q", "-o", xml])
    try:
        d = json.loads(so)
    except ValueError:
        d = {}
    if rc != 0 or "nccl" not in d:
        row["error"] = "taccl-synth: " + (d.get("error") or last_line(se, rc))
        return row
    n = d["nccl"]
    row.update(algo=n["algo"], proto=n["proto"], channels=n["channels"],
               estimate_us=n["estimate_us"], nvls="NCCL would run NVLS" in (d.get("note") or ""))
    # the file's size: taccl-synth rounds --size up to whole chunks (a
    # 12-channel ring on 8 ranks has 96 chunks a loop); NCCL's estimate is
    # for --size itself (at most a few KiB less)
    row["run_size"] = d.get("size_bytes") or size
    row["time_us"], err = run(a.bin, xml, topo, row["run_size"])
    if err:
        row["error"] = "taccl-run: " + err
    else:
        row["ratio"] = row["time_us"] / row["estimate_us"]
        if not a.no_variants:
            # every variant for a row outside; NCCL's latency model and the
            # model without the runtime's latency (the default before it)
            # for every row
            row["variants"] = variants(a, row, xml, topo, work, stem,
                                       None if not within(row["ratio"])
                                       else ["no-rt-lat", "nccl-lat"])
    os.remove(xml)
    if row["nvls"]:
        switch_plan(a, row, topo, work, stem)
    return row


def switch_plan(a, row, topo, work, stem):
    """Where NCCL would run NVLS or NVLSTree: what it runs, as an MSCCL++
    plan of switch operations (--target mscclpp), timed the same way beside
    NCCL's estimate of it, by default and with alpha as latency (delay).
    Sets row["plan"]; nothing when the plan holds NCCL's best choice
    without the switch too (NVLSTree on more than two nodes)."""
    f = os.path.join(work, stem + ".json")
    rc, so, se = sh([os.path.join(a.bin, "taccl-synth"), "--algo", "nccl", topo, "--collective",
                     row["collective"], "--size", str(row["size"]), "--json", "-q",
                     "--target", "mscclpp", "-o", f])
    try:
        d = json.loads(so)
    except ValueError:
        d = {}
    n = d.get("nccl") or {}
    if rc != 0 or n.get("algo") not in ("nvls", "nvlstree"):
        if os.path.exists(f):
            os.remove(f)
        if rc != 0:
            row["plan"] = {"error": "taccl-synth --target mscclpp: " + (
                d.get("error") or last_line(se, rc))}
        return
    pl = {"algo": n["algo"], "channels": n["channels"], "estimate_us": n["estimate_us"],
          "run_size": d.get("size_bytes") or row["size"]}
    pl["time_us"], err = run(a.bin, f, topo, pl["run_size"])
    if err:
        pl["error"] = "taccl-run: " + err
    else:
        pl["ratio"] = pl["time_us"] / pl["estimate_us"]
        vt = os.path.join(work, stem + ".plan.delay.json")
        if bench_calib.variant_topology(topo, "delay", vt):
            t, _ = run(a.bin, f, vt, pl["run_size"])
            os.remove(vt)
            pl["delay_ratio"] = t / pl["estimate_us"] if t is not None else None
    os.remove(f)
    row["plan"] = pl


def within(r):
    return r is not None and 1 / TOL <= r <= TOL


def dist(r):
    return abs(math.log(r)) if r else float("inf")


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else math.sqrt(xs[m - 1] * xs[m])


def group_key(r):
    return "%s %s, %s, executor %s" % (r["algo"], r["proto"],
                                       "one node" if r["nodes"] == 1 else "several nodes",
                                       "slower" if r["ratio"] > TOL else "faster")


def arg_parser(doc, page):
    """The options this script shares with bench_nccl_published.py: BIN,
    --out (default build/bench/PAGE), --json, --only, --no-variants,
    --from-json, --command."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(doc.split("\n")[2:]))
    ap.add_argument("bin", help="folder holding taccl-synth and taccl-run (build/bin)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", page))
    ap.add_argument("--json", dest="json_out", default=None,
                    help="the rows as JSON (default: --out with .json)")
    ap.add_argument("--only", default=None)
    ap.add_argument("--no-variants", action="store_true")
    ap.add_argument("--from-json", default=None)
    ap.add_argument("--command", default=None, help="the command to name in the page")
    return ap


def main():
    ap = arg_parser(__doc__, "nccl-model.md")
    ap.add_argument("--sizes", default=None, help="default every other power of two, 1K-1G")
    ap.add_argument("--all-sizes", action="store_true", help="every power of two 1K-1G")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    if a.from_json:
        d = json.load(open(a.from_json))
        a.command = a.command or d["command"]
        write(a, d["rows"], d["skipped"])
        return 0
    sizes_s = a.sizes or (ALL if a.all_sizes else SAMPLED)
    sizes = [parse_size(s) for s in sizes_s.split(",") if s]
    for tool in ("taccl-synth", "taccl-run"):
        if not os.access(os.path.join(a.bin, tool), os.X_OK):
            sys.exit("bench_nccl_model: %s/%s is missing (run make all)" % (a.bin, tool))
    only = re.compile(a.only) if a.only else None
    ms, skipped = machines()
    todo = [(m, nodes, c, z) for m, nodes in ms for c in COLLS for z in sizes
            if not only or only.search("%s %s" % (m, c))]
    if not todo:
        sys.exit("bench_nccl_model: no case matches")
    a.command = a.command or "scripts/bench_nccl_model.py %s%s%s%s" % (
        a.bin, " --sizes " + a.sizes if a.sizes else " --all-sizes" if a.all_sizes else "",
        " --only '%s'" % a.only if a.only else "", " --no-variants" if a.no_variants else "")
    work = tempfile.mkdtemp(prefix="taccl-ncclmodel-")
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        rows = list(ex.map(lambda t: case(a, *t, work), todo))
    for f in os.listdir(work):
        os.remove(os.path.join(work, f))
    os.rmdir(work)
    write(a, rows, skipped)
    return 1 if any("error" in r for r in rows) else 0


def write(a, rows, skipped):
    ok = [r for r in rows if "ratio" in r]
    good = [r for r in ok if within(r["ratio"])]
    out_rows = [r for r in ok if not within(r["ratio"])]
    sizes = sorted({r["size"] for r in rows})
    L = [
        "# Our executor beside NCCL's own tuning model, on NCCL's own schedule (issue 41 item 4b)",
        "",
        "Made by `%s` (sizes %s per rank). Each row: `taccl-synth --algo nccl TOPO --collective "
        "C --size S --json -o F.xml` builds what NCCL runs there and reports NCCL's estimate for "
        "its pick (`nccl.estimate_us`: NCCL's tuning model, src/synth/nccl_tune.c); `taccl-run "
        "F.xml --topo TOPO --size S' --no-data --json` times the file (`time_us`) at its own size S' "
        "(taccl-synth's `size_bytes`: S rounded up to whole chunks, at most a few KiB more). ratio = "
        "executor / NCCL's estimate; within tolerance: 1/1.25 <= ratio <= 1.25. Where NCCL would "
        "run NVLS (H100 machines, one node) or NVLSTree (AllReduce across nodes) the file is "
        "its best choice without the switch and the estimate is that choice's (column NVLS); "
        "the last section times what NCCL runs there, as an MSCCL++ plan. Skipped: %s." % (
            a.command, ", ".join(size_name(s) for s in sizes),
            "; ".join("%s (%s)" % tuple(s) for s in skipped) or "none"),
        "",
        "## Summary",
        "",
        "Within ×/÷ 1.25: **%d of %d** rows (%d slower than NCCL's estimate, %d faster%s)." % (
            len(good), len(ok), sum(1 for r in out_rows if r["ratio"] > TOL),
            sum(1 for r in out_rows if r["ratio"] < 1 / TOL),
            "; %d rows failed to run" % (len(rows) - len(ok)) if len(rows) > len(ok) else ""),
        "",
    ]
    for vn, what in (("no-rt-lat", "Without the runtime's latency (variant `no-rt-lat`: the "
                                   "hops' alpha alone, the default before the runtime latency)"),
                     ("nccl-lat", "Under NCCL's latency model (variant `nccl-lat`, below: NCCL's "
                                  "per-step latencies as the hops' alpha, as latency only, plus "
                                  "its base latency per call)")):
        nl = [r["variants"][vn] for r in ok if (r.get("variants") or {}).get(vn)]
        if not nl:
            continue
        L += ["%s, run on every row: **%d of %d** within (%s)." % (
            what, sum(within(x) for x in nl), len(nl), "; ".join(
                "%s-%s: %d of %d, %d by default" % (
                    size_name(lo), size_name(hi // 2),
                    sum(within(r["variants"][vn]) for r in band),
                    len(band), sum(within(r["ratio"]) for r in band))
                for lo, hi in ((1 << 10, 1 << 20), (1 << 20, 64 << 20), (64 << 20, 2 << 30))
                for band in [[r for r in ok if lo <= r["size"] < hi and
                              (r.get("variants") or {}).get(vn)]] if band)), ""]
    head = ["machine"] + COLLS + ["all", "median ratio"]
    body = []
    for m in sorted({r["machine"] for r in rows}):
        mr = [r for r in ok if r["machine"] == m]
        cells = [m]
        for c in COLLS:
            cr = [r for r in mr if r["collective"] == c]
            cells.append("%d/%d" % (sum(within(r["ratio"]) for r in cr), len(cr)))
        cells.append("%d/%d" % (sum(within(r["ratio"]) for r in mr), len(mr)))
        md = median([r["ratio"] for r in mr])
        cells.append("%.2f" % md if md else "-")
        body.append(cells)
    cells = ["all"]
    for c in COLLS:
        cr = [r for r in ok if r["collective"] == c]
        cells.append("%d/%d" % (sum(within(r["ratio"]) for r in cr), len(cr)))
    cells += ["%d/%d" % (len(good), len(ok)), "%.2f" % (median([r["ratio"] for r in ok]) or 0)]
    body.append(cells)
    L += ["Rows within tolerance / rows, by machine and collective:", "",
          bench_report.table(head, body), ""]
    # by size
    head = ["size"] + COLLS
    body = []
    for s in sizes:
        cells = [size_name(s)]
        for c in COLLS:
            cr = [r for r in ok if r["collective"] == c and r["size"] == s]
            md = median([r["ratio"] for r in cr])
            cells.append("%d/%d, median %.2f" % (sum(within(r["ratio"]) for r in cr), len(cr), md)
                         if cr else "-")
        body.append(cells)
    L += ["By size (within / rows, median ratio over the machines):", "",
          bench_report.table(head, body), ""]
    # groups of rows outside
    L += ["## Rows outside tolerance, grouped", ""]
    vnames = [v for v, _ in VARIANTS]
    with_v = [r for r in out_rows if r.get("variants")]   # (rows within: two variants only)
    if not with_v:
        L += ["No variants were run (--no-variants)." if out_rows else "None.", ""]
    else:
        L += ["Each row outside was run again under one changed assumption at a time; the "
              "variants:", ""]
        L += ["- `%s`: %s." % v for v in VARIANTS]
        L += ["", "Per group: its rows, the median ratio by default and under each variant, "
              "and (in brackets) how many of its rows that variant brings within ×/÷ 1.25. "
              "The dominant cause is the variant that brings the most rows within (ties: the "
              "smaller median |log ratio|); `-`: the variant does not change this group's "
              "schedules (e.g. eff on a ring, ports without a switch).", ""]
        groups = {}
        for r in with_v:
            groups.setdefault(group_key(r), []).append(r)
        head = ["group", "rows", "default"] + vnames + ["dominant cause"]
        body = []
        causes = {}
        for g in sorted(groups, key=lambda k: (-len(groups[k]), k)):
            gr = groups[g]
            cells = [g, str(len(gr)), "%.2f" % median([r["ratio"] for r in gr])]
            best = None
            for v in vnames:
                xs = [r["variants"].get(v) for r in gr]
                xs = [x for x in xs if x is not None]
                if not xs or all(abs(x - r["ratio"]) < 1e-9 * r["ratio"]
                                 for x, r in zip(xs, gr)):
                    cells.append("-")
                    continue
                n_in = sum(within(x) for x in xs)
                md = median(xs)
                cells.append("%.2f [%d]" % (md, n_in))
                score = (n_in, -dist(md))
                if best is None or score > best[0]:
                    best = (score, v, md, n_in)
            if best:
                cells.append("%s: %d of %d within, median %.2f" % (best[1], best[3], len(gr),
                                                                    best[2]))
                causes[g] = best[1]
            else:
                cells.append("none measured")
            body.append(cells)
        L += [bench_report.table(head, body), ""]
        L += ["Rows of each group (machine collective size: ratio by default -> under the "
              "group's dominant cause):", ""]
        for g in sorted(groups, key=lambda k: (-len(groups[k]), k)):
            v = causes.get(g)
            items = []
            for r in sorted(groups[g], key=lambda r: (r["machine"], r["collective"], r["size"])):
                x = r["variants"].get(v) if v else None
                items.append("%s %s %s: %.2f%s" % (r["machine"], r["collective"],
                                                   size_name(r["size"]), r["ratio"],
                                                   " -> %.2f" % x if x is not None else ""))
            L += ["- **%s** (%s): %s." % (g, v or "no cause measured", "; ".join(items))]
        L += [""]
    # every row
    L += ["## Every row", ""]
    head = ["machine", "collective", "size", "NCCL's pick", "NVLS", "NCCL estimate us",
            "executor us", "ratio", "within"]
    body = []
    for r in rows:
        if "ratio" not in r:
            body.append([r["machine"], r["collective"], size_name(r["size"]), "-", "-", "-", "-",
                         "-", "fails (%s)" % r.get("error", "?")])
            continue
        body.append([r["machine"], r["collective"], size_name(r["size"]),
                     "%s %s, %d ch" % (r["algo"], r["proto"], r["channels"]),
                     "yes" if r["nvls"] else "", "%.2f" % r["estimate_us"],
                     "%.2f" % r["time_us"], "%.3f" % r["ratio"],
                     "yes" if within(r["ratio"]) else "no"])
    L += [bench_report.table(head, body), ""]
    plans = [r for r in rows if r.get("plan")]
    if plans:
        pok = [r for r in plans if "ratio" in r["plan"]]
        L += ["## What NCCL runs on the NVLS machines, as an MSCCL++ plan", "",
              "Where NCCL would run NVLS (one node) or NVLSTree (AllReduce across nodes), the "
              "rows above time its best choice without the switch. Here the same call is written "
              "with `--target mscclpp`, which holds NVLS, and NVLSTree on two nodes "
              "(docs/nvls.md section 4), and the plan is timed by `taccl-run` beside NCCL's "
              "estimate of that pick, by default and with α as latency (`delay`). Rows where the "
              "plan still holds the best choice without the switch (NVLSTree on more than two "
              "nodes) are left out. Within ×/÷ 1.25: **%d of %d** by default, %d with α as "
              "latency." % (sum(within(r["plan"]["ratio"]) for r in pok), len(pok),
                            sum(within(r["plan"].get("delay_ratio")) for r in pok)), ""]
        head = ["machine", "collective", "size", "NCCL's pick", "NCCL estimate us",
                "plan us", "ratio", "with α as latency", "within"]
        body = []
        for r in plans:
            p = r["plan"]
            if "ratio" not in p:
                body.append([r["machine"], r["collective"], size_name(r["size"]), "-", "-", "-",
                             "-", "-", "fails (%s)" % p.get("error", "?")])
                continue
            dr = p.get("delay_ratio")
            body.append([r["machine"], r["collective"], size_name(r["size"]),
                         "%s Simple, %d ch" % (p["algo"], p["channels"]),
                         "%.2f" % p["estimate_us"], "%.2f" % p["time_us"], "%.3f" % p["ratio"],
                         "%.3f" % dr if dr is not None else "-",
                         "yes" if within(p["ratio"]) else "no"])
        L += [bench_report.table(head, body), ""]
    md = "\n".join(L)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    bench_report.write_atomic(a.out, md)
    jout = a.json_out or re.sub(r"\.md$", "", a.out) + ".json"
    bench_report.write_atomic(jout, json.dumps(
        {"command": a.command, "tolerance": TOL, "skipped": skipped, "rows": rows},
        indent=1, sort_keys=True) + "\n")
    print("bench_nccl_model: %d of %d rows within x/ 1.25; %s" % (len(good), len(ok), a.out))


if __name__ == "__main__":
    sys.exit(main())
