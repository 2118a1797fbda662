/* test_rtdep.c — dependencies as the MSCCL runtimes number them
 * (exec/rtdep.h).
 *
 * Each case is a tb written the way a hand or a foreign tool might write
 * it; the expected counters and releasing steps were worked out by hand
 * from the runtimes' loader and kernel (the nop, fusion and hasdep rules
 * rtdep.h lists), not from this module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "exec/rtdep.h"

static prog_step *add(prog_tb *tb, step_type type, int depid, int deps, int hasdep)
{
    buf_kind b = type == ST_NOP ? BUF_NONE : BUF_I;
    prog_step *st = prog_add_step(tb, type, b, type == ST_NOP ? -1 : 0, type == ST_NOP ? BUF_NONE : BUF_O,
                                  type == ST_NOP ? -1 : 0, type == ST_NOP ? 0 : 1, depid, deps);
    st->hasdep = hasdep;
    return st;
}

/* Every nop with a dependency and hasdep where waited on: the counter is
 * the step number and each step releases itself. */
static void test_plain_file_counts_steps(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLGATHER, 1, 1);
    prog_tb *tb = prog_add_tb(prog_add_gpu(p, 1, 1, 0), -1, -1, 0);
    add(tb, ST_CPY, -1, -1, 1);
    add(tb, ST_NOP, 0, 0, 0);
    add(tb, ST_CPY, 0, 0, 1);
    add(tb, ST_CPY, -1, -1, 1);
    rtdep_tb d;
    rtdep_tb_of(tb, &d);
    assert_int_equal(d.pos[0], 0);
    assert_int_equal(d.pos[1], -1);
    assert_int_equal(d.pos[2], 2);
    assert_int_equal(d.pos[3], 3);
    assert_int_equal(rtdep_release(&d, 0), 0);
    assert_int_equal(rtdep_release(&d, 2), 2);
    assert_int_equal(rtdep_release(&d, 1), 2);   /* the nop's own number */
    assert_int_equal(rtdep_release(&d, 3), 3);
    assert_int_equal(rtdep_release(&d, 4), -1);  /* outside the tb */
    rtdep_tb_free(&d);
    prog_free(p);
}

/* A nop without a dependency is not counted: later steps publish one
 * less than their number. */
static void test_bare_nop_shifts_numbering(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLGATHER, 1, 1);
    prog_tb *tb = prog_add_tb(prog_add_gpu(p, 1, 1, 0), -1, -1, 0);
    add(tb, ST_NOP, -1, -1, 0);
    add(tb, ST_CPY, -1, -1, 1);
    add(tb, ST_CPY, -1, -1, 1);
    rtdep_tb d;
    rtdep_tb_of(tb, &d);
    assert_int_equal(d.pos[1], 0);
    assert_int_equal(d.pos[2], 1);
    assert_int_equal(rtdep_release(&d, 0), 1);
    assert_int_equal(rtdep_release(&d, 1), 2);
    assert_int_equal(rtdep_release(&d, 2), -1);  /* step 2 publishes 1 only */
    rtdep_tb_free(&d);
    prog_free(p);
}

/* Only hasdep=1 publishes: a wait on an unmarked step is released by the
 * next marked one. */
static void test_release_at_next_hasdep(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLGATHER, 1, 1);
    prog_tb *tb = prog_add_tb(prog_add_gpu(p, 1, 1, 0), -1, -1, 0);
    add(tb, ST_CPY, -1, -1, 0);
    add(tb, ST_CPY, -1, -1, 0);
    add(tb, ST_CPY, -1, -1, 1);
    add(tb, ST_CPY, -1, -1, 0);
    rtdep_tb d;
    rtdep_tb_of(tb, &d);
    assert_int_equal(rtdep_release(&d, 0), 2);
    assert_int_equal(rtdep_release(&d, 1), 2);
    assert_int_equal(rtdep_release(&d, 2), 2);
    assert_int_equal(rtdep_release(&d, 3), -1);
    rtdep_tb_free(&d);
    prog_free(p);
}

/* Consecutive re into one dst from one src buffer, the later ones with no
 * depid, fuse; a nop between does not break the chain, hasdep=1 does. */
