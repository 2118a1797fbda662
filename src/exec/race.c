/* race.c — happens-before hazards of a schedule: data races between the
 * threadblocks of a rank, reads of chunks nothing has written, and cycles
 * that deadlock (see race.h for the semantics).
 *
 * Why it is shaped this way: a 1024-rank schedule has millions of steps and
 * thousands of threadblocks, so a vector clock over every tb at every step
 * does not fit.  The check therefore works in stages, each paid only where
 * needed:
 *  1. Order.  The happens-before graph (program order, dependencies, the
 *     k-th send -> k-th receive of each connection) is sorted topologically
 *     (Kahn, first in first out, seeded in step order, so deterministic).
 *     Steps left over lie on or behind a cycle: one cycle is reported as a
 *     deadlock, and the steps that can never run are left out of the rest.
 *  2. Candidates.  Per rank, every chunk slot's accesses are listed (sorted
 *     by slot, then step).  Only a slot touched by two tbs with a write can
 *     race; only the tbs touching such a slot ("racing tbs") get a clock
 *     dimension.  If no rank has such a slot the race part costs nothing.
 *  3. On-rank clocks.  Per rank, a vector clock over its racing tbs is
 *     carried along the rank's own edges (program order, dependencies).  In
 *     real schedules almost every ordering between two tbs of a rank is of
 *     this kind, so this settles most pairs, at (rank's steps) x (its racing
 *     tbs) entries.  Locally ordered implies ordered, so this is exact for
 *     the pairs it settles.
 *  4. Disproof by other orders.  If any linear extension of happens-before
 *     puts b before a, a does not happen before b.  Three more topological
 *     orders (writes delayed, writes first, seeds reversed; O(steps) each)
 *     disprove most remaining orderings, so a pair unordered in both
 *     directions is usually confirmed as a race, and a read before every
 *     write of its slot as uninitialized, with no clock at all.
 *  5. Cross-rank reachability.  For what is still open, one scalar clock per
 *     involved tb X — "the latest step of X that happens before this step" —
 *     is carried over the main topological order, from X's first queried step
 *     to the last queried target.  This follows send/recv chains through
 *     other ranks, and is exact.
 * The work (clock entries) of stages 3 and 5 is known before they run; the
 * race check is skipped with a reason when it would exceed the budget.
 * Uninitialized reads use the same stages restricted to the tbs that wrote
 * the slots being read, under a cap of at least the default budget, so they
 * are checked even when a small budget skips the races; a read with no
 * writer in another tb needs no clock at all. */
#include "race.h"
#include "../util/mem.h"

#include "layout.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET 200000000LL
#define REPORT_CAP 20                   /* races / uninit steps listed one by one */
#define PAIR_CAP (1 << 20)              /* unordered-on-rank pairs kept for stages 4-5 */
#define WRITER_CAP (1 << 21)            /* writer entries kept for stage 4-5 reads */
#define TABLE_CAP 50000000LL            /* entries of one rank's clock table */
#define RANK_REC_CAP 50000000LL         /* chunk accesses of one rank */
#define SIZE_CAP (INT_MAX / 4)          /* steps or tbs in the schedule */

enum { FR = 1, FW = 2, FS = 4 };        /* access flags: reads data / writes / a range
                                           of the step starts at this slot */
enum { PRED_PREV, PRED_DEP, PRED_PAIR };

/* ---------------------------------------------------------------- memory */

static void *xalloc(size_t n, size_t size, int zero)
{
    if (n == 0)
        n = 1;
    void *p = zero ? calloc(n, size) : malloc(n * size);
    if (!p)
        tc_oom();
    return p;
}


/* qsort, but fine with an empty (possibly NULL) array. */
static void sort_items(void *base, int n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, (size_t)n, size, cmp);
}

#define PUSH(arr, n, cap, val)                                          \
    do {                                                                \
        (arr) = xgrow((arr), &(cap), (n) + 1, sizeof *(arr));           \
        (arr)[(n)++] = (val);                                           \
    } while (0)

/* ----------------------------------------------------------------- graph */

/* Every step of the schedule gets a global id; the steps of one tb are
 * consecutive, tbs of one rank are consecutive, ranks in order. */
typedef struct {
    const prog *p;
    int nr, ntb, S;
    int *rank_tb0;          /* [nr+1] first global tb of each rank */
    int *tb_rank;           /* [ntb] */
    int *tb_step0;          /* [ntb+1] first global step of each tb */
    const prog_tb **tbp;    /* [ntb] */
    int *st_tb;             /* [S] global tb of each step */
    int *dep;               /* [S] step this one depends on, -1 none */
    int *pair;              /* [S] send this step receives, -1 none */
    int *succ0, *succ;      /* successors by dependency or pairing (CSR) */
    int *pos;               /* [S] topological position, -1 = never runs */
    int *ord;               /* [S] steps by position; nrun of them run */
    int nrun;
    int *rord0, *rord;      /* per rank, its runnable steps in topological order */
    layout *lay;            /* [nr] */
    int *lay_ok;            /* [nr] 0: buffer sizes unusable, no accesses */
} graph;

static int idx_of(const graph *g, int x) { return x - g->tb_step0[g->st_tb[x]]; }
static int rank_of(const graph *g, int x) { return g->tb_rank[g->st_tb[x]]; }

static int ltb_of(const graph *g, int x)
{
    int t = g->st_tb[x];
    return t - g->rank_tb0[g->tb_rank[t]];
}

static const prog_step *step_at(const graph *g, int x)
{
    return &g->tbp[g->st_tb[x]]->steps[idx_of(g, x)];
}

static int nsteps_of(const prog_tb *tb) { return tb->nsteps > 0 && tb->steps ? tb->nsteps : 0; }
static int ntbs_of(const prog_gpu *gp) { return gp->ntbs > 0 && gp->tbs ? gp->ntbs : 0; }

static void graph_free(graph *g)
{
    free(g->rank_tb0);
    free(g->tb_rank);
    free(g->tb_step0);
    free(g->tbp);
    free(g->st_tb);
    free(g->dep);
    free(g->pair);
    free(g->succ0);
    free(g->succ);
    free(g->pos);
    free(g->ord);
    free(g->rord0);
    free(g->rord);
    free(g->lay);
    free(g->lay_ok);
}

/* Index of the tb with this id on a gpu (ids should be dense; cope if not). */
static int tb_index_by_id(const prog_gpu *gp, int id)
{
    int n = ntbs_of(gp);
    if (id < 0)
        return -1;
    if (id < n && gp->tbs[id].id == id)
        return id;
    int found = -1;
    for (int t = 0; t < n; t++)
        if (gp->tbs[t].id == id) {
            if (found >= 0)
                return -1;
            found = t;
        }
    return found;
}

static int chunks_ok(int n) { return n >= 0 && n <= (1 << 28); }

static void build_layouts(graph *g, int inplace)
{
    const prog *p = g->p;
    /* In-place aliasing divides by ngpus and multiplies by the rank: only
     * trust it with sane shape numbers. */
    int alias_ok = p->ngpus >= 1 && p->nchunksperloop >= 1 &&
                   (long long)g->nr * p->nchunksperloop <= (1 << 28);
    for (int r = 0; r < g->nr; r++) {
        const prog_gpu *gp = &p->gpus[r];
        g->lay_ok[r] = chunks_ok(gp->i_chunks) && chunks_ok(gp->o_chunks) &&
                       chunks_ok(gp->s_chunks);
        g->lay[r] = g->lay_ok[r] ? layout_of(p, r, inplace && alias_ok) : (layout){0};
    }
}

static void resolve_deps(graph *g)
{
    for (int r = 0; r < g->nr; r++) {
        const prog_gpu *gp = &g->p->gpus[r];
        for (int t = g->rank_tb0[r]; t < g->rank_tb0[r + 1]; t++)
            for (int x = g->tb_step0[t]; x < g->tb_step0[t + 1]; x++) {
                const prog_step *s = step_at(g, x);
                g->dep[x] = -1;
                if (s->depid < 0 || s->deps < 0)
                    continue;
                int dt = tb_index_by_id(gp, s->depid);
                if (dt < 0 || s->deps >= nsteps_of(&gp->tbs[dt]))
                    continue;
                g->dep[x] = g->tb_step0[g->rank_tb0[r] + dt] + s->deps;
            }
    }
}

typedef struct { int a, b, c, tb; } conn;   /* connection (chan c, a -> b) of tb */

static int conn_cmp(const void *x, const void *y)
{
    const conn *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->c != q->c) return p->c < q->c ? -1 : 1;
    return (p->tb > q->tb) - (p->tb < q->tb);
}

static int conn_same(const conn *p, const conn *q) { return p->a == q->a && p->b == q->b && p->c == q->c; }

