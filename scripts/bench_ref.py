"""bench_ref.py — the published figures the benchmark prints ours beside.

Copied from docs/references.md (which cites the TACCL, TE-CCL
and TACOS papers and a TACOS run); kept here as data so that results.md can
put each figure next to the row it compares with.  Edit docs/references.md and this
file together.

Sizes: the size of the papers' figures (docs/references.md) of AllGather and AllToAll is the
nccl-tests per-rank buffer (AllGather: the output every rank ends with,
n x the per-rank input), i.e. our --size.  "1 GB" / "64 KB" / "1 KB" are
compared with our power-of-two rows 1 GiB / 64 KiB / 1 KiB (2.4-7.4 %
more bytes, which matters only where time is latency-bound).
Bandwidths are algorithm bandwidth in GB/s (1e9 B/s).
"""

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# (topology, collective, nominal size, label, TACCL algbw, TE-CCL algbw,
#  bound algbw, how docs/references.md explains the bound); None = "—" in docs/references.md.
PUBLISHED = [
    ("ndv2-x2", "allgather", GIB, "1 GB", 18.60, 22.86, 25.0,
     "each node must import half over one 12.5 GB/s link"),
    ("ndv2-x2", "allgather", 64 * KIB, "64 KB", 4.89, 10.53, None, None),
    ("ndv2-x2", "allgather", KIB, "1 KB", 0.098, 0.242, None, None),
    ("ndv2-x2", "alltoall", GIB, "1 GB", 3.125, 3.524, None, None),
    ("ndv2-x2", "alltoall", KIB, "1 KB", 0.027, 0.236, None, None),
    ("dgx2-x2", "allgather", GIB, "1 GB", None, 129.03, 129.03,
     "per-GPU ingress 125 x 32/31"),
    ("ndv2-x4", "allgather", GIB, "1 GB", None, 15.38, 16.67,
     "3/4 of the data over one 12.5 GB/s link per node"),
]

# TACCL's speed-ups over NCCL (paper), as docs/references.md quotes them.
# Beside each, the report prints ours over NCCL in the same size range:
# (time of our nccl row, the schedule `taccl-synth --algo nccl --size S`
# writes: what NCCL's tuning runs at S) / (time of taccl (best), the fastest
# verified synthesized schedule), both at S in our executor.  Our ring
# (`--algo ring`) is shown apart, as "× ring", never as NCCL.
# (topology, collective, lo size, hi size, text)
SPEEDUPS = [
    ("dgx2-x2", "allgather", KIB, MIB,
     "TACCL paper: AllGather DGX-2 x2 4.9-6.7x over NCCL at 1 KB-1 MB"),
    ("dgx2-x2", "allreduce", KIB, 4 * MIB,
     "TACCL paper: AllReduce DGX-2 x2 49 %-6.4x over NCCL at 1 KB-4 MB"),
    ("ndv2-x2", "allreduce", 2 * MIB, GIB,
     "TACCL paper: AllReduce NDv2 x2 up to 2.7x over NCCL above 1 MB"),
    ("ndv2-x4", "allgather", 64 * MIB, GIB,
     "TACCL paper: NDv2 x4 1.9-2.1x over NCCL for large buffers"),
]

