/* mpp_json.c — the JSON pieces shared by the MSCCL++ plan writers (see
 * mpp_json.h). */
#include "mpp_json.h"

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

cJSON *mpp_j_plan(const prog *p, const mpp_opts *o, int ll, unsigned long long cap, tc_err *err)
{
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
    cJSON_AddStringToObject(j, "protocol", ll ? "LL" : "Simple");
    cJSON_AddBoolToObject(j, "inplace", o->inplace);
    cJSON_AddBoolToObject(j, "reuse_resources", 0);
    cJSON_AddArrayToObject(j, "gpus");
    cJSON_AddNumberToObject(j, "num_threads_per_block", MPP_THREADS_PER_BLOCK);
    /* LL: consecutive launches use alternate scratch halves, so a packet of
     * this launch never lands where the last one's are still read */
    cJSON_AddBoolToObject(j, "use_double_scratch_buffer", ll);
    cJSON_AddNumberToObject(j, "buffer_alignment", MPP_BUFFER_ALIGNMENT);
    add_u64(j, "min_message_size", (unsigned long long)o->min_bytes);
    add_u64(j, "max_message_size", hi);
    return j;
}

char *mpp_j_text(cJSON *j, tc_err *err)
{
    char *raw = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!raw) {
        tc_err_set(err, TC_INPUT, "out of memory writing the MSCCL++ plan");
        return NULL;
    }
    size_t n = strlen(raw);
    char *text = xmalloc(n + 2);    /* a trailing newline, as a text file has */
    memcpy(text, raw, n);
    text[n] = '\n';
    text[n + 1] = '\0';
    cJSON_free(raw);
    return text;
}

cJSON *mpp_j_ints(const int *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

cJSON *mpp_j_nop(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "nop");
    return o;
}

cJSON *mpp_j_sync(const char *name, const char *type, const int *ids, int n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddItemToObject(o, "channel_ids", mpp_j_ints(ids, n));
    cJSON_AddStringToObject(o, "channel_type", type);
    return o;
}

cJSON *mpp_j_ref(const char *key, int id, const char *type, int index, int size)
{
    cJSON *r = cJSON_CreateObject();
    if (type)
        cJSON_AddStringToObject(r, "type", type);
    else
        cJSON_AddNumberToObject(r, key, id);
    cJSON_AddNumberToObject(r, "index", index);
    cJSON_AddNumberToObject(r, "size", size);
    return r;
}

cJSON *mpp_j_chans(const char *type, const int *ids, int n)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "channel_type", type);
    cJSON_AddItemToObject(m, "channel_ids", mpp_j_ints(ids, n));
    return m;
}
