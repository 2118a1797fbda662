/* test_mpp.c — the MSCCL++ plan reader (exec/mpp_read.c) and, through
 * small hand-written plans, the interpreter (exec/mpp_run.c): what MSCCL++'s
 * parser refuses or crashes on is refused with the JSON path and line, the
 * format is told by content, a two-rank put/signal/wait allgather verifies,
 * and the same plan without its wait, with a relaxed pair or with a wait
 * nobody signals is caught. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/hazard.h"
#include "exec/mpp.h"

/* A 2-rank allgather: each rank puts its input chunk into the peer's output
 * chunk of its rank, copies its own, then signals; the peer waits.  %s are
 * the op names of rank 0's and rank 1's signal and wait, so tests can
 * weaken them; %s after them is extra ops for rank 0's block. */
static char *allgather(const char *sig, const char *wt, const char *extra)
{
    static const char *fmt =
        "{\n"
        "  \"name\": \"ag\", \"collective\": \"allgather\", \"protocol\": \"Simple\", \"inplace\": false,\n"
        "  \"gpus\": [\n"
        "    {\"id\": 0, \"input_chunks\": 1, \"output_chunks\": 2, \"scratch_chunks\": 0,\n"
        "     \"channels\": [{\"channel_type\": \"memory\", \"connected_to\": [1]}],\n"
        "     \"remote_buffers\": [{\"rank\": 1, \"type\": \"o\", \"access_channel_types\": [\"memory\"]}],\n"
        "     \"threadblocks\": [{\"id\": 0,\n"
        "       \"channels\": [{\"channel_type\": \"memory\", \"channel_ids\": [0]}],\n"
        "       \"remote_buffer_refs\": [{\"access_channel_type\": \"memory\", \"remote_buffer_ids\": [0]}],\n"
        "       \"ops\": [\n"
        "         {\"name\": \"put\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, \"size\": 1}],\n"
        "          \"dst_buff\": [{\"buffer_id\": 0, \"index\": 0, \"size\": 1}], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"copy\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, \"size\": 1}],\n"
        "          \"dst_buff\": [{\"type\": \"o\", \"index\": 0, \"size\": 1}]},\n"
        "         {\"name\": \"nop\"},\n"
        "         {\"name\": \"%s\", \"channel_ids\": [0], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"%s\", \"channel_ids\": [0], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"nop\"}%s]}]},\n"
        "    {\"id\": 1, \"input_chunks\": 1, \"output_chunks\": 2, \"scratch_chunks\": 0,\n"
        "     \"channels\": [{\"channel_type\": \"memory\", \"connected_to\": [0]}],\n"
        "     \"remote_buffers\": [{\"rank\": 0, \"type\": \"o\", \"access_channel_types\": [\"memory\"]}],\n"
        "     \"threadblocks\": [{\"id\": 0,\n"
        "       \"channels\": [{\"channel_type\": \"memory\", \"channel_ids\": [0]}],\n"
        "       \"remote_buffer_refs\": [{\"access_channel_type\": \"memory\", \"remote_buffer_ids\": [0]}],\n"
        "       \"ops\": [\n"
        "         {\"name\": \"put\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, \"size\": 1}],\n"
        "          \"dst_buff\": [{\"buffer_id\": 0, \"index\": 1, \"size\": 1}], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"copy\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, \"size\": 1}],\n"
        "          \"dst_buff\": [{\"type\": \"o\", \"index\": 1, \"size\": 1}]},\n"
        "         {\"name\": \"nop\"},\n"
        "         {\"name\": \"signal\", \"channel_ids\": [0], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"wait\", \"channel_ids\": [0], \"channel_type\": \"memory\"},\n"
        "         {\"name\": \"nop\"}]}]}\n"
        "  ]\n"
        "}\n";
    size_t n = strlen(fmt) + strlen(sig) + strlen(wt) + strlen(extra) + 1;
    char *s = malloc(n);
    snprintf(s, n, fmt, sig, wt, extra);
    return s;
}

