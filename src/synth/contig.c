/* contig.c — synthesis stage 3: which sends travel together, and exact times
 * (contract and model in contig.h).
 *
 * The work is done on a precedence graph whose nodes are transfers (one send,
 * or a group of sends of one pair) and whose edges are "v starts after u
 * ends" (u before v on a resource lane) and "v starts after u's data is
 * ready" (u brought a chunk v sends on).  One pass, contig_asap(), computes
 * the earliest times on that graph for a given partition of the sends into
 * transfers: the fixed order kept on every resource, the MILP's model.
 * contig_schedule() is that pass on the input's groups.
 *
 * The executor cannot be made to keep an order on a resource that several
 * ranks share (a switch in port, a NIC of two GPUs): it serves those by
 * when transfers ask, and the lowering can only order each rank's own
 * sends.  So contig_solve() judges and times every grouping with
 * contig_replay_part(), the executor's arbitration (each sender's out-port
 * order fixed, shared slots first come first served, ties to the lower
 * rank): it builds the singleton graph, finds the groupable neighbours,
 * improves the no-group schedule by a small deterministic local search,
 * hands the best to GLPK as the incumbent of the MILP (in contig_asap()'s
 * model), reads back the grouping, polishes it and times it with
 * contig_replay_part().  The output is therefore exactly what the executor
 * will do with it, whatever the solver returned; on an input whose order
 * already is the executor's (stage 2's is), contig_replay_part() and
 * contig_asap() agree until grouping moves a request past another sender's.
 *
 * This file holds the public calls, the MILP and the order of a solve; the
 * context, partitions and contig_asap() are in contig_graph.c,
 * contig_replay_part() in contig_replay.c, the candidates and the local
 * search in contig_search.c, the types they share in contig_int.h. */
#include "contig_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../util/mem.h"

#define MAX_CNT 71              /* runtime: cnt < 72 */

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ output */

static algo *make_output(const ctx *c, const part *p, const sched *S, contig_stats *st)
{
    const algo *a = c->a;
    algo *o = algo_new(a->coll, a->nranks, a->chunks_per_rank);
    if (!o)
        tc_oom();
    int *gid = xmalloc((size_t)(p->ntr > 0 ? p->ntr : 1) * sizeof *gid);
    int ng = 0, grouped = 0;
    for (int T = 0; T < p->ntr; T++) {
        gid[T] = p->k[T] >= 2 ? ng++ : -1;
        if (p->k[T] >= 2)
            grouped += p->k[T];
    }
    for (int i = 0; i < c->n; i++) {
        const algo_send *s = &a->sends[i];
        int T = p->tr[i];
        algo_send *d = algo_add_send(o, s->origin, s->index, s->src, s->dst, S->start[T],
                                     S->end[T]);
        d->reduce = s->reduce;
        d->group = gid[T];
        d->pre_us = s->pre_us;
        d->post_us = s->post_us;
        d->place_us = s->place_us;
    }
    o->predicted_us = S->makespan;
    free(gid);
    if (st) {
        st->ngroups = ng;
        st->grouped_sends = grouped;
        st->ntransfers = p->ntr;
        st->result_us = S->makespan;
    }
    return o;
}

static double input_makespan(const ctx *c)
{
    double m = 0;
    for (int i = 0; i < c->n; i++) {
        double r = c->a->sends[i].t_arrive + c->red[i];
        if (r > m)
            m = r;
    }
    return m;
}

/* contig_schedule() and contig_replay(): the input's groups timed by one
 * pass, contig_asap() or the executor's arbitration. */
static int schedule_groups(const algo *in, const topo *t, double chunk_bytes, int arbitrate,
                           algo **out, tc_err *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return tc_err_set(err, TC_INPUT, "contig: no output pointer");
    ctx c;
    int rc = contig_ctx_init(&c, in, t, chunk_bytes, err);
    if (rc != TC_OK) {
        contig_ctx_free(&c);
        return rc;
    }
    part p;
    contig_part_alloc(&p, c.n);
    contig_part_from_groups(&c, &p);
    contig_assign_slots(&c, &p);
    sched S;
    rc = arbitrate ? contig_replay_part(&c, &p, &S, err) : contig_asap(&c, &p, 0, &S, err);
    if (rc == TC_OK) {
        *out = make_output(&c, &p, &S, NULL);
        contig_sched_free(&S);
    }
    contig_part_free(&p);
    contig_ctx_free(&c);
    return rc;
}

