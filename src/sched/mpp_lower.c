/* mpp_lower.c — an MSCCL program's two-sided steps as MSCCL++'s one-sided
 * operations (mpp_int.h; the rules are docs/mscclpp.md §12).
 *
 * Why this shape: MSCCL pairs the k-th send of a threadblock to peer p on
 * channel c with the k-th receive of p's threadblock from us on channel c,
 * and the receiving side decides where the bytes go when it reaches the
 * receive.  MSCCL++ has no receive: the sender writes into the peer's
 * memory and signals, the peer waits.  So every (sender, receiver, channel)
 * of the program becomes one MSCCL++ channel on each side, every send a put
 * into a landing place on the receiver plus a signal, every receive a wait
 * plus what the receive did with the bytes.  A landing place is the
 * receive's own destination only when nothing else on the receiver touches
 * those chunks before the receive (the put may come early); otherwise it is
 * a scratch slot of its own, never reused in a launch, so no put can
 * overwrite what its owner has not read yet.  Across launches the same is
 * kept by a "ready" signal each receiving block sends when it starts, which
 * the sending block waits for before its first put.  Dependencies between
 * blocks of a rank become semaphores (released after the step waited for,
 * acquired before the step waiting).  Then nops (__syncthreads) go where
 * the block's threads must agree: between a one-thread op (wait, signal,
 * port put, semaphore) and an all-thread data op, and between data ops
 * touching the same local chunks. */
#include "mpp_int.h"

#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "../util/tcassert.h"

typedef struct {
    int src, dst, chan;     /* sender rank, receiver rank, MSCCL channel */
    int stb, rtb;           /* sending and receiving threadblock */
    int port;               /* across nodes */
    int ch_src, ch_dst;     /* rank-level channel on each side */
} link_t;

/* What the lowering knows of one step. */
typedef struct {
    int rlink;              /* receive: the link it receives on, else -1 */
    int slink;              /* send: the link it sends on, else -1 */
    int prank, ptb, pstep;  /* receive: the matching send step */
    buf_kind land_b;        /* receive: where the bytes land on this rank */
    int land_off;
    int slot;               /* receive: 1 if the landing place is a scratch slot */
    buf_kind to_b;          /* send: where they land on the receiver */
    int to_off;
    int stage;              /* LL send over a port: local packet staging slot, else -1 */
    int temp;               /* LL rrs: plain scratch chunk of received + src, else -1 */
    int acq;                /* semaphore to acquire before, -1 none */
    int rel0, nrel;         /* semaphores to release after */
} stepx;

typedef struct {
    int tb0;                /* first threadblock touching the chunk, -1 none */
    int multi;              /* 1: another one touches it too */
    int minstep;            /* first step of tb0 touching it */
} chunk_use;

typedef struct {
    const prog *p;
    int nlinks, link_cap;
    link_t *links;
    stepx ***sx;            /* [rank][tb][step] */
    int *node;              /* [rank] */
    int ll;                 /* LL: every receive lands as packets in a scratch slot */
} lower_st;

static int count_kind(const prog_tb *tb, int sends)
{
    int n = 0;
    for (int s = 0; s < tb->nsteps; s++)
        n += sends ? step_sends(tb->steps[s].type) : step_receives(tb->steps[s].type);
    return n;
}

/* The links: one per sending threadblock that sends, with the receiving
 * threadblock that receives from it on its channel. */
