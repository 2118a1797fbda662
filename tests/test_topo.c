/* test_topo.c — topology files: the bundled machines load with the facts
 * users rely on, routes and costs are right, every malformed input is refused
 * with TC_INPUT and a message naming the field (and line), and topo_to_json
 * round-trips.  Runs from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/runtime.h"
#include "model/topo.h"
#include "model/variant.h"
#include "util/mem.h"

static const char *const BUNDLED[] = {
    "topologies/ndv2-x1.json",      "topologies/ndv2-x2.json",
    "topologies/ndv2-x4.json",      "topologies/dgx2-x1.json",
    "topologies/dgx2-x2.json",      "topologies/dgx1.json",
    "topologies/torus-2d-4x4.json", "topologies/cs-chip4x2.json",
    "topologies/cs-chip4.json",     "topologies/cs-cluster2.json",
    "topologies/dgx-a100-x4.json",  "topologies/ndv5-x2.json",
};
#define NBUNDLED ((int)(sizeof BUNDLED / sizeof BUNDLED[0]))

/* cmocka's float compare is single precision; this one is double. */
#define assert_near(a, b, eps) assert_near_((a), (b), (eps), __FILE__, __LINE__)
static void assert_near_(double a, double b, double eps, const char *file,
                         int line)
{
    if (!(fabs(a - b) <= eps)) {
        print_error("%s:%d: %.17g is not within %g of %.17g\n", file, line, a,
                    eps, b);
        fail();
    }
}

static topo *load_ok(const char *path)
{
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_load(path, &e);
    if (!t)
        print_error("%s: %s\n", path, e.msg);
    assert_non_null(t);
    return t;
}

/* Count how many distinct destinations rank r has a direct link to. */
static int out_degree(const topo *t, int r)
{
    int n = 0;
    for (int b = 0; b < t->nranks; b++)
        if (topo_route_of(t, r, b).kind == ROUTE_LINK)
            n++;
    return n;
}

/* ------------------------------------------------------------ bundled */

static void test_bundled_shapes(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int nranks, nnodes, nlinks, nswitches, nnics;
        topo_kind kind;
        topo_arch arch;
    } want[] = {
        {"topologies/ndv2-x1.json", 8, 1, 32, 0, 1, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/ndv2-x2.json", 16, 2, 64, 0, 2, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/ndv2-x4.json", 32, 4, 128, 0, 4, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/dgx-a100-x4.json", 32, 4, 0, 4, 32, TOPO_GPU, TOPO_ARCH_AMPERE},
        {"topologies/ndv5-x2.json", 16, 2, 0, 2, 16, TOPO_GPU, TOPO_ARCH_HOPPER},
        {"topologies/dgx2-x1.json", 16, 1, 0, 1, 8, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/dgx2-x2.json", 32, 2, 0, 2, 16, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/dgx1.json", 8, 1, 32, 0, 0, TOPO_GPU, TOPO_ARCH_VOLTA},
        {"topologies/torus-2d-4x4.json", 16, 1, 64, 0, 0, TOPO_GPU, TOPO_ARCH_UNKNOWN},
        {"topologies/cs-chip4x2.json", 8, 1, 56, 0, 0, TOPO_CHIP, TOPO_ARCH_UNKNOWN},
        {"topologies/cs-chip4.json", 4, 1, 12, 0, 0, TOPO_CHIP, TOPO_ARCH_UNKNOWN},
        {"topologies/cs-cluster2.json", 2, 1, 2, 0, 0, TOPO_CHIP, TOPO_ARCH_UNKNOWN},
    };
    assert_int_equal((int)(sizeof want / sizeof want[0]), NBUNDLED);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        topo *t = load_ok(want[i].path);
        assert_int_equal(t->nranks, want[i].nranks);
        assert_int_equal(t->nnodes, want[i].nnodes);
        assert_int_equal(t->nranks, t->nnodes * t->ranks_per_node);
        assert_int_equal(t->nlinks, want[i].nlinks);
        assert_int_equal(t->nswitches, want[i].nswitches);
        assert_int_equal(t->nnics, want[i].nnics);
        assert_int_equal(t->kind, want[i].kind);
        assert_int_equal(t->arch, want[i].arch);
        assert_int_equal(t->is_default, 0);
        assert_string_equal(t->path, want[i].path);
        assert_true(t->copy_gbps > 0 && t->reduce_gbps > 0);
        topo_free(t);
    }
}

static void test_ndv2_cube_mesh(void **state)
{
    (void)state;
    topo *t = load_ok("topologies/ndv2-x2.json");
    assert_string_equal(t->name, "ndv2-x2");
    /* Hybrid cube-mesh: every GPU has 4 NVLink peers, 2 of them doubled. */
    for (int r = 0; r < t->nranks; r++) {
        int n = 0, dbl = 0;
        for (int b = 0; b < t->nranks; b++) {
            topo_route x = topo_route_of(t, r, b);
            if (x.kind != ROUTE_LINK)
                continue;
            assert_int_equal(topo_node_of(t, b), topo_node_of(t, r));
            n++;
            dbl += x.bw_gbps == 50;
        }
        assert_int_equal(n, 4);
        assert_int_equal(dbl, 2);
    }
    topo_route r = topo_route_of(t, 0, 1);      /* double NVLink */
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_true(r.bw_gbps == 50 && r.alpha_us == 0.7);
    assert_int_equal(t->links[r.link].src, 0);
    assert_int_equal(t->links[r.link].dst, 1);
    assert_int_equal(t->links[r.link].mult, 1);
    r = topo_route_of(t, 0, 2);                 /* single NVLink */
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_true(r.bw_gbps == 25);
    r = topo_route_of(t, 13, 15);               /* node 1, local 5 -> 7: double */
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_true(r.bw_gbps == 50);
    assert_int_equal(t->links[r.link].src, 13);
    assert_int_equal(t->links[r.link].dst, 15);
    assert_int_equal(topo_route_of(t, 0, 5).kind, ROUTE_NONE); /* not linked */
    r = topo_route_of(t, 0, 8);                 /* across nodes */
    assert_int_equal(r.kind, ROUTE_NIC);
    assert_int_equal(r.nic_src, 0);
    assert_int_equal(r.nic_dst, 1);
    assert_true(r.alpha_us == 1.3 && r.bw_gbps == 12.5);
    assert_int_equal(t->nics[1].node, 1);
    assert_int_equal(t->nics[1].nranks, 8);
    assert_int_equal(t->nic_of_rank[15], 1);
    assert_int_equal(topo_route_of(t, 3, 3).kind, ROUTE_SELF);
    assert_int_equal(topo_route_of(t, 0, 16).kind, ROUTE_NONE); /* out of range */
    assert_int_equal(topo_route_of(t, -1, 0).kind, ROUTE_NONE);
    topo_free(t);
}

static void test_dgx2_switch_and_nics(void **state)
{
    (void)state;
    topo *t = load_ok("topologies/dgx2-x2.json");
    topo_route r = topo_route_of(t, 0, 15);
    assert_int_equal(r.kind, ROUTE_SWITCH);
    assert_int_equal(r.sw, 0);
    assert_true(r.alpha_us == 0.35 && r.bw_gbps == 125);
    r = topo_route_of(t, 31, 16);
    assert_int_equal(r.kind, ROUTE_SWITCH);
    assert_int_equal(r.sw, 1);
    /* NIC k is shared by GPUs 2k and 2k+1, on each node. */
    for (int r0 = 0; r0 < t->nranks; r0 += 2) {
        int n = t->nic_of_rank[r0];
        assert_true(n >= 0);
        assert_int_equal(t->nic_of_rank[r0 + 1], n);
        assert_int_equal(t->nics[n].nranks, 2);
        assert_int_equal(t->nics[n].ranks[0], r0);
        assert_int_equal(t->nics[n].ranks[1], r0 + 1);
        assert_int_equal(t->nics[n].node, r0 / 16);
        if (r0 + 2 < t->nranks)
            assert_int_not_equal(t->nic_of_rank[r0 + 2], n);
    }
    r = topo_route_of(t, 5, 16);
    assert_int_equal(r.kind, ROUTE_NIC);
    assert_int_equal(r.nic_src, t->nic_of_rank[5]);
    assert_int_equal(r.nic_dst, t->nic_of_rank[16]);
    assert_true(r.alpha_us == 2.6 && r.bw_gbps == 12.5);
    topo_free(t);
}