/* The k-th sending step of tb st happens before the k-th receiving step of tb rt. */
static void pair_tbs(graph *g, int st, int rt)
{
    int xs = g->tb_step0[st], xr = g->tb_step0[rt];
    for (;;) {
        while (xs < g->tb_step0[st + 1] && !step_sends(step_at(g, xs)->type))
            xs++;
        while (xr < g->tb_step0[rt + 1] && !step_receives(step_at(g, xr)->type))
            xr++;
        if (xs >= g->tb_step0[st + 1] || xr >= g->tb_step0[rt + 1])
            return;
        g->pair[xr++] = xs++;
    }
}

/* Connections with exactly one sending and one receiving tb are paired;
 * duplicates, missing ends and self-connections are the static checker's. */
static void resolve_pairs(graph *g)
{
    conn *snd = xalloc((size_t)g->ntb, sizeof *snd, 0), *rcv = xalloc((size_t)g->ntb, sizeof *rcv, 0);
    int ns = 0, nv = 0;
    for (int x = 0; x < g->S; x++)
        g->pair[x] = -1;
    for (int t = 0; t < g->ntb; t++) {
        const prog_tb *tb = g->tbp[t];
        int r = g->tb_rank[t];
        if (tb->send >= 0 && tb->send < g->nr && tb->send != r)
            snd[ns++] = (conn){r, tb->send, tb->chan, t};
        if (tb->recv >= 0 && tb->recv < g->nr && tb->recv != r)
            rcv[nv++] = (conn){tb->recv, r, tb->chan, t};
    }
    sort_items(snd, ns, sizeof *snd, conn_cmp);
    sort_items(rcv, nv, sizeof *rcv, conn_cmp);
    int j = 0;
    for (int i = 0; i < ns;) {
        int i2 = i + 1;
        while (i2 < ns && conn_same(&snd[i2], &snd[i]))
            i2++;
        while (j < nv && conn_cmp(&rcv[j], &snd[i]) < 0 && !conn_same(&rcv[j], &snd[i]))
            j++;
        int j2 = j;
        while (j2 < nv && conn_same(&rcv[j2], &snd[i]))
            j2++;
        if (i2 - i == 1 && j2 - j == 1)
            pair_tbs(g, snd[i].tb, rcv[j].tb);
        i = i2;
        j = j2;
    }
    free(snd);
    free(rcv);
}

static int graph_build(graph *g, const prog *p, char *why, size_t whylen)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->nr = p->ngpu > 0 && p->gpus ? p->ngpu : 0;
    long long ntb = 0, S = 0;
    for (int r = 0; r < g->nr; r++) {
        const prog_gpu *gp = &p->gpus[r];
        ntb += ntbs_of(gp);
        for (int t = 0; t < ntbs_of(gp); t++)
            S += nsteps_of(&gp->tbs[t]);
    }
    if (ntb > SIZE_CAP || S > SIZE_CAP) {
        snprintf(why, whylen, "not checked: schedule too large (%lld tbs, %lld steps)", ntb, S);
        return -1;
    }
    g->ntb = (int)ntb;
    g->S = (int)S;
    g->rank_tb0 = xalloc((size_t)g->nr + 1, sizeof(int), 0);
    g->tb_rank = xalloc((size_t)g->ntb, sizeof(int), 0);
    g->tb_step0 = xalloc((size_t)g->ntb + 1, sizeof(int), 0);
    g->tbp = xalloc((size_t)g->ntb, sizeof *g->tbp, 0);
    g->st_tb = xalloc((size_t)g->S, sizeof(int), 0);
    g->dep = xalloc((size_t)g->S, sizeof(int), 0);
    g->pair = xalloc((size_t)g->S, sizeof(int), 0);
    g->lay = xalloc((size_t)g->nr, sizeof *g->lay, 1);
    g->lay_ok = xalloc((size_t)g->nr, sizeof(int), 1);
    int t = 0, x = 0;
    for (int r = 0; r < g->nr; r++) {
        const prog_gpu *gp = &p->gpus[r];
        g->rank_tb0[r] = t;
        for (int k = 0; k < ntbs_of(gp); k++, t++) {
            g->tb_rank[t] = r;
            g->tbp[t] = &gp->tbs[k];
            g->tb_step0[t] = x;
            for (int s = 0; s < nsteps_of(&gp->tbs[k]); s++)
                g->st_tb[x++] = t;
        }
    }
    g->rank_tb0[g->nr] = t;
    g->tb_step0[t] = x;
    resolve_deps(g);
    resolve_pairs(g);
    return 0;
}

/* Successor lists (dependencies and send->recv pairs; the next step of a
 * tb is implicit). */
static void build_successors(graph *g)
{
    int S = g->S;
    g->succ0 = xalloc((size_t)S + 1, sizeof(int), 1);
    for (int x = 0; x < S; x++) {
        if (g->dep[x] >= 0)
            g->succ0[g->dep[x] + 1]++;
        if (g->pair[x] >= 0)
            g->succ0[g->pair[x] + 1]++;
    }
    for (int x = 0; x < S; x++)
        g->succ0[x + 1] += g->succ0[x];
    int *fill = xalloc((size_t)S + 1, sizeof(int), 0);
    memcpy(fill, g->succ0, ((size_t)S + 1) * sizeof(int));
    g->succ = xalloc((size_t)g->succ0[S], sizeof(int), 0);
    for (int x = 0; x < S; x++) {
        if (g->dep[x] >= 0)
            g->succ[fill[g->dep[x]]++] = x;
        if (g->pair[x] >= 0)
            g->succ[fill[g->pair[x]]++] = x;
    }
    free(fill);
}

/* Ways to break ties in Kahn's algorithm.  Each gives a linear extension
 * of happens-before; the first is the main order, the others exist to
 * disprove orderings cheaply (if b comes before a in any extension, a does
 * not happen before b). */
enum { ORD_FIFO, ORD_WRITES_LATE, ORD_WRITES_EARLY, ORD_REVERSED, ORD_COUNT };

static int step_writes(const graph *g, int x) { return step_writes_dst(step_at(g, x)->type); }

/* Kahn's algorithm with tie-break `mode`: sets pos (-1 for steps that never
 * run) and, if given, ord; returns how many steps run. */
static int kahn(const graph *g, int mode, int *pos, int *ord)
{
    int S = g->S, n = 0;
    int classes = mode == ORD_WRITES_LATE || mode == ORD_WRITES_EARLY;
    int *indeg = xalloc((size_t)S, sizeof(int), 0);
    int *qa = xalloc((size_t)S, sizeof(int), 0), *qb = classes ? xalloc((size_t)S, sizeof(int), 0) : NULL;
    int ha = 0, ta = 0, hb = 0, tb = 0;
    for (int x = 0; x < S; x++) {
        indeg[x] = (idx_of(g, x) > 0) + (g->dep[x] >= 0) + (g->pair[x] >= 0);
        pos[x] = -1;
    }
#define READY(y)                                                                    \
    do {                                                                            \
        int y_ = (y);                                                               \
        if (classes && (step_writes(g, y_) == (mode == ORD_WRITES_LATE)))           \
            qb[tb++] = y_;                                                          \
        else                                                                        \
            qa[ta++] = y_;                                                          \
    } while (0)
    for (int k = 0; k < S; k++) {
        int x = mode == ORD_REVERSED ? S - 1 - k : k;
        if (indeg[x] == 0)
            READY(x);
    }
    while (ha < ta || hb < tb) {
        int x = ha < ta ? qa[ha++] : qb[hb++];
        pos[x] = n;
        if (ord)
            ord[n] = x;
        n++;
        int has_next = x + 1 < S && g->st_tb[x + 1] == g->st_tb[x];
        if (mode != ORD_REVERSED && has_next && --indeg[x + 1] == 0)
            READY(x + 1);
        for (int i = 0, m = g->succ0[x + 1] - g->succ0[x]; i < m; i++) {
            int y = g->succ[mode == ORD_REVERSED ? g->succ0[x + 1] - 1 - i : g->succ0[x] + i];
            if (--indeg[y] == 0)
                READY(y);
        }
        if (mode == ORD_REVERSED && has_next && --indeg[x + 1] == 0)
            READY(x + 1);
    }
#undef READY
    free(indeg);
    free(qa);
    free(qb);
    return n;
}

/* The main order, and each rank's runnable steps in it. */
static void order_steps(graph *g)
{
    build_successors(g);
    g->pos = xalloc((size_t)g->S, sizeof(int), 0);
    g->ord = xalloc((size_t)g->S, sizeof(int), 0);
    g->nrun = kahn(g, ORD_FIFO, g->pos, g->ord);

    g->rord0 = xalloc((size_t)g->nr + 1, sizeof(int), 1);
    g->rord = xalloc((size_t)g->nrun, sizeof(int), 0);
    for (int k = 0; k < g->nrun; k++)
        g->rord0[rank_of(g, g->ord[k]) + 1]++;
    for (int r = 0; r < g->nr; r++)
        g->rord0[r + 1] += g->rord0[r];
    int *at = xalloc((size_t)g->nr + 1, sizeof(int), 0);
    memcpy(at, g->rord0, ((size_t)g->nr + 1) * sizeof(int));
    for (int k = 0; k < g->nrun; k++)
        g->rord[at[rank_of(g, g->ord[k])]++] = g->ord[k];
    free(at);
}

