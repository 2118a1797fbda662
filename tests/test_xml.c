/* test_xml.c — reading and writing MSCCL XML schedules (sched/xml.h).
 *
 * The reader must accept what msccl-tools and TACCL write, name the line
 * and attribute of every error, stay silent on stderr and survive hostile
 * input; the writer must emit the runtime-friendly form and round-trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched/xml.h"

/* The topology module is written in parallel with this one: while
 * src/model/topo.c does not exist (or XML_TEST_TOPO_STUB is defined) this
 * file carries a minimal stand-in that treats the JSON text as opaque. */
#if defined(XML_TEST_TOPO_STUB)
#define USE_TOPO_STUB 1
#elif defined(__has_include)
#if !__has_include("model/topo.c")
#define USE_TOPO_STUB 1
#endif
#endif

#ifdef USE_TOPO_STUB
topo *topo_parse(const char *text, const char *label, tc_err *err)
{
    if (text[0] != '{')
        return tc_err_set(err, TC_INPUT, "%s:1: not a JSON object", label), NULL;
    topo *t = calloc(1, sizeof *t);
    t->name = strdup(text);
    return t;
}

char *topo_to_json(const topo *t)
{
    return strdup(t->name);
}

void topo_free(topo *t)
{
    if (t) {
        free(t->name);
        free(t);
    }
}

topo *topo_default(int n)
{
    char buf[2048];
    int k = snprintf(buf, sizeof buf, "{\"name\": \"default \\\"%d\\\" & <ranks>\", \"links\": [", n);
    for (int i = 0; i < 30; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s{\"src\": %d, \"dst\": %d}", i ? ", " : "",
                      i % n, (i + 1) % n);
    snprintf(buf + k, sizeof buf - (size_t)k, "],\n\t\"note\": \"caf\xc3\xa9\"}");
    topo *t = calloc(1, sizeof *t);
    t->name = strdup(buf);
    t->is_default = 1;
    return t;
}
#endif

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static const char *data_path(const char *name, char *buf, size_t n)
{
    const char *root = getenv("TACCL_ROOT");
    snprintf(buf, n, "%s/tests/data/xml/%s", root ? root : ".", name);
    return buf;
}

static prog *parse_str(const char *s, tc_err *e)
{
    return prog_parse_xml(s, strlen(s), "mem.xml", e);
}

/* Parsing must fail with TC_INPUT and a message containing `needle`. */
static void expect_error(const char *xml, const char *needle)
{
    tc_err e;
    tc_err_clear(&e);
    prog *p = parse_str(xml, &e);
    if (p || !strstr(e.msg, needle))
        print_error("input:\n%s\nmessage: %s\nexpected to contain: %s\n", xml, e.msg, needle);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, needle));
}

static void expect_file_error(const char *name, const char *needle)
{
    char path[1024];
    tc_err e;
    tc_err_clear(&e);
    prog *p = prog_read_xml(data_path(name, path, sizeof path), &e);
    if (p || !strstr(e.msg, needle))
        print_error("%s: message: %s\nexpected to contain: %s\n", name, e.msg, needle);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, needle));
}

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* A 2-rank AllGather; STEP is the only step of gpu 0 (line 4). */
#define HEAD                                                                                    \
    "<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "       \
    "coll=\"allgather\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n"
#define GPU0 "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
#define TB0 "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
#define GOOD_STEP                                                                               \
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" " \
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
#define TAIL                                                                                    \
    "    </tb>\n  </gpu>\n  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n</algo>\n"

/* The 2-rank program with the step's attribute `name` set to `value`. */
static char *with_step_attr(const char *name, const char *value)
{
    static const char *names[] = {"s", "type", "srcbuf", "srcoff", "dstbuf",
                                  "dstoff", "cnt", "depid", "deps", "hasdep"};
    static const char *vals[] = {"0", "s", "i", "0", "o", "0", "1", "-1", "-1", "0"};
    char step[512] = "      <step";
    for (int i = 0; i < 10; i++) {
        const char *v = strcmp(names[i], name) == 0 ? value : vals[i];
        if (!v)
            continue; /* NULL value: leave the attribute out */
        size_t k = strlen(step);
        snprintf(step + k, sizeof step - k, " %s=\"%s\"", names[i], v);
    }
    strcat(step, "/>\n");
    size_t n = strlen(HEAD GPU0 TB0) + strlen(step) + strlen(TAIL) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%s%s%s", HEAD GPU0 TB0, step, TAIL);
    return s;
}

static void assert_steps_equal(const prog_step *a, const prog_step *b)
{
    assert_int_equal(a->s, b->s);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->srcbuf, b->srcbuf);
    assert_int_equal(a->srcoff, b->srcoff);
    assert_int_equal(a->dstbuf, b->dstbuf);
    assert_int_equal(a->dstoff, b->dstoff);
    assert_int_equal(a->cnt, b->cnt);
    assert_int_equal(a->depid, b->depid);
    assert_int_equal(a->deps, b->deps);
    assert_int_equal(a->hasdep, b->hasdep);
}