static void test_dgx1_and_torus(void **state)
{
    (void)state;
    topo *t = load_ok("topologies/dgx1.json");
    topo_route r = topo_route_of(t, 0, 1);
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_near(r.bw_gbps, 2e6 / 46e3, 1e-6);  /* TACCL beta 46 us/MB, x2 */
    r = topo_route_of(t, 0, 3);
    assert_near(r.bw_gbps, 1e6 / 46e3, 1e-6);
    assert_true(r.alpha_us == 0.7);
    topo_free(t);

    t = load_ok("topologies/torus-2d-4x4.json");
    for (int x = 0; x < t->nranks; x++)
        assert_int_equal(out_degree(t, x), 4);
    const int nb[] = {1, 3, 4, 12};     /* right, left (wrap), down, up (wrap) */
    for (int i = 0; i < 4; i++) {
        r = topo_route_of(t, 0, nb[i]);
        assert_int_equal(r.kind, ROUTE_LINK);
        assert_true(r.bw_gbps == 53.6870912 && r.alpha_us == 0.5);
        assert_int_equal(topo_route_of(t, nb[i], 0).kind, ROUTE_LINK);
    }
    assert_int_equal(topo_route_of(t, 0, 5).kind, ROUTE_NONE);
    assert_int_equal(topo_route_of(t, 15, 12).kind, ROUTE_LINK); /* row wrap */
    topo_free(t);
}

static void test_chip_and_cluster_indices(void **state)
{
    (void)state;
    topo *t = load_ok("topologies/cs-chip4x2.json");
    assert_int_equal(t->chips_per_node, 4);
    assert_int_equal(t->clusters_per_chip, 2);
    assert_int_equal(t->dma_bytes, 256);
    for (int r = 0; r < 8; r++) {
        assert_int_equal(topo_chip_of(t, r), r / 2);
        assert_int_equal(topo_cluster_of(t, r), r % 2);
    }
    topo_route c2c = topo_route_of(t, 0, 6);    /* chip 0 -> chip 3, cluster 0 */
    topo_route on = topo_route_of(t, 4, 5);     /* chip 2, cluster 0 -> 1 */
    assert_int_equal(c2c.kind, ROUTE_LINK);
    assert_int_equal(on.kind, ROUTE_LINK);
    assert_true(on.bw_gbps > c2c.bw_gbps);
    /* both differ: one fused DMA over the chip-to-chip path */
    topo_route both = topo_route_of(t, 0, 3);
    assert_int_equal(both.kind, ROUTE_LINK);
    assert_true(both.bw_gbps == c2c.bw_gbps);
    assert_int_equal(topo_chip_of(t, 8), -1);
    topo_free(t);

    t = load_ok("topologies/cs-chip4.json");
    for (int r = 0; r < 4; r++) {
        assert_int_equal(topo_chip_of(t, r), r);
        assert_int_equal(topo_cluster_of(t, r), 0);
        assert_int_equal(out_degree(t, r), 3);
    }
    topo_free(t);

    t = load_ok("topologies/cs-cluster2.json");
    assert_int_equal(topo_chip_of(t, 1), 0);
    assert_int_equal(topo_cluster_of(t, 1), 1);
    assert_int_equal(topo_route_of(t, 1, 0).kind, ROUTE_LINK);
    topo_free(t);

    t = load_ok("topologies/ndv2-x2.json");     /* a GPU is its own chip */
    assert_int_equal(topo_chip_of(t, 9), 9);
    assert_int_equal(topo_cluster_of(t, 9), 0);
    assert_int_equal(topo_node_of(t, 9), 1);
    topo_free(t);
}

static void test_default(void **state)
{
    (void)state;
    topo *t = topo_default(4);
    assert_non_null(t);
    assert_string_equal(t->name, "default-all-to-all");
    assert_int_equal(t->is_default, 1);
    assert_int_equal(t->nranks, 4);
    assert_int_equal(t->nnodes, 1);
    assert_int_equal(t->nlinks, 12);
    assert_true(t->copy_gbps == 500 && t->reduce_gbps == 500);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            topo_route r = topo_route_of(t, a, b);
            assert_int_equal(r.kind, a == b ? ROUTE_SELF : ROUTE_LINK);
            if (a != b)
                assert_true(r.alpha_us == 0.7 && r.bw_gbps == 50 &&
                            t->links[r.link].mult == 1);
        }
    topo_free(t);
    t = topo_default(1);
    assert_non_null(t);
    assert_int_equal(t->nlinks, 0);
    topo_free(t);
    assert_null(topo_default(0));
    assert_null(topo_default(-3));
}

/* A struct built by hand (no private index): routes still work, the fastest
 * of parallel links wins, and topo_free releases it. */
static void test_hand_built(void **state)
{
    (void)state;
    topo *t = calloc(1, sizeof *t);
    t->name = strdup("hand");
    t->path = strdup("");
    t->nnodes = 1;
    t->ranks_per_node = t->nranks = 3;
    t->chips_per_node = 3;
    t->clusters_per_chip = 1;
    t->copy_gbps = t->reduce_gbps = 100;
    t->nlinks = 2;
    t->links = calloc(2, sizeof *t->links);
    t->links[0] = (topo_link){0, 1, 0.5, 10, 1};
    t->links[1] = (topo_link){0, 1, 1.0, 100, 1};   /* slower alpha, faster at 1 MB */
    t->nswitches = 1;
    t->switches = calloc(1, sizeof *t->switches);
    t->switches[0].nranks = 3;
    t->switches[0].ranks = malloc(3 * sizeof(int));
    for (int i = 0; i < 3; i++)
        t->switches[0].ranks[i] = i;
    t->switches[0].alpha_us = 0.3;
    t->switches[0].bw_gbps = 20;
    topo_route r = topo_route_of(t, 0, 1);
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_int_equal(r.link, 1);
    r = topo_route_of(t, 2, 0);
    assert_int_equal(r.kind, ROUTE_SWITCH);
    assert_int_equal(r.sw, 0);
    /* Written back with a placeholder source (parallel links cannot be
     * written: the format refuses a pair given twice). */
    t->nlinks = 1;
    char *js = topo_to_json(t);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"source\": \"assumed: not recorded"));
    assert_null(strstr(js, "\"arch\""));     /* calloc: TOPO_ARCH_UNKNOWN */
    tc_err e;
    topo *u = topo_parse(js, "hand.json", &e);
    if (!u)
        print_error("%s\n%s\n", e.msg, js);
    assert_non_null(u);
    assert_int_equal(u->nlinks, 1);
    assert_int_equal(topo_route_of(u, 1, 2).kind, ROUTE_SWITCH);
    free(js);
    topo_free(u);
    topo_free(t);
}

/* Figures written with units convert exactly to the model's µs and GB/s:
 * the same topology written both ways gives the same numbers. */
