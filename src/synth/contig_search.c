/* contig_search.c — stage 3's grouping problem without the solver: which
 * sends may join the one before them (contig_find_candidates), the time of
 * a choice of joins in the MILP's model and as the executor runs it, and
 * the deterministic local search that improves a choice before the MILP
 * (its incumbent) and after it (polishing its answer).
 *
 * Deterministic by design: moves are visited in a fixed order and the
 * search stops on a work budget counted in graph elements, not seconds. */
#include "contig_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

#define LS_MAX_PASSES 4
#define LS_WORK_BUDGET 5e7      /* graph elements visited by one local search */

void contig_groups_free(groups *g)
{
    free(g->cpred);
    free(g->csucc);
    free(g->cand);
    memset(g, 0, sizeof *g);
}

static int cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

static int pair_eligible(const ctx *c, int i, const contig_opts *o)
{
    const topo_route *r = &c->rt[i];
    if (r->kind == ROUTE_NIC && o->nic_always)
        return 1;
    return r->alpha_us >= o->alpha_frac * (r->alpha_us + c->beta[i]);
}

/* Send at position q may join the one before it when it is that send's
 * direct successor on every slot it uses, same pair, same reduce flag. */
void contig_find_candidates(const ctx *c, const sched *S1, const contig_opts *o, groups *g,
                            int *npairs)
{
    int n = c->n;
    g->n = n;
    g->G = o->max_group;
    g->cpred = xmalloc((size_t)n * sizeof *g->cpred);
    g->csucc = xmalloc((size_t)n * sizeof *g->csucc);
    g->cand = xmalloc((size_t)n * sizeof *g->cand);
    g->ncand = 0;
    for (int q = 0; q < n; q++)
        g->cpred[q] = g->csucc[q] = -1;
    for (int q = 0; q < n; q++) {
        int i = c->ord[q], u = -2;
        if (!pair_eligible(c, i, o))
            continue;
        for (int k = 0; k < 2; k++) {
            if (c->slot[2 * i + k] < 0)
                continue;
            int pu = S1->spred[2 * i + k];
            u = (u == -2 || u == pu) ? pu : -1;
        }
        if (u < 0)
            continue;
        const algo_send *a = &c->a->sends[i], *b = &c->a->sends[c->ord[u]];
        if (a->src != b->src || a->dst != b->dst || !a->reduce != !b->reduce)
            continue;
        g->cpred[q] = u;
        g->csucc[u] = q;
        g->cand[g->ncand++] = q;
    }
    /* distinct pairs holding candidates */
    int np = 0;
    long long *pk = xmalloc((size_t)(g->ncand > 0 ? g->ncand : 1) * sizeof *pk);
    for (int x = 0; x < g->ncand; x++) {
        const algo_send *a = &c->a->sends[c->ord[g->cand[x]]];
        pk[x] = (long long)a->src * c->t->nranks + a->dst;
    }
    qsort(pk, (size_t)g->ncand, sizeof *pk, cmp_ll);
    for (int x = 0; x < g->ncand; x++)
        np += x == 0 || pk[x] != pk[x - 1];
    free(pk);
    *npairs = np;
}

/* Sends joined with y = 1 on both sides of candidate q, plus q itself. */
static int run_length(const groups *g, const unsigned char *y, int q)
{
    int len = 1;
    for (int r = g->cpred[q]; r >= 0 && g->cpred[r] >= 0 && y[r]; r = g->cpred[r])
        len++;
    for (int r = g->csucc[q]; r >= 0 && y[r]; r = g->csucc[r])
        len++;
    return len;
}

/* The MILP's own model of joins y: the fixed order on every slot. */
int contig_eval_joins(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                      tc_err *err)
{
    contig_part_from_joins(c, g->cpred, y, p);
    return contig_asap(c, p, 0, S, err);
}

/* What the executor will make of joins y (contig_replay_part()): the times
 * every decision is judged by and the output carries. */
int contig_eval_exec(const ctx *c, const groups *g, const unsigned char *y, part *p, sched *S,
                     tc_err *err)
{
    contig_part_from_joins(c, g->cpred, y, p);
    return contig_replay_part(c, p, S, err);
}

static int cmp_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

