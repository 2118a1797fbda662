/* xml.c — MSCCL XML schedules in and out (see xml.h).
 *
 * Reading goes through libxml2 with a parser context of our own: its error
 * callback keeps the first error instead of printing it, DOCTYPEs are
 * refused before any entity is declared, the network is off and the size
 * limits stay on (no XML_PARSE_HUGE), so deep nesting or a 100 MB attribute
 * fail as TC_INPUT instead of eating memory.  The tree is then read the way
 * the MSCCL runtimes read their files: <algo> children named gpu, <gpu>
 * children named tb, <tb> children named step; everything else (<copy>,
 * <op>, comments, extra attributes such as redop) is ignored.  Our two
 * extensions, <topology> (the machine as JSON cut into short <part>s) and
 * <taccl> (size and predicted time), are children of <algo> as well: the
 * runtimes skip unknown elements there without counting them.
 *
 * Writing emits exactly what the runtimes' own tokenizer accepts: no prolog,
 * one element per line, two-space indentation, double quotes, attributes in
 * schema order, every step attribute present, values of at most 255
 * characters.  prog_write_xml() replaces the target atomically. */
#include "xml.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/jsonin.h"
#include "../util/mem.h"

/* Limits of the runtimes' tokenizer (MAX_STR_LEN, MAX_ATTR_COUNT). */
enum { RT_MAX_VALUE = 255, RT_MAX_ATTRS = 16 };
/* Our own guards against absurd allocations: ranks, and chunks per buffer
 * and per loop (2^24, so a rank's three buffers still count in an int;
 * a 4096-rank AllToAll needs 2^24). */
enum { MAX_NGPUS = 65536, MAX_CHUNKS = 1 << 24 };
/* Escaped length of one <part> of the embedded topology. */
enum { PART_CHARS = 200 };
/* maxBytes the legacy runtime assumes when the attribute is absent. */
#define LEGACY_DEFAULT_MAX_BYTES (1LL << 27)
#define TOPO_FORMAT "taccl-json-1"

/* ------------------------------------------------------------------ */
/* Growing string buffer                                               */

