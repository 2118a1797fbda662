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

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

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

/* The most tbs any rank needs: one per send peer and one per recv peer,
 * less the pairs the lowering can merge into one tb (a recv tb with a send
 * tb forwarding what it received: at most pairable[r] on rank r); *rank
 * which, *speers and *rpeers its peers. */
static int peer_tbs(const algo *a, const int *pairable, int *rank, int *speers, int *rpeers)
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
        int most_pairs = sendp[r] < recvp[r] ? sendp[r] : recvp[r];
        int need = sendp[r] + recvp[r] - (pairable[r] < most_pairs ? pairable[r] : most_pairs);
        if (need > most) {
            most = need;
            *rank = r;
            *speers = sendp[r];
            *rpeers = recvp[r];
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

/* What each rank sends on, from the routing's relays: waited[r] = its recv
 * peers whose chunks it sends on to two or more ranks (each such peer's
 * tb is waited on from another tb: a tb has one recv and one send peer),
 * pairable[r] = min(recv peers it forwards from, send peers it forwards
 * to) (the lowering merges a recv tb with a send tb only when the send
 * forwards what the recv wrote, each tb once).  waited is a lower bound on
 * the tbs other tbs wait on (the lowering adds waits of its own: port
 * order, a slot reused), pairable an upper bound on merges.  Chunks are
 * (origin, index), as a stage-1 AllGather or AllToAll routing has them. */
static void relay_counts(const algo *a, int *waited, int *pairable)
{
    int n = a->nsends, nr = 0;
    if (n == 0)
        return;
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
    unsigned char *to_seen = xcalloc((size_t)a->nranks, 1);
    for (int b = 0; b < nr;) {
        int r = rl[b].rank, froms = 0, tos = 0, e = b;
        while (e < nr && rl[e].rank == r)
            e++;
        for (int q = b; q < e;) {
            int from = rl[q].from, dsts = 0;
            for (int prev = -1; q < e && rl[q].from == from; q++) {
                dsts += rl[q].to != prev;
                prev = rl[q].to;
                if (!to_seen[rl[q].to]) {
                    to_seen[rl[q].to] = 1;
                    tos++;
                }
            }
            froms++;
            waited[r] += dsts >= 2;
        }
        pairable[r] = froms < tos ? froms : tos;
        for (int q = b; q < e; q++)
            to_seen[rl[q].to] = 0;
        b = e;
    }
    free(to_seen);
    free(in);
    free(rl);
}

int lower_precheck(const algo *a, const lower_opts *o, tc_err *err)
{
    const runtime_info *ri = o ? runtime_get(o->runtime) : NULL;
    if (!a || !o || !ri->has_loader)
        return TC_OK;
    int k = o->instances > 0 ? o->instances : 1, rank = 0;
    int blocks = peer_blocks(a);
    if ((long long)blocks * k > MAX_CHANNELS) {
        int fit = MAX_CHANNELS / blocks;
        return fit >= 1
            ? tc_err_set(err, TC_INPUT,
                         "needs at least %d channels (%d peer blocks x %d instances); the "
                         "runtimes allow %d (MAXCHANNELS): at most --instances %d can "
                         "fit",
                         blocks * k, blocks, k, MAX_CHANNELS, fit)
            : tc_err_set(err, TC_INPUT,
                         "needs at least %d channels (%d peer blocks of 32 ring offsets); the "
                         "runtimes allow %d (MAXCHANNELS): only --target unlimited "
                         "(simulation) takes it",
                         blocks, blocks, MAX_CHANNELS);
    }
    int *waited = xcalloc((size_t)a->nranks + 1, sizeof *waited);
    int *pairable = xcalloc((size_t)a->nranks + 1, sizeof *pairable);
    relay_counts(a, waited, pairable);
    if (o->for_reduction) {
        /* the reversed phase forwards along other pairs: take the pairing
         * at its best, one tb per peer one way */
        for (int r = 0; r < a->nranks; r++)
            pairable[r] = INT_MAX / 4;
    }
    int sp = 0, rp = 0, tbs = peer_tbs(a, pairable, &rank, &sp, &rp);
    int pairs = sp + rp - tbs, dep = 0, drank = 0;
    for (int r = 0; r < a->nranks; r++)
        if (waited[r] > dep) {
            dep = waited[r];
            drank = r;
        }
    free(waited);
    free(pairable);
    int cap = ri->max_tbs_per_gpu > 0 ? ri->max_tbs_per_gpu : INT_MAX;
    if ((long long)tbs * k > cap) {
        const char *who = ri->who;
        runtime other = runtime_roomier(o->runtime, 0, tbs);
        char instead[128];
        if (other != RT_ANY)
            snprintf(instead, sizeof instead, "--target %s (%d per GPU) or --target unlimited",
                     runtime_name(other), runtime_get(other)->max_tbs_per_gpu);
        else
            snprintf(instead, sizeof instead, "--target unlimited (simulation)");
        if (cap / tbs >= 1)
            return tc_err_set(err, TC_INPUT,
                              "rank %d needs at least %d tbs (%d send and %d recv peers, at "
                              "most %d paired, x %d instances); %s allows %d per GPU: "
                              "at most --instances %d can fit",
                              rank, tbs * k, sp, rp, pairs, k, who, cap, cap / tbs);
        return tc_err_set(err, TC_INPUT,
                          "rank %d needs at least %d tbs (%d send and %d recv peers, at most %d "
                          "paired); %s allows %d per GPU: only %s takes it",
                          rank, tbs, sp, rp, pairs, who, cap, instead);
    }
    if ((long long)dep * k > MAX_DEPID + 1) {
        rank = drank;
        if ((MAX_DEPID + 1) / dep >= 1)
            return tc_err_set(err, TC_INPUT,
                              "rank %d sends on what %d peers send it, each to several ranks: "
                              "%d tbs others wait on (x %d instances), but a dependency names "
                              "a tb by depid <= %d (int8 in both runtimes): at most "
                              "--instances %d can fit",
                              rank, dep, dep * k, k, MAX_DEPID, (MAX_DEPID + 1) / dep);
        return tc_err_set(err, TC_INPUT,
                          "rank %d sends on what %d peers send it, each to several ranks: %d "
                          "tbs others wait on, but a dependency names a tb by depid <= %d "
                          "(int8 in both runtimes): only --target unlimited (simulation) "
                          "takes it", rank, dep, dep, MAX_DEPID);
    }
    return TC_OK;
}
