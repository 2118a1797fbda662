/* baseline_pat.c — NCCL's PAT (parallel aggregated trees): AllGather and
 * ReduceScatter with one GPU per node, as MSCCL steps.
 *
 * What NCCL does (NVIDIA/nccl 5067397): each rank talks to the ranks at
 * ±2^d only (ncclTransportPatConnect, src/transport/generic.cc:69-84, "binomial
 * trees"; prims_simple.h:671-691: AllGather receives from rank + 2^d and sends
 * to rank - 2^d, ReduceScatter the other way).  In the AllGather a rank r
 * holds rank r + s's data ("offset" s) after it came down a binomial tree
 * rooted at every rank: offset s arrives from rank r + 2^lowbit(s), where it
 * was offset s - 2^lowbit(s), so a piece's first hop is its longest and the
 * low bits are added last (PatAGAlgorithm, src/include/collectives.h:701-922:
 * sendDim = the lowest set bit of s, the data rank s minus it, :845-846,
 * :879-882).  The ReduceScatter runs the same trees backwards, each rank
 * adding its own input on the way (PatRSAlgorithm, collectives.h:442-698,
 * :578-589, :636-642).  Offsets past the rank count are skipped, so any
 * rank count works.  Several ranks' pieces bound for one peer travel in one
 * buffer step ("aggregation", postFreq: nccl_pat_agg), and a channel's share
 * is cut into NCCL's PAT chunk (nccl_pat_chunk_bytes).
 *
 * How it is written here (our own generator of that data movement): per
 * channel and dimension d one threadblock that sends to r - 2^d and receives
 * from r + 2^d (AllGather; the reverse for ReduceScatter).  Dimension d's
 * items are the offsets that cross it, in increasing order, cut into messages
 * of at most postFreq items.  A message of one item goes straight from and
 * into the buffers; a message of several is packed into scratch (local
 * copies, as NCCL copies into its connection buffer), sent as one step,
 * and unpacked (AllGather) or added (ReduceScatter) on arrival.  A
 * dimension whose steps would pass the target's steps-per-tb limit deals its
 * messages over several threadblocks, one MSCCL channel each.  What differs
 * from NCCL: its single CTA per channel issues the operations in one order
 * and runs up to parallelFactor of them at once (all_gather.h:138-180);
 * here each dimension's threadblock runs on its own, waiting only for the
 * items it forwards. */
#include "baseline_int.h"

#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "nccl_tune.h"

/* Items (offsets) dimension d carries, increasing: AllGather's sends and
 * ReduceScatter's receives are the offsets s (0 or a multiple of 2^(d+1))
 * with s + 2^d < n; the other side holds the same list shifted by 2^d. */
static int dim_items(int n, int d, int *v)
{
    int len = 0;
    for (int s = 0; s + (1 << d) < n; s += 1 << (d + 1))
        v[len++] = s;
    return len;
}

static int lowbit(int s)
{
    int d = 0;
    while (!(s & (1 << d)))
        d++;
    return d;
}

typedef struct {
    int L;          /* dimensions: ceil(log2 n) */
    int G;          /* items per message (postFreq) */
    int areas;      /* scratch areas per block: accumulate/pack, receive */
    int S;          /* most threadblocks one (channel, dimension) takes */
    int *split;     /* [L] threadblocks of dimension d: its messages dealt
                       round robin, each on MSCCL channel c + K * i, so no
                       threadblock passes the runtime's steps-per-tb limit */
    int *tb;        /* [K * L] tb of (channel, dimension) on the rank built */
    int *slot0;     /* [L] first scratch item of dimension d's area */
    int *items;     /* scratch list */
} patctx;

/* Scratch item of (block q, area: 0 send/accumulate, 1 receive, dimension d,
 * position i). */
static int slot(const bld *b, const patctx *x, int q, int area, int d, int i)
{
    return (q * x->areas + area) * (b->n - 1) + x->slot0[d] + i;
}

/* Dimension d's messages (x->items filled), sends at most FIFO_WINDOW
 * ahead of receives: walk_next gives 0 (send) or 1 (receive) message, its
 * first item i0 and its g items, or -1 at the end. */
typedef struct {
    int ni, nmsg, si, ri, i, stride;
} msgwalk;

/* Threadblock i's messages of dimension d in piece `piece`: dealt round
 * robin over the split threadblocks, counting on from the previous pieces'. */
static void walk_init(int n, const patctx *x, int d, int i, int piece, msgwalk *m)
{
    m->ni = dim_items(n, d, x->items);
    int all = (m->ni + x->G - 1) / x->G;
    m->stride = x->split[d];
    m->i = (int)(((i - (long long)piece * all) % m->stride + m->stride) % m->stride);
    m->nmsg = all > m->i ? (all - m->i + m->stride - 1) / m->stride : 0;
    m->si = m->ri = 0;
}

static int walk_next(const patctx *x, msgwalk *m, int *i0, int *g)
{
    int w = bl_window_next(&m->si, &m->ri, m->nmsg, m->nmsg);
    if (w < 0)
        return -1;
    *i0 = (m->i + ((w ? m->ri : m->si) - 1) * m->stride) * x->G;
    *g = m->ni - *i0 < x->G ? m->ni - *i0 : x->G;
    return w;
}

