/* route_graph.c — stage 1's skeleton (rmodel): every directed hop of the
 * topology with its cost and resources, per chunk the candidate hops (the
 * sketch's graph pruned by hop distance, route.h) and the cheapest arrival
 * at each rank over them, the symmetry generators, chunk orbits and the
 * permutation carrying each orbit's representative to its members.
 *
 * Built once per solve, before any tree or MILP: both route_trees.c and
 * route_milp.c read it.  A rank some chunk cannot reach is found here, on
 * the graph the MILP would be built on, and explained by the sketch key
 * that forbids it (explain_unreachable). */
#include "route_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/cost.h"
#include "../util/mem.h"

#define ROUTE_MAX_WORK 2e9  /* orbits x ranks x (ranks + hops): see check_size() */

void route_rmodel_free(rmodel *M)
{
    free(M->hops);
    free(M->hop_of);
    free(M->out_start);
    free(M->out_hop);
    free(M->in_start);
    free(M->in_hop);
    free(M->leaves_via);
    free(M->lanes);
    free(M->cand_start);
    free(M->cand_hop);
    free(M->cheapest);
    free(M->gens);
    free(M->orbit_rep);
    free(M->rep_to_chunk);
    free(M->orbit_start);
    free(M->orbit);
    free(M->dest_scratch);
    free(M->index_scratch);
    memset(M, 0, sizeof *M);
}

/* Each of start[0..n) ascending to nitems, items a permutation-free list
 * of hop indexes in range whose key (sender or receiver) is the bucket. */
static int csr_sane(const rmodel *M, const int *start, const int *items, int by_sender)
{
    if (start[0] != 0 || start[M->nranks] != M->nhops)
        return 0;
    for (int r = 0; r < M->nranks; r++) {
        if (start[r] > start[r + 1])
            return 0;
        for (int k = start[r]; k < start[r + 1]; k++) {
            if (items[k] < 0 || items[k] >= M->nhops)
                return 0;
            const hop *h = &M->hops[items[k]];
            if ((by_sender ? h->u : h->v) != r)
                return 0;
        }
    }
    return 1;
}

int route_rmodel_sane(const rmodel *M)
{
    int n = M->nranks;
    if (n < 1 || M->ranks_per_node < 1 || n % M->ranks_per_node || M->chunkup < 1 ||
        M->nchunks != n * M->chunks_per_rank || M->chunks_per_loop != n * M->chunkup)
        return 0;
    for (int i = 0; i < M->nhops; i++) {
        const hop *h = &M->hops[i];
        if (h->u < 0 || h->u >= n || h->v < 0 || h->v >= n || h->u == h->v ||
            M->hop_of[h->u * n + h->v] != i || !(h->cost > 0) || h->nres < 1 || h->nres > 2 ||
            h->inter != (node_of(M, h->u) != node_of(M, h->v)))
            return 0;
        for (int q = 0; q < h->nres; q++)
            if (h->res[q] < 0 || h->res[q] >= M->nresources)
                return 0;
        if (i > 0 && (M->hops[i - 1].u > h->u ||
                      (M->hops[i - 1].u == h->u && M->hops[i - 1].v >= h->v)))
            return 0;
    }
    for (int i = 0; i < n * n; i++)
        if (M->hop_of[i] < -1 || M->hop_of[i] >= M->nhops)
            return 0;
    if (!csr_sane(M, M->out_start, M->out_hop, 1) || !csr_sane(M, M->in_start, M->in_hop, 0))
        return 0;
    if (M->cand_start[0] != 0)
        return 0;
    for (int c = 0; c < M->nchunks; c++) {
        for (int k = M->cand_start[c]; k < M->cand_start[c + 1]; k++)
            if (M->cand_hop[k] < 0 || M->cand_hop[k] >= M->nhops ||
                (k > M->cand_start[c] && M->cand_hop[k - 1] >= M->cand_hop[k]))
                return 0;
        if (M->cheapest[(size_t)c * n + origin_of(M, c)] != 0)
            return 0;
        int rep = M->orbit_rep[c];
        if (rep < 0 || rep > c || M->orbit_rep[rep] != rep)
            return 0;
    }
    int members = 0;
    for (int c = 0; c < M->nchunks; c++)
        for (int k = M->orbit_start[c]; k < M->orbit_start[c + 1]; k++, members++)
            if (M->orbit_rep[M->orbit[k]] != c)
                return 0;
    if (members != M->nchunks)
        return 0;
    int ok = 1;
    unsigned char *seen = xmalloc((size_t)n);
    for (int g = 0; g < M->ngens && ok; g++) {
        memset(seen, 0, (size_t)n);
        for (int r = 0; r < n && ok; r++) {
            int x = M->gens[(size_t)g * n + r];
            ok = x >= 0 && x < n && !seen[x];
            if (ok)
                seen[x] = 1;
        }
    }
    free(seen);
    return ok;
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
    int n = M->nranks, rpn = M->ranks_per_node;
    M->hop_of = xmalloc((size_t)n * n * sizeof *M->hop_of);
    M->hops = xmalloc((size_t)n * (n > 1 ? n - 1 : 1) * sizeof *M->hops);
    M->nhops = 0;
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++) {
            M->hop_of[(size_t)u * n + v] = -1;
            if (u == v)
                continue;
            topo_route rt = topo_route_of(t, u, v);
            hop h;
            memset(&h, 0, sizeof h);
            h.u = u;
            h.v = v;
            h.nres = cost_route_res(t, &rt, u, v, h.res);
            h.cost = cost_hop_us(&rt, M->chunk_bytes);
            h.hold = cost_hold_us(t, &rt, M->chunk_bytes);
            if (h.nres == 0 || !isfinite(h.cost))
                continue;
            h.inter = node_of(M, u) != node_of(M, v);
            h.pair_ok = h.inter ? sketch_internode_ok(M->s, rpn, u % rpn, v % rpn) : 1;
            h.is_switch = rt.kind == ROUTE_SWITCH;
            h.uc = h.is_switch && !h.inter ? sketch_uc_of(M->s, u % rpn, v % rpn) : -1;
            M->hop_of[(size_t)u * n + v] = M->nhops;
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
    M->leaves_via = xmalloc((size_t)rpn * rpn);
    for (int o = 0; o < rpn; o++)
        for (int x = 0; x < rpn; x++)
            M->leaves_via[o * rpn + x] = (unsigned char)sketch_leaves_via(M->s, rpn, o, x);
    M->nresources = cost_nres(t);
    M->lanes = xmalloc(((size_t)M->nresources + 1) * sizeof *M->lanes);
    for (int r = 0; r < M->nresources; r++)
        M->lanes[r] = cost_res_lanes(t, r);
}

