/* baseline_ring.c — NCCL's ring: one ring per channel; AllGather forwards
 * each chunk around it, ReduceScatter accumulates around it, AllReduce is
 * the ring ReduceScatter and then the ring AllGather. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* =================================================================== ring */

static const int *ring_of(const ringinfo *ri, int c)
{
    return ri->rings->order + (size_t)(c % ri->rings->nrings) * ri->rings->nranks;
}

static int pos_in(const ringinfo *ri, int c, int r)
{
    return ri->pos[(size_t)(c % ri->rings->nrings) * ri->rings->nranks + r];
}

/* Ring AllGather: per channel a tb sending to next, receiving from prev:
 * own chunk out (from i), n-2 forwards (rcs), the last one kept (r).  The
 * local copy runs in its own tb right after the chunk is sent, so it never
 * delays the ring, and in place it copies onto itself after the send read
 * it. */
static int ring_allgather(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    sref *sent = xmalloc((size_t)KM * sizeof *sent);
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = bl_tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                sent[j] = bl_emit(b, r, tb, ST_S, BUF_I, j, BUF_O, r * KM + j, 1, NODEP);
                for (int k = 1; k < n; k++) {
                    int off = ring[(x - k + n) % n] * KM + j;
                    bl_emit(b, r, tb, k < n - 1 ? ST_RCS : ST_R, BUF_O, off, BUF_O, off, 1, NODEP);
                }
            }
        }
        int ctb = bl_tb_new(b, r, -1, -1, 0);
        for (int j = 0; j < KM; j++)
            bl_emit(b, r, ctb, ST_CPY, BUF_I, j, BUF_O, r * KM + j, 1, sent[j]);
    }
    free(sent);
    b->p->inplace = 1;
    return TC_OK;
}

/* The reduction pass of chunk j at ring position x, shared by ReduceScatter
 * and AllReduce: send the partial of block x-1, then receive, reduce and
 * send on blocks x-2 .. x-(n-1).  The caller ends the pass at block x. */
static void emit_rs_pass(bld *b, int r, int tb, const int *ring, int x, int j)
{
    int n = b->n, KM = b->KM;
    for (int k = 0; k < n - 1; k++) {
        int off = ring[(x - 1 - k + 2 * n) % n] * KM + j;
        bl_emit(b, r, tb, k == 0 ? ST_S : ST_RRS, BUF_I, off, BUF_I, off, 1, NODEP);
    }
}

/* Ring ReduceScatter: the partial of the block owned by ring position x-1-k
 * is sent at step k; it has visited every rank when it reaches its owner. */
static int ring_reducescatter(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = bl_tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                emit_rs_pass(b, r, tb, ring, x, j);
                bl_emit(b, r, tb, ST_RRC, BUF_I, r * KM + j, BUF_O, j, 1, NODEP);
            }
        }
    b->p->inplace = 1;
    return TC_OK;
}

/* Ring AllReduce: ring ReduceScatter whose last step (rrcs) starts the ring
 * AllGather of the reduced block. */
static int ring_allreduce(bld *b, const ringinfo *ri, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    if (!bl_new_prog(b, n * KM, 0, err))
        return TC_INPUT;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < K; c++) {
            const int *ring = ring_of(ri, c);
            int x = pos_in(ri, c, r);
            int tb = bl_tb_new(b, r, ring[(x + 1) % n], ring[(x + n - 1) % n], c);
#define BLK(p) (ring[((p) % n + n) % n] * KM + j)
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                emit_rs_pass(b, r, tb, ring, x, j);
                bl_emit(b, r, tb, ST_RRCS, BUF_I, BLK(x), BUF_O, BLK(x), 1, NODEP);
                for (int k = 0; k < n - 2; k++)
                    bl_emit(b, r, tb, ST_RCS, BUF_O, BLK(x - 1 - k), BUF_O, BLK(x - 1 - k), 1, NODEP);
                bl_emit(b, r, tb, ST_R, BUF_O, BLK(x + 1), BUF_O, BLK(x + 1), 1, NODEP);
            }
#undef BLK
        }
    b->p->inplace = 1;
    return TC_OK;
}

int bl_build_ring(bld *b, const bl_args *a, tc_err *err)
{
    return b->k == COLL_ALLGATHER       ? ring_allgather(b, a->ri, err)
           : b->k == COLL_REDUCESCATTER ? ring_reducescatter(b, a->ri, err)
                                        : ring_allreduce(b, a->ri, err);
}
