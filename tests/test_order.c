/* test_order.c — stage 2 (heuristic ordering): the greedy schedule follows
 * the executor's timing model (route costs, lanes, switch ports, NICs,
 * arrival before forward), serves a resource shared by several senders in
 * the order they ask for it as the executor does, matches hand-computed
 * ring times, applies the longest-remaining-path priority, refuses
 * routings that are not chunk trees, and order_verify() catches schedules
 * that break the model, also where alpha is a delay; lowered and executed,
 * a stage-2 schedule takes exactly its predicted time; and the scheduler's
 * picks are those of a plain scan of every candidate by the rule order.h
 * states. */
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
#include "sched/lower.h"
#include "synth/order.h"
#include "model/cost.h"
#include "fixtures.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

static double hop_cost(const topo *t, int a, int b, double bytes)
{
    topo_route r = topo_route_of(t, a, b);
    return cost_hop_us(&r, bytes);
}

/* Ring AllGather routing: chunk j of rank r travels r -> r+1 -> ... -> r-1. */
static algo *ring_routing(int n, int per)
{
    algo *a = algo_new(COLL_ALLGATHER, n, per);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < per; j++)
            for (int s = 0; s < n - 1; s++)
                algo_add_send(a, r, j, (r + s) % n, (r + s + 1) % n, 0, 0);
    return a;
}

/* Direct AllGather: every origin sends its chunks straight to every rank. */
static algo *direct_routing(int n, int per)
{
    algo *a = algo_new(COLL_ALLGATHER, n, per);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < per; j++)
            for (int d = 0; d < n; d++)
                if (d != r)
                    algo_add_send(a, r, j, r, d, 0, 0);
    return a;
}

/* The resources a send holds, worked out here from the topology itself
 * (not through order_hop_resources), as (kind, id) pairs. */
typedef struct {
    int n;
    int kind[2], id[2];
} held;

static held held_by(const topo *t, int a, int b)
{
    held h = {0, {0, 0}, {0, 0}};
    topo_route r = topo_route_of(t, a, b);
    if (r.kind == ROUTE_LINK) {
        h.n = 1;
        h.kind[0] = 0;
        h.id[0] = r.link;
    } else if (r.kind == ROUTE_SWITCH) {
        h.n = 2;
        h.kind[0] = 1;                  /* out port of a on switch sw */
        h.id[0] = r.sw * t->nranks + a;
        h.kind[1] = 2;                  /* in port of b */
        h.id[1] = r.sw * t->nranks + b;
    } else if (r.kind == ROUTE_NIC) {
        h.n = 2;
        h.kind[0] = 3;
        h.id[0] = r.nic_src;
        h.kind[1] = 4;
        h.id[1] = r.nic_dst;
    }
    return h;
}

static int lanes_of(const topo *t, int kind, int id)
{
    return kind == 0 ? t->links[id].mult : 1;
}

/* Every pair of sends on a shared resource: at the start of each send, the
 * others still holding that resource number fewer than its lanes. */
static void assert_capacity(const algo *a, const topo *t)
{
    const double tol = 1e-9;
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        held hx = held_by(t, x->src, x->dst);
        for (int q = 0; q < hx.n; q++) {
            int busy = 0;
            for (int j = 0; j < a->nsends; j++) {
                if (j == i)
                    continue;
                const algo_send *y = &a->sends[j];
                held hy = held_by(t, y->src, y->dst);
                int shares = 0;
                for (int p = 0; p < hy.n; p++)
                    shares |= hy.kind[p] == hx.kind[q] && hy.id[p] == hx.id[q];
                if (!shares)
                    continue;
                /* y holds the resource at x's start */
                if (y->t_send <= x->t_send + tol && y->t_arrive > x->t_send + tol) {
                    if (y->t_send == x->t_send && j > i)
                        continue;   /* count simultaneous starters once */
                    busy++;
                }
            }
            if (busy >= lanes_of(t, hx.kind[q], hx.id[q]))
                fail_msg("send %d (%d->%d at %g) overlaps %d transfers on a resource of %d "
                         "lane(s)", i, x->src, x->dst, x->t_send, busy,
                         lanes_of(t, hx.kind[q], hx.id[q]));
        }
    }
}

