/* test_sketch.c — communication sketches: TACCL's published sketches load
 * with TACCL's meaning (relay pairs, sender map, switches, symmetry), the
 * bundled files check against the topologies they name, the expansions of
 * "fully-connected" / "direct-map" / explicit maps / rev maps give the right
 * pairs, and every malformed or inconsistent sketch is refused with
 * TC_INPUT and a message naming the line and key.  Runs from the repository
 * root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>

#include "model/sketch.h"

/* TACCL's published set and ours must all be there; every file in
 * sketches/ is checked (a new one needs no edit here). */
static const char *const REQUIRED[] = {
    "sketches/dgx2-x2-sk-1.json",      "sketches/dgx2-x2-sk-2.json",
    "sketches/dgx2-x1-sk-1.json",      "sketches/dgx2-x1-sk-1-cup2.json",
    "sketches/ndv2-x1-sk-1.json",      "sketches/ndv2-x1-sk-1-cup6.json",
    "sketches/ndv2-x2-sk-1.json",      "sketches/ndv2-x2-sk-2.json",
    "sketches/ndv2-x2-sk-3.json",      "sketches/ndv2-x4-sk-1.json",
    "sketches/ndv2-x4-sk-2.json",      "sketches/cs-chip4-sk-1.json",
    "sketches/cs-cluster2-sk-1.json",  "sketches/cs-chip4x2-sk-1.json",
    "sketches/torus-2d-4x4-sk-1.json", "sketches/torus-2d-8x8-sk-1.json",
    "sketches/mesh-2d-8x8-sk-1.json",  "sketches/torus-3d-4x4x4-sk-1.json",
};
#define NREQUIRED ((int)(sizeof REQUIRED / sizeof REQUIRED[0]))

static sketch *load_ok(const char *path)
{
    tc_err e;
    tc_err_clear(&e);
    sketch *s = sketch_load(path, &e);
    if (!s)
        print_error("%s: %s\n", path, e.msg);
    assert_non_null(s);
    return s;
}

static sketch *parse_ok(const char *text)
{
    tc_err e;
    tc_err_clear(&e);
    sketch *s = sketch_parse(text, "inline", &e);
    if (!s)
        print_error("%s\n", e.msg);
    assert_non_null(s);
    return s;
}

static topo *topo_ok(const char *path)
{
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_load(path, &e);
    if (!t)
        print_error("%s: %s\n", path, e.msg);
    assert_non_null(t);
    return t;
}

static void check_ok(const sketch *s, const topo *t)
{
    tc_err e;
    tc_err_clear(&e);
    int rc = sketch_check(s, t, &e);
    if (rc != TC_OK)
        print_error("%s\n", e.msg);
    assert_int_equal(rc, TC_OK);
}

static void assert_contains(const char *msg, const char *want)
{
    if (!strstr(msg, want)) {
        print_error("message \"%s\"\n  lacks \"%s\"\n", msg, want);
        fail();
    }
}

/* ------------------------------------------------------------ bundled */

static void test_bundled_load_and_check(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("sketches/*.json", 0, NULL, &g), 0);
    for (int r = 0; r < NREQUIRED; r++) {
        int found = 0;
        for (size_t i = 0; i < g.gl_pathc; i++)
            found |= strcmp(g.gl_pathv[i], REQUIRED[r]) == 0;
        if (!found)
            print_error("missing bundled sketch %s\n", REQUIRED[r]);
        assert_true(found);
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        sketch *s = load_ok(g.gl_pathv[i]);
        /* Each names its topology, its default collective and a size. */
        assert_true(strncmp(s->topology, "topologies/", 11) == 0);
        assert_true(s->has_coll);
        assert_true(s->input_size > 0);
        /* The name is the file's base name. */
        assert_non_null(strstr(g.gl_pathv[i], s->name));
        topo *t = topo_ok(s->topology);
        check_ok(s, t);
        assert_int_equal(s->nnodes, t->nnodes);
        long long cb = 0;
        assert_int_equal(sketch_chunk_bytes(s, t->nranks, t->dma_bytes, s->input_size, &cb,
                                            NULL), TC_OK);
        assert_int_equal(cb * t->nranks * s->chunkup, s->input_size);
        topo_free(t);
        sketch_free(s);
    }
    globfree(&g);
}

/* TACCL's dgx2-sk-1: uc-min switch, odd GPUs relay to even GPUs of the other
 * node, chunks of 2k and 2k+1 leave through 2k+1, input_chunkup 2. */
