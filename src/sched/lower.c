/* lower.c — abstract algorithm -> MSCCL program (contract and choices in lower.h).
 *
 * The work happens in passes over plain arrays:
 *   1. check the algorithm and derive the collective's shape;
 *   2. group sends into transfers (same src, dst, group >= 0), colour the
 *      transfers of each (src, dst) so that overlapping ones get different
 *      channels, and name each (src, dst, colour) a connection;
 *   3. order every send event and receive event causally (Kahn's algorithm
 *      over the data-flow, connection-order and reduction-chain edges,
 *      earliest time first), which fixes each rank's operation order;
 *   4. walk the events in that order, tracking where every chunk lives on
 *      every rank, splitting transfers into contiguous runs (or staging
 *      them through contiguous scratch with local copies) and allocating
 *      scratch: each run becomes one send operation and one receive
 *      operation;
 *   5. chain each rank's sends through one switch out port or NIC in
 *      their order (the executor serves a port by when it is asked, so the
 *      order must be made explicit across tbs), then lay the operations out
 *      in threadblocks (slicing connections that are too long, merging
 *      receive and send tbs, fusing rcs/rrcs, deriving dependencies per
 *      chunk slot and along the chains), retrying with shorter slices until
 *      every tb fits the runtime's step limit;
 *   6. write the program, once per instance. */
#include "lower.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../model/cost.h"
#include "../util/heap.h"
#include "../util/mem.h"
#include "ptime.h"

enum {
    MAX_CNT = 71,           /* MSCCL_MAX_COUNT 72: cnt <= 71 */
    MAX_DEPID = 127,        /* dependentBid is an int8 */
    MAX_CHANNELS = 32,      /* MAXCHANNELS */
    PEERS_PER_BLOCK = 32,   /* MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL */
    MAX_INSTANCES = 32,
    FIFO_DEPTH = COST_FIFO_SLOTS    /* unreceived sends per connection */
};

#define GROW(arr, n, cap)                                                      \
    do {                                                                       \
        if ((n) >= (cap)) {                                                    \
            (cap) = (cap) ? 2 * (cap) : 64;                                    \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr));            \
        }                                                                      \
    } while (0)

/* Times closer than this are simultaneous (solver noise), in us. */
static double tol_at(double t)
{
    return 1e-4 + 1e-6 * fabs(t);
}

void lower_opts_default(lower_opts *o)
{
    memset(o, 0, sizeof *o);
    o->instances = 1;
}

/* ------------------------------------------------------------ chunk locations */

typedef struct {
    int buf;    /* BUF_I, BUF_O, BUF_S; BUF_NONE = none (or: scratch still to allocate) */
    int off;
} loc;

static loc mkloc(int buf, int off)
{
    loc l = {buf, off};
    return l;
}

static loc noloc(void)
{
    return mkloc(BUF_NONE, -1);
}

/* (rank, chunk key) -> where the chunk (or its partial sum) lives there. */
typedef struct {
    long long *key;
    loc *val;
    size_t cap, n;
} locmap;

static size_t lm_slot(long long k, size_t cap)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)(x & (cap - 1));
}

static void lm_alloc(locmap *m, size_t cap)
{
    m->cap = cap;
    m->n = 0;
    m->key = xmalloc(cap * sizeof *m->key);
    m->val = xmalloc(cap * sizeof *m->val);
    for (size_t i = 0; i < cap; i++)
        m->key[i] = -1;
}

static void lm_free(locmap *m)
{
    free(m->key);
    free(m->val);
}

static loc lm_get(const locmap *m, long long k)
{
    for (size_t i = lm_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k)
            return m->val[i];
        if (m->key[i] == -1)
            return noloc();
    }
}

static void lm_put(locmap *m, long long k, loc v);

static void lm_grow(locmap *m)
{
    locmap nm;
    lm_alloc(&nm, m->cap * 2);
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] != -1)
            lm_put(&nm, m->key[i], m->val[i]);
    lm_free(m);
    *m = nm;
}

static void lm_put(locmap *m, long long k, loc v)
{
    if (2 * (m->n + 1) > m->cap)
        lm_grow(m);
    for (size_t i = lm_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) {
            m->val[i] = v;
            return;
        }
        if (m->key[i] == -1) {
            m->key[i] = k;
            m->val[i] = v;
            m->n++;
            return;
        }
    }
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

static long long key_of(const shape *sh, const algo_send *s)
{
    return sh->red ? s->index : (long long)s->origin * sh->in + s->index;
}

/* Output index of chunk (origin, index) at rank r, -1 if r does not keep it
 * (AllGather, AllToAll). */
static int out_at(const shape *sh, int origin, int index, int r)
{
    if (sh->coll == COLL_ALLGATHER)
        return origin * sh->in + index;
    if (index / sh->per != r)
        return -1;
    return origin * sh->per + index % sh->per;
}

/* Slot of o where rank r accumulates input chunk j, -1 if r only relays it. */
static int red_out_at(const shape *sh, int j, int r)
{
    if (sh->coll == COLL_ALLREDUCE)
        return j;
    return j / sh->per == r ? j % sh->per : -1;
}

/* ------------------------------------------------------------ state */

typedef struct {
    int src, dst, reduce;
    double ts, ta;      /* earliest t_send, latest t_arrive of its sends */
    double ready;       /* latest arrival at src of the data it sends (0: its own) */
    double req;         /* when the executor will ask for its resources (chain_sends) */
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
    /* layout (recomputed per pass) */
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
    int first, n;               /* op ids in L->unit_ops */
    int merged;                 /* partner unit, -1 */
} unit;

typedef struct {
    int rank, chan, send, recv, local;
    int first, n;               /* op ids in L->tb_ops */
    int nsteps, depended, natural;
} btb;

typedef struct {
    const algo *a;
    const topo *t;
    const lower_opts *o;
    shape sh;
    int k;
    int max_steps;
    int nx;
    xfer *x;
    int *mem;               /* send ids, grouped by transfer */
    int *xfer_of;           /* send id -> transfer */
    int nconn, cconn;
    conn *conns;
    int ncolors, nblocks;
    int nops, cops;
    op *ops;
    int *scount;            /* per rank: scratch chunks (one instance) */
    int *rank_ops;          /* op ids by (rank, p, run) */
    int *rank_first;        /* [n + 1] */
    /* layout pass */
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
} lctx;

static void ctx_free_layout(lctx *L)
{
    free(L->units);
    free(L->unit_ops);
    free(L->tbs);
    free(L->tb_ops);
    free(L->rank_tb_first);
    free(L->deps);
    L->units = NULL;
    L->unit_ops = NULL;
    L->tbs = NULL;
    L->tb_ops = NULL;
    L->rank_tb_first = NULL;
    L->deps = NULL;
    L->nunits = L->ntbs = L->ntb_ops = L->ndeps = L->cdeps = 0;
}

static void ctx_free(lctx *L)
{
    free(L->x);
    free(L->mem);
    free(L->xfer_of);
    free(L->conns);
    free(L->ops);
    free(L->scount);
    free(L->rank_ops);
    free(L->rank_first);
    ctx_free_layout(L);
}

static int new_op(lctx *L)
{
    GROW(L->ops, L->nops, L->cops);
    op *o = &L->ops[L->nops];
    memset(o, 0, sizeof *o);
    o->peer = o->xfer = o->conn = o->partner = o->writer = o->host = o->chain_prev = -1;
    o->fuser = o->absorbs = -1;
    o->src = o->dst = noloc();
    o->src_rank = o->dst_rank = -1;
    return L->nops++;
}

/* ------------------------------------------------------------ 1. checks and shape */

static int check_shape(lctx *L, tc_err *err)
{
    const algo *a = L->a;
    shape *sh = &L->sh;
    if (a->coll < 0 || a->coll >= COLL_COUNT)
        return tc_err_set(err, TC_INPUT, "algorithm: unknown collective %d", (int)a->coll);
    if (a->nranks < 1)
        return tc_err_set(err, TC_INPUT, "algorithm: needs at least one rank, got %d", a->nranks);
    if (a->chunks_per_rank < 1)
        return tc_err_set(err, TC_INPUT, "algorithm: chunks_per_rank must be at least 1, got %d",
                          a->chunks_per_rank);
    if (L->t && a->nranks > L->t->nranks)
        return tc_err_set(err, TC_INPUT, "algorithm has %d ranks but topology %s has %d",
                          a->nranks, L->t->name ? L->t->name : "(unnamed)", L->t->nranks);
    sh->coll = a->coll;
    sh->n = a->nranks;
    long long C = a->coll == COLL_ALLGATHER ? (long long)a->nranks * a->chunks_per_rank
                                            : a->chunks_per_rank;
    if (C * L->k > INT_MAX / 4)
        return tc_err_set(err, TC_INPUT, "algorithm: %lld chunks per loop is too many", C * L->k);
    sh->C = (int)C;
    tc_err e;
    if (coll_shape(a->coll, sh->n, sh->C, &sh->in, &sh->out, &e) != TC_OK)
        return tc_err_set(err, TC_INPUT, "algorithm: %s (chunks_per_rank %d)", e.msg,
                          a->chunks_per_rank);
    sh->per = sh->C / sh->n;
    sh->blk = a->coll == COLL_ALLREDUCE ? sh->C : sh->per;
    sh->red = coll_is_reduction(a->coll);
    sh->nkeys = sh->red ? sh->in : (long long)sh->n * sh->in;
    return TC_OK;
}

