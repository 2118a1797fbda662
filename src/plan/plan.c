/* plan.c — candidates timed at every size, the winners per size and mode,
 * the files a runtime loads (contract in plan.h).
 *
 * The steps, in order: gather candidates (baselines under each protocol;
 * each sketch synthesized at the anchor sizes inside the range, its
 * protocol chosen at that anchor); check each candidate's buffer modes with
 * the executor (a synthesized schedule claims in place only if it verifies
 * in place); time every candidate and NCCL's own schedule at every size;
 * pick per (mode, size); merge runs of sizes into files; verify every file
 * in its modes; write. */
#define _XOPEN_SOURCE 700     /* realpath */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../exec/check.h"
#include "../exec/data.h"
#include "../exec/mpp_text.h"
#include "../exec/pick.h"
#include "../exec/run.h"
#include "../lp/lp.h"
#include "../model/cost.h"
#include "../model/sketch.h"
#include "../model/variant.h"
#include "../sched/mpp.h"
#include "../sched/ptime.h"
#include "../sched/tile.h"
#include "../sched/xml.h"
#include "../synth/synth.h"
#include "../util/file.h"
#include "../util/jsonin.h"
#include "../util/mem.h"
#include "../util/size.h"
#include "profile.h"
#include "propose.h"

#define MAXSIZES 48
#define KIB 1024LL
/* A file is verified with data at the smallest size it serves whose
 * buffers, summed over the ranks, fit in this; if even its range's lowest
 * size does not fit, at the largest size below the range that does (the
 * program is the same at every size: only the chunks' bytes scale), and
 * plan.json says so.  Its range's sizes were timed without data. */
#define VERIFY_DATA_MAX (256LL << 20)
/* The time budget's estimate of what follows the syntheses: the winners
 * judged in the model variants, up to this many candidates faster than
 * NCCL's schedule by default at each size (choose() stops at the first
 * that cannot beat the best worst case; more are judged only where the
 * fastest lose in some variant)... */
#define JUDGE_EXPECT 2
/* ...and this many files verified where the runtime loads any number */
#define FILES_EXPECT 8
/* The share of the budget kept back for the estimates' error (at least a
 * second): they are measured early in the run, on cores whose load changes
 * (DGX H100 x16 AllReduce at 600 s on two loaded cores: its files took
 * 5.0 s to write where 3.0 s was kept, and the run ended 3 s late) */
#define BUDGET_SLACK 0.02
/* The estimate of the plan's first synthesis: SYNTH_FIRST_STAGES of its
 * --time-limit stages and SYNTH_FIRST_FIXED_S (a synthesis runs several
 * pipelines, each with its MILPs; measured: DGX H100 x16 AllReduce 55 s at
 * 20 s stages, NDv2 x2 AllReduce 6.6 s at 1 s stages); later ones are
 * estimated by the longest measured so far. */
#define SYNTH_FIRST_STAGES 3
#define SYNTH_FIRST_FIXED_S 4
/* ... and of a packed-trees proposal's first (--route trees: no MILP; 0.1
 * to 6 s measured on the bundled machines at 1 GiB, chunkup 1 to 16) */
#define TREES_FIRST_S 6
/* The shortest MILP stage a plan gives a synthesis to fit its budget */
#define STAGE_MIN_S 1.0
#define SKETCH_MAX_BYTES (16L << 20)        /* a given sketch copied into the plan */
/* The plan's own copy of the topology and its ownership marker: plan.json's
 * commands name the copy and the sketches under sketches/, so they run from
 * the plan directory as written, wherever the inputs were. */
#define PLAN_TOPO "topology.json"
#define PLAN_MARKER ".taccl-plan"
#define PLAN_MAGIC "taccl-synth plan directory 1"

typedef struct {
    char label[192];        /* "ring LL", "ndv2-x2-sk-1 @64K LL" */
    char source[320];       /* where it came from, for plan.json */
    prog *p;                /* shared by the protocol variants of one schedule */
    int owns;               /* this candidate frees p */
    char proto[16];         /* the protocol this candidate runs p with */
    int synthesized;        /* from a sketch (has an in-place copy if it needs one) */
    int modes;              /* bit 0 out of place, bit 1 in place: verified */
    double us[MAXSIZES];    /* at each size; < 0 = cannot serve it, or bounded */
    char bounded[MAXSIZES]; /* not timed there: its lower bound (sched/ptime.h's
                               ptime_lower_us) is no faster than NCCL's schedule */
    double cost_s[MAXSIZES];    /* seconds timing it at each size took */
    /* under the model variants (model/variant.h), timed only where a choice
     * needs them (vdone): each variant's x NCCL (NAN where the variant does
     * not apply or neither side was timed; -INFINITY where NCCL's schedule
     * was and this one was not) and the worst of them */
    char vdone[MAXSIZES];
    double vx[MAXSIZES][VAR_COUNT];
    double worst[MAXSIZES];
} cand;

/* A size's winner (plan.win) and a range's cand: a candidate's index, or
 * why NCCL serves it (each a fallback, no file). */
#define W_NCCL_FASTEST (-1)     /* NCCL's schedule is at least as fast as every candidate */
#define W_NONE (-2)             /* no candidate verified and could be timed at the size */
#define W_NCCL_VARIANT (-3)     /* a candidate is faster by default, each slower in a variant */
#define W_BUDGET (-4)           /* a candidate is faster by default, but the time budget
                                   ended before one was judged in every variant */
#define W_DROPPED(k) (-5 - (k)) /* candidate k won, its file dropped by the file limit */
#define W_DROPPED_CAND(w) (-5 - (w))

typedef struct {
    int mode;               /* 0 out of place, 1 in place */
    int first, last;        /* size indices */
    int cand;               /* >= 0 a candidate; < 0 an NCCL fallback, W_* its reason */
} range;

/* What the time budget left out: a synthesis not started, or a candidate
 * not timed, because its estimate did not fit in what was left. */
#define MAXSKIPS 32
typedef struct {
    char what[112];         /* "sketch S at SIZE", "candidate LABEL" or "judging at SIZE
                               MODE" */
    double est_s, left_s;   /* its estimate, and the seconds left then */
} skip;

struct plan {
    const topo *t;
    plan_opts o;
    int tiles;              /* 1: every candidate timed in the runtimes' tile
                               passes, 0: the program once (--steps/--tiles, else
                               rt_tiles) */
    int rt_tiles;           /* how the target runtime runs a file: 1 in the MSCCL
                               runtimes' tile passes (an MSCCL file on a GPU
                               topology), 0 once (an MSCCL++ plan, a chip/cluster
                               device); the model variants time so */
    int nsizes;
    long long sizes[MAXSIZES];
    int ncands, capc;
    cand *cands;
    prog *nccl[MAXSIZES];
    double nccl_us[MAXSIZES];
    int nccl_ref[MAXSIZES];     /* 1: NCCL's schedule breaks the runtime's limits there,
                                   so it was timed beyond them (NCCL runs it natively)
                                   and freed: a reference, not a file (time_nccl) */
    char nccl_pick[MAXSIZES][64];
    double nccl_est[MAXSIZES];  /* NCCL's estimate of its own pick where the file is its
                                   best choice without it (would_run), else -1 */
    char nccl_would[MAXSIZES][16];  /* that pick ("nvls", "collnetdirect", ...) */
    int win[2][MAXSIZES];   /* candidate per mode and size, < 0 = NCCL (W_*) */
    int fastest[2][MAXSIZES];   /* the fastest candidate by the default model, -1 none */
    topo *vt[VAR_COUNT];    /* the variants' topologies (NULL: the plan's own) */
    int vok[VAR_COUNT];     /* the variant applies and its topology loaded */
    double nccl_v[MAXSIZES][VAR_COUNT];  /* NCCL's schedule under each, < 0 none */
    int nccl_vdone[MAXSIZES];
    double weight[MAXSIZES];    /* calls per size (the profile's, else 1 each) */
    profile prof;           /* --profile, read */
    double prof_outside;    /* its calls outside the plan's sizes */
    double kept_least;      /* the least time a kept file saves when the file limit
                               dropped some (else -1) */
    double kept_total;      /* what the kept files save together */
    int nranges, capr;
    range *ranges;
    runtime sel;            /* whose rules pick among the files (runtime_info.selects_as) */
    int executor;           /* sel reads inplace and outofplace (not the legacy
                               runtime): one file for both modes where possible */
    char notes[8][320];
    int nnotes;
    /* the time budget (issue 42 item 3): the deadline, what was left out by
     * it, and what the estimates are made from */
    double deadline;        /* t0 + --time-budget */
    double cand_s;          /* seconds to time one candidate at every size
                               (measured on the baselines), the unit of the
                               reserve kept for timing */
    double scand_s;         /* the synthesized candidates' mean seconds to verify
                               and time at every size (measured as they are
                               timed, after each synthesis), 0 before the first */
    int nscand;             /* how many that mean is over */
    int nprepared;          /* candidates verified and timed (the first ones) */
    int synth_ncands;       /* candidates the last synthesis added (protocols,
                               instances, in-place copies), 0 before the first */
    double nccl_cost_s[MAXSIZES];   /* seconds timing NCCL's schedule at each size took */
    double nccl_vcost_s[MAXSIZES];  /* and timing it under the variants: their ratio
                                       is what judging a candidate costs there, per
                                       second of its own timing */
    double slack_s;         /* kept for the estimates' error (BUDGET_SLACK) */
    double nccl_write_s;    /* what writing NCCL's files (nccl/) will take: each
                               distinct pick rendered once in time_nccl, its
                               time counted at every size it is picked */
    long long verify_cap_steps; /* the steps of the program verify_cap_s was measured on */
    long long most_steps;   /* the most steps of a verified candidate's program */
    long long verify_steps; /* the steps the candidates' verifications ran (verify_s) */
    double verify_cap_s;    /* seconds one verification with data at the largest
                               size whose buffers fit VERIFY_DATA_MAX took (a
                               baseline's, measured once): a file's verification
                               can take that long (verify_size) */
    double verify_s;        /* seconds verifying the candidates took (both modes
                               with data, at a small size), in all */
    int nverified;          /* and how many */
    int judged;             /* candidates x sizes judged in the variants */
    int nbounded;           /* candidates x sizes not timed: bounded (cand.bounded) */
    double judge_s;         /* and the seconds that took */
    double fast_so_far[2][MAXSIZES];    /* per mode and size, the fastest candidate's
                                           time by default so far (judge_new), 0 none */
    skip skipped[MAXSKIPS];
    int nskipped, nskipped_more;
    double synth_longest_s; /* the longest synthesis so far, -1 none yet */
    proposal props[PROPOSE_MAX];    /* sketches proposed from the topology */
    int nprops;
    proposal *given;        /* the --sketch files as read (safe, distinct names) */
    int ngiven;
};

