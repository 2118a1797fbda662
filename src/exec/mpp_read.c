/* mpp_read.c — read an MSCCL++ execution plan into mpp_int.h's IR.
 *
 * Why so strict: MSCCL++'s parser (execution_plan.cc at 1f5f065) validates
 * almost nothing — a missing key is a nlohmann type error or undefined
 * behaviour, an index past a table is an out-of-range read, a zero chunk
 * count divides by zero (docs/mscclpp.md sections 1-8).  What it throws on
 * and what makes it crash are both "the runtime cannot load this": exit 2
 * here, one line naming the file, the JSON path and the rule.  What it
 * accepts but runs wrongly (flush without dst_buff, get's swapped offsets)
 * is left for the interpreter to reproduce. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../model/collective.h"
#include "../util/jsonin.h"
#include "../util/mem.h"
#include "../util/tcassert.h"
#include "mpp_int.h"

static const char *const op_names[MOP_COUNT] = {
    "nop", "barrier", "signal", "wait", "rlxsignal", "rlxwait", "flush",
    "put", "pws", "pwsf", "get", "copy", "re", "res", "rre", "rres",
    "ppkt", "rppkt", "cpkt", "upkt", "repkt", "respkt", "recpkt", "recspkt",
    "glres", "gstore", "gstorepkt", "pipeline", "sem_acquire", "sem_release"};

const char *mpp_op_name(mpp_optype t)
{
    return t >= 0 && t < MOP_COUNT ? op_names[t] : "?";
}

typedef struct {
    const char *file;
    const char *text;   /* what cJSON parsed: messages find their line in it */
    tc_err *err;
    mpp_plan *p;
} rd;

static const jsonin_doc PLAN_DOC = {"MSCCL++ execution plan", 256L << 20, 0};

/* The line of a "gpus[3].threadblocks[1].ops[7].name" path in the text. */
static int line_of(const rd *r, const char *path)
{
    jsonin_step st[JSONIN_MAX_DEPTH];
    char keys[JSONIN_MAX_DEPTH][64];
    int n = 0;
    const char *s = path;
    while (*s && n < JSONIN_MAX_DEPTH) {
        if (*s == '.') {
            s++;
            continue;
        }
        if (*s == '[') {
            st[n] = (jsonin_step){NULL, atoi(s + 1), 0, 0};
            n++;
            s = strchr(s, ']');
            if (!s)
                break;
            s++;
            continue;
        }
        size_t k = strcspn(s, ".[");
        if (k >= sizeof keys[0] || (k == 1 && *s == '$'))
            break;
        memcpy(keys[n], s, k);
        keys[n][k] = '\0';
        st[n] = (jsonin_step){keys[n], 0, 0, 0};
        n++;
        s += k;
    }
    return r->text ? jsonin_locate(r->text, st, n, NULL, NULL) : 0;
}

static int fail(rd *r, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(rd *r, const char *path, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tc_err_set(r->err, TC_INPUT, "%s:%d: %s: %s", r->file, line_of(r, path), path, msg);
}

int mpp_sniff(const char *text)
{
    const char *s = text;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s != '{')
        return 0;
    cJSON *j = cJSON_Parse(s);
    if (!j)
        return strstr(s, "\"gpus\"") != NULL; /* malformed JSON that names gpus: ours to refuse */
    int yes = cJSON_IsObject(j) && cJSON_GetObjectItemCaseSensitive(j, "gpus") != NULL;
    cJSON_Delete(j);
    return yes;
}

/* ------------------------------------------------------------ field helpers */

static const cJSON *need(rd *r, const cJSON *o, const char *key, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail(r, path, "missing key '%s' (MSCCL++'s parser reads it unconditionally)", key);
    return v;
}

/* An integer in [lo, hi] at o[key]; def when absent and optional. */
static int get_ll(rd *r, const cJSON *o, const char *key, const char *path, int optional,
                  long long def, long long lo, long long hi, long long *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char p[256];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
    if (!v) {
        if (optional) {
            *out = def;
            return TC_OK;
        }
        return fail(r, p, "missing (MSCCL++'s parser reads it unconditionally)");
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long long)v->valuedouble)
        return fail(r, p, "expected an integer");
    long long x = (long long)v->valuedouble;
    if (x < lo || x > hi)
        return fail(r, p, "%lld out of range %lld..%lld", x, lo, hi);
    *out = x;
    return TC_OK;
}

static int get_int(rd *r, const cJSON *o, const char *key, const char *path, long long lo,
                   long long hi, int *out)
{
    long long x;
    int rc = get_ll(r, o, key, path, 0, 0, lo, hi, &x);
    *out = (int)x;
    return rc;
}

static int get_bool(rd *r, const cJSON *o, const char *key, int optional, int def, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (optional) {
            *out = def;
            return TC_OK;
        }
        return fail(r, key, "missing (MSCCL++ converts it to a bool: a type error on null)");
    }
    if (!cJSON_IsBool(v))
        return fail(r, key, "expected true or false");
    *out = cJSON_IsTrue(v);
    return TC_OK;
}

/* The spellings of an enumerated field, in enum order; NULL ends them. */
static const char *const buf_names[] = {"i", "o", "s", NULL};
static const char *const ch_names[] = {"none", "memory", "port", "switch", NULL};

