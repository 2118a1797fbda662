/* contig.c — synthesis stage 3: which sends travel together, and exact times
 * (contract and model in contig.h).
 *
 * The work is done on a precedence graph whose nodes are transfers (one send,
 * or a group of sends of one pair) and whose edges are "v starts after u
 * ends" (u before v on a resource lane) and "v starts after u's data is
 * ready" (u brought a chunk v sends on).  One pass, asap(), computes the
 * earliest times on that graph for a given partition of the sends into
 * transfers: the fixed order kept on every resource, the MILP's model.
 * contig_schedule() is that pass on the input's groups.
 *
 * The executor cannot be made to keep an order on a resource that several
 * ranks share (a switch in port, a NIC of two GPUs): it serves those by
 * when transfers ask, and the lowering can only order each rank's own
 * sends.  So contig_solve() judges and times every grouping with replay(),
 * the executor's arbitration (each sender's out-port order fixed, shared
 * slots first come first served, ties to the lower rank): it builds the
 * singleton graph, finds the groupable neighbours, improves the no-group
 * schedule by a small deterministic local search, hands the best to GLPK
 * as the incumbent of the MILP (in asap()'s model), reads back the
 * grouping, polishes it and times it with replay().  The output is
 * therefore exactly what the executor will do with it, whatever the solver
 * returned; on an input whose order already is the executor's (stage 2's
 * is), replay() and asap() agree until grouping moves a request past
 * another sender's. */
#include "contig.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../util/heap.h"
#include "../util/mem.h"
#include "../model/cost.h"

#define MAX_CNT 71              /* runtime: cnt < 72 */
#define DEP_TOL 1e-7            /* relative slack when matching arrivals to sends */
#define LS_MAX_PASSES 4
#define LS_WORK_BUDGET 5e7      /* graph elements visited by one local search */

enum { E_RES = 0, E_DATA = 1 };

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ context: sends, order, data */

typedef struct {
    const algo *a;
    const topo *t;
    double cb;
    int n;
    topo_route *rt;     /* [n] route of each send */
    double *beta;       /* [n] one chunk over the route, without alpha (us) */
    double *red;        /* [n] one chunk's reduce cost at the receiver, 0 if none */
    int *ord;           /* [n] sends in the fixed order */
    int *pos;           /* [n] position of each send in ord */
    int *dep0, *dep;    /* CSR: sends bringing send i's chunk to its sender */
    int nslots;         /* compact (resource, lane) slots */
    int *slot;          /* [2n] slots of each send, -1 = unused */
    int nrslots;        /* chunks reduced into at a rank: (dst, chunk) */
    int *rslot;         /* [n] the one send i reduces into, -1 = a copy */
} ctx;

static void ctx_free(ctx *c)
{
    free(c->rt);
    free(c->beta);
    free(c->red);
    free(c->ord);
    free(c->pos);
    free(c->dep0);
    free(c->dep);
    free(c->slot);
    free(c->rslot);
    memset(c, 0, sizeof *c);
}

typedef struct {
    double t;
    int src, dst, idx;
} okey;

static int cmp_okey(const void *x, const void *y)
{
    const okey *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A chunk as the data dependencies see it, with the rank it reaches. */
typedef struct {
    int co, ci;         /* chunk: (origin, index), or (-1, index) for reductions */
    int at;             /* rank */
    double t;           /* stage-2 arrival */
    int idx;            /* send */
} arrival;

static int cmp_arrival(const void *x, const void *y)
{
    const arrival *a = x, *b = y;
    if (a->co != b->co)
        return a->co < b->co ? -1 : 1;
    if (a->ci != b->ci)
        return a->ci < b->ci ? -1 : 1;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int cmp_chunk_at(const arrival *a, int co, int ci, int at)
{
    if (a->co != co)
        return a->co < co ? -1 : 1;
    if (a->ci != ci)
        return a->ci < ci ? -1 : 1;
    return (a->at > at) - (a->at < at);
}

static int check_send(const ctx *c, int i, tc_err *err)
{
    const algo_send *s = &c->a->sends[i];
    const topo *t = c->t;
    if (s->src < 0 || s->dst < 0 || s->src >= t->nranks || s->dst >= t->nranks ||
        s->src >= c->a->nranks || s->dst >= c->a->nranks)
        return tc_err_set(err, TC_INPUT,
                          "contig: send %d: rank %d -> %d out of range (algorithm %d ranks, "
                          "topology %d)", i, s->src, s->dst, c->a->nranks, t->nranks);
    if (s->src == s->dst)
        return tc_err_set(err, TC_INPUT, "contig: send %d: from rank %d to itself", i, s->src);
    if (!isfinite(s->t_send) || !isfinite(s->t_arrive))
        return tc_err_set(err, TC_INPUT,
                          "contig: send %d (%d -> %d): stage-2 times must be finite", i, s->src,
                          s->dst);
    const topo_route *r = &c->rt[i];
    if ((r->kind != ROUTE_LINK && r->kind != ROUTE_SWITCH && r->kind != ROUTE_NIC) ||
        !(r->bw_gbps > 0) || !isfinite(r->alpha_us))
        return tc_err_set(err, TC_INPUT,
                          "contig: send %d: no route from rank %d to rank %d in topology %s", i,
                          s->src, s->dst, t->name ? t->name : "(unnamed)");
    return TC_OK;
}

/* Data dependencies: for each send, the sends that brought its chunk to its
 * sender no later (stage-2 times) than it leaves. */
static int build_deps(ctx *c, tc_err *err)
{
    int n = c->n, red = coll_is_reduction(c->a->coll);
    arrival *ar = xmalloc((size_t)n * sizeof *ar);
    for (int i = 0; i < n; i++) {
        const algo_send *s = &c->a->sends[i];
        ar[i] = (arrival){red ? -1 : s->origin, s->index, s->dst, s->t_arrive, i};
    }
    qsort(ar, (size_t)n, sizeof *ar, cmp_arrival);
    c->dep0 = xcalloc((size_t)n + 1, sizeof *c->dep0);
    int cap = n > 0 ? n : 1, nd = 0;
    c->dep = xmalloc((size_t)cap * sizeof *c->dep);
    for (int i = 0; i < n; i++) {
        const algo_send *s = &c->a->sends[i];
        int co = red ? -1 : s->origin;
        int lo = 0, hi = n;                     /* first arrival of (chunk, at src) */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (cmp_chunk_at(&ar[mid], co, s->index, s->src) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        double lim = s->t_send + DEP_TOL * (1 + fabs(s->t_send));
        int found = 0;
        for (int k = lo; k < n && cmp_chunk_at(&ar[k], co, s->index, s->src) == 0; k++) {
            if (ar[k].t > lim)
                break;
            if (ar[k].idx == i)
                continue;
            if (nd == cap) {
                cap *= 2;
                int *nw = realloc(c->dep, (size_t)cap * sizeof *nw);
                if (!nw)
                    tc_oom();
                c->dep = nw;
            }
            c->dep[nd++] = ar[k].idx;
            found++;
        }
        c->dep0[i + 1] = nd;
        if (!red && !found && s->src != s->origin) {
            free(ar);
            return tc_err_set(err, TC_INPUT,
                              "contig: send %d: rank %d sends chunk %d:%d at %g us but it has "
                              "not arrived there by then", i, s->src, s->origin, s->index,
                              s->t_send);
        }
    }
    free(ar);
    return TC_OK;
}

typedef struct {
    long long key;
    int T;              /* a transfer, or a send */
} chain_key;

static int cmp_chain_key(const void *x, const void *y)
{
    const chain_key *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->T > b->T) - (a->T < b->T);
}

/* Reductions into one chunk at one rank read and write the same buffer
 * slot, so the lowering orders them (a dependency chain) and the executor
 * performs them one after another: number those (dst, chunk) places. */
static void reduce_slots(ctx *c)
{
    const algo *a = c->a;
    int n = c->n, nk = 0;
    c->rslot = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *c->rslot);
    chain_key *k = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *k);
    long long C = (long long)a->chunks_per_rank + 1, N = (long long)a->nranks + 1;
    for (int i = 0; i < n; i++) {
        const algo_send *s = &a->sends[i];
        c->rslot[i] = -1;
        if (s->reduce)
            k[nk++] = (chain_key){((long long)s->dst * N + s->origin + 1) * C + s->index, i};
    }
    qsort(k, (size_t)nk, sizeof *k, cmp_chain_key);
    c->nrslots = 0;
    for (int q = 0; q < nk; q++) {
        if (q > 0 && k[q].key != k[q - 1].key)
            c->nrslots++;
        c->rslot[k[q].T] = c->nrslots;
    }
    if (nk > 0)
        c->nrslots++;
    free(k);
}

