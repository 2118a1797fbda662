/* lower_limits.c — the runtime limits a routing cannot escape, judged
 * before the later stages run (lower_precheck in lower.h).
 *
 * Once stage 1 has fixed who sends to whom, three of the runtimes' limits are
 * settled whatever stages 2 and 3 and the lowering then decide: the peer
 * blocks of channels (each rank holds at most 32 tbs with a send peer and 32
 * with a recv peer per channel, so the ring offsets in use, 32 to a block,
 * each need channels of their own: lower_xfer.c) times the instances
 * against MAXCHANNELS, and the tbs a rank needs (one per send peer and one
 * per recv peer, two paired at best) times the instances against the
 * loader's tbs per GPU; and the tbs other tbs must wait on (at least: a
 * recv peer whose chunks the rank sends on to several ranks) against
 * depid <= 127.  Checking them here turns a refusal that used to
 * come after minutes of solving into one that comes at once, and says
 * which --instances would fit. */
#include "lower_int.h"

#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* Legacy MSCCL_MAX_NUM_THREAD_BLOCKS; the newer executor allows
 * 32 * MAXCHANNELS (exec/check.c judges loaded files the same way). */
enum { LEGACY_TBS = 216, EXECUTOR_TBS = 32 * MAX_CHANNELS };

/* Peer blocks of a routing: distinct ring offsets in use, 32 per block. */
static int peer_blocks(const algo *a)
{
    int n = a->nranks, used = 0;
    unsigned char *seen = xcalloc((size_t)n, 1);
    for (int i = 0; i < a->nsends; i++) {
        int off = ((a->sends[i].dst - a->sends[i].src) % n + n) % n;
        used += !seen[off];
        seen[off] = 1;
    }
    free(seen);
    return used > 0 ? (used + PEERS_PER_BLOCK - 1) / PEERS_PER_BLOCK : 1;
}

/* The most tbs any rank needs: max(send peers, recv peers); *rank which. */
static int peer_tbs(const algo *a, int *rank)
{
    int n = a->nranks, most = 0;
    int *sendp = xcalloc((size_t)n, sizeof *sendp), *recvp = xcalloc((size_t)n, sizeof *recvp);
    /* distinct pairs: sort-free with a per-source scan of a seen row */
    unsigned char *row = xcalloc((size_t)n, 1);
    int *idx = xcalloc((size_t)n + 1, sizeof *idx), *by_src = xcalloc((size_t)a->nsends + 1,
                                                                        sizeof *by_src);
    for (int i = 0; i < a->nsends; i++)
        idx[a->sends[i].src + 1]++;
    for (int r = 0; r < n; r++)
        idx[r + 1] += idx[r];
    int *fill = xcalloc((size_t)n, sizeof *fill);
    for (int i = 0; i < a->nsends; i++)
        by_src[idx[a->sends[i].src] + fill[a->sends[i].src]++] = i;
    for (int r = 0; r < n; r++) {
        for (int q = idx[r]; q < idx[r + 1]; q++) {
            int d = a->sends[by_src[q]].dst;
            if (!row[d]) {
                row[d] = 1;
                sendp[r]++;
                recvp[d]++;
            }
        }
        for (int q = idx[r]; q < idx[r + 1]; q++)
            row[a->sends[by_src[q]].dst] = 0;
    }
    *rank = 0;
    for (int r = 0; r < n; r++) {
        int need = sendp[r] > recvp[r] ? sendp[r] : recvp[r];
        if (need > most) {
            most = need;
            *rank = r;
        }
    }
    free(sendp);
    free(recvp);
    free(row);
    free(idx);
    free(by_src);
    free(fill);
    return most;
}

/* A chunk's arrival at a rank: (rank, origin, index) -> the sender. */
typedef struct {
    int rank, origin, index, from;
} arrival;

static int cmp_arrival(const void *x, const void *y)
{
    const arrival *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->origin != b->origin)
        return a->origin < b->origin ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

typedef struct {
    int rank, from, to;
} relay;

