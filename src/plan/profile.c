/* profile.c — a job's calls by size (contract in profile.h).
 *
 * Why its own file: the plan weighs files by it, but reading the user's
 * text is a job apart from choosing. */
#define _XOPEN_SOURCE 700     /* strtok_r */
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../util/jsonin.h"
#include "../util/mem.h"

#define PROFILE_MAX_BYTES (64L << 20)
#define MAXF 8

/* Split line s (modified) into at most MAXF fields at spaces, tabs and
 * commas; the number of fields, MAXF + 1 if more. */
static int split(char *s, char **f)
{
    int n = 0;
    char *st = NULL;
    for (char *p = strtok_r(s, " \t\r,", &st); p; p = strtok_r(NULL, " \t\r,", &st))
        if (n < MAXF)
            f[n++] = p;
        else
            return MAXF + 1;
    return n;
}

/* A whole positive integer; -1 if s is not one. */
static long long whole(const char *s)
{
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    return errno == ERANGE || v <= 0 ? -1 : v;
}

static int add(profile *p, int *cap, long long bytes, double count)
{
    p->calls = xgrow(p->calls, cap, p->n + 1, sizeof *p->calls);
    p->calls[p->n++] = (profile_call){bytes, count};
    p->total += count;
    return TC_OK;
}

/* Bytes per element of a PyTorch dtype as its profiler names it (c10's
 * ScalarType names); 0 if unknown. */
static int torch_dtype_bytes(const char *d)
{
    static const struct {
        const char *name;
        int bytes;
    } T[] = {{"Byte", 1}, {"Char", 1}, {"Bool", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1},
             {"Short", 2}, {"Half", 2}, {"BFloat16", 2}, {"UInt16", 2}, {"Int", 4},
             {"Float", 4}, {"UInt32", 4}, {"Long", 8}, {"Double", 8}, {"UInt64", 8}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(d, T[i].name))
            return T[i].bytes;
    return 0;
}

/* Whether PyTorch's collective name (allreduce, all_gather, _allgather_base,
 * reduce_scatter_tensor_coalesced, ...) is collective k: its letters, '_'
 * dropped, hold k's name. */
static int torch_coll_is(const char *name, coll_kind k)
{
    char flat[96];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof flat; p++)
        if (*p != '_')
            flat[n++] = (char)tolower((unsigned char)*p);
    flat[n] = '\0';
    return strstr(flat, coll_name(k)) != NULL;
}

/* One event's call, if it is a collective k with a size: 1 and *bytes. */
static int torch_event(const cJSON *ev, coll_kind k, long long *bytes)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(ev, "args");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(a, "Collective name");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(a, "In msg nelems");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(a, "Out msg nelems");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "dtype");
    if (!cJSON_IsString(c) || !cJSON_IsNumber(in) || !cJSON_IsString(d) ||
        !torch_coll_is(c->valuestring, k))
        return 0;
    double n = in->valuedouble;
    if (cJSON_IsNumber(o) && o->valuedouble > n)
        n = o->valuedouble;
    int eb = torch_dtype_bytes(d->valuestring);
    *bytes = (long long)n * eb;
    return eb > 0 && *bytes > 0;
}

/* A PyTorch profiler trace (Kineto's JSON): the GPU kernels of collective
 * k (cat "kernel" with "Collective name"), else the CPU ops that record
 * them (name "record_param_comms"): each one call of max(In, Out msg
 * nelems) x the dtype's bytes, the larger per-rank buffer. */
static int load_torch(const char *path, const char *text, coll_kind k, profile *out, tc_err *err)
{
    static const jsonin_doc doc = {"PyTorch profiler trace", PROFILE_MAX_BYTES, 0};
    cJSON *j = jsonin_parse(text, path, &doc, NULL, err);
    if (!j)
        return TC_INPUT;
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
    if (!cJSON_IsArray(evs)) {
        cJSON_Delete(j);
        return tc_err_set(err, TC_INPUT, "%s: a JSON profile is a PyTorch profiler trace: "
                          "expected its \"traceEvents\" array", path);
    }
    int cap = 0;
    for (int pass = 0; pass < 2 && out->n == 0; pass++) {
        const cJSON *ev;
        cJSON_ArrayForEach(ev, evs) {
            const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
            int take = pass == 0 ? cJSON_IsString(cat) && !strcmp(cat->valuestring, "kernel")
                                 : cJSON_IsString(nm) &&
                                       !strcmp(nm->valuestring, "record_param_comms");
            long long b;
            if (take && torch_event(ev, k, &b))
                add(out, &cap, b, 1);
        }
    }
    cJSON_Delete(j);
    if (out->n == 0)
        return tc_err_set(err, TC_INPUT, "%s: the trace records no %s call (no event with "
                          "args \"Collective name\", \"In msg nelems\" and \"dtype\")", path,
                          coll_name(k));
    return TC_OK;
}

int profile_load(const char *path, coll_kind k, profile *out, tc_err *err)
{
    static const jsonin_doc doc = {"profile", PROFILE_MAX_BYTES, 0};
    memset(out, 0, sizeof *out);
    char *text = jsonin_read_file(path, &doc, err);
    if (!text)
        return TC_INPUT;
    const char *first = text + strspn(text, " \t\r\n");
    if (*first == '{') {
        int r = load_torch(path, text, k, out, err);
        free(text);
        if (r != TC_OK)
            profile_free(out);
        return r;
    }
    int cap = 0, line = 0, rc = TC_OK;
    char *save = NULL;
    for (char *l = text; rc == TC_OK && l; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        line++;
        while (isspace((unsigned char)*l))
            l++;
        if (!*l || *l == '#' || strstr(l, "NCCL INFO") || strstr(l, "NCCL WARN"))
            continue;
        char *f[MAXF];
        int n = split(l, f);
        if (line == 1 && n == 2 && !strcmp(f[0], "bytes") && !strcmp(f[1], "count"))
            continue;
        long long b = n >= 1 ? whole(f[0]) : -1;
        if (n == 2) {
            long long c = whole(f[1]);
            if (b < 0 || c < 0)
                rc = tc_err_set(err, TC_INPUT, "%s:%d: expected \"BYTES COUNT\", two positive "
                                "whole numbers, got '%s %s'", path, line, f[0], f[1]);
            else
                add(out, &cap, b, (double)c);
        } else if (n >= 6 && b > 0 && whole(f[1]) > 0 && isalpha((unsigned char)f[2][0])) {
            add(out, &cap, b, 1);      /* an nccl-tests row: one call of its size */
        } else {
            rc = tc_err_set(err, TC_INPUT, "%s:%d: expected \"BYTES COUNT\" or an nccl-tests "
                            "row (size count type redop root time ...), got '%s%s'", path,
                            line, n > 0 ? f[0] : "", n > 1 ? " ..." : "");
        }
    }
    free(text);
    if (rc == TC_OK && out->n == 0)
        rc = tc_err_set(err, TC_INPUT, "%s: lists no call (expected \"BYTES COUNT\" lines or "
                        "nccl-tests rows)", path);
    if (rc != TC_OK)
        profile_free(out);
    return rc;
}

void profile_free(profile *p)
{
    free(p->calls);
    memset(p, 0, sizeof *p);
}
