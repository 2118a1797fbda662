/* test_reverse.c — ReduceScatter as the AllGather reversed, AllReduce as the
 * two joined (synth/reverse.h): reversed times, flipped link orders, reduce
 * flags and chunk identity (index = origin * k + j, owner = index / k), the
 * "same node first" order of simultaneous partials, both joins, input
 * errors, and end to end: reversed, re-solved by stage 3, lowered and run,
 * the reductions verify in i32 and the AllReduce's f32 replicas are
 * bit-identical. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/run.h"
#include "model/topo.h"
#include "sched/lower.h"
#include "sched/algo.h"
#include "synth/contig.h"
#include "synth/reverse.h"

#define TOL 1e-9
#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= TOL * (1 + fabs((double)(b))))

/* Two nodes of two ranks (node 0 = {0, 1}, node 1 = {2, 3}): a link inside
 * each node, one NIC per node. */
static const char *TWO_BY_TWO =
    "{\"name\": \"two-by-two\", \"nodes\": 2, \"ranks_per_node\": 2,"
    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.5, \"bandwidth_gbps\": 10,"
    "   \"source\": \"assumed: test\"}],"
    " \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 2, \"bandwidth_gbps\": 5,"
    "   \"source\": \"assumed: test\"}]}";

static topo *parse(const char *json)
{
    tc_err e;
    topo *t = topo_parse(json, "test", &e);
    if (!t)
        fail_msg("topology: %s", e.msg);
    return t;
}

static algo_send *add(algo *a, int origin, int index, int src, int dst, double ts, double ta)
{
    return algo_add_send(a, origin, index, src, dst, ts, ta);
}

/* An AllGather on 3 ranks, one chunk each, every chunk relayed once along
 * the ring 0 -> 1 -> 2 -> 0: chunk c at [0,1] to c+1, then [1,2] to c+2. */
static algo *chain3(void)
{
    algo *a = algo_new(COLL_ALLGATHER, 3, 1);
    add(a, 0, 0, 0, 1, 0, 1);
    add(a, 0, 0, 1, 2, 1, 2);
    add(a, 1, 0, 1, 2, 0, 1);
    add(a, 1, 0, 2, 0, 1, 2);
    add(a, 2, 0, 2, 0, 0, 1);
    add(a, 2, 0, 0, 1, 1, 2);
    a->predicted_us = 2;
    return a;
}

/* The reversed send of chunk `index` from src to dst, or NULL. */
static const algo_send *find(const algo *a, int index, int src, int dst)
{
    for (int i = 0; i < a->nsends; i++)
        if (a->sends[i].index == index && a->sends[i].src == src && a->sends[i].dst == dst)
            return &a->sends[i];
    return NULL;
}

static void test_reversed_times_flags_owners(void **state)
{
    (void)state;
    algo *ag = chain3(), *rs;
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, NULL, &rs, &e), TC_OK);
    assert_int_equal(rs->coll, COLL_REDUCESCATTER);
    assert_int_equal(rs->nranks, 3);
    assert_int_equal(rs->chunks_per_rank, 3);
    assert_int_equal(rs->nsends, 6);
    NEAR(rs->predicted_us, 2);
    /* 0->1 [0,1] of chunk 0 becomes 1->0 [1,2]; 1->2 [1,2] becomes 2->1 [0,1] */
    const algo_send *s = find(rs, 0, 1, 0);
    assert_non_null(s);
    NEAR(s->t_send, 1);
    NEAR(s->t_arrive, 2);
    s = find(rs, 0, 2, 1);
    assert_non_null(s);
    NEAR(s->t_send, 0);
    NEAR(s->t_arrive, 1);
    for (int i = 0; i < rs->nsends; i++) {
        const algo_send *r = &rs->sends[i];
        assert_int_equal(r->reduce, 1);
        assert_int_equal(r->origin, r->index);        /* k = 1: owner = index */
        if (i > 0)                                    /* sorted by arrival */
            assert_true(rs->sends[i - 1].t_arrive <= r->t_arrive);
    }
    /* every chunk's tree ends at its owner: the last hop of chunk c goes to c */
    for (int c = 0; c < 3; c++) {
        int into_owner = 0;
        for (int i = 0; i < rs->nsends; i++)
            if (rs->sends[i].index == c && rs->sends[i].dst == c)
                into_owner++;
        assert_int_equal(into_owner, 1);
    }
    algo_free(rs);
    algo_free(ag);
}

