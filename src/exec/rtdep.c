/* rtdep.c — a schedule's dependencies as the MSCCL runtimes number them
 * (contract and sources in rtdep.h).
 *
 * One pass per tb follows the runtimes' loader (nops dropped, consecutive
 * re fused) and the kernel's counter; a second pass over the steps with
 * hasdep=1 gives, for every value a wait can name, the step that first
 * publishes it.  Linear in the steps, so it runs on the largest schedules
 * the executor takes. */
#include "rtdep.h"

#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

void rtdep_tb_of(const prog_tb *tb, rtdep_tb *d)
{
    int n = tb->nsteps;
    d->n = n;
    d->pos = xmalloc(((size_t)n + 1) * sizeof *d->pos);
    d->chain = xmalloc(((size_t)n + 1) * sizeof *d->chain);
    d->release = xmalloc(((size_t)n + 1) * sizeof *d->release);
    d->dropped = xcalloc((size_t)n + 1, sizeof *d->dropped);
    int counter = 0, pending = 0, reductions = 0;
    int open = -1;              /* first step of the re chain still open, -1 */
    int last_re = -1;           /* its latest re */
    for (int k = 0; k < n; k++) {
        const prog_step *st = &tb->steps[k];
        d->chain[k] = -1;
        if (st->type == ST_NOP) {
            d->pos[k] = -1;
            pending += st->depid >= 0;
            continue;
        }
        if (st->type == ST_RE && open >= 0 && st->depid < 0) {
            const prog_step *prev = &tb->steps[last_re];
            if (prev->dstbuf == st->dstbuf && prev->dstoff == st->dstoff &&
                prev->srcbuf == st->srcbuf)
                d->chain[k] = open;
        }
        if (d->chain[k] < 0) {
            /* a transmission of its own: the nops' dependencies and its own
             * advance the counter by their number less one */
            int deps = pending + (st->depid >= 0);
            if (deps > 0)
                counter += deps - 1;
            pending = 0;
            open = -1;
        }
        d->pos[k] = counter++;
        if (st->type == ST_RE) {
            reductions++;
            if (open < 0)
                open = k;
            last_re = k;
            if (st->hasdep == 1 || reductions == RTDEP_MAX_FUSION)
                open = -1;
        }
    }
    /* nops after the tb's last transmission: their dependencies are never
     * attached to anything */
    for (int k = n - 1; k >= 0 && tb->steps[k].type == ST_NOP; k--)
        d->dropped[k] = tb->steps[k].depid >= 0;
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (tb->steps[k].type == ST_NOP || tb->steps[k].hasdep != 1)
            continue;
        while (v <= d->pos[k] && v < n)
            d->release[v++] = k;
    }
    while (v < n)
        d->release[v++] = -1;
}

void rtdep_tb_free(rtdep_tb *d)
{
    free(d->pos);
    free(d->chain);
    free(d->release);
    free(d->dropped);
    memset(d, 0, sizeof *d);
}

int rtdep_release(const rtdep_tb *d, int s)
{
    if (s < 0 || s >= d->n)
        return -1;
    return d->release[s];
}

/* The wait of step k of tb t as the runtimes keep it: its deps rewritten,
 * or dropped (-1). */
static int resolved_deps(const prog_gpu *g, const rtdep_tb *D, int t, int k, int *drop)
{
    const prog_step *st = &g->tbs[t].steps[k];
    *drop = 0;
    if (st->depid < 0 || st->depid >= g->ntbs)
        return st->deps;
    if (D[t].dropped[k]) {
        *drop = 1;
        return -1;
    }
    int rel = rtdep_release(&D[st->depid], st->deps);
    return rel >= 0 ? rel : st->deps;
}

/* Waits of rank g that the runtimes read differently from the file. */
static long long rank_changes(const prog_gpu *g, const rtdep_tb *D)
{
    long long n = 0;
    for (int t = 0; t < g->ntbs; t++)
        for (int k = 0; k < g->tbs[t].nsteps; k++) {
            int drop;
            int s = resolved_deps(g, D, t, k, &drop);
            n += drop || s != g->tbs[t].steps[k].deps;
        }
    return n;
}

static rtdep_tb *rank_tbs(const prog_gpu *g)
{
    rtdep_tb *D = xcalloc((size_t)g->ntbs + 1, sizeof *D);
    for (int t = 0; t < g->ntbs; t++)
        rtdep_tb_of(&g->tbs[t], &D[t]);
    return D;
}

static void rank_tbs_free(rtdep_tb *D, int ntbs)
{
    for (int t = 0; t < ntbs; t++)
        rtdep_tb_free(&D[t]);
    free(D);
}

static prog *copy_header(const prog *p)
{
    prog *q = prog_new(p->name, p->coll, p->ngpus, p->nchunksperloop);
    if (!q)
        return NULL;
    prog_gpu *keep = q->gpus;
    int cap = q->gpu_cap;
    topo *t = q->topo;
    char *path = q->path;
    *q = *p;
    q->gpus = keep;
    q->gpu_cap = cap;
    q->ngpu = 0;
    q->topo = t;
    q->path = path;
    return q;
}

/* Rank r of p into q: its waits as resolved_deps() gives them when D is
 * given, else verbatim. */
static void copy_rank(prog *q, const prog_gpu *g, const rtdep_tb *D)
{
    prog_gpu *h = prog_add_gpu(q, g->i_chunks, g->o_chunks, g->s_chunks);
    h->id = g->id;
    h->line = g->line;
    for (int t = 0; t < g->ntbs; t++) {
        const prog_tb *tb = &g->tbs[t];
        prog_tb *u = prog_add_tb(h, tb->send, tb->recv, tb->chan);
        u->id = tb->id;
        u->line = tb->line;
        for (int k = 0; k < tb->nsteps; k++) {
            prog_step *y = prog_add_step(u, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, -1, -1);
            *y = tb->steps[k];
            int drop;
            if (D) {
                y->deps = resolved_deps(g, D, t, k, &drop);
                if (drop)
                    y->depid = -1;
            }
        }
    }
}

/* One pass over the ranks: the copy begins at the first rank whose waits
 * the runtimes read otherwise (the ranks before it go in verbatim). */
prog *rtdep_resolve(const prog *p, long long *changed)
{
    long long total = 0;
    prog *q = NULL;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        rtdep_tb *D = rank_tbs(g);
        long long n = rank_changes(g, D);
        total += n;
        if (n > 0 && !q && (q = copy_header(p)) != NULL)
            for (int e = 0; e < r; e++)
                copy_rank(q, &p->gpus[e], NULL);
        if (q)
            copy_rank(q, g, D);
        rank_tbs_free(D, g->ntbs);
    }
    if (changed)
        *changed = total;
    return q;
}
