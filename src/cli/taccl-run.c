/* taccl-run — execute an MSCCL XML schedule on a device model and judge it.
 *
 * Reads the schedule (and the topology it carries, or --topo, or a default
 * all-to-all), checks what the runtimes would hang or corrupt on, runs it
 * with real data, checks the collective's postcondition and reports time,
 * algorithm and bus bandwidth.  Exit 0: it performs the collective; 1: it
 * does not (the message says where and why); 2: the input cannot be used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "exec/data.h"
#include "exec/pick.h"
#include "exec/run.h"
#include "model/topo.h"
#include "exec/trace.h"
#include "sched/xml.h"
#include "util/size.h"

static const char usage[] =
    "usage: taccl-run FILE.xml [--topo T.json] [--size BYTES] [--dtype i32|f32]\n"
    "                 [--no-data] [--seed N] [--inplace|--outofplace]\n"
    "                 [--target msccl|msccl-executor|unlimited] [--sweep LO:HI]\n"
    "                 [--embed-to OUT.xml] [--trace OUT.json] [--routes OUT.dot]\n"
    "                 [--tiles] [--strict] [--json] [-q]\n"
    "       taccl-run DIR (--size BYTES | --sweep LO:HI) [--inplace|--outofplace]\n"
    "                 [--target T] [--topo T.json] [--no-data] [--tiles] [--json] [-q]\n";

static const char help[] =
    "Run an MSCCL XML schedule on a device model: real data moved and checked,\n"
    "runtime hazards reported, alpha-beta time, algorithm and bus bandwidth.\n"
    "\n"
    "  --topo T.json     topology to run on (default: the one in the file, else a\n"
    "                    fully connected default with assumed figures)\n"
    "  --size BYTES      larger per-rank buffer (nccl-tests convention); K/M/G are\n"
    "                    powers of 1024 (default: the file's, else 1 MiB)\n"
    "  --dtype i32|f32   element type (default i32; f32 shows reduction order)\n"
    "  --no-data         timing only: do not move or check data\n"
    "  --seed N          seed of the input data (default 1)\n"
    "  --inplace         run in place only; --outofplace: out of place only\n"
    "                    (default: every mode the file allows)\n"
    "  --target T        judge loading as that runtime's loader does, exit 2 if it\n"
    "                    refuses the file: msccl (legacy: coll reduce_scatter, name,\n"
    "                    i/o_chunks consistent, 256 steps per tb, 216 tbs, scratch\n"
    "                    maxBytes*s_chunks/nchunksperloop allocated at init) or\n"
    "                    msccl-executor (coll reducescatter; outofplace, minBytes\n"
    "                    and maxBytes required; 64 steps per tb); unlimited: no\n"
    "                    loader, no step/tb limits (simulation only).  Default:\n"
    "                    the file's own <taccl target>, else what both refuse\n"
    "                    (256 steps per tb), either spelling\n"
    "  --sweep LO:HI     run at every power-of-two size from LO to HI and print an\n"
    "                    nccl-tests-style table (data checked where the buffers\n"
    "                    fit in 1 GiB, timing only above, said in the row)\n"
    "  --embed-to OUT    also write the schedule with its topology and size\n"
    "                    embedded, so OUT runs with no other argument (only a\n"
    "                    schedule that verifies is written)\n"
    "  --trace OUT.json  also write what the run did as a Chrome/Perfetto trace\n"
    "                    (open it in ui.perfetto.dev or chrome://tracing): a track\n"
    "                    per rank's threadblock and per link, switch port and NIC\n"
    "                    direction, an event per step and per transfer, arrows\n"
    "                    from each send to its receive (the first mode run)\n"
    "  --routes OUT.dot  also write the routes the run used as a Graphviz graph\n"
    "                    (render: dot -Tsvg OUT.dot -o OUT.svg): an edge per pair\n"
    "                    of ranks with its transfers and bytes, coloured by link,\n"
    "                    switch or NIC\n"
    "  --tiles           time it as the MSCCL runtimes' interpreter runs it: the\n"
    "                    whole program once per pass over the next tile of every\n"
    "                    chunk (2 MiB under Simple, 32 KiB LL, 576000 B LL128),\n"
    "                    a step's chunks as separate operations where a chunk\n"
    "                    takes several passes (docs/design.md section 8).  The\n"
    "                    checks still judge the file; GPU topologies only\n"
    "  --strict          fail (exit 1) on warnings too: races and uninitialized\n"
    "                    reads among steps whose data never reaches the result;\n"
    "                    a topology whose figures lack a source is exit 2\n"
    "  --json            one JSON object on stdout\n"
    "  -q, --quiet       print nothing but errors (exit code only)\n"
    "\n"
    "With a directory (a plan: taccl-synth --plan, or any set of MSCCL files), run\n"
    "at each size the file the runtime would pick by its own rules (collective,\n"
    "in-place flag, minBytes/maxBytes, whole elements per chunk; legacy or newer\n"
    "executor by the files' target or --target), or say that NCCL runs the call;\n"
    "DIR/nccl/nccl-<bytes>.xml, where present, is NCCL's own schedule at that\n"
    "size and gives the x NCCL column.  Out of place unless --inplace.\n"
    "\n"
    "Exit: 0 performs the collective, 1 does not, 2 input unusable (including a\n"
    "file the target runtime's loader refuses).\n";

typedef struct {
    const char *file;
    const char *topo_path;
    const char *embed_to;
    const char *trace_to;
    const char *routes_to;
    long long sweep_lo, sweep_hi;
    int json;
    int quiet;
    run_opts run;
} cli;

static int bad_flag(const char *fmt, const char *arg)
{
    fprintf(stderr, "taccl-run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return TC_INPUT;
}

/* Fill c from argv; returns TC_OK, TC_INPUT on a bad flag, or -1 for --help. */
static int parse_args(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    run_opts_default(&c->run);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (!v) return bad_flag("%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return -1;
        else if (!strcmp(a, "--json"))
            c->json = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            c->quiet = 1;
        else if (!strcmp(a, "--strict"))
            c->run.strict = 1;
        else if (!strcmp(a, "--no-data"))
            c->run.data = 0;
        else if (!strcmp(a, "--tiles"))
            c->run.tiles = 1;
        else if (!strcmp(a, "--inplace"))
            c->run.mode = 1;
        else if (!strcmp(a, "--outofplace"))
            c->run.mode = 0;
        else if (!strcmp(a, "--topo")) {
            NEED_VALUE();
            c->topo_path = v;
        } else if (!strcmp(a, "--embed-to")) {
            NEED_VALUE();
            c->embed_to = v;
        } else if (!strcmp(a, "--trace")) {
            NEED_VALUE();
            c->trace_to = v;
        } else if (!strcmp(a, "--routes")) {
            NEED_VALUE();
            c->routes_to = v;
        } else if (!strcmp(a, "--size")) {
            NEED_VALUE();
            if (size_parse(v, &c->run.size_bytes)) {
                char hint[128], msg[512];
                snprintf(msg, sizeof msg, "--size: not a size in bytes: '%s' (e.g. 1048576, 64K, "
                         "1MB)%s", v, size_hint(v, hint, sizeof hint));
                return bad_flag("%s", msg);
            }
        } else if (!strcmp(a, "--dtype")) {
            NEED_VALUE();
            if (!strcmp(v, "i32"))
                c->run.dtype = DT_I32;
            else if (!strcmp(v, "f32"))
                c->run.dtype = DT_F32;
            else
                return bad_flag("--dtype: expected i32 or f32, got '%s'", v);
        } else if (!strcmp(a, "--seed")) {
            NEED_VALUE();
            char *end;
            unsigned long s = strtoul(v, &end, 10);
            if (!*v || *end || s > 0xffffffffUL)
                return bad_flag("--seed: expected a non-negative integer, got '%s'", v);
            c->run.seed = (unsigned)s;
        } else if (!strcmp(a, "--target")) {
            NEED_VALUE();
            c->run.target = 1;
            if (!strcmp(v, "msccl"))
                c->run.newer_executor = 0;
            else if (!strcmp(v, "msccl-executor"))
                c->run.newer_executor = 1;
            else if (!strcmp(v, "unlimited"))
                c->run.unlimited = 1;
            else
                return bad_flag("--target: expected msccl, msccl-executor or unlimited, got '%s'", v);
        } else if (!strcmp(a, "--sweep")) {
            NEED_VALUE();
            char lo[64];
            const char *colon = strchr(v, ':');
            size_t n = colon ? (size_t)(colon - v) : 0;
            if (!colon || n == 0 || n >= sizeof lo)
                return bad_flag("--sweep: expected LO:HI sizes, e.g. 1K:1G, got '%s'", v);
            memcpy(lo, v, n);
            lo[n] = '\0';
            if (size_parse(lo, &c->sweep_lo) || size_parse(colon + 1, &c->sweep_hi) ||
                c->sweep_hi < c->sweep_lo)
                return bad_flag("--sweep: expected LO:HI sizes with LO <= HI, e.g. 1K:1G, got '%s'", v);
        } else if (a[0] == '-' && a[1])
            return bad_flag("unknown option '%s'", a);
        else if (c->file)
            return bad_flag("only one schedule file, got a second: '%s'", a);
        else
            c->file = a;
#undef NEED_VALUE
    }
    if (!c->file)
        return bad_flag("%s", "no schedule file given");
    return TC_OK;
}