/* Each send starts after its chunk reached its source, and takes its route's cost. */
static void assert_causal(const algo *a, const topo *t, double bytes)
{
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        NEAR(x->t_arrive - x->t_send, hop_cost(t, x->src, x->dst, bytes));
        if (x->src == x->origin) {
            assert_true(x->t_send >= 0);
            continue;
        }
        int found = 0;
        for (int j = 0; j < a->nsends; j++) {
            const algo_send *y = &a->sends[j];
            if (y->origin == x->origin && y->index == x->index && y->dst == x->src) {
                found = 1;
                assert_true(x->t_send >= y->t_arrive - 1e-9);
            }
        }
        assert_true(found);
    }
}

static double max_arrival(const algo *a)
{
    double m = 0;
    for (int i = 0; i < a->nsends; i++)
        if (a->sends[i].t_arrive > m)
            m = a->sends[i].t_arrive;
    return m;
}

static void test_ring_time(void **state)
{
    (void)state;
    topo *t = topo_default(4);
    const double N = 1048576;       /* per-rank output buffer */
    for (int per = 1; per <= 2; per++) {
        double bytes = N / (4 * per);
        algo *r = ring_routing(4, per), *s = NULL;
        order_result res;
        tc_err e;
        assert_int_equal(order_schedule(r, t, bytes, NULL, &s, &res, &e), TC_OK);
        double c = hop_cost(t, 0, 1, bytes);
        /* ring AllGather: (p-1) steps of one chunk (per 1); pipelined, every
         * link busy back to back with 3 * per chunks (per 2) */
        NEAR(s->predicted_us, 3 * per * c);
        NEAR(res.makespan_us, 3 * per * c);
        if (per == 1)
            NEAR(s->predicted_us, 3 * 0.7 + 3.0 / 4 * N / (50 * 1e3));
        assert_int_equal(s->nsends, r->nsends);
        for (int i = 0; i < s->nsends; i++) {
            assert_int_equal(s->sends[i].src, r->sends[i].src);
            assert_int_equal(s->sends[i].dst, r->sends[i].dst);
            assert_int_equal(s->sends[i].origin, r->sends[i].origin);
        }
        assert_causal(s, t, bytes);
        assert_capacity(s, t);
        assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_OK);
        order_result_free(&res);
        algo_free(r);
        algo_free(s);
    }
    topo_free(t);
}

static void test_capacity_switch_and_nics(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("dgx2-x2");
    double bytes = 65536;
    algo *r = direct_routing(t->nranks, 1), *s = NULL;
    order_result res;
    tc_err e;
    assert_int_equal(order_schedule(r, t, bytes, NULL, &s, &res, &e), TC_OK);
    assert_causal(s, t, bytes);
    assert_capacity(s, t);
    assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_OK);
    NEAR(s->predicted_us, max_arrival(s));
    /* each NIC (two ranks, 16 remote receivers each) serialises 32 sends */
    double nic = hop_cost(t, 0, 16, bytes);
    assert_true(s->predicted_us >= 32 * nic - 1e-9);
    /* the recorded order on every resource is by start time, and complete */
    int total = 0;
    for (int q = 0; q < res.nres; q++) {
        for (int k = res.res_start[q] + 1; k < res.res_start[q + 1]; k++)
            assert_true(s->sends[res.res_seq[k]].t_send >=
                        s->sends[res.res_seq[k - 1]].t_send - 1e-9);
        total += res.res_start[q + 1] - res.res_start[q];
    }
    assert_int_equal(total, 2 * s->nsends);
    order_result_free(&res);
    algo_free(r);
    algo_free(s);
    topo_free(t);
}

