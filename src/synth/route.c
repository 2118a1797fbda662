/* route.c — stage 1: the routing MILP, its heuristic seed and a routing
 * checker (contract in route.h).
 *
 * Order of work in route_solve():
 *   1. the model's skeleton (rmodel): every directed hop of the topology
 *      with its cost and resources, per chunk the candidate hops (the
 *      sketch's graph pruned by hop distance) and the cheapest arrival at
 *      each rank over them, the symmetry generators, chunk orbits and, per
 *      chunk, the rank permutation that carries its orbit representative to
 *      it;
 *   2. the heuristic routing: one load-aware earliest-finish tree per
 *      orbit representative, carried to the rest of the orbit; stage 2
 *      (order.h) schedules it, which gives the big-M horizon U;
 *   3. the MILP with substituted symmetry (union-find over the generators'
 *      images of every variable slot, one column per class) and the
 *      heuristic as the incumbent;
 *   4. GLPK, then the routing read back (dead-end relays dropped) and
 *      checked; anything unusable falls back to the heuristic.
 * Nothing here keeps state between calls. */
#include "route.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "order.h"
#include "../util/mem.h"

#define UC_MU 0.01          /* TACCL's weight of the connection / load term */
#define ROUTE_MAX_WORK 2e9  /* orbits x ranks x (ranks + hops): see check_size() */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int feq(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
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

/* ------------------------------------------------------------ union-find */

typedef struct {
    int *p;
} ufind;

static void uf_init(ufind *u, int n)
{
    u->p = xmalloc((size_t)n * sizeof *u->p);
    for (int i = 0; i < n; i++)
        u->p[i] = i;
}

static int uf_find(ufind *u, int x)
{
    while (u->p[x] != x) {
        u->p[x] = u->p[u->p[x]];
        x = u->p[x];
    }
    return x;
}

/* The smaller index becomes the root, so a class is named by its first member. */
static void uf_union(ufind *u, int a, int b)
{
    a = uf_find(u, a);
    b = uf_find(u, b);
    if (a < b)
        u->p[b] = a;
    else if (b < a)
        u->p[a] = b;
}

static void uf_free(ufind *u)
{
    free(u->p);
    u->p = NULL;
}

/* ------------------------------------------------------------ the skeleton */

typedef struct {
    int u, v;
    int inter;          /* u and v on different nodes */
    int pair_ok;        /* inter: the sketch allows (u % rpn, v % rpn) */
    int is_switch;      /* route through a switch */
    double cost;
    int nres, res[2];   /* order.h numbering; res[0] is the sending side */
    int uc;             /* -1, or SK_UC_MIN / SK_UC_MAX: a counted switch connection */
} hop;

typedef struct {
    const sketch *s;
    const topo *t;
    coll_kind k;
    double bytes;
    int n, rpn, kup, cpr, C, nch;
    int slack;
    int nhops;
    hop *hops;
    int *hop_of;            /* [n * n] hop index or -1 */
    int *out_start, *out_hop;   /* hops by sender */
    int *in_start, *in_hop;     /* hops by receiver */
    unsigned char *via;     /* [rpn * rpn]: via[origin_local * rpn + sender_local] */
    int nres;
    int *lanes;             /* [nres] */
    int *cstart, *chop;     /* candidate hops of chunk c: chop[cstart[c] .. cstart[c+1]) ascending */
    double *lb;             /* [nch * n] cheapest arrival, INFINITY if unreachable, 0 at origin */
    int ngen;
    int *gen;               /* [ngen * n] */
    int symmetric;
    int *rep;               /* [nch] orbit representative (smallest chunk id) */
    int *perm;              /* [nch * n] ranks of rep -> ranks of this chunk */
    int *orb_start, *orb;   /* members of each representative's orbit (CSR over chunks) */
    int nreps;
    int *dbuf, *obuf;       /* [n] scratch for coll_in_dests */
} rmodel;

static int node_of(const rmodel *M, int r)
{
    return r / M->rpn;
}

static int origin_of(const rmodel *M, int c)
{
    return c / M->cpr;
}

/* Destinations of chunk c other than its origin, into d[]; returns how many. */
static int chunk_dests(const rmodel *M, int c, int *d)
{
    int o = origin_of(M, c);
    int m = coll_in_dests(M->k, M->n, M->C, o, c % M->cpr, M->dbuf, M->obuf), cnt = 0;
    for (int j = 0; j < m; j++)
        if (M->dbuf[j] != o)
            d[cnt++] = M->dbuf[j];
    return cnt;
}

static int chunk_image(const rmodel *M, int c, const int *g)
{
    int o = origin_of(M, c), i = c % M->cpr;
    if (M->k == COLL_ALLTOALL)
        return g[o] * M->cpr + g[i / M->kup] * M->kup + i % M->kup;
    return g[o] * M->cpr + i;
}

static int slot_of(const rmodel *M, int c, int h)
{
    int lo = M->cstart[c], hi = M->cstart[c + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (M->chop[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < M->cstart[c + 1] && M->chop[lo] == h ? lo : -1;
}

static void rmodel_free(rmodel *M)
{
    free(M->hops);
    free(M->hop_of);
    free(M->out_start);
    free(M->out_hop);
    free(M->in_start);
    free(M->in_hop);
    free(M->via);
    free(M->lanes);
    free(M->cstart);
    free(M->chop);
    free(M->lb);
    free(M->gen);
    free(M->rep);
    free(M->perm);
    free(M->orb_start);
    free(M->orb);
    free(M->dbuf);
    free(M->obuf);
    memset(M, 0, sizeof *M);
}

/* uc strategy of the sketch switch holding both local ranks, or -1. */
static int sketch_uc_of(const sketch *s, int a, int b)
{
    if (s->intra != SK_INTRA_SWITCH)
        return -1;
    for (int i = 0; i < s->nswitches; i++) {
        const sketch_switch *w = &s->switches[i];
        int ha = 0, hb = 0;
        for (int j = 0; j < w->nranks; j++) {
            ha |= w->ranks[j] == a;
            hb |= w->ranks[j] == b;
        }
        if (ha && hb)
            return (int)w->uc;
    }
    return -1;
}

static void build_csr(int n, int nitems, const int *key, int **start_out, int **items_out)
{
    int *start = xcalloc((size_t)n + 1, sizeof *start);
    int *items = xmalloc((size_t)nitems * sizeof *items);
    for (int i = 0; i < nitems; i++)
        start[key[i] + 1]++;
    for (int i = 0; i < n; i++)
        start[i + 1] += start[i];
    int *fill = xmalloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)n + 1) * sizeof *fill);
    for (int i = 0; i < nitems; i++)
        items[fill[key[i]]++] = i;
    free(fill);
    *start_out = start;
    *items_out = items;
}

static void build_hops(rmodel *M)
{
    const topo *t = M->t;
    int n = M->n, rpn = M->rpn;
    M->hop_of = xmalloc((size_t)n * n * sizeof *M->hop_of);
    M->hops = xmalloc((size_t)n * (n > 1 ? n - 1 : 1) * sizeof *M->hops);
    M->nhops = 0;
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++) {
            M->hop_of[u * n + v] = -1;
            if (u == v)
                continue;
            topo_route rt = topo_route_of(t, u, v);
            hop h;
            memset(&h, 0, sizeof h);
            h.u = u;
            h.v = v;
            h.nres = cost_route_res(t, &rt, u, v, h.res);
            h.cost = cost_hop_us(&rt, M->bytes);
            if (h.nres == 0 || !isfinite(h.cost))
                continue;
            h.inter = node_of(M, u) != node_of(M, v);
            h.pair_ok = h.inter ? sketch_internode_ok(M->s, rpn, u % rpn, v % rpn) : 1;
            h.is_switch = rt.kind == ROUTE_SWITCH;
            h.uc = h.is_switch && !h.inter ? sketch_uc_of(M->s, u % rpn, v % rpn) : -1;
            M->hop_of[u * n + v] = M->nhops;
            M->hops[M->nhops++] = h;
        }
    int *key = xmalloc(((size_t)M->nhops + 1) * sizeof *key);
    for (int i = 0; i < M->nhops; i++)
        key[i] = M->hops[i].u;
    build_csr(n, M->nhops, key, &M->out_start, &M->out_hop);
    for (int i = 0; i < M->nhops; i++)
        key[i] = M->hops[i].v;
    build_csr(n, M->nhops, key, &M->in_start, &M->in_hop);
    free(key);
    M->via = xmalloc((size_t)rpn * rpn);
    for (int o = 0; o < rpn; o++)
        for (int x = 0; x < rpn; x++)
            M->via[o * rpn + x] = (unsigned char)sketch_leaves_via(M->s, rpn, o, x);
    M->nres = cost_nres(t);
    M->lanes = xmalloc(((size_t)M->nres + 1) * sizeof *M->lanes);
    for (int r = 0; r < M->nres; r++)
        M->lanes[r] = cost_res_lanes(t, r);
}

/* Scratch for the per-chunk graph searches. */
typedef struct {
    int *dO, *dR, *queue, *dest;
    unsigned char *dnode, *mark, *done;
} search;

