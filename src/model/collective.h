/* collective.h — the four collectives as chunk-level pre/postconditions.
 *
 * A schedule moves chunks: a chunk is (size_bytes / nchunksperloop) bytes,
 * where size_bytes is the larger per-rank buffer (nccl-tests convention).
 * This module says, for a collective over n ranks with C chunks per loop,
 * how many chunks each buffer holds, where every output chunk must come
 * from, how in-place runs alias the buffers, and how bandwidth is reported.
 * Both the executor and the synthesizer depend on it; it depends on nothing. */
#ifndef TC_COLLECTIVE_H
#define TC_COLLECTIVE_H

#include "../util/err.h"

typedef enum {
    COLL_ALLGATHER,
    COLL_ALLTOALL,
    COLL_REDUCESCATTER,
    COLL_ALLREDUCE,
    COLL_COUNT
} coll_kind;

/* Canonical lower-case name: "allgather", "alltoall", "reducescatter", "allreduce". */
const char *coll_name(coll_kind k);

/* Parse any accepted spelling (case-insensitive; reduce_scatter, reducescatter,
 * allgather, all_gather, ...). Returns 0 on success, -1 if unknown. */
int coll_parse(const char *s, coll_kind *out);

int coll_is_reduction(coll_kind k);

/* Check that C chunks per loop over n ranks is a valid shape for k, and
 * report the per-rank input and output chunk counts. */
int coll_shape(coll_kind k, int n, int C, int *in_chunks, int *out_chunks, tc_err *err);

/* Where output chunk j of rank r comes from.  For AllGather/AllToAll one
 * source: *src_rank and *src_chunk (an input chunk index).  For the
 * reductions, the sum over every rank of input chunk *src_chunk: *src_rank
 * is set to -1. */
void coll_out_source(coll_kind k, int n, int C, int r, int j, int *src_rank, int *src_chunk);

/* Where input chunk `index` of rank `origin` must end up: fills dst_rank[]
 * and out_index[] (room for n entries) and returns how many.  AllGather:
 * every rank (origin included) at output origin*in_chunks + index;
 * AllToAll: rank index / (C/n) at output origin*(C/n) + index % (C/n);
 * ReduceScatter: it contributes to rank index / (C/n), output index % (C/n);
 * AllReduce: it contributes to every rank's output index. */
int coll_in_dests(coll_kind k, int n, int C, int origin, int index, int *dst_rank,
                  int *out_index);

/* In-place aliasing as the runtime does it: the input buffer of rank r is
 * the output buffer at chunk offset *in_at_out (AllGather: r*in_chunks;
 * AllReduce/AllToAll: 0), or the output is the input at *out_at_in
 * (ReduceScatter: r*out_chunks).  Exactly one of the two is >= 0. */
void coll_inplace_alias(coll_kind k, int n, int C, int r, int *in_at_out, int *out_at_in);

/* nccl-tests conventions.  size_bytes = larger per-rank buffer.
 * algbw = S / t with S: AllGather total output (= size), ReduceScatter total
 * input (= size), AllReduce the buffer (= size), AllToAll the buffer (= size);
 * busbw = algbw * factor: AllReduce 2(n-1)/n, others (n-1)/n. */
double coll_busbw_factor(coll_kind k, int n);
double coll_algbw_gbps(coll_kind k, double size_bytes, double time_us);

#endif
