/* test_baseline.c — the baseline generators: every (algorithm, collective)
 * on many topologies and rank counts is judged by the executor in-process
 * (run_schedule: static checks, race checks, data run in every buffer mode
 * the file claims), the ring search finds valid and disjoint rings fast,
 * the ring's simulated time is the textbook formula, and the case study's
 * sync counts come out. */
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

#include "exec/run.h"
#include "sched/xml.h"
#include "synth/baseline.h"
#include "fixtures.h"

static int file_exists(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/topologies/%s.json", fx_root(), name);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Build and judge; returns the prog (caller frees) after asserting it
 * verifies in every mode it claims.  *rep receives the report. */
static prog *build_and_verify(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                              run_report *rep)
{
    tc_err e;
    tc_err_clear(&e);
    prog *p = baseline_build(algo, t, k, o, &e);
    if (!p)
        fail_msg("%s %s on %s: build refused: %s", algo, coll_name(k), t->name, e.msg);
    run_opts ro;
    run_opts_default(&ro);
    ro.size_bytes = baseline_size_bytes(p, t, 4096LL * p->nchunksperloop);
    assert_int_equal(ro.size_bytes % (4096LL * p->nchunksperloop), 0);
    int rc = run_schedule(p, t, &ro, rep, &e);
    if (rc != TC_OK)
        fail_msg("%s %s on %s: could not run: %s", algo, coll_name(k), t->name, e.msg);
    if (!rep->verified)
        fail_msg("%s %s on %s (%d ch x %d chunks%s%s): not verified: %s", algo, coll_name(k),
                 t->name, o ? o->channels : 0, o ? o->chunks : 0, o && o->via ? " via " : "",
                 o && o->via ? o->via : "", rep->hz.n ? rep->hz.v[0].msg : "wrong result");
    assert_int_equal(rep->nmodes, p->inplace ? 2 : 1);
    return p;
}

static void verify(const char *algo, const topo *t, coll_kind k, const baseline_opts *o)
{
    run_report rep;
    prog *p = build_and_verify(algo, t, k, o, &rep);
    run_report_free(&rep);
    prog_free(p);
}

/* Which modes each algorithm claims (and must therefore verify in). */
static int expect_inplace(const char *algo, coll_kind k)
{
    if (!strcmp(algo, "direct"))
        return k == COLL_ALLTOALL || k == COLL_REDUCESCATTER;
    if (!strcmp(algo, "butterfly"))
        return k != COLL_ALLGATHER;
    return 1;
}

static int supports(const char *algo, coll_kind k)
{
    const baseline_algo *a = baseline_algo_find(algo);
    return a && (a->colls & (1u << k));
}

static int is_pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* Every algorithm the topology admits, every collective it has, default
 * options and a pipelined/multi-channel variant. */
static void verify_all_on(topo *t, int has_all_pairs, int has_hypercube, int relays)
{
    static const char *algos[] = {"ring", "direct", "butterfly", "rsag", "tree"};
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
        for (int k = 0; k < COLL_COUNT; k++) {
            if (!supports(algos[a], (coll_kind)k))
                continue;
            baseline_opts o;
            baseline_opts_default(&o);
            int refuse = (!strcmp(algos[a], "butterfly") && (!is_pow2(t->nranks) || !has_hypercube)) ||
                         (!strcmp(algos[a], "direct") && !has_all_pairs &&
                          !(k == COLL_ALLTOALL && relays)) ||
                         (!strcmp(algos[a], "rsag") && !has_all_pairs);
            if (refuse) {
                /* refused with a reason, nothing built */
                tc_err e;
                assert_null(baseline_build(algos[a], t, (coll_kind)k, &o, &e));
                assert_int_equal(e.code, TC_INPUT);
                assert_true(strstr(e.msg, "power-of-two") || strstr(e.msg, "no link, switch or NIC"));
                continue;
            }
            run_report rep;
            prog *p = build_and_verify(algos[a], t, (coll_kind)k, &o, &rep);
            /* a relayed AllToAll is out of place only: a forward may land
             * before the slot it overwrites was sent */
            int relayed = !strcmp(algos[a], "direct") && k == COLL_ALLTOALL && !has_all_pairs;
            assert_int_equal(p->inplace, relayed ? 0 : expect_inplace(algos[a], (coll_kind)k));
            assert_int_equal(p->outofplace, 1);
            run_report_free(&rep);
            prog_free(p);
            o.chunks = 3;
            o.channels = 2;
            verify(algos[a], t, (coll_kind)k, &o);
        }
}

static void test_table(void **state)
{
    (void)state;
    int n;
    const baseline_algo *a = baseline_algos(&n);
    assert_int_equal(n, 11);
    assert_string_equal(a[0].name, "ring");
    assert_string_equal(a[5].name, "hier");
    assert_string_equal(a[6].name, "nccl");
    assert_string_equal(a[7].name, "nvls");
    assert_string_equal(a[8].name, "hier-nvls");
    assert_string_equal(a[9].name, "pat");
    assert_string_equal(a[10].name, "allpairs");
    assert_true(supports("allpairs", COLL_REDUCESCATTER) && !supports("allpairs", COLL_ALLGATHER) &&
                !supports("allpairs", COLL_ALLREDUCE));
    assert_true(supports("pat", COLL_ALLGATHER) && supports("pat", COLL_REDUCESCATTER) &&
                !supports("pat", COLL_ALLREDUCE) && !supports("pat", COLL_ALLTOALL));
    assert_true(supports("nvls", COLL_ALLREDUCE) && !supports("nvls", COLL_ALLTOALL));
    assert_true(supports("hier", COLL_ALLREDUCE) && !supports("hier", COLL_ALLTOALL));
    for (int k = 0; k < COLL_COUNT; k++)
        assert_true(supports("nccl", (coll_kind)k));
    assert_true(supports("ring", COLL_ALLGATHER) && !supports("ring", COLL_ALLTOALL));
    assert_true(supports("direct", COLL_ALLTOALL));
    assert_true(supports("butterfly", COLL_REDUCESCATTER) && !supports("butterfly", COLL_ALLTOALL));
    assert_true(supports("rsag", COLL_ALLREDUCE) && !supports("rsag", COLL_ALLGATHER));
    assert_true(supports("tree", COLL_ALLREDUCE) && !supports("tree", COLL_REDUCESCATTER));
    assert_null(baseline_algo_find("msccl"));
}

static void test_default_topologies(void **state)
{
    (void)state;
    int sizes[] = {2, 3, 4, 5, 6, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        topo *t = topo_default(sizes[i]);
        verify_all_on(t, 1, 1, 1);
        topo_free(t);
    }
}

static void test_gpu_topologies(void **state)
{
    (void)state;
    /* ndv2: cube-mesh, not every pair linked (direct/rsag via direct refused,
     * but direct AllToAll goes through a relay joined to both) */
    const char *names[] = {"ndv2-x1", "ndv2-x2", "dgx2-x1"};
    int all_pairs[] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        topo *t = fx_topo(names[i]);
        verify_all_on(t, all_pairs[i], 1, 1);
        topo_free(t);
    }
}

