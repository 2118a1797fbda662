/* taccl-run — execute an MSCCL XML schedule on a device model and judge it.
 *
 * Reads the schedule (and the topology it carries, or --topo, or a default
 * all-to-all), checks what the runtimes would hang or corrupt on, runs it
 * with real data, checks the collective's postcondition and reports time,
 * algorithm and bus bandwidth.  Exit 0: it performs the collective; 1: it
 * does not (the message says where and why); 2: the input cannot be used.
 *
 * Every exit says itself once: one line on stderr for a failure and, with
 * --json (wherever it stands in argv), exactly one JSON object on stdout,
 * success or failure, usage errors included.  Outputs (--embed-to, --trace,
 * --routes) are checked before any work: never an input or each other under
 * any spelling (util/paths.h).
 *
 * The options are one table (OPTS, read by util/args.h): it parses argv,
 * prints the usage and --help, and says which option is for a file
 * (file_main) and which for a directory (dir_main). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "exec/data.h"
#include "exec/mpp.h"
#include "exec/pick.h"
#include "exec/run.h"
#include "model/runtime.h"
#include "model/topo.h"
#include "exec/trace.h"
#include "sched/xml.h"
#include "util/args.h"
#include "util/jsonin.h"
#include "util/paths.h"

typedef struct {
    const char *file;       /* the one positional argument */
    int npos;
    unsigned long long seen;    /* the table's rows given (args_parse) */
    const char *topo_path;
    const char *embed_to;
    const char *trace_to;
    const char *routes_to;
    long long sweep_lo, sweep_hi;
    int json;
    int quiet;
    run_opts run;
} cli;

/* The JSON object of a run that gave no verdict: the report's keys, empty,
 * and `error`. */
static void print_json_error(const cli *c, const prog *p, const topo *t, const char *msg)
{
    char *j = run_report_json(NULL, p, t, &c->run, c->file, msg);
    printf("%s\n", j);
    free(j);
}

static int cli_fail(const cli *c, const prog *p, const topo *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Report an unusable input: one line on stderr, and the JSON object (of p
 * and t, where known) if asked. */
static int cli_fail(const cli *c, const prog *p, const topo *t, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "taccl-run: %s\n", msg);
    if (c->json)
        print_json_error(c, p, t, msg);
    return TC_INPUT;
}

/* ------------------------------------------------------------ the options
 *
 * One table (util/args.h) drives parsing, the usage and --help, and which
 * option goes with a file or a directory. */
enum { M_FILE = 1, M_DIR = 2, M_PLAN = 4, M_MSCCL = M_FILE | M_DIR, M_ANY = M_MSCCL | M_PLAN };

/* --seed N: a decimal integer 0..2^32-1. */
static int parse_seed(const args_opt *o, const char *v, void *base, tc_err *err)
{
    size_t digits = strspn(v, "0123456789");
    if (!*v || v[digits])
        return tc_err_set(err, TC_INPUT, "%s: expected a non-negative integer, got '%s'", o->name,
                          v);
    errno = 0;
    unsigned long long s = strtoull(v, NULL, 10);
    if (errno == ERANGE || s > 0xffffffffULL)
        return tc_err_set(err, TC_INPUT, "%s: at most 4294967295, got '%s'", o->name, v);
    ((cli *)base)->run.seed = (unsigned)s;
    return TC_OK;
}

/* --target: a runtime's name (model/runtime.h's table). */
static int parse_target(const args_opt *o, const char *v, void *base, tc_err *err)
{
    tc_err e;
    if (runtime_parse(v, &((cli *)base)->run.target, &e) != TC_OK)
        return tc_err_set(err, TC_INPUT, "%s: %s", o->name, e.msg);
    return TC_OK;
}

/* --dtype: an element type (model/runtime.h's table). */
static int parse_dtype(const args_opt *o, const char *v, void *base, tc_err *err)
{
    tc_err e;
    if (runtime_dtype_parse(v, &((cli *)base)->run.dtype, &e) != TC_OK)
        return tc_err_set(err, TC_INPUT, "%s: %s", o->name, e.msg);
    return TC_OK;
}

