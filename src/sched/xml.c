/* xml.c — the text helpers of the XML reader and writer (see xml_int.h
 * for how the XML code is split).
 *
 * Reading (xml_read.c) and writing (xml_write.c) are separate files; the
 * byte-level helpers are here, so neither holds a copy of what both use: a
 * growing string buffer (the writer's output, the reader's joined
 * <topology> parts) and the check of one UTF-8 sequence (the reader's
 * input, the writer's attribute values).  Beside them, the helpers the
 * reader builds on them: the piece-by-piece UTF-8 scan of its input,
 * short excerpts of values for its messages, and strict decimal numbers
 * (no hex, inf or nan) for its attributes. */
#include "xml_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ------------------------------------------------------------------ */
/* Growing string buffer                                               */

void xml_sb_reserve(sbuf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

void xml_sb_put(sbuf *b, const char *s, size_t n)
{
    xml_sb_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void xml_sb_puts(sbuf *b, const char *s)
{
    xml_sb_put(b, s, strlen(s));
}

void xml_sb_printf(sbuf *b, const char *fmt, ...)
{
    /* Print into the free space; grow and print again if it did not fit. */
    xml_sb_reserve(b, 128);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->s[b->len] = '\0';
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        xml_sb_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* ------------------------------------------------------------------ */
/* Text helpers shared by reader and writer                            */

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid (overlong
 * forms, surrogates and code points above U+10FFFF are invalid; so is NUL). */
size_t xml_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Could s[0..n) be the start of a sequence that more bytes complete? */
static int utf8_prefix(const unsigned char *s, size_t n)
{
    size_t need = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                  : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    if (need <= n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return 1;
}

/* Are the 8 bytes at s all ASCII and none of them NUL (each of them then a
 * whole sequence)?  Most of a schedule is: the scan takes it a word at a
 * time. */
static int ascii8(const unsigned char *s)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w;
    memcpy(&w, s, sizeof w);
    return ((w | ((w - ones) & ~w)) & highs) == 0;
}

static long count_newlines(const unsigned char *s, size_t n)
{
    long lines = 0;
    for (const unsigned char *c = s; (c = memchr(c, '\n', (size_t)(s + n - c))) != NULL; c++)
        lines++;
    return lines;
}

/* Scan the next n bytes of a text.  Returns how many of them are whole
 * valid sequences: all n, or fewer when the last 1-3 bytes may begin a
 * sequence the next piece completes (never at_end), or when u->bad was
 * set (the scan stops at the bad byte, and u->line becomes its line). */
size_t xml_utf8_scan_piece(utf8_scan *u, const unsigned char *s, size_t n, int at_end)
{
    for (size_t i = 0; i < n;) {
        if (n - i >= 16 && ascii8(s + i) && ascii8(s + i + 8)) {
            i += 16;
            continue;
        }
        size_t k = xml_utf8_seq(s + i, n - i);
        if (k == 0) {
            if (!at_end && n - i < 4 && s[i] != 0 && utf8_prefix(s + i, n - i))
                return i;
            u->bad = 1;
            u->bad_byte = s[i];
            u->line += count_newlines(s, i);
            return i;
        }
        i += k;
    }
    return n;
}

/* The message for the bad byte u found. */
int xml_utf8_fail(const utf8_scan *u, const char *label, tc_err *err)
{
    if (u->bad_byte == 0)
        return tc_err_set(err, TC_INPUT, "%s:%ld: NUL byte in the file (not a text file?)", label,
                          u->line);
    return tc_err_set(err, TC_INPUT, "%s:%ld: not UTF-8: invalid byte 0x%02X", label, u->line,
                      u->bad_byte);
}

/* A short, printable excerpt of the n bytes of v for messages. */
void xml_excerpt_n(const char *v, size_t n, char *out, size_t outsz)
{
    size_t max = 40;
    if (n <= max) {
        snprintf(out, outsz, "%.*s", (int)n, v);
        return;
    }
    while (max > 0 && ((unsigned char)v[max] & 0xC0) == 0x80)
        max--;
    snprintf(out, outsz, "%.*s...", (int)max, v);
}

void xml_excerpt(const char *v, char *out, size_t outsz)
{
    xml_excerpt_n(v, strlen(v), out, outsz);
}

/* ------------------------------------------------------------------ */
/* Strict number parsing                                               */

/* Decimal floating point: digits, '.', exponent; no hex, inf or nan. */
int xml_parse_real(const char *s, double *out)
{
    if (!*s)
        return NUM_SYNTAX;
    for (const char *q = s; *q; q++)
        if (!((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '-' ||
              *q == '+'))
            return NUM_SYNTAX;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end)
        return NUM_SYNTAX;
    if (errno == ERANGE || !isfinite(v))
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}
