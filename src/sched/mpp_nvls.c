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
 * chunk c by multicast at r*K + c of every output (gstore). */
#include "mpp_int.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"

static void add_u64(cJSON *j, const char *key, unsigned long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", v);
    cJSON_AddRawToObject(j, key, buf);
}

static cJSON *int_array(const int *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

/* {"name": nm, "channel_ids": [0 .. n-2], "channel_type": "memory"}: every
 * peer's channel of this block, relaxed (execution-only ordering). */
static cJSON *sync_op(const char *nm, int npeers)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nm);
    cJSON *ids = cJSON_AddArrayToObject(o, "channel_ids");
    for (int i = 0; i < npeers; i++)
        cJSON_AddItemToArray(ids, cJSON_CreateNumber(i));
    cJSON_AddStringToObject(o, "channel_type", "memory");
    return o;
}

static cJSON *nop(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "nop");
    return o;
}

/* The relaxed barrier of MSCCL++'s programs: signal every peer, wait for
 * every peer, with the block's syncthreads around. */
static void barrier(cJSON *ops, int npeers)
{
    cJSON_AddItemToArray(ops, nop());
    cJSON_AddItemToArray(ops, sync_op("rlxsignal", npeers));
    cJSON_AddItemToArray(ops, nop());
    cJSON_AddItemToArray(ops, sync_op("rlxwait", npeers));
    cJSON_AddItemToArray(ops, nop());
}

static cJSON *ref(const char *key, int id_or_type, const char *type, int index)
{
    cJSON *r = cJSON_CreateObject();
    if (type)
        cJSON_AddStringToObject(r, "type", type);
    else
        cJSON_AddNumberToObject(r, key, id_or_type);
    cJSON_AddNumberToObject(r, "index", index);
    cJSON_AddNumberToObject(r, "size", 1);
    return r;
}

/* The switch operation of rank r's block c. */
static cJSON *switch_op(coll_kind k, int r, int c, int K)
{
    cJSON *o = cJSON_CreateObject();
    int at = r * K + c;
    cJSON *src = cJSON_CreateArray(), *dst = cJSON_CreateArray();
    if (k == COLL_ALLREDUCE) {
        cJSON_AddStringToObject(o, "name", "glres");
        cJSON_AddItemToArray(src, ref("switch_channel_id", 0, NULL, at));
        cJSON_AddItemToArray(dst, ref("switch_channel_id", 1, NULL, at));
    } else {
        cJSON_AddStringToObject(o, "name", "gstore");
        cJSON_AddItemToArray(src, ref(NULL, 0, "i", c));
        cJSON_AddItemToArray(dst, ref("switch_channel_id", 0, NULL, at));
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
    cJSON_AddItemToObject(g, "ranks", int_array(all, n));
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
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "channel_type", "memory");
        cJSON *ids = cJSON_AddArrayToObject(m, "channel_ids");
        for (int p = 0; p < n - 1; p++)
            cJSON_AddItemToArray(ids, cJSON_CreateNumber(p * K + c));
        cJSON_AddItemToArray(tch, m);
        cJSON *sw = cJSON_CreateObject();
        cJSON_AddStringToObject(sw, "channel_type", "switch");
        cJSON *sids = cJSON_AddArrayToObject(sw, "channel_ids");
        for (int s = 0; s < nsw; s++)
            cJSON_AddItemToArray(sids, cJSON_CreateNumber(s * K + c));
        cJSON_AddItemToArray(tch, sw);
        cJSON_AddItemToObject(tb, "remote_buffer_refs", cJSON_CreateArray());
        cJSON_AddItemToArray(tbs, tb);
    }
    return g;
}

char *mpp_nvls_json(const prog *p, const mpp_opts *o, tc_err *err)
{
    int n = p->ngpus, K = p->nvls_channels;
    if (p->coll != COLL_ALLREDUCE && p->coll != COLL_ALLGATHER) {
        tc_err_set(err, TC_INPUT, "an NVLS %s has no MSCCL++ plan here: MSCCL++'s switch "
                   "operations store by multicast (glres, gstore), none reduces into one rank",
                   coll_name(p->coll));
        return NULL;
    }
    if (n < 2 || K < 1 || K > MPP_MAX_CHANNEL || n - 1 > MPP_MAX_CHANNEL_PER_OPERATION) {
        tc_err_set(err, TC_INPUT, "an NVLS plan of %d ranks and %d threadblocks per rank does "
                   "not fit MSCCL++: at most %d threadblocks (switch channels per block type) "
                   "and %d peers per signal (channel_ids per op)", n, K, MPP_MAX_CHANNEL,
                   MPP_MAX_CHANNEL_PER_OPERATION);
        return NULL;
    }
    /* every byte offset within MSCCL++'s uint32 fields: the largest message
     * of whole chunks (n*K chunks of the larger buffer, the message) */
    unsigned long long nch = (unsigned long long)n * K;
    unsigned long long cap = (0xffffffffULL / nch) * nch;
    unsigned long long hi = o->max_bytes >= INT64_MAX ? cap
                            : (unsigned long long)(o->max_bytes > 0 ? o->max_bytes - 1 : 0);
    if (hi > cap)
        hi = cap;
    if ((unsigned long long)o->min_bytes > hi) {
        tc_err_set(err, TC_INPUT, "no message size from %lld bytes up keeps every byte offset "
                   "of this plan within MSCCL++'s 32-bit offsets (largest: %llu bytes)",
                   o->min_bytes, cap);
        return NULL;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", o->name ? o->name : p->name);
    cJSON_AddStringToObject(j, "collective", coll_name(p->coll));
    cJSON_AddStringToObject(j, "protocol", "Simple");
    cJSON_AddBoolToObject(j, "inplace", o->inplace);
    cJSON_AddBoolToObject(j, "reuse_resources", 0);
    cJSON *gpus = cJSON_AddArrayToObject(j, "gpus");
    cJSON_AddNumberToObject(j, "num_threads_per_block", MPP_THREADS_PER_BLOCK);
    cJSON_AddBoolToObject(j, "use_double_scratch_buffer", 0);
    cJSON_AddNumberToObject(j, "buffer_alignment", MPP_BUFFER_ALIGNMENT);
    add_u64(j, "min_message_size", (unsigned long long)o->min_bytes);
    add_u64(j, "max_message_size", hi);
    for (int r = 0; r < n; r++)
        cJSON_AddItemToArray(gpus, gpu_json(p->coll, r, n, K));
    char *raw = cJSON_PrintUnformatted(j), *text = NULL;
    cJSON_Delete(j);
    if (!raw) {
        tc_err_set(err, TC_INPUT, "out of memory writing the MSCCL++ plan");
        return NULL;
    }
    size_t len = strlen(raw) + 2;   /* a text file's trailing newline */
    text = xmalloc(len);
    snprintf(text, len, "%s\n", raw);
    cJSON_free(raw);
    return text;
}
