/* bound.c — lower bounds on a collective's time (see bound.h).
 *
 * THE MODEL (docs/design.md §4, as the executor implements it).  Data move
 * only in point-to-point transfers between ranks; a transfer a -> b takes
 * the one route topo_route_of(t, a, b) gives and, for alpha + s/B, holds:
 *   a link                      (one of its `mult` lanes),
 *   a switch: a's out port and b's in port (one transfer each at a time),
 *   NICs: a's NIC egress and b's NIC ingress (one transfer each at a time),
 * where B is the route's bandwidth (for NICs the slower of the two).  A
 * resource of L lanes is therefore busy at most L * T in a schedule of length
 * T, and carrying s bytes over a route of bandwidth B costs it s / B of busy
 * time.  Traffic a -> b -> c is two transfers, relayed (stored and
 * forwarded) by b.  Local copies and reductions hold no shared resource in
 * the executor, so they give no bound here.
 *
 * Notation: n ranks, S = size_bytes = the larger per-rank buffer
 * (nccl-tests), a shard = S / n bytes.  AllGather: rank r starts with shard r
 * and ends with all n.  ReduceScatter: every rank starts with n shards; rank r
 * ends with the sum over ranks of shard r.  AllReduce: every rank ends with
 * the sum of all n buffers of S bytes.  AllToAll: rank a sends its shard b
 * to rank b.
 *
 * LATENCY BOUND.  For every ordered pair (a, b), the output of b depends on
 * the input of a in all four collectives, so a chain of transfers must lead
 * from a to b; each costs at least its alpha (the smallest any protocol
 * gives the hop, cost_alpha_floor: a bound on LL schedules too) and a relay
 * starts forwarding
 * only after receiving (store and forward), so the collective takes at least
 * the smallest alpha sum of a path a -> ... -> b.  latency_us = the largest
 * over pairs (the alpha-diameter of the rank graph), by Dijkstra per source;
 * a source whose every direct route is no longer than its cheapest first hop
 * plus the target's cheapest last hop needs no search (all-to-all graphs).
 *
 * BANDWIDTH BOUNDS: CUTS.  For a set U of ranks, let in(U) be the bytes that
 * transfers from outside U into U carry.  Information argument (valid for
 * any schedule, reductions and any coding included): a schedule is fixed in
 * advance (which transfers, how many bytes), it must be right for every
 * input, so take the inputs uniformly random (i32); then the final contents
 * of U are a function of U's inputs and of the bytes that entered U, so
 * in(U) >= the entropy of what U must learn that is independent of its own
 * inputs, with u = |U|:
 *   AllGather:     the n - u outside shards:            (n - u) / n * S
 *   ReduceScatter: for each of U's u output shards, the outside ranks'
 *                  contribution (their partial sum, uniform and independent
 *                  of U's data):                         u / n * S
 *   AllReduce:     the sum of the outside buffers:        S
 *   AllToAll:      u * (n - u) distinct shards:          u * (n - u) / n * S
 * and out(U) >= the same quantity for the complement of U.  The cut's
 * capacity cap(U) is the most bytes per unit time the transfers entering U
 * can carry together: the maximum of sum x_e over arcs e = (a not in U, b in
 * U) subject to, for every resource, sum x_e / B_e <= lanes.  So T >=
 * need / cap.  That LP splits exactly by resource type, because every arc
 * uses resources of one kind only: links are independent (mult * B each); a
 * switch is a bipartite graph of out ports to in ports with one bandwidth,
 * so it carries B_s times a maximum bipartite matching (the fractional
 * matching polytope of a bipartite graph is integral); NICs are an
 * assignment problem between egress and ingress NICs with weights
 * min(B_x, B_y), solved by a matching when the weights are equal and by a
 * GLPK LP otherwise (beyond NIC_LP_MAX_COLS pairs the sum of each side's
 * best weights is used instead: it over-estimates the capacity, so the
 * bound stays valid, and bandwidth_why says so).  Single ranks use the
 * closed form: sum of link bandwidths into r, one port bandwidth per switch
 * reaching r, the best NIC pair rate.
 *
 * FAMILIES OF CUTS.  For disjoint sets U_1..U_k, each transfer enters at
 * most one of them, so sum_i in(U_i) <= T * cap(arcs entering any U_i) and
 * T >= sum_i need_in(U_i) / cap(...) (likewise for leaving).  With every
 * rank a set this is "all the bytes every rank must receive over all the
 * capacity", which is tighter than any single rank when NICs are shared
 * (DGX-2: 31/32 S per GPU over 125 GB/s of switch port plus half a 12.5 GB/s
 * NIC each).
 *
 * Sets used: every rank; every node (several nodes); every chip (chip
 * devices with several clusters per chip); one half of the ranks (by node on
 * 4+ nodes, by rank index on one node: the bisection of a torus numbered row
 * by row); and the families of all ranks, all nodes and all chips; each in
 * both directions.  bound_exact.c adds every vertex set at once (a max flow
 * per sink, ForestColl's condition) for AllGather, ReduceScatter and
 * AllReduce; the larger bound is kept.
 *
 * ALLTOALL: MULTI-COMMODITY FLOW.  The demands are unicast, so a schedule
 * that forwards chunks (does not combine distinct chunks; AllToAll has no
 * reduction, and the executor's only combining operation is addition) is a
 * flow: minimise T such that every rank sends S/n to every other over arcs
 * of the rank graph with, per resource, sum over arcs of flow / B <= lanes *
 * T.  Commodities are aggregated by source: a single-source flow meeting
 * given demands at many sinks decomposes into paths to those sinks, so the
 * aggregated LP has the same optimum as the per-pair one with n times fewer
 * columns.  Switches whose member pairs all route through them become one
 * hub node (a -> hub uses a's out port, hub -> b uses b's in port), and
 * NICs become egress and ingress hubs (rank -> egress hub -> ingress hub ->
 * rank, the middle arc holding both NICs), which is exact and keeps the LP
 * small.  Solved with GLPK (primal simplex, or the interior-point method
 * above MCF_IPM_COLS columns, which is several times faster on these flow
 * LPs) when it has at most MCF_MAX_COLS columns, and the optimum is taken
 * LP_SHAVE (1e-6) lower to cover the solver's tolerance; otherwise the cut
 * bounds stand and bandwidth_why says so.  The MCF bound dominates the
 * AllToAll cut bounds (it is computed on the same resources) but rests on
 * the forwarding assumption above; the cut bounds do not.
 *
 * ALLREDUCE.  Patarasuk and Yuan's 2(n-1)/n * S per rank is NOT used: its
 * proof assumes data are moved and combined only as partial sums of the
 * same elements, while in this model a schedule may add arbitrary chunks
 * (any offsets) and, in i32 arithmetic, even negate by repeated doubling, so
 * network-coding schemes are not excluded and we cannot prove it.  We use
 * the information bound above (S into and out of every cut), which is at
 * least max(ReduceScatter-style, AllGather-style) cut bounds, and say so.
 * Beside it, bound_compute gives the partial-sums floor (bound.h:
 * ps_us_per_byte): the ReduceScatter's bandwidth bound plus the
 * AllGather's, which on N nodes joined by NICs is 2(N-1)/N * S through a
 * node's NICs, the figure every partial-sums schedule (NCCL's, TACCL's,
 * msccl-tools', ours) is measured against; reports print it as a floor
 * beside the bound, not as a bound.
 *
 * The result is deterministic: cuts are visited in a fixed order and a later
 * one replaces the best only if larger by more than a relative 1e-9. */
