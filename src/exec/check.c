/* check.c — static hazards of an MSCCL schedule (see check.h).
 *
 * Everything here is decided from the program text alone, before anything
 * runs: what the MSCCL runtimes would reject while loading the XML, and
 * what they would load without complaint and then hang or corrupt memory
 * on (offset+cnt overflow, a dependency nothing signals, a send with no
 * matching receive).  One pass over all steps plus a sort of the tbs'
 * connection ends, so O(steps + tbs log tbs): it runs on 1024-rank
 * schedules with millions of steps.
 *
 * Which kind each problem gets:
 *   HZ_BOUNDS      ngpus vs <gpu> elements, nchunksperloop vs the
 *                  collective, i/o/s chunk counts, a missing or unknown
 *                  buffer, negative offset, offset+cnt past the buffer,
 *                  cnt < 1, unknown step type
 *   HZ_LIMIT       nchannels, steps per tb, cnt, depid, tbs with a peer
 *                  per channel; numbering: gpu ids, tb ids, step numbers
 *   HZ_CONNECTION  peer out of range or the rank itself, chan out of
 *                  range, two tbs on one (chan, peer), a sending/receiving
 *                  step in a tb without that peer, a tb with no partner
 *   HZ_PAIRING     per connection: send/receive counts, k-th cnt
 *   HZ_DEPENDENCY  depid/deps malformed or naming a missing step, waiting
 *                  on itself, no later hasdep, a nop chain the runtimes
 *                  reject
 *
 * Runtime constants (checked in the runtimes' sources):
 *   MSCCL_MAX_NUM_STEPS 256  microsoft/msccl src/include/msccl.h (legacy)
 *   MSCCL_MAX_NUM_STEPS 64   Azure/msccl-executor-nccl
 *                            src/include/msccl/msccl_struct.h (newer)
 *   MSCCL_MAX_COUNT 72       both; the parsers reject count < 0 or
 *                            count >= MSCCL_MAX_COUNT, so cnt <= 71
 *   depid <= 127             both store dependentBid as int8_t
 *   MAXCHANNELS 32           the NCCL devcomm.h both build on; tb chan is
 *                            checked against it
 *   MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL 32
 *                            both; at most 32 tbs with a send peer and 32
 *                            with a recv peer on one channel of a rank
 *                            ("too many sends per channel")
 * Two runtime behaviours the checks follow: a nop is not stored (its
 * dependency is attached to the next non-nop step, which must then carry
 * a depid of its own, and its hasdep is dropped), and the dependency flag
 * is set only by steps with hasdep=1, so a waiter on (tb, step) needs a
 * non-nop step at or after `step` in that tb with hasdep=1. */
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../util/tcassert.h"
#include "rtdep.h"

/* MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL, the same in both runtimes. */
#define PEER_TBS_PER_CHANNEL 32

typedef struct {
    const prog *p;
    const check_limits *lim;
    hazard_list *out;
    rtdep_tb *rt;           /* per tb of the current gpu: the runtimes' numbering */
    int nrt;                /* tbs filled in rt */
    int *send_per_chan;     /* per channel of the current gpu: tbs with a send peer */
    int *recv_per_chan;
    int nchan_counted;      /* length of the two arrays above */
} ctx;

void check_limits_for(check_limits *l, runtime rt)
{
    TC_ASSERT(runtime_writes_xml(rt));
    const runtime_info *ri = runtime_get(rt);
    l->max_steps_per_tb = ri->max_steps_per_tb > 0 ? ri->max_steps_per_tb : 1 << 30;
    l->max_cnt = ri->max_cnt > 0 ? ri->max_cnt : 1 << 30;
    l->max_depid = ri->max_depid > 0 ? ri->max_depid : 1 << 30;
    l->max_channels = ri->max_channels > 0 ? ri->max_channels : 1 << 30;
    l->loader = rt;
}

static const runtime_info *judge(const ctx *c)
{
    return runtime_get(c->lim->loader);
}

/* "s" after a verb whose subject is one runtime: "refuses", "refuse". */
static const char *verb_s(const ctx *c)
{
    return judge(c)->plural ? "" : "s";
}

/* Runtime limits the loaders enforce: a file over one is refused (HZ_LOAD)
 * by the runtime --target names, else (no target) by the runtimes; with
 * --target unlimited they are simulated (HZ_LIMIT, reported, not refused). */
static hazard_kind limit_kind(const ctx *c)
{
    return judge(c)->has_loader ? HZ_LOAD : HZ_LIMIT;
}

static const char *refuser(const ctx *c)
{
    return judge(c)->label;
}


/* ---- program level ------------------------------------------------------ */

