/* synth.h — the synthesizer pipeline: sketch + topology -> MSCCL program.
 *
 * TACCL's three stages in a row, each through the project's solver wrapper:
 * stage 1 routes every chunk (route.h: the routing MILP, seeded with a
 * heuristic routing so a time limit still yields one), stage 2 orders the
 * sends on every link and port by greedy list scheduling under the
 * executor's timing model (order.h), stage 3 decides which neighbouring
 * sends travel together and fixes the exact times (contig.h); the result is
 * lowered to a program (sched/lower.h) that records the topology, the size
 * and the predicted time.  Progress goes to stderr unless quiet.
 *
 * ReduceScatter and AllReduce (docs/design.md §6) are built from the AllGather:
 * stages 1 and 2 route and order the AllGather, reverse.h turns it into the
 * ReduceScatter (sends reversed in time, receive-and-reduce), and stage 3
 * re-solves contiguity and exact times on the reversed links.  AllReduce
 * also solves stage 3 on the AllGather itself, then joins the two solved
 * phases twice — the AllGather after the whole ReduceScatter ("barrier")
 * and each chunk's AllGather tree once its sum is complete ("pipeline") —
 * times each as the executor will run it (contig_replay) and with stage 3's
 * local search (no MILP), the faster timing of each join kept.  So
 * AllReduce runs the contiguity MILP twice, each under the contiguity time
 * limit.
 *
 * Candidates.  One call may build several schedules: the routing MILP's
 * and the latency-first routing's (synth_opts.route), the hierarchical
 * rings and node blocks (synth_opts.rails), and for AllReduce both joins
 * of each routing.  Each goes on one list (synth_stats.cands, in the order
 * tried) with its predicted time, or as an entry saying why it failed or
 * was not tried; one rule keeps the fastest, a tie (1e-9 us) going to the
 * one tried first (cands.h). */
#ifndef TC_SYNTH_H
#define TC_SYNTH_H

#include "../lp/lp.h"
#include "../model/runtime.h"
#include "../model/sketch.h"
#include "../model/topo.h"
#include "../sched/program.h"

typedef struct {
    int has_coll;           /* 1: coll overrides the sketch's collective */
    coll_kind coll;
    long long size_bytes;   /* 0 = the sketch's input_size, else 1 MiB */
    double route_time_s;    /* 0 = the sketch's, else 60 */
    double contig_time_s;   /* 0 = the sketch's, else 30 */
    double mip_gap;         /* < 0 = the sketch's, else 0 */
    lp_backend backend;
    int instances;          /* lowering: replicate on k channel sets (default 1) */
    runtime runtime;        /* whose limits the lowering respects (RT_MSCCL) */
    int quiet;
    int verbose;            /* GLPK's own log too */
    int mem_limit_mb;       /* GLPK's memory limit per MILP solve; 0 = none */
    int hierarchical;       /* stage 1 on one node + rails (hier.h): 1 always,
                               -1 never, 0 (default) when the cluster has
                               SYNTH_HIER_RANKS ranks or more over >= 2 nodes */
    int rails;              /* hierarchical AllGather between nodes:
                               SYNTH_RAILS_* (hier.h: rings or node blocks) */
    int route;              /* flat stage 1: SYNTH_ROUTE_* */
    int also_instances;     /* > 1: also lower the same algorithm with this
                               many instances, into synth_stats.also */
    int tiles;              /* judge the candidates as the runtimes run them,
                               once per tile pass (sched/tile.h, taccl-run
                               --tiles): each built entry's us becomes its
                               lowered program's tiled time (sched/ptime);
                               taccl-synth sets it in sketch mode on a GPU
                               topology unless --steps */
} synth_opts;

enum {
    SYNTH_RAILS_BEST = 0,   /* both, the faster kept */
    SYNTH_RAILS_RING = 1,
    SYNTH_RAILS_BLOCKS = 2
};

/* Flat stage 1.  The routing MILP minimises a makespan in which every
 * chunk pays its own alpha on every hop, so it spreads chunks over paths;
 * when alpha outweighs the bytes, sending many chunks as one message over
 * shared paths is faster.  The latency-first routing gives each chunk the
 * tree of its earliest uncontended arrivals (route_opts.latency: fewest
 * alphas, the same tree below a common relay for every chunk entering
 * there), so stage 3 can merge the chunks that share hops. */
enum {
    SYNTH_ROUTE_AUTO = 0,   /* the MILP; also latency-first when alpha-bound
                               (synth_alpha_bound), the faster kept */
    SYNTH_ROUTE_MILP = 1,   /* the MILP only */
    SYNTH_ROUTE_LATENCY = 2,    /* latency-first only (no MILP) */
    SYNTH_ROUTE_BEST = 3,   /* both, the faster kept */
    SYNTH_ROUTE_TREES = 4   /* the packed trees only (synth/pack; no MILP):
                               an AllGather or a reduction reversed from one */
};

/* 1 when a chunk of chunk_bytes costs less than its alpha on every link,
 * switch and NIC of t: the sizes where SYNTH_ROUTE_AUTO tries both. */
int synth_alpha_bound(const topo *t, double chunk_bytes);

/* The routing MILP's default relative gap (stage 3's is 0): a sketch's
 * solver.mip_gap or --gap sets both. */
