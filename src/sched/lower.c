/* lower.c — abstract algorithm -> MSCCL program (contract and choices in lower.h).
 *
 * The work happens in passes over plain arrays:
 *   1. check the algorithm and derive the collective's shape (here);
 *   2. group sends into transfers (same src, dst, group >= 0), colour the
 *      transfers of each (src, dst) so that overlapping ones get different
 *      channels, and name each (src, dst, colour) a connection
 *      (lower_xfer.c);
 *   3. order every send event and receive event causally (Kahn's algorithm
 *      over the data-flow, connection-order and reduction-chain edges,
 *      earliest time first), which fixes each rank's operation order
 *      (lower_xfer.c);
 *   4. walk the events in that order, tracking where every chunk lives on
 *      every rank, splitting transfers into contiguous runs (or staging
 *      them through contiguous scratch with local copies) and allocating
 *      scratch: each run becomes one send operation and one receive
 *      operation (lower_place.c);
 *   5. chain each rank's sends through one switch out port or NIC in
 *      their order (the executor serves a port by when it is asked, so the
 *      order must be made explicit across tbs), then lay the operations out
 *      in threadblocks (slicing connections that are too long, merging
 *      receive and send tbs, fusing rcs/rrcs, deriving dependencies per
 *      chunk slot and along the chains), retrying with shorter slices until
 *      every tb fits the runtime's step limit (lower_layout.c);
 *   6. write the program, once per instance (lower_emit.c), and record
 *      its time by the cost model as its prediction (here, sched/ptime).
 * Each pass owns one part of the state (lower_int.h says which part each
 * reads and writes); this file checks the inputs, runs the passes in order
 * and frees what they made. */
#include "lower_int.h"
#include "ptime.h"
#include "../util/tcassert.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void lower_opts_default(lower_opts *o)
{
    memset(o, 0, sizeof *o);
    o->instances = 1;
    o->runtime = RT_MSCCL;
}

/* Everything the passes made (the inputs are the caller's). */
static void ctx_free(lctx *L)
{
    free(L->xf.x);
    free(L->xf.mem);
    free(L->xf.xfer_of);
    free(L->xf.conns);
    free(L->ops.ops);
    free(L->ops.scount);
    free(L->ops.rank_ops);
    free(L->ops.rank_first);
    lower_layout_free(&L->lay);
}

/* ------------------------------------------------------------ 1. checks and shape */

static int check_opts(lin *in, tc_err *err)
{
    const lower_opts *o = in->o;
    in->k = o->instances <= 0 ? 1 : o->instances;
    if (in->k > MAX_INSTANCES)
        return tc_err_set(err, TC_INPUT, "instances: at most %d (one channel each), got %d",
                          MAX_INSTANCES, in->k);
    int steps = runtime_get(o->runtime)->max_steps_per_tb;
    in->max_steps = steps > 0 ? steps : INT_MAX / 4;
    if (o->size_bytes < 0)
        return tc_err_set(err, TC_INPUT, "size: must not be negative, got %lld", o->size_bytes);
    if (o->proto && strcmp(o->proto, "Simple") != 0 && strcmp(o->proto, "LL") != 0 &&
        strcmp(o->proto, "LL128") != 0)
        return tc_err_set(err, TC_INPUT, "proto: \"%s\" is not Simple, LL or LL128", o->proto);
    return TC_OK;
}

static int check_shape(lin *in, tc_err *err)
{
    const algo *a = in->a;
    shape *sh = &in->sh;
    if (a->coll < 0 || a->coll >= COLL_COUNT)
        return tc_err_set(err, TC_INPUT, "algorithm: unknown collective %d", (int)a->coll);
    if (a->nranks < 1)
        return tc_err_set(err, TC_INPUT, "algorithm: needs at least one rank, got %d", a->nranks);
    if (a->chunks_per_rank < 1)
        return tc_err_set(err, TC_INPUT, "algorithm: chunks_per_rank must be at least 1, got %d",
                          a->chunks_per_rank);
    if (in->t && a->nranks > in->t->nranks)
        return tc_err_set(err, TC_INPUT, "algorithm has %d ranks but topology %s has %d",
                          a->nranks, in->t->name ? in->t->name : "(unnamed)", in->t->nranks);
    sh->coll = a->coll;
    sh->n = a->nranks;
    long long C = a->coll == COLL_ALLGATHER ? (long long)a->nranks * a->chunks_per_rank
                                            : a->chunks_per_rank;
    if (C * in->k > INT_MAX / 4)
        return tc_err_set(err, TC_INPUT, "algorithm: %lld chunks per loop is too many", C * in->k);
    sh->C = (int)C;
    tc_err e;
    if (coll_shape(a->coll, sh->n, sh->C, &sh->in, &sh->out, &e) != TC_OK)
        return tc_err_set(err, TC_INPUT, "algorithm: %s (chunks_per_rank %d)", e.msg,
                          a->chunks_per_rank);
    sh->per = sh->C / sh->n;
    sh->blk = a->coll == COLL_ALLREDUCE ? sh->C : sh->per;
    sh->red = coll_is_reduction(a->coll);
    sh->nkeys = sh->red ? sh->in : (long long)sh->n * sh->in;
    return TC_OK;
}

