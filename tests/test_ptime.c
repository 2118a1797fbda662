/* test_ptime.c — the time of a program by the cost model (sched/ptime):
 * hand-computed makespans for a hop, a dependency, a reduction on receive,
 * a NIC two senders share, the FIFO depth, alpha as a delay, two threadblocks on one
 * connection's end, and the errors (no route, a
 * dependency on nothing, a program that cannot finish).  Runs from the
 * repository root (bundled topologies). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/topo.h"
#include "sched/ptime.h"

#define MB 1000000LL

static topo *ndv2(void)
{
    tc_err e;
    topo *t = topo_load("topologies/ndv2-x2.json", &e);
    if (!t)
        fail_msg("cannot load ndv2-x2: %s", e.msg);
    return t;
}

static void assert_near(double a, double b)
{
    if (!(fabs(a - b) <= 1e-9 * (1 + fabs(b))))
        fail_msg("%.12g is not %.12g", a, b);
}

static double hop(const topo *t, int a, int b, double bytes)
{
    topo_route r = topo_route_of(t, a, b);
    return cost_hop_us(&r, bytes);
}

static double timed(const prog *p, const topo *t, long long size)
{
    double us = -1;
    tc_err e;
    if (ptime_run(p, t, size, &us, &e) != 0)
        fail_msg("ptime_run: %s", e.msg);
    return us;
}

/* rank 0 sends chunks [0, cnt) to rank 1 in one step */
static prog *one_send(int cnt, int nchunks)
{
    prog *p = prog_new("one", COLL_ALLGATHER, 2, nchunks);
    prog_tb *s = prog_add_tb(prog_add_gpu(p, nchunks, nchunks, 0), 1, -1, 0);
    prog_add_step(s, ST_S, BUF_I, 0, BUF_O, 0, cnt, -1, -1);
    prog_tb *r = prog_add_tb(prog_add_gpu(p, nchunks, nchunks, 0), -1, 0, 0);
    prog_add_step(r, ST_R, BUF_I, 0, BUF_O, 0, cnt, -1, -1);
    return p;
}

static void test_one_hop(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = one_send(2, 4);                       /* 2 chunks of 1 MB */
    assert_near(timed(p, t, 4 * MB), 0.7 + 2e6 / 50e3);
    prog_free(p);
    topo_free(t);
}

/* The program's protocol scales the hop as the executor does (model/cost). */
static void test_protocol(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = one_send(2, 4);
    snprintf(p->proto, sizeof p->proto, "LL");
    assert_near(timed(p, t, 4 * MB), 0.7 * 0.6 / 3.4 + 2e6 / 25e3);
    prog_free(p);
    topo_free(t);
}

/* A send that depends on a local copy in another tb starts after it; a
 * receive that reduces ends a reduction later. */
