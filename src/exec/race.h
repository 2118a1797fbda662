/* race.h — ordering hazards, decided statically from the schedule.
 *
 * Happens-before is fixed by the program alone: program order within a tb,
 * each dependency (tb depid step deps -> the waiting step), and on every
 * connection (chan, A->B) the k-th sending step of A before the k-th
 * receiving step of B.  From it:
 *  - a data race: two tbs of one rank touch the same chunk slot (layout.h),
 *    at least one writing, and neither access happens before the other;
 *  - an uninitialized read: a step reads or sends an o or s chunk slot (or
 *    any slot not holding input) and no write of that slot happens before it.
 * Accesses: a step reads its src range (s, rrs, rrc, rrcs, cpy, re) and, for
 * re, its dst range; it writes its dst range (r, rcs, rrc, rrcs, cpy, re);
 * rcs and rrcs then send what they wrote (a read of dst after the write, in
 * the same step).  A cycle in happens-before is reported as a deadlock.
 *
 * Liveness: a step is live if its data can reach a result element in some
 * interleaving: it writes an output slot that no later write (in every
 * interleaving) covers, or a live step may read what it wrote, or a live
 * step receives what it sent.  A race whose steps are all dead, or an
 * uninitialized read by a dead step, is a warning (hazard.warning): the
 * runtime computes the right result, the traffic is wasted.  Whatever
 * cannot be proven dead is live, so an error is never downgraded on a
 * guess. */
#ifndef TC_RACE_H
#define TC_RACE_H

#include "../sched/program.h"
#include "hazard.h"

typedef struct {
    int checked;            /* 1 if the race check ran in full */
    long long work;         /* vector-clock entries touched */
    char skipped_why[128];  /* why it did not run in full, "" otherwise */
    /* Dead traffic: steps whose data reaches no result element in any
     * interleaving (backward slice from the postcondition). */
    int live_checked;       /* 1 if the slice was computed */
    int live_partial;       /* 1 if its search stopped at its budget: steps
                               not proven dead count as live */
    long long live_work;    /* comparisons and search nodes the slice spent */
    long long steps;        /* steps that move data (not nop) */
    long long dead_steps;   /* of those, dead */
    char *dead;             /* [steps of the schedule, rank/tb/step order]:
                               1 = dead; NULL if not computed; free with
                               race_stats_free */
} race_stats;

/* Budget: the check is skipped (stats->checked = 0, reason recorded) rather
 * than run when it would touch more than `budget` vector-clock entries;
 * 0 = default (about 2e8). The uninitialized-read check always runs. */
int race_check(const prog *p, int inplace, long long budget, hazard_list *out, race_stats *st);

/* The same for several buffer modes of one schedule: the happens-before
 * graph and its order do not depend on the mode, so they are built once
 * (race_graph_new) and checked per mode (race_check_graph), each check as
 * race_check would do it.  p must outlive the graph. */
typedef struct race_graph race_graph;
race_graph *race_graph_new(const prog *p);
int race_check_graph(race_graph *rg, int inplace, long long budget, hazard_list *out,
                     race_stats *st);
void race_graph_free(race_graph *rg);

void race_stats_free(race_stats *st);

/* The dead-traffic slice spends at most 5e7 units (a comparison of two
 * steps, a node visited searching for a path) plus 8 per recorded write;
 * past that it proves nothing more (live_partial).  For tests: a budget of
 * exactly `units` instead; 0 restores the default. */
void race_set_live_budget(long long units);

#endif
