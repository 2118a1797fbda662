/* lower_layout.c — lowering pass 5: which threadblock runs each
 * operation, in which step, after which other steps.
 *
 * First, once: for each send the receive whose slots it forwards (a
 * candidate for fusing into rcs/rrcs), and the rank's previous send
 * through the same switch out port or NIC, which it must wait for since
 * the executor serves a port in the order it is asked.  Then the layout,
 * retried with shorter slices until every tb fits the runtime's step
 * limit: connections get channels (cut into slices on further channels
 * when too long), each rank's operations on one (channel, peer, direction)
 * form a unit, a receiving unit and the sending unit that forwards what it
 * receives merge into one tb when that cannot delay either, a receive
 * followed by the forward of exactly what it wrote becomes one rcs, and
 * every other ordering becomes a dependency, found per chunk slot (read
 * after write, write after read or write) and along the slice and port
 * chains; a step with several dependencies needs nops, which count
 * towards the limit.  See lower_int.h for what the pass reads and
 * writes. */
#include "lower_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ------------------------------------------------------------ slots, writers, port chains */

/* Chunk slot of (buf, off) in a rank's i|o|s address space. */
static int slot_of(const shape *sh, loc l)
{
    switch (l.buf) {
    case BUF_I: return l.off;
    case BUF_O: return sh->in + l.off;
    default: return sh->in + sh->out + l.off;
    }
}

