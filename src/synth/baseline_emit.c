/* baseline_emit.c — the building blocks every baseline family uses: new
 * threadblocks, steps with their dependencies (a nop for a second one), the
 * FIFO window that keeps a tb from running more than 8 sends ahead of its
 * receives, runs of contiguous chunks, local copies. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../util/tcassert.h"

/* ====================================================== building blocks */

int bl_tb_new(bld *b, int r, int send, int recv, int chan)
{
    return prog_add_tb(&b->p->gpus[r], send, recv, chan)->id;
}

/* Append a step to tb `tb` of rank r; `dep` on another tb becomes its
 * depid/deps (one on the same tb is implied by program order). */
sref bl_emit(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
                 int cnt, sref dep)
{
    int depid = -1, deps = -1;
    if (dep.tb >= 0 && dep.tb != tb) {
        depid = dep.tb;
        deps = dep.step;
    }
    prog_step *st = prog_add_step(&b->p->gpus[r].tbs[tb], ty, sb, so, db, dof, cnt, depid, deps);
    return (sref){tb, st->s};
}

/* A step waiting for the nd steps of deps (NODEP entries skipped): of
 * those on one tb only the latest counts (the first of equal ones), one on
 * tb itself is implied by program order, and each other tb but the last,
 * in the order of the deps kept, is carried by a nop.  One pass: a step's
 * deps name a few tbs. */
static sref emit_deps(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db,
                      int dof, int cnt, const sref *deps, int nd)
{
    sref u[MAX_CNT + 2];
    int at[MAX_CNT + 2], nu = 0;
    TC_ASSERT(nd <= MAX_CNT + 2);
    for (int i = 0; i < nd; i++) {
        sref d = deps[i];
        if (d.tb < 0 || d.tb == tb)
            continue;
        int j = 0;
        while (j < nu && u[j].tb != d.tb)
            j++;
        if (j == nu) {
            u[nu] = d, at[nu++] = i;
        } else if (d.step > u[j].step) {
            u[j] = d, at[j] = i;
        }
    }
    for (int k = 1; k < nu; k++)    /* in the order of the deps kept */
        for (int j = k; j > 0 && at[j - 1] > at[j]; j--) {
            sref t = u[j];
            int a = at[j];
            u[j] = u[j - 1], at[j] = at[j - 1];
            u[j - 1] = t, at[j - 1] = a;
        }
    for (int k = 0; k + 1 < nu; k++)
        prog_add_step(&b->p->gpus[r].tbs[tb], ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, u[k].tb,
                      u[k].step);
    return bl_emit(b, r, tb, ty, sb, so, db, dof, cnt, nu ? u[nu - 1] : NODEP);
}

/* A step with two dependencies: a nop carries the first. */
sref bl_emit2(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
                  int cnt, sref d1, sref d2)
{
    sref deps[2] = {d1, d2};
    return emit_deps(b, r, tb, ty, sb, so, db, dof, cnt, deps, 2);
}

/* The last step of a tb so far (NODEP if empty). */
sref bl_last_of(const bld *b, int r, int tb)
{
    const prog_tb *T = &b->p->gpus[r].tbs[tb];
    return T->nsteps ? (sref){tb, T->nsteps - 1} : NODEP;
}

/* Interleave a tb's ns sends and nr receives, sends at most FIFO_WINDOW
 * ahead: returns 0 (emit the next send), 1 (the next receive) or -1. */
int bl_window_next_w(int *si, int *ri, int ns, int nr, int window)
{
    if (*si < ns && (*si < *ri + window || *ri >= nr))
        return (*si)++, 0;
    if (*ri < nr)
        return (*ri)++, 1;
    return -1;
}

int bl_window_next(int *si, int *ri, int ns, int nr)
{
    return bl_window_next_w(si, ri, ns, nr, FIFO_WINDOW);
}

prog *bl_new_prog(bld *b, int C, int s_chunks, tc_err *err)
{
    int in, out;
    if (coll_shape(b->k, b->n, C, &in, &out, err) != TC_OK)
        return NULL;
    b->p = prog_new("", b->k, b->n, C);
    if (!b->p)
        tc_oom();
    for (int r = 0; r < b->n; r++)
        prog_add_gpu(b->p, in, out, s_chunks);
    return b->p;
}

/* Chunk offsets of channel c inside block q (KM chunks from q*KM), appended
 * to v; returns the new length. */
int bl_block_chunks(const bld *b, int q, int c, int base_shift, int *v, int len)
{
    for (int m = 0; m < b->M; m++)
        v[len++] = base_shift + q * b->KM + m * b->K + c;
    return len;
}

/* Group sorted offset pairs into runs contiguous on both sides, cnt <= 71
 * (and b->run_cap).  run_start[i], run_len[i]; returns the number of runs. */