static int parse_name(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int parse_ch(const char *s, mpp_ch *out)
{
    int k = parse_name(ch_names, s);
    *out = (mpp_ch)(k < 0 ? 0 : k);
    return k < 0 ? -1 : 0;
}

/* o[key], one of names (its index into *out), or the rule it breaks. */
static int get_name(rd *r, const cJSON *o, const char *key, const char *path,
                    const char *const *names, const char *rule, int *out)
{
    char p[256];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return fail(r, p, "missing");
    if (!cJSON_IsString(v) || (*out = parse_name(names, v->valuestring)) < 0)
        return fail(r, p, "%s", rule);
    return TC_OK;
}

static int get_buf(rd *r, const cJSON *o, const char *key, const char *path, mpp_buf *out)
{
    int k = 0;
    int rc = get_name(r, o, key, path, buf_names,
                      "expected \"i\", \"o\" or \"s\" (execution_plan.cc:91-101)", &k);
    *out = (mpp_buf)k;
    return rc;
}

static int get_ch(rd *r, const cJSON *o, const char *key, const char *path, mpp_ch *out)
{
    int k = 0;
    int rc = get_name(r, o, key, path, ch_names,
                      "expected \"memory\", \"port\", \"switch\" or \"none\" (execution_plan.cc:103-115)", &k);
    *out = (mpp_ch)k;
    return rc;
}

static const cJSON *get_arr(rd *r, const cJSON *o, const char *key, const char *path, int optional)
{
    char p[256];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!optional)
            fail(r, p, "missing (MSCCL++'s parser iterates it unconditionally)");
        return NULL;
    }
    if (!cJSON_IsArray(v)) {
        fail(r, p, "expected an array");
        return NULL;
    }
    return v;
}

/* Is x an integer in 0..lim-1 (an index into a table of lim)? */
static int is_id(const cJSON *x, double lim)
{
    return cJSON_IsNumber(x) && x->valuedouble == (int)x->valuedouble && x->valuedouble >= 0 &&
           x->valuedouble < lim;
}

/* ------------------------------------------------------------ per GPU */

static int read_channels(rd *r, const cJSON *g, int rank, const char *gp, mpp_gpu *G)
{
    char p[256];
    const cJSON *chs = get_arr(r, g, "channels", gp, 0);
    if (!chs)
        return TC_INPUT;
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, chs) {
        snprintf(p, sizeof p, "%s.channels[%d]", gp, k++);
        mpp_ch t;
        if (!cJSON_IsObject(c))
            return fail(r, p, "expected an object");
        if (get_ch(r, c, "channel_type", p, &t))
            return TC_INPUT;
        if (t == MCH_NONE)
            continue;
        if (t == MCH_SWITCH) {
            mpp_buf b;
            if (get_buf(r, c, "buffer_type", p, &b))
                return TC_INPUT;
            const cJSON *gs = get_arr(r, c, "rank_groups", p, 0);
            if (!gs)
                return TC_INPUT;
            int gi = 0;
            const cJSON *grp;
            cJSON_ArrayForEach(grp, gs) {
                char q[300];
                snprintf(q, sizeof q, "%s.rank_groups[%d]", p, gi++);
                int sz;
                if (get_int(r, grp, "size", q, 0, 1 << 30, &sz))
                    return TC_INPUT;
                const cJSON *rs = get_arr(r, grp, "ranks", q, 0);
                if (!rs)
                    return TC_INPUT;
                int n = cJSON_GetArraySize(rs);
                G->chan[t] = xrealloc(G->chan[t], (size_t)(G->nchan[t] + 1) * sizeof(mpp_chan));
                mpp_chan *ch = &G->chan[t][G->nchan[t]++];
                memset(ch, 0, sizeof *ch);
                ch->type = t;
                ch->sw_buf = b;
                ch->ranks = xcalloc((size_t)(n ? n : 1), sizeof(int));
                int self = 0;
                for (int i = 0; i < n; i++) {
                    const cJSON *x = cJSON_GetArrayItem(rs, i);
                    if (!is_id(x, r->p->nranks))
                        return fail(r, q, "ranks[%d]: not a rank of this plan (0..%d)", i,
                                    r->p->nranks - 1);
                    ch->ranks[ch->nranks++] = (int)x->valuedouble;
                    self |= (int)x->valuedouble == rank;
                }
                if (!self)
                    return fail(r, q, "ranks: the group does not contain its own rank %d", rank);
            }
            continue;
        }
        const cJSON *to = get_arr(r, c, "connected_to", p, 0);
        if (!to)
            return TC_INPUT;
        int i = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, to) {
            if (!is_id(x, r->p->nranks))
                return fail(r, p, "connected_to[%d]: not a rank of this plan (0..%d)", i,
                            r->p->nranks - 1);
            int peer = (int)x->valuedouble;
            if (peer == rank)
                return fail(r, p, "connected_to[%d]: a channel to its own rank %d", i, rank);
            G->chan[t] = xrealloc(G->chan[t], (size_t)(G->nchan[t] + 1) * sizeof(mpp_chan));
            mpp_chan *ch = &G->chan[t][G->nchan[t]++];
            memset(ch, 0, sizeof *ch);
            ch->type = t;
            ch->peer = peer;
            ch->pair = 0;
            for (int j = 0; j < G->nchan[t] - 1; j++)
                ch->pair += G->chan[t][j].peer == peer;
            i++;
        }
    }
    return TC_OK;
}

