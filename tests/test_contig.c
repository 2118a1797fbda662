/* test_contig.c — stage 3 (contiguity + exact scheduling): hand-computed
 * makespans for grouping and for keeping sends apart, the no-group
 * recompute reproducing a stage-2 list schedule, time limits, resource
 * exclusivity checked pair by pair by an independent checker, determinism,
 * reductions, alpha as a delay (TE-CCL's model), and input errors.
 *
 * The "stage 2" here is a small greedy list scheduler written in this file
 * (earliest start first, FCFS resources like the executor), so the inputs
 * are consistent ordered schedules without depending on other modules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/run.h"
#include "model/topo.h"
#include "sched/lower.h"
#include "sched/algo.h"
#include "synth/contig.h"
#include "synth/order.h"
#include "model/cost.h"

#define TOL 1e-6
#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= TOL * (1 + fabs((double)(b))))

/* ------------------------------------------------------------ topologies */

/* Two nodes of one rank, joined by NICs with alpha 10 us, 1 GB/s:
 * 1000 bytes cost 10 + 1 us. */
static const char *NIC2 =
    "{\"name\": \"nic2\", \"nodes\": 2, \"ranks_per_node\": 1,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"nics\": [{\"ranks\": [0], \"alpha_us\": 10, \"bandwidth_gbps\": 1,"
    "   \"source\": \"assumed: test\"}]}";

/* NIC2 with alpha as a delay: a transfer holds the NIC for its bytes alone
 * (1000 B: 1 us) and lands 10 us later. */
static const char *NIC2_DELAY =
    "{\"name\": \"nic2-delay\", \"nodes\": 2, \"ranks_per_node\": 1, \"alpha_mode\": \"delay\","
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"nics\": [{\"ranks\": [0], \"alpha_us\": 10, \"bandwidth_gbps\": 1,"
    "   \"source\": \"assumed: test\"}]}";

/* Two nodes of two ranks: NIC alpha 1 us, 1 GB/s (1000 B: 2 us); inside a
 * node a link 0-1 with alpha 0 at 0.1 GB/s (1000 B: 10 us).  Global ranks:
 * node 0 = {0, 1}, node 1 = {2, 3}. */
static const char *RELAY =
    "{\"name\": \"relay\", \"nodes\": 2, \"ranks_per_node\": 2,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 1, \"source\": \"assumed: test\"},"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0, \"bandwidth_gbps\": 0.1,"
    "   \"source\": \"assumed: test\"}],"
    " \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 1, \"bandwidth_gbps\": 1,"
    "   \"source\": \"assumed: test\"}]}";

/* As RELAY with NIC alpha 3 us (1000 B: 4 us), reduce 1 GB/s (1000 B: 1 us). */
static const char *REDUCE =
    "{\"name\": \"reduce\", \"nodes\": 2, \"ranks_per_node\": 2,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 1, \"source\": \"assumed: test\"},"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0, \"bandwidth_gbps\": 0.1,"
    "   \"source\": \"assumed: test\"}],"
    " \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 3, \"bandwidth_gbps\": 1,"
    "   \"source\": \"assumed: test\"}]}";

/* Two nodes of four ranks: a chain of single-lane links 0-1-2-3, a switch
 * over all four (used where there is no link), one NIC per node. */
static const char *MIXED =
    "{\"name\": \"mixed\", \"nodes\": 2, \"ranks_per_node\": 4,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"links\": [{\"pairs\": [[0, 1], [1, 2], [2, 3]], \"alpha_us\": 0.5,"
    "   \"bandwidth_gbps\": 10, \"source\": \"assumed: test\"}],"
    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 0.3, \"bandwidth_gbps\": 20,"
    "   \"source\": \"assumed: test\"}],"
    " \"nics\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 2, \"bandwidth_gbps\": 5,"
    "   \"source\": \"assumed: test\"}]}";

/* Four ranks on one switch: 1000 B cost 1 + 1 us. */
static const char *SWITCH4 =
    "{\"name\": \"switch4\", \"nodes\": 1, \"ranks_per_node\": 4,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 1, \"bandwidth_gbps\": 1,"
    "   \"source\": \"assumed: test\"}]}";

/* One node of two ranks joined by a link of multiplicity 2. */
static const char *LANES =
    "{\"name\": \"lanes\", \"nodes\": 1, \"ranks_per_node\": 2,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 1,"
    "   \"multiplicity\": 2, \"source\": \"assumed: test\"}]}";

static topo *parse(const char *json)
{
    tc_err e;
    topo *t = topo_parse(json, "test", &e);
    if (!t)
        fail_msg("topology: %s", e.msg);
    return t;
}

/* A bundled topology without its runtime latency: the list schedules
 * below time a hop as held until it lands (test_runtime_latency has it). */
static topo *load(const char *name)
{
    const char *r = getenv("TACCL_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/topologies/%s.json", r && *r ? r : ".", name);
    tc_err e;
    topo *t = topo_load(path, &e);
    if (!t)
        fail_msg("cannot load %s: %s", path, e.msg);
    t->rt_latency = TOPO_RTLAT_NONE;
    return t;
}

static contig_opts quiet_opts(void)
{
    contig_opts o;
    contig_opts_default(&o);
    o.quiet = 1;
    return o;
}

/* ------------------------------------------------------------ a stage-2 stand-in */

typedef struct {
    int origin, index, src, dst;
} hop;

/* Resource state shaped like the executor's: link lanes, switch ports,
 * NIC directions, each with the time it becomes free. */
