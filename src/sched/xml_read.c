/* xml_read.c — reading MSCCL XML schedules into a prog (see xml.h).
 *
 * Reading goes through libxml2's push parser with SAX callbacks of our own:
 * its error callback keeps the first error instead of printing it,
 * DOCTYPEs are refused before any entity is declared, the network is off
 * and the size limits stay on (no XML_PARSE_HUGE), so deep nesting or a
 * 100 MB attribute fail as TC_INPUT instead of eating memory (the push
 * parser does not limit nesting: the reader stops at libxml2's 256 levels
 * itself).  Those two limits are said with the element and attribute they
 * hit, found by reading the text again.  No tree is built: each element is
 * read as the parser meets it, the way the MSCCL runtimes read their
 * files: <algo> children named gpu, <gpu> children named tb, <tb> children
 * named step; everything else (<copy>, <op>, comments, text, extra
 * attributes such as redop) is skipped.  Our two extensions, <topology>
 * (the machine as JSON cut into short <part>s) and <taccl> (size and
 * predicted time), are children of <algo> as well: the runtimes skip
 * unknown elements there without counting them.  A file is read and parsed
 * 64 KiB at a time (a lone CR, an old Mac line end, read as LF so lines
 * count as editors count them), so memory stays near the size of the
 * program read (a DOM of a 2-million-step schedule took 6 GB; libxml2's
 * tree spends about 3 KB per <step>).
 *
 * What libxml2 reports on the way is kept and restated by xml_diag.c; the
 * text helpers (UTF-8, strict numbers) are xml.c's. */
#include "xml_int.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../util/jsonin.h"
#include "../util/mem.h"
#include "../util/paths.h"

/* Our own guards against absurd allocations: ranks, and chunks per buffer
 * and per loop (2^24, so a rank's three buffers still count in an int;
 * a 4096-rank AllToAll needs 2^24). */
enum { MAX_NGPUS = 65536, MAX_CHUNKS = 1 << 24 };
/* Bytes of text handed to the push parser at a time. */
enum { PUSH_PIECE = 1 << 20 };
/* A file of this many bytes or more is refused: libxml2 and the line
 * numbers count in int. */
#define XML_MAX_FILE ((long long)INT_MAX + 1)
/* maxBytes the legacy runtime assumes when the attribute is absent. */
#define LEGACY_DEFAULT_MAX_BYTES (1LL << 27)

/* ------------------------------------------------------------------ */
/* Reader: names                                                       */

/* The names the reader knows: its elements, then the attributes it reads.
 * Each is interned in the parser's dictionary when a parse begins, and
 * libxml2 hands element and attribute names over as pointers into that
 * dictionary, so a name is recognised by its pointer, not by strcmp. */
typedef enum {
    E_ALGO, E_GPU, E_TB, E_STEP, E_TOPOLOGY, E_PART, E_TACCL,
    A_NAME, A_PROTO, A_NCHANNELS, A_NCHUNKSPERLOOP, A_NGPUS, A_COLL, A_INPLACE, A_OUTOFPLACE,
    A_MINBYTES, A_MAXBYTES,
    A_ID, A_I_CHUNKS, A_O_CHUNKS, A_S_CHUNKS, A_SEND, A_RECV, A_CHAN,
    A_S, A_TYPE, A_SRCBUF, A_SRCOFF, A_DSTBUF, A_DSTOFF, A_CNT, A_DEPID, A_DEPS, A_HASDEP,
    A_SIZE_BYTES, A_TARGET, A_PREDICTED_US, A_FORMAT, A_PARTS, A_V,
    N_NAMES
} name_id;

static const char *const NAME_TEXT[N_NAMES] = {
    "algo", "gpu", "tb", "step", "topology", "part", "taccl",
    "name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
    "minBytes", "maxBytes",
    "id", "i_chunks", "o_chunks", "s_chunks", "send", "recv", "chan",
    "s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep",
    "size_bytes", "target", "predicted_us", "format", "parts", "v",
};

/* A list of names: the elements, and the attributes each element has (in
 * schema order, the order files write them in). */
typedef struct {
    const name_id *v;
    int n;
} name_list;

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))
static const name_id ELEMENT_NAMES[] = {E_ALGO, E_GPU, E_TB, E_STEP, E_TOPOLOGY, E_PART, E_TACCL};
static const name_id ALGO_ATTRS[] = {A_NAME, A_PROTO, A_NCHANNELS, A_NCHUNKSPERLOOP, A_NGPUS,
                                     A_COLL, A_INPLACE, A_OUTOFPLACE, A_MINBYTES, A_MAXBYTES};
static const name_id GPU_ATTRS[] = {A_ID, A_I_CHUNKS, A_O_CHUNKS, A_S_CHUNKS};
static const name_id TB_ATTRS[] = {A_ID, A_SEND, A_RECV, A_CHAN};
static const name_id STEP_ATTRS[] = {A_S, A_TYPE, A_SRCBUF, A_SRCOFF, A_DSTBUF, A_DSTOFF, A_CNT,
                                     A_DEPID, A_DEPS, A_HASDEP};
static const name_id TOPOLOGY_ATTRS[] = {A_FORMAT, A_PARTS};
static const name_id PART_ATTRS[] = {A_V};
static const name_id TACCL_ATTRS[] = {A_SIZE_BYTES, A_TARGET, A_PREDICTED_US};

static const name_list ELEMENTS = {ELEMENT_NAMES, COUNT(ELEMENT_NAMES)};
/* indexed by the element's name_id */
static const name_list ATTRS_OF[] = {
    [E_ALGO] = {ALGO_ATTRS, COUNT(ALGO_ATTRS)},
    [E_GPU] = {GPU_ATTRS, COUNT(GPU_ATTRS)},
    [E_TB] = {TB_ATTRS, COUNT(TB_ATTRS)},
    [E_STEP] = {STEP_ATTRS, COUNT(STEP_ATTRS)},
    [E_TOPOLOGY] = {TOPOLOGY_ATTRS, COUNT(TOPOLOGY_ATTRS)},
    [E_PART] = {PART_ATTRS, COUNT(PART_ATTRS)},
    [E_TACCL] = {TACCL_ATTRS, COUNT(TACCL_ATTRS)},
};
#undef COUNT

/* Every name, interned in one parser's dictionary. */
typedef struct {
    xmlDictPtr dict;
    const xmlChar *at[N_NAMES];
} names;

static void names_intern(names *nm, xmlDictPtr dict)
{
    nm->dict = dict;
    for (int i = 0; i < N_NAMES; i++)
        if (!(nm->at[i] = xmlDictLookup(dict, (const xmlChar *)NAME_TEXT[i], -1)))
            tc_oom();
}