static int read_rbufs(rd *r, const cJSON *g, const char *gp, mpp_gpu *G)
{
    char p[256];
    const cJSON *rbs = get_arr(r, g, "remote_buffers", gp, 0);
    if (!rbs)
        return TC_INPUT;
    G->nrbuf = cJSON_GetArraySize(rbs);
    G->rbuf = xcalloc((size_t)(G->nrbuf ? G->nrbuf : 1), sizeof(mpp_rbuf));
    for (int k = 0; k < G->nrbuf; k++) {
        const cJSON *b = cJSON_GetArrayItem(rbs, k);
        snprintf(p, sizeof p, "%s.remote_buffers[%d]", gp, k);
        if (!cJSON_IsObject(b))
            return fail(r, p, "expected an object");
        if (get_int(r, b, "rank", p, 0, r->p->nranks - 1, &G->rbuf[k].rank) ||
            get_buf(r, b, "type", p, &G->rbuf[k].type))
            return TC_INPUT;
        const cJSON *acc = get_arr(r, b, "access_channel_types", p, 0);
        if (!acc)
            return TC_INPUT;
        const cJSON *a;
        cJSON_ArrayForEach(a, acc) {
            mpp_ch t;
            if (!cJSON_IsString(a) || parse_ch(a->valuestring, &t) ||
                (t != MCH_MEMORY && t != MCH_PORT))
                return fail(r, p, "access_channel_types: expected \"memory\" or \"port\"");
            G->rbuf[k].access[t == MCH_PORT] = 1;
        }
    }
    return TC_OK;
}

static int read_sems(rd *r, const cJSON *g, const char *gp, mpp_gpu *G)
{
    const cJSON *ss = get_arr(r, g, "semaphores", gp, 1);
    if (r->err && r->err->code)
        return TC_INPUT;
    if (!ss)
        return TC_OK;
    G->nsem = cJSON_GetArraySize(ss);
    G->sem_init = xcalloc((size_t)(G->nsem ? G->nsem : 1), sizeof(int));
    for (int k = 0; k < G->nsem; k++) {
        char p[256];
        snprintf(p, sizeof p, "%s.semaphores[%d]", gp, k);
        if (get_int(r, cJSON_GetArrayItem(ss, k), "init_value", p, 0, 1 << 30, &G->sem_init[k]))
            return TC_INPUT;
    }
    return TC_OK;
}

/* A block's "channels" or "remote_buffer_refs": per type, block-local index
 * -> rank-level index. */
static int read_tb_tables(rd *r, const cJSON *tb, const char *tp, mpp_gpu *G, mpp_tb *T)
{
    char p[300];
    const cJSON *chs = get_arr(r, tb, "channels", tp, 0);
    if (!chs)
        return TC_INPUT;
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, chs) {
        snprintf(p, sizeof p, "%s.channels[%d]", tp, k++);
        mpp_ch t;
        if (get_ch(r, c, "channel_type", p, &t))
            return TC_INPUT;
        const cJSON *ids = get_arr(r, c, "channel_ids", p, 0);
        if (!ids)
            return TC_INPUT;
        const cJSON *x;
        int i = 0;
        cJSON_ArrayForEach(x, ids) {
            if (!is_id(x, G->nchan[t]))
                return fail(r, p, "channel_ids[%d]: no %s channel %g on this rank (it has %d; "
                            "MSCCL++ indexes its table out of range)",
                            i, t == MCH_MEMORY ? "memory" : t == MCH_PORT ? "port" :
                            t == MCH_SWITCH ? "switch" : "none", x->valuedouble, G->nchan[t]);
            if (T->nch[t] >= MPP_MAX_CHANNEL)
                return fail(r, p, "more than %d channels of one type in a threadblock (MAX_CHANNEL, "
                            "execution_common.hpp: written past the array)", MPP_MAX_CHANNEL);
            T->ch[t] = xrealloc(T->ch[t], (size_t)(T->nch[t] + 1) * sizeof(int));
            T->ch[t][T->nch[t]++] = (int)x->valuedouble;
            i++;
        }
    }
    const cJSON *rbs = get_arr(r, tb, "remote_buffer_refs", tp, 1);
    if (r->err && r->err->code)
        return TC_INPUT;
    k = 0;
    cJSON_ArrayForEach(c, rbs) {
        snprintf(p, sizeof p, "%s.remote_buffer_refs[%d]", tp, k++);
        mpp_ch t;
        if (get_ch(r, c, "access_channel_type", p, &t))
            return TC_INPUT;
        if (t != MCH_MEMORY && t != MCH_PORT)
            return fail(r, p, "access_channel_type: expected \"memory\" or \"port\"");
        const cJSON *ids = get_arr(r, c, "remote_buffer_ids", p, 0);
        if (!ids)
            return TC_INPUT;
        const cJSON *x;
        int i = 0;
        cJSON_ArrayForEach(x, ids) {
            if (!is_id(x, G->nrbuf))
                return fail(r, p, "remote_buffer_ids[%d]: no remote buffer %g (the rank has %d)", i,
                            x->valuedouble, G->nrbuf);
            int id = (int)x->valuedouble;
            if (!G->rbuf[id].access[t == MCH_PORT])
                return fail(r, p, "remote_buffer_ids[%d]: remote buffer %d is not accessed over %s "
                            "channels (its access_channel_types), so MSCCL++ has no handle for it",
                            i, id, t == MCH_PORT ? "port" : "memory");
            if (T->nrb[t] >= MPP_MAX_CHANNEL)
                return fail(r, p, "more than %d remote buffers of one access type in a threadblock "
                            "(MAX_CHANNEL: written past the array)", MPP_MAX_CHANNEL);
            T->rb[t] = xrealloc(T->rb[t], (size_t)(T->nrb[t] + 1) * sizeof(int));
            T->rb[t][T->nrb[t]++] = id;
            i++;
        }
    }
    return TC_OK;
}

/* ------------------------------------------------------------ operations */

