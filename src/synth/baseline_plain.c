/* baseline_plain.c — the classic collective algorithms built straight from
 * a topology (contract in baseline.h; baseline.c is the entry).
 *
 * Why: every synthesized schedule is judged against what NCCL-style rings,
 * trees and textbook direct/butterfly exchanges achieve on the same machine,
 * and those must be real MSCCL files the executor verifies, not formulas.
 *
 * Layout shared by all builders: each rank's data is K*M chunks (K data
 * channels, M chunks per channel); chunk j belongs to channel j % K and is
 * piece j / K of it.  AllGather: rank q's chunk j lands at o[q*KM + j];
 * ReduceScatter/AllReduce "block" q is chunks q*KM .. q*KM+KM-1 of the buffer.
 * Every step moves whole chunks; dependencies are recorded as (tb, step) and
 * hasdep is set on every depended-on step in one pass at the end.
 *
 * Runtime facts followed (docs/design.md §8): one tb per (channel, send peer) and
 * per (channel, recv peer); at most 32 tbs with a peer per channel; cnt < 72;
 * a connection buffers 8 sends, so a tb never runs more than 8 sends ahead of
 * its receives (else two peers doing the same would deadlock); a nop carries
 * one extra dependency and is never depended on.
 *
 * This file: the table of algorithms, the checks every call gets
 * (bl_check_call), the builders behind the table (one family per file,
 * baseline_int.h), and what every program gets after its builder (hasdep,
 * routes, runtime limits, name).  It calls no other baseline module's entry:
 * baseline.c and baseline_nccl.c call it, one way. */
#include "baseline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../util/tcassert.h"
#include "nccl_tune.h"

#define DEFAULT_RINGS 8

#define BIT(k) (1u << (k))

/* ================================================================ the table */

static const baseline_algo ALGOS[] = {
    {"ring", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "NCCL's ring, one ring per channel (AllReduce = ring ReduceScatter + ring AllGather)"},
    {"direct",
     BIT(COLL_ALLGATHER) | BIT(COLL_ALLTOALL) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "every rank sends straight to every other; reductions serialised on the owner"},
    {"butterfly", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "power-of-two ranks: recursive doubling / halving; AllReduce by full-buffer XOR exchange"},
    {"rsag", BIT(COLL_ALLREDUCE),
     "AllReduce as ReduceScatter then AllGather (--via direct|ring|butterfly)"},
    {"tree", BIT(COLL_ALLREDUCE),
     "NCCL's double binary tree: two complementary trees, reduce up, broadcast down, pipelined"},
    {"hier", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "many nodes (a power of two): direct inside each node, recursive halving/doubling across "
     "nodes along the rails; 2 log2(nodes) + 2 hops for AllReduce"},
    {"nccl",
     BIT(COLL_ALLGATHER) | BIT(COLL_ALLTOALL) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "what NCCL runs at --size: its tuning model picks ring or tree, LL/LL128/Simple and the "
     "channels; rings one per NIC; AllToAll point-to-point"},
    {"nvls", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "one node whose switch reduces and multicasts (NVLS): AllReduce by load-reduce and "
     "multicast store, AllGather by multicast stores; an MSCCL++ plan (--target mscclpp)"},
    {"hier-nvls", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER) | BIT(COLL_ALLREDUCE),
     "several nodes: nvls inside each node, the rails (one NIC per rank) across; AllReduce "
     "reduce-scatters and all-gathers each node's sums along the rails; an MSCCL++ plan"},
    {"pat", BIT(COLL_ALLGATHER) | BIT(COLL_REDUCESCATTER),
     "NCCL's PAT, one GPU per node: binomial trees to and from every rank over the peers at "
     "+-2^d, farthest hop first, pieces aggregated per message as NCCL does at --size"},
    {"allpairs", BIT(COLL_REDUCESCATTER),
     "one node: every rank puts each peer's block into its scratch in pieces, the owner sums "
     "each piece from every peer in one reduce as it lands; an MSCCL++ plan (--target mscclpp)"},
};

#define NALGOS ((int)(sizeof ALGOS / sizeof ALGOS[0]))

/* The builders behind the table: rsag runs direct-rsag, or the ring or the
 * halving builder for --via ring / butterfly. */
