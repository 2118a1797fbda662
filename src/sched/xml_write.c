/* xml_write.c — writing a prog as an MSCCL XML schedule (see xml.h).
 *
 * Writing emits exactly what the runtimes' own tokenizer accepts: no prolog,
 * one element per line, two-space indentation, double quotes, attributes in
 * schema order, every step attribute present, values of at most 255
 * bytes.  prog_write_xml() replaces the target atomically: the text
 * goes to a temporary file beside it, is synced and renamed over it, so a
 * reader never sees half a schedule and a failed write leaves the old file.
 * Kept apart from the reader: the two share only the text helpers in xml.c. */
#include "xml_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/file.h"
#include "../util/mem.h"

/* Escaped length of one <part> of the embedded topology. */
enum { PART_CHARS = 200 };

/* ------------------------------------------------------------------ */
/* Writer                                                              */

/* Shortest "%.Ng" that reads back as exactly v (deterministic). */
static void format_real(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

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
        size_t k = xml_utf8_seq(s + i, n - i);
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
            xml_sb_puts(b, e);
        else
            xml_sb_put(b, v + i, 1);
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
                          "%s: %zu bytes once escaped; the MSCCL runtimes take at most %d",
                          what, esc, RT_MAX_VALUE);
    xml_sb_printf(b, " %s=\"", key);
    sb_escaped(b, v, n);
    xml_sb_puts(b, "\"");
    return TC_OK;
}

char *xml_fit_value(char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t n = strlen(name), i = 0;
    while (i < n) {
        size_t k = xml_utf8_seq(s + i, n - i);
        if (k == 0 || i + k > RT_MAX_VALUE)
            break;      /* a character already cut (or not UTF-8), or past 255 bytes */
        if (escape_of(s[i]))
            name[i] = '_';
        i += k;
    }
    name[i] = '\0';
    return name;
}

static int valid_proto(const char *s)
{
    return strcmp(s, "Simple") == 0 || strcmp(s, "LL") == 0 || strcmp(s, "LL128") == 0;
}

static void put_taccl(sbuf *b, const prog *p)
{
    xml_sb_puts(b, "  <taccl");
    if (p->size_bytes > 0)
        xml_sb_printf(b, " size_bytes=\"%lld\"", p->size_bytes);
    if (p->predicted_us >= 0 && isfinite(p->predicted_us)) {
        char num[40];
        format_real(num, sizeof num, p->predicted_us);
        xml_sb_printf(b, " predicted_us=\"%s\"", num);
    }
    if (runtime_get(p->target)->in_file)
        xml_sb_printf(b, " target=\"%s\"", runtime_name(p->target));
    xml_sb_puts(b, " generator=\"taccl\"/>\n");
}

/* The topology as JSON cut into <part>s of at most PART_CHARS bytes once
 * escaped, never inside a UTF-8 sequence. */
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
            size_t k = xml_utf8_seq((const unsigned char *)json + i, n - i);
            const char *e = escape_of((unsigned char)json[i]);
            size_t w = e ? strlen(e) : k;
            if (esc + w > PART_CHARS)
                break;
            esc += w;
            i += k;
        }
        xml_sb_puts(&parts, "    <part v=\"");
        sb_escaped(&parts, json + start, i - start);
        xml_sb_puts(&parts, "\"/>\n");
        nparts++;
    }
    free(json);
    xml_sb_printf(b, "  <topology format=\"%s\" parts=\"%d\"", TOPO_FORMAT, nparts);
    if (nparts == 0) {
        xml_sb_puts(b, "/>\n");
    } else {
        xml_sb_puts(b, ">\n");
        xml_sb_put(b, parts.s, parts.len);
        xml_sb_puts(b, "  </topology>\n");
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
    xml_sb_printf(b,
              "      <step s=\"%d\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%d\" dstbuf=\"%s\" "
              "dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
              st->s, step_type_name(st->type), sb, st->srcoff, db, st->dstoff, st->cnt, st->depid,
              st->deps, st->hasdep);
    return TC_OK;
}