#include "bound_int.h"

#include "../lp/lp.h"
#include "../model/cost.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/heap.h"
#include "../util/mem.h"

#define MCF_MAX_COLS 30000      /* AllToAll flow LP size limit (columns) */
#define MCF_IPM_COLS 10000      /* above this, interior point instead of simplex */
#define LP_SHAVE 1e-6           /* relative solver tolerance taken off LP optima */
#define NIC_LP_MAX_COLS 20000   /* NIC assignment LP size limit (pairs) */
#define BYTES_PER_US 1e3        /* 1 GB/s = 1e3 bytes per microsecond */
#define TIE 1e-9                /* relative margin for replacing the best cut */
#define SW_EXACT_MAX 2048       /* larger switches: every member pair assumed routed
                                   through them (a relaxation: never raises a bound) */

static const char *tname(const topo *t)
{
    return t->name && t->name[0] ? t->name : "(unnamed)";
}

/* ------------------------------------------------------------ resource view */

/* Capacity of a cut split by kind of resource, GB/s. */
typedef struct {
    double links, ports, nics;
    int approx;                 /* NIC part over-estimated (LP too large) */
} cap_parts;

static double cap_total(const cap_parts *c)
{
    return c->links + c->ports + c->nics;
}

typedef struct {
    const topo *t;
    int n;
    char *link_ok;              /* [nlinks] the link is its pair's route */
    unsigned char **sw_pair;    /* [nswitches][m*m] member i -> j routes via s;
                                   NULL beyond SW_EXACT_MAX members (all assumed) */
    char *sw_hub;               /* [nswitches] all ordered member pairs route via s */
    int nres;
    cap_parts *in1, *out1;      /* [n] single-rank cut capacities */
} view;

static void view_free(view *v)
{
    if (!v->t)
        return;
    for (int s = 0; s < v->t->nswitches; s++)
        free(v->sw_pair[s]);
    free(v->sw_pair);
    free(v->sw_hub);
    free(v->link_ok);
    free(v->in1);
    free(v->out1);
}

static int nic_node(const topo *t, int x)
{
    return t->nics[x].node;
}

/* Rate of an inter-node NIC transfer from NIC x to NIC y. */
static double nic_rate(const topo *t, int x, int y)
{
    double a = t->nics[x].bw_gbps, b = t->nics[y].bw_gbps;
    return a < b ? a : b;
}

static double nic_alpha(const topo *t, int x, int y)
{
    double a = t->nics[x].alpha_us, b = t->nics[y].alpha_us;
    return cost_alpha_floor(t, a > b ? a : b, 1);
}

static int nic_usable(const topo *t, int x)
{
    return t->nics[x].nranks > 0 && t->nics[x].bw_gbps > 0;
}

static void view_build(view *v, const topo *t)
{
    int n = t->nranks;
    v->t = t;
    v->n = n;
    v->link_ok = xcalloc((size_t)t->nlinks, 1);
    for (int l = 0; l < t->nlinks; l++) {
        const topo_link *L = &t->links[l];
        topo_route r = topo_route_of(t, L->src, L->dst);
        v->link_ok[l] = r.kind == ROUTE_LINK && r.link == l && L->bw_gbps > 0;
    }
    v->sw_pair = xcalloc((size_t)t->nswitches, sizeof *v->sw_pair);
    v->sw_hub = xcalloc((size_t)t->nswitches, 1);
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *S = &t->switches[s];
        int m = S->nranks;
        if (m > SW_EXACT_MAX) {
            v->sw_hub[s] = 1;
            continue;
        }
        v->sw_pair[s] = xcalloc((size_t)m * (size_t)m, 1);
        int all = S->bw_gbps > 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                if (i == j)
                    continue;
                topo_route r = topo_route_of(t, S->ranks[i], S->ranks[j]);
                int via = r.kind == ROUTE_SWITCH && r.sw == s && S->bw_gbps > 0;
                v->sw_pair[s][(size_t)i * m + j] = (unsigned char)via;
                all = all && via;
            }
        v->sw_hub[s] = (char)all;
    }
    v->nres = cost_nres(t);

    /* Single-rank cuts in closed form. */
    v->in1 = xcalloc((size_t)n, sizeof *v->in1);
    v->out1 = xcalloc((size_t)n, sizeof *v->out1);
    for (int l = 0; l < t->nlinks; l++)
        if (v->link_ok[l]) {
            const topo_link *L = &t->links[l];
            double c = L->mult * L->bw_gbps;
            v->in1[L->dst].links += c;
            v->out1[L->src].links += c;
        }
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *S = &t->switches[s];
        int m = S->nranks;
        for (int j = 0; j < m; j++) {
            int any_in = !v->sw_pair[s], any_out = !v->sw_pair[s];
            for (int i = 0; i < m && v->sw_pair[s]; i++) {
                any_in |= v->sw_pair[s][(size_t)i * m + j];
                any_out |= v->sw_pair[s][(size_t)j * m + i];
            }
            if (any_in)
                v->in1[S->ranks[j]].ports += S->bw_gbps;
            if (any_out)
                v->out1[S->ranks[j]].ports += S->bw_gbps;
        }
    }
    if (t->nic_of_rank && t->nnics > 0) {
        double *best = xcalloc((size_t)t->nnics, sizeof *best);
        for (int y = 0; y < t->nnics; y++) {
            if (!nic_usable(t, y))
                continue;
            for (int x = 0; x < t->nnics; x++)
                if (x != y && nic_usable(t, x) && nic_node(t, x) != nic_node(t, y) &&
                    nic_rate(t, x, y) > best[y])
                    best[y] = nic_rate(t, x, y);
        }
        for (int r = 0; r < n; r++) {
            int y = t->nic_of_rank[r];
            if (y >= 0 && y < t->nnics) {
                v->in1[r].nics = best[y];
                v->out1[r].nics = best[y];
            }
        }
        free(best);
    }
}

