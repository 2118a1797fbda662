/* test_hier.c — hierarchical routing (synth/hier): the composed routing
 * delivers every chunk to every rank that needs it exactly once
 * (route_check), crosses nodes only on rails (each local rank's chunks
 * leave through its sender and enter through its receiver, the sketch's
 * relay rules included), an AllGather rail is a ring (each rank sends to at
 * most two remote peers, whatever the node count), an AllToAll rail is one
 * direct hop, node blocks cross whole (one transfer per block per node
 * pair, the offsets spread over the rails in matched rounds), the output is
 * deterministic and stage 2 schedules it, and a
 * single node or a collective the composition does not build is refused
 * with a message that says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/contig.h"
#include "synth/hier.h"
#include "synth/order.h"
#include "fixtures.h"

static sketch *checked(sketch *s, const topo *t)
{
    tc_err e;
    if (sketch_check(s, t, &e) != TC_OK)
        fail_msg("sketch check: %s", e.msg);
    return s;
}

static sketch *plain_sketch(const topo *t, int chunkup)
{
    char text[200];
    snprintf(text, sizeof text,
             "{\"name\": \"plain\", \"nnodes\": %d, \"hyperparameters\": {\"input_chunkup\": %d}}",
             t->nnodes, chunkup);
    tc_err e;
    sketch *s = sketch_parse(text, "inline", &e);
    if (!s)
        fail_msg("sketch: %s", e.msg);
    return checked(s, t);
}

static algo *route(const sketch *s, const topo *t, coll_kind k, hier_stats *hs)
{
    route_opts o;
    route_opts_init(&o);
    o.quiet = 1;
    o.time_limit_s = 2;     /* a limit still gives a valid routing */
    algo *a = NULL;
    tc_err e;
    int rc = hier_route(s, t, k, 1 << 20, &o, &a, hs, &e);
    if (rc != TC_OK)
        fail_msg("hier_route on %s: %s", t->name, e.msg);
    if (route_check(a, NULL, t, k, &e) != TC_OK)
        fail_msg("composed routing on %s is not a routing: %s", t->name, e.msg);
    return a;
}

/* The number of distinct remote ranks each rank sends to, the largest. */
static int most_remote_peers(const algo *a, const topo *t)
{
    int n = t->nranks, most = 0;
    unsigned char *seen = calloc((size_t)n * n, 1);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *s = &a->sends[i];
        if (topo_node_of(t, s->src) != topo_node_of(t, s->dst))
            seen[(size_t)s->src * n + s->dst] = 1;
    }
    for (int r = 0; r < n; r++) {
        int c = 0;
        for (int d = 0; d < n; d++)
            c += seen[(size_t)r * n + d];
        if (c > most)
            most = c;
    }
    free(seen);
    return most;
}

/* Every inter-node hop goes from sender[g] to receiver[g] for some g. */
static void assert_on_rails(const algo *a, const topo *t, const hier_stats *hs)
{
    int rpn = t->ranks_per_node;
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *s = &a->sends[i];
        if (topo_node_of(t, s->src) == topo_node_of(t, s->dst))
            continue;
        int x = s->src % rpn, r = s->dst % rpn, ok = 0;
        for (int g = 0; g < rpn; g++)
            ok |= hs->sender[g] == x && hs->receiver[g] == r;
        if (!ok)
            fail_msg("send %d: %d -> %d is on no rail", i, s->src, s->dst);
    }
}

