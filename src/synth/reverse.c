/* reverse.c — ReduceScatter from a reversed AllGather, AllReduce as
 * ReduceScatter then AllGather (see reverse.h).  The AllGather is checked to
 * be a spanning tree per chunk before anything is reversed, because a rank
 * the tree misses would silently drop its input from the sum. */
#include "reverse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"

#define REV_TOL 1e-9

const char *reverse_join_name(reverse_join j)
{
    return j == REVERSE_JOIN_PIPELINE ? "pipeline" : "barrier";
}

/* The AllGather must be a tree per chunk reaching every rank once; fills
 * recv[(o*k + j)*n + r] with the send bringing chunk (o, j) to r (-1 at o). */
static int check_allgather(const algo *ag, int *recv, tc_err *err)
{
    int n = ag->nranks, k = ag->chunks_per_rank;
    for (int i = 0; i < n * k * n; i++)
        recv[i] = -1;
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &ag->sends[i];
        if (s->origin < 0 || s->origin >= n || s->index < 0 || s->index >= k)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d: chunk %d:%d does not exist (%d ranks, "
                              "%d chunks per rank)", i, s->origin, s->index, n, k);
        if (s->src < 0 || s->src >= n || s->dst < 0 || s->dst >= n || s->src == s->dst)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d: ranks %d -> %d are not two of the "
                              "%d ranks", i, s->src, s->dst, n);
        if (s->reduce)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d (%d -> %d) has reduce=1: an AllGather "
                              "only copies", i, s->src, s->dst);
        if (!isfinite(s->t_send) || !isfinite(s->t_arrive) || s->t_arrive < s->t_send ||
            s->t_send < 0)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d (%d -> %d): times [%g, %g] us are not "
                              "0 <= t_send <= t_arrive", i, s->src, s->dst, s->t_send,
                              s->t_arrive);
        if (s->dst == s->origin)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d sends chunk %d:%d back to its origin "
                              "%d", i, s->origin, s->index, s->origin);
        int *slot = &recv[(s->origin * k + s->index) * n + s->dst];
        if (*slot >= 0)
            return tc_err_set(err, TC_INPUT,
                              "reverse: rank %d receives chunk %d:%d twice (sends %d and %d): "
                              "reversed, its partial would be counted twice", s->dst, s->origin,
                              s->index, *slot, i);
        *slot = i;
    }
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &ag->sends[i];
        if (s->src == s->origin)
            continue;
        int in = recv[(s->origin * k + s->index) * n + s->src];
        double lim = s->t_send + REV_TOL * (1 + fabs(s->t_send));
        if (in < 0 || ag->sends[in].t_arrive > lim)
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d: rank %d forwards chunk %d:%d at %g us "
                              "before it holds it", i, s->src, s->origin, s->index, s->t_send);
    }
    for (int o = 0; o < n; o++)
        for (int j = 0; j < k; j++)
            for (int r = 0; r < n; r++)
                if (r != o && recv[(o * k + j) * n + r] < 0)
                    return tc_err_set(err, TC_INPUT,
                                      "reverse: chunk %d:%d never reaches rank %d in the "
                                      "AllGather: reversed, rank %d's input would be left out "
                                      "of the sum", o, j, r, r);
    return TC_OK;
}

typedef struct {
    algo_send s;
    int remote;     /* sender on another node than the receiver */
    int pos;        /* input position: the last tie-break */
} rev_item;

