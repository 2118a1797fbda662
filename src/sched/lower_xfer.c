/* lower_xfer.c — lowering passes 2 and 3: which sends travel together, on
 * which connection, and in what order every send and receive happens.
 *
 * Sends of one (src, dst) with one group >= 0 become one transfer (one
 * step, or one per contiguous run, later).  Transfers of a (src, dst) that
 * overlap in time get different colours, lowest first (interval
 * colouring), so they can run at once on different channels; each (src,
 * dst, colour) is a connection.  Then every send event and receive event
 * is put in a causal order with Kahn's algorithm, earliest time first,
 * over the data-flow, connection-order, FIFO and reduction-chain edges:
 * that order fixes each rank's operation order, and since no dependency
 * can then point forward, the program cannot deadlock.  Inconsistent
 * times (a chunk sent before it arrives, never received, a cycle) are
 * refused here with the send named.  See lower_int.h for what the pass
 * reads and writes. */
#include "lower_int.h"

#include <stdio.h>
#include <stdlib.h>
#include "../util/heap.h"
#include "../util/mem.h"

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

static int build_transfers(const lin *in, lxfers *xf, tc_err *err)
{
    const algo *a = in->a;
    int ns = a->nsends;
    send_key *sk = xcalloc((size_t)ns, sizeof *sk);
    for (int i = 0; i < ns; i++) {
        const algo_send *s = &a->sends[i];
        sk[i] = (send_key){s->src, s->dst, s->group >= 0 ? s->group : -1, s->t_send,
                           key_of(&in->sh, s), i};
    }
    qsort(sk, (size_t)ns, sizeof *sk, cmp_send_key);
    xf->mem = xcalloc((size_t)ns, sizeof *xf->mem);
    xf->xfer_of = xcalloc((size_t)ns, sizeof *xf->xfer_of);
    xf->x = xcalloc((size_t)ns, sizeof *xf->x);
    xf->nx = 0;
    long long *keys = xcalloc((size_t)ns, sizeof *keys);
    int rc = TC_OK;
    for (int i = 0; i < ns && rc == TC_OK;) {
        int j = i + 1;
        if (sk[i].group >= 0)
            while (j < ns && sk[j].src == sk[i].src && sk[j].dst == sk[i].dst &&
                   sk[j].group == sk[i].group)
                j++;
        xfer *x = &xf->x[xf->nx];
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
            xf->mem[m] = sk[m].id;
            xf->xfer_of[sk[m].id] = xf->nx;
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
        xf->nx++;
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

/* Peer blocks: a rank may have at most PEERS_PER_BLOCK tbs with a send
 * peer, and as many with a recv peer, on one channel.  A connection's ring
 * offset (dst - src mod n) is the same seen from both ends, and on one rank
 * each offset names one send peer and one recv peer; so the offsets that
 * some connection uses, in ascending order, go PEERS_PER_BLOCK to a block,
 * and each block's connections get channels of their own.  A rank that
 * talks to few peers far apart (a ring over nodes) needs one block, not one
 * per 32 offsets between.  On entry each conn's block holds its offset. */
static void pack_peer_blocks(int n, lxfers *xf)
{
    int *rank_of = xcalloc((size_t)n, sizeof *rank_of);
    for (int i = 0; i < xf->nconn; i++)
        rank_of[xf->conns[i].block] = 1;
    int used = 0;
    for (int off = 0; off < n; off++)
        rank_of[off] = rank_of[off] ? used++ : -1;
    for (int i = 0; i < xf->nconn; i++)
        xf->conns[i].block = rank_of[xf->conns[i].block] / PEERS_PER_BLOCK;
    xf->nblocks = (used + PEERS_PER_BLOCK - 1) / PEERS_PER_BLOCK;
    if (xf->nblocks < 1)
        xf->nblocks = 1;
    free(rank_of);
}

/* Interval colouring per (src, dst): a transfer takes the lowest colour
 * whose last transfer has ended, or its first send's lane (algo.h: the
 * packed trees' one tree per channel; a pair's lanes are dense from 1).  Fills fifo_prev (previous transfer on
 * the same connection) for the ordering edges. */
static void colour_transfers(const lin *in, lxfers *xf, int *fifo_prev)
{
    int nx = xf->nx;
    xfer_key *xk = xcalloc((size_t)nx, sizeof *xk);
    for (int i = 0; i < nx; i++)
        xk[i] = (xfer_key){xf->x[i].src, xf->x[i].dst, xf->x[i].ts, xf->x[i].ta, i};
    qsort(xk, (size_t)nx, sizeof *xk, cmp_xfer_key);
    double *end = NULL;
    int *last = NULL, *cid = NULL, cap = 0;
    xf->ncolors = 1;
    for (int i = 0; i < nx;) {
        int j = i;
        while (j < nx && xk[j].src == xk[i].src && xk[j].dst == xk[i].dst)
            j++;
        int used = 0;
        for (int m = i; m < j; m++) {
            xfer *x = &xf->x[xk[m].id];
            int c = 0, lane = in->a->sends[xf->mem[x->first]].lane;
            if (lane > 0)
                c = lane - 1;
            else
                while (c < used && end[c] > x->ts + tol_at(x->ts))
                    c++;
            while (c >= used) {     /* a lane's colour, or the next free one */
                if (used == cap) {
                    cap = cap ? 2 * cap : 8;
                    end = xrealloc(end, (size_t)cap * sizeof *end);
                    last = xrealloc(last, (size_t)cap * sizeof *last);
                    cid = xrealloc(cid, (size_t)cap * sizeof *cid);
                }
                int nc = used++;
                last[nc] = -1;
                end[nc] = 0;
                xf->conns = xgrow(xf->conns, &xf->cconn, xf->nconn + 1, sizeof *xf->conns);
                int n = in->sh.n;
                int off = ((x->dst - x->src) % n + n) % n;
                xf->conns[xf->nconn] = (conn){x->src, x->dst, nc, off};  /* block: below */
                cid[nc] = xf->nconn++;
            }
            end[c] = x->ta;
            x->color = c;
            x->conn = cid[c];
            fifo_prev[xk[m].id] = last[c];
            last[c] = xk[m].id;
            if (c + 1 > xf->ncolors)
                xf->ncolors = c + 1;
        }
        i = j;
    }
    free(end);
    free(last);
    free(cid);
    free(xk);
    pack_peer_blocks(in->sh.n, xf);
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

static void chunk_name(const shape *sh, const algo_send *s, char *buf, size_t n)
{
    if (sh->red)
        snprintf(buf, n, "chunk %d", s->index);
    else
        snprintf(buf, n, "chunk %d:%d", s->origin, s->index);
}

/* AllGather/AllToAll: every destination other than the origin receives
 * every chunk it must keep. */
static int check_complete(const shape *sh, const recv_key *rk, int nr, tc_err *err)
{
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
    E->v = xgrow(E->v, &E->cap, E->n + 1, sizeof *E->v);
    E->v[E->n++] = (edge){from, to};
}

/* Event e: transfer e/2, send (e even) or receive (e odd). */
static double ev_time(const lxfers *xf, int e)
{
    const xfer *x = &xf->x[e / 2];
    return (e & 1) ? x->ta : x->ts;
}

static int ev_before(const lxfers *xf, int a, int b)
{
    double ta = ev_time(xf, a), tb = ev_time(xf, b);
    if (ta != tb)
        return ta < tb;
    return a < b;
}

static int ev_less(const lxfers *xf, const int *a, const int *b)
{
    return ev_before(xf, *a, *b);
}

TC_HEAP_DEFINE(evq, int, const lxfers *, ev_less)

/* Edges: each transfer's send before its receive; on a connection, sends
 * and receives in order, and a send after the receive FIFO_DEPTH places
 * earlier (the runtime's FIFO); a send after the receives that brought its data
 * (the earliest copy of a plain chunk; the latest contribution of a
 * partial sum, with the receives of one chunk on one rank chained in time
 * order); then Kahn's algorithm, earliest event first. */
static int causal_order(const lin *in, lxfers *xf, const recv_key *rk, int nr,
                        const int *fifo_prev, int *order, tc_err *err)
{
    const algo *a = in->a;
    const shape *sh = &in->sh;
    int nx = xf->nx, nev = 2 * nx;
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
        const xfer *X = &xf->x[x];
        for (int m = X->first; m < X->first + X->n && rc == TC_OK; m++) {
            const algo_send *s = &a->sends[xf->mem[m]];
            if (!sh->red && s->src == s->origin)
                continue;
            int cnt, lo = recv_range(rk, nr, s->src, key_of(sh, s), &cnt);
            char cn[64];
            chunk_name(sh, s, cn, sizeof cn);
            if (!sh->red) {
                if (cnt == 0) {
                    rc = tc_err_set(err, TC_INPUT,
                                    "send #%d: rank %d sends %s at %g us but never receives it",
                                    xf->mem[m], s->src, cn, s->t_send);
                    break;
                }
                if (rk[lo].ta > s->t_send + tol_at(s->t_send)) {
                    rc = tc_err_set(err, TC_INPUT,
                                    "send #%d: rank %d sends %s at %g us, before it arrives there "
                                    "at %g us", xf->mem[m], s->src, cn, s->t_send, rk[lo].ta);
                    break;
                }
                add_edge(&E, 2 * xf->xfer_of[rk[lo].id] + 1, 2 * x);
                if (rk[lo].ta > xf->x[x].ready)
                    xf->x[x].ready = rk[lo].ta;
            } else {
                int last = -1;
                for (int q = lo; q < lo + cnt && rk[q].ta <= s->t_send + tol_at(s->t_send); q++)
                    last = q;
                if (last >= 0) {
                    add_edge(&E, 2 * xf->xfer_of[rk[last].id] + 1, 2 * x);
                    if (rk[last].ta > xf->x[x].ready)
                        xf->x[x].ready = rk[last].ta;
                }
            }
        }
    }
    if (sh->red)
        for (int q = 1; q < nr; q++)
            if (rk[q].dst == rk[q - 1].dst && rk[q].key == rk[q - 1].key &&
                xf->xfer_of[rk[q].id] != xf->xfer_of[rk[q - 1].id])
                add_edge(&E, 2 * xf->xfer_of[rk[q - 1].id] + 1, 2 * xf->xfer_of[rk[q].id] + 1);
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
            evq_push(h, &hn, e, xf);
    while (hn > 0) {
        int e = evq_pop(h, &hn, xf);
        order[done++] = e;
        for (int i = start[e]; i < start[e + 1]; i++)
            if (--indeg[adj[i]] == 0)
                evq_push(h, &hn, adj[i], xf);
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

/* ------------------------------------------------------------ the pass */

/* Receives sorted by (dst, chunk, arrival, transfer), for the checks and
 * the data-flow edges. */
static recv_key *recv_index(const lin *in, const lxfers *xf)
{
    const algo *a = in->a;
    recv_key *rk = xcalloc((size_t)a->nsends + 1, sizeof *rk);
    int *xid = xmalloc(((size_t)xf->nx + 1) * sizeof *xid);
    for (int x = 0; x < xf->nx; x++)
        xid[x] = a->nsends;
    for (int i = 0; i < a->nsends; i++)
        if (i < xid[xf->xfer_of[i]])
            xid[xf->xfer_of[i]] = i;
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *s = &a->sends[i];
        rk[i] = (recv_key){s->dst, key_of(&in->sh, s), s->t_arrive, xid[xf->xfer_of[i]], i};
    }
    free(xid);
    qsort(rk, (size_t)a->nsends, sizeof *rk, cmp_recv_key);
    return rk;
}

int lower_order(const lin *in, lxfers *xf, int **order, tc_err *err)
{
    int ns = in->a->nsends;
    *order = NULL;
    int rc = build_transfers(in, xf, err);
    if (rc != TC_OK)
        return rc;
    int *fifo_prev = xcalloc((size_t)xf->nx + 1, sizeof *fifo_prev);
    colour_transfers(in, xf, fifo_prev);
    recv_key *rk = recv_index(in, xf);
    rc = check_complete(&in->sh, rk, ns, err);
    if (rc == TC_OK) {
        *order = xcalloc((size_t)2 * xf->nx + 1, sizeof **order);
        rc = causal_order(in, xf, rk, ns, fifo_prev, *order, err);
        if (rc != TC_OK) {
            free(*order);
            *order = NULL;
        }
    }
    free(rk);
    free(fifo_prev);
    return rc;
}