static int ctx_init(ctx *c, const algo *a, const topo *t, double cb, tc_err *err)
{
    memset(c, 0, sizeof *c);
    if (!a || !t)
        return tc_err_set(err, TC_INPUT, "contig: no algorithm or no topology");
    if (!(cb > 0) || !isfinite(cb))
        return tc_err_set(err, TC_INPUT, "contig: chunk_bytes must be > 0, got %g", cb);
    if (a->nsends < 0 || (a->nsends > 0 && !a->sends))
        return tc_err_set(err, TC_INPUT, "contig: malformed algorithm (%d sends)", a->nsends);
    c->a = a;
    c->t = t;
    c->cb = cb;
    c->n = a->nsends;
    int n = c->n;
    c->rt = xcalloc((size_t)n, sizeof *c->rt);
    c->beta = xcalloc((size_t)n, sizeof *c->beta);
    c->red = xcalloc((size_t)n, sizeof *c->red);
    c->ord = xmalloc((size_t)n * sizeof *c->ord);
    c->pos = xmalloc((size_t)n * sizeof *c->pos);
    c->slot = xmalloc((size_t)2 * n * sizeof *c->slot);
    for (int i = 0; i < n; i++) {
        const algo_send *s = &a->sends[i];
        int ok = s->src >= 0 && s->dst >= 0 && s->src < t->nranks && s->dst < t->nranks;
        c->rt[i] = ok ? topo_route_of(t, s->src, s->dst) : (topo_route){ROUTE_NONE, -1, -1, -1,
                                                                        -1, 0, 0};
        int rc = check_send(c, i, err);
        if (rc != TC_OK)
            return rc;
        c->beta[i] = cb / (c->rt[i].bw_gbps * 1e3);
        c->red[i] = s->reduce ? cost_reduce_us(t, cb) : 0;
        c->red[i] += s->post_us > 0 ? s->post_us : 0;
    }
    okey *k = xmalloc((size_t)n * sizeof *k);
    for (int i = 0; i < n; i++)
        k[i] = (okey){a->sends[i].t_send, a->sends[i].src, a->sends[i].dst, i};
    qsort(k, (size_t)n, sizeof *k, cmp_okey);
    for (int q = 0; q < n; q++) {
        c->ord[q] = k[q].idx;
        c->pos[k[q].idx] = q;
    }
    free(k);
    reduce_slots(c);
    return build_deps(c, err);
}

/* ------------------------------------------------------------ partitions into transfers */

/* Transfers are numbered in the fixed order of their first member. */
typedef struct {
    int ntr;
    int *tr;            /* [n] transfer of each send */
    int *first;         /* [ntr] first member */
    int *k;             /* [ntr] members */
    double *redc;       /* [ntr] reduce cost of the whole transfer */
    double *pre;        /* [ntr] local work at the sender before it (staging):
                           the largest of its sends' */
    double *presum;     /* [ntr] all of it (the sends' sum) */
    double *place;      /* [ntr] local work putting its chunks in place after it */
} part;

static void part_alloc(part *p, int n)
{
    p->ntr = 0;
    p->tr = xmalloc((size_t)n * sizeof *p->tr);
    p->first = xmalloc((size_t)n * sizeof *p->first);
    p->k = xmalloc((size_t)n * sizeof *p->k);
    p->redc = xmalloc((size_t)n * sizeof *p->redc);
    p->pre = xmalloc((size_t)n * sizeof *p->pre);
    p->presum = xmalloc((size_t)n * sizeof *p->presum);
    p->place = xmalloc((size_t)n * sizeof *p->place);
}

static void part_free(part *p)
{
    free(p->tr);
    free(p->first);
    free(p->k);
    free(p->redc);
    free(p->pre);
    free(p->presum);
    free(p->place);
    memset(p, 0, sizeof *p);
}

static void part_counts(const ctx *c, part *p)
{
    for (int T = 0; T < p->ntr; T++) {
        p->k[T] = 0;
        p->redc[T] = 0;
        p->pre[T] = 0;
        p->presum[T] = 0;
        p->place[T] = 0;
    }
    for (int i = 0; i < c->n; i++) {
        p->k[p->tr[i]]++;
        p->redc[p->tr[i]] += c->red[i];
        /* the sender copies each chunk as it arrives, so mostly only the
         * last one's copy is left when the data is complete */
        if (c->a->sends[i].pre_us > p->pre[p->tr[i]])
            p->pre[p->tr[i]] = c->a->sends[i].pre_us;
        if (c->a->sends[i].pre_us > 0)
            p->presum[p->tr[i]] += c->a->sends[i].pre_us;
        if (c->a->sends[i].place_us > 0)
            p->place[p->tr[i]] += c->a->sends[i].place_us;
    }
}

/* join[q] = 1: the send at position q joins the transfer of the send at
 * position pred[q] (an earlier position).  join == NULL: all alone. */
static void part_from_joins(const ctx *c, const int *pred, const unsigned char *join, part *p)
{
    p->ntr = 0;
    for (int q = 0; q < c->n; q++) {
        int i = c->ord[q];
        if (join && join[q] && pred[q] >= 0) {
            p->tr[i] = p->tr[c->ord[pred[q]]];
        } else {
            p->first[p->ntr] = i;
            p->tr[i] = p->ntr++;
        }
    }
    part_counts(c, p);
}

typedef struct {
    int src, dst, group, q;
} gkey;

static int cmp_gkey(const void *x, const void *y)
{
    const gkey *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return (a->q > b->q) - (a->q < b->q);
}

/* The input's own groups: sends of one pair sharing a group id >= 0. */
static void part_from_groups(const ctx *c, part *p)
{
    int n = c->n, ng = 0;
    gkey *g = xmalloc((size_t)n * sizeof *g);
    int *leader = xmalloc((size_t)n * sizeof *leader);    /* by send: first member's position */
    for (int i = 0; i < n; i++) {
        const algo_send *s = &c->a->sends[i];
        leader[i] = -1;
        if (s->group >= 0)
            g[ng++] = (gkey){s->src, s->dst, s->group, c->pos[i]};
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_gkey);
    for (int b = 0; b < ng;) {
        int e = b;
        while (e < ng && g[e].src == g[b].src && g[e].dst == g[b].dst && g[e].group == g[b].group)
            e++;
        for (int x = b; x < e; x++)
            leader[c->ord[g[x].q]] = g[b].q;
        b = e;
    }
    free(g);
    p->ntr = 0;
    for (int q = 0; q < n; q++) {
        int i = c->ord[q];
        if (leader[i] >= 0 && leader[i] < q) {
            p->tr[i] = p->tr[c->ord[leader[i]]];
        } else {
            p->first[p->ntr] = i;
            p->tr[i] = p->ntr++;
        }
    }
    free(leader);
    part_counts(c, p);
}

/* ------------------------------------------------------------ resources and lanes */

typedef struct {
    int link, T;
} lane_req;

static int cmp_lane_req(const void *x, const void *y)
{
    const lane_req *a = x, *b = y;
    if (a->link != b->link)
        return a->link < b->link ? -1 : 1;
    return (a->T > b->T) - (a->T < b->T);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Lanes of multi-lane links per transfer, by the stage-2 times: walking a
 * link's transfers in order, each takes the lane freed first. */
static int *assign_lanes(const ctx *c, const part *p)
{
    int *lane = xcalloc((size_t)p->ntr, sizeof *lane);
    double *t1 = xmalloc((size_t)p->ntr * sizeof *t1);
    for (int T = 0; T < p->ntr; T++)
        t1[T] = -INFINITY;
    for (int i = 0; i < c->n; i++)
        if (c->a->sends[i].t_arrive > t1[p->tr[i]])
            t1[p->tr[i]] = c->a->sends[i].t_arrive;
    lane_req *rq = xmalloc((size_t)p->ntr * sizeof *rq);
    int nr = 0, maxm = 1;
    for (int T = 0; T < p->ntr; T++) {
        const topo_route *r = &c->rt[p->first[T]];
        if (r->kind == ROUTE_LINK && c->t->links[r->link].mult > 1) {
            rq[nr++] = (lane_req){r->link, T};
            if (c->t->links[r->link].mult > maxm)
                maxm = c->t->links[r->link].mult;
        }
    }
    qsort(rq, (size_t)nr, sizeof *rq, cmp_lane_req);
    double *freet = xmalloc((size_t)maxm * sizeof *freet);
    for (int b = 0; b < nr;) {
        int e = b, m = c->t->links[rq[b].link].mult;
        for (int l = 0; l < m; l++)
            freet[l] = -INFINITY;
        for (; e < nr && rq[e].link == rq[b].link; e++) {
            int best = 0;
            for (int l = 1; l < m; l++)
                if (freet[l] < freet[best])
                    best = l;
            lane[rq[e].T] = best;
            freet[best] = t1[rq[e].T];
        }
        b = e;
    }
    free(freet);
    free(rq);
    free(t1);
    return lane;
}

/* Resource-lane slots of every send (its transfer's lane), numbered
 * compactly: the resources model/cost.h says a hop holds, each with the
 * lane the transfer takes. */
static void assign_slots(ctx *c, const part *p)
{
    int n = c->n;
    int *lane = assign_lanes(c, p);
    uint64_t *raw = xmalloc((size_t)2 * n * sizeof *raw);
    uint64_t *all = xmalloc((size_t)2 * n * sizeof *all);
    int na = 0;
    for (int i = 0; i < n; i++) {
        const algo_send *s = &c->a->sends[i];
        const topo_route *r = &c->rt[i];
        raw[2 * i] = raw[2 * i + 1] = UINT64_MAX;
        int res[2], nres = cost_route_res(c->t, r, s->src, s->dst, res);
        for (int k = 0; k < nres; k++)     /* a link's lane by the stage-2 times */
            raw[2 * i + k] = ((uint64_t)res[k] << 24) |
                             (uint64_t)(r->kind == ROUTE_LINK ? lane[p->tr[i]] : 0);
        for (int k = 0; k < 2; k++)
            if (raw[2 * i + k] != UINT64_MAX)
                all[na++] = raw[2 * i + k];
    }
    qsort(all, (size_t)na, sizeof *all, cmp_u64);
    int nu = 0;
    for (int x = 0; x < na; x++)
        if (nu == 0 || all[x] != all[nu - 1])
            all[nu++] = all[x];
    for (int x = 0; x < 2 * n; x++) {
        c->slot[x] = -1;
        if (raw[x] == UINT64_MAX)
            continue;
        int lo = 0, hi = nu - 1;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (all[mid] < raw[x])
                lo = mid + 1;
            else
                hi = mid;
        }
        c->slot[x] = lo;
    }
    c->nslots = nu;
    free(all);
    free(raw);
    free(lane);
}