/* names_find() past its first look. */
static int names_search(const names *nm, const xmlChar *s, const name_list *l)
{
    for (int k = 0; k < l->n; k++)
        if (nm->at[l->v[k]] == s)
            return k;
    if (xmlDictOwns(nm->dict, s) == 1)
        return -1;
    for (int k = 0; k < l->n; k++)
        if (strcmp((const char *)s, NAME_TEXT[l->v[k]]) == 0)
            return k;
    return -1;
}

/* Which entry of `l` the name s is (-1: none).  Names come in the order of
 * the list, so entry `guess` (the one after the last found) usually is
 * it.  A name outside the dictionary (libxml2 never hands one over) is
 * compared as a string, so none is ever missed. */
static inline int names_find(const names *nm, const xmlChar *s, const name_list *l, int guess)
{
    return nm->at[l->v[guess]] == s ? guess : names_search(nm, s, l);
}

/* ------------------------------------------------------------------ */
/* Reader: attributes                                                  */

/* An element as SAX2 hands it over: its name, the line where its start tag
 * ends (as libxml2 counts lines) and its attributes, five pointers each
 * (localname, prefix, URI, value, end of value; values are not
 * NUL-terminated); `at` says where each attribute of its kind stands among
 * them, once elem_index() has looked. */
typedef struct {
    const char *name;
    long line;
    int nattrs;
    const xmlChar **attrs;
    int at[N_NAMES];        /* index in attrs, -1: absent (the first if repeated) */
} elem;

/* One pass over n's attributes: where each attribute of element `kind`
 * stands (an attribute with a prefix is none of them). */
static void elem_index(const names *nm, elem *n, name_id kind)
{
    const name_list *l = &ATTRS_OF[kind];
    for (int k = 0; k < l->n; k++)
        n->at[l->v[k]] = -1;
    for (int i = 0, from = 0; i < n->nattrs; i++) {
        const xmlChar *const *a = &n->attrs[5 * i];
        int k = a[1] ? -1 : names_find(nm, a[0], l, from);
        if (k < 0)
            continue;
        from = k + 1 < l->n ? k + 1 : 0;
        if (n->at[l->v[k]] < 0)
            n->at[l->v[k]] = i;
    }
}

typedef struct {
    const char *label;
    tc_err *err;
    long *leading_zero;     /* prog.syntax.leading_zero: first line of an
                               integer the runtimes would read as octal */
} reader;

