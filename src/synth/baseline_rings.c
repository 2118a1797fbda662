/* baseline_rings.c — find rings through a topology for the ring baseline
 * (baseline_find_rings in baseline.h): as many as possible that share no
 * link direction, switch port or NIC direction, as NCCL's topology search
 * looks for channels.  How the search goes is described below. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

#define MAX_ADJ (64L << 20)     /* adjacency entries the ring search will hold */

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
    int ports;              /* 1: a taken switch port blocks */
    int nics;               /* 1: a taken NIC direction blocks */
    int same_nic;           /* 1: prefer leaving a node by the NIC the ring entered */
    int rails;              /* 1: the fabric is rails: leave by the NIC entered by */
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
    g->rails = t->rails;
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
    if (!g->nic[x] || !g->nic[e] || (g->rails && g->nicid[x] != g->nicid[e]))
        return 0;   /* on rails, node u's NIC i reaches node u+1's NIC i only */
    return !g->nics || (!g->nic_out[g->nicid[x]] && !g->nic_in[g->nicid[e]]);
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
    for (int sweep = s->g.same_nic ? -1 : 0; sweep < (s->g.nics ? 1 : 2); sweep++)
        for (int i = 0; i < n; i++) {
            int x = cyc[i], e = cyc[(i + 1) % n];
            if (!nics_free(&s->g, x, e))
                continue;
            if (sweep == -1 && s->g.nicid[x] != s->g.nicid[e])
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
                if (s->g.nic[st] && !(s->g.nics && s->g.nic_in[s->g.nicid[st]]) &&
                    dfs_hamilton(s, st, 0, path) && accept_path(s, path))
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
    return baseline_find_rings_mode(t, max_rings, BL_RINGS_DISJOINT, out, err);
}

int baseline_find_rings_mode(const topo *t, int max_rings, baseline_ring_mode mode,
                             baseline_rings *out, tc_err *err)
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
        int nccl = mode == BL_RINGS_NCCL;
        s.g.ports = !nccl;
        s.g.nics = 1;
        s.g.same_nic = nccl;
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
        if (s.found < s.max && !nccl) {
            s.g.ports = 0;
            s.g.nics = 0;
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
