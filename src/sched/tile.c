/* tile.c — a program unrolled into the runtimes' passes (contract in
 * tile.h).
 *
 * Per tb, an operation table: step s of the original becomes ops(s)
 * operations per pass (cnt of them when a chunk takes several passes, else
 * ceil(cnt / max_count); a nop or a count of 0 stays one), at index
 * pass * per_pass + first[s] + k.  Dependencies and hasdep are mapped
 * through that table, so the unrolled program needs no search. */
#include "tile.h"

#include <stdio.h>
#include <stdlib.h>
#include "../model/cost.h"
#include "../util/mem.h"
#include "../util/tcassert.h"

/* The most operations an unrolled program may hold (about 3 GB of steps). */
#define TILE_MAX_OPS (1LL << 26)

static int ops_of(const prog_step *x, int passes, int mc)
{
    if (x->type == ST_NOP || x->cnt <= 0)
        return 1;
    return passes > 1 ? x->cnt : (x->cnt + mc - 1) / mc;
}

/* Offset of operation k of a step at offset off in pass `pass`: a
 * sub-chunk when chunks take several passes, else a chunk. */
static int op_off(int off, int k, int pass, int passes, int mc)
{
    if (off < 0)
        return off;
    return passes > 1 ? (off + k) * passes + pass : off + k * mc;
}

static int scaled(int chunks, int passes)
{
    return chunks > 0 ? chunks * passes : chunks;
}

/* first[t][s]: index within a pass of step s's first operation of tb t;
 * first[t][nsteps] the tb's operations per pass. */
static int **op_tables(const prog_gpu *g, int passes, int mc)
{
    int **first = xcalloc((size_t)g->ntbs + 1, sizeof *first);
    for (int t = 0; t < g->ntbs; t++) {
        const prog_tb *tb = &g->tbs[t];
        first[t] = xmalloc(((size_t)tb->nsteps + 1) * sizeof **first);
        first[t][0] = 0;
        for (int s = 0; s < tb->nsteps; s++)
            first[t][s + 1] = first[t][s] + ops_of(&tb->steps[s], passes, mc);
    }
    return first;
}

static void unroll_rank(const prog_gpu *g, prog_gpu *h, int passes, int mc, tile_info *info)
{
    int **first = op_tables(g, passes, mc);
    for (int t = 0; t < g->ntbs; t++) {
        const prog_tb *tb = &g->tbs[t];
        prog_tb *u = prog_add_tb(h, tb->send, tb->recv, tb->chan);
        u->line = tb->line;
        for (int pass = 0; pass < passes; pass++)
            for (int s = 0; s < tb->nsteps; s++) {
                const prog_step *x = &tb->steps[s];
                int n = ops_of(x, passes, mc);
                for (int k = 0; k < n; k++) {
                    int cnt = x->type == ST_NOP || x->cnt <= 0 ? x->cnt
                              : passes > 1 ? 1 : (x->cnt - k * mc < mc ? x->cnt - k * mc : mc);
                    int depid = -1, deps = -1;
                    if (k == 0 && x->depid >= 0 && x->deps >= 0 && x->depid < g->ntbs &&
                        x->deps < g->tbs[x->depid].nsteps) {
                        int per = first[x->depid][g->tbs[x->depid].nsteps];
                        depid = x->depid;
                        deps = pass * per + first[x->depid][x->deps + 1] - 1;
                    }
                    prog_step *y = prog_add_step(u, x->type, x->srcbuf,
                                                 op_off(x->srcoff, k, pass, passes, mc),
                                                 x->dstbuf,
                                                 op_off(x->dstoff, k, pass, passes, mc), cnt,
                                                 depid, deps);
                    y->hasdep = x->hasdep && k == n - 1;
                    y->line = x->line;
                    info->ops++;
                }
            }
        info->steps += tb->nsteps;
    }
    for (int t = 0; t < g->ntbs; t++)
        free(first[t]);
    free(first);
}

int tile_step_ops(const prog_step *x, int passes, int max_count)
{
    return ops_of(x, passes, max_count);
}

/* The shape of p at size_bytes into *in: chunk and tile bytes, passes,
 * the runtime's own pass count (the chunk over the tile, rounded up) and
 * chunks per operation; ops and steps are left to the unrolling. */
/* *tile: the tile of p's protocol (Simple when it names none); 0 when the
 * protocol is unknown. */
static int proto_tile(const prog *p, long long *tile)
{
    cost_proto proto = COST_SIMPLE;
    if (p->proto[0] && !cost_proto_parse(p->proto, &proto))
        return 0;
    *tile = cost_proto_tile_bytes(proto);
    return 1;
}

