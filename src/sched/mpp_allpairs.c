/* mpp_allpairs.c — the all-pairs ReduceScatter written as an MSCCL++ plan
 * (prog.allpairs_pieces > 0; --algo allpairs, docs/mscclpp.md section 12.9).
 *
 * Why a writer of its own: MSCCL's steps reduce two buffers at a time, so
 * the direct ReduceScatter lowered from them (mpp_lower.c) sums the n - 1
 * peers' blocks one after another, each waiting for the last, and the
 * owner's last reductions start only when the last bytes have landed.
 * MSCCL++ reduces up to ten local buffers in one operation (re; its DSL
 * fuses local reduces into one, tests/data/mscclpp/dsl-tests/unit_tests/
 * reduce/reduce_fuse_test.json): here every rank puts each peer's block into
 * that peer's scratch in P pieces, and the owner's reducer blocks sum each
 * piece from every peer as soon as it has landed, while later pieces are
 * still on the wire.  Pushing keeps each transfer a whole put on one link:
 * sender block k of every rank puts to rank + k, so the ranks' puts of a
 * round leave and enter every port once.
 *
 * Rank r (n ranks on one node, a peer's block of G chunks in P pieces,
 * mpp_allpairs_pieces, R reducers):
 *   input n*G chunks (peer q's block: q*G .. q*G + G - 1), output G,
 *   scratch (n-1)*G (peer q's block at ((q - r - 1) mod n)*G);
 *   blocks 0 .. n-2 send: block k-1 to q = (r + k) mod n waits once for the
 *   readiness of q's R reducers, then per piece puts it from input block q
 *   into q's scratch, syncs its threads (nop) and signals the reducer of
 *   the piece (p mod R);
 *   blocks n-1 .. n-2+R reduce: block n-1+c signals every peer that its
 *   scratch is free, then for each piece p = c, c + R, ...: waits for every
 *   peer's signal, syncs, and sums the piece of input block r with the
 *   n - 1 peers' into the output (re, at most ten buffers an op: more peers
 *   take a second re adding onto the output).
 * The pieces shrink at the end (equal pieces, then halving to one chunk):
 * the last piece's reduce, which nothing overlaps, is small, and the
 * pieces are few (each put holds its link for the route's alpha besides
 * its bytes).  The readiness handshake cannot go: a rank's next call may
 * start while a peer's reducers still read this call's scratch.
 * Memory channels, 2R to each peer: for the pair lo < hi the first R carry
 * lo's puts and signals to hi's reducers, the next R hi's to lo's (the k-th
 * channel r -> q meets the k-th q -> r, docs/mscclpp.md section 3.1).
 * In place the output is the owner's own block of the input, which only
 * its reducers read and write.  Everything is on one node: memory channels
 * reach only GPUs that map each other's memory. */
#include "mpp_int.h"
#include "mpp_json.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/mem.h"
#include "../util/tcassert.h"

/* buffers one op reads or writes: MSCCL++'s 2 local + 8 channel refs */
#define REFS_PER_OP (2 + MPP_MAX_CHANNEL_PER_OPERATION)

/* Rank r's peers' blocks of memory channels: peer q's 2R channels start at
 * 2R x (q's position among r's peers, ascending). */
static int chan_base(int r, int q, int R)
{
    return 2 * R * (q < r ? q : q - 1);
}

/* The channel rank r puts to q on for q's reducer c, and the one r's reducer
 * c waits on for q's puts. */
static int send_chan(int r, int q, int R, int c)
{
    return chan_base(r, q, R) + (r < q ? c : R + c);
}

static int recv_chan(int r, int q, int R, int c)
{
    return chan_base(r, q, R) + (r < q ? R + c : c);
}

/* signal or wait on the block-local channels 0 .. n-1, at most
 * MAX_CHANNEL_PER_OPERATION per op */
static void sync_all(cJSON *ops, const char *name, int n)
{
    for (int a = 0; a < n; a += MPP_MAX_CHANNEL_PER_OPERATION) {
        int ids[MPP_MAX_CHANNEL_PER_OPERATION], m = 0;
        for (int i = a; i < n && m < MPP_MAX_CHANNEL_PER_OPERATION; i++)
            ids[m++] = i;
        cJSON_AddItemToArray(ops, mpp_j_sync(name, "memory", ids, m));
    }
}