/* -------------------------------------------------------------- deadlock */

static int place(char *buf, size_t n, const graph *g, int x)
{
    return snprintf(buf, n, "rank %d tb %d step %d", rank_of(g, x), ltb_of(g, x), idx_of(g, x));
}

/* Every step that never runs has a predecessor that never runs; walking
 * such predecessors from the first one must close a cycle. */
static void report_deadlock(const graph *g, hazard_list *out)
{
    static const char *why[] = {"the previous step of its tb", "its dependency",
                                "the send it receives"};
    int *mark = xalloc((size_t)g->S, sizeof(int), 0);
    int *walk = xalloc((size_t)g->S, sizeof(int), 0);
    int *kind = xalloc((size_t)g->S, sizeof(int), 0);
    for (int x = 0; x < g->S; x++)
        mark[x] = -1;
    int x = 0;
    while (x < g->S && g->pos[x] >= 0)
        x++;
    int len = 0;
    while (x >= 0 && mark[x] < 0) {
        mark[x] = len;
        walk[len] = x;
        int pred = -1, k = 0;
        if (idx_of(g, x) > 0 && g->pos[x - 1] < 0) {
            pred = x - 1;
            k = PRED_PREV;
        } else if (g->dep[x] >= 0 && g->pos[g->dep[x]] < 0) {
            pred = g->dep[x];
            k = PRED_DEP;
        } else if (g->pair[x] >= 0 && g->pos[g->pair[x]] < 0) {
            pred = g->pair[x];
            k = PRED_PAIR;
        }
        kind[len++] = k;
        x = pred;
    }
    if (x >= 0) {
        int c0 = mark[x], n = len - c0;
        int m = c0;                         /* start at the smallest step id */
        for (int i = c0; i < len; i++)
            if (walk[i] < walk[m])
                m = i;
        char msg[400];
        size_t off = 0;
        int shown = n < 4 ? n : 4;
        for (int i = 0; i < shown && off < sizeof msg; i++) {
            int at = c0 + (m - c0 + i) % n;
            int to = c0 + (m - c0 + i + 1) % n;
            off += (size_t)snprintf(msg + off, sizeof msg - off, "%s", i ? ", which waits for " : "waits for ");
            if (off < sizeof msg) {
                if (to == m)
                    off += (size_t)snprintf(msg + off, sizeof msg - off, "this step");
                else
                    off += (size_t)place(msg + off, sizeof msg - off, g, walk[to]);
            }
            if (off < sizeof msg)
                off += (size_t)snprintf(msg + off, sizeof msg - off, " (%s)", why[kind[at]]);
        }
        if (shown < n && off < sizeof msg)
            snprintf(msg + off, sizeof msg - off, ", ... back to this step");
        int x0 = walk[m];
        hazard_add(out, HZ_DEADLOCK, rank_of(g, x0), ltb_of(g, x0), idx_of(g, x0),
                   "deadlock: a cycle of %d step%s: this step %s; %d of %d steps can never run",
                   n, n == 1 ? "" : "s", msg, g->S - g->nrun, g->S);
    }
    free(mark);
    free(walk);
    free(kind);
}

/* -------------------------------------------------------------- accesses */

typedef struct { int lo, hi, fl; buf_kind buf; int off; } srange;  /* slots [lo,hi) */

static int range_ok(const layout *L, buf_kind b, int off, int cnt)
{
    return b >= BUF_I && b <= BUF_S && cnt >= 1 && off >= 0 && (long long)off + cnt <= L->len[b];
}

/* The slot ranges step s touches in layout L; 0 ranges for nop or a step
 * with any range out of bounds (reported by the static checker). */
static int ranges_of(const layout *L, const prog_step *s, srange out[2])
{
    if (s->type < 0 || s->type >= ST_COUNT || s->type == ST_NOP)
        return 0;
    int n = 0;
    if (step_reads_src(s->type)) {
        if (!range_ok(L, s->srcbuf, s->srcoff, s->cnt))
            return 0;
        int lo = layout_slot(L, s->srcbuf, s->srcoff);
        out[n++] = (srange){lo, lo + s->cnt, FR, s->srcbuf, s->srcoff};
    }
    if (step_writes_dst(s->type)) {
        if (!range_ok(L, s->dstbuf, s->dstoff, s->cnt))
            return 0;
        int lo = layout_slot(L, s->dstbuf, s->dstoff);
        out[n++] = (srange){lo, lo + s->cnt, FW | (s->type == ST_RE ? FR : 0), s->dstbuf, s->dstoff};
    }
    return n;
}

/* The slot ranges step x touches (see ranges_of). */
static int step_ranges(const graph *g, int x, srange out[2])
{
    int r = rank_of(g, x);
    return g->lay_ok[r] ? ranges_of(&g->lay[r], step_at(g, x), out) : 0;
}

/* Smallest slot where steps a and b conflict (both touch it, one writes). */
static int first_conflict(const graph *g, int a, int b)
{
    srange ra[2], rb[2];
    int na = step_ranges(g, a, ra), nb = step_ranges(g, b, rb), best = INT_MAX;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            if (!((ra[i].fl | rb[j].fl) & FW))
                continue;
            int lo = ra[i].lo > rb[j].lo ? ra[i].lo : rb[j].lo;
            int hi = ra[i].hi < rb[j].hi ? ra[i].hi : rb[j].hi;
            if (lo < hi && lo < best)
                best = lo;
        }
    return best;
}

/* "o[3]": the name step x uses for slot, preferring a range it writes
 * (want_write) or reads. */
static void slot_name(const graph *g, int x, int slot, int want_write, char *buf, size_t n)
{
    srange rs[2];
    int k = step_ranges(g, x, rs), pick = -1;
    for (int i = 0; i < k; i++)
        if (slot >= rs[i].lo && slot < rs[i].hi) {
            int fits = want_write ? (rs[i].fl & FW) : (rs[i].fl & FR);
            if (pick < 0 || (fits && !(want_write ? (rs[pick].fl & FW) : (rs[pick].fl & FR))))
                pick = i;
        }
    if (pick < 0)
        snprintf(buf, n, "slot %d", slot);
    else
        snprintf(buf, n, "%s[%d]", buf_name(rs[pick].buf), rs[pick].off + (slot - rs[pick].lo));
}

typedef struct { int slot, x, fl; } rec;    /* step x touches slot */

static int rec_cmp(const void *p, const void *q)
{
    const rec *a = p, *b = q;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return (a->x > b->x) - (a->x < b->x);
}

/* A slot range of step x. */
typedef struct { int lo, hi, fl, x; } xrange;

/* The slot ranges of rank r's runnable steps, in step order, into *out;
 * returns how many, and the chunk accesses they make in *total. */
static int rank_ranges(const graph *g, int r, xrange **out, long long *total)
{
    int x0 = g->tb_step0[g->rank_tb0[r]], x1 = g->tb_step0[g->rank_tb0[r + 1]], n = 0;
    xrange *v = xalloc(2 * (size_t)(x1 - x0), sizeof *v, 0);
    srange rs[2];
    *total = 0;
    for (int t = g->rank_tb0[r]; t < g->rank_tb0[r + 1] && g->lay_ok[r]; t++) {
        const prog_step *steps = g->tbp[t]->steps;
        for (int x = g->tb_step0[t]; x < g->tb_step0[t + 1]; x++) {
            if (g->pos[x] < 0)
                continue;
            int k = ranges_of(&g->lay[r], &steps[x - g->tb_step0[t]], rs);
            for (int i = 0; i < k; i++) {
                v[n++] = (xrange){rs[i].lo, rs[i].hi, rs[i].fl, x};
                *total += rs[i].hi - rs[i].lo;
            }
        }
    }
    *out = v;
    return n;
}

/* The records of ranges rv[0..n) sorted by (slot, step) into v.  They come
 * in step order, so a stable counting sort by slot orders them when the
 * rank's slots are not too many for a table; else a comparison sort. */
static void sort_records(const xrange *rv, int n, int nslots, rec *v, long long total)
{
    if ((long long)nslots > 4 * total + 4096) {
        int m = 0;
        for (int i = 0; i < n; i++)
            for (int sl = rv[i].lo; sl < rv[i].hi; sl++)
                v[m++] = (rec){sl, rv[i].x, rv[i].fl | (sl == rv[i].lo ? FS : 0)};
        sort_items(v, m, sizeof *v, rec_cmp);
        return;
    }
    int *at = xalloc((size_t)nslots + 1, sizeof(int), 1);
    for (int i = 0; i < n; i++)
        for (int sl = rv[i].lo; sl < rv[i].hi; sl++)
            at[sl + 1]++;
    for (int sl = 0; sl < nslots; sl++)
        at[sl + 1] += at[sl];
    for (int i = 0; i < n; i++)
        for (int sl = rv[i].lo; sl < rv[i].hi; sl++)
            v[at[sl]++] = (rec){sl, rv[i].x, rv[i].fl | (sl == rv[i].lo ? FS : 0)};
    free(at);
}

