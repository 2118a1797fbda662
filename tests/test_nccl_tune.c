/* test_nccl_tune.c — NCCL's tuning model as `--algo nccl` uses it: the
 * estimates are NCCL's formulas (hand-computed here from the constants of
 * NVIDIA/nccl src/graph/tuning.cc), the pick is the fastest, the channel
 * count shrinks for small calls by NCCL's thread thresholds, and the chunk
 * and slice sizes are NCCL's buffer steps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "model/topo_nccl.h"
#include "synth/nccl_tune.h"

#define MIB (1LL << 20)

/* Two V100 nodes of 8, 4 ring channels of 10 GB/s. */
static nccl_comm two_nodes(void)
{
    nccl_comm c = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 4,
                   .bw_intra = 10.0, .bw_inter = 10.0};
    return c;
}

static void test_ring_estimates(void **state)
{
    (void)state;
    nccl_comm c = two_nodes();
    /* Simple: 8.4 + 14 * max(3.4, 1 * 3) + 1 * 14 = 70; bw 4 * 10 * 16/15 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_RING, COST_SIMPLE, MIB),
                       70.0 + MIB / (1000.0 * 40.0 * 16 / 15), 1e-3);
    /* LL: 6.6 + 14 * max(0.6, 1) + 2.7 = 23.3; bw min(39, 40 * .5) * 16/15 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_RING, COST_LL, MIB),
                       23.3 + MIB / (1000.0 * 20.0 * 16 / 15), 1e-3);
    /* LL128: 14 + 14 * 1.9 + 4 = 44.6; bw min(40 * .92, 4 * 20) * 16/15 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_RING, COST_LL128, MIB),
                       44.6 + MIB / (1000.0 * 36.8 * 16 / 15), 1e-3);
    /* AllReduce ring Simple: 2 * 15 steps, 2 of them between nodes, and the
     * ring plateau (x1.9 on Volta) once bytes / (channels * ranks) >= 64 */
    double lat = (8.4 + 28 * 3.4 + 2 * 14.0) * 1.9;
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_RING, COST_SIMPLE, MIB),
                       lat + MIB / (1000.0 * 40.0 * 16 / 30), 1e-3);
    /* the plateau needs 64 bytes per (channel, rank): at 4 KiB, not at 2 KiB */
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_RING, COST_SIMPLE, 4096),
                       lat + 4096 / (1000.0 * 40.0 * 16 / 30), 1e-3);
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_RING, COST_SIMPLE, 2048),
                       8.4 + 28 * 3.4 + 2 * 14.0 + 2048 / (1000.0 * 40.0 * 16 / 30), 1e-3);
}

static void test_tree_estimates(void **state)
{
    (void)state;
    nccl_comm c = two_nodes();
    /* tree AllReduce Simple: 8.4 + 2 * (7 * 4.0 + 1 * 14) = 92.4; bus bw
     * min(40 * .92, 4 * 18.5) = 36.8, halved; correction at 1 MiB
     * (bytes / 64 = 2^14: index 14 of the Simple row, 0.5) */
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_TREE, COST_SIMPLE, MIB),
                       92.4 + MIB / (1000.0 * 18.4 * 0.5), 1e-3);
    /* LL: 6.8 + 2 * (7 * 0.6 + 5.0) = 25.2; the AllReduce cap (36.8) then
     * LL's: min(36.8 / 3.8, 39), halved; LL row index 14: 0.5 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_TREE, COST_LL, MIB),
                       25.2 + MIB / (1000.0 * 36.8 / 3.8 / 2 * 0.5), 1e-3);
    /* no tree for anything but AllReduce, nothing for AllToAll */
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_TREE, COST_SIMPLE, MIB) < 0);
    assert_true(nccl_time_us(&c, COLL_ALLTOALL, NCCL_RING, COST_SIMPLE, MIB) < 0);
}