static void search_init(search *w, const rmodel *M)
{
    w->dO = xmalloc((size_t)M->n * sizeof *w->dO);
    w->dR = xmalloc((size_t)M->n * sizeof *w->dR);
    w->queue = xmalloc((size_t)M->n * sizeof *w->queue);
    w->dest = xmalloc((size_t)M->n * sizeof *w->dest);
    w->dnode = xcalloc((size_t)M->t->nnodes, 1);
    w->mark = xcalloc((size_t)M->nhops + 1, 1);
    w->done = xcalloc((size_t)M->n, 1);
}

static void search_free(search *w)
{
    free(w->dO);
    free(w->dR);
    free(w->queue);
    free(w->dest);
    free(w->dnode);
    free(w->mark);
    free(w->done);
}

/* Which rules make the graph a chunk may travel.  The model uses all of
 * them (G_SKETCH); the others drop rules one at a time, only to say which
 * rule leaves a rank out of a chunk's reach (explain_unreachable). */
typedef enum {
    G_SKETCH,       /* every rule below */
    G_NO_VIA,       /* without gpus_to_sender_rev_map */
    G_NO_CONN,      /* also without internode_conn: any NIC pair */
    G_ANY_NODE      /* also without the relay rule: every hop of the topology */
} graph_rules;

/* Is hop h in the graph for a chunk from origin o (w->dnode set)?  The
 * relay rule: inside the origin's node and the nodes holding a
 * destination, and across nodes only straight out of the origin's node. */
static int in_graph(const rmodel *M, const search *w, int o, const hop *h, graph_rules g)
{
    if (h->v == o)
        return 0;
    if (g == G_ANY_NODE)
        return 1;
    int nu = node_of(M, h->u), nv = node_of(M, h->v), no = node_of(M, o);
    if (!h->inter)
        return w->dnode[nu];
    return nu == no && nv != no && w->dnode[nv] && (g >= G_NO_CONN || h->pair_ok) &&
           (g >= G_NO_VIA || M->via[(o % M->rpn) * M->rpn + h->u % M->rpn]);
}

static int in_sketch_graph(const rmodel *M, const search *w, int o, const hop *h)
{
    return in_graph(M, w, o, h, G_SKETCH);
}

/* Breadth-first hop distances in graph g: forward from src (reverse = 0)
 * or backward to src (reverse = 1). */
static void bfs_in(const rmodel *M, const search *w, int o, int src, int reverse,
                   graph_rules g, int *dist)
{
    for (int i = 0; i < M->n; i++)
        dist[i] = -1;
    int head = 0, tail = 0;
    dist[src] = 0;
    w->queue[tail++] = src;
    while (head < tail) {
        int x = w->queue[head++];
        const int *st = reverse ? M->in_start : M->out_start;
        const int *lst = reverse ? M->in_hop : M->out_hop;
        for (int k = st[x]; k < st[x + 1]; k++) {
            const hop *h = &M->hops[lst[k]];
            if (!in_graph(M, w, o, h, g))
                continue;
            int y = reverse ? h->u : h->v;
            if (dist[y] < 0) {
                dist[y] = dist[x] + 1;
                w->queue[tail++] = y;
            }
        }
    }
}

static void bfs(const rmodel *M, const search *w, int o, int src, int reverse, int *dist)
{
    bfs_in(M, w, o, src, reverse, G_SKETCH, dist);
}

/* "1->0, 3->2" for the inter-node pairs (local ranks) a chunk from o may
 * take out of its node: senders it can reach (dist) and may leave through. */
static void usable_pairs(const rmodel *M, int o, const int *dist, char *buf, size_t n)
{
    size_t used = 0;
    int shown = 0, more = 0;
    buf[0] = '\0';
    for (int a = 0; a < M->rpn; a++) {
        int sa = node_of(M, o) * M->rpn + a;
        if (dist[sa] < 0 || !M->via[(o % M->rpn) * M->rpn + a])
            continue;
        for (int b = 0; b < M->rpn; b++) {
            if (!sketch_internode_ok(M->s, M->rpn, a, b))
                continue;
            if (shown == 8 || used + 16 >= n) {
                more = 1;
                continue;
            }
            used += (size_t)snprintf(buf + used, n - used, "%s%d->%d", shown ? ", " : "", a, b);
            shown++;
        }
    }
    if (more && used + 6 < n)
        snprintf(buf + used, n - used, ", ...");
    if (!shown)
        snprintf(buf, n, "none");
}

/* Rank d is outside the sketch's graph for chunk c (origin o): say which
 * rule leaves it out — the first whose removal lets the chunk reach d:
 * gpus_to_sender_rev_map, internode_conn, the relay rule (a chunk crosses
 * nodes once, straight out of its origin's node), else the topology has
 * no path at all.  TACCL's other keys (switches and their strategies,
 * symmetry_offsets, enforce_ordering, input_chunkup) never remove a hop,
 * so they are never the cause. */
