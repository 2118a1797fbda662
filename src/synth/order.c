/* order.c — stage 2: greedy list scheduling of a routing under the
 * executor's timing model (contract in order.h).
 *
 * A routing is read as a forest: for every send, the send that brought its
 * chunk to its source (none at the origin).  Each send gets two static
 * priorities from that forest — the cost still ahead of it (its own hop
 * plus the longest cost path below it) and the cost behind it (from the
 * origin to its source) — and the scheduler then places one candidate at a
 * time, exactly as the executor allocates lanes.
 *
 * The executor serves every resource first come first served by the time
 * a transfer asks for it (ties: the lower rank), and the lowering can fix
 * only each rank's own order (its sends through one out port or NIC are
 * chained by dependencies): a switch in port or a NIC shared by several
 * ranks takes transfers in the order they ask.  So candidates are placed
 * in request order: a send asks once its chunk is at its source and its
 * sender's previous send through the same out resource has freed it (at
 * its end, or after its bytes where alpha is a delay: cost_hold_us); the
 * earliest request goes next, then the lowest sender, and only among one
 * sender's simultaneous requests does the policy (priority or earliest
 * start) choose.  The times written are then the times the executor
 * produces for the lowered program.
 *
 * Speed (a million sends for AllGather on 1024 ranks): the forest is
 * linked by a radix sort of the sends by chunk; the priorities become
 * integer ranks once (the scheduler numbers the sends by them, and keeps
 * what one pick reads of a send in one record); the picker (below) finds
 * each next send in logarithmic time. */
#include "order.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lp/lp.h"
#include "../model/cost.h"
#include "../util/heap.h"
#include "../util/mem.h"

/* ------------------------------------------------------------ resources */

void order_opts_init(order_opts *o)
{
    memset(o, 0, sizeof *o);
    o->policy = ORDER_BEST;
}

/* ------------------------------------------------------------ the forest */

typedef struct {
    int n;              /* sends */
    int *parent;        /* send that brought the chunk to src, -1 at the origin */
    int *src;           /* sender of each send */
    int *cstart, *child;    /* children (CSR) */
    int *depth;
    int *byd;           /* sends by depth, ascending (stable) */
    double *cost;       /* [n] the hop, alpha and bytes: when its chunk lands */
    double *hold;       /* [n] how long it holds its resources and its sender:
                           cost, or the bytes alone where alpha is a delay */
    int *nres;
    int *res;           /* [2n] */
} forest;

typedef struct {
    uint64_t key;
    int i;
} keyed64;

/* The bits of a double as an unsigned integer in the same order. */
static uint64_t order_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (1ULL << 63);
}

/* Sort a[0 .. n) by key, stably (LSD radix sort, 11 bits a pass; a pass
 * on which all keys agree is skipped).  tmp: room for n. */