static void test_chunk_identity_with_chunkup(void **state)
{
    (void)state;
    /* 2 ranks, k = 2: chunk (1, 1) is the reductions' chunk 1*2 + 1 = 3 */
    algo *ag = algo_new(COLL_ALLGATHER, 2, 2), *rs;
    add(ag, 0, 0, 0, 1, 0, 1);
    add(ag, 0, 1, 0, 1, 1, 2);
    add(ag, 1, 0, 1, 0, 0, 1);
    add(ag, 1, 1, 1, 0, 1, 2);
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, NULL, &rs, &e), TC_OK);
    assert_int_equal(rs->chunks_per_rank, 4);
    const algo_send *s = find(rs, 3, 0, 1);
    assert_non_null(s);
    assert_int_equal(s->origin, 1);
    assert_int_equal(s->index / 2, 1);          /* owner */
    NEAR(s->t_send, 0);                         /* [1,2] reversed in T = 2 */
    assert_null(find(rs, 3, 1, 0));
    algo_free(rs);
    algo_free(ag);
}

static void test_link_order_flips(void **state)
{
    (void)state;
    /* link 0->1 carries chunk 0 at [0,1], then chunk 2 (relayed by 0) at
     * [1,2]; reversed, link 1->0 carries chunk 2 first, then chunk 0 */
    algo *ag = chain3(), *rs;
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, NULL, &rs, &e), TC_OK);
    const algo_send *a0 = find(rs, 0, 1, 0), *a2 = find(rs, 2, 1, 0);
    assert_non_null(a0);
    assert_non_null(a2);
    assert_true(a2->t_send < a0->t_send);
    /* chunk 2 went 2->0->1, so reversed 1->0 then 0->2: the relay 0 sends
     * its partial up only after the one from 1 has arrived */
    const algo_send *up = find(rs, 2, 0, 2);
    assert_non_null(up);
    assert_true(up->t_send >= a2->t_arrive - TOL);
    algo_free(rs);
    algo_free(ag);
}

static void test_same_node_partial_first(void **state)
{
    (void)state;
    topo *t = parse(TWO_BY_TWO);
    /* chunk (3, 0) leaves 3 for 2 (link) and for 1 (NIC) at the same time;
     * 1 forwards it to 0.  Reversed, partials from 2 (local) and 1 (remote)
     * reach 3 at the same time: the local one must come first although the
     * remote sender has the lower rank. */
    algo *ag = algo_new(COLL_ALLGATHER, 4, 1), *rs;
    add(ag, 0, 0, 0, 2, 0, 1);      /* remote listed first on purpose */
    add(ag, 0, 0, 0, 1, 0, 1);
    add(ag, 0, 0, 2, 3, 1, 2);
    add(ag, 1, 0, 1, 0, 0, 1);
    add(ag, 1, 0, 1, 3, 0, 1);
    add(ag, 1, 0, 3, 2, 1, 2);
    add(ag, 2, 0, 2, 3, 0, 1);
    add(ag, 2, 0, 2, 0, 0, 1);
    add(ag, 2, 0, 0, 1, 1, 2);
    add(ag, 3, 0, 3, 2, 0, 1);
    add(ag, 3, 0, 3, 1, 0, 1);
    add(ag, 3, 0, 1, 0, 1, 2);
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, t, &rs, &e), TC_OK);
    int local = -1, remote = -1;
    for (int i = 0; i < rs->nsends; i++) {
        const algo_send *s = &rs->sends[i];
        if (s->index == 3 && s->dst == 3 && s->src == 2)
            local = i;
        if (s->index == 3 && s->dst == 3 && s->src == 1)
            remote = i;
    }
    assert_true(local >= 0 && remote >= 0);
    assert_true(local < remote);
    /* without a topology every sender counts as remote: the lower rank first */
    algo *rs2;
    assert_int_equal(reverse_reducescatter(ag, NULL, &rs2, &e), TC_OK);
    local = remote = -1;
    for (int i = 0; i < rs2->nsends; i++) {
        const algo_send *s = &rs2->sends[i];
        if (s->index == 3 && s->dst == 3 && s->src == 2)
            local = i;
        if (s->index == 3 && s->dst == 3 && s->src == 1)
            remote = i;
    }
    assert_true(remote < local);
    algo_free(rs2);
    algo_free(rs);
    algo_free(ag);
    topo_free(t);
}

/* The reducing step of rank r's tb receiving from `peer` (the one reading
 * a buffer other than scratch, i.e. the local operand of chunk 3 here). */
static const prog_step *reduce_from(const prog *p, int r, int peer)
{
    const prog_gpu *g = &p->gpus[r];
    for (int b = 0; b < g->ntbs; b++) {
        if (g->tbs[b].recv != peer)
            continue;
        for (int k = 0; k < g->tbs[b].nsteps; k++) {
            const prog_step *st = &g->tbs[b].steps[k];
            if ((st->type == ST_RRC || st->type == ST_RRCS || st->type == ST_RRS) &&
                ((st->srcbuf == BUF_I && st->srcoff == 3) || st->srcbuf == BUF_O))
                return st;
        }
    }
    return NULL;
}

