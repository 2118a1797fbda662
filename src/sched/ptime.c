/* ptime.c — the time a program takes on a topology (contract in ptime.h).
 *
 * A discrete-event run without data.  Threadblocks are numbered in (rank,
 * tb) order; each is at one step and in one state: about to start it,
 * waiting to receive, waiting to send, or busy until an event of its own.
 * Anything that may unblock a threadblock (a step ending, a message
 * arriving, a FIFO slot freed) simply runs the threadblocks that wait on
 * it again at that instant; they check their condition afresh.  Events
 * are ordered by time; at one time, every completion and wake-up (in the
 * order they were made) before any transfer request, and requests oldest
 * first (by when each send first asked, then threadblock order), which is
 * the order in which they get their lanes. */
#include "ptime.h"
#include "tile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../model/cost.h"
#include "../model/variant.h"
#include "../util/heap.h"
#include "../util/mem.h"

enum { T_RUN, T_REQUEST, T_ARRIVE, T_DONE, T_SENT, T_LANDED };
enum { S_START, S_RECV, S_SEND, S_BUSY };

typedef struct {
    double t;
    uint64_t order;     /* wake-ups and completions: a sequence number;
                           requests: 1 << 62 plus the threadblock */
    double first;       /* requests: when the send first asked */
    int kind, g;
} pev;

/* At one instant, completions and wake-ups in the order made, then
 * requests, the oldest first (ties: the lower threadblock). */
static int pev_less(const void *ctx, const pev *a, const pev *b)
{
    (void)ctx;
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind == T_REQUEST && b->kind == T_REQUEST && a->first != b->first)
        return a->first < b->first;
    return a->order < b->order;
}

TC_HEAP_DEFINE(pq, pev, const void *, pev_less)

typedef struct {
    int src, dst, chan;
    int nres, res[2];
    topo_route route;
    int routed;
    int queued;                 /* messages sent and not yet received */
    int ends[2];                /* threadblocks receiving [0] and sending [1] on it: the
                                   first, in threadblock order, of a list in P->next_end */
    int head;                   /* ring index of the oldest */
    int head_taken;             /* a reducing receive holds the oldest until it is
                                   done: another receiver on the connection (a shared
                                   end) waits for the next, not the same one */
    double arrive[COST_FIFO_SLOTS]; /* its messages' arrival, INFINITY = on the way */
} pconn;

typedef struct {
    const prog_tb *tb;
    int rank, pc, state;
    int out, in;                /* its send and receive connections, -1 */
    int slot;                   /* ring slot of the message it is sending */
    int wait_next;              /* next in its resource's waiters ("ready") */
    int dep_waiters;            /* threadblocks of its rank waiting on its progress */
    int dep_next;               /* next in the list it waits in; -2 = in none */
    double first;               /* when its current send first asked, -1 */
    double ready;               /* when its current step began (dependency met) */
    int chain_res;              /* the resource whose freed waiters its request is one of, -1 */
} ptb;

/* A freed resource's waiters, oldest first, asking in turn (freed). */
typedef struct {
    double first;               /* when its send first asked */
    int g;
} pwaiter;

typedef struct {
    pwaiter *w;
    int n, cap, pos;
} pchain;

typedef struct {
    const prog *p;
    const topo *t;
    double chunk;
    int ntb;
    ptb *tbs;
    int *first;                 /* [ngpu + 1]: the first threadblock of each rank */
    int nconn;
    pconn *conns;
    cost_lanes *lanes;
    cost_proto proto;           /* the program's protocol */
    int *res_waiters;           /* [nres]: sends waiting for it, -1 */
    pchain *chains;             /* [nres] */
    int nres;
    int *next_end;              /* [2 * ntb]: the next threadblock at the same end of
                                   the same connection ([2g] receiving, [2g+1] sending), -1 */
    int rank_wake;              /* two threadblocks share a connection's end (a hazard
                                   the checker reports, which runs all the same): after
                                   every step each waiting threadblock of the rank runs
                                   again, in threadblock order, as the order in which
                                   they take its messages then depends on it */
    pev *q;
    int nq, cq;
    uint64_t seq;
    long long steps_left;
    double end;
} ptimer;

