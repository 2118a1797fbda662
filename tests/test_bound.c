/* test_bound.c — lower bounds: hand-computed cases for every collective on
 * 2- and 4-rank topologies, NIC and switch capacities, the AllToAll flow LP,
 * the docs/references.md reference figures, unreachable ranks, determinism and speed
 * at 1024 ranks.  Runs from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bound/bound.h"

/* relative comparison in double precision */
#define assert_rel(a, b, eps) assert_rel_((a), (b), (eps), __FILE__, __LINE__)
static void assert_rel_(double a, double b, double eps, const char *file, int line)
{
    if (!(fabs(a - b) <= eps * fabs(b))) {
        fprintf(stderr, "%s:%d: %.12g is not within %g of %.12g\n", file, line, a, eps, b);
        _fail(file, line);
    }
}

#define GB 1e9
#define BPUS 1e3        /* bytes per microsecond in 1 GB/s */
/* The latency bound holds for every protocol: each hop's alpha scaled by
 * the smallest of NCCL's per-step latency ratios (LL's): 0.6 / 3.4 on
 * links and switches, 2.7 / 14 over the network (model/cost.h). */
#define LL_LINK (0.6 / 3.4)
#define LL_NET (2.7 / 14.0)

static topo *parse(const char *json)
{
    tc_err e;
    topo *t = topo_parse(json, "test", &e);
    if (!t)
        fprintf(stderr, "topo_parse: %s\n", e.msg);
    assert_non_null(t);
    return t;
}

static bound_model compute(const topo *t, coll_kind k)
{
    bound_model b;
    tc_err e;
    int rc = bound_compute(t, k, &b, &e);
    if (rc != TC_OK)
        fprintf(stderr, "bound_compute: %s\n", e.msg);
    assert_int_equal(rc, TC_OK);
    return b;
}

/* One node of n ranks with the given link pairs (alpha 1.5 us, 10 GB/s). */
static topo *links_topo(int n, const char *pairs)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"name\": \"hand\", \"nodes\": 1, \"ranks_per_node\": %d,"
             " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed\"},"
             " \"links\": [{\"pairs\": [%s], \"alpha_us\": 1.5, \"bandwidth_gbps\": 10,"
             " \"source\": \"assumed\"}]}",
             n, pairs);
    return parse(json);
}

/* 2 ranks, one link alpha, B: every byte a rank needs crosses that link. */
static void test_two_ranks(void **state)
{
    (void)state;
    topo *t = links_topo(2, "[0, 1]");
    const double B = 10 * BPUS;     /* bytes per us */
    /* AllGather: rank 1 needs rank 0's half: max(alpha, (S/2)/B). */
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.latency_us, 1.5 * LL_LINK, 1e-12);
    assert_rel(b.us_per_byte, 0.5 / B, 1e-9);
    assert_rel(bound_time_us(&b, 1e6), 1e6 * 0.5 / B, 1e-9);
    assert_rel(bound_time_us(&b, 100), 1.5 * LL_LINK, 1e-12);     /* small: latency */
    assert_non_null(strstr(b.latency_why, "0.2647 us"));
    assert_non_null(strstr(b.bandwidth_why, "rank 0 must import 1 of 2 ranks' data over 10 GB/s"));
    /* ReduceScatter: each rank sends the other its share of the other's shard. */
    b = compute(t, COLL_REDUCESCATTER);
    assert_rel(b.us_per_byte, 0.5 / B, 1e-9);
    /* AllReduce: each rank must learn the other's whole buffer. */
    b = compute(t, COLL_ALLREDUCE);
    assert_rel(b.us_per_byte, 1.0 / B, 1e-9);
    assert_non_null(strstr(b.bandwidth_why, "whole buffer"));
    /* AllToAll: half a buffer each way. */
    b = compute(t, COLL_ALLTOALL);
    assert_rel(b.us_per_byte, 0.5 / B, 1e-6);
    assert_rel(b.latency_us, 1.5 * LL_LINK, 1e-12);
    topo_free(t);
}

