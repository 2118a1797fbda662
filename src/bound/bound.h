/* bound.h — lower bounds on the time of a collective on a topology.
 *
 * No schedule can beat them; every result is reported against them.  They
 * depend only on the topology, the collective, the rank count and the size
 * (never on a schedule), so the executor and the synthesizer share them.
 *
 *   latency bound:   the largest, over (source, destination) pairs whose
 *                    data must meet, of the smallest sum of alpha along a
 *                    path between them;
 *   bandwidth bound: bytes that must cross into a set of ranks divided by
 *                    the most the topology can carry into that set (a
 *                    max-flow / fractional multi-commodity-flow LP solved
 *                    with GLPK, so links with multiplicity, switch ports,
 *                    NICs and node/chip cuts are all covered);
 *   bound(size) = max(latency, size * bandwidth-seconds-per-byte).
 * Only provably valid bounds are used; each part says which cut or path
 * gave it. */
#ifndef TC_BOUND_H
#define TC_BOUND_H

#include "../model/collective.h"
#include "../model/topo.h"
#include "../util/err.h"

typedef struct {
    double latency_us;          /* size-independent part */
    double us_per_byte;         /* bandwidth part: bound >= size_bytes * us_per_byte */
    char latency_why[256];      /* e.g. "rank 0 -> rank 15: min alpha path 2.0 us" */
    char bandwidth_why[256];    /* e.g. "node 1 must import 8/16 of the data over 12.5 GB/s" */
    /* AllReduce only (0 and "" otherwise): the partial-sums floor, the
     * ReduceScatter's bandwidth bound plus the AllGather's on the same
     * topology: 2(N-1)/N of the buffer through a node's NICs on N nodes,
     * 2(n-1)/n of it through a rank's ports on one node (Patarasuk and
     * Yuan).  Every schedule that moves and adds partial sums of the same
     * elements (NCCL's, TACCL's, msccl-tools', ours) lives under it; it is
     * not a bound of this model (bound.c, ALLREDUCE), so it is reported
     * beside the bound, never as it. */
    double ps_us_per_byte;
    char ps_why[256];
    /* The runtime's base latency of a call, the least any protocol pays
     * (model/cost.h cost_call_us; 0 without a runtime_latency): every run
     * pays it once, after the rest, so the bound and the floor add it. */
    double call_us;
    /* The bandwidth part in the runtimes' tile passes (bound_add_passes;
     * 0: not computed, or it does not apply: alpha a delay, a chip device):
     * every resource at
     * what an operation of one tile gets of it (model/cost.h
     * cost_tile_gbps), so a bound on every MSCCL program timed in the
     * passes, taccl-run's default, and not on one timed in one pass or an
     * MSCCL++ plan.  Equal to us_per_byte where alpha is 0. */
    double passes_us_per_byte;
    char passes_why[256];
} bound_model;

/* Compute the bound model of collective k over all ranks of t.
 * TC_INPUT if the topology cannot perform it at all (a rank unreachable). */
int bound_compute(const topo *t, coll_kind k, bound_model *out, tc_err *err);

/* max(latency_us, size_bytes * us_per_byte) + call_us; size_bytes is the
 * larger per-rank buffer (nccl-tests convention). */
double bound_time_us(const bound_model *b, double size_bytes);

/* Fill b's passes_us_per_byte and passes_why (b from bound_compute(t, k)):
 * the bandwidth part of k on t with every link, switch port and NIC at
 * what one tile's operation gets of it (model/cost.h cost_tile_gbps), the
 * cuts computed once more; nothing where that changes no resource (alpha 0
 * or a delay), nor on a chip device.  What taccl-run reports, not what the
 * synthesizer needs, so bound_compute leaves it out. */
void bound_add_passes(const topo *t, coll_kind k, bound_model *b);

/* The bound in the runtimes' tile passes: max(latency_us, size_bytes *
 * passes_us_per_byte) + call_us; 0 where passes_us_per_byte is 0. */
double bound_passes_us(const bound_model *b, double size_bytes);

/* The partial-sums floor at size_bytes: max(latency_us, size_bytes *
 * ps_us_per_byte) + call_us; 0 when b has none (not an AllReduce). */
double bound_floor_us(const bound_model *b, double size_bytes);

#endif