static void radix_sort(keyed64 *a, keyed64 *tmp, int n)
{
    enum { BITS = 11, SIZE = 1 << BITS };
    int *cnt = xmalloc(((size_t)SIZE + 1) * sizeof *cnt);
    for (int shift = 0; shift < 64; shift += BITS) {
        memset(cnt, 0, ((size_t)SIZE + 1) * sizeof *cnt);
        for (int k = 0; k < n; k++)
            cnt[((a[k].key >> shift) & (SIZE - 1)) + 1]++;
        if (n == 0 || cnt[((a[0].key >> shift) & (SIZE - 1)) + 1] == n)
            continue;
        for (int d = 0; d < SIZE; d++)
            cnt[d + 1] += cnt[d];
        for (int k = 0; k < n; k++)
            tmp[cnt[(a[k].key >> shift) & (SIZE - 1)]++] = a[k];
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
    free(cnt);
}

static void forest_free(forest *f)
{
    free(f->parent);
    free(f->src);
    free(f->cstart);
    free(f->child);
    free(f->depth);
    free(f->byd);
    free(f->cost);
    free(f->hold);
    free(f->nres);
    free(f->res);
    memset(f, 0, sizeof *f);
}

static int check_send_fields(const algo *a, const topo *t, int i, tc_err *err)
{
    const algo_send *s = &a->sends[i];
    if (s->origin < 0 || s->origin >= a->nranks || s->index < 0 ||
        s->index >= a->chunks_per_rank)
        return tc_err_set(err, TC_INPUT, "send %d: chunk (%d, %d) is outside %d ranks x %d "
                          "chunks", i, s->origin, s->index, a->nranks, a->chunks_per_rank);
    if (s->src < 0 || s->src >= t->nranks || s->dst < 0 || s->dst >= t->nranks)
        return tc_err_set(err, TC_INPUT, "send %d: %d -> %d is outside the %d ranks of "
                          "topology %s", i, s->src, s->dst, t->nranks, t->name);
    if (s->src == s->dst)
        return tc_err_set(err, TC_INPUT, "send %d: chunk (%d, %d) sent from rank %d to "
                          "itself", i, s->origin, s->index, s->src);
    if (s->dst == s->origin)
        return tc_err_set(err, TC_INPUT, "send %d: chunk (%d, %d) sent back to its origin "
                          "%d", i, s->origin, s->index, s->origin);
    return TC_OK;
}

/* Depths by walking up the parents; a walk that meets itself is a cycle. */
static int forest_depths(forest *f, const algo *a, tc_err *err)
{
    int n = f->n;
    int *state = xcalloc((size_t)n, sizeof *state);   /* 0 new, 1 on walk, 2 done */
    int *stack = xmalloc((size_t)n * sizeof *stack);
    int rc = TC_OK;
    for (int i = 0; i < n && rc == TC_OK; i++) {
        int top = 0, j = i;
        while (j >= 0 && state[j] == 0) {
            state[j] = 1;
            stack[top++] = j;
            j = f->parent[j];
        }
        if (j >= 0 && state[j] == 1) {
            const algo_send *s = &a->sends[j];
            rc = tc_err_set(err, TC_INPUT, "send %d: chunk (%d, %d) goes round a cycle that "
                            "never reaches its origin %d", j, s->origin, s->index, s->origin);
            break;
        }
        int d = j < 0 ? -1 : f->depth[j];
        while (top > 0) {
            int k = stack[--top];
            f->depth[k] = ++d;
            state[k] = 2;
        }
    }
    free(state);
    free(stack);
    return rc;
}

static void forest_order(forest *f)
{
    int n = f->n, maxd = 0;
    for (int i = 0; i < n; i++)
        if (f->depth[i] > maxd)
            maxd = f->depth[i];
    int *cnt = xcalloc((size_t)maxd + 2, sizeof *cnt);
    for (int i = 0; i < n; i++)
        cnt[f->depth[i] + 1]++;
    for (int d = 0; d <= maxd; d++)
        cnt[d + 1] += cnt[d];
    for (int i = 0; i < n; i++)
        f->byd[cnt[f->depth[i]]++] = i;
    free(cnt);
    /* children, each list in input order */
    for (int i = 0; i < n; i++)
        if (f->parent[i] >= 0)
            f->cstart[f->parent[i] + 1]++;
    for (int i = 0; i < n; i++)
        f->cstart[i + 1] += f->cstart[i];
    int *fill = xmalloc((size_t)n * sizeof *fill);
    memcpy(fill, f->cstart, (size_t)n * sizeof *fill);
    for (int i = 0; i < n; i++)
        if (f->parent[i] >= 0)
            f->child[fill[f->parent[i]]++] = i;
    free(fill);
}

/* f->parent: for every send, the send that brought its chunk to its
 * source (-1 at the origin).  The sends are grouped by chunk (a radix
 * sort, stable), each chunk's receivers found in a table of ranks.
 * TC_INPUT for a rank receiving a chunk twice (the first chunk, then
 * receiver, then sends, in that order), else for a send forwarding a chunk
 * its sender never receives (the first such send). */
static int link_parents(const algo *a, const topo *t, forest *f, tc_err *err)
{
    int n = f->n, dup = -1, first = -1, orphan = -1;
    keyed64 *k = xmalloc(((size_t)n + 1) * sizeof *k), *tmp = xmalloc(((size_t)n + 1) * sizeof *tmp);
    for (int i = 0; i < n; i++)
        k[i] = (keyed64){(uint64_t)a->sends[i].origin * (uint64_t)a->chunks_per_rank +
                             (uint64_t)a->sends[i].index, i};
    radix_sort(k, tmp, n);
    int *who = xmalloc(((size_t)t->nranks + 1) * sizeof *who);
    int *stamp = xmalloc(((size_t)t->nranks + 1) * sizeof *stamp);  /* chunk's first place in k */
    for (int v = 0; v < t->nranks; v++)
        stamp[v] = -1;
    for (int lo = 0, hi; lo < n && dup < 0; lo = hi) {
        for (hi = lo; hi < n && k[hi].key == k[lo].key; hi++) {
            int j = k[hi].i, d = a->sends[j].dst;
            if (stamp[d] != lo) {
                stamp[d] = lo;
                who[d] = j;
            } else if (dup < 0 || d < a->sends[dup].dst) {
                first = who[d];
                dup = j;
            }
        }
        for (int q = lo; q < hi; q++) {
            const algo_send *s = &a->sends[k[q].i];
            int p = s->src == s->origin ? -1 : stamp[s->src] == lo ? who[s->src] : -2;
            f->parent[k[q].i] = p;
            if (p == -2 && (orphan < 0 || k[q].i < orphan))
                orphan = k[q].i;
        }
    }
    free(k);
    free(tmp);
    free(who);
    free(stamp);
    if (dup >= 0) {
        const algo_send *s = &a->sends[dup];
        return tc_err_set(err, TC_INPUT, "sends %d and %d: rank %d receives chunk (%d, %d) "
                          "twice", first, dup, s->dst, s->origin, s->index);
    }
    if (orphan >= 0) {
        const algo_send *s = &a->sends[orphan];
        return tc_err_set(err, TC_INPUT, "send %d: rank %d forwards chunk (%d, %d), which it "
                          "never receives", orphan, s->src, s->origin, s->index);
    }
    return TC_OK;
}

/* Each send's sender, cost and resources, worked out once per (sender,
 * receiver) pair (the sends sorted by pair): a topology's route lookup
 * costs up to its number of switches.  TC_INPUT for the first send (in
 * input order) with a field out of range or no route. */
static int hop_routes(const algo *a, const topo *t, double bytes, forest *f, tc_err *err)
{
    int n = f->n, bad = n;      /* the first send with a field out of range */
    for (int i = 0; i < n && bad == n; i++)
        if (check_send_fields(a, t, i, NULL) != TC_OK)
            bad = i;
    keyed64 *k = xmalloc(((size_t)bad + 1) * sizeof *k), *tmp = xmalloc(((size_t)bad + 1) * sizeof *tmp);
    for (int i = 0; i < bad; i++)
        k[i] = (keyed64){(uint64_t)a->sends[i].src * (uint64_t)t->nranks +
                             (uint64_t)a->sends[i].dst, i};
    radix_sort(k, tmp, bad);
    for (int q = 0; q < bad; q++) {
        int i = k[q].i, p = q > 0 && k[q].key == k[q - 1].key ? k[q - 1].i : -1;
        const algo_send *s = &a->sends[i];
        f->src[i] = s->src;
        if (p >= 0) {
            f->cost[i] = f->cost[p];
            f->hold[i] = f->hold[p];
            f->nres[i] = f->nres[p];
            f->res[2 * i] = f->res[2 * p];
            f->res[2 * i + 1] = f->res[2 * p + 1];
            continue;
        }
        topo_route rt = topo_route_of(t, s->src, s->dst);
        f->cost[i] = cost_hop_us(&rt, bytes);
        f->hold[i] = cost_hold_us(t, &rt, bytes);
        f->res[2 * i + 1] = -1;
        f->nres[i] = cost_route_res(t, &rt, s->src, s->dst, &f->res[2 * i]);
    }
    free(k);
    free(tmp);
    for (int i = 0; i < bad; i++)
        if (f->nres[i] == 0 || !isfinite(f->cost[i]))
            return tc_err_set(err, TC_INPUT, "send %d: no route from rank %d to rank %d in "
                              "topology %s", i, a->sends[i].src, a->sends[i].dst, t->name);
    return bad < n ? check_send_fields(a, t, bad, err) : TC_OK;
}

static int forest_build(const algo *a, const topo *t, double bytes, forest *f, tc_err *err)
{
    memset(f, 0, sizeof *f);
    if (!a || !t)
        return tc_err_set(err, TC_INPUT, "order: no %s given", a ? "topology" : "routing");
    if (!(bytes > 0) || !isfinite(bytes))
        return tc_err_set(err, TC_INPUT, "order: chunk size must be positive, got %g bytes",
                          bytes);
    if (a->nranks > t->nranks)
        return tc_err_set(err, TC_INPUT, "order: the algorithm has %d ranks, topology %s has "
                          "%d", a->nranks, t->name, t->nranks);
    int n = a->nsends;
    f->n = n;
    f->parent = xmalloc((size_t)n * sizeof *f->parent);
    f->src = xmalloc((size_t)n * sizeof *f->src);
    f->cstart = xcalloc((size_t)n + 1, sizeof *f->cstart);
    f->child = xmalloc((size_t)n * sizeof *f->child);
    f->depth = xmalloc((size_t)n * sizeof *f->depth);
    f->byd = xmalloc((size_t)n * sizeof *f->byd);
    f->cost = xmalloc((size_t)n * sizeof *f->cost);
    f->hold = xmalloc((size_t)n * sizeof *f->hold);
    f->nres = xmalloc((size_t)n * sizeof *f->nres);
    f->res = xmalloc((size_t)2 * n * sizeof *f->res);
    int rc = hop_routes(a, t, bytes, f, err);
    if (rc == TC_OK)
        rc = link_parents(a, t, f, err);
    if (rc == TC_OK && (rc = forest_depths(f, a, err)) == TC_OK)
        forest_order(f);
    if (rc != TC_OK)
        forest_free(f);
    return rc;
}

/* ------------------------------------------------------------ scheduling */

static int feq(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
}

/* One send as the scheduler reads it.  Nodes are numbered by RANK, the
 * order of the policies' static keys (longest remaining first, then least
 * travelled, then input order), so that candidates are kept ordered by
 * those keys as plain integers; all a pick reads of a send is here. */
typedef struct {
    double cost, hold;  /* until it lands; until it frees its resources */
    int res[2], nres;
    int grp, bkt;       /* its out group and bucket (see picker) */
    int chain;          /* NIC-egress chain (sender, NIC), numbered among those the
                           sends use; -1 when its out resource is its sender's
                           alone (a link, a switch port) */
    int sclass;         /* class of (remaining, travelled), best first: nodes whose
                           two keys are equal within the tolerance share one */
    int send;           /* its index in the routing */
    int kid0, kid1;     /* its children: kids[kid0 .. kid1) */
} snode;

/* A child as its parent's pick reads it (no look at its node). */
typedef struct {
    int r, grp, bkt;
} kidref;

/* An out group and a bucket (see picker): what they are, and what they
 * hold during a run, side by side. */
typedef struct {
    int src;            /* the sender */
    int pstart;         /* room for its pending candidates: pend[pstart ..] */
    int bkt0;           /* its buckets: bkt0 .., listed in act[bkt0 ..] when they
                           hold released candidates */
    int plen, alen;     /* pending candidates; buckets holding released ones */
    int hpos;           /* place in the heap of groups, -1 when not in it */
} sgroup;

typedef struct {
    int res[2], nres;   /* the resources its sends take */
    int start;          /* room for its released candidates: bh[start ..] */
    int len, apos;      /* released candidates; place in its group's act list */
} sbucket;

typedef struct {
    const forest *f;
    const topo *t;
    int n, nres, nchains, ngroups, nbuckets, nkids;
    snode *node;        /* [n] by rank */
    kidref *kids;       /* [nkids] children, by parent */
    sgroup *group;      /* [ngroups] as a run starts */
    sbucket *bucket;    /* [nbuckets] as a run starts */
} sched_ctx;

typedef struct {
    double *t_send, *t_arrive;
    int *lane;          /* [2n] */
    int *seq;           /* scheduling order */
    double makespan;
    int stopped;        /* left unfinished on a stop request (lp.h) */
} sched_run;

/* ---- the static keys, as ranks */

/* cls[i]: the class of v[i] among v[0 .. n), numbered in ascending value;
 * values equal within the tolerance (feq) share a class.  Returns the
 * number of classes. */
static int value_classes(const double *v, int n, int *cls)
{
    keyed64 *s = xmalloc(((size_t)n + 1) * sizeof *s);
    keyed64 *tmp = xmalloc(((size_t)n + 1) * sizeof *tmp);
    for (int i = 0; i < n; i++)
        s[i] = (keyed64){order_bits(v[i]), i};
    radix_sort(s, tmp, n);
    int k = -1;
    for (int j = 0; j < n; j++) {
        if (j == 0 || !feq(v[s[j].i], v[s[j - 1].i]))
            k++;
        cls[s[j].i] = k;
    }
    free(s);
    free(tmp);
    return k + 1;
}

/* Stable counting sort of in[0 .. n) by key[] (0 .. m) into out. */
static void sort_by_key(const int *in, int n, const int *key, int m, int *out)
{
    int *cnt = xcalloc((size_t)m + 2, sizeof *cnt);
    for (int k = 0; k < n; k++)
        cnt[key[in[k]] + 1]++;
    for (int q = 0; q < m; q++)
        cnt[q + 1] += cnt[q];
    for (int k = 0; k < n; k++)
        out[cnt[key[in[k]]]++] = in[k];
    free(cnt);
}

/* The two priorities of every send: the cost behind it (from the origin
 * to its source) and the cost still ahead (its hop and the longest cost
 * path below it). */
static void priorities(const forest *f, double *remaining, double *travelled)
{
    int n = f->n;
    for (int k = 0; k < n; k++) {
        int i = f->byd[k], p = f->parent[i];
        travelled[i] = p < 0 ? 0 : travelled[p] + f->cost[p];
    }
    for (int k = n - 1; k >= 0; k--) {
        int i = f->byd[k];
        double below = 0;
        for (int j = f->cstart[i]; j < f->cstart[i + 1]; j++)
            if (remaining[f->child[j]] > below)
                below = remaining[f->child[j]];
        remaining[i] = f->cost[i] + below;
    }
}

/* send[r]: the send of rank r; sclass[i]: the class of send i. */
static void rank_sends(const forest *f, int *send, int *sclass)
{
    int n = f->n;
    double *remaining = xcalloc((size_t)n + 1, sizeof *remaining);
    double *travelled = xcalloc((size_t)n + 1, sizeof *travelled);
    priorities(f, remaining, travelled);
    int *rem = xmalloc(((size_t)n + 1) * sizeof *rem);
    int *trav = xmalloc(((size_t)n + 1) * sizeof *trav);
    int *tmp = xmalloc(((size_t)n + 1) * sizeof *tmp);
    int nrem = value_classes(remaining, n, rem);
    int ntrav = value_classes(travelled, n, trav);
    for (int i = 0; i < n; i++) {
        rem[i] = nrem - 1 - rem[i];     /* longest remaining first */
        send[i] = i;
    }
    sort_by_key(send, n, trav, ntrav, tmp);
    sort_by_key(tmp, n, rem, nrem, send);
    for (int r = 0, cls = -1; r < n; r++) {
        int i = send[r], p = r > 0 ? send[r - 1] : -1;
        if (p < 0 || rem[i] != rem[p] || trav[i] != trav[p])
            cls++;
        sclass[i] = cls;
    }
    free(remaining);
    free(travelled);
    free(rem);
    free(trav);
    free(tmp);
}

/* The nodes: each send's cost, resources, class and children (groups
 * and buckets come later). */
static void fill_nodes(sched_ctx *c, const int *send, const int *sclass)
{
    const forest *f = c->f;
    int n = c->n;
    int *rank = xmalloc(((size_t)n + 1) * sizeof *rank);
    for (int r = 0; r < n; r++)
        rank[send[r]] = r;
    for (int r = 0, nk = 0; r < n; r++) {
        int i = send[r];
        snode *s = &c->node[r];
        s->cost = f->cost[i];
        s->hold = f->hold[i];
        s->nres = f->nres[i];
        s->res[0] = f->res[2 * i];
        s->res[1] = s->nres == 2 ? f->res[2 * i + 1] : -1;
        s->sclass = sclass[i];
        s->send = i;
        s->kid0 = nk;
        for (int k = f->cstart[i]; k < f->cstart[i + 1]; k++)
            c->kids[nk++].r = rank[f->child[k]];
        s->kid1 = nk;
    }
    c->nkids = n > 0 ? c->node[n - 1].kid1 : 0;
    free(rank);
}

/* Each node's out group: its out resource, or, through a NIC's egress
 * (which several senders may share: each keeps its own order on it), its
 * chain (sender, NIC); the chains the sends use are numbered in order of
 * first use. */
static void assign_groups(sched_ctx *c)
{
    const topo *t = c->t;
    int nic_base = c->nres - 2 * t->nnics;   /* NICs are numbered last */
    unsigned char *nic_out = xmalloc((size_t)c->nres + 1);  /* cost_res_kind_of, once */
    for (int q = 0; q < c->nres; q++)
        nic_out[q] = cost_res_kind_of(t, q) == COST_NIC_OUT;
    size_t nkeys = (size_t)t->nranks * (t->nnics > 0 ? t->nnics : 1);
    int *chain_of = xmalloc((nkeys + 1) * sizeof *chain_of);
    for (size_t q = 0; q < nkeys; q++)
        chain_of[q] = -1;
    c->nchains = 0;
    for (int r = 0; r < c->n; r++) {
        snode *s = &c->node[r];
        s->chain = -1;
        if (nic_out[s->res[0]]) {
            int *ch = &chain_of[(size_t)c->f->src[s->send] * t->nnics +
                                (size_t)(s->res[0] - nic_base) / 2];
            if (*ch < 0)
                *ch = c->nchains++;
            s->chain = *ch;
        }
    }
    c->ngroups = c->nres + c->nchains;
    for (int r = 0; r < c->n; r++)
        c->node[r].grp = c->node[r].chain >= 0 ? c->nres + c->node[r].chain : c->node[r].res[0];
    free(nic_out);
    free(chain_of);
}

/* The groups, and their buckets: one per other resource the group's sends
 * take (c->nres standing for none), numbered group by group. */
static void index_groups(sched_ctx *c)
{
    int n = c->n, ng = c->ngroups;
    int *at = xcalloc((size_t)ng + 1, sizeof *at);
    for (int g = 0; g < ng; g++)
        c->group[g] = (sgroup){0, 0, 0, 0, 0, -1};
    for (int r = 0; r < n; r++) {
        c->group[c->node[r].grp].src = c->f->src[c->node[r].send];
        at[c->node[r].grp]++;
    }
    for (int g = 0, sum = 0; g < ng; g++) {
        c->group[g].pstart = sum;
        sum += at[g];
        at[g] = c->group[g].pstart;
    }
    int *bygrp = xmalloc(((size_t)n + 1) * sizeof *bygrp);
    for (int r = 0; r < n; r++)
        bygrp[at[c->node[r].grp]++] = r;
    int *stamp = xmalloc(((size_t)c->nres + 1) * sizeof *stamp);
    int *bof = xmalloc(((size_t)c->nres + 1) * sizeof *bof);
    for (int q = 0; q <= c->nres; q++)
        stamp[q] = -1;
    int nb = 0;
    for (int g = 0, k = 0; g < ng; g++) {
        c->group[g].bkt0 = nb;
        for (; k < at[g]; k++) {
            snode *s = &c->node[bygrp[k]];
            int q = s->nres == 2 ? s->res[1] : c->nres;
            if (stamp[q] != g) {
                stamp[q] = g;
                bof[q] = nb;
                c->bucket[nb++] = (sbucket){{s->res[0], s->res[1]}, s->nres, 0, 0, 0};
            }
            s->bkt = bof[q];
            c->bucket[s->bkt].start++;      /* its size, for now */
        }
    }
    c->nbuckets = nb;
    for (int b = 0, sum = 0; b < nb; b++) {
        int size = c->bucket[b].start;
        c->bucket[b].start = sum;
        sum += size;
    }
    for (int k = 0; k < c->nkids; k++) {
        const snode *s = &c->node[c->kids[k].r];
        c->kids[k].grp = s->grp;
        c->kids[k].bkt = s->bkt;
    }
    free(at);
    free(bygrp);
    free(stamp);
    free(bof);
}

static void ctx_init(sched_ctx *c, const forest *f, const topo *t)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->t = t;
    c->n = f->n;
    c->nres = cost_nres(t);
    size_t nn = (size_t)c->n + 1;
    c->node = xmalloc(nn * sizeof *c->node);
    c->kids = xmalloc(nn * sizeof *c->kids);
    c->bucket = xmalloc(nn * sizeof *c->bucket);
    int *send = xmalloc(nn * sizeof *send), *sclass = xmalloc(nn * sizeof *sclass);
    rank_sends(f, send, sclass);
    fill_nodes(c, send, sclass);
    assign_groups(c);
    c->group = xmalloc(((size_t)c->ngroups + 1) * sizeof *c->group);
    index_groups(c);
    free(send);
    free(sclass);
}

