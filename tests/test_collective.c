/* test_collective.c — chunk-level definitions of the collectives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "model/collective.h"

static void test_parse_spellings(void **state)
{
    (void)state;
    coll_kind k;
    assert_int_equal(coll_parse("reduce_scatter", &k), 0);
    assert_int_equal(k, COLL_REDUCESCATTER);
    assert_int_equal(coll_parse("ReduceScatter", &k), 0);
    assert_int_equal(k, COLL_REDUCESCATTER);
    assert_int_equal(coll_parse("all-gather", &k), 0);
    assert_int_equal(k, COLL_ALLGATHER);
    assert_int_equal(coll_parse("allreduce", &k), 0);
    assert_int_equal(k, COLL_ALLREDUCE);
    assert_int_equal(coll_parse("broadcast", &k), -1);
    assert_int_equal(coll_parse("", &k), -1);
}

static void test_shapes(void **state)
{
    (void)state;
    int in, out;
    tc_err e;
    assert_int_equal(coll_shape(COLL_ALLGATHER, 4, 8, &in, &out, &e), TC_OK);
    assert_int_equal(in, 2);
    assert_int_equal(out, 8);
    assert_int_equal(coll_shape(COLL_REDUCESCATTER, 4, 4, &in, &out, &e), TC_OK);
    assert_int_equal(in, 4);
    assert_int_equal(out, 1);
    assert_int_equal(coll_shape(COLL_ALLREDUCE, 3, 1, &in, &out, &e), TC_OK);
    assert_int_equal(coll_shape(COLL_ALLTOALL, 4, 6, &in, &out, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "nchunksperloop"));
}

static void test_sources(void **state)
{
    (void)state;
    int sr, sc;
    /* AllGather, 4 ranks, 2 chunks each: output 5 is rank 2's chunk 1. */
    coll_out_source(COLL_ALLGATHER, 4, 8, 0, 5, &sr, &sc);
    assert_int_equal(sr, 2);
    assert_int_equal(sc, 1);
    /* AllToAll, 4 ranks, 1 chunk per pair: rank 1's output 3 is rank 3's input 1. */
    coll_out_source(COLL_ALLTOALL, 4, 4, 1, 3, &sr, &sc);
    assert_int_equal(sr, 3);
    assert_int_equal(sc, 1);
    /* ReduceScatter: rank 2's output 0 sums input chunk 2 of everyone. */
    coll_out_source(COLL_REDUCESCATTER, 4, 4, 2, 0, &sr, &sc);
    assert_int_equal(sr, -1);
    assert_int_equal(sc, 2);
}

static void test_in_dests_inverts_out_source(void **state)
{
    (void)state;
    /* Every destination coll_in_dests names must map back to the same input
     * chunk through coll_out_source, for every collective and shape. */
    int n = 4;
    for (int k = 0; k < COLL_COUNT; k++)
        for (int C = 4; C <= 8; C += 4) {
            int in, out;
            assert_int_equal(coll_shape((coll_kind)k, n, C, &in, &out, NULL), TC_OK);
            for (int o = 0; o < n; o++)
                for (int i = 0; i < in; i++) {
                    int dr[4], oi[4];
                    int m = coll_in_dests((coll_kind)k, n, C, o, i, dr, oi);
                    assert_true(m >= 1);
                    for (int d = 0; d < m; d++) {
                        int sr, sc;
                        coll_out_source((coll_kind)k, n, C, dr[d], oi[d], &sr, &sc);
                        assert_int_equal(sc, i);
                        if (sr >= 0)
                            assert_int_equal(sr, o);
                    }
                }
        }
}

static void test_bandwidth(void **state)
{
    (void)state;
    assert_true(coll_busbw_factor(COLL_ALLREDUCE, 4) == 1.5);
    assert_true(coll_busbw_factor(COLL_ALLGATHER, 4) == 0.75);
    /* 1e9 bytes in 1e6 us = 1 GB/s */
    assert_true(coll_algbw_gbps(COLL_ALLGATHER, 1e9, 1e6) == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_spellings),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_in_dests_inverts_out_source),
        cmocka_unit_test(test_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
