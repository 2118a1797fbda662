/* nccl_tune.c — NCCL's tuning model (contract and sources in nccl_tune.h).
 *
 * Why a copy of the model and not our own cost model: `--algo nccl` must
 * pick what NCCL picks, right or wrong, so the yardstick is NCCL and not the
 * best schedule our model knows.  The figures below are NCCL's tables
 * transcribed (tree and ring rows only; index order LL, LL128, Simple as
 * NCCL's NCCL_PROTO_* is) and the rules restated in our terms. */
#include "nccl_tune.h"

#include "../model/topo_nccl.h"

#include <math.h>
#include <string.h>

/* NCCL_PROTO_* order: LL, LL128, Simple. */
enum { P_LL, P_LL128, P_SIMPLE };

static int pidx(cost_proto p)
{
    return p == COST_LL ? P_LL : p == COST_LL128 ? P_LL128 : P_SIMPLE;
}

/* baseLatencies[algo][proto] (us) */
static const double BASE_LAT[NCCL_NALGO][3] = {
    {6.8, 14.0, 8.4},   /* tree */
    {6.6, 14.0, 8.4},   /* ring */
    {0, 0, 0},          /* NVLS */
    {0, 0, 0},          /* NVLSTree */
    {8.0, 8.0, 8.0},    /* PAT */
    {0, 0, 0},          /* CollNetDirect */
    {0, 0, 0},          /* CollNetChain */
};

/* hwLatencies[hw][algo][proto] (us): NVLink, network (tuning.cc:155-175 at
 * NCCL 5067397; the NVLS and CollNet rows are Simple only) */
static const double HW_LAT_NVLINK[NCCL_NALGO][3] = {
    {0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, TOPO_NCCL_NVLS_HWLAT_NVLINK}, {0, 0, 25},
    {0, 0, 4.0}, {0, 0, 3.7}, {0, 0, 2.8}};
static const double HW_LAT_NET[NCCL_NALGO][3] = {
    {5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}, {0, 0, TOPO_NCCL_NVLS_HWLAT_NET}, {0, 0, 20.9},
    {0, 0, 14}, {0, 0, 31}, {0, 0, 30}};

#define NVLS_NCHANNELS_SM90 16
#define COLLNET_MAX_LOCAL 8     /* NCCL_MAX_DIRECT_ARITY + 1 (device.h:199) */
#define COLLNET_ARITY_LAT_US 0.4    /* tuning.cc:420: arity serialization */
#define NVLS_NCHANNELS_SM100 32
#define NVLS_NCHANNELS_SM100_NVL 24