/* "LABEL:LINE: " + message, TC_INPUT. */
static int fail_at(const reader *r, const elem *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(const reader *r, const elem *n, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tc_err_set(r->err, TC_INPUT, "%s:%ld: %s", r->label, n->line, what);
}

/* An attribute's value: n bytes at s, not NUL-terminated. */
typedef struct {
    const char *s;
    size_t n;
} span;

/* Attribute `id` of n: *present says whether it is there, *v holds its
 * value.  An attribute beyond the 16th is as good as absent for the
 * runtimes, so it is refused. */
static int get_attr(const reader *r, const elem *n, name_id id, span *v, int *present)
{
    int idx = n->at[id];
    *present = idx >= 0;
    v->s = "";
    v->n = 0;
    if (idx < 0)
        return TC_OK;
    if (idx >= RT_MAX_ATTRS)
        return fail_at(r, n,
                       "<%s> attribute %s: is attribute number %d; the MSCCL runtimes read "
                       "only the first %d",
                       n->name, NAME_TEXT[id], idx + 1, RT_MAX_ATTRS);
    const xmlChar *const *a = &n->attrs[5 * idx];
    v->s = (const char *)a[3];
    v->n = (size_t)(a[4] - a[3]);
    return TC_OK;
}

/* The value as a string in buf (sz bytes), NULL if it does not fit: the
 * names a value is compared with are short. */
static const char *span_str(span v, char *buf, size_t sz)
{
    if (v.n >= sz)
        return NULL;
    memcpy(buf, v.s, v.n);
    buf[v.n] = '\0';
    return buf;
}

/* Attribute `id` as a string (xmlFree it), NULL if absent. */
static int attr_dup(const reader *r, const elem *n, name_id id, xmlChar **out)
{
    span v;
    int present;
    *out = NULL;
    if (get_attr(r, n, id, &v, &present) != TC_OK)
        return TC_INPUT;
    if (present && !(*out = xmlStrndup((const xmlChar *)v.s, (int)v.n)))
        tc_oom();
    return TC_OK;
}

static int missing(const reader *r, const elem *n, name_id id)
{
    return fail_at(r, n, "<%s> attribute %s: missing", n->name, NAME_TEXT[id]);
}

/* An integer written with a leading zero ("010", "-07"): the runtimes read
 * every integer with strtol(s, NULL, 0), so as octal (8; "08" as 0). */
static void note_leading_zero(const reader *r, const elem *n, const char *s, size_t len)
{
    size_t i = len > 0 && s[0] == '-';
    if (len - i >= 2 && s[i] == '0' && r->leading_zero && !*r->leading_zero &&
        (!strcmp(n->name, "algo") || !strcmp(n->name, "gpu") || !strcmp(n->name, "tb") ||
         !strcmp(n->name, "step")))
        *r->leading_zero = n->line;
}

/* attr_ll() but for a value there, within the first 16 and good. */
static int attr_ll_slow(const reader *r, const elem *n, name_id id, long long lo, long long hi,
                        long long *out, int *present)
{
    span v;
    int there;
    if (get_attr(r, n, id, &v, &there) != TC_OK)
        return TC_INPUT;
    if (!there) {
        if (present) {
            *present = 0;
            return TC_OK;
        }
        return missing(r, n, id);
    }
    long long x = 0;
    int rc = xml_parse_decimal(v.s, v.n, lo, hi, &x);
    if (rc != NUM_OK) {
        char ex[64];
        xml_excerpt_n(v.s, v.n, ex, sizeof ex);
        if (rc == NUM_SYNTAX)
            return fail_at(r, n, "<%s> attribute %s: expected an integer, got \"%s\"",
                           n->name, NAME_TEXT[id], ex);
        return fail_at(r, n, "<%s> attribute %s: %s is out of range (%lld..%lld)",
                       n->name, NAME_TEXT[id], ex, lo, hi);
    }
    *out = x;
    if (present)
        *present = 1;
    note_leading_zero(r, n, v.s, v.n);
    return TC_OK;
}

/* Required (present == NULL) or optional integer attribute in [lo, hi].
 * The common case, a good value, takes the first branch. */
static inline int attr_ll(const reader *r, const elem *n, name_id id, long long lo,
                          long long hi, long long *out, int *present)
{
    int idx = n->at[id];
    if (idx >= 0 && idx < RT_MAX_ATTRS) {
        const xmlChar *const *a = &n->attrs[5 * idx];
        if (xml_parse_decimal((const char *)a[3], (size_t)(a[4] - a[3]), lo, hi, out) == NUM_OK) {
            if (present)
                *present = 1;
            if (a[3][0] == '0' || a[3][0] == '-')
                note_leading_zero(r, n, (const char *)a[3], (size_t)(a[4] - a[3]));
            return TC_OK;
        }
    }
    return attr_ll_slow(r, n, id, lo, hi, out, present);
}

/* Required integer attribute in lo..hi (within int). */
static inline int attr_int(const reader *r, const elem *n, name_id id, int lo, int hi, int *out)
{
    long long x;
    if (attr_ll(r, n, id, lo, hi, &x, NULL) != TC_OK)
        return TC_INPUT;
    *out = (int)x;
    return TC_OK;
}

/* Required string attribute as it stands (valid while n is). */
static int attr_span(const reader *r, const elem *n, name_id id, span *v)
{
    int present;
    if (get_attr(r, n, id, v, &present) != TC_OK)
        return TC_INPUT;
    if (!present)
        return missing(r, n, id);
    return TC_OK;
}

/* Required string attribute (xmlFree the result). */
static int attr_str(const reader *r, const elem *n, name_id id, xmlChar **out)
{
    if (attr_dup(r, n, id, out) != TC_OK)
        return TC_INPUT;
    if (!*out)
        return missing(r, n, id);
    return TC_OK;
}

static int attr_buf(const reader *r, const elem *n, name_id id, buf_kind *out)
{
    span v;
    char tmp[8];
    if (attr_span(r, n, id, &v) != TC_OK)
        return TC_INPUT;
    const char *s = span_str(v, tmp, sizeof tmp);
    if (s && buf_parse(s, out) == 0)
        return TC_OK;
    char ex[64];
    xml_excerpt_n(v.s, v.n, ex, sizeof ex);
    return fail_at(r, n, "<%s> attribute %s: unknown buffer \"%s\" (expected i, o or s)",
                   n->name, NAME_TEXT[id], ex);
}

/* ------------------------------------------------------------------ */
/* Reader: elements                                                    */

static int read_step(const reader *r, const elem *n, prog_tb *tb)
{
    int s, srcoff, dstoff, cnt, depid, deps, hasdep;
    buf_kind srcbuf, dstbuf;
    step_type type;
    span tv;
    char tmp[8];
    if (attr_int(r, n, A_S, 0, INT_MAX, &s) != TC_OK || attr_span(r, n, A_TYPE, &tv) != TC_OK)
        return TC_INPUT;
    const char *ts = span_str(tv, tmp, sizeof tmp);
    if (!ts || step_type_parse(ts, &type) != 0) {
        char ex[64];
        xml_excerpt_n(tv.s, tv.n, ex, sizeof ex);
        int legacy_ra = ts && strcmp(ts, "ra") == 0;
        return fail_at(r, n,
                       "<step> attribute type: unknown step type \"%s\"%s (expected s, r, rcs, "
                       "rrs, rrc, rrcs, cpy, re or nop)",
                       ex, legacy_ra ? " (the legacy runtime's residual add is not supported)" : "");
    }
    /* Offsets may be -1: msccl-tools writes nops with srcoff="-1". */
    if (attr_buf(r, n, A_SRCBUF, &srcbuf) != TC_OK ||
        attr_int(r, n, A_SRCOFF, -1, INT_MAX, &srcoff) != TC_OK ||
        attr_buf(r, n, A_DSTBUF, &dstbuf) != TC_OK ||
        attr_int(r, n, A_DSTOFF, -1, INT_MAX, &dstoff) != TC_OK ||
        attr_int(r, n, A_CNT, 0, INT_MAX, &cnt) != TC_OK ||
        attr_int(r, n, A_DEPID, -1, INT_MAX, &depid) != TC_OK ||
        attr_int(r, n, A_DEPS, -1, INT_MAX, &deps) != TC_OK ||
        attr_int(r, n, A_HASDEP, 0, 1, &hasdep) != TC_OK)
        return TC_INPUT;
    prog_step *st = prog_add_step(tb, type, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps);
    st->s = s;
    st->hasdep = hasdep;
    st->line = (int)n->line;
    return TC_OK;
}

/* A <tb>: *out receives it (its <step>s come as the elements inside it). */
static int read_tb(const reader *r, const elem *n, prog_gpu *g, prog_tb **out)
{
    int id, send, recv, chan;
    if (attr_int(r, n, A_ID, 0, INT_MAX, &id) != TC_OK ||
        attr_int(r, n, A_SEND, -1, INT_MAX, &send) != TC_OK ||
        attr_int(r, n, A_RECV, -1, INT_MAX, &recv) != TC_OK ||
        attr_int(r, n, A_CHAN, 0, INT_MAX, &chan) != TC_OK)
        return TC_INPUT;
    prog_tb *tb = prog_add_tb(g, send, recv, chan);
    tb->id = id;
    tb->line = (int)n->line;
    *out = tb;
    return TC_OK;
}

/* One <gpu>: its id must be a free slot 0..ngpus-1 of p->gpus; *out
 * receives it (its <tb>s come as the elements inside it). */
static int read_gpu(const reader *r, const elem *n, prog *p, prog_gpu **out)
{
    int id, ic, oc, sc;
    if (attr_int(r, n, A_ID, INT_MIN, INT_MAX, &id) != TC_OK)
        return TC_INPUT;
    if (id < 0 || id >= p->ngpus)
        return fail_at(r, n, "<gpu> attribute id: %d is out of range 0..%d (ngpus=\"%d\")", id,
                       p->ngpus - 1, p->ngpus);
    prog_gpu *g = &p->gpus[id];
    if (g->line > 0)
        return fail_at(r, n, "<gpu> attribute id: gpu %d appears twice (first at line %d)", id,
                       g->line);
    if (attr_int(r, n, A_I_CHUNKS, 0, MAX_CHUNKS, &ic) != TC_OK ||
        attr_int(r, n, A_O_CHUNKS, 0, MAX_CHUNKS, &oc) != TC_OK ||
        attr_int(r, n, A_S_CHUNKS, 0, MAX_CHUNKS, &sc) != TC_OK)
        return TC_INPUT;
    g->id = id;
    g->i_chunks = ic;
    g->o_chunks = oc;
    g->s_chunks = sc;
    g->line = n->line > 0 ? (int)n->line : 1;
    *out = g;
    return TC_OK;
}

/* <taccl size_bytes="..." predicted_us="..." generator="..."/> */
static int read_taccl(const reader *r, const elem *n, prog *p)
{
    long long size = 0;
    int present;
    if (attr_ll(r, n, A_SIZE_BYTES, 0, LLONG_MAX, &size, &present) != TC_OK)
        return TC_INPUT;
    p->size_bytes = present ? size : 0;
    p->size_line = present ? (int)n->line : 0;
    xmlChar *v;
    if (attr_dup(r, n, A_TARGET, &v) != TC_OK)
        return TC_INPUT;
    if (v) {
        const char *t = (const char *)v;
        int rc = runtime_parse_file(t, &p->target, NULL);
        char ex[64];
        xml_excerpt(t, ex, sizeof ex);
        xmlFree(v);
        if (rc != TC_OK) {
            tc_err bad;         /* the message names the excerpt */
            runtime shown;
            tc_err_set(&bad, TC_INPUT, "not a runtime's name");
            runtime_parse_file(ex, &shown, &bad);
            return fail_at(r, n, "<taccl> attribute target: %s", bad.msg);
        }
    }
    if (attr_dup(r, n, A_PREDICTED_US, &v) != TC_OK)
        return TC_INPUT;
    if (v) {
        double us;
        int rc = xml_parse_real((const char *)v, &us);
        char ex[64];
        xml_excerpt((const char *)v, ex, sizeof ex);
        xmlFree(v);
        if (rc != NUM_OK)
            return fail_at(r, n, "<taccl> attribute predicted_us: expected a finite number, got \"%s\"",
                           ex);
        p->predicted_us = us;
    }
    return TC_OK;
}

static int read_proto(const reader *r, const elem *n, prog *p)
{
    xmlChar *v;
    if (attr_str(r, n, A_PROTO, &v) != TC_OK)
        return TC_INPUT;
    const char *s = (const char *)v;
    int ok = strcmp(s, "Simple") == 0 || strcmp(s, "LL") == 0 || strcmp(s, "LL128") == 0;
    char ex[64];
    xml_excerpt(s, ex, sizeof ex);
    if (ok)
        snprintf(p->proto, sizeof p->proto, "%s", s);
    xmlFree(v);
    if (!ok)
        return fail_at(r, n, "<algo> attribute proto: unknown protocol \"%s\" (expected Simple, LL or "
                       "LL128)", ex);
    return TC_OK;
}

static int read_coll(const reader *r, const elem *n, prog *p)
{
    xmlChar *v;
    if (attr_str(r, n, A_COLL, &v) != TC_OK)
        return TC_INPUT;
    int ok = coll_parse((const char *)v, &p->coll) == 0;
    char ex[64];
    xml_excerpt((const char *)v, ex, sizeof ex);
    snprintf(p->coll_attr, sizeof p->coll_attr, "%s", ex);
    xmlFree(v);
    if (!ok)
        return fail_at(r, n, "<algo> attribute coll: unsupported collective \"%s\" (expected "
                       "allgather, alltoall, reduce_scatter/reducescatter or allreduce)", ex);
    return TC_OK;
}

static int read_name(const reader *r, const elem *n, prog *p)
{
    xmlChar *v;
    if (attr_dup(r, n, A_NAME, &v) != TC_OK)
        return TC_INPUT;
    if (!v)
        return TC_OK; /* the newer executor does not need a name */
    p->attrs |= PROG_HAS_NAME;
    size_t len = strlen((const char *)v);
    if (len >= sizeof p->name) {
        xmlFree(v);
        return fail_at(r, n, "<algo> attribute name: %zu bytes, at most %d", len, RT_MAX_VALUE);
    }
    memcpy(p->name, v, len + 1);
    xmlFree(v);
    return TC_OK;
}

/* The <algo> attributes, in schema order so the first bad one is named. */
static int read_algo_attrs(const reader *r, const elem *n, prog *p)
{
    long long x;
    int present;
    if (read_name(r, n, p) != TC_OK || read_proto(r, n, p) != TC_OK ||
        attr_int(r, n, A_NCHANNELS, 1, INT_MAX, &p->nchannels) != TC_OK ||
        attr_int(r, n, A_NCHUNKSPERLOOP, 1, MAX_CHUNKS, &p->nchunksperloop) != TC_OK ||
        attr_int(r, n, A_NGPUS, INT_MIN, INT_MAX, &p->ngpus) != TC_OK)
        return TC_INPUT;
    if (p->ngpus < 1)
        return fail_at(r, n, "<algo> attribute ngpus: must be at least 1, got %d", p->ngpus);
    if (p->ngpus > MAX_NGPUS)
        return fail_at(r, n, "<algo> attribute ngpus: %d is more than this reader supports (%d)",
                       p->ngpus, MAX_NGPUS);
    if (read_coll(r, n, p) != TC_OK || attr_int(r, n, A_INPLACE, 0, 1, &p->inplace) != TC_OK)
        return TC_INPUT;
    /* Optional for the legacy runtime, which runs an algorithm only for
     * calls whose in-placeness equals `inplace` and assumes minBytes 0,
     * maxBytes 128 MB. */
    if (attr_ll(r, n, A_OUTOFPLACE, 0, 1, &x, &present) != TC_OK)
        return TC_INPUT;
    p->outofplace = present ? (int)x : !p->inplace;
    p->attrs |= present ? PROG_HAS_OUTOFPLACE : 0;
    if (attr_ll(r, n, A_MINBYTES, 0, LLONG_MAX, &x, &present) != TC_OK)
        return TC_INPUT;
    p->min_bytes = present ? x : 0;
    p->attrs |= present ? PROG_HAS_MINBYTES : 0;
    if (attr_ll(r, n, A_MAXBYTES, 0, LLONG_MAX, &x, &present) != TC_OK)
        return TC_INPUT;
    p->max_bytes = present ? x : LEGACY_DEFAULT_MAX_BYTES;
    p->attrs |= present ? PROG_HAS_MAXBYTES : 0;
    return TC_OK;
}

/* ------------------------------------------------------------------ */
/* Reader: the document as a stream of elements                        */

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
 * holds JSON line JL (column JC), or of <topology> itself (n). */
static int topology_error(const reader *r, const elem *n, const char *json,
                          const part_map *m, const char *msg)
{
    static const char tag[] = "<topology>";
    const char *rest = msg + strlen(tag);
    long line = n->line, jline = 0, jcol = 1;
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

/* What an element is to the reader, by its name and its parent's role, as
 * the runtimes read files: <algo> children named gpu, <gpu> children named
 * tb, <tb> children named step, and our <topology> (with its <part>s) and
 * <taccl> under <algo>; everything else, and everything inside it, is
 * skipped. */
typedef enum { R_SKIP, R_ALGO, R_GPU, R_TB, R_STEP, R_TOPOLOGY, R_PART, R_TACCL } role;

/* The reading state.  xml_diag comes first: libxml2's callbacks reach it
 * through the parser context's _private pointer. */
typedef struct {
    xml_diag diag;
    reader r;               /* r.err is `first` below */
    tc_err first;           /* the first error in what the file says */
    int failed;             /* ... was found: read nothing more, but parse to
                               the end (a malformed file is reported as such) */
    prog *p;
    role *stack;            /* role of each open element */
    int depth, cap;
    prog_gpu *gpu;          /* open <gpu> and <tb> */
    prog_tb *tb;
    long algo_line;         /* line of <algo>, 0 before it */
    long topo_line;         /* of the first <topology>, 0 if none yet */
    long taccl_line;        /* of the first <taccl>, 0 if none yet */
    sbuf json;              /* the <topology>'s parts, joined */
    part_map parts_at;      /* where each of them starts, and its line */
    long long parts;        /* how many its parts attribute says */
    names nm;               /* the names read, in the parser's dictionary */
} sax_state;

/* <topology format="taccl-json-1" parts="N">: its <part v="..."/>s follow. */
static int topology_start(sax_state *s, const elem *n)
{
    const reader *r = &s->r;
    xmlChar *fmt;
    if (attr_str(r, n, A_FORMAT, &fmt) != TC_OK)
        return TC_INPUT;
    int ok = strcmp((const char *)fmt, TOPO_FORMAT) == 0;
    char ex[64];
    xml_excerpt((const char *)fmt, ex, sizeof ex);
    xmlFree(fmt);
    if (!ok)
        return fail_at(r, n, "<topology> attribute format: unsupported \"%s\" (expected \"%s\")",
                       ex, TOPO_FORMAT);
    if (attr_ll(r, n, A_PARTS, 0, INT_MAX, &s->parts, NULL) != TC_OK)
        return TC_INPUT;
    s->parts_at.n = 0;
    s->json.len = 0;
    xml_sb_reserve(&s->json, 0);
    s->json.s[0] = '\0';
    return TC_OK;
}

static int topology_part(sax_state *s, const elem *n)
{
    span v;
    if (attr_span(&s->r, n, A_V, &v) != TC_OK)
        return TC_INPUT;
    part_map_add(&s->parts_at, s->json.len, n->line);
    xml_sb_put(&s->json, v.s, v.n);
    return TC_OK;
}

/* </topology>: the parts make the topology JSON. */
static int topology_end(sax_state *s)
{
    const reader *r = &s->r;
    elem n = {.name = "topology", .line = s->topo_line};
    if (s->parts_at.n != s->parts)
        return fail_at(r, &n, "<topology> attribute parts: says %lld but %d <part> "
                       "elements follow", s->parts, s->parts_at.n);
    tc_err te;
    tc_err_clear(&te);
    topo *t = topo_parse(s->json.s, "<topology>", &te);
    if (!t)
        return topology_error(r, &n, s->json.s, &s->parts_at,
                              te.msg[0] ? te.msg : "<topology>: invalid");
    prog_set_topo(s->p, t);
    return TC_OK;
}

/* <algo>: its attributes, and room for its gpus. */
static int algo_start(sax_state *s, const elem *n)
{
    s->p->line = (int)n->line;
    if (read_algo_attrs(&s->r, n, s->p) != TC_OK)
        return TC_INPUT;
    prog *p = s->p;
    p->gpus = calloc((size_t)p->ngpus, sizeof *p->gpus);
    if (!p->gpus)
        tc_oom();
    p->gpu_cap = p->ngpus;
    p->ngpu = p->ngpus;
    return TC_OK;
}

/* </algo>: every gpu id was there. */
static int algo_end(sax_state *s)
{
    const prog *p = s->p;
    elem n = {.name = "algo", .line = s->algo_line};
    for (int g = 0; g < p->ngpus; g++)
        if (p->gpus[g].line == 0)
            return fail_at(&s->r, &n, "<algo>: no <gpu> with id %d (ngpus=\"%d\" needs ids "
                           "0..%d)", g, p->ngpus, p->ngpus - 1);
    return TC_OK;
}

/* An element named e (-1: a name the reader does not read, or one in a
 * namespace) opens under an element of role `parent` (-1: the root): read
 * what it says, return its role. */
static role open_elem(sax_state *s, int parent, int e, const xmlChar *uri, elem *n)
{
    const reader *r = &s->r;
    int rc = TC_OK;
    role k = R_SKIP;
    if (e >= 0)
        elem_index(&s->nm, n, (name_id)e);
    if (parent < 0) {
        if (e != E_ALGO && uri)
            rc = fail_at(r, n, "root element is <%s> in namespace \"%s\", expected <algo> in "
                         "none", n->name, (const char *)uri);
        else if (e != E_ALGO)
            rc = fail_at(r, n, "root element is <%s>, expected <algo>", n->name);
        else if ((rc = algo_start(s, n)) == TC_OK)
            k = R_ALGO;
        s->algo_line = n->line > 0 ? n->line : 1;
    } else if (parent == R_ALGO && e == E_GPU) {
        if ((rc = read_gpu(r, n, s->p, &s->gpu)) == TC_OK)
            k = R_GPU;
    } else if (parent == R_ALGO && e == E_TOPOLOGY) {
        if (s->topo_line)
            rc = fail_at(r, n, "<topology>: a second one (first at line %ld)", s->topo_line);
        else if ((rc = topology_start(s, n)) == TC_OK)
            k = R_TOPOLOGY;
        s->topo_line = n->line;
    } else if (parent == R_ALGO && e == E_TACCL) {
        if (s->taccl_line)
            rc = fail_at(r, n, "<taccl>: a second one (first at line %ld)", s->taccl_line);
        else if ((rc = read_taccl(r, n, s->p)) == TC_OK)
            k = R_TACCL;
        s->taccl_line = n->line;
    } else if (parent == R_GPU && e == E_TB) {
        if ((rc = read_tb(r, n, s->gpu, &s->tb)) == TC_OK)
            k = R_TB;
    } else if (parent == R_TB && e == E_STEP) {
        if ((rc = read_step(r, n, s->tb)) == TC_OK)
            k = R_STEP;
    } else if (parent == R_TOPOLOGY && e == E_PART) {
        if ((rc = topology_part(s, n)) == TC_OK)
            k = R_PART;
    }
    if (rc != TC_OK)
        s->failed = 1;
    return k;
}

static void on_start(void *data, const xmlChar *localname, const xmlChar *prefix,
                     const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                     int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_defaulted;
    xmlParserCtxtPtr ctxt = data;
    sax_state *s = ctxt->_private;
    if (s->depth > MAX_DEPTH) {
        xml_too_deep(ctxt, &s->diag);
        return;
    }
    if (nb_attributes > 16 && !s->p->syntax.many_attrs)   /* the tokenizer keeps 16 */
        s->p->syntax.many_attrs = ctxt->input ? ctxt->input->line : 1;
    if (s->depth == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->stack = xrealloc(s->stack, (size_t)s->cap * sizeof *s->stack);
    }
    role parent = s->depth ? s->stack[s->depth - 1] : R_SKIP;
    role k = R_SKIP;
    if (!s->failed && (s->depth == 0 || parent != R_SKIP)) {
        /* The name as libxml2 would show it, prefix:localname, where a
         * message may show it: below the root only elements the reader
         * reads are named, and those have no prefix. */
        char qname[256];
        const char *name = (const char *)localname;
        if (prefix || s->depth == 0) {
            snprintf(qname, sizeof qname, "%s%s%s", prefix ? (const char *)prefix : "",
                     prefix ? ":" : "", (const char *)localname);
            name = qname;
        }
        elem n;
        n.name = name;
        n.line = ctxt->input ? ctxt->input->line : 0;
        n.nattrs = nb_attributes;
        n.attrs = attributes;
        /* the element each role's children usually are: its index in ELEMENTS */
        static const int usual_child[] = {[R_ALGO] = 1, [R_GPU] = 2, [R_TB] = 3,
                                          [R_TOPOLOGY] = 5, [R_TACCL] = 0};
        int guess = s->depth ? usual_child[parent] : 0;
        int e = prefix || uri ? -1 : names_find(&s->nm, localname, &ELEMENTS, guess);
        k = open_elem(s, s->depth ? (int)parent : -1, e < 0 ? -1 : (int)ELEMENTS.v[e], uri, &n);
    }
    s->stack[s->depth++] = k;
}

static void on_end(void *data, const xmlChar *localname, const xmlChar *prefix,
                   const xmlChar *uri)
{
    (void)localname;
    (void)prefix;
    (void)uri;
    xmlParserCtxtPtr ctxt = data;
    sax_state *s = ctxt->_private;
    if (s->depth == 0)
        return;
    role k = s->stack[--s->depth];
    int rc = TC_OK;
    if (s->failed)
        return;
    if (k == R_TOPOLOGY)
        rc = topology_end(s);
    else if (k == R_ALGO)
        rc = algo_end(s);
    else if (k == R_TB)
        s->tb = NULL;
    else if (k == R_GPU)
        s->gpu = NULL;
    if (rc != TC_OK)
        s->failed = 1;
}

/* A parse in progress: text goes in piece by piece (libxml2's push parser,
 * so it never holds the whole text) and the schedule is read as it streams
 * by (no tree is built): memory stays near the size of the program.  The
 * caller checks each piece first (UTF-8, no NUL). */
/* The raw text as the runtimes' tokenizer sees it (see prog.syntax). */
typedef struct {
    long line;
    int in_tag, in_quote, in_comment;
    int open;               /* bytes seen since the tag's '<' (counts to 4) */
    int bang;               /* 1 after "<!", 2 after "<!-" */
    int dashes;             /* in a comment: '-' just before */
    int eq;                 /* in a tag: the byte before was '=' */
    int spaces;             /* in a tag: spaces outside values, each of which
                               starts an attribute for the runtimes' tokenizer */
    unsigned char name[2];  /* the tag's first two bytes after '<' */
    unsigned char prev;     /* the last byte of the previous piece */
} tok_scan;

typedef struct {
    sax_state st;
    tok_scan tk;
    xmlParserCtxtPtr ctxt;
    const char *label;
    xmlStructuredErrorFunc old_serror;
    void *old_sctx;
    xmlGenericErrorFunc old_gerror;
    void *old_gctx;
} stream;

static void stream_begin(stream *S, const char *label)
{
    xmlInitParser();
    memset(S, 0, sizeof *S);
    S->label = label;
    sax_state *st = &S->st;
    st->r.label = label;
    st->r.err = &st->first;
    tc_err_clear(&st->first);
    st->p = prog_new("", COLL_ALLGATHER, 0, 0);
    st->r.leading_zero = st->p ? &st->p->syntax.leading_zero : NULL;
    /* SAX2's handlers (document, entities...), with ours for elements and
     * none for text, comments and instructions: nothing is kept */
    xmlSAXHandler h;
    memset(&h, 0, sizeof h);
    xmlSAXVersion(&h, 2);
    h.serror = xml_on_ctxt_error;
    h.internalSubset = xml_refuse_doctype;
    h.startElementNs = on_start;
    h.endElementNs = on_end;
    h.characters = NULL;
    h.ignorableWhitespace = NULL;
    h.cdataBlock = NULL;
    h.comment = NULL;
    h.processingInstruction = NULL;
    h.reference = NULL;
    S->ctxt = xmlCreatePushParserCtxt(&h, NULL, NULL, 0, label);
    if (!S->ctxt || !st->p)
        tc_oom();
    S->ctxt->_private = st;
    names_intern(&st->nm, S->ctxt->dict);
    /* libxml2's handlers are per-thread; borrow them for this parse only. */
    S->old_serror = xmlStructuredError;
    S->old_sctx = xmlStructuredErrorContext;
    S->old_gerror = xmlGenericError;
    S->old_gctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(&st->diag, xml_on_global_error);
    xmlSetGenericErrorFunc(NULL, xml_on_generic_error);
    /* NOENT: attribute values arrive with '&' decoded (no entity can be
     * declared: a DOCTYPE stops the parse) */
    xmlCtxtUseOptions(S->ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                      XML_PARSE_BIG_LINES | XML_PARSE_IGNORE_ENC | XML_PARSE_NOENT);
}

static void first_at(long *slot, long line)
{
    if (!*slot)
        *slot = line;
}

/* Bytes that end a run the scan can skip, in a tag, in a quoted value and
 * between elements. */
static const unsigned char STOP_TAG[256] = {
    ['"'] = 1, ['\''] = 1, ['\n'] = 1, ['\r'] = 1, ['>'] = 1, ['='] = 1, ['\t'] = 1, [' '] = 1,
};
static const unsigned char STOP_QUOTE[256] = {['"'] = 1, ['\n'] = 1, ['&'] = 1};

/* Whether a tag whose name begins with these two bytes is one whose values
 * the runtimes use: <algo>, <gpu>, <tb>, <step> (not <taccl>, <topology>). */
static int read_by_runtimes(const unsigned char *name)
{
    return (name[0] == 'a' && name[1] == 'l') || (name[0] == 'g' && name[1] == 'p') ||
           (name[0] == 't' && name[1] == 'b') || (name[0] == 's' && name[1] == 't');
}

/* Byte by byte: note, in p->syntax, what the runtimes' tokenizer would
 * refuse in these bytes: it takes only ' ', '\n' and '\r' between
 * elements, no <?...?>, each tag on one line, values in double quotes;
 * comments are skipped.  And what it reads otherwise than libxml2: a tab
 * in a tag or a blank beside '=' (it splits attributes at single spaces
 * and reads a value only right after '='), an entity reference in a value
 * (taken literally).  Runs of names and values inside tags are skipped by
 * table. */
static void tok_scan_slow(tok_scan *t, prog *p, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        if (t->in_comment) {
            if (c == '>' && t->dashes >= 2)
                t->in_comment = 0;
            t->dashes = c == '-' ? t->dashes + 1 : 0;
        } else if (t->in_quote) {
            while (!STOP_QUOTE[c] && i + 1 < n)
                c = (unsigned char)b[++i];
            if (c == '"')
                t->in_quote = 0;
            else if (c == '&' && read_by_runtimes(t->name))
                first_at(&p->syntax.entity, t->line);
        } else if (t->in_tag && t->open < 4) {
            /* the first bytes after '<': "<?" and "<!--" */
            t->open++;
            if (t->open <= 2)
                t->name[t->open - 1] = c;
            if (t->open == 1 && c == '?')
                first_at(&p->syntax.decl, t->line);
            t->bang = t->open == 1 && c == '!' ? 1 : t->bang == t->open - 1 && c == '-' ? t->bang + 1 : 0;
            if (t->bang == 3) {
                t->in_tag = 0;
                t->in_comment = 1;
                t->dashes = 0;
            } else if (c == '>') {
                t->in_tag = 0;
            } else if (c == '"') {
                t->in_quote = 1;
            } else if (c == '\n' || c == '\r') {
                first_at(&p->syntax.split_tag, t->line);
            } else if (c == ' ') {
                t->spaces++;
            }
        } else if (t->in_tag) {
            if (t->eq && (c == ' ' || c == '\t'))
                first_at(&p->syntax.eq_space, t->line);
            t->eq = 0;
            while (!STOP_TAG[c] && i + 1 < n)
                c = (unsigned char)b[++i];
            unsigned char before = i > 0 ? (unsigned char)b[i - 1] : t->prev;
            if (c == '=') {
                if (before == ' ')
                    first_at(&p->syntax.eq_space, t->line);
                t->eq = 1;
            } else if (c == '\t')
                first_at(&p->syntax.tab_in_tag, t->line);
            else if (c == ' ')
                t->spaces++;
            else if (c == '"')
                t->in_quote = 1;
            else if (c == '\'')
                first_at(&p->syntax.single_quote, t->line);
            else if (c == '\n' || c == '\r')
                first_at(&p->syntax.split_tag, t->line);
            else if (c == '>') {
                t->in_tag = 0;
                if (t->spaces > 16)     /* the tokenizer keeps 16 attributes */
                    first_at(&p->syntax.many_attrs, t->line);
            }
        } else if (c == '<') {
            t->in_tag = 1;
            t->open = 0;
            t->bang = 0;
            t->spaces = 0;
        } else if (c != ' ' && c != '\n' && c != '\r') {
            first_at(&p->syntax.tab, t->line);
        }
        if (c == '\n')
            t->line++;
    }
    if (n > 0)
        t->prev = (unsigned char)b[n - 1];
}

/* High bit of each byte of w that equals c (exact: no borrow across bytes). */
static inline uint64_t byte_eq(uint64_t w, unsigned char c)
{
    const uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
    uint64_t x = w ^ (ones * c);
    return ~(((x & low7) + low7) | x | low7);
}

/* One pass over the n bytes at s (one more readable byte after them): the
 * number of '"' in *quotes, and whether there is what the runtimes'
 * tokenizer reads otherwise than libxml2 around blanks: a blank beside '='
 * ('=' not followed by '"'), or a space followed by a space, '/' or '>'
 * (an empty attribute to it).  8 bytes at a time on a little-endian
 * machine: a byte's successor is the mask shifted down one byte, the
 * last one's the next word's first byte. */
static int scan_tag_text(const char *s, size_t n, size_t *quotes)
{
    size_t count = 0, i = 0;
    uint64_t odd = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101u, top = 1ULL << 63;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, sizeof w);
        char d = s[i + 8];
        uint64_t q = byte_eq(w, '"'), sp = byte_eq(w, ' '), eq = byte_eq(w, '=');
        uint64_t sp_next = (sp >> 8) | (d == ' ' || d == '/' || d == '>' ? top : 0);
        uint64_t eq_next = (eq >> 8) | (d == '=' ? top : 0);
        uint64_t q_next = (q >> 8) | (d == '"' ? top : 0);
        count += (size_t)(((q >> 7) * ones) >> 56);
        odd |= (sp & (sp_next | eq_next)) | (eq & ~q_next);
    }
