/* baseline_nccl.c — `--algo nccl`: the schedule NCCL would run for one
 * call, as an MSCCL program.
 *
 * Why: a speed-up over NCCL is only honest against what NCCL runs, not
 * against our own ring.  NCCL decides per call (nccl_tune.h): ring or, for
 * AllReduce, its double binary tree (NVLS on a switch that reduces, written
 * as an MSCCL++ plan; PAT for AllGather and ReduceScatter with one GPU per
 * node, baseline_pat.c); LL, LL128 or Simple; how many of its
 * channels; and pipelines each channel in its chunk size.  Its channels are
 * rings its topology search built, one per NIC on a node with several, each
 * entering and leaving the node through its own NIC, then duplicated.
 * AllToAll is NCCL's point-to-point exchange with its P2P protocol and
 * chunk rules.
 *
 * This file works out that plan from the topology and hands the building to
 * the ring, tree and direct builders (baseline.c) with NCCL's channels,
 * pieces and protocol; the note and the program's name say what was
 * picked and NCCL's own estimates. */
#include "baseline_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../model/cost.h"
#include "../model/topo_nccl.h"
#include "../sched/mpp.h"
#include "../sched/xml.h"
#include "../util/mem.h"
#include "nccl_tune.h"

#define SINGLE_NODE_RINGS 8     /* rings sought inside one node */

/* NICs on node 0 (distinct). */
static int nics_per_node(const topo *t)
{
    int c = 0;
    for (int x = 0; x < t->nnics; x++)
        c += t->nics[x].node == 0;
    return c;
}

/* Per-channel bandwidths of the ring set, as NCCL's search would account
 * them: each hop's route bandwidth shared by every ring holding the same
 * resource (a switch port all rings cross, a NIC a ring shares with
 * another), the slowest inside a node and between nodes, then halved for
 * NCCL's duplication of every channel. */
static void ring_bandwidths(const topo *t, const baseline_rings *R, double *intra, double *inter)
{
    int nres = cost_nres(t), n = t->nranks;
    int *uses = xcalloc((size_t)nres, sizeof *uses);
    for (int k = 0; k < R->nrings; k++)
        for (int i = 0; i < n; i++) {
            int a = R->order[(size_t)k * n + i], b = R->order[(size_t)k * n + (i + 1) % n], res[2];
            int m = cost_hop_res(t, a, b, res);
            for (int j = 0; j < m; j++)
                uses[res[j]]++;
        }
    *intra = *inter = INFINITY;
    for (int k = 0; k < R->nrings; k++)
        for (int i = 0; i < n; i++) {
            int a = R->order[(size_t)k * n + i], b = R->order[(size_t)k * n + (i + 1) % n], res[2];
            topo_route rt = topo_route_of(t, a, b);
            int m = cost_hop_res(t, a, b, res), share = 1;
            for (int j = 0; j < m; j++) {
                int lanes = cost_res_lanes(t, res[j]);
                int s = (uses[res[j]] + lanes - 1) / (lanes > 0 ? lanes : 1);
                if (s > share)
                    share = s;
            }
            double bw = rt.bw_gbps / share;
            double *into = rt.kind == ROUTE_NIC ? inter : intra;
            if (bw < *into)
                *into = bw;
        }
    free(uses);
    if (!isfinite(*intra))
        *intra = *inter;
    if (!isfinite(*inter))
        *inter = *intra;
    *intra /= 2;
    *inter /= 2;
}

/* Index of rank r's NIC among its node's NICs, -1 if none. */
static int local_nic(const topo *t, int r)
{
    int x = t->nic_of_rank[r];
    if (x < 0)
        return -1;
    int i = 0;
    for (int y = 0; y < x; y++)
        i += t->nics[y].node == t->nics[x].node;
    return i;
}

/* Several nodes: where a channel's named NICs (net in, out) are not the
 * NICs the topology gives its first and last GPU, say so: the model routes
 * between nodes through the GPU's own NIC (connectRings joins the GPUs,
 * src/graph/connect.cc:95-113; the NIC a GPU uses for a channel is the
 * graph's, search.cc's ncclTopoGetNetDev, which our topology cannot
 * follow when it names another GPU's NIC). */