static void ctx_free(sched_ctx *c)
{
    free(c->node);
    free(c->kids);
    free(c->group);
    free(c->bucket);
}

/* ---- the pick */

/* Is candidate a (possible start ta) preferred to b (tb)?  Ranks order
 * the two priorities' classes, then the sends. */
static int better(const sched_ctx *c, order_policy pol, int a, double ta, int b, double tb)
{
    if (pol == ORDER_EARLIEST && !feq(ta, tb))
        return ta < tb;
    if (pol != ORDER_EARLIEST && !feq(ta, tb) && c->node[a].sclass == c->node[b].sclass)
        return ta < tb;
    return a < b;
}

/* The candidates, kept so that the next send is found without looking at
 * them all.  A send asks for its out resource (a link direction or switch
 * out port, which only its sender uses, or its sender's chain on a NIC
 * egress): every candidate of one such "out group" sees the same free
 * time F, has the same sender, and asks at max(ready, F).  A group's
 * earliest request is max(its smallest ready, F); a heap of the groups
 * holding candidates, keyed by (earliest request, sender), has the groups
 * holding the next send at its top.
 *
 * Requests are met in time order: the time tau of the pick never goes
 * back, and no candidate asks before it.  So in a group picked at tau
 * (then F <= tau) the candidates asking at tau are those ready by tau;
 * they are RELEASED from the group's pending heap (by ready) and ask at
 * every later pick of the group too (see regroup).  Released candidates
 * sit in BUCKETS, one per group and other resource (the receiver's switch
 * in port or NIC ingress; a link has none): a bucket's candidates would
 * start at the same time, so the policy prefers the one of lowest rank (a
 * heap of ranks), and a pick compares only the buckets' best — the same
 * send as a scan of every tied candidate with better(). */
