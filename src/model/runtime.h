/* runtime.h — the runtime a schedule file is for, and what it allows.
 *
 * Why one module: which runtime a file is written for, or judged by, used
 * to be said five ways (an enum of the baselines, another of the loader
 * checks, 0/1/2 in the program, two flags in the executor's options, a
 * flag in the lowering and the writer), each with its own copy of the
 * limits.  Here it is one enum, and every name, limit and rule of a
 * runtime is one entry of the table in runtime.c: a runtime is one new
 * entry.  The limits are the runtimes' own constants, each cited in
 * runtime.c where it is set.
 *
 * RT_ANY is "no runtime said": a file without <taccl target>, taccl-run
 * without --target.  It is judged by what every MSCCL runtime refuses and
 * written with the legacy runtime's spellings; the user cannot name it. */
#ifndef TC_RUNTIME_H
#define TC_RUNTIME_H

#include "../util/err.h"
#include "collective.h"

typedef enum {
    RT_ANY,                 /* none said: what every MSCCL runtime refuses */
    RT_MSCCL,               /* microsoft/msccl, the legacy runtime */
    RT_EXECUTOR,            /* Azure/msccl-executor-nccl, the newer executor */
    RT_MSCCLPP,             /* microsoft/mscclpp: JSON execution plans */
    RT_UNLIMITED,           /* simulation beyond the runtimes: no loader */
    RT_COUNT
} runtime;

/* The element types a job reduces (taccl-run --dtype), and the reductions. */
typedef enum { DT_I32, DT_F32, DT_BF16, DT_F16, DT_COUNT } rt_dtype;
typedef enum { RED_SUM, RED_AVG, RED_MAX, RED_COUNT } rt_redop;

/* What a runtime is and allows.  A limit of 0 is "none". */
typedef struct {
    const char *name;       /* as the user spells it (--target, <taccl target>) */
    const char *label;      /* in messages: "msccl (the legacy runtime)" */
    const char *who;        /* in the lowering's messages: "the legacy runtime" */
    const char *loader;     /* the JSON report's "loader": "msccl", "any", "none" */
    int plural;             /* label names several runtimes ("refuse", not "refuses") */
    int user;               /* --target accepts the name */
    int in_file;            /* <taccl target> may name it */
    int has_loader;         /* a loader refuses files over its limits (HZ_LOAD);
                               0: over a limit is only reported (simulation) */
    int max_steps_per_tb;   /* MSCCL_MAX_NUM_STEPS; MSCCL++ MAX_OPERATION */
    int max_tbs_per_gpu;    /* MSCCL_MAX_NUM_THREAD_BLOCKS */
    int max_channels;       /* MAXCHANNELS; MSCCL++ MAX_CHANNEL per threadblock */
    int max_cnt;            /* a step's cnt is below it (MSCCL_MAX_COUNT) */
    int max_depid;          /* dependentBid is an int8 */
    int parser_nodes;       /* XML elements the parser stores for a rank */
    int threads_per_block;  /* MSCCL++ num_threads_per_block */
    int max_bytes_inclusive; /* a call of exactly maxBytes is the file's */
    int inplace_only;       /* reads inplace alone: a file serves one mode */
    int needs_range_attrs;  /* outofplace, minBytes, maxBytes required */
    int needs_name;         /* <algo name> required */
    int drops_bad_range;    /* minBytes > maxBytes: the file is ignored */
    int chunk_counts;       /* i_chunks/o_chunks checked against nchunksperloop */
    int scratch_at_init;    /* maxBytes * s_chunks / nchunksperloop allocated at init */
    int channels_fail_init; /* nchannels over max_channels fails init (else a warning) */
    int max_files;          /* MSCCL_XML_FILES it loads (0: no limit) */
    runtime selects_as;     /* whose rules pick among a plan's files: its own,
                               the legacy runtime's for a file naming none
                               and for a simulation */
    const char *reducescatter; /* its coll spelling of ReduceScatter; NULL: any
                                  MSCCL runtime's (RT_ANY) */
    unsigned dtypes;        /* bit 1 << rt_dtype: element types it runs */
    unsigned redops;        /* bit 1 << rt_redop: reductions it runs */
} runtime_info;

/* The entry of rt (TC_ASSERT on a value outside the enum). */
const runtime_info *runtime_get(runtime rt);

/* "msccl", "msccl-executor", "mscclpp", "unlimited"; "any" for RT_ANY. */
const char *runtime_name(runtime rt);

/* A runtime as the user names it.  TC_OK, or TC_INPUT with the one-line
 * "expected msccl, msccl-executor, mscclpp or unlimited, got 'x'" (the
 * caller prefixes the flag or attribute). */
int runtime_parse(const char *name, runtime *rt, tc_err *err);

/* The same for <taccl target>: only the runtimes a file may name. */
int runtime_parse_file(const char *name, runtime *rt, tc_err *err);

/* Whether this build writes (and runs) MSCCL XML for rt: every runtime
 * but MSCCL++, whose plans are JSON.  The one place the CLIs ask. */
int runtime_writes_xml(runtime rt);

/* TC_OK if this build writes rt's files, else TC_INPUT with "this build
 * cannot write MSCCL++ plans yet" (the caller prefixes "--target NAME"). */
int runtime_writable(runtime rt, tc_err *err);

/* Another runtime than rt that --target names, whose files this build
 * writes and whose loader takes a tb of `steps` steps and `tbs` tbs per
 * GPU (0: either not asked), for a refusal's advice; RT_ANY if none. */
runtime runtime_roomier(runtime rt, int steps, int tbs);

/* "i32", "f32", "bf16", "f16"; the names nccl-tests prints ("int32",
 * "float", "bfloat16", "half"); bytes per element. */
const char *runtime_dtype_name(rt_dtype t);
const char *runtime_dtype_nccl(rt_dtype t);
int runtime_dtype_bytes(rt_dtype t);

/* A type as the user names it: TC_OK, or TC_INPUT with "expected i32, f32,
 * bf16 or f16, got 'x'" (the caller prefixes the flag). */
int runtime_dtype_parse(const char *name, rt_dtype *t, tc_err *err);

/* "sum", "avg", "max". */
const char *runtime_redop_name(rt_redop op);

/* TC_OK if rt reduces type t with op, else TC_INPUT saying what it runs
 * ("msccl-executor does not run ..., it runs i32, f32, ..."). */
int runtime_reduces(runtime rt, rt_dtype t, rt_redop op, tc_err *err);

/* The coll attribute rt spells k with (RT_ANY: as the legacy runtime). */
const char *runtime_coll_xml(runtime rt, coll_kind k);

/* Whether rt's loader takes the coll attribute s (RT_ANY: whether any
 * MSCCL runtime does). */
int runtime_coll_ok(runtime rt, const char *s);

#endif
