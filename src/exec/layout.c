/* layout.c — per-rank chunk address space with in-place aliasing (see .h). */
#include "layout.h"

#include <assert.h>

layout layout_of(const prog *p, int r, int inplace)
{
    assert(r >= 0 && r < p->ngpu);
    layout l = {0};
    const prog_gpu *g = &p->gpus[r];
    int ni = prog_buf_len(p, r, BUF_I), no = prog_buf_len(p, r, BUF_O);
    l.len[BUF_I] = ni;
    l.len[BUF_O] = no;
    l.len[BUF_S] = g->s_chunks;
    if (!inplace) {
        l.base[BUF_I] = 0;
        l.base[BUF_O] = ni;
        l.base[BUF_S] = ni + no;
        l.nslots = ni + no + g->s_chunks;
        return l;
    }
    int in_at_out, out_at_in;
    coll_inplace_alias(p->coll, p->ngpus, p->nchunksperloop, r, &in_at_out, &out_at_in);
    if (in_at_out >= 0) {
        /* i sits inside o */
        int big = no;
        if (in_at_out + ni > big)
            big = in_at_out + ni;
        l.base[BUF_O] = 0;
        l.base[BUF_I] = in_at_out;
        l.base[BUF_S] = big;
        l.nslots = big + g->s_chunks;
    } else {
        /* o sits inside i */
        int big = ni;
        if (out_at_in + no > big)
            big = out_at_in + no;
        l.base[BUF_I] = 0;
        l.base[BUF_O] = out_at_in;
        l.base[BUF_S] = big;
        l.nslots = big + g->s_chunks;
    }
    return l;
}
