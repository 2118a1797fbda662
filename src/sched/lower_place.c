/* lower_place.c — lowering pass 4: where every chunk lives, and the
 * operations that move it there.
 *
 * The events are walked in their causal order while a map tracks where
 * each chunk (or its partial sum) lives on each rank.  At a send the
 * sender's locations are noted; at the receive the transfer's chunks are
 * given their places (o where the collective keeps them, the accumulation
 * slot of a reduction, fresh scratch at a relay), sorted by source slot
 * and cut into runs that are contiguous on both sides.  Each run becomes
 * one send and one receive operation; a transfer that would split into
 * many runs is instead staged through contiguous scratch with local
 * copies (or reductions) when that costs less.  Chunks the collective
 * keeps on their own origin, and a final owner that received nothing,
 * get local copies.  Last, each rank's operations are sorted into the
 * order they run in.  See lower_int.h for what the pass reads and
 * writes. */
#include "lower_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ------------------------------------------------------------ chunk locations */

/* (rank, chunk key) -> where the chunk (or its partial sum) lives there. */
typedef struct {
    long long *key;
    loc *val;
    size_t cap, n;
} locmap;

static size_t lm_slot(long long k, size_t cap)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)(x & (cap - 1));
}

static void lm_alloc(locmap *m, size_t cap)
{
    m->cap = cap;
    m->n = 0;
    m->key = xmalloc(cap * sizeof *m->key);
    m->val = xmalloc(cap * sizeof *m->val);
    for (size_t i = 0; i < cap; i++)
        m->key[i] = -1;
}

static void lm_free(locmap *m)
{
    free(m->key);
    free(m->val);
}

static loc lm_get(const locmap *m, long long k)
{
    for (size_t i = lm_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k)
            return m->val[i];
        if (m->key[i] == -1)
            return noloc();
    }
}

static void lm_put(locmap *m, long long k, loc v);

static void lm_grow(locmap *m)
{
    locmap nm;
    lm_alloc(&nm, m->cap * 2);
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] != -1)
            lm_put(&nm, m->key[i], m->val[i]);
    lm_free(m);
    *m = nm;
}

static void lm_put(locmap *m, long long k, loc v)
{
    if (2 * (m->n + 1) > m->cap)
        lm_grow(m);
    for (size_t i = lm_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) {
            m->val[i] = v;
            return;
        }
        if (m->key[i] == -1) {
            m->key[i] = k;
            m->val[i] = v;
            m->n++;
            return;
        }
    }
}

/* Slot of o where rank r accumulates input chunk j, -1 if r only relays it. */
static int red_out_at(const shape *sh, int j, int r)
{
    if (sh->coll == COLL_ALLREDUCE)
        return j;
    return j / sh->per == r ? j % sh->per : -1;
}

/* ------------------------------------------------------------ operations */

static int new_op(lops *O)
{
    O->ops = xgrow(O->ops, &O->cops, O->nops + 1, sizeof *O->ops);
    op *o = &O->ops[O->nops];
    memset(o, 0, sizeof *o);
    o->peer = o->xfer = o->conn = o->partner = o->writer = o->host = o->chain_prev = -1;
    o->fuser = o->absorbs = -1;
    o->src = o->dst = noloc();
    o->src_rank = o->dst_rank = -1;
    return O->nops++;
}

/* ------------------------------------------------------------ 4. chunk placement and runs */

typedef struct {
    int sid;
    loc s;      /* where the sender reads it */
    loc d;      /* where the receiver puts it; BUF_NONE = new scratch */
    loc opnd;   /* receiver's own operand for rrc; BUF_NONE = none */
} member;

static int cmp_member(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    if (a->s.buf != b->s.buf) return a->s.buf < b->s.buf ? -1 : 1;
    if (a->s.off != b->s.off) return a->s.off < b->s.off ? -1 : 1;
    return (a->sid > b->sid) - (a->sid < b->sid);
}

/* With instances, runs may not cross a rank block of i or o. */
static int crosses_block(const lin *in, int buf, int off)
{
    return in->k > 1 && buf != BUF_S && off % in->sh.blk == 0;
}

static int follows(const lin *in, loc prev, loc cur)
{
    return cur.buf == prev.buf && cur.off == prev.off + 1 && !crosses_block(in, cur.buf, cur.off);
}

