/* jsonin.c — reading JSON input files with messages that point at the line
 * (see jsonin.h).
 *
 * cJSON parses the text but keeps no positions, so the line of a field is
 * found afterwards by walking the raw text along the field's path: skip
 * values until the nth occurrence of the key (or the index-th element), step
 * in, repeat.  The walker only ever sees text cJSON accepted, so it need not
 * diagnose anything, but it must skip what cJSON skips: cJSON takes every
 * byte 0x01..0x20 for whitespace, not only space, tab, CR and LF.  (Blank
 * files and the end of a syntax error are judged by the four usual ones.)
 *
 * The flags of jsonin_doc / jsonin_ctx select between the two message
 * conventions of the loaders (see jsonin.h); each choice is one small
 * function here, so nothing else depends on them. */
#include "jsonin.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mem.h"
#include "paths.h"

#define BLANKS " \t\r\n"
#define NEAR_MAX 32                     /* syntax-error excerpt buffer */

static int is_continuation(char ch)
{
    return ((unsigned char)ch & 0xC0) == 0x80;
}

/* ------------------------------------------------------------ raw text */

size_t jsonin_utf8_invalid_at(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned b = s[i], need, lo = 0x80, hi = 0xBF;
        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF) {
            need = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
            need = 2;       /* E0: no overlong forms; ED: no surrogates */
            lo = b == 0xE0 ? 0xA0 : 0x80;
            hi = b == 0xED ? 0x9F : 0xBF;
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3;       /* F0: no overlong forms; F4: nothing past U+10FFFF */
            lo = b == 0xF0 ? 0x90 : 0x80;
            hi = b == 0xF4 ? 0x8F : 0xBF;
        } else {
            return i;       /* a stray continuation byte, C0/C1, F5..FF */
        }
        if (i + need >= n || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return i;
        i += need + 1;
    }
    return n;
}

void jsonin_line_col(const char *text, size_t off, int *line, int *col)
{
    size_t start = 0;
    *line = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n') {
            (*line)++;
            start = i + 1;
        }
    *col = (int)(off - start) + 1;
}

const char *jsonin_skip_bom(const char *text)
{
    return strncmp(text, "\xEF\xBB\xBF", 3) == 0 ? text + 3 : text;
}

int jsonin_is_blank(const char *p)
{
    return p[strspn(p, BLANKS)] == '\0';
}

/* ------------------------------------------------------------ the walker */

/* Whitespace as cJSON skips it. */
static int is_json_space(char ch)
{
    return ch != '\0' && (unsigned char)ch <= 0x20;
}

/* Length of the number or literal at p. */
static size_t scalar_len(const char *p)
{
    size_t n = 0;
    while (p[n] && !is_json_space(p[n]) && !strchr(",:]}", p[n]))
        n++;
    return n;
}

static const char *skip_blanks(const char *p, int *line)
{
    for (; is_json_space(*p); p++)
        if (*p == '\n')
            (*line)++;
    return p;
}

/* p at '"': just past the closing quote. */
static const char *skip_string(const char *p, int *line)
{
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        if (*p == '\n')
            (*line)++;
    }
    return *p ? p + 1 : p;
}

/* Skip one value; always advances unless at the end of the text. */
static const char *skip_value(const char *p, int *line)
{
    p = skip_blanks(p, line);
    if (*p == '"')
        return skip_string(p, line);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        for (p++;;) {
            p = skip_blanks(p, line);
            if (!*p)
                return p;
            if (*p == close)
                return p + 1;
            p = (*p == ',' || *p == ':') ? p + 1 : skip_value(p, line);
        }
    }
    const char *q = p + scalar_len(p);
    return (q == p && *q) ? q + 1 : q;
}

/* p just inside '{': find the nth occurrence of key; p at its value. */
static const char *find_key(const char *p, const jsonin_step *s, int *line,
                            int *key_line)
{
    size_t klen = strlen(s->key);
    int seen = 0;
    for (;;) {
        p = skip_blanks(p, line);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p != '"')
            return NULL;
        const char *k = p + 1;
        *key_line = *line;
        p = skip_string(p, line);
        size_t len = (size_t)(p - 1 - k);
        p = skip_blanks(p, line);
        if (*p != ':')
            return NULL;
        p = skip_blanks(p + 1, line);
        if (len == klen && memcmp(k, s->key, len) == 0 && seen++ == s->nth)
            return p;
        p = skip_value(p, line);
    }
}

