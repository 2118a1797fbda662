/* baseline.h — the classic collective algorithms, built straight from a
 * topology with no solver: the yardsticks every synthesized schedule is
 * measured against, and schedules in their own right.
 *
 *   ring       NCCL's ring: AllGather, ReduceScatter, AllReduce (ring
 *              ReduceScatter then ring AllGather, 2(n-1) steps).  One ring per
 *              channel, found on the topology (Hamiltonian cycle over direct
 *              links and switches inside a node, nodes joined through NICs);
 *              by default as many channels as rings sharing no link
 *              direction, switch port or NIC direction (at most 8).
 *   direct     every rank sends straight to every other: AllGather, AllToAll,
 *              ReduceScatter (reductions serialised on the owner), AllReduce
 *              (the case study's direct cyclic reduction).
 *   butterfly  power-of-two rank counts: recursive doubling AllGather,
 *              recursive halving ReduceScatter, the case study's full-buffer
 *              XOR-exchange AllReduce.
 *   rsag       AllReduce as ReduceScatter then AllGather, via direct (the case
 *              study's composition), ring, or butterfly (Rabenseifner).
 *   nccl       what NCCL runs for the call at opts.size_bytes (nccl_tune.h):
 *              its ring or double binary tree, protocol, channel count and
 *              chunking, over channels built as its topology search builds
 *              them; AllToAll as its point-to-point exchange.  The program's
 *              proto is set; the note says what was picked and why.
 *   allpairs   one node's ReduceScatter: every rank puts each peer's block
 *              into that peer's scratch in pieces, the owner sums each piece
 *              from every peer in one reduce; only as an MSCCL++ plan
 *              (switch_ops: the output is a plan).
 *   nvls       one node whose switch reduces and multicasts (NVLS):
 *              AllReduce by multimem load-reduce and multicast store,
 *              AllGather by multicast stores, over --channels threadblocks
 *              per rank; only as an MSCCL++ plan (switch_ops).
 *   pat        NCCL's PAT, one GPU per node: AllGather down binomial trees
 *              rooted at every rank over the peers at +-2^d, farthest hop
 *              first; ReduceScatter up the same trees; several ranks' pieces
 *              per message as NCCL aggregates them at opts.size_bytes.
 *   tree       NCCL's double binary tree AllReduce: two complementary trees
 *              each carrying half the buffer, reduce up then broadcast down,
 *              pipelined in chunks.
 *
 * A built schedule is plain MSCCL (program.h) with every runtime rule kept:
 * one tb per (channel, peer), dependencies with hasdep, cnt < 72, and the
 * target's steps-per-tb limit (or a refusal saying which limit and how to get
 * around it).  Building is deterministic: the same inputs give the same
 * program.  The program carries no topology and no size; the caller attaches
 * them (the CLI does). */
#ifndef TC_BASELINE_H
#define TC_BASELINE_H

#include <stddef.h>

#include "../model/collective.h"
#include "../model/nccl_graph.h"
#include "../model/runtime.h"
#include "../model/topo.h"
#include "../sched/program.h"
#include "../util/err.h"

typedef struct {
    int channels;           /* 0 = the algorithm's default (ring: as many
                               rings sharing no link, switch port or NIC
                               direction as found, at most 8;
                               tree: 1 pair of trees; others 1) */
    int chunks;             /* chunks per rank per channel; 0 = default
                               (tree 4, others 1) */
    const char *via;        /* rsag only: "direct" (NULL = direct), "ring", "butterfly" */
    runtime target;         /* the runtime the schedule must load in (RT_MSCCL;
                               RT_UNLIMITED: no steps-per-tb or depid limit,
                               for simulation only) */
    long long size_bytes;   /* nccl: the call's size NCCL chooses for (0 = 1 MiB) */
    int ring_mode;          /* ring: a baseline_ring_mode (0 = BL_RINGS_DISJOINT) */
    int nccl_proto;         /* nccl: 1 + a cost_proto, the only protocol NCCL may
                               pick (the user's --proto, as NCCL_PROTO=P); 0 =
                               NCCL's tuning model picks among all */
    const nccl_graph *graph;    /* nccl (and the ring and tree it builds with): the
                                   channels NCCL built, from its graph dump, instead
                                   of a search; NULL = search */
    int node_interleave;    /* hier: inside a node each reduction tb sends one
                               run, then reduces the run it gets back (1),
                               instead of sending up to the FIFO's 8 ahead
                               (0): the node's first runs are summed sooner,
                               at the cost of sends waiting on reductions */
    int switch_ops;         /* the output is an MSCCL++ plan, which can hold
                               switch (multimem) operations and
                               multi-source reduces: nccl keeps NCCL's NVLS
                               choice (0: its best choice without NVLS, and
                               the note says so); nvls and allpairs need it */
} baseline_opts;

