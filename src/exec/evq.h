/* evq.h — the simulator's event queue: events pop in (time, key) order.
 *
 * evq_push keys an event by a sequence number (the order of pushes);
 * evq_request queues a request of tb g for the current instant, first
 * made at instant `first`, so requests come after every other event of
 * that instant, the oldest first, then in tb order.  No event is ever for
 * an instant before the last one popped (the simulator's costs are not
 * negative).  The order of pops is the one
 * a heap of all events would give; the cost of an event does not grow with
 * the number queued (see evq.c).  A zeroed evq is an empty queue at time
 * 0. */
#ifndef TC_EVQ_H
#define TC_EVQ_H

#include <stdint.h>

typedef struct {
    double t;
    uint64_t key;       /* pushed events: sequence; requests: 1<<62 | g */
    int type;
    int g;              /* the simulator's global tb index */
} event;

typedef struct {
    event *v;
    int n, cap;
} evlist;

typedef struct {
    double t;
    evlist ev;          /* its events, in push order */
} evq_bucket;

typedef struct {
    double t;
    int b;              /* its bucket */
} evq_instant;

typedef struct {
    double now;             /* the instant of the last event popped */
    uint64_t seq;
    evlist cur;             /* events of `now` not yet popped: [head, n) */
    int head;
    uint64_t *req;          /* bit g: tb g requests at `now` */
    int *req_type;          /* [g]: that request's type */
    int req_words, nreq;
    int req_lo;             /* no request below word req_lo */
    event *old;             /* heap of requests first made before `now` */
    int nold, cold;
    evq_bucket *bk;         /* buckets of later instants; free ones in `spare` */
    int nbk, cbk;
    int *spare, nspare, cspare;
    int last;               /* the bucket found last, or -1; in use if < nbk */
    int *slot;              /* hash table of the buckets in use (-1: empty) */
    int mask, nslot_used;
    evq_instant *inst;      /* heap of the instants of the buckets in use */
    int ninst, cinst;
} evq;

void evq_push(evq *q, double t, int type, int g);
void evq_request(evq *q, int type, int g, double first);
/* The next event into *out; 0 when none is left. */
int evq_pop(evq *q, event *out);
void evq_free(evq *q);

#endif