static void test_units(void **state)
{
    (void)state;
    tc_err e;
    const char *text =
        "{\"name\": \"u\", \"nodes\": 2, \"ranks_per_node\": 2, \"local\": {\"copy\": "
        "\"450 GB/s\", \"reduce\": \"2.4 Tb/s\", \"source\": \"s\"}, \"links\": [{\"pairs\": "
        "[[0, 1]], \"alpha\": \"700 ns\", \"bandwidth\": \"400Gb/s\", \"source\": \"s\"}], "
        "\"nics\": [{\"ranks\": [0, 1], \"alpha\": \"2.6 us\", \"bandwidth\": \"200 Gbps\", "
        "\"source\": \"s\"}]}";
    topo *t = topo_parse(text, "u.json", &e);
    if (!t)
        fail_msg("%s", e.msg);
    assert_true(t->copy_gbps == 450 && t->reduce_gbps == 300);
    assert_true(fabs(t->links[0].alpha_us - 0.7) < 1e-15 && t->links[0].bw_gbps == 50);
    assert_true(t->nics[0].alpha_us == 2.6 && t->nics[0].bw_gbps == 25);
    topo_free(t);
}

/* ------------------------------------------------------------ errors */

static void expect_error(const char *text, const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_parse(text, "t.json", &e);
    if (t || !strstr(e.msg, want))
        print_error("input: %s\nwant:  %s\ngot:   %s\n", text, want, e.msg);
    assert_null(t);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, want));
    assert_true(strncmp(e.msg, "t.json", 6) == 0);
}

#define LOCAL "\"local\": {\"copy_gbps\": 1, \"reduce_gbps\": 1, \"source\": \"assumed: t\"}"
#define HEAD(rpn) "{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": " #rpn ", " LOCAL
#define LINK01 "{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, \"bandwidth_gbps\": 50, \"source\": \"s\"}"
#define GPU_ARCH(a) HEAD(2) ", \"device\": {\"kind\": \"gpu\", \"arch\": " a "}}"