static int extends_run(const lin *in, const member *prev, const member *cur)
{
    if (!follows(in, prev->s, cur->s))
        return 0;
    if ((prev->d.buf == BUF_NONE) != (cur->d.buf == BUF_NONE))
        return 0;
    if (cur->d.buf != BUF_NONE && !follows(in, prev->d, cur->d))
        return 0;
    if ((prev->opnd.buf == BUF_NONE) != (cur->opnd.buf == BUF_NONE))
        return 0;
    if (cur->opnd.buf != BUF_NONE && !follows(in, prev->opnd, cur->opnd))
        return 0;
    return 1;
}

/* Ends of the runs of sorted members: run r is [cut[r], cut[r+1]). */
static int cut_runs(const lin *in, const member *m, int n, int *cut)
{
    int nr = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || !extends_run(in, &m[i - 1], &m[i]) || i - cut[nr - 1] >= MAX_CNT)
            cut[nr++] = i;
    cut[nr] = n;
    return nr;
}

/* The pass's own context: what it reads, the operations it writes, and
 * where every chunk lives as the events go by. */
typedef struct {
    const lin *in;
    const lxfers *xf;
    lops *ops;
    locmap map;         /* (rank * nkeys + key) -> location */
    loc *sloc, *salt;   /* per member position: sender's locations at the send event */
    member *ma, *mb;
    int *cut_a, *cut_b;
} placer;

/* The map's key of chunk (or partial) s at a rank. */
static long long chunk_at(const placer *P, int rank, const algo_send *s)
{
    return (long long)rank * P->in->sh.nkeys + key_of(&P->in->sh, s);
}

/* Sender side, at the send event. */
static void place_send(placer *P, int x)
{
    const shape *sh = &P->in->sh;
    const xfer *X = &P->xf->x[x];
    for (int m = X->first; m < X->first + X->n; m++) {
        const algo_send *s = &P->in->a->sends[P->xf->mem[m]];
        P->salt[m] = noloc();
        if (!sh->red && s->src == s->origin) {
            P->sloc[m] = mkloc(BUF_I, s->index);
            int out = out_at(sh, s->origin, s->index, s->origin);
            if (out >= 0)
                P->salt[m] = mkloc(BUF_O, out);
            continue;
        }
        loc v = lm_get(&P->map, chunk_at(P, s->src, s));
        if (v.buf == BUF_NONE)
            v = mkloc(BUF_I, s->index);     /* a partial with no contribution yet */
        P->sloc[m] = v;
    }
}

/* Receiver side of one member. */
static void place_recv_member(placer *P, const xfer *X, int m, member *out)
{
    const shape *sh = &P->in->sh;
    const algo_send *s = &P->in->a->sends[P->xf->mem[m]];
    long long mk = chunk_at(P, X->dst, s);
    out->sid = P->xf->mem[m];
    out->opnd = noloc();
    if (!sh->red) {
        int o = out_at(sh, s->origin, s->index, X->dst);
        out->d = o >= 0 ? mkloc(BUF_O, o) : lm_get(&P->map, mk);
    } else if (X->reduce) {
        loc v = lm_get(&P->map, mk);
        if (v.buf != BUF_NONE) {
            out->d = v;
            out->opnd = v;
        } else {
            int o = red_out_at(sh, s->index, X->dst);
            out->d = o >= 0 ? mkloc(BUF_O, o) : noloc();
            out->opnd = mkloc(BUF_I, s->index);
        }
    } else {
        out->d = mkloc(BUF_O, s->index);    /* AllReduce: the finished chunk */
    }
}

/* One send at the sender and its receive at the receiver; returns the
 * send's op id (the receive is the next one).  A BUF_NONE operand means a
 * plain receive (r), otherwise rrc with that local operand. */
static int new_pair(placer *P, int x, loc s, loc d, loc opnd, int cnt, long long ps, int srun,
                    long long pr, int rrun)
{
    const xfer *X = &P->xf->x[x];
    int so = new_op(P->ops);
    int ro = new_op(P->ops);
    op *S = &P->ops->ops[so], *R = &P->ops->ops[ro];
    S->rank = X->src;
    S->kind = OP_SEND;
    S->peer = X->dst;
    S->xfer = x;
    S->conn = X->conn;
    S->p = ps;
    S->run = srun;
    S->type0 = ST_S;
    S->src = s;
    S->src_rank = X->src;
    S->dst = d;
    S->dst_rank = X->dst;
    S->cnt = cnt;
    S->partner = ro;
    R->rank = X->dst;
    R->kind = OP_RECV;
    R->peer = X->src;
    R->xfer = x;
    R->conn = X->conn;
    R->p = pr;
    R->run = rrun;
    R->dst = d;
    R->dst_rank = X->dst;
    R->cnt = cnt;
    R->partner = so;
    if (opnd.buf != BUF_NONE) {
        R->type0 = ST_RRC;
        R->src = opnd;
        R->src_rank = X->dst;
    } else {
        R->type0 = ST_R;
        R->src = s;
        R->src_rank = X->src;
    }
    return so;
}