static const args_opt OPTS[] = {
    {.name = "--topo", .value = "T.json", .field = offsetof(cli, topo_path), .modes = M_ANY,
     .help = "topology to run on (default: the one in the file, else a\n"
             "fully connected default with assumed figures)"},
    {.name = "--size", .value = "BYTES", .parse = args_size,
     .field = offsetof(cli, run.size_bytes), .modes = M_ANY,
     .help = "larger per-rank buffer (nccl-tests convention); K/M/G are\n"
             "powers of 1024 (default: the file's, else 1 MiB)"},
    {.name = "--dtype", .value = "T", .parse = parse_dtype, .modes = M_ANY,
     .help = "element type: i32 (default), f32, bf16 or f16; the floats\n"
             "show reduction order (bf16 and f16 round each step to\n"
             "nearest even, as a GPU does)"},
    {.name = "--no-data", .field = offsetof(cli, run.data), .set = 0, .modes = M_ANY,
     .help = "timing only: do not move or check data"},
    {.name = "--seed", .value = "N", .parse = parse_seed, .modes = M_ANY,
     .help = "seed of the input data (default 1)"},
    {.name = "--inplace", .field = offsetof(cli, run.mode), .set = 1, .modes = M_ANY,
     .usage = "--inplace|--outofplace",
     .help = "run in place only; --outofplace: out of place only\n"
             "(default: every mode the file allows)"},
    {.name = "--outofplace", .field = offsetof(cli, run.mode), .set = 0, .modes = M_ANY,
     .usage = ""},
    {.name = "--target", .value = "T", .parse = parse_target, .modes = M_MSCCL,
     .help = "judge loading as that runtime's loader does, exit 2 if it\n"
             "refuses the file: msccl (legacy: coll reduce_scatter, name,\n"
             "i/o_chunks consistent, 256 steps per tb, 216 tbs, scratch\n"
             "maxBytes*s_chunks/nchunksperloop allocated at init) or\n"
             "msccl-executor (coll reducescatter; outofplace, minBytes\n"
             "and maxBytes required; 64 steps per tb); unlimited: no\n"
             "loader, no step/tb limits (simulation only).  Default:\n"
             "the file's own <taccl target>, else what both refuse\n"
             "(256 steps per tb), either spelling"},
    {.name = "--sweep", .value = "LO:HI", .parse = args_range, .field = offsetof(cli, sweep_lo),
     .field2 = offsetof(cli, sweep_hi), .expect = "LO:HI sizes with LO <= HI, e.g. 1K:1G",
     .modes = M_ANY,
     .help = "run at every power-of-two size from LO to HI and print an\n"
             "nccl-tests-style table (data checked where the buffers\n"
             "fit in 1 GiB, timing only above, said in the row)"},
    {.name = "--variants", .field = offsetof(cli, run.variants), .set = 1, .modes = M_FILE,
     .help = "with --sweep: also time every row under each model\n"
             "variant (steps or tiles, delay, ports, rt-lat; docs/\n"
             "design.md section 4), timing only, as a column (JSON:\n"
             "\"variants\" per row; null where one does not apply)"},
    {.name = "--embed-to", .value = "OUT", .field = offsetof(cli, embed_to), .modes = M_FILE,
     .help = "also write the schedule with its topology and size\n"
             "embedded, so OUT runs with no other argument (only a\n"
             "schedule that verifies is written, as serving the\n"
             "buffer modes that ran)"},
    {.name = "--trace", .value = "OUT.json", .field = offsetof(cli, trace_to),
     .modes = M_FILE | M_PLAN,
     .help = "also write what the run did as a Chrome/Perfetto trace\n"
             "(open it in ui.perfetto.dev or chrome://tracing): a track\n"
             "per rank's threadblock and per link, switch port and NIC\n"
             "direction, an event per step and per transfer, arrows\n"
             "from each send to its receive (the first mode run)"},
    {.name = "--routes", .value = "OUT.dot", .field = offsetof(cli, routes_to),
     .modes = M_FILE | M_PLAN,
     .help = "also write the routes the run used as a Graphviz graph\n"
             "(render: dot -Tsvg OUT.dot -o OUT.svg): an edge per pair\n"
             "of ranks with its transfers and bytes, coloured by link,\n"
             "switch or NIC"},
    {.name = "--tiles", .field = offsetof(cli, run.tiles), .set = 1, .modes = M_MSCCL,
     .usage = "--tiles|--steps",
     .help = "time it as the MSCCL runtimes' interpreter runs it (the\n"
             "default on a GPU topology): the whole program once per\n"
             "pass over the next tile of every chunk (2 MiB under\n"
             "Simple, 32 KiB LL, 576000 B LL128), a step's chunks as\n"
             "separate operations where a chunk takes several passes\n"
             "(docs/design.md section 8); the checks still judge the\n"
             "file.  --steps: the program once, each step one transfer\n"
             "of its whole cnt chunks (what --trace and --routes\n"
             "follow, and a chip/cluster device's only timing)"},
    {.name = "--steps", .field = offsetof(cli, run.tiles), .set = 0, .modes = M_MSCCL,
     .usage = ""},
    {.name = "--strict", .field = offsetof(cli, run.strict), .set = 1, .modes = M_ANY,
     .help = "fail (exit 1) on warnings too: races and uninitialized\n"
             "reads among steps whose data never reaches the result;\n"
             "a topology whose figures lack a source is exit 2"},
    {.name = "--json", .field = offsetof(cli, json), .set = 1, .modes = M_ANY,
     .help = "one JSON object on stdout, whatever the exit"},
    {.name = "--quiet", .alias = "-q", .field = offsetof(cli, quiet), .set = 1, .modes = M_ANY,
     .help = "print nothing but errors (exit code only)"},
    {.name = NULL}};

static const args_mode MODES[] = {
    {M_FILE, "a schedule file", "FILE.xml"},
    {M_DIR, "a directory (a plan)", "DIR (--size BYTES | --sweep LO:HI)"},
    {M_PLAN, "an MSCCL++ plan", "PLAN.json"},
    {0, NULL, NULL}};

static const args_spec SPEC = {
    .tool = "taccl-run",
    .opts = OPTS,
    .modes = MODES,
    .pos = offsetof(cli, file),
    .npos = offsetof(cli, npos),
    .max_pos = 1,
    .too_many = "only one schedule file, got a second: '%s'",
    .about =
    "Run an MSCCL XML schedule or an MSCCL++ plan on a device model: real data\n"
    "moved and checked, runtime hazards reported, alpha-beta time, algorithm and\n"
    "bus bandwidth.\n"
    "\n",
    .after =
    "\n"
    "With a directory (a plan: taccl-synth --plan, or any set of MSCCL files), run\n"
    "at each size the file the runtime would pick by its own rules (collective,\n"
    "in-place flag, minBytes/maxBytes, whole elements per chunk; legacy or newer\n"
    "executor by the files' target or --target), or say that NCCL runs the call;\n"
    "DIR/nccl/nccl-<bytes>.xml, where present, is NCCL's own schedule at that\n"
    "size and gives the x NCCL column; where the plan wrote none because it breaks\n"
    "the runtime's limits, plan.json's times of it (marked *).  Out of place\n"
    "unless --inplace.\n"
    "\n"
    "An MSCCL++ execution plan (JSON whose top level has \"gpus\"; told by content,\n"
    "not name) runs with MSCCL++'s semantics: puts/gets into peers' buffers,\n"
    "signal/wait, LL packets, switch (NVLS) ops, barriers, semaphores, pipelines.\n"
    "Its postcondition is the plan's collective (allreduce, allgather,\n"
    "reducescatter, alltoall; none for test/sendrecv); hazards are said in\n"
    "MSCCL++'s terms.  Default topology: one switch joining every rank with\n"
    "dgx-h100-x1's figures; default size 1 MiB rounded to the chunks; the mode\n"
    "is the plan's \"inplace\" unless --inplace/--outofplace.\n"
    "\n"
    "Outputs may not be an input or each other (any spelling), nor a directory\n"
    "or FIFO (/dev/null is fine): refused before the run.\n"
    "\n"
    "Exit: 0 performs the collective, 1 does not, 2 input unusable (including a\n"
    "file the target runtime's loader refuses) or an output refused or unwritable.\n"};

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

/* Write the schedule with the topology and size it ran with, and as
 * serving only the buffer modes that ran and verified: a mode --inplace or
 * --outofplace (or the legacy loader) left out was never checked, so OUT
 * must not claim it. */
static int embed(const cli *c, prog *p, topo *t, int *owned, const run_report *r, tc_err *err)
{
    if (*owned && !t->is_default) {
        prog_set_topo(p, t); /* p now owns it */
        *owned = 0;
    }
    p->size_bytes = r->size_bytes;
    if (runtime_get(c->run.target)->in_file)
        p->target = c->run.target;
    /* spelled for the runtime the file says it is for (under --target
     * unlimited, the one it was read with) */
    xml_write_opts wo = {.runtime = p->target, .embed_topology = !t->is_default};
    int claimed_in = p->inplace, claimed_out = p->outofplace;
    p->inplace = p->outofplace = 0;
    for (int m = 0; m < r->nmodes; m++) {
        if (r->modes[m])
            p->inplace = 1;
        else
            p->outofplace = 1;
    }
    int rc = prog_write_xml(p, c->embed_to, &wo, err);
    p->inplace = claimed_in;    /* the report below describes the file as read */
    p->outofplace = claimed_out;
    return rc;
}

