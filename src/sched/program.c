/* program.c — building and freeing MSCCL schedules in memory (see program.h). */
#include "program.h"
#include "../util/mem.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow a dynamic array of `size`-byte elements to hold at least `need`. */

prog *prog_new(const char *name, coll_kind coll, int ngpus, int nchunksperloop)
{
    prog *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->name, sizeof p->name, "%s", name ? name : "");
    snprintf(p->proto, sizeof p->proto, "Simple");
    p->nchannels = 1;
    p->coll = coll;
    p->ngpus = ngpus;
    p->nchunksperloop = nchunksperloop;
    p->inplace = 0;
    p->outofplace = 1;
    p->predicted_us = -1;
    return p;
}

void prog_free(prog *p)
{
    if (!p)
        return;
    for (int g = 0; g < p->ngpu; g++) {
        for (int t = 0; t < p->gpus[g].ntbs; t++)
            free(p->gpus[g].tbs[t].steps);
        free(p->gpus[g].tbs);
    }
    free(p->gpus);
    topo_free(p->topo);
    free(p->path);
    free(p);
}

prog_gpu *prog_add_gpu(prog *p, int i_chunks, int o_chunks, int s_chunks)
{
    p->gpus = xgrow(p->gpus, &p->gpu_cap, p->ngpu + 1, sizeof *p->gpus);
    prog_gpu *g = &p->gpus[p->ngpu];
    memset(g, 0, sizeof *g);
    g->id = p->ngpu++;
    g->i_chunks = i_chunks;
    g->o_chunks = o_chunks;
    g->s_chunks = s_chunks;
    return g;
}

int prog_buf_len(const prog *p, int r, buf_kind b)
{
    assert(r >= 0 && r < p->ngpu);
    const prog_gpu *g = &p->gpus[r];
    int given = b == BUF_I ? g->i_chunks : b == BUF_O ? g->o_chunks : b == BUF_S ? g->s_chunks : -1;
    if (given != 0 || b == BUF_S)
        return given;
    int in, out;
    tc_err e;
    if (coll_shape(p->coll, p->ngpus, p->nchunksperloop, &in, &out, &e) != TC_OK)
        return 0;
    return b == BUF_I ? in : out;
}

prog_tb *prog_add_tb(prog_gpu *g, int send, int recv, int chan)
{
    g->tbs = xgrow(g->tbs, &g->cap, g->ntbs + 1, sizeof *g->tbs);
    prog_tb *tb = &g->tbs[g->ntbs];
    memset(tb, 0, sizeof *tb);
    tb->id = g->ntbs++;
    tb->send = send;
    tb->recv = recv;
    tb->chan = chan;
    return tb;
}

prog_step *prog_add_step(prog_tb *tb, step_type type, buf_kind srcbuf, int srcoff,
                         buf_kind dstbuf, int dstoff, int cnt, int depid, int deps)
{
    if (tb->nsteps == tb->cap)     /* the reader adds millions: grow only when full */
        tb->steps = xgrow(tb->steps, &tb->cap, tb->nsteps + 1, sizeof *tb->steps);
    prog_step *st = &tb->steps[tb->nsteps];
    memset(st, 0, sizeof *st);
    st->s = tb->nsteps++;
    st->type = type;
    st->srcbuf = srcbuf;
    st->srcoff = srcoff;
    st->dstbuf = dstbuf;
    st->dstoff = dstoff;
    st->cnt = cnt;
    st->depid = depid;
    st->deps = deps;
    return st;
}

int prog_line_of(const prog *p, int rank, int tb, int step)
{
    if (rank < 0 || rank >= p->ngpu)
        return p->line;
    const prog_gpu *g = &p->gpus[rank];
    if (tb < 0 || tb >= g->ntbs)
        return g->line > 0 ? g->line : p->line;
    const prog_tb *b = &g->tbs[tb];
    if (step >= 0 && step < b->nsteps && b->steps[step].line > 0)
        return b->steps[step].line;
    return b->line > 0 ? b->line : g->line;
}

void prog_set_topo(prog *p, topo *t)
{
    if (p->topo != t)
        topo_free(p->topo);
    p->topo = t;
}

static const char *type_names[ST_COUNT] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};

const char *step_type_name(step_type t)
{
    return (t >= 0 && t < ST_COUNT) ? type_names[t] : "?";
}

int step_type_parse(const char *s, step_type *out)
{
    for (int t = 0; t < ST_COUNT; t++)
        if (s[0] == type_names[t][0] && strcmp(s, type_names[t]) == 0) {
            *out = (step_type)t;
            return 0;
        }
    return -1;
}

const char *buf_name(buf_kind b)
{
    switch (b) {
    case BUF_I: return "i";
    case BUF_O: return "o";
    case BUF_S: return "s";
    default: return "";
    }
}

