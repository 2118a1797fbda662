/* trace.c — a run as a Chrome/Perfetto trace (contract in trace.h).
 *
 * The observer only records: steps, transfers and receives go into plain
 * arrays while the executor runs.  trace_write() then turns them into
 * trace events (each built and printed with cJSON) in one text, written
 * atomically.  Track ids: a rank is a process (pid = rank) and its
 * threadblocks are threads (tid = tb index); the resources are process
 * ngpu, a resource lane being thread res * MAX_LANES + lane. */
#include "trace.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/cost.h"
#include "../util/file.h"
#include "../util/mem.h"

#define MAX_LANES 64    /* lanes shown apart per resource; more share the last */

typedef struct {
    int rank, tb, step;
    step_type type;
    double t0, t1;
} tstep;

typedef struct {
    long long id;
    int rank, tb;
    double t;
} trecv;

struct trace {
    const prog *p;
    const topo *t;
    sim_observer obs;
    tstep *steps;
    int nsteps, csteps;
    sim_xfer_event *xfers;
    int nxfers, cxfers;
    trecv *recvs;
    int nrecvs, crecvs;
};

static void on_step(void *ctx, int rank, int tb, int step, step_type type, double t0, double t1)
{
    trace *tr = ctx;
    tr->steps = xgrow(tr->steps, &tr->csteps, tr->nsteps + 1, sizeof *tr->steps);
    tr->steps[tr->nsteps++] = (tstep){rank, tb, step, type, t0, t1};
}

static void on_xfer(void *ctx, const sim_xfer_event *x)
{
    trace *tr = ctx;
    tr->xfers = xgrow(tr->xfers, &tr->cxfers, tr->nxfers + 1, sizeof *tr->xfers);
    tr->xfers[tr->nxfers++] = *x;
}

static void on_recv(void *ctx, long long id, int rank, int tb, int step, double t)
{
    (void)step;
    trace *tr = ctx;
    tr->recvs = xgrow(tr->recvs, &tr->crecvs, tr->nrecvs + 1, sizeof *tr->recvs);
    tr->recvs[tr->nrecvs++] = (trecv){id, rank, tb, t};
}

trace *trace_new(const prog *p, const topo *t)
{
    trace *tr = xcalloc(1, sizeof *tr);
    tr->p = p;
    tr->t = t;
    tr->obs = (sim_observer){tr, on_step, on_xfer, on_recv};
    return tr;
}

void trace_free(trace *tr)
{
    if (!tr)
        return;
    free(tr->steps);
    free(tr->xfers);
    free(tr->recvs);
    free(tr);
}

const sim_observer *trace_observer(trace *tr)
{
    return &tr->obs;
}

/* ------------------------------------------------------------ writing */

typedef struct {
    char *s;
    size_t n, cap;
    int first;
} text;

/* Append event e (consumed) to the array being written. */
static void put(text *o, cJSON *e)
{
    char *s = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    if (!s)
        tc_oom();
    size_t k = strlen(s);
    while (o->n + k + 4 > o->cap) {
        o->cap = o->cap ? 2 * o->cap : 1 << 16;
        o->s = xrealloc(o->s, o->cap);
    }
    if (!o->first)
        o->s[o->n++] = ',';
    o->first = 0;
    o->s[o->n++] = '\n';
    memcpy(o->s + o->n, s, k);
    o->n += k;
    o->s[o->n] = '\0';
    cJSON_free(s);
}

static cJSON *event(const char *name, const char *cat, const char *ph, int pid, int tid,
                    double ts)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    if (cat)
        cJSON_AddStringToObject(e, "cat", cat);
    cJSON_AddStringToObject(e, "ph", ph);
    cJSON_AddNumberToObject(e, "pid", pid);
    cJSON_AddNumberToObject(e, "tid", tid);
    cJSON_AddNumberToObject(e, "ts", ts);
    return e;
}

static void put_name(text *o, const char *what, int pid, int tid, const char *name)
{
    cJSON *e = event(what, NULL, "M", pid, tid, 0);
    cJSON *a = cJSON_AddObjectToObject(e, "args");
    cJSON_AddStringToObject(a, "name", name);
    put(o, e);
}