#endif
    for (; i < n; i++) {
        char c = s[i], d = s[i + 1];
        count += c == '"';
        odd |= (c == ' ' && (d == ' ' || d == '/' || d == '>' || d == '=')) ||
               (c == '=' && d != '"');
    }
    if (n > 0) {    /* a space before a closing "/>" or ">" inside the words */
        const char *e = s + n;
        odd |= e[-1] == ' ' || (n > 1 && e[-1] == '/' && e[-2] == ' ');
    }
    *quotes = count;
    return odd != 0;
}

/* Is the line [a, e) (e at its '\n') one plain tag, as nearly every line of
 * a schedule is: blanks, '<' and a letter or '/', no other '<' or '>' nor a
 * single quote or CR inside, an even number of '"', '>' last (blanks or
 * CRs after it)?  From text, tok_scan_slow() would go through such a line
 * back to text and note nothing.  `rare` says whether the piece holding
 * the line has a single quote or a CR at all (most have neither). */
static int plain_tag_line(const char *a, const char *e, int rare)
{
    while (a < e && *a == ' ')
        a++;
    while (e > a && (e[-1] == ' ' || e[-1] == '\r'))
        e--;
    if (e - a < 3 || a[0] != '<' || e[-1] != '>')
        return 0;
    unsigned char c = (unsigned char)a[1];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '/'))
        return 0;
    const char *in = a + 1;
    size_t len = (size_t)(e - 1 - in);
    if (rare && (memchr(in, '\'', len) || memchr(in, '\r', len) || memchr(in, '\t', len) ||
                 memchr(in, '&', len)))
        return 0;
    size_t quotes;
    if (scan_tag_text(in, len, &quotes))
        return 0;   /* the slow scan says which */
    return quotes % 2 == 0 && !memchr(in, '<', len) && !memchr(in, '>', len);
}