/* ------------------------------------------------------------ matching */

/* Maximum matching of a bipartite graph: left 0..nl-1, right 0..nr-1,
 * adjacency of left u = adj[start[u] .. start[u+1]).  Greedy start, then one
 * breadth-first augmenting search per unmatched left vertex. */
static int max_matching(int nl, int nr, const int *start, const int *adj)
{
    int *ml = xmalloc((size_t)nl * sizeof *ml), *mr = xmalloc((size_t)nr * sizeof *mr);
    int *par = xmalloc((size_t)nr * sizeof *par), *seen = xcalloc((size_t)nr, sizeof *seen);
    int *queue = xmalloc((size_t)nl * sizeof *queue);
    for (int i = 0; i < nl; i++)
        ml[i] = -1;
    for (int j = 0; j < nr; j++)
        mr[j] = -1;
    int size = 0;
    for (int u = 0; u < nl; u++)
        for (int k = start[u]; k < start[u + 1]; k++)
            if (mr[adj[k]] < 0) {
                ml[u] = adj[k];
                mr[adj[k]] = u;
                size++;
                break;
            }
    int stamp = 0;
    for (int u = 0; u < nl; u++) {
        if (ml[u] >= 0 || start[u] == start[u + 1])
            continue;
        stamp++;
        int qh = 0, qt = 0, found = -1;
        queue[qt++] = u;
        while (qh < qt && found < 0) {
            int x = queue[qh++];
            for (int k = start[x]; k < start[x + 1] && found < 0; k++) {
                int r = adj[k];
                if (seen[r] == stamp)
                    continue;
                seen[r] = stamp;
                par[r] = x;
                if (mr[r] < 0)
                    found = r;
                else
                    queue[qt++] = mr[r];
            }
        }
        if (found < 0)
            continue;
        for (int r = found; r >= 0;) {
            int x = par[r], next = ml[x];
            ml[x] = r;
            mr[r] = x;
            r = next;
        }
        size++;
    }
    free(ml);
    free(mr);
    free(par);
    free(seen);
    free(queue);
    return size;
}

/* ------------------------------------------------------------ cut capacity */

/* A transfer a -> b counts for the cut: entering mode, b is in a set and a
 * is not in b's set; leaving mode, a is in a set and b is not in a's. */
static int counted(const int *g, int leave, int a, int b)
{
    int ga = g[a], gb = g[b];
    return leave ? (ga >= 0 && ga != gb) : (gb >= 0 && ga != gb);
}

/* A switch too large for its pair table: every pair assumed routed through
 * it, and the matching over-estimated by its smaller side (senders: members
 * outside the target set when entering, inside a set when leaving). */
static double big_switch_part(const topo_switch *S, const int *g, int leave)
{
    int senders = 0, receivers = 0;
    for (int i = 0; i < S->nranks; i++) {
        int in_set = g[S->ranks[i]] >= 0;
        senders += leave ? in_set : 1;
        receivers += leave ? 1 : in_set;
    }
    int m = senders < receivers ? senders : receivers;
    return m * S->bw_gbps;
}

static double switch_part(const view *v, int s, const int *g, int leave)
{
    const topo_switch *S = &v->t->switches[s];
    int m = S->nranks;
    if (!v->sw_pair[s])
        return big_switch_part(S, g, leave);
    int *start = xmalloc(((size_t)m + 1) * sizeof *start);
    size_t cap = 64, k = 0;
    int *adj = xmalloc(cap * sizeof *adj);
    for (int i = 0; i < m; i++) {
        start[i] = (int)k;
        for (int j = 0; j < m; j++) {
            if (!v->sw_pair[s][(size_t)i * m + j] || !counted(g, leave, S->ranks[i], S->ranks[j]))
                continue;
            if (k == cap) {
                cap *= 2;
                adj = xrealloc(adj, cap * sizeof *adj);
            }
            adj[k++] = j;
        }
    }
    start[m] = (int)k;
    int size = k ? max_matching(m, m, start, adj) : 0;
    free(start);
    free(adj);
    return size * S->bw_gbps;
}

/* Which set values the ranks of one NIC carry: all of them (-1 included)
 * and the non-negative ones; a count capped at 2 and the first value. */
typedef struct {
    int n_all, v_all, n_pos, v_pos;
} nic_sets;

static void add_value(int *cnt, int *val, int x)
{
    if (*cnt == 0) {
        *cnt = 1;
        *val = x;
    } else if (*cnt == 1 && *val != x) {
        *cnt = 2;
    }
}

typedef struct {
    int x, y;
    double w;
} nic_pair;

