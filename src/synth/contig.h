/* contig.h — synthesis stage 3: contiguity and exact scheduling.
 *
 * Stages 1 and 2 fix every chunk's route (each send is one hop of one
 * chunk) and an order: the stage-2 times say which send goes first on every
 * shared resource.  This stage decides which neighbouring sends on the same
 * (src, dst) pair travel together as ONE transfer (a "group": one alpha and
 * k * chunk_bytes / B for k chunks instead of k alphas — the win on slow
 * inter-node links with a big alpha) and which go one by one (so the first
 * chunks can be forwarded earlier), and it computes the exact send times,
 * minimising the makespan.  The decision is a MILP solved with GLPK, or CBC
 * with opts.backend (lp/lp.h); the times are then recomputed exactly by a longest-path pass,
 * which alone (no grouping) is also offered as contig_schedule().
 *
 * ---- Timing model (the executor's, exec/sim.h) ------------------------------
 * A transfer of k chunks from a to b takes cost_hop_us(route(a, b),
 * k * chunk_bytes) = alpha + k * chunk_bytes / B on topo_route_of(t, a, b).
 * While it runs it holds its resources: a direct link direction (`mult`
 * lanes), the out port of a and the in port of b on a switch, or the
 * egress direction of a's NIC and the ingress direction of b's NIC.  A
 * transfer starts as soon as (1) every chunk in it is present at a and
 * (2) the transfer before it on each of its resources (lanes) has ended:
 *     start = max(data ready, previous transfer's end on each resource)
 *     end   = start + alpha + k * chunk_bytes / B          (= t_arrive)
 *     ready = end + r * chunk_bytes / reduce bandwidth     (r = its sends with
 *             reduce = 1; a receive that reduces ends that much later)
 * and the makespan (predicted_us) is the latest `ready`.  Where the
 * topology's alpha is a delay (t->alpha_delay) a transfer frees its
 * resources and its sender at start + k * chunk_bytes / B and still ends
 * (lands) alpha later: "the transfer before it has ended" reads "has freed
 * them" (cost_hold_us).  This is exactly
 * the executor's "earliest start, first come first served" behaviour as long
 * as the executor meets the transfers in the same order on every resource.
 * The lowering keeps a rank's own order per out port and NIC (sched/lower.h)
 * but cannot order different senders at a shared in port or NIC: there the
 * executor serves requests by time, lowest rank first.  So the MILP uses the
 * fixed order above, and the chosen grouping is then re-timed by replaying
 * the executor's arbitration (the output's times are that replay).
 *
 * ---- What the input must be ------------------------------------------------
 * `in` is an ordered abstract algorithm (sched/algo.h): every send has src
 * != dst, a route in t, and finite t_send / t_arrive from stage 2.  Only
 * their ORDER is used, never their values as such:
 *   - Order on a resource = sends sorted by (t_send, src, dst, index in
 *     in->sends); the same key orders the sends of one pair.
 *   - A link with mult > 1 is mult lanes; each transfer keeps the lane the
 *     stage-2 times give it (walking the link's transfers in that order, each
 *     takes the lane that became free first by stage-2 t_arrive, lowest lane
 *     on ties — the executor's rule).  Lanes are ordered independently, so
 *     two sends of one pair may overlap on two lanes (the lowering puts them
 *     on different channels).  The executor picks lanes at run time and may
 *     pick others; with mult == 1 (every bundled GPU topology) there is no
 *     difference.
 *   - Data: the send of a chunk from rank X waits for every send that
 *     brought that chunk to X with stage-2 t_arrive <= its t_send (+1e-7
 *     relative).  A chunk is (origin, index) for AllGather/AllToAll and the
 *     partial sum of `index` for the reductions (origin ignored, as in the
 *     lowering), so a ReduceScatter relay waits for all the partials it got
 *     and an AllReduce AllGather-phase send waits for the final sum.  For
 *     AllGather/AllToAll a send from X != origin with no such arrival is an
 *     error (the chunk is not there).
 *   - The order must be acyclic (a stage-2 schedule always is); a cycle is an
 *     error naming one send on it.
 * Times need not be consistent with the costs (only order matters), so a
 * stage 2 with a coarser cost model is fine.
 *
 * ---- Grouping (contig_solve) -------------------------------------------------
 * Only sends j-1, j that are consecutive on their pair AND consecutive on
 * every resource they use (no other transfer between them in the fixed
 * order, lane included) may be grouped, and only when they have the same
 * reduce flag and the pair is a candidate: its route goes through NICs (with
 * opts.nic_always) or its alpha >= opts.alpha_frac * (alpha + chunk_bytes/B).
 * One binary per such j ("j joins the group of j-1"); groups are maximal
 * runs, at most opts.max_group sends.  No ordering binaries: the order is
 * the input's, a group takes its first member's place in it.
 * The MILP has, per send, start s and group arrival a (and, for groupable
 * sends, a prefix finish f counting the group's bytes), makespan z, and
 *   a >= s + alpha + beta (via f); s_j >= a_{j-1} unless grouped;
 *   grouped: s_j = s_{j-1}, f_j >= f_{j-1} + beta, a_{j-1} >= a_j;
 *   next on a resource: s_v >= a_u (a_u - alpha_u where alpha is a delay);
 *   data: s >= ready of the feeding group;
 *   z >= every ready nothing else waits on; group size windows;
 *   work cuts (no big-M, they make the LP bound useful): on each lane that
 *   holds a binary, for every segment u..v of its order,
 *     a_v - s_u >= sum of beta + alpha_u + sum_{w in (u, v]} alpha_w (1 - y_w),
 *   all segments at once through two extra columns per lane element
 *   (cumulative work P and a running max M: a_x >= P_x + M_x); none
 *   where alpha is a delay (a lane's work is then its bytes alone).
 * (Groupable reduce sends use ready = a + (a - s - alpha) * reduce/beta,
 * exact for a tight group.)  Big-M's are per row from variable bounds: a
 * lower bound from the longest path with every send at its one-chunk cost
 * and candidate edges relaxed, an upper bound = incumbent makespan minus the
 * shortest possible remaining path.  The incumbent handed to GLPK (presolver
 * off, so a time limit always yields a schedule) is the stage-2 order
 * rescheduled without groups, improved first by a deterministic local
 * search (moves: toggle one binary, or shift a group boundary by one send;
 * a move is kept when the makespan does not grow and the ranks' completion
 * times, sorted latest first, drop lexicographically — so a merge that
 * helps one NIC direction is kept while the other still sets the makespan —
 * or stay and the sum of arrivals drops).  The MILP's answer is polished by
 * the same search and rescheduled exactly.  The result is therefore never
 * worse than contig_schedule() of the input, hence never worse than any
 * schedule that keeps the input's order (the input's own, if its times
 * follow the costs).
 *
 * Groups are a REQUEST to the lowering: it merges a group into one step
 * only where the chunks are contiguous in the source and destination
 * buffers and splits it into contiguous runs otherwise (one alpha per run,
 * so the executed time then exceeds predicted_us).  max_group <= 71 keeps
 * cnt < 72 either way.
 *
 * ---- Output ----------------------------------------------------------------
 * *out is a new algo (algo_free) with the input's collective, ranks,
 * chunks_per_rank and its sends in the SAME order and with the same chunk,
 * src, dst and reduce fields; t_send = start and t_arrive = end of the
 * transfer each belongs to (members of a group share both); group = a
 * number >= 0 shared by the members of one transfer of two or more sends,
 * numbered 0, 1, ... in the fixed order (so unique across the whole
 * algorithm, hence per pair), -1 for a send travelling alone;
 * predicted_us = makespan.  Deterministic: the same input and options give
 * the same output, unless a time limit cuts GLPK short (then the output is
 * still valid and never worse, but may depend on machine speed). */