void plan_opts_init(plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = RT_MSCCL;
    o->propose = 1;
    o->tiles = -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void note(plan *pl, const char *fmt, const char *a, const char *b)
{
    if (pl->nnotes < 8)
        snprintf(pl->notes[pl->nnotes++], sizeof pl->notes[0], fmt, a, b);
}

static void skipped(plan *pl, const char *what, double est_s, double left_s)
{
    if (pl->nskipped == MAXSKIPS) {
        pl->nskipped_more++;
        return;
    }
    skip *k = &pl->skipped[pl->nskipped++];
    snprintf(k->what, sizeof k->what, "%s", what);
    k->est_s = est_s;
    k->left_s = left_s;
}

/* What judging candidate k at size i in the model variants is estimated
 * to cost: its own timing there times what the variants cost NCCL's
 * schedule per second of its timing (both measured in this run). */
static double judge_cost_s(const plan *pl, int k, int i)
{
    if (pl->cands[k].vdone[i] || pl->nccl_cost_s[i] <= 0)
        return 0;
    return pl->cands[k].cost_s[i] * pl->nccl_vcost_s[i] / pl->nccl_cost_s[i];
}

/* The estimate of writing the files: each verified with data at a small
 * size (as long as a candidate's verification took on average: one slow
 * candidate must not count for every file), as many as the runtime loads
 * (FILES_EXPECT where it has no limit). */
static double files_s(const plan *pl)
{
    int most = runtime_get(pl->sel)->max_files;
    /* a file's verification at the cap's size grows with its program's
     * steps (DGX H100 x128 AllGather: 4 files verified in 21.3 s where a
     * baseline's 1.6 s each was kept) */
    /* a verification's seconds as its data's part plus a part per step:
     * the per step from the candidates' verifications at a small size
     * (where the steps are nearly all of it), the data's from the one at
     * the cap's size less its steps' part.  (Scaled as a whole by the
     * steps, a 1 GiB plan of packed trees with 8 chunks per rank kept 52
     * s of a 60 s budget for two files that took 0.3 s.) */
    double per_step = pl->verify_steps > 0 ? pl->verify_s / (double)pl->verify_steps : 0;
    double data = fmax(pl->verify_cap_s - per_step * (double)pl->verify_cap_steps, 0);
    double cap = data + per_step * (double)(pl->most_steps > pl->verify_cap_steps
                                                ? pl->most_steps : pl->verify_cap_steps);
    /* at most a file per mode and size (a 1G:1G plan writes two, where
     * the runtime's limit of 16 once kept 52 s of a 60 s budget for them
     * and left the judging none) */
    int files = most > 0 ? most : FILES_EXPECT;
    if (files > 2 * pl->nsizes)
        files = 2 * pl->nsizes;
    return pl->slack_s + pl->nccl_write_s +
           (pl->nverified ? files * fmax(pl->verify_s / pl->nverified, cap) : 0);
}


/* The seconds kept back from the syntheses for what follows them: judging
 * in the model variants the JUDGE_EXPECT fastest candidates known so far
 * that beat NCCL's schedule by default at each size, and writing the files
 * (files_s).  A candidate added later changes it: it is computed anew at
 * every decision. */
static double reserve_s(const plan *pl)
{
    double s = files_s(pl);
    if (pl->o.by_default)
        return s;
    for (int i = 0; i < pl->nsizes; i++) {
        if (pl->nccl_us[i] < 0)
            continue;
        int best[JUDGE_EXPECT], n = 0;
        for (int k = 0; k < pl->ncands; k++) {
            const cand *c = &pl->cands[k];
            if (!c->modes || c->us[i] < 0 || c->us[i] >= pl->nccl_us[i])
                continue;
            /* keep the JUDGE_EXPECT fastest, by insertion */
            int j = n;
            while (j > 0 && pl->cands[best[j - 1]].us[i] > c->us[i])
                j--;
            if (j == JUDGE_EXPECT)
                continue;
            for (int q = n < JUDGE_EXPECT ? n++ : JUDGE_EXPECT - 1; q > j; q--)
                best[q] = best[q - 1];
            best[j] = k;
        }
        for (int j = 0; j < n; j++)
            s += judge_cost_s(pl, best[j], i);
    }
    return s;
}

static cand *add_cand(plan *pl)
{
    pl->cands = xgrow(pl->cands, &pl->capc, pl->ncands + 1, sizeof *pl->cands);
    cand *c = &pl->cands[pl->ncands++];
    memset(c, 0, sizeof *c);
    return c;
}

static const char *sz(long long b, char *buf)
{
    return size_format(b, buf, 32);
}

/* A size for a file name: 1K, 64K, 2M, 1G, else the bytes. */
static const char *fname_size(long long b, char *buf)
{
    static const char U[] = "KMGT";
    int u = -1;
    while (u < 3 && b % 1024 == 0 && b >= 1024) {
        b /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, 32, "%lld", b);
    else
        snprintf(buf, 32, "%lld%c", b, U[u]);
    return buf;
}

/* ---------------------------------------------------------------- checks */

/* The bytes every size p serves is a multiple of: whole 4-byte elements
 * per chunk, or for a schedule written only as an MSCCL++ plan whole
 * 16-byte vectors in each of its plan's input chunks: n x K (x pieces) for
 * switch operations (sched/mpp_nvls.c), n x the block's chunks for the
 * all-pairs ReduceScatter (sched/mpp_allpairs.c). */
static long long size_unit(const prog *p)
{
    if (p->nvls_channels > 0)
        return (long long)MPP_BUFFER_ALIGNMENT * p->ngpus * p->nvls_channels *
               (p->nvls_pieces > 1 ? p->nvls_pieces : 1);
    if (p->allpairs_pieces > 0) {
        int at[MPP_ALLPAIRS_AT];
        return (long long)MPP_BUFFER_ALIGNMENT * p->ngpus *
               at[mpp_allpairs_pieces(p->allpairs_pieces, at)];
    }
    return 4LL * p->nchunksperloop;
}

/* The smallest size the program serves that is at least `want` bytes. */
static long long serve_size(const prog *p, long long want)
{
    long long unit = size_unit(p);
    return (want + unit - 1) / unit * unit;
}

int plan_judge_mpp(const prog *p, const topo *t, long long size, int mode, int data,
                      double *us, int *verified, tc_err *err)
{
    mpp_opts mo;
    mpp_opts_of(p, &mo);
    mo.min_bytes = size;
    mo.max_bytes = size + 1;
    char *json = mpp_to_json(p, &mo, err);
    if (!json)
        return TC_INPUT;
    mpp_text_result r;
    int rc = mpp_judge_text(json, p->name, t, size, mode, data, &r, err);
    free(json);
    if (rc == TC_OK) {
        *us = r.time_us;
        *verified = r.verified;
    }
    return rc;
}

/* p's time at s on t: the cost model's (sched/ptime) in the timing tiles
 * asks for, or, for a schedule written only as an MSCCL++ plan, which has
 * no MSCCL steps to time, the executor's run of that plan without data. */
static int prog_time(const prog *p, const topo *t, long long s, int tiles, double *us, tc_err *e)
{
    if (prog_mpp_only(p)) {
        int ok;
        return plan_judge_mpp(p, t, s, 0, 0, us, &ok, e);
    }
    return ptime_run_as(p, t, s, tiles, us, e);
}

/* Run p in one mode with data at a small size; 1 if it verifies. */
static int verifies(const prog *p, const topo *t, int mode, long long size)
{
    if (prog_mpp_only(p)) {
        double us;
        int ok = 0;
        tc_err e;
        return plan_judge_mpp(p, t, size, mode, 1, &us, &ok, &e) == TC_OK && ok;
    }
    run_opts ro;
    run_opts_default(&ro);
    ro.mode = mode;
    ro.size_bytes = size;
    ro.target = RT_UNLIMITED;   /* the loader's rules are checked on the files written */
    run_report r;
    tc_err e;
    int ok = run_schedule(p, t, &ro, &r, &e) == TC_OK && r.verified;
    run_report_free(&r);
    return ok;
}

/* 1 if the target's loader takes p (tbs per GPU and the other HZ_LOAD
 * rules, exec/check.h): the runs above judge with no runtime's limits, and
 * a lowering with instances (synth_stats.also) is not held to the tbs per
 * GPU (DGX H100 x4, 1 GiB AllGather, the packed trees at chunkup 2 with a
 * tree per channel, x2: 250 tbs a rank, which the legacy runtime refuses). */
static int loads(const plan *pl, const prog *p)
{
    if (pl->o.mscclpp || pl->o.target == RT_UNLIMITED)
        return 1;
    check_limits l;
    check_limits_for(&l, pl->o.target);
    hazard_list h = {0};
    check_program(p, &l, &h);
    int ok = 1;
    for (int i = 0; i < h.n; i++)
        ok &= h.v[i].kind != HZ_LOAD;
    hazard_list_free(&h);
    return ok;
}

/* Which modes p verifies in; a program that does not claim in place is
 * tried in place too (a synthesized schedule is written out of place only,
 * yet many run in place). */
static int verified_modes(prog *p, const topo *t)
{
    long long s = serve_size(p, 64 * KIB);    /* small, data checked */
    int m = 0;
    if (p->outofplace && verifies(p, t, 0, s))
        m |= 1;
    int claimed = p->inplace;
    p->inplace = 1;
    if (verifies(p, t, 1, s))
        m |= 2;
    p->inplace = claimed;
    return m;
}

/* Time p at every size it can serve, by the cost model. */
static void time_all(plan *pl, cand *c)
{
    for (int i = 0; i < pl->nsizes; i++) {
        c->us[i] = -1;
        c->bounded[i] = 0;
        long long s = pl->sizes[i];
        if (s % size_unit(c->p) != 0)
            continue;
        if (runtime_get(pl->o.target)->scratch_at_init) {
            int smax = 0;
            for (int r = 0; r < c->p->ngpu; r++)
                if (c->p->gpus[r].s_chunks > smax)
                    smax = c->p->gpus[r].s_chunks;
            /* the legacy runtime allocates maxBytes x s/ncpl at start: keep
             * the top of a range serving s within the budget (at most 2s, the
             * next size; HI + 1 for the plan's largest size) */
            double top = i == pl->nsizes - 1 ? (double)s + 1 : 2.0 * s;
            if (top * smax / c->p->nchunksperloop > (double)CHECK_LEGACY_SCRATCH_BUDGET)
                continue;
        }
        double us, t0 = now_s();
        tc_err e;
        /* no faster than NCCL's schedule even at its lower bound: it
         * cannot be picked at s, so it is not timed there (LL at 1 GiB
         * unrolls into tens of thousands of passes) */
        if (pl->nccl_us[i] >= 0 && !prog_mpp_only(c->p) &&
            ptime_lower_us(c->p, pl->t, s, pl->tiles, &us, &e) == TC_OK &&
            us >= pl->nccl_us[i]) {
            c->bounded[i] = 1;
            pl->nbounded++;
            continue;
        }
        if (prog_time(c->p, pl->t, s, pl->tiles, &us, &e) == TC_OK)
            c->us[i] = us;
        c->cost_s[i] = now_s() - t0;
    }
}

/* ------------------------------------------------------------ candidates */

/* channels 0: the algorithm's default.  hier twice: one channel is the
 * fewest hops (small sizes), eight pipeline its phases (large ones). */
static const struct {
    const char *algo, *via, *label;
    int channels;
} BASELINES[] = {
    {"ring", NULL, "ring", 0},           {"direct", NULL, "direct", 0},
    {"butterfly", NULL, "butterfly", 0}, {"rsag", NULL, "rsag", 0},
    {"rsag", "ring", "rsag via ring", 0}, {"rsag", "butterfly", "rsag via butterfly", 0},
    {"tree", NULL, "tree", 0},           {"hier", NULL, "hier", 0},
    {"hier", NULL, "hier 8 channels", 8},
};

static void add_baselines(plan *pl)
{
    for (size_t b = 0; b < sizeof BASELINES / sizeof BASELINES[0]; b++) {
        const baseline_algo *a = baseline_algo_find(BASELINES[b].algo);
        if (!a || !(a->colls & (1u << pl->o.coll)))
            continue;
        if (BASELINES[b].via && pl->o.coll != COLL_ALLREDUCE)
            continue;
        for (int pr = 0; pr < COST_NPROTO; pr++) {
            if (pl->o.proto && strcmp(pl->o.proto, cost_proto_name((cost_proto)pr)))
                continue;
            baseline_opts bo;
            baseline_opts_default(&bo);
            bo.via = BASELINES[b].via;
            bo.channels = BASELINES[b].channels;
            bo.target = pl->o.target;
            tc_err e;
            prog *p = baseline_build(BASELINES[b].algo, pl->t, pl->o.coll, &bo, &e);
            if (!p)
                break;      /* does not apply: same for every protocol */
            snprintf(p->proto, sizeof p->proto, "%s", cost_proto_name((cost_proto)pr));
            cand *c = add_cand(pl);
            c->p = p;
            c->owns = 1;
            snprintf(c->proto, sizeof c->proto, "%s", p->proto);
            snprintf(c->label, sizeof c->label, "%s %s", BASELINES[b].label, p->proto);
            char chans[32] = "";
            if (BASELINES[b].channels)
                snprintf(chans, sizeof chans, " --channels %d", BASELINES[b].channels);
            snprintf(c->source, sizeof c->source, "taccl-synth --algo %s %s --collective %s%s%s%s "
                     "--proto %s", BASELINES[b].algo, PLAN_TOPO, coll_name(pl->o.coll),
                     BASELINES[b].via ? " --via " : "", BASELINES[b].via ? BASELINES[b].via : "",
                     chans, p->proto);
        }
    }
}

/* The switch candidates (MSCCL++ plans only; docs/nvls.md section 6): the
 * collective through a switch that reduces and multicasts (nvls on one
 * node, hier-nvls with the rails across several), at a few
 * threadblock counts per rank, each judged like every candidate (the
 * executor's model has no per-block throughput limit, so the counts tie
 * where each serves; the fewer blocks serve smaller sizes). */
static const int NVLS_TBS[3] = {16, 4, 1};

static void add_switch_candidates(plan *pl)
{
    if (!pl->o.mscclpp)
        return;
    int hier = pl->t->nnodes > 1;
    const char *algo = hier ? "hier-nvls" : "nvls";
    for (size_t i = 0; i < (hier ? 3 : 1) * sizeof NVLS_TBS / sizeof NVLS_TBS[0]; i++) {
        int K = NVLS_TBS[i % 3], P = 1 << (i / 3);   /* hier: 1, 2 or 4 pieces */
        baseline_opts bo;
        baseline_opts_default(&bo);
        bo.channels = K;
        bo.chunks = hier ? P : 0;
        bo.switch_ops = 1;
        bo.target = pl->o.target;
        tc_err e;
        prog *p = baseline_build(algo, pl->t, pl->o.coll, &bo, &e);
        if (!p)
            continue;   /* no such switch or collective through it, or too many ops */
        cand *c = add_cand(pl);
        c->p = p;
        c->owns = 1;
        snprintf(c->proto, sizeof c->proto, "%s", p->proto);
        char pieces[32] = "";
        if (hier)
            snprintf(pieces, sizeof pieces, " x %d piece%s", P, P == 1 ? "" : "s");
        snprintf(c->label, sizeof c->label, "%s %d tb%s%s", algo, K, K == 1 ? "" : "s", pieces);
        if (hier)
            snprintf(pieces, sizeof pieces, " --chunks %d", P);
        snprintf(c->source, sizeof c->source, "taccl-synth --algo %s %s --collective %s "
                 "--channels %d%s --target mscclpp", algo, PLAN_TOPO, coll_name(pl->o.coll), K,
                 pieces);
    }
}

/* The all-pairs ReduceScatter (MSCCL++ plans only, one node; sched/
 * mpp_allpairs.c) at a few body pieces: fewer serve the smaller sizes,
 * where each piece's alpha weighs more than the last piece's reduce. */
static const int ALLPAIRS_BODIES[3] = {1, 3, 7};

static void add_allpairs_candidates(plan *pl)
{
    if (!pl->o.mscclpp || pl->o.coll != COLL_REDUCESCATTER)
        return;
    for (size_t i = 0; i < sizeof ALLPAIRS_BODIES / sizeof ALLPAIRS_BODIES[0]; i++) {
        baseline_opts bo;
        baseline_opts_default(&bo);
        bo.chunks = ALLPAIRS_BODIES[i];
        bo.switch_ops = 1;
        bo.target = pl->o.target;
        tc_err e;
        prog *p = baseline_build("allpairs", pl->t, pl->o.coll, &bo, &e);
        if (!p)
            return;     /* several nodes, or a pair with no link: none applies */
        cand *c = add_cand(pl);
        c->p = p;
        c->owns = 1;
        snprintf(c->proto, sizeof c->proto, "%s", p->proto);
        int at[MPP_ALLPAIRS_AT];
        snprintf(c->label, sizeof c->label, "allpairs %d pieces",
                 mpp_allpairs_pieces(ALLPAIRS_BODIES[i], at));
        snprintf(c->source, sizeof c->source, "taccl-synth --algo allpairs %s --collective %s "
                 "--chunks %d --target mscclpp", PLAN_TOPO, coll_name(pl->o.coll),
                 ALLPAIRS_BODIES[i]);
    }
}

/* The anchors inside the range: 1K, 64K, 1M, 16M, 1G (and lo if none). */
static int anchors(const plan *pl, long long *out)
{
    static const long long A[] = {KIB, 64 * KIB, 1 << 20, 16 << 20, 1 << 30};
    int n = 0;
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++)
        if (A[i] >= pl->o.lo && A[i] <= pl->o.hi)
            out[n++] = A[i];
    if (n == 0)
        out[n++] = pl->o.lo;
    return n;
}