static void check_algo(ctx *c)
{
    const prog *p = c->p;
    if (p->ngpu != p->ngpus)
        hazard_add(c->out, HZ_BOUNDS, -1, -1, -1,
                   "ngpus is %d but %d <gpu> elements are present", p->ngpus, p->ngpu);
    if (p->nchannels < 1 || p->nchannels > c->lim->max_channels) {
        /* The executor fails init when the communicator has fewer channels
         * (at most MAXCHANNELS); the legacy runtime only warns. */
        int refused = judge(c)->channels_fail_init && p->nchannels > c->lim->max_channels;
        hazard_add(c->out, refused ? HZ_LOAD : HZ_LIMIT, -1, -1, -1,
                   "nchannels %d is outside 1..%d (the runtimes' MAXCHANNELS)%s%s%s",
                   p->nchannels, c->lim->max_channels,
                   refused ? ": " : "", refused ? judge(c)->label : "",
                   refused ? " fails ncclCommInitRank" : "");
    }
    for (int r = 0; r < p->ngpu; r++)
        if (p->gpus[r].id != r)
            hazard_add(c->out, HZ_LIMIT, -1, -1, -1,
                       "<gpu> element %d has id %d; gpu ids must be 0..%d in order",
                       r, p->gpus[r].id, p->ngpu - 1);
}

/* A <gpu> buffer count: 0 is "not addressed" (prog_buf_len), anything else
 * must be the collective's size of that buffer. */
static void check_count(ctx *c, int r, const char *attr, int given, int need, int shape_ok)
{
    const prog *p = c->p;
    if (given < 0)
        hazard_add(c->out, HZ_BOUNDS, r, -1, -1, "%s %d is negative", attr, given);
    else if (shape_ok && given != 0 && given != need && !judge(c)->chunk_counts)
        hazard_add(c->out, HZ_BOUNDS, r, -1, -1,
                   "%s is %d but %s over %d ranks with nchunksperloop %d needs %d (or 0: not "
                   "addressed); msccl (the legacy runtime) would not load it, msccl-executor "
                   "would bound offsets by %d on a buffer of %d chunks",
                   attr, given, coll_name(p->coll), p->ngpus, p->nchunksperloop, need, given, need);
}

static void check_gpu_shapes(ctx *c)
{
    const prog *p = c->p;
    int in = 0, outc = 0;
    tc_err e;
    int shape_ok = coll_shape(p->coll, p->ngpus, p->nchunksperloop, &in, &outc, &e) == TC_OK;
    if (!shape_ok)
        hazard_add(c->out, HZ_BOUNDS, -1, -1, -1, "%s", e.msg);
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        check_count(c, r, "i_chunks", g->i_chunks, in, shape_ok);
        check_count(c, r, "o_chunks", g->o_chunks, outc, shape_ok);
        if (g->s_chunks < 0)
            hazard_add(c->out, HZ_BOUNDS, r, -1, -1, "s_chunks %d is negative", g->s_chunks);
    }
}

/* ---- what a loader refuses ---------------------------------------------- */

/* <algo>: coll spelling, required attributes, the byte range. */
static void check_algo_loader(ctx *c)
{
    const prog *p = c->p;
    runtime L = c->lim->loader;
    const runtime_info *ri = judge(c);
    if (!ri->has_loader || !p->coll_attr[0])
        return;     /* no loader, or built in memory */
    if (!runtime_coll_ok(L, p->coll_attr)) {
        if (!ri->reducescatter) {   /* any MSCCL runtime's spelling */
            const char *legacy = runtime_coll_xml(RT_MSCCL, p->coll);
            const char *newer = runtime_coll_xml(RT_EXECUTOR, p->coll);
            hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                       "coll \"%s\": the MSCCL runtimes refuse to load the file; they spell "
                       "this collective \"%s\"%s%s%s", p->coll_attr, legacy,
                       strcmp(legacy, newer) ? " (msccl-executor: \"" : "",
                       strcmp(legacy, newer) ? newer : "", strcmp(legacy, newer) ? "\")" : "");
        } else
            hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                       "coll \"%s\": %s refuses to load the file; it spells this collective "
                       "\"%s\"", p->coll_attr, ri->label, runtime_coll_xml(L, p->coll));
    }
    if (ri->needs_range_attrs) {
        static const struct { unsigned bit; const char *name; } req[] = {
            {PROG_HAS_OUTOFPLACE, "outofplace"}, {PROG_HAS_MINBYTES, "minBytes"},
            {PROG_HAS_MAXBYTES, "maxBytes"}};
        for (size_t i = 0; i < sizeof req / sizeof *req; i++)
            if (!(p->attrs & req[i].bit))
                hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                           "<algo> has no %s attribute: %s requires it and fails "
                           "ncclCommInitRank", req[i].name, ri->label);
        if ((p->attrs & PROG_HAS_OUTOFPLACE) && !p->inplace && !p->outofplace)
            hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                       "inplace=\"0\" and outofplace=\"0\": %s selects this file "
                       "for no call", ri->label);
    }
    if (ri->needs_name && !(p->attrs & PROG_HAS_NAME))
        hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                   "<algo> has no name attribute: %s requires it and "
                   "ignores the file", ri->label);
    if (ri->drops_bad_range && p->min_bytes > p->max_bytes)
        hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                   "minBytes %lld is greater than maxBytes %lld: %s "
                   "ignores the file", p->min_bytes, p->max_bytes, ri->label);
    if (!ri->scratch_at_init)
        return;
    /* Scratch for the largest call, allocated once at init. */
    long double scratch = 0;
    for (int r = 0; r < p->ngpu; r++) {
        long double s = (long double)p->max_bytes * p->gpus[r].s_chunks / p->nchunksperloop;
        if (s > scratch)
            scratch = s;
    }
    if (scratch > (long double)CHECK_GPU_BYTES)
        hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                   "maxBytes %lld needs %.3Lg bytes of scratch per GPU (maxBytes * s_chunks / "
                   "nchunksperloop), allocated when the communicator starts: more than a GPU has "
                   "(%lld GiB), so %s fails ncclCommInitRank",
                   p->max_bytes, scratch, CHECK_GPU_BYTES >> 30, ri->label);
}

