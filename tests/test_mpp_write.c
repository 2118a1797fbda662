/* test_mpp_write.c — MSCCL++ plans from MSCCL programs (sched/mpp.h, docs/mscclpp.md
 * §12): which outputs are plans; a two-rank exchange lowered to the ops the
 * rules say (ready handshake, a put straight into the destination, a signal,
 * a wait), in the DSL's key order; a receive that must land in scratch; a
 * dependency as a semaphore; sends with no receiver refused; and a plan
 * directory (--plan) of MSCCL++ files with their ranges, buffer modes and
 * plan.json's selection entries, every file passing scripts/mpp_check.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fixtures.h"
#include "plan/plan.h"
#include "sched/mpp.h"

static void test_wanted(void **state)
{
    (void)state;
    assert_true(mpp_wanted("out.json", 0));
    assert_true(mpp_wanted("dir/x.JSON.json", 0));
    assert_false(mpp_wanted("out.xml", 0));
    assert_false(mpp_wanted("json", 0));
    assert_true(mpp_wanted("out.xml", 1));     /* --target mscclpp */
}

/* AllGather on 2 ranks, 1 chunk each: tb0 sends i0 to the peer and receives
 * the peer's chunk into o[peer]; tb1 copies i0 to o[r] after tb0's step 0
 * (a dependency across blocks). */
static prog *exchange(int reduce)
{
    prog *p = prog_new("x", reduce ? COLL_ALLREDUCE : COLL_ALLGATHER, 2, reduce ? 1 : 2);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = reduce ? prog_add_gpu(p, 1, 1, 0) : prog_add_gpu(p, 1, 2, 0);
        prog_tb *t0 = prog_add_tb(g, 1 - r, 1 - r, 0);
        prog_add_step(t0, ST_S, BUF_I, 0, BUF_NONE, 0, 1, -1, -1)->hasdep = 1;
        if (reduce) {
            prog_add_step(t0, ST_RRC, BUF_I, 0, BUF_O, 0, 1, -1, -1);
        } else {
            prog_add_step(t0, ST_R, BUF_NONE, 0, BUF_O, 1 - r, 1, -1, -1);
            g = &p->gpus[r];
            prog_tb *t1 = prog_add_tb(g, -1, -1, 0);
            prog_add_step(t1, ST_CPY, BUF_I, 0, BUF_O, r, 1, 0, 0);
        }
    }
    return p;
}

static cJSON *plan_of(const prog *p)
{
    tc_err e;
    char *text = mpp_to_json(p, NULL, &e);
    if (!text)
        fail_msg("mpp_to_json: %s", e.msg);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static const char *op_name(const cJSON *tb, int k)
{
    const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(tb, "ops"), k);
    return o ? cJSON_GetObjectItem(o, "name")->valuestring : "(none)";
}

static void test_exchange(void **state)
{
    (void)state;
    prog *p = exchange(0);
    cJSON *j = plan_of(p);
    static const char *const keys[] = {"name", "collective", "protocol", "inplace",
                                       "reuse_resources", "gpus", "num_threads_per_block",
                                       "use_double_scratch_buffer", "buffer_alignment",
                                       "min_message_size", "max_message_size"};
    int k = 0;
    for (const cJSON *c = j->child; c; c = c->next, k++)
        assert_string_equal(c->string, keys[k]);
    assert_int_equal(k, 11);
    assert_string_equal(cJSON_GetObjectItem(j, "protocol")->valuestring, "Simple");
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0);
    assert_int_equal(cJSON_GetObjectItem(g, "input_chunks")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(g, "output_chunks")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(g, "scratch_chunks")->valueint, 0);  /* direct */
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "channels"), 0);
    assert_string_equal(cJSON_GetObjectItem(ch, "channel_type")->valuestring, "memory");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ch, "connected_to")), 2);
    const cJSON *tbs = cJSON_GetObjectItem(g, "threadblocks");
    const cJSON *t0 = cJSON_GetArrayItem(tbs, 0), *t1 = cJSON_GetArrayItem(tbs, 1);
    static const char *const want0[] = {"signal", "wait", "nop", "put", "nop", "signal",
                                        "sem_release", "wait"};
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t0, "ops")), 8);
    for (int i = 0; i < 8; i++)
        assert_string_equal(op_name(t0, i), want0[i]);
    const cJSON *put = cJSON_GetArrayItem(cJSON_GetObjectItem(t0, "ops"), 3);
    const cJSON *dst = cJSON_GetArrayItem(cJSON_GetObjectItem(put, "dst_buff"), 0);
    assert_int_equal(cJSON_GetObjectItem(dst, "buffer_id")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(dst, "index")->valueint, 0);   /* peer's o[0] */
    const cJSON *rb = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "remote_buffers"), 0);
    assert_string_equal(cJSON_GetObjectItem(rb, "type")->valuestring, "o");
    assert_int_equal(cJSON_GetObjectItem(rb, "rank")->valueint, 1);
    static const char *const want1[] = {"sem_acquire", "nop", "copy"};
    for (int i = 0; i < 3; i++)
        assert_string_equal(op_name(t1, i), want1[i]);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "semaphores")), 1);
    cJSON_Delete(j);
    /* the same program, the same bytes */
    tc_err e;
    char *a = mpp_to_json(p, NULL, &e), *b = mpp_to_json(p, NULL, &e);
    assert_string_equal(a, b);
    free(a);
    free(b);
    prog_free(p);
}