/* A 4-rank ring 0-1-2-3-0: each rank receives from 2 neighbours. */
static void test_four_ring(void **state)
{
    (void)state;
    topo *t = links_topo(4, "[0, 1], [1, 2], [2, 3], [3, 0]");
    const double B = 10 * BPUS;
    /* AllGather: 3/4 S into a rank over 2B. */
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.75 / (2 * B), 1e-9);
    assert_rel(b.latency_us, 3.0 * LL_LINK, 1e-12);     /* opposite ranks: 2 hops */
    assert_non_null(strstr(b.latency_why, "2 hops"));
    assert_non_null(strstr(b.bandwidth_why, "3 of 4 ranks' data over 20 GB/s (links)"));
    /* ReduceScatter: 3/4 S out of a rank over 2B. */
    b = compute(t, COLL_REDUCESCATTER);
    assert_rel(b.us_per_byte, 0.75 / (2 * B), 1e-9);
    assert_non_null(strstr(b.bandwidth_why, "export"));
    /* AllReduce: the whole buffer into a rank over 2B. */
    b = compute(t, COLL_ALLREDUCE);
    assert_rel(b.us_per_byte, 1.0 / (2 * B), 1e-9);
    /* AllToAll: halves {0,1} | {2,3}: 4 blocks of S/4 over 2 links. */
    b = compute(t, COLL_ALLTOALL);
    assert_rel(b.us_per_byte, 1.0 / (2 * B), 1e-6);
    topo_free(t);
}

/* The same ring numbered 0-2-1-3-0: the index halves {0,1} | {2,3} are no
 * longer the bisection, so only the flow LP finds the AllToAll bound (16
 * block-hops of S/4 over 8 directed links = S / 2B). */
static void test_alltoall_flow_lp(void **state)
{
    (void)state;
    topo *t = links_topo(4, "[0, 2], [2, 1], [1, 3], [3, 0]");
    const double B = 10 * BPUS;
    bound_model b = compute(t, COLL_ALLTOALL);
    assert_rel(b.us_per_byte, 1.0 / (2 * B), 1e-5);
    assert_true(b.us_per_byte <= 1.0 / (2 * B));        /* never above the optimum */
    assert_non_null(strstr(b.bandwidth_why, "multi-commodity flow"));
    /* AllGather is still the per-rank ingress bound (multicast: no flow LP). */
    b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.75 / (2 * B), 1e-9);
    topo_free(t);
}

/* 4 ranks on a switch of 100 GB/s per port: one port in, one out. */
static void test_switch(void **state)
{
    (void)state;
    topo *t = parse("{\"name\": \"sw\", \"nodes\": 1, \"ranks_per_node\": 4,"
                    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100,"
                    " \"source\": \"assumed\"},"
                    " \"switches\": [{\"ranks\": [0, 1, 2, 3], \"alpha_us\": 0.5,"
                    " \"bandwidth_gbps\": 100, \"source\": \"assumed\"}]}");
    const double B = 100 * BPUS;
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.75 / B, 1e-9);
    assert_rel(b.latency_us, 0.5 * LL_LINK, 1e-12);
    assert_non_null(strstr(b.bandwidth_why, "switch ports"));
    b = compute(t, COLL_ALLTOALL);
    assert_rel(b.us_per_byte, 0.75 / B, 1e-6);
    b = compute(t, COLL_REDUCESCATTER);
    assert_rel(b.us_per_byte, 0.75 / B, 1e-9);
    b = compute(t, COLL_ALLREDUCE);
    assert_rel(b.us_per_byte, 1.0 / B, 1e-9);
    /* in the runtimes' passes every port carries a 2 MiB tile in 0.5 us +
     * 2 MiB / B (Simple's tile, the cheapest per byte here): the same cut
     * at that bandwidth; no call latency without a runtime_latency */
    b = compute(t, COLL_ALLGATHER);
    assert_true(b.passes_us_per_byte == 0);     /* bound_compute leaves it out */
    bound_add_passes(t, COLL_ALLGATHER, &b);
    const double T = 2097152.0, Bt = T / (0.5 + T / B);
    assert_rel(b.passes_us_per_byte, 0.75 / Bt, 1e-9);
    assert_rel(bound_passes_us(&b, 1e9), 1e9 * 0.75 / Bt, 1e-9);
    assert_true(b.call_us == 0 && bound_time_us(&b, 1e9) < bound_passes_us(&b, 1e9));
    topo_free(t);
}

/* 2 nodes of 2 ranks (one 50 GB/s link inside a node), one 12.5 GB/s NIC
 * per node: the node cut binds. */