static void test_dependency_and_reduce(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = prog_new("dep", COLL_ALLREDUCE, 2, 4);
    prog_gpu *g0 = prog_add_gpu(p, 4, 4, 0);
    prog_tb *c = prog_add_tb(g0, -1, -1, 0);
    prog_add_step(c, ST_CPY, BUF_I, 0, BUF_O, 0, 3, -1, -1);
    prog_tb *s = prog_add_tb(g0, 1, -1, 0);
    prog_add_step(s, ST_S, BUF_O, 0, BUF_NONE, 0, 1, 0, 0);
    prog_tb *r = prog_add_tb(prog_add_gpu(p, 4, 4, 0), -1, 0, 0);
    prog_add_step(r, ST_RRC, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    double want = cost_copy_us(t, 3e6) + hop(t, 0, 1, 1e6) + cost_reduce_us(t, 1e6);
    assert_near(timed(p, t, 4 * MB), want);
    prog_free(p);
    topo_free(t);
}

/* Ranks 0 and 1 both send to node 1 (ranks 8, 9) through node 0's one NIC. */
static prog *two_over_one_nic(void)
{
    prog *p = prog_new("nic", COLL_ALLGATHER, 10, 1);
    for (int r = 0; r < 10; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 1, 0);
        if (r < 2)
            prog_add_step(prog_add_tb(g, r + 8, -1, 0), ST_S, BUF_I, 0, BUF_NONE, 0, 1, -1, -1);
        if (r >= 8)
            prog_add_step(prog_add_tb(g, -1, r - 8, 0), ST_R, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    }
    return p;
}

/* Two senders on one NIC: the second transfer waits for the first. */
static void test_shared_nic(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = two_over_one_nic();
    assert_near(timed(p, t, MB), 2 * hop(t, 0, 8, 1e6));
    prog_free(p);
    topo_free(t);
}

/* Ten sends on one connection while the receiver is busy with a long copy:
 * eight fit in the FIFO, the ninth waits until the receiver takes one. */
static void test_fifo_depth(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = prog_new("fifo", COLL_ALLGATHER, 2, 100);
    prog_tb *s = prog_add_tb(prog_add_gpu(p, 100, 100, 0), 1, -1, 0);
    for (int k = 0; k < 10; k++)
        prog_add_step(s, ST_S, BUF_I, k, BUF_NONE, 0, 1, -1, -1);
    prog_gpu *g1 = prog_add_gpu(p, 100, 100, 0);
    prog_tb *c = prog_add_tb(g1, -1, -1, 0);
    prog_add_step(c, ST_CPY, BUF_I, 0, BUF_O, 0, 80, -1, -1);
    prog_tb *r = prog_add_tb(g1, -1, 0, 0);
    for (int k = 0; k < 10; k++)
        prog_add_step(r, ST_R, BUF_NONE, 0, BUF_S, k, 1, k == 0 ? 0 : -1, k == 0 ? 0 : -1);
    double h = hop(t, 0, 1, 1e6), copy = cost_copy_us(t, 80e6);
    assert_true(copy > 8 * h);                      /* the FIFO fills first */
    assert_near(timed(p, t, 100 * MB), copy + 2 * h);
    prog_free(p);
    topo_free(t);
}

/* Where alpha is a delay ("alpha_mode": "delay"), a hop holds its NIC or
 * link for bytes / B only and lands alpha later: two senders sharing node
 * 0's NIC finish one hold apart plus one alpha, not two hops apart; three
 * sends on one connection pipeline behind each other. */
static void test_alpha_delay(void **state)
{
    (void)state;
    topo *t = ndv2();
    t->alpha_delay = 1;
    topo_route nic = topo_route_of(t, 0, 8), nvl = topo_route_of(t, 0, 1);
    double hold = 1e6 / (nic.bw_gbps * 1e3);
    assert_near(cost_hold_us(t, &nic, 1e6), hold);
    assert_near(cost_hop_us(&nic, 1e6), nic.alpha_us + hold);
    prog *p = two_over_one_nic();
    assert_near(timed(p, t, MB), 2 * hold + nic.alpha_us);
    prog_free(p);

    p = prog_new("pipe", COLL_ALLGATHER, 2, 3);
    prog_tb *s = prog_add_tb(prog_add_gpu(p, 3, 3, 0), 1, -1, 0);
    prog_tb *r = prog_add_tb(prog_add_gpu(p, 3, 3, 0), -1, 0, 0);
    for (int k = 0; k < 3; k++) {
        prog_add_step(s, ST_S, BUF_I, k, BUF_NONE, 0, 1, -1, -1);
        prog_add_step(r, ST_R, BUF_NONE, 0, BUF_O, k, 1, -1, -1);
    }
    double nvl_hold = 1e6 / (nvl.bw_gbps * 1e3);
    assert_near(timed(p, t, 3 * MB), 3 * nvl_hold + nvl.alpha_us);
    t->alpha_delay = 0;                             /* the default: 3 whole hops */
    assert_near(timed(p, t, 3 * MB), 3 * (nvl.alpha_us + nvl_hold));
    assert_near(cost_hold_us(t, &nvl, 1e6), nvl.alpha_us + nvl_hold);
    prog_free(p);
    topo_free(t);
}

static void assert_refused(const prog *p, const topo *t, long long size, const char *what)
{
    double us = 42;
    tc_err e;
    memset(&e, 0, sizeof e);
    assert_int_equal(ptime_run(p, t, size, &us, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, what));
    assert_near(us, 42);
}

/* Two threadblocks of rank 0 share one end of a connection (chan 0 to
 * rank 1; a hazard the checker reports, which runs all the same), both
 * waiting on a copy: they take the connection's message slots in
 * threadblock order, so tb 1's message is the first rank 1 receives and
 * the first on the link (one lane): the copy, both hops in turn, and the
 * receiver's copy between its two receives where that is longer than a
 * hop.  Woken in another order, tb 2 would take the first slot while tb 1
 * is sent first, and the receiver would wait a hop longer. */
static void test_shared_end(void **state)
{
    (void)state;
    topo *t = ndv2();
    prog *p = prog_new("shared", COLL_ALLGATHER, 2, 4);
    prog_gpu *g0 = prog_add_gpu(p, 4, 4, 0);
    prog_add_step(prog_add_tb(g0, -1, -1, 0), ST_CPY, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    prog_add_step(prog_add_tb(g0, 1, -1, 0), ST_S, BUF_I, 0, BUF_O, 0, 1, 0, 0);
    prog_add_step(prog_add_tb(g0, 1, -1, 0), ST_S, BUF_I, 1, BUF_O, 1, 1, 0, 0);
    prog_tb *r = prog_add_tb(prog_add_gpu(p, 4, 4, 0), -1, 0, 0);
    prog_add_step(r, ST_R, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    prog_add_step(r, ST_CPY, BUF_O, 0, BUF_O, 2, 1, -1, -1);
    prog_add_step(r, ST_R, BUF_I, 1, BUF_O, 1, 1, -1, -1);
    double c = cost_copy_us(t, MB), h = hop(t, 0, 1, MB);
    assert_near(timed(p, t, 4 * MB), c + h + fmax(h, c));
    prog_free(p);
    topo_free(t);
}

static void test_errors(void **state)
{
    (void)state;
    topo *t = ndv2();
    /* 0 -> 7 has no link in an NDv2 node */
    prog *p = prog_new("noroute", COLL_ALLGATHER, 8, 1);
    for (int r = 0; r < 8; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 1, 0);
        if (r == 0)
            prog_add_step(prog_add_tb(g, 7, -1, 0), ST_S, BUF_I, 0, BUF_NONE, 0, 1, -1, -1);
        if (r == 7)
            prog_add_step(prog_add_tb(g, -1, 0, 0), ST_R, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    }
    assert_refused(p, t, MB, "no route from rank 0 to rank 7");
    prog_free(p);

    /* a receive nobody sends: rank 1 waits forever */
    p = one_send(1, 1);
    prog_add_step(&p->gpus[1].tbs[0], ST_R, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    assert_refused(p, t, MB, "cannot finish: 1 steps never run");
    prog_free(p);

    /* a dependency on a step that does not exist */
    p = one_send(1, 1);
    p->gpus[0].tbs[0].steps[0].depid = 0;
    p->gpus[0].tbs[0].steps[0].deps = 5;
    assert_refused(p, t, MB, "depends on a step that does not exist");
    prog_free(p);

    /* no size, no topology */
    p = one_send(1, 1);
    assert_refused(p, t, 0, "cannot time");
    assert_refused(p, NULL, MB, "cannot time");
    prog_free(p);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_hop),
        cmocka_unit_test(test_protocol),
        cmocka_unit_test(test_dependency_and_reduce),
        cmocka_unit_test(test_shared_nic),
        cmocka_unit_test(test_fifo_depth),
        cmocka_unit_test(test_alpha_delay),
        cmocka_unit_test(test_shared_end),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