int contig_schedule(const algo *in, const topo *t, double chunk_bytes, algo **out,
                    tc_err *err)
{
    return schedule_groups(in, t, chunk_bytes, 0, out, err);
}

int contig_replay(const algo *in, const topo *t, double chunk_bytes, algo **out, tc_err *err)
{
    return schedule_groups(in, t, chunk_bytes, 1, out, err);
}

/* ------------------------------------------------------------ the MILP */

static int cmp_edge(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    return (a->kind > b->kind) - (a->kind < b->kind);
}

typedef struct {
    lp *p;
    int cz;
    int *cs, *ca, *cf, *cy;     /* [n] by position; -1 = none */
    double *lbs, *ubs, *lba, *uba;
    double *dur, *beta, *red, *alpha;  /* [n] by position, one chunk */
    double *lat;                /* [n] how long before it lands the hop frees its
                                   resources: alpha where it is a delay, plus the
                                   runtime's latency (model/cost.h) */
    double *rl;                 /* [n] the runtime's latency alone */
    int nce;                    /* work-cut chain elements, lane by lane in order */
    int *ce_q, *ce_P, *ce_M;    /* position, columns P and M */
    unsigned char *ce_first;    /* first element of its lane */
} milp;

static void milp_free(milp *m)
{
    lp_free(m->p);
    free(m->cs);
    free(m->ca);
    free(m->cf);
    free(m->cy);
    free(m->lbs);
    free(m->ubs);
    free(m->lba);
    free(m->uba);
    free(m->dur);
    free(m->beta);
    free(m->red);
    free(m->alpha);
    free(m->lat);
    free(m->rl);
    free(m->ce_q);
    free(m->ce_P);
    free(m->ce_M);
    free(m->ce_first);
    memset(m, 0, sizeof *m);
}

/* Bounds valid for every grouping with makespan <= T: a longest path from
 * the start with one-chunk costs and candidate edges relaxed (a send that
 * joins starts with its predecessor), and the same from the end. */
static void milp_bounds(const ctx *c, const groups *g, const sched *S1, double T, milp *m)
{
    int n = c->n;
    double *es = xcalloc((size_t)(n > 0 ? n : 1), sizeof *es);
    double *ta = xcalloc((size_t)(n > 0 ? n : 1), sizeof *ta);
    double *qq = xcalloc((size_t)(n > 0 ? n : 1), sizeof *qq);
    int *o0 = xcalloc((size_t)n + 1, sizeof *o0);
    int *oe = xmalloc((size_t)(S1->ne > 0 ? S1->ne : 1) * sizeof *oe);
    for (int x = 0; x < S1->ne; x++)
        o0[S1->e[x].from + 1]++;
    for (int q = 0; q < n; q++)
        o0[q + 1] += o0[q];
    int *fill = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *fill);
    memcpy(fill, o0, (size_t)n * sizeof *fill);
    for (int x = 0; x < S1->ne; x++)
        oe[fill[S1->e[x].from]++] = x;
    free(fill);
    for (int z = 0; z < n; z++) {
        int u = S1->order[z];
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *e = &S1->e[oe[x]];
            double w = e->kind == E_DATA ? m->dur[u] + m->red[u]
                       : g->cpred[e->to] == u ? 0 : m->dur[u] - m->lat[u];
            if (es[u] + w > es[e->to])
                es[e->to] = es[u] + w;
        }
    }
    for (int z = n - 1; z >= 0; z--) {
        int u = S1->order[z];
        double t = m->red[u];
        for (int x = o0[u]; x < o0[u + 1]; x++) {
            const edge *e = &S1->e[oe[x]];
            double w = e->kind == E_DATA ? m->red[u] + qq[e->to]
                       : g->cpred[e->to] == u ? ta[e->to] : qq[e->to] - m->lat[u];
            if (w > t)
                t = w;
        }
        ta[u] = t;
        qq[u] = m->dur[u] + t;
    }
    free(o0);
    free(oe);
    double eps = 1e-9 * (1 + T);
    for (int q = 0; q < n; q++) {
        m->lbs[q] = es[q];
        m->ubs[q] = fmax(es[q], T - qq[q] + eps);
        m->lba[q] = es[q] + m->dur[q];
        m->uba[q] = fmax(m->lba[q], T - ta[q] + eps);
    }
    free(es);
    free(ta);
    free(qq);
}

