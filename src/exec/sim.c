/* sim.c — the event-driven executor (contract in sim.h).
 *
 * Every threadblock (tb) is a small state machine over its steps; a binary
 * heap of events keyed by (time, sequence) drives them, so a run is fully
 * deterministic.  Transfer requests at one instant are served after every
 * completion at that instant, oldest first (by the instant each first
 * asked, then (rank, tb) order), first come first served:
 * each resource (a link direction with `mult` lanes, a switch port in or
 * out, a NIC direction) keeps the time its lanes become free, and a transfer
 * starts when all its resources are free and holds them until it ends.
 *
 * Messages: the k-th send on a connection (chan, A->B) meets the k-th
 * receive; at most COST_FIFO_SLOTS are outstanding.  In data mode a message does
 * not copy its payload: it names the sender's slots, and from the moment the
 * transfer completes (the data is captured then) each named slot counts a
 * pending reader.  Any write into a slot with pending readers first
 * snapshots those messages (copy-on-write), so the common case costs one
 * memcpy per transfer, straight from the sender's buffer into the
 * receiver's destination. */
#include "sim.h"

#include <assert.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data.h"
#include "evq.h"
#include "layout.h"
#include "../model/cost.h"
#include "../util/mem.h"

#define MAX_SETUP_HAZARDS 10
#define MAX_STUCK_LISTED 4
#define PBUF_CACHE 16

/* ------------------------------------------------------------ events */

enum { EV_RUN, EV_XFER_REQ, EV_XFER_END, EV_RECV_DONE, EV_LOCAL_END, EV_ARRIVE };

/* ------------------------------------------------------------ state */

enum { PH_START, PH_RECV, PH_SEND, PH_BUSY, PH_DONE };
enum { W_NONE, W_DEP, W_RECV, W_FIFO };

typedef struct {
    const prog_tb *tb;
    int rank;
    int pc;                 /* current step; steps < pc have ended */
    int phase;
    int wait;               /* what it is blocked on (W_*) */
    int wait_next;          /* next tb in the list it is blocked in */
    int dep_waiters;        /* tbs waiting for this tb's progress */
    int send_conn, recv_conn;
    int msg;                /* message of the transfer in progress */
    unsigned char *payload; /* rrs: computed payload waiting to be sent */
    size_t payload_cap;
    long long step0;        /* schedule-wide index of its step 0 (race.h order) */
    double t_step;          /* when its current step began (dependency met) */
    double t_ask;           /* when its transfer was first asked for, -1 */
    int tb_index;           /* its index in its <gpu> */
} tbstate;

typedef struct {
    int src, dst, chan;
    int head, tail;         /* message queue, -1 = empty */
    int inflight;           /* sent, not yet consumed */
    int send_waiters, recv_waiters;
    int nsenders;
    int sender;             /* first sending tb (global index), for messages */
    int nres, res[2];
    topo_route route;
    int chip_diff, cluster_diff;
    int pairing_reported;
} conn;

typedef struct {
    int next;               /* in its connection's queue */
    int pprev, pnext;       /* in the source rank's pending-reader list */
    int arrived, registered;
    int src_rank, src_slot, cnt;
    int conn;               /* its connection */
    long long bytes;
    unsigned char *payload; /* owned snapshot, or NULL: read the source slots */
    size_t payload_cap;
    int send_rank, send_tb, send_step;
    long long id;           /* transfer number (sim_xfer_event.id) */
    double t_land;          /* when its last byte lands */
} message;

typedef struct {
    unsigned char *p;
    size_t cap;
} pbuf;

typedef struct {
    const prog *p;
    const topo *t;
    const sim_opts *o;
    sim_result *r;
    hazard_list *hz;
    long long cb;           /* chunk bytes */
    layout *lay;            /* [ngpu] */
    int *tb_base;           /* [ngpu + 1] */
    int ntb;
    long long nsteps;
    tbstate *tbs;
    int nconn;
    conn *conns;
    message *msgs;
    int nmsg, msg_cap, msg_free;
    cost_lanes *lanes;      /* every resource's lanes (model/cost) */
    cost_proto proto;       /* the program's protocol */
    int *res_waiters;       /* [nres]: tbs whose transfer waits for it ("ready") */
    long long nxfer;        /* transfers asked so far */
    evq q;
    int data;
    data_space d;
    int **pend;             /* [rank][slot]: sealed messages reading it */
    int *pend_head;         /* [rank]: pending-reader list */
    pbuf cache[PBUF_CACHE];
    int ncache;
} sim;

/* ------------------------------------------------------------ payload buffers */

static unsigned char *pbuf_get(sim *S, size_t need, size_t *cap)
{
    for (int i = 0; i < S->ncache; i++)
        if (S->cache[i].cap >= need) {
            unsigned char *p = S->cache[i].p;
            *cap = S->cache[i].cap;
            S->cache[i] = S->cache[--S->ncache];
            return p;
        }
    unsigned char *p = malloc(need ? need : 1);
    if (!p)
        tc_oom();
    *cap = need;
    return p;
}

static void pbuf_put(sim *S, unsigned char *p, size_t cap)
{
    if (!p)
        return;
    if (S->ncache < PBUF_CACHE) {
        S->cache[S->ncache].p = p;
        S->cache[S->ncache].cap = cap;
        S->ncache++;
        return;
    }
    free(p);
}