static int put_gpu(sbuf *b, const prog_gpu *g, int gi, tc_err *err)
{
    xml_sb_printf(b, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\"", g->id,
              g->i_chunks, g->o_chunks, g->s_chunks);
    if (g->ntbs == 0) {
        xml_sb_puts(b, "/>\n");
        return TC_OK;
    }
    xml_sb_puts(b, ">\n");
    for (int t = 0; t < g->ntbs; t++) {
        const prog_tb *tb = &g->tbs[t];
        xml_sb_printf(b, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\"", tb->id, tb->send,
                  tb->recv, tb->chan);
        if (tb->nsteps == 0) {
            xml_sb_puts(b, "/>\n");
            continue;
        }
        xml_sb_puts(b, ">\n");
        for (int k = 0; k < tb->nsteps; k++)
            if (put_step(b, &tb->steps[k], gi, t, k, err) != TC_OK)
                return TC_INPUT;
        xml_sb_puts(b, "    </tb>\n");
    }
    xml_sb_puts(b, "  </gpu>\n");
    return TC_OK;
}

static int put_program(sbuf *b, const prog *p, const xml_write_opts *o, tc_err *err)
{
    if (!valid_proto(p->proto))
        return tc_err_set(err, TC_INPUT, "<algo> attribute proto: \"%s\" is not Simple, LL or LL128",
                          p->proto);
    if (p->coll < 0 || p->coll >= COLL_COUNT)
        return tc_err_set(err, TC_INPUT, "<algo> attribute coll: invalid collective %d", (int)p->coll);
    xml_sb_puts(b, "<algo");
    if (put_text_attr(b, "algo", "name", p->name, err) != TC_OK)
        return TC_INPUT;
    xml_sb_printf(b,
              " proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"%s\" "
              "inplace=\"%d\" outofplace=\"%d\" minBytes=\"%lld\" maxBytes=\"%lld\"",
              p->proto, p->nchannels, p->nchunksperloop, p->ngpus,
              runtime_coll_xml(o->runtime, p->coll), p->inplace, p->outofplace, p->min_bytes,
              p->max_bytes);
    int with_taccl = p->size_bytes > 0 || (p->predicted_us >= 0 && isfinite(p->predicted_us)) ||
                     runtime_get(p->target)->in_file;
    int with_topo = o->embed_topology && p->topo;
    if (!with_taccl && !with_topo && p->ngpu == 0) {
        xml_sb_puts(b, "/>\n");
        return TC_OK;
    }
    xml_sb_puts(b, ">\n");
    if (with_taccl)
        put_taccl(b, p);
    if (with_topo && put_topology(b, p->topo, err) != TC_OK)
        return TC_INPUT;
    for (int g = 0; g < p->ngpu; g++)
        if (put_gpu(b, &p->gpus[g], g, err) != TC_OK)
            return TC_INPUT;
    xml_sb_puts(b, "</algo>\n");
    return TC_OK;
}

char *prog_to_xml(const prog *p, const xml_write_opts *o, tc_err *err)
{
    xml_write_opts none = {.runtime = RT_ANY, .embed_topology = 0};
    if (!o)
        o = &none;
    if (!p) {
        tc_err_set(err, TC_INPUT, "no program to write");
        return NULL;
    }
    if (p->nvls_channels > 0) {
        tc_err_set(err, TC_INPUT, "%s is NCCL's NVLS (the switch reduces and multicasts), "
                   "which MSCCL XML cannot express: write it with --target mscclpp", p->name);
        return NULL;
    }
    if (p->allpairs_pieces > 0) {
        tc_err_set(err, TC_INPUT, "%s sums several buffers in one reduce, which MSCCL XML "
                   "cannot express: write it with --target mscclpp", p->name);
        return NULL;
    }
    sbuf b = {0};
    if (put_program(&b, p, o, err) != TC_OK) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int prog_write_xml(const prog *p, const char *path, const xml_write_opts *o, tc_err *err)
{
    char *text = prog_to_xml(p, o, err);
    if (!text)
        return TC_INPUT;
    int rc = file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}