/* Every schedule field (not lines or path) of a and b agrees. */
static void assert_progs_equal(const prog *a, const prog *b)
{
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->proto, b->proto);
    assert_int_equal(a->nchannels, b->nchannels);
    assert_int_equal(a->nchunksperloop, b->nchunksperloop);
    assert_int_equal(a->ngpus, b->ngpus);
    assert_int_equal(a->coll, b->coll);
    assert_int_equal(a->inplace, b->inplace);
    assert_int_equal(a->outofplace, b->outofplace);
    assert_true(a->min_bytes == b->min_bytes);
    assert_true(a->max_bytes == b->max_bytes);
    assert_true(a->size_bytes == b->size_bytes);
    assert_true(a->predicted_us == b->predicted_us);
    assert_int_equal(a->ngpu, b->ngpu);
    for (int g = 0; g < a->ngpu; g++) {
        const prog_gpu *ga = &a->gpus[g], *gb = &b->gpus[g];
        assert_int_equal(ga->id, gb->id);
        assert_int_equal(ga->i_chunks, gb->i_chunks);
        assert_int_equal(ga->o_chunks, gb->o_chunks);
        assert_int_equal(ga->s_chunks, gb->s_chunks);
        assert_int_equal(ga->ntbs, gb->ntbs);
        for (int t = 0; t < ga->ntbs; t++) {
            const prog_tb *ta = &ga->tbs[t], *tb = &gb->tbs[t];
            assert_int_equal(ta->id, tb->id);
            assert_int_equal(ta->send, tb->send);
            assert_int_equal(ta->recv, tb->recv);
            assert_int_equal(ta->chan, tb->chan);
            assert_int_equal(ta->nsteps, tb->nsteps);
            for (int k = 0; k < ta->nsteps; k++)
                assert_steps_equal(&ta->steps[k], &tb->steps[k]);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Reading files other tools write                                     */

static void test_read_msccl_tools_ring(void **state)
{
    (void)state;
    char path[1024];
    tc_err e;
    prog *p = prog_read_xml(data_path("ring_allgather_4.xml", path, sizeof path), &e);
    if (!p)
        print_error("%s\n", e.msg);
    assert_non_null(p);
    assert_string_equal(p->name, "allgather_ring_4");
    assert_string_equal(p->proto, "Simple");
    assert_int_equal(p->nchannels, 1);
    assert_int_equal(p->nchunksperloop, 4);
    assert_int_equal(p->ngpus, 4);
    assert_int_equal(p->coll, COLL_ALLGATHER);
    assert_int_equal(p->inplace, 0);
    assert_int_equal(p->outofplace, 1);
    assert_true(p->min_bytes == 0 && p->max_bytes == 0);
    assert_null(p->topo);
    assert_true(p->size_bytes == 0);
    assert_true(p->predicted_us < 0);
    assert_string_equal(p->path, path);
    assert_int_equal(p->ngpu, 4);
    /* gpu 1 starts on line 13; its first tb sends to 2 and receives from 0. */
    const prog_gpu *g = &p->gpus[1];
    assert_int_equal(g->id, 1);
    assert_int_equal(g->line, 13);
    assert_int_equal(g->i_chunks, 1);
    assert_int_equal(g->o_chunks, 4);
    assert_int_equal(g->s_chunks, 0);
    assert_int_equal(g->ntbs, 2);
    const prog_tb *tb = &g->tbs[0];
    assert_int_equal(tb->line, 14);
    assert_int_equal(tb->send, 2);
    assert_int_equal(tb->recv, 0);
    assert_int_equal(tb->chan, 0);
    assert_int_equal(tb->nsteps, 4);
    const prog_step *st = &tb->steps[0];
    assert_int_equal(st->line, 15);
    assert_int_equal(st->type, ST_S);
    assert_int_equal(st->srcbuf, BUF_O);
    assert_int_equal(st->srcoff, 1);
    assert_int_equal(st->depid, 1);
    assert_int_equal(st->deps, 0);
    st = &tb->steps[1];
    assert_int_equal(st->type, ST_RCS);
    assert_int_equal(st->dstoff, 0);
    assert_int_equal(tb->steps[3].type, ST_R);
    assert_int_equal(tb->steps[3].s, 3);
    const prog_step *cp = &g->tbs[1].steps[0];
    assert_int_equal(cp->type, ST_CPY);
    assert_int_equal(cp->srcbuf, BUF_I);
    assert_int_equal(cp->dstbuf, BUF_O);
    assert_int_equal(cp->dstoff, 1);
    assert_int_equal(cp->hasdep, 1);
    assert_int_equal(cp->line, 21);
    prog_free(p);
}

static void test_writer_reproduces_msccl_tools_style(void **state)
{
    (void)state;
    char path[1024];
    tc_err e;
    data_path("ring_allgather_4.xml", path, sizeof path);
    prog *p = prog_read_xml(path, &e);
    assert_non_null(p);
    char *want = read_whole(path);
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    char *got = prog_to_xml(p, &o, &e);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    free(want);
    prog_free(p);
}

static void test_read_prolog(void **state)
{
    (void)state;
    char path[1024];
    tc_err e;
    prog *p = prog_read_xml(data_path("prolog.xml", path, sizeof path), &e);
    assert_non_null(p);
    assert_int_equal(p->ngpus, 2);
    assert_int_equal(p->gpus[1].tbs[0].nsteps, 2);
    assert_int_equal(p->gpus[0].line, 3);
    /* Written back without the prolog the runtimes refuse. */
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    char *x = prog_to_xml(p, &o, &e);
    assert_true(strncmp(x, "<algo ", 6) == 0);
    assert_null(strstr(x, "<?xml"));
    free(x);
    prog_free(p);
}

static void test_read_taccl_copy_elements(void **state)
{
    (void)state;
    char path[1024];
    tc_err e;
    prog *p = prog_read_xml(data_path("taccl_copy.xml", path, sizeof path), &e);
    if (!p)
        print_error("%s\n", e.msg);
    assert_non_null(p);
    assert_string_equal(p->name, "taccl");
    assert_int_equal(p->inplace, 1);
    /* Absent: the legacy runtime runs an inplace="1" algorithm only in
     * place, and caps it at 128 MB. */
    assert_int_equal(p->outofplace, 0);
    assert_true(p->min_bytes == 0);
    assert_true(p->max_bytes == 134217728);
    assert_int_equal(p->ngpu, 2);
    /* <copy> elements are skipped: two tbs each. */
    assert_int_equal(p->gpus[0].ntbs, 2);
    assert_int_equal(p->gpus[1].ntbs, 2);
    assert_int_equal(p->gpus[1].tbs[1].recv, 0);
    assert_int_equal(p->gpus[1].tbs[1].steps[0].type, ST_R);
    assert_int_equal(p->gpus[1].tbs[1].steps[0].line, 18);
    prog_free(p);
}

static void test_coll_spellings(void **state)
{
    (void)state;
    const char *spellings[] = {"reduce_scatter", "reducescatter"};
    for (int i = 0; i < 2; i++) {
        char xml[1024];
        snprintf(xml, sizeof xml,
                 "<algo name=\"rs\" proto=\"LL128\" nchannels=\"2\" nchunksperloop=\"1\" ngpus=\"1\" "
                 "coll=\"%s\" inplace=\"0\" outofplace=\"1\" minBytes=\"1024\" "
                 "maxBytes=\"9223372036854775807\">\n"
                 "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\"/>\n</algo>\n",
                 spellings[i]);
        tc_err e;
        prog *p = parse_str(xml, &e);
        assert_non_null(p);
        assert_int_equal(p->coll, COLL_REDUCESCATTER);
        assert_string_equal(p->proto, "LL128");
        assert_true(p->min_bytes == 1024);
        assert_true(p->max_bytes == 9223372036854775807LL);
        xml_write_opts legacy = {.runtime = RT_MSCCL}, newer = {.runtime = RT_EXECUTOR};
        char *a = prog_to_xml(p, &legacy, &e), *b = prog_to_xml(p, &newer, &e);
        assert_non_null(strstr(a, " coll=\"reduce_scatter\" "));
        assert_non_null(strstr(b, " coll=\"reducescatter\" "));
        free(a);
        free(b);
        prog_free(p);
    }
}

static void test_unknown_elements_and_attributes_ignored(void **state)
{
    (void)state;
    const char *xml =
        "<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
        "coll=\"allgather\" inplace=\"0\" redop=\"sum\" nthreads=\"512\">\n"
        "  <note text=\"hello\"><deeper><x/></deeper></note>\n"
        "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\" color=\"red\"/>\n"
        "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
        "    <copy i_off=\"0\" o_off=\"0\"/>\n"
        "    <tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\" extra=\"1\">\n"
        "      <op step=\"0\" type=\"s\" buf=\"i\" off=\"0\"/>\n"
        "      <x:step xmlns:x=\"urn:x\" s=\"9\"/>\n"
        "      <!-- a comment -->\n"
        "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"0\" note=\"x\"/>\n"
        "    </tb>\n"
        "  </gpu>\n"
        "</algo>\n";
    tc_err e;
    prog *p = parse_str(xml, &e);
    if (!p)
        print_error("%s\n", e.msg);
    assert_non_null(p);
    /* gpus are stored by id whatever their order in the file. */
    assert_int_equal(p->gpus[0].id, 0);
    assert_int_equal(p->gpus[0].line, 4);
    assert_int_equal(p->gpus[1].line, 3);
    assert_int_equal(p->gpus[0].ntbs, 1);
    assert_int_equal(p->gpus[0].tbs[0].nsteps, 1);
    assert_int_equal(p->gpus[0].tbs[0].steps[0].line, 10);
    assert_int_equal(p->outofplace, 1); /* default: !inplace */
    prog_free(p);
}

static void test_tb_ids_and_step_numbers_kept_as_written(void **state)
{
    (void)state;
    const char *xml = HEAD GPU0
        "    <tb id=\"5\" send=\"1\" recv=\"-1\" chan=\"3\">\n"
        "      <step s=\"7\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" "
        "depid=\"2\" deps=\"4\" hasdep=\"0\"/>\n"
        "      <step s=\"3\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
        "    </tb>\n"
        "    <tb id=\"5\" send=\"-1\" recv=\"1\" chan=\"0\"/>\n"
        "  </gpu>\n  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n</algo>\n";
    tc_err e;
    prog *p = parse_str(xml, &e);
    assert_non_null(p);
    const prog_gpu *g = &p->gpus[0];
    assert_int_equal(g->ntbs, 2);
    assert_int_equal(g->tbs[0].id, 5);
    assert_int_equal(g->tbs[1].id, 5);
    assert_int_equal(g->tbs[0].chan, 3);
    assert_int_equal(g->tbs[0].steps[0].s, 7);
    assert_int_equal(g->tbs[0].steps[0].type, ST_NOP);
    assert_int_equal(g->tbs[0].steps[0].depid, 2);
    assert_int_equal(g->tbs[0].steps[0].deps, 4);
    assert_int_equal(g->tbs[0].steps[1].s, 3);
    assert_int_equal(g->tbs[0].steps[1].hasdep, 1);
    assert_int_equal(g->tbs[1].nsteps, 0);
    prog_free(p);
}

/* ------------------------------------------------------------------ */
/* Errors name the file, line and attribute                            */

static void test_file_errors_name_line_and_attribute(void **state)
{
    (void)state;
    expect_file_error("bad_attr_type.xml",
                      "bad_attr_type.xml:16: <step> attribute cnt: expected an integer, got \"x\"");
    expect_file_error("missing_attr.xml", "missing_attr.xml:17: <step> attribute hasdep: missing");
    expect_file_error("unknown_step_type.xml",
                      "unknown_step_type.xml:27: <step> attribute type: unknown step type \"foo\"");
    expect_file_error("gpu_id_out_of_range.xml",
                      "gpu_id_out_of_range.xml:24: <gpu> attribute id: 4 is out of range 0..3");
    expect_file_error("truncated.xml", "truncated.xml:15: malformed XML");
    expect_file_error("not_xml.txt", "not_xml.txt:1: malformed XML");
    expect_file_error("empty.xml", "empty.xml:1: empty file");
}

static void test_unreadable_paths(void **state)
{
    (void)state;
    char dir[1024];
    tc_err e;
    data_path("", dir, sizeof dir);
    prog *p = prog_read_xml(dir, &e);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, ": is a directory, not a schedule file"));
    p = prog_read_xml("/nonexistent/dir/algo.xml", &e);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_string_equal(e.msg, "/nonexistent/dir/algo.xml: cannot open: No such file or directory");
    /* a FIFO is refused at once, not waited on (no writer ever comes) */
    char fifo[] = "/tmp/test_xml_fifo_XXXXXX";
    int fd = mkstemp(fifo);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(unlink(fifo), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    p = prog_read_xml(fifo, &e);
    assert_null(p);
    char want[128];
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", fifo);
    assert_string_equal(e.msg, want);
    assert_int_equal(unlink(fifo), 0);
}

static void test_integers_are_strict_decimal(void **state)
{
    (void)state;
    const char *bad[] = {"1.5", "", "abc", "+1", " 1", "1 ", "0x10", "1e3", "--1", "-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *xml = with_step_attr("cnt", bad[i]);
        char needle[128];
        snprintf(needle, sizeof needle,
                 "mem.xml:4: <step> attribute cnt: expected an integer, got \"%s\"", bad[i]);
        expect_error(xml, needle);
        free(xml);
    }
    const char *range[] = {"2147483648", "-2147483649", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof range / sizeof *range; i++) {
        char *xml = with_step_attr("srcoff", range[i]);
        expect_error(xml, "mem.xml:4: <step> attribute srcoff: ");
        expect_error(xml, "out of range");
        free(xml);
    }
    struct {
        const char *text;
        int value;
    } good[] = {{"007", 7}, {"-1", -1}, {"2147483647", 2147483647}, {"0", 0}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char *xml = with_step_attr("dstoff", good[i].text);
        tc_err e;
        prog *p = parse_str(xml, &e);
        assert_non_null(p);
        assert_int_equal(p->gpus[0].tbs[0].steps[0].dstoff, good[i].value);
        prog_free(p);
        free(xml);
    }
    /* Each attribute's own domain: an offset is -1 (msccl-tools' nops) or
     * more, a count 0 or more, a flag 0 or 1. */
    struct {
        const char *attr, *value, *needle;
    } domain[] = {
        {"dstoff", "-2", "mem.xml:4: <step> attribute dstoff: -2 is out of range (-1..2147483647)"},
        {"cnt", "-1", "mem.xml:4: <step> attribute cnt: -1 is out of range (0..2147483647)"},
        {"hasdep", "2", "mem.xml:4: <step> attribute hasdep: 2 is out of range (0..1)"},
        {"s", "-1", "mem.xml:4: <step> attribute s: -1 is out of range (0..2147483647)"},
        {"depid", "-2", "mem.xml:4: <step> attribute depid: -2 is out of range (-1..2147483647)"},
    };
    for (size_t i = 0; i < sizeof domain / sizeof *domain; i++) {
        char *xml = with_step_attr(domain[i].attr, domain[i].value);
        expect_error(xml, domain[i].needle);
        free(xml);
    }
    /* 64-bit byte limits. */
    expect_error("<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"1\" "
                 "coll=\"allreduce\" inplace=\"1\" minBytes=\"9223372036854775808\"/>",
                 "mem.xml:1: <algo> attribute minBytes: 9223372036854775808 is out of range");
}

static void test_every_step_attribute_required(void **state)
{
    (void)state;
    const char *names[] = {"s", "type", "srcbuf", "srcoff", "dstbuf",
                           "dstoff", "cnt", "depid", "deps", "hasdep"};
    for (int i = 0; i < 10; i++) {
        char *xml = with_step_attr(names[i], NULL);
        char needle[128];
        snprintf(needle, sizeof needle, "mem.xml:4: <step> attribute %s: missing", names[i]);
        expect_error(xml, needle);
        free(xml);
    }
    char *xml = with_step_attr("srcbuf", "input");
    expect_error(xml, "mem.xml:4: <step> attribute srcbuf: unknown buffer \"input\"");
    free(xml);
    xml = with_step_attr("type", "ra");
    expect_error(xml, "mem.xml:4: <step> attribute type: unknown step type \"ra\"");
    free(xml);
}

static void test_algo_and_gpu_errors(void **state)
{
    (void)state;
    const char *tb_and_gpu1 = "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n</algo>\n";
    char xml[2048];
    /* missing required <algo> attributes, named in schema order */
    expect_error("<algo name=\"t\" nchannels=\"1\"/>", "mem.xml:1: <algo> attribute proto: missing");
    expect_error("<algo proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" coll=\"allgather\"/>",
                 "mem.xml:1: <algo> attribute ngpus: missing");
    expect_error("<algo proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
                 "coll=\"allgather\"/>",
                 "mem.xml:1: <algo> attribute inplace: missing");
    expect_error("<algo proto=\"simple\"/>", "mem.xml:1: <algo> attribute proto: unknown protocol \"simple\"");
    expect_error("<algo proto=\"LL\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"broadcast\" "
                 "inplace=\"0\"/>",
                 "mem.xml:1: <algo> attribute coll: unsupported collective \"broadcast\"");
    expect_error("<algo proto=\"LL\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"0\" coll=\"allgather\" "
                 "inplace=\"0\"/>",
                 "mem.xml:1: <algo> attribute ngpus: must be at least 1");
    expect_error("<algo proto=\"LL\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"1000000000\" "
                 "coll=\"allgather\" inplace=\"0\"/>",
                 "mem.xml:1: <algo> attribute ngpus: 1000000000 is more than");
    /* duplicate, negative and missing gpu ids */
    snprintf(xml, sizeof xml, "%s%s", HEAD, "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
             "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n</algo>\n");
    expect_error(xml, "mem.xml:3: <gpu> attribute id: gpu 1 appears twice (first at line 2)");
    snprintf(xml, sizeof xml, "%s%s", HEAD, "  <gpu id=\"-1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n</algo>\n");
    expect_error(xml, "mem.xml:2: <gpu> attribute id: -1 is out of range 0..1");
    snprintf(xml, sizeof xml, "%s%s", HEAD, tb_and_gpu1);
    expect_error(xml, "mem.xml:1: <algo>: no <gpu> with id 0");
    snprintf(xml, sizeof xml, "%s%s", HEAD, "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\"/>\n</algo>\n");
    expect_error(xml, "mem.xml:2: <gpu> attribute s_chunks: missing");
    snprintf(xml, sizeof xml, "%s%s%s", HEAD, GPU0, "    <tb id=\"0\" send=\"x1\" recv=\"-1\" chan=\"0\"/>\n  </gpu>\n</algo>\n");
    expect_error(xml, "mem.xml:3: <tb> attribute send: expected an integer, got \"x1\"");
    snprintf(xml, sizeof xml, "%s%s%s", HEAD, GPU0, "    <tb id=\"0\" send=\"1\" recv=\"-1\"/>\n  </gpu>\n</algo>\n");
    expect_error(xml, "mem.xml:3: <tb> attribute chan: missing");
    /* the root must be <algo> */
    expect_error("<?xml version=\"1.0\"?>\n<schedule/>\n", "mem.xml:2: root element is <schedule>, expected <algo>");
    /* a very long value is shown shortened */
    char *longv = with_step_attr("cnt", "1111111111111111111111111111111111111111111111111111111111111111111111x");
    expect_error(longv, "got \"1111111111111111111111111111111111111111...\"");
    free(longv);
}

static void test_attribute_beyond_sixteenth_refused(void **state)
{
    (void)state;
    /* The runtimes keep only 16 attributes per element. */
    const char *xml = HEAD GPU0 TB0
        "      <step a1=\"\" a2=\"\" a3=\"\" a4=\"\" a5=\"\" a6=\"\" a7=\"\" s=\"0\" type=\"s\" "
        "srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" "
        "hasdep=\"0\"/>\n" TAIL;
    expect_error(xml, "mem.xml:4: <step> attribute hasdep: is attribute number 17");
}

/* ------------------------------------------------------------------ */
/* Hostile input                                                       */

static void test_doctype_and_entities_refused(void **state)
{
    (void)state;
    const char *lol =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE algo [\n"
        " <!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">\n"
        " <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
        " <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
        " <!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
        " <!ENTITY e SYSTEM \"file:///etc/passwd\">\n"
        "]>\n"
        "<algo name=\"&d;&e;\" proto=\"Simple\"/>\n";
    expect_error(lol, "mem.xml:2: <!DOCTYPE> is not allowed");
    /* Undeclared entities are a well-formedness error, not a lookup. */
    expect_error("<algo name=\"&e;\" proto=\"Simple\"/>", "mem.xml:1: malformed XML");
}

static void test_deep_nesting_fails_cleanly(void **state)
{
    (void)state;
    size_t depth = 100000;
    size_t n = strlen(HEAD) + depth * 3 + 1;
    char *s = malloc(n);
    strcpy(s, HEAD);
    char *q = s + strlen(s);
    for (size_t i = 0; i < depth; i++, q += 3)
        memcpy(q, "<x>", 3);
    *q = '\0';
    tc_err e;
    prog *p = parse_str(s, &e);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "mem.xml:2: <x>: elements nested too deeply"));
    free(s);
}