static const char *TWO_LANES =
    "{\"name\": \"lanes\", \"nodes\": 1, \"ranks_per_node\": 3,"
    " \"local\": {\"copy_gbps\": 400, \"reduce_gbps\": 300, \"source\": \"assumed\"},"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 10,"
    "   \"multiplicity\": 2, \"source\": \"assumed\"},"
    "  {\"pairs\": [[1, 2], [0, 2]], \"alpha_us\": 1, \"bandwidth_gbps\": 10,"
    "   \"source\": \"assumed\"}]}";

static void test_link_lanes(void **state)
{
    (void)state;
    tc_err e;
    topo *t = topo_parse(TWO_LANES, "lanes.json", &e);
    assert_non_null(t);
    double bytes = 10000;           /* 1 us + 1 us per hop */
    algo *r = algo_new(COLL_ALLGATHER, 3, 3), *s = NULL;
    for (int j = 0; j < 3; j++)
        algo_add_send(r, 0, j, 0, 1, 0, 0);
    assert_int_equal(order_schedule(r, t, bytes, NULL, &s, NULL, &e), TC_OK);
    /* two at once on the double link, the third after them */
    NEAR(s->sends[0].t_send, 0);
    NEAR(s->sends[1].t_send, 0);
    NEAR(s->sends[2].t_send, 2);
    NEAR(s->predicted_us, 4);
    assert_capacity(s, t);
    assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_OK);
    algo_free(r);
    algo_free(s);
    topo_free(t);
}

/* On a shared link the chunk with more path ahead goes first; among equal
 * paths ahead, the one that has travelled less. */
static void test_priority_rule(void **state)
{
    (void)state;
    topo *t = topo_default(4);
    double bytes = 50000;           /* 0.7 + 1 us per hop */
    order_opts o;
    order_opts_init(&o);
    o.policy = ORDER_PRIORITY;
    tc_err e;
    /* chunk (0,0) stops at 1, chunk (0,1) continues 1 -> 2 -> 3; listed first
     * so input order alone would send it first */
    algo *r = algo_new(COLL_ALLGATHER, 4, 2), *s = NULL;
    algo_add_send(r, 0, 0, 0, 1, 0, 0);
    algo_add_send(r, 0, 1, 0, 1, 0, 0);
    algo_add_send(r, 0, 1, 1, 2, 0, 0);
    algo_add_send(r, 0, 1, 2, 3, 0, 0);
    assert_int_equal(order_schedule(r, t, bytes, &o, &s, NULL, &e), TC_OK);
    double c = hop_cost(t, 0, 1, bytes);
    NEAR(s->sends[1].t_send, 0);
    NEAR(s->sends[0].t_send, c);
    NEAR(s->predicted_us, 3 * c);
    algo_free(r);
    algo_free(s);
    /* travelled least: D = (1,1) 1 -> 2 -> 3 holds link 1 -> 2 first; then
     * B = (0,0) 1 -> 2 (came from 0) and C = (1,0) 1 -> 2 (born at 1) wait
     * for it with the same path ahead and the same possible start: C, which
     * has travelled less, goes first although B comes earlier in the input */
    r = algo_new(COLL_ALLGATHER, 4, 2);
    algo_add_send(r, 0, 0, 0, 1, 0, 0);     /* A */
    algo_add_send(r, 1, 1, 1, 2, 0, 0);     /* D */
    algo_add_send(r, 1, 1, 2, 3, 0, 0);
    algo_add_send(r, 0, 0, 1, 2, 0, 0);     /* B */
    algo_add_send(r, 1, 0, 1, 2, 0, 0);     /* C */
    assert_int_equal(order_schedule(r, t, bytes, &o, &s, NULL, &e), TC_OK);
    NEAR(s->sends[0].t_send, 0);
    NEAR(s->sends[1].t_send, 0);
    NEAR(s->sends[4].t_send, c);
    NEAR(s->sends[3].t_send, 2 * c);
    algo_free(r);
    algo_free(s);
    topo_free(t);
}

