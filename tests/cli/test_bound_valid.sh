#!/usr/bin/env bash
# tier: plain  (make check runs it plain only; make check-full also sanitized)
# test_bound_valid.sh — the lower bound is a bound: no schedule taccl-run
# times beats it.  On 24 seeded random topologies nobody wrote by hand (a
# ring plus random chords with random bandwidth and lanes, sometimes a
# switch over some ranks, one or two nodes with a NIC per rank or per node)
# and on ForestColl's MI250 and A100 fabrics (whose bound is the exact cut,
# tests/data/forestcoll), every baseline that applies is built and run in
# the default timing and with --tiles (the runtimes' passes), and its time
# must be at least lower_bound_us, and at least the bound in the runtimes'
# tile passes (lower_bound_passes_us, each resource at what one tile's
# operation gets of it), which is at least the bound.  A case names its
# seed, so a failure reproduces with the seed alone.
source "$(dirname "$0")/lib.sh"

python3 - "$BIN" "$TMP" "$ROOT" <<'PY'
import json, os, random, subprocess, sys
BIN, TMP, ROOT = sys.argv[1:4]

def rand_topo(seed):
    R = random.Random(seed)
    nodes = R.choice([1, 1, 2])
    rpn = R.choice([4, 5, 6, 8])
    src = "random case of test_bound_valid.sh"
    pairs = {(i, (i + 1) % rpn) for i in range(rpn)}
    for _ in range(R.randint(0, rpn)):
        a, b = R.sample(range(rpn), 2)
        pairs.add((min(a, b), max(a, b)))
    pairs = {(min(a, b), max(a, b)) for a, b in pairs}
    links = []
    for a, b in sorted(pairs):
        links.append({"pairs": [[a, b]], "alpha_us": round(R.uniform(0.2, 2), 2),
                      "bandwidth_gbps": R.choice([5, 10, 25, 50, 100]),
                      "multiplicity": R.choice([1, 1, 2, 4]), "source": src})
    t = {"name": f"rand-{seed}", "description": "random", "nodes": nodes,
         "ranks_per_node": rpn,
         "local": {"copy_gbps": 500, "reduce_gbps": 300, "source": src}, "links": links}
    if R.random() < 0.4:
        members = sorted(R.sample(range(rpn), R.randint(2, rpn)))
        t["switches"] = [{"ranks": members, "alpha_us": 0.5,
                          "bandwidth_gbps": R.choice([20, 50, 150]), "source": src}]
    if nodes > 1:
        if R.random() < 0.5:
            t["nics"] = [{"ranks": [r], "alpha_us": 2, "bandwidth_gbps": R.choice([5, 12.5, 25]),
                          "source": src} for r in range(rpn)]
        else:
            t["nics"] = [{"ranks": list(range(rpn)), "alpha_us": 2, "bandwidth_gbps": 12.5,
                          "source": src}]
    path = os.path.join(TMP, f"rand-{seed}.json")
    with open(path, "w") as f:
        json.dump(t, f)
    return path

# make check (TACCL_FEW, TACCL_QUICK): 8 seeds; make check-full: 24
few = bool(os.environ.get("TACCL_FEW") or os.environ.get("TACCL_QUICK"))
nseeds = 8 if few else 24
if few:
    print(f"# skip - seeds {nseeds + 1}-24: make check runs {nseeds}, make check-full 24")
cases = [(f"seed {s}", rand_topo(s)) for s in range(1, nseeds + 1)]
for name in ("forestcoll-mi250-x2", "forestcoll-a100-x2", "forestcoll-mi250-x1"):
    cases.append((name, os.path.join(ROOT, "tests/data/forestcoll", name + ".json")))

checked = 0
passes = 0
for name, path in cases:
    bad = []
    runs = 0
    for coll in ("allgather", "reducescatter", "allreduce"):
        for algo in ("ring", "direct", "tree"):
            xml = os.path.join(TMP, "s.xml")
            r = subprocess.run([os.path.join(BIN, "taccl-synth"), "--algo", algo, path,
                                "--collective", coll, "--size", "4M", "--target", "unlimited",
                                "-q", "-o", xml], capture_output=True, text=True)
            if r.returncode != 0:
                continue      # the algorithm does not apply (a tree for AllGather, ...)
            for extra in ([], ["--tiles"]):
                r = subprocess.run([os.path.join(BIN, "taccl-run"), xml, "--no-data", "--json",
                                    "--target", "unlimited"] + extra,
                                   capture_output=True, text=True)
                try:
                    d = json.loads(r.stdout)
                except ValueError:
                    bad.append(f"{coll} {algo} {' '.join(extra)}: no JSON ({r.stderr.strip()[:200]})")
                    continue
                runs += 1
                t, b = d.get("time_us"), d.get("lower_bound_us")
                if t is None or b is None or t < b * (1 - 1e-9):
                    bad.append(f"{coll} {algo} {' '.join(extra)}: time {t} us < bound {b} us"
                               f" ({d.get('lower_bound_model', {}).get('bandwidth_why')})")
                # the bound in the tile passes (both runs are timed in them):
                # tighter than the bound, and still below the time
                pb = d.get("lower_bound_passes_us")
                if pb is not None and (t is None or t < pb * (1 - 1e-9) or pb < b * (1 - 1e-9)):
                    bad.append(f"{coll} {algo} {' '.join(extra)}: time {t} us, bound in the "
                               f"passes {pb} us, bound {b} us")
                passes += pb is not None
    if runs == 0:
        bad.append("no schedule ran")
    print(("ok" if not bad else "not ok") + f" - {name}: {runs} schedules at or above the bound")
    for b in bad:
        print("  " + b)
# the random topologies have alpha > 0 on every link: the bound in the
# passes is there on every run of them
print(("ok" if passes >= 2 * 3 * nseeds else "not ok") +
      f" - the bound in the runtimes' passes reported on {passes} runs")
PY