typedef struct {
    double rq;
    int src, g;
} gkey;

typedef struct {
    double ready;
    int r, bkt;
} pending;

typedef struct {
    const sched_ctx *c;
    const cost_lanes *lanes;
    const double *chain_end;
    sgroup *group;          /* [ngroups] */
    sbucket *bucket;        /* [nbuckets] */
    pending *pend;          /* [n] each group's pending heap (by ready) */
    int *bh;                /* [n] each bucket's heap of ranks */
    int *act;               /* [nbuckets] each group's buckets holding candidates */
    gkey *heap;             /* [ngroups] the groups holding candidates */
    int nheap;
    int *held;              /* [ngroups] scratch for pick_next */
} picker;

static int gkey_less(const gkey *a, const gkey *b)
{
    if (a->rq != b->rq)
        return a->rq < b->rq;
    if (a->src != b->src)
        return a->src < b->src;
    return a->g < b->g;
}

static int pend_less(const void *ctx, const pending *a, const pending *b)
{
    (void)ctx;
    if (a->ready != b->ready)
        return a->ready < b->ready;
    return a->r < b->r;
}

static int int_less(const void *ctx, const int *a, const int *b)
{
    (void)ctx;
    return *a < *b;
}

TC_HEAP_DEFINE(pheap, pending, const void *, pend_less)
TC_HEAP_DEFINE(bheap, int, const void *, int_less)