/* What the runtimes' XML tokenizer refuses (the reader took it), and the
 * 4095 nodes it stores: 1 <algo> + every <gpu> + one rank's tbs and steps. */
static void check_syntax_loader(ctx *c)
{
    const prog *p = c->p;
    if (!judge(c)->has_loader || !p->coll_attr[0])
        return;
    static const char *what[] = {
        "an XML declaration or processing instruction (<?...?>)",
        "text or a tab between elements (the tokenizer takes only spaces and line ends)",
        "a tag spread over several lines",
        "an attribute value in single quotes",
        ("an element with more than 16 attributes, each space beyond one between them counting "
         "as an empty one (the rest are dropped)"),
    };
    const long at[] = {p->syntax.decl, p->syntax.tab, p->syntax.split_tag,
                       p->syntax.single_quote, p->syntax.many_attrs, p->syntax.tab_in_tag};
    for (int i = 0; i < 6; i++)
        if (at[i] > 0) {
            hazard_add(c->out, HZ_LOAD, -1, -1, -1, "%s: the runtimes' XML tokenizer refuses it "
                       "(%s refuse%s to load the file)",
                       i == 5 ? "a tab inside a tag (attributes must be separated by single spaces)"
                              : what[i], refuser(c), verb_s(c));
            c->out->v[c->out->n - 1].line = at[i];
        }
    static const char *misread[] = {
        ("a blank beside '=': the runtimes' tokenizer refuses one after '=' and takes one before "
         "it as the end of an attribute with no value"),
        ("an entity or character reference in a value: the runtimes take it literally "
         "(\"&#49;\" is not 1)"),
        ("an integer with a leading zero: the runtimes read integers with strtol(s, NULL, 0), so "
         "\"010\" is octal 8 and \"08\" is 0"),
    };
    const long mat[] = {p->syntax.eq_space, p->syntax.entity, p->syntax.leading_zero};
    for (int i = 0; i < 3; i++)
        if (mat[i] > 0) {
            hazard_add(c->out, HZ_LOAD, -1, -1, -1, "%s (%s would not load the file as written)",
                       misread[i], refuser(c));
            c->out->v[c->out->n - 1].line = mat[i];
        }
    long long nodes = prog_parser_nodes(p, NULL);
    int most = judge(c)->parser_nodes;
    if (most > 0 && nodes > most)
        hazard_add(c->out, HZ_LOAD, -1, -1, -1,
                   "%lld XML elements a rank stores (1 <algo>, %d <gpu>, its tbs and steps): the "
                   "runtimes' parser holds %d (%s refuse%s to load the file)",
                   nodes, p->ngpu, most, refuser(c),
                   verb_s(c));
}

/* The legacy loader's consistency check: a non-zero i_chunks (o_chunks)
 * times the ranks on that side must be nchunksperloop. */
static void check_counts_loader(ctx *c, int r)
{
    const prog *p = c->p;
    const prog_gpu *g = &p->gpus[r];
    if (!judge(c)->has_loader)
        return;
    /* MSCCL_MAX_NUM_THREAD_BLOCKS: legacy 216, the executor 32 * MAXCHANNELS;
     * with no target, what both refuse */
    int max_tbs = judge(c)->max_tbs_per_gpu;
    if (max_tbs > 0 && g->ntbs > max_tbs)
        hazard_add(c->out, HZ_LOAD, r, -1, -1, "%d tbs: %s allow%s %d per GPU and refuse%s the file",
                   g->ntbs, judge(c)->label,
                   verb_s(c), max_tbs,
                   verb_s(c));
    int in_, out_;
    tc_err e;
    if (!judge(c)->chunk_counts ||
        coll_shape(p->coll, p->ngpus, p->nchunksperloop, &in_, &out_, &e) != TC_OK)
        return;     /* a bad shape is reported once, by check_gpu_shapes */
    int in_mult = p->coll == COLL_ALLGATHER ? p->ngpus : 1;
    int out_mult = p->coll == COLL_REDUCESCATTER ? p->ngpus : 1;
    if ((g->i_chunks > 0 && (long long)g->i_chunks * in_mult != p->nchunksperloop) ||
        (g->o_chunks > 0 && (long long)g->o_chunks * out_mult != p->nchunksperloop))
        hazard_add(c->out, HZ_LOAD, r, -1, -1,
                   "i_chunks %d / o_chunks %d disagree with nchunksperloop %d for %s: %s "
                   "ignores the file (0 would skip its check)",
                   g->i_chunks, g->o_chunks, p->nchunksperloop, coll_name(p->coll),
                   judge(c)->label);
}

