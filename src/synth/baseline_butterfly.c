/* baseline_butterfly.c — power-of-two ranks: recursive doubling for
 * AllGather, recursive halving for ReduceScatter (and AllReduce as halving
 * then doubling), and the full-buffer XOR exchange AllReduce. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ============================================================== butterfly */

/* tb of (channel c, round k) with peer r ^ (1 << k) is c*L + k. */
static void butterfly_tbs(bld *b, int r, int L)
{
    for (int c = 0; c < b->K; c++)
        for (int k = 0; k < L; k++)
            bl_tb_new(b, r, r ^ (1 << k), r ^ (1 << k), c);
}

/* The case study's butterfly AllReduce: in round k partners r and r^2^k
 * swap their whole partial sums and each adds the other's. */
static int butterfly_allreduce(bld *b, int L, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!bl_new_prog(b, KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)L * M * sizeof *red);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        for (int c = 0; c < K; c++)
            for (int k = 0; k < L; k++) {
                int tb = c * L + k, si = 0, ri = 0, w;
                buf_kind src = k == 0 ? BUF_I : BUF_O;
                while ((w = bl_window_next(&si, &ri, M, M)) >= 0) {
                    int m = (w ? ri : si) - 1, j = m * K + c;
                    if (w == 0)
                        bl_emit(b, r, tb, ST_S, src, j, BUF_O, j, 1,
                             k == 0 ? NODEP : red[(size_t)(k - 1) * M + m]);
                    else
                        red[(size_t)k * M + m] = bl_emit(b, r, tb, ST_RRC, src, j, BUF_O, j, 1, NODEP);
                }
            }
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

/* Recursive doubling and halving send a whole half in one round: 16
 * contiguous chunks on 32 ranks.  Both partners send before they receive,
 * so the runs are capped at the FIFO's 8 and the window counts chunks
 * (bl_round.chunk_window): a step of 16 chunks is 16 operations once a
 * chunk fills the runtimes' tile, and 32 ranks deadlocked from 64 MiB. */
static void fifo_safe_runs(bld *b)
{
    if (b->run_cap <= 0 || b->run_cap > FIFO_WINDOW)
        b->run_cap = FIFO_WINDOW;
}

/* Offsets of channel c's chunks in blocks [b0, b0+cnt), shifted by base. */
static int blocks_offsets(const bld *b, int b0, int cnt, int c, int shift, int *v)
{
    int len = 0;
    for (int q = b0; q < b0 + cnt; q++)
        len = bl_block_chunks(b, q, c, shift, v, len);
    return len;
}

/* Recursive doubling AllGather: in round k each rank sends the 2^k blocks
 * its group holds to the partner group.  The own block leaves from i; the
 * local copy runs concurrently in its own tb and round 1 waits for it. */
static int butterfly_allgather(bld *b, int L, tc_err *err)
{
    int n = b->n, K = b->K, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    int *so = xmalloc((size_t)n * KM * sizeof *so), *ro = xmalloc((size_t)n * KM * sizeof *ro);
    fifo_safe_runs(b);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        int ctb = bl_tb_new(b, r, -1, -1, 0);
        sref copied = bl_emit_copy(b, r, ctb, BUF_I, 0, BUF_O, r * KM, KM);
        for (int c = 0; c < K; c++)
            for (int k = 0; k < L; k++) {
                int d = 1 << k, gb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int ns = blocks_offsets(b, gb, d, c, k == 0 ? -r * KM : 0, so);
                int nr = blocks_offsets(b, pb, d, c, 0, ro);
                bl_round rs = {k == 0 ? BUF_I : BUF_O, so, ns, ST_R, BUF_O, BUF_O, ro, ro, nr, NULL, NULL, NULL, 0, 1};
                sref d1 = k == 1 ? copied : NODEP;
                sref d2 = k == 0 ? NODEP : bl_last_of(b, r, c * L + k - 1);
                bl_emit_round(b, r, c * L + k, &rs, d1, d2);
            }
    }
    free(so);
    free(ro);
    b->p->inplace = 0;   /* in place the copy would overwrite i while round 0 sends it */
    return TC_OK;
}

/* Recursive halving: in the round with distance d a rank sends the partner
 * half of its current range and adds the partner's contribution to its own
 * half.  ReduceScatter accumulates in scratch (its o holds one block),
 * AllReduce in o; `rabenseifner` follows with recursive doubling in o. */
static int butterfly_halving(bld *b, int L, int allreduce, tc_err *err)
{
    int n = b->n, K = b->K, KM = b->KM;
    int scratch = !allreduce && L >= 2 ? (n / 2) * KM : 0;
    if (!bl_new_prog(b, n * KM, scratch, err))
        return TC_INPUT;
    int *so = xmalloc((size_t)n * KM * sizeof *so), *lo = xmalloc((size_t)n * KM * sizeof *lo);
    int *ro = xmalloc((size_t)n * KM * sizeof *ro);
    fifo_safe_runs(b);
    for (int r = 0; r < n; r++) {
        butterfly_tbs(b, r, L);
        int h0 = r & ~(n / 2 - 1);       /* my half after the first round */
        for (int c = 0; c < K; c++) {
            for (int k = L - 1; k >= 0; k--) {
                int d = 1 << k, mb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int first = k == L - 1, final = k == 0;
                buf_kind sb, lb, rb;
                int sshift, lshift, rshift;
                if (allreduce) {
                    sb = lb = first ? BUF_I : BUF_O;
                    rb = BUF_O;
                    sshift = lshift = rshift = 0;
                } else {
                    sb = lb = first ? BUF_I : BUF_S;
                    sshift = lshift = first ? 0 : -h0 * KM;
                    rb = final ? BUF_O : BUF_S;
                    rshift = final ? -r * KM : -h0 * KM;
                }
                int ns = blocks_offsets(b, pb, d, c, sshift, so);
                int nl = blocks_offsets(b, mb, d, c, lshift, lo);
                blocks_offsets(b, mb, d, c, rshift, ro);
                bl_round rs = {sb, so, ns, ST_RRC, lb, rb, lo, ro, nl, NULL, NULL, NULL, 0, 1};
                sref dep = first ? NODEP : bl_last_of(b, r, c * L + k + 1);
                bl_emit_round(b, r, c * L + k, &rs, NODEP, dep);
            }
            if (!allreduce)
                continue;
            for (int k = 0; k < L; k++) {
                int d = 1 << k, gb = r & ~(d - 1), pb = (r ^ d) & ~(d - 1);
                int ns = blocks_offsets(b, gb, d, c, 0, so);
                int nr = blocks_offsets(b, pb, d, c, 0, ro);
                bl_round rs = {BUF_O, so, ns, ST_R, BUF_O, BUF_O, ro, ro, nr, NULL, NULL, NULL, 0, 1};
                sref dep = k == 0 ? NODEP : bl_last_of(b, r, c * L + k - 1);
                bl_emit_round(b, r, c * L + k, &rs, NODEP, dep);
            }
        }
    }
    free(so);
    free(lo);
    free(ro);
    b->p->inplace = 1;
    return TC_OK;
}

int bl_build_butterfly(bld *b, const bl_args *a, tc_err *err)
{
    return b->k == COLL_ALLGATHER       ? butterfly_allgather(b, a->L, err)
           : b->k == COLL_REDUCESCATTER ? butterfly_halving(b, a->L, 0, err)
                                        : butterfly_allreduce(b, a->L, err);
}

int bl_build_halving(bld *b, const bl_args *a, tc_err *err)
{
    return butterfly_halving(b, a->L, 1, err);
}