typedef struct {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_reserve(sbuf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

static void sb_put(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    /* Print into the free space; grow and print again if it did not fit. */
    sb_reserve(b, 128);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->s[b->len] = '\0';
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        sb_reserve(b, (size_t)n);
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
static size_t utf8_seq(const unsigned char *s, size_t n)
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

/* Check that text is UTF-8 without NUL bytes.  On failure report the line
 * and the offending byte. */
static int check_utf8(const char *text, size_t len, const char *label, tc_err *err)
{
    const unsigned char *s = (const unsigned char *)text;
    long line = 1;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        if (k == 0) {
            if (s[i] == 0)
                return tc_err_set(err, TC_INPUT, "%s:%ld: NUL byte in the file (not a text file?)",
                                  label, line);
            return tc_err_set(err, TC_INPUT, "%s:%ld: not UTF-8: invalid byte 0x%02X", label, line,
                              s[i]);
        }
        if (s[i] == '\n')
            line++;
        i += k;
    }
    return TC_OK;
}

/* A short, printable excerpt of a value for messages. */
static void excerpt(const char *v, char *out, size_t outsz)
{
    size_t n = strlen(v), max = 40;
    if (n <= max) {
        snprintf(out, outsz, "%s", v);
        return;
    }
    while (max > 0 && ((unsigned char)v[max] & 0xC0) == 0x80)
        max--;
    snprintf(out, outsz, "%.*s...", (int)max, v);
}

/* ------------------------------------------------------------------ */
/* Strict number parsing                                               */

enum { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* Plain decimal: optional '-', then digits only (leading zeros allowed). */
static int parse_decimal(const char *s, long long lo, long long hi, long long *out)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (!*p)
        return NUM_SYNTAX;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return NUM_SYNTAX;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

/* Decimal floating point: digits, '.', exponent; no hex, inf or nan. */
static int parse_real(const char *s, double *out)
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

/* Shortest "%.Ng" that reads back as exactly v (deterministic). */
static void format_real(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* ------------------------------------------------------------------ */
/* Reader: libxml2 set-up                                              */

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

/* Keep libxml2's message on one line, without the trailing newline. */
static void condense(char *dst, size_t dstsz, const char *src)
{
    size_t n = 0;
    int space = 0;
    for (; src && *src && n + 1 < dstsz; src++) {
        unsigned char c = (unsigned char)*src;
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
            space = 1;
            continue;
        }
        if (space && n > 0 && n + 2 < dstsz)
            dst[n++] = ' ';
        space = 0;
        dst[n++] = (char)c;
    }
    dst[n] = '\0';
}

/* Keep e in d; `elem` is the element being parsed (NULL: unknown). */
static int keep_error(xml_diag *d, const xmlError *e, const xmlChar *elem)
{
    if (!d || !e || e->level < XML_ERR_ERROR)
        return 0;
    /* Keep the first fatal error; an earlier plain error only until then. */
    if (d->level == XML_ERR_FATAL || (d->level == XML_ERR_ERROR && e->level == XML_ERR_ERROR))
        return 0;
    d->level = e->level;
    d->code = e->code;
    d->line = e->line;
    condense(d->msg, sizeof d->msg, e->message);
    snprintf(d->elem, sizeof d->elem, "%s", elem ? (const char *)elem : "");
    return 1;
}

/* Parser-context error callback: `data` is the context's userData, which
 * libxml2 sets to the context itself. */
static void on_ctxt_error(void *data, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt = data;
    if (ctxt)
        keep_error(ctxt->_private, e, ctxt->name);
}

/* Backstop for errors libxml2 raises without a context (encoding layer). */
static void on_global_error(void *data, xmlErrorPtr e)
{
    keep_error(data, e, NULL);
}

static void on_generic_error(void *data, const char *msg, ...)
{
    (void)data;
    (void)msg;
}

/* A DOCTYPE could declare entities (billion laughs) and no runtime reads
 * one: stop the parse before its internal subset is read. */
static void refuse_doctype(void *data, const xmlChar *name, const xmlChar *ext, const xmlChar *sys)
{
    (void)name;
    (void)ext;
    (void)sys;
    xmlParserCtxtPtr ctxt = data;
    xml_diag *d = ctxt->_private;
    d->doctype = 1;
    d->doctype_line = ctxt->input ? ctxt->input->line : 0;
    xmlStopParser(ctxt);
}

/* libxml2 stores element lines in 16 bits; beyond 65535 xmlGetLineNo()
 * guesses from neighbouring text.  Record the exact line (where the start
 * tag ends, as libxml2 does) in the element's _private field instead. */
static void start_element_with_line(void *data, const xmlChar *localname, const xmlChar *prefix,
                                    const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                                    int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt = data;
    xmlNodePtr before = ctxt->node;
    xmlSAX2StartElementNs(data, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                          nb_defaulted, attributes);
    if (ctxt->node && ctxt->node != before && ctxt->input)
        ctxt->node->_private = (void *)(intptr_t)ctxt->input->line;
}

static int only_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
            return 0;
    return 1;
}

/* The attribute whose value starts on line `line` of text and runs past
 * XML_MAX_TEXT_LENGTH bytes: its element and name into elem / name.
 * Returns 1 if found. */
static int find_long_attr(const char *text, size_t len, long line, char *elem, size_t elemsz,
                          char *name, size_t namesz)
{
    size_t i = 0;
    for (long l = 1; l < line && i < len; i++)
        if (text[i] == '\n')
            l++;
    for (; i < len && text[i] != '\n'; i++) {
        if (text[i] != '=')
            continue;
        size_t q = i + 1;
        while (q < len && (text[q] == ' ' || text[q] == '\t'))
            q++;
        if (q >= len || (text[q] != '"' && text[q] != '\''))
            continue;
        const char *end = memchr(text + q + 1, text[q], len - q - 1);
        size_t vlen = (end ? (size_t)(end - text) : len) - q - 1;
        if (vlen <= XML_MAX_TEXT_LENGTH)
            continue;
        size_t ne = i;
        while (ne > 0 && (text[ne - 1] == ' ' || text[ne - 1] == '\t'))
            ne--;
        size_t nb = ne;
        while (nb > 0 && !strchr(" \t\r\n<\"'", text[nb - 1]))
            nb--;
        size_t lt = nb;
        while (lt > 0 && text[lt - 1] != '<')
            lt--;
        size_t ee = lt;
        while (ee < nb && !strchr(" \t\r\n/>", text[ee]))
            ee++;
        snprintf(name, namesz, "%.*s", (int)(ne - nb), text + nb);
        snprintf(elem, elemsz, "%.*s", (int)(ee - lt), text + lt);
        return 1;
    }
    return 0;
}

/* The message for a document libxml2 refused.  Two of its messages are
 * about its own limits, which a user cannot lift, and name no field: say
 * which limit and where instead. */
static void malformed(const char *text, size_t len, const char *label, const xml_diag *d,
                      tc_err *err)
{
    char elem[64], name[64];
    if (d->code == XML_ERR_INTERNAL_ERROR && strstr(d->msg, "depth")) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <%s>: elements nested too deeply (the XML reader "
                   "takes 256 levels; a schedule needs 4)", label, d->line,
                   d->elem[0] ? d->elem : "?");
    } else if (d->code == XML_ERR_ATTRIBUTE_NOT_FINISHED && strstr(d->msg, "too long") &&
               find_long_attr(text, len, d->line, elem, sizeof elem, name, sizeof name)) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <%s> attribute %s: value longer than the XML reader "
                   "takes (%d bytes; the MSCCL runtimes take %d)", label, d->line, elem, name,
                   XML_MAX_TEXT_LENGTH, RT_MAX_VALUE);
    } else {
        tc_err_set(err, TC_INPUT, "%s:%ld: malformed XML: %s", label, d->line, d->msg);
    }
}

/* Parse text into a libxml2 tree, or fail with TC_INPUT. */
static xmlDocPtr parse_tree(const char *text, size_t len, const char *label, tc_err *err)
{
    if (len == 0 || only_space(text, len)) {
        tc_err_set(err, TC_INPUT, "%s:1: empty file, expected an <algo> element", label);
        return NULL;
    }
    if (len > (size_t)INT_MAX) {
        tc_err_set(err, TC_INPUT, "%s: too large for the XML reader (%zu bytes)", label, len);
        return NULL;
    }
    if (jsonin_utf16_error(text, len, label, err) || check_utf8(text, len, label, err) != TC_OK)
        return NULL;

    xmlInitParser();
    xml_diag diag = {0};
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        fprintf(stderr, "taccl: out of memory\n");
        abort();
    }
    ctxt->_private = &diag;
    ctxt->sax->serror = on_ctxt_error;
    ctxt->sax->internalSubset = refuse_doctype;
    ctxt->sax->startElementNs = start_element_with_line;

    /* libxml2's handlers are per-thread; borrow them for this parse only. */
    xmlStructuredErrorFunc old_serror = xmlStructuredError;
    void *old_sctx = xmlStructuredErrorContext;
    xmlGenericErrorFunc old_gerror = xmlGenericError;
    void *old_gctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(&diag, on_global_error);
    xmlSetGenericErrorFunc(NULL, on_generic_error);

    int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES |
               XML_PARSE_IGNORE_ENC;
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, label, "UTF-8", opts);
    int well_formed = ctxt->wellFormed;
    long end_line = ctxt->input ? ctxt->input->line : 0;

    xmlSetStructuredErrorFunc(old_sctx, old_serror);
    xmlSetGenericErrorFunc(old_gctx, old_gerror);
    xmlFreeParserCtxt(ctxt);

    if (diag.doctype) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <!DOCTYPE> is not allowed in a schedule", label,
                   diag.doctype_line);
    } else if (!doc || !well_formed) {
        if (diag.level)
            malformed(text, len, label, &diag, err);
        else
            tc_err_set(err, TC_INPUT, "%s:%ld: malformed XML", label, end_line);
    } else {
        return doc;
    }
    xmlFreeDoc(doc);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Reader: attributes                                                  */