/* ------------------------------------------------------------ events */

static void push_event(sim *S, double t, int type, int g)
{
    evq_push(&S->q, t, type, g);
}

/* A transfer request of tb g, for the current instant. */
static void push_request(sim *S, int g)
{
    double first = S->tbs[g].t_ask;
    evq_request(&S->q, EV_XFER_REQ, g, first < 0 ? S->q.now : first);
}

static void wake_list(sim *S, int *head, double now)
{
    int g = *head;
    *head = -1;
    while (g >= 0) {
        int next = S->tbs[g].wait_next;
        S->tbs[g].wait_next = -1;
        S->tbs[g].wait = W_NONE;
        push_event(S, now, EV_RUN, g);
        g = next;
    }
}

static void enlist(sim *S, int *head, int g, int why)
{
    S->tbs[g].wait = why;
    S->tbs[g].wait_next = *head;
    *head = g;
}

/* ------------------------------------------------------------ messages and copy-on-write */

static int msg_alloc(sim *S)
{
    int m;
    if (S->msg_free >= 0) {
        m = S->msg_free;
        S->msg_free = S->msgs[m].next;
    } else {
        if (S->nmsg == S->msg_cap) {
            S->msg_cap = S->msg_cap ? 2 * S->msg_cap : 64;
            S->msgs = xrealloc(S->msgs, (size_t)S->msg_cap * sizeof *S->msgs);
        }
        m = S->nmsg++;
    }
    memset(&S->msgs[m], 0, sizeof S->msgs[m]);
    S->msgs[m].next = S->msgs[m].pprev = S->msgs[m].pnext = -1;
    return m;
}

static void msg_register(sim *S, int m)
{
    message *x = &S->msgs[m];
    int *pc = S->pend[x->src_rank];
    for (int k = 0; k < x->cnt; k++)
        pc[x->src_slot + k]++;
    x->registered = 1;
    x->pprev = -1;
    x->pnext = S->pend_head[x->src_rank];
    if (x->pnext >= 0)
        S->msgs[x->pnext].pprev = m;
    S->pend_head[x->src_rank] = m;
}

static void msg_unregister(sim *S, int m)
{
    message *x = &S->msgs[m];
    if (!x->registered)
        return;
    int *pc = S->pend[x->src_rank];
    for (int k = 0; k < x->cnt; k++)
        pc[x->src_slot + k]--;
    if (x->pprev >= 0)
        S->msgs[x->pprev].pnext = x->pnext;
    else
        S->pend_head[x->src_rank] = x->pnext;
    if (x->pnext >= 0)
        S->msgs[x->pnext].pprev = x->pprev;
    x->registered = 0;
    x->pprev = x->pnext = -1;
}

static void msg_release(sim *S, int m)
{
    message *x = &S->msgs[m];
    msg_unregister(S, m);
    pbuf_put(S, x->payload, x->payload_cap);
    x->payload = NULL;
    x->next = S->msg_free;
    S->msg_free = m;
}

/* Snapshot a message's payload so its source slots may be overwritten. */
static void msg_materialize(sim *S, int m)
{
    message *x = &S->msgs[m];
    x->payload = pbuf_get(S, (size_t)x->bytes, &x->payload_cap);
    memcpy(x->payload, data_slot(&S->d, x->src_rank, x->src_slot), (size_t)x->bytes);
    msg_unregister(S, m);
}

/* Before writing slots [slot, slot+cnt) of rank: snapshot every sealed
 * message that still reads any of them. */
static void cow_guard(sim *S, int rank, int slot, int cnt)
{
    const int *pc = S->pend[rank];
    int hit = 0;
    for (int k = 0; k < cnt && !hit; k++)
        hit = pc[slot + k] != 0;
    if (!hit)
        return;
    int m = S->pend_head[rank];
    while (m >= 0) {
        int next = S->msgs[m].pnext;
        const message *x = &S->msgs[m];
        if (x->src_slot < slot + cnt && slot < x->src_slot + x->cnt)
            msg_materialize(S, m);
        m = next;
    }
}

static const unsigned char *msg_data(const sim *S, const message *x)
{
    return x->payload ? x->payload : data_slot(&S->d, x->src_rank, x->src_slot);
}

/* ------------------------------------------------------------ data effects */

static int slot_of(const sim *S, int rank, buf_kind b, int off)
{
    return layout_slot(&S->lay[rank], b, off);
}

