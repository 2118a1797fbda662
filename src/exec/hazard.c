/* hazard.c — the list of schedule problems (see hazard.h). */
#include "hazard.h"
#include "../util/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *kind_names[HZ_COUNT] = {
    "bounds", "limit", "connection", "pairing", "dependency",
    "uninitialized", "race", "deadlock", "device", "wrong_data", "load", "fusion",
};

const char *hazard_kind_name(hazard_kind k)
{
    return (k >= 0 && k < HZ_COUNT) ? kind_names[k] : "unknown";
}

void hazard_add(hazard_list *l, hazard_kind kind, int rank, int tb, int step,
                const char *fmt, ...)
{
    l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    hazard *h = &l->v[l->n++];
    h->kind = kind;
    h->rank = rank;
    h->tb = tb;
    h->step = step;
    h->warning = 0;
    h->line = 0;
    int off = 0;
    if (rank >= 0)
        off += snprintf(h->msg + off, sizeof h->msg - off, "rank %d ", rank);
    if (tb >= 0)
        off += snprintf(h->msg + off, sizeof h->msg - off, "tb %d ", tb);
    if (step >= 0)
        off += snprintf(h->msg + off, sizeof h->msg - off, "step %d ", step);
    if (off > 0) {
        h->msg[off - 1] = ':';
        h->msg[off++] = ' ';
        h->msg[off] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->msg + off, sizeof h->msg - off, fmt, ap);
    va_end(ap);
}

void hazard_list_move(hazard_list *to, hazard_list *from)
{
    for (int i = 0; i < from->n; i++) {
        to->v = xgrow(to->v, &to->cap, to->n + 1, sizeof *to->v);
        to->v[to->n++] = from->v[i];
    }
    hazard_list_free(from);
}

void hazard_list_free(hazard_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int hazard_errors(const hazard_list *l, int from)
{
    int n = 0;
    for (int i = from; i < l->n; i++)
        n += !l->v[i].warning;
    return n;
}

const hazard *hazard_verdict(const hazard_list *l)
{
    const hazard *first = NULL, *wrong = NULL;
    for (int i = 0; i < l->n; i++) {
        if (l->v[i].warning)
            continue;
        if (l->v[i].kind == HZ_LOAD)
            return &l->v[i];    /* refused: exit 2, whatever else is wrong */
        if (l->v[i].kind == HZ_WRONG_DATA && !wrong)
            wrong = &l->v[i];
        if (!first)
            first = &l->v[i];
    }
    return wrong ? wrong : first;
}