static int read_refs(rd *r, const cJSON *op, const char *key, const char *op_path, int rank,
                     mpp_op *O, const mpp_gpu *G, const mpp_tb *T, mpp_ref *refs, int *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(op, key);
    *n = 0;
    if (!arr)
        return TC_OK;
    char p[300];
    snprintf(p, sizeof p, "%s.%s", op_path, key);
    if (!cJSON_IsArray(arr))
        return fail(r, p, "expected an array");
    int cnt = cJSON_GetArraySize(arr);
    if (cnt > MPP_MAX_REFS)
        return fail(r, p, "%d buffer references; MSCCL++'s Operation holds at most %d "
                    "(execution_common.hpp:98-118, written past the array)", cnt, MPP_MAX_REFS);
    for (int i = 0; i < cnt; i++) {
        const cJSON *b = cJSON_GetArrayItem(arr, i);
        char q[320];
        snprintf(q, sizeof q, "%s[%d]", p, i);
        if (!cJSON_IsObject(b))
            return fail(r, q, "expected an object");
        mpp_ref *R = &refs[i];
        memset(R, 0, sizeof *R);
        R->rank = rank;
        const mpp_gpu *owner = G;
        if (cJSON_GetObjectItemCaseSensitive(b, "buffer_id")) {
            R->kind = MREF_REMOTE;
            if (O->ch != MCH_MEMORY && O->ch != MCH_PORT)
                return fail(r, q, "buffer_id needs the op's channel_type memory or port "
                            "(execution_plan.cc throws \"Invalid channel type\")");
            if (get_int(r, b, "buffer_id", q, 0, 255, &R->id))
                return TC_INPUT;
            if (R->id >= T->nrb[O->ch])
                return fail(r, q, "buffer_id %d: the threadblock has %d remote buffers accessed over "
                            "%s channels (remote_buffer_refs); MSCCL++ indexes past its table",
                            R->id, T->nrb[O->ch], O->ch == MCH_PORT ? "port" : "memory");
            const mpp_rbuf *rb = &G->rbuf[T->rb[O->ch][R->id]];
            R->rank = rb->rank;
            R->type = rb->type;
            owner = &r->p->gpu[rb->rank];
        } else if (cJSON_GetObjectItemCaseSensitive(b, "switch_channel_id")) {
            R->kind = MREF_SWITCH;
            if (get_int(r, b, "switch_channel_id", q, 0, 255, &R->id))
                return TC_INPUT;
            if (R->id >= T->nch[MCH_SWITCH])
                return fail(r, q, "switch_channel_id %d: the threadblock has %d switch channels", R->id,
                            T->nch[MCH_SWITCH]);
            R->type = G->chan[MCH_SWITCH][T->ch[MCH_SWITCH][R->id]].sw_buf;
            R->rank = -1;
        } else {
            R->kind = MREF_LOCAL;
            if (get_buf(r, b, "type", q, &R->type))
                return TC_INPUT;
        }
        if (get_int(r, b, "index", q, 0, 1 << 30, &R->index) ||
            get_int(r, b, "size", q, 0, 1 << 30, &R->size))
            return TC_INPUT;
        /* Owner's chunk count; a switch group's members are checked at run.
         * A packet plan's scratch holds two plain chunks per scratch chunk
         * (data and flags, execution_plan.cc:206-207, per launch half): plain
         * refs reach 2 x scratch_chunks, packet refs (offsets doubled) half
         * that, which the run's bounds check finds. */
        long long have = owner->chunks[R->type];
        if (R->type == MB_S && r->p->proto_ll)
            have *= 2;
        if ((long long)R->index + R->size > have)
            return fail(r, q, "chunks %d..%d of buffer %s of rank %d, which has %d (MSCCL++ does not "
                        "check: it reads or writes past the buffer)",
                        R->index, R->index + R->size - 1, R->type == MB_I ? "i" : R->type == MB_O ? "o" : "s",
                        R->rank < 0 ? rank : R->rank, (int)have);
    }
    *n = cnt;
    return TC_OK;
}

static int lookup_op(const char *s)
{
    for (int t = 0; t < MOP_COUNT; t++)
        if (!strcmp(s, op_names[t]))
            return t;
    return -1;
}

/* The shape each op needs for the kernel to do what its name says
 * (execution_kernel.hpp's handlers read these fields without checking). */