/* Fresh scratch of cnt chunks on a rank. */
static loc new_scratch(lops *O, int rank, int cnt)
{
    loc l = mkloc(BUF_S, O->scount[rank]);
    O->scount[rank] += cnt;
    return l;
}

static void emit_run(placer *P, int x, const member *m, int a, int b, long long ps, long long pr,
                     int run)
{
    const xfer *X = &P->xf->x[x];
    int cnt = b - a;
    loc d = m[a].d.buf == BUF_NONE ? new_scratch(P->ops, X->dst, cnt) : m[a].d;
    for (int i = a; i < b; i++) {
        const algo_send *s = &P->in->a->sends[m[i].sid];
        lm_put(&P->map, chunk_at(P, X->dst, s), mkloc(d.buf, d.off + (i - a)));
    }
    new_pair(P, x, m[a].s, d, m[a].opnd, cnt, ps, run, pr, run);
}

static int one_run_src(const lin *in, const member *m, int n)
{
    for (int i = 1; i < n; i++)
        if (!follows(in, m[i - 1].s, m[i].s))
            return 0;
    return 1;
}

static int one_run_dst(const lin *in, const member *m, int n)
{
    for (int i = 1; i < n; i++) {
        if ((m[i - 1].d.buf == BUF_NONE) != (m[i].d.buf == BUF_NONE))
            return 0;
        if (m[i].d.buf != BUF_NONE && !follows(in, m[i - 1].d, m[i].d))
            return 0;
    }
    return 1;
}

/* Whether a transfer that splits into nr runs is cheaper staged: one send
 * from contiguous scratch (gathered by local copies if its sources are
 * scattered) into contiguous scratch (scattered into place by local
 * copies), instead of nr - 1 extra alphas.  Needs the size and the
 * topology to weigh them; never for reductions (no local three-operand
 * reduce) or groups over the cnt limit. */
static int stage_pays(const lin *in, const xfer *X, const member *m, int n, int nr, int *gather,
                      int *scatter)
{
    if (nr <= 1 || n > MAX_CNT || in->o->size_bytes <= 0 || !in->t)
        return 0;
    *gather = !one_run_src(in, m, n);
    *scatter = X->reduce || !one_run_dst(in, m, n);
    double cb = (double)in->o->size_bytes / ((double)in->sh.C * in->k);
    topo_route r = topo_route_of(in->t, X->src, X->dst);
    double split = (nr - 1) * r.alpha_us;
    if (!(in->t->copy_gbps > 0) || (X->reduce && !(in->t->reduce_gbps > 0)))
        return 0;       /* local work the model does not price: never stage */
    double copy = cost_copy_us(in->t, cb);
    int fixed = 0;
    for (int i = 0; i < n; i++)
        fixed += m[i].d.buf != BUF_NONE;
    double stage = *gather ? n * copy : 0;
    if (X->reduce)
        stage += n * cost_reduce_us(in->t, cb) + fixed * copy;
    else if (*scatter)
        stage += fixed * copy;
    return stage < split;
}

static int new_local(lops *O, step_type type, int rank, loc src, loc dst, int cnt, long long p,
                     int run, int host)
{
    int c = new_op(O);
    op *o = &O->ops[c];
    o->rank = rank;
    o->kind = OP_COPY;
    o->p = p;
    o->run = run;
    o->type0 = type;
    o->src = src;
    o->dst = dst;
    o->src_rank = o->dst_rank = rank;
    o->cnt = cnt;
    o->host = host;
    o->xfer = O->ops[host].xfer;
    return c;
}

static int is_partial(const member *m)
{
    return m->d.buf != BUF_NONE && m->opnd.buf == m->d.buf && m->opnd.off == m->d.off;
}