static void test_torus_and_chip_topologies(void **state)
{
    (void)state;
    topo *t = fx_topo("torus-2d-4x4");
    verify_all_on(t, 0, 0, 0);  /* XOR partners 0 and 2 are not neighbours; 0 and 10
                                   share no neighbour to relay through */
    topo_free(t);
    t = fx_topo("cs-chip4");
    verify_all_on(t, 1, 1, 1);
    topo_free(t);
    t = fx_topo("cs-cluster2");
    verify_all_on(t, 1, 1, 1);
    topo_free(t);
}

static void test_rsag_vias_and_chunking(void **state)
{
    (void)state;
    const char *vias[] = {"direct", "ring", "butterfly"};
    topo *t8 = topo_default(8), *t6 = topo_default(6);
    topo *dgx = fx_topo("dgx2-x1");
    for (int v = 0; v < 3; v++) {
        baseline_opts o;
        baseline_opts_default(&o);
        o.via = vias[v];
        run_report rep;
        prog *p = build_and_verify("rsag", t8, COLL_ALLREDUCE, &o, &rep);
        assert_int_equal(p->inplace, 1);
        run_report_free(&rep);
        prog_free(p);
        verify("rsag", dgx, COLL_ALLREDUCE, &o);
        o.chunks = 5;
        verify("rsag", t8, COLL_ALLREDUCE, &o);
        if (v != 2)
            verify("rsag", t6, COLL_ALLREDUCE, &o);
    }
    /* Many chunks: more than the 8-deep connection FIFO in flight */
    baseline_opts o;
    baseline_opts_default(&o);
    o.chunks = 20;
    verify("direct", t6, COLL_REDUCESCATTER, &o);
    verify("direct", t6, COLL_ALLTOALL, &o);
    verify("ring", t6, COLL_ALLREDUCE, &o);
    verify("tree", t6, COLL_ALLREDUCE, &o);
    verify("butterfly", t8, COLL_ALLREDUCE, &o);
    o.chunks = 40;      /* butterfly runs of > 71 chunks are split */
    verify("butterfly", t8, COLL_ALLGATHER, &o);
    verify("butterfly", t8, COLL_REDUCESCATTER, &o);
    topo_free(t8);
    topo_free(t6);
    topo_free(dgx);
}

/* The tree on several nodes: NCCL's shape, chains inside nodes. */
static void test_tree_multinode(void **state)
{
    (void)state;
    const char *names[] = {"ndv2-x2", "ndv2-x4", "dgx2-x2"};
    for (int i = 0; i < 3; i++) {
        if (!file_exists(names[i]))
            continue;
        topo *t = fx_topo(names[i]);
        baseline_opts o;
        baseline_opts_default(&o);
        verify("tree", t, COLL_ALLREDUCE, &o);
        verify("ring", t, COLL_ALLREDUCE, &o);
        topo_free(t);
    }
}

