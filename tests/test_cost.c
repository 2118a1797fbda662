/* test_cost.c — the cost model: hop and local costs, the resources a hop
 * holds and their numbering, and the lane pool's first-come-first-served
 * rule.  Runs from the repository root (bundled topologies). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/topo.h"

static topo *load(const char *path)
{
    tc_err e;
    topo *t = topo_load(path, &e);
    if (!t)
        fail_msg("cannot load %s: %s", path, e.msg);
    return t;
}

static void assert_near(double a, double b, double tol)
{
    if (!(fabs(a - b) <= tol))
        fail_msg("%.12g is not within %g of %.12g", a, tol, b);
}

static void test_hop_cost(void **state)
{
    (void)state;
    topo *t = load("topologies/ndv2-x2.json");
    t->rt_latency = TOPO_RTLAT_NONE;            /* the hops' figures alone */
    topo_route r = topo_route_of(t, 0, 1);
    assert_near(cost_hop_us(&r, 1e6), 0.7 + 20.0, 1e-12);
    assert_near(cost_hop_us(&r, 0), 0.7, 1e-15);
    assert_near(cost_hold_us(t, &r, 1e6), 0.7 + 20.0, 1e-12);
    assert_false(cost_delayed(t, &r));
    assert_near(cost_call_us(t, COST_SIMPLE), 0, 0);
    r = topo_route_of(t, 2, 9);                 /* NIC: 1 MiB at 12.5 GB/s */
    assert_near(cost_hop_us(&r, 1048576), 1.3 + 83.88608, 1e-9);
    r = topo_route_of(t, 4, 4);                 /* a copy at 450 GB/s */
    assert_near(cost_hop_us(&r, 450000), 1.0, 1e-12);
    r = topo_route_of(t, 0, 7);
    assert_int_equal(r.kind, ROUTE_NONE);
    assert_true(isinf(cost_hop_us(&r, 1)));
    assert_true(isinf(cost_hop_us(NULL, 1)));
    topo_free(t);
}

/* The runtime's latency, as bundled ("runtime_latency": "nccl"): a hop
 * lands NCCL's per-step ring latency of its protocol and hardware later
 * (NVLink 0.6 / 1.9 / 3.4 us for LL / LL128 / Simple, the network 2.7 /
 * 4.0 / 14.0), holding its resources no longer; a call costs NCCL's ring
 * base latency once (6.6 / 14 / 8.4).  RCCL's table on an AMD machine;
 * nothing on a chip device. */
static void test_runtime_latency(void **state)
{
    (void)state;
    topo *t = load("topologies/ndv2-x2.json");
    assert_int_equal(t->rt_latency, TOPO_RTLAT_NCCL);
    topo_route link = topo_route_of(t, 0, 1), nic = topo_route_of(t, 2, 9);
    assert_near(link.lat_us, 3.4, 0);
    assert_near(nic.lat_us, 14.0, 0);
    assert_near(cost_hop_us(&link, 1e6), 0.7 + 20.0 + 3.4, 1e-12);
    assert_near(cost_hold_us(t, &link, 1e6), 0.7 + 20.0, 1e-12);
    assert_true(cost_delayed(t, &link));
    topo_route r = cost_proto_route(t, link, COST_LL);
    assert_near(r.lat_us, 0.6, 0);
    assert_near(cost_hop_us(&r, 0), 0.7 * 0.6 / 3.4 + 0.6, 1e-12);
    assert_near(cost_proto_route(t, nic, COST_LL128).lat_us, 4.0, 0);
    assert_near(cost_call_us(t, COST_LL), 6.6, 0);
    assert_near(cost_call_us(t, COST_LL128), 14.0, 0);
    assert_near(cost_call_us(t, COST_SIMPLE), 8.4, 0);
    t->alpha_delay = 1;             /* alpha as latency too: both after the bytes */
    assert_near(cost_hold_us(t, &link, 1e6), 20.0, 1e-12);
    assert_near(cost_hop_us(&link, 1e6), 0.7 + 20.0 + 3.4, 1e-12);
    topo_free(t);
    t = load("topologies/mi250-x1.json");
    assert_int_equal(t->rt_latency, TOPO_RTLAT_RCCL);
    link = topo_route_of(t, 0, 1);
    assert_near(link.lat_us, 3.6, 0);
    assert_near(cost_proto_route(t, link, COST_LL).lat_us, 0.8, 0);
    topo_free(t);
    /* what a port gives a tile's operation in the passes: 2 MiB under
     * Simple holds a 450 GB/s port 0.7 us + 4.66 us (LL and LL128 give less) */
    t = load("topologies/dgx-h100-x1.json");
    assert_near(cost_tile_gbps(t, 0.7, 450, 0), 2097152.0 / (0.7 + 2097152.0 / 450e3) / 1e3,
                1e-9);
    assert_near(cost_tile_gbps(t, 0, 450, 0), 450, 0);
    t->alpha_delay = 1;                 /* alpha held by nothing: the whole bandwidth */
    assert_near(cost_tile_gbps(t, 0.7, 450, 0), 450, 0);
    topo_free(t);
    t = load("topologies/cs-chip4.json");
    t->rt_latency = TOPO_RTLAT_NCCL;    /* no runtime of NCCL's on a chip */
    link = topo_route_of(t, 0, 1);
    assert_near(cost_proto_route(t, link, COST_LL).lat_us, 0, 0);
    assert_near(cost_call_us(t, COST_SIMPLE), 0, 0);
    topo_free(t);
}

