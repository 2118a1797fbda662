/* taccl-synth — write a collective schedule (MSCCL XML) for a topology.
 *
 * Three modes, each its own *_main that checks what it was given.
 * `taccl-synth SKETCH.json TOPO.json -o OUT.xml` (sketch_main) runs TACCL's
 * three stages (synth/synth.h: routing MILP, heuristic ordering,
 * contiguity MILP, all through GLPK) and lowers the result.  `--algo
 * ring|direct|butterfly|rsag|tree|hier|nccl|nvls|hier-nvls|pat` (algo_main) builds a baseline
 * straight from the topology with no solver.  Either way the file carries
 * the topology and size, so `taccl-run OUT.xml` needs nothing else.
 * `--plan` (plan_main) writes a directory of schedules with byte ranges.
 * The options are one table (OPTS, read by util/args.h): it parses argv,
 * prints the usage and --help, and says which option is for which mode.
 *
 * Exit 0: the schedule was written; 2: bad arguments or an algorithm the
 * topology or runtime cannot take (one line on stderr, nothing written: the
 * file is written atomically and only after everything succeeded); 130,
 * 143, 129: interrupted (SIGINT, SIGTERM, SIGHUP) before the file was
 * written — nothing written.
 *
 * SIGINT, SIGTERM, SIGHUP: the handler only sets lp.h's stop flag (the
 * project's one piece of process state; a handler can do nothing else
 * safely) and notes the signal; the solvers and the stages' long loops see
 * it and return TC_STOP.  The signals are held while a file is written
 * (util/file.h), so a stop never leaves a temporary file beside it: once
 * writing has begun the run completes. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "exec/check.h"
#include "exec/data.h"
#include "model/collective.h"
#include "model/cost.h"
#include "model/nccl_graph.h"
#include "model/runtime.h"
#include "model/topo.h"
#include "model/variant.h"
#include "sched/mpp.h"
#include "sched/ptime.h"
#include "sched/xml.h"
#include "model/sketch.h"
#include "plan/plan.h"
#include "synth/baseline.h"
#include "synth/reverse.h"
#include "synth/synth.h"
#include "util/args.h"
#include "util/size.h"

#define MAX_CHUNKS (1 << 20)        /* --chunks */
#define MAX_SECONDS 1e7             /* --time-limit, --time-budget: as a sketch's
                                       solver.time_limit_s, below 1e7 s */
#define MAX_SKETCHES 16             /* --sketch: cli.sketches */

typedef struct {
    const char *algo;
    coll_kind coll;         /* --collective, if has_coll */
    int has_coll;
    const char *out;
    const char *via;
    const char *pos[2];
    int npos;
    unsigned long long seen;    /* the table's rows given (args_parse) */
    int channels, chunks;
    long long size;         /* 0 = default */
    runtime target;         /* the MSCCL limits the build keeps (mscclpp: none) */
    int mscclpp;            /* --target mscclpp: write MSCCL++ plans */
    int quiet, json, list, verbose;
    double time_limit, gap;     /* sketch mode; 0 / -1 = not given */
    int solver_cbc;             /* sketch mode; -1 = not given (the sketch's) */
    int instances;
    int mem_limit_mb;           /* sketch mode; 0 = none */
    int hierarchical;           /* sketch mode: 1 --hierarchical, -1 --flat, 0 default */
    int rails;                  /* --rails: SYNTH_RAILS_* */
    int route;                  /* --route: SYNTH_ROUTE_* */
    long long min_bytes, max_bytes; /* --bytes; default 0 and INT64_MAX */
    const char *proto;          /* --proto: Simple, LL, LL128, auto; NULL = Simple */
    const char *graph;          /* --graph (--algo nccl): NCCL's graph dump */
    int strict;                 /* --strict: topology warnings are errors */
    int inplace;                /* --inplace (sketch mode): the in-place copy */
    int plan;                   /* --plan: a plan directory */
    const char *sketches[MAX_SKETCHES]; /* --sketch (plan mode) */
    int nsketches;
    long long sizes_lo, sizes_hi;   /* --sizes (plan mode); 0 = 1K:1G */
    double budget;              /* --time-budget (plan mode); 0 = default */
    int no_propose;             /* --no-propose (plan mode) */
    const char *profile;        /* --profile (plan mode) */
    int tiles;                  /* --tiles */
    int by_default;             /* --by-default */
} cli;

static int cli_fail(const cli *c, int hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One line on stderr (and the error as JSON with --json); `hint` adds a
 * pointer to --help for argument mistakes. */
static int cli_fail(const cli *c, int hint, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "taccl-synth: %s%s\n", msg, hint ? " (see taccl-synth --help)" : "");
    if (c && c->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNullToObject(j, "output");
        cJSON_AddStringToObject(j, "error", msg);
        char *s = cJSON_PrintUnformatted(j);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(j);
    }
    return TC_INPUT;
}

/* ------------------------------------------------------------ the options
 *
 * One table (util/args.h) drives parsing, the usage and --help, and which
 * option goes with which mode.  Integers are decimal digits alone (no
 * sign, blank or 0x: strtol's " +4" was taken as 4); real numbers follow
 * util/units.h's decimal rule.  A refusal names the whole domain, so a
 * value out of range is told the bound it broke. */

/* The modes: each *_main checks that what was given is for it. */
enum { M_SKETCH = 1, M_ALGO = 2, M_PLAN = 4, M_LIST = 8, M_NCCL = 16,
       M_WRITE = M_SKETCH | M_ALGO | M_PLAN };
/* M_NCCL: what --algo nccl takes besides every --algo option (algo_main
 * checks the other options as M_ALGO's and --graph as M_NCCL's). */

/* --target: a runtime's name (model/runtime.h's table). */
static int parse_target(const args_opt *o, const char *v, void *base, tc_err *err)
{
    tc_err e;
    if (runtime_parse(v, &((cli *)base)->target, &e) != TC_OK)
        return tc_err_set(err, TC_INPUT, "%s: %s", o->name, e.msg);
    return TC_OK;
}

/* --collective: one of the four (model/collective.h). */
static int parse_coll(const args_opt *o, const char *v, void *base, tc_err *err)
{
    cli *c = base;
    if (coll_parse(v, &c->coll))
        return tc_err_set(err, TC_INPUT, "%s: expected allgather, alltoall, reducescatter or "
                          "allreduce, got '%s'", o->name, v);
    c->has_coll = 1;
    return TC_OK;
}

/* --proto: a protocol of the cost model's, or auto (kept as the name). */
static int parse_proto(const args_opt *o, const char *v, void *base, tc_err *err)
{
    cost_proto pr;
    if (strcmp(v, "auto") != 0 && !cost_proto_parse(v, &pr))
        return tc_err_set(err, TC_INPUT, "%s: expected Simple, LL, LL128 or auto, got '%s'",
                          o->name, v);
    ((cli *)base)->proto = v;
    return TC_OK;
}

static const args_word_def SOLVERS[] = {{"glpk", 0}, {"cbc", 1}, {NULL, 0}};
static const args_word_def RAILS[] = {
    {"ring", SYNTH_RAILS_RING}, {"blocks", SYNTH_RAILS_BLOCKS}, {"best", SYNTH_RAILS_BEST},
    {NULL, 0}};
static const args_word_def ROUTES[] = {
    {"auto", SYNTH_ROUTE_AUTO}, {"milp", SYNTH_ROUTE_MILP}, {"latency", SYNTH_ROUTE_LATENCY},
    {"best", SYNTH_ROUTE_BEST}, {"trees", SYNTH_ROUTE_TREES}, {NULL, 0}};