/* ------------------------------------------------------------ earliest times */

typedef struct {
    int from, to, kind;
} edge;

static int cmp_edge(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    return (a->kind > b->kind) - (a->kind < b->kind);
}

typedef struct {
    double *start, *end, *ready;    /* [ntr] */
    int *order;                     /* [ntr] a topological order */
    double makespan;
    double sum;                     /* sum over sends of their transfer's end */
    int ne;
    edge *e;                        /* kept only when asked */
    int *spred;                     /* [2n] transfer before send i on slot k, kept when asked */
    long long work;                 /* graph elements visited */
} sched;

static void sched_free(sched *S)
{
    free(S->start);
    free(S->end);
    free(S->ready);
    free(S->order);
    free(S->e);
    free(S->spred);
    memset(S, 0, sizeof *S);
}

static int cycle_error(const ctx *c, int i, tc_err *err)
{
    const algo_send *s = &c->a->sends[i];
    return tc_err_set(err, TC_INPUT,
                      "contig: the order has a cycle: send %d (chunk %d:%d, %d -> %d, t_send %g) "
                      "waits for itself through resource orders and chunk arrivals", i,
                      s->origin, s->index, s->src, s->dst, s->t_send);
}

/* Longest path over the transfers of p.  keep: also return the edges (and
 * every send's slot predecessors).  TC_INPUT on a cycle. */
static int asap(const ctx *c, const part *p, int keep, sched *S, tc_err *err)
{
    int n = c->n, ntr = p->ntr;
    memset(S, 0, sizeof *S);
    int cap = 2 * ntr + c->dep0[n];
    edge *e = xmalloc((size_t)(cap > 0 ? cap : 1) * sizeof *e);
    int ne = 0;
    int *last = xmalloc((size_t)(c->nslots > 0 ? c->nslots : 1) * sizeof *last);
    for (int s = 0; s < c->nslots; s++)
        last[s] = -1;
    int *spred = keep ? xmalloc((size_t)2 * n * sizeof *spred) : NULL;
    if (spred)
        for (int x = 0; x < 2 * n; x++)
            spred[x] = -1;
    for (int T = 0; T < ntr; T++) {
        int f = p->first[T];
        for (int k = 0; k < 2; k++) {
            int s = c->slot[2 * f + k];
            if (s < 0)
                continue;
            if (last[s] >= 0)
                e[ne++] = (edge){last[s], T, E_RES};
            if (spred)
                spred[2 * f + k] = last[s];
            last[s] = T;
        }
    }
    free(last);
    int rc = TC_OK;
    for (int i = 0; i < n && rc == TC_OK; i++)
        for (int d = c->dep0[i]; d < c->dep0[i + 1]; d++) {
            int u = p->tr[c->dep[d]], v = p->tr[i];
            if (u == v) {
                rc = cycle_error(c, i, err);
                break;
            }
            e[ne++] = (edge){u, v, E_DATA};
        }
    if (rc != TC_OK) {
        free(e);
        free(spred);
        return rc;
    }
    /* out-edge lists (CSR, in edge order) and Kahn's algorithm */
    int *o0 = xcalloc((size_t)ntr + 1, sizeof *o0);
    int *oe = xmalloc((size_t)(ne > 0 ? ne : 1) * sizeof *oe);
    int *indeg = xcalloc((size_t)(ntr > 0 ? ntr : 1), sizeof *indeg);
    for (int x = 0; x < ne; x++) {
        o0[e[x].from + 1]++;
        indeg[e[x].to]++;
    }
    for (int T = 0; T < ntr; T++)
        o0[T + 1] += o0[T];
    int *fill = xmalloc((size_t)(ntr > 0 ? ntr : 1) * sizeof *fill);
    memcpy(fill, o0, (size_t)ntr * sizeof *fill);
    for (int x = 0; x < ne; x++)
        oe[fill[e[x].from]++] = x;
    free(fill);
    S->start = xcalloc((size_t)(ntr > 0 ? ntr : 1), sizeof *S->start);
    S->end = xmalloc((size_t)(ntr > 0 ? ntr : 1) * sizeof *S->end);
    S->ready = xmalloc((size_t)(ntr > 0 ? ntr : 1) * sizeof *S->ready);
    S->order = xmalloc((size_t)(ntr > 0 ? ntr : 1) * sizeof *S->order);
    int head = 0, tail = 0;
    for (int T = 0; T < ntr; T++) {
        S->start[T] = p->pre[T];
        if (indeg[T] == 0)
            S->order[tail++] = T;
    }
    while (head < tail) {
        int u = S->order[head++];
        S->end[u] = S->start[u] + cost_hop_us(&c->rt[p->first[u]], p->k[u] * c->cb);
        S->ready[u] = S->end[u] + p->redc[u];
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *ed = &e[oe[x]];
            double t = ed->kind == E_RES ? S->end[u] : S->ready[u] + p->pre[ed->to];
            if (t > S->start[ed->to])
                S->start[ed->to] = t;
            if (--indeg[ed->to] == 0)
                S->order[tail++] = ed->to;
        }
    }
    free(o0);
    free(oe);
    if (tail < ntr) {
        int bad = -1;
        for (int T = 0; T < ntr && bad < 0; T++)
            if (indeg[T] > 0)
                bad = T;
        free(indeg);
        free(e);
        free(spred);
        sched_free(S);
        return cycle_error(c, p->first[bad], err);
    }
    free(indeg);
    for (int T = 0; T < ntr; T++)
        if (S->ready[T] + p->place[T] > S->makespan)
            S->makespan = S->ready[T] + p->place[T];
    for (int i = 0; i < n; i++)
        S->sum += S->end[p->tr[i]];
    S->work = (long long)ntr + ne + n;
    S->ne = ne;
    if (keep) {
        S->e = e;
        S->spred = spred;
    } else {
        free(e);
    }
    return TC_OK;
}

/* ------------------------------------------------------------ the executor's arbitration */

/* A switch in port, a NIC shared by several ranks: the executor serves
 * such a resource by when a transfer asks for it, not in an order the
 * schedule could impose (dependencies only reach within one rank).  What the lowering does fix is each rank's order on its own out
 * port or NIC (a chain of dependencies) and on each connection.  So a
 * transfer asks once its data is ready and the previous transfer of its
 * sender through the same out slot has ended; requests are served in time
 * order, ties by the lower sender rank (the executor's rule), each taking
 * its slots when they are free.  With the fixed order kept everywhere this
 * gives asap()'s times; when grouping moves times so that two senders'
 * requests to a shared slot swap, it gives the order the executor will
 * actually see.  replay() computes that. */

typedef struct {
    double r;
    int src, T;
} request;

static int req_before(const void *ctx, const request *a, const request *b)
{
    (void)ctx;
    if (a->r != b->r)
        return a->r < b->r;
    if (a->src != b->src)
        return a->src < b->src;
    return a->T < b->T;
}

TC_HEAP_DEFINE(req, request, const void *, req_before)


/* Edges "v asks after u": kind E_RES after u's end (the chain), E_DATA
 * after u's ready (its data).  Chain: transfers of one sender through one
 * out slot, in the fixed order (= transfer numbering). */
static int replay_edges(const ctx *c, const part *p, edge **out, int *nout, tc_err *err)
{
    int n = c->n, ntr = p->ntr, sz = ntr > 0 ? ntr : 1;
    int cap = 2 * ntr + c->dep0[n] + 1, ne = 0;
    edge *e = xmalloc((size_t)cap * sizeof *e);
    chain_key *ck = xmalloc((size_t)sz * sizeof *ck);
    for (int T = 0; T < ntr; T++) {
        int f = p->first[T];
        ck[T] = (chain_key){(long long)c->a->sends[f].src * (c->nslots + 1) + c->slot[2 * f], T};
    }
    qsort(ck, (size_t)ntr, sizeof *ck, cmp_chain_key);
    for (int k = 1; k < ntr; k++)
        if (ck[k].key == ck[k - 1].key)
            e[ne++] = (edge){ck[k - 1].T, ck[k].T, E_RES};
    free(ck);
    for (int i = 0; i < n; i++)
        for (int d = c->dep0[i]; d < c->dep0[i + 1]; d++) {
            int u = p->tr[c->dep[d]], v = p->tr[i];
            if (u == v) {
                free(e);
                return cycle_error(c, i, err);
            }
            e[ne++] = (edge){u, v, E_DATA};
        }
    *out = e;
    *nout = ne;
    return TC_OK;
}