/* Maximum total rate of the counted NIC pairs: an assignment problem. */
static double nic_part(const view *v, const int *g, int leave, int *approx)
{
    const topo *t = v->t;
    int nn = t->nnics;
    if (nn == 0 || !t->nic_of_rank)
        return 0;
    nic_sets *ns = xcalloc((size_t)nn, sizeof *ns);
    for (int x = 0; x < nn; x++)
        for (int i = 0; i < t->nics[x].nranks; i++) {
            int r = t->nics[x].ranks[i];
            add_value(&ns[x].n_all, &ns[x].v_all, g[r]);
            if (g[r] >= 0)
                add_value(&ns[x].n_pos, &ns[x].v_pos, g[r]);
        }
    size_t cap = 64, np = 0;
    nic_pair *pr = xmalloc(cap * sizeof *pr);
    for (int x = 0; x < nn; x++) {
        if (!nic_usable(t, x))
            continue;
        for (int y = 0; y < nn; y++) {
            if (y == x || !nic_usable(t, y) || nic_node(t, x) == nic_node(t, y))
                continue;
            /* sender side s, receiver side d of the counted condition */
            const nic_sets *src = &ns[x], *dst = &ns[y];
            int edge;
            if (!leave)
                edge = dst->n_pos > 0 &&
                       !(src->n_all == 1 && dst->n_pos == 1 && src->v_all == dst->v_pos);
            else
                edge = src->n_pos > 0 &&
                       !(dst->n_all == 1 && src->n_pos == 1 && dst->v_all == src->v_pos);
            if (!edge)
                continue;
            if (np == cap) {
                cap *= 2;
                pr = xrealloc(pr, cap * sizeof *pr);
            }
            pr[np].x = x;
            pr[np].y = y;
            pr[np].w = nic_rate(t, x, y);
            np++;
        }
    }
    free(ns);
    double total = 0;
    if (np == 0) {
        free(pr);
        return 0;
    }
    int uniform = 1;
    for (size_t k = 1; k < np; k++)
        if (pr[k].w != pr[0].w)
            uniform = 0;
    if (uniform) {
        /* pairs are listed by x ascending: a CSR over egress NICs */
        int *start = xcalloc((size_t)nn + 1, sizeof *start);
        int *adj = xmalloc(np * sizeof *adj);
        for (size_t k = 0; k < np; k++) {
            start[pr[k].x + 1]++;
            adj[k] = pr[k].y;
        }
        for (int x = 0; x < nn; x++)
            start[x + 1] += start[x];
        total = pr[0].w * max_matching(nn, nn, start, adj);
        free(start);
        free(adj);
        free(pr);
        return total;
    }
    int solved = 0;
    if (np <= NIC_LP_MAX_COLS) {
        lp *p = lp_new("nic-assignment");
        lp_set_minimize(p, 0);
        for (size_t k = 0; k < np; k++)
            lp_add_col(p, NULL, 0, 1, pr[k].w, 0);
        int *cols = xmalloc(np * sizeof *cols);
        double *ones = xmalloc(np * sizeof *ones);
        for (int side = 0; side < 2; side++)
            for (int z = 0; z < nn; z++) {
                int c = 0;
                for (size_t k = 0; k < np; k++)
                    if ((side ? pr[k].y : pr[k].x) == z) {
                        cols[c] = (int)k;
                        ones[c++] = 1;
                    }
                if (c > 1)
                    lp_add_row(p, NULL, -INFINITY, 1, c, cols, ones);
            }
        free(cols);
        free(ones);
        lp_result r;
        if (lp_solve(p, NULL, &r, NULL) == TC_OK && r.status == LP_OPTIMAL) {
            total = r.objective * (1 + LP_SHAVE);   /* err towards more capacity */
            solved = 1;
        }
        lp_free(p);
    }
    if (!solved) {
        /* Each egress NIC delivers at most its best rate, each ingress one
         * likewise: the smaller sum is >= the true capacity. */
        double *bx = xcalloc((size_t)nn, sizeof *bx), *by = xcalloc((size_t)nn, sizeof *by);
        for (size_t k = 0; k < np; k++) {
            if (pr[k].w > bx[pr[k].x])
                bx[pr[k].x] = pr[k].w;
            if (pr[k].w > by[pr[k].y])
                by[pr[k].y] = pr[k].w;
        }
        double sx = 0, sy = 0;
        for (int z = 0; z < nn; z++) {
            sx += bx[z];
            sy += by[z];
        }
        total = sx < sy ? sx : sy;
        *approx = 1;
        free(bx);
        free(by);
    }
    free(pr);
    return total;
}

static void cut_capacity(const view *v, const int *g, int leave, cap_parts *c)
{
    const topo *t = v->t;
    memset(c, 0, sizeof *c);
    for (int l = 0; l < t->nlinks; l++)
        if (v->link_ok[l] && counted(g, leave, t->links[l].src, t->links[l].dst))
            c->links += t->links[l].mult * t->links[l].bw_gbps;
    for (int s = 0; s < t->nswitches; s++)
        c->ports += switch_part(v, s, g, leave);
    c->nics = nic_part(v, g, leave, &c->approx);
}

/* ------------------------------------------------------------ needs and words */

/* Fraction of S that must enter a set of u of n ranks. */
static double need_in(coll_kind k, int n, int u)
{
    if (u <= 0 || u >= n)
        return 0;
    switch (k) {
    case COLL_ALLGATHER: return (double)(n - u) / n;
    case COLL_REDUCESCATTER: return (double)u / n;
    case COLL_ALLREDUCE: return 1.0;
    case COLL_ALLTOALL: return (double)u * (n - u) / n;
    default: return 0;
    }
}

static double need_out(coll_kind k, int n, int u)
{
    return need_in(k, n, n - u);
}

/* "what must cross" in words, for u ranks of n, entering or leaving. */
static void need_words(char *b, size_t sz, coll_kind k, int n, int u, int leave)
{
    int o = n - u;
    switch (k) {
    case COLL_ALLGATHER:
        if (!leave)
            snprintf(b, sz, "import %d of %d ranks' data", o, n);
        else
            snprintf(b, sz, "export its %d of %d ranks' data", u, n);
        break;
    case COLL_REDUCESCATTER:
        if (!leave)
            snprintf(b, sz, "import the other ranks' share of its %d of %d output shards", u, n);
        else
            snprintf(b, sz, "export its share of the %d of %d shards owned elsewhere", o, n);
        break;
    case COLL_ALLREDUCE:
        if (!leave)
            snprintf(b, sz, "import a whole buffer (the other ranks' sum)");
        else
            snprintf(b, sz, "export a whole buffer (its ranks' sum)");
        break;
    case COLL_ALLTOALL:
        snprintf(b, sz, "%s %d x %d blocks of 1/%d buffer", leave ? "export" : "import",
                 leave ? u : o, leave ? o : u, n);
        break;
    default:
        snprintf(b, sz, "move data");
    }
}

static void cap_words(char *b, size_t sz, const cap_parts *c)
{
    const char *nm[3] = {"links", "switch ports", "NICs"};
    double val[3] = {c->links, c->ports, c->nics};
    int cnt = 0;
    for (int i = 0; i < 3; i++)
        cnt += val[i] > 0;
    size_t n = (size_t)snprintf(b, sz, "%.4g GB/s", cap_total(c));
    if (cnt == 1) {
        for (int i = 0; i < 3; i++)
            if (val[i] > 0 && n < sz)
                n += (size_t)snprintf(b + n, sz - n, " (%s)", nm[i]);
    } else if (cnt > 1 && n < sz) {
        n += (size_t)snprintf(b + n, sz - n, " (");
        int first = 1;
        for (int i = 0; i < 3; i++)
            if (val[i] > 0 && n < sz) {
                n += (size_t)snprintf(b + n, sz - n, "%s%s %.4g", first ? "" : " + ", nm[i],
                                      val[i]);
                first = 0;
            }
        if (n < sz)
            n += (size_t)snprintf(b + n, sz - n, ")");
    }
    if (c->approx && n < sz)
        snprintf(b + n, sz - n, ", NIC share over-estimated: its LP was too large");
}

/* ------------------------------------------------------------ best cut */

typedef struct {
    double upb;                 /* us per byte */
    char why[256];
} best_cut;

/* Try "who must <need> over <cap>": frac of S over cap GB/s. */
static void consider(best_cut *b, const char *who, int family, coll_kind k, int n, int u,
                     int leave, double frac, const cap_parts *c)
{
    double cap = cap_total(c);
    if (!(frac > 0) || !(cap > 0))
        return;
    double upb = frac / (cap * BYTES_PER_US);
    if (!(upb > b->upb * (1 + TIE)))
        return;
    b->upb = upb;
    char need[128], capw[128];
    need_words(need, sizeof need, k, n, u, leave);
    cap_words(capw, sizeof capw, c);
    if (family)
        snprintf(b->why, sizeof b->why, "%.24s must %.100s, sharing %.100s in all", who, need,
                 capw);
    else
        snprintf(b->why, sizeof b->why, "%.24s must %.100s over %.110s", who, need, capw);
}