/* LL and LL128 scale a hop by NCCL's ring figures (NVLink for links and
 * switches, the network for NICs); Simple, a route to self and a chip
 * device keep the topology's. */
static void test_protocols(void **state)
{
    (void)state;
    cost_proto p;
    assert_true(cost_proto_parse("LL128", &p) && p == COST_LL128);
    assert_true(cost_proto_parse("Simple", &p) && p == COST_SIMPLE);
    assert_false(cost_proto_parse("ll", &p));
    assert_false(cost_proto_parse(NULL, &p));
    assert_string_equal(cost_proto_name(COST_LL), "LL");
    topo *t = load("topologies/ndv2-x2.json");
    topo_route link = topo_route_of(t, 0, 1), nic = topo_route_of(t, 2, 9);
    topo_route r = cost_proto_route(t, link, COST_LL);
    assert_near(r.alpha_us, 0.7 * 0.6 / 3.4, 1e-12);
    assert_near(r.bw_gbps, 25, 1e-12);
    r = cost_proto_route(t, link, COST_LL128);
    assert_near(r.alpha_us, 0.7 * 1.9 / 3.4, 1e-12);
    assert_near(r.bw_gbps, 46, 1e-12);
    r = cost_proto_route(t, nic, COST_LL);
    assert_near(r.alpha_us, 1.3 * 2.7 / 14, 1e-12);
    assert_near(r.bw_gbps, 6.25, 1e-12);
    r = cost_proto_route(t, link, COST_SIMPLE);
    assert_near(r.alpha_us, 0.7, 0);
    r = cost_proto_route(t, topo_route_of(t, 4, 4), COST_LL);
    assert_near(r.bw_gbps, topo_route_of(t, 4, 4).bw_gbps, 0);
    topo_free(t);
    t = load("topologies/cs-chip4.json");
    link = topo_route_of(t, 0, 1);
    r = cost_proto_route(t, link, COST_LL);
    assert_near(r.alpha_us, link.alpha_us, 0);
    assert_near(r.bw_gbps, link.bw_gbps, 0);
    topo_free(t);
}

static void test_local_cost(void **state)
{
    (void)state;
    topo *t = load("topologies/cs-chip4.json");   /* copy 512, reduce 256 GB/s */
    assert_near(cost_copy_us(t, 512e3), 1.0, 1e-12);
    assert_near(cost_reduce_us(t, 512e3), 2.0, 1e-12);
    assert_near(cost_reduce_us(t, 0), 0.0, 0);
    t->reduce_gbps = 0;                             /* not modelled: free */
    assert_near(cost_reduce_us(t, 1e9), 0.0, 0);
    topo_free(t);
}

static void test_resource_numbering(void **state)
{
    (void)state;
    topo *t = load("topologies/dgx2-x2.json");
    int nmem = 0;
    for (int s = 0; s < t->nswitches; s++)
        nmem += t->switches[s].nranks;
    assert_int_equal(cost_nres(t), t->nlinks + 2 * nmem + 2 * t->nnics);
    int res[2];
    /* 0 -> 3 through node 0's switch: 0's out port, 3's in port */
    assert_int_equal(cost_hop_res(t, 0, 3, res), 2);
    assert_int_equal(cost_res_kind_of(t, res[0]), COST_PORT_OUT);
    assert_int_equal(cost_res_kind_of(t, res[1]), COST_PORT_IN);
    assert_int_equal(res[1], res[0] + 2 * 3 + 1);
    char b[96];
    cost_res_name(t, res[1], b, sizeof b);
    assert_non_null(strstr(b, "in port of rank 3"));
    /* 1 -> 16 between nodes: NIC egress, then the other node's NIC ingress */
    assert_int_equal(cost_hop_res(t, 1, 16, res), 2);
    assert_int_equal(cost_res_kind_of(t, res[0]), COST_NIC_OUT);
    assert_int_equal(cost_res_kind_of(t, res[1]), COST_NIC_IN);
    cost_res_name(t, res[0], b, sizeof b);
    assert_non_null(strstr(b, "egress"));
    int r2[2];
    cost_hop_res(t, 0, 17, r2);
    assert_int_equal(r2[0], res[0]);        /* 0 and 1 share a NIC */
    assert_int_equal(cost_hop_res(t, 5, 5, res), 0);
    assert_int_equal(cost_res_lanes(t, res[0]), 1);
    assert_int_equal(cost_res_lanes(t, -1), 0);
    assert_int_equal(cost_res_lanes(t, cost_nres(t)), 0);
    cost_res_name(t, cost_nres(t), b, sizeof b);
    assert_non_null(strstr(b, "none"));
    topo_free(t);
}