static int check_send(lctx *L, int i, tc_err *err)
{
    const algo_send *s = &L->a->sends[i];
    const shape *sh = &L->sh;
    int n = sh->n;
    if (s->src < 0 || s->src >= n || s->dst < 0 || s->dst >= n)
        return tc_err_set(err, TC_INPUT, "send #%d: ranks %d -> %d outside 0..%d", i, s->src,
                          s->dst, n - 1);
    if (s->src == s->dst)
        return tc_err_set(err, TC_INPUT, "send #%d: rank %d sends to itself", i, s->src);
    if (!sh->red && (s->origin < 0 || s->origin >= n))
        return tc_err_set(err, TC_INPUT, "send #%d: origin %d outside 0..%d", i, s->origin, n - 1);
    if (s->index < 0 || s->index >= sh->in)
        return tc_err_set(err, TC_INPUT, "send #%d: chunk index %d outside 0..%d", i, s->index,
                          sh->in - 1);
    if (!isfinite(s->t_send) || !isfinite(s->t_arrive))
        return tc_err_set(err, TC_INPUT, "send #%d: times must be finite", i);
    if (s->t_arrive < s->t_send - tol_at(s->t_send))
        return tc_err_set(err, TC_INPUT, "send #%d: arrives at %g us before it is sent at %g us",
                          i, s->t_arrive, s->t_send);
    if (s->reduce && !sh->red)
        return tc_err_set(err, TC_INPUT, "send #%d: reduce=1 in %s, which does not reduce", i,
                          coll_name(sh->coll));
    if (!s->reduce && sh->coll == COLL_REDUCESCATTER)
        return tc_err_set(err, TC_INPUT,
                          "send #%d: reduce=0 in reducescatter: every hop must add its partial "
                          "sum (a plain relay of a partial is not supported)", i);
    if (L->t) {
        topo_route r = topo_route_of(L->t, s->src, s->dst);
        if (r.kind == ROUTE_NONE)
            return tc_err_set(err, TC_INPUT, "send #%d: no route from rank %d to rank %d in "
                              "topology %s", i, s->src, s->dst,
                              L->t->name ? L->t->name : "(unnamed)");
    }
    return TC_OK;
}

/* ------------------------------------------------------------ 2. transfers, colours, connections */

typedef struct {
    int src, dst, group;
    double ts;
    long long key;
    int id;
} send_key;

static int cmp_send_key(const void *pa, const void *pb)
{
    const send_key *a = pa, *b = pb;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_ll(const void *pa, const void *pb)
{
    long long a = *(const long long *)pa, b = *(const long long *)pb;
    return (a > b) - (a < b);
}

static int build_transfers(lctx *L, tc_err *err)
{
    const algo *a = L->a;
    int ns = a->nsends;
    send_key *sk = xcalloc((size_t)ns, sizeof *sk);
    for (int i = 0; i < ns; i++) {
        const algo_send *s = &a->sends[i];
        sk[i] = (send_key){s->src, s->dst, s->group >= 0 ? s->group : -1, s->t_send,
                           key_of(&L->sh, s), i};
    }
    qsort(sk, (size_t)ns, sizeof *sk, cmp_send_key);
    L->mem = xcalloc((size_t)ns, sizeof *L->mem);
    L->xfer_of = xcalloc((size_t)ns, sizeof *L->xfer_of);
    L->x = xcalloc((size_t)ns, sizeof *L->x);
    L->nx = 0;
    long long *keys = xcalloc((size_t)ns, sizeof *keys);
    int rc = TC_OK;
    for (int i = 0; i < ns && rc == TC_OK;) {
        int j = i + 1;
        if (sk[i].group >= 0)
            while (j < ns && sk[j].src == sk[i].src && sk[j].dst == sk[i].dst &&
                   sk[j].group == sk[i].group)
                j++;
        xfer *x = &L->x[L->nx];
        const algo_send *s0 = &a->sends[sk[i].id];
        x->src = s0->src;
        x->dst = s0->dst;
        x->reduce = s0->reduce != 0;
        x->first = i;
        x->n = j - i;
        x->ts = s0->t_send;
        x->ta = s0->t_arrive;
        for (int m = i; m < j; m++) {
            const algo_send *s = &a->sends[sk[m].id];
            L->mem[m] = sk[m].id;
            L->xfer_of[sk[m].id] = L->nx;
            keys[m - i] = sk[m].key;
            if ((s->reduce != 0) != x->reduce)
                rc = tc_err_set(err, TC_INPUT, "group %d on %d -> %d mixes reduce and plain sends",
                                sk[i].group, x->src, x->dst);
            if (s->t_send < x->ts)
                x->ts = s->t_send;
            if (s->t_arrive > x->ta)
                x->ta = s->t_arrive;
        }
        qsort(keys, (size_t)(j - i), sizeof *keys, cmp_ll);
        for (int m = 1; m < j - i && rc == TC_OK; m++)
            if (keys[m] == keys[m - 1])
                rc = tc_err_set(err, TC_INPUT, "group %d on %d -> %d carries one chunk twice",
                                sk[i].group, x->src, x->dst);
        L->nx++;
        i = j;
    }
    free(keys);
    free(sk);
    return rc;
}

typedef struct {
    int src, dst;
    double ts, ta;
    int id;
} xfer_key;

static int cmp_xfer_key(const void *pa, const void *pb)
{
    const xfer_key *a = pa, *b = pb;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->ta != b->ta) return a->ta < b->ta ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Interval colouring per (src, dst): a transfer takes the lowest colour
 * whose last transfer has ended.  Fills fifo_prev (previous transfer on
 * the same connection) for the ordering edges. */
static void colour_transfers(lctx *L, int *fifo_prev)
{
    int nx = L->nx;
    xfer_key *xk = xcalloc((size_t)nx, sizeof *xk);
    for (int i = 0; i < nx; i++)
        xk[i] = (xfer_key){L->x[i].src, L->x[i].dst, L->x[i].ts, L->x[i].ta, i};
    qsort(xk, (size_t)nx, sizeof *xk, cmp_xfer_key);
    double *end = NULL;
    int *last = NULL, *cid = NULL, cap = 0;
    L->ncolors = 1;
    for (int i = 0; i < nx;) {
        int j = i;
        while (j < nx && xk[j].src == xk[i].src && xk[j].dst == xk[i].dst)
            j++;
        int used = 0;
        for (int m = i; m < j; m++) {
            xfer *x = &L->x[xk[m].id];
            int c = 0;
            while (c < used && end[c] > x->ts + tol_at(x->ts))
                c++;
            if (c == used) {
                if (used == cap) {
                    cap = cap ? 2 * cap : 8;
                    end = xrealloc(end, (size_t)cap * sizeof *end);
                    last = xrealloc(last, (size_t)cap * sizeof *last);
                    cid = xrealloc(cid, (size_t)cap * sizeof *cid);
                }
                used++;
                last[c] = -1;
                GROW(L->conns, L->nconn, L->cconn);
                int n = L->sh.n;
                int off = ((x->dst - x->src) % n + n) % n;
                L->conns[L->nconn] = (conn){x->src, x->dst, c, (off - 1) / PEERS_PER_BLOCK};
                cid[c] = L->nconn++;
            }
            end[c] = x->ta;
            x->color = c;
            x->conn = cid[c];
            fifo_prev[xk[m].id] = last[c];
            last[c] = xk[m].id;
            if (c + 1 > L->ncolors)
                L->ncolors = c + 1;
        }
        i = j;
    }
    free(end);
    free(last);
    free(cid);
    free(xk);
    L->nblocks = (L->sh.n - 1 + PEERS_PER_BLOCK - 1) / PEERS_PER_BLOCK;
    if (L->nblocks < 1)
        L->nblocks = 1;
}

/* ------------------------------------------------------------ receive index */

/* Receives of one chunk on one rank in arrival order; on a tie, by the
 * transfer's first send in the input (one number per transfer, so two
 * transfers that arrive together carrying several of the same chunks are
 * ordered the same way for each: otherwise a reduction chain of one chunk
 * could put A before B and another's B before A, a cycle). */
typedef struct {
    int dst;
    long long key;
    double ta;
    int xid;        /* smallest input index among the sends of its transfer */
    int id;
} recv_key;

static int cmp_recv_key(const void *pa, const void *pb)
{
    const recv_key *a = pa, *b = pb;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->ta != b->ta) return a->ta < b->ta ? -1 : 1;
    if (a->xid != b->xid) return a->xid < b->xid ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* First entry of (dst, key) in the sorted index, and how many. */
static int recv_range(const recv_key *rk, int n, int dst, long long key, int *count)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rk[mid].dst < dst || (rk[mid].dst == dst && rk[mid].key < key))
            lo = mid + 1;
        else
            hi = mid;
    }
    int e = lo;
    while (e < n && rk[e].dst == dst && rk[e].key == key)
        e++;
    *count = e - lo;
    return lo;
}

static void chunk_name(const lctx *L, const algo_send *s, char *buf, size_t n)
{
    if (L->sh.red)
        snprintf(buf, n, "chunk %d", s->index);
    else
        snprintf(buf, n, "chunk %d:%d", s->origin, s->index);
}

/* AllGather/AllToAll: every destination other than the origin receives
 * every chunk it must keep. */
static int check_complete(lctx *L, const recv_key *rk, int nr, tc_err *err)
{
    const shape *sh = &L->sh;
    if (sh->red)
        return TC_OK;
    for (int o = 0; o < sh->n; o++)
        for (int i = 0; i < sh->in; i++) {
            long long key = (long long)o * sh->in + i;
            int d0 = 0, d1 = sh->n;
            if (sh->coll == COLL_ALLTOALL) {
                d0 = i / sh->per;
                d1 = d0 + 1;
            }
            for (int d = d0; d < d1; d++) {
                if (d == o)
                    continue;
                int cnt;
                recv_range(rk, nr, d, key, &cnt);
                if (cnt == 0)
                    return tc_err_set(err, TC_INPUT,
                                      "chunk %d:%d never reaches rank %d, which must keep it at "
                                      "output %d", o, i, d, out_at(sh, o, i, d));
            }
        }
    return TC_OK;
}

/* ------------------------------------------------------------ 3. causal order */

typedef struct {
    int from, to;
} edge;

typedef struct {
    edge *v;
    int n, cap;
} edges;

static void add_edge(edges *E, int from, int to)
{
    GROW(E->v, E->n, E->cap);
    E->v[E->n++] = (edge){from, to};
}

/* Event e: transfer e/2, send (e even) or receive (e odd). */
static double ev_time(const lctx *L, int e)
{
    const xfer *x = &L->x[e / 2];
    return (e & 1) ? x->ta : x->ts;
}

static int ev_before(const lctx *L, int a, int b)
{
    double ta = ev_time(L, a), tb = ev_time(L, b);
    if (ta != tb)
        return ta < tb;
    return a < b;
}

static int ev_less(const lctx *L, const int *a, const int *b)
{
    return ev_before(L, *a, *b);
}

TC_HEAP_DEFINE(evq, int, const lctx *, ev_less)

/* Edges: each transfer's send before its receive; on a connection, sends
 * and receives in order, and a send after the receive FIFO_DEPTH places
 * earlier (the runtime's FIFO); a send after the receives that brought its data
 * (the earliest copy of a plain chunk; the latest contribution of a
 * partial sum, with the receives of one chunk on one rank chained in time
 * order); then Kahn's algorithm, earliest event first. */
