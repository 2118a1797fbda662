/* contig_int.h — what the parts of stage 3 share (not a public API).
 *
 * contig.c holds the public calls (contig.h), the MILP and the order of a
 * solve; contig_graph.c reads the input into a context (sends, their fixed
 * order, data dependencies, resource-lane slots), splits the sends into
 * transfers and times a partition in the fixed order (contig_asap, the
 * MILP's model); contig_replay.c times a partition as the executor will
 * (contig_replay_part); contig_search.c finds the sends that may be grouped
 * and runs the local search over groupings.  Here: the types they pass
 * each other and the calls between the files. */
#ifndef TC_CONTIG_INT_H
#define TC_CONTIG_INT_H

#include "contig.h"

/* Edge kinds: v after u's end (a resource, or the sender's chain), v after
 * u's data is ready. */
enum { E_RES = 0, E_DATA = 1 };

/* ------------------------------------------------------------ context: sends, order, data */

typedef struct {
    const algo *a;
    const topo *t;
    double cb;
    int n;
    topo_route *rt;     /* [n] route of each send */
    double *beta;       /* [n] one chunk over the route, without alpha (us) */
    double *red;        /* [n] one chunk's reduce cost at the receiver, 0 if none */
    int *ord;           /* [n] sends in the fixed order */
    int *pos;           /* [n] position of each send in ord */
    int *dep0, *dep;    /* CSR: sends bringing send i's chunk to its sender */
    int nslots;         /* compact (resource, lane) slots */
    int *slot;          /* [2n] slots of each send, -1 = unused */
    int nrslots;        /* chunks reduced into at a rank: (dst, chunk) */
    int *rslot;         /* [n] the one send i reduces into, -1 = a copy */
    int npairs;         /* (src, dst) pairs that carry sends */
    int *pair;          /* [n] the pair of send i, 0 .. npairs-1 */
    int nchains;        /* (src, out slot) chains: a sender's order on its out slot */
    int *chain;         /* [n] the chain of send i (set with the slots) */
} ctx;

typedef struct {
    long long key;
    int T;              /* a transfer, or a send */
} chain_key;

/* ------------------------------------------------------------ partitions into transfers */

/* Transfers are numbered in the fixed order of their first member. */
typedef struct {
    int ntr;
    int *tr;            /* [n] transfer of each send */
    int *first;         /* [ntr] first member */
    int *k;             /* [ntr] members */
    double *redc;       /* [ntr] reduce cost of the whole transfer */
    double *pre;        /* [ntr] local work at the sender before it (staging):
                           the largest of its sends' */
    double *presum;     /* [ntr] all of it (the sends' sum) */
    double *place;      /* [ntr] local work putting its chunks in place after it */
} part;

/* ------------------------------------------------------------ earliest times */

typedef struct {
    int from, to, kind;
} edge;

typedef struct {
    double *start, *end, *ready;    /* [ntr] */
    int *order;                     /* [ntr] a topological order */
    double makespan;
    double sum;                     /* sum over sends of their transfer's end */
    int ne;
    edge *e;                        /* kept only when asked */
    int *spred;                     /* [2n] transfer before send i on slot k, kept when asked */
    long long work;                 /* graph elements visited */
} sched;

/* ------------------------------------------------------------ the grouping problem */

/* Everything about the singleton graph that grouping needs, by position q
 * in the fixed order (= transfer id of the singleton partition). */
typedef struct {
    int n;
    int *cpred;         /* [n] the send q may join (its predecessor), -1 = not a candidate */
    int *csucc;         /* [n] the candidate that may join q, -1 none */
    int ncand;
    int *cand;          /* [ncand] candidate positions, in order */
    int G;              /* max group size */
} groups;

/* ---- context, partitions, earliest times (contig_graph.c) ---- */

/* The context of input a: TC_INPUT (err set) for an input that cannot be
 * scheduled; call contig_ctx_free() either way. */
int contig_ctx_init(ctx *c, const algo *a, const topo *t, double cb, tc_err *err);
void contig_ctx_free(ctx *c);
int contig_cmp_chain_key(const void *x, const void *y);
void contig_part_alloc(part *p, int n);
void contig_part_free(part *p);
/* join[q] = 1: the send at position q joins the transfer of the send at
 * position pred[q].  join == NULL: all alone. */
void contig_part_from_joins(const ctx *c, const int *pred, const unsigned char *join, part *p);
/* The input's own groups: sends of one pair sharing a group id >= 0. */
void contig_part_from_groups(const ctx *c, part *p);
/* Resource-lane slots of every send (its transfer's lane). */
void contig_assign_slots(ctx *c, const part *p);
void contig_sched_free(sched *S);
/* TC_INPUT naming send i on a cycle of the order. */
int contig_cycle_error(const ctx *c, int i, tc_err *err);
/* Longest path over the transfers of p (the fixed order on every slot).
 * keep: also return the edges and slot predecessors.  TC_INPUT on a cycle. */
int contig_asap(const ctx *c, const part *p, int keep, sched *S, tc_err *err);
/* How long transfer T of p holds its resources and its sender: its whole
 * hop, or its bytes alone where the topology's alpha is a delay (then it
 * lands alpha after it frees them). */
double contig_hold_us(const ctx *c, const part *p, int T);

/* ---- the executor's arbitration (contig_replay.c) ---- */

/* Times of partition p as the executor will produce them; fills what
 * contig_asap() fills except the edges.  TC_INPUT on a cycle. */
int contig_replay_part(const ctx *c, const part *p, sched *S, tc_err *err);

/* ---- the grouping problem (contig_search.c) ---- */

/* The sends that may join the one before them (S1: the singleton
 * partition's schedule, with its slot predecessors). */
void contig_find_candidates(const ctx *c, const sched *S1, const contig_opts *o, groups *g,
                            int *npairs);
void contig_groups_free(groups *g);
/* Joins y timed in the MILP's fixed-order model. */
int contig_eval_joins(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                      tc_err *err);
/* Joins y timed as the executor will run them. */
int contig_eval_exec(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                     tc_err *err);
/* Improve joins y in place; *mk: their makespan as the executor runs them. */
int contig_local_search(const ctx *c, const groups *g, unsigned char *y, double *mk,
                        tc_err *err);

#endif