/* The loaders' own bound: each offset a step's type has checked must be -1
 * or below its buffer's count as the file gives it (so a count of 0 admits
 * no offset but -1).  offset+cnt is not checked by them. */
static int check_offset_loader(ctx *c, int r, int t, int k, const prog_step *st)
{
    int reported = 0;   /* bit 0: src, bit 1: dst */
    if (!judge(c)->has_loader)
        return 0;
    const prog_gpu *g = &c->p->gpus[r];
    int src = 0, dst = 0;
    switch (st->type) {
    case ST_S: case ST_RRS: src = 1; break;
    case ST_R: case ST_RCS: dst = 1; break;
    case ST_RRCS: case ST_CPY: case ST_RE: src = dst = 1; break;
    default: break;
    }
    for (int side = 0; side < 2; side++) {
        if (!(side ? dst : src))
            continue;
        buf_kind b = side ? st->dstbuf : st->srcbuf;
        int off = side ? st->dstoff : st->srcoff;
        int n = b == BUF_I ? g->i_chunks : b == BUF_O ? g->o_chunks : b == BUF_S ? g->s_chunks : -1;
        if (n >= 0 && off >= n) {
            hazard_add(c->out, HZ_LOAD, r, t, k,
                       "%soff %d is not below %s_chunks %d, as the runtimes' loaders require (%s "
                       "refuse%s to load the file)", side ? "dst" : "src", off, buf_name(b), n,
                       refuser(c), verb_s(c));
            reported |= 1 << side;
        }
    }
    return reported;
}

/* Offsets past what the runtimes store (PROG_MAX_OFFSET): loaded, then
 * wrapped negative. */
static void check_offset_width(ctx *c, int r, int t, int k, const prog_step *st)
{
    if (!judge(c)->has_loader)
        return;
    for (int side = 0; side < 2; side++) {
        if (!(side ? step_writes_dst(st->type) : step_reads_src(st->type)))
            continue;
        int off = side ? st->dstoff : st->srcoff;
        if (off > PROG_MAX_OFFSET)
            hazard_add(c->out, HZ_LIMIT, r, t, k,
                       "%soff %d exceeds the runtime limit %d: both runtimes load it but store "
                       "offsets in 16 bits, so it wraps to %d and the step addresses memory "
                       "before its buffer", side ? "dst" : "src", off, PROG_MAX_OFFSET,
                       (int)(int16_t)(uint16_t)off);
    }
}

/* ---- per tb ------------------------------------------------------------- */

static int peer_ok(const prog *p, int r, int peer)
{
    return peer >= 0 && peer < p->ngpus && peer != r;
}

static int chan_ok(const prog *p, int chan)
{
    return chan >= 0 && chan < p->nchannels;
}

static void check_peer(ctx *c, int r, int t, const char *role, int peer)
{
    if (peer < -1 || peer >= c->p->ngpus)
        hazard_add(c->out, HZ_CONNECTION, r, t, -1,
                   "%s peer %d is outside -1..%d (ngpus %d)", role, peer, c->p->ngpus - 1,
                   c->p->ngpus);
    else if (peer == r)
        hazard_add(c->out, HZ_CONNECTION, r, t, -1,
                   "%s peer %d is the rank itself", role, peer);
}

/* Count tbs with a send / recv peer per channel of one rank; the runtimes
 * keep 32 slots per channel for each. */
static void count_peer_tb(ctx *c, int r, int t, const prog_tb *tb)
{
    if (tb->chan < 0 || tb->chan >= c->nchan_counted)
        return;
    if (tb->send >= 0 && ++c->send_per_chan[tb->chan] == PEER_TBS_PER_CHANNEL + 1)
        hazard_add(c->out, limit_kind(c), r, t, -1,
                   "more than %d tbs with a send peer on chan %d; the runtimes allow %d per "
                   "channel (MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL)",
                   PEER_TBS_PER_CHANNEL, tb->chan, PEER_TBS_PER_CHANNEL);
    if (tb->recv >= 0 && ++c->recv_per_chan[tb->chan] == PEER_TBS_PER_CHANNEL + 1)
        hazard_add(c->out, limit_kind(c), r, t, -1,
                   "more than %d tbs with a recv peer on chan %d; the runtimes allow %d per "
                   "channel (MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL)",
                   PEER_TBS_PER_CHANNEL, tb->chan, PEER_TBS_PER_CHANNEL);
}

static void check_tb_header(ctx *c, int r, int t, const prog_tb *tb)
{
    const prog *p = c->p;
    if (tb->id != t)
        hazard_add(c->out, HZ_LIMIT, r, t, -1,
                   "tb at position %d has id %d; tb ids must be dense 0..%d in order",
                   t, tb->id, p->gpus[r].ntbs - 1);
    check_peer(c, r, t, "send", tb->send);
    check_peer(c, r, t, "recv", tb->recv);
    if (!chan_ok(p, tb->chan))
        hazard_add(c->out, HZ_CONNECTION, r, t, -1, "chan %d is outside 0..%d (nchannels %d)",
                   tb->chan, p->nchannels - 1, p->nchannels);
    if (tb->nsteps > c->lim->max_steps_per_tb)
        hazard_add(c->out, limit_kind(c), r, t, -1,
                   "%d steps exceed the runtime limit of %d steps per tb (MSCCL_MAX_NUM_STEPS): "
                   "%s refuse%s to load the file",
                   tb->nsteps, c->lim->max_steps_per_tb, refuser(c),
                   verb_s(c));
    count_peer_tb(c, r, t, tb);
}

