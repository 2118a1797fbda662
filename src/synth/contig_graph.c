/* contig_graph.c — stage 3's precedence graph and its earliest times.
 *
 * The input read into a context (each send's route and costs, the fixed
 * order, the data dependencies, the reduce slots), the sends split into
 * transfers (a partition: from joins, or from the input's own groups), the
 * resource-lane slots each transfer holds, and contig_asap(): one
 * longest-path pass over the transfers with the fixed order kept on every
 * slot.  That pass is the MILP's model and contig_schedule(); the
 * executor's own timing of the same graph is in contig_replay.c. */
#include "contig_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../model/cost.h"

#define DEP_TOL 1e-7            /* relative slack when matching arrivals to sends */

/* ------------------------------------------------------------ context: sends, order, data */

void contig_ctx_free(ctx *c)
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
    free(c->pair);
    free(c->chain);
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

int contig_cmp_chain_key(const void *x, const void *y)
{
    const chain_key *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->T > b->T) - (a->T < b->T);
}

/* Numbers the distinct keys key[0..n-1] 0, 1, ... in key order: id[i] is
 * key[i]'s number (a new array), *nid how many there are.  The reduction
 * slots, and the pairs and out-slot chains with which the hot replay finds
 * "the previous send with the same key" by an array instead of a sort. */
static int *compact_ids(const long long *key, int n, int *nid)
{
    int *id = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *id);
    chain_key *k = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *k);
    for (int i = 0; i < n; i++)
        k[i] = (chain_key){key[i], i};
    qsort(k, (size_t)n, sizeof *k, contig_cmp_chain_key);
    int m = 0;
    for (int q = 0; q < n; q++) {
        if (q > 0 && k[q].key != k[q - 1].key)
            m++;
        id[k[q].T] = m;
    }
    *nid = n > 0 ? m + 1 : 0;
    free(k);
    return id;
}

/* Reductions into one chunk at one rank read and write the same buffer
 * slot, so the lowering orders them (a dependency chain) and the executor
 * performs them one after another: number those (dst, chunk) places. */
static void reduce_slots(ctx *c)
{
    const algo *a = c->a;
    int n = c->n, nk = 0;
    c->rslot = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *c->rslot);
    long long *key = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *key);
    int *send = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *send);
    long long C = (long long)a->chunks_per_rank + 1, N = (long long)a->nranks + 1;
    for (int i = 0; i < n; i++) {
        const algo_send *s = &a->sends[i];
        c->rslot[i] = -1;
        if (s->reduce) {
            key[nk] = ((long long)s->dst * N + s->origin + 1) * C + s->index;
            send[nk++] = i;
        }
    }
    int *id = compact_ids(key, nk, &c->nrslots);
    for (int q = 0; q < nk; q++)
        c->rslot[send[q]] = id[q];
    free(id);
    free(send);
    free(key);
}

int contig_ctx_init(ctx *c, const algo *a, const topo *t, double cb, tc_err *err)
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
                                                                        -1, 0, 0, 0};
        int rc = check_send(c, i, err);
        if (rc != TC_OK)
            return rc;
        c->beta[i] = cb / (c->rt[i].bw_gbps * 1e3);
        c->red[i] = s->reduce ? cost_reduce_tail_us(t, COST_SIMPLE, c->rt[i].bw_gbps, cb) : 0;
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
    long long *pk = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *pk);
    /* a pair is a connection: (src, dst) and the send's lane (algo.h),
     * which the lowering puts on a channel of its own */
    for (int i = 0; i < n; i++)
        pk[i] = ((long long)a->sends[i].src * a->nranks + a->sends[i].dst) * ((long long)n + 1) +
                (a->sends[i].lane > 0 ? a->sends[i].lane : 0);
    c->pair = compact_ids(pk, n, &c->npairs);
    free(pk);
    return build_deps(c, err);
}

/* ------------------------------------------------------------ partitions into transfers */

void contig_part_alloc(part *p, int n)
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

void contig_part_free(part *p)
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
void contig_part_from_joins(const ctx *c, const int *pred, const unsigned char *join, part *p)
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
void contig_part_from_groups(const ctx *c, part *p)
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
void contig_assign_slots(ctx *c, const part *p)
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
    long long *ck = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *ck);
    for (int i = 0; i < n; i++)
        ck[i] = (long long)c->a->sends[i].src * (c->nslots + 1) + c->slot[2 * i] + 1;
    free(c->chain);
    c->chain = compact_ids(ck, n, &c->nchains);
    free(ck);
    free(lane);
}

/* ------------------------------------------------------------ earliest times */

void contig_sched_free(sched *S)
{
    free(S->start);
    free(S->end);
    free(S->ready);
    free(S->order);
    free(S->e);
    free(S->spred);
    memset(S, 0, sizeof *S);
}

int contig_cycle_error(const ctx *c, int i, tc_err *err)
{
    const algo_send *s = &c->a->sends[i];
    return tc_err_set(err, TC_INPUT,
                      "contig: the order has a cycle: send %d (chunk %d:%d, %d -> %d, t_send %g) "
                      "waits for itself through resource orders and chunk arrivals", i,
                      s->origin, s->index, s->src, s->dst, s->t_send);
}

double contig_hold_us(const ctx *c, const part *p, int T)
{
    return cost_hold_us(c->t, &c->rt[p->first[T]], p->k[T] * c->cb);
}

/* Longest path over the transfers of p.  keep: also return the edges (and
 * every send's slot predecessors).  TC_INPUT on a cycle. */
int contig_asap(const ctx *c, const part *p, int keep, sched *S, tc_err *err)
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
                rc = contig_cycle_error(c, i, err);
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
        double freed = S->start[u] + contig_hold_us(c, p, u);
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *ed = &e[oe[x]];
            double t = ed->kind == E_RES ? freed : S->ready[u] + p->pre[ed->to];
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
        contig_sched_free(S);
        return contig_cycle_error(c, p->first[bad], err);
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