/* What a refusal in another mode adds, for the options that share it. */
#define FROM_SKETCH "a sketch's schedule takes its chunks from the sketch (input_chunkup) and " \
                    "its channels from --instances; a plan chooses its own"
#define NO_SOLVER "a baseline uses no solver, and a plan tunes its own (--time-limit and " \
                  "--time-budget)"

static const args_opt OPTS[] = {
    {.name = "--algo", .value = "NAME", .field = offsetof(cli, algo), .modes = M_ALGO,
     .help = "baseline algorithm (see --list): ring, direct, butterfly,\n"
             "rsag, tree, hier, nccl (what NCCL runs for that call at\n"
             "--size: its tuning model picks ring or tree, the protocol and\n"
             "the channels; its rings leave each node through their own\n"
             "NIC), nvls / hier-nvls (through a switch that reduces and\n"
             "multicasts; --target mscclpp), allpairs (one node's\n"
             "ReduceScatter, puts into the owners' scratch summed in one\n"
             "reduce a piece; --target mscclpp), or pat (NCCL's PAT, one\n"
             "GPU per node, aggregated as NCCL does at --size)"},
    {.name = "--collective", .value = "C", .parse = parse_coll, .modes = M_WRITE,
     .help = "allgather, alltoall, reducescatter or allreduce"},
    {.name = "--output", .alias = "-o", .value = "OUT", .field = offsetof(cli, out),
     .modes = M_WRITE,
     .help = "output file (written atomically; untouched on any error;\n"
             "not an input file)"},
    {.name = "--channels", .value = "K", .parse = args_count, .field = offsetof(cli, channels),
     .hi = 32, .expect = "an integer 1..32", .modes = M_ALGO, .note = FROM_SKETCH,
     .help = "data channels (ring: default as many rings as the topology\n"
             "offers that share no link direction, switch port or NIC, at\n"
             "most 8; more are filled with other orders; tree: pairs of\n"
             "trees; others default 1)"},
    {.name = "--chunks", .value = "M", .parse = args_count, .field = offsetof(cli, chunks),
     .hi = MAX_CHUNKS, .expect = "an integer 1..1048576", .modes = M_ALGO, .note = FROM_SKETCH,
     .help = "chunks per rank per channel, 1..1048576: more pipelining,\n"
             "more alpha (default 1; tree 4)"},
    {.name = "--via", .value = "V", .field = offsetof(cli, via), .modes = M_ALGO,
     .usage = "--via direct|ring|butterfly", .note = FROM_SKETCH,
     .help = "rsag only: ReduceScatter and AllGather via direct (default),\n"
             "ring or butterfly (Rabenseifner)"},
    {.name = "--graph", .value = "GRAPH.xml", .field = offsetof(cli, graph), .modes = M_NCCL,
     .help = "--algo nccl: build from the rings and trees NCCL built on\n"
             "the machine, the file NCCL_GRAPH_DUMP_FILE=GRAPH.xml makes it\n"
             "write (one node's channels; checked against TOPO), instead\n"
             "of our reconstruction of them"},
    {.name = "--size", .value = "BYTES", .parse = args_size, .field = offsetof(cli, size),
     .modes = M_SKETCH | M_ALGO, .note = "a plan covers --sizes",
     .help = "size the file records (larger per-rank buffer; K/M/G are\n"
             "powers of 1024; default 1 MiB), rounded up to whole elements\n"
             "(and DMA segments) per chunk"},
    {.name = "--target", .value = "T", .parse = parse_target, .modes = M_WRITE,
     .help = "runtime limits to respect: msccl (256 steps per tb, default),\n"
             "msccl-executor (64, and its spelling of coll), unlimited (no\n"
             "step or depid limit: simulation only, the runtimes will not\n"
             "load the file)"},
    {.name = "--bytes", .value = "LO:HI", .parse = args_range, .field = offsetof(cli, min_bytes),
     .field2 = offsetof(cli, max_bytes), .set = ARGS_OPEN | ARGS_STRICT,
     .expect = "LO:HI with LO < HI (sizes such as 0, 64K, 1MB; HI may be inf)",
     .modes = M_SKETCH | M_ALGO, .note = "a plan gives each file its byte range",
     .help = "buffer sizes (nccl-tests size, K/M/G) the runtime may pick\n"
             "the schedule for: minBytes LO, maxBytes HI (HI excluded;\n"
             "'inf' = no limit).  Default 0:inf.  Written as each\n"
             "--target reads it (the legacy runtime never picks a\n"
             "schedule whose maxBytes is 0; the newer executor's\n"
             "maxBytes is inclusive and 0 means no limit)"},
    {.name = "--time-limit", .value = "S", .parse = args_real, .field = offsetof(cli, time_limit),
     .hi = MAX_SECONDS, .expect = "seconds > 0 and < 1e7", .modes = M_SKETCH | M_PLAN,
     .note = NO_SOLVER,
     .help = "sketch mode: seconds per MILP stage, > 0 and < 1e7 (default:\n"
             "the sketch's, else 60 for routing and 30 for contiguity); a\n"
             "limit returns the best schedule found, never nothing"},
    {.name = "--gap", .value = "G", .parse = args_real, .field = offsetof(cli, gap), .hi = 1,
     .set = 1, .expect = "a relative gap 0 <= G < 1 (as a sketch's solver.mip_gap)",
     .modes = M_SKETCH, .note = NO_SOLVER,
     .help = "sketch mode: relative MIP gap to stop both stages at,\n"
             "0 <= G < 1 (default: 0.001 for routing, 0 for contiguity)"},
    {.name = "--solver", .value = "S", .parse = args_word, .field = offsetof(cli, solver_cbc),
     .words = SOLVERS, .modes = M_SKETCH, .usage = "--solver glpk|cbc", .note = NO_SOLVER,
     .help = "sketch mode: glpk or cbc (default: the sketch's solver.backend,\n"
             "else glpk)"},
    {.name = "--instances", .value = "K", .parse = args_count, .field = offsetof(cli, instances),
     .hi = 32, .expect = "an integer 1..32", .modes = M_SKETCH,
     .note = "a baseline takes --channels and --chunks; a plan chooses its own",
     .help = "sketch mode: replicate the algorithm on K channel sets\n"
             "(1..32)"},
    {.name = "--mem-limit", .value = "MB", .parse = args_count,
     .field = offsetof(cli, mem_limit_mb), .hi = INT_MAX,
     .expect = "a whole number of MiB in 1..2147483647", .modes = M_SKETCH, .note = NO_SOLVER,
     .help = "sketch mode: each MILP solve may use at most MB MiB (GLPK:\n"
             "what GLPK allocates; CBC: its solver process's memory on\n"
             "top of this one's); exceeding it is exit 2, nothing\n"
             "written.  Default: no limit"},
    {.name = "--hierarchical", .parse = args_either, .field = offsetof(cli, hierarchical),
     .set = 1, .expect = "--hierarchical and --flat", .modes = M_SKETCH,
     .usage = "--hierarchical|--flat",
     .help = "sketch mode: route one node with the routing MILP and join\n"
             "the nodes by rails (each local rank's chunks cross nodes\n"
             "through its own NIC: rings for allgather and the\n"
             "reductions, direct hops for alltoall) instead of one MILP\n"
             "over the whole cluster.  Default: hierarchical from 64\n"
             "ranks on 2 nodes or more; --flat never"},
    {.name = "--flat", .parse = args_either, .field = offsetof(cli, hierarchical), .set = -1,
     .expect = "--hierarchical and --flat", .modes = M_SKETCH, .usage = ""},
    {.name = "--rails", .value = "R", .parse = args_word, .field = offsetof(cli, rails),
     .words = RAILS, .modes = M_SKETCH, .usage = "--rails ring|blocks|best",
     .help = "hierarchical allgather between nodes: ring (the rings\n"
             "above), blocks (each node gathers itself, then sends its\n"
             "whole block to every other node directly: one alpha per\n"
             "node instead of one per chunk), or best (default: both,\n"
             "the faster kept)"},
    {.name = "--route", .value = "R", .parse = args_word, .field = offsetof(cli, route),
     .words = ROUTES, .modes = M_SKETCH, .usage = "--route auto|milp|latency|best|trees",
     .help = "sketch mode, flat stage 1: milp (the routing MILP: each\n"
             "chunk pays its own alpha, so chunks spread over paths),\n"
             "latency (each chunk on its fewest-alpha tree, trees shared\n"
             "below a common relay, so stage 3 sends chunks together:\n"
             "small sizes), best (both, the faster kept), trees (the\n"
             "packed out-trees alone, no MILP: seconds where the MILP\n"
             "takes its time limit), or auto (default: best when a\n"
             "chunk costs less than its alpha on every link, switch and\n"
             "NIC, else milp; both beside the packed trees)"},
    {.name = "--proto", .value = "P", .parse = parse_proto, .modes = M_WRITE,
     .help = "the protocol the runtime moves data with: Simple (default),\n"
             "LL, LL128, or auto: whichever the cost model times fastest\n"
             "at --size (LL: half the bandwidth at a fraction of the\n"
             "latency; docs/design.md section 4)\n"
             "(with --plan, --proto P keeps only protocol P's candidates;\n"
             "with --algo nccl, NCCL's tuning model may pick P only, as\n"
             "NCCL_PROTO=P does)"},
    {.name = "--plan", .field = offsetof(cli, plan), .set = 1, .modes = M_PLAN,
     .help = "write a plan into -o DIR: the files a runtime loads so that\n"
             "every call of --collective over --sizes (default 1K:1G),\n"
             "in place and out of place, runs the fastest schedule we\n"
             "have (every baseline under each protocol, each --sketch\n"
             "synthesized at 1K, 64K, 1M, 16M and 1G where they fall in\n"
             "the range), or falls back to NCCL where NCCL's own\n"
             "schedule is fastest; DIR/plan.json lists each file, its\n"
             "byte range, where it came from and its predicted time;\n"
             "DIR/nccl/ holds NCCL's schedule at each size.  Run it\n"
             "with taccl-run DIR --sweep LO:HI"},
    {.name = "--sketch", .value = "S.json", .parse = args_append,
     .field = offsetof(cli, sketches), .field2 = offsetof(cli, nsketches), .hi = MAX_SKETCHES,
     .expect = "sketches", .modes = M_PLAN, .usage = "--sketch S.json ...",
     .help = "plan mode: a sketch to synthesize from (repeatable, each\n"
             "file once: a repeated one is refused); after them,\n"
             "sketches proposed from the topology (the patterns of\n"
             "TACCL's: switch uc-max for small sizes, uc-min for large,\n"
             "each GPU through its own NIC or TACCL's relays, chunkup\n"
             "1/2/4/8, the node symmetry), written to DIR/sketches/"},
    {.name = "--profile", .value = "FILE", .field = offsetof(cli, profile), .modes = M_PLAN,
     .help = "plan mode: the calls a job makes (\"BYTES COUNT\" lines,\n"
             "nccl-tests output: a call per row, or a PyTorch\n"
             "profiler trace); a runtime that loads few files keeps\n"
             "those saving the most time over them (default: each\n"
             "power of two of --sizes once)"},
    {.name = "--no-propose", .field = offsetof(cli, no_propose), .set = 1, .modes = M_PLAN,
     .help = "plan mode: no proposed sketches (baselines and --sketch only)"},
    {.name = "--tiles", .field = offsetof(cli, tiles), .set = 1, .modes = M_SKETCH | M_PLAN,
     .usage = "--tiles|--steps",
     .help = "judge the candidates in the runtimes' tile passes,\n"
             "taccl-run's default timing (the default on a GPU topology\n"
             "for an MSCCL file, in sketch and plan mode; a plan times\n"
             "every candidate and NCCL's schedule so); --steps: in one\n"
             "pass, as stages 2 and 3 plan (never judged otherwise: no\n"
             "MSCCL runtime runs a program so)"},
    {.name = "--steps", .field = offsetof(cli, tiles), .set = 0, .modes = M_SKETCH | M_PLAN,
     .usage = ""},
    {.name = "--by-default", .field = offsetof(cli, by_default), .set = 1, .modes = M_PLAN,
     .help = "plan mode: pick at each size the candidate fastest by the\n"
             "default model alone, timed in the runtimes' tile passes\n"
             "unless --steps (default: the one whose worst x NCCL\n"
             "over the model variants is best, NCCL unless a candidate\n"
             "wins by default and loses in none; docs/design.md\n"
             "section 8)"},
    {.name = "--sizes", .value = "LO:HI", .parse = args_range, .field = offsetof(cli, sizes_lo),
     .field2 = offsetof(cli, sizes_hi),
     .expect = "LO:HI sizes with 0 < LO <= HI, e.g. 1K:1G (LO:LO for one size)", .modes = M_PLAN,
     .help = "plan mode: the sizes to cover (powers of two from LO to HI;\n"
             "LO:LO for one size)"},
    {.name = "--time-budget", .value = "S", .parse = args_real, .field = offsetof(cli, budget),
     .hi = MAX_SECONDS, .expect = "seconds > 0 and < 1e7", .modes = M_PLAN,
     .help = "plan mode: stop synthesizing anchors after S seconds\n"
             "(> 0 and < 1e7; default 600)"},
    {.name = "--inplace", .field = offsetof(cli, inplace), .set = 1, .modes = M_SKETCH,
     .note = "a baseline says itself whether it runs in place (inplace=\"1\"); a plan "
             "writes both modes already",
     .help = "sketch mode: write the schedule for in-place calls\n"
             "(inplace=\"1\" outofplace=\"0\"), as msccl-tools writes one:\n"
             "references to the buffer the runtime aliases into the other\n"
             "rewritten onto it, a rank's copy of its own chunk dropped\n"
             "(a nop).  Not for alltoall (in place it would overwrite data\n"
             "still to be sent).  taccl-run checks it in place"},
    {.name = "--strict", .field = offsetof(cli, strict), .set = 1, .modes = M_WRITE,
     .help = "a topology whose figures lack a \"source\" is an error\n"
             "(exit 2), not a warning"},
    {.name = "--verbose", .alias = "-v", .field = offsetof(cli, verbose), .set = 1,
     .modes = M_SKETCH, .note = NO_SOLVER,
     .help = "sketch mode: the solver's own log on stderr too"},
    {.name = "--json", .field = offsetof(cli, json), .set = 1, .modes = M_WRITE,
     .help = "one JSON object on stdout describing what was written"},
    {.name = "--quiet", .alias = "-q", .field = offsetof(cli, quiet), .set = 1, .modes = M_WRITE,
     .help = "no progress lines on stderr"},
    {.name = "--list", .field = offsetof(cli, list), .set = 1, .modes = M_LIST, .usage = ""},
    {.name = NULL}};

