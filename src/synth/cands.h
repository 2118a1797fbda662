/* cands.h — the candidate schedules of one synthesis and the one rule that
 * keeps the fastest (not a public API: synth.c's).
 *
 * Why a list: the pipeline tries several strategies for one call (the
 * routing MILP, the latency-first routing, hierarchical rings and node
 * blocks, and for AllReduce two joins of each routing's phases).  Each
 * adds what it built, or why it built nothing, to one list; cands_pick is
 * the only place that compares them, so the choice and its reason can be
 * reported as they were made (synth_stats.cands, taccl-synth --json).
 *
 * The rule, in the order the entries were added: an entry replaces the
 * one kept so far only when it is faster by more than CANDS_TIE_US.  So a
 * tie keeps the one tried first (the MILP's routing before the
 * latency-first one, the rings before the node blocks, the barrier join
 * before the pipeline), and the same inputs keep the same schedule. */
#ifndef TC_CANDS_H
#define TC_CANDS_H

#include "../sched/algo.h"
#include "../sched/program.h"
#include "synth.h"

/* Times closer than this (us) are a tie. */
#define CANDS_TIE_US 1e-9

typedef struct {
    synth_stats *st;                /* its cands[], ncands: the record */
    algo *a[SYNTH_MAX_CANDS];       /* each OK entry's algorithm (owned) */
    prog *p[SYNTH_MAX_CANDS];       /* or its program, for an entry built as
                                       one (a baseline: no algorithm; owned) */
    int run[SYNTH_MAX_CANDS];       /* the caller's tag: which run of stages
                                       2 and 3 built it (-1: none) */
} cand_list;

/* An empty list recording into st (its cands are cleared). */
void cands_init(cand_list *L, synth_stats *st);

/* Add a built schedule (a is taken, freed on failure); join is a
 * reverse_join or -1.  TC_INPUT with err set if the list is full. */
int cands_add(cand_list *L, const char *routing, int join, algo *a, int run, const char *note,
              tc_err *err);

/* Add a schedule built as a program (p is taken, freed on failure), us
 * its time by the cost model (sched/ptime). */
int cands_add_prog(cand_list *L, const char *routing, prog *p, double us, const char *note,
                   tc_err *err);

/* Add an entry with no schedule: SYNTH_CAND_FAILED or SYNTH_CAND_SKIPPED,
 * the note (printf-style) saying why.  A full list drops it. */
void cands_none(cand_list *L, const char *routing, synth_cand_state state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* THE choice: the index of the entry kept among the built ones (of
 * `routing` only, or all when NULL) from index `from` on; -1 if none. */
int cands_pick(const cand_list *L, const char *routing, int from);

/* The predicted time of cands_pick's choice (0 if none). */
double cands_pick_us(const cand_list *L, const char *routing, int from);

/* Drop the entries from index n on (their algorithms freed). */
void cands_truncate(cand_list *L, int n);

/* Keep entry w: st->winner and st->winner_reason say so; its algorithm is
 * handed to the caller and every other one freed. */
algo *cands_keep(cand_list *L, int w);

/* Keep entry w, built as a program (cands_add_prog): as cands_keep. */
prog *cands_keep_prog(cand_list *L, int w);

void cands_free(cand_list *L);

#endif