static int explain_unreachable(const rmodel *M, search *w, int c, int d, tc_err *err)
{
    const sketch *s = M->s;
    int o = origin_of(M, c), i = c % M->cpr, rpn = M->rpn;
    int no = node_of(M, o), nd = node_of(M, d);
    int *dist = w->dR;
    graph_rules g = G_NO_VIA;
    for (; g <= G_ANY_NODE; g++) {
        bfs_in(M, w, o, o, 0, g, dist);
        if (dist[d] >= 0)
            break;
    }
    char what[96];
    snprintf(what, sizeof what, "chunk %d of rank %d cannot reach rank %d", i, o, d);
    if (g == G_NO_VIA && s->has_via) {
        int *snd = xmalloc((size_t)rpn * sizeof *snd), ns = sketch_senders_of(s, rpn, o % rpn, snd);
        char list[160] = "", pairs[200];
        size_t used = 0;
        for (int k = 0; k < ns && used + 16 < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", k ? ", " : "", snd[k]);
        free(snd);
        bfs(M, w, o, o, 0, dist);
        usable_pairs(M, o, dist, pairs, sizeof pairs);
        return sketch_fail_at(s, "internode_sketch.gpus_to_sender_rev_map", err,
                              "%s: the chunks of local rank %d leave node %d only through local "
                              "rank(s) [%s], and their pairs (local sender->receiver) %s lead "
                              "to no path to local rank %d inside node %d", what, o % rpn, no,
                              list, pairs, d % rpn, nd);
    }
    if (g <= G_NO_CONN) {
        char pairs[200];
        bfs(M, w, o, o, 0, dist);
        usable_pairs(M, o, dist, pairs, sizeof pairs);
        return sketch_fail_at(s, "internode_sketch.internode_conn", err,
                              "%s: the chunk may cross from node %d to node %d only on the pairs "
                              "(local sender->receiver) %s, and they lead to no path to local "
                              "rank %d inside node %d", what, no, nd, pairs, d % rpn, nd);
    }
    if (g == G_ANY_NODE) {
        char why[400];
        snprintf(why, sizeof why, "%s: every path from rank %d to rank %d %s, but a chunk "
                 "crosses nodes only once, straight out of its origin's node (TACCL's relay "
                 "routing)", what, o, d, nd == no ? "leaves their node and comes back"
                 : "crosses nodes more than once or passes through a third node");
        if (s->has_internode)
            return sketch_fail_at(s, "internode_sketch.strategy", err, "%s", why);
        return tc_err_set(err, TC_INPUT, "%s: %s", M->t->path && *M->t->path ? M->t->path
                          : M->t->name, why);
    }
    return tc_err_set(err, TC_INPUT, "%s: %s: topology %s has no path of links, switches or NICs "
                      "from rank %d to rank %d", M->t->path && *M->t->path ? M->t->path
                      : M->t->name, what, M->t->name, o, d);
}

/* Cheapest arrival at every rank over the marked hops (Dijkstra, dense). */
static void cheapest_arrivals(const rmodel *M, search *w, int o, double *lb)
{
    int n = M->n;
    for (int i = 0; i < n; i++) {
        lb[i] = INFINITY;
        w->done[i] = 0;
    }
    lb[o] = 0;
    for (;;) {
        int x = -1;
        for (int i = 0; i < n; i++)
            if (!w->done[i] && isfinite(lb[i]) && (x < 0 || lb[i] < lb[x]))
                x = i;
        if (x < 0)
            break;
        w->done[x] = 1;
        for (int k = M->out_start[x]; k < M->out_start[x + 1]; k++) {
            int hi = M->out_hop[k];
            const hop *h = &M->hops[hi];
            if (w->mark[hi] && lb[x] + h->cost < lb[h->v])
                lb[h->v] = lb[x] + h->cost;
        }
    }
}

/* Candidate hops of chunk c appended to *list (grown as needed). */
static int chunk_candidates(rmodel *M, search *w, int c, int **list, int *len, int *cap,
                            tc_err *err)
{
    int o = origin_of(M, c), nd = chunk_dests(M, c, w->dest);
    memset(w->dnode, 0, (size_t)M->t->nnodes);
    w->dnode[node_of(M, o)] = 1;
    for (int j = 0; j < nd; j++)
        w->dnode[node_of(M, w->dest[j])] = 1;
    memset(w->mark, 0, (size_t)M->nhops);
    bfs(M, w, o, o, 0, w->dO);
    for (int j = 0; j < nd; j++) {
        int d = w->dest[j];
        if (w->dO[d] < 0)
            return explain_unreachable(M, w, c, d, err);
        bfs(M, w, o, d, 1, w->dR);
        for (int hi = 0; hi < M->nhops; hi++) {
            const hop *h = &M->hops[hi];
            if (w->mark[hi] || w->dO[h->u] < 0 || w->dR[h->v] < 0 ||
                !in_sketch_graph(M, w, o, h))
                continue;
            if (M->slack < 0 || w->dO[h->u] + 1 + w->dR[h->v] <= w->dO[d] + M->slack)
                w->mark[hi] = 1;
        }
    }
    for (int hi = 0; hi < M->nhops; hi++)
        if (w->mark[hi]) {
            if (*len == *cap) {
                *cap = *cap ? 2 * *cap : 1024;
                *list = xrealloc(*list, (size_t)*cap * sizeof **list);
            }
            (*list)[(*len)++] = hi;
        }
    cheapest_arrivals(M, w, o, &M->lb[(size_t)c * M->n]);
    return TC_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int hop_image(const rmodel *M, int hi, const int *g);

/* Chunk c is not its orbit's representative (processed before it, as the
 * orbit's smallest chunk): its candidates and cheapest arrivals are the
 * representative's carried by the permutation (sketch_check made sure the
 * symmetries map the topology and the sketch's graph onto themselves).
 * 0 if a hop has no image (then c is searched on its own). */
static int carry_candidates(rmodel *M, int c, int **list, int *len, int *cap)
{
    int n = M->n, r = M->rep[c], r0 = M->cstart[r], r1 = M->cstart[r + 1];
    const int *g = &M->perm[(size_t)c * n];
    if (*len + (r1 - r0) > *cap) {
        while (*len + (r1 - r0) > *cap)
            *cap = *cap ? 2 * *cap : 1024;
        *list = xrealloc(*list, (size_t)*cap * sizeof **list);
    }
    int at = *len;
    for (int k = r0; k < r1; k++) {
        int h = hop_image(M, (*list)[k], g);
        if (h < 0) {
            *len = at;
            return 0;
        }
        (*list)[(*len)++] = h;
    }
    qsort(*list + at, (size_t)(*len - at), sizeof **list, cmp_int);
    const double *lr = &M->lb[(size_t)r * n];
    double *lc = &M->lb[(size_t)c * n];
    for (int v = 0; v < n; v++)
        lc[g[v]] = lr[v];
    return 1;
}

static int build_candidates(rmodel *M, tc_err *err)
{
    search w;
    search_init(&w, M);
    M->cstart = xcalloc((size_t)M->nch + 1, sizeof *M->cstart);
    M->lb = xmalloc((size_t)M->nch * M->n * sizeof *M->lb);
    int len = 0, cap = 0, rc = TC_OK;
    int *list = NULL;
    for (int c = 0; c < M->nch && rc == TC_OK; c++) {
        if (lp_stop_requested())
            rc = tc_err_set(err, TC_STOP, "interrupted");
        else if (M->rep[c] == c || !carry_candidates(M, c, &list, &len, &cap))
            rc = chunk_candidates(M, &w, c, &list, &len, &cap, err);
        M->cstart[c + 1] = len;
    }
    M->chop = list ? list : xmalloc(sizeof *M->chop);
    search_free(&w);
    return rc;
}

/* Generators, chunk orbits, and the permutation carrying each
 * representative to each member of its orbit. */
static int build_symmetry(rmodel *M, int use)
{
    int n = M->n, nch = M->nch;
    M->ngen = use ? M->s->nsym : 0;
    M->gen = xmalloc(((size_t)M->ngen * n + 1) * sizeof *M->gen);
    unsigned char *seen = xcalloc((size_t)n, 1);
    int g = 0;
    for (int i = 0; i < M->ngen; i++) {
        int *p = &M->gen[(size_t)g * n], ok = 1;
        memset(seen, 0, (size_t)n);
        for (int r = 0; r < n && ok; r++) {
            p[r] = sketch_sym_rank(M->s, r, i);
            ok = p[r] >= 0 && p[r] < n && !seen[p[r]];
            if (ok)
                seen[p[r]] = 1;
        }
        int ident = 1;
        for (int r = 0; r < n && ok; r++)
            ident &= p[r] == r;
        if (ok && !ident)
            g++;
    }
    free(seen);
    M->ngen = g;
    M->symmetric = g > 0;
    ufind uf;
    uf_init(&uf, nch);
    for (int i = 0; i < M->ngen; i++)
        for (int c = 0; c < nch; c++)
            uf_union(&uf, c, chunk_image(M, c, &M->gen[(size_t)i * n]));
    M->rep = xmalloc((size_t)nch * sizeof *M->rep);
    M->perm = xmalloc((size_t)nch * n * sizeof *M->perm);
    int *queue = xmalloc((size_t)nch * sizeof *queue);
    unsigned char *got = xcalloc((size_t)nch, 1);
    M->nreps = 0;
    for (int c = 0; c < nch; c++) {
        M->rep[c] = uf_find(&uf, c);
        if (M->rep[c] != c)
            continue;
        M->nreps++;
        int head = 0, tail = 0;
        for (int r = 0; r < n; r++)
            M->perm[(size_t)c * n + r] = r;
        got[c] = 1;
        queue[tail++] = c;
        while (head < tail) {
            int x = queue[head++];
            const int *px = &M->perm[(size_t)x * n];
            for (int i = 0; i < M->ngen; i++) {
                const int *gi = &M->gen[(size_t)i * n];
                int y = chunk_image(M, x, gi);
                if (got[y])
                    continue;
                got[y] = 1;
                int *py = &M->perm[(size_t)y * n];
                for (int r = 0; r < n; r++)
                    py[r] = gi[px[r]];
                queue[tail++] = y;
            }
        }
    }
    free(queue);
    free(got);
    uf_free(&uf);
    build_csr(nch, nch, M->rep, &M->orb_start, &M->orb);
    return TC_OK;
}

/* Refuse, before any search, a model this module cannot build in
 * reasonable time and memory: each orbit representative is searched once
 * per destination over the whole graph (ranks + hops), and becomes that
 * many rows and columns of the MILP.  The limit admits every bundled
 * sketch by far (the largest, torus-2d-32x32 with its symmetries, is 1
 * orbit: 5e6 steps) and refuses the same torus without symmetries (1024
 * orbits: 5e9 steps, minutes of search before a MILP of 2 million
 * binaries). */
static int check_size(const rmodel *M, tc_err *err)
{
    double work = (double)M->nreps * M->n * (M->n + M->nhops);
    if (work <= ROUTE_MAX_WORK)
        return TC_OK;
    return tc_err_set(err, TC_INPUT, "%s: routing %s over the %d ranks of %s means %d chunk "
                      "orbit%s to search (about %.2g graph steps; this synthesizer's limit is "
                      "%.2g): give the sketch symmetry_offsets (one chunk routed per orbit), or "
                      "use a baseline (taccl-synth --algo ring)", M->s->path && *M->s->path ? M->s->path
                      : M->s->name, coll_name(M->k), M->n, M->t->name, M->nreps,
                      M->nreps == 1 ? "" : "s", work, ROUTE_MAX_WORK);
}

static int rmodel_build(rmodel *M, const sketch *s, const topo *t, coll_kind k, double bytes,
                        const route_opts *o, tc_err *err)
{
    memset(M, 0, sizeof *M);
    if (!s || !t)
        return tc_err_set(err, TC_INPUT, "route: no %s given", s ? "topology" : "sketch");
    if (k != COLL_ALLGATHER && k != COLL_ALLTOALL)
        return tc_err_set(err, TC_INPUT, "route: %s is not routed directly: route the "
                          "AllGather (ReduceScatter reverses it, AllReduce combines both)",
                          coll_name(k));
    if (!(bytes > 0) || !isfinite(bytes))
        return tc_err_set(err, TC_INPUT, "route: chunk size must be positive, got %g bytes",
                          bytes);
    if (s->nnodes != t->nnodes)
        return tc_err_set(err, TC_INPUT, "route: sketch %s is for %d nodes, topology %s has %d",
                          s->name, s->nnodes, t->name, t->nnodes);
    M->s = s;
    M->t = t;
    M->k = k;
    M->bytes = bytes;
    M->n = t->nranks;
    M->rpn = t->ranks_per_node;
    M->kup = s->chunkup > 0 ? s->chunkup : 1;
    M->cpr = k == COLL_ALLTOALL ? M->n * M->kup : M->kup;
    M->C = M->n * M->kup;
    M->nch = M->n * M->cpr;
    M->slack = o->slack;
    M->dbuf = xmalloc((size_t)M->n * sizeof *M->dbuf);
    M->obuf = xmalloc((size_t)M->n * sizeof *M->obuf);
    build_hops(M);
    int rc = build_symmetry(M, o->use_symmetry);
    if (rc == TC_OK)
        rc = check_size(M, err);
    if (rc == TC_OK)
        rc = build_candidates(M, err);
    if (rc != TC_OK)
        rmodel_free(M);
    return rc;
}

/* ------------------------------------------------------------ routings as trees */

/* par[c * n + v]: hop that brings chunk c to v, -1 if none (origin, or not
 * on c's tree).  arr[c * n + v]: when c reaches v on its tree (INFINITY if
 * not on it), uncontended or as set by the caller. */
typedef struct {
    int *par;
    double *arr;
} trees;

static void trees_init(trees *T, const rmodel *M)
{
    size_t sz = (size_t)M->nch * M->n;
    T->par = xmalloc(sz * sizeof *T->par);
    T->arr = xmalloc(sz * sizeof *T->arr);
    for (size_t i = 0; i < sz; i++) {
        T->par[i] = -1;
        T->arr[i] = INFINITY;
    }
}

static void trees_free(trees *T)
{
    free(T->par);
    free(T->arr);
}

/* Uncontended arrivals of chunk c along its tree (parents first). */
static void tree_arrivals(const rmodel *M, trees *T, int c, int *order)
{
    int n = M->n, o = origin_of(M, c), head = 0, tail = 0;
    int *par = &T->par[(size_t)c * n];
    double *arr = &T->arr[(size_t)c * n];
    for (int v = 0; v < n; v++)
        arr[v] = INFINITY;
    arr[o] = 0;
    order[tail++] = o;
    while (head < tail) {
        int x = order[head++];
        for (int k = M->out_start[x]; k < M->out_start[x + 1]; k++) {
            const hop *h = &M->hops[M->out_hop[k]];
            if (par[h->v] == M->out_hop[k] && !isfinite(arr[h->v])) {
                arr[h->v] = arr[x] + h->cost;
                order[tail++] = h->v;
            }
        }
    }
}

/* Drop relays that receive a chunk and pass it to nobody. */
static void prune_dead_relays(const rmodel *M, int *par, const unsigned char *isdest)
{
    int n = M->n, changed = 1;
    int *kids = xcalloc((size_t)n, sizeof *kids);
    for (int v = 0; v < n; v++)
        if (par[v] >= 0)
            kids[M->hops[par[v]].u]++;
    while (changed) {
        changed = 0;
        for (int v = 0; v < n; v++)
            if (par[v] >= 0 && !isdest[v] && kids[v] == 0) {
                kids[M->hops[par[v]].u]--;
                par[v] = -1;
                changed = 1;
            }
    }
    free(kids);
}

/* The hop image of hop index hi under permutation g (-1 if none). */
static int hop_image(const rmodel *M, int hi, const int *g)
{
    const hop *h = &M->hops[hi];
    return M->hop_of[g[h->u] * M->n + g[h->v]];
}

/* Carry the representative's tree to every member of its orbit. */
static void carry_tree(const rmodel *M, trees *T, int rep, int c)
{
    int n = M->n;
    const int *g = &M->perm[(size_t)c * n];
    const int *pr = &T->par[(size_t)rep * n];
    int *pc = &T->par[(size_t)c * n];
    for (int v = 0; v < n; v++)
        pc[v] = -1;
    for (int v = 0; v < n; v++)
        if (pr[v] >= 0)
            pc[g[v]] = hop_image(M, pr[v], g);
}

/* One representative's heuristic tree: grow from the origin by the
 * candidate hop that would finish earliest, counting the load earlier
 * hops put on its resources; then drop dead-end relays. */
static void heuristic_tree(const rmodel *M, int c, int *par, double *load, int *dest,
                           unsigned char *isdest, unsigned char *in, double *arr)
{
    int n = M->n, o = origin_of(M, c);
    int nd = chunk_dests(M, c, dest);
    memset(isdest, 0, (size_t)n);
    memset(in, 0, (size_t)n);
    for (int j = 0; j < nd; j++)
        isdest[dest[j]] = 1;
    for (int v = 0; v < n; v++) {
        par[v] = -1;
        arr[v] = INFINITY;
    }
    in[o] = 1;
    arr[o] = 0;
    int c0 = M->cstart[c], c1 = M->cstart[c + 1];
    for (;;) {
        int best = -1;
        double best_est = 0;
        for (int k = c0; k < c1; k++) {
            int hi = M->chop[k];
            const hop *h = &M->hops[hi];
            if (!in[h->u] || in[h->v])
                continue;
            double busy = 0;
            for (int q = 0; q < h->nres; q++) {
                double b = load[h->res[q]] / M->lanes[h->res[q]];
                if (b > busy)
                    busy = b;
            }
            double est = (arr[h->u] > busy ? arr[h->u] : busy) + h->cost;
            if (best < 0 || (est < best_est && !feq(est, best_est))) {
                best = hi;
                best_est = est;
            }
        }
        if (best < 0)
            break;
        const hop *h = &M->hops[best];
        in[h->v] = 1;
        par[h->v] = best;
        arr[h->v] = arr[h->u] + h->cost;
        for (int q = 0; q < h->nres; q++)
            load[h->res[q]] += h->cost;
    }
    /* hops of dropped relays give their load back */
    int *was = xmalloc((size_t)n * sizeof *was);
    memcpy(was, par, (size_t)n * sizeof *was);
    prune_dead_relays(M, par, isdest);
    for (int v = 0; v < n; v++)
        if (was[v] >= 0 && par[v] < 0)
            for (int q = 0; q < M->hops[was[v]].nres; q++)
                load[M->hops[was[v]].res[q]] -= M->hops[was[v]].cost;
    free(was);
}

static void heuristic_trees(const rmodel *M, trees *T)
{
    int n = M->n;
    double *load = xcalloc((size_t)M->nres + 1, sizeof *load);
    int *dest = xmalloc((size_t)n * sizeof *dest);
    int *order = xmalloc((size_t)n * sizeof *order);
    unsigned char *isdest = xmalloc((size_t)n), *in = xmalloc((size_t)n);
    double *arr = xmalloc((size_t)n * sizeof *arr);
    for (int c = 0; c < M->nch; c++) {
        if (M->rep[c] != c)
            continue;
        int *par = &T->par[(size_t)c * n];
        heuristic_tree(M, c, par, load, dest, isdest, in, arr);
        /* the orbit's other members load their images of the same hops */
        for (int k = M->orb_start[c]; k < M->orb_start[c + 1]; k++) {
            int m = M->orb[k];
            if (m == c)
                continue;
            carry_tree(M, T, c, m);
            const int *pm = &T->par[(size_t)m * n];
            for (int v = 0; v < n; v++)
                if (pm[v] >= 0)
                    for (int q = 0; q < M->hops[pm[v]].nres; q++)
                        load[M->hops[pm[v]].res[q]] += M->hops[pm[v]].cost;
        }
    }
    for (int c = 0; c < M->nch; c++)
        tree_arrivals(M, T, c, order);
    free(load);
    free(dest);
    free(order);
    free(isdest);
    free(in);
    free(arr);
}

typedef struct {
    int depth;
    double arr;
    int dst, hop;
} emit_item;

static int cmp_emit(const void *a, const void *b)
{
    const emit_item *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->arr != y->arr)
        return x->arr < y->arr ? -1 : 1;
    return x->dst - y->dst;
}

/* The trees as an algo: per chunk, sends by depth, arrival, receiver. */
static algo *trees_to_algo(const rmodel *M, const trees *T)
{
    int n = M->n;
    algo *a = algo_new(M->k, n, M->cpr);
    if (!a)
        tc_oom();
    emit_item *it = xmalloc((size_t)n * sizeof *it);
    int *depth = xmalloc((size_t)n * sizeof *depth);
    for (int c = 0; c < M->nch; c++) {
        const int *par = &T->par[(size_t)c * n];
        const double *arr = &T->arr[(size_t)c * n];
        int m = 0;
        for (int v = 0; v < n; v++) {
            depth[v] = -1;
            if (par[v] >= 0) {
                int d = 0;
                for (int x = v; par[x] >= 0 && d <= n; x = M->hops[par[x]].u)
                    d++;
                depth[v] = d;
                it[m].depth = d;
                it[m].arr = arr[v];
                it[m].dst = v;
                it[m].hop = par[v];
                m++;
            }
        }
        qsort(it, (size_t)m, sizeof *it, cmp_emit);
        for (int j = 0; j < m; j++) {
            const hop *h = &M->hops[it[j].hop];
            algo_add_send(a, origin_of(M, c), c % M->cpr, h->u, h->v, it[j].arr - h->cost,
                          it[j].arr);
        }
    }
    free(it);
    free(depth);
    return a;
}

/* ------------------------------------------------------------ checking */

static int check_chunk(const algo *a, const sketch *s, const topo *t, coll_kind k, int c,
                       const int *idx, int m, int *from, int *dr, int *oi, int *queue,
                       tc_err *err)
{
    int n = t->nranks, cpr = a->chunks_per_rank, rpn = t->ranks_per_node;
    int o = c / cpr, i = c % cpr, C = k == COLL_ALLTOALL ? cpr : n * cpr;
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
    int head = 0, tail = 0, reached = 0;
    unsigned char *has = xcalloc((size_t)n, 1);
    has[o] = 1;
    queue[tail++] = o;
    while (head < tail) {
        int x = queue[head++];
        for (int j = 0; j < m; j++) {
            const algo_send *y = &a->sends[idx[j]];
            if (y->src == x && !has[y->dst]) {
                has[y->dst] = 1;
                queue[tail++] = y->dst;
                reached++;
            }
        }
    }
    int rc = TC_OK;
    if (reached != m)
        for (int j = 0; j < m && rc == TC_OK; j++) {
            const algo_send *y = &a->sends[idx[j]];
            if (!has[y->src])
                rc = tc_err_set(err, TC_WRONG, "send %d: rank %d forwards chunk (%d, %d), "
                                "which it never receives", idx[j], y->src, o, i);
        }
    int nd = coll_in_dests(k, n, C, o, i, dr, oi);
    for (int j = 0; j < nd && rc == TC_OK; j++)
        if (dr[j] != o && !has[dr[j]])
            rc = tc_err_set(err, TC_WRONG, "chunk (%d, %d) never reaches rank %d", o, i, dr[j]);
    free(has);
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
    int *from = xmalloc((size_t)n * sizeof *from), *dr = xmalloc((size_t)n * sizeof *dr);
    int *oi = xmalloc((size_t)n * sizeof *oi), *queue = xmalloc(((size_t)n + 1) * sizeof *queue);
    int rc = TC_OK;
    for (long long c = 0; c < nch && rc == TC_OK; c++)
        rc = check_chunk(a, s, t, k, (int)c, idx + start[c], start[c + 1] - start[c], from, dr,
                         oi, queue, err);
    free(start);
    free(idx);
    free(from);
    free(dr);
    free(oi);
    free(queue);
    return rc;
}

/* ------------------------------------------------------------ the MILP */

typedef struct {
    int n, cap;
    int *col;
    double *val;
} rowbuf;

static void rb_clear(rowbuf *b)
{
    b->n = 0;
}

static void rb_add(rowbuf *b, int col, double v)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->col = xrealloc(b->col, (size_t)b->cap * sizeof *b->col);
        b->val = xrealloc(b->val, (size_t)b->cap * sizeof *b->val);
    }
    b->col[b->n] = col;
    b->val[b->n] = v;
    b->n++;
}