static void test_reduce_lands_in_scratch(void **state)
{
    (void)state;
    prog *p = exchange(1);
    cJSON *j = plan_of(p);
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 1);
    assert_int_equal(cJSON_GetObjectItem(g, "scratch_chunks")->valueint, 1);
    const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "threadblocks"), 0);
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(t0, "ops"));
    assert_string_equal(op_name(t0, n - 1), "re");
    assert_string_equal(op_name(t0, n - 2), "nop");
    assert_string_equal(op_name(t0, n - 3), "wait");
    cJSON_Delete(j);
    prog_free(p);
}

static void test_unpaired_refused(void **state)
{
    (void)state;
    prog *p = prog_new("u", COLL_ALLGATHER, 2, 2);
    prog_tb *t = prog_add_tb(prog_add_gpu(p, 1, 2, 0), 1, -1, 0);
    prog_add_step(t, ST_S, BUF_I, 0, BUF_NONE, 0, 1, -1, -1);
    prog_add_gpu(p, 1, 2, 0);
    tc_err e;
    assert_null(mpp_to_json(p, NULL, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "no threadblock receives"));
    prog_free(p);
}

/* NCCL's NVLS choice (prog.nvls_channels) is written as switch operations,
 * as MSCCL++'s allreduce/allgather_nvls_zero_copy programs are: per block
 * a relaxed barrier, one glres (AllReduce: load-reduce through a switch
 * channel on i, multicast store through one on o) or gstore (AllGather:
 * the input chunk by multicast into every output), a barrier. */
static const cJSON *op_of(const cJSON *j, int r, int b, int i)
{
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), r);
    const cJSON *tb = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "threadblocks"), b);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(tb, "ops"), i);
}

static int ref_at(const cJSON *op, const char *list, const char *key)
{
    const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(op, list), 0);
    const cJSON *v = cJSON_GetObjectItem(r, key);
    return v ? (int)v->valuedouble : -1;
}