/* p just inside '[': find element `index`; p at it. */
static const char *find_index(const char *p, int index, int *line)
{
    for (int i = 0;; i++) {
        p = skip_blanks(p, line);
        if (*p == ',')
            p = skip_blanks(p + 1, line);
        if (!*p || *p == ']')
            return NULL;
        if (i == index)
            return p;
        p = skip_value(p, line);
    }
}

int jsonin_locate(const char *text, const jsonin_step *path, int n, int *depth,
                  const char **value)
{
    int line = 1;
    const char *p = skip_blanks(jsonin_skip_bom(text), &line);
    int best = line, d = 0;
    const char *val = p;
    for (; d < n; d++) {
        const jsonin_step *s = &path[d];
        const char *q = NULL;
        int step_line = line;
        if (*p == (s->key ? '{' : '['))
            q = s->key ? find_key(p + 1, s, &line, &step_line)
                       : find_index(p + 1, s->index, &line);
        if (!q)
            break;
        best = s->key ? step_line : line;
        val = p = q;
    }
    if (depth)
        *depth = d;
    if (value)
        *value = val;
    return best;
}

/* ------------------------------------------------------- text to cJSON */

/* Copy up to `max` bytes of s into dst (size n), control characters as '?'. */
static void clean_copy(char *dst, size_t n, const char *s, size_t max)
{
    size_t k = 0;
    for (; *s && k + 1 < n && k < max; s++)
        dst[k++] = (unsigned char)*s < 0x20 ? '?' : *s;
    dst[k] = '\0';
}

/* Copy text[from..to) into near (NEAR_MAX bytes), control characters as ' '. */
static void copy_excerpt(char *near, const char *text, size_t from, size_t to)
{
    size_t k = 0;
    for (size_t i = from; i < to && k < NEAR_MAX - 1; i++)
        near[k++] = (unsigned char)text[i] < 0x20 ? ' ' : text[i];
    near[k] = '\0';
}

/* Up to 12 bytes either side of off on its line, without leading blanks and
 * without a multi-byte character cut at either end. */
static void excerpt_around(const char *text, size_t len, size_t off, char *near)
{
    size_t from = off, to = off;
    while (from > 0 && off - from < 12 && text[from - 1] != '\n' &&
           text[from - 1] != '\r')
        from--;
    while (to < len && to - off < 12 && text[to] != '\n' && text[to] != '\r')
        to++;
    while (from < off && (text[from] == ' ' || text[from] == '\t' ||
                          is_continuation(text[from])))
        from++;
    while (to > off + 1 && to < len && is_continuation(text[to]))
        to--;
    copy_excerpt(near, text, from, to);
}