typedef struct {
    const topo *t;
    int maxm;
    double *link, *port, *nic;
} rstate;

static void rs_init(rstate *s, const topo *t)
{
    s->t = t;
    s->maxm = 1;
    for (int l = 0; l < t->nlinks; l++)
        if (t->links[l].mult > s->maxm)
            s->maxm = t->links[l].mult;
    s->link = calloc((size_t)t->nlinks * s->maxm + 1, sizeof(double));
    s->port = calloc((size_t)t->nswitches * t->nranks * 2 + 1, sizeof(double));
    s->nic = calloc((size_t)t->nnics * 2 + 1, sizeof(double));
}

static void rs_free(rstate *s)
{
    free(s->link);
    free(s->port);
    free(s->nic);
}

/* Earliest start at or after `ready`; *lane gets the link lane. */
static double rs_est(const rstate *s, int a, int b, double ready, int *lane)
{
    topo_route r = topo_route_of(s->t, a, b);
    double t = ready;
    *lane = 0;
    if (r.kind == ROUTE_LINK) {
        const double *f = &s->link[r.link * s->maxm];
        for (int k = 1; k < s->t->links[r.link].mult; k++)
            if (f[k] < f[*lane])
                *lane = k;
        t = fmax(t, f[*lane]);
    } else if (r.kind == ROUTE_SWITCH) {
        int n = s->t->nranks;
        t = fmax(t, s->port[(r.sw * n + a) * 2]);
        t = fmax(t, s->port[(r.sw * n + b) * 2 + 1]);
    } else if (r.kind == ROUTE_NIC) {
        t = fmax(t, s->nic[2 * r.nic_src]);
        t = fmax(t, s->nic[2 * r.nic_dst + 1]);
    } else {
        fail_msg("no route %d -> %d", a, b);
    }
    return t;
}

static void rs_take(rstate *s, int a, int b, int lane, double end)
{
    topo_route r = topo_route_of(s->t, a, b);
    int n = s->t->nranks;
    if (r.kind == ROUTE_LINK) {
        s->link[r.link * s->maxm + lane] = end;
    } else if (r.kind == ROUTE_SWITCH) {
        s->port[(r.sw * n + a) * 2] = end;
        s->port[(r.sw * n + b) * 2 + 1] = end;
    } else {
        s->nic[2 * r.nic_src] = end;
        s->nic[2 * r.nic_dst + 1] = end;
    }
}

/* Greedy list schedule of AllGather-style hops (a chunk is (origin, index),
 * present at its origin from time 0): repeatedly start the hop that can
 * start earliest (ties: list order).  Sends are added in start order. */
static algo *list_schedule(const topo *t, coll_kind k, int cpr, const hop *h, int nh,
                           double cb)
{
    int n = t->nranks, nchunks = n * cpr;
    algo *a = algo_new(k, n, cpr);
    double *avail = malloc(sizeof(double) * (size_t)nchunks * n);
    for (int x = 0; x < nchunks * n; x++)
        avail[x] = INFINITY;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < cpr; c++)
            avail[(r * cpr + c) * n + r] = 0;
    char *done = calloc((size_t)nh + 1, 1);
    rstate s;
    rs_init(&s, t);
    for (int step = 0; step < nh; step++) {
        int best = -1, blane = 0;
        double bt = INFINITY;
        for (int x = 0; x < nh; x++) {
            if (done[x])
                continue;
            double rd = avail[(h[x].origin * cpr + h[x].index) * n + h[x].src];
            if (!isfinite(rd))
                continue;
            int lane;
            double st = rs_est(&s, h[x].src, h[x].dst, rd, &lane);
            if (st < bt) {
                bt = st;
                best = x;
                blane = lane;
            }
        }
        assert_true(best >= 0);
        topo_route r = topo_route_of(t, h[best].src, h[best].dst);
        double end = bt + cost_hop_us(&r, cb);
        rs_take(&s, h[best].src, h[best].dst, blane, end);
        double *av = &avail[(h[best].origin * cpr + h[best].index) * n + h[best].dst];
        if (end < *av)
            *av = end;
        algo_add_send(a, h[best].origin, h[best].index, h[best].src, h[best].dst, bt, end);
        done[best] = 1;
    }
    double mk = 0;
    for (int i = 0; i < a->nsends; i++)
        mk = fmax(mk, a->sends[i].t_arrive);
    a->predicted_us = mk;
    rs_free(&s);
    free(done);
    free(avail);
    return a;
}

/* AllGather on a multi-node topology: each chunk spreads over its node along
 * a BFS tree of direct links from its origin, crosses from its node's first
 * rank to every other node's first rank, and spreads there along a BFS tree
 * from that rank. */
static int bfs_hops(const topo *t, int root, hop *out, int origin, int index)
{
    int n = t->nranks, node = topo_node_of(t, root), m = 0;
    int *seen = calloc((size_t)n, sizeof *seen), *q = malloc(sizeof(int) * (size_t)n);
    int h = 0, tl = 0;
    q[tl++] = root;
    seen[root] = 1;
    while (h < tl) {
        int u = q[h++];
        for (int l = 0; l < t->nlinks; l++) {
            const topo_link *k = &t->links[l];
            if (k->src != u || seen[k->dst] || topo_node_of(t, k->dst) != node)
                continue;
            seen[k->dst] = 1;
            q[tl++] = k->dst;
            out[m++] = (hop){origin, index, u, k->dst};
        }
    }
    free(seen);
    free(q);
    return m;
}