/* Names of every rank, threadblock and resource lane that appears. */
static void put_names(text *o, const trace *tr, const unsigned char *lane_used)
{
    const prog *p = tr->p;
    char b[160];
    for (int r = 0; r < p->ngpu; r++) {
        snprintf(b, sizeof b, "rank %d", r);
        put_name(o, "process_name", r, 0, b);
        for (int i = 0; i < p->gpus[r].ntbs; i++) {
            const prog_tb *tb = &p->gpus[r].tbs[i];
            int n = snprintf(b, sizeof b, "tb %d", tb->id);
            if (tb->send >= 0)
                n += snprintf(b + n, sizeof b - (size_t)n, " send->%d", tb->send);
            if (tb->recv >= 0)
                n += snprintf(b + n, sizeof b - (size_t)n, " recv<-%d", tb->recv);
            snprintf(b + n, sizeof b - (size_t)n, " chan %d", tb->chan);
            put_name(o, "thread_name", r, i, b);
        }
    }
    put_name(o, "process_name", p->ngpu, 0, "resources");
    int nres = cost_nres(tr->t);
    for (int k = 0; k < nres; k++)
        for (int l = 0; l < MAX_LANES; l++) {
            if (!lane_used[(size_t)k * MAX_LANES + l])
                continue;
            char name[128];
            cost_res_name(tr->t, k, name, sizeof name);
            if (cost_res_lanes(tr->t, k) > 1)
                snprintf(b, sizeof b, "%s, lane %d", name, l);
            else
                snprintf(b, sizeof b, "%s", name);
            put_name(o, "thread_name", p->ngpu, k * MAX_LANES + l, b);
        }
}

static void put_steps(text *o, const trace *tr)
{
    for (int i = 0; i < tr->nsteps; i++) {
        const tstep *s = &tr->steps[i];
        cJSON *e = event(step_type_name(s->type), "step", "X", s->rank, s->tb, s->t0);
        cJSON_AddNumberToObject(e, "dur", s->t1 - s->t0);
        cJSON *a = cJSON_AddObjectToObject(e, "args");
        cJSON_AddNumberToObject(a, "step", s->step);
        put(o, e);
    }
}

static void put_xfers(text *o, const trace *tr, unsigned char *lane_used)
{
    char name[96];
    for (int i = 0; i < tr->nxfers; i++) {
        const sim_xfer_event *x = &tr->xfers[i];
        snprintf(name, sizeof name, "%d->%d, %d chunk%s", x->src, x->dst, x->cnt,
                 x->cnt == 1 ? "" : "s");
        for (int k = 0; k < x->nres; k++) {
            int lane = x->lane[k] < 0 ? 0 : x->lane[k] < MAX_LANES ? x->lane[k] : MAX_LANES - 1;
            lane_used[(size_t)x->res[k] * MAX_LANES + lane] = 1;
            cJSON *e = event(name, "transfer", "X", tr->p->ngpu, x->res[k] * MAX_LANES + lane,
                             x->t_start);
            cJSON_AddNumberToObject(e, "dur", x->t_free - x->t_start);     /* held */
            cJSON *a = cJSON_AddObjectToObject(e, "args");
            cJSON_AddNumberToObject(a, "src", x->src);
            cJSON_AddNumberToObject(a, "dst", x->dst);
            cJSON_AddNumberToObject(a, "chan", x->chan);
            cJSON_AddNumberToObject(a, "chunks", x->cnt);
            cJSON_AddNumberToObject(a, "bytes", x->bytes);
            cJSON_AddNumberToObject(a, "asked_us", x->t_req);
            cJSON_AddNumberToObject(a, "lands_us", x->t_end);
            cJSON_AddStringToObject(a, "proto", tr->p->proto);
            put(o, e);
        }
        /* the flow starts inside the sending step */
        cJSON *f = event("message", "flow", "s", x->src, x->tb, x->t_start);
        cJSON_AddNumberToObject(f, "id", (double)x->id);
        put(o, f);
    }
    /* ... and ends in the receiving step ("bp": "e": the enclosing slice) */
    for (int i = 0; i < tr->nrecvs; i++) {
        const trecv *r = &tr->recvs[i];
        cJSON *f = event("message", "flow", "f", r->rank, r->tb, r->t);
        cJSON_AddNumberToObject(f, "id", (double)r->id);
        cJSON_AddStringToObject(f, "bp", "e");
        put(o, f);
    }
}

