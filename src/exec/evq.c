/* evq.c — the simulator's event queue (see evq.h).
 *
 * A heap of every event costs a log of the queue's size per event, and a
 * 1024-rank schedule queues thousands at a time.  The keys make most of
 * that unnecessary: events pushed for one instant are pushed in key order
 * (sequence numbers grow), so each later instant keeps its events in a
 * bucket, first in, first out, found by the instant's bits in a hash table
 * (open addressing, linear probing); a heap orders the instants only, and
 * schedules move in lockstep, so there are few.  When the current instant
 * is done, the next instant's bucket becomes the current list; events
 * pushed for the current instant go after what that list holds (their
 * numbers are the largest yet).  Requests come when the current list is
 * empty: first those asked again (first made before now, a transfer that
 * waited for a resource), from a heap, oldest first; then the new ones,
 * from a bitmap by tb, lowest tb first. */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#include "../util/heap.h"
#include "../util/mem.h"
#include "../util/tcassert.h"

/* The index of the lowest set bit of w (not 0): a de Bruijn sequence
 * times the lowest bit puts a distinct pattern in the top 6 bits. */
static int lowest_bit(uint64_t w)
{
    static const unsigned char at[64] = {
        0,  1,  48, 2,  57, 49, 28, 3,  61, 58, 50, 42, 38, 29, 17, 4,
        62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
        63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
        46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,  6};
    return at[((w & (~w + 1)) * 0x03f79d71b4cb0a89u) >> 58];
}

/* A growing list of events. */
static void evlist_add(evlist *l, event e)
{
    if (l->n == l->cap)
        l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = e;
}

static int instant_before(const void *ctx, const evq_instant *a, const evq_instant *b)
{
    (void)ctx;
    return a->t < b->t;
}

TC_HEAP_DEFINE(instheap, evq_instant, const void *, instant_before)

static uint64_t time_bits(double t)
{
    uint64_t u;
    if (t == 0)
        t = 0;              /* -0 and 0 are one instant */
    memcpy(&u, &t, sizeof u);
    return u;
}

static int time_hash(const evq *q, double t)
{
    uint64_t u = time_bits(t);
    u ^= u >> 33;
    u *= 0xff51afd7ed558ccdULL;
    u ^= u >> 33;
    return (int)(u & (uint64_t)q->mask);
}

/* The table position of instant t's bucket, or of the empty slot where it
 * would go. */
static int slot_find(const evq *q, double t)
{
    int i = time_hash(q, t);
    while (q->slot[i] >= 0 && time_bits(q->bk[q->slot[i]].t) != time_bits(t))
        i = (i + 1) & q->mask;
    return i;
}

static void slots_rehash(evq *q, int size)
{
    int *old = q->slot, oldsize = q->slot ? q->mask + 1 : 0;
    q->slot = xmalloc((size_t)size * sizeof *q->slot);
    memset(q->slot, 0xff, (size_t)size * sizeof *q->slot);
    q->mask = size - 1;
    for (int i = 0; i < oldsize; i++)
        if (old[i] >= 0)
            q->slot[slot_find(q, q->bk[old[i]].t)] = old[i];
    free(old);
}

/* Take instant t's bucket out of the table (linear probing: the entries
 * after it move back where their probe allows). */
static void slot_remove(evq *q, double t)
{
    int i = slot_find(q, t);
    q->slot[i] = -1;
    q->nslot_used--;
    for (int j = (i + 1) & q->mask; q->slot[j] >= 0; j = (j + 1) & q->mask) {
        int k = time_hash(q, q->bk[q->slot[j]].t);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            q->slot[i] = q->slot[j];
            q->slot[j] = -1;
            i = j;
        }
    }
}

/* The bucket of later instant t, made if new.  Pushes for one instant
 * come in runs (a lockstep schedule ends many transfers at once): the last
 * bucket found is tried first. */
