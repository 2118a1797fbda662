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

/* What rank v's ways in cost now: the prices of the resources its
 * in-hops hold on its side. */
static double in_price(const packer *P, int v)
{
    const rmodel *M = P->M;
    double s = 0;
    for (int i = M->in_start[v]; i < M->in_start[v + 1]; i++) {
        const hop *x = &M->hops[M->in_hop[i]];
        s += P->price[x->res[x->nres - 1]];
    }
    return s;
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
        double bp = INFINITY, bin = -1;    /* bin: best's in_price, once asked */
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
             * tree's fill over the tile passes is short; then the
             * receiver whose own way in is dearer (two GCDs behind one
             * NIC: it brings the chunk to the one whose links are
             * fuller, and the other takes it over the emptier link) */
            int tie = best >= 0 && p <= bp * (1 + 1e-9) && p >= bp * (1 - 1e-9);
            int du = tie ? P->depth[x->u] - P->depth[M->hops[best].u] : 0;
            double xin = -1;
            if (tie && du == 0 && x->v != M->hops[best].v) {
                if (bin < 0)
                    bin = in_price(P, M->hops[best].v);
                xin = in_price(P, x->v);
            }
            if (best < 0 || p < bp * (1 - 1e-9) || (tie && du < 0) ||
                (xin >= 0 && xin > bin * (1 + 1e-9))) {
                bp = p;
                best = h;
                bin = xin;
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

/* ---------------------------------------------- shallower at equal load */

/* The ranks above which the shallowing pass is not run (its moves are
 * searched pairwise, quadratic in the trees' hops). */
#define PACK_SHALLOW_RANKS 64
/* Sweeps over every tree at most. */
#define PACK_SHALLOW_SWEEPS 8

/* Hop depth of every rank on chunk c's tree (par: c's row), into dep[]
 * (-1 off the tree). */
static void tree_depths(const rmodel *M, const int *par, int *dep)
{
    int n = M->nranks;
    for (int v = 0; v < n; v++)
        dep[v] = -2;
    for (int v = 0; v < n; v++) {
        int x = v, k = 0;
        while (dep[x] == -2 && par[x] >= 0 && k <= n)
            x = M->hops[par[x]].u, k++;
        int base = dep[x] != -2 ? dep[x] : par[x] < 0 ? 0 : -1;
        if (dep[x] == -2)
            dep[x] = base;
        /* down again from v, each rank one hop below its parent */
        int d = base < 0 ? -1 : base + k;
        for (int y = v; y != x; y = M->hops[par[y]].u, d--)
            dep[y] = base < 0 ? -1 : d;
    }
}

/* Whether a is b or below b on the tree par. */
static int below(const rmodel *M, const int *par, int a, int b)
{
    for (int k = 0; k <= M->nranks && a >= 0; k++) {
        if (a == b)
            return 1;
        a = par[a] >= 0 ? M->hops[par[a]].u : -1;
    }
    return 0;
}

/* Ranks at or below v on the tree par. */
static int subtree_size(const rmodel *M, const int *par, int v)
{
    int cnt = 0;
    for (int x = 0; x < M->nranks; x++)
        cnt += below(M, par, x, v);
    return cnt;
}

/* Whether moving rank v of tree par from its hop to hop h keeps every
 * resource either hop touches at or below cap: the move applied to the
 * loads (P->load), undone when it does not. */
static int try_move(packer *P, int *par, int v, int h, double cap)
{
    int old = par[v];
    touch(P, old, -1);
    touch(P, h, 1);
    const hop *x = &P->M->hops[h];
    int ok = 1;
    for (int q = 0; q < x->nres && ok; q++)
        ok = P->load[x->res[q]] <= cap;
    if (ok) {
        par[v] = h;
        return 1;
    }
    touch(P, h, -1);
    touch(P, old, 1);
    return 0;
}

/* The depth that moving rank v of tree par under hop h adds (negative:
 * shallower): the change of v's depth times the ranks that move with it;
 * INT_MAX when h's sender is v or below it, or h is v's hop already. */
static long move_gain(const rmodel *M, const int *par, const int *dep, int v, int h)
{
    int w = M->hops[h].u;
    if (h == par[v] || below(M, par, w, v))
        return 0x7fffffffL;
    return (long)(dep[w] + 1 - dep[v]) * subtree_size(M, par, v);
}

/* At the largest load `cap` the packing has, rehang ranks on shallower
 * senders while no resource goes above cap: the trees' sum of depths
 * falls, and with it how late a tree's last tile lands over the tile
 * passes (ForestColl's A100 x2 trees, k = 1: the same load as ours, a
 * sum of depths of 728 against 940, and 7 us faster at 1 GiB).  A move
 * that would raise a resource above cap is paired with one of another
 * tree that takes a hop off that resource, kept when the pair lowers the
 * sum.  Deterministic: trees, ranks and hops in index order, the first
 * improving move taken. */
static void shallower(packer *P, trees *B, double cap)
{
    const rmodel *M = P->M;
    int n = M->nranks;
    if (n > PACK_SHALLOW_RANKS)
        return;
    double lim = cap * (1 + 1e-9);
    int *dep = xmalloc((size_t)n * sizeof *dep);
    int *dep2 = xmalloc((size_t)n * sizeof *dep2);
    double ml, sq;
    measure(P, B, &ml, &sq);
    for (int sweep = 0, moved = 1; sweep < PACK_SHALLOW_SWEEPS && moved; sweep++) {
        moved = 0;
        for (int c = 0; c < M->nchunks; c++) {
            int *par = &B->par[(size_t)c * n];
            tree_depths(M, par, dep);
            for (int v = 0; v < n; v++) {
                if (par[v] < 0)
                    continue;
                for (int i = M->cand_start[c]; i < M->cand_start[c + 1] && par[v] >= 0; i++) {
                    int h = M->cand_hop[i];
                    if (M->hops[h].v != v)
                        continue;
                    long g1 = move_gain(M, par, dep, v, h);
                    if (g1 >= 0)
                        continue;
                    int hu = par[v];
                    if (try_move(P, par, v, h, lim)) {
                        moved = 1;
                        tree_depths(M, par, dep);
                        break;
                    }
                    /* pair it: another tree's hop off a resource h would
                     * overfill, onto a sender of its own */
                    int done = 0;
                    touch(P, hu, -1);
                    touch(P, h, 1);
                    for (int c2 = 0; c2 < M->nchunks && !done; c2++) {
                        if (c2 == c)
                            continue;
                        int *par2 = &B->par[(size_t)c2 * n];
                        int dep_ok = 0;
                        for (int y = 0; y < n && !done; y++) {
                            int h1 = par2[y];
                            if (h1 < 0)
                                continue;
                            int hits = 0;
                            for (int q = 0; q < M->hops[h].nres; q++)
                                for (int q1 = 0; q1 < M->hops[h1].nres; q1++)
                                    hits |= M->hops[h].res[q] == M->hops[h1].res[q1] &&
                                            P->load[M->hops[h].res[q]] > lim;
                            if (!hits)
                                continue;
                            if (!dep_ok) {
                                tree_depths(M, par2, dep2);
                                dep_ok = 1;
                            }
                            for (int j = M->cand_start[c2]; j < M->cand_start[c2 + 1]; j++) {
                                int h2 = M->cand_hop[j];
                                if (M->hops[h2].v != y)
                                    continue;
                                long g2 = move_gain(M, par2, dep2, y, h2);
                                if (g2 == 0x7fffffffL || g1 + g2 >= 0)
                                    continue;
                                touch(P, h1, -1);
                                touch(P, h2, 1);
                                int ok = 1;
                                for (int q = 0; q < M->hops[h].nres && ok; q++)
                                    ok = P->load[M->hops[h].res[q]] <= lim;
                                for (int q = 0; q < M->hops[h2].nres && ok; q++)
                                    ok = P->load[M->hops[h2].res[q]] <= lim;
                                if (ok) {
                                    par[v] = h;
                                    par2[y] = h2;
                                    done = 1;
                                    break;
                                }
                                touch(P, h2, -1);
                                touch(P, h1, 1);
                            }
                        }
                    }
                    if (done) {
                        moved = 1;
                        tree_depths(M, par, dep);
                        break;
                    }
                    touch(P, h, -1);
                    touch(P, hu, 1);
                }
            }
        }
    }
    free(dep);
    free(dep2);
}

/* ------------------------------------------ the largest load, lowered */

/* Moves at most, in all. */
#define PACK_DESCEND_MOVES 100000

/* Whether rank v of tree par may hang from hop h instead of its own: h
 * brings it, and h's sender is not v or below it. */
static int rehangs(const rmodel *M, const int *par, int v, int h)
{
    return M->hops[h].v == v && h != par[v] && !below(M, par, M->hops[h].u, v);
}

/* Whether every resource hop h touches is below top. */
static int fits(const packer *P, int h, double top)
{
    const hop *x = &P->M->hops[h];
    for (int q = 0; q < x->nres; q++)
        if (P->load[x->res[q]] >= top)
            return 0;
    return 1;
}

/* Whether hop h1 touches every resource of hop h at or above top. */
static int covers(const packer *P, int h1, int h, double top)
{
    const hop *x = &P->M->hops[h], *y = &P->M->hops[h1];
    for (int q = 0; q < x->nres; q++) {
        if (P->load[x->res[q]] < top)
            continue;
        int hit = 0;
        for (int q1 = 0; q1 < y->nres; q1++)
            hit |= y->res[q1] == x->res[q];
        if (!hit)
            return 0;
    }
    return 1;
}

/* A second move making room for a first: some rank y of some tree c2
 * (c's own included) whose hop covers every resource the first move's hop
 * h overfilled moves to a sender whose hop leaves h and itself below top.
 * Applied when found (1), else nothing changed (0). */
static int make_room(packer *P, trees *B, int h, double top)
{
    const rmodel *M = P->M;
    int n = M->nranks;
    for (int c2 = 0; c2 < M->nchunks; c2++) {
        int *par2 = &B->par[(size_t)c2 * n];
        for (int y = 0; y < n; y++) {
            int h1 = par2[y];
            if (h1 < 0 || !covers(P, h1, h, top))
                continue;
            for (int j = M->cand_start[c2]; j < M->cand_start[c2 + 1]; j++) {
                int h2 = M->cand_hop[j];
                if (!rehangs(M, par2, y, h2))
                    continue;
                touch(P, h1, -1);
                touch(P, h2, 1);
                if (fits(P, h2, top) && fits(P, h, top)) {
                    par2[y] = h2;
                    return 1;
                }
                touch(P, h2, -1);
                touch(P, h1, 1);
            }
        }
    }
    return 0;
}

/* Lower the packing's largest load by moving ranks: a rank whose hop
 * touches a resource at the largest load moves, with the ranks below it,
 * to another sender of its tree whose hop leaves every resource it
 * touches below that load -- or, where that hop would reach it, together
 * with a second move (make_room) taking another tree's hop off what it
 * would fill.  Each move takes load off a resource at the largest and
 * leaves none there that was not, so the resources at it fall in number
 * until none is left and the largest is lower; the search ends when no
 * such move exists.  The price passes approximate the least largest load
 * and stop where such moves are open: on the bundled MI250 x2 at k = 4
 * they leave the links between the two GCDs of a package at 3.5 chunks
 * and others at 5, the NICs bringing the package's chunks to one GCD
 * where bringing some to the other would let that one forward them.
 * Deterministic: trees, ranks and hops in index order, the first move.
 * Returns the largest load; *sq the sum of squared loads. */
static double descend(packer *P, trees *B, double *sq)
{
    const rmodel *M = P->M;
    int n = M->nranks;
    double ml;
    measure(P, B, &ml, sq);
    for (int moves = 0; moves < PACK_DESCEND_MOVES;) {
        double top = ml * (1 - 1e-9);
        int moved = 0;
        for (int c = 0; c < M->nchunks && moves < PACK_DESCEND_MOVES; c++) {
            int *par = &B->par[(size_t)c * n];
            for (int v = 0; v < n; v++) {
                int h0 = par[v], hot = 0;
                if (h0 < 0)
                    continue;
                for (int q = 0; q < M->hops[h0].nres; q++)
                    hot |= P->load[M->hops[h0].res[q]] >= top;
                if (!hot)
                    continue;
                for (int i = M->cand_start[c]; i < M->cand_start[c + 1]; i++) {
                    int h = M->cand_hop[i];
                    if (!rehangs(M, par, v, h))
                        continue;
                    touch(P, h0, -1);
                    touch(P, h, 1);
                    par[v] = h;
                    if (fits(P, h, top) || make_room(P, B, h, top)) {
                        moved = 1;
                        moves++;
                        break;
                    }
                    par[v] = h0;
                    touch(P, h, -1);
                    touch(P, h0, 1);
                }
            }
        }
        if (!moved)
            break;
        measure(P, B, &ml, sq);     /* drift-free, and the new largest */
    }
    return ml;
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
            P.d[2 * h + q] = M.hops[h].hold / M.lanes[M.hops[h].res[q]];
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
    double dl = descend(&P, &B, &bsq);
    if (dl < best)
        best = dl;
    shallower(&P, &B, best);
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
