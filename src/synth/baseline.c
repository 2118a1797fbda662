/* baseline.c — classic collective algorithms built straight from a topology
 * (contract in baseline.h).
 *
 * Why: every synthesized schedule is judged against what NCCL-style rings,
 * trees and textbook direct/butterfly exchanges achieve on the same machine,
 * and those must be real MSCCL files the executor verifies, not formulas.
 *
 * Layout shared by all builders: each rank's data is K*M chunks (K data
 * channels, M chunks per channel); chunk j belongs to channel j % K and is
 * piece j / K of it.  AllGather: rank q's chunk j lands at o[q*KM + j];
 * ReduceScatter/AllReduce "block" q is chunks q*KM .. q*KM+KM-1 of the buffer.
 * Every step moves whole chunks; dependencies are recorded as (tb, step) and
 * hasdep is set on every depended-on step in one pass at the end.
 *
 * Runtime facts followed (docs/design.md §8): one tb per (channel, send peer) and
 * per (channel, recv peer); at most 32 tbs with a peer per channel; cnt < 72;
 * a connection buffers 8 sends, so a tb never runs more than 8 sends ahead of
 * its receives (else two peers doing the same would deadlock); a nop carries
 * one extra dependency and is never depended on. */
#include "baseline.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

#define FIFO_WINDOW 8           /* NCCL_STEPS: sends a connection holds unreceived */
#define MAX_CNT 71              /* MSCCL_MAX_COUNT is 72: cnt <= 71 */
#define MAX_CHANNELS 32         /* MAXCHANNELS */
#define PEER_TBS_PER_CHANNEL 32 /* MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL */
#define MAX_DEPID 127           /* depid is stored as int8 */
#define DEFAULT_RINGS 8
#define MAX_ADJ (64L << 20)     /* adjacency entries the ring search will hold */

#define BIT(k) (1u << (k))

/* ================================================================ the table */

static const baseline_algo ALGOS[] = {
    {"ring", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "NCCL's ring, one ring per channel (AllReduce = ring ReduceScatter + ring AllGather)"},
    {"direct",
     BIT(COLL_ALLGATHER) | BIT(COLL_ALLTOALL) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "every rank sends straight to every other; reductions serialised on the owner"},
    {"butterfly", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "power-of-two ranks: recursive doubling / halving; AllReduce by full-buffer XOR exchange"},
    {"rsag", BIT(COLL_ALLREDUCE),
     "AllReduce as ReduceScatter then AllGather (--via direct|ring|butterfly)"},
    {"tree", BIT(COLL_ALLREDUCE),
     "NCCL's double binary tree: two complementary trees, reduce up, broadcast down, pipelined"},
};

#define NALGOS ((int)(sizeof ALGOS / sizeof ALGOS[0]))

const baseline_algo *baseline_algos(int *count)
{
    if (count)
        *count = NALGOS;
    return ALGOS;
}

const baseline_algo *baseline_algo_find(const char *name)
{
    for (int i = 0; name && i < NALGOS; i++)
        if (!strcmp(ALGOS[i].name, name))
            return &ALGOS[i];
    return NULL;
}

void baseline_opts_default(baseline_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = BL_TARGET_MSCCL;
}

/* Human name of a collective for messages: "AllGather" etc. */
static const char *coll_title(coll_kind k)
{
    switch (k) {
    case COLL_ALLGATHER: return "AllGather";
    case COLL_ALLTOALL: return "AllToAll";
    case COLL_REDUCESCATTER: return "ReduceScatter";
    default: return "AllReduce";
    }
}

/* What to use instead when `a` has no collective k. */
static const char *alternative_for(coll_kind k)
{
    switch (k) {
    case COLL_ALLTOALL: return "direct";
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER: return "ring, direct or butterfly";
    default: return "ring, direct, butterfly, rsag or tree";
    }
}

/* ======================================================= the ring search
 *
 * The search works on node 0 in local ranks (every node is a copy): a
 * directed graph with an edge u->v wherever a link or a shared switch joins
 * them, each edge marked used once a ring takes it.  Candidates, cheapest
 * first: stride orders 0, s, 2s, ... (complete graphs and switches: edge
 * r->r+s differs for every s, so strides are edge-disjoint), boustrophedon
 * snakes over every 2- and 3-factor grid shape (meshes and tori with an even
 * side), and a depth-first search for a Hamiltonian cycle preferring higher
 * bandwidth, then Warnsdorff's rule (fewest onward choices), then the lower
 * rank, with backtracking under a budget.  Also diagonal torus cycles (row
 * y starts y places later), which on a square torus come in two
 * edge-disjoint orientations.  A node whose connections differ in bandwidth
 * searches first, so the fastest links make the first rings; a uniform one
 * tries the structured orders first; if that finds fewer rings than wanted
 * (and the node has at most 256 ranks) the other order is tried too and the
 * one finding more rings is kept.  With several nodes a node's ring is a Hamiltonian path whose two
 * ends have NICs (a cycle cut at such a pair, or a path search). */

typedef struct {
    int n;                  /* local ranks */
    int *off;               /* [n+1] adjacency offsets */
    int *to;                /* neighbour, ascending per vertex */
    double *bw;
    int *sw;                /* switch (local index) the hop goes through, -1 = a link */
    unsigned char *used;    /* hop taken by a ring */
    unsigned char *nic;     /* [n] local rank has a NIC */
    int *nicid;             /* [n] its NIC (index into t->nics), -1 */
    long nadj;
    int maxdeg;
    int nsw;                /* node 0's switches */
    unsigned char *pout, *pin;      /* [nsw * n] switch port directions taken */
    int nnic;
    unsigned char *nic_out, *nic_in; /* [nnic] NIC directions taken */
    int ports;              /* 1: a taken switch port or NIC direction blocks */
} lgraph;

typedef struct {
    int u, v;
    double bw;
    int sw;
} ledge;

static int ledge_cmp(const void *a, const void *b)
{
    const ledge *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    /* a link before any switch (the route a transfer takes), then the fastest */
    if ((x->sw < 0) != (y->sw < 0))
        return x->sw < 0 ? -1 : 1;
    if (x->bw != y->bw)
        return x->bw > y->bw ? -1 : 1;
    return x->sw - y->sw;
}

static void lgraph_free(lgraph *g)
{
    free(g->off);
    free(g->to);
    free(g->bw);
    free(g->sw);
    free(g->used);
    free(g->nic);
    free(g->nicid);
    free(g->pout);
    free(g->pin);
    free(g->nic_out);
    free(g->nic_in);
    memset(g, 0, sizeof *g);
}

static int lgraph_build(const topo *t, lgraph *g, tc_err *err)
{
    memset(g, 0, sizeof *g);
    int R = t->ranks_per_node;
    long cnt = 0;
    for (int l = 0; l < t->nlinks; l++)
        if (t->links[l].src < R && t->links[l].dst < R)
            cnt++;
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *w = &t->switches[s];
        int inside = w->nranks > 0 && w->ranks[0] < R;
        if (inside)
            cnt += (long)w->nranks * (w->nranks - 1);
        if (cnt > MAX_ADJ)
            break;
    }
    if (cnt > MAX_ADJ)
        return tc_err_set(err, TC_INPUT,
                          "ring: node of %d ranks has more than %ld connections; too large to "
                          "search", R, MAX_ADJ);
    ledge *e = xmalloc((size_t)cnt * sizeof *e);
    long k = 0;
    for (int l = 0; l < t->nlinks; l++) {
        const topo_link *L = &t->links[l];
        if (L->src < R && L->dst < R && L->src != L->dst)
            e[k++] = (ledge){L->src, L->dst, L->bw_gbps, -1};
    }
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *w = &t->switches[s];
        if (w->nranks <= 0 || w->ranks[0] >= R)
            continue;
        for (int a = 0; a < w->nranks; a++)
            for (int b = 0; b < w->nranks; b++)
                if (a != b && w->ranks[a] < R && w->ranks[b] < R)
                    e[k++] = (ledge){w->ranks[a], w->ranks[b], w->bw_gbps, g->nsw};
        g->nsw++;
    }
    qsort(e, (size_t)k, sizeof *e, ledge_cmp);
    g->n = R;
    g->off = xcalloc((size_t)R + 1, sizeof *g->off);
    g->to = xmalloc((size_t)k * sizeof *g->to);
    g->bw = xmalloc((size_t)k * sizeof *g->bw);
    g->sw = xmalloc((size_t)k * sizeof *g->sw);
    long m = 0;
    for (long i = 0; i < k; i++) {
        if (i > 0 && e[i].u == e[i - 1].u && e[i].v == e[i - 1].v)
            continue;   /* keep the connection a transfer would take */
        g->to[m] = e[i].v;
        g->bw[m] = e[i].bw;
        g->sw[m] = e[i].sw;
        g->off[e[i].u + 1]++;
        m++;
    }
    for (int u = 0; u < R; u++) {
        int d = g->off[u + 1];
        if (d > g->maxdeg)
            g->maxdeg = d;
        g->off[u + 1] += g->off[u];
    }
    g->nadj = m;
    g->used = xcalloc((size_t)m, 1);
    g->nic = xcalloc((size_t)R, 1);
    g->nicid = xmalloc((size_t)R * sizeof *g->nicid);
    for (int u = 0; u < R; u++) {
        g->nicid[u] = t->nic_of_rank ? t->nic_of_rank[u] : -1;
        g->nic[u] = g->nicid[u] >= 0;
    }
    g->pout = xcalloc((size_t)g->nsw * R, 1);
    g->pin = xcalloc((size_t)g->nsw * R, 1);
    g->nnic = t->nnics;
    g->nic_out = xcalloc((size_t)t->nnics, 1);
    g->nic_in = xcalloc((size_t)t->nnics, 1);
    free(e);
    return TC_OK;
}

static void lgraph_reset(lgraph *g)
{
    memset(g->used, 0, (size_t)g->nadj);
    memset(g->pout, 0, (size_t)g->nsw * g->n);
    memset(g->pin, 0, (size_t)g->nsw * g->n);
    memset(g->nic_out, 0, (size_t)g->nnic);
    memset(g->nic_in, 0, (size_t)g->nnic);
}

