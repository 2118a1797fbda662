/* ptime.h — how long a program takes on a topology, by the cost model.
 *
 * The lowering turns an abstract algorithm into a program: it splits
 * transfers into contiguous runs, stages scattered chunks through scratch,
 * chains reductions and reuses scratch slots, and every one of those adds a
 * step or a dependency that the synthesizer's stages never saw.  So the
 * time the synthesizer reports is the time of the program it writes, taken
 * here: each threadblock runs its steps in order, a step waits for its
 * dependency, a receive for its message, a send for a free FIFO slot and
 * then for every resource of its hop (model/cost: lanes first come first
 * served, requests at one instant after every completion at that instant,
 * in rank and tb order), and local copies and reductions cost what the
 * model says.
 *
 * This is the prediction, not the verdict: the executor (exec/sim) runs
 * the same program with its own event loop, moves and checks the data, and
 * is the judge; the two agreeing is a test of both.  No data is moved here
 * and nothing is checked beyond "every step ran". */
#ifndef TC_PTIME_H
#define TC_PTIME_H

#include "../model/topo.h"
#include "../util/err.h"
#include "program.h"

/* The makespan of `p` on `t` at `size_bytes` (a multiple of the program's
 * nchunksperloop), in µs, into *us.  TC_INPUT with err set if a connection
 * has no route in t, a dependency names a tb or step that does not exist,
 * or the program cannot finish (a deadlock); *us is then left alone. */
int ptime_run(const prog *p, const topo *t, long long size_bytes, double *us, tc_err *err);

/* The same in the default timing (model/variant.h): on a GPU topology the
 * runtimes' tile passes (sched/tile.h) when VARIANT_DEFAULT_TILES is set,
 * else the program once; tiles 0 or 1 instead of -1 choose. */
int ptime_run_as(const prog *p, const topo *t, long long size_bytes, int tiles, double *us,
                 tc_err *err);

/* A lower bound on what ptime_run_as(p, t, size_bytes, tiles) gives, in
 * O(steps) and without unrolling the passes: each threadblock runs its
 * operations one after another, and a send holds its threadblock and a
 * lane of each resource of its hop at least its hold (model/cost.h), a
 * copy or reduction its threadblock its local time, so no run ends before
 * its busiest threadblock's sum of those, or its busiest resource's over
 * its lanes (plus the call's latency).  What a plan uses to leave untimed a candidate that cannot
 * beat NCCL's schedule.  TC_INPUT (err set) where the timing would refuse
 * the size (not whole chunks, a tile that splits no element) or a peer has
 * no route. */
int ptime_lower_us(const prog *p, const topo *t, long long size_bytes, int tiles, double *us,
                   tc_err *err);

#endif