static algo *hier_allgather(const topo *t, int cpr, double cb)
{
    int n = t->nranks, rpn = t->ranks_per_node;
    hop *h = malloc(sizeof(hop) * (size_t)n * cpr * (2 * n + 2));
    int nh = 0;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < cpr; c++) {
            int node = topo_node_of(t, r), lead = node * rpn;
            nh += bfs_hops(t, r, h + nh, r, c);
            for (int o = 1; o < t->nnodes; o++) {
                int other = ((node + o) % t->nnodes) * rpn;
                h[nh++] = (hop){r, c, lead, other};
                nh += bfs_hops(t, other, h + nh, r, c);
            }
        }
    algo *a = list_schedule(t, COLL_ALLGATHER, cpr, h, nh, cb);
    free(h);
    return a;
}

/* MIXED: every chunk goes straight to every rank of its node (link or
 * switch), to its counterpart rank in the other node (NIC), and from there
 * straight to every rank of that node. */
static algo *mixed_allgather(const topo *t, int cpr, double cb)
{
    int n = t->nranks, rpn = t->ranks_per_node;
    hop *h = malloc(sizeof(hop) * (size_t)n * cpr * 2 * rpn);
    int nh = 0;
    for (int c = 0; c < cpr; c++)
        for (int r = 0; r < n; r++) {
            int node = r / rpn, peer = (r + rpn) % n;
            for (int d = 0; d < rpn; d++)
                if (node * rpn + d != r)
                    h[nh++] = (hop){r, c, r, node * rpn + d};
            h[nh++] = (hop){r, c, r, peer};
            for (int d = 0; d < rpn; d++)
                if ((peer / rpn) * rpn + d != peer)
                    h[nh++] = (hop){r, c, peer, (peer / rpn) * rpn + d};
        }
    algo *a = list_schedule(t, COLL_ALLGATHER, cpr, h, nh, cb);
    free(h);
    return a;
}

/* ------------------------------------------------------------ independent checker */

typedef struct {
    int src, dst, k, first;
    double t0, t1;
} xfer;

/* Resources of a transfer as (kind, a, b) triples; returns how many. */
static int xfer_res(const topo *t, const xfer *x, long long key[2], int *mult)
{
    topo_route r = topo_route_of(t, x->src, x->dst);
    *mult = 1;
    if (r.kind == ROUTE_LINK) {
        key[0] = ((long long)1 << 40) + r.link;
        *mult = t->links[r.link].mult;
        return 1;
    }
    if (r.kind == ROUTE_SWITCH) {
        key[0] = ((long long)2 << 40) + ((long long)r.sw << 20) + 2 * x->src;
        key[1] = ((long long)2 << 40) + ((long long)r.sw << 20) + 2 * x->dst + 1;
        return 2;
    }
    assert_int_equal(r.kind, ROUTE_NIC);
    key[0] = ((long long)3 << 40) + 2 * r.nic_src;
    key[1] = ((long long)3 << 40) + 2 * r.nic_dst + 1;
    return 2;
}

/* Everything a user of the output relies on: groups share times and pay one
 * alpha, transfers never exceed a resource's capacity (checked over all
 * pairs), chunks leave only after they arrived, predicted_us is the latest
 * arrival.  Returns the number of transfers. */
static int check_schedule(const algo *a, const topo *t, double cb)
{
    int n = a->nsends, nx = 0;
    xfer *x = calloc((size_t)n + 1, sizeof *x);
    int *of = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const algo_send *s = &a->sends[i];
        of[i] = -1;
        if (s->group >= 0)
            for (int j = 0; j < i; j++)
                if (a->sends[j].group == s->group) {
                    assert_int_equal(a->sends[j].src, s->src);     /* unique per pair */
                    assert_int_equal(a->sends[j].dst, s->dst);
                    of[i] = of[j];
                    break;
                }
        if (of[i] < 0) {
            x[nx] = (xfer){s->src, s->dst, 0, i, s->t_send, s->t_arrive};
            of[i] = nx++;
        }
        xfer *g = &x[of[i]];
        g->k++;
        NEAR(s->t_send, g->t0);
        NEAR(s->t_arrive, g->t1);
    }
    double mk = 0;
    for (int y = 0; y < nx; y++) {
        topo_route r = topo_route_of(t, x[y].src, x[y].dst);
        assert_true(x[y].k <= 71);
        assert_true(x[y].t0 >= -TOL);
        NEAR(x[y].t1 - x[y].t0, cost_hop_us(&r, x[y].k * cb));
        if (a->sends[x[y].first].group >= 0)
            assert_true(x[y].k >= 2);
        mk = fmax(mk, x[y].t1);
    }
    NEAR(a->predicted_us, mk);
    /* resources, every pair of transfers */
    for (int u = 0; u < nx; u++)
        for (int v = u + 1; v < nx; v++) {
            long long ku[2], kv[2];
            int mu, mv;
            int nu = xfer_res(t, &x[u], ku, &mu), nv = xfer_res(t, &x[v], kv, &mv);
            for (int p = 0; p < nu; p++)
                for (int q = 0; q < nv; q++) {
                    if (ku[p] != kv[q] || mu > 1)
                        continue;
                    int apart = x[u].t1 <= x[v].t0 + TOL || x[v].t1 <= x[u].t0 + TOL;
                    if (!apart)
                        fail_msg("transfers %d->%d [%g, %g] and %d->%d [%g, %g] overlap",
                                 x[u].src, x[u].dst, x[u].t0, x[u].t1, x[v].src, x[v].dst,
                                 x[v].t0, x[v].t1);
                }
        }
    /* multi-lane links: at no transfer's start are more than mult running */
    for (int u = 0; u < nx; u++) {
        long long ku[2];
        int mu;
        xfer_res(t, &x[u], ku, &mu);
        if (mu <= 1)
            continue;
        int running = 0;
        for (int v = 0; v < nx; v++) {
            long long kv[2];
            int mv;
            xfer_res(t, &x[v], kv, &mv);
            if (kv[0] == ku[0] && x[v].t0 <= x[u].t0 + TOL && x[v].t1 > x[u].t0 + TOL)
                running++;
        }
        assert_true(running <= mu);
    }
    /* chunks leave only after they arrived */
    if (!coll_is_reduction(a->coll))
        for (int i = 0; i < n; i++) {
            const algo_send *s = &a->sends[i];
            if (s->src == s->origin)
                continue;
            int ok = 0;
            for (int j = 0; j < n && !ok; j++) {
                const algo_send *d = &a->sends[j];
                ok = d->origin == s->origin && d->index == s->index && d->dst == s->src &&
                     d->t_arrive <= s->t_send + TOL;
            }
            if (!ok)
                fail_msg("send %d leaves rank %d before chunk %d:%d is there", i, s->src,
                         s->origin, s->index);
        }
    free(x);
    free(of);
    return nx;
}