static void test_huge_attribute_fails_cleanly(void **state)
{
    (void)state;
    size_t big = 100u * 1000u * 1000u;
    const char *head = "<algo name=\"";
    const char *tail = "\" proto=\"Simple\"/>\n";
    size_t n = strlen(head) + big + strlen(tail);
    char *s = malloc(n + 1);
    memcpy(s, head, strlen(head));
    memset(s + strlen(head), 'a', big);
    memcpy(s + strlen(head) + big, tail, strlen(tail) + 1);
    tc_err e;
    prog *p = prog_parse_xml(s, n, "big.xml", &e);
    assert_null(p);
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "big.xml:1: <algo> attribute name: value longer than the XML "
                           "reader takes"));
    assert_true(strlen(e.msg) < 600);
    free(s);
}

static void test_not_utf8_and_nul_bytes(void **state)
{
    (void)state;
    const char latin1[] = HEAD "<!-- caf\xe9 -->\n" GPU0 TB0 GOOD_STEP TAIL;
    expect_error(latin1, "mem.xml:2: not UTF-8: invalid byte 0xE9");
    const char utf16[] = "\xff\xfe<\0a\0";
    tc_err e;
    assert_null(prog_parse_xml(utf16, sizeof utf16 - 1, "u16.xml", &e));
    assert_non_null(strstr(e.msg, "u16.xml:1:1: UTF-16 text (byte-order mark 0xFF 0xFE): save it "
                           "as UTF-8"));
    const char nul[] = "<algo>\n\n\0</algo>";
    assert_null(prog_parse_xml(nul, sizeof nul - 1, "nul.xml", &e));
    assert_non_null(strstr(e.msg, "nul.xml:3: NUL byte"));
    /* Valid UTF-8 in a name is kept. */
    const char cafe[] = "<algo name=\"caf\xc3\xa9\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" "
                        "ngpus=\"1\" coll=\"allreduce\" inplace=\"1\">\n"
                        "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\"/>\n</algo>\n";
    prog *p = parse_str(cafe, &e);
    assert_non_null(p);
    assert_string_equal(p->name, "caf\xc3\xa9");
    prog_free(p);
}

