#!/usr/bin/env python3
"""gen_topologies.py — write the bundled topologies/*.json files.

The bundled machines are regular (copies of one node, a hybrid cube-mesh, a
torus, a switch, a chip/cluster grid), so they are generated here rather than
typed by hand; every figure carries its source or says "assumed".  The format
is documented at the top of src/model/topo.c and in topologies/README.md.

    scripts/gen_topologies.py [OUTDIR]     (default: topologies/ of the repo)

Output is deterministic: running it again rewrites identical files.
Python 3 standard library only.
"""
import argparse
import json
import os

# ---------------------------------------------------------------- sources

V100_LOCAL = {
    "copy_gbps": 450,
    "reduce_gbps": 300,
    "source": "assumed: V100 HBM2 peaks near 900 GB/s; a copy reads and "
              "writes every byte (~450 GB/s), a reduce reads two operands and "
              "writes one (~300 GB/s)",
}

# The GPU generation (device.arch): NCCL's tuning model (taccl-synth --algo
# nccl) keys its constants on it; no hop cost depends on it.
V100_DEVICE = {"kind": "gpu", "arch": "volta"}      # V100: Volta, sm_70

# DGX-1 / NDv2 hybrid cube-mesh: GPUs 0-3 and 4-7 are fully connected quads
# joined by 0-4, 1-5, 2-6, 3-7; each V100 has six NVLinks, so four pairs per
# GPU, two of them doubled.  Adjacency and which pairs are doubled: TACCL's
# taccl/topologies/generic.py ndv2() (beta 23 = double, 46 = single), the
# same matrix as TE-CCL's teccl/topologies/ndv2.py and dgx1.py.
CUBE_MESH_DOUBLE = [[0, 1], [0, 4], [1, 3], [2, 3], [2, 6], [4, 5], [5, 7],
                    [6, 7]]
CUBE_MESH_SINGLE = [[0, 2], [0, 3], [1, 2], [1, 5], [3, 7], [4, 6], [4, 7],
                    [5, 6]]
CUBE_MESH_ADJ = ("adjacency from TACCL taccl/topologies/generic.py ndv2() "
                 "(also TE-CCL teccl/topologies/ndv2.py)")


# ------------------------------------------------------------- runtime latency

def with_runtime(t, whose):
    """t with "runtime_latency": whose ("nccl" or "rccl") after its rank
    counts: the runtime's per-step and per-call latencies on top of the
    hops' (src/model/cost.h, "Runtime latency"; docs/design.md section 4).
    Set on every GPU machine a runtime of NCCL's family runs; not on the
    TACOS networks (no runtime is named for them) or the chip devices."""
    out = {}
    for k, v in t.items():
        out[k] = v
        if k == "ranks_per_node":
            out["runtime_latency"] = whose
    return out


def ndv2(nodes):
    return with_runtime({
        "name": "ndv2-x%d" % nodes,
        "description": "Azure NDv2 x%d: 8 V100 per node in a hybrid "
                       "cube-mesh (DGX-1 style NVLink), one InfiniBand NIC "
                       "per node; TE-CCL's figures" % nodes,
        "nodes": nodes,
        "ranks_per_node": 8,
        "device": V100_DEVICE,
        "local": V100_LOCAL,
        "links": [
            {"pairs": CUBE_MESH_DOUBLE, "alpha_us": 0.7,
             "bandwidth_gbps": 50, "multiplicity": 1,
             "source": "TE-CCL teccl/topologies/ndv2.py: double NVLink "
                       "50 GB/s, alpha 0.7 us; " + CUBE_MESH_ADJ},
            {"pairs": CUBE_MESH_SINGLE, "alpha_us": 0.7,
             "bandwidth_gbps": 25, "multiplicity": 1,
             "source": "TE-CCL teccl/topologies/ndv2.py: single NVLink "
                       "25 GB/s, alpha 0.7 us; " + CUBE_MESH_ADJ},
        ],
        "nics": [
            {"ranks": list(range(8)), "alpha_us": 1.3, "bandwidth_gbps": 12.5,
             "source": "TE-CCL teccl/topologies/ndv2.py: InfiniBand "
                       "12.5 GB/s each way, alpha 1.3 us; one NIC per node "
                       "shared by all 8 GPUs (TACCL ndv2: nics_per_node = 1)"},
        ],
    }, "nccl")