static void row2(lp *p, int c1, double v1, int c2, double v2, double lb, double ub)
{
    int cc[2] = {c1, c2};
    double vv[2] = {v1, v2};
    lp_add_row(p, NULL, lb, ub, 2, cc, vv);
}

static void row3(lp *p, int c1, double v1, int c2, double v2, int c3, double v3, double lb,
                 double ub)
{
    int cc[3] = {c1, c2, c3};
    double vv[3] = {v1, v2, v3};
    lp_add_row(p, NULL, lb, ub, 3, cc, vv);
}

/* "after >= ready(u) + rhs_extra" where ready(u) = a_u + red_u, or, for a
 * groupable reducing u, a_u + (a_u - s_u - alpha_u - rl_u) * red_u / beta_u
 * (its chunks' reduction: the group's bytes over beta). */
static void row_after_ready(const milp *m, int after, int u)
{
    if (m->red[u] > 0 && m->cf[u] >= 0) {
        double rho = m->red[u] / m->beta[u];
        row3(m->p, after, 1, m->ca[u], -(1 + rho), m->cs[u], rho,
             -rho * (m->alpha[u] + m->rl[u]), INFINITY);
    } else {
        row2(m->p, after, 1, m->ca[u], -1, m->red[u], INFINITY);
    }
}

/* The runtime's per-step latency of the send at position q (0 without
 * one): it lands that long after its last byte, holding nothing. */
static double rt_lat(const ctx *c, int q)
{
    return c->rt[c->ord[q]].lat_us;
}

/* Valid inequalities without big-M, which the LP relaxation otherwise
 * lacks: on one resource lane the transfers of a segment u..v of its fixed
 * order run one after another inside [s_u, a_v], so
 *     a_v - s_u >= beta_u + alpha_u + sum_{w in (u, v]} (beta_w + alpha_w (1 - y_w))
 * (y_w = 0 for a send that cannot join).  All segments at once, in O(chain)
 * rows: P_x is the chain's work up to x,  P_x = P_{x-1} + beta_x +
 * alpha_x (1 - y_x);  M_x = max_{u <= x} (s_u - P_u + beta_u + alpha_u),
 * as M_x >= M_{x-1} and M_x >= s_x - P_x + beta_x + alpha_x;  and
 * a_x >= P_x + M_x.  Only on lanes that hold a binary. */
static void add_work_cuts(const ctx *c, const groups *g, milp *m)
{
    int n = c->n, ns = c->nslots;
    m->nce = 0;
    m->ce_q = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_q);
    m->ce_P = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_P);
    m->ce_M = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *m->ce_M);
    m->ce_first = xmalloc((size_t)2 * (n > 0 ? n : 1));
    if (g->ncand == 0 || c->t->alpha_delay)
        return;     /* where alpha is a delay a lane's work is its bytes alone */
    int *c0 = xcalloc((size_t)ns + 1, sizeof *c0);
    int *ch = xmalloc((size_t)2 * (n > 0 ? n : 1) * sizeof *ch);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < 2; k++)
            if (c->slot[2 * c->ord[q] + k] >= 0)
                c0[c->slot[2 * c->ord[q] + k] + 1]++;
    for (int s = 0; s < ns; s++)
        c0[s + 1] += c0[s];
    int *fill = xmalloc((size_t)(ns > 0 ? ns : 1) * sizeof *fill);
    memcpy(fill, c0, (size_t)ns * sizeof *fill);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < 2; k++) {
            int s = c->slot[2 * c->ord[q] + k];
            if (s >= 0)
                ch[fill[s]++] = q;
        }
    free(fill);
    lp *p = m->p;
    for (int s = 0; s < ns; s++) {
        int b = c0[s], e = c0[s + 1], any = 0;
        for (int x = b + 1; x < e && !any; x++)
            any = g->cpred[ch[x]] >= 0;
        if (!any)
            continue;
        int pP = -1, pM = -1;
        for (int x = b; x < e; x++) {
            int q = ch[x];
            double w = m->beta[q] + m->alpha[q];
            int cP = lp_add_col(p, NULL, 0, INFINITY, 0, 0);
            int cM = lp_add_col(p, NULL, -INFINITY, INFINITY, 0, 0);
            int yq = x > b ? m->cy[q] : -1;     /* a lane's first send joins nothing on it */
            int cc[3];
            double cv[3];
            int k = 0;
            cc[k] = cP, cv[k++] = 1;
            if (pP >= 0)
                cc[k] = pP, cv[k++] = -1;
            if (yq >= 0)
                cc[k] = yq, cv[k++] = m->alpha[q];
            lp_add_row(p, NULL, w, w, k, cc, cv);
            if (pM >= 0)
                row2(p, cM, 1, pM, -1, 0, INFINITY);
            row3(p, cM, 1, m->cs[q], -1, cP, 1, w, INFINITY);
            row3(p, m->ca[q], 1, cP, -1, cM, -1, 0, INFINITY);
            m->ce_q[m->nce] = q;
            m->ce_P[m->nce] = cP;
            m->ce_M[m->nce] = cM;
            m->ce_first[m->nce] = x == b;
            m->nce++;
            pP = cP;
            pM = cM;
        }
    }
    free(c0);
    free(ch);
}

