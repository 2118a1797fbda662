/* test_topo_nccl.c — the NCCL/RCCL dump importer: each rule gives NCCL's
 * (RCCL's) figure, small dumps written here import into topologies with the
 * links, switches and NICs those rules imply, several hosts become several
 * nodes, partial and malformed dumps are refused naming line, element and
 * the option that helps, and the output is the same bytes every time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/topo.h"
#include "model/topo_nccl.h"

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* ------------------------------------------------------------ rules */

static void test_rules(void **state)
{
    (void)state;
    /* NVLink per link by sm (NCCL topo.h SMxx_NVLINK_BW). */
    assert_near(topo_nccl_nvlink_bw(60), 18.0);
    assert_near(topo_nccl_nvlink_bw(70), 20.0);
    assert_near(topo_nccl_nvlink_bw(80), 20.0);
    assert_near(topo_nccl_nvlink_bw(86), 12.0);
    assert_near(topo_nccl_nvlink_bw(89), 20.0);
    assert_near(topo_nccl_nvlink_bw(90), 20.6);
    assert_near(topo_nccl_nvlink_bw(100), 40.1);
    assert_near(topo_nccl_nvlink_bw(50), 20.0);
    /* xGMI per link by gcn, old numeric names included. */
    assert_string_equal(topo_nccl_gcn_name("910"), "gfx90a");
    assert_string_equal(topo_nccl_gcn_name("gfx942"), "gfx942");
    assert_near(topo_nccl_xgmi_bw("910"), 36.0);
    assert_near(topo_nccl_xgmi_bw("gfx90a"), 36.0);
    assert_near(topo_nccl_xgmi_bw("gfx942"), 48.0);
    assert_near(topo_nccl_xgmi_bw("940"), 48.0);
    assert_near(topo_nccl_xgmi_bw("908"), 24.0);
    /* PCI: width x per-lane speed / 80; width 0 is 16; unknown is Gen3. */
    double bw;
    assert_int_equal(topo_nccl_pci_bw("16.0 GT/s PCIe", 16, &bw), 0);
    assert_near(bw, 24.0);
    assert_int_equal(topo_nccl_pci_bw("32 GT/s", 0, &bw), 0);
    assert_near(bw, 48.0);
    assert_int_equal(topo_nccl_pci_bw("8 GT/s", 8, &bw), 0);
    assert_near(bw, 6.0);
    assert_int_equal(topo_nccl_pci_bw("", 16, &bw), -1);
    assert_near(bw, 12.0);
    /* NIC: Mb/s / 8000; <= 0 is 10 Gb/s. */
    assert_near(topo_nccl_net_bw(200000), 25.0);
    assert_near(topo_nccl_net_bw(400000), 50.0);
    assert_near(topo_nccl_net_bw(-1), 1.25);
    /* Ring latencies. */
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_NVLINK, TOPO_NCCL_LL, 0), 0.6);
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_NVLINK, TOPO_NCCL_SIMPLE, 0), 3.4);
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_PCI, TOPO_NCCL_SIMPLE, 0), 5.7);
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_NET, TOPO_NCCL_LL128, 0), 4.0);
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_NVLINK, TOPO_NCCL_SIMPLE, 1), 3.6);
    assert_near(topo_nccl_latency(TOPO_NCCL_HW_NET, TOPO_NCCL_SIMPLE, 1), 15.1);
}

/* ------------------------------------------------------------ imports */

static char *import(const char *xml, const topo_nccl_opts *o, tc_err *e)
{
    tc_err_clear(e);
    return topo_nccl_import_mem(xml, strlen(xml), "t.xml", o, e);
}

static topo *import_ok(const char *xml, const topo_nccl_opts *o)
{
    tc_err e;
    char *js = import(xml, o, &e);
    if (!js) print_error("%s\n", e.msg);
    assert_non_null(js);
    topo *t = topo_parse(js, "imported", &e);
    if (!t) print_error("%s\n", e.msg);
    assert_non_null(t);
    free(js);
    return t;
}

static void expect_fail(const char *xml, const topo_nccl_opts *o, const char *want)
{
    tc_err e;
    char *js = import(xml, o, &e);
    if (js || !strstr(e.msg, want))
        print_error("wanted a failure with '%s', got %s\n", want, js ? "success" : e.msg);
    assert_null(js);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, want));
}