/* tok_scan_slow() over n bytes, a line at a time: a plain tag line from
 * text (nearly every line) needs no more than a line count. */
static void tok_scan_bytes(tok_scan *t, prog *p, const char *b, size_t n)
{
    if (t->line == 0)
        t->line = 1;
    const char *end = b + n;
    int rare = memchr(b, '\'', n) || memchr(b, '\r', n) || memchr(b, '\t', n) || memchr(b, '&', n);
    while (b < end) {
        const char *nl = memchr(b, '\n', (size_t)(end - b));
        const char *next = nl ? nl + 1 : end;
        if (nl && !t->in_tag && !t->in_quote && !t->in_comment && plain_tag_line(b, nl, rare))
            t->line++;
        else
            tok_scan_slow(t, p, b, (size_t)(next - b));
        b = next;
    }
}

/* Hand n more bytes to the parser (nothing once it has stopped). */
static void stream_feed(stream *S, const char *bytes, size_t n)
{
    tok_scan_bytes(&S->tk, S->st.p, bytes, n);
    while (n > 0 && !S->ctxt->disableSAX && S->ctxt->instate != XML_PARSER_EOF) {
        size_t piece = n < PUSH_PIECE ? n : PUSH_PIECE;
        xmlParseChunk(S->ctxt, bytes, (int)piece, 0);
        bytes += piece;
        n -= piece;
    }
}

