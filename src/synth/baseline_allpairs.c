/* baseline_allpairs.c — --algo allpairs: the ReduceScatter in which every
 * rank puts each peer's block straight into that peer's scratch, in pieces,
 * and each owner sums a piece from every peer in one reduce as soon as it
 * has landed (contract in baseline.h; the plan: sched/mpp_allpairs.c).
 *
 * Why its own file: as NVLS's, the schedule is not MSCCL steps (MSCCL reduces
 * two buffers a step), so the program holds its data flow as direct's
 * (every peer's block sent to its owner and summed there) with
 * p->allpairs_pieces and p->allpairs_reducers set, and only the MSCCL++
 * writer writes it.  One node only: the puts go over memory channels, which
 * need the GPUs to map each other's memory. */
#include "baseline_int.h"

#include <stdio.h>

#include "../sched/mpp.h"
#include "../sched/xml.h"

/* The defaults: seven body pieces (a block of 8192 chunks in 18 pieces:
 * the last, which no transfer overlaps, reduces an 8192th of it) and four
 * reducers.  Fewer pieces are a little faster by default (DGX A100 x1,
 * 1 GiB: 3208.0, 3217.4, 3236.8 us with 1, 3, 7), but where each pair has a
 * link of its own (the `ports` variant) only seven let the reducers keep up
 * with the puts (1207.5, 837.5, 654.7 us; NCCL's ring 740.2): the plan
 * tries 1, 3 and 7. */
#define ALLPAIRS_BODY 7
#define ALLPAIRS_REDUCERS 4

prog *bl_build_allpairs(const topo *t, coll_kind k, const baseline_opts *o, baseline_stats *st,
                        tc_err *err)
{
    int n = t->nranks;
    if (!o->switch_ops) {
        tc_err_set(err, TC_INPUT, "allpairs sums several buffers in one reduce, which MSCCL XML "
                   "cannot express (two a step): write an MSCCL++ plan (--target mscclpp)");
        return NULL;
    }
    if (t->kind != TOPO_GPU || t->nnodes != 1) {
        tc_err_set(err, TC_INPUT, "allpairs: %s is %s; its puts go over memory channels, "
                   "which join the GPUs of one node", t->name,
                   t->kind != TOPO_GPU ? "not a GPU machine" : "several nodes");
        return NULL;
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b && topo_route_of(t, a, b).kind == ROUTE_NONE) {
                tc_err_set(err, TC_INPUT, "allpairs: ranks %d and %d of %s have no link or "
                           "switch between them; use ring or direct", a, b, t->name);
                return NULL;
            }
    int B = o->chunks ? o->chunks : ALLPAIRS_BODY;
    int R = o->channels ? o->channels : ALLPAIRS_REDUCERS;
    int sops, rops;
    if (!mpp_allpairs_fits(n, B, R, &sops, &rops)) {
        tc_err_set(err, TC_INPUT, "allpairs: %d ranks, %d body pieces (--chunks, at most %d) "
                   "and %d reducers (--channels, at most %d) need %d operations in a sender "
                   "block and %d in a reducer, of MSCCL++'s %d, and %d peers a block, of its "
                   "%d: use fewer pieces or more reducers", n, B, MPP_ALLPAIRS_MAX_BODY, R,
                   MPP_MAX_CHANNEL_PER_OPERATION, sops, rops, MPP_MAX_OPERATION, n - 1,
                   MPP_MAX_CHANNEL);
        return NULL;
    }
    int at[MPP_ALLPAIRS_AT];
    int P = mpp_allpairs_pieces(B, at);
    prog *p = bl_stand_in("allpairs", "direct", t, k, o, st, err);
    if (!p)
        return NULL;
    p->allpairs_pieces = B;
    p->allpairs_reducers = R;
    /* st: what the plan holds (sched/mpp_allpairs.c), not the stand-in steps */
    st->channels = st->nchannels = R;
    st->chunks = P;
    st->max_tbs_per_rank = n - 1 + R;
    st->tbs = (long long)n * (n - 1 + R);
    st->max_steps_per_tb = sops > rops ? sops : rops;
    st->steps = (long long)n * ((n - 1) * sops + R * rops);
    snprintf(st->note, sizeof st->note, "allpairs: every rank puts each peer's block into its "
             "scratch in %d pieces of its %d chunks (%d sender blocks); %d reducer block%s per "
             "rank sum%s each piece from every peer in one reduce as it lands; an MSCCL++ plan",
             P, at[P], n - 1, R, R == 1 ? "" : "s", R == 1 ? "s" : "");
    snprintf(p->name, sizeof p->name, "taccl baseline allpairs %s: %d ranks on %s, %d pieces, "
             "%d reducers", coll_name(k), n, t->name, P, R);
    xml_fit_value(p->name);
    return p;
}