#define SYNTH_ROUTE_GAP 1e-3

/* The cluster size from which stage 1 is hierarchical by default. */
#define SYNTH_HIER_RANKS 64

/* What the pipeline tried (docs/design.md §6, "Candidates"): every
 * strategy it considered for this call adds one entry per schedule it
 * built (an AllReduce routing gives two, one per join), or one saying why
 * it failed or was not tried; cands_pick (cands.h) keeps the fastest. */
#define SYNTH_MAX_CANDS 8

typedef enum {
    SYNTH_CAND_OK = 0,      /* built: us is its predicted time */
    SYNTH_CAND_FAILED,      /* tried, no schedule: note says why */
    SYNTH_CAND_SKIPPED      /* not tried: note says why */
} synth_cand_state;

typedef struct {
    char label[32];         /* routing, then "/barrier" or "/pipeline" for an
                               AllReduce join: "milp/pipeline" */
    char routing[16];       /* "milp", "latency-first", "hier-rings",
                               "hier-direct" (AllToAll), "hier-blocks" */
    int join;               /* reverse_join of an AllReduce candidate; -1 */
    synth_cand_state state;
    double us;              /* predicted makespan: stage 3's (or the replay's),
                               timed as the executor runs it; NAN unless OK */
    char note[320];         /* how it was built, or why it failed or was
                               skipped */
} synth_cand;

typedef struct {
    double route_s, order_s, contig_s, lower_s;   /* wall seconds per stage */
    double baseline_s;      /* wall seconds building and timing the candidates
                               built as programs (hier-halving) */
    double route_us;        /* stage 1's relaxed makespan */
    double order_us;        /* stage 2's makespan */
    double contig_us;       /* stage 3's makespan, re-timed with what the
                               lowering made of each send; the prediction is
                               the written program's time (sched/ptime) */
    double route_gap;       /* stage 1's MIP gap (NAN if unknown) */
    int route_fallback;     /* 1: stage 1 returned the heuristic routing */
    lp_status route_status; /* stage 1's MILP outcome (LP_UNSOLVED: none ran) */
    double contig_gap;      /* stage 3's MIP gap, the largest over its solves,
                               every candidate's (NAN if unknown or no MILP ran) */
    lp_status contig_status;    /* stage 3's MILP outcome, the least proven over its
                                   solves, every candidate's (LP_UNSOLVED: no MILP
                                   was needed) */
    int contig_failed;      /* a stage-3 MILP failed (solver error): its incumbent kept */
    long long chunk_bytes;
    int nsends;
    int groups;             /* contiguity groups formed */
    int contig_solves;      /* stage-3 MILP solves run (1; AllReduce 2; each
                               candidate routing's) */
    /* The figures below are read off cands once the winner is kept:
     * order_us and rs_us are its routing's (the node blocks, which have no
     * stages 2 and 3, give the rings'). */
    double rs_us;           /* reductions: the ReduceScatter (phase) makespan */
    double barrier_us;      /* AllReduce: makespan of each join of the kept
                               routing (0 if not run) */
    double pipeline_us;
    int join;               /* AllReduce: reverse_join kept; -1 otherwise */
    int hierarchical;       /* 1: stage 1 was hier_route */
    int hier_blocks;        /* 1: the winner is "hier-blocks" (node blocks sent
                               whole, hier_route_blocks), timed by replay */
    double hier_blocks_us;  /* that candidate's makespan (0: not built) */
    int latency_first;      /* 1: the winner's routing is "latency-first" */
    double latency_us;      /* the latency-first routing's kept makespan, when
                               it was built beside the MILP's (else 0) */
    double milp_us;         /* the MILP routing's kept makespan, when the
                               latency-first one was tried too (else 0) */
    synth_cand cands[SYNTH_MAX_CANDS];  /* in the order tried */
    int ncands;
    int winner;             /* the entry kept (-1 if the run failed) */
    char winner_reason[200];    /* why it was kept (cands.c) */
    prog *also;             /* with also_instances: the algorithm kept,
                               lowered with that many instances (the
                               caller frees it; NULL where it could not be,
                               e.g. a size not a multiple of its chunks) */
} synth_stats;

void synth_opts_init(synth_opts *o);

/* The candidates as taccl-synth --json gives them (docs/formats.md §5),
 * added to the cJSON object obj: "candidates" (per entry: label, routing,
 * join, status, predicted_us, note, winner), "winner" (the label kept, null
 * if none) and "winner_reason". */
struct cJSON;
void synth_cands_json(const synth_stats *st, struct cJSON *obj);

/* Run the pipeline.  On success *out is a new program (prog_free) carrying
 * a copy of t.  A stage stopped by its time limit hands on the best
 * schedule it has (never nothing: each MILP starts from a heuristic
 * incumbent) and st says so (route_status / contig_status LP_FEASIBLE, the
 * gaps).  TC_INPUT with err set for an impossible request (size not a whole
 * number of chunks, a rank some chunk cannot reach, GLPK's memory limit
 * exceeded); TC_STOP on a stop request (lp_request_stop), checked between
 * and inside the stages. */
int synth_run(const sketch *s, const topo *t, const synth_opts *o, prog **out,
              synth_stats *st, tc_err *err);

#endif
