/* mpp_run.c — run an MSCCL++ execution plan on the device model.
 *
 * Why this shape: MSCCL++'s kernel (execution_kernel.hpp at 1f5f065) runs
 * every op of a block with all its threads and no __syncthreads between
 * ops (a "nop" is the __syncthreads); one thread per channel signals, waits,
 * releases and acquires.  Data moves one-sidedly into peers' buffers and
 * only semaphores (and LL packets' flags) order it.  So the interpreter
 * keeps two things apart:
 *
 * - Data: real bytes per rank and buffer (i, o, s; in place the buffers
 *   alias as MSCCL++'s callers alias them), LL16 packets written as MSCCL++
 *   lays them out (8 data bytes, two 4-byte flags, at twice the data
 *   offset), every op applied when its block reaches it in one legal
 *   interleaving (the block with the earliest clock whose next op can run).
 *   Everything is by bytes but the data itself: inputs, reductions (each
 *   step rounded to the type, i32/f32/bf16/f16) and the check are data.c's.
 * - Order: vector clocks over blocks.  An op knows its own block's ops up
 *   to the last nop/barrier, and what waits, acquires and barriers gave it
 *   (a wait's or acquire's knowledge reaches the other threads only at the
 *   next nop).  A non-relaxed signal/wait pair (or any port pair) orders
 *   the signaller's writes before the waiter's accesses; a relaxed pair on a
 *   memory channel orders only execution: reads before it (the owner
 *   released the buffer), not writes (memory_channel_device.hpp:32-52).
 *   Every access is checked against the last write and read of its 16-byte
 *   granule: an unordered read of a write is "a read of remote data before
 *   the wait that orders it", an unordered write over a read "a put into a
 *   buffer its owner has not released".  Packet reads are ordered by their
 *   flags, element by element.  Without data the same bookkeeping is kept
 *   by runs of granules (span, spanmap), so a timing-only run costs what
 *   its accesses cost, not its bytes (docs/mscclpp.md section 13).
 *
 * Time is the alpha-beta model of model/cost.h over the topology's routes
 * and lanes; a block waits for the signal, release, barrier or packet it
 * needs, port puts land asynchronously in FIFO order per channel. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/collective.h"
#include "../model/cost.h"
#include "../util/mem.h"
#include "../util/tcassert.h"
#include "data.h"
#include "mpp_int.h"

#define GRAN 16                 /* metadata granule: MSCCL++'s int4 / LL16 packet */
#define PKT_FLAG 1u             /* flag_ of the first launch (executor.cc:516) */
#define MAX_HAZARDS 64
#define NOBODY (-1)

typedef struct {
    int wtb, wc;                /* last write: block, its clock */
    int rtb, rc;                /* last read */
    int wlane, rlane;           /* the thread of the block that did it */
    float land;                 /* when the last write landed (us) */
    unsigned char wpkt;         /* the last write was an LL packet */
} gmeta;

/* Without data the same bookkeeping by runs of granules that share it
 * (docs/mscclpp.md section 13): a run's lanes are kept as the access that
 * set them (its first byte in its storage and its unit), from which a
 * granule's lane is computed as access_range computes it; `flag` is whether
 * the granule's packet flags are set (with data, mem holds them). */
typedef struct {
    long long g;                /* first granule of the run in its storage */
    long long woff, roff;       /* lanes: the writer's/reader's range start, storage bytes */
    int wtb, wc, rtb, rc;
    int wunit, runit;
    float land;
    unsigned char wpkt, flag;
} span;

typedef struct {
    span *v;                    /* sorted by g; v[0].g == 0; a run ends where the next starts */
    int n, cap;
    long long ng;               /* granules of the storage */
} spanmap;

typedef struct {
    unsigned char *mem;         /* NULL: buffer of 0 bytes, or no data and spans */
    gmeta *meta;                /* granule 0 = byte 0 of mem (mem is GRAN-aligned in its storage) */
    spanmap *sm;                /* without data: the runs (meta and mem NULL) */
    long long gbase;            /* sm: the view's granule 0 in its storage */
    long long len;
} view;

typedef struct {
    const mpp_op *op;
    long long it_off;           /* pipeline: iteration byte offset */
    long long unit;             /* pipeline: unit_size, else -1 */
} inst;

typedef struct {
    double t;
    int *vs, *vw;               /* strong (NULL: relaxed) and weak knowledge sent */
} sigrec;

typedef struct {
    sigrec *v;
    int n, cap, head;
    long long sent, waited;
    double fifo_land;           /* port: when its last put lands */
    int peer_chan;              /* the paired channel on the peer, or -1 */
} chst;

typedef struct {
    int rank, t, g;
    inst *prog;
    int nprog, pc;
    int done;
    double now;
    int c, sync_own;
    int *K, *W, *pK, *pW;
    int bar_gen;                /* barrier generation this block arrived in, -1 none */
    long long pkt_cursor;       /* packets found flagged so far in the current op */
    int ninst_cap;
    const mpp_op **inst_op;     /* op of each clock value */
    int **snap;                 /* knowledge sent with the packets an instance wrote, or NULL */
    int acq_tb, acq_c;          /* the packet writer last acquired from */
    double pkt_ready;
    /* What each thread's own waits and acquires gave it since the last nop
     * (the union is pK/pW): thread i runs the i-th channel of a wait and the
     * i-th semaphore of an acquire, and the i-th destination of a port put,
     * whose proxy reads after that thread's push (see lane_know). */
    struct lanek { int lane; const int *vs, *vw; } *lk;
    int nlk, lk_cap;
    int solo;                   /* the thread of a one-thread op's access, else -1 */
    double not_before;          /* its op found its link busy: it asks again then, -1 */
    double asked;               /* when its op first asked for the link, -1 */
} tbst;

typedef struct {
    int arrived, need, gen;
    int *vc;
    double t;
    int done_gen;               /* last generation completed */
    double done_t;
    int *done_vc;
} barst;

typedef struct {
    const mpp_plan *P;
    const topo *T;
    const mpp_opts *O;
    mpp_report *R;
    int n, NT;
    long long cb;               /* bytes per chunk */
    int es;                     /* bytes per element: 4 i32/f32, 2 bf16/f16 */
    long long scratch_bytes;
    view *views;                /* [n * MB_N] */
    unsigned char **owned;      /* [n * MB_N] storage owned */
    gmeta **owned_meta;
    spanmap *owned_sm;          /* [n * MB_N], without data */
    tbst *tb;
    int *tb_base;
    chst **ch[4];               /* [rank][chan] for memory, port */
    struct semq { sigrec *v; int n, cap, head; int init_left; } **sem;
    barst **bar;                /* [rank][MPP_MAX_SYNCERS] */
    cost_lanes *lanes;
    int hz_capped;
    long long progress;
} mrun;

static view *V(mrun *m, int rank, mpp_buf b) { return &m->views[rank * MB_N + b]; }