/* ---- the heap of groups: each group at most once, its place in hpos */

static void gh_put(picker *P, int at, gkey k)
{
    P->heap[at] = k;
    P->group[k.g].hpos = at;
}

static void gh_up(picker *P, int at, gkey k)
{
    while (at > 0 && gkey_less(&k, &P->heap[(at - 1) / 2])) {
        gh_put(P, at, P->heap[(at - 1) / 2]);
        at = (at - 1) / 2;
    }
    gh_put(P, at, k);
}

static void gh_down(picker *P, int at, gkey k)
{
    for (;;) {
        int ch = 2 * at + 1;
        if (ch >= P->nheap)
            break;
        if (ch + 1 < P->nheap && gkey_less(&P->heap[ch + 1], &P->heap[ch]))
            ch++;
        if (!gkey_less(&P->heap[ch], &k))
            break;
        gh_put(P, at, P->heap[ch]);
        at = ch;
    }
    gh_put(P, at, k);
}

/* Group k.g's key becomes k (it enters the heap if it was not in it). */
static void gh_set(picker *P, gkey k)
{
    int at = P->group[k.g].hpos;
    if (at < 0)
        gh_up(P, P->nheap++, k);
    else if (gkey_less(&k, &P->heap[at]))
        gh_up(P, at, k);
    else
        gh_down(P, at, k);
}