static void test_nvls(void **state)
{
    (void)state;
    enum { N = 4, K = 8 };
    for (int ag = 0; ag <= 1; ag++) {
        prog *p = prog_new("nvls", ag ? COLL_ALLGATHER : COLL_ALLREDUCE, N, N);
        for (int r = 0; r < N; r++)
            prog_add_gpu(p, ag ? 1 : N, N, 0);
        p->nvls_channels = K;
        cJSON *j = plan_of(p);
        const cJSON *g1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 1);
        assert_int_equal((int)cJSON_GetObjectItem(g1, "input_chunks")->valuedouble, ag ? K : N * K);
        assert_int_equal((int)cJSON_GetObjectItem(g1, "output_chunks")->valuedouble, N * K);
        const cJSON *chans = cJSON_GetObjectItem(g1, "channels");
        /* memory channels to the 3 peers, K each; then the switch channels */
        assert_int_equal(cJSON_GetArraySize(chans), 1 + (ag ? 1 : 2) * K);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(chans, 0),
                                                                "connected_to")), (N - 1) * K);
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(chans, 1), "buffer_type")
                                ->valuestring, ag ? "o" : "i");
        for (int b = 0; b < K; b++) {
            const cJSON *op = op_of(j, 1, b, 5);
            assert_string_equal(cJSON_GetObjectItem(op, "name")->valuestring,
                                ag ? "gstore" : "glres");
            assert_int_equal(ref_at(op, "dst_buff", "index"), 1 * K + b);
            assert_int_equal(ref_at(op, "dst_buff", "switch_channel_id"), ag ? 0 : 1);
            assert_int_equal(ref_at(op, "src_buff", "index"), ag ? b : 1 * K + b);
            assert_string_equal(cJSON_GetObjectItem(op_of(j, 1, b, 1), "name")->valuestring,
                                "rlxsignal");
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(op_of(j, 1, b, 10),
                                                                    "channel_ids")), 0);
        }
        cJSON_Delete(j);
        prog_free(p);
    }
    prog *p = prog_new("nvls", COLL_REDUCESCATTER, N, N);
    for (int r = 0; r < N; r++)
        prog_add_gpu(p, N, 1, 0);
    p->nvls_channels = K;
    tc_err e;
    assert_null(mpp_to_json(p, NULL, &e));
    assert_non_null(strstr(e.msg, "none reduces into one rank"));
    prog_free(p);
}

/* The all-pairs ReduceScatter (sched/mpp_allpairs.c): the pieces' shape,
 * the buffers, the op counts the builder checks, and the channel pairing:
 * the channel a sender of rank a puts to b on must be the k-th of a's
 * channels to b where the reducer of b that waits for it holds b's k-th to
 * a (MSCCL++ matches a pair's channels by order). */
static int kth_to(const cJSON *g, int ch, int peer)
{
    const cJSON *to = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "channels"),
                                                             0), "connected_to");
    int k = 0;
    for (int i = 0; i < ch; i++)
        k += (int)cJSON_GetArrayItem(to, i)->valuedouble == peer;
    assert_int_equal((int)cJSON_GetArrayItem(to, ch)->valuedouble, peer);
    return k;
}

static int tb_chan(const cJSON *g, int tb, int local)
{
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "threadblocks"), tb);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "channels"), 0);
    return (int)cJSON_GetArrayItem(cJSON_GetObjectItem(c, "channel_ids"), local)->valuedouble;
}

static void test_allpairs(void **state)
{
    (void)state;
    enum { N = 3, B = 1, R = 2 };
    int at[MPP_ALLPAIRS_AT];
    int P = mpp_allpairs_pieces(B, at);
    assert_int_equal(P, B + MPP_ALLPAIRS_TAIL_PIECES);
    assert_int_equal(at[1], MPP_ALLPAIRS_TAIL);
    assert_int_equal(at[P] - at[P - 1], 1);
    assert_int_equal(at[P - 1] - at[P - 2], 1);
    assert_int_equal(at[P], 2 * MPP_ALLPAIRS_TAIL);
    prog *p = prog_new("ap", COLL_REDUCESCATTER, N, N);
    for (int r = 0; r < N; r++)
        prog_add_gpu(p, N, 1, 0);
    p->allpairs_pieces = B;
    p->allpairs_reducers = R;
    cJSON *j = plan_of(p);
    int rops, sops = mpp_allpairs_ops(N, B, R, &rops);
    for (int r = 0; r < N; r++) {
        const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), r);
        assert_int_equal((int)cJSON_GetObjectItem(g, "input_chunks")->valuedouble, N * at[P]);
        assert_int_equal((int)cJSON_GetObjectItem(g, "output_chunks")->valuedouble, at[P]);
        assert_int_equal((int)cJSON_GetObjectItem(g, "scratch_chunks")->valuedouble,
                         (N - 1) * at[P]);
        const cJSON *tbs = cJSON_GetObjectItem(g, "threadblocks");
        assert_int_equal(cJSON_GetArraySize(tbs), N - 1 + R);
        for (int t = 0; t < N - 1 + R; t++)
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(tbs, t),
                                                                    "ops")),
                             t < N - 1 ? sops : 1 + ((P - (t - N + 1) + R - 1) / R) * 3);
        /* sender k-1 of rank r puts to q = r + k on its channel c, which
         * meets q's reducer c's channel to r */
        for (int k = 1; k < N; k++) {
            int q = (r + k) % N;
            const cJSON *gq = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), q);
            int back = (r - q - 1 + 2 * N) % N;   /* r's place among q's reducer's channels */
            for (int c = 0; c < R; c++)
                assert_int_equal(kth_to(g, tb_chan(g, k - 1, c), q),
                                 kth_to(gq, tb_chan(gq, N - 1 + c, back), r));
        }
    }
    (void)rops;
    cJSON_Delete(j);
    p->coll = COLL_ALLGATHER;
    tc_err e;
    assert_null(mpp_to_json(p, NULL, &e));
    assert_non_null(strstr(e.msg, "a ReduceScatter"));
    prog_free(p);
}

