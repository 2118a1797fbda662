/* pack.h — spanning-tree packing: k out-trees per rank for the AllGather,
 * a routing built for throughput (issue 43 item 2).
 *
 * Why beside the routing MILP: the MILP minimises a relaxed makespan over
 * per-chunk trees chosen together, which at large sizes and many ranks it
 * cannot finish (MI250 x2 stops at its time limit far from the cut bound).
 * ForestColl (Zhao et al., arXiv 2402.06787) shows that the bandwidth
 * optimum of AllGather is reached by out-trees rooted at every rank, each
 * carrying an equal share of the root's data; the throughput of a set of
 * trees is set by its most loaded resource alone.  So this strategy looks
 * only at that load: with chunkup k (the sketch's, so every candidate of a
 * call has the same chunk size), chunk j of rank r travels on the j-th
 * out-tree of r, and the N * k trees are chosen to make the largest
 * resource load (sum over the hops using a link direction, switch port or
 * NIC side of their cost, over its lanes: the MILP's bandwidth rows) as
 * small as possible.  The trees then go through stages 2 and 3 and the
 * lowering like any routing, so the runtime limits and the ordering are
 * the existing ones.
 *
 * THE METHOD (not ForestColl's code): ForestColl finds the optimum exactly
 * by a binary search on the rate with max-flow tests, switch-vertex edge
 * splitting and Edmonds' arborescence packing.  Here the hop model already
 * has no switch vertices (a hop a -> b through a switch holds a's out port
 * and b's in port: the edge splitting is built in), and the packing is
 * min-congestion rip-up and reroute: every tree is grown from its root,
 * one hop at a time, by the hop of least marginal exponential price
 * sum over its resources of exp(g * load / L) (L: the exact cut bound's
 * load, bound.h, so a load at the bound prices e^g), its own earlier hops
 * counted; then every tree in turn is removed and regrown against the
 * others' loads, for rounds at increasing g.  Ties between hops of equal
 * price go to the shallower sender, then to the receiver whose own hops in
 * are dearer: two GCDs behind one NIC (MI250) get a chunk over it at one
 * price, and the one whose links are fuller should take it, the other
 * forwarding it over the emptier link (the bundled MI250 x2 at k = 4:
 * 6724.9 -> 6388.6 us of largest load, bound 6194.7).  The best packing
 * seen (least largest load, then least sum of squared loads, then the
 * first) is kept and its largest load lowered by moves: a rank whose hop
 * touches a resource at the largest load moves, with the ranks below it,
 * to another sender whose hop stays below it, or together with a second
 * move taking another hop off what the first would fill (DGX-2 x2, k = 2:
 * 8074.1 -> 8068.7 us), until no such move is left.  It is then made
 * shallow at that load (up to 64 ranks): a rank moves to a
 * shallower sender in its tree where no resource goes above the largest
 * load, or paired with another tree's move off the resource it would
 * overfill, while the trees' sum of depths falls; under the runtimes'
 * tile passes a tree's last tile lands one hop time earlier per level
 * (ForestColl's A100 x2, k = 1, 1 GiB AllGather: depth sum 940 -> 352,
 * 3432.3 -> 3131.7 us with lanes, the load itself; ForestColl's trees,
 * depth sum 728: 3425.3 us).
 * Not exact: pack_stats says how far its load is from the bound.  The
 * hops a chunk may take are its candidate hops of the sketch's graph with
 * no distance pruning (route.h, slack -1), so the sketch's relay rules
 * hold.
 *
 * Deterministic: the same inputs give the same trees. */
#ifndef TC_PACK_H
#define TC_PACK_H

#include "../model/sketch.h"
#include "../model/topo.h"
#include "../sched/algo.h"
#include "../util/err.h"

typedef struct {
    int rounds;             /* rip-up-and-reroute passes per price exponent
                               (default 6) */
    int quiet;              /* no progress line on stderr (default 0) */
} pack_opts;

typedef struct {
    int k;                  /* trees per rank (the chunkup) */
    int ntrees;             /* N * k */
    double load_us;         /* the largest resource load of the trees kept
                               (their relaxed makespan, us) */
    double bound_us;        /* the exact cut bound's load at this chunk size
                               (us; 0 when none was computed) */
    double first_us;        /* the largest load of the first greedy packing */
    int passes;             /* passes run */
    double build_s;         /* seconds */
} pack_stats;

void pack_opts_init(pack_opts *o);

/* The AllGather routing of s over t as k = s->chunkup out-trees per rank
 * (chunk j of rank r on tree j of r), every chunk of chunk_bytes.  On TC_OK
 * *out is a new algo (algo_free) as route_solve gives one: the sends of
 * each chunk by depth in its tree, uncontended times, predicted_us the
 * largest resource load.  st may be NULL.  TC_INPUT as route_solve's
 * (a chunk that cannot reach a rank, a model over the size limit). */
int pack_trees(const sketch *s, const topo *t, double chunk_bytes, const pack_opts *o,
               algo **out, pack_stats *st, tc_err *err);

/* A copy of a (its sends, times and predicted_us). */
algo *pack_copy(const algo *a);

/* One tree per channel: every send of a gets a lane (algo.h), numbered
 * per (src, dst) from 1 in the order of a's sends, so the lowering puts
 * the trees sharing a pair on channels of their own.  Why: the runtimes
 * run a program once per tile (2 MiB under Simple), and a threadblock
 * serving several trees makes each tile of a later tree wait for the same
 * tile of an earlier one (ForestColl's to_xml gives every tree its own
 * threadblocks for the same reason).  MI250 x2, k = 1, 1 GiB, --tiles:
 * 14848 us through stages 2 and 3, 3691 us with lanes (the trees' load
 * 3355 us). */
void pack_lanes(algo *a);

#endif