static void single_set(best_cut *b, const view *v, coll_kind k, const int *g, int u,
                       const char *who)
{
    cap_parts c;
    int n = v->n;
    cut_capacity(v, g, 0, &c);
    consider(b, who, 0, k, n, u, 0, need_in(k, n, u), &c);
    cut_capacity(v, g, 1, &c);
    consider(b, who, 0, k, n, u, 1, need_out(k, n, u), &c);
}

/* A partition into k_sets sets of u ranks each (g[r] = set of r). */
static void family(best_cut *b, const view *v, coll_kind k, const int *g, int k_sets, int u,
                   const char *who)
{
    cap_parts c;
    int n = v->n;
    cut_capacity(v, g, 0, &c);
    consider(b, who, 1, k, n, u, 0, k_sets * need_in(k, n, u), &c);
    cut_capacity(v, g, 1, &c);
    consider(b, who, 1, k, n, u, 1, k_sets * need_out(k, n, u), &c);
}

static void cut_bounds(best_cut *b, const view *v, coll_kind k)
{
    const topo *t = v->t;
    int n = v->n;
    char who[64];
    /* every single rank (closed form) */
    for (int r = 0; r < n; r++) {
        snprintf(who, sizeof who, "rank %d", r);
        consider(b, who, 0, k, n, 1, 0, need_in(k, n, 1), &v->in1[r]);
        consider(b, who, 0, k, n, 1, 1, need_out(k, n, 1), &v->out1[r]);
    }
    int *g = xmalloc((size_t)n * sizeof *g);
    /* every node */
    if (t->nnodes > 1)
        for (int d = 0; d < t->nnodes; d++) {
            for (int r = 0; r < n; r++)
                g[r] = topo_node_of(t, r) == d ? 0 : -1;
            snprintf(who, sizeof who, "node %d", d);
            single_set(b, v, k, g, t->ranks_per_node, who);
        }
    /* every chip of a chip device */
    int per_chip = t->kind == TOPO_CHIP ? t->clusters_per_chip : 1;
    int nchips = per_chip > 1 ? n / per_chip : 0;
    if (nchips > 1)
        for (int ch = 0; ch < nchips; ch++) {
            for (int r = 0; r < n; r++)
                g[r] = topo_chip_of(t, r) == ch ? 0 : -1;
            snprintf(who, sizeof who, "chip %d", ch);
            single_set(b, v, k, g, per_chip, who);
        }
    /* one half */
    int half = 0;
    if (t->nnodes >= 4)
        half = (t->nnodes / 2) * t->ranks_per_node;
    else if (t->nnodes == 1 && n >= 4)
        half = n / 2;
    if (half > 0) {
        for (int r = 0; r < n; r++)
            g[r] = r < half ? 0 : -1;
        if (t->nnodes >= 4)
            snprintf(who, sizeof who, "nodes 0-%d", t->nnodes / 2 - 1);
        else
            snprintf(who, sizeof who, "ranks 0-%d", half - 1);
        single_set(b, v, k, g, half, who);
    }
    /* families */
    if (n > 1) {
        for (int r = 0; r < n; r++)
            g[r] = r;
        family(b, v, k, g, n, 1, "each rank");
    }
    if (t->nnodes > 1) {
        for (int r = 0; r < n; r++)
            g[r] = topo_node_of(t, r);
        family(b, v, k, g, t->nnodes, t->ranks_per_node, "each node");
    }
    if (nchips > 1) {
        for (int r = 0; r < n; r++)
            g[r] = topo_chip_of(t, r);
        family(b, v, k, g, nchips, per_chip, "each chip");
    }
    free(g);
}

/* ------------------------------------------------------------ rank graph */

typedef struct {
    int from, to;
    double alpha;
    int nres;
    int res[2];
    double coef;                /* 1 / B: busy time per unit carried, per resource */
} arc;

typedef struct {
    int nnodes;                 /* ranks, then one hub per switch, then 2 per NIC */
    int narcs, cap;
    arc *a;
    int *out_start, *out_arc;   /* CSR by tail */
    int *in_start, *in_arc;     /* CSR by head */
} net;

static void net_add(net *N, int from, int to, double alpha, int nres, int r0, int r1,
                    double coef)
{
    if (N->narcs == N->cap) {
        N->cap = N->cap ? 2 * N->cap : 256;
        N->a = xrealloc(N->a, (size_t)N->cap * sizeof *N->a);
    }
    arc *e = &N->a[N->narcs++];
    e->from = from;
    e->to = to;
    e->alpha = alpha;
    e->nres = nres;
    e->res[0] = r0;
    e->res[1] = r1;
    e->coef = coef;
}

static void csr(int nnodes, int narcs, const arc *a, int by_head, int **start_out,
                int **idx_out)
{
    int *start = xcalloc((size_t)nnodes + 1, sizeof *start);
    int *idx = xmalloc((size_t)narcs * sizeof *idx);
    for (int e = 0; e < narcs; e++)
        start[(by_head ? a[e].to : a[e].from) + 1]++;
    for (int v = 0; v < nnodes; v++)
        start[v + 1] += start[v];
    int *fill = xmalloc((size_t)nnodes * sizeof *fill);
    memcpy(fill, start, (size_t)nnodes * sizeof *fill);
    for (int e = 0; e < narcs; e++)
        idx[fill[by_head ? a[e].to : a[e].from]++] = e;
    free(fill);
    *start_out = start;
    *idx_out = idx;
}

/* The least latency of a hop through switch S: its own alpha, or a
 * multimem operation's when it reduces and multicasts (topo_nvls), which
 * delivers every member's data in one operation.  The bandwidth parts
 * need no such care: an NVLS port moves at most the port's bandwidth
 * (the loader refuses more), and a reduction in the switch still takes
 * S into and out of every cut (the information bound above). */
static double sw_alpha(const topo_switch *S)
{
    return S->nvls.on && S->nvls.alpha_us < S->alpha_us ? S->nvls.alpha_us : S->alpha_us;
}

static int sw_hub_node(const topo *t, int s)
{
    return t->nranks + s;
}

static int nic_eg_node(const topo *t, int x)
{
    return t->nranks + t->nswitches + 2 * x;
}

static int nic_in_node(const topo *t, int x)
{
    return t->nranks + t->nswitches + 2 * x + 1;
}

