/* route.h — stage 1 of synthesis: which hops carry each chunk (routing MILP).
 *
 * For AllGather and AllToAll (ReduceScatter and AllReduce are built from a
 * routed AllGather by the later stages).  A chunk is (origin, index) of the
 * origin's input (algo.h): AllGather has chunkup k chunks per rank, each
 * needed by every other rank; AllToAll has n * k per rank, chunk index
 * d * k + j needed by rank d only (coll_in_dests; the origin keeps what it
 * needs itself, with no hop).  A hop is a point-to-point send a -> b over
 * topo_route_of(t, a, b), costing alpha + chunk_bytes / B.
 *
 * CANDIDATE HOPS (pruning), per chunk, in the sketch's graph: intra-node
 * hops (direct link or shared switch) inside the origin's node and inside
 * every node holding a destination; inter-node hops only out of the origin's
 * node, only on pairs the sketch allows (internode_conn) and only from ranks
 * the chunk may leave through (gpus_to_sender_rev_map; without one, any rank
 * with an allowed pair).  Of those, a hop u -> v is a candidate when some
 * path origin -> ... -> u -> v -> ... -> d through it, for a destination d,
 * has at most `slack` more hops than the shortest origin -> d path in that
 * graph (slack < 0: no distance pruning).  So relays the sketch asks for are
 * always possible (strict physical shortest paths would forbid them).  With
 * symmetries only one chunk per orbit is searched; the others take its
 * candidates and cheapest arrivals carried by the symmetry.
 *
 * UNREACHABLE RANKS: a destination outside a chunk's graph is TC_INPUT
 * before any solver runs, naming the chunk, the rank and the rule that
 * forbids it — the first whose removal lets the chunk reach the rank:
 * gpus_to_sender_rev_map, internode_conn (both as "FILE:LINE: KEY: ..."
 * of the sketch), the relay rule (internode_sketch.strategy, or the
 * topology file when the sketch has no internode_sketch), else the
 * topology has no path at all.  The other keys (switches and their
 * strategies, symmetry_offsets, enforce_ordering) never remove a hop.
 *
 * SIZE: a model whose search (orbits x ranks x (ranks + hops)) exceeds
 * 2e9 steps is refused at once, TC_INPUT, pointing at symmetry_offsets:
 * torus-2d-32x32 with its symmetries (1 orbit) is built in seconds, the
 * same torus without them (1024 orbits, 5e9 steps and a MILP of 2 million
 * binaries) is not.
 *
 * THE MILP (minimise time [+ the sketch's connection term]):
 *   x[c,h]  binary: chunk c takes candidate hop h;
 *   a[c,v]  continuous: when c reaches rank v (0 at the origin);
 *   time    the relaxed makespan.
 *   each destination receives c exactly once, any other rank at most once;
 *   a non-destination forwards c only if it receives it;
 *   a[c,v] >= a[c,u] + cost(h) when x[c,h] (big-M, M = U + cost(h) - lb(v)
 *     with U the stage-2 makespan of the heuristic routing below and lb(v)
 *     the cheapest arrival over candidate hops; a and time live in [lb, U]);
 *   time >= a[c,d] for every destination d;
 *   bandwidth relaxation: time >= (sum of cost * x over the hops using a
 *     resource) / lanes, for every link direction (lanes = multiplicity),
 *     switch out port and in port, NIC egress and ingress (order.h numbers
 *     them); and time >= a[c,u] + the cost of c's sends out of a
 *     destination u through one switch port or NIC;
 *   relay cut: c enters every other node that holds a destination;
 *   enforce_ordering: on an inter-node hop s -> r, a chunk s relays
 *     arrives at r at least one hop cost after each of s's own chunks taking
 *     that hop (big-M on both x);
 *   uc-min / uc-max: one binary per switch connection (ordered rank pair on a
 *     sketch switch) >= each x through it (uc-min) or <= their sum (uc-max),
 *     objective +0.01 (uc-min) or -0.01 (uc-max) per connection used;
 *     minmax / maxmin strategies: +/-0.01 * the largest / smallest resource
 *     load, as TACCL does.
 * SYMMETRY is substituted, not added as rows: the sketch's rotations
 * (symmetry_offsets) act on ranks, chunks (origin and destination) and
 * hops; one column per orbit of (chunk, hop), of (chunk, rank), of switch
 * connections; per-chunk rows for one chunk per orbit, resource rows for
 * one resource per orbit.  The routing found is therefore symmetric.
 *
 * SEEDING: the heuristic routing (route_heuristic) is scheduled by stage 2;
 * its makespan is U, and the routing with its uncontended arrival times is
 * given to GLPK as the incumbent (presolver off, as lp.h requires), so a
 * time limit always leaves a valid routing.  Should the solver return
 * nothing usable (no solution in time, a numerical failure, CBC's crash),
 * route_solve returns the heuristic routing and says so (stats.fallback);
 * a stop request or the solver's memory limit is an error instead.
 *
 * A COARSE SEED (route_opts.coarse): with chunkup k, the routing found at
 * chunkup k / f (f pieces per coarse chunk, each piece on its coarse
 * chunk's tree) is scheduled by stage 2 beside the heuristic's and the
 * faster seeds the MILP.  The coarse MILP is f times smaller, so it is
 * solved quickly; the fine MILP then starts from its makespan instead of
 * the heuristic's (DGX-2 x2, one sender per NIC, chunkup 2 at 1 GiB: the
 * heuristic's 11166 us left GLPK at its 30 s limit; from the chunkup-1
 * routing's 8074 us, see synth.c).  A seed that does not fit (a hop that
 * is not a candidate of its piece, a chunkup it does not divide) is
 * ignored.
 *
 * SPARE NICS: on several nodes, where a chunk costs some NIC at least its
 * alpha in bytes, the seed (heuristic or coarse) is then
 * improved by moves that give a rank of another node a chunk straight
 * across the NICs instead of from a relay of its own node, each tried on an
 * orbit representative (carried to its orbit) and kept while stage 2's
 * makespan does not grow; the moved trees seed the MILP only if they end
 * shorter.  A coarse routing cannot hold such a move when the NICs' spare
 * capacity is less than one coarse chunk: on DGX-2 x2 at chunkup 2, with
 * every GPU allowed its NIC partner's counterpart, half of the chunks cross
 * twice, the switch ports carry 59 transfers instead of 60 and the NICs 6
 * instead of 4 (8074 -> 8069 us), which GLPK does not find from the
 * coarse seed within its time limit.
 *
 * Times are in microseconds.  Deterministic except when a time limit cuts
 * GLPK short. */
