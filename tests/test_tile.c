/* test_tile.c — the runtimes' tile loop (sched/tile.h) and taccl-run's
 * --tiles (run_opts.tiles): a chunk larger than the protocol's tile runs
 * in passes of the whole program, one operation per chunk; a smaller one
 * in one pass with steps split at max_count; dependencies point into the
 * same pass; the data check still holds; the time pays one alpha per
 * operation; and sizes that cannot be tiled are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "exec/run.h"
#include "model/cost.h"
#include "sched/tile.h"

#define MIB (1LL << 20)

/* AllGather on 2 ranks, 2 chunks per rank (4 per loop): tb 0 sends both
 * input chunks in one step, tb 1 receives both into the output, tb 2
 * copies the input into place once tb 1 has received (a dependency). */
static prog *two_rank_allgather(const char *proto)
{
    prog *p = prog_new("ag2", COLL_ALLGATHER, 2, 4);
    snprintf(p->proto, sizeof p->proto, "%s", proto);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = prog_add_gpu(p, 2, 4, 0);
        prog_tb *t0 = prog_add_tb(g, 1 - r, -1, 0);
        prog_add_step(t0, ST_S, BUF_I, 0, BUF_O, 2 * r, 2, -1, -1);
        prog_tb *t1 = prog_add_tb(g, -1, 1 - r, 0);
        prog_add_step(t1, ST_R, BUF_I, 0, BUF_O, 2 * (1 - r), 2, -1, -1)->hasdep = 1;
        prog_tb *t2 = prog_add_tb(g, -1, -1, 0);
        prog_add_step(t2, ST_CPY, BUF_I, 0, BUF_O, 2 * r, 2, 1, 0);
    }
    return p;
}

/* Chunks of 8 MiB under Simple: 4 passes of 2 MiB, every step of 2
 * chunks two operations of one sub-chunk each, sub-chunk c * 4 + pass. */
static void test_passes(void **state)
{
    (void)state;
    prog *p = two_rank_allgather("Simple");
    tile_info in;
    tc_err e;
    prog *q = tile_prog(p, 32 * MIB, &in, &e);
    assert_non_null(q);
    assert_int_equal(in.chunk_bytes, 8 * MIB);
    assert_int_equal(in.tile_bytes, 2 * MIB);
    assert_int_equal(in.passes, 4);
    assert_int_equal(in.runtime_passes, 4);
    assert_int_equal(in.max_count, 1);
    assert_int_equal(q->nchunksperloop, 16);
    assert_int_equal(q->gpus[1].i_chunks, 8);
    assert_int_equal(q->gpus[1].o_chunks, 16);
    const prog_tb *t0 = &q->gpus[1].tbs[0], *t1 = &q->gpus[1].tbs[1], *t2 = &q->gpus[1].tbs[2];
    assert_int_equal(t0->nsteps, 8);
    assert_int_equal(in.ops, 2 * 3 * 8);
    assert_int_equal(in.steps, 2 * 3);
    for (int pass = 0; pass < 4; pass++)
        for (int k = 0; k < 2; k++) {
            const prog_step *x = &t0->steps[pass * 2 + k];
            assert_int_equal(x->s, pass * 2 + k);
            assert_int_equal(x->cnt, 1);
            assert_int_equal(x->srcoff, k * 4 + pass);
            assert_int_equal(x->dstoff, (2 + k) * 4 + pass);
            /* the receive's last operation of each pass is waited for */
            assert_int_equal(t1->steps[pass * 2 + k].hasdep, k == 1);
            /* the copy waits for that receive in its own pass, once */
            const prog_step *y = &t2->steps[pass * 2 + k];
            assert_int_equal(y->depid, k == 0 ? 1 : -1);
            assert_int_equal(y->deps, k == 0 ? pass * 2 + 1 : -1);
        }
    prog_free(q);
    /* LL: 32 KiB tiles, so 64 KiB chunks take 2 passes */
    snprintf(p->proto, sizeof p->proto, "LL");
    q = tile_prog(p, 256 * 1024, &in, &e);
    assert_non_null(q);
    assert_int_equal(in.tile_bytes, 32 * 1024);
    assert_int_equal(in.passes, 2);
    prog_free(q);
    prog_free(p);
}

/* Chunks no larger than a tile: one pass; a step of more chunks than
 * max_count = tile / chunk goes as several operations. */