/* On two nodes NCCL's search gives a ring graph one speed inside and
 * between nodes, and a tree inside a node at most twice its inter-node
 * speed (search.cc): NVLink at 25 GB/s and a NIC share of 6.25 time a ring
 * as 6.25 everywhere and a tree as 12.5 inside. */
static void test_two_node_speeds(void **state)
{
    (void)state;
    nccl_comm fast = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                      .bw_intra = 25.0, .bw_inter = 6.25};
    nccl_comm ring = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                      .bw_intra = 6.25, .bw_inter = 6.25};
    nccl_comm tree = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                      .bw_intra = 12.5, .bw_inter = 6.25};
    for (int p = 0; p < COST_NPROTO; p++) {
        assert_float_equal(nccl_time_us(&fast, COLL_ALLGATHER, NCCL_RING, (cost_proto)p, MIB),
                           nccl_time_us(&ring, COLL_ALLGATHER, NCCL_RING, (cost_proto)p, MIB),
                           1e-9);
        assert_float_equal(nccl_time_us(&fast, COLL_ALLREDUCE, NCCL_TREE, (cost_proto)p, MIB),
                           nccl_time_us(&tree, COLL_ALLREDUCE, NCCL_TREE, (cost_proto)p, MIB),
                           1e-9);
    }
    /* Simple ring AllGather by hand: 2 channels x 6.25, x 16/15 */
    assert_float_equal(nccl_time_us(&fast, COLL_ALLGATHER, NCCL_RING, COST_SIMPLE, MIB),
                       70.0 + MIB / (1000.0 * 12.5 * 16 / 15), 1e-3);
    /* more nodes: the inter-node speed, as before */
    nccl_comm four = {.nranks = 32, .nnodes = 4, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                      .bw_intra = 25.0, .bw_inter = 6.25};
    nccl_comm four_eq = {.nranks = 32, .nnodes = 4, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                         .bw_intra = 6.25, .bw_inter = 6.25};
    assert_float_equal(nccl_time_us(&four, COLL_ALLREDUCE, NCCL_TREE, COST_SIMPLE, MIB),
                       nccl_time_us(&four_eq, COLL_ALLREDUCE, NCCL_TREE, COST_SIMPLE, MIB), 1e-9);
}

static void test_choice(void **state)
{
    (void)state;
    nccl_comm c = two_nodes();
    nccl_choice ch;
    /* 1 MiB AllGather: LL128 71.3 us beats LL 72.5 and Simple 94.6 */
    assert_int_equal(nccl_choose(&c, COLL_ALLGATHER, MIB, &ch), 0);
    assert_int_equal(ch.algo, NCCL_RING);
    assert_int_equal(ch.proto, COST_LL128);
    assert_int_equal(ch.nchannels, 4);     /* 1 MiB >= 4 * 640 * 8 */
    assert_int_equal(ch.chunk_bytes, 576000);   /* 614400-byte step, 120 of 128 */
    assert_float_equal(ch.time_us, ch.table_us[NCCL_RING][COST_LL128], 0);
    assert_true(ch.table_us[NCCL_TREE][COST_SIMPLE] < 0);
    /* 8 KiB: LL; ring LL wants 8 * 16 ranks * 512 threads per channel */
    assert_int_equal(nccl_choose(&c, COLL_ALLGATHER, 8192, &ch), 0);
    assert_int_equal(ch.proto, COST_LL);
    assert_int_equal(ch.nchannels, 1);
    assert_int_equal(ch.chunk_bytes, 32768);    /* 64 KiB of LL lines, half data */
    /* 1 GiB: Simple, every channel, 2 MiB chunks in 1 MiB slices */
    assert_int_equal(nccl_choose(&c, COLL_ALLGATHER, 1024 * MIB, &ch), 0);
    assert_int_equal(ch.proto, COST_SIMPLE);
    assert_int_equal(ch.nchannels, 4);
    assert_int_equal(ch.chunk_bytes, 2 * MIB);
    assert_int_equal(ch.slice_bytes, MIB);
    /* AllToAll is point-to-point, not a tuned collective */
    assert_int_equal(nccl_choose(&c, COLL_ALLTOALL, MIB, &ch), -1);
}

