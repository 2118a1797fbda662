/* cost.h — the device's cost model: what a transfer holds while it moves,
 * what a hop and a local copy or reduction cost, and how a resource with
 * several lanes is shared.
 *
 * Every part that reasons about time takes its figures and rules from
 * here: the executor (exec/sim, the judge, with its own event loop), the
 * routing and ordering stages, stage 3's timing, the lowering's re-timing
 * and the bounds.  A change to the model is one edit in cost.c.
 *
 * The rules, as the executor applies them:
 * - A hop a -> b takes the route topo_route_of(t, a, b) gives and holds, for
 *   its whole duration, one lane of every resource of that route: a link
 *   direction (it has `multiplicity` lanes), or the sender's switch out port
 *   and the receiver's in port, or the sender's NIC egress and the
 *   receiver's NIC ingress (one lane each).
 * - It costs alpha + bytes / bandwidth of the route (GB/s = 1e3 bytes/us).
 *   Where the topology says "alpha_mode": "delay" (topo.alpha_delay), it
 *   holds its resources for bytes / bandwidth only, its sender's step ends
 *   then, and the data arrives alpha later: alpha is latency, not
 *   occupancy (TE-CCL's model), so messages pipeline behind each other.
 * - A local copy costs bytes / copy_gbps; a reduction bytes / reduce_gbps.
 *   A local reduce step (re) takes that after it starts; a receive that
 *   reduces (rrc, rrs, rrcs) reduces as the data lands, slice by slice, and
 *   ends one slice's reduction after the last byte (cost_reduce_end_us).
 *   Local work holds no shared resource.
 * - A resource is served first come first served; a transfer starts when
 *   every resource it holds has a lane free, taking the lane freed first
 *   (the lowest-numbered among equals).  A request whose resources are not
 *   all free now books nothing and asks again when one of them is freed
 *   (requests of one instant oldest first: by when each first asked, then
 *   threadblock order), so no resource idles while a transfer that needs
 *   only free resources waits: ports and NICs
 *   are work-conserving ("arbitration": "ready", the default;
 *   cost_must_wait).  Where the topology says "reserve" (topo.arb_reserve),
 *   a request books the first instant all its resources are free and a
 *   resource booked ahead idles until then, as stages 2 and 3 plan.
 * - At most COST_FIFO_SLOTS sends on one connection are outstanding
 *   (sent, not yet received).
 *
 * Runtime latency.  Where a GPU topology says "runtime_latency": "nccl"
 * (or "rccl"), the runtime's own latencies come on top of the hops':
 * every hop's data arrives, after its hold, the runtime's per-step
 * latency of the program's protocol for that hop's kind of hardware later
 * (NCCL's hwLat ring row: NVLink 0.6 / 1.9 / 3.4 us for LL / LL128 /
 * Simple, the network 2.7 / 4.0 / 14.0; RCCL's default table on AMD,
 * xGMI counting as NVLink; topo_nccl.h), as latency only, holding nothing;
 * and a call costs the runtime's base latency once (NCCL's ring baseLat:
 * 6.6 / 14 / 8.4 us, cost_call_us).  It is NCCL's own latency model
 * (tuning.cc: baseLat + nsteps x hwLat), which brought the executor
 * within x/ 1.25 of NCCL's estimates at small sizes where the bare hops
 * were 3-12x faster (bench/nccl-model.md). */
#ifndef TACCL_COST_H
#define TACCL_COST_H

#include <stddef.h>

#include "topo.h"

/* NCCL_STEPS: a connection's FIFO holds this many unreceived sends. */
#define COST_FIFO_SLOTS 8

/* ------------------------------------------------------------ resources */

/* Resource ids: the links first (one id per listed direction), then two
 * per switch member (its out port, then its in port), switch by switch,
 * then two per NIC (egress, then ingress). */
typedef enum {
    COST_LINK,
    COST_PORT_OUT,
    COST_PORT_IN,
    COST_NIC_OUT,
    COST_NIC_IN
} cost_res_kind;

int cost_nres(const topo *t);

/* Lanes of resource r: a link's multiplicity, else 1; 0 if r is not one. */
int cost_res_lanes(const topo *t, int r);

cost_res_kind cost_res_kind_of(const topo *t, int r);

/* "link 0->1", "switch 0 out port of rank 3", "NIC 2 (node 1) ingress". */
void cost_res_name(const topo *t, int r, char *buf, size_t n);

