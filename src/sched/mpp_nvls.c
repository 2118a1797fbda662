/* mpp_nvls.c — NCCL's NVLS schedule written as an MSCCL++ plan of switch
 * (multimem) operations (prog.nvls_channels > 0; docs/nvls.md).
 *
 * Why a writer of its own: the prog holds NVLS's data flow through the
 * GPUs alone (MSCCL's steps have no switch), so the lowering of
 * mpp_lower.c has nothing to lower; the plan is written from the
 * collective, the rank count and the threadblocks per rank, the way
 * MSCCL++'s own NVLS programs are (microsoft/mscclpp at 1f5f065,
 * python/mscclpp/language/tests/single_node/allreduce_nvls_zero_copy.py
 * and allgather_nvls_zero_copy.py: a relaxed barrier over memory
 * channels, one switch operation per threadblock on its slice, a relaxed
 * barrier; their JSON is tests/data/mscclpp/dsl-tests/single_node/).
 *
 * AllReduce: rank r's threadblock c load-reduces chunk r*K + c from every
 * rank's input through a switch channel on "i" and stores the sum by
 * multicast into every rank's output through one on "o" (glres), as
 * NCCL's NVLS AllReduce on one node reduce-scatters by multimem loads and
 * all-gathers by multimem stores.  Out of place it reads inputs and writes
 * outputs; in place they alias, and a chunk is read and written by one
 * threadblock only.  AllGather: threadblock c of rank r stores its input
 * chunk c by multicast at r*K + c of every output (gstore).
 *
 * Across N nodes (p->nvls_nodes > 1, hier-nvls; docs/nvls.md section 6)
 * the switch works inside each node and the rails (rank l of every node,
 * one NIC each) across: see hier_gpu_json below. */
#include "mpp_int.h"
#include "mpp_json.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "../util/tcassert.h"

/* {"name": nm, "channel_ids": [0 .. n-2], "channel_type": "memory"}: every
 * peer's channel of this block, relaxed (execution-only ordering). */
static cJSON *sync_op(const char *nm, int npeers)
{
    int ids[MPP_MAX_CHANNEL_PER_OPERATION];
    TC_ASSERT(npeers <= MPP_MAX_CHANNEL_PER_OPERATION);
    for (int i = 0; i < npeers; i++)
        ids[i] = i;
    return mpp_j_sync(nm, "memory", ids, npeers);
}

/* The relaxed barrier of MSCCL++'s programs: signal every peer, wait for
 * every peer, with the block's syncthreads around. */
static void barrier(cJSON *ops, int npeers)
{
    cJSON_AddItemToArray(ops, mpp_j_nop());
    cJSON_AddItemToArray(ops, sync_op("rlxsignal", npeers));
    cJSON_AddItemToArray(ops, mpp_j_nop());
    cJSON_AddItemToArray(ops, sync_op("rlxwait", npeers));
    cJSON_AddItemToArray(ops, mpp_j_nop());
}

/* Block c's channels of one type in its "channels" list tch: the rank's
 * channels i*K + c for i < count (one per peer, or per switch channel
 * kind, each kind holding K, block c's the c-th). */
static void tb_chans(cJSON *tch, const char *type, int count, int K, int c)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "channel_type", type);
    cJSON *ids = cJSON_AddArrayToObject(m, "channel_ids");
    for (int i = 0; i < count; i++)
        cJSON_AddItemToArray(ids, cJSON_CreateNumber(i * K + c));
    cJSON_AddItemToArray(tch, m);
}