static void test_allgather_rings_on_rails(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx-a100-x4");
    sketch *s = plain_sketch(t, 2);
    hier_stats hs;
    algo *a = route(s, t, COLL_ALLGATHER, &hs);
    assert_int_equal(hs.rails_ring, 1);
    for (int g = 0; g < t->ranks_per_node; g++) {
        assert_int_equal(hs.sender[g], g);      /* one NIC per GPU: its own rail */
        assert_int_equal(hs.receiver[g], g);
    }
    assert_on_rails(a, t, &hs);
    assert_int_equal(most_remote_peers(a, t), 2);   /* both ways round the ring */
    /* each chunk crosses into each other node exactly once: 3 hops per chunk */
    int inter = 0;
    for (int i = 0; i < a->nsends; i++)
        inter += topo_node_of(t, a->sends[i].src) != topo_node_of(t, a->sends[i].dst);
    assert_int_equal(inter, t->nranks * 2 * (t->nnodes - 1));
    assert_int_equal(a->chunks_per_rank, 2);
    /* a switched node spreads a remote chunk by a binomial tree: its
     * receiver sends it on at most ceil(log2 8) = 3 times in that node */
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        if (topo_node_of(t, x->src) == topo_node_of(t, x->dst))
            continue;
        int fwd = 0;
        for (int q = 0; q < a->nsends; q++)
            fwd += a->sends[q].src == x->dst && a->sends[q].origin == x->origin &&
                   a->sends[q].index == x->index &&
                   topo_node_of(t, a->sends[q].dst) == topo_node_of(t, x->dst);
        assert_true(fwd >= 1 && fwd <= 3);
        break;      /* one chunk is enough; every hop is built the same way */
    }
    hier_stats_free(&hs);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

