/* cost.c — the device's cost model (rules in cost.h).
 *
 * Resource numbering is derived from the topology alone, so every part
 * that numbers resources the same way agrees on which transfers contend;
 * the lane pool is the executor's first-come-first-served rule, kept here
 * so that the stages that plan for the executor apply the very same one. */
#include "cost.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "topo_nccl.h"

/* ------------------------------------------------------------ resources */

static int members(const topo_switch *sw)
{
    return sw->nranks > 0 ? sw->nranks : 0;
}

/* Switch members before switch sw (all of them at sw == nswitches). */
static int members_before(const topo *t, int sw)
{
    int m = 0;
    for (int s = 0; s < sw && s < t->nswitches; s++)
        m += members(&t->switches[s]);
    return m;
}

static int nic_base(const topo *t)
{
    return t->nlinks + 2 * members_before(t, t->nswitches);
}

int cost_nres(const topo *t)
{
    return nic_base(t) + 2 * t->nnics;
}

int cost_res_lanes(const topo *t, int r)
{
    if (r < 0 || r >= cost_nres(t))
        return 0;
    if (r < t->nlinks)
        return t->links[r].mult > 1 ? t->links[r].mult : 1;
    return 1;
}

/* A switch-port resource: its switch, member index and direction (1 in). */
static int decode_port(const topo *t, int r, int *sw, int *member, int *in)
{
    int k = r - t->nlinks;
    for (int s = 0; s < t->nswitches; s++) {
        int m = members(&t->switches[s]);
        if (k < 2 * m) {
            *sw = s;
            *member = k / 2;
            *in = k % 2;
            return 1;
        }
        k -= 2 * m;
    }
    return 0;
}

cost_res_kind cost_res_kind_of(const topo *t, int r)
{
    if (r < t->nlinks)
        return COST_LINK;
    int sw, m, in;
    if (r < nic_base(t) && decode_port(t, r, &sw, &m, &in))
        return in ? COST_PORT_IN : COST_PORT_OUT;
    return (r - nic_base(t)) % 2 ? COST_NIC_IN : COST_NIC_OUT;
}

void cost_res_name(const topo *t, int r, char *buf, size_t n)
{
    if (r < 0 || r >= cost_nres(t)) {
        snprintf(buf, n, "resource %d (none)", r);
        return;
    }
    if (r < t->nlinks) {
        snprintf(buf, n, "link %d->%d", t->links[r].src, t->links[r].dst);
        return;
    }
    int sw, m, in;
    if (r < nic_base(t) && decode_port(t, r, &sw, &m, &in)) {
        snprintf(buf, n, "switch %d %s port of rank %d", sw, in ? "in" : "out",
                 t->switches[sw].ranks[m]);
        return;
    }
    int k = r - nic_base(t);
    snprintf(buf, n, "NIC %d (node %d) %s", k / 2, t->nics[k / 2].node,
             k % 2 ? "ingress" : "egress");
}

int cost_port_res(const topo *t, int sw, int member, int in)
{
    assert(sw >= 0 && sw < t->nswitches && member >= 0 && member < members(&t->switches[sw]));
    return t->nlinks + 2 * members_before(t, sw) + 2 * member + (in ? 1 : 0);
}

int cost_nic_res(const topo *t, int x, int in)
{
    assert(x >= 0 && x < t->nnics);
    return nic_base(t) + 2 * x + (in ? 1 : 0);
}

static int member_of(const topo_switch *sw, int rank)
{
    for (int i = 0; i < sw->nranks; i++)
        if (sw->ranks[i] == rank)
            return i;
    return -1;
}

int cost_route_res(const topo *t, const topo_route *rt, int a, int b, int res[2])
{
    switch (rt->kind) {
    case ROUTE_LINK:
        if (rt->link < 0 || rt->link >= t->nlinks)
            return 0;
        res[0] = rt->link;
        return 1;
    case ROUTE_SWITCH: {
        if (rt->sw < 0 || rt->sw >= t->nswitches)
            return 0;
        const topo_switch *sw = &t->switches[rt->sw];
        int ma = member_of(sw, a), mb = member_of(sw, b);
        if (ma < 0 || mb < 0)
            return 0;
        res[0] = cost_port_res(t, rt->sw, ma, 0);
        res[1] = cost_port_res(t, rt->sw, mb, 1);
        return 2;
    }
    case ROUTE_NIC:
        if (rt->nic_src < 0 || rt->nic_src >= t->nnics || rt->nic_dst < 0 ||
            rt->nic_dst >= t->nnics)
            return 0;
        res[0] = cost_nic_res(t, rt->nic_src, 0);
        res[1] = cost_nic_res(t, rt->nic_dst, 1);
        return 2;
    default:
        return 0;
    }
}

int cost_hop_res(const topo *t, int a, int b, int res[2])
{
    topo_route rt = topo_route_of(t, a, b);
    return cost_route_res(t, &rt, a, b, res);
}

/* ------------------------------------------------------------ costs */

