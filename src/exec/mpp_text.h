/* mpp_text.h — judge an MSCCL++ plan held as text, for the layers that
 * write plans (sched/mpp.h) and cannot include exec/mpp.h beside it (both
 * name their options mpp_opts).
 *
 * Why: a schedule of switch (multimem, NVLS) operations has no MSCCL step
 * program the cost model (sched/ptime) could time: its steps are a
 * stand-in (program.h, nvls_channels).  Its time and its verdict are the
 * executor's run of the plan it is written as (exec/mpp_run.c), so the
 * synthesizer's choices and the plan's candidates are judged on that. */
#ifndef TC_MPP_TEXT_H
#define TC_MPP_TEXT_H

#include "../model/topo.h"
#include "../util/err.h"

typedef struct {
    double time_us;
    int verified;           /* data: every rank's output as the collective says */
} mpp_text_result;

/* Parse the plan `json` (label names it in messages), check that t can run
 * its switch operations, and run it at size_bytes (rounded up as
 * mpp_round_size does; the rounded size must equal size_bytes) in mode (0 out
 * of place, 1 in place), with data (checked, i32) or timing only.  TC_OK with
 * *res, else TC_INPUT with err (unreadable, t cannot run it, or the size). */
int mpp_judge_text(const char *json, const char *label, const topo *t, long long size_bytes,
                   int mode, int data, mpp_text_result *res, tc_err *err);

#endif