/* --plan for MSCCL++: files NAME.json, each one buffer mode and range. */
static void test_plan_dir(void **state)
{
    (void)state;
    topo *t = fx_topo_bare("ndv2-x1");    /* without the runtime's latency, where */
    plan_opts o;
    plan_opts_init(&o);
    o.coll = COLL_ALLGATHER;
    o.lo = 512 << 10;        /* ring beats NCCL's own schedule on ndv2-x1 */
    o.hi = 1 << 20;
    o.by_default = 1;       /* the choice by the default model: this tests the files */
    o.propose = 0;
    o.quiet = 1;
    o.mscclpp = 1;
    o.proto = "Simple";
    plan *pl = NULL;
    tc_err e;
    if (plan_make(t, &o, &pl, &e) != TC_OK)
        fail_msg("plan_make: %s", e.msg);
    char dir[] = "/tmp/test_mpp_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[600];
    snprintf(out, sizeof out, "%s/plan", dir);
    if (plan_write(pl, out, &e) != TC_OK)
        fail_msg("plan_write: %s", e.msg);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "%s/plan/plan.json", dir);
    FILE *f = fopen(cmd, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "target")->valuestring, "mscclpp");
    assert_non_null(cJSON_GetObjectItem(j, "mscclpp_selector"));
    const cJSON *files = cJSON_GetObjectItem(j, "files");
    int nfiles = 0;
    for (const cJSON *x = files->child; x; x = x->next, nfiles++) {
        const char *name = cJSON_GetObjectItem(x, "file")->valuestring;
        assert_non_null(strstr(name, ".json"));
        const cJSON *m = cJSON_GetObjectItem(x, "mscclpp");
        assert_non_null(m);
        assert_int_equal(cJSON_GetObjectItem(m, "world_size")->valueint, 8);
        snprintf(cmd, sizeof cmd, "%s/plan/%s", dir, name);
        f = fopen(cmd, "r");
        assert_non_null(f);
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        cJSON *pj = cJSON_Parse(text);
        assert_non_null(pj);
        assert_int_equal(cJSON_GetObjectItem(pj, "min_message_size")->valuedouble,
                         cJSON_GetObjectItem(m, "min_message_size")->valuedouble);
        assert_true(cJSON_GetObjectItem(pj, "max_message_size")->valuedouble <=
                    cJSON_GetObjectItem(m, "max_message_size")->valuedouble);
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(pj, "inplace")),
                         !strcmp(cJSON_GetObjectItem(m, "buffer_mode")->valuestring,
                                 "inplace"));
        assert_string_equal(cJSON_GetObjectItem(pj, "name")->valuestring,
                            cJSON_GetObjectItem(m, "name")->valuestring);
        cJSON_Delete(pj);
        snprintf(cmd, sizeof cmd, "python3 %s/scripts/mpp_check.py --run --quiet '%s/plan/%s'",
                 fx_root(), dir, name);
        assert_int_equal(system(cmd), 0);
    }
    assert_true(nfiles > 0);
    cJSON_Delete(j);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    plan_free(pl);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wanted),
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_reduce_lands_in_scratch),
        cmocka_unit_test(test_unpaired_refused),
        cmocka_unit_test(test_nvls),
        cmocka_unit_test(test_allpairs),
        cmocka_unit_test(test_plan_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