double cost_hop_us(const topo_route *rt, double bytes)
{
    if (!rt || rt->kind == ROUTE_NONE || !(rt->bw_gbps > 0))
        return INFINITY;
    return rt->alpha_us + bytes / (rt->bw_gbps * 1e3) + rt->lat_us;
}

double cost_hold_us(const topo *t, const topo_route *rt, double bytes)
{
    double us = cost_hop_us(rt, bytes);
    if (!isfinite(us))
        return us;
    return us - rt->lat_us - (t && t->alpha_delay ? rt->alpha_us : 0);
}

int cost_delayed(const topo *t, const topo_route *rt)
{
    return (t && t->alpha_delay) || (rt && rt->lat_us > 0);
}

/* ------------------------------------------------------------ protocols */

/* NCCL's per-step ring latency in µs, by hardware (NVLink, network) and
 * protocol (LL, LL128, Simple), and its ring bandwidth efficiency per
 * protocol: src/graph/tuning.cc (hwLatencies, Ring column; ring LL busBw
 * x 0.5, ring LL128 x 0.92). */
enum { HW_NVLINK, HW_NET, HW_COUNT };
static const double nccl_ring_lat[HW_COUNT][COST_NPROTO] = {
    [HW_NVLINK] = {[COST_SIMPLE] = 3.4, [COST_LL] = 0.6, [COST_LL128] = 1.9},
    [HW_NET] = {[COST_SIMPLE] = 14.0, [COST_LL] = 2.7, [COST_LL128] = 4.0},
};
static const double nccl_ring_bw[COST_NPROTO] = {
    [COST_SIMPLE] = 1.0, [COST_LL] = 0.5, [COST_LL128] = 0.92,
};
static const char *const proto_names[COST_NPROTO] = {"Simple", "LL", "LL128"};

int cost_proto_parse(const char *s, cost_proto *out)
{
    for (int p = 0; s && p < COST_NPROTO; p++)
        if (strcmp(s, proto_names[p]) == 0) {
            *out = (cost_proto)p;
            return 1;
        }
    return 0;
}

const char *cost_proto_name(cost_proto p)
{
    return p >= 0 && p < COST_NPROTO ? proto_names[p] : "?";
}

long long cost_proto_steps_bytes(cost_proto p, int steps)
{
    if (p == COST_LL)
        return 8LL * 512 * 16 * steps / 2;
    if (p == COST_LL128)
        return 120LL * 640 * 8 * steps / 16 * 15;
    return (1LL << 22) / COST_FIFO_SLOTS * steps;
}

long long cost_proto_tile_bytes(cost_proto p)
{
    enum { MSCCL_CHUNKSTEPS = 4 };
    return cost_proto_steps_bytes(p, p == COST_LL || p == COST_LL128 ? 1 : MSCCL_CHUNKSTEPS);
}

/* topo_nccl's protocol index of p. */
static topo_nccl_proto nccl_proto(cost_proto p)
{
    return p == COST_LL ? TOPO_NCCL_LL : p == COST_LL128 ? TOPO_NCCL_LL128 : TOPO_NCCL_SIMPLE;
}

topo_route cost_proto_route(const topo *t, topo_route rt, cost_proto p)
{
    if (p < 0 || p >= COST_NPROTO || t->kind == TOPO_CHIP || rt.kind == ROUTE_NONE ||
        rt.kind == ROUTE_SELF)
        return rt;
    int hw = rt.kind == ROUTE_NIC ? HW_NET : HW_NVLINK;
    if (t->rt_latency != TOPO_RTLAT_NONE)
        rt.lat_us = topo_nccl_latency(hw == HW_NET ? TOPO_NCCL_HW_NET : TOPO_NCCL_HW_NVLINK,
                                      nccl_proto(p), t->rt_latency == TOPO_RTLAT_RCCL);
    if (p == COST_SIMPLE)
        return rt;
    rt.alpha_us *= nccl_ring_lat[hw][p] / nccl_ring_lat[hw][COST_SIMPLE];
    rt.bw_gbps *= nccl_ring_bw[p];
    return rt;
}

double cost_call_us(const topo *t, cost_proto p)
{
    if (!t || t->kind == TOPO_CHIP || t->rt_latency == TOPO_RTLAT_NONE || p < 0 ||
        p >= COST_NPROTO)
        return 0;
    return topo_nccl_base_latency(nccl_proto(p));
}

double cost_switch_call_us(const topo *t, int several_nodes)
{
    if (t && t->kind == TOPO_GPU && t->rt_latency == TOPO_RTLAT_NCCL)
        return topo_nccl_nvls_latency(several_nodes);
    return cost_call_us(t, COST_SIMPLE);
}

