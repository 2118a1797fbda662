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
 * sender's previous send through the same out resource has ended; the
 * earliest request goes next, then the lowest sender, and only among one
 * sender's simultaneous requests does the policy (priority or earliest
 * start) choose.  The times written are then the times the executor
 * produces for the lowered program. */
#include "order.h"

#include <math.h>
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
    int *cstart, *child;    /* children (CSR) */
    int *depth;
    int *byd;           /* sends by depth, ascending (stable) */
    double *cost;
    int *nres;
    int *res;           /* [2n] */
} forest;

typedef struct {
    long long key;      /* chunk * nranks + receiver */
    int idx;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx - y->idx;
}

static int find_key(const keyed *k, int n, long long key)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (k[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && k[lo].key == key ? k[lo].idx : -1;
}

static void forest_free(forest *f)
{
    free(f->parent);
    free(f->cstart);
    free(f->child);
    free(f->depth);
    free(f->byd);
    free(f->cost);
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
    f->cstart = xcalloc((size_t)n + 1, sizeof *f->cstart);
    f->child = xmalloc((size_t)n * sizeof *f->child);
    f->depth = xmalloc((size_t)n * sizeof *f->depth);
    f->byd = xmalloc((size_t)n * sizeof *f->byd);
    f->cost = xmalloc((size_t)n * sizeof *f->cost);
    f->nres = xmalloc((size_t)n * sizeof *f->nres);
    f->res = xmalloc((size_t)2 * n * sizeof *f->res);
    keyed *k = xmalloc((size_t)n * sizeof *k);
    int rc = TC_OK;
    for (int i = 0; i < n && rc == TC_OK; i++) {
        const algo_send *s = &a->sends[i];
        if ((rc = check_send_fields(a, t, i, err)))
            break;
        topo_route rt = topo_route_of(t, s->src, s->dst);
        f->cost[i] = cost_hop_us(&rt, bytes);
        f->nres[i] = cost_route_res(t, &rt, s->src, s->dst, &f->res[2 * i]);
        if (f->nres[i] == 0 || !isfinite(f->cost[i]))
            rc = tc_err_set(err, TC_INPUT, "send %d: no route from rank %d to rank %d in "
                            "topology %s", i, s->src, s->dst, t->name);
        long long chunk = (long long)s->origin * a->chunks_per_rank + s->index;
        k[i].key = chunk * t->nranks + s->dst;
        k[i].idx = i;
    }
    if (rc == TC_OK) {
        qsort(k, (size_t)n, sizeof *k, cmp_keyed);
        for (int i = 1; i < n && rc == TC_OK; i++)
            if (k[i].key == k[i - 1].key) {
                const algo_send *s = &a->sends[k[i].idx];
                rc = tc_err_set(err, TC_INPUT, "sends %d and %d: rank %d receives chunk (%d, "
                                "%d) twice", k[i - 1].idx, k[i].idx, s->dst, s->origin,
                                s->index);
            }
    }
    for (int i = 0; i < n && rc == TC_OK; i++) {
        const algo_send *s = &a->sends[i];
        f->parent[i] = -1;
        if (s->src == s->origin)
            continue;
        long long chunk = (long long)s->origin * a->chunks_per_rank + s->index;
        f->parent[i] = find_key(k, n, chunk * t->nranks + s->src);
        if (f->parent[i] < 0)
            rc = tc_err_set(err, TC_INPUT, "send %d: rank %d forwards chunk (%d, %d), which "
                            "it never receives", i, s->src, s->origin, s->index);
    }
    free(k);
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

typedef struct {
    const forest *f;
    const topo *t;
    int nres;
    double *remaining, *travelled;
    int *src;           /* [n] sender of each send */
    int *chain;         /* [n] NIC-egress chain (sender, NIC) of each send, -1 when its
                           out resource is its sender's alone (a link, a switch port) */
    int nchains;
} sched_ctx;

typedef struct {
    double *t_send, *t_arrive;
    int *lane;          /* [2n] */
    int *seq;           /* scheduling order */
    double makespan;
    int stopped;        /* left unfinished on a stop request (lp.h) */
} sched_run;

/* Its start: the request, then every resource's earliest-free lane. */
static double start_time(const sched_ctx *c, const cost_lanes *lanes, double rq, int i)
{
    return cost_lanes_start(lanes, &c->f->res[2 * i], c->f->nres[i], rq, NULL);
}

/* Is candidate a (possible start ta) preferred to b (tb)? */
static int better(const sched_ctx *c, order_policy pol, int a, double ta, int b, double tb)
{
    if (pol == ORDER_EARLIEST && !feq(ta, tb))
        return ta < tb;
    if (!feq(c->remaining[a], c->remaining[b]))
        return c->remaining[a] > c->remaining[b];
    if (!feq(c->travelled[a], c->travelled[b]))
        return c->travelled[a] < c->travelled[b];
    if (pol != ORDER_EARLIEST && !feq(ta, tb))
        return ta < tb;
    return a < b;
}

/* The candidates, kept so that the next send is found without looking at
 * them all.  A send asks for its out resource (a link direction or switch
 * out port, which only its sender uses, or its sender's chain on a NIC
 * egress): every candidate of one such "out group" sees the same free
 * time F, has the same sender, and asks at max(ready, F).  A group's
 * earliest request is max(its smallest ready, F); a heap of groups keyed
 * by (earliest request, sender) finds the groups holding the next send
 * (stale entries are skipped by a version number).  `cand` is the plain
 * list the selection rule is defined on, in its order: candidates tied on
 * (request, sender) are compared in that order. */
typedef struct {
    double rq;
    int src, g;
    unsigned ver;
} gkey;

typedef struct {
    const sched_ctx *c;
    const cost_lanes *lanes;
    const double *chain_end, *ready;
    int ngroups;
    int *grp;               /* [n] out group of each send */
    int **gl, *glen, *gcap; /* candidates of each group */
    int *gpos;              /* [n] index in its group's list */
    unsigned *ver;          /* [ngroups] */
    gkey *heap;
    int nheap, capheap;
    int *cand, ncand;       /* the candidates in selection order */
    int *pos;               /* [n] index in cand */
} picker;

static int gkey_less(const void *ctx, const gkey *a, const gkey *b)
{
    (void)ctx;
    if (a->rq != b->rq)
        return a->rq < b->rq;
    if (a->src != b->src)
        return a->src < b->src;
    return a->g < b->g;
}

TC_HEAP_DEFINE(gheap, gkey, const void *, gkey_less)

static void heap_push(picker *P, gkey k)
{
    P->heap = xgrow(P->heap, &P->capheap, P->nheap + 1, sizeof *P->heap);
    gheap_push(P->heap, &P->nheap, k, NULL);
}

static gkey heap_pop(picker *P)
{
    return gheap_pop(P->heap, &P->nheap, NULL);
}

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

/* Re-key group g (after its candidates or its free time changed). */
static void regroup(picker *P, int g)
{
    P->ver[g]++;
    if (P->glen[g] == 0)
        return;
    double mr = INFINITY;
    for (int k = 0; k < P->glen[g]; k++)
        if (P->ready[P->gl[g][k]] < mr)
            mr = P->ready[P->gl[g][k]];
    double f = group_free(P, g);
    gkey key = {f > mr ? f : mr, P->c->src[P->gl[g][0]], g, P->ver[g]};
    heap_push(P, key);
}

static void add_cand(picker *P, int i)
{
    P->pos[i] = P->ncand;
    P->cand[P->ncand++] = i;
    int g = P->grp[i];
    if (P->glen[g] == P->gcap[g]) {
        P->gcap[g] = P->gcap[g] ? 2 * P->gcap[g] : 4;
        P->gl[g] = xrealloc(P->gl[g], (size_t)P->gcap[g] * sizeof **P->gl);
    }
    P->gpos[i] = P->glen[g];
    P->gl[g][P->glen[g]++] = i;
}

static void drop_cand(picker *P, int i)
{
    int at = P->pos[i], last = P->cand[--P->ncand];
    P->cand[at] = last;
    P->pos[last] = at;
    int g = P->grp[i], gat = P->gpos[i], glast = P->gl[g][--P->glen[g]];
    P->gl[g][gat] = glast;
    P->gpos[glast] = gat;
}

static void picker_init(picker *P, const sched_ctx *c, const cost_lanes *lanes,
                        const double *chain_end, const double *ready)
{
    int n = c->f->n;
    memset(P, 0, sizeof *P);
    P->c = c;
    P->lanes = lanes;
    P->chain_end = chain_end;
    P->ready = ready;
    P->ngroups = c->nres + c->nchains;
    P->grp = xmalloc((size_t)n * sizeof *P->grp);
    for (int i = 0; i < n; i++)
        P->grp[i] = c->chain[i] >= 0 ? c->nres + c->chain[i] : c->f->res[2 * i];
    P->gl = xcalloc((size_t)P->ngroups + 1, sizeof *P->gl);
    P->glen = xcalloc((size_t)P->ngroups + 1, sizeof *P->glen);
    P->gcap = xcalloc((size_t)P->ngroups + 1, sizeof *P->gcap);
    P->ver = xcalloc((size_t)P->ngroups + 1, sizeof *P->ver);
    P->gpos = xmalloc((size_t)n * sizeof *P->gpos);
    P->cand = xmalloc((size_t)n * sizeof *P->cand);
    P->pos = xmalloc((size_t)n * sizeof *P->pos);
}

static void picker_free(picker *P)
{
    for (int g = 0; g < P->ngroups; g++)
        free(P->gl[g]);
    free(P->gl);
    free(P->glen);
    free(P->gcap);
    free(P->ver);
    free(P->gpos);
    free(P->grp);
    free(P->heap);
    free(P->cand);
    free(P->pos);
}

/* A tied candidate and its place in `cand`. */
typedef struct {
    int pos, i;
} tied;

static int cmp_tied(const void *a, const void *b)
{
    return ((const tied *)a)->pos - ((const tied *)b)->pos;
}

/* The next send: the candidates asking first, the lowest sender among
 * them, and among that sender's the policy's pick (better()), compared in
 * `cand` order — exactly what a scan of all candidates in that order picks.
 * tie is scratch room for n sends. */
static int pick_next(picker *P, order_policy pol, tied *tie, double *t_start)
{
    const sched_ctx *c = P->c;
    gkey top;
    do
        top = heap_pop(P);
    while (top.ver != P->ver[top.g]);
    int ntied = 0;
    gkey *held = NULL;
    int nheld = 0;
    for (gkey k = top;;) {
        double f = group_free(P, k.g);
        for (int q = 0; q < P->glen[k.g]; q++) {
            int i = P->gl[k.g][q];
            double rq = P->ready[i] > f ? P->ready[i] : f;
            if (rq == top.rq)
                tie[ntied++] = (tied){P->pos[i], i};
        }
        held = xrealloc(held, (size_t)(nheld + 1) * sizeof *held);
        held[nheld++] = k;
        /* more groups with the same (request, sender)? */
        while (P->nheap > 0 && P->heap[0].ver != P->ver[P->heap[0].g])
            heap_pop(P);
        if (P->nheap == 0 || P->heap[0].rq != top.rq || P->heap[0].src != top.src)
            break;
        k = heap_pop(P);
    }
    for (int h = 0; h < nheld; h++)
        heap_push(P, held[h]);
    free(held);
    if (ntied > 1)
        qsort(tie, (size_t)ntied, sizeof *tie, cmp_tied);
    int b = tie[0].i;
    double bt = start_time(c, P->lanes, top.rq, b);
    for (int j = 1; j < ntied; j++) {
        int a = tie[j].i;
        double tj = start_time(c, P->lanes, top.rq, a);
        if (better(c, pol, a, tj, b, bt)) {
            b = a;
            bt = tj;
        }
    }
    *t_start = bt;
    return b;
}

/* The executor meets transfer requests in time order, first come first
 * served (ties: the lower sender rank first), so the schedule is built in
 * that order: the next send is the candidate that asks first; among those
 * asking at the same instant the lowest sender, and among one sender's
 * the policy's pick (better()).  Request times are compared exactly, as
 * the executor compares them: both compute them with the same additions.
 * (picker above finds that send without scanning every candidate.) */
static void run_policy(const sched_ctx *c, order_policy pol, sched_run *out)
{
    const forest *f = c->f;
    int n = f->n;
    cost_lanes *lanes = cost_lanes_new(c->t);
    double *chain_end = xcalloc((size_t)c->nchains + 1, sizeof *chain_end);
    double *ready = xcalloc((size_t)n, sizeof *ready);
    tied *tie = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *tie);
    picker P;
    picker_init(&P, c, lanes, chain_end, ready);
    for (int i = 0; i < n; i++)
        if (f->parent[i] < 0)
            add_cand(&P, i);
    for (int g = 0; g < P.ngroups; g++)
        regroup(&P, g);
    out->makespan = 0;
    for (int step = 0; step < n; step++) {
        if (step % 1024 == 0 && lp_stop_requested()) {
            out->stopped = 1;
            break;
        }
        double bt;
        int i = pick_next(&P, pol, tie, &bt);
        drop_cand(&P, i);
        double end = bt + f->cost[i];
        if (c->chain[i] >= 0)
            chain_end[c->chain[i]] = end;
        out->lane[2 * i] = out->lane[2 * i + 1] = -1;
        cost_lanes_start(lanes, &f->res[2 * i], f->nres[i], bt, &out->lane[2 * i]);
        cost_lanes_hold(lanes, &f->res[2 * i], &out->lane[2 * i], f->nres[i], end);
        out->t_send[i] = bt;
        out->t_arrive[i] = end;
        out->seq[step] = i;
        if (end > out->makespan)
            out->makespan = end;
        regroup(&P, P.grp[i]);
        for (int k = f->cstart[i]; k < f->cstart[i + 1]; k++) {
            ready[f->child[k]] = end;
            add_cand(&P, f->child[k]);
            regroup(&P, P.grp[f->child[k]]);
        }
    }
    picker_free(&P);
    cost_lanes_free(lanes);
    free(chain_end);
    free(ready);
    free(tie);
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

static void ctx_init(sched_ctx *c, const forest *f, const algo *a, const topo *t)
{
    c->f = f;
    c->t = t;
    c->nres = cost_nres(t);
    int n = f->n;
    /* a NIC's egress may be shared by several senders: each sender keeps its
     * own order on it (a chain per sender and NIC) */
    c->src = xmalloc(((size_t)n + 1) * sizeof *c->src);
    c->chain = xmalloc(((size_t)n + 1) * sizeof *c->chain);
    int nic_base = cost_nres(t) - 2 * t->nnics;     /* NICs are numbered last */
    c->nchains = t->nranks * (t->nnics > 0 ? t->nnics : 1);
    for (int i = 0; i < n; i++) {
        c->src[i] = a->sends[i].src;
        int r0 = f->res[2 * i];
        c->chain[i] = cost_res_kind_of(t, r0) == COST_NIC_OUT
                          ? c->src[i] * t->nnics + (r0 - nic_base) / 2
                          : -1;
    }
    c->remaining = xcalloc((size_t)n, sizeof *c->remaining);
    c->travelled = xcalloc((size_t)n, sizeof *c->travelled);
    for (int k = 0; k < n; k++) {
        int i = f->byd[k], p = f->parent[i];
        c->travelled[i] = p < 0 ? 0 : c->travelled[p] + f->cost[p];
    }
    for (int k = n - 1; k >= 0; k--) {
        int i = f->byd[k];
        double below = 0;
        for (int j = f->cstart[i]; j < f->cstart[i + 1]; j++)
            if (c->remaining[f->child[j]] > below)
                below = c->remaining[f->child[j]];
        c->remaining[i] = f->cost[i] + below;
    }
}

static void ctx_free(sched_ctx *c)
{
    free(c->src);
    free(c->chain);
    free(c->remaining);
    free(c->travelled);
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
    ctx_init(&c, &f, routing, t);
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
            v->end = a->sends[i].t_arrive;
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