/* Scratch for the per-chunk graph searches. */
typedef struct {
    int *dO, *dR, *queue, *dest;
    unsigned char *dnode, *mark, *done;
} search;

static void search_init(search *w, const rmodel *M)
{
    w->dO = xmalloc((size_t)M->nranks * sizeof *w->dO);
    w->dR = xmalloc((size_t)M->nranks * sizeof *w->dR);
    w->queue = xmalloc((size_t)M->nranks * sizeof *w->queue);
    w->dest = xmalloc((size_t)M->nranks * sizeof *w->dest);
    w->dnode = xcalloc((size_t)M->t->nnodes, 1);
    w->mark = xcalloc((size_t)M->nhops + 1, 1);
    w->done = xcalloc((size_t)M->nranks, 1);
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
           (g >= G_NO_VIA || M->leaves_via[(o % M->ranks_per_node) * M->ranks_per_node +
                                           h->u % M->ranks_per_node]);
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
    for (int i = 0; i < M->nranks; i++)
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
    for (int a = 0; a < M->ranks_per_node; a++) {
        int sa = node_of(M, o) * M->ranks_per_node + a;
        if (dist[sa] < 0 || !M->leaves_via[(o % M->ranks_per_node) * M->ranks_per_node + a])
            continue;
        for (int b = 0; b < M->ranks_per_node; b++) {
            if (!sketch_internode_ok(M->s, M->ranks_per_node, a, b))
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
    int o = origin_of(M, c), i = c % M->chunks_per_rank, rpn = M->ranks_per_node;
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
    int n = M->nranks;
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
    cheapest_arrivals(M, w, o, &M->cheapest[(size_t)c * M->nranks]);
    return TC_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Chunk c is not its orbit's representative (processed before it, as the
 * orbit's smallest chunk): its candidates and cheapest arrivals are the
 * representative's carried by the permutation (sketch_check made sure the
 * symmetries map the topology and the sketch's graph onto themselves).
 * 0 if a hop has no image (then c is searched on its own). */
static int carry_candidates(rmodel *M, int c, int **list, int *len, int *cap)
{
    int n = M->nranks, r = M->orbit_rep[c], r0 = M->cand_start[r], r1 = M->cand_start[r + 1];
    const int *g = &M->rep_to_chunk[(size_t)c * n];
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
    const double *lr = &M->cheapest[(size_t)r * n];
    double *lc = &M->cheapest[(size_t)c * n];
    for (int v = 0; v < n; v++)
        lc[g[v]] = lr[v];
    return 1;
}

static int build_candidates(rmodel *M, tc_err *err)
{
    search w;
    search_init(&w, M);
    M->cand_start = xcalloc((size_t)M->nchunks + 1, sizeof *M->cand_start);
    M->cheapest = xmalloc((size_t)M->nchunks * M->nranks * sizeof *M->cheapest);
    int len = 0, cap = 0, rc = TC_OK;
    int *list = NULL;
    for (int c = 0; c < M->nchunks && rc == TC_OK; c++) {
        if (lp_stop_requested())
            rc = tc_err_set(err, TC_STOP, "interrupted");
        else if (M->orbit_rep[c] == c || !carry_candidates(M, c, &list, &len, &cap))
            rc = chunk_candidates(M, &w, c, &list, &len, &cap, err);
        M->cand_start[c + 1] = len;
    }
    M->cand_hop = list ? list : xmalloc(sizeof *M->cand_hop);
    search_free(&w);
    return rc;
}

/* Generators, chunk orbits, and the permutation carrying each
 * representative to each member of its orbit. */
static int build_symmetry(rmodel *M, int use)
{
    int n = M->nranks, nch = M->nchunks;
    M->ngens = use ? M->s->nsym : 0;
    M->gens = xmalloc(((size_t)M->ngens * n + 1) * sizeof *M->gens);
    unsigned char *seen = xcalloc((size_t)n, 1);
    int g = 0;
    for (int i = 0; i < M->ngens; i++) {
        int *p = &M->gens[(size_t)g * n], ok = 1;
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
    M->ngens = g;
    M->symmetric = g > 0;
    ufind uf;
    uf_init(&uf, nch);
    for (int i = 0; i < M->ngens; i++)
        for (int c = 0; c < nch; c++)
            uf_union(&uf, c, chunk_image(M, c, &M->gens[(size_t)i * n]));
    M->orbit_rep = xmalloc((size_t)nch * sizeof *M->orbit_rep);
    M->rep_to_chunk = xmalloc((size_t)nch * n * sizeof *M->rep_to_chunk);
    int *queue = xmalloc((size_t)nch * sizeof *queue);
    unsigned char *got = xcalloc((size_t)nch, 1);
    M->nreps = 0;
    for (int c = 0; c < nch; c++) {
        M->orbit_rep[c] = uf_find(&uf, c);
        if (M->orbit_rep[c] != c)
            continue;
        M->nreps++;
        int head = 0, tail = 0;
        for (int r = 0; r < n; r++)
            M->rep_to_chunk[(size_t)c * n + r] = r;
        got[c] = 1;
        queue[tail++] = c;
        while (head < tail) {
            int x = queue[head++];
            const int *px = &M->rep_to_chunk[(size_t)x * n];
            for (int i = 0; i < M->ngens; i++) {
                const int *gi = &M->gens[(size_t)i * n];
                int y = chunk_image(M, x, gi);
                if (got[y])
                    continue;
                got[y] = 1;
                int *py = &M->rep_to_chunk[(size_t)y * n];
                for (int r = 0; r < n; r++)
                    py[r] = gi[px[r]];
                queue[tail++] = y;
            }
        }
    }
    free(queue);
    free(got);
    uf_free(&uf);
    build_csr(nch, nch, M->orbit_rep, &M->orbit_start, &M->orbit);
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
    double work = (double)M->nreps * M->nranks * ((double)M->nranks + M->nhops);
    if (work <= ROUTE_MAX_WORK)
        return TC_OK;
    return tc_err_set(err, TC_INPUT, "%s: routing %s over the %d ranks of %s means %d chunk "
                      "orbit%s to search (about %.2g graph steps; this synthesizer's limit is "
                      "%.2g): give the sketch symmetry_offsets (one chunk routed per orbit), or "
                      "use a baseline (taccl-synth --algo ring)",
                      M->s->path && *M->s->path ? M->s->path : M->s->name, coll_name(M->coll),
                      M->nranks, M->t->name, M->nreps, M->nreps == 1 ? "" : "s", work,
                      ROUTE_MAX_WORK);
}

int route_rmodel_build(rmodel *M, const sketch *s, const topo *t, coll_kind k, double bytes,
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
    M->coll = k;
    M->chunk_bytes = bytes;
    M->nranks = t->nranks;
    M->ranks_per_node = t->ranks_per_node;
    M->chunkup = s->chunkup > 0 ? s->chunkup : 1;
    M->chunks_per_rank = k == COLL_ALLTOALL ? M->nranks * M->chunkup : M->chunkup;
    M->chunks_per_loop = M->nranks * M->chunkup;
    M->nchunks = M->nranks * M->chunks_per_rank;
    M->slack = o->slack;
    M->latency = o->latency;
    /* check_size() before the n x n hop table: at least one orbit, and at
     * least every pair of a switch's members is a hop */
    double pairs = 0;
    for (int w = 0; w < t->nswitches; w++) {
        double m = t->switches[w].nranks;
        if (m * (m - 1) > pairs)
            pairs = m * (m - 1);
    }
    M->nreps = 1;
    M->nhops = pairs > INT_MAX ? INT_MAX : (int)pairs;
    if (check_size(M, err) != TC_OK)
        return TC_INPUT;
    M->nreps = 0;
    M->nhops = 0;
    M->dest_scratch = xmalloc((size_t)M->nranks * sizeof *M->dest_scratch);
    M->index_scratch = xmalloc((size_t)M->nranks * sizeof *M->index_scratch);
    build_hops(M);
    int rc = build_symmetry(M, o->use_symmetry);
    if (rc == TC_OK)
        rc = check_size(M, err);
    if (rc == TC_OK)
        rc = build_candidates(M, err);
    if (rc != TC_OK)
        route_rmodel_free(M);
    else
        TC_ASSERT(route_rmodel_sane(M));
    return rc;
}