/* Length of near[0..k) without a multi-byte character cut at its end. */
static size_t utf8_trim(const char *near, size_t k)
{
    size_t j = k;
    while (j > 0 && is_continuation(near[j - 1]))
        j--;
    if (j == 0)
        return k;
    unsigned lead = (unsigned char)near[j - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return k - (j - 1) < want ? j - 1 : k;
}

/* From up to 10 bytes before off (no leading spaces), 22 bytes of its line. */
static void excerpt_ahead(const char *text, size_t off, char *near)
{
    size_t from = off, to;
    while (from > 0 && off - from < 10 && text[from - 1] != '\n' &&
           text[from - 1] != '\r')
        from--;
    while (from < off && (text[from] == ' ' || is_continuation(text[from])))
        from++;
    for (to = from; text[to] && text[to] != '\n' && text[to] != '\r' &&
                    to - from < 22; to++)
        ;
    copy_excerpt(near, text, from, to);
    near[utf8_trim(near, to - from)] = '\0';
}

/* ------------------------------------------- where a syntax error lies */

/* Text that did not parse has no tree to name a field by, so the text up
 * to the error is scanned for the containers still open there: that gives
 * the field the error is in (or after) and how deeply it is nested. */
enum { OPEN_KEEP = 12 };        /* containers kept for the path */

typedef struct {
    int is_obj;
    const char *key;    /* object: the key being read, or last read */
    size_t klen;
    int after;          /* object: a ',' followed that key's value */
    int index;          /* array: the element being read */
} open_box;

typedef struct {
    open_box box[OPEN_KEEP];
    int depth;          /* containers open, may exceed OPEN_KEEP */
    int max_depth;      /* the most that were open at once */
} open_scan;

/* Past the string starting at text[i] == '"', stopping at off. */
static size_t skip_open_string(const char *text, size_t i, size_t off)
{
    for (i++; i < off && text[i] != '"'; i++)
        if (text[i] == '\\')
            i++;
    return i;
}

static void scan_open(const char *text, size_t off, open_scan *sc)
{
    memset(sc, 0, sizeof *sc);
    int want_key = 0;
    for (size_t i = 0; i < off; i++) {
        open_box *top = sc->depth > 0 && sc->depth <= OPEN_KEEP ? &sc->box[sc->depth - 1] : NULL;
        char ch = text[i];
        if (ch == '"') {
            size_t end = skip_open_string(text, i, off);
            if (top && top->is_obj && want_key) {
                top->key = text + i + 1;
                top->klen = end - i - 1;
                top->after = 0;
                want_key = 0;
            }
            i = end;
        } else if (ch == '{' || ch == '[') {
            if (sc->depth < OPEN_KEEP)
                sc->box[sc->depth] = (open_box){ch == '{', NULL, 0, 0, 0};
            if (++sc->depth > sc->max_depth)
                sc->max_depth = sc->depth;
            want_key = ch == '{';
        } else if (ch == '}' || ch == ']') {
            if (sc->depth > 0)
                sc->depth--;
            want_key = 0;
        } else if (ch == ',' && top) {
            if (top->is_obj)
                top->after = want_key = 1;
            else
                top->index++;
        } else if (ch == ':') {
            want_key = 0;
        }
    }
}

/* The path of the containers open in sc, written as the loaders write it
 * (flags: JSONIN_*), into path ("" at the top level; "..." after it when
 * deeper than OPEN_KEEP); *after: the text is past the value of the last
 * key, at a ','. */
static void open_path_str(const open_scan *sc, unsigned flags, char *path, size_t n, int *after)
{
    char keys[OPEN_KEEP][52];
    jsonin_ctx c;
    jsonin_ctx_init(&c, "", NULL, flags, NULL);
    int kept = sc->depth < OPEN_KEEP ? sc->depth : OPEN_KEEP;
    *after = 0;
    for (int d = 0; d < kept; d++) {
        const open_box *b = &sc->box[d];
        if (!b->is_obj) {
            jsonin_push_index(&c, b->index);
            continue;
        }
        if (!b->key)
            break;
        size_t k = b->klen < sizeof keys[d] - 1 ? b->klen : sizeof keys[d] - 1;
        memcpy(keys[d], b->key, k);
        keys[d][k] = '\0';
        jsonin_push_key(&c, keys[d], 0);
        *after = b->after && d == sc->depth - 1;
    }
    if (c.depth == 0) {
        path[0] = '\0';
        return;
    }
    jsonin_path_str(&c, path, n);
    if (sc->depth > OPEN_KEEP) {
        size_t used = strlen(path);
        snprintf(path + used, n - used, "...");
    }
}

/* " (in links[2].alpha_us)", " (after nodes)", or "" at the top level. */
static void open_path(const open_scan *sc, unsigned flags, char *buf, size_t n)
{
    char path[256];
    int after;
    open_path_str(sc, flags, path, sizeof path, &after);
    if (!path[0]) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, n, " (%s %s)", after ? "after" : "in", path);
}

/* cJSON often stops just past the offending token, so when it points at
 * blank space the position moves back to the last character written.  The
 * message ends with the field the error is in, and says so when it is
 * cJSON's nesting limit rather than the syntax that stopped it. */