static double max_arrival(const algo *a)
{
    double m = 0;
    for (int i = 0; i < a->nsends; i++)
        m = fmax(m, a->sends[i].t_arrive);
    return m;
}

/* ------------------------------------------------------------ tests */

/* 4 chunks each way over a NIC with alpha 10, beta 1, one by one: 44 us.
 * One group of 4: 10 + 4 = 14 us.  Nothing waits on the early chunks, so the
 * MILP must group all four (and prove it). */
static void test_nic_groups_all(void **state)
{
    (void)state;
    topo *t = parse(NIC2);
    hop h[8];
    for (int c = 0; c < 4; c++) {
        h[c] = (hop){0, c, 0, 1};
        h[4 + c] = (hop){1, c, 1, 0};
    }
    algo *in = list_schedule(t, COLL_ALLGATHER, 4, h, 8, 1000);
    NEAR(max_arrival(in), 44);
    contig_opts o = quiet_opts();
    contig_stats st;
    algo *out;
    tc_err e;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 14);
    NEAR(st.result_us, 14);
    NEAR(st.objective, 14);             /* the MILP's own costs are the exact ones */
    NEAR(st.best_bound, 14);
    NEAR(st.milp_exact_us, 14);
    assert_int_equal(st.incumbent_used, 1);
    NEAR(st.input_us, 44);
    NEAR(st.ungrouped_us, 44);
    assert_int_equal(st.status, LP_OPTIMAL);
    assert_int_equal(st.candidates, 6);
    assert_int_equal(st.candidate_pairs, 2);
    assert_int_equal(st.ngroups, 2);
    assert_int_equal(st.grouped_sends, 8);
    assert_true(st.ncols > 0 && st.nrows > 0 && st.nnz > 0);
    for (int i = 0; i < out->nsends; i++) {
        const algo_send *s = &out->sends[i];
        assert_true(s->group >= 0);
        NEAR(s->t_send, 0);
        NEAR(s->t_arrive, 14);
        /* order and fields kept */
        assert_int_equal(s->origin, in->sends[i].origin);
        assert_int_equal(s->index, in->sends[i].index);
        assert_int_equal(s->src, in->sends[i].src);
        assert_int_equal(s->dst, in->sends[i].dst);
    }
    assert_int_equal(check_schedule(out, t, 1000), 2);
    algo_free(out);

    /* groups of at most 2: 12 + 12 = 24 us */
    o.max_group = 2;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 24);
    assert_int_equal(st.ngroups, 4);
    assert_int_equal(check_schedule(out, t, 1000), 4);
    algo_free(out);

    /* the solver alone, without the local search's help, finds it too */
    o.max_group = 71;
    o.local_search = 0;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 14);
    NEAR(st.incumbent_us, 44);
    assert_int_equal(st.status, LP_OPTIMAL);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

/* Relay chain: 2 chunks cross the NIC 0 -> 2 (alpha 1, 1 us each) and are
 * forwarded over the slow link 2 -> 3 (10 us each).  One by one: NIC 0-2,
 * 2-4; link 2-12, 12-22 -> 22 us.  Grouped: NIC 0-3; link 3-13, 13-23 ->
 * 23 us.  Splitting wins: the MILP must keep them apart. */
static void test_relay_keeps_separate(void **state)
{
    (void)state;
    topo *t = parse(RELAY);
    hop h[4] = {{0, 0, 0, 2}, {0, 1, 0, 2}, {0, 0, 2, 3}, {0, 1, 2, 3}};
    algo *in = list_schedule(t, COLL_ALLGATHER, 2, h, 4, 1000);
    NEAR(max_arrival(in), 22);
    contig_opts o = quiet_opts();
    contig_stats st;
    algo *out;
    tc_err e;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    assert_int_equal(st.candidates, 1);         /* the NIC pair; the link has no alpha */
    assert_int_equal(st.status, LP_OPTIMAL);
    NEAR(st.objective, 22);
    NEAR(st.milp_exact_us, 22);
    NEAR(out->predicted_us, 22);
    assert_int_equal(st.ngroups, 0);
    for (int i = 0; i < out->nsends; i++)
        assert_int_equal(out->sends[i].group, -1);
    check_schedule(out, t, 1000);
    algo_free(out);

    /* the grouped alternative really is worse: 23 us */
    for (int i = 0; i < in->nsends; i++)
        if (in->sends[i].src == 0)
            in->sends[i].group = 5;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->predicted_us, 23);
    check_schedule(out, t, 1000);
    algo_free(out);
    /* contig_solve ignores input groups */
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 22);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