static void test_max_count(void **state)
{
    (void)state;
    prog *p = two_rank_allgather("Simple");
    tile_info in;
    tc_err e;
    prog *q = tile_prog(p, 2 * MIB, &in, &e);        /* 512 KiB chunks: 4 a step */
    assert_non_null(q);
    assert_int_equal(in.passes, 1);
    assert_int_equal(in.max_count, 4);
    assert_int_equal(q->nchunksperloop, 4);
    assert_int_equal(q->gpus[0].tbs[0].nsteps, 1);
    assert_int_equal(q->gpus[0].tbs[0].steps[0].cnt, 2);
    prog_free(q);
    q = tile_prog(p, 6 * MIB, &in, &e);              /* 1.5 MiB chunks: 1 a step */
    assert_non_null(q);
    assert_int_equal(in.passes, 1);
    assert_int_equal(in.max_count, 1);
    const prog_tb *t0 = &q->gpus[0].tbs[0];
    assert_int_equal(t0->nsteps, 2);
    assert_int_equal(t0->steps[0].srcoff, 0);
    assert_int_equal(t0->steps[1].srcoff, 1);
    assert_int_equal(t0->steps[1].cnt, 1);
    assert_int_equal(q->gpus[0].tbs[2].steps[0].deps, 1);   /* the receive's last */
    prog_free(q);
    prog_free(p);
}

static void test_refused(void **state)
{
    (void)state;
    prog *p = two_rank_allgather("Simple");
    tc_err e;
    assert_null(tile_prog(p, 10, NULL, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "not a multiple of the 4 chunks"));
    /* 2 MiB + 2 bytes a chunk: several passes of a chunk of half elements */
    assert_null(tile_prog(p, 4 * (2 * MIB + 2), NULL, &e));
    assert_non_null(strstr(e.msg, "not whole 4-byte elements"));
    /* 2 MiB + 4 bytes: 2 passes would be tiles of 1 MiB + 2 bytes, so 3 of
     * (2 MiB + 4) / 3 = 699052 bytes, the runtime's 2 passes said beside */
    tile_info in;
    prog *q = tile_prog(p, 4 * (2 * MIB + 4), &in, &e);
    assert_non_null(q);
    assert_int_equal(in.runtime_passes, 2);
    assert_int_equal(in.passes, 3);
    assert_int_equal(q->nchunksperloop, 12);
    prog_free(q);
    prog_free(p);
}

/* Run with and without tiles: the data still verifies; the send of two
 * 8 MiB chunks over one link costs 8 operations of alpha + 2 MiB / B in
 * place of one step of alpha + 16 MiB / B, and the copy waiting for the
 * receive now follows it pass by pass, so only the last pass's 4 MiB is
 * left after the link (whole: all 16 MiB); the report says so. */
static void test_run(void **state)
{
    (void)state;
    prog *p = two_rank_allgather("Simple");
    topo *t = topo_default(2);
    topo_route rt = topo_route_of(t, 0, 1);
    run_opts o;
    run_opts_default(&o);
    o.size_bytes = 32 * MIB;
    o.mode = 0;
    o.tiles = 0;    /* the program once (taccl-run --steps) */
    run_report r;
    tc_err e;
    assert_int_equal(run_schedule(p, t, &o, &r, &e), TC_OK);
    assert_true(r.verified);
    assert_false(r.tiled);
    double whole = r.res[0].time_us;
    double want = cost_hop_us(&rt, 16.0 * MIB) + cost_copy_us(t, 16.0 * MIB);
    assert_true(fabs(whole - want) < 1e-6 * want);
    run_report_free(&r);
    o.tiles = 1;
    assert_int_equal(run_schedule(p, t, &o, &r, &e), TC_OK);
    assert_true(r.verified);
    assert_true(r.tiled);
    assert_int_equal(r.tile.passes, 4);
    double tiled = r.res[0].time_us;
    want = 8 * cost_hop_us(&rt, 2.0 * MIB) + cost_copy_us(t, 4.0 * MIB);
    assert_true(fabs(tiled - want) < 1e-6 * want);
    run_report_free(&r);
    /* a size whose chunks fit one tile, each step one operation, is the
     * program itself in passes; 32 MiB (16 MiB chunks) is not */
    assert_int_equal(tile_needed(p, 32 * MIB), 1);
    assert_int_equal(tile_needed(p, 1 * MIB), 0);
    /* the default timing on a GPU topology is the passes (model/variant.h) */
    o.tiles = -1;
    assert_int_equal(run_schedule(p, t, &o, &r, &e), TC_OK);
    assert_true(r.tiled);
    assert_true(fabs(r.res[0].time_us - tiled) < 1e-9 * tiled);
    run_report_free(&r);
    o.tiles = 1;
    /* a size that cannot be tiled is an input error, as the file's own */
    o.size_bytes = 4 * (2 * MIB + 2);
    assert_int_equal(run_schedule(p, t, &o, &r, &e), TC_INPUT);
    run_report_free(&r);
    topo_free(t);
    prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_max_count),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