/* The switch operation of rank r's block c. */
static cJSON *switch_op(coll_kind k, int r, int c, int K)
{
    cJSON *o = cJSON_CreateObject();
    int at = r * K + c;
    cJSON *src = cJSON_CreateArray(), *dst = cJSON_CreateArray();
    if (k == COLL_ALLREDUCE) {
        cJSON_AddStringToObject(o, "name", "glres");
        cJSON_AddItemToArray(src, mpp_j_ref("switch_channel_id", 0, NULL, at, 1));
        cJSON_AddItemToArray(dst, mpp_j_ref("switch_channel_id", 1, NULL, at, 1));
    } else {
        cJSON_AddStringToObject(o, "name", "gstore");
        cJSON_AddItemToArray(src, mpp_j_ref(NULL, 0, "i", c, 1));
        cJSON_AddItemToArray(dst, mpp_j_ref("switch_channel_id", 0, NULL, at, 1));
    }
    cJSON_AddItemToObject(o, "src_buff", src);
    cJSON_AddItemToObject(o, "dst_buff", dst);
    cJSON_AddStringToObject(o, "channel_type", "switch");
    if (k == COLL_ALLREDUCE)
        cJSON_AddStringToObject(o, "reduce_op", "sum");
    return o;
}

static cJSON *switch_chan(const char *buf, int n)
{
    cJSON *ch = cJSON_CreateObject();
    cJSON_AddStringToObject(ch, "channel_type", "switch");
    cJSON_AddStringToObject(ch, "buffer_type", buf);
    cJSON *groups = cJSON_AddArrayToObject(ch, "rank_groups");
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "size", n);
    int *all = xmalloc((size_t)n * sizeof *all);
    for (int i = 0; i < n; i++)
        all[i] = i;
    cJSON_AddItemToObject(g, "ranks", mpp_j_ints(all, n));
    free(all);
    cJSON_AddItemToArray(groups, g);
    return ch;
}

static cJSON *gpu_json(coll_kind k, int r, int n, int K)
{
    int nsw = k == COLL_ALLREDUCE ? 2 : 1;  /* switch channels per block */
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "id", r);
    cJSON_AddNumberToObject(g, "input_chunks", k == COLL_ALLREDUCE ? n * K : K);
    cJSON_AddNumberToObject(g, "output_chunks", n * K);
    cJSON_AddNumberToObject(g, "scratch_chunks", 0);
    cJSON *chans = cJSON_AddArrayToObject(g, "channels");
    /* memory channels: K to each peer, ascending (block c uses the c-th) */
    cJSON *mem = cJSON_CreateObject();
    cJSON_AddStringToObject(mem, "channel_type", "memory");
    cJSON *to = cJSON_AddArrayToObject(mem, "connected_to");
    for (int p = 0; p < n; p++)
        for (int c = 0; p != r && c < K; c++)
            cJSON_AddItemToArray(to, cJSON_CreateNumber(p));
    cJSON_AddItemToArray(chans, mem);
    /* switch channels: block c's are c (AllReduce: input) and K + c (output) */
    for (int s = 0; s < nsw; s++)
        for (int c = 0; c < K; c++)
            cJSON_AddItemToArray(chans, switch_chan(k == COLL_ALLREDUCE && s == 0 ? "i" : "o", n));
    cJSON_AddItemToObject(g, "remote_buffers", cJSON_CreateArray());
    cJSON_AddItemToObject(g, "semaphores", cJSON_CreateArray());
    cJSON *tbs = cJSON_AddArrayToObject(g, "threadblocks");
    for (int c = 0; c < K; c++) {
        cJSON *tb = cJSON_CreateObject();
        cJSON_AddNumberToObject(tb, "id", c);
        cJSON *ops = cJSON_AddArrayToObject(tb, "ops");
        barrier(ops, n - 1);
        cJSON_AddItemToArray(ops, switch_op(k, r, c, K));
        barrier(ops, n - 1);
        cJSON *tch = cJSON_AddArrayToObject(tb, "channels");
        tb_chans(tch, "memory", n - 1, K, c);
        tb_chans(tch, "switch", nsw, K, c);
        cJSON_AddItemToObject(tb, "remote_buffer_refs", cJSON_CreateArray());
        cJSON_AddItemToArray(tbs, tb);
    }
    return g;
}

/* ---------------------------------------------------------- hier-nvls */

/* {"name": nm, "semaphore_ids": [id]}: sem_acquire or sem_release of one
 * of the rank's semaphores (a block-to-block counter). */
