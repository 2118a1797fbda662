/* test_ptime.c — the time of a program by the cost model (sched/ptime):
 * hand-computed makespans for a hop, a dependency, a reduction on receive,
 * a NIC two senders share, the FIFO depth, alpha as a delay, two threadblocks on one
 * connection's end, random programs against the executor and the lower bound
 * (ptime_lower_us) against both timings, and the errors (no route, a
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

#include "exec/sim.h"
#include "model/cost.h"
#include "model/topo.h"
#include "sched/ptime.h"

#define MB 1000000LL

/* NDv2 x2 without its runtime latency: the hand-computed times below are
 * the hops' alone (test_runtime_latency adds it). */
static topo *ndv2(void)
{
    tc_err e;
    topo *t = topo_load("topologies/ndv2-x2.json", &e);
    if (!t)
        fail_msg("cannot load ndv2-x2: %s", e.msg);
    t->rt_latency = TOPO_RTLAT_NONE;
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

/* The runtime's latency (NDv2 as bundled, NCCL's): each of three sends in
 * a row over one NVLink holds it alpha + bytes / B, and lands NCCL's
 * Simple step latency (3.4 us) later, so the sends follow one another
 * without waiting for it and the last lands 3.4 us after its bytes; the
 * call adds NCCL's base latency (8.4 us Simple; 0.6 and 6.6 under LL). */
static void test_runtime_latency(void **state)
{
    (void)state;
    topo *t = ndv2();
    t->rt_latency = TOPO_RTLAT_NCCL;
    topo_route nvl = topo_route_of(t, 0, 1);
    double hold = nvl.alpha_us + 1e6 / (nvl.bw_gbps * 1e3);
    prog *p = prog_new("pipe", COLL_ALLGATHER, 2, 3);
    prog_tb *s = prog_add_tb(prog_add_gpu(p, 3, 3, 0), 1, -1, 0);
    prog_tb *r = prog_add_tb(prog_add_gpu(p, 3, 3, 0), -1, 0, 0);
    for (int k = 0; k < 3; k++) {
        prog_add_step(s, ST_S, BUF_I, k, BUF_NONE, 0, 1, -1, -1);
        prog_add_step(r, ST_R, BUF_NONE, 0, BUF_O, k, 1, -1, -1);
    }
    assert_near(timed(p, t, 3 * MB), 3 * hold + 3.4 + 8.4);
    snprintf(p->proto, sizeof p->proto, "LL");
    double ll = nvl.alpha_us * 0.6 / 3.4 + 1e6 / (nvl.bw_gbps * 0.5e3);
    assert_near(timed(p, t, 3 * MB), 3 * ll + 0.6 + 6.6);
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

/* ---- random programs: the prediction is the executor's time ----
 *
 * The plans and the synthesizer choose by ptime, taccl-run judges by
 * exec/sim: two event loops written apart.  Random valid programs (each
 * connection end on one threadblock, routes that exist) with several tbs
 * a rank, both directions on one tb, reductions, copies and cross-tb
 * dependencies, on machines of every kind bundled: both must agree on
 * whether the program finishes and, when it does, on its time. */
static unsigned long long lcg;
static int rnd(int n)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((lcg >> 33) % (unsigned)n);
}

static prog *random_prog(const topo *t, int *n_out)
{
    enum { R = 8, T = 5, C = 8 };
    int n = 2 + rnd(R - 1);
    if (n > t->nranks)
        n = t->nranks;
    prog *p = prog_new("random", COLL_ALLGATHER, n, C);
    int ntb[R], sp[R][T], rp[R][T], ch[R][T];
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, C, C * n, 0);
        ntb[r] = 1 + rnd(T - 1);
        for (int k = 0; k < ntb[r]; k++) {
            int s = rnd(n), q = rnd(n), c = rnd(2);
            for (int j = 0; j < k; j++) {  /* one tb per connection end */
                if (ch[r][j] == c && sp[r][j] == s)
                    s = r;
                if (ch[r][j] == c && rp[r][j] == q)
                    q = r;
            }
            if (s != r && topo_route_of(t, r, s).kind == ROUTE_NONE)
                s = r;
            if (q != r && topo_route_of(t, q, r).kind == ROUTE_NONE)
                q = r;
            sp[r][k] = s == r ? -1 : s;
            rp[r][k] = q == r ? -1 : q;
            ch[r][k] = c;
            prog_add_tb(g, sp[r][k], rp[r][k], c);
        }
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            for (int c = 0; c < 2; c++) {
                int S = -1, Q = -1;
                for (int k = 0; k < ntb[a]; k++)
                    if (sp[a][k] == b && ch[a][k] == c)
                        S = k;
                for (int k = 0; k < ntb[b]; k++)
                    if (rp[b][k] == a && ch[b][k] == c)
                        Q = k;
                if (S < 0 || Q < 0)
                    continue;
                for (int m = 1 + rnd(4); m > 0; m--) {
                    int cnt = 1 + rnd(2), off = rnd(C - cnt + 1);
                    prog_add_step(&p->gpus[a].tbs[S], ST_S, BUF_I, off, BUF_O, off, cnt, -1, -1);
                    prog_add_step(&p->gpus[b].tbs[Q], rnd(3) ? ST_R : ST_RRC, BUF_O, off, BUF_O,
                                  off, cnt, -1, -1);
                }
            }
    for (int r = 0; r < n; r++)
        for (int k = 0; k < ntb[r]; k++) {
            prog_tb *tb = &p->gpus[r].tbs[k];
            if (rnd(3) == 0)
                prog_add_step(tb, ST_CPY, BUF_I, 0, BUF_O, 0, 1, -1, -1);
            int o = rnd(ntb[r]);
            if (tb->nsteps > 1 && o != k && p->gpus[r].tbs[o].nsteps > 0 && rnd(2)) {
                tb->steps[tb->nsteps - 1].depid = o;
                tb->steps[tb->nsteps - 1].deps = rnd(p->gpus[r].tbs[o].nsteps);
            }
        }
    *n_out = n;
    return p;
}