static int is_char_device(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* Before any work: no output is an input (the schedule, --topo) or another
 * output of this run, under any spelling, nor a file that cannot be
 * replaced (a directory, a FIFO; /dev/null and terminals are fine). */
static int check_outputs(const cli *c, tc_err *err)
{
    const char *inputs[] = {c->file, c->topo_path};
    const struct {
        const char *flag, *path;
    } outs[] = {{"--embed-to", c->embed_to}, {"--trace", c->trace_to}, {"--routes", c->routes_to}};
    int n = (int)(sizeof outs / sizeof *outs);
    for (int i = 0; i < n; i++) {
        if (!outs[i].path)
            continue;
        tc_err e;
        if (path_check_output(outs[i].path, inputs, 2, &e) != TC_OK)
            return tc_err_set(err, TC_INPUT, "%s %s", outs[i].flag, e.msg);
        for (int j = 0; j < i; j++)
            if (outs[j].path && path_same_file(outs[i].path, outs[j].path) &&
                !is_char_device(outs[i].path))
                return tc_err_set(err, TC_INPUT, "%s %s is also the %s output %s: one would "
                                  "replace the other", outs[i].flag, outs[i].path, outs[j].flag,
                                  outs[j].path);
    }
    return TC_OK;
}

/* ------------------------------------------------------------ a plan */

/* One size of a plan run: what the runtime picks and how it runs. */
typedef struct {
    long long size;
    int picked;             /* index in the set, -1: NCCL runs it */
    double us;              /* the picked file's time (or NCCL's on fallback), < 0 none */
    double nccl_us;         /* NCCL's schedule at this size, < 0 if DIR has none */
    int nccl_planned;       /* nccl_us is plan.json's: NCCL's schedule breaks the
                               runtime's limits there and the plan timed it unwritten */
    int verified;           /* the picked file verified (1 on fallback) */
    int data;               /* data checked */
    double bound_us;        /* < 0 none */
    double passes_us;       /* the bound in the runtimes' tile passes, <= 0 none */
    long long padded;       /* > 0: the call padded to this many bytes runs `picked`
                               (unpadded, the runtime runs NCCL) */
    char why[640];          /* an NCCL fallback's reason, a padded call's how */
    int nvar;               /* > 0: x NCCL under this many model variants */
    variant_times vus, vnccl;   /* the picked file's and NCCL's times under each */
    double xlo, xhi;        /* the range of x NCCL over them */
    double nccl_est;        /* NCCL's own estimate of what it runs where its file is
                               not that (plan.json's would_run), < 0 none */
} plan_row;

/* Time (and check) p at `size` in `mode` with the options `base`; TC_OK and
 * the results filled, or an error. */
static int run_one(const run_opts *base, const prog *p, const topo *t, long long size, int mode,
                   double *us, int *verified, int *data, double *bound_us, double *passes_us,
                   char *why, size_t whysz, tc_err *err)
{
    run_opts ro = *base;
    ro.mode = mode;
    ro.size_bytes = size;
    *data = base->data &&
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
                        runtime_name(ro.target), h ? h->msg : "");
    }
    *us = run_report_time_us(&r);
    *verified = r.verified;
    *bound_us = r.has_bound ? r.bound_us : -1;
    if (passes_us)
        *passes_us = r.has_bound ? r.passes_us : 0;
    const hazard *h = r.verified ? NULL : run_report_verdict(&r);
    if (why && whysz)
        snprintf(why, whysz, "%s", h ? h->msg : r.verified ? "" : "did not verify");
    run_report_free(&r);
    return rc;
}

/* The size a call of `size` bytes runs p at: a whole number of 4-byte
 * elements per chunk. */
static long long served_size(const prog *p, long long size)
{
    long long unit = 4LL * (p->nchunksperloop > 0 ? p->nchunksperloop : 1);
    return (size + unit - 1) / unit * unit;
}

/* NCCL's schedule for `size` in DIR/nccl/ (its path in `path`), checked
 * like any input: *out NULL when DIR has none for that size; TC_INPUT,
 * naming the file and the field, when the file is there but is not NCCL's
 * schedule of this plan's collective on its ranks at that size. */
static int nccl_reference(const cli *c, coll_kind k, int ngpus, long long size, char *path,
                          size_t pathsz, prog **out, tc_err *err)
{
    *out = NULL;
    snprintf(path, pathsz, "%s/nccl/nccl-%lld.xml", c->file, size);
    struct stat st;
    if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return TC_OK;   /* none for this size (or no DIR/nccl/ at all) */
    prog *p = prog_read_xml(path, err);
    if (!p)
        return TC_INPUT;
    int rc = TC_OK;
    if (p->coll != k)
        rc = tc_err_set(err, TC_INPUT, "%s:%d: <algo> attribute coll: %s, but the plan's "
                        "schedules are %s", path, p->line, coll_name(p->coll), coll_name(k));
    else if (p->ngpus != ngpus)
        rc = tc_err_set(err, TC_INPUT, "%s:%d: <algo> attribute ngpus: %d, but the plan's "
                        "schedules have ngpus=%d", path, p->line, p->ngpus, ngpus);
    else if (p->size_bytes > 0 && p->size_bytes != served_size(p, size))
        rc = tc_err_set(err, TC_INPUT, "%s:%d: <taccl> attribute size_bytes: %lld, but "
                        "nccl-%lld.xml must be NCCL's schedule for calls of %lld bytes "
                        "(size_bytes=%lld)", path, p->size_line > 0 ? p->size_line : p->line,
                        p->size_bytes, size, size, served_size(p, size));
    if (rc != TC_OK)
        prog_free(p);
    else
        *out = p;
    return rc;
}

/* NCCL's time at `size` from its reference file.  The file is timed, not
 * loaded (formats.md section 7), so no loader judges it; one that cannot run
 * or does not verify would give a meaningless x NCCL: TC_INPUT naming it. */
