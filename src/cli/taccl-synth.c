/* taccl-synth — write a collective schedule (MSCCL XML) for a topology.
 *
 * Two modes.  `taccl-synth SKETCH.json TOPO.json -o OUT.xml` runs TACCL's
 * three stages (synth/synth.h: routing MILP, heuristic ordering,
 * contiguity MILP, all through GLPK) and lowers the result.  `--algo
 * ring|direct|butterfly|rsag|tree` builds a baseline straight from the
 * topology with no solver.  Either way the file carries the topology and
 * size, so `taccl-run OUT.xml` needs nothing else.
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
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "exec/check.h"
#include "exec/data.h"
#include "model/collective.h"
#include "model/cost.h"
#include "model/topo.h"
#include "sched/ptime.h"
#include "sched/xml.h"
#include "model/sketch.h"
#include "plan/plan.h"
#include "synth/baseline.h"
#include "synth/reverse.h"
#include "synth/synth.h"
#include "util/size.h"
#include "util/units.h"

static const char usage[] =
    "usage: taccl-synth --algo NAME TOPO.json --collective C -o OUT.xml [--channels K]\n"
    "                   [--chunks M] [--via direct|ring|butterfly] [--size BYTES]\n"
    "                   [--target msccl|msccl-executor|unlimited] [--bytes LO:HI]\n"
    "                   [--proto P] [--strict] [-q] [--json]\n"
    "       taccl-synth SKETCH.json TOPO.json -o OUT.xml [--collective C] [--size BYTES]\n"
    "                   [--time-limit S] [--gap G] [--solver glpk|cbc] [--instances K]\n"
    "                   [--mem-limit MB] [--target T] [--bytes LO:HI] [--proto P]\n"
    "                   [--hierarchical|--flat] [--rails ring|blocks|best]\n"
    "                   [--route auto|milp|latency|best] [--inplace] [--strict]\n"
    "                   [-q|-v] [--json]\n"
    "       taccl-synth --plan TOPO.json --collective C -o DIR [--sketch S.json ...]\n"
    "                   [--sizes LO:HI] [--target T] [--time-budget S] [--no-propose]\n"
    "                   [--time-limit S] [--proto P] [--strict] [-q] [--json]\n"
    "       taccl-synth --list\n";

static const char help[] =
    "Write an MSCCL XML schedule of a collective for a topology.  The file carries\n"
    "the topology and size, so `taccl-run OUT.xml` runs it with no other argument.\n"
    "\n"
    "  --algo NAME       baseline algorithm (see --list): ring, direct, butterfly,\n"
    "                    rsag, tree, or nccl: what NCCL runs for that call at --size\n"
    "                    (its tuning model picks ring or tree, the protocol and the\n"
    "                    channels; its rings leave each node through their own NIC)\n"
    "  --collective C    allgather, alltoall, reducescatter or allreduce\n"
    "  -o, --output OUT  output file (written atomically; untouched on any error;\n"
    "                    not an input file)\n"
    "  --channels K      data channels (ring: default as many rings as the topology\n"
    "                    offers that share no link direction, switch port or NIC, at\n"
    "                    most 8; more are filled with other orders; tree: pairs of\n"
    "                    trees; others default 1)\n"
    "  --chunks M        chunks per rank per channel, 1..1048576: more pipelining,\n"
    "                    more alpha (default 1; tree 4)\n"
    "  --via V           rsag only: ReduceScatter and AllGather via direct (default),\n"
    "                    ring or butterfly (Rabenseifner)\n"
    "  --size BYTES      size the file records (larger per-rank buffer; K/M/G are\n"
    "                    powers of 1024; default 1 MiB), rounded up to whole elements\n"
    "                    (and DMA segments) per chunk\n"
    "  --target T        runtime limits to respect: msccl (256 steps per tb, default),\n"
    "                    msccl-executor (64, and its spelling of coll), unlimited (no\n"
    "                    step or depid limit: simulation only, the runtimes will not\n"
    "                    load the file)\n"
    "  --bytes LO:HI     buffer sizes (nccl-tests size, K/M/G) the runtime may pick\n"
    "                    the schedule for: minBytes LO, maxBytes HI (HI excluded;\n"
    "                    'inf' = no limit).  Default 0:inf.  Written as each\n"
    "                    --target reads it (the legacy runtime never picks a\n"
    "                    schedule whose maxBytes is 0; the newer executor's\n"
    "                    maxBytes is inclusive and 0 means no limit)\n"
    "  --time-limit S    sketch mode: seconds per MILP stage, > 0 and < 1e7 (default:\n"
    "                    the sketch's, else 60 for routing and 30 for contiguity); a\n"
    "                    limit returns the best schedule found, never nothing\n"
    "  --gap G           sketch mode: relative MIP gap to stop both stages at,\n"
    "                    0 <= G < 1 (default: 0.001 for routing, 0 for contiguity)\n"
    "  --solver S        sketch mode: glpk or cbc (default: the sketch's solver.backend,\n"
    "                    else glpk)\n"
    "  --instances K     sketch mode: replicate the algorithm on K channel sets\n"
    "                    (1..32)\n"
    "  --mem-limit MB    sketch mode: each MILP solve may use at most MB MiB (GLPK:\n"
    "                    what GLPK allocates; CBC: its solver process's memory on\n"
    "                    top of this one's); exceeding it is exit 2, nothing\n"
    "                    written.  Default: no limit\n"
    "  --hierarchical    sketch mode: route one node with the routing MILP and join\n"
    "                    the nodes by rails (each local rank's chunks cross nodes\n"
    "                    through its own NIC: rings for allgather and the\n"
    "                    reductions, direct hops for alltoall) instead of one MILP\n"
    "                    over the whole cluster.  Default: hierarchical from 64\n"
    "                    ranks on 2 nodes or more; --flat never\n"
    "  --rails R         hierarchical allgather between nodes: ring (the rings\n"
    "                    above), blocks (each node gathers itself, then sends its\n"
    "                    whole block to every other node directly: one alpha per\n"
    "                    node instead of one per chunk), or best (default: both,\n"
    "                    the faster kept)\n"
    "  --route R         sketch mode, flat stage 1: milp (the routing MILP: each\n"
    "                    chunk pays its own alpha, so chunks spread over paths),\n"
    "                    latency (each chunk on its fewest-alpha tree, trees shared\n"
    "                    below a common relay, so stage 3 sends chunks together:\n"
    "                    small sizes), best (both, the faster kept), or auto\n"
    "                    (default: best when a chunk costs less than its alpha on\n"
    "                    every link, switch and NIC, else milp)\n"
    "  --proto P         the protocol the runtime moves data with: Simple (default),\n"
    "                    LL, LL128, or auto: whichever the cost model times fastest\n"
    "                    at --size (LL: half the bandwidth at a fraction of the\n"
    "                    latency; docs/design.md section 4)\n"
    "  --plan            write a plan into -o DIR: the files a runtime loads so that\n"
    "                    every call of --collective over --sizes (default 1K:1G),\n"
    "                    in place and out of place, runs the fastest schedule we\n"
    "                    have (every baseline under each protocol, each --sketch\n"
    "                    synthesized at 1K, 64K, 1M, 16M and 1G where they fall in\n"
    "                    the range), or falls back to NCCL where NCCL's own\n"
    "                    schedule is fastest; DIR/plan.json lists each file, its\n"
    "                    byte range, where it came from and its predicted time;\n"
    "                    DIR/nccl/ holds NCCL's schedule at each size.  Run it\n"
    "                    with taccl-run DIR --sweep LO:HI\n"
    "  --sketch S.json   plan mode: a sketch to synthesize from (repeatable, each\n"
    "                    file once: a repeated one is refused); after them,\n"
    "                    sketches proposed from the topology (the patterns of\n"
    "                    TACCL's: switch uc-max for small sizes, uc-min for large,\n"
    "                    each GPU through its own NIC or TACCL's relays, chunkup\n"
    "                    1/2/4/8, the node symmetry), written to DIR/sketches/\n"
    "  --no-propose      plan mode: no proposed sketches (baselines and --sketch only)\n"
    "  --tiles           sketch and plan mode: judge the candidates (and a plan's\n"
    "                    files) as the runtimes run them, once per tile pass\n"
    "                    (taccl-run --tiles) instead of in one pass\n"
    "                    (with --plan, --proto P keeps only protocol P's candidates)\n"
    "  --sizes LO:HI     plan mode: the sizes to cover (powers of two from LO to HI;\n"
    "                    LO:LO for one size)\n"
    "  --time-budget S   plan mode: stop synthesizing anchors after S seconds\n"
    "                    (> 0 and < 1e7; default 600)\n"
    "  --inplace         sketch mode: write the schedule for in-place calls\n"
    "                    (inplace=\"1\" outofplace=\"0\"), as msccl-tools writes one:\n"
    "                    references to the buffer the runtime aliases into the other\n"
    "                    rewritten onto it, a rank's copy of its own chunk dropped\n"
    "                    (a nop).  Not for alltoall (in place it would overwrite data\n"
    "                    still to be sent).  taccl-run checks it in place\n"
    "  --strict          a topology whose figures lack a \"source\" is an error\n"
    "                    (exit 2), not a warning\n"
    "  -v, --verbose     sketch mode: the solver's own log on stderr too\n"
    "  --json            one JSON object on stdout describing what was written\n"
    "  -q, --quiet       no progress lines on stderr\n"
    "\n"
    "Exit: 0 written, 2 unusable arguments or an algorithm the topology or the\n"
    "runtime cannot take (the message says what to do instead), 130 interrupted\n"
    "(SIGINT) before the file was written.  Nothing is written unless exit is 0.\n";

typedef struct {
    const char *algo;
    const char *coll;
    const char *out;
    const char *via;
    const char *pos[3];
    int npos;
    int channels, chunks;
    long long size;         /* 0 = default */
    baseline_target target;
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
    int strict;                 /* --strict: topology warnings are errors */
    int inplace;                /* --inplace (sketch mode): the in-place copy */
    int plan;                   /* --plan: a plan directory */
    const char *sketches[16];   /* --sketch (plan mode) */
    int nsketches;
    long long sizes_lo, sizes_hi;   /* --sizes (plan mode); 0 = 1K:1G */
    double budget;              /* --time-budget (plan mode); 0 = default */
    int no_propose;             /* --no-propose (plan mode) */
    int tiles;                  /* --tiles */
} cli;