/* ---- per step ----------------------------------------------------------- */

/* Chunks in buffer b of rank r as the runtime allocates it; 0 and *ok = 0
 * if b names no buffer. */
static int buf_len(const prog *p, int r, buf_kind b, int *ok)
{
    *ok = b == BUF_I || b == BUF_O || b == BUF_S;
    return *ok ? prog_buf_len(p, r, b) : 0;
}

static void check_operand(ctx *c, int r, int t, int k, const prog_step *st,
                          const char *role, buf_kind b, int off)
{
    int ok;
    int len = buf_len(c->p, r, b, &ok);
    if (!ok) {
        if (b == BUF_NONE)
            hazard_add(c->out, HZ_BOUNDS, r, t, k,
                       "type %s needs a %s buffer (i, o or s), got none",
                       step_type_name(st->type), role);
        else
            hazard_add(c->out, HZ_BOUNDS, r, t, k,
                       "type %s needs a %s buffer (i, o or s), got unknown buffer %d",
                       step_type_name(st->type), role, (int)b);
        return;
    }
    if (off < 0) {
        hazard_add(c->out, HZ_BOUNDS, r, t, k, "%soff %d is negative", role, off);
        return;
    }
    if (st->cnt >= 1 && (long long)off + st->cnt > len)
        hazard_add(c->out, HZ_BOUNDS, r, t, k,
                   "%soff+cnt = %lld exceeds the %s buffer (%d chunks)",
                   role, (long long)off + st->cnt, buf_name(b), len);
}

static void check_step_data(ctx *c, int r, int t, int k,
                            const prog_tb *tb, const prog_step *st)
{
    if (st->s != k)
        hazard_add(c->out, HZ_LIMIT, r, t, k,
                   "step at position %d is numbered s=%d; steps must be numbered 0..%d in order",
                   k, st->s, tb->nsteps - 1);
    if (st->type < 0 || st->type >= ST_COUNT) {
        hazard_add(c->out, HZ_BOUNDS, r, t, k, "unknown step type %d", (int)st->type);
        return;
    }
    if (st->type == ST_NOP)
        return;     /* a nop moves nothing: buffers and cnt are ignored */
    if (st->cnt < 1)
        hazard_add(c->out, HZ_BOUNDS, r, t, k, "cnt %d must be at least 1", st->cnt);
    else if (st->cnt >= c->lim->max_cnt)
        hazard_add(c->out, limit_kind(c), r, t, k,
                   "cnt %d is not below the runtime limit %d (MSCCL_MAX_COUNT: cnt <= %d): %s "
                   "refuse%s to load the file",
                   st->cnt, c->lim->max_cnt, c->lim->max_cnt - 1, refuser(c),
                   verb_s(c));
    int refused = check_offset_loader(c, r, t, k, st);
    check_offset_width(c, r, t, k, st);
    if (step_reads_src(st->type) && !(refused & 1))
        check_operand(c, r, t, k, st, "src", st->srcbuf, st->srcoff);
    if (step_writes_dst(st->type) && !(refused & 2))
        check_operand(c, r, t, k, st, "dst", st->dstbuf, st->dstoff);
    if (step_sends(st->type) && tb->send == -1)
        hazard_add(c->out, HZ_CONNECTION, r, t, k,
                   "type %s sends, but tb %d has send=-1", step_type_name(st->type), t);
    if (step_receives(st->type) && tb->recv == -1)
        hazard_add(c->out, HZ_CONNECTION, r, t, k,
                   "type %s receives, but tb %d has recv=-1", step_type_name(st->type), t);
}

static void report_unreleased(ctx *c, const prog_gpu *g, int r, int t, int k, int d, int s);

