/* lower_emit.c — lowering pass 6: write the program.
 *
 * The layout is for one instance; with k instances every rank gets each
 * of its tbs k times, instance j on channels j*B .. j*B+B-1 with every
 * buffer offset moved into instance j's share of the chunk (lower.h,
 * Instances).  Tb ids per rank are instance-major in natural order,
 * unless more than 128 tbs would push a depended-on tb past depid 127:
 * then depended-on tbs come first.  Each step's dependencies become its
 * depid/deps and one nop per extra dependency right before it.  See
 * lower_int.h for what the pass reads. */
#include "lower_int.h"

#include <stdio.h>
#include <stdlib.h>
#include "../util/mem.h"

static int map_off(const lin *in, const int *scount, loc l, int rank, int inst)
{
    if (in->k == 1 || l.buf == BUF_NONE || l.off < 0)
        return l.off;
    if (l.buf == BUF_S)
        return inst * scount[rank] + l.off;
    int P = in->sh.blk;
    return (l.off / P) * P * in->k + inst * P + l.off % P;
}

typedef struct {
    int depended, inst, natural;
} final_key;

static int cmp_final_key(const void *pa, const void *pb)
{
    const final_key *a = pa, *b = pb;
    if (a->depended != b->depended) return a->depended > b->depended ? -1 : 1;
    if (a->inst != b->inst) return a->inst < b->inst ? -1 : 1;
    return (a->natural > b->natural) - (a->natural < b->natural);
}

/* Final tb ids of rank r: instance-major in natural order, or, when more
 * than 128 tbs would put a depended-on tb beyond depid 127, depended-on
 * tbs first.  fid[inst * T + natural] = id; order[id] = inst * T + natural. */
static void final_ids(const lin *in, const llayout *lay, int r, int *fid, int *order)
{
    int T = lay->rank_tb_first[r + 1] - lay->rank_tb_first[r], total = T * in->k;
    final_key *fk = xcalloc((size_t)total + 1, sizeof *fk);
    int sort_dep = total > MAX_DEPID + 1;
    for (int j = 0; j < in->k; j++)
        for (int t = 0; t < T; t++)
            fk[j * T + t] = (final_key){
                sort_dep ? lay->tbs[lay->rank_tb_first[r] + t].depended : 0, j, t};
    qsort(fk, (size_t)total, sizeof *fk, cmp_final_key);
    for (int i = 0; i < total; i++) {
        fid[fk[i].inst * T + fk[i].natural] = i;
        order[i] = fk[i].inst * T + fk[i].natural;
    }
    free(fk);
}

static int cmp_int(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

static int emit_tb(const lin *in, const lops *O, const llayout *lay, prog_tb *tb, const btb *b,
                   int inst, const int *fid, tc_err *err)
{
    int T = lay->rank_tb_first[b->rank + 1] - lay->rank_tb_first[b->rank];
    int r = b->rank;
    int *dv = NULL, cap = 0;
    for (int q = b->first; q < b->first + b->n; q++) {
        const op *o = &O->ops[lay->tb_ops[q]];
        if (o->absorbed)
            continue;
        if (o->ndep > cap) {
            cap = o->ndep;
            dv = xrealloc(dv, (size_t)cap * 2 * sizeof *dv);
        }
        for (int d = 0; d < o->ndep; d++) {
            const op *t = &O->ops[lay->deps[o->dep_first + d]];
            int id = fid[inst * T + lay->tbs[t->tb].natural];
            if (id > MAX_DEPID) {
                free(dv);
                return tc_err_set(err, TC_INPUT,
                                  "rank %d: a dependency on tb %d exceeds depid %d (the runtimes "
                                  "store it as int8); %d tbs on the rank", r, id, MAX_DEPID,
                                  T * in->k);
            }
            dv[2 * d] = id;
            dv[2 * d + 1] = t->step;
        }
        if (o->ndep > 1)
            qsort(dv, (size_t)o->ndep, 2 * sizeof *dv, cmp_int);
        for (int d = 0; d + 1 < o->ndep; d++)
            prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, dv[2 * d], dv[2 * d + 1]);
        int depid = o->ndep ? dv[2 * (o->ndep - 1)] : -1;
        int deps = o->ndep ? dv[2 * (o->ndep - 1) + 1] : -1;
        loc src = o->type == ST_RCS ? o->dst : o->src;
        int src_rank = o->type == ST_RCS ? o->dst_rank : o->src_rank;
        prog_step *st = prog_add_step(tb, o->type, (buf_kind)src.buf,
                                      map_off(in, O->scount, src, src_rank, inst),
                                      (buf_kind)o->dst.buf,
                                      map_off(in, O->scount, o->dst, o->dst_rank, inst), o->cnt,
                                      depid, deps);
        st->hasdep = o->hasdep;
    }
    free(dv);
    return TC_OK;
}

prog *lower_emit(const lin *in, const lxfers *xf, const lops *O, const llayout *lay, tc_err *err)
{
    const shape *sh = &in->sh;
    const lower_opts *o = in->o;
    char name[256];
    if (o->name)
        snprintf(name, sizeof name, "%s", o->name);
    else
        snprintf(name, sizeof name, "taccl-%s-%d", coll_name(sh->coll), sh->n);
    prog *p = prog_new(name, sh->coll, sh->n, sh->C * in->k);
    if (!p)
        tc_oom();
    if (o->proto)
        snprintf(p->proto, sizeof p->proto, "%s", o->proto);
    int base = xf->nblocks * xf->ncolors * lay->nslices;
    p->nchannels = base * in->k;
    p->size_bytes = o->size_bytes;
    p->predicted_us = in->a->predicted_us;
    int maxT = 1;
    for (int r = 0; r < sh->n; r++) {
        int T = lay->rank_tb_first[r + 1] - lay->rank_tb_first[r];
        if (T > maxT)
            maxT = T;
    }
    int *fid = xcalloc((size_t)maxT * in->k + 1, sizeof *fid);
    int *order = xcalloc((size_t)maxT * in->k + 1, sizeof *order);
    for (int r = 0; r < sh->n; r++) {
        prog_gpu *g = prog_add_gpu(p, sh->in * in->k, sh->out * in->k, O->scount[r] * in->k);
        int T = lay->rank_tb_first[r + 1] - lay->rank_tb_first[r];
        final_ids(in, lay, r, fid, order);
        for (int i = 0; i < T * in->k; i++) {
            int inst = order[i] / (T ? T : 1), nat = order[i] % (T ? T : 1);
            const btb *b = &lay->tbs[lay->rank_tb_first[r] + nat];
            prog_tb *tb = prog_add_tb(g, b->send, b->recv, inst * base + b->chan);
            if (emit_tb(in, O, lay, tb, b, inst, fid, err) != TC_OK) {
                free(fid);
                free(order);
                prog_free(p);
                return NULL;
            }
        }
    }
    free(fid);
    free(order);
    return p;
}