/* Report an unusable input: one line on stderr, and the JSON object if asked. */
static int fail_input(const cli *c, const prog *p, const topo *t, const char *msg)
{
    fprintf(stderr, "taccl-run: %s\n", msg);
    if (c->json) {
        char *j = run_report_json(NULL, p, t, &c->run, c->file, msg);
        printf("%s\n", j);
        free(j);
    }
    return TC_INPUT;
}

/* The topology to run on: --topo, else the file's, else the default. */
static topo *pick_topology(const cli *c, const prog *p, int *owned, tc_err *err)
{
    *owned = 1;
    if (c->topo_path)
        return topo_load(c->topo_path, err);
    if (p->topo) {
        *owned = 0;
        return p->topo;
    }
    topo *t = topo_default(p->ngpus);
    if (!t)
        tc_err_set(err, TC_INPUT,
                   "%s:%d: <algo> attribute ngpus: %d ranks are too many for the fully connected "
                   "default topology (n*(n-1) links); pass --topo", c->file, p->line, p->ngpus);
    return t;
}

/* A size the run cannot use, said where the size came from: the file's
 * <taccl size_bytes>, --size, or the default. */
static void size_error(const cli *c, const prog *p, const char *what, char *out, size_t n)
{
    if (c->run.size_bytes > 0)
        snprintf(out, n, "%s: --size: %s", c->file, what);
    else if (p->size_bytes > 0 && p->size_line > 0)
        snprintf(out, n, "%s:%d: <taccl> attribute size_bytes: %s", c->file, p->size_line, what);
    else
        snprintf(out, n, "%s: %s", c->file, what);
}

