/* pack.c — k out-trees per rank chosen for the least largest resource
 * load (pack.h says why and how).  The trees are stage 1's (route_int.h):
 * par[c * n + v] is the hop bringing chunk c to v, over the candidate
 * hops of the sketch's graph, so route_trees_to_algo writes them and
 * stages 2 and 3 take them as any routing. */
#include "pack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bound/bound.h"
#include "route_int.h"

/* Price exponents, in order; each gets pack_opts.rounds passes. */
static const double PACK_GAMMAS[] = {1, 2, 4, 8, 16, 32, 64};
#define PACK_NGAMMAS ((int)(sizeof PACK_GAMMAS / sizeof PACK_GAMMAS[0]))

void pack_opts_init(pack_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rounds = 6;
}

static double pack_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The packing's state: loads per resource and their prices at one g. */
typedef struct {
    const rmodel *M;
    double L;           /* the load a price is scaled by */
    double g;           /* the price exponent */
    double *load;       /* [nresources] */
    double *price;      /* [nresources] exp(g * load / L) */
    double *d;          /* [nhops * 2] load a hop adds to res[q] */
    double *f;          /* [nhops * 2] exp(g * d / L) - 1 */
    unsigned char *in;  /* [nranks] on the tree being grown */
    int *depth;         /* [nranks] hops from the root, on the tree being grown */
} packer;

static void set_gamma(packer *P, double g)
{
    const rmodel *M = P->M;
    P->g = g;
    for (int h = 0; h < M->nhops; h++)
        for (int q = 0; q < M->hops[h].nres; q++)
            P->f[2 * h + q] = expm1(g * P->d[2 * h + q] / P->L);
    for (int r = 0; r < M->nresources; r++)
        P->price[r] = exp(g * P->load[r] / P->L);
}

/* Add (sign 1) or remove (sign -1) hop h's load. */
static void touch(packer *P, int h, double sign)
{
    const hop *x = &P->M->hops[h];
    for (int q = 0; q < x->nres; q++) {
        int r = x->res[q];
        P->load[r] += sign * P->d[2 * h + q];
        if (P->load[r] < 0)
            P->load[r] = 0;
        P->price[r] = exp(P->g * P->load[r] / P->L);
    }
}

/* Chunk c's tree grown from its origin: each step the candidate hop from
 * the tree to a rank off it of least marginal price (ties: the lower hop),
 * its load counted at once.  par: c's row. */
static int grow(packer *P, int c, int *par)
{
    const rmodel *M = P->M;
    int n = M->nranks, o = origin_of(M, c), lo = M->cand_start[c], hi = M->cand_start[c + 1];
    memset(P->in, 0, (size_t)n);
    for (int v = 0; v < n; v++)
        par[v] = -1;
    P->in[o] = 1;
    P->depth[o] = 0;
    for (int added = 1; added < n; added++) {
        int best = -1;
        double bp = INFINITY;
        for (int i = lo; i < hi; i++) {
            int h = M->cand_hop[i];
            const hop *x = &M->hops[h];
            if (!P->in[x->u] || P->in[x->v])
                continue;
            double p = 0;
            for (int q = 0; q < x->nres; q++)
                if (P->f[2 * h + q] > 0)    /* an overflowed price times 0 is no NaN */
                    p += P->price[x->res[q]] * P->f[2 * h + q];
            /* ties (within rounding): the shallower sender, so the
             * tree's fill over the tile passes is short */
            if (best < 0 || p < bp * (1 - 1e-9) ||
                (p <= bp * (1 + 1e-9) && P->depth[x->u] < P->depth[M->hops[best].u])) {
                bp = p;
                best = h;
            }
        }
        if (best < 0)
            return -1 - added;  /* no candidate hop reaches the rest */
        par[M->hops[best].v] = best;
        P->depth[M->hops[best].v] = P->depth[M->hops[best].u] + 1;
        P->in[M->hops[best].v] = 1;
        touch(P, best, 1);
    }
    return 0;
}

static void unload_tree(packer *P, const int *par)
{
    for (int v = 0; v < P->M->nranks; v++)
        if (par[v] >= 0)
            touch(P, par[v], -1);
}

/* Loads from scratch (no drift), the largest and the sum of squares. */
static void measure(packer *P, const trees *T, double *maxl, double *sq)
{
    const rmodel *M = P->M;
    int n = M->nranks;
    memset(P->load, 0, (size_t)M->nresources * sizeof *P->load);
    for (int c = 0; c < M->nchunks; c++)
        for (int v = 0; v < n; v++) {
            int h = T->par[(size_t)c * n + v];
            if (h >= 0)
                for (int q = 0; q < M->hops[h].nres; q++)
                    P->load[M->hops[h].res[q]] += P->d[2 * h + q];
        }
    *maxl = *sq = 0;
    for (int r = 0; r < M->nresources; r++) {
        if (P->load[r] > *maxl)
            *maxl = P->load[r];
        *sq += P->load[r] * P->load[r];
    }
}

static void packer_free(packer *P, trees *T, trees *B, rmodel *M)
{
    route_trees_free(T);
    route_trees_free(B);
    free(P->load);
    free(P->price);
    free(P->d);
    free(P->f);
    free(P->in);
    free(P->depth);
    route_rmodel_free(M);
}

/* The exact cut bound as the largest load it forces: the AllGather of
 * N * chunks_per_rank chunks; 0 when there is none. */
