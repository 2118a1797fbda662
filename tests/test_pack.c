/* test_pack.c — spanning-tree packing (synth/pack.h): every chunk's tree
 * spans every rank, each rank receiving it once from a rank that holds it;
 * the largest resource load is never below the exact cut bound and meets
 * it where k allows (a switch; ForestColl's MI250 at its optimal k = 3);
 * ForestColl's k = 1 optimum on its MI250 x2 (3355.44 us at 1 GiB) is met;
 * the same inputs give the same trees; lanes are dense per pair; at equal
 * load the trees are made shallow (ForestColl's A100 x2, k = 1); on the
 * bundled MI250 x2 and DGX-2 x2 the packing comes within 3 % of the bound
 * where k allows (the NIC shared by two GCDs, the descent of the largest
 * load). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/pack.h"
#include "fixtures.h"

/* ForestColl's fabrics in our format (scripts/gen_forestcoll_topos.py) */
#define FC(name) "../tests/data/forestcoll/" name

static sketch *sk(int nodes, int k, const topo *t)
{
    char text[256];
    snprintf(text, sizeof text, "{\"name\": \"pk\", \"nnodes\": %d, \"hyperparameters\": "
             "{\"input_chunkup\": %d}}", nodes, k);
    tc_err e;
    sketch *s = sketch_parse(text, "inline", &e);
    if (!s)
        fail_msg("sketch: %s", e.msg);
    if (sketch_check(s, t, &e) != TC_OK)
        fail_msg("sketch check: %s", e.msg);
    return s;
}

/* Every chunk reaches every other rank exactly once, never its origin,
 * and leaves only ranks that received it by an earlier send. */
static void assert_spans(const algo *a)
{
    int n = a->nranks, k = a->chunks_per_rank;
    int *got = calloc((size_t)n * k * n, sizeof *got);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *s = &a->sends[i];
        int c = s->origin * k + s->index;
        assert_true(s->src == s->origin || got[(size_t)c * n + s->src] == 1);
        assert_true(s->dst != s->origin);
        got[(size_t)c * n + s->dst]++;
        assert_true(s->t_arrive >= s->t_send);
    }
    for (int c = 0; c < n * k; c++)
        for (int v = 0; v < n; v++)
            assert_int_equal(got[(size_t)c * n + v], v == c / k ? 0 : 1);
    free(got);
}

static algo *packed(const sketch *s, const topo *t, double bytes, pack_stats *st)
{
    pack_opts o;
    pack_opts_init(&o);
    o.quiet = 1;
    algo *a = NULL;
    tc_err e;
    if (pack_trees(s, t, bytes, &o, &a, st, &e) != TC_OK)
        fail_msg("pack_trees: %s", e.msg);
    assert_spans(a);
    assert_true(st->load_us >= st->bound_us * (1 - 1e-9));
    assert_true(fabs(a->predicted_us - st->load_us) < 1e-9);
    return a;
}

/* Chunkup k on ForestColl's fabric path over `nodes` nodes, chunks of
 * `bytes`: its topology and sketch into *t, *s (the caller frees them). */
static algo *fc_packed(const char *path, int nodes, int k, double bytes, topo **t, sketch **s,
                       pack_stats *st)
{
    *t = fx_topo(path);
    *s = sk(nodes, k, *t);
    return packed(*s, *t, bytes, st);
}

static const char *SWITCH4 =
    "{\"name\": \"switch4\", \"nodes\": 1, \"ranks_per_node\": 4,"
    " \"local\": {\"copy_gbps\": 400, \"reduce_gbps\": 300, \"source\": \"assumed\"},"
    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 0, \"bandwidth_gbps\": 100,"
    "   \"source\": \"assumed\"}]}";

/* Through a switch every port takes 3 k chunks in: the bound, met. */
static void test_switch_meets_bound(void **state)
{
    (void)state;
    tc_err e;
    topo *t = topo_parse(SWITCH4, "switch4.json", &e);
    assert_non_null(t);
    for (int k = 1; k <= 3; k++) {
        sketch *s = sk(1, k, t);
        pack_stats st;
        algo *a = packed(s, t, 1e6, &st);
        assert_int_equal(st.k, k);
        assert_int_equal(a->nsends, 4 * k * 3);
        assert_true(st.bound_us > 0);
        assert_true(fabs(st.load_us - st.bound_us) <= 1e-9 * st.bound_us);
        assert_true(fabs(st.load_us - 3.0 * k * 1e6 / 100e3) < 1e-6);
        algo_free(a);
        sketch_free(s);
    }
    topo_free(t);
}

/* ForestColl's MI250 x2 at 1 GiB: its k = 1 trees' load is 3355.44 us
 * (its optimal_pipeline_spanning_trees with fixed_K=1); the cut bound is
 * 3032.02 us (k = 83 reaches it). */
