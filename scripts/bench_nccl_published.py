#!/usr/bin/env python3
"""bench_nccl_published.py — published nccl-tests measurements beside the model's `--algo nccl`.

Issue 41 item 4a.  Every row of tests/data/published/nccl-tests.json (a
published nccl-tests figure on an A100 or H100 machine, with its source:
tests/data/published/README.md) is set beside the model at the same size:
`taccl-synth --algo nccl TOPO --collective C --size S --json -o F.xml`
builds what NCCL runs on the bundled machine that matches the published one
(the row's topology); where NCCL would run NVLS or NVLSTree (the
synthesizer's note says so) the file is written again with `--target
mscclpp` (an MSCCL++ plan of switch operations, docs/nvls.md; NVLSTree on
two nodes only, elsewhere the plan holds NCCL's best choice without it);
`taccl-run F --topo TOPO --size S'
--json` times it at the file's own size S' (taccl-synth's size_bytes: S
rounded up to whole chunks), with `--no-data` above 64 MiB.

Both sides are bus bandwidths by nccl-tests' conventions (its
doc/PERFORMANCE.md): algbw = size / time, busbw = algbw x 2(n-1)/n for
AllReduce and x (n-1)/n for AllGather and ReduceScatter (n ranks).  A
published time gives the published busbw by the same formula (more digits
than the printed busbw at small sizes); a published busbw alone is used as
it is.  ratio = model busbw / published busbw; a row is within when
1/1.15 <= ratio <= 1.15 at 64 MiB and above, 1/1.5 <= ratio <= 1.5 below.

For each row outside, the same file is run again under one changed
assumption of the model at a time (VARIANTS below) and the ratio under each
is recorded (timing only, `--no-data`: the row's own run checked the data;
with data an A3 Mega row at 32 MiB took 45 s a variant); the row's cause is
the variant that brings it within (of several, the one nearest 1), else the
one that moves it nearest 1.

    scripts/bench_nccl_published.py BIN_DIR [--data FILE] [--out bench/nccl-published.md]
        [--json F] [--only REGEX] [--no-variants] [--from-json FILE]

--only REGEX: only rows whose "source topology collective size" matches
  (size in bytes).
--no-variants: the table only, no runs under changed assumptions.
--from-json FILE: write the page (and --json) again from FILE, running nothing.
Exit 0 when every row ran; 1 when a row failed; 2 on unusable data.
"""
import json
import math
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_calib        # noqa: E402  (variant_topology, BASE_LAT_US)
import bench_nccl_model   # noqa: E402  (run, eff_factor, scaled_topology, nccl_lat_topology)
import bench_report       # noqa: E402  (table, write_atomic, fmt)
from bench_mscclpp import sh, size_name  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "published", "nccl-tests.json")
BIG = 64 << 20                      # the tolerance changes here, and --no-data starts above it
TOL_BIG, TOL_SMALL = 1.15, 1.5
COLLS = ("allreduce", "allgather", "reducescatter")
# NCCL's per-call latency of NVLS (us): hwLatencies[NVLINK][NVLS][Simple]
# with base latency 0 (docs/nvls.md, NVIDIA/nccl src/graph/tuning.cc:161)
NVLS_CALL_US = 25.0
# NCCL's effective NVLink bandwidth on H100, 370 of 450 GB/s ("with the
# protocol overhead (~20%)"): NVIDIA's answer in NVIDIA/nccl-tests#212
NVLINK_EFF = 370.0 / 450.0
# what taccl-run says when a runtime cannot hold the file at all (the
# legacy runtime's parser, MSCCL++'s uint32 offsets): a limit of the
# runtimes, not a failure of the bench
LIMIT = re.compile(r"parser holds|uint32")