/* Write text (n bytes) to a new temporary file; path receives its name. */
static void temp_file(const char *text, size_t n, char path[64])
{
    snprintf(path, 64, "/tmp/test_xml_stream_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* prog_read_xml of n bytes of text, through a temporary file. */
static prog *read_as_file(const char *text, size_t n, tc_err *e)
{
    char path[64];
    temp_file(text, n, path);
    prog *p = prog_read_xml(path, e);
    if (!p && e)
        memmove(e->msg, e->msg + strlen(path), strlen(e->msg + strlen(path)) + 1);
    unlink(path);
    return p;
}

/* The file reader takes the file a piece at a time (64 KiB): a character
 * split across two pieces, a bad byte or a malformation far into the file,
 * a character cut short by the end and a large blank file read exactly as
 * the whole text does (messages compared past the file name). */
static void test_file_read_in_pieces(void **state)
{
    (void)state;
    /* a comment of filler that puts a 3-byte character (U+20AC) across
     * every 64 KiB boundary it meets, then the program */
    size_t fill = 300000, n = 0;
    char *text = malloc(fill + 4096);
    n += (size_t)sprintf(text, "<!--");
    for (; n < fill; n++) {
        size_t m = n % 65536;
        text[n] = m == 65535 ? '\xe2' : m == 0 ? '\x82' : m == 1 ? '\xac'
                  : n % 97 == 0 ? '\n' : 'x';
    }
    n += (size_t)sprintf(text + n, "-->\n%s", HEAD GPU0 TB0 GOOD_STEP TAIL);
    tc_err e, e2;
    prog *a = prog_parse_xml(text, n, "", &e);
    if (!a)
        fail_msg("in memory: %s", e.msg);
    prog *b = read_as_file(text, n, &e2);
    if (!b)
        fail_msg("from the file: %s", e2.msg);
    assert_progs_equal(a, b);
    prog_free(a);
    prog_free(b);
    char *bad = malloc(n);
    /* an unclosed element first, then a bad byte after 200 KB: the byte is
     * reported, on the same line either way */
    memcpy(bad, text, n);
    memcpy(bad, "<x>  ", 5);
    bad[210000] = '\xff';
    long line = 1;
    for (size_t i = 0; i < 210000; i++)
        line += bad[i] == '\n';
    char want[64];
    snprintf(want, sizeof want, ":%ld: not UTF-8: invalid byte 0xFF", line);
    assert_null(prog_parse_xml(bad, n, "", &e));
    assert_null(read_as_file(bad, n, &e2));
    assert_string_equal(e.msg, want);
    assert_string_equal(e2.msg, want);
    /* the malformation alone: the same message either way */
    bad[210000] = 'x';
    assert_null(prog_parse_xml(bad, n, "", &e));
    assert_null(read_as_file(bad, n, &e2));
    assert_non_null(strstr(e.msg, "malformed XML"));
    assert_string_equal(e.msg, e2.msg);
    /* a character cut short by the end of the file */
    memcpy(bad, text, n);
    bad[n - 1] = '\xe2';
    assert_null(prog_parse_xml(bad, n, "", &e));
    assert_null(read_as_file(bad, n, &e2));
    assert_non_null(strstr(e.msg, "not UTF-8: invalid byte 0xE2"));
    assert_string_equal(e.msg, e2.msg);
    /* 200 KB of blanks */
    memset(bad, ' ', 200000);
    assert_null(prog_parse_xml(bad, 200000, "", &e));
    assert_null(read_as_file(bad, 200000, &e2));
    assert_string_equal(e.msg, ":1: empty file, expected an <algo> element");
    assert_string_equal(e.msg, e2.msg);
    free(bad);
    free(text);
}

/* A text of n bytes: the same message from memory and from a file. */
static void expect_both(const char *text, size_t n, const char *want)
{
    tc_err e, e2;
    assert_null(prog_parse_xml(text, n, "", &e));
    assert_null(read_as_file(text, n, &e2));
    if (strcmp(e.msg, want) != 0 || strcmp(e2.msg, want) != 0)
        fail_msg("want %s\ngot  %s\nand  %s", want, e.msg, e2.msg);
}

/* What the whole-text reader said of its own limits, the streaming reader
 * says too: the line where the too-deep start tag begins, the attribute
 * too long on a later line of a start tag (the push parser stops at the
 * tag's '<') or in single quotes, a comment too long; and in a file, old
 * Mac line ends (CR alone) counted across the 64 KiB pieces, a CR LF split
 * between two pieces counted once. */
static void test_streamed_limits_and_line_ends(void **state)
{
    (void)state;
    size_t big = 10000001, cap = big + 4096, n;
    char *t = malloc(cap);
    n = (size_t)sprintf(t, "%s", HEAD);
    for (int i = 0; i < 300; i++)
        n += (size_t)sprintf(t + n, "<x\n a=\"1\"\n>\n");
    /* <algo> and 256 <x> open: the 257th <x> begins on line 2 + 3 * 256 */
    expect_both(t, n, ":770: <x>: elements nested too deeply (the XML reader takes 256 levels; "
                "a schedule needs 4)");
    /* HEAD, pre, 10000001 bytes of c, post */
    static const struct {
        const char *pre, *post;
        char c;
        const char *want;
    } big_cases[] = {
        {"  <gpu id=\"0\"\n   note=\n   \"", "\"/>\n</algo>\n", 'a',
         ":4: <gpu> attribute note: value longer than the XML reader takes (10000000 bytes; the "
         "MSCCL runtimes take 255)"},
        {"\n  <taccl size_bytes='", "'/>\n</algo>\n", '1',
         ":3: <taccl> attribute size_bytes: value longer than the XML reader takes (10000000 "
         "bytes; the MSCCL runtimes take 255)"},
        {"<!--", "-->\n</algo>\n", 'c', ":2: malformed XML: Comment too big found"},
    };
    for (size_t i = 0; i < sizeof big_cases / sizeof *big_cases; i++) {
        n = (size_t)sprintf(t, "%s%s", HEAD, big_cases[i].pre);
        memset(t + n, big_cases[i].c, big);
        n += big;
        n += (size_t)sprintf(t + n, "%s", big_cases[i].post);
        expect_both(t, n, big_cases[i].want);
    }
    /* line 1 <algo>, line 2 a comment to byte 65535, which is a CR (line
     * 3 begins), then the bad step on line 5: with CR alone, and with a CR
     * LF whose LF opens the second piece */
    static const char *const ends[] = {"\r", "\r\n"};
    for (int k = 0; k < 2; k++) {
        n = (size_t)sprintf(t, "%s<!--", HEAD);
        memset(t + n, 'y', 65535 - 3 - n);
        n = 65535 - 3;
        n += (size_t)sprintf(t + n, "-->");
        n += (size_t)sprintf(t + n, "%s" "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">%s"
                             "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">%s"
                             "      <step s=\"x\"/>%s    </tb>%s  </gpu>%s</algo>%s", ends[k],
                             ends[k], ends[k], ends[k], ends[k], ends[k], ends[k]);
        assert_int_equal(t[65535], '\r');
        tc_err e;
        assert_null(read_as_file(t, n, &e));
        assert_string_equal(e.msg, ":5: <step> attribute s: expected an integer, got \"x\"");
    }
    free(t);
}

static void test_libxml2_stays_quiet(void **state)
{
    (void)state;
    fflush(stderr);
    int saved = dup(2);
    FILE *cap = tmpfile();
    assert_non_null(cap);
    dup2(fileno(cap), 2);
    tc_err e;
    const char *bad[] = {
        "<algo",
        "<algo><gpu></algo>",
        "<algo a=\"1\" a=\"2\"/>",
        "<?xml version=\"1.0\" encoding=\"EBCDIC-XYZ\"?><algo/>",
        "<algo>&bogus;</algo>",
        "<x:algo xmlns:y=\"u\"/>",
        "<!DOCTYPE algo SYSTEM \"http://example.com/x.dtd\"><algo/>",
        "just text",
    };
    /* No assertion while stderr is redirected: count, restore, then check. */
    int accepted = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        prog *p = parse_str(bad[i], &e);
        accepted += p != NULL;
        prog_free(p);
    }
    char path[1024];
    prog *p = prog_read_xml(data_path("truncated.xml", path, sizeof path), &e);
    accepted += p != NULL;
    prog_free(p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(cap, 0, SEEK_END);
    long n = ftell(cap);
    fclose(cap);
    assert_int_equal(accepted, 0);
    assert_int_equal(n, 0);
}

static void test_line_numbers_beyond_65535(void **state)
{
    (void)state;
    int nsteps = 70000;
    size_t cap = (size_t)nsteps * 160 + 4096;
    char *s = malloc(cap);
    size_t k = (size_t)snprintf(s, cap,
                                "<algo name=\"big\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" "
                                "ngpus=\"1\" coll=\"allreduce\" inplace=\"1\">\n"
                                "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
                                "    <tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n");
    for (int i = 0; i < nsteps; i++)
        k += (size_t)snprintf(s + k, cap - k,
                              "      <step s=\"%d\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" "
                              "dstoff=\"-1\" cnt=\"0\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n",
                              i);
    size_t body = k;
    snprintf(s + k, cap - k, "    </tb>\n  </gpu>\n</algo>\n");
    tc_err e;
    prog *p = parse_str(s, &e);
    assert_non_null(p);
    const prog_tb *tb = &p->gpus[0].tbs[0];
    assert_int_equal(tb->nsteps, nsteps);
    assert_int_equal(tb->steps[0].line, 4);
    assert_int_equal(tb->steps[65531].line, 65535);
    assert_int_equal(tb->steps[65532].line, 65536);
    assert_int_equal(tb->steps[nsteps - 1].line, nsteps + 3);
    prog_free(p);
    /* An error after line 70003 names its real line. */
    snprintf(s + body, cap - body, "      <step s=\"x\"/>\n    </tb>\n  </gpu>\n</algo>\n");
    char needle[64];
    snprintf(needle, sizeof needle, "mem.xml:%d: <step> attribute s:", nsteps + 4);
    expect_error(s, needle);
    free(s);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* A program with every step type, nops, dependencies and extensions. */
static prog *sample_program(void)
{
    prog *p = prog_new("mix \"&\" <all>", COLL_ALLREDUCE, 3, 3);
    snprintf(p->proto, sizeof p->proto, "LL");
    p->nchannels = 2;
    p->inplace = 1;
    p->outofplace = 0;
    p->min_bytes = 4096;
    p->max_bytes = 1LL << 40;
    p->size_bytes = 1048576;
    p->predicted_us = 0.1;
    for (int r = 0; r < 3; r++) {
        prog_gpu *g = prog_add_gpu(p, 3, 3, 2);
        prog_tb *a = prog_add_tb(g, (r + 1) % 3, (r + 2) % 3, 0);
        for (int t = 0; t < ST_COUNT; t++) {
            int nop = t == ST_NOP;
            prog_step *st = prog_add_step(a, (step_type)t, nop ? BUF_I : BUF_S, nop ? -1 : t % 2,
                                          nop ? BUF_O : BUF_O, nop ? -1 : (t + r) % 3, nop ? 0 : 1 + t % 3,
                                          nop ? 1 : -1, nop ? 0 : -1);
            st->hasdep = t == 2;
        }
        prog_tb *b = prog_add_tb(g, -1, -1, 1);
        prog_step *st = prog_add_step(b, ST_CPY, BUF_I, 2, BUF_O, 2, 1, -1, -1);
        st->hasdep = 1;
        prog_add_tb(g, -1, (r + 1) % 3, 1); /* a tb without steps */
    }
    return p;
}

static void test_roundtrip_field_by_field_and_byte_identical(void **state)
{
    (void)state;
    prog *p = sample_program();
    /* A topology that has been through its own JSON once (a fixed point). */
    topo *t0 = topo_default(3);
    char *j0 = topo_to_json(t0);
    tc_err e;
    topo *t1 = topo_parse(j0, "default", &e);
    assert_non_null(t1);
    prog_set_topo(p, t1);
    topo_free(t0);
    free(j0);
    xml_write_opts o = {.runtime = RT_EXECUTOR, .embed_topology = 1};
    char *x1 = prog_to_xml(p, &o, &e);
    if (!x1)
        print_error("%s\n", e.msg);
    assert_non_null(x1);
    prog *q = prog_parse_xml(x1, strlen(x1), "rt.xml", &e);
    if (!q)
        print_error("%s\n%s\n", e.msg, x1);
    assert_non_null(q);
    assert_progs_equal(p, q);
    assert_non_null(q->topo);
    char *ja = topo_to_json(p->topo), *jb = topo_to_json(q->topo);
    assert_string_equal(ja, jb);
    free(ja);
    free(jb);
    assert_null(q->path);
    assert_int_equal(q->gpus[2].tbs[1].steps[0].line > 0, 1);
    char *x2 = prog_to_xml(q, &o, &e);
    assert_string_equal(x1, x2);
    free(x1);
    free(x2);
    prog_free(q);
    prog_free(p);
}

/* NCCL's NVLS choice has switch operations MSCCL XML cannot hold: the
 * writer refuses it in one line naming --target mscclpp. */
static void test_writer_refuses_nvls(void **state)
{
    (void)state;
    prog *p = prog_new("nvls", COLL_ALLREDUCE, 2, 2);
    prog_add_gpu(p, 2, 2, 0);
    prog_add_gpu(p, 2, 2, 0);
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    char *x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    free(x);
    p->nvls_channels = 16;
    assert_null(prog_to_xml(p, &o, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "--target mscclpp"));
    assert_null(strchr(e.msg, '\n'));
    prog_free(p);
}

static void test_writer_exact_form(void **state)
{
    (void)state;
    prog *p = prog_new("ring \"2\" & <co>", COLL_ALLGATHER, 2, 2);
    prog_gpu *g = prog_add_gpu(p, 1, 2, 0);
    prog_tb *tb = prog_add_tb(g, 1, 1, 0);
    prog_add_step(tb, ST_S, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 0);
    prog_add_step(tb, ST_R, BUF_O, 1, BUF_O, 1, 1, -1, -1);
    prog_add_gpu(p, 1, 2, 0);
    p->size_bytes = 1048576;
    p->predicted_us = 12.5;
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 1}; /* embed asked, but there is no topology */
    char *x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    const char *want =
        "<algo name=\"ring &quot;2&quot; &amp; &lt;co&gt;\" proto=\"Simple\" nchannels=\"1\" "
        "nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\" inplace=\"0\" outofplace=\"1\" "
        "minBytes=\"0\" maxBytes=\"0\">\n"
        "  <taccl size_bytes=\"1048576\" predicted_us=\"12.5\" generator=\"taccl\"/>\n"
        "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
        "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
        "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        "      <step s=\"1\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" "
        "depid=\"0\" deps=\"0\" hasdep=\"0\"/>\n"
        "      <step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        "    </tb>\n"
        "  </gpu>\n"
        "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
        "</algo>\n";
    assert_string_equal(x, want);
    /* The name comes back unescaped. */
    prog *q = parse_str(x, &e);
    assert_non_null(q);
    assert_string_equal(q->name, "ring \"2\" & <co>");
    assert_true(q->size_bytes == 1048576);
    assert_true(q->predicted_us == 12.5);
    /* BUF_NONE is written as msccl-tools writes unused operands. */
    assert_int_equal(q->gpus[0].tbs[0].steps[1].srcbuf, BUF_I);
    assert_int_equal(q->gpus[0].tbs[0].steps[1].dstbuf, BUF_O);
    prog_free(q);
    free(x);
    /* No extension data: no <taccl> element. */
    p->size_bytes = 0;
    p->predicted_us = -1;
    x = prog_to_xml(p, &o, &e);
    assert_null(strstr(x, "<taccl"));
    q = parse_str(x, &e);
    assert_true(q->size_bytes == 0 && q->predicted_us < 0);
    prog_free(q);
    free(x);
    prog_free(p);
}

/* Each line: spaces then '<', one element, no tab; values at most 255
 * bytes (<part> values at most 200); elements at most 16 attributes. */
static void assert_runtime_friendly(const char *x)
{
    assert_true(strncmp(x, "<algo ", 6) == 0);
    const char *line = x;
    while (*line) {
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        const char *c = line;
        while (*c == ' ')
            c++;
        assert_int_equal(*c, '<');
        assert_true((c - line) % 2 == 0);
        int attrs = 0;
        int in_part = strncmp(c, "<part ", 6) == 0;
        for (const char *q = c; q < end; q++) {
            assert_true(*q != '\t' && *q != '\r' && *q != '\'');
            if (*q == '"') {
                const char *close = memchr(q + 1, '"', (size_t)(end - q - 1));
                assert_non_null(close);
                assert_true(close - q - 1 <= (in_part ? 200 : 255));
                attrs++;
                q = close;
            }
        }
        assert_true(attrs <= 16);
        line = end + 1;
    }
}

static void test_writer_respects_runtime_tokenizer(void **state)
{
    (void)state;
    prog *p = sample_program();
    prog_set_topo(p, topo_default(8));
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 1};
    char *x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    assert_runtime_friendly(x);
    assert_non_null(strstr(x, "  <topology format=\"taccl-json-1\" parts=\""));
    /* The JSON is long enough to need several parts. */
    const char *first = strstr(x, "<part v=\"");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, "<part v=\""));
    /* The extension elements precede the first <gpu>. */
    assert_true(strstr(x, "<topology") < strstr(x, "<gpu"));
    assert_true(strstr(x, "<taccl") < strstr(x, "<topology"));
    free(x);
    /* Without embed_topology the topology stays out. */
    o.embed_topology = 0;
    x = prog_to_xml(p, &o, &e);
    assert_null(strstr(x, "<topology"));
    assert_runtime_friendly(x);
    free(x);
    prog_free(p);
}

