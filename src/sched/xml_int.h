/* xml_int.h — what the parts of the XML reader and writer share (not a
 * public API; the API is xml.h).
 *
 * xml.c holds the text helpers both directions use (a growing string
 * buffer, UTF-8 checks, strict numbers); xml_read.c reads a file into a
 * prog through libxml2's push parser, and xml_diag.c turns what libxml2
 * reports on the way (its errors, its limits, a DOCTYPE) into our
 * messages; xml_write.c writes a prog, atomically. */
#ifndef TC_XML_INT_H
#define TC_XML_INT_H

#include "xml.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <limits.h>
#include <stdio.h>

/* Limits of the runtimes' tokenizer (MAX_STR_LEN, MAX_ATTR_COUNT). */
enum { RT_MAX_VALUE = 255, RT_MAX_ATTRS = 16 };
/* libxml2's nesting limit (xmlParserMaxDepth without XML_PARSE_HUGE),
 * which its push parser does not apply: the reader applies it. */
enum { MAX_DEPTH = 256 };
#define TOPO_FORMAT "taccl-json-1"

/* ---- text helpers (xml.c) ---- */

/* Growing string buffer */
typedef struct {
    char *s;
    size_t len, cap;
} sbuf;

void xml_sb_reserve(sbuf *b, size_t more);
void xml_sb_put(sbuf *b, const char *s, size_t n);
void xml_sb_puts(sbuf *b, const char *s);
void xml_sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid (overlong
 * forms, surrogates and code points above U+10FFFF are invalid; so is NUL). */
size_t xml_utf8_seq(const unsigned char *s, size_t n);

/* UTF-8 checked piece by piece: the first bad byte and its line (the
 * caller sets `line` to the line where each piece starts). */
typedef struct {
    long line;
    int bad;                /* 1: bad_byte at line is not UTF-8 (0x00: a NUL) */
    unsigned char bad_byte;
} utf8_scan;

/* Scan the next n bytes of a text.  Returns how many of them are whole
 * valid sequences: all n, or fewer when the last 1-3 bytes may begin a
 * sequence the next piece completes (never at_end), or when u->bad was
 * set (the scan stops at the bad byte, and u->line becomes its line). */
size_t xml_utf8_scan_piece(utf8_scan *u, const unsigned char *s, size_t n, int at_end);

/* The message for the bad byte u found. */
int xml_utf8_fail(const utf8_scan *u, const char *label, tc_err *err);

/* A short, printable excerpt of a value for messages: of the string v, or
 * of the n bytes at v. */
void xml_excerpt(const char *v, char *out, size_t outsz);
void xml_excerpt_n(const char *v, size_t n, char *out, size_t outsz);

/* Strict number parsing: NUM_OK, or what was wrong with s */
enum { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* Plain decimal: optional '-', then digits only (leading zeros allowed),
 * in the n bytes at s (no NUL needed after them).  Any other byte is a
 * syntax error even after a number too large (that is a range error).
 * Inline: the reader parses tens of millions. */
static inline int xml_parse_decimal(const char *s, size_t n, long long lo, long long hi,
                                    long long *out)
{
    int neg = n > 0 && s[0] == '-';
    size_t i = (size_t)neg;
    if (i == n)
        return NUM_SYNTAX;
    /* the magnitude of LLONG_MIN is one more than LLONG_MAX; below `safe`
     * one more digit cannot pass either */
    const unsigned long long safe = ((unsigned long long)LLONG_MAX - 9) / 10;
    unsigned long long max = (unsigned long long)LLONG_MAX + (unsigned)neg, mag = 0;
    int over = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return NUM_SYNTAX;
        if (mag > safe && mag > (max - d) / 10)
            over = 1;
        else
            mag = mag * 10 + d;
    }
    if (over)
        return NUM_RANGE;
    long long v = !neg ? (long long)mag : mag == max ? LLONG_MIN : -(long long)mag;
    if (v < lo || v > hi)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

/* Decimal floating point: digits, '.', exponent; no hex, inf or nan. */
int xml_parse_real(const char *s, double *out);

/* ---- what libxml2 reports while a file is read (xml_diag.c) ---- */

/* What the parser context's callbacks collect instead of printing. */
typedef struct {
    int level;          /* 0 none, else xmlErrorLevel of the kept error */
    int code;           /* its xmlParserErrors code */
    long line;
    char msg[512];
    char elem[64];      /* the element being parsed when it was raised, or "" */
    int doctype;        /* 1: a DOCTYPE was met and the parse stopped */
    long doctype_line;
} xml_diag;

/* Where the text of a parse can be read again: in memory, or a file to
 * read from its start (lone CRs counted as line ends, as they are fed). */
typedef struct {
    const char *text;
    size_t len;
    FILE *file;
} source;

/* Callbacks for the parser context (serror: `data` is the context) and for
 * libxml2's per-thread handlers while a parse runs (`data` is the diag). */
void xml_on_ctxt_error(void *data, xmlErrorPtr e);
void xml_on_global_error(void *data, xmlErrorPtr e);
void xml_on_generic_error(void *data, const char *msg, ...);
/* A DOCTYPE could declare entities (billion laughs) and no runtime reads
 * one: stop the parse before its internal subset is read. */
void xml_refuse_doctype(void *data, const xmlChar *name, const xmlChar *ext, const xmlChar *sys);

/* The message for a document libxml2 refused.  Two of its messages are
 * about its own limits, which a user cannot lift, and name no field: say
 * which limit and where instead. */
void xml_malformed(const source *src, const char *label, const xml_diag *d, tc_err *err);

/* An element opens below MAX_DEPTH others: fail as libxml2 does when it
 * parses the whole text (a fatal error naming the open element), and
 * stop. */
void xml_too_deep(xmlParserCtxtPtr ctxt, xml_diag *d);

#endif