static void hz(mrun *m, hazard_kind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void hz(mrun *m, hazard_kind k, const char *fmt, ...)
{
    if (m->R->hz.n >= MAX_HAZARDS) {
        m->hz_capped = 1;
        return;
    }
    char msg[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hazard_add(&m->R->hz, k, -1, -1, -1, "%s", msg);
}

static const char *bufname(mpp_buf b) { return b == MB_I ? "i" : b == MB_O ? "o" : "s"; }

/* ------------------------------------------------------------ sizes */

static long long lcm_ll(long long a, long long b)
{
    long long x = a, y = b;
    while (y) {
        long long t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* The chunk quantum: every offset and size in buffer_alignment units, whole
 * elements (4 or 2 bytes), whole 16-byte granules and (LL) packets. */
static long long chunk_quantum(const mpp_plan *p)
{
    return lcm_ll(p->align, GRAN);
}

static int max_chunks(const mpp_plan *p)
{
    int mc = 1;
    for (int g = 0; g < p->nranks; g++)
        for (int b = 0; b < 2; b++)
            if (p->gpu[g].chunks[b] > mc)
                mc = p->gpu[g].chunks[b];
    return mc;
}

long long mpp_round_size(const mpp_plan *p, long long size)
{
    long long q = chunk_quantum(p), mc = max_chunks(p);
    long long cb = ((size + mc - 1) / mc + q - 1) / q * q;
    return cb * mc;
}

long long mpp_default_size(const mpp_plan *p)
{
    return mpp_round_size(p, 1LL << 20);
}

/* ------------------------------------------------------------ vector clocks */

static void vc_join(int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i] > a[i])
            a[i] = b[i];
}

/* What op instances of block s know of block u, strongly or weakly.  An
 * access made by one thread alone (s->solo: a port put's proxy reads what
 * that thread pushed, execution_kernel.hpp:167-184) also knows what that
 * thread's own waits and acquires gave before any nop: the wait is an
 * acquire load and the FIFO push a release store of the same thread
 * (semaphore_device.hpp:116 memory, :48 port; fifo_device.hpp:133; device semaphores
 * concurrency_device.hpp:118-126), so the proxy's read follows them. */
static int know(const tbst *s, int u, int weak)
{
    if (u == s->g)
        return s->sync_own;
    int k = weak ? s->W[u] : s->K[u];
    for (int i = 0; s->solo >= 0 && i < s->nlk; i++) {
        const struct lanek *l = &s->lk[i];
        const int *v = weak ? l->vw : l->vs;
        if (l->lane == s->solo && v && v[u] > k)
            k = v[u]; /* vw holds vs (snapshot) */
    }
    return k;
}

static const mpp_op *op_of(const mrun *m, int g, int c)
{
    const tbst *s = &m->tb[g];
    return c >= 0 && c < s->ninst_cap ? s->inst_op[c] : NULL;
}

static void where(const mrun *m, int g, int c, char *buf, size_t n)
{
    const mpp_op *op = op_of(m, g, c);
    snprintf(buf, n, "%s (%s)", op ? op->path : "?", op ? mpp_op_name(op->type) : "?");
}

/* ------------------------------------------------------------ access checks */

typedef struct {
    int reported_raw, reported_war, reported_waw, reported_oob;
} opflags;

/* A read or write of rank's b at granule gi (of the view) that nothing
 * orders after the write by block wtb at clock wc. */
static void report_unordered(mrun *m, tbst *s, const mpp_op *me, int write, int rank, mpp_buf b,
                             long long gi, int wtb, int wc)
{
    char w[200];
    where(m, wtb, wc, w, sizeof w);
    const tbst *o = &m->tb[wtb];
    if (wtb == s->g)
        hz(m, HZ_RACE, "%s (%s) %s rank %d's %s buffer at byte %lld, which %s of the same "
           "threadblock wrote with no nop (__syncthreads) between: other threads may "
           "not have written it yet", me->path, mpp_op_name(me->type),
           write ? "overwrites" : "reads", rank, bufname(b), gi * GRAN, w);
    else if (o->rank == s->rank && rank == s->rank)
        hz(m, HZ_RACE, "%s (%s) %s rank %d's %s buffer at byte %lld, written by %s of "
           "another threadblock with no barrier or semaphore ordering them", me->path,
           mpp_op_name(me->type), write ? "overwrites" : "reads", rank, bufname(b),
           gi * GRAN, w);
    else
        hz(m, HZ_RACE, "%s (%s) %s rank %d's %s buffer at byte %lld before the wait that "
           "orders %s's write of it (no signal/wait pair, or only a relaxed one, or no "
           "nop after the wait)", me->path, mpp_op_name(me->type),
           write ? "overwrites" : "reads", rank, bufname(b), gi * GRAN, w);
}

/* A write of rank's b at granule gi over a read by block rtb at clock rc
 * that nothing orders first; same_block: the writer's own block read it. */
static void report_overwrite(mrun *m, tbst *s, const mpp_op *me, int rank, mpp_buf b, long long gi,
                             int rtb, int rc, int same_block)
{
    char w[200];
    where(m, rtb, rc, w, sizeof w);
    if (same_block)
        hz(m, HZ_RACE, "%s (%s) overwrites rank %d's %s buffer at byte %lld that %s of the same "
           "threadblock reads, with no nop (__syncthreads) between", me->path,
           mpp_op_name(me->type), rank, bufname(b), gi * GRAN, w);
    else if (rank != s->rank)
        hz(m, HZ_RACE, "%s (%s) writes into rank %d's %s buffer at byte %lld, which its owner "
           "has not released: %s still reads it and no wait orders that read first",
           me->path, mpp_op_name(me->type), rank, bufname(b), gi * GRAN, w);
    else
        hz(m, HZ_RACE, "%s (%s) overwrites rank %d's %s buffer at byte %lld while %s may "
           "still read it (no wait, barrier or semaphore orders the read first)",
           me->path, mpp_op_name(me->type), rank, bufname(b), gi * GRAN, w);
}

/* A flagged packet written by block wtb at clock wc is read: what its writer
 * knew reaches the reader (reads before the write are done; writes are not
 * ordered by it). */
static void packet_acquire(mrun *m, tbst *s, int wtb, int wc)
{
    if (wtb == NOBODY || wtb == s->g || (wtb == s->acq_tb && wc == s->acq_c))
        return;
    const int *v = m->tb[wtb].snap[wc];
    if (v)
        vc_join(s->W, v, m->NT);
    s->acq_tb = wtb;
    s->acq_c = wc;
}

/* ---- the runs (no data) */

static long long span_end(const spanmap *sm, int k) { return k + 1 < sm->n ? sm->v[k + 1].g : sm->ng; }

/* Index of the run holding granule G. */
static int span_find(const spanmap *sm, long long G)
{
    int lo = 0, hi = sm->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (sm->v[mid].g <= G)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Make G the start of a run (G < ng); its index. */
static int span_split(spanmap *sm, long long G)
{
    int k = span_find(sm, G);
    if (sm->v[k].g == G)
        return k;
    sm->v = xgrow(sm->v, &sm->cap, sm->n + 1, sizeof(span));
    memmove(&sm->v[k + 2], &sm->v[k + 1], (size_t)(sm->n - k - 1) * sizeof(span));
    sm->v[k + 1] = sm->v[k];
    sm->v[k + 1].g = G;
    sm->n++;
    return k + 1;
}

static int span_same(const span *a, const span *b)
{
    return a->wtb == b->wtb && a->wc == b->wc && a->rtb == b->rtb && a->rc == b->rc &&
           a->woff == b->woff && a->roff == b->roff && a->wunit == b->wunit && a->runit == b->runit &&
           a->land == b->land && a->wpkt == b->wpkt && a->flag == b->flag;
}

/* Merge equal neighbours among runs [k0, k1] (indices before the merge). */
static void span_merge(spanmap *sm, int k0, int k1)
{
    if (k0 < 1)
        k0 = 1;
    if (k1 > sm->n - 1)
        k1 = sm->n - 1;
    int w = k0;
    for (int k = k0; k < sm->n; k++) {
        if (k <= k1 && span_same(&sm->v[w - 1], &sm->v[k]))
            continue;
        sm->v[w++] = sm->v[k];
    }
    sm->n = w;
}

/* Runs [k0, k1) covering granules [G0, G1) of sm (G0 < G1 <= ng). */
static void span_cut(spanmap *sm, long long G0, long long G1, int *k0, int *k1)
{
    *k0 = span_split(sm, G0);
    *k1 = G1 < sm->ng ? span_split(sm, G1) : sm->n;
    *k0 = span_find(sm, G0); /* the second split may have moved nothing before it */
}

/* The lane of storage granule G for an access starting at storage byte o
 * with unit u: access_range's formula. */
static int lane_at(long long G, long long o, int u, int threads)
{
    return (int)(((G * GRAN - o) / u) % threads);
}

/* The first granule of [A, B) where lanes (o1, u1) and (o2, u2) differ, or
 * -1.  Past each range's first granule a lane is periodic in G with period
 * lcm(16, u1 * threads, u2 * threads) / 16, so one period more is enough. */
static long long lane_differs(long long A, long long B, long long o1, int u1, long long o2, int u2,
                              int threads)
{
    long long per = lcm_ll(lcm_ll(GRAN, (long long)u1 * threads), (long long)u2 * threads) / GRAN;
    long long end = A + 2 + per < B ? A + 2 + per : B;
    for (long long G = A; G < end; G++)
        if (lane_at(G, o1, u1, threads) != lane_at(G, o2, u2, threads))
            return G;
    return -1;
}

/* access_range on the runs: the same checks, run by run; a check that
 * depends on the lane (the same thread of the same block) finds its first
 * granule by lane_differs. */
static void access_spans(mrun *m, tbst *s, opflags *f, int rank, mpp_buf b, view *vw, long long off,
                         long long g0, long long g1, int write, int pkt, double land, int unit)
{
    spanmap *sm = vw->sm;
    const mpp_op *me = s->inst_op[s->c];
    int threads = m->P->threads;
    long long base = vw->gbase, so = off + base * GRAN;
    int k0, k1;
    span_cut(sm, base + g0, base + g1, &k0, &k1);
    for (int k = k0; k < k1; k++) {
        span *sp = &sm->v[k];
        long long A = sp->g, B = span_end(sm, k);
        if (!write && pkt && sp->wpkt)
            packet_acquire(m, s, sp->wtb, sp->wc);
        int *rep = write ? &f->reported_waw : &f->reported_raw;
        long long hit = -1, hit_war = -1;
        if (!*rep && sp->wtb != NOBODY && !(sp->wtb == s->g && sp->wc == s->c) && !(pkt && sp->wpkt) &&
            sp->wc > know(s, sp->wtb, 0))
            hit = sp->wtb != s->g ? A : lane_differs(A, B, sp->woff, sp->wunit, so, unit, threads);
        int same_block = 0;
        if (write && !f->reported_war) {
            if (sp->rtb != NOBODY && sp->rtb != s->g && sp->rc > know(s, sp->rtb, 1))
                hit_war = A;
            else if (sp->rtb == s->g && sp->rc != s->c && sp->rc > s->sync_own) {
                hit_war = lane_differs(A, B, sp->roff, sp->runit, so, unit, threads);
                same_block = 1;
            }
        }
        /* in granule order, the unordered access first at the same granule */
        if (hit >= 0 && (hit_war < 0 || hit <= hit_war)) {
            *rep = 1;
            report_unordered(m, s, me, write, rank, b, hit - base, sp->wtb, sp->wc);
        }
        if (hit_war >= 0) {
            f->reported_war = 1;
            report_overwrite(m, s, me, rank, b, hit_war - base, sp->rtb, sp->rc, same_block);
        }
        if (hit >= 0 && hit_war >= 0 && hit > hit_war) {
            *rep = 1;
            report_unordered(m, s, me, write, rank, b, hit - base, sp->wtb, sp->wc);
        }
        if (write) {
            sp->wtb = s->g;
            sp->wc = s->c;
            sp->wpkt = (unsigned char)pkt;
            sp->woff = so;
            sp->wunit = unit;
            sp->land = (float)land;
            sp->rtb = NOBODY;
            sp->rc = 0;
            sp->roff = 0;
            sp->runit = 0;
        } else {
            sp->rtb = s->g;
            sp->rc = s->c;
            sp->roff = so;
            sp->runit = unit;
        }
    }
    span_merge(sm, k0, k1);
}

/* Check and record an access of granules [g0, g1) of view v (rank, buffer
 * for messages) by block s at clock c.  write: 1; pkt: packet access. */
static void access_range(mrun *m, tbst *s, opflags *f, int rank, mpp_buf b, long long off,
                         long long len, int write, int pkt, double land)
{
    view *vw = V(m, rank, b);
    const mpp_op *me = s->inst_op[s->c];
    if (len <= 0)
        return;
    if (off < 0 || off + len > vw->len) {
        if (!f->reported_oob) {
            f->reported_oob = 1;
            hz(m, HZ_BOUNDS, "%s (%s): %s bytes %lld..%lld of rank %d's %s buffer, which has %lld "
               "bytes (MSCCL++ does not check: memory past the buffer)", me->path,
               mpp_op_name(me->type), write ? "writes" : "reads", off, off + len - 1, rank, bufname(b),
               vw->len);
        }
        if (off < 0)
            return;
        len = vw->len - off;
        if (len <= 0)
            return;
    }
    long long g0 = off / GRAN, g1 = (off + len + GRAN - 1) / GRAN;
    /* The thread of the block that touches a granule: packet ops give a
     * thread a packet (8 data bytes, 16 in packet form), the others a
     * 16-byte vector, counted from the range's start; an earlier op of the
     * same block touched it from the same thread iff the lanes agree. */
    int unit = 16, threads = m->P->threads;
    switch (me->type) {
    case MOP_PPKT: case MOP_RPPKT: case MOP_CPKT: case MOP_UPKT: case MOP_REPKT:
    case MOP_RESPKT: case MOP_RECPKT: case MOP_RECSPKT: case MOP_GSTOREPKT:
        unit = pkt ? 16 : 8;
        break;
    default:
        break;
    }
    if (write && pkt && !s->snap[s->c]) {
        int *v = xmalloc((size_t)m->NT * sizeof(int));
        memcpy(v, s->W, (size_t)m->NT * sizeof(int));
        vc_join(v, s->pW, m->NT);
        vc_join(v, s->K, m->NT);
        vc_join(v, s->pK, m->NT);
        v[s->g] = s->c;
        s->snap[s->c] = v;
    }
    if (vw->sm) {
        access_spans(m, s, f, rank, b, vw, off, g0, g1, write, pkt, land, unit);
        return;
    }
    for (long long gi = g0; gi < g1; gi++) {
        gmeta *gm = &vw->meta[gi];
        int lane = (int)(((gi * GRAN - off) / unit) % threads);
        if (!write && pkt && gm->wpkt)
            packet_acquire(m, s, gm->wtb, gm->wc);
        int same_thread_w = gm->wtb == s->g && gm->wlane == lane;
        int same_thread_r = gm->rtb == s->g && gm->rlane == lane;
        if (gm->wtb != NOBODY && !(gm->wtb == s->g && gm->wc == s->c) && !(pkt && gm->wpkt) &&
            !same_thread_w && gm->wc > know(s, gm->wtb, 0)) {
            int *rep = write ? &f->reported_waw : &f->reported_raw;
            if (!*rep) {
                *rep = 1;
                report_unordered(m, s, me, write, rank, b, gi, gm->wtb, gm->wc);
            }
        }
        if (write && gm->rtb != NOBODY && gm->rtb != s->g && gm->rc > know(s, gm->rtb, 1) &&
            !f->reported_war) {
            f->reported_war = 1;
            report_overwrite(m, s, me, rank, b, gi, gm->rtb, gm->rc, 0);
        } else if (write && gm->rtb == s->g && gm->rc != s->c && gm->rc > s->sync_own &&
                   !same_thread_r && !f->reported_war) {
            f->reported_war = 1;
            report_overwrite(m, s, me, rank, b, gi, gm->rtb, gm->rc, 1);
        }
        if (write) {
            gm->wtb = s->g;
            gm->wc = s->c;
            gm->wpkt = (unsigned char)pkt;
            gm->wlane = lane;
            gm->land = (float)land;
            gm->rtb = NOBODY;
        } else {
            gm->rtb = s->g;
            gm->rc = s->c;
            gm->rlane = lane;
        }
    }
}

/* ------------------------------------------------------------ data */

static void *at(mrun *m, int rank, mpp_buf b, long long off)
{
    view *vw = V(m, rank, b);
    return vw->mem + off;
}

static int in_bounds(mrun *m, int rank, mpp_buf b, long long off, long long len)
{
    return off >= 0 && len >= 0 && off + len <= V(m, rank, b)->len;
}

static void dcopy(mrun *m, int dr, mpp_buf db, long long doff, int sr, mpp_buf sb, long long soff,
                  long long len)
{
    if (!m->O->data || len <= 0 || !in_bounds(m, dr, db, doff, len) || !in_bounds(m, sr, sb, soff, len))
        return;
    memmove(at(m, dr, db, doff), at(m, sr, sb, soff), (size_t)len);
}

/* acc[0..len) += src */
static void dadd(mrun *m, unsigned char *acc, int sr, mpp_buf sb, long long soff, long long len)
{
    if (!m->O->data || !in_bounds(m, sr, sb, soff, len))
        return;
    data_reduce(m->O->dtype, acc, acc, at(m, sr, sb, soff), len / m->es);
}

static void dload(mrun *m, unsigned char *dst, int sr, mpp_buf sb, long long soff, long long len)
{
    if (!m->O->data)
        return;
    if (!in_bounds(m, sr, sb, soff, len)) {
        memset(dst, 0, (size_t)len);
        return;
    }
    memcpy(dst, at(m, sr, sb, soff), (size_t)len);
}

static void dstore(mrun *m, int dr, mpp_buf db, long long doff, const unsigned char *src, long long len)
{
    if (!m->O->data || !in_bounds(m, dr, db, doff, len))
        return;
    memcpy(at(m, dr, db, doff), src, (size_t)len);
}

/* A working buffer of n data bytes (zeroed), or NULL without data (what
 * takes it then reads and writes no data). */
static unsigned char *dbuf(const mrun *m, long long n)
{
    return m->O->data ? xcalloc((size_t)(n > 0 ? n : 1), 1) : NULL;
}

/* Runs: set the packet flags of granules [G0, G1) of sm to `to`. */
static void flags_put(spanmap *sm, long long G0, long long G1, int to)
{
    if (G0 >= G1)
        return;
    int k0, k1;
    span_cut(sm, G0, G1, &k0, &k1);
    for (int k = k0; k < k1; k++)
        sm->v[k].flag = (unsigned char)to;
    span_merge(sm, k0, k1);
}

/* Write `len` data bytes as LL16 packets at packet byte offset poff: the
 * data (with data) and the flags. */
static void pkt_store(mrun *m, int dr, mpp_buf db, long long poff, const unsigned char *src, long long len)
{
    if (!in_bounds(m, dr, db, poff, len * 2))
        return;
    view *vw = V(m, dr, db);
    if (vw->sm) {
        /* packets are whole granules here (mpp_run) */
        flags_put(vw->sm, vw->gbase + poff / GRAN, vw->gbase + (poff + 2 * len) / GRAN, 1);
        return;
    }
    unsigned char *d = at(m, dr, db, poff);
    unsigned flag = PKT_FLAG;
    for (long long q = 0; q < len / 8; q++) {
        if (m->O->data) {
            memcpy(d + 16 * q, src + 8 * q, 4);
            memcpy(d + 16 * q + 8, src + 8 * q + 4, 4);
        }
        memcpy(d + 16 * q + 4, &flag, 4);
        memcpy(d + 16 * q + 12, &flag, 4);
    }
}

/* Copy `bytes` of packets (data and flags as they are) from (sr, sb, soff)
 * to (dr, db, doff); a source out of bounds is read as zeros, so flags
 * unset.  Without data only the flags move. */
static void pkt_copy(mrun *m, int dr, mpp_buf db, long long doff, int sr, mpp_buf sb, long long soff,
                     long long bytes)
{
    if (bytes <= 0 || !in_bounds(m, dr, db, doff, bytes))
        return;
    int src_ok = in_bounds(m, sr, sb, soff, bytes);
    view *dv = V(m, dr, db), *sv = V(m, sr, sb);
    if (!dv->sm) {
        if (src_ok)
            memmove(at(m, dr, db, doff), at(m, sr, sb, soff), (size_t)bytes);
        else
            memset(at(m, dr, db, doff), 0, (size_t)bytes);
        return;
    }
    long long G0 = dv->gbase + doff / GRAN, n = bytes / GRAN;
    if (!src_ok) {
        flags_put(dv->sm, G0, G0 + n, 0);
        return;
    }
    /* the source's flags as runs first: the ranges may share a storage */
    struct { long long len; int flag; } *fl = NULL;
    int nfl = 0, cap = 0;
    long long S0 = sv->gbase + soff / GRAN;
    for (long long i = 0; i < n;) {
        int k = span_find(sv->sm, S0 + i);
        long long e = span_end(sv->sm, k) - S0;
        e = e < n ? e : n;
        fl = xgrow(fl, &cap, nfl + 1, sizeof *fl);
        fl[nfl].len = e - i;
        fl[nfl++].flag = sv->sm->v[k].flag;
        i = e;
    }
    for (int j = 0; j < nfl; j++) {
        flags_put(dv->sm, G0, G0 + fl[j].len, fl[j].flag);
        G0 += fl[j].len;
    }
    free(fl);
}

static void pkt_load(mrun *m, unsigned char *dst, int sr, mpp_buf sb, long long poff, long long len)
{
    if (!m->O->data)
        return;
    if (!in_bounds(m, sr, sb, poff, len * 2)) {
        memset(dst, 0, (size_t)len);
        return;
    }
    const unsigned char *s = at(m, sr, sb, poff);
    for (long long q = 0; q < len / 8; q++) {
        memcpy(dst + 8 * q, s + 16 * q, 4);
        memcpy(dst + 8 * q + 4, s + 16 * q + 8, 4);
    }
}

/* Packets of [poff, poff + 2*len) flagged, from cursor on; advances it. */
static int pkt_ready(mrun *m, tbst *s, int rank, mpp_buf b, long long poff, long long len,
                     long long *cursor, double *ready)
{
    if (!in_bounds(m, rank, b, poff, len * 2))
        return 1; /* the access check reports it */
    const view *vw = V(m, rank, b);
    long long np = len / 8;
    if (vw->sm) {
        /* a packet is a granule here: run by run */
        long long G0 = vw->gbase + poff / GRAN;
        while (*cursor < np) {
            int k = span_find(vw->sm, G0 + *cursor);
            const span *sp = &vw->sm->v[k];
            if (!sp->flag)
                return 0;
            if (sp->land > *ready)
                *ready = sp->land;
            long long e = span_end(vw->sm, k) - G0;
            *cursor = e < np ? e : np;
        }
        return 1;
    }
    const unsigned char *p = at(m, rank, b, poff);
    for (; *cursor < np; (*cursor)++) {
        unsigned f1, f2;
        memcpy(&f1, p + 16 * *cursor + 4, 4);
        memcpy(&f2, p + 16 * *cursor + 12, 4);
        if (f1 != PKT_FLAG || f2 != PKT_FLAG)
            return 0;
        double l = vw->meta[(poff + 16 * *cursor) / GRAN].land;
        if (l > *ready)
            *ready = l;
    }
    (void)s;
    return 1;
}

/* ------------------------------------------------------------ offsets */

/* Byte offset and size of ref under tbg slicing (execution_plan.cc:
 * calcOffset/calcSize in buffer_alignment units). */
static void ref_range(const mrun *m, const mpp_op *op, const mpp_ref *r, long long *off, long long *size)
{
    long long A = m->P->align;
    long long base = (long long)r->index * m->cb, sz = (long long)r->size * m->cb;
    long long ne = sz / A, mn = ne / op->tbg_size, rem = ne % op->tbg_size;
    long long a = (long long)op->tbg_id * mn + (op->tbg_id < rem ? op->tbg_id : rem);
    long long b = (long long)(op->tbg_id + 1) * mn + (op->tbg_id + 1 < rem ? op->tbg_id + 1 : rem);
    *off = base + a * A;
    *size = (b - a) * A;
}

/* ------------------------------------------------------------ time */

static double xfer(mrun *m, tbst *s, int a, int b, long long bytes, double ready, double *land)
{
    const topo *t = m->T;
    if (a == b) {
        *land = ready + cost_copy_us(t, (double)bytes);
        return *land;
    }
    topo_route rt = cost_proto_route(t, topo_route_of(t, a, b),
                                     m->P->proto_ll ? COST_LL : COST_SIMPLE);
    int res[2], lane[2];
    int nr = cost_hop_res(t, a, b, res);
    double start = nr > 0 ? cost_lanes_start(m->lanes, res, nr, ready, lane) : ready;
    double hold = cost_hold_us(t, &rt, (double)bytes);
    if (!isfinite(hold)) {
        hz(m, HZ_DEVICE, "rank %d -> rank %d: topology %s has no route between them", a, b, t->name);
        hold = 0;
    }
    if (nr > 0)
        cost_lanes_hold(m->lanes, res, lane, nr, start + hold);
    double hop = cost_hop_us(&rt, (double)bytes);
    *land = start + (isfinite(hop) ? hop : 0);
    m->R->bytes_moved += bytes;
    if (m->O->record) {
        mpp_report *R = m->R;
        R->ev = xgrow(R->ev, &R->cap_ev, R->nev + 1, sizeof *R->ev);
        R->ev[R->nev++] = (mpp_event){a, b, 1, s->inst_op[s->c]->type, rt.kind, start, *land, bytes};
    }
    return start + hold;
}

/* The ranks of the first transfer between two ranks that op would make at
 * once when run (1), or 0 where it makes none first: a memory channel's
 * put (pws, pwsf, ppkt, rppkt too) to its first destination, a get from
 * its first source, rre/rres's first remote operand.  Port channels are
 * left out (their proxy's FIFO orders them already), as are switch
 * operations (book_ports: each port on its own). */
static int first_hop(const tbst *s, const mpp_op *op, int *a, int *b)
{
    int me = s->rank;
    switch (op->type) {
    case MOP_PUT: case MOP_PWS: case MOP_PWSF: case MOP_PPKT: case MOP_RPPKT:
        if (op->ch != MCH_MEMORY || op->ndst < 1)
            return 0;
        *a = me, *b = op->dst[0].rank;
        return *a != *b;
    case MOP_GET:
        if (op->nsrc < 1)
            return 0;
        *a = op->src[0].rank, *b = me;
        return *a != *b;
    case MOP_RRE: case MOP_RRES:
        for (int i = 1; i < op->nsrc; i++)
            if (op->src[i].rank != me) {
                *a = op->src[i].rank, *b = me;
                return 1;
            }
        return 0;
    default:
        return 0;
    }
}

static double alpha_of(mrun *m, int a, int b)
{
    if (a == b)
        return 0;
    topo_route rt = topo_route_of(m->T, a, b);
    double lat = cost_proto_route(m->T, rt, m->P->proto_ll ? COST_LL : COST_SIMPLE).lat_us;
    return isfinite(rt.alpha_us) ? rt.alpha_us + lat : 0;
}

/* Member index of rank r in switch S (r is a member). */
static int member_of(const topo_switch *S, int r)
{
    for (int k = 0; k < S->nranks; k++)
        if (S->ranks[k] == r)
            return k;
    TC_ASSERT(0);
    return 0;
}

/* Book `hold` us of the port (in or out) of each of the n ranks on switch
 * sw from `ready`, each port first come first served on its own (a port
 * moves its share while another port of the operation is still busy):
 * the latest finish. */
static double book_ports(mrun *m, int sw, const int *ranks, int n, int in, double ready,
                         double hold)
{
    const topo_switch *S = &m->T->switches[sw];
    double done = ready;
    for (int i = 0; i < n; i++) {
        int res = cost_port_res(m->T, sw, member_of(S, ranks[i]), in), lane;
        double st = cost_lanes_start(m->lanes, &res, 1, ready, &lane);
        cost_lanes_hold(m->lanes, &res, &lane, 1, st + hold);
        if (st + hold > done)
            done = st + hold;
    }
    return done;
}

/* (mpp.h) MSCCL++'s glres adds (execution_kernel.hpp's
 * MULTI_LOAD_REDUCE_STORE), so "sum" must be among the switch's reductions. */
int mpp_switch_ok(const mpp_plan *P, const topo *t, sim_dtype dt, tc_err *err)
{
    if (!mpp_uses_switch(P))
        return TC_OK;
    int reduces = 0;
    for (int r = 0; r < P->nranks; r++)
        for (int b = 0; b < P->gpu[r].ntb; b++)
            for (int i = 0; i < P->gpu[r].tb[b].nops; i++)
                reduces |= P->gpu[r].tb[b].ops[i].type == MOP_GLRES;
    for (int r = 0; r < P->nranks; r++)
        for (int c = 0; c < P->gpu[r].nchan[MCH_SWITCH]; c++) {
            const mpp_chan *ch = &P->gpu[r].chan[MCH_SWITCH][c];
            int sw = topo_nvls_switch(t, ch->ranks, ch->nranks);
            if (sw < 0)
                return tc_err_set(err, TC_INPUT, "rank %d's switch channel %d (multimem, NVLS) needs "
                                  "its %d ranks on one switch that reduces and multicasts, and "
                                  "topology %s has none: give that switch an \"nvls\" object "
                                  "(docs/nvls.md)", r, c, ch->nranks, t->name);
            const topo_nvls *nv = &t->switches[sw].nvls;
            if (reduces && !(nv->dtypes & (1u << dt)))
                return tc_err_set(err, TC_INPUT, "topology %s: switch %d does not reduce %s in the "
                                  "switch (its nvls.dtypes), which the plan's glres needs",
                                  t->name, sw, runtime_dtype_name(dt));
            if (reduces && !(nv->redops & (1u << RED_SUM)))
                return tc_err_set(err, TC_INPUT, "topology %s: switch %d does not sum in the "
                                  "switch (its nvls.reductions), which the plan's glres does",
                                  t->name, sw);
        }
    return TC_OK;
}

/* ------------------------------------------------------------ setup */

/* v becomes the bytes of w from byte at on (at: whole granules). */
static void alias(view *v, const view *w, long long at)
{
    v->sm = w->sm;
    v->gbase = w->gbase + at / GRAN;
    v->mem = w->mem ? w->mem + at : NULL;
    v->meta = w->meta ? w->meta + at / GRAN : NULL;
}

static void setup_views(mrun *m, int inplace)
{
    const mpp_plan *P = m->P;
    int n = m->n;
    m->views = xcalloc((size_t)n * MB_N, sizeof(view));
    m->owned = xcalloc((size_t)n * MB_N, sizeof(unsigned char *));
    m->owned_meta = xcalloc((size_t)n * MB_N, sizeof(gmeta *));
    int ck = mpp_coll(P);
    for (int r = 0; r < n; r++) {
        const mpp_gpu *G = &P->gpu[r];
        long long len[MB_N] = {G->chunks[MB_I] * m->cb, G->chunks[MB_O] * m->cb, m->scratch_bytes};
        for (int b = 0; b < MB_N; b++) {
            long long L = len[b] > 0 ? len[b] : 0;
            long long ng = (L + GRAN - 1) / GRAN + 1;
            if (m->owned_sm) {
                spanmap *sm = &m->owned_sm[r * MB_N + b];
                sm->ng = ng;
                sm->v = xgrow(NULL, &sm->cap, 1, sizeof(span));
                sm->v[0] = (span){0, 0, 0, NOBODY, 0, NOBODY, 0, 0, 0, 0.f, 0, 0};
                sm->n = 1;
                *V(m, r, (mpp_buf)b) = (view){NULL, NULL, sm, 0, L};
                continue;
            }
            m->owned[r * MB_N + b] = xmalloc((size_t)(ng * GRAN));
            m->owned_meta[r * MB_N + b] = xmalloc((size_t)ng * sizeof(gmeta));
            for (long long i = 0; i < ng; i++)
                m->owned_meta[r * MB_N + b][i] = (gmeta){NOBODY, 0, NOBODY, 0, 0, 0, 0.f, 0};
            data_poison(m->O->dtype, m->owned[r * MB_N + b], ng * GRAN / m->es);
            *V(m, r, (mpp_buf)b) = (view){m->owned[r * MB_N + b], m->owned_meta[r * MB_N + b], NULL, 0, L};
        }
        if (inplace) {
            /* In place as NCCL's callers lay it out and the DSL's programs
             * assume: one buffer for allreduce/alltoall, the input at rank *
             * input bytes inside the output for allgather, the output at rank *
             * output bytes inside the input for reducescatter.  The executor
             * rounds both pointers to their allocation's base and adds the
             * offsets (executor.cc:552-561, execution_plan.cc:480-491), so any
             * such aliasing runs; algorithm.cc:13-24's selector calls the
             * reducescatter one out of place (it compares pointers only). */
            view *vi = V(m, r, MB_I), *vo = V(m, r, MB_O);
            long long at_o = ck == COLL_ALLGATHER ? (long long)r * vi->len : 0;
            long long at_i = ck == COLL_REDUCESCATTER ? (long long)r * vo->len : 0;
            if (vi->len <= vo->len && at_o + vi->len <= vo->len)
                alias(vi, vo, at_o);
            else if (at_i + vo->len <= vi->len)
                alias(vo, vi, at_i);
        }
        /* seed the input */
        if (m->O->data) {
            view *vi = V(m, r, MB_I);
            long long elems = m->cb / m->es;
            for (int c = 0; c < G->chunks[MB_I]; c++)
                data_input(m->O->dtype, m->O->seed, r, c, 0, elems, vi->mem + (long long)c * m->cb);
        }
    }
}

static void expand_tb(mrun *m, tbst *s, const mpp_tb *T)
{
    int cap = 16;
    s->prog = xmalloc((size_t)cap * sizeof(inst));
    for (int k = 0; k < T->nops; k++) {
        const mpp_op *op = &T->ops[k];
        if (op->type != MOP_PIPELINE) {
            s->prog = xgrow(s->prog, &cap, s->nprog + 1, sizeof(inst));
            s->prog[s->nprog++] = (inst){op, 0, -1};
            continue;
        }
        /* nIterations = ceil(num_chunks * upper-bound chunk bytes / unit_size)
         * (execution_plan.cc:592-598, 656-668). */
        long long total = (long long)op->num_chunks * m->cb;
        long long iters = (total + op->unit_size - 1) / op->unit_size;
        if (iters > 65535)
            iters = 65535; /* a uint16 in the kernel; the reader's caller is told by the size */
        for (long long it = 0; it < iters; it++)
            for (int i = 0; i < op->ninner; i++) {
                s->prog = xgrow(s->prog, &cap, s->nprog + 1, sizeof(inst));
                s->prog[s->nprog++] = (inst){&op->inner[i], it * op->unit_size, op->unit_size};
            }
    }
}

static chst *chan_state(mrun *m, mpp_ch ty, int rank, int idx) { return &m->ch[ty][rank][idx]; }

static void setup_channels(mrun *m)
{
    for (int ty = MCH_MEMORY; ty <= MCH_PORT; ty++) {
        m->ch[ty] = xcalloc((size_t)m->n, sizeof(chst *));
        for (int r = 0; r < m->n; r++) {
            const mpp_gpu *G = &m->P->gpu[r];
            m->ch[ty][r] = xcalloc((size_t)(G->nchan[ty] + 1), sizeof(chst));
            for (int i = 0; i < G->nchan[ty]; i++) {
                const mpp_chan *c = &G->chan[ty][i];
                chst *cs = &m->ch[ty][r][i];
                cs->peer_chan = -1;
                const mpp_gpu *H = &m->P->gpu[c->peer];
                for (int j = 0; j < H->nchan[ty]; j++)
                    if (H->chan[ty][j].peer == r && H->chan[ty][j].pair == c->pair)
                        cs->peer_chan = j;
            }
        }
    }
}

/* ------------------------------------------------------------ op semantics */

static void new_instance(tbst *s, const mpp_op *op)
{
    s->c++;
    if (s->c >= s->ninst_cap) {
        int cap = s->ninst_cap ? s->ninst_cap * 2 : 64;
        while (cap <= s->c)
            cap *= 2;
        s->inst_op = xrealloc(s->inst_op, (size_t)cap * sizeof(*s->inst_op));
        s->snap = xrealloc(s->snap, (size_t)cap * sizeof(*s->snap));
        for (int i = s->ninst_cap; i < cap; i++) {
            s->inst_op[i] = NULL;
            s->snap[i] = NULL;
        }
        s->ninst_cap = cap;
    }
    s->inst_op[s->c] = op;
}

static void do_sync(mrun *m, tbst *s)
{
    s->sync_own = s->c;
    s->nlk = 0;
    vc_join(s->K, s->pK, m->NT);
    vc_join(s->W, s->pW, m->NT);
    vc_join(s->W, s->K, m->NT);
}

static void snapshot(mrun *m, tbst *s, int own, int strong, sigrec *rec)
{
    rec->vw = xmalloc((size_t)m->NT * sizeof(int));
    memcpy(rec->vw, s->W, (size_t)m->NT * sizeof(int));
    vc_join(rec->vw, s->pW, m->NT);
    vc_join(rec->vw, s->K, m->NT);
    vc_join(rec->vw, s->pK, m->NT);
    rec->vw[s->g] = own;
    rec->vs = NULL;
    if (strong) {
        rec->vs = xmalloc((size_t)m->NT * sizeof(int));
        memcpy(rec->vs, s->K, (size_t)m->NT * sizeof(int));
        vc_join(rec->vs, s->pK, m->NT);
        rec->vs[s->g] = own;
    }
}

static void push_sig(sigrec **v, int *n, int *cap, sigrec r)
{
    *v = xgrow(*v, cap, *n + 1, sizeof(sigrec));
    (*v)[(*n)++] = r;
}

/* Thread `lane` of block s waited for r (a signal or a release). */
static void acquire(mrun *m, tbst *s, const sigrec *r, int strong, int lane)
{
    if (r->vw)
        vc_join(s->pW, r->vw, m->NT);
    if (strong && r->vs)
        vc_join(s->pK, r->vs, m->NT);
    s->lk = xgrow(s->lk, &s->lk_cap, s->nlk + 1, sizeof *s->lk);
    s->lk[s->nlk++] = (struct lanek){lane, strong ? r->vs : NULL, r->vw};
}

/* The rank-level channel of block-local index i of type ty. */
static int rank_chan(const mrun *m, const tbst *s, mpp_ch ty, int i)
{
    return m->P->gpu[s->rank].tb[s->t].ch[ty][i];
}

/* Whether the block's next instance can run now; ready gets the earliest
 * time it can start.  why: what it waits for, when it cannot. */
static int can_run(mrun *m, tbst *s, const inst *in, double *ready, char *why, size_t nwhy)
{
    const mpp_op *op = in->op;
    *ready = s->now;
    switch (op->type) {
    case MOP_WAIT: case MOP_RLXWAIT:
        for (int i = 0; i < op->nch; i++) {
            int rc = rank_chan(m, s, op->ch, op->chan[i]);
            chst *cs = chan_state(m, op->ch, s->rank, rc);
            /* each thread waits once on its channel; count repeats */
            int need = 1;
            for (int j = 0; j < i; j++)
                need += op->chan[j] == op->chan[i];
            if (cs->n - cs->head < need) {
                const mpp_chan *c = &m->P->gpu[s->rank].chan[op->ch][rc];
                if (why)
                    snprintf(why, nwhy, "%s on %s channel %d (to rank %d) waits for signal %lld but rank %d "
                         "signals it %d time%s: waited more often than signalled", mpp_op_name(op->type),
                         op->ch == MCH_PORT ? "port" : "memory", rc, c->peer, cs->waited + need, c->peer,
                         cs->n, cs->n == 1 ? "" : "s");
                return 0;
            }
            double t = cs->v[cs->head + need - 1].t;
            if (t > *ready)
                *ready = t;
        }
        return 1;
    case MOP_SEMACQ:
        for (int i = 0; i < op->nsem; i++) {
            struct semq *q = &m->sem[s->rank][op->sem[i]];
            int need = 1;
            for (int j = 0; j < i; j++)
                need += op->sem[j] == op->sem[i];
            if (q->init_left + (q->n - q->head) < need) {
                if (why)
                    snprintf(why, nwhy, "sem_acquire of semaphore %d waits for a sem_release that never "
                         "comes (acquired more often than released)", op->sem[i]);
                return 0;
            }
            int k = need - q->init_left;
            if (k > 0 && q->v[q->head + k - 1].t > *ready)
                *ready = q->v[q->head + k - 1].t;
        }
        return 1;
    case MOP_BARRIER: {
        barst *b = &m->bar[s->rank][op->barrier_id];
        if (s->bar_gen < 0)
            return 1; /* arriving is always possible */
        if (b->done_gen < s->bar_gen) {
            if (why)
                snprintf(why, nwhy, "barrier %d waits for %d threadblocks, %d arrived",
                         op->barrier_id, op->barrier_n, b->arrived);
            return 0;
        }
        if (b->done_t > *ready)
            *ready = b->done_t;
        return 1;
    }
    case MOP_FLUSH:
        for (int i = 0; i < op->ndst && i < op->nch; i++) {
            chst *cs = chan_state(m, MCH_PORT, s->rank, rank_chan(m, s, MCH_PORT, op->chan[i]));
            if (cs->fifo_land > *ready)
                *ready = cs->fifo_land;
        }
        return 1;
    case MOP_UPKT: case MOP_RPPKT: case MOP_REPKT: case MOP_RESPKT: case MOP_RECPKT:
    case MOP_RECSPKT: case MOP_GSTOREPKT: {
        /* packets read with flag polling: upkt/rppkt from scratch at src[0],
         * the reductions from scratch at src[1..], gstorepkt from src[0]'s
         * buffer (execution_kernel.hpp:292-441, 623-644). */
        int first = op->type == MOP_UPKT || op->type == MOP_RPPKT || op->type == MOP_GSTOREPKT ? 0 : 1;
        int last = first == 0 ? 1 : op->nsrc;
        long long size0, off0;
        ref_range(m, op, &op->src[0], &off0, &size0);
        long long done = 0;
        for (int i = first; i < last; i++) {
            long long off, size;
            ref_range(m, op, &op->src[i], &off, &size);
            mpp_buf b = op->type == MOP_GSTOREPKT ? op->src[0].type : MB_S;
            long long cur = s->pkt_cursor - done;
            if (cur < 0)
                cur = 0;
            long long np = size0 / 8;
            if (cur >= np) {
                done += np;
                continue;
            }
            long long c0 = cur;
            int ok = pkt_ready(m, s, s->rank, b, off * 2, size0, &cur, &s->pkt_ready);
            s->pkt_cursor += cur - c0;
            if (!ok) {
                if (why)
                    snprintf(why, nwhy, "%s polls LL packets at rank %d's %s buffer bytes %lld..%lld "
                         "(chunk %d) whose flags are never set: nothing writes them", mpp_op_name(op->type),
                         s->rank, bufname(b), off * 2 + cur * 16, off * 2 + 2 * size0 - 1, op->src[i].index);
                return 0;
            }
            done += np;
        }
        if (s->pkt_ready > *ready)
            *ready = s->pkt_ready;
        return 1;
    }
    default:
        return 1;
    }
}

static double end_of(double a, double b) { return a > b ? a : b; }

static void record_op(mrun *m, tbst *s, const mpp_op *op, double t0, double t1)
{
    if (!m->O->record)
        return;
    mpp_report *R = m->R;
    R->ev = xgrow(R->ev, &R->cap_ev, R->nev + 1, sizeof *R->ev);
    R->ev[R->nev++] = (mpp_event){s->rank, s->t, 0, op->type, 0, t0, t1, 0};
}

/* Execute the block's next instance at `start`. */
static void exec_inst(mrun *m, tbst *s, const inst *in, double start)
{
    const mpp_op *op = in->op;
    const mpp_plan *P = m->P;
    const topo *t = m->T;
    opflags f = {0, 0, 0, 0};
    double end = start;
    int me = s->rank;
    m->R->ops_run++;
    m->progress++;

    if (op->type == MOP_BARRIER && s->bar_gen < 0) {
        barst *b = &m->bar[me][op->barrier_id];
        if (b->arrived == 0) {
            b->need = op->barrier_n;
            b->t = 0;
            memset(b->vc, 0, (size_t)m->NT * sizeof(int));
        }
        new_instance(s, op);
        do_sync(m, s);
        s->bar_gen = b->gen;
        b->arrived++;
        vc_join(b->vc, s->K, m->NT);
        b->vc[s->g] = s->c;
        if (start > b->t)
            b->t = start;
        if (b->arrived >= b->need) {
            b->done_gen = b->gen;
            b->done_t = b->t;
            memcpy(b->done_vc, b->vc, (size_t)m->NT * sizeof(int));
            b->gen++;
            b->arrived = 0;
        }
        s->now = start;
        return; /* the block stays at the barrier until its generation completes */
    }
    if (op->type == MOP_BARRIER) {
        barst *b = &m->bar[me][op->barrier_id];
        vc_join(s->K, b->done_vc, m->NT);
        vc_join(s->W, b->done_vc, m->NT);
        s->sync_own = s->c;
        s->nlk = 0;
        s->bar_gen = -1;
        s->now = end_of(start, b->done_t);
        record_op(m, s, op, start, s->now);
        s->pc++;
        s->pkt_cursor = 0;
        s->pkt_ready = 0;
        return;
    }

    new_instance(s, op);
    long long itoff = in->unit >= 0 ? in->it_off : 0;
    long long unit = in->unit >= 0 ? in->unit : -1;
    /* the slice of a range this instance touches (pipeline iterations:
     * min(size - offset, unit), execution_kernel.hpp:140 etc.) */
#define SLICE(off, size) do { if (unit >= 0) { long long rest_ = (size) - itoff; \
        (off) += itoff; (size) = rest_ < unit ? rest_ : unit; if ((size) < 0) (size) = 0; } } while (0)

    switch (op->type) {
    case MOP_NOP:
        do_sync(m, s);
        break;
    case MOP_SIGNAL: case MOP_RLXSIGNAL:
        for (int i = 0; i < op->nch; i++) {
            int rc = rank_chan(m, s, op->ch, op->chan[i]);
            chst *cs = chan_state(m, op->ch, me, rc);
            const mpp_chan *c = &P->gpu[me].chan[op->ch][rc];
            cs->sent++;
            int strong = op->type == MOP_SIGNAL || op->ch == MCH_PORT;
            sigrec rec;
            int own = s->sync_own;
            double arr = start + alpha_of(m, me, c->peer);
            if (op->ch == MCH_PORT) {
                /* the proxy handles its FIFO in order: the signal follows this
                 * block's earlier posts on the channel */
                own = s->c;
                arr = end_of(arr, cs->fifo_land);
            }
            snapshot(m, s, own, strong, &rec);
            rec.t = arr;
            if (cs->peer_chan < 0) {
                free(rec.vs);
                free(rec.vw);
                continue; /* an unpaired channel: counted at the end */
            }
            chst *in_cs = chan_state(m, op->ch, c->peer, cs->peer_chan);
            push_sig(&in_cs->v, &in_cs->n, &in_cs->cap, rec);
        }
        break;
    case MOP_WAIT: case MOP_RLXWAIT:
        for (int i = 0; i < op->nch; i++) {
            int rc = rank_chan(m, s, op->ch, op->chan[i]);
            chst *cs = chan_state(m, op->ch, me, rc);
            TC_ASSERT(cs->head < cs->n);
            int strong = op->type == MOP_WAIT || op->ch == MCH_PORT;
            acquire(m, s, &cs->v[cs->head], strong, i);
            cs->head++;
            cs->waited++;
        }
        break;
    case MOP_SEMREL: {
        for (int i = 0; i < op->nsem; i++) {
            struct semq *q = &m->sem[me][op->sem[i]];
            sigrec rec;
            snapshot(m, s, s->sync_own, 1, &rec);
            rec.t = start;
            push_sig(&q->v, &q->n, &q->cap, rec);
        }
        break;
    }
    case MOP_SEMACQ:
        for (int i = 0; i < op->nsem; i++) {
            struct semq *q = &m->sem[me][op->sem[i]];
            if (q->init_left > 0) {
                q->init_left--;
                continue;
            }
            acquire(m, s, &q->v[q->head], 1, i);
            q->head++;
        }
        break;
    case MOP_FLUSH:
        /* handleFlush flushes op.nOutputs channels, which only dst_buff sets
         * (execution_kernel.hpp:120-127): as the DSL writes it, none. */
        break;
    case MOP_PUT: case MOP_PWS: case MOP_PWSF: {
        long long soff0, ssz0;
        ref_range(m, op, &op->src[0], &soff0, &ssz0);
        for (int i = 0; i < op->ndst; i++) {
            long long doff, dsz, soff, ssz;
            ref_range(m, op, &op->dst[i], &doff, &dsz);
            ref_range(m, op, &op->src[i], &soff, &ssz);
            SLICE(doff, dsz);
            if (unit >= 0)
                soff += itoff;
            /* the source base is src_buff[0]'s buffer for every i
             * (execution_kernel.hpp:156) */
            mpp_buf sb = op->src[0].type;
            int peer = op->dst[i].rank;
            s->solo = op->ch == MCH_PORT ? i : -1;
            access_range(m, s, &f, me, sb, soff, dsz, 0, 0, 0);
            double land;
            if (op->ch == MCH_MEMORY) {
                double e = xfer(m, s, me, peer, dsz, start, &land);
                end = end_of(end, e);
            } else {
                int rc = rank_chan(m, s, MCH_PORT, op->chan[i]);
                chst *cs = chan_state(m, MCH_PORT, me, rc);
                xfer(m, s, me, peer, dsz, end_of(start, cs->fifo_land), &land);
                cs->fifo_land = end_of(cs->fifo_land, land);
                if (op->type != MOP_PUT) {
                    cs->sent++;
                    sigrec rec;
                    snapshot(m, s, s->c, 1, &rec);
                    rec.t = land;
                    if (cs->peer_chan >= 0) {
                        chst *in_cs = chan_state(m, MCH_PORT, peer, cs->peer_chan);
                        push_sig(&in_cs->v, &in_cs->n, &in_cs->cap, rec);
                    } else {
                        free(rec.vs);
                        free(rec.vw);
                    }
                }
                if (op->type == MOP_PWSF)
                    end = end_of(end, land);
            }
            access_range(m, s, &f, peer, op->dst[i].type, doff, dsz, 1, 0, land);
            s->solo = -1;
            dcopy(m, peer, op->dst[i].type, doff, me, sb, soff, dsz);
        }
        break;
    }
    case MOP_GET:
        for (int i = 0; i < op->nsrc; i++) {
            long long soff, ssz, doff, dsz;
            ref_range(m, op, &op->src[i], &soff, &ssz);
            ref_range(m, op, &op->dst[i], &doff, &dsz);
            SLICE(soff, ssz);
            if (unit >= 0)
                doff += itoff;
            /* handleGet copies into local + srcOffset from remote + dstOffset
             * (execution_kernel.hpp:137-143; docs/mscclpp.md section 8 item 2) */
            int peer = op->src[i].rank;
            access_range(m, s, &f, peer, op->src[i].type, doff, ssz, 0, 0, 0);
            double land;
            double e = xfer(m, s, peer, me, ssz, start, &land);
            end = end_of(end, e);
            access_range(m, s, &f, me, op->dst[i].type, soff, ssz, 1, 0, land);
            dcopy(m, me, op->dst[i].type, soff, peer, op->src[i].type, doff, ssz);
        }
        break;
    case MOP_COPY: {
        long long soff, ssz, doff, dsz;
        ref_range(m, op, &op->src[0], &soff, &ssz);
        ref_range(m, op, &op->dst[0], &doff, &dsz);
        SLICE(soff, ssz);
        if (unit >= 0)
            doff += itoff;
        access_range(m, s, &f, me, op->src[0].type, soff, ssz, 0, 0, 0);
        end = start + cost_copy_us(t, (double)ssz);
        access_range(m, s, &f, me, op->dst[0].type, doff, ssz, 1, 0, end);
        dcopy(m, me, op->dst[0].type, doff, me, op->src[0].type, soff, ssz);
        break;
    }
    case MOP_RE: case MOP_RES: case MOP_RRE: case MOP_RRES: {
        long long off0, size;
        ref_range(m, op, &op->src[0], &off0, &size);
        SLICE(off0, size);
        unsigned char *acc = dbuf(m, size);
        access_range(m, s, &f, me, op->src[0].type, off0, size, 0, 0, 0);
        if (acc)
            dload(m, acc, me, op->src[0].type, off0, size);
        double ready = start;
        for (int i = 1; i < op->nsrc; i++) {
            long long o, z;
            ref_range(m, op, &op->src[i], &o, &z);
            if (unit >= 0)
                o += itoff;
            int sr = op->src[i].rank;
            access_range(m, s, &f, sr, op->src[i].type, o, size, 0, 0, 0);
            if (acc)
                dadd(m, acc, sr, op->src[i].type, o, size);
            if (sr != me) {
                double land;
                xfer(m, s, sr, me, size, start, &land);
                ready = end_of(ready, land);
            }
        }
        end = end_of(ready, start + cost_reduce_us(t, (double)size * (op->nsrc > 1 ? op->nsrc - 1 : 1)));
        long long doff, dsz;
        ref_range(m, op, &op->dst[0], &doff, &dsz);
        if (unit >= 0)
            doff += itoff;
        /* re/res: dst[0] at its own offset; rre/rres too (outputOffsets[0]) */
        access_range(m, s, &f, me, op->dst[0].type, doff, size, 1, 0, end);
        if (acc)
            dstore(m, me, op->dst[0].type, doff, acc, size);
        double fin = end;
        for (int i = 1; i < op->ndst && (op->type == MOP_RES || op->type == MOP_RRES); i++) {
            long long o, z;
            ref_range(m, op, &op->dst[i], &o, &z);
            if (unit >= 0)
                o += itoff;
            int dr = op->dst[i].rank;
            double land;
            double e = xfer(m, s, me, dr, size, end, &land);
            fin = end_of(fin, e);
            access_range(m, s, &f, dr, op->dst[i].type, o, size, 1, 0, land);
            if (acc)
                dstore(m, dr, op->dst[i].type, o, acc, size);
        }
        end = fin;
        free(acc);
        break;
    }
    case MOP_CPKT: {
        long long soff, size, doff, dsz;
        ref_range(m, op, &op->src[0], &soff, &size);
        ref_range(m, op, &op->dst[0], &doff, &dsz);
        unsigned char *buf = dbuf(m, size);
        access_range(m, s, &f, me, op->src[0].type, soff, size, 0, 0, 0);
        dload(m, buf, me, op->src[0].type, soff, size);
        end = start + cost_copy_us(t, 2.0 * (double)size);
        access_range(m, s, &f, me, op->dst[0].type, doff * 2, size * 2, 1, 1, end);
        pkt_store(m, me, op->dst[0].type, doff * 2, buf, size);
        free(buf);
        break;
    }
    case MOP_UPKT: {
        long long soff, size, doff, dsz;
        ref_range(m, op, &op->src[0], &soff, &size);
        ref_range(m, op, &op->dst[0], &doff, &dsz);
        unsigned char *buf = dbuf(m, size);
        /* from scratch whatever src_buff's type says (execution_kernel.hpp:421) */
        access_range(m, s, &f, me, MB_S, soff * 2, size * 2, 0, 1, 0);
        pkt_load(m, buf, me, MB_S, soff * 2, size);
        end = start + cost_copy_us(t, 2.0 * (double)size);
        access_range(m, s, &f, me, op->dst[0].type, doff, size, 1, 0, end);
        dstore(m, me, op->dst[0].type, doff, buf, size);
        free(buf);
        break;
    }
    case MOP_PPKT: case MOP_RPPKT: {
        long long soff0, size0;
        ref_range(m, op, &op->src[0], &soff0, &size0);
        unsigned char *buf = dbuf(m, 2 * size0);
        for (int i = 0; i < op->ndst; i++) {
            long long soff = soff0, size = size0, doff, dsz;
            if (op->type == MOP_PPKT && i < op->nsrc)
                ref_range(m, op, &op->src[i], &soff, &size);
            ref_range(m, op, &op->dst[i], &doff, &dsz);
            int peer = op->dst[i].rank;
            mpp_buf db = op->dst[i].type;
            int as_packets = op->type == MOP_RPPKT || op->ch == MCH_PORT;
            /* memory ppkt: plain data from src_buff[0]'s buffer made packets;
             * port ppkt: src already packets at twice its offset; rppkt: packets
             * from scratch (execution_kernel.hpp:257-332) */
            mpp_buf sb = op->type == MOP_RPPKT ? MB_S : op->src[0].type;
            if (as_packets) {
                access_range(m, s, &f, me, sb, soff * 2, size * 2, 0, op->type == MOP_RPPKT, 0);
            } else {
                access_range(m, s, &f, me, sb, soff, size, 0, 0, 0);
                dload(m, buf, me, sb, soff, size);
            }
            double land, e;
            if (op->ch == MCH_PORT) {
                int rc = rank_chan(m, s, MCH_PORT, op->chan[i]);
                chst *cs = chan_state(m, MCH_PORT, me, rc);
                xfer(m, s, me, peer, 2 * size, end_of(start, cs->fifo_land), &land);
                cs->fifo_land = end_of(cs->fifo_land, land);
                e = start;
            } else {
                e = xfer(m, s, me, peer, 2 * size, start, &land);
            }
            end = end_of(end, e);
            access_range(m, s, &f, peer, db, doff * 2, size * 2, 1, 1, land);
            if (as_packets) {
                /* flags are bookkeeping, copied with or without data */
                pkt_copy(m, peer, db, doff * 2, me, sb, soff * 2, size * 2);
            } else {
                pkt_store(m, peer, db, doff * 2, buf, size);
            }
        }
        free(buf);
        break;
    }
    case MOP_REPKT: case MOP_RESPKT: case MOP_RECPKT: case MOP_RECSPKT: {
        long long off0, size, doff0, dsz;
        ref_range(m, op, &op->src[0], &off0, &size);
        ref_range(m, op, &op->dst[0], &doff0, &dsz);
        unsigned char *acc = dbuf(m, size);
        unsigned char *tmp = dbuf(m, size);
        access_range(m, s, &f, me, op->src[0].type, off0, size, 0, 0, 0);
        dload(m, acc, me, op->src[0].type, off0, size);
        for (int i = 1; i < op->nsrc; i++) {
            long long o, z;
            ref_range(m, op, &op->src[i], &o, &z);
            access_range(m, s, &f, me, MB_S, o * 2, size * 2, 0, 1, 0);
            pkt_load(m, tmp, me, MB_S, o * 2, size);
            if (m->O->data)
                data_reduce(m->O->dtype, acc, acc, tmp, size / m->es);
        }
        end = start + cost_reduce_us(t, (double)size * (op->nsrc > 1 ? op->nsrc - 1 : 1));
        access_range(m, s, &f, me, op->dst[0].type, doff0, size, 1, 0, end);
        dstore(m, me, op->dst[0].type, doff0, acc, size);
        int first_remote = 1;
        if (op->type == MOP_RECPKT || op->type == MOP_RECSPKT) {
            long long o, z;
            ref_range(m, op, &op->dst[1], &o, &z);
            access_range(m, s, &f, me, op->dst[1].type, o * 2, size * 2, 1, 1, end);
            pkt_store(m, me, op->dst[1].type, o * 2, acc, size);
            first_remote = 2;
        }
        double fin = end;
        for (int i = first_remote; i < op->ndst && (op->type == MOP_RESPKT || op->type == MOP_RECSPKT); i++) {
            long long o, z;
            ref_range(m, op, &op->dst[i], &o, &z);
            int dr = op->dst[i].rank;
            double land;
            double e = xfer(m, s, me, dr, 2 * size, end, &land);
            fin = end_of(fin, e);
            access_range(m, s, &f, dr, op->dst[i].type, o * 2, size * 2, 1, 1, land);
            pkt_store(m, dr, op->dst[i].type, o * 2, acc, size);
        }
        end = fin;
        free(acc);
        free(tmp);
        break;
    }
    case MOP_GLRES: case MOP_GSTORE: case MOP_GSTOREPKT: {
        const mpp_tb *T = &P->gpu[me].tb[s->t];
        const mpp_chan *dch = &P->gpu[me].chan[MCH_SWITCH][T->ch[MCH_SWITCH][op->dst[0].id]];
        const mpp_chan *sch = op->type == MOP_GLRES ?
            &P->gpu[me].chan[MCH_SWITCH][T->ch[MCH_SWITCH][op->src[0].id]] : NULL;
        long long soff, size, doff, dsz;
        ref_range(m, op, &op->src[0], &soff, &size);
        ref_range(m, op, &op->dst[0], &doff, &dsz);
        int pkt = op->type == MOP_GSTOREPKT;
        if (!pkt) {
            SLICE(soff, size);
            if (unit >= 0)
                doff += itoff;
        }
        int sw = topo_nvls_switch(t, dch->ranks, dch->nranks);
        if (sw < 0 || (sch && topo_nvls_switch(t, sch->ranks, sch->nranks) != sw)) {
            hz(m, HZ_DEVICE, "%s (%s): its switch channel spans ranks that no switch of topology %s "
               "joins: multimem (NVLS) needs them on one switch", op->path, mpp_op_name(op->type),
               t->name);
            sw = -1;
        }
        unsigned char *acc = dbuf(m, 2 * size);
        double ready = start;
        if (op->type == MOP_GLRES) {
            for (int i = 0; i < sch->nranks; i++) {
                int r = sch->ranks[i];
                access_range(m, s, &f, r, sch->sw_buf, soff, size, 0, 0, 0);
                if (m->O->data) {
                    if (i == 0)
                        dload(m, acc, r, sch->sw_buf, soff, size);
                    else
                        dadd(m, acc, r, sch->sw_buf, soff, size);
                }
            }
        } else if (op->type == MOP_GSTORE) {
            access_range(m, s, &f, me, op->src[0].type, soff, size, 0, 0, 0);
            dload(m, acc, me, op->src[0].type, soff, size);
        } else {
            /* the source packets are read with their flags (execution_kernel.hpp:639-642) */
            access_range(m, s, &f, me, op->src[0].type, soff * 2, size * 2, 0, 1, 0);
            pkt_load(m, acc, me, op->src[0].type, soff * 2, size);
        }
        long long wire = pkt ? 2 * size : size;
        end = ready;
        if (sw >= 0) {
            /* topo.h's topo_nvls: a load-reduce moves `wire` bytes out of
             * every member's port and into the caller's, a multicast store
             * out of the caller's port and into every member's, each at the
             * switch's NVLS bandwidth per port; glres does both, pipelined
             * by its threads; the operation ends alpha after its last port */
            const topo_switch *S = &t->switches[sw];
            double hold = (double)wire / (S->nvls.bw_gbps * 1e3), done = ready, d;
            if (op->type == MOP_GLRES) {
                done = book_ports(m, sw, sch->ranks, sch->nranks, 0, ready, hold);
                d = book_ports(m, sw, &me, 1, 1, ready, hold);
                done = d > done ? d : done;
                m->R->bytes_moved += wire * sch->nranks;
            }
            d = book_ports(m, sw, &me, 1, 0, ready, hold);
            done = d > done ? d : done;
            d = book_ports(m, sw, dch->ranks, dch->nranks, 1, ready, hold);
            done = d > done ? d : done;
            m->R->bytes_moved += wire * dch->nranks;
            end = done + S->nvls.alpha_us;
        }
        for (int i = 0; i < dch->nranks; i++) {
            int r = dch->ranks[i];
            long long o = pkt ? doff * 2 : doff;
            access_range(m, s, &f, r, dch->sw_buf, o, wire, 1, pkt, end);
            if (pkt)
                pkt_store(m, r, dch->sw_buf, o, acc, size);
            else
                dstore(m, r, dch->sw_buf, o, acc, size);
        }
        free(acc);
        break;
    }
    case MOP_PIPELINE: case MOP_BARRIER: case MOP_COUNT:
        TC_ASSERT(0);
        break;
    }
#undef SLICE
    s->now = end;
    record_op(m, s, op, start, end);
    s->pc++;
    s->pkt_cursor = 0;
    s->pkt_ready = 0;
}

/* ------------------------------------------------------------ the check */

/* AllReduce: 1 if every rank's output bytes equal rank 0's (data-parallel
 * training needs identical replicas), else 0; -1 for other collectives. */
static int replicas_identical(mrun *m, int ck)
{
    if (ck != COLL_ALLREDUCE)
        return -1;
    const view *v0 = V(m, 0, MB_O);
    for (int r = 1; r < m->n; r++) {
        const view *v = V(m, r, MB_O);
        if (v->len != v0->len || memcmp(v->mem, v0->mem, (size_t)v0->len) != 0)
            return 0;
    }
    return 1;
}

/* Element p of type dt as its bits in hex and, for the floating types, its
 * value: "0x7fbadbad", "0x3fc0 (1.5)". */
static void elem_text(sim_dtype dt, int es, const unsigned char *p, char *out, size_t n)
{
    unsigned bits = 0;
    if (es == 4) {
        memcpy(&bits, p, 4);
        snprintf(out, n, "0x%08x", bits);
    } else {
        unsigned short h;
        memcpy(&h, p, 2);
        snprintf(out, n, "0x%04x", (unsigned)h);
    }
    if (dt != DT_I32) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, " (%.9g)", data_value(dt, p, 0));
    }
}