static void milp_build(const ctx *c, const groups *g, const sched *S1, double T, milp *m)
{
    int n = c->n;
    memset(m, 0, sizeof *m);
    m->cs = xmalloc((size_t)n * sizeof *m->cs);
    m->ca = xmalloc((size_t)n * sizeof *m->ca);
    m->cf = xmalloc((size_t)n * sizeof *m->cf);
    m->cy = xmalloc((size_t)n * sizeof *m->cy);
    m->lbs = xmalloc((size_t)n * sizeof *m->lbs);
    m->ubs = xmalloc((size_t)n * sizeof *m->ubs);
    m->lba = xmalloc((size_t)n * sizeof *m->lba);
    m->uba = xmalloc((size_t)n * sizeof *m->uba);
    m->dur = xmalloc((size_t)n * sizeof *m->dur);
    m->beta = xmalloc((size_t)n * sizeof *m->beta);
    m->red = xmalloc((size_t)n * sizeof *m->red);
    m->alpha = xmalloc((size_t)n * sizeof *m->alpha);
    m->lat = xmalloc((size_t)n * sizeof *m->lat);
    m->rl = xmalloc((size_t)n * sizeof *m->rl);
    for (int q = 0; q < n; q++) {
        int i = c->ord[q];
        m->dur[q] = cost_hop_us(&c->rt[i], c->cb);
        m->beta[q] = c->beta[i];
        m->alpha[q] = c->rt[i].alpha_us;
        m->rl[q] = c->rt[i].lat_us;
        m->lat[q] = (c->t->alpha_delay ? m->alpha[q] : 0) + m->rl[q];
        m->red[q] = c->red[i];
    }
    milp_bounds(c, g, S1, T, m);
    lp *p = m->p = lp_new("contig");
    double lbz = 0;
    for (int q = 0; q < n; q++)
        lbz = fmax(lbz, m->lba[q] + m->red[q]);
    double eps = 1e-9 * (1 + T);
    m->cz = lp_add_col(p, "z", fmin(lbz, T), T + eps, 1.0, 0);
    char name[48];
    for (int q = 0; q < n; q++) {
        snprintf(name, sizeof name, "s%d", c->ord[q]);
        m->cs[q] = lp_add_col(p, name, m->lbs[q], m->ubs[q], 0, 0);
        snprintf(name, sizeof name, "a%d", c->ord[q]);
        m->ca[q] = lp_add_col(p, name, m->lba[q], m->uba[q], 0, 0);
        m->cf[q] = m->cy[q] = -1;
        if (g->cpred[q] >= 0 || g->csucc[q] >= 0) {
            snprintf(name, sizeof name, "f%d", c->ord[q]);
            m->cf[q] = lp_add_col(p, name, m->lba[q] - rt_lat(c, q), m->uba[q] - rt_lat(c, q),
                                  0, 0);
        }
        if (g->cpred[q] >= 0) {
            snprintf(name, sizeof name, "y%d", c->ord[q]);
            m->cy[q] = lp_add_col(p, name, 0, 1, 0, 1);
        }
    }
    /* a transfer lasts at least its own chunk; f is its end before the
     * runtime's latency (model/cost.h), which comes once a transfer */
    for (int q = 0; q < n; q++) {
        if (m->cf[q] >= 0) {
            double rl = rt_lat(c, q);
            row2(p, m->cf[q], 1, m->cs[q], -1, m->dur[q] - rl, INFINITY);
            row2(p, m->ca[q], 1, m->cf[q], -1, rl, INFINITY);
        } else {
            row2(p, m->ca[q], 1, m->cs[q], -1, m->dur[q], INFINITY);
        }
    }
    /* the fixed order on resources, and the chunks' arrivals */
    edge *e = xmalloc((size_t)(S1->ne > 0 ? S1->ne : 1) * sizeof *e);
    memcpy(e, S1->e, (size_t)S1->ne * sizeof *e);
    qsort(e, (size_t)S1->ne, sizeof *e, cmp_edge);
    unsigned char *has_out = xcalloc((size_t)(n > 0 ? n : 1), 1);
    for (int x = 0; x < S1->ne; x++) {
        if (x > 0 && cmp_edge(&e[x], &e[x - 1]) == 0)
            continue;
        int u = e[x].from, v = e[x].to;
        has_out[u] = 1;
        if (e[x].kind == E_DATA) {
            row_after_ready(m, m->cs[v], u);
        } else if (g->cpred[v] == u) {
            double M = fmax(0, m->uba[u] - m->lat[u] - m->lbs[v]);
            row3(p, m->cs[v], 1, m->ca[u], -1, m->cy[v], M, -m->lat[u], INFINITY);
        } else {
            row2(p, m->cs[v], 1, m->ca[u], -1, -m->lat[u], INFINITY);
        }
    }
    free(e);
    /* a send that joins starts, and arrives, with its group; the group's
     * bytes add up through f */
    for (int x = 0; x < g->ncand; x++) {
        int v = g->cand[x], u = g->cpred[v];
        row2(p, m->cs[v], 1, m->cs[u], -1, 0, INFINITY);
        double ME = fmax(0, m->ubs[v] - m->lbs[u]);
        row3(p, m->cs[v], 1, m->cs[u], -1, m->cy[v], ME, -INFINITY, ME);
        double MF = fmax(0, m->uba[u] + m->beta[v] - m->lba[v]);
        row3(p, m->cf[v], 1, m->cf[u], -1, m->cy[v], -MF, m->beta[v] - MF, INFINITY);
        double MA = fmax(0, m->uba[v] - m->lba[u]);
        row3(p, m->ca[u], 1, m->ca[v], -1, m->cy[v], -MA, -MA, INFINITY);
    }
    /* group size: no G binaries in a row all 1 */
    int *chain = xcalloc((size_t)(n > 0 ? n : 1), sizeof *chain);
    int *cc = xmalloc((size_t)(g->G > 0 ? g->G : 1) * sizeof *cc);
    double *cv = xmalloc((size_t)(g->G > 0 ? g->G : 1) * sizeof *cv);
    for (int x = 0; x < g->ncand; x++) {
        int v = g->cand[x], u = g->cpred[v];
        chain[v] = (g->cpred[u] >= 0 ? chain[u] : 0) + 1;
        if (chain[v] < g->G)
            continue;
        int w = v;
        for (int k = 0; k < g->G; k++, w = g->cpred[w]) {
            cc[k] = m->cy[w];
            cv[k] = 1;
        }
        lp_add_row(p, NULL, -INFINITY, g->G - 1, g->G, cc, cv);
    }
    free(chain);
    free(cc);
    free(cv);
    add_work_cuts(c, g, m);
    /* makespan: after every ready time that nothing else waits on */
    for (int q = 0; q < n; q++)
        if (!has_out[q] || m->red[q] > 0)
            row_after_ready(m, m->cz, q);
    free(has_out);
}

