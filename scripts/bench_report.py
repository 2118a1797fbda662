"""bench_report.py — turn the benchmark's rows into bench/results.md and plots.

bench_run.py collects, per configuration (a section: topology + collective)
and algorithm, the rows `taccl-run --sweep --json` printed.  This module
writes results.md, one summary page (per configuration, our fastest
schedule against NCCL's and the lower bound at a small, a middle and a large
size, each "× NCCL" the range over the estimates of NCCL's call), and
behind it results/<topology>.md with every row beside the figures of
docs/references.md (bench_ref.py), results/calibration.md,
results/published.md and results/synthesizer.md; no table cell longer than
a sentence (table(): a longer one is a numbered note under its table).
results.json holds everything they are made of: run alone,
`bench_report.py RESULTS.json [--out DIR]` writes them again from it.  One
gnuplot PNG per section (algorithm bandwidth against size, one line per
algorithm and the lower bound), plus a TACOS overview chart.  Every file is written to a temporary
name in the output directory and renamed into place, so a reader never sees
half a file.  write_all() returns how many things failed (a schedule that
did not verify, a tool that crashed, a plot gnuplot could not draw).

Python 3 standard library only; gnuplot (pngcairo, else png) draws.
"""
import json
import math
import os
import re
import subprocess
import sys

import bench_ref

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

MODEL = (
    "Times are `taccl-run`'s α–β model, not measurements of hardware. A "
    "transfer of s bytes over a hop costs α + s/B: a hop is a direct link, "
    "a switch (a port of each end) or the pair of NICs between nodes "
    "(sender's egress, receiver's ingress); a multi-hop path exists only "
    "as the schedule relays it, so it is store-and-forward by construction "
    "(every relay receives the whole chunk, then sends it). A link carries "
    "`multiplicity` transfers at once per direction, a switch port and a "
    "NIC one each way; a transfer starts when all its resources are free "
    "and holds them for its whole duration (no bandwidth sharing, no "
    "pipelining inside a chunk); one that finds a resource busy waits "
    "without booking any, so no port or NIC idles while a transfer that "
    "could use it waits. Sends are eager "
    "with at most 8 outstanding per connection, as the MSCCL runtime's "
    "FIFOs. Local copies and reductions cost bytes / the topology's local "
    "copy or reduce bandwidth; launch overheads, protocol choice "
    "(Simple/LL/LL128), kernel occupancy and memory contention are not "
    "modelled. The lower bound (src/bound) is max(latency bound: the "
    "largest minimum-α path some required data must travel; bandwidth "
    "bound: bytes that must enter a rank or a node/chip cut over the most "
    "the topology can carry into it, from a GLPK max-flow LP); it depends "
    "only on the topology, the collective and the size, never on a "
    "schedule, and is valid for every schedule our model can express."
)

CONVENTIONS = [
    "**size** is the larger per-rank buffer in the nccl-tests convention: "
    "AllGather's output (n × the per-rank input), AllToAll's buffer, "
    "ReduceScatter's input, AllReduce's buffer. K/M/G are powers of 1024. "
    "the size of the papers' figures (docs/references.md) is this same per-rank output buffer "
    "(the nccl-tests `size` column), so its \"1 GB\", \"64 KB\" and \"1 KB\" "
    "are compared with our 1 GiB, 64 KiB and 1 KiB rows (2.4–7.4 % more "
    "bytes: algbw ratios are unaffected where bandwidth dominates; at 1 KB "
    "ours carry that much more data in a latency-bound time).",
    "**algbw** = size / time (GB/s, 1e9 B/s); **busbw** = algbw × 2(n−1)/n "
    "for AllReduce, × (n−1)/n otherwise (nccl-tests).",
    "**bound** = our lower bound at that size (µs); **bound/time** = 1.00 "
    "for an optimal schedule; **× ring** = our ring's time / this time on "
    "the same topology and size (> 1: faster than our ring baseline, "
    "`--algo ring`, which is not what NCCL runs; on the chip device, where "
    "the default ring's chunk count may not divide into DMA segments, the "
    "ring with a power-of-two channel count).",
    "**nccl** = what NCCL itself runs for that call: at every size S, "
    "`taccl-synth --algo nccl --size S` (NCCL's tuning model picks ring or "
    "double binary tree, LL/LL128/Simple and the channel count at S; "
    "AllToAll is its point-to-point), run at S; n/a on the chip device. "
    "**× NCCL** = the nccl row's time / this time at the same size (> 1: "
    "faster than NCCL). Every speed-up \"over NCCL\" of this report is "
    "× NCCL.",
    "**data**: `data` = real values moved and every element of the "
    "postcondition checked; `timing` = timing-only (buffers over 1 GiB in "
    "total, or --no-data). Every row verified unless the report says "
    "FAILED.",
    "**synth s**: wall time of `taccl-synth` writing the schedule.",
    "**taccl SKETCH @S**: the schedule `taccl-synth` synthesized from that "
    "bundled sketch for size S (its anchor; \"(own)\" = the sketch's "
    "input_size), run over the whole sweep. **taccl (best)**: per size, the "
    "fastest verified of those rows over all anchors and sketches of the "
    "configuration.",
    "**n/a** for an algorithm: `taccl-synth` refused it for this topology "
    "or collective, with the reason shown. **n/a** for one size: on the "
    "chip device a chunk (size / chunks per loop) smaller than, or not a "
    "multiple of, the 256-byte DMA segment cannot be moved, so the "
    "schedule does not run at that size; the executor's DMA message and "
    "the arithmetic must both say so, anything else unverified fails the "
    "run.",
    "The TACOS sizes are per-NPU input (1 MiB, 64 MiB), so our size (the "
    "per-rank AllGather output) is n × that.",
]


# ------------------------------------------------------------ formatting