/* Local steps of one kind over members [0, n) selected by `want`, with
 * operands src_of / dst_of, coalesced where both are contiguous. */
typedef loc (*operand_fn)(const member *m, int i, loc staged);

static loc staged_of(const member *m, int i, loc t)
{
    (void)m;
    return mkloc(t.buf, t.off + i);
}

static loc partial_of(const member *m, int i, loc t)
{
    (void)t;
    return m[i].d;
}

static loc input_of(const member *m, int i, loc t)
{
    (void)t;
    return m[i].opnd;
}

static int emit_locals(placer *P, step_type type, int rank, const member *m, int n,
                       int (*want)(const member *), int negate, operand_fn src_of,
                       operand_fn dst_of, loc t, long long p, int run, int host)
{
    for (int i = 0; i < n;) {
        if ((want(&m[i]) != 0) == (negate != 0)) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < n && j - i < MAX_CNT && (want(&m[j]) != 0) != (negate != 0) &&
               follows(P->in, src_of(m, j - 1, t), src_of(m, j, t)) &&
               follows(P->in, dst_of(m, j - 1, t), dst_of(m, j, t)))
            j++;
        new_local(P->ops, type, rank, src_of(m, i, t), dst_of(m, i, t), j - i, p, run++, host);
        i = j;
    }
    return run;
}

static int fixed_dst(const member *m)
{
    return m->d.buf != BUF_NONE;
}

static int first_fixed(const member *m)
{
    return !is_partial(m) && m->d.buf != BUF_NONE;
}

/* A staged reduction, after its receive into scratch t: add each received
 * partial into the receiver's accumulation slot (re), or, for a first
 * contribution, add the receiver's input into the received partial in
 * place (re), which then is the accumulation slot, copied into o at the
 * final owner. */
static void emit_staged_reduce(placer *P, int x, const member *m, int n, loc t, long long pr,
                               int host)
{
    const xfer *X = &P->xf->x[x];
    int run = 1;
    run = emit_locals(P, ST_RE, X->dst, m, n, is_partial, 0, staged_of, partial_of, t, pr, run,
                      host);
    run = emit_locals(P, ST_RE, X->dst, m, n, is_partial, 1, input_of, staged_of, t, pr, run,
                      host);
    emit_locals(P, ST_CPY, X->dst, m, n, first_fixed, 0, staged_of, partial_of, t, pr, run, host);
    for (int i = 0; i < n; i++) {
        const algo_send *s = &P->in->a->sends[m[i].sid];
        loc at = is_partial(&m[i]) || fixed_dst(&m[i]) ? m[i].d : mkloc(t.buf, t.off + i);
        lm_put(&P->map, chunk_at(P, X->dst, s), at);
    }
}

/* The local work staging adds, per member, for the caller's notes: the
 * same costs stage_pays() weighed. */
static void note_staged(const lin *in, const xfer *X, const member *m, int n, int gather,
                        int scatter)
{
    if (!in->o->notes)
        return;
    double cb = (double)in->o->size_bytes / ((double)in->sh.C * in->k);
    double copy = cost_copy_us(in->t, cb);
    for (int i = 0; i < n; i++) {
        lower_note *nt = &in->o->notes[m[i].sid];
        int fixed = m[i].d.buf != BUF_NONE;
        nt->pre_us = gather ? copy : 0;
        if (X->reduce)
            nt->post_us = cost_reduce_us(in->t, cb) + (fixed ? copy : 0);
        else
            nt->place_us = scatter && fixed ? copy : 0;
    }
}

/* A staged transfer: gather copies at the sender (runs 0..g-1, then the
 * send), one send, one receive (run 0) and scatter copies (runs 1..). */