/* Hop e out of u is free: not taken, and (when resources count) its switch
 * ports are free too. */
static int efree(const lgraph *g, int u, long e)
{
    if (g->used[e])
        return 0;
    int w = g->sw[e];
    return !g->ports || w < 0 || (!g->pout[(size_t)w * g->n + u] && !g->pin[(size_t)w * g->n + g->to[e]]);
}

/* A ring may leave its node from x and enter the next at e. */
static int nics_free(const lgraph *g, int x, int e)
{
    if (!g->nic[x] || !g->nic[e])
        return 0;
    return !g->ports || (!g->nic_out[g->nicid[x]] && !g->nic_in[g->nicid[e]]);
}

static long edge_at(const lgraph *g, int u, int v)
{
    int lo = g->off[u], hi = g->off[u + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (g->to[mid] == v)
            return mid;
        if (g->to[mid] < v)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int edge_free(const lgraph *g, int u, int v)
{
    long e = edge_at(g, u, v);
    return e >= 0 && efree(g, u, e);
}

typedef struct {
    lgraph g;
    int nnodes;
    int max;            /* rings wanted */
    int found;
    int *paths;         /* [max * n] local orders */
    long budget;        /* DFS expansions left */
    int *scratch;       /* [n] */
} ringsearch;

/* The n-1 (path) or n (cycle) hops of a local order are all free. */
static int order_free(const lgraph *g, const int *ord, int closed)
{
    int n = g->n;
    int hops = closed ? n : n - 1;
    if (n == 1)
        return 1;
    for (int i = 0; i < hops; i++)
        if (!edge_free(g, ord[i], ord[(i + 1) % n]))
            return 0;
    return 1;
}

static void order_mark(lgraph *g, const int *ord, int closed)
{
    int n = g->n;
    int hops = closed ? n : n - 1;
    if (n == 1)
        return;
    for (int i = 0; i < hops; i++) {
        int u = ord[i];
        long e = edge_at(g, u, ord[(i + 1) % n]);
        g->used[e] = 1;
        if (g->sw[e] >= 0) {
            g->pout[(size_t)g->sw[e] * n + u] = 1;
            g->pin[(size_t)g->sw[e] * n + g->to[e]] = 1;
        }
    }
    if (!closed && g->nic[ord[n - 1]] && g->nic[ord[0]]) {
        g->nic_out[g->nicid[ord[n - 1]]] = 1;
        g->nic_in[g->nicid[ord[0]]] = 1;
    }
}

static int order_has(const ringsearch *s, const int *ord)
{
    for (int k = 0; k < s->found; k++)
        if (!memcmp(s->paths + (size_t)k * s->g.n, ord, (size_t)s->g.n * sizeof *ord))
            return 1;
    return 0;
}

static void keep(ringsearch *s, const int *ord, int closed)
{
    order_mark(&s->g, ord, closed);
    memcpy(s->paths + (size_t)s->found * s->g.n, ord, (size_t)s->g.n * sizeof *ord);
    s->found++;
}

/* Accept a local Hamiltonian path whose ends have NICs (several nodes). */
static int accept_path(ringsearch *s, const int *path)
{
    int n = s->g.n;
    if (s->found >= s->max || !nics_free(&s->g, path[n - 1], path[0]))
        return 0;
    if (!order_free(&s->g, path, 0) || order_has(s, path))
        return 0;
    keep(s, path, 0);
    return 1;
}

/* Accept a local Hamiltonian cycle: as it is on one node; cut between two
 * NIC ranks when the ring must leave and re-enter the node. */
static int accept_cycle(ringsearch *s, const int *cyc)
{
    int n = s->g.n;
    if (s->found >= s->max || !order_free(&s->g, cyc, 1))
        return 0;
    if (s->nnodes == 1) {
        /* Rotate so the cycle starts at its smallest rank. */
        int at = 0;
        for (int i = 1; i < n; i++)
            if (cyc[i] < cyc[at])
                at = i;
        for (int i = 0; i < n; i++)
            s->scratch[i] = cyc[(at + i) % n];
        if (order_has(s, s->scratch))
            return 0;
        keep(s, s->scratch, 1);
        return 1;
    }
    /* Cut between two NIC ranks, preferring NIC directions no ring took yet
     * (with several NICs per node, rings then cross between nodes apart). */
    for (int sweep = 0; sweep < (s->g.ports ? 1 : 2); sweep++)
        for (int i = 0; i < n; i++) {
            int x = cyc[i], e = cyc[(i + 1) % n];
            if (!nics_free(&s->g, x, e))
                continue;
            if (sweep == 0 && (s->g.nic_out[s->g.nicid[x]] || s->g.nic_in[s->g.nicid[e]]))
                continue;
            for (int j = 0; j < n; j++)
                s->scratch[j] = cyc[(i + 1 + j) % n];
            if (order_has(s, s->scratch))
                return 0;
            keep(s, s->scratch, 0);
            return 1;
        }
    return 0;
}

/* After accepting ring k, its reverse uses the opposite directions. */
static void accept_reverse(ringsearch *s, int closed)
{
    if (s->found >= s->max || s->g.n < 3)
        return;
    int n = s->g.n;
    const int *last = s->paths + (size_t)(s->found - 1) * n;
    int *rev = xmalloc((size_t)n * sizeof *rev);
    for (int i = 0; i < n; i++)
        rev[i] = last[n - 1 - i];
    if (closed)
        accept_cycle(s, rev);
    else
        accept_path(s, rev);
    free(rev);
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Stride cycles 0, s, 2s, ... for s = 1, n-1, 2, n-2, ... coprime to n. */
static void try_strides(ringsearch *s)
{
    int n = s->g.n;
    int *ord = xmalloc((size_t)n * sizeof *ord);
    int tried = 0;
    for (int a = 1; a <= n / 2 && s->found < s->max && tried < 64; a++) {
        int pair[2] = {a, n - a};
        for (int q = 0; q < (a == n - a ? 1 : 2) && s->found < s->max; q++) {
            int st = pair[q];
            if (gcd(st, n) != 1)
                continue;
            tried++;
            int ok = 1;
            for (int r = 0; r < n && ok; r++)
                ok = edge_free(&s->g, r, (r + st) % n);
            if (!ok)
                continue;
            for (int i = 0; i < n; i++)
                ord[i] = (int)((long)i * st % n);
            accept_cycle(s, ord);
        }
    }
    free(ord);
}

/* Hamiltonian cycle of an A x B grid (A, B >= 2, B even) as cells x + A*p:
 * along row 0, snake rows 1..B-1 over columns 1..A-1, back up column 0. */
static void grid_cycle_even_rows(int A, int B, int *cell, int transpose)
{
    int k = 0;
#define CELL(x, p) (transpose ? (p) + B * (x) : (x) + A * (p))
    for (int x = 0; x < A; x++)
        cell[k++] = CELL(x, 0);
    for (int p = 1; p < B; p++) {
        if (p % 2)
            for (int x = A - 1; x >= 1; x--)
                cell[k++] = CELL(x, p);
        else
            for (int x = 1; x < A; x++)
                cell[k++] = CELL(x, p);
    }
    for (int p = B - 1; p >= 1; p--)
        cell[k++] = CELL(0, p);
#undef CELL
}

/* A snake over dims[0..nd) (rank = sum of coordinate * stride, dims[0]
 * fastest) with axis `a` as the row axis and a boustrophedon path over the
 * other axes as the column axis.  0 if the shape has no such cycle. */
static int snake_cycle(int n, const int *dims, int nd, int a, int *ord)
{
    int stride[3], st = 1;
    for (int j = 0; j < nd; j++) {
        stride[j] = st;
        st *= dims[j];
    }
    int A = dims[a], B = n / A;
    if (A < 2 || B < 2 || (A % 2 && B % 2))
        return 0;
    int *P = xmalloc((size_t)B * sizeof *P);
    for (int idx = 0; idx < B; idx++) {
        int prod = 1, off = 0;
        for (int j = 0; j < nd; j++) {
            if (j == a)
                continue;
            int size = dims[j];
            int digit = (idx / prod) % size;
            if ((idx / (prod * size)) & 1)
                digit = size - 1 - digit;
            off += digit * stride[j];
            prod *= size;
        }
        P[idx] = off;
    }
    int *cell = xmalloc((size_t)n * sizeof *cell);
    if (B % 2 == 0)
        grid_cycle_even_rows(A, B, cell, 0);
    else    /* A even: the same construction with the roles swapped */
        grid_cycle_even_rows(B, A, cell, 1);
    for (int i = 0; i < n; i++) {
        int x = cell[i] % A, p = cell[i] / A;
        ord[i] = x * stride[a] + P[p];
    }
    free(cell);
    free(P);
    return 1;
}

/* Diagonal torus cycle: C1 (length A) and C2 (length B, B a multiple of A)
 * are cycles of offsets over complementary axes; row y walks all of C1
 * starting A-y places in, then steps along C2.  On a square 2D torus the two
 * orientations use disjoint edges (each takes the +x hops the other leaves),
 * so with their reverses they give four disjoint rings. */
static void diag_cycle(const int *C1, int A, const int *C2, int B, int *ord)
{
    int k = 0;
    for (int y = 0; y < B; y++)
        for (int i = 0; i < A; i++)
            ord[k++] = C1[((i - y) % A + A) % A] + C2[y];
}

/* Grid shapes d0 x d1 (x d2) of n ranks, rank = x + d0*(y + d1*z), every
 * side >= 2, enumerated in a fixed order over the divisors of n. */
typedef struct {
    int n, nd, i, j;
    int ndiv;
    int div[512];
} shapes;

static void shapes_init(shapes *sh, int n, int nd)
{
    memset(sh, 0, sizeof *sh);
    sh->n = n;
    sh->nd = nd;
    for (int d = 2; d <= n / 2 && sh->ndiv < 512; d++)
        if (n % d == 0)
            sh->div[sh->ndiv++] = d;
    sh->j = -1;
}

static int next_shape(shapes *sh, int *dims)
{
    for (; sh->i < sh->ndiv; sh->i++, sh->j = -1) {
        int d0 = sh->div[sh->i], rest = sh->n / d0;
        if (sh->nd == 2) {
            if (sh->j++ >= 0)
                continue;
            dims[0] = d0;
            dims[1] = rest;
            return 1;
        }
        while (++sh->j < sh->ndiv) {
            int d1 = sh->div[sh->j];
            if (rest % d1 == 0 && rest / d1 >= 2) {
                dims[0] = d0;
                dims[1] = d1;
                dims[2] = rest / d1;
                return 1;
            }
        }
    }
    return 0;
}

static int *axis_cycle(int size, int stride)
{
    int *c = xmalloc((size_t)size * sizeof *c);
    for (int i = 0; i < size; i++)
        c[i] = i * stride;
    return c;
}

static void try_diags(ringsearch *s)
{
    int n = s->g.n;
    int *ord = xmalloc((size_t)n * sizeof *ord);
    for (int nd = 2; nd <= 3 && s->found < s->max; nd++) {
        int dims[3];
        shapes sh;
        shapes_init(&sh, n, nd);
        while (s->found < s->max && next_shape(&sh, dims)) {
            int stride[3] = {1, dims[0], dims[0] * (nd > 1 ? dims[1] : 1)};
            for (int a = 0; a < nd && s->found < s->max; a++) {
                int *Ca = axis_cycle(dims[a], stride[a]);
                /* the other axes as one cycle: an axis (2D) or a 2D diagonal (3D) */
                int others[2], no = 0;
                for (int j = 0; j < nd; j++)
                    if (j != a)
                        others[no++] = j;
                for (int v = 0; v < (nd == 2 ? 1 : 2) && s->found < s->max; v++) {
                    int B = n / dims[a];
                    int *Cb;
                    if (nd == 2)
                        Cb = axis_cycle(dims[others[0]], stride[others[0]]);
                    else {
                        int p = others[v], q = others[1 - v];
                        if (dims[q] % dims[p])
                            continue;
                        int *Cp = axis_cycle(dims[p], stride[p]), *Cq = axis_cycle(dims[q], stride[q]);
                        Cb = xmalloc((size_t)B * sizeof *Cb);
                        diag_cycle(Cp, dims[p], Cq, dims[q], Cb);
                        free(Cp);
                        free(Cq);
                    }
                    if (B % dims[a] == 0) {
                        diag_cycle(Ca, dims[a], Cb, B, ord);
                        if (accept_cycle(s, ord))
                            accept_reverse(s, s->nnodes == 1);
                    }
                    free(Cb);
                }
                free(Ca);
            }
        }
    }
    free(ord);
}

static void try_snakes(ringsearch *s)
{
    int n = s->g.n;
    int *ord = xmalloc((size_t)n * sizeof *ord);
    for (int nd = 2; nd <= 3 && s->found < s->max; nd++) {
        int dims[3];
        shapes sh;
        shapes_init(&sh, n, nd);
        while (s->found < s->max && next_shape(&sh, dims))
            for (int a = 0; a < nd && s->found < s->max; a++) {
                if (!snake_cycle(n, dims, nd, a, ord))
                    continue;
                if (accept_cycle(s, ord))
                    accept_reverse(s, s->nnodes == 1);
            }
    }
    free(ord);
}

typedef struct {
    int v;
    int deg;
    double bw;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->bw != y->bw)
        return x->bw > y->bw ? -1 : 1;
    if (x->deg != y->deg)
        return x->deg < y->deg ? -1 : 1;
    return x->v < y->v ? -1 : (x->v > y->v);
}

/* Unvisited vertices v reaches over free edges. */
static int onward(const lgraph *g, const unsigned char *vis, int v)
{
    int d = 0;
    for (int e = g->off[v]; e < g->off[v + 1]; e++)
        d += !vis[g->to[e]] && efree(g, v, e);
    return d;
}

/* Depth-first search for a Hamiltonian cycle (cycle=1, back to `start`) or
 * a path from `start` ending at a NIC rank (cycle=0).  1 and path[] if found
 * within s->budget expansions.  Each level keeps its ordered candidates on
 * one shared stack: [cbeg, cend) with ccur the next to try. */
static int dfs_hamilton(ringsearch *s, int start, int cycle, int *path)
{
    const lgraph *g = &s->g;
    int n = g->n;
    if (n == 1) {
        path[0] = start;
        return cycle || g->nic[start];
    }
    unsigned char *vis = xcalloc((size_t)n, 1);
    unsigned char *into = xcalloc((size_t)n, 1);
    int *cbeg = xmalloc((size_t)n * sizeof *cbeg), *ccur = xmalloc((size_t)n * sizeof *ccur);
    int *cend = xmalloc((size_t)n * sizeof *cend);
    int *stack = xmalloc(((size_t)g->nadj + (size_t)n) * sizeof *stack);
    cand *tmp = xmalloc(((size_t)g->maxdeg + 1) * sizeof *tmp);
    int start_in = 0, found = 0;
    if (cycle)
        for (int v = 0; v < n; v++)
            if (v != start && edge_free(g, v, start)) {
                into[v] = 1;
                start_in++;
            }
    int wide = g->maxdeg > 64;   /* dense graphs: Warnsdorff counts cost more than they help */
    int top = 0, d = 0, expand = 1;
    path[0] = start;
    vis[start] = 1;
    while (!cycle || start_in > 0 || d == n - 1) {
        if (d == n - 1) {
            int u = path[d];
            if (cycle ? edge_free(g, u, start) : nics_free(g, u, start)) {
                found = 1;
                break;
            }
            vis[u] = 0;
            start_in += cycle && into[u];
            d--;
            continue;
        }
        if (expand) {
            int u = path[d], k = 0, last = d + 1 == n - 1;
            for (int e = g->off[u]; e < g->off[u + 1]; e++) {
                int v = g->to[e];
                if (vis[v] || !efree(g, u, e))
                    continue;
                if (cycle && into[v] && start_in == 1 && !last)
                    continue;   /* would take the last way back into start */
                int dg = wide ? 1 : onward(g, vis, v);
                if (!last && dg == 0)
                    continue;   /* dead end before the end */
                tmp[k++] = (cand){v, dg, g->bw[e]};
            }
            qsort(tmp, (size_t)k, sizeof *tmp, cand_cmp);
            cbeg[d] = ccur[d] = top;
            for (int i = 0; i < k; i++)
                stack[top++] = tmp[i].v;
            cend[d] = top;
            expand = 0;
        }
        if (ccur[d] == cend[d]) {
            top = cbeg[d];
            if (d == 0)
                break;
            int u = path[d];
            vis[u] = 0;
            start_in += cycle && into[u];
            d--;
            continue;
        }
        if (--s->budget < 0)
            break;
        int v = stack[ccur[d]++];
        path[++d] = v;
        vis[v] = 1;
        start_in -= cycle && into[v];
        expand = d < n - 1;
    }
    free(vis);
    free(into);
    free(cbeg);
    free(ccur);
    free(cend);
    free(stack);
    free(tmp);
    return found;
}

static void try_dfs(ringsearch *s)
{
    int n = s->g.n;
    int *path = xmalloc((size_t)n * sizeof *path);
    while (s->found < s->max && s->budget > 0) {
        int before = s->found;
        if (dfs_hamilton(s, 0, 1, path) && accept_cycle(s, path))
            accept_reverse(s, s->nnodes == 1);
        if (s->found == before && s->nnodes > 1) {
            for (int st = 0; st < n && s->found == before && s->budget > 0; st++)
                if (s->g.nic[st] && dfs_hamilton(s, st, 0, path) && accept_path(s, path))
                    accept_reverse(s, 0);
        }
        if (s->found == before)
            break;
    }
    free(path);
}

/* Structured orders and the search, in one of two orders. */
static void run_strategy(ringsearch *s, int dfs_first)
{
    if (dfs_first)
        try_dfs(s);
    try_strides(s);
    try_diags(s);
    try_snakes(s);
    try_dfs(s);
}

static int uniform_bandwidth(const lgraph *g)
{
    for (long e = 1; e < g->nadj; e++)
        if (g->bw[e] != g->bw[0])
            return 0;
    return 1;
}

void baseline_rings_free(baseline_rings *r)
{
    if (!r)
        return;
    free(r->order);
    memset(r, 0, sizeof *r);
}

int baseline_find_rings(const topo *t, int max_rings, baseline_rings *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (!t || t->nranks < 2)
        return tc_err_set(err, TC_INPUT, "ring: needs at least 2 ranks");
    if (max_rings < 1)
        max_rings = 1;
    int R = t->ranks_per_node, N = t->nnodes;
    ringsearch s;
    memset(&s, 0, sizeof s);
    if (lgraph_build(t, &s.g, err) != TC_OK)
        return TC_INPUT;
    s.nnodes = N;
    s.max = R == 1 ? 1 : max_rings;
    s.paths = xmalloc((size_t)s.max * R * sizeof *s.paths);
    s.scratch = xmalloc((size_t)R * sizeof *s.scratch);
    s.budget = 200000L + 50L * R;
    int disjoint = 0;
    if (N > 1) {
        int nics = 0;
        for (int u = 0; u < R; u++)
            nics += s.g.nic[u];
        if (nics == 0 || (R > 1 && nics < 2)) {
            free(s.paths);
            free(s.scratch);
            lgraph_free(&s.g);
            return tc_err_set(err, TC_INPUT,
                              "ring: a ring over %d nodes must leave and enter each node at "
                              "ranks with a NIC, but node 0 of %s has %d such rank%s",
                              N, t->name, nics, nics == 1 ? "" : "s");
        }
    }
    if (R == 1) {
        s.paths[0] = 0;
        s.found = 1;
    } else {
        /* Pass 1: rings sharing no resource — link direction, switch port,
         * NIC direction.  Two orders of trying; the second only when the
         * first falls short on a node small enough to search twice. */
        s.g.ports = 1;
        int dfs_first = !uniform_bandwidth(&s.g);
        run_strategy(&s, dfs_first);
        if (s.found < s.max && R <= 256) {
            int keep_found = s.found;
            int *keep_paths = xmalloc((size_t)s.max * R * sizeof *keep_paths);
            memcpy(keep_paths, s.paths, (size_t)s.found * R * sizeof *keep_paths);
            lgraph_reset(&s.g);
            s.found = 0;
            s.budget = 200000L + 50L * R;
            run_strategy(&s, !dfs_first);
            if (s.found <= keep_found) {
                lgraph_reset(&s.g);
                s.found = 0;
                for (int k = 0; k < keep_found; k++)
                    keep(&s, keep_paths + (size_t)k * R, N == 1);
            }
            free(keep_paths);
        }
        /* Pass 2, only if more rings are wanted: other orders that share no
         * link direction but may share switch ports and NICs. */
        disjoint = s.found;
        if (s.found < s.max) {
            s.g.ports = 0;
            s.budget = 200000L + 50L * R;
            run_strategy(&s, dfs_first);
        }
    }
    if (s.found == 0) {
        free(s.paths);
        free(s.scratch);
        lgraph_free(&s.g);
        if (N == 1)
            return tc_err_set(err, TC_INPUT,
                              "ring: found no ring through all %d ranks of %s over its direct "
                              "links and switches (none exists, or none within the search "
                              "budget); use direct or tree", R, t->name);
        return tc_err_set(err, TC_INPUT,
                          "ring: found no path through the %d ranks of a node of %s that "
                          "starts and ends at ranks with a NIC; use direct", R, t->name);
    }
    out->nrings = s.found;
    out->ndisjoint = R == 1 ? 1 : disjoint;
    out->nranks = t->nranks;
    out->order = xmalloc((size_t)s.found * t->nranks * sizeof *out->order);
    for (int k = 0; k < s.found; k++)
        for (int u = 0; u < N; u++)
            for (int i = 0; i < R; i++)
                out->order[(size_t)k * t->nranks + (size_t)u * R + i] =
                    u * R + s.paths[(size_t)k * R + i];
    free(s.paths);
    free(s.scratch);
    lgraph_free(&s.g);
    return TC_OK;
}

/* ====================================================== building blocks */

typedef struct {
    int tb, step;
} sref;

static const sref NODEP = {-1, -1};

typedef struct {
    const topo *t;
    coll_kind k;
    int n;
    int K;              /* data channels */
    int M;              /* chunks per rank per channel */
    int KM;
    prog *p;
} bld;

static int tb_new(bld *b, int r, int send, int recv, int chan)
{
    return prog_add_tb(&b->p->gpus[r], send, recv, chan)->id;
}

/* Append a step to tb `tb` of rank r; `dep` on another tb becomes its
 * depid/deps (one on the same tb is implied by program order). */
static sref emit(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
                 int cnt, sref dep)
{
    int depid = -1, deps = -1;
    if (dep.tb >= 0 && dep.tb != tb) {
        depid = dep.tb;
        deps = dep.step;
    }
    prog_step *st = prog_add_step(&b->p->gpus[r].tbs[tb], ty, sb, so, db, dof, cnt, depid, deps);
    return (sref){tb, st->s};
}

/* A step with two dependencies: a nop carries the first. */
static sref emit2(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
                  int cnt, sref d1, sref d2)
{
    int x1 = d1.tb >= 0 && d1.tb != tb, x2 = d2.tb >= 0 && d2.tb != tb;
    if (x1 && x2 && (d1.tb != d2.tb)) {
        prog_add_step(&b->p->gpus[r].tbs[tb], ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, d1.tb,
                      d1.step);
        return emit(b, r, tb, ty, sb, so, db, dof, cnt, d2);
    }
    if (x1 && x2)   /* same tb: the later step covers both */
        return emit(b, r, tb, ty, sb, so, db, dof, cnt, d1.step > d2.step ? d1 : d2);
    return emit(b, r, tb, ty, sb, so, db, dof, cnt, x1 ? d1 : d2);
}

/* The last step of a tb so far (NODEP if empty). */
static sref last_of(const bld *b, int r, int tb)
{
    const prog_tb *T = &b->p->gpus[r].tbs[tb];
    return T->nsteps ? (sref){tb, T->nsteps - 1} : NODEP;
}

/* Interleave a tb's ns sends and nr receives, sends at most FIFO_WINDOW
 * ahead: returns 0 (emit the next send), 1 (the next receive) or -1. */
static int window_next(int *si, int *ri, int ns, int nr)
{
    if (*si < ns && (*si < *ri + FIFO_WINDOW || *ri >= nr))
        return (*si)++, 0;
    if (*ri < nr)
        return (*ri)++, 1;
    return -1;
}

static prog *new_prog(bld *b, int C, int s_chunks, tc_err *err)
{
    int in, out;
    if (coll_shape(b->k, b->n, C, &in, &out, err) != TC_OK)
        return NULL;
    b->p = prog_new("", b->k, b->n, C);
    if (!b->p)
        tc_oom();
    for (int r = 0; r < b->n; r++)
        prog_add_gpu(b->p, in, out, s_chunks);
    return b->p;
}

/* Chunk offsets of channel c inside block q (KM chunks from q*KM), appended
 * to v; returns the new length. */
static int block_chunks(const bld *b, int q, int c, int base_shift, int *v, int len)
{
    for (int m = 0; m < b->M; m++)
        v[len++] = base_shift + q * b->KM + m * b->K + c;
    return len;
}

/* Group sorted offset pairs into runs contiguous on both sides, cnt <= 71.
 * run_start[i], run_len[i]; returns the number of runs. */
static int make_runs(const int *src, const int *dst, int len, int *rs, int *rl)
{
    int nr = 0;
    for (int i = 0; i < len;) {
        int j = i + 1;
        while (j < len && j - i < MAX_CNT && src[j] == src[j - 1] + 1 && dst[j] == dst[j - 1] + 1)
            j++;
        rs[nr] = i;
        rl[nr] = j - i;
        nr++;
        i = j;
    }
    return nr;
}

/* A local copy of cnt chunks in steps of at most MAX_CNT, no dependency;
 * returns the last step. */
static sref emit_copy(bld *b, int r, int tb, buf_kind sb, int so, buf_kind db, int dof, int cnt)
{
    sref last = NODEP;
    for (int x = 0; x < cnt; x += MAX_CNT) {
        int c = cnt - x < MAX_CNT ? cnt - x : MAX_CNT;
        last = emit(b, r, tb, ST_CPY, sb, so + x, db, dof + x, c, NODEP);
    }
    return last;
}

/* =================================================================== ring */

typedef struct {
    const baseline_rings *rings;
    int *pos;           /* [nrings * n] position of rank r in ring k */
} ringinfo;

static const int *ring_of(const ringinfo *ri, int c)
{
    return ri->rings->order + (size_t)(c % ri->rings->nrings) * ri->rings->nranks;
}

static int pos_in(const ringinfo *ri, int c, int r)
{
    return ri->pos[(size_t)(c % ri->rings->nrings) * ri->rings->nranks + r];
}

/* Ring AllGather: per channel a tb sending to next, receiving from prev:
 * own chunk out (from i), n-2 forwards (rcs), the last one kept (r).  The
 * local copy runs in its own tb right after the chunk is sent, so it never
 * delays the ring, and in place it copies onto itself after the send read
 * it. */
static int ring_allgather(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *sent = xmalloc((size_t)KM * sizeof *sent);
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                sent[j] = emit(b, r, tb, ST_S, BUF_I, j, BUF_O, r * KM + j, 1, NODEP);
                for (int k = 1; k < n; k++) {
                    int off = ring[(x - k + n) % n] * KM + j;
                    emit(b, r, tb, k < n - 1 ? ST_RCS : ST_R, BUF_O, off, BUF_O, off, 1, NODEP);
                }
            }
        }
        int ctb = tb_new(b, r, -1, -1, 0);
        for (int j = 0; j < KM; j++)
            emit(b, r, ctb, ST_CPY, BUF_I, j, BUF_O, r * KM + j, 1, sent[j]);
    }
    free(sent);
    b->p->inplace = 1;
    return TC_OK;
}