static void test_tree_picked_small_allreduce(void **state)
{
    (void)state;
    /* 4 nodes of 8 with one channel: the ring pays 2 * 3 network steps,
     * the tree 2 * log2(4); at 64 KiB the tree wins */
    nccl_comm c = {.nranks = 32, .nnodes = 4, .arch = TOPO_ARCH_AMPERE, .nchannels = 2,
                   .bw_intra = 12.0, .bw_inter = 12.0};
    nccl_choice ch;
    assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, 65536, &ch), 0);
    assert_int_equal(ch.algo, NCCL_TREE);
    double best = ch.time_us;
    for (int a = 0; a < NCCL_NALGO; a++)
        for (int p = 0; p < COST_NPROTO; p++)
            if (ch.table_us[a][p] >= 0)
                assert_true(best <= ch.table_us[a][p]);
}

/* The tree's LL128 chunk is halved for small calls so the tree pipelines
 * (NCCL's src/enqueue.cc): two nodes of 8, nsteps = 1 + log2(2) + 0.8 =
 * 2.8; halve above 128 KiB while bytes / (2 channels x chunk) < 22.4, then
 * above 32 KiB while < 5.6.  64 KiB: 576000 -> 72000 -> 18000; 1 MiB:
 * 72000 (1048576 / 144000 = 7 >= 5.6); 16 MiB: 288000 (16777216 / 576000
 * = 29 >= 22.4). */
static void test_tree_ll128_chunk(void **state)
{
    (void)state;
    nccl_comm c = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 2,
                   .bw_intra = 25.0, .bw_inter = 6.25};
    const long long size[] = {65536, MIB, 16 * MIB}, want[] = {18000, 72000, 288000};
    for (int i = 0; i < 3; i++) {
        nccl_choice ch;
        assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, size[i], &ch), 0);
        assert_int_equal(ch.algo, NCCL_TREE);
        assert_int_equal(ch.proto, COST_LL128);
        assert_int_equal(ch.nchannels, 2);
        assert_int_equal(ch.chunk_bytes, want[i]);
        assert_int_equal(ch.slice_bytes, want[i]);
    }
}

static void test_generation_constants(void **state)
{
    (void)state;
    /* one node: LL's cap is the GPU generation's (Volta 39, Hopper 141) */
    nccl_comm v = {.nranks = 8, .nnodes = 1, .arch = TOPO_ARCH_VOLTA, .nchannels = 32,
                   .bw_intra = 20.0, .bw_inter = 20.0};
    nccl_comm h = v;
    h.arch = TOPO_ARCH_HOPPER;
    long long b = 64 * MIB;
    double lat = 6.6 + 7 * 0.6;
    assert_float_equal(nccl_time_us(&v, COLL_ALLGATHER, NCCL_RING, COST_LL, b),
                       lat + b / (1000.0 * 39.0 * 8 / 7), 1e-3);
    assert_float_equal(nccl_time_us(&h, COLL_ALLGATHER, NCCL_RING, COST_LL, b),
                       lat + b / (1000.0 * 141.0 * 8 / 7), 1e-3);
    /* unknown is taken as Volta */
    nccl_comm u = v;
    u.arch = TOPO_ARCH_UNKNOWN;
    assert_float_equal(nccl_time_us(&u, COLL_ALLGATHER, NCCL_RING, COST_LL, b),
                       nccl_time_us(&v, COLL_ALLGATHER, NCCL_RING, COST_LL, b), 0);
}

