/* test_route.c — stage 1 (routing MILP): every chunk reaches every rank
 * that needs it exactly once, the sketch's relay rules hold (allowed pairs,
 * senders, enforce_ordering), symmetry substitution shrinks the model and
 * yields a symmetric routing, the MILP never does worse than its heuristic
 * seed, a time limit still returns a valid routing, uc-min / uc-max steer
 * the number of switch connections, route_check() catches bad routings, and
 * a rank some chunk cannot reach is named with the rule that forbids it.
 * On the bundled topologies without their runtime latency (the times
 * derived here are the hops' alone), except where a test says so;
 * test_order and test_contig time the stages with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/order.h"
#include "synth/route.h"
#include "model/cost.h"
#include "fixtures.h"

static sketch *parse_sketch(const char *text, const topo *t)
{
    tc_err e;
    sketch *s = sketch_parse(text, "inline", &e);
    if (!s)
        fail_msg("sketch: %s", e.msg);
    if (sketch_check(s, t, &e) != TC_OK)
        fail_msg("sketch check: %s", e.msg);
    return s;
}

static route_opts quiet_opts(void)
{
    route_opts o;
    route_opts_init(&o);
    o.quiet = 1;
    return o;
}

static double hop_cost(const topo *t, int a, int b, double bytes)
{
    topo_route r = topo_route_of(t, a, b);
    return cost_hop_us(&r, bytes);
}

/* Independent delivery check: for every chunk, each rank that needs it
 * receives it exactly once, nobody else more than once, the origin never,
 * and every send leaves a rank that holds the chunk by then (relaxed times
 * included: a forward starts after the hop that brought the chunk ends). */
static void assert_delivers(const algo *a, const topo *t, coll_kind k, double bytes)
{
    int n = t->nranks, cpr = a->chunks_per_rank, C = n * (k == COLL_ALLTOALL ? cpr / n : cpr);
    int *cnt = calloc((size_t)n, sizeof *cnt), *dr = malloc((size_t)n * sizeof *dr);
    int *oi = malloc((size_t)n * sizeof *oi);
    double *arr = malloc((size_t)n * sizeof *arr);
    for (int o = 0; o < n; o++)
        for (int i = 0; i < cpr; i++) {
            memset(cnt, 0, (size_t)n * sizeof *cnt);
            for (int v = 0; v < n; v++)
                arr[v] = INFINITY;
            arr[o] = 0;
            int m = 0;
            for (int j = 0; j < a->nsends; j++) {
                const algo_send *x = &a->sends[j];
                if (x->origin != o || x->index != i)
                    continue;
                m++;
                cnt[x->dst]++;
                if (x->t_arrive < arr[x->dst])
                    arr[x->dst] = x->t_arrive;
                assert_true(fabs(x->t_arrive - x->t_send - hop_cost(t, x->src, x->dst, bytes)) <
                            1e-6 * (1 + x->t_arrive));
            }
            for (int j = 0; j < a->nsends; j++) {
                const algo_send *x = &a->sends[j];
                if (x->origin == o && x->index == i)
                    assert_true(x->t_send >= arr[x->src] - 1e-6 * (1 + arr[x->src]));
            }
            assert_int_equal(cnt[o], 0);
            int nd = coll_in_dests(k, n, C, o, i, dr, oi);
            for (int v = 0; v < n; v++)
                assert_true(cnt[v] <= 1);
            for (int j = 0; j < nd; j++)
                if (dr[j] != o)
                    assert_int_equal(cnt[dr[j]], 1);
            if (k == COLL_ALLGATHER)
                assert_true(m >= n - 1);
        }
    free(cnt);
    free(dr);
    free(oi);
    free(arr);
}

/* Is the routing mapped onto itself by rank permutation r -> perm(r)? */
static int is_symmetric(const algo *a, const sketch *s, int which)
{
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        int o = sketch_sym_rank(s, x->origin, which), u = sketch_sym_rank(s, x->src, which);
        int v = sketch_sym_rank(s, x->dst, which), idx = x->index;
        if (a->coll == COLL_ALLTOALL) {
            int kup = a->chunks_per_rank / a->nranks;
            idx = sketch_sym_rank(s, x->index / kup, which) * kup + x->index % kup;
        }
        int found = 0;
        for (int q = 0; q < a->nsends && !found; q++) {
            const algo_send *y = &a->sends[q];
            found = y->origin == o && y->index == idx && y->src == u && y->dst == v;
        }
        if (!found)
            return 0;
    }
    return 1;
}

static const char *SK_FLAT4 =
    "{\"name\": \"flat4\", \"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"none\"},"
    " \"hyperparameters\": {\"input_chunkup\": 2}}";
static const char *SK_FLAT4_SYM =
    "{\"name\": \"flat4-sym\", \"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"none\"},"
    " \"symmetry_offsets\": [[1, 4]], \"hyperparameters\": {\"input_chunkup\": 2}}";