typedef struct {
    const char *label;
    tc_err *err;
} reader;

static long line_of(const xmlNode *n)
{
    if (n->type == XML_ELEMENT_NODE && n->_private)
        return (long)(intptr_t)n->_private;
    long l = xmlGetLineNo(n);
    return l > 0 ? l : 0;
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && n->ns == NULL && strcmp((const char *)n->name, name) == 0;
}

/* "LABEL:LINE: " + message, TC_INPUT. */
static int fail_at(const reader *r, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(const reader *r, const xmlNode *n, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tc_err_set(r->err, TC_INPUT, "%s:%ld: %s", r->label, line_of(n), what);
}

/* Find attribute `name` (no namespace) of element n.  Returns its value
 * (xmlFree it) or NULL if absent.  An attribute beyond the 16th is as good
 * as absent for the runtimes, so it is refused. */
static int get_attr(const reader *r, const xmlNode *n, const char *name, xmlChar **out)
{
    *out = NULL;
    int idx = 0;
    for (const xmlAttr *a = n->properties; a; a = a->next, idx++) {
        if (a->ns || strcmp((const char *)a->name, name) != 0)
            continue;
        if (idx >= RT_MAX_ATTRS)
            return fail_at(r, n,
                           "<%s> attribute %s: is attribute number %d; the MSCCL runtimes read "
                           "only the first %d",
                           (const char *)n->name, name, idx + 1, RT_MAX_ATTRS);
        *out = xmlNodeListGetString(n->doc, a->children, 1);
        if (!*out)
            *out = xmlStrdup((const xmlChar *)"");
        if (!*out) {
            fprintf(stderr, "taccl: out of memory\n");
            abort();
        }
        return TC_OK;
    }
    return TC_OK;
}

static int missing(const reader *r, const xmlNode *n, const char *name)
{
    return fail_at(r, n, "<%s> attribute %s: missing", (const char *)n->name, name);
}

/* Required (present == NULL) or optional integer attribute in [lo, hi]. */
static int attr_ll(const reader *r, const xmlNode *n, const char *name, long long lo, long long hi,
                   long long *out, int *present)
{
    xmlChar *v;
    if (get_attr(r, n, name, &v) != TC_OK)
        return TC_INPUT;
    if (!v) {
        if (present) {
            *present = 0;
            return TC_OK;
        }
        return missing(r, n, name);
    }
    long long x = 0;
    int rc = parse_decimal((const char *)v, lo, hi, &x);
    char ex[64];
    excerpt((const char *)v, ex, sizeof ex);
    xmlFree(v);
    if (rc == NUM_SYNTAX)
        return fail_at(r, n, "<%s> attribute %s: expected an integer, got \"%s\"",
                       (const char *)n->name, name, ex);
    if (rc == NUM_RANGE)
        return fail_at(r, n, "<%s> attribute %s: %s is out of range (%lld..%lld)",
                       (const char *)n->name, name, ex, lo, hi);
    *out = x;
    if (present)
        *present = 1;
    return TC_OK;
}

/* Required integer attribute in lo..hi (within int). */
static int attr_int(const reader *r, const xmlNode *n, const char *name, int lo, int hi, int *out)
{
    long long x;
    if (attr_ll(r, n, name, lo, hi, &x, NULL) != TC_OK)
        return TC_INPUT;
    *out = (int)x;
    return TC_OK;
}

/* Required string attribute (xmlFree the result). */
static int attr_str(const reader *r, const xmlNode *n, const char *name, xmlChar **out)
{
    if (get_attr(r, n, name, out) != TC_OK)
        return TC_INPUT;
    if (!*out)
        return missing(r, n, name);
    return TC_OK;
}

static int attr_buf(const reader *r, const xmlNode *n, const char *name, buf_kind *out)
{
    xmlChar *v;
    if (attr_str(r, n, name, &v) != TC_OK)
        return TC_INPUT;
    int rc = TC_OK;
    if (buf_parse((const char *)v, out) != 0) {
        char ex[64];
        excerpt((const char *)v, ex, sizeof ex);
        rc = fail_at(r, n, "<%s> attribute %s: unknown buffer \"%s\" (expected i, o or s)",
                     (const char *)n->name, name, ex);
    }
    xmlFree(v);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reader: elements                                                    */

static int read_step(const reader *r, const xmlNode *n, prog_tb *tb)
{
    int s, srcoff, dstoff, cnt, depid, deps, hasdep;
    buf_kind srcbuf, dstbuf;
    step_type type;
    xmlChar *tv;
    if (attr_int(r, n, "s", 0, INT_MAX, &s) != TC_OK || attr_str(r, n, "type", &tv) != TC_OK)
        return TC_INPUT;
    if (step_type_parse((const char *)tv, &type) != 0) {
        char ex[64];
        excerpt((const char *)tv, ex, sizeof ex);
        int legacy_ra = strcmp((const char *)tv, "ra") == 0;
        xmlFree(tv);
        return fail_at(r, n,
                       "<step> attribute type: unknown step type \"%s\"%s (expected s, r, rcs, "
                       "rrs, rrc, rrcs, cpy, re or nop)",
                       ex, legacy_ra ? " (the legacy runtime's residual add is not supported)" : "");
    }
    xmlFree(tv);
    /* Offsets may be -1: msccl-tools writes nops with srcoff="-1". */
    if (attr_buf(r, n, "srcbuf", &srcbuf) != TC_OK ||
        attr_int(r, n, "srcoff", -1, INT_MAX, &srcoff) != TC_OK ||
        attr_buf(r, n, "dstbuf", &dstbuf) != TC_OK ||
        attr_int(r, n, "dstoff", -1, INT_MAX, &dstoff) != TC_OK ||
        attr_int(r, n, "cnt", 0, INT_MAX, &cnt) != TC_OK ||
        attr_int(r, n, "depid", -1, INT_MAX, &depid) != TC_OK ||
        attr_int(r, n, "deps", -1, INT_MAX, &deps) != TC_OK ||
        attr_int(r, n, "hasdep", 0, 1, &hasdep) != TC_OK)
        return TC_INPUT;
    prog_step *st = prog_add_step(tb, type, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps);
    st->s = s;
    st->hasdep = hasdep;
    st->line = (int)line_of(n);
    return TC_OK;
}

static int read_tb(const reader *r, const xmlNode *n, prog_gpu *g)
{
    int id, send, recv, chan;
    if (attr_int(r, n, "id", 0, INT_MAX, &id) != TC_OK ||
        attr_int(r, n, "send", -1, INT_MAX, &send) != TC_OK ||
        attr_int(r, n, "recv", -1, INT_MAX, &recv) != TC_OK ||
        attr_int(r, n, "chan", 0, INT_MAX, &chan) != TC_OK)
        return TC_INPUT;
    prog_tb *tb = prog_add_tb(g, send, recv, chan);
    tb->id = id;
    tb->line = (int)line_of(n);
    for (const xmlNode *c = n->children; c; c = c->next)
        if (is_elem(c, "step") && read_step(r, c, tb) != TC_OK)
            return TC_INPUT;
    return TC_OK;
}

/* One <gpu>: its id must be a free slot 0..ngpus-1 of p->gpus. */
static int read_gpu(const reader *r, const xmlNode *n, prog *p)
{
    int id, ic, oc, sc;
    if (attr_int(r, n, "id", INT_MIN, INT_MAX, &id) != TC_OK)
        return TC_INPUT;
    if (id < 0 || id >= p->ngpus)
        return fail_at(r, n, "<gpu> attribute id: %d is out of range 0..%d (ngpus=\"%d\")", id,
                       p->ngpus - 1, p->ngpus);
    prog_gpu *g = &p->gpus[id];
    if (g->line > 0)
        return fail_at(r, n, "<gpu> attribute id: gpu %d appears twice (first at line %d)", id,
                       g->line);
    if (attr_int(r, n, "i_chunks", 0, MAX_CHUNKS, &ic) != TC_OK ||
        attr_int(r, n, "o_chunks", 0, MAX_CHUNKS, &oc) != TC_OK ||
        attr_int(r, n, "s_chunks", 0, MAX_CHUNKS, &sc) != TC_OK)
        return TC_INPUT;
    g->id = id;
    g->i_chunks = ic;
    g->o_chunks = oc;
    g->s_chunks = sc;
    long line = line_of(n);
    g->line = line > 0 ? (int)line : 1;
    for (const xmlNode *c = n->children; c; c = c->next)
        if (is_elem(c, "tb") && read_tb(r, c, g) != TC_OK)
            return TC_INPUT;
    return TC_OK;
}

/* Where each <part> of an embedded topology starts in the joined JSON. */
typedef struct {
    size_t *at;         /* offset of part k's text */
    long *line;         /* line of part k's element */
    int n, cap;
} part_map;

static void part_map_add(part_map *m, size_t at, long line)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->at = xrealloc(m->at, (size_t)m->cap * sizeof *m->at);
        m->line = xrealloc(m->line, (size_t)m->cap * sizeof *m->line);
    }
    m->at[m->n] = at;
    m->line[m->n++] = line;
}