static void emit_staged(placer *P, int x, member *m, int n, int gather, int scatter, long long ps,
                        long long pr)
{
    const xfer *X = &P->xf->x[x];
    int ng = 0;
    if (gather)
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && follows(P->in, m[j - 1].s, m[j].s))
                j++;
            ng++;
            i = j;
        }
    loc s0 = gather ? new_scratch(P->ops, X->src, n) : m[0].s;
    loc d0 = scatter || m[0].d.buf == BUF_NONE ? new_scratch(P->ops, X->dst, n) : m[0].d;
    int so = new_pair(P, x, s0, d0, noloc(), n, ps, ng, pr, 0), ro = so + 1;
    int run = 0;
    if (gather)
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && follows(P->in, m[j - 1].s, m[j].s))
                j++;
            new_local(P->ops, ST_CPY, X->src, m[i].s, mkloc(BUF_S, s0.off + i), j - i, ps, run++,
                      so);
            i = j;
        }
    run = 1;
    if (X->reduce) {
        emit_staged_reduce(P, x, m, n, d0, pr, ro);
        return;
    }
    if (scatter)
        for (int i = 0; i < n;) {
            if (m[i].d.buf == BUF_NONE) {
                i++;
                continue;
            }
            int j = i + 1;
            while (j < n && m[j].d.buf != BUF_NONE && follows(P->in, m[j - 1].d, m[j].d))
                j++;
            new_local(P->ops, ST_CPY, X->dst, mkloc(BUF_S, d0.off + i), m[i].d, j - i, pr, run++,
                      ro);
            i = j;
        }
    /* where the receiver keeps each chunk for later sends: the staging
     * slot (it arrived together, so it likely leaves together), except an
     * AllReduce result, which lives in o */
    for (int i = 0; i < n; i++) {
        const algo_send *s = &P->in->a->sends[m[i].sid];
        loc at = mkloc(d0.buf, d0.off + i);
        if (scatter && P->in->sh.red && m[i].d.buf != BUF_NONE)
            at = m[i].d;
        lm_put(&P->map, chunk_at(P, X->dst, s), at);
    }
}

/* Receiver side, at the receive event: place, split into runs (or stage),
 * emit. */
static void place_recv(placer *P, int x, long long ps, long long pr)
{
    const xfer *X = &P->xf->x[x];
    int n = X->n, has_alt = 0;
    for (int i = 0; i < n; i++) {
        int m = X->first + i;
        place_recv_member(P, X, m, &P->ma[i]);
        P->ma[i].s = P->sloc[m];
        P->mb[i] = P->ma[i];
        if (P->salt[m].buf != BUF_NONE) {
            P->mb[i].s = P->salt[m];
            has_alt = 1;
        }
    }
    qsort(P->ma, (size_t)n, sizeof *P->ma, cmp_member);
    int nra = cut_runs(P->in, P->ma, n, P->cut_a);
    member *m = P->ma;
    int *cut = P->cut_a, nr = nra;
    if (has_alt) {
        qsort(P->mb, (size_t)n, sizeof *P->mb, cmp_member);
        int nrb = cut_runs(P->in, P->mb, n, P->cut_b);
        if (nrb < nra) {
            m = P->mb;
            cut = P->cut_b;
            nr = nrb;
        }
    }
    int gather, scatter;
    if (stage_pays(P->in, X, m, n, nr, &gather, &scatter)) {
        note_staged(P->in, X, m, n, gather, scatter);
        emit_staged(P, x, m, n, gather, scatter, ps, pr);
        return;
    }
    for (int r = 0; r < nr; r++) {
        emit_run(P, x, m, cut[r], cut[r + 1], ps, pr, r);
        if (P->in->o->notes)
            for (int i = cut[r]; i < cut[r + 1]; i++)
                P->in->o->notes[m[i].sid].run = r;
    }
}

/* Local copies i -> o of consecutive (src, dst) pairs, cut into runs. */
static void emit_copies(const lin *in, lops *O, int rank, const int *src, const int *dst, int n,
                        long long p)
{
    int run = 0;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && j - i < MAX_CNT &&
               follows(in, mkloc(BUF_I, src[j - 1]), mkloc(BUF_I, src[j])) &&
               follows(in, mkloc(BUF_O, dst[j - 1]), mkloc(BUF_O, dst[j])))
            j++;
        int c = new_op(O);
        op *o = &O->ops[c];
        o->rank = rank;
        o->kind = OP_COPY;
        o->p = p;
        o->run = run++;
        o->type0 = ST_CPY;
        o->src = mkloc(BUF_I, src[i]);
        o->dst = mkloc(BUF_O, dst[i]);
        o->src_rank = o->dst_rank = rank;
        o->cnt = j - i;
        i = j;
    }
}