static void test_single_node_allgather(void **state)
{
    (void)state;
    topo *t = topo_default(4);
    const char *texts[] = {SK_FLAT4, SK_FLAT4_SYM};
    for (int i = 0; i < 2; i++) {
        sketch *s = parse_sketch(texts[i], t);
        double bytes = 1048576.0 / (4 * 2);
        route_opts o = quiet_opts();
        route_stats st;
        algo *a = NULL;
        tc_err e;
        assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
        assert_int_equal(a->nranks, 4);
        assert_int_equal(a->chunks_per_rank, 2);
        assert_int_equal(st.status, LP_OPTIMAL);
        assert_int_equal(st.fallback, 0);
        assert_int_equal(st.incumbent_used, 1);
        assert_delivers(a, t, COLL_ALLGATHER, bytes);
        assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_OK);
        /* fully connected: every rank receives 6 chunks over its links, the
         * relaxed optimum is one hop per chunk with 2 chunks per link */
        double c = hop_cost(t, 0, 1, bytes);
        assert_true(fabs(st.time_us - 2 * c) < 1e-6);
        assert_true(fabs(a->predicted_us - st.time_us) < 1e-9);
        algo_free(a);
        sketch_free(s);
    }
    topo_free(t);
}

/* ndv2-x2-sk-1: only local 0 sends to local 1 of the other node. */
static void assert_ndv2_sk1_relay(const algo *a, const topo *t)
{
    int rpn = t->ranks_per_node, crossings = 0;
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        if (x->src / rpn == x->dst / rpn)
            continue;
        crossings++;
        assert_int_equal(x->src % rpn, 0);
        assert_int_equal(x->dst % rpn, 1);
        assert_int_equal(x->src / rpn, x->origin / rpn);    /* leaves its own node */
    }
    assert_true(crossings >= t->nranks);    /* every chunk enters the other node */
}

static void test_relay_ndv2_sk1(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    double bytes = 1048576.0 / 16;
    route_opts o = quiet_opts();
    route_stats st;
    algo *a = NULL, *h = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.fallback, 0);
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    assert_ndv2_sk1_relay(a, t);
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_OK);
    /* the relaxed makespan cannot beat node 0's NIC carrying 8 chunks */
    assert_true(st.time_us >= 8 * hop_cost(t, 0, 9, bytes) - 1e-6);
    /* the heuristic routing follows the same rules */
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, bytes, &o, &h, &e), TC_OK);
    assert_delivers(h, t, COLL_ALLGATHER, bytes);
    assert_ndv2_sk1_relay(h, t);
    algo_free(a);
    algo_free(h);
    sketch_free(s);
    topo_free(t);
}

/* Latency-first trees (route_opts.latency): no load, so every chunk takes
 * its cheapest uncontended arrival (the model's lower bound lb at each
 * rank), and all chunks that enter node 1 at its one receiver share one
 * tree below it: the parent of each other node-1 rank is the same for all
 * of them, so stage 3 can send them together.  The load-aware heuristic
 * spreads them over several trees. */
static void test_latency_first_trees(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    double bytes = 64;
    route_opts o = quiet_opts();
    algo *lat = NULL, *h = NULL;
    tc_err e;
    o.latency = 1;
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, bytes, &o, &lat, &e), TC_OK);
    o.latency = 0;
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, bytes, &o, &h, &e), TC_OK);
    assert_delivers(lat, t, COLL_ALLGATHER, bytes);
    assert_ndv2_sk1_relay(lat, t);
    assert_int_equal(route_check(lat, s, t, COLL_ALLGATHER, &e), TC_OK);
    int spread = 0;
    const algo *as[2] = {lat, h};
    for (int w = 0; w < 2; w++) {
        int parent[16];
        for (int r = 0; r < 16; r++)
            parent[r] = -1;
        for (int i = 0; i < as[w]->nsends; i++) {
            const algo_send *x = &as[w]->sends[i];
            if (x->origin >= 8 || x->dst < 8 || x->dst == 9)
                continue;
            if (w == 0) {
                if (parent[x->dst] < 0)
                    parent[x->dst] = x->src;
                assert_int_equal(x->src, parent[x->dst]);
            } else if (parent[x->dst] >= 0 && parent[x->dst] != x->src) {
                spread = 1;
            } else {
                parent[x->dst] = x->src;
            }
        }
    }
    assert_true(spread);
    /* no waiting on loads: each arrival is the uncontended shortest one, so
     * rank 12 (two NVLink hops below the receiver 9) gets node 0's chunk 5
     * after 5 -> ... -> 0 (two hops), the NIC, and two hops */
    double want = 2 * hop_cost(t, 5, 4, bytes) + hop_cost(t, 0, 9, bytes) +
                  hop_cost(t, 9, 8, bytes) + hop_cost(t, 8, 12, bytes);
    int seen = 0;
    for (int i = 0; i < lat->nsends; i++) {
        const algo_send *x = &lat->sends[i];
        if (x->origin == 5 && x->dst == 12) {
            assert_true(fabs(x->t_arrive - want) < 1e-6);
            seen = 1;
        }
    }
    assert_true(seen);
    algo_free(lat);
    algo_free(h);
    sketch_free(s);
    topo_free(t);
}