def dgx2(nodes):
    return with_runtime({
        "name": "dgx2-x%d" % nodes,
        "description": "NVIDIA DGX-2 x%d: 16 V100 on NVSwitch, 8 InfiniBand "
                       "NICs per node each shared by GPUs 2k and 2k+1; "
                       "TE-CCL's figures" % nodes,
        "nodes": nodes,
        "ranks_per_node": 16,
        "device": V100_DEVICE,
        "local": V100_LOCAL,
        "switches": [
            {"ranks": list(range(16)), "alpha_us": 0.35,
             "bandwidth_gbps": 125,
             "source": "TE-CCL teccl/topologies/dgx2.py: NVSwitch 125 GB/s "
                       "per GPU port, alpha 0.35 us"},
        ],
        "nics": [
            {"ranks": [2 * k, 2 * k + 1], "alpha_us": 2.6,
             "bandwidth_gbps": 12.5,
             "source": "TE-CCL teccl/topologies/dgx2.py: InfiniBand "
                       "12.5 GB/s, alpha 2.6 us; 8 NICs per node (TACCL "
                       "dgx2: nics_per_node = 8), NIC k shared by GPUs 2k "
                       "and 2k+1 (TE-CCL joins GPU 2k+1 to GPU 2k of the "
                       "other node)"}
            for k in range(8)
        ],
    }, "nccl")


# Modern 8-GPU nodes: NVSwitch inside, one InfiniBand NIC per GPU.  Link
# and NIC bandwidths are the vendors' specifications; no per-hop latency is
# published for them, so alpha is TE-CCL's measured figure for the same kind
# of hop on the previous generation, said as assumed.
NVSWITCH_ALPHA = ("assumed: alpha 0.7 us, TE-CCL's NVLink figure for NDv2 "
                  "(teccl/topologies/ndv2.py); no per-hop NVSwitch latency is "
                  "published for this generation")
IB_ALPHA = ("assumed: alpha 2.6 us, TE-CCL's InfiniBand figure for DGX-2 "
            "(teccl/topologies/dgx2.py); no per-hop latency is published for "
            "this NIC")


def hbm_local(gpu, hbm_gbps, source):
    return {
        "copy_gbps": round(hbm_gbps / 2, 3),
        "reduce_gbps": round(hbm_gbps / 3, 3),
        "source": "assumed from %s: HBM peaks near %g GB/s (%s); a copy reads "
                  "and writes every byte (half of it), a reduce reads two "
                  "operands and writes one (a third)" % (gpu, hbm_gbps, source),
    }


def nvswitch_node(name, nodes, what, arch, port_gbps, port_source, nic_gbps,
                  nic_source, local, nvls=None):
    """8 GPUs of generation `arch` on one NVSwitch fabric (one port per GPU)
    and a NIC per GPU; `nvls`: the switch reduces and multicasts (NVLink
    SHARP, docs/nvls.md)."""
    sw = {"ranks": list(range(8)), "alpha_us": 0.7,
          "bandwidth_gbps": port_gbps,
          "source": "%s; %s" % (port_source, NVSWITCH_ALPHA)}
    if nvls:
        sw["nvls"] = nvls
    return with_runtime({
        "name": "%s-x%d" % (name, nodes),
        "description": "%s x%d: 8 GPUs on NVSwitch, one InfiniBand NIC per "
                       "GPU" % (what, nodes),
        "nodes": nodes,
        "ranks_per_node": 8,
        "device": {"kind": "gpu", "arch": arch},
        "local": local,
        "switches": [sw],
        "nics": [
            {"ranks": [g], "alpha_us": 2.6, "bandwidth_gbps": nic_gbps,
             "source": "%s; %s" % (nic_source, IB_ALPHA)}
            for g in range(8)
        ],
    }, "nccl")