static int cmp_relay(const void *x, const void *y)
{
    const relay *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

/* The fewest tbs on one rank that other tbs must wait on: a recv peer
 * whose chunks the rank sends on to two or more ranks has a tb (its own:
 * a tb has one recv peer) that some other tb depends on, since a tb has
 * only one send peer.  A lower bound: the lowering adds waits of its own
 * (a scratch slot reused).  *rank which.  Chunks are (origin, index), as a
 * stage-1 AllGather or AllToAll routing has them. */
static int relay_tbs(const algo *a, int *rank)
{
    int n = a->nsends, nr = 0, most = 0;
    *rank = 0;
    if (n == 0)
        return 0;
    arrival *in = xmalloc((size_t)n * sizeof *in);
    for (int i = 0; i < n; i++)
        in[i] = (arrival){a->sends[i].dst, a->sends[i].origin, a->sends[i].index,
                          a->sends[i].src};
    qsort(in, (size_t)n, sizeof *in, cmp_arrival);
    relay *rl = xmalloc((size_t)n * sizeof *rl);
    for (int i = 0; i < n; i++) {
        const algo_send *x = &a->sends[i];
        arrival key = {x->src, x->origin, x->index, 0};
        const arrival *got = bsearch(&key, in, (size_t)n, sizeof *in, cmp_arrival);
        if (got)
            rl[nr++] = (relay){x->src, got->from, x->dst};
    }
    qsort(rl, (size_t)nr, sizeof *rl, cmp_relay);
    for (int b = 0; b < nr;) {
        int r = rl[b].rank, count = 0;
        while (b < nr && rl[b].rank == r) {
            int from = rl[b].from, tos = 0;
            for (int prev = -1; b < nr && rl[b].rank == r && rl[b].from == from; b++) {
                tos += rl[b].to != prev;
                prev = rl[b].to;
            }
            count += tos >= 2;
        }
        if (count > most) {
            most = count;
            *rank = r;
        }
    }
    free(in);
    free(rl);
    return most;
}

int lower_precheck(const algo *a, const lower_opts *o, tc_err *err)
{
    if (!a || !o || o->unlimited)
        return TC_OK;
    int k = o->instances > 0 ? o->instances : 1, rank = 0;
    int blocks = peer_blocks(a);
    if ((long long)blocks * k > MAX_CHANNELS) {
        int fit = MAX_CHANNELS / blocks;
        return fit >= 1
            ? tc_err_set(err, TC_INPUT,
                         "needs at least %d channels (%d peer blocks x %d instances); the "
                         "runtimes allow %d (MAXCHANNELS): --instances %d fits",
                         blocks * k, blocks, k, MAX_CHANNELS, fit)
            : tc_err_set(err, TC_INPUT,
                         "needs at least %d channels (%d peer blocks of 32 ring offsets); the "
                         "runtimes allow %d (MAXCHANNELS): only --target unlimited "
                         "(simulation) takes it",
                         blocks, blocks, MAX_CHANNELS);
    }
    int tbs = peer_tbs(a, &rank), cap = o->newer_executor ? EXECUTOR_TBS : LEGACY_TBS;
    if ((long long)tbs * k > cap) {
        const char *who = o->newer_executor ? "the newer executor" : "the legacy runtime";
        if (cap / tbs >= 1)
            return tc_err_set(err, TC_INPUT,
                              "rank %d needs at least %d tbs (%d peers one way x %d instances); "
                              "%s allows %d per GPU: --instances %d fits",
                              rank, tbs * k, tbs, k, who, cap, cap / tbs);
        return tc_err_set(err, TC_INPUT,
                          "rank %d needs at least %d tbs (one per peer, %d peers one way); %s "
                          "allows %d per GPU: only --target unlimited (simulation) takes it",
                          rank, tbs, tbs, who, cap);
    }
    int dep = relay_tbs(a, &rank);
    if ((long long)dep * k > MAX_DEPID + 1) {
        if ((MAX_DEPID + 1) / dep >= 1)
            return tc_err_set(err, TC_INPUT,
                              "rank %d sends on what %d peers send it, each to several ranks: "
                              "%d tbs others wait on (x %d instances), but a dependency names "
                              "a tb by depid <= %d (int8 in both runtimes): --instances %d fits",
                              rank, dep, dep * k, k, MAX_DEPID, (MAX_DEPID + 1) / dep);
        return tc_err_set(err, TC_INPUT,
                          "rank %d sends on what %d peers send it, each to several ranks: %d "
                          "tbs others wait on, but a dependency names a tb by depid <= %d "
                          "(int8 in both runtimes): only --target unlimited (simulation) "
                          "takes it", rank, dep, dep, MAX_DEPID);
    }
    return TC_OK;
}