static void test_dgx2_sk1_facts(void **state)
{
    (void)state;
    sketch *s = load_ok("sketches/dgx2-x2-sk-1.json");
    assert_int_equal(s->nnodes, 2);
    assert_int_equal(s->intra, SK_INTRA_SWITCH);
    assert_int_equal(s->nswitches, 1);
    assert_int_equal(s->switches[0].nranks, 16);
    assert_int_equal(s->switches[0].uc, SK_UC_MIN);
    assert_int_equal(s->conn, SK_CONN_MAP);
    assert_int_equal(s->nconn, 8);
    assert_true(s->has_via);
    assert_true(s->enforce_ordering);
    assert_int_equal(s->chunkup, 2);
    assert_int_equal(s->nsym, 2);
    assert_int_equal(s->sym[0].offset, 2);
    assert_int_equal(s->sym[0].size, 16);
    assert_int_equal(s->sym[1].offset, 16);
    assert_int_equal(s->sym[1].size, 32);
    assert_int_equal(s->coll, COLL_ALLGATHER);
    assert_int_equal(s->input_size, 64LL << 20);
    assert_int_equal(s->backend, SK_SOLVER_GLPK);
    assert_true(s->route_time_s == 1800 && s->contig_time_s == 1800);
    assert_true(s->mip_gap < 0);

    unsigned char m[16 * 16];
    sketch_internode_matrix(s, 16, m);
    int ones = 0;
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) {
            int want = (a % 2 == 1 && b == a - 1);
            assert_int_equal(m[a * 16 + b], want);
            ones += m[a * 16 + b];
        }
    assert_int_equal(ones, 8);
    int out[16];
    for (int g = 0; g < 16; g++) {
        assert_int_equal(sketch_senders_of(s, 16, g, out), 1);
        assert_int_equal(out[0], g | 1);
    }
    assert_false(sketch_leaves_via(s, 16, 0, 0));
    assert_true(sketch_leaves_via(s, 16, 1, 1));
    /* Out of range asks are "no", not a crash. */
    assert_false(sketch_internode_ok(s, 16, 17, 16));
    assert_false(sketch_leaves_via(s, 16, -1, 1));
    sketch_free(s);
}

/* TACCL's dgx2-sk-2: uc-max, direct-map (local i -> local i), own chunks. */
static void test_direct_map(void **state)
{
    (void)state;
    sketch *s = load_ok("sketches/dgx2-x2-sk-2.json");
    assert_int_equal(s->switches[0].uc, SK_UC_MAX);
    assert_int_equal(s->conn, SK_CONN_DIRECT);
    assert_false(s->enforce_ordering);
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++)
            assert_int_equal(sketch_internode_ok(s, 16, a, b), a == b);
    int out[16];
    for (int g = 0; g < 16; g++) {
        assert_int_equal(sketch_senders_of(s, 16, g, out), 1);
        assert_int_equal(out[0], g);
    }
    sketch_free(s);
}

/* "fully-connected" and no rev map: every pair, every sender. */
static void test_fully_connected(void **state)
{
    (void)state;
    sketch *s = load_ok("sketches/ndv2-x2-sk-2.json");
    assert_int_equal(s->conn, SK_CONN_FULL);
    assert_false(s->has_via);
    assert_int_equal(s->coll, COLL_ALLTOALL);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            assert_true(sketch_internode_ok(s, 8, a, b));
    int out[8];
    assert_int_equal(sketch_senders_of(s, 8, 5, out), 8);
    sketch_free(s);
}

/* An explicit map without a rev map: only the listed pairs, and chunks
 * leave through the listed senders only (TACCL's ndv2-sk-1: GPU 0 -> 1). */
static void test_explicit_map(void **state)
{
    (void)state;
    sketch *s = load_ok("sketches/ndv2-x2-sk-1.json");
    assert_int_equal(s->conn, SK_CONN_MAP);
    assert_int_equal(s->nconn, 1);
    assert_int_equal(s->conn_pairs[0].sender, 0);
    assert_int_equal(s->conn_pairs[0].receiver, 1);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            assert_int_equal(sketch_internode_ok(s, 8, a, b), a == 0 && b == 1);
    int out[8];
    for (int g = 0; g < 8; g++) {
        assert_int_equal(sketch_senders_of(s, 8, g, out), 1);
        assert_int_equal(out[0], 0);
    }
    sketch_free(s);

    /* Several receivers per sender, unequal counts, and a rev map that lets
     * a rank leave through two senders. */
    s = parse_ok("{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\","
                 " \"internode_conn\": {\"2\": [3, 0], \"5\": [5]},"
                 " \"gpus_to_sender_rev_map\": {\"2\": [0, 1, 2, 3], \"5\": [3, 4, 5, 6, 7]}}}");
    assert_true(sketch_internode_ok(s, 8, 2, 3));
    assert_true(sketch_internode_ok(s, 8, 2, 0));
    assert_true(sketch_internode_ok(s, 8, 5, 5));
    assert_false(sketch_internode_ok(s, 8, 5, 3));
    assert_false(sketch_internode_ok(s, 8, 3, 2));
    assert_int_equal(sketch_senders_of(s, 8, 3, out), 2);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 5);
    assert_int_equal(sketch_senders_of(s, 8, 7, out), 1);
    assert_int_equal(out[0], 5);
    topo *t = topo_ok("topologies/ndv2-x2.json");
    check_ok(s, t);
    topo_free(t);
    sketch_free(s);
}

/* No internode_sketch on several nodes: no restriction (TACCL asserted). */
static void test_no_internode_sketch(void **state)
{
    (void)state;
    sketch *s = parse_ok("{\"nnodes\": 2}");
    assert_false(s->has_internode);
    assert_int_equal(s->conn, SK_CONN_NONE);
    assert_int_equal(s->intra, SK_INTRA_NONE);
    assert_int_equal(s->chunkup, 1);
    assert_false(s->has_coll);
    assert_int_equal(s->input_size, 0);
    assert_string_equal(s->name, "inline");
    assert_true(sketch_internode_ok(s, 8, 3, 6));
    assert_true(sketch_leaves_via(s, 8, 3, 6));
    topo *t = topo_ok("topologies/ndv2-x2.json");
    check_ok(s, t);
    topo_free(t);
    sketch_free(s);
}