static int check_shape(rd *r, const mpp_op *O, const mpp_tb *T, const mpp_plan *P, const mpp_gpu *G)
{
    char p[160];
    snprintf(p, sizeof p, "%s", O->path);
    int nloc_src = 0, nloc_dst = 0, nrem_src = 0, nrem_dst = 0;
    for (int i = 0; i < O->nsrc; i++)
        O->src[i].kind == MREF_LOCAL ? nloc_src++ : nrem_src++;
    for (int i = 0; i < O->ndst; i++)
        O->dst[i].kind == MREF_LOCAL ? nloc_dst++ : nrem_dst++;
    const char *nm = mpp_op_name(O->type);
#define REQ(c, ...) do { if (!(c)) return fail(r, p, __VA_ARGS__); } while (0)
    switch (O->type) {
    case MOP_SIGNAL: case MOP_WAIT: case MOP_RLXSIGNAL: case MOP_RLXWAIT: case MOP_FLUSH:
        REQ(O->ch == MCH_MEMORY || O->ch == MCH_PORT, "%s needs channel_type memory or port", nm);
        REQ(O->type != MOP_FLUSH || O->ch == MCH_PORT, "flush needs channel_type port "
            "(execution_kernel.hpp:120-127 flushes port channels)");
        REQ(O->nch > 0, "%s needs channel_ids", nm);
        break;
    case MOP_PUT: case MOP_PWS: case MOP_PWSF:
        REQ(O->ch == MCH_MEMORY || O->ch == MCH_PORT, "%s needs channel_type memory or port", nm);
        REQ(O->nsrc >= 1 && O->ndst == O->nsrc && nloc_src == O->nsrc && nrem_dst == O->ndst,
            "%s needs local src_buff and as many remote dst_buff", nm);
        REQ(O->ch != MCH_PORT || O->nch >= O->ndst, "%s over port channels needs a channel_ids "
            "entry per dst_buff (thread i posts on channel_ids[i])", nm);
        break;
    case MOP_GET:
        REQ(O->ch == MCH_MEMORY, "get needs channel_type memory");
        REQ(O->nsrc >= 1 && O->ndst == O->nsrc && nrem_src == O->nsrc && nloc_dst == O->ndst,
            "get needs remote src_buff and as many local dst_buff");
        break;
    case MOP_COPY: case MOP_CPKT: case MOP_UPKT:
        REQ(O->nsrc >= 1 && O->ndst >= 1 && O->src[0].kind == MREF_LOCAL && O->dst[0].kind == MREF_LOCAL,
            "%s needs a local src_buff[0] and dst_buff[0]", nm);
        break;
    case MOP_RE: case MOP_REPKT:
        REQ(O->nsrc >= 1 && nloc_src == O->nsrc && O->ndst >= 1 && O->dst[0].kind == MREF_LOCAL,
            "%s needs local src_buff and a local dst_buff[0]", nm);
        break;
    case MOP_RES: case MOP_RESPKT:
        REQ(O->nsrc >= 1 && nloc_src == O->nsrc && O->ndst >= 1 && O->dst[0].kind == MREF_LOCAL &&
            nrem_dst == O->ndst - 1, "%s needs local src_buff, a local dst_buff[0] and remote dst_buff[1..]", nm);
        REQ(O->ndst == 1 || O->ch == MCH_MEMORY, "%s sends over memory channels only", nm);
        break;
    case MOP_RECPKT: case MOP_RECSPKT:
        REQ(O->nsrc >= 1 && nloc_src == O->nsrc && O->ndst >= 2 && O->dst[0].kind == MREF_LOCAL &&
            O->dst[1].kind == MREF_LOCAL && nrem_dst == O->ndst - 2,
            "%s needs local src_buff, local dst_buff[0] and [1], remote dst_buff[2..]", nm);
        REQ(O->ndst == 2 || O->ch == MCH_MEMORY, "%s sends over memory channels only", nm);
        break;
    case MOP_RRE: case MOP_RRES:
        REQ(O->ch == MCH_MEMORY, "%s reads peers over memory channels: needs channel_type memory", nm);
        REQ(O->nsrc >= 1 && O->src[0].kind == MREF_LOCAL && nrem_src == O->nsrc - 1 && O->ndst >= 1 &&
            O->dst[0].kind == MREF_LOCAL && nrem_dst == O->ndst - 1,
            "%s needs a local src_buff[0], remote src_buff[1..], a local dst_buff[0], remote dst_buff[1..]", nm);
        break;
    case MOP_PPKT: case MOP_RPPKT:
        REQ(O->ch == MCH_MEMORY || O->ch == MCH_PORT, "%s needs channel_type memory or port", nm);
        REQ(O->nsrc >= 1 && nloc_src == O->nsrc && O->ndst >= 1 && nrem_dst == O->ndst,
            "%s needs local src_buff and remote dst_buff", nm);
        REQ(O->type != MOP_PPKT || O->nsrc >= O->ndst || O->ch == MCH_PORT,
            "ppkt reads src_buff[i] for dst_buff[i]: needs as many src_buff as dst_buff");
        REQ(O->ch != MCH_PORT || O->nch >= O->ndst, "%s over port channels needs a channel_ids entry per dst_buff", nm);
        REQ(O->type != MOP_PPKT || O->ch != MCH_PORT || O->nsrc >= O->ndst,
            "ppkt over port channels reads src_buff[i] for dst_buff[i]");
        break;
    case MOP_GLRES:
        REQ(O->nsrc >= 1 && O->ndst >= 1 && O->src[0].kind == MREF_SWITCH && O->dst[0].kind == MREF_SWITCH,
            "glres needs switch src_buff[0] and dst_buff[0] (switch_channel_id)");
        break;
    case MOP_GSTORE: case MOP_GSTOREPKT:
        REQ(O->nsrc >= 1 && O->ndst >= 1 && O->src[0].kind == MREF_LOCAL && O->dst[0].kind == MREF_SWITCH,
            "%s needs a local src_buff[0] and a switch dst_buff[0]", nm);
        break;
    case MOP_BARRIER:
        REQ(O->barrier_id >= 0 && O->barrier_id < MPP_MAX_SYNCERS, "barrier needs barrier_id 0..%d "
            "(MAX_DEVICE_SYNCERS)", MPP_MAX_SYNCERS - 1);
        REQ(O->barrier_n >= 1, "barrier needs num_threadblocks >= 1");
        break;
    case MOP_SEMACQ: case MOP_SEMREL:
        REQ(O->nsem > 0, "%s needs semaphore_ids", nm);
        break;
    default:
        break;
    }
    /* A port op posts on channel_ids[i] to that channel's peer: the remote
     * buffer it names must be the peer's (the proxy writes over that
     * connection; another rank's memory id there is not its memory). */
    if (O->ch == MCH_PORT && (O->type == MOP_PUT || O->type == MOP_PWS || O->type == MOP_PWSF ||
                              O->type == MOP_PPKT || O->type == MOP_RPPKT))
        for (int i = 0; i < O->ndst && i < O->nch; i++) {
            int peer = G->chan[MCH_PORT][T->ch[MCH_PORT][O->chan[i]]].peer;
            REQ(O->dst[i].rank == peer, "dst_buff[%d] is rank %d's buffer but channel_ids[%d] is a port "
                "channel to rank %d", i, O->dst[i].rank, i, peer);
        }
    /* Packets under Simple: the scratch is not doubled; the run finds the overflow. */
    (void)P;
    (void)T;
#undef REQ
    return TC_OK;
}