static void test_symmetry_substitution(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    double bytes = 1048576.0 / 16;
    route_opts o = quiet_opts();
    route_stats with, without;
    algo *a = NULL, *b = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &with, &e), TC_OK);
    o.use_symmetry = 0;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &b, &without, &e), TC_OK);
    assert_int_equal(with.symmetric, 1);
    assert_int_equal(without.symmetric, 0);
    assert_int_equal(with.nreps, 8);
    assert_int_equal(without.nreps, 16);
    assert_int_equal(with.nslots, without.nslots);
    /* the node swap halves the (chunk, hop) columns and the per-chunk rows */
    assert_true(with.nbin * 2 <= without.nbin + 1);
    assert_true(with.ncols < without.ncols);
    assert_true(with.nrows < without.nrows);
    assert_true(is_symmetric(a, s, 0));
    /* both are optimal for their model; symmetry costs nothing here */
    assert_true(fabs(with.time_us - without.time_us) < 1e-6);
    assert_delivers(b, t, COLL_ALLGATHER, bytes);
    algo_free(a);
    algo_free(b);
    sketch_free(s);
    topo_free(t);
    /* rotation of a single node: a quarter of the columns, and symmetric */
    t = topo_default(4);
    s = parse_sketch(SK_FLAT4_SYM, t);
    o = quiet_opts();
    bytes = 1048576.0 / 8;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &with, &e), TC_OK);
    o.use_symmetry = 0;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &b, &without, &e), TC_OK);
    assert_int_equal(with.nbin * 4, without.nbin);
    assert_true(is_symmetric(a, s, 0));
    algo_free(a);
    algo_free(b);
    sketch_free(s);
    topo_free(t);
}

/* The MILP starts from the heuristic, so it is never worse in its own
 * objective, and its relaxed makespan never exceeds the heuristic's real
 * one; on DGX-2 x2 sk-2 its routing also schedules shorter in stage 2. */
static void milp_not_worse(int runtime_latency)
{
    topo *t = fx_topo_bare("dgx2-x2");
    t->rt_latency = runtime_latency ? TOPO_RTLAT_NCCL : TOPO_RTLAT_NONE;
    sketch *s = fx_sketch("dgx2-x2-sk-2", t);
    double bytes = 1048576.0 / 32;
    route_opts o = quiet_opts();
    route_stats st;
    algo *a = NULL, *h = NULL, *sa = NULL, *sh = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.status, LP_OPTIMAL);
    assert_true(st.objective <= st.heur_objective + 1e-6);
    assert_true(st.time_us <= st.heur_relaxed_us + 1e-6);
    assert_true(st.heur_relaxed_us <= st.heur_makespan_us + 1e-6);
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_OK);
    /* direct-map: chunks cross only between equal local ranks, from the origin */
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        if (x->src / 16 != x->dst / 16) {
            assert_int_equal(x->src % 16, x->dst % 16);
            assert_int_equal(x->src, x->origin);
        }
    }
    /* uc-max: the objective is time - 0.01 * connections */
    assert_true(fabs(st.objective - (st.time_us - 0.01 * st.connections)) < 1e-6);
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, bytes, &o, &h, &e), TC_OK);
    assert_int_equal(order_schedule(a, t, bytes, NULL, &sa, NULL, &e), TC_OK);
    assert_int_equal(order_schedule(h, t, bytes, NULL, &sh, NULL, &e), TC_OK);
    assert_true(fabs(sh->predicted_us - st.heur_makespan_us) < 1e-9);
    assert_true(sa->predicted_us < sh->predicted_us);
    assert_true(sa->predicted_us >= st.time_us - 1e-6);     /* a relaxation */
    algo_free(a);
    algo_free(h);
    algo_free(sa);
    algo_free(sh);
    sketch_free(s);
    topo_free(t);
}

static void test_milp_not_worse_than_heuristic(void **state)
{
    (void)state;
    milp_not_worse(0);
    milp_not_worse(1);      /* the runtime's latency: resources held alpha + bytes / B */
}

/* dgx2-x2-sk-1: odd GPU 2k+1 sends to even GPU 2k of the other node; chunks
 * of 2k and 2k+1 leave through 2k+1, its own first.  Proving this model
 * optimal without cuts takes GLPK tens of seconds: a 1 s limit must still
 * return a valid routing (the seed or better) that keeps every rule. */