/* NCCL's double binary tree: no rank is a leaf of both trees. */
static void test_tree_complementary(void **state)
{
    (void)state;
    int sizes[] = {5, 6, 8, 13, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        topo *t = topo_default(sizes[i]);
        baseline_opts o;
        baseline_opts_default(&o);
        tc_err e;
        prog *p = baseline_build("tree", t, COLL_ALLREDUCE, &o, &e);
        assert_non_null(p);
        assert_int_equal(p->nchannels, 2);
        int leaves_both = 0, leaves[2] = {0, 0};
        for (int r = 0; r < p->ngpus; r++) {
            int tbs[2] = {0, 0}, first[2] = {-1, -1}, leaf[2];
            for (int b = 0; b < p->gpus[r].ntbs; b++) {
                int c = p->gpus[r].tbs[b].chan;
                if (tbs[c]++ == 0)
                    first[c] = b;
            }
            for (int w = 0; w < 2; w++) {
                /* a leaf has one tb, to and from its parent, and starts by
                 * sending its input up (a root with one child starts by
                 * receiving) */
                const prog_tb *tb = &p->gpus[r].tbs[first[w]];
                leaf[w] = tbs[w] == 1 && tb->steps[0].type == ST_S;
                leaves[w] += leaf[w];
            }
            leaves_both += leaf[0] && leaf[1];
        }
        assert_int_equal(leaves_both, 0);
        assert_true(leaves[0] >= sizes[i] / 2 - 1 && leaves[1] >= sizes[i] / 2 - 1);
        prog_free(p);
        topo_free(t);
    }
}

/* A ring topology with uniform alpha and B: the ring AllGather takes
 * (p-1) alpha + (p-1)/p N/B exactly — the local copy runs in its own tb
 * after the send and never delays the ring. */
static topo *uniform_ring(int p, double alpha, double bw)
{
    char pairs[4096] = "";
    size_t len = 0;
    for (int i = 0; i < p; i++)
        len += (size_t)snprintf(pairs + len, sizeof pairs - len, "%s[%d, %d]", i ? ", " : "", i,
                                (i + 1) % p);
    char json[8192];
    snprintf(json, sizeof json,
             "{\"name\": \"uniform-ring-%d\", \"nodes\": 1, \"ranks_per_node\": %d,"
             " \"local\": {\"copy_gbps\": 1000, \"reduce_gbps\": 1000, \"source\": \"assumed: test\"},"
             " \"links\": [{\"pairs\": [%s], \"alpha_us\": %.17g, \"bandwidth_gbps\": %.17g,"
             " \"source\": \"assumed: test\"}]}",
             p, p, pairs, alpha, bw);
    tc_err e;
    topo *t = topo_parse(json, "uniform-ring", &e);
    if (!t)
        fail_msg("uniform ring: %s", e.msg);
    return t;
}

static void test_ring_time_is_textbook(void **state)
{
    (void)state;
    int ps[] = {3, 4, 5, 8, 12};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        int p = ps[i];
        double alpha = 1.5, bw = 10.0;
        topo *t = uniform_ring(p, alpha, bw);
        baseline_opts o;
        baseline_opts_default(&o);
        o.channels = 1;
        tc_err e;
        prog *pr = baseline_build("ring", t, COLL_ALLGATHER, &o, &e);
        assert_non_null(pr);
        assert_int_equal(pr->nchunksperloop, p);
        run_opts ro;
        run_opts_default(&ro);
        long long N = baseline_size_bytes(pr, t, 1 << 20);
        ro.size_bytes = N;
        run_report rep;
        assert_int_equal(run_schedule(pr, t, &ro, &rep, &e), TC_OK);
        assert_true(rep.verified);
        double want = (p - 1) * alpha + (double)(p - 1) / p * (double)N / (bw * 1e3);
        double also = (p - 1) * (alpha + ((double)N / p) / (bw * 1e3));
        assert_true(fabs(want - also) <= 1e-9 * want);
        for (int m = 0; m < rep.nmodes; m++) {
            double got = rep.res[m].time_us;
            if (fabs(got - want) > 1e-9 * want)
                fail_msg("p=%d mode %d: ring AllGather took %.12g us, textbook %.12g us", p,
                         rep.modes[m], got, want);
        }
        run_report_free(&rep);
        prog_free(pr);

        /* Both directions of the ring: two channels, half the data each. */
        o.channels = 0;
        baseline_stats st;
        pr = baseline_build_stats("ring", t, COLL_ALLGATHER, &o, &st, &e);
        assert_non_null(pr);
        assert_int_equal(st.rings_found, 2);
        assert_int_equal(st.channels, 2);
        N = baseline_size_bytes(pr, t, 1 << 20);
        ro.size_bytes = N;
        assert_int_equal(run_schedule(pr, t, &ro, &rep, &e), TC_OK);
        assert_true(rep.verified);
        want = (p - 1) * (alpha + ((double)N / (2 * p)) / (bw * 1e3));
        assert_true(fabs(rep.res[0].time_us - want) <= 1e-9 * want);
        run_report_free(&rep);
        prog_free(pr);

        /* Ring AllReduce: 2(p-1) alpha + 2(p-1)/p N/B plus the p-1 reductions. */
        o.channels = 1;
        pr = baseline_build("ring", t, COLL_ALLREDUCE, &o, &e);
        assert_non_null(pr);
        N = baseline_size_bytes(pr, t, 1 << 20);
        ro.size_bytes = N;
        assert_int_equal(run_schedule(pr, t, &ro, &rep, &e), TC_OK);
        assert_true(rep.verified);
        double c = (double)N / p;
        want = 2 * (p - 1) * (alpha + c / (bw * 1e3)) + (p - 1) * c / 1e6;
        if (fabs(rep.res[0].time_us - want) > 1e-9 * want)
            fail_msg("p=%d ring AllReduce %.12g us, want %.12g", p, rep.res[0].time_us, want);
        run_report_free(&rep);
        prog_free(pr);
        topo_free(t);
    }
}