static void test_nic_node_cut(void **state)
{
    (void)state;
    topo *t = parse("{\"name\": \"2x2\", \"nodes\": 2, \"ranks_per_node\": 2,"
                    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100,"
                    " \"source\": \"assumed\"},"
                    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, \"bandwidth_gbps\": 50,"
                    " \"source\": \"assumed\"}],"
                    " \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 2, \"bandwidth_gbps\": 12.5,"
                    " \"source\": \"assumed\"}]}");
    const double B = 12.5 * BPUS;
    /* AllGather: a node imports the other node's 2 of 4 shards. */
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.5 / B, 1e-9);
    assert_rel(b.latency_us, 2.0 * LL_NET, 1e-12);
    assert_non_null(
        strstr(b.bandwidth_why, "node 0 must import 2 of 4 ranks' data over 12.5 GB/s (NICs)"));
    /* AllToAll: 2 x 2 blocks of S/4 cross each way. */
    b = compute(t, COLL_ALLTOALL);
    assert_rel(b.us_per_byte, 1.0 / B, 1e-6);
    /* ReduceScatter: half of the shards' contributions cross. */
    b = compute(t, COLL_REDUCESCATTER);
    assert_rel(b.us_per_byte, 0.5 / B, 1e-9);
    /* AllReduce: a whole buffer crosses each way. */
    b = compute(t, COLL_ALLREDUCE);
    assert_rel(b.us_per_byte, 1.0 / B, 1e-9);
    topo_free(t);
}

/* Two NICs of different speed per node (10 and 30 GB/s, one rank each):
 * NIC pairs run at the slower NIC's rate, so node 1 can import at most
 * 10 + 30 = 40 GB/s (the fast NICs paired), not 10 + 10 + 10 + 30. */
static void test_unequal_nics(void **state)
{
    (void)state;
    topo *t = parse("{\"name\": \"nics\", \"nodes\": 2, \"ranks_per_node\": 2,"
                    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100,"
                    " \"source\": \"assumed\"},"
                    " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.5,"
                    " \"bandwidth_gbps\": 1000,"
                    " \"source\": \"assumed\"}],"
                    " \"nics\": [{\"ranks\": [0], \"alpha_us\": 2, \"bandwidth_gbps\": 10,"
                    " \"source\": \"assumed\"},"
                    " {\"ranks\": [1], \"alpha_us\": 3, \"bandwidth_gbps\": 30,"
                    " \"source\": \"assumed\"}]}");
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.5 / (40 * BPUS), 1e-5);
    assert_true(b.us_per_byte <= 0.5 / (40 * BPUS) * (1 + 1e-12));
    /* rank 0 -> rank 2 over the 10 GB/s NICs costs 2 us (Simple), a pair
     * with the 30 GB/s NIC 3 us; at LL's alphas rank 1 -> rank 3 is cheaper
     * as 1 -> 0 -> 2 -> 3 (two link hops, the 2 us NIC pair) than direct. */
    assert_rel(b.latency_us, 2 * 0.5 * LL_LINK + 2.0 * LL_NET, 1e-12);
    topo_free(t);
}

/* A chip device: 2 chips of 2 clusters; the chip cut binds. */
static void test_chip_cut(void **state)
{
    (void)state;
    topo *t = parse("{\"name\": \"chips\", \"nodes\": 1, \"ranks_per_node\": 4,"
                    " \"device\": {\"kind\": \"chip\", \"chips_per_node\": 2,"
                    " \"clusters_per_chip\": 2,"
                    " \"dma_bytes\": 256, \"source\": \"assumed\"},"
                    " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100,"
                    " \"source\": \"assumed\"},"
                    " \"links\": [{\"pairs\": [[0, 1], [2, 3]], \"alpha_us\": 0.2,"
                    " \"bandwidth_gbps\": 200, \"source\": \"assumed\"},"
                    " {\"pairs\": [[0, 2], [1, 3]], \"alpha_us\": 1, \"bandwidth_gbps\": 20,"
                    " \"source\": \"assumed\"}]}");
    /* AllGather: chip 0 imports 2 of 4 shards over two 20 GB/s links. */
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, 0.5 / (40 * BPUS), 1e-9);
    assert_non_null(strstr(b.bandwidth_why, "chip 0"));
    assert_rel(b.latency_us, 1.2, 1e-12);               /* 0 -> 3: 1 + 0.2 */
    topo_free(t);
}

