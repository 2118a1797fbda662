/* tile.h — an MSCCL program as the runtimes' interpreter runs it.
 *
 * Both MSCCL runtimes (microsoft/msccl's mscclFunction, msccl-executor-
 * nccl's mscclRunInterpreter) do not move a chunk in one piece: they run
 * the whole program once per PASS, each pass on the next tile of every
 * chunk (cost_proto_tile_bytes: 2 MiB under Simple), with the dependency
 * flags carrying the pass; and within a pass a step of cnt chunks goes as
 * ceil(cnt / max_count) operations, max_count = max(1, tile / chunk)
 * (mscclSetupCount's maxAllowedCount), so 1 whenever a chunk takes
 * several passes.
 *
 * tile_prog() writes that as a plain program the executor runs as it runs
 * any: chunk c's tile k becomes sub-chunk c * passes + k of a chunk
 * `passes` times smaller (the bytes stay where they were, so the data
 * check is unchanged), each pass repeats every tb's steps on its tiles,
 * one step per operation, and a step's dependency points at the last
 * operation of the step it names in the same pass.  The runtime's last
 * tile is the remainder of the chunk; here the tiles are equal: chunk /
 * passes, the runtime's own when the chunk is a multiple of the tile (so
 * always under Simple and LL at power-of-two sizes), else the next pass
 * count that splits the chunk into equal whole 4-byte elements (LL128's
 * tile of 576000 bytes: 8 MiB chunks take 15 passes in the runtime, 16
 * here; runtime_passes says which).  Not the runtime's file: its step
 * counts are beyond the loaders' limits, which are checked on the
 * original. */
#ifndef TC_TILE_H
#define TC_TILE_H

#include "program.h"

typedef struct {
    long long chunk_bytes;  /* size_bytes / nchunksperloop */
    long long tile_bytes;   /* the protocol's tile */
    int passes;             /* equal tiles of chunk / passes bytes */
    int runtime_passes;     /* the runtime's ceil(chunk / tile) (= passes, or
                               fewer where equal tiles need more) */
    int max_count;          /* chunks per operation within a pass */
    int ops;                /* operations in all, over every rank's tbs */
    int steps;              /* the original's steps */
} tile_info;

/* p at size_bytes (the larger per-rank buffer) as the runtimes run it,
 * and *info (may be NULL).  TC_INPUT (NULL, err set) when the size is not
 * a multiple of nchunksperloop, or a chunk that takes several passes is
 * not whole 4-byte elements. */
prog *tile_prog(const prog *p, long long size_bytes, tile_info *info, tc_err *err);

/* The passes (equal tiles) and chunks per operation within a pass that
 * tile_prog(p, size_bytes) unrolls with, without unrolling: TC_OK, or
 * TC_INPUT (err set) where tile_prog would refuse the size. */
int tile_shape(const prog *p, long long size_bytes, int *passes, int *max_count, tc_err *err);

/* The smallest size >= size_bytes at which tile_prog(p) runs the
 * runtime's own pass count: whole 4-byte elements in each chunk, and a
 * chunk that takes P passes a multiple of P elements.  Elsewhere the equal
 * tiles may need far more passes than the runtime makes (a chunk of
 * 2 x 2796203 elements: 2796203 passes where the runtime makes 11). */
long long tile_round_size(const prog *p, long long size_bytes);

/* The operations step x becomes in each pass of that shape. */
int tile_step_ops(const prog_step *x, int passes, int max_count);

/* 0 when tile_prog(p, size_bytes) would be p itself (every chunk within
 * one tile and every step's cnt chunks within one operation), so that a
 * timing in passes may time p; 1 otherwise (or when it would refuse). */
int tile_needed(const prog *p, long long size_bytes);

/* For each operation of the program tile_prog(p) made with *info, in
 * rank/tb/step order, the index of the step of p it runs (rank/tb/step
 * order): info->ops entries, freed by the caller.  What a per-step tally
 * of p (the dead traffic) becomes in the passes. */
long long *tile_step_map(const prog *p, const tile_info *info);

#endif