/* ORDER_BEST keeps the shorter of the two rules' schedules. */
static void test_best_policy(void **state)
{
    (void)state;
    topo *t = topo_default(6);
    algo *r, *s = NULL;
    order_result res;
    tc_err e;
    r = direct_routing(6, 2);
    assert_int_equal(order_schedule(r, t, 1e5, NULL, &s, &res, &e), TC_OK);
    assert_true(res.makespan_us <= res.makespan_priority + 1e-9);
    assert_true(res.makespan_us <= res.makespan_earliest + 1e-9);
    NEAR(res.makespan_us, res.used == ORDER_PRIORITY ? res.makespan_priority
                                                     : res.makespan_earliest);
    /* and is deterministic */
    algo *s2 = NULL;
    assert_int_equal(order_schedule(r, t, 1e5, NULL, &s2, NULL, &e), TC_OK);
    for (int i = 0; i < s->nsends; i++) {
        assert_true(s->sends[i].t_send == s2->sends[i].t_send);
        assert_true(s->sends[i].t_arrive == s2->sends[i].t_arrive);
    }
    order_result_free(&res);
    algo_free(s);
    algo_free(s2);
    algo_free(r);
    topo_free(t);
}

/* DGX-2 ranks 0 and 1 share a NIC.  Chunk 1:0 has the longer path ahead
 * (it crosses, then spreads over node 1), so the priority rule alone would
 * send it first; but both ask for the NIC at time 0 and the executor
 * serves the lower rank first, so stage 2 must too. */
static void test_shared_nic_served_in_request_order(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("dgx2-x2");
    double bytes = 1024, nic = hop_cost(t, 0, 16, bytes);
    order_opts o;
    order_opts_init(&o);
    o.policy = ORDER_PRIORITY;
    algo *r = algo_new(COLL_ALLGATHER, 32, 1), *s = NULL;
    algo_add_send(r, 0, 0, 0, 16, 0, 0);
    algo_add_send(r, 1, 0, 1, 17, 0, 0);
    for (int d = 16; d < 32; d++)
        if (d != 17)
            algo_add_send(r, 1, 0, 17, d, 0, 0);
    tc_err e;
    assert_int_equal(order_schedule(r, t, bytes, &o, &s, NULL, &e), TC_OK);
    NEAR(s->sends[0].t_send, 0);
    NEAR(s->sends[1].t_send, nic);
    assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_OK);
    algo_free(r);
    algo_free(s);
    topo_free(t);
}

/* Where alpha is a delay ("alpha_mode": "delay"), a hop holds its
 * resources and its sender for its bytes alone and lands alpha later: three
 * ranks of one NDv2 node sending at once through the node's one NIC go one
 * after another, each bytes / B after the one before (with alpha held, a
 * whole hop after); each lands alpha + bytes / B after it starts. */
static void test_alpha_delay(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x2");
    double bytes = 4096;
    for (int delay = 0; delay <= 1; delay++) {
        t->alpha_delay = delay;
        topo_route nic = topo_route_of(t, 0, 8);
        double cost = cost_hop_us(&nic, bytes), hold = cost_hold_us(t, &nic, bytes);
        NEAR(hold, delay ? bytes / (nic.bw_gbps * 1e3) : cost);
        algo *r = algo_new(COLL_ALLGATHER, 16, 1), *s = NULL;
        for (int k = 0; k < 3; k++)
            algo_add_send(r, k, 0, k, 8 + k, 0, 0);
        tc_err e;
        assert_int_equal(order_schedule(r, t, bytes, NULL, &s, NULL, &e), TC_OK);
        double st[3];
        for (int i = 0; i < 3; i++) {
            st[i] = s->sends[i].t_send;
            NEAR(s->sends[i].t_arrive - st[i], cost);
        }
        /* the NIC takes them one by one in rank order */
        NEAR(st[0], 0);
        NEAR(st[1], hold);
        NEAR(st[2], 2 * hold);
        NEAR(s->predicted_us, 2 * hold + cost);
        assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_OK);
        /* the same times with alpha held would overlap on the NIC */
        if (delay) {
            t->alpha_delay = 0;
            assert_int_equal(order_verify(s, t, bytes, 1e-6, &e), TC_WRONG);
            t->alpha_delay = 1;
        }
        algo_free(r);
        algo_free(s);
    }
    topo_free(t);
}