static void test_unreachable(void **state)
{
    (void)state;
    topo *t = links_topo(3, "[0, 1]");
    bound_model b;
    tc_err e;
    assert_int_equal(bound_compute(t, COLL_ALLGATHER, &b, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "cannot reach rank 2"));
    topo_free(t);
    /* one rank: nothing to move */
    t = topo_default(1);
    b = compute(t, COLL_ALLREDUCE);
    assert_true(b.latency_us == 0 && b.us_per_byte == 0);
    topo_free(t);
}

static topo *load(const char *path)
{
    tc_err e;
    topo *t = topo_load(path, &e);
    if (!t)
        fprintf(stderr, "%s\n", e.msg);
    assert_non_null(t);
    return t;
}

/* algbw of the bound at 1 GB (the size is the total output of AllGather). */
static double bound_algbw(const topo *t, coll_kind k, bound_model *b)
{
    *b = compute(t, k);
    return coll_algbw_gbps(k, GB, bound_time_us(b, GB));
}

/* docs/references.md: NDv2 x2 AllGather 1 GB: 25.0 GB/s, each node imports half over
 * its one 12.5 GB/s NIC; NDv2 x4: 16.67 GB/s, 3/4 of the data. */
static void test_bench_ndv2(void **state)
{
    (void)state;
    bound_model b;
    topo *t = load("topologies/ndv2-x2.json");
    assert_rel(bound_algbw(t, COLL_ALLGATHER, &b), 25.0, 1e-3);
    assert_non_null(strstr(b.bandwidth_why, "must import 8 of 16 ranks' data over 12.5 GB/s"));
    /* at LL's alphas one NIC hop (1.3 us Simple) is dearer than two NVLink
     * hops inside a node (2 x 0.7 us Simple) */
    assert_rel(b.latency_us, 1.3 * LL_NET, 1e-9);
    topo_free(t);
    t = load("topologies/ndv2-x4.json");
    assert_rel(bound_algbw(t, COLL_ALLGATHER, &b), 50.0 / 3, 1e-3);
    assert_non_null(strstr(b.bandwidth_why, "24 of 32 ranks' data over 12.5 GB/s"));
    topo_free(t);
}

/* DGX-2 x2 AllGather.  docs/references.md lists 129.03 GB/s = 125 x 32/31 (a GPU's
 * switch port alone).  In this model a GPU also receives through its NIC
 * (shared by 2 GPUs) while its switch port is busy, so 129.03 is not a valid
 * bound here: the valid one is every GPU's 31/32 over all the ingress,
 * 16 x 125 switch ports + 8 x 12.5 NICs per node: 4200 / 31 = 135.48 GB/s.
 * The single-GPU cut alone would give (125 + 12.5) x 32/31 = 141.9. */
static void test_bench_dgx2(void **state)
{
    (void)state;
    bound_model b;
    topo *t = load("topologies/dgx2-x2.json");
    double bw = bound_algbw(t, COLL_ALLGATHER, &b);
    assert_rel(bw, 4200.0 / 31, 1e-3);
    assert_true(bw > 125.0 * 32 / 31);
    assert_non_null(strstr(b.bandwidth_why, "each rank must import 31 of 32"));
    assert_rel(b.latency_us, 2.6 * LL_NET, 1e-9);
    /* AllToAll: each node imports 16 x 16 blocks of S/32 over 8 NICs. */
    assert_rel(bound_algbw(t, COLL_ALLTOALL, &b), 12.5, 1e-3);
    topo_free(t);
}

/* ForestColl (arXiv 2402.06787) states the AllGather optimum of its MI250
 * x2 fabric (32 GCDs, xGMI links of 50 GB/s in 1, 2 or 4, one 16 GB/s IB
 * port each) at 1 GiB: 3032.0 us; the families of cuts alone gave 2842.0,
 * 6.7 % low.  The exact cut bound must give the optimum (to the LP's
 * tolerance), ReduceScatter the same (the fabric is symmetric), and on
 * ForestColl's A100 x2 the 3097.33 us both we and it had already. */
