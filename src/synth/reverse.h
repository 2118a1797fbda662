/* reverse.h — ReduceScatter as an AllGather run backwards; AllReduce as the
 * two in a row.
 *
 * TACCL builds the reductions from a synthesized AllGather (docs/design.md §6):
 * in an AllGather chunk c leaves its origin o and spreads down a tree until
 * every rank holds it.  Run that tree backwards in time and it becomes a
 * reduction tree into o: every rank sends its partial sum of c up the edge it
 * received c on, a relay sends only after it has added in the partials of its
 * whole subtree, and o ends with the sum — exactly ReduceScatter's shard o.
 * Each link carries the same bytes as before, in the other direction and in
 * the reverse order, so on a topology whose links, ports and NICs are equally
 * fast both ways the reversed schedule takes the AllGather's time.
 *
 * ---- Chunk identity ----------------------------------------------------------
 * The AllGather's chunk (origin o, index j) with k = ag->chunks_per_rank is
 * the reductions' input chunk o*k + j: ReduceScatter with k chunks per shard
 * has C = n*k input chunks per rank and chunk o*k + j belongs to shard o
 * (coll_in_dests: owner = index / k), which is where the AllGather tree
 * starts.  Output sends keep `origin` = o (the owner; the lowering and stage
 * 3 ignore it for reductions) and `index` = o*k + j.
 *
 * ---- reverse_reducescatter ---------------------------------------------------
 * Every AllGather send a -> b of a chunk over [t_send, t_arrive] becomes the
 * send b -> a with reduce = 1 over [T - t_arrive, T - t_send], T the
 * AllGather's latest arrival.  So the order on every link, port and NIC
 * flips (direction and sequence), and a relay's upward send starts no earlier
 * than the last partial of its subtree arrives (the AllGather forwarded no
 * earlier than it received).  `group` is kept: members of one AllGather
 * transfer share their times, reversed they still do.
 * The output's sends are sorted by arrival time; where two partials of one
 * chunk reach one rank at the same time, the one from the receiver's own node
 * comes first (then lower t_send, sender, index): the lowering and stage 3
 * serialise the reductions of one chunk on one rank in arrival order, input
 * order on ties, so a node reduces its local inputs before a partial that
 * crossed the network.  The times are the AllGather's, not re-solved: give
 * the result to contig_solve (contig.h), which re-solves contiguity and exact
 * times on the reversed links and adds the reduce cost.
 *
 * The input must be an AllGather routing whose every chunk reaches every
 * rank exactly once over a tree (route_check's rule), with reduce = 0, src !=
 * dst, finite times with t_arrive >= t_send, and each send leaving after the
 * chunk reached its sender (1e-9 relative tolerance).  A rank that never
 * receives a chunk would leave its input out of the sum: that is an error
 * (TC_INPUT naming the chunk and the rank), as is any other violation.
 *
 * ---- reverse_allreduce -------------------------------------------------------
 * AllReduce = the ReduceScatter, then the AllGather of the reduced shards
 * (each shard is reduced exactly once, at its owner, so every replica
 * receives the same bits).  `rs` is a timed ReduceScatter (after stage 3),
 * `ag` the timed AllGather it was reversed from (k chunks per rank, rs having
 * n*k).  Output: coll AllReduce, chunks_per_rank n*k, rs's sends (reduce = 1)
 * then ag's sends (reduce = 0, index o*k + j, groups renumbered after rs's
 * so no group mixes the phases), the AllGather part shifted:
 *   REVERSE_JOIN_BARRIER   by rs's makespan: the AllGather starts after the
 *                          whole ReduceScatter;
 *   REVERSE_JOIN_PIPELINE  per chunk, so that its tree's first send leaves
 *                          when its owner received its last partial (the
 *                          chunk's AllGather starts as soon as its sum is
 *                          complete; other chunks may still be reducing, so
 *                          the phases interleave on links).  Then, walking
 *                          the AllGather in its own send order, a group
 *                          (same pair and group number) starts together, at
 *                          the latest of its members' shifted times, and a
 *                          hop never leaves before the hop that fed it
 *                          arrives: the times stay consistent with the data
 *                          and groups stay whole.
 * Only the order the times imply matters to stage 3 (contig.h: an AllReduce
 * AllGather-phase send waits for every partial its sender received), so
 * re-solve the result with contig_solve.  predicted_us of the output is the
 * shifted latest arrival.  TC_INPUT for mismatched inputs (collectives, rank
 * or chunk counts, a send already reduce = 1 in ag, reduce = 0 in rs).
 *
 * Pure functions of their inputs: deterministic, no state. */
#ifndef TC_REVERSE_H
#define TC_REVERSE_H

#include "../model/topo.h"
#include "../util/err.h"
#include "../sched/algo.h"

typedef enum { REVERSE_JOIN_BARRIER = 0, REVERSE_JOIN_PIPELINE } reverse_join;

/* ReduceScatter from AllGather ag (see above).  t may be NULL (then no
 * "same node first" tie-break: every sender counts as remote); when given it
 * must have ag->nranks ranks.  On TC_OK *out is a new algo (algo_free). */
int reverse_reducescatter(const algo *ag, const topo *t, algo **out, tc_err *err);

/* AllReduce = rs then ag (see above).  On TC_OK *out is a new algo. */
int reverse_allreduce(const algo *rs, const algo *ag, reverse_join join, algo **out,
                      tc_err *err);

/* "barrier" / "pipeline". */
const char *reverse_join_name(reverse_join j);

#endif
