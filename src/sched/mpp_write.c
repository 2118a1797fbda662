/* mpp_write.c — the lowered plan (mpp_int.h) as MSCCL++ JSON (mpp.h).
 *
 * Why here and not in the lowering: MSCCL++ names channels and remote
 * buffers inside an operation by block-local indices into per-block tables
 * (docs/mscclpp.md §4), and its executor bounds those tables and the ops
 * per block without always checking (§7).  This file numbers the tables in
 * first-use order, as MSCCL++'s own DSL does, refuses a plan over any limit
 * before writing a byte, and spells every key the parser reads (§2-§5): a
 * missing one is a crash there, not an error.  Keys are written in the
 * order the DSL writes them, numbers as integers, so the same program gives
 * the same bytes. */
#include "mpp_int.h"
#include "mpp_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../util/file.h"
#include "../util/mem.h"

void mpp_opts_of(const prog *p, mpp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_bytes = p->min_bytes > 0 ? p->min_bytes : 0;
    o->max_bytes = p->max_bytes > 0 ? p->max_bytes : INT64_MAX;
    o->inplace = p->inplace && !p->outofplace;
    o->name = NULL;
}

int mpp_wanted(const char *path, int want_mscclpp)
{
    if (want_mscclpp)
        return 1;
    size_t n = path ? strlen(path) : 0;
    return n >= 5 && !strcmp(path + n - 5, ".json");
}

static const char *opk_name(mpp_opk k)
{
    static const char *const names[] = {"nop", "signal", "wait", "put", "pwsf", "copy", "re",
                                        "sem_acquire", "sem_release", "ppkt", "cpkt",
                                        "rppkt", "upkt", "repkt"};
    return names[k];
}

/* One block's local tables: rank-level channel (buffer) ids by type, in
 * first-use order. */
typedef struct {
    int n[2];
    int id[2][MPP_MAX_CHANNEL];
} local_tab;

/* Block-local index of rank-level id `id` of type `port`; -1 when the
 * table is full (the caller reports the limit). */
static int local_index(local_tab *t, int port, int id)
{
    for (int i = 0; i < t->n[port]; i++)
        if (t->id[port][i] == id)
            return i;
    if (t->n[port] == MPP_MAX_CHANNEL)
        return -1;
    t->id[port][t->n[port]] = id;
    return t->n[port]++;
}

static const char *chan_type(int port)
{
    return port ? "port" : "memory";
}

static cJSON *ref_json(const mpp_ref *r, int local_buf)
{
    cJSON *j = cJSON_CreateObject();
    if (r->rbuf < 0)
        cJSON_AddStringToObject(j, "type", buf_name(r->b));
    else
        cJSON_AddNumberToObject(j, "buffer_id", local_buf);
    cJSON_AddNumberToObject(j, "index", r->off);
    cJSON_AddNumberToObject(j, "size", r->cnt);
    return j;
}