VARIANTS = [
    ("no-rt-lat", "no runtime latency: the topology without its runtime_latency (the hops' "
                  "alpha alone: the default before 2026-12-06)"),
    ("delay", "alpha as latency only (alpha_mode delay) instead of holding the hop's link, "
              "switch port or NIC for alpha + bytes / B"),
    ("latency", "NCCL's per-step latency as every hop's alpha (3.4 us NVLink, 14 us network) "
                "instead of the topology's"),
    ("launch", "NCCL's base latency per call added to the time without the runtime latency "
               "(ring/tree 6.6-14 us by protocol; NVLS 25 us, its hwLatency with base 0)"),
    ("nccl-lat", "NCCL's latency model (per-step latencies as latency only, plus its base "
                 "latency; ring and tree only)"),
    ("eff", "NCCL's bandwidth factors for the pick over the executor's (tree LL / 3.8, tree "
            "LL128 x 7/9 one node, tree AllReduce x 0.92 and its size correction)"),
    ("nvlink-eff", "NVLink links and switches at NCCL's effective bandwidth, x 370/450 "
                   "(NVIDIA, nccl-tests#212), NVLS and NICs unchanged"),
    ("nic-half", "NICs at half the topology's bandwidth (only where the bundled machine is the "
                 "nearest, not a match: its NICs are not the published machine's)"),
    ("tiles", "the runtimes' tiles (taccl-run --tiles)"),
    ("nccl-ring", "NCCL runs ring, not the tree its tuning model picks: NCCL's own tuning "
                  "estimate of its fastest ring protocol at that size (tree picks at >= 64 "
                  "MiB only; an estimate, not the executor)"),
    ("ports", "switch ports not shared: each switch as a link per pair of its ranks"),
]


def busbw_factor(coll, n):
    return 2.0 * (n - 1) / n if coll == "allreduce" else (n - 1) / n


def tol(size):
    return TOL_BIG if size >= BIG else TOL_SMALL


def within(ratio, size):
    return ratio is not None and 1 / tol(size) <= ratio <= tol(size)


def dist(r):
    return abs(math.log(r)) if r else float("inf")


def fail(msg):
    print("bench_nccl_published: %s" % msg, file=sys.stderr)
    sys.exit(2)


def load_rows(path):
    """The published rows, one dict each; a malformed entry exits 2 naming it."""
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    srcs = d.get("sources")
    if not isinstance(srcs, dict) or not isinstance(d.get("tables"), list):
        fail("%s: want \"sources\" (object) and \"tables\" (list)" % path)
    rows = []
    for i, t in enumerate(d["tables"]):
        where = "%s: tables[%d]" % (path, i)
        if t.get("source") not in srcs:
            fail("%s.source: %r is not in sources" % (where, t.get("source")))
        if t.get("collective") not in COLLS:
            fail("%s.collective: want one of %s" % (where, ", ".join(COLLS)))
        topo = os.path.join(ROOT, "topologies", "%s.json" % t.get("topology"))
        if not os.path.exists(topo):
            fail("%s.topology: no bundled topologies/%s.json" % (where, t.get("topology")))
        cols = t.get("columns") or []
        if "size" not in cols or not ({"time_us", "busbw_gbps"} & set(cols)):
            fail("%s.columns: want size and time_us or busbw_gbps" % where)
        for j, r in enumerate(t.get("rows") or []):
            if len(r) != len(cols):
                fail("%s.rows[%d]: %d values for %d columns" % (where, j, len(r), len(cols)))
            v = dict(zip(cols, r))
            if not isinstance(v["size"], int) or v["size"] <= 0:
                fail("%s.rows[%d]: size must be a positive integer (bytes)" % (where, j))
            if v.get("time_us") is None and v.get("busbw_gbps") is None:
                fail("%s.rows[%d]: neither time_us nor busbw_gbps" % (where, j))
            n = t["nodes"] * t["gpus_per_node"]
            f = busbw_factor(t["collective"], n)
            pub = (f * v["size"] / v["time_us"] / 1e3 if v.get("time_us")
                   else v["busbw_gbps"])
            rows.append({"source": t["source"], "collective": t["collective"],
                         "nodes": t["nodes"], "ranks": n, "placement": t.get("placement"),
                         "dtype": t.get("dtype"), "topology": t["topology"],
                         "match": t.get("match", "exact"), "note_setup": t.get("note"),
                         "size": v["size"], "pub_time_us": v.get("time_us"),
                         "pub_busbw_printed": v.get("busbw_gbps"), "pub_busbw": pub})
    return srcs, rows