/* TACCL's own single-node files (no internode_sketch; TACCL itself then
 * crashed reading enforce_ordering) and its multi-node files, with only
 * TACCL's keys. */
static void test_taccl_files_unchanged(void **state)
{
    (void)state;
    static const struct {
        const char *topo, *text;
    } cases[] = {
        {"topologies/ndv2-x1.json",
         "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"none\"},"
         " \"symmetry_offsets\": [], \"hyperparameters\": {\"input_chunkup\": 6}}"},
        {"topologies/dgx2-x1.json",
         "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\":"
         " [[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]], \"switch_hyperedge_strategy\": [\"uc-min\"]},"
         " \"symmetry_offsets\": [[2, 16]], \"hyperparameters\": {\"input_chunkup\": 2}}"},
        {"topologies/ndv2-x4.json",
         "{\"nnodes\": 4, \"intranode_sketch\": {\"strategy\": \"none\"}, \"internode_sketch\":"
         " {\"strategy\": \"relay\", \"internode_conn\": {\"0\" : [1]}},"
         " \"symmetry_offsets\": [[8,32]], \"hyperparameters\": {\"input_chunkup\": 1}}"},
        {"topologies/ndv2-x2.json",
         "{\"nnodes\": 2, \"intranode_sketch\": {\"strategy\": \"minmax\"},"
         " \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": \"direct-map\"},"
         " \"symmetry_offsets\": [[8,16]], \"hyperparameters\": {\"input_chunkup\": 1}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sketch *s = parse_ok(cases[i].text);
        topo *t = topo_ok(cases[i].topo);
        check_ok(s, t);
        assert_false(s->enforce_ordering);
        if (s->nnodes == 1)
            assert_false(s->has_internode);
        topo_free(t);
        sketch_free(s);
    }
    sketch *s = parse_ok(cases[3].text);
    assert_int_equal(s->intra, SK_INTRA_MINMAX);
    sketch_free(s);
}

/* rank r -> (r % size + offset) % size + (r / size) * size. */
static void test_sym_rank_dgx2(void **state)
{
    (void)state;
    sketch *s = load_ok("sketches/dgx2-x2-sk-1.json");
    /* [2, 16]: rotate by two GPUs inside each node. */
    assert_int_equal(sketch_sym_rank(s, 0, 0), 2);
    assert_int_equal(sketch_sym_rank(s, 13, 0), 15);
    assert_int_equal(sketch_sym_rank(s, 14, 0), 0);
    assert_int_equal(sketch_sym_rank(s, 15, 0), 1);
    assert_int_equal(sketch_sym_rank(s, 16, 0), 18);
    assert_int_equal(sketch_sym_rank(s, 31, 0), 17);
    /* [16, 32]: swap the nodes. */
    assert_int_equal(sketch_sym_rank(s, 0, 1), 16);
    assert_int_equal(sketch_sym_rank(s, 5, 1), 21);
    assert_int_equal(sketch_sym_rank(s, 21, 1), 5);
    /* Orbits: 8 steps of [2,16] and 2 of [16,32] come back; a permutation. */
    for (int which = 0; which < 2; which++) {
        int seen[32] = {0};
        for (int r = 0; r < 32; r++) {
            int x = r, steps = 0;
            do {
                x = sketch_sym_rank(s, x, which);
                steps++;
            } while (x != r && steps < 64);
            assert_int_equal(steps, which == 0 ? 8 : 2);
            seen[sketch_sym_rank(s, r, which)]++;
        }
        for (int r = 0; r < 32; r++)
            assert_int_equal(seen[r], 1);
    }
    /* The relay respects it: 1 -> 0' maps to 3 -> 2'. */
    assert_true(sketch_internode_ok(s, 16, sketch_sym_rank(s, 1, 0) % 16,
                                    sketch_sym_rank(s, 16, 0) % 16));
    assert_int_equal(sketch_sym_rank(s, 0, 2), -1);
    assert_int_equal(sketch_sym_rank(s, -1, 0), -1);
    sketch_free(s);
}

/* Sizes: strings and numbers, and the chunk arithmetic. */
static void test_sizes_and_solver(void **state)
{
    (void)state;
    sketch *s = parse_ok("{\"nnodes\": 1, \"input_size\": \"64K\", \"collective\": \"Reduce_Scatter\","
                         " \"hyperparameters\": {\"input_chunkup\": 2},"
                         " \"solver\": {\"backend\": \"cbc\", \"time_limit_s\": 30, \"mip_gap\": 0}}");
    assert_int_equal(s->input_size, 65536);
    assert_int_equal(s->coll, COLL_REDUCESCATTER);
    assert_int_equal(s->backend, SK_SOLVER_CBC);
    assert_true(s->route_time_s == 30 && s->contig_time_s == 30);
    assert_true(s->mip_gap == 0);
    long long cb = 0;
    assert_int_equal(sketch_chunk_bytes(s, 16, 0, 1 << 20, &cb, NULL), TC_OK);
    assert_int_equal(cb, 32768);
    tc_err e;
    tc_err_clear(&e);
    assert_int_equal(sketch_chunk_bytes(s, 16, 256, 16 * 2 * 128, &cb, &e), TC_INPUT);
    assert_contains(e.msg, "4096 bytes is not a multiple of 8192: reducescatter over 16 ranks "
                           "with input_chunkup 2 moves 32 equal chunks, each a whole number of "
                           "256-byte DMA segments");
    /* chunks of whole 4-byte elements: 32 chunks of 2 bytes are not */
    tc_err_clear(&e);
    assert_int_equal(sketch_chunk_bytes(s, 16, 0, 16 * 2 * 2, &cb, &e), TC_INPUT);
    assert_contains(e.msg, "64 bytes is not a multiple of 128: reducescatter over 16 ranks with "
                           "input_chunkup 2 moves 32 equal chunks, each a whole number of 4-byte "
                           "elements");
    assert_int_equal(sketch_chunk_bytes(s, 16, 0, 16 * 2 * 4, &cb, NULL), TC_OK);
    assert_int_equal(cb, 4);
    assert_int_equal(sketch_chunk_grain(0), 4);
    assert_int_equal(sketch_chunk_grain(256), 256);
    assert_int_equal(sketch_chunk_grain(6), 12);
    sketch_free(s);

    s = parse_ok("{\"nnodes\": 1, \"input_size\": 1024,"
                 " \"solver\": {\"time_limit_s\": {\"route\": 5}}}");
    assert_int_equal(s->input_size, 1024);
    assert_true(s->route_time_s == 5 && s->contig_time_s == 0);
    sketch_free(s);
}

/* ------------------------------------------------------------- errors */

typedef struct {
    const char *topo;   /* NULL: the parse must fail; else parse, then check */
    const char *text;
    const char *want;   /* "inline:LINE: KEY: ..." prefix (or any substring) */
    const char *also;   /* a second substring, or NULL */
} bad_case;

#define REL(conn) "\"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": " conn "}"

static const bad_case BAD[] = {
    /* wrong types */
    {NULL, "{\"nnodes\": \"2\"}", "inline:1: nnodes: expected an integer", "got \"2\""},
    {NULL, "{\"nnodes\": 0}", "inline:1: nnodes: expected an integer in 1..", "got 0"},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": []}", "inline:1: intranode_sketch: expected an object", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": \"all\", "
           "\"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:1: intranode_sketch.switches: expected a non-empty array", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": "
           "\"direct-map\", \"gpus_to_sender_rev_map\": {\"0\": [0]}, \"enforce_ordering\": 1}}",
     "inline:1: internode_sketch.enforce_ordering: expected true or false", NULL},
    {NULL, "{\"nnodes\": 1, \"hyperparameters\": {\"input_chunkup\": 1.5}}",
     "inline:1: hyperparameters.input_chunkup: expected an integer in 1..64", "got 1.5"},
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": [[2]]}",
     "inline:1: symmetry_offsets[0]: expected [offset, group_size]", NULL},
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": {\"2\": 16}}",
     "inline:1: symmetry_offsets: expected an array", NULL},
    {NULL, "[1, 2]", "inline:1: (top level): expected a JSON object describing a sketch", NULL},
    {NULL, "{\"nnodes\": 1, \"notes\": 3}", "inline:1: notes: expected a string or an array", NULL},
    {NULL, "{\"nnodes\": 1, \"topology\": \"\"}", "inline:1: topology: expected a non-empty string", NULL},
    /* unknown keys, duplicates */
    {NULL, "{\"nnode\": 2}", "inline:1: nnode: unknown key (expected one of: name, ", NULL},
    {NULL, "{\"nnodes\": 1,\n \"intranode_sketch\": {\"strategy\": \"none\",\n \"switch\": [[0, 1]]}}",
     "inline:3: intranode_sketch.switch: unknown key", NULL},
    {NULL, "{\"nnodes\": 1, \"hyperparameters\": {\"input_chunk_up\": 2}}",
     "inline:1: hyperparameters.input_chunk_up: unknown key", NULL},
    {NULL, "{\"nnodes\": 1,\n\"nnodes\": 1}", "inline:2: nnodes: duplicate key", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"backend\": \"glpk\", \"timelimit\": 3}}",
     "inline:1: solver.timelimit: unknown key", NULL},
    /* unknown strategies and names */
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"ring\"}}",
     "inline:1: intranode_sketch.strategy: unknown strategy \"ring\"", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {}}",
     "inline:1: intranode_sketch.strategy: missing", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"switch\", \"internode_conn\": \"direct-map\"}}",
     "inline:1: internode_sketch.strategy: unknown strategy \"switch\" (expected \"relay\")", NULL},
    {NULL, "{\"nnodes\": 2, " REL("\"full\"") "}",
     "inline:1: internode_sketch.internode_conn: unknown connection strategy \"full\"", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\"}}",
     "inline:1: internode_sketch.internode_conn: missing", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, 1]], "
           "\"switch_hyperedge_strategy\": [\"uc-mid\"]}}",
     "inline:1: intranode_sketch.switch_hyperedge_strategy[0]: unknown switch hyperedge strategy \"uc-mid\"", NULL},
    {NULL, "{\"nnodes\": 1, \"collective\": \"broadcast\"}",
     "inline:1: collective: unknown collective \"broadcast\"", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"backend\": \"gurobi\"}}",
     "inline:1: solver.backend: unknown backend \"gurobi\"", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"time_limit_s\": -1}}",
     "inline:1: solver.time_limit_s: expected a time limit in seconds", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"time_limit_s\": {\"route\": 0}}}",
     "inline:1: solver.time_limit_s.route: expected a time limit in seconds", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"time_limit_s\": 1e308}}",
     "inline:1: solver.time_limit_s: expected a time limit in seconds (a number > 0 and < 1e7)", NULL},
    {NULL, "{\"nnodes\": 1, \"solver\": {\"mip_gap\": 1}}", "inline:1: solver.mip_gap: expected a relative gap", NULL},
    /* switches */
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\",\n \"switches\": [[0, 1, 2, 3], [4, 5, 6, 7]],\n"
           " \"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:3: intranode_sketch.switch_hyperedge_strategy: has 1 entry but switches has 2", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, 1, 2], [2, 3]], "
           "\"switch_hyperedge_strategy\": [\"uc-min\", \"uc-min\"]}}",
     "inline:1: intranode_sketch.switches[1]: shares local rank 2 with switches[0]", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, 1], [1, 0]], "
           "\"switch_hyperedge_strategy\": [\"uc-min\", \"uc-max\"]}}",
     "inline:1: intranode_sketch.switch_hyperedge_strategy[1]: switches[1] is the same switch as switches[0], which is uc-min", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, 1, 1]], "
           "\"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:1: intranode_sketch.switches[0][2]: local rank 1 listed twice in this switch", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[3]], "
           "\"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:1: intranode_sketch.switches[0]: expected an array of at least 2 local ranks", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, -1]], "
           "\"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:1: intranode_sketch.switches[0][1]: expected a local rank", NULL},
    {NULL, "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"none\", \"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:1: intranode_sketch.switch_hyperedge_strategy: only allowed with strategy \"switch\"", NULL},
    /* internode */
    {NULL, "{\"nnodes\": 1,\n " REL("\"direct-map\"") "}",
     "inline:2: internode_sketch: a sketch of one node (nnodes 1) has no inter-node traffic", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{\"01\": [1]}") "}",
     "inline:1: internode_sketch.internode_conn[\"01\"]: expected a local rank as the key", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{\"zero\": [1]}") "}",
     "inline:1: internode_sketch.internode_conn[\"zero\"]: expected a local rank as the key", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{\"0\": [1],\n \"0\": [2]}") "}",
     "inline:2: internode_sketch.internode_conn[\"0\"]: local rank 0 given twice", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{\"0\": []}") "}",
     "inline:1: internode_sketch.internode_conn[\"0\"]: expected an array of at least 1 local rank, got []", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{}") "}",
     "inline:1: internode_sketch.internode_conn: expected at least one", NULL},
    {NULL, "{\"nnodes\": 2, " REL("{\"0\": [\"1\"]}") "}",
     "inline:1: internode_sketch.internode_conn[\"0\"][0]: expected a local rank", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": {\"1\": [0]},\n"
           " \"enforce_ordering\": true}}",
     "inline:2: internode_sketch.enforce_ordering: needs gpus_to_sender_rev_map", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": {\"1\": [0]},\n"
           " \"gpus_to_sender_rev_map\": {\"1\": [0, 1],\n \"3\": [2, 3]}}}",
     "inline:3: internode_sketch.gpus_to_sender_rev_map[\"3\"]: local rank 3 sends to no other node", NULL},
    {NULL, "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": \"direct-map\","
           " \"gpus_to_sender_rev_map\": [0, 1]}}",
     "inline:1: internode_sketch.gpus_to_sender_rev_map: expected {", NULL},
    /* symmetry, chunkup, size at parse time */
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": [[16, 16]]}",
     "inline:1: symmetry_offsets[0][0]: expected an offset in 1..15", "got 16"},
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": [[2, 8], [0, 8]]}",
     "inline:1: symmetry_offsets[1][0]: expected an offset in 1..7", NULL},
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": [[-2, 8]]}", "inline:1: symmetry_offsets[0][0]: expected an offset", NULL},
    {NULL, "{\"nnodes\": 1, \"symmetry_offsets\": [[1, 1]]}", "inline:1: symmetry_offsets[0][1]: expected a group size", NULL},
    {NULL, "{\"nnodes\": 1, \"hyperparameters\": {\"input_chunkup\": 0}}", "inline:1: hyperparameters.input_chunkup: expected an integer in 1..64", "got 0"},
    {NULL, "{\"nnodes\": 1, \"hyperparameters\": {\"input_chunkup\": 100000}}", "inline:1: hyperparameters.input_chunkup:", "(too large)"},
    {NULL, "{\"nnodes\": 1, \"input_size\": \"1 MB\"}", "inline:1: input_size: expected a size in bytes", "got \"1 MB\""},
    {NULL, "{\"nnodes\": 1, \"input_size\": 0}", "inline:1: input_size: expected a size in bytes", NULL},
    {NULL, "{\"nnodes\": 1, \"input_size\": 1.5}", "inline:1: input_size: expected a size in bytes", NULL},
    {NULL, "{\"nnodes\": 1, \"input_size\": true}", "inline:1: input_size: expected a size in bytes", NULL},
    /* out of range: the message names the bound it broke */
    {NULL, "{\"nnodes\": 1, \"input_size\": \"9000T\"}", "inline:1: input_size: expected a size in bytes",
     "got \"9000T\"; the largest input_size is 2^53 bytes (8 PiB)"},
    {NULL, "{\"nnodes\": 1, \"input_size\": 1e17}", "inline:1: input_size: expected a size in bytes",
     "; the largest input_size is 2^53 bytes (8 PiB)"},
    {NULL, "{\"nnodes\": 1, \"input_size\": \"0K\"}", "inline:1: input_size: expected a size in bytes",
     "got \"0K\"; a size is at least 1 byte"},

    /* against a topology */
    {"topologies/ndv2-x1.json", "{\"nnodes\": 2}", "inline:1: nnodes: is 2 but topology ndv2-x1", "has 1 node"},
    {"topologies/dgx2-x1.json", "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\",\n"
     " \"switches\": [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]], \"switch_hyperedge_strategy\": [\"uc-min\"]}}",
     "inline:2: intranode_sketch.switches[0][16]: local rank 16 does not exist: topology dgx2-x1 has 16 ranks per node (0..15)", NULL},
    {"topologies/ndv2-x1.json", "{\"nnodes\": 1, \"intranode_sketch\": {\"strategy\": \"switch\","
     " \"switches\": [[0, 1, 2, 3]], \"switch_hyperedge_strategy\": [\"uc-max\"]}}",
     "inline:1: intranode_sketch.switches[0]: local ranks [0, 1, 2, 3] are not all ports of one switch of topology ndv2-x1 (it has 0 switches per node)", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2, " REL("{\"8\": [1]}") "}",
     "inline:1: internode_sketch.internode_conn[\"8\"]: local rank 8 does not exist", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2, " REL("{\"0\": [1, 9]}") "}",
     "inline:1: internode_sketch.internode_conn[\"0\"][1]: local rank 9 does not exist", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": \"direct-map\",\n"
     " \"gpus_to_sender_rev_map\": {\"0\": [0, 1, 2, 3, 4, 5, 6, 7],\n \"8\": [8, 9, 10, 11, 12, 13, 14]}}}",
     "inline:2: internode_sketch.gpus_to_sender_rev_map: local rank 15 is in no sender's list", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": \"direct-map\",\n"
     " \"gpus_to_sender_rev_map\": {\"0\": [0, 1, 2, 3, 4, 5, 6, 7],\n \"16\": [8, 9, 10, 11, 12, 13, 14, 15]}}}",
     "inline:3: internode_sketch.gpus_to_sender_rev_map[\"16\"]: local rank 16 does not exist", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2, \"symmetry_offsets\": [[2, 12]]}",
     "inline:1: symmetry_offsets[0][1]: group size 12 does not divide the 16 ranks of topology ndv2-x2", NULL},
    {"topologies/ndv2-x1.json", "{\"nnodes\": 1, \"symmetry_offsets\": [[8, 16]]}",
     "inline:1: symmetry_offsets[0][1]: group size 16 does not divide the 8 ranks", NULL},
    {"topologies/ndv2-x1.json", "{\"nnodes\": 1,\n \"symmetry_offsets\": [[4, 8], [2, 8]]}",
     "inline:2: symmetry_offsets[1]: rotation by 2 within groups of 8 is not a symmetry of topology ndv2-x1: 1->3 (link 0.7 us, 50 GB/s) maps to 3->5 (no route)", NULL},
    {"topologies/ndv2-x1.json", "{\"nnodes\": 1, \"symmetry_offsets\": [[1, 2]]}",
     "inline:1: symmetry_offsets[0]: rotation by 1 within groups of 2 is not a symmetry of topology ndv2-x1: 0->4", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2, \"symmetry_offsets\": [[4, 16]]}",
     "inline:1: symmetry_offsets[0]: rotation by 4 within groups of 16 is not a symmetry: ranks 0 and 4 are on one node but their images 4 and 8", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, \"symmetry_offsets\": [[1, 16]]}",
     "inline:1: symmetry_offsets[0]: rotation by 1 within groups of 16 is not a symmetry of topology dgx2-x2: 0 and 1 share a NIC but 1 and 2 do not", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, " REL("{\"1\": [0], \"3\": [2]}") ", \"symmetry_offsets\": [[2, 16]]}",
     "symmetry of this sketch's internode_conn: 3->18 is allowed but 5->20 is not", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, \"intranode_sketch\": {\"strategy\": \"switch\", \"switches\": [[0, 1, 2, 3]],"
     " \"switch_hyperedge_strategy\": [\"uc-min\"]}, \"symmetry_offsets\": [[2, 16]]}",
     "symmetry of this sketch's switches: switches[0] on node 0 maps to local ranks [2, 3, 4, 5], which are not a uc-min switch", NULL},
    {"topologies/dgx2-x2.json", "{\"nnodes\": 2, \"internode_sketch\": {\"strategy\": \"relay\", \"internode_conn\": \"direct-map\","
     " \"gpus_to_sender_rev_map\": {\"0\": [0, 1, 2, 3], \"4\": [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}}, \"symmetry_offsets\": [[2, 16]]}",
     "symmetry of this sketch's gpus_to_sender_rev_map: chunks of 0 leave through 0 but chunks of 2 do not leave through 2", NULL},
    {"topologies/cs-chip4x2.json", "{\"nnodes\": 1, \"symmetry_offsets\": [[1, 8]]}",
     "inline:1: symmetry_offsets[0]: rotation by 1 within groups of 8 is not a symmetry of topology cs-chip4x2: 0->7", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2,\n \"input_size\": 1000}",
     "inline:2: input_size: 1000 bytes is not a multiple of 64: each collective over 16 ranks with input_chunkup 1 moves 16 equal chunks, each a whole number of 4-byte elements", NULL},
    {"topologies/ndv2-x2.json", "{\"nnodes\": 2, \"collective\": \"alltoall\", \"input_size\": \"1K\", \"hyperparameters\": {\"input_chunkup\": 3}}",
     "inline:1: input_size: 1024 bytes is not a multiple of 192: alltoall over 16 ranks with input_chunkup 3 moves 48 equal chunks, each a whole number of 4-byte elements", NULL},
    {"topologies/cs-chip4.json", "{\"nnodes\": 1, \"collective\": \"allreduce\", \"input_size\": 512}",
     "inline:1: input_size: 512 bytes is not a multiple of 1024: allreduce over 4 ranks with input_chunkup 1 moves 4 equal chunks, each a whole number of 256-byte DMA segments and of 4-byte elements", NULL},
};
#define NBAD ((int)(sizeof BAD / sizeof BAD[0]))

