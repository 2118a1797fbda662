/* mpp_report.c — what taccl-run says about an MSCCL++ plan: the text
 * report, the JSON object, the size sweep, the trace and the routes.
 *
 * Why apart from run.c: run.c's report is about an MSCCL program (steps,
 * modes, loaders, tiles); a plan's has the same lines where they mean the
 * same (size, result, time, algbw/busbw by the nccl-tests conventions of
 * model/collective.h, bound) and its own where they do not (ops, blocks,
 * channels, no postcondition for "test" plans). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../model/collective.h"
#include "../util/file.h"
#include "../util/mem.h"
#include "../util/size.h"
#include "mpp_int.h"

static void counts(const mpp_plan *p, long long *tbs, long long *ops, long long *chans)
{
    *tbs = *ops = *chans = 0;
    for (int g = 0; g < p->nranks; g++) {
        *tbs += p->gpu[g].ntb;
        for (int c = 0; c < 4; c++)
            *chans += p->gpu[g].nchan[c];
        for (int t = 0; t < p->gpu[g].ntb; t++)
            *ops += p->gpu[g].tb[t].nexec;
    }
}

static const char *verdict(const mpp_report *r)
{
    const hazard *h = hazard_verdict(&r->hz);
    if (h)
        return h->msg;
    if (r->hz.n > 0)
        return r->hz.v[0].msg;
    return "did not finish";
}

void mpp_report_print(FILE *f, const mpp_report *r, const mpp_plan *p, const topo *t,
                      const char *file, int max_hazards)
{
    long long tbs, ops, chans;
    counts(p, &tbs, &ops, &chans);
    fprintf(f, "plan      %s: MSCCL++ plan '%s', %s, %d ranks, %lld threadblocks, %lld ops, %lld "
            "channels, protocol %s\n", file, p->name, p->collective, p->nranks, tbs, ops, chans,
            p->proto_ll ? "LL" : "Simple");
    if (t->is_default)
        fprintf(f, "topology  default: %d ranks on one switch, H100/NVSwitch figures assumed "
                "(timing indicative only; pass --topo)\n", t->nranks);
    else
        fprintf(f, "topology  %s: %d node%s x %d ranks\n", t->name, t->nnodes, t->nnodes == 1 ? "" : "s",
                t->ranks_per_node);
    char sz[64];
    fprintf(f, "size      %s per rank (input %lld B, output %lld B, %lld B per chunk), %s, %s\n",
            size_format(r->size_bytes, sz, sizeof sz), r->in_bytes, r->out_bytes, r->chunk_bytes,
            r->inplace ? "in place" : "out of place",
            !r->data ? "timing only (data not checked)" :
            r->has_post ? "data moved and checked" : "data moved");
    if (!r->has_post)
        fprintf(f, "check     no postcondition for collective %s\n", p->collective);
    if (!r->verified) {
        const char *first = verdict(r);
        fprintf(f, "result    FAILED: %s\n", first);
        int shown = 0;
        for (int i = 0; i < r->hz.n && shown < max_hazards; i++)
            if (r->hz.v[i].msg != first) {
                fprintf(f, "          %s\n", r->hz.v[i].msg);
                shown++;
            }
        if (r->hz.n - 1 > shown)
            fprintf(f, "          ... and %d more\n", r->hz.n - 1 - shown);
        if (r->wrong_elems > 0)
            fprintf(f, "          %lld wrong output elements\n", r->wrong_elems);
    } else {
        fprintf(f, "result    %s\n", r->has_post && r->data ? "verified" : "completed, no hazard");
    }
    if (r->finished) {
        int ck = mpp_coll(p);
        if (ck >= 0) {
            double algbw = coll_algbw_gbps((coll_kind)ck, (double)r->size_bytes, r->time_us);
            fprintf(f, "time      %.3f us  algbw %.3f GB/s  busbw %.3f GB/s  (%lld op instances, %lld B "
                    "over links)\n", r->time_us, algbw, algbw * coll_busbw_factor((coll_kind)ck, p->nranks),
                    r->ops_run, r->bytes_moved);
        } else {
            fprintf(f, "time      %.3f us  (%lld op instances, %lld B over links)\n", r->time_us,
                    r->ops_run, r->bytes_moved);
        }
        if (r->has_bound)
            fprintf(f, "bound     %.3f us lower bound (%.2fx of it)\n", r->bound_us,
                    r->bound_us > 0 ? r->time_us / r->bound_us : 0.0);
        if (r->has_bound && r->floor_us > 0)
            fprintf(f, "floor     %.3f us partial-sums floor (%.2fx of it; what schedules that add "
                       "partial sums of the same elements live under, not a bound)\n",
                    r->floor_us, r->time_us / r->floor_us);
    }
    if (r->replicas_identical >= 0)
        fprintf(f, "replicas  %s (%s%s)\n", r->replicas_identical ? "bit-identical" : "differ",
                runtime_dtype_name(r->dtype),
                r->replicas_identical ? "" : "; reduction order differs by rank");
}

char *mpp_report_json(const mpp_report *r, const mpp_plan *p, const topo *t, const char *file,
                      const char *error)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", file ? file : "");
    cJSON_AddStringToObject(j, "format", "mscclpp");
    cJSON_AddBoolToObject(j, "verified", r && r->verified);
    if (error)
        cJSON_AddStringToObject(j, "error", error);
    else if (r && !r->verified)
        cJSON_AddStringToObject(j, "error", verdict(r));
    else
        cJSON_AddNullToObject(j, "error");
    if (p) {
        cJSON_AddStringToObject(j, "name", p->name);
        cJSON_AddStringToObject(j, "collective", p->collective);
        cJSON_AddNumberToObject(j, "ngpus", p->nranks);
        cJSON_AddStringToObject(j, "proto", p->proto_ll ? "LL" : "Simple");
    } else {
        cJSON_AddNullToObject(j, "collective");
        cJSON_AddNullToObject(j, "ngpus");
    }
    if (t) {
        cJSON_AddStringToObject(j, "topology", t->name ? t->name : "");
        cJSON_AddBoolToObject(j, "topology_default", t->is_default);
    } else {
        cJSON_AddNullToObject(j, "topology");
    }
    if (r) {
        cJSON_AddNumberToObject(j, "size_bytes", (double)r->size_bytes);
        cJSON_AddNumberToObject(j, "chunk_bytes", (double)r->chunk_bytes);
        cJSON_AddStringToObject(j, "mode", r->inplace ? "inplace" : "outofplace");
        cJSON_AddBoolToObject(j, "postcondition", r->has_post);
        cJSON_AddBoolToObject(j, "data_checked", r->has_post && r->data);
        cJSON_AddBoolToObject(j, "finished", r->finished);
        if (r->finished) {
            cJSON_AddNumberToObject(j, "time_us", r->time_us);
            cJSON_AddNumberToObject(j, "call_us", r->call_us);
            int ck = p ? mpp_coll(p) : -1;
            if (ck >= 0) {
                double algbw = coll_algbw_gbps((coll_kind)ck, (double)r->size_bytes, r->time_us);
                cJSON_AddNumberToObject(j, "algbw_gbps", algbw);
                cJSON_AddNumberToObject(j, "busbw_gbps", algbw * coll_busbw_factor((coll_kind)ck, p->nranks));
            }
        } else {
            cJSON_AddNullToObject(j, "time_us");
        }
        /* lower_bound_us and bound_ratio as an MSCCL XML run names them
         * (docs/formats.md section 5); bound_us, the same, as before */
        if (r->has_bound) {
            cJSON_AddNumberToObject(j, "bound_us", r->bound_us);
            cJSON_AddNumberToObject(j, "lower_bound_us", r->bound_us);
        } else {
            cJSON_AddNullToObject(j, "bound_us");
            cJSON_AddNullToObject(j, "lower_bound_us");
        }
        if (r->has_bound && r->finished && r->time_us > 0)
            cJSON_AddNumberToObject(j, "bound_ratio", r->bound_us / r->time_us);
        else
            cJSON_AddNullToObject(j, "bound_ratio");
        if (r->has_bound && r->floor_us > 0)
            cJSON_AddNumberToObject(j, "partial_sums_floor_us", r->floor_us);
        else
            cJSON_AddNullToObject(j, "partial_sums_floor_us");
        cJSON_AddNumberToObject(j, "wrong_elems", (double)r->wrong_elems);
        cJSON_AddStringToObject(j, "dtype", runtime_dtype_name(r->dtype));
        if (r->replicas_identical >= 0)
            cJSON_AddBoolToObject(j, "replicas_identical", r->replicas_identical);
        else
            cJSON_AddNullToObject(j, "replicas_identical");
        cJSON_AddNumberToObject(j, "op_instances", (double)r->ops_run);
        cJSON *h = cJSON_AddArrayToObject(j, "hazards");
        for (int i = 0; i < r->hz.n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "kind", hazard_kind_name(r->hz.v[i].kind));
            cJSON_AddStringToObject(o, "msg", r->hz.v[i].msg);
            cJSON_AddItemToArray(h, o);
        }
    } else {
        cJSON_AddNullToObject(j, "size_bytes");
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

int mpp_sweep(FILE *f, const mpp_plan *p, const topo *t, const mpp_opts *o, long long lo,
              long long hi, int json, const char *file, tc_err *err)
{
    cJSON *rows = cJSON_CreateArray();
    int ck = mpp_coll(p), nrows = 0, nran = 0, all_ok = 1;
    char first_err[1100] = "";
    long long last = -1;
    if (!json)
        fprintf(f, "# %s: MSCCL++ plan '%s' (%s, %d ranks) on %s\n# %12s %12s %12s %12s  %s\n", file,
                p->name, p->collective, p->nranks, t->name, "size(B)", "time(us)", "algbw(GB/s)",
                "busbw(GB/s)", "result");
    for (long long want = lo; want <= hi && want > 0; want *= 2) {
        long long s = mpp_round_size(p, want);
        if (s == last || (s > hi && nrows > 0))
            continue;
        if (s > hi)
            break;
        last = s;
        mpp_opts ro = *o;
        ro.size_bytes = s;
        ro.record = 0;
        double total = 0;
        for (int g = 0; g < p->nranks; g++)
            total += (double)s * 6;
        if (total > (double)(1LL << 30))
            ro.data = 0;
        mpp_report r;
        tc_err e;
        int rc = mpp_run(p, t, &ro, &r, &e);
        nrows++;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "size_bytes", (double)s);
        if (rc != TC_OK) {
            /* a size MSCCL++ would not load (outside the plan's range, say):
             * said in its row, not a failure of the plan */
            if (!first_err[0])
                snprintf(first_err, sizeof first_err, "%s", e.msg);
            cJSON_AddBoolToObject(row, "verified", 0);
            cJSON_AddBoolToObject(row, "ran", 0);
            cJSON_AddStringToObject(row, "error", e.msg);
            if (!json)
                fprintf(f, "  %12lld %12s %12s %12s  not run: %s\n", s, "-", "-", "-", e.msg);
        } else {
            nran++;
            cJSON_AddBoolToObject(row, "ran", 1);
            double algbw = ck >= 0 && r.finished ? coll_algbw_gbps((coll_kind)ck, (double)s, r.time_us) : 0;
            double busbw = ck >= 0 ? algbw * coll_busbw_factor((coll_kind)ck, p->nranks) : 0;
            all_ok &= r.verified;
            cJSON_AddBoolToObject(row, "verified", r.verified);
            cJSON_AddBoolToObject(row, "data_checked", ro.data && r.has_post);
            if (r.replicas_identical >= 0)
                cJSON_AddBoolToObject(row, "replicas_identical", r.replicas_identical);
            if (r.finished)
                cJSON_AddNumberToObject(row, "time_us", r.time_us);
            else
                cJSON_AddNullToObject(row, "time_us");
            cJSON_AddNumberToObject(row, "algbw_gbps", algbw);
            cJSON_AddNumberToObject(row, "busbw_gbps", busbw);
            if (r.has_bound) {
                cJSON_AddNumberToObject(row, "bound_us", r.bound_us);
                cJSON_AddNumberToObject(row, "lower_bound_us", r.bound_us);
            }
            if (!r.verified)
                cJSON_AddStringToObject(row, "error", verdict(&r));
            if (!json)
                fprintf(f, "  %12lld %12.3f %12.3f %12.3f  %s%s\n", s, r.time_us, algbw, busbw,
                        r.verified ? (ro.data && r.has_post ? "verified" : "completed") : "FAILED: ",
                        r.verified ? (ro.data ? "" : " (timing only)") : verdict(&r));
            mpp_report_free(&r);
        }
        cJSON_AddItemToArray(rows, row);
    }
    if (nrows == 0 || nran == 0) {
        cJSON_Delete(rows);
        if (nran == 0 && first_err[0])
            return tc_err_set(err, TC_INPUT, "--sweep: no size in the range can run: %s", first_err);
        return tc_err_set(err, TC_INPUT, "--sweep: no size in the range divides into the plan's chunks "
                          "(the smallest is %lld bytes)", mpp_round_size(p, 1));
    }
    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "file", file);
        cJSON_AddStringToObject(j, "format", "mscclpp");
        cJSON_AddStringToObject(j, "collective", p->collective);
        cJSON_AddBoolToObject(j, "verified", all_ok);
        cJSON_AddItemToObject(j, "rows", rows);
        char *s = cJSON_PrintUnformatted(j);
        fprintf(f, "%s\n", s);
        free(s);
        cJSON_Delete(j);
    } else {
        cJSON_Delete(rows);
    }
    return all_ok ? TC_OK : TC_WRONG;
}

