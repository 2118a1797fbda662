/* bound_exact.c — the bandwidth bound over every cut, not a few families.
 *
 * Why: bound.c's cuts are single ranks, nodes, chips and halves.  On a
 * fabric whose tightest cut is elsewhere (MI250: two GCDs of one package
 * joined by four xGMI links, each with one link to other packages) those
 * miss it, and every "ratio to the bound" then flatters a schedule.
 * ForestColl (Zhao et al., arXiv 2402.06787, §4) shows the AllGather
 * optimum is the worst cut over all vertex sets S that hold some ranks and
 * leave one out:  T >= |S ∩ ranks| * shard / B+(S)  (B+(S): the capacity
 * leaving S, switches and NICs as vertices), and that it is reached by
 * spanning-tree packing, switches need not multicast (edge splitting).
 * The worst cut is found without enumerating sets: T = shard / x* where x*
 * is the largest rate at which every rank can send x to one sink v at once,
 * minimised over the sinks (a max-flow per sink: x*|ranks| <= mincut(s, v)
 * with an arc of capacity x from a super-source to every rank).  Each
 * sink's rate is a small LP solved with GLPK (lp.h).  ReduceScatter is the
 * same on the reversed graph; AllReduce needs the whole buffer across every
 * cut (bound.c's information bound), so its rate is the global minimum cut
 * between ranks: the max flow from rank 0 to every other rank and back.
 *
 * The graph is a relaxation of the executor's model (bound.c's top
 * comment), so the bound stays valid: a link is an arc of mult x B; every
 * switch a hub vertex with an arc of its port bandwidth to and from each
 * member it routes for (the executor's switches route only their members'
 * pairs; a hub lets any member reach any other, more capacity, never less);
 * NICs an egress and an ingress vertex with an arc of the NIC's bandwidth
 * to and from one fabric vertex (a NIC pair's rate min(Bx, By) is at most
 * either).  More capacity can only lower a cut bound, so each figure here
 * is at most the true optimum of our model, and bound.c keeps the larger
 * of this and its own cuts.  The LP optimum is raised by LP_SHAVE before
 * use so the solver's tolerance never lifts the bound above the truth. */
#include "bound_int.h"

#include "../lp/lp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../util/tcassert.h"

#define EXACT_MAX_WORK 400000.0 /* sinks x (arcs + vertices): 32 ranks of MI250 ~ 1e4 */
#define EXACT_SHAVE 1e-6        /* relative solver tolerance added to LP optima */
#define BYTES_PER_US_GB 1e3     /* 1 GB/s = 1e3 bytes per microsecond */

typedef struct {
    int from, to;
    double cap;                 /* GB/s, INFINITY for a NIC's own attachment */
} xarc;

typedef struct {
    int nv, narcs, cap;
    xarc *a;
} xgraph;

static void xg_add(xgraph *g, int from, int to, double cap)
{
    if (!(cap > 0))
        return;
    if (g->narcs == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->a = xrealloc(g->a, (size_t)g->cap * sizeof *g->a);
    }
    g->a[g->narcs++] = (xarc){from, to, cap};
}

/* The capacity graph: ranks 0..n-1, a hub per switch, then per NIC an
 * egress and an ingress vertex, then the fabric vertex. */
static void xg_build(xgraph *g, const topo *t)
{
    int n = t->nranks, hub0 = n, nic0 = n + t->nswitches, fabric = nic0 + 2 * t->nnics;
    memset(g, 0, sizeof *g);
    g->nv = fabric + 1;
    for (int l = 0; l < t->nlinks; l++) {
        const topo_link *L = &t->links[l];
        topo_route r = topo_route_of(t, L->src, L->dst);
        if (r.kind == ROUTE_LINK && r.link == l)
            xg_add(g, L->src, L->dst, L->mult * L->bw_gbps);
    }
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *S = &t->switches[s];
        int m = S->nranks, big = m > 2048;
        for (int i = 0; i < m; i++) {
            int out = big, in = big;
            for (int j = 0; j < m && !big && !(out && in); j++) {
                if (i == j)
                    continue;
                topo_route a = topo_route_of(t, S->ranks[i], S->ranks[j]);
                topo_route b = topo_route_of(t, S->ranks[j], S->ranks[i]);
                out |= a.kind == ROUTE_SWITCH && a.sw == s;
                in |= b.kind == ROUTE_SWITCH && b.sw == s;
            }
            if (out)
                xg_add(g, S->ranks[i], hub0 + s, S->bw_gbps);
            if (in)
                xg_add(g, hub0 + s, S->ranks[i], S->bw_gbps);
        }
    }
    if (t->nic_of_rank && t->nnodes > 1) {
        for (int r = 0; r < n; r++) {
            int x = t->nic_of_rank[r];
            if (x < 0 || x >= t->nnics || !(t->nics[x].bw_gbps > 0))
                continue;
            xg_add(g, r, nic0 + 2 * x, INFINITY);
            xg_add(g, nic0 + 2 * x + 1, r, INFINITY);
        }
        for (int x = 0; x < t->nnics; x++)
            if (t->nics[x].nranks > 0) {
                xg_add(g, nic0 + 2 * x, fabric, t->nics[x].bw_gbps);
                xg_add(g, fabric, nic0 + 2 * x + 1, t->nics[x].bw_gbps);
            }
    }
}