/* The postcondition (data.h's rules): copies bit for bit, i32 sums exact
 * (wrap-around), f32/bf16/f16 sums within data_sum_close of a double sum,
 * any order (each step rounded to the type, as MSCCL++'s kernels add). */
static int check_post(mrun *m)
{
    const mpp_plan *P = m->P;
    sim_dtype dt = m->O->dtype;
    int ck = mpp_coll(P);
    int n = m->n, es = m->es;
    long long elems = m->cb / es;
    unsigned char *want = xmalloc((size_t)m->cb), *tmp = xmalloc((size_t)m->cb);
    double *sum = xmalloc((size_t)elems * sizeof(double)), *mag = xmalloc((size_t)elems * sizeof(double));
    long long wrong = 0;
    int ok = 1, fp = dt != DT_I32;
    for (int r = 0; r < n; r++) {
        int C = P->gpu[r].chunks[MB_I];
        int Cout = P->gpu[r].chunks[MB_O];
        int per = ck == COLL_ALLGATHER ? C : ck == COLL_REDUCESCATTER ? Cout : C / n;
        for (int j = 0; j < Cout; j++) {
            int sr = -1, sc = j;
            switch (ck) {
            case COLL_ALLGATHER: sr = j / per; sc = j % per; break;
            case COLL_ALLTOALL: sr = j / per; sc = r * per + j % per; break;
            case COLL_REDUCESCATTER: sr = -1; sc = r * per + j; break;
            default: sr = -1; sc = j; break;
            }
            if (sr >= 0) {
                data_input(dt, m->O->seed, sr, sc, 0, elems, want);
            } else {
                for (int q = 0; q < n; q++) {
                    data_input(dt, m->O->seed, q, sc, 0, elems, q ? tmp : want);
                    if (q && !fp)
                        data_reduce(dt, want, want, tmp, elems);
                    for (long long e = 0; fp && e < elems; e++) {
                        double x = data_value(dt, q ? tmp : want, e);
                        sum[e] = (q ? sum[e] : 0) + x;
                        mag[e] = (q ? mag[e] : 0) + fabs(x);
                    }
                }
            }
            const unsigned char *got = V(m, r, MB_O)->mem + (long long)j * m->cb;
            for (long long e = 0; e < elems; e++) {
                const unsigned char *g = got + es * e;
                int same = memcmp(g, want + es * e, (size_t)es) == 0;
                int fpsum = !same && fp && sr < 0;
                if (fpsum)
                    same = data_sum_close(dt, n, data_value(dt, got, e), sum[e], mag[e]);
                if (!same) {
                    if (ok) {   /* the text of the first wrong element only */
                        char exp[64], gs[64];
                        if (fpsum)
                            snprintf(exp, sizeof exp, "%.9g", sum[e]);
                        else
                            elem_text(dt, es, want + es * e, exp, sizeof exp);
                        elem_text(dt, es, g, gs, sizeof gs);
                        hz(m, HZ_WRONG_DATA, "rank %d output (o) chunk %d element %lld is %s, the %s "
                           "needs %s (%s)", r, j, e, gs, P->collective, exp,
                           sr >= 0 ? "a copy of an input element" : "the sum over the ranks");
                    }
                    ok = 0;
                    wrong++;
                }
            }
        }
    }
    free(want);
    free(tmp);
    free(sum);
    free(mag);
    m->R->wrong_elems = wrong;
    m->R->replicas_identical = replicas_identical(m, ck);
    return ok;
}