/* Two NVSwitch GPUs (sm 90, 18 links), one NIC each under the same switch. */
#define H100_GPU(bus, nicbus, dev, rank, nics)                                              \
    "  <pci busid=\"0000:" bus ":00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" "  \
    "link_width=\"16\">\n"                                                                  \
    "   <pci busid=\"0000:" nicbus ":00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" " \
    "link_width=\"16\">\n"                                                                  \
    "    <nic><net name=\"mlx5_" dev "\" dev=\"" dev "\" speed=\"" nics "\" port=\"1\"/></nic>\n" \
    "   </pci>\n"                                                                           \
    "   <pci busid=\"0000:" bus ":01.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "  \
    "link_width=\"16\">\n"                                                                  \
    "    <gpu dev=\"" dev "\" sm=\"90\" rank=\"" rank "\" gdr=\"1\">\n"                     \
    "     <nvlink target=\"0000:f5:00.0\" count=\"9\" tclass=\"0x068000\"/>\n"              \
    "     <nvlink target=\"0000:f6:00.0\" count=\"9\" tclass=\"0x068000\"/>\n"              \
    "    </gpu>\n"                                                                          \
    "   </pci>\n"                                                                           \
    "  </pci>\n"

static const char H100X2[] =
    "<system version=\"1\">\n"
    " <cpu host_hash=\"0xaa\" numaid=\"0\">\n" H100_GPU("10", "11", "0", "0", "400000")
    H100_GPU("20", "21", "1", "1", "400000")
    " </cpu>\n"
    "</system>\n";

static void test_nvswitch_machine(void **state)
{
    (void)state;
    topo *t = import_ok(H100X2, NULL);
    assert_int_equal(t->nnodes, 1);
    assert_int_equal(t->ranks_per_node, 2);
    assert_int_equal(t->arch, TOPO_ARCH_HOPPER);
    assert_int_equal(t->nlinks, 0);
    assert_int_equal(t->nswitches, 1);
    assert_near(t->switches[0].bw_gbps, 18 * 20.6);
    /* the hop's alpha the bundled machines' (0.7 us); NCCL's per-step
     * latency (3.4 us over NVLink, 14 over the network) is the runtime's */
    assert_near(t->switches[0].alpha_us, 0.7);
    assert_int_equal(t->rt_latency, TOPO_RTLAT_NCCL);
    assert_near(topo_route_of(t, 0, 1).lat_us, 3.4);
    assert_int_equal(t->nnics, 2);
    /* Each GPU gets the NIC beside it on its PCI switch. */
    assert_int_equal(t->nic_of_rank[0], 0);
    assert_int_equal(t->nic_of_rank[1], 1);
    assert_near(t->nics[0].bw_gbps, 50.0);
    assert_near(t->nics[0].alpha_us, 2.6);
    topo_free(t);

    /* --nodes copies the node; --net overrides the dump's speed. */
    topo_nccl_opts o;
    topo_nccl_opts_init(&o);
    o.nodes = 3;
    o.net = "100Gb/s";
    t = import_ok(H100X2, &o);
    assert_int_equal(t->nnodes, 3);
    assert_int_equal(t->nranks, 6);
    assert_near(t->nics[0].bw_gbps, 12.5);
    topo_free(t);
}

static void test_deterministic(void **state)
{
    (void)state;
    tc_err e;
    char *a = import(H100X2, NULL, &e), *b = import(H100X2, NULL, &e);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    /* Every figure names where it came from. */
    assert_non_null(strstr(a, "src/graph/topo.h:19-24,274-281@NVIDIA/nccl 5067397"));
    assert_non_null(strstr(a, "speed=\\\"400000\\\""));
    assert_non_null(strstr(a, "hwLat[NET][Ring][Simple]"));
    free(a);
    free(b);
}

/* Two hosts in one file: two nodes. */
static void test_hosts(void **state)
{
    (void)state;
    static const char two[] =
        "<system version=\"1\">\n"
        " <cpu host_hash=\"0xaa\" numaid=\"0\">\n" H100_GPU("10", "11", "0", "0", "400000")
        H100_GPU("20", "21", "1", "1", "400000") " </cpu>\n"
        " <cpu host_hash=\"0xbb\" numaid=\"0\">\n" H100_GPU("10", "11", "0", "2", "400000")
        H100_GPU("20", "21", "1", "3", "400000") " </cpu>\n"
        "</system>\n";
    topo *t = import_ok(two, NULL);
    assert_int_equal(t->nnodes, 2);
    assert_int_equal(t->ranks_per_node, 2);
    assert_int_equal(t->nnics, 4);
    topo_free(t);
    topo_nccl_opts o;
    topo_nccl_opts_init(&o);
    o.nodes = 3;
    expect_fail(two, &o, "--nodes 3, but the dump lists 2 hosts");
    /* Unlike hosts are refused. */
    static const char uneven[] =
        "<system version=\"1\">\n"
        " <cpu host_hash=\"0xaa\" numaid=\"0\">\n" H100_GPU("10", "11", "0", "0", "400000")
        H100_GPU("20", "21", "1", "1", "400000") " </cpu>\n"
        " <cpu host_hash=\"0xbb\" numaid=\"0\">\n" H100_GPU("10", "11", "0", "2", "400000")
        " </cpu>\n"
        "</system>\n";
    expect_fail(uneven, NULL, "every node must be alike");
}

