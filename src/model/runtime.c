/* runtime.c — the table of runtimes (see runtime.h for why it is one).
 *
 * Where each figure was read:
 *   msccl (microsoft/msccl): MSCCL_MAX_NUM_STEPS 256 and
 *     MSCCL_MAX_NUM_THREAD_BLOCKS 216 in src/include/msccl.h; the loader in
 *     src/graph/topo.cc (name required, i_chunks/o_chunks checked, scratch
 *     of maxBytes * s_chunks / nchunksperloop allocated at init), the
 *     choice of a file in src/graph/tuning.cc (inplace read alone,
 *     maxBytes excluded), MSCCL_XML_FILES loads at most 4 files.
 *   msccl-executor (Azure/msccl-executor-nccl): MSCCL_MAX_NUM_STEPS 64 and
 *     32 * MAXCHANNELS tbs in src/include/msccl/msccl_struct.h; the parser
 *     src/misc/msccl/msccl_parser.cc requires outofplace, minBytes and
 *     maxBytes, and fails init on more channels than the communicator has;
 *     maxBytes is included.
 *   Both: MSCCL_MAX_COUNT 72 (cnt <= 71), dependentBid an int8 (<= 127),
 *     MAXCHANNELS 32, a parser of 4095 nodes (sched/program.h).
 *   mscclpp (microsoft/mscclpp, docs/mscclpp.md §7, constants at
 *     src/core/include/execution_common.hpp:13-22): MAX_OPERATION 64 ops
 *     per threadblock (the only limit it enforces, executor.cc:478-482),
 *     MAX_CHANNEL 16 per threadblock, num_threads_per_block <= 1024
 *     (execution_kernel.hpp:801); the size range [min_message_size,
 *     max_message_size] includes both ends (execution_plan.cc:299-311);
 *     one `inplace` bool picks the buffer mode (algorithm.cc:165-170);
 *     its collective is spelled "reducescatter" (§2).  Its plans are JSON:
 *     no XML parser, no cnt or depid.
 *
 * Types and reductions (read at the commits the mirrors hold):
 *   msccl: the MSCCL algorithm is one of NCCL's algorithms, instantiated for
 *     every NCCL type (bfloat16 where CUDA has it) and every reduction:
 *     Sum, Prod, Max, Min, PreMulSum (avg of floats), SumPostDiv (avg of
 *     integers) — microsoft/msccl b23e9cd src/collectives/device/
 *     functions.cu:13-80 and common.h:283-330.
 *   msccl-executor: its kernels are declared per type (half, float,
 *     __nv_bfloat16, the integers; fp8 on CUDA that has it) and per
 *     reduction Sum, Prod, MinMax, PreMulSum, SumPostDiv — Azure/
 *     msccl-executor-nccl c6f6b36 src/include/msccl/msccl_kernel.h:19-72.
 *   mscclpp: int32, uint32, uint8, half, float, bfloat16
 *     (src/core/executor/execution_kernel.cu:14-93, docs/mscclpp.md §7); a
 *     reduction always adds: the plan's reduce_op is not read (§5.1, §5.3:
 *     calVector<T, SUM>), so no avg or max. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include "../util/tcassert.h"

static const runtime_info TABLE[RT_COUNT] = {
    [RT_ANY] = {
        .dtypes = 1u << DT_I32 | 1u << DT_F32 | 1u << DT_BF16 | 1u << DT_F16,
        .redops = 1u << RED_SUM | 1u << RED_AVG | 1u << RED_MAX,
        .selects_as = RT_MSCCL,
        .name = "any", .label = "the MSCCL runtimes", .who = "the MSCCL runtimes",
        .loader = "any", .plural = 1, .has_loader = 1,
        /* what every MSCCL runtime refuses: the larger of their limits */
        .max_steps_per_tb = 256, .max_tbs_per_gpu = 1024, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .reducescatter = NULL,
    },
    [RT_MSCCL] = {
        .dtypes = 1u << DT_I32 | 1u << DT_F32 | 1u << DT_BF16 | 1u << DT_F16,
        .redops = 1u << RED_SUM | 1u << RED_AVG | 1u << RED_MAX,
        .selects_as = RT_MSCCL,
        .name = "msccl", .label = "msccl (the legacy runtime)", .who = "the legacy runtime",
        .loader = "msccl", .user = 1, .in_file = 1, .has_loader = 1,
        .max_steps_per_tb = 256, .max_tbs_per_gpu = 216, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .inplace_only = 1, .needs_name = 1,
        .drops_bad_range = 1, .chunk_counts = 1, .scratch_at_init = 1, .max_files = 4,
        .reducescatter = "reduce_scatter",
    },
    [RT_EXECUTOR] = {
        .dtypes = 1u << DT_I32 | 1u << DT_F32 | 1u << DT_BF16 | 1u << DT_F16,
        .redops = 1u << RED_SUM | 1u << RED_AVG | 1u << RED_MAX,
        .selects_as = RT_EXECUTOR,
        .name = "msccl-executor", .label = "msccl-executor", .who = "the newer executor",
        .loader = "msccl-executor", .user = 1, .in_file = 1, .has_loader = 1,
        .max_steps_per_tb = 64, .max_tbs_per_gpu = 32 * 32, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .max_bytes_inclusive = 1,
        .needs_range_attrs = 1, .channels_fail_init = 1, .reducescatter = "reducescatter",
    },
    [RT_MSCCLPP] = {
        .dtypes = 1u << DT_I32 | 1u << DT_F32 | 1u << DT_BF16 | 1u << DT_F16,
        .redops = 1u << RED_SUM,
        .selects_as = RT_MSCCLPP,
        .name = "mscclpp", .label = "mscclpp (MSCCL++)", .who = "MSCCL++",
        .loader = "mscclpp", .user = 1, .has_loader = 1,
        .max_steps_per_tb = 64, .max_channels = 16, .threads_per_block = 1024,
        .max_bytes_inclusive = 1, .inplace_only = 1, .reducescatter = "reducescatter",
    },
    [RT_UNLIMITED] = {
        .dtypes = 1u << DT_I32 | 1u << DT_F32 | 1u << DT_BF16 | 1u << DT_F16,
        .redops = 1u << RED_SUM | 1u << RED_AVG | 1u << RED_MAX,
        .selects_as = RT_MSCCL,
        .name = "unlimited", .label = "the MSCCL runtimes", .who = "the MSCCL runtimes",
        .loader = "none", .plural = 1, .user = 1,
        /* the simulator's own bounds: channels and cnt still hold */
        .max_channels = 32, .max_cnt = 72, .reducescatter = "reduce_scatter",
    },
};