/* The incumbent for GLPK: the schedule of the joins y, in MILP columns. */
static double *milp_incumbent(const ctx *c, const groups *g, const milp *m,
                              const unsigned char *y, const part *p, const sched *S)
{
    int n = c->n, nc = lp_ncols(m->p);
    double *x = xcalloc((size_t)nc, sizeof *x);
    int *gpos = xcalloc((size_t)(n > 0 ? n : 1), sizeof *gpos);
    x[m->cz] = S->makespan;
    for (int q = 0; q < n; q++) {
        int T = p->tr[c->ord[q]];
        int joined = g->cpred[q] >= 0 && y[q];
        gpos[q] = joined ? gpos[g->cpred[q]] + 1 : 1;
        x[m->cs[q]] = S->start[T];
        x[m->ca[q]] = S->end[T];
        if (m->cf[q] >= 0)
            x[m->cf[q]] = fmin(S->end[T] - rt_lat(c, q),
                               S->start[T] + m->alpha[q] + gpos[q] * m->beta[q]);
        if (m->cy[q] >= 0)
            x[m->cy[q]] = joined ? 1 : 0;
    }
    free(gpos);
    double P = 0, M = 0;
    for (int e = 0; e < m->nce; e++) {
        int q = m->ce_q[e];
        double w = m->beta[q] + m->alpha[q];
        int yq = !m->ce_first[e] && m->cy[q] >= 0 && y[q];
        P = (m->ce_first[e] ? 0 : P) + w - (yq ? m->alpha[q] : 0);
        double cand = x[m->cs[q]] - P + w;
        M = m->ce_first[e] ? cand : fmax(M, cand);
        x[m->ce_P[e]] = P;
        x[m->ce_M[e]] = M;
    }
    return x;
}