static void post(ptimer *P, double t, int kind, int g)
{
    P->q = xgrow(P->q, &P->cq, P->nq + 1, sizeof *P->q);
    uint64_t order = kind == T_REQUEST ? (1ULL << 62) | (uint64_t)g : P->seq++;
    double first = kind == T_REQUEST && P->tbs[g].first >= 0 ? P->tbs[g].first : t;
    pq_push(P->q, &P->nq, (pev){t, order, first, kind, g}, NULL);
}

/* Wake every threadblock that may be waiting on connection c (its
 * receiving end, then its sending end, each in threadblock order): they
 * run again now.  Threadblocks not waiting ignore the wake-up. */
static void wake_conn(ptimer *P, const pconn *c, double now)
{
    for (int g = c->ends[0]; g >= 0; g = P->next_end[2 * g])
        if (P->tbs[g].state == S_RECV)
            post(P, now, T_RUN, g);
    for (int g = c->ends[1]; g >= 0; g = P->next_end[2 * g + 1])
        if (P->tbs[g].state == S_SEND)
            post(P, now, T_RUN, g);
}

static void wake_rank(ptimer *P, int rank, double now)
{
    for (int g = P->first[rank]; g < P->first[rank + 1]; g++)
        if (P->tbs[g].state == S_START && P->tbs[g].pc < P->tbs[g].tb->nsteps)
            post(P, now, T_RUN, g);
}

/* b has stepped on: the threadblocks whose dependency on it is now met run
 * again now (the others stay listed). */
static void wake_deps(ptimer *P, ptb *b, double now)
{
    if (P->rank_wake) {
        wake_rank(P, b->rank, now);
        return;
    }
    int *link = &b->dep_waiters;
    while (*link >= 0) {
        int w = *link;
        ptb *wb = &P->tbs[w];
        if (b->pc > wb->tb->steps[wb->pc].deps) {
            *link = wb->dep_next;
            wb->dep_next = -2;
            post(P, now, T_RUN, w);
        } else {
            link = &wb->dep_next;
        }
    }
}

static void step_over(ptimer *P, ptb *b, double now)
{
    b->pc++;
    b->state = S_START;
    P->steps_left--;
    if (now > P->end)
        P->end = now;
    wake_deps(P, b, now);
}

static int dep_met(const ptimer *P, const ptb *b, const prog_step *st)
{
    return st->depid < 0 || P->tbs[P->first[b->rank] + st->depid].pc > st->deps;
}

/* The receive half of the current step is over: the slot is free again. */
static void received(ptimer *P, ptb *b, double now)
{
    pconn *c = &P->conns[b->in];
    c->head = (c->head + 1) % COST_FIFO_SLOTS;
    c->queued--;
    c->head_taken = 0;
    wake_conn(P, c, now);
    if (step_sends(b->tb->steps[b->pc].type))
        b->state = S_SEND;
    else
        step_over(P, b, now);
}

/* Advance threadblock g as far as it can go at `now`. */
static void advance(ptimer *P, int g, double now)
{
    ptb *b = &P->tbs[g];
    while (b->pc < b->tb->nsteps && b->state != S_BUSY) {
        const prog_step *st = &b->tb->steps[b->pc];
        double bytes = st->cnt * P->chunk;
        if (b->state == S_START) {
            if (!dep_met(P, b, st)) {
                if (b->dep_next == -2 && !P->rank_wake) {   /* wait on the tb it depends on */
                    ptb *d = &P->tbs[P->first[b->rank] + st->depid];
                    b->dep_next = d->dep_waiters;
                    d->dep_waiters = g;
                }
                return;
            }
            b->ready = now;
            if (st->type == ST_NOP) {
                step_over(P, b, now);
            } else if (st->type == ST_CPY || st->type == ST_RE) {
                b->state = S_BUSY;
                double d = st->type == ST_CPY ? cost_copy_us(P->t, bytes)
                                              : cost_reduce_us(P->t, bytes);
                post(P, now + d, T_DONE, g);
            } else {
                b->state = step_receives(st->type) ? S_RECV : S_SEND;
            }
        } else if (b->state == S_RECV) {
            pconn *c = &P->conns[b->in];
            if (c->queued == 0 || c->head_taken || !(c->arrive[c->head] <= now))
                return;
            if (step_reduces(st->type)) {   /* reduced as it landed */
                b->state = S_BUSY;
                c->head_taken = 1;
                post(P, cost_reduce_end_us(P->t, P->proto, c->route.bw_gbps, bytes,
                                           c->arrive[c->head], b->ready),
                     T_DONE, g);
            } else {
                received(P, b, now);
            }
        } else {
            pconn *c = &P->conns[b->out];
            if (c->queued >= COST_FIFO_SLOTS)
                return;
            b->slot = (c->head + c->queued++) % COST_FIFO_SLOTS;
            c->arrive[b->slot] = INFINITY;
            b->state = S_BUSY;
            post(P, now, T_REQUEST, g);
        }
    }
}