/* The one stderr line of a schedule that does not do its job: the first
 * problem found, at the line of the step, tb or gpu it is about. */
static void print_verdict(const cli *c, const prog *p, const run_report *r)
{
    const hazard *h = run_report_verdict(r);
    int line = h && h->line > 0 ? (int)h->line : h ? prog_line_of(p, h->rank, h->tb, h->step)
                                                   : p->line;
    const char *msg = h ? h->msg : "the postcondition does not hold";
    if (line > 0)
        fprintf(stderr, "taccl-run: %s:%d: %s\n", c->file, line, msg);
    else
        fprintf(stderr, "taccl-run: %s: %s\n", c->file, msg);
}

static int embed(const cli *c, prog *p, topo *t, int *owned, long long size, tc_err *err)
{
    if (*owned && !t->is_default) {
        prog_set_topo(p, t); /* p now owns it */
        *owned = 0;
    }
    p->size_bytes = size;
    if (c->run.target && !c->run.unlimited)
        p->target = c->run.newer_executor ? 2 : 1;
    /* spelled for the runtime the file says it is for (under --target
     * unlimited, the one it was read with) */
    int newer = c->run.unlimited ? p->target == 2 : c->run.newer_executor;
    xml_write_opts wo = {.newer_executor = newer, .embed_topology = !t->is_default};
    return prog_write_xml(p, c->embed_to, &wo, err);
}

/* ------------------------------------------------------------ a plan */

/* One size of a plan run: what the runtime picks and how it runs. */
typedef struct {
    long long size;
    int picked;             /* index in the set, -1: NCCL runs it */
    double us;              /* the picked file's time (or NCCL's on fallback), < 0 none */
    double nccl_us;         /* NCCL's schedule at this size, < 0 if DIR has none */
    int verified;           /* the picked file verified (1 on fallback) */
    int data;               /* data checked */
    double bound_us;        /* < 0 none */
} plan_row;