static int causal_order(lctx *L, const recv_key *rk, int nr, const int *fifo_prev,
                        int *order, tc_err *err)
{
    const algo *a = L->a;
    const shape *sh = &L->sh;
    int nx = L->nx, nev = 2 * nx;
    edges E = {0};
    int rc = TC_OK;
    for (int x = 0; x < nx; x++) {
        add_edge(&E, 2 * x, 2 * x + 1);
        if (fifo_prev[x] >= 0) {
            add_edge(&E, 2 * fifo_prev[x], 2 * x);
            add_edge(&E, 2 * fifo_prev[x] + 1, 2 * x + 1);
        }
        /* a connection holds at most NCCL_STEPS unreceived sends: the
         * send NCCL_STEPS places later comes after this receive */
        int back = x;
        for (int k = 0; k < FIFO_DEPTH && back >= 0; k++)
            back = fifo_prev[back];
        if (back >= 0)
            add_edge(&E, 2 * back + 1, 2 * x);
    }
    for (int x = 0; x < nx && rc == TC_OK; x++) {
        const xfer *X = &L->x[x];
        for (int m = X->first; m < X->first + X->n && rc == TC_OK; m++) {
            const algo_send *s = &a->sends[L->mem[m]];
            if (!sh->red && s->src == s->origin)
                continue;
            int cnt, lo = recv_range(rk, nr, s->src, key_of(sh, s), &cnt);
            char cn[64];
            chunk_name(L, s, cn, sizeof cn);
            if (!sh->red) {
                if (cnt == 0) {
                    rc = tc_err_set(err, TC_INPUT,
                                    "send #%d: rank %d sends %s at %g us but never receives it",
                                    L->mem[m], s->src, cn, s->t_send);
                    break;
                }
                if (rk[lo].ta > s->t_send + tol_at(s->t_send)) {
                    rc = tc_err_set(err, TC_INPUT,
                                    "send #%d: rank %d sends %s at %g us, before it arrives there "
                                    "at %g us", L->mem[m], s->src, cn, s->t_send, rk[lo].ta);
                    break;
                }
                add_edge(&E, 2 * L->xfer_of[rk[lo].id] + 1, 2 * x);
                if (rk[lo].ta > L->x[x].ready)
                    L->x[x].ready = rk[lo].ta;
            } else {
                int last = -1;
                for (int q = lo; q < lo + cnt && rk[q].ta <= s->t_send + tol_at(s->t_send); q++)
                    last = q;
                if (last >= 0) {
                    add_edge(&E, 2 * L->xfer_of[rk[last].id] + 1, 2 * x);
                    if (rk[last].ta > L->x[x].ready)
                        L->x[x].ready = rk[last].ta;
                }
            }
        }
    }
    if (sh->red)
        for (int q = 1; q < nr; q++)
            if (rk[q].dst == rk[q - 1].dst && rk[q].key == rk[q - 1].key &&
                L->xfer_of[rk[q].id] != L->xfer_of[rk[q - 1].id])
                add_edge(&E, 2 * L->xfer_of[rk[q - 1].id] + 1, 2 * L->xfer_of[rk[q].id] + 1);
    if (rc != TC_OK) {
        free(E.v);
        return rc;
    }
    /* CSR and Kahn */
    int *indeg = xcalloc((size_t)nev, sizeof *indeg);
    int *start = xcalloc((size_t)nev + 1, sizeof *start);
    int *adj = xcalloc((size_t)E.n, sizeof *adj);
    for (int i = 0; i < E.n; i++) {
        start[E.v[i].from + 1]++;
        indeg[E.v[i].to]++;
    }
    for (int e = 0; e < nev; e++)
        start[e + 1] += start[e];
    int *fill = xcalloc((size_t)nev, sizeof *fill);
    for (int i = 0; i < E.n; i++)
        adj[start[E.v[i].from] + fill[E.v[i].from]++] = E.v[i].to;
    int *h = xcalloc((size_t)nev, sizeof *h), hn = 0, done = 0;
    for (int e = 0; e < nev; e++)
        if (indeg[e] == 0)
            evq_push(h, &hn, e, L);
    while (hn > 0) {
        int e = evq_pop(h, &hn, L);
        order[done++] = e;
        for (int i = start[e]; i < start[e + 1]; i++)
            if (--indeg[adj[i]] == 0)
                evq_push(h, &hn, adj[i], L);
    }
    if (done < nev)
        rc = tc_err_set(err, TC_INPUT,
                        "the sends' times are inconsistent: %d of %d send/receive events wait on "
                        "each other in a cycle", nev - done, nev);
    free(h);
    free(fill);
    free(adj);
    free(start);
    free(indeg);
    free(E.v);
    return rc;
}

/* ------------------------------------------------------------ 4. chunk placement and runs */

typedef struct {
    int sid;
    loc s;      /* where the sender reads it */
    loc d;      /* where the receiver puts it; BUF_NONE = new scratch */
    loc opnd;   /* receiver's own operand for rrc; BUF_NONE = none */
} member;

static int cmp_member(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    if (a->s.buf != b->s.buf) return a->s.buf < b->s.buf ? -1 : 1;
    if (a->s.off != b->s.off) return a->s.off < b->s.off ? -1 : 1;
    return (a->sid > b->sid) - (a->sid < b->sid);
}

/* With instances, runs may not cross a rank block of i or o. */
static int crosses_block(const lctx *L, int buf, int off)
{
    return L->k > 1 && buf != BUF_S && off % L->sh.blk == 0;
}

static int follows(const lctx *L, loc prev, loc cur)
{
    return cur.buf == prev.buf && cur.off == prev.off + 1 && !crosses_block(L, cur.buf, cur.off);
}

static int extends_run(const lctx *L, const member *prev, const member *cur)
{
    if (!follows(L, prev->s, cur->s))
        return 0;
    if ((prev->d.buf == BUF_NONE) != (cur->d.buf == BUF_NONE))
        return 0;
    if (cur->d.buf != BUF_NONE && !follows(L, prev->d, cur->d))
        return 0;
    if ((prev->opnd.buf == BUF_NONE) != (cur->opnd.buf == BUF_NONE))
        return 0;
    if (cur->opnd.buf != BUF_NONE && !follows(L, prev->opnd, cur->opnd))
        return 0;
    return 1;
}

/* Ends of the runs of sorted members: run r is [cut[r], cut[r+1]). */
static int cut_runs(const lctx *L, const member *m, int n, int *cut)
{
    int nr = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || !extends_run(L, &m[i - 1], &m[i]) || i - cut[nr - 1] >= MAX_CNT)
            cut[nr++] = i;
    cut[nr] = n;
    return nr;
}

typedef struct {
    locmap map;         /* (rank * nkeys + key) -> location */
    loc *sloc, *salt;   /* per member position: sender's locations at the send event */
    member *ma, *mb;
    int *cut_a, *cut_b;
} place_state;

/* Sender side, at the send event. */
static void place_send(lctx *L, place_state *P, int x)
{
    const shape *sh = &L->sh;
    const xfer *X = &L->x[x];
    for (int m = X->first; m < X->first + X->n; m++) {
        const algo_send *s = &L->a->sends[L->mem[m]];
        P->salt[m] = noloc();
        if (!sh->red && s->src == s->origin) {
            P->sloc[m] = mkloc(BUF_I, s->index);
            int out = out_at(sh, s->origin, s->index, s->origin);
            if (out >= 0)
                P->salt[m] = mkloc(BUF_O, out);
            continue;
        }
        loc v = lm_get(&P->map, (long long)s->src * sh->nkeys + key_of(sh, s));
        if (v.buf == BUF_NONE)
            v = mkloc(BUF_I, s->index);     /* a partial with no contribution yet */
        P->sloc[m] = v;
    }
}

/* Receiver side of one member. */
static void place_recv_member(lctx *L, place_state *P, const xfer *X, int m, member *out)
{
    const shape *sh = &L->sh;
    const algo_send *s = &L->a->sends[L->mem[m]];
    long long mk = (long long)X->dst * sh->nkeys + key_of(sh, s);
    out->sid = L->mem[m];
    out->opnd = noloc();
    if (!sh->red) {
        int o = out_at(sh, s->origin, s->index, X->dst);
        out->d = o >= 0 ? mkloc(BUF_O, o) : lm_get(&P->map, mk);
    } else if (X->reduce) {
        loc v = lm_get(&P->map, mk);
        if (v.buf != BUF_NONE) {
            out->d = v;
            out->opnd = v;
        } else {
            int o = red_out_at(sh, s->index, X->dst);
            out->d = o >= 0 ? mkloc(BUF_O, o) : noloc();
            out->opnd = mkloc(BUF_I, s->index);
        }
    } else {
        out->d = mkloc(BUF_O, s->index);    /* AllReduce: the finished chunk */
    }
}

/* One send at the sender and its receive at the receiver; returns the
 * send's op id (the receive is the next one).  A BUF_NONE operand means a
 * plain receive (r), otherwise rrc with that local operand. */
static int new_pair(lctx *L, int x, loc s, loc d, loc opnd, int cnt, long long ps, int srun,
                    long long pr, int rrun)
{
    const xfer *X = &L->x[x];
    int so = new_op(L);
    int ro = new_op(L);
    op *S = &L->ops[so], *R = &L->ops[ro];
    S->rank = X->src;
    S->kind = OP_SEND;
    S->peer = X->dst;
    S->xfer = x;
    S->conn = X->conn;
    S->p = ps;
    S->run = srun;
    S->type0 = ST_S;
    S->src = s;
    S->src_rank = X->src;
    S->dst = d;
    S->dst_rank = X->dst;
    S->cnt = cnt;
    S->partner = ro;
    R->rank = X->dst;
    R->kind = OP_RECV;
    R->peer = X->src;
    R->xfer = x;
    R->conn = X->conn;
    R->p = pr;
    R->run = rrun;
    R->dst = d;
    R->dst_rank = X->dst;
    R->cnt = cnt;
    R->partner = so;
    if (opnd.buf != BUF_NONE) {
        R->type0 = ST_RRC;
        R->src = opnd;
        R->src_rank = X->dst;
    } else {
        R->type0 = ST_R;
        R->src = s;
        R->src_rank = X->src;
    }
    return so;
}

/* Fresh scratch of cnt chunks on a rank. */
static loc new_scratch(lctx *L, int rank, int cnt)
{
    loc l = mkloc(BUF_S, L->scount[rank]);
    L->scount[rank] += cnt;
    return l;
}