int jsonin_syntax_error(const char *text, const char *label, const char *at,
                        unsigned flags, tc_err *err)
{
    size_t len = strlen(text);
    size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : len;
    int line, col;
    open_scan sc;
    char where[300];
    scan_open(text, off, &sc);
    open_path(&sc, flags, where, sizeof where);
    if (sc.max_depth >= CJSON_NESTING_LIMIT) {
        jsonin_line_col(text, off, &line, &col);
        return tc_err_set(err, TC_INPUT, "%s:%d:%d: nested deeper than the JSON reader's "
                          "limit of %d arrays and objects%s", label, line, col,
                          CJSON_NESTING_LIMIT, where);
    }
    if (jsonin_is_blank(text + off)) {
        jsonin_line_col(text, len, &line, &col);
        return tc_err_set(err, TC_INPUT, "%s:%d:%d: JSON syntax error: "
                          "unexpected end of file%s", label, line, col, where);
    }
    while (off > 0 && strchr(BLANKS, text[off]))
        off--;
    jsonin_line_col(text, off, &line, &col);
    char near[NEAR_MAX];
    if (flags & JSONIN_NEAR_AHEAD)
        excerpt_ahead(text, off, near);
    else
        excerpt_around(text, len, off, near);
    return tc_err_set(err, TC_INPUT, "%s:%d:%d: JSON syntax error near '%s'%s",
                      label, line, col, near, where);
}

/* ------------------------------------------- NUL characters in strings */

/* The first \u0000 escape in a string of text (which cJSON accepted, so a
 * '"' outside a string opens one), or NULL; *str: that string's opening
 * quote. */
static const char *escaped_nul(const char *text, const char **str)
{
    for (const char *p = text; (p = strchr(p, '"')) != NULL;) {
        *str = p;
        for (p++; *p && *p != '"'; p++) {
            if (*p != '\\')
                continue;
            if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0)
                return p;
            p++;        /* the escaped character; \uXXXX's digits are plain */
        }
        if (*p)
            p++;
    }
    return NULL;
}

/* cJSON decodes \u0000 into a NUL byte and so cuts the string there
 * ("a\u0000b" reads as "a"), a key as much as a value.  No field of ours
 * can hold a NUL, so one anywhere is refused here, before any field is
 * judged: "LABEL:LINE: PATH: contains a NUL character (\u0000)", PATH the
 * field (the key itself when the key holds it, spelled as written) and
 * LINE the escape's. */
static int refuse_escaped_nul(const char *text, const char *label, unsigned flags,
                              tc_err *err)
{
    const char *str = NULL, *at = escaped_nul(text, &str);
    if (!at)
        return TC_OK;
    int dummy = 0, line, col;
    const char *end = skip_string(str, &dummy);
    open_scan sc;
    scan_open(text, (size_t)(end - text), &sc);
    char path[256];
    int after;
    open_path_str(&sc, flags, path, sizeof path, &after);
    const char *next = end;
    while (is_json_space(*next))
        next++;
    jsonin_line_col(text, (size_t)(at - text), &line, &col);
    return tc_err_set(err, TC_INPUT, "%s:%d: %s: %s a NUL character (\\u0000), which would "
                      "cut the string short", label, line, path[0] ? path : "(top level)",
                      *next == ':' ? "the key contains" : "contains");
}

size_t jsonin_lone_cr_to_lf(char *text, size_t n)
{
    size_t changed = 0;
    char *end = text + n;
    for (char *c = text; (c = memchr(c, '\r', (size_t)(end - c))) != NULL; c++)
        if (c + 1 == end || c[1] != '\n') {
            *c = '\n';
            changed++;
        }
    return changed;
}