static void data_recv(sim *S, tbstate *b, const prog_step *st, message *x)
{
    int rank = b->rank;
    int n = st->cnt < x->cnt ? st->cnt : x->cnt;
    long long elems = (long long)n * S->d.elems;
    size_t nbytes = (size_t)n * (size_t)S->cb;
    unsigned char *src = NULL, *dst = NULL;
    if (step_reads_src(st->type))
        src = data_slot(&S->d, rank, slot_of(S, rank, st->srcbuf, st->srcoff));
    if (step_writes_dst(st->type)) {
        int ds = slot_of(S, rank, st->dstbuf, st->dstoff);
        cow_guard(S, rank, ds, st->cnt);
        dst = data_slot(&S->d, rank, ds);
    }
    const unsigned char *in = msg_data(S, x);   /* after the guard: it may have moved */
    switch (st->type) {
    case ST_R:
    case ST_RCS:
        memmove(dst, in, nbytes);
        break;
    case ST_RRC:
    case ST_RRCS:
        data_reduce(S->d.dtype, dst, in, src, elems);
        break;
    case ST_RRS: {
        size_t need = (size_t)st->cnt * (size_t)S->cb;
        unsigned char *out;
        size_t cap;
        if (x->payload && x->payload_cap >= need) {
            out = x->payload;           /* reuse the incoming snapshot */
            cap = x->payload_cap;
            x->payload = NULL;
        } else {
            out = pbuf_get(S, need, &cap);
        }
        data_reduce(S->d.dtype, out, in, src, elems);
        if (need > nbytes)              /* count mismatch (reported): pass src on */
            memcpy(out + nbytes, src + nbytes, need - nbytes);
        b->payload = out;
        b->payload_cap = cap;
        break;
    }
    default:
        break;
    }
}

static void data_local(sim *S, tbstate *b, const prog_step *st)
{
    int rank = b->rank;
    int ds = slot_of(S, rank, st->dstbuf, st->dstoff);
    unsigned char *src = data_slot(&S->d, rank, slot_of(S, rank, st->srcbuf, st->srcoff));
    cow_guard(S, rank, ds, st->cnt);
    unsigned char *dst = data_slot(&S->d, rank, ds);
    if (st->type == ST_CPY)
        memmove(dst, src, (size_t)st->cnt * (size_t)S->cb);
    else
        data_reduce(S->d.dtype, dst, dst, src, (long long)st->cnt * S->d.elems);
}

/* ------------------------------------------------------------ timing helpers */

static double step_bytes(const sim *S, const prog_step *st)
{
    return (double)st->cnt * (double)S->cb;
}

/* ------------------------------------------------------------ the tb machine */

static void tb_run(sim *S, int g, double now);

static void step_end(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    const sim_observer *ob = S->o->obs;
    if (ob && ob->step)
        ob->step(ob->ctx, b->rank, b->tb_index, b->pc, b->tb->steps[b->pc].type, b->t_step, now);
    b->pc++;
    b->phase = PH_START;
    b->wait = W_NONE;
    S->r->steps_run++;
    if (now > S->r->time_us)
        S->r->time_us = now;
    /* wake the tbs whose dependency on this one is now met */
    int *link = &b->dep_waiters;
    while (*link >= 0) {
        int w = *link;
        tbstate *wb = &S->tbs[w];
        const prog_step *ws = &wb->tb->steps[wb->pc];
        if (b->pc > ws->deps) {
            *link = wb->wait_next;
            wb->wait_next = -1;
            wb->wait = W_NONE;
            push_event(S, now, EV_RUN, w);
        } else {
            link = &wb->wait_next;
        }
    }
}

/* Slots a sending step sends from: src for s and rrs, dst for rcs/rrcs. */
static void send_source(const sim *S, const tbstate *b, const prog_step *st, int *slot)
{
    if (st->type == ST_RCS || st->type == ST_RRCS)
        *slot = slot_of(S, b->rank, st->dstbuf, st->dstoff);
    else
        *slot = slot_of(S, b->rank, st->srcbuf, st->srcoff);
}

static void start_send(sim *S, int g)
{
    tbstate *b = &S->tbs[g];
    const prog_step *st = &b->tb->steps[b->pc];
    conn *c = &S->conns[b->send_conn];
    int m = msg_alloc(S);
    message *x = &S->msgs[m];
    x->src_rank = b->rank;
    send_source(S, b, st, &x->src_slot);
    x->cnt = st->cnt;
    x->bytes = (long long)st->cnt * S->cb;
    x->payload = b->payload;
    x->payload_cap = b->payload_cap;
    b->payload = NULL;
    b->payload_cap = 0;
    x->send_rank = b->rank;
    x->conn = b->send_conn;
    x->send_tb = b->tb->id;
    x->send_step = b->pc;
    x->id = S->nxfer++;
    if (c->tail >= 0)
        S->msgs[c->tail].next = m;
    else
        c->head = m;
    c->tail = m;
    c->inflight++;
    b->msg = m;
    b->phase = PH_BUSY;
    b->t_ask = -1;
    push_request(S, g);
}