static int nccl_time(const cli *c, const prog *nref, const char *path, const topo *t,
                     long long size, double *us, tc_err *err)
{
    run_opts ro = c->run;
    ro.target = RT_UNLIMITED;
    int v, d;
    double b;
    char why[600];
    int rc = run_one(&ro, nref, t, served_size(nref, size), 0, us, &v, &d, &b, NULL, why, sizeof why,
                     err);
    if (rc != TC_OK)
        tc_err_prefix(err, "%s", path);
    else if (!v)
        rc = tc_err_set(err, TC_INPUT, "%s: NCCL's schedule does not verify at %lld bytes: %s",
                        path, size, why);
    return rc;
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
    if (w->padded > 0) {
        cJSON_AddNumberToObject(o, "padded_to", (double)w->padded);
        cJSON_AddNumberToObject(o, "pad_bytes", (double)(w->padded - w->size));
    }
    if (w->why[0])
        cJSON_AddStringToObject(o, w->picked < 0 ? "reason" : "how", w->why);
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
    if (w->nccl_est > 0)        /* what NCCL runs, which its file is not */
        cJSON_AddNumberToObject(o, "nccl_estimate_us", w->nccl_est);
    else
        cJSON_AddNullToObject(o, "nccl_estimate_us");
    if (w->nccl_us >= 0) {
        cJSON_AddNumberToObject(o, "nccl_us", w->nccl_us);
        cJSON_AddStringToObject(o, "nccl_from", w->nccl_planned ? "plan.json" : "file");
        if (w->us > 0)
            cJSON_AddNumberToObject(o, "x_nccl", w->nccl_us / w->us);
        if (w->nvar > 0) {
            cJSON_AddNumberToObject(o, "x_nccl_min", w->xlo);
            cJSON_AddNumberToObject(o, "x_nccl_max", w->xhi);
            cJSON *v = cJSON_AddObjectToObject(o, "x_nccl_variants");
            for (int i = 0; i < VAR_COUNT; i++)
                if (w->vnccl.us[i] >= 0 && w->vus.us[i] > 0)
                    cJSON_AddNumberToObject(v, variant_get((variant_id)i)->name,
                                            w->vnccl.us[i] / w->vus.us[i]);
                else
                    cJSON_AddNullToObject(v, variant_get((variant_id)i)->name);
        }
    } else {
        cJSON_AddNullToObject(o, "nccl_us");
    }
    if (w->bound_us >= 0)
        cJSON_AddNumberToObject(o, "bound_us", w->bound_us);
    if (w->passes_us > 0)
        cJSON_AddNumberToObject(o, "bound_passes_us", w->passes_us);
    cJSON_AddItemToArray(a, o);
}

static void plan_row_text(const plan_row *w, const pick_set *set, coll_kind k)
{
    char t[32] = "-", x[32] = "-", n[32] = "-", bw[32] = "-", ratio[32] = "-", rg[32] = "-";
    if (w->us >= 0) {
        snprintf(t, sizeof t, "%.3f", w->us);
        snprintf(bw, sizeof bw, "%.3f", coll_algbw_gbps(k, (double)w->size, w->us));
    }
    if (w->nccl_us >= 0) {
        snprintf(n, sizeof n, "%.3f%s", w->nccl_us, w->nccl_planned ? "*" : "");
        if (w->us > 0)
            snprintf(x, sizeof x, "%.2f", w->nccl_us / w->us);
        if (w->nvar > 0)
            snprintf(rg, sizeof rg, "%.2f-%.2f", w->xlo, w->xhi);
    }
    if (w->bound_us > 0 && w->us > 0)
        snprintf(ratio, sizeof ratio, "%.3f", w->bound_us / w->us);
    printf("%12lld %12s %9s %12s %8s %11s %6s  %s%s%s%s%s\n", w->size, t, bw, n, x, rg, ratio,
           w->picked >= 0 ? pick_set_name(set, w->picked) : "NCCL fallback",
           w->picked < 0 ? "" : !w->verified ? "  (NOT VERIFIED)" : w->data ? ""
                                                                          : "  (timing only)",
           w->why[0] ? " (" : "", w->why, w->why[0] ? ")" : "");
}

/* What a plan run knows of its set, for its messages and its JSON. */
typedef struct {
    pick_set *set;
    coll_kind k;
    int ngpus;
    int mode;               /* 1 in place */
    runtime rt;             /* whose rules pick the file for a call */
    topo *own;              /* --topo */
    cJSON *rows;
    int all_ok;
    cJSON *planj;           /* DIR/plan.json when it parses (its fallbacks' reasons) */
    run_variant_set vars;   /* the model variants' topologies (x NCCL's range) */
    int planned;            /* rows whose NCCL time is plan.json's */
    /* the lower bound depends on the topology and the collective, not the
     * size: computed once per topology (at 1024 ranks it was two thirds of
     * a sweep's time), keyed by the topology's JSON, since every file
     * carries its own copy */
    char *bound_key;
    bound_model bound;
    int bound_ok;
} plan_run;

/* The lower bound on t for the plan's collective: NULL if it has none. */
static const bound_model *plan_bound(plan_run *pr, const topo *t)
{
    char *key = topo_to_json(t);
    if (!key || !pr->bound_key || strcmp(key, pr->bound_key)) {
        tc_err berr;
        free(pr->bound_key);
        pr->bound_key = key;
        pr->bound_ok = bound_compute(t, pr->k, &pr->bound, &berr) == TC_OK;
        if (pr->bound_ok)
            bound_add_passes(t, pr->k, &pr->bound);
    } else {
        free(key);
    }
    return pr->bound_ok ? &pr->bound : NULL;
}

/* The reason plan.json gives for an NCCL fallback range holding size in
 * mode; NULL if DIR has no such plan.json (a directory of files a user
 * gathered) or no range holds it. */
static const char *plan_reason(const plan_run *pr, long long size)
{
    cJSON *fb = pr->planj ? cJSON_GetObjectItem(pr->planj, "nccl_fallback") : NULL;
    cJSON *o;
    cJSON_ArrayForEach(o, fb) {
        cJSON *lo = cJSON_GetObjectItem(o, "min_bytes"), *hi = cJSON_GetObjectItem(o,
                                                                                 "max_bytes_excl");
        cJSON *m = cJSON_GetObjectItem(o, "mode"), *r = cJSON_GetObjectItem(o, "reason");
        if (cJSON_IsNumber(lo) && cJSON_IsNumber(hi) && cJSON_IsString(m) && cJSON_IsString(r) &&
            size >= lo->valuedouble && size < hi->valuedouble &&
            !strcmp(m->valuestring, pr->mode ? "inplace" : "outofplace"))
            return r->valuestring;
    }
    return NULL;
}