static void assert_same_times(const algo *a, const algo *b)
{
    assert_int_equal(a->nsends, b->nsends);
    for (int i = 0; i < a->nsends; i++) {
        NEAR(a->sends[i].t_send, b->sends[i].t_send);
        NEAR(a->sends[i].t_arrive, b->sends[i].t_arrive);
        assert_int_equal(b->sends[i].group, -1);
    }
}

/* On a consistent stage-2 schedule (a list schedule with the same costs),
 * the no-grouping recompute gives back exactly its times. */
static void test_schedule_reproduces_stage2(void **state)
{
    (void)state;
    tc_err e;
    algo *out;
    topo *nd = load("ndv2-x2");
    for (int cpr = 1; cpr <= 2; cpr++) {
        algo *in = hier_allgather(nd, cpr, 65536);
        assert_int_equal(contig_schedule(in, nd, 65536, &out, &e), TC_OK);
        assert_same_times(in, out);
        NEAR(out->predicted_us, max_arrival(in));
        check_schedule(out, nd, 65536);
        algo_free(out);
        algo_free(in);
    }
    topo_free(nd);

    topo *mx = parse(MIXED);
    algo *in = mixed_allgather(mx, 2, 4000);
    assert_int_equal(contig_schedule(in, mx, 4000, &out, &e), TC_OK);
    assert_same_times(in, out);
    check_schedule(out, mx, 4000);
    algo_free(out);
    algo_free(in);
    topo_free(mx);

    /* a two-lane link: 4 chunks, two at a time (2 us each) */
    topo *ln = parse(LANES);
    hop h[4] = {{0, 0, 0, 1}, {0, 1, 0, 1}, {0, 2, 0, 1}, {0, 3, 0, 1}};
    in = list_schedule(ln, COLL_ALLGATHER, 4, h, 4, 1000);
    NEAR(max_arrival(in), 4);
    assert_int_equal(contig_schedule(in, ln, 1000, &out, &e), TC_OK);
    assert_same_times(in, out);
    check_schedule(out, ln, 1000);
    algo_free(out);
    algo_free(in);
    topo_free(ln);
}

/* Inconsistent or loose stage-2 times: only the order counts, and the
 * recompute tightens them. */
static void test_schedule_uses_order_only(void **state)
{
    (void)state;
    topo *t = parse(NIC2);
    algo *in = algo_new(COLL_ALLGATHER, 2, 2);
    algo_add_send(in, 0, 0, 0, 1, 5, 100);       /* loose times, same order */
    algo_add_send(in, 0, 1, 0, 1, 200, 300);
    algo *out;
    tc_err e;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->sends[0].t_send, 0);
    NEAR(out->sends[0].t_arrive, 11);
    NEAR(out->sends[1].t_send, 11);
    NEAR(out->sends[1].t_arrive, 22);
    NEAR(out->predicted_us, 22);
    algo_free(out);
    /* reversed stage-2 times reverse the order */
    in->sends[0].t_send = 300;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->sends[1].t_send, 0);
    NEAR(out->sends[0].t_send, 11);
    algo_free(out);
    /* an input group is honoured: one alpha */
    in->sends[0].group = in->sends[1].group = 0;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->predicted_us, 12);
    assert_int_equal(out->sends[0].group, 0);
    assert_int_equal(out->sends[1].group, 0);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

/* A hard instance under a very short time limit: still a valid schedule,
 * never worse than the input. */
static void test_time_limit(void **state)
{
    (void)state;
    topo *t = load("ndv2-x2");
    algo *in = hier_allgather(t, 4, 4096);
    contig_opts o = quiet_opts();
    o.time_limit_s = 0.001;
    contig_stats st;
    algo *out;
    tc_err e;
    for (int ls = 0; ls <= 1; ls++) {
        o.local_search = ls;
        assert_int_equal(contig_solve(in, t, 4096, &o, &out, &st, &e), TC_OK);
        assert_true(st.status == LP_FEASIBLE || st.status == LP_OPTIMAL);
        assert_true(out->predicted_us <= st.ungrouped_us * (1 + 1e-9));
        assert_true(out->predicted_us <= max_arrival(in) * (1 + 1e-9));
        assert_true(st.candidates > 0);
        check_schedule(out, t, 4096);
        algo_free(out);
    }
    algo_free(in);
    topo_free(t);
}

/* Every pair may group (alpha_frac 0): links, switch ports and NICs shared
 * by interleaved pairs; no two transfers may overlap on any single-lane
 * resource, whatever the solver chose. */