/* All accesses of rank r's runnable steps, sorted by (slot, step), one
 * record per (slot, step).  Returns the count, or -1 if too many. */
static long long build_records(const graph *g, int r, rec **buf, int *cap)
{
    xrange *rv;
    long long total;
    int nr = rank_ranges(g, r, &rv, &total);
    if (total > RANK_REC_CAP) {
        free(rv);
        return -1;
    }
    *buf = xgrow(*buf, cap, (int)total, sizeof **buf);
    rec *v = *buf;
    int n = (int)total;
    sort_records(rv, nr, g->lay[r].nslots, v, total);
    free(rv);
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (m > 0 && v[m - 1].slot == v[k].slot && v[m - 1].x == v[k].x)
            v[m - 1].fl |= v[k].fl;
        else
            v[m++] = v[k];
    }
    return m;
}

/* One tb's records inside one slot's group. */
typedef struct {
    int lo, hi;             /* records [lo, hi) */
    int lt;                 /* local tb index on the rank */
    int firstw;             /* record of its first write, -1 none */
} run;

static int group_runs(const graph *g, const rec *v, int lo, int hi, run **runs, int *cap)
{
    int n = 0;
    for (int k = lo; k < hi; k++) {
        if (k == lo || g->st_tb[v[k].x] != g->st_tb[v[k - 1].x]) {
            if (n == *cap)
                *runs = xgrow(*runs, cap, n + 1, sizeof **runs);
            (*runs)[n++] = (run){k, k, ltb_of(g, v[k].x), -1};
        }
        run *u = &(*runs)[n - 1];
        if ((v[k].fl & FW) && u->firstw < 0)
            u->firstw = k;
        u->hi = k + 1;
    }
    return n;
}

/* Reads of a run that no earlier write of its own tb covers: [lo, lim). */
static int run_read_limit(const run *u) { return u->firstw < 0 ? u->hi : u->firstw + 1; }

static int run_has_open_read(const rec *v, const run *u)
{
    for (int k = u->lo; k < run_read_limit(u); k++)
        if (v[k].fl & FR)
            return 1;
    return 0;
}

static int slot_initialized(const layout *L, int slot)
{
    return slot >= L->base[BUF_I] && slot < L->base[BUF_I] + L->len[BUF_I];
}

/* ---------------------------------------------------------------- checker */

typedef struct { int rank, slot, a, b, fa, fb; } rpair;    /* a's tb < b's tb */
typedef struct { int x, slot; } uread;                       /* read of slot by x */
typedef struct { int x, slot, w0, nw; } upend;               /* read awaiting stages 4-5 */
typedef struct { int tb, thr; } writer;                      /* tb's first write: step thr */
typedef struct { int tb, thr, target, id; } query;           /* tb step >= thr HB target? */

typedef struct {
    graph g;
    long long budget, ubudget, work;
    int race_on;            /* races still to be decided in full */
    int truncated;          /* PAIR_CAP reached */
    long long unresolved;   /* reads neither proven initialized nor not */
    int ranks_skipped;
    rpair *pairs; int npairs, cpairs;
    upend *pend; int npend, cpend;
    writer *wv; int nwv, cwv;
    uread *bad; int nbad, cbad;
    rec *recs; int crecs;
    run *runs; int cruns;
    int *widx; int cwidx;       /* scratch: race_group's lists of records */
    int *xpos[ORD_COUNT - 1];   /* positions in the extra orders, or NULL */
} ctx;

typedef struct {
    int nd_race, nd_u;      /* clock dimensions needed for races / for reads */
    long long nrun, nall;   /* runnable steps / all steps of the rank */
    int skipped;            /* too many accesses */
    char *mrace, *mu;       /* [its tbs] which need a dimension for races / for reads */
} rank_plan;

/* Mark the tbs that need a clock dimension, for races and for reads. */
static void mark_group(const rec *v, const run *runs, int nruns, int init,
                       char *mrace, char *mu)
{
    int nw = 0;
    for (int i = 0; i < nruns; i++)
        nw += runs[i].firstw >= 0;
    if (nruns >= 2 && nw > 0)
        for (int i = 0; i < nruns; i++)
            mrace[runs[i].lt] = 1;
    if (init || nw == 0)
        return;
    for (int i = 0; i < nruns; i++) {
        if (nw - (runs[i].firstw >= 0) <= 0 || !run_has_open_read(v, &runs[i]))
            continue;
        for (int j = 0; j < nruns; j++)
            if (j != i && runs[j].firstw >= 0)
                mu[runs[j].lt] = 1;
    }
}

static void plan_rank(ctx *c, int r, rank_plan *pl)
{
    graph *g = &c->g;
    int nt = g->rank_tb0[r + 1] - g->rank_tb0[r];
    pl->nrun = g->rord0[r + 1] - g->rord0[r];
    pl->nall = g->tb_step0[g->rank_tb0[r + 1]] - g->tb_step0[g->rank_tb0[r]];
    long long n = build_records(g, r, &c->recs, &c->crecs);
    if (n < 0) {
        pl->skipped = 1;
        return;
    }
    char *mrace = xalloc((size_t)nt, 1, 1), *mu = xalloc((size_t)nt, 1, 1);
    for (int lo = 0; lo < n;) {
        int hi = lo + 1;
        while (hi < n && c->recs[hi].slot == c->recs[lo].slot)
            hi++;
        int nruns = group_runs(g, c->recs, lo, hi, &c->runs, &c->cruns);
        mark_group(c->recs, c->runs, nruns, slot_initialized(&g->lay[r], c->recs[lo].slot), mrace, mu);
        lo = hi;
    }
    for (int t = 0; t < nt; t++) {
        pl->nd_race += mrace[t];
        pl->nd_u += mu[t];
    }
    pl->mrace = mrace;
    pl->mu = mu;
}

static void plans_free(rank_plan *pl, int nr)
{
    for (int r = 0; r < nr; r++) {
        free(pl[r].mrace);
        free(pl[r].mu);
    }
    free(pl);
}

/* On-rank vector clocks: row x holds, per dimension d (a tb of the rank),
 * 1 + the last step of that tb ordered before x along the rank's own edges. */
static int *rank_clocks(const graph *g, int r, const int *lid, int nd)
{
    int x0 = g->tb_step0[g->rank_tb0[r]], x1 = g->tb_step0[g->rank_tb0[r + 1]];
    int *vc = xalloc((size_t)(x1 - x0) * (size_t)nd, sizeof(int), 1);
    for (int k = g->rord0[r]; k < g->rord0[r + 1]; k++) {
        int x = g->rord[k];
        int *row = vc + (size_t)(x - x0) * nd;
        if (idx_of(g, x) > 0)
            memcpy(row, row - nd, (size_t)nd * sizeof(int));
        int preds[2] = {g->dep[x], g->pair[x]};
        for (int i = 0; i < 2; i++) {
            int q = preds[i];
            if (q < x0 || q >= x1)
                continue;
            const int *qr = vc + (size_t)(q - x0) * nd;
            for (int d = 0; d < nd; d++)
                if (qr[d] > row[d])
                    row[d] = qr[d];
        }
        int d = lid[ltb_of(g, x)];
        if (d >= 0)
            row[d] = idx_of(g, x) + 1;
    }
    return vc;
}

typedef struct {
    int r, x0, nd;
    const int *vc, *lid;
} clocks;

static int clock_at(const clocks *k, int x, int lt)
{
    if (!k->vc || k->lid[lt] < 0)
        return 0;
    return k->vc[(size_t)(x - k->x0) * k->nd + k->lid[lt]];
}

/* The first of the n ascending record indices l[] that is >= lo. */
static int first_at(const int *l, int n, int lo)
{
    int a = 0;
    while (a < n) {
        int m = a + (n - a) / 2;
        if (l[m] < lo)
            a = m + 1;
        else
            n = m;
    }
    return a;
}

/* Pairs of this slot's accesses from different tbs, one writing, that the
 * rank's own edges do not order, counted at their first conflicting slot:
 * kept for stages 4-5.  For b in tb Y, the accesses a of tb X not before b
 * are a suffix of X's run; of those, the ones b is not before are a prefix
 * (clocks only grow along a tb): both ends by binary search.  Of that
 * window only the a that can make a pair here are visited: writes, if b
 * only reads; and a pair's first conflict is where a range of a or of b
 * starts (FS), so if b's does not start here, only the a whose does.  So
 * a slot many tbs read costs nothing for its read-read pairs, and a pair
 * sharing many slots is visited at most at four. */