/* DIR/plan.json, parsed, or NULL (it is optional: only its reasons are read). */
static cJSON *plan_json_load(const char *dir)
{
    static const jsonin_doc doc = {"plan", 64L << 20, 0};
    char path[4200];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    tc_err e;
    char *text = jsonin_read_file(path, &doc, &e);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

/* Why NCCL runs a call the runtime picks no file for, and whether padding
 * it runs one (w->padded, w->picked). */
static void plan_fallback(const plan_run *pr, plan_row *w)
{
    long long padded;
    int f, why = pick_fallback(pr->set, pr->k, pr->ngpus, pr->mode, w->size, pr->rt, &padded,
                               &f);
    if (why == PICK_PADDED) {
        int ncpl = pick_set_prog(pr->set, f)->nchunksperloop;
        w->picked = f;
        w->padded = padded;
        snprintf(w->why, sizeof w->why, "padded to %lld B, +%lld: the runtime runs a file only "
                 "for a whole number of 4-byte elements per chunk (%d chunks), else NCCL",
                 padded, padded - w->size, ncpl);
    } else if (why == PICK_NOT_LOADED) {
        snprintf(w->why, sizeof w->why, "%s matches but is not loaded: %s loads at most %d "
                 "files", pick_set_name(pr->set, f), runtime_get(pr->rt)->label,
                 runtime_get(pr->rt)->max_files);
    } else {
        const char *r = plan_reason(pr, w->size);
        snprintf(w->why, sizeof w->why, "%s", r ? r : "no file's range and mode hold this size");
    }
}

/* The set's files hold one collective on one communicator. */
static int plan_check_set(const cli *c, plan_run *pr, tc_err *err)
{
    const prog *p0 = pick_set_prog(pr->set, 0);
    if (!p0) {
        /* no file: a plan whose every size NCCL serves; its collective and
         * ranks are plan.json's */
        cJSON *k = pr->planj ? cJSON_GetObjectItem(pr->planj, "collective") : NULL;
        cJSON *n = pr->planj ? cJSON_GetObjectItem(pr->planj, "ngpus") : NULL;
        if (!cJSON_IsString(k) || coll_parse(k->valuestring, &pr->k) != 0 ||
            !cJSON_IsNumber(n) || n->valueint < 1)
            return tc_err_set(err, TC_INPUT, "%s/plan.json: no schedule in the directory and "
                              "no valid \"collective\" and \"ngpus\" to run NCCL's with",
                              c->file);
        pr->ngpus = n->valueint;
        return TC_OK;
    }
    pr->k = p0->coll;
    pr->ngpus = p0->ngpus;
    for (int i = 1; i < pick_set_count(pr->set); i++) {
        const prog *q = pick_set_prog(pr->set, i);
        if (q->coll != pr->k || q->ngpus != pr->ngpus)
            return tc_err_set(err, TC_INPUT, "%s: %s is %s on %d ranks but %s is %s on %d: a "
                              "plan holds one collective on one communicator", c->file,
                              pick_set_name(pr->set, 0), coll_name(pr->k), pr->ngpus,
                              pick_set_name(pr->set, i), coll_name(q->coll), q->ngpus);
    }
    return TC_OK;
}

/* NCCL's times at `size` as plan.json gives them where the plan wrote no
 * file for it (nccl[].not_written: its schedule breaks the runtime's
 * limits, so the plan timed it beyond them, formats.md section 7): 1 and
 * *v filled (-1 where a variant has none) when the timing this run uses
 * is there (the default, or steps/tiles as asked: *us).  They are the
 * plan's topology's: with --topo, none. */
static int plan_nccl_times(const cli *c, const plan_run *pr, const topo *t, long long size,
                           variant_times *v, double *us)
{
    cJSON *a = pr->planj && !pr->own ? cJSON_GetObjectItem(pr->planj, "nccl") : NULL, *o;
    cJSON_ArrayForEach(o, a) {
        cJSON *s = cJSON_GetObjectItem(o, "size_bytes"), *vu = cJSON_GetObjectItem(o,
                                                                                "variants_us");
        if (!cJSON_IsNumber(s) || (long long)s->valuedouble != size ||
            !cJSON_IsString(cJSON_GetObjectItem(o, "not_written")) || !cJSON_IsObject(vu))
            continue;
        for (int k = 0; k < VAR_COUNT; k++) {
            cJSON *x = cJSON_GetObjectItem(vu, variant_get((variant_id)k)->name);
            v->us[k] = cJSON_IsNumber(x) && x->valuedouble > 0 ? x->valuedouble : -1;
        }
        *us = v->us[run_tiles(&c->run, t) == variant_tiles(VAR_DEFAULT) ? VAR_DEFAULT
                                                                         : VAR_PASSES];
        return *us > 0;
    }
    return 0;
}

/* NCCL's own estimate at `size` of the pick no output holds, as plan.json's
 * nccl[].would_run gives it (variant nccl-est, model/variant.h), or -1.
 * The plan's topology's: with --topo, none. */
static double plan_nccl_est(const plan_run *pr, long long size)
{
    cJSON *a = pr->planj && !pr->own ? cJSON_GetObjectItem(pr->planj, "nccl") : NULL, *o;
    cJSON_ArrayForEach(o, a) {
        cJSON *s = cJSON_GetObjectItem(o, "size_bytes");
        if (!cJSON_IsNumber(s) || (long long)s->valuedouble != size)
            continue;
        cJSON *w = cJSON_GetObjectItem(o, "would_run");
        cJSON *e = cJSON_IsObject(w) ? cJSON_GetObjectItem(w, "estimate_us") : NULL;
        return cJSON_IsNumber(e) && e->valuedouble > 0 ? e->valuedouble : -1;
    }
    return -1;
}

/* One size of the plan: the file picked (or NCCL), run and added to the
 * table.  TC_OK (w.verified says the verdict), or TC_INPUT with err naming
 * the file at fault. */
static int plan_size(cli *c, plan_run *pr, long long size, tc_err *err)
{
    plan_row w = {.size = size,
                  .picked = pick_schedule(pr->set, pr->k, pr->ngpus, pr->mode, size, pr->rt),
                  .us = -1, .nccl_us = -1, .verified = 1, .bound_us = -1,
                  .nccl_est = plan_nccl_est(pr, size)};
    if (w.picked < 0)
        plan_fallback(pr, &w);
    char npath[4200], ppath[4200] = "";
    prog *nref = NULL;
    int rc = nccl_reference(c, pr->k, pr->ngpus, size, npath, sizeof npath, &nref, err);
    const prog *p = w.picked >= 0 ? pick_set_prog(pr->set, w.picked) : NULL;
    if (p)
        snprintf(ppath, sizeof ppath, "%s/%s", c->file, pick_set_name(pr->set, w.picked));
    const topo *t = pr->own ? pr->own : p && p->topo ? p->topo : nref ? nref->topo : NULL;
    const char *tfrom = pr->own ? c->topo_path : p && p->topo ? ppath : npath;
    if (rc != TC_OK) {
        /* said */
    } else if ((p || nref) && !t) {
        rc = tc_err_set(err, TC_INPUT, "%s carries no topology: pass --topo", p ? ppath : npath);
    } else if (t && t->nranks != pr->ngpus) {
        rc = tc_err_set(err, TC_INPUT, "%s: topology %s has %d ranks but the plan's schedules "
                        "have ngpus=%d", tfrom, t->name, t->nranks, pr->ngpus);
    }
    run_opts keep = c->run;
    if (rc == TC_OK && t)
        c->run.bound = plan_bound(pr, t);
    if (rc == TC_OK && nref)
        rc = nccl_time(c, nref, npath, t, size, &w.nccl_us, err);
    else if (rc == TC_OK && t && plan_nccl_times(c, pr, t, size, &w.vnccl, &w.nccl_us))
        w.nccl_planned = 1;
    if (rc == TC_OK && p) {
        char why[600];
        rc = run_one(&c->run, p, t, w.padded > 0 ? w.padded : size, pr->mode, &w.us,
                     &w.verified, &w.data, &w.bound_us, &w.passes_us, why, sizeof why, err);
        if (rc != TC_OK)
            tc_err_prefix(err, "%s", ppath);
        else if (!w.verified && pr->all_ok && !c->quiet)
            fprintf(stderr, "taccl-run: %s at %lld bytes: %s\n", ppath,
                    w.padded > 0 ? w.padded : size, why);
    } else if (rc == TC_OK) {
        w.us = w.nccl_us;
    }
    if (rc == TC_OK && p && (nref || w.nccl_planned) && w.us > 0 && w.nccl_us > 0 &&
        w.verified) {
        /* x NCCL under every model variant: each ratio's two times from
         * one variant (model/variant.h) */
        run_opts nro = c->run;
        nro.target = RT_UNLIMITED;
        if (nref)
            run_variants(nref, t, &nro, served_size(nref, size), 0, w.nccl_us, &pr->vars,
                         &w.vnccl);
        run_variants(p, t, &c->run, w.padded > 0 ? w.padded : size, pr->mode, w.us, &pr->vars,
                     &w.vus);
        /* what NCCL runs where no output holds it: its own estimate */
        w.vnccl.us[VAR_NCCL_EST] = w.nccl_est;
        w.vus.us[VAR_NCCL_EST] = w.vnccl.us[VAR_NCCL_EST] > 0 ? w.us : -1;
        w.nvar = variant_ratio_range(&w.vnccl, &w.vus, &w.xlo, &w.xhi);
    }
    c->run = keep;
    prog_free(nref);
    if (rc != TC_OK)
        return rc;
    pr->all_ok &= w.verified;
    pr->planned += w.nccl_planned;
    if (c->json)
        plan_row_json(pr->rows, &w, pr->set, pr->k, pr->ngpus);
    else if (!c->quiet)
        plan_row_text(&w, pr->set, pr->k);
    return TC_OK;
}

/* The one JSON object of a plan run: with one size and its row, the row and
 * the plan's keys; else the plan's keys and rows[] (empty when the run
 * stopped before a row); `error` null or why. */
static void plan_json(const cli *c, plan_run *pr, int single, const char *error)
{
    cJSON *j;
    if (single && cJSON_GetArraySize(pr->rows) == 1) {
        j = cJSON_DetachItemFromArray(pr->rows, 0);
    } else {
        j = cJSON_CreateObject();
        cJSON_AddItemToObject(j, "rows", pr->rows);
        pr->rows = NULL;
    }
    cJSON_AddStringToObject(j, "dir", c->file);
    if (pr->set) {
        cJSON_AddStringToObject(j, "collective", coll_name(pr->k));
        cJSON_AddNumberToObject(j, "ngpus", pr->ngpus);
    } else {
        cJSON_AddNullToObject(j, "collective");
        cJSON_AddNullToObject(j, "ngpus");
    }
    cJSON_AddStringToObject(j, "mode", pr->mode ? "inplace" : "outofplace");
    if (pr->set)
        cJSON_AddStringToObject(j, "target", runtime_name(pr->rt));
    else
        cJSON_AddNullToObject(j, "target");
    cJSON_AddBoolToObject(j, "all_verified", pr->all_ok && !error);
    if (error)
        cJSON_AddStringToObject(j, "error", error);
    else
        cJSON_AddNullToObject(j, "error");
    char *out = cJSON_PrintUnformatted(j);
    printf("%s\n", out);
    free(out);
    cJSON_Delete(j);
}

/* A plan of MSCCL++ files (plan.json "target": "mscclpp" with files):
 * the picking here is MSCCL XML's, which would see no file and print every
 * size as NCCL's.  TC_INPUT naming what to run instead; TC_OK otherwise. */
static int mpp_dir_refused(const char *dir, const cJSON *planj, tc_err *err)
{
    const cJSON *tg = planj ? cJSON_GetObjectItemCaseSensitive(planj, "target") : NULL;
    const cJSON *files = planj ? cJSON_GetObjectItemCaseSensitive(planj, "files") : NULL;
    if (!cJSON_IsString(tg) || strcmp(tg->valuestring, "mscclpp") || !cJSON_IsArray(files) ||
        cJSON_GetArraySize(files) == 0)
        return TC_OK;
    const cJSON *f0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(files, 0), "file");
    return tc_err_set(err, TC_INPUT, "%s/plan.json: \"target\": \"mscclpp\": taccl-run DIR "
                      "picks among MSCCL XML files, not MSCCL++ plans; run each file, as "
                      "plan.json's files[] say which sizes it serves (taccl-run %s/%s --sweep "
                      "LO:HI)", dir, dir, cJSON_IsString(f0) ? f0->valuestring : "FILE.json");
}