static void test_errors_fields(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        /* types and ranges of numbers */
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, "
                 "\"bandwidth_gbps\": \"fast\", \"source\": \"s\"}]}",
         "links[0].bandwidth_gbps: expected a number > 0, got \"fast\""},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, "
                 "\"bandwidth_gbps\": 0, \"source\": \"s\"}]}",
         "links[0].bandwidth_gbps: expected a number > 0, got 0"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, "
                 "\"bandwidth_gbps\": 1e400, \"source\": \"s\"}]}",
         "links[0].bandwidth_gbps: expected a number > 0, got 1e400 (out of range)"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": -1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].alpha_us: expected a number >= 0, got -1"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": null, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].alpha_us: expected a number >= 0, got null"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"bandwidth_gbps\": 5, "
                 "\"source\": \"s\"}]}",
         "links[0].alpha_us: missing: expected \"alpha_us\" (a number, microseconds) or \"alpha\""},
        /* figures with units */
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha\": 0.7, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].alpha: a bare number has no unit: write a string such as \"2.6 us\""},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, "
                 "\"bandwidth\": 200, \"source\": \"s\"}]}",
         "links[0].bandwidth: a bare number has no unit: write a string such as \"25 GB/s\" or "
         "\"200 Gb/s\", or use \"bandwidth_gbps\" (GB/s), got 200"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, \"alpha\": \"1 us\", "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].alpha: give alpha or alpha_us, not both"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha\": \"2.6 usec\", "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].alpha: expected a latency with its unit, such as \"2.6 us\" or \"700 ns\", got "
         "\"2.6 usec\""},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha\": \"1 us\", "
                 "\"bandwidth\": \"25 GB\", \"source\": \"s\"}]}",
         "links[0].bandwidth: expected a bandwidth with its unit"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha\": \"1 us\", "
                 "\"bandwidth\": \"0 GB/s\", \"source\": \"s\"}]}",
         "links[0].bandwidth: expected a bandwidth > 0, got \"0 GB/s\""},
        {"{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2, \"local\": "
         "{\"copy\": 450, \"reduce_gbps\": 1, \"source\": \"s\"}}",
         "local.copy: a bare number has no unit"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"multiplicity\": 0, \"source\": \"s\"}]}",
         "links[0].multiplicity: expected an integer in 1..65536, got 0"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"multiplicity\": 1.5, \"source\": \"s\"}]}",
         "links[0].multiplicity: expected an integer in 1..65536, got 1.5"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"bidirectional\": \"yes\", \"source\": \"s\"}]}",
         "links[0].bidirectional: expected true or false, got \"yes\""},
        {"{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 1e12, " LOCAL "}",
         "ranks_per_node: expected an integer in 1..65536, got 1e12 (too large)"},
        {"{\"name\": \"t\", \"nodes\": 0, \"ranks_per_node\": 2, " LOCAL "}",
         "nodes: expected an integer in 1..65536, got 0"},
        {"{\"name\": \"t\", \"nodes\": 2.5, \"ranks_per_node\": 2, " LOCAL "}",
         "nodes: expected an integer in 1..65536, got 2.5"},
        {"{\"name\": \"t\", \"nodes\": \"2\", \"ranks_per_node\": 2, " LOCAL "}",
         "nodes: expected an integer in 1..65536, got \"2\""},
        {"{\"name\": \"t\", \"nodes\": 300, \"ranks_per_node\": 300, " LOCAL "}",
         "nodes: nodes * ranks_per_node = 90000 ranks exceeds the limit of 65536"},
        {"{\"name\": \"t\", \"ranks_per_node\": 2, " LOCAL "}", "nodes: missing"},
        {"{\"nodes\": 1, \"ranks_per_node\": 2, " LOCAL "}", "name: missing"},
        {"{\"name\": \"\", \"nodes\": 1, \"ranks_per_node\": 2, " LOCAL "}",
         "name: expected a non-empty string"},
        {"{\"name\": 7, \"nodes\": 1, \"ranks_per_node\": 2, " LOCAL "}",
         "name: expected a string, got 7"},
        /* sources that are there must be text */
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": 5}]}",
         "links[0].source: expected a string, got 5"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"\"}]}",
         "links[0].source: expected a non-empty string"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"a\\u0001b\"}]}",
         "links[0].source: control character 0x01"},
        /* keys */
        {HEAD(2) ", \"nodez\": 1}", "nodez: unknown key (expected one of: name,"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwith_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].bandwith_gbps: unknown key (expected one of: pairs, alpha_us, "
         "bandwidth_gbps"},
        {HEAD(2) ", \"nodes\": 1}", "nodes: duplicate key"},
        {HEAD(2) ", \"notes\": 3}", "notes: expected a string or an array of strings, got 3"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\", \"notes\": [\"a\", 2]}]}",
         "links[0].notes[1]: expected a string, got 2"},
        /* structure */
        {"[1, 2]", "(top level): expected a JSON object, got an array"},
        {"\"topology\"", "(top level): expected a JSON object, got \"topology\""},
        {"{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2}", "local: missing"},
        {"{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2, \"local\": 5}",
         "local: expected an object, got 5"},
        {HEAD(2) ", \"links\": \"none\"}", "links: expected an array of link objects, got \"none\""},
        {HEAD(2) ", \"links\": [5]}", "links[0]: expected a link object, got 5"},
        {HEAD(2) ", \"links\": [{\"alpha_us\": 1, \"bandwidth_gbps\": 5, "
                 "\"source\": \"s\"}]}",
         "links[0].pairs: missing"},
        {HEAD(2) ", \"links\": [{\"pairs\": [], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs: expected a non-empty array"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs[0]: expected a pair [a, b] of local ranks, got an array"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[0, 2]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs[0][1]: expected a local rank (an integer in 0..1), got 2"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[-1, 0]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs[0][0]: expected a local rank (an integer in 0..1), got -1"},
        {HEAD(2) ", \"links\": [{\"pairs\": [[1, 1]], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs[0]: a link from local rank 1 to itself"},
        {HEAD(3) ", \"links\": [" LINK01 ", {\"pairs\": [[2, 0], [1, 0]], "
                 "\"alpha_us\": 1, \"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[1].pairs[1]: duplicate link 1 -> 0: already given by links[0].pairs[0]"},
        {HEAD(3) ", \"links\": [{\"pairs\": [[0, 1], [2, 1], [0, 1]], \"alpha_us\": 1, "
                 "\"bidirectional\": false, \"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "links[0].pairs[2]: duplicate link 0 -> 1: already given by links[0].pairs[0]"},
        {HEAD(4) ", \"switches\": [{\"ranks\": [0, 1, 1], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "switches[0].ranks[2]: local rank 1 listed twice in this switch"},
        {HEAD(4) ", \"switches\": [{\"ranks\": [3], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "switches[0].ranks: expected an array of at least 2 local ranks, got an array"},
        {HEAD(4) ", \"switches\": [{\"ranks\": [0, 4], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "switches[0].ranks[1]: expected a local rank (an integer in 0..3), got 4"},
        {HEAD(4) ", \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 1, "
                 "\"bandwidth_gbps\": 5, \"source\": \"s\"}, {\"ranks\": [2, 1], "
                 "\"alpha_us\": 1, \"bandwidth_gbps\": 5, \"source\": \"s\"}]}",
         "nics[1].ranks[1]: local rank 1 already belongs to nics[0]"},
        {"{\"name\": \"t\", \"nodes\": 2, \"ranks_per_node\": 2, " LOCAL "}",
         "nics: a topology of 2 nodes needs at least one NIC (none given)"},
        {"{\"name\": \"t\", \"nodes\": 3, \"ranks_per_node\": 2, " LOCAL ", \"nics\": []}",
         "nics: a topology of 3 nodes needs at least one NIC"},
        /* device */
        {"{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 6, " LOCAL
         ", \"device\": {\"kind\": \"chip\", \"chips_per_node\": 4, "
         "\"clusters_per_chip\": 2, \"source\": \"s\"}}",
         "ranks_per_node: expected device.chips_per_node * device.clusters_per_chip "
         "= 8 for a chip device, got 6"},
        {HEAD(2) ", \"device\": {\"kind\": \"tpu\"}}",
         "device.kind: expected \"gpu\" or \"chip\", got \"tpu\""},
        {HEAD(2) ", \"device\": {}}", "device.kind: missing"},
        {HEAD(2) ", \"device\": \"gpu\"}", "device: expected an object"},
        {HEAD(2) ", \"device\": {\"kind\": \"gpu\", \"chips_per_node\": 2}}",
         "device.chips_per_node: unknown key (expected one of: kind, arch, source, notes)"},
        {HEAD(2) ", \"device\": {\"kind\": \"chip\", \"chips_per_node\": 1, "
                 "\"clusters_per_chip\": 2, \"dma_bytes\": -256, \"source\": \"s\"}}",
         "device.dma_bytes: expected an integer in 0..1073741824, got -256"},
        {GPU_ARCH("\"pascal\""),
         "t.json:1: device.arch: expected one of \"volta\", \"ampere\", \"hopper\", "
         "\"blackwell\", got \"pascal\""},
        {HEAD(2) ", \"alpha_mode\": \"Delay\"}",
         "t.json:1: alpha_mode: expected \"hold\" or \"delay\", got \"Delay\""},
        {HEAD(2) ", \"alpha_mode\": 1}", "alpha_mode: expected \"hold\" or \"delay\", got 1"},
        {HEAD(2) ", \"alpha_mode\": null}", "alpha_mode: expected \"hold\" or \"delay\", got null"},
        {HEAD(2) ", \"arbitration\": \"fcfs\"}",
         "t.json:1: arbitration: expected \"ready\" or \"reserve\", got \"fcfs\""},
        {HEAD(2) ", \"arbitration\": true}", "arbitration: expected \"ready\" or \"reserve\", got true"},
        {GPU_ARCH("\"Volta\""), "device.arch: expected one of \"volta\", \"ampere\", "
                                "\"hopper\", \"blackwell\", got \"Volta\""},
        {GPU_ARCH("\"volta \""), "device.arch: expected one of"},
        {GPU_ARCH("\"unknown\""), "device.arch: expected one of"},
        {GPU_ARCH("\"\""), "device.arch: expected one of \"volta\", \"ampere\", "
                           "\"hopper\", \"blackwell\", got \"\""},
        {GPU_ARCH("70"), "device.arch: expected one of \"volta\", \"ampere\", "
                         "\"hopper\", \"blackwell\", got 70"},
        {GPU_ARCH("null"), "device.arch: expected one of \"volta\", \"ampere\", "
                           "\"hopper\", \"blackwell\", got null"},
        {GPU_ARCH("[\"volta\"]"), "device.arch: expected one of"},
        {GPU_ARCH("true"), "device.arch: expected one of"},
        {HEAD(2) ", \"device\": {\"kind\": \"gpu\", \"arch\": \"volta\", "
                 "\"arch\": \"hopper\"}}",
         "device.arch: duplicate key"},
        /* a chip device keeps its own keys: arch is not one of them */
        {HEAD(4) ", \"device\": {\"kind\": \"chip\", \"chips_per_node\": 2, "
                 "\"clusters_per_chip\": 2, \"arch\": \"volta\", \"source\": \"s\"}}",
         "device.arch: unknown key (expected one of: kind, chips_per_node, "
         "clusters_per_chip, dma_bytes, source, notes)"},
        {HEAD(2) ", \"is_default\": 1}", "is_default: expected true or false, got 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(cases[i].text, cases[i].want);
}

static void test_errors_text(void **state)
{
    (void)state;
    expect_error("", "t.json: empty file");
    expect_error(" \n\t\n", "t.json: empty file");
    expect_error("{\"name\": \"a\xff\"}", "t.json:1:12: not valid UTF-8 (byte 0xff)");
    expect_error("{\n\"name\": \"\xc0\xaf\"}", "t.json:2:10: not valid UTF-8");  /* overlong */
    expect_error("{\"name\": \"\xed\xa0\x80\"}", "not valid UTF-8");            /* surrogate */
    expect_error("{\"name\": \"\xe2\x82\"}", "not valid UTF-8");                /* truncated */
    expect_error("{\n  \"name\": \"t\",\n  \"nodes\": 1,,\n}", "t.json:3:");
    expect_error("{\n  \"name\": \"t\",\n  \"nodes\": 1,,\n}", "t.json:3:14: JSON syntax error near '\"nodes\": 1,,'");
    expect_error("{\"nodes\": NaN}", "t.json:1:11: JSON syntax error near '{\"nodes\": NaN}' (in nodes)");
    /* Figures a machine cannot have: times would overflow, solvers fail. */
    expect_error("{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2,\n"
                 " \"local\": {\"copy_gbps\": 1e-300, \"reduce_gbps\": 1, \"source\": \"s\"}}",
                 "t.json:2: local.copy_gbps: expected a bandwidth in 1e-06..1e+06 GB/s, got 1e-300");
    expect_error("{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2,\n  " LOCAL ",\n"
                 " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1e7, \"bandwidth_gbps\": 5, "
                 "\"source\": \"s\"}]}",
                 "t.json:3: links[0].alpha_us: expected a latency in 0..1e+06 us, got 1e7");
    expect_error("{\"nodes\": 1} trailing", "t.json:1:");
    expect_error("{\"name\": \"t\"", "JSON syntax error");
    /* Placed on the right line even though the key recurs in every entry. */
    expect_error("{\n"
                 "  \"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 3,\n"
                 "  " LOCAL ",\n"
                 "  \"links\": [\n"
                 "    {\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 5, \"source\": \"s\"},\n"
                 "    {\"pairs\": [[1, 2]], \"alpha_us\": 1,\n"
                 "     \"bandwidth_gbps\": -5, \"source\": \"s\"}\n"
                 "  ]\n"
                 "}\n",
                 "t.json:7: links[1].bandwidth_gbps: expected a number > 0, got -5");
    /* A missing key is placed on the line of the object lacking it. */
    expect_error("{\n"
                 "  \"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 3,\n"
                 "  " LOCAL ",\n"
                 "  \"links\": [\n"
                 "    {\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 5, \"source\": \"s\"},\n"
                 "    {\"pairs\": [[1, 2]], \"alpha_us\": 1,\n"
                 "     \"source\": \"s\"}\n"
                 "  ]\n"
                 "}\n",
                 "t.json:6: links[1].bandwidth_gbps: missing");
    /* device.arch is placed on its own line. */
    expect_error("{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2,\n  " LOCAL ",\n"
                 "  \"device\": {\n    \"kind\": \"gpu\",\n    \"arch\": \"kepler\"\n  }\n}",
                 "t.json:5: device.arch: expected one of \"volta\", \"ampere\", \"hopper\", "
                 "\"blackwell\", got \"kepler\"");
    /* A repeated key is placed on its second occurrence. */
    expect_error("{\"name\": \"t\",\n \"nodes\": 1,\n \"ranks_per_node\": 2,\n \"nodes\": 2}",
                 "t.json:4: nodes: duplicate key");
    tc_err e;
    assert_null(topo_parse(NULL, "x", &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_null(topo_parse("", NULL, NULL));    /* NULL err is allowed */
}

static void expect_file_error(const char *path, const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_load(path, &e);
    if (t || !strstr(e.msg, want))
        print_error("file: %s\nwant: %s\ngot:  %s\n", path, want, e.msg);
    assert_null(t);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, want));
}

static void test_error_files(void **state)
{
    (void)state;
    expect_file_error("tests/data/topo_bad/no-such-file.json",
                      "tests/data/topo_bad/no-such-file.json: cannot open: ");
    expect_file_error("tests/data/topo_bad", "tests/data/topo_bad: is a directory");
    expect_file_error("tests/data/topo_bad/empty.json",
                      "tests/data/topo_bad/empty.json: empty file");
    expect_file_error("tests/data/topo_bad/not-utf8.json",
                      "tests/data/topo_bad/not-utf8.json:2:15: not valid UTF-8 (byte 0xe9)");
    expect_file_error("tests/data/topo_bad/nul-byte.json",
                      "tests/data/topo_bad/nul-byte.json:3:14: contains a NUL byte");
    expect_file_error("tests/data/topo_bad/bad-bandwidth.json",
                      "tests/data/topo_bad/bad-bandwidth.json:12: "
                      "links[2].bandwidth_gbps: expected a number > 0, got \"fast\"");
    expect_file_error("tests/data/topo_bad/typo.json",
                      "tests/data/topo_bad/typo.json:8: links[0].bandwith_gbps: "
                      "unknown key");
    expect_file_error("tests/data/topo_bad/syntax.json",
                      "tests/data/topo_bad/syntax.json:5:");
}

/* Figures without a source load, each with a warning naming file, line and
 * field (the CLIs print them; --strict refuses); every bundled topology has
 * its sources. */
static void expect_warnings(const char *text, int n, const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_parse(text, "t.json", &e);
    if (!t)
        fail_msg("%s", e.msg);
    if (topo_warnings(t) != n || !strstr(topo_warning(t, 0), want))
        fail_msg("want %d warnings, the first with: %s\ngot %d: %s", n, want, topo_warnings(t),
                 topo_warning(t, 0) ? topo_warning(t, 0) : "(none)");
    assert_null(topo_warning(t, n));
    topo_free(t);
}

static void test_warnings(void **state)
{
    (void)state;
    expect_warnings(HEAD(2) ", \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, "
                            "\"bandwidth_gbps\": 5}]}",
                    1, "t.json:1: links[0].source: missing: these figures do not say where they "
                       "come from");
    expect_warnings("{\"name\": \"t\", \"nodes\": 1, \"ranks_per_node\": 2, \"local\": "
                    "{\"copy_gbps\": 1, \"reduce_gbps\": 1}}",
                    1, "local.source: missing");
    expect_warnings(HEAD(4) ", \"switches\": [{\"ranks\": [0, 1], \"alpha_us\": 1, "
                            "\"bandwidth_gbps\": 5}, {\"ranks\": [2, 3], \"alpha_us\": 1, "
                            "\"bandwidth_gbps\": 5}]}",
                    2, "switches[0].source: missing");
    expect_warnings(HEAD(4) ", \"device\": {\"kind\": \"chip\", \"chips_per_node\": 2, "
                            "\"clusters_per_chip\": 2}}",
                    1, "device.source: missing");
    tc_err e;
    topo *t = topo_load("tests/data/topo_unsourced.json", &e);
    assert_non_null(t);
    assert_int_equal(topo_warnings(t), 1);
    assert_non_null(strstr(topo_warning(t, 0), "tests/data/topo_unsourced.json:7: nics[0].source: "
                                                "missing"));
    topo_free(t);
    static const char *const bundled[] = {
        "cs-chip4", "cs-chip4x2", "cs-cluster2", "dgx1", "dgx2-x1", "dgx2-x2", "mesh-2d-8x8",
        "ndv2-x1", "ndv2-x2", "ndv2-x4", "torus-2d-32x32", "torus-2d-4x4", "torus-2d-8x8",
        "torus-3d-4x4x4", "dgx-a100-x1", "dgx-a100-x2", "dgx-a100-x4", "dgx-h100-x1",
        "dgx-h100-x2", "dgx-h100-x4", "ndv4-x1", "ndv4-x2", "ndv4-x4", "ndv5-x1", "ndv5-x2",
        "ndv5-x4"};
    for (size_t i = 0; i < sizeof bundled / sizeof bundled[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.json", bundled[i]);
        t = topo_load(path, &e);
        assert_non_null(t);
        if (topo_warnings(t))
            fail_msg("%s", topo_warning(t, 0));
        topo_free(t);
    }
}

/* ------------------------------------------------------------ round trip */

static void assert_topo_equal(const topo *a, const topo *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->nnodes, b->nnodes);
    assert_int_equal(a->ranks_per_node, b->ranks_per_node);
    assert_int_equal(a->nranks, b->nranks);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->arch, b->arch);
    assert_int_equal(a->chips_per_node, b->chips_per_node);
    assert_int_equal(a->clusters_per_chip, b->clusters_per_chip);
    assert_int_equal(a->dma_bytes, b->dma_bytes);
    assert_true(a->copy_gbps == b->copy_gbps);
    assert_true(a->reduce_gbps == b->reduce_gbps);
    assert_int_equal(a->is_default, b->is_default);
    assert_int_equal(a->alpha_delay, b->alpha_delay);
    assert_memory_equal(&a->collnet, &b->collnet, sizeof a->collnet);
    assert_int_equal(a->nlinks, b->nlinks);
    for (int i = 0; i < a->nlinks; i++) {
        assert_int_equal(a->links[i].src, b->links[i].src);
        assert_int_equal(a->links[i].dst, b->links[i].dst);
        assert_true(a->links[i].alpha_us == b->links[i].alpha_us);
        assert_true(a->links[i].bw_gbps == b->links[i].bw_gbps);
        assert_int_equal(a->links[i].mult, b->links[i].mult);
    }
    assert_int_equal(a->nswitches, b->nswitches);
    for (int i = 0; i < a->nswitches; i++) {
        assert_int_equal(a->switches[i].nranks, b->switches[i].nranks);
        assert_memory_equal(a->switches[i].ranks, b->switches[i].ranks,
                            (size_t)a->switches[i].nranks * sizeof(int));
        assert_true(a->switches[i].alpha_us == b->switches[i].alpha_us);
        assert_true(a->switches[i].bw_gbps == b->switches[i].bw_gbps);
    }
    assert_int_equal(a->nnics, b->nnics);
    for (int i = 0; i < a->nnics; i++) {
        assert_int_equal(a->nics[i].node, b->nics[i].node);
        assert_int_equal(a->nics[i].nranks, b->nics[i].nranks);
        assert_memory_equal(a->nics[i].ranks, b->nics[i].ranks,
                            (size_t)a->nics[i].nranks * sizeof(int));
        assert_true(a->nics[i].alpha_us == b->nics[i].alpha_us);
        assert_true(a->nics[i].bw_gbps == b->nics[i].bw_gbps);
    }
    assert_memory_equal(a->nic_of_rank, b->nic_of_rank,
                        (size_t)a->nranks * sizeof(int));
}

static void round_trip(const topo *t)
{
    char *js = topo_to_json(t);
    assert_non_null(js);
    tc_err e;
    tc_err_clear(&e);
    topo *u = topo_parse(js, "round-trip.json", &e);
    if (!u)
        print_error("%s\n%s\n", e.msg, js);
    assert_non_null(u);
    assert_topo_equal(t, u);
    char *js2 = topo_to_json(u);
    assert_string_equal(js, js2);       /* sources and notes survive too */
    free(js);
    free(js2);
    topo_free(u);
}

/* "collnet": the network reduces (NCCL's CollNet); read, written back,
 * and refused on a chip device or with an unknown reduction. */
static void test_collnet(void **state)
{
    (void)state;
    const char *good =
        "{\"name\": \"c\", \"nodes\": 2, \"ranks_per_node\": 2,\n"
        " \"collnet\": {\"reductions\": [\"sum\", \"max\"], \"dtypes\": [\"f32\", \"bf16\"],\n"
        "             \"reducescatter\": true, \"source\": \"SHARP\"},\n"
        " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 50, \"source\": \"a\"},\n"
        " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 10,\n"
        "             \"source\": \"a\"}],\n"
        " \"nics\": [{\"ranks\": [0, 1], \"alpha_us\": 2, \"bandwidth_gbps\": 5,\n"
        "            \"source\": \"a\"}]}";
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_parse(good, "c.json", &e);
    if (!t)
        print_error("%s\n", e.msg);
    assert_non_null(t);
    assert_int_equal(t->collnet.on, 1);
    assert_int_equal(t->collnet.redops, 1u << RED_SUM | 1u << RED_MAX);
    assert_int_equal(t->collnet.dtypes, 1u << DT_F32 | 1u << DT_BF16);
    assert_int_equal(t->collnet.allgather, 0);
    assert_int_equal(t->collnet.reducescatter, 1);
    round_trip(t);
    char *js = topo_to_json(t);
    assert_non_null(strstr(js, "\"collnet\": {\"reductions\": [\"sum\", \"max\"]"));
    assert_non_null(strstr(js, "\"source\": \"SHARP\""));
    free(js);
    topo_free(t);
    /* absent: off, and not written */
    topo *d = load_ok(BUNDLED[0]);
    assert_int_equal(d->collnet.on, 0);
    js = topo_to_json(d);
    assert_null(strstr(js, "collnet"));
    free(js);
    topo_free(d);
    char *bad = xstrdup(good);
    memcpy(strstr(bad, "\"max\""), "\"min\"", 5);
    assert_null(topo_parse(bad, "c.json", &e));
    assert_non_null(strstr(e.msg, "c.json:2: collnet.reductions[1]"));
    free(bad);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < NBUNDLED; i++) {
        topo *t = load_ok(BUNDLED[i]);
        round_trip(t);
        char *js = topo_to_json(t);
        assert_non_null(strstr(js, "\"source\": \""));
        if (strstr(BUNDLED[i], "ndv2"))
            assert_non_null(strstr(js, "TE-CCL teccl/topologies/ndv2.py"));
        free(js);
        topo_free(t);
    }
    topo *d = topo_default(5);
    round_trip(d);
    topo_free(d);
    /* notes in every object, escapes in strings, non-ASCII text */
    const char *txt =
        "{\"name\": \"n\\\"q\", \"notes\": [\"top\", \"caf\xc3\xa9\"], "
        "\"description\": \"tab\\there\", \"nodes\": 2, \"ranks_per_node\": 4,"
        "\"device\": {\"kind\": \"chip\", \"chips_per_node\": 2, "
        "\"clusters_per_chip\": 2, \"source\": \"s\", \"notes\": \"d\"},"
        "\"local\": {\"copy_gbps\": 0.1, \"reduce_gbps\": 3e-6, \"source\": \"s\", "
        "\"notes\": \"l\"},"
        "\"links\": [{\"pairs\": [[0, 1], [2, 3]], \"alpha_us\": 0, "
        "\"bandwidth_gbps\": 33.333333333333336, \"multiplicity\": 3, "
        "\"source\": \"a\", \"notes\": \"x\"},"
        "{\"pairs\": [[1, 2]], \"alpha_us\": 0, \"bandwidth_gbps\": 33.333333333333336, "
        "\"multiplicity\": 3, \"source\": \"b\", \"bidirectional\": false}],"
        "\"switches\": [{\"ranks\": [3, 0, 2], \"alpha_us\": 1, "
        "\"bandwidth_gbps\": 9, \"source\": \"s\", \"notes\": [\"sw\"]}],"
        "\"nics\": [{\"ranks\": [1], \"alpha_us\": 2, \"bandwidth_gbps\": 4, "
        "\"source\": \"n\"}, {\"ranks\": [3, 0], \"alpha_us\": 3, "
        "\"bandwidth_gbps\": 5, \"source\": \"n\", \"notes\": \"m\"}]}";
    tc_err e;
    topo *t = topo_parse(txt, "notes.json", &e);
    if (!t)
        print_error("%s\n", e.msg);
    assert_non_null(t);
    assert_int_equal(t->nlinks, 2 * 5);
    assert_int_equal(t->links[5].src, 4);   /* node 1 starts at rank 4 */
    assert_int_equal(t->links[5].dst, 5);
    assert_int_equal(t->links[1].src, 1);   /* the reverse of [0, 1] */
    assert_int_equal(t->links[1].dst, 0);
    assert_int_equal(t->nic_of_rank[2], -1);
    /* Different figures: NIC route takes the larger alpha, smaller bandwidth. */
    topo_route r = topo_route_of(t, 1, 7);
    assert_int_equal(r.kind, ROUTE_NIC);
    assert_true(r.alpha_us == 3 && r.bw_gbps == 4);
    assert_int_equal(topo_route_of(t, 2, 6).kind, ROUTE_NONE); /* rank 2 has no NIC */
    r = topo_route_of(t, 4, 7);
    assert_int_equal(r.kind, ROUTE_SWITCH);
    assert_int_equal(r.sw, 1);
    round_trip(t);
    char *js = topo_to_json(t);
    assert_non_null(strstr(js, "\"notes\": [\"top\",\"caf\xc3\xa9\"]"));
    assert_non_null(strstr(js, "\"name\": \"n\\\"q\""));
    free(js);
    topo_free(t);
}

/* ------------------------------------------------------------ device.arch */

/* The GPU generation: each name parses to its value and writes back after
 * "kind"; absent is unknown and writes nothing; it costs nothing. */
static void test_arch(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        topo_arch arch;
        const char *name;
    } cases[] = {
        {GPU_ARCH("\"volta\""), TOPO_ARCH_VOLTA, "volta"},
        {GPU_ARCH("\"ampere\""), TOPO_ARCH_AMPERE, "ampere"},
        {GPU_ARCH("\"hopper\""), TOPO_ARCH_HOPPER, "hopper"},
        {GPU_ARCH("\"blackwell\""), TOPO_ARCH_BLACKWELL, "blackwell"},
    };
    tc_err e;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        topo *t = topo_parse(cases[i].text, "t.json", &e);
        if (!t)
            fail_msg("%s", e.msg);
        assert_int_equal(t->kind, TOPO_GPU);
        assert_int_equal(t->arch, cases[i].arch);
        assert_string_equal(topo_arch_name(t->arch), cases[i].name);
        assert_int_equal(topo_warnings(t), 0);
        char *js = topo_to_json(t);
        char want[64];
        snprintf(want, sizeof want, "\"device\": {\"kind\": \"gpu\", \"arch\": \"%s\"}",
                 cases[i].name);
        if (!strstr(js, want))
            fail_msg("want %s in:\n%s", want, js);
        free(js);
        round_trip(t);      /* arch survives load -> write -> load */
        topo_free(t);
    }
    assert_string_equal(topo_arch_name(TOPO_ARCH_UNKNOWN), "unknown");
    assert_string_equal(topo_arch_name((topo_arch)99), "unknown");
    assert_string_equal(topo_arch_name((topo_arch)-1), "unknown");

    /* Absent, with or without a device object: unknown, and not written. */
    static const char *const absent[] = {
        HEAD(2) "}",
        HEAD(2) ", \"device\": {\"kind\": \"gpu\"}}",
        HEAD(2) ", \"device\": {\"kind\": \"gpu\", \"source\": \"s\"}}",
        HEAD(4) ", \"device\": {\"kind\": \"chip\", \"chips_per_node\": 2, "
                "\"clusters_per_chip\": 2, \"source\": \"s\"}}",
    };
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        topo *t = topo_parse(absent[i], "t.json", &e);
        if (!t)
            fail_msg("%s", e.msg);
        assert_int_equal(t->arch, TOPO_ARCH_UNKNOWN);
        char *js = topo_to_json(t);
        assert_null(strstr(js, "\"arch\""));
        free(js);
        round_trip(t);
        topo_free(t);
    }
    topo *d = topo_default(3);
    assert_int_equal(d->arch, TOPO_ARCH_UNKNOWN);
    topo_free(d);

    /* Another device.source and notes beside it stay where they were. */
    topo *t = topo_parse(HEAD(2) ", \"device\": {\"notes\": \"n\", \"arch\": \"hopper\", "
                                 "\"source\": \"H100 (Hopper, sm_90)\", \"kind\": \"gpu\"}}",
                         "t.json", &e);
    if (!t)
        fail_msg("%s", e.msg);
    assert_int_equal(t->arch, TOPO_ARCH_HOPPER);
    char *js = topo_to_json(t);
    assert_non_null(strstr(js, "\"device\": {\"kind\": \"gpu\", \"arch\": \"hopper\", "
                               "\"source\": \"H100 (Hopper, sm_90)\", \"notes\": \"n\"}"));
    free(js);
    round_trip(t);
    topo_free(t);

    /* The same machine with and without arch: every hop costs the same. */
    static const char key[] = ", \"arch\": \"volta\"";
    topo *a = load_ok("topologies/ndv2-x2.json");
    js = topo_to_json(a);
    char *at = strstr(js, key);
    assert_non_null(at);
    memmove(at, at + strlen(key), strlen(at + strlen(key)) + 1);
    topo *b = topo_parse(js, "no-arch.json", &e);
    if (!b)
        fail_msg("%s", e.msg);
    free(js);
    assert_int_equal(a->arch, TOPO_ARCH_VOLTA);
    assert_int_equal(b->arch, TOPO_ARCH_UNKNOWN);
    b->arch = a->arch;
    assert_topo_equal(a, b);
    topo_free(a);
    topo_free(b);
}