/* Time (and check) p at `size` in `mode`; TC_OK and *row filled, or an error. */
static int run_one(const cli *c, const prog *p, const topo *t, long long size, int mode,
                   double *us, int *verified, int *data, double *bound_us, char *why,
                   size_t whysz, tc_err *err)
{
    run_opts ro = c->run;
    ro.mode = mode;
    ro.size_bytes = size;
    *data = c->run.data &&
            data_bytes_needed(p, mode, size / p->nchunksperloop) <= (double)RUN_SWEEP_DATA_MAX;
    ro.data = *data;
    run_report r;
    int rc = run_schedule(p, t, &ro, &r, err);
    if (rc != TC_OK) {
        run_report_free(&r);
        return rc;
    }
    if (r.refused) {
        const hazard *h = run_report_verdict(&r);
        rc = tc_err_set(err, TC_INPUT, "the %s loader refuses it: %s",
                        ro.newer_executor ? "msccl-executor" : "msccl", h ? h->msg : "");
    }
    *us = run_report_time_us(&r);
    *verified = r.verified;
    *bound_us = r.has_bound ? r.bound_us : -1;
    const hazard *h = r.verified ? NULL : run_report_verdict(&r);
    if (why && whysz)
        snprintf(why, whysz, "%s", h ? h->msg : r.verified ? "" : "did not verify");
    run_report_free(&r);
    return rc;
}

/* NCCL's schedule for `size` in DIR/nccl/, or NULL (a file there that
 * cannot be read is said on stderr). */
static prog *nccl_reference(const cli *c, long long size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/nccl/nccl-%lld.xml", c->file, size);
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    tc_err e;
    prog *p = prog_read_xml(path, &e);
    if (!p && !c->quiet)
        fprintf(stderr, "taccl-run: warning: NCCL's schedule not used: %s\n", e.msg);
    return p;
}

static void plan_row_json(cJSON *a, const plan_row *w, const pick_set *set, coll_kind k,
                          int ngpus)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "size_bytes", (double)w->size);
    if (w->picked >= 0)
        cJSON_AddStringToObject(o, "picked", pick_set_name(set, w->picked));
    else
        cJSON_AddNullToObject(o, "picked");
    cJSON_AddBoolToObject(o, "nccl_fallback", w->picked < 0);
    if (w->us >= 0) {
        cJSON_AddNumberToObject(o, "time_us", w->us);
        double algbw = coll_algbw_gbps(k, (double)w->size, w->us);
        cJSON_AddNumberToObject(o, "algbw_gbps", algbw);
        cJSON_AddNumberToObject(o, "busbw_gbps", algbw * coll_busbw_factor(k, ngpus));
    } else {
        cJSON_AddNullToObject(o, "time_us");
    }
    cJSON_AddBoolToObject(o, "verified", w->verified);
    cJSON_AddBoolToObject(o, "data_checked", w->data);
    if (w->nccl_us >= 0) {
        cJSON_AddNumberToObject(o, "nccl_us", w->nccl_us);
        if (w->us > 0)
            cJSON_AddNumberToObject(o, "x_nccl", w->nccl_us / w->us);
    } else {
        cJSON_AddNullToObject(o, "nccl_us");
    }
    if (w->bound_us >= 0)
        cJSON_AddNumberToObject(o, "bound_us", w->bound_us);
    cJSON_AddItemToArray(a, o);
}

static void plan_row_text(const plan_row *w, const pick_set *set, coll_kind k)
{
    char t[32] = "-", x[32] = "-", n[32] = "-", bw[32] = "-", ratio[32] = "-";
    if (w->us >= 0) {
        snprintf(t, sizeof t, "%.3f", w->us);
        snprintf(bw, sizeof bw, "%.3f", coll_algbw_gbps(k, (double)w->size, w->us));
    }
    if (w->nccl_us >= 0) {
        snprintf(n, sizeof n, "%.3f", w->nccl_us);
        if (w->us > 0)
            snprintf(x, sizeof x, "%.2f", w->nccl_us / w->us);
    }
    if (w->bound_us > 0 && w->us > 0)
        snprintf(ratio, sizeof ratio, "%.3f", w->bound_us / w->us);
    printf("%12lld %12s %9s %12s %8s %6s  %s%s\n", w->size, t, bw, n, x, ratio,
           w->picked >= 0 ? pick_set_name(set, w->picked) : "NCCL fallback",
           w->picked < 0 ? "" : !w->verified ? "  (NOT VERIFIED)" : w->data ? ""
                                                                          : "  (timing only)");
}