/* Does the plan's chunk shape match its collective? (the postcondition's
 * layout: docs/mscclpp.md section 9) */
static int shape_ok(const mpp_plan *P, int ck, char *why, size_t n)
{
    int N = P->nranks;
    for (int r = 0; r < N; r++) {
        int in = P->gpu[r].chunks[MB_I], out = P->gpu[r].chunks[MB_O];
        int good = 1;
        switch (ck) {
        case COLL_ALLGATHER: good = out == N * in; break;
        case COLL_REDUCESCATTER: good = in == N * out; break;
        case COLL_ALLTOALL: good = in == out && in % N == 0; break;
        default: good = in == out; break;
        }
        if (!good) {
            snprintf(why, n, "gpus[%d]: input_chunks %d and output_chunks %d do not fit a %s over %d ranks",
                     r, in, out, P->collective, N);
            return 0;
        }
    }
    return 1;
}

static void mrun_free(mrun *m)
{
    for (int i = 0; i < m->n * MB_N && m->owned; i++) {
        free(m->owned[i]);
        free(m->owned_meta[i]);
        if (m->owned_sm)
            free(m->owned_sm[i].v);
    }
    free(m->owned_sm);
    free(m->owned);
    free(m->owned_meta);
    free(m->views);
    for (int g = 0; g < m->NT && m->tb; g++) {
        tbst *s = &m->tb[g];
        free(s->prog);
        free(s->K);
        free(s->W);
        free(s->pK);
        free(s->pW);
        free(s->lk);
        for (int i = 0; i < s->ninst_cap; i++)
            free(s->snap[i]);
        free(s->snap);
        free(s->inst_op);
    }
    free(m->tb);
    free(m->tb_base);
    for (int ty = MCH_MEMORY; ty <= MCH_PORT; ty++) {
        for (int r = 0; r < m->n && m->ch[ty]; r++) {
            for (int i = 0; i < m->P->gpu[r].nchan[ty]; i++) {
                chst *cs = &m->ch[ty][r][i];
                for (int k = 0; k < cs->n; k++) {
                    free(cs->v[k].vs);
                    free(cs->v[k].vw);
                }
                free(cs->v);
            }
            free(m->ch[ty][r]);
        }
        free(m->ch[ty]);
    }
    for (int r = 0; r < m->n && m->sem; r++) {
        for (int i = 0; i < m->P->gpu[r].nsem; i++) {
            for (int k = 0; k < m->sem[r][i].n; k++) {
                free(m->sem[r][i].v[k].vs);
                free(m->sem[r][i].v[k].vw);
            }
            free(m->sem[r][i].v);
        }
        free(m->sem[r]);
    }
    free(m->sem);
    for (int r = 0; r < m->n && m->bar; r++) {
        for (int i = 0; i < MPP_MAX_SYNCERS; i++) {
            free(m->bar[r][i].vc);
            free(m->bar[r][i].done_vc);
        }
        free(m->bar[r]);
    }
    free(m->bar);
    cost_lanes_free(m->lanes);
}

