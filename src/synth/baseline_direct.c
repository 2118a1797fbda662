/* baseline_direct.c — every rank sends straight to every other: AllGather
 * and AllToAll in one exchange, reductions serialised on the owner, and
 * AllReduce as direct ReduceScatter then direct AllGather (rsag). */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ================================================================= direct */

/* Peers are spread over channel groups so that no channel has more than 32
 * peer tbs: the pair (r, q) at ring distance d = min(|q-r|, n-|q-r|) uses
 * group (d-1)/16, the same seen from both ends. */
static int direct_groups(int n)
{
    int half = n / 2;
    return half <= 16 ? 1 : (half + 15) / 16;
}

static int direct_chan(const bld *b, int c, int r, int q)
{
    int n = b->n, dd = (q - r + n) % n;
    int dist = dd < n - dd ? dd : n - dd;
    return c * direct_groups(n) + (dist - 1) / 16;
}

/* tb of (channel c, peer r+k) is c*(n-1) + k-1. */
static void direct_tbs(bld *b, int r)
{
    for (int c = 0; c < b->K; c++)
        for (int k = 1; k < b->n; k++) {
            int q = (r + k) % b->n;
            bl_tb_new(b, r, q, q, direct_chan(b, c, r, q));
        }
}

#define DTB(c, k) ((c) * (b->n - 1) + (k) - 1)

/* AllGather and AllToAll: per (channel, peer) send my chunks, receive theirs. */
static int direct_gather(bld *b, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    int a2a = b->k == COLL_ALLTOALL;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        for (int c = 0; c < K; c++)
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
                while ((w = bl_window_next(&si, &ri, M, M)) >= 0) {
                    int j = (w ? ri : si) - 1;
                    j = j * K + c;
                    if (w == 0)
                        bl_emit(b, r, tb, ST_S, BUF_I, a2a ? q * KM + j : j, BUF_O, r * KM + j, 1,
                             NODEP);
                    else
                        bl_emit(b, r, tb, ST_R, BUF_O, q * KM + j, BUF_O, q * KM + j, 1, NODEP);
                }
            }
        int ctb = bl_tb_new(b, r, -1, -1, 0);
        bl_emit_copy(b, r, ctb, BUF_I, a2a ? r * KM : 0, BUF_O, r * KM, KM);
    }
    /* AllToAll in place: each tb sends a chunk before it receives into the
     * same slot, and the own block is only copied onto itself.  AllGather in
     * place would copy i onto itself while the sends read it. */
    b->p->inplace = a2a;
    return TC_OK;
}

/* The owner's serialised reduction: rank r adds what (r+k)%n sent in round
 * k = 1..n-1, in that order (the case study's cyclic order).  per_peer: each
 * peer gets its own block of i (ReduceScatter) rather than the whole buffer
 * (AllReduce); own_block: the sum goes to r's block of o (ReduceScatter
 * inside an AllReduce) rather than o[0..].  red[(c*(n-1)+k-1)*M + m]
 * receives the reduction steps. */
static void direct_reduce_phase(bld *b, int r, int per_peer, int own_block, sref *red)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    int own_in = per_peer ? r * KM : 0, out_off = own_block ? r * KM : 0;
    for (int c = 0; c < K; c++)
        for (int k = 1; k < n; k++) {
            int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
            while ((w = bl_window_next(&si, &ri, M, M)) >= 0) {
                int m = (w ? ri : si) - 1, j = m * K + c;
                if (w == 0) {
                    int so = per_peer ? q * KM + j : j;
                    bl_emit(b, r, tb, ST_S, BUF_I, so, BUF_O, own_block ? q * KM + j : j, 1, NODEP);
                } else {
                    sref dep = k == 1 ? NODEP : red[(size_t)(c * (n - 1) + k - 2) * M + m];
                    buf_kind sb = k == 1 ? BUF_I : BUF_O;
                    int so = k == 1 ? own_in + j : out_off + j;
                    red[(size_t)(c * (n - 1) + k - 1) * M + m] =
                        bl_emit(b, r, tb, ST_RRC, sb, so, BUF_O, out_off + j, 1, dep);
                }
            }
        }
}

static int direct_reducescatter(bld *b, tc_err *err)
{
    int n = b->n, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)b->K * (n - 1) * b->M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 1, 0, red);
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

/* The case study's direct cyclic AllReduce: everyone sends its whole buffer
 * to everyone; rank p adds the copies from p+1, p+2, ... in that order. */
static int direct_allreduce(bld *b, tc_err *err)
{
    int n = b->n, KM = b->KM;
    if (!bl_new_prog(b, KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)b->K * (n - 1) * b->M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 0, 0, red);
    }
    free(red);
    /* In place the sums would overwrite the buffer other tbs are still sending. */
    b->p->inplace = 0;
    return TC_OK;
}

/* The case study's ReduceScatter then AllGather: each block reduced once on
 * its owner, then sent from there to everyone. */
static int rsag_direct(bld *b, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *red = xmalloc((size_t)K * (n - 1) * M * sizeof *red);
    for (int r = 0; r < n; r++) {
        direct_tbs(b, r);
        direct_reduce_phase(b, r, 1, 1, red);
        for (int c = 0; c < K; c++)
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n, tb = DTB(c, k), si = 0, ri = 0, w;
                while ((w = bl_window_next(&si, &ri, M, M)) >= 0) {
                    int m = (w ? ri : si) - 1, j = m * K + c;
                    if (w == 0)
                        bl_emit(b, r, tb, ST_S, BUF_O, r * KM + j, BUF_O, r * KM + j, 1,
                             red[(size_t)(c * (n - 1) + n - 2) * M + m]);
                    else
                        bl_emit(b, r, tb, ST_R, BUF_O, q * KM + j, BUF_O, q * KM + j, 1, NODEP);
                }
            }
    }
    free(red);
    b->p->inplace = 1;
    return TC_OK;
}

int bl_build_direct(bld *b, const bl_args *a, tc_err *err)
{
    (void)a;
    return b->k == COLL_REDUCESCATTER ? direct_reducescatter(b, err)
           : b->k == COLL_ALLREDUCE   ? direct_allreduce(b, err)
                                      : direct_gather(b, err);
}

int bl_build_direct_rsag(bld *b, const bl_args *a, tc_err *err)
{
    (void)a;
    return rsag_direct(b, err);
}
