/* test_lower.c — lowering abstract algorithms to MSCCL programs.
 *
 * Every lowered program must be accepted by the judge (run_schedule: static
 * check, race check, execution with data), and where the hand-built
 * algorithm is timed exactly (alpha + s/B per send on the topology used,
 * no contention the algorithm does not account for) the simulated time
 * must match the algorithm's makespan within 2% — the acceptance test the
 * synthesizer relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/check.h"
#include "exec/run.h"
#include "exec/rtdep.h"
#include "sched/lower.h"
#include "sched/xml.h"
#include "model/cost.h"

/* ------------------------------------------------------------ helpers */

/* Cost of one send of `bytes` from a to b on t. */
static double hop(const topo *t, int a, int b, double bytes)
{
    topo_route r = topo_route_of(t, a, b);
    return cost_hop_us(&r, bytes);
}

static algo_send *send_at(algo *a, int origin, int index, int src, int dst, double ts, double dur)
{
    return algo_add_send(a, origin, index, src, dst, ts, ts + dur);
}

static double makespan(const algo *a)
{
    double m = 0;
    for (int i = 0; i < a->nsends; i++)
        if (a->sends[i].t_arrive > m)
            m = a->sends[i].t_arrive;
    return m;
}

static prog *lower_ok(const algo *a, const topo *t, const lower_opts *o)
{
    tc_err e = {0};
    prog *p = lower_algo(a, t, o, &e);
    if (!p)
        fail_msg("lower_algo failed: %s", e.msg);
    return p;
}

/* Judge p on t at `size`; fail with the first hazard unless verified.
 * Returns the simulated time. */
static double judge(const prog *p, const topo *t, long long size, int newer)
{
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = size;
    ro.target = newer ? RT_EXECUTOR : RT_ANY;
    run_report r;
    tc_err e = {0};
    assert_int_equal(run_schedule(p, t, &ro, &r, &e), TC_OK);
    if (!r.verified) {
        for (int i = 0; i < r.hz.n && i < 5; i++)
            print_message("hazard: %s\n", r.hz.v[i].msg);
        run_report_free(&r);
        fail_msg("schedule not verified");
    }
    double us = run_report_time_us(&r);
    run_report_free(&r);
    return us;
}

static void assert_close(double got, double want, double rel)
{
    if (fabs(got - want) > rel * want)
        fail_msg("simulated %.4f us, algorithm %.4f us (off by %.2f%%)", got, want,
                 100.0 * fabs(got - want) / want);
}

static const prog_tb *find_tb(const prog *p, int rank, int send, int recv)
{
    const prog_gpu *g = &p->gpus[rank];
    for (int t = 0; t < g->ntbs; t++)
        if (g->tbs[t].send == send && g->tbs[t].recv == recv)
            return &g->tbs[t];
    return NULL;
}

/* The tb of `rank` that sends to `send` on channel 0, whatever it receives. */
static const prog_tb *find_send_tb(const prog *p, int rank, int send)
{
    const prog_gpu *g = &p->gpus[rank];
    for (int t = 0; t < g->ntbs; t++)
        if (g->tbs[t].send == send && g->tbs[t].chan == 0)
            return &g->tbs[t];
    return NULL;
}

static int count_type(const prog *p, step_type ty)
{
    int n = 0;
    for (int g = 0; g < p->ngpu; g++)
        for (int t = 0; t < p->gpus[g].ntbs; t++)
            for (int s = 0; s < p->gpus[g].tbs[t].nsteps; s++)
                n += p->gpus[g].tbs[t].steps[s].type == ty;
    return n;
}

static int max_steps(const prog *p)
{
    int m = 0;
    for (int g = 0; g < p->ngpu; g++)
        for (int t = 0; t < p->gpus[g].ntbs; t++)
            if (p->gpus[g].tbs[t].nsteps > m)
                m = p->gpus[g].tbs[t].nsteps;
    return m;
}

static int static_hazards(const prog *p, int newer)
{
    check_limits lim;
    check_limits_for(&lim, newer ? RT_EXECUTOR : RT_MSCCL);
    hazard_list hz = {0};
    int n = check_program(p, &lim, &hz);
    for (int i = 0; i < hz.n && i < 5; i++)
        print_message("static: %s\n", hz.v[i].msg);
    hazard_list_free(&hz);
    return n;
}

enum { N4 = 4 };
/* 64 KiB per rank buffer over 4 chunks: 16 KiB chunks. */
#define SIZE4 (64LL * 1024)

/* Ring AllGather on n ranks, one chunk each: at step k rank r forwards the
 * chunk of rank r-k to r+1. */
static algo *ring_allgather(const topo *t, int n, double chunk_bytes)
{
    algo *a = algo_new(COLL_ALLGATHER, n, 1);
    double c = hop(t, 0, 1, chunk_bytes);
    for (int k = 0; k < n - 1; k++)
        for (int r = 0; r < n; r++)
            send_at(a, ((r - k) % n + n) % n, 0, r, (r + 1) % n, k * c, c);
    a->predicted_us = makespan(a);
    return a;
}

/* ------------------------------------------------------------ (1) ring AllGather */