/* A topology message "<topology>:JL[:JC]: what" or "<topology>: what" from
 * topo_parse() of the joined JSON, restated at the line of the <part> that
 * holds JSON line JL (column JC), or of <topology> itself. */
static int topology_error(const reader *r, const xmlNode *n, const char *json,
                          const part_map *m, const char *msg)
{
    static const char tag[] = "<topology>";
    const char *rest = msg + strlen(tag);
    long line = line_of(n), jline = 0, jcol = 1;
    if (rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9') {
        char *end;
        jline = strtol(rest + 1, &end, 10);
        rest = end;
        if (rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9') {
            jcol = strtol(rest + 1, &end, 10);
            rest = end;
        }
        size_t off = 0;
        for (long l = 1; l < jline && json[off]; off++)
            if (json[off] == '\n')
                l++;
        off += (size_t)(jcol > 1 ? jcol - 1 : 0);
        for (int k = 0; k < m->n && m->at[k] <= off; k++)
            line = m->line[k];
    }
    if (rest[0] == ':')
        rest++;
    while (*rest == ' ')
        rest++;
    if (jline > 0)
        return tc_err_set(r->err, TC_INPUT, "%s:%ld: <topology> (its JSON line %ld): %s", r->label,
                          line, jline, rest);
    return tc_err_set(r->err, TC_INPUT, "%s:%ld: <topology>: %s", r->label, line, rest);
}

