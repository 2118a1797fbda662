/* test_jsonin.c — the shared JSON-input machinery (src/util/jsonin): the
 * walker puts every message on the line of the field it names (nested
 * objects, arrays, repeated keys, rank-keyed maps, a byte-order mark,
 * whitespace cJSON accepts beyond the usual four), bad UTF-8 is refused at
 * the right byte (overlong forms, surrogates, beyond U+10FFFF, truncated),
 * paths and "got ..." read as users see them in both message conventions,
 * the shared field readers give their messages, a string holding \u0000 is
 * refused (cJSON would cut it there), and the file reader refuses
 * directories, missing files, NUL bytes and files over its cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/jsonin.h"

static const jsonin_doc WIDGET = {"widget", 64L << 20, 0};

/* ------------------------------------------------------------ helpers */

static const char *const NESTED =
    "{\n"                               /* 1 */
    "  \"a\": 1,\n"                     /* 2 */
    "  \"links\": [\n"                  /* 3 */
    "    {\"alpha_us\": 1},\n"          /* 4 */
    "    {\n"                           /* 5 */
    "      \"alpha_us\": 2,\n"          /* 6 */
    "      \"pairs\": [[0, 1],\n"       /* 7 */
    "                [2, 3]]\n"         /* 8 */
    "    }\n"                           /* 9 */
    "  ],\n"                            /* 10 */
    "  \"map\": {\"3\": [7,\n"          /* 11 */
    "                8]},\n"            /* 12 */
    "  \"alpha_us\": 9\n"               /* 13 */
    "}\n";

static jsonin_step key(const char *k)
{
    return (jsonin_step){k, -1, 0, 0};
}

static jsonin_step idx(int i)
{
    return (jsonin_step){NULL, i, 0, 0};
}

/* Line of path in text, checking how many steps were found. */
static int line_of(const char *text, const jsonin_step *path, int n,
                   int want_depth)
{
    int depth = -1;
    const char *val = NULL;
    int line = jsonin_locate(text, path, n, &depth, &val);
    assert_int_equal(depth, want_depth);
    assert_non_null(val);
    return line;
}

static cJSON *parse_ok(const char *text)
{
    tc_err e;
    tc_err_clear(&e);
    cJSON *root = jsonin_parse(text, "f.json", &WIDGET, NULL, &e);
    if (!root)
        print_error("%s\n", e.msg);
    assert_non_null(root);
    return root;
}