# Calibration: one row per published range of docs/references.md "TACCL's
# speed-ups over NCCL on the real machines (TACCL Figs. 6-8)".  Ours at a
# size S = t(our nccl row at S) / t(the fastest verified schedule
# synthesized from that row's sketch at S, over its anchors), at every power
# of two S in [lo, hi] that the run has; the row shows min-max over those
# sizes.  Sizes are nccl-tests per-rank buffers, a paper's "1 MB" our 1 MiB;
# "up to 1 MB" is 1 KiB-1 MiB, "above 1 MB" 2 MiB-1 GiB, "from 512 MB"
# 512 MiB-1 GiB.
# (row id, topology, collective, our sketch file stem or None, TACCL's
#  sketch name, instances, lo size, hi size, sizes as published, published
#  text, kind, published lo, published hi, why this sketch)
#  kind: "range" (lo-hi: both endpoints judged), "up" ("up to X": only the
#  maximum, X, judged), "down" ("down to X": only the minimum).
CALIBRATION = [
    ("dgx2-ag-sk1", "dgx2-x2", "allgather", "dgx2-x2-sk-1", "dgx2-sk-1", 1,
     256 * MIB, GIB, "256 MB – 1 GB", "1.20–1.25×", "range", 1.20, 1.25,
     "named by the paper"),
    ("dgx2-ag-sk2-small", "dgx2-x2", "allgather", "dgx2-x2-sk-2",
     "dgx2-sk-2", 1, KIB, MIB, "1 KB – 1 MB", "4.9–6.7×", "range", 4.9, 6.7,
     "named by the paper"),
    ("dgx2-ag-sk2-mid", "dgx2-x2", "allgather", "dgx2-x2-sk-2", "dgx2-sk-2",
     1, 2 * MIB, 64 * MIB, "2 MB – 64 MB", "1.10–3.8×", "range", 1.10, 3.8,
     "named by the paper"),
    ("ndv2-ag-small", "ndv2-x2", "allgather", "ndv2-x2-sk-1", "ndv2-sk-1", 1,
     KIB, MIB, "1 KB – 1 MB", "1.12–1.35×", "range", 1.12, 1.35,
     "TACCL's only NDv2 AllGather sketch (commands.sh; Table 2)"),
    ("ndv2-ag-large", "ndv2-x2", "allgather", "ndv2-x2-sk-1", "ndv2-sk-1", 1,
     2 * MIB, GIB, "above 1 MB", "1.61–3.4×", "range", 1.61, 3.4,
     "TACCL's only NDv2 AllGather sketch (commands.sh; Table 2)"),
    ("dgx2-a2a-large", "dgx2-x2", "alltoall", "dgx2-x2-sk-2", "dgx2-sk-2", 1,
     2 * MIB, GIB, "from 2 MB", "up to 1.15×", "up", None, 1.15,
     "not named by the paper's range; TACCL's other DGX-2 AllToAll sketch "
     "(commands.sh, Table 2)"),
    ("dgx2-a2a-small", "dgx2-x2", "alltoall", None, "dgx2-sk-3", 1,
     KIB, 16 * KIB, "1–16 KB", "up to 1.55×", "up", None, 1.55,
     "named by the paper; TACCL's repository has no sk3-dgx2-n2.json (its "
     "commands.sh names the file, no commit holds it)"),
    ("ndv2-a2a-sk1", "ndv2-x2", "alltoall", "ndv2-x2-sk-1", "ndv2-sk-1", 1,
     16 * MIB, GIB, "16 MB – 1 GB", "1.53–1.66×", "range", 1.53, 1.66,
     "named by the paper"),
    ("ndv2-a2a-sk2", "ndv2-x2", "alltoall", "ndv2-x2-sk-2", "ndv2-sk-2", 1,
     KIB, 128 * KIB, "1–128 KB", "up to 1.12×", "up", None, 1.12,
     "named by the paper"),
    ("dgx2-ar-sk2", "dgx2-x2", "allreduce", "dgx2-x2-sk-2", "dgx2-sk-2", 1,
     KIB, 4 * MIB, "1 KB – 4 MB", "1.49–6.4×", "range", 1.49, 6.4,
     "named by the paper"),
    ("dgx2-ar-sk1", "dgx2-x2", "allreduce", "dgx2-x2-sk-1", "dgx2-sk-1", 1,
     16 * MIB, 256 * MIB, "16–256 MB", "1.02–1.37×", "range", 1.02, 1.37,
     "named by the paper"),
    ("dgx2-ar-large", "dgx2-x2", "allreduce", "dgx2-x2-sk-1", "dgx2-sk-1", 1,
     512 * MIB, GIB, "from 512 MB", "down to 0.91×", "down", 0.91, None,
     "not named by the range; the sketch of the range below it"),
    ("ndv2-ar-small", "ndv2-x2", "allreduce", "ndv2-x2-sk-1", "ndv2-sk-1", 1,
     KIB, MIB, "up to 1 MB", "up to 1.28×", "up", None, 1.28,
     "TACCL's only NDv2 AllReduce sketch (commands.sh; Table 2)"),
    ("ndv2-ar-large", "ndv2-x2", "allreduce", "ndv2-x2-sk-1", "ndv2-sk-1", 8,
     2 * MIB, GIB, "above 1 MB (8 instances)", "1.28–2.7×", "range", 1.28,
     2.7, "TACCL's only NDv2 AllReduce sketch, --instances 8 as published"),
    ("ndv2x4-ar-small", "ndv2-x4", "allreduce", "ndv2-x4-sk-1", "ndv2-sk-1",
     1, KIB, MIB, "small", "up to 1.34×", "up", None, 1.34,
     "TACCL's only four-node NDv2 command (commands.sh); the paper says "
     "\"small\": we take 1 KiB-1 MiB"),
    ("ndv2x4-ar-large", "ndv2-x4", "allreduce", "ndv2-x4-sk-1", "ndv2-sk-1",
     1, 64 * MIB, GIB, "large", "1.9–2.1×", "range", 1.9, 2.1,
     "TACCL's only four-node NDv2 command (commands.sh); the paper says "
     "\"large\": we take 64 MiB-1 GiB"),
]
# A published endpoint is reproduced when ours is within this factor of it,
# either way.
CALIBRATION_FACTOR = 1.33
# The model assumption behind each calibration row (row id -> text), shown
# in the report's "model assumption" column; "—" where none is given.
CALIBRATION_NOTES = {}