/* <topology format="taccl-json-1" parts="N"><part v="..."/>...</topology> */
static int read_topology(const reader *r, const xmlNode *n, prog *p)
{
    xmlChar *fmt;
    if (attr_str(r, n, "format", &fmt) != TC_OK)
        return TC_INPUT;
    int ok = strcmp((const char *)fmt, TOPO_FORMAT) == 0;
    char ex[64];
    excerpt((const char *)fmt, ex, sizeof ex);
    xmlFree(fmt);
    if (!ok)
        return fail_at(r, n, "<topology> attribute format: unsupported \"%s\" (expected \"%s\")",
                       ex, TOPO_FORMAT);
    long long parts;
    if (attr_ll(r, n, "parts", 0, INT_MAX, &parts, NULL) != TC_OK)
        return TC_INPUT;
    sbuf json = {0};
    sb_reserve(&json, 0);
    part_map m = {0};
    int rc = TC_OK;
    for (const xmlNode *c = n->children; c && rc == TC_OK; c = c->next) {
        if (!is_elem(c, "part"))
            continue;
        xmlChar *v;
        if ((rc = attr_str(r, c, "v", &v)) != TC_OK)
            break;
        part_map_add(&m, json.len, line_of(c));
        sb_puts(&json, (const char *)v);
        xmlFree(v);
    }
    if (rc == TC_OK && m.n != parts)
        rc = fail_at(r, n, "<topology> attribute parts: says %lld but %d <part> elements follow",
                     parts, m.n);
    if (rc == TC_OK) {
        tc_err te;
        tc_err_clear(&te);
        topo *t = topo_parse(json.s, "<topology>", &te);
        if (t)
            prog_set_topo(p, t);
        else
            rc = topology_error(r, n, json.s, &m, te.msg[0] ? te.msg : "<topology>: invalid");
    }
    free(json.s);
    free(m.at);
    free(m.line);
    return rc;
}

/* <taccl size_bytes="..." predicted_us="..." generator="..."/> */
static int read_taccl(const reader *r, const xmlNode *n, prog *p)
{
    long long size = 0;
    int present;
    if (attr_ll(r, n, "size_bytes", 0, LLONG_MAX, &size, &present) != TC_OK)
        return TC_INPUT;
    p->size_bytes = present ? size : 0;
    p->size_line = present ? (int)line_of(n) : 0;
    xmlChar *v;
    if (get_attr(r, n, "predicted_us", &v) != TC_OK)
        return TC_INPUT;
    if (v) {
        double us;
        int rc = parse_real((const char *)v, &us);
        char ex[64];
        excerpt((const char *)v, ex, sizeof ex);
        xmlFree(v);
        if (rc != NUM_OK)
            return fail_at(r, n, "<taccl> attribute predicted_us: expected a finite number, got \"%s\"",
                           ex);
        p->predicted_us = us;
    }
    return TC_OK;
}

static int read_proto(const reader *r, const xmlNode *n, prog *p)
{
    xmlChar *v;
    if (attr_str(r, n, "proto", &v) != TC_OK)
        return TC_INPUT;
    const char *s = (const char *)v;
    int ok = strcmp(s, "Simple") == 0 || strcmp(s, "LL") == 0 || strcmp(s, "LL128") == 0;
    char ex[64];
    excerpt(s, ex, sizeof ex);
    if (ok)
        snprintf(p->proto, sizeof p->proto, "%s", s);
    xmlFree(v);
    if (!ok)
        return fail_at(r, n, "<algo> attribute proto: unknown protocol \"%s\" (expected Simple, LL or "
                       "LL128)", ex);
    return TC_OK;
}

static int read_coll(const reader *r, const xmlNode *n, prog *p)
{
    xmlChar *v;
    if (attr_str(r, n, "coll", &v) != TC_OK)
        return TC_INPUT;
    int ok = coll_parse((const char *)v, &p->coll) == 0;
    char ex[64];
    excerpt((const char *)v, ex, sizeof ex);
    xmlFree(v);
    if (!ok)
        return fail_at(r, n, "<algo> attribute coll: unsupported collective \"%s\" (expected "
                       "allgather, alltoall, reduce_scatter/reducescatter or allreduce)", ex);
    return TC_OK;
}

static int read_name(const reader *r, const xmlNode *n, prog *p)
{
    xmlChar *v;
    if (get_attr(r, n, "name", &v) != TC_OK)
        return TC_INPUT;
    if (!v)
        return TC_OK; /* the newer executor does not need a name */
    size_t len = strlen((const char *)v);
    if (len >= sizeof p->name) {
        xmlFree(v);
        return fail_at(r, n, "<algo> attribute name: %zu characters, at most %d", len, RT_MAX_VALUE);
    }
    memcpy(p->name, v, len + 1);
    xmlFree(v);
    return TC_OK;
}