static void gh_remove(picker *P, int g)
{
    int at = P->group[g].hpos;
    if (at < 0)
        return;
    P->group[g].hpos = -1;
    gkey last = P->heap[--P->nheap];
    if (at == P->nheap)
        return;
    if (at > 0 && gkey_less(&last, &P->heap[(at - 1) / 2]))
        gh_up(P, at, last);
    else
        gh_down(P, at, last);
}

/* ---- groups and buckets */

/* Free time of group g's out resource: its chain's end, else the
 * earliest-free lane of the resource. */
static double group_free(const picker *P, int g)
{
    const sched_ctx *c = P->c;
    if (g >= c->nres)
        return P->chain_end[g - c->nres];
    double f;
    cost_lanes_pick(P->lanes, g, &f);
    return f;
}

/* Re-key group g (after its candidates or its free time changed) at the
 * pick of time tau.  Its earliest request is max(F, smallest ready); with
 * released candidates that is max(F, tau): they were ready by an earlier
 * pick's time, so by tau, and when F < tau no candidate is ready before
 * tau (none asks before tau), so the smallest ready is tau itself. */
static void regroup(picker *P, int g, double tau)
{
    const sgroup *G = &P->group[g];
    double mr;
    if (G->alen > 0)
        mr = tau;
    else if (G->plen > 0)
        mr = P->pend[G->pstart].ready;
    else {
        gh_remove(P, g);
        return;
    }
    double f = group_free(P, g);
    gh_set(P, (gkey){f > mr ? f : mr, G->src, g});
}

static void add_cand(picker *P, const kidref *k, double ready)
{
    sgroup *G = &P->group[k->grp];
    pheap_push(P->pend + G->pstart, &G->plen, (pending){ready, k->r, k->bkt}, NULL);
}

/* Group g is picked at tau: its candidates ready by then join their buckets. */
static void release(picker *P, int g, double tau)
{
    sgroup *G = &P->group[g];
    pending *pv = P->pend + G->pstart;
    while (G->plen > 0 && pv[0].ready <= tau) {
        pending x = pheap_pop(pv, &G->plen, NULL);
        sbucket *B = &P->bucket[x.bkt];
        if (B->len == 0) {
            B->apos = G->alen;
            P->act[G->bkt0 + G->alen++] = x.bkt;
        }
        bheap_push(P->bh + B->start, &B->len, x.r, NULL);
    }
}

/* The best candidate of bucket b (of group g) leaves it. */
static void take(picker *P, int g, int b)
{
    sbucket *B = &P->bucket[b];
    bheap_pop(P->bh + B->start, &B->len, NULL);
    if (B->len == 0) {
        sgroup *G = &P->group[g];
        int *a = P->act + G->bkt0, last = a[--G->alen];
        a[B->apos] = last;
        P->bucket[last].apos = B->apos;
    }
}

/* The start of bucket b's sends at request time rq: the request, then
 * every resource's earliest-free lane. */
static double start_time(const picker *P, int b, double rq)
{
    const sbucket *B = &P->bucket[b];
    return cost_lanes_start(P->lanes, B->res, B->nres, rq, NULL);
}

static void picker_init(picker *P, const sched_ctx *c, const cost_lanes *lanes,
                        const double *chain_end)
{
    memset(P, 0, sizeof *P);
    P->c = c;
    P->lanes = lanes;
    P->chain_end = chain_end;
    size_t ng = (size_t)c->ngroups + 1, nb = (size_t)c->nbuckets + 1, nn = (size_t)c->n + 1;
    P->group = xmalloc(ng * sizeof *P->group);
    memcpy(P->group, c->group, (size_t)c->ngroups * sizeof *P->group);
    P->bucket = xmalloc(nb * sizeof *P->bucket);
    memcpy(P->bucket, c->bucket, (size_t)c->nbuckets * sizeof *P->bucket);
    P->pend = xmalloc(nn * sizeof *P->pend);
    P->bh = xmalloc(nn * sizeof *P->bh);
    P->act = xmalloc(nb * sizeof *P->act);
    P->heap = xmalloc(ng * sizeof *P->heap);
    P->held = xmalloc(ng * sizeof *P->held);
}

static void picker_free(picker *P)
{
    free(P->group);
    free(P->bucket);
    free(P->pend);
    free(P->bh);
    free(P->act);
    free(P->heap);
    free(P->held);
}

/* The next send (a rank): the candidates asking first (at *tau), the
 * lowest sender among them, and among that sender's the policy's pick
 * (better()); its start in *t_start. */