/* xml_fit_value cuts a name made of a user's names to what the runtimes
 * read, 255 bytes as written, at a character boundary: a sketch name of
 * 100 two-byte characters made the synthesizer cut one in half (the write
 * then refused "not UTF-8"), and 60 ampersands (60 bytes, under the
 * sketch's 200) made it refuse "327 characters once escaped".  What the
 * writer would escape becomes '_': the runtimes read "&amp;" as written,
 * and taccl-run refused the file. */
static void test_fit_value(void **state)
{
    (void)state;
    char name[512];
    memset(name, 'a', 300);
    name[300] = '\0';
    assert_int_equal(strlen(xml_fit_value(name)), 255);
    name[0] = '\0';
    for (int i = 0; i < 100; i++)
        strcat(name, "\xc3\xa9");               /* e acute, 2 bytes */
    strcat(name, "\xc3\xa9\xc3\xa9");         /* 102 characters, 204 bytes */
    assert_int_equal(strlen(xml_fit_value(name)), 204);
    for (int i = 0; i < 26; i++)
        strcat(name, "\xc3\xa9");               /* 256 bytes */
    name[255] = '\0';                           /* cut inside the 128th */
    assert_int_equal(strlen(xml_fit_value(name)), 254);
    memset(name, '&', 300);
    name[300] = '\0';
    assert_int_equal(strlen(xml_fit_value(name)), 255);
    assert_int_equal(strspn(name, "_"), 255);
    snprintf(name, sizeof name, "R&D \"x\" <y>\tz");
    assert_string_equal(xml_fit_value(name), "R_D _x_ _y__z");
    /* what it keeps, the writer takes */
    prog *p = prog_new(name, COLL_ALLGATHER, 1, 1);
    prog_add_gpu(p, 1, 1, 0);
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    char *x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    assert_non_null(strstr(x, "<algo name=\"R_D _x_ _y__z\""));
    free(x);
    prog_free(p);
}