static void test_p2p(void **state)
{
    (void)state;
    assert_int_equal(nccl_p2p_proto(16384), COST_LL);
    assert_int_equal(nccl_p2p_proto(16385), COST_SIMPLE);
    /* NVLink: 512 KiB; network: 128 KiB, quartered below one step, halved
     * below eight; LL: half of a 64 KiB step */
    assert_int_equal(nccl_p2p_chunk_bytes(0, MIB, COST_SIMPLE), 512 * 1024);
    assert_int_equal(nccl_p2p_chunk_bytes(1, 64 * 1024, COST_SIMPLE), 32 * 1024);
    assert_int_equal(nccl_p2p_chunk_bytes(1, 512 * 1024, COST_SIMPLE), 64 * 1024);
    assert_int_equal(nccl_p2p_chunk_bytes(1, 4 * MIB, COST_SIMPLE), 128 * 1024);
    assert_int_equal(nccl_p2p_chunk_bytes(0, 4096, COST_LL), 32 * 1024);
}

/* NCCL_PROTO=P (--proto with --algo nccl): the pick is P's fastest
 * algorithm, the table still holds every estimate (src/graph/tuning.cc:453-457). */
static void test_only_proto(void **state)
{
    (void)state;
    nccl_comm c = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_VOLTA, .nchannels = 4,
                   .bw_intra = 10.0, .bw_inter = 10.0};
    nccl_choice free_pick;
    assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, 1 << 20, &free_pick), 0);
    for (int p = 0; p < COST_NPROTO; p++) {
        c.only_proto = 1 + p;
        nccl_choice ch;
        if (nccl_choose(&c, COLL_ALLREDUCE, 1 << 20, &ch) != 0)
            continue;
        assert_int_equal(ch.proto, p);
        for (int a = 0; a < NCCL_NALGO; a++) {
            assert_true(ch.table_us[a][p] < 0 || ch.time_us <= ch.table_us[a][p]);
            for (int q = 0; q < COST_NPROTO; q++)
                assert_true(ch.table_us[a][q] == free_pick.table_us[a][q]);
        }
        if (p == (int)free_pick.proto)
            assert_true(ch.time_us == free_pick.time_us);
        else
            assert_true(ch.time_us >= free_pick.time_us);
    }
}

/* NVLS on one DGX H100 (NCCL 5067397): the NVLS graph of 8 GPUs with 18
 * NVLinks of 20.6 GB/s runs its 8 channels at 40 GB/s ((8+1) x 40 = 360 <=
 * 370.8; 50 would need 450) and pass 2 lifts bwInter to 60; AllReduce busBW
 * 8 x min(40 x 0.85 x 7/8 x 2, 60) = 476, algBW 476 x 8/14 = 272 GB/s,
 * latency 25 us: 1 GiB in 25 + 2^30 / 272e3 us.  AllGather: 8 x 40 x 0.85
 * x 7/8 x 7/8 = 208.25 GB/s, no bus-to-algorithm factor. */
static void test_nvls(void **state)
{
    (void)state;
    double bi, be;
    assert_int_equal(nccl_nvls_graph(TOPO_ARCH_HOPPER, 8, 18, &bi, &be), 8);
    assert_float_equal(bi, 40.0, 0);
    assert_float_equal(be, 60.0, 0);
    assert_int_equal(nccl_nvls_graph(TOPO_ARCH_AMPERE, 8, 12, &bi, &be), 0);
    assert_int_equal(nccl_nvls_channels(TOPO_ARCH_HOPPER, 1), 16);
    nccl_comm c = {.nranks = 8, .nnodes = 1, .arch = TOPO_ARCH_HOPPER, .nchannels = 12,
                   .bw_intra = 20.0, .bw_inter = 20.0, .nvls_graph_channels = 8,
                 .nvls_bw_intra = 40.0, .nvls_bw_inter = 60.0, .nvls_channels = 16};
    double bw = 8 * 40.0 * 0.85 * 7 / 8 * 2 * 8 / 14.0;
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS, COST_SIMPLE, 1024 * MIB),
                       25 + 1024.0 * MIB / (1000 * bw), 1e-3);
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS, COST_LL, MIB) < 0);
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_NVLS, COST_SIMPLE, 1024 * MIB),
                       25 + 1024.0 * MIB / (1000 * 208.25), 1e-3);
    nccl_choice ch;
    assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, 1024 * MIB, &ch), 0);
    assert_int_equal(ch.algo, NCCL_NVLS);
    assert_int_equal(ch.nchannels, 16);
    assert_int_equal(ch.chunk_bytes, 128 * 1024);
    /* without NVLS: the best of the rest, NVLS's estimate still listed */
    assert_int_equal(nccl_choose_ex(&c, COLL_ALLREDUCE, 1024 * MIB, 1u << NCCL_NVLS, &ch), 0);
    assert_true(ch.algo != NCCL_NVLS);
    assert_true(ch.table_us[NCCL_NVLS][COST_SIMPLE] > 0);
    /* across nodes NCCL's NVLS needs CollNet: not offered */
    c.nnodes = 2;
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS, COST_SIMPLE, MIB) < 0);
}