static void emit_run(lctx *L, place_state *P, int x, const member *m, int a, int b, long long ps,
                     long long pr, int run)
{
    const xfer *X = &L->x[x];
    int cnt = b - a;
    loc d = m[a].d.buf == BUF_NONE ? new_scratch(L, X->dst, cnt) : m[a].d;
    for (int i = a; i < b; i++) {
        const algo_send *s = &L->a->sends[m[i].sid];
        lm_put(&P->map, (long long)X->dst * L->sh.nkeys + key_of(&L->sh, s),
               mkloc(d.buf, d.off + (i - a)));
    }
    new_pair(L, x, m[a].s, d, m[a].opnd, cnt, ps, run, pr, run);
}

static int one_run_src(const lctx *L, const member *m, int n)
{
    for (int i = 1; i < n; i++)
        if (!follows(L, m[i - 1].s, m[i].s))
            return 0;
    return 1;
}

static int one_run_dst(const lctx *L, const member *m, int n)
{
    for (int i = 1; i < n; i++) {
        if ((m[i - 1].d.buf == BUF_NONE) != (m[i].d.buf == BUF_NONE))
            return 0;
        if (m[i].d.buf != BUF_NONE && !follows(L, m[i - 1].d, m[i].d))
            return 0;
    }
    return 1;
}

/* Whether a transfer that splits into nr runs is cheaper staged: one send
 * from contiguous scratch (gathered by local copies if its sources are
 * scattered) into contiguous scratch (scattered into place by local
 * copies), instead of nr - 1 extra alphas.  Needs the size and the
 * topology to weigh them; never for reductions (no local three-operand
 * reduce) or groups over the cnt limit. */
static int stage_pays(const lctx *L, const xfer *X, const member *m, int n, int nr, int *gather,
                      int *scatter)
{
    if (nr <= 1 || n > MAX_CNT || L->o->size_bytes <= 0 || !L->t)
        return 0;
    *gather = !one_run_src(L, m, n);
    *scatter = X->reduce || !one_run_dst(L, m, n);
    double cb = (double)L->o->size_bytes / ((double)L->sh.C * L->k);
    topo_route r = topo_route_of(L->t, X->src, X->dst);
    double split = (nr - 1) * r.alpha_us;
    if (!(L->t->copy_gbps > 0) || (X->reduce && !(L->t->reduce_gbps > 0)))
        return 0;       /* local work the model does not price: never stage */
    double copy = cost_copy_us(L->t, cb);
    int fixed = 0;
    for (int i = 0; i < n; i++)
        fixed += m[i].d.buf != BUF_NONE;
    double stage = *gather ? n * copy : 0;
    if (X->reduce)
        stage += n * cost_reduce_us(L->t, cb) + fixed * copy;
    else if (*scatter)
        stage += fixed * copy;
    return stage < split;
}

static int new_local(lctx *L, step_type type, int rank, loc src, loc dst, int cnt, long long p,
                     int run, int host)
{
    int c = new_op(L);
    op *o = &L->ops[c];
    o->rank = rank;
    o->kind = OP_COPY;
    o->p = p;
    o->run = run;
    o->type0 = type;
    o->src = src;
    o->dst = dst;
    o->src_rank = o->dst_rank = rank;
    o->cnt = cnt;
    o->host = host;
    o->xfer = L->ops[host].xfer;
    return c;
}

static int is_partial(const member *m)
{
    return m->d.buf != BUF_NONE && m->opnd.buf == m->d.buf && m->opnd.off == m->d.off;
}

/* Local steps of one kind over members [0, n) selected by `want`, with
 * operands src_of / dst_of, coalesced where both are contiguous. */
typedef loc (*operand_fn)(const member *m, int i, loc staged);

static loc staged_of(const member *m, int i, loc t)
{
    (void)m;
    return mkloc(t.buf, t.off + i);
}

static loc partial_of(const member *m, int i, loc t)
{
    (void)t;
    return m[i].d;
}

static loc input_of(const member *m, int i, loc t)
{
    (void)t;
    return m[i].opnd;
}

static int emit_locals(lctx *L, step_type type, int rank, const member *m, int n,
                       int (*want)(const member *), int negate, operand_fn src_of,
                       operand_fn dst_of, loc t, long long p, int run, int host)
{
    for (int i = 0; i < n;) {
        if ((want(&m[i]) != 0) == (negate != 0)) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < n && j - i < MAX_CNT && (want(&m[j]) != 0) != (negate != 0) &&
               follows(L, src_of(m, j - 1, t), src_of(m, j, t)) &&
               follows(L, dst_of(m, j - 1, t), dst_of(m, j, t)))
            j++;
        new_local(L, type, rank, src_of(m, i, t), dst_of(m, i, t), j - i, p, run++, host);
        i = j;
    }
    return run;
}

static int fixed_dst(const member *m)
{
    return m->d.buf != BUF_NONE;
}

static int first_fixed(const member *m)
{
    return !is_partial(m) && m->d.buf != BUF_NONE;
}

/* A staged reduction, after its receive into scratch t: add each received
 * partial into the receiver's accumulation slot (re), or, for a first
 * contribution, add the receiver's input into the received partial in
 * place (re), which then is the accumulation slot, copied into o at the
 * final owner. */
static void emit_staged_reduce(lctx *L, place_state *P, int x, const member *m, int n, loc t,
                               long long pr, int host)
{
    const xfer *X = &L->x[x];
    int run = 1;
    run = emit_locals(L, ST_RE, X->dst, m, n, is_partial, 0, staged_of, partial_of, t, pr, run,
                      host);
    run = emit_locals(L, ST_RE, X->dst, m, n, is_partial, 1, input_of, staged_of, t, pr, run,
                      host);
    emit_locals(L, ST_CPY, X->dst, m, n, first_fixed, 0, staged_of, partial_of, t, pr, run, host);
    for (int i = 0; i < n; i++) {
        const algo_send *s = &L->a->sends[m[i].sid];
        loc at = is_partial(&m[i]) || fixed_dst(&m[i]) ? m[i].d : mkloc(t.buf, t.off + i);
        lm_put(&P->map, (long long)X->dst * L->sh.nkeys + key_of(&L->sh, s), at);
    }
}

/* The local work staging adds, per member, for the caller's notes: the
 * same costs stage_pays() weighed. */
static void note_staged(const lctx *L, const xfer *X, const member *m, int n, int gather,
                        int scatter)
{
    if (!L->o->notes)
        return;
    double cb = (double)L->o->size_bytes / ((double)L->sh.C * L->k);
    double copy = cost_copy_us(L->t, cb);
    for (int i = 0; i < n; i++) {
        lower_note *nt = &L->o->notes[m[i].sid];
        int fixed = m[i].d.buf != BUF_NONE;
        nt->pre_us = gather ? copy : 0;
        if (X->reduce)
            nt->post_us = cost_reduce_us(L->t, cb) + (fixed ? copy : 0);
        else
            nt->place_us = scatter && fixed ? copy : 0;
    }
}

/* A staged transfer: gather copies at the sender (runs 0..g-1, then the
 * send), one send, one receive (run 0) and scatter copies (runs 1..). */
static void emit_staged(lctx *L, place_state *P, int x, member *m, int n, int gather, int scatter,
                        long long ps, long long pr)
{
    const xfer *X = &L->x[x];
    int ng = 0;
    if (gather)
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && follows(L, m[j - 1].s, m[j].s))
                j++;
            ng++;
            i = j;
        }
    loc s0 = gather ? new_scratch(L, X->src, n) : m[0].s;
    loc d0 = scatter || m[0].d.buf == BUF_NONE ? new_scratch(L, X->dst, n) : m[0].d;
    int so = new_pair(L, x, s0, d0, noloc(), n, ps, ng, pr, 0), ro = so + 1;
    int run = 0;
    if (gather)
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && follows(L, m[j - 1].s, m[j].s))
                j++;
            new_local(L, ST_CPY, X->src, m[i].s, mkloc(BUF_S, s0.off + i), j - i, ps, run++, so);
            i = j;
        }
    run = 1;
    if (X->reduce) {
        emit_staged_reduce(L, P, x, m, n, d0, pr, ro);
        return;
    }
    if (scatter)
        for (int i = 0; i < n;) {
            if (m[i].d.buf == BUF_NONE) {
                i++;
                continue;
            }
            int j = i + 1;
            while (j < n && m[j].d.buf != BUF_NONE && follows(L, m[j - 1].d, m[j].d))
                j++;
            new_local(L, ST_CPY, X->dst, mkloc(BUF_S, d0.off + i), m[i].d, j - i, pr, run++, ro);
            i = j;
        }
    /* where the receiver keeps each chunk for later sends: the staging
     * slot (it arrived together, so it likely leaves together), except an
     * AllReduce result, which lives in o */
    for (int i = 0; i < n; i++) {
        const algo_send *s = &L->a->sends[m[i].sid];
        loc at = mkloc(d0.buf, d0.off + i);
        if (scatter && L->sh.red && m[i].d.buf != BUF_NONE)
            at = m[i].d;
        lm_put(&P->map, (long long)X->dst * L->sh.nkeys + key_of(&L->sh, s), at);
    }
}

/* Receiver side, at the receive event: place, split into runs (or stage),
 * emit. */
static void place_recv(lctx *L, place_state *P, int x, long long ps, long long pr)
{
    const xfer *X = &L->x[x];
    int n = X->n, has_alt = 0;
    for (int i = 0; i < n; i++) {
        int m = X->first + i;
        place_recv_member(L, P, X, m, &P->ma[i]);
        P->ma[i].s = P->sloc[m];
        P->mb[i] = P->ma[i];
        if (P->salt[m].buf != BUF_NONE) {
            P->mb[i].s = P->salt[m];
            has_alt = 1;
        }
    }
    qsort(P->ma, (size_t)n, sizeof *P->ma, cmp_member);
    int nra = cut_runs(L, P->ma, n, P->cut_a);
    member *m = P->ma;
    int *cut = P->cut_a, nr = nra;
    if (has_alt) {
        qsort(P->mb, (size_t)n, sizeof *P->mb, cmp_member);
        int nrb = cut_runs(L, P->mb, n, P->cut_b);
        if (nrb < nra) {
            m = P->mb;
            cut = P->cut_b;
            nr = nrb;
        }
    }
    int gather, scatter;
    if (stage_pays(L, X, m, n, nr, &gather, &scatter)) {
        note_staged(L, X, m, n, gather, scatter);
        emit_staged(L, P, x, m, n, gather, scatter, ps, pr);
        return;
    }
    for (int r = 0; r < nr; r++) {
        emit_run(L, P, x, m, cut[r], cut[r + 1], ps, pr, r);
        if (L->o->notes)
            for (int i = cut[r]; i < cut[r + 1]; i++)
                L->o->notes[m[i].sid].run = r;
    }
}