const runtime_info *runtime_get(runtime rt)
{
    TC_ASSERT(rt >= 0 && rt < RT_COUNT);
    return &TABLE[rt >= 0 && rt < RT_COUNT ? rt : RT_ANY];
}

const char *runtime_name(runtime rt)
{
    return runtime_get(rt)->name;
}

/* The names a user (file: a <taccl target>) may give, as "a, b or c". */
static void list_names(int file, char *buf, size_t n)
{
    int count = 0, k = 0;
    for (int r = 0; r < RT_COUNT; r++)
        count += file ? TABLE[r].in_file : TABLE[r].user;
    buf[0] = '\0';
    for (int r = 0; r < RT_COUNT; r++) {
        if (!(file ? TABLE[r].in_file : TABLE[r].user))
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", k == 0 ? "" : k == count - 1 ? " or " : ", ",
                 TABLE[r].name);
        k++;
    }
}

static int parse(const char *name, int file, runtime *rt, tc_err *err)
{
    for (int r = 0; r < RT_COUNT && name; r++)
        if ((file ? TABLE[r].in_file : TABLE[r].user) && !strcmp(name, TABLE[r].name)) {
            *rt = (runtime)r;
            return TC_OK;
        }
    char names[160];
    list_names(file, names, sizeof names);
    /* a file's value is quoted as XML quotes it, a flag's as a shell would */
    return tc_err_set(err, TC_INPUT, file ? "expected %s, got \"%s\"" : "expected %s, got '%s'",
                      names, name ? name : "");
}

int runtime_parse(const char *name, runtime *rt, tc_err *err)
{
    return parse(name, 0, rt, err);
}

int runtime_parse_file(const char *name, runtime *rt, tc_err *err)
{
    return parse(name, 1, rt, err);
}

int runtime_writes_xml(runtime rt)
{
    return rt != RT_MSCCLPP;
}