/* Ring ReduceScatter: the partial of the block owned by ring position x-1-k
 * is sent at step k; it has visited every rank when it reaches its owner. */
static int ring_reducescatter(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                int off = ring[(x + n - 1) % n] * KM + j;
                emit(b, r, tb, ST_S, BUF_I, off, BUF_I, off, 1, NODEP);
                for (int k = 1; k < n - 1; k++) {
                    off = ring[(x - 1 - k + 2 * n) % n] * KM + j;
                    emit(b, r, tb, ST_RRS, BUF_I, off, BUF_I, off, 1, NODEP);
                }
                emit(b, r, tb, ST_RRC, BUF_I, r * KM + j, BUF_O, j, 1, NODEP);
            }
        }
    b->p->inplace = 1;
    return TC_OK;
}

/* Ring AllReduce: ring ReduceScatter whose last step (rrcs) starts the ring
 * AllGather of the reduced block. */
static int ring_allreduce(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
#define BLK(p) (ring[((p) % n + n) % n] * KM + j)
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                emit(b, r, tb, ST_S, BUF_I, BLK(x - 1), BUF_I, BLK(x - 1), 1, NODEP);
                for (int k = 1; k < n - 1; k++)
                    emit(b, r, tb, ST_RRS, BUF_I, BLK(x - 1 - k), BUF_I, BLK(x - 1 - k), 1, NODEP);
                emit(b, r, tb, ST_RRCS, BUF_I, BLK(x), BUF_O, BLK(x), 1, NODEP);
                for (int k = 0; k < n - 2; k++)
                    emit(b, r, tb, ST_RCS, BUF_O, BLK(x - 1 - k), BUF_O, BLK(x - 1 - k), 1, NODEP);
                emit(b, r, tb, ST_R, BUF_O, BLK(x + 1), BUF_O, BLK(x + 1), 1, NODEP);
            }