static double bound_load(const rmodel *M)
{
    bound_model b;
    tc_err e;
    if (bound_compute(M->t, COLL_ALLGATHER, &b, &e) != TC_OK)
        return 0;
    return (double)M->nchunks * M->chunk_bytes * b.us_per_byte;
}

int pack_trees(const sketch *s, const topo *t, double chunk_bytes, const pack_opts *o,
               algo **out, pack_stats *st, tc_err *err)
{
    pack_opts dflt;
    if (!o) {
        pack_opts_init(&dflt);
        o = &dflt;
    }
    pack_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    *out = NULL;
    double t0 = pack_now();
    route_opts ro;
    route_opts_init(&ro);
    ro.slack = -1;
    ro.use_symmetry = 0;
    ro.quiet = 1;
    rmodel M;
    int rc = route_rmodel_build(&M, s, t, COLL_ALLGATHER, chunk_bytes, &ro, err);
    if (rc != TC_OK)
        return rc;
    int n = M.nranks;
    size_t cells = (size_t)M.nchunks * n;
    packer P = {.M = &M};
    P.load = xcalloc((size_t)M.nresources + 1, sizeof *P.load);
    P.price = xcalloc((size_t)M.nresources + 1, sizeof *P.price);
    P.d = xcalloc(2 * (size_t)M.nhops + 2, sizeof *P.d);
    P.f = xcalloc(2 * (size_t)M.nhops + 2, sizeof *P.f);
    P.in = xmalloc((size_t)n);
    P.depth = xcalloc((size_t)n, sizeof *P.depth);
    for (int h = 0; h < M.nhops; h++)
        for (int q = 0; q < M.hops[h].nres; q++)
            P.d[2 * h + q] = M.hops[h].cost / M.lanes[M.hops[h].res[q]];
    trees T, B;
    route_trees_init(&T, &M);
    route_trees_init(&B, &M);
    st->k = M.chunkup;
    st->ntrees = M.nchunks;
    st->bound_us = bound_load(&M);
    /* the first packing: trees one after another at the mildest price,
     * scaled by the bound (or, without one, by the average hop load) */
    P.L = st->bound_us > 0 ? st->bound_us : 1;
    if (!(st->bound_us > 0)) {
        double sum = 0;
        for (int h = 0; h < M.nhops; h++)
            sum += P.d[2 * h];
        P.L = M.nhops > 0 ? sum / M.nhops * (n - 1) : 1;
    }
    set_gamma(&P, PACK_GAMMAS[0]);
    /* which hops reach every rank does not depend on the prices: a tree
     * that spans now spans in every later pass */
    for (int c = 0; c < M.nchunks && rc == TC_OK; c++)
        if (grow(&P, c, &T.par[(size_t)c * n]) != 0)
            rc = tc_err_set(err, TC_INPUT, "trees: chunk %d of rank %d cannot span every rank "
                            "over its candidate hops from its origin", c % M.chunks_per_rank,
                            origin_of(&M, c));
    if (rc != TC_OK) {
        packer_free(&P, &T, &B, &M);
        return rc;
    }
    double best, bsq;
    measure(&P, &T, &best, &bsq);
    st->first_us = best;
    memcpy(B.par, T.par, cells * sizeof *T.par);
    for (int gi = 0; gi < PACK_NGAMMAS; gi++) {
        set_gamma(&P, PACK_GAMMAS[gi]);
        for (int round = 0; round < o->rounds; round++) {
            for (int c = 0; c < M.nchunks; c++) {
                int *par = &T.par[(size_t)c * n];
                unload_tree(&P, par);
                int spans = grow(&P, c, par);
                TC_ASSERT(spans == 0);
                (void)spans;
            }
            st->passes++;
            double ml, sq;
            measure(&P, &T, &ml, &sq);
            set_gamma(&P, P.g);     /* prices of the drift-free loads */
            if (ml < best * (1 - 1e-12) || (ml <= best * (1 + 1e-12) && sq < bsq * (1 - 1e-12))) {
                best = ml;
                bsq = sq;
                memcpy(B.par, T.par, cells * sizeof *T.par);
            }
        }
    }
    int *order = xmalloc((size_t)n * sizeof *order);
    for (int c = 0; c < M.nchunks; c++)
        route_tree_arrivals(&M, &B, c, order);
    free(order);
    TC_ASSERT(route_trees_sane(&M, &B));
    algo *a = route_trees_to_algo(&M, &B);
    a->predicted_us = best;
    st->load_us = best;
    st->build_s = pack_now() - t0;
    if (!o->quiet)
        fprintf(stderr, "synth: trees: %d out-trees per rank, largest load %.3f us (cut bound "
                "%.3f us, first packing %.3f us), %d passes, %.3f s\n", st->k, best,
                st->bound_us, st->first_us, st->passes, st->build_s);
    packer_free(&P, &T, &B, &M);
    *out = a;
    return TC_OK;
}

algo *pack_copy(const algo *a)
{
    algo *c = algo_new(a->coll, a->nranks, a->chunks_per_rank);
    if (!c)
        tc_oom();
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        *algo_add_send(c, x->origin, x->index, x->src, x->dst, x->t_send, x->t_arrive) = *x;
    }
    c->predicted_us = a->predicted_us;
    return c;
}

void pack_lanes(algo *a)
{
    int n = a->nranks;
    int *cnt = xcalloc((size_t)n * n, sizeof *cnt);
    for (int i = 0; i < a->nsends; i++)
        a->sends[i].lane = ++cnt[a->sends[i].src * n + a->sends[i].dst];
    free(cnt);
}
