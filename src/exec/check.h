/* check.h — static hazards: what the MSCCL runtimes would hang or corrupt on
 * but never check themselves, found before anything runs.
 *
 * Checked: buffer names and offset+cnt within the <gpu>'s buffer sizes
 * (cnt >= 1 except nop); step numbers 0..n-1 in order; tb ids dense from 0;
 * runtime limits (steps per tb, cnt, depid, channels); tb peers in range and
 * not the rank itself; at most one tb per (chan, send peer) and per (chan,
 * recv peer) on a rank; per connection (chan, A->B) the number of sending
 * steps of A equals the number of receiving steps of B and the k-th of each
 * agree on cnt; a step that sends/receives belongs to a tb with that peer;
 * dependencies name an existing tb and step, and that step or a later one in
 * its tb has hasdep="1"; ngpus matches the <gpu> elements and the
 * collective's buffer shapes (collective.h).  Nothing here needs data.
 *
 * Loader checks (HZ_LOAD, exit 2: the runtime will not run the file at all),
 * as the runtimes' XML loaders do them (microsoft/msccl src/graph/topo.cc,
 * Azure/msccl-executor-nccl src/misc/msccl/msccl_parser.cc): the coll
 * spelling each accepts, the <algo> attributes each requires, the legacy
 * runtime's i_chunks/o_chunks consistency (a count of 0 is skipped), each
 * offset below its buffer's count (-1 allowed; offset+cnt is not theirs to
 * check, it is ours: HZ_BOUNDS), steps per tb, tbs per rank, cnt, tbs per
 * channel, and the legacy runtime's scratch allocated at init
 * (maxBytes * s_chunks / nchunksperloop). */
#ifndef TC_CHECK_H
#define TC_CHECK_H

#include "../model/runtime.h"
#include "../sched/program.h"
#include "hazard.h"

typedef struct {
    int max_steps_per_tb;   /* legacy runtime 256, newer executor 64 */
    int max_cnt;            /* cnt must be < 72 */
    int max_depid;          /* 127 */
    int max_channels;       /* 32 */
    runtime loader;         /* whose loader judges the file (HZ_LOAD: it
                               refuses it): RT_ANY what every MSCCL runtime
                               refuses, either coll spelling; RT_UNLIMITED
                               none, limits reported as HZ_LIMIT */
} check_limits;

/* GPU memory the legacy runtime's init-time scratch must fit in: the
 * largest GPUs it runs on (80 GiB). */
#define CHECK_GPU_BYTES (80LL << 30)

/* The scratch per GPU the writers (taccl-synth, plans) let a legacy file
 * make the runtime allocate at init: a file whose size range is open is
 * closed at the largest power of two within it, and a plan keeps a
 * schedule only for sizes within it.  Larger calls fall back to NCCL. */
#define CHECK_LEGACY_SCRATCH_BUDGET (1LL << 30)

/* The limits of runtime rt (model/runtime.h), and its loader's checks;
 * a limit rt does not have is set out of reach.  rt writes XML. */
void check_limits_for(check_limits *l, runtime rt);

/* Append every static hazard of p to out; return how many were added. */
int check_program(const prog *p, const check_limits *lim, hazard_list *out);

#endif