typedef struct {
    const rmodel *M;
    lp *p;
    double U;               /* horizon: time <= U */
    int *xcol;              /* [nslots] */
    int *scol;              /* [nch * n], -1 for the origin / unreachable */
    int *ycol;              /* [nhops] */
    int tcol, ucol;
    double *inc;            /* incumbent value per column */
    double *objc;           /* objective coefficient per column */
    int inc_cap;
    int consistent;         /* the incumbent takes one value per class */
    double tinc;            /* incumbent's time from the time rows */
    double uinc;
    int nbin;
    rowbuf rb;
    const trees *H;         /* the heuristic routing (incumbent) */
    const unsigned char *used;  /* [nslots] H uses the slot */
} milp;

static int add_col(milp *P, const char *name, double lb, double ub, double obj, int is_int,
                   double incval)
{
    int j = lp_add_col(P->p, name, lb, ub, obj, is_int);
    if (j < 0)
        return j;
    if (j >= P->inc_cap) {
        P->inc_cap = P->inc_cap ? 2 * P->inc_cap : 1024;
        while (P->inc_cap <= j)
            P->inc_cap *= 2;
        P->inc = xrealloc(P->inc, (size_t)P->inc_cap * sizeof *P->inc);
        P->objc = xrealloc(P->objc, (size_t)P->inc_cap * sizeof *P->objc);
    }
    P->inc[j] = incval;
    P->objc[j] = obj;
    P->nbin += is_int;
    return j;
}