runtime runtime_roomier(runtime rt, int steps, int tbs)
{
    for (int r = 0; r < RT_COUNT; r++) {
        const runtime_info *x = &TABLE[r];
        if (r != (int)rt && x->user && x->has_loader && runtime_writes_xml((runtime)r) &&
            x->max_steps_per_tb >= steps && x->max_tbs_per_gpu >= tbs)
            return (runtime)r;
    }
    return RT_ANY;
}

int runtime_writable(runtime rt, tc_err *err)
{
    if (runtime_writes_xml(rt))
        return TC_OK;
    return tc_err_set(err, TC_INPUT, "this build cannot write %s plans yet", runtime_get(rt)->who);
}

static const struct {
    const char *name, *nccl;
    int bytes;
} DTYPES[DT_COUNT] = {
    [DT_I32] = {"i32", "int32", 4},
    [DT_F32] = {"f32", "float", 4},
    [DT_BF16] = {"bf16", "bfloat16", 2},
    [DT_F16] = {"f16", "half", 2},
};

static const char *const REDOPS[RED_COUNT] = {[RED_SUM] = "sum", [RED_AVG] = "avg",
                                              [RED_MAX] = "max"};

const char *runtime_dtype_name(rt_dtype t)
{
    TC_ASSERT(t >= 0 && t < DT_COUNT);
    return DTYPES[t].name;
}

const char *runtime_dtype_nccl(rt_dtype t)
{
    TC_ASSERT(t >= 0 && t < DT_COUNT);
    return DTYPES[t].nccl;
}

int runtime_dtype_bytes(rt_dtype t)
{
    TC_ASSERT(t >= 0 && t < DT_COUNT);
    return DTYPES[t].bytes;
}

/* "a, b or c" of the types whose bit is in mask */
static void list_dtypes(unsigned mask, char *buf, size_t n)
{
    int count = 0, k = 0;
    for (int t = 0; t < DT_COUNT; t++)
        count += (mask >> t) & 1;
    buf[0] = '\0';
    for (int t = 0; t < DT_COUNT; t++) {
        if (!((mask >> t) & 1))
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", k == 0 ? "" : k == count - 1 ? " or " : ", ",
                 DTYPES[t].name);
        k++;
    }
}

int runtime_dtype_parse(const char *name, rt_dtype *t, tc_err *err)
{
    for (int i = 0; i < DT_COUNT && name; i++)
        if (!strcmp(name, DTYPES[i].name)) {
            *t = (rt_dtype)i;
            return TC_OK;
        }
    char names[64];
    list_dtypes((1u << DT_COUNT) - 1, names, sizeof names);
    return tc_err_set(err, TC_INPUT, "expected %s, got '%s'", names, name ? name : "");
}

const char *runtime_redop_name(rt_redop op)
{
    TC_ASSERT(op >= 0 && op < RED_COUNT);
    return REDOPS[op];
}

int runtime_reduces(runtime rt, rt_dtype t, rt_redop op, tc_err *err)
{
    const runtime_info *ri = runtime_get(rt);
    char names[64];
    if (!((ri->dtypes >> t) & 1)) {
        list_dtypes(ri->dtypes, names, sizeof names);
        return tc_err_set(err, TC_INPUT, "%s does not run %s elements (it runs %s)", ri->label,
                          runtime_dtype_name(t), names);
    }
    if (!((ri->redops >> op) & 1))
        return tc_err_set(err, TC_INPUT, "%s does not reduce by %s (its reductions add: %s only)",
                          ri->label, runtime_redop_name(op), REDOPS[RED_SUM]);
    return TC_OK;
}

const char *runtime_coll_xml(runtime rt, coll_kind k)
{
    const char *rs = runtime_get(rt)->reducescatter;
    if (k == COLL_REDUCESCATTER)
        return rs ? rs : TABLE[RT_MSCCL].reducescatter;
    return coll_name(k);
}

int runtime_coll_ok(runtime rt, const char *s)
{
    for (int k = 0; k < COLL_COUNT; k++) {
        if (k == COLL_REDUCESCATTER)
            continue;
        if (!strcmp(s, coll_name((coll_kind)k)))
            return 1;
    }
    const char *rs = runtime_get(rt)->reducescatter;
    if (rs)
        return !strcmp(s, rs);
    for (int r = 0; r < RT_COUNT; r++)
        if (TABLE[r].has_loader && runtime_writes_xml((runtime)r) && TABLE[r].reducescatter &&
            !strcmp(s, TABLE[r].reducescatter))
            return 1;
    return 0;
}