/* For each transfer the previous one on its (src, dst) pair in the fixed
 * order (= transfer numbering), -1 for the first. */
static int *pair_prev(const ctx *c, const part *p)
{
    int ntr = p->ntr, sz = ntr > 0 ? ntr : 1;
    int *pp = xmalloc((size_t)sz * sizeof *pp);
    chain_key *k = xmalloc((size_t)sz * sizeof *k);
    for (int T = 0; T < ntr; T++) {
        const algo_send *s = &c->a->sends[p->first[T]];
        k[T] = (chain_key){(long long)s->src * c->a->nranks + s->dst, T};
        pp[T] = -1;
    }
    qsort(k, (size_t)ntr, sizeof *k, cmp_chain_key);
    for (int q = 1; q < ntr; q++)
        if (k[q].key == k[q - 1].key)
            pp[k[q].T] = k[q - 1].T;
    free(k);
    return pp;
}

/* The sends of each transfer (CSR: m0[T] .. m0[T+1] of the result), in
 * send order.  m0 has room for ntr + 1. */
static int *members_of(const ctx *c, const part *p, int *m0)
{
    int *mem = xmalloc((size_t)(c->n > 0 ? c->n : 1) * sizeof *mem);
    for (int i = 0; i < c->n; i++)
        m0[p->tr[i] + 1]++;
    for (int T = 0; T < p->ntr; T++)
        m0[T + 1] += m0[T];
    int *fill = xmalloc(((size_t)p->ntr + 1) * sizeof *fill);
    memcpy(fill, m0, ((size_t)p->ntr + 1) * sizeof *fill);
    for (int i = 0; i < c->n; i++)
        mem[fill[p->tr[i]]++] = i;
    free(fill);
    return mem;
}

/* Times of partition p as the executor will produce them (above); fills
 * what asap() fills except the edges.  TC_INPUT on a cycle. */
static int replay(const ctx *c, const part *p, sched *S, tc_err *err)
{
    int ntr = p->ntr, sz = ntr > 0 ? ntr : 1;
    memset(S, 0, sizeof *S);
    edge *e = NULL;
    int ne = 0, rc = replay_edges(c, p, &e, &ne, err);
    if (rc != TC_OK)
        return rc;
    int *o0 = xcalloc((size_t)sz + 1, sizeof *o0);
    int *oe = xmalloc((size_t)(ne > 0 ? ne : 1) * sizeof *oe);
    int *need = xcalloc((size_t)sz, sizeof *need);
    for (int x = 0; x < ne; x++) {
        o0[e[x].from + 1]++;
        need[e[x].to]++;
    }
    for (int T = 0; T < ntr; T++)
        o0[T + 1] += o0[T];
    int *fill = xmalloc((size_t)sz * sizeof *fill);
    memcpy(fill, o0, (size_t)ntr * sizeof *fill);
    for (int x = 0; x < ne; x++)
        oe[fill[e[x].from]++] = x;
    free(fill);
    double *rq = xcalloc((size_t)sz, sizeof *rq);
    double *slot_free = xcalloc((size_t)(c->nslots > 0 ? c->nslots : 1), sizeof *slot_free);
    /* one receiving tb per pair takes its transfers in order, and puts each
     * in place (place[]) before it takes the next */
    int *pprev = pair_prev(c, p);
    double *got = xcalloc((size_t)sz, sizeof *got);
    /* reductions into one (rank, chunk) run one after another */
    double *rfree = xcalloc((size_t)(c->nrslots > 0 ? c->nrslots : 1), sizeof *rfree);
    int *m0 = xcalloc((size_t)sz + 1, sizeof *m0), *mem = members_of(c, p, m0);
    request *h = xmalloc((size_t)sz * sizeof *h);
    S->start = xcalloc((size_t)sz, sizeof *S->start);
    S->end = xmalloc((size_t)sz * sizeof *S->end);
    S->ready = xmalloc((size_t)sz * sizeof *S->ready);
    S->order = xmalloc((size_t)sz * sizeof *S->order);
    int hn = 0, done = 0;
    for (int T = 0; T < ntr; T++) {
        rq[T] = p->pre[T];
        if (need[T] == 0)
            req_push(h, &hn, (request){rq[T], c->a->sends[p->first[T]].src, T}, NULL);
    }
    /* Two kinds of events in time order: a transfer's request (it takes its
     * slots, and the transfers chained after it on its sender's out slot
     * may ask once it ends), and its arrival (its reductions into a chunk
     * run in arrival order, and the sends waiting on its data may ask once
     * they are done).  At one instant arrivals come first, as the executor
     * serves requests after every completion at that instant. */
    request *arr = xmalloc((size_t)sz * sizeof *arr);
    int an = 0;
    unsigned char *arrived = xcalloc((size_t)sz, 1), *asked = xcalloc((size_t)sz, 1);
    int *waiter = xmalloc((size_t)sz * sizeof *waiter);
    int *sender_waiter = xmalloc((size_t)sz * sizeof *sender_waiter);
    for (int T = 0; T < ntr; T++)
        waiter[T] = sender_waiter[T] = -1;
    while (hn > 0 || an > 0) {
        int is_req = an == 0 || (hn > 0 && h[0].r < arr[0].r);
        request q = is_req ? req_pop(h, &hn, NULL) : req_pop(arr, &an, NULL);
        int T = q.T, f = p->first[T];
        if (is_req) {
            double st = q.r;
            for (int k = 0; k < 2; k++) {
                int sl = c->slot[2 * f + k];
                if (sl >= 0 && slot_free[sl] > st)
                    st = slot_free[sl];
            }
            S->start[T] = st;
            S->end[T] = st + cost_hop_us(&c->rt[f], p->k[T] * c->cb);
            for (int k = 0; k < 2; k++) {
                int sl = c->slot[2 * f + k];
                if (sl >= 0)
                    slot_free[sl] = S->end[T];
            }
            req_push(arr, &an, (request){S->end[T], c->a->sends[f].dst, T}, NULL);
            asked[T] = 1;
            if (sender_waiter[T] >= 0) {
                int v = sender_waiter[T];
                if (S->end[T] + p->presum[v] > rq[v])
                    rq[v] = S->end[T] + p->presum[v];
                req_push(h, &hn, (request){rq[v], c->a->sends[p->first[v]].src, v}, NULL);
            }
        } else {
            /* the pair's receiving tb takes its transfers in order, each once
             * it has reduced and put in place the one before (a transfer on
             * another lane may end first: it waits for its predecessor) */
            int u = pprev[T];
            if (u >= 0 && !arrived[u]) {
                waiter[u] = T;
                continue;
            }
            got[T] = S->end[T];
            if (u >= 0 && S->ready[u] + p->place[u] > got[T])
                got[T] = S->ready[u] + p->place[u];
            arrived[T] = 1;
            double rs = got[T];
            for (int x = m0[T]; x < m0[T + 1]; x++)
                if (c->rslot[mem[x]] >= 0 && rfree[c->rslot[mem[x]]] > rs)
                    rs = rfree[c->rslot[mem[x]]];
            S->ready[T] = rs + p->redc[T];
            for (int x = m0[T]; x < m0[T + 1]; x++)
                if (c->rslot[mem[x]] >= 0)
                    rfree[c->rslot[mem[x]]] = S->ready[T];
            S->order[done++] = T;
            if (waiter[T] >= 0) {
                int w = waiter[T];
                double at = S->end[w];
                if (S->ready[T] + p->place[T] > at)
                    at = S->ready[T] + p->place[T];
                req_push(arr, &an, (request){at, c->a->sends[p->first[w]].dst, w}, NULL);
            }
        }
        for (int x = o0[T]; x < o0[T + 1]; x++) {
            const edge *ed = &e[oe[x]];
            if ((ed->kind == E_RES) != is_req)
                continue;
            double t = ed->kind == E_RES ? S->end[T] : S->ready[T] + p->pre[ed->to];
            if (t > rq[ed->to])
                rq[ed->to] = t;
            if (--need[ed->to] == 0) {
                /* the sending tb copies for it only after its previous
                 * transfer on the pair has ended */
                int v = ed->to, u = pprev[v];
                if (u >= 0 && !asked[u]) {
                    sender_waiter[u] = v;   /* asks once u has asked */
                    continue;
                }
                if (u >= 0 && S->end[u] + p->presum[v] > rq[v])
                    rq[v] = S->end[u] + p->presum[v];
                req_push(h, &hn, (request){rq[v], c->a->sends[p->first[v]].src, v}, NULL);
            }
        }
    }
    free(arr);
    free(arrived);
    free(asked);
    free(waiter);
    free(sender_waiter);
    free(h);
    free(slot_free);
    free(rq);
    free(pprev);
    free(got);
    free(rfree);
    free(m0);
    free(mem);
    free(need);
    free(o0);
    free(oe);
    free(e);
    if (done < ntr) {
        unsigned char *seen = xcalloc((size_t)sz, 1);
        for (int z = 0; z < done; z++)
            seen[S->order[z]] = 1;
        int bad = 0;
        while (seen[bad])
            bad++;
        free(seen);
        int f = p->first[bad];
        sched_free(S);
        return cycle_error(c, f, err);
    }
    for (int T = 0; T < ntr; T++)
        if (S->ready[T] + p->place[T] > S->makespan)
            S->makespan = S->ready[T] + p->place[T];
    for (int i = 0; i < c->n; i++)
        S->sum += S->end[p->tr[i]];
    S->work = (long long)ntr + ne + c->n;
    return TC_OK;
}

