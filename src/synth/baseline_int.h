/* baseline_int.h — what the baseline families share (not a public API).
 *
 * baseline.c is the entry (defaults, dispatch to nccl or plain);
 * baseline_plain.c holds the table of algorithms and the builders behind it,
 * and checks and finishes what a builder made; each family builds its steps in
 * a file of its own (baseline_ring.c, baseline_direct.c,
 * baseline_butterfly.c, baseline_tree.c, baseline_pat.c) from the building blocks in
 * baseline_emit.c; baseline_rings.c finds the rings.  The layout every
 * builder follows is described at the top of baseline_plain.c. */
#ifndef TC_BASELINE_INT_H
#define TC_BASELINE_INT_H

#include "baseline.h"

#define FIFO_WINDOW 8           /* NCCL_STEPS: sends a connection holds unreceived */
#define MAX_CNT 71              /* MSCCL_MAX_COUNT is 72: cnt <= 71 */
#define MAX_CHANNELS 32         /* MAXCHANNELS */
#define PEER_TBS_PER_CHANNEL 32 /* MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL */
#define BL_MAX_STEPS (1LL << 24) /* the most steps a build may write, every target: at
                                    about 180 bytes a step in memory with its XML,
                                    3 GiB (1024-rank ring AllReduce, 8 channels: 16.8M) */

/* A step: (tb, step) on some rank; NODEP = none. */
typedef struct {
    int tb, step;
} sref;

#define NODEP ((sref){-1, -1})

/* The program being built. */
typedef struct {
    const topo *t;
    coll_kind k;
    int n;
    int K;              /* data channels */
    int M;              /* chunks per rank per channel */
    int KM;
    int pat_agg;        /* pat: pieces one message carries (NCCL's postFreq) */
    int max_steps;      /* the target's steps per tb (0: no limit) */
    int run_cap;        /* chunks per step at most (0: MAX_CNT): hier's exchanges at
                           sizes whose chunks fill the runtimes' tile (bl_build_hier) */
    long long size_bytes;   /* the size it is built for (0: unknown) */
    int node_interleave;    /* hier: baseline_opts.node_interleave */
    prog *p;
} bld;

/* The rings a ring builder follows. */
typedef struct {
    const baseline_rings *rings;
    int *pos;           /* [nrings * n] position of rank r in ring k */
} ringinfo;

/* What a builder may need besides the program. */
typedef struct {
    const ringinfo *ri; /* ring: its rings */
    int L;              /* butterfly, halving: log2 of the ranks */
    char *mode;         /* tree: what it built, for the note */
    size_t modelen;
    const nccl_graph *graph;    /* tree: NCCL's tree channels, or NULL */
} bl_args;

/* A family's builder: fills b->p for collective b->k; TC_OK or an error. */
typedef int (*bl_builder)(bld *b, const bl_args *a, tc_err *err);

int bl_build_ring(bld *b, const bl_args *a, tc_err *err);
int bl_build_direct(bld *b, const bl_args *a, tc_err *err);
int bl_build_direct_rsag(bld *b, const bl_args *a, tc_err *err);
int bl_build_butterfly(bld *b, const bl_args *a, tc_err *err);
int bl_build_halving(bld *b, const bl_args *a, tc_err *err);
int bl_build_tree(bld *b, const bl_args *a, tc_err *err);
int bl_build_hier(bld *b, const bl_args *a, tc_err *err);
int bl_build_pat(bld *b, const bl_args *a, tc_err *err);

/* The checks every call gets (baseline_plain.c): the algorithm, the
 * collective, the ranks, --via, --channels, --chunks; the table's entry,
 * or NULL with err set. */
const baseline_algo *bl_check_call(const char *algo, const topo *t, coll_kind k,
                                   const baseline_opts *o, tc_err *err);

/* A plain (not nccl) algorithm of the table, checked, built and finished
 * (baseline_plain.c); st is filled (the caller zeroed it). */
prog *bl_build_plain(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                     baseline_stats *st, tc_err *err);

/* --algo nccl (baseline_nccl.c): plans NCCL's choice and builds it with the
 * plain builders (bl_build_plain). */
prog *bl_build_nccl(const topo *t, coll_kind k, const baseline_opts *o, baseline_stats *st,
                    tc_err *err);

/* The program of a schedule written only as an MSCCL++ plan (nvls,
 * allpairs): `algo`'s data flow (one channel, one chunk, no runtime's
 * limits: no runtime runs these steps) in Simple, st zeroed for the caller
 * to say what the plan holds; NULL with err prefixed by `me`. */
prog *bl_stand_in(const char *me, const char *algo, const topo *t, coll_kind k,
                  const baseline_opts *o, baseline_stats *st, tc_err *err);

/* --algo allpairs (baseline_allpairs.c): one node's ReduceScatter by puts
 * into the owners' scratch and multi-source reduces, written only as an
 * MSCCL++ plan (prog.allpairs_pieces, allpairs_reducers: --chunks,
 * --channels). */
prog *bl_build_allpairs(const topo *t, coll_kind k, const baseline_opts *o, baseline_stats *st,
                        tc_err *err);