static void graph_nic_note(const topo *t, const nccl_graph *g, const baseline_rings *R,
                           char *s, size_t cap)
{
    if (t->nnodes < 2)
        return;
    int n = t->nranks, Rn = t->ranks_per_node, odd = 0, first = -1, named = 0;
    for (int k = 0; k < R->nrings; k++) {
        const int *net = g->ring.net + (size_t)k * 2;
        if (net[0] < 0)
            continue;
        named++;
        int in = local_nic(t, R->order[(size_t)k * n]);
        int out = local_nic(t, R->order[(size_t)k * n + Rn - 1]);
        if (in != net[0] || out != net[1]) {
            odd++;
            if (first < 0)
                first = k;
        }
    }
    if (!named)
        snprintf(s, cap, "; the graph names no NIC (a one-node job's): the GPUs' own NICs join "
                 "the nodes");
    else if (odd)
        snprintf(s, cap, "; %d channel%s (first %d) name NICs other than their end GPUs' own in "
                 "this topology, which carry them here", odd, odd == 1 ? "" : "s", first);
}

static long long ceil_div(long long a, long long b)
{
    return (a + b - 1) / b;
}

static long long pow2_at_least(long long m)
{
    long long p = 1;
    while (p < m)
        p *= 2;
    return p;
}

/* Build `algo` with K channels and M pieces, lowering M until the target's
 * steps-per-tb limit holds (NCCL loops where MSCCL cannot). */
static prog *build_within(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                          int K, long long M, baseline_stats *st, int *capped, tc_err *err)
{
    baseline_opts u = *o;
    u.channels = K;
    u.chunks = (int)(M > 64 ? 64 : M);
    *capped = M > u.chunks;
    int limit = runtime_get(o->target)->max_steps_per_tb;
    if (limit > 0 && strcmp(algo, "pat")) {     /* pat spreads a dimension over channels */
        for (;;) {
            baseline_opts trial = u;
            trial.target = RT_UNLIMITED;
            baseline_stats ts;
            memset(&ts, 0, sizeof ts);
            prog *p = bl_build_plain(algo, t, k, &trial, &ts, err);
            if (!p)
                return NULL;
            prog_free(p);
            if (ts.max_steps_per_tb <= limit || u.chunks == 1)
                break;
            int m = (int)((long long)u.chunks * limit / ts.max_steps_per_tb);
            u.chunks = m < u.chunks ? (m >= 1 ? m : 1) : u.chunks - 1;
            *capped = 1;
        }
    }
    memset(st, 0, sizeof *st);
    return bl_build_plain(algo, t, k, &u, st, err);
}

/* Nominal bandwidth of one NVLink per direction (GB/s): NVLink 4 (H100
 * whitepaper: 18 links, 900 GB/s both ways) and NVLink 5 (B200: 18 links,
 * 1.8 TB/s both ways). */
static double nvlink_gbps(topo_arch a)
{
    return a == TOPO_ARCH_BLACKWELL ? 50.0 : 25.0;
}

/* The GPU-NIC PCIe path as NCCL counts it on a Hopper or Blackwell node:
 * PCIe Gen5 x16, 16 lanes x 240 (GT/s in 100 Mb/s per lane, topo.cc's
 * kvDictPciGen) / 80 = 48 GB/s (topo.cc:652-657).  A topology does not
 * record that link; every bundled NVLS machine has it (DGX H100
 * datasheet: ConnectX-7 on PCIe Gen5 x16). */
#define NCCL_PCIE_GEN5_X16_GBPS 48.0

/* GPUs of node 0 with a NIC of their own: the heads NCCL's NVLS graph
 * finds across nodes, one per NIC with a local GPU (search.cc:754-772). */
static int nvls_heads(const topo *t)
{
    int c = 0;
    for (int x = 0; x < t->nnics; x++)
        c += t->nics[x].node == 0 && t->nics[x].nranks == 1;
    return c < t->ranks_per_node ? c : t->ranks_per_node;
}

/* NCCL's NVLS on t, if it has it (docs/nvls.md): Hopper or later, every
 * node's ranks on one switch that reduces and multicasts (NCCL's NVS node
 * with multicast support, search.cc:1124, nvls.cc:248-280) and, for a
 * reduction, sums f32 there (ncclNvlsSupported, device.h:587-600: what
 * --algo nccl's calls reduce).  Fills c's NVLS graph from the switch's
 * port bandwidth counted in NVLinks as NCCL counts them: on one node
 * NVLS's, across nodes NVLSTree's (its channels the GPUs with a NIC of
 * their own, its speeds capped by the GPU-NIC path). */