static void test_random_agrees_with_sim(void **state)
{
    (void)state;
    static const char *const machines[] = {"ndv2-x2", "dgx-h100-x2", "dgx2-x2", "dgx-a100-x2",
                                           "torus-2d-4x4", "cs-chip4x2"};
    int compared = 0, refused = 0, bounded = 0;
    for (size_t mi = 0; mi < sizeof machines / sizeof *machines; mi++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.json", machines[mi]);
        tc_err e;
        topo *t = topo_load(path, &e);
        if (!t)
            fail_msg("cannot load %s: %s", path, e.msg);
        for (int it = 0; it < 1500; it++) {
            lcg = 7919ULL * (unsigned long long)it + 17 + 1000003ULL * mi;
            int n;
            prog *p = random_prog(t, &n);
            long long size = 8LL * n * 65536 * (1 + rnd(16));
            double pt = -1;
            tc_err e1, e2;
            int ok1 = ptime_run(p, t, size, &pt, &e1) == 0;
            sim_opts o;
            memset(&o, 0, sizeof o);
            o.size_bytes = size;
            sim_result sr;
            memset(&sr, 0, sizeof sr);
            hazard_list hz;
            memset(&hz, 0, sizeof hz);
            int ok2 = sim_run(p, t, &o, &sr, &hz, &e2) == 0 && sr.completed;
            hazard_list_free(&hz);
            if (ok1 != ok2)
                fail_msg("%s program %d: ptime %s, the executor %s (%s)", machines[mi], it,
                         ok1 ? "finishes" : "refuses", ok2 ? "finishes" : "does not",
                         ok1 ? "" : e1.msg);
            if (ok1 && !(fabs(pt - sr.time_us) <= 1e-9 * (1 + pt)))
                fail_msg("%s program %d (%d ranks, %lld B): ptime %.9g us, the executor %.9g us",
                         machines[mi], it, n, size, pt, sr.time_us);
            /* the lower bound a plan leaves candidates untimed by holds
             * in one pass and, for every 8th, in the runtimes' passes */
            double lo = -1;
            if (ok1 && (ptime_lower_us(p, t, size, 0, &lo, &e1) != 0 || !(lo <= pt * (1 + 1e-9))))
                fail_msg("%s program %d: lower bound %.9g us above its time %.9g us",
                         machines[mi], it, lo, pt);
            double tt = -1;
            if (ok1 && it % 8 == 0 && ptime_run_as(p, t, size, 1, &tt, &e1) == 0 &&
                (ptime_lower_us(p, t, size, 1, &lo, &e2) != 0 || !(lo <= tt * (1 + 1e-9))))
                fail_msg("%s program %d: lower bound %.9g us above its time in passes %.9g us",
                         machines[mi], it, lo, tt);
            bounded += ok1 && lo > 0.5 * pt;
            compared += ok1;
            refused += !ok1;
            sim_result_free(&sr);
            prog_free(p);
        }
        topo_free(t);
    }
    /* most programs finish; the deadlocked ones are refused by both */
    assert_true(compared > 8000);
    assert_true(refused > 0);
    assert_true(bounded > compared / 4);    /* and the bound is no trivial one */
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
        cmocka_unit_test(test_runtime_latency),
        cmocka_unit_test(test_shared_end),
        cmocka_unit_test(test_random_agrees_with_sim),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
