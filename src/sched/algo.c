/* algo.c — building and freeing abstract algorithms (see algo.h). */
#include "algo.h"
#include "../util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

algo *algo_new(coll_kind coll, int nranks, int chunks_per_rank)
{
    algo *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->coll = coll;
    a->nranks = nranks;
    a->chunks_per_rank = chunks_per_rank;
    a->predicted_us = -1;
    return a;
}

void algo_free(algo *a)
{
    if (!a)
        return;
    free(a->sends);
    free(a);
}

algo_send *algo_add_send(algo *a, int origin, int index, int src, int dst, double t_send,
                         double t_arrive)
{
    a->sends = xgrow(a->sends, &a->cap, a->nsends + 1, sizeof *a->sends);
    algo_send *s = &a->sends[a->nsends++];
    memset(s, 0, sizeof *s);
    s->origin = origin;
    s->index = index;
    s->src = src;
    s->dst = dst;
    s->t_send = t_send;
    s->t_arrive = t_arrive;
    s->group = -1;
    return s;
}