static void test_resources_respected(void **state)
{
    (void)state;
    topo *t = parse(MIXED);
    algo *in = mixed_allgather(t, 2, 1000);
    contig_opts o = quiet_opts();
    o.alpha_frac = 0;
    contig_stats st;
    algo *out;
    tc_err e;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    assert_true(st.candidates > 0);
    assert_true(out->predicted_us <= st.ungrouped_us * (1 + 1e-9));
    assert_true(st.ungrouped_us <= max_arrival(in) * (1 + 1e-9));
    int nx = check_schedule(out, t, 1000);
    assert_int_equal(nx, st.ntransfers);
    /* the model admits the real schedule (GLPK took it) and what it
     * promises is achievable */
    assert_int_equal(st.incumbent_used, 1);
    assert_true(st.milp_exact_us <= st.objective * (1 + 1e-7));
    algo_free(out);
    algo_free(in);

    /* the same on NDv2 x2 with small chunks, where grouping pays (174
     * binaries: GLPK does not prove this one quickly; 2 s is plenty) */
    topo *nd = load("ndv2-x2");
    in = hier_allgather(nd, 1, 4096);
    o.time_limit_s = 2;
    assert_int_equal(contig_solve(in, nd, 4096, &o, &out, &st, &e), TC_OK);
    assert_true(st.grouped_sends >= 2);
    assert_true(out->predicted_us < st.ungrouped_us);
    assert_int_equal(st.incumbent_used, 1);
    assert_true(st.milp_exact_us <= st.objective * (1 + 1e-7));
    check_schedule(out, nd, 4096);
    algo_free(out);
    algo_free(in);
    topo_free(nd);
    topo_free(t);
}

/* Same input and options, same output, field by field (NDv2 x2, 64 KB
 * chunks: 62 binaries, proved optimal without a time limit in well under a
 * second). */
static void test_deterministic(void **state)
{
    (void)state;
    topo *t = load("ndv2-x2");
    algo *in = hier_allgather(t, 1, 65536);
    contig_opts o = quiet_opts();
    o.time_limit_s = 0;
    algo *a, *b;
    contig_stats sa, sb;
    tc_err e;
    assert_int_equal(contig_solve(in, t, 65536, &o, &a, &sa, &e), TC_OK);
    assert_int_equal(contig_solve(in, t, 65536, &o, &b, &sb, &e), TC_OK);
    assert_int_equal(sa.status, LP_OPTIMAL);
    assert_int_equal(sa.incumbent_used, 1);
    assert_true(sa.milp_exact_us <= sa.objective * (1 + 1e-7));
    assert_true(a->predicted_us < sa.ungrouped_us);
    check_schedule(a, t, 65536);
    assert_int_equal(a->nsends, b->nsends);
    for (int i = 0; i < a->nsends; i++) {
        assert_true(a->sends[i].t_send == b->sends[i].t_send);
        assert_true(a->sends[i].t_arrive == b->sends[i].t_arrive);
        assert_int_equal(a->sends[i].group, b->sends[i].group);
    }
    assert_true(a->predicted_us == b->predicted_us);
    assert_int_equal(sa.ncols, sb.ncols);
    assert_int_equal(sa.nrows, sb.nrows);
    assert_int_equal(sa.nodes, sb.nodes);
    algo_free(a);
    algo_free(b);
    algo_free(in);
    topo_free(t);
}

/* Reductions: a chunk's partial leaves only after every partial it got
 * was reduced (arrival + bytes / reduce bandwidth), and a group of k
 * reducing chunks pays k reduces. */
static void test_reduce(void **state)
{
    (void)state;
    topo *t = parse(REDUCE);
    /* 3 -> 2 over the link: 0-10, reduced by 11; 2 -> 0 over the NIC: 11-15,
     * reduced by 16. */
    algo *in = algo_new(COLL_REDUCESCATTER, 4, 4);
    algo_add_send(in, 3, 0, 3, 2, 0, 10)->reduce = 1;
    algo_add_send(in, 2, 0, 2, 0, 11, 15)->reduce = 1;
    algo *out;
    tc_err e;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->sends[1].t_send, 11);
    NEAR(out->sends[1].t_arrive, 15);
    NEAR(out->predicted_us, 16);
    assert_int_equal(out->sends[0].reduce, 1);
    algo_free(out);
    contig_opts o = quiet_opts();
    contig_stats st;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 16);
    algo_free(out);
    algo_free(in);

    /* two partials 2 -> 0 over the NIC (4 us each): apart 0-4, 4-8, done 9;
     * together 0-5 plus two reduces, done 7 */
    in = algo_new(COLL_REDUCESCATTER, 4, 4);
    algo_add_send(in, 2, 0, 2, 0, 0, 4)->reduce = 1;
    algo_add_send(in, 2, 1, 2, 0, 4, 8)->reduce = 1;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(st.ungrouped_us, 9);
    NEAR(out->predicted_us, 7);
    assert_int_equal(st.ngroups, 1);
    NEAR(out->sends[1].t_arrive, 5);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

static void test_errors(void **state)
{
    (void)state;
    topo *t = load("ndv2-x2");
    algo *out = (algo *)1;
    tc_err e;
    contig_opts o = quiet_opts();
    contig_stats st;

    algo *in = algo_new(COLL_ALLGATHER, 16, 1);
    algo_add_send(in, 0, 0, 0, 7, 0, 1);             /* no NVLink 0-7 in the cube-mesh */
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_INPUT);
    assert_null(out);
    assert_non_null(strstr(e.msg, "no route"));
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_INPUT);
    algo_free(in);

    in = algo_new(COLL_ALLGATHER, 16, 1);
    algo_add_send(in, 0, 0, 0, 1, 0, 1);
    algo_add_send(in, 0, 0, 1, 3, 0.5, 1.5);         /* leaves rank 1 before it is there */
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "not arrived"));
    in->sends[1].t_send = 2;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    algo_free(out);
    assert_int_equal(contig_schedule(in, t, 0, &out, &e), TC_INPUT);
    in->sends[0].t_send = NAN;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_INPUT);
    in->sends[0].t_send = 0;
    o.max_group = 72;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_INPUT);
    o.max_group = 1;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_INPUT);
    algo_free(in);

    /* a group whose second chunk arrives later simply starts later */
    in = algo_new(COLL_ALLGATHER, 16, 1);
    algo_add_send(in, 0, 0, 0, 1, 0, 1);             /* chunk 0:0 to rank 1 */
    algo_add_send(in, 1, 0, 1, 0, 0, 1);             /* chunk 1:0 to rank 0 */
    algo_add_send(in, 1, 0, 0, 1, 2, 3);             /* 1:0 from rank 0: needs the above */
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    algo_free(out);
    in->sends[0].group = in->sends[2].group = 3;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->sends[0].t_send, out->sends[1].t_arrive);
    NEAR(out->sends[2].t_send, out->sends[1].t_arrive);
    assert_int_equal(out->sends[0].group, out->sends[2].group);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