static int cmp_dbl(double a, double b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

static int cmp_item(const void *pa, const void *pb)
{
    const rev_item *a = pa, *b = pb;
    int c;
    if ((c = cmp_dbl(a->s.t_arrive, b->s.t_arrive)))
        return c;
    if (a->remote != b->remote)
        return a->remote - b->remote;
    if ((c = cmp_dbl(a->s.t_send, b->s.t_send)))
        return c;
    if (a->s.src != b->s.src)
        return a->s.src - b->s.src;
    if (a->s.index != b->s.index)
        return a->s.index - b->s.index;
    return a->pos - b->pos;
}

int reverse_reducescatter(const algo *ag, const topo *t, algo **out, tc_err *err)
{
    *out = NULL;
    if (!ag)
        return tc_err_set(err, TC_INPUT, "reverse: no AllGather to reverse");
    if (ag->coll != COLL_ALLGATHER)
        return tc_err_set(err, TC_INPUT,
                          "reverse: the ReduceScatter is built from an AllGather, got %s",
                          coll_name(ag->coll));
    int n = ag->nranks, k = ag->chunks_per_rank;
    if (n < 1 || k < 1)
        return tc_err_set(err, TC_INPUT, "reverse: %d ranks with %d chunks per rank", n, k);
    if (t && t->nranks != n)
        return tc_err_set(err, TC_INPUT,
                          "reverse: the AllGather has %d ranks but topology %s has %d", n,
                          t->name ? t->name : "(unnamed)", t->nranks);
    int *recv = xmalloc((size_t)n * k * n * sizeof *recv);
    int rc = check_allgather(ag, recv, err);
    free(recv);
    if (rc != TC_OK)
        return rc;

    double T = 0;
    for (int i = 0; i < ag->nsends; i++)
        if (ag->sends[i].t_arrive > T)
            T = ag->sends[i].t_arrive;
    rev_item *it = xmalloc((size_t)(ag->nsends > 0 ? ag->nsends : 1) * sizeof *it);
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &ag->sends[i];
        rev_item *v = &it[i];
        v->s = *s;
        v->s.index = s->origin * k + s->index;
        v->s.src = s->dst;
        v->s.dst = s->src;
        v->s.t_send = T - s->t_arrive;
        v->s.t_arrive = T - s->t_send;
        v->s.reduce = 1;
        v->remote = t ? topo_node_of(t, v->s.src) != topo_node_of(t, v->s.dst) : 1;
        v->pos = i;
    }
    qsort(it, (size_t)ag->nsends, sizeof *it, cmp_item);
    algo *a = algo_new(COLL_REDUCESCATTER, n, n * k);
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &it[i].s;
        algo_send *d = algo_add_send(a, s->origin, s->index, s->src, s->dst, s->t_send,
                                     s->t_arrive);
        d->group = s->group;
        d->reduce = 1;
    }
    free(it);
    a->predicted_us = T;
    *out = a;
    return TC_OK;
}

/* AllGather-phase order for the pipeline join: by the AllGather's own send
 * time, then pair and group, so a group's members are adjacent and a hop
 * comes after the hop that fed it. */
typedef struct {
    double ts;
    int src, dst, group, i;
} ag_key;

static int cmp_ag_key(const void *pa, const void *pb)
{
    const ag_key *a = pa, *b = pb;
    int c;
    if ((c = cmp_dbl(a->ts, b->ts)))
        return c;
    if (a->src != b->src)
        return a->src - b->src;
    if (a->dst != b->dst)
        return a->dst - b->dst;
    if (a->group != b->group)
        return a->group - b->group;
    return a->i - b->i;
}

/* Per-chunk shifts move the members of one AllGather group by different
 * amounts and a hop of a delayed group ahead of what feeds it; re-time
 * the AllGather phase (a->sends[from..]) so that a group starts together,
 * when every member's chunk is at the sender and not before its own
 * shifted time, and a hop after its feeding hop arrives.  Returns the
 * latest arrival. */
static double pipeline_fix(algo *a, int from, const algo *ag, const double *done, double end)
{
    int n = ag->nranks, k = ag->chunks_per_rank, m = ag->nsends;
    ag_key *key = xmalloc((size_t)(m > 0 ? m : 1) * sizeof *key);
    for (int i = 0; i < m; i++) {
        const algo_send *s = &ag->sends[i];
        key[i] = (ag_key){s->t_send, s->src, s->dst, s->group, i};
    }
    qsort(key, (size_t)m, sizeof *key, cmp_ag_key);
    double *at = xmalloc((size_t)n * k * n * sizeof *at);   /* chunk c at rank r */
    for (int c = 0; c < n * k; c++)
        for (int r = 0; r < n; r++)
            at[c * n + r] = r == c / k ? done[c] : 0;
    for (int u = 0; u < m;) {
        int v = u + 1;
        if (key[u].group >= 0)
            while (v < m && key[v].ts == key[u].ts && key[v].src == key[u].src &&
                   key[v].dst == key[u].dst && key[v].group == key[u].group)
                v++;
        double start = 0;
        for (int w = u; w < v; w++) {
            const algo_send *d = &a->sends[from + key[w].i];
            double need = fmax(d->t_send, at[d->index * n + d->src]);
            if (need > start)
                start = need;
        }
        for (int w = u; w < v; w++) {
            const algo_send *s = &ag->sends[key[w].i];
            algo_send *d = &a->sends[from + key[w].i];
            d->t_send = start;
            d->t_arrive = start + (s->t_arrive - s->t_send);
            at[d->index * n + d->dst] = d->t_arrive;
            if (d->t_arrive > end)
                end = d->t_arrive;
        }
        u = v;
    }
    free(at);
    free(key);
    return end;
}