static int shape(const prog *p, long long size_bytes, tile_info *in, tc_err *err)
{
    int C = p->nchunksperloop;
    if (C < 1 || size_bytes < 1 || size_bytes % C != 0)
        return tc_err_set(err, TC_INPUT, "tiles: size %lld bytes is not a multiple of the %d "
                          "chunks per loop", size_bytes, C);
    long long tile;
    if (!proto_tile(p, &tile))
        return tc_err_set(err, TC_INPUT, "tiles: unknown protocol '%s'", p->proto);
    long long chunk = size_bytes / C;
    long long passes = (chunk + tile - 1) / tile;
    long long mc = tile / chunk;
    if (mc < 1)
        mc = 1;
    if (mc > 71)
        mc = 71;                    /* MSCCL_MAX_COUNT: a step's cnt never exceeds it */
    in->runtime_passes = (int)passes;
    if (passes > 1 && chunk % 4 != 0)
        return tc_err_set(err, TC_INPUT, "tiles: a chunk of %lld bytes is not whole 4-byte "
                          "elements, so it does not split into tiles", chunk);
    /* equal tiles of whole elements: the runtime's count, or the next
     * count that splits the chunk so (its last tile is the remainder) */
    while (passes > 1 && (chunk % passes != 0 || chunk / passes % 4 != 0))
        passes++;
    if ((long long)C * passes > (1LL << 30))
        return tc_err_set(err, TC_INPUT, "tiles: %d chunks in %lld passes is too many "
                          "sub-chunks", C, passes);
    in->chunk_bytes = chunk;
    in->tile_bytes = tile;
    in->passes = (int)passes;
    in->max_count = (int)mc;
    return TC_OK;
}

long long tile_round_size(const prog *p, long long size_bytes)
{
    long long C = p->nchunksperloop > 0 ? p->nchunksperloop : 1;
    long long tile;
    if (!proto_tile(p, &tile))      /* shape() says so; Simple's tile meanwhile */
        tile = cost_proto_tile_bytes(COST_SIMPLE);
    long long chunk = (size_bytes + 4 * C - 1) / (4 * C) * 4;
    if (chunk < 4)
        chunk = 4;
    for (;;) {      /* the pass count only grows with the chunk: this ends */
        long long passes = (chunk + tile - 1) / tile, unit = 4 * passes;
        if (passes <= 1 || chunk % unit == 0)
            return chunk * C;
        chunk = (chunk + unit - 1) / unit * unit;
    }
}

int tile_shape(const prog *p, long long size_bytes, int *passes, int *max_count, tc_err *err)
{
    tile_info in = {0};
    if (shape(p, size_bytes, &in, err) != TC_OK)
        return TC_INPUT;
    *passes = in.passes;
    *max_count = in.max_count;
    return TC_OK;
}

prog *tile_prog(const prog *p, long long size_bytes, tile_info *info, tc_err *err)
{
    tile_info local;
    tile_info *in = info ? info : &local;
    *in = (tile_info){0};
    if (shape(p, size_bytes, in, err) != TC_OK)
        return NULL;
    int C = p->nchunksperloop;
    long long passes = in->passes, mc = in->max_count;
    /* the unrolled program's size, before building it */
    long long ops = 0;
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++)
                ops += ops_of(&p->gpus[r].tbs[t].steps[s], passes > 1 ? 2 : 1, (int)mc);
    if (ops > TILE_MAX_OPS / passes) {
        long long near = tile_round_size(p, size_bytes);
        char hint[96] = "";
        if (passes > in->runtime_passes && near != size_bytes)
            snprintf(hint, sizeof hint, " (or at %lld B, whose chunks split into the runtime's "
                     "own passes)", near);
        tc_err_set(err, TC_INPUT, "tiles: %lld passes of %lld operations each unroll to more than "
                   "the %lld operations the executor runs in passes; time it without --tiles or "
                   "at a smaller size%s", passes, ops, TILE_MAX_OPS, hint);
        return NULL;
    }
    prog *q = prog_new(p->name, p->coll, p->ngpus, C * (int)passes);
    if (!q) {
        tc_err_set(err, TC_INPUT, "tiles: out of memory");
        return NULL;
    }
    snprintf(q->proto, sizeof q->proto, "%s", p->proto);
    q->nchannels = p->nchannels;
    q->inplace = p->inplace;
    q->outofplace = p->outofplace;
    q->min_bytes = p->min_bytes;
    q->max_bytes = p->max_bytes;
    q->size_bytes = size_bytes;
    q->target = p->target;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        prog_gpu *h = prog_add_gpu(q, scaled(g->i_chunks, in->passes),
                                   scaled(g->o_chunks, in->passes),
                                   scaled(g->s_chunks, in->passes));
        h->line = g->line;
        unroll_rank(g, h, in->passes, in->max_count, in);
    }
    return q;
}

int tile_needed(const prog *p, long long size_bytes)
{
    cost_proto proto = COST_SIMPLE;
    int C = p->nchunksperloop;
    if (C < 1 || size_bytes < 1 || size_bytes % C != 0 ||
        (p->proto[0] && !cost_proto_parse(p->proto, &proto)))
        return 1;
    long long chunk = size_bytes / C, tile = cost_proto_tile_bytes(proto);
    if (chunk > tile)
        return 1;
    long long mc = tile / chunk > 71 ? 71 : tile / chunk;
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++)
                if (ops_of(&p->gpus[r].tbs[t].steps[s], 1, (int)mc) > 1)
                    return 1;
    return 0;
}

long long *tile_step_map(const prog *p, const tile_info *info)
{
    long long *map = xmalloc(sizeof *map * (size_t)(info->ops > 0 ? info->ops : 1));
    long long op = 0, step = 0;
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            const prog_tb *tb = &p->gpus[r].tbs[t];
            for (int pass = 0; pass < info->passes; pass++)
                for (int s = 0; s < tb->nsteps; s++)
                    for (int k = ops_of(&tb->steps[s], info->passes, info->max_count); k > 0; k--)
                        if (op < info->ops)
                            map[op++] = step + s;
            step += tb->nsteps;
        }
    TC_ASSERT(op == info->ops);
    return map;
}