static void expect_parse_error(const char *text, const jsonin_doc *doc,
                               const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    assert_null(jsonin_parse(text, "f.json", doc, NULL, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_string_equal(e.msg, want);
}

/* A temporary directory for the file-reader tests; removed by the test. */
static void make_dir(char *dir)
{
    assert_non_null(mkdtemp(dir));
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void expect_read_error(const char *path, const jsonin_doc *doc,
                              const char *want)
{
    tc_err e;
    tc_err_clear(&e);
    assert_null(jsonin_read_file(path, doc, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_string_equal(e.msg, want);
}

/* ------------------------------------------------------------- walker */

static void test_locate_objects_and_arrays(void **state)
{
    (void)state;
    jsonin_step second_alpha[] = {key("links"), idx(1), key("alpha_us")};
    jsonin_step first_alpha[] = {key("links"), idx(0), key("alpha_us")};
    jsonin_step top_alpha[] = {key("alpha_us")};
    jsonin_step pair[] = {key("links"), idx(1), key("pairs"), idx(1), idx(0)};
    assert_int_equal(line_of(NESTED, second_alpha, 3, 3), 6);
    assert_int_equal(line_of(NESTED, first_alpha, 3, 3), 4);
    assert_int_equal(line_of(NESTED, top_alpha, 1, 1), 13);
    assert_int_equal(line_of(NESTED, pair, 5, 5), 8);
    assert_int_equal(line_of(NESTED, NULL, 0, 0), 1);

    /* The value pointer is where the field's value starts. */
    const char *val = NULL;
    jsonin_locate(NESTED, second_alpha, 3, NULL, &val);
    assert_int_equal(val[0], '2');
}

static void test_locate_map_keys_and_repeats(void **state)
{
    (void)state;
    jsonin_step map[] = {key("map"), {"3", -1, 0, 1}, idx(1)};
    assert_int_equal(line_of(NESTED, map, 3, 3), 12);

    const char *twice = "{\"k\": 1,\n \"k\": 2,\n \"k\": 3}";
    jsonin_step third[] = {{"k", -1, 2, 0}};
    jsonin_step second[] = {{"k", -1, 1, 0}};
    assert_int_equal(line_of(twice, third, 1, 1), 3);
    assert_int_equal(line_of(twice, second, 1, 1), 2);
}

static void test_locate_stops_where_the_path_ends(void **state)
{
    (void)state;
    /* A missing key: the line of the object that lacks it. */
    jsonin_step missing[] = {key("links"), idx(1), key("bandwidth_gbps")};
    assert_int_equal(line_of(NESTED, missing, 3, 2), 5);
    /* An index past the end: the line of the array's key. */
    jsonin_step past[] = {key("links"), idx(5)};
    assert_int_equal(line_of(NESTED, past, 2, 1), 3);
    /* Keys compare as written: an escaped spelling is not found. */
    jsonin_step name[] = {key("name")};
    assert_int_equal(line_of("{\n\"n\\u0061me\": 1}", name, 1, 0), 1);
    /* A key inside a string value is not a key. */
    jsonin_step b[] = {key("b")};
    assert_int_equal(line_of("{\"a\": \"{\\\"b\\\": [\",\n \"b\": 1}", b, 1, 1), 2);
}

static void test_locate_bom_and_cjson_whitespace(void **state)
{
    (void)state;
    jsonin_step a[] = {key("a")};
    assert_int_equal(line_of("\xEF\xBB\xBF{\n\"a\": 1}", a, 1, 1), 2);

    /* cJSON takes every byte 0x01..0x20 for whitespace; so does the walker. */
    const char *odd = "{\n\"a\"\f:\n 1,\v\n\"b\"\x01: [0,\n\x1f 1]}";
    cJSON *root = cJSON_Parse(odd);
    assert_non_null(root);
    cJSON_Delete(root);
    jsonin_step b1[] = {key("b"), idx(1)};
    assert_int_equal(line_of(odd, b1, 2, 2), 5);
}

/* ------------------------------------------------------------- UTF-8 */

static void test_utf8_accepts_valid_text(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "abc", ("a\xc3\xa9" "b"), "\xe2\x82\xac", "\xf0\x9d\x84\x9e",
        "\xf4\x8f\xbf\xbf",     /* U+10FFFF, the last code point */
        "\xed\x9f\xbf",         /* U+D7FF, just below the surrogates */
        "\xee\x80\x80",         /* U+E000, just above them */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t n = strlen(ok[i]);
        assert_int_equal(jsonin_utf8_invalid_at((const unsigned char *)ok[i], n), n);
    }
}

static void test_utf8_rejects_bad_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t at;
    } bad[] = {
        {"x\xc0\xaf", 1},           /* overlong '/' in two bytes */
        {"\xc1\xbf", 0},            /* overlong in two bytes */
        {"\xe0\x80\xaf", 0},        /* overlong in three bytes */
        {"\xf0\x80\x80\xaf", 0},    /* overlong in four bytes */
        {"ab\xed\xa0\x80", 2},      /* surrogate U+D800 */
        {"\xed\xbf\xbf", 0},        /* surrogate U+DFFF */
        {"\xf4\x90\x80\x80", 0},    /* U+110000 */
        {"\xf5\x80\x80\x80", 0},    /* no such lead byte */
        {"\xff", 0},
        {"a\x80", 1},               /* stray continuation byte */
        {"ok\xe2\x82", 2},          /* truncated at the end */
        {"\xe2\x82x", 0},           /* truncated before a new character */
        {"\xc3", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = strlen(bad[i].s);
        assert_int_equal(jsonin_utf8_invalid_at((const unsigned char *)bad[i].s, n),
                         bad[i].at);
    }
}

/* ------------------------------------------------------- text to cJSON */

static void test_parse_refusals(void **state)
{
    (void)state;
    expect_parse_error(NULL, &WIDGET, "f.json: no text given");
    expect_parse_error("\xfe\xff", &WIDGET,
                       "f.json:1:1: UTF-16 text (byte-order mark 0xFE 0xFF): save it as UTF-8");
    expect_parse_error("", &WIDGET,
                       "f.json: empty file: expected a JSON object describing a widget");
    expect_parse_error(" \n\t\r\n", &WIDGET,
                       "f.json: empty file: expected a JSON object describing a widget");
    expect_parse_error("\xEF\xBB\xBF  \n", &WIDGET,
                       "f.json: empty file: expected a JSON object describing a widget");
    expect_parse_error("{\n  \"a\": \"\xc0\xaf\"}", &WIDGET,
                       "f.json:2:9: not valid UTF-8 (byte 0xc0)");
    expect_parse_error("{\"a\": \"\xed\xa0\x80\"}", &WIDGET,
                       "f.json:1:8: not valid UTF-8 (byte 0xed)");
    expect_parse_error("{\"a\": 1", &WIDGET,
                       "f.json:1:8: JSON syntax error: unexpected end of file (in a)");
}

static void test_syntax_error_excerpts(void **state)
{
    (void)state;
    const char *text = "{\n  \"name\": \"t\",\n  \"nodes\": 1,,\n}";
    jsonin_doc ahead = WIDGET;
    ahead.flags = JSONIN_NEAR_AHEAD;
    expect_parse_error(text, &WIDGET,
                       "f.json:3:14: JSON syntax error near '\"nodes\": 1,,' (after nodes)");
    expect_parse_error(text, &ahead,
                       "f.json:3:14: JSON syntax error near 'nodes\": 1,,' (after nodes)");
    /* Long lines: up to 12 bytes either side, or 10 before and 22 in all. */
    const char *wide = "{\"abcdefghijklmnop\": 1 2, \"qrstuvwxyz0123456789\": 3}";
    expect_parse_error(wide, &WIDGET,
                       "f.json:1:24: JSON syntax error near 'jklmnop\": 1 2, \"qrstuvwx' "
                       "(in abcdefghijklmnop)");
    expect_parse_error(wide, &ahead,
                       "f.json:1:24: JSON syntax error near 'lmnop\": 1 2, \"qrstuvwx' "
                       "(in abcdefghijklmnop)");
}

/* A syntax error names the field it is in, found by scanning the text that
 * did not parse: through arrays, past escaped quotes, after a comma. */
static void test_syntax_error_fields(void **state)
{
    (void)state;
    expect_parse_error("{\"links\": [{\"a\": 1}, {\"alpha_us\": Infinity}]}", &WIDGET,
                       "f.json:1:35: JSON syntax error near '\"alpha_us\": Infinity}]}' "
                       "(in links[1].alpha_us)");
    expect_parse_error("{\"n\\\"x\": 1,\n \"m\": [1, 2,\n", &WIDGET,
                       "f.json:3:1: JSON syntax error: unexpected end of file (in m[2])");
    expect_parse_error("{\"a\": 1,, \"b\": 2}", &WIDGET,
                       "f.json:1:9: JSON syntax error near '{\"a\": 1,, \"b\": 2}' (after a)");
    expect_parse_error("[1, 2", &WIDGET,
                       "f.json:1:6: JSON syntax error: unexpected end of file (in [1])");
}

/* Old Mac line ends count as lines; CR LF stays as it is. */
static void test_lone_cr_to_lf(void **state)
{
    (void)state;
    char text[] = "{\r\"a\":\r\n1\r}\r";
    assert_int_equal(jsonin_lone_cr_to_lf(text, strlen(text)), 3);
    assert_string_equal(text, "{\n\"a\":\r\n1\n}\n");
    int line, col;
    jsonin_line_col(text, strlen(text) - 2, &line, &col);
    assert_int_equal(line, 4);
}

/* cJSON's nesting limit is said as such, not as a syntax error. */
static void test_nesting_limit(void **state)
{
    (void)state;
    size_t depth = 1200;
    char *s = malloc(8 + 2 * depth);
    assert_non_null(s);
    strcpy(s, "{\"x\": ");
    for (size_t i = 0; i < depth; i++)
        s[6 + i] = '[';
    for (size_t i = 0; i < depth; i++)
        s[6 + depth + i] = ']';
    strcpy(s + 6 + 2 * depth, "}");
    tc_err e;
    tc_err_clear(&e);
    assert_null(jsonin_parse(s, "f.json", &WIDGET, NULL, &e));
    assert_int_equal(e.code, TC_INPUT);
    assert_non_null(strstr(e.msg, "f.json:1:"));
    assert_non_null(strstr(e.msg, ": nested deeper than the JSON reader's limit of 1000 arrays "
                           "and objects (in x[0][0]"));
    free(s);
}

static void test_parse_bom_positions(void **state)
{
    (void)state;
    /* Columns (and the excerpt) count the mark unless JSONIN_AFTER_BOM;
     * cJSON stops at the '}' it did not expect. */
    jsonin_doc after = WIDGET;
    after.flags = JSONIN_AFTER_BOM;
    expect_parse_error("\xEF\xBB\xBF{,}", &WIDGET,
                       "f.json:1:6: JSON syntax error near '\xEF\xBB\xBF{,}'");
    expect_parse_error("\xEF\xBB\xBF{,}", &after, "f.json:1:3: JSON syntax error near '{,}'");

    const char *text = "\xEF\xBB\xBF{\"a\": 1}";
    const char *parsed = NULL;
    cJSON *root = jsonin_parse(text, "f.json", &after, &parsed, NULL);
    assert_non_null(root);
    assert_ptr_equal(parsed, text + 3);
    cJSON_Delete(root);
    root = jsonin_parse(text, "f.json", &WIDGET, &parsed, NULL);
    assert_non_null(root);
    assert_ptr_equal(parsed, text);
    cJSON_Delete(root);
}

/* -------------------------------------------------------- error context */

static void test_path_rendering(void **state)
{
    (void)state;
    char buf[256];
    jsonin_ctx c;
    jsonin_ctx_init(&c, "f.json", NULL, 0, NULL);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_string_equal(buf, "(top level)");
    jsonin_push_key(&c, "links", 0);
    jsonin_push_index(&c, 2);
    jsonin_push_key(&c, "bandwidth_gbps", 0);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_string_equal(buf, "links[2].bandwidth_gbps");

    jsonin_ctx_init(&c, "f.json", NULL, 0, NULL);
    jsonin_push_key(&c, "internode_sketch", 0);
    jsonin_push_key(&c, "internode_conn", 0);
    jsonin_push_map_key(&c, "3", 0);
    jsonin_push_index(&c, 1);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_string_equal(buf, "internode_sketch.internode_conn[\"3\"][1]");
    jsonin_pop(&c);
    jsonin_pop(&c);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_string_equal(buf, "internode_sketch.internode_conn");

    /* A map key is bracketed even when it looks like an identifier. */
    jsonin_push_map_key(&c, "ab", 0);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_string_equal(buf, "internode_sketch.internode_conn[\"ab\"]");
    jsonin_pop(&c);

    /* A small buffer keeps the start of the path. */
    jsonin_push_map_key(&c, "3", 0);
    jsonin_path_str(&c, buf, 12);
    assert_string_equal(buf, "internode_s");
}

static void test_path_keys_plain_or_quoted(void **state)
{
    (void)state;
    char buf[256], longkey[61];
    memset(longkey, 'x', 60);
    longkey[60] = '\0';
    jsonin_ctx plain, quoted;
    jsonin_ctx_init(&plain, "f.json", NULL, 0, NULL);
    jsonin_ctx_init(&quoted, "f.json", NULL, JSONIN_KEYS_QUOTED, NULL);
    const char *keys[] = {"with space", "a\x01" "b", longkey};
    for (int i = 0; i < 3; i++) {
        jsonin_push_key(&plain, keys[i], 0);
        jsonin_push_key(&quoted, keys[i], 0);
    }
    jsonin_path_str(&plain, buf, sizeof buf);
    char want[256];
    snprintf(want, sizeof want, "with space.a\x01" "b.%s", longkey);
    assert_string_equal(buf, want);
    jsonin_path_str(&quoted, buf, sizeof buf);
    snprintf(want, sizeof want, "[\"with space\"][\"a?b\"].%.48s", longkey);
    assert_string_equal(buf, want);
}

static void test_deep_paths_are_kept_to_the_limit(void **state)
{
    (void)state;
    char buf[256];
    jsonin_ctx c;
    jsonin_ctx_init(&c, "f.json", "[[[[1]]]]", 0, NULL);
    for (int i = 0; i < JSONIN_MAX_DEPTH + 5; i++)
        jsonin_push_index(&c, 0);
    jsonin_path_str(&c, buf, sizeof buf);
    assert_int_equal(strlen(buf), 3 * JSONIN_MAX_DEPTH);
    tc_err e;
    c.err = &e;
    assert_int_equal(jsonin_fail(&c, "deep"), TC_INPUT);
    assert_int_equal(strncmp(e.msg, "f.json:1: [0][0]", 16), 0);
    for (int i = 0; i < JSONIN_MAX_DEPTH + 5; i++)
        jsonin_pop(&c);
    assert_int_equal(c.depth, 0);
}

static void test_fail_names_line_and_path(void **state)
{
    (void)state;
    tc_err e;
    jsonin_ctx c;
    jsonin_ctx_init(&c, "f.json", NESTED, 0, &e);
    jsonin_push_key(&c, "links", 0);
    jsonin_push_index(&c, 1);
    jsonin_push_key(&c, "alpha_us", 0);
    assert_int_equal(jsonin_fail(&c, "expected %s", "less"), TC_INPUT);
    assert_int_equal(e.code, TC_INPUT);
    assert_string_equal(e.msg, "f.json:6: links[1].alpha_us: expected less");

    /* No text: line 0. */
    jsonin_ctx_init(&c, "f.json", NULL, 0, &e);
    jsonin_fail(&c, "no text");
    assert_string_equal(e.msg, "f.json:0: (top level): no text");
}

/* "got ..." for the value at obj.key, in the given convention, in out. */
static const char *got_at(const char *text, const char *k, unsigned flags,
                          char *out, size_t n)
{
    cJSON *root = parse_ok(text);
    jsonin_ctx c;
    char tmp[64];
    jsonin_ctx_init(&c, "f.json", text, flags, NULL);
    jsonin_push_key(&c, k, 0);
    const char *g = jsonin_got(&c, cJSON_GetObjectItemCaseSensitive(root, k), tmp, sizeof tmp);
    snprintf(out, n, "%s", g);
    cJSON_Delete(root);
    return out;
}

static void test_got_as_written_or_as_value(void **state)
{
    (void)state;
    char b[64];
    const unsigned V = JSONIN_GOT_VALUE;
    assert_string_equal(got_at("{\"x\": 1.50}", "x", 0, b, sizeof b), "1.50");
    assert_string_equal(got_at("{\"x\": 1.50}", "x", V, b, sizeof b), "1.5");
    assert_string_equal(got_at("{\"x\": 1e400}", "x", 0, b, sizeof b), "1e400");
    assert_string_equal(got_at("{\"x\": 1e400}", "x", V, b, sizeof b), "inf");
    assert_string_equal(got_at("{\"x\": \"a\\u0041\"}", "x", 0, b, sizeof b), "\"a\\u0041\"");
    assert_string_equal(got_at("{\"x\": \"a\\u0041\"}", "x", V, b, sizeof b), "\"aA\"");
    assert_string_equal(got_at("{\"x\": \"a\\u0001\"}", "x", V, b, sizeof b), "\"a?\"");
    assert_string_equal(got_at("{\"x\": [1]}", "x", 0, b, sizeof b), "an array");
    assert_string_equal(got_at("{\"x\": {}}", "x", V, b, sizeof b), "an object");
    assert_string_equal(got_at("{\"x\": null}", "x", 0, b, sizeof b), "null");
    assert_string_equal(got_at("{\"x\": true}", "x", V, b, sizeof b), "true");
    assert_string_equal(got_at("{\"y\": 1}", "x", V, b, sizeof b), "nothing");

    /* Long strings: cut to 37 bytes + "..." as written, 40 + "..." as value. */
    const char *longs = "{\"x\": \"0123456789012345678901234567890123456789XYZ\"}";
    assert_string_equal(got_at(longs, "x", 0, b, sizeof b),
                        "\"012345678901234567890123456789012345...");
    assert_string_equal(got_at(longs, "x", V, b, sizeof b),
                        "\"0123456789012345678901234567890123456789...\"");

    /* Where the walk cannot reach the value (an escaped key), the parsed
     * value is shown. */
    assert_string_equal(got_at("{\"\\u0078\": 0.1}", "x", 0, b, sizeof b),
                        "0.10000000000000001");
}

/* -------------------------------------------------------- field readers */

/* Run `check` on the parsed text; returns the message ("" when OK). */
typedef int (*check_fn)(jsonin_ctx *c, const cJSON *root);

static const char *run_check(const char *text, unsigned flags, check_fn check,
                             tc_err *e)
{
    cJSON *root = parse_ok(text);
    jsonin_ctx c;
    tc_err_clear(e);
    jsonin_ctx_init(&c, "f.json", text, flags, e);
    int rc = check(&c, root);
    assert_int_equal(rc, e->code);
    if (rc == TC_OK)
        assert_int_equal(c.depth, 0);
    cJSON_Delete(root);
    return e->msg;
}

static int check_ab(jsonin_ctx *c, const cJSON *root)
{
    static const char *const keys[] = {"a", "b"};
    return jsonin_check_keys(c, root, keys, 2);
}

static void test_check_keys(void **state)
{
    (void)state;
    tc_err e;
    assert_string_equal(run_check("{\"b\": 1, \"a\": 2}", 0, check_ab, &e), "");
    assert_string_equal(run_check("{\"a\": 1,\n \"zz\": 2}", 0, check_ab, &e),
                        "f.json:2: zz: unknown key (expected one of: a, b)");
    assert_string_equal(run_check("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}", 0, check_ab, &e),
                        "f.json:3: a: duplicate key");
    assert_string_equal(run_check("{\"a b\": 1}", JSONIN_KEYS_QUOTED, check_ab, &e),
                        "f.json:1: [\"a b\"]: unknown key (expected one of: a, b)");
}

static int check_flag(jsonin_ctx *c, const cJSON *root)
{
    int v = 7;
    int rc = jsonin_read_bool(c, root, "flag", 5, &v);
    if (rc == TC_OK && v != (cJSON_GetObjectItem(root, "flag") ? 1 : 5))
        return tc_err_set(c->err, TC_WRONG, "read %d", v);
    return rc;
}

static int check_dev(jsonin_ctx *c, const cJSON *root)
{
    jsonin_push_key(c, "dev", 0);
    int rc = jsonin_want_object(c, cJSON_GetObjectItem(root, "dev"));
    jsonin_pop(c);
    return rc;
}

/* cJSON reads "a\u0000b" as "a": a string holding \u0000, key or value,
 * anywhere in the document, is refused by jsonin_parse, naming the line of
 * the escape and the field (a key as written); an escaped backslash
 * followed by "u0000" is plain text and passes. */
static void test_parse_refuses_escaped_nul(void **state)
{
    (void)state;
    static const jsonin_doc QUOTED = {"widget", 64L << 20, JSONIN_KEYS_QUOTED};
    expect_parse_error("{\"name\": \"a\\u0000b\"}", &WIDGET,
                       "f.json:1: name: contains a NUL character (\\u0000), which would cut the "
                       "string short");
    expect_parse_error("{\n  \"links\": [\n    {\"source\": \"x\"},\n"
                       "    {\"source\": \"y\\u0000\"}\n  ]\n}", &WIDGET,
                       "f.json:4: links[1].source: contains a NUL character (\\u0000), which "
                       "would cut the string short");
    expect_parse_error("{\"notes\": [\"a\",\n \"\\\\\\u0000\"]}", &WIDGET,
                       "f.json:2: notes[1]: contains a NUL character (\\u0000), which would cut "
                       "the string short");
    expect_parse_error("{\n  \"na\\u0000me\": 1}", &WIDGET,
                       "f.json:2: na\\u0000me: the key contains a NUL character (\\u0000), which "
                       "would cut the string short");
    expect_parse_error("{\"map\": {\"3\\u0000\": [1]}}", &QUOTED,
                       "f.json:1: map[\"3\\u0000\"]: the key contains a NUL character (\\u0000), "
                       "which would cut the string short");
    expect_parse_error("\"a\\u0000\"", &WIDGET,
                       "f.json:1: (top level): contains a NUL character (\\u0000), which would "
                       "cut the string short");
    cJSON *root = parse_ok("{\"a\": \"\\\\u0000\", \"b\": \"\\u0001\\u0100\"}");
    assert_string_equal(cJSON_GetObjectItem(root, "a")->valuestring, "\\u0000");
    cJSON_Delete(root);
}

static void test_read_bool_and_want_object(void **state)
{
    (void)state;
    tc_err e;
    assert_string_equal(run_check("{\"flag\": true}", 0, check_flag, &e), "");
    assert_string_equal(run_check("{}", 0, check_flag, &e), "");
    assert_string_equal(run_check("{\n\"flag\": 3}", 0, check_flag, &e),
                        "f.json:2: flag: expected true or false, got 3");
    assert_string_equal(run_check("{\"flag\": \"yes\"}", JSONIN_GOT_VALUE, check_flag, &e),
                        "f.json:1: flag: expected true or false, got \"yes\"");
    assert_string_equal(run_check("{\"dev\": {}}", 0, check_dev, &e), "");
    assert_string_equal(run_check("{\"dev\":\n [1]}", 0, check_dev, &e),
                        "f.json:1: dev: expected an object, got an array");
}

/* Every element of "r" must be a local rank 0..7. */
static int check_ranks(jsonin_ctx *c, const cJSON *root)
{
    const cJSON *arr = cJSON_GetObjectItem(root, "r");
    int i = 0, rc = TC_OK, r = -1;
    jsonin_push_key(c, "r", 0);
    for (const cJSON *e = arr->child; e && rc == TC_OK; e = e->next, i++) {
        jsonin_push_index(c, i);
        rc = jsonin_read_rank(c, e, 7, &r);
        if (rc == TC_OK && r != i)
            rc = tc_err_set(c->err, TC_WRONG, "read %d", r);
        jsonin_pop(c);
    }
    jsonin_pop(c);
    return rc;
}

static void test_read_rank(void **state)
{
    (void)state;
    tc_err e;
    assert_string_equal(run_check("{\"r\": [0, 1, 2.0]}", 0, check_ranks, &e), "");
    assert_string_equal(run_check("{\"r\": [0,\n 9]}", 0, check_ranks, &e),
                        "f.json:2: r[1]: expected a local rank (an integer in 0..7), got 9");
    assert_string_equal(run_check("{\"r\": [0, 1.5]}", 0, check_ranks, &e),
                        "f.json:1: r[1]: expected a local rank (an integer in 0..7), got 1.5");
    assert_string_equal(run_check("{\"r\": [\"0\"]}", 0, check_ranks, &e),
                        "f.json:1: r[0]: expected a local rank (an integer in 0..7), got \"0\"");
}

static int check_notes_strict(jsonin_ctx *c, const cJSON *root)
{
    const cJSON *out = root;
    int rc = jsonin_read_notes(c, root, 1, &out);
    if (rc == TC_OK && out != cJSON_GetObjectItem(root, "notes"))
        return tc_err_set(c->err, TC_WRONG, "wrong item");
    return rc;
}

static int check_notes_loose(jsonin_ctx *c, const cJSON *root)
{
    const cJSON *out;
    return jsonin_read_notes(c, root, 0, &out);
}

static void test_read_notes(void **state)
{
    (void)state;
    tc_err e;
    assert_string_equal(run_check("{}", 0, check_notes_strict, &e), "");
    assert_string_equal(run_check("{\"notes\": \"a\\tb\"}", 0, check_notes_strict, &e), "");
    assert_string_equal(run_check("{\"notes\": [\"a\", \"b\"]}", 0, check_notes_strict, &e), "");
    assert_string_equal(run_check("{\"notes\": [\"ok\",\n 5]}", 0, check_notes_strict, &e),
                        "f.json:2: notes[1]: expected a string, got 5");
    assert_string_equal(run_check("{\"notes\": 3}", 0, check_notes_strict, &e),
                        "f.json:1: notes: expected a string or an array of strings, got 3");
    assert_string_equal(run_check("{\"notes\": [\"a\\u0001\"]}", 0, check_notes_strict, &e),
                        "f.json:1: notes[0]: control character 0x01 in a string (write it "
                        "escaped, or leave it out)");
    assert_string_equal(run_check("{\"notes\": \"a\\n\"}", 0, check_notes_loose, &e), "");
}

static void test_small_predicates(void **state)
{
    (void)state;
    cJSON *root = parse_ok("{\"a\": 3.0, \"b\": 3.5, \"c\": 1e400, \"d\": \"3\", \"a\": 4}");
    const cJSON *a = root->child, *b = a->next, *cc = b->next, *d = cc->next;
    assert_true(jsonin_is_int_in(a, 0, 3));
    assert_false(jsonin_is_int_in(a, 4, 9));
    assert_false(jsonin_is_int_in(b, 0, 9));
    assert_false(jsonin_is_int_in(cc, 0, 1e308));
    assert_false(jsonin_is_int_in(d, 0, 9));
    assert_int_equal(jsonin_nth_key(root, a), 0);
    assert_int_equal(jsonin_nth_key(root, d->next), 1);
    cJSON_Delete(root);

    tc_err e;
    jsonin_ctx c;
    jsonin_ctx_init(&c, "f.json", "{}", 0, &e);
    assert_int_equal(jsonin_check_control(&c, "tab\tok", "!"), TC_OK);
    assert_int_equal(jsonin_check_control(&c, "cr\r", "!"), TC_INPUT);
    assert_string_equal(e.msg, "f.json:1: (top level): control character 0x0d in a string!");
}

/* ------------------------------------------------------------ the file */

static void test_read_file_refusals(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_jsonin_XXXXXX", path[512], want[700];
    make_dir(dir);
    expect_read_error(NULL, &WIDGET, "widget: no file name given");
    snprintf(want, sizeof want, "%s: is a directory, not a widget file", dir);
    expect_read_error(dir, &WIDGET, want);
    snprintf(path, sizeof path, "%s/nope.json", dir);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    expect_read_error(path, &WIDGET, want);

    snprintf(path, sizeof path, "%s/nul.json", dir);
    write_file(path, "{\n  \"a\"\0}", 9);
    snprintf(want, sizeof want, "%s:2:6: contains a NUL byte (not a text file?)", path);
    expect_read_error(path, &WIDGET, want);
    assert_int_equal(unlink(path), 0);

    /* An empty file reads as "", which jsonin_parse calls empty. */
    snprintf(path, sizeof path, "%s/empty.json", dir);
    write_file(path, "", 0);
    tc_err e;
    char *text = jsonin_read_file(path, &WIDGET, &e);
    assert_non_null(text);
    assert_string_equal(text, "");
    assert_null(jsonin_parse(text, path, &WIDGET, NULL, &e));
    snprintf(want, sizeof want, "%s: empty file: expected a JSON object describing a widget",
             path);
    assert_string_equal(e.msg, want);
    free(text);
    assert_int_equal(unlink(path), 0);

#ifdef __linux__
    /* A file that opens but cannot be read (offset 0 of a process's memory). */
    jsonin_doc terse = WIDGET;
    terse.flags = JSONIN_READ_TERSE;
    expect_read_error("/proc/self/mem", &terse, "/proc/self/mem: cannot read");
    tc_err_clear(&e);
    assert_null(jsonin_read_file("/proc/self/mem", &WIDGET, &e));
    assert_int_equal(strncmp(e.msg, "/proc/self/mem: cannot read: ", 29), 0);
#endif
    assert_int_equal(rmdir(dir), 0);
}

static void test_read_file_size_cap(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_jsonin_XXXXXX", path[512], want[700];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/f.json", dir);
    jsonin_doc small = WIDGET;
    small.max_bytes = 16;

    /* Below the cap: all of it, NUL-terminated. */
    write_file(path, "{\"a\": [1, 2, 3]}", 15);
    tc_err e;
    char *text = jsonin_read_file(path, &small, &e);
    assert_non_null(text);
    assert_string_equal(text, "{\"a\": [1, 2, 3]");
    free(text);

    /* At the cap: refused. */
    write_file(path, "{\"a\": [1, 2, 3]}", 16);
    snprintf(want, sizeof want, "%s: file too large (the limit is 16 bytes)", path);
    expect_read_error(path, &small, want);

    /* Whole MiB caps are named in MiB; a file past 4096 bytes grows the buffer. */
    small.max_bytes = 1L << 20;
    size_t n = (1u << 20) - 1;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    write_file(path, big, n);
    text = jsonin_read_file(path, &small, &e);
    assert_non_null(text);
    assert_int_equal(strlen(text), n);
    assert_memory_equal(text, big, n);
    free(text);
    big[n - 1] = ' ';
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputc('}', f);
    fclose(f);
    snprintf(want, sizeof want, "%s: file too large (the limit is 1 MiB)", path);
    expect_read_error(path, &small, want);
    free(big);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locate_objects_and_arrays),
        cmocka_unit_test(test_locate_map_keys_and_repeats),
        cmocka_unit_test(test_locate_stops_where_the_path_ends),
        cmocka_unit_test(test_locate_bom_and_cjson_whitespace),
        cmocka_unit_test(test_utf8_accepts_valid_text),
        cmocka_unit_test(test_utf8_rejects_bad_bytes),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_syntax_error_excerpts),
        cmocka_unit_test(test_syntax_error_fields),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_parse_refuses_escaped_nul),
        cmocka_unit_test(test_lone_cr_to_lf),
        cmocka_unit_test(test_parse_bom_positions),
        cmocka_unit_test(test_path_rendering),
        cmocka_unit_test(test_path_keys_plain_or_quoted),
        cmocka_unit_test(test_deep_paths_are_kept_to_the_limit),
        cmocka_unit_test(test_fail_names_line_and_path),
        cmocka_unit_test(test_got_as_written_or_as_value),
        cmocka_unit_test(test_check_keys),
        cmocka_unit_test(test_read_bool_and_want_object),
        cmocka_unit_test(test_read_rank),
        cmocka_unit_test(test_read_notes),
        cmocka_unit_test(test_small_predicates),
        cmocka_unit_test(test_read_file_refusals),
        cmocka_unit_test(test_read_file_size_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