static void test_case_study_syncs(void **state)
{
    (void)state;
    topo *t = fx_topo("cs-chip4");
    struct {
        const char *algo;
        long long syncs;
    } cases[] = {{"direct", 12}, {"butterfly", 8}};
    for (int i = 0; i < 2; i++) {
        baseline_opts o;
        baseline_opts_default(&o);
        run_report rep;
        prog *p = build_and_verify(cases[i].algo, t, COLL_ALLREDUCE, &o, &rep);
        assert_int_equal(p->nchunksperloop, 1);
        for (int m = 0; m < rep.nmodes; m++)
            assert_int_equal(rep.res[m].chip_syncs, cases[i].syncs);
        assert_int_equal(rep.res[0].cluster_syncs, 0);
        run_report_free(&rep);
        prog_free(p);
    }
    /* f32: the direct cyclic reduction's replicas may differ, RS+AG's never */
    baseline_opts o;
    baseline_opts_default(&o);
    tc_err e;
    prog *p = baseline_build("rsag", t, COLL_ALLREDUCE, &o, &e);
    assert_non_null(p);
    run_opts ro;
    run_opts_default(&ro);
    ro.dtype = DT_F32;
    ro.size_bytes = baseline_size_bytes(p, t, 4096LL * p->nchunksperloop);
    run_report rep;
    assert_int_equal(run_schedule(p, t, &ro, &rep, &e), TC_OK);
    assert_true(rep.verified);
    assert_int_equal(rep.res[0].replicas_identical, 1);
    run_report_free(&rep);
    prog_free(p);
    topo_free(t);
}

/* Every consecutive pair of a ring is linked (or on one switch, or on two
 * nodes' NICs), every rank appears once, and later rings reuse no directed
 * intra-node hop. */
static void assert_rings_valid(const topo *t, const baseline_rings *rg)
{
    int n = t->nranks;
    unsigned char *seen = calloc((size_t)n, 1);
    int R = t->ranks_per_node;
    unsigned char *hop = calloc((size_t)R * R, 1);
    for (int k = 0; k < rg->nrings; k++) {
        const int *o = rg->order + (size_t)k * n;
        memset(seen, 0, (size_t)n);
        for (int i = 0; i < n; i++) {
            assert_true(o[i] >= 0 && o[i] < n);
            assert_false(seen[o[i]]);
            seen[o[i]] = 1;
            int a = o[i], b = o[(i + 1) % n];
            topo_route rt = topo_route_of(t, a, b);
            if (topo_node_of(t, a) == topo_node_of(t, b)) {
                if (rt.kind != ROUTE_LINK && rt.kind != ROUTE_SWITCH)
                    fail_msg("%s ring %d: hop %d->%d has no link or switch", t->name, k, a, b);
                if (a < R && b < R && R * R <= 1 << 22) {
                    if (hop[a * R + b])
                        fail_msg("%s ring %d reuses hop %d->%d", t->name, k, a, b);
                    hop[a * R + b] = 1;
                }
            } else {
                assert_int_equal(rt.kind, ROUTE_NIC);
            }
        }
    }
    free(seen);
    free(hop);
}

static int rings_on(const topo *t, int max, double *secs, int *disjoint)
{
    baseline_rings rg;
    tc_err e;
    double t0 = now_s();
    int rc = baseline_find_rings(t, max, &rg, &e);
    *secs = now_s() - t0;
    if (rc != TC_OK)
        fail_msg("%s: %s", t->name, e.msg);
    assert_rings_valid(t, &rg);
    assert_true(rg.ndisjoint >= 1 && rg.ndisjoint <= rg.nrings && rg.nrings <= max);
    int n = rg.nrings;
    if (disjoint)
        *disjoint = rg.ndisjoint;
    baseline_rings_free(&rg);
    return n;
}

static void test_ring_counts(void **state)
{
    (void)state;
    double s;
    /* rings sharing nothing (links, switch ports, NICs) and rings in all */
    struct {
        const char *name;
        int disjoint, total;
    } files[] = {{"ndv2-x1", 4, 4}, {"ndv2-x2", 1, 3}, {"dgx1", 4, 4}, {"dgx2-x1", 1, 8},
                 {"dgx2-x2", 1, 8}, {"torus-2d-4x4", 4, 4}, {"cs-chip4", 2, 2},
                 {"cs-cluster2", 1, 1}, {"cs-chip4x2", 6, 6}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        if (!file_exists(files[i].name))
            continue;
        topo *t = fx_topo(files[i].name);
        int dis, got = rings_on(t, 8, &s, &dis);
        print_message("rings: %-14s %d sharing nothing, %d in all (%.3f ms)\n", files[i].name,
                      dis, got, s * 1e3);
        if (dis != files[i].disjoint || got < files[i].total)
            fail_msg("%s: %d/%d rings found, expected %d/%d", files[i].name, dis, got,
                     files[i].disjoint, files[i].total);
        topo_free(t);
    }
    /* complete digraphs: n-1 disjoint Hamiltonian cycles exist except for
     * n = 4 and 6 (Bermond-Faber), where 2 and 4 are the most */
    int most[] = {0, 0, 1, 2, 2, 4, 4, 6, 7, 8};
    for (int n = 2; n <= 9; n++) {
        topo *t = topo_default(n);
        int dis, got = rings_on(t, 8, &s, &dis);
        print_message("rings: default-%d    %d\n", n, got);
        assert_int_equal(dis, got);
        if (got < most[n] - (n >= 8))
            fail_msg("default-%d: %d rings, expected %d", n, got, most[n]);
        topo_free(t);
    }
}

