/* route.c — stage 1: the routing MILP, its heuristic seed and a routing
 * checker (contract in route.h).
 *
 * Order of work in route_solve():
 *   1. the model's skeleton (rmodel, route_graph.c): every directed hop of
 *      the topology with its cost and resources, per chunk the candidate
 *      hops (the sketch's graph pruned by hop distance) and the cheapest
 *      arrival at each rank over them, the symmetry generators, chunk
 *      orbits and, per chunk, the rank permutation that carries its orbit
 *      representative to it;
 *   2. the heuristic routing (route_trees.c): one load-aware
 *      earliest-finish tree per orbit representative, carried to the rest
 *      of the orbit; stage 2 (order.h) schedules it, which gives the big-M
 *      horizon U;
 *   3. the MILP (route_milp.c) with substituted symmetry (union-find over
 *      the generators' images of every variable slot, one column per
 *      class) and the heuristic as the incumbent;
 *   4. GLPK, then the routing read back (dead-end relays dropped) and
 *      checked; anything unusable falls back to the heuristic.
 * One attempt (solve_once) runs these as phases, each a function:
 * seed_heuristic (1, 2), offer_coarse and offer_spare_nics (better seeds:
 * route.h), build_milp (3), solve_milp and read_routing (4); a symmetry
 * the seed cannot keep asks for a second attempt without it.
 * This file holds the public calls, the checker and that order; the
 * shared types are in route_int.h.  Nothing here keeps state between
 * calls. */
#include "route_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "order.h"
#include "../util/mem.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void route_opts_init(route_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slack = 1;
    o->use_symmetry = 1;
    o->seed = 1;
    o->cuts = 1;
    o->backend = LP_GLPK;
}

/* ------------------------------------------------------------ checking */

/* Room for judging one chunk at a time. */
typedef struct {
    int *from;              /* [n] the send bringing the chunk to each rank, -1 */
    int *dr, *oi, *queue;   /* [n] */
    int *head;              /* [n] first send (of the chunk's) out of each rank, -1 */
    int *next;              /* [sends of a chunk] the next one out of the same rank */
    unsigned char *has;     /* [n] the rank holds the chunk */
} chk_room;

/* Every rank the chunk reaches from its origin o, in w->has (a
 * breadth-first search over its m sends idx[], through the lists of
 * sends by sender); the number of sends that reach a new rank. */
static int chunk_reach(const algo *a, const int *idx, int m, int o, chk_room *w)
{
    for (int j = m - 1; j >= 0; j--) {
        int x = a->sends[idx[j]].src;
        w->next[j] = w->head[x];
        w->head[x] = j;
    }
    int head = 0, tail = 0, reached = 0;
    w->has[o] = 1;
    w->queue[tail++] = o;
    while (head < tail) {
        int x = w->queue[head++];
        for (int j = w->head[x]; j >= 0; j = w->next[j]) {
            int d = a->sends[idx[j]].dst;
            if (!w->has[d]) {
                w->has[d] = 1;
                w->queue[tail++] = d;
                reached++;
            }
        }
    }
    return reached;
}

static int check_chunk(const algo *a, const sketch *s, const topo *t, coll_kind k, int c,
                       const int *idx, int m, chk_room *w, tc_err *err)
{
    int n = t->nranks, cpr = a->chunks_per_rank, rpn = t->ranks_per_node;
    int o = c / cpr, i = c % cpr, C = k == COLL_ALLTOALL ? cpr : n * cpr;
    int *from = w->from;
    for (int v = 0; v < n; v++)
        from[v] = -1;
    for (int j = 0; j < m; j++) {
        const algo_send *x = &a->sends[idx[j]];
        if (x->dst == o)
            return tc_err_set(err, TC_WRONG, "send %d: chunk (%d, %d) returns to its origin",
                              idx[j], o, i);
        if (from[x->dst] >= 0)
            return tc_err_set(err, TC_WRONG, "sends %d and %d: rank %d receives chunk (%d, %d) "
                              "twice", from[x->dst], idx[j], x->dst, o, i);
        from[x->dst] = idx[j];
        topo_route rt = topo_route_of(t, x->src, x->dst);
        if (rt.kind == ROUTE_NONE || rt.kind == ROUTE_SELF)
            return tc_err_set(err, TC_WRONG, "send %d: no route from rank %d to rank %d",
                              idx[j], x->src, x->dst);
        int ns = x->src / rpn, nd = x->dst / rpn, no = o / rpn;
        if (s && ns != nd) {
            if (ns != no)
                return tc_err_set(err, TC_WRONG, "send %d: chunk (%d, %d) crosses from node %d, "
                                  "not from its origin's node %d", idx[j], o, i, ns, no);
            if (!sketch_internode_ok(s, rpn, x->src % rpn, x->dst % rpn))
                return tc_err_set(err, TC_WRONG, "send %d: %d -> %d crosses nodes on a pair "
                                  "(local %d -> %d) the sketch does not allow", idx[j], x->src,
                                  x->dst, x->src % rpn, x->dst % rpn);
            if (!sketch_leaves_via(s, rpn, o % rpn, x->src % rpn))
                return tc_err_set(err, TC_WRONG, "send %d: chunk (%d, %d) leaves its node "
                                  "through rank %d, not one of its senders", idx[j], o, i,
                                  x->src);
        }
    }
    /* every send reachable from the origin */
    int rc = TC_OK;
    if (chunk_reach(a, idx, m, o, w) != m)
        for (int j = 0; j < m && rc == TC_OK; j++) {
            const algo_send *y = &a->sends[idx[j]];
            if (!w->has[y->src])
                rc = tc_err_set(err, TC_WRONG, "send %d: rank %d forwards chunk (%d, %d), "
                                "which it never receives", idx[j], y->src, o, i);
        }
    int nd = coll_in_dests(k, n, C, o, i, w->dr, w->oi);
    for (int j = 0; j < nd && rc == TC_OK; j++)
        if (w->dr[j] != o && !w->has[w->dr[j]])
            rc = tc_err_set(err, TC_WRONG, "chunk (%d, %d) never reaches rank %d", o, i,
                            w->dr[j]);
    /* leave the room as found */
    for (int j = 0; j < m; j++) {
        w->head[a->sends[idx[j]].src] = -1;
        w->has[a->sends[idx[j]].dst] = 0;
    }
    w->has[o] = 0;
    return rc;
}