int reverse_allreduce(const algo *rs, const algo *ag, reverse_join join, algo **out,
                      tc_err *err)
{
    *out = NULL;
    if (!rs || !ag)
        return tc_err_set(err, TC_INPUT, "reverse: AllReduce needs a ReduceScatter and an "
                          "AllGather");
    if (rs->coll != COLL_REDUCESCATTER || ag->coll != COLL_ALLGATHER)
        return tc_err_set(err, TC_INPUT,
                          "reverse: AllReduce joins a ReduceScatter and an AllGather, got %s "
                          "and %s", coll_name(rs->coll), coll_name(ag->coll));
    int n = ag->nranks, k = ag->chunks_per_rank;
    if (rs->nranks != n || k < 1 || rs->chunks_per_rank != n * k)
        return tc_err_set(err, TC_INPUT,
                          "reverse: the ReduceScatter (%d ranks, %d chunks per rank) does not "
                          "fit the AllGather (%d ranks, %d chunks per rank: expected %d)",
                          rs->nranks, rs->chunks_per_rank, n, k, n * k);
    if (join != REVERSE_JOIN_BARRIER && join != REVERSE_JOIN_PIPELINE)
        return tc_err_set(err, TC_INPUT, "reverse: unknown join %d", (int)join);
    int C = n * k;
    double *done = xcalloc((size_t)C, sizeof *done);
    double T = rs->predicted_us > 0 ? rs->predicted_us : 0;
    for (int i = 0; i < rs->nsends; i++) {
        const algo_send *s = &rs->sends[i];
        if (!s->reduce || s->index < 0 || s->index >= C || s->src < 0 || s->src >= n ||
            s->dst < 0 || s->dst >= n || !isfinite(s->t_arrive)) {
            free(done);
            return tc_err_set(err, TC_INPUT,
                              "reverse: ReduceScatter send %d (%d -> %d, chunk %d) is not a "
                              "timed reduce of one of the %d chunks", i, s->src, s->dst,
                              s->index, C);
        }
        if (s->t_arrive > T)
            T = s->t_arrive;
        if (s->dst == s->index / k && s->t_arrive > done[s->index])
            done[s->index] = s->t_arrive;
    }
    /* Where each chunk's AllGather tree starts: its first send from the origin. */
    double *first = xmalloc((size_t)C * sizeof *first);
    for (int c = 0; c < C; c++)
        first[c] = INFINITY;
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &ag->sends[i];
        if (s->origin >= 0 && s->origin < n && s->index >= 0 && s->index < k &&
            s->src == s->origin && s->t_send < first[s->origin * k + s->index])
            first[s->origin * k + s->index] = s->t_send;
    }
    algo *a = algo_new(COLL_ALLREDUCE, n, C);
    int groups = 0;     /* AllGather groups are renumbered after the ReduceScatter's */
    for (int i = 0; i < rs->nsends; i++) {
        const algo_send *s = &rs->sends[i];
        algo_send *d = algo_add_send(a, s->origin, s->index, s->src, s->dst, s->t_send,
                                     s->t_arrive);
        d->group = s->group;
        d->reduce = 1;
        if (s->group >= groups)
            groups = s->group + 1;
    }
    double end = join == REVERSE_JOIN_BARRIER ? T : 0;
    for (int i = 0; i < ag->nsends; i++) {
        const algo_send *s = &ag->sends[i];
        if (s->reduce || s->origin < 0 || s->origin >= n || s->index < 0 || s->index >= k ||
            !isfinite(s->t_send) || !isfinite(s->t_arrive)) {
            algo_free(a);
            free(done);
            free(first);
            return tc_err_set(err, TC_INPUT,
                              "reverse: AllGather send %d (%d -> %d, chunk %d:%d) is not a "
                              "timed copy of one of the %d x %d chunks", i, s->src, s->dst,
                              s->origin, s->index, n, k);
        }
        int c = s->origin * k + s->index;
        double shift = join == REVERSE_JOIN_BARRIER ? T : done[c] - first[c];
        algo_send *d = algo_add_send(a, s->origin, c, s->src, s->dst, s->t_send + shift,
                                     s->t_arrive + shift);
        d->group = s->group >= 0 ? groups + s->group : -1;
        if (d->t_arrive > end)
            end = d->t_arrive;
    }
    free(first);
    if (join == REVERSE_JOIN_PIPELINE)
        end = pipeline_fix(a, rs->nsends, ag, done, T);
    free(done);
    a->predicted_us = end;
    *out = a;
    return TC_OK;
}