/* The <algo> attributes, in schema order so the first bad one is named. */
static int read_algo_attrs(const reader *r, const xmlNode *n, prog *p)
{
    long long x;
    int present;
    if (read_name(r, n, p) != TC_OK || read_proto(r, n, p) != TC_OK ||
        attr_int(r, n, "nchannels", 1, INT_MAX, &p->nchannels) != TC_OK ||
        attr_int(r, n, "nchunksperloop", 1, MAX_CHUNKS, &p->nchunksperloop) != TC_OK ||
        attr_int(r, n, "ngpus", INT_MIN, INT_MAX, &p->ngpus) != TC_OK)
        return TC_INPUT;
    if (p->ngpus < 1)
        return fail_at(r, n, "<algo> attribute ngpus: must be at least 1, got %d", p->ngpus);
    if (p->ngpus > MAX_NGPUS)
        return fail_at(r, n, "<algo> attribute ngpus: %d is more than this reader supports (%d)",
                       p->ngpus, MAX_NGPUS);
    if (read_coll(r, n, p) != TC_OK || attr_int(r, n, "inplace", 0, 1, &p->inplace) != TC_OK)
        return TC_INPUT;
    /* Optional for the legacy runtime, which runs an algorithm only for
     * calls whose in-placeness equals `inplace` and assumes minBytes 0,
     * maxBytes 128 MB. */
    if (attr_ll(r, n, "outofplace", 0, 1, &x, &present) != TC_OK)
        return TC_INPUT;
    p->outofplace = present ? (int)x : !p->inplace;
    if (attr_ll(r, n, "minBytes", 0, LLONG_MAX, &x, &present) != TC_OK)
        return TC_INPUT;
    p->min_bytes = present ? x : 0;
    if (attr_ll(r, n, "maxBytes", 0, LLONG_MAX, &x, &present) != TC_OK)
        return TC_INPUT;
    p->max_bytes = present ? x : LEGACY_DEFAULT_MAX_BYTES;
    return TC_OK;
}

static int read_algo(const reader *r, const xmlNode *n, prog *p)
{
    p->line = (int)line_of(n);
    if (read_algo_attrs(r, n, p) != TC_OK)
        return TC_INPUT;
    p->gpus = calloc((size_t)p->ngpus, sizeof *p->gpus);
    if (!p->gpus) {
        fprintf(stderr, "taccl: out of memory\n");
        abort();
    }
    p->gpu_cap = p->ngpus;
    p->ngpu = p->ngpus;
    const xmlNode *topo_el = NULL, *taccl_el = NULL;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (is_elem(c, "gpu")) {
            if (read_gpu(r, c, p) != TC_OK)
                return TC_INPUT;
        } else if (is_elem(c, "topology")) {
            if (topo_el)
                return fail_at(r, c, "<topology>: a second one (first at line %ld)", line_of(topo_el));
            topo_el = c;
            if (read_topology(r, c, p) != TC_OK)
                return TC_INPUT;
        } else if (is_elem(c, "taccl")) {
            if (taccl_el)
                return fail_at(r, c, "<taccl>: a second one (first at line %ld)", line_of(taccl_el));
            taccl_el = c;
            if (read_taccl(r, c, p) != TC_OK)
                return TC_INPUT;
        }
    }
    for (int g = 0; g < p->ngpus; g++)
        if (p->gpus[g].line == 0)
            return fail_at(r, n, "<algo>: no <gpu> with id %d (ngpus=\"%d\" needs ids 0..%d)", g,
                           p->ngpus, p->ngpus - 1);
    return TC_OK;
}

prog *prog_parse_xml(const char *text, size_t len, const char *label, tc_err *err)
{
    if (!label)
        label = "(input)";
    if (!text)
        len = 0;
    xmlDocPtr doc = parse_tree(text ? text : "", len, label, err);
    if (!doc)
        return NULL;
    reader r = {label, err};
    const xmlNode *root = xmlDocGetRootElement(doc);
    prog *p = NULL;
    if (!root) {
        tc_err_set(err, TC_INPUT, "%s:1: no root element, expected <algo>", label);
    } else if (!is_elem(root, "algo")) {
        if (root->ns)
            fail_at(&r, root, "root element is <%s%s%s> in namespace \"%s\", expected <algo> "
                    "in none", root->ns->prefix ? (const char *)root->ns->prefix : "",
                    root->ns->prefix ? ":" : "", (const char *)root->name,
                    root->ns->href ? (const char *)root->ns->href : "");
        else
            fail_at(&r, root, "root element is <%s>, expected <algo>", (const char *)root->name);
    } else {
        p = prog_new("", COLL_ALLGATHER, 0, 0);
        if (!p) {
            fprintf(stderr, "taccl: out of memory\n");
            abort();
        }
        if (read_algo(&r, root, p) != TC_OK) {
            prog_free(p);
            p = NULL;
        }
    }
    xmlFreeDoc(doc);
    return p;
}

prog *prog_read_xml(const char *path, tc_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(EISDIR));
        return NULL;
    }
    sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + n > (size_t)INT_MAX) {
            fclose(f);
            free(b.s);
            tc_err_set(err, TC_INPUT, "%s: too large for the XML reader (over 2 GB)", path);
            return NULL;
        }
        sb_put(&b, chunk, n);
    }
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (bad) {
        free(b.s);
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(saved));
        return NULL;
    }
    if (b.s)
        jsonin_lone_cr_to_lf(b.s, b.len);
    prog *p = prog_parse_xml(b.s ? b.s : "", b.len, path, err);
    free(b.s);
    if (p) {
        p->path = strdup(path);
        if (!p->path) {
            fprintf(stderr, "taccl: out of memory\n");
            abort();
        }
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */

/* Escaped form of one character (XML attribute value), or NULL if the
 * character is written as itself. */
static const char *escape_of(unsigned char c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\n': return "&#10;";
    case '\r': return "&#13;";
    case '\t': return "&#9;";
    default: return NULL;
    }
}