static void test_writer_refuses_what_the_runtime_cannot_read(void **state)
{
    (void)state;
    prog *p = prog_new("", COLL_ALLGATHER, 1, 1);
    prog_add_gpu(p, 1, 1, 0);
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    /* 255 plain bytes fit; 52 ampersands (260 bytes escaped) do not. */
    memset(p->name, 'n', 255);
    p->name[255] = '\0';
    char *x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    free(x);
    memset(p->name, '&', 52);
    p->name[52] = '\0';
    assert_null(prog_to_xml(p, &o, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "<algo> attribute name: 260 bytes once escaped"));
    snprintf(p->name, sizeof p->name, "bell\a");
    assert_null(prog_to_xml(p, &o, &e));
    assert_non_null(strstr(e.msg, "control character 0x07"));
    snprintf(p->name, sizeof p->name, "bad \xff");
    assert_null(prog_to_xml(p, &o, &e));
    assert_non_null(strstr(e.msg, "not UTF-8"));
    snprintf(p->name, sizeof p->name, "tab\tand\nnewline");
    x = prog_to_xml(p, &o, &e);
    assert_non_null(x);
    prog *q = parse_str(x, &e);
    assert_non_null(q);
    assert_string_equal(q->name, "tab\tand\nnewline");
    prog_free(q);
    free(x);
    snprintf(p->proto, sizeof p->proto, "Fast");
    assert_null(prog_to_xml(p, &o, &e));
    assert_non_null(strstr(e.msg, "proto"));
    snprintf(p->proto, sizeof p->proto, "Simple");
    prog_tb *tb = prog_add_tb(&p->gpus[0], -1, -1, 0);
    prog_add_step(tb, (step_type)42, BUF_I, 0, BUF_O, 0, 1, -1, -1);
    assert_null(prog_to_xml(p, &o, &e));
    assert_non_null(strstr(e.msg, "gpu 0 tb 0 step 0: invalid step type 42"));
    prog_free(p);
}