/* taccl-run DIR --size S | --sweep LO:HI */
static int dir_main(cli *c)
{
    tc_err err;
    tc_err_clear(&err);
    if (c->embed_to || c->trace_to || c->routes_to) {
        fprintf(stderr, "taccl-run: %s: is a directory (a plan): --embed-to, --trace and "
                "--routes take one schedule file\n", c->file);
        return TC_INPUT;
    }
    long long lo = c->sweep_lo, hi = c->sweep_hi;
    if (lo <= 0) {
        if (c->run.size_bytes <= 0) {
            fprintf(stderr, "taccl-run: %s: is a directory (a plan): give --size BYTES or "
                    "--sweep LO:HI to run the file the runtime picks\n", c->file);
            return TC_INPUT;
        }
        lo = hi = c->run.size_bytes;
    }
    pick_set *set = pick_set_load(c->file, &err);
    if (!set) {
        fprintf(stderr, "taccl-run: %s\n", err.msg);
        return TC_INPUT;
    }
    const prog *p0 = pick_set_prog(set, 0);
    coll_kind k = p0->coll;
    int ngpus = p0->ngpus;
    for (int i = 1; i < pick_set_count(set); i++) {
        const prog *q = pick_set_prog(set, i);
        if (q->coll != k || q->ngpus != ngpus) {
            fprintf(stderr, "taccl-run: %s: %s is %s on %d ranks but %s is %s on %d: a plan "
                    "holds one collective on one communicator\n", c->file,
                    pick_set_name(set, 0), coll_name(k), ngpus, pick_set_name(set, i),
                    coll_name(q->coll), q->ngpus);
            pick_set_free(set);
            return TC_INPUT;
        }
    }
    int executor = c->run.target ? c->run.newer_executor : pick_set_target(set) == 2;
    c->run.newer_executor = executor;
    c->run.target = 1;
    int mode = c->run.mode == 1 ? 1 : 0;
    if (!executor && pick_set_count(set) > PICK_LEGACY_MAX_FILES && !c->quiet)
        fprintf(stderr, "taccl-run: warning: %s: %d schedules, but msccl (the legacy runtime) "
                "loads at most %d of MSCCL_XML_FILES: given in name order, it ignores %s and "
                "the files after it\n", c->file, pick_set_count(set), PICK_LEGACY_MAX_FILES,
                pick_set_name(set, PICK_LEGACY_MAX_FILES));
    topo *own = NULL;
    if (c->topo_path && !(own = topo_load(c->topo_path, &err))) {
        fprintf(stderr, "taccl-run: %s\n", err.msg);
        pick_set_free(set);
        return TC_INPUT;
    }
    int rc = TC_OK, all_ok = 1;
    cJSON *rows = cJSON_CreateArray();
    if (!c->json && !c->quiet)
        printf("# %s: %s, %d ranks, %s, %s runtime's rules\n"
               "#%11s %12s %9s %12s %8s %6s  %s\n",
               c->file, coll_name(k), ngpus, mode ? "in place" : "out of place",
               executor ? "msccl-executor" : "msccl (legacy)", "size(B)", "time(us)", "algbw",
               "nccl(us)", "x NCCL", "bound", "picked");
    for (long long size = lo; size <= hi; size *= 2) {
        plan_row w = {size, pick_schedule(set, k, ngpus, mode, size, executor), -1, -1, 1, 0, -1};
        prog *nref = nccl_reference(c, size);
        const prog *p = w.picked >= 0 ? pick_set_prog(set, w.picked) : NULL;
        const topo *t = own ? own : p && p->topo ? p->topo : nref ? nref->topo : NULL;
        if ((p || nref) && !t) {
            rc = tc_err_set(&err, TC_INPUT, "%s carries no topology: pass --topo",
                            p ? pick_set_name(set, w.picked) : "the NCCL reference");
        } else if (t && t->nranks != ngpus) {
            rc = tc_err_set(&err, TC_INPUT, "%s: topology %s has %d ranks but the plan's "
                            "schedules have ngpus=%d", own ? c->topo_path : c->file, t->name,
                            t->nranks, ngpus);
        }
        bound_model bound;
        tc_err berr;
        run_opts keep = c->run;
        if (rc == TC_OK && t && bound_compute(t, k, &bound, &berr) == TC_OK)
            c->run.bound = &bound;
        if (rc == TC_OK && nref) {
            int v, d;
            double b;
            long long s = (size + 4LL * nref->nchunksperloop - 1) / (4LL * nref->nchunksperloop) *
                          (4LL * nref->nchunksperloop);
            if (run_one(c, nref, t, s, 0, &w.nccl_us, &v, &d, &b, NULL, 0, &err) != TC_OK)
                w.nccl_us = -1;
        }
        if (rc == TC_OK && p) {
            char why[600];
            rc = run_one(c, p, t, size, mode, &w.us, &w.verified, &w.data, &w.bound_us, why,
                         sizeof why, &err);
            if (rc != TC_OK)
                tc_err_prefix(&err, "%s", pick_set_name(set, w.picked));
            else if (!w.verified && all_ok && !c->quiet)
                fprintf(stderr, "taccl-run: %s/%s at %lld bytes: %s\n", c->file,
                        pick_set_name(set, w.picked), size, why);
        } else if (rc == TC_OK) {
            w.us = w.nccl_us;
        }
        c->run = keep;
        prog_free(nref);
        if (rc != TC_OK)
            break;
        all_ok &= w.verified;
        if (c->json)
            plan_row_json(rows, &w, set, k, ngpus);
        else if (!c->quiet)
            plan_row_text(&w, set, k);
        if (size > hi / 2)
            break;
    }
    if (rc == TC_OK && c->json) {
        cJSON *j;
        if (lo == hi && cJSON_GetArraySize(rows) == 1) {
            j = cJSON_DetachItemFromArray(rows, 0);
        } else {
            j = cJSON_CreateObject();
            cJSON_AddItemToObject(j, "rows", rows);
            rows = NULL;
        }
        cJSON_AddStringToObject(j, "dir", c->file);
        cJSON_AddStringToObject(j, "collective", coll_name(k));
        cJSON_AddNumberToObject(j, "ngpus", ngpus);
        cJSON_AddStringToObject(j, "mode", mode ? "inplace" : "outofplace");
        cJSON_AddStringToObject(j, "target", executor ? "msccl-executor" : "msccl");
        cJSON_AddBoolToObject(j, "all_verified", all_ok);
        char *out = cJSON_PrintUnformatted(j);
        printf("%s\n", out);
        free(out);
        cJSON_Delete(j);
    }
    cJSON_Delete(rows);
    topo_free(own);
    pick_set_free(set);
    if (rc != TC_OK) {
        fprintf(stderr, "taccl-run: %s: %s\n", c->file, err.msg);
        return TC_INPUT;
    }
    if (!all_ok)
        fprintf(stderr, "taccl-run: %s: some sizes did not verify (see the table)\n", c->file);
    return all_ok ? TC_OK : TC_WRONG;
}