/* TACCL's dgx2-sk-2 routing on DGX-2 x2 (every chunk crosses to the same
 * local rank of the other node, and both copies spread over their node
 * through the switch): 32 ranks send through one switch port to 15 peers
 * each and pairs of ranks share a NIC.  Lowered, the executor runs the
 * stage-2 schedule in exactly its predicted time (it ran 6x slower when
 * the ports were met in tb order). */
static void test_stage2_time_is_executed_time(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx2-x2");
    int n = 32, rpn = 16;
    double bytes = 1024;
    algo *r = algo_new(COLL_ALLGATHER, n, 1), *s = NULL;
    for (int o = 0; o < n; o++) {
        int peer = (o + rpn) % n;
        algo_add_send(r, o, 0, o, peer, 0, 0);
        for (int k = 0; k < rpn; k++) {
            int here = (o / rpn) * rpn + k, there = (peer / rpn) * rpn + k;
            if (here != o)
                algo_add_send(r, o, 0, o, here, 0, 0);
            if (there != peer)
                algo_add_send(r, o, 0, peer, there, 0, 0);
        }
    }
    tc_err e;
    assert_int_equal(order_schedule(r, t, bytes, NULL, &s, NULL, &e), TC_OK);
    lower_opts lo;
    lower_opts_default(&lo);
    lo.size_bytes = (long long)bytes * n;
    prog *p = lower_algo(s, t, &lo, &e);
    if (!p)
        fail_msg("lower: %s", e.msg);
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = lo.size_bytes;
    run_report rr;
    assert_int_equal(run_schedule(p, t, &ro, &rr, &e), TC_OK);
    assert_true(rr.verified);
    /* stage 2 predicts the schedule's span; a run adds the runtime's base
     * latency of one call (model/cost.h) */
    double us = run_report_time_us(&rr), want = s->predicted_us + cost_call_us(t, COST_SIMPLE);
    assert_true(cost_call_us(t, COST_SIMPLE) > 0);
    if (fabs(us - want) > 1e-9 * want)
        fail_msg("executed %.4f us, stage 2 predicted %.4f us + a call's %.1f us", us,
                 s->predicted_us, cost_call_us(t, COST_SIMPLE));
    run_report_free(&rr);
    prog_free(p);
    algo_free(r);
    algo_free(s);
    topo_free(t);
}

static void test_refuses_bad_routings(void **state)
{
    (void)state;
    topo *t = topo_default(4);
    tc_err e;
    algo *s = NULL;
    /* forwards a chunk it never received */
    algo *r = algo_new(COLL_ALLGATHER, 4, 1);
    algo_add_send(r, 0, 0, 1, 2, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "never receives"));
    assert_null(s);
    algo_free(r);
    /* receives twice */
    r = algo_new(COLL_ALLGATHER, 4, 1);
    algo_add_send(r, 0, 0, 0, 1, 0, 0);
    algo_add_send(r, 0, 0, 0, 2, 0, 0);
    algo_add_send(r, 0, 0, 2, 1, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "twice"));
    algo_free(r);
    /* a cycle detached from the origin */
    r = algo_new(COLL_ALLGATHER, 4, 1);
    algo_add_send(r, 0, 0, 1, 2, 0, 0);
    algo_add_send(r, 0, 0, 2, 1, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "cycle"));
    algo_free(r);
    /* back to the origin, bad chunk, bad size */
    r = algo_new(COLL_ALLGATHER, 4, 1);
    algo_add_send(r, 0, 0, 0, 1, 0, 0);
    algo_add_send(r, 0, 0, 1, 0, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    algo_free(r);
    r = algo_new(COLL_ALLGATHER, 4, 1);
    algo_add_send(r, 0, 3, 0, 1, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    algo_add_send(r, 0, 0, 0, 1, 0, 0);
    r->sends[0].index = 0;
    r->nsends = 1;
    assert_int_equal(order_schedule(r, t, 0, NULL, &s, NULL, &e), TC_INPUT);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_OK);
    algo_free(s);
    algo_free(r);
    topo_free(t);
    /* a send with no route: NDv2 has no link between local ranks 0 and 5 */
    t = fx_topo("ndv2-x2");
    r = algo_new(COLL_ALLGATHER, 16, 1);
    algo_add_send(r, 0, 0, 0, 5, 0, 0);
    assert_int_equal(order_schedule(r, t, 1000, NULL, &s, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "no route"));
    algo_free(r);
    topo_free(t);
}

