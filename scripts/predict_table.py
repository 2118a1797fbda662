#!/usr/bin/env python3
"""predict_table.py — how far taccl-synth's predicted time is from the time
taccl-run measures for the file it wrote (the cost model's promise).

For every bundled sketch x collective x size, and for random small
topologies with random sketches, collectives and sizes (seeded: the same
seeds give the same cases), synthesize, run the schedule (timing only) and
print one markdown table row: predicted us, executed us, error
(executed - predicted) / predicted, and beside it stage 3's own makespan
and its error (the algorithm it scheduled, before the lowering's runs,
staging and scratch reuse: how far the stage's model is from the program).
Ends with how many cases are within 0.5 % and the largest error; with
--max-error E, exits 1 if some prediction is further than E % off.

  scripts/predict_table.py [--bin build/bin] [--sizes 1M,64M] [--random N]
                           [--seed S] [--no-bundled] [--time-limit 5]
                           [--max-error E]

Cases whose sketch cannot be synthesized at a size (chunk counts that do
not divide it) are listed as such, not counted.  Synthesis is time-limited,
so on a loaded machine a stage may stop earlier and write another schedule;
the error is that of the schedule written."""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLS = ["allgather", "reducescatter", "allreduce", "alltoall"]


def parse_size(s):
    m = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", str(s))
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def random_case(seed, outdir):
    """A connected single-node topology of 3-8 ranks: a ring plus chords
    with random alpha, bandwidth and lanes, sometimes a switch over some of
    the ranks; a sketch with no intranode strategy; a random collective and
    chunk size."""
    R = random.Random(seed)
    n = R.choice([3, 4, 4, 5, 6, 8])
    pairs = {tuple(sorted((i, (i + 1) % n))) for i in range(n)}
    for _ in range(R.randint(0, n)):
        pairs.add(tuple(sorted(R.sample(range(n), 2))))
    groups = {}
    for p in sorted(pairs):
        key = (R.choice([0.3, 0.7, 1.0, 2.5]), R.choice([12.5, 25, 50, 100, 150]),
               R.choice([1, 1, 1, 2]))
        groups.setdefault(key, []).append(list(p))
    src = "random case of scripts/predict_table.py"
    topo = {"name": f"rand-{seed}", "description": "random topology", "nodes": 1,
            "ranks_per_node": n,
            "local": {"copy_gbps": R.choice([100, 300, 500]),
                      "reduce_gbps": R.choice([50, 150, 300]), "source": src},
            "links": [{"pairs": ps, "alpha_us": a, "bandwidth_gbps": b, "multiplicity": m,
                       "source": src} for (a, b, m), ps in sorted(groups.items())]}
    if R.random() < 0.4:
        topo["switches"] = [{"ranks": sorted(R.sample(range(n), R.randint(2, n))),
                             "alpha_us": R.choice([0.35, 0.7]),
                             "bandwidth_gbps": R.choice([25, 60, 125]), "source": src}]
    coll = R.choice(COLLS)
    chunkup = R.choice([1, 1, 2])
    size = n * chunkup * R.choice([4096, 65536, 1 << 20, 4 << 20])
    tp = os.path.join(outdir, f"rand-{seed}.json")
    sk = os.path.join(outdir, f"rand-{seed}-sk.json")
    with open(tp, "w") as f:
        json.dump(topo, f, indent=1)
    with open(sk, "w") as f:
        json.dump({"name": f"rand-{seed}", "description": "random sketch",
                   "topology": tp, "collective": coll, "input_size": size, "nnodes": 1,
                   "intranode_sketch": {"strategy": "none"},
                   "hyperparameters": {"input_chunkup": chunkup}}, f, indent=1)
    return f"rand-{seed} ({n} ranks)", sk, tp, coll, size


def measure(bindir, sk, tp, coll, size, tmp, limit):
    out = os.path.join(tmp, "case.xml")
    s = subprocess.run([f"{bindir}/taccl-synth", sk, tp, "-o", out, "--size", str(size),
                        "--collective", coll, "--time-limit", str(limit), "-q", "--json"],
                       capture_output=True, text=True)
    if s.returncode != 0:
        return None, s.stderr.strip().splitlines()[-1][:90] if s.stderr.strip() else "failed"
    j = json.loads(s.stdout)
    pred, stage3 = j["predicted_us"], j["stage3_us"]
    r = subprocess.run([f"{bindir}/taccl-run", out, "--no-data", "--json"],
                       capture_output=True, text=True)
    run = json.loads(r.stdout)["time_us"] if r.stdout.strip() else None
    if run is None:
        return None, "taccl-run: " + (r.stderr.strip().splitlines() or ["no result"])[-1][:80]
    return (pred, run, stage3), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/bin"))
    ap.add_argument("--sizes", default="1M,64M")
    ap.add_argument("--random", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-bundled", action="store_true")
    ap.add_argument("--time-limit", type=float, default=5)
    ap.add_argument("--max-error", type=float, default=None)
    a = ap.parse_args()
    cases = []
    if not a.no_bundled:
        for f in sorted(os.listdir(os.path.join(ROOT, "sketches"))):
            if not f.endswith(".json"):
                continue
            sk = os.path.join(ROOT, "sketches", f)
            tp = os.path.join(ROOT, json.load(open(sk))["topology"])
            for coll in COLLS:
                for sz in a.sizes.split(","):
                    cases.append((f[:-5], sk, tp, coll, parse_size(sz)))
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(a.seed, a.seed + a.random):
            cases.append(random_case(s, tmp))
        print("| case | collective | bytes | predicted us | executed us | error "
              "| stage 3 us | stage 3 error |")
        print("|---|---|---|---|---|---|---|---|")
        errs, errs3 = [], []
        for name, sk, tp, coll, size in cases:
            res, why = measure(a.bin, sk, tp, coll, size, tmp, a.time_limit)
            if res is None:
                print(f"| {name} | {coll} | {size} | - | - | not synthesized: {why} | - | - |")
                continue
            pred, run, stage3 = res
            e = (run - pred) / pred * 100 if pred > 0 else float("inf")
            e3 = (run - stage3) / stage3 * 100 if stage3 > 0 else float("inf")
            errs.append((abs(e), name, coll, size))
            errs3.append(abs(e3))
            print(f"| {name} | {coll} | {size} | {pred:.3f} | {run:.3f} | {e:+.2f} % "
                  f"| {stage3:.3f} | {e3:+.2f} % |", flush=True)
        within = sum(1 for e in errs if e[0] <= 0.5)
        worst = max(errs) if errs else (0, "-", "-", 0)
        print(f"\n{within} of {len(errs)} cases within 0.5 %; largest error "
              f"{worst[0]:.2f} % ({worst[1]} {worst[2]} {worst[3]} B); stage 3 within "
              f"0.5 % in {sum(1 for e in errs3 if e <= 0.5)}, largest "
              f"{max(errs3) if errs3 else 0:.2f} %")
        if a.max_error is not None and worst[0] > a.max_error:
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
