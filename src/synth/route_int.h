/* route_int.h — what the parts of stage 1 share (not a public API).
 *
 * route.c holds the public calls (route.h) and runs a solve in the order
 * described at its top; route_graph.c builds the model's skeleton (rmodel:
 * hops, candidate hops per chunk, symmetry orbits) and says why a rank is
 * out of a chunk's reach; route_trees.c holds routings as trees, the
 * heuristic routing among them, and writes them as an algo; route_milp.c
 * builds the MILP over the skeleton, with the heuristic as its incumbent,
 * and reads its routing back.  Here: the types they pass each other and
 * the small lookups every one of them makes. */
#ifndef TC_ROUTE_INT_H
#define TC_ROUTE_INT_H

#include "route.h"

#include <math.h>
#include <stdlib.h>
#include "../util/mem.h"
#include "../util/tcassert.h"

static inline int feq(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
}

/* ------------------------------------------------------------ union-find */

typedef struct {
    int *p;
} ufind;

static inline void uf_init(ufind *u, int n)
{
    u->p = xmalloc((size_t)n * sizeof *u->p);
    for (int i = 0; i < n; i++)
        u->p[i] = i;
}

static inline int uf_find(ufind *u, int x)
{
    while (u->p[x] != x) {
        u->p[x] = u->p[u->p[x]];
        x = u->p[x];
    }
    return x;
}

/* The smaller index becomes the root, so a class is named by its first member. */
static inline void uf_union(ufind *u, int a, int b)
{
    a = uf_find(u, a);
    b = uf_find(u, b);
    if (a < b)
        u->p[b] = a;
    else if (b < a)
        u->p[a] = b;
}

static inline void uf_free(ufind *u)
{
    free(u->p);
    u->p = NULL;
}

/* ------------------------------------------------------------ the skeleton */

typedef struct {
    int u, v;           /* sender and receiver rank */
    int inter;          /* u and v on different nodes */
    int pair_ok;        /* inter: the sketch allows (u, v)'s local ranks to cross */
    int is_switch;      /* route through a switch */
    double cost;        /* us for one chunk on this hop, uncontended (cost_hop_us) */
    double hold;        /* us it holds its resources (cost_hold_us): cost less
                           alpha where alpha is a delay and the runtime's
                           latency (model/cost.h) */
    int nres, res[2];   /* order.h numbering; res[0] is the sending side */
    int uc;             /* -1, or SK_UC_MIN / SK_UC_MAX: a counted switch connection */
} hop;

typedef struct {
    const sketch *s;        /* the sketch routed (not owned) */
    const topo *t;          /* the topology routed over (not owned) */
    coll_kind coll;         /* COLL_ALLGATHER or COLL_ALLTOALL: what is routed */
    double chunk_bytes;     /* bytes per chunk: what every hop's cost is for */
    int nranks;             /* ranks of t */
    int ranks_per_node;     /* ranks of one node; rank r is on node r / ranks_per_node */
    int chunkup;            /* the sketch's input_chunkup (at least 1) */
    int chunks_per_rank;    /* chunks each rank starts with: chunkup, or
                               nranks * chunkup for AllToAll */
    int chunks_per_loop;    /* nranks * chunkup: the collective's chunks per
                               loop (coll_in_dests' C) */
    int nchunks;            /* nranks * chunks_per_rank; chunk c is chunk
                               c % chunks_per_rank of rank c / chunks_per_rank */
    int slack;              /* route_opts.slack: hops a candidate path may
                               have beyond the shortest */
    int latency;            /* route_opts.latency: the fewest-alpha trees */
    int nhops;              /* usable directed hops (u != v, with a route) */
    hop *hops;              /* [nhops], by (u, v) ascending */
    int *hop_of;            /* [nranks * nranks] hop index of u -> v, or -1 */
    int *out_start, *out_hop;   /* hops by sender (CSR over ranks) */
    int *in_start, *in_hop;     /* hops by receiver (CSR over ranks) */
    unsigned char *leaves_via;  /* [ranks_per_node^2]: [origin_local * ranks_per_node
                                   + sender_local] 1 where sketch_leaves_via allows
                                   the sender to carry the origin's chunks out */
    int nresources;         /* resources in order.h's numbering (cost_nres) */
    int *lanes;             /* [nresources] parallel lanes of each resource */
    int *cand_start, *cand_hop; /* candidate hops of chunk c:
                                   cand_hop[cand_start[c] .. cand_start[c+1]) ascending;
                                   a position there is a variable "slot" */
    double *cheapest;       /* [nchunks * nranks] cheapest arrival of chunk c at v
                               over its candidates, INFINITY if unreachable, 0 at
                               its origin */
    int ngens;              /* symmetry generators kept (not the identity) */
    int *gens;              /* [ngens * nranks] each generator as a rank permutation */
    int symmetric;          /* ngens > 0 */
    int *orbit_rep;         /* [nchunks] the representative of c's orbit (its
                               smallest chunk id) */
    int *rep_to_chunk;      /* [nchunks * nranks] for chunk c, the rank permutation
                               carrying its representative's ranks to c's */
    int *orbit_start, *orbit;   /* members of each representative's orbit (CSR over chunks) */
    int nreps;              /* orbits: chunks with orbit_rep[c] == c */
    int *dest_scratch, *index_scratch;  /* [nranks] scratch for coll_in_dests */
} rmodel;