static double rb_eval(const milp *P)
{
    double s = 0;
    for (int i = 0; i < P->rb.n; i++)
        s += P->rb.val[i] * P->inc[P->rb.col[i]];
    return s;
}

static void add_row(milp *P, double lb, double ub)
{
    lp_add_row(P->p, NULL, lb, ub, P->rb.n, P->rb.col, P->rb.val);
}

/* time + rb >= rhs; the incumbent's time must cover it. */
static void add_time_row(milp *P, double rhs)
{
    double need = rhs - rb_eval(P);
    if (need > P->tinc)
        P->tinc = need;
    rb_add(&P->rb, P->tcol, 1.0);
    add_row(P, rhs, INFINITY);
}

static double start_ub(const milp *P, int c, int v)
{
    double lb = P->M->lb[(size_t)c * P->M->n + v];
    return lb > P->U ? lb : P->U;
}

static int build_columns(milp *P)
{
    const rmodel *M = P->M;
    int n = M->n, nslots = M->cstart[M->nch];
    char name[64];
    P->tcol = add_col(P, "time", 0, P->U, 1.0, 0, 0);
    /* x: one column per orbit of (chunk, hop) */
    ufind uf;
    uf_init(&uf, nslots > 0 ? nslots : 1);
    for (int gi = 0; gi < M->ngen; gi++) {
        const int *g = &M->gen[(size_t)gi * n];
        for (int c = 0; c < M->nch; c++) {
            int ci = chunk_image(M, c, g);
            for (int sl = M->cstart[c]; sl < M->cstart[c + 1]; sl++) {
                int hi = hop_image(M, M->chop[sl], g);
                int si = hi < 0 ? -1 : slot_of(M, ci, hi);
                if (si < 0) {
                    uf_free(&uf);
                    return -1;
                }
                uf_union(&uf, sl, si);
            }
        }
    }
    P->xcol = xmalloc(((size_t)nslots + 1) * sizeof *P->xcol);
    for (int c = 0; c < M->nch; c++)
        for (int sl = M->cstart[c]; sl < M->cstart[c + 1]; sl++) {
            int r = uf_find(&uf, sl);
            if (r == sl) {
                const hop *h = &M->hops[M->chop[sl]];
                snprintf(name, sizeof name, "x_%d_%d_%d_%d", origin_of(M, c), c % M->cpr, h->u,
                         h->v);
                P->xcol[sl] = add_col(P, name, 0, 1, 0, 1, P->used[sl]);
            } else {
                P->xcol[sl] = P->xcol[r];
                if (P->inc[P->xcol[sl]] != P->used[sl])
                    P->consistent = 0;
            }
        }
    uf_free(&uf);
    /* a: one column per orbit of (chunk, rank), none at the origin */
    size_t ns = (size_t)M->nch * n;
    uf_init(&uf, (int)ns);
    for (int gi = 0; gi < M->ngen; gi++) {
        const int *g = &M->gen[(size_t)gi * n];
        for (int c = 0; c < M->nch; c++) {
            int ci = chunk_image(M, c, g);
            for (int v = 0; v < n; v++)
                if (isfinite(M->lb[(size_t)c * n + v]))
                    uf_union(&uf, c * n + v, ci * n + g[v]);
        }
    }
    P->scol = xmalloc(ns * sizeof *P->scol);
    for (int c = 0; c < M->nch; c++) {
        int o = origin_of(M, c);
        for (int v = 0; v < n; v++) {
            size_t q = (size_t)c * n + v;
            P->scol[q] = -1;
            if (v == o || !isfinite(M->lb[q]))
                continue;
            double val = isfinite(P->H->arr[q]) ? P->H->arr[q] : M->lb[q];
            int r = uf_find(&uf, (int)q);
            if ((size_t)r == q) {
                snprintf(name, sizeof name, "a_%d_%d_%d", o, c % M->cpr, v);
                P->scol[q] = add_col(P, name, M->lb[q], start_ub(P, c, v), 0, 0, val);
            } else {
                P->scol[q] = P->scol[r];
                if (!feq(P->inc[P->scol[q]], val))
                    P->consistent = 0;
            }
        }
    }
    uf_free(&uf);
    /* y: one column per orbit of counted switch connections */
    P->ycol = xmalloc(((size_t)M->nhops + 1) * sizeof *P->ycol);
    uf_init(&uf, M->nhops > 0 ? M->nhops : 1);
    for (int gi = 0; gi < M->ngen; gi++)
        for (int hi = 0; hi < M->nhops; hi++) {
            int hj = hop_image(M, hi, &M->gen[(size_t)gi * n]);
            if (M->hops[hi].uc >= 0 && hj >= 0)
                uf_union(&uf, hi, hj);
        }
    unsigned char *hop_used = xcalloc((size_t)M->nhops + 1, 1);
    for (int sl = 0; sl < nslots; sl++)
        if (P->used[sl])
            hop_used[M->chop[sl]] = 1;
    double *yobj = xcalloc((size_t)M->nhops + 1, sizeof *yobj);
    for (int hi = 0; hi < M->nhops; hi++) {
        P->ycol[hi] = -1;
        const hop *h = &M->hops[hi];
        if (h->uc < 0)
            continue;
        int r = uf_find(&uf, hi);
        if (r == hi) {
            snprintf(name, sizeof name, "y_%d_%d", h->u, h->v);
            P->ycol[hi] = add_col(P, name, 0, 1, 0, 1, hop_used[hi]);
        } else {
            P->ycol[hi] = P->ycol[r];
            if (P->inc[P->ycol[hi]] != hop_used[hi])
                P->consistent = 0;
        }
        yobj[r] += h->uc == SK_UC_MIN ? UC_MU : -UC_MU;
    }
    for (int hi = 0; hi < M->nhops; hi++)
        if (P->ycol[hi] >= 0 && uf_find(&uf, hi) == hi) {
            lp_set_obj(P->p, P->ycol[hi], yobj[hi]);
            P->objc[P->ycol[hi]] = yobj[hi];
        }
    free(yobj);
    free(hop_used);
    uf_free(&uf);
    P->ucol = -1;
    if (M->s->intra == SK_INTRA_MINMAX)
        P->ucol = add_col(P, "max_load", 0, INFINITY, UC_MU, 0, 0);
    else if (M->s->intra == SK_INTRA_MAXMIN)
        P->ucol = add_col(P, "min_load", 0, INFINITY, -UC_MU, 0, 0);
    return 0;
}