static int read_op(rd *r, const cJSON *op, const char *path, int rank, const mpp_gpu *G,
                   const mpp_tb *T, mpp_op *O, int depth)
{
    memset(O, 0, sizeof *O);
    snprintf(O->path, sizeof O->path, "%s", path);
    O->tbg_size = 1;
    if (!cJSON_IsObject(op))
        return fail(r, path, "expected an object");
    char p[300];
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(op, "name");
    snprintf(p, sizeof p, "%s.name", path);
    if (!nm)
        return fail(r, p, "missing");
    if (!cJSON_IsString(nm))
        return fail(r, p, "expected a string");
    int t = lookup_op(nm->valuestring);
    if (t < 0)
        return fail(r, p, "unknown op '%s' (MSCCL++ throws \"Invalid operation type\", "
                    "execution_plan.cc:87)", nm->valuestring);
    O->type = (mpp_optype)t;
    O->ch = MCH_NONE;
    if (cJSON_GetObjectItemCaseSensitive(op, "channel_type") && get_ch(r, op, "channel_type", path, &O->ch))
        return TC_INPUT;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(op, "channel_ids");
    if (ids) {
        snprintf(p, sizeof p, "%s.channel_ids", path);
        if (!cJSON_IsArray(ids))
            return fail(r, p, "expected an array");
        int n = cJSON_GetArraySize(ids);
        if (n > MPP_MAX_CHANNEL_PER_OP)
            return fail(r, p, "%d channels; an op holds at most %d (MAX_CHANNEL_PER_OPERATION, "
                        "written past the array)", n, MPP_MAX_CHANNEL_PER_OP);
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(ids, i);
            int lim = O->ch >= MCH_MEMORY ? T->nch[O->ch] : 0;
            if (!is_id(x, lim))
                return fail(r, p, "[%d]: the threadblock has %d %s channels (MSCCL++ indexes past its "
                            "table)", i, lim, O->ch == MCH_MEMORY ? "memory" : O->ch == MCH_PORT ? "port" :
                            O->ch == MCH_SWITCH ? "switch" : "channel_type none");
            O->chan[O->nch++] = (int)x->valuedouble;
        }
    }
    const cJSON *tbg = cJSON_GetObjectItemCaseSensitive(op, "tbg_info");
    if (tbg) {
        snprintf(p, sizeof p, "%s.tbg_info", path);
        if (get_int(r, tbg, "tbg_size", p, 1, 1024, &O->tbg_size) ||
            get_int(r, tbg, "tb_id", p, 0, O->tbg_size - 1, &O->tbg_id))
            return TC_INPUT;
    }
    if (read_refs(r, op, "src_buff", path, rank, O, G, T, O->src, &O->nsrc) ||
        read_refs(r, op, "dst_buff", path, rank, O, G, T, O->dst, &O->ndst))
        return TC_INPUT;
    if (O->type == MOP_BARRIER) {
        if (get_int(r, op, "barrier_id", path, 0, MPP_MAX_SYNCERS - 1, &O->barrier_id) ||
            get_int(r, op, "num_threadblocks", path, 1, 1 << 20, &O->barrier_n))
            return TC_INPUT;
    }
    const cJSON *sems = cJSON_GetObjectItemCaseSensitive(op, "semaphore_ids");
    if (sems) {
        snprintf(p, sizeof p, "%s.semaphore_ids", path);
        if (!cJSON_IsArray(sems))
            return fail(r, p, "expected an array");
        int n = cJSON_GetArraySize(sems);
        if (n > MPP_MAX_SEMS_PER_OP)
            return fail(r, p, "%d semaphores; an op holds at most %d (MAX_DEVICE_SEMAPHORES)", n,
                        MPP_MAX_SEMS_PER_OP);
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(sems, i);
            if (!is_id(x, G->nsem))
                return fail(r, p, "[%d]: the rank has %d semaphores", i, G->nsem);
            O->sem[O->nsem++] = (int)x->valuedouble;
        }
    }
    if (O->type == MOP_PIPELINE) {
        if (depth > 0)
            return fail(r, p, "a pipeline inside a pipeline (MSCCL++ appends only one level of inner "
                        "ops; the DSL refuses it, program.py:263-266)");
        const cJSON *ic = need(r, op, "iter_context", path);
        if (!ic)
            return TC_INPUT;
        snprintf(p, sizeof p, "%s.iter_context", path);
        if (get_ll(r, ic, "unit_size", p, 0, 0, 1, 0xffffffffLL, &O->unit_size) ||
            get_int(r, ic, "num_chunks", p, 0, 1 << 30, &O->num_chunks))
            return TC_INPUT;
        const cJSON *ops = get_arr(r, op, "ops", path, 0);
        if (!ops)
            return TC_INPUT;
        O->ninner = cJSON_GetArraySize(ops);
        if (O->ninner > 255)
            return fail(r, path, "ops: %d inner ops; nOperations is a uint8 (execution_common.hpp:127)",
                        O->ninner);
        O->inner = xcalloc((size_t)(O->ninner ? O->ninner : 1), sizeof(mpp_op));
        for (int i = 0; i < O->ninner; i++) {
            char q[200];
            snprintf(q, sizeof q, "%s.ops[%d]", path, i);
            if (read_op(r, cJSON_GetArrayItem(ops, i), q, rank, G, T, &O->inner[i], depth + 1))
                return TC_INPUT;
        }
    }
    r->p->op_count[O->type]++;
    return check_shape(r, O, T, r->p, G);
}

