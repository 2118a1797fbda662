/* topo_json.c — a topology written back as JSON (topo_to_json in topo.h).
 *
 * The writer lives apart from the loader in topo.c: it walks the loaded
 * struct and the provenance kept beside it (topo_int.h) and prints node
 * 0's links, switches and NICs with their sources and notes, so that a
 * schedule can carry its topology and be run with no other file.  Reading
 * the output again gives an equal struct. */
#include "topo_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "runtime.h"

/* ---------------------------------------------------------- string buffer */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (!b->s || b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + n + 1 > cap)
            cap *= 2;
        b->s = xrealloc(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        sb_putn(b, tmp, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_putn(b, big, (size_t)n);
    free(big);
}

/* The shortest decimal text that reads back as exactly v. */
static void sb_num(sbuf *b, double v)
{
    char tmp[64];
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(tmp, sizeof tmp, "%.0f", v);
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, v);
            if (strtod(tmp, NULL) == v)
                break;
        }
    }
    sb_puts(b, tmp);
}

/* A JSON string literal. */
static void sb_jstr(sbuf *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                sb_puts(b, esc);
            } else {
                sb_putn(b, (const char *)p, 1);
            }
        }
    }
    sb_putn(b, "\"", 1);
}

/* ---------------------------------------------------------- topo_to_json */

static const char *const FALLBACK_SOURCE =
    "assumed: not recorded (topology built in memory)";