int jsonin_utf16_error(const char *text, size_t n, const char *label, tc_err *err)
{
    const unsigned char *u = (const unsigned char *)text;
    if (n < 2 || !((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
        return 0;
    tc_err_set(err, TC_INPUT, "%s:1:1: UTF-16 text (byte-order mark 0x%02X 0x%02X): save it as "
               "UTF-8", label, u[0], u[1]);
    return 1;
}

cJSON *jsonin_parse(const char *text, const char *label, const jsonin_doc *doc,
                    const char **parsed, tc_err *err)
{
    if (!text) {
        tc_err_set(err, TC_INPUT, "%s: no text given", label);
        return NULL;
    }
    size_t len = strlen(text);
    if (jsonin_utf16_error(text, len, label, err))
        return NULL;
    size_t bad = jsonin_utf8_invalid_at((const unsigned char *)text, len);
    if (bad < len) {
        int line, col;
        jsonin_line_col(text, bad, &line, &col);
        tc_err_set(err, TC_INPUT, "%s:%d:%d: not valid UTF-8 (byte 0x%02x)",
                   label, line, col, (unsigned char)text[bad]);
        return NULL;
    }
    if (jsonin_is_blank(jsonin_skip_bom(text))) {
        tc_err_set(err, TC_INPUT, "%s: empty file: expected a JSON object "
                   "describing a %s", label, doc->what);
        return NULL;
    }
    const char *body = (doc->flags & JSONIN_AFTER_BOM) ? jsonin_skip_bom(text) : text;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(body, &end, 1);
    if (!root) {
        jsonin_syntax_error(body, label, end, doc->flags, err);
        return NULL;
    }
    if (refuse_escaped_nul(body, label, doc->flags, err) != TC_OK) {
        cJSON_Delete(root);
        return NULL;
    }
    if (parsed)
        *parsed = body;
    return root;
}

/* ------------------------------------------------------------ the file */

/* "64 MiB", or bytes when the limit is not whole MiB. */
static int too_large(const char *path, long max, tc_err *err)
{
    if (max % (1L << 20) == 0)
        return tc_err_set(err, TC_INPUT, "%s: file too large (the limit is %ld "
                          "MiB)", path, max >> 20);
    return tc_err_set(err, TC_INPUT, "%s: file too large (the limit is %ld "
                      "bytes)", path, max);
}

/* Everything fd holds, NUL-terminated, in *out (*n bytes); TC_INPUT once
 * it reaches max bytes or a read fails. */
static int read_all(int fd, const char *path, const jsonin_doc *doc,
                    char **out, size_t *n, tc_err *err)
{
    size_t max = doc->max_bytes > 0 ? (size_t)doc->max_bytes : 1;
    size_t cap = max < 4096 ? max : 4096, used = 0;
    char *buf = xrealloc(NULL, cap + 1);
    for (;;) {
        if (used == cap) {
            if (cap >= max) {
                free(buf);
                return too_large(path, (long)max, err);
            }
            cap = 2 * cap < max ? 2 * cap : max;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t got = read(fd, buf + used, cap - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            if (doc->flags & JSONIN_READ_TERSE)
                return tc_err_set(err, TC_INPUT, "%s: cannot read", path);
            return tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(e));
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    buf[used] = '\0';
    *out = buf;
    *n = used;
    return TC_OK;
}

char *jsonin_read_file(const char *path, const jsonin_doc *doc, tc_err *err)
{
    if (!path) {
        tc_err_set(err, TC_INPUT, "%s: no file name given", doc->what);
        return NULL;
    }
    /* a regular file under the bound, opened without blocking (a FIFO is
     * refused, not waited on); read_all still stops at the bound, for a
     * file that grows or whose size the system does not report (/proc) */
    int fd = path_open_input(path, doc->what, doc->max_bytes, err);
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    int rc = read_all(fd, path, doc, &buf, &n, err);
    close(fd);
    if (rc != TC_OK)
        return NULL;
    if (jsonin_utf16_error(buf, n, path, err)) {
        free(buf);
        return NULL;
    }
    jsonin_lone_cr_to_lf(buf, n);
    size_t nul = strlen(buf);
    if (nul < n) {
        int line, col;
        jsonin_line_col(buf, nul, &line, &col);
        tc_err_set(err, TC_INPUT, "%s:%d:%d: contains a NUL byte (not a text "
                   "file?)", path, line, col);
        free(buf);
        return NULL;
    }
    return buf;
}

/* -------------------------------------------------------- error context */

void jsonin_ctx_init(jsonin_ctx *c, const char *label, const char *text,
                     unsigned flags, tc_err *err)
{
    memset(c, 0, sizeof *c);
    c->label = label;
    c->text = text;
    c->flags = flags;
    c->err = err;
}

static void push_step(jsonin_ctx *c, jsonin_step s)
{
    if (c->depth < JSONIN_MAX_DEPTH)
        c->path[c->depth] = s;
    c->depth++;
}

void jsonin_push_key(jsonin_ctx *c, const char *key, int nth)
{
    push_step(c, (jsonin_step){key, -1, nth, 0});
}

void jsonin_push_map_key(jsonin_ctx *c, const char *key, int nth)
{
    push_step(c, (jsonin_step){key, -1, nth, 1});
}

void jsonin_push_index(jsonin_ctx *c, int i)
{
    push_step(c, (jsonin_step){NULL, i, 0, 0});
}

void jsonin_pop(jsonin_ctx *c)
{
    c->depth--;
}

/* How many steps of the path are kept. */
static int kept_depth(const jsonin_ctx *c)
{
    return c->depth < JSONIN_MAX_DEPTH ? c->depth : JSONIN_MAX_DEPTH;
}

static int is_ident(const char *s)
{
    if (!*s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* Step i of the path as text (".key", "key", "[3]", "[\"3\"]"); returns
 * the length snprintf reports. */
static size_t step_str(const jsonin_ctx *c, int i, char *buf, size_t n)
{
    const jsonin_step *s = &c->path[i];
    const char *dot = i ? "." : "";
    char k[64];
    if (!s->key)
        return (size_t)snprintf(buf, n, "[%d]", s->index);
    if (!s->map_key && !(c->flags & JSONIN_KEYS_QUOTED))
        return (size_t)snprintf(buf, n, "%s%s", dot, s->key);
    clean_copy(k, sizeof k, s->key, 48);
    if (!s->map_key && is_ident(s->key))
        return (size_t)snprintf(buf, n, "%s%s", dot, k);
    return (size_t)snprintf(buf, n, "[\"%s\"]", k);
}

void jsonin_path_str(const jsonin_ctx *c, char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < kept_depth(c) && used < n; i++)
        used += step_str(c, i, buf + used, n - used);
    if (kept_depth(c) == 0)
        snprintf(buf, n, "(top level)");
}

int jsonin_fail(jsonin_ctx *c, const char *fmt, ...)
{
    char what[640], where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    jsonin_path_str(c, where, sizeof where);
    int line = c->text ? jsonin_locate(c->text, c->path, kept_depth(c), NULL, NULL) : 0;
    return tc_err_set(c->err, TC_INPUT, "%s:%d: %s: %s", c->label, line, where,
                      what);
}

/* The parsed value: strings cut at 40 bytes (with "..." and control
 * characters as '?' when `clean`), numbers to `digits` digits. */
static const char *got_parsed(const cJSON *it, char *buf, size_t n, int clean,
                              int digits)
{
    if (!it)
        return "nothing";
    if (cJSON_IsString(it) && clean) {
        char s[48];
        clean_copy(s, sizeof s, it->valuestring, 40);
        snprintf(buf, n, "\"%s%s\"", s, strlen(it->valuestring) > 40 ? "..." : "");
    } else if (cJSON_IsString(it)) {
        snprintf(buf, n, "\"%.40s\"", it->valuestring);
    } else if (cJSON_IsNumber(it)) {
        snprintf(buf, n, "%.*g", digits, it->valuedouble);
    } else if (cJSON_IsBool(it)) {
        return cJSON_IsTrue(it) ? "true" : "false";
    } else if (cJSON_IsNull(it)) {
        return "null";
    } else {
        return cJSON_IsArray(it) ? "an array" : "an object";
    }
    return buf;
}

/* The value at the top of the path as written in the text: a string with
 * its quotes and escapes, a number as spelled; over 40 bytes cut to 37 and
 * "...".  Falls back to the parsed value when the walk cannot reach it. */
static const char *got_written(const jsonin_ctx *c, const cJSON *it, char *buf,
                               size_t n)
{
    int depth = 0;
    const char *p = NULL;
    if (c->text)
        jsonin_locate(c->text, c->path, kept_depth(c), &depth, &p);
    if (!p || depth != c->depth || !*p)
        return got_parsed(it, buf, n, 0, 17);
    if (*p == '{')
        return "an object";
    if (*p == '[')
        return "an array";
    int dummy = 0;
    size_t len = *p == '"' ? (size_t)(skip_string(p, &dummy) - p)
                           : scalar_len(p);
    if (len <= 40) {
        snprintf(buf, n, "%.*s", (int)len, p);
        return buf;
    }
    for (len = 37; len > 0 && is_continuation(p[len]); len--)
        ;
    snprintf(buf, n, "%.*s...", (int)len, p);
    return buf;
}

const char *jsonin_got(const jsonin_ctx *c, const cJSON *it, char *buf, size_t n)
{
    if (c->flags & JSONIN_GOT_VALUE)
        return got_parsed(it, buf, n, 1, 15);
    return got_written(c, it, buf, n);
}

/* -------------------------------------------------------- field readers */

int jsonin_nth_key(const cJSON *obj, const cJSON *it)
{
    int nth = 0;
    for (const cJSON *q = obj->child; q && q != it; q = q->next)
        nth += strcmp(q->string, it->string) == 0;
    return nth;
}

int jsonin_is_int_in(const cJSON *it, double lo, double hi)
{
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
           it->valuedouble == floor(it->valuedouble) && it->valuedouble >= lo &&
           it->valuedouble <= hi;
}

/* Index of key in keys[0..nkeys-1], or -1. */
static int key_index(const char *const *keys, int nkeys, const char *key)
{
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i], key) == 0)
            return i;
    return -1;
}

static int unknown_key(jsonin_ctx *c, const char *const *keys, int nkeys)
{
    char list[400];
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < nkeys && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i ? ", " : "", keys[i]);
    return jsonin_fail(c, "unknown key (expected one of: %s)", list);
}

int jsonin_check_keys(jsonin_ctx *c, const cJSON *obj, const char *const *keys,
                      int nkeys)
{
    unsigned seen = 0;
    for (const cJSON *it = obj->child; it; it = it->next) {
        int k = key_index(keys, nkeys, it->string);
        jsonin_push_key(c, it->string, jsonin_nth_key(obj, it));
        if (k < 0)
            return unknown_key(c, keys, nkeys);
        if (seen & (1u << k))
            return jsonin_fail(c, "duplicate key");
        jsonin_pop(c);
        seen |= 1u << k;
    }
    return TC_OK;
}

int jsonin_want_object(jsonin_ctx *c, const cJSON *it)
{
    char g[64];
    if (!cJSON_IsObject(it))
        return jsonin_fail(c, "expected an object, got %s", jsonin_got(c, it, g, sizeof g));
    return TC_OK;
}

int jsonin_check_control(jsonin_ctx *c, const char *s, const char *hint)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 && *p != '\t')
            return jsonin_fail(c, "control character 0x%02x in a string%s", *p, hint);
    return TC_OK;
}