/* At most how many steps dimension d writes per piece (the cases of
 * pat_ag_block and pat_rs_block: a message of one item is a step each way;
 * of g items, packing or adding each item, a reduction's nops and copies). */
static long long dim_steps(int n, const patctx *x, int d, int rs)
{
    int ni = dim_items(n, d, x->items);
    long long steps = 0;
    for (int i0 = 0; i0 < ni; i0 += x->G) {
        int g = ni - i0 < x->G ? ni - i0 : x->G;
        steps += g == 1 ? 2 : rs ? 4LL * g + 2 + d : 2LL * g + 2;
    }
    return steps;
}

/* AllGather of block q = piece m of channel c on rank r. */
static void pat_ag_block(bld *b, const patctx *x, int r, int c, int q, sref copied, sref *arr)
{
    int n = b->n, KM = b->KM, j = q;
    for (int s = 0; s < n; s++)
        arr[s] = NODEP;
    arr[0] = copied;
    for (int d = x->L - 1; d >= 0; d--)
    for (int sub = 0; sub < x->split[d]; sub++) {
        int tb = x->tb[(c * x->L + d) * x->S + sub], i0, g, w;
        msgwalk mw;
        walk_init(n, x, d, sub, q / b->K, &mw);
        while ((w = walk_next(x, &mw, &i0, &g)) >= 0) {
            if (w == 0 && g == 1) {
                int s = x->items[i0], off = ((r + s) % n) * KM + j;
                bl_emit(b, r, tb, ST_S, BUF_O, off, BUF_O, off, 1, arr[s]);
            } else if (w == 0) {
                for (int i = 0; i < g; i++) {
                    int s = x->items[i0 + i];
                    bl_emit(b, r, tb, ST_CPY, BUF_O, ((r + s) % n) * KM + j, BUF_S,
                            slot(b, x, q, 0, d, i0 + i), 1, arr[s]);
                }
                int so = slot(b, x, q, 0, d, i0);
                bl_emit(b, r, tb, ST_S, BUF_S, so, BUF_S, so, g, NODEP);
            } else if (g == 1) {
                int s = x->items[i0] + (1 << d), off = ((r + s) % n) * KM + j;
                arr[s] = bl_emit(b, r, tb, ST_R, BUF_O, off, BUF_O, off, 1, NODEP);
            } else {
                int ro = slot(b, x, q, 1, d, i0);
                bl_emit(b, r, tb, ST_R, BUF_S, ro, BUF_S, ro, g, NODEP);
                for (int i = 0; i < g; i++) {
                    int s = x->items[i0 + i] + (1 << d);
                    arr[s] = bl_emit(b, r, tb, ST_CPY, BUF_S, ro + i, BUF_O, ((r + s) % n) * KM + j,
                                     1, NODEP);
                }
            }
        }
    }
}

/* Where the partial of offset s lives on rank r: the output for s = 0, else
 * its place in the send area of dimension lowbit(s). */
static void rs_acc(const bld *b, const patctx *x, int q, int s, buf_kind *kb, int *off)
{
    if (s == 0) {
        *kb = BUF_O;
        *off = q;
        return;
    }
    int d = lowbit(s);
    *kb = BUF_S;
    *off = slot(b, x, q, 0, d, (s - (1 << d)) >> (d + 1));
}

/* ReduceScatter of block q on rank r: dimensions in increasing order, so
 * every contribution to an offset is written before the offset is sent;
 * last[s] is the step that wrote offset s's partial so far (NODEP: none,
 * the partial is still only the input). */