static int check_send(const lin *in, int i, tc_err *err)
{
    const algo_send *s = &in->a->sends[i];
    const shape *sh = &in->sh;
    int n = sh->n;
    if (s->src < 0 || s->src >= n || s->dst < 0 || s->dst >= n)
        return tc_err_set(err, TC_INPUT, "send #%d: ranks %d -> %d outside 0..%d", i, s->src,
                          s->dst, n - 1);
    if (s->src == s->dst)
        return tc_err_set(err, TC_INPUT, "send #%d: rank %d sends to itself", i, s->src);
    if (!sh->red && (s->origin < 0 || s->origin >= n))
        return tc_err_set(err, TC_INPUT, "send #%d: origin %d outside 0..%d", i, s->origin, n - 1);
    if (s->index < 0 || s->index >= sh->in)
        return tc_err_set(err, TC_INPUT, "send #%d: chunk index %d outside 0..%d", i, s->index,
                          sh->in - 1);
    if (!isfinite(s->t_send) || !isfinite(s->t_arrive))
        return tc_err_set(err, TC_INPUT, "send #%d: times must be finite", i);
    if (s->t_arrive < s->t_send - tol_at(s->t_send))
        return tc_err_set(err, TC_INPUT, "send #%d: arrives at %g us before it is sent at %g us",
                          i, s->t_arrive, s->t_send);
    if (s->reduce && !sh->red)
        return tc_err_set(err, TC_INPUT, "send #%d: reduce=1 in %s, which does not reduce", i,
                          coll_name(sh->coll));
    if (!s->reduce && sh->coll == COLL_REDUCESCATTER)
        return tc_err_set(err, TC_INPUT,
                          "send #%d: reduce=0 in reducescatter: every hop must add its partial "
                          "sum (a plain relay of a partial is not supported)", i);
    if (in->t) {
        topo_route r = topo_route_of(in->t, s->src, s->dst);
        if (r.kind == ROUTE_NONE)
            return tc_err_set(err, TC_INPUT, "send #%d: no route from rank %d to rank %d in "
                              "topology %s", i, s->src, s->dst,
                              in->t->name ? in->t->name : "(unnamed)");
    }
    return TC_OK;
}

/* ------------------------------------------------------------ entry */

/* The prediction a program carries is the time of the program as written
 * (sched/ptime), in the default timing (the runtimes' tile passes on a GPU
 * topology, model/variant.h): the algorithm's own time knows nothing of the runs,
 * staging copies and dependencies added here.  Kept when the program
 * cannot be timed (no topology or size; a program that cannot finish is
 * the executor's to report). */
static void predict(prog *p, const topo *t)
{
    double us;
    if (t && p->size_bytes > 0 && ptime_run_as(p, t, p->size_bytes, -1, &us, NULL) == TC_OK)
        p->predicted_us = us;
}

/* TC_INPUT when a rank of p needs more XML elements than the runtimes'
 * parser stores: they would refuse the file. */
static int refuse_unparsable(const prog *p, runtime rt, tc_err *err)
{
    int r, most = runtime_get(rt)->parser_nodes;
    long long nodes = prog_parser_nodes(p, &r);
    if (most == 0 || nodes <= most)
        return TC_OK;
    return tc_err_set(err, TC_INPUT,
                      "rank %d needs %lld XML elements (1 <algo>, %d <gpu>, its %d tbs and their "
                      "steps); the runtimes' parser holds %d, so both would refuse the file "
                      "(--target unlimited writes it for simulation)",
                      r, nodes, p->ngpu, p->gpus[r].ntbs, most);
}