/* Grids and tori of the benchmark: a ring is found fast (snake first). */
static void test_large_rings(void **state)
{
    (void)state;
    const char *names[] = {"torus-2d-8x8", "mesh-2d-8x8", "torus-3d-4x4x4", "torus-2d-32x32"};
    for (int i = 0; i < 4; i++) {
        if (!file_exists(names[i]))
            continue;
        topo *t = fx_topo(names[i]);
        double s1, s8;
        int one = rings_on(t, 1, &s1, NULL);
        int all = rings_on(t, 8, &s8, NULL);
        assert_int_equal(one, 1);
        assert_true(all >= 2);
        print_message("rings: %-16s %d ranks: first ring %.3f ms, %d rings %.3f ms\n", names[i],
                      t->nranks, s1 * 1e3, all, s8 * 1e3);
        topo_free(t);
    }
    topo *t = topo_default(1024);
    double s;
    assert_int_equal(rings_on(t, 8, &s, NULL), 8);
    print_message("rings: default-1024: 8 rings %.3f ms\n", s * 1e3);
    topo_free(t);
}

static void test_large_build(void **state)
{
    (void)state;
    const char *name = file_exists("torus-2d-32x32") ? "torus-2d-32x32" : NULL;
    topo *t = name ? fx_topo(name) : topo_default(1024);
    baseline_opts o;
    baseline_opts_default(&o);
    tc_err e;
    /* 1024 steps per tb: refused for the runtimes, built for simulation */
    prog *p = baseline_build("ring", t, COLL_ALLGATHER, &o, &e);
    assert_null(p);
    assert_non_null(strstr(e.msg, "1024 steps"));
    assert_non_null(strstr(e.msg, "256"));
    assert_non_null(strstr(e.msg, "--target unlimited"));
    o.target = RT_UNLIMITED;
    o.channels = 1;
    double t0 = now_s();
    p = baseline_build("ring", t, COLL_ALLGATHER, &o, &e);
    double secs = now_s() - t0;
    assert_non_null(p);
    print_message("build: ring allgather %s 1 channel: %.3f s\n", t->name, secs);
    assert_int_equal(p->gpus[0].tbs[0].nsteps, 1024);
    prog_free(p);
    topo_free(t);
}