/* The dependency (depid, deps) of step k of tb t on rank r. */
static void check_step_dep(ctx *c, const prog_gpu *g, int r, int t, int k, const prog_step *st)
{
    int d = st->depid, s = st->deps;
    if (st->hasdep != 0 && st->hasdep != 1)
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k, "hasdep %d must be 0 or 1", st->hasdep);
    if (d < -1) {
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k, "depid %d is invalid (-1 = none)", d);
        return;
    }
    if (d == -1) {
        if (s != -1)
            hazard_add(c->out, HZ_DEPENDENCY, r, t, k, "deps %d given without a depid", s);
        return;
    }
    if (d > c->lim->max_depid) {
        int w = (int)(signed char)(unsigned char)d;
        char what[48];
        if (w < 0)
            snprintf(what, sizeof what, "nothing");
        else
            snprintf(what, sizeof what, "tb %d", w);
        hazard_add(c->out, HZ_LIMIT, r, t, k,
                   "depid %d exceeds the runtime limit %d: both runtimes load it but store depid "
                   "in 8 bits, so it wraps to %d and the step waits on %s", d,
                   c->lim->max_depid, w, what);
    }
    if (s < 0) {
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k, "depid %d given without deps (deps %d)", d, s);
        return;
    }
    if (d >= g->ntbs) {
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on tb %d step %d, but rank %d has only %d tbs", d, s, r, g->ntbs);
        return;
    }
    const prog_tb *dep = &g->tbs[d];
    if (s >= dep->nsteps) {
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on tb %d step %d, but tb %d has only %d steps", d, s, d, dep->nsteps);
        return;
    }
    if (d == t && s >= k) {
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on step %d of its own tb, which cannot run before it: the runtime hangs",
                   s);
        return;
    }
    if (c->rt[t].dropped[k])
        return;     /* a trailing nop: the runtimes never wait for it */
    int rel = rtdep_release(&c->rt[d], s);
    if (rel < 0)
        report_unreleased(c, g, r, t, k, d, s);
    else if (d == t && rel >= k)
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on step %d of its own tb, which the runtimes release only when step "
                   "%d (the first with hasdep=1 that counts as %d or more) ends, and that cannot "
                   "run before this one: the runtime hangs", s, rel, s);
}

/* Why nothing releases a wait on (tb d, value s) of rank r: the runtimes
 * wait until tb d publishes a value >= s (exec/rtdep.h). */
static void report_unreleased(ctx *c, const prog_gpu *g, int r, int t, int k, int d, int s)
{
    const prog_tb *dep = &g->tbs[d];
    int last_nop = -1, last = -1, bare = 0;
    for (int j = 0; j < dep->nsteps; j++) {
        const prog_step *x = &dep->steps[j];
        bare += x->type == ST_NOP && x->depid < 0;
        if (x->hasdep == 1 && x->type == ST_NOP)
            last_nop = j;
        else if (x->hasdep == 1)
            last = j;
    }
    if (last >= s)
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on tb %d step %d, but the runtimes count a nop only if it carries a "
                   "dependency: with its %d nop(s) without one, tb %d's last step with hasdep=1 "
                   "(step %d) counts as %d, below %d: the runtime hangs", d, s, bare, d, last,
                   c->rt[d].pos[last], s);
    else if (last_nop >= s)
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on tb %d step %d, but only a nop at or after it in tb %d has "
                   "hasdep=1 and the runtimes drop nops: the runtime hangs", d, s, d);
    else
        hazard_add(c->out, HZ_DEPENDENCY, r, t, k,
                   "depends on tb %d step %d, but neither that step nor a later one in tb %d "
                   "has hasdep=1: the runtime hangs", d, s, d);
}

/* The runtimes' view of every tb of g (exec/rtdep.h). */
static void index_rtdep(ctx *c, const prog_gpu *g)
{
    for (int t = 0; t < c->nrt; t++)
        rtdep_tb_free(&c->rt[t]);
    c->nrt = g->ntbs;
    for (int t = 0; t < g->ntbs; t++)
        rtdep_tb_of(&g->tbs[t], &c->rt[t]);
}

/* Re steps of tb t the runtimes fuse (exec/rtdep.h) into something other
 * than the file's steps: one reduction over the last one's cnt, a nop's
 * wait moved past the fused steps, more sources than the kernel holds. */
static void check_fusion(ctx *c, int r, int t, const prog_tb *tb)
{
    const rtdep_tb *D = &c->rt[t];
    for (int a = 0; a < tb->nsteps; a++) {
        if (tb->steps[a].type != ST_RE || D->chain[a] >= 0)
            continue;
        int z = a;
        for (int k = a + 1; k < tb->nsteps && (D->chain[k] == a || tb->steps[k].type == ST_NOP);
             k++)
            if (D->chain[k] == a)
                z = k;
        if (z == a)
            continue;
        int cnt = tb->steps[z].cnt, parts = 0;
        for (int k = a; k <= z; k++) {
            const prog_step *x = &tb->steps[k];
            if (x->type == ST_NOP) {
                if (x->depid >= 0)
                    hazard_add(c->out, HZ_FUSION, r, t, k,
                               "the runtimes fuse re steps %d to %d (same dst, same src buffer, "
                               "no depid of their own) into one reduction, and this nop's wait "
                               "(tb %d step %d) then comes only after it", a, z, x->depid,
                               x->deps);
                continue;
            }
            parts++;
            if (x->cnt != cnt)
                hazard_add(c->out, HZ_FUSION, r, t, k,
                           "the runtimes fuse re steps %d to %d (same dst, same src buffer, no "
                           "depid of their own) into one reduction over the last one's cnt %d, "
                           "so this step's cnt %d is not what they reduce", a, z, cnt, x->cnt);
        }
        if (parts > RTDEP_MAX_FUSION)
            hazard_add(c->out, HZ_FUSION, r, t, a,
                       "the runtimes fuse re steps %d to %d into one reduction of %d sources, "
                       "more than the %d their kernel holds", a, z, parts, RTDEP_MAX_FUSION);
    }
}