/* The id of switch sw's member m's out (in = 0) or in (in = 1) port, and
 * of NIC x's egress (in = 0) or ingress (in = 1). */
int cost_port_res(const topo *t, int sw, int member, int in);
int cost_nic_res(const topo *t, int x, int in);

/* The resources a hop a -> b over route rt holds, into res[0..1]; returns
 * how many (1 for a link, 2 for a switch or NICs), 0 if the route is none
 * or names a switch or NIC a or b is not on. */
int cost_route_res(const topo *t, const topo_route *rt, int a, int b, int res[2]);

/* Same over the route topo_route_of(t, a, b). */
int cost_hop_res(const topo *t, int a, int b, int res[2]);

/* ------------------------------------------------------------ costs */

/* Microseconds from a hop's start until its data has arrived: alpha +
 * bytes / B + the runtime's latency rt->lat_us (INFINITY when the route is
 * none or has no bandwidth). */
double cost_hop_us(const topo_route *rt, double bytes);

/* Microseconds the hop holds its resources (and its sender): alpha +
 * bytes / B, or bytes / B alone where t->alpha_delay. */
double cost_hold_us(const topo *t, const topo_route *rt, double bytes);

/* 1 where a hop's data arrives later than its hold ends (alpha is a delay,
 * or the route carries a runtime latency), 0 where it arrives then. */
int cost_delayed(const topo *t, const topo_route *rt);

/* ------------------------------------------------------------ protocols
 *
 * The MSCCL runtimes move data with one of NCCL's three protocols, named
 * by the program's `proto` attribute (none = Simple):
 *   Simple  bulk copies behind a flag per slice: the topology's figures;
 *   LL      8-byte stores of 4 data bytes and a 4-byte flag: half the
 *           bandwidth, the lowest latency;
 *   LL128   128-byte lines carrying 120 data bytes and a flag: nearly all
 *           the bandwidth at a latency between the two.
 * A topology's alpha and bandwidth describe Simple.  Under LL or LL128 a
 * hop's alpha is scaled by NCCL's ratio of that protocol's per-step ring
 * latency to Simple's on the same kind of hardware (links and switches:
 * NVLink; NICs: the network), and its bandwidth by NCCL's ring efficiency
 * for the protocol.  Every figure is NCCL's own (src/graph/tuning.cc:
 * hwLatencies and the ring refinements of ncclTopoTuneModel; docs/design.md
 * §4 lists them).  A chip/cluster device has no protocols: its hops cost
 * the same under every one.  Local copies and reductions do not depend on
 * the protocol, and neither do the lower bounds (a bound on every
 * schedule). */
typedef enum { COST_SIMPLE, COST_LL, COST_LL128, COST_NPROTO } cost_proto;

/* "Simple", "LL" or "LL128" (exact) into *out; 0 if it is none of them. */
int cost_proto_parse(const char *s, cost_proto *out);
const char *cost_proto_name(cost_proto p);

/* rt as protocol p moves data over it in topology t: alpha and bandwidth
 * scaled as above (unchanged for Simple), and lat_us the runtime's
 * per-step latency for p where t has a runtime_latency (rt unchanged on a
 * chip device, a route to self or none). */
topo_route cost_proto_route(const topo *t, topo_route rt, cost_proto p);

/* The runtime's base latency for one call of a program of protocol p on
 * t (NCCL's ring baseLat where t has a runtime_latency; 0 otherwise, and
 * on a chip device). */
double cost_call_us(const topo *t, cost_proto p);

/* The same for a program of switch operations (multimem loads and stores,
 * docs/nvls.md) on t, over one node or several: NCCL's NVLS latency per
 * call where t has NCCL's runtime latency (topo_nccl_nvls_latency), else
 * cost_call_us's Simple figure. */
double cost_switch_call_us(const topo *t, int several_nodes);

/* NCCL's default connection buffers, COST_FIFO_SLOTS steps each: one step
 * of protocol p is 512 KiB under Simple (DEFAULT_BUFFSIZE 4 MiB), 64 KiB
 * of LL lines (8 lines x 512 threads x 16 bytes a step) and 614400 bytes
 * of LL128 lines (120 x 640 x 8); the data they carry is all of it under
 * Simple, 4 bytes in 8 under LL and 120 in 128 under LL128.  The data
 * bytes of `steps` steps: */
long long cost_proto_steps_bytes(cost_proto p, int steps);