static int find_links(lower_st *L, tc_err *err)
{
    const prog *p = L->p;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            if (count_kind(tb, 1) == 0)
                continue;
            if (tb->send < 0 || tb->send >= p->ngpu || tb->send == r)
                return tc_err_set(err, TC_INPUT, "rank %d threadblock %d sends to rank %d, "
                                  "which is not another rank of the %d", r, t, tb->send, p->ngpu);
            for (int k = 0; k < L->nlinks; k++)
                if (L->links[k].src == r && L->links[k].dst == tb->send &&
                    L->links[k].chan == tb->chan)
                    return tc_err_set(err, TC_INPUT, "rank %d threadblocks %d and %d both send "
                                      "to rank %d on channel %d: MSCCL pairs one with one",
                                      r, L->links[k].stb, t, tb->send, tb->chan);
            const prog_gpu *h = &p->gpus[tb->send];
            int rtb = -1;
            for (int u = 0; u < h->ntbs; u++) {
                if (h->tbs[u].recv != r || h->tbs[u].chan != tb->chan)
                    continue;
                if (rtb >= 0)
                    return tc_err_set(err, TC_INPUT, "rank %d threadblocks %d and %d both "
                                      "receive from rank %d on channel %d: MSCCL pairs one "
                                      "with one", tb->send, rtb, u, r, tb->chan);
                rtb = u;
            }
            if (rtb < 0)
                return tc_err_set(err, TC_INPUT, "rank %d threadblock %d sends to rank %d on "
                                  "channel %d, where no threadblock receives from rank %d on "
                                  "that channel", r, t, tb->send, tb->chan, r);
            L->links = xgrow(L->links, &L->link_cap, L->nlinks + 1, sizeof *L->links);
            link_t *l = &L->links[L->nlinks++];
            memset(l, 0, sizeof *l);
            l->src = r;
            l->dst = tb->send;
            l->chan = tb->chan;
            l->stb = t;
            l->rtb = rtb;
            l->port = L->node[r] != L->node[tb->send];
        }
    }
    return TC_OK;
}

/* Pair the k-th send of each link with the k-th receive. */
static int pair_steps(lower_st *L, tc_err *err)
{
    const prog *p = L->p;
    for (int k = 0; k < L->nlinks; k++) {
        const link_t *l = &L->links[k];
        const prog_tb *st = &p->gpus[l->src].tbs[l->stb];
        const prog_tb *rt = &p->gpus[l->dst].tbs[l->rtb];
        int ns = count_kind(st, 1), nr = count_kind(rt, 0);
        if (ns != nr)
            return tc_err_set(err, TC_INPUT, "rank %d threadblock %d sends %d times to rank %d "
                              "on channel %d, whose threadblock %d receives %d times", l->src,
                              l->stb, ns, l->dst, l->chan, l->rtb, nr);
        int a = 0, b = 0;
        while (1) {
            while (a < st->nsteps && !step_sends(st->steps[a].type))
                a++;
            while (b < rt->nsteps && !step_receives(rt->steps[b].type))
                b++;
            if (a >= st->nsteps || b >= rt->nsteps)
                break;
            if (st->steps[a].cnt != rt->steps[b].cnt)
                return tc_err_set(err, TC_INPUT, "rank %d threadblock %d step %d sends %d "
                                  "chunks to rank %d, whose threadblock %d step %d receives %d",
                                  l->src, l->stb, a, st->steps[a].cnt, l->dst, l->rtb, b,
                                  rt->steps[b].cnt);
            stepx *xs = &L->sx[l->src][l->stb][a];
            stepx *xr = &L->sx[l->dst][l->rtb][b];
            xs->slink = k;
            xr->rlink = k;
            xr->prank = l->src;
            xr->ptb = l->stb;
            xr->pstep = a;
            a++;
            b++;
        }
    }
    /* a receive no link feeds */
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++)
                if (step_receives(p->gpus[r].tbs[t].steps[s].type) && L->sx[r][t][s].rlink < 0)
                    return tc_err_set(err, TC_INPUT, "rank %d threadblock %d step %d receives "
                                      "from rank %d on channel %d, which sends nothing there",
                                      r, t, s, p->gpus[r].tbs[t].recv, p->gpus[r].tbs[t].chan);
    return TC_OK;
}

static int use_region(chunk_use *u[3], const int len[3], buf_kind b, int off, int cnt, int tb,
                      int s, int r, tc_err *err)
{
    if (b != BUF_I && b != BUF_O && b != BUF_S)
        return tc_err_set(err, TC_INPUT, "rank %d threadblock %d step %d names no buffer", r,
                          tb, s);
    if (off < 0 || cnt < 1 || off + cnt > len[b])
        return tc_err_set(err, TC_INPUT, "rank %d threadblock %d step %d: chunks %d..%d of "
                          "buffer %s, which has %d", r, tb, s, off, off + cnt - 1, buf_name(b),
                          len[b]);
    for (int c = off; c < off + cnt; c++) {
        chunk_use *x = &u[b][c];
        if (x->tb0 < 0) {
            x->tb0 = tb;
            x->minstep = s;
        } else if (x->tb0 != tb) {
            x->multi = 1;
        } else if (s < x->minstep) {
            x->minstep = s;
        }
    }
    return TC_OK;
}