static void test_time_limit_and_rev_map(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("dgx2-x2");
    sketch *s = fx_sketch("dgx2-x2-sk-1", t);
    double bytes = 1048576.0 / 64;
    route_opts o = quiet_opts();
    o.cuts = 0;
    o.time_limit_s = 1;
    route_stats st;
    algo *a = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_true(st.status == LP_FEASIBLE || st.status == LP_OPTIMAL);
    assert_int_equal(st.fallback, 0);
    assert_true(st.solve_s < 5);
    assert_true(st.objective <= st.heur_objective + 1e-6);
    assert_int_equal(a->chunks_per_rank, 2);
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_OK);
    for (int j = 0; j < a->nsends; j++) {
        const algo_send *x = &a->sends[j];
        if (x->src / 16 == x->dst / 16)
            continue;
        assert_int_equal(x->src % 2, 1);
        assert_int_equal(x->dst % 16, x->src % 16 - 1);
        assert_true(x->origin == x->src || x->origin == x->src - 1);
        /* enforce_ordering in the relaxed times: a relayed chunk arrives a
         * hop after each of the sender's own chunks on the same hop */
        if (x->origin == x->src)
            continue;
        for (int q = 0; q < a->nsends; q++) {
            const algo_send *y = &a->sends[q];
            if (y->origin == x->src && y->src == x->src && y->dst == x->dst)
                assert_true(x->t_arrive >= y->t_arrive + hop_cost(t, x->src, x->dst, bytes) -
                            1e-6 * (1 + x->t_arrive));
        }
    }
    assert_true(is_symmetric(a, s, 0));
    assert_true(is_symmetric(a, s, 1));
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

static void test_alltoall_ndv2_sk2(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-2", t);
    double bytes = 1048576.0 / 16;
    route_opts o = quiet_opts();
    route_stats st;
    algo *a = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLTOALL, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(a->chunks_per_rank, 16);
    assert_int_equal(st.nchunks, 256);
    assert_int_equal(st.status, LP_OPTIMAL);
    assert_delivers(a, t, COLL_ALLTOALL, bytes);
    assert_int_equal(route_check(a, s, t, COLL_ALLTOALL, &e), TC_OK);
    /* 64 chunks leave each node through its one NIC */
    assert_true(st.time_us >= 64 * hop_cost(t, 0, 8, bytes) - 1e-6);
    for (int j = 0; j < a->nsends; j++)
        assert_int_not_equal(a->sends[j].index, a->sends[j].origin);  /* none to itself */
    assert_true(is_symmetric(a, s, 0));
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

static const char *SWITCH4 =
    "{\"name\": \"switch4\", \"nodes\": 1, \"ranks_per_node\": 4,"
    " \"local\": {\"copy_gbps\": 400, \"reduce_gbps\": 300, \"source\": \"assumed\"},"
    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 0.35, \"bandwidth_gbps\": 125,"
    "   \"source\": \"assumed\"}]}";

static const char *SK_UC =
    "{\"name\": \"uc\", \"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\","
    " \"switches\": [[0, 1, 2, 3]], \"switch_hyperedge_strategy\": [\"%s\"]}}";

/* On a 4-port switch a ring and direct sends both meet the relaxed optimum
 * (three chunks in and out of every port): uc-min picks the 4 connections
 * of a ring, uc-max all 12. */
static void test_uc_min_max(void **state)
{
    (void)state;
    tc_err e;
    topo *t = topo_parse(SWITCH4, "switch4.json", &e);
    assert_non_null(t);
    double bytes = 1e6, c = hop_cost(t, 0, 1, bytes);
    const char *uc[] = {"uc-min", "uc-max"};
    int want[] = {4, 12};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text, SK_UC, uc[i]);
        sketch *s = parse_sketch(text, t);
        route_opts o = quiet_opts();
        route_stats st;
        algo *a = NULL;
        assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
        assert_int_equal(st.status, LP_OPTIMAL);
        assert_true(fabs(st.time_us - 3 * c) < 1e-6);
        assert_int_equal(st.connections, want[i]);
        assert_delivers(a, t, COLL_ALLGATHER, bytes);
        algo_free(a);
        sketch_free(s);
    }
    topo_free(t);
}

static void test_build_only_and_determinism(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    double bytes = 1048576.0 / 16;
    route_opts o = quiet_opts();
    o.build_only = 1;
    route_stats st;
    algo *a = NULL, *b = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.status, LP_UNSOLVED);
    assert_true(st.ncols > 0 && st.nbin > 0 && st.nrows > 0 && st.nnz > 0);
    assert_true(isnan(st.time_us));
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    algo_free(a);
    o.build_only = 0;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &a, NULL, &e), TC_OK);
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, bytes, &o, &b, NULL, &e), TC_OK);
    assert_int_equal(a->nsends, b->nsends);
    for (int j = 0; j < a->nsends; j++) {
        assert_int_equal(a->sends[j].origin, b->sends[j].origin);
        assert_int_equal(a->sends[j].src, b->sends[j].src);
        assert_int_equal(a->sends[j].dst, b->sends[j].dst);
        assert_true(a->sends[j].t_arrive == b->sends[j].t_arrive);
    }
    algo_free(a);
    algo_free(b);
    sketch_free(s);
    topo_free(t);
}