/* ------------------------------------------------------------ output */

static algo *make_output(const ctx *c, const part *p, const sched *S, contig_stats *st)
{
    const algo *a = c->a;
    algo *o = algo_new(a->coll, a->nranks, a->chunks_per_rank);
    if (!o)
        tc_oom();
    int *gid = xmalloc((size_t)(p->ntr > 0 ? p->ntr : 1) * sizeof *gid);
    int ng = 0, grouped = 0;
    for (int T = 0; T < p->ntr; T++) {
        gid[T] = p->k[T] >= 2 ? ng++ : -1;
        if (p->k[T] >= 2)
            grouped += p->k[T];
    }
    for (int i = 0; i < c->n; i++) {
        const algo_send *s = &a->sends[i];
        int T = p->tr[i];
        algo_send *d = algo_add_send(o, s->origin, s->index, s->src, s->dst, S->start[T],
                                     S->end[T]);
        d->reduce = s->reduce;
        d->group = gid[T];
        d->pre_us = s->pre_us;
        d->post_us = s->post_us;
        d->place_us = s->place_us;
    }
    o->predicted_us = S->makespan;
    free(gid);
    if (st) {
        st->ngroups = ng;
        st->grouped_sends = grouped;
        st->ntransfers = p->ntr;
        st->result_us = S->makespan;
    }
    return o;
}

static double input_makespan(const ctx *c)
{
    double m = 0;
    for (int i = 0; i < c->n; i++) {
        double r = c->a->sends[i].t_arrive + c->red[i];
        if (r > m)
            m = r;
    }
    return m;
}

static int replay(const ctx *c, const part *p, sched *S, tc_err *err);

/* contig_schedule() and contig_replay(): the input's groups timed by one
 * pass, asap() or the executor's arbitration. */
static int schedule_groups(const algo *in, const topo *t, double chunk_bytes, int arbitrate,
                           algo **out, tc_err *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return tc_err_set(err, TC_INPUT, "contig: no output pointer");
    ctx c;
    int rc = ctx_init(&c, in, t, chunk_bytes, err);
    if (rc != TC_OK) {
        ctx_free(&c);
        return rc;
    }
    part p;
    part_alloc(&p, c.n);
    part_from_groups(&c, &p);
    assign_slots(&c, &p);
    sched S;
    rc = arbitrate ? replay(&c, &p, &S, err) : asap(&c, &p, 0, &S, err);
    if (rc == TC_OK) {
        *out = make_output(&c, &p, &S, NULL);
        sched_free(&S);
    }
    part_free(&p);
    ctx_free(&c);
    return rc;
}

int contig_schedule(const algo *in, const topo *t, double chunk_bytes, algo **out,
                    tc_err *err)
{
    return schedule_groups(in, t, chunk_bytes, 0, out, err);
}

int contig_replay(const algo *in, const topo *t, double chunk_bytes, algo **out, tc_err *err)
{
    return schedule_groups(in, t, chunk_bytes, 1, out, err);
}

/* ------------------------------------------------------------ the grouping problem */

/* Everything about the singleton graph that grouping needs, by position q
 * in the fixed order (= transfer id of the singleton partition). */
typedef struct {
    int n;
    int *cpred;         /* [n] the send q may join (its predecessor), -1 = not a candidate */
    int *csucc;         /* [n] the candidate that may join q, -1 none */
    int ncand;
    int *cand;          /* [ncand] candidate positions, in order */
    int G;              /* max group size */
} groups;

static void groups_free(groups *g)
{
    free(g->cpred);
    free(g->csucc);
    free(g->cand);
    memset(g, 0, sizeof *g);
}

static int cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

static int pair_eligible(const ctx *c, int i, const contig_opts *o)
{
    const topo_route *r = &c->rt[i];
    if (r->kind == ROUTE_NIC && o->nic_always)
        return 1;
    return r->alpha_us >= o->alpha_frac * (r->alpha_us + c->beta[i]);
}

/* Send at position q may join the one before it when it is that send's
 * direct successor on every slot it uses, same pair, same reduce flag. */
static void find_candidates(const ctx *c, const sched *S1, const contig_opts *o, groups *g,
                            int *npairs)
{
    int n = c->n;
    g->n = n;
    g->G = o->max_group;
    g->cpred = xmalloc((size_t)n * sizeof *g->cpred);
    g->csucc = xmalloc((size_t)n * sizeof *g->csucc);
    g->cand = xmalloc((size_t)n * sizeof *g->cand);
    g->ncand = 0;
    for (int q = 0; q < n; q++)
        g->cpred[q] = g->csucc[q] = -1;
    for (int q = 0; q < n; q++) {
        int i = c->ord[q], u = -2;
        if (!pair_eligible(c, i, o))
            continue;
        for (int k = 0; k < 2; k++) {
            if (c->slot[2 * i + k] < 0)
                continue;
            int pu = S1->spred[2 * i + k];
            u = (u == -2 || u == pu) ? pu : -1;
        }
        if (u < 0)
            continue;
        const algo_send *a = &c->a->sends[i], *b = &c->a->sends[c->ord[u]];
        if (a->src != b->src || a->dst != b->dst || !a->reduce != !b->reduce)
            continue;
        g->cpred[q] = u;
        g->csucc[u] = q;
        g->cand[g->ncand++] = q;
    }
    /* distinct pairs holding candidates */
    int np = 0;
    long long *pk = xmalloc((size_t)(g->ncand > 0 ? g->ncand : 1) * sizeof *pk);
    for (int x = 0; x < g->ncand; x++) {
        const algo_send *a = &c->a->sends[c->ord[g->cand[x]]];
        pk[x] = (long long)a->src * c->t->nranks + a->dst;
    }
    qsort(pk, (size_t)g->ncand, sizeof *pk, cmp_ll);
    for (int x = 0; x < g->ncand; x++)
        np += x == 0 || pk[x] != pk[x - 1];
    free(pk);
    *npairs = np;
}

/* Sends joined with y = 1 on both sides of candidate q, plus q itself. */
static int run_length(const groups *g, const unsigned char *y, int q)
{
    int len = 1;
    for (int r = g->cpred[q]; r >= 0 && g->cpred[r] >= 0 && y[r]; r = g->cpred[r])
        len++;
    for (int r = g->csucc[q]; r >= 0 && y[r]; r = g->csucc[r])
        len++;
    return len;
}

/* The MILP's own model of joins y: the fixed order on every slot. */
static int eval_joins(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                      tc_err *err)
{
    part_from_joins(c, g->cpred, y, p);
    return asap(c, p, 0, S, err);
}

/* What the executor will make of joins y (replay()): the times every
 * decision is judged by and the output carries. */
static int eval_exec(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                     tc_err *err)
{
    part_from_joins(c, g->cpred, y, p);
    return replay(c, p, S, err);
}

static int cmp_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

/* Every rank's completion (its last data ready), sorted, latest first. */
static void rank_profile(const ctx *c, const part *p, const sched *S, double *v)
{
    int nr = c->t->nranks;
    for (int r = 0; r < nr; r++)
        v[r] = 0;
    for (int T = 0; T < p->ntr; T++) {
        int d = c->a->sends[p->first[T]].dst;
        if (S->ready[T] > v[d])
            v[d] = S->ready[T];
    }
    qsort(v, (size_t)nr, sizeof *v, cmp_desc);
}

/* Is the new schedule better: makespan not larger, and the completion
 * profile smaller in leximax order (the latest rank earlier, or as late and
 * the next one earlier, ...), or equal and the sum of arrivals smaller. */
static int profile_better(const double *nw, const double *old, int nr, double nsum,
                          double osum)
{
    if (nr > 0 && nw[0] > old[0])
        return 0;
    double tol = 1e-9 * (1 + (nr > 0 ? old[0] : 0));
    for (int r = 0; r < nr; r++) {
        if (nw[r] < old[r] - tol)
            return 1;
        if (nw[r] > old[r] + tol)
            return 0;
    }
    return nsum < osum - 1e-9 * (1 + fabs(osum));
}

/* Toggle one binary at a time; keep a change when profile_better() says so
 * (a merge that helps one direction is kept even while the other direction
 * still sets the makespan).  Deterministic: fixed visit order and a work
 * budget counted in graph elements, not seconds. */