/* End the parse: the program, or NULL with err set — a DOCTYPE, malformed
 * XML (reported first, wherever it is), then the first thing the file gets
 * wrong.  `complete` 0 abandons it (an error found outside the parser).
 * src is where the text can be read again for a message. */
static prog *stream_end(stream *S, const source *src, int complete, tc_err *err)
{
    sax_state *st = &S->st;
    const char *label = S->label;
    xmlParseChunk(S->ctxt, NULL, 0, 1);
    xmlDocPtr doc = S->ctxt->myDoc;
    int well_formed = S->ctxt->wellFormed;
    long end_line = S->ctxt->input ? S->ctxt->input->line : 0;
    xmlSetStructuredErrorFunc(S->old_sctx, S->old_serror);
    xmlSetGenericErrorFunc(S->old_gctx, S->old_gerror);
    xmlFreeParserCtxt(S->ctxt);
    xmlFreeDoc(doc);
    free(st->stack);
    free(st->json.s);
    free(st->parts_at.at);
    free(st->parts_at.line);
    const xml_diag *diag = &st->diag;
    if (!complete) {
    } else if (diag->doctype) {
        tc_err_set(err, TC_INPUT, "%s:%ld: <!DOCTYPE> is not allowed in a schedule", label,
                   diag->doctype_line);
    } else if (!doc || !well_formed) {
        if (diag->level)
            xml_malformed(src, label, diag, err);
        else
            tc_err_set(err, TC_INPUT, "%s:%ld: malformed XML", label, end_line);
    } else if (st->failed) {
        if (err)
            *err = st->first;
    } else if (!st->algo_line) {
        tc_err_set(err, TC_INPUT, "%s:1: no root element, expected <algo>", label);
    } else {
        return st->p;
    }
    prog_free(st->p);
    return NULL;
}