/* Where each receive lands: its destination when the receive is the first
 * thing on its rank to touch those chunks and only its own threadblock
 * touches them after; else a fresh scratch slot. */
static int place_landings(lower_st *L, mpp_plan *pl, tc_err *err)
{
    const prog *p = L->p;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        int len[3] = {prog_buf_len(p, r, BUF_I), prog_buf_len(p, r, BUF_O), g->s_chunks};
        chunk_use *u[3];
        for (int b = 0; b < 3; b++) {
            u[b] = xcalloc((size_t)len[b] + 1, sizeof **u);
            for (int c = 0; c <= len[b]; c++)
                u[b][c].tb0 = -1;
        }
        int rc = TC_OK;
        for (int t = 0; t < g->ntbs && rc == TC_OK; t++)
            for (int s = 0; s < g->tbs[t].nsteps && rc == TC_OK; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (step_reads_src(st->type))
                    rc = use_region(u, len, st->srcbuf, st->srcoff, st->cnt, t, s, r, err);
                if (rc == TC_OK && step_writes_dst(st->type))
                    rc = use_region(u, len, st->dstbuf, st->dstoff, st->cnt, t, s, r, err);
            }
        int slots = g->s_chunks;
        for (int t = 0; t < g->ntbs && rc == TC_OK; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (!step_receives(st->type))
                    continue;
                stepx *x = &L->sx[r][t][s];
                int direct = !L->ll && (st->type == ST_R || st->type == ST_RCS);
                for (int c = st->dstoff; direct && c < st->dstoff + st->cnt; c++) {
                    const chunk_use *w = &u[st->dstbuf][c];
                    direct = !w->multi && w->tb0 == t && w->minstep == s;
                }
                if (direct) {
                    x->land_b = st->dstbuf;
                    x->land_off = st->dstoff;
                } else {
                    x->land_b = BUF_S;
                    x->land_off = slots;
                    x->slot = 1;
                    slots += st->cnt;
                }
                stepx *y = &L->sx[x->prank][x->ptb][x->pstep];
                y->to_b = x->land_b;
                y->to_off = x->land_off;
            }
        /* LL: packet staging of sends over ports, then the plain temps of
         * rrs above every packet's bytes (packets take twice their chunks) */
        int temps = 0;
        for (int t = 0; t < g->ntbs && rc == TC_OK && L->ll; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                stepx *x = &L->sx[r][t][s];
                if (step_sends(st->type) && L->links[x->slink].port) {
                    x->stage = slots;
                    slots += st->cnt;
                }
            }
        for (int t = 0; t < g->ntbs && rc == TC_OK && L->ll; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (st->type == ST_RRS) {
                    L->sx[r][t][s].temp = 2 * slots + temps;
                    temps += st->cnt;
                }
            }
        pl->ranks[r].in_chunks = len[BUF_I];
        pl->ranks[r].out_chunks = len[BUF_O];
        pl->ranks[r].s_chunks = slots + (temps + 1) / 2;
        for (int b = 0; b < 3; b++)
            free(u[b]);
        if (rc != TC_OK)
            return rc;
    }
    return TC_OK;
}

static int cmp_int3(int a0, int a1, int a2, int b0, int b1, int b2)
{
    if (a0 != b0)
        return a0 < b0 ? -1 : 1;
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    return a2 < b2 ? -1 : a2 > b2;
}

/* Each rank's channels: one per link it is on, ordered by (peer, sender,
 * MSCCL channel), so that both ends list a pair's channels in the same
 * order and MSCCL++ pairs the k-th with the k-th (docs/mscclpp.md §3.1). */