/* Big-M of "x[c,h] implies a[c,v] >= a[c,u] + cost". */
static double timing_m(const milp *P, int c, const hop *h)
{
    int o = origin_of(P->M, c);
    double ubu = h->u == o ? 0 : start_ub(P, c, h->u);
    double m = ubu + h->cost - P->M->lb[(size_t)c * P->M->n + h->v];
    return m > 0 ? m : 0;
}

/* Per-chunk rows of representative chunk c. */
static void chunk_rows(milp *P, int c, int *in_start, int *in_sl, int *out_start, int *out_sl,
                       int *dest, unsigned char *isdest, int *bucket)
{
    const rmodel *M = P->M;
    const sketch *s = M->s;
    int n = M->n, o = origin_of(M, c), c0 = M->cstart[c], c1 = M->cstart[c + 1];
    int nd = chunk_dests(M, c, dest);
    memset(isdest, 0, (size_t)n);
    for (int j = 0; j < nd; j++)
        isdest[dest[j]] = 1;
    /* candidate slots by receiver and by sender */
    memset(in_start, 0, ((size_t)n + 1) * sizeof *in_start);
    memset(out_start, 0, ((size_t)n + 1) * sizeof *out_start);
    for (int sl = c0; sl < c1; sl++) {
        in_start[M->hops[M->chop[sl]].v + 1]++;
        out_start[M->hops[M->chop[sl]].u + 1]++;
    }
    for (int v = 0; v < n; v++) {
        in_start[v + 1] += in_start[v];
        out_start[v + 1] += out_start[v];
    }
    int *fi = bucket, *fo = bucket + n + 1;
    memcpy(fi, in_start, ((size_t)n + 1) * sizeof *fi);
    memcpy(fo, out_start, ((size_t)n + 1) * sizeof *fo);
    for (int sl = c0; sl < c1; sl++) {
        in_sl[fi[M->hops[M->chop[sl]].v]++] = sl;
        out_sl[fo[M->hops[M->chop[sl]].u]++] = sl;
    }
    const int *S = &P->scol[(size_t)c * n];
    for (int v = 0; v < n; v++) {
        if (v == o || in_start[v] == in_start[v + 1])
            continue;
        /* received exactly once (destination) or at most once */
        rb_clear(&P->rb);
        for (int k = in_start[v]; k < in_start[v + 1]; k++)
            rb_add(&P->rb, P->xcol[in_sl[k]], 1.0);
        add_row(P, isdest[v] ? 1.0 : -INFINITY, 1.0);
        /* a relay forwards only what it receives */
        if (!isdest[v])
            for (int q = out_start[v]; q < out_start[v + 1]; q++) {
                rb_clear(&P->rb);
                rb_add(&P->rb, P->xcol[out_sl[q]], 1.0);
                for (int k = in_start[v]; k < in_start[v + 1]; k++)
                    rb_add(&P->rb, P->xcol[in_sl[k]], -1.0);
                add_row(P, -INFINITY, 0.0);
            }
    }
    /* arrival after the sender's arrival plus the hop */
    for (int sl = c0; sl < c1; sl++) {
        const hop *h = &M->hops[M->chop[sl]];
        double m = timing_m(P, c, h);
        if (h->u == o && m <= 1e-12)
            continue;
        rb_clear(&P->rb);
        rb_add(&P->rb, S[h->v], 1.0);
        if (h->u != o)
            rb_add(&P->rb, S[h->u], -1.0);
        rb_add(&P->rb, P->xcol[sl], -m);
        add_row(P, h->cost - m, INFINITY);
    }
    /* the makespan covers every destination */
    for (int j = 0; j < nd; j++) {
        rb_clear(&P->rb);
        rb_add(&P->rb, S[dest[j]], -1.0);
        add_time_row(P, 0.0);
    }
    /* a destination's sends through one port or NIC follow its arrival */
    for (int u = 0; u < n; u++) {
        if (!isdest[u] || out_start[u + 1] - out_start[u] < 2)
            continue;
        for (int q = out_start[u]; q < out_start[u + 1]; q++) {
            const hop *h = &M->hops[M->chop[out_sl[q]]];
            if (h->nres != 2)
                continue;
            int r = h->res[0], first = 1, cnt = 0;
            for (int q2 = out_start[u]; q2 < q && first; q2++) {
                const hop *h2 = &M->hops[M->chop[out_sl[q2]]];
                first = !(h2->nres == 2 && h2->res[0] == r);
            }
            if (!first)
                continue;
            rb_clear(&P->rb);
            rb_add(&P->rb, S[u], -1.0);
            for (int q2 = q; q2 < out_start[u + 1]; q2++) {
                const hop *h2 = &M->hops[M->chop[out_sl[q2]]];
                if (h2->nres == 2 && h2->res[0] == r) {
                    rb_add(&P->rb, P->xcol[out_sl[q2]], -h2->cost);
                    cnt++;
                }
            }
            if (cnt >= 2)
                add_time_row(P, 0.0);
        }
    }
    /* relay cut: the chunk enters every other node holding a destination */
    int nn = M->t->nnodes, no = o / M->rpn;
    for (int nd2 = 0; nd2 < nn; nd2++) {
        if (nd2 == no)
            continue;
        rb_clear(&P->rb);
        for (int sl = c0; sl < c1; sl++) {
            const hop *h = &M->hops[M->chop[sl]];
            if (h->inter && h->v / M->rpn == nd2)
                rb_add(&P->rb, P->xcol[sl], 1.0);
        }
        int need = 0;
        for (int j = 0; j < nd && !need; j++)
            need = dest[j] / M->rpn == nd2;
        if (need && P->rb.n > 0)
            add_row(P, 1.0, INFINITY);
    }
    /* enforce_ordering: s's own chunks cross s -> r before those s relays */
    if (s->enforce_ordering)
        for (int sl = c0; sl < c1; sl++) {
            const hop *h = &M->hops[M->chop[sl]];
            if (!h->inter || h->u == o)
                continue;
            for (int j = 0; j < M->cpr; j++) {
                int cs = h->u * M->cpr + j;
                int sl2 = slot_of(M, cs, M->chop[sl]);
                if (sl2 < 0)
                    continue;
                double mm = start_ub(P, cs, h->v) + h->cost - M->lb[(size_t)c * n + h->v];
                rb_clear(&P->rb);
                rb_add(&P->rb, S[h->v], 1.0);
                rb_add(&P->rb, P->scol[(size_t)cs * n + h->v], -1.0);
                rb_add(&P->rb, P->xcol[sl], -mm);
                rb_add(&P->rb, P->xcol[sl2], -mm);
                add_row(P, h->cost - 2 * mm, INFINITY);
            }
        }
    /* uc-min: a connection is used when any chunk takes it */
    for (int sl = c0; sl < c1; sl++) {
        int hi = M->chop[sl];
        if (M->hops[hi].uc != SK_UC_MIN)
            continue;
        rb_clear(&P->rb);
        rb_add(&P->rb, P->ycol[hi], 1.0);
        rb_add(&P->rb, P->xcol[sl], -1.0);
        add_row(P, 0.0, INFINITY);
    }
}