#undef BLK
        }
    b->p->inplace = 1;
    return TC_OK;
}

/* ================================================================= direct */

/* Peers are spread over channel groups so that no channel has more than 32
 * peer tbs: the pair (r, q) at ring distance d = min(|q-r|, n-|q-r|) uses
 * group (d-1)/16, the same seen from both ends. */
static int direct_groups(int n)
{
    int half = n / 2;
    return half <= 16 ? 1 : (half + 15) / 16;
}

static int direct_chan(const bld *b, int c, int r, int q)
{
    int n = b->n, dd = (q - r + n) % n;
    int dist = dd < n - dd ? dd : n - dd;
    return c * direct_groups(n) + (dist - 1) / 16;
}

/* tb of (channel c, peer r+k) is c*(n-1) + k-1. */
static void direct_tbs(bld *b, int r)
{
    for (int c = 0; c < b->K; c++)
        for (int k = 1; k < b->n; k++) {
            int q = (r + k) % b->n;
            tb_new(b, r, q, q, direct_chan(b, c, r, q));
        }
}

#define DTB(c, k) ((c) * (b->n - 1) + (k) - 1)

/* AllGather and AllToAll: per (channel, peer) send my chunks, receive theirs. */
static int direct_gather(bld *b, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    int a2a = b->k == COLL_ALLTOALL;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        for (int c = 0; c < K; c++)
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
                while ((w = window_next(&si, &ri, M, M)) >= 0) {
                    int j = (w ? ri : si) - 1;
                    j = j * K + c;
                    if (w == 0)
                        emit(b, r, tb, ST_S, BUF_I, a2a ? q * KM + j : j, BUF_O, r * KM + j, 1,
                             NODEP);
                    else
                        emit(b, r, tb, ST_R, BUF_O, q * KM + j, BUF_O, q * KM + j, 1, NODEP);
                }
            }
        int ctb = tb_new(b, r, -1, -1, 0);
        emit_copy(b, r, ctb, BUF_I, a2a ? r * KM : 0, BUF_O, r * KM, KM);
    }
    /* AllToAll in place: each tb sends a chunk before it receives into the
     * same slot, and the own block is only copied onto itself.  AllGather in
     * place would copy i onto itself while the sends read it. */
    b->p->inplace = a2a;
    return TC_OK;
}