static void test_errors(void **state)
{
    (void)state;
    for (int i = 0; i < NBAD; i++) {
        tc_err e;
        tc_err_clear(&e);
        sketch *s = sketch_parse(BAD[i].text, "inline", &e);
        if (!BAD[i].topo) {
            if (s)
                print_error("case %d parsed but should not: %s\n", i, BAD[i].text);
            assert_null(s);
        } else {
            if (!s)
                print_error("case %d: %s\n", i, e.msg);
            assert_non_null(s);
            topo *t = topo_ok(BAD[i].topo);
            int rc = sketch_check(s, t, &e);
            if (rc == TC_OK)
                print_error("case %d checked but should not: %s\n", i, BAD[i].text);
            assert_int_equal(rc, TC_INPUT);
            topo_free(t);
            sketch_free(s);
        }
        assert_int_equal(e.code, TC_INPUT);
        assert_contains(e.msg, BAD[i].want);
        if (BAD[i].also)
            assert_contains(e.msg, BAD[i].also);
    }
}

/* A rank without a NIC cannot take part in the relay. */
static void test_rank_without_nic(void **state)
{
    (void)state;
    static const char *TOPO =
        "{\"name\": \"two-nics\", \"nodes\": 2, \"ranks_per_node\": 2,"
        " \"local\": {\"copy_gbps\": 100, \"reduce_gbps\": 100, \"source\": \"assumed: test\"},"
        " \"links\": [{\"pairs\": [[0, 1]], \"alpha_us\": 1, \"bandwidth_gbps\": 10, \"source\": \"assumed: test\"}],"
        " \"nics\": [{\"ranks\": [0], \"alpha_us\": 2, \"bandwidth_gbps\": 5, \"source\": \"assumed: test\"}]}";
    tc_err e;
    tc_err_clear(&e);
    topo *t = topo_parse(TOPO, "two-nics", &e);
    if (!t)
        print_error("%s\n", e.msg);
    assert_non_null(t);
    sketch *s = parse_ok("{\"nnodes\": 2, " REL("{\"0\": [0]}") "}");
    check_ok(s, t);
    sketch_free(s);
    s = parse_ok("{\"nnodes\": 2, " REL("{\"0\": [1]}") "}");
    assert_int_equal(sketch_check(s, t, &e), TC_INPUT);
    assert_contains(e.msg, "inline:1: internode_sketch.internode_conn[\"0\"][0]: local rank 1 has "
                           "no NIC in topology two-nics, so it cannot receive from another node");
    sketch_free(s);
    s = parse_ok("{\"nnodes\": 2, " REL("\"fully-connected\"") "}");
    assert_int_equal(sketch_check(s, t, &e), TC_INPUT);
    assert_contains(e.msg, "internode_sketch.internode_conn: \"fully-connected\" includes local "
                           "rank 1, which has no NIC");
    sketch_free(s);
    assert_int_equal(sketch_check(NULL, t, &e), TC_INPUT);
    topo_free(t);
}