static void xfer_request(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    conn *c = &S->conns[b->send_conn];
    message *x = &S->msgs[b->msg];
    int lane[2] = {-1, -1};
    double start = cost_lanes_start(S->lanes, c->res, c->nres, now, lane);
    if (b->t_ask < 0)
        b->t_ask = now;
    if (cost_must_wait(S->t, start, now)) {    /* asks again when it is freed */
        int r = cost_lanes_busy(S->lanes, c->res, c->nres, now);
        b->wait_next = S->res_waiters[r];
        S->res_waiters[r] = g;
        return;
    }
    double cost = cost_hop_us(&c->route, (double)x->bytes);
    double hold = cost_hold_us(S->t, &c->route, (double)x->bytes);
    double end = start + cost;
    x->t_land = end;
    cost_lanes_hold(S->lanes, c->res, lane, c->nres, start + hold);
    for (int k = 0; k < c->nres; k++) {
        S->r->res_busy_us[c->res[k]] += hold;
        S->r->res_bytes[c->res[k]] += (double)x->bytes;
    }
    const sim_observer *ob = S->o->obs;
    if (ob && ob->xfer) {
        sim_xfer_event e = {x->id, c->src, c->dst, c->chan, b->tb_index, x->send_step, x->cnt,
                            (double)x->bytes, b->t_ask, start, end, start + hold, c->nres,
                            {c->res[0], c->res[1]}, {lane[0], lane[1]}};
        ob->xfer(ob->ctx, &e);
    }
    S->r->transfers++;
    S->r->bytes_moved += (double)x->bytes;
    S->r->xfer_us += cost;
    assert(b->step0 + x->send_step < S->nsteps);
    if (S->o->dead && S->o->dead[b->step0 + x->send_step]) {
        S->r->dead_transfers++;
        S->r->dead_bytes += (double)x->bytes;
        S->r->dead_xfer_us += cost;
    }
    S->r->chip_syncs += c->chip_diff;
    S->r->cluster_syncs += c->cluster_diff;
    /* the sender is done when it frees the resources (start + hold = end
     * where alpha is held); where alpha is latency the data lands later */
    push_event(S, start + hold, EV_XFER_END, g);
    if (cost_delayed(S->t, &c->route))
        push_event(S, end, EV_ARRIVE, b->msg);
}

/* Where alpha is a delay: message m reaches its receiver. */
static void xfer_arrive(sim *S, int m, double now)
{
    S->msgs[m].arrived = 1;
    wake_list(S, &S->conns[S->msgs[m].conn].recv_waiters, now);
}

/* Connection c's resources are free again: the transfers waiting for one
 * of them ask again at this instant (model/cost's cost_must_wait). */
static void wake_res_waiters(sim *S, const conn *c)
{
    for (int k = 0; k < c->nres; k++) {
        int w = S->res_waiters[c->res[k]];
        S->res_waiters[c->res[k]] = -1;
        for (int next; w >= 0; w = next) {
            next = S->tbs[w].wait_next;
            S->tbs[w].wait_next = -1;
            push_request(S, w);
        }
    }
}

static void xfer_end(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    conn *c = &S->conns[b->send_conn];
    int m = b->msg;
    message *x = &S->msgs[m];
    if (S->data && !x->payload)         /* the data is captured now */
        msg_register(S, m);
    b->msg = -1;
    wake_res_waiters(S, c);
    if (!cost_delayed(S->t, &c->route)) { /* else it lands at its EV_ARRIVE */
        x->arrived = 1;
        wake_list(S, &c->recv_waiters, now);
    }
    step_end(S, g, now);
    tb_run(S, g, now);
}

static void report_pairing(sim *S, tbstate *b, const prog_step *st, conn *c, const message *x)
{
    if (c->pairing_reported)
        return;
    c->pairing_reported = 1;
    hazard_add(S->hz, HZ_PAIRING, b->rank, b->tb->id, b->pc,
               "%s receives %d chunks but the matching send (rank %d tb %d step %d) sends %d",
               step_type_name(st->type), st->cnt, x->send_rank, x->send_tb, x->send_step, x->cnt);
}

/* The receive part of a step is over: write the data, free the FIFO slot,
 * then send on or end the step. */
static void recv_finish(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    const prog_step *st = &b->tb->steps[b->pc];
    conn *c = &S->conns[b->recv_conn];
    int m = c->head;
    message *x = &S->msgs[m];
    if (x->cnt != st->cnt)
        report_pairing(S, b, st, c, x);
    const sim_observer *ob = S->o->obs;
    if (ob && ob->recv)
        ob->recv(ob->ctx, x->id, b->rank, b->tb_index, b->pc, now);
    if (S->data)
        data_recv(S, b, st, x);
    if (step_reduces(st->type))
        S->r->bytes_local += step_bytes(S, st);
    c->head = x->next;
    if (c->head < 0)
        c->tail = -1;
    c->inflight--;
    msg_release(S, m);
    wake_list(S, &c->send_waiters, now);
    if (step_sends(st->type))
        b->phase = PH_SEND;
    else
        step_end(S, g, now);
}

static int dep_ready(const sim *S, const tbstate *b, const prog_step *st, int *dep)
{
    if (st->depid < 0)
        return 1;
    *dep = S->tb_base[b->rank] + st->depid;
    return S->tbs[*dep].pc > st->deps;
}