static void number_channels(lower_st *L, mpp_plan *pl)
{
    int *on = xmalloc(sizeof *on * (size_t)(L->nlinks + 1));
    for (int r = 0; r < pl->nranks; r++) {
        int n = 0;
        for (int k = 0; k < L->nlinks; k++)
            if (L->links[k].src == r || L->links[k].dst == r)
                on[n++] = k;
        /* insertion sort: deterministic and small per rank */
        for (int i = 1; i < n; i++) {
            int k = on[i], j = i;
            const link_t *a = &L->links[k];
            int pa = a->src == r ? a->dst : a->src;
            while (j > 0) {
                const link_t *b = &L->links[on[j - 1]];
                int pb = b->src == r ? b->dst : b->src;
                if (cmp_int3(pb, b->src, b->chan, pa, a->src, a->chan) <= 0)
                    break;
                on[j] = on[j - 1];
                j--;
            }
            on[j] = k;
        }
        mpp_rank *R = &pl->ranks[r];
        int nidx[2] = {0, 0};
        for (int i = 0; i < n; i++) {
            link_t *l = &L->links[on[i]];
            R->chans = xgrow(R->chans, &R->chan_cap, R->nchans + 1, sizeof *R->chans);
            mpp_chan *c = &R->chans[R->nchans];
            c->peer = l->src == r ? l->dst : l->src;
            c->port = l->port;
            c->idx = nidx[l->port]++;
            if (l->src == r)
                l->ch_src = R->nchans;
            else
                l->ch_dst = R->nchans;
            R->nchans++;
        }
    }
    free(on);
}

typedef struct {
    int btb, bstep, atb, astep;
} edge;

static int edge_cmp(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    int c = cmp_int3(a->btb, a->bstep, a->atb, b->btb, b->bstep, b->atb);
    return c ? c : (a->astep > b->astep) - (a->astep < b->astep);
}

/* Dependencies across threadblocks of a rank as semaphores, numbered by
 * (block waited for, its step, waiting block, its step): those one step
 * releases are consecutive. */
static int number_semaphores(lower_st *L, mpp_plan *pl, tc_err *err)
{
    const prog *p = L->p;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        int n = 0, cap = 0;
        edge *e = NULL;
        for (int t = 0; t < g->ntbs; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (st->depid < 0 || st->depid == t)
                    continue;
                if (st->depid >= g->ntbs || st->deps < 0 ||
                    st->deps >= g->tbs[st->depid].nsteps) {
                    free(e);
                    return tc_err_set(err, TC_INPUT, "rank %d threadblock %d step %d depends "
                                      "on threadblock %d step %d, which does not exist", r, t,
                                      s, st->depid, st->deps);
                }
                e = xgrow(e, &cap, n + 1, sizeof *e);
                e[n++] = (edge){st->depid, st->deps, t, s};
            }
        if (n > 1)
            qsort(e, (size_t)n, sizeof *e, edge_cmp);
        for (int i = 0; i < n; i++) {
            L->sx[r][e[i].atb][e[i].astep].acq = i;
            stepx *b = &L->sx[r][e[i].btb][e[i].bstep];
            if (b->nrel++ == 0)
                b->rel0 = i;
        }
        pl->ranks[r].nsems = n;
        free(e);
    }
    return TC_OK;
}

static int rbuf_id(mpp_rank *R, int owner, buf_kind b, int port)
{
    for (int i = 0; i < R->nrbufs; i++)
        if (R->rbufs[i].rank == owner && R->rbufs[i].b == b && R->rbufs[i].port == port)
            return i;
    R->rbufs = xgrow(R->rbufs, &R->rbuf_cap, R->nrbufs + 1, sizeof *R->rbufs);
    R->rbufs[R->nrbufs] = (mpp_rbuf){owner, b, port};
    return R->nrbufs++;
}

static mpp_ref local(buf_kind b, int off, int cnt)
{
    return (mpp_ref){b, off, cnt, -1};
}

static void emit(mpp_tb *tb, mpp_op op)
{
    tb->ops = xgrow(tb->ops, &tb->cap, tb->nops + 1, sizeof *tb->ops);
    tb->ops[tb->nops++] = op;
}

static mpp_op op_of(mpp_opk k)
{
    mpp_op o;
    memset(&o, 0, sizeof o);
    o.k = k;
    o.chan = -1;
    return o;
}