static void nvls_comm(const topo *t, coll_kind k, nccl_comm *c)
{
    int rpn = t->ranks_per_node;
    if (rpn < 2)
        return;
    int *ranks = xmalloc((size_t)rpn * sizeof *ranks), sw = -1;
    for (int node = 0; node < t->nnodes; node++) {
        for (int r = 0; r < rpn; r++)
            ranks[r] = node * rpn + r;
        int s = topo_nvls_switch(t, ranks, rpn);
        if (s < 0 || (sw >= 0 && (t->switches[s].bw_gbps != t->switches[sw].bw_gbps ||
                                  t->switches[s].nvls.dtypes != t->switches[sw].nvls.dtypes ||
                                  t->switches[s].nvls.redops != t->switches[sw].nvls.redops))) {
            sw = -1;
            break;
        }
        if (sw < 0)
            sw = s;
    }
    free(ranks);
    if (sw < 0)
        return;
    const topo_nvls *nv = &t->switches[sw].nvls;
    if (k != COLL_ALLGATHER && (!(nv->dtypes & (1u << DT_F32)) || !(nv->redops & (1u << RED_SUM))))
        return;
    /* a port of a whole number of NCCL's own per-link figure (what
     * taccl-topo import writes) counts those links; any other, whole
     * nominal NVLinks (the bundled machines' datasheet figures) */
    int sm = t->arch == TOPO_ARCH_BLACKWELL ? 100 : 90;
    double port = t->switches[sw].bw_gbps;
    double ncl = topo_nccl_nvlink_bw(sm);
    int links = (int)floor(port / ncl + 0.5);
    if (fabs(port - links * ncl) > 1e-6 * port)
        links = (int)floor(port / nvlink_gbps(t->arch) + 0.5);
    if (t->nnodes == 1) {
        c->nvls_graph_channels = nccl_nvls_graph(t->arch, rpn, links, &c->nvls_bw_intra,
                                                 &c->nvls_bw_inter);
    } else if (t->arch == TOPO_ARCH_HOPPER || t->arch == TOPO_ARCH_BLACKWELL) {
        double net = INFINITY;
        for (int x = 0; x < t->nnics; x++)
            if (t->nics[x].node == 0 && t->nics[x].bw_gbps < net)
                net = t->nics[x].bw_gbps;
        net = fmin(net, NCCL_PCIE_GEN5_X16_GBPS);
        if (topo_nccl_nvls_graph_net(sm, rpn, links * ncl, net, &c->nvls_bw_intra,
                                     &c->nvls_bw_inter))
            c->nvls_graph_channels = nvls_heads(t);
    }
    c->nvls_channels = nccl_nvls_channels(t->arch, t->nnodes);
}

/* A GPU's NVLink bandwidth as NCCL counts it: whole links of the nominal
 * NVLink figure (a switch port, or rank 0's direct links), each at NCCL's
 * per-link figure (topo_nccl_nvlink_bw). */
static double nccl_gpu_nvlink(const topo *t)
{
    int sm = t->arch == TOPO_ARCH_BLACKWELL ? 100 : t->arch == TOPO_ARCH_HOPPER ? 90
           : t->arch == TOPO_ARCH_AMPERE ? 80 : 70;
    double nominal = 0;
    for (int s = 0; s < t->nswitches; s++)
        for (int i = 0; i < t->switches[s].nranks; i++)
            if (t->switches[s].ranks[i] == 0)
                nominal += t->switches[s].bw_gbps;
    for (int l = 0; l < t->nlinks; l++)
        if (t->links[l].src == 0 && topo_node_of(t, t->links[l].dst) == 0)
            nominal += t->links[l].bw_gbps * t->links[l].mult;
    return floor(nominal / nvlink_gbps(t->arch) + 0.5) * topo_nccl_nvlink_bw(sm);
}

/* NCCL's CollNet on t (topo.h's topo_collnet), if the topology's network
 * reduces what --algo nccl's calls reduce (sum of f32; an AllGather
 * reduces nothing): CollNet's graphs (nccl_collnet_graphs) on a node's
 * NVLinks and its NICs, each NIC's figure capped by its PCIe path to the
 * GPU as NCCL counts it (Gen5 x16 from Hopper, Gen4 x16 on Ampere, Gen3
 * before: topo.cc:652-657). */