/* A genuine cycle: two groups on opposite NIC directions of a two-node
 * line, each holding a chunk the other one brings. */
static void test_cycle_rejected(void **state)
{
    (void)state;
    topo *t = parse(NIC2);
    algo *in = algo_new(COLL_ALLGATHER, 2, 2);
    algo_add_send(in, 0, 0, 0, 1, 0, 11);            /* 0:0 to rank 1 */
    algo_add_send(in, 1, 0, 1, 0, 0, 11);            /* 1:0 to rank 0 */
    algo_add_send(in, 1, 0, 0, 1, 11, 22);           /* 1:0 back to 1 (needs the above) */
    algo_add_send(in, 0, 0, 1, 0, 11, 22);           /* 0:0 back to 0 (needs the first) */
    algo *out;
    tc_err e;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    algo_free(out);
    /* group 0->1 {0:0, 1:0} and 1->0 {1:0, 0:0}: each group waits for the other */
    in->sends[0].group = in->sends[2].group = 0;
    in->sends[1].group = in->sends[3].group = 0;
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "cycle"));
    algo_free(in);
    topo_free(t);
}

/* An in port shared by two senders is served in the order they ask for it
 * (ties: the lower rank), as the executor serves it; no order the input
 * gives it can be kept, since dependencies only order one rank's steps.
 * Direct AllGather on a switch where the input puts 1 -> 3 before 0 -> 3
 * although both ask at time 0: the fixed-order recompute (contig_schedule)
 * keeps that order and takes 4 slots of 2 us, but the executor sends
 * 0 -> 3 first and needs 5; contig_solve says 5, and the lowered program
 * runs in exactly that. */
static void test_shared_port_served_in_request_order(void **state)
{
    (void)state;
    topo *t = parse(SWITCH4);
    static const int order[4][3] = {{3, 1, 2}, {3, 2, 0}, {0, 1, 3}, {1, 0, 2}};
    static const int slot[4][3] = {{1, 2, 3}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
    algo *in = algo_new(COLL_ALLGATHER, 4, 1);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 3; k++)
            algo_add_send(in, r, 0, r, order[r][k], 2.0 * slot[r][k], 2.0 * slot[r][k] + 2);
    algo *fixed, *out;
    tc_err e;
    assert_int_equal(contig_schedule(in, t, 1000, &fixed, &e), TC_OK);
    NEAR(fixed->predicted_us, 8);
    contig_opts o = quiet_opts();
    contig_stats st;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->sends[0].t_send, 0);      /* 0 -> 3 first */
    NEAR(out->sends[3].t_send, 2);      /* 1 -> 3 after it */
    NEAR(out->predicted_us, 10);
    check_schedule(out, t, 1000);
    lower_opts lo;
    lower_opts_default(&lo);
    lo.size_bytes = 4000;
    prog *p = lower_algo(out, t, &lo, &e);
    if (!p)
        fail_msg("lower: %s", e.msg);
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = 4000;
    run_report rr;
    assert_int_equal(run_schedule(p, t, &ro, &rr, &e), TC_OK);
    assert_true(rr.verified);
    NEAR(run_report_time_us(&rr), out->predicted_us);
    run_report_free(&rr);
    prog_free(p);
    algo_free(out);
    algo_free(fixed);
    algo_free(in);
    topo_free(t);
}

/* With the runtime's latency (ndv2-x2 as bundled, "runtime_latency":
 * "nccl"): a hop holds its link or NIC for alpha + bytes / B and lands the
 * runtime's per-step latency later.  Stage 2's schedule of a routing, then
 * stage 3 with grouping (4 KiB chunks, so joins pay): the MILP admits its
 * own replay as the incumbent, never ends worse than it, and the lowered
 * file runs in exactly the predicted time plus the runtime's base latency
 * of a call. */
static void test_runtime_latency(void **state)
{
    (void)state;
    topo *t = load("ndv2-x2");
    t->rt_latency = TOPO_RTLAT_NCCL;
    topo_route nic = topo_route_of(t, 0, 8);
    assert_true(nic.lat_us == 14.0 && topo_route_of(t, 0, 1).lat_us == 3.4);
    double cb = 4096;
    algo *routing = hier_allgather(t, 1, cb), *in = NULL, *out = NULL;
    tc_err e;
    assert_int_equal(order_schedule(routing, t, cb, NULL, &in, NULL, &e), TC_OK);
    contig_opts o = quiet_opts();
    o.time_limit_s = 2;
    contig_stats st;
    assert_int_equal(contig_solve(in, t, cb, &o, &out, &st, &e), TC_OK);
    assert_true(st.candidates > 0);
    assert_int_equal(st.incumbent_used, 1);
    assert_true(st.milp_exact_us <= st.objective * (1 + 1e-7));
    assert_true(out->predicted_us <= st.ungrouped_us * (1 + 1e-9));
    assert_true(out->predicted_us <= in->predicted_us * (1 + 1e-9));
    lower_opts lo;
    lower_opts_default(&lo);
    lo.size_bytes = (long long)cb * t->nranks;
    prog *p = lower_algo(out, t, &lo, &e);
    if (!p)
        fail_msg("lower: %s", e.msg);
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = lo.size_bytes;
    run_report rr;
    assert_int_equal(run_schedule(p, t, &ro, &rr, &e), TC_OK);
    assert_true(rr.verified);
    NEAR(run_report_time_us(&rr), out->predicted_us + cost_call_us(t, COST_SIMPLE));
    run_report_free(&rr);
    prog_free(p);
    algo_free(out);
    algo_free(in);
    algo_free(routing);
    topo_free(t);
}