/* TC_INPUT when a step of p addresses a chunk beyond what the runtimes'
 * 16-bit offsets hold (PROG_MAX_OFFSET): they would load the file and
 * address memory before the buffer. */
static int refuse_wide_offsets(const prog *p, tc_err *err)
{
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int k = 0; k < p->gpus[r].tbs[t].nsteps; k++) {
                const prog_step *x = &p->gpus[r].tbs[t].steps[k];
                int off = x->srcoff > x->dstoff ? x->srcoff : x->dstoff;
                if (off > PROG_MAX_OFFSET)
                    return tc_err_set(err, TC_INPUT,
                                      "rank %d addresses chunk %d of a buffer of %d chunks per "
                                      "loop; the runtimes store offsets in 16 bits (at most %d), "
                                      "so the file would address memory outside its buffers "
                                      "(fewer chunks per rank, or --target unlimited to write it "
                                      "for simulation)", r, off, p->nchunksperloop,
                                      PROG_MAX_OFFSET);
            }
    return TC_OK;
}

/* TC_INPUT when a rank of p has more tbs than rt's loader takes (legacy
 * 216): lower_check_limits bounds the tbs from below before the lowering,
 * but the lowering's own count (a channel per overlapping send, a tree per
 * channel, instances) can pass it; the runtime would refuse the file
 * (DGX A100 x4 ReduceScatter at 1 GiB, the packed trees at chunkup 4 with a
 * tree per channel: 247 tbs a rank). */
static int refuse_many_tbs(const prog *p, runtime rt, tc_err *err)
{
    const runtime_info *ri = runtime_get(rt);
    if (ri->max_tbs_per_gpu <= 0)
        return TC_OK;
    for (int r = 0; r < p->ngpu; r++)
        if (p->gpus[r].ntbs > ri->max_tbs_per_gpu)
            return tc_err_set(err, TC_INPUT,
                              "rank %d needs %d tbs as lowered (%d channels); %s allows %d per "
                              "GPU and would refuse the file (fewer instances, or --target "
                              "unlimited to write it for simulation)", r, p->gpus[r].ntbs,
                              p->nchannels, ri->who, ri->max_tbs_per_gpu);
    return TC_OK;
}

prog *lower_algo(const algo *a, const topo *t, const lower_opts *o, tc_err *err)
{
    lower_opts dflt;
    if (!o) {
        lower_opts_default(&dflt);
        o = &dflt;
    }
    if (!a) {
        tc_err_set(err, TC_INPUT, "lowering needs an algorithm");
        return NULL;
    }
    lctx L;
    memset(&L, 0, sizeof L);
    lin *in = &L.in;
    in->a = a;
    in->t = t;
    in->o = o;
    int rc = check_opts(in, err);
    if (rc == TC_OK)
        rc = check_shape(in, err);
    if (rc == TC_OK && o->size_bytes > 0 && o->size_bytes % ((long long)in->sh.C * in->k) != 0)
        rc = tc_err_set(err, TC_INPUT, "size: %lld bytes is not a multiple of nchunksperloop %d",
                        o->size_bytes, in->sh.C * in->k);
    for (int i = 0; i < a->nsends && rc == TC_OK; i++)
        rc = check_send(in, i, err);
    if (rc != TC_OK)
        return NULL;
    if (o->notes)
        memset(o->notes, 0, (size_t)a->nsends * sizeof *o->notes);
    int *order = NULL;
    prog *p = NULL;
    rc = lower_order(in, &L.xf, &order, err);
    if (rc == TC_OK) {
        lower_place(in, &L.xf, order, &L.ops);
        lower_chain(in, &L.xf, &L.ops);
        rc = lower_layout(in, &L.xf, &L.ops, &L.lay, err);
    }
    if (rc == TC_OK)
        p = lower_emit(in, &L.xf, &L.ops, &L.lay, err);
    if (p && runtime_get(o->runtime)->has_loader &&
        (refuse_unparsable(p, o->runtime, err) != TC_OK || refuse_wide_offsets(p, err) != TC_OK ||
         refuse_many_tbs(p, o->runtime, err) != TC_OK)) {
        prog_free(p);
        p = NULL;
    }
    TC_ASSERT(!p || prog_sane(p));
    if (p)
        predict(p, t);
    free(order);
    ctx_free(&L);
    return p;
}
