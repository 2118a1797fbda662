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
 * the same step).  A cycle in happens-before is reported as a deadlock. */
#ifndef TC_RACE_H
#define TC_RACE_H

#include "../sched/program.h"
#include "hazard.h"

typedef struct {
    int checked;            /* 1 if the race check ran in full */
    long long work;         /* vector-clock entries touched */
    char skipped_why[128];  /* why it did not run in full, "" otherwise */
} race_stats;

/* Budget: the check is skipped (stats->checked = 0, reason recorded) rather
 * than run when it would touch more than `budget` vector-clock entries;
 * 0 = default (about 2e8). The uninitialized-read check always runs. */
int race_check(const prog *p, int inplace, long long budget, hazard_list *out, race_stats *st);

#endif