/* ------------------------------------------------------------ alpha_mode, arbitration */

/* A top-level choice of two words: the second sets the field (read by
 * `get`) and is written back; the first and absence are the default and
 * write nothing; the choice survives load -> write -> load and a copy of
 * one node, and changes no hop's figures. */
static void check_choice(const char *key, const char *dflt, const char *other,
                         int (*get)(const topo *))
{
    char text[3][512];
    snprintf(text[0], sizeof text[0], HEAD(2) ", \"%s\": \"%s\", \"links\": [" LINK01 "]}",
             key, other);
    snprintf(text[1], sizeof text[1], HEAD(2) ", \"%s\": \"%s\", \"links\": [" LINK01 "]}",
             key, dflt);
    snprintf(text[2], sizeof text[2], HEAD(2) ", \"links\": [" LINK01 "]}");
    char written[128];
    snprintf(written, sizeof written, "\"%s\": \"%s\"", key, other);
    tc_err e;
    for (int i = 0; i < 3; i++) {
        int set = i == 0;
        topo *t = topo_parse(text[i], "t.json", &e);
        if (!t)
            fail_msg("%s", e.msg);
        assert_int_equal(get(t), set);
        char *js = topo_to_json(t);
        if (set)
            assert_non_null(strstr(js, written));
        else
            assert_null(strstr(js, key));
        free(js);
        round_trip(t);
        topo_route r = topo_route_of(t, 0, 1);
        assert_true(r.alpha_us == 0.7 && r.bw_gbps == 50);
        topo *one = topo_one_node(t, &e);
        if (!one)
            fail_msg("%s", e.msg);
        assert_int_equal(get(one), set);
        topo_free(one);
        topo_free(t);
    }
}