static int local_search(const ctx *c, const groups *g, unsigned char *y, double *mk,
                        tc_err *err)
{
    int nr = c->t->nranks;
    double *cur = xmalloc((size_t)(nr > 0 ? nr : 1) * sizeof *cur);
    double *nw = xmalloc((size_t)(nr > 0 ? nr : 1) * sizeof *nw);
    part p;
    part_alloc(&p, c->n);
    sched S;
    int rc = eval_exec(c, g, y, &p, &S, err);
    if (rc != TC_OK)
        goto done;
    rank_profile(c, &p, &S, cur);
    double cur_mk = S.makespan, cur_sum = S.sum, work = (double)S.work;
    sched_free(&S);
    for (int pass = 0; pass < LS_MAX_PASSES && work < LS_WORK_BUDGET; pass++) {
        int changed = 0;
        /* move 0: toggle one binary; move 1: shift a group boundary by one
         * send (toggle a binary and its successor's when they differ) */
        for (int mv = 0; mv < 2; mv++)
            for (int x = 0; x < g->ncand && work < LS_WORK_BUDGET; x++) {
                if (lp_stop_requested()) {
                    rc = tc_err_set(err, TC_STOP, "interrupted");
                    goto done;
                }
                int q = g->cand[x], q2 = mv ? g->csucc[q] : -1;
                if (mv && (q2 < 0 || y[q] == y[q2]))
                    continue;
                if (!mv && !y[q] && run_length(g, y, q) + 1 > g->G)
                    continue;
                y[q] ^= 1;
                if (q2 >= 0)
                    y[q2] ^= 1;
                if (mv && run_length(g, y, y[q] ? q : q2) + 1 > g->G) {
                    y[q] ^= 1;          /* the grown group would be too long */
                    y[q2] ^= 1;
                    continue;
                }
                tc_err ignored;
                if (eval_exec(c, g, y, &p, &S, &ignored) != TC_OK) {
                    /* the grown group waits for its own data: not a schedule */
                    y[q] ^= 1;
                    if (q2 >= 0)
                        y[q2] ^= 1;
                    work += (double)p.ntr;
                    continue;
                }
                work += (double)S.work;
                rank_profile(c, &p, &S, nw);
                if (S.makespan <= cur_mk && profile_better(nw, cur, nr, S.sum, cur_sum)) {
                    double *t = cur;
                    cur = nw;
                    nw = t;
                    cur_mk = S.makespan;
                    cur_sum = S.sum;
                    changed = 1;
                } else {
                    y[q] ^= 1;
                    if (q2 >= 0)
                        y[q2] ^= 1;
                }
                sched_free(&S);
            }
        if (!changed)
            break;
    }
    *mk = cur_mk;
done:
    part_free(&p);
    free(cur);
    free(nw);
    return rc;
}

/* ------------------------------------------------------------ the MILP */

typedef struct {
    lp *p;
    int cz;
    int *cs, *ca, *cf, *cy;     /* [n] by position; -1 = none */
    double *lbs, *ubs, *lba, *uba;
    double *dur, *beta, *red, *alpha;  /* [n] by position, one chunk */
    int nce;                    /* work-cut chain elements, lane by lane in order */
    int *ce_q, *ce_P, *ce_M;    /* position, columns P and M */
    unsigned char *ce_first;    /* first element of its lane */
} milp;

static void milp_free(milp *m)
{
    lp_free(m->p);
    free(m->cs);
    free(m->ca);
    free(m->cf);
    free(m->cy);
    free(m->lbs);
    free(m->ubs);
    free(m->lba);
    free(m->uba);
    free(m->dur);
    free(m->beta);
    free(m->red);
    free(m->alpha);
    free(m->ce_q);
    free(m->ce_P);
    free(m->ce_M);
    free(m->ce_first);
    memset(m, 0, sizeof *m);
}

/* Bounds valid for every grouping with makespan <= T: a longest path from
 * the start with one-chunk costs and candidate edges relaxed (a send that
 * joins starts with its predecessor), and the same from the end. */
static void milp_bounds(const ctx *c, const groups *g, const sched *S1, double T, milp *m)
{
    int n = c->n;
    double *es = xcalloc((size_t)(n > 0 ? n : 1), sizeof *es);
    double *ta = xcalloc((size_t)(n > 0 ? n : 1), sizeof *ta);
    double *qq = xcalloc((size_t)(n > 0 ? n : 1), sizeof *qq);
    int *o0 = xcalloc((size_t)n + 1, sizeof *o0);
    int *oe = xmalloc((size_t)(S1->ne > 0 ? S1->ne : 1) * sizeof *oe);
    for (int x = 0; x < S1->ne; x++)
        o0[S1->e[x].from + 1]++;
    for (int q = 0; q < n; q++)
        o0[q + 1] += o0[q];
    int *fill = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *fill);
    memcpy(fill, o0, (size_t)n * sizeof *fill);
    for (int x = 0; x < S1->ne; x++)
        oe[fill[S1->e[x].from]++] = x;
    free(fill);
    for (int z = 0; z < n; z++) {
        int u = S1->order[z];
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *e = &S1->e[oe[x]];
            double w = e->kind == E_DATA ? m->dur[u] + m->red[u]
                       : g->cpred[e->to] == u ? 0 : m->dur[u];
            if (es[u] + w > es[e->to])
                es[e->to] = es[u] + w;
        }
    }
    for (int z = n - 1; z >= 0; z--) {
        int u = S1->order[z];
        double t = m->red[u];
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *e = &S1->e[oe[x]];
            double w = e->kind == E_DATA ? m->red[u] + qq[e->to]
                       : g->cpred[e->to] == u ? ta[e->to] : qq[e->to];
            if (w > t)
                t = w;
        }
        ta[u] = t;
        qq[u] = m->dur[u] + t;
    }
    free(o0);
    free(oe);
    double eps = 1e-9 * (1 + T);
    for (int q = 0; q < n; q++) {
        m->lbs[q] = es[q];
        m->ubs[q] = fmax(es[q], T - qq[q] + eps);
        m->lba[q] = es[q] + m->dur[q];
        m->uba[q] = fmax(m->lba[q], T - ta[q] + eps);
    }
    free(es);
    free(ta);
    free(qq);
}

static void row2(lp *p, int c1, double v1, int c2, double v2, double lb, double ub)
{
    int cc[2] = {c1, c2};
    double vv[2] = {v1, v2};
    lp_add_row(p, NULL, lb, ub, 2, cc, vv);
}

static void row3(lp *p, int c1, double v1, int c2, double v2, int c3, double v3, double lb,
                 double ub)
{
    int cc[3] = {c1, c2, c3};
    double vv[3] = {v1, v2, v3};
    lp_add_row(p, NULL, lb, ub, 3, cc, vv);
}

/* "after >= ready(u) + rhs_extra" where ready(u) = a_u + red_u, or, for a
 * groupable reducing u, a_u + (a_u - s_u - alpha_u) * red_u / beta_u. */
static void row_after_ready(const milp *m, int after, int u)
{
    if (m->red[u] > 0 && m->cf[u] >= 0) {
        double rho = m->red[u] / m->beta[u];
        row3(m->p, after, 1, m->ca[u], -(1 + rho), m->cs[u], rho, -rho * m->alpha[u], INFINITY);
    } else {
        row2(m->p, after, 1, m->ca[u], -1, m->red[u], INFINITY);
    }
}

/* Valid inequalities without big-M, which the LP relaxation otherwise
 * lacks: on one resource lane the transfers of a segment u..v of its fixed
 * order run one after another inside [s_u, a_v], so
 *     a_v - s_u >= beta_u + alpha_u + sum_{w in (u, v]} (beta_w + alpha_w (1 - y_w))
 * (y_w = 0 for a send that cannot join).  All segments at once, in O(chain)
 * rows: P_x is the chain's work up to x,  P_x = P_{x-1} + beta_x +
 * alpha_x (1 - y_x);  M_x = max_{u <= x} (s_u - P_u + beta_u + alpha_u),
 * as M_x >= M_{x-1} and M_x >= s_x - P_x + beta_x + alpha_x;  and
 * a_x >= P_x + M_x.  Only on lanes that hold a binary. */
static void add_work_cuts(const ctx *c, const groups *g, milp *m)
{
    int n = c->n, ns = c->nslots;
    m->nce = 0;
    m->ce_q = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_q);
    m->ce_P = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_P);
    m->ce_M = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_M);
    m->ce_first = xmalloc((size_t)2 * (n > 0 ? n : 1));
    if (g->ncand == 0)
        return;
    int *c0 = xcalloc((size_t)ns + 1, sizeof *c0);
    int *ch = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *ch);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < 2; k++)
            if (c->slot[2 * c->ord[q] + k] >= 0)
                c0[c->slot[2 * c->ord[q] + k] + 1]++;
    for (int s = 0; s < ns; s++)
        c0[s + 1] += c0[s];
    int *fill = xmalloc((size_t)(ns > 0 ? ns : 1) * sizeof *fill);
    memcpy(fill, c0, (size_t)ns * sizeof *fill);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < 2; k++) {
            int s = c->slot[2 * c->ord[q] + k];
            if (s >= 0)
                ch[fill[s]++] = q;
        }
    free(fill);
    lp *p = m->p;
    for (int s = 0; s < ns; s++) {
        int b = c0[s], e = c0[s + 1], any = 0;
        for (int x = b + 1; x < e && !any; x++)
            any = g->cpred[ch[x]] >= 0;
        if (!any)
            continue;
        int pP = -1, pM = -1;
        for (int x = b; x < e; x++) {
            int q = ch[x];
            double w = m->beta[q] + m->alpha[q];
            int cP = lp_add_col(p, NULL, 0, INFINITY, 0, 0);
            int cM = lp_add_col(p, NULL, -INFINITY, INFINITY, 0, 0);
            int yq = x > b ? m->cy[q] : -1;     /* a lane's first send joins nothing on it */
            int cc[3];
            double cv[3];
            int k = 0;
            cc[k] = cP, cv[k++] = 1;
            if (pP >= 0)
                cc[k] = pP, cv[k++] = -1;
            if (yq >= 0)
                cc[k] = yq, cv[k++] = m->alpha[q];
            lp_add_row(p, NULL, w, w, k, cc, cv);
            if (pM >= 0)
                row2(p, cM, 1, pM, -1, 0, INFINITY);
            row3(p, cM, 1, m->cs[q], -1, cP, 1, w, INFINITY);
            row3(p, m->ca[q], 1, cP, -1, cM, -1, 0, INFINITY);
            m->ce_q[m->nce] = q;
            m->ce_P[m->nce] = cP;
            m->ce_M[m->nce] = cM;
            m->ce_first[m->nce] = x == b;
            m->nce++;
            pP = cP;
            pM = cM;
        }
    }
    free(c0);
    free(ch);
}

