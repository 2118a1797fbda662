#!/usr/bin/env python3
"""bench_forestcoll.py — ForestColl's own schedules beside ours in taccl-run.

Issue 43 item 4.  On ForestColl's fabrics in our format
(tests/data/forestcoll/forestcoll-{mi250,a100}-x2.json, alpha 0, its
bandwidths), per collective (AllGather, ReduceScatter) and size (64 MiB,
256 MiB, 1 GiB), one row of:
  - ForestColl's k = 1 schedule as its to_xml.py writes it
    (tests/data/forestcoll/*-k1.xml, scripts/gen_forestcoll_xml.py), run by
    taccl-run with the fabric given (--topo), in one pass (--steps) and in
    the runtimes' tile passes (--tiles, the default);
  - our plan (taccl-synth --plan --sizes 64M:1G --time-budget 120 --tiles:
    its candidates and files judged in the tile passes), the file taccl-run
    picks for the size, both timings;
  - the exact cut bound taccl-run reports, and ForestColl's stated optimum
    (its optimal_pipeline_spanning_trees, forestcoll-optimum.json) scaled to
    the size.
Every schedule runs with --no-data at these sizes (taccl-run refuses to hold
the buffers); tests/cli/test_trees.sh checks the data at a small size.

    scripts/bench_forestcoll.py BIN_DIR OUT.md [--plans DIR]

--plans DIR reuses plans made already (DIR/plan-<fabric>-<collective>);
without it they are made into a temporary folder (about 10 minutes on two
cores).  Deterministic given the plans: the same files give the same table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests/data/forestcoll")
FABRICS = ["mi250-x2", "a100-x2"]
COLLS = ["allgather", "reducescatter"]
SIZES = [("64M", 64 << 20), ("256M", 256 << 20), ("1G", 1 << 30)]
PLAN_ARGS = ["--sizes", "64M:1G", "--time-budget", "120", "--tiles"]


def run(binary, args):
    r = subprocess.run([binary] + args + ["--json"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        sys.exit("%s %s: no report: %s" % (binary, " ".join(args), r.stderr.strip()[-300:]))


def timed(binary, target, topo, size):
    out = []
    for tiles in (["--steps"], ["--tiles"]):
        d = run(binary, [target, "--topo", topo, "--size", size, "--no-data"] + tiles)
        if d.get("error") or d.get("refused") or d.get("verified") is False:
            sys.exit("taccl-run %s at %s: %s" % (target, size, d.get("error") or d["refused"]))
        out.append(d)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("out")
    ap.add_argument("--plans")
    ap.add_argument("--note", default="", help="a line to add under the table (which build "
                    "made the plans given)")
    a = ap.parse_args()
    run_bin = os.path.join(a.bin, "taccl-run")
    synth_bin = os.path.join(a.bin, "taccl-synth")
    opt = json.load(open(os.path.join(DATA, "forestcoll-optimum.json")))["fabrics"]
    plans = a.plans or tempfile.mkdtemp(prefix="taccl-fc-")
    rows = []
    for fab in FABRICS:
        topo = os.path.join(DATA, "forestcoll-%s.json" % fab)
        for coll in COLLS:
            pdir = os.path.join(plans, "plan-%s-%s" % (fab.split("-")[0], coll))
            if not os.path.isdir(pdir):
                r = subprocess.run([synth_bin, "--plan", topo, "--collective", coll, "-o", pdir,
                                    "-q"] + PLAN_ARGS)
                if r.returncode != 0:
                    sys.exit("taccl-synth --plan %s %s failed" % (fab, coll))
            fc = os.path.join(DATA, "forestcoll-%s-%s-k1.xml" % (fab, coll))
            for name, size in SIZES:
                f1, ft = timed(run_bin, fc, topo, name)
                o1, ot = timed(run_bin, pdir, topo, name)
                optimum = opt["forestcoll-" + fab]["optimum_us_per_GiB"] * size / (1 << 30)
                rows.append((fab, coll, name, f1["time_us"], ft["time_us"], o1["time_us"],
                             ot["time_us"], ot["picked"], f1["lower_bound_us"], optimum))
    lines = [
        "# ForestColl's schedules beside ours (issue 43 item 4)",
        "",
        "Made by `scripts/bench_forestcoll.py build/bin bench/forestcoll.md` (`make "
        "bench-forestcoll UPDATE=1`). Fabrics: ForestColl's own in our format "
        "(`tests/data/forestcoll/`, alpha 0). ForestColl: its k = 1 trees as its `to_xml.py` "
        "writes them (`scripts/gen_forestcoll_xml.py`, ForestColl @3c13aee). Ours: `taccl-synth "
        "--plan TOPO --collective C " + " ".join(PLAN_ARGS) + "`, the file `taccl-run DIR` picks. "
        "Times in us from `taccl-run --no-data` in one pass (`--steps`) and in the runtimes' "
        "tile passes (`--tiles`, the default). Bound: the exact cut bound (`taccl-run`); optimum: ForestColl's "
        "stated optimum for the size (its optimal k: 83 on MI250 x2, 13 on A100 x2, which the "
        "runtimes' channel limits do not allow).",
        "",
        "| fabric | collective | size | ForestColl | ForestColl --tiles | ours | ours --tiles "
        "| ours/ForestColl --tiles | our file | bound | ForestColl optimum |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lines.append("| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.3f | `%s` | %.1f | %.1f |"
                     % (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[6] / r[4], r[7], r[8], r[9]))
    met = sum(1 for r in rows if r[6] <= r[4] + 1e-6)
    lines += ["", "Ours at least as fast as ForestColl's schedule in the tile passes: %d of %d "
              "rows." % (met, len(rows))]
    if a.note:
        lines += ["", a.note]
    lines.append("")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, a.out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