static void check_tb_steps(ctx *c, const prog_gpu *g, int r, int t, const prog_tb *tb)
{
    int pending = 0, pending_from = -1;   /* nops with a dependency not yet attached */
    for (int k = 0; k < tb->nsteps; k++) {
        const prog_step *st = &tb->steps[k];
        check_step_data(c, r, t, k, tb, st);
        check_step_dep(c, g, r, t, k, st);
        if (st->type == ST_NOP) {
            if (st->depid >= 0 && pending++ == 0)
                pending_from = k;
            continue;
        }
        if (c->rt[t].chain[k] >= 0)
            continue;       /* fused into the re before it: check_fusion's */
        if (pending > 0 && st->depid < 0)
            hazard_add(c->out, judge(c)->has_loader ? HZ_LOAD : HZ_DEPENDENCY, r, t, k,
                       "follows %d nop(s) with dependencies (from step %d) but has depid=-1: %s "
                       "refuse%s a nop chain whose next step has no dependency of its own",
                       pending, pending_from, refuser(c),
                       verb_s(c));
        pending = 0;
    }
    check_fusion(c, r, t, tb);
}

static void check_gpu(ctx *c, int r)
{
    const prog_gpu *g = &c->p->gpus[r];
    memset(c->send_per_chan, 0, (size_t)c->nchan_counted * sizeof *c->send_per_chan);
    memset(c->recv_per_chan, 0, (size_t)c->nchan_counted * sizeof *c->recv_per_chan);
    index_rtdep(c, g);
    for (int t = 0; t < g->ntbs; t++) {
        check_tb_header(c, r, t, &g->tbs[t]);
        check_tb_steps(c, g, r, t, &g->tbs[t]);
    }
}

/* ---- per connection ----------------------------------------------------- */

/* One end of a connection (chan, src -> dst): the tb on src that sends to
 * dst, or the tb on dst that receives from src. */
typedef struct {
    int src, dst, chan, tb;
} conn_end;

static int cmp_key(const conn_end *a, const conn_end *b)
{
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    if (a->chan != b->chan) return a->chan < b->chan ? -1 : 1;
    return 0;
}

static int cmp_end(const void *pa, const void *pb)
{
    const conn_end *a = pa, *b = pb;
    int k = cmp_key(a, b);
    if (k)
        return k;
    return (a->tb > b->tb) - (a->tb < b->tb);
}

/* Connection ends of every tb with a usable peer and channel. */
static void collect_ends(const prog *p, conn_end **sends, int *ns, conn_end **recvs, int *nr)
{
    size_t total = 0;
    for (int r = 0; r < p->ngpu; r++)
        total += (size_t)p->gpus[r].ntbs;
    *sends = xcalloc(total, sizeof **sends);
    *recvs = xcalloc(total, sizeof **recvs);
    *ns = *nr = 0;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++) {
            const prog_tb *tb = &g->tbs[t];
            if (!chan_ok(p, tb->chan))
                continue;
            if (peer_ok(p, r, tb->send) && tb->send < p->ngpu)
                (*sends)[(*ns)++] = (conn_end){r, tb->send, tb->chan, t};
            if (peer_ok(p, r, tb->recv) && tb->recv < p->ngpu)
                (*recvs)[(*nr)++] = (conn_end){tb->recv, r, tb->chan, t};
        }
    }
    qsort(*sends, (size_t)*ns, sizeof **sends, cmp_end);
    qsort(*recvs, (size_t)*nr, sizeof **recvs, cmp_end);
}

/* Report second and later tbs of a rank on one (chan, peer); return the
 * end of the group starting at i. */
static int group_end(ctx *c, const conn_end *v, int n, int i, int sending)
{
    int j = i + 1;
    for (; j < n && cmp_key(&v[i], &v[j]) == 0; j++) {
        if (sending)
            hazard_add(c->out, HZ_CONNECTION, v[j].src, v[j].tb, -1,
                       "tb %d and tb %d both send to rank %d on chan %d; a rank may have one tb "
                       "per (chan, send peer)", v[i].tb, v[j].tb, v[j].dst, v[j].chan);
        else
            hazard_add(c->out, HZ_CONNECTION, v[j].dst, v[j].tb, -1,
                       "tb %d and tb %d both receive from rank %d on chan %d; a rank may have one "
                       "tb per (chan, recv peer)", v[i].tb, v[j].tb, v[j].src, v[j].chan);
    }
    return j;
}