int mpp_trace_write(const mpp_report *r, const mpp_plan *p, const char *path, tc_err *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *ev = cJSON_AddArrayToObject(j, "traceEvents");
    for (int g = 0; g <= p->nranks; g++) {
        cJSON *m = cJSON_CreateObject();
        char nm[64];
        snprintf(nm, sizeof nm, g < p->nranks ? "rank %d" : "links", g);
        cJSON_AddStringToObject(m, "name", "process_name");
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddNumberToObject(m, "pid", g);
        cJSON *a = cJSON_AddObjectToObject(m, "args");
        cJSON_AddStringToObject(a, "name", nm);
        cJSON_AddItemToArray(ev, m);
    }
    for (int i = 0; i < r->nev; i++) {
        const mpp_event *e = &r->ev[i];
        cJSON *o = cJSON_CreateObject();
        char nm[64];
        if (e->is_xfer)
            snprintf(nm, sizeof nm, "%s %d->%d", mpp_op_name((mpp_optype)e->op), e->rank, e->tb);
        else
            snprintf(nm, sizeof nm, "%s", mpp_op_name((mpp_optype)e->op));
        cJSON_AddStringToObject(o, "name", nm);
        cJSON_AddStringToObject(o, "ph", "X");
        cJSON_AddNumberToObject(o, "pid", e->is_xfer ? p->nranks : e->rank);
        cJSON_AddNumberToObject(o, "tid", e->is_xfer ? e->rank * p->nranks + e->tb : e->tb);
        cJSON_AddNumberToObject(o, "ts", e->t0);
        cJSON_AddNumberToObject(o, "dur", e->t1 - e->t0);
        if (e->is_xfer) {
            cJSON *a = cJSON_AddObjectToObject(o, "args");
            cJSON_AddNumberToObject(a, "bytes", (double)e->bytes);
        }
        cJSON_AddItemToArray(ev, o);
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    int rc = file_write_atomic(path, s, strlen(s), err);
    free(s);
    return rc;
}

int mpp_routes_write(const mpp_report *r, const mpp_plan *p, const topo *t, const char *path,
                     tc_err *err)
{
    int n = p->nranks;
    long long *bytes = xcalloc((size_t)n * (size_t)n, sizeof(long long));
    int *cnt = xcalloc((size_t)n * (size_t)n, sizeof(int));
    int *kind = xcalloc((size_t)n * (size_t)n, sizeof(int));
    long long total = 0;
    for (int i = 0; i < r->nev; i++) {
        const mpp_event *e = &r->ev[i];
        if (!e->is_xfer || e->rank < 0 || e->tb < 0 || e->rank >= n || e->tb >= n)
            continue;
        bytes[e->rank * n + e->tb] += e->bytes;
        cnt[e->rank * n + e->tb]++;
        kind[e->rank * n + e->tb] = e->route;
        total += e->bytes;
    }
    size_t cap = 4096, len = 0;
    char *s = xmalloc(cap);
#define OUT(...) do { \
        int k_ = snprintf(NULL, 0, __VA_ARGS__); \
        while (len + (size_t)k_ + 1 > cap) \
            s = xrealloc(s, cap *= 2); \
        snprintf(s + len, cap - len, __VA_ARGS__); \
        len += (size_t)k_; \
    } while (0)
    OUT("digraph routes {\n  label=\"%s on %s\";\n  node [shape=box];\n", p->name, t->name);
    for (int a = 0; a < n; a++)
        OUT("  r%d [label=\"rank %d\"];\n", a, a);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (!cnt[a * n + b])
                continue;
            const char *col = kind[a * n + b] == ROUTE_LINK ? "blue" :
                              kind[a * n + b] == ROUTE_SWITCH ? "darkgreen" : "red";
            double w = total > 0 ? 1.0 + 6.0 * (double)bytes[a * n + b] / (double)total : 1.0;
            OUT("  r%d -> r%d [label=\"%d transfers, %lld B\", color=%s, penwidth=%.2f];\n", a, b,
                cnt[a * n + b], bytes[a * n + b], col, w);
        }
    OUT("}\n");