static cJSON *sem_op(const char *nm, int id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nm);
    cJSON_AddItemToObject(o, "semaphore_ids", mpp_j_ints(&id, 1));
    return o;
}

/* Wait for every rail peer's signal, then a nop (__syncthreads): the
 * block's threads read what the signals ordered only after it. */
static void port_wait(cJSON *ops, const int *pch, int nr)
{
    cJSON_AddItemToArray(ops, mpp_j_sync("wait", "port", pch, nr));
    cJSON_AddItemToArray(ops, mpp_j_nop());
}

/* A port put with signal (kind "pws"; "pwsf" also flushes the channel) of
 * local chunks [si, si+cnt) of buffer st to the block's remote buffer rb at
 * [di, di+cnt), on port channel ch. */
static cJSON *port_put(const char *kind, const char *st, int si, int rb, int di, int cnt, int ch)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", kind);
    cJSON *src = cJSON_AddArrayToObject(o, "src_buff");
    cJSON_AddItemToArray(src, mpp_j_ref(NULL, 0, st, si, cnt));
    cJSON *dst = cJSON_AddArrayToObject(o, "dst_buff");
    cJSON_AddItemToArray(dst, mpp_j_ref("buffer_id", rb, NULL, di, cnt));
    cJSON_AddItemToObject(o, "channel_ids", mpp_j_ints(&ch, 1));
    cJSON_AddStringToObject(o, "channel_type", "port");
    return o;
}

/* A switch op over cnt chunks: glres (switch channel sw_src at si to
 * switch channel sw_dst at at) or gstore (local chunks of buffer st from
 * si, to channel sw_dst at at). */
static cJSON *sw_op(const char *name, const char *st, int si, int sw_src, int sw_dst, int at,
                    int cnt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON *src = cJSON_CreateArray(), *dst = cJSON_CreateArray();
    cJSON_AddItemToArray(src, st ? mpp_j_ref(NULL, 0, st, si, cnt)
                                 : mpp_j_ref("switch_channel_id", sw_src, NULL, si, cnt));
    cJSON_AddItemToArray(dst, mpp_j_ref("switch_channel_id", sw_dst, NULL, at, cnt));
    cJSON_AddItemToObject(o, "src_buff", src);
    cJSON_AddItemToObject(o, "dst_buff", dst);
    cJSON_AddStringToObject(o, "channel_type", "switch");
    if (!st)
        cJSON_AddStringToObject(o, "reduce_op", "sum");
    return o;
}

/* Rank r = a*g + l of N nodes of g ranks, K blocks of P pieces each; its
 * rail peers are b*g + l for b != a (N - 1 of them, index bi in node
 * order).  Every block barriers with its node and its rail peers first
 * and with its node last.
 *
 * AllGather (input K*P chunks, output n*K*P): block c stores each of its
 * pieces (input chunk c*P + p) by multicast at its place r*K*P + c*P + p
 * of its node's outputs (gstore) and puts it at the same place of each rail
 * peer's output (pws, one NIC each way); a step later it waits for the
 * peers' piece and stores each by multicast at its place in the node.
 *
 * AllReduce (input and output g*K*P*N chunks, scratch K*P*(N+1), and
 * 2*K*P*N more for the pair's sums, below): block c of rank l owns slice
 * (l, c) in P pieces of N sub-chunks, one per node; piece p is chunks
 * ((l*K + c)*P + p)*N .. +N.  For each piece: load-reduce it from the
 * node's inputs and store the node's sum by multicast (glres) into the
 * scratch of the pair l & ~1, l | 1, at K*P*(N+1) + (((l & 1)*K + c)*P +
 * p)*N, and put sub-chunk b into rail peer b's scratch at (c*P + p)*N + a.
 * Why a pair: MSCCL++'s executor has no reduce into one rank (its parser
 * refuses glre) and cuMulticastCreate is reported to refuse one device
 * (docs/nvls.md section 6), so the smallest group a sum can land in is
 * two ranks; each port then takes 3/8 of a buffer in the first step on 8
 * GPUs, not 9/8 (the sum stored into every rank of the node).  With an
 * odd g the sums go to the node's outputs, as they did before.
 * Then: wait, add the N - 1 partial sums and sub-chunk a into scratch at
 * K*P*N + c*P + p (re), copy that total to sub-chunk a of its own output
 * and put it at sub-chunk a of each peer's output, and release semaphore
 * c.  A reduce-scatter and an all-gather of each piece along the rails,
 * sub-chunk j summed on node j.  All that is block c, the producer; block
 * K + c, the consumer, acquires semaphore c, waits for the peers' totals
 * and stores the piece by multicast into the node's outputs (gstore), so
 * the multicast (into every port) of one piece runs while the producer
 * loads (out of every port) the next.  The producer finishes piece t - 1
 * before it loads piece t.  In place the input and output alias: a
 * slice's chunks are read and written by its owner's two blocks only, as
 * on one node.  No put's source is written before the flush of its
 * channel or before the peer it went to has signalled receipt. */