/* The JSON of block t of rank r; NULL with err set over a limit. */
static cJSON *tb_json(const mpp_plan *pl, int r, int t, tc_err *err)
{
    const mpp_rank *R = &pl->ranks[r];
    const mpp_tb *tb = &R->tbs[t];
    if (tb->nops > MPP_MAX_OPERATION) {
        tc_err_set(err, TC_INPUT, "rank %d threadblock %d needs %d MSCCL++ operations; the "
                   "executor runs at most %d per threadblock (MAX_OPERATION, "
                   "execution_common.hpp at %.7s)", r, t, tb->nops, MPP_MAX_OPERATION,
                   MPP_COMMIT);
        return NULL;
    }
    local_tab ch = {{0, 0}, {{0}}}, bf = {{0, 0}, {{0}}};
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "id", t);
    cJSON *ops = cJSON_AddArrayToObject(j, "ops");
    for (int i = 0; i < tb->nops; i++) {
        const mpp_op *o = &tb->ops[i];
        cJSON *oj = cJSON_CreateObject();
        cJSON_AddItemToArray(ops, oj);
        cJSON_AddStringToObject(oj, "name", opk_name(o->k));
        int port = o->chan >= 0 ? R->chans[o->chan].port : 0;
        int lc = o->chan >= 0 ? local_index(&ch, port, o->chan) : 0;
        if (lc < 0) {
            tc_err_set(err, TC_INPUT, "rank %d threadblock %d uses more than %d %s channels "
                       "(MAX_CHANNEL per threadblock, execution_common.hpp at %.7s)", r, t,
                       MPP_MAX_CHANNEL, chan_type(port), MPP_COMMIT);
            cJSON_Delete(j);
            return NULL;
        }
        switch (o->k) {
        case MO_PUT:
        case MO_PWSF:
        case MO_COPY:
        case MO_RE:
        case MO_PPKT:
        case MO_CPKT:
        case MO_RPPKT:
        case MO_UPKT:
        case MO_REPKT: {
            cJSON *s = cJSON_AddArrayToObject(oj, "src_buff");
            for (int k = 0; k < o->nsrc; k++)
                cJSON_AddItemToArray(s, ref_json(&o->src[k], 0));
            int lb = 0;
            if (o->dst.rbuf >= 0 && (lb = local_index(&bf, port, o->dst.rbuf)) < 0) {
                tc_err_set(err, TC_INPUT, "rank %d threadblock %d uses more than %d remote "
                           "buffers over %s channels (MAX_CHANNEL per threadblock, "
                           "execution_common.hpp at %.7s)", r, t, MPP_MAX_CHANNEL,
                           chan_type(port), MPP_COMMIT);
                cJSON_Delete(j);
                return NULL;
            }
            cJSON *d = cJSON_AddArrayToObject(oj, "dst_buff");
            cJSON_AddItemToArray(d, ref_json(&o->dst, lb));
            int remote = o->k == MO_PUT || o->k == MO_PWSF || o->k == MO_PPKT ||
                         o->k == MO_RPPKT;
            if (remote && port)     /* a port op posts on its channel; memory ones need none */
                cJSON_AddItemToObject(oj, "channel_ids", mpp_j_ints(&lc, 1));
            if (remote)
                cJSON_AddStringToObject(oj, "channel_type", chan_type(port));
            if (o->k == MO_RE || o->k == MO_REPKT)
                cJSON_AddStringToObject(oj, "reduce_op", "sum");
            break;
        }
        case MO_SIGNAL:
        case MO_WAIT:
            cJSON_AddItemToObject(oj, "channel_ids", mpp_j_ints(&lc, 1));
            cJSON_AddStringToObject(oj, "channel_type", chan_type(port));
            break;
        case MO_ACQUIRE:
        case MO_RELEASE: {
            int ids[MPP_MAX_DEVICE_SEMAPHORES];
            for (int k = 0; k < o->nsem; k++)
                ids[k] = o->sem0 + k;
            cJSON_AddItemToObject(oj, "semaphore_ids", mpp_j_ints(ids, o->nsem));
            break;
        }
        case MO_NOP:
            break;
        }
    }
    cJSON *chans = cJSON_AddArrayToObject(j, "channels");
    for (int port = 0; port < 2; port++) {
        if (!ch.n[port])
            continue;
        int ids[MPP_MAX_CHANNEL];
        for (int i = 0; i < ch.n[port]; i++)
            ids[i] = R->chans[ch.id[port][i]].idx;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "channel_type", chan_type(port));
        cJSON_AddItemToObject(c, "channel_ids", mpp_j_ints(ids, ch.n[port]));
        cJSON_AddItemToArray(chans, c);
    }
    cJSON *refs = cJSON_AddArrayToObject(j, "remote_buffer_refs");
    for (int port = 0; port < 2; port++) {
        if (!bf.n[port])
            continue;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "access_channel_type", chan_type(port));
        cJSON_AddItemToObject(c, "remote_buffer_ids", mpp_j_ints(bf.id[port], bf.n[port]));
        cJSON_AddItemToArray(refs, c);
    }
    return j;
}

