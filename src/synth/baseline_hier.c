/* baseline_hier.c — collectives over many nodes whose cost grows with
 * log(nodes), not with the ranks: inside a node a direct exchange, across
 * nodes recursive halving / doubling along the rails.
 *
 * Why: a ring over 128 ranks takes 127 hops of α each, and NCCL's tree
 * still climbs one node at a time; at 1 MiB and below that latency is the
 * whole cost (issue on cluster scale: the synthesized AllReduce at 128 GPUs
 * was 3× slower than NCCL's tree at 1 MiB).  Here the data of rank
 * r = d*G + l (node d, local rank l of G) move in three phases:
 *   1. inside node d, direct ReduceScatter to the rails: local rank l
 *      gets the node's sum of its rail's blocks {d'*G + l : every node d'}
 *      (AllReduce and ReduceScatter; reductions serialised on the owner, as
 *      baseline_direct.c does);
 *   2. across nodes, along rail l (ranks d'*G + l, one NIC hop each):
 *      recursive halving of those N blocks (ReduceScatter stops here: node
 *      d keeps block d*G + l = r) and recursive doubling back (AllReduce;
 *      AllGather does only the doubling, of its own block);
 *   3. inside node d, direct AllGather of the rail's N blocks (AllReduce,
 *      AllGather).
 * That is 2 log2(N) + 2 hops for AllReduce (N nodes, a power of two), and
 * every byte crosses a NIC 2(N-1)/N times, what a ring does.  With one
 * rank per node it is the Rabenseifner AllReduce (rsag --via butterfly).
 *
 * Layout (baseline.c): block q = chunks q*KM .. q*KM+KM-1, chunk j of a
 * block on channel j % K.  Threadblocks of rank r: one per local peer
 * (l + k) % G, k = 1..G-1 (phases 1 and 3), then one per halving round
 * and one per doubling round k = 0..L-1 of phase 2 with the rail partner
 * (d ^ 2^k)*G + l, each serving every channel in turn (a pipeline, see
 * LTB); AllGather adds a copy tb.  Steps move runs of contiguous chunks (cnt <= 71). */
#include "baseline_int.h"

#include <stdlib.h>
#include <string.h>
#include "../model/cost.h"
#include "../util/mem.h"

/* Offsets of channel c's chunks in the rail-l blocks of nodes
 * [d0, d0 + cnt): where a full buffer holds them (compact 0), or at d*KM
 * in a buffer of the rail's blocks only (compact 1); + shift.  A rail's
 * block of node d is block d*G + l, where AllGather and ReduceScatter
 * must have it (rank r's block is r), so runs break at every block; an
 * AllReduce may place its blocks anywhere, so its rails are contiguous
 * (block l*N + d): a phase sends each peer one run, not N, and at small
 * sizes the cost is hops, not α per block. */
static int rail_offsets(const bld *b, int G, int l, int d0, int cnt, int c, int compact,
                        int shift, int *v)
{
    int len = 0, N = b->t->nnodes;
    if (b->k == COLL_ALLREDUCE && !compact) {
        /* channel c's own slice of the buffer, rails contiguous in it, so
         * the channels are independent pipelines of whole runs */
        for (int d = d0; d < d0 + cnt; d++)
            for (int m = 0; m < b->M; m++)
                v[len++] = shift + c * b->n * b->M + (l * N + d) * b->M + m;
        return len;
    }
    for (int d = d0; d < d0 + cnt; d++)
        len = bl_block_chunks(b, compact ? d : d * G + l, c, shift, v, len);
    return len;
}

