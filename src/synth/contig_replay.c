/* contig_replay.c — stage 3's replay of the executor: a partition timed the
 * way taccl-run will run it (contig_replay_part), by an event loop of
 * requests and arrivals in time order.
 *
 * Every grouping stage 3 keeps is judged by these times and the output
 * carries them, so they must be the executor's own rules, stated below;
 * the fixed-order model the MILP uses is contig_asap() (contig_graph.c). */
#include "contig_int.h"

#include <stdlib.h>
#include <string.h>
#include "../util/heap.h"
#include "../util/mem.h"
#include "../model/cost.h"

/* A switch in port, a NIC shared by several ranks: the executor serves
 * such a resource by when a transfer asks for it, not in an order the
 * schedule could impose (dependencies only reach within one rank).  What the lowering does fix is each rank's order on its own out
 * port or NIC (a chain of dependencies) and on each connection.  So a
 * transfer asks once its data is ready and the previous transfer of its
 * sender through the same out slot has freed it (ended, or sent its bytes
 * where alpha is a delay: contig_hold_us); requests are served in time
 * order, ties by the lower sender rank (the executor's rule), each taking
 * its slots when they are free.  With the fixed order kept everywhere this
 * gives contig_asap()'s times; when grouping moves times so that two senders'
 * requests to a shared slot swap, it gives the order the executor will
 * actually see.  contig_replay_part() computes that. */

typedef struct {
    double r;
    int src, T;
} request;

static int req_before(const void *ctx, const request *a, const request *b)
{
    (void)ctx;
    if (a->r != b->r)
        return a->r < b->r;
    if (a->src != b->src)
        return a->src < b->src;
    return a->T < b->T;
}

TC_HEAP_DEFINE(req, request, const void *, req_before)


/* Edges "v asks after u": kind E_RES after u's end (the chain), E_DATA
 * after u's ready (its data).  Chain: transfers of one sender through one
 * out slot, in the fixed order (= transfer numbering). */
static int replay_edges(const ctx *c, const part *p, edge **out, int *nout, tc_err *err)
{
    int n = c->n, ntr = p->ntr;
    int cap = 2 * ntr + c->dep0[n] + 1, ne = 0;
    edge *e = xmalloc((size_t)cap * sizeof *e);
    int *last = xmalloc((size_t)(c->nchains > 0 ? c->nchains : 1) * sizeof *last);
    for (int q = 0; q < c->nchains; q++)
        last[q] = -1;
    for (int T = 0; T < ntr; T++) {
        if (c->a->sends[p->first[T]].lane > 0)
            continue;   /* a lane of its own: not chained (algo.h) */
        int *l = &last[c->chain[p->first[T]]];
        if (*l >= 0)
            e[ne++] = (edge){*l, T, E_RES};
        *l = T;
    }
    free(last);
    for (int i = 0; i < n; i++)
        for (int d = c->dep0[i]; d < c->dep0[i + 1]; d++) {
            int u = p->tr[c->dep[d]], v = p->tr[i];
            if (u == v) {
                free(e);
                return contig_cycle_error(c, i, err);
            }
            e[ne++] = (edge){u, v, E_DATA};
        }
    *out = e;
    *nout = ne;
    return TC_OK;
}

/* For each transfer the previous one on its (src, dst) pair in the fixed
 * order (= transfer numbering), -1 for the first. */
static int *pair_prev(const ctx *c, const part *p)
{
    int ntr = p->ntr;
    int *pp = xmalloc((size_t)(ntr > 0 ? ntr : 1) * sizeof *pp);
    int *last = xmalloc((size_t)(c->npairs > 0 ? c->npairs : 1) * sizeof *last);
    for (int q = 0; q < c->npairs; q++)
        last[q] = -1;
    for (int T = 0; T < ntr; T++) {
        int *l = &last[c->pair[p->first[T]]];
        pp[T] = *l;
        *l = T;
    }
    free(last);
    return pp;
}

/* The sends of each transfer (CSR: m0[T] .. m0[T+1] of the result), in
 * send order.  m0 has room for ntr + 1. */