static int read_gpu(rd *r, const cJSON *g, int rank, mpp_gpu *G)
{
    char gp[64];
    snprintf(gp, sizeof gp, "gpus[%d]", rank);
    const cJSON *tbs = get_arr(r, g, "threadblocks", gp, 0);
    if (!tbs)
        return TC_INPUT;
    if (read_sems(r, g, gp, G))
        return TC_INPUT;
    G->ntb = cJSON_GetArraySize(tbs);
    G->tb = xcalloc((size_t)(G->ntb ? G->ntb : 1), sizeof(mpp_tb));
    for (int t = 0; t < G->ntb; t++) {
        const cJSON *tb = cJSON_GetArrayItem(tbs, t);
        char tp[96];
        snprintf(tp, sizeof tp, "%s.threadblocks[%d]", gp, t);
        int id;
        if (!cJSON_IsObject(tb))
            return fail(r, tp, "expected an object");
        if (get_int(r, tb, "id", tp, 0, 1 << 30, &id))
            return TC_INPUT;
        if (id != t)
            return fail(r, tp, "id %d at position %d: MSCCL++ stores channels by id and operations by "
                        "position (execution_plan.cc:391-474), so ids must be 0,1,2,... in order", id, t);
        mpp_tb *T = &G->tb[t];
        if (read_tb_tables(r, tb, tp, G, T))
            return TC_INPUT;
        const cJSON *ops = get_arr(r, tb, "ops", tp, 0);
        if (!ops)
            return TC_INPUT;
        T->nops = cJSON_GetArraySize(ops);
        T->ops = xcalloc((size_t)(T->nops ? T->nops : 1), sizeof(mpp_op));
        for (int k = 0; k < T->nops; k++) {
            char op_path[128];
            snprintf(op_path, sizeof op_path, "%s.ops[%d]", tp, k);
            if (read_op(r, cJSON_GetArrayItem(ops, k), op_path, rank, G, T, &T->ops[k], 0))
                return TC_INPUT;
            T->nexec += 1 + T->ops[k].ninner;
        }
        if (T->nexec > MPP_MAX_OPERATION)
            return fail(r, tp, "%d operations (pipeline bodies included); MSCCL++'s executor throws "
                        "above %d (MAX_OPERATION, executor.cc:478-482)", T->nexec, MPP_MAX_OPERATION);
    }
    return TC_OK;
}

/* Channels pair by order per (peer, type): the k-th r->p meets the k-th
 * p->r; a side with fewer opens the missing ones itself (execution_plan.cc:
 * 141-158).  Checked here: a barrier's num_threadblocks against the blocks. */
static int check_cross(rd *r)
{
    mpp_plan *P = r->p;
    for (int g = 0; g < P->nranks; g++) {
        const mpp_gpu *G = &P->gpu[g];
        for (int t = 0; t < G->ntb; t++)
            for (int k = 0; k < G->tb[t].nops; k++) {
                const mpp_op *O = &G->tb[t].ops[k];
                if (O->type == MOP_BARRIER && O->barrier_n > G->ntb)
                    return fail(r, O->path, "num_threadblocks %d but the rank launches %d blocks: the "
                                "barrier never completes", O->barrier_n, G->ntb);
            }
        for (int c = 0; c < G->nchan[MCH_SWITCH]; c++) {
            const mpp_chan *ch = &G->chan[MCH_SWITCH][c];
            for (int i = 0; i < ch->nranks; i++) {
                const mpp_gpu *H = &P->gpu[ch->ranks[i]];
                if (H->chunks[ch->sw_buf] != G->chunks[ch->sw_buf]) {
                    char p[96];
                    snprintf(p, sizeof p, "gpus[%d].channels", g);
                    return fail(r, p, "switch group over ranks whose %s buffers have different chunk "
                                "counts (%d here, %d on rank %d)", ch->sw_buf == MB_I ? "i" :
                                ch->sw_buf == MB_O ? "o" : "s", G->chunks[ch->sw_buf],
                                H->chunks[ch->sw_buf], ch->ranks[i]);
                }
            }
        }
    }
    return TC_OK;
}

void mpp_free(mpp_plan *p)
{
    if (!p)
        return;
    for (int g = 0; g < p->nranks && p->gpu; g++) {
        mpp_gpu *G = &p->gpu[g];
        for (int c = 0; c < 4; c++) {
            for (int i = 0; i < G->nchan[c]; i++)
                free(G->chan[c][i].ranks);
            free(G->chan[c]);
        }
        free(G->rbuf);
        free(G->sem_init);
        for (int t = 0; t < G->ntb; t++) {
            mpp_tb *T = &G->tb[t];
            for (int c = 0; c < 4; c++) {
                free(T->ch[c]);
                free(T->rb[c]);
            }
            for (int k = 0; k < T->nops; k++)
                free(T->ops[k].inner);
            free(T->ops);
        }
        free(G->tb);
    }
    free(p->gpu);
    free(p->path);
    free(p->name);
    free(p->collective);
    free(p);
}