static cJSON *sender_json(int r, int n, int k, const int *at, int P, int R)
{
    int q = (r + k) % n, slot = (r - q - 1 + 2 * n) % n, G = at[P];
    cJSON *tb = cJSON_CreateObject();
    cJSON_AddNumberToObject(tb, "id", k - 1);
    cJSON *ops = cJSON_AddArrayToObject(tb, "ops");
    sync_all(ops, "wait", R);
    cJSON_AddItemToArray(ops, mpp_j_nop());
    for (int p = 0; p < P; p++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", "put");
        cJSON *src = cJSON_AddArrayToObject(o, "src_buff");
        cJSON_AddItemToArray(src, mpp_j_ref(NULL, 0, "i", q * G + at[p], at[p + 1] - at[p]));
        cJSON *dst = cJSON_AddArrayToObject(o, "dst_buff");
        cJSON_AddItemToArray(dst, mpp_j_ref("buffer_id", 0, NULL, slot * G + at[p],
                                            at[p + 1] - at[p]));
        int c = p % R;
        cJSON_AddItemToObject(o, "channel_ids", mpp_j_ints(&c, 1));
        cJSON_AddStringToObject(o, "channel_type", "memory");
        cJSON_AddItemToArray(ops, o);
        cJSON_AddItemToArray(ops, mpp_j_nop());
        cJSON_AddItemToArray(ops, mpp_j_sync("signal", "memory", &c, 1));
    }
    int ch[MPP_MAX_CHANNEL];
    for (int c = 0; c < R; c++)
        ch[c] = send_chan(r, q, R, c);
    cJSON *tch = cJSON_AddArrayToObject(tb, "channels");
    cJSON_AddItemToArray(tch, mpp_j_chans("memory", ch, R));
    int rb = q < r ? q : q - 1;     /* q's scratch among r's remote buffers */
    cJSON *refs = cJSON_AddArrayToObject(tb, "remote_buffer_refs");
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "access_channel_type", "memory");
    cJSON_AddItemToObject(m, "remote_buffer_ids", mpp_j_ints(&rb, 1));
    cJSON_AddItemToArray(refs, m);
    return tb;
}

static cJSON *reducer_json(int r, int n, int c, const int *at, int P, int R)
{
    int G = at[P];
    cJSON *tb = cJSON_CreateObject();
    cJSON_AddNumberToObject(tb, "id", n - 1 + c);
    cJSON *ops = cJSON_AddArrayToObject(tb, "ops");
    sync_all(ops, "signal", n - 1);
    for (int p = c; p < P; p += R) {
        sync_all(ops, "wait", n - 1);
        cJSON_AddItemToArray(ops, mpp_j_nop());
        /* the piece of input block r and of the peers' j = 0 .. n-2 in
         * scratch, at most REFS_PER_OP sources an op: the first adds onto
         * the input, the next onto the output */
        int a = at[p], z = at[p + 1] - at[p];
        for (int j = 0; j < n - 1;) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", "re");
            cJSON *src = cJSON_AddArrayToObject(o, "src_buff");
            cJSON_AddItemToArray(src, j == 0 ? mpp_j_ref(NULL, 0, "i", r * G + a, z)
                                             : mpp_j_ref(NULL, 0, "o", a, z));
            for (int m = 1; m < REFS_PER_OP && j < n - 1; m++, j++)
                cJSON_AddItemToArray(src, mpp_j_ref(NULL, 0, "s", j * G + a, z));
            cJSON *dst = cJSON_AddArrayToObject(o, "dst_buff");
            cJSON_AddItemToArray(dst, mpp_j_ref(NULL, 0, "o", a, z));
            cJSON_AddStringToObject(o, "reduce_op", "sum");
            cJSON_AddItemToArray(ops, o);
            if (j < n - 1)
                cJSON_AddItemToArray(ops, mpp_j_nop());
        }
    }
    /* block-local channel j: the peer j + 1 places after r */
    int ch[MPP_MAX_CHANNEL];
    for (int j = 0; j < n - 1; j++)
        ch[j] = recv_chan(r, (r + j + 1) % n, R, c);
    cJSON *tch = cJSON_AddArrayToObject(tb, "channels");
    cJSON_AddItemToArray(tch, mpp_j_chans("memory", ch, n - 1));
    cJSON_AddItemToObject(tb, "remote_buffer_refs", cJSON_CreateArray());
    return tb;
}