# TACOS on direct-connect networks, 1 MiB of input per NPU:
# topology -> (NPUs, TACOS time us, alpha-beta bound us, ratio, TACOS
# synthesis time, bound note); and the ratios with 64 MiB per NPU.
TACOS = {
    "torus-2d-4x4": (16, 100.16, 73.24, 1.367, "0.3 ms", None),
    "torus-2d-8x8": (64, 340.53, 307.62, 1.107, "10 ms", None),
    "mesh-2d-8x8": (64, 641.00, 615.23, 1.042, "14 ms", "corner ingress"),
    "torus-3d-4x4x4": (64, 220.34, 205.08, 1.074, "7 ms", None),
    "torus-2d-32x32": (1024, 5168.06, 4995.12, 1.035, "68 s", None),
}
TACOS_RATIO_64MIB = {
    "torus-2d-4x4": 1.334, "torus-2d-8x8": 1.080, "mesh-2d-8x8": 1.016,
    "torus-3d-4x4x4": 1.048, "torus-2d-32x32": 1.009,
}

# TACCL synthesis time with Gurobi, 12 threads (paper Table 2), seconds.
SYNTH_TIME = [
    ("allgather", "dgx2-sk-1", 35.8), ("allgather", "dgx2-sk-2", 11.3),
    ("allgather", "ndv2-sk-1", 2.6), ("alltoall", "dgx2-sk-2", 92.5),
    ("alltoall", "ndv2-sk-1", 1809.8), ("alltoall", "ndv2-sk-2", 8.4),
    ("allreduce", "dgx2-sk-1", 6.1), ("allreduce", "dgx2-sk-2", 127.8),
    ("allreduce", "ndv2-sk-1", 0.3),
]


def taccl_name(stem):
    """TACCL's Table 2 name of one of our sketch files (stem without .json):
    ndv2-x2-sk-1 -> ndv2-sk-1, dgx2-x2-sk-2 -> dgx2-sk-2 (Table 2 is on two
    nodes); a variant such as ndv2-x2-sk-1-cup2 maps to the same name (it is
    shown as its own row); anything else to itself."""
    import re
    m = re.match(r"(ndv2|dgx2)-x2-(sk-\d+)(-.*)?$", stem)
    return "%s-%s" % m.group(1, 2) if m else stem


def is_variant(stem):
    """True for our variants of a TACCL sketch (ndv2-x2-sk-1-cup4: the same
    routing constraints, more chunks): their synthesis time is shown beside
    TACCL's but is not judged against it (a different, larger problem)."""
    import re
    return re.match(r"(ndv2|dgx2)-x2-sk-\d+-.+$", stem) is not None


# Issue 4's targets for the synthesizer (judged on "taccl (best)", the
# fastest verified synthesized schedule at that size over all anchors and
# sketches of the configuration).
# Quality, NDv2 x2 AllGather: (topology, collective, nominal size, label,
# kind, value, what it is): kind "bound" = algbw >= value x docs/references.md's bound
# at that size (PUBLISHED); "teccl" = algbw >= TE-CCL's published algbw.
TARGET_QUALITY = [
    ("ndv2-x2", "allgather", GIB, "1 GB", "bound", 0.95,
     "≥ 95 % of the bound"),
    ("ndv2-x2", "allgather", 64 * KIB, "64 KB", "teccl", None,
     "≥ TE-CCL"),
    ("ndv2-x2", "allgather", KIB, "1 KB", "teccl", None, "≥ TE-CCL"),
]
# TACOS networks at 1 MiB per NPU: synthesized AllGather time / bound at
# most this (within 5 % of the bound), on these topologies.
TARGET_TACOS_RATIO = 1.05
TARGET_TACOS_TOPOS = ["torus-2d-4x4", "torus-2d-8x8", "mesh-2d-8x8",
                      "torus-3d-4x4x4"]


if __name__ == "__main__":
    # A module of scripts/bench_run.py, not a program: say so.
    print(__doc__)