static int read_top(rd *r, const cJSON *j)
{
    mpp_plan *P = r->p;
    const cJSON *v;
    if (!cJSON_IsObject(j))
        return fail(r, "$", "expected a JSON object");
    if (!(v = need(r, j, "name", "name")))
        return TC_INPUT;
    if (!cJSON_IsString(v))
        return fail(r, "name", "expected a string");
    P->name = xstrdup(v->valuestring);
    if (!(v = need(r, j, "collective", "collective")))
        return TC_INPUT;
    if (!cJSON_IsString(v))
        return fail(r, "collective", "expected a string");
    P->collective = xstrdup(v->valuestring);
    if (!(v = need(r, j, "protocol", "protocol")))
        return TC_INPUT;
    if (!cJSON_IsString(v))
        return fail(r, "protocol", "expected a string");
    P->proto_ll = !strcmp(v->valuestring, "LL");
    long long x;
    if (get_bool(r, j, "inplace", 0, 0, &P->inplace) ||
        get_bool(r, j, "reuse_resources", 1, 0, &P->reuse) ||
        get_bool(r, j, "use_double_scratch_buffer", 1, 0, &P->dbl) ||
        get_ll(r, j, "num_threads_per_block", "", 1, 1024, 1, MPP_MAX_THREADS, &x))
        return TC_INPUT;
    P->threads = (int)x;
    if (get_ll(r, j, "buffer_alignment", "", 1, 16, 1, 1 << 30, &P->align))
        return TC_INPUT;
    P->min_size = 0;
    P->max_size = ~0ULL;
    v = cJSON_GetObjectItemCaseSensitive(j, "min_message_size");
    if (v) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0)
            return fail(r, "min_message_size", "expected a non-negative integer");
        P->min_size = (unsigned long long)v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(j, "max_message_size");
    if (v) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0)
            return fail(r, "max_message_size", "expected a non-negative integer");
        P->max_size = v->valuedouble >= 1.8e19 ? ~0ULL : (unsigned long long)v->valuedouble;
    }
    const cJSON *gpus = get_arr(r, j, "gpus", "", 0);
    if (!gpus)
        return TC_INPUT;
    P->nranks = cJSON_GetArraySize(gpus);
    if (P->nranks < 1)
        return fail(r, "gpus", "empty: no rank to run");
    P->gpu = xcalloc((size_t)P->nranks, sizeof(mpp_gpu));
    /* First pass: ids, chunk counts, channels, remote buffers (an op's
     * reference is checked against its owner's chunks). */
    for (int g = 0; g < P->nranks; g++) {
        const cJSON *gj = cJSON_GetArrayItem(gpus, g);
        char gp[64];
        snprintf(gp, sizeof gp, "gpus[%d]", g);
        if (!cJSON_IsObject(gj))
            return fail(r, gp, "expected an object");
        int id;
        if (get_int(r, gj, "id", gp, 0, 1 << 30, &id))
            return TC_INPUT;
        if (id != g)
            return fail(r, gp, "id %d at position %d (MSCCL++ throws \"GPU rank does not match\", "
                        "execution_plan.cc:256-259)", id, g);
        mpp_gpu *G = &P->gpu[g];
        static const char *const keys[MB_N] = {"input_chunks", "output_chunks", "scratch_chunks"};
        for (int b = 0; b < MB_N; b++)
            if (get_int(r, gj, keys[b], gp, 0, 1 << 30, &G->chunks[b]))
                return TC_INPUT;
        if (G->chunks[MB_I] == 0 || G->chunks[MB_O] == 0) {
            char p[96];
            snprintf(p, sizeof p, "%s.%s", gp, G->chunks[MB_I] == 0 ? "input_chunks" : "output_chunks");
            return fail(r, p, "0: MSCCL++'s size check divides by it (execution_plan.cc:301-304, SIGFPE; "
                        "docs/mscclpp.md section 8 item 10)");
        }
        if (read_channels(r, gj, g, gp, G) || read_rbufs(r, gj, gp, G))
            return TC_INPUT;
        P->has_switch |= G->nchan[MCH_SWITCH] > 0;
    }
    for (int g = 0; g < P->nranks; g++)
        if (read_gpu(r, cJSON_GetArrayItem(gpus, g), g, &P->gpu[g]))
            return TC_INPUT;
    return check_cross(r);
}

mpp_plan *mpp_parse(const char *text, const char *label, tc_err *err)
{
    tc_err local;
    if (!err)
        err = &local;
    tc_err_clear(err);
    const char *parsed = text;
    cJSON *j = jsonin_parse(text, label, &PLAN_DOC, &parsed, err);
    if (!j)
        return NULL;
    mpp_plan *p = xcalloc(1, sizeof *p);
    p->path = xstrdup(label);
    rd r = {label, parsed, err, p};
    int rc = read_top(&r, j);
    cJSON_Delete(j);
    if (rc != TC_OK) {
        if (!err->code)
            tc_err_set(err, TC_INPUT, "%s: unreadable plan", label);
        mpp_free(p);
        return NULL;
    }
    return p;
}

mpp_plan *mpp_read(const char *path, tc_err *err)
{
    char *text = jsonin_read_file(path, &PLAN_DOC, err);
    if (!text)
        return NULL;
    mpp_plan *p = mpp_parse(text, path, err);
    free(text);
    return p;
}

int mpp_nranks(const mpp_plan *p) { return p->nranks; }
const char *mpp_name(const mpp_plan *p) { return p->name; }
const char *mpp_collective(const mpp_plan *p) { return p->collective; }
int mpp_uses_switch(const mpp_plan *p) { return p->has_switch; }

int mpp_coll(const mpp_plan *p)
{
    static const struct { const char *s; coll_kind k; } m[] = {
        {"allreduce", COLL_ALLREDUCE}, {"allgather", COLL_ALLGATHER},
        {"reducescatter", COLL_REDUCESCATTER}, {"alltoall", COLL_ALLTOALL}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(p->collective, m[i].s))
            return (int)m[i].k;
    return -1;
}