typedef struct {
    int G, N, L;
    int hb, db;                 /* the first halving and doubling tb (-1: none) */
    int halves;                 /* 2: phases 1 and 3 in two halves of the nodes
                                   (channels > 1: a pipeline), else 1 */
    int *so, *lo, *ro;          /* offset lists, room for the whole buffer */
    int *rs, *rl;               /* runs */
    sref *chain;                /* phase 1: the last reduction of each run so far */
    sref *fin;                  /* [chunk offset] phase 1's last reduction of it */
    sref *got;                  /* [chunk offset of o] the last doubling round's
                                   receive of it */
    sref *after1a, *after1;     /* [K] phase 1's last step of channel c on rank r:
                                   the partner's half of the nodes, all */
    sref *halved;               /* [K] the halving's last step of channel c */
    sref *doubled_a, *doubled;  /* [K] the doubling's last step of channel c: the
                                   round before the last (L > 1), the last */
} hier;

/* The channels are a pipeline, not K copies side by side: one tb per local
 * peer k serves every channel in turn (phase 1, then phase 3), one tb per
 * halving round and one per doubling round likewise, each channel's step
 * waiting for the same channel's previous phase or round.  So channel 0's
 * node phase ends after 1/K of the node's work and its rail rounds start
 * while the later channels still reduce inside the node, and its phase 3
 * runs while the later ones cross the NICs: at bandwidth-bound sizes the
 * NICs and the node's ports overlap (K tbs per peer and round, all
 * channels' node phases shared the ports at once, ended together, and the
 * rails waited for all of it; the rails then ended together and phase 3
 * came after).  Halving and doubling talk to the same partner in one round,
 * so in an AllReduce their tbs are on channels 0 and 1 (a connection per
 * tb); AllGather has no halving, ReduceScatter no doubling. */
#define LTB(h, k) ((k) - 1)                             /* local peer k */
#define HTB(h, k) ((h)->hb + (k))                       /* halving round k */
#define DTB(h, k) ((h)->db + (k))                       /* doubling round k */

static void hier_tbs(bld *b, const hier *h, int r)
{
    int d = r / h->G, l = r % h->G;
    for (int k = 1; k < h->G; k++) {
        int q = d * h->G + (l + k) % h->G;
        bl_tb_new(b, r, q, q, 0);
    }
    for (int half = 0; half < 2; half++) {
        if ((half ? h->db : h->hb) < 0)
            continue;
        for (int k = 0; k < h->L; k++) {
            int q = (d ^ (1 << k)) * h->G + l;
            bl_tb_new(b, r, q, q, half && h->hb >= 0);
        }
    }
}

/* Phase 1 on rank r: send each local peer its rail's blocks of i, and add
 * the peers' contributions to my rail's blocks in peer order into dst
 * (o in place of the blocks, or scratch compact), the first onto i.  Per
 * channel in two halves: the blocks of the nodes the first halving round
 * sends to (the partner's half), then my half, so that round's sends start
 * after half the node's work (after1a) and only its reductions wait for
 * the rest (after1).  One channel alone (h->halves 1): all nodes at once,
 * half the steps (at the sizes one channel is for, alpha is the cost). */