A100_PORT = ("NVIDIA DGX A100 datasheet / A100 whitepaper: third-generation "
             "NVLink, 12 links, 600 GB/s bidirectional per GPU through six "
             "NVSwitches, so 300 GB/s each way")
H100_PORT = ("NVIDIA DGX H100 datasheet / H100 whitepaper: fourth-generation "
             "NVLink, 18 links, 900 GB/s bidirectional per GPU through four "
             "NVSwitches, so 450 GB/s each way")
# NVLink SHARP on 8 H100s: NCCL's own NVLS figures (docs/nvls.md section 1).
H100_NVLS = {
    "bandwidth_gbps": 306,
    "alpha_us": 0.7,
    "reductions": ["sum"],
    "dtypes": ["i32", "f32", "bf16", "f16"],
    "source": "NCCL 5067397 (github:NVIDIA/nccl): the NVLS graph of 8 H100s on NVSwitch has 8 channels of bwIntra 40 GB/s, the fastest of sm90SpeedArrayIntra (src/graph/search.cc:1057) for which ncclTopoSearchTryNvls (search.cc:410-440) fits every channel on every GPU's NVSwitch path, twice on the channel's head: (8 + 1) x 40 = 360 <= 18 NVLinks x SM90_NVLINK_BW 20.6 = 370.8 GB/s (src/graph/topo.h:22); times nvlsEfficiency 0.85 for Hopper (src/graph/tuning.cc:139-144): 360 x 0.85 = 306 GB/s of multimem traffic per GPU and direction, with which an NVLS AllReduce's (n+1)/n of the buffer per port and direction gives NCCL's own NVLS busBw, 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s (tuning.cc:307-316); reductions and dtypes: ncclNvlsSupported (src/include/device.h:587-600: sum for i32, f32, f16, bf16; min/max not for f32, so only sum is listed); assumed: alpha 0.7 us, the switch's own figure (NCCL's 25 us NVLS latency, tuning.cc:161, is per call, not per operation)",
}
A100_LOCAL = hbm_local("A100 40GB", 1555, "NVIDIA A100 datasheet: 1,555 GB/s")
H100_LOCAL = hbm_local("H100 SXM5 80GB", 3350,
                       "NVIDIA H100 datasheet: 3.35 TB/s")


def dgx_a100(nodes):
    return nvswitch_node(
        "dgx-a100", nodes, "NVIDIA DGX A100", "ampere", 300, A100_PORT, 25,
        "NVIDIA DGX A100 datasheet: 8 single-port ConnectX-6 VPI 200 Gb/s "
        "HDR InfiniBand for compute, one per GPU (25 GB/s each way)",
        A100_LOCAL)


def dgx_h100(nodes):
    return nvswitch_node(
        "dgx-h100", nodes, "NVIDIA DGX H100", "hopper", 450, H100_PORT, 50,
        "NVIDIA DGX H100 datasheet: 8 single-port ConnectX-7 up to 400 Gb/s "
        "InfiniBand, one per GPU (50 GB/s each way)", H100_LOCAL, H100_NVLS)


def ndv4(nodes):
    return nvswitch_node(
        "ndv4", nodes, "Azure ND A100 v4 (Standard_ND96asr_v4)", "ampere", 300,
        "Azure docs, ND A100 v4-series: 8 A100 40GB with NVLink 3.0; " +
        A100_PORT, 25,
        "Azure docs, ND A100 v4-series: 200 Gb/s HDR InfiniBand per GPU, "
        "1.6 Tb/s per VM (25 GB/s each way)", A100_LOCAL)


def ndv5(nodes):
    return nvswitch_node(
        "ndv5", nodes, "Azure ND H100 v5 (Standard_ND96isr_H100_v5)", "hopper",
        450,
        "Azure docs, ND H100 v5-series: 8 H100 80GB with NVLink 4.0; " +
        H100_PORT, 50,
        "Azure docs, ND H100 v5-series: 400 Gb/s Quantum-2 CX7 InfiniBand per "
        "GPU, 3.2 Tb/s per VM (50 GB/s each way)", H100_LOCAL, H100_NVLS)


