/* plan.h — a plan: the set of MSCCL files a runtime should load so that
 * every call of one collective, at every size of a range, in place or not,
 * runs the fastest schedule we have, or falls back to NCCL where NCCL is
 * fastest.
 *
 * A runtime picks per call among loaded files by collective, in-place flag
 * and byte range (exec/pick.h).  So a plan is: candidates (every baseline
 * under each protocol, the schedules synthesized from the given sketches at
 * anchor sizes), each timed at every power-of-two size of the range by the
 * cost model (sched/ptime, which the executor agrees with) and checked by
 * the executor in each buffer mode it claims; per mode and size the fastest
 * candidate, or NCCL's own schedule (`--algo nccl`) when nothing beats it —
 * then no file covers that size and the runtime falls back to NCCL; runs of
 * sizes with the same winner become one file with that byte range.  The
 * legacy runtime needs a file per mode (it matches `inplace` exactly); the
 * newer executor takes one file with both flags where one schedule wins
 * both modes.
 *
 * This part sits above the synthesizer and the executor: it uses both and
 * neither uses it. */
#ifndef TC_PLAN_H
#define TC_PLAN_H

#include <stdio.h>

#include "../model/collective.h"
#include "../model/runtime.h"
#include "../model/topo.h"
#include "../synth/baseline.h"
#include "../util/err.h"

typedef struct {
    coll_kind coll;
    long long lo, hi;           /* sizes (larger per-rank buffer), powers of two from lo */
    const char *const *sketches;
    int nsketches;
    runtime target;         /* RT_MSCCL, RT_EXECUTOR or RT_UNLIMITED */
    double stage_time_s;        /* per MILP stage of each synthesis; 0 = 20 */
    double budget_s;            /* synthesis time budget; 0 = 600 */
    int quiet;                  /* no progress on stderr */
    const char *proto;          /* only this protocol ("Simple", "LL", "LL128"); NULL: all */
    int mscclpp;                /* write MSCCL++ plans (NAME.json, one per size range and
                                   buffer mode, docs/mscclpp.md §12.5) instead of MSCCL XML;
                                   --target mscclpp sets it */
    int propose;                /* also synthesize sketches proposed from the topology
                                   (plan/propose.h), after the given ones; plan_opts_init
                                   sets it */
    int tiles;                  /* 1: time every file (and judge each synthesis's
                                   candidates) once per tile pass, as the
                                   runtimes run them (sched/tile.h); 0 or -1
                                   (plan_opts_init): the program once, the
                                   passes judged as a model variant */
    int by_default;             /* pick by the default model alone, not by the
                                   worst x NCCL over the model variants
                                   (model/variant.h) */
    const char *profile;        /* --profile FILE (plan/profile.h): the calls whose
                                   saved time decides which files a runtime that
                                   loads few keeps; NULL: each size of the range
                                   once */
} plan_opts;

typedef struct plan plan;

void plan_opts_init(plan_opts *o);

/* Make the plan for t.  TC_INPUT with err set when nothing can be planned
 * (a bad range, a sketch that does not load or fit t); TC_STOP when a stop
 * was requested (lp_request_stop). */
int plan_make(const topo *t, const plan_opts *o, plan **out, tc_err *err);

/* Whether dir may receive a plan: absent, empty, or a plan this tool wrote
 * (its marker, .taccl-plan, lists every entry under it, and nothing else is
 * there); never a symbolic link, never a directory any of the inputs lies
 * under (a plan replaces its whole directory).  Sets *exists.  TC_INPUT
 * with "-o DIR: why" otherwise. */
int plan_check_output(const char *dir, const char *const *inputs, int ninputs, int *exists,
                      tc_err *err);

/* Write the plan into directory dir: topology.json (the topology as read,
 * which plan.json's commands name), the schedule files, sketches/ (the
 * given and proposed ones), nccl/ (NCCL's schedule at each size, for
 * comparison), plan.json, and last the marker .taccl-plan listing all of
 * them.  Atomic: built in a fresh directory beside dir (with the mode the
 * umask gives) and renamed onto it, signals held meanwhile (util/file.h);
 * dir must pass plan_check_output.  Errors name dir, never the temporary
 * directory. */
int plan_write(const plan *pl, const char *dir, tc_err *err);

/* A summary as one JSON object (malloc'd): what `--json` prints. */
char *plan_summary_json(const plan *pl, const char *dir);

/* One line per file and fallback range, for stderr. */
void plan_print(const plan *pl, const char *dir, FILE *f);

void plan_free(plan *pl);

/* A schedule written only as an MSCCL++ plan (prog_mpp_only: NVLS's switch
 * operations, the all-pairs ReduceScatter), which has no MSCCL steps the
 * cost model could time, judged by the executor on the MSCCL++ plan it is
 * written as (exec/mpp_text.h): its time at size bytes (a multiple of 16
 * bytes x the plan's input chunks) on t in mode (0 out of place, 1 in
 * place), with data checked when data is set.  TC_OK with *us and
 * *verified, else TC_INPUT with err. */
int plan_judge_mpp(const prog *p, const topo *t, long long size, int mode, int data,
                      double *us, int *verified, tc_err *err);

#endif