def synth(a, row, topo, work, stem, extra=()):
    """taccl-synth --algo nccl; again with --target mscclpp where NCCL
    would run NVLS or NVLSTree ("NCCL would run NVLS" starts both notes).
    (file, the synthesizer's JSON) or (None, error)."""
    base = [os.path.join(a.bin, "taccl-synth"), "--algo", "nccl", topo, "--collective",
            row["collective"], "--size", str(row["size"]), "--json", "-q"] + list(extra)
    f = os.path.join(work, stem + (".json" if extra else ".xml"))
    rc, so, se = sh(base + ["-o", f])
    try:
        d = json.loads(so)
    except ValueError:
        d = {}
    if rc != 0 or "nccl" not in d:
        return None, "taccl-synth: " + (d.get("error") or bench_nccl_model.last_line(se, rc))
    if not extra and "NCCL would run NVLS" in (d.get("note") or ""):
        os.remove(f)
        f = os.path.join(work, stem + ".json")
        rc, so, se = sh(base + ["--target", "mscclpp", "-o", f])
        try:
            d = json.loads(so)
        except ValueError:
            d = {}
        if rc != 0 or "nccl" not in d:
            return None, "taccl-synth --target mscclpp: " + (
                d.get("error") or bench_nccl_model.last_line(se, rc))
    return f, d


def run(a, f, topo, size, extra=()):
    extra = list(extra) + (["--no-data"] if size > BIG and "--no-data" not in extra else [])
    args = [os.path.join(a.bin, "taccl-run"), f, "--topo", topo, "--size", str(size),
            "--json"] + extra
    rc, out, err = sh(args)
    try:
        d = json.loads(out)
    except ValueError:
        return None, bench_nccl_model.last_line(err, rc)
    if rc != 0 or d.get("time_us") is None:
        return None, d.get("error") or bench_nccl_model.last_line(err, rc)
    return d["time_us"], None


def scaled(path, out, groups, f, suffix):
    """Topology path with the bandwidth of groups (links, switches, nics)
    times f into out; False when none of them has a bandwidth."""
    t = json.load(open(path))
    hit = False
    for g in groups:
        for e in t.get(g, []):
            if "bandwidth_gbps" in e:
                e["bandwidth_gbps"] *= f
                hit = True
                nv = e.get("nvls")
                if nv and "bandwidth_gbps" in nv:
                    # the switch's own bandwidth bounds its NVLS figure
                    # (docs/nvls.md): kept, unless above the scaled port
                    nv["bandwidth_gbps"] = min(nv["bandwidth_gbps"], e["bandwidth_gbps"])
    if not hit:
        return False
    t["name"] = "%s-%s" % (t.get("name", "topo"), suffix)
    with open(out, "w") as fo:
        json.dump(t, fo)
    return True


def model_busbw(row, time_us, size):
    return busbw_factor(row["collective"], row["ranks"]) * size / time_us / 1e3


def variants(a, row, f, topo, work, stem):
    """{variant: ratio under it, or None where it does not apply}."""
    size, base = row["run_size"], row["time_us"]
    algo, proto = row["algo"], row["proto"]
    lat = (NVLS_CALL_US if algo == "nvls"
           else bench_calib.BASE_LAT_US.get(algo, {}).get(proto))
    out = {}
    vt = os.path.join(work, stem + ".variant.json")

    def topo_run(ok):
        if not ok:
            return None
        # timing only: the default run checked the data
        us, _ = run(a, f, vt, size, ["--no-data"])
        os.remove(vt)
        return us

    for name, _ in VARIANTS:
        us = None
        if name in ("no-rt-lat", "delay", "latency", "ports"):
            us = topo_run(bench_calib.variant_topology(topo, name, vt))
        elif name == "launch":
            bare = topo_run(bench_calib.variant_topology(topo, "no-rt-lat", vt))
            if bare is None:        # the topology has no runtime latency
                bare = base
            us = bare + lat if lat is not None else None
        elif name == "nccl-lat":
            if algo in bench_nccl_model.HW_LAT["nvlink"] and lat is not None:
                bench_nccl_model.nccl_lat_topology(topo, algo, proto, row["nodes"], vt)
                t = topo_run(True)
                us = t + lat if t is not None else None
        elif name == "eff":
            e = bench_nccl_model.eff_factor(algo, proto, row["collective"], row["nodes"],
                                            row["size"])
            if abs(e - 1) > 1e-9:
                bench_nccl_model.scaled_topology(topo, e, vt)
                us = topo_run(True)
        elif name == "nvlink-eff":
            us = topo_run(scaled(topo, vt, ("links", "switches"), NVLINK_EFF, name))
        elif name == "nic-half":
            if row["nodes"] > 1 and row["match"] != "exact":
                us = topo_run(scaled(topo, vt, ("nics",), 0.5, name))
        elif name == "tiles":
            us, _ = run(a, f, topo, size, ["--tiles", "--no-data"])
        elif name == "nccl-ring":
            rings = [float(x) for x in re.findall(r"ring/\w+ ([0-9.]+)", row.get("note", ""))]
            if algo == "tree" and rings and row["size"] >= BIG:
                us = min(rings)
        out[name] = (model_busbw(row, us, size) / row["pub_busbw"]) if us else None
    return out


