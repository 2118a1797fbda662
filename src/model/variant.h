/* variant.h — the model variants: the alternative assumptions under which
 * every "x NCCL" the tools print is also timed (issue 41 item 5).
 *
 * One table (variant.c), a row per variant: its name, what it changes, and
 * how it is applied — a change to the topology (a new topology built from
 * the old one's JSON), the runtimes' tile passes (sched/tile.h), and a cost
 * per call.  The executor (exec/run.h, run_variants) and plans (plan/plan.c)
 * time a schedule under each row that applies; a ratio to NCCL is only
 * ever taken between two times of one variant (docs/design.md section 4,
 * "Model variants").
 *
 *   default   the model as the topology states it
 *   steps     the program run once, each step one transfer of its whole
 *             cnt chunks (no tile passes): shown, not judged (no MSCCL
 *             runtime runs a program so, variant_judges)
 *   tiles     the MSCCL runtimes' tile passes (taccl-run --tiles)
 *   delay     alpha as latency only ("alpha_mode": "delay")
 *   ports     switch ports not shared: each switch a link per ordered pair
 *             of its ranks, at the switch's alpha and bandwidth, so that
 *             transfers from one rank to different peers do not wait for
 *             one another's port (an upper end for an NVSwitch)
 *   rt-lat    the runtime's latency the other way (model/cost.h, "Runtime
 *             latency"): without it where the topology has it (the model
 *             before it was the bundled machines' default), NCCL's where a
 *             GPU topology has none
 *   nccl-est  NCCL's side only: where no output holds what NCCL runs (the
 *             NCCL file is its best choice without it, and --algo nccl's
 *             would_run names the pick: NVLS on the XML path, NVLSTree
 *             beyond two nodes, CollNet), NCCL's time is its own tuning
 *             model's estimate of that pick, and a schedule keeps its
 *             default time; elsewhere no time.  Only a plan knows the
 *             estimate (plan.json's nccl[].would_run), so the executor
 *             alone never times it (run_variants leaves it -1)
 *
 * default and one of steps/tiles are the same run: which of the two the
 * default is, is VARIANT_DEFAULT_TILES below; the other is a variant. */
#ifndef TC_VARIANT_H
#define TC_VARIANT_H

#include "../util/err.h"
#include "cost.h"
#include "topo.h"

typedef enum {
    VAR_DEFAULT,
    VAR_PASSES,     /* "tiles" or "steps": the timing the default is not */
    VAR_DELAY,
    VAR_PORTS,
    VAR_RTLAT,
    VAR_NCCL_EST,   /* NCCL's own estimate of the pick no output holds */
    VAR_COUNT
} variant_id;

/* 1: the default timing of an MSCCL XML file is the runtimes' tile passes
 * (and VAR_PASSES is "steps", the program run once); 0: the reverse. */
#define VARIANT_DEFAULT_TILES 1

typedef struct {
    const char *name;   /* "default", "tiles", "delay", "ports", "rt-lat", "nccl-est" */
    const char *what;   /* one line: what it changes */
} variant_info;

const variant_info *variant_get(variant_id v);

/* 1 when v runs the program in the runtimes' tile passes, 0 once per step. */
int variant_tiles(variant_id v);

/* 1 when v counts in a range of ratios and in a plan's worst case: every
 * variant but the timing no MSCCL runtime performs (with the passes the
 * default, "steps": the runtimes run every program in tile passes, so a
 * time in one pass is shown beside the others, never judged). */
int variant_judges(variant_id v);

/* A schedule beats a reference (NCCL's) when it is faster by default and
 * no slower in any judging variant, where two times within VARIANT_TIE of
 * each other are equal: a model's time is a sum of rounded figures, and
 * the yardstick is timed at its own file's size (a whole number of
 * elements per chunk, up to a few KiB off); 0.01 % is below any figure
 * the calibration reaches (docs/design.md section 4).  Ties by default go
 * to the reference (no file is the simpler plan): x_default > 1 + 1e-9.
 * DGX H100 x1 ReduceScatter 1 GiB: the packed trees 2414.2 us by default
 * against NCCL's 2747.3, 2101.27 against 2101.25 with alpha as latency --
 * a file, where a strict rule had left the size to NCCL. */
#define VARIANT_TIE 1e-4
int variant_beats(double x_default, double x_worst);

/* Whether v can change a time on t: 0 for ports on a topology without
 * switches, for tiles on a chip/cluster device (the runtimes' passes are
 * a GPU runtime's); 1 otherwise. */
int variant_applies(const topo *t, variant_id v);

/* The topology v times on: *out a new topology (free with topo_free), or
 * NULL when v does not change t's figures (default, steps/tiles).  TC_OK,
 * or TC_INPUT with err set (the changed topology did not load). */
int variant_topo(const topo *t, variant_id v, topo **out, tc_err *err);

/* A schedule's times under every variant (< 0: not timed: the variant
 * does not apply, or the run failed) and the range of ratios they give
 * against a reference timed the same way. */
typedef struct {
    double us[VAR_COUNT];
} variant_times;

/* The ratio ref/sched under each judging variant (variant_judges) both
 * were timed in; *lo, *hi the smallest and largest (the default's ratio is
 * always among them);
 * returns how many variants gave a ratio (0: not even the default). */
int variant_ratio_range(const variant_times *ref, const variant_times *sched, double *lo,
                        double *hi);

#endif