static void test_alltoall_direct_rails(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx-h100-x4");
    sketch *s = plain_sketch(t, 1);
    hier_stats hs;
    algo *a = route(s, t, COLL_ALLTOALL, &hs);
    assert_int_equal(hs.rails_ring, 0);
    assert_on_rails(a, t, &hs);
    assert_int_equal(most_remote_peers(a, t), t->nnodes - 1);
    /* a chunk to another node crosses once */
    int inter = 0, rpn = t->ranks_per_node;
    for (int i = 0; i < a->nsends; i++)
        inter += topo_node_of(t, a->sends[i].src) != topo_node_of(t, a->sends[i].dst);
    assert_int_equal(inter, t->nranks * rpn * (t->nnodes - 1));
    hier_stats_free(&hs);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

/* TACCL's NDv2 sketch: only GPU 0 sends to another node and only GPU 1
 * receives, so every rail is 0 -> 1 and chunks reach GPU 0 first. */
static void test_sketch_relay_respected(void **state)
{
    (void)state;
    topo *t = fx_topo("ndv2-x2");
    sketch *s = fx_sketch("ndv2-x2-sk-1", t);
    for (int k = 0; k < 2; k++) {
        coll_kind c = k ? COLL_ALLTOALL : COLL_ALLGATHER;
        hier_stats hs;
        algo *a = route(s, t, c, &hs);
        for (int g = 0; g < t->ranks_per_node; g++) {
            assert_int_equal(hs.sender[g], 0);
            assert_int_equal(hs.receiver[g], 1);
        }
        assert_on_rails(a, t, &hs);
        tc_err e;
        if (route_check(a, s, t, c, &e) != TC_OK)
            fail_msg("relay rules of ndv2-x2-sk-1 broken: %s", e.msg);
        hier_stats_free(&hs);
        algo_free(a);
    }
    sketch_free(s);
    topo_free(t);
}

/* The composed routing schedules (stage 2 accepts it) and is the same
 * twice. */
static void test_orders_and_is_deterministic(void **state)
{
    (void)state;
    topo *t = fx_topo("ndv2-x4");
    sketch *s = plain_sketch(t, 1);
    hier_stats h1, h2;
    algo *a = route(s, t, COLL_ALLGATHER, &h1), *b = route(s, t, COLL_ALLGATHER, &h2);
    assert_int_equal(a->nsends, b->nsends);
    for (int i = 0; i < a->nsends; i++) {
        assert_int_equal(a->sends[i].src, b->sends[i].src);
        assert_int_equal(a->sends[i].dst, b->sends[i].dst);
        assert_int_equal(a->sends[i].origin, b->sends[i].origin);
    }
    order_opts oo;
    order_opts_init(&oo);
    algo *ord = NULL;
    tc_err e;
    if (order_schedule(a, t, 1 << 20, &oo, &ord, NULL, &e) != TC_OK)
        fail_msg("stage 2 refused the composed routing: %s", e.msg);
    assert_true(ord->predicted_us > 0);
    algo_free(ord);
    hier_stats_free(&h1);
    hier_stats_free(&h2);
    algo_free(a);
    algo_free(b);
    sketch_free(s);
    topo_free(t);
}

/* Node blocks: each inter-node transfer is one group holding every chunk
 * of the sender's node, each ordered node pair has exactly one, it runs
 * on a rail, and no NIC sends more than ceil((N - 1) / rails) of them. */
static void test_allgather_blocks(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx-h100-x4");
    sketch *s = plain_sketch(t, 2);
    route_opts o;
    route_opts_init(&o);
    o.quiet = 1;
    o.time_limit_s = 2;
    algo *a = NULL;
    hier_stats hs;
    tc_err e;
    if (hier_route_blocks(s, t, 1 << 20, &o, &a, &hs, &e) != TC_OK)
        fail_msg("hier_route_blocks: %s", e.msg);
    if (route_check(a, NULL, t, COLL_ALLGATHER, &e) != TC_OK)
        fail_msg("node blocks are not a routing: %s", e.msg);
    assert_int_equal(hs.blocks, 1);
    assert_int_equal(hs.rails_ring, 0);
    assert_on_rails(a, t, &hs);
    int rpn = t->ranks_per_node, N = t->nnodes, k = a->chunks_per_rank;
    int ng = 0;
    for (int i = 0; i < a->nsends; i++)
        ng = a->sends[i].group >= ng ? a->sends[i].group + 1 : ng;
    int *members = calloc((size_t)ng, sizeof *members), *pairs = calloc((size_t)N * N, sizeof *pairs);
    int *per_sender = calloc((size_t)t->nranks, sizeof *per_sender);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *x = &a->sends[i];
        int sn = topo_node_of(t, x->src), dn = topo_node_of(t, x->dst);
        if (sn == dn)
            continue;
        assert_true(x->group >= 0);
        assert_int_equal(topo_node_of(t, x->origin), sn);   /* the sender's node's block */
        if (members[x->group]++ == 0) {
            pairs[sn * N + dn]++;
            per_sender[x->src]++;
        }
    }
    for (int i = 0; i < a->nsends; i++)
        if (a->sends[i].group >= 0 && topo_node_of(t, a->sends[i].src) !=
                                          topo_node_of(t, a->sends[i].dst))
            assert_int_equal(members[a->sends[i].group], rpn * k);
    for (int n = 0; n < N; n++)
        for (int m = 0; m < N; m++)
            assert_int_equal(pairs[n * N + m], n != m);
    int rails = 0;
    for (int g = 0; g < rpn; g++)
        rails += hs.sender[g] == g;
    for (int r = 0; r < t->nranks; r++)
        assert_true(per_sender[r] <= (N - 1 + rails - 1) / rails);
    /* the executor's replay times it: a schedule, not just a routing */
    algo *timed = NULL;
    if (contig_replay(a, t, 1 << 20, &timed, &e) != TC_OK)
        fail_msg("replay of the node blocks: %s", e.msg);
    assert_true(timed->predicted_us > 0);
    algo_free(timed);
    free(members);
    free(pairs);
    free(per_sender);
    hier_stats_free(&hs);
    algo_free(a);
    sketch_free(s);
    topo_free(t);
}

static void test_refusals(void **state)
{
    (void)state;
    topo *t = fx_topo("dgx-a100-x1");
    sketch *s = plain_sketch(t, 1);
    tc_err e;
    algo *a = NULL;
    route_opts o;
    route_opts_init(&o);
    o.quiet = 1;
    assert_int_equal(hier_applies(s, t, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "at least 2 nodes"));
    assert_int_equal(hier_route(s, t, COLL_ALLGATHER, 1024, &o, &a, NULL, &e), TC_INPUT);
    assert_null(a);
    sketch_free(s);
    topo_free(t);
    t = fx_topo("dgx-a100-x2");
    s = plain_sketch(t, 1);
    assert_int_equal(hier_route(s, t, COLL_REDUCESCATTER, 1024, &o, &a, NULL, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "allgather and alltoall"));
    sketch_free(s);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allgather_rings_on_rails),
        cmocka_unit_test(test_alltoall_direct_rails),
        cmocka_unit_test(test_allgather_blocks),
        cmocka_unit_test(test_sketch_relay_respected),
        cmocka_unit_test(test_orders_and_is_deterministic),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