/* Check that v can be an attribute value: UTF-8, no control characters
 * other than tab/newline/CR (XML 1.0 cannot carry them).  Returns the
 * escaped length, or (size_t)-1 with err set. */
static size_t check_value(const char *v, size_t n, const char *what, tc_err *err)
{
    size_t out = 0;
    const unsigned char *s = (const unsigned char *)v;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i);
        if (k == 0) {
            tc_err_set(err, TC_INPUT, "%s: not UTF-8 (byte 0x%02X at %zu)", what, s[i], i);
            return (size_t)-1;
        }
        const char *e = escape_of(s[i]);
        if (!e && s[i] < 0x20) {
            tc_err_set(err, TC_INPUT, "%s: control character 0x%02X cannot be written in XML", what,
                       s[i]);
            return (size_t)-1;
        }
        out += e ? strlen(e) : k;
        i += k;
    }
    return out;
}

static void sb_escaped(sbuf *b, const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *e = escape_of((unsigned char)v[i]);
        if (e)
            sb_puts(b, e);
        else
            sb_put(b, v + i, 1);
    }
}

/* ` key="value"` for a free-text value that the runtime will read. */
static int put_text_attr(sbuf *b, const char *elem, const char *key, const char *v, tc_err *err)
{
    char what[128];
    snprintf(what, sizeof what, "<%s> attribute %s", elem, key);
    size_t n = strlen(v);
    size_t esc = check_value(v, n, what, err);
    if (esc == (size_t)-1)
        return TC_INPUT;
    if (esc > RT_MAX_VALUE)
        return tc_err_set(err, TC_INPUT,
                          "%s: %zu characters once escaped; the MSCCL runtimes take at most %d",
                          what, esc, RT_MAX_VALUE);
    sb_printf(b, " %s=\"", key);
    sb_escaped(b, v, n);
    sb_puts(b, "\"");
    return TC_OK;
}

static int valid_proto(const char *s)
{
    return strcmp(s, "Simple") == 0 || strcmp(s, "LL") == 0 || strcmp(s, "LL128") == 0;
}

static void put_taccl(sbuf *b, const prog *p)
{
    sb_puts(b, "  <taccl");
    if (p->size_bytes > 0)
        sb_printf(b, " size_bytes=\"%lld\"", p->size_bytes);
    if (p->predicted_us >= 0 && isfinite(p->predicted_us)) {
        char num[40];
        format_real(num, sizeof num, p->predicted_us);
        sb_printf(b, " predicted_us=\"%s\"", num);
    }
    sb_puts(b, " generator=\"taccl\"/>\n");
}

/* The topology as JSON cut into <part>s of at most PART_CHARS characters
 * once escaped, never inside a UTF-8 sequence. */
static int put_topology(sbuf *b, const topo *t, tc_err *err)
{
    char *json = topo_to_json(t);
    if (!json)
        return tc_err_set(err, TC_INPUT, "<topology>: the topology cannot be serialised");
    size_t n = strlen(json);
    if (check_value(json, n, "<topology>", err) == (size_t)-1) {
        free(json);
        return TC_INPUT;
    }
    /* First pass counts the parts, second writes them. */
    sbuf parts = {0};
    int nparts = 0;
    for (size_t i = 0; i < n;) {
        size_t start = i, esc = 0;
        while (i < n) {
            size_t k = utf8_seq((const unsigned char *)json + i, n - i);
            const char *e = escape_of((unsigned char)json[i]);
            size_t w = e ? strlen(e) : k;
            if (esc + w > PART_CHARS)
                break;
            esc += w;
            i += k;
        }
        sb_puts(&parts, "    <part v=\"");
        sb_escaped(&parts, json + start, i - start);
        sb_puts(&parts, "\"/>\n");
        nparts++;
    }
    free(json);
    sb_printf(b, "  <topology format=\"%s\" parts=\"%d\"", TOPO_FORMAT, nparts);
    if (nparts == 0) {
        sb_puts(b, "/>\n");
    } else {
        sb_puts(b, ">\n");
        sb_put(b, parts.s, parts.len);
        sb_puts(b, "  </topology>\n");
    }
    free(parts.s);
    return TC_OK;
}

static int put_step(sbuf *b, const prog_step *st, int g, int t, int k, tc_err *err)
{
    if (st->type < 0 || st->type >= ST_COUNT)
        return tc_err_set(err, TC_INPUT, "gpu %d tb %d step %d: invalid step type %d", g, t, k,
                          (int)st->type);
    if (st->srcbuf < 0 || st->srcbuf > BUF_NONE || st->dstbuf < 0 || st->dstbuf > BUF_NONE)
        return tc_err_set(err, TC_INPUT, "gpu %d tb %d step %d: invalid buffer", g, t, k);
    /* The runtimes accept only i, o and s, even for operands a step does not
     * use; msccl-tools writes "i" and "o" there, so do we. */
    const char *sb = st->srcbuf == BUF_NONE ? "i" : buf_name(st->srcbuf);
    const char *db = st->dstbuf == BUF_NONE ? "o" : buf_name(st->dstbuf);
    sb_printf(b,
              "      <step s=\"%d\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%d\" dstbuf=\"%s\" "
              "dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
              st->s, step_type_name(st->type), sb, st->srcoff, db, st->dstoff, st->cnt, st->depid,
              st->deps, st->hasdep);
    return TC_OK;
}