/* Chunks the collective keeps on their own origin: copied first. */
static void emit_self_copies(const lin *in, lops *O)
{
    const shape *sh = &in->sh;
    if (sh->red)
        return;
    int *src = xcalloc((size_t)sh->in, sizeof *src), *dst = xcalloc((size_t)sh->in, sizeof *dst);
    for (int r = 0; r < sh->n; r++) {
        int n = 0;
        for (int i = 0; i < sh->in; i++) {
            int o = out_at(sh, r, i, r);
            if (o >= 0) {
                src[n] = i;
                dst[n++] = o;
            }
        }
        emit_copies(in, O, r, src, dst, n, -1);
    }
    free(src);
    free(dst);
}

/* Reductions: a final owner that received no contribution copies its input. */
static void emit_missing_copies(placer *P, long long p)
{
    const shape *sh = &P->in->sh;
    if (!sh->red)
        return;
    int *src = xcalloc((size_t)sh->out, sizeof *src), *dst = xcalloc((size_t)sh->out, sizeof *dst);
    for (int r = 0; r < sh->n; r++) {
        int n = 0;
        for (int o = 0; o < sh->out; o++) {
            int j = sh->coll == COLL_ALLREDUCE ? o : r * sh->per + o;
            if (lm_get(&P->map, (long long)r * sh->nkeys + j).buf == BUF_NONE) {
                src[n] = j;
                dst[n++] = o;
            }
        }
        emit_copies(P->in, P->ops, r, src, dst, n, p);
    }
    free(src);
    free(dst);
}

static void place_all(const lin *in, const lxfers *xf, const int *order, lops *ops)
{
    int nev = 2 * xf->nx, maxn = 1;
    for (int x = 0; x < xf->nx; x++)
        if (xf->x[x].n > maxn)
            maxn = xf->x[x].n;
    placer P;
    P.in = in;
    P.xf = xf;
    P.ops = ops;
    lm_alloc(&P.map, 1024);
    P.sloc = xcalloc((size_t)in->a->nsends + 1, sizeof *P.sloc);
    P.salt = xcalloc((size_t)in->a->nsends + 1, sizeof *P.salt);
    P.ma = xcalloc((size_t)maxn, sizeof *P.ma);
    P.mb = xcalloc((size_t)maxn, sizeof *P.mb);
    P.cut_a = xcalloc((size_t)maxn + 1, sizeof *P.cut_a);
    P.cut_b = xcalloc((size_t)maxn + 1, sizeof *P.cut_b);
    long long *pos = xcalloc((size_t)nev + 1, sizeof *pos);
    for (int i = 0; i < nev; i++)
        pos[order[i]] = i;
    emit_self_copies(in, ops);
    for (int i = 0; i < nev; i++) {
        int e = order[i], x = e / 2;
        if (e & 1)
            place_recv(&P, x, pos[2 * x], pos[2 * x + 1]);
        else
            place_send(&P, x);
    }
    emit_missing_copies(&P, nev);
    free(pos);
    free(P.cut_a);
    free(P.cut_b);
    free(P.ma);
    free(P.mb);
    free(P.sloc);
    free(P.salt);
    lm_free(&P.map);
}

/* ------------------------------------------------------------ rank order */

typedef struct {
    int rank;
    long long p;
    int run, kind, id;
} rank_key;

static int cmp_rank_key(const void *pa, const void *pb)
{
    const rank_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->p != b->p) return a->p < b->p ? -1 : 1;
    if (a->run != b->run) return a->run < b->run ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static void sort_rank_ops(int n, lops *O)
{
    rank_key *rk = xcalloc((size_t)O->nops, sizeof *rk);
    for (int i = 0; i < O->nops; i++)
        rk[i] = (rank_key){O->ops[i].rank, O->ops[i].p, O->ops[i].run, O->ops[i].kind, i};
    qsort(rk, (size_t)O->nops, sizeof *rk, cmp_rank_key);
    O->rank_ops = xcalloc((size_t)O->nops, sizeof *O->rank_ops);
    O->rank_first = xcalloc((size_t)n + 1, sizeof *O->rank_first);
    for (int i = 0; i < O->nops; i++) {
        O->rank_ops[i] = rk[i].id;
        O->rank_first[rk[i].rank + 1]++;
    }
    for (int r = 0; r < n; r++)
        O->rank_first[r + 1] += O->rank_first[r];
    free(rk);
}

/* ------------------------------------------------------------ the pass */

void lower_place(const lin *in, const lxfers *xf, const int *order, lops *ops)
{
    ops->scount = xcalloc((size_t)in->sh.n, sizeof *ops->scount);
    place_all(in, xf, order, ops);
    sort_rank_ops(in->sh.n, ops);
}