/* One line on stderr (and the error as JSON with --json); `hint` adds a
 * pointer to --help for argument mistakes. */
static int report(const cli *c, int hint, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "taccl-synth: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "%s\n", hint ? " (see taccl-synth --help)" : "");
    if (c && c->json) {
        char msg[1200];
        snprintf(msg, sizeof msg, fmt, a, b);
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

/* The numbers of the options.  Integers are decimal digits alone (no sign,
 * blank or 0x: strtol's " +4" was taken as 4); real numbers follow
 * util/units.h's decimal rule.  A refusal names the whole domain, so a
 * value out of range is told the bound it broke. */
#define MAX_CHUNKS (1 << 20)        /* --chunks */
#define MAX_SECONDS 1e7             /* --time-limit, --time-budget: as a sketch's
                                       solver.time_limit_s, below 1e7 s */

/* v, digits only, as an integer in 1..max into *out: 0, or -1. */
static int parse_count(const char *v, int max, int *out)
{
    if (!*v)
        return -1;
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    long x = strtol(v, NULL, 10);
    if (errno || x < 1 || x > max)
        return -1;
    *out = (int)x;
    return 0;
}

/* v as a decimal number x with lo < x (lo <= x when closed_lo) and x < hi:
 * 0, or -1. */
static int parse_real(const char *v, double lo, int closed_lo, double hi, double *out)
{
    double x;
    if (units_number(v, &x) || !(closed_lo ? x >= lo : x > lo) || !(x < hi))
        return -1;
    *out = x;
    return 0;
}

/* "LO:HI" with sizes (LO may be 0, HI may be "inf"): 0 or -1; the order of
 * LO and HI is the caller's to judge. */
static int parse_bytes_range(const char *v, long long *lo, long long *hi)
{
    const char *colon = strchr(v, ':');
    char a[64];
    if (!colon || (size_t)(colon - v) >= sizeof a)
        return -1;
    memcpy(a, v, (size_t)(colon - v));
    a[colon - v] = 0;
    if (!strcmp(a, "0"))
        *lo = 0;
    else if (size_parse(a, lo))
        return -1;
    if (!strcmp(colon + 1, "inf"))
        *hi = INT64_MAX;
    else if (size_parse(colon + 1, hi))
        return -1;
    return 0;
}

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
    p->target = c->target == BL_TARGET_MSCCL ? 1 : c->target == BL_TARGET_EXECUTOR ? 2 : 0;
    p->min_bytes = c->min_bytes;
    p->max_bytes = c->max_bytes;
    if (c->target == BL_TARGET_EXECUTOR) {
        p->max_bytes = c->max_bytes == INT64_MAX ? 0 : c->max_bytes - 1;
        return;
    }
    int s_max = 0;
    for (int r = 0; r < p->ngpu; r++)
        if (p->gpus[r].s_chunks > s_max)
            s_max = p->gpus[r].s_chunks;
    if (c->target != BL_TARGET_MSCCL || c->max_bytes != INT64_MAX || s_max == 0)
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
    snprintf(buf, n, "%s%s",
             c->target == BL_TARGET_UNLIMITED ? " --target unlimited"
             : c->target == BL_TARGET_EXECUTOR ? " --target msccl-executor" : "",
             big ? " --no-data (its buffers are too large to check the data)" : "");
    return buf;
}

/* Fill c from argv: TC_OK, TC_INPUT (message printed), or -1 for --help. */
static int parse_args(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->target = BL_TARGET_MSCCL;
    c->gap = -1;
    c->solver_cbc = -1;
    c->max_bytes = INT64_MAX;
    /* --json anywhere (after a bad option too) means the error is JSON */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json"))
            c->json = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                            \
    do {                                                        \
        if (!v)                                                 \
            return report(c, 1, "%s needs a value%s", a, "");        \
        i++;                                                    \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return -1;
        else if (!strcmp(a, "--list"))
            c->list = 1;
        else if (!strcmp(a, "--json"))
            c->json = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            c->quiet = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
            c->verbose = 1;
        else if (!strcmp(a, "--time-limit")) {
            NEED_VALUE();
            if (parse_real(v, 0, 0, MAX_SECONDS, &c->time_limit))
                return report(c, 1, "--time-limit: expected seconds > 0 and < 1e7, got '%s'%s", v,
                              units_hint(v));
        } else if (!strcmp(a, "--gap")) {
            NEED_VALUE();
            if (parse_real(v, 0, 1, 1, &c->gap))
                return report(c, 1, "--gap: expected a relative gap 0 <= G < 1 (as a sketch's "
                              "solver.mip_gap), got '%s'%s", v, units_hint(v));
        } else if (!strcmp(a, "--solver")) {
            NEED_VALUE();
            if (!strcmp(v, "glpk"))
                c->solver_cbc = 0;
            else if (!strcmp(v, "cbc"))
                c->solver_cbc = 1;
            else
                return report(c, 1, "--solver: expected glpk or cbc, got '%s'%s", v, "");
        } else if (!strcmp(a, "--mem-limit")) {
            NEED_VALUE();
            if (parse_count(v, INT_MAX, &c->mem_limit_mb))
                return report(c, 1, "--mem-limit: expected a whole number of MiB in 1..2147483647, "
                              "got '%s'%s", v, units_hint(v));
        } else if (!strcmp(a, "--instances")) {
            NEED_VALUE();
            if (parse_count(v, 32, &c->instances))
                return report(c, 1, "--instances: expected an integer 1..32, got '%s'%s", v,
                              units_hint(v));
        }
        else if (!strcmp(a, "--hierarchical") || !strcmp(a, "--flat")) {
            int h = a[2] == 'h' ? 1 : -1;
            if (c->hierarchical && c->hierarchical != h)
                return report(c, 1, "--hierarchical and --flat do not go together%s%s", "", "");
            c->hierarchical = h;
        } else if (!strcmp(a, "--rails")) {
            NEED_VALUE();
            if (!strcmp(v, "ring"))
                c->rails = SYNTH_RAILS_RING;
            else if (!strcmp(v, "blocks"))
                c->rails = SYNTH_RAILS_BLOCKS;
            else if (!strcmp(v, "best"))
                c->rails = SYNTH_RAILS_BEST;
            else
                return report(c, 1, "--rails: expected ring, blocks or best, got '%s'%s", v, "");
        } else if (!strcmp(a, "--route")) {
            NEED_VALUE();
            if (!strcmp(v, "auto"))
                c->route = SYNTH_ROUTE_AUTO;
            else if (!strcmp(v, "milp"))
                c->route = SYNTH_ROUTE_MILP;
            else if (!strcmp(v, "latency"))
                c->route = SYNTH_ROUTE_LATENCY;
            else if (!strcmp(v, "best"))
                c->route = SYNTH_ROUTE_BEST;
            else
                return report(c, 1, "--route: expected auto, milp, latency or best, got '%s'%s",
                              v, "");
        } else if (!strcmp(a, "--strict")) {
            c->strict = 1;
        } else if (!strcmp(a, "--inplace")) {
            c->inplace = 1;
        } else if (!strcmp(a, "--plan")) {
            c->plan = 1;
        } else if (!strcmp(a, "--no-propose")) {
            c->no_propose = 1;
        } else if (!strcmp(a, "--tiles")) {
            c->tiles = 1;
        } else if (!strcmp(a, "--sketch")) {
            NEED_VALUE();
            if (c->nsketches == 16)
                return report(c, 1, "--sketch: at most 16 sketches, got a 17th: '%s'%s", v, "");
            c->sketches[c->nsketches++] = v;
        } else if (!strcmp(a, "--sizes")) {
            NEED_VALUE();
            if (parse_bytes_range(v, &c->sizes_lo, &c->sizes_hi) || c->sizes_lo <= 0 ||
                c->sizes_hi == INT64_MAX || c->sizes_hi < c->sizes_lo)
                return report(c, 1, "--sizes: expected LO:HI sizes with 0 < LO <= HI, e.g. "
                              "1K:1G (LO:LO for one size), got '%s'%s", v, "");
        } else if (!strcmp(a, "--time-budget")) {
            NEED_VALUE();
            if (parse_real(v, 0, 0, MAX_SECONDS, &c->budget))
                return report(c, 1, "--time-budget: expected seconds > 0 and < 1e7, got '%s'%s", v,
                              units_hint(v));
        } else if (!strcmp(a, "--proto")) {
            NEED_VALUE();
            cost_proto pr;
            if (strcmp(v, "auto") != 0 && !cost_proto_parse(v, &pr))
                return report(c, 1, "--proto: expected Simple, LL, LL128 or auto, got '%s'%s", v,
                              "");
            c->proto = v;
        } else if (!strcmp(a, "--algo")) {
            NEED_VALUE();
            c->algo = v;
        } else if (!strcmp(a, "--collective")) {
            NEED_VALUE();
            c->coll = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEED_VALUE();
            c->out = v;
        } else if (!strcmp(a, "--via")) {
            NEED_VALUE();
            c->via = v;
        } else if (!strcmp(a, "--channels")) {
            NEED_VALUE();
            if (parse_count(v, 32, &c->channels))
                return report(c, 1, "--channels: expected an integer 1..32, got '%s'%s", v,
                              units_hint(v));
        } else if (!strcmp(a, "--chunks")) {
            NEED_VALUE();
            if (parse_count(v, MAX_CHUNKS, &c->chunks))
                return report(c, 1, "--chunks: expected an integer 1..1048576, got '%s'%s", v,
                              units_hint(v));
        } else if (!strcmp(a, "--size")) {
            NEED_VALUE();
            char hint[128];
            if (size_parse(v, &c->size))
                return report(c, 1, "--size: not a size in bytes: '%s' (e.g. 1048576, 64K, 1MB)%s", v,
                              size_hint(v, hint, sizeof hint));
        } else if (!strcmp(a, "--bytes")) {
            NEED_VALUE();
            if (parse_bytes_range(v, &c->min_bytes, &c->max_bytes) ||
                c->min_bytes >= c->max_bytes)
                return report(c, 1, "--bytes: expected LO:HI with LO < HI (sizes such as 0, 64K, "
                              "1MB; HI may be inf), got '%s'%s", v, "");
        } else if (!strcmp(a, "--target")) {
            NEED_VALUE();
            if (!strcmp(v, "msccl"))
                c->target = BL_TARGET_MSCCL;
            else if (!strcmp(v, "msccl-executor"))
                c->target = BL_TARGET_EXECUTOR;
            else if (!strcmp(v, "unlimited"))
                c->target = BL_TARGET_UNLIMITED;
            else
                return report(c, 1, "--target: expected msccl, msccl-executor or unlimited, got '%s'%s",
                            v, "");
        } else if (a[0] == '-' && a[1])
            return report(c, 1, "unknown option '%s'%s", a, "");
        else if (c->npos >= 2)
            return report(c, 1, "too many files: '%s'%s", a, "");
        else
            c->pos[c->npos++] = a;
#undef NEED_VALUE
    }
    return TC_OK;
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

static const char *target_label(baseline_target t)
{
    return t == BL_TARGET_EXECUTOR ? "msccl-executor" : t == BL_TARGET_UNLIMITED ? "unlimited"
                                                                                 : "msccl";
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
        cJSON_AddNumberToObject(nc, "rings", st->nccl.rings);
        cJSON_AddNumberToObject(nc, "piece_bytes", (double)st->nccl.piece_bytes);
        if (st->nccl.estimate_us >= 0)
            cJSON_AddNumberToObject(nc, "estimate_us", st->nccl.estimate_us);
        else
            cJSON_AddNullToObject(nc, "estimate_us");
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
    cJSON_AddStringToObject(j, "target", target_label(c->target));
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
    if (st->rings_found)
        fprintf(stderr, " (%d ring%s found sharing no link, switch port or NIC)",
                st->rings_found, st->rings_found == 1 ? "" : "s");
    fprintf(stderr, " x %d chunk%s, nchunksperloop %d\n", st->chunks, st->chunks == 1 ? "" : "s",
            p->nchunksperloop);
    if (st->note[0])
        fprintf(stderr, "taccl-synth: %s\n", st->note);
    fprintf(stderr, "taccl-synth: %lld tbs, %lld steps; at most %d tbs per rank and %d steps per "
            "tb (%s); %s\n", st->tbs, st->steps, st->max_tbs_per_rank, st->max_steps_per_tb,
            c->target == BL_TARGET_UNLIMITED ? "no limit"
            : c->target == BL_TARGET_EXECUTOR ? "msccl-executor limit 64" : "msccl limit 256",
            p->inplace ? "in place and out of place"
            : c->target == BL_TARGET_MSCCL ? "out of place (the legacy runtime runs a file for "
                                             "the calls of one mode)"
                                           : "out of place only");
    if (c->target == BL_TARGET_UNLIMITED)
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
    cJSON_AddNumberToObject(j, "synthesis_seconds",
                            st->route_s + st->order_s + st->contig_s + st->lower_s);
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
    report(c, 0, "interrupted (%s): nothing written%s", sig == SIGTERM ? "SIGTERM"
                  : sig == SIGHUP ? "SIGHUP" : "SIGINT", "");
    return 128 + sig;
}

/* prog_write_xml; the signals are held while its temporary file exists
 * (util/file.h), so no temporary file is left. */
static int write_uninterrupted(const prog *p, const char *path, const xml_write_opts *wo,
                               tc_err *err)
{
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
        int rc = ptime_run(p, t, p->size_bytes, &us, err);
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

/* Sketch mode: SKETCH.json TOPO.json through the three stages. */
static int synth_main(const cli *c)
{
    if (!c->out)
        return report(c, 1, "-o OUT.xml is required%s%s", "", "");
    tc_err err;
    tc_err_clear(&err);
    sketch *s = sketch_load(c->pos[0], &err);
    if (!s)
        return report(c, 0, "%s%s", err.msg, "");
    topo *t = load_topology(c, c->pos[1], &err);
    if (!t) {
        sketch_free(s);
        return report(c, 0, "%s%s", err.msg, "");
    }
    synth_opts o;
    synth_opts_init(&o);
    if (c->coll) {
        if (coll_parse(c->coll, &o.coll)) {
            sketch_free(s);
            topo_free(t);
            return report(c, 1, "--collective: expected allgather, alltoall, reducescatter or "
                          "allreduce, got '%s'%s", c->coll, "");
        }
        o.has_coll = 1;
    }
    o.size_bytes = c->size;
    o.route_time_s = o.contig_time_s = c->time_limit;
    o.mip_gap = c->gap;
    int cbc = c->solver_cbc >= 0 ? c->solver_cbc : s->backend == SK_SOLVER_CBC;
    o.backend = cbc ? LP_CBC : LP_GLPK;
    o.instances = c->instances ? c->instances : 1;
    o.newer_executor = c->target == BL_TARGET_EXECUTOR;
    o.unlimited = c->target == BL_TARGET_UNLIMITED;
    o.quiet = c->quiet;
    o.verbose = c->verbose;
    o.mem_limit_mb = c->mem_limit_mb;
    o.hierarchical = c->hierarchical;
    o.rails = c->rails;
    o.route = c->route;
    o.tiles = c->tiles;
    coll_kind kind = o.has_coll ? o.coll : s->has_coll ? s->coll : COLL_ALLGATHER;
    if (c->inplace && kind == COLL_ALLTOALL) {
        sketch_free(s);
        topo_free(t);
        return report(c, 1, "--inplace: an alltoall cannot run in place without scratch for "
                      "what it overwrites; synthesize it out of place (the runtime then falls "
                      "back to NCCL for in-place calls)%s%s", "", "");
    }
    int rc = sketch_check(s, t, &err);
    prog *p = NULL;
    synth_stats st;
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
        xml_write_opts wo = {.newer_executor = o.newer_executor, .embed_topology = 1};
        rc = write_uninterrupted(p, c->out, &wo, &err);
    }
    if (rc == TC_STOP) {
        rc = interrupted(c);
    } else if (rc != TC_OK) {
        rc = report(c, 0, "%s%s", err.msg, "");
    } else {
        char note[256], how[128];
        limit_note(&st, note, sizeof note);
        if (!c->quiet && range_note[0])
            fprintf(stderr, "taccl-synth: %s\n", range_note);
        if (!c->quiet)
            fprintf(stderr, "taccl-synth: wrote %s: %s on %s, predicted %.3f us "
                    "(synthesis %.2f s%s); run it with: taccl-run %s%s\n", c->out,
                    coll_name(p->coll), t->name, p->predicted_us,
                    st.route_s + st.order_s + st.contig_s + st.lower_s, note, c->out,
                    run_flags(c, p, how, sizeof how));
        if (c->json)
            print_synth_json(c, p, &st);
    }
    prog_free(p);
    sketch_free(s);
    topo_free(t);
    return rc;
}

/* Plan mode: --plan TOPO.json --collective C -o DIR. */
static int plan_main(const cli *c)
{
    if (c->algo)
        return report(c, 1, "--plan and --algo do not go together: a plan tries every "
                      "algorithm%s%s", "", "");
    if (c->npos != 1)
        return report(c, 1, c->npos == 0 ? "--plan needs a topology file%s%s"
                                         : "--plan takes one topology file (sketches go with "
                                           "--sketch), got a second: '%s'%s",
                      c->npos ? c->pos[1] : "", "");
    if (!c->coll)
        return report(c, 1, "--collective is required (allgather, alltoall, reducescatter or "
                      "allreduce)%s%s", "", "");
    if (!c->out)
        return report(c, 1, "-o DIR is required: the directory the plan is written to%s%s", "",
                      "");
    if (c->channels || c->chunks || c->via || c->size || c->instances)
        return report(c, 1, "--plan chooses channels and sizes itself; --channels, --chunks, "
                      "--via, --size and --instances do not apply%s%s", "", "");
    if (c->proto && !strcmp(c->proto, "auto"))
        return report(c, 1, "--plan tries every protocol already; --proto P keeps only P%s%s",
                      "", "");
    plan_opts o;
    plan_opts_init(&o);
    if (coll_parse(c->coll, &o.coll))
        return report(c, 1, "--collective: expected allgather, alltoall, reducescatter or "
                      "allreduce, got '%s'%s", c->coll, "");
    tc_err err;
    tc_err_clear(&err);
    /* refuse an output it may not replace before any work (plan_write
     * checks again when it writes) */
    {
        const char *in[65];
        int nin = 0, exists;
        in[nin++] = c->pos[0];
        for (int i = 0; i < c->nsketches && nin < 65; i++)
            in[nin++] = c->sketches[i];
        if (plan_check_output(c->out, in, nin, &exists, &err) != TC_OK)
            return report(c, 0, "%s%s", err.msg, "");
    }
    topo *t = load_topology(c, c->pos[0], &err);
    if (!t)
        return report(c, 0, "%s%s", err.msg, "");
    o.lo = c->sizes_lo ? c->sizes_lo : 1024;
    o.hi = c->sizes_lo ? c->sizes_hi : 1LL << 30;
    o.sketches = c->sketches;
    o.nsketches = c->nsketches;
    o.target = c->target;
    o.stage_time_s = c->time_limit;
    o.budget_s = c->budget;
    o.quiet = c->quiet;
    o.tiles = c->tiles;
    o.propose = !c->no_propose;
    o.proto = c->proto;
    plan *pl = NULL;
    int rc = plan_make(t, &o, &pl, &err);
    if (rc == TC_OK && lp_stop_requested())
        rc = tc_err_set(&err, TC_STOP, "interrupted");
    if (rc == TC_OK)
        rc = plan_write(pl, c->out, &err);
    if (rc == TC_STOP)
        rc = interrupted(c);
    else if (rc != TC_OK) {
        report(c, 0, "%s%s", err.msg, "");
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
    if (c.list) {
        print_list();
        return 0;
    }
    catch_sigint();
    if (c.target == BL_TARGET_EXECUTOR && c.max_bytes == 1)
        return report(&c, 0, "--bytes %s:1: the range holds no call of 1 byte or more, and "
                      "msccl-executor reads the maxBytes it would need (0) as no limit%s",
                      c.min_bytes ? "LO" : "0", "");
    for (int i = 0; i < c.npos && c.out && !c.plan; i++)
        if (same_file(c.out, c.pos[i]))
            return report(&c, 0, "-o %s is the input %s: writing the schedule would replace it",
                          c.out, c.pos[i]);
    if (c.inplace && (c.plan || c.algo))
        return report(&c, 1, c.plan ? "--inplace is for sketch mode: a plan writes both modes "
                      "already%s%s" : "--inplace is for sketch mode: a baseline says itself "
                      "whether it runs in place (inplace=\"1\")%s%s", "", "");
    int first = 0, again = c.plan ? repeated_sketch(&c, &first) : -1;
    if (again >= 0)
        return report(&c, 1, "--sketch %s is the same file as the earlier --sketch %s: give each "
                      "sketch once", c.sketches[again], c.sketches[first]);
    if (c.plan)
        return plan_main(&c);
    if (c.nsketches || c.sizes_lo || c.budget > 0 || c.no_propose)
        return report(&c, 1, "--sketch, --sizes, --time-budget and --no-propose are for "
                      "--plan%s%s", "", "");
    if (!c.algo && (c.channels || c.chunks || c.via))
        return report(&c, 1, "--channels, --chunks and --via are for --algo baselines; a "
                      "sketch's schedule takes its chunks from the sketch (input_chunkup) and "
                      "its channels from --instances%s%s", "", "");
    if (c.algo && (c.time_limit > 0 || c.gap >= 0 || c.solver_cbc >= 0 || c.instances ||
                   c.mem_limit_mb || c.hierarchical || c.rails || c.route))
        return report(&c, 1, "--time-limit, --gap, --solver, --instances, --mem-limit, "
                      "--hierarchical/--flat, --rails and --route are for sketch mode; a "
                      "baseline takes --channels and --chunks%s%s", "", "");
    if (!c.algo) {
        if (c.npos == 2)
            return synth_main(&c);
        return report(&c, 1, "give a sketch and a topology file, or --algo NAME and a topology "
                    "file%s%s", "", "");
    }
    if (c.npos != 1)
        return report(&c, 1, c.npos == 0 ? "--algo needs a topology file%s%s"
                                    : "--algo takes one topology file, got a second: '%s'%s",
                    c.npos ? c.pos[1] : "", "");
    const baseline_algo *a = baseline_algo_find(c.algo);
    if (!a)
        return report(&c, 0, "unknown algorithm '%s'; known: ring, direct, butterfly, rsag, tree, "
                    "nccl%s", c.algo, "");
    if (!strcmp(a->name, "nccl") && c.proto)
        return report(&c, 0, "--algo nccl chooses its protocol as NCCL does; to fix one, use "
                    "--algo ring or tree with --proto %s%s", c.proto, "");
    if (!c.coll)
        return report(&c, 1, "--collective is required (allgather, alltoall, reducescatter or "
                    "allreduce)%s%s", "", "");
    coll_kind k;
    if (coll_parse(c.coll, &k))
        return report(&c, 1, "--collective: expected allgather, alltoall, reducescatter or allreduce, "
                    "got '%s'%s", c.coll, "");
    if (!c.out)
        return report(&c, 1, "-o OUT.xml is required%s%s", "", "");

    tc_err err;
    tc_err_clear(&err);
    topo *t = load_topology(&c, c.pos[0], &err);
    if (!t)
        return report(&c, 0, "%s%s", err.msg, "");
    baseline_opts o;
    baseline_opts_default(&o);
    o.channels = c.channels;
    o.chunks = c.chunks;
    o.via = c.via;
    o.target = c.target;
    o.size_bytes = c.size ? c.size : 1 << 20;
    baseline_stats st;
    prog *p = baseline_build_stats(c.algo, t, k, &o, &st, &err);
    if (!p) {
        topo_free(t);
        return report(&c, 0, "%s%s", err.msg, "");
    }
    long long want = c.size ? c.size : 1 << 20;
    p->size_bytes = baseline_size_bytes(p, t, want);
    if ((rc = set_proto(&c, p, t, &err)) != TC_OK) {
        prog_free(p);
        topo_free(t);
        return report(&c, 0, "%s%s", err.msg, "");
    }
    char range_note[400];
    set_bytes_range(&c, p, range_note, sizeof range_note);
    if (!c.quiet && range_note[0])
        fprintf(stderr, "taccl-synth: %s\n", range_note);
    if (c.target == BL_TARGET_MSCCL && p->inplace && p->outofplace)
        p->inplace = 0;     /* the legacy runtime reads inplace alone: "1" would serve in-place
                               calls only; out of place, as every synthesized schedule */
    prog_set_topo(p, t);    /* p owns t from here */
    xml_write_opts wo = {.newer_executor = c.target == BL_TARGET_EXECUTOR, .embed_topology = 1};
    rc = lp_stop_requested() ? TC_STOP : write_uninterrupted(p, c.out, &wo, &err);
    if (rc != TC_OK) {
        rc = rc == TC_STOP ? interrupted(&c) : report(&c, 0, "%s%s", err.msg, "");
        prog_free(p);
        return rc;
    }
    if (!c.quiet)
        print_info(&c, p, t, &st, want);
    if (c.json)
        print_json(&c, p, &st, c.algo);
    prog_free(p);
    return 0;
}