static int pick_next(picker *P, order_policy pol, double *tau, double *t_start)
{
    gkey top = P->heap[0];
    /* the groups with top's (request, sender) are a subtree at the heap's
     * root: every entry between top and one of them in the order is too */
    int nheld = 0;
    P->held[nheld++] = 0;
    for (int q = 0; q < nheld; q++)
        for (int ch = 2 * P->held[q] + 1; ch <= 2 * P->held[q] + 2 && ch < P->nheap; ch++)
            if (P->heap[ch].rq == top.rq && P->heap[ch].src == top.src)
                P->held[nheld++] = ch;
    int b = -1, bb = -1, bg = -1;
    double bt = 0;
    for (int h = 0; h < nheld; h++) {
        int g = P->heap[P->held[h]].g;
        const sgroup *G = &P->group[g];
        release(P, g, top.rq);
        for (int q = 0; q < G->alen; q++) {
            int bk = P->act[G->bkt0 + q], r = P->bh[P->bucket[bk].start];
            double t = start_time(P, bk, top.rq);
            if (b < 0 || better(P->c, pol, r, t, b, bt)) {
                b = r;
                bt = t;
                bb = bk;
                bg = g;
            }
        }
    }
    take(P, bg, bb);
    *tau = top.rq;
    *t_start = bt;
    return b;
}

/* A send as placed, in the order placed. */
typedef struct {
    double t_send, t_arrive;
    int lane[2];
} placed;

/* The executor meets transfer requests in time order, first come first
 * served (ties: the lower sender rank first), so the schedule is built in
 * that order: the next send is the candidate that asks first; among those
 * asking at the same instant the lowest sender, and among one sender's
 * the policy's pick (better()).  Request times are compared exactly, as
 * the executor compares them: both compute them with the same additions.
 * (picker above finds that send without scanning every candidate.) */
static void run_policy(const sched_ctx *c, order_policy pol, sched_run *out)
{
    int n = c->n;
    cost_lanes *lanes = cost_lanes_new(c->t);
    double *chain_end = xcalloc((size_t)c->nchains + 1, sizeof *chain_end);
    placed *log = xmalloc(((size_t)n + 1) * sizeof *log);
    picker P;
    picker_init(&P, c, lanes, chain_end);
    for (int r = 0; r < n; r++)
        if (c->f->parent[c->node[r].send] < 0)
            add_cand(&P, &(kidref){r, c->node[r].grp, c->node[r].bkt}, 0);
    for (int g = 0; g < c->ngroups; g++)
        regroup(&P, g, 0);
    out->makespan = 0;
    int step = 0;
    for (; step < n; step++) {
        if (step % 1024 == 0 && lp_stop_requested()) {
            out->stopped = 1;
            break;
        }
        double tau, bt;
        const snode *s = &c->node[pick_next(&P, pol, &tau, &bt)];
        placed *x = &log[step];
        x->t_send = bt;
        x->t_arrive = bt + s->cost;
        x->lane[0] = x->lane[1] = -1;
        if (s->chain >= 0)
            chain_end[s->chain] = bt + s->hold;
        cost_lanes_start(lanes, s->res, s->nres, bt, x->lane);
        cost_lanes_hold(lanes, s->res, x->lane, s->nres, bt + s->hold);
        out->seq[step] = s->send;
        if (x->t_arrive > out->makespan)
            out->makespan = x->t_arrive;
        regroup(&P, s->grp, tau);
        for (int k = s->kid0; k < s->kid1; k++) {
            add_cand(&P, &c->kids[k], x->t_arrive);
            regroup(&P, c->kids[k].grp, tau);
        }
    }
    /* the times and lanes, by send */
    for (int k = 0; k < step; k++) {
        int i = out->seq[k];
        out->t_send[i] = log[k].t_send;
        out->t_arrive[i] = log[k].t_arrive;
        out->lane[2 * i] = log[k].lane[0];
        out->lane[2 * i + 1] = log[k].lane[1];
    }
    picker_free(&P);
    cost_lanes_free(lanes);
    free(chain_end);
    free(log);
}

static void run_alloc(sched_run *r, int n)
{
    r->t_send = xcalloc((size_t)n, sizeof *r->t_send);
    r->t_arrive = xcalloc((size_t)n, sizeof *r->t_arrive);
    r->lane = xcalloc((size_t)2 * n, sizeof *r->lane);
    r->seq = xcalloc((size_t)n, sizeof *r->seq);
    r->makespan = 0;
    r->stopped = 0;
}

static void run_free(sched_run *r)
{
    free(r->t_send);
    free(r->t_arrive);
    free(r->lane);
    free(r->seq);
}

static void fill_result(const sched_ctx *c, const sched_run *r, order_result *res)
{
    const forest *f = c->f;
    int n = f->n;
    res->nres = c->nres;
    res->res_start = xcalloc((size_t)c->nres + 1, sizeof *res->res_start);
    int total = 0;
    for (int i = 0; i < n; i++)
        total += f->nres[i];
    res->res_seq = xmalloc((size_t)total * sizeof *res->res_seq);
    res->lane = xmalloc((size_t)2 * n * sizeof *res->lane);
    memcpy(res->lane, r->lane, (size_t)2 * n * sizeof *res->lane);
    for (int i = 0; i < n; i++)
        for (int q = 0; q < f->nres[i]; q++)
            res->res_start[f->res[2 * i + q] + 1]++;
    for (int q = 0; q < c->nres; q++)
        res->res_start[q + 1] += res->res_start[q];
    int *fill = xmalloc(((size_t)c->nres + 1) * sizeof *fill);
    memcpy(fill, res->res_start, ((size_t)c->nres + 1) * sizeof *fill);
    for (int k = 0; k < n; k++) {
        int i = r->seq[k];
        for (int q = 0; q < f->nres[i]; q++)
            res->res_seq[fill[f->res[2 * i + q]]++] = i;
    }
    free(fill);
}

