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
 *     no XML parser, no cnt or depid. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include "../util/tcassert.h"

static const runtime_info TABLE[RT_COUNT] = {
    [RT_ANY] = {
        .selects_as = RT_MSCCL,
        .name = "any", .label = "the MSCCL runtimes", .who = "the MSCCL runtimes",
        .loader = "any", .plural = 1, .has_loader = 1,
        /* what every MSCCL runtime refuses: the larger of their limits */
        .max_steps_per_tb = 256, .max_tbs_per_gpu = 1024, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .reducescatter = NULL,
    },
    [RT_MSCCL] = {
        .selects_as = RT_MSCCL,
        .name = "msccl", .label = "msccl (the legacy runtime)", .who = "the legacy runtime",
        .loader = "msccl", .user = 1, .in_file = 1, .has_loader = 1,
        .max_steps_per_tb = 256, .max_tbs_per_gpu = 216, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .inplace_only = 1, .needs_name = 1,
        .drops_bad_range = 1, .chunk_counts = 1, .scratch_at_init = 1, .max_files = 4,
        .reducescatter = "reduce_scatter",
    },
    [RT_EXECUTOR] = {
        .selects_as = RT_EXECUTOR,
        .name = "msccl-executor", .label = "msccl-executor", .who = "the newer executor",
        .loader = "msccl-executor", .user = 1, .in_file = 1, .has_loader = 1,
        .max_steps_per_tb = 64, .max_tbs_per_gpu = 32 * 32, .max_channels = 32, .max_cnt = 72,
        .max_depid = 127, .parser_nodes = 4095, .max_bytes_inclusive = 1,
        .needs_range_attrs = 1, .channels_fail_init = 1, .reducescatter = "reducescatter",
    },
    [RT_MSCCLPP] = {
        .selects_as = RT_MSCCLPP,
        .name = "mscclpp", .label = "mscclpp (MSCCL++)", .who = "MSCCL++",
        .loader = "mscclpp", .user = 1, .has_loader = 1,
        .max_steps_per_tb = 64, .max_channels = 16, .threads_per_block = 1024,
        .max_bytes_inclusive = 1, .inplace_only = 1, .reducescatter = "reducescatter",
    },
    [RT_UNLIMITED] = {
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
