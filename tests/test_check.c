/* test_check.c — static hazards (exec/check.h).
 *
 * A valid 3-rank ring AllGather must give no hazard; then each class of
 * problem is planted into a fresh copy and must be reported with the right
 * kind, at the right rank/tb/step, with the numbers in the message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exec/check.h"

#ifdef CHECK_ISOLATED
/* topo.c is written elsewhere; prog_free only needs this symbol. */
void topo_free(topo *t) { (void)t; }
#endif

/* ---- building programs -------------------------------------------------- */

/* Ring AllGather over n ranks, one chunk per rank, out of place.  Rank r:
 * tb 0 (send r+1, recv r-1) sends its input chunk, then receives and
 * forwards n-2 chunks, then receives the last; tb 1 (no peers) copies the
 * input chunk into place after tb 0 step 0 (which carries hasdep). */
static prog *ring_allgather(int n)
{
    prog *p = prog_new("ring", COLL_ALLGATHER, n, n);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, n, 0);
        prog_tb *tb = prog_add_tb(g, (r + 1) % n, (r + n - 1) % n, 0);
        prog_step *st = prog_add_step(tb, ST_S, BUF_I, 0, BUF_NONE, -1, 1, -1, -1);
        st->hasdep = 1;
        for (int k = 1; k < n - 1; k++)
            prog_add_step(tb, ST_RCS, BUF_NONE, -1, BUF_O, (r + n - k) % n, 1, -1, -1);
        prog_add_step(tb, ST_R, BUF_NONE, -1, BUF_O, (r + 1) % n, 1, -1, -1);
        tb = prog_add_tb(g, -1, -1, 0);
        prog_add_step(tb, ST_CPY, BUF_I, 0, BUF_O, r, 1, 0, 0);
    }
    return p;
}

static prog_step *step_at(prog *p, int r, int t, int k)
{
    return &p->gpus[r].tbs[t].steps[k];
}

/* ---- running and looking at the result ---------------------------------- */

static int run_with(const prog *p, const check_limits *lim, hazard_list *l)
{
    int before = l->n;
    int added = check_program(p, lim, l);
    assert_int_equal(added, l->n - before);
    return added;
}

/* The generic checks, with the runtimes' limits but no loader's own rules
 * (those are tested with each loader below). */
static int run(const prog *p, hazard_list *l)
{
    check_limits lim;
    check_limits_for(&lim, RT_UNLIMITED);
    lim.max_steps_per_tb = 256;     /* the MSCCL runtimes' limits, still reported */
    lim.max_depid = 127;
    return run_with(p, &lim, l);
}

static void dump(const hazard_list *l)
{
    for (int i = 0; i < l->n; i++)
        print_message("  [%s] %s\n", hazard_kind_name(l->v[i].kind), l->v[i].msg);
}

/* Index of a hazard of `kind` at (rank, tb, step) whose message holds every
 * needle (NULL-terminated), or -1. */
static int find_v(const hazard_list *l, hazard_kind kind, int rank, int tb, int step, va_list ap)
{
    const char *needles[8];
    int nn = 0;
    for (const char *s; nn < 8 && (s = va_arg(ap, const char *)) != NULL;)
        needles[nn++] = s;
    for (int i = 0; i < l->n; i++) {
        const hazard *h = &l->v[i];
        if (h->kind != kind || h->rank != rank || h->tb != tb || h->step != step)
            continue;
        int all = 1;
        for (int j = 0; j < nn && all; j++)
            all = strstr(h->msg, needles[j]) != NULL;
        if (all)
            return i;
    }
    return -1;
}

static void expect(const hazard_list *l, hazard_kind kind, int rank, int tb, int step, ...)
{
    va_list ap;
    va_start(ap, step);
    int i = find_v(l, kind, rank, tb, step, ap);
    va_end(ap);
    if (i < 0) {
        dump(l);
        fail_msg("no %s hazard at rank %d tb %d step %d with the expected text",
                 hazard_kind_name(kind), rank, tb, step);
    }
}