# AMD machines.  Our format names no AMD generation (device.arch), so
# `--algo nccl` runs NCCL's tuning model with the generation unknown; RCCL's
# own tuning differs and is not modelled (AMD_ALGO_NCCL says how).
AMD_ALGO_NCCL = (
    "--algo nccl on this machine uses NCCL's tuning model with the generation "
    "unknown (device.arch names no AMD part; src/synth/nccl_tune.c then takes "
    "its first, Volta, constants). RCCL tunes differently and that is not "
    "modelled: its src/graph/tuning.cc keeps six tuning tables "
    "(rcclTuningModel[], hwLat, bwRatio and per-size correction factors) "
    "chosen per machine by src/graph/rome_models.cc (e.g. rome_model_59: "
    "tuning=4, ll128Enabled=1), and enables LL128 by default only on gfx90a "
    "(tuning.cc:512-514) (ROCm/rccl 0cbce2a)")
XGMI_ALPHA = ("assumed: alpha 0.7 us, TE-CCL's NVLink figure for NDv2 "
              "(teccl/topologies/ndv2.py); no per-hop Infinity Fabric latency "
              "is published")

# MI300X platform: 8 OAMs, every pair joined by one Infinity Fabric link.
MI300X_LINK = ("AMD Instinct MI300X datasheet / platform brief: 8 GPUs fully "
               "connected by AMD Infinity Fabric, 7 links per GPU, 128 GB/s "
               "bidirectional peak per link (896 GB/s aggregate), so 64 GB/s "
               "each way per pair")
MI300X_LOCAL = hbm_local("MI300X", 5300,
                         "AMD Instinct MI300X datasheet: 5.3 TB/s HBM3")


def xgmi_node(name, nodes, desc, part, local, pairs, link_gbps, link_source,
              nics):
    """8 AMD GPUs (or GCDs) joined by the xGMI `pairs`, one link each, and
    the NICs given as (ranks, GB/s, source)."""
    return with_runtime({
        "name": "%s-x%d" % (name, nodes),
        "description": desc % nodes,
        "nodes": nodes,
        "ranks_per_node": 8,
        "device": {"kind": "gpu", "source": part + "; " + AMD_ALGO_NCCL},
        "local": local,
        "links": [
            {"pairs": pairs, "alpha_us": 0.7, "bandwidth_gbps": link_gbps,
             "multiplicity": 1,
             "source": "%s; %s" % (link_source, XGMI_ALPHA)},
        ],
        "nics": [
            {"ranks": ranks, "alpha_us": 2.6, "bandwidth_gbps": gbps,
             "source": "%s; %s" % (src, IB_ALPHA)}
            for ranks, gbps, src in nics
        ],
    }, "rccl")


def mi300x(nodes):
    nic = ("Azure docs, ND MI300X v5-series: 8 MI300X with one 400 Gb/s "
           "NVIDIA Quantum-2 CX7 InfiniBand NIC per GPU, 3.2 Tb/s per VM "
           "(50 GB/s each way)")
    return xgmi_node(
        "mi300x", nodes, "AMD Instinct MI300X platform x%d: 8 GPUs fully "
        "connected by Infinity Fabric (xGMI), one 400 Gb/s NIC per GPU",
        "AMD Instinct MI300X (CDNA 3, gfx942)", MI300X_LOCAL,
        [[a, b] for a in range(8) for b in range(a + 1, 8)], 64, MI300X_LINK,
        [([g], 50, nic) for g in range(8)])


# MI250: 4 OAMs of 2 GCDs each, a GCD being one rank (as RCCL counts it).
# Which GCD pairs are joined: RCCL's model of an 8-GCD gfx90a machine
# (tools/topo_expl/models/topo_8p_90a.xml and src/graph/rome_models.cc
# rome_model_63's connMatrix, ROCm/rccl 0cbce2a): each GCD has three
# neighbours, one link each.
MI250_PAIRS = [[0, 1], [0, 2], [0, 6], [1, 3], [1, 5], [2, 3], [2, 4], [3, 7],
               [4, 5], [4, 6], [5, 7], [6, 7]]