static void race_group(ctx *c, const clocks *k, const rec *v, const run *runs, int nruns, int slot)
{
    const graph *g = &c->g;
    int n = runs[nruns - 1].hi - runs[0].lo, nl[3] = {0, 0, 0};
    if (3 * n > c->cwidx)
        c->widx = xgrow(c->widx, &c->cwidx, 3 * n, sizeof *c->widx);
    int *l[3] = {c->widx, c->widx + n, c->widx + 2 * n};  /* writes, starts, starting writes */
    for (int kk = runs[0].lo; kk < runs[nruns - 1].hi; kk++) {
        int fl = v[kk].fl;
        if (fl & FW)
            l[0][nl[0]++] = kk;
        if (fl & FS)
            l[1][nl[1]++] = kk;
        if ((fl & FW) && (fl & FS))
            l[2][nl[2]++] = kk;
    }
    if (nl[0] == 0)
        return;
    for (int i = 0; i < nruns; i++)
        for (int j = i + 1; j < nruns; j++) {
            const run *X = &runs[i], *Y = &runs[j];
            if (X->firstw < 0 && Y->firstw < 0)
                continue;
            for (int kb = Y->lo; kb < Y->hi; kb++) {
                int b = v[kb].x, ib = idx_of(g, b), bw = v[kb].fl & FW, bs = v[kb].fl & FS;
                if (!bw && X->firstw < 0)
                    continue;
                int t = clock_at(k, b, X->lt);
                int lo = X->lo, hi = X->hi;
                while (lo < hi) {       /* first a not before b */
                    int mid = lo + (hi - lo) / 2;
                    if (idx_of(g, v[mid].x) < t)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                int end = X->hi;
                for (int a0 = lo; a0 < end;) {  /* first a that b is before */
                    int mid = a0 + (end - a0) / 2;
                    if (clock_at(k, v[mid].x, Y->lt) > ib)
                        end = mid;
                    else
                        a0 = mid + 1;
                }
                /* the a to visit: all in [lo, end), or those of a list */
                int which = bw ? (bs ? -1 : 1) : (bs ? 0 : 2);
                const int *L = which < 0 ? NULL : l[which];
                int nL = which < 0 ? 0 : nl[which];
                for (int w = L ? first_at(L, nL, lo) : lo;; w++) {
                    int ka = L ? (w < nL ? L[w] : end) : w;
                    if (ka >= end)
                        break;
                    int a = v[ka].x;
                    if (!((v[ka].fl | v[kb].fl) & FW) || first_conflict(g, a, b) != slot)
                        continue;
                    if (c->npairs >= PAIR_CAP) {
                        c->truncated = 1;
                        return;
                    }
                    PUSH(c->pairs, c->npairs, c->cpairs,
                         ((rpair){k->r, slot, a, b, v[ka].fl, v[kb].fl}));
                }
            }
        }
}

/* Reads of this (uninitialized) slot: no writer in another tb -> not
 * initialized; a writer ordered before on the rank -> fine; otherwise
 * stages 4-5 decide. */
static void uninit_group(ctx *c, const clocks *k, const rec *v, const run *runs, int nruns,
                         int slot)
{
    const graph *g = &c->g;
    for (int i = 0; i < nruns; i++) {
        const run *Y = &runs[i];
        for (int ky = Y->lo; ky < run_read_limit(Y); ky++) {
            if (!(v[ky].fl & FR))
                continue;
            int y = v[ky].x, writers = 0, ordered = 0;
            for (int j = 0; j < nruns && !ordered; j++) {
                if (j == i || runs[j].firstw < 0)
                    continue;
                writers++;
                ordered = clock_at(k, y, runs[j].lt) > idx_of(g, v[runs[j].firstw].x);
            }
            if (ordered)
                continue;
            if (writers == 0) {
                PUSH(c->bad, c->nbad, c->cbad, ((uread){y, slot}));
                continue;
            }
            if (c->nwv + writers > WRITER_CAP) {
                c->unresolved++;
                continue;
            }
            upend u = {y, slot, c->nwv, writers};
            for (int j = 0; j < nruns; j++)
                if (j != i && runs[j].firstw >= 0) {
                    int w = v[runs[j].firstw].x;
                    PUSH(c->wv, c->nwv, c->cwv, ((writer){g->st_tb[w], idx_of(g, w)}));
                }
            PUSH(c->pend, c->npend, c->cpend, u);
        }
    }
}

/* Stage 2-3 for one rank: clocks over the chosen dimensions, then every
 * slot's races and reads. */
static void resolve_rank(ctx *c, int r, const rank_plan *pl, int with_clocks)
{
    graph *g = &c->g;
    int nt = g->rank_tb0[r + 1] - g->rank_tb0[r];
    long long n = build_records(g, r, &c->recs, &c->crecs);
    if (n < 0)
        return;
    const char *mark = c->race_on ? pl->mrace : pl->mu;
    int *lid = xalloc((size_t)nt, sizeof(int), 0), nd = 0;
    for (int t = 0; t < nt; t++)
        lid[t] = mark[t] ? nd++ : -1;
    int *vc = NULL;
    if (with_clocks && nd > 0) {
        vc = rank_clocks(g, r, lid, nd);
        c->work += pl->nrun * nd;
    }
    clocks k = {r, g->tb_step0[g->rank_tb0[r]], nd, vc, lid};
    for (int lo = 0; lo < n;) {
        int hi = lo + 1;
        while (hi < n && c->recs[hi].slot == c->recs[lo].slot)
            hi++;
        int slot = c->recs[lo].slot;
        int nruns = group_runs(g, c->recs, lo, hi, &c->runs, &c->cruns);
        if (c->race_on && nruns >= 2 && !c->truncated)
            race_group(c, &k, c->recs, c->runs, nruns, slot);
        if (!slot_initialized(&g->lay[r], slot))
            uninit_group(c, &k, c->recs, c->runs, nruns, slot);
        lo = hi;
    }
    free(vc);
    free(lid);
}

/* ------------------------------------- stages 4-5: other orders, reachability */

static int query_cmp(const void *p, const void *q)
{
    const query *a = p, *b = q;
    if (a->tb != b->tb) return a->tb < b->tb ? -1 : 1;
    if (a->thr != b->thr) return a->thr < b->thr ? -1 : 1;
    if (a->target != b->target) return a->target < b->target ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* 1 if some linear extension puts `to` before `from`: then `from` does
 * not happen before `to`. */
static int disproved(const ctx *c, int from, int to)
{
    if (c->g.pos[to] < c->g.pos[from])
        return 1;
    for (int o = 0; o < ORD_COUNT - 1; o++)
        if (c->xpos[o] && c->xpos[o][to] < c->xpos[o][from])
            return 1;
    return 0;
}

/* The extra orders, computed only when something is left to decide. */
static void extra_orders(ctx *c)
{
    for (int o = 0; o < ORD_COUNT - 1; o++) {
        c->xpos[o] = xalloc((size_t)c->g.S, sizeof(int), 0);
        kahn(&c->g, o + 1, c->xpos[o], NULL);
    }
}

/* Queries for the rank-unordered pairs (ids 2k: a before b, 2k+1: b before
 * a) and, after them, the pending reads (id 2*npairs + u: some writer
 * before the read).  Orderings an extra order disproves need no query. */
static query *build_queries(const ctx *c, int with_pairs, int *nq)
{
    const graph *g = &c->g;
    size_t n = (with_pairs ? 2 * (size_t)c->npairs : 0) + (size_t)c->nwv;
    query *q = xalloc(n, sizeof *q, 0);
    int m = 0;
    if (with_pairs)
        for (int k = 0; k < c->npairs; k++) {
            const rpair *rp = &c->pairs[k];
            if (!disproved(c, rp->a, rp->b))
                q[m++] = (query){g->st_tb[rp->a], idx_of(g, rp->a), rp->b, 2 * k};
            if (!disproved(c, rp->b, rp->a))
                q[m++] = (query){g->st_tb[rp->b], idx_of(g, rp->b), rp->a, 2 * k + 1};
        }
    for (int u = 0; u < c->npend; u++)
        for (int w = 0; w < c->pend[u].nw; w++) {
            const writer *wr = &c->wv[c->pend[u].w0 + w];
            if (!disproved(c, g->tb_step0[wr->tb] + wr->thr, c->pend[u].x))
                q[m++] = (query){wr->tb, wr->thr, c->pend[u].x, 2 * c->npairs + u};
        }
    sort_items(q, m, sizeof *q, query_cmp);
    *nq = m;
    return q;
}

/* Positions [start, end] one tb's queries need (start = its first queried step). */
static void query_span(const graph *g, const query *q, int lo, int hi, int *start, int *end)
{
    *start = g->pos[g->tb_step0[q[lo].tb] + q[lo].thr];
    *end = -1;
    for (int i = lo; i < hi; i++)
        if (g->pos[q[i].target] > *end)
            *end = g->pos[q[i].target];
}

static long long queries_cost(const graph *g, const query *q, int nq)
{
    long long cost = 0;
    for (int lo = 0; lo < nq;) {
        int hi = lo + 1, start, end;
        while (hi < nq && q[hi].tb == q[lo].tb)
            hi++;
        query_span(g, q, lo, hi, &start, &end);
        if (end >= start)
            cost += end - start + 1;
        lo = hi;
    }
    return cost;
}

/* One scalar clock per queried tb over the global order: val[p] = 1 + the
 * last step of the tb that happens before (or is) the step at position p. */
static void queries_run(ctx *c, const query *q, int nq, char *res)
{
    const graph *g = &c->g;
    int *val = xalloc((size_t)g->nrun, sizeof(int), 0);
    for (int lo = 0; lo < nq;) {
        int hi = lo + 1, start, end, tb = q[lo].tb;
        while (hi < nq && q[hi].tb == tb)
            hi++;
        query_span(g, q, lo, hi, &start, &end);
        for (int p = start; p <= end; p++) {
            int x = g->ord[p], v = 0;
            if (g->st_tb[x] == tb) {
                v = idx_of(g, x) + 1;
            } else {
                int preds[3] = {idx_of(g, x) > 0 ? x - 1 : -1, g->dep[x], g->pair[x]};
                for (int i = 0; i < 3; i++) {
                    if (preds[i] < 0)
                        continue;
                    int pp = g->pos[preds[i]];
                    if (pp >= start && val[pp] > v)
                        v = val[pp];
                }
            }
            val[p] = v;
        }
        if (end >= start)
            c->work += end - start + 1;
        for (int i = lo; i < hi; i++) {
            int pt = g->pos[q[i].target];
            if (pt >= start && pt <= end && val[pt] > q[i].thr)
                res[q[i].id] = 1;
        }
        lo = hi;
    }
    free(val);
}

/* ------------------------------------------------------------- liveness */

#define LIVE_STEP_CAP (1 << 20)         /* slice every schedule up to this size */
#define LIVE_REC_CAP (1LL << 24)        /* chunk accesses of all ranks (~200 MB) */
#define LIVE_SEARCH_BUDGET 50000000LL   /* units (comparisons, nodes searched) ... */
#define LIVE_UNITS_PER_WRITE 8          /* ... plus these per recorded write */
#define LIVE_MEMO_CAP (1 << 22)         /* table entries of remembered answers (32 MiB) */

static long long live_budget_override;  /* race_set_live_budget */

void race_set_live_budget(long long units)
{
    live_budget_override = units > 0 ? units : 0;
}

/* Proofs of happens-before, within a budget: every comparison (program
 * order too) and every node a search visits costs one unit; past the
 * budget nothing more is proven (so no more steps are found dead). */
typedef struct {
    const graph *g;
    int *stamp, cur, *stack;
    uint64_t *memo;         /* answers of searches: a << 30 | b << 1 | answer; 0 empty */
    int mcap, mn;
    long long work, budget;
    int over;
    int *cand, ccap;        /* scratch: a read's candidate last writers */
} hbsearch;

/* Spend n units; 0 once the budget is gone. */
static int spend(hbsearch *h, long long n)
{
    h->work += n;
    if (h->work > h->budget)
        h->over = 1;
    return !h->over;
}

static size_t memo_home(const hbsearch *h, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (size_t)(h->mcap - 1);
}

/* The remembered answer of a search from a to b, or -1. */
static int memo_get(const hbsearch *h, int a, int b)
{
    uint64_t key = (uint64_t)a << 29 | (uint64_t)b;
    for (size_t i = memo_home(h, key);; i = (i + 1) & (size_t)(h->mcap - 1)) {
        if (h->memo[i] == 0)
            return -1;
        if (h->memo[i] >> 1 == key)
            return (int)(h->memo[i] & 1);
    }
}

static void memo_put(hbsearch *h, int a, int b, int ans)
{
    if (2 * (h->mn + 1) > h->mcap) {
        if (2 * h->mcap > LIVE_MEMO_CAP)
            return;             /* full: answers are searched again */
        uint64_t *old = h->memo;
        int ocap = h->mcap;
        h->mcap *= 2;
        h->memo = xalloc((size_t)h->mcap, sizeof *h->memo, 1);
        for (int i = 0; i < ocap; i++)
            if (old[i]) {
                size_t j = memo_home(h, old[i] >> 1);
                while (h->memo[j])
                    j = (j + 1) & (size_t)(h->mcap - 1);
                h->memo[j] = old[i];
            }
        free(old);
    }
    uint64_t key = (uint64_t)a << 29 | (uint64_t)b;
    size_t i = memo_home(h, key);
    while (h->memo[i])
        i = (i + 1) & (size_t)(h->mcap - 1);
    h->memo[i] = key << 1 | (uint64_t)(ans != 0);
    h->mn++;
}

/* 1 if a happens before b is proven: a path of program order, dependencies
 * and send->recv pairs from a to b.  Within a tb that is program order;
 * across tbs a search, whose answer is remembered. */
static int hb_proven(hbsearch *h, int a, int b)
{
    const graph *g = h->g;
    if (!spend(h, 1))
        return 0;
    if (a == b || g->pos[a] < 0 || g->pos[b] < 0 || g->pos[a] >= g->pos[b])
        return 0;
    int tb = g->st_tb[b], ib = idx_of(g, b), pb = g->pos[b];
    if (g->st_tb[a] == tb)
        return idx_of(g, a) < ib;
    int known = memo_get(h, a, b);
    if (known >= 0)
        return known;
    int sp = 0, found = 0;
    h->cur++;
    h->stack[sp++] = a;
    h->stamp[a] = h->cur;
    while (sp > 0 && !found) {
        int x = h->stack[--sp];
        if (!spend(h, 1))
            return 0;
        if (g->st_tb[x] == tb && idx_of(g, x) <= ib) {
            found = 1;
            break;
        }
        int next = x + 1 < g->S && g->st_tb[x + 1] == g->st_tb[x] ? x + 1 : -1;
        for (int i = g->succ0[x] - 1; i < g->succ0[x + 1]; i++) {
            int y = i < g->succ0[x] ? next : g->succ[i];
            if (y >= 0 && g->pos[y] >= 0 && g->pos[y] <= pb && h->stamp[y] != h->cur) {
                h->stamp[y] = h->cur;
                h->stack[sp++] = y;
            }
        }
    }
    memo_put(h, a, b, found);
    return found;
}

/* Every rank's writes, by (rank, slot, step): the writes of one slot by
 * one tb (a run) are consecutive and in program order. */
typedef struct { int slot, x; } wrec;

typedef struct {
    wrec *v;
    int n;
    int *r0;                /* [nr+1] first record of each rank */
    int *skip;              /* [n] a record at or before the next one not yet live */
} accesses;

/* Records [*lo, *hi) of (rank r, slot): two binary searches. */
static void slot_group(const accesses *A, int r, int slot, int *lo, int *hi)
{
    int a = A->r0[r], b = A->r0[r + 1];
    while (a < b) {
        int m = a + (b - a) / 2;
        if (A->v[m].slot < slot)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    b = A->r0[r + 1];
    while (a < b) {
        int m = a + (b - a) / 2;
        if (A->v[m].slot <= slot)
            a = m + 1;
        else
            b = m;
    }
    *hi = a;
}

/* One past the last record of the run starting at k, in a group ending at hi. */
static int run_end(const graph *g, const accesses *A, int k, int hi)
{
    int end = g->tb_step0[g->st_tb[A->v[k].x] + 1], a = k + 1;
    while (a < hi) {
        int m = a + (hi - a) / 2;
        if (A->v[m].x < end)
            a = m + 1;
        else
            hi = m;
    }
    return a;
}

/* The first record at or after i whose step is not live (A->n if none);
 * the live ones passed are skipped next time. */
static int open_from(accesses *A, const char *live, int i)
{
    int j = i;
    while (j < A->n && live[A->v[j].x])
        j = A->skip[j] > j ? A->skip[j] : j + 1;
    while (i < j) {
        int nx = A->skip[i] > i ? A->skip[i] : i + 1;
        A->skip[i] = j;
        i = nx;
    }
    return j;
}

static void mark_live(char *live, int *queue, int *nq, int x)
{
    if (x >= 0 && !live[x]) {
        live[x] = 1;
        queue[(*nq)++] = x;
    }
}

/* The seeds of one output slot's writes [lo, hi): the writes no other
 * write of the slot follows in every interleaving.  In a run every write
 * but the last is followed by the next; the last of a run is followed iff
 * some other run's last write is (then all of that run's earlier ones are
 * too, by program order). */
static void live_seeds(hbsearch *h, accesses *A, int lo, int hi, char *live, int *queue, int *nq)
{
    int nc = 0;
    for (int k = lo, e; k < hi; k = e) {
        e = run_end(h->g, A, k, hi);
        if (!spend(h, e - k - 1))
            for (int i = k; i < e - 1; i++)
                mark_live(live, queue, nq, A->v[i].x);
        if (nc == h->ccap)
            h->cand = xgrow(h->cand, &h->ccap, nc + 1, sizeof *h->cand);
        h->cand[nc++] = A->v[e - 1].x;
    }
    for (int i = 0; i < nc; i++) {
        int covered = 0;
        for (int j = 0; j < nc && !covered; j++)
            covered = j != i && hb_proven(h, h->cand[i], h->cand[j]);
        if (!covered)
            mark_live(live, queue, nq, h->cand[i]);
    }
}

/* The writes a read of `slot` by step x (on rank r) may see: every write w
 * (w != x) unless x happens before w, or some other write w2 (w2 != x)
 * has w -> w2 -> x.  Per run, the writes before x are a prefix and the
 * writes after x a suffix (program order); those in between are unordered
 * with x, so nothing can cover them: they are live.  Of a prefix only its
 * last write can be uncovered, and it is iff no other run's last write
 * before x follows it. */
static void live_sources(hbsearch *h, accesses *A, int r, int slot, int x, char *live,
                         int *queue, int *nq)
{
    int lo, hi, nc = 0;
    slot_group(A, r, slot, &lo, &hi);
    const wrec *v = A->v;
    for (int k = lo, e; k < hi; k = e) {
        e = run_end(h->g, A, k, hi);
        int b = k, c = e;
        while (b < c) {         /* [k, b): the writes before x */
            int m = b + (c - b) / 2;
            if (hb_proven(h, v[m].x, x))
                b = m + 1;
            else
                c = m;
        }
        c = e;
        for (int a = b; a < c;) {   /* [c, e): the writes after x */
            int m = a + (c - a) / 2;
            if (hb_proven(h, x, v[m].x))
                c = m;
            else
                a = m + 1;
        }
        for (int i = open_from(A, live, b); i < c; i = open_from(A, live, i + 1))
            if (v[i].x != x)
                mark_live(live, queue, nq, v[i].x);
        if (b > k) {
            if (nc == h->ccap)
                h->cand = xgrow(h->cand, &h->ccap, nc + 1, sizeof *h->cand);
            h->cand[nc++] = v[b - 1].x;
        }
    }
    for (int i = 0; i < nc; i++) {
        if (live[h->cand[i]])
            continue;
        int covered = 0;
        for (int j = 0; j < nc && !covered; j++)
            covered = j != i && hb_proven(h, h->cand[i], h->cand[j]);
        if (!covered)
            mark_live(live, queue, nq, h->cand[i]);
    }
}

/* Every rank's writes (the records of its accesses that write), counted
 * first so that they are held once; 0 if the accesses are too many to
 * slice. */
static int build_writes(const graph *g, accesses *A)
{
    memset(A, 0, sizeof *A);
    A->r0 = xalloc((size_t)g->nr + 1, sizeof(int), 0);
    long long nw = 0;
    srange rs[2];
    for (int x = 0; x < g->S; x++)
        if (g->pos[x] >= 0)
            for (int i = 0, k = step_ranges(g, x, rs); i < k; i++)
                if (rs[i].fl & FW)
                    nw += rs[i].hi - rs[i].lo;
    if (nw > LIVE_REC_CAP)
        return 0;
    A->v = xalloc((size_t)nw, sizeof *A->v, 0);
    rec *buf = NULL;
    int cap = 0;
    long long total = 0;
    for (int r = 0; r < g->nr; r++) {
        A->r0[r] = A->n;
        long long n = g->lay_ok[r] ? build_records(g, r, &buf, &cap) : 0;
        if (n < 0 || total + n > LIVE_REC_CAP) {
            free(buf);
            return 0;
        }
        total += n;
        for (long long k = 0; k < n; k++)
            if (buf[k].fl & FW)
                A->v[A->n++] = (wrec){buf[k].slot, buf[k].x};
    }
    A->r0[g->nr] = A->n;
    free(buf);
    A->skip = xalloc((size_t)A->n, sizeof(int), 0);
    for (int k = 0; k < A->n; k++)
        A->skip[k] = k;
    return 1;
}

static void accesses_free(accesses *A)
{
    free(A->v);
    free(A->r0);
    free(A->skip);
}

/* Fill live[] (S entries); 0 if the accesses are too many to slice.  Sets
 * *partial when the search budget ran out (steps not proven dead are then
 * counted live). */
static int compute_live(const graph *g, char *live, int *partial, long long *work)
{
    accesses A;
    if (!build_writes(g, &A)) {
        accesses_free(&A);
        return 0;
    }
    long long budget = live_budget_override ? live_budget_override
                                            : LIVE_SEARCH_BUDGET + LIVE_UNITS_PER_WRITE * (long long)A.n;
    hbsearch h = {g, xalloc((size_t)g->S, sizeof(int), 1), 0, xalloc((size_t)g->S, sizeof(int), 0),
                  xalloc(1024, sizeof(uint64_t), 1), 1024, 0, 0, budget, 0, NULL, 0};
    int *queue = xalloc((size_t)g->S, sizeof(int), 0), nq = 0;
    memset(live, 0, (size_t)g->S);
    /* Seeds: the last writes of every output slot. */
    for (int r = 0; r < g->nr; r++) {
        const layout *L = &g->lay[r];
        int o0 = L->base[BUF_O], o1 = o0 + L->len[BUF_O];
        for (int lo = A.r0[r], hi; lo < A.r0[r + 1]; lo = hi) {
            int slot = A.v[lo].slot, dummy;
            slot_group(&A, r, slot, &dummy, &hi);
            if (slot >= o0 && slot < o1)
                live_seeds(&h, &A, lo, hi, live, queue, &nq);
        }
    }
    /* Backward: what a live step reads or receives. */
    srange rs[2];
    for (int head = 0; head < nq; head++) {
        int x = queue[head];
        mark_live(live, queue, &nq, g->pair[x]);
        int k = step_ranges(g, x, rs);
        for (int i = 0; i < k; i++)
            if (rs[i].fl & FR)
                for (int sl = rs[i].lo; sl < rs[i].hi; sl++)
                    live_sources(&h, &A, rank_of(g, x), sl, x, live, queue, &nq);
    }
    *partial = h.over;
    *work = h.work;
    free(queue);
    free(h.stamp);
    free(h.stack);
    free(h.memo);
    free(h.cand);
    accesses_free(&A);
    return 1;
}

/* Dead: runnable, moves data, not live (a step that never runs is the
 * deadlock's business). */
static int step_dead(const graph *g, const char *live, int x)
{
    return live && !live[x] && g->pos[x] >= 0 && step_at(g, x)->type != ST_NOP;
}

/* ------------------------------------------------------------- reporting */

static int rpair_cmp(const void *p, const void *q)
{
    const rpair *a = p, *b = q;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static int uread_cmp(const void *p, const void *q)
{
    const uread *a = p, *b = q;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return (a->slot > b->slot) - (a->slot < b->slot);
}

static const char *verb(int fl) { return (fl & FW) ? "writes" : "reads"; }

/* One race: a warning when both of its steps are dead. */
static int race_dead(const graph *g, const char *live, const rpair *rp)
{
    return step_dead(g, live, rp->a) && step_dead(g, live, rp->b);
}

static void report_races(const ctx *c, rpair *races, int n, const char *live, hazard_list *out)
{
    const graph *g = &c->g;
    sort_items(races, n, sizeof *races, rpair_cmp);
    for (int dead = 0; dead <= 1; dead++) {
        int listed = 0, more = 0;
        for (int k = 0; k < n; k++) {
            const rpair *rp = &races[k];
            if (race_dead(g, live, rp) != dead)
                continue;
            if (listed >= REPORT_CAP) {
                more++;
                continue;
            }
            listed++;
            char na[48], nb[48], alias[64] = "";
            slot_name(g, rp->a, rp->slot, rp->fa & FW, na, sizeof na);
            slot_name(g, rp->b, rp->slot, rp->fb & FW, nb, sizeof nb);
            if (strcmp(na, nb) != 0)
                snprintf(alias, sizeof alias, " (as %s)", nb);
            hazard_add(out, HZ_RACE, rp->rank, ltb_of(g, rp->a), idx_of(g, rp->a),
                       "%s %s while tb %d step %d %s it%s with no dependency or send/recv chain "
                       "ordering them%s", verb(rp->fa), na, ltb_of(g, rp->b), idx_of(g, rp->b),
                       verb(rp->fb), alias,
                       dead ? " (dead traffic: neither step's data reaches the result)" : "");
            out->v[out->n - 1].warning = dead;
        }
        if (more > 0 || (!dead && c->truncated)) {
            hazard_add(out, HZ_RACE, -1, -1, -1, "%d more %sraces not listed%s", more,
                       dead ? "dead-traffic " : "",
                       !dead && c->truncated ? " (counting stopped early: there may be more)" : "");
            out->v[out->n - 1].warning = dead;
        }
    }
}

static void report_uninit(const ctx *c, const char *live, hazard_list *out)
{
    const graph *g = &c->g;
    sort_items(c->bad, c->nbad, sizeof *c->bad, uread_cmp);
    for (int dead = 0; dead <= 1; dead++) {
        int steps = 0;
        for (int k = 0; k < c->nbad;) {
            int e = k + 1;
            while (e < c->nbad && c->bad[e].x == c->bad[k].x)
                e++;
            int x = c->bad[k].x;
            if (step_dead(g, live, x) == dead && steps++ < REPORT_CAP) {
                char nm[48], more[48] = "";
                slot_name(g, x, c->bad[k].slot, 0, nm, sizeof nm);
                if (e - k > 1)
                    snprintf(more, sizeof more, " (and %d more chunks of this step)", e - k - 1);
                hazard_add(out, HZ_UNINIT, rank_of(g, x), ltb_of(g, x), idx_of(g, x),
                           "%s %s before anything has written it: no write of that chunk happens "
                           "before this step%s%s", step_at(g, x)->type == ST_S ? "sends" : "reads", nm,
                           more, dead ? " (dead traffic: its data reaches no result)" : "");
                out->v[out->n - 1].warning = dead;
            }
            k = e;
        }
        if (steps > REPORT_CAP) {
            hazard_add(out, HZ_UNINIT, -1, -1, -1, "%d more %ssteps read uninitialized chunks (not listed)",
                       steps - REPORT_CAP, dead ? "dead-traffic " : "");
            out->v[out->n - 1].warning = dead;
        }
    }
}

/* Append "; <message>" (or the message, if first) to the stats' reason. */
static void append_why(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append_why(char *why, size_t n, const char *fmt, ...)
{
    size_t off = strlen(why);
    if (off > 0 && off + 2 < n) {
        why[off++] = ';';
        why[off++] = ' ';
        why[off] = '\0';
    }
    if (off + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + off, n - off, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ entry */

static void plan_all(ctx *c, rank_plan *pl, char *why, size_t whylen)
{
    graph *g = &c->g;
    long long cost = 0, worst_table = 0, tbs = 0;
    for (int r = 0; r < g->nr; r++) {
        plan_rank(c, r, &pl[r]);
        if (pl[r].skipped) {
            c->ranks_skipped++;
            continue;
        }
        cost += pl[r].nrun * pl[r].nd_race;
        tbs += pl[r].nd_race;
        if (pl[r].nall * pl[r].nd_race > worst_table)
            worst_table = pl[r].nall * pl[r].nd_race;
    }
    if (c->ranks_skipped)
        append_why(why, whylen, "%d ranks not checked: more than %lld chunk accesses each",
                   c->ranks_skipped, RANK_REC_CAP);
    if (cost > c->budget || worst_table > TABLE_CAP) {
        c->race_on = 0;
        append_why(why, whylen, "races not checked: on-rank clocks need %lld entries over %lld tbs "
                   "that may race (budget %lld)", cost, tbs, c->budget);
    }
}

/* The dead-traffic figures and mask of the stats. */
static void set_dead(const graph *g, const char *live, race_stats *st)
{
    st->live_checked = 1;
    st->dead = xalloc((size_t)g->S, 1, 1);
    for (int x = 0; x < g->S; x++) {
        st->steps += step_at(g, x)->type != ST_NOP;
        st->dead[x] = (char)step_dead(g, live, x);
        st->dead_steps += st->dead[x];
    }
}

void race_stats_free(race_stats *st)
{
    free(st->dead);
    st->dead = NULL;
}

/* The graph and its order depend on the schedule alone (layouts aside,
 * which each check sets for its buffer mode). */
struct race_graph {
    graph g;
    int ok;                 /* 0: too large, `why` says so */
    char why[sizeof ((race_stats *)0)->skipped_why];
};

race_graph *race_graph_new(const prog *p)
{
    race_graph *rg = xalloc(1, sizeof *rg, 1);
    rg->ok = graph_build(&rg->g, p, rg->why, sizeof rg->why) == 0;
    if (rg->ok)
        order_steps(&rg->g);
    return rg;
}

void race_graph_free(race_graph *rg)
{
    if (!rg)
        return;
    graph_free(&rg->g);
    free(rg);
}

int race_check(const prog *p, int inplace, long long budget, hazard_list *out, race_stats *st)
{
    race_graph *rg = race_graph_new(p);
    int n = race_check_graph(rg, inplace, budget, out, st);
    race_graph_free(rg);
    return n;
}

int race_check_graph(race_graph *rg, int inplace, long long budget, hazard_list *out,
                     race_stats *st)
{
    race_stats dummy;
    int own = !st;
    if (own)
        st = &dummy;
    memset(st, 0, sizeof *st);
    int before = out->n;
    if (!rg->ok) {
        snprintf(st->skipped_why, sizeof st->skipped_why, "%s", rg->why);
        return 0;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.budget = budget > 0 ? budget : DEFAULT_BUDGET;
    c.ubudget = c.budget > DEFAULT_BUDGET ? c.budget : DEFAULT_BUDGET;
    c.race_on = 1;
    c.g = rg->g;                /* a copy of the handles; the arrays are shared */
    graph *g = &c.g;
    build_layouts(g, inplace);
    if (g->nrun < g->S)
        report_deadlock(g, out);

    rank_plan *pl = xalloc((size_t)g->nr, sizeof *pl, 1);
    plan_all(&c, pl, st->skipped_why, sizeof st->skipped_why);
    long long ucost = 0, utable = 0;
    for (int r = 0; r < g->nr; r++) {
        ucost += pl[r].nrun * pl[r].nd_u;
        if (pl[r].nall * pl[r].nd_u > utable)
            utable = pl[r].nall * pl[r].nd_u;
    }
    int uclocks = c.race_on || (ucost <= c.ubudget && utable <= TABLE_CAP);
    for (int r = 0; r < g->nr; r++)
        if (!pl[r].skipped)
            resolve_rank(&c, r, &pl[r], uclocks);
    long long local_work = c.work;
    free(c.recs);               /* the ranks' records are done with: the slice builds its own */
    c.recs = NULL;
    c.crecs = 0;

    /* Stages 4-5: pairs and reads the ranks alone did not settle. */
    if (c.npairs + c.npend > 0)
        extra_orders(&c);
    char *res = xalloc(2 * (size_t)c.npairs + (size_t)c.npend, 1, 1);
    int nq = 0, reads_done = 0;
    query *q = NULL;
    if (c.race_on) {
        q = build_queries(&c, 1, &nq);
        long long cost = queries_cost(g, q, nq);
        if (local_work + cost <= c.budget) {
            queries_run(&c, q, nq, res);
            reads_done = 1;
        } else {
            c.race_on = 0;
            append_why(st->skipped_why, sizeof st->skipped_why,
                       "races not checked: %lld on-rank + %lld cross-rank clock entries exceed "
                       "budget %lld", local_work, cost, c.budget);
        }
        free(q);
    }
    if (!reads_done) {
        q = build_queries(&c, 0, &nq);
        if (queries_cost(g, q, nq) <= c.ubudget) {
            queries_run(&c, q, nq, res);
            reads_done = 1;
        } else {
            c.unresolved += c.npend;
        }
        free(q);
    }

    int nr = 0;
    if (c.race_on)
        for (int k = 0; k < c.npairs; k++)
            if (!res[2 * k] && !res[2 * k + 1])
                c.pairs[nr++] = c.pairs[k];
    if (reads_done)
        for (int u = 0; u < c.npend; u++)
            if (!res[2 * (size_t)c.npairs + u])
                PUSH(c.bad, c.nbad, c.cbad, ((uread){c.pend[u].x, c.pend[u].slot}));
    /* The slice: always on schedules of ordinary size, on larger ones only
     * when there is a hazard to judge by it. */
    char *live = NULL;
    if (g->S <= LIVE_STEP_CAP || nr > 0 || c.nbad > 0) {
        live = xalloc((size_t)g->S, 1, 0);
        if (compute_live(g, live, &st->live_partial, &st->live_work))
            set_dead(g, live, st);
        else {
            free(live);
            live = NULL;
        }
    }
    if (c.race_on)
        report_races(&c, c.pairs, nr, live, out);
    report_uninit(&c, live, out);
    free(live);
    if (c.unresolved)
        append_why(st->skipped_why, sizeof st->skipped_why,
                   "%lld reads not proven initialized were left unchecked", c.unresolved);

    st->checked = c.race_on && c.ranks_skipped == 0;
    st->work = c.work;
    free(res);
    plans_free(pl, g->nr);
    free(c.pairs);
    free(c.pend);
    free(c.wv);
    free(c.bad);
    free(c.recs);
    free(c.runs);
    free(c.widx);
    for (int o = 0; o < ORD_COUNT - 1; o++)
        free(c.xpos[o]);
    if (own)
        race_stats_free(st);
    return out->n - before;
}
