/* test_race.c — ordering hazards decided from the schedule alone: data races
 * between tbs of a rank, reads of chunks nothing wrote, deadlock cycles, and
 * the work budget that keeps huge schedules affordable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exec/race.h"
#include "sched/program.h"

#ifdef RACE_ISOLATED
/* Only for building this test without src/model/topo.c. */
void topo_free(topo *t) { (void)t; }
#endif

/* ---------------------------------------------------------------- helpers */

static prog_tb *tb_at(prog *p, int r, int t) { return &p->gpus[r].tbs[t]; }

static prog_step *add(prog *p, int r, int t, step_type ty, buf_kind sb, int so, buf_kind db, int dof, int cnt)
{
    return prog_add_step(tb_at(p, r, t), ty, sb, so, db, dof, cnt, -1, -1);
}

/* Make step (r, t, s) wait for (r, dt, ds), which gets hasdep. */
static void dep_on(prog *p, int r, int t, int s, int dt, int ds)
{
    tb_at(p, r, t)->steps[s].depid = dt;
    tb_at(p, r, t)->steps[s].deps = ds;
    tb_at(p, r, dt)->steps[ds].hasdep = 1;
}

static int count_kind(const hazard_list *h, hazard_kind k)
{
    int n = 0;
    for (int i = 0; i < h->n; i++)
        n += h->v[i].kind == k;
    return n;
}

static int has_msg(const hazard_list *h, hazard_kind k, const char *msg)
{
    for (int i = 0; i < h->n; i++)
        if (h->v[i].kind == k && strcmp(h->v[i].msg, msg) == 0)
            return 1;
    return 0;
}

static void dump(const hazard_list *h)
{
    for (int i = 0; i < h->n; i++)
        print_message("  [%s] %s\n", hazard_kind_name(h->v[i].kind), h->v[i].msg);
}

/* Ring AllGather, one tb per rank (send next, recv prev).  Out of place it
 * first copies i[0] to o[r]; the in-place form sends o[r] directly. */
static prog *ring_one_tb(int n, int inplace_form)
{
    prog *p = prog_new("ring", COLL_ALLGATHER, n, n);
    for (int r = 0; r < n; r++)
        prog_add_gpu(p, 1, n, 0);
    for (int r = 0; r < n; r++) {
        prog_add_tb(&p->gpus[r], (r + 1) % n, (r - 1 + n) % n, 0);
        if (!inplace_form)
            add(p, r, 0, ST_CPY, BUF_I, 0, BUF_O, r, 1);
        add(p, r, 0, ST_S, BUF_O, r, BUF_NONE, -1, 1);
        for (int k = 1; k <= n - 2; k++)
            add(p, r, 0, ST_RCS, BUF_NONE, -1, BUF_O, (r - k + n) % n, 1);
        add(p, r, 0, ST_R, BUF_NONE, -1, BUF_O, (r + 1) % n, 1);
    }
    return p;
}

/* Ring AllGather with a send tb (tb 0) and a receive tb (tb 1) per rank:
 * tb 0 forwards, at send k >= 1, the chunk tb 1 received at recv k-1.
 * with_dep: each forward waits for that receive (correct); without, the
 * forward races with the receive. */
static prog *ring_two_tbs(int n, int with_dep)
{
    prog *p = prog_new("ring2", COLL_ALLGATHER, n, n);
    for (int r = 0; r < n; r++)
        prog_add_gpu(p, 1, n, 0);
    for (int r = 0; r < n; r++) {
        prog_add_tb(&p->gpus[r], (r + 1) % n, -1, 0);
        prog_add_tb(&p->gpus[r], -1, (r - 1 + n) % n, 0);
        add(p, r, 0, ST_CPY, BUF_I, 0, BUF_O, r, 1);
        add(p, r, 0, ST_S, BUF_O, r, BUF_NONE, -1, 1);
        for (int k = 1; k <= n - 2; k++)
            add(p, r, 0, ST_S, BUF_O, (r - k + n) % n, BUF_NONE, -1, 1);
        for (int k = 0; k <= n - 2; k++)
            add(p, r, 1, ST_R, BUF_NONE, -1, BUF_O, (r - 1 - k + 2 * n) % n, 1);
        if (with_dep)
            for (int k = 1; k <= n - 2; k++)
                dep_on(p, r, 0, k + 1, 1, k - 1);
    }
    return p;
}

/* Rank 0: tb 0 writes o[0] and sends it to rank 1; tb 1 receives from
 * rank 1, then reads o[0].  Rank 1 (one tb): chained = receive, then send
 * back, so rank 0's two tbs are ordered through rank 1; otherwise rank 1
 * sends before it receives and nothing orders them. */