/* Direct links: an xGMI mesh of three MI300X with one missing pair. */
static void test_xgmi_and_pci(void **state)
{
    (void)state;
#define MI(bus, dev, t1, t2)                                                                 \
    "  <pci busid=\"0000:" bus ":00.0\" class=\"0x120000\" link_speed=\"32.0 GT/s PCIe\" "  \
    "link_width=\"16\">\n"                                                                  \
    "   <gpu dev=\"" dev "\" sm=\"304\" gcn=\"gfx942\" rank=\"" dev "\" gdr=\"1\">\n" t1 t2   \
    "   </gpu>\n  </pci>\n"
#define XG(to, n) "    <xgmi target=\"0000:" to ":00.0\" count=\"" n "\" tclass=\"0x120000\"/>\n"
    static const char mi[] =
        "<system version=\"2\">\n <cpu numaid=\"0\">\n"
        MI("0c", "0", XG("15", "1"), XG("1e", "2"))
        MI("15", "1", XG("0c", "1"), "")
        MI("1e", "2", XG("0c", "2"), "")
        " </cpu>\n</system>\n";
    topo *t = import_ok(mi, NULL);
    assert_int_equal(t->arch, TOPO_ARCH_UNKNOWN);
    topo_route r = topo_route_of(t, 0, 1);
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_near(r.bw_gbps, 48.0);
    assert_near(r.alpha_us, 0.7);
    assert_int_equal(t->rt_latency, TOPO_RTLAT_RCCL);
    assert_near(r.lat_us, 3.6);       /* RCCL's xGMI (NVLINK) Simple latency, the runtime's */
    r = topo_route_of(t, 0, 2);
    assert_int_equal(r.kind, ROUTE_LINK);
    assert_near(r.bw_gbps, 96.0);
    /* 1 and 2 have no xGMI: they meet through PCI, 32 GT/s x16 = 48 GB/s. */
    r = topo_route_of(t, 1, 2);
    assert_int_equal(r.kind, ROUTE_SWITCH);
    assert_near(r.bw_gbps, 48.0);
    assert_near(r.alpha_us, 0.7);
    topo_free(t);
}

/* ------------------------------------------------------------ partial */

static const char PARTIAL[] =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" affinity=\"00ff\" arch=\"x86_64\">\n"
    "    <pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\"/>\n"
    "    <pci busid=\"0002:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\"/>\n"
    "    <pci busid=\"0101:00:00.0\" class=\"0x020700\" link_speed=\"16 GT/s\" link_width=\"16\"/>\n"
    "  </cpu>\n"
    "</system>\n";

static void test_partial(void **state)
{
    (void)state;
    topo_nccl_opts o;
    topo_nccl_opts_init(&o);
    expect_fail(PARTIAL, &o, "t.xml:3: pci: GPU 0001:00:00.0 has no <gpu> element");
    expect_fail(PARTIAL, &o, "give --gpu");
    o.gpu = "a100";
    expect_fail(PARTIAL, &o, "t.xml:5: pci: NIC 0101:00:00.0 has no <nic><net> element");
    expect_fail(PARTIAL, &o, "give --net BW");
    o.net = "200Gb/s";
    expect_fail(PARTIAL, &o, "give --nvlink");
    o.nvlink = "switch:12";
    topo *t = import_ok(PARTIAL, &o);
    assert_int_equal(t->arch, TOPO_ARCH_AMPERE);
    assert_int_equal(t->nswitches, 1);
    assert_near(t->switches[0].bw_gbps, 240.0);
    assert_near(t->nics[0].bw_gbps, 25.0);
    topo_free(t);
    tc_err e;
    char *js = import(PARTIAL, &o, &e);
    assert_non_null(strstr(js, "assumed (--nvlink switch:12)"));
    assert_non_null(strstr(js, "assumed (--gpu a100)"));
    assert_non_null(strstr(js, "assumed (--net 200Gb/s)"));
    free(js);
    o.nvlink = "mesh:2";
    t = import_ok(PARTIAL, &o);
    assert_near(topo_route_of(t, 0, 1).bw_gbps, 40.0);
    topo_free(t);
    o.nvlink = "none";
    t = import_ok(PARTIAL, &o);
    assert_int_equal(topo_route_of(t, 0, 1).kind, ROUTE_SWITCH);
    assert_near(topo_route_of(t, 0, 1).bw_gbps, 24.0);
    topo_free(t);
    o.nvlink = "cube-mesh";
    expect_fail(PARTIAL, &o, "cube-mesh needs 8 GPUs");
    o.nvlink = "ring";
    expect_fail(PARTIAL, &o, "--nvlink ring: expected");
    o.nvlink = "switch:12";
    o.gpu = "tpu";
    expect_fail(PARTIAL, &o, "--gpu tpu: unknown");
    o.gpu = "a100";
    o.net = "fast";
    expect_fail(PARTIAL, &o, "--net fast");
    /* --gpu against a dump that names its GPUs. */
    topo_nccl_opts_init(&o);
    o.gpu = "a100";
    expect_fail(H100X2, &o, "--gpu given, but the dump names its GPUs");
    /* --nvlink against a dump with its own links. */
    topo_nccl_opts_init(&o);
    o.nvlink = "switch:4";
    expect_fail(H100X2, &o, "--nvlink given, but the dump has its own");
}