/* Data bytes of each chunk that one pass of the runtimes' interpreter moves
 * under protocol p (msccl's mscclSetupCount and kernel loop): Simple,
 * MSCCL_CHUNKSTEPS (4) steps, 2 MiB; LL and LL128 one step, 32 KiB and
 * 576000.  A chunk larger than that takes several passes of the whole
 * program (docs/design.md section 8). */
long long cost_proto_tile_bytes(cost_proto p);

/* The most GB/s a resource of `bw_gbps` and `alpha_us` (as the topology
 * gives them, for Simple) carries in the runtimes' tile passes: there every
 * operation moves at most one tile of its protocol and holds the resource
 * alpha + bytes / B for it, so a byte costs at least alpha_p / tile_p +
 * 1 / B_p under protocol p; the least of those over the protocols, as
 * GB/s (bw_gbps itself where alpha is a delay, or 0; nic: the network's
 * protocol figures).  What a bound in the passes uses (bound.h). */
double cost_tile_gbps(const topo *t, double alpha_us, double bw_gbps, int nic);

/* The smallest alpha a hop of `alpha_us` (as the topology gives it, for
 * Simple) costs under any protocol: what a lower bound on every schedule
 * must use (nic: the hop crosses the network).  alpha_us on a chip device. */
double cost_alpha_floor(const topo *t, double alpha_us, int nic);

/* Microseconds of local work on `bytes`: a copy, or a reduction. */
double cost_copy_us(const topo *t, double bytes);
double cost_reduce_us(const topo *t, double bytes);

/* Data bytes the runtimes' primitives receive and reduce at a time under
 * protocol p: a slice, MSCCL_SLICESTEPS (2) steps under Simple, 1 MiB
 * (msccl-executor-nccl src/device/prims_simple.h genericOp: wait for a
 * slice, reduce it, release it); one step under LL and LL128. */
long long cost_reduce_slice_bytes(cost_proto p);

/* When a step that receives `bytes` and reduces them into a buffer (rrc,
 * rrs, rrcs) has reduced them.  The runtimes reduce a transfer slice by
 * slice as it lands, so the reduction runs alongside the transfer: from
 * when its first bytes have landed (`landed` less bytes at the route's
 * bandwidth bw_gbps) or the threadblock reached the step (`ready`),
 * whichever is later, at reduce_gbps; and it ends no sooner than one
 * slice's reduction after the last bytes landed.  A threadblock that
 * reaches the step after the data has landed reduces it all then:
 * ready + bytes / reduce_gbps, as a receive then a reduction. */
double cost_reduce_end_us(const topo *t, cost_proto p, double bw_gbps, double bytes,
                          double landed, double ready);

/* How long after its last byte lands a receive of `bytes` over a route of
 * bw_gbps has reduced them, when its threadblock is at the step from the
 * first byte: what a planner adds to a reducing transfer's arrival. */
double cost_reduce_tail_us(const topo *t, cost_proto p, double bw_gbps, double bytes);

/* ------------------------------------------------------------ lanes */

/* The time each lane of each resource becomes free. */
typedef struct cost_lanes cost_lanes;

cost_lanes *cost_lanes_new(const topo *t);
void cost_lanes_free(cost_lanes *L);

/* Every lane free at time 0 again. */
void cost_lanes_reset(cost_lanes *L);

/* The lane of resource r freed first (lowest on ties), as an index of the
 * resource's lanes, and the time it is free. */
int cost_lanes_pick(const cost_lanes *L, int r, double *free_at);

/* When a transfer holding res[0..n-1] and ready at `ready` starts: the
 * latest of `ready` and each resource's first-free lane; lane[k] gets the
 * lane of res[k] it takes (may be NULL). */
double cost_lanes_start(const cost_lanes *L, const int *res, int n, double ready, int *lane);

/* 1 where a request made at `now`, whose resources are all free first at
 * `start` (cost_lanes_start), must wait instead of booking them: start is
 * later than now and the topology's arbitration is "ready" (not
 * "reserve"). */
int cost_must_wait(const topo *t, double start, double now);

/* The first of res[0..n) with no lane free at `now`, or -1. */
int cost_lanes_busy(const cost_lanes *L, const int *res, int n, double now);

/* Hold lane[k] of res[k] until `end`. */
void cost_lanes_hold(cost_lanes *L, const int *res, const int *lane, int n, double end);

#endif