static void net_build(net *N, const view *v)
{
    const topo *t = v->t;
    memset(N, 0, sizeof *N);
    N->nnodes = t->nranks + t->nswitches + 2 * t->nnics;
    for (int l = 0; l < t->nlinks; l++)
        if (v->link_ok[l]) {
            const topo_link *L = &t->links[l];
            net_add(N, L->src, L->dst, cost_alpha_floor(t, L->alpha_us, 0), 1, l, -1,
                    1.0 / L->bw_gbps);
        }
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *S = &t->switches[s];
        int m = S->nranks;
        double c = 1.0 / S->bw_gbps, sa = cost_alpha_floor(t, sw_alpha(S), 0);
        if (v->sw_hub[s]) {
            for (int i = 0; i < m; i++) {
                net_add(N, S->ranks[i], sw_hub_node(t, s), sa, 1, cost_port_res(t, s, i, 0),
                        -1, c);
                net_add(N, sw_hub_node(t, s), S->ranks[i], 0, 1, cost_port_res(t, s, i, 1), -1,
                        c);
            }
        } else {
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++)
                    if (v->sw_pair[s][(size_t)i * m + j])
                        net_add(N, S->ranks[i], S->ranks[j], sa, 2,
                                cost_port_res(t, s, i, 0), cost_port_res(t, s, j, 1), c);
        }
    }
    if (t->nic_of_rank) {
        for (int r = 0; r < t->nranks; r++) {
            int x = t->nic_of_rank[r];
            if (x < 0 || x >= t->nnics || !nic_usable(t, x))
                continue;
            net_add(N, r, nic_eg_node(t, x), 0, 0, -1, -1, 0);
            net_add(N, nic_in_node(t, x), r, 0, 0, -1, -1, 0);
        }
        for (int x = 0; x < t->nnics; x++)
            for (int y = 0; y < t->nnics; y++)
                if (x != y && nic_usable(t, x) && nic_usable(t, y) &&
                    nic_node(t, x) != nic_node(t, y))
                    net_add(N, nic_eg_node(t, x), nic_in_node(t, y), nic_alpha(t, x, y), 2,
                            cost_nic_res(t, x, 0), cost_nic_res(t, y, 1),
                            1.0 / nic_rate(t, x, y));
    }
    csr(N->nnodes, N->narcs, N->a, 0, &N->out_start, &N->out_arc);
    csr(N->nnodes, N->narcs, N->a, 1, &N->in_start, &N->in_arc);
}

static void net_free(net *N)
{
    free(N->a);
    free(N->out_start);
    free(N->out_arc);
    free(N->in_start);
    free(N->in_arc);
}

/* ------------------------------------------------------------ latency */

typedef struct {
    double d;
    int v;
} heap_item;

static int item_less(const void *ctx, const heap_item *a, const heap_item *b)
{
    (void)ctx;
    return a->d < b->d || (a->d == b->d && a->v < b->v);
}

TC_HEAP_DEFINE(iheap, heap_item, const void *, item_less)

/* Smallest alpha sums from src to every node; hops counts rank-to-rank
 * transfers on the chosen path. */
static void dijkstra(const net *N, int nranks, int src, double *dist, int *hops,
                     heap_item *heap)
{
    for (int v = 0; v < N->nnodes; v++) {
        dist[v] = INFINITY;
        hops[v] = 0;
    }
    int hn = 0;
    dist[src] = 0;
    iheap_push(heap, &hn, (heap_item){0, src}, NULL);
    while (hn > 0) {
        heap_item it = iheap_pop(heap, &hn, NULL);
        if (it.d > dist[it.v])
            continue;
        for (int k = N->out_start[it.v]; k < N->out_start[it.v + 1]; k++) {
            const arc *e = &N->a[N->out_arc[k]];
            double nd = it.d + e->alpha;
            if (nd < dist[e->to]) {
                dist[e->to] = nd;
                hops[e->to] = hops[it.v] + (e->to < nranks ? 1 : 0);
                iheap_push(heap, &hn, (heap_item){nd, e->to}, NULL);
            }
        }
    }
}

static int latency_bound(const view *v, const net *N, bound_model *out, tc_err *err)
{
    const topo *t = v->t;
    int n = v->n;
    /* cheapest first hop out of / last hop into each rank, over its arcs */
    double *mout = xmalloc((size_t)n * sizeof *mout), *min_in = xmalloc((size_t)n * sizeof *min_in);
    for (int r = 0; r < n; r++)
        mout[r] = min_in[r] = INFINITY;
    for (int e = 0; e < N->narcs; e++) {
        const arc *a = &N->a[e];
        if (a->from < n && a->to < n) {
            if (a->alpha < mout[a->from])
                mout[a->from] = a->alpha;
            if (a->alpha < min_in[a->to])
                min_in[a->to] = a->alpha;
        }
    }
    /* switch hubs: a -> hub carries the alpha; NIC hubs: the middle arc */
    for (int s = 0; s < t->nswitches; s++)
        if (v->sw_hub[s]) {
            const topo_switch *S = &t->switches[s];
            double sa = cost_alpha_floor(t, sw_alpha(S), 0);
            for (int i = 0; i < S->nranks; i++) {
                int r = S->ranks[i];
                if (sa < mout[r])
                    mout[r] = sa;
                if (sa < min_in[r])
                    min_in[r] = sa;
            }
        }
    if (t->nic_of_rank)
        for (int r = 0; r < n; r++) {
            int x = t->nic_of_rank[r];
            if (x < 0 || x >= t->nnics || !nic_usable(t, x))
                continue;
            for (int y = 0; y < t->nnics; y++)
                if (y != x && nic_usable(t, y) && nic_node(t, x) != nic_node(t, y)) {
                    double a = nic_alpha(t, x, y);
                    if (a < mout[r])
                        mout[r] = a;
                    if (a < min_in[r])
                        min_in[r] = a;
                }
        }
    double *dist = xmalloc((size_t)N->nnodes * sizeof *dist);
    int *hops = xmalloc((size_t)N->nnodes * sizeof *hops);
    heap_item *heap = xmalloc(((size_t)N->narcs + 1) * sizeof *heap);
    double worst = 0;
    int wa = -1, wb = -1, wh = 0, rc = TC_OK;
    for (int s = 0; s < n && rc == TC_OK; s++) {
        /* Direct routes suffice when none is dearer than any 2-hop path. */
        int direct = 1;
        for (int b = 0; b < n && direct; b++) {
            if (b == s)
                continue;
            topo_route r = topo_route_of(t, s, b);
            double ra = cost_alpha_floor(t, r.alpha_us, r.kind == ROUTE_NIC);
            if (r.kind == ROUTE_NONE || !(ra <= mout[s] + min_in[b]))
                direct = 0;
            else {
                dist[b] = ra;
                hops[b] = 1;
            }
        }
        if (!direct)
            dijkstra(N, n, s, dist, hops, heap);
        for (int b = 0; b < n; b++) {
            if (b == s)
                continue;
            if (!isfinite(dist[b])) {
                rc = tc_err_set(err, TC_INPUT,
                                "topology %s: rank %d cannot reach rank %d (no path of links, "
                                "switches or NICs), so no collective over all %d ranks exists",
                                tname(t), s, b, n);
                break;
            }
            if (wa < 0 || dist[b] > worst * (1 + TIE)) {
                worst = dist[b];
                wa = s;
                wb = b;
                wh = hops[b];
            }
        }
    }
    free(mout);
    free(min_in);
    free(dist);
    free(hops);
    free(heap);
    if (rc != TC_OK)
        return rc;
    out->latency_us = worst;
    snprintf(out->latency_why, sizeof out->latency_why,
             "rank %d -> rank %d: smallest alpha sum over any path %.4g us (%d hop%s)", wa, wb,
             worst, wh, wh == 1 ? "" : "s");
    return TC_OK;
}