static void test_refusals(void **state)
{
    (void)state;
    tc_err e;
    baseline_opts o;
    baseline_opts_default(&o);
    topo *t6 = topo_default(6);
    assert_null(baseline_build("ring", t6, COLL_ALLTOALL, &o, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_string_equal(e.msg, "ring has no AllToAll; use direct");
    assert_null(baseline_build("butterfly", t6, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "power-of-two"));
    assert_non_null(strstr(e.msg, "6"));
    assert_null(baseline_build("tree", t6, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "AllReduce"));
    assert_null(baseline_build("msccl", t6, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "unknown algorithm 'msccl'"));
    o.via = "ring";
    assert_null(baseline_build("direct", t6, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "--via"));
    o.via = "carrier-pigeon";
    assert_null(baseline_build("rsag", t6, COLL_ALLREDUCE, &o, &e));
    assert_non_null(strstr(e.msg, "carrier-pigeon"));
    o.via = "butterfly";
    assert_null(baseline_build("rsag", t6, COLL_ALLREDUCE, &o, &e));
    assert_non_null(strstr(e.msg, "power-of-two"));
    o.via = NULL;
    o.channels = 33;
    assert_null(baseline_build("ring", t6, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "--channels"));
    o.channels = 0;

    /* steps per tb: a 65-rank ring tb has 65 steps, over the newer executor's 64, not the legacy 256 */
    topo *t66 = topo_default(65);
    o.channels = 1;
    o.target = RT_EXECUTOR;
    assert_null(baseline_build("ring", t66, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "65 steps"));
    assert_non_null(strstr(e.msg, "64"));
    o.target = RT_MSCCL;
    prog *p = baseline_build("ring", t66, COLL_ALLGATHER, &o, &e);
    assert_non_null(p);
    prog_free(p);
    topo_free(t66);

    /* a topology without all pairs: direct names the missing pair */
    topo *nd = fx_topo("ndv2-x1");
    assert_null(baseline_build("direct", nd, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "no link, switch or NIC"));
    topo_free(nd);

    /* a topology with no ring at all: a star */
    const char *star = "{\"name\": \"star\", \"nodes\": 1, \"ranks_per_node\": 4,"
                       " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed\"},"
                       " \"links\": [{\"pairs\": [[0, 1], [0, 2], [0, 3]], \"alpha_us\": 1,"
                       " \"bandwidth_gbps\": 10, \"source\": \"assumed\"}]}";
    topo *st = topo_parse(star, "star", &e);
    assert_non_null(st);
    assert_null(baseline_build("ring", st, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "found no ring"));
    /* the tree falls back to chains along a ring, which a star lacks too */
    assert_null(baseline_build("tree", st, COLL_ALLREDUCE, &o, &e));
    topo_free(st);
    topo_free(t6);
}

/* A program past what this tool builds (2^24 steps) is refused before a
 * step is built, --target unlimited too: --chunks 1000000 on 8 ranks was
 * accepted and aborted out of memory (the old bound took every step to move
 * 71 chunks, which only the butterfly's runs do).  For a runtime, a count
 * of steps per rank it cannot hold is refused the same way (ring AllReduce,
 * --chunks 100000: 2.9 GB and 28 s before the steps-per-tb refusal). */
static void test_too_large_before_building(void **state)
{
    (void)state;
    tc_err e;
    baseline_opts o;
    baseline_opts_default(&o);
    topo *t8 = topo_default(8);
    static const char *const algos[] = {"ring", "direct", "butterfly", "rsag", "tree"};
    o.chunks = 1000000;
    o.target = RT_UNLIMITED;
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        double t0 = now_s();
        assert_null(baseline_build(algos[i], t8, COLL_ALLREDUCE, &o, &e));
        assert_int_equal(e.code, TC_INPUT);
        assert_non_null(strstr(e.msg, "more than this tool builds (16777216)"));
        assert_true(now_s() - t0 < 10.0);   /* building took 15 s and GiBs */
    }
    o.chunks = 100000;
    o.target = RT_MSCCL;
    assert_null(baseline_build("ring", t8, COLL_ALLREDUCE, &o, &e));
    assert_non_null(strstr(e.msg, "steps per rank; the msccl runtime holds 216 tbs of 256 steps"));
    o.chunks = 10000;
    assert_null(baseline_build("ring", t8, COLL_ALLREDUCE, &o, &e));
    assert_non_null(strstr(e.msg, "or --target unlimited to simulate it anyway"));
    /* what fits is still built: 71 chunks a step in the butterfly's runs */
    o.chunks = 20000;
    o.target = RT_UNLIMITED;
    prog *p = baseline_build("butterfly", t8, COLL_ALLGATHER, &o, &e);
    assert_non_null(p);
    prog_free(p);
    topo_free(t8);
}

/* Hand-made multi-node shapes: one rank per node, and NICs on only some
 * ranks (the ring must enter and leave each node through them). */
/* --algo hier in every variant the synthesizer tries: channels (the
 * pipeline's halves), chunks, the node's reduction interleaved or not,
 * steps capped to one chunk (a size whose chunks fill the runtimes' tile),
 * each collective: the data checked in every mode it claims. */
static void test_hier_variants(void **state)
{
    (void)state;
    static const char *const machines[] = {"topologies/dgx-h100-x2.json"};
    static const coll_kind colls[] = {COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_ALLREDUCE};
    for (size_t m = 0; m < sizeof machines / sizeof *machines; m++) {
        tc_err e;
        topo *t = topo_load(machines[m], &e);
        if (!t)
            fail_msg("%s: %s", machines[m], e.msg);
        for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
            for (int ch = 1; ch <= 4; ch += 3)
                for (int v = 0; v < 4; v++) {
                    baseline_opts o;
                    baseline_opts_default(&o);
                    o.target = RT_UNLIMITED;
                    o.channels = ch;
                    o.chunks = 1 + (v & 1);
                    o.node_interleave = v >> 1;
                    o.size_bytes = (v & 1) ? 1LL << 30 : 0;
                    verify("hier", t, colls[c], &o);
                }
        topo_free(t);
    }
}

static void test_small_multinode(void **state)
{
    (void)state;
    const char *one_per_node =
        "{\"name\": \"four-nodes\", \"nodes\": 4, \"ranks_per_node\": 1,"
        " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed\"},"
        " \"nics\": [{\"ranks\": [0], \"alpha_us\": 2, \"bandwidth_gbps\": 12.5, \"source\": \"assumed\"}]}";
    const char *two_nics =
        "{\"name\": \"two-by-three\", \"nodes\": 2, \"ranks_per_node\": 3,"
        " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed\"},"
        " \"links\": [{\"pairs\": [[0, 1], [1, 2]], \"alpha_us\": 0.5, \"bandwidth_gbps\": 50,"
        " \"source\": \"assumed\"}],"
        " \"nics\": [{\"ranks\": [0, 2], \"alpha_us\": 2, \"bandwidth_gbps\": 12.5, \"source\": \"assumed\"}]}";
    tc_err e;
    topo *a = topo_parse(one_per_node, "four-nodes", &e);
    topo *b = topo_parse(two_nics, "two-by-three", &e);
    assert_non_null(a);
    assert_non_null(b);
    baseline_opts o;
    baseline_opts_default(&o);
    for (int k = 0; k < COLL_COUNT; k++) {
        if (supports("ring", (coll_kind)k)) {
            verify("ring", a, (coll_kind)k, &o);
            verify("ring", b, (coll_kind)k, &o);
        }
        verify("direct", a, (coll_kind)k, &o);
    }
    verify("tree", a, COLL_ALLREDUCE, &o);
    verify("tree", b, COLL_ALLREDUCE, &o);
    verify("butterfly", a, COLL_ALLREDUCE, &o);
    /* the path through node 0 must run 0-1-2 (the NIC ranks at its ends) */
    baseline_rings rg;
    assert_int_equal(baseline_find_rings(b, 8, &rg, &e), TC_OK);
    assert_int_equal(rg.nrings, 2);
    assert_int_equal(rg.order[1], 1);
    assert_int_equal(rg.order[4], 4);
    baseline_rings_free(&rg);
    /* direct: rank 1 has no NIC, so it cannot reach node 1 */
    assert_null(baseline_build("direct", b, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "no link, switch or NIC"));
    topo_free(a);
    topo_free(b);
}

/* Direct over more than 33 ranks spreads its peers over channel groups
 * (<= 32 peer tbs per channel); beyond 129 ranks the reduction chain's
 * depid exceeds 127 and only --target unlimited builds it. */
static void test_direct_many_ranks(void **state)
{
    (void)state;
    topo *t = topo_default(40);
    baseline_opts o;
    baseline_opts_default(&o);
    run_report rep;
    prog *p = build_and_verify("direct", t, COLL_ALLTOALL, &o, &rep);
    assert_int_equal(p->nchannels, 2);
    run_report_free(&rep);
    prog_free(p);
    verify("direct", t, COLL_REDUCESCATTER, &o);
    verify("rsag", t, COLL_ALLREDUCE, &o);
    topo_free(t);
    t = topo_default(131);
    tc_err e;
    assert_null(baseline_build("direct", t, COLL_REDUCESCATTER, &o, &e));
    assert_non_null(strstr(e.msg, "depid"));
    assert_non_null(strstr(e.msg, "--target unlimited"));
    o.target = RT_UNLIMITED;
    p = baseline_build("direct", t, COLL_REDUCESCATTER, &o, &e);
    assert_non_null(p);
    prog_free(p);
    topo_free(t);
}

/* --algo nccl on every bundled GPU machine, every collective, at a size
 * where NCCL picks LL and one where it picks Simple: builds and verifies
 * (data checked) with the protocol NCCL chose recorded in the program. */
static void test_nccl_bundled(void **state)
{
    (void)state;
    static const char *names[] = {
        "dgx1", "dgx2-x1", "dgx2-x2", "ndv2-x1", "ndv2-x2", "ndv2-x4",
        "dgx-a100-x1", "dgx-a100-x2", "dgx-a100-x4", "dgx-h100-x1", "dgx-h100-x2",
        "dgx-h100-x4", "ndv4-x1", "ndv4-x2", "ndv4-x4", "ndv5-x1", "ndv5-x2", "ndv5-x4"};
    static const long long sizes[] = {8192, 1LL << 30};
    /* make check: in its plain lane (TACCL_FEW) one machine of each kind,
     * in its sanitized one (TACCL_QUICK) a one-node and a two-node one;
     * make check-full runs all */
    const char *q = getenv("TACCL_QUICK"), *few = getenv("TACCL_FEW");
    int quick = q && *q && strcmp(q, "0");
    int some = quick || (few && *few && strcmp(few, "0"));
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int kind = !strcmp(names[i], "ndv2-x2") || !strcmp(names[i], "ndv5-x1");
        if (some && !kind && (quick || (strcmp(names[i], "dgx2-x1") &&
                                        strcmp(names[i], "dgx-a100-x2"))))
            continue;
        topo *t = fx_topo(names[i]);
        for (int k = 0; k < COLL_COUNT; k++)
            for (int z = 0; z < 2; z++) {
                if (t->nranks > 16 && z == 0 && k == COLL_ALLTOALL)
                    continue;   /* the 32-rank AllToAll once is enough */
                baseline_opts o;
                baseline_opts_default(&o);
                o.size_bytes = sizes[z];
                run_report rep;
                prog *p = build_and_verify("nccl", t, (coll_kind)k, &o, &rep);
                if (z == 0)
                    assert_string_equal(p->proto, "LL");
                else
                    assert_string_equal(p->proto, "Simple");
                assert_non_null(strstr(p->name, "nccl"));
                run_report_free(&rep);
                prog_free(p);
            }
        topo_free(t);
    }
}