static const args_mode MODES[] = {
    {M_ALGO, "--algo baselines", "--algo NAME TOPO.json --collective C -o OUT.xml"},
    {M_NCCL, "--algo nccl", "--algo nccl TOPO.json --graph GRAPH.xml --collective C -o OUT.xml"},
    {M_SKETCH, "sketch mode", "SKETCH.json TOPO.json -o OUT.xml"},
    {M_PLAN, "--plan", "--plan TOPO.json --collective C -o DIR"},
    {M_LIST, "--list", "--list"},
    {0, NULL, NULL}};

static const args_spec SPEC = {
    .tool = "taccl-synth",
    .opts = OPTS,
    .modes = MODES,
    .pos = offsetof(cli, pos),
    .npos = offsetof(cli, npos),
    .max_pos = 2,
    .too_many = "too many files: '%s'",
    .about =
    "Write an MSCCL XML schedule of a collective for a topology.  The file carries\n"
    "the topology and size, so `taccl-run OUT.xml` runs it with no other argument.\n"
    "\n",
    .after =
    "\n"
    "Exit: 0 written, 2 unusable arguments or an algorithm the topology or the\n"
    "runtime cannot take (the message says what to do instead), 130 interrupted\n"
    "(SIGINT) before the file was written.  Nothing is written unless exit is 0.\n"};