/* ------------------------------------------------------------ stage 3 */

void contig_opts_default(contig_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit_s = 60;
    o->mip_gap = 0;
    o->quiet = 0;
    o->solver_verbose = 0;
    o->backend = LP_GLPK;
    o->alpha_frac = 0.25;
    o->nic_always = 1;
    o->max_group = MAX_CNT;
    o->local_search = 1;
    o->milp = 1;
    o->cuts = 1;
    o->heuristics = 0;
}

static int check_opts(const contig_opts *o, tc_err *err)
{
    if (isnan(o->time_limit_s) || isnan(o->mip_gap) || o->mip_gap < 0)
        return tc_err_set(err, TC_INPUT, "contig: time limit and gap must be numbers, gap >= 0");
    if (isnan(o->alpha_frac) || o->alpha_frac < 0)
        return tc_err_set(err, TC_INPUT, "contig: alpha_frac must be >= 0");
    if (o->max_group < 2 || o->max_group > MAX_CNT)
        return tc_err_set(err, TC_INPUT, "contig: max_group must be 2..%d, got %d", MAX_CNT,
                          o->max_group);
    return TC_OK;
}

static void stats_init(contig_stats *st, int n)
{
    memset(st, 0, sizeof *st);
    st->nsends = n;
    st->status = LP_UNSOLVED;
    st->objective = st->best_bound = st->gap = st->milp_exact_us = NAN;
    st->incumbent_used = -1;
}

/* Solve the MILP seeded with the joins y (makespan T); on a usable answer
 * overwrite y with its joins and set *used.  TC_OK also when the solver
 * gave nothing usable (the incumbent stays); TC_STOP on a stop request and
 * TC_INPUT when GLPK exceeded its memory limit, with err set. */