/* Replace the first `from` in text by `to` (a new string). */
static char *subst(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

static void refused(const char *text, const char *want)
{
    tc_err e;
    mpp_plan *p = mpp_parse(text, "p.json", &e);
    if (p || !strstr(e.msg, want))
        fail_msg("wanted a refusal with \"%s\", got %s", want, p ? "a plan" : e.msg);
    assert_int_equal(e.code, TC_INPUT);
}

static void test_reads_a_plan(void **state)
{
    (void)state;
    char *t = allgather("signal", "wait", "");
    tc_err e;
    mpp_plan *p = mpp_parse(t, "p.json", &e);
    assert_non_null(p);
    assert_int_equal(mpp_nranks(p), 2);
    assert_string_equal(mpp_collective(p), "allgather");
    assert_int_equal(mpp_uses_switch(p), 0);
    assert_true(mpp_coll(p) >= 0);
    mpp_free(p);
    free(t);
}

static void test_sniff(void **state)
{
    (void)state;
    assert_int_equal(mpp_sniff("  \n{\"gpus\": []}"), 1);
    assert_int_equal(mpp_sniff("{\"name\": \"x\"}"), 0);
    assert_int_equal(mpp_sniff("<algo name=\"gpus\"/>"), 0);
    assert_int_equal(mpp_sniff("{\"gpus\": [ broken"), 1); /* ours to refuse, with a position */
}

static void test_refusals(void **state)
{
    (void)state;
    char *t = allgather("signal", "wait", "");
    struct { const char *from, *to, *want; } c[] = {
        {"\"name\": \"copy\"", "\"name\": \"frobnicate\"",
         "p.json:13: gpus[0].threadblocks[0].ops[1].name: unknown op 'frobnicate'"},
        {"\"input_chunks\": 1", "\"input_chunks\": 0", "gpus[0].input_chunks: 0: MSCCL++'s size check divides"},
        {"{\"id\": 1,", "{\"id\": 0,", "GPU rank does not match"},
        {"\"inplace\": false,", "", "inplace: missing"},
        {"\"channel_ids\": [0]}],\n       \"remote", "\"channel_ids\": [1]}],\n       \"remote",
         "channel_ids[0]: no memory channel 1 on this rank (it has 1"},
        {"\"buffer_id\": 0", "\"buffer_id\": 1", "dst_buff[0]: buffer_id 1: the threadblock has 1 remote buffers"},
        {"\"access_channel_types\": [\"memory\"]", "\"access_channel_types\": [\"port\"]",
         "is not accessed over memory channels"},
        {"\"index\": 0, \"size\": 1}], \"channel_type\"", "\"index\": 2, \"size\": 1}], \"channel_type\"",
         "chunks 2..2 of buffer o of rank 1, which has 2"},
        {"\"connected_to\": [1]", "\"connected_to\": [0]", "a channel to its own rank 0"},
        {"\"threadblocks\": [{\"id\": 0,", "\"threadblocks\": [{\"id\": 1,", "id 1 at position 0"},
        {"{\"name\": \"nop\"},\n         {\"name\": \"signal\"",
         "{\"name\": \"pipeline\", \"iter_context\": {\"unit_size\": 64, \"num_chunks\": 1}, \"ops\": "
         "[{\"name\": \"pipeline\", \"iter_context\": {\"unit_size\": 64, \"num_chunks\": 1}, \"ops\": []}]},\n"
         "         {\"name\": \"signal\"", "a pipeline inside a pipeline"},
        {"\"channel_type\": \"memory\"},\n         {\"name\": \"copy\"",
         "\"channel_type\": \"port\"},\n         {\"name\": \"copy\"",
         "buffer_id 0: the threadblock has 0 remote buffers accessed over port channels"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *m = subst(t, c[i].from, c[i].to);
        refused(m, c[i].want);
        free(m);
    }
    free(t);
    refused("{\"gpus\": [", "p.json:1:");
    refused("{\"name\": \"x\", \"collective\": \"allreduce\", \"protocol\": \"LL\", \"inplace\": true, "
            "\"gpus\": []}", "gpus: empty");
}

static void test_max_operation(void **state)
{
    (void)state;
    char extra[64 * 20] = "";
    for (int i = 0; i < 60; i++)
        strcat(extra, ", {\"name\": \"nop\"}");
    char *t = allgather("signal", "wait", extra);
    refused(t, "66 operations (pipeline bodies included); MSCCL++'s executor throws above 64");
    free(t);
}

/* Hazards a and b the same, wrong data left out (only a run with data
 * has it). */
static void same_hazards(const mpp_report *a, const mpp_report *b, const char *what)
{
    int i = 0, j = 0;
    for (;;) {
        while (i < a->hz.n && a->hz.v[i].kind == HZ_WRONG_DATA)
            i++;
        while (j < b->hz.n && b->hz.v[j].kind == HZ_WRONG_DATA)
            j++;
        if (i >= a->hz.n || j >= b->hz.n)
            break;
        if (strcmp(a->hz.v[i].msg, b->hz.v[j].msg) != 0)
            fail_msg("%s: hazard %d differs:\n  %s\n  %s", what, i, a->hz.v[i].msg, b->hz.v[j].msg);
        i++;
        j++;
    }
    if (i < a->hz.n || j < b->hz.n)
        fail_msg("%s: %d hazards against %d", what, a->hz.n, b->hz.n);
}

/* p run at o (with data, r) run again without data, by runs of granules
 * and per granule: the same time (to the bit), ops, bytes and hazards. */
static void same_without_data(const mpp_plan *p, const topo *t, const mpp_opts *o,
                              const mpp_report *r, const char *what)
{
    mpp_report rb, rs;
    mpp_opts ob = *o, os = *o;
    ob.data = os.data = 0;
    ob.bytewise = 1;
    tc_err e;
    assert_int_equal(mpp_run(p, t, &ob, &rb, &e), TC_OK);
    assert_int_equal(mpp_run(p, t, &os, &rs, &e), TC_OK);
    const mpp_report *v[2] = {&rb, &rs};
    for (int k = 0; k < 2; k++) {
        if (memcmp(&r->time_us, &v[k]->time_us, sizeof r->time_us) != 0)
            fail_msg("%s: %.17g us with data, %.17g without (%s)", what, r->time_us, v[k]->time_us,
                     k ? "runs" : "per granule");
        assert_int_equal(r->finished, v[k]->finished);
        assert_int_equal(r->ops_run, v[k]->ops_run);
        assert_int_equal(r->bytes_moved, v[k]->bytes_moved);
        same_hazards(r, v[k], what);
    }
    same_hazards(&rb, &rs, what);
    assert_int_equal(rb.hz.n, rs.hz.n);
    mpp_report_free(&rb);
    mpp_report_free(&rs);
}

static int run_plan_dt(const char *text, sim_dtype dt, mpp_report *r)
{
    tc_err e;
    mpp_plan *p = mpp_parse(text, "p.json", &e);
    assert_non_null(p);
    topo *t = mpp_default_topo(p);
    assert_non_null(t);
    mpp_opts o;
    mpp_opts_default(&o);
    o.size_bytes = 4096;
    o.dtype = dt;
    int rc = mpp_run(p, t, &o, r, &e);
    assert_int_equal(rc, TC_OK);
    same_without_data(p, t, &o, r, "p.json");
    topo_free(t);
    mpp_free(p);
    return r->verified;
}

static int run_plan(const char *text, mpp_report *r)
{
    return run_plan_dt(text, DT_I32, r);
}

static int has_hazard(const mpp_report *r, const char *want)
{
    for (int i = 0; i < r->hz.n; i++)
        if (strstr(r->hz.v[i].msg, want))
            return 1;
    return 0;
}

static void test_runs(void **state)
{
    (void)state;
    mpp_report r;
    char *t = allgather("signal", "wait", "");
    assert_int_equal(run_plan(t, &r), 1);
    assert_int_equal(r.wrong_elems, 0);
    assert_true(r.time_us > 0);
    assert_int_equal(r.in_bytes, 2048);
    mpp_report_free(&r);
    free(t);

    /* A relaxed pair orders no data: rank 1's later reads of its output are
     * fine (it wrote it), but nothing here reads the peer's data, so the
     * plan still verifies; what a relaxed pair cannot do is order a read of
     * data a peer put.  So: rank 0 reads its output back after the wait. */
    const char *readback = ", {\"name\": \"copy\", \"src_buff\": [{\"type\": \"o\", \"index\": 1, \"size\": 1}],"
                           " \"dst_buff\": [{\"type\": \"o\", \"index\": 1, \"size\": 1}]}";
    t = allgather("signal", "wait", readback);
    assert_int_equal(run_plan(t, &r), 1);
    mpp_report_free(&r);
    free(t);
    t = allgather("signal", "rlxwait", readback);
    assert_int_equal(run_plan(t, &r), 0);
    assert_true(has_hazard(&r, "gpus[0].threadblocks[0].ops[6] (copy) reads rank 0's o buffer at byte 2048 "
                               "before the wait that orders gpus[1].threadblocks[0].ops[0] (put)"));
    mpp_report_free(&r);
    free(t);

    /* Rank 0 waits twice, rank 1 signals once: a hang, said as such. */
    t = allgather("signal", "wait", ", {\"name\": \"wait\", \"channel_ids\": [0], \"channel_type\": \"memory\"}");
    assert_int_equal(run_plan(t, &r), 0);
    assert_int_equal(r.finished, 0);
    assert_true(has_hazard(&r, "waits for signal 2 but rank 1 signals it 1 time: waited more often than "
                               "signalled: a hang"));
    mpp_report_free(&r);
    free(t);

    /* Rank 0 signals twice, rank 1 waits once: the surplus. */
    t = allgather("signal", "wait", ", {\"name\": \"signal\", \"channel_ids\": [0], \"channel_type\": \"memory\"}");
    assert_int_equal(run_plan(t, &r), 0);
    assert_true(has_hazard(&r, "signalled 2 times and waited 1"));
    mpp_report_free(&r);
    free(t);
}

/* Rank 0's block runs op `first` then op `second` after its last nop
 * (scratch for the cpkt); the plan fails with hazard `want`. */
static void lanes_case(const char *first, const char *second, const char *want)
{
    char extra[1024];
    mpp_report r;
    snprintf(extra, sizeof extra, "%s%s", first, second);
    char *t = allgather("signal", "wait", extra);
    char *m = subst(t, "\"scratch_chunks\": 0", "\"scratch_chunks\": 2");
    assert_int_equal(run_plan(m, &r), 0);
    if (!has_hazard(&r, want))
        fail_msg("no hazard \"%s\"", want);
    mpp_report_free(&r);
    free(m);
    free(t);
}

/* Two ops of one block without a nop between, over the same bytes with
 * different lanes (a copy by 16-byte vectors, a cpkt's read by 8 bytes):
 * the same thread touches granule 0 in both, not granule 1 (byte 16), in
 * the per-granule bookkeeping and in the runs alike (run_plan checks). */
static void test_same_block_lanes(void **state)
{
    (void)state;
    const char *cp = ", {\"name\": \"copy\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, \"size\": 1}],"
                     " \"dst_buff\": [{\"type\": \"o\", \"index\": 0, \"size\": 1}]}";
    const char *pk = ", {\"name\": \"cpkt\", \"src_buff\": [{\"type\": \"o\", \"index\": 0, \"size\": 1}],"
                     " \"dst_buff\": [{\"type\": \"s\", \"index\": 0, \"size\": 1}]}";
    lanes_case(cp, pk, "ops[7] (cpkt) reads rank 0's o buffer at byte 16, which "
                       "gpus[0].threadblocks[0].ops[6] (copy) of the same threadblock wrote");
    lanes_case(pk, cp, "ops[7] (copy) overwrites rank 0's o buffer at byte 16 that "
                       "gpus[0].threadblocks[0].ops[6] (cpkt) of the same threadblock reads");
}

static void test_wrong_data(void **state)
{
    (void)state;
    /* rank 1 puts into the wrong output chunk of rank 0: chunk 1 of rank 0
     * is never written, its own chunk 0 is overwritten */
    char *t = allgather("signal", "wait", "");
    char *m = subst(t, "\"buffer_id\": 0, \"index\": 1", "\"buffer_id\": 0, \"index\": 0");
    mpp_report r;
    assert_int_equal(run_plan(m, &r), 0);
    assert_true(r.wrong_elems > 0);
    assert_true(has_hazard(&r, "rank 0 output (o) chunk"));
    mpp_report_free(&r);
    /* in bf16 too: 2-byte elements are checked as such */
    assert_int_equal(run_plan_dt(m, DT_BF16, &r), 0);
    assert_true(r.wrong_elems > 0);
    assert_true(has_hazard(&r, "rank 0 output (o) chunk"));
    mpp_report_free(&r);
    free(m);
    free(t);
}

/* Every plan of MSCCL++'s corpus (tests/data/mscclpp) that runs, in place
 * at 64 KiB and out of place at 192 KiB (rounded): the same report without data, by runs and
 * per granule, as with data (docs/mscclpp.md section 13). */
static void test_no_data_same(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("tests/data/mscclpp/*/*.json", 0, NULL, &g);
    glob("tests/data/mscclpp/*/*/*.json", GLOB_APPEND, NULL, &g);
    glob("tests/data/mscclpp/*/*/*/*.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 80);
    int compared = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        /* reuse_resources plans have 64 MiB of scratch a rank: the data and
         * per-granule references take ~1 GB and seconds there (the CLI
         * check in tests/cli/test_mscclpp_run.sh covers them by time) */
        if (strstr(g.gl_pathv[i], "multi_nodes.json") || strstr(g.gl_pathv[i], "allreduce_pipeline.json"))
            continue;
        tc_err e;
        mpp_plan *p = mpp_read(g.gl_pathv[i], &e);
        if (!p)
            continue;
        topo *t = mpp_default_topo(p);
        assert_non_null(t);
        for (int k = 0; k < 2; k++) {
            mpp_opts o;
            mpp_opts_default(&o);
            o.mode = k;
            o.size_bytes = mpp_round_size(p, k ? 3 << 16 : 1 << 16);
            mpp_report r;
            if (mpp_run(p, t, &o, &r, &e) != TC_OK)
                continue;
            same_without_data(p, t, &o, &r, g.gl_pathv[i]);
            mpp_report_free(&r);
            compared++;
        }
        topo_free(t);
        mpp_free(p);
    }
    globfree(&g);
    assert_true(compared >= 100);
}

/* 2-byte elements: AllReduce plans that reduce in memory, in LL packets
 * and in the switch run in bf16 and f16, verify (each step rounded to the
 * type, data.c), say whether the replicas are identical, and time as in
 * i32 and as without data (the bookkeeping is by bytes, not elements). */
static void test_half_types(void **state)
{
    (void)state;
    const char *plans[] = {"tests/data/mscclpp/dsl-tests/single_node/allreduce_n4.json",
                           "tests/data/mscclpp/dsl-tests/single_node/allreduce_pkt_n4.json",
                           "tests/data/mscclpp/dsl-tests/single_node/allreduce_nvls_zero_copy_n4.json"};
    for (size_t i = 0; i < sizeof plans / sizeof *plans; i++) {
        tc_err e;
        mpp_plan *p = mpp_read(plans[i], &e);
        assert_non_null(p);
        topo *t = mpp_default_topo(p);
        assert_non_null(t);
        mpp_opts o;
        mpp_opts_default(&o);
        o.size_bytes = mpp_round_size(p, 1 << 16);
        mpp_report r32;
        assert_int_equal(mpp_run(p, t, &o, &r32, &e), TC_OK);
        assert_true(r32.verified);
        for (sim_dtype dt = DT_BF16; dt <= DT_F16; dt++) {
            o.dtype = dt;
            mpp_report r;
            assert_int_equal(mpp_run(p, t, &o, &r, &e), TC_OK);
            if (!r.verified)
                fail_msg("%s %s: %s", plans[i], runtime_dtype_name(dt),
                         r.hz.n ? r.hz.v[0].msg : "not verified");
            assert_int_equal(r.wrong_elems, 0);
            assert_true(r.replicas_identical == 0 || r.replicas_identical == 1);
            assert_true(memcmp(&r.time_us, &r32.time_us, sizeof r.time_us) == 0);
            if (dt == DT_BF16)
                same_without_data(p, t, &o, &r, plans[i]);
            mpp_report_free(&r);
        }
        mpp_report_free(&r32);
        topo_free(t);
        mpp_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_plan),
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_max_operation),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_same_block_lanes),
        cmocka_unit_test(test_wrong_data),
        cmocka_unit_test(test_no_data_same),
        cmocka_unit_test(test_half_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