/* A DGX-2 x2 sketch where every GPU crosses to its counterpart through the
 * NIC it shares with its neighbour, carrying its own chunks only. */
/* Rails on DGX-2 x2: every GPU sends its own chunks to the same GPU of the
 * other node (group = 0), or to either GPU of that NIC pair (group = 1). */
static sketch *dgx2_rails(const topo *t, int chunkup, int group)
{
    char txt[4096];
    int n = snprintf(txt, sizeof txt, "{\"name\": \"dgx2-rail\", \"nnodes\": 2, "
                     "\"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": "
                     "[[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]], \"switch_hyperedge_strategy\": "
                     "[\"uc-min\"]}, \"internode_sketch\": {\"strategy\": \"relay\", "
                     "\"internode_conn\": ");
    if (!group) {
        n += snprintf(txt + n, sizeof txt - (size_t)n, "\"direct-map\"");
    } else {
        for (int i = 0; i < 16; i++)
            n += snprintf(txt + n, sizeof txt - (size_t)n, "%s\"%d\": [%d, %d]", i ? ", " : "{",
                          i, i, i ^ 1);
        n += snprintf(txt + n, sizeof txt - (size_t)n, "}");
    }
    n += snprintf(txt + n, sizeof txt - (size_t)n, ", \"gpus_to_sender_rev_map\": {");
    for (int i = 0; i < 16; i++)
        n += snprintf(txt + n, sizeof txt - (size_t)n, "%s\"%d\": [%d]", i ? ", " : "", i, i);
    snprintf(txt + n, sizeof txt - (size_t)n, "}}, \"symmetry_offsets\": [[2, 16], [16, 32]], "
             "\"hyperparameters\": {\"input_chunkup\": %d}}", chunkup);
    return parse_sketch(txt, t);
}

static sketch *dgx2_rail_sketch(const topo *t, int chunkup)
{
    return dgx2_rails(t, chunkup, 0);
}

/* Sends of a that cross between nodes of rpn ranks. */
static int crossings(const algo *a, int rpn)
{
    int k = 0;
    for (int i = 0; i < a->nsends; i++)
        k += a->sends[i].src / rpn != a->sends[i].dst / rpn;
    return k;
}

/* Spare NIC capacity (route.h): on DGX-2 x2 at 1 GiB, chunkup 2, the
 * switch ports are the bottleneck (60 transfers of 16 MiB each, 8074 us)
 * and each NIC carries 4 of 16 MiB (5380 us).  Where a GPU may also send
 * to its NIC partner's counterpart, a second crossing for half of the
 * chunks relieves every port by one transfer and gives each NIC 6: 8069 us,
 * the NICs' time.  The chunkup-1 routing cannot say so (its chunks are
 * twice as large); the moves find it from that seed, and the MILP keeps
 * it.  With plain rails there is no second NIC hop, and nothing moves. */