static int run_milp(const ctx *c, const groups *g, const sched *S1, unsigned char *y,
                    double T, const contig_opts *o, contig_stats *st, int *used, tc_err *err)
{
    milp m;
    milp_build(c, g, S1, T, &m);
    st->ncols = lp_ncols(m.p);
    st->nrows = lp_nrows(m.p);
    st->nnz = lp_nnz(m.p);
    if (!o->quiet)
        fprintf(stderr,
                "contig: %d sends, %d candidates on %d pairs; MILP %d columns (%d binary), "
                "%d rows, %d nonzeros; incumbent %.4g us (no groups %.4g us)\n",
                c->n, g->ncand, st->candidate_pairs, st->ncols, g->ncand, st->nrows, st->nnz,
                T, st->ungrouped_us);
    part p;
    contig_part_alloc(&p, c->n);
    sched S;
    tc_err e;
    *used = 0;
    if (contig_eval_joins(c, g, y, &p, &S, &e) != TC_OK) {     /* cannot happen: checked before */
        snprintf(st->msg, sizeof st->msg, "incumbent not schedulable: %.200s", e.msg);
        contig_part_free(&p);
        milp_free(&m);
        return TC_OK;
    }
    double *x = milp_incumbent(c, g, &m, y, &p, &S);
    contig_sched_free(&S);
    contig_part_free(&p);
    lp_opts lo;
    lp_opts_init(&lo);
    lo.time_limit_s = o->time_limit_s;
    lo.mip_gap = o->mip_gap;
    lo.presolve = 0;
    lo.verbose = o->solver_verbose;
    lo.backend = o->backend;
    lo.incumbent = x;
    lo.cuts = o->cuts;
    lo.heuristics = o->heuristics;
    lo.mem_limit_mb = o->mem_limit_mb;
    if (!o->quiet) {
        lo.progress = lp_progress_stderr;
        lo.progress_ctx = (void *)(o->backend == LP_CBC ? "contig: CBC" : "contig: GLPK");
    }
    lp_result r;
    int rc = lp_solve(m.p, &lo, &r, &e);
    st->seconds = r.seconds;
    st->status = r.status;
    st->objective = r.objective;
    st->best_bound = r.best_bound;
    st->gap = r.gap;
    st->incumbent_used = r.incumbent_used;
    st->nodes = r.nodes;
    int out = TC_OK;
    if (rc == TC_STOP || (rc != TC_OK && r.out_of_memory)) {
        out = tc_err_set(err, rc, "contiguity MILP: %s", e.msg);
        snprintf(st->msg, sizeof st->msg, "%.200s", e.msg);
    } else if (rc != TC_OK) {
        snprintf(st->msg, sizeof st->msg, "%s failed (%.200s); kept the incumbent",
                 lp_backend_name(o->backend), e.msg);
    } else if (r.status == LP_OPTIMAL || r.status == LP_FEASIBLE) {
        for (int q = 0; q < c->n; q++)
            if (m.cy[q] >= 0)
                y[q] = lp_value(m.p, m.cy[q]) > 0.5;
        *used = 1;
        snprintf(st->msg, sizeof st->msg, "%s: %.200s", lp_backend_name(o->backend), r.msg);
    } else {
        snprintf(st->msg, sizeof st->msg, "%s gave no solution (%s); kept the incumbent",
                 lp_backend_name(o->backend), lp_status_name(r.status));
    }
    free(x);
    milp_free(&m);
    return out;
}

/* Makespan of joins y as the executor makes it (exec = 1) or in the MILP's
 * fixed-order model (exec = 0). */
static int makespan_of(const ctx *c, const groups *g, const unsigned char *y, int exec,
                       double *mk, tc_err *err)
{
    part p;
    contig_part_alloc(&p, c->n);
    sched S;
    int rc = exec ? contig_eval_exec(c, g, y, &p, &S, err)
                  : contig_eval_joins(c, g, y, &p, &S, err);
    if (rc == TC_OK) {
        *mk = S.makespan;
        contig_sched_free(&S);
    }
    contig_part_free(&p);
    return rc;
}

static int solve_groups(const ctx *c, const groups *g, const sched *S1, const contig_opts *o,
                        unsigned char *y, contig_stats *st, tc_err *err)
{
    double mk;
    int rc = makespan_of(c, g, y, 1, &mk, err);
    if (rc == TC_OK && o->local_search && g->ncand > 0)
        rc = contig_local_search(c, g, y, &mk, err);
    if (rc != TC_OK)
        return rc;
    st->incumbent_us = mk;
    if (!o->milp || g->ncand == 0) {
        snprintf(st->msg, sizeof st->msg, "%s",
                 g->ncand == 0 ? "no grouping candidates: no MILP needed"
                               : "MILP off: local search only");
        return TC_OK;
    }
    if (g->ncand > CONTIG_MILP_CANDIDATES) {
        /* about 12 columns and 60 nonzeros per send: 2 M sends with 780 k
         * candidates (AllToAll on 1024 GPUs) built 9.8 M columns and took
         * 15 GiB before GLPK's first node */
        snprintf(st->msg, sizeof st->msg,
                 "%d grouping candidates, more than the MILP takes (%d): local search only",
                 g->ncand, CONTIG_MILP_CANDIDATES);
        return TC_OK;
    }
    /* the MILP's incumbent and bounds are in its own (fixed-order) model */
    double T;
    tc_err ignored;
    if (makespan_of(c, g, y, 0, &T, &ignored) != TC_OK) {
        snprintf(st->msg, sizeof st->msg,
                 "incumbent has no fixed-order schedule: MILP skipped, local search only");
        return TC_OK;
    }
    unsigned char *ym = xmalloc((size_t)c->n);
    memcpy(ym, y, (size_t)c->n);
    int used = 0;
    rc = run_milp(c, g, S1, ym, T, o, st, &used, err);
    if (rc != TC_OK) {
        free(ym);
        return rc;
    }
    if (used) {
        double mk2 = INFINITY;
        rc = makespan_of(c, g, ym, 1, &mk2, &ignored);
        if (rc == TC_OK) {
            st->milp_exact_us = mk2;
            if (o->local_search)
                rc = contig_local_search(c, g, ym, &mk2, err);
            if (rc != TC_OK) {
                free(ym);
                return rc;
            }
            if (mk2 <= mk)
                memcpy(y, ym, (size_t)c->n);
        }
    }
    free(ym);
    return TC_OK;
}