/* ------------------------------------------------------------ malformed */

static void test_malformed(void **state)
{
    (void)state;
    expect_fail("<system>\n <cpu>\n  <pci busid=\"x\"\n</system>\n", NULL, "t.xml:");
    expect_fail("<topology/>\n", NULL, "t.xml:1: topology: the root element is not <system>");
    expect_fail("<system version=\"1\">\n</system>\n", NULL, "t.xml:1: system: no GPU");
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
                "link_width=\"16\">\n   <gpu dev=\"0\" rank=\"0\"/>\n  </pci>\n </cpu>\n</system>\n",
                NULL, "t.xml:4: gpu: no sm (NVIDIA) or gcn (AMD)");
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
                "link_width=\"wide\">\n   <gpu sm=\"80\"/>\n  </pci>\n </cpu>\n</system>\n",
                NULL, "t.xml:3: pci: link_width=\"wide\" is not an integer");
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
                "   <gpu sm=\"80\">\n    <nvlink target=\"0000:09:00.0\" count=\"2\" "
                "tclass=\"0x030200\"/>\n   </gpu>\n  </pci>\n </cpu>\n</system>\n",
                NULL, "t.xml:5: nvlink: target 0000:09:00.0 is no GPU of this host");
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
                "   <gpu sm=\"80\">\n    <nvlink target=\"0000:09:00.0\" tclass=\"0x068000\"/>\n"
                "   </gpu>\n  </pci>\n </cpu>\n</system>\n",
                NULL, "t.xml:5: nvlink: no count > 0");
    expect_fail("<system>\n <pci busid=\"0000:01:00.0\" class=\"0x030200\"/>\n</system>\n", NULL,
                "t.xml:2: pci: not inside a <cpu>");
    /* A link to the GPU itself (Azure's NC A100 v4 file) is ignored, said. */
    {
        static const char self[] =
            "<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
            "   <gpu sm=\"80\" rank=\"0\">\n    <nvlink target=\"0000:01:00.0\" count=\"12\" "
            "tclass=\"0x030200\"/>\n   </gpu>\n  </pci>\n"
            "  <pci busid=\"0000:02:00.0\" class=\"0x030200\">\n   <gpu sm=\"80\" rank=\"1\"/>\n"
            "  </pci>\n </cpu>\n</system>\n";
        tc_err e;
        char *js = import(self, NULL, &e);
        assert_non_null(js);
        assert_non_null(strstr(js, "target their own GPU (first at line 5)"));
        topo *t = topo_parse(js, "self", &e);
        assert_non_null(t);
        assert_int_equal(t->nlinks, 0);
        assert_int_equal(topo_route_of(t, 0, 1).kind, ROUTE_SWITCH);   /* PCI */
        topo_free(t);
        free(js);
    }
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
                "   <gpu sm=\"107\" mlopart=\"0\"/>\n   <gpu sm=\"107\" mlopart=\"1\"/>\n"
                "  </pci>\n </cpu>\n</system>\n",
                NULL, "t.xml:5: gpu: a second <gpu> under one <pci>");
    /* Several nodes need a NIC. */
    topo_nccl_opts o;
    topo_nccl_opts_init(&o);
    o.nodes = 2;
    expect_fail("<system>\n <cpu>\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
                "   <gpu sm=\"80\"/>\n  </pci>\n </cpu>\n</system>\n",
                &o, "2 nodes, but the dump lists no NIC");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_nvswitch_machine),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_xgmi_and_pci),
        cmocka_unit_test(test_partial),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
