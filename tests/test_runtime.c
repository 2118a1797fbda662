/* test_runtime.c — the one table of runtimes (model/runtime.h): names and
 * their parser with its one-line error, the limits each runtime's sources
 * state, the coll spellings, the advice of a refusal, and MSCCL++ being a
 * runtime whose plans this build does not write yet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "model/runtime.h"

static void test_parse_every_user_name(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        runtime rt;
    } want[] = {{"msccl", RT_MSCCL}, {"msccl-executor", RT_EXECUTOR}, {"mscclpp", RT_MSCCLPP},
                {"unlimited", RT_UNLIMITED}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        runtime rt = RT_ANY;
        tc_err e;
        assert_int_equal(runtime_parse(want[i].name, &rt, &e), TC_OK);
        assert_int_equal(rt, want[i].rt);
        assert_string_equal(runtime_name(rt), want[i].name);
    }
}

static void test_parse_refuses_with_the_list(void **state)
{
    (void)state;
    runtime rt = RT_MSCCL;
    tc_err e;
    assert_int_equal(runtime_parse("gpu", &rt, &e), TC_INPUT);
    assert_string_equal(e.msg, "expected msccl, msccl-executor, mscclpp or unlimited, got 'gpu'");
    assert_int_equal(rt, RT_MSCCL);     /* untouched */
    /* RT_ANY is no name a user gives; names are case-sensitive */
    assert_int_equal(runtime_parse("any", &rt, &e), TC_INPUT);
    assert_int_equal(runtime_parse("MSCCL", &rt, &e), TC_INPUT);
    assert_int_equal(runtime_parse(NULL, &rt, &e), TC_INPUT);
    /* a file names only the MSCCL runtimes, quoted as XML quotes */
    assert_int_equal(runtime_parse_file("msccl-executor", &rt, &e), TC_OK);
    assert_int_equal(rt, RT_EXECUTOR);
    assert_int_equal(runtime_parse_file("unlimited", &rt, &e), TC_INPUT);
    assert_string_equal(e.msg, "expected msccl or msccl-executor, got \"unlimited\"");
}

/* The figures the runtimes' sources give (runtime.c names where). */
static void test_limits(void **state)
{
    (void)state;
    const runtime_info *m = runtime_get(RT_MSCCL), *x = runtime_get(RT_EXECUTOR);
    const runtime_info *pp = runtime_get(RT_MSCCLPP), *u = runtime_get(RT_UNLIMITED);
    const runtime_info *any = runtime_get(RT_ANY);
    assert_int_equal(m->max_steps_per_tb, 256);
    assert_int_equal(m->max_tbs_per_gpu, 216);
    assert_int_equal(x->max_steps_per_tb, 64);
    assert_int_equal(x->max_tbs_per_gpu, 1024);
    for (int r = RT_ANY; r <= RT_EXECUTOR; r++) {
        const runtime_info *i = runtime_get((runtime)r);
        assert_int_equal(i->max_cnt, 72);
        assert_int_equal(i->max_depid, 127);
        assert_int_equal(i->max_channels, 32);
        assert_int_equal(i->parser_nodes, 4095);
        assert_true(i->has_loader);
    }
    /* no target: what every MSCCL runtime refuses, the larger limits */
    assert_int_equal(any->max_steps_per_tb, 256);
    assert_int_equal(any->max_tbs_per_gpu, 1024);
    assert_true(any->plural);
    /* MSCCL++ (docs/mscclpp.md §7) */
    assert_int_equal(pp->max_steps_per_tb, 64);
    assert_int_equal(pp->max_channels, 16);
    assert_int_equal(pp->threads_per_block, 1024);
    assert_true(pp->max_bytes_inclusive);
    /* simulation: no steps, tbs, depid or parser limit, and no loader */
    assert_false(u->has_loader);
    assert_int_equal(u->max_steps_per_tb, 0);
    assert_int_equal(u->max_tbs_per_gpu, 0);
    assert_int_equal(u->max_depid, 0);
    assert_int_equal(u->parser_nodes, 0);
    /* the selection rules: legacy half-open and one mode; executor closed, both */
    assert_false(m->max_bytes_inclusive);
    assert_true(m->inplace_only);
    assert_int_equal(m->max_files, 4);
    assert_true(x->max_bytes_inclusive);
    assert_false(x->inplace_only);
    assert_int_equal(x->max_files, 0);
    assert_int_equal(u->selects_as, RT_MSCCL);
    assert_int_equal(any->selects_as, RT_MSCCL);
    assert_int_equal(x->selects_as, RT_EXECUTOR);
}

static void test_coll_spellings(void **state)
{
    (void)state;
    assert_string_equal(runtime_coll_xml(RT_MSCCL, COLL_REDUCESCATTER), "reduce_scatter");
    assert_string_equal(runtime_coll_xml(RT_EXECUTOR, COLL_REDUCESCATTER), "reducescatter");
    assert_string_equal(runtime_coll_xml(RT_ANY, COLL_REDUCESCATTER), "reduce_scatter");
    assert_string_equal(runtime_coll_xml(RT_UNLIMITED, COLL_REDUCESCATTER), "reduce_scatter");
    assert_string_equal(runtime_coll_xml(RT_EXECUTOR, COLL_ALLGATHER), "allgather");
    assert_true(runtime_coll_ok(RT_MSCCL, "reduce_scatter"));
    assert_false(runtime_coll_ok(RT_MSCCL, "reducescatter"));
    assert_true(runtime_coll_ok(RT_EXECUTOR, "reducescatter"));
    assert_false(runtime_coll_ok(RT_EXECUTOR, "reduce_scatter"));
    assert_true(runtime_coll_ok(RT_ANY, "reduce_scatter"));
    assert_true(runtime_coll_ok(RT_ANY, "reducescatter"));
    assert_true(runtime_coll_ok(RT_ANY, "allreduce"));
    assert_false(runtime_coll_ok(RT_ANY, "AllGather"));
}

static void test_roomier(void **state)
{
    (void)state;
    /* 65..256 steps: the legacy runtime holds them, the executor does not */
    assert_int_equal(runtime_roomier(RT_EXECUTOR, 65, 0), RT_MSCCL);
    assert_int_equal(runtime_roomier(RT_EXECUTOR, 257, 0), RT_ANY);
    /* 217..1024 tbs: the executor */
    assert_int_equal(runtime_roomier(RT_MSCCL, 0, 300), RT_EXECUTOR);
    assert_int_equal(runtime_roomier(RT_MSCCL, 0, 1025), RT_ANY);
    /* never a runtime whose files this build does not write */
    for (int s = 0; s <= 300; s += 50)
        assert_int_not_equal(runtime_roomier(RT_MSCCL, s, 0), RT_MSCCLPP);
}

static void test_mscclpp_not_written_yet(void **state)
{
    (void)state;
    tc_err e;
    for (int r = 0; r < RT_COUNT; r++)
        if (r != RT_MSCCLPP) {
            assert_true(runtime_writes_xml((runtime)r));
            assert_int_equal(runtime_writable((runtime)r, &e), TC_OK);
        }
    assert_false(runtime_writes_xml(RT_MSCCLPP));
    assert_int_equal(runtime_writable(RT_MSCCLPP, &e), TC_INPUT);
    assert_string_equal(e.msg, "this build cannot write MSCCL++ plans yet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_every_user_name),
        cmocka_unit_test(test_parse_refuses_with_the_list),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_coll_spellings),
        cmocka_unit_test(test_roomier),
        cmocka_unit_test(test_mscclpp_not_written_yet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