/* Reduction order in the program: the partials of chunk 3 reach its owner
 * 3 from 2 (same node) and 0 (other node, lower rank) at the same time;
 * the lowered program adds 2's first (its step reads rank 3's input, the first
 * contribution) and 0's into the accumulation (o), and runs exactly in i32. */
static void test_reduction_order_in_program(void **state)
{
    (void)state;
    topo *t = parse(TWO_BY_TWO);
    algo *ag = algo_new(COLL_ALLGATHER, 4, 1), *rs;
    for (int o = 0; o < 4; o++) {
        int peer = o ^ 1, far = ((o + 2) % 4) ^ 1, far_peer = far ^ 1;
        add(ag, o, 0, o, far, 0, 1);        /* the remote hop listed first */
        add(ag, o, 0, o, peer, 0, 1);
        add(ag, o, 0, far, far_peer, 1, 2);
    }
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, t, &rs, &e), TC_OK);
    lower_opts lo;
    lower_opts_default(&lo);
    lo.size_bytes = 4096;
    prog *p = lower_algo(rs, t, &lo, &e);
    if (!p)
        fail_msg("lower: %s", e.msg);
    const prog_step *local = reduce_from(p, 3, 2), *remote = reduce_from(p, 3, 0);
    assert_non_null(local);
    assert_non_null(remote);
    assert_int_equal(local->srcbuf, BUF_I);        /* first: recv + own input */
    assert_int_equal(remote->srcbuf, BUF_O);       /* then into the accumulation */
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = 4096;
    run_report rr;
    assert_int_equal(run_schedule(p, t, &ro, &rr, &e), TC_OK);
    assert_true(rr.verified);
    run_report_free(&rr);
    prog_free(p);
    algo_free(rs);
    algo_free(ag);
    topo_free(t);
}

static void expect_error(algo *ag, const topo *t, const char *needle)
{
    algo *rs = (algo *)0x1;
    tc_err e;
    tc_err_clear(&e);
    assert_int_equal(reverse_reducescatter(ag, t, &rs, &e), TC_INPUT);
    assert_null(rs);
    if (!strstr(e.msg, needle))
        fail_msg("expected '%s' in: %s", needle, e.msg);
    algo_free(ag);
}

static void test_errors(void **state)
{
    (void)state;
    tc_err e;
    algo *rs;
    assert_int_equal(reverse_reducescatter(NULL, NULL, &rs, &e), TC_INPUT);
    expect_error(algo_new(COLL_ALLTOALL, 2, 2), NULL, "built from an AllGather, got alltoall");

    algo *a = chain3();
    a->nsends = 5;                      /* rank 1 never gets chunk 2 */
    expect_error(a, NULL, "chunk 2:0 never reaches rank 1");

    a = chain3();
    add(a, 0, 0, 2, 1, 3, 4);           /* rank 1 gets chunk 0 twice */
    expect_error(a, NULL, "receives chunk 0:0 twice");

    a = chain3();
    a->sends[2].reduce = 1;
    expect_error(a, NULL, "reduce=1");

    a = chain3();
    a->sends[1].t_send = 0.5;           /* 1 forwards chunk 0 before it arrives at 1 */
    expect_error(a, NULL, "before it holds it");

    a = chain3();
    add(a, 0, 0, 2, 0, 3, 4);
    expect_error(a, NULL, "back to its origin");

    a = chain3();
    a->sends[0].index = 5;
    expect_error(a, NULL, "does not exist");

    a = chain3();
    a->sends[0].t_arrive = NAN;
    expect_error(a, NULL, "times");

    topo *t = topo_default(4);
    expect_error(chain3(), t, "topology");
    topo_free(t);
}