/* Candidates for synthesized program p (the plan owns it now): p under
 * each protocol, since the anchor's best need not be the best at every
 * size it may serve.  inst: its instances (" xK" in the label, --instances
 * K in the command, when above 1). */
static void add_protocols(plan *pl, prog *p, const char *stem, const char *path,
                          const char *anchor, long long at, int inst, double limit_s,
                          const char *how)
{
    char tag[16] = "", extra[64] = "";
    if (inst > 1) {
        snprintf(tag, sizeof tag, " x%d", inst);
        snprintf(extra, sizeof extra, " --instances %d", inst);
    }
    snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s", how);
    int owner = 1;
    for (int pr = 0; pr < COST_NPROTO; pr++) {
        if (pl->o.proto && strcmp(pl->o.proto, cost_proto_name((cost_proto)pr)))
            continue;
        cand *c = add_cand(pl);
        c->p = p;
        c->synthesized = 1;
        c->owns = owner;
        owner = 0;
        snprintf(c->proto, sizeof c->proto, "%s", cost_proto_name((cost_proto)pr));
        snprintf(c->label, sizeof c->label, "%s @%s%s %s", stem, anchor, tag, c->proto);
        snprintf(c->source, sizeof c->source, "taccl-synth %s %s --collective %s --size "
                 "%lld --proto %s --time-limit %g%s", path, PLAN_TOPO,
                 coll_name(pl->o.coll), at, c->proto, limit_s, extra);
    }
    if (owner)
        prog_free(p);       /* no protocol asked for (cannot happen with a valid --proto) */
}

static void prepare_and_time(plan *pl, int budgeted);

/* What verifying and timing one candidate costs: the synthesized ones'
 * mean once any was timed, before that the baselines'. */
static double cand_cost_s(const plan *pl)
{
    return pl->nscand ? pl->scand_s : pl->cand_s;
}

static double worst_ratio(plan *pl, int k, int i);

/* Judge in the model variants, as they arrive, the candidates from index
 * `from` on at each size where one beats NCCL's schedule and is the
 * fastest there so far by default (in a mode it runs in), as the time left
 * before the files allows: choose(), which tries the fastest first, then
 * finds them judged, and the reserve keeps room for the few it may still
 * judge.  (Every candidate that beats the best worst case so far, as
 * choose() would, judged 364 candidates x sizes in 45 s of a 60 s DGX H100
 * x2 plan.)  Judging only at the end once left the plan of DGX H100 x16
 * AllReduce (128 GPUs, 600 s) 4 s to judge the candidates of 4 MiB-1 GiB,
 * which NCCL then served though candidates beat it there by default. */
static void judge_new(plan *pl, int from)
{
    if (pl->o.by_default)
        return;
    double t0 = now_s();
    for (int k = from; k < pl->ncands; k++) {
        const cand *c = &pl->cands[k];
        for (int i = 0; i < pl->nsizes && c->modes; i++) {
            if (c->us[i] <= 0 || pl->nccl_us[i] < 0 || (!pl->nccl[i] && !pl->nccl_ref[i]) ||
                c->vdone[i])
                continue;
            int fastest = 0;
            for (int m = 0; m < 2; m++)
                if ((c->modes & (1 << m)) &&
                    (pl->fast_so_far[m][i] <= 0 || c->us[i] < pl->fast_so_far[m][i])) {
                    pl->fast_so_far[m][i] = c->us[i];
                    fastest = 1;
                }
            if (!fastest || pl->nccl_us[i] / c->us[i] <= 1.0 + 1e-9 ||
                judge_cost_s(pl, k, i) > pl->deadline - files_s(pl) - now_s())
                continue;
            worst_ratio(pl, k, i);
            pl->judged++;
        }
    }
    pl->judge_s += now_s() - t0;
}

/* Synthesize sketch s (named `stem`, from `path` for the command line) at
 * the anchors in the range that `want` admits (bit 0: up to 64 KiB, bit 1:
 * from 1 MiB; bit 2: the packed trees alone, `--route trees`, from 16 MiB,
 * judged between trees and trees-lanes in the runtimes' tile passes on a
 * GPU topology, as sketch mode judges them): each one only if its estimate
 * fits in the time left before the deadline and the reserve (the budget is
 * a promise: a synthesis that would not fit is not started, and plan.json's
 * "skipped" names it). */
static int add_sketch(plan *pl, sketch *s, const char *stem, const char *path, int want,
                      double deadline, tc_err *err)
{
    long long at[8];
    int na = anchors(pl, at);
    double seen_s = -1;     /* this sketch's longest synthesis, -1 none yet */
    for (int i = 0; i < na; i++) {
        int small = at[i] <= 64 * KIB, large = at[i] >= (1 << 20), trees = want & 4;
        if (trees ? at[i] < (16 << 20)
                  : !((small && (want & 1)) || (large && (want & 2)) || (!small && !large)))
            continue;
        char a[32];
        fname_size(at[i], a);
        double stage_s = pl->o.stage_time_s > 0 ? pl->o.stage_time_s : 20;
        /* its estimate: this sketch's longest synthesis so far (the sizes
         * change the chunks' bytes, not the MILPs), for its first the
         * plan's longest so far, for the plan's first SYNTH_FIRST_*; and
         * the verifying and timing of what it adds (as many candidates as
         * the last synthesis added; before the first, three protocols,
         * twice at large sizes, and each an in-place copy) */
        int nadd = pl->synth_ncands ? pl->synth_ncands : 3 * (large ? 2 : 1) * 2;
        double est = (seen_s >= 0                ? seen_s
                      : trees                    ? TREES_FIRST_S
                      : pl->synth_longest_s >= 0 ? pl->synth_longest_s
                                                 : SYNTH_FIRST_STAGES * stage_s +
                                                       SYNTH_FIRST_FIXED_S) +
                     nadd * cand_cost_s(pl);
        double left = deadline - reserve_s(pl) - now_s();
        /* a MILP sketch's stages get at most what the time left allows a
         * synthesis that runs to its limits (SYNTH_FIRST_*), and return the
         * best schedule found by then; under STAGE_MIN_S it is not tried.
         * (NDv2 x4 ReduceScatter at 1 GiB in a 60 s budget: the relay
         * sketch, whose synthesis takes 0.2 s, was estimated at 64 s with
         * 20 s stages and never tried; and a sketch estimated by a fast one
         * before it ran its 20 s stages past a 15 s budget.) */
        double rest_s = SYNTH_FIRST_FIXED_S + nadd * cand_cost_s(pl);
        double fit_s = (left - rest_s) / SYNTH_FIRST_STAGES;
        int shortened = 0;
        if (!trees && fit_s < stage_s) {
            shortened = 1;
            stage_s = fmax(fit_s, STAGE_MIN_S);
            double worst = SYNTH_FIRST_STAGES * stage_s + rest_s;
            est = fit_s < STAGE_MIN_S ? worst : fmin(est, worst);
        }
        if (est > left) {
            char w[112];
            snprintf(w, sizeof w, "sketch %s at %s", stem, a);
            skipped(pl, w, est, left);
            if (!pl->o.quiet)
                fprintf(stderr, "taccl-synth: plan: not synthesizing %s at %s: its estimate "
                        "%.0f s is more than the %.0f s of the time budget left\n", stem, a, est,
                        left > 0 ? left : 0);
            continue;
        }
        synth_opts so;
        synth_opts_init(&so);
        so.has_coll = 1;
        so.coll = pl->o.coll;
        so.size_bytes = at[i];
        so.route_time_s = so.contig_time_s = stage_s;
        so.runtime = pl->o.target;
        so.backend = s->backend == SK_SOLVER_CBC ? LP_CBC : LP_GLPK;
        so.quiet = 1;
        /* large sizes: the same algorithm on two channel sets too, where a
         * receive-and-reduce on one overlaps the next transfer on the other */
        so.also_instances = large ? 2 : 0;
        so.tiles = pl->tiles;
        if (trees) {
            so.route = SYNTH_ROUTE_TREES;
        }
        prog *p = NULL;
        synth_stats st;
        tc_err e;
        tc_err_clear(&e);
        if (!pl->o.quiet)
            fprintf(stderr, "taccl-synth: plan: synthesizing %s at %s (%.0f s of the time "
                    "budget left, %.0f s estimated%s)\n", stem, a, left, est,
                    shortened ? ", its MILP stages shortened to fit" : "");
        double ts = now_s();
        int rc = synth_run(s, pl->t, &so, &p, &st, &e);
        seen_s = fmax(seen_s, now_s() - ts);
        if (!trees)     /* the MILP sketches' estimate: not the trees' seconds */
            pl->synth_longest_s = fmax(pl->synth_longest_s, seen_s);
        if (rc == TC_STOP || lp_stop_requested()) {
            prog_free(p);
            return tc_err_set(err, TC_STOP, "interrupted");
        }
        if (rc != TC_OK) {
            if (!pl->o.quiet)
                fprintf(stderr, "taccl-synth: plan: %s at %s: %s\n", stem, a, e.msg);
            continue;
        }
        int first = pl->ncands;
        const char *how = trees ? " --route trees" : "";
        add_protocols(pl, p, stem, path, a, at[i], 1, so.route_time_s, how);
        if (st.also)
            add_protocols(pl, st.also, stem, path, a, at[i], so.also_instances, so.route_time_s,
                          how);
        /* verified and timed now, before the next synthesis is decided:
         * what they cost, and the judging they will need where they beat
         * NCCL's schedule, are then part of the estimates */
        prepare_and_time(pl, 1);
        pl->synth_ncands = pl->ncands - first;
        judge_new(pl, first);
    }
    return TC_OK;
}

/* 1 if name is taken by a given sketch already kept, or a proposal name
 * could be (the proposals are made after the given sketches). */
static int sketch_name_taken(const plan *pl, const char *name)
{
    for (int i = 0; i < pl->ngiven; i++)
        if (!strcmp(pl->given[i].name, name))
            return 1;
    return 0;
}