static cJSON *hier_gpu_json(coll_kind k, int r, int N, int g, int K, int P)
{
    int n = N * g, a = r / g, l = r % g, nr = N - 1;
    int ar = k == COLL_ALLREDUCE;
    int pair = ar && g % 2 == 0;        /* the node's sums go to a pair's scratch */
    int nsw = ar ? 2 + pair : 1;
    int nb = ar ? 2 * K : K;            /* blocks: AllReduce's producers, consumers */
    int ps = K * P * (N + 1);           /* the pair's region of scratch */
    cJSON *G = cJSON_CreateObject();
    cJSON_AddNumberToObject(G, "id", r);
    cJSON_AddNumberToObject(G, "input_chunks", ar ? g * K * P * N : K * P);
    cJSON_AddNumberToObject(G, "output_chunks", ar ? g * K * P * N : n * K * P);
    cJSON_AddNumberToObject(G, "scratch_chunks", ar ? ps + (pair ? 2 * K * P * N : 0) : 0);
    cJSON *chans = cJSON_AddArrayToObject(G, "channels");
    /* memory channels: nb to each node peer (block j uses the j-th);
     * port channels: nb to each rail peer (AllReduce: the first K carry
     * the partial sums between producers, the next K the totals from a
     * producer to the peer's consumer) */
    cJSON *mem = cJSON_CreateObject();
    cJSON_AddStringToObject(mem, "channel_type", "memory");
    cJSON *to = cJSON_AddArrayToObject(mem, "connected_to");
    for (int q = a * g; q < a * g + g; q++)
        for (int j = 0; q != r && j < nb; j++)
            cJSON_AddItemToArray(to, cJSON_CreateNumber(q));
    cJSON_AddItemToArray(chans, mem);
    cJSON *port = cJSON_CreateObject();
    cJSON_AddStringToObject(port, "channel_type", "port");
    to = cJSON_AddArrayToObject(port, "connected_to");
    for (int b = 0; b < N; b++)
        for (int j = 0; b != a && j < nb; j++)
            cJSON_AddItemToArray(to, cJSON_CreateNumber(b * g + l));
    cJSON_AddItemToArray(chans, port);
    for (int sw = 0; sw < nsw; sw++)
        for (int c = 0; c < K; c++) {
            /* kinds: the node's inputs (AllReduce), its outputs, the pair's
             * scratch (ranks a*g + (l & ~1) and the next) */
            int m = sw == 2 ? 2 : g, base = a * g + (sw == 2 ? (l & ~1) : 0);
            cJSON *ch = switch_chan(sw == 2 ? "s" : ar && sw == 0 ? "i" : "o", m);
            cJSON *rs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(ch,
                                                                "rank_groups"), 0), "ranks");
            for (int i = 0; i < m; i++)
                cJSON_SetIntValue(cJSON_GetArrayItem(rs, i), base + i);
            cJSON_AddItemToArray(chans, ch);
        }
    /* remote buffers: each rail peer's output (and, AllReduce, scratch) */
    cJSON *rbs = cJSON_AddArrayToObject(G, "remote_buffers");
    for (int b = 0; b < N; b++)
        for (int t = 0; b != a && t < (ar ? 2 : 1); t++) {
            cJSON *rb = cJSON_CreateObject();
            cJSON_AddNumberToObject(rb, "rank", b * g + l);
            cJSON_AddStringToObject(rb, "type", t ? "s" : "o");
            cJSON *acc = cJSON_AddArrayToObject(rb, "access_channel_types");
            cJSON_AddItemToArray(acc, cJSON_CreateString("port"));
            cJSON_AddItemToArray(rbs, rb);
        }
    /* AllReduce: semaphore c, producer c to consumer c, once a piece */
    cJSON *sems = cJSON_AddArrayToObject(G, "semaphores");
    for (int c = 0; ar && c < K; c++) {
        cJSON *sm = cJSON_CreateObject();
        cJSON_AddNumberToObject(sm, "init_value", 0);
        cJSON_AddItemToArray(sems, sm);
    }
    int peer[MPP_MAX_CHANNEL];      /* rail peer bi's node */
    int pch[MPP_MAX_CHANNEL];       /* block-local port channel 0 .. nr-1 */
    int tch[MPP_MAX_CHANNEL];       /* a producer's channels for the totals */
    for (int b = 0, bi = 0; b < N; b++)
        if (b != a) {
            pch[bi] = bi;
            tch[bi] = nr + bi;
            peer[bi++] = b;
        }
    cJSON *tbs = cJSON_AddArrayToObject(G, "threadblocks");
    for (int j = 0; j < nb; j++) {
        int c = j % K, cons = j >= K;   /* AllReduce: block K + c consumes c */
        int ids[2 * MPP_MAX_CHANNEL], m = 0;
        cJSON *tb = cJSON_CreateObject();
        cJSON_AddNumberToObject(tb, "id", j);
        cJSON *ops = cJSON_AddArrayToObject(tb, "ops");
        if (!cons) {
            barrier(ops, g - 1);
            cJSON_AddItemToArray(ops, mpp_j_sync("signal", "port", pch, nr));
            port_wait(ops, pch, nr);
        }
        /* software-pipelined by pieces: step t issues piece t's switch
         * work and puts, then finishes piece t - 1, so the NIC moves one
         * piece while the switch serves the next.  Both sides of a rail
         * run the same order, so each wait meets the peer's signals in the
         * order sent. */
        if (!ar) {
            int B = K * P;          /* chunks per rank */
            for (int t = 0; t <= P; t++) {
                if (t < P) {
                    int x = c * P + t;
                    cJSON_AddItemToArray(ops, sw_op("gstore", "i", x, 0, 0, r * B + x, 1));
                    /* inputs are never written: only the last put flushes */
                    for (int bi = 0; bi < nr; bi++)
                        cJSON_AddItemToArray(ops, port_put(t == P - 1 ? "pwsf" : "pws", "i", x,
                                                           bi, r * B + x, 1, pch[bi]));
                }
                if (t >= 1) {
                    int x = c * P + t - 1;
                    port_wait(ops, pch, nr);
                    for (int bi = 0; bi < nr; bi++) {
                        int q = peer[bi] * g + l;
                        cJSON_AddItemToArray(ops, sw_op("gstore", "o", q * B + x, 0, 0,
                                                        q * B + x, 1));
                    }
                }
            }
        } else if (!cons) {
            /* the producer: the node's sum (glres), the rail's
             * reduce-scatter, the total to each peer's consumer and its
             * own, then the semaphore */
            for (int t = 0; t <= P; t++) {
                if (t >= 1) {
                    int q = t - 1, s0 = ((l * K + c) * P + q) * N;
                    int ns = ps + (((l & 1) * K + c) * P + q) * N;
                    port_wait(ops, pch, nr);
                    cJSON *re = cJSON_CreateObject();
                    cJSON_AddStringToObject(re, "name", "re");
                    cJSON *src = cJSON_AddArrayToObject(re, "src_buff");
                    cJSON_AddItemToArray(src, pair ? mpp_j_ref(NULL, 0, "s", ns + a, 1)
                                                   : mpp_j_ref(NULL, 0, "o", s0 + a, 1));
                    for (int bi = 0; bi < nr; bi++)
                        cJSON_AddItemToArray(src, mpp_j_ref(NULL, 0, "s", (c * P + q) * N + peer[bi], 1));
                    /* the total into scratch, which nothing writes again, so
                     * its puts need no flush before the block goes on; a
                     * copy puts it in the piece the multicast sends */
                    int tot = K * P * N + c * P + q;
                    cJSON *dst = cJSON_AddArrayToObject(re, "dst_buff");
                    cJSON_AddItemToArray(dst, mpp_j_ref(NULL, 0, "s", tot, 1));
                    cJSON_AddStringToObject(re, "channel_type", "none");
                    cJSON_AddStringToObject(re, "reduce_op", "sum");
                    cJSON_AddItemToArray(ops, re);
                    cJSON_AddItemToArray(ops, mpp_j_nop());   /* the total, read by the copy and puts */
                    cJSON *cp = cJSON_CreateObject();
                    cJSON_AddStringToObject(cp, "name", "copy");
                    cJSON_AddItemToArray(cJSON_AddArrayToObject(cp, "src_buff"),
                                         mpp_j_ref(NULL, 0, "s", tot, 1));
                    cJSON_AddItemToArray(cJSON_AddArrayToObject(cp, "dst_buff"),
                                         mpp_j_ref(NULL, 0, "o", s0 + a, 1));
                    cJSON_AddItemToArray(ops, cp);
                    cJSON_AddItemToArray(ops, mpp_j_nop());   /* the copy, before the release */
                    for (int bi = 0; bi < nr; bi++)
                        cJSON_AddItemToArray(ops, port_put(t == P ? "pwsf" : "pws", "s", tot,
                                                           2 * bi, s0 + a, 1, tch[bi]));
                    cJSON_AddItemToArray(ops, sem_op("sem_release", c));
                }
                if (t < P) {
                    int s0 = ((l * K + c) * P + t) * N;   /* piece t's first chunk */
                    int ns = ps + (((l & 1) * K + c) * P + t) * N;
                    cJSON_AddItemToArray(ops, sw_op("glres", NULL, s0, 0, 1, pair ? ns : s0, N));
                    cJSON_AddItemToArray(ops, mpp_j_nop());   /* the node's sum, read by the puts */
                    /* remote buffers: 2bi output, 2bi+1 scratch; in the
                     * pair's scratch a source is never written again; in
                     * the output it is next written by the peer's total,
                     * sent after the peer has this piece */
                    for (int bi = 0; bi < nr; bi++)
                        cJSON_AddItemToArray(ops, port_put("pws",
                                                           pair ? "s" : "o",
                                                           (pair ? ns : s0) + peer[bi], 2 * bi + 1,
                                                           (c * P + t) * N + a, 1, pch[bi]));
                }
            }
        } else {
            /* the consumer: per piece, its own total (the semaphore) and the
             * peers' (their signals), then the multicast into the node, on
             * the other direction of the ports than the producer's loads */
            for (int t = 0; t < P; t++) {
                int s0 = ((l * K + c) * P + t) * N;
                cJSON_AddItemToArray(ops, sem_op("sem_acquire", c));
                port_wait(ops, pch, nr);
                cJSON_AddItemToArray(ops, sw_op("gstore", "o", s0, 0, 0, s0, N));
            }
        }
        barrier(ops, g - 1);
        cJSON *tchs = cJSON_AddArrayToObject(tb, "channels");
        tb_chans(tchs, "memory", g - 1, nb, j);
        for (int bi = 0; bi < nr; bi++)     /* partials (producer) or totals */
            ids[m++] = bi * nb + (ar && cons ? K + c : c);
        for (int bi = 0; ar && !cons && bi < nr; bi++)
            ids[m++] = bi * nb + K + c;
        cJSON_AddItemToArray(tchs, mpp_j_chans("port", ids, m));
        m = 0;
        if (!ar)
            ids[m++] = c;
        else if (!cons) {
            ids[m++] = c;                           /* the node's inputs */
            ids[m++] = (pair ? 2 : 1) * K + c;      /* where the node's sum goes */
        } else
            ids[m++] = K + c;                       /* the node's outputs */
        cJSON_AddItemToArray(tchs, mpp_j_chans("switch", ids, m));
        cJSON *refs = cJSON_AddArrayToObject(tb, "remote_buffer_refs");
        if (!cons) {
            cJSON *pr = cJSON_CreateObject();
            cJSON_AddStringToObject(pr, "access_channel_type", "port");
            cJSON *rids = cJSON_AddArrayToObject(pr, "remote_buffer_ids");
            for (int x = 0; x < nr * (ar ? 2 : 1); x++)
                cJSON_AddItemToArray(rids, cJSON_CreateNumber(x));
            cJSON_AddItemToArray(refs, pr);
        }
        cJSON_AddItemToArray(tbs, tb);
    }
    return G;
}