/* The owner's serialised reduction: rank r adds what (r+k)%n sent in round
 * k = 1..n-1, in that order (the case study's cyclic order).  per_peer: each
 * peer gets its own block of i (ReduceScatter) rather than the whole buffer
 * (AllReduce); own_block: the sum goes to r's block of o (ReduceScatter
 * inside an AllReduce) rather than o[0..].  red[(c*(n-1)+k-1)*M + m]
 * receives the reduction steps. */
static void direct_reduce_phase(bld *b, int r, int per_peer, int own_block, sref *red)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    int own_in = per_peer ? r * KM : 0, out_off = own_block ? r * KM : 0;
    for (int c = 0; c < K; c++)
        for (int k = 1; k < n; k++) {
            int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
            while ((w = window_next(&si, &ri, M, M)) >= 0) {
                int m = (w ? ri : si) - 1, j = m * K + c;
                if (w == 0) {
                    int so = per_peer ? q * KM + j : j;
                    emit(b, r, tb, ST_S, BUF_I, so, BUF_O, own_block ? q * KM + j : j, 1, NODEP);
                } else {
                    sref dep = k == 1 ? NODEP : red[(size_t)(c * (n - 1) + k - 2) * M + m];
                    buf_kind sb = k == 1 ? BUF_I : BUF_O;
                    int so = k == 1 ? own_in + j : out_off + j;
                    red[(size_t)(c * (n - 1) + k - 1) * M + m] =
                        emit(b, r, tb, ST_RRC, sb, so, BUF_O, out_off + j, 1, dep);
                }
            }
        }
}

static int direct_reducescatter(bld *b, tc_err *err)
{
    int n = b->n, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)b->K * (n - 1) * b->M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 1, 0, red);
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

/* The case study's direct cyclic AllReduce: everyone sends its whole buffer
 * to everyone; rank p adds the copies from p+1, p+2, ... in that order. */
static int direct_allreduce(bld *b, tc_err *err)
{
    int n = b->n, KM = b->KM;
    if (!new_prog(b, KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)b->K * (n - 1) * b->M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 0, 0, red);
    }
    free(red);
    /* In place the sums would overwrite the buffer other tbs are still sending. */
    b->p->inplace = 0;
    return TC_OK;
}

/* The case study's ReduceScatter then AllGather: each block reduced once on
 * its owner, then sent from there to everyone. */
static int rsag_direct(bld *b, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)K * (n - 1) * M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 1, 1, red);
        for (int c = 0; c < K; c++)
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
                while ((w = window_next(&si, &ri, M, M)) >= 0) {
                    int m = (w ? ri : si) - 1, j = m * K + c;
                    if (w == 0)
                        emit(b, r, tb, ST_S, BUF_O, r * KM + j, BUF_O, r * KM + j, 1,
                             red[(size_t)(c * (n - 1) + n - 2) * M + m]);
                    else
                        emit(b, r, tb, ST_R, BUF_O, q * KM + j, BUF_O, q * KM + j, 1, NODEP);
                }
            }
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

/* ============================================================== butterfly */

static int log2_exact(int n)
{
    int l = 0;
    while ((1 << l) < n)
        l++;
    return (1 << l) == n ? l : -1;
}

/* tb of (channel c, round k) with peer r ^ (1 << k) is c*L + k. */
static void butterfly_tbs(bld *b, int r, int L)
{
    for (int c = 0; c < b->K; c++)
        for (int k = 0; k < L; k++)
            tb_new(b, r, r ^ (1 << k), r ^ (1 << k), c);
}

/* The case study's butterfly AllReduce: in round k partners r and r^2^k
 * swap their whole partial sums and each adds the other's. */
static int butterfly_allreduce(bld *b, int L, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!new_prog(b, KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)L * M * sizeof *red);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        for (int c = 0; c < K; c++)
            for (int k = 0; k < L; k++) {
                int tb = c * L + k, si = 0, ri = 0, w;
                buf_kind src = k == 0 ? BUF_I : BUF_O;
                while ((w = window_next(&si, &ri, M, M)) >= 0) {
                    int m = (w ? ri : si) - 1, j = m * K + c;
                    if (w == 0)
                        emit(b, r, tb, ST_S, src, j, BUF_O, j, 1,
                             k == 0 ? NODEP : red[(size_t)(k - 1) * M + m]);
                    else
                        red[(size_t)k * M + m] = emit(b, r, tb, ST_RRC, src, j, BUF_O, j, 1, NODEP);
                }
            }
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

/* Emit one round of a halving/doubling exchange on tb: send runs of
 * (sbuf, soff[]) and receive runs into (rbuf, roff[]) with receive type rty
 * and local operand (lbuf, loff[]) for reductions.  The first send carries
 * dep1/dep2. */
typedef struct {
    buf_kind sbuf;
    const int *soff;
    int ns;
    step_type rty;
    buf_kind lbuf, rbuf;    /* reduction operand, destination */
    const int *loff, *roff;
    int nr;
} round_spec;

static void emit_round(bld *b, int r, int tb, const round_spec *rs, sref d1, sref d2)
{
    int *srs = xmalloc((size_t)(rs->ns + 1) * sizeof *srs), *srl = xmalloc((size_t)(rs->ns + 1) * sizeof *srl);
    int *rrs = xmalloc((size_t)(rs->nr + 1) * sizeof *rrs), *rrl = xmalloc((size_t)(rs->nr + 1) * sizeof *rrl);
    int nsr = make_runs(rs->soff, rs->soff, rs->ns, srs, srl);
    const int *lo = rs->rty == ST_R ? rs->roff : rs->loff;
    int nrr = make_runs(lo, rs->roff, rs->nr, rrs, rrl);
    int si = 0, ri = 0, w;
    while ((w = window_next(&si, &ri, nsr, nrr)) >= 0) {
        if (w == 0) {
            int x = srs[si - 1];
            if (si == 1)
                emit2(b, r, tb, ST_S, rs->sbuf, rs->soff[x], rs->sbuf, rs->soff[x], srl[si - 1], d1,
                      d2);
            else
                emit(b, r, tb, ST_S, rs->sbuf, rs->soff[x], rs->sbuf, rs->soff[x], srl[si - 1],
                     NODEP);
        } else {
            int x = rrs[ri - 1];
            if (rs->rty == ST_R)
                emit(b, r, tb, ST_R, rs->rbuf, rs->roff[x], rs->rbuf, rs->roff[x], rrl[ri - 1],
                     NODEP);
            else
                emit(b, r, tb, rs->rty, rs->lbuf, rs->loff[x], rs->rbuf, rs->roff[x], rrl[ri - 1],
                     NODEP);
        }
    }
    free(srs);
    free(srl);
    free(rrs);
    free(rrl);
}

/* Offsets of channel c's chunks in blocks [b0, b0+cnt), shifted by base. */
static int blocks_offsets(const bld *b, int b0, int cnt, int c, int shift, int *v)
{
    int len = 0;
    for (int q = b0; q < b0 + cnt; q++)
        len = block_chunks(b, q, c, shift, v, len);
    return len;
}

/* Recursive doubling AllGather: in round k each rank sends the 2^k blocks
 * its group holds to the partner group.  The own block leaves from i; the
 * local copy runs concurrently in its own tb and round 1 waits for it. */