/* Per generation (Volta, Ampere, Hopper, Blackwell) x {1 node, 2, more}. */
static const double LL_MAX_BW[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double PER_CH_RING_LL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double PER_CH_TREE_LL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double PER_CH_TREE[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double PER_CH_NVLS_TREE[4][3] = {      /* tuning.cc:205-211 */
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};

/* Tree AllReduce correction, powers of two of bytes/64 from 64 B. */
static const double TREE_CORRECTION[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
     .9},
};

#define NET_OVERHEAD_US 1.0     /* getNetOverhead: Intel x86 host */
#define NCCL_STEPS COST_FIFO_SLOTS              /* buffers: cost_proto_steps_bytes */
#define RING_CHUNKSTEPS (NCCL_STEPS / 2)        /* ALLGATHER/ALLREDUCE/REDUCESCATTER_CHUNKSTEPS */
#define RING_SLICESTEPS (NCCL_STEPS / 4)        /* ..._SLICESTEPS */
#define P2P_LL_THRESHOLD 16384
#define P2P_NVL_CHUNK (1LL << 19)
#define P2P_NET_CHUNK (1LL << 17)

static int gen_index(topo_arch a)
{
    switch (a) {
    case TOPO_ARCH_AMPERE: return 1;
    case TOPO_ARCH_HOPPER: return 2;
    case TOPO_ARCH_BLACKWELL: return 3;
    default: return 0;
    }
}

static int log2i(long long n)
{
    int l = 0;
    while (n >>= 1)
        l++;
    return l;
}

const char *nccl_algo_name(nccl_algo a)
{
    return a == NCCL_TREE ? "tree" : a == NCCL_NVLS ? "nvls" : a == NCCL_NVLS_TREE ? "nvlstree"
         : a == NCCL_PAT ? "pat" : a == NCCL_COLLNET_DIRECT ? "collnetdirect"
         : a == NCCL_COLLNET_CHAIN ? "collnetchain" : "ring";
}

/* The compute capability (x10) NCCL keys its NVLS constants on. */
static int sm_of(topo_arch a)
{
    return a == TOPO_ARCH_BLACKWELL ? 100 : a == TOPO_ARCH_HOPPER ? 90 : 80;
}

int nccl_nvls_graph(topo_arch arch, int ngpus, int links, double *bw_intra, double *bw_inter)
{
    int sm = sm_of(arch);
    return topo_nccl_nvls_graph(sm, ngpus, links * topo_nccl_nvlink_bw(sm), bw_intra, bw_inter);
}

int nccl_nvls_channels(topo_arch arch, int nnodes)
{
    if (arch == TOPO_ARCH_BLACKWELL)
        return nnodes > 1 ? NVLS_NCHANNELS_SM100 : NVLS_NCHANNELS_SM100_NVL;
    return NVLS_NCHANNELS_SM90;
}

/* One graph: pass 1, the duplication, pass 2 (nccl_tune.h). */
static void collnet_graph(int sm, int nch, int max_ch, double per_nic, double load,
                          double gpu_gbps, double net_gbps, int *out_ch, double *bw_intra,
                          double *bw_inter)
{
    const double *sp;
    int ns = topo_nccl_inter_speeds(sm, &sp);
    *out_ch = 0;
    *bw_intra = *bw_inter = 0;
    /* pass 1: one speed for bwIntra and bwInter, the fastest the NICs
     * (per_nic channels each) and the NVLinks (load x the speed) carry */
    int i = 0;
    while (i < ns && (per_nic * sp[i] > net_gbps + 1e-9 || load * sp[i] > gpu_gbps + 1e-9))
        i++;
    if (nch < 1 || i == ns)
        return;
    double intra = sp[i], inter = sp[i];
    /* ncclTopoDupChannels (search.cc:1036-1049) */
    if (intra >= 25.0 && !(sm > 80 && intra < 50.0 && nch > 4)) {
        int dup = 2 * nch < max_ch ? 2 * nch : max_ch;
        int div = (dup + nch - 1) / nch;
        intra /= div;
        inter /= div;
        nch = dup;
    }
    /* pass 2: from bwInter's speed, bwIntra raised while below twice
     * bwInter and the NVLinks carry the faster speed */
    int j = 0;
    while (j < ns - 1 && sp[j] > inter)
        j++;
    while (j > 0 && intra < 2 * inter && load * sp[j - 1] <= gpu_gbps + 1e-9 &&
           sp[j - 1] > intra)
        intra = sp[--j];
    *out_ch = nch;
    *bw_intra = intra;
    *bw_inter = inter;
}

void nccl_collnet_graphs(nccl_comm *c, int ngpus, int heads, double gpu_gbps, double net_gbps,
                         int ring_channels)
{
    int sm = sm_of(c->arch);
    c->cd_channels = c->cc_channels = 0;
    c->cd_bw_intra = c->cd_bw_inter = c->cc_bw_intra = c->cc_bw_inter = 0;
    if (ngpus < 2 || heads < 1 || !(net_gbps > 0) || !(gpu_gbps > 0))
        return;
    /* CollNetDirect: a channel per head, each NIC one channel; a GPU
     * carries its own channel's bwIntra and 1 / (ngpus - 1) of every
     * other head's, each way */
    int cd = heads < COLLNET_MAX_LOCAL ? heads : COLLNET_MAX_LOCAL;
    if (cd > ngpus)
        cd = ngpus;
    int max_cd = ngpus < COLLNET_MAX_LOCAL ? ngpus : COLLNET_MAX_LOCAL;
    collnet_graph(sm, cd, max_cd, 1.0, 1.0 + (double)(cd - 1) / (ngpus - 1), gpu_gbps, net_gbps,
                  &c->cd_channels, &c->cd_bw_intra, &c->cd_bw_inter);
    /* CollNetChain: the ring's channels as chains NIC -> GPUs, shared by
     * the heads' NICs; each GPU carries every channel once each way */
    if (ring_channels > 0) {
        double per_nic = ceil((double)ring_channels / heads);
        collnet_graph(sm, ring_channels, ring_channels, per_nic, ring_channels, gpu_gbps,
                      net_gbps, &c->cc_channels, &c->cc_bw_intra, &c->cc_bw_inter);
    }
}

/* ncclTopoTuneModel's bandwidth (GB/s, algorithm bandwidth) for (k, a, p). */
static double model_bw(const nccl_comm *c, coll_kind k, nccl_algo a, int p)
{
    int g = gen_index(c->arch);
    int i2 = c->nnodes <= 2 ? c->nnodes - 1 : 2;
    int i1 = c->nnodes == 1 ? g : 0;
    double ll_max = LL_MAX_BW[i1][i2];
    if (a == NCCL_NVLS || a == NCCL_NVLS_TREE) {
        /* tuning.cc:307-323: busBW per channel from the NVLS graph, one
         * channel's worth lost, doubled for AllReduce (two operations
         * pipelined), (ppn-1)/ppn otherwise; NVLSTree's bwInter doubled on
         * two nodes and its channel capped by perChMaxNVLSTreeBw;
         * AllReduce's bus bandwidth to algorithm bandwidth as a ring's
         * (tuning.cc:375-381), none for AllGather and ReduceScatter */
        int nch = c->nvls_graph_channels;
        if (nch < 2 || p != P_SIMPLE)
            return 0;
        double ppn = (double)c->nranks / c->nnodes;
        double intra = c->nvls_bw_intra * topo_nccl_nvls_eff(sm_of(c->arch)) * (nch - 1) / nch;
        intra *= k == COLL_ALLREDUCE ? 2.0 : (ppn - 1) / ppn;
        double inter = c->nvls_bw_inter * (a == NCCL_NVLS_TREE && c->nnodes <= 2 ? 2 : 1);
        double bw = fmin(intra, inter);
        if (a == NCCL_NVLS_TREE)
            bw = fmin(bw, PER_CH_NVLS_TREE[g][i2]);
        double bus = nch * bw;
        return k == COLL_ALLREDUCE ? bus * c->nranks / (2.0 * (c->nranks - 1)) : bus;
    }
    if (a == NCCL_COLLNET_DIRECT || a == NCCL_COLLNET_CHAIN) {
        /* tuning.cc:305-306: bwIntra at any node count; 338-349: Simple
         * only, CollNetDirect's AllGather and ReduceScatter ppn x the
         * slower of bwIntra and 0.9 bwInter, its AllReduce divided by
         * half the GPU/NIC ratio's excess and x0.85 from sm 90; 375-381:
         * AllReduce x0.5 */
        int cd = a == NCCL_COLLNET_DIRECT;
        int nch = cd ? c->cd_channels : c->cc_channels;
        if (p != P_SIMPLE || nch < 1)
            return 0;
        double ppn = (double)c->nranks / c->nnodes;
        double bus = nch * (cd ? c->cd_bw_intra : c->cc_bw_intra);
        if (cd && k != COLL_ALLREDUCE)
            return ppn * fmin(c->cd_bw_intra, c->cd_bw_inter * 0.9);
        if (cd) {
            double f = ppn / nch;
            f -= (f - 1) / 2;
            bus /= f;
            if (sm_of(c->arch) >= 90)
                bus *= .85;
        }
        return bus * .5;
    }
    double bw = c->nnodes <= 2 ? c->bw_intra : c->bw_inter;
    /* search.cc (ncclTopoCompute) gives a graph across nodes one speed for
     * both bwIntra and bwInter; pass 2 raises a tree's bwIntra while it is
     * below twice its bwInter, never a ring's */
    if (c->nnodes == 2)
        bw = fmin(c->bw_intra, a == NCCL_RING ? c->bw_inter : 2 * c->bw_inter);
    double bus = c->nchannels * bw;
    if (a == NCCL_RING && p == P_LL)
        bus = fmin(ll_max, bus * .5);
    if (a == NCCL_RING && p == P_LL128)
        bus = fmin(bus * .92, c->nchannels * PER_CH_RING_LL128[g][i2]);
    if (a == NCCL_TREE && k == COLL_ALLREDUCE)
        bus = fmin(bus * .92, c->nchannels * PER_CH_TREE[g][i2]);
    if (a == NCCL_TREE && p == P_LL)
        bus = fmin(bus / 3.8, ll_max);
    if (a == NCCL_TREE && p == P_LL128)
        bus = fmin(bus * (c->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   c->nchannels * PER_CH_TREE_LL128[g][i2]);
    if (a == NCCL_PAT)      /* tuning.cc:337; AllGather and ReduceScatter's bus
                               bandwidth is PAT's algorithm bandwidth (:375) */
        return bus * .75;
    int nsteps = k == COLL_ALLREDUCE ? 2 * (c->nranks - 1) : c->nranks - 1;
    return bus * (a == NCCL_RING ? (double)c->nranks / nsteps : .5);
}

/* ncclTopoTuneModel's latency (us) for (k, a, p). */
static double model_lat(const nccl_comm *c, coll_kind k, nccl_algo a, int p)
{
    double lat = BASE_LAT[a][p];
    double intra = HW_LAT_NVLINK[a][p];
    int ppn = c->nranks / c->nnodes;
    double inter = ppn == 1 ? HW_LAT_NET[NCCL_TREE][p] : HW_LAT_NET[a][p];
    if (a == NCCL_NVLS)     /* tuning.cc:424-426: the base latency replaced */
        return intra + (c->nnodes > 1 ? inter : 0);
    if (a == NCCL_NVLS_TREE)    /* tuning.cc:427-428 (an IB NIC's latencyInter: 0) */
        return lat + intra + 2 * log2i(c->nnodes) * inter;
    if (a == NCCL_COLLNET_DIRECT)   /* tuning.cc:418-421 (an IB NIC's latencyInter: 0) */
        return lat + 2 * ((ppn - 1 < 1 ? ppn - 1 : 1) * intra + (ppn - 1) * COLLNET_ARITY_LAT_US)
             + inter;
    if (a == NCCL_COLLNET_CHAIN)    /* tuning.cc:422-423 */
        return lat + 2 * (ppn - 1) * intra + inter;
    if (a == NCCL_PAT)          /* tuning.cc:429-433: one GPU per node, so the tree's
                                   network latency (:397-398) */
        return lat + log2i(c->nnodes) * (inter / 3.5) + c->nranks * 2.8;
    if (a == NCCL_RING) {
        int nsteps = k == COLL_ALLREDUCE ? 2 * (c->nranks - 1) : c->nranks - 1;
        if (c->nnodes > 1) {
            double ovh = NET_OVERHEAD_US * (p == P_SIMPLE ? 3 : 1);
            if (ovh > intra)
                intra = ovh;
        }
        int inter_steps = c->nnodes == 1 ? 0 : k == COLL_ALLREDUCE ? 2 * (c->nnodes - 1)
                                                                   : c->nnodes - 1;
        lat += (nsteps - inter_steps) * intra + inter_steps * inter;
    } else if (k == COLL_ALLREDUCE) {
        lat += 2 * ((ppn - 1) * intra + log2i(c->nnodes) * inter);
    }
    return lat;
}

double nccl_time_us(const nccl_comm *c, coll_kind k, nccl_algo a, cost_proto proto,
                    long long bytes)
{
    if (k == COLL_ALLTOALL || (a == NCCL_TREE && k != COLL_ALLREDUCE) || c->nranks < 2 ||
        c->nnodes < 1 || c->nchannels < 1)
        return -1;
    /* NVLS across nodes needs CollNet (enqueue.cc:2008); NVLSTree is off
     * on one node and runs AllReduce only (tuning.cc:295, 502) */
    int ppn = c->nranks / c->nnodes;
    if (a == NCCL_NVLS && ((c->nnodes > 1 && !c->collnet) || c->nvls_graph_channels < 2))
        return -1;
    /* CollNet: enabled, two nodes or more (init.cc:1468-1476, CollNet's
     * node threshold), Simple, at most 8 GPUs a node (enqueue.cc:
     * 1999-2003); CollNetChain AllReduce only (tuning.cc:293-297), Direct
     * where an NVSwitch joins the GPUs (tuning.cc:509) */
    if (a == NCCL_COLLNET_DIRECT || a == NCCL_COLLNET_CHAIN) {
        if (!c->collnet || c->nnodes < 2 || proto != COST_SIMPLE || ppn > COLLNET_MAX_LOCAL)
            return -1;
        if (a == NCCL_COLLNET_CHAIN && k != COLL_ALLREDUCE)
            return -1;
        if (a == NCCL_COLLNET_DIRECT && !c->nvswitch)
            return -1;
    }
    /* NVLS and CollNetDirect AllGather and ReduceScatter across nodes: the
     * plugin's iallgather / ireducescatter, and no more GPUs a node than
     * CollNet heads (tuning.cc:351-373) */
    if ((a == NCCL_NVLS || a == NCCL_COLLNET_DIRECT) && c->nnodes > 1 &&
        (k == COLL_ALLGATHER || k == COLL_REDUCESCATTER) &&
        (!(k == COLL_ALLGATHER ? c->collnet_ag : c->collnet_rs) || ppn > c->collnet_heads))
        return -1;
    if (a == NCCL_NVLS_TREE && (c->nnodes < 2 || k != COLL_ALLREDUCE || c->nvls_graph_channels < 2))
        return -1;
    /* PAT: AllGather and ReduceScatter, Simple, one GPU per node, sm 60 or
     * later (ncclPatEnable, tuning.cc:215-223, 295-304) */
    if (a == NCCL_PAT && (c->nnodes != c->nranks || c->nranks < 2 || proto != COST_SIMPLE ||
                          (k != COLL_ALLGATHER && k != COLL_REDUCESCATTER)))
        return -1;
    int p = pidx(proto);
    double bw = model_bw(c, k, a, p), lat = model_lat(c, k, a, p);
    if (!(bw > 0))
        return -1;
    int logsize = log2i(bytes >> 6);
    if (bytes >> 6 == 0)
        logsize = -1;
    if (a == NCCL_TREE && k == COLL_ALLREDUCE && logsize >= 0 && logsize < 23)
        bw *= TREE_CORRECTION[p][logsize];
    if (a == NCCL_RING && p == P_SIMPLE && c->nnodes > 1 && k == COLL_ALLREDUCE &&
        bytes / ((long long)c->nchannels * c->nranks) >= 64)
        lat *= c->arch == TOPO_ARCH_VOLTA || c->arch == TOPO_ARCH_UNKNOWN ? 1.9 : 1.4;
    return lat + (double)bytes / (1000.0 * bw);
}

/* maxThreads and threadThresholds of (a, p). */
static void threads(const nccl_comm *c, nccl_algo a, int p, int *nt, long long *thr)
{
    *nt = p == P_LL128 ? 640 : 512;
    *thr = p == P_SIMPLE ? 64 : 8;
    if (a == NCCL_RING && p == P_LL)
        *thr *= c->nranks;
}

/* The tree's chunk under LL128, halved while each channel would move too
 * few chunks for the tree's depth to pipeline (src/enqueue.cc, the
 * NCCL_ALGO_TREE && NCCL_PROTO_LL128 branch of the chunk sizing: the same
 * rule in NCCL 2.8.4): nsteps = 1 + log2(nodes) + ranks per node / 10,
 * halve above 128 KiB while bytes / (channels x chunk) < nsteps x 64 / ppn,
 * then above 32 KiB while it is < nsteps x 16 / ppn (integer division on
 * the left, as NCCL's). */
static long long tree_ll128_chunk(const nccl_comm *c, int nch, long long bytes, long long chunk)
{
    float ppn = (float)c->nranks / (float)c->nnodes;
    float nsteps = 1 + log2i(c->nnodes) + 0.1f * ppn;
    while ((float)(bytes / (nch * chunk)) < nsteps * 64 / ppn && chunk > 131072)
        chunk /= 2;
    while ((float)(bytes / (nch * chunk)) < nsteps * 16 / ppn && chunk > 32768)
        chunk /= 2;
    return chunk;
}

int nccl_choose(const nccl_comm *c, coll_kind k, long long bytes, nccl_choice *out)
{
    return nccl_choose_ex(c, k, bytes, 0, out);
}

int nccl_choose_ex(const nccl_comm *c, coll_kind k, long long bytes, unsigned skip,
                   nccl_choice *out)
{
    memset(out, 0, sizeof *out);
    static const cost_proto PROTOS[3] = {COST_LL, COST_LL128, COST_SIMPLE};
    /* NCCL's algorithm order (NCCL_ALGO_*: tree, ring, CollNetDirect,
     * CollNetChain, NVLS, NVLSTree, PAT): a tie goes to the first */
    static const nccl_algo ORDER[NCCL_NALGO] = {NCCL_TREE, NCCL_RING, NCCL_COLLNET_DIRECT,
                                                NCCL_COLLNET_CHAIN, NCCL_NVLS, NCCL_NVLS_TREE,
                                                NCCL_PAT};
    double best = -1;
    for (int ai = 0; ai < NCCL_NALGO; ai++)
        for (int i = 0; i < 3; i++) {
            int a = ORDER[ai];
            double t = nccl_time_us(c, k, (nccl_algo)a, PROTOS[i], bytes);
            out->table_us[a][PROTOS[i]] = t;
            if (c->only_proto && c->only_proto != 1 + (int)PROTOS[i])
                continue;
            if (skip & (1u << a))
                continue;
            if (t >= 0 && (best < 0 || t < best)) {
                best = t;
                out->algo = (nccl_algo)a;
                out->proto = PROTOS[i];
            }
        }
    if (best < 0)
        return -1;
    out->time_us = best;
    if (out->algo == NCCL_COLLNET_DIRECT || out->algo == NCCL_COLLNET_CHAIN) {
        /* its graph's channels, a Simple buffer step each (no output
         * holds a reduction in the network, so nothing is built on it) */
        out->nchannels = out->algo == NCCL_COLLNET_DIRECT ? c->cd_channels : c->cc_channels;
        out->chunk_bytes = out->slice_bytes = cost_proto_steps_bytes(COST_SIMPLE, 1);
        return 0;
    }
    if (out->algo == NCCL_NVLS || out->algo == NCCL_NVLS_TREE) {
        /* enqueue.cc:2084-2090: every NVLS channel, NCCL's NVLS chunk */
        out->nchannels = c->nvls_channels > 0 ? c->nvls_channels : NVLS_NCHANNELS_SM90;
        out->chunk_bytes = out->slice_bytes = NCCL_NVLS_CHUNK_BYTES;
        return 0;
    }
    if (out->algo == NCCL_PAT) {
        /* NCCL sets no maxThreads for PAT (tuning.cc:246-256), so the
         * thread-threshold loop (enqueue.cc:2092-2096) never lowers the
         * count: the scheduler's traffic cells decide how many channels the
         * call spreads over; PAT's own chunk rule (enqueue.cc:2295-2298) on
         * each channel's share */
        out->nchannels = nccl_sched_channels(k, c->nranks, c->nchannels, bytes);
        out->chunk_bytes = out->slice_bytes = nccl_pat_chunk_bytes(k, out->nchannels, bytes);
        return 0;
    }
    int p = pidx(out->proto), nt;
    long long thr;
    threads(c, out->algo, p, &nt, &thr);
    int nc = c->nchannels;
    while (nc >= 2 && bytes < (long long)nc * nt * thr)
        nc--;
    out->nchannels = nc;
    int ring_simple = out->algo == NCCL_RING && p == P_SIMPLE;
    out->chunk_bytes = cost_proto_steps_bytes(out->proto, ring_simple ? RING_CHUNKSTEPS : 1);
    out->slice_bytes = cost_proto_steps_bytes(out->proto, ring_simple ? RING_SLICESTEPS : 1);
    if (out->algo == NCCL_TREE && p == P_LL128)
        out->chunk_bytes = out->slice_bytes = tree_ll128_chunk(c, nc, bytes, out->chunk_bytes);
    return 0;
}

#define MIN_TRAFFIC_PER_CHANNEL (32 << 10)  /* enqueue.cc:585 */

static long long up16(long long x)
{
    return (x + 15) / 16 * 16;
}

int nccl_sched_channels(coll_kind k, int nranks, int nchannels, long long bytes)
{
    /* enqueue.cc:91-102 (traffic per byte of one rank's send buffer),
     * 585-618 (a call's traffic, at least 32 KiB, shared by its channels),
     * 655-702 (cut into cells of 32 KiB of traffic: the first channel
     * takes its share, then whole shares, then the rest) */
    if (nchannels <= 1)
        return 1;
    long long tpb = k == COLL_ALLREDUCE ? 2 : nranks;
    long long count = k == COLL_ALLREDUCE ? bytes : bytes / nranks;
    long long traffic = count * tpb < MIN_TRAFFIC_PER_CHANNEL ? MIN_TRAFFIC_PER_CHANNEL
                                                               : count * tpb;
    long long per_ch = up16(traffic / nchannels);
    long long cell = up16((MIN_TRAFFIC_PER_CHANNEL + tpb - 1) / tpb);
    long long cells = (count + cell - 1) / cell, per_cell = cell * tpb;
    long long take = (per_ch + per_cell - 1) / per_cell;
    long long each = cells < take ? cells : take;
    if (cells < 1 || each < 1)
        return 1;
    long long lo = each, rest = cells - lo;
    long long used = 1 + rest / each + (rest % each != 0);
    return used < nchannels ? (int)used : nchannels;
}

long long nccl_pat_chunk_bytes(coll_kind k, int nchannels, long long bytes)
{
    long long chunk = cost_proto_steps_bytes(COST_SIMPLE, 1);    /* a buffer step */
    long long per = k == COLL_REDUCESCATTER ? 16 : 32;
    while (chunk * nchannels * per > bytes && chunk > 65536)
        chunk /= 2;
    return chunk;
}

int nccl_pat_agg(long long chunk_bytes, long long channel_bytes, int nranks)
{
    /* PatAGAlgorithm's and PatRSAlgorithm's constructors
     * (collectives.h:800-804, 531-535): double while the step holds the
     * channel's share at least twice over, below half the ranks; integer
     * division as NCCL's */
    int agg = 1;
    if (channel_bytes < 1)
        channel_bytes = 1;
    while (chunk_bytes / (channel_bytes * agg) >= 2 && agg < nranks / 2)
        agg *= 2;
    return agg;
}

cost_proto nccl_p2p_proto(long long bytes)
{
    return bytes <= P2P_LL_THRESHOLD ? COST_LL : COST_SIMPLE;
}

long long nccl_p2p_chunk_bytes(int across_nodes, long long bytes, cost_proto p)
{
    long long step = p == COST_LL ? 2 * cost_proto_steps_bytes(COST_LL, 1)   /* its lines */
                                  : across_nodes ? P2P_NET_CHUNK : P2P_NVL_CHUNK;
    long long chunk = step;
    if (across_nodes) {
        if (p == COST_SIMPLE && bytes < step)
            chunk /= 4;
        else if (bytes < 8 * step)
            chunk /= 2;
    }
    return p == COST_LL ? chunk / 2 : chunk;
}