static int add_sketch_file(plan *pl, const char *path, double deadline, tc_err *err)
{
    static const jsonin_doc doc = {"sketch", SKETCH_MAX_BYTES, 0};
    char *text = jsonin_read_file(path, &doc, err);
    if (!text)
        return TC_INPUT;
    sketch *s = sketch_parse(text, path, err);
    if (!s || sketch_check(s, pl->t, err) != TC_OK) {
        sketch_free(s);
        free(text);
        return TC_INPUT;
    }
    /* its name in the plan: the file's base name, safe, distinct from the
     * others given (two "sk.json" of different folders) */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char stem[96], name[96];
    file_safe_name(stem, 80, base);
    char *dot = strrchr(stem, '.');
    if (dot && dot > stem && !strcmp(dot, ".json"))
        *dot = '\0';
    snprintf(name, sizeof name, "%s", stem);
    for (int k = 2; sketch_name_taken(pl, name); k++)
        snprintf(name, sizeof name, "%.80s-%d", stem, k);
    proposal *g = &pl->given[pl->ngiven++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->json = text;
    char rel[128];
    snprintf(rel, sizeof rel, "sketches/%s.json", name);
    int rc = add_sketch(pl, s, name, rel, 3, deadline, err);
    sketch_free(s);
    return rc;
}

/* Propose sketches from the topology and synthesize each at the anchors
 * it is for, after the given sketches (so they get the budget first). */
static int add_proposals(plan *pl, double deadline, tc_err *err)
{
    long long at[8];
    int na = anchors(pl, at);
    pl->nprops = propose_sketches(pl->t, at[na - 1] >= (16 << 20) &&
                                  pl->o.coll != COLL_ALLTOALL, pl->props);
    if (!pl->o.quiet)
        fprintf(stderr, "taccl-synth: plan: %d sketch%s proposed from the topology%s "
                "(written to sketches/ in the plan)\n", pl->nprops, pl->nprops == 1 ? "" : "es",
                pl->o.nsketches ? ", after the given ones" : "");
    for (int i = 0; i < pl->nprops; i++) {
        /* a given sketch of the same name keeps it: the file names differ */
        if (sketch_name_taken(pl, pl->props[i].name)) {
            char n[96];
            snprintf(n, sizeof n, "%.80s-proposed", pl->props[i].name);
            snprintf(pl->props[i].name, sizeof pl->props[i].name, "%s", n);
        }
        tc_err e;
        sketch *s = sketch_parse(pl->props[i].json, pl->props[i].name, &e);
        if (!s)
            continue;
        char path[160];
        snprintf(path, sizeof path, "sketches/%s.json", pl->props[i].name);
        int rc = add_sketch(pl, s, pl->props[i].name, path,
                            (pl->props[i].small ? 1 : 0) | (pl->props[i].large ? 2 : 0) |
                                (pl->props[i].trees ? 4 : 0),
                            deadline, err);
        sketch_free(s);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

/* What writing NCCL's file for size i costs: the program rendered (not
 * written) as write_all_files will write it, once per distinct pick (the
 * sizes with one pick differ only in their size attribute); the seconds
 * at every size of that pick go into the reserve (nccl_write_s). */
static double nccl_render_s(plan *pl, int i, double *seen_s)
{
    for (int j = 0; j < i; j++)
        if (pl->nccl[j] && !strcmp(pl->nccl_pick[j], pl->nccl_pick[i]))
            return seen_s[j];
    prog *p = pl->nccl[i];
    topo *keep = p->topo;
    if (!keep)
        p->topo = (topo *)pl->t;
    double t0 = now_s();
    tc_err e;
    char *text;
    if (p->nvls_channels > 0) {
        mpp_opts mo;
        mpp_opts_of(p, &mo);
        text = mpp_to_json(p, &mo, &e);
    } else {
        xml_write_opts wo = {.runtime = pl->o.target, .embed_topology = 1};
        text = prog_to_xml(p, &wo, &e);
    }
    free(text);
    p->topo = keep;
    return now_s() - t0;
}

static void nccl_variants(plan *pl, int i);
static double time_variant(const plan *pl, const prog *p, long long s, int v, double base);

/* NCCL's schedule at every size, timed.  Where the runtime cannot load it
 * (DGX H100 x128: a ring over 1024 ranks is 1023 steps in a threadblock,
 * the legacy runtime allows 256), NCCL still runs it, natively: it is
 * built beyond the limits, timed (and under the variants) as the
 * yardstick, and freed, not written (at 1024 ranks and 16 channels the
 * XML would be 2 GB a size); plan.json's nccl[] carries its times. */
static void time_nccl(plan *pl)
{
    double seen_s[MAXSIZES] = {0};
    int unbuilt = 0, beyond = 0;
    for (int i = 0; i < pl->nsizes; i++) {
        pl->nccl_us[i] = -1;
        pl->nccl_est[i] = -1;
        baseline_opts bo;
        baseline_opts_default(&bo);
        bo.target = pl->o.target;
        bo.size_bytes = pl->sizes[i];
        bo.switch_ops = pl->o.mscclpp;  /* NCCL's NVLS where it runs it (docs/nvls.md) */
        baseline_stats st;
        tc_err e, e2;
        prog *p = baseline_build_stats("nccl", pl->t, pl->o.coll, &bo, &st, &e);
        int ref = 0;
        if (!p && bo.target != RT_UNLIMITED) {
            bo.target = RT_UNLIMITED;
            p = baseline_build_stats("nccl", pl->t, pl->o.coll, &bo, &st, &e2);
            ref = p != NULL;
        }
        char at[32];
        if (!p) {
            /* the sizes it serves are picked by the default model alone,
             * with no x NCCL: say so once, with why */
            if (!unbuilt++)
                note(pl, "NCCL's schedule could not be built from %s on, so no file there is "
                     "compared with it (picked by the default model alone): %.150s",
                     sz(pl->sizes[i], at), e.msg);
            continue;
        }
        double us, t0 = now_s();
        long long s = serve_size(p, pl->sizes[i]);
        int rc = prog_time(p, pl->t, s, pl->tiles, &us, &e2);
        pl->nccl_cost_s[i] = now_s() - t0;
        if (rc != TC_OK) {
            prog_free(p);
            continue;
        }
        pl->nccl[i] = p;
        pl->nccl_us[i] = us;
        snprintf(pl->nccl_pick[i], sizeof pl->nccl_pick[i], "%s %s, %d channel%s",
                 st.nccl.algo, st.nccl.proto, st.nccl.channels,
                 st.nccl.channels == 1 ? "" : "s");
        if (st.nccl.would_run[0] && st.nccl.would_run_us > 0) {
            pl->nccl_est[i] = st.nccl.would_run_us;
            snprintf(pl->nccl_would[i], sizeof pl->nccl_would[i], "%s", st.nccl.would_run);
        }
        if (!ref) {
            seen_s[i] = nccl_render_s(pl, i, seen_s);
            pl->nccl_write_s += seen_s[i];
            continue;
        }
        if (!beyond++)
            note(pl, "NCCL's schedule breaks the runtime's limits from %s on (%.130s): timed "
                 "beyond them as the yardstick (NCCL runs it natively), not written; "
                 "nccl[] has its times", sz(pl->sizes[i], at), e.msg);
        double ti = now_s();
        if (!pl->o.by_default) {
            nccl_variants(pl, i);
        } else {
            /* no variants judge this plan, but taccl-run DIR times its
             * files in both timings (the default and --steps/--tiles) */
            pl->nccl_vdone[i] = 1;
            for (int v = 0; v < VAR_COUNT; v++)
                pl->nccl_v[i][v] = v == VAR_DEFAULT ||
                                           (v == VAR_PASSES && pl->rt_tiles)
                                       ? time_variant(pl, p, s, v, us) : -1;
            pl->nccl_v[i][VAR_NCCL_EST] = pl->nccl_est[i];
        }
        pl->nccl_vcost_s[i] = now_s() - ti;
        pl->nccl_ref[i] = 1;
        pl->nccl[i] = NULL;
        prog_free(p);
    }
}

/* Synthesized schedules are written out of place; one that does not run
 * in place as it is (an AllGather copies each rank's own chunk into its
 * output: in place a copy onto itself, racing the sends that read it) gets
 * its in-place copy as msccl-tools writes one (prog_inplace_copy), one
 * candidate per protocol candidate of the original, appended (the caller's
 * loop verifies and times them in turn). */
static void add_inplace_copies(plan *pl, int k)
{
    prog *orig = pl->cands[k].p;
    prog *q = prog_inplace_copy(orig);
    if (!q)
        return;
    int n = pl->ncands, owner = 1;
    for (int j = k; j < n; j++) {
        if (pl->cands[j].p != orig)
            continue;
        cand *c = add_cand(pl);
        const cand *o = &pl->cands[j];
        c->p = q;
        c->owns = owner;
        owner = 0;
        snprintf(c->proto, sizeof c->proto, "%s", o->proto);
        snprintf(c->label, sizeof c->label, "%.170s in place", o->label);
        snprintf(c->source, sizeof c->source, "%.300s --inplace", o->source);
    }
    if (owner)
        prog_free(q);
}

/* ------------------------------------------------------------- choosing */

/* The ranges of sizes with one winner per mode (a file each, or NCCL). */
static void make_ranges(plan *pl)
{
    pl->nranges = 0;
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < pl->nsizes;) {
            int j = i;
            while (j + 1 < pl->nsizes && pl->win[m][j + 1] == pl->win[m][i])
                j++;
            pl->ranges = xgrow(pl->ranges, &pl->capr, pl->nranges + 1, sizeof *pl->ranges);
            pl->ranges[pl->nranges++] = (range){m, i, j, pl->win[m][i]};
            i = j + 1;
        }
}

/* What candidate k saves over NCCL on sizes first..last: the µs it saves
 * at each size times the calls at that size (plan.weight), summed; at a
 * size where NCCL's time is unknown (its schedule could not be timed) the
 * file's own time counts as saved, as nothing shows NCCL would serve it. */
static double saved_us(const plan *pl, int k, int first, int last)
{
    double v = 0;
    for (int i = first; i <= last; i++)
        if (pl->cands[k].us[i] < 0)
            continue;
        else if (pl->nccl_us[i] > 0)
            v += pl->weight[i] * (pl->nccl_us[i] - pl->cands[k].us[i]);
        else
            v += pl->weight[i] * pl->cands[k].us[i];
    return v;
}

static double range_value(const plan *pl, const range *g)
{
    return saved_us(pl, g->cand, g->first, g->last);
}

/* 1 where candidate k may serve size i in mode m: the size's winner, or a
 * candidate judged there that beats NCCL's schedule too (variant_beats). */
static int may_serve(const plan *pl, int k, int m, int i)
{
    const cand *c = &pl->cands[k];
    if (pl->win[m][i] == k)
        return 1;
    return (c->modes & (1 << m)) && c->us[i] > 0 && c->vdone[i] && pl->nccl_us[i] > 0 &&
           variant_beats(pl->nccl_us[i] / c->us[i], c->worst[i]);
}

/* The files of one mode under a limit: best[f], the most a set of f runs
 * of sizes saves (each run served by one candidate that may serve every
 * size of it, the sizes outside a run NCCL's), and in pick[f][i] the
 * candidate serving size i in that set (-1: NCCL).  A run per file, by
 * dynamic programming over the sizes: at <= 48 sizes and the limit's few
 * files, a few candidates x sizes^2 x files. */
static void best_runs(const plan *pl, int m, int most, double *best, int (*pick)[MAXSIZES])
{
    int n = pl->nsizes, F = most < n ? most : n;    /* more runs than sizes: none */
    /* v[i][f]: the most sizes [0, i) save in f runs; how: the run ending
     * there (its first size and candidate, -1 none: size i-1 is NCCL's) */
    double (*v)[MAXSIZES + 1] = xcalloc((size_t)(n + 1), sizeof *v);
    int (*from)[MAXSIZES + 1] = xcalloc((size_t)(n + 1), sizeof *from);
    int (*by)[MAXSIZES + 1] = xcalloc((size_t)(n + 1), sizeof *by);
    for (int i = 0; i <= n; i++)
        for (int f = 0; f <= F; f++)
            v[i][f] = i == 0 && f == 0 ? 0 : -INFINITY;
    for (int i = 0; i < n; i++)
        for (int f = 0; f <= F; f++) {
            if (v[i][f] == -INFINITY)
                continue;
            if (v[i][f] > v[i + 1][f]) {     /* size i to NCCL */
                v[i + 1][f] = v[i][f];
                from[i + 1][f] = i;
                by[i + 1][f] = -1;
            }
            if (f == F)
                continue;
            for (int k = 0; k < pl->ncands; k++)
                for (int j = i; j < n && may_serve(pl, k, m, j); j++) {
                    double x = v[i][f] + saved_us(pl, k, i, j);
                    if (x > v[j + 1][f + 1]) {
                        v[j + 1][f + 1] = x;
                        from[j + 1][f + 1] = i;
                        by[j + 1][f + 1] = k;
                    }
                }
        }
    for (int f = 0; f <= most; f++) {
        /* the best with at most f runs */
        int g = 0;
        for (int h = 0; h <= f && h <= F; h++)
            if (v[n][h] > v[n][g])
                g = h;
        best[f] = v[n][g];
        for (int i = 0; i < n; i++)
            pick[f][i] = -1;
        for (int i = n, h = g; i > 0 && best[f] > -INFINITY;) {
            int a = from[i][h], k = by[i][h];
            for (int q = a; q < i; q++)
                pick[f][q] = k;
            h -= k >= 0;
            i = a;
        }
    }
    free(v);
    free(from);
    free(by);
}

/* The legacy runtime loads at most its max_files of MSCCL_XML_FILES
 * (exec/pick.h) and ignores the rest: keep the set of files that saves the
 * most over both modes, a run of sizes each, served by a candidate that
 * beats NCCL's schedule (variant_beats) at each of its sizes (not only the runs
 * each size's winner makes: on DGX A100 x2 ReduceScatter the winners
 * split 128 MiB..1 GiB in two, and dropping the smallest of three files
 * gave away 8 KiB..2 MiB where one file for the two halves saved more);
 * NCCL serves the rest, and says so. */
static void cap_files(plan *pl)
{
    const runtime_info *ri = runtime_get(pl->sel);
    int files = 0, most = ri->max_files;
    for (int r = 0; r < pl->nranges; r++)
        files += pl->ranges[r].cand >= 0;
    /* MSCCL++ takes any number of plans added to its algorithm collection
     * (docs/mscclpp.md section 10): the legacy runtime's limit is not its */
    if (most == 0 || files <= most || pl->o.mscclpp)
        return;
    double (*best)[2] = xcalloc((size_t)most + 1, sizeof *best);
    int (*pick[2])[MAXSIZES];
    double *b = xcalloc((size_t)most + 1, sizeof *b);
    for (int m = 0; m < 2; m++) {
        pick[m] = xcalloc((size_t)most + 1, sizeof *pick[m]);
        best_runs(pl, m, most, b, pick[m]);
        for (int f = 0; f <= most; f++)
            best[f][m] = b[f];
    }
    free(b);
    int f0 = 0;     /* out of place's share of the files */
    for (int f = 1; f <= most; f++)
        if (best[f][0] + best[most - f][1] > best[f0][0] + best[most - f0][1])
            f0 = f;
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < pl->nsizes; i++) {
            int k = pick[m][m ? most - f0 : f0][i], w = pl->win[m][i];
            pl->win[m][i] = k >= 0 ? k : w >= 0 ? W_DROPPED(w) : w;
        }
    free(pick[0]);
    free(pick[1]);
    free(best);
    make_ranges(pl);
    pl->kept_least = INFINITY;
    pl->kept_total = 0;
    for (int r = 0; r < pl->nranges; r++)
        if (pl->ranges[r].cand >= 0) {
            pl->kept_least = fmin(pl->kept_least, range_value(pl, &pl->ranges[r]));
            pl->kept_total += range_value(pl, &pl->ranges[r]);
        }
    char n[32], who[96];
    snprintf(n, sizeof n, "%d", most);
    snprintf(who, sizeof who, "%s loads at most %s", ri->label, n);
    note(pl, "%s files: the %s that together save the most us over NCCL summed over the "
         "calls (profile) are kept, each serving a run of sizes where its schedule wins in "
         "every model variant; NCCL serves the rest", who, n);
    make_ranges(pl);
}

/* The calls per size: a profile's calls fall to the plan size at or below
 * them (the range whose file serves them); without one, each size once. */
static void weigh(plan *pl)
{
    for (int i = 0; i < pl->nsizes; i++)
        pl->weight[i] = pl->o.profile ? 0 : 1;
    for (int c = 0; c < pl->prof.n; c++) {
        long long b = pl->prof.calls[c].bytes;
        int at = -1;
        for (int i = 0; i < pl->nsizes; i++)
            if (b >= (i == 0 ? pl->o.lo : pl->sizes[i]) && b <= pl->o.hi)
                at = i;
        if (at >= 0)
            pl->weight[at] += pl->prof.calls[c].count;
        else
            pl->prof_outside += pl->prof.calls[c].count;
    }
}

/* ------------------------------------------------- the model variants */

/* c's program as c runs it: the protocol variants of one schedule share
 * one program, and the protocol sets its tiles and costs, so every use
 * that times it takes it from here. */
static prog *cand_prog(cand *c)
{
    snprintf(c->p->proto, sizeof c->p->proto, "%s", c->proto);
    return c->p;
}

/* p's time at size s under variant v by the cost model (sched/ptime), the
 * runtimes' passes where v has them, plus v's cost per call; < 0 if it
 * cannot be timed.  base: the time already taken with the plan's own
 * timing (pl->tiles), reused where v is that timing. */
static double time_variant(const plan *pl, const prog *p, long long s, int v, double base)
{
    /* default and the other variants as the target runtime runs a file;
     * VAR_PASSES the other timing (shown, not judged; none for MSCCL++) */
    int tiles = v == VAR_PASSES ? !pl->rt_tiles : pl->rt_tiles;
    if ((v == VAR_DEFAULT || v == VAR_PASSES) &&
        (tiles == pl->tiles || prog_mpp_only(p) || !tile_needed(p, s)))
        return base;    /* a plan written only for MSCCL++ has no tile passes */
    /* ports gives each pair a link of its own and removes the switches: a
     * plan of switch operations moves its data by multimem operations,
     * whose ports the variant leaves as they are (docs/nvls.md section 6) */
    if (v == VAR_PORTS && p->nvls_channels > 0)
        return base;
    if (v == VAR_NCCL_EST)      /* a schedule's time there is its default */
        return base;
    double us;
    tc_err e;
    int ok = prog_time(p, pl->vt[v] ? pl->vt[v] : pl->t, s, tiles, &us, &e) == TC_OK;
    return ok ? us : -1;
}

static void nccl_variants(plan *pl, int i)
{
    if (pl->nccl_vdone[i])
        return;
    pl->nccl_vdone[i] = 1;
    long long s = serve_size(pl->nccl[i], pl->sizes[i]);
    for (int v = 0; v < VAR_COUNT; v++)
        pl->nccl_v[i][v] = !pl->vok[v] ? -1
                         : v == VAR_NCCL_EST ? pl->nccl_est[i]
                         : time_variant(pl, pl->nccl[i], s, v, pl->nccl_us[i]);
}

/* Candidate k's x NCCL at size i under every variant, and the worst; only
 * where NCCL's schedule was timed (pl->nccl[i]). */
static double worst_ratio(plan *pl, int k, int i)
{
    cand *c = &pl->cands[k];
    if (c->vdone[i])
        return c->worst[i];
    c->vdone[i] = 1;
    nccl_variants(pl, i);
    const prog *p = cand_prog(c);
    c->worst[i] = INFINITY;
    for (int v = 0; v < VAR_COUNT; v++) {
        double n = pl->nccl_v[i][v];
        double us = pl->vok[v] && n >= 0 ? time_variant(pl, p, pl->sizes[i], v, c->us[i]) : -1;
        /* a variant NCCL's schedule cannot be timed in gives no ratio; one
         * this candidate cannot be timed in, where NCCL's is, it does not win */
        c->vx[i][v] = n < 0 ? NAN : us > 0 ? n / us : -INFINITY;
        if (!isnan(c->vx[i][v]) && variant_judges((variant_id)v))
            c->worst[i] = fmin(c->worst[i], c->vx[i][v]);
    }
    return c->worst[i];
}

static void variant_topologies(plan *pl)
{
    for (int v = 0; v < VAR_COUNT; v++) {
        tc_err e;
        /* an MSCCL++ plan has no tile passes to time it in */
        pl->vok[v] = variant_applies(pl->t, (variant_id)v) &&
                     !(v == VAR_PASSES && pl->o.mscclpp) &&
                     variant_topo(pl->t, (variant_id)v, &pl->vt[v], &e) == TC_OK;
    }
}

/* Per mode and size: the candidate whose worst x NCCL over the model
 * variants is best, if it is faster by default and no slower in any
 * variant (variant_beats: within VARIANT_TIE is a tie); else NCCL (ties by
 * default go to NCCL: no file is the simpler plan).  Candidates are
 * tried in the default model's order, fastest first, and the search stops
 * at the first whose default ratio cannot beat the best worst case found (a
 * worst case is at most the default's), so variants are timed only for the
 * few candidates that could win.  Where NCCL's schedule could not be timed,
 * the fastest by the default model. */
static void choose(plan *pl)
{
    if (pl->o.by_default) {
        note(pl, "picked by the default model alone (%s): a file's x NCCL is that model's "
             "claim only%s", "--by-default", "");
    } else {
        char names[160] = "";
        for (int v = 0; v < VAR_COUNT; v++)
            if (pl->vok[v] && variant_judges((variant_id)v))
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         names[0] ? ", " : "", variant_get((variant_id)v)->name);
        note(pl, "picked at each size by the worst x NCCL over the model variants (%s; "
             "docs/design.md section 4): NCCL%s unless a candidate is faster by default and "
             "no slower in any (0.01 %% a tie)",
             names, "");
    }
    int *order = xcalloc((size_t)pl->ncands + 1, sizeof *order);
    /* size by size, both modes at each: where the time budget ends the
     * judging, the sizes judged so far are judged in both modes (an
     * in-place copy is a candidate of its own, judged apart) */
    for (int i = 0; i < pl->nsizes; i++)
        for (int m = 0; m < 2; m++) {
            int n = 0;
            for (int k = 0; k < pl->ncands; k++) {
                const cand *c = &pl->cands[k];
                if (!(c->modes & (1 << m)) || c->us[i] < 0)
                    continue;
                /* insertion by time, then index: deterministic */
                int j = n++;
                while (j > 0 && pl->cands[order[j - 1]].us[i] > c->us[i])
                    order[j] = order[j - 1], j--;
                order[j] = k;
            }
            pl->fastest[m][i] = n ? order[0] : -1;
            if (n == 0) {
                int bounded = 0;
                for (int k = 0; k < pl->ncands; k++)
                    bounded |= (pl->cands[k].modes & (1 << m)) && pl->cands[k].bounded[i];
                pl->win[m][i] = bounded ? W_NCCL_FASTEST : W_NONE;
                continue;
            }
            if (pl->nccl_us[i] < 0 || (!pl->nccl[i] && !pl->nccl_ref[i]) ||
                (pl->o.by_default && pl->nccl_us[i] > pl->cands[order[0]].us[i])) {
                pl->win[m][i] = order[0];
                continue;
            }
            if (pl->nccl_us[i] <= pl->cands[order[0]].us[i]) {
                pl->win[m][i] = W_NCCL_FASTEST;
                continue;
            }
            /* a default ratio within rounding of 1 is a tie (one schedule
             * timed twice, as NCCL's ring can be ours), and ties go to
             * NCCL; in the other variants a tie is within VARIANT_TIE
             * (variant_beats).  bw: the best worst case so far, to beat */
            int best = W_NCCL_VARIANT;
            double bw = 1.0 - VARIANT_TIE;
            for (int j = 0; j < n; j++) {
                int k = order[j];
                double x = pl->nccl_us[i] / pl->cands[k].us[i];
                if (x <= 1.0 + 1e-9 || x <= bw)
                    break;
                /* the budget is a promise: a judging that its estimate
                 * says would end past the deadline (less writing the
                 * files) is not started; the best found so far is kept,
                 * and NCCL serves the size if none was found (W_BUDGET).
                 * A candidate judged already (in the other mode) costs
                 * nothing. */
                double est = judge_cost_s(pl, k, i), left = pl->deadline - files_s(pl) - now_s();
                if (!pl->cands[k].vdone[i] && est > left) {
                    int rest = 0;
                    for (int q = j; q < n; q++)
                        rest += pl->nccl_us[i] / pl->cands[order[q]].us[i] > fmax(bw, 1.0 + 1e-9);
                    char w[112], a[32];
                    snprintf(w, sizeof w, "judging at %s %s: %d candidate%s faster by default",
                             sz(pl->sizes[i], a), m ? "in place" : "out of place", rest,
                             rest == 1 ? "" : "s");
                    skipped(pl, w, est, left);
                    if (best == W_NCCL_VARIANT)
                        best = W_BUDGET;
                    break;
                }
                pl->judged += !pl->cands[k].vdone[i];
                double w = worst_ratio(pl, k, i);
                if (w > bw && variant_beats(x, w)) {
                    bw = w;
                    best = k;
                }
            }
            pl->win[m][i] = best;
        }
    free(order);
    make_ranges(pl);
    cap_files(pl);
}

