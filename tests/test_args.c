/* test_args.c — the option layer: a small tool's table read, refused,
 * checked by mode and printed as usage and help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/args.h"

typedef struct {
    const char *pos[2];
    int npos;
    unsigned long long seen;
    const char *out;
    int count, quiet, side, word;
    double real;
    long long size, lo, hi, blo, bhi;
    const char *list[2];
    int nlist;
} opts;

enum { A = 1, B = 2 };

static const args_word_def WORDS[] = {{"red", 1}, {"green", 2}, {"blue", 3}, {NULL, 0}};

static const args_opt OPTS[] = {
    {.name = "--output", .alias = "-o", .value = "OUT", .field = offsetof(opts, out),
     .modes = A | B, .help = "where it goes\nsecond line"},
    {.name = "--count", .value = "K", .parse = args_count, .field = offsetof(opts, count),
     .hi = 32, .expect = "an integer 1..32", .modes = A, .note = "B counts itself",
     .help = "how many"},
    {.name = "--real", .value = "X", .parse = args_real, .field = offsetof(opts, real), .hi = 1,
     .set = 1, .expect = "0 <= X < 1", .modes = A | B},
    {.name = "--size", .value = "BYTES", .parse = args_size, .field = offsetof(opts, size),
     .modes = B},
    {.name = "--range", .value = "LO:HI", .parse = args_range, .field = offsetof(opts, lo),
     .field2 = offsetof(opts, hi), .expect = "LO:HI sizes with LO <= HI", .modes = A | B},
    {.name = "--bytes", .value = "LO:HI", .parse = args_range, .field = offsetof(opts, blo),
     .field2 = offsetof(opts, bhi), .set = ARGS_OPEN | ARGS_STRICT, .expect = "LO < HI",
     .modes = A | B},
    {.name = "--word", .value = "W", .parse = args_word, .field = offsetof(opts, word),
     .words = WORDS, .modes = A | B, .usage = "--word red|green|blue"},
    {.name = "--list", .value = "L", .parse = args_append, .field = offsetof(opts, list),
     .field2 = offsetof(opts, nlist), .hi = 2, .expect = "lists", .modes = A | B},
    {.name = "--left", .parse = args_either, .field = offsetof(opts, side), .set = 1,
     .expect = "--left and --right", .modes = A | B, .usage = "--left|--right"},
    {.name = "--right", .parse = args_either, .field = offsetof(opts, side), .set = -1,
     .expect = "--left and --right", .modes = A | B, .usage = ""},
    {.name = "--quiet", .alias = "-q", .field = offsetof(opts, quiet), .set = 1, .modes = A | B,
     .help = "say less"},
    {.name = NULL}};

static const args_mode MODES[] = {{A, "mode A", "IN -o OUT"}, {B, "mode B", "--b IN"}, {0}};

static const args_spec SPEC = {.tool = "tool", .opts = OPTS, .modes = MODES,
                               .pos = offsetof(opts, pos), .npos = offsetof(opts, npos),
                               .max_pos = 2, .too_many = "too many files: '%s'",
                               .about = "About.\n\n", .after = "\nAfter.\n"};

/* Parse the NULL-terminated arguments in ap (after the tool's name) into *o. */
static int vparse(opts *o, tc_err *err, va_list ap)
{
    char *argv[32] = {"tool"};
    int argc = 1;
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 32;)
        argv[argc++] = a;
    memset(o, 0, sizeof *o);
    tc_err_clear(err);
    return args_parse(&SPEC, argc, argv, o, &o->seen, err);
}

static int parse(opts *o, tc_err *err, ...)
{
    va_list ap;
    va_start(ap, err);
    int rc = vparse(o, err, ap);
    va_end(ap);
    return rc;
}