static int put_gpu(sbuf *b, const prog_gpu *g, int gi, tc_err *err)
{
    sb_printf(b, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\"", g->id,
              g->i_chunks, g->o_chunks, g->s_chunks);
    if (g->ntbs == 0) {
        sb_puts(b, "/>\n");
        return TC_OK;
    }
    sb_puts(b, ">\n");
    for (int t = 0; t < g->ntbs; t++) {
        const prog_tb *tb = &g->tbs[t];
        sb_printf(b, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\"", tb->id, tb->send,
                  tb->recv, tb->chan);
        if (tb->nsteps == 0) {
            sb_puts(b, "/>\n");
            continue;
        }
        sb_puts(b, ">\n");
        for (int k = 0; k < tb->nsteps; k++)
            if (put_step(b, &tb->steps[k], gi, t, k, err) != TC_OK)
                return TC_INPUT;
        sb_puts(b, "    </tb>\n");
    }
    sb_puts(b, "  </gpu>\n");
    return TC_OK;
}

static int put_program(sbuf *b, const prog *p, const xml_write_opts *o, tc_err *err)
{
    if (!valid_proto(p->proto))
        return tc_err_set(err, TC_INPUT, "<algo> attribute proto: \"%s\" is not Simple, LL or LL128",
                          p->proto);
    if (p->coll < 0 || p->coll >= COLL_COUNT)
        return tc_err_set(err, TC_INPUT, "<algo> attribute coll: invalid collective %d", (int)p->coll);
    sb_puts(b, "<algo");
    if (put_text_attr(b, "algo", "name", p->name, err) != TC_OK)
        return TC_INPUT;
    sb_printf(b,
              " proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"%s\" "
              "inplace=\"%d\" outofplace=\"%d\" minBytes=\"%lld\" maxBytes=\"%lld\"",
              p->proto, p->nchannels, p->nchunksperloop, p->ngpus,
              coll_xml_name(p->coll, o->newer_executor), p->inplace, p->outofplace, p->min_bytes,
              p->max_bytes);
    int with_taccl = p->size_bytes > 0 || (p->predicted_us >= 0 && isfinite(p->predicted_us));
    int with_topo = o->embed_topology && p->topo;
    if (!with_taccl && !with_topo && p->ngpu == 0) {
        sb_puts(b, "/>\n");
        return TC_OK;
    }
    sb_puts(b, ">\n");
    if (with_taccl)
        put_taccl(b, p);
    if (with_topo && put_topology(b, p->topo, err) != TC_OK)
        return TC_INPUT;
    for (int g = 0; g < p->ngpu; g++)
        if (put_gpu(b, &p->gpus[g], g, err) != TC_OK)
            return TC_INPUT;
    sb_puts(b, "</algo>\n");
    return TC_OK;
}

char *prog_to_xml(const prog *p, const xml_write_opts *o, tc_err *err)
{
    xml_write_opts none = {0, 0};
    if (!o)
        o = &none;
    if (!p) {
        tc_err_set(err, TC_INPUT, "no program to write");
        return NULL;
    }
    sbuf b = {0};
    if (put_program(&b, p, o, err) != TC_OK) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* Open a new file "PATH.tmp.XXXXXX" beside path with O_EXCL (mode 0666
 * less the umask, like any new file).  Fills tmp; returns fd or -1. */
static int open_temp_beside(const char *path, char *tmp, size_t tmpsz)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long seed = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
                              ((unsigned long long)getpid() << 40);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        unsigned long long x = seed + (unsigned long long)attempt * 0x9E3779B97F4A7C15ULL;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ULL;
        x ^= x >> 27;
        for (int i = 0; i < 6; i++) {
            suffix[i] = digits[x % 62];
            x /= 62;
        }
        suffix[6] = '\0';
        if ((size_t)snprintf(tmp, tmpsz, "%s.tmp.%s", path, suffix) >= tmpsz) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Best effort: make the rename itself durable. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Write into an existing target that is not a regular file (/dev/null, a
 * FIFO, a terminal): renaming a temporary file over it would replace the
 * device itself, so the bytes go straight to it. */
static int write_special(const char *path, const char *text, tc_err *err)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(errno));
    int rc = write_all(fd, text, strlen(text));
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0)
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    return TC_OK;
}

int prog_write_xml(const prog *p, const char *path, const xml_write_opts *o, tc_err *err)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return tc_err_set(err, TC_INPUT, "%s: cannot write: is a directory", path);
    char *text = prog_to_xml(p, o, err);
    if (!text)
        return TC_INPUT;
    if (exists && !S_ISREG(st.st_mode)) {
        int rc = write_special(path, text, err);
        free(text);
        return rc;
    }
    size_t plen = strlen(path);
    size_t tmpsz = plen + 16;
    char *tmp = xmalloc(tmpsz);
    int fd = open_temp_beside(path, tmp, tmpsz);
    if (fd < 0) {
        int e = errno;
        free(text);
        free(tmp);
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    }
    /* Keep the permissions of a file being replaced. */
    if (exists)
        fchmod(fd, st.st_mode & 07777);
    int rc = write_all(fd, text, strlen(text));
    if (rc == 0)
        rc = fsync(fd);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    free(text);
    if (rc != 0) {
        unlink(tmp);
        free(tmp);
        return tc_err_set(err, TC_INPUT, "%s: cannot write: %s", path, strerror(e));
    }
    free(tmp);
    sync_parent_dir(path);
    return TC_OK;
}