/* minBytes/maxBytes as each runtime reads them: the legacy one picks a
 * schedule for minBytes <= n < maxBytes; the newer executor for minBytes
 * <= n <= maxBytes, with maxBytes 0 meaning no limit.  The legacy runtime
 * also allocates maxBytes * s_chunks / nchunksperloop bytes of scratch when
 * the communicator starts, so an open range (no --bytes HI) on a schedule
 * with scratch is closed at the largest power of two whose scratch fits
 * CHECK_LEGACY_SCRATCH_BUDGET; larger calls fall back to NCCL.  Says so in `note`
 * ("" when nothing was closed). */
static void set_bytes_range(const cli *c, prog *p, char *note, size_t n)
{
    note[0] = '\0';
    const runtime_info *ri = runtime_get(c->target);
    p->target = ri->in_file ? c->target : RT_ANY;
    p->min_bytes = c->min_bytes;
    p->max_bytes = c->max_bytes;
    if (ri->max_bytes_inclusive) {
        p->max_bytes = c->max_bytes == INT64_MAX ? 0 : c->max_bytes - 1;
        return;
    }
    int s_max = 0;
    for (int r = 0; r < p->ngpu; r++)
        if (p->gpus[r].s_chunks > s_max)
            s_max = p->gpus[r].s_chunks;
    if (!ri->scratch_at_init || c->max_bytes != INT64_MAX || s_max == 0)
        return;
    long long cap = 1;
    while ((double)cap * 2 * s_max / p->nchunksperloop <= (double)CHECK_LEGACY_SCRATCH_BUDGET &&
           cap < (1LL << 62))
        cap *= 2;
    p->max_bytes = cap;
    char a[32], b[32];
    snprintf(note, n, "maxBytes %s for the legacy runtime: it allocates maxBytes * s_chunks / "
             "nchunksperloop = %s of scratch per GPU when the communicator starts; calls of "
             "%s or more fall back to NCCL (--bytes LO:HI to choose)",
             size_format(cap, a, sizeof a),
             size_format((long long)((double)cap * s_max / p->nchunksperloop), b, sizeof b),
             size_format(cap, a, sizeof a));
}

/* The flags `taccl-run OUT` needs for what was written: the runtime's
 * limits it was made for, and --no-data where its buffers are more than
 * the executor will allocate to check the data (exec/data.h). */
static const char *run_flags(const cli *c, const prog *p, char *buf, size_t n)
{
    long long chunk = p->nchunksperloop > 0 ? p->size_bytes / p->nchunksperloop : 0;
    int big = chunk > 0 && data_bytes_needed(p, 0, chunk) > (double)DATA_MAX_BYTES;
    int say = c->target != RT_MSCCL && !mpp_wanted(c->out, c->mscclpp);
    snprintf(buf, n, "%s%s%s", say ? " --target " : "", say ? runtime_name(c->target) : "",
             big ? " --no-data (its buffers are too large to check the data)" : "");
    return buf;
}

static void print_list(void)
{
    int n;
    const baseline_algo *a = baseline_algos(&n);
    for (int i = 0; i < n; i++) {
        printf("%-10s", a[i].name);
        const char *sep = "";
        char colls[128] = "";
        for (int k = 0; k < COLL_COUNT; k++)
            if (a[i].colls & (1u << k)) {
                strcat(colls, sep);
                strcat(colls, coll_name((coll_kind)k));
                sep = ",";
            }
        printf(" %-42s %s\n", colls, a[i].summary);
    }
}

static void print_json(const cli *c, const prog *p, const baseline_stats *st, const char *algo)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "output", c->out);
    cJSON_AddStringToObject(j, "algo", algo);
    if (c->via)
        cJSON_AddStringToObject(j, "via", c->via);
    cJSON_AddStringToObject(j, "collective", coll_name(p->coll));
    cJSON_AddNumberToObject(j, "ngpus", p->ngpus);
    cJSON_AddNumberToObject(j, "nchunksperloop", p->nchunksperloop);
    cJSON_AddNumberToObject(j, "channels", st->channels);
    cJSON_AddNumberToObject(j, "nchannels", p->nchannels);
    cJSON_AddStringToObject(j, "proto", p->proto);
    cJSON_AddNumberToObject(j, "chunks", st->chunks);
    cJSON_AddNumberToObject(j, "tbs", (double)st->tbs);
    cJSON_AddNumberToObject(j, "steps", (double)st->steps);
    cJSON_AddNumberToObject(j, "max_steps_per_tb", st->max_steps_per_tb);
    if (st->rings_found)
        cJSON_AddNumberToObject(j, "rings_found", st->rings_found);
    else
        cJSON_AddNullToObject(j, "rings_found");
    if (st->nccl.algo[0]) {
        cJSON *nc = cJSON_AddObjectToObject(j, "nccl");
        cJSON_AddStringToObject(nc, "algo", st->nccl.algo);
        cJSON_AddStringToObject(nc, "proto", st->nccl.proto);
        cJSON_AddNumberToObject(nc, "channels", st->nccl.channels);
        cJSON_AddNumberToObject(nc, "channels_max", st->nccl.channels_max);
        if (c->graph)
            cJSON_AddStringToObject(nc, "graph", c->graph);
        else
            cJSON_AddNullToObject(nc, "graph");
        cJSON_AddNumberToObject(nc, "rings", st->nccl.rings);
        cJSON_AddNumberToObject(nc, "piece_bytes", (double)st->nccl.piece_bytes);
        if (st->nccl.estimate_us >= 0)
            cJSON_AddNumberToObject(nc, "estimate_us", st->nccl.estimate_us);
        else
            cJSON_AddNullToObject(nc, "estimate_us");
        if (st->nccl.would_run[0]) {    /* NCCL's pick, which the file does not hold */
            cJSON *w = cJSON_AddObjectToObject(nc, "would_run");
            cJSON_AddStringToObject(w, "algo", st->nccl.would_run);
            cJSON_AddNumberToObject(w, "estimate_us", st->nccl.would_run_us);
        } else {
            cJSON_AddNullToObject(nc, "would_run");
        }
        if (st->nccl.bw_intra > 0) {    /* the communicator its model saw */
            cJSON_AddNumberToObject(nc, "bw_intra_gbps", st->nccl.bw_intra);
            cJSON_AddNumberToObject(nc, "bw_inter_gbps", st->nccl.bw_inter);
        }
    }
    if (st->note[0])
        cJSON_AddStringToObject(j, "note", st->note);
    else
        cJSON_AddNullToObject(j, "note");
    cJSON_AddNumberToObject(j, "size_bytes", (double)p->size_bytes);
    cJSON_AddStringToObject(j, "target", runtime_name(c->target));
    cJSON_AddBoolToObject(j, "inplace", p->inplace);
    cJSON_AddBoolToObject(j, "outofplace", p->outofplace);
    cJSON_AddStringToObject(j, "topology", p->topo ? p->topo->name : "");
    cJSON_AddNullToObject(j, "error");
    char *s = cJSON_PrintUnformatted(j);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(j);
}