static const struct {
    const char *kind;
    bl_builder build;
} BUILDERS[] = {
    {"ring", bl_build_ring},           {"direct", bl_build_direct},
    {"direct-rsag", bl_build_direct_rsag}, {"butterfly", bl_build_butterfly},
    {"halving", bl_build_halving},     {"tree", bl_build_tree},
    {"hier", bl_build_hier},           {"pat", bl_build_pat},
};

static bl_builder builder_of(const char *kind)
{
    for (size_t i = 0; i < sizeof BUILDERS / sizeof BUILDERS[0]; i++)
        if (!strcmp(BUILDERS[i].kind, kind))
            return BUILDERS[i].build;
    return bl_build_tree;   /* not reached: every kind is in the table */
}

const baseline_algo *baseline_algos(int *count)
{
    if (count)
        *count = NALGOS;
    return ALGOS;
}

const baseline_algo *baseline_algo_find(const char *name)
{
    for (int i = 0; name && i < NALGOS; i++)
        if (!strcmp(ALGOS[i].name, name))
            return &ALGOS[i];
    return NULL;
}

const char *baseline_algo_names(char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < NALGOS; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", ALGOS[i].name);
    return buf;
}

/* Human name of a collective for messages: "AllGather" etc. */
static const char *coll_title(coll_kind k)
{
    switch (k) {
    case COLL_ALLGATHER: return "AllGather";
    case COLL_ALLTOALL: return "AllToAll";
    case COLL_REDUCESCATTER: return "ReduceScatter";
    default: return "AllReduce";
    }
}

/* What to use instead when `a` has no collective k. */
static const char *alternative_for(coll_kind k)
{
    switch (k) {
    case COLL_ALLTOALL: return "direct";
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER: return "ring, direct or butterfly";
    default: return "ring, direct, butterfly, rsag or tree";
    }
}

/* ============================================================ finishing */

static void mark_hasdeps(prog *p)
{
    for (int r = 0; r < p->ngpu; r++) {
        prog_gpu *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const prog_step *st = &g->tbs[t].steps[s];
                if (st->depid >= 0)
                    g->tbs[st->depid].steps[st->deps].hasdep = 1;
            }
    }
}

/* Every pair a tb talks to must be reachable on the topology. */
static int check_routes(const prog *p, const topo *t, const char *algo, tc_err *err)
{
    for (int r = 0; r < p->ngpu; r++)
        for (int k = 0; k < p->gpus[r].ntbs; k++) {
            const prog_tb *tb = &p->gpus[r].tbs[k];
            int q = tb->send >= 0 ? tb->send : tb->recv;
            if (q < 0)
                continue;
            if (topo_route_of(t, r, q).kind == ROUTE_NONE ||
                topo_route_of(t, q, r).kind == ROUTE_NONE)
                return tc_err_set(err, TC_INPUT,
                                  "%s: ranks %d and %d of %s have no link, switch or NIC between "
                                  "them, and %s sends between them; use ring%s",
                                  algo, r, q, t->name, algo,
                                  !strcmp(algo, "tree") ? "" : " or tree");
        }
    return TC_OK;
}