static int only_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
            return 0;
    return 1;
}

static int empty_file(const char *label, tc_err *err)
{
    return tc_err_set(err, TC_INPUT, "%s:1: empty file, expected an <algo> element", label);
}

prog *prog_parse_xml(const char *text, size_t len, const char *label, tc_err *err)
{
    if (!label)
        label = "(input)";
    if (!text)
        len = 0;
    if (len == 0 || only_space(text, len)) {
        empty_file(label, err);
        return NULL;
    }
    if (len > (size_t)INT_MAX) {
        tc_err_set(err, TC_INPUT, "%s: too large for the XML reader (%zu bytes)", label, len);
        return NULL;
    }
    if (jsonin_utf16_error(text, len, label, err))
        return NULL;
    utf8_scan u = {1, 0, 0};
    xml_utf8_scan_piece(&u, (const unsigned char *)text, len, 1);
    if (u.bad) {
        xml_utf8_fail(&u, label, err);
        return NULL;
    }
    stream S;
    stream_begin(&S, label);
    stream_feed(&S, text, len);
    source src = {text, len, NULL};
    return stream_end(&S, &src, 1, err);
}

/* The line of the next byte to be fed: the scan of the runtimes' syntax
 * counts the lines of all it was fed. */
static long text_line(const stream *S)
{
    return S->tk.line > 0 ? S->tk.line : 1;
}