static void milp_build(const ctx *c, const groups *g, const sched *S1, double T, milp *m)
{
    int n = c->n;
    memset(m, 0, sizeof *m);
    m->cs = xmalloc((size_t)n * sizeof *m->cs);
    m->ca = xmalloc((size_t)n * sizeof *m->ca);
    m->cf = xmalloc((size_t)n * sizeof *m->cf);
    m->cy = xmalloc((size_t)n * sizeof *m->cy);
    m->lbs = xmalloc((size_t)n * sizeof *m->lbs);
    m->ubs = xmalloc((size_t)n * sizeof *m->ubs);
    m->lba = xmalloc((size_t)n * sizeof *m->lba);
    m->uba = xmalloc((size_t)n * sizeof *m->uba);
    m->dur = xmalloc((size_t)n * sizeof *m->dur);
    m->beta = xmalloc((size_t)n * sizeof *m->beta);
    m->red = xmalloc((size_t)n * sizeof *m->red);
    m->alpha = xmalloc((size_t)n * sizeof *m->alpha);
    for (int q = 0; q < n; q++) {
        int i = c->ord[q];
        m->dur[q] = cost_hop_us(&c->rt[i], c->cb);
        m->beta[q] = c->beta[i];
        m->alpha[q] = c->rt[i].alpha_us;
        m->red[q] = c->red[i];
    }
    milp_bounds(c, g, S1, T, m);
    lp *p = m->p = lp_new("contig");
    double lbz = 0;
    for (int q = 0; q < n; q++)
        lbz = fmax(lbz, m->lba[q] + m->red[q]);
    double eps = 1e-9 * (1 + T);
    m->cz = lp_add_col(p, "z", fmin(lbz, T), T + eps, 1.0, 0);
    char name[48];
    for (int q = 0; q < n; q++) {
        snprintf(name, sizeof name, "s%d", c->ord[q]);
        m->cs[q] = lp_add_col(p, name, m->lbs[q], m->ubs[q], 0, 0);
        snprintf(name, sizeof name, "a%d", c->ord[q]);
        m->ca[q] = lp_add_col(p, name, m->lba[q], m->uba[q], 0, 0);
        m->cf[q] = m->cy[q] = -1;
        if (g->cpred[q] >= 0 || g->csucc[q] >= 0) {
            snprintf(name, sizeof name, "f%d", c->ord[q]);
            m->cf[q] = lp_add_col(p, name, m->lba[q], m->uba[q], 0, 0);
        }
        if (g->cpred[q] >= 0) {
            snprintf(name, sizeof name, "y%d", c->ord[q]);
            m->cy[q] = lp_add_col(p, name, 0, 1, 0, 1);
        }
    }
    /* a transfer lasts at least its own chunk */
    for (int q = 0; q < n; q++) {
        if (m->cf[q] >= 0) {
            row2(p, m->cf[q], 1, m->cs[q], -1, m->dur[q], INFINITY);
            row2(p, m->ca[q], 1, m->cf[q], -1, 0, INFINITY);
        } else {
            row2(p, m->ca[q], 1, m->cs[q], -1, m->dur[q], INFINITY);
        }
    }
    /* the fixed order on resources, and the chunks' arrivals */
    edge *e = xmalloc((size_t)(S1->ne > 0 ? S1->ne : 1) * sizeof *e);
    memcpy(e, S1->e, (size_t)S1->ne * sizeof *e);
    qsort(e, (size_t)S1->ne, sizeof *e, cmp_edge);
    unsigned char *has_out = xcalloc((size_t)(n > 0 ? n : 1), 1);
    for (int x = 0; x < S1->ne; x++) {
        if (x > 0 && cmp_edge(&e[x], &e[x - 1]) == 0)
            continue;
        int u = e[x].from, v = e[x].to;
        has_out[u] = 1;
        if (e[x].kind == E_DATA) {
            row_after_ready(m, m->cs[v], u);
        } else if (g->cpred[v] == u) {
            double M = fmax(0, m->uba[u] - m->lbs[v]);
            row3(p, m->cs[v], 1, m->ca[u], -1, m->cy[v], M, 0, INFINITY);
        } else {
            row2(p, m->cs[v], 1, m->ca[u], -1, 0, INFINITY);
        }
    }
    free(e);
    /* a send that joins starts, and arrives, with its group; the group's
     * bytes add up through f */
    for (int x = 0; x < g->ncand; x++) {
        int v = g->cand[x], u = g->cpred[v];
        row2(p, m->cs[v], 1, m->cs[u], -1, 0, INFINITY);
        double ME = fmax(0, m->ubs[v] - m->lbs[u]);
        row3(p, m->cs[v], 1, m->cs[u], -1, m->cy[v], ME, -INFINITY, ME);
        double MF = fmax(0, m->uba[u] + m->beta[v] - m->lba[v]);
        row3(p, m->cf[v], 1, m->cf[u], -1, m->cy[v], -MF, m->beta[v] - MF, INFINITY);
        double MA = fmax(0, m->uba[v] - m->lba[u]);
        row3(p, m->ca[u], 1, m->ca[v], -1, m->cy[v], -MA, -MA, INFINITY);
    }
    /* group size: no G binaries in a row all 1 */
    int *chain = xcalloc((size_t)(n > 0 ? n : 1), sizeof *chain);
    int *cc = xmalloc((size_t)(g->G > 0 ? g->G : 1) * sizeof *cc);
    double *cv = xmalloc((size_t)(g->G > 0 ? g->G : 1) * sizeof *cv);
    for (int x = 0; x < g->ncand; x++) {
        int v = g->cand[x], u = g->cpred[v];
        chain[v] = (g->cpred[u] >= 0 ? chain[u] : 0) + 1;
        if (chain[v] < g->G)
            continue;
        int w = v;
        for (int k = 0; k < g->G; k++, w = g->cpred[w]) {
            cc[k] = m->cy[w];
            cv[k] = 1;
        }
        lp_add_row(p, NULL, -INFINITY, g->G - 1, g->G, cc, cv);
    }
    free(chain);
    free(cc);
    free(cv);
    add_work_cuts(c, g, m);
    /* makespan: after every ready time that nothing else waits on */
    for (int q = 0; q < n; q++)
        if (!has_out[q] || m->red[q] > 0)
            row_after_ready(m, m->cz, q);
    free(has_out);
}

/* The incumbent for GLPK: the schedule of the joins y, in MILP columns. */
static double *milp_incumbent(const ctx *c, const groups *g, const milp *m,
                              const unsigned char *y, const part *p, const sched *S)
{
    int n = c->n, nc = lp_ncols(m->p);
    double *x = xcalloc((size_t)nc, sizeof *x);
    int *gpos = xcalloc((size_t)(n > 0 ? n : 1), sizeof *gpos);
    x[m->cz] = S->makespan;
    for (int q = 0; q < n; q++) {
        int T = p->tr[c->ord[q]];
        int joined = g->cpred[q] >= 0 && y[q];
        gpos[q] = joined ? gpos[g->cpred[q]] + 1 : 1;
        x[m->cs[q]] = S->start[T];
        x[m->ca[q]] = S->end[T];
        if (m->cf[q] >= 0)
            x[m->cf[q]] = fmin(S->end[T], S->start[T] + m->alpha[q] + gpos[q] * m->beta[q]);
        if (m->cy[q] >= 0)
            x[m->cy[q]] = joined ? 1 : 0;
    }
    free(gpos);
    double P = 0, M = 0;
    for (int e = 0; e < m->nce; e++) {
        int q = m->ce_q[e];
        double w = m->beta[q] + m->alpha[q];
        int yq = !m->ce_first[e] && m->cy[q] >= 0 && y[q];
        P = (m->ce_first[e] ? 0 : P) + w - (yq ? m->alpha[q] : 0);
        double cand = x[m->cs[q]] - P + w;
        M = m->ce_first[e] ? cand : fmax(M, cand);
        x[m->ce_P[e]] = P;
        x[m->ce_M[e]] = M;
    }
    return x;
}

/* ------------------------------------------------------------ stage 3 */

void contig_opts_default(contig_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit_s = 60;
    o->mip_gap = 0;
    o->quiet = 0;
    o->solver_verbose = 0;
    o->backend = LP_GLPK;
    o->alpha_frac = 0.25;
    o->nic_always = 1;
    o->max_group = MAX_CNT;
    o->local_search = 1;
    o->milp = 1;
    o->cuts = 1;
    o->heuristics = 0;
}