/* The largest x with a flow f (0 <= f <= cap) whose net outflow at every
 * vertex w is supply[w] * x, arcs reversed when `rev`; -1 if unsolved.
 * The supplies sum to 0: sources positive, the sink negative. */
static double max_rate(const xgraph *g, const double *supply, int rev)
{
    lp *p = lp_new("exact-cut");
    lp_set_minimize(p, 0);
    int x = lp_add_col(p, "x", 0, INFINITY, 1, 0);
    int *deg = xcalloc((size_t)g->nv, sizeof *deg);
    for (int e = 0; e < g->narcs; e++) {
        deg[g->a[e].from]++;
        deg[g->a[e].to]++;
    }
    int **ci = xmalloc((size_t)g->nv * sizeof *ci);
    double **cv = xmalloc((size_t)g->nv * sizeof *cv);
    int *fill = xcalloc((size_t)g->nv, sizeof *fill);
    for (int w = 0; w < g->nv; w++) {
        ci[w] = xmalloc(((size_t)deg[w] + 1) * sizeof **ci);
        cv[w] = xmalloc(((size_t)deg[w] + 1) * sizeof **cv);
    }
    for (int e = 0; e < g->narcs; e++) {
        int c = lp_add_col(p, NULL, 0, g->a[e].cap, 0, 0);
        int from = rev ? g->a[e].to : g->a[e].from, to = rev ? g->a[e].from : g->a[e].to;
        ci[from][fill[from]] = c;
        cv[from][fill[from]++] = 1;
        ci[to][fill[to]] = c;
        cv[to][fill[to]++] = -1;
    }
    for (int w = 0; w < g->nv; w++) {
        if (fill[w] == 0 && supply[w] == 0)
            continue;
        ci[w][fill[w]] = x;
        cv[w][fill[w]++] = -supply[w];
        lp_add_row(p, NULL, 0, 0, fill[w], ci[w], cv[w]);
    }
    lp_opts o;
    lp_opts_init(&o);
    lp_result r;
    tc_err e;
    double rate = -1;
    if (lp_solve(p, &o, &r, &e) == TC_OK && r.status == LP_OPTIMAL)
        rate = lp_value(p, x) * (1 + EXACT_SHAVE);
    for (int w = 0; w < g->nv; w++) {
        free(ci[w]);
        free(cv[w]);
    }
    free(ci);
    free(cv);
    free(fill);
    free(deg);
    lp_free(p);
    return rate;
}

int bound_exact_cut(const topo *t, coll_kind k, double *upb, char *why, size_t wsz)
{
    int n = t->nranks;
    *upb = 0;
    if (why && wsz)
        why[0] = 0;
    if (n < 2 || k == COLL_ALLTOALL)
        return 0;
    xgraph g;
    xg_build(&g, t);
    double work = (double)n * (g.narcs + g.nv) * (k == COLL_ALLREDUCE ? 2 : 1);
    if (work > EXACT_MAX_WORK) {
        if (why && wsz)
            snprintf(why, wsz, "exact cut skipped (%d ranks x %d arcs over this tool's limit)",
                     n, g.narcs);
        free(g.a);
        return 0;
    }
    double *supply = xcalloc((size_t)g.nv, sizeof *supply);
    double best = INFINITY;
    int at = -1, back = 0, ok = 1;
    for (int v = 0; v < n && ok; v++) {
        if (k == COLL_ALLREDUCE) {
            if (v == 0)
                continue;
            for (int dir = 0; dir < 2 && ok; dir++) {
                memset(supply, 0, (size_t)g.nv * sizeof *supply);
                supply[dir ? v : 0] = 1;
                supply[dir ? 0 : v] = -1;
                double rate = max_rate(&g, supply, 0);
                ok = rate >= 0;
                if (ok && rate < best) {
                    best = rate;
                    at = v;
                    back = dir;
                }
            }
            continue;
        }
        memset(supply, 0, (size_t)g.nv * sizeof *supply);
        for (int r = 0; r < n; r++)
            supply[r] = 1;
        supply[v] -= n;
        double rate = max_rate(&g, supply, k == COLL_REDUCESCATTER);
        ok = rate >= 0;
        if (ok && rate < best) {
            best = rate;
            at = v;
        }
    }
    free(supply);
    free(g.a);
    if (!ok || !(best > 0) || !isfinite(best)) {
        if (why && wsz)
            snprintf(why, wsz, "exact cut unsolved");
        return 0;
    }
    TC_ASSERT(at >= 0);
    if (k == COLL_ALLREDUCE) {
        /* the whole buffer across the cut of rate `best` */
        *upb = 1.0 / (best * BYTES_PER_US_GB);
        if (why && wsz)
            snprintf(why, wsz, "every cut must carry the whole buffer; the narrowest, between "
                     "rank 0 and rank %d (%s), carries %.6g GB/s (exact minimum cut)",
                     at, back ? "to rank 0" : "from rank 0", best);
    } else {
        *upb = 1.0 / (n * best * BYTES_PER_US_GB);
        if (why && wsz)
            snprintf(why, wsz, "the narrowest cut over all vertex sets (max flow %s rank %d: "
                     "%.6g GB/s per shard)", k == COLL_REDUCESCATTER ? "out of" : "into", at,
                     best);
    }
    return 1;
}