int contig_solve(const algo *in, const topo *t, double chunk_bytes, const contig_opts *o,
                 algo **out, contig_stats *st, tc_err *err)
{
    double t0 = wall_s();
    contig_opts dflt;
    if (!o) {
        contig_opts_default(&dflt);
        o = &dflt;
    }
    contig_stats local;
    if (!st)
        st = &local;
    stats_init(st, in ? in->nsends : 0);
    if (out)
        *out = NULL;
    if (!out)
        return tc_err_set(err, TC_INPUT, "contig: no output pointer");
    int rc = check_opts(o, err);
    if (rc != TC_OK)
        return rc;
    ctx c;
    rc = contig_ctx_init(&c, in, t, chunk_bytes, err);
    if (rc != TC_OK) {
        contig_ctx_free(&c);
        return rc;
    }
    st->input_us = input_makespan(&c);
    part p1;
    contig_part_alloc(&p1, c.n);
    contig_part_from_joins(&c, NULL, NULL, &p1);
    contig_assign_slots(&c, &p1);
    sched S1;
    rc = contig_asap(&c, &p1, 1, &S1, err);
    contig_part_free(&p1);
    if (rc != TC_OK) {
        contig_ctx_free(&c);
        return rc;
    }
    st->ungrouped_us = S1.makespan;
    groups g;
    contig_find_candidates(&c, &S1, o, &g, &st->candidate_pairs);
    st->candidates = g.ncand;
    unsigned char *y = xcalloc((size_t)(c.n > 0 ? c.n : 1), 1);
    rc = solve_groups(&c, &g, &S1, o, y, st, err);
    if (rc == TC_OK) {
        part p;
        contig_part_alloc(&p, c.n);
        sched S;
        rc = contig_eval_exec(&c, &g, y, &p, &S, err);
        if (rc == TC_OK) {
            *out = make_output(&c, &p, &S, st);
            contig_sched_free(&S);
        }
        contig_part_free(&p);
    }
    free(y);
    contig_groups_free(&g);
    contig_sched_free(&S1);
    contig_ctx_free(&c);
    st->total_seconds = wall_s() - t0;
    int failed = st->status == LP_UNSOLVED && st->ncols > 0;
    if (rc == TC_OK && !o->quiet) {
        /* the result is the executor's replay of the grouping; the rest are
         * the MILP's fixed-order model, which a replay may not follow */
        char milp[64] = "", bound[64] = "";
        if (isfinite(st->objective))
            snprintf(milp, sizeof milp, ", MILP %.4g", st->objective);
        if (isfinite(st->best_bound))
            snprintf(bound, sizeof bound, ", bound %.4g, gap %.3g", st->best_bound, st->gap);
        fprintf(stderr,
                "contig: %s: makespan %.4g us as the executor replays it (fixed-order model: "
                "input %.4g, no groups %.4g%s%s), %d groups holding %d of %d sends; %s %.2f s, "
                "total %.2f s%s%s\n",
                failed ? "MILP failed" : st->status == LP_UNSOLVED ? "no MILP"
                                                                   : lp_status_name(st->status),
                st->result_us, st->input_us, st->ungrouped_us, milp, bound,
                st->ngroups, st->grouped_sends, st->nsends, lp_backend_name(o->backend),
                st->seconds, st->total_seconds, failed ? "; " : "", failed ? st->msg : "");
    }
    return rc;
}