/* Resource rows (one per resource orbit) and uc-max rows (one per connection orbit). */
static void global_rows(milp *P)
{
    const rmodel *M = P->M;
    int n = M->n, nslots = M->cstart[M->nch];
    ufind uf;
    uf_init(&uf, M->nres > 0 ? M->nres : 1);
    for (int gi = 0; gi < M->ngen; gi++)
        for (int hi = 0; hi < M->nhops; hi++) {
            int hj = hop_image(M, hi, &M->gen[(size_t)gi * n]);
            if (hj < 0)
                continue;
            for (int q = 0; q < M->hops[hi].nres && q < M->hops[hj].nres; q++)
                uf_union(&uf, M->hops[hi].res[q], M->hops[hj].res[q]);
        }
    int *cnt = xcalloc((size_t)M->nres + 1, sizeof *cnt);
    for (int sl = 0; sl < nslots; sl++) {
        const hop *h = &M->hops[M->chop[sl]];
        for (int q = 0; q < h->nres; q++)
            if (uf_find(&uf, h->res[q]) == h->res[q])
                cnt[h->res[q] + 1]++;
    }
    for (int r = 0; r < M->nres; r++)
        cnt[r + 1] += cnt[r];
    int *items = xmalloc(((size_t)cnt[M->nres] + 1) * sizeof *items);
    int *fill = xmalloc(((size_t)M->nres + 1) * sizeof *fill);
    memcpy(fill, cnt, ((size_t)M->nres + 1) * sizeof *fill);
    for (int sl = 0; sl < nslots; sl++) {
        const hop *h = &M->hops[M->chop[sl]];
        for (int q = 0; q < h->nres; q++)
            if (uf_find(&uf, h->res[q]) == h->res[q])
                items[fill[h->res[q]]++] = sl;
    }
    free(fill);
    for (int r = 0; r < M->nres; r++) {
        if (cnt[r] == cnt[r + 1])
            continue;
        double lanes = M->lanes[r];
        rb_clear(&P->rb);
        for (int k = cnt[r]; k < cnt[r + 1]; k++)
            rb_add(&P->rb, P->xcol[items[k]], -M->hops[M->chop[items[k]]].cost / lanes);
        if (P->ucol >= 0) {
            double load = -rb_eval(P);
            if (M->s->intra == SK_INTRA_MINMAX && load > P->uinc)
                P->uinc = load;
            if (M->s->intra == SK_INTRA_MAXMIN && (P->uinc == 0 || load < P->uinc))
                P->uinc = load;
            rb_add(&P->rb, P->ucol, 1.0);
            if (M->s->intra == SK_INTRA_MINMAX)
                add_row(P, 0.0, INFINITY);
            else
                add_row(P, -INFINITY, 0.0);
            P->rb.n--;
        }
        add_time_row(P, 0.0);
    }
    free(items);
    free(cnt);
    uf_free(&uf);
    /* uc-max: a connection counts only if some chunk takes it (one row per column) */
    unsigned char *done = xcalloc((size_t)lp_ncols(P->p) + 1, 1);
    for (int hi = 0; hi < M->nhops; hi++) {
        if (M->hops[hi].uc != SK_UC_MAX || P->ycol[hi] < 0 || done[P->ycol[hi]])
            continue;
        done[P->ycol[hi]] = 1;
        rb_clear(&P->rb);
        rb_add(&P->rb, P->ycol[hi], 1.0);
        for (int c = 0; c < M->nch; c++) {
            int sl = slot_of(M, c, hi);
            if (sl >= 0)
                rb_add(&P->rb, P->xcol[sl], -1.0);
        }
        add_row(P, -INFINITY, 0.0);
    }
    free(done);
}

/* ------------------------------------------------------------ the incumbent */

/* Earliest arrivals on the heuristic trees that also keep enforce_ordering
 * (a relayed chunk reaches r one hop cost after each of the sender's own
 * chunks on the same hop): longest paths by repeated relaxation.  0 if
 * they do not settle (a cycle of orderings). */
static int incumbent_times(const rmodel *M, trees *T)
{
    int n = M->n, changed = 1, passes = 0, limit = 4 * n + 16;
    while (changed && passes++ < limit) {
        changed = 0;
        for (int c = 0; c < M->nch; c++) {
            const int *par = &T->par[(size_t)c * n];
            double *arr = &T->arr[(size_t)c * n];
            int o = origin_of(M, c);
            for (int v = 0; v < n; v++) {
                if (par[v] < 0)
                    continue;
                const hop *h = &M->hops[par[v]];
                double need = arr[h->u] + h->cost;
                if (M->s->enforce_ordering && h->inter && h->u != o)
                    for (int j = 0; j < M->cpr; j++) {
                        int cs = h->u * M->cpr + j;
                        if (T->par[(size_t)cs * n + v] == par[v]) {
                            double x = T->arr[(size_t)cs * n + v] + h->cost;
                            if (x > need)
                                need = x;
                        }
                    }
                if (need > arr[v] && !feq(need, arr[v])) {
                    arr[v] = need;
                    changed = 1;
                }
            }
        }
    }
    return !changed;
}