static evq_bucket *bucket_for(evq *q, double t)
{
    if (q->last >= 0 && q->last < q->nbk && time_bits(q->bk[q->last].t) == time_bits(t))
        return &q->bk[q->last];
    if (2 * (q->nslot_used + 1) > (q->slot ? q->mask + 1 : 0))
        slots_rehash(q, q->slot ? 2 * (q->mask + 1) : 64);
    int i = slot_find(q, t);
    if (q->slot[i] >= 0) {
        q->last = q->slot[i];
        return &q->bk[q->last];
    }
    int b;
    if (q->nspare > 0) {
        b = q->spare[--q->nspare];
    } else {
        q->bk = xgrow(q->bk, &q->cbk, q->nbk + 1, sizeof *q->bk);
        b = q->nbk++;
    }
    q->bk[b].t = t;
    q->bk[b].ev.n = 0;
    q->slot[i] = b;
    q->nslot_used++;
    q->inst = xgrow(q->inst, &q->cinst, q->ninst + 1, sizeof *q->inst);
    instheap_push(q->inst, &q->ninst, (evq_instant){t, b}, NULL);
    q->last = b;
    return &q->bk[b];
}

void evq_push(evq *q, double t, int type, int g)
{
    TC_ASSERT(t >= q->now);     /* an event is never scheduled in the past */
    event e = {t, q->seq++, type, g};
    evlist_add(t == q->now ? &q->cur : &bucket_for(q, t)->ev, e);
}

/* A request asked again: the oldest first (its event's t holds the instant
 * it was first made until it pops), then the lowest tb. */
static int older(const void *ctx, const event *a, const event *b)
{
    (void)ctx;
    return a->t != b->t ? a->t < b->t : a->g < b->g;
}

TC_HEAP_DEFINE(oldheap, event, const void *, older)

/* New requests are a set of tbs (one request each at a time) taken lowest
 * first: a bitmap, scanned from the lowest word that may hold one. */
void evq_request(evq *q, int type, int g, double first)
{
    if (first < q->now) {
        q->old = xgrow(q->old, &q->cold, q->nold + 1, sizeof *q->old);
        oldheap_push(q->old, &q->nold, (event){first, (1ULL << 62) | (uint64_t)g, type, g}, NULL);
        return;
    }
    int w = g / 64;
    if (w >= q->req_words) {
        q->req = xgrow(q->req, &q->req_words, w + 1, sizeof *q->req);
        q->req_type = xrealloc(q->req_type, (size_t)q->req_words * 64 * sizeof *q->req_type);
    }
    if (q->nreq == 0 || w < q->req_lo)
        q->req_lo = w;
    q->req[w] |= (uint64_t)1 << (g % 64);
    q->req_type[g] = type;
    q->nreq++;
}

static event next_request(evq *q)
{
    while (q->req[q->req_lo] == 0)
        q->req_lo++;
    int g = q->req_lo * 64 + lowest_bit(q->req[q->req_lo]);
    q->req[q->req_lo] &= q->req[q->req_lo] - 1;
    q->nreq--;
    return (event){q->now, (1ULL << 62) | (uint64_t)g, q->req_type[g], g};
}

/* Move on to the next later instant: its bucket's events become the
 * current list (the list's storage goes to the bucket, now free). */
static void advance(evq *q)
{
    evq_instant in = instheap_pop(q->inst, &q->ninst, NULL);
    /* time never runs backwards: every later instant was pushed after now */
    TC_ASSERT(in.t > q->now);
    TC_ASSERT(q->ninst == 0 || q->inst[0].t > in.t);
    slot_remove(q, in.t);
    evq_bucket *b = &q->bk[in.b];
    evlist done = q->cur;
    q->cur = b->ev;
    q->head = 0;
    done.n = 0;
    b->ev = done;
    q->spare = xgrow(q->spare, &q->cspare, q->nspare + 1, sizeof *q->spare);
    q->spare[q->nspare++] = in.b;
    if (q->last == in.b)
        q->last = -1;
    q->now = in.t;
}

int evq_pop(evq *q, event *out)
{
    if (q->head == q->cur.n && q->nold > 0) {
        *out = oldheap_pop(q->old, &q->nold, NULL);
        out->t = q->now;
        return 1;
    }
    if (q->head == q->cur.n && q->nreq > 0) {
        *out = next_request(q);
        return 1;
    }
    if (q->head == q->cur.n) {
        if (q->ninst == 0)
            return 0;
        advance(q);
    }
    *out = q->cur.v[q->head++];
    if (q->head == q->cur.n)
        q->head = q->cur.n = 0;
    return 1;
}

void evq_free(evq *q)
{
    free(q->cur.v);
    free(q->req);
    free(q->req_type);
    free(q->old);
    for (int b = 0; b < q->nbk; b++)
        free(q->bk[b].ev.v);
    free(q->bk);
    free(q->spare);
    free(q->slot);
    free(q->inst);
}