static void test_verify_catches_violations(void **state)
{
    (void)state;
    topo *t = topo_default(3);
    tc_err e;
    double bytes = 50000, c = hop_cost(t, 0, 1, bytes);
    algo *a = algo_new(COLL_ALLGATHER, 3, 2);
    algo_add_send(a, 0, 0, 0, 1, 0, c);
    algo_add_send(a, 0, 1, 0, 1, c, 2 * c);
    algo_add_send(a, 0, 0, 1, 2, c, 2 * c);
    assert_int_equal(order_verify(a, t, bytes, 1e-6, &e), TC_OK);
    /* two transfers at once on a single-lane link */
    a->sends[1].t_send = 0.5 * c;
    a->sends[1].t_arrive = 1.5 * c;
    assert_int_equal(order_verify(a, t, bytes, 1e-6, &e), TC_WRONG);
    assert_non_null(strstr(e.msg, "link 0->1"));
    a->sends[1].t_send = c;
    a->sends[1].t_arrive = 2 * c;
    /* forwarded before it arrived */
    a->sends[2].t_send = 0.5 * c;
    a->sends[2].t_arrive = 1.5 * c;
    assert_int_equal(order_verify(a, t, bytes, 1e-6, &e), TC_WRONG);
    assert_non_null(strstr(e.msg, "before"));
    /* a duration that is not the route's cost */
    a->sends[2].t_send = c;
    a->sends[2].t_arrive = 1.5 * c;
    assert_int_equal(order_verify(a, t, bytes, 1e-6, &e), TC_WRONG);
    algo_free(a);
    topo_free(t);
}

/* ---- the rule of order.h by a plain scan, against order_schedule */

static int close_to(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
}

/* A send's place in its chunk's tree and the two priorities of order.h. */
typedef struct {
    int parent, nres, res[2], chain;    /* chain: NIC egress (sender, resource) or -1 */
    double cost, hold, remaining, travelled;   /* hold: until its resources free */
} scan_send;

static double remaining_of(scan_send *s, const algo *a, int i)
{
    double below = 0;
    for (int j = 0; j < a->nsends; j++)
        if (s[j].parent == i) {
            double r = remaining_of(s, a, j);
            below = r > below ? r : below;
        }
    return s[i].remaining = s[i].cost + below;
}

static double travelled_of(scan_send *s, int i)
{
    int p = s[i].parent;
    return p < 0 ? 0 : travelled_of(s, p) + s[p].cost;
}

static void scan_prepare(const algo *a, const topo *t, double bytes, scan_send *s)
{
    int nres = cost_nres(t);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        topo_route r = topo_route_of(t, x->src, x->dst);
        s[i].cost = cost_hop_us(&r, bytes);
        s[i].hold = cost_hold_us(t, &r, bytes);
        s[i].nres = cost_route_res(t, &r, x->src, x->dst, s[i].res);
        s[i].chain = cost_res_kind_of(t, s[i].res[0]) == COST_NIC_OUT
                         ? x->src * nres + s[i].res[0] : -1;
        s[i].parent = -1;
        for (int j = 0; j < a->nsends; j++) {
            const algo_send *y = &a->sends[j];
            if (x->src != x->origin && y->origin == x->origin && y->index == x->index &&
                y->dst == x->src)
                s[i].parent = j;
        }
    }
    for (int i = 0; i < a->nsends; i++) {
        s[i].travelled = travelled_of(s, i);
        if (s[i].parent < 0)
            remaining_of(s, a, i);
    }
}