static void test_empty(void **state)
{
    (void)state;
    topo *t = parse(NIC2);
    algo *in = algo_new(COLL_ALLGATHER, 2, 1);
    algo *out;
    contig_stats st;
    contig_opts o = quiet_opts();
    tc_err e;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    assert_int_equal(out->nsends, 0);
    NEAR(out->predicted_us, 0);
    assert_int_equal(st.status, LP_UNSOLVED);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

/* Re-timing after the lowering: a relay chain 0 -> 1 -> 2 whose first hop
 * needs local work at rank 1 before the chunk goes on (post) and whose
 * second is gathered there first (pre): the second hop asks for its link
 * only after both, and the chunk is ready at rank 2 only after its own post
 * work.  Work that only puts a chunk in place (place) ends the schedule
 * later but forwards nothing later. */
static void test_replay_pre_post(void **state)
{
    (void)state;
    topo *t = topo_default(3);
    double cb = 4096;
    topo_route r = topo_route_of(t, 0, 1);
    double hop = cost_hop_us(&r, cb);
    algo *in = algo_new(COLL_ALLGATHER, 3, 1);
    algo_send *a = algo_add_send(in, 0, 0, 0, 1, 0, hop);
    a->post_us = 0.5;
    algo_send *b = algo_add_send(in, 0, 0, 1, 2, hop, 2 * hop);
    b->pre_us = 0.25;
    b->post_us = 0.125;
    a->place_us = 3;        /* rank 1's own copy: the end, not the forward */
    algo *out;
    tc_err e;
    assert_int_equal(contig_replay(in, t, cb, &out, &e), TC_OK);
    NEAR(out->sends[0].t_send, 0);
    NEAR(out->sends[1].t_send, hop + 0.5 + 0.25);
    NEAR(out->predicted_us, hop + 0.5 + 3);
    NEAR(out->sends[0].place_us, 3);
    NEAR(out->sends[1].pre_us, 0.25);
    NEAR(out->sends[1].post_us, 0.125);
    algo_free(out);
    /* contig_schedule() times the same way */
    assert_int_equal(contig_schedule(in, t, cb, &out, &e), TC_OK);
    NEAR(out->predicted_us, hop + 0.5 + 3);
    algo_free(out);
    in->sends[0].place_us = 0;
    assert_int_equal(contig_schedule(in, t, cb, &out, &e), TC_OK);
    NEAR(out->predicted_us, 2 * hop + 0.5 + 0.25 + 0.125);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

/* Where alpha is a delay, the next transfer on a lane starts when the one
 * before has sent its bytes, not when it lands: two chunks over NIC2_DELAY
 * start at 0 and 1 us and land at 11 and 12 us, in the fixed-order pass,
 * the executor's replay and the solve alike (grouping them gains nothing
 * there; with alpha held it saves one alpha). */
static void test_alpha_delay(void **state)
{
    (void)state;
    topo *t = parse(NIC2_DELAY);
    assert_true(t->alpha_delay);
    algo *in = algo_new(COLL_ALLGATHER, 2, 2);
    algo_add_send(in, 0, 0, 0, 1, 0, 11);
    algo_add_send(in, 0, 1, 0, 1, 1, 12);
    tc_err e;
    algo *out;
    for (int replay = 0; replay <= 1; replay++) {
        int rc = replay ? contig_replay(in, t, 1000, &out, &e)
                        : contig_schedule(in, t, 1000, &out, &e);
        assert_int_equal(rc, TC_OK);
        NEAR(out->sends[0].t_send, 0);
        NEAR(out->sends[0].t_arrive, 11);
        NEAR(out->sends[1].t_send, 1);
        NEAR(out->sends[1].t_arrive, 12);
        NEAR(out->predicted_us, 12);
        algo_free(out);
    }
    contig_opts o = quiet_opts();
    contig_stats st;
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 12);
    algo_free(out);
    t->alpha_delay = 0;                 /* alpha held: one after the other, or grouped */
    assert_int_equal(contig_schedule(in, t, 1000, &out, &e), TC_OK);
    NEAR(out->predicted_us, 22);
    algo_free(out);
    assert_int_equal(contig_solve(in, t, 1000, &o, &out, &st, &e), TC_OK);
    NEAR(out->predicted_us, 12);
    assert_int_equal(out->sends[0].group, out->sends[1].group);
    algo_free(out);
    algo_free(in);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nic_groups_all),
        cmocka_unit_test(test_relay_keeps_separate),
        cmocka_unit_test(test_schedule_reproduces_stage2),
        cmocka_unit_test(test_schedule_uses_order_only),
        cmocka_unit_test(test_alpha_delay),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_resources_respected),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cycle_rejected),
        cmocka_unit_test(test_shared_port_served_in_request_order),
        cmocka_unit_test(test_runtime_latency),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_replay_pre_post),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