static int butterfly_allgather(bld *b, int L, tc_err *err)
{
    int n = b->n, K = b->K, KM = b->KM;
    if (!new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    int *so = xmalloc((size_t)n * KM * sizeof *so), *ro = xmalloc((size_t)n * KM * sizeof *ro);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        int ctb = tb_new(b, r, -1, -1, 0);
        sref copied = emit_copy(b, r, ctb, BUF_I, 0, BUF_O, r * KM, KM);
        for (int c = 0; c < K; c++)
            for (int k = 0; k < L; k++) {
                int d = 1 << k, gb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int ns = blocks_offsets(b, gb, d, c, k == 0 ? -r * KM : 0, so);
                int nr = blocks_offsets(b, pb, d, c, 0, ro);
                round_spec rs = {k == 0 ? BUF_I : BUF_O, so, ns, ST_R, BUF_O, BUF_O, ro, ro, nr};
                sref d1 = k == 1 ? copied : NODEP;
                sref d2 = k == 0 ? NODEP : last_of(b, r, c * L + k - 1);
                emit_round(b, r, c * L + k, &rs, d1, d2);
            }
    }
    free(so);
    free(ro);
    b->p->inplace = 0;   /* in place the copy would overwrite i while round 0 sends it */
    return TC_OK;
}

/* Recursive halving: in the round with distance d a rank sends the partner
 * half of its current range and adds the partner's contribution to its own
 * half.  ReduceScatter accumulates in scratch (its o holds one block),
 * AllReduce in o; `rabenseifner` follows with recursive doubling in o. */
static int butterfly_halving(bld *b, int L, int allreduce, tc_err *err)
{
    int n = b->n, K = b->K, KM = b->KM;
    int scratch = !allreduce && L >= 2 ? (n / 2) * KM : 0;
    if (!new_prog(b, n * KM, scratch, err))
        return TC_INPUT;
    int *so = xmalloc((size_t)n * KM * sizeof *so), *lo = xmalloc((size_t)n * KM * sizeof *lo);
    int *ro = xmalloc((size_t)n * KM * sizeof *ro);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        int h0 = r & ~(n / 2 - 1);       /* my half after the first round */
        for (int c = 0; c < K; c++) {
            for (int k = L - 1; k >= 0; k--) {
                int d = 1 << k, mb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int first = k == L - 1, final = k == 0;
                buf_kind sb, lb, rb;
                int sshift, lshift, rshift;
                if (allreduce) {
                    sb = lb = first ? BUF_I : BUF_O;
                    rb = BUF_O;
                    sshift = lshift = rshift = 0;
                } else {
                    sb = lb = first ? BUF_I : BUF_S;
                    sshift = lshift = first ? 0 : -h0 * KM;
                    rb = final ? BUF_O : BUF_S;
                    rshift = final ? -r * KM : -h0 * KM;
                }
                int ns = blocks_offsets(b, pb, d, c, sshift, so);
                int nl = blocks_offsets(b, mb, d, c, lshift, lo);
                blocks_offsets(b, mb, d, c, rshift, ro);
                round_spec rs = {sb, so, ns, ST_RRC, lb, rb, lo, ro, nl};
                sref dep = first ? NODEP : last_of(b, r, c * L + k + 1);
                emit_round(b, r, c * L + k, &rs, NODEP, dep);
            }
            if (!allreduce)
                continue;
            for (int k = 0; k < L; k++) {
                int d = 1 << k, gb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int ns = blocks_offsets(b, gb, d, c, 0, so);
                int nr = blocks_offsets(b, pb, d, c, 0, ro);
                round_spec rs = {BUF_O, so, ns, ST_R, BUF_O, BUF_O, ro, ro, nr};
                sref dep = k == 0 ? NODEP : last_of(b, r, c * L + k - 1);
                emit_round(b, r, c * L + k, &rs, NODEP, dep);
            }
        }
    }
    free(so);
    free(lo);
    free(ro);
    b->p->inplace = 1;
    return TC_OK;
}

/* =================================================================== tree */

typedef struct {
    int n;
    int *parent;
    int *cstart, *child;    /* CSR children, ascending */
    int *depth, *height;
    int root, H;
} tree;

static void tree_free(tree *T)
{
    free(T->parent);
    free(T->cstart);
    free(T->child);
    free(T->depth);
    free(T->height);
}

/* Children, depths and heights from a parent array; 0 if it is not one
 * tree over all n ranks. */
static int tree_finish(tree *T)
{
    int n = T->n;
    T->cstart = xcalloc((size_t)n + 1, sizeof *T->cstart);
    T->child = xmalloc((size_t)n * sizeof *T->child);
    T->depth = xmalloc((size_t)n * sizeof *T->depth);
    T->height = xcalloc((size_t)n, sizeof *T->height);
    int *fill = xcalloc((size_t)n, sizeof *fill), *order = xmalloc((size_t)n * sizeof *order);
    T->root = -1;
    int roots = 0;
    for (int x = 0; x < n; x++) {
        if (T->parent[x] < 0) {
            T->root = x;
            roots++;
        } else
            T->cstart[T->parent[x] + 1]++;
    }
    for (int x = 0; x < n; x++)
        T->cstart[x + 1] += T->cstart[x];
    for (int x = 0; x < n; x++)
        if (T->parent[x] >= 0)
            T->child[T->cstart[T->parent[x]] + fill[T->parent[x]]++] = x;
    int ok = roots == 1, len = 0;
    if (ok) {
        order[len++] = T->root;
        T->depth[T->root] = 0;
        for (int i = 0; i < len; i++) {
            int x = order[i];
            for (int e = T->cstart[x]; e < T->cstart[x + 1]; e++) {
                T->depth[T->child[e]] = T->depth[x] + 1;
                order[len++] = T->child[e];
            }
        }
        ok = len == n;
    }
    if (ok)
        for (int i = n - 1; i >= 0; i--) {
            int x = order[i], p = T->parent[x];
            if (p >= 0 && T->height[p] < T->height[x] + 1)
                T->height[p] = T->height[x] + 1;
        }
    T->H = ok ? T->height[T->root] : 0;
    free(fill);
    free(order);
    return ok;
}

/* NCCL's binary tree over 0..n-1 (root 0 with one child): a node's parent
 * clears its lowest set bit and sets the next one up, or only clears it
 * when that would leave the range. */
static int btree_parent(int n, int x)
{
    if (x == 0)
        return -1;
    int bit = x & -x;
    int up = (x ^ bit) | (bit << 1);
    return up < n ? up : x ^ bit;
}

/* The second tree: the first mirrored (n even) or shifted by one (n odd),
 * so that the first tree's leaves are interior nodes of the second. */
static int dtree_parent(int n, int which, int x)
{
    if (which == 0)
        return btree_parent(n, x);
    if (n % 2) {
        int u = btree_parent(n, (x - 1 + n) % n);
        return u < 0 ? -1 : (u + 1) % n;
    }
    int u = btree_parent(n, n - 1 - x);
    return u < 0 ? -1 : n - 1 - u;
}

static int routable(const topo *t, int a, int b)
{
    return topo_route_of(t, a, b).kind != ROUTE_NONE && topo_route_of(t, b, a).kind != ROUTE_NONE;
}

/* Parent arrays of both trees.  One node whose ranks can all reach the
 * tree partners: the double binary tree over the ranks.  Several nodes:
 * NCCL's shape, the double binary tree over nodes with a chain inside each
 * node (tree 0 along the node's ring path from its first rank, tree 1 along
 * it reversed), joined at the chain heads through their NICs.  One node
 * lacking the links: both trees become chains along the ring. */
static int tree_parents(const topo *t, int *par0, int *par1, char *mode, size_t modelen,
                        tc_err *err)
{
    int n = t->nranks, N = t->nnodes, R = t->ranks_per_node;
    if (N == 1) {
        int ok = 1;
        for (int which = 0; which < 2 && ok; which++)
            for (int x = 0; x < n && ok; x++) {
                int p = dtree_parent(n, which, x);
                if (p >= 0 && !routable(t, x, p))
                    ok = 0;
            }
        if (ok) {
            for (int x = 0; x < n; x++) {
                par0[x] = dtree_parent(n, 0, x);
                par1[x] = dtree_parent(n, 1, x);
            }
            snprintf(mode, modelen, "double binary tree over the %d ranks", n);
            return TC_OK;
        }
    }
    baseline_rings rg;
    if (baseline_find_rings(t, 1, &rg, err) != TC_OK) {
        tc_err_prefix(err, "tree: needs chains along a ring");
        return TC_INPUT;
    }
    const int *ring = rg.order;
    if (N == 1) {
        for (int i = 0; i < n; i++) {
            par0[ring[i]] = i == 0 ? -1 : ring[i - 1];
            par1[ring[i]] = i == n - 1 ? -1 : ring[i + 1];
        }
        snprintf(mode, modelen, "two chains along a ring (the topology lacks the links of a "
                                "binary tree over its ranks)");
    } else {
        for (int u = 0; u < N; u++) {
            const int *path = ring + (size_t)u * R;
            int p0 = dtree_parent(N, 0, u), p1 = dtree_parent(N, 1, u);
            for (int i = 0; i < R; i++) {
                par0[path[i]] = i > 0 ? path[i - 1] : p0 < 0 ? -1 : ring[(size_t)p0 * R];
                par1[path[i]] = i < R - 1 ? path[i + 1]
                                          : p1 < 0 ? -1 : ring[(size_t)p1 * R + R - 1];
            }
        }
        snprintf(mode, modelen, "double binary tree over the %d nodes, a chain inside each node",
                 N);
    }
    baseline_rings_free(&rg);
    return TC_OK;
}

typedef struct {
    int t;      /* estimated time slot */
    int phase;  /* 0 reduce, 1 broadcast */
    int m;
} titem;

static int titem_cmp(const void *a, const void *b)
{
    const titem *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase - y->phase;
    return x->m - y->m;
}

/* Steps of one tb in estimated-time order: reduce of piece m at m + height,
 * broadcast at m + H + depth.  idx[phase*M + m] = step index (or -1). */
static void tree_plan(int M, int has_red, int has_bc, int t_red, int t_bc, titem *it, int *nit,
                      int *idx)
{
    int k = 0;
    for (int m = 0; m < M; m++) {
        if (has_red)
            it[k++] = (titem){m + t_red, 0, m};
        if (has_bc)
            it[k++] = (titem){m + t_bc, 1, m};
    }
    qsort(it, (size_t)k, sizeof *it, titem_cmp);
    for (int i = 0; i < 2 * M; i++)
        idx[i] = -1;
    for (int i = 0; i < k; i++)
        idx[it[i].phase * M + it[i].m] = i;
    *nit = k;
}

