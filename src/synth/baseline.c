/* baseline.c — the entry of the baselines (contract in baseline.h): the
 * default options, the size a program records, and the dispatch of a call
 * to --algo nccl (baseline_nccl.c) or to the plain algorithms
 * (baseline_plain.c), after the checks every call gets.
 *
 * Why a file of its own: NCCL's choice is built with the plain builders,
 * so baseline_nccl.c calls baseline_plain.c; the entry calls both, and no
 * two baseline modules call each other. */
#include "baseline_int.h"

#include <string.h>

void baseline_opts_default(baseline_opts *o)
{
    memset(o, 0, sizeof *o);
    o->target = RT_MSCCL;
}


long long baseline_size_bytes(const prog *p, const topo *t, long long want)
{
    long long per = 4;
    if (t && t->dma_bytes > 0) {
        long long d = t->dma_bytes;
        long long g = 4, a = d;
        while (a) {
            long long r = g % a;
            g = a;
            a = r;
        }
        per = 4 / g * d;    /* lcm(4, dma) */
    }
    long long unit = per * (p && p->nchunksperloop > 0 ? p->nchunksperloop : 1);
    if (want < 1)
        want = 1;
    return (want + unit - 1) / unit * unit;
}

prog *baseline_build(const char *algo, const topo *t, coll_kind k, const baseline_opts *o,
                     tc_err *err)
{
    return baseline_build_stats(algo, t, k, o, NULL, err);
}

prog *baseline_build_stats(const char *algo, const topo *t, coll_kind k,
                           const baseline_opts *opts, baseline_stats *stp, tc_err *err)
{
    baseline_opts dflt;
    baseline_opts_default(&dflt);
    const baseline_opts *o = opts ? opts : &dflt;
    baseline_stats stl;
    baseline_stats *st = stp ? stp : &stl;
    memset(st, 0, sizeof *st);
    const baseline_algo *a = bl_check_call(algo, t, k, o, err);
    if (!a)
        return NULL;
    if (!strcmp(a->name, "nccl"))
        return bl_build_nccl(t, k, o, st, err);
    if (!strcmp(a->name, "nvls") || !strcmp(a->name, "hier-nvls"))
        return bl_build_nvls(t, k, o, !strcmp(a->name, "hier-nvls"), st, err);
    if (!strcmp(a->name, "allpairs"))
        return bl_build_allpairs(t, k, o, st, err);
    return bl_build_plain(a->name, t, k, o, st, err);
}