MI250_LINK = ("AMD Instinct MI250 datasheet: Infinity Fabric links of 100 GB/s "
              "bidirectional peak, so 50 GB/s each way per link; which GCD "
              "pairs are linked and by one link each: RCCL's 8-GCD gfx90a "
              "model (tools/topo_expl/models/topo_8p_90a.xml, "
              "src/graph/rome_models.cc rome_model_63 connMatrix, "
              "ROCm/rccl 0cbce2a)")
MI250_LOCAL = hbm_local("MI250 (one of the two GCDs of an OAM)", 1638.4,
                        "AMD Instinct MI250 datasheet: 3.2768 TB/s HBM2e per "
                        "OAM, half per GCD")


def mi250(nodes):
    nic = ("OLCF Frontier user guide (HPE Cray EX235a node, 4 MI250X): four "
           "HPE Slingshot 200 Gb/s NICs, one attached to each OAM (25 GB/s "
           "each way); assumed: GCDs 2k and 2k+1 share OAM k")
    return xgmi_node(
        "mi250", nodes, "AMD Instinct MI250 x%d: 4 OAMs per node, 8 GCDs (one "
        "rank each) joined by Infinity Fabric (xGMI), one 200 Gb/s NIC per OAM",
        "AMD Instinct MI250 (CDNA 2, gfx90a), each GCD a rank as RCCL counts "
        "it", MI250_LOCAL, MI250_PAIRS, 50, MI250_LINK,
        [([2 * k, 2 * k + 1], 25, nic) for k in range(4)])


def dgx1():
    single = round(1e6 / 46e3, 7)       # 1 MB / 46 us = 21.7391304 GB/s
    double = round(2e6 / 46e3, 7)
    table1 = ("TACCL paper Table 1: NDv2/DGX-1 NVLink alpha 0.7 us, beta "
              "46 us/MB, so 1e6 B / 46 us = %s GB/s per single NVLink")
    return with_runtime({
        "name": "dgx1",
        "description": "NVIDIA DGX-1: 8 V100 in the hybrid cube-mesh, one "
                       "node; NVLink figures from TACCL's Table 1",
        "nodes": 1,
        "ranks_per_node": 8,
        "device": V100_DEVICE,
        "local": V100_LOCAL,
        "links": [
            {"pairs": CUBE_MESH_DOUBLE, "alpha_us": 0.7,
             "bandwidth_gbps": double, "multiplicity": 1,
             "source": (table1 % single) + "; double links 2x = %s GB/s; "
                       % double + CUBE_MESH_ADJ},
            {"pairs": CUBE_MESH_SINGLE, "alpha_us": 0.7,
             "bandwidth_gbps": single, "multiplicity": 1,
             "source": (table1 % single) + "; " + CUBE_MESH_ADJ},
        ],
    }, "nccl")


# Direct-connect networks of the TACOS benchmark (docs/references.md): one
# rank per NPU, every link 50 GiB/s = 53.6870912 GB/s each way, alpha 0.5 us,
# store-and-forward (alpha + s/B per hop, which is our cost model as it is).
TACOS_LOCAL = {
    "copy_gbps": 500,
    "reduce_gbps": 500,
    "source": "assumed: TACOS models no local cost; 500 GB/s copy and "
              "reduce (as topo_default) keeps local work small next "
              "to the links",
}


def tacos_links(pairs, numbering):
    """The one link group of a TACOS network; numbering says rank = ..."""
    return {"pairs": pairs, "alpha_us": 0.5, "bandwidth_gbps": 53.6870912,
            "multiplicity": 1,
            "source": "docs/references.md TACOS section: every link 50 GiB/s "
                      "(53.69 GB/s) each way, alpha 0.5 us; " + numbering}