/* Which threads run an op: 'z' thread 0 alone (one channel or one
 * semaphore), 'm' several single threads, 'a' all (data ops). */
static char threads_of(const mpp_op *o)
{
    switch (o->k) {
    case MO_PUT: case MO_COPY: case MO_RE: case MO_PPKT: case MO_CPKT: case MO_RPPKT:
    case MO_UPKT: case MO_REPKT: return 'a';
    case MO_RELEASE: case MO_ACQUIRE: return o->nsem == 1 ? 'z' : 'm';
    default: return 'z';
    }
}

static int overlap(const mpp_ref *a, const mpp_ref *b)
{
    return a->rbuf < 0 && b->rbuf < 0 && a->b == b->b && a->off < b->off + b->cnt &&
           b->off < a->off + a->cnt;
}

/* 1 if data ops a then b touch a local chunk in common, one writing it. */
static int conflict(const mpp_op *a, const mpp_op *b)
{
    /* put, ppkt and rppkt write only remotely */
    int aw = a->k != MO_PUT && a->k != MO_PPKT && a->k != MO_RPPKT;
    int bw = b->k != MO_PUT && b->k != MO_PPKT && b->k != MO_RPPKT;
    if (aw) {
        if (bw && overlap(&a->dst, &b->dst))
            return 1;
        for (int i = 0; i < b->nsrc; i++)
            if (overlap(&a->dst, &b->src[i]))
                return 1;
    }
    if (bw)
        for (int i = 0; i < a->nsrc; i++)
            if (overlap(&a->src[i], &b->dst))
                return 1;
    return 0;
}

/* What a block's threads have done since its last nop (__syncthreads):
 * whether one thread synchronised (a wait, an acquire, or a port put whose
 * flush only that thread saw), and the data ops all threads ran. */
#define NOP_DATA (MPP_MAX_OPERATION + 2)
typedef struct {
    int sync;
    int one;        /* any one-thread op */
    int ndata;
    const mpp_op *data[NOP_DATA];
} nop_st;

/* 1 if b needs a nop before it: a data op after a one-thread
 * synchronisation (it would read what only that thread may read yet, or
 * overwrite what the proxy has not read), or touching a local chunk a data
 * op since the nop touched, one writing it; a signal, port put or release
 * publishing what all threads wrote, or several threads releasing after
 * a one-thread op.  The whole window since the last nop counts,
 * not only the op before (a signal between an acquire and a put does not
 * tell the other threads about the acquire). */
static int nop_before(const nop_st *st, const mpp_op *b)
{
    char y = threads_of(b);
    if (y == 'a') {
        if (st->sync || st->ndata == NOP_DATA)
            return 1;
        for (int i = 0; i < st->ndata; i++)
            if (conflict(st->data[i], b))
                return 1;
        return 0;
    }
    int publishes = b->k == MO_SIGNAL || b->k == MO_PWSF || b->k == MO_RELEASE;
    return publishes && (st->ndata > 0 || (st->one && y == 'm'));
}

/* The window after b ran, a nop before it (nop) or not. */
static void nop_note(nop_st *st, const mpp_op *b, int nop)
{
    if (nop || b->k == MO_NOP) {
        st->sync = st->one = 0;
        st->ndata = 0;
    }
    if (threads_of(b) == 'z')
        st->one = 1;
    if (threads_of(b) == 'a' && st->ndata < NOP_DATA)
        st->data[st->ndata++] = b;
    if (b->k == MO_WAIT || b->k == MO_ACQUIRE || b->k == MO_PWSF)
        st->sync = 1;
}

/* The same ops with the nops their threads need. */
static void add_nops(mpp_tb *tb)
{
    mpp_tb out = {0, 0, NULL};
    nop_st st = {0, 0, 0, {0}};
    for (int i = 0; i < tb->nops; i++) {
        int nop = nop_before(&st, &tb->ops[i]);
        if (nop)
            emit(&out, op_of(MO_NOP));
        emit(&out, tb->ops[i]);
        nop_note(&st, &tb->ops[i], nop);
    }
    free(tb->ops);
    *tb = out;
}

/* The put (memory) or put-signal-flush (port) of a send step, and the
 * signal after a memory put. */