/* NVLSTree: NVLS inside each node, trees between nodes (tuning.cc:301-323,
 * 427-428); its graph across nodes from NCCL's inter-node speeds. */
static void test_nvls_tree(void **state)
{
    (void)state;
    double bi, be;
    /* DGX H100: 18 NVLinks of 20.6 GB/s, 400 Gb/s NICs on PCIe Gen5 x16
     * (48 GB/s): 48, 45 and 42 do not fit 9 channels in 370.8 GB/s, 40
     * does; bwInter then raised to 48, the most the GPU-NIC path takes */
    assert_int_equal(topo_nccl_nvls_graph_net(90, 8, 18 * 20.6, 48.0, &bi, &be), 1);
    assert_float_equal(bi, 40.0, 0);
    assert_float_equal(be, 48.0, 0);
    /* 200 Gb/s NICs: 24 both ways (30, the next speed up, is above 25) */
    assert_int_equal(topo_nccl_nvls_graph_net(90, 8, 18 * 20.6, 25.0, &bi, &be), 1);
    assert_float_equal(bi, 24.0, 0);
    assert_float_equal(be, 24.0, 0);
    assert_int_equal(topo_nccl_nvls_graph_net(80, 8, 12 * 20.0, 25.0, &bi, &be), 0);
    /* two nodes: the channel's bandwidth is the least of the NVLS side
     * (40 x 0.85 x 7/8 x 2 = 59.5), twice bwInter (96) and
     * perChMaxNVLSTreeBw (57.7); latency 25 + 2 log2(2) x 20.9 */
    nccl_comm c = {.nranks = 16, .nnodes = 2, .arch = TOPO_ARCH_HOPPER, .nchannels = 16,
                   .bw_intra = 32.0, .bw_inter = 25.0, .nvls_graph_channels = 8,
                 .nvls_bw_intra = 40.0, .nvls_bw_inter = 48.0, .nvls_channels = 16};
    double bw = 8 * 57.7 * 16 / 30.0;
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS_TREE, COST_SIMPLE, 1024 * MIB),
                       25 + 2 * 20.9 + 1024.0 * MIB / (1000 * bw), 1e-3);
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS_TREE, COST_LL128, MIB) < 0);
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_NVLS_TREE, COST_SIMPLE, MIB) < 0);
    nccl_choice ch;
    assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, 1024 * MIB, &ch), 0);
    assert_int_equal(ch.algo, NCCL_NVLS_TREE);
    assert_int_equal(ch.nchannels, 16);
    assert_int_equal(nccl_choose_ex(&c, COLL_ALLREDUCE, 1024 * MIB, 1u << NCCL_NVLS_TREE, &ch),
                     0);
    assert_true(ch.algo != NCCL_NVLS_TREE && ch.algo != NCCL_NVLS);
    /* four nodes: bwInter not doubled, perChMaxNVLSTreeBw 45.5; 2 log2(4) */
    c.nranks = 32;
    c.nnodes = 4;
    bw = 8 * 45.5 * 32 / 62.0;
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS_TREE, COST_SIMPLE, 1024 * MIB),
                       25 + 4 * 20.9 + 1024.0 * MIB / (1000 * bw), 1e-3);
    /* one node: off (tuning.cc:502) */
    c.nranks = 8;
    c.nnodes = 1;
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS_TREE, COST_SIMPLE, MIB) < 0);
}