static int check_limits_and_stats(prog *p, const baseline_opts *o, const char *what,
                                  baseline_stats *st, tc_err *err)
{
    int maxchan = 0, maxsteps = 0, maxdepid = -1, max_tbs = 0;
    int worst_r = 0, worst_t = 0;
    long long tbs = 0, steps = 0;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        tbs += g->ntbs;
        if (g->ntbs > max_tbs)
            max_tbs = g->ntbs;
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            steps += tb->nsteps;
            if (tb->chan > maxchan)
                maxchan = tb->chan;
            if (tb->nsteps > maxsteps) {
                maxsteps = tb->nsteps;
                worst_r = r;
                worst_t = t;
            }
            for (int s = 0; s < tb->nsteps; s++)
                if (tb->steps[s].depid > maxdepid)
                    maxdepid = tb->steps[s].depid;
        }
    }
    p->nchannels = maxchan + 1;
    st->nchannels = p->nchannels;
    st->max_steps_per_tb = maxsteps;
    st->max_tbs_per_rank = max_tbs;
    st->tbs = tbs;
    st->steps = steps;
    if (p->nchannels > MAX_CHANNELS)
        return tc_err_set(err, TC_INPUT,
                          "%s needs %d channels; the runtimes allow %d: use fewer --channels",
                          what, p->nchannels, MAX_CHANNELS);
    const runtime_info *ri = runtime_get(o->target);
    int limit = ri->max_steps_per_tb;
    runtime more = runtime_roomier(o->target, maxsteps, 0);
    char instead[64] = "";
    if (more != RT_ANY)
        snprintf(instead, sizeof instead, ", --target %s (%d)", runtime_name(more),
                 runtime_get(more)->max_steps_per_tb);
    if (limit && maxsteps > limit)
        return tc_err_set(err, TC_INPUT,
                          "%s needs %d steps in one threadblock (rank %d tb %d); the %s runtime "
                          "allows %d per tb: use fewer --chunks%s, or --target unlimited to "
                          "simulate it anyway (the file will not load in the runtimes)",
                          what, maxsteps, worst_r, worst_t, runtime_name(o->target), limit,
                          instead);
    if (ri->max_depid && maxdepid > ri->max_depid)
        return tc_err_set(err, TC_INPUT,
                          "%s needs dependencies on tb %d; the runtimes store depid in 8 bits "
                          "(at most %d): use fewer ranks or channels, or --target unlimited to "
                          "simulate it anyway", what, maxdepid, ri->max_depid);
    /* The builders keep <= 32 peer tbs per channel; make sure. */
    for (int r = 0; r < p->ngpu; r++) {
        int *cs = xcalloc((size_t)p->nchannels, sizeof *cs), *cr = xcalloc((size_t)p->nchannels,
                                                                           sizeof *cr);
        int bad = 0;
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            const prog_tb *tb = &p->gpus[r].tbs[t];
            bad |= (tb->send >= 0 && ++cs[tb->chan] > PEER_TBS_PER_CHANNEL) ||
                   (tb->recv >= 0 && ++cr[tb->chan] > PEER_TBS_PER_CHANNEL);
        }
        free(cs);
        free(cr);
        if (bad)
            return tc_err_set(err, TC_INPUT,
                              "%s puts more than %d peer tbs on one channel of rank %d; the "
                              "runtimes allow %d", what, PEER_TBS_PER_CHANNEL, r,
                              PEER_TBS_PER_CHANNEL);
    }
    return TC_OK;
}

/* Keep names safe inside an XML attribute. */
static void plain(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == ' ' || *s == ',' || *s == ':' ||
              *s == '(' || *s == ')' || *s == '+' || *s == '/'))
            *s = '_';
}

