/* route_milp.c — stage 1's MILP (model in route.h): columns with the
 * sketch's symmetry substituted (union-find over the generators' images of
 * every variable slot, one column per class), the per-chunk and resource
 * rows, the heuristic routing's values as the incumbent, and the solution
 * read back into trees (route_extract).
 *
 * Kept apart from the skeleton (route_graph.c), which it only reads, and
 * from the solve (route.c), which decides what to do with its answer. */
#include "route_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"

#define UC_MU 0.01          /* TACCL's weight of the connection / load term */

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
    double lb = P->M->cheapest[(size_t)c * P->M->nranks + v];
    return lb > P->U ? lb : P->U;
}

static int build_columns(milp *P)
{
    const rmodel *M = P->M;
    int n = M->nranks, nslots = M->cand_start[M->nchunks];
    char name[64];
    P->tcol = add_col(P, "time", 0, P->U, 1.0, 0, 0);
    /* x: one column per orbit of (chunk, hop) */
    ufind uf;
    uf_init(&uf, nslots > 0 ? nslots : 1);
    for (int gi = 0; gi < M->ngens; gi++) {
        const int *g = &M->gens[(size_t)gi * n];
        for (int c = 0; c < M->nchunks; c++) {
            int ci = chunk_image(M, c, g);
            for (int sl = M->cand_start[c]; sl < M->cand_start[c + 1]; sl++) {
                int hi = hop_image(M, M->cand_hop[sl], g);
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
    for (int c = 0; c < M->nchunks; c++)
        for (int sl = M->cand_start[c]; sl < M->cand_start[c + 1]; sl++) {
            int r = uf_find(&uf, sl);
            if (r == sl) {
                const hop *h = &M->hops[M->cand_hop[sl]];
                snprintf(name, sizeof name, "x_%d_%d_%d_%d", origin_of(M, c),
                         c % M->chunks_per_rank, h->u, h->v);
                P->xcol[sl] = add_col(P, name, 0, 1, 0, 1, P->used[sl]);
            } else {
                P->xcol[sl] = P->xcol[r];
                if (P->inc[P->xcol[sl]] != P->used[sl])
                    P->consistent = 0;
            }
        }
    uf_free(&uf);
    /* a: one column per orbit of (chunk, rank), none at the origin */
    size_t ns = (size_t)M->nchunks * n;
    uf_init(&uf, (int)ns);
    for (int gi = 0; gi < M->ngens; gi++) {
        const int *g = &M->gens[(size_t)gi * n];
        for (int c = 0; c < M->nchunks; c++) {
            int ci = chunk_image(M, c, g);
            for (int v = 0; v < n; v++)
                if (isfinite(M->cheapest[(size_t)c * n + v]))
                    uf_union(&uf, c * n + v, ci * n + g[v]);
        }
    }
    P->scol = xmalloc(ns * sizeof *P->scol);
    for (int c = 0; c < M->nchunks; c++) {
        int o = origin_of(M, c);
        for (int v = 0; v < n; v++) {
            size_t q = (size_t)c * n + v;
            P->scol[q] = -1;
            if (v == o || !isfinite(M->cheapest[q]))
                continue;
            double val = isfinite(P->H->arr[q]) ? P->H->arr[q] : M->cheapest[q];
            int r = uf_find(&uf, (int)q);
            if ((size_t)r == q) {
                snprintf(name, sizeof name, "a_%d_%d_%d", o, c % M->chunks_per_rank, v);
                P->scol[q] = add_col(P, name, M->cheapest[q], start_ub(P, c, v), 0, 0, val);
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
    for (int gi = 0; gi < M->ngens; gi++)
        for (int hi = 0; hi < M->nhops; hi++) {
            int hj = hop_image(M, hi, &M->gens[(size_t)gi * n]);
            if (M->hops[hi].uc >= 0 && hj >= 0)
                uf_union(&uf, hi, hj);
        }
    unsigned char *hop_used = xcalloc((size_t)M->nhops + 1, 1);
    for (int sl = 0; sl < nslots; sl++)
        if (P->used[sl])
            hop_used[M->cand_hop[sl]] = 1;
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
    double m = ubu + h->cost - P->M->cheapest[(size_t)c * P->M->nranks + h->v];
    return m > 0 ? m : 0;
}

/* Per-chunk rows of representative chunk c. */
static void chunk_rows(milp *P, int c, int *in_start, int *in_sl, int *out_start, int *out_sl,
                       int *dest, unsigned char *isdest, int *bucket)
{
    const rmodel *M = P->M;
    const sketch *s = M->s;
    int n = M->nranks, o = origin_of(M, c), c0 = M->cand_start[c], c1 = M->cand_start[c + 1];
    int nd = chunk_dests(M, c, dest);
    memset(isdest, 0, (size_t)n);
    for (int j = 0; j < nd; j++)
        isdest[dest[j]] = 1;
    /* candidate slots by receiver and by sender */
    memset(in_start, 0, ((size_t)n + 1) * sizeof *in_start);
    memset(out_start, 0, ((size_t)n + 1) * sizeof *out_start);
    for (int sl = c0; sl < c1; sl++) {
        in_start[M->hops[M->cand_hop[sl]].v + 1]++;
        out_start[M->hops[M->cand_hop[sl]].u + 1]++;
    }
    for (int v = 0; v < n; v++) {
        in_start[v + 1] += in_start[v];
        out_start[v + 1] += out_start[v];
    }
    int *fi = bucket, *fo = bucket + n + 1;
    memcpy(fi, in_start, ((size_t)n + 1) * sizeof *fi);
    memcpy(fo, out_start, ((size_t)n + 1) * sizeof *fo);
    for (int sl = c0; sl < c1; sl++) {
        in_sl[fi[M->hops[M->cand_hop[sl]].v]++] = sl;
        out_sl[fo[M->hops[M->cand_hop[sl]].u]++] = sl;
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
        const hop *h = &M->hops[M->cand_hop[sl]];
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
            const hop *h = &M->hops[M->cand_hop[out_sl[q]]];
            if (h->nres != 2)
                continue;
            int r = h->res[0], first = 1, cnt = 0;
            for (int q2 = out_start[u]; q2 < q && first; q2++) {
                const hop *h2 = &M->hops[M->cand_hop[out_sl[q2]]];
                first = !(h2->nres == 2 && h2->res[0] == r);
            }
            if (!first)
                continue;
            rb_clear(&P->rb);
            rb_add(&P->rb, S[u], -1.0);
            for (int q2 = q; q2 < out_start[u + 1]; q2++) {
                const hop *h2 = &M->hops[M->cand_hop[out_sl[q2]]];
                if (h2->nres == 2 && h2->res[0] == r) {
                    rb_add(&P->rb, P->xcol[out_sl[q2]], -h2->hold);
                    cnt++;
                }
            }
            if (cnt >= 2)
                add_time_row(P, 0.0);
        }
    }
    /* relay cut: the chunk enters every other node holding a destination */
    int nn = M->t->nnodes, no = o / M->ranks_per_node;
    for (int nd2 = 0; nd2 < nn; nd2++) {
        if (nd2 == no)
            continue;
        rb_clear(&P->rb);
        for (int sl = c0; sl < c1; sl++) {
            const hop *h = &M->hops[M->cand_hop[sl]];
            if (h->inter && h->v / M->ranks_per_node == nd2)
                rb_add(&P->rb, P->xcol[sl], 1.0);
        }
        int need = 0;
        for (int j = 0; j < nd && !need; j++)
            need = dest[j] / M->ranks_per_node == nd2;
        if (need && P->rb.n > 0)
            add_row(P, 1.0, INFINITY);
    }
    /* enforce_ordering: s's own chunks cross s -> r before those s relays */
    if (s->enforce_ordering)
        for (int sl = c0; sl < c1; sl++) {
            const hop *h = &M->hops[M->cand_hop[sl]];
            if (!h->inter || h->u == o)
                continue;
            for (int j = 0; j < M->chunks_per_rank; j++) {
                int cs = h->u * M->chunks_per_rank + j;
                int sl2 = slot_of(M, cs, M->cand_hop[sl]);
                if (sl2 < 0)
                    continue;
                double mm = start_ub(P, cs, h->v) + h->cost - M->cheapest[(size_t)c * n + h->v];
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
        int hi = M->cand_hop[sl];
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
    int n = M->nranks, nslots = M->cand_start[M->nchunks];
    ufind uf;
    uf_init(&uf, M->nresources > 0 ? M->nresources : 1);
    for (int gi = 0; gi < M->ngens; gi++)
        for (int hi = 0; hi < M->nhops; hi++) {
            int hj = hop_image(M, hi, &M->gens[(size_t)gi * n]);
            if (hj < 0)
                continue;
            for (int q = 0; q < M->hops[hi].nres && q < M->hops[hj].nres; q++)
                uf_union(&uf, M->hops[hi].res[q], M->hops[hj].res[q]);
        }
    int *cnt = xcalloc((size_t)M->nresources + 1, sizeof *cnt);
    for (int sl = 0; sl < nslots; sl++) {
        const hop *h = &M->hops[M->cand_hop[sl]];
        for (int q = 0; q < h->nres; q++)
            if (uf_find(&uf, h->res[q]) == h->res[q])
                cnt[h->res[q] + 1]++;
    }
    for (int r = 0; r < M->nresources; r++)
        cnt[r + 1] += cnt[r];
    int *items = xmalloc(((size_t)cnt[M->nresources] + 1) * sizeof *items);
    int *fill = xmalloc(((size_t)M->nresources + 1) * sizeof *fill);
    memcpy(fill, cnt, ((size_t)M->nresources + 1) * sizeof *fill);
    for (int sl = 0; sl < nslots; sl++) {
        const hop *h = &M->hops[M->cand_hop[sl]];
        for (int q = 0; q < h->nres; q++)
            if (uf_find(&uf, h->res[q]) == h->res[q])
                items[fill[h->res[q]]++] = sl;
    }
    free(fill);
    for (int r = 0; r < M->nresources; r++) {
        if (cnt[r] == cnt[r + 1])
            continue;
        double lanes = M->lanes[r];
        rb_clear(&P->rb);
        for (int k = cnt[r]; k < cnt[r + 1]; k++)
            rb_add(&P->rb, P->xcol[items[k]], -M->hops[M->cand_hop[items[k]]].hold / lanes);
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
        for (int c = 0; c < M->nchunks; c++) {
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
int route_incumbent_times(const rmodel *M, trees *T)
{
    int n = M->nranks, changed = 1, passes = 0, limit = 4 * n + 16;
    while (changed && passes++ < limit) {
        changed = 0;
        for (int c = 0; c < M->nchunks; c++) {
            const int *par = &T->par[(size_t)c * n];
            double *arr = &T->arr[(size_t)c * n];
            int o = origin_of(M, c);
            for (int v = 0; v < n; v++) {
                if (par[v] < 0)
                    continue;
                const hop *h = &M->hops[par[v]];
                double need = arr[h->u] + h->cost;
                if (M->s->enforce_ordering && h->inter && h->u != o)
                    for (int j = 0; j < M->chunks_per_rank; j++) {
                        int cs = h->u * M->chunks_per_rank + j;
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
double route_relaxed_time(const rmodel *M, const trees *T)
{
    int n = M->nranks;
    double t = 0;
    double *load = xcalloc((size_t)M->nresources + 1, sizeof *load);
    double *port = xcalloc((size_t)M->nresources + 1, sizeof *port);
    int *start = xmalloc(((size_t)n + 1) * sizeof *start), *fill = xmalloc((size_t)n * sizeof *fill);
    int *kid = xmalloc((size_t)n * sizeof *kid);
    for (int c = 0; c < M->nchunks; c++) {
        const int *par = &T->par[(size_t)c * n];
        const double *arr = &T->arr[(size_t)c * n];
        for (int v = 0; v < n; v++) {
            if (par[v] < 0)
                continue;
            const hop *h = &M->hops[par[v]];
            if (arr[v] > t)
                t = arr[v];
            for (int q = 0; q < h->nres; q++)
                load[h->res[q]] += h->hold / M->lanes[h->res[q]];
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
                port[h->res[0]] += h->hold;
                if (arr[u] + port[h->res[0]] + h->cost - h->hold > t)
                    t = arr[u] + port[h->res[0]] + h->cost - h->hold;
            }
        }
    }
    for (int r = 0; r < M->nresources; r++)
        if (load[r] > t)
            t = load[r];
    free(load);
    free(port);
    free(start);
    free(fill);
    free(kid);
    return t;
}

/* Read the MILP's routing into R; 0 if it is not a forest of trees. */
int route_extract(const milp *P, trees *R)
{
    const rmodel *M = P->M;
    int n = M->nranks, ok = 1;
    int *dest = xmalloc((size_t)n * sizeof *dest), *order = xmalloc((size_t)n * sizeof *order);
    unsigned char *isdest = xmalloc((size_t)n);
    for (int c = 0; c < M->nchunks && ok; c++) {
        int *par = &R->par[(size_t)c * n];
        for (int sl = M->cand_start[c]; sl < M->cand_start[c + 1] && ok; sl++) {
            if (!(lp_value(P->p, P->xcol[sl]) > 0.5))
                continue;
            const hop *h = &M->hops[M->cand_hop[sl]];
            if (par[h->v] >= 0)
                ok = 0;
            par[h->v] = M->cand_hop[sl];
        }
        if (!ok)
            break;
        int nd = chunk_dests(M, c, dest);
        memset(isdest, 0, (size_t)n);
        for (int j = 0; j < nd; j++)
            isdest[dest[j]] = 1;
        route_prune_dead_relays(M, par, isdest);
        route_tree_arrivals(M, R, c, order);      /* uncontended: also finds cycles */
        for (int v = 0; v < n && ok; v++)
            if ((par[v] >= 0 || isdest[v]) && !isfinite(R->arr[(size_t)c * n + v]))
                ok = 0;
    }
    /* the MILP's own arrivals when they respect every hop */
    int exact = ok;
    for (int c = 0; c < M->nchunks && exact; c++)
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
        for (int c = 0; c < M->nchunks; c++)
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

void route_milp_free(milp *P)
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
int route_milp_build(milp *P, const rmodel *M, const trees *H, const unsigned char *used,
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
    int n = M->nranks;
    int *in_start = xmalloc(((size_t)n + 1) * sizeof *in_start);
    int *out_start = xmalloc(((size_t)n + 1) * sizeof *out_start);
    int *in_sl = xmalloc(((size_t)M->nhops + 1) * sizeof *in_sl);
    int *out_sl = xmalloc(((size_t)M->nhops + 1) * sizeof *out_sl);
    int *bucket = xmalloc((2 * (size_t)n + 2) * sizeof *bucket);
    int *dest = xmalloc((size_t)n * sizeof *dest);
    unsigned char *isdest = xmalloc((size_t)n);
    for (int c = 0; c < M->nchunks; c++)
        if (M->orbit_rep[c] == c)
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

double route_objective_of_incumbent(const milp *P)
{
    double s = 0;
    for (int j = 0; j < lp_ncols(P->p); j++)
        s += P->objc[j] * P->inc[j];
    return s;
}
