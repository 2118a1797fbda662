/* hier.h — hierarchical routing: a cluster of identical nodes routed as one
 * node plus rails between nodes, composed into one routing.
 *
 * The flat routing MILP (route.h) grows with ranks x (ranks + hops): on a
 * 128-GPU cluster it stops at its time limit with a routing far from the
 * bound, and at 1024 GPUs it cannot be built.  A cluster of identical nodes
 * has structure the flat model ignores: every chunk must cross into every
 * other node once, and once inside a node it spreads the same way whichever
 * node it is in.  So the routing is built from two parts:
 *
 *   INTRA-NODE: the routing MILP on ONE node (topo_one_node) with the
 *     sketch's intra-node keys (switches and their strategies, chunkup, the
 *     symmetries that act inside a node): per local origin g and chunk index
 *     j, a tree that spreads (g, j) over the node (AllGather), or per local
 *     pair a path (AllToAll);
 *   INTER-NODE (rails): local rank g's chunks leave every node through one
 *     local sender s(g) (g itself unless the sketch's gpus_to_sender_rev_map
 *     says otherwise) and enter through one receiver r(g) (s(g) unless the
 *     sketch's internode_conn forbids it).  AllGather: a bidirectional ring
 *     over the nodes on that rail (each chunk travels ceil((N-1)/2) nodes one
 *     way and floor((N-1)/2) the other, so a rank talks to two remote peers
 *     whatever N is: within the runtimes' channel and threadblock limits);
 *     AllToAll: one direct hop (n, s(g)) -> (m, r(g)) per remote node.
 *
 * AllGather: chunk (o, j) of o = (node n, local g) takes g's node tree in
 * node n; then the ring hops (m-1, s) -> (m, r) (and the mirror), each
 * remote node m spreading it from r by a binomial tree when every local
 * pair has a direct route (a switch), else by the node tree of (r, j).  AllToAll: chunk
 * (o, d k + j) for d = (m, h) takes the node path g -> h when m = n, else the
 * node path g -> s, the hop to (m, r), and the node path r -> h.  Every chunk
 * is still a tree (route_check holds), so stage 2, stage 3 and the lowering
 * treat the composed routing like the flat one; ReduceScatter and AllReduce
 * come from the AllGather as before (synth.h).
 *
 * AllGather by NODE BLOCKS (hier_route_blocks) is the other composition:
 * each node gathers itself, then sends its block (its ranks' chunks,
 * contiguous in the output) whole to every other node, one group per block
 * per hop, so a NIC pays one alpha per node instead of one per chunk; its
 * order is fixed here (matched rounds over the rails) for contig_replay.
 *
 * Deterministic: the node MILP is (up to its time limit), and the
 * composition is a fixed walk over nodes, ranks and chunks. */
#ifndef TC_HIER_H
#define TC_HIER_H

#include "../model/sketch.h"
#include "../model/topo.h"
#include "../sched/algo.h"
#include "route.h"

typedef struct {
    route_stats node;       /* stage 1 on one node */
    int *sender;            /* [ranks_per_node]: s(g), local */
    int *receiver;          /* [ranks_per_node]: r(g), local */
    int rails_ring;         /* 1: ring over the nodes (AllGather), 0: direct */
    int blocks;             /* 1: whole node blocks, direct (hier_route_blocks) */
    int nsends;             /* of the composed routing */
} hier_stats;

/* Can t be routed hierarchically?  TC_OK, or TC_INPUT with err saying why
 * (one node only, a rank no rail can serve). */
int hier_applies(const sketch *s, const topo *t, tc_err *err);

/* The composed routing of collective k (COLL_ALLGATHER or COLL_ALLTOALL)
 * for sketch s (checked against t) on t, every chunk chunk_bytes bytes; o
 * configures the node's routing MILP.  On TC_OK *out is a new algo in the
 * format route_solve gives (times: uncontended, one hop cost per hop;
 * predicted_us: the node MILP's relaxed makespan) and hs (may be NULL; free
 * with hier_stats_free) says how it was built.  TC_INPUT when the cluster
 * cannot be routed so (hier_applies) or the node routing fails; TC_STOP on
 * a stop request. */
int hier_route(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
               const route_opts *o, algo **out, hier_stats *hs, tc_err *err);

/* AllGather by node blocks: each node gathers itself first, then sends its
 * block (all its ranks' chunks, contiguous in the output) whole and
 * directly to every other node, the offsets spread over the rail senders
 * in rounds, each receiver spreading the block over the node tree.  Same
 * contract as hier_route, except that the sends of one block on one hop
 * share a group (one transfer: one alpha) and the times are an order
 * (rounds) for contig_replay, not a contention-free estimate. */
int hier_route_blocks(const sketch *s, const topo *t, double chunk_bytes, const route_opts *o,
                      algo **out, hier_stats *hs, tc_err *err);

void hier_stats_free(hier_stats *hs);

#endif