static cJSON *gpu_json(const mpp_plan *pl, int r, tc_err *err)
{
    const mpp_rank *R = &pl->ranks[r];
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "id", r);
    cJSON_AddNumberToObject(g, "input_chunks", R->in_chunks);
    cJSON_AddNumberToObject(g, "output_chunks", R->out_chunks);
    cJSON_AddNumberToObject(g, "scratch_chunks", R->s_chunks);
    cJSON *tbs = cJSON_AddArrayToObject(g, "threadblocks");
    for (int t = 0; t < R->ntbs; t++) {
        cJSON *tj = tb_json(pl, r, t, err);
        if (!tj) {
            cJSON_Delete(g);
            return NULL;
        }
        cJSON_AddItemToArray(tbs, tj);
    }
    cJSON *chans = cJSON_AddArrayToObject(g, "channels");
    for (int port = 0; port < 2; port++) {
        int n = 0;
        cJSON *to = cJSON_CreateArray();
        for (int i = 0; i < R->nchans; i++)
            if (R->chans[i].port == port) {
                cJSON_AddItemToArray(to, cJSON_CreateNumber(R->chans[i].peer));
                n++;
            }
        if (!n) {
            cJSON_Delete(to);
            continue;
        }
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "channel_type", chan_type(port));
        cJSON_AddItemToObject(c, "connected_to", to);
        cJSON_AddItemToArray(chans, c);
    }
    cJSON *rb = cJSON_AddArrayToObject(g, "remote_buffers");
    for (int i = 0; i < R->nrbufs; i++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddNumberToObject(b, "rank", R->rbufs[i].rank);
        cJSON_AddStringToObject(b, "type", buf_name(R->rbufs[i].b));
        cJSON *acc = cJSON_AddArrayToObject(b, "access_channel_types");
        cJSON_AddItemToArray(acc, cJSON_CreateString(chan_type(R->rbufs[i].port)));
        cJSON_AddItemToArray(rb, b);
    }
    cJSON *sems = cJSON_AddArrayToObject(g, "semaphores");
    for (int i = 0; i < R->nsems; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "init_value", 0);
        cJSON_AddItemToArray(sems, s);
    }
    return g;
}

/* The largest message whose every byte offset and size fits the executor's
 * 32-bit fields (execution_common.hpp: uint32 offsets), in multiples of the
 * alignment times the chunks the size is checked against; 0 if none. */
static unsigned long long offset_cap(const prog *p, const mpp_plan *pl)
{
    long long most = 1;
    for (int r = 0; r < pl->nranks; r++) {
        const mpp_rank *R = &pl->ranks[r];
        if (R->in_chunks > most) most = R->in_chunks;
        if (R->out_chunks > most) most = R->out_chunks;
        if (R->s_chunks * (pl->ll ? 2LL : 1LL) > most)   /* LL: packets take twice */
            most = R->s_chunks * (pl->ll ? 2LL : 1LL);
    }
    unsigned long long chunk = (unsigned long long)UINT32_MAX / (unsigned long long)most;
    chunk -= chunk % MPP_BUFFER_ALIGNMENT;
    int checked = p->coll == COLL_ALLGATHER ? pl->ranks[0].out_chunks : pl->ranks[0].in_chunks;
    return chunk * (unsigned long long)checked;
}

char *mpp_to_json(const prog *p, const mpp_opts *o, tc_err *err)
{
    mpp_opts def;
    if (!o) {
        mpp_opts_of(p, &def);
        o = &def;
    }
    if (p->nvls_channels > 0)
        return mpp_nvls_json(p, o, err);
    if (p->allpairs_pieces > 0)
        return mpp_allpairs_json(p, o, err);
    mpp_plan pl;
    memset(&pl, 0, sizeof pl);
    if (mpp_lower(p, &pl, err) != TC_OK) {
        mpp_plan_free(&pl);
        return NULL;
    }
    for (int r = 0; r < pl.nranks; r++)
        if (pl.ranks[r].in_chunks < 1 || pl.ranks[r].out_chunks < 1) {
            tc_err_set(err, TC_INPUT, "rank %d has %d input and %d output chunks; MSCCL++ "
                       "divides the message by both (a 0 is a division by zero in its size "
                       "check)", r, pl.ranks[r].in_chunks, pl.ranks[r].out_chunks);
            mpp_plan_free(&pl);
            return NULL;
        }
    char *text = NULL;
    cJSON *j = mpp_j_plan(p, o, pl.ll, offset_cap(p, &pl), err);
    if (!j)
        goto out;
    cJSON *gpus = cJSON_GetObjectItem(j, "gpus");
    for (int r = 0; r < pl.nranks; r++) {
        cJSON *g = gpu_json(&pl, r, err);
        if (!g) {
            cJSON_Delete(j);
            goto out;
        }
        cJSON_AddItemToArray(gpus, g);
    }
    text = mpp_j_text(j, err);
out:
    mpp_plan_free(&pl);
    return text;
}

int mpp_write(const prog *p, const char *path, const mpp_opts *o, tc_err *err)
{
    char *text = mpp_to_json(p, o, err);
    if (!text)
        return err ? err->code : TC_INPUT;
    int rc = file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}