static void test_spare_nics(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("dgx2-x2");
    sketch *g1 = dgx2_rails(t, 1, 1), *g2 = dgx2_rails(t, 2, 1);
    sketch *r1 = dgx2_rails(t, 1, 0), *r2 = dgx2_rails(t, 2, 0);
    double bytes = 1073741824.0 / 64;
    route_opts o = quiet_opts();
    o.mip_gap = 0.001;      /* as taccl-synth solves it; each solve takes ~1 s */
    o.time_limit_s = 60;
    route_stats st;
    algo *coarse = NULL, *a = NULL, *sched = NULL;
    tc_err e;
    /* group rails: from the chunkup-1 routing to the NICs' time */
    assert_int_equal(route_solve(g1, t, COLL_ALLGATHER, bytes * 2, &o, &coarse, NULL, &e),
                     TC_OK);
    o.coarse = coarse;
    assert_int_equal(route_solve(g2, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.spare_nics, 1);
    assert_true(st.heur_makespan_us < st.coarse_makespan_us - 1);
    double nic = 6 * hop_cost(t, 0, 16, bytes);
    assert_true(fabs(st.heur_makespan_us - nic) < 1e-6 * nic);
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    assert_int_equal(route_check(a, g2, t, COLL_ALLGATHER, &e), TC_OK);
    assert_int_equal(order_schedule(a, t, bytes, NULL, &sched, NULL, &e), TC_OK);
    assert_true(sched->predicted_us < nic * (1 + 1e-6));
    /* 96 crossings: 64 chunks, half of them twice */
    assert_int_equal(crossings(a, 16), 96);
    algo_free(sched);
    algo_free(a);
    /* chunks of 4 KiB cost a NIC less than its alpha: no moves tried */
    o.coarse = NULL;
    o.build_only = 1;
    assert_int_equal(route_solve(g2, t, COLL_ALLGATHER, 4096, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.spare_nics, 0);
    o.build_only = 0;
    algo_free(a);
    algo_free(coarse);
    /* plain rails: one NIC hop per chunk, nothing to move */
    coarse = a = NULL;
    o.coarse = NULL;
    assert_int_equal(route_solve(r1, t, COLL_ALLGATHER, bytes * 2, &o, &coarse, NULL, &e),
                     TC_OK);
    o.coarse = coarse;
    assert_int_equal(route_solve(r2, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    assert_int_equal(st.spare_nics, 0);
    assert_int_equal(crossings(a, 16), 64);
    algo_free(a);
    algo_free(coarse);
    sketch_free(g1);
    sketch_free(g2);
    sketch_free(r1);
    sketch_free(r2);
    topo_free(t);
}

/* A coarse routing (chunkup 1) seeds the chunkup-2 MILP: each piece on its
 * coarse chunk's tree, kept as the incumbent when stage 2 times it faster
 * than the heuristic; a coarse routing that does not fit is ignored. */
static void test_coarse_seed(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("dgx2-x2");
    sketch *s1 = dgx2_rail_sketch(t, 1), *s2 = dgx2_rail_sketch(t, 2);
    sketch *s3 = dgx2_rail_sketch(t, 3);
    double bytes = 1073741824.0 / 64;
    route_opts o = quiet_opts();
    route_stats st;
    algo *coarse = NULL, *a = NULL, *h = NULL, *wrong = NULL;
    tc_err e;
    assert_int_equal(route_solve(s1, t, COLL_ALLGATHER, bytes * 2, &o, &coarse, NULL, &e),
                     TC_OK);
    o.build_only = 1;
    assert_int_equal(route_solve(s2, t, COLL_ALLGATHER, bytes, &o, &h, &st, &e), TC_OK);
    assert_true(isnan(st.coarse_makespan_us));
    double heur = st.heur_makespan_us;
    o.coarse = coarse;
    assert_int_equal(route_solve(s2, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
    /* the heuristic's trees are the slower (11166 us against 8074 us) */
    assert_true(st.coarse_makespan_us < 0.8 * heur);
    assert_true(st.heur_makespan_us == st.coarse_makespan_us);
    assert_delivers(a, t, COLL_ALLGATHER, bytes);
    assert_int_equal(route_check(a, s2, t, COLL_ALLGATHER, &e), TC_OK);
    /* every piece (o, j) takes the hops coarse chunk (o, 0) takes */
    assert_int_equal(a->nsends, 2 * coarse->nsends);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        int found = 0;
        for (int q = 0; q < coarse->nsends && !found; q++)
            found = coarse->sends[q].origin == x->origin && coarse->sends[q].src == x->src &&
                    coarse->sends[q].dst == x->dst;
        assert_true(found);
    }
    /* the MILP started from it is never worse than it */
    o.build_only = 0;
    algo *m = NULL;
    assert_int_equal(route_solve(s2, t, COLL_ALLGATHER, bytes, &o, &m, &st, &e), TC_OK);
    assert_true(st.time_us <= st.heur_relaxed_us * (1 + 1e-9));
    algo_free(m);
    /* a seed of another collective, or at a chunkup that does not divide 2,
     * is ignored */
    o.build_only = 1;
    const sketch *other[2] = {s1, s3};
    coll_kind ok[2] = {COLL_ALLTOALL, COLL_ALLGATHER};
    for (int w = 0; w < 2; w++) {
        assert_int_equal(route_heuristic(other[w], t, ok[w], bytes, NULL, &wrong, &e), TC_OK);
        o.coarse = wrong;
        algo_free(a);
        assert_int_equal(route_solve(s2, t, COLL_ALLGATHER, bytes, &o, &a, &st, &e), TC_OK);
        assert_true(isnan(st.coarse_makespan_us));
        assert_true(st.heur_makespan_us == heur);
        algo_free(wrong);
    }
    algo_free(a);
    algo_free(h);
    algo_free(coarse);
    sketch_free(s1);
    sketch_free(s2);
    sketch_free(s3);
    topo_free(t);
}

static void test_refusals(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    route_opts o = quiet_opts();
    algo *a = NULL;
    tc_err e;
    assert_int_equal(route_solve(s, t, COLL_REDUCESCATTER, 1000, &o, &a, NULL, &e), TC_INPUT);
    assert_null(a);
    assert_int_equal(route_solve(s, t, COLL_ALLREDUCE, 1000, &o, &a, NULL, &e), TC_INPUT);
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, 0, &o, &a, NULL, &e), TC_INPUT);
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, -1, &o, &a, &e), TC_INPUT);
    topo *one = fx_topo_bare("ndv2-x1");
    assert_int_equal(route_solve(s, one, COLL_ALLGATHER, 1000, &o, &a, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "nodes"));
    topo_free(one);
    sketch_free(s);
    topo_free(t);
}

/* Two nodes of three ranks: 0 <-> 1, 0 -> 2 one way (rank 2 reaches nobody
 * inside its node), a NIC for all three.  Rank 0 reaches its whole node;
 * rank 2 only through another node. */
static const char TRI_TOPO[] =
    "{\"name\": \"tri\", \"nodes\": 2, \"ranks_per_node\": 3,\n"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},\n"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 10,\n"
    "            \"source\": \"assumed: test\"},\n"
    "           {\"pairs\": [[0, 2]], \"bidirectional\": false, \"alpha_us\": 1,\n"
    "            \"bandwidth_gbps\": 10, \"source\": \"assumed: test\"}],\n"
    " \"nics\": [{\"ranks\": [0, 1, 2], \"alpha_us\": 2, \"bandwidth_gbps\": 5,\n"
    "           \"source\": \"assumed: test\"}]}\n";

