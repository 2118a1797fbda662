/* mpp_int.h — the MSCCL++ execution plan as the reader leaves it, shared by
 * the reader (mpp_read.c) and the interpreter (mpp_run.c) only.
 *
 * Why an own IR and not exec/sim's prog: a plan's operations are one-sided
 * (a block writes into a peer's buffer, a semaphore orders it), where an
 * MSCCL program is two-sided send/recv over connections; the two share the
 * device model (topology, cost, postcondition, hazards), not the program. */
#ifndef TC_MPP_INT_H
#define TC_MPP_INT_H

#include "mpp.h"

/* MSCCL++'s field limits (execution_common.hpp:13-22). */
#define MPP_MAX_OPERATION 64
#define MPP_MAX_CHANNEL 16
#define MPP_MAX_CHANNEL_PER_OP 8
#define MPP_MAX_REFS 10           /* 2 local + 8 per op (MAX_LOCAL_BUFFER_PER_OPERATION + channels) */
#define MPP_MAX_SYNCERS 16
#define MPP_MAX_SEMS_PER_OP 16
#define MPP_MAX_THREADS 1024

typedef enum { MB_I, MB_O, MB_S, MB_N } mpp_buf;
typedef enum { MCH_NONE, MCH_MEMORY, MCH_PORT, MCH_SWITCH } mpp_ch;

typedef enum {
    MOP_NOP, MOP_BARRIER, MOP_SIGNAL, MOP_WAIT, MOP_RLXSIGNAL, MOP_RLXWAIT, MOP_FLUSH,
    MOP_PUT, MOP_PWS, MOP_PWSF, MOP_GET, MOP_COPY, MOP_RE, MOP_RES, MOP_RRE, MOP_RRES,
    MOP_PPKT, MOP_RPPKT, MOP_CPKT, MOP_UPKT, MOP_REPKT, MOP_RESPKT, MOP_RECPKT, MOP_RECSPKT,
    MOP_GLRES, MOP_GSTORE, MOP_GSTOREPKT, MOP_PIPELINE, MOP_SEMACQ, MOP_SEMREL, MOP_COUNT
} mpp_optype;

/* A buffer reference of an op: local (type), remote (block-local buffer id
 * of the op's channel type) or switch (block-local switch channel). */
typedef enum { MREF_LOCAL, MREF_REMOTE, MREF_SWITCH } mpp_refkind;

typedef struct {
    mpp_refkind kind;
    mpp_buf type;       /* local: the buffer; remote/switch: resolved at load */
    int id;             /* remote: block-local buffer id; switch: block-local channel */
    int rank;           /* remote/switch: owner (switch: -1, the group) */
    int index, size;    /* in chunks */
} mpp_ref;

typedef struct mpp_op {
    mpp_optype type;
    mpp_ch ch;
    int nch;
    int chan[MPP_MAX_CHANNEL_PER_OP];   /* block-local channel indices */
    int tbg_id, tbg_size;
    int nsrc, ndst;
    mpp_ref src[MPP_MAX_REFS], dst[MPP_MAX_REFS];
    int barrier_id, barrier_n;
    int nsem;
    int sem[MPP_MAX_SEMS_PER_OP];
    long long unit_size;                /* pipeline: bytes */
    int num_chunks;
    int ninner;
    struct mpp_op *inner;               /* pipeline body */
    char path[96];                      /* "gpus[r].threadblocks[t].ops[k]" */
} mpp_op;

/* A rank-level channel: memory/port to one peer, or a switch group. */
typedef struct {
    mpp_ch type;
    int peer;           /* memory/port */
    int pair;           /* k-th channel of this type to `peer`: pairs with the peer's k-th to us */
    mpp_buf sw_buf;     /* switch: bound buffer */
    int nranks;         /* switch: group */
    int *ranks;
} mpp_chan;

typedef struct {
    int rank;
    mpp_buf type;
    int access[2];      /* memory, port: 1 if accessible that way */
} mpp_rbuf;

typedef struct {
    int nch[4];                 /* by mpp_ch: block-local channel count */
    int *ch[4];                 /* block-local -> rank-level index into the rank's list of that type */
    int nrb[4];                 /* MCH_MEMORY, MCH_PORT: block-local remote buffers */
    int *rb[4];                 /* -> rank-level remote buffer id */
    int nops;
    mpp_op *ops;
    int nexec;                  /* ops counting pipeline bodies (the 64 limit) */
} mpp_tb;

typedef struct {
    int chunks[MB_N];           /* input, output, scratch */
    int nchan[4];               /* by type */
    mpp_chan *chan[4];          /* rank-level channels of each type, file order */
    int nrbuf;
    mpp_rbuf *rbuf;
    int nsem;
    int *sem_init;
    int ntb;
    mpp_tb *tb;
} mpp_gpu;

struct mpp_plan {
    char *path;
    char *name;
    char *collective;
    int proto_ll;
    int inplace;
    int reuse;
    int dbl;
    int threads;
    long long align;
    unsigned long long min_size, max_size;
    int nranks;
    mpp_gpu *gpu;
    int has_switch;
    int op_count[MOP_COUNT];
};

const char *mpp_op_name(mpp_optype t);

#endif