/* Every NIC of t carries traffic of p in each direction; with `per_nic`
 * > 0, that many tbs send out of each NIC (NIC-disjoint channels). */
static void assert_every_nic(const topo *t, const prog *p, int per_nic, const char *what)
{
    unsigned char *out = calloc((size_t)t->nnics, 1), *in = calloc((size_t)t->nnics, 1);
    int *egress = calloc((size_t)t->nnics, sizeof *egress);
    for (int r = 0; r < p->ngpu; r++)
        for (int b = 0; b < p->gpus[r].ntbs; b++) {
            const prog_tb *tb = &p->gpus[r].tbs[b];
            if (tb->send < 0)
                continue;
            topo_route rt = topo_route_of(t, r, tb->send);
            if (rt.kind != ROUTE_NIC)
                continue;
            out[rt.nic_src] = in[rt.nic_dst] = 1;
            egress[rt.nic_src]++;
        }
    for (int x = 0; x < t->nnics; x++) {
        if (!out[x] || !in[x])
            fail_msg("%s: NIC %d unused %s", what, x, out[x] ? "inbound" : "outbound");
        if (per_nic > 0)
            assert_int_equal(egress[x], per_nic);
    }
    free(out);
    free(in);
    free(egress);
}

/* On a node with several NICs NCCL's channels leave and enter the node
 * each through its own NIC: at a size where every channel is used, every
 * NIC carries traffic in each direction — the ring channels (AllGather at
 * 1 GiB) and the tree channels that follow them (AllReduce at 1 MiB, where
 * NCCL picks its tree on these machines). */