static cJSON *gpu_json(int r, int n, const int *at, int P, int R)
{
    int G = at[P];
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "id", r);
    cJSON_AddNumberToObject(g, "input_chunks", n * G);
    cJSON_AddNumberToObject(g, "output_chunks", G);
    cJSON_AddNumberToObject(g, "scratch_chunks", (n - 1) * G);
    cJSON *chans = cJSON_AddArrayToObject(g, "channels");
    cJSON *mem = cJSON_CreateObject();
    cJSON_AddStringToObject(mem, "channel_type", "memory");
    cJSON *to = cJSON_AddArrayToObject(mem, "connected_to");
    for (int q = 0; q < n; q++)
        for (int c = 0; q != r && c < 2 * R; c++)
            cJSON_AddItemToArray(to, cJSON_CreateNumber(q));
    cJSON_AddItemToArray(chans, mem);
    cJSON *rbs = cJSON_AddArrayToObject(g, "remote_buffers");
    for (int q = 0; q < n; q++)
        if (q != r) {
            cJSON *rb = cJSON_CreateObject();
            cJSON_AddNumberToObject(rb, "rank", q);
            cJSON_AddStringToObject(rb, "type", "s");
            cJSON *acc = cJSON_AddArrayToObject(rb, "access_channel_types");
            cJSON_AddItemToArray(acc, cJSON_CreateString("memory"));
            cJSON_AddItemToArray(rbs, rb);
        }
    cJSON_AddItemToObject(g, "semaphores", cJSON_CreateArray());
    cJSON *tbs = cJSON_AddArrayToObject(g, "threadblocks");
    for (int k = 1; k < n; k++)
        cJSON_AddItemToArray(tbs, sender_json(r, n, k, at, P, R));
    for (int c = 0; c < R; c++)
        cJSON_AddItemToArray(tbs, reducer_json(r, n, c, at, P, R));
    return g;
}

int mpp_allpairs_pieces(int body, int *at)
{
    TC_ASSERT(body >= 0 && body <= MPP_ALLPAIRS_MAX_BODY);
    int P = 0;
    at[0] = 0;
    for (int k = 0; k < body; k++, P++)
        at[P + 1] = at[P] + MPP_ALLPAIRS_TAIL;
    for (int z = MPP_ALLPAIRS_TAIL / 2; z >= 1; z /= 2, P++)
        at[P + 1] = at[P] + z;
    at[P + 1] = at[P] + 1;
    return P + 1;
}

int mpp_allpairs_ops(int n, int body, int R, int *reducer_ops)
{
    int P = body + MPP_ALLPAIRS_TAIL_PIECES;
    int w = (n - 1 + MPP_MAX_CHANNEL_PER_OPERATION - 1) / MPP_MAX_CHANNEL_PER_OPERATION;
    int w_send = (R + MPP_MAX_CHANNEL_PER_OPERATION - 1) / MPP_MAX_CHANNEL_PER_OPERATION;
    int res = (n - 1 + REFS_PER_OP - 2) / (REFS_PER_OP - 1);   /* re ops a piece */
    int per = (P + R - 1) / R;
    if (reducer_ops)
        *reducer_ops = w + per * (w + 1 + 2 * res - 1);
    return w_send + 1 + 3 * P;
}

int mpp_allpairs_fits(int n, int body, int R, int *sops, int *rops)
{
    *sops = mpp_allpairs_ops(n, body, R, rops);
    return n >= 2 && body >= 1 && body <= MPP_ALLPAIRS_MAX_BODY && R >= 1 &&
           R <= MPP_MAX_CHANNEL_PER_OPERATION && n - 1 <= MPP_MAX_CHANNEL &&
           *sops <= MPP_MAX_OPERATION && *rops <= MPP_MAX_OPERATION;
}

char *mpp_allpairs_json(const prog *p, const mpp_opts *o, tc_err *err)
{
    int n = p->ngpus, B = p->allpairs_pieces, R = p->allpairs_reducers;
    int sops, rops, fits = mpp_allpairs_fits(n, B, R, &sops, &rops);
    if (p->coll != COLL_REDUCESCATTER) {
        tc_err_set(err, TC_INPUT, "the all-pairs plan is a ReduceScatter, not %s",
                   coll_name(p->coll));
        return NULL;
    }
    if (!fits) {
        tc_err_set(err, TC_INPUT, "an all-pairs plan of %d ranks, %d pieces and %d reducers does "
                   "not fit MSCCL++: its blocks would run %d and %d operations (at most %d), "
                   "each reducer waits on %d channels (at most %d a block)", n,
                   B + MPP_ALLPAIRS_TAIL_PIECES, R, sops, rops, MPP_MAX_OPERATION, n - 1,
                   MPP_MAX_CHANNEL);
        return NULL;
    }
    int at[MPP_ALLPAIRS_AT];
    int P = mpp_allpairs_pieces(B, at);
    TC_ASSERT(P == B + MPP_ALLPAIRS_TAIL_PIECES);
    /* every byte offset within 32 bits: n*G chunks of the input, the message */
    unsigned long long nch = (unsigned long long)n * at[P];
    cJSON *j = mpp_j_plan(p, o, 0, (0xffffffffULL / nch) * nch, err);
    if (!j)
        return NULL;
    cJSON *gpus = cJSON_GetObjectItem(j, "gpus");
    for (int r = 0; r < n; r++)
        cJSON_AddItemToArray(gpus, gpu_json(r, n, at, P, R));
    return mpp_j_text(j, err);
}