/* PAT: AllGather and ReduceScatter with one GPU per node, Simple
 * (tuning.cc:215-223, 302-304, 337, 429-433): 0.75 of the bus bandwidth,
 * which is its algorithm bandwidth; 8 + log2(nodes) x 14/3.5 + 2.8 per rank. */
static void test_pat(void **state)
{
    (void)state;
    nccl_comm c = {.nranks = 64, .nnodes = 64, .arch = TOPO_ARCH_HOPPER, .nchannels = 4,
                   .bw_intra = 12.0, .bw_inter = 12.0};
    double lat = 8 + 6 * 14 / 3.5 + 64 * 2.8;
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_PAT, COST_SIMPLE, 8 * MIB),
                       lat + 8.0 * MIB / (1000 * 4 * 12.0 * .75), 1e-6);
    assert_float_equal(nccl_time_us(&c, COLL_REDUCESCATTER, NCCL_PAT, COST_SIMPLE, 8 * MIB),
                       lat + 8.0 * MIB / (1000 * 4 * 12.0 * .75), 1e-6);
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_PAT, COST_LL, MIB) < 0);
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_PAT, COST_SIMPLE, MIB) < 0);
    /* at 8 MiB on 64 nodes its latency beats the ring's 63 network steps */
    nccl_choice ch;
    assert_int_equal(nccl_choose(&c, COLL_ALLGATHER, 8 * MIB, &ch), 0);
    assert_int_equal(ch.algo, NCCL_PAT);
    /* every channel (NCCL sets no PAT thread count, so none is dropped)
     * and PAT's chunk: 512 KiB halved while 4 x chunk x 32 > 8 MiB */
    assert_int_equal(ch.nchannels, 4);
    assert_int_equal(ch.chunk_bytes, 64 * 1024);
    assert_int_equal(nccl_choose_ex(&c, COLL_ALLGATHER, 8 * MIB, 1u << NCCL_PAT, &ch), 0);
    assert_int_equal(ch.algo, NCCL_RING);
    /* more than one GPU per node: off */
    c.nnodes = 32;
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_PAT, COST_SIMPLE, MIB) < 0);
}

/* PAT's chunk (enqueue.cc:2295-2298) and aggregation (collectives.h:531-535,
 * 800-804), worked by hand. */