static int scan_better(const scan_send *s, order_policy pol, int a, double ta, int b, double tb)
{
    if (pol == ORDER_EARLIEST && !close_to(ta, tb))
        return ta < tb;
    if (!close_to(s[a].remaining, s[b].remaining))
        return s[a].remaining > s[b].remaining;
    if (!close_to(s[a].travelled, s[b].travelled))
        return s[a].travelled < s[b].travelled;
    if (pol != ORDER_EARLIEST && !close_to(ta, tb))
        return ta < tb;
    return a < b;
}

/* When candidate i asks: its chunk is there and its out resource (its
 * chain on a NIC egress) is free. */
static double scan_request(const scan_send *s, const cost_lanes *L, const double *chain_end,
                           const double *ready, int i)
{
    double f;
    if (s[i].chain >= 0)
        f = chain_end[s[i].chain];
    else
        cost_lanes_pick(L, s[i].res[0], &f);
    return ready[i] > f ? ready[i] : f;
}

/* Every step looks at every candidate: the earliest request, then the
 * lowest sender, then the policy among that sender's requests. */
static void scan_schedule(const algo *a, const topo *t, double bytes, order_policy pol,
                          double *t_send, double *t_arrive)
{
    int n = a->nsends;
    scan_send *s = calloc((size_t)n, sizeof *s);
    scan_prepare(a, t, bytes, s);
    cost_lanes *L = cost_lanes_new(t);
    double *chain_end = calloc((size_t)t->nranks * cost_nres(t), sizeof *chain_end);
    double *ready = calloc((size_t)n, sizeof *ready);
    int *state = calloc((size_t)n, sizeof *state);     /* 0 waits, 1 candidate, 2 placed */
    for (int i = 0; i < n; i++)
        state[i] = s[i].parent < 0;
    for (int step = 0; step < n; step++) {
        int src = -1;
        double rq = INFINITY;
        for (int i = 0; i < n; i++) {
            double r = state[i] == 1 ? scan_request(s, L, chain_end, ready, i) : INFINITY;
            if (r < rq || (r == rq && a->sends[i].src < src)) {
                rq = r;
                src = a->sends[i].src;
            }
        }
        int b = -1;
        double bt = 0;
        for (int i = 0; i < n; i++) {
            if (state[i] != 1 || a->sends[i].src != src ||
                scan_request(s, L, chain_end, ready, i) != rq)
                continue;
            double ti = cost_lanes_start(L, s[i].res, s[i].nres, rq, NULL);
            if (b < 0 || scan_better(s, pol, i, ti, b, bt)) {
                b = i;
                bt = ti;
            }
        }
        assert_true(b >= 0);
        int lane[2];
        cost_lanes_start(L, s[b].res, s[b].nres, bt, lane);
        t_send[b] = bt;
        t_arrive[b] = bt + s[b].cost;
        cost_lanes_hold(L, s[b].res, lane, s[b].nres, bt + s[b].hold);
        if (s[b].chain >= 0)
            chain_end[s[b].chain] = bt + s[b].hold;
        state[b] = 2;
        for (int j = 0; j < n; j++)
            if (s[j].parent == b) {
                state[j] = 1;
                ready[j] = t_arrive[b];
            }
    }
    cost_lanes_free(L);
    free(s);
    free(chain_end);
    free(ready);
    free(state);
}

static int routable(const topo *t, int a, int b)
{
    topo_route r = topo_route_of(t, a, b);
    return r.kind != ROUTE_NONE && r.kind != ROUTE_SELF;
}