static void tb_run(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    for (;;) {
        if (b->pc >= b->tb->nsteps) {
            b->phase = PH_DONE;
            return;
        }
        const prog_step *st = &b->tb->steps[b->pc];
        switch (b->phase) {
        case PH_START: {
            int dep;
            if (!dep_ready(S, b, st, &dep)) {
                enlist(S, &S->tbs[dep].dep_waiters, g, W_DEP);
                return;
            }
            b->t_step = now;
            if (st->type == ST_NOP) {
                step_end(S, g, now);
                continue;
            }
            if (st->type == ST_CPY || st->type == ST_RE) {
                double bytes = step_bytes(S, st);
                b->phase = PH_BUSY;
                push_event(S, now + (st->type == ST_CPY ? cost_copy_us(S->t, bytes)
                                                        : cost_reduce_us(S->t, bytes)),
                           EV_LOCAL_END, g);
                return;
            }
            b->phase = step_receives(st->type) ? PH_RECV : PH_SEND;
            continue;
        }
        case PH_RECV: {
            conn *c = &S->conns[b->recv_conn];
            if (c->head < 0 || !S->msgs[c->head].arrived) {
                enlist(S, &c->recv_waiters, g, W_RECV);
                return;
            }
            if (step_reduces(st->type)) {   /* reduced as it landed */
                b->phase = PH_BUSY;
                push_event(S, cost_reduce_end_us(S->t, S->proto, c->route.bw_gbps,
                                                 step_bytes(S, st), S->msgs[c->head].t_land,
                                                 b->t_step),
                           EV_RECV_DONE, g);
                return;
            }
            recv_finish(S, g, now);
            continue;
        }
        case PH_SEND: {
            conn *c = &S->conns[b->send_conn];
            if (c->inflight >= COST_FIFO_SLOTS) {
                enlist(S, &c->send_waiters, g, W_FIFO);
                return;
            }
            start_send(S, g);
            return;
        }
        default:
            return;     /* busy: an event of its own is pending */
        }
    }
}

static void local_end(sim *S, int g, double now)
{
    tbstate *b = &S->tbs[g];
    const prog_step *st = &b->tb->steps[b->pc];
    if (S->data)
        data_local(S, b, st);
    S->r->bytes_local += step_bytes(S, st);
    step_end(S, g, now);
    tb_run(S, g, now);
}

static void recv_done(sim *S, int g, double now)
{
    recv_finish(S, g, now);
    tb_run(S, g, now);
}

/* ------------------------------------------------------------ setup: validation */

typedef struct {
    sim *S;
    int added, total;
} setup_log;

static void setup_hazard(setup_log *L, hazard_kind k, int rank, int tb, int step, const char *msg)
{
    L->total++;
    if (L->added < MAX_SETUP_HAZARDS) {
        hazard_add(L->S->hz, k, rank, tb, step, "%s", msg);
        L->added++;
    }
}

static int range_ok(const layout *l, buf_kind b, int off, int cnt)
{
    if (cnt < 1 || off < 0 || (long long)off + cnt - 1 > INT_MAX)
        return 0;
    return layout_slot(l, b, off) >= 0 && layout_slot(l, b, off + cnt - 1) >= 0;
}

static void check_range(setup_log *L, int r, int t, int s, const layout *l, const char *what,
                        buf_kind b, int off, int cnt)
{
    if (range_ok(l, b, off, cnt))
        return;
    char msg[256];
    if (b < BUF_I || b > BUF_S)
        snprintf(msg, sizeof msg, "%s buffer is missing or not i/o/s", what);
    else
        snprintf(msg, sizeof msg, "%s range %s[%d..%lld] is outside the %s buffer (%d chunks)",
                 what, buf_name(b), off, (long long)off + cnt - 1, buf_name(b), l->len[b]);
    setup_hazard(L, HZ_BOUNDS, r, t, s, msg);
}

static void validate_step(setup_log *L, const prog *p, int r, const prog_tb *tb, int s)
{
    const prog_step *st = &tb->steps[s];
    const layout *l = &L->S->lay[r];
    char msg[256];
    if (st->type < 0 || st->type >= ST_COUNT) {
        setup_hazard(L, HZ_BOUNDS, r, tb->id, s, "unknown step type");
        return;
    }
    const char *name = step_type_name(st->type);
    if (step_sends(st->type) && tb->send < 0) {
        snprintf(msg, sizeof msg, "%s sends but the tb has no send peer", name);
        setup_hazard(L, HZ_CONNECTION, r, tb->id, s, msg);
    }
    if (step_receives(st->type) && tb->recv < 0) {
        snprintf(msg, sizeof msg, "%s receives but the tb has no recv peer", name);
        setup_hazard(L, HZ_CONNECTION, r, tb->id, s, msg);
    }
    if (st->type != ST_NOP) {
        if (st->cnt < 1) {
            snprintf(msg, sizeof msg, "cnt = %d; a %s step moves at least one chunk", st->cnt,
                     name);
            setup_hazard(L, HZ_BOUNDS, r, tb->id, s, msg);
        } else {
            if (step_reads_src(st->type))
                check_range(L, r, tb->id, s, l, "src", st->srcbuf, st->srcoff, st->cnt);
            if (step_writes_dst(st->type))
                check_range(L, r, tb->id, s, l, "dst", st->dstbuf, st->dstoff, st->cnt);
        }
    }
    if (st->depid >= 0) {
        const prog_gpu *g = &p->gpus[r];
        if (st->depid >= g->ntbs) {
            snprintf(msg, sizeof msg, "depends on tb %d, but rank %d has %d tbs", st->depid, r,
                     g->ntbs);
            setup_hazard(L, HZ_DEPENDENCY, r, tb->id, s, msg);
        } else if (st->deps < 0 || st->deps >= g->tbs[st->depid].nsteps) {
            snprintf(msg, sizeof msg, "depends on tb %d step %d, which does not exist", st->depid,
                     st->deps);
            setup_hazard(L, HZ_DEPENDENCY, r, tb->id, s, msg);
        }
    }
}