static void print_info(const cli *c, const prog *p, const topo *t, const baseline_stats *st,
                       long long want)
{
    char sz[64];
    fprintf(stderr, "taccl-synth: %s%s%s %s on %s (%d ranks): %d channel%s", c->algo,
            c->via ? " via " : "", c->via ? c->via : "", coll_name(p->coll), t->name, p->ngpus,
            st->channels, st->channels == 1 ? "" : "s");
    if (st->rings_found && c->graph)
        fprintf(stderr, " (%d ring channel%s of %s)", st->rings_found,
                st->rings_found == 1 ? "" : "s", c->graph);
    else if (st->rings_found)
        fprintf(stderr, " (%d ring%s found sharing no link, switch port or NIC)",
                st->rings_found, st->rings_found == 1 ? "" : "s");
    fprintf(stderr, " x %d chunk%s, nchunksperloop %d\n", st->chunks, st->chunks == 1 ? "" : "s",
            p->nchunksperloop);
    if (st->note[0])
        fprintf(stderr, "taccl-synth: %s\n", st->note);
    const runtime_info *ri = runtime_get(c->target);
    char limit[64] = "no limit";
    if (ri->max_steps_per_tb)
        snprintf(limit, sizeof limit, "%s limit %d", ri->name, ri->max_steps_per_tb);
    fprintf(stderr, "taccl-synth: %lld tbs, %lld steps; at most %d tbs per rank and %d steps per "
            "tb (%s); %s\n", st->tbs, st->steps, st->max_tbs_per_rank, st->max_steps_per_tb,
            limit, p->inplace ? "in place and out of place"
            : ri->inplace_only ? "out of place (the legacy runtime runs a file for "
                                 "the calls of one mode)"
                               : "out of place only");
    if (c->mscclpp)
        fprintf(stderr, "taccl-synth: --target mscclpp: an MSCCL++ execution plan; MSCCL's "
                "step and depid limits do not bind it, MSCCL++'s were checked when it was "
                "written\n");
    else if (!ri->has_loader)
        fprintf(stderr, "taccl-synth: --target unlimited: steps-per-tb and depid limits lifted; "
                "the file will not load in the MSCCL runtimes (simulate it with taccl-run "
                "--target unlimited)\n");
    if (c->size && want != p->size_bytes)
        fprintf(stderr, "taccl-synth: --size %lld rounded up to %lld bytes (whole elements%s per "
                "chunk)\n", want, p->size_bytes, t->dma_bytes ? " and DMA segments" : "");
    char how[128];
    fprintf(stderr, "taccl-synth: wrote %s (%s per rank); run it with: taccl-run %s%s\n", c->out,
            size_format(p->size_bytes, sz, sizeof sz), c->out, run_flags(c, p, how, sizeof how));
}

static void add_number_or_null(cJSON *j, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(j, key, v);
    else
        cJSON_AddNullToObject(j, key);
}

static const char *contig_status(const synth_stats *st)
{
    if (st->contig_failed)
        return "failed, kept the incumbent";
    return st->contig_status == LP_UNSOLVED ? "no MILP" : lp_status_name(st->contig_status);
}

/* Did a MILP stage stop at its time limit, with a solution not proven optimal? */
static int time_limited(const synth_stats *st)
{
    return st->route_status == LP_FEASIBLE || st->route_status == LP_TIME_LIMIT ||
           st->contig_status == LP_FEASIBLE || st->contig_status == LP_TIME_LIMIT;
}

/* "; stopped by the time limit: routing gap 3.1%, contiguity gap unknown" */
static void limit_note(const synth_stats *st, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!time_limited(st))
        return;
    char a[32] = "gap unknown", b[32] = "gap unknown";
    if (isfinite(st->route_gap))
        snprintf(a, sizeof a, "gap %.3g%%", 100 * st->route_gap);
    if (isfinite(st->contig_gap))
        snprintf(b, sizeof b, "gap %.3g%%", 100 * st->contig_gap);
    if (st->contig_status == LP_UNSOLVED)
        b[0] = '\0';
    snprintf(buf, n, "; stopped by the time limit, not proven optimal: routing %s, %s; "
             "contiguity %s%s%s", st->route_fallback ? "heuristic"
             : lp_status_name(st->route_status), a, contig_status(st), b[0] ? ", " : "", b);
}

static void print_synth_json(const cli *c, const prog *p, const synth_stats *st)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "output", c->out);
    cJSON_AddStringToObject(j, "sketch", c->pos[0]);
    cJSON_AddStringToObject(j, "collective", coll_name(p->coll));
    cJSON_AddNumberToObject(j, "ngpus", p->ngpus);
    cJSON_AddNumberToObject(j, "nchunksperloop", p->nchunksperloop);
    cJSON_AddNumberToObject(j, "nchannels", p->nchannels);
    cJSON_AddNumberToObject(j, "size_bytes", (double)p->size_bytes);
    cJSON_AddNumberToObject(j, "chunk_bytes", (double)st->chunk_bytes);
    cJSON_AddNumberToObject(j, "predicted_us", p->predicted_us);
    cJSON_AddStringToObject(j, "proto", p->proto);
    cJSON_AddNumberToObject(j, "route_seconds", st->route_s);
    cJSON_AddNumberToObject(j, "order_seconds", st->order_s);
    cJSON_AddNumberToObject(j, "contig_seconds", st->contig_s);
    cJSON_AddNumberToObject(j, "lower_seconds", st->lower_s);
    cJSON_AddNumberToObject(j, "baseline_seconds", st->baseline_s);
    cJSON_AddNumberToObject(j, "synthesis_seconds", st->route_s + st->order_s + st->contig_s +
                                                    st->lower_s + st->baseline_s);
    cJSON_AddNumberToObject(j, "stage2_us", st->order_us);
    cJSON_AddNumberToObject(j, "stage3_us", st->contig_us);
    add_number_or_null(j, "route_gap", st->route_gap);
    cJSON_AddStringToObject(j, "route_status", lp_status_name(st->route_status));
    cJSON_AddBoolToObject(j, "route_fallback", st->route_fallback);
    add_number_or_null(j, "contig_gap", st->contig_gap);
    cJSON_AddStringToObject(j, "contig_status", contig_status(st));
    cJSON_AddBoolToObject(j, "time_limited", time_limited(st));
    cJSON_AddNumberToObject(j, "groups", st->groups);
    cJSON_AddNumberToObject(j, "contig_solves", st->contig_solves);
    cJSON_AddBoolToObject(j, "hierarchical", st->hierarchical);
    cJSON_AddBoolToObject(j, "hierarchical_blocks", st->hier_blocks);
    cJSON_AddBoolToObject(j, "latency_first", st->latency_first);
    if (st->latency_us > 0)
        cJSON_AddNumberToObject(j, "latency_first_us", st->latency_us);
    else
        cJSON_AddNullToObject(j, "latency_first_us");
    if (st->milp_us > 0)
        cJSON_AddNumberToObject(j, "milp_routing_us", st->milp_us);
    else
        cJSON_AddNullToObject(j, "milp_routing_us");
    if (coll_is_reduction(p->coll))
        cJSON_AddNumberToObject(j, "reducescatter_us", st->rs_us);
    else
        cJSON_AddNullToObject(j, "reducescatter_us");
    if (st->join >= 0) {
        cJSON_AddStringToObject(j, "join", reverse_join_name((reverse_join)st->join));
        cJSON_AddNumberToObject(j, "barrier_us", st->barrier_us);
        cJSON_AddNumberToObject(j, "pipeline_us", st->pipeline_us);
    } else {
        cJSON_AddNullToObject(j, "join");
        cJSON_AddNullToObject(j, "barrier_us");
        cJSON_AddNullToObject(j, "pipeline_us");
    }
    synth_cands_json(st, j);
    cJSON_AddStringToObject(j, "topology", p->topo ? p->topo->name : "");
    cJSON_AddNullToObject(j, "error");
    char *s = cJSON_PrintUnformatted(j);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(j);
}