/* Local copies i -> o of consecutive (src, dst) pairs, cut into runs. */
static void emit_copies(lctx *L, int rank, const int *src, const int *dst, int n, long long p)
{
    int run = 0;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && j - i < MAX_CNT && follows(L, mkloc(BUF_I, src[j - 1]), mkloc(BUF_I, src[j])) &&
               follows(L, mkloc(BUF_O, dst[j - 1]), mkloc(BUF_O, dst[j])))
            j++;
        int c = new_op(L);
        op *o = &L->ops[c];
        o->rank = rank;
        o->kind = OP_COPY;
        o->p = p;
        o->run = run++;
        o->type0 = ST_CPY;
        o->src = mkloc(BUF_I, src[i]);
        o->dst = mkloc(BUF_O, dst[i]);
        o->src_rank = o->dst_rank = rank;
        o->cnt = j - i;
        i = j;
    }
}

/* Chunks the collective keeps on their own origin: copied first. */
static void emit_self_copies(lctx *L)
{
    const shape *sh = &L->sh;
    if (sh->red)
        return;
    int *src = xcalloc((size_t)sh->in, sizeof *src), *dst = xcalloc((size_t)sh->in, sizeof *dst);
    for (int r = 0; r < sh->n; r++) {
        int n = 0;
        for (int i = 0; i < sh->in; i++) {
            int o = out_at(sh, r, i, r);
            if (o >= 0) {
                src[n] = i;
                dst[n++] = o;
            }
        }
        emit_copies(L, r, src, dst, n, -1);
    }
    free(src);
    free(dst);
}

/* Reductions: a final owner that received no contribution copies its input. */
static void emit_missing_copies(lctx *L, place_state *P, long long p)
{
    const shape *sh = &L->sh;
    if (!sh->red)
        return;
    int *src = xcalloc((size_t)sh->out, sizeof *src), *dst = xcalloc((size_t)sh->out, sizeof *dst);
    for (int r = 0; r < sh->n; r++) {
        int n = 0;
        for (int o = 0; o < sh->out; o++) {
            int j = sh->coll == COLL_ALLREDUCE ? o : r * sh->per + o;
            if (lm_get(&P->map, (long long)r * sh->nkeys + j).buf == BUF_NONE) {
                src[n] = j;
                dst[n++] = o;
            }
        }
        emit_copies(L, r, src, dst, n, p);
    }
    free(src);
    free(dst);
}

static void place_all(lctx *L, const int *order)
{
    int nev = 2 * L->nx, maxn = 1;
    for (int x = 0; x < L->nx; x++)
        if (L->x[x].n > maxn)
            maxn = L->x[x].n;
    place_state P;
    lm_alloc(&P.map, 1024);
    P.sloc = xcalloc((size_t)L->a->nsends + 1, sizeof *P.sloc);
    P.salt = xcalloc((size_t)L->a->nsends + 1, sizeof *P.salt);
    P.ma = xcalloc((size_t)maxn, sizeof *P.ma);
    P.mb = xcalloc((size_t)maxn, sizeof *P.mb);
    P.cut_a = xcalloc((size_t)maxn + 1, sizeof *P.cut_a);
    P.cut_b = xcalloc((size_t)maxn + 1, sizeof *P.cut_b);
    long long *pos = xcalloc((size_t)nev + 1, sizeof *pos);
    for (int i = 0; i < nev; i++)
        pos[order[i]] = i;
    emit_self_copies(L);
    for (int i = 0; i < nev; i++) {
        int e = order[i], x = e / 2;
        if (e & 1)
            place_recv(L, &P, x, pos[2 * x], pos[2 * x + 1]);
        else
            place_send(L, &P, x);
    }
    emit_missing_copies(L, &P, nev);
    free(pos);
    free(P.cut_a);
    free(P.cut_b);
    free(P.ma);
    free(P.mb);
    free(P.sloc);
    free(P.salt);
    lm_free(&P.map);
}

/* ------------------------------------------------------------ rank order and slots */

typedef struct {
    int rank;
    long long p;
    int run, kind, id;
} rank_key;

static int cmp_rank_key(const void *pa, const void *pb)
{
    const rank_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->p != b->p) return a->p < b->p ? -1 : 1;
    if (a->run != b->run) return a->run < b->run ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static void sort_rank_ops(lctx *L)
{
    rank_key *rk = xcalloc((size_t)L->nops, sizeof *rk);
    for (int i = 0; i < L->nops; i++)
        rk[i] = (rank_key){L->ops[i].rank, L->ops[i].p, L->ops[i].run, L->ops[i].kind, i};
    qsort(rk, (size_t)L->nops, sizeof *rk, cmp_rank_key);
    L->rank_ops = xcalloc((size_t)L->nops, sizeof *L->rank_ops);
    L->rank_first = xcalloc((size_t)L->sh.n + 1, sizeof *L->rank_first);
    for (int i = 0; i < L->nops; i++) {
        L->rank_ops[i] = rk[i].id;
        L->rank_first[rk[i].rank + 1]++;
    }
    for (int r = 0; r < L->sh.n; r++)
        L->rank_first[r + 1] += L->rank_first[r];
    free(rk);
}

/* Chunk slot of (buf, off) in a rank's i|o|s address space. */
static int slot_of(const lctx *L, loc l)
{
    switch (l.buf) {
    case BUF_I: return l.off;
    case BUF_O: return L->sh.in + l.off;
    default: return L->sh.in + L->sh.out + l.off;
    }
}

static int max_slots(const lctx *L)
{
    int m = 0;
    for (int r = 0; r < L->sh.n; r++)
        if (L->scount[r] > m)
            m = L->scount[r];
    return L->sh.in + L->sh.out + m + 1;
}

static int op_reads(const op *o, loc *l)
{
    if (o->kind == OP_SEND || o->kind == OP_COPY ||
        (o->kind == OP_RECV && (o->type0 == ST_RRC))) {
        *l = o->src;
        return 1;
    }
    return 0;
}

static int op_writes(const op *o, loc *l)
{
    if (o->kind == OP_RECV || o->kind == OP_COPY) {
        *l = o->dst;
        return 1;
    }
    return 0;
}

/* Whether op o writes the slot of (buf, off). */
static int writes_loc(const op *o, int buf, int off)
{
    loc l;
    return op_writes(o, &l) && l.buf == buf && off >= l.off && off < l.off + o->cnt;
}

/* For each send: the receive that wrote exactly its source slots last, if
 * that send is the only operation reading what the receive wrote (a
 * forward that may fuse into rcs/rrcs).  Fusing a receive that other
 * operations also read would make them wait for the forward's transfer
 * too, so such receives stay plain.  Found by walking each rank's
 * operations in order. */
static void find_writers(lctx *L)
{
    int ns = max_slots(L);
    int *lw = xcalloc((size_t)ns, sizeof *lw);
    int *nreaders = xcalloc((size_t)L->nops, sizeof *nreaders);
    int *last_reader = xcalloc((size_t)L->nops, sizeof *last_reader);
    for (int i = 0; i < L->nops; i++)
        last_reader[i] = -1;
    for (int r = 0; r < L->sh.n; r++) {
        for (int i = 0; i < ns; i++)
            lw[i] = -1;
        for (int q = L->rank_first[r]; q < L->rank_first[r + 1]; q++) {
            int id = L->rank_ops[q];
            op *o = &L->ops[id];
            loc l;
            if (op_reads(o, &l))
                for (int c = 0; c < o->cnt; c++) {
                    int w = lw[slot_of(L, l) + c];
                    if (w >= 0 && last_reader[w] != id && !writes_loc(o, l.buf, l.off + c)) {
                        last_reader[w] = id;
                        nreaders[w]++;
                    }
                }
            if (o->kind == OP_SEND) {
                int s0 = slot_of(L, o->src), w = lw[s0];
                int ok = w >= 0 && L->ops[w].kind == OP_RECV && L->ops[w].dst.buf == o->src.buf &&
                         L->ops[w].dst.off == o->src.off && L->ops[w].cnt == o->cnt;
                for (int c = 1; ok && c < o->cnt; c++)
                    ok = lw[s0 + c] == w;
                o->writer = ok ? w : -1;
            }
            if (op_writes(o, &l))
                for (int c = 0; c < o->cnt; c++)
                    lw[slot_of(L, l) + c] = id;
        }
    }
    for (int i = 0; i < L->nops; i++) {
        op *o = &L->ops[i];
        if (o->kind == OP_SEND && o->writer >= 0 && nreaders[o->writer] != 1)
            o->writer = -1;
    }
    free(last_reader);
    free(nreaders);
    free(lw);
}

/* The resource a send leaves its rank through, as a key unique on the
 * rank: its out port on switch k (2k) or the egress of NIC k (2k + 1); -1
 * for a direct link (its connection's tb orders it already) or without a
 * topology. */
static long long out_port_key(const lctx *L, const op *o)
{
    if (!L->t)
        return -1;
    topo_route r = topo_route_of(L->t, o->rank, o->peer);
    if (r.kind == ROUTE_SWITCH)
        return 2LL * r.sw;
    if (r.kind == ROUTE_NIC)
        return 2LL * r.nic_src + 1;
    return -1;
}

/* Out-port chains.  The executor serves a switch port or a NIC first come
 * first served by the time a transfer asks for it, so sends of one rank
 * that share an out port but sit in different tbs (one per peer) would
 * all ask at once and go in tb order, not in the schedule's.  Each send
 * therefore waits for the rank's previous send on the same out port (a
 * dependency, when that one is in another tb), which is the order the
 * schedule gave the port.  Also notes when each transfer asks: once its
 * data is there, the previous transfer on its connection and the previous
 * one on its out port have ended (xfer.req; merge_units uses it). */