#undef OUT
    int rc = file_write_atomic(path, s, len, err);
    free(s);
    free(bytes);
    free(cnt);
    free(kind);
    return rc;
}

/* The default machine of a plan (mpp.h): one node, every rank on one
 * NVSwitch-like switch with dgx-h100-x1.json's figures, so switch channels
 * have their multimem and memory/port channels a route. */
topo *mpp_default_topo(const mpp_plan *p)
{
    int n = p->nranks;
    if (n < 2)
        return topo_default(n); /* a switch needs two ranks */
    size_t cap = 1024 + (size_t)n * 12, len = 0;
    char *s = xmalloc(cap);
    len += (size_t)snprintf(s + len, cap - len,
        "{\"name\": \"default-switch\", \"is_default\": true, \"nodes\": 1, \"ranks_per_node\": %d,"
        " \"device\": {\"kind\": \"gpu\", \"arch\": \"hopper\"},"
        " \"local\": {\"copy_gbps\": 1675.0, \"reduce_gbps\": 1116.667, \"source\": \"assumed: "
        "topologies/dgx-h100-x1.json\"},"
        " \"switches\": [{\"alpha_us\": 0.7, \"bandwidth_gbps\": 450, \"source\": \"assumed: "
        "topologies/dgx-h100-x1.json\", \"nvls\": {\"alpha_us\": 0.7, \"bandwidth_gbps\": 306, "
        "\"reductions\": [\"sum\"], \"dtypes\": [\"i32\", \"f32\", \"bf16\", \"f16\"], "
        "\"source\": \"assumed: topologies/dgx-h100-x1.json\"}, \"ranks\": [", n);
    for (int r = 0; r < n; r++)
        len += (size_t)snprintf(s + len, cap - len, "%s%d", r ? ", " : "", r);
    snprintf(s + len, cap - len, "]}]}");
    tc_err e;
    topo *t = topo_parse(s, "default-switch", &e);
    free(s);
    return t;
}
