/* mpp.h — an MSCCL program written as an MSCCL++ execution plan (JSON).
 *
 * Why: MSCCL++ runs one-sided plans (put into a peer's buffer, then signal
 * it) where MSCCL runs two-sided send/receive steps.  This module lowers a
 * prog (program.h) to the plan format the MSCCL++ executor parses at
 * commit 1f5f065 (docs/mscclpp.md) so `taccl-synth` can target MSCCL++
 * as well as MSCCL.  The lowering rules are in docs/mscclpp.md §12; the
 * data flow of the plan is exactly the program's: every receive takes the
 * bytes its matching send sent, at the point of the receive.
 *
 * The plan is checked against MSCCL++'s executor limits before anything is
 * written (ops per threadblock, channels, buffers per op, threads per
 * block, 32-bit byte offsets); a program over one is refused with a
 * message naming the limit (TC_INPUT).  A program whose protocol is LL is
 * written as an LL plan (packets, §12.6); any other as Simple. */
#ifndef TC_MPP_H
#define TC_MPP_H

#include "program.h"

/* MSCCL++'s executor constants at 1f5f065 (execution_common.hpp:13-22). */
#define MPP_MAX_OPERATION 64            /* ops per threadblock */
#define MPP_MAX_CHANNEL 16              /* channels (and buffers) per threadblock and type */
#define MPP_MAX_CHANNEL_PER_OPERATION 8 /* channel_ids per op */
#define MPP_MAX_DEVICE_SEMAPHORES 16    /* semaphore_ids per op */
#define MPP_THREADS_PER_BLOCK 1024      /* __launch_bounds__(1024, 1) */
#define MPP_BUFFER_ALIGNMENT 16         /* the parser's default, in bytes */

/* Ops of each threadblock of an NVLS plan (mpp_nvls.c): a relaxed barrier
 * (nop, rlxsignal, nop, rlxwait, nop), the switch operation, a barrier. */
#define MPP_NVLS_OPS_PER_TB 11

/* The all-pairs ReduceScatter plan (mpp_allpairs.c): each peer's block in
 * `body` equal pieces of MPP_ALLPAIRS_TAIL chunks, then a tail halving from
 * MPP_ALLPAIRS_TAIL / 2 chunks to 1 and one more of 1
 * (MPP_ALLPAIRS_TAIL_PIECES pieces), at most MPP_ALLPAIRS_MAX_BODY body
 * pieces (a sender block runs 3 operations a piece, of MSCCL++'s 64).
 * mpp_allpairs_pieces fills at[0 .. P] (MPP_ALLPAIRS_AT entries) with the
 * pieces' first chunks and the block's chunk count at[P], and returns P;
 * mpp_allpairs_ops the operations a sender block runs for n ranks and R
 * reducer blocks, and in *reducer_ops (may be NULL) the most a reducer
 * runs. */
#define MPP_ALLPAIRS_TAIL 1024
#define MPP_ALLPAIRS_TAIL_PIECES 11
#define MPP_ALLPAIRS_MAX_BODY 9
#define MPP_ALLPAIRS_AT (MPP_ALLPAIRS_MAX_BODY + MPP_ALLPAIRS_TAIL_PIECES + 1)
int mpp_allpairs_pieces(int body, int *at);
int mpp_allpairs_ops(int n, int body, int R, int *reducer_ops);
/* Whether such a plan fits MSCCL++ (body pieces, reducers per wait op,
 * peers per block, operations per block); *sops and *rops as above. */
int mpp_allpairs_fits(int n, int body, int R, int *sops, int *rops);

/* The MSCCL++ commit whose format this writes. */
#define MPP_COMMIT "1f5f065d7b13ab02df32c22568f38785d1eeec01"

typedef struct {
    /* Byte range of message sizes the plan accepts (MSCCL++'s
     * min/max_message_size: the output size for allgather, the input
     * size otherwise — both the project's size_bytes).  max_bytes is
     * exclusive as in --bytes LO:HI; INT64_MAX = no upper end.  The written
     * max is further capped so that every byte offset fits 32 bits. */
    long long min_bytes, max_bytes;
    int inplace;            /* the plan's "inplace" (selection only) */
    const char *name;       /* plan name; NULL: the program's */
} mpp_opts;

/* The options a prog asks for: its name, its byte range, in place iff it
 * runs only in place. */
void mpp_opts_of(const prog *p, mpp_opts *o);

/* Whether an output at path is written as an MSCCL++ plan: when --target
 * mscclpp was given (want_mscclpp), or when the name ends in ".json".  The
 * one place taccl-synth decides between XML and a plan. */
int mpp_wanted(const char *path, int want_mscclpp);

/* The plan as a malloc'd NUL-terminated JSON text; the topology attached to
 * p (p->topo) decides memory (same node) or port (across nodes) channels,
 * and without one every rank is taken to share a node.  NULL with err set
 * (TC_INPUT naming the rank, threadblock and limit) when the program does
 * not fit MSCCL++ or its sends and receives do not pair. */
char *mpp_to_json(const prog *p, const mpp_opts *o, tc_err *err);

/* mpp_to_json written atomically to path (util/file.h). */
int mpp_write(const prog *p, const char *path, const mpp_opts *o, tc_err *err);

#endif