static void put_source_notes(sbuf *b, const char *src, const char *notes)
{
    if (src) {
        sb_puts(b, ", \"source\": ");
        sb_jstr(b, src);
    }
    if (notes) {
        sb_puts(b, ", \"notes\": ");
        sb_puts(b, notes);
    }
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static const char *elem_str(const struct topo_priv *pv, const int *arr, int n,
                            int i)
{
    return (pv && arr && i < n) ? topo_pool_get(pv, arr[i]) : NULL;
}

/* End a links entry whose pairs share l's figures, source and notes. */
static void close_links(sbuf *b, const topo_link *l, const char *src, const char *notes)
{
    sb_puts(b, "],\n     \"alpha_us\": ");
    sb_num(b, l->alpha_us);
    sb_puts(b, ", \"bandwidth_gbps\": ");
    sb_num(b, l->bw_gbps);
    sb_printf(b, ", \"multiplicity\": %d, \"bidirectional\": false", l->mult);
    put_source_notes(b, src, notes);
    sb_puts(b, "}");
}

static void put_links(sbuf *b, const topo *t)
{
    const struct topo_priv *pv = t->priv;
    int rpn = t->ranks_per_node, n0 = pv ? pv->nlinks0 : 0;
    int first = 1, open = 0;
    const topo_link *prev = NULL;
    const char *psrc = NULL, *pnotes = NULL;
    sb_puts(b, "  \"links\": [");
    for (int i = 0; i < t->nlinks; i++) {
        const topo_link *l = &t->links[i];
        if (l->src < 0 || l->src >= rpn || l->dst < 0 || l->dst >= rpn)
            continue;
        const char *src = elem_str(pv, pv ? pv->link_source : NULL, n0, i);
        const char *notes = elem_str(pv, pv ? pv->link_notes : NULL, n0, i);
        if (!src)
            src = FALLBACK_SOURCE;
        int same = prev && prev->alpha_us == l->alpha_us &&
                   prev->bw_gbps == l->bw_gbps && prev->mult == l->mult &&
                   same_text(psrc, src) && same_text(pnotes, notes);
        if (!same) {
            if (open)
                close_links(b, prev, psrc, pnotes);
            sb_puts(b, first ? "\n    {\"pairs\": [" : ",\n    {\"pairs\": [");
            first = 0;
            open = 1;
        } else {
            sb_puts(b, ", ");
        }
        sb_printf(b, "[%d, %d]", l->src, l->dst);
        prev = l;
        psrc = src;
        pnotes = notes;
    }
    if (open) {
        close_links(b, prev, psrc, pnotes);
        sb_puts(b, "\n  ");
    }
    sb_puts(b, "]");
}

/* "reductions": [...], "dtypes": [...] of a reducing switch or network. */
static void put_reduces(sbuf *b, unsigned redops, unsigned dtypes)
{
    const char *sep = "";
    sb_puts(b, "\"reductions\": [");
    for (int i = 0; i < RED_COUNT; i++)
        if (redops & (1u << i)) {
            sb_printf(b, "%s\"%s\"", sep, runtime_redop_name((rt_redop)i));
            sep = ", ";
        }
    sep = "";
    sb_puts(b, "], \"dtypes\": [");
    for (int i = 0; i < DT_COUNT; i++)
        if (dtypes & (1u << i)) {
            sb_printf(b, "%s\"%s\"", sep, runtime_dtype_name((rt_dtype)i));
            sep = ", ";
        }
    sb_puts(b, "]");
}

/* A switch's "nvls" object, inside the switch's braces. */
static void put_nvls(sbuf *b, const topo_nvls *nv, const char *src, const char *notes)
{
    sb_puts(b, ",\n     \"nvls\": {\"alpha_us\": ");
    sb_num(b, nv->alpha_us);
    sb_puts(b, ", \"bandwidth_gbps\": ");
    sb_num(b, nv->bw_gbps);
    sb_puts(b, ", ");
    put_reduces(b, nv->redops, nv->dtypes);
    put_source_notes(b, src ? src : FALLBACK_SOURCE, notes);
    sb_puts(b, "}");
}

/* The top-level "collnet" object, on its own line with its comma. */
static void put_collnet(sbuf *b, const topo *t)
{
    const struct topo_priv *pv = t->priv;
    const topo_collnet *cn = &t->collnet;
    sb_puts(b, "  \"collnet\": {");
    put_reduces(b, cn->redops, cn->dtypes);
    sb_printf(b, ", \"allgather\": %s, \"reducescatter\": %s",
              cn->allgather ? "true" : "false", cn->reducescatter ? "true" : "false");
    const char *src = topo_pool_get(pv, pv ? pv->collnet_source : -1);
    put_source_notes(b, src ? src : FALLBACK_SOURCE,
                     topo_pool_get(pv, pv ? pv->collnet_notes : -1));
    sb_puts(b, "},\n");
}

static void put_group(sbuf *b, int first, const int *ranks, int n, int rpn,
                      double alpha, double bw, const char *src,
                      const char *notes)
{
    sb_puts(b, first ? "\n    {\"ranks\": [" : ",\n    {\"ranks\": [");
    for (int i = 0; i < n; i++)
        sb_printf(b, i ? ", %d" : "%d", ranks[i] % rpn);
    sb_puts(b, "], \"alpha_us\": ");
    sb_num(b, alpha);
    sb_puts(b, ", \"bandwidth_gbps\": ");
    sb_num(b, bw);
    put_source_notes(b, src ? src : FALLBACK_SOURCE, notes);
}

static void put_switches(sbuf *b, const topo *t)
{
    const struct topo_priv *pv = t->priv;
    int rpn = t->ranks_per_node, n0 = pv ? pv->nswitches0 : 0, first = 1;
    sb_puts(b, "  \"switches\": [");
    for (int j = 0; j < t->nswitches; j++) {
        const topo_switch *s = &t->switches[j];
        if (s->nranks < 1 || s->ranks[0] < 0 || s->ranks[0] >= rpn)
            continue;
        put_group(b, first, s->ranks, s->nranks, rpn, s->alpha_us, s->bw_gbps,
                  elem_str(pv, pv ? pv->switch_source : NULL, n0, j),
                  elem_str(pv, pv ? pv->switch_notes : NULL, n0, j));
        if (s->nvls.on)
            put_nvls(b, &s->nvls, elem_str(pv, pv ? pv->nvls_source : NULL, n0, j),
                     elem_str(pv, pv ? pv->nvls_notes : NULL, n0, j));
        sb_puts(b, "}");
        first = 0;
    }
    sb_puts(b, first ? "]" : "\n  ]");
}

static void put_nics(sbuf *b, const topo *t)
{
    const struct topo_priv *pv = t->priv;
    int rpn = t->ranks_per_node, n0 = pv ? pv->nnics0 : 0, first = 1;
    sb_puts(b, "  \"nics\": [");
    for (int j = 0; j < t->nnics; j++) {
        const topo_nic *s = &t->nics[j];
        if (s->node != 0)
            continue;
        put_group(b, first, s->ranks, s->nranks, rpn, s->alpha_us, s->bw_gbps,
                  elem_str(pv, pv ? pv->nic_source : NULL, n0, j),
                  elem_str(pv, pv ? pv->nic_notes : NULL, n0, j));
        sb_puts(b, "}");
        first = 0;
    }
    sb_puts(b, first ? "]" : "\n  ]");
}

/* The JSON of t, with `nnodes` copies of its node. */
static char *to_json(const topo *t, int nnodes)
{
    if (!t || t->ranks_per_node < 1)
        return NULL;
    const struct topo_priv *pv = t->priv;
    sbuf b = {0};
    sb_puts(&b, "{\n  \"name\": ");
    sb_jstr(&b, t->name && t->name[0] ? t->name : "unnamed");
    const char *desc = topo_pool_get(pv, pv ? pv->description : -1);
    const char *notes = topo_pool_get(pv, pv ? pv->notes : -1);
    if (desc) {
        sb_puts(&b, ",\n  \"description\": ");
        sb_jstr(&b, desc);
    }
    if (notes) {
        sb_puts(&b, ",\n  \"notes\": ");
        sb_puts(&b, notes);
    }
    if (t->is_default)
        sb_puts(&b, ",\n  \"is_default\": true");
    sb_printf(&b, ",\n  \"nodes\": %d,\n  \"ranks_per_node\": %d,\n",
              nnodes, t->ranks_per_node);
    if (t->alpha_delay)
        sb_puts(&b, "  \"alpha_mode\": \"delay\",\n");
    if (t->rt_latency != TOPO_RTLAT_NONE)
        sb_printf(&b, "  \"runtime_latency\": \"%s\",\n",
                  t->rt_latency == TOPO_RTLAT_RCCL ? "rccl" : "nccl");
    if (t->arb_reserve)
        sb_puts(&b, "  \"arbitration\": \"reserve\",\n");
    if (t->rails)
        sb_puts(&b, "  \"fabric\": \"rails\",\n");
    if (t->collnet.on)
        put_collnet(&b, t);
    const char *dsrc = topo_pool_get(pv, pv ? pv->device_source : -1);
    const char *dnotes = topo_pool_get(pv, pv ? pv->device_notes : -1);
    if (t->kind == TOPO_CHIP) {
        sb_printf(&b, "  \"device\": {\"kind\": \"chip\", \"chips_per_node\": %d, "
                  "\"clusters_per_chip\": %d, \"dma_bytes\": %d",
                  t->chips_per_node, t->clusters_per_chip, t->dma_bytes);
        put_source_notes(&b, dsrc ? dsrc : FALLBACK_SOURCE, dnotes);
    } else {
        sb_puts(&b, "  \"device\": {\"kind\": \"gpu\"");
        if (t->arch > TOPO_ARCH_UNKNOWN && t->arch <= TOPO_ARCH_BLACKWELL)
            sb_printf(&b, ", \"arch\": \"%s\"", topo_arch_name(t->arch));
        put_source_notes(&b, dsrc, dnotes);
    }
    sb_puts(&b, "},\n  \"local\": {\"copy_gbps\": ");
    sb_num(&b, t->copy_gbps);
    sb_puts(&b, ", \"reduce_gbps\": ");
    sb_num(&b, t->reduce_gbps);
    const char *lsrc = topo_pool_get(pv, pv ? pv->local_source : -1);
    put_source_notes(&b, lsrc ? lsrc : FALLBACK_SOURCE,
                     topo_pool_get(pv, pv ? pv->local_notes : -1));
    sb_puts(&b, "},\n");
    put_links(&b, t);
    sb_puts(&b, ",\n");
    put_switches(&b, t);
    sb_puts(&b, ",\n");
    put_nics(&b, t);
    sb_puts(&b, "\n}\n");
    return b.s;
}


char *topo_to_json(const topo *t)
{
    return t ? to_json(t, t->nnodes) : NULL;
}
