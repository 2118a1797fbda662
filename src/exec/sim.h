/* sim.h — the event-driven executor: run an MSCCL schedule on a topology.
 *
 * Every rank's tbs run their steps in order; a step starts when its tb's
 * previous step is done and its dependency (depid, deps) is done.  Sends are
 * eager: the k-th sending step of A's tb on (chan, A->B) pairs with the k-th
 * receiving step of B's tb on (chan, recv A), the data captured when the send
 * completes, at most NCCL_STEPS = 8 unreceived sends per connection (a
 * sender waits beyond that).  Timing (docs/design.md §4): a transfer of s bytes
 * costs alpha + s/B on its route (topo_route_of); a link carries `mult`
 * transfers at once per direction, a switch port one in and one out, a NIC
 * one each way; a transfer waits for all its resources, first come first
 * served (ties by rank, tb).  The sender's step ends when the transfer ends;
 * a receiving step ends at max(its own start, arrival) plus, if it reduces,
 * bytes / reduce bandwidth; cpy and re cost bytes / copy (reduce) bandwidth
 * and nop nothing.  Time is the latest step end.
 *
 * Data mode moves real i32/f32 values through every rank's i/o/s buffers,
 * reducing in the order performed, then checks the postcondition element
 * by element (collective.h): i32 exactly, f32 against a double-precision
 * reference with a tolerance; AllReduce also reports whether all replicas
 * are bit-identical.  Timing-only mode skips the data.
 *
 * Device model (topo kind TOPO_CHIP): every transfer whose source chip
 * differs from its destination's counts one ChipSync, whose cluster index
 * differs one ClusterSync (both if both); a transfer must move whole
 * dma_bytes segments at dma_bytes-aligned offsets. */
#ifndef TC_SIM_H
#define TC_SIM_H

#include "../model/topo.h"
#include "../sched/program.h"
#include "hazard.h"

/* The element type of a data run (model/runtime.h: i32, f32, bf16, f16). */
typedef rt_dtype sim_dtype;

/* One transfer as the executor ran it, for an observer (a trace). */
typedef struct {
    long long id;           /* transfers numbered in the order asked, from 0 */
    int src, dst, chan;     /* ranks and channel */
    int tb, step;           /* the sending tb (index in src's <gpu>) and step */
    int cnt;                /* chunks */
    double bytes;
    double t_req, t_start, t_end;   /* asked, started (every lane free), landed */
    double t_free;          /* its lanes free again: t_end, or before it where
                               alpha is a delay or the runtime's latency
                               follows the bytes (model/cost.h) */
    int nres;               /* the resources it held (model/cost numbering) */
    int res[2], lane[2];
} sim_xfer_event;

/* Called as the run goes (all optional; NULL = not wanted).  Times in µs.
 * step: a step of rank's tb (index in its <gpu>) began (its dependency met)
 * at t0 and ended at t1; xfer: a transfer ended; recv: the receive of
 * transfer `id` was taken by that tb's step at t. */
typedef struct {
    void *ctx;
    void (*step)(void *ctx, int rank, int tb, int step, step_type type, double t0, double t1);
    void (*xfer)(void *ctx, const sim_xfer_event *x);
    void (*recv)(void *ctx, long long id, int rank, int tb, int step, double t);
} sim_observer;

typedef struct {
    long long size_bytes;   /* larger per-rank buffer; must be > 0 */
    sim_dtype dtype;
    int data;               /* 1 = move and check real data, 0 = timing only */
    int inplace;            /* 0 out of place, 1 in place */
    unsigned seed;          /* input data seed */
    const char *dead;       /* optional: 1 per dead step (race_stats.dead),
                               to tally dead traffic; NULL = none */
    const sim_observer *obs;    /* optional: told of every step and transfer */
} sim_opts;

typedef struct {
    int completed;          /* every step ran (no deadlock) */
    int verified;           /* completed, data checked (data mode) and correct */
    double time_us;         /* the call's time: its last step's end plus the
                               runtime's base latency (call_us) */
    double call_us;         /* model/cost.h cost_call_us: 0 without a
                               runtime_latency */
    long long chunk_bytes;
    long long steps_run;
    long long transfers;
    double bytes_moved;     /* bytes carried by transfers */
    double bytes_local;     /* bytes copied/reduced locally */
    long long chip_syncs;
    long long cluster_syncs;
    int replicas_identical; /* -1 not applicable, 0 differ, 1 identical */
    long long wrong_elems;  /* elements failing the postcondition */
    double max_rel_err;     /* f32: largest relative error seen */
    double wall_exec_s;     /* host seconds spent executing (not init/check) */
    int data_checked;       /* the postcondition was checked on real data */
    double xfer_us;         /* summed duration of every transfer */
    long long dead_transfers; /* transfers sent by dead steps (sim_opts.dead) */
    double dead_bytes;      /* bytes they carried */
    double dead_xfer_us;    /* their summed duration */
    int nres;               /* resources of the topology (model/cost numbering) */
    double *res_busy_us;    /* [nres]: summed duration of the transfers each held */
    double *res_bytes;      /* [nres]: bytes through each */
} sim_result;

/* Release what a result owns (its per-resource arrays). */
void sim_result_free(sim_result *r);

/* Run p on t.  Runtime problems (deadlock, device rule, no route, wrong
 * data) are appended to hz and make verified 0; the return value is
 * TC_INPUT only when the run could not start (e.g. size not a multiple of
 * the chunk count, out of memory), with err set. */
int sim_run(const prog *p, const topo *t, const sim_opts *o, sim_result *r,
            hazard_list *hz, tc_err *err);

#endif
