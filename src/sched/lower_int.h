/* lower_int.h — what the lowering passes share (not a public API).
 *
 * lower.c is the driver: it checks the options and the algorithm, runs the
 * passes in order and frees what they made.  Each pass lives in a file of
 * its own and owns one part of the lowering's state:
 *
 *   lower_xfer.c    transfers, colours, connections, causal order  -> lxfers
 *   lower_place.c   chunk placement, runs, staging, local copies   -> lops
 *   lower_layout.c  writers, port chains, channels, units, tbs,
 *                   dependencies, step numbers                      -> llayout
 *   lower_emit.c    the program, once per instance                  -> prog
 *
 * The state is four parts, each built by one pass and after it only read,
 * or added to where said here (lower.h says what the passes decide and
 * why; lower.c's opening comment lists them in order):
 *
 *   lin      the inputs: fixed by the driver before any pass runs.
 *   lxfers   the transfers (lower_order writes them; lower_chain adds
 *            each transfer's req).
 *   lops     the operations (lower_place writes them; lower_chain adds
 *            each send's writer and chain_prev; lower_layout fills the
 *            layout fields of every op, marked in the struct below).
 *   llayout  the layout (lower_layout writes it, anew on every try).
 *
 * Which pass reads and writes which part:
 *
 *   pass           reads                 writes
 *   lower_order    lin                   lxfers
 *   lower_place    lin, lxfers           lops (and in->o->notes)
 *   lower_chain    lin, lxfers, lops     lxfers x[].req; lops' writer and
 *                                        chain_prev
 *   lower_layout   lin, lxfers, lops     lops' layout fields; llayout
 *   lower_emit     lin, lxfers, lops,    a new prog
 *                  llayout
 *
 * Inside a pass the functions take the parts they use (the shape, the
 * topology, one of the parts above), not the whole; lower_place.c keeps
 * its own context (placer) with the chunk map it needs only while it
 * runs. */
#ifndef TC_LOWER_INT_H
#define TC_LOWER_INT_H

#include <math.h>
#include "../model/cost.h"
#include "lower.h"

enum {
    MAX_CNT = 71,           /* MSCCL_MAX_COUNT 72: cnt <= 71 */
    MAX_DEPID = 127,        /* dependentBid is an int8 */
    MAX_CHANNELS = 32,      /* MAXCHANNELS */
    PEERS_PER_BLOCK = 32,   /* MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL */
    MAX_INSTANCES = 32,
    FIFO_DEPTH = COST_FIFO_SLOTS    /* unreceived sends per connection */
};

/* Times closer than this are simultaneous (solver noise), in us. */
static inline double tol_at(double t)
{
    return 1e-4 + 1e-6 * fabs(t);
}

/* ------------------------------------------------------------ chunk locations */

typedef struct {
    int buf;    /* BUF_I, BUF_O, BUF_S; BUF_NONE = none (or: scratch still to allocate) */
    int off;
} loc;

static inline loc mkloc(int buf, int off)
{
    loc l = {buf, off};
    return l;
}

static inline loc noloc(void)
{
    return mkloc(BUF_NONE, -1);
}

/* ------------------------------------------------------------ the collective's shape */

typedef struct {
    coll_kind coll;
    int n;
    int C;          /* nchunksperloop of one instance */
    int in, out;    /* chunks per rank in i and o */
    int per;        /* C / n */
    int blk;        /* instance block: C / n, or C for AllReduce */
    int red;        /* ReduceScatter or AllReduce */
    long long nkeys;
} shape;

static inline long long key_of(const shape *sh, const algo_send *s)
{
    return sh->red ? s->index : (long long)s->origin * sh->in + s->index;
}

/* Output index of chunk (origin, index) at rank r, -1 if r does not keep it
 * (AllGather, AllToAll). */
static inline int out_at(const shape *sh, int origin, int index, int r)
{
    if (sh->coll == COLL_ALLGATHER)
        return origin * sh->in + index;
    if (index / sh->per != r)
        return -1;
    return origin * sh->per + index % sh->per;
}

/* ------------------------------------------------------------ the records */

typedef struct {
    int src, dst, reduce;
    double ts, ta;      /* earliest t_send, latest t_arrive of its sends */
    double ready;       /* latest arrival at src of the data it sends (0: its own) */
    double req;         /* when the executor will ask for its resources (lower_chain) */
    int first, n;       /* its sends: mem[first .. first+n) */
    int color, conn;
} xfer;

typedef struct {
    int src, dst, color, block;
} conn;

