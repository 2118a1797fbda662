/* baseline_direct.c — every rank sends straight to every other: AllGather
 * and AllToAll in one exchange, reductions serialised on the owner, and
 * AllReduce as direct ReduceScatter then direct AllGather (rsag).  AllToAll
 * also runs where some pairs have no link (a hybrid cube-mesh), through a
 * relay joined to both, as NCCL's point-to-point does. */
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

/* ------------------------------------------------ AllToAll through relays
 *
 * On a node whose GPUs are not all joined (a hybrid cube-mesh), a pair with
 * no link goes through a relay: the lowest rank joined to both (as NCCL's
 * point-to-point goes through an intermediate GPU over NVLink).  The
 * sender's chunks for such a peer travel on its connection to the relay,
 * land in the relay's scratch, and the relay forwards them.  A connection
 * r -> q carries, in this order: r's own chunks for q, the chunks r sends
 * through q (destinations ascending), the chunks r forwards to q (sources
 * ascending); q receives them in the same order. */

static int joined(const topo *t, int a, int b)
{
    return topo_route_of(t, a, b).kind != ROUTE_NONE && topo_route_of(t, b, a).kind != ROUTE_NONE;
}

/* relay[r*n+q]: -1 when r and q are joined, else the relay (the lowest
 * rank on their node joined to both, else the lowest anywhere); TC_INPUT if
 * a pair has none. */
static int find_relays(const bld *b, int *relay, tc_err *err)
{
    int n = b->n;
    for (int r = 0; r < n; r++)
        for (int q = 0; q < n; q++) {
            relay[r * n + q] = -1;
            if (r == q || joined(b->t, r, q))
                continue;
            /* a relay on the pair's own node first (NVLink both ways) */
            for (int pass = 0; pass < 2 && relay[r * n + q] < 0; pass++)
                for (int m = 0; m < n && relay[r * n + q] < 0; m++)
                    if (m != r && m != q && joined(b->t, r, m) && joined(b->t, m, q) &&
                        (pass || (topo_node_of(b->t, m) == topo_node_of(b->t, r) &&
                                  topo_node_of(b->t, m) == topo_node_of(b->t, q))))
                        relay[r * n + q] = m;
            if (relay[r * n + q] < 0)
                return tc_err_set(err, TC_INPUT, "direct: ranks %d and %d of %s have no link, "
                                  "switch or NIC between them nor a rank joined to both; use "
                                  "ring", r, q, b->t->name);
        }
    return TC_OK;
}

/* One transfer on a connection: its offsets on both ends. */
typedef struct {
    buf_kind sb, db;
    int so, dof;
    int dep_peer;       /* forward: the peer its data came from, else -1 */
} xfer;

/* The transfers on connection r -> q of channel c, in order; returns how many. */
static int conn_list(const bld *b, const int *relay, const int *slot, int r, int q, int c,
                     xfer *x)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM, len = 0;
    for (int m = 0; m < M; m++) {
        int j = m * K + c;
        x[len++] = (xfer){BUF_I, BUF_O, q * KM + j, r * KM + j, -1};
    }
    for (int d = 0; d < n; d++)
        if (relay[r * n + d] == q)
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                x[len++] = (xfer){BUF_I, BUF_S, d * KM + j, slot[r * n + d] * KM + j, -1};
            }
    for (int s = 0; s < n; s++)
        if (relay[s * n + q] == r)
            for (int m = 0; m < M; m++) {
                int j = m * K + c;
                x[len++] = (xfer){BUF_S, BUF_O, slot[s * n + q] * KM + j, s * KM + j, s};
            }
    return len;
}

/* Each connection gets a send-only and a receive-only tb: a forward waits
 * on a receive of another tb, and a receive never waits on a send, so no
 * two tbs can wait on each other. */
static int direct_alltoall_relayed(bld *b, const int *relay, tc_err *err)
{
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    /* scratch: on relay m, one block of KM chunks per pair through it */
    int *slot = xmalloc((size_t)n * n * sizeof *slot), *used = xcalloc((size_t)n, sizeof *used);
    int maxs = 0;
    for (int r = 0; r < n; r++)
        for (int q = 0; q < n; q++) {
            int m = relay[r * n + q];
            slot[r * n + q] = m < 0 ? -1 : used[m]++;
            if (m >= 0 && used[m] > maxs)
                maxs = used[m];
        }
    if (!bl_new_prog(b, n * KM, maxs * KM, err)) {
        free(slot);
        free(used);
        return TC_INPUT;
    }
    int cap = (2 * n + 1) * M;
    xfer *x = xmalloc((size_t)cap * sizeof *x);
    int *stb = xmalloc((size_t)n * sizeof *stb), *rtb = xmalloc((size_t)n * sizeof *rtb);
    sref *got = xmalloc(((size_t)maxs * KM + 1) * sizeof *got);    /* per scratch chunk */
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < K; c++) {
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n, ch = direct_chan(b, c, r, q);
                stb[q] = rtb[q] = -1;
                if (relay[r * n + q] >= 0)
                    continue;
                stb[q] = bl_tb_new(b, r, q, -1, ch);
                rtb[q] = bl_tb_new(b, r, -1, q, ch);
            }
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n;
                if (rtb[q] < 0)
                    continue;
                int len = conn_list(b, relay, slot, q, r, c, x);
                for (int i = 0; i < len; i++) {
                    sref st = bl_emit(b, r, rtb[q], ST_R, x[i].db, x[i].dof, x[i].db, x[i].dof,
                                      1, NODEP);
                    if (x[i].db == BUF_S)
                        got[x[i].dof] = st;
                }
            }
            for (int k = 1; k < n; k++) {
                int q = (r + k) % n;
                if (stb[q] < 0)
                    continue;
                int len = conn_list(b, relay, slot, r, q, c, x);
                for (int i = 0; i < len; i++)
                    bl_emit(b, r, stb[q], ST_S, x[i].sb, x[i].so, x[i].db, x[i].dof, 1,
                            x[i].dep_peer >= 0 ? got[x[i].so] : NODEP);
            }
        }
        int ctb = bl_tb_new(b, r, -1, -1, 0);
        bl_emit_copy(b, r, ctb, BUF_I, r * KM, BUF_O, r * KM, KM);
    }
    free(slot);
    free(used);
    free(x);
    free(stb);
    free(rtb);
    free(got);
    b->p->inplace = 0;
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
    if (b->k == COLL_ALLTOALL) {
        int n = b->n, need = 0, rc = TC_OK;
        int *relay = xmalloc((size_t)n * n * sizeof *relay);
        for (int r = 0; r < n && !need; r++)
            for (int q = 0; q < n && !need; q++)
                need = q != r && !joined(b->t, r, q);
        if (need && (rc = find_relays(b, relay, err)) == TC_OK)
            rc = direct_alltoall_relayed(b, relay, err);
        free(relay);
        if (need)
            return rc;
    }
    return b->k == COLL_REDUCESCATTER ? direct_reducescatter(b, err)
           : b->k == COLL_ALLREDUCE   ? direct_allreduce(b, err)
                                      : direct_gather(b, err);
}

int bl_build_direct_rsag(bld *b, const bl_args *a, tc_err *err)
{
    (void)a;
    return rsag_direct(b, err);
}