/* The signal that asked the run to stop (0: none).  Only the handler
 * writes it; it names the signal in the message and the exit code. */
static volatile sig_atomic_t stop_signal;

/* SIGINT, SIGTERM, SIGHUP: ask everything running to stop (lp.h) and note
 * which signal it was; nothing else is safe here.  The CBC child is killed
 * by the solver's wait loop (and dies with the process in any case:
 * lp_cbc.c). */
static void on_stop(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
    lp_request_stop();
}

static void catch_sigint(void)
{
    static const int SIGS[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof SIGS / sizeof SIGS[0]; i++)
        sigaction(SIGS[i], &sa, NULL);
}

/* Exit 128 + the signal for a stop request (130 for SIGINT, 143 for
 * SIGTERM, 129 for SIGHUP, as shells report a process the signal ended):
 * one line (and the JSON error), nothing written. */
static int interrupted(const cli *c)
{
    int sig = stop_signal ? stop_signal : SIGINT;
    cli_fail(c, 0, "interrupted (%s): nothing written", sig == SIGTERM ? "SIGTERM"
             : sig == SIGHUP ? "SIGHUP" : "SIGINT");
    return 128 + sig;
}

/* prog_write_xml, or an MSCCL++ plan when mpp_wanted() says so (an output
 * named *.json); the signals are held while its temporary file exists
 * (util/file.h), so no temporary file is left. */
static int write_uninterrupted(const cli *c, const prog *p, const char *path,
                               const xml_write_opts *wo, tc_err *err)
{
    if (mpp_wanted(path, c->mscclpp)) {
        mpp_opts mo;
        mpp_opts_of(p, &mo);
        return mpp_write(p, path, &mo, err);
    }
    return prog_write_xml(p, path, wo, err);
}

/* The topology at path, its warnings (figures without a source) printed
 * unless -q; with --strict the first of them is the error. */
static topo *load_topology(const cli *c, const char *path, tc_err *err)
{
    topo *t = topo_load(path, err);
    if (t && c->strict && topo_warnings(t) > 0) {
        tc_err_set(err, TC_INPUT, "%s (--strict)", topo_warning(t, 0));
        topo_free(t);
        return NULL;
    }
    for (int i = 0; t && i < topo_warnings(t) && !c->quiet; i++)
        fprintf(stderr, "taccl-synth: warning: %s\n", topo_warning(t, i));
    return t;
}

/* Set p's protocol from --proto: the one named, or with "auto" the one the
 * cost model (sched/ptime) times fastest at the recorded size, ties to the
 * simpler (Simple, then LL, then LL128).  A recorded prediction is re-timed
 * under the protocol kept; with "auto" a note on stderr names each time. */
static int set_proto(const cli *c, prog *p, const topo *t, tc_err *err)
{
    if (!c->proto)
        return TC_OK;
    double best = INFINITY;
    cost_proto keep = COST_SIMPLE;
    char note[256] = "";
    size_t used = 0;
    for (int k = 0; k < COST_NPROTO; k++) {
        cost_proto pr = (cost_proto)k;
        if (strcmp(c->proto, "auto") != 0 && strcmp(c->proto, cost_proto_name(pr)) != 0)
            continue;
        snprintf(p->proto, sizeof p->proto, "%s", cost_proto_name(pr));
        double us;
        int rc = ptime_run_as(p, t, p->size_bytes, -1, &us, err);
        if (rc != TC_OK)
            return rc;
        used += (size_t)snprintf(note + used, used < sizeof note ? sizeof note - used : 0,
                                 "%s%s %.3f us", used ? ", " : "", cost_proto_name(pr), us);
        if (us < best) {
            best = us;
            keep = pr;
        }
    }
    snprintf(p->proto, sizeof p->proto, "%s", cost_proto_name(keep));
    if (p->predicted_us >= 0)
        p->predicted_us = best;
    if (!c->quiet && !strcmp(c->proto, "auto"))
        fprintf(stderr, "taccl-synth: protocol %s at %lld bytes (%s)\n", p->proto, p->size_bytes,
                note);
    return TC_OK;
}

/* Whether paths a and b name one existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The first --sketch that repeats an earlier one (the same path, or the
 * same file by another name: a plan would synthesize it twice), with the
 * earlier one's index in *first; -1 if none does. */
static int repeated_sketch(const cli *c, int *first)
{
    for (int i = 1; i < c->nsketches; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(c->sketches[i], c->sketches[j]) ||
                same_file(c->sketches[i], c->sketches[j])) {
                *first = j;
                return i;
            }
    return -1;
}

#define COLL_REQUIRED "--collective is required (allgather, alltoall, reducescatter or allreduce)"

/* What sketch and --algo mode check first: that every option given is
 * theirs, a --bytes range the target can say, and an output that is no
 * input. */
static int check_writing(const cli *c, unsigned mode)
{
    tc_err err;
    if (args_check_mode(&SPEC, c->seen, mode, &err) != TC_OK)
        return cli_fail(c, 1, "%s", err.msg);
    if (runtime_get(c->target)->max_bytes_inclusive && c->max_bytes == 1)
        return cli_fail(c, 0, "--bytes %s:1: the range holds no call of 1 byte or more, and "
                        "%s reads the maxBytes it would need (0) as no limit",
                        c->min_bytes ? "LO" : "0", runtime_name(c->target));
    for (int i = 0; i < c->npos && c->out; i++)
        if (same_file(c->out, c->pos[i]))
            return cli_fail(c, 0, "-o %s is the input %s: writing the schedule would replace it",
                            c->out, c->pos[i]);
    return TC_OK;
}