#ifndef TC_CONTIG_H
#define TC_CONTIG_H

/* Above this many grouping candidates the MILP is not built (its memory
 * grows past several GiB): the local search's grouping is kept. */
#define CONTIG_MILP_CANDIDATES 200000

#include "../lp/lp.h"
#include "../model/topo.h"
#include "../util/err.h"
#include "../sched/algo.h"
#include "../model/cost.h"

typedef struct {
    double time_limit_s;    /* wall-clock limit of the MILP solve; <= 0 = none.
                               Default 60 */
    double mip_gap;         /* relative gap at which GLPK stops; default 0 (prove) */
    int quiet;              /* 1 = nothing on stderr; default 0: one line on the
                               model size, one on the result */
    int solver_verbose;     /* 1 = the solver's own log on stderr too; default 0 */
    lp_backend backend;     /* MILP solver; default LP_GLPK */
    double alpha_frac;      /* a non-NIC pair is a grouping candidate when its
                               alpha >= alpha_frac * (alpha + chunk_bytes / B);
                               default 0.25; 0 = every pair; > 1 = none */
    int nic_always;         /* 1 = NIC (inter-node) pairs are always candidates;
                               default 1 */
    int max_group;          /* most sends in one group, 2..71; default 71 */
    int local_search;       /* 1 = local search before and after the MILP;
                               default 1 */
    int milp;               /* 1 = solve the MILP; 0 = local search only (a fast,
                               weaker mode for very large instances); default 1 */
    int cuts;               /* 1 = GLPK's cut generators (lp_opts.cuts); default 1:
                               they close gaps faster on these models */
    int mem_limit_mb;       /* GLPK's memory limit (lp_opts.mem_limit_mb); default 0
                               = none.  Exceeding it is an error (TC_INPUT), not a
                               fallback to the incumbent */
    int heuristics;         /* 1 = GLPK's feasibility pump + proximity search;
                               default 0: better solutions on hard instances, but
                               GLPK's proximity search runs up to 60 s of its own
                               and overruns time_limit_s */
} contig_opts;