int bl_make_runs(const bld *b, const int *src, const int *dst, int len, int *rs, int *rl)
{
    int nr = 0, cap = b->run_cap > 0 && b->run_cap < MAX_CNT ? b->run_cap : MAX_CNT;
    for (int i = 0; i < len;) {
        int j = i + 1;
        while (j < len && j - i < cap && src[j] == src[j - 1] + 1 && dst[j] == dst[j - 1] + 1)
            j++;
        rs[nr] = i;
        rl[nr] = j - i;
        nr++;
        i = j;
    }
    return nr;
}

/* A local copy of cnt chunks in steps of at most MAX_CNT, no dependency;
 * returns the last step. */
sref bl_emit_copy(bld *b, int r, int tb, buf_kind sb, int so, buf_kind db, int dof, int cnt)
{
    sref last = NODEP;
    for (int x = 0; x < cnt; x += MAX_CNT) {
        int c = cnt - x < MAX_CNT ? cnt - x : MAX_CNT;
        last = bl_emit(b, r, tb, ST_CPY, sb, so + x, db, dof + x, c, NODEP);
    }
    return last;
}

/* The window counted in chunks: the next send while the chunks sent stay
 * within `window` of those received, else the next receive; as
 * bl_window_next_w, over runs of sl[]/rl[] chunks.  Once a chunk fills the
 * runtimes' tile each chunk of a step is an operation of its own, one FIFO
 * slot (sched/tile.h), and both ends of an exchange send first: a window
 * of steps lets 8 steps of 16 chunks run 128 operations ahead, which
 * deadlocks there at every size from that one up. */
static int window_next_chunks(int *si, int *ri, const int *sl, int ns, const int *rl, int nr,
                              long *cs, long *cr, int window)
{
    if (*si < ns && (*ri >= nr || *cs + sl[*si] <= *cr + window))
        return *cs += sl[*si], (*si)++, 0;
    if (*ri < nr)
        return *cr += rl[*ri], (*ri)++, 1;
    return -1;
}

/* One exchange on tb, in runs (declared in baseline_int.h). */
void bl_emit_round(bld *b, int r, int tb, const bl_round *rs, sref d1, sref d2)
{
    bl_emit_round_rdep(b, r, tb, rs, d1, d2, NODEP);
}

void bl_emit_round_rdep(bld *b, int r, int tb, const bl_round *rs, sref d1, sref d2, sref dr)
{
    int *srs = xmalloc((size_t)(rs->ns + 1) * sizeof *srs), *srl = xmalloc((size_t)(rs->ns + 1) * sizeof *srl);
    int *rrs = xmalloc((size_t)(rs->nr + 1) * sizeof *rrs), *rrl = xmalloc((size_t)(rs->nr + 1) * sizeof *rrl);
    int nsr = bl_make_runs(b, rs->soff, rs->soff, rs->ns, srs, srl);
    const int *lo = rs->rty == ST_R ? rs->roff : rs->loff;
    int nrr = bl_make_runs(b, lo, rs->roff, rs->nr, rrs, rrl);
    sref *deps = xmalloc((size_t)(MAX_CNT + 2) * sizeof *deps);
    int si = 0, ri = 0, w;
    int win = rs->window > 0 ? rs->window : FIFO_WINDOW;
    long cs = 0, cr = 0;
    TC_ASSERT(!rs->chunk_window || (b->run_cap > 0 && b->run_cap <= win));
    while ((w = rs->chunk_window ? window_next_chunks(&si, &ri, srl, nsr, rrl, nrr, &cs, &cr, win)
                                 : bl_window_next_w(&si, &ri, nsr, nrr, win)) >= 0) {
        if (w == 0) {
            int x = srs[si - 1], len = srl[si - 1], nd = 0;
            if (si == 1) {
                deps[nd++] = d1;
                deps[nd++] = d2;
            }
            for (int i = 0; rs->sdep && i < len; i++)
                deps[nd++] = rs->sdep[rs->soff[x + i]];
            emit_deps(b, r, tb, ST_S, rs->sbuf, rs->soff[x], rs->sbuf, rs->soff[x], len, deps, nd);
        } else {
            int x = rrs[ri - 1], len = rrl[ri - 1], nd = 0;
            sref got;
            if (ri == 1)
                deps[nd++] = dr;
            for (int i = 0; rs->ldep && i < len; i++)
                deps[nd++] = rs->ldep[rs->loff[x + i]];
            if (rs->rty == ST_R)
                got = emit_deps(b, r, tb, ST_R, rs->rbuf, rs->roff[x], rs->rbuf, rs->roff[x], len,
                                deps, nd);
            else
                got = emit_deps(b, r, tb, rs->rty, rs->lbuf, rs->loff[x], rs->rbuf, rs->roff[x],
                                len, deps, nd);
            for (int i = 0; rs->rset && i < len; i++)
                rs->rset[rs->roff[x + i]] = got;
        }
    }
    free(deps);
    free(srs);
    free(srl);
    free(rrs);
    free(rrl);
}