int buf_parse(const char *s, buf_kind *out)
{
    if (strcmp(s, "i") == 0) *out = BUF_I;
    else if (strcmp(s, "o") == 0) *out = BUF_O;
    else if (strcmp(s, "s") == 0) *out = BUF_S;
    else if (strcmp(s, "") == 0 || strcmp(s, "-1") == 0) *out = BUF_NONE;
    else return -1;
    return 0;
}


long long prog_steps_total(const prog *p)
{
    long long n = 0;
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            n += p->gpus[r].tbs[t].nsteps;
    return n;
}

int prog_mpp_only(const prog *p)
{
    return p->nvls_channels > 0 || p->allpairs_pieces > 0;
}

long long prog_parser_nodes(const prog *p, int *worst_rank)
{
    long long worst = 0;
    int wr = 0;
    for (int r = 0; r < p->ngpu; r++) {
        long long k = p->gpus[r].ntbs;
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            k += p->gpus[r].tbs[t].nsteps;
        if (k > worst) {
            worst = k;
            wr = r;
        }
    }
    if (worst_rank)
        *worst_rank = wr;
    return 1 + p->ngpu + worst;
}

/* One reference rewritten onto the in-place buffer of rank r (see
 * prog_inplace_copy). */
static void onto_one_buffer(buf_kind *b, int *off, int in_at_out, int out_at_in)
{
    if (in_at_out >= 0 && *b == BUF_I) {
        *b = BUF_O;
        *off += in_at_out;
    } else if (out_at_in >= 0 && *b == BUF_O) {
        *b = BUF_I;
        *off += out_at_in;
    }
}

/* A set of dependencies of one rank, at most one per tb (the latest step:
 * waiting for it waits for the tb's earlier steps too). */
typedef struct {
    int tb, step;
} dep_ref;

typedef struct {
    dep_ref *v;
    int n, cap;
} dep_set;

static void dep_add(dep_set *d, int tb, int step)
{
    for (int i = 0; i < d->n; i++)
        if (d->v[i].tb == tb) {
            if (step > d->v[i].step)
                d->v[i].step = step;
            return;
        }
    d->v = xgrow(d->v, &d->cap, d->n + 1, sizeof *d->v);
    d->v[d->n++] = (dep_ref){tb, step};
}

/* What waiting for step s of tb t of g amounts to once the runtimes drop
 * the nops, added to out.  dead[t][s]: a copy the in-place rewrite made a
 * nop.  Waiting for a step that does something is waiting for it; waiting
 * for a dead copy is waiting for what it stood for: the tb's last step
 * before it that does something, and the dependencies of the nops between
 * (the copy's own, and those of the nops that carry its extra ones). */
static void dep_resolve(const prog_gpu *g, char *const *dead, int t, int s, dep_set *out)
{
    if (!dead[t][s]) {
        dep_add(out, t, s);
        return;
    }
    for (int k = s; k >= 0; k--) {
        const prog_step *x = &g->tbs[t].steps[k];
        if (x->type != ST_NOP) {
            dep_add(out, t, k);
            return;
        }
        if (x->depid >= 0 && x->deps >= 0)
            dep_resolve(g, dead, x->depid, x->deps, out);
    }
}

/* Rank w (rewritten in place) into h, with every dependency on a dead copy
 * (see dep_resolve) replaced by what it stood for: none, one, or several
 * (one nop more per extra one, right before the step, as the lowering
 * writes them); steps renumbered accordingly and every step depended on
 * marked hasdep. */
static void emit_rank(const prog_gpu *w, char *const *dead, prog_gpu *h)
{
    dep_set **L = xcalloc((size_t)w->ntbs, sizeof *L);
    int **idx = xcalloc((size_t)w->ntbs, sizeof *idx);
    for (int t = 0; t < w->ntbs; t++) {
        const prog_tb *tb = &w->tbs[t];
        L[t] = xcalloc((size_t)tb->nsteps + 1, sizeof **L);
        idx[t] = xcalloc((size_t)tb->nsteps + 1, sizeof **idx);
        for (int s = 0, at = 0; s < tb->nsteps; s++) {
            const prog_step *x = &tb->steps[s];
            if (x->depid >= 0 && x->deps >= 0)
                dep_resolve(w, dead, x->depid, x->deps, &L[t][s]);
            at += L[t][s].n > 1 ? L[t][s].n : dead[t][s] && L[t][s].n == 0 ? 0 : 1;
            idx[t][s] = at - 1;
        }
    }
    for (int t = 0; t < w->ntbs; t++) {
        const prog_tb *tb = &w->tbs[t];
        prog_tb *u = prog_add_tb(h, tb->send, tb->recv, tb->chan);
        for (int s = 0; s < tb->nsteps; s++) {
            const prog_step *x = &tb->steps[s];
            const dep_set *d = &L[t][s];
            if (dead[t][s] && d->n == 0)
                continue;   /* a nop with no wait: the runtimes would not count it
                               and every later step of the tb would publish one
                               less than its number (exec/rtdep.h) */
            for (int i = 0; i + 1 < d->n; i++)
                prog_add_step(u, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, d->v[i].tb,
                              idx[d->v[i].tb][d->v[i].step]);
            int depid = d->n ? d->v[d->n - 1].tb : -1;
            int deps = d->n ? idx[depid][d->v[d->n - 1].step] : -1;
            prog_step *y = prog_add_step(u, x->type, x->srcbuf, x->srcoff, x->dstbuf,
                                         x->dstoff, x->cnt, depid, deps);
            y->hasdep = x->hasdep;
        }
    }
    for (int t = 0; t < w->ntbs; t++)
        for (int s = 0; s < w->tbs[t].nsteps; s++) {
            const dep_set *d = &L[t][s];
            for (int i = 0; i < d->n; i++)
                h->tbs[d->v[i].tb].steps[idx[d->v[i].tb][d->v[i].step]].hasdep = 1;
        }
    for (int t = 0; t < w->ntbs; t++) {
        for (int s = 0; s < w->tbs[t].nsteps; s++)
            free(L[t][s].v);
        free(L[t]);
        free(idx[t]);
    }
    free(L);
    free(idx);
}