/* Structural soundness, so that nothing below can index out of range. */
static int validate_program(sim *S)
{
    const prog *p = S->p;
    setup_log L = {S, 0, 0};
    char msg[256];
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            if (tb->id != t) {
                snprintf(msg, sizeof msg, "tb ids must be dense: tb at position %d has id %d", t,
                         tb->id);
                setup_hazard(&L, HZ_CONNECTION, r, t, -1, msg);
            }
            if (tb->send < -1 || tb->send >= p->ngpu || tb->recv < -1 || tb->recv >= p->ngpu) {
                snprintf(msg, sizeof msg, "peer send %d recv %d is not a rank 0..%d", tb->send,
                         tb->recv, p->ngpu - 1);
                setup_hazard(&L, HZ_CONNECTION, r, t, -1, msg);
                continue;
            }
            for (int s = 0; s < tb->nsteps; s++)
                validate_step(&L, p, r, tb, s);
        }
    }
    if (L.total > L.added)
        hazard_add(S->hz, HZ_BOUNDS, -1, -1, -1, "%d more structural problems not listed",
                   L.total - L.added);
    return L.total;
}

/* DMA rule: each transfer and each cpy moves whole aligned segments. */
static void check_dma(sim *S)
{
    const int dma = S->t->dma_bytes;
    if (dma <= 0)
        return;
    setup_log L = {S, 0, 0};
    for (int r = 0; r < S->p->ngpu; r++) {
        const prog_gpu *g = &S->p->gpus[r];
        for (int t = 0; t < g->ntbs; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                int offs[2], n = 0;
                if (st->type == ST_S || st->type == ST_RRS)
                    offs[n++] = st->srcoff;
                if (step_receives(st->type) && step_writes_dst(st->type))
                    offs[n++] = st->dstoff;
                if (st->type == ST_CPY) {
                    offs[n++] = st->srcoff;
                    offs[n++] = st->dstoff;
                }
                if (n == 0)
                    continue;
                long long bytes = (long long)st->cnt * S->cb;
                for (int k = 0; k < n; k++) {
                    long long at = (long long)offs[k] * S->cb;
                    if (bytes % dma == 0 && at % dma == 0)
                        continue;
                    char msg[256];
                    snprintf(msg, sizeof msg,
                             "DMA moves %lld bytes at offset %lld; the device moves whole "
                             "%d-byte aligned segments",
                             bytes, at, dma);
                    setup_hazard(&L, HZ_DEVICE, r, t, s, msg);
                    break;
                }
            }
    }
    if (L.total > L.added)
        hazard_add(S->hz, HZ_DEVICE, -1, -1, -1, "%d more steps break the %d-byte DMA rule",
                   L.total - L.added, dma);
}

/* ------------------------------------------------------------ setup: connections and resources */

typedef struct {
    int src, dst, chan, g, side;    /* side 0: sender tb, 1: receiver tb */
} conn_key;

static int cmp_conn_key(const void *a, const void *b)
{
    const conn_key *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    if (x->side != y->side)
        return x->side - y->side;
    return x->g - y->g;
}

static void build_connections(sim *S)
{
    conn_key *k = xcalloc((size_t)2 * S->ntb + 1, sizeof *k);
    int nk = 0;
    for (int g = 0; g < S->ntb; g++) {
        const tbstate *b = &S->tbs[g];
        if (b->tb->send >= 0)
            k[nk++] = (conn_key){b->rank, b->tb->send, b->tb->chan, g, 0};
        if (b->tb->recv >= 0)
            k[nk++] = (conn_key){b->tb->recv, b->rank, b->tb->chan, g, 1};
    }
    qsort(k, (size_t)nk, sizeof *k, cmp_conn_key);
    S->conns = xcalloc((size_t)nk + 1, sizeof *S->conns);
    S->nconn = 0;
    for (int i = 0; i < nk; i++) {
        if (i == 0 || k[i].src != k[i - 1].src || k[i].dst != k[i - 1].dst ||
            k[i].chan != k[i - 1].chan) {
            conn *c = &S->conns[S->nconn++];
            c->src = k[i].src;
            c->dst = k[i].dst;
            c->chan = k[i].chan;
            c->head = c->tail = -1;
            c->send_waiters = c->recv_waiters = -1;
        }
        conn *c = &S->conns[S->nconn - 1];
        if (k[i].side == 0) {
            S->tbs[k[i].g].send_conn = S->nconn - 1;
            if (c->nsenders++ == 0)
                c->sender = k[i].g;
        } else {
            S->tbs[k[i].g].recv_conn = S->nconn - 1;
        }
    }
    free(k);
}

static const char *topo_label(const topo *t)
{
    return t->name && t->name[0] ? t->name : "(unnamed)";
}