enum { OP_SEND, OP_RECV, OP_COPY };

typedef struct {
    int rank, kind, peer;   /* peer -1 for copies */
    int xfer, conn;         /* -1 for copies */
    long long p;            /* event position (rank order), then run */
    int run;
    step_type type0;        /* as built; `type` after fusion */
    step_type type;
    loc src, dst;
    int src_rank, dst_rank; /* whose buffers src / dst name */
    int cnt;
    int partner;            /* the other end of a send/receive */
    int host;               /* copy run by a send's or receive's tb (staging), -1 local */
    int writer;             /* send: receive that last wrote exactly its source */
    int chain_prev;         /* send: the rank's previous send on its out port or NIC */
    /* layout (lower_layout; recomputed per try) */
    int slice, slice_prev;
    int chan, unit, tb;
    int absorbed;           /* send fused into the receive `fuser` */
    int fuser;
    int absorbs;            /* receive: the send fused into it, -1 */
    int dep_first, ndep;
    int hasdep, step;
} op;

typedef struct {
    int rank, chan, dir, peer;  /* dir 0 send, 1 recv */
    int first, n;               /* op ids in llayout.unit_ops */
    int merged;                 /* partner unit, -1 */
} unit;

typedef struct {
    int rank, chan, send, recv, local;
    int first, n;               /* op ids in llayout.tb_ops */
    int nsteps, depended, natural;
} btb;

/* ------------------------------------------------------------ the state, by owner */

/* The inputs (the driver: lower.c). */
typedef struct {
    const algo *a;
    const topo *t;
    const lower_opts *o;
    shape sh;
    int k;                  /* instances */
    int max_steps;          /* per tb */
} lin;

/* The transfers (lower_order). */
typedef struct {
    int nx;
    xfer *x;
    int *mem;               /* send ids, grouped by transfer */
    int *xfer_of;           /* send id -> transfer */
    int nconn, cconn;
    conn *conns;
    int ncolors, nblocks;
} lxfers;

/* The operations (lower_place). */
typedef struct {
    int nops, cops;
    op *ops;
    int *scount;            /* per rank: scratch chunks (one instance) */
    int *rank_ops;          /* op ids by (rank, p, run) */
    int *rank_first;        /* [n + 1] */
} lops;

/* The layout (lower_layout). */
typedef struct {
    int nslices;
    int nunits;
    unit *units;
    int *unit_ops;
    int ntbs;
    btb *tbs;
    int *tb_ops;
    int ntb_ops;
    int *rank_tb_first;     /* [n + 1]: tbs of rank r, natural order */
    int *deps;
    int ndeps, cdeps;
} llayout;

/* The whole, held by the driver. */
typedef struct {
    lin in;
    lxfers xf;
    lops ops;
    llayout lay;
} lctx;

/* ------------------------------------------------------------ the passes */

/* lower_xfer.c: group the sends into transfers, colour them into
 * connections, check that every chunk reaches every rank that must keep
 * it, and order the send and receive events causally.  On TC_OK *order
 * is a new array of the 2 * nx events (transfer e/2, send if e is even,
 * receive if odd) in that order; on failure err is set and *order NULL. */
int lower_order(const lin *in, lxfers *xf, int **order, tc_err *err);

/* lower_place.c: walk the events in `order`, tracking where every chunk
 * lives on every rank, and make the operations: a send and a receive per
 * run, local copies for staging and for chunks kept at home, scratch
 * counts; then sort each rank's operations (rank_ops, rank_first).
 * Fills in->o->notes when given. */
void lower_place(const lin *in, const lxfers *xf, const int *order, lops *ops);

/* lower_layout.c: for each send the receive whose slots it forwards
 * (op.writer), and the rank's previous send through the same out port
 * (op.chain_prev); each transfer's req. */
void lower_chain(const lin *in, lxfers *xf, lops *ops);

/* lower_layout.c: channels, units, tbs, fusion, dependencies and step
 * numbers, with connections sliced shorter until every tb fits the step
 * limit.  TC_INPUT (err set) when a runtime limit cannot be met. */
int lower_layout(const lin *in, const lxfers *xf, lops *ops, llayout *lay, tc_err *err);
void lower_layout_free(llayout *lay);

/* lower_emit.c: the program, the layout replicated per instance; NULL
 * with err set when a dependency does not fit depid. */
prog *lower_emit(const lin *in, const lxfers *xf, const lops *ops, const llayout *lay,
                 tc_err *err);

#endif