static void emit_send(lower_st *L, mpp_plan *pl, mpp_tb *tb, int r, const stepx *x,
                      mpp_ref from)
{
    const link_t *l = &L->links[x->slink];
    mpp_rank *R = &pl->ranks[r];
    mpp_op o = op_of(l->port ? MO_PWSF : MO_PUT);
    o.chan = l->ch_src;
    o.nsrc = 1;
    o.src[0] = from;
    o.dst = (mpp_ref){x->to_b, x->to_off, from.cnt, rbuf_id(R, l->dst, x->to_b, l->port)};
    emit(tb, o);
    if (!l->port) {
        mpp_op sg = op_of(MO_SIGNAL);
        sg.chan = l->ch_src;
        emit(tb, sg);
    }
}

static void emit_reduce(mpp_tb *tb, mpp_ref dst, mpp_ref a, mpp_ref b);

/* LL: the send of `from` as packets into the receiver's slot: memory
 * ppkt; over a port, cpkt into the local staging slot and rppkt from it.
 * `from` already in packets (a received slot) is forwarded with rppkt. */
static void emit_send_ll(lower_st *L, mpp_plan *pl, mpp_tb *tb, int r, const stepx *x,
                         mpp_ref from, int packets)
{
    const link_t *l = &L->links[x->slink];
    mpp_rank *R = &pl->ranks[r];
    mpp_ref to = {x->to_b, x->to_off, from.cnt, rbuf_id(R, l->dst, x->to_b, l->port)};
    if (l->port && !packets) {
        mpp_op c = op_of(MO_CPKT);
        c.nsrc = 1;
        c.src[0] = from;
        c.dst = local(BUF_S, x->stage, from.cnt);
        emit(tb, c);
        from = c.dst;
        packets = 1;
    }
    mpp_op o = op_of(packets ? MO_RPPKT : MO_PPKT);
    o.chan = l->ch_src;
    o.nsrc = 1;
    o.src[0] = from;
    o.dst = to;
    emit(tb, o);
}

static void emit_one(mpp_tb *tb, mpp_opk k, mpp_ref src, mpp_ref dst)
{
    mpp_op o = op_of(k);
    o.nsrc = 1;
    o.src[0] = src;
    o.dst = dst;
    emit(tb, o);
}

/* LL: the body of one step (everything but its semaphores). */
static void emit_step_ll(lower_st *L, mpp_plan *pl, mpp_tb *tb, int r, const prog_step *st,
                         const stepx *x)
{
    mpp_ref src = local(st->srcbuf, st->srcoff, st->cnt);
    mpp_ref dst = local(st->dstbuf, st->dstoff, st->cnt);
    mpp_ref land = local(x->land_b, x->land_off, st->cnt);
    mpp_ref temp = local(BUF_S, x->temp, st->cnt);
    switch (st->type) {
    case ST_S: emit_send_ll(L, pl, tb, r, x, src, 0); break;
    case ST_R: emit_one(tb, MO_UPKT, land, dst); break;
    case ST_RCS:
        emit_one(tb, MO_UPKT, land, dst);
        emit_send_ll(L, pl, tb, r, x, land, 1);
        break;
    case ST_RRC: emit_reduce(tb, dst, src, land); tb->ops[tb->nops - 1].k = MO_REPKT; break;
    case ST_RRCS:
        emit_reduce(tb, dst, src, land);
        tb->ops[tb->nops - 1].k = MO_REPKT;
        emit_send_ll(L, pl, tb, r, x, dst, 0);
        break;
    case ST_RRS:
        emit_reduce(tb, temp, src, land);
        tb->ops[tb->nops - 1].k = MO_REPKT;
        emit_send_ll(L, pl, tb, r, x, temp, 0);
        break;
    case ST_CPY: emit_one(tb, MO_COPY, src, dst); break;
    case ST_RE: emit_reduce(tb, dst, dst, src); break;
    default: break;
    }
}

static void emit_reduce(mpp_tb *tb, mpp_ref dst, mpp_ref a, mpp_ref b)
{
    mpp_op o = op_of(MO_RE);
    o.nsrc = 2;
    o.src[0] = a;
    o.src[1] = b;
    o.dst = dst;
    emit(tb, o);
}