static void phase_reduce(bld *b, hier *h, int r, buf_kind dst, int compact)
{
    int d = r / h->G, l = r % h->G, G = h->G, D = h->halves == 2 ? h->N / 2 : h->N;
    for (int c = 0; c < b->K; c++)
        for (int part = 2 - h->halves; part < 2; part++) {
            int d0 = h->halves == 1 ? 0 : part == 0 ? (d ^ D) & ~(D - 1) : d & ~(D - 1);
            int nl = rail_offsets(b, G, l, d0, D, c, 0, 0, h->lo);
            rail_offsets(b, G, l, d0, D, c, compact, 0, h->ro);
            int nruns = bl_make_runs(b, h->lo, h->ro, nl, h->rs, h->rl);
            for (int k = 1; k < G; k++) {
                int lp = (l + k) % G, tb = LTB(h, k), si = 0, ri = 0, w;
                int ns = rail_offsets(b, G, lp, d0, D, c, 0, 0, h->so);
                int *srs = xmalloc(((size_t)ns + 1) * sizeof *srs);
                int *srl = xmalloc(((size_t)ns + 1) * sizeof *srl);
                int nsr = bl_make_runs(b, h->so, h->so, ns, srs, srl);
                int win = b->node_interleave ? 1 : FIFO_WINDOW;
                while ((w = bl_window_next_w(&si, &ri, nsr, nruns, win)) >= 0) {
                    if (w == 0) {
                        int x = srs[si - 1];
                        bl_emit(b, r, tb, ST_S, BUF_I, h->so[x], BUF_I, h->so[x], srl[si - 1],
                                NODEP);
                        continue;
                    }
                    int x = ri - 1, at = h->rs[x];
                    buf_kind ob = k == 1 ? BUF_I : dst;
                    int oo = k == 1 ? h->lo[at] : h->ro[at];
                    h->chain[x] = bl_emit(b, r, tb, ST_RRC, ob, oo, dst, h->ro[at], h->rl[x],
                                          k == 1 ? NODEP : h->chain[x]);
                }
                free(srs);
                free(srl);
            }
            for (int x = 0; x < nruns; x++)
                for (int i = 0; i < h->rl[x]; i++)
                    h->fin[h->ro[h->rs[x] + i]] = h->chain[x];
            h->after1[c] = bl_last_of(b, r, LTB(h, G - 1));
            if (part == 0 || h->halves == 1)
                h->after1a[c] = h->after1[c];
        }
}

/* Phase 2's halving on rank r: rounds k = L-1 .. 0 with the rail partner,
 * my rail's blocks in `cur` (i before phase 1 has run, else dst's layout).
 * AllReduce keeps everything in o; ReduceScatter in scratch (compact) and
 * the last round into o[0..KM). */
static void phase_halving(bld *b, hier *h, int r, buf_kind cur, int compact, int rs_final)
{
    int d = r / h->G, l = r % h->G, G = h->G;
    for (int c = 0; c < b->K; c++) {
        sref after1a = G > 1 ? h->after1a[c] : NODEP, after1 = G > 1 ? h->after1[c] : NODEP;
        for (int k = h->L - 1; k >= 0; k--) {
            int D = 1 << k, mb = d & ~(D - 1), pb = (d ^ D) & ~(D - 1);
            int first = k == h->L - 1, last = k == 0;
            buf_kind sb = first ? cur : (compact ? BUF_S : BUF_O);
            int ns = rail_offsets(b, G, l, pb, D, c, compact, 0, h->so);
            int nl = rail_offsets(b, G, l, mb, D, c, compact, 0, h->lo);
            buf_kind rb = compact ? BUF_S : BUF_O;
            if (rs_final && last) {
                rb = BUF_O;
                rail_offsets(b, G, l, mb, D, c, 1, -d * b->KM, h->ro);
            } else {
                rail_offsets(b, G, l, mb, D, c, compact, 0, h->ro);
            }
            bl_round rd = {sb, h->so, ns, ST_RRC, sb, rb, h->lo, h->ro, nl, NULL, NULL, NULL, 0, 0};
            /* the first round after the node's reduction in two halves: its
             * sends wait for their own chunks' reductions, its reducing
             * receives for their local operand's, not for the whole half */
            if (first && G > 1 && h->halves == 2) {
                rd.sdep = rd.ldep = h->fin;
                after1a = after1 = NODEP;
            }
            if (last && !rs_final)
                rd.rset = h->got;   /* my node's block of the rail, now final */
            sref dep = first ? after1a : bl_last_of(b, r, HTB(h, k + 1));
            bl_emit_round_rdep(b, r, HTB(h, k), &rd, NODEP, dep, first ? after1 : NODEP);
        }
        h->halved[c] = bl_last_of(b, r, HTB(h, 0));
    }
}

/* Phase 2's doubling on rank r: rounds k = 0 .. L-1, o's rail blocks of my
 * group to the partner's group.  AllGather's round 0 sends its own block
 * from i and round 1 waits for the copy of it into o (`copied`). */