static void test_pat_chunk_agg(void **state)
{
    (void)state;
    /* AllGather: 512K x 2 x 32 = 32M > 8M, 256K: 16M > 8M, 128K: 8M, stop */
    assert_int_equal(nccl_pat_chunk_bytes(COLL_ALLGATHER, 2, 8 * MIB), 128 * 1024);
    /* ReduceScatter's factor is 16: 512K x 2 x 16 = 16M > 8M, 256K: 8M, stop */
    assert_int_equal(nccl_pat_chunk_bytes(COLL_REDUCESCATTER, 2, 8 * MIB), 256 * 1024);
    /* never below 64 KiB; a large call keeps the whole buffer step */
    assert_int_equal(nccl_pat_chunk_bytes(COLL_ALLGATHER, 2, 64 * 1024), 64 * 1024);
    assert_int_equal(nccl_pat_chunk_bytes(COLL_ALLGATHER, 2, 1024 * MIB), 512 * 1024);
    /* 8 MiB over 64 ranks, 2 channels: 64 KiB a channel share in a 128 KiB
     * chunk: 128/64 = 2 -> 2, 128/128 = 1 stops */
    assert_int_equal(nccl_pat_agg(128 * 1024, 64 * 1024, 64), 2);
    /* 1 MiB: 8 KiB shares in 64 KiB: 8, 4, 2 -> 8, then 64/64 = 1 stops */
    assert_int_equal(nccl_pat_agg(64 * 1024, 8 * 1024, 64), 8);
    /* at most half the ranks; none when the share fills half the chunk */
    assert_int_equal(nccl_pat_agg(512 * 1024, 1, 8), 4);
    assert_int_equal(nccl_pat_agg(128 * 1024, 128 * 1024, 64), 1);
    /* the scheduler's channels: 64 ranks cut one rank's buffer into cells
     * of 512 B (32 KiB of traffic); a call below two cells takes one
     * channel, 64 KiB (2 cells, 32 KiB a channel) both, 256 KiB (8 cells,
     * 4 a channel) both; 4 channels at 64 KiB: still 2 cells, 2 channels */
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 2, 16 * 1024), 1);
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 2, 32 * 1024), 1);
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 2, 64 * 1024), 2);
    assert_int_equal(nccl_sched_channels(COLL_REDUCESCATTER, 64, 2, 256 * 1024), 2);
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 4, 64 * 1024), 2);
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 4, 8 * MIB), 4);
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 1, 8 * MIB), 1);
    /* 96 KiB on 64 ranks, 4 channels: 3 cells, 24 KiB a channel: 3 */
    assert_int_equal(nccl_sched_channels(COLL_ALLGATHER, 64, 4, 96 * 1024), 3);
}

/* CollNet (tuning.cc:305-306, 338-373, 418-423, 503-509; search.cc's
 * graphs as nccl_collnet_graphs restates them).  DGX A100 x2 with a SHARP
 * network: 8 heads on HDR NICs (25 GB/s) behind PCIe Gen4 x16 (24),
 * NVLink 12 x 20: CollNetDirect 8 channels at 24, bwIntra raised to 48
 * (< 2 x 24 until 48); CollNetChain the ring's 16 channels, two a NIC, at
 * 12, bwIntra raised to 15 (16 x 18 would pass the 240 of NVLink). */
static void test_collnet(void **state)
{
    (void)state;
    nccl_comm c;
    memset(&c, 0, sizeof c);
    c.nranks = 16;
    c.nnodes = 2;
    c.arch = TOPO_ARCH_AMPERE;
    c.nchannels = 16;
    c.bw_intra = c.bw_inter = 12.0;
    c.nvswitch = 1;
    c.collnet_heads = 8;
    nccl_collnet_graphs(&c, 8, 8, 12 * 20.0, 24.0, 16);
    assert_int_equal(c.cd_channels, 8);
    assert_float_equal(c.cd_bw_inter, 24.0, 1e-9);
    assert_float_equal(c.cd_bw_intra, 48.0, 1e-9);
    assert_int_equal(c.cc_channels, 16);
    assert_float_equal(c.cc_bw_inter, 12.0, 1e-9);
    assert_float_equal(c.cc_bw_intra, 15.0, 1e-9);
    /* off until enabled */
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_DIRECT, COST_SIMPLE, MIB) < 0);
    c.collnet = 1;
    /* Direct: 8 x 48, GPU/NIC ratio 1, x0.5 (no 0.85 before sm 90);
     * latency 2 x (3.7 + 7 x 0.4) + 31 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_DIRECT, COST_SIMPLE,
                                    1024 * MIB),
                       2 * (3.7 + 7 * 0.4) + 31 + 1024.0 * MIB / (1000 * 8 * 48 * .5), 1e-6);
    /* Chain: 16 x 15 x 0.5; latency 2 x 7 x 2.8 + 30 */
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_CHAIN, COST_SIMPLE,
                                    1024 * MIB),
                       2 * 7 * 2.8 + 30 + 1024.0 * MIB / (1000 * 16 * 15 * .5), 1e-6);
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_DIRECT, COST_LL128, MIB) < 0);
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_COLLNET_CHAIN, COST_SIMPLE, MIB) < 0);
    /* AllGather only with the plugin's iallgather: ppn x min(48, 0.9 x 24) */
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_COLLNET_DIRECT, COST_SIMPLE, MIB) < 0);
    c.collnet_ag = 1;
    assert_float_equal(nccl_time_us(&c, COLL_ALLGATHER, NCCL_COLLNET_DIRECT, COST_SIMPLE,
                                    1024 * MIB),
                       2 * (3.7 + 7 * 0.4) + 31 + 1024.0 * MIB / (1000 * 8 * 0.9 * 24), 1e-6);
    nccl_choice ch;
    assert_int_equal(nccl_choose(&c, COLL_ALLREDUCE, 1024 * MIB, &ch), 0);
    assert_int_equal(ch.algo, NCCL_COLLNET_DIRECT);
    assert_int_equal(ch.nchannels, 8);
    assert_string_equal(nccl_algo_name(ch.algo), "collnetdirect");
    /* without it: the tree, never a CollNet algorithm */
    assert_int_equal(nccl_choose_ex(&c, COLL_ALLREDUCE, 1024 * MIB,
                                    1u << NCCL_COLLNET_DIRECT | 1u << NCCL_COLLNET_CHAIN, &ch),
                     0);
    assert_true(ch.algo == NCCL_TREE || ch.algo == NCCL_RING);
    /* Direct needs an NVSwitch; neither runs on one node */
    c.nvswitch = 0;
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_DIRECT, COST_SIMPLE, MIB) < 0);
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_CHAIN, COST_SIMPLE, MIB) > 0);
    c.nnodes = 1;
    c.nranks = 8;
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_COLLNET_CHAIN, COST_SIMPLE, MIB) < 0);
}