/* taccl-run DIR --size S | --sweep LO:HI */
static int dir_main(cli *c)
{
    tc_err err;
    tc_err_clear(&err);
    plan_run pr = {.mode = c->run.mode == 1 ? 1 : 0, .rows = cJSON_CreateArray(), .all_ok = 1};
    long long lo = c->sweep_lo > 0 ? c->sweep_lo : c->run.size_bytes;
    long long hi = c->sweep_lo > 0 ? c->sweep_hi : c->run.size_bytes;
    int rc = args_check_mode(&SPEC, c->seen, M_DIR, &err);
    if (rc != TC_OK)
        tc_err_prefix(&err, "%s", c->file);
    else if (lo <= 0)
        rc = tc_err_set(&err, TC_INPUT, "%s: is a directory (a plan): give --size BYTES or "
                        "--sweep LO:HI to run the file the runtime picks", c->file);
    else if (!(pr.set = pick_set_load(c->file, &err)))
        rc = TC_INPUT;
    else {
        pr.planj = plan_json_load(c->file);
        rc = mpp_dir_refused(c->file, pr.planj, &err);
        if (rc == TC_OK)
            rc = plan_check_set(c, &pr, &err);
    }
    if (rc == TC_OK) {
        pr.rt = c->run.target != RT_ANY ? runtime_get(c->run.target)->selects_as
                                        : pick_set_target(pr.set);
        cJSON *tg = pr.planj ? cJSON_GetObjectItem(pr.planj, "target") : NULL;
        tc_err te;
        runtime prt;
        if (c->run.target == RT_ANY && pick_set_count(pr.set) == 0 && cJSON_IsString(tg) &&
            runtime_parse(tg->valuestring, &prt, &te) == TC_OK)
            pr.rt = runtime_get(prt)->selects_as;   /* no file: the plan's runtime */
        if (c->run.target == RT_ANY)
            c->run.target = pr.rt;
        int most = runtime_get(pr.rt)->max_files;
        if (most > 0 && pick_set_count(pr.set) > most && !c->quiet)
            fprintf(stderr, "taccl-run: warning: %s: %d schedules, but %s "
                    "loads at most %d of MSCCL_XML_FILES: given in name order, it ignores %s and "
                    "the files after it\n", c->file, pick_set_count(pr.set),
                    runtime_get(pr.rt)->label, most, pick_set_name(pr.set, most));
        if (runtime_reduces(c->run.target, c->run.dtype, RED_SUM, &err) != TC_OK) {
            tc_err_prefix(&err, "--dtype %s", runtime_dtype_name(c->run.dtype));
            rc = TC_INPUT;
        } else if (c->topo_path && !(pr.own = topo_load(c->topo_path, &err)))
            rc = TC_INPUT;
    }
    if (rc == TC_OK && !c->json && !c->quiet)
        printf("# %s: %s, %d ranks, %s, %s runtime's rules\n"
               "#%11s %12s %9s %12s %8s %11s %6s  %s\n",
               c->file, coll_name(pr.k), pr.ngpus, pr.mode ? "in place" : "out of place",
               runtime_name(pr.rt), "size(B)", "time(us)", "algbw",
               "nccl(us)", "x NCCL", "variants", "bound", "picked");
    for (long long size = lo; rc == TC_OK && size <= hi; size *= 2) {
        rc = plan_size(c, &pr, size, &err);
        if (size > hi / 2)
            break;
    }
    if (rc == TC_OK && pr.planned && !c->json && !c->quiet)
        printf("# *: NCCL's schedule breaks the runtime's limits at that size (NCCL runs it "
               "natively); the plan timed it unwritten, plan.json has its times\n");
    char wrong[600] = "";
    if (rc == TC_OK && !pr.all_ok)
        snprintf(wrong, sizeof wrong, "%s: some sizes did not verify (see the table)", c->file);
    if (c->json)
        plan_json(c, &pr, lo == hi, rc != TC_OK ? err.msg : pr.all_ok ? NULL : wrong);
    if (rc != TC_OK)
        fprintf(stderr, "taccl-run: %s\n", err.msg);
    else if (!pr.all_ok)
        fprintf(stderr, "taccl-run: %s\n", wrong);
    cJSON_Delete(pr.rows);
    cJSON_Delete(pr.planj);
    free(pr.bound_key);
    run_variant_set_free(&pr.vars);
    topo_free(pr.own);
    pick_set_free(pr.set);
    return rc != TC_OK ? TC_INPUT : pr.all_ok ? TC_OK : TC_WRONG;
}