def cause(row):
    """(variant, its ratio) that explains a row outside, or (None, None)."""
    v = {k: x for k, x in (row.get("variants") or {}).items() if x is not None}
    if not v:
        return None, None
    inside = [k for k in v if within(v[k], row["size"])]
    pool = inside or list(v)
    k = min(pool, key=lambda k: (dist(v[k]), k))
    if not inside and dist(v[k]) >= dist(row["ratio"]):
        return None, None
    return k, v[k]


def case(a, row, work):
    topo = os.path.join(ROOT, "topologies", row["topology"] + ".json")
    stem = "%s-%s-%s-%d" % (row["source"], row["topology"], row["collective"], row["size"])
    f, d = synth(a, row, topo, work, stem)
    row["synth"] = ("taccl-synth --algo nccl topologies/%s.json --collective %s --size %d"
                    % (row["topology"], row["collective"], row["size"]))
    if f is None:
        row["error"] = d
        return row
    n = d["nccl"]
    row.update(algo=n["algo"], proto=n["proto"], channels=n["channels"],
               target="mscclpp" if f.endswith(".json") else "msccl-xml",
               run_size=d.get("size_bytes") or row["size"], note=d.get("note") or "")
    row["time_us"], err = run(a, f, topo, row["run_size"])
    if err and row["target"] == "msccl-xml" and LIMIT.search(err):
        # the legacy runtime's parser cannot hold the file: the same pick
        # as an MSCCL++ plan, which has no such limit
        os.remove(f)
        f, d = synth(a, row, topo, work, stem, ["--target", "mscclpp"])
        if f is None:
            row["error"] = d
            return row
        row.update(target="mscclpp", run_size=d.get("size_bytes") or row["size"])
        row["time_us"], err = run(a, f, topo, row["run_size"])
    if row["target"] == "mscclpp":
        row["synth"] += " --target mscclpp"
    if err:
        row["error"] = "taccl-run: " + err.replace(f, "F")
        row["limit"] = bool(LIMIT.search(err))
    else:
        row["model_busbw"] = model_busbw(row, row["time_us"], row["run_size"])
        row["ratio"] = row["model_busbw"] / row["pub_busbw"]
        row["within"] = within(row["ratio"], row["size"])
        if not a.no_variants and not row["within"]:
            row["variants"] = variants(a, row, f, topo, work, stem)
    os.remove(f)
    return row


