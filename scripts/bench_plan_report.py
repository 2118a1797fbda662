#!/usr/bin/env python3
"""bench_plan_report.py — bench_plan.sh's report: plans with no sketch
against NCCL's schedule and every baseline, a summary first.

    bench_plan_report.py --tsv ROWS.tsv --budget S [--out FILE]
        (bench_plan.sh) read the sweeps its rows name, save them all in
        FILE.json beside FILE, and write the report
    bench_plan_report.py --json FILE.json [--out FILE]
        the report again from saved sweeps

The report: a summary (per machine and collective, the plan's worst size
against the fastest of NCCL's schedule and the baselines, and the sizes it
leaves to NCCL), then every row: per topology, collective and buffer mode,
the plan's synthesis time, at how many sizes the plan (or NCCL, where it
leaves the call to it) is at least as fast as NCCL (by the default model,
and in every model variant, 0.01 % a tie: taccl-run DIR's x_nccl_min, docs/design.md
section 8), the least x NCCL over the variants of a size a file serves, at
how many sizes it is as fast as every baseline, the worst size, and the
NCCL fallback sizes.  Python 3 standard library.
"""
import argparse
import json
import os
import sys

MODES = {"outofplace": "out of place", "inplace": "in place"}
COLLS = ("allgather", "reducescatter", "allreduce", "alltoall")
COLL_NAME = {"allgather": "AllGather", "reducescatter": "ReduceScatter",
             "allreduce": "AllReduce", "alltoall": "AllToAll"}