static void pat_rs_block(bld *b, const patctx *x, int r, int c, int q, sref *last)
{
    int n = b->n, KM = b->KM, j = q;
    int *seen = xcalloc((size_t)b->p->gpus[r].ntbs, sizeof *seen);
    for (int s = 0; s < n; s++)
        last[s] = NODEP;
    for (int d = 0; d < x->L; d++)
    for (int sub = 0; sub < x->split[d]; sub++) {
        int tb = x->tb[(c * x->L + d) * x->S + sub], i0, g, w;
        msgwalk mw;
        walk_init(n, x, d, sub, q / b->K, &mw);
        while ((w = walk_next(x, &mw, &i0, &g)) >= 0) {
            if (w == 0) {
                /* send offsets items + 2^d: each one's partial, or its input */
                int s0 = x->items[i0] + (1 << d);
                if (g == 1) {
                    buf_kind kb;
                    int off;
                    rs_acc(b, x, q, s0, &kb, &off);
                    if (last[s0].tb < 0)
                        kb = BUF_I, off = ((r + s0) % n) * KM + j;
                    bl_emit(b, r, tb, ST_S, kb, off, kb, off, 1, last[s0]);
                    continue;
                }
                /* the latest step the message needs on each other tb: a nop
                 * carries each but the last, which the next step carries (the
                 * runtimes refuse a nop chain followed by a step without one) */
                memset(seen, 0xff, (size_t)b->p->gpus[r].ntbs * sizeof *seen);
                for (int i = 0; i < g; i++) {
                    sref l = last[x->items[i0 + i] + (1 << d)];
                    if (l.tb >= 0 && l.tb != tb && l.step > seen[l.tb])
                        seen[l.tb] = l.step;
                }
                sref carry = NODEP;
                for (int t = 0; t < b->p->gpus[r].ntbs; t++)
                    if (seen[t] >= 0) {
                        if (carry.tb >= 0)
                            bl_emit(b, r, tb, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, carry);
                        carry = (sref){t, seen[t]};
                    }
                for (int i = 0; i < g; i++) {
                    int s = x->items[i0 + i] + (1 << d);
                    if (last[s].tb < 0) {
                        bl_emit(b, r, tb, ST_CPY, BUF_I, ((r + s) % n) * KM + j, BUF_S,
                                slot(b, x, q, 0, d, i0 + i), 1, carry);
                        carry = NODEP;
                    }
                }
                int so = slot(b, x, q, 0, d, i0);
                bl_emit(b, r, tb, ST_S, BUF_S, so, BUF_S, so, g, carry);
            } else {
                /* receive partials of offsets items, add them to ours */
                int ro = slot(b, x, q, 1, d, i0);
                if (g > 1)
                    bl_emit(b, r, tb, ST_R, BUF_S, ro, BUF_S, ro, g, NODEP);
                for (int i = 0; i < g; i++) {
                    int s = x->items[i0 + i], off, in = ((r + s) % n) * KM + j;
                    buf_kind kb;
                    rs_acc(b, x, q, s, &kb, &off);
                    if (g == 1) {
                        last[s] = bl_emit(b, r, tb, ST_RRC, last[s].tb < 0 ? BUF_I : kb,
                                          last[s].tb < 0 ? in : off, kb, off, 1, last[s]);
                        continue;
                    }
                    sref dep = last[s];
                    if (dep.tb < 0) {
                        bl_emit(b, r, tb, ST_CPY, BUF_I, in, kb, off, 1, NODEP);
                        dep = NODEP;
                    }
                    last[s] = bl_emit(b, r, tb, ST_RE, BUF_S, ro + i, kb, off, 1, dep);
                }
            }
        }
    }
    free(seen);
}

int bl_build_pat(bld *b, const bl_args *a, tc_err *err)
{
    (void)a;
    int n = b->n, K = b->K, M = b->M, KM = b->KM;
    patctx x;
    memset(&x, 0, sizeof x);
    while ((1 << x.L) < n)
        x.L++;
    x.G = b->pat_agg > 1 ? b->pat_agg : 1;
    int rs = b->k == COLL_REDUCESCATTER;
    x.areas = x.G > 1 ? 2 : rs;     /* one item at a time needs no packing */
    int scratch = x.areas * (n - 1) * KM;
    if (!bl_new_prog(b, n * KM, scratch, err))
        return TC_INPUT;
    x.slot0 = xmalloc((size_t)x.L * sizeof *x.slot0);
    x.split = xmalloc((size_t)x.L * sizeof *x.split);
    x.items = xmalloc((size_t)n * sizeof *x.items);
    x.S = 1;
    for (int d = 0, acc = 0; d < x.L; d++) {
        x.slot0[d] = acc;
        acc += dim_items(n, d, x.items);
        long long need = (long long)M * dim_steps(n, &x, d, rs);
        long long sp = b->max_steps > 0 ? (need + b->max_steps - 1) / b->max_steps : 1;
        x.split[d] = (int)(sp < 1 ? 1 : sp > MAX_CHANNELS / K ? MAX_CHANNELS / K : sp);
        if (x.split[d] > x.S)
            x.S = x.split[d];
    }
    x.tb = xmalloc((size_t)K * x.L * x.S * sizeof *x.tb);
    sref *arr = xmalloc((size_t)n * sizeof *arr);
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < K; c++)
            for (int d = 0; d < x.L; d++)
                for (int i = 0; i < x.split[d]; i++) {
                    int lo = (r - (1 << d) % n + n) % n, hi = (r + (1 << d)) % n;
                    x.tb[(c * x.L + d) * x.S + i] = rs ? bl_tb_new(b, r, hi, lo, c + K * i)
                                                       : bl_tb_new(b, r, lo, hi, c + K * i);
                }
        int ctb = rs ? -1 : bl_tb_new(b, r, -1, -1, 0);
        for (int m = 0; m < M; m++)
            for (int c = 0; c < K; c++) {
                int q = m * K + c;
                if (rs) {
                    pat_rs_block(b, &x, r, c, q, arr);
                } else {
                    /* the own piece first, so in place it is read only after
                     * it has been copied onto itself */
                    sref cp = bl_emit(b, r, ctb, ST_CPY, BUF_I, q, BUF_O, r * KM + q, 1, NODEP);
                    pat_ag_block(b, &x, r, c, q, cp, arr);
                }
            }
    }
    free(arr);
    free(x.tb);
    free(x.slot0);
    free(x.split);
    free(x.items);
    b->p->inplace = 1;
    return TC_OK;
}
