/* rtdep.h — a schedule's dependencies as the MSCCL runtimes number them.
 *
 * A step's wait (depid, deps) does not mean "until step deps of tb depid
 * has ended".  Both runtimes (microsoft/msccl src/graph/topo.cc and
 * src/collectives/device/msccl_interpreter.h; Azure/msccl-executor-nccl
 * src/misc/msccl/msccl_parser.cc and src/device/msccl_kernel.cu) load a tb
 * as a list of transmissions: a nop is not stored, its dependency is
 * attached to the next step; consecutive re steps into the same dst
 * (same dst buffer and offset, same src buffer, no depid of their own,
 * at most 16, the chain ended by hasdep=1) become one transmission whose
 * cnt is the last one's.  The kernel keeps a counter that advances by one
 * per transmission, per fused re and per dependency a nop carried (a nop
 * without one is not counted), and a tb publishes that counter only after
 * a transmission with hasdep=1.  A waiter on (d, s) is released when tb d
 * publishes a value >= s: when the first step of tb d with hasdep=1 whose
 * counter is >= s ends.
 *
 * For a file whose nops all carry a dependency and whose steps are marked
 * hasdep exactly where waited on (what msccl-tools and taccl-synth write),
 * that is step s itself.  This module computes the counter and the step
 * that releases each wait, so the checks, the ordering analysis and the
 * simulator all follow the runtimes rather than the attribute's name. */
#ifndef TC_RTDEP_H
#define TC_RTDEP_H

#include "../sched/program.h"

/* The runtimes' reduction fusion limit (MSCCL_MAX_REDUCE_FUSION, both). */
#define RTDEP_MAX_FUSION 16

/* One tb as the runtimes load it. */
typedef struct {
    int n;          /* steps */
    int *pos;       /* per step: the counter it publishes (non-nop steps;
                       a fused re's earlier parts get the group's first
                       counter values), -1 for a nop */
    int *chain;     /* per step: for a re fused into the one before, the
                       first step of its chain, else -1 */
    int *release;   /* per value v in 0..n-1: the first non-nop step with
                       hasdep=1 whose counter is >= v, -1 if none */
    int *dropped;   /* per step: 1 for a nop whose dependency the runtimes
                       never wait for (no later non-nop step takes it) */
} rtdep_tb;

/* Fill d for tb (its arrays allocated; free with rtdep_tb_free). */
void rtdep_tb_of(const prog_tb *tb, rtdep_tb *d);
void rtdep_tb_free(rtdep_tb *d);

/* The step of the tb that releases a wait on value s: -1 if s is outside
 * 0..n-1 or nothing with hasdep=1 publishes a value that high. */
int rtdep_release(const rtdep_tb *d, int s);

/* A copy of p whose every wait names the step that releases it (deps
 * rewritten; depid and everything else kept; a wait the runtimes drop
 * removed), or NULL when every wait already does, so p can be used as is.
 * A wait nothing releases is kept as written (the static check reports
 * it).  *changed (may be NULL) counts the rewritten waits. */
prog *rtdep_resolve(const prog *p, long long *changed);

#endif