/* The file read a piece at a time, each piece checked and handed on, so
 * neither the whole text nor a tree is ever held.  Messages and their
 * order are prog_parse_xml's (an invalid byte anywhere wins over what the
 * parser found before it; the rest of the file is still read for one).
 * A CR not followed by LF (old Mac line ends) is read as LF, so lines count
 * as the user's editor counts them; a CR that ends a piece waits for the
 * next one.  Only a regular file under 2 GiB is read (util/paths.h: a
 * FIFO, device or directory is refused by name, never waited on). */
prog *prog_read_xml(const char *path, tc_err *err)
{
    /* a regular file only (a FIFO would block the open or the read
     * forever), under the reader's bound */
    int fd = path_open_input(path, "schedule", XML_MAX_FILE, err);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    enum { CHUNK = 1 << 16 };
    char *buf = xmalloc(CHUNK + 4);
    size_t carry = 0, total = 0, n;
    int text_seen = 0, fail = 0;
    utf8_scan u = {1, 0, 0};
    stream S;
    stream_begin(&S, path);
    while (!fail && (n = fread(buf + carry, 1, CHUNK, f)) > 0) {
        if (total + n >= (size_t)XML_MAX_FILE) {   /* grew since it was opened */
            fail = tc_err_set(err, TC_INPUT, "%s: file too large (the limit is 2 GiB)", path);
            break;
        }
        if (total == 0 && jsonin_utf16_error(buf, n, path, err)) {
            fail = TC_INPUT;
            break;
        }
        total += n;
        n += carry;
        if (!text_seen && !only_space(buf, n))
            text_seen = 1;
        size_t whole = buf[n - 1] == '\r' ? n - 1 : n;
        jsonin_lone_cr_to_lf(buf, whole);
        u.line = text_line(&S);
        size_t ok = xml_utf8_scan_piece(&u, (const unsigned char *)buf, whole, 0);
        if (u.bad) {
            fail = xml_utf8_fail(&u, path, err);
            break;
        }
        stream_feed(&S, buf, ok);
        carry = n - ok;
        memmove(buf, buf + ok, carry);
    }
    if (!fail && ferror(f))
        fail = tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
    if (!fail && !text_seen)
        fail = empty_file(path, err);
    if (!fail && carry == 1 && buf[0] == '\r') {
        buf[0] = '\n';
        stream_feed(&S, buf, 1);
    } else if (!fail && carry > 0) {
        u.line = text_line(&S);
        xml_utf8_scan_piece(&u, (const unsigned char *)buf, carry, 1);
        fail = xml_utf8_fail(&u, path, err);
    }
    free(buf);
    source src = {NULL, 0, f};
    prog *p = stream_end(&S, &src, !fail, err);
    fclose(f);
    if (p) {
        p->path = strdup(path);
        if (!p->path)
            tc_oom();
    }
    return p;
}