static void emit_tb(lower_st *L, mpp_plan *pl, int r, int t)
{
    const prog_tb *ptb = &L->p->gpus[r].tbs[t];
    mpp_tb *tb = &pl->ranks[r].tbs[t];
    /* ready: tell the block that sends to us it may put; wait for ours
     * (LL needs none: packets carry the launch's flag, and the scratch
     * halves alternate between launches) */
    for (int k = 0; k < L->nlinks && !L->ll; k++)
        if (L->links[k].dst == r && L->links[k].rtb == t) {
            mpp_op o = op_of(MO_SIGNAL);
            o.chan = L->links[k].ch_dst;
            emit(tb, o);
        }
    for (int k = 0; k < L->nlinks && !L->ll; k++)
        if (L->links[k].src == r && L->links[k].stb == t) {
            mpp_op o = op_of(MO_WAIT);
            o.chan = L->links[k].ch_src;
            emit(tb, o);
        }
    for (int s = 0; s < ptb->nsteps; s++) {
        const prog_step *st = &ptb->steps[s];
        const stepx *x = &L->sx[r][t][s];
        if (x->acq >= 0) {
            mpp_op o = op_of(MO_ACQUIRE);
            o.sem0 = x->acq;
            o.nsem = 1;
            emit(tb, o);
        }
        mpp_ref src = local(st->srcbuf, st->srcoff, st->cnt);
        mpp_ref dst = local(st->dstbuf, st->dstoff, st->cnt);
        mpp_ref land = local(x->land_b, x->land_off, st->cnt);
        mpp_ref from = src;
        if (L->ll) {
            emit_step_ll(L, pl, tb, r, st, x);
        } else if (step_receives(st->type)) {
            mpp_op w = op_of(MO_WAIT);
            w.chan = L->links[x->rlink].ch_dst;
            emit(tb, w);
            from = land;
            if ((st->type == ST_R || st->type == ST_RCS) && x->slot) {
                mpp_op c = op_of(MO_COPY);
                c.nsrc = 1;
                c.src[0] = land;
                c.dst = dst;
                emit(tb, c);
            } else if (st->type == ST_RRC || st->type == ST_RRCS) {
                emit_reduce(tb, dst, src, land);
                from = dst;
            } else if (st->type == ST_RRS) {
                emit_reduce(tb, land, land, src);
            }
        } else if (st->type == ST_CPY) {
            mpp_op c = op_of(MO_COPY);
            c.nsrc = 1;
            c.src[0] = src;
            c.dst = dst;
            emit(tb, c);
        } else if (st->type == ST_RE) {
            emit_reduce(tb, dst, dst, src);
        }
        if (step_sends(st->type) && !L->ll)
            emit_send(L, pl, tb, r, x, from);
        for (int i = 0; i < x->nrel; i += MPP_MAX_DEVICE_SEMAPHORES) {
            mpp_op o = op_of(MO_RELEASE);
            o.sem0 = x->rel0 + i;
            o.nsem = x->nrel - i < MPP_MAX_DEVICE_SEMAPHORES ? x->nrel - i
                                                            : MPP_MAX_DEVICE_SEMAPHORES;
            emit(tb, o);
        }
    }
}

/* Rank r's blocks cut to MSCCL++'s MPP_MAX_OPERATION ops each, nops
 * included: a block too long becomes consecutive blocks, each after the
 * first acquiring a semaphore the one before releases last, so they run
 * one after another as the one block would (channels and semaphores are
 * device memory every block of the rank shares).  Ids stay in order. */