/* Pair the k-th sending step of a with the k-th receiving step of b. */
static void pair_steps(ctx *c, const conn_end *se, const conn_end *re)
{
    const prog_tb *a = &c->p->gpus[se->src].tbs[se->tb];
    const prog_tb *b = &c->p->gpus[re->dst].tbs[re->tb];
    int i = 0, j = 0, k = 0, nmis = 0, mi = -1, mj = -1, mk = -1;
    for (;;) {
        while (i < a->nsteps && !step_sends(a->steps[i].type))
            i++;
        while (j < b->nsteps && !step_receives(b->steps[j].type))
            j++;
        if (i >= a->nsteps || j >= b->nsteps)
            break;
        if (a->steps[i].cnt != b->steps[j].cnt && nmis++ == 0) {
            mi = i;
            mj = j;
            mk = k;
        }
        i++, j++, k++;
    }
    int nsend = k, nrecv = k, extra_i = -1, extra_j = -1;
    for (; i < a->nsteps; i++)
        if (step_sends(a->steps[i].type) && nsend++ == k)
            extra_i = i;
    for (; j < b->nsteps; j++)
        if (step_receives(b->steps[j].type) && nrecv++ == k)
            extra_j = j;

    if (nsend > nrecv)
        hazard_add(c->out, HZ_PAIRING, se->src, se->tb, extra_i,
                   "connection chan %d rank %d -> rank %d: %d sends but %d receives (rank %d tb "
                   "%d sends, rank %d tb %d receives); this send has no matching receive",
                   se->chan, se->src, se->dst, nsend, nrecv, se->src, se->tb, re->dst, re->tb);
    else if (nrecv > nsend)
        hazard_add(c->out, HZ_PAIRING, re->dst, re->tb, extra_j,
                   "connection chan %d rank %d -> rank %d: %d sends but %d receives (rank %d tb "
                   "%d sends, rank %d tb %d receives); this receive has no matching send",
                   se->chan, se->src, se->dst, nsend, nrecv, se->src, se->tb, re->dst, re->tb);
    if (nmis > 0) {
        char more[64] = "";
        if (nmis > 1)
            snprintf(more, sizeof more, "; %d of %d pairs disagree", nmis, k);
        hazard_add(c->out, HZ_PAIRING, se->src, se->tb, mi,
                   "connection chan %d rank %d -> rank %d: send #%d (rank %d tb %d step %d) has "
                   "cnt %d but receive #%d (rank %d tb %d step %d) has cnt %d%s",
                   se->chan, se->src, se->dst, mk + 1, se->src, se->tb, mi, a->steps[mi].cnt,
                   mk + 1,
                   re->dst, re->tb, mj, b->steps[mj].cnt, more);
    }
}

static void check_connections(ctx *c)
{
    conn_end *sv, *rv;
    int ns, nr;
    collect_ends(c->p, &sv, &ns, &rv, &nr);
    int i = 0, j = 0;
    while (i < ns || j < nr) {
        int cmp = i >= ns ? 1 : j >= nr ? -1 : cmp_key(&sv[i], &rv[j]);
        if (cmp < 0) {
            const conn_end *e = &sv[i];
            hazard_add(c->out, HZ_CONNECTION, e->src, e->tb, -1,
                       "tb %d sends to rank %d on chan %d, but rank %d has no tb receiving from "
                       "rank %d on chan %d", e->tb, e->dst, e->chan, e->dst, e->src, e->chan);
            i = group_end(c, sv, ns, i, 1);
        } else if (cmp > 0) {
            const conn_end *e = &rv[j];
            hazard_add(c->out, HZ_CONNECTION, e->dst, e->tb, -1,
                       "tb %d receives from rank %d on chan %d, but rank %d has no tb sending to "
                       "rank %d on chan %d", e->tb, e->src, e->chan, e->src, e->dst, e->chan);
            j = group_end(c, rv, nr, j, 0);
        } else {
            int i1 = group_end(c, sv, ns, i, 1);
            int j1 = group_end(c, rv, nr, j, 0);
            /* With duplicate tbs the pairing is ambiguous; the duplicates
             * are already reported. */
            if (i1 - i == 1 && j1 - j == 1)
                pair_steps(c, &sv[i], &rv[j]);
            i = i1;
            j = j1;
        }
    }
    free(sv);
    free(rv);
}

/* ---- entry -------------------------------------------------------------- */

int check_program(const prog *p, const check_limits *lim, hazard_list *out)
{
    int before = out->n;
    ctx c = {.p = p, .lim = lim, .out = out};
    int maxtbs = 0;
    for (int r = 0; r < p->ngpu; r++)
        if (p->gpus[r].ntbs > maxtbs)
            maxtbs = p->gpus[r].ntbs;
    c.rt = xcalloc((size_t)maxtbs + 1, sizeof *c.rt);
    /* Per-channel counters only for a sane channel count. */
    c.nchan_counted = (p->nchannels >= 1 && p->nchannels <= 65536) ? p->nchannels : 0;
    c.send_per_chan = xcalloc((size_t)c.nchan_counted, sizeof *c.send_per_chan);
    c.recv_per_chan = xcalloc((size_t)c.nchan_counted, sizeof *c.recv_per_chan);

    check_algo(&c);
    check_algo_loader(&c);
    check_syntax_loader(&c);
    check_gpu_shapes(&c);
    for (int r = 0; r < p->ngpu; r++) {
        check_counts_loader(&c, r);
        check_gpu(&c, r);
    }
    check_connections(&c);

    for (int t = 0; t < c.nrt; t++)
        rtdep_tb_free(&c.rt[t]);
    free(c.rt);
    free(c.send_per_chan);
    free(c.recv_per_chan);
    return out->n - before;
}