/* Every rank's completion (its last data ready), sorted, latest first. */
static void rank_profile(const ctx *c, const part *p, const sched *S, double *v)
{
    int nr = c->t->nranks;
    for (int r = 0; r < nr; r++)
        v[r] = 0;
    for (int T = 0; T < p->ntr; T++) {
        int d = c->a->sends[p->first[T]].dst;
        if (S->ready[T] > v[d])
            v[d] = S->ready[T];
    }
    qsort(v, (size_t)nr, sizeof *v, cmp_desc);
}

/* Is the new schedule better: makespan not larger, and the completion
 * profile smaller in leximax order (the latest rank earlier, or as late and
 * the next one earlier, ...), or equal and the sum of arrivals smaller. */
static int profile_better(const double *nw, const double *old, int nr, double nsum,
                          double osum)
{
    if (nr > 0 && nw[0] > old[0])
        return 0;
    double tol = 1e-9 * (1 + (nr > 0 ? old[0] : 0));
    for (int r = 0; r < nr; r++) {
        if (nw[r] < old[r] - tol)
            return 1;
        if (nw[r] > old[r] + tol)
            return 0;
    }
    return nsum < osum - 1e-9 * (1 + fabs(osum));
}

/* Toggle one binary at a time; keep a change when profile_better() says so
 * (a merge that helps one direction is kept even while the other direction
 * still sets the makespan).  Deterministic: fixed visit order and a work
 * budget counted in graph elements, not seconds. */
int contig_local_search(const ctx *c, const groups *g, unsigned char *y, double *mk,
                        tc_err *err)
{
    int nr = c->t->nranks;
    double *cur = xmalloc((size_t)(nr > 0 ? nr : 1) * sizeof *cur);
    double *nw = xmalloc((size_t)(nr > 0 ? nr : 1) * sizeof *nw);
    part p;
    contig_part_alloc(&p, c->n);
    sched S;
    int rc = contig_eval_exec(c, g, y, &p, &S, err);
    if (rc != TC_OK)
        goto done;
    rank_profile(c, &p, &S, cur);
    double cur_mk = S.makespan, cur_sum = S.sum, work = (double)S.work;
    contig_sched_free(&S);
    for (int pass = 0; pass < LS_MAX_PASSES && work < LS_WORK_BUDGET; pass++) {
        int changed = 0;
        /* move 0: toggle one binary; move 1: shift a group boundary by one
         * send (toggle a binary and its successor's when they differ) */
        for (int mv = 0; mv < 2; mv++)
            for (int x = 0; x < g->ncand && work < LS_WORK_BUDGET; x++) {
                if (lp_stop_requested()) {
                    rc = tc_err_set(err, TC_STOP, "interrupted");
                    goto done;
                }
                int q = g->cand[x], q2 = mv ? g->csucc[q] : -1;
                if (mv && (q2 < 0 || y[q] == y[q2]))
                    continue;
                if (!mv && !y[q] && run_length(g, y, q) + 1 > g->G)
                    continue;
                y[q] ^= 1;
                if (q2 >= 0)
                    y[q2] ^= 1;
                if (mv && run_length(g, y, y[q] ? q : q2) + 1 > g->G) {
                    y[q] ^= 1;          /* the grown group would be too long */
                    y[q2] ^= 1;
                    continue;
                }
                tc_err ignored;
                if (contig_eval_exec(c, g, y, &p, &S, &ignored) != TC_OK) {
                    /* the grown group waits for its own data: not a schedule */
                    y[q] ^= 1;
                    if (q2 >= 0)
                        y[q2] ^= 1;
                    work += (double)p.ntr;
                    continue;
                }
                work += (double)S.work;
                rank_profile(c, &p, &S, nw);
                if (S.makespan <= cur_mk && profile_better(nw, cur, nr, S.sum, cur_sum)) {
                    double *t = cur;
                    cur = nw;
                    nw = t;
                    cur_mk = S.makespan;
                    cur_sum = S.sum;
                    changed = 1;
                } else {
                    y[q] ^= 1;
                    if (q2 >= 0)
                        y[q2] ^= 1;
                }
                contig_sched_free(&S);
            }
        if (!changed)
            break;
    }
    *mk = cur_mk;
done:
    contig_part_free(&p);
    free(cur);
    free(nw);
    return rc;
}