def torus_2d(w, h):
    pairs = []
    for y in range(h):
        for x in range(w):
            r = y * w + x
            pairs.append([r, y * w + (x + 1) % w])
            pairs.append([r, ((y + 1) % h) * w + x])
    return {
        "name": "torus-2d-%dx%d" % (w, h),
        "description": "%dx%d 2D torus, one rank per NPU, wrap-around links "
                       "in both dimensions; TACOS's figures" % (w, h),
        "nodes": 1,
        "ranks_per_node": w * h,
        "device": {"kind": "gpu"},
        "local": TACOS_LOCAL,
        "links": [tacos_links(pairs, "rank = y*%d + x" % w)],
    }


def ring(n):
    """n ranks in a ring, each linked to its two neighbours (not bundled:
    scripts/scale.sh writes ring(64), ring(256), ring(1024) for the
    executor's scale runs)."""
    return {
        "name": "ring-%d" % n,
        "description": "%d ranks in a ring, one link to each neighbour; "
                       "TACOS's link figures" % n,
        "nodes": 1,
        "ranks_per_node": n,
        "device": {"kind": "gpu"},
        "local": TACOS_LOCAL,
        "links": [tacos_links([[r, (r + 1) % n] for r in range(n)],
                              "rank r linked to r+1 mod %d" % n)],
    }


def mesh_2d(w, h):
    """w x h grid, each NPU linked to its 2-4 neighbours, no wrap-around."""
    pairs = []
    for y in range(h):
        for x in range(w):
            r = y * w + x
            if x + 1 < w:
                pairs.append([r, r + 1])
            if y + 1 < h:
                pairs.append([r, r + w])
    return {
        "name": "mesh-2d-%dx%d" % (w, h),
        "description": "%dx%d 2D mesh, one rank per NPU, no wrap-around "
                       "(corner NPUs have 2 links, edge NPUs 3); TACOS's "
                       "figures" % (w, h),
        "nodes": 1,
        "ranks_per_node": w * h,
        "device": {"kind": "gpu"},
        "local": TACOS_LOCAL,
        "links": [tacos_links(pairs, "rank = y*%d + x" % w)],
    }


def torus_3d(a, b, c):
    """a x b x c torus with wrap-around in all three dimensions."""
    pairs = []
    for z in range(c):
        for y in range(b):
            for x in range(a):
                r = (z * b + y) * a + x
                pairs.append([r, (z * b + y) * a + (x + 1) % a])
                pairs.append([r, (z * b + (y + 1) % b) * a + x])
                pairs.append([r, (((z + 1) % c) * b + y) * a + x])
    return {
        "name": "torus-3d-%dx%dx%d" % (a, b, c),
        "description": "%dx%dx%d 3D torus, one rank per NPU, wrap-around "
                       "links in all three dimensions; TACOS's figures"
                       % (a, b, c),
        "nodes": 1,
        "ranks_per_node": a * b * c,
        "device": {"kind": "gpu"},
        "local": TACOS_LOCAL,
        "links": [tacos_links(pairs, "rank = (z*%d + y)*%d + x" % (b, a))],
    }


# Case-study device (docs/design.md §4).  Its bandwidths are not public.
CS_DEVICE_SOURCE = ("case study (docs/design.md §4): the device has 4 chips "
                    "of 2 clusters; this view: %d chip(s) x %d cluster(s), "
                    "one rank per cluster; DMA moves whole 256-byte segments "
                    "(one [C, D] i32 tile = 8 x 8 x 4 bytes)")
CS_LOCAL = {
    "copy_gbps": 512,
    "reduce_gbps": 256,
    "source": "assumed: not public; cluster-local SRAM copy ~512 GB/s, an "
              "i32 vector add reads two operands so about half (256 GB/s)",
}
CS_C2C = {
    "alpha_us": 1.0, "bandwidth_gbps": 64, "multiplicity": 1,
    "source": "assumed: not public; a PCIe 5.0 x16 class chip-to-chip path "
              "(~64 GB/s each way), alpha 1 us for a remote DMA with its "
              "destination-ready and completion ChipSyncs",
}
CS_ON_CHIP = {
    "alpha_us": 0.2, "bandwidth_gbps": 256, "multiplicity": 1,
    "source": "assumed: not public; the on-chip path between a chip's "
              "clusters taken as 4x the chip-to-chip one (256 GB/s), alpha "
              "0.2 us (a ClusterSync is cheaper than a ChipSync)",
}