/* Waiter a before b when both ask at one instant: the event queue's order
 * for requests (pev_less), by when each first asked, then threadblock. */
static int chain_cmp(const void *pa, const void *pb)
{
    const pwaiter *a = pa, *b = pb;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

/* Post the next waiter of resource r's chain, or, once r has no lane free
 * at `now`, settle the rest: each would ask after r filled up (its turn is
 * after the one that filled it), find r busy and wait again on its first
 * busy resource (cost_lanes_busy): r if r is its first, or its first if
 * that is busy now (lanes only fill up within an instant), which is done
 * here without asking; one whose first resource is free now asks as
 * before, as that one may fill up before its turn. */
static void chain_next(ptimer *P, int r, double now)
{
    pchain *ch = &P->chains[r];
    if (ch->pos >= ch->n)
        return;
    double f;
    cost_lanes_pick(P->lanes, r, &f);
    if (!(f > now)) {
        int w = ch->w[ch->pos++].g;
        P->tbs[w].chain_res = r;
        post(P, now, T_REQUEST, w);
        return;
    }
    for (; ch->pos < ch->n; ch->pos++) {
        int w = ch->w[ch->pos].g, r0 = P->conns[P->tbs[w].out].res[0];
        cost_lanes_pick(P->lanes, r0, &f);
        if (r0 == r || f > now) {   /* r0 busy now stays busy this instant */
            P->tbs[w].wait_next = P->res_waiters[r0];
            P->res_waiters[r0] = w;
        } else {
            post(P, now, T_REQUEST, w);
        }
    }
}

/* Connection c's resources are free again: the sends waiting for them ask
 * again now, each resource's oldest first, one after another (chain_next).
 * Every free happens before the instant's requests are served (they come
 * after every other event at an instant, and a request's own events are
 * later), so the waiters are all known here. */
static void freed(ptimer *P, const pconn *c, double now)
{
    for (int k = 0; k < c->nres; k++) {
        int r = c->res[k];
        pchain *ch = &P->chains[r];
        if (ch->pos < ch->n)        /* freed twice at one instant: already asking */
            continue;
        ch->n = ch->pos = 0;
        for (int w = P->res_waiters[r]; w >= 0; w = P->tbs[w].wait_next) {
            ch->w = xgrow(ch->w, &ch->cap, ch->n + 1, sizeof *ch->w);
            ch->w[ch->n++] = (pwaiter){P->tbs[w].first, w};
        }
        P->res_waiters[r] = -1;
        if (ch->n > 1)
            qsort(ch->w, (size_t)ch->n, sizeof *ch->w, chain_cmp);
        chain_next(P, r, now);
    }
}

/* A send asks for its hop's resources: it starts when every one has a
 * free lane and holds them to its end (or waits, model/cost's
 * cost_must_wait). */
static void ask(ptimer *P, int g, double now);

static void request(ptimer *P, int g, double now)
{
    int r = P->tbs[g].chain_res;
    P->tbs[g].chain_res = -1;
    ask(P, g, now);
    if (r >= 0)
        chain_next(P, r, now);
}

static void ask(ptimer *P, int g, double now)
{
    ptb *b = &P->tbs[g];
    pconn *c = &P->conns[b->out];
    int lane[2] = {-1, -1};
    double start = cost_lanes_start(P->lanes, c->res, c->nres, now, lane);
    if (cost_must_wait(P->t, start, now)) {
        if (b->first < 0)
            b->first = now;
        int r = cost_lanes_busy(P->lanes, c->res, c->nres, now);
        b->wait_next = P->res_waiters[r];
        P->res_waiters[r] = g;
        return;
    }
    b->first = -1;
    double bytes = b->tb->steps[b->pc].cnt * P->chunk;
    double end = start + cost_hop_us(&c->route, bytes);
    if (!cost_delayed(P->t, &c->route)) {
        cost_lanes_hold(P->lanes, c->res, lane, c->nres, end);
        post(P, end, T_ARRIVE, g);
        return;
    }
    /* alpha is latency: the sender is done when the bytes have left, the
     * receiver sees them alpha later */
    double sent = start + cost_hold_us(P->t, &c->route, bytes);
    cost_lanes_hold(P->lanes, c->res, lane, c->nres, sent);
    c->arrive[b->slot] = end;
    post(P, sent, T_SENT, g);
    post(P, end, T_LANDED, g);
}

/* Where alpha is a delay: threadblock g's send has left (T_SENT), or its
 * data has reached the receiver (T_LANDED, g's connection). */
static void sent(ptimer *P, int g, double now)
{
    freed(P, &P->conns[P->tbs[g].out], now);
    step_over(P, &P->tbs[g], now);
    advance(P, g, now);
}

static void arrive(ptimer *P, int g, double now)
{
    ptb *b = &P->tbs[g];
    pconn *c = &P->conns[b->out];
    c->arrive[b->slot] = now;
    freed(P, c, now);
    wake_conn(P, c, now);
    step_over(P, b, now);
    advance(P, g, now);
}

/* A local copy or reduction, or the reduction of a receive, is over. */
static void done(ptimer *P, int g, double now)
{
    ptb *b = &P->tbs[g];
    const prog_step *st = &b->tb->steps[b->pc];
    if (st->type == ST_CPY || st->type == ST_RE)
        step_over(P, b, now);
    else
        received(P, b, now);
    advance(P, g, now);
}

static int conn_cmp(const void *pa, const void *pb)
{
    const pconn *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    return (a->chan > b->chan) - (a->chan < b->chan);
}

/* Every connection (chan, src -> dst) some threadblock uses, sorted and
 * without repeats. */
static void list_conns(ptimer *P)
{
    const prog *p = P->p;
    for (int r = 0; r < p->ngpu; r++)
        for (int i = 0; i < p->gpus[r].ntbs; i++) {
            const prog_tb *tb = &p->gpus[r].tbs[i];
            if (tb->send >= 0)
                P->conns[P->nconn++] = (pconn){.src = r, .dst = tb->send, .chan = tb->chan};
            if (tb->recv >= 0)
                P->conns[P->nconn++] = (pconn){.src = tb->recv, .dst = r, .chan = tb->chan};
        }
    qsort(P->conns, (size_t)P->nconn, sizeof *P->conns, conn_cmp);
    int n = 0;
    for (int i = 0; i < P->nconn; i++)
        if (n == 0 || conn_cmp(&P->conns[n - 1], &P->conns[i]) != 0)
            P->conns[n++] = P->conns[i];
    P->nconn = n;
}

static int conn_of(const ptimer *P, int src, int dst, int chan)
{
    pconn key = {.src = src, .dst = dst, .chan = chan};
    const pconn *c = bsearch(&key, P->conns, (size_t)P->nconn, sizeof *P->conns, conn_cmp);
    return (int)(c - P->conns);
}

static int setup(ptimer *P, tc_err *err)
{
    const prog *p = P->p;
    P->first = xcalloc((size_t)p->ngpu + 1, sizeof *P->first);
    for (int r = 0; r < p->ngpu; r++)
        P->first[r + 1] = P->first[r] + p->gpus[r].ntbs;
    P->ntb = P->first[p->ngpu];
    P->tbs = xcalloc((size_t)P->ntb + 1, sizeof *P->tbs);
    for (int r = 0; r < p->ngpu; r++)
        for (int i = 0; i < p->gpus[r].ntbs; i++)
            if (p->gpus[r].tbs[i].send >= p->ngpu || p->gpus[r].tbs[i].recv >= p->ngpu)
                return tc_err_set(err, TC_INPUT, "rank %d tb %d: peer outside the program", r,
                                  p->gpus[r].tbs[i].id);
    P->conns = xcalloc((size_t)2 * P->ntb + 1, sizeof *P->conns);
    list_conns(P);
    for (int r = 0; r < p->ngpu; r++)
        for (int i = 0; i < p->gpus[r].ntbs; i++) {
            const prog_tb *tb = &p->gpus[r].tbs[i];
            ptb *b = &P->tbs[P->first[r] + i];
            b->tb = tb;
            b->rank = r;
            b->out = b->in = -1;
            b->first = -1;
            b->dep_waiters = -1;
            b->dep_next = -2;
            b->chain_res = -1;
            if (tb->send >= 0)
                b->out = conn_of(P, r, tb->send, tb->chan);
            if (tb->recv >= 0)
                b->in = conn_of(P, tb->recv, r, tb->chan);
            for (int s = 0; s < tb->nsteps; s++) {
                const prog_step *st = &tb->steps[s];
                if (st->depid >= p->gpus[r].ntbs ||
                    (st->depid >= 0 && st->deps >= p->gpus[r].tbs[st->depid].nsteps))
                    return tc_err_set(err, TC_INPUT,
                                      "rank %d tb %d step %d: depends on a step that does "
                                      "not exist", r, tb->id, s);
                if ((step_sends(st->type) && b->out < 0) ||
                    (step_receives(st->type) && b->in < 0))
                    return tc_err_set(err, TC_INPUT, "rank %d tb %d step %d: %s without a peer",
                                      r, tb->id, s, step_type_name(st->type));
                P->steps_left++;
            }
        }
    /* each connection's two ends, in threadblock order (built backwards) */
    P->next_end = xmalloc(sizeof *P->next_end * (size_t)(2 * P->ntb + 1));
    for (int i = 0; i < P->nconn; i++)
        P->conns[i].ends[0] = P->conns[i].ends[1] = -1;
    for (int g = P->ntb - 1; g >= 0; g--) {
        ptb *b = &P->tbs[g];
        P->next_end[2 * g] = P->next_end[2 * g + 1] = -1;
        if (b->in >= 0) {
            P->next_end[2 * g] = P->conns[b->in].ends[0];
            P->conns[b->in].ends[0] = g;
            P->rank_wake |= P->next_end[2 * g] >= 0;
        }
        if (b->out >= 0) {
            P->next_end[2 * g + 1] = P->conns[b->out].ends[1];
            P->conns[b->out].ends[1] = g;
            P->rank_wake |= P->next_end[2 * g + 1] >= 0;
        }
    }
    P->lanes = cost_lanes_new(P->t);
    int nres = cost_nres(P->t);
    P->res_waiters = xmalloc(sizeof *P->res_waiters * (size_t)(nres > 0 ? nres : 1));
    for (int k = 0; k < nres; k++)
        P->res_waiters[k] = -1;
    P->chains = xcalloc((size_t)(nres > 0 ? nres : 1), sizeof *P->chains);
    P->nres = nres;
    cost_proto proto = COST_SIMPLE;
    cost_proto_parse(p->proto, &proto);
    P->proto = proto;
    for (int i = 0; i < P->nconn; i++) {
        pconn *c = &P->conns[i];
        c->route = cost_proto_route(P->t, topo_route_of(P->t, c->src, c->dst), proto);
        c->nres = cost_route_res(P->t, &c->route, c->src, c->dst, c->res);
        if ((c->nres == 0 && c->route.kind != ROUTE_SELF) || !(c->route.bw_gbps > 0))
            return tc_err_set(err, TC_INPUT, "no route from rank %d to rank %d in the topology",
                              c->src, c->dst);
    }
    return TC_OK;
}

int ptime_run(const prog *p, const topo *t, long long size_bytes, double *us, tc_err *err)
{
    if (!p || !t || p->nchunksperloop <= 0 || size_bytes <= 0 || p->ngpu > t->nranks)
        return tc_err_set(err, TC_INPUT, "cannot time this program: no topology, no size, "
                          "or more ranks than the topology has");
    ptimer P = {0};
    P.p = p;
    P.t = t;
    P.chunk = (double)(size_bytes / p->nchunksperloop);
    int rc = setup(&P, err);
    if (rc == TC_OK) {
        for (int g = 0; g < P.ntb; g++)
            post(&P, 0.0, T_RUN, g);
        while (P.nq > 0) {
            pev e = pq_pop(P.q, &P.nq, NULL);
            switch (e.kind) {
            case T_RUN: advance(&P, e.g, e.t); break;
            case T_REQUEST: request(&P, e.g, e.t); break;
            case T_ARRIVE: arrive(&P, e.g, e.t); break;
            case T_SENT: sent(&P, e.g, e.t); break;
            case T_LANDED: wake_conn(&P, &P.conns[P.tbs[e.g].out], e.t); break;
            default: done(&P, e.g, e.t); break;
            }
        }
        if (P.steps_left > 0)
            rc = tc_err_set(err, TC_INPUT, "the program cannot finish: %lld steps never run",
                            P.steps_left);
        else
            *us = P.end + cost_call_us(t, P.proto);
    }
    cost_lanes_free(P.lanes);
    for (int k = 0; k < P.nres; k++)
        free(P.chains ? P.chains[k].w : NULL);
    free(P.chains);
    free(P.res_waiters);
    free(P.next_end);
    free(P.q);
    free(P.conns);
    free(P.tbs);
    free(P.first);
    return rc;
}

int ptime_run_as(const prog *p, const topo *t, long long size_bytes, int tiles, double *us,
                 tc_err *err)
{
    if (tiles < 0)
        tiles = t->kind == TOPO_GPU && VARIANT_DEFAULT_TILES;
    if (!tiles || !tile_needed(p, size_bytes))
        return ptime_run(p, t, size_bytes, us, err);
    prog *tp = tile_prog(p, size_bytes, NULL, err);
    if (!tp)
        return TC_INPUT;
    int rc = ptime_run(tp, t, size_bytes, us, err);
    prog_free(tp);
    return rc;
}

int ptime_lower_us(const prog *p, const topo *t, long long size_bytes, int tiles, double *us,
                   tc_err *err)
{
    if (!p || !t || p->nchunksperloop <= 0 || size_bytes <= 0 || p->ngpu > t->nranks)
        return tc_err_set(err, TC_INPUT, "cannot time this program: no topology, no size, "
                          "or more ranks than the topology has");
    if (tiles < 0)
        tiles = t->kind == TOPO_GPU && VARIANT_DEFAULT_TILES;
    int passes = 1, mc = 1 << 30;   /* once: every step one operation */
    if (tiles && tile_needed(p, size_bytes) &&
        tile_shape(p, size_bytes, &passes, &mc, err) != TC_OK)
        return TC_INPUT;
    cost_proto proto = COST_SIMPLE;
    cost_proto_parse(p->proto, &proto);
    int nres = cost_nres(t);
    double *held = xcalloc((size_t)nres + 1, sizeof *held);   /* per resource */
    double chunk = (double)(size_bytes / p->nchunksperloop), most = 0;
    int rc = TC_OK;
    for (int r = 0; r < p->ngpu && rc == TC_OK; r++)
        for (int i = 0; i < p->gpus[r].ntbs && rc == TC_OK; i++) {
            const prog_tb *tb = &p->gpus[r].tbs[i];
            topo_route rt = {0};
            int res[2], n = 0;
            if (tb->send >= 0 && tb->send < p->ngpu) {
                rt = cost_proto_route(t, topo_route_of(t, r, tb->send), proto);
                n = cost_route_res(t, &rt, r, tb->send, res);
            }
            double busy = 0;
            for (int s = 0; s < tb->nsteps; s++) {
                const prog_step *st = &tb->steps[s];
                double bytes = st->cnt * chunk;   /* over every pass */
                if (st->type == ST_CPY)
                    busy += cost_copy_us(t, bytes);
                else if (st->type == ST_RE || step_reduces(st->type))
                    busy += cost_reduce_us(t, bytes);
                if (!step_sends(st->type))
                    continue;
                if ((n == 0 && rt.kind != ROUTE_SELF) || !(rt.bw_gbps > 0)) {
                    rc = tc_err_set(err, TC_INPUT, "no route from rank %d to rank %d in the "
                                    "topology", r, tb->send);
                    break;
                }
                /* the hold is alpha (unless a delay) plus bytes over the
                 * bandwidth: per operation, and the bytes once; it holds
                 * its threadblock and a lane of each of its resources */
                double ops = (double)tile_step_ops(st, passes, mc) * passes;
                double h0 = cost_hold_us(t, &rt, 0);
                double h = ops * h0 + (cost_hold_us(t, &rt, bytes) - h0);
                busy += h;
                for (int k = 0; k < n; k++)
                    held[res[k]] += h;
            }
            if (busy > most)
                most = busy;
        }
    for (int k = 0; k < nres; k++)
        if (cost_res_lanes(t, k) > 0 && held[k] / cost_res_lanes(t, k) > most)
            most = held[k] / cost_res_lanes(t, k);
    free(held);
    if (rc == TC_OK)
        *us = most + cost_call_us(t, proto);
    return rc;
}
