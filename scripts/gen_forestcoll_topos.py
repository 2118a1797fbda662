#!/usr/bin/env python3
"""gen_forestcoll_topos.py — ForestColl's two evaluation fabrics in our format.

ForestColl (Zhao et al., "ForestColl: Throughput-Optimal Collective
Communications on Heterogeneous Network Fabrics", arXiv 2402.06787; code at
github.com/liangyuRain/ForestColl, Apache-2.0, commit 3c13aee) states the
optimal AllGather time of its A100 and MI250 topologies.  This script restates
the figures of its topologies.py (a100_topology, mi250_topology) — link
counts and bandwidths — as taccl topology JSON, so that our bounds and
schedules can be compared with its optimum on the same machines.  Nothing of
ForestColl's code is used: only the numbers, each named below.

    scripts/gen_forestcoll_topos.py [OUTDIR]   (default: tests/data/forestcoll)

ForestColl's model has no latency (alpha = 0); ours needs one, so every hop
gets alpha 0 here too: compare bandwidth parts (us per byte) only.
Deterministic: running it again rewrites identical files.
"""
import argparse
import json
import os

SRC = "ForestColl topologies.py @3c13aee (github.com/liangyuRain/ForestColl)"

# MI250: 16 GCDs per node; entry [b][c] = xGMI links between GCD b and c,
# each 50 GB/s per direction (ForestColl's xGMI_BW); every GCD has one
# 16 GB/s InfiniBand port (MI250_IB_BW) to a single IB switch.
MI250_ADJ = [
    [0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    [4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0],
]
XGMI_BW = 50
MI250_IB_BW = 16
NVLINK_BW = 300     # A100 GPU <-> NVSwitch, per direction
A100_IB_BW = 25     # one mlx5 NIC per GPU

LOCAL = {"copy_gbps": 1000, "reduce_gbps": 1000,
         "source": "assumed: ForestColl models no local copy or reduction cost"}


def mi250(nodes):
    links = {}      # local ranks: every node has the same links
    for b in range(16):
        for c in range(b + 1, 16):
            m = MI250_ADJ[b][c]
            if m:
                links.setdefault(m, []).append([b, c])
    t = {
        "name": "forestcoll-mi250-x%d" % nodes,
        "description": "ForestColl's MI250 fabric x%d: 16 GCDs per node joined by xGMI "
                       "(1, 2 or 4 links of 50 GB/s), one 16 GB/s IB port per GCD" % nodes,
        "nodes": nodes, "ranks_per_node": 16,
        "device": {"kind": "gpu"},
        "local": LOCAL,
        "links": [{"pairs": links[m], "alpha_us": 0, "bandwidth_gbps": XGMI_BW,
                   "multiplicity": m,
                   "source": "%s: MI250_ADJ_MAT entry %d, xGMI_BW %d GB/s" % (SRC, m, XGMI_BW)}
                  for m in sorted(links)],
    }
    if nodes > 1:
        t["nics"] = [{"ranks": [r], "alpha_us": 0, "bandwidth_gbps": MI250_IB_BW,
                      "source": "%s: MI250_IB_BW %d GB/s per GCD" % (SRC, MI250_IB_BW)}
                     for r in range(16)]
    return t


def a100(nodes):
    t = {
        "name": "forestcoll-a100-x%d" % nodes,
        "description": "ForestColl's A100 fabric x%d: 8 GPUs per node on an NVSwitch of "
                       "300 GB/s ports, one 25 GB/s mlx5 NIC per GPU" % nodes,
        "nodes": nodes, "ranks_per_node": 8,
        "device": {"kind": "gpu", "arch": "ampere"},
        "local": LOCAL,
        "switches": [{"ranks": list(range(8)), "alpha_us": 0, "bandwidth_gbps": NVLINK_BW,
                      "source": "%s: NVLINK_BW %d GB/s GPU <-> NVSwitch" % (SRC, NVLINK_BW)}],
    }
    if nodes > 1:
        t["nics"] = [{"ranks": [r], "alpha_us": 0, "bandwidth_gbps": A100_IB_BW,
                      "source": "%s: A100_IB_BW %d GB/s per mlx5 NIC (ForestColl puts odd and "
                                "even NICs on two IB switches; here one fabric, which changes "
                                "no cut that binds)" % (SRC, A100_IB_BW)}
                     for r in range(8)]
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("outdir", nargs="?", default=os.path.join(root, "tests/data/forestcoll"))
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for t in (mi250(1), mi250(2), a100(1), a100(2)):
        with open(os.path.join(a.outdir, t["name"] + ".json"), "w") as f:
            json.dump(t, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