static int alpha_delay_of(const topo *t) { return t->alpha_delay; }
static int arb_reserve_of(const topo *t) { return t->arb_reserve; }

/* "alpha_mode": "delay" sets alpha_delay; "hold" is the default. */
static void test_alpha_mode(void **state)
{
    (void)state;
    check_choice("alpha_mode", "hold", "delay", alpha_delay_of);
}

/* "arbitration": "reserve" sets arb_reserve; "ready" is the default. */
static void test_arbitration(void **state)
{
    (void)state;
    check_choice("arbitration", "ready", "reserve", arb_reserve_of);
}

static int rails_of(const topo *t) { return t->rails; }

/* "fabric": "rails" sets rails; "fat-tree" is the default.  On rails a NIC
 * reaches the other node's NIC of its own index only; on fat-tree any. */
static void test_fabric(void **state)
{
    (void)state;
    check_choice("fabric", "fat-tree", "rails", rails_of);
    const char *two_rails =
        "{\"name\": \"r\", \"nodes\": 2, \"ranks_per_node\": 2, \"fabric\": \"%s\", "
        "\"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"t\"}, "
        "\"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 0.7, \"bandwidth_gbps\": 50, "
        "\"source\": \"t\"}], \"nics\": [{\"ranks\": [0], \"alpha_us\": 2, "
        "\"bandwidth_gbps\": 25, \"source\": \"t\"}, {\"ranks\": [1], \"alpha_us\": 2, "
        "\"bandwidth_gbps\": 25, \"source\": \"t\"}]}";
    char text[1024];
    tc_err e;
    for (int rails = 0; rails < 2; rails++) {
        snprintf(text, sizeof text, two_rails, rails ? "rails" : "fat-tree");
        topo *t = topo_parse(text, "r.json", &e);
        if (!t)
            fail_msg("%s", e.msg);
        assert_int_equal(topo_route_of(t, 0, 2).kind, ROUTE_NIC);    /* rail 0 to rail 0 */
        assert_int_equal(topo_route_of(t, 1, 3).kind, ROUTE_NIC);
        assert_int_equal(topo_route_of(t, 0, 3).kind, rails ? ROUTE_NONE : ROUTE_NIC);
        assert_int_equal(topo_route_of(t, 3, 0).kind, rails ? ROUTE_NONE : ROUTE_NIC);
        assert_int_equal(topo_route_of(t, 0, 1).kind, ROUTE_LINK);
        topo_free(t);
    }
}