static void chain_sends(lctx *L)
{
    long long *key = NULL;
    int *last = NULL, nk = 0, ck = 0;
    int *conn_last = xcalloc((size_t)L->nconn + 1, sizeof *conn_last);
    for (int c = 0; c < L->nconn; c++)
        conn_last[c] = -1;
    for (int x = 0; x < L->nx; x++)
        L->x[x].req = L->x[x].ready;
    for (int r = 0; r < L->sh.n; r++) {
        nk = 0;
        for (int q = L->rank_first[r]; q < L->rank_first[r + 1]; q++) {
            int id = L->rank_ops[q];
            op *o = &L->ops[id];
            if (o->kind != OP_SEND)
                continue;
            xfer *X = &L->x[o->xfer];
            int cp = conn_last[o->conn];
            if (cp >= 0 && L->ops[cp].xfer != o->xfer && L->x[L->ops[cp].xfer].ta > X->req)
                X->req = L->x[L->ops[cp].xfer].ta;
            conn_last[o->conn] = id;
            long long k = out_port_key(L, o);
            if (k < 0)
                continue;
            int j = 0;
            while (j < nk && key[j] != k)
                j++;
            if (j == nk) {
                if (nk == ck) {
                    ck = ck ? 2 * ck : 8;
                    key = xrealloc(key, (size_t)ck * sizeof *key);
                    last = xrealloc(last, (size_t)ck * sizeof *last);
                }
                key[nk] = k;
                last[nk++] = -1;
            }
            int pv = last[j];
            if (pv >= 0 && L->ops[pv].xfer != o->xfer) {
                o->chain_prev = pv;
                if (L->x[L->ops[pv].xfer].ta > X->req)
                    X->req = L->x[L->ops[pv].xfer].ta;
            }
            last[j] = id;
        }
    }
    free(conn_last);
    free(key);
    free(last);
}

/* ------------------------------------------------------------ 5. layout */

typedef struct {
    int rank, chan, dir, peer;
    long long p;
    int run, id;
} unit_key;

static int cmp_unit_key(const void *pa, const void *pb)
{
    const unit_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->chan != b->chan) return a->chan < b->chan ? -1 : 1;
    if (a->dir != b->dir) return a->dir < b->dir ? -1 : 1;
    if (a->peer != b->peer) return a->peer < b->peer ? -1 : 1;
    if (a->p != b->p) return a->p < b->p ? -1 : 1;
    if (a->run != b->run) return a->run < b->run ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int op_before(const op *a, const op *b)
{
    if (a->p != b->p)
        return a->p < b->p;
    return a->run < b->run;
}

/* Slices and channels; returns the channels of one instance. */
static int assign_channels(lctx *L, int B)
{
    int *count = xcalloc((size_t)L->nconn, sizeof *count);
    int *last = xcalloc((size_t)L->nconn, sizeof *last);
    L->nslices = 1;
    for (int q = 0; q < L->nops; q++) {
        int id = L->rank_ops[q];
        op *o = &L->ops[id];
        o->slice_prev = -1;
        if (o->kind != OP_SEND)
            continue;
        int c = o->conn, idx = count[c]++;
        o->slice = idx / B;
        if (idx > 0 && idx % B == 0)
            o->slice_prev = last[c];
        last[c] = id;
        if (o->slice + 1 > L->nslices)
            L->nslices = o->slice + 1;
    }
    for (int i = 0; i < L->nops; i++) {
        op *o = &L->ops[i];
        if (o->kind == OP_COPY)
            continue;
        const op *s = o->kind == OP_SEND ? o : &L->ops[o->partner];
        const conn *c = &L->conns[o->conn];
        o->chan = (c->block * L->ncolors + c->color) * L->nslices + s->slice;
    }
    for (int i = 0; i < L->nops; i++) {
        op *o = &L->ops[i];
        if (o->kind == OP_COPY)
            o->chan = o->host >= 0 ? L->ops[o->host].chan : 0;
    }
    free(count);
    free(last);
    return L->nblocks * L->ncolors * L->nslices;
}

static void build_units(lctx *L)
{
    int n = 0;
    unit_key *uk = xcalloc((size_t)L->nops, sizeof *uk);
    for (int i = 0; i < L->nops; i++) {
        const op *o = &L->ops[i];
        if (o->kind == OP_COPY && o->host < 0)
            continue;
        const op *h = o->kind == OP_COPY ? &L->ops[o->host] : o;
        uk[n++] = (unit_key){o->rank, o->chan, h->kind == OP_SEND ? 0 : 1, h->peer, o->p, o->run, i};
    }
    qsort(uk, (size_t)n, sizeof *uk, cmp_unit_key);
    L->unit_ops = xcalloc((size_t)n, sizeof *L->unit_ops);
    L->units = xcalloc((size_t)n, sizeof *L->units);
    L->nunits = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || uk[i].rank != uk[i - 1].rank || uk[i].chan != uk[i - 1].chan ||
            uk[i].dir != uk[i - 1].dir || uk[i].peer != uk[i - 1].peer) {
            unit *u = &L->units[L->nunits++];
            *u = (unit){uk[i].rank, uk[i].chan, uk[i].dir, uk[i].peer, i, 0, -1};
        }
        L->unit_ops[i] = uk[i].id;
        L->units[L->nunits - 1].n++;
        L->ops[uk[i].id].unit = L->nunits - 1;
    }
    free(uk);
}

/* When an operation can begin at the earliest: a receive at its arrival,
 * a send when the executor asks for its resources (chain_sends), which may
 * be before its scheduled start (it then waits for a port). */
static double op_start(const lctx *L, const op *o)
{
    if (o->kind == OP_COPY)
        o = &L->ops[o->host];
    const xfer *x = &L->x[o->xfer];
    return o->kind == OP_SEND ? x->req : x->ta;
}

static double op_end(const lctx *L, const op *o)
{
    return L->x[o->xfer].ta;
}

/* Merge two units' operation lists in rank order into out (may be NULL);
 * returns 0 if some operation would start before the previous one of
 * another transfer ends (merging would then delay it). */
static int merge_units(const lctx *L, const unit *u, const unit *v, int *out)
{
    int i = 0, j = 0, n = 0, prev = -1, ok = 1;
    while (i < u->n || j < v->n) {
        int take_u = j >= v->n ||
                     (i < u->n && op_before(&L->ops[L->unit_ops[u->first + i]],
                                            &L->ops[L->unit_ops[v->first + j]]));
        int id = take_u ? L->unit_ops[u->first + i++] : L->unit_ops[v->first + j++];
        if (out)
            out[n++] = id;
        if (prev >= 0 && L->ops[prev].xfer != L->ops[id].xfer) {
            double e = op_end(L, &L->ops[prev]);
            if (op_start(L, &L->ops[id]) < e - tol_at(e))
                ok = 0;
        }
        prev = id;
    }
    return ok;
}

typedef struct {
    int rank, count, chan, rpeer, speer, ru, su;
} cand;

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    if (a->chan != b->chan) return a->chan < b->chan ? -1 : 1;
    if (a->rpeer != b->rpeer) return a->rpeer < b->rpeer ? -1 : 1;
    return (a->speer > b->speer) - (a->speer < b->speer);
}