typedef struct {
    int nsends;
    int candidates;         /* binaries: sends that may join their predecessor */
    int candidate_pairs;    /* (src, dst) pairs holding at least one */
    int ncols, nrows, nnz;  /* MILP size; 0 when no MILP was built */
    lp_status status;       /* GLPK's outcome; LP_UNSOLVED when no MILP ran */
    double seconds;         /* GLPK's wall-clock time */
    double total_seconds;   /* the whole call */
    double objective;       /* MILP makespan found; NAN without */
    double best_bound;      /* proven lower bound on it; NAN if unknown */
    double gap;             /* GLPK's relative gap; NAN if unknown */
    int incumbent_used;     /* lp_result.incumbent_used (1 = GLPK took it) */
    int nodes;              /* branch-and-bound nodes */
    double input_us;        /* input as given: max t_arrive (+ reduce cost) */
    double ungrouped_us;    /* contig_schedule() of the input, no groups */
    double incumbent_us;    /* after the first local search (= ungrouped_us
                               without it) */
    double milp_exact_us;   /* exact makespan of the MILP's grouping before the
                               polishing search (<= objective); NAN without */
    double result_us;       /* predicted_us of the output */
    int ngroups;            /* transfers of >= 2 sends in the output */
    int grouped_sends;      /* sends in them */
    int ntransfers;         /* transfers in the output (groups + lone sends) */
    char msg[256];          /* one line: what happened (e.g. why GLPK's answer
                               was not used) */
} contig_stats;

void contig_opts_default(contig_opts *o);

/* Exact scheduling alone: the earliest times for the input's routes, order
 * and groups (a group = the sends of one pair sharing a `group` >= 0; it
 * takes its first member's place in every order), by one longest-path pass
 * over the precedence graph — no solver.  *out as described above (groups
 * renumbered; a one-send group becomes -1).  The pipeline's fallback and the
 * tests' reference.  TC_INPUT with err set (and *out NULL) for an input
 * that cannot be scheduled: a send without a route, a chunk sent before it
 * is at its sender, a cycle in the order, chunk_bytes <= 0. */
int contig_schedule(const algo *in, const topo *t, double chunk_bytes, algo **out,
                    tc_err *err);

/* The same, but timed as the executor will serve the requests (replay of
 * its first-come-first-served arbitration at shared ports and NICs, as
 * contig_solve() times its result), for re-timing a schedule after the
 * lowering split or staged some of its groups: groups as in
 * contig_schedule(); the largest pre_us of a transfer's sends delays its
 * start after its data is ready (the sender copies each chunk as it
 * arrives, so mostly the last copy is left) and, here, their sum delays it
 * after the previous transfer on its pair has ended (the sending tb copies
 * only then); the post_us of its sends add
 * to the time its data is ready after arrival, and their place_us to the
 * time it is complete (the makespan), not to when it can be sent on.  For a
 * schedule whose groups are already chosen (synth.c's AllReduce joins two
 * solved phases), this is the time taccl-run will measure. */
int contig_replay(const algo *in, const topo *t, double chunk_bytes, algo **out, tc_err *err);

/* Stage 3: choose the groups (input groups are ignored: every send starts
 * alone) and the exact times as above.  o may be NULL (defaults), st may be
 * NULL.  TC_OK whenever a schedule came out — also when GLPK hit the time
 * limit, failed, or was not needed (no candidates): st says which.
 * TC_INPUT as for contig_schedule(), or for invalid options. */
int contig_solve(const algo *in, const topo *t, double chunk_bytes, const contig_opts *o,
                 algo **out, contig_stats *st, tc_err *err);

#endif