/* Verify the candidates not prepared yet (in place too: copies are added
 * at the end for a synthesized one that only runs out of place, and
 * prepared in turn) and time each at every size.  budgeted: a candidate
 * the time left (beyond the reserve) has no room to time is left out,
 * named; the baselines are not (they are what NCCL is compared with). */
static void prepare_and_time(plan *pl, int budgeted)
{
    for (int k = pl->nprepared; k < pl->ncands; k = ++pl->nprepared) {
        cand *c = &pl->cands[k];
        cand_prog(c);   /* verified and timed below as it runs */
        double left = pl->deadline - reserve_s(pl) - now_s(), tc = now_s();
        if (budgeted && cand_cost_s(pl) > left) {
            char w[112];
            snprintf(w, sizeof w, "candidate %.100s", c->label);
            skipped(pl, w, cand_cost_s(pl), left);
            c->modes = 0;
        } else {
            double tv = now_s();
            int ld = loads(pl, c->p);
            c->modes = ld ? verified_modes(c->p, pl->t) : 0;
            pl->verify_s += now_s() - tv;
            if (ld && !prog_mpp_only(c->p))         /* a run in each mode */
                pl->verify_steps += 2 * prog_steps_total(c->p);
            pl->nverified++;
            long long n = c->modes && c->owns && !prog_mpp_only(c->p) ? prog_steps_total(c->p) : 0;
            if (n > pl->most_steps)
                pl->most_steps = n;
            if (c->owns && c->synthesized && !(c->modes & 2))
                add_inplace_copies(pl, k);
        }
        c = &pl->cands[k];
        if (c->modes)
            time_all(pl, c);
        else
            for (int i = 0; i < pl->nsizes; i++)
                c->us[i] = -1;
        if (c->modes && budgeted) {
            pl->scand_s = (pl->scand_s * pl->nscand + (now_s() - tc)) / (pl->nscand + 1);
            pl->nscand++;
        }
    }
}

/* What verifying a file with data can cost (verify_cap_s): the first
 * baseline that verified, run with data at the largest size whose buffers
 * over the ranks (out of place) fit VERIFY_DATA_MAX, as verify_size may
 * pick for a file of large sizes.  (Estimated from the candidates'
 * verifications at small sizes, a DGX H100 x2 plan kept 0.3 s for files
 * that took 1.7 s.) */
static void measure_verify_cap(plan *pl)
{
    for (int k = 0; k < pl->ncands; k++) {
        const cand *c = &pl->cands[k];
        if (!(c->modes & 1) || prog_mpp_only(c->p) || c->p->nchunksperloop <= 0)
            continue;
        long long s = serve_size(c->p, pl->sizes[pl->nsizes - 1]), unit = size_unit(c->p);
        while (s > unit && data_bytes_needed(c->p, 0, s / c->p->nchunksperloop) >
                               (double)VERIFY_DATA_MAX)
            s = serve_size(c->p, s / 2);
        double t0 = now_s();
        verifies(cand_prog((cand *)c), pl->t, 0, s);
        pl->verify_cap_s = now_s() - t0;
        pl->verify_cap_steps = prog_steps_total(c->p);
        return;
    }
}

/* ------------------------------------------------------------- the plan */