/* What a build produced, for messages and --json. */
typedef struct {
    int channels;           /* data channels (tree: pairs of trees) */
    int nchannels;          /* MSCCL channels used */
    int chunks;             /* chunks per rank per channel */
    int rings_found;        /* ring builds: rings sharing no resource (ndisjoint); else 0 */
    int max_steps_per_tb;
    int max_tbs_per_rank;
    long long tbs;          /* over all ranks */
    long long steps;        /* over all ranks, nops included */
    char note[768];         /* extra information for the user, "" if none */
    struct {                /* nccl only (algo "" otherwise): what NCCL picked */
        char algo[16];      /* "ring", "tree", "nvls", "nvlstree", "pat", "p2p" */
        char proto[8];
        int channels, channels_max, rings;
        long long piece_bytes;  /* slice (ring, tree) or P2P chunk */
        double estimate_us;     /* NCCL's own estimate, -1 for p2p */
        double bw_intra, bw_inter;  /* the channel bandwidths its model took
                                       (GB/s); 0 for p2p */
        char would_run[16];     /* NCCL's own pick when the file holds its best
                                   choice without it ("nvls", "nvlstree",
                                   "collnetdirect", "collnetchain"), else "" */
        double would_run_us;    /* that pick's estimate */
    } nccl;
} baseline_stats;

/* One algorithm of the table. */
typedef struct {
    const char *name;
    unsigned colls;         /* bit (1u << coll_kind) for each collective it builds */
    const char *summary;
} baseline_algo;

void baseline_opts_default(baseline_opts *o);

/* The table, in a fixed order (ring, direct, butterfly, rsag, tree, hier, nccl,
 * nvls, hier-nvls, pat, allpairs). */
const baseline_algo *baseline_algos(int *count);
const baseline_algo *baseline_algo_find(const char *name);   /* NULL if unknown */
/* The table's names, ", "-separated, into buf (n bytes); returns buf. */
const char *baseline_algo_names(char *buf, size_t n);

/* Build `algo` for collective k over all ranks of t.  Returns NULL with err
 * set (TC_INPUT, one line saying what to do instead) when the name is
 * unknown, the algorithm has no such collective, the rank count or the
 * topology does not allow it, or the result would break a runtime limit of
 * the target.  st may be NULL. */
prog *baseline_build(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                     tc_err *err);
prog *baseline_build_stats(const char *algo, const topo *t, coll_kind k,
                           const baseline_opts *o, baseline_stats *st, tc_err *err);

/* A size (bytes, the larger per-rank buffer) the schedule can run at: `want`
 * rounded up to a whole number of 4-byte elements per chunk and, on a device
 * with a DMA granularity, of whole DMA segments per chunk. */
long long baseline_size_bytes(const prog *p, const topo *t, long long want);

/* Rings over all ranks of t: ring k visits order[k * nranks + i] for
 * i = 0..nranks-1 and returns to the first.  Consecutive ranks of a node are
 * joined by a direct link or a shared switch; the ring enters and leaves each
 * node (when there are several) at ranks with a NIC.  No two rings use the
 * same directed intra-node hop (a ring reversed counts as disjoint: links
 * carry each direction separately).  The first ndisjoint rings share no
 * resource at all: no link direction, no switch port direction (a switch
 * port carries one transfer in and one out at a time, so one switch offers
 * one ring) and no NIC direction; the rest, found only when more rings were
 * asked for, are other orders that may share switch ports and NICs. */
typedef struct {
    int nrings;
    int ndisjoint;          /* 1 <= ndisjoint <= nrings */
    int nranks;
    int *order;
} baseline_rings;

/* How the rings may share resources:
 *   BL_RINGS_DISJOINT  as above (the ring baseline);
 *   BL_RINGS_NCCL      as NCCL's topology search builds ring channels: no
 *                      two rings share a link direction or a NIC direction
 *                      (each leaves and enters a node through its own NIC,
 *                      the one it entered by where the node allows), while
 *                      switch ports are shared (NCCL accounts an NVSwitch by
 *                      bandwidth, not by port); all rings found are
 *                      "disjoint" in this sense (ndisjoint = nrings). */
typedef enum { BL_RINGS_DISJOINT, BL_RINGS_NCCL } baseline_ring_mode;

/* Find up to max_rings (>= 1) rings.  TC_INPUT if not even one exists (or
 * none was found within the search budget), with the reason. */
int baseline_find_rings(const topo *t, int max_rings, baseline_rings *out, tc_err *err);
int baseline_find_rings_mode(const topo *t, int max_rings, baseline_ring_mode mode,
                             baseline_rings *out, tc_err *err);
void baseline_rings_free(baseline_rings *r);

#endif