void mpp_opts_default(mpp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dtype = DT_I32;
    o->data = 1;
    o->seed = 1;
    o->mode = -1;
}

void mpp_report_free(mpp_report *r)
{
    hazard_list_free(&r->hz);
    free(r->ev);
    memset(r, 0, sizeof *r);
}

int mpp_run(const mpp_plan *P, const topo *T, const mpp_opts *O, mpp_report *R, tc_err *err)
{
    memset(R, 0, sizeof *R);
    if (T->nranks != P->nranks)
        return tc_err_set(err, TC_INPUT, "topology %s has %d ranks but the plan has %d gpus", T->name,
                          T->nranks, P->nranks);
    long long q = chunk_quantum(P), mc = max_chunks(P);
    long long size = O->size_bytes > 0 ? O->size_bytes : mpp_default_size(P);
    long long cb = size / mc;
    if (cb * mc != size || cb % q != 0) {
        long long up = (size + mc * q - 1) / (mc * q) * (mc * q);
        return tc_err_set(err, TC_INPUT, "%lld bytes per rank do not divide into %lld chunks of a "
                          "multiple of %lld bytes (buffer_alignment %lld, 16-byte vectors): try %lld",
                          size, mc, q, P->align, up);
    }
    if (cb > 0xffffffffLL / (mc > 0 ? mc : 1))
        return tc_err_set(err, TC_INPUT, "%lld bytes per rank: MSCCL++'s per-op offsets are uint32 "
                          "bytes (execution_common.hpp:115-118)", size);
    mrun m;
    memset(&m, 0, sizeof m);
    m.P = P;
    m.T = T;
    m.O = O;
    m.R = R;
    m.n = P->nranks;
    m.cb = cb;
    m.es = runtime_dtype_bytes(O->dtype);
    R->chunk_bytes = cb;
    R->size_bytes = size;
    R->in_bytes = P->gpu[0].chunks[MB_I] * cb;
    R->out_bytes = P->gpu[0].chunks[MB_O] * cb;
    R->data = O->data;
    R->dtype = O->dtype;
    R->replicas_identical = -1;
    int inplace = O->mode < 0 ? P->inplace : O->mode;
    R->inplace = inplace;
    int ck = mpp_coll(P);
    char why[300];
    R->has_post = ck >= 0 && shape_ok(P, ck, why, sizeof why);
    if (ck >= 0 && !R->has_post)
        return tc_err_set(err, TC_INPUT, "%s", why);
    int rc0 = mpp_switch_ok(P, T, O->dtype, err);
    if (rc0 != TC_OK)
        return rc0;

    /* size range (execution_plan.cc:305-310): allgather by output bytes */
    unsigned long long msz = (unsigned long long)(ck == COLL_ALLGATHER ? R->out_bytes : R->in_bytes);
    if (msz < P->min_size || msz > P->max_size)
        return tc_err_set(err, TC_INPUT, "%llu bytes are outside the plan's [min_message_size, "
                          "max_message_size] = [%llu, %llu]: MSCCL++ refuses the size "
                          "(execution_plan.cc:308-310)", msz, P->min_size, P->max_size);
    /* scratch (execution_plan.cc:191-216) */
    long long sc = 0;
    for (int r = 0; r < m.n; r++)
        if (P->gpu[r].chunks[MB_S] > sc)
            sc = P->gpu[r].chunks[MB_S];
    if (P->reuse && sc > 0) {
        long long maxc = ((64LL << 20) / (P->dbl ? 2 : 1) + sc - 1) / sc;
        maxc = (maxc + P->align - 1) / P->align * P->align;
        if (maxc < cb)
            return tc_err_set(err, TC_INPUT, "reuse_resources with chunks of %lld bytes: MSCCL++ wraps "
                              "scratch chunks at %lld bytes, which this executor does not model; run a "
                              "size of at most %lld bytes per chunk", cb, maxc, maxc);
        /* MSCCL++ places a 64 MiB scratch, but a plan reaches only its own
         * scratch_chunks (refs past them are refused when read), at offsets
         * no larger than without reuse: hold only that much */
        long long ssz = cb * sc * (P->proto_ll ? 2 : 1);
        ssz = (ssz + P->align - 1) / P->align * P->align;
        m.scratch_bytes = ssz < (64LL << 20) ? ssz : 64LL << 20;
    } else {
        /* the half this launch uses: the next launch takes the other half
         * (use_double_scratch_buffer, execution_plan.cc:212-214), so a ref
         * past this one is past the launch's scratch */
        long long ssz = cb * sc * (P->proto_ll ? 2 : 1);
        m.scratch_bytes = (ssz + P->align - 1) / P->align * P->align;
    }
    /* Without data the bookkeeping is by runs (spans), unless a plan's
     * packets may start mid-granule (buffer_alignment not a multiple of 8:
     * a packet at twice an offset), which the runs do not split; then per
     * granule as with data. */
    int pkt_ops = 0;
    for (int k = MOP_PPKT; k <= MOP_RECSPKT; k++)
        pkt_ops += P->op_count[k];
    pkt_ops += P->op_count[MOP_GSTOREPKT];
    int spans = !O->data && !O->bytewise && (P->align % 8 == 0 || !pkt_ops);
    double total = 0;
    for (int r = 0; r < m.n; r++)
        total += (double)(P->gpu[r].chunks[MB_I] + P->gpu[r].chunks[MB_O]) * (double)cb +
                 (double)m.scratch_bytes;
    if (!spans && total * (1.0 + (double)sizeof(gmeta) / GRAN) > (double)DATA_MAX_BYTES)
        return tc_err_set(err, TC_INPUT, "buffers and their bookkeeping would take %.0f bytes, above "
                          "the executor's %lld", total * (1.0 + (double)sizeof(gmeta) / GRAN),
                          (long long)DATA_MAX_BYTES);

    if (spans)
        m.owned_sm = xcalloc((size_t)m.n * MB_N, sizeof(spanmap));
    setup_views(&m, inplace);
    setup_channels(&m);
    m.lanes = cost_lanes_new(T);
    m.tb_base = xcalloc((size_t)m.n + 1, sizeof(int));
    for (int r = 0; r < m.n; r++)
        m.tb_base[r + 1] = m.tb_base[r] + P->gpu[r].ntb;
    m.NT = m.tb_base[m.n];
    m.tb = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(tbst));
    for (int r = 0; r < m.n; r++)
        for (int t = 0; t < P->gpu[r].ntb; t++) {
            tbst *s = &m.tb[m.tb_base[r] + t];
            s->rank = r;
            s->t = t;
            s->g = m.tb_base[r] + t;
            s->bar_gen = -1;
            s->acq_tb = NOBODY;
            s->K = xcalloc((size_t)m.NT, sizeof(int));
            s->W = xcalloc((size_t)m.NT, sizeof(int));
            s->pK = xcalloc((size_t)m.NT, sizeof(int));
            s->pW = xcalloc((size_t)m.NT, sizeof(int));
            s->solo = -1;
            s->not_before = s->asked = -1;
            new_instance(s, NULL); /* clock 1 = the launch */
            s->sync_own = s->c;
            expand_tb(&m, s, &P->gpu[r].tb[t]);
        }
    m.sem = xcalloc((size_t)m.n, sizeof(*m.sem));
    m.bar = xcalloc((size_t)m.n, sizeof(barst *));
    for (int r = 0; r < m.n; r++) {
        m.sem[r] = xcalloc((size_t)(P->gpu[r].nsem + 1), sizeof(struct semq));
        for (int i = 0; i < P->gpu[r].nsem; i++)
            m.sem[r][i].init_left = P->gpu[r].sem_init[i];
        m.bar[r] = xcalloc(MPP_MAX_SYNCERS, sizeof(barst));
        for (int i = 0; i < MPP_MAX_SYNCERS; i++) {
            m.bar[r][i].vc = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(int));
            m.bar[r][i].done_vc = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(int));
            m.bar[r][i].done_gen = -1;
        }
    }

    /* The loop: the block with the earliest start among those that can run. */
    long long *checked = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(long long));
    /* a runnable block's time, as of progress seen[g]: an op that waits
     * for its link (below) changes no block's state, so the scan after it
     * reuses them */
    long long *seen = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(long long));
    double *seen_t = xcalloc((size_t)(m.NT ? m.NT : 1), sizeof(double));
    for (int g = 0; g < m.NT; g++)
        checked[g] = seen[g] = -1;
    for (;;) {
        int best = -1;
        double best_t = 0;
        int live = 0;
        for (int g = 0; g < m.NT; g++) {
            tbst *s = &m.tb[g];
            if (s->pc >= s->nprog) {
                s->done = 1;
                continue;
            }
            live++;
            if (checked[g] == m.progress)
                continue; /* blocked, and nothing happened since */
            double ready;
            if (seen[g] == m.progress) {
                ready = seen_t[g];
            } else if (!can_run(&m, s, &s->prog[s->pc], &ready, NULL, 0)) {
                checked[g] = m.progress;
                continue;
            } else {
                seen[g] = m.progress;
                seen_t[g] = ready;
            }
            if (s->not_before > ready)
                ready = s->not_before;
            /* at one instant the block that asked first, then the lower */
            if (best < 0 || ready < best_t ||
                (ready == best_t && s->asked >= 0 &&
                 s->asked < (m.tb[best].asked >= 0 ? m.tb[best].asked : best_t))) {
                best = g;
                best_t = ready;
            }
        }
        if (!live)
            break;
        if (best < 0) {
            /* a hang: say every blocked block's reason */
            for (int g = 0; g < m.NT; g++) {
                tbst *s = &m.tb[g];
                if (s->done)
                    continue;
                double ready;
                char w[400];
                checked[g] = -1;
                if (!can_run(&m, s, &s->prog[s->pc], &ready, w, sizeof w))
                    hz(&m, HZ_DEADLOCK, "%s: %s: a hang", s->prog[s->pc].op->path, w);
            }
            break;
        }
        /* An op whose first transfer finds its link, port or NIC busy at
         * its time does not book it for later (which would leave it idle
         * until then while transfers asking later wait behind the
         * booking: DGX H100 x1, taccl's direct AllGather at 1 GiB, 8
         * blocks per rank each putting to one peer, took 6279.6 us, 3x
         * the 2087.8 us its ports need); it asks again when the resource
         * frees, after what asked before it (the XML executor's "ready"
         * arbitration, docs/design.md section 4). */
        tbst *bs = &m.tb[best];
        int ha, hb, hres[2], hlane[2];
        if (first_hop(bs, bs->prog[bs->pc].op, &ha, &hb)) {
            int nr = cost_hop_res(T, ha, hb, hres);
            double st = nr > 0 ? cost_lanes_start(m.lanes, hres, nr, best_t, hlane) : best_t;
            if (cost_must_wait(T, st, best_t)) {
                if (bs->asked < 0)
                    bs->asked = best_t;
                bs->not_before = st;
                continue;
            }
        }
        bs->not_before = bs->asked = -1;
        exec_inst(&m, bs, &bs->prog[bs->pc], best_t);
        checked[best] = -1;
    }
    free(checked);
    free(seen);
    free(seen_t);
    int finished = 1;
    double tmax = 0;
    for (int g = 0; g < m.NT; g++) {
        finished &= m.tb[g].done;
        if (m.tb[g].now > tmax)
            tmax = m.tb[g].now;
    }
    /* surplus signals: MSCCL++'s semaphores keep counting across launches,
     * so the next launch's wait would pass early */
    for (int ty = MCH_MEMORY; ty <= MCH_PORT && finished; ty++)
        for (int r = 0; r < m.n; r++)
            for (int i = 0; i < P->gpu[r].nchan[ty]; i++) {
                chst *cs = &m.ch[ty][r][i];
                if (cs->fifo_land > tmax)
                    tmax = cs->fifo_land;
                const mpp_chan *c = &P->gpu[r].chan[ty][i];
                if (cs->sent > 0 && cs->peer_chan < 0)
                    hz(&m, HZ_PAIRING, "gpus[%d].channels: %s channel %d to rank %d is signalled %lld "
                       "times but rank %d has no channel back to wait on (an unpaired channel MSCCL++ "
                       "opens itself): the signals are never consumed", r, ty == MCH_PORT ? "port" :
                       "memory", i, c->peer, cs->sent, c->peer);
                if (cs->n > cs->head) {
                    const chst *from = NULL;
                    (void)from;
                    hz(&m, HZ_PAIRING, "gpus[%d].channels: %s channel %d (from rank %d) is signalled %d "
                       "times and waited %d: the surplus semaphore count lets the next launch's wait "
                       "pass before its data", r, ty == MCH_PORT ? "port" : "memory", i, c->peer, cs->n,
                       cs->head);
                }
            }
    R->finished = finished;
    /* the runtime's base latency, once a call (model/cost.h): NCCL's NVLS
     * latency for a plan of switch operations */
    R->call_us = P->has_switch ? cost_switch_call_us(T, P->nranks > T->ranks_per_node)
                               : cost_call_us(T, P->proto_ll ? COST_LL : COST_SIMPLE);
    R->time_us = tmax + R->call_us;
    if (O->bound && ck >= 0) {
        R->has_bound = 1;
        R->bound_us = bound_time_us(O->bound, (double)size);
        R->floor_us = bound_floor_us(O->bound, (double)size);
    }
    int data_ok = 1;
    if (finished && O->data && R->has_post)
        data_ok = check_post(&m);
    int errs = hazard_errors(&R->hz, 0);
    R->verified = finished && data_ok && errs == 0;
    if (O->strict && R->hz.n > 0)
        R->verified = 0;
    mrun_free(&m);
    return TC_OK;
}