static int count_kind(const hazard_list *l, hazard_kind kind)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->v[i].kind == kind;
    return n;
}

static void expect_n(const hazard_list *l, int n)
{
    if (l->n != n) {
        dump(l);
        fail_msg("expected %d hazards, got %d", n, l->n);
    }
}

/* ---- the valid program -------------------------------------------------- */

static void test_valid_ring_has_no_hazard(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    assert_int_equal(run(p, &l), 0);
    expect_n(&l, 0);
    /* Also valid for the newer executor's limits. */
    check_limits lim;
    check_limits_for(&lim, RT_EXECUTOR);
    assert_int_equal(run_with(p, &lim, &l), 0);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_default_limits(void **state)
{
    (void)state;
    check_limits l;
    check_limits_for(&l, RT_MSCCL);
    assert_int_equal(l.max_steps_per_tb, 256);
    assert_int_equal(l.max_cnt, 72);
    assert_int_equal(l.max_depid, 127);
    assert_int_equal(l.max_channels, 32);
    check_limits_for(&l, RT_EXECUTOR);
    assert_int_equal(l.max_steps_per_tb, 64);
    assert_int_equal(l.max_cnt, 72);
    assert_int_equal(l.max_depid, 127);
    assert_int_equal(l.max_channels, 32);
}

static void test_appends_without_clearing(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    step_at(p, 1, 0, 2)->dstoff = 3;
    hazard_list l = {0};
    assert_int_equal(run(p, &l), 1);
    assert_int_equal(run(p, &l), 1);
    expect_n(&l, 2);
    hazard_list_free(&l);
    prog_free(p);
}

/* ---- program level ------------------------------------------------------ */

static void test_ngpus_mismatch(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->ngpus = 4;
    p->nchunksperloop = 4;
    hazard_list l = {0};
    run(p, &l);
    expect(&l, HZ_BOUNDS, -1, -1, -1, "ngpus is 4", "3 <gpu>", NULL);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_nchannels_out_of_range(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    p->nchannels = 33;
    run(p, &l);
    expect(&l, HZ_LIMIT, -1, -1, -1, "nchannels 33", "1..32", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    p->nchannels = 0;
    run(p, &l);
    expect(&l, HZ_LIMIT, -1, -1, -1, "nchannels 0", NULL);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_nchunksperloop_wrong_for_collective(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->nchunksperloop = 4;
    hazard_list l = {0};
    run(p, &l);
    expect(&l, HZ_BOUNDS, -1, -1, -1, "nchunksperloop", "4", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_gpu_buffer_sizes(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    p->gpus[1].i_chunks = 2;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 1, -1, -1, "i_chunks is 2", "needs 1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    p->gpus[1].i_chunks = 1;

    p->gpus[2].o_chunks = 4;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 2, -1, -1, "o_chunks is 4", "needs 3", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    p->gpus[2].o_chunks = 3;

    p->gpus[0].s_chunks = -1;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 0, -1, -1, "s_chunks -1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

/* ---- per tb ------------------------------------------------------------- */

static void test_tb_ids_dense(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->gpus[0].tbs[1].id = 5;
    hazard_list l = {0};
    run(p, &l);
    expect(&l, HZ_LIMIT, 0, 1, -1, "id 5", "0..1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_peer_out_of_range_or_self(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    p->gpus[0].tbs[1].send = 3;
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 1, -1, "send peer 3", "-1..2", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    p->gpus[0].tbs[1].send = -1;

    p->gpus[0].tbs[1].recv = 0;
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 1, -1, "recv peer 0", "the rank itself", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    p->gpus[0].tbs[1].recv = -7;
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 1, -1, "recv peer -7", NULL);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_chan_out_of_range(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->gpus[2].tbs[1].chan = 1;
    hazard_list l = {0};
    run(p, &l);
    expect(&l, HZ_CONNECTION, 2, 1, -1, "chan 1", "0..0", "nchannels 1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_step_numbers_in_order(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    step_at(p, 2, 0, 1)->s = 5;
    hazard_list l = {0};
    run(p, &l);
    expect(&l, HZ_LIMIT, 2, 0, 1, "s=5", "0..2", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_steps_per_tb_limit(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    check_limits lim;
    check_limits_for(&lim, RT_MSCCL);
    lim.max_steps_per_tb = 2;
    run_with(p, &lim, &l);
    for (int r = 0; r < 3; r++)
        expect(&l, HZ_LOAD, r, 0, -1, "3 steps", "limit of 2", "msccl (the legacy runtime) refuses",
               NULL);
    expect_n(&l, 3);
    hazard_list_free(&l);

    /* The newer executor's 64: tb 1 of rank 0 grows to 64 steps, then 65. */
    check_limits_for(&lim, RT_EXECUTOR);
    prog_tb *tb = &p->gpus[0].tbs[1];
    while (tb->nsteps < 64)
        prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, -1, -1);
    assert_int_equal(run_with(p, &lim, &l), 0);
    prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, -1, -1);
    run_with(p, &lim, &l);
    expect(&l, HZ_LOAD, 0, 1, -1, "65 steps", "limit of 64", "msccl-executor refuses", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    /* Simulating beyond the runtimes: reported as a limit, not a refusal. */
    check_limits_for(&lim, RT_UNLIMITED);
    lim.max_steps_per_tb = 64;
    run_with(p, &lim, &l);
    expect(&l, HZ_LIMIT, 0, 1, -1, "65 steps", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static int run_loader(const prog *p, runtime loader, hazard_list *l)
{
    check_limits lim;
    check_limits_for(&lim, loader);
    return run_with(p, &lim, l);
}

/* In-place files as msccl-tools writes them: the unused buffer's count is 0
 * and every reference is onto the other buffer. */
static void test_zero_count_is_not_addressed(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    for (int r = 0; r < 3; r++) {
        p->gpus[r].i_chunks = 0;
        step_at(p, r, 0, 0)->srcbuf = BUF_O;            /* input = its slice of the output */
        step_at(p, r, 0, 0)->srcoff = r;
        step_at(p, r, 1, 0)->type = ST_NOP;             /* the copy in place is no copy */
    }
    p->inplace = 1;
    hazard_list l = {0};
    for (runtime ld = RT_ANY; ld < RT_COUNT; ld++) {
        if (!runtime_writes_xml(ld))
            continue;
        assert_int_equal(run_loader(p, ld, &l), 0);
        assert_int_equal(prog_buf_len(p, 1, BUF_I), 1);  /* sized from the collective */
    }
    /* An offset into the unaddressed buffer: the loaders admit none but -1. */
    step_at(p, 1, 0, 0)->srcbuf = BUF_I;
    step_at(p, 1, 0, 0)->srcoff = 0;
    run_loader(p, RT_EXECUTOR, &l);
    expect(&l, HZ_LOAD, 1, 0, 0, "srcoff 0 is not below i_chunks 0", "msccl-executor refuses", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

/* A non-zero count that disagrees with the collective: the legacy loader
 * refuses it; the executor loads it and bounds offsets by it. */
static void test_nonzero_count_mismatch_by_loader(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->gpus[1].o_chunks = 6;
    hazard_list l = {0};
    run_loader(p, RT_MSCCL, &l);
    expect(&l, HZ_LOAD, 1, -1, -1, "o_chunks 6", "nchunksperloop 3", "legacy runtime) ignores",
           NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    run_loader(p, RT_EXECUTOR, &l);
    expect(&l, HZ_BOUNDS, 1, -1, -1, "o_chunks is 6", "needs 3", "msccl-executor would bound", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

/* What each loader requires of <algo> in a file. */
/* Loader refusals of the <algo> element (rank -1). */
static int algo_loads(const hazard_list *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->v[i].kind == HZ_LOAD && l->v[i].rank < 0;
    return n;
}

static void test_loader_algo_attributes(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    p->coll = COLL_REDUCESCATTER;       /* the shapes do not matter here */
    snprintf(p->coll_attr, sizeof p->coll_attr, "reduce_scatter");
    p->attrs = PROG_HAS_NAME;           /* a legacy-style file */
    hazard_list l = {0};
    run_loader(p, RT_MSCCL, &l);
    assert_int_equal(algo_loads(&l), 0);
    hazard_list_free(&l);
    run_loader(p, RT_EXECUTOR, &l);
    expect(&l, HZ_LOAD, -1, -1, -1, "coll \"reduce_scatter\"", "msccl-executor refuses",
           "\"reducescatter\"", NULL);
    expect(&l, HZ_LOAD, -1, -1, -1, "no outofplace attribute", NULL);
    expect(&l, HZ_LOAD, -1, -1, -1, "no minBytes attribute", NULL);
    expect(&l, HZ_LOAD, -1, -1, -1, "no maxBytes attribute", NULL);
    assert_int_equal(algo_loads(&l), 4);
    hazard_list_free(&l);
    run_loader(p, RT_ANY, &l);
    assert_int_equal(algo_loads(&l), 0);   /* no target: either spelling */
    hazard_list_free(&l);

    snprintf(p->coll_attr, sizeof p->coll_attr, "reducescatter");
    p->attrs = PROG_HAS_OUTOFPLACE | PROG_HAS_MINBYTES | PROG_HAS_MAXBYTES;
    run_loader(p, RT_EXECUTOR, &l);
    assert_int_equal(algo_loads(&l), 0);
    hazard_list_free(&l);
    run_loader(p, RT_MSCCL, &l);
    expect(&l, HZ_LOAD, -1, -1, -1, "coll \"reducescatter\"", "legacy runtime) refuses",
           "\"reduce_scatter\"", NULL);
    expect(&l, HZ_LOAD, -1, -1, -1, "no name attribute", NULL);
    assert_int_equal(algo_loads(&l), 2);
    hazard_list_free(&l);
    prog_free(p);
}

/* The legacy runtime allocates maxBytes * s_chunks / nchunksperloop of
 * scratch when the communicator starts. */
static void test_legacy_init_scratch(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    snprintf(p->coll_attr, sizeof p->coll_attr, "allgather");
    p->attrs = PROG_HAS_NAME | PROG_HAS_OUTOFPLACE | PROG_HAS_MINBYTES | PROG_HAS_MAXBYTES;
    p->gpus[2].s_chunks = 3;
    p->max_bytes = 9223372036854775807LL;
    hazard_list l = {0};
    run_loader(p, RT_MSCCL, &l);
    expect(&l, HZ_LOAD, -1, -1, -1, "maxBytes 9223372036854775807", "9.22e+18 bytes of scratch",
           "fails ncclCommInitRank", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    p->nchannels = 33;                     /* the executor fails init; legacy only warns */
    run_loader(p, RT_EXECUTOR, &l);
    expect(&l, HZ_LOAD, -1, -1, -1, "nchannels 33", "msccl-executor fails ncclCommInitRank", NULL);
    hazard_list_free(&l);
    run_loader(p, RT_ANY, &l);
    expect(&l, HZ_LIMIT, -1, -1, -1, "nchannels 33", NULL);
    hazard_list_free(&l);
    p->nchannels = 1;
    run_loader(p, RT_EXECUTOR, &l);   /* allocates per call */
    assert_int_equal(count_kind(&l, HZ_LOAD), 0);
    hazard_list_free(&l);
    p->max_bytes = 80LL << 30;             /* 80 GiB of scratch: fits, just */
    run_loader(p, RT_MSCCL, &l);
    expect_n(&l, 0);
    p->max_bytes += 1;
    run_loader(p, RT_MSCCL, &l);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_duplicate_tb_per_chan_and_peer(void **state)
{
    (void)state;
    hazard_list l = {0};
    prog *p = ring_allgather(3);
    prog_add_tb(&p->gpus[0], 1, -1, 0);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 2, -1, "tb 0 and tb 2 both send to rank 1 on chan 0", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    p = ring_allgather(3);
    prog_add_tb(&p->gpus[1], -1, 0, 0);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 1, 2, -1, "tb 0 and tb 2 both receive from rank 0 on chan 0",
           NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    /* The same peer on another channel is a different connection. */
    p = ring_allgather(3);
    p->nchannels = 2;
    prog_add_tb(&p->gpus[0], 1, -1, 1);
    prog_add_tb(&p->gpus[1], -1, 0, 1);
    assert_int_equal(run(p, &l), 0);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_peer_tbs_per_channel_limit(void **state)
{
    (void)state;
    /* AllToAll over 34 ranks: rank 0 sends one chunk to each other rank,
     * each with its own tb; 33 send tbs on one channel exceed 32. */
    int n = 34;
    for (int nchan = 1; nchan <= 2; nchan++) {
        prog *p = prog_new("a2a", COLL_ALLTOALL, n, n);
        p->nchannels = nchan;
        prog_gpu *g0 = prog_add_gpu(p, n, n, 0);
        for (int k = 1; k < n; k++) {
            prog_tb *tb = prog_add_tb(g0, k, -1, k % nchan);
            prog_add_step(tb, ST_S, BUF_I, k, BUF_NONE, -1, 1, -1, -1);
        }
        for (int r = 1; r < n; r++) {
            prog_gpu *g = prog_add_gpu(p, n, n, 0);
            prog_tb *tb = prog_add_tb(g, -1, 0, r % nchan);
            prog_add_step(tb, ST_R, BUF_NONE, -1, BUF_O, 0, 1, -1, -1);
        }
        hazard_list l = {0};
        run(p, &l);
        if (nchan == 1) {
            expect(&l, HZ_LIMIT, 0, 32, -1, "more than 32 tbs with a send peer on chan 0", NULL);
            expect_n(&l, 1);
        } else {
            expect_n(&l, 0);
        }
        hazard_list_free(&l);
        prog_free(p);
    }
}

/* ---- per step ----------------------------------------------------------- */

static void test_missing_buffer(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 0, 0, 0)->srcbuf = BUF_NONE;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 0, 0, 0, "type s needs a src buffer", "got none", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    step_at(p, 0, 0, 0)->srcbuf = BUF_I;

    step_at(p, 1, 0, 2)->dstbuf = BUF_NONE;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 1, 0, 2, "type r needs a dst buffer", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_offsets_within_buffer(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 1, 0, 2)->dstoff = 3;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 1, 0, 2, "dstoff+cnt = 4 exceeds the o buffer (3 chunks)", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    step_at(p, 1, 0, 2)->dstoff = 2;

    step_at(p, 0, 1, 0)->srcoff = -1;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 0, 1, 0, "srcoff -1 is negative", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    step_at(p, 0, 1, 0)->srcoff = 0;

    /* Scratch has 0 chunks: any use overflows it. */
    step_at(p, 2, 1, 0)->dstbuf = BUF_S;
    step_at(p, 2, 1, 0)->dstoff = 0;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 2, 1, 0, "dstoff+cnt = 1 exceeds the s buffer (0 chunks)", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_operands_follow_step_type(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    /* A nop ignores buffers, offsets and cnt. */
    prog_add_step(&p->gpus[0].tbs[1], ST_NOP, BUF_NONE, -5, BUF_NONE, -5, 0, -1, -1);
    assert_int_equal(run(p, &l), 0);

    /* rrs: src only (dst unused, may be none). */
    prog_step *st = step_at(p, 1, 0, 1);
    st->type = ST_RRS;
    st->srcbuf = BUF_O;
    st->srcoff = 0;
    st->dstbuf = BUF_NONE;
    st->dstoff = -1;
    assert_int_equal(run(p, &l), 0);
    st->srcbuf = BUF_NONE;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 1, 0, 1, "type rrs needs a src buffer", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    /* rrc: src and dst. */
    st = step_at(p, 2, 0, 2);
    st->type = ST_RRC;
    st->srcbuf = BUF_O;
    st->srcoff = 0;
    step_at(p, 1, 0, 1)->srcbuf = BUF_O;
    assert_int_equal(run(p, &l), 0);
    st->dstoff = 7;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 2, 0, 2, "dstoff+cnt = 8", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    st->dstoff = 0;
    st->srcoff = 3;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 2, 0, 2, "srcoff+cnt = 4", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    /* re reads src and updates dst. */
    prog_add_step(&p->gpus[0].tbs[1], ST_RE, BUF_I, 0, BUF_NONE, -1, 1, -1, -1);
    st->srcoff = 0;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 0, 1, 2, "type re needs a dst buffer", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_cnt_range(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 0, 1, 0)->cnt = 0;
    run(p, &l);
    expect(&l, HZ_BOUNDS, 0, 1, 0, "cnt 0 must be at least 1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    step_at(p, 0, 1, 0)->cnt = 72;
    run(p, &l);
    expect(&l, HZ_LIMIT, 0, 1, 0, "cnt 72", "limit 72", "cnt <= 71", NULL);
    assert_int_equal(count_kind(&l, HZ_LIMIT), 1);
    hazard_list_free(&l);

    step_at(p, 0, 1, 0)->cnt = 71;   /* allowed by the runtime, overflows the buffers */
    run(p, &l);
    assert_int_equal(count_kind(&l, HZ_LIMIT), 0);
    assert_true(count_kind(&l, HZ_BOUNDS) >= 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_send_or_recv_without_peer(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    prog_add_step(&p->gpus[0].tbs[1], ST_S, BUF_I, 0, BUF_NONE, -1, 1, -1, -1);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 1, 1, "type s sends", "tb 1 has send=-1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    p = ring_allgather(3);
    prog_add_step(&p->gpus[2].tbs[1], ST_R, BUF_NONE, -1, BUF_O, 0, 1, -1, -1);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 2, 1, 1, "type r receives", "tb 1 has recv=-1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

/* ---- dependencies ------------------------------------------------------- */

static void test_depid_range(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 0, 1, 0)->depid = 128;
    run(p, &l);
    expect(&l, HZ_LIMIT, 0, 1, 0, "depid 128", "limit 127", NULL);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "tb 128", "only 2 tbs", NULL);
    hazard_list_free(&l);

    step_at(p, 0, 1, 0)->depid = -2;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "depid -2", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_dependency_must_exist(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 1, 1, 0)->depid = 5;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 1, 1, 0, "tb 5 step 0", "rank 1 has only 2 tbs", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    step_at(p, 1, 1, 0)->depid = 0;
    step_at(p, 1, 1, 0)->deps = 7;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 1, 1, 0, "tb 0 step 7", "tb 0 has only 3 steps", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_dependency_on_itself(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    prog_step *st = step_at(p, 0, 1, 0);
    st->depid = 1;
    st->deps = 0;
    st->hasdep = 1;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "own tb", "hangs", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_dependency_needs_hasdep(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 2, 0, 0)->hasdep = 0;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 2, 1, 0, "tb 0 step 0", "hasdep=1", "hangs", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    /* A later step of that tb with hasdep=1 signals it too. */
    step_at(p, 2, 0, 2)->hasdep = 1;
    assert_int_equal(run(p, &l), 0);

    /* An earlier one does not. */
    step_at(p, 2, 0, 2)->hasdep = 0;
    step_at(p, 2, 1, 0)->deps = 1;
    step_at(p, 2, 0, 0)->hasdep = 1;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 2, 1, 0, "tb 0 step 1", "hangs", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    /* hasdep on a nop does not count: the runtimes drop nops. */
    p = ring_allgather(3);
    step_at(p, 0, 0, 0)->hasdep = 0;
    prog_add_step(&p->gpus[0].tbs[0], ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, -1, -1)->hasdep = 1;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "only a nop", "hangs", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_depid_and_deps_together(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 0, 1, 0)->deps = -1;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "depid 0 given without deps", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);

    step_at(p, 0, 1, 0)->depid = -1;
    step_at(p, 0, 1, 0)->deps = 0;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 1, 0, "deps 0 given without a depid", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_nop_chain_needs_depid_after(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 0, 1, 0)->hasdep = 1;
    prog_tb *tb = prog_add_tb(&p->gpus[0], -1, -1, 0);
    prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 0);
    prog_step *st = prog_add_step(tb, ST_CPY, BUF_I, 0, BUF_O, 0, 1, 1, 0);
    assert_int_equal(run(p, &l), 0);     /* nop + step with its own depid: fine */
    st->depid = -1;
    st->deps = -1;
    run(p, &l);
    expect(&l, HZ_DEPENDENCY, 0, 2, 1, "follows 1 nop", "step 0", "depid=-1", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

/* ---- connections -------------------------------------------------------- */

static void test_send_receive_counts_agree(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    prog_add_step(&p->gpus[0].tbs[0], ST_S, BUF_I, 0, BUF_NONE, -1, 1, -1, -1);
    run(p, &l);
    expect(&l, HZ_PAIRING, 0, 0, 3, "connection chan 0 rank 0 -> rank 1: 3 sends but 2 receives",
           "no matching receive", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    p = ring_allgather(3);
    prog_add_step(&p->gpus[1].tbs[0], ST_R, BUF_NONE, -1, BUF_O, 0, 1, -1, -1);
    run(p, &l);
    expect(&l, HZ_PAIRING, 1, 0, 3, "connection chan 0 rank 0 -> rank 1: 2 sends but 3 receives",
           "no matching send", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_kth_send_and_receive_agree_on_cnt(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    step_at(p, 1, 0, 1)->cnt = 2;   /* rank 1's rcs: receives from 0, sends to 2 */
    run(p, &l);
    expect(&l, HZ_PAIRING, 0, 0, 0,
           "connection chan 0 rank 0 -> rank 1: send #1 (rank 0 tb 0 step 0) has cnt 1 but "
           "receive #1 (rank 1 tb 0 step 1) has cnt 2", NULL);
    expect(&l, HZ_PAIRING, 1, 0, 1,
           "connection chan 0 rank 1 -> rank 2: send #2 (rank 1 tb 0 step 1) has cnt 2 but "
           "receive #2 (rank 2 tb 0 step 2) has cnt 1", NULL);
    expect_n(&l, 2);
    hazard_list_free(&l);
    prog_free(p);
}

static void test_tb_without_partner(void **state)
{
    (void)state;
    prog *p = ring_allgather(3);
    hazard_list l = {0};
    prog_add_tb(&p->gpus[0], 2, -1, 0);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 2, -1, "tb 2 sends to rank 2 on chan 0",
           "rank 2 has no tb receiving from rank 0 on chan 0", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    p = ring_allgather(3);
    prog_add_tb(&p->gpus[0], -1, 1, 0);
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 2, -1, "tb 2 receives from rank 1 on chan 0",
           "rank 1 has no tb sending to rank 0 on chan 0", NULL);
    expect_n(&l, 1);
    hazard_list_free(&l);
    prog_free(p);

    /* Channels must match too: rank 1 receives on chan 1, rank 0 sends on 0. */
    p = ring_allgather(3);
    p->nchannels = 2;
    p->gpus[1].tbs[0].chan = 1;
    run(p, &l);
    expect(&l, HZ_CONNECTION, 0, 0, -1, "tb 0 sends to rank 1 on chan 0", NULL);
    expect(&l, HZ_CONNECTION, 1, 0, -1, "tb 0 receives from rank 0 on chan 1", NULL);
    hazard_list_free(&l);
    prog_free(p);
}

/* ---- scale -------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_large_ring_is_fast(void **state)
{
    (void)state;
    int n = 1024;   /* about 1.05 million steps */
    prog *p = ring_allgather(n);
    p->nchannels = 1;
    check_limits lim;
    check_limits_for(&lim, RT_MSCCL);
    lim.max_steps_per_tb = n;
    hazard_list l = {0};
    double t0 = now_s();
    assert_int_equal(run_with(p, &lim, &l), 0);
    double dt = now_s() - t0;
    print_message("  1024-rank ring, %d steps per tb: checked in %.3f s\n",
                  p->gpus[0].tbs[0].nsteps, dt);

    /* One planted mismatch deep inside is still found, exactly once. */
    step_at(p, 700, 0, 500)->cnt = 2;
    step_at(p, 700, 0, 500)->dstoff = 0;
    run_with(p, &lim, &l);
    expect(&l, HZ_PAIRING, 699, 0, 499, "rank 699 -> rank 700", "send #500 (rank 699 tb 0 step 499)", "receive #500 (rank 700 tb 0 step 500)", NULL);
    expect(&l, HZ_PAIRING, 700, 0, 500, "rank 700 -> rank 701", "send #501 (rank 700 tb 0 step 500)", "receive #501 (rank 701 tb 0 step 501)", NULL);
    expect_n(&l, 2);
    hazard_list_free(&l);
    prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_ring_has_no_hazard),
        cmocka_unit_test(test_default_limits),
        cmocka_unit_test(test_appends_without_clearing),
        cmocka_unit_test(test_ngpus_mismatch),
        cmocka_unit_test(test_nchannels_out_of_range),
        cmocka_unit_test(test_nchunksperloop_wrong_for_collective),
        cmocka_unit_test(test_gpu_buffer_sizes),
        cmocka_unit_test(test_tb_ids_dense),
        cmocka_unit_test(test_peer_out_of_range_or_self),
        cmocka_unit_test(test_chan_out_of_range),
        cmocka_unit_test(test_step_numbers_in_order),
        cmocka_unit_test(test_steps_per_tb_limit),
        cmocka_unit_test(test_zero_count_is_not_addressed),
        cmocka_unit_test(test_nonzero_count_mismatch_by_loader),
        cmocka_unit_test(test_loader_algo_attributes),
        cmocka_unit_test(test_legacy_init_scratch),
        cmocka_unit_test(test_duplicate_tb_per_chan_and_peer),
        cmocka_unit_test(test_peer_tbs_per_channel_limit),
        cmocka_unit_test(test_missing_buffer),
        cmocka_unit_test(test_offsets_within_buffer),
        cmocka_unit_test(test_operands_follow_step_type),
        cmocka_unit_test(test_cnt_range),
        cmocka_unit_test(test_send_or_recv_without_peer),
        cmocka_unit_test(test_depid_range),
        cmocka_unit_test(test_dependency_must_exist),
        cmocka_unit_test(test_dependency_on_itself),
        cmocka_unit_test(test_dependency_needs_hasdep),
        cmocka_unit_test(test_depid_and_deps_together),
        cmocka_unit_test(test_nop_chain_needs_depid_after),
        cmocka_unit_test(test_send_receive_counts_agree),
        cmocka_unit_test(test_kth_send_and_receive_agree_on_cnt),
        cmocka_unit_test(test_tb_without_partner),
        cmocka_unit_test(test_large_ring_is_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
