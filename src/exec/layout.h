/* layout.h — where each (buffer, chunk) of a rank lives in memory.
 *
 * Out of place, a rank's i, o and s buffers are separate.  In place, the
 * runtime aliases them as the collective dictates (collective.h): AllReduce
 * and AllToAll use one buffer for i and o; AllGather's input is rank r's
 * slice of o; ReduceScatter's output is rank r's slice of i.  This module
 * maps (buffer, chunk) to a slot in one per-rank address space so that the
 * executor and the checks agree on what aliases what. */
#ifndef TC_LAYOUT_H
#define TC_LAYOUT_H

#include "../sched/program.h"

typedef struct {
    int nslots;             /* chunks in the rank's address space */
    int base[3];            /* slot of chunk 0 of i, o, s */
    int len[3];             /* chunks in i, o, s */
} layout;

/* Layout of rank r (its <gpu> element gives the buffer sizes). */
layout layout_of(const prog *p, int r, int inplace);

/* Slot of chunk `off` of buffer b, or -1 if outside the buffer (inline:
 * the executor asks for every step). */
static inline int layout_slot(const layout *l, buf_kind b, int off)
{
    if (b < BUF_I || b > BUF_S || off < 0 || off >= l->len[b])
        return -1;
    return l->base[b] + off;
}

#endif