/* ------------------------------------------------------------ AllToAll flow LP */

/* Returns 1 and the bound in us/byte, 0 if skipped (size) or unsolved. */
static int alltoall_flow(const view *v, const net *N, double *upb, char *why, size_t wsz,
                         long long *ncols_out)
{
    int n = v->n;
    long long ncols = 1;
    for (int s = 0; s < n; s++)
        ncols += N->narcs - (N->in_start[s + 1] - N->in_start[s]);
    *ncols_out = ncols;
    if (ncols > MCF_MAX_COLS)
        return 0;
    lp *p = lp_new("alltoall-mcf");
    int T = lp_add_col(p, "T", 0, INFINITY, 1, 0);
    /* col[s * narcs + e] = flow of source s on arc e, or -1 */
    int *col = xmalloc((size_t)n * (size_t)N->narcs * sizeof *col);
    for (int s = 0; s < n; s++)
        for (int e = 0; e < N->narcs; e++)
            col[(size_t)s * N->narcs + e] =
                N->a[e].to == s ? -1 : lp_add_col(p, NULL, 0, INFINITY, 0, 0);
    int maxdeg = 0;
    for (int u = 0; u < N->nnodes; u++) {
        int d = (N->in_start[u + 1] - N->in_start[u]) + (N->out_start[u + 1] - N->out_start[u]);
        if (d > maxdeg)
            maxdeg = d;
    }
    int *ci = xmalloc(((size_t)maxdeg + 1) * sizeof *ci);
    double *cv = xmalloc(((size_t)maxdeg + 1) * sizeof *cv);
    /* conservation: inflow - outflow = 1 at every other rank, 0 at hubs */
    for (int s = 0; s < n; s++)
        for (int u = 0; u < N->nnodes; u++) {
            if (u == s)
                continue;
            int c = 0;
            for (int k = N->in_start[u]; k < N->in_start[u + 1]; k++) {
                ci[c] = col[(size_t)s * N->narcs + N->in_arc[k]];
                cv[c++] = 1;
            }
            for (int k = N->out_start[u]; k < N->out_start[u + 1]; k++) {
                int j = col[(size_t)s * N->narcs + N->out_arc[k]];
                if (j < 0)
                    continue;
                ci[c] = j;
                cv[c++] = -1;
            }
            double d = u < n ? 1 : 0;
            lp_add_row(p, NULL, d, d, c, ci, cv);
        }
    free(ci);
    free(cv);
    /* resources: sum of flow / B <= lanes * T */
    int *ruse = xcalloc((size_t)v->nres + 1, sizeof *ruse);
    for (int e = 0; e < N->narcs; e++)
        for (int q = 0; q < N->a[e].nres; q++)
            ruse[N->a[e].res[q] + 1]++;
    for (int r = 0; r < v->nres; r++)
        ruse[r + 1] += ruse[r];
    int *rarc = xmalloc(((size_t)ruse[v->nres] + 1) * sizeof *rarc);
    int *fill = xmalloc(((size_t)v->nres + 1) * sizeof *fill);
    memcpy(fill, ruse, ((size_t)v->nres + 1) * sizeof *fill);
    for (int e = 0; e < N->narcs; e++)
        for (int q = 0; q < N->a[e].nres; q++)
            rarc[fill[N->a[e].res[q]]++] = e;
    free(fill);
    size_t maxr = 1;
    for (int r = 0; r < v->nres; r++)
        if ((size_t)(ruse[r + 1] - ruse[r]) * (size_t)n + 1 > maxr)
            maxr = (size_t)(ruse[r + 1] - ruse[r]) * (size_t)n + 1;
    ci = xmalloc(maxr * sizeof *ci);
    cv = xmalloc(maxr * sizeof *cv);
    int *rrow = xmalloc(((size_t)v->nres + 1) * sizeof *rrow);
    for (int r = 0; r < v->nres; r++) {
        rrow[r] = -1;
        if (ruse[r + 1] == ruse[r])
            continue;
        int c = 0;
        for (int k = ruse[r]; k < ruse[r + 1]; k++) {
            int e = rarc[k];
            for (int s = 0; s < n; s++) {
                int j = col[(size_t)s * N->narcs + e];
                if (j < 0)
                    continue;
                ci[c] = j;
                cv[c++] = N->a[e].coef;
            }
        }
        ci[c] = T;
        cv[c++] = -cost_res_lanes(v->t, r);
        rrow[r] = lp_add_row(p, NULL, -INFINITY, 0, c, ci, cv);
    }
    free(ci);
    free(cv);
    lp_result res;
    lp_opts o;
    lp_opts_init(&o);
    if (ncols > MCF_IPM_COLS)
        o.method = LP_INTERIOR;
    int ok = lp_solve(p, &o, &res, NULL) == TC_OK && res.status == LP_OPTIMAL;
    if (ok) {
        double Tv = lp_value(p, T);
        /* shave the solver's tolerance off, so the bound stays below the optimum */
        *upb = Tv * (1 - LP_SHAVE) / n / BYTES_PER_US;
        /* name the first resource the optimum saturates */
        char rn[96] = "";
        for (int r = 0; r < v->nres && !rn[0]; r++)
            if (rrow[r] >= 0) {
                double use = lp_row_value(p, rrow[r]) + cost_res_lanes(v->t, r) * Tv;
                if (use >= cost_res_lanes(v->t, r) * Tv * (1 - 1e-6) && Tv > 0)
                    cost_res_name(v->t, r, rn, sizeof rn);
            }
        snprintf(why, wsz,
                 "every rank sends 1/%d of its buffer to each other; best fractional routing "
                 "(multi-commodity flow LP, %lld columns) saturates %s",
                 n, ncols, rn[0] ? rn : "a resource");
    }
    free(rrow);
    free(ruse);
    free(rarc);
    free(col);
    lp_free(p);
    return ok;
}