/* Route every connection that carries sends; 0 if all can be routed. */
static int route_connections(sim *S)
{
    const topo *t = S->t;
    S->lanes = cost_lanes_new(t);
    int nres = cost_nres(t);
    S->res_waiters = xmalloc(sizeof *S->res_waiters * (size_t)(nres > 0 ? nres : 1));
    for (int k = 0; k < nres; k++)
        S->res_waiters[k] = -1;
    S->r->nres = cost_nres(t);
    S->r->res_busy_us = xcalloc((size_t)S->r->nres + 1, sizeof *S->r->res_busy_us);
    S->r->res_bytes = xcalloc((size_t)S->r->nres + 1, sizeof *S->r->res_bytes);
    setup_log L = {S, 0, 0};
    cost_proto proto = COST_SIMPLE;         /* the reader accepts no other name */
    cost_proto_parse(S->p->proto, &proto);
    S->proto = proto;
    for (int i = 0; i < S->nconn; i++) {
        conn *c = &S->conns[i];
        if (c->nsenders == 0)
            continue;
        c->route = cost_proto_route(t, topo_route_of(t, c->src, c->dst), proto);
        c->nres = cost_route_res(t, &c->route, c->src, c->dst, c->res);
        int ok = (c->nres > 0 || c->route.kind == ROUTE_SELF) && c->route.bw_gbps > 0;
        if (!ok) {
            int g = c->sender;
            char msg[256];
            snprintf(msg, sizeof msg,
                     "no route from rank %d to rank %d (chan %d) in topology %s", c->src, c->dst,
                     c->chan, topo_label(t));
            setup_hazard(&L, HZ_DEVICE, c->src, S->tbs[g].tb->id, -1, msg);
            continue;
        }
        if (t->kind == TOPO_CHIP) {
            c->chip_diff = topo_chip_of(t, c->src) != topo_chip_of(t, c->dst);
            c->cluster_diff = topo_cluster_of(t, c->src) != topo_cluster_of(t, c->dst);
        }
    }
    if (L.total > L.added)
        hazard_add(S->hz, HZ_DEVICE, -1, -1, -1, "%d more connections have no route",
                   L.total - L.added);
    return L.total;
}

/* ------------------------------------------------------------ end of run reports */

static void describe_stuck(const tbstate *b, char *out, size_t n)
{
    const prog_step *st = &b->tb->steps[b->pc];
    const char *name = step_type_name(st->type);
    int at = snprintf(out, n, "rank %d tb %d step %d ", b->rank, b->tb->id, b->pc);
    if (at < 0 || (size_t)at >= n)
        return;
    out += at;
    n -= (size_t)at;
    switch (b->wait) {
    case W_DEP:
        snprintf(out, n, "(%s) waits for tb %d step %d", name, st->depid, st->deps);
        break;
    case W_RECV:
        snprintf(out, n, "(%s from rank %d chan %d) waits for a send that never comes", name,
                 b->tb->recv, b->tb->chan);
        break;
    case W_FIFO:
        snprintf(out, n, "(%s to rank %d chan %d) waits for a full FIFO (%d sends not received)",
                 name, b->tb->send, b->tb->chan, COST_FIFO_SLOTS);
        break;
    default:
        snprintf(out, n, "(%s) never ran", name);
        break;
    }
}

static void report_deadlock(sim *S)
{
    char msg[512] = "deadlock: ";
    size_t len = strlen(msg);
    int stuck = 0, first = -1;
    for (int g = 0; g < S->ntb; g++) {
        const tbstate *b = &S->tbs[g];
        if (b->pc >= b->tb->nsteps)
            continue;
        if (stuck < MAX_STUCK_LISTED) {
            char one[200];
            describe_stuck(b, one, sizeof one);
            snprintf(msg + len, sizeof msg - len, "%s%s", stuck ? "; " : "", one);
            len = strlen(msg);
            if (first < 0)
                first = g;
        }
        stuck++;
    }
    if (stuck > MAX_STUCK_LISTED)
        snprintf(msg + len, sizeof msg - len, "; ... (%d tbs stuck)", stuck);
    hazard_add(S->hz, HZ_DEADLOCK, -1, -1, -1, "%s", msg);
    hazard *h = &S->hz->v[S->hz->n - 1];
    h->rank = S->tbs[first].rank;
    h->tb = S->tbs[first].tb->id;
    h->step = S->tbs[first].pc;
}

/* Sends that no receive ever consumed (more sends than receives). */
static void report_leftovers(sim *S)
{
    for (int i = 0; i < S->nconn; i++) {
        const conn *c = &S->conns[i];
        if (c->head < 0)
            continue;
        int n = 0;
        for (int m = c->head; m >= 0; m = S->msgs[m].next)
            n++;
        const message *x = &S->msgs[c->head];
        hazard_add(S->hz, HZ_PAIRING, x->send_rank, x->send_tb, x->send_step,
                   "%d send%s to rank %d chan %d never received (more sends than receives)", n,
                   n == 1 ? "" : "s", c->dst, c->chan);
    }
}

/* ------------------------------------------------------------ run */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sim_free(sim *S)
{
    for (int g = 0; g < S->ntb; g++)
        free(S->tbs ? S->tbs[g].payload : NULL);
    if (S->msgs)
        for (int m = 0; m < S->nmsg; m++)
            free(S->msgs[m].payload);       /* NULL for released ones */
    for (int i = 0; i < S->ncache; i++)
        free(S->cache[i].p);
    if (S->pend)
        for (int r = 0; r < S->p->ngpu; r++)
            free(S->pend[r]);
    free(S->pend);
    free(S->pend_head);
    data_free(&S->d);
    evq_free(&S->q);
    cost_lanes_free(S->lanes);
    free(S->res_waiters);
    free(S->msgs);
    free(S->conns);
    free(S->tbs);
    free(S->tb_base);
    free(S->lay);
}