/* ------------------------------------------------------------ one file */

/* Options that do not go together with what this run is; NULL if none. */
static const char *option_clash(const cli *c)
{
    if (c->run.tiles > 0 && (c->trace_to || c->routes_to))
        return c->trace_to ? "--trace: follows the file's own steps; it does not go with --tiles"
                           : "--routes: follows the file's own steps; it does not go with --tiles";
    if (c->sweep_lo > 0 && (c->trace_to || c->routes_to))
        return c->trace_to ? "--trace: one run at one size; it does not go with --sweep"
                           : "--routes: one run at one size; it does not go with --sweep";
    if (c->run.variants && c->sweep_lo <= 0)
        return "--variants: times the rows of a sweep; it goes with --sweep LO:HI (one size: "
               "--sweep S:S)";
    if (c->embed_to && c->sweep_lo > 0)
        return "--embed-to: writes the file for one size; it does not go with --sweep";
    if (c->embed_to && !c->run.data)
        return "--embed-to: writes only a schedule whose data verified; it does not go with "
               "--no-data";
    return NULL;
}

/* The run's outputs, after the run: the trace and routes of whatever ran,
 * the embedded copy only of a schedule that verified.  TC_OK, or the first
 * write that failed (err). */
static int write_outputs(const cli *c, prog *p, topo *t, int *owned, const trace *tr,
                         const run_report *r, tc_err *err)
{
    if (tr && c->trace_to && trace_write(tr, c->trace_to, err) != TC_OK)
        return TC_INPUT;
    if (tr && c->routes_to && trace_write_dot(tr, c->routes_to, err) != TC_OK)
        return TC_INPUT;
    if (c->embed_to && r->verified && embed(c, p, t, owned, r, err) != TC_OK)
        return TC_INPUT;
    return TC_OK;
}

