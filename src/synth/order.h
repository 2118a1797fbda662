/* order.h — stage 2 of synthesis: the heuristic ordering (list scheduling).
 *
 * Stage 1 (route.h) decides which hops carry each chunk; it relaxes
 * bandwidth, so its times are not a schedule.  This stage gives every hop a
 * real start and end under the executor's timing model (exec/sim.h,
 * docs/design.md §4), so that the time it predicts is the time the
 * executor measures when the lowering keeps the order recorded here.
 * Sends are placed in the order the executor will see their requests (a
 * send asks once its chunk is there and its sender's previous send on the
 * same out resource has freed it; earliest request first, then the lower
 * sender rank); the priority rule only chooses among one sender's
 * simultaneous requests.  The model:
 *
 *   a send a -> b of s bytes takes the route topo_route_of(t, a, b), costs
 *   alpha + s / B and, for that whole time (or for s / B alone where the
 *   topology's alpha is a delay: cost_hold_us), holds every resource of the
 *   route: a direct link (one of its `mult` lanes per direction), or a's out
 *   port and b's in port on the switch, or a's NIC egress and b's NIC
 *   ingress (inter-node).  A resource serves its transfers first come first
 *   served: each lane remembers when it becomes free (no back-filling of
 *   earlier gaps), a transfer takes the earliest-free lane of each of its
 *   resources (the lowest-numbered among equals) and starts when all of them
 *   are free and the chunk has arrived at its source.
 *
 * Greedy list scheduling: repeatedly pick one send among the CANDIDATES
 * (sends whose chunk is at their source: the origin's first hops, then the
 * hops out of each rank once the hop into it is scheduled) and schedule it
 * at the earliest time its resources allow.  Two rules for the pick:
 *   ORDER_PRIORITY  (TACCL's): longest remaining path first (the cost of
 *                   this hop plus the longest cost path below it in the
 *                   chunk's tree), then the chunk that has travelled least
 *                   (cost from the origin to this hop's source), then the
 *                   earliest possible start, then input order;
 *   ORDER_EARLIEST  classic list scheduling: earliest possible start first,
 *                   then the two priority keys, then input order;
 *   ORDER_BEST      (default) runs both, keeps the shorter makespan (ties:
 *                   ORDER_PRIORITY).
 * Costs are compared with a relative tolerance of 1e-9, so symmetric chunks
 * tie exactly and the rest of the key decides; the output is deterministic.
 * (The two priorities are ranked once: values that sort next to each other
 * and agree within the tolerance are one class.)  The next send is found
 * through a heap of out resources (each one sender's), each holding its
 * candidates ordered by the priorities and by when they are ready, not by
 * a scan of every candidate: a million sends (AllGather on 1024 ranks) are
 * ordered in about a second per policy, with the same result as the scan.
 *
 * Resources, lanes and hop costs are model/cost.h's, the executor's own.
 *
 * What the executor does not see here: a tb performs its steps one at a time
 * and a connection holds at most 8 unreceived sends; local copies (the
 * AllGather's own chunk) take no shared resource.  The lowering
 * (sched/lower.h) must make each resource's transfers request it in the
 * recorded order for the prediction to hold. */
#ifndef TC_ORDER_H
#define TC_ORDER_H

#include <stddef.h>

#include "../model/topo.h"
#include "../util/err.h"
#include "../sched/algo.h"
#include "../model/cost.h"

typedef enum { ORDER_BEST = 0, ORDER_PRIORITY, ORDER_EARLIEST } order_policy;

typedef struct {
    order_policy policy;    /* default ORDER_BEST */
} order_opts;

/* What a schedule came to, and the order it fixed on every resource. */
typedef struct {
    double makespan_us;         /* latest arrival; 0 for no sends */
    double makespan_priority;   /* of ORDER_PRIORITY (NAN if not run) */
    double makespan_earliest;   /* of ORDER_EARLIEST (NAN if not run) */
    order_policy used;          /* ORDER_PRIORITY or ORDER_EARLIEST */
    int nres;                   /* cost_nres(t) */
    /* Resource r carried sends res_seq[res_start[r] .. res_start[r+1]), in
     * the order they took it (indices into the output algo's sends, which
     * are the input's sends in the input's order). */
    int *res_start;             /* [nres + 1] */
    int *res_seq;
    int *lane;                  /* [nsends * 2]: lane (0-based, within the
                                   resource) of each of the send's resources,
                                   -1 where the route has fewer */
} order_result;

void order_opts_init(order_opts *o);

/* Stage 2.  `routing` gives the hops (its times are ignored): per chunk
 * (origin, index) a tree — no rank receives a chunk twice, nothing is sent
 * to the chunk's origin, and a rank sends a chunk only if it is the origin
 * or receives it.  The routing need not deliver every chunk everywhere
 * (route_check() judges that).  Every send moves chunk_bytes bytes.
 *
 * On success *out is a new algo (algo_free) with the same sends in the same
 * order, t_send / t_arrive set to the schedule and predicted_us = makespan;
 * res (may be NULL) receives the makespans and the order on every resource
 * (free with order_result_free).  TC_INPUT, with the first offending send
 * named, for a routing that is not a forest of chunk trees, a send with no
 * route, ranks or chunks out of range, or chunk_bytes not positive. */
int order_schedule(const algo *routing, const topo *t, double chunk_bytes,
                   const order_opts *o, algo **out, order_result *res, tc_err *err);

void order_result_free(order_result *r);

/* Check that a's times follow the timing model: each send takes its route's
 * cost (t_arrive - t_send), starts no earlier than its chunk reaches its
 * source (the origin holds it at 0), and no resource ever carries more
 * transfers at once than it has lanes (each held from t_send for
 * cost_hold_us).  tol_us absorbs rounding (1e-6 is
 * plenty).  TC_OK, or TC_WRONG naming the first violation (TC_INPUT for a
 * routing order_schedule would refuse). */
int order_verify(const algo *a, const topo *t, double chunk_bytes, double tol_us,
                 tc_err *err);

#endif