int jsonin_read_bool(jsonin_ctx *c, const cJSON *obj, const char *key,
                     int dflt, int *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, key, 0);
    if (!it)
        *out = dflt;
    else if (!cJSON_IsBool(it))
        rc = jsonin_fail(c, "expected true or false, got %s", jsonin_got(c, it, g, sizeof g));
    else
        *out = cJSON_IsTrue(it) ? 1 : 0;
    jsonin_pop(c);
    return rc;
}

/* Each element of the notes array at the top of the path is a string. */
static int read_note_list(jsonin_ctx *c, const cJSON *arr, int no_control)
{
    char g[64];
    int rc = TC_OK, i = 0;
    for (const cJSON *e = arr->child; e && rc == TC_OK; e = e->next, i++) {
        jsonin_push_index(c, i);
        if (!cJSON_IsString(e))
            rc = jsonin_fail(c, "expected a string, got %s", jsonin_got(c, e, g, sizeof g));
        else if (no_control)
            rc = jsonin_check_control(c, e->valuestring, JSONIN_CONTROL_HINT);
        jsonin_pop(c);
    }
    return rc;
}

int jsonin_read_notes(jsonin_ctx *c, const cJSON *obj, int no_control,
                      const cJSON **out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "notes");
    char g[64];
    int rc = TC_OK;
    *out = NULL;
    if (!it)
        return TC_OK;
    jsonin_push_key(c, "notes", 0);
    if (cJSON_IsString(it))
        rc = no_control ? jsonin_check_control(c, it->valuestring, JSONIN_CONTROL_HINT) : TC_OK;
    else if (cJSON_IsArray(it))
        rc = read_note_list(c, it, no_control);
    else
        rc = jsonin_fail(c, "expected a string or an array of strings, got %s",
                         jsonin_got(c, it, g, sizeof g));
    jsonin_pop(c);
    if (rc == TC_OK)
        *out = it;
    return rc;
}

int jsonin_read_rank(jsonin_ctx *c, const cJSON *it, int max, int *out)
{
    char g[64];
    if (!jsonin_is_int_in(it, 0, max))
        return jsonin_fail(c, "expected a local rank (an integer in 0..%d), got %s",
                           max, jsonin_got(c, it, g, sizeof g));
    *out = (int)it->valuedouble;
    return TC_OK;
}