int trace_write(const trace *tr, const char *path, tc_err *err)
{
    text o = {NULL, 0, 0, 1};
    unsigned char *lane_used = xcalloc((size_t)cost_nres(tr->t) * MAX_LANES + 1, 1);
    const char *head = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [";
    o.cap = strlen(head) + 1;
    o.s = xmalloc(o.cap);
    memcpy(o.s, head, o.cap);
    o.n = o.cap - 1;
    put_steps(&o, tr);
    put_xfers(&o, tr, lane_used);
    put_names(&o, tr, lane_used);
    free(lane_used);
    const char *tail = "\n]}\n";
    o.s = xrealloc(o.s, o.n + strlen(tail) + 1);
    memcpy(o.s + o.n, tail, strlen(tail) + 1);
    o.n += strlen(tail);
    int rc = file_write_atomic(path, o.s, o.n, err);
    free(o.s);
    return rc;
}

/* ------------------------------------------------------------ routes */

typedef struct {
    int src, dst;
    long long n;
    double bytes;
} pairsum;

static int cmp_pair(const void *pa, const void *pb)
{
    const pairsum *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

static void appendf(text *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(text *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    while (o->n + (size_t)k + 1 > o->cap) {
        o->cap = o->cap ? 2 * o->cap : 1 << 14;
        o->s = xrealloc(o->s, o->cap);
    }
    va_start(ap, fmt);
    vsnprintf(o->s + o->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    o->n += (size_t)k;
}

/* Transfers summed per (src, dst), sorted; returns how many pairs. */
static int sum_pairs(const trace *tr, pairsum **out)
{
    pairsum *v = xmalloc(((size_t)tr->nxfers + 1) * sizeof *v);
    for (int i = 0; i < tr->nxfers; i++)
        v[i] = (pairsum){tr->xfers[i].src, tr->xfers[i].dst, 1, tr->xfers[i].bytes};
    qsort(v, (size_t)tr->nxfers, sizeof *v, cmp_pair);
    int n = 0;
    for (int i = 0; i < tr->nxfers; i++) {
        if (n > 0 && v[n - 1].src == v[i].src && v[n - 1].dst == v[i].dst) {
            v[n - 1].n++;
            v[n - 1].bytes += v[i].bytes;
        } else {
            v[n++] = v[i];
        }
    }
    *out = v;
    return n;
}

/* s inside a DOT double-quoted string: quotes and backslashes escaped,
 * control characters dropped. */
static void append_quoted(text *o, const char *s)
{
    for (; s && *s; s++) {
        if ((unsigned char)*s < 0x20)
            continue;
        if (*s == '"' || *s == '\\')
            appendf(o, "\\");
        appendf(o, "%c", *s);
    }
}

int trace_write_dot(const trace *tr, const char *path, tc_err *err)
{
    static const char *const colour[] = {
        [ROUTE_LINK] = "steelblue", [ROUTE_SWITCH] = "darkgreen", [ROUTE_NIC] = "firebrick",
        [ROUTE_SELF] = "gray", [ROUTE_NONE] = "black"};
    static const char *const how[] = {
        [ROUTE_LINK] = "link", [ROUTE_SWITCH] = "switch", [ROUTE_NIC] = "NIC",
        [ROUTE_SELF] = "local", [ROUTE_NONE] = "none"};
    const topo *t = tr->t;
    text o = {NULL, 0, 0, 1};
    appendf(&o, "digraph routes {\n  label=\"");
    append_quoted(&o, tr->p->name);
    appendf(&o, ": %s on ", coll_name(tr->p->coll));
    append_quoted(&o, t->name);
    appendf(&o, " (edges: transfers, bytes; blue link, green switch, red NIC)\";\n"
                "  labelloc=t;\n  node [shape=circle];\n");
    for (int nd = 0; nd < t->nnodes; nd++) {
        appendf(&o, "  subgraph cluster_node%d {\n    label=\"node %d\";\n", nd, nd);
        for (int l = 0; l < t->ranks_per_node; l++) {
            int r = nd * t->ranks_per_node + l;
            if (r < tr->p->ngpu)
                appendf(&o, "    r%d [label=\"%d\"];\n", r, r);
        }
        appendf(&o, "  }\n");
    }
    pairsum *v;
    int n = sum_pairs(tr, &v);
    double most = 0;
    for (int i = 0; i < n; i++)
        most = v[i].bytes > most ? v[i].bytes : most;
    for (int i = 0; i < n; i++) {
        topo_route rt = topo_route_of(t, v[i].src, v[i].dst);
        appendf(&o, "  r%d -> r%d [label=\"%lld x, %.3g MB (%s)\", color=%s, penwidth=%.2f];\n",
                v[i].src, v[i].dst, v[i].n, v[i].bytes / 1e6, how[rt.kind], colour[rt.kind],
                1 + 4 * (most > 0 ? v[i].bytes / most : 0));
    }
    appendf(&o, "}\n");
    free(v);
    int rc = file_write_atomic(path, o.s, o.n, err);
    free(o.s);
    return rc;
}