static void phase_doubling(bld *b, hier *h, int r, int from_input, sref copied)
{
    int d = r / h->G, l = r % h->G, G = h->G;
    for (int c = 0; c < b->K; c++)
        for (int k = 0; k < h->L; k++) {
            int D = 1 << k, gb = d & ~(D - 1), pb = (d ^ D) & ~(D - 1);
            int own = from_input && k == 0;
            int ns = rail_offsets(b, G, l, gb, D, c, 0, own ? -r * b->KM : 0, h->so);
            int nr = rail_offsets(b, G, l, pb, D, c, 0, 0, h->ro);
            /* window 1: a receive ends before the tb's next send, so the
             * next round and the node's gather start per operation, not
             * after all of this round's sends */
            bl_round rd = {own ? BUF_I : BUF_O, h->so, ns, ST_R, BUF_O, BUF_O, h->ro, h->ro, nr,
                           NULL, h->got, NULL, 1, 0};
            sref d1 = from_input && k == 1 ? copied : NODEP;
            sref d2 = k == 0 ? (from_input ? NODEP : h->halved[c])
                             : bl_last_of(b, r, DTB(h, k - 1));
            bl_emit_round(b, r, DTB(h, k), &rd, d1, d2);
            if (k == h->L - 2)
                h->doubled_a[c] = bl_last_of(b, r, DTB(h, k));
            if (k == h->L - 1)
                h->doubled[c] = bl_last_of(b, r, DTB(h, k));
        }
}

/* Phase 3 on rank r: my rail's N blocks of o to every local peer, theirs
 * into o, per channel in two halves: the blocks of my half of the nodes,
 * final before the last doubling round (after the round before it, or the
 * halving and the copy on two nodes), then the partner's half, after the
 * last round (one channel alone: all nodes after the last round).  The
 * first send of each also waits for the copy. */
static void phase_gather(bld *b, hier *h, int r, sref copied, int reduced)
{
    int d = r / h->G, l = r % h->G, G = h->G, D = h->halves == 2 ? h->N / 2 : h->N;
    for (int c = 0; c < b->K; c++)
        for (int part = 2 - h->halves; part < 2; part++) {
            int d0 = h->halves == 1 ? 0 : part == 0 ? d & ~(D - 1) : (d ^ D) & ~(D - 1);
            /* two halves: each send of the partner's half waits for the
             * last doubling round's receive of its own chunks (`got`), not
             * the whole round; in an AllReduce my half's likewise for the
             * round (or the halving) that made its chunks final */
            int own = h->halves == 2 && (part == 1 || reduced);
            sref done = own ? NODEP : part == 1 ? h->doubled[c] : h->L > 1 ? h->doubled_a[c]
                        : reduced ? h->halved[c] : NODEP;
            for (int k = 1; k < G; k++) {
                int lp = (l + k) % G;
                int ns = rail_offsets(b, G, l, d0, D, c, 0, 0, h->so);
                int nr = rail_offsets(b, G, lp, d0, D, c, 0, 0, h->ro);
                bl_round rd = {BUF_O, h->so, ns, ST_R, BUF_O, BUF_O, h->ro, h->ro, nr,
                               own ? h->got : NULL, NULL, NULL, 0, 0};
                bl_emit_round(b, r, LTB(h, k), &rd, copied, done);
            }
        }
}