int order_schedule(const algo *routing, const topo *t, double chunk_bytes,
                   const order_opts *o, algo **out, order_result *res, tc_err *err)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (out)
        *out = NULL;
    order_opts dflt;
    if (!o) {
        order_opts_init(&dflt);
        o = &dflt;
    }
    if (o->policy != ORDER_BEST && o->policy != ORDER_PRIORITY && o->policy != ORDER_EARLIEST)
        return tc_err_set(err, TC_INPUT, "order: unknown policy %d", (int)o->policy);
    forest f;
    int rc = forest_build(routing, t, chunk_bytes, &f, err);
    if (rc)
        return rc;
    sched_ctx c;
    ctx_init(&c, &f, t);
    int n = f.n;
    sched_run runs[2];
    double mk[2] = {NAN, NAN};
    order_policy pol[2] = {ORDER_PRIORITY, ORDER_EARLIEST};
    int pick = -1;
    for (int k = 0; k < 2; k++) {
        run_alloc(&runs[k], n);
        if (o->policy != ORDER_BEST && o->policy != pol[k])
            continue;
        if (n > 0)
            run_policy(&c, pol[k], &runs[k]);
        if (runs[k].stopped) {
            run_free(&runs[0]);
            if (k == 1)
                run_free(&runs[1]);
            ctx_free(&c);
            forest_free(&f);
            return tc_err_set(err, TC_STOP, "interrupted");
        }
        mk[k] = runs[k].makespan;
        if (pick < 0 || (mk[k] < mk[pick] && !feq(mk[k], mk[pick])))
            pick = k;
    }
    const sched_run *r = &runs[pick];
    algo *a = algo_new(routing->coll, routing->nranks, routing->chunks_per_rank);
    if (!a)
        tc_oom();
    for (int i = 0; i < n; i++) {
        const algo_send *s = &routing->sends[i];
        algo_send *d = algo_add_send(a, s->origin, s->index, s->src, s->dst, r->t_send[i],
                                     r->t_arrive[i]);
        d->group = s->group;
        d->reduce = s->reduce;
    }
    a->predicted_us = r->makespan;
    if (res) {
        res->makespan_us = r->makespan;
        res->makespan_priority = mk[0];
        res->makespan_earliest = mk[1];
        res->used = pol[pick];
        fill_result(&c, r, res);
    }
    if (out)
        *out = a;
    else
        algo_free(a);
    run_free(&runs[0]);
    run_free(&runs[1]);
    ctx_free(&c);
    forest_free(&f);
    return TC_OK;
}

void order_result_free(order_result *r)
{
    if (!r)
        return;
    free(r->res_start);
    free(r->res_seq);
    free(r->lane);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ verification */

typedef struct {
    double start, end;
    int idx;
} interval;

static int cmp_interval(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->idx - y->idx;
}

static int verify_capacity(const algo *a, const topo *t, const forest *f, double tol,
                           tc_err *err)
{
    int nres = cost_nres(t), n = f->n;
    int *start = xcalloc((size_t)nres + 1, sizeof *start);
    for (int i = 0; i < n; i++)
        for (int q = 0; q < f->nres[i]; q++)
            start[f->res[2 * i + q] + 1]++;
    for (int r = 0; r < nres; r++)
        start[r + 1] += start[r];
    interval *iv = xmalloc(((size_t)start[nres] + 1) * sizeof *iv);
    int *fill = xmalloc(((size_t)nres + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)nres + 1) * sizeof *fill);
    for (int i = 0; i < n; i++)
        for (int q = 0; q < f->nres[i]; q++) {
            interval *v = &iv[fill[f->res[2 * i + q]]++];
            v->start = a->sends[i].t_send;
            v->end = a->sends[i].t_send + f->hold[i];
            v->idx = i;
        }
    free(fill);
    int rc = TC_OK;
    double *active = xmalloc(((size_t)n + 1) * sizeof *active);
    for (int r = 0; r < nres && rc == TC_OK; r++) {
        int k0 = start[r], k1 = start[r + 1], lanes = cost_res_lanes(t, r), na = 0;
        qsort(iv + k0, (size_t)(k1 - k0), sizeof *iv, cmp_interval);
        for (int k = k0; k < k1 && rc == TC_OK; k++) {
            int w = 0;
            for (int j = 0; j < na; j++)
                if (active[j] > iv[k].start + tol)
                    active[w++] = active[j];
            na = w;
            if (na >= lanes) {
                char name[96];
                cost_res_name(t, r, name, sizeof name);
                rc = tc_err_set(err, TC_WRONG, "send %d starts at %.6g us on %s while %d "
                                "transfer%s already hold%s its %d lane%s", iv[k].idx,
                                iv[k].start, name, na, na == 1 ? "" : "s", na == 1 ? "s" : "",
                                lanes, lanes == 1 ? "" : "s");
            }
            active[na++] = iv[k].end;
        }
    }
    free(active);
    free(iv);
    free(start);
    return rc;
}

int order_verify(const algo *a, const topo *t, double chunk_bytes, double tol_us, tc_err *err)
{
    forest f;
    int rc = forest_build(a, t, chunk_bytes, &f, err);
    if (rc)
        return rc;
    double tol = tol_us > 0 ? tol_us : 0;
    for (int i = 0; i < f.n && rc == TC_OK; i++) {
        const algo_send *s = &a->sends[i];
        double took = s->t_arrive - s->t_send;
        double have = f.parent[i] < 0 ? 0 : a->sends[f.parent[i]].t_arrive;
        if (!isfinite(s->t_send) || !isfinite(s->t_arrive) || fabs(took - f.cost[i]) > tol)
            rc = tc_err_set(err, TC_WRONG, "send %d (%d -> %d): takes %.6g us, its route costs "
                            "%.6g us", i, s->src, s->dst, took, f.cost[i]);
        else if (s->t_send < have - tol)
            rc = tc_err_set(err, TC_WRONG, "send %d (%d -> %d): starts at %.6g us, before "
                            "chunk (%d, %d) reaches rank %d at %.6g us", i, s->src, s->dst,
                            s->t_send, s->origin, s->index, s->src, have);
    }
    if (rc == TC_OK)
        rc = verify_capacity(a, t, &f, tol, err);
    forest_free(&f);
    return rc;
}
