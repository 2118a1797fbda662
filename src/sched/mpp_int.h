/* mpp_int.h — the MSCCL++ plan in memory, between the lowering
 * (mpp_lower.c: program → one-sided operations) and the JSON writer
 * (mpp_write.c: limits, numbering of block-local tables, text).
 *
 * Why a layer between them: the lowering decides what moves where and in
 * which order; the writer decides how MSCCL++ spells it (block-local
 * channel and buffer indices, first-use order).  Each half is then small
 * enough to check against docs/mscclpp.md on its own. */
#ifndef TC_MPP_INT_H
#define TC_MPP_INT_H

#include "mpp.h"

typedef enum {
    MO_NOP,         /* __syncthreads */
    MO_SIGNAL,      /* signal channel */
    MO_WAIT,        /* wait channel */
    MO_PUT,         /* memory channel: all threads copy src to the peer */
    MO_PWSF,        /* port channel: put + signal + flush */
    MO_COPY,        /* local dst = src[0] */
    MO_RE,          /* local dst = src[0] + src[1] */
    MO_ACQUIRE,     /* sem_acquire */
    MO_RELEASE,     /* sem_release */
    /* LL (packets, in scratch; the runtime doubles their offsets) */
    MO_PPKT,        /* memory: plain local src -> packets in the peer's scratch */
    MO_CPKT,        /* plain local src -> local packets */
    MO_RPPKT,       /* local packets (waits for their flags) -> the peer's scratch */
    MO_UPKT,        /* local packets (waits) -> plain local dst */
    MO_REPKT        /* plain dst = plain src[0] + packets src[1] (waits) */
} mpp_opk;

typedef struct {
    buf_kind b;
    int off, cnt;   /* chunks */
    int rbuf;       /* -1: this rank's buffer; else rank-level remote buffer id */
} mpp_ref;

typedef struct {
    mpp_opk k;
    int chan;       /* signal/wait/put/pwsf: rank-level channel (mpp_rank.chans) */
    int nsrc;
    mpp_ref src[2];
    mpp_ref dst;    /* copy, re, put, pwsf */
    int sem0, nsem; /* acquire/release: semaphores sem0 .. sem0+nsem-1 */
} mpp_op;

typedef struct {
    int nops, cap;
    mpp_op *ops;
} mpp_tb;

typedef struct {
    int peer;
    int port;       /* 1: port channel (across nodes), 0: memory channel */
    int idx;        /* index among this rank's channels of its type */
} mpp_chan;

typedef struct {
    int rank;       /* owner */
    buf_kind b;
    int port;       /* accessed over port (1) or memory (0) channels */
} mpp_rbuf;

typedef struct {
    int in_chunks, out_chunks, s_chunks;
    int ntbs;
    mpp_tb *tbs;
    int nchans, chan_cap;
    mpp_chan *chans;
    int nrbufs, rbuf_cap;
    mpp_rbuf *rbufs;
    int nsems;
} mpp_rank;

typedef struct {
    int nranks;
    int ll;         /* 1: the program's protocol is LL: packets, no signal/wait */
    mpp_rank *ranks;
} mpp_plan;

/* Lower p into *out (zeroed by the caller); TC_INPUT with a message when
 * the sends and receives of p do not pair. */
int mpp_lower(const prog *p, mpp_plan *out, tc_err *err);
void mpp_plan_free(mpp_plan *pl);

/* NCCL's NVLS schedule of p (p->nvls_channels > 0) as a plan of switch
 * operations (mpp_nvls.c), what mpp_to_json writes for such a prog. */
char *mpp_nvls_json(const prog *p, const mpp_opts *o, tc_err *err);

/* The all-pairs ReduceScatter of p (p->allpairs_pieces > 0) as a plan of
 * puts into the owners' scratch and multi-source reduces (mpp_allpairs.c). */
char *mpp_allpairs_json(const prog *p, const mpp_opts *o, tc_err *err);

#endif