static int pow2_ceil(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* PAT's pieces and aggregation at --size (default 1 MiB), as NCCL sets them
 * for K channels: NCCL's PAT chunk, the pieces of one rank's share of a
 * channel in it (unless --chunks), and how many ranks' pieces a message
 * carries, at most MAX_CNT (nccl_tune.h). */
static void pat_plan(const topo *t, coll_kind k, const baseline_opts *o, bld *b)
{
    long long bytes = o->size_bytes > 0 ? o->size_bytes : 1 << 20;
    long long chan = bytes / t->nranks / b->K, chunk = nccl_pat_chunk_bytes(k, b->K, bytes);
    if (!o->chunks)
        b->M = chan > chunk ? (int)((chan + chunk - 1) / chunk) : 1;
    b->pat_agg = nccl_pat_agg(chunk, chan, t->nranks);
    while (b->pat_agg > MAX_CNT)
        b->pat_agg /= 2;
}

/* The fewest steps the builder of `kind` writes for `chunks` chunks per
 * loop over n = 2^L ranks (AllReduce's direct and butterfly take
 * whole-buffer chunks).  Every chunk reaches the n - 1 other ranks (or is
 * summed from them), an AllReduce's both ways (rsag: its ReduceScatter,
 * then its AllGather); the direct AllReduce sends every chunk to every
 * peer, the butterfly one exchanges every chunk in each of its L rounds.
 * A step moves one chunk, except in the butterfly AllGather and
 * ReduceScatter (also rsag's halving and doubling), which send runs of up
 * to MAX_CNT; and a hop is a send and a receive step where nothing is
 * forwarded (direct, butterfly), one fused step in a ring or a tree.
 * Measured against what the builders write for every kind on 8, 16 and 32
 * ranks, 1 to 16000 chunks per loop: the builders write 1.0 to 1.14 times
 * as many (more where runs are shorter than MAX_CNT), never fewer, so a
 * refusal on it never turns away a program that fits. */
static double min_steps(const char *kind, coll_kind k, int n, int L, long long chunks)
{
    double hops = (double)chunks * (n - 1);
    if (!strcmp(kind, "halving"))
        return 2 * 2 * hops / MAX_CNT;
    if (!strcmp(kind, "butterfly"))
        return k == COLL_ALLREDUCE ? 2.0 * chunks * n * L : 2 * hops / MAX_CNT;
    if (!strcmp(kind, "direct"))
        return k == COLL_ALLREDUCE ? 2 * hops * n : 2 * hops;
    if (!strcmp(kind, "direct-rsag"))
        return 2 * 2 * hops;
    if (!strcmp(kind, "hier"))      /* each rank sends at least half its buffer, in runs */
        return (double)n * chunks / (2.0 * MAX_CNT);
    return k == COLL_ALLREDUCE ? 2 * hops : hops;
}

/* Refuse, before building anything, a program the runtimes could not load
 * or this machine could not hold (min_steps: a rank holds at least
 * min_steps / n steps; the runtimes hold 256 steps in each of at most 1024
 * tbs (216 legacy), and every target, --target unlimited too, is held to
 * BL_MAX_STEPS steps in all: the program and its XML take about 180 bytes
 * a step, so a few GiB).  The direct algorithm keeps a tb per peer. */
static int too_large(const char *name, coll_kind k, const char *kind, int n, int L,
                     long long chunks, const baseline_opts *o, tc_err *err)
{
    if (n < 2)
        return TC_OK;
    double total = min_steps(kind, k, n, L, chunks), per_rank = total / n;
    const runtime_info *ri = runtime_get(o->target);
    int tbs = ri->max_tbs_per_gpu, steps = ri->max_steps_per_tb;
    if (tbs && steps && per_rank > (double)tbs * steps)
        return tc_err_set(err, TC_INPUT, "%s: %lld chunks per loop over %d ranks need at least "
                          "%.0f steps per rank; the %s runtime holds %d tbs of %d steps: use "
                          "fewer --chunks or --channels%s", name, chunks, n, per_rank,
                          runtime_name(o->target), tbs, steps,
                          total > (double)BL_MAX_STEPS ? "" : ", or --target unlimited to "
                          "simulate it anyway (the file will not load in the runtimes)");
    if (total > (double)BL_MAX_STEPS)
        return tc_err_set(err, TC_INPUT, "%s: %lld chunks per loop over %d ranks need at least "
                          "%.3g steps, more than this tool builds (%lld): use fewer --chunks or "
                          "--channels", name, chunks, n, total, (long long)BL_MAX_STEPS);
    if (!strcmp(kind, "direct") && tbs && n - 1 > tbs)
        return tc_err_set(err, TC_INPUT, "direct: each of the %d ranks sends to %d peers, a tb "
                          "each; the %s runtime holds %d tbs per GPU: use ring or tree", n,
                          n - 1, runtime_name(o->target), tbs);
    return TC_OK;
}

const baseline_algo *bl_check_call(const char *algo, const topo *t, coll_kind k,
                                   const baseline_opts *o, tc_err *err)
{
    const baseline_algo *a = baseline_algo_find(algo);
    if (!a) {
        char known[256];
        tc_err_set(err, TC_INPUT, "unknown algorithm '%s'; known: %s", algo ? algo : "",
                   baseline_algo_names(known, sizeof known));
        return NULL;
    }
    if ((int)k < 0 || k >= COLL_COUNT) {
        tc_err_set(err, TC_INPUT, "unknown collective");
        return NULL;
    }
    if (!(a->colls & BIT(k))) {
        if (!strcmp(a->name, "rsag") || !strcmp(a->name, "tree"))
            tc_err_set(err, TC_INPUT, "%s is an AllReduce algorithm and has no %s; use %s",
                       a->name, coll_title(k), alternative_for(k));
        else
            tc_err_set(err, TC_INPUT, "%s has no %s; use %s", a->name, coll_title(k),
                       alternative_for(k));
        return NULL;
    }
    if (!t || t->nranks < 2) {
        tc_err_set(err, TC_INPUT, "%s: needs at least 2 ranks, the topology has %d", a->name,
                   t ? t->nranks : 0);
        return NULL;
    }
    const char *via = o->via && *o->via ? o->via : NULL;
    if (via && strcmp(a->name, "rsag")) {
        tc_err_set(err, TC_INPUT, "--via applies to rsag only, not %s", a->name);
        return NULL;
    }
    if (!strcmp(a->name, "rsag") && via && strcmp(via, "direct") && strcmp(via, "ring") &&
        strcmp(via, "butterfly")) {
        tc_err_set(err, TC_INPUT, "rsag --via: expected direct, ring or butterfly, got '%s'", via);
        return NULL;
    }
    if (o->channels < 0 || o->channels > MAX_CHANNELS) {
        tc_err_set(err, TC_INPUT, "--channels: expected 1..%d, got %d", MAX_CHANNELS, o->channels);
        return NULL;
    }
    if (o->chunks < 0) {
        tc_err_set(err, TC_INPUT, "--chunks: expected at least 1, got %d", o->chunks);
        return NULL;
    }
    return a;
}

prog *bl_stand_in(const char *me, const char *algo, const topo *t, coll_kind k,
                  const baseline_opts *o, baseline_stats *st, tc_err *err)
{
    baseline_opts u = *o;
    u.channels = 1;
    u.chunks = 1;
    u.via = NULL;
    u.target = RT_UNLIMITED;
    prog *p = bl_build_plain(algo, t, k, &u, st, err);
    if (!p) {
        tc_err_prefix(err, "%s", me);
        return NULL;
    }
    snprintf(p->proto, sizeof p->proto, "Simple");
    memset(st, 0, sizeof *st);
    return p;
}

prog *bl_build_plain(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                     baseline_stats *st, tc_err *err)
{
    const baseline_algo *a = bl_check_call(algo, t, k, o, err);
    if (!a)
        return NULL;
    TC_ASSERT(strcmp(a->name, "nccl") && strcmp(a->name, "nvls") && strcmp(a->name, "hier-nvls") &&
              strcmp(a->name, "allpairs"));
    const char *via = o->via && *o->via ? o->via : NULL;

    int n = t->nranks;
    const char *kind = a->name;     /* builder actually used */
    if (!strcmp(kind, "rsag"))
        kind = !via || !strcmp(via, "direct") ? "direct-rsag" : !strcmp(via, "ring") ? "ring"
                                                                                     : "halving";
    int L = bl_log2_exact(n);
    if ((!strcmp(a->name, "butterfly") || !strcmp(kind, "halving")) && L < 0) {
        tc_err_set(err, TC_INPUT, "%s needs a power-of-two number of ranks; %s has %d: use ring "
                   "or direct%s", via ? "rsag --via butterfly" : "butterfly", t->name, n,
                   k == COLL_ALLREDUCE ? " (or tree)" : "");
        return NULL;
    }
    if (!strcmp(kind, "pat") && t->nnodes != n) {
        tc_err_set(err, TC_INPUT, "pat: NCCL runs PAT with one GPU per node only "
                   "(src/graph/tuning.cc:220); %s has %d ranks on %d node%s: use ring, direct "
                   "or butterfly", t->name, n, t->nnodes, t->nnodes == 1 ? "" : "s");
        return NULL;
    }
    int is_ring = !strcmp(kind, "ring");
    int is_tree = !strcmp(kind, "tree");
    if (is_tree && o->channels > MAX_CHANNELS / 2) {
        tc_err_set(err, TC_INPUT, "tree: --channels %d needs %d channels (two trees each); the "
                   "runtimes allow %d", o->channels, 2 * o->channels, MAX_CHANNELS);
        return NULL;
    }

    bld b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.k = k;
    b.n = n;
    b.M = o->chunks ? o->chunks : is_tree ? 4 : 1;
    b.K = o->channels ? o->channels : 1;

    baseline_rings rings;
    memset(&rings, 0, sizeof rings);
    ringinfo ri = {&rings, NULL};
    char mode[256] = "";
    int rc;
    if (is_tree && t->nnodes > 1 && o->ring_mode == BL_RINGS_NCCL && !o->graph) {
        /* NCCL's tree channels follow its ring channels: pair c's chains
         * take ring c's node path and NICs */
        if (baseline_find_rings_mode(t, b.K, BL_RINGS_NCCL, &rings, err) != TC_OK)
            return NULL;
    }
    if (is_ring) {
        int want = o->channels ? o->channels : DEFAULT_RINGS;
        if (o->graph)
            bl_graph_rings(t, o->graph, &rings);
        else if (baseline_find_rings_mode(t, want, (baseline_ring_mode)o->ring_mode, &rings,
                                          err) != TC_OK)
            return NULL;
        st->rings_found = rings.ndisjoint;
        if (!o->channels)
            b.K = rings.ndisjoint;
        ri.pos = xmalloc((size_t)rings.nrings * n * sizeof *ri.pos);
        for (int r = 0; r < rings.nrings; r++)
            for (int i = 0; i < n; i++)
                ri.pos[(size_t)r * n + rings.order[(size_t)r * n + i]] = i;
        if (b.K > rings.ndisjoint) {
            size_t len = (size_t)snprintf(st->note, sizeof st->note,
                     "%d ring%s share%s no link direction, switch port or NIC direction",
                     rings.ndisjoint, rings.ndisjoint == 1 ? "" : "s",
                     rings.ndisjoint == 1 ? "s" : "");
            int shared = (b.K < rings.nrings ? b.K : rings.nrings) - rings.ndisjoint;
            if (shared > 0 && len < sizeof st->note)
                len += (size_t)snprintf(st->note + len, sizeof st->note - len,
                                        "; %d more use other links but share switch ports or "
                                        "NICs", shared);
            if (b.K > rings.nrings && len < sizeof st->note)
                snprintf(st->note + len, sizeof st->note - len,
                         "; channels %d..%d repeat those rings", rings.nrings, b.K - 1);
        }
    }
    if (!strcmp(kind, "pat"))
        pat_plan(t, k, o, &b);
    b.max_steps = runtime_get(o->target)->max_steps_per_tb;
    b.size_bytes = o->size_bytes;
    b.node_interleave = o->node_interleave;
    long long km = (long long)b.K * b.M;
    long long chunks = is_tree ? 2 * km : (k == COLL_ALLREDUCE && (!strcmp(kind, "direct") ||
                                                                   !strcmp(kind, "butterfly")))
                                              ? km
                                              : km * n;
    if (chunks > INT_MAX / 8) {
        baseline_rings_free(&rings);
        free(ri.pos);
        tc_err_set(err, TC_INPUT, "%s: %lld chunks per loop is too many: use fewer --chunks or "
                   "--channels", a->name, chunks);
        return NULL;
    }
    b.KM = (int)km;
    if (too_large(a->name, k, kind, n, L, chunks, o, err) != TC_OK) {
        baseline_rings_free(&rings);
        free(ri.pos);
        return NULL;
    }

    bl_args args = {&ri, L, mode, sizeof mode, is_tree ? o->graph : NULL};
    rc = builder_of(kind)(&b, &args, err);
    baseline_rings_free(&rings);
    free(ri.pos);
    if (rc != TC_OK) {
        prog_free(b.p);
        return NULL;
    }
    prog *p = b.p;
    mark_hasdeps(p);
    p->outofplace = 1;

    char what[160];
    snprintf(what, sizeof what, "%s %s over %d ranks", !strcmp(a->name, "rsag") && via
             ? (!strcmp(via, "ring") ? "rsag --via ring" : !strcmp(via, "butterfly")
                ? "rsag --via butterfly" : "rsag") : a->name, coll_title(k), n);
    st->channels = b.K;
    st->chunks = b.M;
    if (check_routes(p, t, a->name, err) != TC_OK ||
        check_limits_and_stats(p, o, what, st, err) != TC_OK) {
        prog_free(p);
        return NULL;
    }
    if (is_tree && !st->note[0])
        snprintf(st->note, sizeof st->note, "tree: %s", mode);
    if (!strcmp(kind, "pat"))
        snprintf(st->note, sizeof st->note, "pat: %d dimensions (peers at +-2^d), %d piece%s per "
                 "channel, up to %d piece%s per message (NCCL's aggregation at %lld bytes)",
                 bl_log2_exact(pow2_ceil(n)), b.M, b.M == 1 ? "" : "s", b.pat_agg,
                 b.pat_agg == 1 ? "" : "s", o->size_bytes > 0 ? o->size_bytes : 1LL << 20);
    snprintf(p->name, sizeof p->name, "taccl baseline %s %s: %d ranks on %s, %d channel%s x %d "
             "chunk%s%s%s", a->name, coll_name(k), n, t->name, b.K, b.K == 1 ? "" : "s", b.M,
             b.M == 1 ? "" : "s", via ? " via " : "", via ? via : "");
    plain(p->name);
    return p;
}