int route_check(const algo *a, const sketch *s, const topo *t, coll_kind k, tc_err *err)
{
    if (!a || !t)
        return tc_err_set(err, TC_INPUT, "route check: no %s given", a ? "topology" : "algo");
    if (k != COLL_ALLGATHER && k != COLL_ALLTOALL)
        return tc_err_set(err, TC_INPUT, "route check: %s routings are not judged here",
                          coll_name(k));
    int n = t->nranks, cpr = a->chunks_per_rank;
    if (a->nranks != n || cpr < 1 || (k == COLL_ALLTOALL && cpr % n != 0))
        return tc_err_set(err, TC_INPUT, "route check: the algo has %d ranks and %d chunks per "
                          "rank, which does not fit %s over the %d ranks of %s", a->nranks, cpr,
                          coll_name(k), n, t->name);
    if (s && s->nnodes != t->nnodes)
        return tc_err_set(err, TC_INPUT, "route check: sketch for %d nodes, topology has %d",
                          s->nnodes, t->nnodes);
    long long nch = (long long)n * cpr;
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        if (x->origin < 0 || x->origin >= n || x->index < 0 || x->index >= cpr || x->src < 0 ||
            x->src >= n || x->dst < 0 || x->dst >= n || x->src == x->dst)
            return tc_err_set(err, TC_INPUT, "send %d: chunk (%d, %d) %d -> %d is out of range",
                              j, x->origin, x->index, x->src, x->dst);
    }
    /* sends grouped by chunk (counting sort) */
    int *start = xcalloc((size_t)nch + 1, sizeof *start);
    int *idx = xmalloc(((size_t)a->nsends + 1) * sizeof *idx);
    for (int j = 0; j < a->nsends; j++)
        start[(long long)a->sends[j].origin * cpr + a->sends[j].index + 1]++;
    for (long long c = 0; c < nch; c++)
        start[c + 1] += start[c];
    int *fill = xmalloc(((size_t)nch + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)nch + 1) * sizeof *fill);
    for (int j = 0; j < a->nsends; j++)
        idx[fill[(long long)a->sends[j].origin * cpr + a->sends[j].index]++] = j;
    free(fill);
    int most = 0;
    for (long long c = 0; c < nch; c++)
        if (start[c + 1] - start[c] > most)
            most = start[c + 1] - start[c];
    chk_room w;
    w.from = xmalloc((size_t)n * sizeof *w.from);
    w.dr = xmalloc((size_t)n * sizeof *w.dr);
    w.oi = xmalloc((size_t)n * sizeof *w.oi);
    w.queue = xmalloc(((size_t)n + 1) * sizeof *w.queue);
    w.head = xmalloc((size_t)n * sizeof *w.head);
    w.next = xmalloc(((size_t)most + 1) * sizeof *w.next);
    w.has = xcalloc((size_t)n, 1);
    for (int v = 0; v < n; v++)
        w.head[v] = -1;
    int rc = TC_OK;
    for (long long c = 0; c < nch && rc == TC_OK; c++)
        rc = check_chunk(a, s, t, k, (int)c, idx + start[c], start[c + 1] - start[c], &w, err);
    free(start);
    free(idx);
    free(w.from);
    free(w.dr);
    free(w.oi);
    free(w.queue);
    free(w.head);
    free(w.next);
    free(w.has);
    return rc;
}