/* A random tree per chunk over the topology's routes (fan: every rank
 * straight from the origin). */
static algo *random_routing(const topo *t, int per, int fan, unsigned *seed)
{
    int n = t->nranks;
    algo *a = algo_new(COLL_ALLGATHER, n, per);
    int *in = malloc((size_t)n * sizeof *in), *perm = malloc((size_t)n * sizeof *perm);
    for (int o = 0; o < n; o++)
        for (int j = 0; j < per; j++) {
            for (int v = 0; v < n; v++)
                perm[v] = v;
            for (int v = n - 1; v > 0; v--) {
                int w = (int)(rand_r(seed) % (unsigned)(v + 1)), x = perm[v];
                perm[v] = perm[w];
                perm[w] = x;
            }
            int nin = 0;
            in[nin++] = o;
            for (int q = 0; q < n; q++) {
                int v = perm[q], u = o;
                if (v == o)
                    continue;
                for (int tries = 0; !fan && tries < 8; tries++) {
                    int c = in[rand_r(seed) % (unsigned)nin];
                    if (routable(t, c, v)) {
                        u = c;
                        break;
                    }
                }
                if (!routable(t, u, v))
                    continue;
                algo_add_send(a, o, j, u, v, 0, 0);
                in[nin++] = v;
            }
        }
    free(in);
    free(perm);
    return a;
}

/* order_schedule places the sends exactly where the plain scan of every
 * candidate does, for both policies: links with several lanes, switch
 * ports, NICs shared by several ranks, and chunk sizes where the latency
 * makes many candidates tie. */
static void test_matches_a_plain_scan(void **state)
{
    (void)state;
    const char *names[] = {"dgx-h100-x2", "ndv2-x2", "torus-2d-4x4", "cs-cluster2"};
    const double sizes[] = {1 << 20, 3000, 64};
    unsigned seed = 7;
    for (size_t q = 0; q < sizeof names / sizeof *names; q++) {
        topo *t = fx_topo(names[q]);
        for (int fan = 0; fan < 2; fan++)
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                algo *a = random_routing(t, 2, fan, &seed);
                double *ts = malloc((size_t)a->nsends * sizeof *ts);
                double *ta = malloc((size_t)a->nsends * sizeof *ta);
                order_policy pols[] = {ORDER_PRIORITY, ORDER_EARLIEST};
                for (int p = 0; p < 2; p++) {
                    order_opts o;
                    order_opts_init(&o);
                    o.policy = pols[p];
                    algo *out = NULL;
                    tc_err e;
                    assert_int_equal(order_schedule(a, t, sizes[z], &o, &out, NULL, &e), TC_OK);
                    scan_schedule(a, t, sizes[z], pols[p], ts, ta);
                    for (int i = 0; i < a->nsends; i++)
                        if (out->sends[i].t_send != ts[i] || out->sends[i].t_arrive != ta[i])
                            fail_msg("%s, %g bytes, fan %d, policy %d: send %d at %.17g..%.17g, "
                                     "the scan places it at %.17g..%.17g", names[q], sizes[z],
                                     fan, (int)pols[p], i, out->sends[i].t_send,
                                     out->sends[i].t_arrive, ts[i], ta[i]);
                    algo_free(out);
                }
                free(ts);
                free(ta);
                algo_free(a);
            }
        topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_time),
        cmocka_unit_test(test_capacity_switch_and_nics),
        cmocka_unit_test(test_link_lanes),
        cmocka_unit_test(test_priority_rule),
        cmocka_unit_test(test_best_policy),
        cmocka_unit_test(test_shared_nic_served_in_request_order),
        cmocka_unit_test(test_stage2_time_is_executed_time),
        cmocka_unit_test(test_alpha_delay),
        cmocka_unit_test(test_refuses_bad_routings),
        cmocka_unit_test(test_verify_catches_violations),
        cmocka_unit_test(test_matches_a_plain_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