static void test_exact_cut_forestcoll(void **state)
{
    (void)state;
    const double gib = 1073741824.0;
    topo *t = load("tests/data/forestcoll/forestcoll-mi250-x2.json");
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(gib * b.us_per_byte, 3032.0, 1e-4);
    assert_true(gib * b.us_per_byte <= 3032.0 * (1 + 1e-5));
    assert_non_null(strstr(b.bandwidth_why, "narrowest cut over all vertex sets"));
    b = compute(t, COLL_REDUCESCATTER);
    assert_rel(gib * b.us_per_byte, 3032.0, 1e-4);
    bound_add_passes(t, COLL_REDUCESCATTER, &b);
    assert_true(b.passes_us_per_byte == 0);    /* alpha 0: the passes cost nothing more */
    topo_free(t);
    t = load("tests/data/forestcoll/forestcoll-a100-x2.json");
    b = compute(t, COLL_ALLGATHER);
    assert_rel(gib * b.us_per_byte, 3097.33, 1e-5);
    topo_free(t);
}

/* A cut no family sees: a ring of 6 ranks whose links alternate fat
 * (0=1, 2=3, 4=5: 100 GB/s) and thin (1-2, 3-4, 5-0: 1 GB/s).  The set
 * {0,1,2,3} must export its 4 shards over the thin 3->4 and 0->5: 2 GB/s,
 * so T >= 2 shards per GB/s; single ranks (5 shards over 101 GB/s) and the
 * half {0,1,2} (3 shards over 101 GB/s) see almost nothing. */
static void test_exact_cut_beyond_families(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"chain\", \"nodes\": 1, \"ranks_per_node\": 6,"
             " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"a\"},"
             " \"links\": [{\"pairs\": [[0,1],[2,3],[4,5]], \"alpha_us\": 1,"
             " \"bandwidth_gbps\": 100, \"source\": \"a\"},"
             " {\"pairs\": [[1,2],[3,4],[5,0]], \"alpha_us\": 1, \"bandwidth_gbps\": 1,"
             " \"source\": \"a\"}]}");
    topo *t = parse(json);
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, (2.0 / 6) / (1 * BPUS), 1e-5);
    assert_non_null(strstr(b.bandwidth_why, "narrowest cut over all vertex sets"));
    topo_free(t);
}

/* Same inputs, same answer, byte for byte. */
static void test_deterministic(void **state)
{
    (void)state;
    topo *t = load("topologies/ndv2-x2.json");
    for (int k = 0; k < COLL_COUNT; k++) {
        bound_model a = compute(t, (coll_kind)k), c = compute(t, (coll_kind)k);
        assert_true(a.latency_us == c.latency_us && a.us_per_byte == c.us_per_byte);
        assert_string_equal(a.latency_why, c.latency_why);
        assert_string_equal(a.bandwidth_why, c.bandwidth_why);
        assert_true(a.us_per_byte > 0 && a.latency_us > 0);
    }
    topo_free(t);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A 32 x 32 torus (TACOS's figures) as JSON text. */
static char *torus_json(int side)
{
    size_t cap = 64 + (size_t)side * side * 40 + 512, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"name\": \"torus\", \"nodes\": 1, \"ranks_per_node\": %d,"
                          " \"local\": {\"copy_gbps\": 500, \"reduce_gbps\": 500,"
                          " \"source\": \"assumed\"},"
                          " \"links\": [{\"pairs\": [",
                          side * side);
    for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++) {
            int r = y * side + x;
            n += (size_t)snprintf(s + n, cap - n, "%s[%d, %d], [%d, %d]", r ? ", " : "", r,
                                  y * side + (x + 1) % side, r, ((y + 1) % side) * side + x);
        }
    snprintf(s + n, cap - n,
             "], \"alpha_us\": 0.5, \"bandwidth_gbps\": 53.6870912, \"source\": \"assumed\"}]}");
    return s;
}

/* 1024 ranks: a torus and the all-to-all default (their time printed;
 * speed is measured by make scale, not asserted here), and the
 * figures match docs/references.md's alpha-beta bound (TACOS table: 4995.12 us for
 * 1 MiB per NPU on the 32 x 32 torus). */