static int max_slots(const shape *sh, const lops *O)
{
    int m = 0;
    for (int r = 0; r < sh->n; r++)
        if (O->scount[r] > m)
            m = O->scount[r];
    return sh->in + sh->out + m + 1;
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
static void find_writers(const shape *sh, lops *O)
{
    int ns = max_slots(sh, O);
    int *lw = xcalloc((size_t)ns, sizeof *lw);
    int *nreaders = xcalloc((size_t)O->nops, sizeof *nreaders);
    int *last_reader = xcalloc((size_t)O->nops, sizeof *last_reader);
    for (int i = 0; i < O->nops; i++)
        last_reader[i] = -1;
    for (int r = 0; r < sh->n; r++) {
        for (int i = 0; i < ns; i++)
            lw[i] = -1;
        for (int q = O->rank_first[r]; q < O->rank_first[r + 1]; q++) {
            int id = O->rank_ops[q];
            op *o = &O->ops[id];
            loc l;
            if (op_reads(o, &l))
                for (int c = 0; c < o->cnt; c++) {
                    int w = lw[slot_of(sh, l) + c];
                    if (w >= 0 && last_reader[w] != id && !writes_loc(o, l.buf, l.off + c)) {
                        last_reader[w] = id;
                        nreaders[w]++;
                    }
                }
            if (o->kind == OP_SEND) {
                int s0 = slot_of(sh, o->src), w = lw[s0];
                int ok = w >= 0 && O->ops[w].kind == OP_RECV && O->ops[w].dst.buf == o->src.buf &&
                         O->ops[w].dst.off == o->src.off && O->ops[w].cnt == o->cnt;
                for (int c = 1; ok && c < o->cnt; c++)
                    ok = lw[s0 + c] == w;
                o->writer = ok ? w : -1;
            }
            if (op_writes(o, &l))
                for (int c = 0; c < o->cnt; c++)
                    lw[slot_of(sh, l) + c] = id;
        }
    }
    for (int i = 0; i < O->nops; i++) {
        op *o = &O->ops[i];
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
static long long out_port_key(const topo *t, const op *o)
{
    if (!t)
        return -1;
    topo_route r = topo_route_of(t, o->rank, o->peer);
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
static void chain_sends(const lin *in, lxfers *xf, lops *O)
{
    long long *key = NULL;
    int *last = NULL, nk = 0, ck = 0;
    int *conn_last = xcalloc((size_t)xf->nconn + 1, sizeof *conn_last);
    for (int c = 0; c < xf->nconn; c++)
        conn_last[c] = -1;
    for (int x = 0; x < xf->nx; x++)
        xf->x[x].req = xf->x[x].ready;
    for (int r = 0; r < in->sh.n; r++) {
        nk = 0;
        for (int q = O->rank_first[r]; q < O->rank_first[r + 1]; q++) {
            int id = O->rank_ops[q];
            op *o = &O->ops[id];
            if (o->kind != OP_SEND)
                continue;
            xfer *X = &xf->x[o->xfer];
            int cp = conn_last[o->conn];
            if (cp >= 0 && O->ops[cp].xfer != o->xfer && xf->x[O->ops[cp].xfer].ta > X->req)
                X->req = xf->x[O->ops[cp].xfer].ta;
            conn_last[o->conn] = id;
            long long k = out_port_key(in->t, o);
            /* a send on a lane of its own (algo.h) is not chained: each
             * packed tree's tile goes when it is ready */
            if (k < 0 || in->a->sends[xf->mem[X->first]].lane > 0)
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
            if (pv >= 0 && O->ops[pv].xfer != o->xfer) {
                o->chain_prev = pv;
                if (xf->x[O->ops[pv].xfer].ta > X->req)
                    X->req = xf->x[O->ops[pv].xfer].ta;
            }
            last[j] = id;
        }
    }
    free(conn_last);
    free(key);
    free(last);
}

void lower_chain(const lin *in, lxfers *xf, lops *ops)
{
    find_writers(&in->sh, ops);
    chain_sends(in, xf, ops);
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
static int assign_channels(const lxfers *xf, lops *O, llayout *lay, int B)
{
    int *count = xcalloc((size_t)xf->nconn, sizeof *count);
    int *last = xcalloc((size_t)xf->nconn, sizeof *last);
    lay->nslices = 1;
    for (int q = 0; q < O->nops; q++) {
        int id = O->rank_ops[q];
        op *o = &O->ops[id];
        o->slice_prev = -1;
        if (o->kind != OP_SEND)
            continue;
        int c = o->conn, idx = count[c]++;
        o->slice = idx / B;
        if (idx > 0 && idx % B == 0)
            o->slice_prev = last[c];
        last[c] = id;
        if (o->slice + 1 > lay->nslices)
            lay->nslices = o->slice + 1;
    }
    for (int i = 0; i < O->nops; i++) {
        op *o = &O->ops[i];
        if (o->kind == OP_COPY)
            continue;
        const op *s = o->kind == OP_SEND ? o : &O->ops[o->partner];
        const conn *c = &xf->conns[o->conn];
        o->chan = (c->block * xf->ncolors + c->color) * lay->nslices + s->slice;
    }
    for (int i = 0; i < O->nops; i++) {
        op *o = &O->ops[i];
        if (o->kind == OP_COPY)
            o->chan = o->host >= 0 ? O->ops[o->host].chan : 0;
    }
    free(count);
    free(last);
    return xf->nblocks * xf->ncolors * lay->nslices;
}

static void build_units(lops *O, llayout *lay)
{
    int n = 0;
    unit_key *uk = xcalloc((size_t)O->nops, sizeof *uk);
    for (int i = 0; i < O->nops; i++) {
        const op *o = &O->ops[i];
        if (o->kind == OP_COPY && o->host < 0)
            continue;
        const op *h = o->kind == OP_COPY ? &O->ops[o->host] : o;
        uk[n++] = (unit_key){o->rank, o->chan, h->kind == OP_SEND ? 0 : 1, h->peer, o->p, o->run, i};
    }
    qsort(uk, (size_t)n, sizeof *uk, cmp_unit_key);
    lay->unit_ops = xcalloc((size_t)n, sizeof *lay->unit_ops);
    lay->units = xcalloc((size_t)n, sizeof *lay->units);
    lay->nunits = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || uk[i].rank != uk[i - 1].rank || uk[i].chan != uk[i - 1].chan ||
            uk[i].dir != uk[i - 1].dir || uk[i].peer != uk[i - 1].peer) {
            unit *u = &lay->units[lay->nunits++];
            *u = (unit){uk[i].rank, uk[i].chan, uk[i].dir, uk[i].peer, i, 0, -1};
        }
        lay->unit_ops[i] = uk[i].id;
        lay->units[lay->nunits - 1].n++;
        O->ops[uk[i].id].unit = lay->nunits - 1;
    }
    free(uk);
}

/* When an operation can begin at the earliest: a receive at its arrival,
 * a send when the executor asks for its resources (chain_sends), which may
 * be before its scheduled start (it then waits for a port). */
static double op_start(const lxfers *xf, const op *ops, const op *o)
{
    if (o->kind == OP_COPY)
        o = &ops[o->host];
    const xfer *x = &xf->x[o->xfer];
    return o->kind == OP_SEND ? x->req : x->ta;
}

static double op_end(const lxfers *xf, const op *o)
{
    return xf->x[o->xfer].ta;
}

/* Merge two units' operation lists in rank order into out (may be NULL);
 * returns 0 if some operation would start before the previous one of
 * another transfer ends (merging would then delay it). */
static int merge_units(const lxfers *xf, const lops *O, const llayout *lay, const unit *u,
                       const unit *v, int *out)
{
    int i = 0, j = 0, n = 0, prev = -1, ok = 1;
    while (i < u->n || j < v->n) {
        int take_u = j >= v->n ||
                     (i < u->n && op_before(&O->ops[lay->unit_ops[u->first + i]],
                                            &O->ops[lay->unit_ops[v->first + j]]));
        int id = take_u ? lay->unit_ops[u->first + i++] : lay->unit_ops[v->first + j++];
        if (out)
            out[n++] = id;
        if (prev >= 0 && O->ops[prev].xfer != O->ops[id].xfer) {
            double e = op_end(xf, &O->ops[prev]);
            if (op_start(xf, O->ops, &O->ops[id]) < e - tol_at(e))
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
static int fusable(const lxfers *xf, const op *ops, const op *s)
{
    if (s->kind != OP_SEND || s->writer < 0 || s->slice_prev >= 0 ||
        ops[s->writer].chan != s->chan)
        return 0;
    double arrive = xf->x[ops[s->writer].xfer].ta;
    return xf->x[s->xfer].req <= arrive + tol_at(arrive);
}

/* Pair receive units with send units that forward what they receive. */
static void merge_pairs(const lxfers *xf, const lops *O, llayout *lay)
{
    int np = 0;
    int *pairs = xcalloc((size_t)2 * (O->nops + 1), sizeof *pairs);
    for (int i = 0; i < O->nops; i++) {
        const op *s = &O->ops[i];
        if (!fusable(xf, O->ops, s))
            continue;
        pairs[2 * np] = O->ops[s->writer].unit;
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
        const unit *ru = &lay->units[pairs[2 * i]], *su = &lay->units[pairs[2 * i + 1]];
        cs[nc++] = (cand){ru->rank, j - i, ru->chan, ru->peer, su->peer, pairs[2 * i],
                          pairs[2 * i + 1]};
        i = j;
    }
    qsort(cs, (size_t)nc, sizeof *cs, cmp_cand);
    for (int i = 0; i < nc; i++) {
        unit *ru = &lay->units[cs[i].ru], *su = &lay->units[cs[i].su];
        if (ru->merged >= 0 || su->merged >= 0)
            continue;
        if (!merge_units(xf, O, lay, ru, su, NULL))
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
static void build_tbs(int n, const lxfers *xf, lops *O, llayout *lay)
{
    btb *raw = xcalloc((size_t)lay->nunits + (size_t)n + 1, sizeof *raw);
    int *ops = xcalloc((size_t)O->nops + 1, sizeof *ops);
    int nraw = 0, nops = 0;
    for (int r = 0; r < n; r++) {
        int first = nops;
        for (int q = O->rank_first[r]; q < O->rank_first[r + 1]; q++)
            if (O->ops[O->rank_ops[q]].kind == OP_COPY && O->ops[O->rank_ops[q]].host < 0)
                ops[nops++] = O->rank_ops[q];
        if (nops > first)
            raw[nraw++] = (btb){r, 0, -1, -1, 1, first, nops - first, 0, 0, 0};
    }
    for (int u = 0; u < lay->nunits; u++) {
        const unit *U = &lay->units[u];
        if (U->merged >= 0 && U->dir == 0)
            continue;   /* taken with its receive unit */
        btb *b = &raw[nraw++];
        *b = (btb){U->rank, U->chan, -1, -1, 0, nops, 0, 0, 0, 0};
        if (U->merged >= 0) {
            const unit *S = &lay->units[U->merged];
            b->recv = U->peer;
            b->send = S->peer;
            merge_units(xf, O, lay, U, S, ops + nops);
            b->n = U->n + S->n;
        } else {
            if (U->dir == 0)
                b->send = U->peer;
            else
                b->recv = U->peer;
            memcpy(ops + nops, lay->unit_ops + U->first, (size_t)U->n * sizeof *ops);
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
    lay->tbs = xcalloc((size_t)nraw + 1, sizeof *lay->tbs);
    lay->tb_ops = ops;
    lay->ntb_ops = nops;
    lay->ntbs = nraw;
    lay->rank_tb_first = xcalloc((size_t)n + 1, sizeof *lay->rank_tb_first);
    for (int i = 0; i < nraw; i++) {
        btb *b = &lay->tbs[i];
        *b = raw[tk[i].idx];
        lay->rank_tb_first[b->rank + 1]++;
        for (int q = b->first; q < b->first + b->n; q++)
            O->ops[ops[q]].tb = i;
    }
    for (int r = 0; r < n; r++)
        lay->rank_tb_first[r + 1] += lay->rank_tb_first[r];
    for (int i = 0; i < nraw; i++)
        lay->tbs[i].natural = i - lay->rank_tb_first[lay->tbs[i].rank];
    free(tk);
    free(raw);
}

/* A receive followed in its tb by the forward of exactly what it wrote
 * becomes one rcs (rrcs for a reduction). */
static void fuse_forwards(const lxfers *xf, lops *O, const llayout *lay)
{
    for (int t = 0; t < lay->ntbs; t++) {
        const btb *b = &lay->tbs[t];
        if (b->local || b->send < 0 || b->recv < 0)
            continue;
        for (int q = b->first; q + 1 < b->first + b->n; q++) {
            op *r = &O->ops[lay->tb_ops[q]], *s = &O->ops[lay->tb_ops[q + 1]];
            if (r->kind != OP_RECV || r->absorbed || !fusable(xf, O->ops, s) ||
                s->writer != lay->tb_ops[q])
                continue;
            r->type = r->type0 == ST_RRC ? ST_RRCS : ST_RCS;
            s->absorbed = 1;
            s->fuser = lay->tb_ops[q];
            r->absorbs = lay->tb_ops[q + 1];
        }
    }
}

static int step_op(const op *ops, int id)
{
    return ops[id].absorbed ? ops[id].fuser : id;
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

static void add_cand(const op *ops, slot_state *S, const op *x, int dep)
{
    if (dep < 0)
        return;
    int d = step_op(ops, dep);
    const op *o = &ops[d];
    if (o->tb == x->tb)
        return;     /* program order already */
    S->cand = xgrow(S->cand, &S->ccand, S->ncand + 1, sizeof *S->cand);
    S->cand[S->ncand++] = (dep_key){o->tb, o->p, o->run, d};
}

/* Is waiting for candidate i implied by waiting for another candidate j,
 * which itself waits for a step of i's tb at or after i's?  (j completes
 * only after that step, so after i.)  Dropping such a wait removes a nop
 * per send where a rank forwards one chunk to several peers through one
 * switch port: each send waits for the previous one on the port, which
 * already waited for the chunk's receive. */
static int implied(const op *ops, const llayout *lay, const slot_state *S, int i)
{
    const dep_key *a = &S->cand[i];
    for (int j = 0; j < S->ncand; j++) {
        if (j == i)
            continue;
        const op *b = &ops[S->cand[j].id];
        for (int q = b->dep_first; q < b->dep_first + b->ndep; q++) {
            const op *w = &ops[lay->deps[q]];
            if (w->tb == a->tb && (w->p > a->p || (w->p == a->p && w->run >= a->run)))
                return 1;
        }
    }
    return 0;
}

/* Dependencies of one step: per slot it reads, the last writer; per slot
 * it writes, the last writer and the readers since; plus the slice chain.
 * Keeps the latest operation per other tb. */
static void op_deps(const shape *sh, lops *O, llayout *lay, slot_state *S, int id)
{
    op *x = &O->ops[id];
    loc l;
    S->ncand = 0;
    if (op_reads(x, &l))
        for (int c = 0; c < x->cnt; c++)
            add_cand(O->ops, S, x, S->lw[slot_of(sh, l) + c]);
    if (op_writes(x, &l))
        for (int c = 0; c < x->cnt; c++) {
            int sl = slot_of(sh, l) + c;
            add_cand(O->ops, S, x, S->lw[sl]);
            for (int e = S->rhead[sl]; e >= 0; e = S->rnext[e])
                add_cand(O->ops, S, x, S->rop[e]);
        }
    add_cand(O->ops, S, x, x->slice_prev);
    add_cand(O->ops, S, x, x->chain_prev);
    if (x->absorbs >= 0)    /* an rcs also sends: after the port's previous send */
        add_cand(O->ops, S, x, O->ops[x->absorbs].chain_prev);
    if (S->ncand > 1)
        qsort(S->cand, (size_t)S->ncand, sizeof *S->cand, cmp_dep_key);
    int nk = 0;     /* the latest candidate per tb, compacted in place */
    for (int i = 0; i < S->ncand; i++)
        if (i == 0 || S->cand[i].tb != S->cand[i - 1].tb)
            S->cand[nk++] = S->cand[i];
    S->ncand = nk;
    x->dep_first = lay->ndeps;
    x->ndep = 0;
    for (int i = 0; i < S->ncand; i++) {
        if (implied(O->ops, lay, S, i))
            continue;
        lay->deps = xgrow(lay->deps, &lay->cdeps, lay->ndeps + 1, sizeof *lay->deps);
        lay->deps[lay->ndeps++] = S->cand[i].id;
        x->ndep++;
        O->ops[S->cand[i].id].hasdep = 1;
        lay->tbs[O->ops[S->cand[i].id].tb].depended = 1;
    }
    /* update the slot state */
    if (op_reads(x, &l))
        for (int c = 0; c < x->cnt; c++) {
            int sl = slot_of(sh, l) + c;
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
            int sl = slot_of(sh, l) + c;
            S->lw[sl] = id;
            S->rhead[sl] = -1;
        }
}

static void derive_deps(const shape *sh, lops *O, llayout *lay)
{
    int ns = max_slots(sh, O);
    slot_state S = {0};
    S.lw = xcalloc((size_t)ns, sizeof *S.lw);
    S.rhead = xcalloc((size_t)ns, sizeof *S.rhead);
    for (int r = 0; r < sh->n; r++) {
        for (int i = 0; i < ns; i++)
            S.lw[i] = S.rhead[i] = -1;
        S.nr = 0;
        for (int q = O->rank_first[r]; q < O->rank_first[r + 1]; q++) {
            int id = O->rank_ops[q];
            if (!O->ops[id].absorbed)
                op_deps(sh, O, lay, &S, id);
        }
    }
    free(S.lw);
    free(S.rhead);
    free(S.rnext);
    free(S.rop);
    free(S.cand);
}

/* Step numbers: one nop per dependency beyond the first. */
static void number_steps(lops *O, llayout *lay)
{
    for (int t = 0; t < lay->ntbs; t++) {
        btb *b = &lay->tbs[t];
        int s = 0;
        for (int q = b->first; q < b->first + b->n; q++) {
            op *o = &O->ops[lay->tb_ops[q]];
            if (o->absorbed)
                continue;
            s += o->ndep > 1 ? o->ndep - 1 : 0;
            o->step = s++;
        }
        b->nsteps = s;
    }
}

void lower_layout_free(llayout *lay)
{
    free(lay->units);
    free(lay->unit_ops);
    free(lay->tbs);
    free(lay->tb_ops);
    free(lay->rank_tb_first);
    free(lay->deps);
    lay->units = NULL;
    lay->unit_ops = NULL;
    lay->tbs = NULL;
    lay->tb_ops = NULL;
    lay->rank_tb_first = NULL;
    lay->deps = NULL;
    lay->nunits = lay->ntbs = lay->ntb_ops = lay->ndeps = lay->cdeps = 0;
}

static void reset_layout(lops *O, llayout *lay)
{
    lower_layout_free(lay);
    for (int i = 0; i < O->nops; i++) {
        op *o = &O->ops[i];
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
static int layout_pass(const lin *in, const lxfers *xf, lops *O, llayout *lay, int B, int *worst,
                       tc_err *err)
{
    reset_layout(O, lay);
    int base = assign_channels(xf, O, lay, B);
    if ((long long)base * in->k > MAX_CHANNELS)
        return tc_err_set(err, TC_INPUT,
                          "needs %lld channels (%d peer block%s x %d for overlapping sends x %d "
                          "slice%s of at most %d steps x %d instance%s); the runtimes allow %d "
                          "(MAXCHANNELS)",
                          (long long)base * in->k, xf->nblocks, xf->nblocks == 1 ? "" : "s",
                          xf->ncolors, lay->nslices, lay->nslices == 1 ? "" : "s", B, in->k,
                          in->k == 1 ? "" : "s", MAX_CHANNELS);
    build_units(O, lay);
    merge_pairs(xf, O, lay);
    build_tbs(in->sh.n, xf, O, lay);
    fuse_forwards(xf, O, lay);
    derive_deps(&in->sh, O, lay);
    number_steps(O, lay);
    *worst = 0;
    int worst_tb = -1;
    for (int t = 0; t < lay->ntbs; t++)
        if (lay->tbs[t].nsteps > *worst) {
            *worst = lay->tbs[t].nsteps;
            worst_tb = t;
        }
    if (*worst <= in->max_steps)
        return TC_OK;
    const btb *b = &lay->tbs[worst_tb];
    if (b->local || B <= 1)
        return tc_err_set(err, TC_INPUT,
                          "rank %d needs a tb of %d steps; the runtime allows %d steps per tb "
                          "(MSCCL_MAX_NUM_STEPS of %s)", b->rank, b->nsteps, in->max_steps,
                          runtime_name(in->o->runtime));
    return 1;
}

int lower_layout(const lin *in, const lxfers *xf, lops *O, llayout *lay, tc_err *err)
{
    int B = in->max_steps, worst = 0;
    for (;;) {
        int rc = layout_pass(in, xf, O, lay, B, &worst, err);
        if (rc != 1)
            return rc;
        long long nb = (long long)B * in->max_steps / worst;
        if (nb >= B)
            nb = B - 1;
        B = nb < 1 ? 1 : (int)nb;
    }
}