/* route_solve and route_heuristic on sketch text over topology text: both
 * TC_INPUT with the same message, which must contain every needle. */
static void expect_unreachable(const char *topo_text, const char *sketch_text,
                               const char *const *needles)
{
    tc_err e;
    topo *t = topo_parse(topo_text, "tri.json", &e);
    if (!t)
        fail_msg("topology: %s", e.msg);
    sketch *s = parse_sketch(sketch_text, t);
    route_opts o = quiet_opts();
    algo *a = NULL;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, 1000, &o, &a, NULL, &e), TC_INPUT);
    assert_null(a);
    for (const char *const *n = needles; *n; n++)
        if (!strstr(e.msg, *n))
            fail_msg("message lacks \"%s\": %s", *n, e.msg);
    char first[1024];
    snprintf(first, sizeof first, "%s", e.msg);
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, 1000, &o, &a, &e), TC_INPUT);
    assert_string_equal(e.msg, first);
    /* AllToAll meets the same wall */
    assert_int_equal(route_solve(s, t, COLL_ALLTOALL, 1000, &o, &a, NULL, &e), TC_INPUT);
    sketch_free(s);
    topo_free(t);
}

/* A rank a chunk cannot reach is named with the chunk and the rule that
 * forbids it: the sketch key (file, line, key) or the topology. */
static void test_unreachable_named(void **state)
{
    (void)state;
    /* internode_conn: rank 0 may cross only 0 -> local 2, a dead end */
    const char *conn[] = {"inline:3: internode_sketch.internode_conn: chunk 0 of rank 0 cannot "
                          "reach rank 3", "pairs (local sender->receiver) 0->2", NULL};
    expect_unreachable(TRI_TOPO, "{\"nnodes\": 2,\n \"internode_sketch\": {\"strategy\": "
                       "\"relay\",\n   \"internode_conn\": {\"0\": [2]}}}", conn);
    /* the rev map sends rank 0's chunks out through 1, whose pair is a dead
     * end, while 0 -> 0 would have done */
    const char *via[] = {"inline:4: internode_sketch.gpus_to_sender_rev_map: chunk 0 of rank 0 "
                         "cannot reach rank 3", "only through local rank(s) [1]", NULL};
    expect_unreachable(TRI_TOPO, "{\"nnodes\": 2,\n \"internode_sketch\": {\"strategy\": "
                       "\"relay\",\n   \"internode_conn\": {\"0\": [0], \"1\": [2]},\n"
                       "   \"gpus_to_sender_rev_map\": {\"0\": [1, 2], \"1\": [0]}}}", via);
    /* the relay rule: rank 2 reaches rank 0 only by leaving the node */
    const char *relay[] = {"inline:2: internode_sketch.strategy: chunk 0 of rank 2 cannot reach "
                           "rank 0", "leaves their node and comes back", NULL};
    expect_unreachable(TRI_TOPO, "{\"nnodes\": 2,\n \"internode_sketch\": {\"strategy\": "
                       "\"relay\", \"internode_conn\": \"fully-connected\"}}", relay);
    /* the same without internode_sketch: the topology is named */
    const char *relay_t[] = {"tri.json: chunk 0 of rank 2 cannot reach rank 0",
                             "TACCL's relay routing", NULL};
    expect_unreachable(TRI_TOPO, "{\"nnodes\": 2}", relay_t);
    /* no path at all: rank 2 has neither a link nor a NIC */
    const char *none[] = {"tri.json: chunk 0 of rank 0 cannot reach rank 2: topology lone has no "
                          "path of links, switches or NICs from rank 0 to rank 2", NULL};
    expect_unreachable("{\"name\": \"lone\", \"nodes\": 1, \"ranks_per_node\": 3,\n"
                       " \"local\": {\"copy_gbps\": 1, \"reduce_gbps\": 1, \"source\": "
                       "\"assumed\"},\n \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                       "\"bandwidth_gbps\": 1, \"source\": \"assumed\"}]}", "{\"nnodes\": 1}",
                       none);
}