/* One tree on channel `chan` over pieces at chunks base..base+M-1 of the
 * buffer, for rank r.  Tbs: leaf — (parent, parent); root — one per child;
 * interior — one per child but the last, U = (send parent, recv last child)
 * reducing and sending up in one rrs, D = (send last child, recv parent)
 * forwarding the broadcast in one rcs. */
static void tree_rank(bld *b, const tree *T, int r, int chan, int base)
{
    int M = b->M;
    int P = T->parent[r], nc = T->cstart[r + 1] - T->cstart[r];
    const int *ch = T->child + T->cstart[r];
    int t_red = T->height[r], t_bc = T->H + T->depth[r];
    titem *it = xmalloc((size_t)2 * M * sizeof *it);
    int nit;
    if (nc == 0) {
        int tb = tb_new(b, r, P, P, chan);
        int *idx = xmalloc((size_t)2 * M * sizeof *idx);
        tree_plan(M, 1, 1, t_red, t_bc, it, &nit, idx);
        for (int i = 0; i < nit; i++) {
            int c = base + it[i].m;
            if (it[i].phase == 0)
                emit(b, r, tb, ST_S, BUF_I, c, BUF_O, c, 1, NODEP);
            else
                emit(b, r, tb, ST_R, BUF_O, c, BUF_O, c, 1, NODEP);
        }
        free(idx);
        free(it);
        return;
    }
    /* tbs: T_i for the children handled by their own tb */
    int nown = P < 0 ? nc : nc - 1;
    int tb0 = b->p->gpus[r].ntbs;    /* this tree's tbs are tb0, tb0+1, ... */
    for (int i = 0; i < nown; i++)
        tb_new(b, r, ch[i], ch[i], chan);
    if (P >= 0) {
        tb_new(b, r, P, ch[nc - 1], chan);      /* U */
        tb_new(b, r, ch[nc - 1], P, chan);      /* D */
    }
    /* plans: step indices of every (tb, phase, piece) before emitting */
    int ntb = nown + (P >= 0 ? 2 : 0);
    int *idx = xmalloc((size_t)ntb * 2 * M * sizeof *idx);
    titem *plans = xmalloc((size_t)ntb * 2 * M * sizeof *plans);
    int nplan[10];
    for (int i = 0; i < nown; i++)
        tree_plan(M, 1, 1, t_red, t_bc, plans + (size_t)i * 2 * M, &nplan[i], idx + (size_t)i * 2 * M);
    if (P >= 0) {
        tree_plan(M, 1, 0, t_red, t_bc, plans + (size_t)nown * 2 * M, &nplan[nown],
                  idx + (size_t)nown * 2 * M);
        tree_plan(M, 0, 1, t_red, t_bc, plans + (size_t)(nown + 1) * 2 * M, &nplan[nown + 1],
                  idx + (size_t)(nown + 1) * 2 * M);
    }
#define REF(i, ph, m) ((sref){tb0 + (i), idx[(size_t)(i) * 2 * M + (ph) * M + (m)]})
    /* the tb index (0-based among this rank's tbs of this tree) doing the
     * last reduction: root T_{nc-1}; interior U */
    for (int i = 0; i < ntb; i++) {
        int tb = tb0 + i;
        const titem *pl = plans + (size_t)i * 2 * M;
        for (int s = 0; s < nplan[i]; s++) {
            int m = pl[s].m, c = base + m;
            if (i < nown) {
                if (pl[s].phase == 0) {
                    sref dep = i == 0 ? NODEP : REF(i - 1, 0, m);
                    emit(b, r, tb, ST_RRC, i == 0 ? BUF_I : BUF_O, c, BUF_O, c, 1, dep);
                } else {
                    sref dep = P < 0 ? REF(nc - 1, 0, m) : REF(nown + 1, 1, m);
                    emit(b, r, tb, ST_S, BUF_O, c, BUF_O, c, 1, dep);
                }
            } else if (i == nown) {             /* U: reduce the last child, send up */
                sref dep = nown == 0 ? NODEP : REF(nown - 1, 0, m);
                emit(b, r, tb, ST_RRS, nown == 0 ? BUF_I : BUF_O, c, BUF_O, c, 1, dep);
            } else {                            /* D: broadcast from parent, forward */
                emit(b, r, tb, ST_RCS, BUF_O, c, BUF_O, c, 1, NODEP);
            }
        }
    }
#undef REF
    free(idx);
    free(plans);
    free(it);
}

static int tree_allreduce(bld *b, char *mode, size_t modelen, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M;
    tree T[2];
    memset(T, 0, sizeof T);
    for (int w = 0; w < 2; w++) {
        T[w].n = n;
        T[w].parent = xmalloc((size_t)n * sizeof(int));
    }
    int rc = tree_parents(b->t, T[0].parent, T[1].parent, mode, modelen, err);
    if (rc == TC_OK)
        for (int w = 0; w < 2; w++)
            if (!tree_finish(&T[w]))
                rc = tc_err_set(err, TC_INPUT, "tree: internal error: tree %d is not a tree", w);
    for (int w = 0; w < 2 && rc == TC_OK; w++)
        for (int x = 0; x < n; x++)
            if (T[w].cstart[x + 1] - T[w].cstart[x] > 3)
                rc = tc_err_set(err, TC_INPUT, "tree: internal error: rank %d has more than 3 "
                                "children", x);
    if (rc == TC_OK && !new_prog(b, 2 * K * M, 0, err))
        rc = TC_INPUT;
    if (rc == TC_OK)
        for (int r = 0; r < n; r++)
            for (int c = 0; c < K; c++)
                for (int w = 0; w < 2; w++)
                    tree_rank(b, &T[w], r, 2 * c + w, (c * 2 + w) * M);
    for (int w = 0; w < 2; w++)
        tree_free(&T[w]);
    if (rc == TC_OK)
        b->p->inplace = 1;
    return rc;
}

/* ============================================================ finishing */

static void mark_hasdeps(prog *p)
{
    for (int r = 0; r < p->ngpu; r++) {
        prog_gpu *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (st->depid >= 0)
                    g->tbs[st->depid].steps[st->deps].hasdep = 1;
            }
    }
}

static const char *target_name(baseline_target t)
{
    return t == BL_TARGET_EXECUTOR ? "msccl-executor" : t == BL_TARGET_UNLIMITED ? "unlimited"
                                                                                 : "msccl";
}

/* Every pair a tb talks to must be reachable on the topology. */
static int check_routes(const prog *p, const topo *t, const char *algo, tc_err *err)
{
    for (int r = 0; r < p->ngpu; r++)
        for (int k = 0; k < p->gpus[r].ntbs; k++) {
            const prog_tb *tb = &p->gpus[r].tbs[k];
            int q = tb->send >= 0 ? tb->send : tb->recv;
            if (q < 0)
                continue;
            if (topo_route_of(t, r, q).kind == ROUTE_NONE ||
                topo_route_of(t, q, r).kind == ROUTE_NONE)
                return tc_err_set(err, TC_INPUT,
                                  "%s: ranks %d and %d of %s have no link, switch or NIC between "
                                  "them, and %s sends between them; use ring%s",
                                  algo, r, q, t->name, algo,
                                  !strcmp(algo, "tree") ? "" : " or tree");
        }
    return TC_OK;
}

static int check_limits_and_stats(prog *p, const baseline_opts *o, const char *what,
                                  baseline_stats *st, tc_err *err)
{
    int maxchan = 0, maxsteps = 0, maxdepid = -1, max_tbs = 0;
    int worst_r = 0, worst_t = 0;
    long long tbs = 0, steps = 0;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        tbs += g->ntbs;
        if (g->ntbs > max_tbs)
            max_tbs = g->ntbs;
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            steps += tb->nsteps;
            if (tb->chan > maxchan)
                maxchan = tb->chan;
            if (tb->nsteps > maxsteps) {
                maxsteps = tb->nsteps;
                worst_r = r;
                worst_t = t;
            }
            for (int s = 0; s < tb->nsteps; s++)
                if (tb->steps[s].depid > maxdepid)
                    maxdepid = tb->steps[s].depid;
        }
    }
    p->nchannels = maxchan + 1;
    st->nchannels = p->nchannels;
    st->max_steps_per_tb = maxsteps;
    st->max_tbs_per_rank = max_tbs;
    st->tbs = tbs;
    st->steps = steps;
    if (p->nchannels > MAX_CHANNELS)
        return tc_err_set(err, TC_INPUT,
                          "%s needs %d channels; the runtimes allow %d: use fewer --channels",
                          what, p->nchannels, MAX_CHANNELS);
    int limit = o->target == BL_TARGET_EXECUTOR ? 64 : o->target == BL_TARGET_MSCCL ? 256 : 0;
    if (limit && maxsteps > limit)
        return tc_err_set(err, TC_INPUT,
                          "%s needs %d steps in one threadblock (rank %d tb %d); the %s runtime "
                          "allows %d per tb: use fewer --chunks%s, or --target unlimited to "
                          "simulate it anyway (the file will not load in the runtimes)",
                          what, maxsteps, worst_r, worst_t, target_name(o->target), limit,
                          o->target == BL_TARGET_EXECUTOR ? ", --target msccl (256)" : "");
    if (o->target != BL_TARGET_UNLIMITED && maxdepid > MAX_DEPID)
        return tc_err_set(err, TC_INPUT,
                          "%s needs dependencies on tb %d; the runtimes store depid in 8 bits "
                          "(at most %d): use fewer ranks or channels, or --target unlimited to "
                          "simulate it anyway", what, maxdepid, MAX_DEPID);
    /* The builders keep <= 32 peer tbs per channel; make sure. */
    for (int r = 0; r < p->ngpu; r++) {
        int *cs = xcalloc((size_t)p->nchannels, sizeof *cs), *cr = xcalloc((size_t)p->nchannels,
                                                                           sizeof *cr);
        int bad = 0;
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            const prog_tb *tb = &p->gpus[r].tbs[t];
            bad |= (tb->send >= 0 && ++cs[tb->chan] > PEER_TBS_PER_CHANNEL) ||
                   (tb->recv >= 0 && ++cr[tb->chan] > PEER_TBS_PER_CHANNEL);
        }
        free(cs);
        free(cr);
        if (bad)
            return tc_err_set(err, TC_INPUT,
                              "%s puts more than %d peer tbs on one channel of rank %d; the "
                              "runtimes allow %d", what, PEER_TBS_PER_CHANNEL, r,
                              PEER_TBS_PER_CHANNEL);
    }
    return TC_OK;
}