static int *members_of(const ctx *c, const part *p, int *m0)
{
    int *mem = xmalloc((size_t)(c->n > 0 ? c->n : 1) * sizeof *mem);
    for (int i = 0; i < c->n; i++)
        m0[p->tr[i] + 1]++;
    for (int T = 0; T < p->ntr; T++)
        m0[T + 1] += m0[T];
    int *fill = xmalloc(((size_t)p->ntr + 1) * sizeof *fill);
    memcpy(fill, m0, ((size_t)p->ntr + 1) * sizeof *fill);
    for (int i = 0; i < c->n; i++)
        mem[fill[p->tr[i]]++] = i;
    free(fill);
    return mem;
}

/* Times of partition p as the executor will produce them (above); fills
 * what contig_asap() fills except the edges.  TC_INPUT on a cycle. */
int contig_replay_part(const ctx *c, const part *p, sched *S, tc_err *err)
{
    int ntr = p->ntr, sz = ntr > 0 ? ntr : 1;
    memset(S, 0, sizeof *S);
    edge *e = NULL;
    int ne = 0, rc = replay_edges(c, p, &e, &ne, err);
    if (rc != TC_OK)
        return rc;
    int *o0 = xcalloc((size_t)sz + 1, sizeof *o0);
    int *oe = xmalloc((size_t)(ne > 0 ? ne : 1) * sizeof *oe);
    int *need = xcalloc((size_t)sz, sizeof *need);
    for (int x = 0; x < ne; x++) {
        o0[e[x].from + 1]++;
        need[e[x].to]++;
    }
    for (int T = 0; T < ntr; T++)
        o0[T + 1] += o0[T];
    int *fill = xmalloc((size_t)sz * sizeof *fill);
    memcpy(fill, o0, (size_t)ntr * sizeof *fill);
    for (int x = 0; x < ne; x++)
        oe[fill[e[x].from]++] = x;
    free(fill);
    double *rq = xcalloc((size_t)sz, sizeof *rq);
    double *slot_free = xcalloc((size_t)(c->nslots > 0 ? c->nslots : 1), sizeof *slot_free);
    /* one receiving tb per pair takes its transfers in order, and puts each
     * in place (place[]) before it takes the next */
    int *pprev = pair_prev(c, p);
    double *got = xcalloc((size_t)sz, sizeof *got);
    double *freed = xcalloc((size_t)sz, sizeof *freed);   /* its slots and sender free */
    /* reductions into one (rank, chunk) run one after another */
    double *rfree = xcalloc((size_t)(c->nrslots > 0 ? c->nrslots : 1), sizeof *rfree);
    int *m0 = xcalloc((size_t)sz + 1, sizeof *m0), *mem = members_of(c, p, m0);
    request *h = xmalloc((size_t)sz * sizeof *h);
    S->start = xcalloc((size_t)sz, sizeof *S->start);
    S->end = xmalloc((size_t)sz * sizeof *S->end);
    S->ready = xmalloc((size_t)sz * sizeof *S->ready);
    S->order = xmalloc((size_t)sz * sizeof *S->order);
    int hn = 0, done = 0;
    for (int T = 0; T < ntr; T++) {
        rq[T] = p->pre[T];
        if (need[T] == 0)
            req_push(h, &hn, (request){rq[T], c->a->sends[p->first[T]].src, T}, NULL);
    }
    /* Two kinds of events in time order: a transfer's request (it takes its
     * slots, and the transfers chained after it on its sender's out slot
     * may ask once it ends), and its arrival (its reductions into a chunk
     * run in arrival order, and the sends waiting on its data may ask once
     * they are done).  At one instant arrivals come first, as the executor
     * serves requests after every completion at that instant. */
    request *arr = xmalloc((size_t)sz * sizeof *arr);
    int an = 0;
    unsigned char *arrived = xcalloc((size_t)sz, 1), *asked = xcalloc((size_t)sz, 1);
    int *waiter = xmalloc((size_t)sz * sizeof *waiter);
    int *sender_waiter = xmalloc((size_t)sz * sizeof *sender_waiter);
    for (int T = 0; T < ntr; T++)
        waiter[T] = sender_waiter[T] = -1;
    while (hn > 0 || an > 0) {
        int is_req = an == 0 || (hn > 0 && h[0].r < arr[0].r);
        request q = is_req ? req_pop(h, &hn, NULL) : req_pop(arr, &an, NULL);
        int T = q.T, f = p->first[T];
        if (is_req) {
            double st = q.r;
            for (int k = 0; k < 2; k++) {
                int sl = c->slot[2 * f + k];
                if (sl >= 0 && slot_free[sl] > st)
                    st = slot_free[sl];
            }
            S->start[T] = st;
            S->end[T] = st + cost_hop_us(&c->rt[f], p->k[T] * c->cb);
            freed[T] = st + contig_hold_us(c, p, T);
            for (int k = 0; k < 2; k++) {
                int sl = c->slot[2 * f + k];
                if (sl >= 0)
                    slot_free[sl] = freed[T];
            }
            req_push(arr, &an, (request){S->end[T], c->a->sends[f].dst, T}, NULL);
            asked[T] = 1;
            if (sender_waiter[T] >= 0) {
                int v = sender_waiter[T];
                if (freed[T] + p->presum[v] > rq[v])
                    rq[v] = freed[T] + p->presum[v];
                req_push(h, &hn, (request){rq[v], c->a->sends[p->first[v]].src, v}, NULL);
            }
        } else {
            /* the pair's receiving tb takes its transfers in order, each once
             * it has reduced and put in place the one before (a transfer on
             * another lane may end first: it waits for its predecessor) */
            int u = pprev[T];
            if (u >= 0 && !arrived[u]) {
                waiter[u] = T;
                continue;
            }
            got[T] = S->end[T];
            if (u >= 0 && S->ready[u] + p->place[u] > got[T])
                got[T] = S->ready[u] + p->place[u];
            arrived[T] = 1;
            double rs = got[T];
            for (int x = m0[T]; x < m0[T + 1]; x++)
                if (c->rslot[mem[x]] >= 0 && rfree[c->rslot[mem[x]]] > rs)
                    rs = rfree[c->rslot[mem[x]]];
            S->ready[T] = rs + p->redc[T];
            for (int x = m0[T]; x < m0[T + 1]; x++)
                if (c->rslot[mem[x]] >= 0)
                    rfree[c->rslot[mem[x]]] = S->ready[T];
            S->order[done++] = T;
            if (waiter[T] >= 0) {
                int w = waiter[T];
                double at = S->end[w];
                if (S->ready[T] + p->place[T] > at)
                    at = S->ready[T] + p->place[T];
                req_push(arr, &an, (request){at, c->a->sends[p->first[w]].dst, w}, NULL);
            }
        }
        for (int x = o0[T]; x < o0[T + 1]; x++) {
            const edge *ed = &e[oe[x]];
            if ((ed->kind == E_RES) != is_req)
                continue;
            double t = ed->kind == E_RES ? freed[T] : S->ready[T] + p->pre[ed->to];
            if (t > rq[ed->to])
                rq[ed->to] = t;
            if (--need[ed->to] == 0) {
                /* the sending tb copies for it only after its previous
                 * transfer on the pair has ended */
                int v = ed->to, u = pprev[v];
                if (u >= 0 && !asked[u]) {
                    sender_waiter[u] = v;   /* asks once u has asked */
                    continue;
                }
                if (u >= 0 && freed[u] + p->presum[v] > rq[v])
                    rq[v] = freed[u] + p->presum[v];
                req_push(h, &hn, (request){rq[v], c->a->sends[p->first[v]].src, v}, NULL);
            }
        }
    }
    free(arr);
    free(arrived);
    free(asked);
    free(waiter);
    free(sender_waiter);
    free(h);
    free(slot_free);
    free(rq);
    free(pprev);
    free(got);
    free(freed);
    free(rfree);
    free(m0);
    free(mem);
    free(need);
    free(o0);
    free(oe);
    free(e);
    if (done < ntr) {
        unsigned char *seen = xcalloc((size_t)sz, 1);
        for (int z = 0; z < done; z++)
            seen[S->order[z]] = 1;
        int bad = 0;
        while (seen[bad])
            bad++;
        free(seen);
        int f = p->first[bad];
        contig_sched_free(S);
        return contig_cycle_error(c, f, err);
    }
    for (int T = 0; T < ntr; T++)
        if (S->ready[T] + p->place[T] > S->makespan)
            S->makespan = S->ready[T] + p->place[T];
    for (int i = 0; i < c->n; i++)
        S->sum += S->end[p->tr[i]];
    S->work = (long long)ntr + ne + c->n;
    return TC_OK;
}