def fmt_size(b):
    b = int(b)
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if b >= unit and b % unit == 0:
            return "%d %s" % (b // unit, name)
    return "%d B" % b


def fmt(x, none="—"):
    """A figure with about four significant digits, never in e-notation."""
    if x is None:
        return none
    x = float(x)
    a = abs(x)
    if a >= 1000:
        return "%.0f" % x
    if a >= 100:
        return "%.1f" % x
    if a >= 10:
        return "%.2f" % x
    if a >= 1:
        return "%.3f" % x
    if a == 0:
        return "0"
    if a >= 0.001:
        return "%.4f" % x
    return "%.2g" % x


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def write_atomic(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(tmp, mode) as f:
        f.write(data)
    os.replace(tmp, path)


# The longest a table cell may be (visible characters, a link counted by
# its text): a sentence.  A longer cell becomes a numbered note under its
# table (table() below).
CELL_MAX = 90


def visible(text):
    """Text as a reader sees it: a markdown link [t](u) counts as t."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", str(text))


def table(head, rows, notes=None):
    """A markdown table; any cell longer than CELL_MAX becomes "note N"
    (a cell "status (why)" keeps its status: "status, note N") with its
    text as note N in a numbered list under the table.  notes: a list of
    texts already referred to by the rows (note 1, 2, ...), to which the
    long cells are added; identical texts share one number."""
    notes = list(notes or [])

    def note(text):
        if text not in notes:
            notes.append(text)
        return "note %d" % (notes.index(text) + 1)

    def cell(c):
        c = str(c)
        if len(visible(c)) <= CELL_MAX:
            return c
        m = re.match(r"^([^()]{1,30}?) \((.*)\)$", c, re.S)
        if m:
            return "%s, %s" % (m.group(1), note(m.group(2)))
        return note(c)

    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(cell(c).replace("|", "\\|") for c in r) + " |"
            for r in rows]
    if notes:
        out += [""] + ["%d. %s" % (i + 1, n.rstrip(".") + ".")
                       for i, n in enumerate(notes)]
    return "\n".join(out)


# ---------------------------------------------------------- data access

class Data:
    """Results indexed by section key and algorithm label."""

    def __init__(self, secs, results):
        self.secs = secs
        self.by_key = {}
        self.unavailable = {}
        for r in results:
            # a synthesizer (or solver) that is not there yet is said once
            # per configuration, not per anchor; CBC runs are timed only
            if is_cbc(r):
                continue
            if r["status"] == "unavailable":
                self.unavailable.setdefault(r["key"], []).append(r)
            else:
                self.by_key.setdefault(r["key"], []).append(r)

    def results(self, sec):
        return self.by_key.get(sec.key, [])

    def ok(self, sec):
        return [r for r in self.results(sec) if r["status"] == "ok"]

    def row(self, res, nominal):
        for row in usable(res):
            if row.get("nominal") == nominal:
                return row
        return None

    def ring_time(self, sec, nominal):
        """The ring's time at that size: the default ring, else (chip
        device) its power-of-two-channel variant "ring, K channels"."""
        for want in (lambda l: l == "ring", lambda l: l.startswith("ring,")):
            for r in self.ok(sec):
                if want(r["label"]):
                    row = self.row(r, nominal)
                    if row and row.get("time_us"):
                        return row["time_us"]
        return None

    def ring_best(self, sec, nominal):
        """(label, time) of the fastest ring row at that size: the default
        ring or any of its channel variants."""
        best = None
        for r in self.ok(sec):
            if r["label"] == "ring" or r["label"].startswith("ring,"):
                row = self.row(r, nominal)
                if row and row.get("time_us") and \
                        (best is None or row["time_us"] < best[1]):
                    best = (r["label"], row["time_us"])
        return best

    def nccl_row(self, sec, nominal):
        """The nccl row at that size (NCCL's own schedule) with a time, or
        None."""
        for r in self.ok(sec):
            if r["kind"] == "nccl":
                row = self.row(r, nominal)
                if row and row.get("time_us"):
                    return row
        return None

    def nccl_time(self, sec, nominal):
        """The nccl row's time at that size, or None."""
        row = self.nccl_row(sec, nominal)
        return row["time_us"] if row else None

    def taccl_best(self, sec, nominal, sketch=None, instances=None):
        """(result, row) of the fastest verified synthesized row at that
        size over every anchor and sketch of the section (or only those
        of one sketch file stem, with that --instances), or None."""
        best = None
        for r in self.ok(sec):
            if r["kind"] != "sketch":
                continue
            if sketch is not None and (
                    r["spec"]["sketch"] != sketch or
                    r["spec"].get("instances", 1) != instances):
                continue
            row = self.row(r, nominal)
            if row and row.get("time_us"):
                if best is None or row["time_us"] < best[1]["time_us"]:
                    best = (r, row)
        return best

    def sketched(self, sec):
        """Whether any bundled sketch was tried on this section."""
        return any(r["kind"] == "sketch" for r in self.results(sec)) or \
            bool(self.unavailable.get(sec.key))

    def best(self, sec, nominal, nccl=True):
        """(result, row) of the baseline (or bundled schedule) with the
        highest algbw at that size (without NCCL's own: nccl=False), or
        None."""
        best = None
        for r in self.ok(sec):
            if r["kind"] == "sketch" or (r["kind"] == "nccl" and not nccl):
                continue
            row = self.row(r, nominal)
            if row and row.get("time_us"):
                if best is None or row["time_us"] < best[1]["time_us"]:
                    best = (r, row)
        return best

    def model(self, sec):
        for r in self.results(sec):
            if r.get("model"):
                return r["model"]
        return None

    def sizes(self, sec):
        s = set()
        for r in self.ok(sec):
            s.update(row["nominal"] for row in usable(r) if "nominal" in row)
        return sorted(s)

    def section(self, topo, coll):
        return next((s for s in self.secs
                     if s.topo == topo and s.coll == coll), None)


def is_cbc(r):
    return r["kind"] == "sketch" and r["spec"]["solver"] == "cbc"


def anchor_label(r):
    """"ndv2-x2-sk-1 @16 MiB (own)" from "taccl ndv2-x2-sk-1 @16 MiB (own)"."""
    return r["label"][6:] if r["label"].startswith("taccl ") else r["label"]


def usable(res):
    """The rows of a result that ran (not n/a at their size)."""
    return [row for row in res["rows"] if not row.get("na")]


def bound_gbps(row):
    """The bound as an algorithm bandwidth at this row's size."""
    b = row.get("lower_bound_us") if row else None
    if not b:
        return None
    return row["size_bytes"] / (b * 1e3)


# ------------------------------------------------------------- markdown

def header(meta, results, failures):
    rows = sum(len(usable(r)) for r in results if r["status"] == "ok")
    checked = sum(1 for r in results if r["status"] == "ok"
                  for row in usable(r) if row.get("data_checked"))
    na = sum(1 for r in results if r["status"] == "ok"
             for row in r["rows"] if row.get("na"))
    nok = sum(1 for r in results if r["status"] == "ok")
    lines = [
        "# Benchmark: our schedules against NCCL's and the lower bound"
        if not meta.get("user_topo") else
        "# Benchmark of %s: our schedules against NCCL's and the lower "
        "bound" % meta["user_topo"],
        "",
        "- **date**: %s" % meta["date"],
        "- **machine**: %d cores (nproc), %s, %s, %s" % (
            meta["nproc"], meta["machine"], meta["cpu"], meta["kernel"]),
        "- **commit**: %s" % meta["commit"],
        "- **command**: `%s`%s (%s run, %d parallel jobs), %.0f s wall" % (
            meta["command"], " (by `make bench`)" if meta.get("via_make")
            else "", "QUICK" if meta["quick"] else "full",
            meta["jobs"], meta["wall_s"]),
        "- **references**: `docs/references.md` (TACCL, TE-CCL and TACOS "
        "figures, copied into `scripts/bench_ref.py`)",
    ]
    if not meta.get("user_topo"):
        lines.append("- **MSCCL++**: the same schedules as MSCCL XML and as MSCCL++ "
                     "plans, side by side with what makes them differ: "
                     "[mscclpp.md](mscclpp.md) (`make bench-mscclpp`)")
        lines.append("- **NCCL's tuning model**: our executor's time of every `--algo nccl` "
                     "schedule beside NCCL's own estimate for it, and the assumptions behind "
                     "the gaps: [nccl-model.md](nccl-model.md) (`make bench-nccl-model`)")
        lines.append("- **published NCCL**: published nccl-tests measurements on A100 and H100 "
                     "machines beside the model's `--algo nccl` at the same sizes, and what "
                     "moves the rows outside: [nccl-published.md](nccl-published.md) "
                     "(`make bench-nccl-published`)")
    if failures:
        lines.append("- **verdict: FAILED** — %d problem(s), listed under "
                     "[Failures](#failures)" % len(failures))
    else:
        lines.append("- **verdict**: every schedule that ran verified: %d "
                     "schedules, %d rows (%d with data checked element by "
                     "element, the rest timing-only)%s" % (
                         nok, rows, checked,
                         "; %d rows n/a at their size (the reason is in "
                         "their tables)" % na if na else ""))
    return "\n".join(lines)


def published_summary(data):
    head = ["config", "collective", "size", "best baseline",
            "taccl (best): sketch @anchor", "TACCL", "taccl/TACCL", "TE-CCL",
            "taccl/TE-CCL", "published bound", "our bound", "our/published bound"]
    rows = []
    for topo, coll, size, label, taccl, teccl, bnd, _ in bench_ref.PUBLISHED:
        sec = data.section(topo, coll)
        best = data.best(sec, size) if sec else None
        tb = data.taccl_best(sec, size) if sec else None
        mine = None
        who = "not run"
        if best:
            mine = bound_gbps(best[1])
            who = "%s (%s)" % (fmt(best[1]["algbw_gbps"]), best[0]["label"])
        ours = None
        synth = "no synthesized row"
        if tb:
            ours = tb[1]["algbw_gbps"]
            mine = mine or bound_gbps(tb[1])
            synth = "%s (%s)" % (fmt(ours), anchor_label(tb[0]))
        rows.append([topo, bench_ref_coll(coll), label, who, synth,
                     fmt(taccl), fmt(ratio(ours, taccl)), fmt(teccl),
                     fmt(ratio(ours, teccl)), fmt(bnd), fmt(mine),
                     fmt(ratio(mine, bnd))])
    return ("All in algbw, GB/s, at 1 GiB / 64 KiB / 1 KiB for docs/references.md's "
            "1 GB / 64 KB / 1 KB. **taccl (best)** is the fastest verified "
            "synthesized row at that size over every anchor of every "
            "bundled sketch of the configuration. A ratio above 1 means "
            "ours is faster (or our bound higher).\n\n" + table(head, rows))


def bench_ref_coll(coll):
    return {"allgather": "AllGather", "alltoall": "AllToAll",
            "allreduce": "AllReduce",
            "reducescatter": "ReduceScatter"}[coll]


def tacos_rows(data, topo):
    """Per size (1 MiB, 64 MiB per NPU): figures for the TACOS tables."""
    n, t1, b1, r1, synth, _ = bench_ref.TACOS[topo]
    sec = data.section(topo, "allgather") if data else None
    out = []
    for per_npu in (MIB, 64 * MIB):
        size = n * per_npu
        if per_npu == MIB:
            t_time, t_bound, t_ratio = t1, b1, r1
        else:
            t_ratio = bench_ref.TACOS_RATIO_64MIB[topo]
            t_bound = 64 * b1          # its bound is bandwidth-only
            t_time = t_ratio * t_bound
        out.append((per_npu, size, sec, t_time, t_bound, t_ratio))
    return out


def tacos_summary(data):
    head = ["topology", "NPUs", "input per NPU", "best baseline µs",
            "our bound µs", "baseline time/bound", "taccl (best) µs",
            "taccl time/bound", "TACOS µs", "TACOS bound µs",
            "TACOS time/bound", "best ours/TACOS time"]
    rows = []
    for topo in bench_ref.TACOS:
        n = bench_ref.TACOS[topo][0]
        for per_npu, size, sec, t_time, t_bound, t_ratio in \
                tacos_rows(data, topo):
            best = data.best(sec, size) if sec else None
            tb = data.taccl_best(sec, size) if sec else None
            ours = bnd = synth = None
            who = "not run"
            if best:
                ours = best[1]["time_us"]
                bnd = best[1].get("lower_bound_us")
                who = "%s (%s)" % (fmt(ours), best[0]["label"])
            swho = "no bundled sketch" if not (sec and data.sketched(sec)) \
                else "no synthesized row"
            if tb:
                synth = tb[1]["time_us"]
                bnd = bnd or tb[1].get("lower_bound_us")
                swho = "%s (%s)" % (fmt(synth), anchor_label(tb[0]))
            mine = min(x for x in (ours, synth, float("inf")) if x)
            mine = None if mine == float("inf") else mine
            derived = "" if per_npu == MIB else " (derived)"
            rows.append([topo, n, fmt_size(per_npu), who, fmt(bnd),
                         fmt(ratio(ours, bnd)), swho, fmt(ratio(synth, bnd)),
                         fmt(t_time) + derived,
                         fmt(t_bound) + derived, fmt(t_ratio),
                         fmt(ratio(mine, t_time))])
    return ("Times in µs; time/bound ≥ 1 (1.00 = optimal), the TACOS "
            "convention. TACOS's 64 MiB times are derived from docs/references.md's "
            "ratios: ratio × 64 × its 1 MiB bound (its bound is the "
            "bandwidth term alone). ours/TACOS time below 1 means ours is "
            "faster. TACOS is greedy and randomised and estimates with its "
            "own model; ours are baselines and synthesized schedules in our "
            "model (same link figures, store-and-forward).\n\n![TACOS overview](tacos.png)\n\n"
            + table(head, rows))


# ---------------------------------------------------------- calibration

def pow2_sizes(lo, hi):
    """lo, 2 lo, 4 lo, ... up to hi."""
    out, size = [], lo
    while size <= hi:
        out.append(size)
        size *= 2
    return out


def calibration_verdict(kind, pub_lo, pub_hi, ours_lo, ours_hi,
                        factor=None):
    """"reproduced" when every published endpoint the row states is
    matched within factor (x or /): both for a range, the maximum for "up
    to X", the minimum for "down to X"; else "not reproduced (ours/published
    = ...)"."""
    factor = factor or bench_ref.CALIBRATION_FACTOR
    checks = []
    if kind in ("range", "down"):
        checks.append(("min", ours_lo, pub_lo))
    if kind in ("range", "up"):
        checks.append(("max", ours_hi, pub_hi))
    if all(p / factor <= o <= p * factor for _, o, p in checks):
        return "reproduced"
    return "not reproduced (ours/published = %s)" % ", ".join(
        "%s %s" % (name, fmt(o / p)) for name, o, p in checks)


def _distance(kind, pub_lo, pub_hi, lo, hi):
    """How far (log ratio) ours lo..hi is from the published endpoints the
    row states."""
    import math
    d = []
    if kind in ("range", "down"):
        d.append(abs(math.log(lo / pub_lo)))
    if kind in ("range", "up"):
        d.append(abs(math.log(hi / pub_hi)))
    return max(d)


def variant_note(rid, row, exp):
    """For a row not reproduced: the model variant (bench_calib.VARIANTS)
    that brings the ratio nearest the published range, if any brings it
    nearer than the model does, with the ratios under it; else what each
    variant gave (neither explains the gap)."""
    import bench_calib
    e = (exp or {}).get(rid) or {}
    base = _distance(row["kind"], row["published_lo"], row["published_hi"],
                     row["ours_lo"], row["ours_hi"])
    tried, best = [], None
    for name, text in bench_calib.VARIANTS:
        got = e.get("variants", {}).get(name) or {}
        ratios = sorted((s, n / y) for s, (n, y) in got.items() if n and y)
        if not ratios:
            continue
        lo = min(r for _, r in ratios)
        hi = max(r for _, r in ratios)
        dist = _distance(row["kind"], row["published_lo"],
                         row["published_hi"], lo, hi)
        shown = ", ".join("%s at %s" % (fmt(r), fmt_size(s))
                          for s, r in ratios)
        tried.append((name, shown))
        if dist < base and (best is None or dist < best[0]):
            best = (dist, name, text, ratios, shown, lo, hi)
    if not tried:
        return None
    if best is None:
        return {"variant": None, "reproduced": False,
                "text": "not explained by the variants tried (each moves the "
                        "ratio away from the published range: %s); see the "
                        "note under the table" % "; ".join(
                            "%s %s" % t for t in tried)}
    dist, name, text, ratios, shown, lo, hi = best
    return {"variant": name, "text": "%s: %s" % (text, shown),
            "ratios": {str(s): r for s, r in ratios},
            "reproduced": calibration_verdict(
                row["kind"], row["published_lo"], row["published_hi"],
                lo, hi) == "reproduced"}


def ceiling_note(row, factor=None):
    """For a row whose ratio falls short of a published endpoint: whether
    any schedule at all could reach it in this model.  No schedule beats
    the lower bound, so NCCL's time over the bound (a size's "ceiling") is
    the largest speed-up over the model's NCCL that any schedule could
    show.  A maximum needs ours >= published / factor at some size, a
    minimum at every size; when the ceiling cannot give that, the cause is
    not the synthesizer but the model's NCCL (its schedule run at the
    topology's rates), and the note says how much slower NCCL's call must
    have been on the machine TACCL measured.  None when no endpoint is
    beyond the ceiling (or no size has a bound)."""
    factor = factor or bench_ref.CALIBRATION_FACTOR
    sizes = [x for x in row["sizes"] if x.get("ceiling")]
    if not sizes:
        return None
    parts, ends = [], []
    for end, want, pub, ours, pick in (
            ("minimum", row["kind"] in ("range", "down"),
             row["published_lo"], row["ours_lo"], min),
            ("maximum", row["kind"] in ("range", "up"),
             row["published_hi"], row["ours_hi"], max)):
        if not want or ours is None or ours >= pub / factor:
            continue
        need = pub / factor
        x = pick(sizes, key=lambda x: x["ceiling"])
        if x["ceiling"] >= need:
            continue
        ends.append(end)
        parts.append(
            "the published %s %s× needs ours ≥ %s (÷ %g) at %s size, but "
            "the model's NCCL takes %s %s× the lower bound (at %s) and no "
            "schedule beats the bound: NCCL's call on the machine TACCL "
            "measured took ≥ %s× the model's time (≥ %s× against our "
            "synthesized schedule)" % (
                end, "%g" % pub, fmt(need), factor,
                "every" if end == "minimum" else "some",
                "as little as" if end == "minimum" else "at most",
                fmt(x["ceiling"]), fmt_size(x["size_bytes"]),
                fmt(need / x["ceiling"]), fmt(need / ours)))
    if not parts:
        return None
    return {"endpoints": ends,
            "text": "beyond any schedule in this model, so caused by the "
                    "model's NCCL running at the topology's link and NIC "
                    "rates: " + "; ".join(parts)}


def nic_rate_note(row, e):
    """For a row beyond the ceiling: the model's NCCL with its network side
    changed (bench_calib.py's NIC-rate ladder: NCCL's schedule run with
    every NIC at f x its bandwidth).  First alone, at every size of the
    range against the synthesized schedule as measured; if no f reproduces
    the row, with NCCL's per-step latencies too, at the range's ends
    against the synthesized schedule on the latency variant; then NCCL
    2.8.4's estimate with its network at f.  Each ladder tried gives its
    highest f at which the row is reproduced, else its f nearest the
    published range; the text names every ladder tried, the fields are
    those of the one that reproduces the row, else of the last tried.  None
    without the ladder's times."""
    import bench_calib
    e = e or {}
    lat = (e.get("variants") or {}).get("latency") or {}
    alone = [(x["size_bytes"], x["synth_us"]) for x in row["sizes"]]
    both = [(sz, lat[sz][1]) for sz in sorted(e.get("latency_nic_rate") or {})
            if sz in lat and lat[sz][1]]
    est, mine = nccl_284_ladder(row)
    tried = []
    for key, got, synth, what in (
            ("nic-rate", e.get("nic_rate"), alone, "NCCL's schedule run with "
             "every NIC at f × its bandwidth (the synthesized schedule at "
             "the model's rates, every size)"),
            ("latency+nic-rate", e.get("latency_nic_rate"), both, "NCCL's "
             "per-step latencies on both sides and NCCL's schedule with every "
             "NIC at f × its bandwidth (the range's ends)"),
            ("nccl-2.8.4+nic-rate", est, mine, "NCCL 2.8.4's tuning-model "
             "estimate for its pick with its network bandwidth at f × the "
             "NICs' (the synthesized schedule plus 2.8.4's ring base latency, "
             "as nccl-2.8.4; every size)")):
        n = ladder(row, got or {}, synth)
        if n:
            n["variant"] = key
            n["what"] = what
            tried.append(n)
            if n["reproduced"]:
                break
    if not tried:
        return None
    rates = bench_calib.NIC_RATES
    for n in tried:
        ours = "ours %s (%s) – %s (%s)" % (
            fmt(n["ours_lo"]), fmt_size(n["lo_at"]), fmt(n["ours_hi"]),
            fmt_size(n["hi_at"]))
        n["text"] = ("%s: reproduced from f = %g, %s" % (n["what"], n["f"], ours)
                     if n["reproduced"] else
                     "%s: no f from %g to %g reproduces it, nearest at f = %g, "
                     "%s" % (n["what"], rates[0], rates[-1], n["f"], ours))
    out = dict(tried[-1])
    out["text"] = "measured by changing it, " + "; ".join(
        n["text"] for n in tried)
    return out


def nccl_284_ladder(row):
    """({size: {f: us}}, [(size, us)]): the nccl-2.8.4 variant's two sides
    at every size of the row, NCCL's with its inter-node bandwidth at f x
    the NICs' for each f of bench_calib.NIC_RATES; ({}, []) unless the
    variant applies at every size."""
    import bench_calib
    nodes, ranks, arch = topology_shape(row["topology"])
    if not nodes:
        return {}, []
    per = {f: bench_calib.nccl_284_variant(row["sizes"], row["collective"],
                                           ranks, nodes, arch == "ampere", f)
           for f in bench_calib.NIC_RATES}
    first = per[bench_calib.NIC_RATES[0]]
    if len(first) != len(row["sizes"]):
        return {}, []
    return ({s: {f: per[f][s][0] for f in per} for s in first},
            sorted((s, v[1]) for s, v in first.items()))


def ladder(row, got, synth):
    """The highest f of bench_calib.NIC_RATES at which the row is
    reproduced with NCCL's times got[size][f] over synth [(size, us)],
    else the f nearest the published range; None if a time is missing."""
    import bench_calib
    if not synth:
        return None
    best = None
    for f in bench_calib.NIC_RATES:
        ratios = []
        for size, us in synth:
            n = (got.get(size) or {}).get(f)
            if not n:
                return None
            ratios.append((n / us, size))
        lo, hi = min(ratios), max(ratios)
        ok = calibration_verdict(row["kind"], row["published_lo"],
                                 row["published_hi"], lo[0], hi[0]) == \
            "reproduced"
        dist = _distance(row["kind"], row["published_lo"],
                         row["published_hi"], lo[0], hi[0])
        if ok or best is None or dist < best[0]:
            best = (dist, f, lo, hi, ok)
        if ok:
            break
    dist, f, lo, hi, ok = best
    return {"f": f, "reproduced": ok, "ours_lo": lo[0], "lo_at": lo[1],
            "ours_hi": hi[0], "hi_at": hi[1]}


def sums_bound_us(name, coll, size):
    """For an AllReduce of size bytes per rank on bundled topology `name`
    over N > 1 nodes: Patarasuk and Yuan's 2(N-1)/N x size through a node's
    NICs (us), the bound of every schedule that adds partial sums of the
    same elements (NCCL's, TACCL's, msccl-tools'); None otherwise.  Our
    executor's bound does not assume that (src/bound/bound.c), so it is
    the calibration's ceiling only."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "topologies", name + ".json")
    try:
        with open(path) as f:
            t = json.load(f)
        n = t["nodes"]
        bw = sum(x["bandwidth_gbps"] for x in t.get("nics") or [])
    except (OSError, ValueError, KeyError):
        return None
    if coll != "allreduce" or n < 2 or bw <= 0:
        return None
    return 2.0 * (n - 1) / n * size / (bw * 1000.0)


def topology_shape(name):
    """(nodes, ranks, device arch) of bundled topology `name`, (None, None,
    None) if there is no such file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "topologies", name + ".json")
    try:
        with open(path) as f:
            t = json.load(f)
    except (OSError, ValueError):
        return None, None, None
    return (t["nodes"], t["nodes"] * t["ranks_per_node"],
            (t.get("device") or {}).get("arch"))


def calibration_rows(data, exp=None):
    """One dict per bench_ref.CALIBRATION row: at every size of its range
    that ran, the nccl row's time and the fastest verified schedule
    synthesized from the row's sketch (over its anchors, and up to 64 MiB
    over the protocols too: exp, bench_calib.py), their ratio, min-max over
    the sizes and the verdict; for a row not reproduced, the model variant
    that moves it most.  Also calibration.json."""
    out = []
    for (rid, topo, coll, stem, tname, inst, lo, hi, pub_sizes, pub_text,
         kind, pub_lo, pub_hi, why) in bench_ref.CALIBRATION:
        sec = data.section(topo, coll)
        row = {"id": rid, "topology": topo, "collective": coll,
               "sketch": stem, "taccl_sketch": tname, "instances": inst,
               "sizes_published": pub_sizes, "lo_bytes": lo, "hi_bytes": hi,
               "published": pub_text, "kind": kind, "published_lo": pub_lo,
               "published_hi": pub_hi, "why_this_sketch": why,
               "sizes": [], "sizes_missing": [], "ours_lo": None,
               "ours_hi": None, "ours_lo_at": None, "ours_hi_at": None,
               "note": bench_ref.CALIBRATION_NOTES.get(rid, "—")}
        out.append(row)
        if stem is None:
            row["verdict"] = "not measured: no such sketch"
            continue
        if sec is None or not data.results(sec):
            row["verdict"] = "not run"
            continue
        for size in pow2_sizes(lo, hi):
            nccl = data.nccl_time(sec, size)
            tb = data.taccl_best(sec, size, stem, inst)
            if not nccl or not tb:
                row["sizes_missing"].append(size)
                continue
            choice = next((r.get("nccl", {}).get(size) for r in data.ok(sec)
                           if r["kind"] == "nccl"), None) or {}
            synth_us, anchor = tb[1]["time_us"], anchor_label(tb[0])
            bound = tb[1].get("lower_bound_us") or \
                data.nccl_row(sec, size).get("lower_bound_us")
            sums = sums_bound_us(topo, coll, size)
            pv = ((exp or {}).get(rid) or {}).get("protos", {}).get(size)
            if pv and pv[0] < synth_us:
                synth_us, anchor = pv[0], anchor_label({"label": pv[1]})
            row["sizes"].append({
                "size_bytes": size, "nccl_us": nccl,
                "nccl_choice": {k: choice.get(k) for k in
                                ("algo", "proto", "channels",
                                 "estimate_us", "channels_max",
                                 "bw_intra_gbps", "bw_inter_gbps")},
                "synth_us": synth_us,
                "anchor": anchor,
                "anchor_bytes": (tb[0].get("synth") or {}).get("size_bytes"),
                "ratio": nccl / synth_us,
                "bound_us": bound,
                "sums_bound_us": sums,
                "ceiling": nccl / max(bound, sums or 0) if bound else None})
        if not row["sizes"]:
            row["verdict"] = "not measured (no size of the range has both " \
                "an nccl row and a verified schedule from the sketch)"
            continue
        a = min(row["sizes"], key=lambda x: x["ratio"])
        b = max(row["sizes"], key=lambda x: x["ratio"])
        row["ours_lo"], row["ours_lo_at"] = a["ratio"], a["size_bytes"]
        row["ours_hi"], row["ours_hi_at"] = b["ratio"], b["size_bytes"]
        row["verdict"] = calibration_verdict(kind, pub_lo, pub_hi,
                                             a["ratio"], b["ratio"])
        if row["verdict"] != "reproduced" and row["note"] == "—":
            import bench_calib
            e = dict((exp or {}).get(rid) or {})
            e["variants"] = dict(e.get("variants") or {})
            e["variants"]["launch"] = bench_calib.launch_variant(row["sizes"])
            e["variants"]["nccl-model"] = bench_calib.nccl_model_variant(
                row["sizes"])
            nodes, ranks, arch = topology_shape(topo)
            if nodes:
                e["variants"]["nccl-2.8.4"] = bench_calib.nccl_284_variant(
                    row["sizes"], coll, ranks, nodes, arch == "ampere")
            e["variants"]["launch+proto"] = bench_calib.launch_proto_variant(
                row["sizes"], e["variants"].get("proto") or {},
                (e.get("picks") or {}).get("proto") or {})
            v = variant_note(rid, row, {rid: e})
            if v:
                row["variant"] = v
                row["note"] = v["text"] + (" — reproduced under it" if
                                           v["reproduced"] else "")
            c = None if v and v["reproduced"] else ceiling_note(row)
            if c:
                row["ceiling"] = c
                row["verdict"] += "; beyond the model's ceiling"
                n = nic_rate_note(row, e)
                if n:
                    row["nic_rate"] = n
                row["note"] = c["text"] + ("; " + n["text"] if n else "") + (
                    "; nearest variant: " + row["note"] if v else "")
    return out


def calibration_verdict_cell(c, note):
    """A short verdict, the long text (ratios, the model assumption) as a
    note: note(text) gives its reference."""
    v = c.get("verdict") or ""
    if v == "reproduced" and c["note"] == "—":
        return "reproduced"
    detail = [v[len("not reproduced ("):].split(")", 1)[0]] \
        if v.startswith("not reproduced (") else []
    if not v.startswith("not reproduced") and v != "reproduced":
        if len(v) <= 40:
            return v
        detail = [v]
    if c["note"] != "—":
        detail.append("model assumption: " + c["note"])
    short = v.split(" (")[0].split(":")[0]
    if v.startswith("not reproduced"):
        explained = (c.get("variant") or {}).get("reproduced") or \
            (c.get("nic_rate") or {}).get("reproduced")
        short = "not reproduced" + (
            "; beyond the ceiling, explained" if c.get("ceiling") and explained
            else "; beyond the ceiling" if c.get("ceiling")
            else "; explained" if explained else
            "; not explained" if c.get("variant") else "")
    if not detail:
        return short
    return "%s, %s" % (short, note("%s: %s" % (c["id"], "; ".join(detail))))


def calibration_md(rows, meta):
    head = ["row", "configuration", "collective", "sketch",
            "sizes (published)", "sizes run", "TACCL / NCCL (published)",
            "ours: NCCL / sketch", "ceiling: NCCL / bound", "verdict"]
    body, whys, notes = [], [], []

    def note(text):
        notes.append(text)
        return "note %d" % len(notes)

    for c in rows:
        sk = "%s → %s" % (c["taccl_sketch"], c["sketch"]) if c["sketch"] \
            else "%s: not in TACCL's repository" % c["taccl_sketch"]
        if c["instances"] != 1:
            sk += ", %d instances" % c["instances"]
        whys.append("- %s: %s — %s." % (c["id"], c["taccl_sketch"],
                                        c["why_this_sketch"]))
        ran = [x["size_bytes"] for x in c["sizes"]]
        total = len(pow2_sizes(c["lo_bytes"], c["hi_bytes"]))
        if ran:
            run = "%s%s (%d of %d)" % (
                fmt_size(ran[0]), "" if len(ran) == 1
                else "–" + fmt_size(ran[-1]), len(ran), total)
        else:
            run = "none of %d" % total
        ours = "—"
        if c["ours_lo"] is not None:
            ours = "%s (%s)" % (fmt(c["ours_lo"]), fmt_size(c["ours_lo_at"]))
            if c["ours_hi_at"] != c["ours_lo_at"]:
                ours += " – %s (%s)" % (fmt(c["ours_hi"]),
                                        fmt_size(c["ours_hi_at"]))
        ceil = [x for x in c["sizes"] if x.get("ceiling")]
        top = "—"
        if ceil:
            a = min(ceil, key=lambda x: x["ceiling"])
            b = max(ceil, key=lambda x: x["ceiling"])
            top = "%s (%s)" % (fmt(a["ceiling"]), fmt_size(a["size_bytes"]))
            if b is not a:
                top += " – %s (%s)" % (fmt(b["ceiling"]),
                                       fmt_size(b["size_bytes"]))
        body.append([c["id"], c["topology"], bench_ref_coll(c["collective"]),
                     sk, c["sizes_published"], run, c["published"], ours,
                     top, calibration_verdict_cell(c, note)])
    rep = sum(1 for c in rows if c.get("verdict") == "reproduced")
    return "\n".join([
        "TACCL's Figures 6–8 (docs/references.md) measured TACCL's "
        "schedules against NCCL 2.8.4 on the real machines; here is the "
        "same ratio in our model, per published range: %d of %d "
        "reproduced within ×/÷ %s. A verdict's details and, for a row not "
        "reproduced, the model assumption that moves it are the numbered "
        "notes under the table; how each column is made follows them." % (
            rep, len(rows), "%g" % bench_ref.CALIBRATION_FACTOR),
        "", table(head, body, notes), "",
        "## How to read it", "",
        "- **ours** at a size S = time of the nccl row "
        "(NCCL's own schedule at S, `taccl-synth --algo nccl --size S`) / "
        "time of the fastest verified schedule synthesized from that row's "
        "sketch (over its anchors, `taccl (best)` restricted to that "
        "sketch, and up to 64 MiB also under LL and LL128: NCCL picks its "
        "protocol, so do we), at every power of two S of the published "
        "range that this run has (%s), shown as min (at size) – max (at "
        "size).\n- **ceiling** at a size = the nccl row's time / our lower bound "
        "(src/bound) at that size, for AllReduce over N nodes the larger of "
        "that and Patarasuk and Yuan's 2(N−1)/N × S through a node's NICs "
        "(the bound of schedules that add partial sums of the same "
        "elements, as NCCL's, TACCL's and msccl-tools' all do; our bound "
        "does not assume it: docs/design.md): no such schedule is faster "
        "than the bound, so none could show a larger speed-up over the "
        "model's NCCL; min – max over the sizes.\n- **model assumption** (in the notes), "
        "for a row not reproduced: of the "
        "model's assumptions that plausibly cause it, the one whose change "
        "brings our ratio nearest the published range, measured at the "
        "range's ends by running the same two schedules on a variant of "
        "the topology (scripts/bench_calib.py: switch ports shared instead "
        "of one transfer at a time; resources booked ahead (reserve) "
        "instead of work-conserving ports and NICs; NCCL's per-step hop latencies instead "
        "of TE-CCL's alphas; NCCL's schedule under the protocol the "
        "executor times fastest, not the one NCCL's tuning model picks; "
        "alpha as latency only, not occupancy of the hop's link, port or "
        "NIC (delay), alone or with NCCL's latencies), or "
        "at every size by adding to both times the GPU-side cost of a call "
        "the model leaves out (launch: NCCL's base latency, 6.6–14 us by "
        "algorithm and protocol), or both of launch and proto, or by taking "
        "NCCL's call at what NCCL's own tuning model estimates for it "
        "(nccl-model: its fit of its machines, the synthesized side plus "
        "the launch cost; nccl-2.8.4: the same with the model of NCCL "
        "2.8.4, the version TACCL measured), with the ratios under it.\n"
        "- **reproduced**: every endpoint the paper states is matched within "
        "×/÷ %s (a range: both; \"up to X\": the maximum; \"down to X\": "
        "the minimum).\n- Sizes are nccl-tests per-rank buffers: \"up to 1 "
        "MB\" is 1 KiB–1 MiB, \"above 1 MB\" 2 MiB–1 GiB, \"from 512 "
        "MB\" 512 MiB–1 GiB. Per-size times, NCCL's choice and the anchor: "
        "`calibration.json` beside this file." % (
            "QUICK: only its sizes 1 KiB, 64 KiB, 1 MiB, 1 GiB"
            if meta.get("quick") else "every size 1 KiB–1 GiB",
            "%g" % bench_ref.CALIBRATION_FACTOR),
        "",
        "A row \"beyond the model's ceiling\" falls short of a published "
        "endpoint by more than any schedule could make up: the published "
        "speed-up (÷ %s) exceeds the ceiling at every size that could carry "
        "it, so in this model no synthesizer could reproduce it against "
        "this NCCL, and the assumption that causes it is the model's NCCL "
        "itself: its schedule, built as NCCL builds it, run at the "
        "topology's link and NIC rates with the α–β costs the model gives "
        "every schedule. Its note then says how much "
        "slower than the model NCCL's call on TACCL's machine must have "
        "been, and measures that assumption changed on its network side: "
        "NCCL's schedule run with every NIC at f × its bandwidth (f = "
        "0.95, 0.90, … 0.30, at every size of the range; "
        "scripts/bench_calib.py), the highest f at which the row is "
        "reproduced: how far below the NICs' line rate NCCL would have had "
        "to run for TACCL's figure to hold in this model. A loss that "
        "grows with the steps of a call is not a rate, so where no f "
        "reproduces the row alone, the same ladder is taken with NCCL's "
        "per-step latencies on both sides (the latency variant, at the "
        "range's ends), then on NCCL 2.8.4's own estimate for its pick "
        "(the nccl-2.8.4 variant, every size), and the first that "
        "reproduces it is named. Where NCCL 2.8.4 "
        "lost that time on the real machine is outside the model and "
        "cannot be measured here. Where no variant explains a row (\"not explained\"), the model "
        "differs from the machines TACCL measured in ways these variants "
        "do not change, and we do not claim which: TACCL measured NCCL "
        "2.8.4, while our nccl row follows today's NCCL (its constants, its "
        "channel search, its protocols and their thresholds); the model "
        "holds a NIC direction for a transfer's whole alpha + bytes/bandwidth, "
        "one transfer at a time, and a hop across nodes holds the sender's "
        "egress and the receiver's ingress at once (so NCCL's many "
        "point-to-point messages queue where real NICs overlap them); and it "
        "has no GPU-side costs but the launch variant's per call (none per "
        "step: the runtimes' synchronisation between steps), which weigh "
        "most on small calls." % ("%g" % bench_ref.CALIBRATION_FACTOR),
        "",
        "Sketches (TACCL's name → our file; where the published range names "
        "none, which we took and why):", ""] + whys)


def calibration_json(rows, meta):
    import json
    return json.dumps({
        "what": "TACCL's measured speed-ups over NCCL (docs/references.md, "
                "Figs. 6-8) beside ours: per size, nccl_us = our nccl row "
                "(taccl-synth --algo nccl --size S, run at S), synth_us = "
                "the fastest verified schedule synthesized from the row's "
                "sketch over its anchors (anchor: which), ratio = "
                "nccl_us / synth_us",
        "factor": bench_ref.CALIBRATION_FACTOR,
        "date": meta.get("date"), "commit": meta.get("commit"),
        "command": meta.get("command"), "quick": meta.get("quick"),
        "partial": meta.get("partial"), "rows": rows}, indent=1) + "\n"


def synth_row_at(r):
    """The sweep row of a synthesized result at its own (anchor) size."""
    size = (r.get("synth") or {}).get("size_bytes")
    for row in usable(r):
        if size and row.get("size_bytes") == int(size):
            return row
    return None


def limit_hit(r):
    """Whether a stage ran into --time-limit (then the time is capped and
    the schedule the best found, not proven optimal)."""
    j = r.get("synth") or {}
    lim = r["spec"]["limit"]
    hit = [name for name, key in (("routing", "route_seconds"),
                                  ("contiguity", "contig_seconds"))
           if (j.get(key) or 0) >= 0.97 * lim]
    return hit


def synth_time_text(r):
    """"0.31 s (stages 0.01/0.00/0.28 s)" and flags, for one synthesis."""
    if r["status"] not in ("ok", "failed") or not r.get("synth"):
        return "%s (%s)" % (r["status"], r["reason"] or "")
    j = r["synth"]
    text = "%s s" % fmt(r["synth_s"])
    if j.get("route_seconds") is not None:
        text += " (route %s / order %s / contig %s s)" % (
            fmt(j["route_seconds"]), fmt(j.get("order_seconds")),
            fmt(j.get("contig_seconds")))
    flags = []
    hit = limit_hit(r)
    if hit:
        flags.append("%s hit the %g s limit" % (" and ".join(hit),
                                                r["spec"]["limit"]))
    if j.get("route_gap"):
        flags.append("route gap %s" % fmt(j["route_gap"]))
    if j.get("route_fallback"):
        flags.append("routing MILP unsolved: heuristic routing returned")
    if flags:
        text += "; " + ", ".join(flags)
    return text


def ring_losses(data):
    """[(config, size, taccl best label, its time, ring label, ring time)]
    where taccl (best) is slower than the fastest ring row, and how many
    (config, size) pairs were compared."""
    out, compared = [], 0
    for sec in data.secs:
        for size in data.sizes(sec):
            tb, ring = data.taccl_best(sec, size), data.ring_best(sec, size)
            if not tb or not ring:
                continue
            compared += 1
            if tb[1]["time_us"] > ring[1]:
                out.append((sec.key, size, anchor_label(tb[0]),
                            tb[1]["time_us"], ring[0], ring[1]))
    return out, compared


def allreduce_targets_md(data):
    """Issue 5's AllReduce targets, judged on taccl (best) per size:
    faster than the ring at every size from 1 KiB to 1 GiB, >= 90 % of the
    bound at 1 GiB, and the gains over NCCL (our nccl row) beside TACCL's
    over NCCL."""
    head = ["configuration", "issue 5 asks", "measured", "met?"]
    rows = []
    for topo, lo, hi, gain, most in (
            ("ndv2-x2", 2 * MIB, GIB, "up to 2.7× over NCCL above 1 MB", 2.7),
            ("dgx2-x2", KIB, 4 * MIB, "1.49–6.4× over NCCL at 1 KB–4 MB",
             6.4)):
        sec = data.section(topo, "allreduce")
        pts = []
        for size in (data.sizes(sec) if sec else []):
            tb, ring = data.taccl_best(sec, size), data.ring_time(sec, size)
            if KIB <= size <= GIB and tb and ring:
                pts.append((size, ring / tb[1]["time_us"], tb))
        if not pts:
            rows.append([topo, "AllReduce synthesized", "no synthesized row",
                         "not measured"])
            continue
        worst = min(pts, key=lambda p: p[1])
        rows.append([topo, "faster than the ring at every size 1 KiB–1 GiB",
                     "%d sizes; slowest × ring %s at %s (%s)" % (
                         len(pts), fmt(worst[1]), fmt_size(worst[0]),
                         anchor_label(worst[2][0])),
                     "**met**" if worst[1] > 1 else "not met"])
        top = [p for p in pts if p[0] == GIB]
        if top:
            r = top[0][2][1].get("bound_ratio")
            rows.append([topo, "≥ 90 % of the bound at 1 GiB",
                         "bound/time %s (%s)" % (fmt(r),
                                                 anchor_label(top[0][2][0])),
                         "**met**" if r and r >= 0.9 else "not met"])
        span = []
        for size, _, tb in pts:
            nccl = data.nccl_time(sec, size)
            if lo <= size <= hi and nccl:
                span.append(nccl / tb[1]["time_us"])
        if span:
            rows.append([topo, "TACCL's gain reproduced: %s" % gain,
                         "× NCCL %s–%s at %s–%s (%d size%s)" % (
                             fmt(min(span)), fmt(max(span)), fmt_size(lo),
                             fmt_size(hi), len(span),
                             "" if len(span) == 1 else "s"),
                         "**met** (our best ≥ TACCL's best)"
                         if max(span) >= most else
                         "not met (our best < TACCL's %g×)" % most])
        else:
            rows.append([topo, "TACCL's gain reproduced: %s" % gain,
                         "no nccl row in %s–%s" % (fmt_size(lo),
                                                    fmt_size(hi)),
                         "not measured"])
    return table(head, rows)


def targets_md(data, results, meta):
    head = ["target", "issue 4 asks", "measured", "published beside",
            "met?"]
    rows = []
    pub = {(p[0], p[1], p[2]): p for p in bench_ref.PUBLISHED}
    for topo, coll, size, label, kind, value, text in \
            bench_ref.TARGET_QUALITY:
        p = pub[(topo, coll, size)]
        want = value * p[6] if kind == "bound" else p[5]
        sec = data.section(topo, coll)
        tb = data.taccl_best(sec, size) if sec else None
        name = "Quality: %s %s at %s" % (topo, bench_ref_coll(coll), label)
        ask = "%s: algbw ≥ %s GB/s" % (text, fmt(want))
        if kind == "bound":
            ask += " (%g × docs/references.md's bound %s)" % (value, fmt(p[6]))
        beside = "TE-CCL %s, TACCL %s" % (fmt(p[5]), fmt(p[4]))
        if not tb:
            rows.append([name, ask, "no synthesized row", beside,
                         "not measured"])
            continue
        got = tb[1]["algbw_gbps"]
        rows.append([name, ask, "%s GB/s at %s, bound/time %s (%s)" % (
            fmt(got), fmt_size(tb[1]["size_bytes"]),
            fmt(tb[1].get("bound_ratio")), anchor_label(tb[0])), beside,
            "**met**" if got >= want else "not met"])
    losses, compared = ring_losses(data)
    lost = "; ".join("%s at %s: %s µs (%s) vs %s %s µs" % (
        k, fmt_size(sz), fmt(t), who, rl, fmt(rt))
        for k, sz, who, t, rl, rt in losses)
    notes = []

    def note(text):
        notes.append(text)
        return "note %d" % len(notes)

    rows.append(["Quality: never slower than the ring",
                 "taccl (best) ≤ the fastest ring row wherever a sketch "
                 "ran",
                 ("%d (config, size) pairs compared; slower at %d, %s" % (
                     compared, len(losses), note(
                         "Slower than the ring: " + lost))) if losses else
                 "%d (config, size) pairs compared; slower at: none"
                 % compared, "—",
                 "not measured" if not compared else
                 "not met" if losses else "**met**"])
    for topo in bench_ref.TARGET_TACOS_TOPOS:
        n, _, _, t_ratio, _, _ = bench_ref.TACOS[topo]
        sec = data.section(topo, "allgather")
        name = "TACOS: %s AllGather, 1 MiB per NPU" % topo
        ask = "time/bound ≤ %s" % fmt(bench_ref.TARGET_TACOS_RATIO)
        beside = "TACOS %s" % fmt(t_ratio)
        if not sec or not data.sketched(sec):
            rows.append([name, ask, "no bundled sketch", beside, "—"])
            continue
        tb = data.taccl_best(sec, n * MIB)
        if not tb or not tb[1].get("lower_bound_us"):
            rows.append([name, ask, "no synthesized row", beside,
                         "not measured"])
            continue
        rt = tb[1]["time_us"] / tb[1]["lower_bound_us"]
        rows.append([name, ask, "%s (%s µs, bound %s µs; %s)" % (
            fmt(rt), fmt(tb[1]["time_us"]), fmt(tb[1]["lower_bound_us"]),
            anchor_label(tb[0])), beside,
            "**met**" if rt <= bench_ref.TARGET_TACOS_RATIO else "not met"])
    sk = [r for r in results if r["kind"] == "sketch"
          and r["spec"]["size"] is None
          and r["spec"].get("instances", 1) == 1]
    for coll, name, secs in bench_ref.SYNTH_TIME:
        mine = [r for r in sk if r["spec"]["coll"] == coll and
                bench_ref.taccl_name(r["spec"]["sketch"]) == name]
        glpk = [r for r in mine if r["spec"]["solver"] == "glpk"]
        what = "Synthesis time: %s %s" % (bench_ref_coll(coll), name)
        ask = "≤ TACCL (Gurobi) %s s" % fmt(secs)
        if not glpk:
            rows.append([what, ask, "no bundled sketch", "TACCL %s s"
                         % fmt(secs), "—"])
            continue
        for g in glpk:
            cbc = next((r for r in mine if r["spec"]["solver"] == "cbc"
                        and r["spec"]["sketch"] == g["spec"]["sketch"]),
                       None)
            full = "%s: GLPK %s" % (g["spec"]["sketch"], synth_time_text(g))
            got = "%s: GLPK %s s" % (g["spec"]["sketch"], fmt(g["synth_s"])
                                     if g.get("synth") else g["status"])
            if g["status"] == "ok" and g.get("synth"):
                full += ", predicted %s µs" % fmt(g["synth"].get(
                    "predicted_us"))
            if cbc is None:
                full += "; CBC: not run"
                got += ", CBC not run"
            elif cbc["status"] == "unavailable":
                full += "; CBC: unavailable (%s)" % cbc["reason"]
                got += ", CBC unavailable"
            else:
                full += "; CBC %s" % synth_time_text(cbc)
                got += ", CBC %s s" % fmt(cbc["synth_s"])
                if cbc.get("synth"):
                    full += ", predicted %s µs" % fmt(cbc["synth"].get(
                        "predicted_us"))
            got += ", " + note(full)
            if g["status"] != "ok":
                met = "not measured" if g["status"] == "unavailable" \
                    else "not met"
            else:
                met = "**met**" if g["synth_s"] <= secs else "not met"
                if limit_hit(g):
                    # stopped by the time limit, not proven optimal: TACCL's
                    # time is for a solve to its end
                    met = "not comparable (a stage hit its time limit)"
            if bench_ref.is_variant(g["spec"]["sketch"]):
                met = "not judged (our variant, more chunks than TACCL's)"
            rows.append([what, ask, got, "TACCL %s s" % fmt(secs), met])
    return table(head, rows, notes)


def sketch_table(data, results):
    """One row per (sketch, collective, anchor)."""
    head = ["sketch", "topology", "collective", "anchor (synthesized at)",
            "status", "algbw at anchor GB/s", "bound/time at anchor",
            "× ring at anchor", "× NCCL at anchor",
            "synthesis (wall; stages)", "predicted µs",
            "run µs at anchor"]
    rows = []
    sk = [r for r in results if r["kind"] == "sketch" and not is_cbc(r)]
    sk.sort(key=lambda r: (r["spec"]["sketch"], r["spec"]["coll"],
                           r["spec"]["size"] is not None,
                           r["spec"]["size"] or 0))
    for r in sk:
        sp = r["spec"]
        anchor = r["label"].split(" @", 1)[1]
        topo = r["key"][:-len(sp["coll"]) - 1]
        status = r["status"] + (" (%s)" % r["reason"] if r["reason"] and
                                r["status"] != "ok" else "")
        row = synth_row_at(r) if r["status"] == "ok" else None
        sec = data.section(topo, sp["coll"])
        ring = data.ring_time(sec, row.get("nominal")) if row and sec \
            else None
        nccl = data.nccl_time(sec, row.get("nominal")) if row and sec \
            else None
        rows.append([sp["sketch"], topo, bench_ref_coll(sp["coll"]), anchor,
                     status, fmt(row and row.get("algbw_gbps")),
                     fmt(row and row.get("bound_ratio")),
                     fmt(ratio(ring, row and row.get("time_us"))),
                     fmt(ratio(nccl, row and row.get("time_us"))),
                     synth_time_text(r) if r["status"] != "unavailable"
                     else "—",
                     fmt((r.get("synth") or {}).get("predicted_us")),
                     fmt(row and row.get("time_us"))])
    return table(head, rows)


def synth_part(data, results, meta):
    sk = [r for r in results if r["kind"] == "sketch"]
    lines = []
    if not sk:
        lines.append("**synthesizer: no sketches** — " + (
            "none given (SKETCHES=...)." if meta.get("user_topo")
            else "none bundled in `sketches/`."))
        return "\n".join(lines)
    lim = meta.get("synth_limit_s")
    anchors = meta.get("anchors") or []
    lines.append(
        "Every " + ("sketch given (SKETCHES=..., on this topology) "
                    if meta.get("user_topo") else
                    "bundled sketch (`sketches/*.json`, paired with its "
                    "topology) ") +
        "is synthesized with `taccl-synth SKETCH TOPO --size S -o X.xml -q "
        "--json --time-limit %g` (**%g s per MILP stage**: routing and "
        "contiguity; a stage may overrun a little) at its anchor sizes S: "
        "its own input_size, docs/references.md's reference sizes inside the "
        "configuration's sweep%s. Each anchor's schedule is run over the "
        "whole sweep (`taccl-run X.xml --sweep LO:HI --json`, data checked "
        "where all buffers fit in 1 GiB). **taccl (best)** at a size is the "
        "fastest verified row over all anchors and sketches of the "
        "configuration, named by sketch and anchor (a user picks the "
        "schedule per size range, as MSCCL's minBytes/maxBytes do). "
        "Synthesis time is the wall time of the `taccl-synth` call, the "
        "stage times are its --json. TACCL's Table 2 pairs a sketch with "
        "other collectives too: those run at the sketch's own size only. "
        "Each sketch is also synthesized at its own size with `--solver "
        "cbc` (timed, its schedule checked at that size)." % (
            lim, lim, (" and %s" % ", ".join(fmt_size(a) for a in anchors)
                       + " inside it (TACOS networks: every point)")
            if anchors else " (QUICK: no more)"))
    if not meta.get("user_topo"):
        lines += ["", "## Synthesizer against the issue-4 targets", "",
                  targets_md(data, results, meta), "",
                  "## Synthesizer against the issue-5 targets (AllReduce)", "",
                  "× ring: our ring's time / taccl (best)'s at the same "
                  "size; × NCCL: our nccl row's (the schedule NCCL's tuning "
                  "picks at that size) / taccl (best)'s, in our model "
                  "(TACCL's gains were measured on real hardware).", "",
                  allreduce_targets_md(data), ""]
    else:
        lines.append("")
    lines += ["## Every %s sketch at every anchor" % (
        "given" if meta.get("user_topo") else "bundled"), "",
              "The row at the anchor size itself (each schedule's whole "
              "sweep is in its configuration's full table). × ring: our "
              "ring's time / this schedule's at that size; × NCCL: the "
              "nccl row's (NCCL's own schedule at that size).", "",
              sketch_table(data, results), ""]
    for note in meta.get("sketch_notes", []):
        lines.append("- " + note)
    lines.append("")
    if meta.get("user_topo"):
        return "\n".join(lines)
    lines.append("TACCL's published synthesis times (paper Table 2, Gurobi "
                 "with 12 threads):")
    lines.append("")
    lines.append(table(["collective", "sketch", "seconds"],
                       [[bench_ref_coll(c), s, fmt(t)]
                        for c, s, t in bench_ref.SYNTH_TIME]))
    return "\n".join(lines)


def bound_text(model):
    if not model:
        return "Lower bound: not reported."
    upb = model.get("us_per_byte") or 0
    bw = ("%s GB/s" % fmt(1.0 / (upb * 1e3))) if upb > 0 else "none"
    return ("Lower bound = max(latency %s µs — %s; size × %s µs/B, i.e. "
            "algbw ≤ %s — %s)." % (
                fmt(model.get("latency_us")), model.get("latency_why", ""),
                "%.4g" % upb, bw, model.get("bandwidth_why", "")))


def per_size_md(data, sec):
    """Per size: our fastest schedule against NCCL's (each estimate, and
    their range) and the bound: what the summary page links to."""
    rows = []
    for size in data.sizes(sec):
        p = size_point(data, sec, size)
        if p is None:
            continue
        e = p["estimates"]
        rows.append([fmt_size(size), p["full_label"], fmt(p["time_us"]),
                     fmt(p["nccl_us"]) if p["nccl_us"] else "n/a",
                     span(e.values()) if e else "—"] +
                    [fmt(e.get(k)) for k in ESTIMATES] +
                    [fmt(p["bound_ratio"])])
    if not rows:
        return []
    head = ["size", "ours (fastest)", "ours µs", "NCCL µs", "× NCCL range"] + \
        ["× NCCL: %s" % k for k in ESTIMATES] + ["bound/time"]
    return ["Ours against NCCL per size: our fastest schedule (synthesized "
            "or baseline), NCCL's time over ours under each estimate of "
            "NCCL's call (the summary page says what each is), and ours "
            "against the lower bound.", "", table(head, rows), ""]


def section_md(data, sec, plotted):
    lines = ["## %s" % COLL_NAME[sec.coll], ""]
    lines.append("%s: `topologies/%s.json`, %d ranks, sizes %s." % (
        sec.title, sec.topo, sec.ranks, ", ".join(
            "%s–%s" % (fmt_size(lo), fmt_size(hi)) if lo != hi
            else fmt_size(lo) for lo, hi in sec.ranges)))
    if sec.note:
        lines.append("Note: %s." % sec.note)
    lines.append("")
    if plotted:
        lines += ["![%s](%s.png)" % (sec.title, sec.key), ""]
    lines += per_size_md(data, sec)
    lines += [bound_text(data.model(sec)), ""]
    res = data.results(sec)
    head = ["algorithm", "status", "synth s", "chunks per loop", "rows",
            "data-checked rows", "n/a rows", "run s"]
    rows = []
    for r in res:
        status = r["status"]
        if r["status"] != "ok":
            status += " (%s)" % (r["reason"] or "")
        rows.append([r["label"], status,
                     fmt(r["synth_s"]) if r["kind"] != "xml" else "bundled",
                     chunks_text(r), len(r["rows"]),
                     sum(1 for x in usable(r) if x.get("data_checked")),
                     sum(1 for x in r["rows"] if x.get("na")),
                     fmt(r["run_s"])])
    lines += [table(head, rows), ""]
    lines += nccl_choice_md(data, sec)
    un = data.unavailable.get(sec.key, [])
    if un:
        names = sorted({r["spec"]["sketch"] for r in un})
        lines += ["Synthesizer for %s: unavailable (%s)." % (
            ", ".join(names), un[0]["reason"]), ""]
    lines += taccl_best_md(data, sec)
    lines += device_md(data, sec)
    lines += published_md(data, sec)
    lines += speedup_md(data, sec)
    if sec.coll == "allgather":
        lines += tacos_section_md(data, sec)
    lines += [full_table(data, sec), ""]
    return "\n".join(lines)


def chunks_text(r):
    """Chunks per loop of a result; the nccl row has one file per size."""
    by = [v for v in (r.get("nchunks_by_size") or {}).values() if v]
    if by and min(by) != max(by):
        return "%d–%d" % (min(by), max(by))
    return r.get("nchunks") or "—"


def nccl_choice_md(data, sec):
    """What NCCL's tuning picked per size, runs of equal choices merged:
    "1 KiB–8 KiB tree/LL × 1 channel; ..."."""
    r = next((r for r in data.ok(sec) if r["kind"] == "nccl"), None)
    if not r or not r.get("nccl"):
        return []
    runs = []
    for size in sorted(r["nccl"]):
        c = r["nccl"][size] or {}
        what = "%s/%s × %s channel%s" % (
            c.get("algo"), c.get("proto"), c.get("channels"),
            "" if c.get("channels") == 1 else "s")
        if runs and runs[-1][2] == what:
            runs[-1][1] = size
        else:
            runs.append([size, size, what])
    return ["NCCL's choice per size (the nccl row: `taccl-synth --algo nccl "
            "--size S`): " + "; ".join(
                "%s%s %s" % (fmt_size(a), "" if a == b else "–" + fmt_size(b),
                             w) for a, b, w in runs) + ".", ""]


def device_md(data, sec):
    """Chip/cluster device: every schedule's sync counts (transfers that
    need ChipSync / ClusterSync) and time at its smallest verified size, and
    for AllReduce whether f32 replicas are bit-identical (seeds 1-3)."""
    rows = []
    for r in data.results(sec):
        d = r.get("device")
        if not d:
            continue
        rep = d["replicas_identical"]
        rows.append([r["label"], fmt_size(d["size"]), fmt(d["time_us"]),
                     d["chip_syncs"] if d["chip_syncs"] is not None else "—",
                     d["cluster_syncs"] if d["cluster_syncs"] is not None
                     else "—",
                     "—" if rep is None else ("yes" if rep else "**no**")])
    if not rows:
        return []
    head = ["schedule", "size", "time µs", "ChipSync transfers",
            "ClusterSync transfers", "f32 replicas identical (seeds 1–3)"]
    return ["Synchronisation and floating point (the case study's points), "
            "per schedule:", "", table(head, rows), ""]


def taccl_best_md(data, sec):
    """Per size: the fastest synthesized row (sketch @anchor) beside the
    best baseline and the ring."""
    rows = []
    for size in data.sizes(sec):
        tb = data.taccl_best(sec, size)
        if not tb:
            continue
        row = tb[1]
        best = data.best(sec, size)
        ring = data.ring_time(sec, size)
        nccl = data.nccl_time(sec, size)
        rows.append([fmt_size(row["size_bytes"]), anchor_label(tb[0]),
                     fmt(row["time_us"]), fmt(row.get("algbw_gbps")),
                     fmt(row.get("lower_bound_us")),
                     fmt(row.get("bound_ratio")),
                     fmt(ratio(ring, row["time_us"])),
                     fmt(ratio(nccl, row["time_us"])),
                     "%s (%s)" % (fmt(best[1].get("algbw_gbps")),
                                  best[0]["label"]) if best else "—",
                     fmt(ratio(best[1]["time_us"], row["time_us"]))
                     if best else "—",
                     "data" if row.get("data_checked") else "timing"])
    if not rows:
        return []
    head = ["size", "taccl (best): sketch @anchor", "time µs", "algbw GB/s",
            "bound µs", "bound/time", "× ring", "× NCCL",
            "best baseline algbw",
            "× best baseline", "data"]
    return ["taccl (best) — the fastest verified synthesized row per size:",
            "", table(head, rows), ""]


def published_md(data, sec):
    pubs = [p for p in bench_ref.PUBLISHED
            if p[0] == sec.topo and p[1] == sec.coll]
    if not pubs:
        return []
    head = ["size", "algorithm", "ours algbw", "TACCL", "ours/TACCL",
            "TE-CCL", "ours/TE-CCL", "published bound", "our bound",
            "our/published bound"]
    rows = []
    notes = []
    for _, _, size, label, taccl, teccl, bnd, why in pubs:
        if why:
            notes.append("docs/references.md's bound at %s: %s GB/s (%s)." % (
                label, fmt(bnd), why))
        for r in data.ok(sec):
            row = data.row(r, size)
            if not row:
                continue
            ours, mine = row.get("algbw_gbps"), bound_gbps(row)
            rows.append(["%s (%s)" % (label, fmt_size(row["size_bytes"])),
                         r["label"], fmt(ours), fmt(taccl),
                         fmt(ratio(ours, taccl)), fmt(teccl),
                         fmt(ratio(ours, teccl)), fmt(bnd), fmt(mine),
                         fmt(ratio(mine, bnd))])
    if not rows:
        rows = [[label, "no schedule ran", "—", fmt(taccl), "—", fmt(teccl),
                 "—", fmt(bnd), "—", "—"]
                for _, _, _, label, taccl, teccl, bnd, _ in pubs]
    return (["Beside the published figures (algbw, GB/s):", "",
             table(head, rows), ""] + notes + ([""] if notes else []))


def speedup_md(data, sec):
    """TACCL's published speed-ups over NCCL in this configuration, and
    ours over the same range: × NCCL (the nccl row's time / ours), and
    apart, × ring (our ring's)."""
    out = []
    for topo, coll, lo, hi, text in bench_ref.SPEEDUPS:
        if topo != sec.topo or coll != sec.coll:
            continue
        sizes = [s for s in data.sizes(sec) if lo <= s <= hi]

        def taccl(size):
            tb = data.taccl_best(sec, size)
            return tb and (anchor_label(tb[0]), tb[1]["time_us"])

        def baseline(size):
            b = data.best(sec, size, nccl=False)
            return b and (b[0]["label"], b[1]["time_us"])

        nccl = lambda size: data.nccl_time(sec, size)   # noqa: E731
        ring = lambda size: data.ring_time(sec, size)   # noqa: E731
        out.append("%s. Ours at %s–%s, × NCCL (our nccl row's time / "
                   "this one's): taccl (best) %s; best other baseline %s. "
                   "Apart, × ring (our ring baseline, not NCCL): taccl "
                   "(best) %s." % (
                       text, fmt_size(lo), fmt_size(hi),
                       span_text(sizes, taccl, nccl),
                       span_text(sizes, baseline, nccl),
                       span_text(sizes, taccl, ring)))
        out.append("")
    return out


def span_text(sizes, pick, base):
    """"a× (who, size) to b× (who, size)": base(size) / pick(size)'s time
    over the sizes where both exist; pick gives (who, time)."""
    pts = []
    for size in sizes:
        mine, ref = pick(size), base(size)
        if mine and ref:
            pts.append((ref / mine[1], size, mine[0]))
    if not pts:
        return "no rows to compare in that range"
    a, b = min(pts), max(pts)
    if len(pts) == 1:
        return "%s× (%s, %s; the one size run)" % (fmt(a[0]), a[2],
                                                   fmt_size(a[1]))
    return "%s× (%s, %s) to %s× (%s, %s)" % (
        fmt(a[0]), a[2], fmt_size(a[1]), fmt(b[0]), b[2], fmt_size(b[1]))


def full_table(data, sec):
    head = ["algorithm", "size", "time µs", "algbw GB/s", "busbw GB/s",
            "bound µs", "bound/time", "× ring", "× NCCL", "data"]
    rows = []
    for r in data.results(sec):
        if r["status"] != "ok":
            rows.append([r["label"], "—", "%s (%s)" % (
                r["status"], r["reason"] or "")] + [""] * 7)
            continue
        for row in r["rows"]:
            if row.get("na"):
                rows.append([r["label"], fmt_size(row["size_bytes"]),
                             "n/a (%s)" % row["na"]] + [""] * 7)
                continue
            t = row.get("time_us")
            ring = data.ring_time(sec, row.get("nominal"))
            nccl = data.nccl_time(sec, row.get("nominal"))
            rows.append([
                r["label"], fmt_size(row["size_bytes"]), fmt(t),
                fmt(row.get("algbw_gbps")), fmt(row.get("busbw_gbps")),
                fmt(row.get("lower_bound_us")), fmt(row.get("bound_ratio")),
                fmt(ratio(ring, t)), fmt(ratio(nccl, t)),
                "data" if row.get("data_checked") else "timing"])
    return table(head, rows)


def tacos_section_md(data, sec):
    if sec.topo not in bench_ref.TACOS:
        return []
    head = ["input per NPU", "size", "algorithm", "ours µs", "our bound µs",
            "ours time/bound", "TACOS µs", "TACOS bound µs",
            "TACOS time/bound", "ours/TACOS time", "our/TACOS bound"]
    rows = []
    for per_npu, size, _, t_time, t_bound, t_ratio in \
            tacos_rows(data, sec.topo):
        for r in data.ok(sec):
            row = data.row(r, size)
            if not row:
                continue
            t, b = row.get("time_us"), row.get("lower_bound_us")
            d = "" if per_npu == MIB else " (derived)"
            rows.append([fmt_size(per_npu), fmt_size(size), r["label"],
                         fmt(t), fmt(b), fmt(ratio(t, b)), fmt(t_time) + d,
                         fmt(t_bound) + d, fmt(t_ratio),
                         fmt(ratio(t, t_time)), fmt(ratio(b, t_bound))])
    synth = bench_ref.TACOS[sec.topo][4]
    return ["Beside TACOS (its synthesis time: %s):" % synth, "",
            table(head, rows), ""]


# ---------------------------------------------------------------- plots

def gnuplot_terminal():
    try:
        p = subprocess.run(["gnuplot", "-e", "set terminal"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        if b"pngcairo" in p.stdout:
            return 'pngcairo size 1000,650 font "DejaVu Sans,11"'
    except (OSError, subprocess.TimeoutExpired):
        return None
    return "png size 1000,650"


def gp_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def size_tics(lo, hi):
    tics, s = [], 1
    while s <= hi * 2:
        if s >= lo / 2:
            tics.append("%s %d" % (gp_str(short_size(s)), s))
        s *= 4 if hi / max(lo, 1) > 1 << 12 else 2
    return ", ".join(tics)


def bw_tics(lo, hi):
    """y tics on a log axis: 1-2-5 steps over a narrow range, decades over
    a wide one, so every plot has several labelled values."""
    if hi / lo < 10:
        steps = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)
    elif hi / lo < 1e3:
        steps = (1, 2, 5)
    else:
        steps = (1,)
    tics = []
    k = math.floor(math.log10(lo))
    while 10 ** k <= hi:
        for m in steps:
            v = m * 10 ** k
            if lo <= v <= hi:
                tics.append('"%s" %.6g' % (("%g" % v), v))
        k += 1
    return ", ".join(tics)


def short_size(b):
    for unit, name in ((GIB, "G"), (MIB, "M"), (KIB, "K")):
        if b >= unit and b % unit == 0:
            return "%d%s" % (b // unit, name)
    return str(b)


def run_gnuplot(script, work, name, out_png):
    path = os.path.join(work, name + ".gp")
    with open(path, "w") as f:
        f.write(script)
    p = subprocess.run(["gnuplot", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    tmp = out_png + ".tmp.%d" % os.getpid()
    if p.returncode != 0 or not os.path.exists(tmp) or \
            os.path.getsize(tmp) == 0:
        if os.path.exists(tmp):
            os.remove(tmp)
        return "gnuplot failed on %s: %s" % (
            name, p.stderr.decode("utf-8", "replace").strip()[-300:])
    os.replace(tmp, out_png)
    return None


COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
          "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]


def bound_points(data, sec, ok, lo, hi):
    """(size, algbw bound) at every power of two in [lo, hi] and every row
    size: from the bound model where we have it, else from the rows."""
    model = data.model(sec)
    by_size = {row["size_bytes"]: row.get("lower_bound_us")
               for r in ok for row in r["rows"]}
    sizes = set(by_size)
    if model:
        s = 1
        while s <= hi:
            if s >= lo:
                sizes.add(s)
            s *= 2
    pts = []
    for s in sorted(sizes):
        b = by_size.get(s)
        if b is None and model:
            b = max(model.get("latency_us") or 0,
                    s * (model.get("us_per_byte") or 0))
        if b:
            pts.append("%d %.9g" % (s, s / (b * 1e3)))
    return pts


def published_points(sec):
    """docs/references.md's TACCL, TE-CCL and TACOS figures for this section, as
    (name, ["size algbw", ...]) blocks."""
    out = []
    if sec.topo in bench_ref.TACOS and sec.coll == "allgather":
        pts = []
        for per_npu, size, _, t_time, _, _ in tacos_rows(None, sec.topo):
            pts.append("%d %.9g" % (size, size / (t_time * 1e3)))
        out.append(("TACOS (docs/references.md; 64 MiB derived)", pts))
    for col, name in ((4, "TACCL (published)"), (5, "TE-CCL (published)")):
        pts = ["%d %.9g" % (p[2], p[col]) for p in bench_ref.PUBLISHED
               if p[0] == sec.topo and p[1] == sec.coll and p[col]]
        if pts:
            out.append((name, pts))
    return out


def plot_section(data, sec, out, work, term):
    """bench/<key>.png; returns (plotted, error)."""
    ok = [dict(r, rows=usable(r)) for r in data.ok(sec)
          if usable(r) and r["kind"] != "sketch"]
    tbest = [data.taccl_best(sec, size) for size in data.sizes(sec)]
    tbest = [t[1] for t in tbest if t]
    if tbest:
        ok.append({"label": "taccl (best over anchors and sketches)",
                   "rows": tbest, "kind": "best"})
    if not ok or term is None:
        return False, None if not ok else "gnuplot not found"
    dat = os.path.join(work, sec.key + ".dat")
    blocks, plots = [], []

    def block(name, pts, style):
        plots.append("%s index %d %s title %s" % (
            gp_str(dat), len(blocks), style, gp_str(name)))
        blocks.append("# %s\n%s" % (name, "\n".join(pts)))

    for i, r in enumerate(ok):
        pts = ["%d %.9g" % (row["size_bytes"], row["algbw_gbps"])
               for row in r["rows"] if row.get("algbw_gbps")]
        if r["kind"] == "best":
            block(r["label"], pts, 'with linespoints lw 4 pt 7 ps 1.4 lc '
                  'rgb "#000080"')
            continue
        block(r["label"], pts, "with linespoints lw 2 pt %d ps 1.2 lc rgb "
              "%s" % (4 + i % 10, gp_str(COLORS[i % len(COLORS)])))
    sizes = sorted({row["size_bytes"] for r in ok for row in r["rows"]})
    lo, hi = sizes[0], sizes[-1]
    bpts = bound_points(data, sec, ok, lo, hi)
    if bpts:
        block("lower bound", bpts,
              'with lines lw 3 dt 2 lc rgb "black"')
    ys = [float(p.split()[1]) for b in blocks for p in b.split("\n")[1:]]
    for j, (name, pts) in enumerate(published_points(sec)):
        block(name, pts, 'with points pt %d ps 2.5 lw 2 lc rgb "%s"' % (
            (3, 2)[j % 2], ("#000000", "#d62728")[j % 2]))
        ys += [float(p.split()[1]) for p in pts]
    with open(dat, "w") as f:
        f.write("\n\n\n".join(blocks) + "\n")
    script = "\n".join([
        "set terminal %s" % term,
        "set output %s" % gp_str(os.path.join(out, sec.key + ".png") +
                                 ".tmp.%d" % os.getpid()),
        "set encoding utf8",
        "set title %s" % gp_str("%s — algorithm bandwidth vs size%s" % (
            sec.title, "" if "NPUs" in sec.title
            else " (%d ranks)" % sec.ranks)),
        "set xlabel %s" % gp_str("size per rank (bytes, nccl-tests "
                                 "convention; log scale)"),
        "set ylabel %s" % gp_str("algbw (GB/s, log scale)"),
        "set logscale xy",
        "set xrange [%g:%g]" % (lo / 1.5, hi * 1.5),
        "set xtics (%s)" % size_tics(lo, hi),
        "set yrange [%g:%g]" % (min(ys) / 1.4, max(ys) * 1.4),
        "set ytics (%s)" % bw_tics(min(ys) / 1.4, max(ys) * 1.4),
        "set grid xtics ytics mytics",
        "set key outside right top box",
        "plot " + ", \\\n     ".join(plots),
        ""])
    err = run_gnuplot(script, work, sec.key,
                      os.path.join(out, sec.key + ".png"))
    return err is None, err


def plot_tacos(data, out, work, term):
    """bench/tacos.png: time/bound, ours (best baseline) beside TACOS."""
    if term is None:
        return False, "gnuplot not found"
    lines = []
    for topo in bench_ref.TACOS:
        for per_npu, size, sec, t_time, t_bound, t_ratio in \
                tacos_rows(data, topo):
            best = data.best(sec, size) if sec else None
            if not best or not best[1].get("lower_bound_us"):
                continue
            ours = best[1]["time_us"] / best[1]["lower_bound_us"]
            lines.append("%s %.6g %.6g" % (
                gp_str("%s %s" % (topo, short_size(per_npu))), ours,
                t_ratio))
    if not lines:
        return False, None
    top = max(max(float(x) for x in line.rsplit(" ", 2)[1:])
              for line in lines)
    dat = os.path.join(work, "tacos.dat")
    with open(dat, "w") as f:
        f.write("\n".join(lines) + "\n")
    script = "\n".join([
        "set terminal %s" % term.replace("1000,650", "1200,650"),
        "set output %s" % gp_str(os.path.join(out, "tacos.png") +
                                 ".tmp.%d" % os.getpid()),
        "set encoding utf8",
        "set title \"AllGather on direct-connect networks: time / lower "
        "bound (1 = optimal), best baseline vs TACOS\"",
        "set ylabel \"time / bound\"",
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 0.8 border -1",
        "set boxwidth 0.9",
        "set yrange [1:%g]" % (1 + 1.12 * (top - 1) + 0.01),
        "set ylabel \"time / bound (axis starts at 1)\"",
        "set grid ytics",
        "set key above box",
        "set xtics rotate by -25 font \",10\"",
        "set bmargin 7",
        "plot %s using 2:xtic(1) title \"ours (best baseline)\", "
        "'' using 3 title \"TACOS (docs/references.md)\", "
        "'' using ($0-0.15):2:(sprintf(\"%%.3f\", $2)) with labels "
        "offset 0,0.7 font \",9\" notitle, "
        "'' using ($0+0.15):3:(sprintf(\"%%.3f\", $3)) with labels "
        "offset 0,0.7 font \",9\" notitle" % gp_str(dat),
        ""])
    err = run_gnuplot(script, work, "tacos", os.path.join(out, "tacos.png"))
    return err is None, err


# ------------------------------------------------------------ saved data

SECTION_FIELDS = ("group", "topo", "path", "coll", "key", "ranges", "nodata",
                  "target", "extras", "title", "note", "run_flags", "ranks",
                  "dma_bytes")
ROW_DROP = ("count", "type", "redop")     # derivable from size_bytes


def results_json(secs, results, meta):
    """results.json: everything the report is made from (the run's
    metadata, its configurations, every result with every row), one result
    per line; read back by load_results() to rebuild the report."""
    def clean(r):
        r = {k: v for k, v in r.items() if k != "commands"}
        r["rows"] = [{k: v for k, v in row.items() if k not in ROW_DROP}
                     for row in r["rows"]]
        return r
    def short(x):
        """x with every float to 7 significant digits (the report shows 4)."""
        if isinstance(x, float):
            return float("%.7g" % x)
        if isinstance(x, dict):
            return {k: short(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [short(v) for v in x]
        return x
    dump = lambda x: json.dumps(short(x), separators=(",", ":"),  # noqa: E731
                                sort_keys=True)
    sec = [{k: getattr(s, k, None) for k in SECTION_FIELDS} for s in secs]
    return "".join([
        '{"what":%s,\n' % dump(
            "every row of the benchmark (scripts/bench_run.py) and what the "
            "report is made from; rebuild the report with "
            "scripts/bench_report.py FILE [--out DIR]"),
        '"meta":%s,\n' % dump(meta),
        '"sections":[\n', ",\n".join(dump(s) for s in sec), "],\n",
        '"results":[\n', ",\n".join(dump(clean(r)) for r in results),
        "]}\n"])


def _keys(obj):
    """JSON object hook: the keys a size (int) or a NIC rate (float) was."""
    out = {}
    for k, v in obj.items():
        if re.fullmatch(r"-?\d+", k):
            k = int(k)
        elif re.fullmatch(r"\d+\.\d+", k):
            k = float(k)
        out[k] = v
    return out


class SavedSection:
    """A configuration read back from results.json (bench_run.Section's
    fields, without reading its topology file again)."""

    def __init__(self, d):
        for k in SECTION_FIELDS:
            setattr(self, k, d.get(k))
        self.ranges = [tuple(x) for x in self.ranges]
        self.extras = [tuple(x) for x in self.extras or []]

    @property
    def topo_path(self):
        return self.path or os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            "topologies", self.topo + ".json")


def load_results(path=None, text=None):
    """(sections, results, meta) from a results.json (or its text)."""
    if text is None:
        with open(path) as f:
            text = f.read()
    j = json.loads(text, object_hook=_keys)
    return ([SavedSection(s) for s in j["sections"]], j["results"],
            j["meta"])


# ---------------------------------------------------------------- write

# ---------------------------------------------------------- summary page

# The sizes of the summary, per report group: (label, size or a function
# of the rank count).  A configuration that did not run a size shows the
# nearest it ran in that column's direction (say so in the cell).
SUMMARY_SIZES = {
    "tacos": (("1 MiB per NPU", lambda n: n * MIB),
              ("64 MiB per NPU", lambda n: 64 * n * MIB)),
    "chip": (("1 KiB", lambda n: KIB), ("32 KiB", lambda n: 32 * KIB),
             ("1 MiB", lambda n: MIB)),
}
SUMMARY_GPU = (("1 KiB", lambda n: KIB), ("1 MiB", lambda n: MIB),
               ("1 GiB", lambda n: GIB))
# the model variants taccl-run --variants times every row under
# (src/model/variant.c; "default" is the "model" estimate below)
VARIANTS = ("steps", "delay", "ports", "rt-lat")
# the NCCL estimates a "× NCCL" range spans: the model's, under each model
# variant (NCCL's schedule and ours timed alike), and bench_calib.py's
# arithmetic variants, which apply at every size of every configuration
ESTIMATES = ("model",) + VARIANTS + ("launch", "nccl-model", "nccl-2.8.4")


def short_label(r):
    """How the summary names one of our schedules: "synth" for one
    synthesized from a bundled sketch, else the baseline's label."""
    return "synth" if r["kind"] == "sketch" else r["label"]


def our_best(data, sec, size):
    """(result, row) of our fastest schedule at size: synthesized or
    baseline (or bundled), NCCL's own excluded; None if none ran."""
    got = [x for x in (data.taccl_best(sec, size),
                       data.best(sec, size, nccl=False)) if x]
    return min(got, key=lambda x: x[1]["time_us"]) if got else None


def topo_shape_of(sec):
    """(nodes, ranks, device arch) of a configuration's topology file."""
    try:
        with open(sec.topo_path) as f:
            t = json.load(f)
    except (OSError, ValueError):
        return None, None, None
    return (t.get("nodes"), t.get("nodes", 0) * t.get("ranks_per_node", 0),
            (t.get("device") or {}).get("arch"))


def nccl_estimates(sec, size, nccl_us, choice, ours_us, ours_label,
                   nccl_var=None, ours_var=None):
    """{estimate: NCCL's time / ours} at one size: the model's (NCCL's
    schedule in the executor, as every "× NCCL"), the same under each
    model variant both rows were timed in (nccl_var, ours_var: the rows'
    "variants" from taccl-run --variants), and the arithmetic
    variants of the calibration that apply at every size
    (scripts/bench_calib.py): launch (NCCL's base latency added to both
    calls), nccl-model (NCCL's own tuning-model estimate for its pick),
    nccl-2.8.4 (NCCL 2.8.4's, the version TACCL measured); the last three
    add NCCL's ring base latency to ours.  An estimate that does not apply
    (no NCCL choice recorded, AllToAll for 2.8.4) is left out."""
    import bench_calib
    out = {"model": nccl_us / ours_us}
    for name in VARIANTS:
        n, o = (nccl_var or {}).get(name), (ours_var or {}).get(name)
        if n and o:
            out[name] = n / o
    x = {"size_bytes": size, "nccl_us": nccl_us, "synth_us": ours_us,
         "nccl_choice": choice or {}, "anchor": ours_label}
    for name, got in (("launch", bench_calib.launch_variant([x])),
                      ("nccl-model", bench_calib.nccl_model_variant([x]))):
        if size in got and got[size][1]:
            out[name] = got[size][0] / got[size][1]
    nodes, ranks, arch = topo_shape_of(sec)
    if nodes and ranks:
        got = bench_calib.nccl_284_variant([x], sec.coll, ranks, nodes,
                                           arch == "ampere")
        if size in got and got[size][1]:
            out["nccl-2.8.4"] = got[size][0] / got[size][1]
    return out


def size_point(data, sec, size):
    """Everything the summary says about one configuration at one size,
    or None when no schedule of ours ran there."""
    best = our_best(data, sec, size)
    if not best:
        return None
    r, row = best
    p = {"size": size, "label": short_label(r), "full_label": r["label"],
         "time_us": row["time_us"], "bound_ratio": row.get("bound_ratio"),
         "nccl_us": None, "estimates": {}, "nccl_na": None}
    nr = next((x for x in data.results(sec) if x["kind"] == "nccl"), None)
    nrow = data.nccl_row(sec, size)
    if nrow:
        p["nccl_us"] = nrow["time_us"]
        choice = ((nr or {}).get("nccl") or {}).get(size)
        p["estimates"] = nccl_estimates(sec, size, nrow["time_us"], choice,
                                        row["time_us"], r["label"],
                                        nrow.get("variants"),
                                        row.get("variants"))
    elif nr is None or nr["status"] != "ok":
        p["nccl_na"] = (nr or {}).get("reason") or "no nccl row"
    else:
        na = next((x.get("na") for x in nr["rows"]
                   if x.get("nominal", x.get("size_bytes")) == size), None)
        p["nccl_na"] = na or "NCCL's schedule did not run at this size"
    return p


def fmt2(x):
    """A ratio for the summary page: two decimals (one from 10, none from
    100)."""
    if x is None:
        return "—"
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 10 else "%.2f" % x


def span(values, f=fmt):
    """"1.21–1.52×" (or "1.30×" for one value)."""
    values = list(values)
    lo, hi = min(values), max(values)
    if f(lo) == f(hi):
        return "%s×" % f(lo)
    return "%s–%s×" % (f(lo), f(hi))


def point_cell(p, link, nccl=True):
    """A summary cell: × NCCL (range over the estimates; bold when every
    estimate has ours faster), bound/time, and which schedule of ours;
    without nccl (a device NCCL does not run on) bound/time and ours."""
    if p is None:
        return "—"
    b = fmt2(p["bound_ratio"])
    if not nccl:
        return "[%s](%s) · %s" % (b, link, p["label"])
    if p["estimates"]:
        v = list(p["estimates"].values())
        x = "[%s](%s)" % (span(v, fmt2), link)
        if min(v) > 1 and len(v) > 1:
            x = "**%s**" % x
    else:
        x = "[no NCCL](%s)" % link
    return "%s · %s · %s" % (x, b, p["label"])


def summary_sizes(sec, group):
    """[(column label, size or None)] for a configuration: its group's
    sizes, each the one it ran or None."""
    cols = SUMMARY_SIZES.get(group, SUMMARY_GPU)
    return [(label, f(sec.ranks)) for label, f in cols]


def pages_dir():
    return "results"


def page_link(sec, anchor=True):
    return "%s/%s.md%s" % (pages_dir(), sec.topo,
                           "#" + slug(COLL_NAME[sec.coll]) if anchor else "")


COLL_NAME = {"allgather": "AllGather", "alltoall": "AllToAll",
             "allreduce": "AllReduce", "reducescatter": "ReduceScatter"}


def slug(title):
    """GitHub's anchor for a heading."""
    t = re.sub(r"[^\w\- ]", "", title.strip().lower(), flags=re.U)
    return t.replace(" ", "-")


def summary_md(data, secs, meta, plotted):
    """The first page: per configuration, ours against NCCL's schedule and
    the bound at a small, a middle and a large size, and a count of where
    ours is faster under every estimate."""
    out = []
    kinds = [("GPU machines", [g for g, _ in meta["groups"]
                               if g not in ("tacos", "chip")]),
             ("TACOS direct-connect networks (AllGather)", ["tacos"]),
             ("Chip/cluster device (case study; NCCL does not run on it)",
              ["chip"])]
    counts = {"faster": 0, "slower": 0, "depends": 0, "single": 0,
              "cells": 0}
    for title, groups in kinds:
        gsecs = [s for g in groups for s in secs if s.group == g]
        if not gsecs:
            continue
        group = groups[0] if len(groups) == 1 else None
        cols = SUMMARY_SIZES.get(group, SUMMARY_GPU)
        head = ["machine", "ranks", "collective"] + \
            [label for label, _ in cols] + ["plot"]
        rows, notes = [], []
        for sec in gsecs:
            link = page_link(sec)
            cells = []
            for label, f in cols:
                size = f(sec.ranks)
                sizes = data.sizes(sec)
                p = size_point(data, sec, size) if size in sizes else None
                if p is None and len(cols) == 3 and label == cols[-1][0] \
                        and sizes and sizes[-1] < size:
                    # the configuration's largest size stands for 1 GiB
                    p = size_point(data, sec, sizes[-1])
                    if p is not None:
                        p["label"] += " at " + fmt_size(sizes[-1])
                cells.append(point_cell(p, link, group != "chip"))
                if p and p["estimates"]:
                    v = list(p["estimates"].values())
                    counts["cells"] += 1
                    counts["single" if len(v) == 1 else "faster"
                           if min(v) > 1 else "slower" if max(v) < 1
                           else "depends"] += 1
            rows.append(["[%s](%s)" % (sec.topo, page_link(sec, False)),
                         sec.ranks, COLL_NAME[sec.coll]] + cells +
                        ["[png](%s/%s.png)" % (pages_dir(), sec.key)
                         if plotted.get(sec.key) else "—"])
        out += ["## %s" % title, ""]
        if group == "chip":
            out += ["Each cell: bound/time · ours.", ""]
        out += [table(head, rows, notes), ""]
    lead = [
        "Times are the executor's α–β model of each machine "
        "(docs/design.md §4), not measurements of hardware. "
        "Each cell: **× NCCL** · **bound/time** · **ours**. × NCCL is "
        "NCCL's time / ours for the same call at that size (above 1: ours "
        "is faster), as the range over the estimates of NCCL's call "
        "(below); **bold** when ours is faster under all of them. A single "
        "figure is the model's estimate alone, where the others do not "
        "apply (NCCL's AllToAll is point-to-point, outside its tuning "
        "model). "
        "bound/time is ours against the lower bound (1.00: no schedule can "
        "be faster). ours is our fastest schedule there: `synth` (one "
        "synthesized from a bundled sketch) or the baseline named. "
        "Every figure links to its configuration's page, which has every "
        "size and every schedule.",
        "",
        "Of the %d cells with an NCCL row, ours is faster under every "
        "estimate in %d, slower under every estimate in %d, and in %d it "
        "depends on the estimate; %d have the model's estimate alone." % (
            counts["cells"], counts["faster"], counts["slower"],
            counts["depends"], counts["single"]),
        ""]
    tail = [
        "The estimates of NCCL's call: "
        "**model**, NCCL's own schedule for that call (`taccl-synth --algo "
        "nccl --size S`: NCCL's choice of ring or tree, protocol and "
        "channels) run in the executor, the yardstick of every × NCCL in "
        "the detail pages; the same two schedules timed alike under each "
        "of the executor's model variants (`taccl-run --sweep --variants`, "
        "docs/design.md §4): **steps** (each program once, no tile "
        "passes), **delay** (α as latency only), **ports** (switch ports "
        "not shared), **rt-lat** (the runtime's latency the other way: "
        "without it on the bundled machines); and the "
        "arithmetic ones of the calibration (scripts/bench_calib.py): "
        "**launch**, both calls also pay NCCL's base "
        "latency per call (6.6–14 µs by algorithm and protocol), which the "
        "model leaves out; **nccl-model**, NCCL's own tuning-model "
        "estimate for its pick, ours plus NCCL's ring base latency; "
        "**nccl-2.8.4**, the same with NCCL 2.8.4's tuning model, the "
        "version TACCL measured (GPU AllGather, ReduceScatter and "
        "AllReduce only). The topology variants of the calibration "
        "(switch ports, per-step latencies, α as delay, arbitration, "
        "protocols) were run only for its rows: see "
        "[calibration](%s/calibration.md)." % pages_dir(),
        ""]
    return lead + out + tail


def calibration_glance(calib):
    """One line: how many of TACCL's measured speed-ups we reproduce."""
    n = len(calib)
    rep = sum(1 for c in calib if c.get("verdict") == "reproduced")
    under = sum(1 for c in calib if (c.get("variant") or {}).get(
        "reproduced") or (c.get("nic_rate") or {}).get("reproduced"))
    meas = sum(1 for c in calib if c.get("ours_lo") is not None)
    return ("TACCL measured its schedules against NCCL 2.8.4 on the real "
            "machines (%d ranges, docs/references.md); in our model %d of "
            "the %d we could measure are reproduced within ×/÷ %s, %d more "
            "under one changed model assumption, and the rest not: "
            "[calibration](%s/calibration.md), each with its range." % (
                n, rep, meas, "%g" % bench_ref.CALIBRATION_FACTOR, under,
                pages_dir()))


# ---------------------------------------------------------------- write

def write_all(out, work, secs, results, meta):
    # the pages are made from results.json as written, so that
    # `bench_report.py results.json` writes them again byte for byte
    saved = results_json(secs, results, meta)
    write_atomic(os.path.join(out, "results.json"), saved)
    secs, results, meta = load_results(text=saved)
    data = Data(secs, results)
    failures = ["%s, %s: %s" % (r["key"], r["label"], r["reason"])
                for r in results if r["status"] == "failed"]
    gaps = ["%s: no baseline applies (every `taccl-synth --algo` said "
            "n/a; reasons in its section)" % sec.key for sec in secs
            if not any(r["kind"] == "algo" and r["status"] in ("ok", "failed")
                       for r in data.results(sec))]
    pages = os.path.join(out, pages_dir())
    os.makedirs(pages, exist_ok=True)
    term = gnuplot_terminal()
    plotted = {}
    for sec in secs:
        ok, err = plot_section(data, sec, pages, work, term)
        plotted[sec.key] = ok
        if err:
            failures.append("plot %s: %s" % (sec.key, err))
    has_tacos = any(s.group == "tacos" for s in secs)
    if has_tacos:
        _, err = plot_tacos(data, pages, work, term)
        if err:
            failures.append("plot tacos: %s" % err)
    user = meta.get("user_topo")
    written = set()

    def page(name, text):
        write_atomic(os.path.join(pages, name), text.rstrip() + "\n")
        written.add(name)

    back = "[← summary](../results.md)"
    # one page per topology: every collective's tables
    topos = []
    for gid, _ in meta["groups"]:
        for s in secs:
            if s.group == gid and s.topo not in topos:
                topos.append(s.topo)
    for topo in topos:
        tsecs = [s for s in secs if s.topo == topo]
        lines = ["# %s: every schedule at every size" % topo, "",
                 "%s · %s." % (back, ", ".join(
                     "[%s](#%s)" % (COLL_NAME[s.coll], slug(COLL_NAME[s.coll]))
                     for s in tsecs)), ""]
        for sec in tsecs:
            lines += [section_md(data, sec, plotted.get(sec.key)), ""]
        page(topo + ".md", "\n".join(lines))
    calib = []
    if not user:
        calib = calibration_rows(data, meta.get("calib"))
        write_atomic(os.path.join(out, "calibration.json"),
                     calibration_json(calib, meta))
        page("calibration.md", "\n".join([
            "# Calibration: TACCL's measured speed-ups over NCCL vs ours",
            "", back, "", calibration_md(calib, meta)]))
        published = ["# Ours beside the published figures", "", back, "",
                     "## TACCL and TE-CCL (NDv2, DGX-2)", "",
                     published_summary(data), ""]
        if has_tacos:
            published += ["## TACOS (direct-connect networks, AllGather)",
                          "", tacos_summary(data), ""]
        page("published.md", "\n".join(published))
    page("synthesizer.md", "\n".join([
        "# The synthesizer", "", back, "",
        synth_part(data, results, meta)]))
    parts = [header(meta, results, failures), ""]
    if failures:
        parts += ["## Failures", ""] + ["- " + f for f in failures] + [""]
    if gaps:
        parts += ["## Gaps (not failures)", ""] + ["- " + g for g in gaps] + \
            [""]
    parts += summary_md(data, secs, meta, plotted)
    if calib:
        parts += [calibration_glance(calib), ""]
    index = ["[%s](%s/%s.md)" % (t, pages_dir(), t) for t in topos]
    parts += ["## Pages", "",
              "- Every schedule at every size, per machine: " +
              ", ".join(index) + "."]
    if not user:
        parts += ["- [Calibration](%s/calibration.md): TACCL's measured "
                  "speed-ups over NCCL beside ours, and the model "
                  "assumptions that move them." % pages_dir(),
                  "- [Published figures](%s/published.md): ours beside "
                  "TACCL's, TE-CCL's and TACOS's." % pages_dir()]
    parts += ["- [Synthesizer](%s/synthesizer.md): every sketch at every "
              "anchor%s." % (pages_dir(), "" if user else
                             ", and the issue-4 and issue-5 targets"),
              "- `results.json`: every row of this run "
              "(`scripts/bench_report.py` on it writes these pages again)" +
              ("; `calibration.json`: the calibration per size." if not user
               else "."),
              "- Plots (`%s/*.png`) are written by the run and not tracked."
              % pages_dir(), ""]
    parts += ["## Conventions", ""] + ["- " + c for c in CONVENTIONS] + [""]
    parts += ["## The executor's model", "", MODEL, ""]
    write_atomic(os.path.join(out, "results.md"),
                 "\n".join(parts).rstrip() + "\n")
    if not meta.get("partial"):
        keep = {s.key + ".png" for s in secs if plotted.get(s.key)} | \
            ({"tacos.png"} if has_tacos else set()) | written
        remove_stale(pages, keep, (".png", ".md"))
        remove_stale(out, set(), (".png",))
    return len(failures)


def remove_stale(folder, keep, exts):
    """A full run owns its pages and plots: drop those of configurations
    it no longer has (and plots where an older layout put them), so the
    report and the folder agree."""
    for name in sorted(os.listdir(folder)):
        if name.endswith(exts) and name not in keep and \
                os.path.isfile(os.path.join(folder, name)):
            os.remove(os.path.join(folder, name))


def main(argv):
    """bench_report.py RESULTS.json [--out DIR]: the report and plots again
    from a run's saved rows (default DIR: the folder of RESULTS.json)."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("results", help="a results.json written by make bench")
    ap.add_argument("--out", help="write here (default: beside RESULTS)")
    a = ap.parse_args(argv)
    secs, results, meta = load_results(a.results)
    out = a.out or os.path.dirname(os.path.abspath(a.results))
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taccl-bench-report.") as work:
        failed = write_all(out, work, secs, results, meta)
    print("bench_report: wrote %s" % os.path.join(out, "results.md"),
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