/* Keep names safe inside an XML attribute. */
static void plain(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == ' ' || *s == ',' || *s == ':' ||
              *s == '(' || *s == ')' || *s == '+' || *s == '/'))
            *s = '_';
}

long long baseline_size_bytes(const prog *p, const topo *t, long long want)
{
    long long per = 4;
    if (t && t->dma_bytes > 0) {
        long long d = t->dma_bytes;
        long long g = 4, a = d;
        while (a) {
            long long r = g % a;
            g = a;
            a = r;
        }
        per = 4 / g * d;    /* lcm(4, dma) */
    }
    long long unit = per * (p && p->nchunksperloop > 0 ? p->nchunksperloop : 1);
    if (want < 1)
        want = 1;
    return (want + unit - 1) / unit * unit;
}

prog *baseline_build(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                     tc_err *err)
{
    return baseline_build_stats(algo, t, k, o, NULL, err);
}

prog *baseline_build_stats(const char *algo, const topo *t, coll_kind k,
                           const baseline_opts *opts, baseline_stats *stp, tc_err *err)
{
    baseline_opts dflt;
    baseline_opts_default(&dflt);
    const baseline_opts *o = opts ? opts : &dflt;
    baseline_stats stl;
    baseline_stats *st = stp ? stp : &stl;
    memset(st, 0, sizeof *st);

    const baseline_algo *a = baseline_algo_find(algo);
    if (!a) {
        tc_err_set(err, TC_INPUT, "unknown algorithm '%s'; known: ring, direct, butterfly, "
                   "rsag, tree", algo ? algo : "");
        return NULL;
    }
    if ((int)k < 0 || k >= COLL_COUNT) {
        tc_err_set(err, TC_INPUT, "unknown collective");
        return NULL;
    }
    if (!(a->colls & BIT(k))) {
        if (!strcmp(a->name, "rsag") || !strcmp(a->name, "tree"))
            tc_err_set(err, TC_INPUT, "%s is an AllReduce algorithm and has no %s; use %s",
                       a->name, coll_title(k), alternative_for(k));
        else
            tc_err_set(err, TC_INPUT, "%s has no %s; use %s", a->name, coll_title(k),
                       alternative_for(k));
        return NULL;
    }
    if (!t || t->nranks < 2) {
        tc_err_set(err, TC_INPUT, "%s: needs at least 2 ranks, the topology has %d", a->name,
                   t ? t->nranks : 0);
        return NULL;
    }
    const char *via = o->via && *o->via ? o->via : NULL;
    if (via && strcmp(a->name, "rsag")) {
        tc_err_set(err, TC_INPUT, "--via applies to rsag only, not %s", a->name);
        return NULL;
    }
    if (!strcmp(a->name, "rsag") && via && strcmp(via, "direct") && strcmp(via, "ring") &&
        strcmp(via, "butterfly")) {
        tc_err_set(err, TC_INPUT, "rsag --via: expected direct, ring or butterfly, got '%s'", via);
        return NULL;
    }
    if (o->channels < 0 || o->channels > MAX_CHANNELS) {
        tc_err_set(err, TC_INPUT, "--channels: expected 1..%d, got %d", MAX_CHANNELS, o->channels);
        return NULL;
    }
    if (o->chunks < 0) {
        tc_err_set(err, TC_INPUT, "--chunks: expected at least 1, got %d", o->chunks);
        return NULL;
    }

    int n = t->nranks;
    const char *kind = a->name;     /* builder actually used */
    if (!strcmp(kind, "rsag"))
        kind = !via || !strcmp(via, "direct") ? "direct-rsag" : !strcmp(via, "ring") ? "ring"
                                                                                     : "halving";
    int L = log2_exact(n);
    if ((!strcmp(a->name, "butterfly") || !strcmp(kind, "halving")) && L < 0) {
        tc_err_set(err, TC_INPUT, "%s needs a power-of-two number of ranks; %s has %d: use ring "
                   "or direct%s", via ? "rsag --via butterfly" : "butterfly", t->name, n,
                   k == COLL_ALLREDUCE ? " (or tree)" : "");
        return NULL;
    }
    int is_ring = !strcmp(kind, "ring");
    int is_tree = !strcmp(kind, "tree");
    if (is_tree && o->channels > MAX_CHANNELS / 2) {
        tc_err_set(err, TC_INPUT, "tree: --channels %d needs %d channels (two trees each); the "
                   "runtimes allow %d", o->channels, 2 * o->channels, MAX_CHANNELS);
        return NULL;
    }

    bld b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.k = k;
    b.n = n;
    b.M = o->chunks ? o->chunks : is_tree ? 4 : 1;
    b.K = o->channels ? o->channels : 1;

    baseline_rings rings;
    memset(&rings, 0, sizeof rings);
    ringinfo ri = {&rings, NULL};
    char mode[256] = "";
    int rc;
    if (is_ring) {
        int want = o->channels ? o->channels : DEFAULT_RINGS;
        if (baseline_find_rings(t, want, &rings, err) != TC_OK)
            return NULL;
        st->rings_found = rings.ndisjoint;
        if (!o->channels)
            b.K = rings.ndisjoint;
        ri.pos = xmalloc((size_t)rings.nrings * n * sizeof *ri.pos);
        for (int r = 0; r < rings.nrings; r++)
            for (int i = 0; i < n; i++)
                ri.pos[(size_t)r * n + rings.order[(size_t)r * n + i]] = i;
        if (b.K > rings.ndisjoint) {
            size_t len = (size_t)snprintf(st->note, sizeof st->note,
                     "%d ring%s share%s no link direction, switch port or NIC direction",
                     rings.ndisjoint, rings.ndisjoint == 1 ? "" : "s",
                     rings.ndisjoint == 1 ? "s" : "");
            int shared = (b.K < rings.nrings ? b.K : rings.nrings) - rings.ndisjoint;
            if (shared > 0 && len < sizeof st->note)
                len += (size_t)snprintf(st->note + len, sizeof st->note - len,
                                        "; %d more use other links but share switch ports or "
                                        "NICs", shared);
            if (b.K > rings.nrings && len < sizeof st->note)
                snprintf(st->note + len, sizeof st->note - len,
                         "; channels %d..%d repeat those rings", rings.nrings, b.K - 1);
        }
    }
    long long km = (long long)b.K * b.M;
    long long chunks = is_tree ? 2 * km : (k == COLL_ALLREDUCE && (!strcmp(kind, "direct") ||
                                                                   !strcmp(kind, "butterfly")))
                                              ? km
                                              : km * n;
    if (chunks > INT_MAX / 8) {
        baseline_rings_free(&rings);
        free(ri.pos);
        tc_err_set(err, TC_INPUT, "%s: %lld chunks per loop is too many: use fewer --chunks or "
                   "--channels", a->name, chunks);
        return NULL;
    }
    b.KM = (int)km;

    if (is_ring)
        rc = k == COLL_ALLGATHER ? ring_allgather(&b, &ri, err)
             : k == COLL_REDUCESCATTER ? ring_reducescatter(&b, &ri, err)
                                       : ring_allreduce(&b, &ri, err);
    else if (!strcmp(kind, "direct"))
        rc = k == COLL_REDUCESCATTER ? direct_reducescatter(&b, err)
             : k == COLL_ALLREDUCE  ? direct_allreduce(&b, err)
                                    : direct_gather(&b, err);
    else if (!strcmp(kind, "direct-rsag"))
        rc = rsag_direct(&b, err);
    else if (!strcmp(kind, "butterfly"))
        rc = k == COLL_ALLGATHER ? butterfly_allgather(&b, L, err)
             : k == COLL_REDUCESCATTER ? butterfly_halving(&b, L, 0, err)
                                       : butterfly_allreduce(&b, L, err);
    else if (!strcmp(kind, "halving"))
        rc = butterfly_halving(&b, L, 1, err);
    else
        rc = tree_allreduce(&b, mode, sizeof mode, err);
    baseline_rings_free(&rings);
    free(ri.pos);
    if (rc != TC_OK) {
        prog_free(b.p);
        return NULL;
    }
    prog *p = b.p;
    mark_hasdeps(p);
    p->outofplace = 1;

    char what[160];
    snprintf(what, sizeof what, "%s %s over %d ranks", !strcmp(a->name, "rsag") && via
             ? (!strcmp(via, "ring") ? "rsag --via ring" : !strcmp(via, "butterfly")
                ? "rsag --via butterfly" : "rsag") : a->name, coll_title(k), n);
    st->channels = b.K;
    st->chunks = b.M;
    if (check_routes(p, t, a->name, err) != TC_OK ||
        check_limits_and_stats(p, o, what, st, err) != TC_OK) {
        prog_free(p);
        return NULL;
    }
    if (is_tree && !st->note[0])
        snprintf(st->note, sizeof st->note, "tree: %s", mode);
    snprintf(p->name, sizeof p->name, "taccl baseline %s %s: %d ranks on %s, %d channel%s x %d "
             "chunk%s%s%s", a->name, coll_name(k), n, t->name, b.K, b.K == 1 ? "" : "s", b.M,
             b.M == 1 ? "" : "s", via ? " via " : "", via ? via : "");
    plain(p->name);
    return p;
}