def page(a, srcs, rows):
    ok = [r for r in rows if "ratio" in r]
    big = [r for r in ok if r["size"] >= BIG]
    small = [r for r in ok if r["size"] < BIG]
    L = ["# Published NCCL measurements beside the model's `--algo nccl`", "",
         "Written by `%s`; do not edit. Issue 41 item 4a: every published nccl-tests figure in "
         "`tests/data/published/nccl-tests.json` (sources below; how each was transcribed: "
         "`tests/data/published/README.md`) beside the model at the same size, on the bundled "
         "machine that matches. Model: `taccl-synth --algo nccl TOPO --collective C --size S` "
         "(with `--target mscclpp` where NCCL would run NVLS or NVLSTree: an MSCCL++ plan of "
         "switch operations, NVLSTree on two nodes only), then `taccl-run F --topo TOPO --size S'` at the file's own size "
         "(`--no-data` above 64 MiB). Both busbw by nccl-tests' conventions: algbw = size / time, "
         "× 2(n−1)/n for AllReduce, × (n−1)/n for AllGather and ReduceScatter; a published time "
         "gives the published busbw by the same formula. ratio = model / published; within: "
         "×/÷ 1.15 at ≥ 64 MiB, ×/÷ 1.5 below." % a.command, ""]
    L += ["## Summary", "",
          "- Rows: **%d** (%d ran), from %d sources." % (len(rows), len(ok), len(srcs)),
          "- At ≥ 64 MiB: **%d of %d** within ×/÷ 1.15." % (sum(r["within"] for r in big),
                                                           len(big)),
          "- Below 64 MiB: **%d of %d** within ×/÷ 1.5." % (sum(r["within"] for r in small),
                                                          len(small))]
    ex = [r for r in ok if r["match"] == "exact"]
    for name, g, t in (("≥ 64 MiB", [r for r in ex if r["size"] >= BIG], "1.15"),
                       ("below 64 MiB", [r for r in ex if r["size"] < BIG], "1.5")):
        L += ["- On a bundled machine that matches the published one (not the nearest only), "
              "%s: **%d of %d** within ×/÷ %s." % (name, sum(r["within"] for r in g), len(g), t)]
    fails = [r for r in rows if "ratio" not in r]
    if fails:
        L += ["- Rows not run: %d (%s)." % (len(fails), "; ".join(
            "%s %s %s, %s: %s" % (r["topology"], r["collective"], size_name(r["size"]),
                                  "beyond the runtimes" if r.get("limit") else "fails",
                                  r.get("error")) for r in fails))]
    L += [""]
    # by source, collective and size class
    head = ["source", "machine", "collective", "sizes", "rows", "within", "ratio range"]
    body = []
    keys = sorted({(r["source"], r["topology"], r["collective"], r["size"] >= BIG) for r in ok})
    for k in keys:
        g = [r for r in ok if (r["source"], r["topology"], r["collective"], r["size"] >= BIG) == k]
        rs = [r["ratio"] for r in g]
        body.append([k[0], k[1], k[2], "≥ 64 MiB" if k[3] else "< 64 MiB", str(len(g)),
                     str(sum(r["within"] for r in g)), "%.3f–%.3f" % (min(rs), max(rs))])
    L += [bench_report.table(head, body), ""]
    near = sorted({(r["source"], r["topology"], r["match"]) for r in rows if r["match"] != "exact"})
    if near:
        L += ["Machines that are the nearest bundled one, not a match:", ""]
        L += ["- %s on `%s`: %s." % (k, t, m.rstrip(".")) for k, t, m in near] + [""]
    notes = sorted({(r["source"], r.get("note_setup")) for r in rows if r.get("note_setup")})
    if notes:
        L += ["Setups that differ:", ""]
        L += ["- %s: %s." % (k, m.rstrip(".")) for k, m in notes] + [""]
    # exceptions and their measured causes
    out = [r for r in ok if not r["within"]]
    if out:
        L += ["## Rows outside and what moves them", "",
              "Each row outside was run again under one changed assumption at a time; "
              "the cause is the variant that brings it within (nearest 1 of those), else the "
              "one that moves it nearest 1. Variants:", ""]
        L += ["- **%s**: %s." % (k, v) for k, v in VARIANTS] + [""]
        L += ["By source, machine, collective, NCCL's pick and cause:", ""]
        groups = {}
        for r in out:
            k, x = cause(r)
            groups.setdefault((r["source"], r["topology"], r["collective"],
                               "%s %s" % (r["algo"], r["proto"]), k or "none"), []).append((r, x))
        for g in sorted(groups, key=lambda g: (g[0], g[1], g[2], min(r["size"] for r, _ in
                                                                    groups[g]))):
            rs = groups[g]
            lo, hi = min(r["size"] for r, _ in rs), max(r["size"] for r, _ in rs)
            xs = [x for _, x in rs if x is not None]
            L += ["- %s `%s` %s, %s, %s%s: %d row%s at %.2f–%.2f; %s." % (
                g[0], g[1], g[2], g[3], size_name(lo), "" if lo == hi else "–" + size_name(hi),
                len(rs), "" if len(rs) == 1 else "s", min(r["ratio"] for r, _ in rs),
                max(r["ratio"] for r, _ in rs),
                "no variant moves them nearer 1" if not xs else
                "under **%s** %.2f–%.2f, %d within" % (
                    g[4], min(xs), max(xs), sum(within(x, r["size"]) for r, x in rs
                                                if x is not None)))]
        L += [""]
        head = ["source", "machine", "collective", "size", "NCCL's pick", "ratio", "cause",
                "ratio under it", "every variant"]
        body = []
        for r in out:
            k, x = cause(r)
            vs = r.get("variants") or {}
            allv = ", ".join("%s %s" % (n, "%.2f" % vs[n] if vs[n] is not None else "-")
                             for n, _ in VARIANTS if n in vs)
            body.append([r["source"], r["topology"], r["collective"], size_name(r["size"]),
                         "%s %s" % (r["algo"], r["proto"]), "%.3f" % r["ratio"], k or "none",
                         "%.3f" % x if x is not None else "-", allv or "-"])
        L += [bench_report.table(head, body), ""]
    # every row
    L += ["## Every row", ""]
    head = ["source", "machine", "collective", "size", "published us", "published busbw",
            "NCCL's pick", "model us", "model busbw", "ratio", "within"]
    body = []
    for r in rows:
        pt = bench_report.fmt(r["pub_time_us"]) if r["pub_time_us"] else "-"
        if "ratio" not in r:
            body.append([r["source"], r["topology"], r["collective"], size_name(r["size"]), pt,
                         bench_report.fmt(r["pub_busbw"]), "-", "-", "-", "-",
                         "%s (%s)" % ("not run" if r.get("limit") else "fails",
                                      r.get("error", "?"))])
            continue
        body.append([r["source"], r["topology"], r["collective"], size_name(r["size"]), pt,
                     bench_report.fmt(r["pub_busbw"]),
                     "%s %s, %d ch%s" % (r["algo"], r["proto"], r["channels"],
                                         ", MSCCL++" if r["target"] == "mscclpp" else ""),
                     bench_report.fmt(r["time_us"]), bench_report.fmt(r["model_busbw"]),
                     "%.3f" % r["ratio"], "yes" if r["within"] else "no"])
    L += [bench_report.table(head, body), ""]
    L += ["## Sources", ""]
    for k in sorted(srcs):
        s = srcs[k]
        L += ["- **%s**: %s, <%s>. %s; NCCL %s. %s. Transcribed: %s." % (
            k, s["kind"], s["url"], s["machine"], s["nccl"], s["setup"], s["where"])]
    return "\n".join(L) + "\n"