/* Text that is not a sketch at all, from files and from memory. */
static void expect_file_error(const char *path, const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    sketch *s = sketch_load(path, &e);
    if (s)
        print_error("%s loaded but should not\n", path);
    assert_null(s);
    assert_int_equal(e.code, TC_INPUT);
    assert_contains(e.msg, want);
}

static void test_error_files(void **state)
{
    (void)state;
    expect_file_error("tests/data/sketch_bad/no-such-file.json",
                      "tests/data/sketch_bad/no-such-file.json: cannot open: ");
    expect_file_error("tests/data/sketch_bad", "tests/data/sketch_bad: is a directory");
    expect_file_error("tests/data/sketch_bad/empty.json",
                      "tests/data/sketch_bad/empty.json: empty file");
    expect_file_error("tests/data/sketch_bad/blank.json",
                      "tests/data/sketch_bad/blank.json: empty file");
    expect_file_error("tests/data/sketch_bad/not-utf8.json",
                      "tests/data/sketch_bad/not-utf8.json:3:15: not valid UTF-8 (byte 0xe9)");
    expect_file_error("tests/data/sketch_bad/nul-byte.json",
                      "tests/data/sketch_bad/nul-byte.json:2:15: contains a NUL byte");
    expect_file_error("tests/data/sketch_bad/truncated.json",
                      "tests/data/sketch_bad/truncated.json:5:1: JSON syntax error: unexpected end of file");
    expect_file_error("tests/data/sketch_bad/typo.json",
                      "tests/data/sketch_bad/typo.json:9: symmetry_offset: unknown key");
    expect_file_error("tests/data/sketch_bad/uc-count.json",
                      "tests/data/sketch_bad/uc-count.json:6: intranode_sketch.switch_hyperedge_strategy: "
                      "has 1 entry but switches has 2");
    expect_file_error(NULL, "sketch: no file name given");

    /* Parses, but its receiver 9 is not a local rank of NDv2. */
    sketch *s = load_ok("tests/data/sketch_bad/bad-receiver.json");
    topo *t = topo_ok(s->topology);
    tc_err e;
    tc_err_clear(&e);
    assert_int_equal(sketch_check(s, t, &e), TC_INPUT);
    assert_contains(e.msg, "tests/data/sketch_bad/bad-receiver.json:10: "
                           "internode_sketch.internode_conn[\"3\"][1]: local rank 9 does not exist");
    topo_free(t);
    sketch_free(s);
}