static void collnet_comm(const topo *t, coll_kind k, nccl_comm *c)
{
    const topo_collnet *cn = &t->collnet;
    if (!cn->on || t->nnodes < 2)
        return;
    if (k != COLL_ALLGATHER && (!(cn->dtypes & (1u << DT_F32)) || !(cn->redops & (1u << RED_SUM))))
        return;
    c->collnet = 1;
    c->collnet_ag = cn->allgather;
    c->collnet_rs = cn->reducescatter;
    /* a head per NIC: NCCL's CollNetDirect search takes one channel per
     * NIC, its GPU the NIC's local one (search.cc:754-772); the bundled
     * machines give each NIC its own GPU, an imported dump may share one
     * NIC between GPUs, whose local GPU is then one of them */
    int nics = 0;
    for (int x = 0; x < t->nnics; x++)
        nics += t->nics[x].node == 0;
    c->collnet_heads = nics < t->ranks_per_node ? nics : t->ranks_per_node;
    c->nvswitch = topo_node_switch(t) >= 0;
    double pcie = t->arch == TOPO_ARCH_HOPPER || t->arch == TOPO_ARCH_BLACKWELL
                      ? NCCL_PCIE_GEN5_X16_GBPS
                      : t->arch == TOPO_ARCH_AMPERE ? NCCL_PCIE_GEN5_X16_GBPS / 2
                                                    : NCCL_PCIE_GEN5_X16_GBPS / 4;
    double net = INFINITY;
    for (int x = 0; x < t->nnics; x++)
        if (t->nics[x].node == 0 && t->nics[x].bw_gbps < net)
            net = t->nics[x].bw_gbps;
    nccl_collnet_graphs(c, t->ranks_per_node, c->collnet_heads, nccl_gpu_nvlink(t),
                        fmin(net, pcie), c->nchannels);
}

static size_t add_estimates(char *s, size_t len, size_t cap, const nccl_choice *ch)
{
    int first = 1;
    for (int a = NCCL_NALGO - 1; a >= 0; a--)
        for (int p = 0; p < COST_NPROTO; p++) {
            double us = ch->table_us[a][p];
            if (us < 0 || len >= cap)
                continue;
            len += (size_t)snprintf(s + len, cap - len, "%s%s/%s %.1f", first ? "" : ", ",
                                    nccl_algo_name((nccl_algo)a), cost_proto_name((cost_proto)p),
                                    us);
            first = 0;
        }
    return len;
}