char *mpp_nvls_json(const prog *p, const mpp_opts *o, tc_err *err)
{
    int n = p->ngpus, K = p->nvls_channels;
    int N = p->nvls_nodes > 1 ? p->nvls_nodes : 1, g = n / N;
    int P = p->nvls_pieces > 1 ? p->nvls_pieces : 1;
    if (p->coll != COLL_ALLREDUCE && p->coll != COLL_ALLGATHER) {
        tc_err_set(err, TC_INPUT, "an NVLS %s has no MSCCL++ plan here: MSCCL++'s switch "
                   "operations store by multicast (glres, gstore), none reduces into one rank",
                   coll_name(p->coll));
        return NULL;
    }
    if (N > 1 && (n % N || g < 2 || N - 1 > MPP_MAX_CHANNEL_PER_OPERATION ||
                  g - 1 > MPP_MAX_CHANNEL_PER_OPERATION || K < 1 || K > MPP_MAX_CHANNEL ||
                  (long long)(N - 1) * K * (p->coll == COLL_ALLREDUCE ? 2 : 1) > 1000)) {
        tc_err_set(err, TC_INPUT, "a hier-nvls plan of %d nodes of %d ranks and %d threadblocks "
                   "per rank does not fit MSCCL++: at most %d threadblocks, %d peers per signal "
                   "inside a node and across", N, n / N, K, MPP_MAX_CHANNEL,
                   MPP_MAX_CHANNEL_PER_OPERATION);
        return NULL;
    }
    if (N == 1 && (n < 2 || K < 1 || K > MPP_MAX_CHANNEL || n - 1 > MPP_MAX_CHANNEL_PER_OPERATION)) {
        tc_err_set(err, TC_INPUT, "an NVLS plan of %d ranks and %d threadblocks per rank does "
                   "not fit MSCCL++: at most %d threadblocks (switch channels per block type) "
                   "and %d peers per signal (channel_ids per op)", n, K, MPP_MAX_CHANNEL,
                   MPP_MAX_CHANNEL_PER_OPERATION);
        return NULL;
    }
    /* every byte offset within MSCCL++'s uint32 fields: the largest message
     * of whole chunks (n*K chunks of the larger buffer, the message) */
    unsigned long long nch = (unsigned long long)n * K * P;   /* hier AllReduce: g*K*P*N */
    unsigned long long cap = (0xffffffffULL / nch) * nch;
    cJSON *j = mpp_j_plan(p, o, 0, cap, err);
    if (!j)
        return NULL;
    cJSON *gpus = cJSON_GetObjectItem(j, "gpus");
    for (int r = 0; r < n; r++)
        cJSON_AddItemToArray(gpus, N > 1 ? hier_gpu_json(p->coll, r, N, g, K, P)
                                         : gpu_json(p->coll, r, n, K));
    return mpp_j_text(j, err);
}