static void test_error_text(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "inline: empty file"},
        {"\xEF\xBB\xBF \n", "inline: empty file"},
        {"{\"nnodes\": 1,\n \"name\": \"x\" \"y\"}", "inline:2:"},
        {"{\"nnodes\": 1", "inline:1:13: JSON syntax error: unexpected end of file"},
        {"{\"nnodes\": 1}\n{}", "inline:2:1: JSON syntax error near '{}'"},
        {"{\"nnodes\": 1, \"name\": \"\xff\"}", "inline:1:24: not valid UTF-8 (byte 0xff)"},
        {"{\"nnodes\": 1, \"name\": \"\xc3\"}", "not valid UTF-8 (byte 0xc3)"},
        {"{\"nnodes\": 1, \"name\": \"\xed\xa0\x80\"}", "not valid UTF-8 (byte 0xed)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_err e;
        tc_err_clear(&e);
        sketch *s = sketch_parse(cases[i].text, "inline", &e);
        if (s)
            print_error("case %zu parsed but should not\n", i);
        assert_null(s);
        assert_int_equal(e.code, TC_INPUT);
        assert_contains(e.msg, cases[i].want);
    }
    tc_err e;
    assert_null(sketch_parse(NULL, NULL, &e));
    assert_contains(e.msg, "sketch: no text given");
    /* A NULL error pointer is allowed. */
    assert_null(sketch_parse("{", "inline", NULL));
    sketch_free(NULL);
    /* A UTF-8 BOM and non-ASCII text are fine. */
    sketch *s = parse_ok("\xEF\xBB\xBF{\"nnodes\": 1, \"description\": \"r\xc3\xa9sum\xc3\xa9\"}");
    sketch_free(s);
}