static void test_1024_ranks(void **state)
{
    (void)state;
    char *js = torus_json(32);
    topo *t = parse(js);
    free(js);
    double t0 = now_s();
    bound_model b[COLL_COUNT];
    for (int k = 0; k < COLL_COUNT; k++)
        b[k] = compute(t, (coll_kind)k);
    double dt = now_s() - t0;
    print_message("bounds: torus 32x32, every collective: %.3f s\n", dt);
    double S = 1024.0 * 1048576;                        /* 1 MiB in, 1 GiB out */
    assert_rel(bound_time_us(&b[COLL_ALLGATHER], S), 4995.12, 1e-5);
    assert_rel(b[COLL_ALLGATHER].latency_us, 16.0 * LL_LINK, 1e-12);  /* 16 + 16 hops */
    /* AllToAll: the index halves are the torus bisection: 512 x 512 blocks
     * of S/1024 over 2 x 32 links each way. */
    assert_rel(b[COLL_ALLTOALL].us_per_byte, 256.0 / (64 * 53.6870912 * BPUS), 1e-9);
    assert_non_null(strstr(b[COLL_ALLTOALL].bandwidth_why, "flow LP skipped"));
    topo_free(t);

    t = topo_default(1024);
    t0 = now_s();
    for (int k = 0; k < COLL_COUNT; k++)
        b[k] = compute(t, (coll_kind)k);
    dt = now_s() - t0;
    print_message("bounds: default 1024 ranks, every collective: %.3f s\n", dt);
    assert_rel(b[COLL_ALLGATHER].us_per_byte, (1023.0 / 1024) / (1023 * 50 * BPUS), 1e-9);
    assert_rel(b[COLL_ALLGATHER].latency_us, 0.7 * LL_LINK, 1e-12);
    topo_free(t);
}

/* A switch of 3000 ports (beyond the exact pair table): still the per-port
 * bound, 2999/3000 of the data into a rank over one port. */
static void test_big_switch(void **state)
{
    (void)state;
    int n = 3000;
    size_t cap = (size_t)n * 8 + 512, len = 0;
    char *js = malloc(cap);
    assert_non_null(js);
    len += (size_t)snprintf(js + len, cap - len,
                            "{\"name\": \"big\", \"nodes\": 1, \"ranks_per_node\": %d,"
                            " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100,"
                            " \"source\": \"assumed\"}, \"switches\": [{\"ranks\": [",
                            n);
    for (int r = 0; r < n; r++)
        len += (size_t)snprintf(js + len, cap - len, "%s%d", r ? ", " : "", r);
    snprintf(js + len, cap - len,
             "], \"alpha_us\": 0.5, \"bandwidth_gbps\": 100, \"source\": \"assumed\"}]}");
    topo *t = parse(js);
    free(js);
    bound_model b = compute(t, COLL_ALLGATHER);
    assert_rel(b.us_per_byte, (2999.0 / 3000) / (100 * BPUS), 1e-9);
    assert_rel(b.latency_us, 0.5 * LL_LINK, 1e-12);
    b = compute(t, COLL_ALLREDUCE);
    assert_rel(b.us_per_byte, 1.0 / (100 * BPUS), 1e-9);
    topo_free(t);
}

/* The small bundled topologies answer well under a second each. */
static void test_bundled_speed(void **state)
{
    (void)state;
    const char *files[] = {"topologies/ndv2-x2.json", "topologies/ndv2-x4.json",
                           "topologies/dgx2-x2.json", "topologies/torus-2d-4x4.json",
                           "topologies/cs-chip4x2.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        topo *t = load(files[i]);
        double t0 = now_s();
        for (int k = 0; k < COLL_COUNT; k++)
            compute(t, (coll_kind)k);
        double dt = now_s() - t0;
        print_message("bounds: %s: %.3f s\n", files[i], dt);
        topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_ranks),
        cmocka_unit_test(test_four_ring),
        cmocka_unit_test(test_alltoall_flow_lp),
        cmocka_unit_test(test_switch),
        cmocka_unit_test(test_nic_node_cut),
        cmocka_unit_test(test_unequal_nics),
        cmocka_unit_test(test_chip_cut),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_bench_ndv2),
        cmocka_unit_test(test_bench_dgx2),
        cmocka_unit_test(test_exact_cut_forestcoll),
        cmocka_unit_test(test_exact_cut_beyond_families),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_1024_ranks),
        cmocka_unit_test(test_big_switch),
        cmocka_unit_test(test_bundled_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