static prog *via_other_rank(int chained)
{
    prog *p = prog_new("chain", COLL_ALLGATHER, 2, 2);
    prog_add_gpu(p, 1, 2, 1);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_tb(&p->gpus[0], 1, -1, 0);
    prog_add_tb(&p->gpus[0], -1, 1, 0);
    prog_add_tb(&p->gpus[1], 0, 0, 0);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    add(p, 0, 0, ST_S, BUF_O, 0, BUF_NONE, -1, 1);
    add(p, 0, 1, ST_R, BUF_NONE, -1, BUF_O, 1, 1);
    add(p, 0, 1, ST_CPY, BUF_O, 0, BUF_S, 0, 1);
    add(p, 1, 0, ST_CPY, BUF_I, 0, BUF_O, 1, 1);
    if (chained) {
        add(p, 1, 0, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
        add(p, 1, 0, ST_S, BUF_O, 1, BUF_NONE, -1, 1);
    } else {
        add(p, 1, 0, ST_S, BUF_O, 1, BUF_NONE, -1, 1);
        add(p, 1, 0, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
    }
    return p;
}

/* One rank, two tbs without peers. */
static prog *one_rank(int s_chunks)
{
    prog *p = prog_new("local", COLL_ALLREDUCE, 1, 1);
    prog_add_gpu(p, 1, 1, s_chunks);
    prog_add_tb(&p->gpus[0], -1, -1, 0);
    prog_add_tb(&p->gpus[0], -1, -1, 1);
    return p;
}

static int run(const prog *p, int inplace, long long budget, hazard_list *h, race_stats *st)
{
    memset(h, 0, sizeof *h);
    int n = race_check(p, inplace, budget, h, st);
    assert_int_equal(n, h->n);
    if (st)
        race_stats_free(st);    /* the tests read the counts, not the mask */
    return n;
}

/* ------------------------------------------------------------------ tests */

static void test_ring_allgather_clean(void **state)
{
    (void)state;
    prog *p = ring_one_tb(3, 0);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    assert_string_equal(st.skipped_why, "");
    hazard_list_free(&h);
    prog_free(p);
}

static void test_recv_send_race_detected(void **state)
{
    (void)state;
    prog *p = ring_two_tbs(3, 0);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(st.checked, 1);
    assert_int_equal(count_kind(&h, HZ_RACE), 3);
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 0 tb 0 step 2: reads o[2] while tb 1 step 0 writes it with no "
                        "dependency or send/recv chain ordering them"));
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 1 tb 0 step 2: reads o[0] while tb 1 step 0 writes it with no "
                        "dependency or send/recv chain ordering them"));
    /* The forward also sends a chunk no write is ordered before. */
    assert_int_equal(count_kind(&h, HZ_UNINIT), 3);
    assert_true(has_msg(&h, HZ_UNINIT,
                        "rank 2 tb 0 step 2: sends o[1] before anything has written it: no "
                        "write of that chunk happens before this step"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_dependency_orders_recv_before_send(void **state)
{
    (void)state;
    prog *p = ring_two_tbs(3, 1);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    assert_true(st.work > 0);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_chain_through_other_rank_orders(void **state)
{
    (void)state;
    prog *p = via_other_rank(1);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    hazard_list_free(&h);
    prog_free(p);

    p = via_other_rank(0);
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(count_kind(&h, HZ_RACE), 1);
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 0 tb 0 step 0: writes o[0] while tb 1 step 1 reads it with no "
                        "dependency or send/recv chain ordering them"));
    assert_int_equal(count_kind(&h, HZ_UNINIT), 1);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_two_tbs_write_scratch(void **state)
{
    (void)state;
    prog *p = one_rank(1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    add(p, 0, 1, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 0 tb 0 step 0: writes o[0] while tb 1 step 0 writes it with no "
                        "dependency or send/recv chain ordering them"));
    assert_int_equal(h.v[0].rank, 0);
    assert_int_equal(h.v[0].tb, 0);
    assert_int_equal(h.v[0].step, 0);
    assert_false(h.v[0].warning);   /* either write may be the result */
    assert_int_equal(st.dead_steps, 0);
    hazard_list_free(&h);
    race_stats_free(&st);

    /* Ordered by a dependency: clean. */
    dep_on(p, 0, 1, 0, 0, 0);
    run(p, 0, 0, &h, &st);
    assert_int_equal(h.n, 0);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_pair_reported_once(void **state)
{
    (void)state;
    /* Two steps clashing on two chunks are one race, named by the first. */
    prog *p = prog_new("twice", COLL_ALLREDUCE, 1, 1);
    prog_add_gpu(p, 1, 2, 2);
    prog_add_tb(&p->gpus[0], -1, -1, 0);
    prog_add_tb(&p->gpus[0], -1, -1, 1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, 0, 1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, 1, 1);
    add(p, 0, 0, ST_RE, BUF_S, 0, BUF_S, 0, 2);   /* reads and writes s[0..1] */
    add(p, 0, 1, ST_CPY, BUF_S, 0, BUF_O, 0, 2);  /* reads s[0..1] */
    dep_on(p, 0, 1, 0, 0, 1);                      /* after the copies, not the re */
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 0 tb 0 step 2: writes s[0] while tb 1 step 0 reads it with no "
                        "dependency or send/recv chain ordering them"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_scratch_never_written(void **state)
{
    (void)state;
    prog *p = one_rank(1);
    add(p, 0, 0, ST_CPY, BUF_S, 0, BUF_O, 0, 1);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_UNINIT,
                        "rank 0 tb 0 step 0: reads s[0] before anything has written it: no "
                        "write of that chunk happens before this step"));
    hazard_list_free(&h);
    prog_free(p);

    /* re reads its destination too: accumulating into empty scratch. */
    p = one_rank(1);
    add(p, 0, 0, ST_RE, BUF_I, 0, BUF_S, 0, 1);
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    /* Nothing reads that scratch afterwards: dead traffic, a warning. */
    assert_true(has_msg(&h, HZ_UNINIT,
                        "rank 0 tb 0 step 0: reads s[0] before anything has written it: no "
                        "write of that chunk happens before this step (dead traffic: its data "
                        "reaches no result)"));
    assert_true(h.v[0].warning);
    assert_int_equal(st.dead_steps, 1);
    race_stats_free(&st);
    hazard_list_free(&h);
    prog_free(p);
}

/* The slice: a write covered by a later write before every live read is
 * dead, so a race between two such writes is a warning; without the cover
 * either write may be what the live read sees, and the race is an error. */
static void test_race_on_overwritten_scratch(void **state)
{
    (void)state;
    prog *p = one_rank(1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, 0, 1);   /* W1 */
    add(p, 0, 1, ST_CPY, BUF_I, 0, BUF_S, 0, 1);   /* W2: races with W1 */
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, 0, 1);   /* W3, after W1 and W2 */
    add(p, 0, 0, ST_CPY, BUF_S, 0, BUF_O, 0, 1);   /* the live read */
    dep_on(p, 0, 0, 1, 1, 0);
    hazard_list h;
    race_stats st;
    memset(&h, 0, sizeof h);
    race_check(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.v[0].kind, HZ_RACE);
    assert_true(h.v[0].warning);
    assert_int_equal(st.dead_steps, 2);
    assert_int_equal(st.steps, 4);
    assert_int_equal(st.dead[0], 1);    /* W1 */
    assert_int_equal(st.dead[1], 0);    /* W3 */
    assert_int_equal(st.dead[3], 1);    /* W2 (tb 1) */
    hazard_list_free(&h);
    race_stats_free(&st);

    /* W3 no longer waits for W2: W2 may be the value read. */
    tb_at(p, 0, 0)->steps[1].depid = -1;
    tb_at(p, 0, 0)->steps[1].deps = -1;
    memset(&h, 0, sizeof h);
    race_check(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(hazard_errors(&h, 0), h.n);   /* every race is an error now */
    assert_true(count_kind(&h, HZ_RACE) >= 2);
    assert_int_equal(st.dead_steps, 1);             /* W1 alone is covered, by W3 */
    hazard_list_free(&h);
    race_stats_free(&st);
    prog_free(p);
}

static void test_read_before_recv_in_same_tb(void **state)
{
    (void)state;
    prog *p = prog_new("early", COLL_ALLGATHER, 2, 2);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_tb(&p->gpus[0], 1, 1, 0);
    prog_add_tb(&p->gpus[1], 0, 0, 0);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    add(p, 0, 0, ST_S, BUF_O, 1, BUF_NONE, -1, 1);  /* o[1] not received yet */
    add(p, 0, 0, ST_R, BUF_NONE, -1, BUF_O, 1, 1);
    add(p, 1, 0, ST_CPY, BUF_I, 0, BUF_O, 1, 1);
    add(p, 1, 0, ST_S, BUF_O, 1, BUF_NONE, -1, 1);
    add(p, 1, 0, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_UNINIT,
                        "rank 0 tb 0 step 1: sends o[1] before anything has written it: no "
                        "write of that chunk happens before this step"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_inplace_input_aliases_output(void **state)
{
    (void)state;
    /* In place, o[r] is the input: sending it needs no earlier write. */
    prog *p = ring_one_tb(3, 1);
    hazard_list h;
    race_stats st;
    run(p, 1, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 0);
    hazard_list_free(&h);
    /* Out of place the same program sends empty chunks. */
    run(p, 0, 0, &h, &st);
    assert_int_equal(count_kind(&h, HZ_UNINIT), 3);
    assert_true(has_msg(&h, HZ_UNINIT,
                        "rank 1 tb 0 step 0: sends o[1] before anything has written it: no "
                        "write of that chunk happens before this step"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_inplace_alias_race(void **state)
{
    (void)state;
    /* AllGather on one rank in place: i[0] is o[0].  tb 0 reads i[0] while
     * tb 1 copies onto o[0]. */
    prog *p = prog_new("alias", COLL_ALLGATHER, 1, 1);
    prog_add_gpu(p, 1, 1, 1);
    prog_add_tb(&p->gpus[0], -1, -1, 0);
    prog_add_tb(&p->gpus[0], -1, -1, 1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, 0, 1);
    add(p, 0, 1, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    hazard_list h;
    race_stats st;
    run(p, 1, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_RACE,
                        "rank 0 tb 0 step 0: reads i[0] while tb 1 step 0 writes it (as o[0]) "
                        "with no dependency or send/recv chain ordering them"));
    hazard_list_free(&h);
    run(p, 0, 0, &h, &st);
    assert_int_equal(h.n, 0);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_dependency_cycle_deadlocks(void **state)
{
    (void)state;
    prog *p = one_rank(0);
    prog_add_step(tb_at(p, 0, 0), ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 1, 0);
    prog_add_step(tb_at(p, 0, 1), ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 0);
    tb_at(p, 0, 0)->steps[0].hasdep = 1;
    tb_at(p, 0, 1)->steps[0].hasdep = 1;
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_true(has_msg(&h, HZ_DEADLOCK,
                        "rank 0 tb 0 step 0: deadlock: a cycle of 2 steps: this step waits for "
                        "rank 0 tb 1 step 0 (its dependency), which waits for this step (its "
                        "dependency); 2 of 2 steps can never run"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_crossing_sends_deadlock(void **state)
{
    (void)state;
    /* Both ranks receive before they send. */
    prog *p = prog_new("cross", COLL_ALLGATHER, 2, 2);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_gpu(p, 1, 2, 0);
    for (int r = 0; r < 2; r++) {
        prog_add_tb(&p->gpus[r], 1 - r, 1 - r, 0);
        add(p, r, 0, ST_CPY, BUF_I, 0, BUF_O, r, 1);
        add(p, r, 0, ST_R, BUF_NONE, -1, BUF_O, 1 - r, 1);
        add(p, r, 0, ST_S, BUF_O, r, BUF_NONE, -1, 1);
    }
    hazard_list h;
    race_stats st;
    run(p, 0, 0, &h, &st);
    dump(&h);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.v[0].kind, HZ_DEADLOCK);
    assert_int_equal(h.v[0].rank, 0);
    assert_int_equal(h.v[0].tb, 0);
    assert_int_equal(h.v[0].step, 1);
    assert_non_null(strstr(h.v[0].msg, "a cycle of 4 steps"));
    assert_non_null(strstr(h.v[0].msg, "(the send it receives)"));
    assert_non_null(strstr(h.v[0].msg, "4 of 6 steps can never run"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_step_waiting_on_itself(void **state)
{
    (void)state;
    prog *p = one_rank(0);
    add(p, 0, 0, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0);
    prog_add_step(tb_at(p, 0, 0), ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 1);
    hazard_list h;
    run(p, 0, 0, &h, NULL);
    assert_int_equal(count_kind(&h, HZ_DEADLOCK), 1);
    assert_non_null(strstr(h.v[0].msg, "rank 0 tb 0 step 1: deadlock: a cycle of 1 step:"));
    hazard_list_free(&h);
    prog_free(p);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_large_rings_fast_and_clean(void **state)
{
    (void)state;
    hazard_list h;
    race_stats st;
    /* One tb per rank: nothing can race, no clock work at all. */
    prog *p = ring_one_tb(256, 0);
    double t0 = seconds();
    run(p, 0, 0, &h, &st);
    double t1 = seconds();
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    assert_true(st.work == 0);
    assert_true(t1 - t0 < 2.0);
    hazard_list_free(&h);
    prog_free(p);
    /* Send and receive tbs: every pair is settled on its own rank. */
    p = ring_two_tbs(256, 1);
    t0 = seconds();
    run(p, 0, 0, &h, &st);
    t1 = seconds();
    dump(&h);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    assert_true(st.work > 0 && st.work < 1000000);
    assert_true(t1 - t0 < 2.0);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_budget_skips_races_keeps_uninit(void **state)
{
    (void)state;
    hazard_list h;
    race_stats st;
    prog *p = ring_two_tbs(3, 0);
    run(p, 0, 1, &h, &st);
    dump(&h);
    assert_int_equal(st.checked, 0);
    assert_non_null(strstr(st.skipped_why, "races not checked"));
    assert_non_null(strstr(st.skipped_why, "budget 1"));
    assert_int_equal(count_kind(&h, HZ_RACE), 0);
    assert_int_equal(count_kind(&h, HZ_UNINIT), 3);
    hazard_list_free(&h);
    prog_free(p);

    /* Enough for the on-rank clocks but not the cross-rank chain. */
    p = via_other_rank(1);
    run(p, 0, 8, &h, &st);
    dump(&h);
    assert_int_equal(st.checked, 0);
    assert_non_null(strstr(st.skipped_why, "cross-rank"));
    assert_int_equal(h.n, 0);   /* the read is still proven initialized */
    hazard_list_free(&h);
    prog_free(p);

    /* No tb pair can race: a tiny budget is enough. */
    p = ring_one_tb(4, 0);
    run(p, 0, 1, &h, &st);
    assert_int_equal(st.checked, 1);
    assert_int_equal(h.n, 0);
    hazard_list_free(&h);
    prog_free(p);
}

static void test_races_confirmed_without_reachability(void **state)
{
    (void)state;
    /* 64-rank ring with no forwarding dependencies: 62 races per rank.  The
     * on-rank clocks cost 64 ranks x 127 steps x 2 tbs; other topological
     * orders prove each pair unordered both ways, so no cross-rank work is
     * needed and exactly that budget suffices. */
    prog *p = ring_two_tbs(64, 0);
    hazard_list h;
    race_stats st;
    run(p, 0, 64 * 127 * 2, &h, &st);
    assert_int_equal(st.checked, 1);
    assert_int_equal(st.work, 64 * 127 * 2);
    assert_int_equal(count_kind(&h, HZ_RACE), 21);
    assert_int_equal(count_kind(&h, HZ_UNINIT), 21);
    assert_true(has_msg(&h, HZ_RACE, "3948 more races not listed"));
    assert_true(has_msg(&h, HZ_UNINIT, "3948 more steps read uninitialized chunks (not listed)"));
    hazard_list_free(&h);
    prog_free(p);
}

static void test_report_cap_and_determinism(void **state)
{
    (void)state;
    prog *p = one_rank(30);
    for (int k = 0; k < 30; k++) {
        add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_S, k, 1);
        add(p, 0, 1, ST_CPY, BUF_I, 0, BUF_S, k, 1);
    }
    hazard_list h, h2;
    race_stats st;
    run(p, 0, 0, &h, &st);
    assert_int_equal(h.n, 21);
    assert_int_equal(count_kind(&h, HZ_RACE), 21);
    assert_string_equal(h.v[0].msg, "rank 0 tb 0 step 0: writes s[0] while tb 1 step 0 writes it "
                                    "with no dependency or send/recv chain ordering them (dead "
                                    "traffic: neither step's data reaches the result)");
    assert_string_equal(h.v[20].msg, "10 more dead-traffic races not listed");
    assert_true(h.v[20].warning);
    assert_int_equal(h.v[20].rank, -1);
    run(p, 0, 0, &h2, &st);
    assert_int_equal(h.n, h2.n);
    for (int i = 0; i < h.n; i++)
        assert_string_equal(h.v[i].msg, h2.v[i].msg);
    hazard_list_free(&h);
    hazard_list_free(&h2);
    prog_free(p);
}

static void test_bad_input_does_not_crash(void **state)
{
    (void)state;
    prog *p = prog_new("bad", COLL_ALLGATHER, 0, 0);  /* nonsense shape, in place */
    prog_add_gpu(p, 1, 2, 1);
    prog_add_gpu(p, -5, 2, 0);
    prog_add_tb(&p->gpus[0], 7, -3, 0);               /* peers out of range */
    prog_add_tb(&p->gpus[0], 0, 0, 0);                /* peers are itself */
    prog_add_tb(&p->gpus[1], 0, 0, 0);
    add(p, 0, 0, ST_CPY, BUF_I, 5, BUF_O, 0, 1);      /* src out of range: skipped */
    add(p, 0, 0, ST_S, BUF_NONE, 0, BUF_NONE, 0, 1);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_O, 0, -2);     /* bad count */
    add(p, 0, 0, (step_type)42, BUF_I, 0, BUF_O, 0, 1);
    prog_add_step(tb_at(p, 0, 0), ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 99, 0);  /* no tb */
    prog_add_step(tb_at(p, 0, 0), ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 1, 99);  /* no step */
    add(p, 0, 1, ST_RCS, BUF_NONE, -1, BUF_O, 1, 1);
    add(p, 1, 0, ST_RE, BUF_I, 0, BUF_O, 0, 1);       /* rank 1 sizes unusable */
    add(p, 1, 0, ST_S, BUF_O, 1, BUF_NONE, -1, 1);
    hazard_list h;
    race_stats st;
    run(p, 1, 0, &h, &st);
    dump(&h);
    /* Nothing touches a valid slot twice, nothing reads: no hazards. */
    assert_int_equal(h.n, 0);
    hazard_list_free(&h);
    prog_free(p);

    prog *empty = prog_new("empty", COLL_ALLREDUCE, 0, 1);
    run(empty, 0, 0, &h, &st);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.checked, 1);
    prog_free(empty);
}

/* ------------------------------------------- random programs, a reference */

/* Small random programs checked against the definitions computed the
 * plain way: happens-before as a transitive closure, liveness, races and
 * uninitialized reads by looking at every pair (race.h).  Built as one
 * sequential run (each send appended with its receive, each dependency on
 * a step already appended), so nothing deadlocks. */
#define RP_MAXS 96

typedef struct {
    int n;                      /* steps, in rank/tb/step order */
    int rank[RP_MAXS], tb[RP_MAXS];
    int pair[RP_MAXS];          /* the send a receive pairs with, -1 none */
    const prog_step *st[RP_MAXS];
    unsigned char hb[RP_MAXS][RP_MAXS];
} rp_ref;

static unsigned rp_next(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

static int rp_pick(unsigned *seed, int n) { return (int)(rp_next(seed) % (unsigned)n); }

/* Rank r's tb for peer p (send p, recv p); tb nr-1 is local only. */
static int rp_tb_for(int r, int p) { return p < r ? p : p - 1; }

static prog *rp_program(unsigned seed, int *nsteps)
{
    int nr = 2 + rp_pick(&seed, 2), events = 8 + rp_pick(&seed, 24), total = 0;
    prog *p = prog_new("random", COLL_ALLGATHER, nr, nr);
    for (int r = 0; r < nr; r++) {
        prog_add_gpu(p, 2, 3, 2);
        for (int q = 0; q < nr; q++)
            if (q != r)
                prog_add_tb(&p->gpus[r], q, q, 0);
        prog_add_tb(&p->gpus[r], -1, -1, 1);
    }
    static const buf_kind bufs[3] = {BUF_I, BUF_O, BUF_S};
    static const int lens[3] = {2, 3, 2};
    for (int e = 0; e < events && total + 2 <= RP_MAXS; e++) {
        int r = rp_pick(&seed, nr), cnt = 1 + rp_pick(&seed, 2);
        int sb = rp_pick(&seed, 3), db = 1 + rp_pick(&seed, 2);
        int so = rp_pick(&seed, lens[sb] - cnt + 1), dof = rp_pick(&seed, lens[db] - cnt + 1);
        int t, q = -1;
        prog_step *s;
        if (rp_pick(&seed, 2)) {        /* a send and its receive */
            q = (r + 1 + rp_pick(&seed, nr - 1)) % nr;
            t = rp_tb_for(r, q);
            add(p, r, t, ST_S, bufs[sb], so, BUF_NONE, -1, cnt);
            int rt = rp_tb_for(q, r), sb2 = rp_pick(&seed, 3);
            int so2 = rp_pick(&seed, lens[sb2] - cnt + 1);
            s = add(p, q, rt, rp_pick(&seed, 3) ? ST_R : ST_RRC, bufs[sb2], so2, bufs[db], dof, cnt);
            r = q;
            t = rt;
            total += 2;
        } else {                        /* local work in any tb */
            t = rp_pick(&seed, nr);
            static const step_type local[4] = {ST_CPY, ST_CPY, ST_RE, ST_NOP};
            step_type ty = local[rp_pick(&seed, 4)];
            s = ty == ST_NOP ? add(p, r, t, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0)
                             : add(p, r, t, ty, bufs[sb], so, bufs[db], dof, cnt);
            total++;
        }
        int self = (int)(s - tb_at(p, r, t)->steps);
        if (rp_pick(&seed, 3) == 0) {   /* wait for a step already there */
            int dt = rp_pick(&seed, nr);
            int n = tb_at(p, r, dt)->nsteps - (dt == t ? 1 : 0);
            if (dt != t && n > 0)
                dep_on(p, r, t, self, dt, rp_pick(&seed, n));
        }
    }
    *nsteps = total;
    return p;
}

static int rp_id(const prog *p, int r, int t, int k)
{
    int x = 0;
    for (int rr = 0; rr < p->ngpu; rr++)
        for (int tt = 0; tt < p->gpus[rr].ntbs; tt++) {
            if (rr == r && tt == t)
                return x + k;
            x += p->gpus[rr].tbs[tt].nsteps;
        }
    return -1;
}

static void rp_build(const prog *p, rp_ref *R)
{
    memset(R, 0, sizeof *R);
    for (int x = 0; x < RP_MAXS; x++)
        R->pair[x] = -1;
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int k = 0; k < p->gpus[r].tbs[t].nsteps; k++) {
                R->rank[R->n] = r;
                R->tb[R->n] = t;
                R->st[R->n++] = &p->gpus[r].tbs[t].steps[k];
            }
    unsigned char edge[RP_MAXS][RP_MAXS];
    memset(edge, 0, sizeof edge);
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            const prog_tb *tb = &p->gpus[r].tbs[t];
            for (int k = 0; k < tb->nsteps; k++) {
                int x = rp_id(p, r, t, k);
                if (k > 0)
                    edge[x - 1][x] = 1;
                if (tb->steps[k].depid >= 0)
                    edge[rp_id(p, r, tb->steps[k].depid, tb->steps[k].deps)][x] = 1;
            }
            if (tb->send < 0)
                continue;
            int q = tb->send, rt = rp_tb_for(q, r), ks = 0, kr = 0;
            const prog_tb *rtb = &p->gpus[q].tbs[rt];
            for (;;) {
                while (ks < tb->nsteps && tb->steps[ks].type != ST_S)
                    ks++;
                while (kr < rtb->nsteps && rtb->steps[kr].type != ST_R && rtb->steps[kr].type != ST_RRC)
                    kr++;
                if (ks >= tb->nsteps || kr >= rtb->nsteps)
                    break;
                int xs = rp_id(p, r, t, ks++), xr = rp_id(p, q, rt, kr++);
                edge[xs][xr] = 1;
                R->pair[xr] = xs;
            }
        }
    /* Closure: steps were appended in a run order, but ids are not in it;
     * relax until nothing changes (tiny graphs). */
    memcpy(R->hb, edge, sizeof edge);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int a = 0; a < R->n; a++)
            for (int b = 0; b < R->n; b++)
                if (R->hb[a][b])
                    for (int c = 0; c < R->n; c++)
                        if (R->hb[b][c] && !R->hb[a][c])
                            R->hb[a][c] = changed = 1;
    }
}

/* Slots of a step: buffer * 8 + chunk; reads and writes as race.h says. */
static int rp_writes(const prog_step *s, int slot)
{
    int dst = s->type == ST_R || s->type == ST_RRC || s->type == ST_CPY || s->type == ST_RE;
    return dst && slot >= (int)s->dstbuf * 8 + s->dstoff && slot < (int)s->dstbuf * 8 + s->dstoff + s->cnt;
}

static int rp_reads(const prog_step *s, int slot)
{
    int src = s->type == ST_S || s->type == ST_RRC || s->type == ST_CPY || s->type == ST_RE;
    if (src && slot >= (int)s->srcbuf * 8 + s->srcoff && slot < (int)s->srcbuf * 8 + s->srcoff + s->cnt)
        return 1;
    return s->type == ST_RE && rp_writes(s, slot);
}

static void rp_live(const rp_ref *R, char *live)
{
    int queue[RP_MAXS], nq = 0;
    memset(live, 0, RP_MAXS);
#define RP_MARK(y) do { if ((y) >= 0 && !live[y]) { live[y] = 1; queue[nq++] = (y); } } while (0)
    for (int w = 0; w < R->n; w++)
        for (int slot = BUF_O * 8; slot < BUF_O * 8 + 3; slot++) {
            if (!rp_writes(R->st[w], slot))
                continue;
            int covered = 0;
            for (int w2 = 0; w2 < R->n; w2++)
                covered |= w2 != w && R->rank[w2] == R->rank[w] && rp_writes(R->st[w2], slot) &&
                           R->hb[w][w2];
            if (!covered)
                RP_MARK(w);
        }
    for (int head = 0; head < nq; head++) {
        int x = queue[head];
        RP_MARK(R->pair[x]);    /* the send x receives */
        for (int slot = 0; slot < 3 * 8; slot++) {
            if (!rp_reads(R->st[x], slot))
                continue;
            for (int w = 0; w < R->n; w++) {
                if (w == x || R->rank[w] != R->rank[x] || !rp_writes(R->st[w], slot) || R->hb[x][w])
                    continue;
                int covered = 0;
                for (int w2 = 0; w2 < R->n && !covered; w2++)
                    covered = w2 != w && w2 != x && R->rank[w2] == R->rank[x] &&
                              rp_writes(R->st[w2], slot) && R->hb[w][w2] && R->hb[w2][x];
                if (!covered)
                    RP_MARK(w);
            }
        }
    }
#undef RP_MARK
}

/* Races and uninitialized steps as reported: listed ones plus "N more". */
static int rp_reported(const hazard_list *h, hazard_kind k)
{
    int n = 0;
    for (int i = 0; i < h->n; i++) {
        int more;
        if (h->v[i].kind != k)
            continue;
        n += h->v[i].rank >= 0 ? 1 : (sscanf(h->v[i].msg, "%d more", &more) == 1 ? more : 0);
    }
    return n;
}

static void test_random_programs_match_reference(void **state)
{
    (void)state;
    int compared = 0, dead_seen = 0;
    for (unsigned seed = 1; seed <= 3000; seed++) {
        int ns;
        prog *p = rp_program(seed, &ns);
        rp_ref R;
        rp_build(p, &R);
        assert_int_equal(R.n, ns);
        char live[RP_MAXS];
        rp_live(&R, live);
        int races = 0, uninit = 0, dead = 0;
        for (int a = 0; a < R.n; a++) {
            for (int b = 0; b < R.n; b++) {     /* a pair once, a in the lower tb */
                if (R.rank[a] != R.rank[b] || R.tb[a] >= R.tb[b] || R.hb[a][b] || R.hb[b][a])
                    continue;
                int conflict = 0;
                for (int slot = 0; slot < 3 * 8; slot++) {
                    int ra = rp_reads(R.st[a], slot), wa = rp_writes(R.st[a], slot);
                    int rb = rp_reads(R.st[b], slot), wb = rp_writes(R.st[b], slot);
                    conflict |= (wa && (rb || wb)) || (wb && ra);
                }
                races += conflict;
            }
            int bad = 0;                /* reads o or s with no write before */
            for (int slot = BUF_O * 8; slot < 3 * 8; slot++) {
                if (!rp_reads(R.st[a], slot))
                    continue;
                int init = 0;
                for (int w = 0; w < R.n && !init; w++)
                    init = w != a && R.rank[w] == R.rank[a] && rp_writes(R.st[w], slot) && R.hb[w][a];
                bad |= !init;
            }
            uninit += bad;
            dead += !live[a] && R.st[a]->type != ST_NOP;
        }
        hazard_list h;
        race_stats st;
        memset(&h, 0, sizeof h);
        race_check(p, 0, 0, &h, &st);
        assert_int_equal(st.checked, 1);
        assert_int_equal(st.live_checked, 1);
        assert_int_equal(st.live_partial, 0);
        for (int x = 0; x < R.n; x++)
            if (st.dead[x] != (!live[x] && R.st[x]->type != ST_NOP)) {
                print_message("seed %u: step %d (rank %d tb %d) dead %d, reference %d\n", seed, x,
                              R.rank[x], R.tb[x], st.dead[x], !live[x]);
                fail();
            }
        assert_int_equal(st.dead_steps, dead);
        assert_int_equal(rp_reported(&h, HZ_RACE), races);
        assert_int_equal(rp_reported(&h, HZ_UNINIT), uninit);
        dead_seen += dead > 0 && dead < ns;
        compared++;
        hazard_list_free(&h);
        race_stats_free(&st);
        prog_free(p);
    }
    assert_int_equal(compared, 3000);
    assert_true(dead_seen > 300);       /* the cases are not all trivial */
}

/* The slice's budget counts every comparison: a long run of writes to one
 * slot in one tb, where each write but the last is covered by the next in
 * program order, costs about one comparison each, not one per pair (was
 * every pair of the 200000 writes: minutes). */
static void test_slice_linear_in_writes(void **state)
{
    (void)state;
    enum { N = 200000 };
    prog *p = prog_new("rewrite", COLL_ALLGATHER, 2, 2);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_gpu(p, 1, 2, 0);
    prog_add_tb(&p->gpus[0], 1, 1, 0);
    prog_add_tb(&p->gpus[1], 0, 0, 0);
    add(p, 0, 0, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    add(p, 1, 0, ST_CPY, BUF_I, 0, BUF_O, 1, 1);
    for (int k = 0; k < N; k++) {
        add(p, 0, 0, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
        add(p, 1, 0, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
    }
    add(p, 1, 0, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    add(p, 0, 0, ST_R, BUF_NONE, -1, BUF_O, 1, 1);
    hazard_list h;
    race_stats st;
    memset(&h, 0, sizeof h);
    race_check(p, 0, 0, &h, &st);
    assert_int_equal(h.n, 0);
    assert_int_equal(st.live_checked, 1);
    assert_int_equal(st.live_partial, 0);
    assert_int_equal(st.dead_steps, 2 * (N - 1));  /* every receive but the last, and its send */
    assert_true(st.live_work >= N - 1 && st.live_work < 2 * N);   /* N - 1 here */
    hazard_list_free(&h);
    race_stats_free(&st);
    prog_free(p);
}

/* Past its budget the slice proves nothing more: what it calls dead is
 * dead, the rest counts as live, and it says it stopped. */
static void test_slice_budget_stays_honest(void **state)
{
    (void)state;
    int partial = 0, some_dead = 0;
    static const long long budgets[] = {1, 3, 10, 30, 100};
    for (unsigned seed = 1; seed <= 600; seed++) {
        int ns;
        prog *p = rp_program(seed, &ns);
        rp_ref R;
        rp_build(p, &R);
        char live[RP_MAXS];
        rp_live(&R, live);
        for (int b = 0; b < 5; b++) {
            hazard_list h;
            race_stats st;
            memset(&h, 0, sizeof h);
            race_set_live_budget(budgets[b]);
            race_check(p, 0, 0, &h, &st);
            race_set_live_budget(0);
            assert_int_equal(st.live_checked, 1);
            assert_int_equal(st.live_partial, st.live_work > budgets[b]);
            for (int x = 0; x < R.n; x++)
                if (st.dead[x])
                    assert_false(live[x]);
            partial += st.live_partial;
            some_dead += st.live_partial && st.dead_steps > 0;
            hazard_list_free(&h);
            race_stats_free(&st);
        }
        prog_free(p);
    }
    assert_true(partial > 600 && some_dead > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_allgather_clean),
        cmocka_unit_test(test_recv_send_race_detected),
        cmocka_unit_test(test_dependency_orders_recv_before_send),
        cmocka_unit_test(test_chain_through_other_rank_orders),
        cmocka_unit_test(test_two_tbs_write_scratch),
        cmocka_unit_test(test_pair_reported_once),
        cmocka_unit_test(test_scratch_never_written),
        cmocka_unit_test(test_read_before_recv_in_same_tb),
        cmocka_unit_test(test_inplace_input_aliases_output),
        cmocka_unit_test(test_inplace_alias_race),
        cmocka_unit_test(test_dependency_cycle_deadlocks),
        cmocka_unit_test(test_crossing_sends_deadlock),
        cmocka_unit_test(test_step_waiting_on_itself),
        cmocka_unit_test(test_race_on_overwritten_scratch),
        cmocka_unit_test(test_large_rings_fast_and_clean),
        cmocka_unit_test(test_budget_skips_races_keeps_uninit),
        cmocka_unit_test(test_races_confirmed_without_reachability),
        cmocka_unit_test(test_report_cap_and_determinism),
        cmocka_unit_test(test_bad_input_does_not_crash),
        cmocka_unit_test(test_random_programs_match_reference),
        cmocka_unit_test(test_slice_linear_in_writes),
        cmocka_unit_test(test_slice_budget_stays_honest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
