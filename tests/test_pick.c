/* test_pick.c — which loaded schedule a runtime runs for a call: the legacy
 * runtime's exact in-place match and half-open byte range (maxBytes 0 never
 * picked), the newer executor's flags and closed range (0 = no limit),
 * whole elements per chunk, collective and communicator size, first match in
 * load order; and loading a directory of files in name order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/pick.h"
#include "sched/xml.h"

/* An AllGather on 4 ranks with 8 chunks per loop (sizes: multiples of 32). */
static prog *mk(int inplace, int outofplace, long long lo, long long hi)
{
    prog *p = prog_new("t", COLL_ALLGATHER, 4, 8);
    p->inplace = inplace;
    p->outofplace = outofplace;
    p->min_bytes = lo;
    p->max_bytes = hi;
    for (int r = 0; r < 4; r++)
        prog_add_gpu(p, 2, 8, 0);
    return p;
}

static void test_legacy_rules(void **state)
{
    (void)state;
    prog *p = mk(0, 1, 1024, 4096);
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 0, 1024, RT_MSCCL));
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 0, 4064, RT_MSCCL));
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 0, 4096, RT_MSCCL));    /* maxBytes excluded */
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 0, 992, RT_MSCCL));     /* below minBytes */
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 1, 1024, RT_MSCCL));    /* in place: inplace=0 */
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 0, 1040, RT_MSCCL));    /* 1040 % 32 != 0 */
    assert_false(pick_matches(p, COLL_ALLREDUCE, 4, 0, 1024, RT_MSCCL));
    assert_false(pick_matches(p, COLL_ALLGATHER, 8, 0, 1024, RT_MSCCL));
    /* the legacy runtime reads only `inplace`: a file with both flags serves
     * in-place calls only */
    p->inplace = 1;
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 1, 1024, RT_MSCCL));
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 0, 1024, RT_MSCCL));
    /* maxBytes 0: never picked */
    p->max_bytes = 0;
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 1, 1024, RT_MSCCL));
    prog_free(p);
}

static void test_executor_rules(void **state)
{
    (void)state;
    prog *p = mk(1, 1, 1024, 4096);
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 0, 4096, RT_EXECUTOR));     /* maxBytes included */
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 1, 4096, RT_EXECUTOR));
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 1, 4128, RT_EXECUTOR));
    p->max_bytes = 0;                                                 /* no limit */
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 0, 1LL << 40, RT_EXECUTOR));
    p->inplace = 0;
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 1, 1024, RT_EXECUTOR));
    assert_true(pick_matches(p, COLL_ALLGATHER, 4, 0, 1024, RT_EXECUTOR));
    p->inplace = 1;
    p->outofplace = 0;
    assert_false(pick_matches(p, COLL_ALLGATHER, 4, 0, 1024, RT_EXECUTOR));
    prog_free(p);
}

static void write_file(const char *dir, const char *name, prog *p)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tc_err e;
    xml_write_opts wo = {0};
    if (prog_write_xml(p, path, &wo, &e) != TC_OK)
        fail_msg("%s", e.msg);
}

static void test_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_pick.XXXXXX";
    assert_non_null(mkdtemp(dir));
    tc_err e;
    /* empty: refused, naming the directory */
    assert_null(pick_set_load(dir, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "no schedule"));
    /* two overlapping files: the first in name order wins */
    prog *a = mk(0, 1, 0, 1LL << 20), *b = mk(0, 1, 0, 1LL << 20);
    snprintf(a->name, sizeof a->name, "a");
    snprintf(b->name, sizeof b->name, "b");
    prog *c = mk(1, 1, 0, 1LL << 20);
    write_file(dir, "b.xml", b);
    write_file(dir, "a.xml", a);
    write_file(dir, "c-inplace.xml", c);
    char other[600];
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    FILE *f = fopen(other, "w");
    fputs("not a schedule\n", f);
    fclose(f);
    pick_set *s = pick_set_load(dir, &e);
    if (!s)
        fail_msg("%s", e.msg);
    assert_int_equal(pick_set_count(s), 3);
    assert_string_equal(pick_set_name(s, 0), "a.xml");
    assert_int_equal(pick_schedule(s, COLL_ALLGATHER, 4, 0, 4096, RT_MSCCL), 0);
    assert_int_equal(pick_schedule(s, COLL_ALLGATHER, 4, 1, 4096, RT_MSCCL), 2);
    assert_int_equal(pick_schedule(s, COLL_ALLGATHER, 4, 0, 1LL << 21, RT_MSCCL), -1);  /* NCCL */
    assert_int_equal(pick_set_target(s), RT_MSCCL);
    pick_set_free(s);
    /* a file that does not parse: refused, naming it */
    snprintf(other, sizeof other, "%s/z.xml", dir);
    f = fopen(other, "w");
    fputs("<algo>\n", f);
    fclose(f);
    assert_null(pick_set_load(dir, &e));
    assert_non_null(strstr(e.msg, "z.xml"));
    unlink(other);
    const char *names[] = {"a.xml", "b.xml", "c-inplace.xml", "notes.txt"};
    for (int i = 0; i < 4; i++) {
        snprintf(other, sizeof other, "%s/%s", dir, names[i]);
        unlink(other);
    }
    rmdir(dir);
    assert_null(pick_set_load(dir, &e));    /* gone */
    prog_free(a);
    prog_free(b);
    prog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_rules),
        cmocka_unit_test(test_executor_rules),
        cmocka_unit_test(test_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
