#!/usr/bin/env python3
"""gen_forestcoll_xml.py — ForestColl's own schedules as MSCCL XML, for taccl-run.

Why: issue 43 item 4 runs ForestColl's schedules in our executor beside
ours.  ForestColl (arXiv 2402.06787; github.com/liangyuRain/ForestColl,
Apache-2.0) is not vendored: this script imports ITS code from a checkout
given on the command line, runs optimal_pipeline_spanning_trees on its
a100_topology / mi250_topology, and writes what its to_xml.py builds from
the trees (construct_algo_allgather / construct_algo_reduce_scatter).

    git -C <ForestColl.git> archive 3c13aee | tar -x -C /tmp/fc
    scripts/gen_forestcoll_xml.py /tmp/fc [OUTDIR]   (default tests/data/forestcoll)

to_xml.py takes the trees with every path already reduced to one
(src GPU, dst GPU, channel parity) hop; ForestColl's repository does not
include that step, so it is done here: a path through switch vertices
(NVSwitch, mlx5, IB) becomes the GPU-to-GPU hop it connects, its parity the
index of the IB switch it crosses (A100 has two, odd and even NICs; to_xml
keeps the parity on the channel) or none.  GPU (node, 'GPU', b) is rank
node * gpus_per_node + b, as in our topologies (gen_forestcoll_topos.py).

Also written: forestcoll-optimum.json, ForestColl's optimum (U, k) and
its k = 1 figure per fabric, in us per GiB.  Only k = 1 is written: ForestColl's optimal k (13 on A100 x2, 83 on MI250
x2) breaks to_xml's own asserts (32 channels, 108 threadblocks), which is
why its path to XML is fixed_K=1.  Also printed: ForestColl's optimum
(U, k) and its runtime per GB, the figures bench/forestcoll.md compares.
Deterministic: the same checkout writes the same bytes.
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET
from xml.dom import minidom


def rank_of(v, per_node):
    assert v[1] == "GPU", v
    return v[0] * per_node + v[2]


def collapse(Ts, per_node):
    """ForestColl's trees (paths of topology edges) as to_xml's hops."""
    out = {}
    for key, paths in Ts.items():
        hops = []
        for p in paths:
            src, dst = p[0][0], p[-1][-1]
            ib = [x for e in p for x in e if x[1] == "IB"]
            ch = ib[0][2] if ib and per_node == 8 else None
            hops.append([(rank_of(src, per_node), rank_of(dst, per_node), ch)])
        out[rank_of(key[0], per_node), key[1]] = hops
    return out


def pretty(elem):
    s = minidom.parseString(ET.tostring(elem, "utf-8")).toprettyxml(indent="  ")
    return "\n".join(s.split("\n")[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("forestcoll", help="a checkout of github.com/liangyuRain/ForestColl")
    ap.add_argument("outdir", nargs="?", default=os.path.join(root, "tests/data/forestcoll"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.forestcoll))
    figures = {}
    import pipeline_allgather as pa     # noqa: E402  (ForestColl's)
    import to_xml                       # noqa: E402
    import topologies                   # noqa: E402
    for name, fn, per_node in (("a100", topologies.a100_topology, 8),
                               ("mi250", topologies.mi250_topology, 16)):
        for nodes in (1, 2):
            G, gpus = fn(nodes)
            (U, k), _ = pa.optimal_pipeline_spanning_trees(G, compute_nodes=gpus)
            # U / (N k) seconds per GB of AllGather output: 1 GiB in us
            opt_us = (U / (len(gpus) * k)) * (2**30 / 1e9) * 1e6
            (U1, k1), (Ts, Cs) = pa.optimal_pipeline_spanning_trees(G, compute_nodes=gpus,
                                                                    fixed_K=1)
            k1_us = (U1 / (len(gpus) * k1)) * (2**30 / 1e9) * 1e6
            hops = collapse(Ts, per_node)
            cs = {(rank_of(u, per_node), i): c for (u, i), c in Cs.items()}
            ranks = list(range(len(gpus)))
            tag = "forestcoll-%s-x%d" % (name, nodes)
            for coll, build in (("allgather", lambda: to_xml.construct_algo_allgather(
                                    hops, cs, k1, ranks, 1)),
                                ("reducescatter", lambda: to_xml.construct_algo_reduce_scatter(
                                    hops, cs, k1, ranks, 1, False))):
                path = os.path.join(a.outdir, "%s-%s-k1.xml" % (tag, coll))
                with open(path, "w") as f:
                    f.write(pretty(build()))
            print("%s: optimum U=%s k=%d: %.2f us per GiB; k=1: U=%s, %.2f us per GiB"
                  % (tag, U, k, opt_us, U1, k1_us))
            figures[tag] = {"U": U, "k": k, "optimum_us_per_GiB": round(opt_us, 2),
                            "k1_U": U1, "k1_us_per_GiB": round(k1_us, 2)}
    with open(os.path.join(a.outdir, "forestcoll-optimum.json"), "w") as f:
        json.dump({"source": "ForestColl optimal_pipeline_spanning_trees @3c13aee, run by "
                             "scripts/gen_forestcoll_xml.py: U and k as it returns them; "
                             "us per GiB of AllGather output = U / (N k) s/GB x 1.073741824 GB",
                   "fabrics": figures}, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