static void test_allreduce_joins(void **state)
{
    (void)state;
    algo *ag = chain3(), *rs, *bar, *pip;
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, NULL, &rs, &e), TC_OK);
    rs->sends[0].group = 4;             /* renumbering: AllGather groups come after */
    ag->sends[0].group = 0;
    assert_int_equal(reverse_allreduce(rs, ag, REVERSE_JOIN_BARRIER, &bar, &e), TC_OK);
    assert_int_equal(bar->coll, COLL_ALLREDUCE);
    assert_int_equal(bar->chunks_per_rank, 3);
    assert_int_equal(bar->nsends, 12);
    for (int i = 0; i < 6; i++)
        assert_int_equal(bar->sends[i].reduce, 1);
    for (int i = 6; i < 12; i++) {
        assert_int_equal(bar->sends[i].reduce, 0);
        NEAR(bar->sends[i].t_send, ag->sends[i - 6].t_send + 2);   /* after rs (T = 2) */
    }
    assert_int_equal(bar->sends[6].group, 5);
    NEAR(bar->predicted_us, 4);

    /* pipeline: chunk c's tree starts when its owner got its last partial */
    assert_int_equal(reverse_allreduce(rs, ag, REVERSE_JOIN_PIPELINE, &pip, &e), TC_OK);
    for (int i = 6; i < 12; i++) {
        const algo_send *s = &pip->sends[i];
        double done = 0;
        for (int j = 0; j < 6; j++)
            if (rs->sends[j].index == s->index && rs->sends[j].dst == s->index &&
                rs->sends[j].t_arrive > done)
                done = rs->sends[j].t_arrive;
        assert_true(s->t_send >= done - TOL);
    }
    NEAR(pip->predicted_us, 4);          /* every chunk completes at 2 here */
    algo_free(pip);
    algo_free(bar);

    /* mismatches */
    algo *bad;
    assert_int_equal(reverse_allreduce(ag, rs, REVERSE_JOIN_BARRIER, &bad, &e), TC_INPUT);
    assert_null(bad);
    rs->sends[2].reduce = 0;
    assert_int_equal(reverse_allreduce(rs, ag, REVERSE_JOIN_BARRIER, &bad, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "not a timed reduce"));
    rs->sends[2].reduce = 1;
    rs->chunks_per_rank = 4;
    assert_int_equal(reverse_allreduce(rs, ag, REVERSE_JOIN_PIPELINE, &bad, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "does not fit"));
    algo_free(rs);
    algo_free(ag);
}

/* Re-solve with stage 3, lower, run: verified; f32 AllReduce replicas
 * identical (each shard reduced once). */
static void run_one(const algo *a, const topo *t, sim_dtype dt, unsigned seed, int *identical)
{
    tc_err e;
    contig_opts co;
    contig_opts_default(&co);
    co.quiet = 1;
    co.time_limit_s = 5;
    algo *solved;
    assert_int_equal(contig_solve(a, t, 1024, &co, &solved, NULL, &e), TC_OK);
    lower_opts lo;
    lower_opts_default(&lo);
    lo.size_bytes = 1024LL * a->chunks_per_rank;
    prog *p = lower_algo(solved, t, &lo, &e);
    if (!p)
        fail_msg("lower: %s", e.msg);
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = lo.size_bytes;
    ro.dtype = dt;
    ro.seed = seed;
    run_report rr;
    assert_int_equal(run_schedule(p, t, &ro, &rr, &e), TC_OK);
    if (!rr.verified)
        fail_msg("not verified");
    if (identical)
        *identical = rr.res[0].replicas_identical;
    run_report_free(&rr);
    prog_free(p);
    algo_free(solved);
}

static void test_end_to_end(void **state)
{
    (void)state;
    topo *t = parse(TWO_BY_TWO);
    /* an AllGather on the 2x2 machine: each chunk crosses the NIC once and
     * is relayed on the other node's link */
    algo *ag = algo_new(COLL_ALLGATHER, 4, 1), *rs, *ar;
    for (int o = 0; o < 4; o++) {
        int peer = o ^ 1, far = (o + 2) % 4, far_peer = far ^ 1;
        add(ag, o, 0, o, peer, 0, 1);
        add(ag, o, 0, o, far, 1, 3);
        add(ag, o, 0, far, far_peer, 3, 4);
    }
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, t, &rs, &e), TC_OK);
    run_one(rs, t, DT_I32, 1, NULL);
    for (int j = 0; j < 2; j++) {
        assert_int_equal(reverse_allreduce(rs, ag, (reverse_join)j, &ar, &e), TC_OK);
        run_one(ar, t, DT_I32, 1, NULL);
        for (unsigned seed = 1; seed <= 3; seed++) {
            int same = -1;
            run_one(ar, t, DT_F32, seed, &same);
            assert_int_equal(same, 1);
        }
        algo_free(ar);
    }
    algo_free(rs);
    algo_free(ag);
    topo_free(t);
}

static void test_deterministic(void **state)
{
    (void)state;
    algo *ag = chain3(), *x, *y;
    tc_err e;
    assert_int_equal(reverse_reducescatter(ag, NULL, &x, &e), TC_OK);
    assert_int_equal(reverse_reducescatter(ag, NULL, &y, &e), TC_OK);
    assert_int_equal(x->nsends, y->nsends);
    assert_memory_equal(x->sends, y->sends, (size_t)x->nsends * sizeof *x->sends);
    assert_string_equal(reverse_join_name(REVERSE_JOIN_BARRIER), "barrier");
    assert_string_equal(reverse_join_name(REVERSE_JOIN_PIPELINE), "pipeline");
    algo_free(x);
    algo_free(y);
    algo_free(ag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reversed_times_flags_owners),
        cmocka_unit_test(test_chunk_identity_with_chunkup),
        cmocka_unit_test(test_link_order_flips),
        cmocka_unit_test(test_same_node_partial_first),
        cmocka_unit_test(test_reduction_order_in_program),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_allreduce_joins),
        cmocka_unit_test(test_end_to_end),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