static void test_values(void **state)
{
    (void)state;
    opts o;
    tc_err e;
    assert_int_equal(parse(&o, &e, "in", "-o", "x", "--count", "7", "--real", "0", "--size",
                           "64K", "--range", "1K:1M", "--bytes", "0:inf", "--word", "green",
                           "--list", "a", "--list", "b", "--right", "-q", "in2", NULL),
                     TC_OK);
    assert_int_equal(o.npos, 2);
    assert_string_equal(o.pos[1], "in2");
    assert_string_equal(o.out, "x");
    assert_int_equal(o.count, 7);
    assert_true(o.real == 0);
    assert_int_equal(o.size, 64 * 1024);
    assert_int_equal(o.lo, 1024);
    assert_int_equal(o.hi, 1024 * 1024);
    assert_int_equal(o.blo, 0);
    assert_int_equal(o.bhi, INT64_MAX);
    assert_int_equal(o.word, 2);
    assert_int_equal(o.nlist, 2);
    assert_int_equal(o.side, -1);
    assert_int_equal(o.quiet, 1);
    assert_true(o.seen & (1ULL << args_row(&SPEC, "--count")));
    assert_true(o.seen & (1ULL << args_row(&SPEC, "-q")));
    assert_int_equal(parse(&o, &e, "--quiet", "-h", "--frob", NULL), ARGS_HELP);
}

/* The arguments after `want` are refused with the message `want`. */
static void refused(const char *want, ...)
{
    opts o;
    tc_err e;
    va_list ap;
    va_start(ap, want);
    int rc = vparse(&o, &e, ap);
    va_end(ap);
    assert_int_equal(rc, TC_INPUT);
    assert_string_equal(e.msg, want);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("unknown option '--frob'", "--frob", NULL);
    refused("-o needs a value", "-o", NULL);
    refused("too many files: 'c'", "a", "b", "c", NULL);
    refused("--count: expected an integer 1..32, got '33'", "--count", "33", NULL);
    refused("--count: expected an integer 1..32, got ' 4'", "--count", " 4", NULL);
    refused("--count: expected an integer 1..32, got '+4'; write the number without '+'",
            "--count", "+4", NULL);
    refused("--real: expected 0 <= X < 1, got '1'", "--real", "1", NULL);
    refused("--size: at least 1 byte, got '0'", "--size", "0", NULL);
    refused("--size: at most 4194304T (2^62 bytes), got '99999999999999999999'", "--size",
            "99999999999999999999", NULL);
    refused("--range: expected LO:HI sizes with LO <= HI, got '4K:1K'", "--range", "4K:1K", NULL);
    refused("--range: expected LO:HI sizes with LO <= HI, got '4K'", "--range", "4K", NULL);
    refused("--range: LO: at least 1 byte, got '0:1K'", "--range", "0:1K", NULL);
    refused("--range: expected LO:HI sizes with LO <= HI, got '1K:inf'", "--range", "1K:inf",
            NULL);
    refused("--bytes: expected LO < HI, got '1K:1K'", "--bytes", "1K:1K", NULL);
    refused("--word: expected red, green or blue, got 'pink'", "--word", "pink", NULL);
    refused("--list: at most 2 lists, got another: 'c'", "--list", "a", "--list", "b", "--list",
            "c", NULL);
    refused("--left and --right do not go together", "--left", "--right", NULL);
}

static void test_modes(void **state)
{
    (void)state;
    opts o;
    tc_err e;
    assert_int_equal(parse(&o, &e, "--count", "2", "--size", "1K", NULL), TC_OK);
    assert_int_equal(args_check_mode(&SPEC, o.seen, A | B, &e), TC_OK);
    assert_int_equal(args_check_mode(&SPEC, o.seen, A, &e), TC_INPUT);
    assert_string_equal(e.msg, "--size is for mode B, not mode A");
    assert_int_equal(args_check_mode(&SPEC, o.seen, B, &e), TC_INPUT);
    assert_string_equal(e.msg, "--count is for mode A, not mode B; B counts itself");
}

static void test_text(void **state)
{
    (void)state;
    char *u = args_usage(&SPEC);
    /* -o is in mode A's synopsis, so not repeated there; lines wrap at 80 */
    assert_string_equal(u,
        "usage: tool IN -o OUT [--count K] [--real X] [--range LO:HI] [--bytes LO:HI]\n"
        "            [--word red|green|blue] [--list L] [--left|--right] [-q]\n"
        "       tool --b IN [-o OUT] [--real X] [--size BYTES] [--range LO:HI]\n"
        "            [--bytes LO:HI] [--word red|green|blue] [--list L] [--left|--right]\n"
        "            [-q]\n");
    char *h = args_help(&SPEC);
    assert_non_null(strstr(h, "\nAbout.\n\n"
                              "  -o, --output OUT  where it goes\n"
                              "                    second line\n"
                              "  --count K         how many\n"
                              "  -q, --quiet       say less\n"
                              "\nAfter.\n"));
    assert_int_equal(strncmp(h, u, strlen(u)), 0);
    free(u);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