/* taccl-run FILE.xml */
static int file_main(cli *c)
{
    tc_err err;
    tc_err_clear(&err);
    if (args_check_mode(&SPEC, c->seen, M_FILE, &err) != TC_OK || check_outputs(c, &err) != TC_OK)
        return cli_fail(c, NULL, NULL, "%s", err.msg);
    topo *t = NULL;
    int owned = 0, rc;
    prog *p = prog_read_xml(c->file, &err);
    if (!p)
        return cli_fail(c, NULL, NULL, "%s", err.msg);
    if (c->run.target == RT_ANY && p->target != RT_ANY) {
        /* The file says which runtime it was written for: judge it by that loader. */
        c->run.target = p->target;
    }
    if (runtime_reduces(c->run.target, c->run.dtype, RED_SUM, &err) != TC_OK) {
        tc_err_prefix(&err, "--dtype %s", runtime_dtype_name(c->run.dtype));
        rc = cli_fail(c, p, NULL, "%s", err.msg);
        prog_free(p);
        return rc;
    }
    t = pick_topology(c, p, &owned, &err);
    if (t && topo_warnings(t) > 0 && c->run.strict) {
        tc_err_set(&err, TC_INPUT, "%s (--strict)", topo_warning(t, 0));
        if (owned)
            topo_free(t);
        t = NULL;
    }
    if (!t) {
        rc = cli_fail(c, p, NULL, "%s", err.msg);
        goto done;
    }
    for (int i = 0; i < topo_warnings(t) && !c->quiet; i++)
        fprintf(stderr, "taccl-run: warning: %s\n", topo_warning(t, i));
    if (t->nranks != p->ngpus) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s:%d: <algo> attribute ngpus: topology %s has %d ranks but "
                 "the schedule has ngpus=%d", c->file, p->line, t->name, t->nranks, p->ngpus);
        rc = cli_fail(c, p, t, "%s", msg);
        goto done;
    }

    bound_model bound;
    /* No bound is no error (the run may still verify): the report says so
     * on stdout, so stderr keeps to the one line of a failure. */
    tc_err berr;
    tc_err_clear(&berr);
    if (bound_compute(t, p->coll, &bound, &berr) == TC_OK) {
        bound_add_passes(t, p->coll, &bound);
        c->run.bound = &bound;
    }

    const char *clash = option_clash(c);
    if (clash) {
        rc = cli_fail(c, p, t, "%s", clash);
        goto done;
    }
    if (c->sweep_lo > 0) {
        rc = run_sweep(stdout, p, t, &c->run, c->sweep_lo, c->sweep_hi, c->json, c->file, &err);
        if (rc == TC_INPUT) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: %s", c->file, err.msg);
            cli_fail(c, p, t, "%s", msg);
        } else if (rc == TC_WRONG) {
            fprintf(stderr, "taccl-run: %s: some sizes did not verify (see the table)\n", c->file);
        }
        goto done;
    }

    run_report r;
    trace *tr = c->trace_to || c->routes_to ? trace_new(p, t) : NULL;
    if (tr && c->run.tiles < 0)
        c->run.tiles = 0;   /* a trace and routes follow the file's own steps */
    if (tr)
        c->run.obs = trace_observer(tr);
    rc = run_schedule(p, t, &c->run, &r, &err);
    if (rc != TC_OK) {
        char msg[1200];
        size_error(c, p, err.msg, msg, sizeof msg);
        rc = cli_fail(c, p, t, "%s", msg);
    } else {
        rc = r.verified ? TC_OK : r.refused ? TC_INPUT : TC_WRONG;
        /* written before the report, so it can say a write failed beside
         * the verdict, which stays the run's own */
        tc_err werr;
        int wrc = write_outputs(c, p, t, &owned, tr, &r, &werr);
        if (c->json) {
            char *j = run_report_json(&r, p, t, &c->run, c->file, wrc ? werr.msg : NULL);
            printf("%s\n", j);
            free(j);
        } else if (!c->quiet) {
            run_report_print(stdout, &r, p, t, &c->run, c->file, 10);
            if (!c->run.bound)
                printf("bound     none: %s\n", berr.msg);
        }
        if (!r.verified)
            print_verdict(c, p, &r);
        if (wrc != TC_OK) {
            fprintf(stderr, "taccl-run: %s\n", werr.msg);
            rc = TC_INPUT;
        }
    }
    run_report_free(&r);
    trace_free(tr);
done:
    if (owned)
        topo_free(t);
    prog_free(p);
    return rc;
}

/* taccl-run PLAN.json: an MSCCL++ execution plan, told by its content
 * (exec/mpp.h); the XML-only flags are refused. */
static int plan_main(const cli *c)
{
    mpp_cli m = {.file = c->file, .topo_path = c->topo_path, .trace_to = c->trace_to,
                 .routes_to = c->routes_to, .sweep_lo = c->sweep_lo, .sweep_hi = c->sweep_hi,
                 .json = c->json, .quiet = c->quiet};
    mpp_opts_default(&m.run);
    m.run.size_bytes = c->run.size_bytes;
    m.run.dtype = c->run.dtype;
    m.run.data = c->run.data;
    m.run.seed = c->run.seed;
    m.run.mode = c->run.mode;
    m.run.strict = c->run.strict;
    tc_err err;
    if (args_check_mode(&SPEC, c->seen, M_PLAN, &err) != TC_OK || check_outputs(c, &err) != TC_OK)
        return cli_fail(c, NULL, NULL, "%s", err.msg);
    /* what MSCCL++'s executor runs (model/runtime.c's table, docs/mscclpp.md section 13) */
    if (runtime_reduces(RT_MSCCLPP, c->run.dtype, RED_SUM, &err) != TC_OK) {
        tc_err_prefix(&err, "--dtype %s", runtime_dtype_name(c->run.dtype));
        return cli_fail(c, NULL, NULL, "%s", err.msg);
    }
    return mpp_cli_main(&m);
}

/* --help: the text, or with --json the text in the one object. */
static void print_help(const cli *c)
{
    char *text = args_help(&SPEC);
    if (!c->json) {
        fputs(text, stdout);
    } else {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "help", text);
        cJSON_AddNullToObject(j, "error");
        char *out = cJSON_PrintUnformatted(j);
        printf("%s\n", out);
        free(out);
        cJSON_Delete(j);
    }
    free(text);
}

/* A usage error: the line and the usage on stderr, the object with --json. */
static int usage_error(const cli *c, const char *msg)
{
    cli_fail(c, NULL, NULL, "%s", msg);
    char *usage = args_usage(&SPEC);
    fputs(usage, stderr);
    free(usage);
    return TC_INPUT;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    run_opts_default(&c.run);
    c.json = args_has(argc, argv, "--json"); /* an error before it is JSON too */
    tc_err err;
    struct stat fst;
    int rc = args_parse(&SPEC, argc, argv, &c, &c.seen, &err);
    if (rc == ARGS_HELP) {
        print_help(&c);
        rc = TC_OK;
    } else if (rc != TC_OK) {
        rc = usage_error(&c, err.msg);
    } else if (!c.file) {
        rc = usage_error(&c, "no schedule file given");
    } else if (runtime_writable(c.run.target, &err) != TC_OK) {
        tc_err_prefix(&err, "--target %s", runtime_name(c.run.target));
        rc = cli_fail(&c, NULL, NULL, "%s", err.msg);
    } else if (stat(c.file, &fst) == 0 && S_ISDIR(fst.st_mode)) {
        rc = dir_main(&c);
    } else if (mpp_is_plan_file(c.file)) {
        rc = plan_main(&c);
    } else {
        rc = file_main(&c);
    }
    return rc;
}