/* Sketch mode: SKETCH.json TOPO.json through the three stages. */
static int sketch_main(const cli *c)
{
    int rc = check_writing(c, M_SKETCH);
    if (rc != TC_OK)
        return rc;
    if (c->npos != 2)
        return cli_fail(c, 1, "give a sketch and a topology file, or --algo NAME and a topology "
                        "file");
    if (!c->out)
        return cli_fail(c, 1, "-o OUT.xml is required");
    tc_err err;
    tc_err_clear(&err);
    int hint = 0;
    topo *t = NULL;
    prog *p = NULL;
    synth_stats st;
    synth_opts o;
    synth_opts_init(&o);
    sketch *s = sketch_load(c->pos[0], &err);
    if (s)
        t = load_topology(c, c->pos[1], &err);
    rc = s && t ? TC_OK : TC_INPUT;
    if (rc == TC_OK) {
        o.coll = c->coll;
        o.has_coll = c->has_coll;
        o.size_bytes = c->size;
        o.route_time_s = o.contig_time_s = c->time_limit;
        o.mip_gap = c->gap;
        int cbc = c->solver_cbc >= 0 ? c->solver_cbc : s->backend == SK_SOLVER_CBC;
        o.backend = cbc ? LP_CBC : LP_GLPK;
        o.instances = c->instances ? c->instances : 1;
        o.runtime = c->target;
        o.quiet = c->quiet;
        o.verbose = c->verbose;
        o.mem_limit_mb = c->mem_limit_mb;
        o.hierarchical = c->hierarchical;
        /* the runtimes' tile passes, taccl-run's default timing (model/variant.h),
         * unless --steps: on a GPU topology, for an MSCCL file (taccl-run times an
         * MSCCL++ plan, and a chip/cluster device, in one pass) */
        o.tiles = c->tiles >= 0 ? c->tiles
                                : variant_tiles(VAR_DEFAULT) && variant_applies(t, VAR_PASSES) &&
                                      !mpp_wanted(c->out, c->mscclpp);
        o.rails = c->rails;
        o.route = c->route;
        coll_kind kind = o.has_coll ? o.coll : s->has_coll ? s->coll : COLL_ALLGATHER;
        hint = c->inplace && kind == COLL_ALLTOALL;
        if (hint)
            rc = tc_err_set(&err, TC_INPUT, "--inplace: an alltoall cannot run in place without "
                            "scratch for what it overwrites; synthesize it out of place (the "
                            "runtime then falls back to NCCL for in-place calls)");
    }
    if (rc == TC_OK)
        rc = sketch_check(s, t, &err);
    if (rc == TC_OK)
        rc = synth_run(s, t, &o, &p, &st, &err);
    if (rc == TC_OK && lp_stop_requested())
        rc = tc_err_set(&err, TC_STOP, "interrupted");
    char range_note[400] = "";
    if (rc == TC_OK)
        rc = set_proto(c, p, t, &err);
    if (rc == TC_OK && c->inplace) {
        prog *q = prog_inplace_copy(p);
        prog_set_topo(q, p->topo);
        p->topo = NULL;
        prog_free(p);
        p = q;
    }
    if (rc == TC_OK) {
        set_bytes_range(c, p, range_note, sizeof range_note);
        xml_write_opts wo = {.runtime = o.runtime, .embed_topology = 1};
        rc = write_uninterrupted(c, p, c->out, &wo, &err);
    }
    if (rc == TC_STOP) {
        rc = interrupted(c);
    } else if (rc != TC_OK) {
        rc = cli_fail(c, hint, "%s", err.msg);
    } else {
        char note[256], how[128];
        limit_note(&st, note, sizeof note);
        if (!c->quiet && range_note[0])
            fprintf(stderr, "taccl-synth: %s\n", range_note);
        if (!c->quiet)
            fprintf(stderr, "taccl-synth: wrote %s: %s on %s, predicted %.3f us "
                    "(synthesis %.2f s%s); run it with: taccl-run %s%s\n", c->out,
                    coll_name(p->coll), t->name, p->predicted_us,
                    st.route_s + st.order_s + st.contig_s + st.lower_s + st.baseline_s, note,
                    c->out,
                    run_flags(c, p, how, sizeof how));
        if (c->json)
            print_synth_json(c, p, &st);
    }
    prog_free(p);
    sketch_free(s);
    topo_free(t);
    return rc;
}

/* --algo nvls or hier-nvls without --channels: the threadblocks per rank
 * (and for hier-nvls without --chunks the pieces each pipelines, 1, 2 or
 * 4) whose plan the executor runs fastest at `want` (plan_judge_mpp),
 * among those whose chunks divide it (16 bytes x ranks x blocks x
 * pieces); into u.  Ties go to more blocks and fewer pieces: the
 * executor's model has no per-block throughput limit, and a real block's is
 * bounded (NCCL runs 16 on Hopper).  Nothing is set when the build itself
 * fails (the caller's build says why). */
static void pick_nvls_tbs(const cli *c, const char *algo, const topo *t, baseline_opts *o,
                          long long want)
{
    static const int TBS[] = {16, 8, 4, 2, 1}, PIECES[] = {1, 2, 4};
    int hier = !strcmp(algo, "hier-nvls");
    int best = 0, best_p = 1;
    double best_us = INFINITY;
    char note[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof TBS / sizeof TBS[0]; i++)
        for (size_t j = 0; j < (hier && !o->chunks ? 3 : 1); j++) {
            int P = o->chunks ? o->chunks : PIECES[j];
            long long unit = (long long)MPP_BUFFER_ALIGNMENT * t->nranks * TBS[i] * P;
            if (want % unit != 0)
                continue;
            baseline_opts u = *o;
            u.channels = TBS[i];
            u.chunks = hier ? P : 0;
            tc_err e;
            prog *p = baseline_build(algo, t, c->coll, &u, &e);
            if (!p)
                continue;   /* too many ops for these pieces */
            double us;
            int ok;
            if (plan_judge_mpp(p, t, want, 0, 0, &us, &ok, &e) == TC_OK) {
                char what[16];
                snprintf(what, sizeof what, hier ? "%dx%d" : "%d", TBS[i], P);
                used += (size_t)snprintf(note + used, used < sizeof note ? sizeof note - used : 0,
                                         "%s%s: %.3f us", used ? ", " : "", what, us);
                if (us < best_us * (1 - 1e-9)) {  /* rounding apart, a tie keeps the first */
                    best_us = us;
                    best = TBS[i];
                    best_p = P;
                }
            }
            prog_free(p);
        }
    if (!best) {
        o->channels = 1;
        return;
    }
    o->channels = best;
    if (hier)
        o->chunks = best_p;
    if (!c->quiet)
        fprintf(stderr, "taccl-synth: %s: %d threadblock%s per rank%s, the fastest by the "
                "executor at %lld bytes (%s%s)\n", algo, best, best == 1 ? "" : "s",
                hier ? (best_p == 1 ? " of 1 piece" : best_p == 2 ? " of 2 pieces"
                                                                  : " of 4 pieces") : "",
                want, hier ? "blocks x pieces: " : "", note);
}