def size(b):
    for u, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= n:
            return "%d%s" % (b // n, u)
    return str(b)


def load_tsv(path):
    """bench_plan.sh's rows.tsv and the sweeps it names, as saved data:
    {"rows": [[topology, collective, kind, secs, mode, what]], "sweeps":
    {what: [taccl-run rows]}} (kind "plan" or a baseline; what a sweep's
    file, or the error of a plan that failed)."""
    rows, sweeps = [], {}
    for line in open(path):
        if not line.strip():
            continue
        tp, c, kind, secs, mode, what = line.rstrip("\n").split("\t")
        if mode != "-":
            try:
                with open(what) as f:
                    got = json.load(f)["rows"]
            except (OSError, ValueError, KeyError):
                got = []
            what = os.path.basename(what)
            sweeps[what] = got
        rows.append([tp, c, kind, secs, mode, what])
    return {"rows": rows, "sweeps": sweeps}


def records(saved):
    """One record per topology, collective and mode (the table's row)."""
    groups = {}
    for tp, c, kind, secs, mode, what in saved["rows"]:
        groups.setdefault((tp, c), []).append((kind, secs, mode, what))
    out = []
    for (tp, c), items in groups.items():
        plans = [x for x in items if x[0] == "plan"]
        if len(plans) == 1 and plans[0][2] == "-":
            out.append({"topology": tp, "collective": c, "mode": None,
                        "plan_s": plans[0][1], "error": plans[0][3]})
            continue
        for _, secs, mode, what in plans:
            ps = {r["size_bytes"]: r for r in saved["sweeps"].get(what, [])}
            base = {k: {r["size_bytes"]: r for r in saved["sweeps"].get(w, [])}
                    for k, _, m, w in items if k != "plan" and m == mode}
            n = ok_nccl = ok_base = fallback = ok_var = 0
            worst, worst_at, worst_who = 0.0, None, ""
            var_lo, var_at = None, None
            for s, r in sorted(ps.items()):
                n += 1
                t, nc = r.get("time_us"), r.get("nccl_us")
                # where NCCL's file is not what NCCL runs (NVLS on the XML
                # path, NVLSTree beyond two nodes, CollNet), NCCL's own
                # estimate of its pick (taccl-run's nccl_estimate_us, the
                # variant nccl-est): what a call left to NCCL takes, and
                # NCCL's time beside a baseline
                est = r.get("nccl_estimate_us")
                if est is not None:
                    if r.get("nccl_fallback") and t is not None:
                        t = min(t, est)
                fallback += bool(r.get("nccl_fallback"))
                # x NCCL over the model variants (taccl-run DIR's
                # x_nccl_min: the worst variant's; a call left to NCCL is
                # NCCL in each); within 0.01 % is a tie, as plans judge
                # (docs/design.md section 8, VARIANT_TIE)
                lo = r.get("x_nccl_min")
                ok_var += bool(r.get("nccl_fallback")) or (
                    lo is not None and lo >= 1 - 1e-4)
                if lo is not None and not r.get("nccl_fallback") and (
                        var_lo is None or lo < var_lo):
                    var_lo, var_at = lo, s
                others = [(nc, "nccl")] + (
                    [(est, "nccl-est")] if est is not None else []) + [
                    (b[s]["time_us"], k) for k, b in base.items()
                    if s in b and b[s].get("time_us") is not None]
                others = [(v, k) for v, k in others if v is not None]
                if t is None:   # nothing timed here (NCCL's schedule refused)
                    continue
                ok_nccl += nc is None or t <= nc * (1 + 1e-9)
                ok_base += all(t <= v * (1 + 1e-9) for v, k in others
                               if k != "nccl")
                if others:
                    v, k = min(others)
                    if t / v > worst:
                        worst, worst_at, worst_who = t / v, s, k
            out.append({"topology": tp, "collective": c, "mode": mode,
                        "plan_s": secs, "sizes": n, "ge_nccl": ok_nccl,
                        "ge_baselines": ok_base, "worst": worst if worst_at
                        else None, "worst_at": worst_at,
                        "worst_who": worst_who, "fallback": fallback,
                        "ge_nccl_variants": ok_var, "var_lo": var_lo,
                        "var_at": var_at})
    return out


def worst_text(r):
    if r.get("worst") is None:
        return "-"
    return "%.3f at %s (%s)" % (r["worst"], size(r["worst_at"]),
                                r["worst_who"])


def full_table(recs):
    lines = ["| topology | collective | mode | plan s | sizes | >= NCCL | "
             ">= NCCL in every model variant | least x NCCL over the "
             "variants | >= every baseline | worst size: plan / fastest "
             "other | NCCL fallback sizes |", "|---" * 11 + "|"]
    for r in recs:
        if r.get("error"):
            lines.append("| %s | %s | - | %s | - | - | - | - | - | %s | - |" % (
                r["topology"], r["collective"], r["plan_s"], r["error"]))
            continue
        lines.append("| %s | %s | %s | %s | %d | %d | %d | %s | %d | %s | %d |" % (
            r["topology"], r["collective"], MODES[r["mode"]], r["plan_s"],
            r["sizes"], r["ge_nccl"], r["ge_nccl_variants"],
            "-" if r.get("var_lo") is None else "%.2f at %s" % (
                r["var_lo"], size(r["var_at"])),
            r["ge_baselines"], worst_text(r), r["fallback"]))
    return "\n".join(lines)


def summary_cell(recs):
    """One machine and collective: the out-of-place worst size (and the
    in-place one where it differs other than by a call left to NCCL), and
    the sizes left to NCCL."""
    by = {r["mode"]: r for r in recs if r.get("mode")}
    if not by:
        return "plan failed" if recs else "not run"
    o, i = by.get("outofplace"), by.get("inplace")
    short = lambda r: "%.3f (%s, %s)" % (r["worst"], size(r["worst_at"]),  # noqa: E731
                                         r["worst_who"]) \
        if r and r.get("worst") is not None else "-"
    cell = short(o)
    if i and short(i) != short(o) and not (
            i["fallback"] and i["worst_who"] in ("nccl", "nccl-est") and
            "%.3f" % i["worst"] == "1.000"):
        cell += "; in place %s" % short(i)
    fo = o["fallback"] if o else 0
    fi = i["fallback"] if i else fo
    if fo == fi and fo:
        cell += "; %d sizes to NCCL" % fo
    elif fo != fi:
        cell += "; %s%d sizes to NCCL in place" % (
            "%d out of place, " % fo if fo else "", fi)
    return cell


def summary(recs):
    """The summary: how many rows are at least as fast as NCCL and every
    baseline everywhere, and per machine and collective the worst size."""
    ok = [r for r in recs if r.get("mode")]
    full = [r for r in ok if r["ge_nccl"] == r["sizes"] and
            r["ge_baselines"] == r["sizes"]]
    fails = [r for r in recs if r.get("error")]
    topos = list(dict.fromkeys(r["topology"] for r in recs))
    colls = [c for c in COLLS if any(r["collective"] == c for r in recs)]
    lines = [
        "%d of %d rows (machine, collective, buffer mode): the plan is at "
        "least as fast as NCCL's schedule and as every baseline at every "
        "size%s." % (len(full), len(ok), "" if not fails else
                     "; %d plans failed" % len(fails)),
        "",
        "Each cell: the worst size, plan time / the fastest of NCCL's "
        "schedule and every baseline there (below 1: the plan is faster at "
        "every size; 1.000 where the plan's pick is that schedule; where "
        "NCCL's file is not what NCCL runs, NCCL's own estimate of its pick "
        "is NCCL's time, `nccl-est`, and a call left to NCCL takes it), out of "
        "place (in place where that differs other than by calls left to "
        "NCCL); then the sizes the plan leaves to NCCL, where any.",
        "",
        "| machine | " + " | ".join(COLL_NAME[c] for c in colls) + " |",
        "|---" * (len(colls) + 1) + "|"]
    for tp in topos:
        lines.append("| %s | %s |" % (tp, " | ".join(
            summary_cell([r for r in recs if r["topology"] == tp and
                          r["collective"] == c]) for c in colls)))
    return "\n".join(lines)


def report(saved):
    recs = records(saved)
    return "\n".join([
        "Plans with no sketch (`taccl-synth --plan TOPO --collective C "
        "--time-budget %s`), swept 1 KiB–1 GiB in each mode with "
        "`taccl-run PLAN --sweep 1K:1G --outofplace|--inplace --no-data`, "
        "against NCCL's schedule at each size and every `--algo` baseline "
        "that runs in that mode (scripts/bench_plan.sh)." % saved.get(
            "budget", "?"),
        "", "### Summary", "", summary(recs), "",
        "### Every row", "", full_table(recs), ""])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tsv", help="bench_plan.sh's rows")
    src.add_argument("--json", help="sweeps saved by an earlier run")
    ap.add_argument("--budget", help="the plans' --time-budget")
    ap.add_argument("--out", help="also write the report here (and, with "
                    "--tsv, the sweeps in OUT.json)")
    a = ap.parse_args(argv)
    if a.tsv:
        saved = load_tsv(a.tsv)
        saved["budget"] = a.budget
        if a.out:
            with open(a.out + ".json", "w") as f:
                json.dump(saved, f, separators=(",", ":"))
                f.write("\n")
    else:
        with open(a.json) as f:
            saved = json.load(f)
    text = report(saved)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