/* NVLS across nodes runs on CollNet (enqueue.cc:2008): off without it. */
static void test_nvls_needs_collnet(void **state)
{
    (void)state;
    nccl_comm c;
    memset(&c, 0, sizeof c);
    c.nranks = 32;
    c.nnodes = 4;
    c.arch = TOPO_ARCH_HOPPER;
    c.nchannels = 16;
    c.bw_intra = c.bw_inter = 24.0;
    c.nvls_graph_channels = 8;
    c.nvls_bw_intra = 24.0;
    c.nvls_bw_inter = 48.0;
    c.nvls_channels = 16;
    assert_true(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS, COST_SIMPLE, MIB) < 0);
    c.collnet = 1;
    c.collnet_heads = 8;
    /* min(2 x 0.85 x 24 x 7/8, 48) x 8 x 32/62; latency 25 + 18 */
    double bw = fmin(2 * 0.85 * 24 * 7 / 8.0, 48) * 8 * 32 / 62.0;
    assert_float_equal(nccl_time_us(&c, COLL_ALLREDUCE, NCCL_NVLS, COST_SIMPLE, 1024 * MIB),
                       25 + 18 + 1024.0 * MIB / (1000 * bw), 1e-6);
    /* AllGather across nodes needs the plugin's iallgather */
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_NVLS, COST_SIMPLE, MIB) < 0);
    c.collnet_ag = 1;
    assert_true(nccl_time_us(&c, COLL_ALLGATHER, NCCL_NVLS, COST_SIMPLE, MIB) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_proto),
        cmocka_unit_test(test_ring_estimates),
        cmocka_unit_test(test_tree_estimates),
        cmocka_unit_test(test_two_node_speeds),
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_tree_picked_small_allreduce),
        cmocka_unit_test(test_tree_ll128_chunk),
        cmocka_unit_test(test_generation_constants),
        cmocka_unit_test(test_p2p),
        cmocka_unit_test(test_nvls),
        cmocka_unit_test(test_nvls_tree),
        cmocka_unit_test(test_pat_chunk_agg),
        cmocka_unit_test(test_pat),
        cmocka_unit_test(test_collnet),
        cmocka_unit_test(test_nvls_needs_collnet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