#ifndef TC_ROUTE_H
#define TC_ROUTE_H

#include "../lp/lp.h"
#include "../model/sketch.h"
#include "../model/topo.h"
#include "../util/err.h"
#include "../sched/algo.h"

typedef struct {
    double time_limit_s;    /* MILP wall-clock limit; <= 0 none (default 0) */
    double mip_gap;         /* relative gap to stop at; 0 = prove (default 0) */
    int slack;              /* hops beyond the shortest a path may take (default 1);
                               < 0 keeps every hop of the sketch's graph */
    int use_symmetry;       /* substitute symmetry_offsets (default 1) */
    int seed;               /* heuristic incumbent (default 1) */
    int cuts;               /* GLPK's cut generators (default 1: on DGX-2 x2 sk-1
                               at 1 MB they cut the proof from 37 s to 1.8 s) */
    int heuristics;         /* GLPK's feasibility pump + proximity search (default 0) */
    int latency;            /* route_heuristic: latency-first trees, no load
                               (default 0) */
    const algo *coarse;     /* a routing of the same sketch and collective at a
                               coarser chunkup that divides this one's (NULL:
                               none, the default): each chunk takes the tree
                               of the coarse chunk it is a piece of, and that
                               routing seeds the MILP instead of the heuristic
                               when stage 2 schedules it faster */
    int build_only;         /* build and measure the model, do not solve:
                               *out is the heuristic routing (default 0) */
    int verbose;            /* GLPK's log on stderr (default 0) */
    int quiet;              /* no progress lines on stderr (default 0) */
    lp_backend backend;     /* default LP_GLPK */
    int mem_limit_mb;       /* GLPK's memory limit (lp_opts.mem_limit_mb); 0 none */
} route_opts;