int plan_make(const topo *t, const plan_opts *o, plan **out, tc_err *err)
{
    *out = NULL;
    if (o->lo <= 0 || o->hi < o->lo)
        return tc_err_set(err, TC_INPUT, "--sizes: expected LO:HI with 0 < LO <= HI");
    plan *pl = xcalloc(1, sizeof *pl);
    pl->t = t;
    pl->o = *o;
    /* in the runtimes' passes, the default timing, unless --steps: a plan
     * picks for the runtime that will run its files.  (In one pass, with
     * the passes only judged as a variant, a butterfly AllGather under LL
     * on DGX H100 x16 at 1 MiB took 42 us and won, and deadlocked in the
     * passes; and NDv2 x4's packed trees, 1.15x NCCL in the passes at 1
     * GiB, lost to it in one pass, which no MSCCL runtime performs.)  An
     * MSCCL++ plan has no passes: its candidates are timed once, as
     * taccl-run times the plan, and judged so. */
    pl->rt_tiles = t->kind == TOPO_GPU && !o->mscclpp && VARIANT_DEFAULT_TILES;
    pl->tiles = o->tiles < 0 ? pl->rt_tiles : o->tiles > 0 && t->kind == TOPO_GPU;
    pl->sel = runtime_get(o->target)->selects_as;
    pl->executor = !runtime_get(pl->sel)->inplace_only;
    pl->given = xcalloc((size_t)o->nsketches + 1, sizeof *pl->given);
    pl->kept_least = -1;
    pl->synth_longest_s = -1;
    if (o->profile && profile_load(o->profile, o->coll, &pl->prof, err) != TC_OK) {
        tc_err_prefix(err, "--profile");
        plan_free(pl);
        return TC_INPUT;
    }
    for (long long s = o->lo; s <= o->hi && pl->nsizes < MAXSIZES; s *= 2) {
        pl->sizes[pl->nsizes++] = s;
        if (s > o->hi / 2)
            break;
    }
    double t0 = now_s(), budget = o->budget_s > 0 ? o->budget_s : 600;
    pl->deadline = t0 + budget;
    pl->slack_s = fmax(1.0, BUDGET_SLACK * budget);
    add_baselines(pl);
    add_switch_candidates(pl);
    add_allpairs_candidates(pl);
    /* NCCL's schedule at every size first: it depends on nothing the
     * candidates make, a candidate whose lower bound it beats is not timed
     * (time_all), and the budget then knows what it cost; and under the
     * model variants, which every choice needs where a candidate beats it:
     * what that took per second of its timing is what the budget reserves
     * for judging the candidates */
    if (!o->by_default)
        variant_topologies(pl);     /* time_nccl times a reference in them at once */
    time_nccl(pl);
    /* then the baselines: what one candidate's timing costs is what the
     * estimates below are made of */
    int nbase = pl->ncands;
    double tb = now_s();
    prepare_and_time(pl, 0);
    pl->cand_s = nbase ? (now_s() - tb) / nbase : 0;
    measure_verify_cap(pl);
    double tv = now_s();
    if (!o->by_default) {
        for (int i = 0; i < pl->nsizes; i++)
            if (pl->nccl[i]) {
                double ti = now_s();
                nccl_variants(pl, i);
                pl->nccl_vcost_s[i] = now_s() - ti;
            }
        judge_new(pl, 0);   /* the baselines: their best is what a synthesis must beat */
    }
    if (!o->quiet)
        fprintf(stderr, "taccl-synth: plan: %d baseline candidates (7 algorithms x 3 protocols "
                "where they apply%s) and NCCL's schedule timed at %d sizes in %.1f s (NCCL's "
                "under the model variants: %.1f s)\n", nbase,
                pl->o.mscclpp ? ", and the switch's where it reduces and multicasts" : "",
                pl->nsizes, now_s() - t0, now_s() - tv);
    if (now_s() - t0 > budget) {
        char took[32], of[32];
        snprintf(took, sizeof took, "%.0f", now_s() - t0);
        snprintf(of, sizeof of, "%.0f", budget);
        note(pl, "time budget: timing the baselines and NCCL's schedule alone took %s s of the %s s", took, of);
    }
    for (int i = 0; i < o->nsketches; i++) {
        int rc = add_sketch_file(pl, o->sketches[i], pl->deadline, err);
        if (rc != TC_OK) {
            plan_free(pl);
            return rc;
        }
    }
    if (o->propose) {
        int rc = add_proposals(pl, pl->deadline, err);
        if (rc != TC_OK) {
            plan_free(pl);
            return rc;
        }
    }
    prepare_and_time(pl, 1);     /* any not timed after its synthesis */
    judge_new(pl, 0);
    if (!o->quiet)
        fprintf(stderr, "taccl-synth: plan: %d candidates timed at %d sizes (%.1f s; %d "
                "candidate%s x sizes left untimed, NCCL's schedule faster than their lower "
                "bound)\n", pl->ncands, pl->nsizes, now_s() - t0, pl->nbounded,
                pl->nbounded == 1 ? "" : "s");
    weigh(pl);
    double tc = now_s();
    choose(pl);
    pl->judge_s += now_s() - tc;
    if (!o->quiet && !o->by_default)
        fprintf(stderr, "taccl-synth: plan: %d candidate%s x sizes judged in the model variants "
                "(%.1f s, %.1f s of it after the syntheses)\n", pl->judged,
                pl->judged == 1 ? "" : "s", pl->judge_s, now_s() - tc);
    *out = pl;
    return TC_OK;
}

void plan_free(plan *pl)
{
    if (!pl)
        return;
    for (int k = 0; k < pl->ncands; k++)
        if (pl->cands[k].owns)
            prog_free(pl->cands[k].p);
    for (int i = 0; i < pl->nsizes; i++)
        prog_free(pl->nccl[i]);
    for (int v = 0; v < VAR_COUNT; v++)
        topo_free(pl->vt[v]);
    proposals_free(pl->props, pl->nprops);
    proposals_free(pl->given, pl->ngiven);
    profile_free(&pl->prof);
    free(pl->given);
    free(pl->cands);
    free(pl->ranges);
    free(pl);
}

/* ------------------------------------------------------------- the files */

/* A file of the plan: a range (and, for the newer executor, its twin in the
 * other mode with the same candidate and sizes, merged into one file). */
typedef struct {
    int r;                  /* range index */
    int both;               /* executor: serves both modes */
    int skip;               /* merged into another */
    char name[160];
} pfile;

static void range_bytes(const plan *pl, const range *g, long long *lo, long long *hi_excl)
{
    *lo = g->first == 0 ? pl->o.lo : pl->sizes[g->first];
    *hi_excl = g->last + 1 < pl->nsizes ? pl->sizes[g->last + 1] : pl->o.hi + 1;
}

/* NCCL's schedule at size index s, as the plan directory names it: MSCCL
 * XML, or an MSCCL++ plan where NCCL runs NVLS (switch operations). */
static void nccl_rel(const plan *pl, int s, char *out, size_t n)
{
    snprintf(out, n, "nccl/nccl-%lld.%s", pl->sizes[s],
             pl->nccl[s]->nvls_channels > 0 ? "json" : "xml");
}

static int plan_files(const plan *pl, pfile *f)
{
    int n = 0;
    for (int r = 0; r < pl->nranges; r++) {
        f[n] = (pfile){r, 0, 0, ""};
        n++;
    }
    if (pl->executor && !pl->o.mscclpp)    /* MSCCL++ selects a plan by one buffer mode */
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                const range *x = &pl->ranges[f[a].r], *y = &pl->ranges[f[b].r];
                if (!f[b].skip && x->cand >= 0 && x->cand == y->cand && x->first == y->first &&
                    x->last == y->last && x->mode != y->mode) {
                    f[a].both = 1;
                    f[b].skip = 1;
                }
            }
    for (int i = 0; i < n; i++) {
        const range *g = &pl->ranges[f[i].r];
        long long lo, hi;
        range_bytes(pl, g, &lo, &hi);
        char a[32], b[32];
        /* the byte range it covers: LO-ltHI, LO <= size < HI; the plan's
         * top range LO-leHI, LO <= size <= HI */
        int top = g->last + 1 == pl->nsizes;
        snprintf(f[i].name, sizeof f[i].name, "%s-%s-%s%s-%s.%s", coll_name(pl->o.coll),
                 fname_size(lo, a), top ? "le" : "lt", fname_size(top ? hi - 1 : hi, b),
                 f[i].both ? "both" : g->mode ? "inplace" : "outofplace",
                 pl->o.mscclpp ? "json" : "xml");
    }
    return n;
}

/* Write p into path with the topology embedded (a baseline carries none);
 * with mo, as an MSCCL++ plan (the topology chooses its channels). */
static int write_prog(prog *p, const topo *t, const char *path, runtime rt,
                      const mpp_opts *mo, tc_err *err)
{
    topo *keep = p->topo;
    if (!keep)
        p->topo = (topo *)t;
    xml_write_opts wo = {.runtime = rt, .embed_topology = 1};
    int rc = mo ? mpp_write(p, path, mo, err) : prog_write_xml(p, path, &wo, err);
    p->topo = keep;
    return rc;
}

/* The MSCCL++ options of file f: its byte range and buffer mode, and its
 * file name without ".json" as the plan's name (MSCCL++ keys its contexts
 * and its selector's table by name, so each file needs its own). */
static void file_mpp_opts(const plan *pl, const pfile *f, const prog *p, mpp_opts *mo)
{
    const range *g = &pl->ranges[f->r];
    mpp_opts_of(p, mo);
    range_bytes(pl, g, &mo->min_bytes, &mo->max_bytes);
    mo->inplace = g->mode == 1;
}

/* The size file f (program p) is verified at with data: the smallest it
 * serves in its range, or below the range where that one's buffers (all
 * ranks, in the file's modes) exceed VERIFY_DATA_MAX, the largest serve
 * size found by halving whose buffers fit. */
static long long verify_size(const plan *pl, const prog *p, const pfile *f)
{
    const range *g = &pl->ranges[f->r];
    long long lo, hi;
    range_bytes(pl, g, &lo, &hi);
    long long s = serve_size(p, lo), unit = size_unit(p);
    for (;;) {
        double need = 0;
        for (int m = 0; m < 2; m++)
            if (f->both || g->mode == m)
                need = fmax(need, data_bytes_needed(p, m, s / p->nchunksperloop));
        if (need <= (double)VERIFY_DATA_MAX || s <= unit)
            return s;
        s = serve_size(p, s / 2);
    }
}

static int verify_file(const plan *pl, const prog *p, const pfile *f, tc_err *err)
{
    const range *g = &pl->ranges[f->r];
    long long s = verify_size(pl, p, f);
    for (int m = 0; m < 2; m++) {
        if (!(f->both || g->mode == m))
            continue;
        if (!verifies(p, pl->t, m, s))
            return tc_err_set(err, TC_WRONG, "plan: %s does not verify %s", f->name,
                              m ? "in place" : "out of place");
    }
    return TC_OK;
}

/* dir/name into out (PATH_MAX); 0, or -1 if it does not fit. */
static int join(char *out, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + b + 2 > PATH_MAX)
        return -1;
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return 0;
}

/* Remove a tree this process made (a temporary plan directory) or proved
 * its own (plan_check_output): never follows a symbolic link. */
static int rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        if (join(path, dir, e->d_name) != 0) {
            rc = -1;
            continue;
        }
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= rm_tree(path);
        else
            rc |= unlink(path);
    }
    closedir(d);
    return rc | rmdir(dir);
}

/* ------------------------------------------------------------ ownership */

/* The names a plan directory holds, relative to it ("nccl/", "nccl/x.xml"),
 * one a line: what the marker lists and what a walk finds. */
typedef struct {
    char *s;
    size_t len, cap;
} namelist;

static void names_add(namelist *l, const char *name)
{
    size_t n = strlen(name);
    if (l->len + n + 2 > l->cap) {
        l->cap = (l->len + n + 2) * 2;
        l->s = xrealloc(l->s, l->cap);
    }
    memcpy(l->s + l->len, name, n);
    l->s[l->len + n] = '\n';
    l->len += n + 1;
    l->s[l->len] = '\0';
}

/* 1 if the line `name` is in the text of a marker (after its first line). */
static int listed(const char *text, const char *name)
{
    size_t n = strlen(name);
    const char *p = strchr(text, '\n');
    while (p) {
        p++;
        if (!strncmp(p, name, n) && (p[n] == '\n' || p[n] == '\0'))
            return 1;
        p = strchr(p, '\n');
    }
    return 0;
}

/* The first entry under root/rel (recursively, links not followed) that
 * the marker's text does not list, into bad; 0 if every one is listed. */
static int unlisted(const char *root, const char *rel, const char *marker, char *bad,
                    size_t badsz)
{
    char dir[PATH_MAX];
    if (*rel ? join(dir, root, rel) != 0 : snprintf(dir, sizeof dir, "%s", root) >= PATH_MAX) {
        snprintf(bad, badsz, "%s", rel);
        return 1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(bad, badsz, "%s", *rel ? rel : ".");
        return 1;
    }
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char name[PATH_MAX], path[PATH_MAX];
        int n = *rel ? snprintf(name, sizeof name, "%s/%s", rel, e->d_name)
                     : snprintf(name, sizeof name, "%s", e->d_name);
        struct stat st;
        if (n < 0 || n >= (int)sizeof name - 1 || join(path, root, name) != 0 ||
            lstat(path, &st) != 0) {
            snprintf(bad, badsz, "%s", e->d_name);
            found = 1;
            break;
        }
        if (!strcmp(name, PLAN_MARKER) && S_ISREG(st.st_mode))
            continue;
        if (S_ISDIR(st.st_mode)) {
            char dname[PATH_MAX + 1];
            snprintf(dname, sizeof dname, "%s/", name);
            dname[PATH_MAX - 1] = '\0';
            if (!listed(marker, dname)) {
                if (snprintf(bad, badsz, "%s", dname) >= (int)badsz)
                    bad[badsz - 1] = '\0';
                found = 1;
            } else {
                found = unlisted(root, name, marker, bad, badsz);
            }
        } else if (!S_ISREG(st.st_mode) || !listed(marker, name)) {
            snprintf(bad, badsz, "%s", name);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

/* dir (as given) without trailing slashes into out; -1 if too long. */
static int trim_dir(char *out, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n >= PATH_MAX - 32)
        return -1;
    memcpy(out, dir, n);
    out[n] = '\0';
    return 0;
}

/* 1 if the file at path lies under directory dir (both resolved). */
static int inside(const char *path, const char *dir_real)
{
    char rp[PATH_MAX];
    if (!path || !realpath(path, rp))
        return 0;
    size_t n = strlen(dir_real);
    return !strncmp(rp, dir_real, n) && (rp[n] == '/' || (n == 1 && dir_real[0] == '/'));
}

int plan_check_output(const char *dir_in, const char *const *inputs, int ninputs, int *exists,
                      tc_err *err)
{
    char dir[PATH_MAX];
    *exists = 0;
    if (trim_dir(dir, dir_in) != 0)
        return tc_err_set(err, TC_INPUT, "-o %s: path too long", dir_in);
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT)
            return TC_OK;
        return tc_err_set(err, TC_INPUT, "-o %s: %s", dir_in, strerror(errno));
    }
    *exists = 1;
    if (S_ISLNK(st.st_mode))
        return tc_err_set(err, TC_INPUT, "-o %s: is a symbolic link; name the directory itself "
                          "(a plan is never written through a link)", dir_in);
    if (!S_ISDIR(st.st_mode))
        return tc_err_set(err, TC_INPUT, "-o %s: exists and is not a directory", dir_in);
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return tc_err_set(err, TC_INPUT, "-o %s: %s", dir_in, strerror(errno));
    for (int i = 0; i < ninputs; i++)
        if (inside(inputs[i], real))
            return tc_err_set(err, TC_INPUT, "-o %s: the input %s is inside it, and a plan "
                              "replaces its directory; choose another directory", dir_in,
                              inputs[i]);
    /* empty: nothing to lose */
    DIR *d = opendir(dir);
    if (!d)
        return tc_err_set(err, TC_INPUT, "-o %s: %s", dir_in, strerror(errno));
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)) != NULL)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    if (empty)
        return TC_OK;
    /* a plan of ours: the marker lists every entry */
    char mpath[PATH_MAX];
    join(mpath, dir, PLAN_MARKER);
    struct stat ms;
    if (lstat(mpath, &ms) != 0 || !S_ISREG(ms.st_mode))
        return tc_err_set(err, TC_INPUT, "-o %s: exists, is not empty and is not a plan "
                          "taccl-synth wrote (no %s); choose another directory", dir_in,
                          PLAN_MARKER);
    static const jsonin_doc mdoc = {"plan marker", 1L << 20, 0};
    tc_err me;
    char *marker = jsonin_read_file(mpath, &mdoc, &me);
    int rc = TC_OK;
    char bad[PATH_MAX];
    if (!marker || strncmp(marker, PLAN_MAGIC "\n", strlen(PLAN_MAGIC) + 1))
        rc = tc_err_set(err, TC_INPUT, "-o %s: %s is not taccl-synth's plan marker; choose "
                        "another directory", dir_in, PLAN_MARKER);
    else if (unlisted(dir, "", marker, bad, sizeof bad))
        rc = tc_err_set(err, TC_INPUT, "-o %s: holds %s, which taccl-synth did not write; a "
                        "plan replaces its whole directory: move it or choose another directory",
                        dir_in, bad);
    free(marker);
    return rc;
}