static void test_re_chains(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLREDUCE, 1, 1);
    prog_tb *tb = prog_add_tb(prog_add_gpu(p, 1, 1, 4), -1, -1, 0);
    prog_step *a = add(tb, ST_RE, -1, -1, 0);            /* 0: starts a chain */
    a->srcbuf = BUF_S;
    prog_step *b = add(tb, ST_NOP, -1, -1, 0);           /* 1 */
    (void)b;
    prog_step *c = add(tb, ST_RE, -1, -1, 1);            /* 2: fused, ends it */
    c->srcbuf = BUF_S;
    c->srcoff = 1;
    prog_step *e = add(tb, ST_RE, -1, -1, 0);            /* 3: a new chain */
    e->srcbuf = BUF_S;
    e->srcoff = 2;
    prog_step *f = add(tb, ST_RE, 0, 0, 0);              /* 4: own depid: not fused */
    f->srcbuf = BUF_S;
    f->srcoff = 3;
    prog_step *g = add(tb, ST_RE, -1, -1, 1);            /* 5: other dst: not fused */
    g->srcbuf = BUF_S;
    g->dstoff = 0;
    g->dstbuf = BUF_I;
    rtdep_tb d;
    rtdep_tb_of(tb, &d);
    assert_int_equal(d.chain[0], -1);
    assert_int_equal(d.chain[2], 0);
    assert_int_equal(d.chain[3], -1);
    assert_int_equal(d.chain[4], -1);
    assert_int_equal(d.chain[5], -1);
    /* the bare nop is not counted: 0, (nop), 1, 2, 3, 4 */
    assert_int_equal(d.pos[2], 1);
    assert_int_equal(d.pos[5], 4);
    assert_int_equal(rtdep_release(&d, 0), 2);
    assert_int_equal(rtdep_release(&d, 2), 5);
    rtdep_tb_free(&d);
    prog_free(p);
}

/* The tb's trailing nops: their waits are never attached to anything. */
static void test_trailing_nops_dropped(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLGATHER, 1, 1);
    prog_tb *tb = prog_add_tb(prog_add_gpu(p, 1, 1, 0), -1, -1, 0);
    add(tb, ST_NOP, 0, 0, 0);
    add(tb, ST_CPY, 0, 0, 1);
    add(tb, ST_NOP, 0, 1, 0);
    add(tb, ST_NOP, 0, 1, 0);
    rtdep_tb d;
    rtdep_tb_of(tb, &d);
    assert_int_equal(d.dropped[0], 0);
    assert_int_equal(d.dropped[1], 0);
    assert_int_equal(d.dropped[2], 1);
    assert_int_equal(d.dropped[3], 1);
    rtdep_tb_free(&d);
    prog_free(p);
}

/* rtdep_resolve: NULL when nothing moves; else every wait names the step
 * that releases it, the rest of the file unchanged. */
static void test_resolve_rewrites_waits(void **state)
{
    (void)state;
    prog *p = prog_new("x", COLL_ALLGATHER, 1, 1);
    prog_gpu *gp = prog_add_gpu(p, 1, 1, 0);
    prog_tb *t0 = prog_add_tb(gp, -1, -1, 0);
    add(t0, ST_CPY, -1, -1, 1);
    add(t0, ST_CPY, -1, -1, 1);
    prog_tb *t1 = prog_add_tb(&p->gpus[0], -1, -1, 0);
    add(t1, ST_CPY, 0, 1, 0);
    long long n = -1;
    assert_null(rtdep_resolve(p, &n));
    assert_int_equal(n, 0);

    p->gpus[0].tbs[0].steps[0].hasdep = 0;      /* nothing changes: waits on 1 */
    assert_null(rtdep_resolve(p, &n));
    p->gpus[0].tbs[1].steps[0].deps = 0;        /* waits on 0, released by 1 */
    prog *q = rtdep_resolve(p, &n);
    assert_non_null(q);
    assert_int_equal(n, 1);
    assert_int_equal(q->gpus[0].tbs[1].steps[0].depid, 0);
    assert_int_equal(q->gpus[0].tbs[1].steps[0].deps, 1);
    assert_int_equal(q->gpus[0].tbs[1].steps[0].type, ST_CPY);
    assert_int_equal(q->gpus[0].ntbs, 2);
    assert_int_equal(q->ngpus, 1);
    prog_free(q);
    prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_file_counts_steps),
        cmocka_unit_test(test_bare_nop_shifts_numbering),
        cmocka_unit_test(test_release_at_next_hasdep),
        cmocka_unit_test(test_re_chains),
        cmocka_unit_test(test_trailing_nops_dropped),
        cmocka_unit_test(test_resolve_rewrites_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