/* ------------------------------------------------------------ entry points */

static int compute(const topo *t, coll_kind k, bound_model *out, int latency, tc_err *err)
{
    if (!out)
        return tc_err_set(err, TC_INPUT, "bound_compute: no output");
    memset(out, 0, sizeof *out);
    if (!t || t->nranks < 1)
        return tc_err_set(err, TC_INPUT, "bound_compute: empty topology");
    if ((int)k < 0 || k >= COLL_COUNT)
        return tc_err_set(err, TC_INPUT, "bound_compute: unknown collective %d", (int)k);
    int n = t->nranks;
    if (n == 1) {
        snprintf(out->latency_why, sizeof out->latency_why, "one rank: nothing to move");
        snprintf(out->bandwidth_why, sizeof out->bandwidth_why, "one rank: nothing to move");
        return TC_OK;
    }
    view v;
    memset(&v, 0, sizeof v);
    view_build(&v, t);
    net N;
    net_build(&N, &v);
    int rc = latency ? latency_bound(&v, &N, out, err) : TC_OK;
    if (rc == TC_OK) {
        best_cut b = {0, ""};
        cut_bounds(&b, &v, k);
        if (k == COLL_ALLTOALL) {
            double upb = 0;
            char why[256];
            long long ncols = 0;
            int ok = alltoall_flow(&v, &N, &upb, why, sizeof why, &ncols);
            if (ok && upb > b.upb * (1 + TIE)) {
                b.upb = upb;
                memcpy(b.why, why, sizeof b.why);
            } else if (!ok) {
                size_t len = strlen(b.why);
                if (ncols > MCF_MAX_COLS)
                    snprintf(b.why + len, sizeof b.why - len,
                             "; flow LP skipped (%lld columns > %d)", ncols, MCF_MAX_COLS);
                else
                    snprintf(b.why + len, sizeof b.why - len, "; flow LP unsolved");
            }
        }
        double xupb = 0;
        char xwhy[256];
        if (bound_exact_cut(t, k, &xupb, xwhy, sizeof xwhy) && xupb > b.upb * (1 + TIE)) {
            b.upb = xupb;
            memcpy(b.why, xwhy, sizeof b.why);
        }
        if (k == COLL_ALLREDUCE) {
            size_t len = strlen(b.why);
            snprintf(b.why + len, sizeof b.why - len, " (information bound)");
        }
        int nvls = 0;
        for (int s = 0; s < t->nswitches; s++)
            nvls |= t->switches[s].nvls.on;
        if (nvls) {     /* sw_alpha: why the same cuts hold through NVLS */
            size_t len = strlen(b.why);
            snprintf(b.why + len, sizeof b.why - len, "; holds with in-switch reduction "
                     "and multicast (NVLS)");
        }
        out->us_per_byte = b.upb;
        memcpy(out->bandwidth_why, b.why, sizeof out->bandwidth_why);
    }
    net_free(&N);
    view_free(&v);
    if (rc != TC_OK)
        memset(out, 0, sizeof *out);
    return rc;
}

/* The least base latency of a call any protocol pays on t. */
static double call_floor(const topo *t)
{
    double lo = INFINITY;
    for (int p = 0; p < COST_NPROTO; p++)
        lo = fmin(lo, cost_call_us(t, (cost_proto)p));
    return isfinite(lo) ? lo : 0;
}

void bound_add_passes(const topo *t, coll_kind k, bound_model *out)
{
    if (!t || !out || t->nranks < 2 || t->kind != TOPO_GPU)
        return;
    topo *c = topo_clone(t);
    int changed = 0;
    for (int i = 0; c && i < c->nlinks; i++) {
        double g = cost_tile_gbps(t, c->links[i].alpha_us, c->links[i].bw_gbps, 0);
        changed |= g < c->links[i].bw_gbps;
        c->links[i].bw_gbps = g;
    }
    for (int i = 0; c && i < c->nswitches; i++) {
        double g = cost_tile_gbps(t, c->switches[i].alpha_us, c->switches[i].bw_gbps, 0);
        changed |= g < c->switches[i].bw_gbps;
        c->switches[i].bw_gbps = g;
    }
    for (int i = 0; c && i < c->nnics; i++) {
        double g = cost_tile_gbps(t, c->nics[i].alpha_us, c->nics[i].bw_gbps, 1);
        changed |= g < c->nics[i].bw_gbps;
        c->nics[i].bw_gbps = g;
    }
    bound_model b;
    tc_err e;
    if (c && changed && compute(c, k, &b, 0, &e) == TC_OK && b.us_per_byte > 0) {
        out->passes_us_per_byte = b.us_per_byte;
        snprintf(out->passes_why, sizeof out->passes_why, "%.190s, each resource at what an "
                 "operation of one tile gets of it", b.bandwidth_why);
    }
    topo_free(c);
}

int bound_compute(const topo *t, coll_kind k, bound_model *out, tc_err *err)
{
    int rc = compute(t, k, out, 1, err);
    if (rc == TC_OK && t->nranks > 1)
        out->call_us = call_floor(t);
    if (rc != TC_OK || k != COLL_ALLREDUCE || t->nranks < 2)
        return rc;
    bound_model rs, ag;
    if ((rc = compute(t, COLL_REDUCESCATTER, &rs, 1, err)) != TC_OK ||
        (rc = compute(t, COLL_ALLGATHER, &ag, 1, err)) != TC_OK) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->ps_us_per_byte = rs.us_per_byte + ag.us_per_byte;
    snprintf(out->ps_why, sizeof out->ps_why, "ReduceScatter's %.4g us/MB (%.90s) plus "
             "AllGather's %.4g us/MB", rs.us_per_byte * 1e6, rs.bandwidth_why,
             ag.us_per_byte * 1e6);
    return TC_OK;
}

double bound_floor_us(const bound_model *b, double size_bytes)
{
    if (!b || b->ps_us_per_byte <= 0)
        return 0;
    double bw = size_bytes * b->ps_us_per_byte;
    return (bw > b->latency_us ? bw : b->latency_us) + b->call_us;
}

double bound_passes_us(const bound_model *b, double size_bytes)
{
    if (!b || !(b->passes_us_per_byte > 0))
        return 0;
    double bw = size_bytes * b->passes_us_per_byte;
    return (bw > b->latency_us ? bw : b->latency_us) + b->call_us;
}

double bound_time_us(const bound_model *b, double size_bytes)
{
    if (!b)
        return 0;
    double bw = size_bytes * b->us_per_byte;
    return (bw > b->latency_us ? bw : b->latency_us) + b->call_us;
}