def chip_device(chips, clusters):
    return {"kind": "chip", "chips_per_node": chips,
            "clusters_per_chip": clusters, "dma_bytes": 256,
            "source": CS_DEVICE_SOURCE % (chips, clusters)}


def cs_chip4x2():
    c2c = [[2 * i + k, 2 * j + k] for k in range(2) for i in range(4)
           for j in range(i + 1, 4)]
    on_chip = [[2 * i, 2 * i + 1] for i in range(4)]
    # A fused plan that changes chip and cluster at once (both syncs) is one
    # DMA on the device, so those pairs are reachable directly too.
    fused = [[2 * i + k, 2 * j + 1 - k] for k in range(2) for i in range(4)
             for j in range(i + 1, 4)]
    return {
        "name": "cs-chip4x2",
        "description": "case-study device: 4 chips x 2 clusters (8 ranks, "
                       "rank = chip*2 + cluster); all figures assumed",
        "notes": "assumed wiring: every cluster reaches every cluster of "
                 "the other chips over the chip-to-chip path (a transfer "
                 "that changes both chip and cluster is one fused DMA "
                 "needing both syncs), and its sibling cluster on its own "
                 "chip over the on-chip path",
        "nodes": 1,
        "ranks_per_node": 8,
        "device": chip_device(4, 2),
        "local": CS_LOCAL,
        "links": [dict(pairs=c2c + fused, **CS_C2C),
                  dict(pairs=on_chip, **CS_ON_CHIP)],
    }


def cs_chip4():
    return {
        "name": "cs-chip4",
        "description": "case-study chip examples' view: 4 chips, one rank per "
                       "chip, chip-to-chip links between every pair; all "
                       "figures assumed",
        "nodes": 1,
        "ranks_per_node": 4,
        "device": chip_device(4, 1),
        "local": CS_LOCAL,
        "links": [dict(pairs=[[i, j] for i in range(4)
                              for j in range(i + 1, 4)], **CS_C2C)],
    }


def cs_cluster2():
    return {
        "name": "cs-cluster2",
        "description": "case-study cluster examples' view: one chip of 2 "
                       "clusters (2 ranks) and the link between them; all "
                       "figures assumed",
        "nodes": 1,
        "ranks_per_node": 2,
        "device": chip_device(1, 2),
        "local": CS_LOCAL,
        "links": [dict(pairs=[[0, 1]], **CS_ON_CHIP)],
    }


# ------------------------------------------------------------- the writer

def dump(v, indent=0):
    """JSON with objects opened one key per line, short lists on one line."""
    pad = "  " * indent
    if isinstance(v, dict):
        items = ['%s  %s: %s' % (pad, json.dumps(k), dump(x, indent + 1))
                 for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if all(not isinstance(x, (dict, list)) for x in v) or \
                all(isinstance(x, list) for x in v):
            return "[" + ", ".join(dump(x, indent + 1) for x in v) + "]"
        return "[\n" + ",\n".join(pad + "  " + dump(x, indent + 1)
                                  for x in v) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?", default=os.path.join(root, "topologies"),
                    help="directory to write the files into (default: topologies/)")
    out = ap.parse_args().outdir
    os.makedirs(out, exist_ok=True)
    topos = [ndv2(1), ndv2(2), ndv2(4), dgx2(1), dgx2(2), dgx1(),
             torus_2d(4, 4), cs_chip4x2(), cs_chip4(), cs_cluster2(),
             torus_2d(8, 8), torus_2d(32, 32), mesh_2d(8, 8),
             torus_3d(4, 4, 4)]
    for make in (dgx_a100, dgx_h100, ndv4, ndv5, mi300x):
        topos += [make(n) for n in (1, 2, 4)]
    topos += [mi250(1), mi250(2)]
    for t in topos:
        path = os.path.join(out, t["name"] + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(dump(t) + "\n")
        print(path)


if __name__ == "__main__":
    main()