/* Every bundled machine names its generation, or none when it is no GPU
 * of a known one. */
static void test_bundled_arch(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        topo_arch arch;
    } want[] = {
        {"dgx1", TOPO_ARCH_VOLTA},          {"dgx2-x1", TOPO_ARCH_VOLTA},
        {"dgx2-x2", TOPO_ARCH_VOLTA},       {"ndv2-x1", TOPO_ARCH_VOLTA},
        {"ndv2-x2", TOPO_ARCH_VOLTA},       {"ndv2-x4", TOPO_ARCH_VOLTA},
        {"dgx-a100-x1", TOPO_ARCH_AMPERE},  {"dgx-a100-x2", TOPO_ARCH_AMPERE},
        {"dgx-a100-x4", TOPO_ARCH_AMPERE},  {"ndv4-x1", TOPO_ARCH_AMPERE},
        {"ndv4-x2", TOPO_ARCH_AMPERE},      {"ndv4-x4", TOPO_ARCH_AMPERE},
        {"dgx-h100-x1", TOPO_ARCH_HOPPER},  {"dgx-h100-x2", TOPO_ARCH_HOPPER},
        {"dgx-h100-x4", TOPO_ARCH_HOPPER},  {"ndv5-x1", TOPO_ARCH_HOPPER},
        {"ndv5-x2", TOPO_ARCH_HOPPER},      {"ndv5-x4", TOPO_ARCH_HOPPER},
        {"torus-2d-4x4", TOPO_ARCH_UNKNOWN}, {"torus-2d-8x8", TOPO_ARCH_UNKNOWN},
        {"torus-2d-32x32", TOPO_ARCH_UNKNOWN}, {"torus-3d-4x4x4", TOPO_ARCH_UNKNOWN},
        {"mesh-2d-8x8", TOPO_ARCH_UNKNOWN}, {"cs-chip4", TOPO_ARCH_UNKNOWN},
        {"cs-chip4x2", TOPO_ARCH_UNKNOWN},  {"cs-cluster2", TOPO_ARCH_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.json", want[i].name);
        topo *t = load_ok(path);
        if (t->arch != want[i].arch)
            fail_msg("%s: arch %s, want %s", path, topo_arch_name(t->arch),
                     topo_arch_name(want[i].arch));
        topo_free(t);
    }
}