/* Key paths are found along the path, not by the first occurrence. */
static void test_line_is_the_right_one(void **state)
{
    (void)state;
    const char *text =
        "{\n"
        "  \"nnodes\": 2,\n"
        "  \"intranode_sketch\": {\"strategy\": \"none\"},\n"
        "  \"internode_sketch\": {\n"
        "    \"strategy\": \"relay\",\n"
        "    \"internode_conn\": {\"1\": [0], \"3\": [2]},\n"
        "    \"gpus_to_sender_rev_map\": {\n"
        "      \"1\": [0, 1],\n"
        "      \"3\": [2,\n"
        "              3, 3]\n"
        "    }\n"
        "  }\n"
        "}\n";
    tc_err e;
    tc_err_clear(&e);
    assert_null(sketch_parse(text, "f.json", &e));
    assert_contains(e.msg, "f.json:10: internode_sketch.gpus_to_sender_rev_map[\"3\"][2]: local rank 3 "
                           "listed twice in this sender's list");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_load_and_check),
        cmocka_unit_test(test_dgx2_sk1_facts),
        cmocka_unit_test(test_direct_map),
        cmocka_unit_test(test_fully_connected),
        cmocka_unit_test(test_explicit_map),
        cmocka_unit_test(test_no_internode_sketch),
        cmocka_unit_test(test_taccl_files_unchanged),
        cmocka_unit_test(test_sym_rank_dgx2),
        cmocka_unit_test(test_sizes_and_solver),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_rank_without_nic),
        cmocka_unit_test(test_error_files),
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_line_is_the_right_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