/* A model too large to search is refused at once, before any search.
 * With symmetries only one chunk per orbit is searched and the others
 * take its candidates carried by the symmetry: as many as a search of
 * every chunk finds. */
static void test_size_guard(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("torus-2d-32x32");
    sketch *s = parse_sketch("{\"nnodes\": 1}", t);
    route_opts o = quiet_opts();
    o.build_only = 1;
    algo *a = NULL;
    tc_err e;
    route_stats st;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, 1 << 20, &o, &a, &st, &e), TC_INPUT);
    assert_null(a);
    assert_non_null(strstr(e.msg, "inline: routing allgather over the 1024 ranks of "
                                  "torus-2d-32x32 means 1024 chunk orbits to search"));
    assert_non_null(strstr(e.msg, "give the sketch symmetry_offsets"));
    sketch_free(s);
    topo_free(t);
    t = fx_topo_bare("torus-2d-8x8");
    s = fx_sketch("torus-2d-8x8-sk-1", t);
    route_stats plain;
    o.use_symmetry = 0;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, 1 << 20, &o, &a, &plain, &e), TC_OK);
    algo_free(a);
    o.use_symmetry = 1;
    assert_int_equal(route_solve(s, t, COLL_ALLGATHER, 1 << 20, &o, &a, &st, &e), TC_OK);
    assert_int_equal(plain.nreps, 64);
    assert_int_equal(st.nreps, 1);
    assert_int_equal(st.nslots, plain.nslots);
    assert_int_equal(a->nsends, 64 * 63);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

static void test_route_check_catches(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    route_opts o = quiet_opts();
    algo *a = NULL;
    tc_err e;
    assert_int_equal(route_heuristic(s, t, COLL_ALLGATHER, 1000, &o, &a, &e), TC_OK);
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_OK);
    /* a chunk that never reaches one rank */
    algo_send keep = a->sends[a->nsends - 1];
    a->nsends--;
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_WRONG);
    assert_non_null(strstr(e.msg, "never reaches"));
    a->nsends++;
    a->sends[a->nsends - 1] = keep;
    /* the crossing of chunk (0, 0) moved to a pair the sketch forbids */
    int j = 0;
    while (!(a->sends[j].origin == 0 && a->sends[j].src / 8 != a->sends[j].dst / 8))
        j++;
    algo_send was = a->sends[j];
    a->sends[j].dst = 8;          /* 0 -> 8: local 0 -> local 0 */
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_WRONG);
    assert_int_equal(route_check(a, NULL, t, COLL_ALLGATHER, &e), TC_WRONG);  /* 9 unreached */
    a->sends[j] = was;
    /* received twice */
    algo_add_send(a, 0, 0, 0, 1, 0, 0);
    assert_int_equal(route_check(a, s, t, COLL_ALLGATHER, &e), TC_WRONG);
    assert_non_null(strstr(e.msg, "twice"));
    a->nsends--;
    /* without the sketch a direct crossing is fine, with it not */
    algo *b = algo_new(COLL_ALLGATHER, 16, 1);
    for (int o2 = 0; o2 < 16; o2++)
        for (int d = 0; d < 16; d++)
            if (d != o2 && (d / 8 != o2 / 8 || topo_route_of(t, o2, d).kind == ROUTE_LINK))
                algo_add_send(b, o2, 0, o2, d, 0, 0);
    /* ranks without a direct link inside a node get it via a neighbour */
    for (int o2 = 0; o2 < 16; o2++)
        for (int d = 0; d < 16; d++)
            if (d != o2 && d / 8 == o2 / 8 && topo_route_of(t, o2, d).kind != ROUTE_LINK)
                for (int m = o2 / 8 * 8; m < o2 / 8 * 8 + 8; m++)
                    if (m != o2 && topo_route_of(t, o2, m).kind == ROUTE_LINK &&
                        topo_route_of(t, m, d).kind == ROUTE_LINK) {
                        algo_add_send(b, o2, 0, m, d, 0, 0);
                        break;
                    }
    assert_int_equal(route_check(b, NULL, t, COLL_ALLGATHER, &e), TC_OK);
    assert_int_equal(route_check(b, s, t, COLL_ALLGATHER, &e), TC_WRONG);
    algo_free(b);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_node_allgather),
        cmocka_unit_test(test_relay_ndv2_sk1),
        cmocka_unit_test(test_latency_first_trees),
        cmocka_unit_test(test_symmetry_substitution),
        cmocka_unit_test(test_milp_not_worse_than_heuristic),
        cmocka_unit_test(test_time_limit_and_rev_map),
        cmocka_unit_test(test_alltoall_ndv2_sk2),
        cmocka_unit_test(test_uc_min_max),
        cmocka_unit_test(test_build_only_and_determinism),
        cmocka_unit_test(test_coarse_seed),
        cmocka_unit_test(test_spare_nics),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_route_check_catches),
        cmocka_unit_test(test_unreachable_named),
        cmocka_unit_test(test_size_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