static void test_nccl_uses_every_nic(void **state)
{
    (void)state;
    static const char *names[] = {"dgx2-x2", "dgx-a100-x2", "dgx-h100-x4", "ndv4-x2"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        topo *t = fx_topo(names[i]);
        baseline_opts o;
        baseline_opts_default(&o);
        o.size_bytes = 1LL << 30;
        baseline_stats st;
        tc_err e;
        prog *p = baseline_build_stats("nccl", t, COLL_ALLGATHER, &o, &st, &e);
        if (!p)
            fail_msg("%s: %s", names[i], e.msg);
        int per_node = 0;
        for (int x = 0; x < t->nnics; x++)
            per_node += t->nics[x].node == 0;
        assert_int_equal(st.nccl.rings, per_node);     /* one ring per NIC */
        assert_int_equal(st.channels, 2 * per_node);   /* duplicated, as NCCL does */
        /* NIC-disjoint: the two copies of one ring, nothing else */
        assert_every_nic(t, p, 2, names[i]);
        prog_free(p);
        topo_free(t);
    }
    topo *t = fx_topo("dgx2-x2");
    baseline_opts o;
    baseline_opts_default(&o);
    o.size_bytes = 1 << 20;
    baseline_stats st;
    tc_err e;
    prog *p = baseline_build_stats("nccl", t, COLL_ALLREDUCE, &o, &st, &e);
    assert_non_null(p);
    assert_string_equal(st.nccl.algo, "tree");
    assert_every_nic(t, p, 0, "dgx2-x2 tree");
    prog_free(p);
    topo_free(t);
}

/* What nccl refuses: a chip device, and the knobs NCCL sets itself. */
static void test_nccl_refusals(void **state)
{
    (void)state;
    tc_err e;
    baseline_opts o;
    baseline_opts_default(&o);
    topo *t = fx_topo("cs-chip4");
    assert_null(baseline_build("nccl", t, COLL_ALLGATHER, &o, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "NCCL runs on GPUs"));
    topo_free(t);
    t = fx_topo("ndv2-x1");
    o.channels = 2;
    assert_null(baseline_build("nccl", t, COLL_ALLGATHER, &o, &e));
    assert_non_null(strstr(e.msg, "--channels"));
    topo_free(t);
}

static void test_deterministic(void **state)
{
    (void)state;
    topo *t = fx_topo("ndv2-x2");
    const char *algos[] = {"ring", "tree", "butterfly"};
    for (int a = 0; a < 3; a++) {
        baseline_opts o;
        baseline_opts_default(&o);
        tc_err e;
        prog *p1 = baseline_build(algos[a], t, COLL_ALLREDUCE, &o, &e);
        prog *p2 = baseline_build(algos[a], t, COLL_ALLREDUCE, &o, &e);
        assert_non_null(p1);
        assert_non_null(p2);
        xml_write_opts wo = {.runtime = RT_ANY, .embed_topology = 0};
        char *x1 = prog_to_xml(p1, &wo, &e), *x2 = prog_to_xml(p2, &wo, &e);
        assert_non_null(x1);
        assert_string_equal(x1, x2);
        free(x1);
        free(x2);
        prog_free(p1);
        prog_free(p2);
    }
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_default_topologies),
        cmocka_unit_test(test_gpu_topologies),
        cmocka_unit_test(test_torus_and_chip_topologies),
        cmocka_unit_test(test_rsag_vias_and_chunking),
        cmocka_unit_test(test_tree_multinode),
        cmocka_unit_test(test_tree_complementary),
        cmocka_unit_test(test_ring_time_is_textbook),
        cmocka_unit_test(test_case_study_syncs),
        cmocka_unit_test(test_ring_counts),
        cmocka_unit_test(test_large_rings),
        cmocka_unit_test(test_large_build),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_too_large_before_building),
        cmocka_unit_test(test_small_multinode),
        cmocka_unit_test(test_hier_variants),
        cmocka_unit_test(test_direct_many_ranks),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_nccl_bundled),
        cmocka_unit_test(test_nccl_uses_every_nic),
        cmocka_unit_test(test_nccl_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
