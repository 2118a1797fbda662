/* algo.h — an abstract algorithm: which chunk crosses which link, when.
 *
 * The synthesizer's stages produce this; the lowering (lower.h, beside it) turns
 * it into an MSCCL schedule.  A chunk is one piece of the collective's data,
 * identified by its origin rank and its index in the origin's input buffer;
 * the collective (collective.h) says which ranks need it and at which output
 * index.  A send moves a chunk from one rank to another over the route the
 * topology gives for that pair, starting at t_send and arriving at
 * t_arrive (microseconds).  Sends on the same (src, dst) pair that share a
 * `group` >= 0 travel together as one transfer (contiguity: one alpha for
 * several chunks).  `reduce` marks a send whose receiver adds the chunk into
 * its own copy (ReduceScatter) instead of storing it.
 *
 * Plain data, built with algo_new()/algo_add_send(), freed with algo_free(). */
#ifndef TC_ALGO_H
#define TC_ALGO_H

#include "../model/collective.h"

typedef struct {
    int origin;         /* rank whose input holds the chunk */
    int index;          /* index in the origin's input buffer */
    int src, dst;       /* this hop */
    double t_send;      /* us */
    double t_arrive;    /* us */
    int group;          /* contiguity group on (src, dst), -1 = alone */
    int reduce;         /* receiver reduces into its copy */
    double pre_us;      /* local work at src before the transfer may start
                           (the lowering's staging copies; 0 otherwise) */
    double post_us;     /* local work at dst after it arrives before the chunk
                           can be sent on (staged reductions; 0 otherwise) */
    double place_us;    /* local work at dst after it arrives before the chunk
                           is in its final place (staging copies; 0 otherwise):
                           delays the end, not forwarding */
    int lane;           /* 0: the lowering colours the send's channel by time;
                           c + 1: it travels on colour c of its (src, dst),
                           the colours of a pair dense from 0 (packed trees,
                           synth/pack.h: one tree per channel, so a tree's
                           tiles never wait behind another tree's), and
                           the send is not chained behind its rank's other
                           sends on the same out port or NIC */
} algo_send;

typedef struct {
    coll_kind coll;
    int nranks;
    int chunks_per_rank;    /* input chunks per rank (the chunkup included) */
    int nsends, cap;
    algo_send *sends;
    double predicted_us;    /* the stage's makespan, < 0 unknown */
} algo;

algo *algo_new(coll_kind coll, int nranks, int chunks_per_rank);
void algo_free(algo *a);
algo_send *algo_add_send(algo *a, int origin, int index, int src, int dst, double t_send,
                         double t_arrive);

#endif