static void test_link_resource(void **state)
{
    (void)state;
    topo *t = load("topologies/ndv2-x1.json");
    int res[2];
    assert_int_equal(cost_hop_res(t, 0, 1, res), 1);
    assert_int_equal(cost_res_kind_of(t, res[0]), COST_LINK);
    assert_int_equal(t->links[res[0]].src, 0);
    assert_int_equal(t->links[res[0]].dst, 1);
    assert_int_equal(cost_res_lanes(t, res[0]), t->links[res[0]].mult > 1 ? t->links[res[0]].mult : 1);
    /* a route naming a switch neither rank is on holds nothing */
    topo_route bad = {ROUTE_SWITCH, -1, 99, -1, -1, 1, 1, 0};
    assert_int_equal(cost_route_res(t, &bad, 0, 1, res), 0);
    topo_free(t);
}

/* First come first served: a transfer starts at the latest of its ready
 * time and each resource's first-free lane, takes the lane freed first
 * (lowest on ties) and holds it to its end. */
static void test_lanes(void **state)
{
    (void)state;
    static const char *json =
        "{\"name\": \"two-lanes\", \"nodes\": 1, \"ranks_per_node\": 2,"
        " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"test\"},"
        " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 10,"
        " \"multiplicity\": 2, \"source\": \"test\"}]}";
    tc_err e;
    topo *t = topo_parse(json, "two-lanes", &e);
    if (!t)
        fail_msg("%s", e.msg);
    int two[2];
    assert_int_equal(cost_hop_res(t, 0, 1, two), 1);
    assert_int_equal(cost_res_lanes(t, two[0]), 2);
    cost_lanes *L = cost_lanes_new(t);
    int res[1] = {two[0]}, lane[1];
    double f;
    assert_near(cost_lanes_start(L, res, 1, 3.0, lane), 3.0, 0);
    assert_int_equal(lane[0], 0);
    cost_lanes_hold(L, res, lane, 1, 10.0);
    /* the second lane is free: a second transfer starts at once */
    assert_near(cost_lanes_start(L, res, 1, 4.0, lane), 4.0, 0);
    assert_int_equal(lane[0], 1);
    cost_lanes_hold(L, res, lane, 1, 7.0);
    /* both busy: the third waits for the lane freed first (lane 1 at 7) */
    assert_near(cost_lanes_start(L, res, 1, 5.0, lane), 7.0, 0);
    assert_int_equal(lane[0], 1);
    assert_int_equal(cost_lanes_pick(L, two[0], &f), 1);
    assert_near(f, 7.0, 0);
    /* two resources: the later one decides */
    int sw[2];
    topo *d = load("topologies/dgx2-x1.json");
    cost_lanes *M = cost_lanes_new(d);
    assert_int_equal(cost_hop_res(d, 0, 1, sw), 2);
    int ln[2];
    cost_lanes_start(M, sw, 2, 0, ln);
    cost_lanes_hold(M, sw, ln, 2, 5.0);     /* 0 -> 1 holds 0's out, 1's in */
    int s2[2];
    assert_int_equal(cost_hop_res(d, 2, 1, s2), 2);
    assert_near(cost_lanes_start(M, s2, 2, 1.0, ln), 5.0, 0);  /* 1's in port */
    assert_int_equal(cost_hop_res(d, 0, 2, s2), 2);
    assert_near(cost_lanes_start(M, s2, 2, 1.0, ln), 5.0, 0);  /* 0's out port */
    assert_int_equal(cost_hop_res(d, 3, 2, s2), 2);
    assert_near(cost_lanes_start(M, s2, 2, 1.0, ln), 1.0, 0);  /* neither */
    cost_lanes_reset(M);
    assert_near(cost_lanes_start(M, sw, 2, 0.5, ln), 0.5, 0);
    cost_lanes_free(M);
    cost_lanes_free(L);
    cost_lanes_free(NULL);
    topo_free(d);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hop_cost),
        cmocka_unit_test(test_runtime_latency),
        cmocka_unit_test(test_local_cost),
        cmocka_unit_test(test_protocols),
        cmocka_unit_test(test_resource_numbering),
        cmocka_unit_test(test_link_resource),
        cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
