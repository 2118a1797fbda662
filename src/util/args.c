/* args.c — the option layer of the command-line tools (args.h).
 *
 * Why a table: each tool had its own 100-odd lines of if/strcmp, a second
 * copy of the rules for which option goes with which mode, and a help text
 * written beside them by hand.  Here one loop reads argv by the table,
 * one function checks modes, and the usage and help are printed from the
 * same rows, so a tool states each option exactly once. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "size.h"
#include "tcassert.h"
#include "units.h"

#define FIELD(base, off, type) ((type *)((char *)(base) + (off)))

#define USAGE_WIDTH 80  /* a usage line's length at most (unless one item is longer) */
#define HELP_COLUMN 20  /* where an option's help text starts */

int args_has(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return 0;
}

int args_row(const args_spec *s, const char *name)
{
    for (int i = 0; s->opts[i].name; i++)
        if (!strcmp(s->opts[i].name, name) || (s->opts[i].alias && !strcmp(s->opts[i].alias, name)))
            return i;
    return -1;
}

int args_parse(const args_spec *s, int argc, char **argv, void *base,
               unsigned long long *seen, tc_err *err)
{
    *seen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return ARGS_HELP;
        if (a[0] != '-' || !a[1]) {
            int *npos = FIELD(base, s->npos, int);
            if (*npos >= s->max_pos)
                return tc_err_set(err, TC_INPUT, s->too_many, a);
            FIELD(base, s->pos, const char *)[(*npos)++] = a;
            continue;
        }
        int row = args_row(s, a);
        if (row < 0)
            return tc_err_set(err, TC_INPUT, "unknown option '%s'", a);
        TC_ASSERT(row < 64);
        const args_opt *o = &s->opts[row];
        const char *v = NULL;
        if (o->value) {
            if (i + 1 >= argc)
                return tc_err_set(err, TC_INPUT, "%s needs a value", a);
            v = argv[++i];
        }
        *seen |= 1ULL << row;
        if (o->parse) {
            int rc = o->parse(o, v, base, err);
            if (rc != TC_OK)
                return rc;
        } else if (v) {
            *FIELD(base, o->field, const char *) = v;
        } else {
            *FIELD(base, o->field, int) = o->set;
        }
    }
    return TC_OK;
}

/* The modes in `bits` by name: "sketch mode or --plan". */
static void mode_names(const args_spec *s, unsigned bits, char *buf, size_t n)
{
    int count = 0, total = 0;
    for (const args_mode *m = s->modes; m->bit; m++)
        total += (bits & m->bit) != 0;
    buf[0] = '\0';
    for (const args_mode *m = s->modes; m->bit; m++) {
        if (!(bits & m->bit))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", count == 0 ? "" : count == total - 1 ? " or " : ", ",
                 m->name);
        count++;
    }
}

int args_check_mode(const args_spec *s, unsigned long long seen, unsigned mode, tc_err *err)
{
    const char *here = "";
    for (const args_mode *m = s->modes; m->bit; m++)
        if (m->bit == mode)
            here = m->name;
    for (int i = 0; s->opts[i].name; i++) {
        const args_opt *o = &s->opts[i];
        if (!(seen & (1ULL << i)) || (o->modes & mode))
            continue;
        char modes[256];
        mode_names(s, o->modes, modes, sizeof modes);
        return tc_err_set(err, TC_INPUT, "%s is for %s, not %s%s%s", o->name, modes, here,
                          o->note ? "; " : "", o->note ? o->note : "");
    }
    return TC_OK;
}

static int in_word(char ch)
{
    return isalnum((unsigned char)ch) || ch == '-';
}

/* Whether `word` stands in `text` as a word of its own. */
static int names(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        if ((p == text || !in_word(p[-1])) && !in_word(p[n]))
            return 1;
    return 0;
}

static void print_usage(const args_spec *s, FILE *f)
{
    int indent = (int)(strlen("usage: ") + strlen(s->tool) + 1);
    for (const args_mode *m = s->modes; m->bit; m++) {
        int col = fprintf(f, "%s%s %s", m == s->modes ? "usage: " : "       ", s->tool,
                          m->synopsis);
        for (const args_opt *o = s->opts; o->name; o++) {
            if (!(o->modes & m->bit) || (o->usage && !o->usage[0]) || names(m->synopsis, o->name) ||
                (o->alias && names(m->synopsis, o->alias)))
                continue;
            char item[160];
            if (o->usage)
                snprintf(item, sizeof item, "[%s]", o->usage);
            else
                snprintf(item, sizeof item, "[%s%s%s]", o->alias ? o->alias : o->name,
                         o->value ? " " : "", o->value ? o->value : "");
            if (col + 1 + (int)strlen(item) > USAGE_WIDTH)
                col = fprintf(f, "\n%*s%s", indent, "", item) - 1;
            else
                col += fprintf(f, " %s", item);
        }
        fputc('\n', f);
    }
}