/* ------------------------------------------------------------ solving */

static void progress(const route_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(const route_opts *o, const char *fmt, ...)
{
    if (o->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("route: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int count_connections(const algo *a, const topo *t)
{
    int n = t->nranks, cnt = 0;
    unsigned char *seen = xcalloc((size_t)n * n, 1);
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        size_t q = (size_t)x->src * n + x->dst;
        if (seen[q])
            continue;
        seen[q] = 1;
        if (topo_route_of(t, x->src, x->dst).kind == ROUTE_SWITCH)
            cnt++;
    }
    free(seen);
    return cnt;
}

/* ------------------------------------------------------------ public */

static void stats_reset(route_stats *st)
{
    memset(st, 0, sizeof *st);
    st->status = LP_UNSOLVED;
    st->objective = st->best_bound = st->gap = st->time_us = NAN;
    st->heur_makespan_us = st->heur_relaxed_us = st->heur_objective = NAN;
    st->coarse_makespan_us = NAN;
    st->incumbent_used = -1;
}

int route_heuristic(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                    const route_opts *o, algo **out, tc_err *err)
{
    route_opts dflt;
    if (!o) {
        route_opts_init(&dflt);
        o = &dflt;
    }
    *out = NULL;
    rmodel M;
    int rc = route_rmodel_build(&M, s, t, k, chunk_bytes, o, err);
    if (rc)
        return rc;
    trees H;
    route_trees_init(&H, &M);
    route_heuristic_trees(&M, &H);
    *out = route_trees_to_algo(&M, &H);
    route_trees_free(&H);
    route_rmodel_free(&M);
    return TC_OK;
}

/* The coarse routing's trees carried to M's chunks (route.h, A COARSE
 * SEED): per orbit representative, the tree of the coarse chunk it is a
 * piece of, then carried to its orbit.  0 (T untouched but for -1s) if the
 * chunkups do not divide or a hop is not a candidate of its piece. */
static int coarse_trees(const rmodel *M, const algo *a, trees *T)
{
    int n = M->nranks, a2a = M->coll == COLL_ALLTOALL;
    if (!a || a->nranks != n || a->coll != M->coll)
        return 0;
    int ccpr = a->chunks_per_rank, ckup = a2a ? ccpr / n : ccpr;
    if (ckup < 1 || (a2a && ccpr % n) || M->chunkup % ckup || ckup == M->chunkup)
        return 0;
    int f = M->chunkup / ckup;
    int *src = xmalloc((size_t)n * ccpr * n * sizeof *src);
    for (size_t i = 0; i < (size_t)n * ccpr * n; i++)
        src[i] = -1;
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        if (x->origin < 0 || x->origin >= n || x->index < 0 || x->index >= ccpr ||
            x->dst < 0 || x->dst >= n) {
            free(src);
            return 0;
        }
        src[((size_t)x->origin * ccpr + x->index) * n + x->dst] = x->src;
    }
    int ok = 1;
    for (int c = 0; c < M->nchunks && ok; c++) {
        if (M->orbit_rep[c] != c)
            continue;
        int i = c % M->chunks_per_rank;
        int ci = a2a ? (i / M->chunkup) * ckup + (i % M->chunkup) / f : i / f;
        const int *sv = &src[((size_t)origin_of(M, c) * ccpr + ci) * n];
        for (int v = 0; v < n && ok; v++) {
            if (sv[v] < 0)
                continue;
            int hi = M->hop_of[sv[v] * n + v];
            ok = hi >= 0 && slot_of(M, c, hi) >= 0;
            if (ok)
                T->par[(size_t)c * n + v] = hi;
        }
        for (int q = M->orbit_start[c]; q < M->orbit_start[c + 1] && ok; q++) {
            int m = M->orbit[q];
            if (m == c)
                continue;
            route_carry_tree(M, T, c, m);
            for (int v = 0; v < n && ok; v++) {
                int hi = T->par[(size_t)m * n + v];
                ok = hi < 0 || slot_of(M, m, hi) >= 0;
            }
        }
    }
    free(src);
    if (!ok)
        return 0;
    int *order = xmalloc((size_t)n * sizeof *order);
    for (int c = 0; c < M->nchunks; c++)
        route_tree_arrivals(M, T, c, order);
    free(order);
    return 1;
}

/* Stage 2's makespan of trees T, or INFINITY if they are not a routing of
 * the collective that keeps the sketch's rules. */
static double trees_makespan(const rmodel *M, const trees *T, const sketch *s, const topo *t,
                             coll_kind k, double bytes, tc_err *err)
{
    algo *a = route_trees_to_algo(M, T), *sched = NULL;
    tc_err e;
    double ms = INFINITY;
    if (route_check(a, s, t, k, &e) == TC_OK &&
        order_schedule(a, t, bytes, NULL, &sched, NULL, err) == TC_OK)
        ms = sched->predicted_us;
    algo_free(sched);
    algo_free(a);
    return ms;
}

/* Slots the heuristic trees use. */
static unsigned char *used_slots(const rmodel *M, const trees *H)
{
    int n = M->nranks;
    unsigned char *used = xcalloc((size_t)M->cand_start[M->nchunks] + 1, 1);
    for (int c = 0; c < M->nchunks; c++)
        for (int v = 0; v < n; v++) {
            int hi = H->par[(size_t)c * n + v];
            int sl = hi < 0 ? -1 : slot_of(M, c, hi);
            if (sl >= 0)
                used[sl] = 1;
        }
    return used;
}

typedef struct {
    const sketch *s;
    const topo *t;
    coll_kind k;
    double bytes;
    const route_opts *o;
    route_stats *st;
    double t0;
} job;

/* 1 if v is u or an ancestor of u on tree par (walks at most n hops). */
static int is_ancestor(const rmodel *M, const int *par, int v, int u)
{
    for (int steps = 0; u >= 0 && steps <= M->nranks; steps++) {
        if (u == v)
            return 1;
        u = par[u] >= 0 ? M->hops[par[u]].u : -1;
    }
    return 0;
}

/* Copy representative c's tree to the rest of its orbit. */
static void carry_orbit(const rmodel *M, trees *T, int c)
{
    for (int q = M->orbit_start[c]; q < M->orbit_start[c + 1]; q++)
        if (M->orbit[q] != c)
            route_carry_tree(M, T, c, M->orbit[q]);
}

/* Spare NIC capacity (route.h, SPARE NICS): moves on one orbit
 * representative's tree c (carried to its orbit):
 *   copy    a rank v fed by a relay p of its own node gets c straight
 *           across the NICs instead, keeping its children, or leaving them
 *           to p (spliced out: v's port no longer forwards c);
 *   uncopy  a leaf v fed across the NICs, where c also enters v's node
 *           elsewhere, is fed by a rank x of its node instead, as a new
 *           child of x or between x and one of x's children.
 * A move is kept if stage 2's makespan does not grow; then an uncopy on one
 * representative with a copy on another, kept if together they shorten it
 * (a crossing moved from one chunk to another: on DGX-2 x2 at chunkup 2
 * the chunkup-1 routing gives both halves of a chunk the same two
 * crossings, and the ports are balanced only when each GPU has one half
 * that crosses twice).  The trees are kept only if the result is shorter
 * than at the start.  The schedules tried are bounded by a count (at most
 * SPARE_EVALS, and SPARE_WORK sends scheduled in all), in a fixed order, so
 * the result does not depend on time. */
#define SPARE_EVALS 3000
#define SPARE_WORK 6e6
#define SPARE_PASSES 3

typedef struct {
    int v, h, w, hw;        /* par[v] = h; and par[w] = hw where w >= 0 */
    int splice;             /* copy: v's children go to v's old parent */
} spare_move;

typedef struct {
    const job *J;
    const rmodel *M;
    trees *T;
    double cur;
    int evals, max_evals;
} spare;

static int holds(const rmodel *M, const int *par, int c, int u)
{
    return u == origin_of(M, c) || par[u] >= 0;
}

/* 1 if c enters v's node through some rank other than v. */
static int enters_elsewhere(const rmodel *M, const int *par, int v)
{
    for (int x = 0; x < M->nranks; x++)
        if (x != v && node_of(M, x) == node_of(M, v) && par[x] >= 0 && M->hops[par[x]].inter)
            return 1;
    return 0;
}

/* Apply move m to tree par of chunk c; 0 (par partly changed: the caller
 * restores it) if a spliced child cannot go to v's old parent. */
static int spare_apply(const rmodel *M, int c, int *par, const spare_move *m)
{
    int n = M->nranks, p = par[m->v] >= 0 ? M->hops[par[m->v]].u : -1;
    par[m->v] = m->h;
    if (m->w >= 0)
        par[m->w] = m->hw;
    for (int w = 0; w < n && m->splice; w++) {
        if (w == m->v || par[w] < 0 || M->hops[par[w]].u != m->v)
            continue;
        int hw = p >= 0 ? M->hop_of[p * n + w] : -1;
        if (hw < 0 || slot_of(M, c, hw) < 0)
            return 0;
        par[w] = hw;
    }
    return 1;
}

/* The moves of representative c at v, into out (room for 2n + 2 * in-degree);
 * returns how many. */
static int spare_moves(const rmodel *M, const int *par, int c, int v, spare_move *out)
{
    int n = M->nranks, k = 0;
    if (node_of(M, v) == node_of(M, origin_of(M, c)) || par[v] < 0)
        return 0;
    if (!M->hops[par[v]].inter) {
        for (int q = M->in_start[v]; q < M->in_start[v + 1]; q++) {
            int h = M->in_hop[q], u = M->hops[h].u;
            if (!M->hops[h].inter || slot_of(M, c, h) < 0 || !holds(M, par, c, u) ||
                is_ancestor(M, par, v, u))
                continue;
            out[k++] = (spare_move){v, h, -1, -1, 0};
            out[k++] = (spare_move){v, h, -1, -1, 1};
        }
        return k;
    }
    if (!enters_elsewhere(M, par, v))
        return 0;
    for (int w = 0; w < n; w++)
        if (par[w] >= 0 && M->hops[par[w]].u == v)
            return 0;       /* uncopy only a leaf */
    for (int x = 0; x < n; x++) {
        int hx = M->hop_of[x * n + v];
        if (x == v || node_of(M, x) != node_of(M, v) || !holds(M, par, c, x) || hx < 0 ||
            slot_of(M, c, hx) < 0)
            continue;
        out[k++] = (spare_move){v, hx, -1, -1, 0};
        for (int w = 0; w < n; w++) {
            int hw = M->hop_of[v * n + w];
            if (w != v && par[w] >= 0 && M->hops[par[w]].u == x && hw >= 0 &&
                slot_of(M, c, hw) >= 0)
                out[k++] = (spare_move){v, hx, w, hw, 0};
        }
    }
    return k;
}

/* Stage 2's makespan with the moves applied (representatives carried). */
static double spare_eval(spare *S)
{
    tc_err e;
    S->evals++;
    return trees_makespan(S->M, S->T, S->J->s, S->J->t, S->J->k, S->J->bytes, &e);
}

/* 1 if the moves are worth trying: several nodes, and a chunk costs a NIC
 * at least its alpha in bytes.  Below that a chunk's time is its latency,
 * not a share of the NIC, and a second crossing only adds alpha (ndv2-x2-sk-3
 * AllReduce at 64 KiB: 32.7 -> 35.4 us with the moves). */
static int spare_worth(const topo *t, double bytes)
{
    if (t->nnodes < 2)
        return 0;
    for (int x = 0; x < t->nnics; x++)
        if (bytes / (t->nics[x].bw_gbps * 1e3) >= t->nics[x].alpha_us)
            return 1;
    return 0;
}

/* Stage 2's makespan with move m applied to representative c (carried to
 * its orbit); INFINITY if the move does not apply.  The caller undoes it
 * with spare_undo when it is not kept. */
static double spare_move_eval(spare *S, int c, int *par, const spare_move *m)
{
    if (!spare_apply(S->M, c, par, m))
        return INFINITY;
    carry_orbit(S->M, S->T, c);
    return spare_eval(S);
}

/* Representative c's tree back to save, carried to its orbit. */
static void spare_undo(spare *S, int c, int *par, const int *save)
{
    memcpy(par, save, (size_t)S->M->nranks * sizeof *par);
    carry_orbit(S->M, S->T, c);
}

/* Returns 1 if T changed (and *makespan with it). */
static int spare_nics(const job *J, const rmodel *M, trees *T, double *makespan)
{
    int n = M->nranks, cap = 4 * n + 8;
    size_t sz = (size_t)M->nchunks * n;
    int *keep = xmalloc(sz * sizeof *keep);
    int *s1 = xmalloc((size_t)n * sizeof *s1), *s2 = xmalloc((size_t)n * sizeof *s2);
    spare_move *m1 = xmalloc((size_t)cap * sizeof *m1), *m2 = xmalloc((size_t)cap * sizeof *m2);
    memcpy(keep, T->par, sz * sizeof *keep);
    double sends = (double)M->nchunks * (n - 1);
    int lim = sends * SPARE_EVALS > SPARE_WORK ? (int)(SPARE_WORK / sends) : SPARE_EVALS;
    spare S = {J, M, T, *makespan, 0, lim};
    /* single moves, kept while the makespan does not grow: a few passes,
     * as a move kept on a tie opens others */
    for (int pass = 0; pass < SPARE_PASSES; pass++)
    for (int c = 0; c < M->nchunks && S.evals < S.max_evals; c++) {
        if (M->orbit_rep[c] != c)
            continue;
        int *par = &T->par[(size_t)c * n];
        for (int v = 0; v < n && S.evals < S.max_evals; v++) {
            int k = spare_moves(M, par, c, v, m1);
            for (int i = 0; i < k && S.evals < S.max_evals; i++) {
                memcpy(s1, par, (size_t)n * sizeof *s1);
                double ms = spare_move_eval(&S, c, par, &m1[i]);
                if (ms <= S.cur * (1 + 1e-12)) {
                    S.cur = ms;
                    break;
                }
                spare_undo(&S, c, par, s1);
            }
        }
    }
    /* an uncopy on c1 with a copy on c2, kept if together shorter */
    int found = 0;
    for (int c1 = 0; c1 < M->nchunks && !found && S.evals < S.max_evals; c1++) {
        if (M->orbit_rep[c1] != c1)
            continue;
        int *p1 = &T->par[(size_t)c1 * n];
        for (int v1 = 0; v1 < n && !found && S.evals < S.max_evals; v1++) {
            if (p1[v1] < 0 || !M->hops[p1[v1]].inter)
                continue;
            int k1 = spare_moves(M, p1, c1, v1, m1);
            for (int i = 0; i < k1 && !found && S.evals < S.max_evals; i++) {
                memcpy(s1, p1, (size_t)n * sizeof *s1);
                if (!spare_apply(M, c1, p1, &m1[i])) {
                    memcpy(p1, s1, (size_t)n * sizeof *s1);
                    continue;
                }
                carry_orbit(M, T, c1);
                for (int c2 = 0; c2 < M->nchunks && !found && S.evals < S.max_evals; c2++) {
                    if (M->orbit_rep[c2] != c2 || c2 == c1)
                        continue;
                    int *p2 = &T->par[(size_t)c2 * n];
                    for (int v2 = 0; v2 < n && !found && S.evals < S.max_evals; v2++) {
                        if (p2[v2] < 0 || M->hops[p2[v2]].inter)
                            continue;
                        int k2 = spare_moves(M, p2, c2, v2, m2);
                        for (int j = 0; j < k2 && !found && S.evals < S.max_evals; j++) {
                            memcpy(s2, p2, (size_t)n * sizeof *s2);
                            double ms = spare_move_eval(&S, c2, p2, &m2[j]);
                            if (ms < S.cur * (1 - 1e-12)) {
                                S.cur = ms;
                                found = 1;
                                break;
                            }
                            spare_undo(&S, c2, p2, s2);
                        }
                    }
                }
                if (!found)
                    spare_undo(&S, c1, p1, s1);
            }
        }
    }
    int changed = S.cur < *makespan * (1 - 1e-12);
    if (changed) {
        *makespan = S.cur;
        int *order = xmalloc((size_t)n * sizeof *order);
        for (int c = 0; c < M->nchunks; c++)
            route_tree_arrivals(M, T, c, order);
        free(order);
    } else {
        memcpy(T->par, keep, sz * sizeof *keep);
    }
    free(m1);
    free(m2);
    free(s1);
    free(s2);
    free(keep);
    TC_ASSERT(route_trees_sane(M, T));
    return changed;
}

/* ------------------------------------------------------------ one attempt */

/* What one attempt (solve_once) works on, phase by phase: the skeleton,
 * the seed routing (as trees and as an algo, with stage 2's makespan of
 * it), then the MILP built over them.  attempt_free releases whatever of it
 * exists. */
typedef struct {
    rmodel M;
    trees H;                /* the seed: heuristic trees, or coarse / spare-NIC ones */
    algo *ha;               /* H as an algo: the fallback routing */
    double makespan;        /* stage 2's makespan of H */
    int times_ok;           /* H's arrivals keep enforce_ordering: a usable incumbent */
    double relaxed;         /* the relaxed makespan of H (the MILP's time rows) */
    unsigned char *used;    /* [nslots] slots H uses */
    milp P;
    int built;              /* M, H and ha exist */
} attempt;

static void attempt_free(attempt *A)
{
    if (!A->built)
        return;
    algo_free(A->ha);
    route_milp_free(&A->P);
    free(A->used);
    route_trees_free(&A->H);
    route_rmodel_free(&A->M);
    A->built = 0;
}

/* Phase 1: the skeleton and the heuristic routing, scheduled by stage 2. */
static int seed_heuristic(const job *J, int use_sym, attempt *A, tc_err *err)
{
    route_opts oo = *J->o;
    oo.use_symmetry = use_sym;
    memset(A, 0, sizeof *A);
    int rc = route_rmodel_build(&A->M, J->s, J->t, J->k, J->bytes, &oo, err);
    if (rc)
        return rc;
    route_trees_init(&A->H, &A->M);
    route_heuristic_trees(&A->M, &A->H);
    A->ha = route_trees_to_algo(&A->M, &A->H);
    A->built = 1;
    algo *hs = NULL;
    rc = order_schedule(A->ha, J->t, J->bytes, NULL, &hs, NULL, err);
    if (rc)
        return rc;
    A->makespan = hs->predicted_us;
    algo_free(hs);
    return TC_OK;
}

/* Phase 2: the coarse routing (route_opts.coarse) carried to these chunks
 * replaces the seed when stage 2 schedules it faster. */
static void offer_coarse(const job *J, attempt *A)
{
    double coarse_ms = NAN;
    if (J->o->coarse) {
        trees G;
        route_trees_init(&G, &A->M);
        if (coarse_trees(&A->M, J->o->coarse, &G)) {
            tc_err e2;
            coarse_ms = trees_makespan(&A->M, &G, J->s, J->t, J->k, J->bytes, &e2);
        }
        if (coarse_ms < A->makespan) {
            trees X = A->H;
            A->H = G;
            G = X;
            A->makespan = coarse_ms;
            TC_ASSERT(route_trees_sane(&A->M, &A->H));
            algo_free(A->ha);
            A->ha = route_trees_to_algo(&A->M, &A->H);
        }
        route_trees_free(&G);
    }
    J->st->coarse_makespan_us = coarse_ms;
}

/* Phase 3: the spare-NIC moves on the seed, where they are worth trying. */
static void offer_spare_nics(const job *J, attempt *A)
{
    if (!spare_worth(J->t, J->bytes) || J->o->latency ||
        !spare_nics(J, &A->M, &A->H, &A->makespan))
        return;
    algo_free(A->ha);
    A->ha = route_trees_to_algo(&A->M, &A->H);
    J->st->spare_nics = 1;
    progress(J->o, "spare NIC capacity: ranks that get a chunk across the NICs directly: "
             "stage 2 makespan %.6g us", A->makespan);
}

/* Phase 4: the MILP over the skeleton with the seed as its incumbent.
 * Returns 0 and says why in st->msg when the symmetry cannot be kept (the
 * caller solves again without it). */
static int build_milp(const job *J, attempt *A)
{
    route_stats *st = J->st;
    rmodel *M = &A->M;
    A->times_ok = route_incumbent_times(M, &A->H);
    A->relaxed = route_relaxed_time(M, &A->H);
    double U = (A->makespan > A->relaxed ? A->makespan : A->relaxed) * (1 + 1e-9) + 1e-9;
    st->nchunks = M->nchunks;
    st->nreps = M->nreps;
    st->nslots = M->cand_start[M->nchunks];
    st->symmetric = M->symmetric;
    st->heur_makespan_us = A->makespan;
    st->heur_relaxed_us = A->relaxed;
    A->used = used_slots(M, &A->H);
    int built = route_milp_build(&A->P, M, &A->H, A->used, U);
    if (built < 0 || (!A->P.consistent && M->symmetric)) {
        snprintf(st->msg, sizeof st->msg, "%s", built < 0 ?
                 "the sketch's symmetry does not map candidate hops onto candidate hops: "
                 "solved without it" : "the heuristic routing is not symmetric: solved without "
                 "symmetry");
        return 0;
    }
    st->ncols = lp_ncols(A->P.p);
    st->nbin = A->P.nbin;
    st->nrows = lp_nrows(A->P.p);
    st->nnz = lp_nnz(A->P.p);
    st->heur_objective = route_objective_of_incumbent(&A->P);
    st->build_s = now_s() - J->t0;
    progress(J->o, "%s %s on %s, %.6g-byte chunks: %d chunks (%d orbit%s), %d candidate hops; "
             "%s makespan %.6g us (relaxed %.6g us)", J->s->name, coll_name(J->k),
             J->t->name, J->bytes, M->nchunks, M->nreps, M->nreps == 1 ? "" : "s", st->nslots,
             st->coarse_makespan_us == A->makespan ? "coarse routing's" : "heuristic",
             A->makespan, A->relaxed);
    progress(J->o, "model: %d columns (%d binary), %d rows, %d nonzeros; built in %.3f s",
             st->ncols, st->nbin, st->nrows, st->nnz, st->build_s);
    return 1;
}

/* The solver's options from route_opts, the seed as the incumbent when
 * its arrivals are usable. */
static void milp_lp_opts(const job *J, const attempt *A, lp_opts *lo)
{
    const route_opts *o = J->o;
    lp_opts_init(lo);
    lo->time_limit_s = o->time_limit_s;
    lo->mip_gap = o->mip_gap;
    lo->verbose = o->verbose;
    lo->cuts = o->cuts;
    lo->heuristics = o->heuristics;
    lo->backend = o->backend;
    lo->mem_limit_mb = o->mem_limit_mb;
    if (o->seed && A->times_ok) {
        lo->incumbent = A->P.inc;
        lo->presolve = 0;
    }
    if (!o->quiet) {
        lo->progress = lp_progress_stderr;
        lo->progress_ctx = (void *)(o->backend == LP_CBC ? "route: CBC" : "route: GLPK");
    }
}

/* Phase 6: the routing read back from a solved MILP and checked; NULL
 * (st->msg says why) when it is unusable. */
static algo *read_routing(const job *J, const attempt *A, const lp_result *r)
{
    route_stats *st = J->st;
    algo *res = NULL;
    trees R;
    route_trees_init(&R, &A->M);
    if (route_extract(&A->P, &R)) {
        TC_ASSERT(route_trees_sane(&A->M, &R));
        res = route_trees_to_algo(&A->M, &R);
        tc_err e3;
        if (route_check(res, J->s, J->t, J->k, &e3) != TC_OK) {
            algo_free(res);
            res = NULL;
            snprintf(st->msg, sizeof st->msg, "the MILP's routing is unusable (%.300s): "
                     "heuristic routing", e3.msg);
        } else {
            st->time_us = lp_value(A->P.p, A->P.tcol);
            res->predicted_us = st->time_us;
            snprintf(st->msg, sizeof st->msg, "%.400s", r->msg);
        }
    } else {
        snprintf(st->msg, sizeof st->msg, "the MILP's solution is not a set of trees: "
                 "heuristic routing");
    }
    route_trees_free(&R);
    return res;
}

/* The solve's outcome on stderr (lrc: lp_solve's code, e2 its error). */
static void report_solve(const job *J, const lp_result *r, int lrc, const tc_err *e2)
{
    const route_opts *o = J->o;
    const route_stats *st = J->st;
    char gap[48] = "gap unknown";
    if (isfinite(r->gap))
        snprintf(gap, sizeof gap, "gap %.3g%%", 100 * r->gap);
    if (lrc != TC_OK)
        progress(o, "%s; returning the heuristic routing", e2->msg);
    else
        progress(o, "%s: %s in %.3f s; objective %.6g, bound %.6g, %s; time %.6g us; "
                 "incumbent %s%s", lp_backend_name(o->backend), lp_status_name(r->status),
                 r->seconds, r->objective, r->best_bound, gap, st->time_us,
                 r->incumbent_used == 1 ? "used" : r->incumbent_used == 0 ? "rejected"
                                                                          : "none",
                 st->fallback ? "; returning the heuristic routing" : "");
    if (r->incumbent_used == 0)
        progress(o, "incumbent rejected: %s", r->msg);
}

/* Phase 5: the MILP solved and its routing read back, else the seed
 * (st->fallback).  A stop request or the memory limit is an error, not a
 * fallback. */
static int solve_milp(const job *J, attempt *A, algo **res, tc_err *err)
{
    route_stats *st = J->st;
    lp_opts lo;
    milp_lp_opts(J, A, &lo);
    lp_result r;
    tc_err e2;
    tc_err_clear(&e2);
    int lrc = lp_solve(A->P.p, &lo, &r, &e2);
    st->solve_s = r.seconds;
    st->status = r.status;
    st->incumbent_used = r.incumbent_used;
    st->objective = r.objective;
    st->best_bound = r.best_bound;
    st->gap = r.gap;
    *res = NULL;
    if (lrc == TC_STOP || (lrc != TC_OK && r.out_of_memory))
        return tc_err_set(err, lrc, "routing MILP: %s", e2.msg);
    if (lrc == TC_OK && (r.status == LP_OPTIMAL || r.status == LP_FEASIBLE))
        *res = read_routing(J, A, &r);
    else
        snprintf(st->msg, sizeof st->msg, "%.400s: heuristic routing",
                 lrc == TC_OK ? r.msg : e2.msg);
    if (!*res) {
        *res = A->ha;
        A->ha = NULL;
        st->fallback = 1;
    }
    report_solve(J, &r, lrc, &e2);
    return TC_OK;
}

/* One attempt with or without symmetry, in the phases above; *retry = 1
 * asks for another without (the seed could not be made symmetric). */
static int solve_once(const job *J, int use_sym, algo **out, int *retry, tc_err *err)
{
    attempt A;
    algo *res = NULL;
    *retry = 0;
    int rc = seed_heuristic(J, use_sym, &A, err);
    if (rc == TC_OK) {
        offer_coarse(J, &A);
        offer_spare_nics(J, &A);
        *retry = !build_milp(J, &A);
    }
    if (rc == TC_OK && !*retry && J->o->build_only) {
        res = A.ha;
        A.ha = NULL;
        snprintf(J->st->msg, sizeof J->st->msg, "model built, not solved: heuristic routing");
    } else if (rc == TC_OK && !*retry) {
        rc = solve_milp(J, &A, &res, err);
    }
    if (res)
        J->st->connections = count_connections(res, J->t);
    *out = res;
    attempt_free(&A);
    return rc;
}

int route_solve(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                const route_opts *o, algo **out, route_stats *st, tc_err *err)
{
    route_opts dflt;
    route_stats local;
    if (!o) {
        route_opts_init(&dflt);
        o = &dflt;
    }
    if (!st)
        st = &local;
    stats_reset(st);
    *out = NULL;
    job J = {s, t, k, chunk_bytes, o, st, now_s()};
    int retry = 0;
    int rc = solve_once(&J, o->use_symmetry, out, &retry, err);
    if (rc == TC_OK && retry) {
        char why[512];
        snprintf(why, sizeof why, "%s", st->msg);
        stats_reset(st);
        progress(o, "%s", why);
        rc = solve_once(&J, 0, out, &retry, err);
        if (rc == TC_OK) {
            size_t l = strlen(st->msg);
            snprintf(st->msg + l, sizeof st->msg - l, "%s(%.200s)", l ? " " : "", why);
        }
    }
    return rc;
}