/* The relaxed makespan of trees T (what the MILP's time rows ask of them). */
static double relaxed_time(const rmodel *M, const trees *T)
{
    int n = M->n;
    double t = 0;
    double *load = xcalloc((size_t)M->nres + 1, sizeof *load);
    double *port = xcalloc((size_t)M->nres + 1, sizeof *port);
    int *start = xmalloc(((size_t)n + 1) * sizeof *start), *fill = xmalloc((size_t)n * sizeof *fill);
    int *kid = xmalloc((size_t)n * sizeof *kid);
    for (int c = 0; c < M->nch; c++) {
        const int *par = &T->par[(size_t)c * n];
        const double *arr = &T->arr[(size_t)c * n];
        for (int v = 0; v < n; v++) {
            if (par[v] < 0)
                continue;
            const hop *h = &M->hops[par[v]];
            if (arr[v] > t)
                t = arr[v];
            for (int q = 0; q < h->nres; q++)
                load[h->res[q]] += h->cost / M->lanes[h->res[q]];
        }
        /* a rank's sends of c through one port or NIC, after c reached it:
         * the receivers v of each sender u's such sends, in v order */
        memset(start, 0, ((size_t)n + 1) * sizeof *start);
        for (int v = 0; v < n; v++)
            if (par[v] >= 0 && M->hops[par[v]].nres == 2)
                start[M->hops[par[v]].u + 1]++;
        for (int u = 0; u < n; u++)
            start[u + 1] += start[u];
        memcpy(fill, start, (size_t)n * sizeof *fill);
        for (int v = 0; v < n; v++)
            if (par[v] >= 0 && M->hops[par[v]].nres == 2)
                kid[fill[M->hops[par[v]].u]++] = v;
        for (int u = 0; u < n; u++) {
            if (!isfinite(arr[u]))
                continue;
            for (int k = start[u]; k < start[u + 1]; k++)
                port[M->hops[par[kid[k]]].res[0]] = 0;
            for (int k = start[u]; k < start[u + 1]; k++) {
                const hop *h = &M->hops[par[kid[k]]];
                port[h->res[0]] += h->cost;
                if (arr[u] + port[h->res[0]] > t)
                    t = arr[u] + port[h->res[0]];
            }
        }
    }
    for (int r = 0; r < M->nres; r++)
        if (load[r] > t)
            t = load[r];
    free(load);
    free(port);
    free(start);
    free(fill);
    free(kid);
    return t;
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

/* Read the MILP's routing into R; 0 if it is not a forest of trees. */
static int extract(const milp *P, trees *R)
{
    const rmodel *M = P->M;
    int n = M->n, ok = 1;
    int *dest = xmalloc((size_t)n * sizeof *dest), *order = xmalloc((size_t)n * sizeof *order);
    unsigned char *isdest = xmalloc((size_t)n);
    for (int c = 0; c < M->nch && ok; c++) {
        int *par = &R->par[(size_t)c * n];
        for (int sl = M->cstart[c]; sl < M->cstart[c + 1] && ok; sl++) {
            if (!(lp_value(P->p, P->xcol[sl]) > 0.5))
                continue;
            const hop *h = &M->hops[M->chop[sl]];
            if (par[h->v] >= 0)
                ok = 0;
            par[h->v] = M->chop[sl];
        }
        if (!ok)
            break;
        int nd = chunk_dests(M, c, dest);
        memset(isdest, 0, (size_t)n);
        for (int j = 0; j < nd; j++)
            isdest[dest[j]] = 1;
        prune_dead_relays(M, par, isdest);
        tree_arrivals(M, R, c, order);      /* uncontended: also finds cycles */
        for (int v = 0; v < n && ok; v++)
            if ((par[v] >= 0 || isdest[v]) && !isfinite(R->arr[(size_t)c * n + v]))
                ok = 0;
    }
    /* the MILP's own arrivals when they respect every hop */
    int exact = ok;
    for (int c = 0; c < M->nch && exact; c++)
        for (int v = 0; v < n && exact; v++) {
            int hi = R->par[(size_t)c * n + v];
            if (hi < 0)
                continue;
            const hop *h = &M->hops[hi];
            double av = lp_value(P->p, P->scol[(size_t)c * n + v]);
            double au = h->u == origin_of(M, c) ? 0 : lp_value(P->p, P->scol[(size_t)c * n + h->u]);
            exact = isfinite(av) && isfinite(au) && av - au >= h->cost - 1e-6 * (1 + av);
        }
    if (exact)
        for (int c = 0; c < M->nch; c++)
            for (int v = 0; v < n; v++)
                if (R->par[(size_t)c * n + v] >= 0) {
                    double av = lp_value(P->p, P->scol[(size_t)c * n + v]);
                    if (av > R->arr[(size_t)c * n + v])
                        R->arr[(size_t)c * n + v] = av;
                }
    free(dest);
    free(order);
    free(isdest);
    return ok;
}

static void milp_free(milp *P)
{
    lp_free(P->p);
    free(P->xcol);
    free(P->scol);
    free(P->ycol);
    free(P->inc);
    free(P->objc);
    free(P->rb.col);
    free(P->rb.val);
    memset(P, 0, sizeof *P);
}

/* Columns and rows.  -1 if the symmetry does not map candidates onto candidates. */
static int milp_build(milp *P, const rmodel *M, const trees *H, const unsigned char *used,
                      double U)
{
    memset(P, 0, sizeof *P);
    P->M = M;
    P->H = H;
    P->used = used;
    P->U = U;
    P->consistent = 1;
    P->p = lp_new("route");
    if (build_columns(P) < 0)
        return -1;
    int n = M->n;
    int *in_start = xmalloc(((size_t)n + 1) * sizeof *in_start);
    int *out_start = xmalloc(((size_t)n + 1) * sizeof *out_start);
    int *in_sl = xmalloc(((size_t)M->nhops + 1) * sizeof *in_sl);
    int *out_sl = xmalloc(((size_t)M->nhops + 1) * sizeof *out_sl);
    int *bucket = xmalloc((2 * (size_t)n + 2) * sizeof *bucket);
    int *dest = xmalloc((size_t)n * sizeof *dest);
    unsigned char *isdest = xmalloc((size_t)n);
    for (int c = 0; c < M->nch; c++)
        if (M->rep[c] == c)
            chunk_rows(P, c, in_start, in_sl, out_start, out_sl, dest, isdest, bucket);
    global_rows(P);
    free(in_start);
    free(out_start);
    free(in_sl);
    free(out_sl);
    free(bucket);
    free(dest);
    free(isdest);
    P->inc[P->tcol] = P->tinc;
    if (P->ucol >= 0)
        P->inc[P->ucol] = P->uinc;
    return 0;
}

static double objective_of_incumbent(const milp *P)
{
    double s = 0;
    for (int j = 0; j < lp_ncols(P->p); j++)
        s += P->objc[j] * P->inc[j];
    return s;
}

/* ------------------------------------------------------------ public */

static void stats_reset(route_stats *st)
{
    memset(st, 0, sizeof *st);
    st->status = LP_UNSOLVED;
    st->objective = st->best_bound = st->gap = st->time_us = NAN;
    st->heur_makespan_us = st->heur_relaxed_us = st->heur_objective = NAN;
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
    int rc = rmodel_build(&M, s, t, k, chunk_bytes, o, err);
    if (rc)
        return rc;
    trees H;
    trees_init(&H, &M);
    heuristic_trees(&M, &H);
    *out = trees_to_algo(&M, &H);
    trees_free(&H);
    rmodel_free(&M);
    return TC_OK;
}

/* Slots the heuristic trees use. */
static unsigned char *used_slots(const rmodel *M, const trees *H)
{
    int n = M->n;
    unsigned char *used = xcalloc((size_t)M->cstart[M->nch] + 1, 1);
    for (int c = 0; c < M->nch; c++)
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

/* One attempt with or without symmetry; *retry = 1 asks for another
 * without (the heuristic routing could not be made symmetric). */
static int solve_once(const job *J, int use_sym, algo **out, int *retry, tc_err *err)
{
    const route_opts *o = J->o;
    route_stats *st = J->st;
    route_opts oo = *o;
    oo.use_symmetry = use_sym;
    *retry = 0;
    rmodel M;
    int rc = rmodel_build(&M, J->s, J->t, J->k, J->bytes, &oo, err);
    if (rc)
        return rc;
    trees H;
    trees_init(&H, &M);
    heuristic_trees(&M, &H);
    algo *ha = trees_to_algo(&M, &H), *hs = NULL;
    rc = order_schedule(ha, J->t, J->bytes, NULL, &hs, NULL, err);
    if (rc) {
        algo_free(ha);
        trees_free(&H);
        rmodel_free(&M);
        return rc;
    }
    double makespan = hs->predicted_us;
    algo_free(hs);
    int times_ok = incumbent_times(&M, &H);
    double relaxed = relaxed_time(&M, &H);
    double U = (makespan > relaxed ? makespan : relaxed) * (1 + 1e-9) + 1e-9;
    st->nchunks = M.nch;
    st->nreps = M.nreps;
    st->nslots = M.cstart[M.nch];
    st->symmetric = M.symmetric;
    st->heur_makespan_us = makespan;
    st->heur_relaxed_us = relaxed;
    unsigned char *used = used_slots(&M, &H);
    milp P;
    int built = milp_build(&P, &M, &H, used, U);
    if (built < 0 || (!P.consistent && M.symmetric)) {
        *retry = 1;
        snprintf(st->msg, sizeof st->msg, "%s", built < 0 ?
                 "the sketch's symmetry does not map candidate hops onto candidate hops: "
                 "solved without it" : "the heuristic routing is not symmetric: solved without "
                 "symmetry");
        milp_free(&P);
        free(used);
        algo_free(ha);
        trees_free(&H);
        rmodel_free(&M);
        return TC_OK;
    }
    st->ncols = lp_ncols(P.p);
    st->nbin = P.nbin;
    st->nrows = lp_nrows(P.p);
    st->nnz = lp_nnz(P.p);
    st->heur_objective = objective_of_incumbent(&P);
    st->build_s = now_s() - J->t0;
    progress(o, "%s %s on %s, %.6g-byte chunks: %d chunks (%d orbit%s), %d candidate hops; "
             "heuristic makespan %.6g us (relaxed %.6g us)", J->s->name, coll_name(J->k),
             J->t->name, J->bytes, M.nch, M.nreps, M.nreps == 1 ? "" : "s", st->nslots,
             makespan, relaxed);
    progress(o, "model: %d columns (%d binary), %d rows, %d nonzeros; built in %.3f s",
             st->ncols, st->nbin, st->nrows, st->nnz, st->build_s);
    algo *res = NULL;
    if (o->build_only) {
        res = ha;
        ha = NULL;
        snprintf(st->msg, sizeof st->msg, "model built, not solved: heuristic routing");
    } else {
        lp_opts lo;
        lp_opts_init(&lo);
        lo.time_limit_s = o->time_limit_s;
        lo.mip_gap = o->mip_gap;
        lo.verbose = o->verbose;
        lo.cuts = o->cuts;
        lo.heuristics = o->heuristics;
        lo.backend = o->backend;
        lo.mem_limit_mb = o->mem_limit_mb;
        if (o->seed && times_ok) {
            lo.incumbent = P.inc;
            lo.presolve = 0;
        }
        lp_result r;
        tc_err e2;
        tc_err_clear(&e2);
        int lrc = lp_solve(P.p, &lo, &r, &e2);
        st->solve_s = r.seconds;
        st->status = r.status;
        st->incumbent_used = r.incumbent_used;
        st->objective = r.objective;
        st->best_bound = r.best_bound;
        st->gap = r.gap;
        if (lrc == TC_STOP || (lrc != TC_OK && r.out_of_memory)) {
            /* a stop request or the memory limit: an error, not a fallback */
            rc = tc_err_set(err, lrc, "routing MILP: %s", e2.msg);
        } else if (lrc == TC_OK && (r.status == LP_OPTIMAL || r.status == LP_FEASIBLE)) {
            trees R;
            trees_init(&R, &M);
            if (extract(&P, &R)) {
                res = trees_to_algo(&M, &R);
                tc_err e3;
                if (route_check(res, J->s, J->t, J->k, &e3) != TC_OK) {
                    algo_free(res);
                    res = NULL;
                    snprintf(st->msg, sizeof st->msg, "the MILP's routing is unusable (%.300s): "
                             "heuristic routing", e3.msg);
                } else {
                    st->time_us = lp_value(P.p, P.tcol);
                    res->predicted_us = st->time_us;
                    snprintf(st->msg, sizeof st->msg, "%.400s", r.msg);
                }
            } else {
                snprintf(st->msg, sizeof st->msg, "the MILP's solution is not a set of trees: "
                         "heuristic routing");
            }
            trees_free(&R);
        } else {
            snprintf(st->msg, sizeof st->msg, "%.400s: heuristic routing",
                     lrc == TC_OK ? r.msg : e2.msg);
        }
        if (!res && rc == TC_OK) {
            res = ha;
            ha = NULL;
            st->fallback = 1;
        }
        char gap[48] = "gap unknown";
        if (isfinite(r.gap))
            snprintf(gap, sizeof gap, "gap %.3g%%", 100 * r.gap);
        if (rc == TC_OK && lrc != TC_OK)
            progress(o, "%s; returning the heuristic routing", e2.msg);
        else if (rc == TC_OK)
            progress(o, "%s: %s in %.3f s; objective %.6g, bound %.6g, %s; time %.6g us; "
                     "incumbent %s%s", lp_backend_name(o->backend), lp_status_name(r.status),
                     r.seconds, r.objective, r.best_bound, gap, st->time_us,
                     r.incumbent_used == 1 ? "used" : r.incumbent_used == 0 ? "rejected"
                                                                            : "none",
                     st->fallback ? "; returning the heuristic routing" : "");
        if (rc == TC_OK && r.incumbent_used == 0)
            progress(o, "incumbent rejected: %s", r.msg);
    }
    if (res)
        st->connections = count_connections(res, J->t);
    *out = res;
    algo_free(ha);
    milp_free(&P);
    free(used);
    trees_free(&H);
    rmodel_free(&M);
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
