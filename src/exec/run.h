/* run.h — judge one schedule: static checks, ordering checks, execution.
 *
 * This is what `taccl-run` does, as a library call so that tests and the
 * benchmark can use it in-process: check_program(), then race_check() and
 * sim_run() for each buffer mode the schedule claims (out of place and/or
 * in place), collected into one report that prints as text or JSON. */
#ifndef TC_RUN_H
#define TC_RUN_H

#include <stdio.h>

#include "../bound/bound.h"
#include "../model/variant.h"
#include "../sched/tile.h"
#include "check.h"
#include "race.h"
#include "sim.h"

typedef struct {
    long long size_bytes;   /* 0 = the schedule's own, else a default */
    sim_dtype dtype;
    int data;               /* 0 = timing only */
    unsigned seed;
    int mode;               /* -1 every mode the file allows, 0 out of place, 1 in place */
    runtime target;         /* whose loader judges the file (check.h):
                               RT_ANY (default) what every MSCCL runtime
                               refuses, either spelling; RT_UNLIMITED no
                               step/tb limits (simulating beyond the runtimes) */
    int strict;             /* warnings (hazards among dead traffic) fail the run */
    const bound_model *bound; /* lower bound to report against, or NULL */
    const sim_observer *obs;  /* told of the first mode's steps and transfers, or NULL */
    int tiles;              /* 1: time it as the runtimes' interpreter runs it:
                               the program once per tile pass (sched/tile.h; a
                               GPU topology only; the checks still judge the
                               file); 0: once, each step one transfer; -1
                               (run_opts_default): the default timing
                               (run_tiles) */
    int variants;           /* a sweep also times each row under every model
                               variant (model/variant.h), timing only */
} run_opts;

typedef struct {
    long long size_bytes;
    int size_from_file;     /* 1 if the size came from the schedule */
    int nmodes;
    int modes[2];           /* 0 out of place, 1 in place, in run order */
    sim_result res[2];
    race_stats race[2];
    hazard_list hz;         /* every problem found, in order found; warnings
                               (hazard.warning) do not fail the run */
    int static_ok;          /* the static check found nothing */
    int refused;            /* the target runtime's loader refuses the file
                               (HZ_LOAD): unusable input, exit 2 */
    int verified;
    int has_bound;
    double bound_us;        /* lower bound at this size (has_bound) */
    double passes_us;       /* the bound in the runtimes' tile passes at this
                               size, where the run is timed in them
                               (bound_passes_us; 0 = none) */
    double floor_us;        /* AllReduce: the partial-sums floor at this size
                               (bound_floor_us; 0 = none) */
    int tiled;              /* the run was timed in the runtimes' passes (run_opts.tiles) */
    int legacy_inplace_only; /* the legacy loader: inplace="1" outofplace="1"
                               runs in place only (it never reads outofplace) */
    long long waits_moved;  /* waits the runtimes release at a later step than
                               the one they name, or never wait for
                               (exec/rtdep.h); run as the runtimes do */
    tile_info tile;         /* their shape, when tiled */
} run_report;

void run_opts_default(run_opts *o);

/* Whether o times p on t in the runtimes' tile passes: o->tiles, or for -1
 * the default (model/variant.h, VARIANT_DEFAULT_TILES) on a GPU topology. */
int run_tiles(const run_opts *o, const topo *t);

/* Default size when neither the caller nor the file gives one: 1 MiB,
 * rounded up to a whole number of 4-byte elements per chunk. */
long long run_default_size(const prog *p);

/* Judge p on t.  Returns TC_OK when it ran to a verdict (see r->verified),
 * TC_INPUT when it could not run (err set: bad size, memory). */
int run_schedule(const prog *p, const topo *t, const run_opts *o, run_report *r, tc_err *err);

void run_report_free(run_report *r);

/* The hazard a failed run is stated by (hazard_verdict); under --strict a
 * warning states it when there is no error.  NULL if there is none. */
const hazard *run_report_verdict(const run_report *r);

/* Warnings among the hazards: races and uninitialized reads confined to
 * dead traffic. */
int run_report_warnings(const run_report *r);

/* Human-readable report. */
void run_report_print(FILE *f, const run_report *r, const prog *p, const topo *t,
                      const run_opts *o, const char *file, int max_hazards);

/* Time of the first completed mode, or -1 if none completed. */
double run_report_time_us(const run_report *r);

/* The largest buffer total (bytes, all ranks) data mode may allocate in a
 * sweep before a row falls back to timing only. */
#define RUN_SWEEP_DATA_MAX (1LL << 30)

/* Run p at every power-of-two size in [lo, hi] (each rounded up to a whole
 * number of elements per chunk; sizes that round to one size are one row,
 * and a size that rounds past hi is none: TC_INPUT if no size in the range
 * can be run), data checked where the buffers fit in
 * RUN_SWEEP_DATA_MAX and timing-only above.  Prints an nccl-tests-style
 * table to f, or, with json, one object with a "rows" array.  With
 * o->variants each verified row also gives its time under every model
 * variant (a "variants" column; JSON "variants": {name: us or null}).  Returns
 * TC_OK if every row verified, TC_WRONG if any did not, TC_INPUT on bad
 * input (err set). */
int run_sweep(FILE *f, const prog *p, const topo *t, const run_opts *o, long long lo,
              long long hi, int json, const char *file, tc_err *err);

/* The topologies of the model variants (model/variant.h) for one base
 * topology, built once and kept while the base stays the same. */
typedef struct {
    const topo *base;
    topo *t[VAR_COUNT];     /* NULL: the variant times on the base itself */
    int ok[VAR_COUNT];      /* applies to base and its topology loaded */
} run_variant_set;

void run_variant_set_free(run_variant_set *s);

/* p's time in `mode` at `size` under every model variant, timing only
 * (no data, no ordering checks: the run that judged p did those):
 * vt->us[v] < 0 where v does not apply to t or p does not complete under
 * it.  o->tiles says which timing `us_known` (>= 0: p's time already
 * measured with o's options, not run again; < 0: none) is: the default's
 * or VAR_PASSES'.  set caches the variant topologies across calls. */
void run_variants(const prog *p, const topo *t, const run_opts *o, long long size, int mode,
                  double us_known, run_variant_set *set, variant_times *vt);

/* One JSON object (malloc'd string).  r, p, t may be NULL when the input
 * could not be used; `error` then says why.  With r, `error` (if not NULL)
 * is an output that could not be written: `verified` stays r's verdict. */
char *run_report_json(const run_report *r, const prog *p, const topo *t, const run_opts *o,
                      const char *file, const char *error);

#endif