static inline int node_of(const rmodel *M, int r)
{
    return r / M->ranks_per_node;
}

static inline int origin_of(const rmodel *M, int c)
{
    return c / M->chunks_per_rank;
}

/* Destinations of chunk c other than its origin, into d[]; returns how many. */
static inline int chunk_dests(const rmodel *M, int c, int *d)
{
    int o = origin_of(M, c);
    int m = coll_in_dests(M->coll, M->nranks, M->chunks_per_loop, o, c % M->chunks_per_rank,
                          M->dest_scratch, M->index_scratch), cnt = 0;
    for (int j = 0; j < m; j++)
        if (M->dest_scratch[j] != o)
            d[cnt++] = M->dest_scratch[j];
    return cnt;
}

static inline int chunk_image(const rmodel *M, int c, const int *g)
{
    int o = origin_of(M, c), i = c % M->chunks_per_rank;
    if (M->coll == COLL_ALLTOALL)
        return g[o] * M->chunks_per_rank + g[i / M->chunkup] * M->chunkup + i % M->chunkup;
    return g[o] * M->chunks_per_rank + i;
}

static inline int slot_of(const rmodel *M, int c, int h)
{
    int lo = M->cand_start[c], hi = M->cand_start[c + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (M->cand_hop[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < M->cand_start[c + 1] && M->cand_hop[lo] == h ? lo : -1;
}

/* The hop image of hop index hi under permutation g (-1 if none). */
static inline int hop_image(const rmodel *M, int hi, const int *g)
{
    const hop *h = &M->hops[hi];
    return M->hop_of[g[h->u] * M->nranks + g[h->v]];
}

/* ------------------------------------------------------------ routings as trees */

/* par[c * n + v]: hop that brings chunk c to v, -1 if none (origin, or not
 * on c's tree).  arr[c * n + v]: when c reaches v on its tree (INFINITY if
 * not on it), uncontended or as set by the caller. */
typedef struct {
    int *par;
    double *arr;
} trees;

/* ------------------------------------------------------------ the MILP */

typedef struct {
    int n, cap;
    int *col;
    double *val;
} rowbuf;

typedef struct {
    const rmodel *M;
    lp *p;
    double U;               /* horizon: time <= U */
    int *xcol;              /* [nslots] */
    int *scol;              /* [nchunks * nranks], -1 for the origin / unreachable */
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

/* ---- the skeleton (route_graph.c) ---- */

/* The skeleton of routing collective k of s over t in chunks of `bytes`:
 * TC_INPUT with err set (and M freed) when some rank is out of a chunk's
 * reach or the model is too large to build. */
int route_rmodel_build(rmodel *M, const sketch *s, const topo *t, coll_kind k, double bytes,
                       const route_opts *o, tc_err *err);
void route_rmodel_free(rmodel *M);
/* 1 if M's invariants hold (hops ascending and indexed by hop_of, the
 * CSRs listing every hop once, candidates ascending and in range, cheapest
 * 0 at each origin, orbits closed, generators permutations); for
 * TC_ASSERT only. */
int route_rmodel_sane(const rmodel *M);

/* ---- routings as trees (route_trees.c) ---- */

void route_trees_init(trees *T, const rmodel *M);
void route_trees_free(trees *T);
/* 1 if T routes every chunk of M: per chunk, the hop into v ends at v, the
 * origin has none, every rank on the tree reaches the origin through its
 * parents without a cycle, and every destination is on it; for TC_ASSERT
 * only. */
int route_trees_sane(const rmodel *M, const trees *T);
/* Uncontended arrivals of chunk c along its tree; order: [n] scratch. */
void route_tree_arrivals(const rmodel *M, trees *T, int c, int *order);
/* Drop relays that receive a chunk and pass it to nobody. */
void route_prune_dead_relays(const rmodel *M, int *par, const unsigned char *isdest);
/* Carry the representative's tree to chunk c of its orbit. */
void route_carry_tree(const rmodel *M, trees *T, int rep, int c);
/* The heuristic routing: a load-aware earliest-finish tree per orbit
 * representative, carried to the rest of its orbit. */
void route_heuristic_trees(const rmodel *M, trees *T);
/* The trees as an algo: per chunk, sends by depth, arrival, receiver. */
algo *route_trees_to_algo(const rmodel *M, const trees *T);

/* ---- the MILP (route_milp.c) ---- */

/* Columns and rows, H as the incumbent.  -1 if the symmetry does not map
 * candidates onto candidates. */
int route_milp_build(milp *P, const rmodel *M, const trees *H, const unsigned char *used,
                     double U);
void route_milp_free(milp *P);
/* Read the MILP's routing into R; 0 if it is not a forest of trees. */
int route_extract(const milp *P, trees *R);
/* The objective's value at the incumbent. */
double route_objective_of_incumbent(const milp *P);
/* Arrivals on T that also keep enforce_ordering; 0 if they do not settle. */
int route_incumbent_times(const rmodel *M, trees *T);
/* The relaxed makespan of trees T (what the MILP's time rows ask of them). */
double route_relaxed_time(const rmodel *M, const trees *T);

#endif