static void test_topology_element(void **state)
{
    (void)state;
    tc_err e;
    /* Read back what the writer embeds. */
    prog *p = sample_program();
    prog_set_topo(p, topo_default(3));
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 1};
    char *x = prog_to_xml(p, &o, &e);
    prog *q = parse_str(x, &e);
    if (!q)
        print_error("%s\n", e.msg);
    assert_non_null(q);
    assert_non_null(q->topo);
    prog_free(q);
    free(x);
    prog_free(p);

    const char *part_ok = "    <part v=\"{&quot;a&quot;: 1}\"/>\n";
    char xml[4096];
    snprintf(xml, sizeof xml, "%s  <topology format=\"taccl-json-1\" parts=\"2\">\n%s  </topology>\n%s%s%s%s",
             HEAD, part_ok, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:2: <topology> attribute parts: says 2 but 1 <part> elements follow");
    snprintf(xml, sizeof xml, "%s  <topology format=\"json\" parts=\"1\">\n%s  </topology>\n%s%s%s%s",
             HEAD, part_ok, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:2: <topology> attribute format: unsupported \"json\"");
    snprintf(xml, sizeof xml, "%s  <topology format=\"taccl-json-1\" parts=\"1\">\n    <part w=\"\"/>\n  </topology>\n%s%s%s%s",
             HEAD, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:3: <part> attribute v: missing");
    snprintf(xml, sizeof xml, "%s  <topology format=\"taccl-json-1\" parts=\"1\">\n    <part v=\"not json\"/>\n  </topology>\n%s%s%s%s",
             HEAD, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:3: <topology> (its JSON line 1): JSON syntax error");
    snprintf(xml, sizeof xml, "%s  <taccl/>\n  <taccl/>\n%s%s%s%s", HEAD, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:3: <taccl>: a second one (first at line 2)");
    snprintf(xml, sizeof xml, "%s  <taccl predicted_us=\"fast\"/>\n%s%s%s%s", HEAD, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:2: <taccl> attribute predicted_us: expected a finite number, got \"fast\"");
    snprintf(xml, sizeof xml, "%s  <taccl size_bytes=\"-4\"/>\n%s%s%s%s", HEAD, GPU0, TB0, GOOD_STEP, TAIL);
    expect_error(xml, "mem.xml:2: <taccl> attribute size_bytes: -4 is out of range");
    /* <taccl> after the gpus, unknown attributes: still read. */
    snprintf(xml, sizeof xml, "%s%s%s%s", HEAD, GPU0, TB0, GOOD_STEP);
    size_t k = strlen(xml);
    snprintf(xml + k, sizeof xml - k,
             "    </tb>\n  </gpu>\n  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
             "  <taccl size_bytes=\"65536\" predicted_us=\"3e-2\" generator=\"someone\" x=\"y\"/>\n</algo>\n");
    p = parse_str(xml, &e);
    assert_non_null(p);
    assert_true(p->size_bytes == 65536);
    assert_true(p->predicted_us == 0.03);
    assert_null(p->topo);
    prog_free(p);
}

static void test_doubles_round_trip_exactly(void **state)
{
    (void)state;
    double vals[] = {0.0, 0.1, 1.0 / 3.0, 12.5, 1e-300, 123456789.123456789, 5e20};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        prog *p = prog_new("d", COLL_ALLREDUCE, 1, 1);
        prog_add_gpu(p, 1, 1, 0);
        p->predicted_us = vals[i];
        tc_err e;
        xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
        char *x = prog_to_xml(p, &o, &e);
        prog *q = parse_str(x, &e);
        assert_non_null(q);
        assert_true(q->predicted_us == vals[i]);
        free(x);
        prog_free(q);
        prog_free(p);
    }
}

/* ------------------------------------------------------------------ */
/* Atomic file writing                                                 */

static int count_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

static void test_write_file_atomically(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_xml_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512], sub[512], bad[512];
    snprintf(path, sizeof path, "%s/out.xml", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(bad, sizeof bad, "%s/missing/out.xml", dir);
    prog *p = sample_program();
    tc_err e;
    xml_write_opts o = {.runtime = RT_ANY, .embed_topology = 0};
    assert_int_equal(prog_write_xml(p, path, &o, &e), TC_OK);
    char *want = prog_to_xml(p, &o, &e);
    char *got = read_whole(path);
    assert_string_equal(got, want);
    free(got);
    /* Reading the written file gives the program back. */
    prog *q = prog_read_xml(path, &e);
    assert_non_null(q);
    assert_progs_equal(p, q);
    prog_free(q);
    /* Overwriting keeps the permissions of the file replaced. */
    chmod(path, 0600);
    p->nchannels = 7;
    assert_int_equal(prog_write_xml(p, path, &o, &e), TC_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    got = read_whole(path);
    assert_non_null(strstr(got, "nchannels=\"7\""));
    free(got);
    /* A program the writer refuses leaves the file as it was. */
    snprintf(p->proto, sizeof p->proto, "Bad");
    assert_int_equal(prog_write_xml(p, path, &o, &e), TC_INPUT);
    got = read_whole(path);
    assert_non_null(strstr(got, "nchannels=\"7\""));
    free(got);
    snprintf(p->proto, sizeof p->proto, "Simple");
    /* Missing directory. */
    assert_int_equal(prog_write_xml(p, bad, &o, &e), TC_INPUT);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: cannot write: No such file or directory", bad);
    assert_string_equal(e.msg, msg);
    /* The target is a directory: the rename fails, nothing is left behind. */
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(prog_write_xml(p, sub, &o, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, ": cannot write: "));
    assert_int_equal(stat(sub, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(count_temp_files(dir), 0);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
    free(want);
    prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_msccl_tools_ring),
        cmocka_unit_test(test_writer_refuses_nvls),
        cmocka_unit_test(test_writer_reproduces_msccl_tools_style),
        cmocka_unit_test(test_read_prolog),
        cmocka_unit_test(test_read_taccl_copy_elements),
        cmocka_unit_test(test_coll_spellings),
        cmocka_unit_test(test_unknown_elements_and_attributes_ignored),
        cmocka_unit_test(test_tb_ids_and_step_numbers_kept_as_written),
        cmocka_unit_test(test_file_errors_name_line_and_attribute),
        cmocka_unit_test(test_unreadable_paths),
        cmocka_unit_test(test_integers_are_strict_decimal),
        cmocka_unit_test(test_every_step_attribute_required),
        cmocka_unit_test(test_algo_and_gpu_errors),
        cmocka_unit_test(test_attribute_beyond_sixteenth_refused),
        cmocka_unit_test(test_doctype_and_entities_refused),
        cmocka_unit_test(test_deep_nesting_fails_cleanly),
        cmocka_unit_test(test_huge_attribute_fails_cleanly),
        cmocka_unit_test(test_not_utf8_and_nul_bytes),
        cmocka_unit_test(test_file_read_in_pieces),
        cmocka_unit_test(test_streamed_limits_and_line_ends),
        cmocka_unit_test(test_libxml2_stays_quiet),
        cmocka_unit_test(test_line_numbers_beyond_65535),
        cmocka_unit_test(test_roundtrip_field_by_field_and_byte_identical),
        cmocka_unit_test(test_writer_exact_form),
        cmocka_unit_test(test_writer_respects_runtime_tokenizer),
        cmocka_unit_test(test_writer_refuses_what_the_runtime_cannot_read),
        cmocka_unit_test(test_fit_value),
        cmocka_unit_test(test_topology_element),
        cmocka_unit_test(test_doubles_round_trip_exactly),
        cmocka_unit_test(test_write_file_atomically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