static void test_mi250_x2_k1(void **state)
{
    (void)state;
    topo *t;
    sketch *s;
    pack_stats st;
    algo *a = fc_packed(FC("forestcoll-mi250-x2"), 2, 1, 1073741824.0 / 32, &t, &s, &st);
    assert_true(fabs(st.bound_us - 3032.02) < 0.01);
    assert_true(fabs(st.load_us - 3355.44) < 0.01);
    assert_true(st.load_us <= st.first_us);
    /* deterministic */
    pack_stats st2;
    algo *b = packed(s, t, 1073741824.0 / 32, &st2);
    assert_int_equal(a->nsends, b->nsends);
    assert_memory_equal(a->sends, b->sends, (size_t)a->nsends * sizeof *a->sends);
    /* lanes: per (src, dst), 1 .. m in send order */
    pack_lanes(b);
    int n = b->nranks;
    int *m = calloc((size_t)n * n, sizeof *m);
    for (int i = 0; i < b->nsends; i++)
        assert_int_equal(b->sends[i].lane, ++m[b->sends[i].src * n + b->sends[i].dst]);
    free(m);
    algo_free(a);
    algo_free(b);
    sketch_free(s);
    topo_free(t);
}

/* ForestColl's MI250 x1: its optimum needs k = 3 (3131.75 us per GiB);
 * the packing meets it there, and at k = 1 is within ForestColl's k = 1
 * figure (4026.53 us). */
static void test_mi250_x1(void **state)
{
    (void)state;
    topo *t = fx_topo(FC("forestcoll-mi250-x1"));
    double want[] = {4026.53, 0, 3131.75};
    for (int k = 1; k <= 3; k += 2) {
        sketch *s = sk(1, k, t);
        pack_stats st;
        algo *a = packed(s, t, 1073741824.0 / (16 * k), &st);
        assert_true(st.load_us <= want[k - 1] + 0.01);
        algo_free(a);
        sketch_free(s);
    }
    topo_free(t);
}

/* Sum over every chunk's tree of its ranks' hop depths. */
static long depth_sum(const algo *a)
{
    int n = a->nranks, k = a->chunks_per_rank;
    int *dep = calloc((size_t)n * k * n, sizeof *dep);
    long sum = 0;
    /* sends are by depth in their tree (pack.h), so a sender's depth is set */
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        int *d = &dep[(size_t)(x->origin * k + x->index) * n];
        d[x->dst] = d[x->src] + 1;
        sum += d[x->dst];
    }
    free(dep);
    return sum;
}

/* ForestColl's A100 x2 at 1 GiB, k = 1: its trees' load (3131.75 us, the
 * k = 1 optimum) with a sum of depths of 728 over its 16 trees
 * (tests/data/forestcoll/forestcoll-a100-x2-allgather-k1.xml); ours have
 * that load and are no deeper (the shallowing pass at equal load: 940
 * before it, 7 us slower than ForestColl's in the tile passes). */
static void test_a100_x2_shallow(void **state)
{
    (void)state;
    topo *t;
    sketch *s;
    pack_stats st;
    algo *a = fc_packed(FC("forestcoll-a100-x2"), 2, 1, 1073741824.0 / 16, &t, &s, &st);
    assert_true(fabs(st.load_us - 3131.75) < 0.01);
    long d = depth_sum(a);
    assert_true(d >= 16 * 15);  /* every rank at least one hop down */
    assert_true(d <= 728);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

/* The bundled MI250 x2 at 1 GiB: each rank must take in 15 chunks, each
 * NIC serves two GCDs, and every link at 5 chunks is what k = 1 and 2
 * give (6714.4, 6717.9 us).  At k = 4 the links can be at 4.75 chunks with
 * the NICs at 2.25 (6388.6 us, bound 6194.7): the NIC must bring a
 * package's chunks to the GCD whose links are fuller.  Before the packing
 * broke its ties by that (every tie to the lower rank), it stayed at 5. */
static void test_mi250_x2_bundled(void **state)
{
    (void)state;
    topo *t = fx_topo("mi250-x2");
    sketch *s = sk(2, 4, t);
    pack_stats st;
    algo *a = packed(s, t, 1073741824.0 / (16 * 4), &st);
    assert_true(fabs(st.bound_us - 6194.66) < 0.01);
    assert_true(st.load_us < 6400);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

/* The bundled DGX-2 x2 at 1 GiB, k = 2: the price passes end at 8074.06
 * us; the descent's moves (one rank moved, or two where the first would
 * fill a resource) take it to 8068.66 (bound 7925.24). */
static void test_dgx2_x2_descent(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx2-x2");
    sketch *s = sk(2, 2, t);
    pack_stats st;
    algo *a = packed(s, t, 1073741824.0 / (32 * 2), &st);
    assert_true(st.load_us < 8070);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch_meets_bound),
        cmocka_unit_test(test_mi250_x2_k1),
        cmocka_unit_test(test_mi250_x1),
        cmocka_unit_test(test_a100_x2_shallow),
        cmocka_unit_test(test_mi250_x2_bundled),
        cmocka_unit_test(test_dgx2_x2_descent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