/* --algo NAME TOPO.json: a baseline built from the topology, no solver. */
static int algo_main(const cli *c)
{
    /* --algo nccl takes --graph (M_NCCL) besides what every --algo takes */
    cli mc = *c;
    int graph_row = args_row(&SPEC, "--graph");
    if (c->algo && !strcmp(c->algo, "nccl") && graph_row >= 0)
        mc.seen &= ~(1ULL << graph_row);
    int rc = check_writing(&mc, M_ALGO);
    if (rc != TC_OK)
        return rc;
    if (c->npos == 0)
        return cli_fail(c, 1, "--algo needs a topology file");
    if (c->npos > 1)
        return cli_fail(c, 1, "--algo takes one topology file, got a second: '%s'", c->pos[1]);
    const baseline_algo *a = baseline_algo_find(c->algo);
    if (!a) {
        char known[256];
        return cli_fail(c, 0, "unknown algorithm '%s'; known: %s", c->algo,
                        baseline_algo_names(known, sizeof known));
    }
    if (!strcmp(a->name, "nccl") && c->proto && !strcmp(c->proto, "auto"))
        return cli_fail(c, 0, "--algo nccl chooses its protocol as NCCL's tuning model does; "
                        "--proto P keeps it to P (as NCCL_PROTO=P), auto is not one");
    if ((!strcmp(a->name, "nvls") || !strcmp(a->name, "hier-nvls")) && c->proto)
        return cli_fail(c, 0, "--algo %s runs switch operations in MSCCL++'s Simple protocol; "
                        "--proto does not apply", a->name);
    if (!strcmp(a->name, "allpairs") && c->proto)
        return cli_fail(c, 0, "--algo allpairs runs its puts and reduces in MSCCL++'s Simple "
                        "protocol; --proto does not apply");
    if (!strcmp(a->name, "pat") && c->proto)
        return cli_fail(c, 0, "--algo pat runs in Simple, the only protocol NCCL runs PAT in "
                        "(src/graph/tuning.cc:302-303); --proto does not apply");
    if (!c->has_coll)
        return cli_fail(c, 1, COLL_REQUIRED);
    if (!c->out)
        return cli_fail(c, 1, "-o OUT.xml is required");
    tc_err err;
    tc_err_clear(&err);
    prog *p = NULL;
    baseline_stats st;
    long long want = c->size ? c->size : 1 << 20;
    topo *t = load_topology(c, c->pos[0], &err);
    nccl_graph *g = NULL;
    if (t && c->graph) {
        if (same_file(c->out, c->graph)) {
            tc_err_set(&err, TC_INPUT, "-o %s is the graph %s: writing the schedule would "
                       "replace it", c->out, c->graph);
            topo_free(t);
            t = NULL;
        } else if (!(g = nccl_graph_load(c->graph, t, &err))) {
            topo_free(t);
            t = NULL;
        }
    }
    if (t) {
        baseline_opts o;
        baseline_opts_default(&o);
        o.channels = c->channels;
        o.chunks = c->chunks;
        o.via = c->via;
        o.target = c->target;
        o.size_bytes = want;
        o.graph = g;
        cost_proto forced;
        if (!strcmp(a->name, "nccl") && c->proto && cost_proto_parse(c->proto, &forced))
            o.nccl_proto = 1 + (int)forced;
        o.switch_ops = mpp_wanted(c->out, c->mscclpp);
        if ((!strcmp(a->name, "nvls") || !strcmp(a->name, "hier-nvls")) && !o.channels &&
            o.switch_ops)
            pick_nvls_tbs(c, a->name, t, &o, want);
        p = baseline_build_stats(c->algo, t, c->coll, &o, &st, &err);
    }
    nccl_graph_free(g);
    rc = p ? TC_OK : TC_INPUT;
    if (rc == TC_OK) {
        p->size_bytes = baseline_size_bytes(p, t, want);
        rc = set_proto(c, p, t, &err);
    }
    if (rc == TC_OK) {
        char range_note[400];
        set_bytes_range(c, p, range_note, sizeof range_note);
        if (!c->quiet && range_note[0])
            fprintf(stderr, "taccl-synth: %s\n", range_note);
        if (runtime_get(c->target)->inplace_only && p->inplace && p->outofplace)
            p->inplace = 0; /* the legacy runtime reads inplace alone: "1" would serve in-place
                               calls only; out of place, as every synthesized schedule */
        prog_set_topo(p, t);    /* p owns t from here */
        t = NULL;
        xml_write_opts wo = {.runtime = c->target, .embed_topology = 1};
        rc = lp_stop_requested() ? TC_STOP : write_uninterrupted(c, p, c->out, &wo, &err);
    }
    if (rc == TC_STOP) {
        rc = interrupted(c);
    } else if (rc != TC_OK) {
        rc = cli_fail(c, 0, "%s", err.msg);
    } else {
        if (!c->quiet)
            print_info(c, p, p->topo, &st, want);
        if (c->json)
            print_json(c, p, &st, c->algo);
    }
    prog_free(p);
    topo_free(t);
    return rc;
}

/* --plan TOPO.json --collective C -o DIR: a plan directory. */
static int plan_main(const cli *c)
{
    tc_err err;
    tc_err_clear(&err);
    if (c->algo)
        return cli_fail(c, 1, "--plan and --algo do not go together: a plan tries every "
                        "algorithm");
    if (args_check_mode(&SPEC, c->seen, M_PLAN, &err) != TC_OK)
        return cli_fail(c, 1, "%s", err.msg);
    int first = 0, again = repeated_sketch(c, &first);
    if (again >= 0)
        return cli_fail(c, 1, "--sketch %s is the same file as the earlier --sketch %s: give "
                        "each sketch once", c->sketches[again], c->sketches[first]);
    if (c->npos == 0)
        return cli_fail(c, 1, "--plan needs a topology file");
    if (c->npos > 1)
        return cli_fail(c, 1, "--plan takes one topology file (sketches go with --sketch), got "
                        "a second: '%s'", c->pos[1]);
    if (!c->has_coll)
        return cli_fail(c, 1, COLL_REQUIRED);
    if (!c->out)
        return cli_fail(c, 1, "-o DIR is required: the directory the plan is written to");
    if (c->proto && !strcmp(c->proto, "auto"))
        return cli_fail(c, 1, "--plan tries every protocol already; --proto P keeps only P");
    /* refuse an output it may not replace before any work (plan_write
     * checks again when it writes) */
    const char *in[2 + MAX_SKETCHES];
    int nin = 0, exists;
    in[nin++] = c->pos[0];
    for (int i = 0; i < c->nsketches; i++)
        in[nin++] = c->sketches[i];
    if (c->profile)
        in[nin++] = c->profile;
    if (plan_check_output(c->out, in, nin, &exists, &err) != TC_OK)
        return cli_fail(c, 0, "%s", err.msg);
    plan_opts o;
    plan_opts_init(&o);
    o.coll = c->coll;
    o.lo = c->sizes_lo ? c->sizes_lo : 1024;
    o.hi = c->sizes_lo ? c->sizes_hi : 1LL << 30;
    o.sketches = c->sketches;
    o.nsketches = c->nsketches;
    o.target = c->target;
    o.mscclpp = c->mscclpp;
    o.stage_time_s = c->time_limit;
    o.budget_s = c->budget;
    o.quiet = c->quiet;
    o.propose = !c->no_propose;
    o.profile = c->profile;
    o.tiles = c->tiles;
    o.by_default = c->by_default;
    o.proto = c->proto;
    plan *pl = NULL;
    topo *t = load_topology(c, c->pos[0], &err);
    int rc = t ? plan_make(t, &o, &pl, &err) : TC_INPUT;
    if (rc == TC_OK && lp_stop_requested())
        rc = tc_err_set(&err, TC_STOP, "interrupted");
    if (rc == TC_OK)
        rc = plan_write(pl, c->out, &err);
    if (rc == TC_STOP) {
        rc = interrupted(c);
    } else if (rc != TC_OK) {
        cli_fail(c, 0, "%s", err.msg);
        rc = err.code == TC_WRONG ? TC_WRONG : TC_INPUT;
    } else {
        if (!c->quiet)
            plan_print(pl, c->out, stderr);
        if (c->json) {
            char *j = plan_summary_json(pl, c->out);
            printf("%s\n", j);
            free(j);
        }
    }
    plan_free(pl);
    topo_free(t);
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    c.tiles = -1;   /* the default timing (model/variant.h) */
    c.target = RT_MSCCL;
    c.gap = -1;
    c.solver_cbc = -1;
    c.max_bytes = INT64_MAX;
    c.json = args_has(argc, argv, "--json"); /* an error before it is JSON too */
    tc_err err;
    char *help = NULL;
    int rc = args_parse(&SPEC, argc, argv, &c, &c.seen, &err);
    if (rc == TC_OK && c.target == RT_MSCCLPP) {
        /* MSCCL++ plans: MSCCL's step and depid limits do not bind them;
         * mpp_write checks MSCCL++'s own when it writes */
        c.mscclpp = 1;
        c.target = RT_UNLIMITED;
    }
    if (rc == ARGS_HELP) {
        help = args_help(&SPEC);
        fputs(help, stdout);
        rc = TC_OK;
    } else if (rc != TC_OK) {
        rc = cli_fail(&c, 1, "%s", err.msg);
    } else if (c.list) {
        print_list();
    } else if (runtime_writable(c.target, &err) != TC_OK) {
        tc_err_prefix(&err, "--target %s", runtime_name(c.target));
        rc = cli_fail(&c, 0, "%s", err.msg);
    } else {
        catch_sigint();
        rc = c.plan ? plan_main(&c) : c.algo ? algo_main(&c) : sketch_main(&c);
    }
    free(help);
    return rc;
}