int bl_build_hier(bld *b, const bl_args *a, tc_err *err)
{
    (void)a;
    const topo *t = b->t;
    hier h;
    memset(&h, 0, sizeof h);
    h.G = t->ranks_per_node;
    h.N = t->nnodes;
    h.L = bl_log2_exact(h.N);
    if (h.N < 2 || h.L < 0)
        return tc_err_set(err, TC_INPUT, "hier: needs a power-of-two number of nodes, at least "
                          "2; %s has %d: use ring or tree", t->name, h.N);
    int n = b->n, KM = b->KM, k = b->k;
    h.halves = b->K > 1 ? 2 : 1;
    h.hb = k == COLL_ALLGATHER ? -1 : h.G - 1;
    h.db = k == COLL_REDUCESCATTER ? -1 : h.G - 1 + (h.hb >= 0 ? h.L : 0);
    int scratch = k == COLL_REDUCESCATTER ? h.N * KM : 0;
    if (!bl_new_prog(b, n * KM, scratch, err))
        return TC_INPUT;
    /* The runtimes run a step of cnt chunks as cnt operations, one FIFO
     * slot each, once a chunk fills the tile (sched/tile.h).  Both ends of
     * an exchange send before they receive, so a step of more chunks than
     * the FIFO holds deadlocks there (DGX H100 x16 AllReduce 1 GiB: runs
     * of 16 chunks, every threadblock stuck on a full FIFO; in one pass it
     * ran).  Steps of one operation each keep the sends within the window
     * (bl_window_next): under Simple's tile, so the sizes below it keep
     * their long runs, one alpha each. */
    if (b->size_bytes > 0) {
        long long chunk = b->size_bytes / ((long long)n * KM);
        long long mc = chunk > 0 ? cost_proto_tile_bytes(COST_SIMPLE) / chunk : MAX_CNT;
        b->run_cap = mc < 1 ? 1 : mc < MAX_CNT ? (int)mc : MAX_CNT;
    }
    size_t cap = (size_t)n * KM + 1;
    h.so = xmalloc(cap * sizeof *h.so);
    h.lo = xmalloc(cap * sizeof *h.lo);
    h.ro = xmalloc(cap * sizeof *h.ro);
    h.rs = xmalloc(cap * sizeof *h.rs);
    h.rl = xmalloc(cap * sizeof *h.rl);
    h.chain = xmalloc(cap * sizeof *h.chain);
    h.fin = xmalloc(cap * sizeof *h.fin);
    h.got = xmalloc(cap * sizeof *h.got);
    h.after1 = xmalloc((size_t)b->K * sizeof *h.after1);
    h.after1a = xmalloc((size_t)b->K * sizeof *h.after1a);
    h.doubled_a = xmalloc((size_t)b->K * sizeof *h.doubled_a);
    h.halved = xmalloc((size_t)b->K * sizeof *h.halved);
    h.doubled = xmalloc((size_t)b->K * sizeof *h.doubled);
    for (int r = 0; r < n; r++) {
        for (size_t i = 0; i < cap; i++)
            h.fin[i] = h.got[i] = NODEP;
        hier_tbs(b, &h, r);
        if (k == COLL_ALLGATHER) {
            int ctb = bl_tb_new(b, r, -1, -1, 0);
            sref copied = bl_emit_copy(b, r, ctb, BUF_I, 0, BUF_O, r * KM, KM);
            phase_doubling(b, &h, r, 1, copied);
            phase_gather(b, &h, r, copied, 0);
            continue;
        }
        int rs = k == COLL_REDUCESCATTER;
        if (h.G > 1)
            phase_reduce(b, &h, r, rs ? BUF_S : BUF_O, rs);
        phase_halving(b, &h, r, h.G > 1 ? (rs ? BUF_S : BUF_O) : BUF_I, rs, rs);
        if (rs)
            continue;
        phase_doubling(b, &h, r, 0, NODEP);
        phase_gather(b, &h, r, NODEP, 1);
    }
    free(h.so);
    free(h.lo);
    free(h.ro);
    free(h.rs);
    free(h.rl);
    free(h.chain);
    free(h.fin);
    free(h.got);
    free(h.after1);
    free(h.after1a);
    free(h.doubled_a);
    free(h.halved);
    free(h.doubled);
    b->p->inplace = 0;
    return TC_OK;
}