static int cmp_int2(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* A send may fuse with the receive that wrote its source when both are on
 * one channel, the send does not start a slice and it is asked for as soon
 * as that data arrives (an rcs sends right away; a forward the schedule
 * holds back behind other sends on its port stays a step of its own). */
static int fusable(const lctx *L, const op *s)
{
    if (s->kind != OP_SEND || s->writer < 0 || s->slice_prev >= 0 ||
        L->ops[s->writer].chan != s->chan)
        return 0;
    double arrive = L->x[L->ops[s->writer].xfer].ta;
    return L->x[s->xfer].req <= arrive + tol_at(arrive);
}

/* Pair receive units with send units that forward what they receive. */
static void merge_pairs(lctx *L)
{
    int np = 0;
    int *pairs = xcalloc((size_t)2 * (L->nops + 1), sizeof *pairs);
    for (int i = 0; i < L->nops; i++) {
        const op *s = &L->ops[i];
        if (!fusable(L, s))
            continue;
        pairs[2 * np] = L->ops[s->writer].unit;
        pairs[2 * np + 1] = s->unit;
        np++;
    }
    qsort(pairs, (size_t)np, 2 * sizeof *pairs, cmp_int2);
    cand *cs = xcalloc((size_t)np + 1, sizeof *cs);
    int nc = 0;
    for (int i = 0; i < np;) {
        int j = i;
        while (j < np && pairs[2 * j] == pairs[2 * i] && pairs[2 * j + 1] == pairs[2 * i + 1])
            j++;
        const unit *ru = &L->units[pairs[2 * i]], *su = &L->units[pairs[2 * i + 1]];
        cs[nc++] = (cand){ru->rank, j - i, ru->chan, ru->peer, su->peer, pairs[2 * i],
                          pairs[2 * i + 1]};
        i = j;
    }
    qsort(cs, (size_t)nc, sizeof *cs, cmp_cand);
    for (int i = 0; i < nc; i++) {
        unit *ru = &L->units[cs[i].ru], *su = &L->units[cs[i].su];
        if (ru->merged >= 0 || su->merged >= 0)
            continue;
        if (!merge_units(L, ru, su, NULL))
            continue;
        ru->merged = cs[i].su;
        su->merged = cs[i].ru;
    }
    free(cs);
    free(pairs);
}

typedef struct {
    int rank, chan, local, recv, send, idx;
} tb_key;

static int cmp_tb_key(const void *pa, const void *pb)
{
    const tb_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->chan != b->chan) return a->chan < b->chan ? -1 : 1;
    if (a->local != b->local) return a->local > b->local ? -1 : 1;
    if (a->recv != b->recv) return a->recv < b->recv ? -1 : 1;
    if (a->send != b->send) return a->send < b->send ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Threadblocks from units (merged pairs become one) plus each rank's local
 * tb, in natural order: by rank, channel, local first, recv peer, send peer. */
static void build_tbs(lctx *L)
{
    int n = L->sh.n;
    btb *raw = xcalloc((size_t)L->nunits + (size_t)n + 1, sizeof *raw);
    int *ops = xcalloc((size_t)L->nops + 1, sizeof *ops);
    int nraw = 0, nops = 0;
    for (int r = 0; r < n; r++) {
        int first = nops;
        for (int q = L->rank_first[r]; q < L->rank_first[r + 1]; q++)
            if (L->ops[L->rank_ops[q]].kind == OP_COPY && L->ops[L->rank_ops[q]].host < 0)
                ops[nops++] = L->rank_ops[q];
        if (nops > first)
            raw[nraw++] = (btb){r, 0, -1, -1, 1, first, nops - first, 0, 0, 0};
    }
    for (int u = 0; u < L->nunits; u++) {
        const unit *U = &L->units[u];
        if (U->merged >= 0 && U->dir == 0)
            continue;   /* taken with its receive unit */
        btb *b = &raw[nraw++];
        *b = (btb){U->rank, U->chan, -1, -1, 0, nops, 0, 0, 0, 0};
        if (U->merged >= 0) {
            const unit *S = &L->units[U->merged];
            b->recv = U->peer;
            b->send = S->peer;
            merge_units(L, U, S, ops + nops);
            b->n = U->n + S->n;
        } else {
            if (U->dir == 0)
                b->send = U->peer;
            else
                b->recv = U->peer;
            memcpy(ops + nops, L->unit_ops + U->first, (size_t)U->n * sizeof *ops);
            b->n = U->n;
        }
        nops += b->n;
    }
    tb_key *tk = xcalloc((size_t)nraw + 1, sizeof *tk);
    for (int i = 0; i < nraw; i++)
        tk[i] = (tb_key){raw[i].rank, raw[i].chan, raw[i].local,
                         raw[i].recv < 0 ? INT_MAX : raw[i].recv,
                         raw[i].send < 0 ? INT_MAX : raw[i].send, i};
    qsort(tk, (size_t)nraw, sizeof *tk, cmp_tb_key);
    L->tbs = xcalloc((size_t)nraw + 1, sizeof *L->tbs);
    L->tb_ops = ops;
    L->ntb_ops = nops;
    L->ntbs = nraw;
    L->rank_tb_first = xcalloc((size_t)n + 1, sizeof *L->rank_tb_first);
    for (int i = 0; i < nraw; i++) {
        btb *b = &L->tbs[i];
        *b = raw[tk[i].idx];
        L->rank_tb_first[b->rank + 1]++;
        for (int q = b->first; q < b->first + b->n; q++)
            L->ops[ops[q]].tb = i;
    }
    for (int r = 0; r < n; r++)
        L->rank_tb_first[r + 1] += L->rank_tb_first[r];
    for (int i = 0; i < nraw; i++)
        L->tbs[i].natural = i - L->rank_tb_first[L->tbs[i].rank];
    free(tk);
    free(raw);
}

/* A receive followed in its tb by the forward of exactly what it wrote
 * becomes one rcs (rrcs for a reduction). */
static void fuse_forwards(lctx *L)
{
    for (int t = 0; t < L->ntbs; t++) {
        const btb *b = &L->tbs[t];
        if (b->local || b->send < 0 || b->recv < 0)
            continue;
        for (int q = b->first; q + 1 < b->first + b->n; q++) {
            op *r = &L->ops[L->tb_ops[q]], *s = &L->ops[L->tb_ops[q + 1]];
            if (r->kind != OP_RECV || r->absorbed || !fusable(L, s) ||
                s->writer != L->tb_ops[q])
                continue;
            r->type = r->type0 == ST_RRC ? ST_RRCS : ST_RCS;
            s->absorbed = 1;
            s->fuser = L->tb_ops[q];
            r->absorbs = L->tb_ops[q + 1];
        }
    }
}

static int step_op(const lctx *L, int id)
{
    return L->ops[id].absorbed ? L->ops[id].fuser : id;
}

typedef struct {
    int tb;
    long long p;
    int run, id;
} dep_key;

static int cmp_dep_key(const void *pa, const void *pb)
{
    const dep_key *a = pa, *b = pb;
    if (a->tb != b->tb) return a->tb < b->tb ? -1 : 1;
    if (a->p != b->p) return a->p > b->p ? -1 : 1;      /* latest first */
    if (a->run != b->run) return a->run > b->run ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

typedef struct {
    int *lw;        /* per slot: last writer */
    int *rhead;     /* per slot: readers since, list head */
    int *rnext, *rop;
    int nr, cr;
    dep_key *cand;
    int ncand, ccand;
} slot_state;

static void add_cand(lctx *L, slot_state *S, const op *x, int dep)
{
    if (dep < 0)
        return;
    int d = step_op(L, dep);
    const op *o = &L->ops[d];
    if (o->tb == x->tb)
        return;     /* program order already */
    GROW(S->cand, S->ncand, S->ccand);
    S->cand[S->ncand++] = (dep_key){o->tb, o->p, o->run, d};
}

/* Dependencies of one step: per slot it reads, the last writer; per slot
 * it writes, the last writer and the readers since; plus the slice chain.
 * Keeps the latest operation per other tb. */
static void op_deps(lctx *L, slot_state *S, int id)
{
    op *x = &L->ops[id];
    loc l;
    S->ncand = 0;
    if (op_reads(x, &l))
        for (int c = 0; c < x->cnt; c++)
            add_cand(L, S, x, S->lw[slot_of(L, l) + c]);
    if (op_writes(x, &l))
        for (int c = 0; c < x->cnt; c++) {
            int sl = slot_of(L, l) + c;
            add_cand(L, S, x, S->lw[sl]);
            for (int e = S->rhead[sl]; e >= 0; e = S->rnext[e])
                add_cand(L, S, x, S->rop[e]);
        }
    add_cand(L, S, x, x->slice_prev);
    add_cand(L, S, x, x->chain_prev);
    if (x->absorbs >= 0)    /* an rcs also sends: after the port's previous send */
        add_cand(L, S, x, L->ops[x->absorbs].chain_prev);
    if (S->ncand > 1)
        qsort(S->cand, (size_t)S->ncand, sizeof *S->cand, cmp_dep_key);
    x->dep_first = L->ndeps;
    x->ndep = 0;
    for (int i = 0; i < S->ncand; i++) {
        if (i > 0 && S->cand[i].tb == S->cand[i - 1].tb)
            continue;
        GROW(L->deps, L->ndeps, L->cdeps);
        L->deps[L->ndeps++] = S->cand[i].id;
        x->ndep++;
        L->ops[S->cand[i].id].hasdep = 1;
        L->tbs[L->ops[S->cand[i].id].tb].depended = 1;
    }
    /* update the slot state */
    if (op_reads(x, &l))
        for (int c = 0; c < x->cnt; c++) {
            int sl = slot_of(L, l) + c;
            if (S->nr >= S->cr) {
                S->cr = S->cr ? 2 * S->cr : 256;
                S->rnext = xrealloc(S->rnext, (size_t)S->cr * sizeof *S->rnext);
                S->rop = xrealloc(S->rop, (size_t)S->cr * sizeof *S->rop);
            }
            S->rop[S->nr] = id;
            S->rnext[S->nr] = S->rhead[sl];
            S->rhead[sl] = S->nr++;
        }
    if (op_writes(x, &l))
        for (int c = 0; c < x->cnt; c++) {
            int sl = slot_of(L, l) + c;
            S->lw[sl] = id;
            S->rhead[sl] = -1;
        }
}

static void derive_deps(lctx *L)
{
    int ns = max_slots(L);
    slot_state S = {0};
    S.lw = xcalloc((size_t)ns, sizeof *S.lw);
    S.rhead = xcalloc((size_t)ns, sizeof *S.rhead);
    for (int r = 0; r < L->sh.n; r++) {
        for (int i = 0; i < ns; i++)
            S.lw[i] = S.rhead[i] = -1;
        S.nr = 0;
        for (int q = L->rank_first[r]; q < L->rank_first[r + 1]; q++) {
            int id = L->rank_ops[q];
            if (!L->ops[id].absorbed)
                op_deps(L, &S, id);
        }
    }
    free(S.lw);
    free(S.rhead);
    free(S.rnext);
    free(S.rop);
    free(S.cand);
}

/* Step numbers: one nop per dependency beyond the first. */
static void number_steps(lctx *L)
{
    for (int t = 0; t < L->ntbs; t++) {
        btb *b = &L->tbs[t];
        int s = 0;
        for (int q = b->first; q < b->first + b->n; q++) {
            op *o = &L->ops[L->tb_ops[q]];
            if (o->absorbed)
                continue;
            s += o->ndep > 1 ? o->ndep - 1 : 0;
            o->step = s++;
        }
        b->nsteps = s;
    }
}

static void reset_layout(lctx *L)
{
    ctx_free_layout(L);
    for (int i = 0; i < L->nops; i++) {
        op *o = &L->ops[i];
        o->type = o->type0;
        o->slice = 0;
        o->slice_prev = -1;
        o->chan = o->unit = o->tb = -1;
        o->absorbed = 0;
        o->fuser = o->absorbs = -1;
        o->dep_first = o->ndep = o->hasdep = o->step = 0;
    }
}

/* One layout with connections sliced every B sends.  Returns TC_OK when
 * every tb fits, 1 when a connection tb is too long (try smaller B),
 * TC_INPUT (err set) when a limit cannot be met. */
static int layout_pass(lctx *L, int B, int *worst, tc_err *err)
{
    reset_layout(L);
    int base = assign_channels(L, B);
    if ((long long)base * L->k > MAX_CHANNELS)
        return tc_err_set(err, TC_INPUT,
                          "needs %lld channels (%d peer block%s x %d for overlapping sends x %d "
                          "slice%s of at most %d steps x %d instance%s); the runtimes allow %d "
                          "(MAXCHANNELS)",
                          (long long)base * L->k, L->nblocks, L->nblocks == 1 ? "" : "s",
                          L->ncolors, L->nslices, L->nslices == 1 ? "" : "s", B, L->k,
                          L->k == 1 ? "" : "s", MAX_CHANNELS);
    build_units(L);
    merge_pairs(L);
    build_tbs(L);
    fuse_forwards(L);
    derive_deps(L);
    number_steps(L);
    *worst = 0;
    int worst_tb = -1;
    for (int t = 0; t < L->ntbs; t++)
        if (L->tbs[t].nsteps > *worst) {
            *worst = L->tbs[t].nsteps;
            worst_tb = t;
        }
    if (*worst <= L->max_steps)
        return TC_OK;
    const btb *b = &L->tbs[worst_tb];
    if (b->local || B <= 1)
        return tc_err_set(err, TC_INPUT,
                          "rank %d needs a tb of %d steps; the runtime allows %d steps per tb "
                          "(MSCCL_MAX_NUM_STEPS%s)", b->rank, b->nsteps, L->max_steps,
                          L->o->newer_executor ? ", newer executor" : "");
    return 1;
}

static int layout(lctx *L, tc_err *err)
{
    int B = L->max_steps, worst = 0;
    for (;;) {
        int rc = layout_pass(L, B, &worst, err);
        if (rc != 1)
            return rc;
        long long nb = (long long)B * L->max_steps / worst;
        if (nb >= B)
            nb = B - 1;
        B = nb < 1 ? 1 : (int)nb;
    }
}

/* ------------------------------------------------------------ 6. emission */

static int map_off(const lctx *L, loc l, int rank, int inst)
{
    if (L->k == 1 || l.buf == BUF_NONE || l.off < 0)
        return l.off;
    if (l.buf == BUF_S)
        return inst * L->scount[rank] + l.off;
    int P = L->sh.blk;
    return (l.off / P) * P * L->k + inst * P + l.off % P;
}

typedef struct {
    int depended, inst, natural;
} final_key;

static int cmp_final_key(const void *pa, const void *pb)
{
    const final_key *a = pa, *b = pb;
    if (a->depended != b->depended) return a->depended > b->depended ? -1 : 1;
    if (a->inst != b->inst) return a->inst < b->inst ? -1 : 1;
    return (a->natural > b->natural) - (a->natural < b->natural);
}

/* Final tb ids of rank r: instance-major in natural order, or, when more
 * than 128 tbs would put a depended-on tb beyond depid 127, depended-on
 * tbs first.  fid[inst * T + natural] = id; order[id] = inst * T + natural. */
static void final_ids(const lctx *L, int r, int *fid, int *order)
{
    int T = L->rank_tb_first[r + 1] - L->rank_tb_first[r], total = T * L->k;
    final_key *fk = xcalloc((size_t)total + 1, sizeof *fk);
    int sort_dep = total > MAX_DEPID + 1;
    for (int j = 0; j < L->k; j++)
        for (int t = 0; t < T; t++)
            fk[j * T + t] = (final_key){sort_dep ? L->tbs[L->rank_tb_first[r] + t].depended : 0,
                                        j, t};
    qsort(fk, (size_t)total, sizeof *fk, cmp_final_key);
    for (int i = 0; i < total; i++) {
        fid[fk[i].inst * T + fk[i].natural] = i;
        order[i] = fk[i].inst * T + fk[i].natural;
    }
    free(fk);
}

static int cmp_int(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

static int emit_tb(const lctx *L, prog_tb *tb, const btb *b, int inst, const int *fid,
                   tc_err *err)
{
    int T = L->rank_tb_first[b->rank + 1] - L->rank_tb_first[b->rank];
    int r = b->rank;
    int *dv = NULL, cap = 0;
    for (int q = b->first; q < b->first + b->n; q++) {
        const op *o = &L->ops[L->tb_ops[q]];
        if (o->absorbed)
            continue;
        if (o->ndep > cap) {
            cap = o->ndep;
            dv = xrealloc(dv, (size_t)cap * 2 * sizeof *dv);
        }
        for (int d = 0; d < o->ndep; d++) {
            const op *t = &L->ops[L->deps[o->dep_first + d]];
            int id = fid[inst * T + L->tbs[t->tb].natural];
            if (id > MAX_DEPID) {
                free(dv);
                return tc_err_set(err, TC_INPUT,
                                  "rank %d: a dependency on tb %d exceeds depid %d (the runtimes "
                                  "store it as int8); %d tbs on the rank", r, id, MAX_DEPID,
                                  T * L->k);
            }
            dv[2 * d] = id;
            dv[2 * d + 1] = t->step;
        }
        if (o->ndep > 1)
            qsort(dv, (size_t)o->ndep, 2 * sizeof *dv, cmp_int);
        for (int d = 0; d + 1 < o->ndep; d++)
            prog_add_step(tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, dv[2 * d], dv[2 * d + 1]);
        int depid = o->ndep ? dv[2 * (o->ndep - 1)] : -1;
        int deps = o->ndep ? dv[2 * (o->ndep - 1) + 1] : -1;
        loc src = o->type == ST_RCS ? o->dst : o->src;
        int src_rank = o->type == ST_RCS ? o->dst_rank : o->src_rank;
        prog_step *st = prog_add_step(tb, o->type, (buf_kind)src.buf,
                                      map_off(L, src, src_rank, inst), (buf_kind)o->dst.buf,
                                      map_off(L, o->dst, o->dst_rank, inst), o->cnt, depid, deps);
        st->hasdep = o->hasdep;
    }
    free(dv);
    return TC_OK;
}

static prog *emit(const lctx *L, tc_err *err)
{
    const shape *sh = &L->sh;
    const lower_opts *o = L->o;
    char name[256];
    if (o->name)
        snprintf(name, sizeof name, "%s", o->name);
    else
        snprintf(name, sizeof name, "taccl-%s-%d", coll_name(sh->coll), sh->n);
    prog *p = prog_new(name, sh->coll, sh->n, sh->C * L->k);
    if (!p)
        tc_oom();
    if (o->proto)
        snprintf(p->proto, sizeof p->proto, "%s", o->proto);
    int base = L->nblocks * L->ncolors * L->nslices;
    p->nchannels = base * L->k;
    p->size_bytes = o->size_bytes;
    p->predicted_us = L->a->predicted_us;
    int maxT = 1;
    for (int r = 0; r < sh->n; r++) {
        int T = L->rank_tb_first[r + 1] - L->rank_tb_first[r];
        if (T > maxT)
            maxT = T;
    }
    int *fid = xcalloc((size_t)maxT * L->k + 1, sizeof *fid);
    int *order = xcalloc((size_t)maxT * L->k + 1, sizeof *order);
    for (int r = 0; r < sh->n; r++) {
        prog_gpu *g = prog_add_gpu(p, sh->in * L->k, sh->out * L->k, L->scount[r] * L->k);
        int T = L->rank_tb_first[r + 1] - L->rank_tb_first[r];
        final_ids(L, r, fid, order);
        for (int i = 0; i < T * L->k; i++) {
            int inst = order[i] / (T ? T : 1), nat = order[i] % (T ? T : 1);
            const btb *b = &L->tbs[L->rank_tb_first[r] + nat];
            prog_tb *tb = prog_add_tb(g, b->send, b->recv, inst * base + b->chan);
            if (emit_tb(L, tb, b, inst, fid, err) != TC_OK) {
                free(fid);
                free(order);
                prog_free(p);
                return NULL;
            }
        }
    }
    free(fid);
    free(order);
    return p;
}

/* ------------------------------------------------------------ entry */

/* The prediction a program carries is the time of the program as written
 * (sched/ptime): the algorithm's own time knows nothing of the runs,
 * staging copies and dependencies added here.  Kept when the program
 * cannot be timed (no topology or size; a program that cannot finish is
 * the executor's to report). */
static void predict(prog *p, const topo *t)
{
    double us;
    if (t && p->size_bytes > 0 && ptime_run(p, t, p->size_bytes, &us, NULL) == TC_OK)
        p->predicted_us = us;
}

static int check_opts(lctx *L, tc_err *err)
{
    const lower_opts *o = L->o;
    L->k = o->instances <= 0 ? 1 : o->instances;
    if (L->k > MAX_INSTANCES)
        return tc_err_set(err, TC_INPUT, "instances: at most %d (one channel each), got %d",
                          MAX_INSTANCES, L->k);
    L->max_steps = o->unlimited ? INT_MAX / 4 : (o->newer_executor ? 64 : 256);
    if (o->size_bytes < 0)
        return tc_err_set(err, TC_INPUT, "size: must not be negative, got %lld", o->size_bytes);
    if (o->proto && strcmp(o->proto, "Simple") != 0 && strcmp(o->proto, "LL") != 0 &&
        strcmp(o->proto, "LL128") != 0)
        return tc_err_set(err, TC_INPUT, "proto: \"%s\" is not Simple, LL or LL128", o->proto);
    return TC_OK;
}

prog *lower_algo(const algo *a, const topo *t, const lower_opts *o, tc_err *err)
{
    lower_opts dflt;
    if (!o) {
        lower_opts_default(&dflt);
        o = &dflt;
    }
    if (!a) {
        tc_err_set(err, TC_INPUT, "lowering needs an algorithm");
        return NULL;
    }
    lctx L;
    memset(&L, 0, sizeof L);
    L.a = a;
    L.t = t;
    L.o = o;
    int rc = check_opts(&L, err);
    if (rc == TC_OK)
        rc = check_shape(&L, err);
    if (rc == TC_OK && o->size_bytes > 0 && o->size_bytes % ((long long)L.sh.C * L.k) != 0)
        rc = tc_err_set(err, TC_INPUT, "size: %lld bytes is not a multiple of nchunksperloop %d",
                        o->size_bytes, L.sh.C * L.k);
    for (int i = 0; i < a->nsends && rc == TC_OK; i++)
        rc = check_send(&L, i, err);
    if (rc != TC_OK)
        return NULL;
    if (o->notes)
        memset(o->notes, 0, (size_t)a->nsends * sizeof *o->notes);
    L.scount = xcalloc((size_t)L.sh.n, sizeof *L.scount);
    rc = build_transfers(&L, err);
    int *fifo_prev = NULL, *order = NULL;
    recv_key *rk = NULL;
    if (rc == TC_OK) {
        fifo_prev = xcalloc((size_t)L.nx + 1, sizeof *fifo_prev);
        colour_transfers(&L, fifo_prev);
        rk = xcalloc((size_t)a->nsends + 1, sizeof *rk);
        int *xid = xmalloc(((size_t)L.nx + 1) * sizeof *xid);
        for (int x = 0; x < L.nx; x++)
            xid[x] = a->nsends;
        for (int i = 0; i < a->nsends; i++)
            if (i < xid[L.xfer_of[i]])
                xid[L.xfer_of[i]] = i;
        for (int i = 0; i < a->nsends; i++) {
            const algo_send *s = &a->sends[i];
            rk[i] = (recv_key){s->dst, key_of(&L.sh, s), s->t_arrive, xid[L.xfer_of[i]], i};
        }
        free(xid);
        qsort(rk, (size_t)a->nsends, sizeof *rk, cmp_recv_key);
        rc = check_complete(&L, rk, a->nsends, err);
    }
    if (rc == TC_OK) {
        order = xcalloc((size_t)2 * L.nx + 1, sizeof *order);
        rc = causal_order(&L, rk, a->nsends, fifo_prev, order, err);
    }
    prog *p = NULL;
    if (rc == TC_OK) {
        place_all(&L, order);
        sort_rank_ops(&L);
        find_writers(&L);
        chain_sends(&L);
        rc = layout(&L, err);
    }
    if (rc == TC_OK)
        p = emit(&L, err);
    if (p)
        predict(p, t);
    free(rk);
    free(order);
    free(fifo_prev);
    ctx_free(&L);
    return p;
}