prog *bl_build_nccl(const topo *t, coll_kind k, const baseline_opts *o, baseline_stats *st,
                    tc_err *err)
{
    if (t->kind != TOPO_GPU) {
        tc_err_set(err, TC_INPUT, "nccl: %s is a chip/cluster device; NCCL runs on GPUs (use "
                   "ring, direct, butterfly, rsag or tree)", t->name);
        return NULL;
    }
    if (o->channels || o->chunks) {
        tc_err_set(err, TC_INPUT, "nccl chooses its channels and pipelining as NCCL does; "
                   "--channels and --chunks apply to ring, direct, butterfly, rsag and tree");
        return NULL;
    }
    long long bytes = o->size_bytes > 0 ? o->size_bytes : 1 << 20;
    int n = t->nranks, N = t->nnodes, capped = 0;
    char arch_note[96] = "";
    if (t->arch == TOPO_ARCH_UNKNOWN)
        snprintf(arch_note, sizeof arch_note, "; device.arch not given, NCCL's Volta constants");
    prog *p = NULL;
    const char *what;
    if (k == COLL_ALLTOALL && o->nccl_proto) {
        tc_err_set(err, TC_INPUT, "nccl: AllToAll is NCCL's point-to-point exchange, whose "
                   "protocol (LL up to 16 KiB per peer, else Simple) --proto does not set");
        return NULL;
    }
    if (k == COLL_ALLTOALL) {
        long long peer = bytes / n;
        cost_proto pr = nccl_p2p_proto(peer);
        long long chunk = nccl_p2p_chunk_bytes(N > 1, peer, pr);
        long long M = peer > chunk ? ceil_div(peer, chunk) : 1;
        p = build_within("direct", t, k, o, 1, M, st, &capped, err);
        if (!p)
            return NULL;
        snprintf(p->proto, sizeof p->proto, "%s", cost_proto_name(pr));
        snprintf(st->note, sizeof st->note, "nccl at %lld bytes: point-to-point to every peer, "
                 "%s, %lld-byte chunks (%d piece%s per peer%s)%s", bytes, cost_proto_name(pr),
                 chunk, st->chunks, st->chunks == 1 ? "" : "s",
                 capped ? ", fewer than NCCL's: the runtime's steps-per-tb limit" : "", arch_note);
        if (o->graph) {
            size_t len = strlen(st->note);
            snprintf(st->note + len, sizeof st->note - len, "; %s's channels are not used "
                     "(NCCL's AllToAll is point-to-point)", o->graph->label);
        }
        what = "p2p";
        snprintf(st->nccl.proto, sizeof st->nccl.proto, "%s", cost_proto_name(pr));
        st->nccl.channels = st->nccl.channels_max = 1;
        st->nccl.piece_bytes = chunk;
        st->nccl.estimate_us = -1;
    } else {
        int want = N > 1 ? nics_per_node(t) : SINGLE_NODE_RINGS;
        if (want < 1)
            want = 1;
        baseline_rings R;
        if (o->graph) {
            bl_graph_rings(t, o->graph, &R);
        } else if (baseline_find_rings_mode(t, want, BL_RINGS_NCCL, &R, err) != TC_OK) {
            tc_err_prefix(err, "nccl");
            return NULL;
        }
        nccl_comm c;
        memset(&c, 0, sizeof c);
        c.nranks = n;
        c.nnodes = N;
        c.arch = t->arch;
        c.nchannels = 2 * R.nrings;
        c.only_proto = o->nccl_proto;
        if (c.nchannels > MAX_CHANNELS)
            c.nchannels = MAX_CHANNELS;
        if (o->graph && o->graph->ring.speed_intra > 0 && o->graph->ring.speed_inter > 0) {
            /* NCCL's own per-channel figures (bwIntra, bwInter of the ring
             * graph), halved for the duplication as ring_bandwidths does */
            c.bw_intra = o->graph->ring.speed_intra / 2;
            c.bw_inter = o->graph->ring.speed_inter / 2;
        } else {
            ring_bandwidths(t, &R, &c.bw_intra, &c.bw_inter);
        }
        nvls_comm(t, k, &c);
        collnet_comm(t, k, &c);
        char nic_note[200] = "";
        if (o->graph)
            graph_nic_note(t, o->graph, &R, nic_note, sizeof nic_note);
        int nrings = R.nrings;
        baseline_rings_free(&R);
        nccl_choice ch;
        if (nccl_choose(&c, k, bytes, &ch) != 0) {
            /* only with one protocol forced (src/enqueue.cc:2052-2066) */
            tc_err_set(err, TC_INPUT, "nccl: NCCL offers no %s for %s on %s (NCCL_PROTO=%s "
                       "leaves it no algorithm); drop --proto", o->nccl_proto
                       ? cost_proto_name((cost_proto)(o->nccl_proto - 1)) : "protocol",
                       coll_name(k), t->name, o->nccl_proto
                       ? cost_proto_name((cost_proto)(o->nccl_proto - 1)) : "");
            return NULL;
        }
        /* What the output cannot hold, NCCL's best choice without it, said
         * in the note: MSCCL XML no switch operations, and MSCCL++'s glres
         * stores by multicast, so a ReduceScatter through the switch has no
         * plan either; NVLSTree (the switch inside each node, trees between
         * nodes) is written on two nodes only, as hier-nvls, whose rail
         * exchange moves there what NCCL's two trees move (docs/nvls.md
         * section 4); no output holds a reduction in the network, so
         * neither CollNet algorithm nor NVLS across nodes (which runs on
         * CollNet) */
        unsigned skip = 1u << NCCL_COLLNET_DIRECT | 1u << NCCL_COLLNET_CHAIN;
        if (!o->switch_ops || t->nnodes != 2)
            skip |= 1u << NCCL_NVLS_TREE;
        if (!o->switch_ops || k == COLL_REDUCESCATTER || t->nnodes > 1)
            skip |= 1u << NCCL_NVLS;
        char nvls_note[320] = "";
        nccl_algo picked = ch.algo;
        double picked_us = ch.time_us;
        if (skip & (1u << picked)) {
            int in_net = picked == NCCL_COLLNET_DIRECT || picked == NCCL_COLLNET_CHAIN ||
                         (picked == NCCL_NVLS && t->nnodes > 1);
            const char *cannot = in_net ? "no output here can express (MSCCL XML and MSCCL++ "
                                          "plans have no reduction in the network)"
                : picked == NCCL_NVLS
                ? (o->switch_ops ? "an MSCCL++ plan (no multimem reduce to one rank) cannot "
                                   "express" : "MSCCL XML cannot express")
                : !o->switch_ops ? "MSCCL XML cannot express (--target mscclpp writes it on "
                                   "two nodes)"
                : "taccl writes on two nodes only";
            if (nccl_choose_ex(&c, k, bytes, skip, &ch) != 0) {
                tc_err_set(err, TC_INPUT, "nccl: with --proto %s NCCL offers only %s for %s on "
                           "%s, which %s; drop --proto",
                           cost_proto_name((cost_proto)(o->nccl_proto - 1)),
                           nccl_algo_name(picked), coll_name(k), t->name, cannot);
                return NULL;
            }
            const char *name = picked == NCCL_COLLNET_DIRECT ? "CollNetDirect"
                             : picked == NCCL_COLLNET_CHAIN ? "CollNetChain"
                             : in_net ? "NVLS across nodes" : picked == NCCL_NVLS ? "NVLS"
                                                                                 : "NVLSTree";
            const char *how = in_net ? ": the network reduces (CollNet, SHARP)"
                : picked == NCCL_NVLS ? ""
                : ": the switch reduces and multicasts inside each node, trees between the "
                  "nodes";
            snprintf(nvls_note, sizeof nvls_note, "; NCCL would run %s (estimate %.1f us%s), "
                     "which %s: this is its best choice without %s%s", name, picked_us, how,
                     cannot, picked == NCCL_NVLS && !in_net ? "NVLS" : "it",
                     picked == NCCL_NVLS && !in_net && !o->switch_ops
                         ? " (--target mscclpp writes NVLS)" : "");
        }
        baseline_opts u = *o;
        u.ring_mode = BL_RINGS_NCCL;
        long long M;
        int K;
        if (ch.algo == NCCL_NVLS_TREE) {
            /* hier-nvls on NCCL's CTAs, in as many pieces (4, 2, 1) as
             * MSCCL++'s operations per threadblock allow */
            baseline_opts v = *o;
            v.channels = ch.nchannels < MPP_MAX_CHANNEL ? ch.nchannels : MPP_MAX_CHANNEL;
            v.switch_ops = 1;
            for (int P = 4; !p && P >= 1; P /= 2) {
                v.chunks = P;
                p = bl_build_nvls(t, k, &v, 1, st, err);
            }
            if (p)
                tc_err_clear(err);
            K = M = 1;
        } else if (ch.algo == NCCL_NVLS) {
            /* the NVLS data flow through the GPUs (rsag/direct), one piece:
             * the MSCCL++ writer replaces it by switch operations over
             * ch.nchannels threadblocks per rank (sched/mpp_nvls.c) */
            K = 1;
            M = 1;
            u.via = NULL;
            p = build_within(k == COLL_ALLREDUCE ? "rsag" : "direct", t, k, &u, K, M, st,
                             &capped, err);
            if (p)
                p->nvls_channels = ch.nchannels;
        } else if (ch.algo == NCCL_PAT) {
            /* the channels NCCL spreads the call over, each rank's share
             * of a channel in PAT's chunks (baseline_pat.c takes the
             * aggregation from the same rules) */
            K = ch.nchannels;
            long long chan = bytes / n / K;
            M = chan > ch.chunk_bytes ? ceil_div(chan, ch.chunk_bytes) : 1;
            p = build_within("pat", t, k, &u, K, M, st, &capped, err);
        } else if (ch.algo == NCCL_RING) {
            K = ch.nchannels;
            M = ceil_div(bytes, (long long)n * K * ch.slice_bytes);
            p = build_within("ring", t, k, &u, K, M, st, &capped, err);
        } else {
            K = ch.nchannels / 2 > 0 ? ch.nchannels / 2 : 1;   /* pairs of trees */
            M = ceil_div(bytes, 2LL * K * ch.slice_bytes);
            if (ch.proto == COST_LL128)     /* chunks of NCCL's size or less that */
                M = pow2_at_least(M);       /* split a power-of-two buffer evenly */
            p = build_within("tree", t, k, &u, K, M, st, &capped, err);
        }
        if (!p) {
            tc_err_prefix(err, "nccl");
            return NULL;
        }
        snprintf(p->proto, sizeof p->proto, "%s", cost_proto_name(ch.proto));
        char whence[160];
        if (o->graph)
            snprintf(whence, sizeof whence, "%d channel%s of %s%s, duplicated", nrings,
                     nrings == 1 ? "" : "s", o->graph->label,
                     ch.algo != NCCL_TREE || o->graph->tree.present ? ""
                                                                    : "; trees along its rings");
        else
            snprintf(whence, sizeof whence, "%d ring%s found, duplicated", nrings,
                     nrings == 1 ? "" : "s");
        char pat_note[200] = "";
        if (ch.algo == NCCL_PAT)    /* the builder's: dimensions, pieces, aggregation */
            snprintf(pat_note, sizeof pat_note, "; %.190s", st->note);
        size_t len;
        if (ch.algo == NCCL_NVLS_TREE) {
            /* st is the plan's (bl_build_nvls) */
            len = (size_t)snprintf(
                st->note, sizeof st->note,
                "nccl at %lld bytes: nvlstree Simple (the switch reduces and multicasts inside "
                "each node, trees between the two nodes), NCCL's %d CTAs, a slice each per "
                "rank (a producer and a consumer threadblock a slice) in %d pieces, written as "
                "hier-nvls: the rails' reduce-scatter and all-gather move what the two trees "
                "move, a node's sum lands in a pair of ranks (docs/nvls.md section 4); NCCL's "
                "estimates (us): ", bytes,
                p->nvls_channels, p->nvls_pieces);
        } else if (ch.algo == NCCL_NVLS) {
            /* what the plan holds (sched/mpp_nvls.c), not the stand-in steps */
            st->channels = st->nchannels = ch.nchannels;
            st->chunks = 1;
            st->max_tbs_per_rank = ch.nchannels;
            st->tbs = (long long)n * ch.nchannels;
            st->max_steps_per_tb = MPP_NVLS_OPS_PER_TB;
            st->steps = st->tbs * MPP_NVLS_OPS_PER_TB;
            len = (size_t)snprintf(
                st->note, sizeof st->note,
                "nccl at %lld bytes: nvls Simple (the switch reduces and multicasts), %d "
                "threadblocks per rank (NCCL's nvlsChannels), written as an MSCCL++ plan of "
                "switch operations; NCCL's estimates (us): ", bytes, ch.nchannels);
        } else
            len = (size_t)snprintf(
                st->note, sizeof st->note,
                "nccl at %lld bytes: %s %s%s, %d of %d channels (%s), "
                "%lld-byte slices, %d piece%s per channel%s%s%s; NCCL's estimates (us): ",
                bytes, nccl_algo_name(ch.algo), cost_proto_name(ch.proto),
                o->nccl_proto ? " (--proto: NCCL_PROTO)" : "", ch.nchannels, c.nchannels,
                whence, ch.slice_bytes, st->chunks, st->chunks == 1 ? "" : "s",
                capped ? " (fewer than NCCL's: the runtime's steps-per-tb limit)" : "",
                nic_note, pat_note);
        len = add_estimates(st->note, len, sizeof st->note, &ch);
        if (len < sizeof st->note)
            snprintf(st->note + len, sizeof st->note - len, "%s%s", nvls_note, arch_note);
        what = nccl_algo_name(ch.algo);
        snprintf(st->nccl.proto, sizeof st->nccl.proto, "%s", cost_proto_name(ch.proto));
        st->nccl.channels = ch.nchannels;
        st->nccl.channels_max = c.nchannels;
        st->nccl.rings = nrings;
        st->nccl.piece_bytes = ch.slice_bytes;
        st->nccl.estimate_us = ch.time_us;
        st->nccl.bw_intra = c.bw_intra;
        st->nccl.bw_inter = c.bw_inter;
        if (picked != ch.algo) {
            snprintf(st->nccl.would_run, sizeof st->nccl.would_run, "%s", nccl_algo_name(picked));
            st->nccl.would_run_us = picked_us;
        }
    }
    snprintf(st->nccl.algo, sizeof st->nccl.algo, "%s", what);
    snprintf(p->name, sizeof p->name, "taccl baseline nccl %s: %s %s, %d ranks on %s, %d "
             "channel%s x %d chunk%s, at %lld bytes", coll_name(k), what, p->proto, n, t->name,
             st->channels, st->channels == 1 ? "" : "s", st->chunks, st->chunks == 1 ? "" : "s",
             bytes);
    xml_fit_value(p->name); /* the topology's name may take more than the runtimes' 255 bytes */
    return p;
}