def main():
    ap = bench_nccl_model.arg_parser(__doc__, "nccl-published.md")
    ap.add_argument("--data", default=DATA, help="the published rows (default %(default)s)")
    a = ap.parse_args()
    if a.from_json:
        d = json.load(open(a.from_json))
        a.command = a.command or d["command"]
        srcs, rows = d["sources"], d["rows"]
    else:
        a.command = a.command or "scripts/bench_nccl_published.py build/bin"
        srcs, rows = load_rows(a.data)
        if a.only:
            rx = re.compile(a.only)
            rows = [r for r in rows if rx.search("%s %s %s %d" % (
                r["source"], r["topology"], r["collective"], r["size"]))]
        for tool in ("taccl-synth", "taccl-run"):
            if not os.access(os.path.join(a.bin, tool), os.X_OK):
                print("bench_nccl_published: no %s in %s (make first)" % (tool, a.bin),
                      file=sys.stderr)
                return 1
        with tempfile.TemporaryDirectory(prefix="taccl-published-") as work:
            rows = [case(a, r, work) for r in rows]
        used = {r["source"] for r in rows}
        srcs = {k: v for k, v in srcs.items() if k in used}
    md = page(a, srcs, rows)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    bench_report.write_atomic(a.out, md)
    jout = a.json_out or re.sub(r"\.md$", "", a.out) + ".json"
    bench_report.write_atomic(jout, json.dumps(
        {"command": a.command, "tolerance": {"ge_64MiB": TOL_BIG, "below": TOL_SMALL},
         "sources": srcs, "rows": rows}, indent=1, sort_keys=True) + "\n")
    ok = [r for r in rows if "ratio" in r]
    print("bench_nccl_published: %d of %d rows within; %s" % (
        sum(r["within"] for r in ok), len(rows), a.out))
    return 0 if all("ratio" in r or r.get("limit") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