/* An error about a path inside the temporary directory names the user's
 * directory instead. */
static void untemp(tc_err *err, const char *tmp, const char *dir)
{
    if (!err)
        return;
    char *at = strstr(err->msg, tmp);
    if (!at)
        return;
    char out[sizeof err->msg];
    if (snprintf(out, sizeof out, "%.*s%s%s", (int)(at - err->msg), err->msg, dir,
                 at + strlen(tmp)) >= (int)sizeof out)
        out[sizeof out - 1] = '\0';
    memcpy(err->msg, out, sizeof out);
}

/* Write text as tmp/rel and list rel. */
static int put_file(const char *tmp, const char *rel, const char *text, namelist *names,
                    tc_err *err)
{
    char path[PATH_MAX];
    if (join(path, tmp, rel) != 0)
        return tc_err_set(err, TC_INPUT, "%s: path too long", rel);
    names_add(names, rel);
    return file_write_atomic(path, text, strlen(text), err);
}

static int put_dir(const char *tmp, const char *rel, namelist *names, tc_err *err)
{
    char path[PATH_MAX], listed_as[128];
    if (join(path, tmp, rel) != 0)
        return tc_err_set(err, TC_INPUT, "%s: path too long", rel);
    snprintf(listed_as, sizeof listed_as, "%s/", rel);
    names_add(names, listed_as);
    if (mkdir(path, 0777) != 0)
        return tc_err_set(err, TC_INPUT, "%s: %s", path, strerror(errno));
    return TC_OK;
}

/* A candidate's command as it runs from the plan directory: its inputs
 * are the plan's copies, its output a file named for its label. */
static void add_command(cJSON *o, const cand *c, int mscclpp)
{
    char out[200], cmd[600];
    file_safe_name(out, sizeof out - 5, c->label);
    snprintf(cmd, sizeof cmd, "%s -o %s.%s", c->source, out, mscclpp ? "json" : "xml");
    cJSON_AddStringToObject(o, "command", cmd);
}

/* What MSCCL++'s selector matches a DSL plan on (docs/mscclpp.md §10):
 * collective, world size and ranks per node (the DslAlgorithm's
 * Constraint), buffer mode, and the message size within the plan's range. */
static void add_mscclpp_selection(cJSON *o, const plan *pl, const pfile *f, long long lo,
                                  long long hi)
{
    cJSON *m = cJSON_AddObjectToObject(o, "mscclpp");
    char stem[sizeof f->name];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(f->name) - 5), f->name);
    cJSON_AddStringToObject(m, "name", stem);
    cJSON_AddStringToObject(m, "collective", coll_name(pl->o.coll));
    cJSON_AddNumberToObject(m, "world_size", pl->t->nranks);
    cJSON_AddNumberToObject(m, "n_ranks_per_node", pl->t->ranks_per_node);
    cJSON_AddStringToObject(m, "buffer_mode", pl->ranges[f->r].mode ? "inplace"
                                                                     : "outofplace");
    cJSON_AddNumberToObject(m, "min_message_size", (double)lo);
    cJSON_AddNumberToObject(m, "max_message_size", (double)(hi - 1));
}

/* Why NCCL serves range g (a fallback): a sentence, and its key for JSON. */
static const char *fallback_reason(const plan *pl, const range *g, char *buf, size_t n)
{
    if (g->cand == W_NCCL_FASTEST) {
        snprintf(buf, n, "NCCL's schedule is the fastest: no candidate is predicted faster than "
                 "NCCL's own schedule (--algo nccl) here; no file, the runtime runs NCCL");
        return "nccl_fastest";
    }
    if (g->cand == W_NCCL_VARIANT) {
        snprintf(buf, n, "faster than NCCL's schedule by the default model, but every such "
                 "candidate is slower in some model variant (docs/design.md section 8): the "
                 "runtime runs NCCL");
        return "nccl_in_some_variant";
    }
    if (g->cand == W_BUDGET) {
        snprintf(buf, n, "faster than NCCL's schedule by the default model, but the time budget "
                 "(--time-budget) ended before a candidate was judged in every model variant "
                 "here (plan.json's \"skipped\"): the runtime runs NCCL");
        return "time_budget";
    }
    if (g->cand == W_NONE) {
        snprintf(buf, n, "no candidate verified and could be timed at these sizes (none "
                 "splits them into whole elements per chunk, or within the runtime's limits); "
                 "no file, the runtime runs NCCL");
        return "no_candidate";
    }
    const runtime_info *ri = runtime_get(pl->sel);
    int k = W_DROPPED_CAND(g->cand);
    double v = saved_us(pl, k, g->first, g->last);
    snprintf(buf, n, "dropped: %s loads at most %d files (MSCCL_MAX_NUM_ALGOS); %s was the "
             "fastest here and saves %.1f us over the calls, but the files kept save %.1f us "
             "together, more than any set with it; the runtime runs NCCL", ri->label,
             ri->max_files, pl->cands[k].label, v, pl->kept_total);
    return "file_limit";
}

/* A size row's x NCCL under the model variants for candidate k (the
 * file's, or on an nccl_in_some_variant range the fastest by default):
 * its worst and each variant's (null where none). */
static void add_variants_json(cJSON *row, const plan *pl, int k, int s, int fallback)
{
    if (k < 0 || !pl->cands[k].vdone[s])
        return;
    const cand *c = &pl->cands[k];
    if (fallback)
        cJSON_AddStringToObject(row, "fastest_by_default", c->label);
    cJSON_AddNumberToObject(row, "x_nccl_worst", isfinite(c->worst[s]) ? c->worst[s] : 0);
    cJSON *v = cJSON_AddObjectToObject(row, "x_nccl_variants");
    for (int i = 0; i < VAR_COUNT; i++)
        if (isnan(c->vx[s][i]))
            cJSON_AddNullToObject(v, variant_get((variant_id)i)->name);
        else
            cJSON_AddNumberToObject(v, variant_get((variant_id)i)->name,
                                    isfinite(c->vx[s][i]) ? c->vx[s][i] : 0);
}

static void add_profile_json(cJSON *j, const plan *pl)
{
    cJSON *o = cJSON_AddObjectToObject(j, "profile");
    if (pl->o.profile)
        cJSON_AddStringToObject(o, "file", pl->o.profile);
    else
        cJSON_AddNullToObject(o, "file");
    cJSON_AddStringToObject(o, "weighs", pl->o.profile
        ? "each file by the us it saves over NCCL at each plan size times the profile's calls "
          "of that size or above it, below the next plan size"
        : "each file by the us it saves over NCCL, each plan size (a power of two) called once");
    cJSON_AddNumberToObject(o, "calls", pl->o.profile ? pl->prof.total : pl->nsizes);
    cJSON_AddNumberToObject(o, "calls_outside_sizes", pl->prof_outside);
    cJSON *w = cJSON_AddArrayToObject(o, "calls_per_size");
    for (int i = 0; i < pl->nsizes; i++)
        cJSON_AddItemToArray(w, cJSON_CreateNumber(pl->weight[i]));
}

static cJSON *plan_json(const plan *pl, const pfile *f, int nf)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "collective", coll_name(pl->o.coll));
    cJSON_AddStringToObject(j, "topology", pl->t->name);
    cJSON_AddNumberToObject(j, "ngpus", pl->t->nranks);
    cJSON_AddStringToObject(j, "target", pl->o.mscclpp ? "mscclpp" : runtime_name(pl->o.target));
    /* what predicted_us and nccl_us are: one pass or the runtimes' passes */
    cJSON_AddStringToObject(j, "timing", pl->tiles ? "tiles" : "steps");
    cJSON *sizes = cJSON_AddArrayToObject(j, "sizes");
    cJSON_AddItemToArray(sizes, cJSON_CreateNumber((double)pl->o.lo));
    cJSON_AddItemToArray(sizes, cJSON_CreateNumber((double)pl->o.hi));
    if (pl->o.mscclpp)
        cJSON_AddStringToObject(j, "mscclpp_selector", "MSCCL++ (commit " MPP_COMMIT ") "
            "loads each file as ExecutionPlan(path, rank) and adds it to its "
            "AlgorithmCollectionBuilder as a DslAlgorithm with Constraint{world_size, "
            "n_ranks_per_node}; for a call its selector takes the algorithm whose collective, "
            "world size, ranks per node and buffer mode equal the call's and whose "
            "[min_message_size, max_message_size] holds the message size (output bytes for "
            "allgather, input bytes otherwise); the files' ranges do not overlap within a "
            "mode, so at most one matches, and a size no file holds goes to the fallback "
            "(NCCL). Each file's \"mscclpp\" entry is that match");
    add_profile_json(j, pl);
    cJSON *files = cJSON_AddArrayToObject(j, "files");
    cJSON *fb = cJSON_AddArrayToObject(j, "nccl_fallback");
    for (int i = 0; i < nf; i++) {
        if (f[i].skip)
            continue;
        const range *g = &pl->ranges[f[i].r];
        long long lo, hi;
        range_bytes(pl, g, &lo, &hi);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "mode", f[i].both ? "both" : g->mode ? "inplace"
                                                                        : "outofplace");
        cJSON_AddNumberToObject(o, "min_bytes", (double)lo);
        cJSON_AddNumberToObject(o, "max_bytes_excl", (double)hi);
        cJSON *pred = cJSON_CreateArray();
        for (int s = g->first; s <= g->last; s++) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "size_bytes", (double)pl->sizes[s]);
            if (g->cand >= 0)
                cJSON_AddNumberToObject(row, "predicted_us", pl->cands[g->cand].us[s]);
            if (pl->nccl_us[s] >= 0)
                cJSON_AddNumberToObject(row, "nccl_us", pl->nccl_us[s]);
            else
                cJSON_AddNullToObject(row, "nccl_us");
            add_variants_json(row, pl, g->cand >= 0 ? g->cand
                                       : g->cand == W_NCCL_VARIANT || g->cand == W_BUDGET
                                             ? pl->fastest[g->mode][s]
                                                                   : -1, s, g->cand < 0);
            cJSON_AddItemToArray(pred, row);
        }
        if (g->cand < 0) {
            char why[600];
            cJSON_AddStringToObject(o, "why", fallback_reason(pl, g, why, sizeof why));
            cJSON_AddStringToObject(o, "reason", why);
            if (g->cand <= W_DROPPED(0)) {
                int k = W_DROPPED_CAND(g->cand);
                cJSON_AddStringToObject(o, "dropped", pl->cands[k].label);
                cJSON_AddNumberToObject(o, "saved_us", saved_us(pl, k, g->first, g->last));
                cJSON_AddNumberToObject(o, "kept_least_saved_us", pl->kept_least);
                cJSON_AddNumberToObject(o, "kept_saved_us", pl->kept_total);
            }
            cJSON_AddItemToObject(o, "sizes", pred);
            cJSON_AddItemToArray(fb, o);
            continue;
        }
        cJSON_AddStringToObject(o, "file", f[i].name);
        if (pl->o.mscclpp)
            add_mscclpp_selection(o, pl, &f[i], lo, hi);
        cJSON_AddStringToObject(o, "from", pl->cands[g->cand].label);
        cJSON_AddNumberToObject(o, "saved_us", range_value(pl, g));
        cJSON_AddNumberToObject(o, "nchunksperloop", pl->cands[g->cand].p->nchunksperloop);
        long long vs = verify_size(pl, pl->cands[g->cand].p, &f[i]);
        cJSON *ver = cJSON_AddObjectToObject(o, "verified");
        cJSON_AddNumberToObject(ver, "size_bytes", (double)vs);
        cJSON_AddBoolToObject(ver, "in_range", vs >= lo);
        char how[300];
        if (vs >= lo)
            snprintf(how, sizeof how, "run with data at the smallest size it serves in its "
                     "range; timed without data at every size");
        else
            snprintf(how, sizeof how, "run with data below its range (its buffers at the "
                     "range's sizes exceed %lld MiB over the ranks): the program is the same at "
                     "every size, only the chunks' bytes scale; timed without data at every size "
                     "of its range", VERIFY_DATA_MAX >> 20);
        cJSON_AddStringToObject(ver, "how", how);
        char serves[400];
        const prog *gp = pl->cands[g->cand].p;
        if (prog_mpp_only(gp))
            /* written by a writer of its own: its plan's chunks, not the
             * stand-in's nchunksperloop, say which sizes it takes */
            snprintf(serves, sizeof serves, "calls in [min_bytes, max_bytes_excl) whose byte "
                     "count is a multiple of %lld (whole 16-byte vectors in each chunk of its "
                     "plan); MSCCL++ refuses any other size of this file: pad such a call to "
                     "the next multiple", size_unit(gp));
        else
            snprintf(serves, sizeof serves, "calls in [min_bytes, max_bytes_excl) whose element "
                     "count is a multiple of nchunksperloop (%d); the runtimes have no remainder "
                     "handling and run NCCL for any other size: pad such a call to the next "
                     "multiple (of %d bytes with 4-byte elements)", gp->nchunksperloop,
                     4 * gp->nchunksperloop);
        cJSON_AddStringToObject(o, "serves", serves);
        add_command(o, &pl->cands[g->cand], pl->o.mscclpp);
        cJSON_AddItemToObject(o, "sizes", pred);
        cJSON_AddItemToArray(files, o);
    }
    cJSON *nc = cJSON_AddArrayToObject(j, "nccl");
    for (int s = 0; s < pl->nsizes; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "size_bytes", (double)pl->sizes[s]);
        if (pl->nccl[s]) {
            char name[64];
            nccl_rel(pl, s, name, sizeof name);
            cJSON_AddStringToObject(o, "file", name);
        } else {
            cJSON_AddNullToObject(o, "file");
        }
        if (pl->nccl_us[s] >= 0) {
            cJSON_AddStringToObject(o, "picked", pl->nccl_pick[s]);
            cJSON_AddNumberToObject(o, "predicted_us", pl->nccl_us[s]);
        }
        if (pl->nccl_ref[s])
            cJSON_AddStringToObject(o, "not_written", "breaks the runtime's limits (NCCL runs "
                                    "it natively): timed beyond them as the yardstick");
        if (pl->nccl_est[s] > 0) {
            /* what NCCL runs there, which no output holds: its own
             * estimate is NCCL's time in variant nccl-est */
            cJSON *w = cJSON_AddObjectToObject(o, "would_run");
            cJSON_AddStringToObject(w, "algo", pl->nccl_would[s]);
            cJSON_AddNumberToObject(w, "estimate_us", pl->nccl_est[s]);
        } else {
            cJSON_AddNullToObject(o, "would_run");
        }
        if (pl->nccl_vdone[s]) {
            /* its time under each model variant (null: not timed there),
             * for taccl-run DIR where no file holds it */
            cJSON *v = cJSON_AddObjectToObject(o, "variants_us");
            for (int k = 0; k < VAR_COUNT; k++)
                if (pl->nccl_v[s][k] >= 0)
                    cJSON_AddNumberToObject(v, variant_get((variant_id)k)->name,
                                            pl->nccl_v[s][k]);
                else
                    cJSON_AddNullToObject(v, variant_get((variant_id)k)->name);
        }
        cJSON_AddItemToArray(nc, o);
    }
    cJSON *cs = cJSON_AddArrayToObject(j, "candidates");
    for (int k = 0; k < pl->ncands; k++) {
        const cand *c = &pl->cands[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", c->label);
        add_command(o, c, pl->o.mscclpp);
        cJSON_AddBoolToObject(o, "outofplace", c->modes & 1);
        cJSON_AddBoolToObject(o, "inplace", (c->modes & 2) != 0);
        cJSON *us = cJSON_AddArrayToObject(o, "predicted_us");
        cJSON *bd = cJSON_AddArrayToObject(o, "bounded_sizes");
        for (int i = 0; i < pl->nsizes; i++) {
            cJSON_AddItemToArray(us, c->modes && c->us[i] >= 0 ? cJSON_CreateNumber(c->us[i])
                                                              : cJSON_CreateNull());
            if (c->modes && c->bounded[i])
                cJSON_AddItemToArray(bd, cJSON_CreateNumber((double)pl->sizes[i]));
        }
        cJSON_AddItemToArray(cs, o);
    }
    cJSON *notes = cJSON_AddArrayToObject(j, "notes");
    for (int i = 0; i < pl->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(pl->notes[i]));
    cJSON *sk = cJSON_AddArrayToObject(j, "skipped");
    for (int i = 0; i < pl->nskipped; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "what", pl->skipped[i].what);
        cJSON_AddNumberToObject(o, "estimate_s", round(pl->skipped[i].est_s * 10) / 10);
        cJSON_AddNumberToObject(o, "left_s", round(fmax(pl->skipped[i].left_s, 0) * 10) / 10);
        cJSON_AddItemToArray(sk, o);
    }
    if (pl->nskipped_more)
        cJSON_AddNumberToObject(j, "skipped_more", pl->nskipped_more);
    return j;
}