static int check_args(const prog *p, const topo *t, const sim_opts *o, const hazard_list *hz,
                      tc_err *err)
{
    if (!p || !t || !o || !hz)
        return tc_err_set(err, TC_INPUT,
                          "simulation needs a schedule, a topology, options and a hazard list");
    if (o->size_bytes <= 0)
        return tc_err_set(err, TC_INPUT, "size must be positive, got %lld bytes", o->size_bytes);
    if (p->nchunksperloop < 1)
        return tc_err_set(err, TC_INPUT, "nchunksperloop must be at least 1, got %d",
                          p->nchunksperloop);
    if (o->size_bytes % p->nchunksperloop != 0)
        return tc_err_set(err, TC_INPUT,
                          "size %lld bytes is not a multiple of nchunksperloop = %d",
                          o->size_bytes, p->nchunksperloop);
    if (p->ngpu > t->nranks)
        return tc_err_set(err, TC_INPUT, "the schedule has %d ranks but topology %s has %d",
                          p->ngpu, topo_label(t), t->nranks);
    return TC_OK;
}

static void init_tbs(sim *S)
{
    const prog *p = S->p;
    S->tb_base = xcalloc((size_t)p->ngpu + 1, sizeof *S->tb_base);
    S->lay = xcalloc((size_t)p->ngpu + 1, sizeof *S->lay);
    for (int r = 0; r < p->ngpu; r++) {
        S->tb_base[r + 1] = S->tb_base[r] + p->gpus[r].ntbs;
        S->lay[r] = layout_of(p, r, S->o->inplace);
    }
    S->ntb = S->tb_base[p->ngpu];
    S->tbs = xcalloc((size_t)S->ntb + 1, sizeof *S->tbs);
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            tbstate *b = &S->tbs[S->tb_base[r] + t];
            b->tb = &p->gpus[r].tbs[t];
            b->rank = r;
            b->tb_index = t;
            b->wait_next = b->dep_waiters = -1;
            b->send_conn = b->recv_conn = -1;
            b->msg = -1;
            b->step0 = S->nsteps;
            S->nsteps += b->tb->nsteps;
        }
}

static void init_pending(sim *S)
{
    int n = S->p->ngpu;
    S->pend = xcalloc((size_t)n + 1, sizeof *S->pend);
    S->pend_head = xcalloc((size_t)n + 1, sizeof *S->pend_head);
    for (int r = 0; r < n; r++) {
        S->pend[r] = xcalloc((size_t)S->lay[r].nslots + 1, sizeof **S->pend);
        S->pend_head[r] = -1;
    }
}

static void run_events(sim *S)
{
    for (int g = 0; g < S->ntb; g++)
        push_event(S, 0.0, EV_RUN, g);
    event e;
    while (evq_pop(&S->q, &e)) {
        switch (e.type) {
        case EV_RUN: tb_run(S, e.g, e.t); break;
        case EV_XFER_REQ: xfer_request(S, e.g, e.t); break;
        case EV_XFER_END: xfer_end(S, e.g, e.t); break;
        case EV_RECV_DONE: recv_done(S, e.g, e.t); break;
        case EV_LOCAL_END: local_end(S, e.g, e.t); break;
        case EV_ARRIVE: xfer_arrive(S, e.g, e.t); break;
        default: break;
        }
    }
}

void sim_result_free(sim_result *r)
{
    free(r->res_busy_us);
    free(r->res_bytes);
    r->res_busy_us = r->res_bytes = NULL;
    r->nres = 0;
}

int sim_run(const prog *p, const topo *t, const sim_opts *o, sim_result *r, hazard_list *hz,
            tc_err *err)
{
    memset(r, 0, sizeof *r);
    r->replicas_identical = -1;
    if (check_args(p, t, o, hz, err) != TC_OK)
        return TC_INPUT;
    sim S;
    memset(&S, 0, sizeof S);
    S.p = p;
    S.t = t;
    S.o = o;
    S.r = r;
    S.hz = hz;
    S.cb = o->size_bytes / p->nchunksperloop;
    S.msg_free = -1;
    S.data = o->data != 0;
    r->chunk_bytes = S.cb;
    int hz0 = hz->n;
    if (S.data && data_init(&S.d, p, o, S.cb, err) != TC_OK) {
        sim_free(&S);
        return TC_INPUT;
    }
    init_tbs(&S);
    if (validate_program(&S) > 0) {
        sim_free(&S);
        return TC_OK;
    }
    build_connections(&S);
    if (route_connections(&S) > 0) {
        sim_free(&S);
        return TC_OK;
    }
    check_dma(&S);
    if (S.data)
        init_pending(&S);

    double t0 = now_s();
    run_events(&S);
    r->wall_exec_s = now_s() - t0;

    r->completed = r->steps_run == S.nsteps;
    r->call_us = cost_call_us(t, S.proto);
    if (r->completed)
        r->time_us += r->call_us;
    if (!r->completed)
        report_deadlock(&S);
    else
        report_leftovers(&S);
    int data_ok = 1;
    if (S.data && r->completed) {
        data_ok = data_check(&S.d, p, r, hz);
        r->data_checked = 1;
    }
    r->verified = r->completed && hz->n == hz0 && data_ok;
    sim_free(&S);
    return TC_OK;
}