prog *prog_inplace_copy(const prog *p)
{
    prog *q = prog_new(p->name, p->coll, p->ngpus, p->nchunksperloop);
    prog *w = prog_new(p->name, p->coll, p->ngpus, p->nchunksperloop);
    if (!q || !w) {
        prog_free(q);
        prog_free(w);
        return NULL;
    }
    snprintf(q->proto, sizeof q->proto, "%s", p->proto);
    q->nchannels = p->nchannels;
    q->inplace = 1;
    q->outofplace = 0;
    q->min_bytes = p->min_bytes;
    q->max_bytes = p->max_bytes;
    q->size_bytes = p->size_bytes;
    q->target = p->target;
    q->predicted_us = p->predicted_us;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        int ia, oa;
        coll_inplace_alias(p->coll, p->ngpus, p->nchunksperloop, r, &ia, &oa);
        if (ia == 0 && p->coll != COLL_ALLGATHER) {
            /* one buffer (AllReduce): msccl-tools keeps i and rewrites o */
            ia = -1;
            oa = 0;
        }
        /* the aliased buffer is not addressed any more: its count is 0 */
        int ic = ia >= 0 ? 0 : g->i_chunks, oc = oa >= 0 ? 0 : g->o_chunks;
        prog_gpu *v = prog_add_gpu(w, ic, oc, g->s_chunks);
        char **dead = xcalloc((size_t)g->ntbs + 1, sizeof *dead);
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            prog_tb *u = prog_add_tb(v, tb->send, tb->recv, tb->chan);
            dead[t] = xcalloc((size_t)tb->nsteps + 1, 1);
            for (int s = 0; s < tb->nsteps; s++) {
                prog_step x = tb->steps[s];
                onto_one_buffer(&x.srcbuf, &x.srcoff, ia, oa);
                onto_one_buffer(&x.dstbuf, &x.dstoff, ia, oa);
                prog_step *y;
                dead[t][s] = x.type == ST_CPY && x.srcbuf == x.dstbuf && x.srcoff == x.dstoff;
                if (dead[t][s])
                    y = prog_add_step(u, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, x.depid,
                                      x.deps);
                else
                    y = prog_add_step(u, x.type, x.srcbuf, x.srcoff, x.dstbuf, x.dstoff, x.cnt,
                                      x.depid, x.deps);
                y->hasdep = x.hasdep;
            }
        }
        emit_rank(&w->gpus[r], dead, prog_add_gpu(q, ic, oc, g->s_chunks));
        for (int t = 0; t < g->ntbs; t++)
            free(dead[t]);
        free(dead);
    }
    prog_free(w);
    return q;
}

int prog_sane(const prog *p)
{
    if (!p || p->ngpu != p->ngpus)
        return 0;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        if (g->id != r)
            return 0;
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            if (tb->id != t || tb->send < -1 || tb->send >= p->ngpus || tb->recv < -1 ||
                tb->recv >= p->ngpus || tb->chan < 0)
                return 0;
            for (int s = 0; s < tb->nsteps; s++) {
                const prog_step *st = &tb->steps[s];
                if (st->s != s || st->cnt < 0 || (st->depid < 0) != (st->deps < 0))
                    return 0;
                if (st->srcbuf != BUF_NONE && st->srcoff < 0)
                    return 0;
                if (st->dstbuf != BUF_NONE && st->dstoff < 0)
                    return 0;
                if ((step_sends(st->type) && tb->send < 0) ||
                    (step_receives(st->type) && tb->recv < 0))
                    return 0;
                if (st->depid < 0)
                    continue;
                if (st->depid >= g->ntbs || st->deps >= g->tbs[st->depid].nsteps ||
                    (st->depid == t && st->deps >= s) ||
                    !g->tbs[st->depid].steps[st->deps].hasdep)
                    return 0;
            }
        }
    }
    return 1;
}