static int check_opts(const contig_opts *o, tc_err *err)
{
    if (isnan(o->time_limit_s) || isnan(o->mip_gap) || o->mip_gap < 0)
        return tc_err_set(err, TC_INPUT, "contig: time limit and gap must be numbers, gap >= 0");
    if (isnan(o->alpha_frac) || o->alpha_frac < 0)
        return tc_err_set(err, TC_INPUT, "contig: alpha_frac must be >= 0");
    if (o->max_group < 2 || o->max_group > MAX_CNT)
        return tc_err_set(err, TC_INPUT, "contig: max_group must be 2..%d, got %d", MAX_CNT,
                          o->max_group);
    return TC_OK;
}

static void stats_init(contig_stats *st, int n)
{
    memset(st, 0, sizeof *st);
    st->nsends = n;
    st->status = LP_UNSOLVED;
    st->objective = st->best_bound = st->gap = st->milp_exact_us = NAN;
    st->incumbent_used = -1;
}

/* Solve the MILP seeded with the joins y (makespan T); on a usable answer
 * overwrite y with its joins and set *used.  TC_OK also when the solver
 * gave nothing usable (the incumbent stays); TC_STOP on a stop request and
 * TC_INPUT when GLPK exceeded its memory limit, with err set. */
static int run_milp(const ctx *c, const groups *g, const sched *S1, unsigned char *y,
                    double T, const contig_opts *o, contig_stats *st, int *used, tc_err *err)
{
    milp m;
    milp_build(c, g, S1, T, &m);
    st->ncols = lp_ncols(m.p);
    st->nrows = lp_nrows(m.p);
    st->nnz = lp_nnz(m.p);
    if (!o->quiet)
        fprintf(stderr,
                "contig: %d sends, %d candidates on %d pairs; MILP %d columns (%d binary), "
                "%d rows, %d nonzeros; incumbent %.4g us (no groups %.4g us)\n",
                c->n, g->ncand, st->candidate_pairs, st->ncols, g->ncand, st->nrows, st->nnz,
                T, st->ungrouped_us);
    part p;
    part_alloc(&p, c->n);
    sched S;
    tc_err e;
    *used = 0;
    if (eval_joins(c, g, y, &p, &S, &e) != TC_OK) {     /* cannot happen: checked before */
        snprintf(st->msg, sizeof st->msg, "incumbent not schedulable: %.200s", e.msg);
        part_free(&p);
        milp_free(&m);
        return TC_OK;
    }
    double *x = milp_incumbent(c, g, &m, y, &p, &S);
    sched_free(&S);
    part_free(&p);
    lp_opts lo;
    lp_opts_init(&lo);
    lo.time_limit_s = o->time_limit_s;
    lo.mip_gap = o->mip_gap;
    lo.presolve = 0;
    lo.verbose = o->solver_verbose;
    lo.backend = o->backend;
    lo.incumbent = x;
    lo.cuts = o->cuts;
    lo.heuristics = o->heuristics;
    lo.mem_limit_mb = o->mem_limit_mb;
    lp_result r;
    int rc = lp_solve(m.p, &lo, &r, &e);
    st->seconds = r.seconds;
    st->status = r.status;
    st->objective = r.objective;
    st->best_bound = r.best_bound;
    st->gap = r.gap;
    st->incumbent_used = r.incumbent_used;
    st->nodes = r.nodes;
    int out = TC_OK;
    if (rc == TC_STOP || (rc != TC_OK && r.out_of_memory)) {
        out = tc_err_set(err, rc, "contiguity MILP: %s", e.msg);
        snprintf(st->msg, sizeof st->msg, "%.200s", e.msg);
    } else if (rc != TC_OK) {
        snprintf(st->msg, sizeof st->msg, "%s failed (%.200s); kept the incumbent",
                 lp_backend_name(o->backend), e.msg);
    } else if (r.status == LP_OPTIMAL || r.status == LP_FEASIBLE) {
        for (int q = 0; q < c->n; q++)
            if (m.cy[q] >= 0)
                y[q] = lp_value(m.p, m.cy[q]) > 0.5;
        *used = 1;
        snprintf(st->msg, sizeof st->msg, "%s: %.200s", lp_backend_name(o->backend), r.msg);
    } else {
        snprintf(st->msg, sizeof st->msg, "%s gave no solution (%s); kept the incumbent",
                 lp_backend_name(o->backend), lp_status_name(r.status));
    }
    free(x);
    milp_free(&m);
    return out;
}

/* Makespan of joins y as the executor makes it (exec = 1) or in the MILP's
 * fixed-order model (exec = 0). */
static int makespan_of(const ctx *c, const groups *g, const unsigned char *y, int exec,
                       double *mk, tc_err *err)
{
    part p;
    part_alloc(&p, c->n);
    sched S;
    int rc = exec ? eval_exec(c, g, y, &p, &S, err) : eval_joins(c, g, y, &p, &S, err);
    if (rc == TC_OK) {
        *mk = S.makespan;
        sched_free(&S);
    }
    part_free(&p);
    return rc;
}

static int solve_groups(const ctx *c, const groups *g, const sched *S1, const contig_opts *o,
                        unsigned char *y, contig_stats *st, tc_err *err)
{
    double mk;
    int rc = makespan_of(c, g, y, 1, &mk, err);
    if (rc == TC_OK && o->local_search && g->ncand > 0)
        rc = local_search(c, g, y, &mk, err);
    if (rc != TC_OK)
        return rc;
    st->incumbent_us = mk;
    if (!o->milp || g->ncand == 0) {
        snprintf(st->msg, sizeof st->msg, "%s",
                 g->ncand == 0 ? "no grouping candidates: no MILP needed"
                               : "MILP off: local search only");
        return TC_OK;
    }
    /* the MILP's incumbent and bounds are in its own (fixed-order) model */
    double T;
    tc_err ignored;
    if (makespan_of(c, g, y, 0, &T, &ignored) != TC_OK) {
        snprintf(st->msg, sizeof st->msg,
                 "incumbent has no fixed-order schedule: MILP skipped, local search only");
        return TC_OK;
    }
    unsigned char *ym = xmalloc((size_t)c->n);
    memcpy(ym, y, (size_t)c->n);
    int used = 0;
    rc = run_milp(c, g, S1, ym, T, o, st, &used, err);
    if (rc != TC_OK) {
        free(ym);
        return rc;
    }
    if (used) {
        double mk2 = INFINITY;
        rc = makespan_of(c, g, ym, 1, &mk2, &ignored);
        if (rc == TC_OK) {
            st->milp_exact_us = mk2;
            if (o->local_search)
                rc = local_search(c, g, ym, &mk2, err);
            if (rc != TC_OK) {
                free(ym);
                return rc;
            }
            if (mk2 <= mk)
                memcpy(y, ym, (size_t)c->n);
        }
    }
    free(ym);
    return TC_OK;
}

int contig_solve(const algo *in, const topo *t, double chunk_bytes, const contig_opts *o,
                 algo **out, contig_stats *st, tc_err *err)
{
    double t0 = wall_s();
    contig_opts dflt;
    if (!o) {
        contig_opts_default(&dflt);
        o = &dflt;
    }
    contig_stats local;
    if (!st)
        st = &local;
    stats_init(st, in ? in->nsends : 0);
    if (out)
        *out = NULL;
    if (!out)
        return tc_err_set(err, TC_INPUT, "contig: no output pointer");
    int rc = check_opts(o, err);
    if (rc != TC_OK)
        return rc;
    ctx c;
    rc = ctx_init(&c, in, t, chunk_bytes, err);
    if (rc != TC_OK) {
        ctx_free(&c);
        return rc;
    }
    st->input_us = input_makespan(&c);
    part p1;
    part_alloc(&p1, c.n);
    part_from_joins(&c, NULL, NULL, &p1);
    assign_slots(&c, &p1);
    sched S1;
    rc = asap(&c, &p1, 1, &S1, err);
    part_free(&p1);
    if (rc != TC_OK) {
        ctx_free(&c);
        return rc;
    }
    st->ungrouped_us = S1.makespan;
    groups g;
    find_candidates(&c, &S1, o, &g, &st->candidate_pairs);
    st->candidates = g.ncand;
    unsigned char *y = xcalloc((size_t)(c.n > 0 ? c.n : 1), 1);
    rc = solve_groups(&c, &g, &S1, o, y, st, err);
    if (rc == TC_OK) {
        part p;
        part_alloc(&p, c.n);
        sched S;
        rc = eval_exec(&c, &g, y, &p, &S, err);
        if (rc == TC_OK) {
            *out = make_output(&c, &p, &S, st);
            sched_free(&S);
        }
        part_free(&p);
    }
    free(y);
    groups_free(&g);
    sched_free(&S1);
    ctx_free(&c);
    st->total_seconds = wall_s() - t0;
    int failed = st->status == LP_UNSOLVED && st->ncols > 0;
    if (rc == TC_OK && !o->quiet)
        fprintf(stderr,
                "contig: %s: makespan %.4g us (input %.4g, no groups %.4g, bound %.4g, gap "
                "%.3g), %d groups holding %d of %d sends; %s %.2f s, total %.2f s%s%s\n",
                failed ? "MILP failed" : st->status == LP_UNSOLVED ? "no MILP"
                                                                   : lp_status_name(st->status),
                st->result_us, st->input_us, st->ungrouped_us, st->best_bound, st->gap,
                st->ngroups, st->grouped_sends, st->nsends, lp_backend_name(o->backend),
                st->seconds, st->total_seconds, failed ? "; " : "", failed ? st->msg : "");
    return rc;
}