/* The rest of --help after the usage. */
static void print_help(const args_spec *s, FILE *f)
{
    fprintf(f, "\n%s", s->about);
    for (const args_opt *o = s->opts; o->name; o++) {
        if (!o->help)
            continue;
        char label[128];
        snprintf(label, sizeof label, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
                 o->name, o->value ? " " : "", o->value ? o->value : "");
        fprintf(f, "  %-*s", HELP_COLUMN - 2, label);
        for (const char *line = o->help; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(f, "%*s%.*s\n", line == o->help ? 0 : HELP_COLUMN, "", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
    fputs(s->after, f);
}

/* The usage, and with `help` the rest of --help, allocated. */
static char *text(const args_spec *s, int help)
{
    char *t = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&t, &n);
    if (!f)
        tc_oom();
    print_usage(s, f);
    if (help)
        print_help(s, f);
    fclose(f);
    return t;
}

char *args_usage(const args_spec *s)
{
    return text(s, 0);
}

char *args_help(const args_spec *s)
{
    return text(s, 1);
}

/* ------------------------------------------------------------ the parsers */

int args_count(const args_opt *o, const char *v, void *base, tc_err *err)
{
    int ok = *v != '\0';
    for (const char *p = v; *p; p++)
        ok &= isdigit((unsigned char)*p) != 0;
    errno = 0;
    long x = ok ? strtol(v, NULL, 10) : 0;
    if (!ok || errno || x < 1 || x > o->hi)
        return tc_err_set(err, TC_INPUT, "%s: expected %s, got '%s'%s", o->name, o->expect, v,
                          units_hint(v));
    *FIELD(base, o->field, int) = (int)x;
    return TC_OK;
}

int args_real(const args_opt *o, const char *v, void *base, tc_err *err)
{
    double x;
    if (units_number(v, &x) || !(o->set ? x >= o->lo : x > o->lo) || !(x < o->hi))
        return tc_err_set(err, TC_INPUT, "%s: expected %s, got '%s'%s", o->name, o->expect, v,
                          units_hint(v));
    *FIELD(base, o->field, double) = x;
    return TC_OK;
}

/* v as a size into *out: TC_OK, TC_INPUT for a size out of range (said,
 * as `what` and the whole value), or -1 for no size at all (the caller
 * says what was expected). */
static int one_size(const char *what, const char *v, const char *whole, long long *out,
                    tc_err *err)
{
    switch (size_check(v, out)) {
    case SIZE_OK:
        return TC_OK;
    case SIZE_ZERO:
        return tc_err_set(err, TC_INPUT, "%s: at least 1 byte, got '%s'", what, whole);
    case SIZE_TOO_LARGE:
        return tc_err_set(err, TC_INPUT, "%s: at most 4194304T (2^62 bytes), got '%s'", what,
                          whole);
    default:
        return -1;
    }
}

int args_size(const args_opt *o, const char *v, void *base, tc_err *err)
{
    int rc = one_size(o->name, v, v, FIELD(base, o->field, long long), err);
    if (rc == -1) {
        char hint[128];
        rc = tc_err_set(err, TC_INPUT, "%s: not a size in bytes: '%s' (e.g. 1048576, 64K, 1MB)%s",
                        o->name, v, size_hint(v, hint, sizeof hint));
    }
    return rc;
}

/* One end of a range: a size, or with ARGS_OPEN "0" (LO) or "inf" (HI). */
static int range_end(const args_opt *o, int hi_end, const char *v, const char *whole,
                     long long *out, tc_err *err)
{
    if ((o->set & ARGS_OPEN) && !strcmp(v, hi_end ? "inf" : "0")) {
        *out = hi_end ? INT64_MAX : 0;
        return TC_OK;
    }
    char what[64];
    snprintf(what, sizeof what, "%s: %s", o->name, hi_end ? "HI" : "LO");
    return one_size(what, v, whole, out, err);
}

int args_range(const args_opt *o, const char *v, void *base, tc_err *err)
{
    char lo[64];
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : 0;
    long long a = 0, b = 0;
    int rl = -1, rh = -1;
    if (colon && n > 0 && n < sizeof lo) {
        memcpy(lo, v, n);
        lo[n] = '\0';
        rl = range_end(o, 0, lo, v, &a, err);
        if (rl == TC_INPUT)
            return rl;
        rh = rl == TC_OK ? range_end(o, 1, colon + 1, v, &b, err) : -1;
        if (rh == TC_INPUT)
            return rh;
    }
    if (rl != TC_OK || rh != TC_OK || ((o->set & ARGS_STRICT) ? a >= b : a > b))
        return tc_err_set(err, TC_INPUT, "%s: expected %s, got '%s'", o->name, o->expect, v);
    *FIELD(base, o->field, long long) = a;
    *FIELD(base, o->field2, long long) = b;
    return TC_OK;
}

const char *args_words_text(const args_word_def *w, char *buf, size_t n)
{
    buf[0] = '\0';
    int total = 0;
    while (w[total].word)
        total++;
    for (int i = 0; i < total; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", i == 0 ? "" : i == total - 1 ? " or " : ", ",
                 w[i].word);
    }
    return buf;
}

int args_word(const args_opt *o, const char *v, void *base, tc_err *err)
{
    for (const args_word_def *w = o->words; w->word; w++)
        if (!strcmp(v, w->word)) {
            *FIELD(base, o->field, int) = w->value;
            return TC_OK;
        }
    char words[256];
    return tc_err_set(err, TC_INPUT, "%s: expected %s, got '%s'", o->name,
                      args_words_text(o->words, words, sizeof words), v);
}

int args_append(const args_opt *o, const char *v, void *base, tc_err *err)
{
    int *count = FIELD(base, o->field2, int);
    if (*count >= (int)o->hi)
        return tc_err_set(err, TC_INPUT, "%s: at most %d %s, got another: '%s'", o->name,
                          (int)o->hi, o->expect, v);
    FIELD(base, o->field, const char *)[(*count)++] = v;
    return TC_OK;
}

int args_either(const args_opt *o, const char *v, void *base, tc_err *err)
{
    (void)v;
    int *f = FIELD(base, o->field, int);
    if (*f && *f != o->set)
        return tc_err_set(err, TC_INPUT, "%s do not go together", o->expect);
    *f = o->set;
    return TC_OK;
}