int main(int argc, char **argv)
{
    cli c;
    int rc = parse_args(argc, argv, &c);
    if (rc == -1) {
        printf("%s\n%s", usage, help);
        return 0;
    }
    if (rc != TC_OK)
        return rc;

    struct stat fst;
    if (stat(c.file, &fst) == 0 && S_ISDIR(fst.st_mode))
        return dir_main(&c);

    tc_err err;
    tc_err_clear(&err);
    prog *p = prog_read_xml(c.file, &err);
    if (!p)
        return fail_input(&c, NULL, NULL, err.msg);
    if (!c.run.target && !c.run.unlimited && p->target) {
        /* The file says which runtime it was written for: judge it by that loader. */
        c.run.target = 1;
        c.run.newer_executor = p->target == 2;
    }
    int owned;
    topo *t = pick_topology(&c, p, &owned, &err);
    if (t && topo_warnings(t) > 0 && c.run.strict) {
        tc_err_set(&err, TC_INPUT, "%s (--strict)", topo_warning(t, 0));
        if (owned)
            topo_free(t);
        t = NULL;
    }
    if (!t) {
        rc = fail_input(&c, p, NULL, err.msg);
        prog_free(p);
        return rc;
    }
    for (int i = 0; i < topo_warnings(t) && !c.quiet; i++)
        fprintf(stderr, "taccl-run: warning: %s\n", topo_warning(t, i));
    if (t->nranks != p->ngpus) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s:%d: <algo> attribute ngpus: topology %s has %d ranks but "
                 "the schedule has ngpus=%d", c.file, p->line, t->name, t->nranks, p->ngpus);
        rc = fail_input(&c, p, t, msg);
        if (owned)
            topo_free(t);
        prog_free(p);
        return rc;
    }

    bound_model bound;
    /* No bound is no error (the run may still verify): the report says so
     * on stdout, so stderr keeps to the one line of a failure. */
    tc_err berr;
    tc_err_clear(&berr);
    if (bound_compute(t, p->coll, &bound, &berr) == TC_OK)
        c.run.bound = &bound;

    /* --trace and --routes: one run at one size, of the file's own steps */
    const char *clash = NULL;
    if (c.run.tiles && (c.trace_to || c.routes_to))
        clash = c.trace_to ? "--trace: follows the file's own steps; it does not go with --tiles"
                           : "--routes: follows the file's own steps; it does not go with --tiles";
    else if (c.sweep_lo > 0 && (c.trace_to || c.routes_to))
        clash = c.trace_to ? "--trace: one run at one size; it does not go with --sweep"
                           : "--routes: one run at one size; it does not go with --sweep";
    else if (c.embed_to && c.sweep_lo > 0)
        clash = "--embed-to: writes the file for one size; it does not go with --sweep";
    else if (c.embed_to && !c.run.data)
        clash = "--embed-to: writes only a schedule whose data verified; it does not go with "
                "--no-data";
    if (clash) {
        rc = fail_input(&c, p, t, clash);
        if (owned)
            topo_free(t);
        prog_free(p);
        return rc;
    }
    if (c.sweep_lo > 0) {
        rc = run_sweep(stdout, p, t, &c.run, c.sweep_lo, c.sweep_hi, c.json, c.file, &err);
        if (rc == TC_INPUT)
            fprintf(stderr, "taccl-run: %s: %s\n", c.file, err.msg);
        else if (rc == TC_WRONG)
            fprintf(stderr, "taccl-run: %s: some sizes did not verify (see the table)\n", c.file);
        if (owned)
            topo_free(t);
        prog_free(p);
        return rc;
    }

    run_report r;
    trace *tr = c.trace_to || c.routes_to ? trace_new(p, t) : NULL;
    if (tr)
        c.run.obs = trace_observer(tr);
    rc = run_schedule(p, t, &c.run, &r, &err);
    if (tr && rc == TC_OK &&
        ((c.trace_to && trace_write(tr, c.trace_to, &err) != TC_OK) ||
         (c.routes_to && trace_write_dot(tr, c.routes_to, &err) != TC_OK))) {
        rc = fail_input(&c, p, t, err.msg);
        run_report_free(&r);
        trace_free(tr);
        if (owned)
            topo_free(t);
        prog_free(p);
        return rc;
    }
    trace_free(tr);
    if (rc != TC_OK) {
        char msg[1200];
        size_error(&c, p, err.msg, msg, sizeof msg);
        rc = fail_input(&c, p, t, msg);
    } else {
        rc = r.verified ? TC_OK : r.refused ? TC_INPUT : TC_WRONG;
        /* written before the report, so --json can say it failed */
        int embed_failed = c.embed_to && r.verified &&
                           embed(&c, p, t, &owned, r.size_bytes, &err) != TC_OK;
        if (c.json) {
            char *j = run_report_json(&r, p, t, &c.run, c.file, embed_failed ? err.msg : NULL);
            printf("%s\n", j);
            free(j);
        } else if (!c.quiet) {
            run_report_print(stdout, &r, p, t, &c.run, c.file, 10);
            if (!c.run.bound)
                printf("bound     none: %s\n", berr.msg);
        }
        if (!r.verified)
            print_verdict(&c, p, &r);
        if (embed_failed) {
            fprintf(stderr, "taccl-run: %s\n", err.msg);
            rc = TC_INPUT;
        }
    }
    run_report_free(&r);
    if (owned)
        topo_free(t);
    prog_free(p);
    return rc;
}