static void test_ring_allgather_matches_makespan(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = ring_allgather(t, N4, SIZE4 / 4.0);
    lower_opts o;
    lower_opts_default(&o);
    o.size_bytes = SIZE4;
    prog *p = lower_ok(a, t, &o);
    assert_int_equal(p->nchunksperloop, 4);
    assert_int_equal(p->inplace, 0);
    assert_int_equal(p->outofplace, 1);
    assert_int_equal(p->size_bytes, SIZE4);
    assert_true(fabs(p->predicted_us - a->predicted_us) < 1e-12);
    /* The classic ring: one tb per rank receiving from r-1 and sending to
     * r+1, s then rcs, rcs, r. */
    for (int r = 0; r < N4; r++) {
        const prog_tb *tb = find_tb(p, r, (r + 1) % N4, (r + N4 - 1) % N4);
        assert_non_null(tb);
        assert_int_equal(tb->nsteps, 4);
        assert_int_equal(tb->steps[0].type, ST_S);
        assert_int_equal(tb->steps[1].type, ST_RCS);
        assert_int_equal(tb->steps[2].type, ST_RCS);
        assert_int_equal(tb->steps[3].type, ST_R);
        assert_int_equal(tb->steps[1].dstbuf, BUF_O);
    }
    assert_int_equal(count_type(p, ST_CPY), N4);
    double us = judge(p, t, SIZE4, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (2) direct AllGather */

static void test_direct_allgather_matches_makespan(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = algo_new(COLL_ALLGATHER, N4, 1);
    double c = hop(t, 0, 1, SIZE4 / 4.0);
    for (int r = 0; r < N4; r++)
        for (int d = 0; d < N4; d++)
            if (d != r)
                send_at(a, r, 0, r, d, 0, c);
    prog *p = lower_ok(a, t, NULL);
    /* a send tb per peer, a receive tb per peer and the local copy tb */
    for (int r = 0; r < N4; r++)
        assert_int_equal(p->gpus[r].ntbs, 2 * (N4 - 1) + 1);
    double us = judge(p, t, SIZE4, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (3) ndv2 x2 relays */

/* Earliest-start scheduling of one hop: after the chunk is ready and the
 * pair's previous send. */
typedef struct {
    const topo *t;
    double bytes;
    double *busy;       /* [n*n] per directed pair */
    double *arrive;     /* [n * n]: rank * n + origin */
    double nic_out[2], nic_in[2];
    int n;
} asap;

/* Earliest-start timing of one hop: after the chunk is there, the pair's
 * previous send and, between nodes, the NICs' previous transfers. */
static double asap_hop(asap *s, algo *a, int origin, int src, int dst)
{
    double ts = s->arrive[src * s->n + origin];
    double *b = &s->busy[src * s->n + dst];
    topo_route r = topo_route_of(s->t, src, dst);
    int ns = topo_node_of(s->t, src), nd = topo_node_of(s->t, dst);
    if (*b > ts)
        ts = *b;
    if (r.kind == ROUTE_NIC) {
        if (s->nic_out[ns] > ts)
            ts = s->nic_out[ns];
        if (s->nic_in[nd] > ts)
            ts = s->nic_in[nd];
    }
    double c = cost_hop_us(&r, s->bytes);
    send_at(a, origin, 0, src, dst, ts, c);
    *b = ts + c;
    if (r.kind == ROUTE_NIC)
        s->nic_out[ns] = s->nic_in[nd] = ts + c;
    if (ts + c < s->arrive[dst * s->n + origin])
        s->arrive[dst * s->n + origin] = ts + c;
    return ts + c;
}

static void test_ndv2_allgather_relays_through_destinations(void **state)
{
    (void)state;
    tc_err e = {0};
    const char *root = getenv("TACCL_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/topologies/ndv2-x2.json", root && *root ? root : ".");
    topo *t = topo_load(path, &e);
    if (!t)
        fail_msg("cannot load %s: %s", path, e.msg);
    t->rt_latency = TOPO_RTLAT_NONE;    /* asap_hop holds a hop until it lands */
    int n = 16;
    long long size = 16LL * 4096;
    algo *a = algo_new(COLL_ALLGATHER, n, 1);
    asap s = {t, (double)size / n, calloc((size_t)n * n, sizeof(double)),
              malloc((size_t)n * n * sizeof(double)), {0, 0}, {0, 0}, n};
    for (int i = 0; i < n * n; i++)
        s.arrive[i] = (i / n == i % n) ? 0 : INFINITY;
    /* every rank swaps its chunk with its peer in the other node (IB) */
    for (int r = 0; r < n; r++)
        asap_hop(&s, a, r, r, (r + 8) % n);
    /* then a ring inside each node over the hybrid cube-mesh's Hamiltonian
     * cycle, forwarding the own and the peer chunk of each rank (from o) */
    static const int ring[8] = {0, 1, 2, 3, 7, 6, 5, 4};
    for (int k = 1; k < 8; k++)
        for (int node = 0; node < 2; node++)
            for (int q = 0; q < 8; q++) {
                int src = node * 8 + ring[q], dst = node * 8 + ring[(q + 1) % 8];
                int from = node * 8 + ring[((q - k + 1) % 8 + 8) % 8];
                asap_hop(&s, a, from, src, dst);
                asap_hop(&s, a, (from + 8) % n, src, dst);
            }
    a->predicted_us = makespan(a);
    lower_opts o;
    lower_opts_default(&o);
    o.size_bytes = size;
    prog *p = lower_ok(a, t, &o);
    /* forwards from o fused into rcs in the ring tbs */
    assert_true(count_type(p, ST_RCS) > 0);
    assert_int_equal(static_hazards(p, 0), 0);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.02);
    /* in place as written, each rank's copy of its own chunk into o is a
     * copy onto itself that races the sends reading it; the in-place copy
     * drops it (a nop) and addresses o only, as msccl-tools writes one */
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = size;
    ro.mode = 1;
    run_report r;
    int inplace_was = p->inplace;
    p->inplace = 1;
    assert_int_equal(run_schedule(p, t, &ro, &r, &e), TC_OK);
    assert_false(r.verified);
    run_report_free(&r);
    p->inplace = inplace_was;
    prog *q = prog_inplace_copy(p);
    assert_non_null(q);
    assert_int_equal(q->inplace, 1);
    assert_int_equal(q->outofplace, 0);
    assert_int_equal(count_type(q, ST_CPY), 0);
    /* the copies that waited for nothing are gone, the rest are nops that
     * carry a wait, so every wait means to the runtimes what it says */
    assert_true(count_type(q, ST_NOP) < count_type(p, ST_NOP) + count_type(p, ST_CPY));
    for (int g = 0; g < q->ngpu; g++) {
        assert_int_equal(q->gpus[g].i_chunks, 0);
        for (int k = 0; k < q->gpus[g].ntbs; k++)
            for (int j = 0; j < q->gpus[g].tbs[k].nsteps; j++) {
                const prog_step *x = &q->gpus[g].tbs[k].steps[j];
                assert_true(x->srcbuf != BUF_I && x->dstbuf != BUF_I);
                assert_true(x->type != ST_NOP || x->depid >= 0);
            }
    }
    long long moved = -1;
    assert_null(rtdep_resolve(q, &moved));
    assert_int_equal(moved, 0);
    assert_int_equal(run_schedule(q, t, &ro, &r, &e), TC_OK);
    assert_true(r.verified);
    assert_true(run_report_time_us(&r) <= us * (1 + 1e-9));
    run_report_free(&r);
    prog_free(q);
    free(s.busy);
    free(s.arrive);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* In place, a copy of a rank's own chunk becomes a nop, and the runtimes
 * drop nops: a step that waited for that copy would wait for a step that
 * never signals (the runtime hangs).  The in-place copy moves each such
 * wait to what the copy stood for: nothing when the copy did nothing
 * else's waiting (the data is in place from the start), else the tb's last
 * step before it that does something and the copy's own dependency, one
 * extra nop per extra wait, steps renumbered. */
static void test_inplace_moves_waits_off_dead_copies(void **state)
{
    (void)state;
    /* 2-rank AllGather: tb0 copies i into o[r], tb1 sends o[r] after it,
     * tb2 receives the peer's chunk */
    prog *p = prog_new("ag2", COLL_ALLGATHER, 2, 2);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 2, 0);
        prog_tb *tb = prog_add_tb(g, -1, -1, 0);
        prog_add_step(tb, ST_CPY, BUF_I, 0, BUF_O, r, 1, -1, -1)->hasdep = 1;
        tb = prog_add_tb(g, 1 - r, -1, 0);
        prog_add_step(tb, ST_S, BUF_O, r, BUF_O, r, 1, 0, 0);
        tb = prog_add_tb(g, -1, 1 - r, 0);
        prog_add_step(tb, ST_R, BUF_O, 1 - r, BUF_O, 1 - r, 1, -1, -1);
    }
    topo *t = topo_default(2);
    long long size = 2LL * 4096;
    assert_int_equal(static_hazards(p, 0), 0);
    judge(p, t, size, 0);
    prog *q = prog_inplace_copy(p);
    assert_non_null(q);
    for (int r = 0; r < 2; r++) {
        /* the copy waited for nothing: left out, not a nop without a wait */
        assert_int_equal(q->gpus[r].tbs[0].nsteps, 0);
        /* the send waits for nothing: its chunk is in o from the start */
        assert_int_equal(q->gpus[r].tbs[1].nsteps, 1);
        assert_int_equal(q->gpus[r].tbs[1].steps[0].depid, -1);
    }
    assert_int_equal(static_hazards(q, 0), 0);
    tc_err e = {0};
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = size;
    run_report rr;
    assert_int_equal(run_schedule(q, t, &ro, &rr, &e), TC_OK);
    assert_true(rr.verified);
    run_report_free(&rr);
    prog_free(q);

    /* the copy waits for tb2's receive and follows a copy into s: the send
     * now waits for both (a nop for the receive, then the send itself for
     * tb0's step 0), and both are marked hasdep */
    for (int r = 0; r < 2; r++) {
        prog_tb *t0 = &p->gpus[r].tbs[0];
        t0->nsteps = 0;
        prog_add_step(t0, ST_CPY, BUF_I, 0, BUF_S, 0, 1, -1, -1);
        prog_add_step(t0, ST_CPY, BUF_I, 0, BUF_O, r, 1, 2, 0)->hasdep = 1;
        p->gpus[r].tbs[1].steps[0].deps = 1;
        p->gpus[r].s_chunks = 1;
    }
    q = prog_inplace_copy(p);
    assert_non_null(q);
    for (int r = 0; r < 2; r++) {
        const prog_tb *send = &q->gpus[r].tbs[1];
        assert_int_equal(send->nsteps, 2);
        assert_int_equal(send->steps[0].type, ST_NOP);
        assert_int_equal(send->steps[0].depid, 2);
        assert_int_equal(send->steps[0].deps, 0);
        assert_int_equal(send->steps[1].type, ST_S);
        assert_int_equal(send->steps[1].depid, 0);
        assert_int_equal(send->steps[1].deps, 0);
        assert_int_equal(q->gpus[r].tbs[0].steps[0].hasdep, 1);
        assert_int_equal(q->gpus[r].tbs[2].steps[0].hasdep, 1);
    }
    prog_free(q);
    prog_free(p);
    topo_free(t);
}

/* ------------------------------------------------------------ (4) AllToAll scratch relay */

static void test_alltoall_relays_through_scratch(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    /* 4 chunks per rank: chunk i of rank o goes to rank i's output o */
    algo *a = algo_new(COLL_ALLTOALL, N4, N4);
    long long size = 4LL * 16384;
    double c = hop(t, 0, 1, size / 4.0);
    for (int o = 0; o < N4; o++)
        for (int d = 0; d < N4; d++)
            if (d != o && !(o == 0 && d == 2))
                send_at(a, o, d, o, d, 0, c);
    /* chunk 0:2 goes 0 -> 1 -> 2, rank 1 only relays it */
    send_at(a, 0, 2, 0, 1, c, c);
    send_at(a, 0, 2, 1, 2, 2 * c, c);
    prog *p = lower_ok(a, t, NULL);
    assert_int_equal(p->nchunksperloop, N4);
    assert_int_equal(p->gpus[1].s_chunks, 1);
    assert_int_equal(p->gpus[0].s_chunks, 0);
    /* rank 1 receives it into scratch and forwards it in one rcs */
    const prog_tb *tb = find_tb(p, 1, 2, 0);
    assert_non_null(tb);
    int found = 0;
    for (int s = 0; s < tb->nsteps; s++)
        if (tb->steps[s].type == ST_RCS && tb->steps[s].dstbuf == BUF_S)
            found = 1;
    assert_true(found);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (5) contiguity */

static void test_group_becomes_one_step(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = algo_new(COLL_ALLGATHER, N4, 2);
    long long size = 8LL * 8192;
    double c2 = hop(t, 0, 1, 2.0 * size / 8);
    for (int r = 0; r < N4; r++)
        for (int d = 0; d < N4; d++)
            if (d != r) {
                send_at(a, r, 0, r, d, 0, c2)->group = 0;
                send_at(a, r, 1, r, d, 0, c2)->group = 0;
            }
    prog *p = lower_ok(a, t, NULL);
    const prog_tb *tb = find_tb(p, 0, 1, -1);
    assert_non_null(tb);
    assert_int_equal(tb->nsteps, 1);
    assert_int_equal(tb->steps[0].cnt, 2);
    assert_int_equal(tb->steps[0].srcbuf, BUF_I);
    assert_int_equal(tb->steps[0].srcoff, 0);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* A group that is contiguous only if the origin reads its own chunk from
 * o (after the local copy), and one that is not contiguous at the
 * destination at all (split into runs). */
static void test_group_contiguity_choices(void **state)
{
    (void)state;
    int n = 3;
    topo *t = topo_default(n);
    long long size = 3LL * 8192;
    double c = hop(t, 0, 1, size / 3.0), c2 = hop(t, 0, 1, 2.0 * size / 3.0);
    algo *a = algo_new(COLL_ALLGATHER, n, 1);
    send_at(a, 0, 0, 0, 1, 0, c);
    send_at(a, 1, 0, 1, 0, 0, c);
    send_at(a, 2, 0, 2, 0, 0, c);
    send_at(a, 2, 0, 2, 1, 0, c);
    /* rank 1 forwards chunk 0 with its own: o[0..1] at rank 2 */
    send_at(a, 0, 0, 1, 2, c, c2)->group = 7;
    send_at(a, 1, 0, 1, 2, c, c2)->group = 7;
    prog *p = lower_ok(a, t, NULL);
    const prog_tb *tb = find_tb(p, 1, 2, -1);
    assert_non_null(tb);
    const prog_step *last = &tb->steps[tb->nsteps - 1];
    assert_int_equal(last->type, ST_S);
    assert_int_equal(last->cnt, 2);
    assert_int_equal(last->srcbuf, BUF_O);
    assert_int_equal(last->srcoff, 0);
    judge(p, t, size, 0);
    prog_free(p);
    algo_free(a);

    /* rank 2 forwards chunk 0 (in its o[0]) with its own chunk 2 to rank 1,
     * which keeps them at o[0] and o[2]: not contiguous there, so two
     * steps. */
    a = algo_new(COLL_ALLGATHER, n, 1);
    send_at(a, 0, 0, 0, 2, 0, c);
    send_at(a, 1, 0, 1, 0, 0, c);
    send_at(a, 1, 0, 1, 2, 0, c);
    send_at(a, 2, 0, 2, 0, 0, c);
    send_at(a, 0, 0, 2, 1, c, c2)->group = 0;
    send_at(a, 2, 0, 2, 1, c, c2)->group = 0;
    p = lower_ok(a, t, NULL);
    tb = find_send_tb(p, 2, 1);
    assert_non_null(tb);
    int sends = 0;
    for (int s = 0; s < tb->nsteps; s++)
        if (step_sends(tb->steps[s].type)) {
            sends++;
            assert_int_equal(tb->steps[s].cnt, 1);
        }
    assert_int_equal(sends, 2);
    judge(p, t, size, 0);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* With the size known, a group that is not contiguous travels as one step
 * through scratch (local copies on both sides) instead of one step per run
 * when the copies cost less than the extra alphas. */
static void test_scattered_group_is_staged(void **state)
{
    (void)state;
    int n = 3;
    topo *t = topo_default(n);
    long long size = 3LL * 8192;
    double c = hop(t, 0, 1, size / 3.0), c2 = hop(t, 0, 1, 2.0 * size / 3.0);
    algo *a = algo_new(COLL_ALLGATHER, n, 1);
    send_at(a, 0, 0, 0, 2, 0, c);
    send_at(a, 1, 0, 1, 0, 0, c);
    send_at(a, 1, 0, 1, 2, 0, c);
    send_at(a, 2, 0, 2, 0, 0, c);
    send_at(a, 0, 0, 2, 1, c, c2)->group = 0;   /* o[0] and o[2] at rank 1 */
    send_at(a, 2, 0, 2, 1, c, c2)->group = 0;
    lower_opts o;
    lower_opts_default(&o);
    o.size_bytes = size;
    lower_note nt[6];
    o.notes = nt;
    prog *staged = lower_ok(a, t, &o);
    /* the notes say what happened to the group: one run, copied at both
     * ends (one chunk at copy bandwidth each); the other sends went whole */
    double copy_us = (size / 3.0) / (t->copy_gbps * 1e3);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(nt[i].run, 0);
        assert_true(nt[i].pre_us == 0 && nt[i].post_us == 0 && nt[i].place_us == 0);
    }
    for (int i = 4; i < 6; i++) {
        assert_int_equal(nt[i].run, 0);
        assert_true(nt[i].post_us == 0);
        assert_close(nt[i].place_us, copy_us, 1e-9);
        assert_true(nt[i].pre_us == 0 || fabs(nt[i].pre_us - copy_us) < 1e-9);
    }
    lower_opts_default(&o);
    o.notes = nt;
    prog *split = lower_ok(a, t, &o);
    /* without a size it splits: runs 0 and 1, no local work */
    assert_int_equal(nt[4].run + nt[5].run, 1);
    for (int i = 0; i < 6; i++)
        assert_true(nt[i].pre_us == 0 && nt[i].post_us == 0 && nt[i].place_us == 0);
    const prog_tb *tb = find_send_tb(staged, 2, 1);
    assert_non_null(tb);
    int copies = 0, sends = 0;
    for (int k = 0; k < tb->nsteps; k++) {
        copies += tb->steps[k].type == ST_CPY;
        if (tb->steps[k].type == ST_S) {
            sends++;
            assert_int_equal(tb->steps[k].cnt, 2);
            assert_int_equal(tb->steps[k].srcbuf, BUF_S);
        }
    }
    assert_int_equal(sends, 1);
    assert_true(copies >= 1);
    assert_true(staged->gpus[1].s_chunks >= 2);
    double ts = judge(staged, t, size, 0), tp = judge(split, t, size, 0);
    assert_true(ts < tp);
    assert_close(ts, makespan(a), 0.05);
    prog_free(staged);
    prog_free(split);
    algo_free(a);
    topo_free(t);
}

/* The same for partial sums: rank 0 sends its partials of chunks 1 and 3
 * (i[1], i[3]) together to rank 2, which adds its own and forwards each to
 * its owner. */
static void test_scattered_reduction_group_is_staged(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    long long size = 4LL * 8192;
    double c = hop(t, 0, 1, size / 4.0), c2 = hop(t, 0, 1, 2.0 * size / 4);
    algo *a = algo_new(COLL_REDUCESCATTER, N4, N4);
    for (int r = 1; r < N4; r++)
        send_at(a, 0, 0, r, 0, 0, c)->reduce = 1;
    send_at(a, 0, 2, 0, 2, c2, c)->reduce = 1;
    send_at(a, 0, 2, 1, 2, 0, c)->reduce = 1;
    send_at(a, 0, 2, 3, 2, 0, c)->reduce = 1;
    send_at(a, 0, 1, 3, 1, 0, c)->reduce = 1;
    send_at(a, 0, 3, 1, 3, 0, c)->reduce = 1;
    algo_send *g1 = send_at(a, 0, 1, 0, 2, 0, c2), *g3 = send_at(a, 0, 3, 0, 2, 0, c2);
    g1->reduce = g3->reduce = 1;
    g1->group = g3->group = 5;
    send_at(a, 0, 1, 2, 1, c2, c)->reduce = 1;
    send_at(a, 0, 3, 2, 3, c2, c)->reduce = 1;
    lower_opts o;
    lower_opts_default(&o);
    o.size_bytes = size;
    prog *p = lower_ok(a, t, &o);
    assert_true(count_type(p, ST_RE) >= 1);
    const prog_tb *tb = find_send_tb(p, 0, 2);
    assert_non_null(tb);
    int big = 0;
    for (int k = 0; k < tb->nsteps; k++)
        big += tb->steps[k].type == ST_S && tb->steps[k].cnt == 2;
    assert_int_equal(big, 1);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.05);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (6) two dependencies */

static void test_two_dependencies_get_a_nop(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    long long size = 4LL * 16384;
    double c = hop(t, 0, 1, size / 4.0), c2 = hop(t, 0, 1, 2.0 * size / 4);
    algo *a = algo_new(COLL_ALLTOALL, N4, N4);
    for (int o = 0; o < N4; o++)
        for (int d = 0; d < N4; d++) {
            if (d == o || ((o == 1 || o == 2) && d == 3))
                continue;
            double ts = (d == 0 && (o == 1 || o == 2)) ? c : 0;
            send_at(a, o, d, o, d, ts, c);
        }
    /* chunks 1:3 and 2:3 meet at rank 0 and leave together to rank 3 */
    send_at(a, 1, 3, 1, 0, 0, c);
    send_at(a, 2, 3, 2, 0, 0, c);
    send_at(a, 1, 3, 0, 3, c, c2)->group = 0;
    send_at(a, 2, 3, 0, 3, c, c2)->group = 0;
    prog *p = lower_ok(a, t, NULL);
    const prog_tb *tb = find_tb(p, 0, 3, -1);
    assert_non_null(tb);
    int k = -1;
    for (int s = 0; s < tb->nsteps; s++)
        if (tb->steps[s].type == ST_S && tb->steps[s].cnt == 2)
            k = s;
    assert_true(k >= 1);
    const prog_step *nop = &tb->steps[k - 1], *st = &tb->steps[k];
    assert_int_equal(st->srcbuf, BUF_S);
    assert_int_equal(nop->type, ST_NOP);
    assert_true(nop->depid >= 0 && st->depid >= 0 && nop->depid != st->depid);
    assert_int_equal(p->gpus[0].tbs[nop->depid].steps[nop->deps].hasdep, 1);
    assert_int_equal(p->gpus[0].tbs[st->depid].steps[st->deps].hasdep, 1);
    assert_int_equal(static_hazards(p, 0), 0);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (6b) switch ports */

/* Four ranks on one switch; one 10 kB chunk costs 1 + 1 = 2 us a hop. */
static const char *SWITCH4 =
    "{\"name\": \"switch4\", \"nodes\": 1, \"ranks_per_node\": 4,"
    " \"local\": {\"copy_gbps\": 400, \"reduce_gbps\": 300, \"source\": \"assumed: test\"},"
    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 1, \"bandwidth_gbps\": 10,"
    "   \"source\": \"assumed: test\"}]}";

static topo *switch4(void)
{
    tc_err e = {0};
    topo *t = topo_parse(SWITCH4, "switch4.json", &e);
    if (!t)
        fail_msg("switch4: %s", e.msg);
    return t;
}

/* A rank's sends through its one switch port go in the schedule's order,
 * not in the order of its tbs (one per peer, by peer id): the executor
 * serves a port first come first served, so without the lowering's chain
 * every tb would ask at once and the lowest peer would go first.  Here
 * rank r sends its chunk to r+1, r+2, r+3 in slots 0, 1, 2 — every in
 * port takes one chunk per slot, 3 slots in all. */
/* Lanes (algo.h): the ring's sends one after another on each pair stay
 * on one channel by their times; with a lane each (1, 2, 3 on every pair)
 * they take channels of their own, one tb per lane, and still verify. */
static void test_lanes_take_channels(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    for (int lanes = 0; lanes < 2; lanes++) {
        algo *a = ring_allgather(t, N4, SIZE4 / 4.0);
        int *cnt = calloc(N4 * N4, sizeof *cnt);
        for (int i = 0; lanes && i < a->nsends; i++)
            a->sends[i].lane = ++cnt[a->sends[i].src * N4 + a->sends[i].dst];
        free(cnt);
        lower_opts o;
        lower_opts_default(&o);
        o.size_bytes = SIZE4;
        prog *p = lower_ok(a, t, &o);
        assert_int_equal(p->nchannels, lanes ? 3 : 1);
        int sending = 0;
        for (int i = 0; i < p->gpus[0].ntbs; i++)
            sending += p->gpus[0].tbs[i].send == 1;
        assert_int_equal(sending, lanes ? 3 : 1);
        judge(p, t, SIZE4, 0);
        prog_free(p);
        algo_free(a);
    }
    topo_free(t);
}

static void test_switch_port_keeps_schedule_order(void **state)
{
    (void)state;
    topo *t = switch4();
    long long size = 4 * 10000;
    double c = hop(t, 0, 1, 10000);
    algo *a = algo_new(COLL_ALLGATHER, N4, 1);
    for (int r = 0; r < N4; r++)
        for (int k = 1; k < N4; k++)
            send_at(a, r, 0, r, (r + k) % N4, (k - 1) * c, c);
    a->predicted_us = makespan(a);
    prog *p = lower_ok(a, t, NULL);
    assert_int_equal(static_hazards(p, 0), 0);
    /* rank 1 sends to 2, 3, 0: its send to 0 (tb of the lowest peer) waits
     * for the one to 3 */
    const prog_tb *to0 = find_send_tb(p, 1, 0), *to3 = find_send_tb(p, 1, 3);
    assert_non_null(to0);
    assert_non_null(to3);
    const prog_step *last = &to0->steps[to0->nsteps - 1];
    assert_int_equal(last->type, ST_S);
    assert_int_equal(last->depid, to3->id);
    assert_int_equal(to3->steps[last->deps].hasdep, 1);
    double us = judge(p, t, size, 0);
    assert_close(us, 3 * c, 1e-9);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* A forward the schedule holds back behind another send on the same port
 * is a step of its own, not an rcs (an rcs sends the moment the data
 * arrives and would take the port out of turn).  Rank 1 gets chunk 0 in
 * slot 0, sends its own chunk to 3 in slot 1 and forwards chunk 0 to 2 in
 * slot 2; every slot uses each out and each in port once. */
static void test_held_back_forward_is_not_fused(void **state)
{
    (void)state;
    topo *t = switch4();
    long long size = 4 * 10000;
    double c = hop(t, 0, 1, 10000);
    algo *a = algo_new(COLL_ALLGATHER, N4, 1);
    /* slot 0 */
    send_at(a, 0, 0, 0, 1, 0, c);
    send_at(a, 1, 0, 1, 0, 0, c);
    send_at(a, 2, 0, 2, 3, 0, c);
    send_at(a, 3, 0, 3, 2, 0, c);
    /* slot 1 */
    send_at(a, 1, 0, 1, 3, c, c);
    send_at(a, 3, 0, 3, 0, c, c);
    send_at(a, 2, 0, 2, 1, c, c);
    send_at(a, 1, 0, 0, 2, c, c);       /* rank 0 relays chunk 1 to 2 */
    /* slot 2 */
    send_at(a, 0, 0, 1, 2, 2 * c, c);   /* the held-back forward */
    send_at(a, 0, 0, 0, 3, 2 * c, c);
    send_at(a, 2, 0, 2, 0, 2 * c, c);
    send_at(a, 3, 0, 3, 1, 2 * c, c);
    a->predicted_us = makespan(a);
    prog *p = lower_ok(a, t, NULL);
    assert_int_equal(static_hazards(p, 0), 0);
    const prog_gpu *g = &p->gpus[1];
    for (int k = 0; k < g->ntbs; k++)
        for (int s = 0; s < g->tbs[k].nsteps; s++)
            if (g->tbs[k].send == 2)
                assert_int_not_equal(g->tbs[k].steps[s].type, ST_RCS);
    double us = judge(p, t, size, 0);
    assert_close(us, 3 * c, 1e-9);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (7) limits */

/* Two ranks, m chunks each, sent one by one in sequence. */
static algo *long_exchange(const topo *t, int m, double chunk_bytes)
{
    algo *a = algo_new(COLL_ALLGATHER, 2, m);
    double c = hop(t, 0, 1, chunk_bytes);
    for (int i = 0; i < m; i++) {
        send_at(a, 0, i, 0, 1, i * c, c);
        send_at(a, 1, i, 1, 0, i * c, c);
    }
    return a;
}

static void test_long_connection_is_sliced(void **state)
{
    (void)state;
    topo *t = topo_default(2);
    int m = 300;
    long long size = 2LL * m * 1024;
    algo *a = long_exchange(t, m, 1024);
    prog *p = lower_ok(a, t, NULL);
    assert_true(max_steps(p) <= 256);
    assert_int_equal(p->nchannels, 2);
    assert_int_equal(static_hazards(p, 0), 0);
    double us = judge(p, t, size, 0);
    assert_close(us, makespan(a), 0.02);
    prog_free(p);

    lower_opts o;
    lower_opts_default(&o);
    o.runtime = RT_EXECUTOR;
    p = lower_ok(a, t, &o);
    assert_true(max_steps(p) <= 64);
    assert_int_equal(p->nchannels, 5);
    judge(p, t, size, 1);
    prog_free(p);

    o.runtime = RT_UNLIMITED;
    p = lower_ok(a, t, &o);
    assert_int_equal(p->nchannels, 1);
    assert_int_equal(max_steps(p), m);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

static void test_limits_refused_with_message(void **state)
{
    (void)state;
    topo *t = topo_default(2);
    algo *a = long_exchange(t, 2200, 1024);
    lower_opts o;
    lower_opts_default(&o);
    o.runtime = RT_EXECUTOR;
    tc_err e = {0};
    assert_null(lower_algo(a, t, &o, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "MAXCHANNELS"));
    algo_free(a);

    /* 33 instances */
    a = ring_allgather(t, 2, 1024);
    lower_opts_default(&o);
    o.instances = 33;
    assert_null(lower_algo(a, t, &o, &e));
    assert_non_null(strstr(e.msg, "instances"));
    algo_free(a);
    topo_free(t);
}

/* Rank 0 receives the chunk of each of `peers` ranks (3, 4, ...) and sends
 * every one on to ranks 1 and 2: each recv peer's tb is one that another
 * tb (a send to 1 or to 2: a tb has one send peer) waits on. */
static algo *fan_relay(int peers)
{
    algo *a = algo_new(COLL_ALLGATHER, peers + 3, 1);
    for (int p = 3; p < peers + 3; p++) {
        send_at(a, p, 0, p, 0, 0, 1);
        send_at(a, p, 0, 0, 1, 1, 1);
        send_at(a, p, 0, 0, 2, 2, 1);
    }
    return a;
}

static void test_depid_judged_before_stage2(void **state)
{
    (void)state;
    lower_opts o;
    lower_opts_default(&o);
    tc_err e = {0};
    algo *a = fan_relay(128);      /* 128 waited-on tbs: ids 0..127 fit */
    assert_int_equal(lower_precheck(a, &o, &e), TC_OK);
    algo_free(a);
    a = fan_relay(129);
    assert_int_equal(lower_precheck(a, &o, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "rank 0 sends on what 129 peers send it"));
    assert_non_null(strstr(e.msg, "depid <= 127"));
    assert_non_null(strstr(e.msg, "only --target unlimited"));
    o.runtime = RT_UNLIMITED;
    assert_int_equal(lower_precheck(a, &o, &e), TC_OK);
    algo_free(a);
    /* instances multiply them, and the message says which count fits */
    lower_opts_default(&o);
    o.instances = 3;
    a = fan_relay(50);
    assert_int_equal(lower_precheck(a, &o, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "150 tbs others wait on (x 3 instances)"));
    assert_non_null(strstr(e.msg, "at most --instances 2 can fit"));
    algo_free(a);
    /* tbs: a recv tb pairs only with a send that forwards what it got, so
     * 120 peers each way with nothing forwarded are 240 tbs, not 120 */
    a = algo_new(COLL_ALLTOALL, 121, 121);
    for (int p = 1; p <= 120; p++) {
        send_at(a, 0, p, 0, p, 0, 1);
        send_at(a, p, 0, p, 0, 0, 1);
    }
    lower_opts_default(&o);
    assert_int_equal(lower_precheck(a, &o, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "rank 0 needs at least 240 tbs (120 send and 120 recv peers, "
                                  "at most 0 paired)"));
    assert_non_null(strstr(e.msg, "--target msccl-executor (1024 per GPU)"));
    o.runtime = RT_EXECUTOR;
    assert_int_equal(lower_precheck(a, &o, &e), TC_OK);
    algo_free(a);
    /* a relay to one rank only can share its tb: not counted */
    a = algo_new(COLL_ALLGATHER, 203, 1);
    for (int p = 3; p < 203; p++) {
        send_at(a, p, 0, p, 0, 0, 1);
        send_at(a, p, 0, 0, 1, 1, 1);
    }
    lower_opts_default(&o);
    assert_int_equal(lower_precheck(a, &o, &e), TC_OK);
    algo_free(a);
}

/* ------------------------------------------------------------ (8) instances */

static void test_instances_replicate(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = ring_allgather(t, N4, 8192);
    lower_opts o;
    lower_opts_default(&o);
    o.instances = 2;
    prog *p = lower_ok(a, t, &o);
    assert_int_equal(p->nchunksperloop, 8);
    assert_int_equal(p->nchannels, 2);
    assert_int_equal(p->gpus[0].i_chunks, 2);
    assert_int_equal(p->gpus[0].o_chunks, 8);
    judge(p, t, 8LL * 8192, 0);
    prog_free(p);
    algo_free(a);

    /* groups (cnt 2) and scratch relays under 2 instances */
    a = algo_new(COLL_ALLTOALL, N4, 2 * N4);
    double c = hop(t, 0, 1, 4096), c2 = hop(t, 0, 1, 8192);
    for (int o2 = 0; o2 < N4; o2++)
        for (int d = 0; d < N4; d++)
            if (d != o2 && !(o2 == 0 && d == 2)) {
                send_at(a, o2, 2 * d, o2, d, 0, c2)->group = 1;
                send_at(a, o2, 2 * d + 1, o2, d, 0, c2)->group = 1;
            }
    send_at(a, 0, 4, 0, 1, c2, c2)->group = 2;
    send_at(a, 0, 5, 0, 1, c2, c2)->group = 2;
    send_at(a, 0, 4, 1, 2, 2 * c2, c2)->group = 3;
    send_at(a, 0, 5, 1, 2, 2 * c2, c2)->group = 3;
    (void)c;
    p = lower_ok(a, t, &o);
    assert_int_equal(p->nchunksperloop, 16);
    assert_int_equal(p->gpus[1].s_chunks, 4);
    judge(p, t, 16LL * 4096, 0);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ (9) determinism */

static void test_lowering_is_deterministic(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = ring_allgather(t, N4, 4096);
    lower_opts o;
    lower_opts_default(&o);
    o.size_bytes = 4 * 4096;
    xml_write_opts wo = {0};
    tc_err e = {0};
    prog *p1 = lower_ok(a, t, &o), *p2 = lower_ok(a, t, &o);
    char *x1 = prog_to_xml(p1, &wo, &e), *x2 = prog_to_xml(p2, &wo, &e);
    assert_non_null(x1);
    assert_non_null(x2);
    assert_string_equal(x1, x2);
    /* and the text reads back to a program the judge accepts */
    prog *back = prog_parse_xml(x1, strlen(x1), "lowered", &e);
    if (!back)
        fail_msg("%s", e.msg);
    judge(back, t, 4 * 4096, 0);
    prog_free(back);
    free(x1);
    free(x2);
    prog_free(p1);
    prog_free(p2);
    algo_free(a);
    topo_free(t);
}

/* ------------------------------------------------------------ overlap, reductions, errors */

static void test_overlapping_sends_use_channels(void **state)
{
    (void)state;
    topo *t = topo_default(2);
    algo *a = algo_new(COLL_ALLGATHER, 2, 2);
    double c = hop(t, 0, 1, 4096);
    for (int i = 0; i < 2; i++) {
        send_at(a, 0, i, 0, 1, 0, c);
        send_at(a, 1, i, 1, 0, 0, c);
    }
    prog *p = lower_ok(a, t, NULL);
    assert_int_equal(p->nchannels, 2);
    judge(p, t, 4LL * 4096, 0);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

/* Ring ReduceScatter: at step s rank r adds chunk r-s-1 into what it got. */
static void add_ring_rs(algo *a, const topo *t, int n, double bytes)
{
    double c = hop(t, 0, 1, bytes);
    for (int s = 0; s < n - 1; s++)
        for (int r = 0; r < n; r++)
            send_at(a, 0, ((r - s - 1) % n + 2 * n) % n, r, (r + 1) % n, s * c, c)->reduce = 1;
}

static void test_ring_reducescatter(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = algo_new(COLL_REDUCESCATTER, N4, N4);
    add_ring_rs(a, t, N4, 16384);
    prog *p = lower_ok(a, t, NULL);
    assert_int_equal(p->nchunksperloop, N4);
    assert_true(count_type(p, ST_RRCS) > 0);
    double us = judge(p, t, 4LL * 16384, 0);
    assert_close(us, makespan(a), 0.05);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

static void test_ring_allreduce(void **state)
{
    (void)state;
    topo *t = topo_default(N4);
    algo *a = algo_new(COLL_ALLREDUCE, N4, N4);
    add_ring_rs(a, t, N4, 16384);
    double c = hop(t, 0, 1, 16384);
    /* after the reduce-scatter rank r holds chunk r complete */
    for (int s = 0; s < N4 - 1; s++)
        for (int r = 0; r < N4; r++)
            send_at(a, 0, ((r - s) % N4 + N4) % N4, r, (r + 1) % N4, (N4 - 1 + s) * c, c);
    prog *p = lower_ok(a, t, NULL);
    double us = judge(p, t, 4LL * 16384, 0);
    assert_close(us, makespan(a), 0.05);
    prog_free(p);
    algo_free(a);
    topo_free(t);
}

static void test_bad_algorithms_refused(void **state)
{
    (void)state;
    topo *t = topo_default(3);
    tc_err e = {0};
    /* forwarded before it arrives */
    algo *a = algo_new(COLL_ALLGATHER, 3, 1);
    send_at(a, 0, 0, 0, 1, 0, 1);
    send_at(a, 0, 0, 1, 2, 0.5, 1);
    send_at(a, 1, 0, 1, 0, 0, 1);
    send_at(a, 1, 0, 1, 2, 0, 1);
    send_at(a, 2, 0, 2, 0, 0, 1);
    send_at(a, 2, 0, 2, 1, 0, 1);
    assert_null(lower_algo(a, t, NULL, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "before it arrives"));
    algo_free(a);
    /* a destination never served */
    a = algo_new(COLL_ALLGATHER, 3, 1);
    send_at(a, 0, 0, 0, 1, 0, 1);
    assert_null(lower_algo(a, t, NULL, &e));
    assert_non_null(strstr(e.msg, "never reaches"));
    algo_free(a);
    /* reduce in a collective that does not reduce */
    a = algo_new(COLL_ALLGATHER, 3, 1);
    send_at(a, 0, 0, 0, 1, 0, 1)->reduce = 1;
    assert_null(lower_algo(a, t, NULL, &e));
    assert_non_null(strstr(e.msg, "reduce=1"));
    algo_free(a);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_allgather_matches_makespan),
        cmocka_unit_test(test_direct_allgather_matches_makespan),
        cmocka_unit_test(test_ndv2_allgather_relays_through_destinations),
        cmocka_unit_test(test_alltoall_relays_through_scratch),
        cmocka_unit_test(test_group_becomes_one_step),
        cmocka_unit_test(test_group_contiguity_choices),
        cmocka_unit_test(test_scattered_group_is_staged),
        cmocka_unit_test(test_scattered_reduction_group_is_staged),
        cmocka_unit_test(test_two_dependencies_get_a_nop),
        cmocka_unit_test(test_lanes_take_channels),
        cmocka_unit_test(test_switch_port_keeps_schedule_order),
        cmocka_unit_test(test_held_back_forward_is_not_fused),
        cmocka_unit_test(test_long_connection_is_sliced),
        cmocka_unit_test(test_limits_refused_with_message),
        cmocka_unit_test(test_depid_judged_before_stage2),
        cmocka_unit_test(test_instances_replicate),
        cmocka_unit_test(test_lowering_is_deterministic),
        cmocka_unit_test(test_overlapping_sends_use_channels),
        cmocka_unit_test(test_ring_reducescatter),
        cmocka_unit_test(test_ring_allreduce),
        cmocka_unit_test(test_bad_algorithms_refused),
        cmocka_unit_test(test_inplace_moves_waits_off_dead_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