double cost_tile_gbps(const topo *t, double alpha_us, double bw_gbps, int nic)
{
    if (!(bw_gbps > 0) || !(alpha_us > 0) || t->alpha_delay || t->kind == TOPO_CHIP)
        return bw_gbps;
    int hw = nic ? HW_NET : HW_NVLINK;
    double least = INFINITY;        /* us per byte */
    for (int p = 0; p < COST_NPROTO; p++) {
        double a = alpha_us * nccl_ring_lat[hw][p] / nccl_ring_lat[hw][COST_SIMPLE];
        double b = bw_gbps * nccl_ring_bw[p] * 1e3;
        double c = a / (double)cost_proto_tile_bytes((cost_proto)p) + 1.0 / b;
        if (c < least)
            least = c;
    }
    return 1.0 / least / 1e3;
}

double cost_alpha_floor(const topo *t, double alpha_us, int nic)
{
    if (t->kind == TOPO_CHIP)
        return alpha_us;
    int hw = nic ? HW_NET : HW_NVLINK;
    double lo = 1.0;
    for (int p = 0; p < COST_NPROTO; p++) {
        double r = nccl_ring_lat[hw][p] / nccl_ring_lat[hw][COST_SIMPLE];
        if (r < lo)
            lo = r;
    }
    return alpha_us * lo;
}

static double local_us(double bytes, double gbps)
{
    return gbps > 0 ? bytes / (gbps * 1e3) : 0.0;
}

double cost_copy_us(const topo *t, double bytes)
{
    return local_us(bytes, t->copy_gbps);
}

double cost_reduce_us(const topo *t, double bytes)
{
    return local_us(bytes, t->reduce_gbps);
}

long long cost_reduce_slice_bytes(cost_proto p)
{
    enum { MSCCL_SLICESTEPS = 2 };
    return cost_proto_steps_bytes(p, p == COST_LL || p == COST_LL128 ? 1 : MSCCL_SLICESTEPS);
}

double cost_reduce_end_us(const topo *t, cost_proto p, double bw_gbps, double bytes,
                          double landed, double ready)
{
    double slice = (double)cost_reduce_slice_bytes(p);
    double first = landed - local_us(bytes, bw_gbps);
    double from = first > ready ? first : ready;
    double streamed = from + cost_reduce_us(t, bytes);
    double tail = landed + cost_reduce_us(t, bytes < slice ? bytes : slice);
    return streamed > tail ? streamed : tail;
}

double cost_reduce_tail_us(const topo *t, cost_proto p, double bw_gbps, double bytes)
{
    return cost_reduce_end_us(t, p, bw_gbps, bytes, 0.0, -INFINITY);
}

/* ------------------------------------------------------------ lanes */

struct cost_lanes {
    int nres;
    int *lane0;         /* [nres + 1]: first lane of each resource */
    double *free_at;    /* [lane0[nres]] */
};

cost_lanes *cost_lanes_new(const topo *t)
{
    cost_lanes *L = xcalloc(1, sizeof *L);
    L->nres = cost_nres(t);
    L->lane0 = xmalloc(((size_t)L->nres + 1) * sizeof *L->lane0);
    int lanes = 0;
    for (int r = 0; r < L->nres; r++) {
        L->lane0[r] = lanes;
        lanes += cost_res_lanes(t, r);
    }
    L->lane0[L->nres] = lanes;
    L->free_at = xcalloc((size_t)lanes + 1, sizeof *L->free_at);
    return L;
}

void cost_lanes_free(cost_lanes *L)
{
    if (!L)
        return;
    free(L->lane0);
    free(L->free_at);
    free(L);
}

void cost_lanes_reset(cost_lanes *L)
{
    for (int l = 0; l < L->lane0[L->nres]; l++)
        L->free_at[l] = 0;
}

int cost_lanes_pick(const cost_lanes *L, int r, double *free_at)
{
    assert(r >= 0 && r < L->nres);
    int b = L->lane0[r], best = b;
    for (int l = b + 1; l < L->lane0[r + 1]; l++)
        if (L->free_at[l] < L->free_at[best])
            best = l;
    if (free_at)
        *free_at = L->free_at[best];
    return best - b;
}

double cost_lanes_start(const cost_lanes *L, const int *res, int n, double ready, int *lane)
{
    double start = ready;
    for (int k = 0; k < n; k++) {
        double f;
        int l = cost_lanes_pick(L, res[k], &f);
        if (lane)
            lane[k] = l;
        if (f > start)
            start = f;
    }
    return start;
}

int cost_must_wait(const topo *t, double start, double now)
{
    return t && !t->arb_reserve && start > now;
}

int cost_lanes_busy(const cost_lanes *L, const int *res, int n, double now)
{
    for (int k = 0; k < n; k++) {
        double f;
        cost_lanes_pick(L, res[k], &f);
        if (f > now)
            return res[k];
    }
    return -1;
}

void cost_lanes_hold(cost_lanes *L, const int *res, const int *lane, int n, double end)
{
    for (int k = 0; k < n; k++) {
        assert(res[k] >= 0 && res[k] < L->nres);
        assert(lane[k] >= 0 && L->lane0[res[k]] + lane[k] < L->lane0[res[k] + 1]);
        L->free_at[L->lane0[res[k]] + lane[k]] = end;
    }
}