/* --algo nvls (baseline_nvls.c): one node's collective through the switch
 * (prog.nvls_channels = the threadblocks per rank), written only as an
 * MSCCL++ plan of switch operations; hier: --algo hier-nvls, several
 * nodes, the switch inside each and the rails across (prog.nvls_nodes). */
prog *bl_build_nvls(const topo *t, coll_kind k, const baseline_opts *o, int hier,
                    baseline_stats *st, tc_err *err);

/* ---- NCCL's channels from its graph dump (baseline_graph.c) ---- */

/* The channels NCCL connects from g: min(ring, tree channels) when the
 * graph has tree channels, else the ring channels. */
int bl_graph_channels(const nccl_graph *g);
/* The ring of each of those channels over all ranks of t, node by node
 * (ndisjoint = nrings); free with baseline_rings_free. */
void bl_graph_rings(const topo *t, const nccl_graph *g, baseline_rings *out);
/* parent[n] of NCCL's tree channel j (0 <= j < 2 * channels: j and j +
 * channels share a chain, the second taking the second tree over nodes).
 * The chains are the graph's tree channels, or its ring channels when it
 * has none; returns 1 for the former. */
int bl_graph_tree(const topo *t, const nccl_graph *g, int j, int *parent);

/* log2 of n if n is a power of two, else -1. */
static inline int bl_log2_exact(int n)
{
    int L = 0;
    while ((1 << L) < n)
        L++;
    return n >= 1 && (1 << L) == n ? L : -1;
}

/* ---- building blocks (baseline_emit.c) ---- */

int bl_tb_new(bld *b, int r, int send, int recv, int chan);
/* Append a step to tb `tb` of rank r; `dep` on another tb becomes its
 * depid/deps (one on the same tb is implied by program order). */
sref bl_emit(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
             int cnt, sref dep);
/* A step with two dependencies: a nop carries the first. */
sref bl_emit2(bld *b, int r, int tb, step_type ty, buf_kind sb, int so, buf_kind db, int dof,
              int cnt, sref d1, sref d2);
/* The last step of a tb so far (NODEP if empty). */
sref bl_last_of(const bld *b, int r, int tb);
/* Interleave a tb's ns sends and nr receives, sends at most FIFO_WINDOW
 * ahead: returns 0 (emit the next send), 1 (the next receive) or -1. */
int bl_window_next(int *si, int *ri, int ns, int nr);
/* The same, sends at most `window` ahead (1: each send then its receive). */
int bl_window_next_w(int *si, int *ri, int ns, int nr, int window);
prog *bl_new_prog(bld *b, int C, int s_chunks, tc_err *err);
/* Chunk offsets of channel c inside block q (KM chunks from q*KM), appended
 * to v; returns the new length. */
int bl_block_chunks(const bld *b, int q, int c, int base_shift, int *v, int len);
/* Group sorted offset pairs into runs contiguous on both sides, cnt <= 71
 * and <= b->run_cap where set. */
int bl_make_runs(const bld *b, const int *src, const int *dst, int len, int *rs, int *rl);
/* One exchange with one peer on tb: send runs of (sbuf, soff[ns]) and
 * receive runs into (rbuf, roff[nr]) with receive type rty (ST_R, or a
 * reduction with local operand lbuf, loff[]); sends at most FIFO_WINDOW
 * ahead of receives.  The first send carries d1 and d2; with sdep, each
 * send also waits for sdep[o] of every chunk offset o it sends (a chunk
 * made final by a step of its own, so a send need not wait for a whole
 * phase); with ldep, each reducing receive waits likewise for its local
 * operand's chunks; with rset, each receive sets rset[o] of the chunks it
 * wrote. */
typedef struct {
    buf_kind sbuf;
    const int *soff;
    int ns;
    step_type rty;
    buf_kind lbuf, rbuf;    /* reduction operand, destination */
    const int *loff, *roff;
    int nr;
    const sref *sdep;       /* [offset in sbuf] or NULL */
    sref *rset;             /* [offset in rbuf] or NULL */
    const sref *ldep;       /* [offset in lbuf] or NULL: a reducing receive
                               waits for its local operand's chunks */
    int window;             /* sends at most this many ahead of receives
                               (0: FIFO_WINDOW) */
    int chunk_window;       /* 1: the window counts chunks, not steps (with
                               runs of at most FIFO_WINDOW chunks: b->run_cap),
                               so the file holds at every size (below) */
} bl_round;
void bl_emit_round(bld *b, int r, int tb, const bl_round *rs, sref d1, sref d2);
/* The same, the first receive also waiting for dr (what it reduces onto
 * may be ready later than what the first send sends). */
void bl_emit_round_rdep(bld *b, int r, int tb, const bl_round *rs, sref d1, sref d2, sref dr);
/* A local copy of cnt chunks in steps of at most MAX_CNT, no dependency. */
sref bl_emit_copy(bld *b, int r, int tb, buf_kind sb, int so, buf_kind db, int dof, int cnt);

#endif
