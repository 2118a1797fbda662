/* route_trees.c — routings as trees: per chunk, the hop that brings it to
 * each rank.  The heuristic routing (one load-aware earliest-finish tree per
 * orbit representative, carried to the rest of its orbit) seeds the MILP
 * and is what a solve falls back to; any routing, the MILP's too, leaves
 * stage 1 as an algo written here (route_trees_to_algo). */
#include "route_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"

void route_trees_init(trees *T, const rmodel *M)
{
    size_t sz = (size_t)M->nchunks * M->nranks;
    T->par = xmalloc(sz * sizeof *T->par);
    T->arr = xmalloc(sz * sizeof *T->arr);
    for (size_t i = 0; i < sz; i++) {
        T->par[i] = -1;
        T->arr[i] = INFINITY;
    }
}

void route_trees_free(trees *T)
{
    free(T->par);
    free(T->arr);
}

int route_trees_sane(const rmodel *M, const trees *T)
{
    int n = M->nranks, ok = 1;
    int *dest = xmalloc((size_t)n * sizeof *dest);
    for (int c = 0; c < M->nchunks && ok; c++) {
        const int *par = &T->par[(size_t)c * n];
        int o = origin_of(M, c);
        ok = par[o] == -1;
        for (int v = 0; v < n && ok; v++) {
            if (par[v] < -1 || par[v] >= M->nhops || (par[v] >= 0 && M->hops[par[v]].v != v))
                ok = 0;
            /* v reaches the origin in at most n - 1 hops up */
            int x = v, steps = 0;
            while (ok && par[x] >= 0 && steps < n)
                x = M->hops[par[x]].u, steps++;
            if (ok && par[v] >= 0 && x != o)
                ok = 0;
        }
        int nd = chunk_dests(M, c, dest);
        for (int j = 0; j < nd && ok; j++)
            ok = par[dest[j]] >= 0;
    }
    free(dest);
    return ok;
}

/* Uncontended arrivals of chunk c along its tree (parents first). */
void route_tree_arrivals(const rmodel *M, trees *T, int c, int *order)
{
    int n = M->nranks, o = origin_of(M, c), head = 0, tail = 0;
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
void route_prune_dead_relays(const rmodel *M, int *par, const unsigned char *isdest)
{
    int n = M->nranks, changed = 1;
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
/* Carry the representative's tree to every member of its orbit. */
void route_carry_tree(const rmodel *M, trees *T, int rep, int c)
{
    int n = M->nranks;
    const int *g = &M->rep_to_chunk[(size_t)c * n];
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
    int n = M->nranks, o = origin_of(M, c);
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
    int c0 = M->cand_start[c], c1 = M->cand_start[c + 1];
    for (;;) {
        int best = -1;
        double best_est = 0;
        for (int k = c0; k < c1; k++) {
            int hi = M->cand_hop[k];
            const hop *h = &M->hops[hi];
            if (!in[h->u] || in[h->v])
                continue;
            double busy = 0;
            for (int q = 0; q < h->nres && !M->latency; q++) {
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
            load[h->res[q]] += h->hold;
    }
    /* hops of dropped relays give their load back */
    int *was = xmalloc((size_t)n * sizeof *was);
    memcpy(was, par, (size_t)n * sizeof *was);
    route_prune_dead_relays(M, par, isdest);
    for (int v = 0; v < n; v++)
        if (was[v] >= 0 && par[v] < 0)
            for (int q = 0; q < M->hops[was[v]].nres; q++)
                load[M->hops[was[v]].res[q]] -= M->hops[was[v]].hold;
    free(was);
}

void route_heuristic_trees(const rmodel *M, trees *T)
{
    int n = M->nranks;
    double *load = xcalloc((size_t)M->nresources + 1, sizeof *load);
    int *dest = xmalloc((size_t)n * sizeof *dest);
    int *order = xmalloc((size_t)n * sizeof *order);
    unsigned char *isdest = xmalloc((size_t)n), *in = xmalloc((size_t)n);
    double *arr = xmalloc((size_t)n * sizeof *arr);
    for (int c = 0; c < M->nchunks; c++) {
        if (M->orbit_rep[c] != c)
            continue;
        int *par = &T->par[(size_t)c * n];
        heuristic_tree(M, c, par, load, dest, isdest, in, arr);
        /* the orbit's other members load their images of the same hops */
        for (int k = M->orbit_start[c]; k < M->orbit_start[c + 1]; k++) {
            int m = M->orbit[k];
            if (m == c)
                continue;
            route_carry_tree(M, T, c, m);
            const int *pm = &T->par[(size_t)m * n];
            for (int v = 0; v < n; v++)
                if (pm[v] >= 0)
                    for (int q = 0; q < M->hops[pm[v]].nres; q++)
                        load[M->hops[pm[v]].res[q]] += M->hops[pm[v]].hold;
        }
    }
    for (int c = 0; c < M->nchunks; c++)
        route_tree_arrivals(M, T, c, order);
    TC_ASSERT(route_trees_sane(M, T));
    free(load);
    free(dest);
    free(order);
    free(isdest);
    free(in);
    free(arr);
}

/* depth[v]: hops from the root of the tree par to v (0 off the tree or at
 * the root), at most n + 1 (a cycle's ranks, and those below one, get
 * n + 1).  Each rank is walked once: a walk stops at a rank already
 * known.  stack: room for n. */
static void tree_depths(const rmodel *M, const int *par, int *depth, int *stack)
{
    int n = M->nranks;
    for (int v = 0; v < n; v++)
        depth[v] = par[v] >= 0 ? -1 : 0;    /* -1 unknown, -2 on the walk */
    for (int v = 0; v < n; v++) {
        int top = 0, x = v;
        while (depth[x] == -1) {
            depth[x] = -2;
            stack[top++] = x;
            x = M->hops[par[x]].u;
        }
        int d = depth[x] == -2 ? n + 1 : depth[x];   /* -2: the walk met itself */
        while (top > 0) {
            d = d < n + 1 ? d + 1 : n + 1;
            depth[stack[--top]] = d;
        }
    }
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
algo *route_trees_to_algo(const rmodel *M, const trees *T)
{
    int n = M->nranks;
    algo *a = algo_new(M->coll, n, M->chunks_per_rank);
    if (!a)
        tc_oom();
    emit_item *it = xmalloc((size_t)n * sizeof *it);
    int *depth = xmalloc((size_t)n * sizeof *depth), *stack = xmalloc((size_t)n * sizeof *stack);
    for (int c = 0; c < M->nchunks; c++) {
        const int *par = &T->par[(size_t)c * n];
        const double *arr = &T->arr[(size_t)c * n];
        tree_depths(M, par, depth, stack);
        int m = 0;
        for (int v = 0; v < n; v++)
            if (par[v] >= 0) {
                it[m].depth = depth[v];
                it[m].arr = arr[v];
                it[m].dst = v;
                it[m].hop = par[v];
                m++;
            }
        qsort(it, (size_t)m, sizeof *it, cmp_emit);
        for (int j = 0; j < m; j++) {
            const hop *h = &M->hops[it[j].hop];
            algo_add_send(a, origin_of(M, c), c % M->chunks_per_rank, h->u, h->v,
                          it[j].arr - h->cost, it[j].arr);
        }
    }
    free(it);
    free(depth);
    free(stack);
    return a;
}