/* A 32x32 torus (1024 ranks): the index answers every pair correctly. */
static void test_large_torus_index(void **state)
{
    (void)state;
    enum { W = 32, N = W * W };
    size_t cap = 64 * N + 1024, n = 0;
    char *txt = malloc(cap);
    n += (size_t)snprintf(txt + n, cap - n,
                          "{\"name\": \"t32\", \"nodes\": 1, \"ranks_per_node\": %d, "
                          LOCAL ", \"links\": [{\"alpha_us\": 0.5, "
                          "\"bandwidth_gbps\": 53.6870912, \"source\": \"s\", "
                          "\"pairs\": [", N);
    for (int r = 0; r < N; r++) {
        int x = r % W, y = r / W;
        n += (size_t)snprintf(txt + n, cap - n, "%s[%d, %d], [%d, %d]",
                              r ? ", " : "", r, y * W + (x + 1) % W, r,
                              ((y + 1) % W) * W + x);
    }
    snprintf(txt + n, cap - n, "]}]}");
    tc_err e;
    topo *t = topo_parse(txt, "t32.json", &e);
    free(txt);
    if (!t)
        print_error("%s\n", e.msg);
    assert_non_null(t);
    assert_int_equal(t->nlinks, 4 * N);
    long links = 0;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            topo_route r = topo_route_of(t, a, b);
            int dx = abs(a % W - b % W), dy = abs(a / W - b / W);
            int adj = (dy == 0 && (dx == 1 || dx == W - 1)) ||
                      (dx == 0 && (dy == 1 || dy == W - 1));
            if (a == b) {
                assert_int_equal(r.kind, ROUTE_SELF);
            } else if (adj) {
                assert_int_equal(r.kind, ROUTE_LINK);
                assert_int_equal(t->links[r.link].src, a);
                assert_int_equal(t->links[r.link].dst, b);
                links++;
            } else {
                assert_int_equal(r.kind, ROUTE_NONE);
            }
        }
    assert_int_equal(links, 4 * N);
    topo_free(t);
}

/* ------------------------------------------------------------ variants */

/* The model variants' topologies (model/variant.h): ports turns DGX-2's
 * switch into a link per ordered pair at its figures, nodes and NICs as
 * they were; rt-lat takes the runtime's latency away where the topology
 * has it and sets NCCL's where it has none; delay only the mode; the
 * timing-only rows change no topology. */
static void test_variants(void **state)
{
    (void)state;
    topo *t = load_ok("topologies/dgx2-x2.json");
    topo *v;
    tc_err e;
    assert_int_equal(variant_topo(t, VAR_PORTS, &v, &e), TC_OK);
    assert_non_null(v);
    assert_int_equal(v->nswitches, 0);
    assert_int_equal(v->nlinks, 2 * 16 * 15);
    assert_int_equal(v->nnics, t->nnics);
    topo_route r = topo_route_of(v, 3, 7);
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_near(r.alpha_us, 0.35, 1e-12);
    assert_near(r.bw_gbps, 125, 1e-12);
    assert_int_equal(topo_route_of(v, 3, 19).kind, ROUTE_NIC);
    topo_free(v);
    assert_int_equal(t->rt_latency, TOPO_RTLAT_NCCL);
    assert_int_equal(variant_topo(t, VAR_RTLAT, &v, &e), TC_OK);
    assert_int_equal(v->rt_latency, TOPO_RTLAT_NONE);
    assert_int_equal(v->alpha_delay, 0);
    assert_near(topo_route_of(v, 3, 7).alpha_us, 0.35, 1e-12);
    assert_near(topo_route_of(v, 3, 7).lat_us, 0, 0);
    topo *w;                                /* and back: NCCL's where it has none */
    assert_int_equal(variant_topo(v, VAR_RTLAT, &w, &e), TC_OK);
    assert_int_equal(w->rt_latency, TOPO_RTLAT_NCCL);
    assert_near(topo_route_of(w, 3, 19).lat_us, 14.0, 0);
    topo_free(w);
    topo_free(v);
    assert_int_equal(variant_topo(t, VAR_DELAY, &v, &e), TC_OK);
    assert_int_equal(v->alpha_delay, 1);
    assert_near(topo_route_of(v, 3, 7).alpha_us, 0.35, 1e-12);
    topo_free(v);
    assert_int_equal(variant_topo(t, VAR_PASSES, &v, &e), TC_OK);
    assert_null(v);
    assert_int_equal(variant_applies(t, VAR_PORTS), 1);
    assert_int_equal(variant_applies(t, VAR_RTLAT), 1);
    topo_free(t);
    t = load_ok("topologies/ndv2-x1.json");
    assert_int_equal(variant_applies(t, VAR_PORTS), 0);
    topo_free(t);
    t = load_ok("topologies/cs-chip4.json");
    assert_int_equal(variant_applies(t, VAR_PASSES), 0);
    assert_int_equal(variant_applies(t, VAR_RTLAT), 0);
    topo_free(t);
    /* a ratio's range: the default's in it, a variant timed on one side only
     * left out, and one pass (10x here), which no MSCCL runtime performs, too */
    variant_times ref = {{10, 40, 4, -1, 20}}, sch = {{5, 4, 4, 3, -1}};
    double lo, hi;
    assert_int_equal(variant_judges(VAR_PASSES), !VARIANT_DEFAULT_TILES);
    assert_int_equal(variant_ratio_range(&ref, &sch, &lo, &hi), 2);
    assert_near(lo, 1.0, 1e-12);
    assert_near(hi, 2.0, 1e-12);
    sch.us[VAR_DEFAULT] = -1;
    assert_int_equal(variant_ratio_range(&ref, &sch, &lo, &hi), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_shapes),
        cmocka_unit_test(test_ndv2_cube_mesh),
        cmocka_unit_test(test_dgx2_switch_and_nics),
        cmocka_unit_test(test_dgx1_and_torus),
        cmocka_unit_test(test_chip_and_cluster_indices),
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_hand_built),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_errors_fields),
        cmocka_unit_test(test_errors_text),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_error_files),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_collnet),
        cmocka_unit_test(test_arch),
        cmocka_unit_test(test_bundled_arch),
        cmocka_unit_test(test_alpha_mode),
        cmocka_unit_test(test_arbitration),
        cmocka_unit_test(test_fabric),
        cmocka_unit_test(test_large_torus_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