static void split_rank(mpp_rank *R)
{
    int n = 0, cap = 0;
    mpp_tb *out = NULL;
    for (int t = 0; t < R->ntbs; t++) {
        mpp_tb *tb = &R->tbs[t];
        int start = 0;
        do {
            mpp_op acq = op_of(MO_ACQUIRE), rel = op_of(MO_RELEASE);
            acq.nsem = rel.nsem = 1;
            nop_st st = {0, 0, 0, {0}};
            if (start > 0)
                nop_note(&st, &acq, 0);
            int cnt = start > 0, end = start;
            while (end < tb->nops) {
                /* as add_nops will count them */
                int nop = nop_before(&st, &tb->ops[end]);
                nop_st after = st;
                nop_note(&after, &tb->ops[end], nop);
                int c = cnt + nop + 1;
                int tail = end + 1 < tb->nops ? nop_before(&after, &rel) + 1 : 0;
                if (c + tail > MPP_MAX_OPERATION && end > start)
                    break;
                cnt = c;
                st = after;
                end++;
            }
            mpp_tb seg = {0, 0, NULL};
            if (start > 0) {
                acq.sem0 = R->nsems - 1;
                emit(&seg, acq);
            }
            for (int i = start; i < end; i++)
                emit(&seg, tb->ops[i]);
            if (end < tb->nops) {
                rel.sem0 = R->nsems++;
                emit(&seg, rel);
            }
            add_nops(&seg);
            out = xgrow(out, &cap, n + 1, sizeof *out);
            out[n++] = seg;
            start = end;
        } while (start < tb->nops);
        free(tb->ops);
    }
    free(R->tbs);
    R->tbs = out;
    R->ntbs = n;
}

int mpp_lower(const prog *p, mpp_plan *pl, tc_err *err)
{
    TC_ASSERT(prog_sane(p));
    if (p->ngpu != p->ngpus || p->ngpu < 1)
        return tc_err_set(err, TC_INPUT, "the program has %d <gpu> elements for %d ranks",
                          p->ngpu, p->ngpus);
    lower_st L;
    memset(&L, 0, sizeof L);
    L.p = p;
    L.ll = pl->ll = !strcmp(p->proto, "LL");
    L.node = xcalloc((size_t)p->ngpu, sizeof *L.node);
    const topo *t = p->topo;
    for (int r = 0; r < p->ngpu; r++)
        L.node[r] = t && t->nranks == p->ngpu ? topo_node_of(t, r) : 0;
    pl->nranks = p->ngpu;
    pl->ranks = xcalloc((size_t)p->ngpu, sizeof *pl->ranks);
    L.sx = xcalloc((size_t)p->ngpu, sizeof *L.sx);
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        pl->ranks[r].ntbs = g->ntbs;
        pl->ranks[r].tbs = xcalloc((size_t)g->ntbs + 1, sizeof *pl->ranks[r].tbs);
        L.sx[r] = xcalloc((size_t)g->ntbs + 1, sizeof *L.sx[r]);
        for (int tb = 0; tb < g->ntbs; tb++) {
            L.sx[r][tb] = xcalloc((size_t)g->tbs[tb].nsteps + 1, sizeof **L.sx[r]);
            for (int s = 0; s <= g->tbs[tb].nsteps; s++) {
                stepx *x = &L.sx[r][tb][s];
                x->rlink = x->slink = x->acq = x->stage = x->temp = -1;
            }
        }
    }
    int rc = find_links(&L, err);
    if (rc == TC_OK)
        rc = pair_steps(&L, err);
    if (rc == TC_OK)
        rc = place_landings(&L, pl, err);
    if (rc == TC_OK)
        rc = number_semaphores(&L, pl, err);
    if (rc == TC_OK) {
        number_channels(&L, pl);
        for (int r = 0; r < p->ngpu; r++) {
            for (int tb = 0; tb < p->gpus[r].ntbs; tb++)
                emit_tb(&L, pl, r, tb);
            split_rank(&pl->ranks[r]);
        }
    }
    for (int r = 0; r < p->ngpu; r++) {
        for (int tb = 0; tb < p->gpus[r].ntbs; tb++)
            free(L.sx[r][tb]);
        free(L.sx[r]);
    }
    free(L.sx);
    free(L.links);
    free(L.node);
    return rc;
}

void mpp_plan_free(mpp_plan *pl)
{
    for (int r = 0; pl->ranks && r < pl->nranks; r++) {
        mpp_rank *R = &pl->ranks[r];
        for (int t = 0; t < R->ntbs; t++)
            free(R->tbs[t].ops);
        free(R->tbs);
        free(R->chans);
        free(R->rbufs);
    }
    free(pl->ranks);
    memset(pl, 0, sizeof *pl);
}