/* The whole plan into the fresh directory tmp; the names written into
 * names (the marker, written last, lists them). */
static int write_all_files(const plan *pl, const char *tmp, namelist *names, tc_err *err)
{
    char *tj = topo_to_json(pl->t);
    int rc = put_file(tmp, PLAN_TOPO, tj, names, err);
    free(tj);
    if (rc == TC_OK)
        rc = put_dir(tmp, "nccl", names, err);
    pfile *f = xcalloc((size_t)pl->nranges + 1, sizeof *f);
    int nf = plan_files(pl, f);
    for (int i = 0; rc == TC_OK && i < nf; i++) {
        const range *g = &pl->ranges[f[i].r];
        if (f[i].skip || g->cand < 0)
            continue;
        prog *p = pl->cands[g->cand].p;
        snprintf(p->proto, sizeof p->proto, "%s", pl->cands[g->cand].proto);
        long long lo, hi;
        range_bytes(pl, g, &lo, &hi);
        int ip = p->inplace, oop = p->outofplace;
        long long mn = p->min_bytes, mx = p->max_bytes;
        runtime tg = p->target;
        p->inplace = f[i].both || g->mode == 1;
        p->outofplace = f[i].both || g->mode == 0;
        p->min_bytes = lo;
        p->max_bytes = runtime_get(pl->sel)->max_bytes_inclusive ? hi - 1 : hi;
        p->target = runtime_get(pl->o.target)->in_file ? pl->o.target : RT_ANY;
        rc = verify_file(pl, p, &f[i], err);
        char path[PATH_MAX];
        if (rc == TC_OK && join(path, tmp, f[i].name) != 0)
            rc = tc_err_set(err, TC_INPUT, "%s: path too long", f[i].name);
        if (rc == TC_OK) {
            names_add(names, f[i].name);
            mpp_opts mo;
            char stem[sizeof f[i].name];
            if (pl->o.mscclpp) {
                file_mpp_opts(pl, &f[i], p, &mo);
                snprintf(stem, sizeof stem, "%.*s", (int)(strlen(f[i].name) - 5), f[i].name);
                mo.name = stem;
            }
            rc = write_prog(p, pl->t, path, pl->o.target, pl->o.mscclpp ? &mo : NULL, err);
        }
        p->inplace = ip;
        p->outofplace = oop;
        p->min_bytes = mn;
        p->max_bytes = mx;
        p->target = tg;
    }
    if (rc == TC_OK && pl->ngiven + pl->nprops > 0)
        rc = put_dir(tmp, "sketches", names, err);
    for (int i = 0; rc == TC_OK && i < pl->ngiven + pl->nprops; i++) {
        const proposal *s = i < pl->ngiven ? &pl->given[i] : &pl->props[i - pl->ngiven];
        char rel[128];
        snprintf(rel, sizeof rel, "sketches/%s.json", s->name);
        rc = put_file(tmp, rel, s->json, names, err);
    }
    for (int s = 0; rc == TC_OK && s < pl->nsizes; s++) {
        if (!pl->nccl[s])
            continue;
        char path[PATH_MAX], rel[64];
        nccl_rel(pl, s, rel, sizeof rel);
        if (join(path, tmp, rel) != 0) {
            rc = tc_err_set(err, TC_INPUT, "%s: path too long", rel);
            break;
        }
        names_add(names, rel);
        pl->nccl[s]->size_bytes = serve_size(pl->nccl[s], pl->sizes[s]);
        mpp_opts mo;
        if (pl->nccl[s]->nvls_channels > 0)
            mpp_opts_of(pl->nccl[s], &mo);
        rc = write_prog(pl->nccl[s], pl->t, path, pl->o.target,
                        pl->nccl[s]->nvls_channels > 0 ? &mo : NULL, err);
    }
    if (rc == TC_OK) {
        cJSON *j = plan_json(pl, f, nf);
        char *text = cJSON_Print(j);
        cJSON_Delete(j);
        size_t len = strlen(text);
        text = xrealloc(text, len + 2);
        text[len] = '\n';
        text[len + 1] = '\0';
        rc = put_file(tmp, "plan.json", text, names, err);
        free(text);
    }
    free(f);
    if (rc == TC_OK) {
        size_t n = strlen(PLAN_MAGIC) + 1 + names->len + 1;
        char *m = xmalloc(n);
        snprintf(m, n, "%s\n%s", PLAN_MAGIC, names->s ? names->s : "");
        namelist none = {0};
        rc = put_file(tmp, PLAN_MARKER, m, &none, err);
        free(none.s);
        free(m);
    }
    return rc;
}

int plan_write(const plan *pl, const char *dir_in, tc_err *err)
{
    const char *inputs[64];
    int nin = 0;
    if (pl->t->path)
        inputs[nin++] = pl->t->path;
    for (int i = 0; i < pl->o.nsketches && nin < 64; i++)
        inputs[nin++] = pl->o.sketches[i];
    if (pl->o.profile && nin < 64)
        inputs[nin++] = pl->o.profile;
    int exists;
    int rc = plan_check_output(dir_in, inputs, nin, &exists, err);
    if (rc != TC_OK)
        return rc;
    char dir[PATH_MAX], tmp[PATH_MAX];
    trim_dir(dir, dir_in);
    snprintf(tmp, sizeof tmp, "%.*s.tmp-XXXXXX", PATH_MAX - 32, dir);
    /* from mkdtemp to the last rename, a signal waits (file.h) */
    file_hold h;
    file_hold_signals(&h);
    if (!mkdtemp(tmp)) {
        rc = tc_err_set(err, TC_INPUT, "-o %s: cannot create a directory beside it: %s", dir_in,
                        strerror(errno));
        file_release_signals(&h);
        return rc;
    }
    /* mkdtemp makes it 0700; a plan is read by runtimes running as other
     * users: the mode a new directory gets (the umask decides) */
    mode_t um = umask(0);
    umask(um);
    chmod(tmp, 0777 & ~um);
    namelist names = {0};
    double tw = now_s();
    rc = write_all_files(pl, tmp, &names, err);
    if (!pl->o.quiet)
        fprintf(stderr, "taccl-synth: plan: files written, each verified with data at one size "
                "whose buffers over the ranks fit %lld MiB (plan.json's \"verified\") (%.1f s; "
                "the time budget kept %.1f s for it and %.1f s for its estimates' error)\n",
                VERIFY_DATA_MAX >> 20, now_s() - tw, files_s(pl) - pl->slack_s, pl->slack_s);
    free(names.s);
    if (rc == TC_OK) {
        char old[PATH_MAX];
        snprintf(old, sizeof old, "%.*s.old-XXXXXX", PATH_MAX - 32, dir);
        if (exists && (!mkdtemp(old) || rmdir(old) != 0 || rename(dir, old) != 0))
            rc = tc_err_set(err, TC_INPUT, "-o %s: cannot move the previous plan aside: %s",
                            dir_in, strerror(errno));
        else if (rename(tmp, dir) != 0)
            rc = tc_err_set(err, TC_INPUT, "-o %s: %s", dir_in, strerror(errno));
        else if (exists)
            rm_tree(old);
    }
    if (rc != TC_OK) {
        untemp(err, tmp, dir);
        rm_tree(tmp);
    }
    file_release_signals(&h);
    return rc;
}

char *plan_summary_json(const plan *pl, const char *dir)
{
    pfile *f = xcalloc((size_t)pl->nranges + 1, sizeof *f);
    int nf = plan_files(pl, f);
    cJSON *j = plan_json(pl, f, nf);
    cJSON_AddStringToObject(j, "output", dir);
    cJSON_AddNullToObject(j, "error");
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(f);
    return s;
}

void plan_print(const plan *pl, const char *dir, FILE *out)
{
    pfile *f = xcalloc((size_t)pl->nranges + 1, sizeof *f);
    int nf = plan_files(pl, f);
    for (int i = 0; i < nf; i++) {
        if (f[i].skip)
            continue;
        const range *g = &pl->ranges[f[i].r];
        char a[32], b[32];
        const char *mode = f[i].both ? "both modes" : g->mode ? "in place" : "out of place";
        char why[600];
        if (g->cand < 0)
            fallback_reason(pl, g, why, sizeof why);
        if (g->cand < 0)
            fprintf(out, "taccl-synth: plan: %s..%s %s: NCCL fallback (%s)\n",
                    sz(pl->sizes[g->first], a), sz(pl->sizes[g->last], b), mode, why);
        else
            fprintf(out, "taccl-synth: plan: %s..%s %s: %s/%s (%s)\n",
                    sz(pl->sizes[g->first], a), sz(pl->sizes[g->last], b), mode, dir, f[i].name,
                    pl->cands[g->cand].label);
    }
    for (int i = 0; i < pl->nnotes; i++)
        fprintf(out, "taccl-synth: plan: %s\n", pl->notes[i]);
    if (pl->nskipped)
        fprintf(out, "taccl-synth: plan: the time budget left out %d (plan.json's \"skipped\"), "
                "first %s: estimated %.0f s, %.0f s left\n", pl->nskipped + pl->nskipped_more,
                pl->skipped[0].what, pl->skipped[0].est_s, fmax(pl->skipped[0].left_s, 0));
    free(f);
}
