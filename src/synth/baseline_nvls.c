/* baseline_nvls.c — --algo nvls: a collective through the switch that
 * reduces and multicasts (NVLink SHARP) on one node, over K threadblocks
 * per rank (contract in baseline.h; docs/nvls.md section 6).
 *
 * Why its own file: the schedule is not built of MSCCL steps.  As for
 * NCCL's NVLS choice (baseline_nccl.c), the program holds the data flow
 * through the GPUs alone (rsag for AllReduce, direct for AllGather, one
 * piece) and p->nvls_channels = K; the MSCCL++ writer (sched/mpp_nvls.c)
 * writes it as switch operations: AllReduce, rank r's block c load-reduces
 * chunk r*K + c of every rank's input and stores the sum by multicast
 * (glres); AllGather, block c stores input chunk c by multicast (gstore).
 * Unlike NCCL's (16 blocks on Hopper, nvls.cc:155-157), K is the caller's:
 * taccl-synth and the plan choose it by the executor's timing of the plan. */
#include "baseline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/mpp.h"
#include "../sched/xml.h"
#include "../util/mem.h"

prog *bl_build_nvls(const topo *t, coll_kind k, const baseline_opts *o, int hier,
                    baseline_stats *st, tc_err *err)
{
    const char *me = hier ? "hier-nvls" : "nvls";
    int n = t->nranks;
    if (k == COLL_REDUCESCATTER) {
        /* microsoft/mscclpp 1f5f065: the DSL's reduce into one rank
         * (SwitchChannel.reduce, python/mscclpp/language/channel.py:914,
         * instruction glre) is refused by the executor's parser
         * (src/core/executor/execution_plan.cc:25-87 lists glres, gstore,
         * gstorepkt only) */
        tc_err_set(err, TC_INPUT, "%s has no ReduceScatter: MSCCL++'s executor has no switch "
                   "operation that reduces into one rank (its parser refuses glre; glres stores "
                   "the sum to every rank); use ring or --algo nccl", me);
        return NULL;
    }
    if (!o->switch_ops) {
        tc_err_set(err, TC_INPUT, "%s is a plan of switch (multimem) operations, which MSCCL "
                   "XML cannot express: write an MSCCL++ plan (--target mscclpp)", me);
        return NULL;
    }
    if (t->kind != TOPO_GPU || (t->nnodes != 1) != hier) {
        tc_err_set(err, TC_INPUT, "%s: %s is %s; %s", me, t->name,
                   t->kind != TOPO_GPU ? "not a GPU machine" : hier ? "one node" : "several nodes",
                   hier ? "use nvls" : "the switch joins one node's GPUs: use hier-nvls");
        return NULL;
    }
    int g = t->ranks_per_node, N = t->nnodes, sw = -1;
    int *all = xmalloc((size_t)g * sizeof *all);
    for (int a = 0; a < N; a++) {
        for (int l = 0; l < g; l++)
            all[l] = a * g + l;
        sw = topo_nvls_switch(t, all, g);
        if (sw < 0)
            break;
    }
    free(all);
    if (sw < 0) {
        tc_err_set(err, TC_INPUT, "%s: no switch of %s that reduces and multicasts joins the %d "
                   "ranks of each node (give that switch an \"nvls\" object; docs/nvls.md)", me,
                   t->name, g);
        return NULL;
    }
    /* the rails: rank l of every node reaches rank l of every other */
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            for (int l = 0; a != b && l < g; l++)
                if (topo_route_of(t, a * g + l, b * g + l).kind != ROUTE_NIC) {
                    tc_err_set(err, TC_INPUT, "%s: ranks %d and %d of %s have no NIC route "
                               "between them; the rails across nodes need one", me, a * g + l,
                               b * g + l, t->name);
                    return NULL;
                }
    if (k == COLL_ALLREDUCE && !(t->switches[sw].nvls.redops & (1u << RED_SUM))) {
        tc_err_set(err, TC_INPUT, "%s: the switch of %s does not sum (its nvls.reductions), "
                   "which an AllReduce through it needs", me, t->name);
        return NULL;
    }
    if (o->chunks && !hier) {
        tc_err_set(err, TC_INPUT, "nvls: one switch operation per threadblock; --channels sets "
                   "the threadblocks per rank, --chunks does not apply");
        return NULL;
    }
    /* ops per block (sched/mpp_nvls.c): two barriers (5 each) and a port
     * handshake (signal, wait, nop); per piece, AllReduce's producer:
     * glres, nop, a put per rail peer; wait, nop, re, nop, copy, nop, a put
     * per peer, sem_release (its consumer, fewer: sem_acquire, wait, nop,
     * gstore, and one barrier); AllGather: gstore, a put per peer; wait,
     * nop, a gstore per peer */
    int P = o->chunks ? o->chunks : 1, nr = N - 1;
    int ops = !hier ? MPP_NVLS_OPS_PER_TB
            : 13 + P * (k == COLL_ALLREDUCE ? 9 + 2 * nr : 3 + 2 * nr);
    if (ops > MPP_MAX_OPERATION) {
        tc_err_set(err, TC_INPUT, "hier-nvls: %d pieces per threadblock (--chunks) need %d "
                   "operations per threadblock on %d nodes; MSCCL++ runs at most %d: use "
                   "fewer --chunks", P, ops, N, MPP_MAX_OPERATION);
        return NULL;
    }
    int K = o->channels ? o->channels : MPP_MAX_CHANNEL;
    if (K > MPP_MAX_CHANNEL || g - 1 > MPP_MAX_CHANNEL_PER_OPERATION ||
        N - 1 > MPP_MAX_CHANNEL_PER_OPERATION) {
        tc_err_set(err, TC_INPUT, "%s: %d nodes of %d ranks and %d threadblocks per rank do not "
                   "fit MSCCL++: at most %d threadblocks (--channels) and %d peers per signal",
                   me, N, g, K, MPP_MAX_CHANNEL, MPP_MAX_CHANNEL_PER_OPERATION);
        return NULL;
    }
    prog *p = bl_stand_in(me, k == COLL_ALLREDUCE ? "rsag" : "direct", t, k, o, st, err);
    if (!p)
        return NULL;
    p->nvls_channels = K;
    p->nvls_nodes = N;
    p->nvls_pieces = P;
    /* st: what the plan holds (sched/mpp_nvls.c), not the stand-in steps */
    st->channels = st->nchannels = K;
    st->chunks = P;
    int tbs = hier && k == COLL_ALLREDUCE ? 2 * K : K;  /* producers and consumers */
    st->max_tbs_per_rank = tbs;
    st->tbs = (long long)n * tbs;
    st->max_steps_per_tb = ops;
    st->steps = st->tbs * ops;
    char pieces[48] = "";
    if (hier)
        snprintf(pieces, sizeof pieces, " of %d piece%s (pipelined)", P, P == 1 ? "" : "s");
    snprintf(st->note, sizeof st->note, "%s: %s through the switch (%s)%s, %d threadblock%s%s per "
             "rank, written as an MSCCL++ plan of switch operations", me, coll_name(k),
             k == COLL_ALLREDUCE ? "load-reduce and multicast store, glres"
                                 : "multicast store, gstore",
             !hier ? "" : k == COLL_ALLREDUCE ? " inside each node, reduce-scatter and "
                                                "all-gather along the rails across nodes"
                                              : " inside each node, puts along the rails",
             K, K == 1 ? "" : "s", pieces);
    snprintf(p->name, sizeof p->name, "taccl baseline %s %s: %d ranks on %s, %d threadblock%s "
             "per rank", me, coll_name(k), n, t->name, K, K == 1 ? "" : "s");
    xml_fit_value(p->name);
    return p;
}