typedef struct {
    int nchunks;            /* chunks of the collective (n * chunks per rank) */
    int nreps;              /* one per orbit (= nchunks without symmetry) */
    int nslots;             /* candidate (chunk, hop) pairs before substitution */
    int symmetric;          /* 1 if symmetry was substituted */
    int ncols, nbin, nrows, nnz;
    double build_s;         /* heuristic + model construction, seconds */
    double solve_s;         /* lp_solve, seconds (0 if not solved) */
    lp_status status;       /* LP_UNSOLVED when not solved (build_only) */
    double objective;       /* MILP objective (time +/- connection term); NAN if none */
    double best_bound;      /* proven bound on it; NAN if unknown */
    double gap;             /* relative gap; NAN if unknown */
    double time_us;         /* the MILP's relaxed makespan `time`; NAN if none */
    double heur_makespan_us;    /* stage-2 makespan of the incumbent: the heuristic
                                   routing, or the coarse seed's if faster (= U) */
    double heur_relaxed_us;     /* the incumbent's relaxed makespan (its time) */
    double coarse_makespan_us;  /* stage-2 makespan of the coarse seed's routing;
                                   NAN if none given or it did not fit; the
                                   incumbent when it equals heur_makespan_us */
    int spare_nics;             /* 1: the seed was improved by SPARE NICS moves */
    double heur_objective;      /* the incumbent's objective */
    int incumbent_used;     /* as lp_result.incumbent_used */
    int fallback;           /* 1: *out is the heuristic routing, see msg */
    int connections;        /* switch connections (ordered pairs) the result uses */
    char msg[512];          /* one line: what happened */
} route_stats;

void route_opts_init(route_opts *o);

/* Stage 1.  s must have passed sketch_check(s, t); k is COLL_ALLGATHER or
 * COLL_ALLTOALL; every chunk moves chunk_bytes bytes.  On TC_OK *out is a new
 * algo (algo_free): chunks_per_rank = s->chunkup (AllGather) or
 * n * s->chunkup (AllToAll), one send per hop, ordered by chunk (origin,
 * index) and, within a chunk, by depth in its tree, then arrival, then
 * receiver (so a hop always comes after the hop that fed it);
 * t_arrive = the MILP's arrival a[c,dst], t_send = t_arrive - cost (relaxed
 * times: stage 2 replaces them); predicted_us = the MILP's `time` (a
 * relaxation: the routing's real makespan is at least this).  With a
 * fallback or build_only, the heuristic routing with uncontended times.
 * st may be NULL.  TC_INPUT for another collective, chunk_bytes <= 0, a
 * sketch for another node count, a destination the sketch cannot reach, a
 * model over the size limit, or GLPK's memory limit exceeded; TC_STOP on a
 * stop request (lp.h). */
int route_solve(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                const route_opts *o, algo **out, route_stats *st, tc_err *err);

/* The heuristic routing, no solver: per chunk a tree over the candidate
 * hops (so it is feasible in the MILP), grown from the origin by adding, one
 * at a time, the hop that would finish earliest — its sender's arrival or
 * the load earlier hops put on its resources, whichever is later, plus its
 * cost (ties: the lower (sender, receiver)); relays left without a
 * receiver are dropped.  With o->latency the load is not counted: each
 * chunk gets the tree of its earliest uncontended arrivals (fewest alphas),
 * and chunks entering a node at the same relay share the tree below it, so
 * stage 3 can send them together (the latency-first routing, synth.h).
 * Symmetric under the sketch's symmetries when
 * o->use_symmetry (one tree per orbit, carried to the rest).  Times are
 * uncontended arrivals (t_send = arrival at src); predicted_us = -1.
 * Schedule it with order_schedule().  o may be NULL (defaults). */
int route_heuristic(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                    const route_opts *o, algo **out, tc_err *err);

/* Judge a routing of collective k: every chunk reaches each of its
 * destinations exactly once, no rank receives a chunk twice or forwards one
 * it does not hold, nothing returns to the origin, every hop has a route;
 * with a sketch (s may be NULL), also its relay rules: inter-node hops
 * leave the chunk's origin node, on allowed (sender, receiver) pairs, from
 * a sender the chunk may leave through.  TC_OK; TC_WRONG naming the first
 * violation; TC_INPUT for an algo that does not fit t or k. */
int route_check(const algo *a, const sketch *s, const topo *t, coll_kind k, tc_err *err);

#endif
