/* synth.c — sketch + topology through the three stages to a program (see
 * synth.h).  Each stage's own module does the work; this file only chooses
 * the options, times the stages, reports progress and hands results on.
 *
 * Why strategies and a list: a call may try several routings (and, for
 * AllReduce, two joins of each).  Each strategy (try_milp, try_hier_rails,
 * try_latency_only, try_latency_alt, try_trees, try_blocks) only builds and adds what
 * it built, or why it built nothing, to the one candidate list (cands.h);
 * run_pipeline keeps cands_pick's choice, lowers it (finish) and reads
 * synth_stats' figures of the winner off the list (kept_figures). */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sched/lower.h"
#include "../sched/ptime.h"
#include "../sched/tile.h"
#include "../sched/xml.h"
#include "baseline.h"
#include "cands.h"
#include "contig.h"
#include "hier.h"
#include "order.h"
#include "pack.h"
#include "reverse.h"
#include "route.h"
#include "../util/mem.h"

void synth_opts_init(synth_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mip_gap = -1;
    o->instances = 1;
    o->backend = LP_GLPK;
    o->runtime = RT_MSCCL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static coll_kind pick_coll(const sketch *s, const synth_opts *o)
{
    if (o->has_coll)
        return o->coll;
    return s->has_coll ? s->coll : COLL_ALLGATHER;
}

static long long pick_size(const sketch *s, const synth_opts *o)
{
    if (o->size_bytes > 0)
        return o->size_bytes;
    return s->input_size > 0 ? s->input_size : 1LL << 20;
}

/* One progress line on stderr (fmt takes up to three doubles). */
static void progress(const synth_opts *o, const char *fmt, double a, double b, double c)
{
    if (!o->quiet) {
        fprintf(stderr, fmt, a, b, c);
        fputc('\n', stderr);
    }
}

/* A copy of a with what the lowering reported: a group it split becomes
 * one group per run, and staging copies become pre/post work.  NULL when
 * the lowering took every transfer as it was. */
static algo *apply_notes(const algo *a, const lower_note *nt, int *split, int *staged)
{
    int changed = 0, maxg = -1;
    *split = *staged = 0;
    for (int i = 0; i < a->nsends; i++) {
        if (nt[i].run > 0 || nt[i].pre_us > 0 || nt[i].post_us > 0 || nt[i].place_us > 0)
            changed = 1;
        if (a->sends[i].group > maxg)
            maxg = a->sends[i].group;
    }
    if (!changed)
        return NULL;
    algo *c = algo_new(a->coll, a->nranks, a->chunks_per_rank);
    for (int i = 0; i < a->nsends; i++) {
        const algo_send *s = &a->sends[i];
        algo_send *d = algo_add_send(c, s->origin, s->index, s->src, s->dst, s->t_send,
                                     s->t_arrive);
        d->reduce = s->reduce;
        d->group = s->group;
        /* run r > 0 of group g: a group of its own, numbered past the others */
        if (s->group >= 0 && nt[i].run > 0) {
            d->group = maxg + 1 + s->group * 72 + nt[i].run;  /* runs < 72: cnt < 72 */
            *split += 1;
        }
        d->pre_us = nt[i].pre_us;
        d->post_us = nt[i].post_us;
        d->place_us = nt[i].place_us;
        if (nt[i].pre_us > 0 || nt[i].post_us > 0 || nt[i].place_us > 0)
            *staged += 1;
    }
    c->predicted_us = a->predicted_us;
    return c;
}

/* Lower *a; when the lowering split or staged groups (stage 3 assumed one
 * transfer each, with no local copies), re-time the algorithm as lowered
 * with the executor's arbitration and lower that, so the recorded
 * prediction is the time of the program written.  *a may be replaced. */
static prog *lower_with_notes(algo **a, const topo *t, double chunk, lower_opts *lo,
                              const synth_opts *o, synth_stats *st, tc_err *err)
{
    lower_note *nt = xcalloc((size_t)((*a)->nsends > 0 ? (*a)->nsends : 1), sizeof *nt);
    lo->notes = nt;
    prog *p = lower_algo(*a, t, lo, err);
    int split = 0, staged = 0;
    algo *noted = p ? apply_notes(*a, nt, &split, &staged) : NULL;
    lo->notes = NULL;
    free(nt);
    if (!noted)
        return p;
    algo *rt = NULL;
    if (contig_replay(noted, t, chunk, &rt, err) != TC_OK) {
        algo_free(noted);
        prog_free(p);
        return NULL;
    }
    algo_free(noted);
    prog *q = lower_algo(rt, t, lo, err);
    if (!q) {
        algo_free(rt);
        prog_free(p);
        return NULL;
    }
    prog_free(p);
    progress(o, "synth: lowering: %.0f sends in split runs, %.0f staged; re-timed makespan %.3f us",
             split, staged, rt->predicted_us);
    st->contig_us = rt->predicted_us;
    algo_free(*a);
    *a = rt;
    return q;
}

/* How proven an outcome is: optimal, else some solution, else nothing. */
static int proven_rank(lp_status s)
{
    return s == LP_OPTIMAL ? 2 : s == LP_FEASIBLE ? 1 : s == LP_UNSOLVED ? 3 : 0;
}

/* Stage 3 on `in` (the caller times the whole stage, which for the
 * reductions is several solves); st keeps the least proven outcome and the
 * largest gap over every solve of the call, and counts the MILP runs. */
static int stage3(const algo *in, const topo *t, double chunk, const contig_opts *co,
                  algo **out, synth_stats *st, tc_err *err)
{
    contig_stats cst;
    int rc = contig_solve(in, t, chunk, co, out, &cst, err);
    if (rc != TC_OK)
        return rc;
    if (co->milp)
        st->contig_solves++;
    if (cst.status == LP_UNSOLVED && cst.ncols > 0)
        st->contig_failed = 1;
    if (proven_rank(cst.status) < proven_rank(st->contig_status))
        st->contig_status = cst.status;
    if (cst.status != LP_UNSOLVED && isfinite(cst.gap) &&
        !(cst.gap <= st->contig_gap))
        st->contig_gap = cst.gap;
    return TC_OK;
}

/* TC_STOP with err set if a stop was requested (between stages). */
static int check_stop(tc_err *err)
{
    return lp_stop_requested() ? tc_err_set(err, TC_STOP, "interrupted") : TC_OK;
}

/* AllReduce from the two solved phases joined one way: the joined sends
 * re-timed exactly with each phase's groups kept (contig_replay: as the
 * executor will run them), and stage 3's local search from scratch (no
 * MILP: the phases had theirs); the faster of the two (two timings of one
 * join, not two candidates), `how` saying which. */
static int join_phases(const algo *rs, const algo *ag, reverse_join j, const topo *t,
                       double chunk, const contig_opts *co, algo **out, char *how, size_t nhow,
                       tc_err *err)
{
    algo *ar0 = NULL, *kept = NULL, *searched = NULL;
    *out = NULL;
    int rc = reverse_allreduce(rs, ag, j, &ar0, err);
    if (rc == TC_OK)
        rc = contig_replay(ar0, t, chunk, &kept, err);
    if (rc == TC_OK) {
        contig_opts ls = *co;
        ls.milp = 0;
        ls.quiet = 1;
        rc = contig_solve(ar0, t, chunk, &ls, &searched, NULL, err);
    }
    algo_free(ar0);
    if (rc != TC_OK) {
        algo_free(kept);
        return rc;
    }
    if (searched->predicted_us < kept->predicted_us - 1e-9) {
        snprintf(how, nhow, "stage 3's local search (the executor's replay: %.3f us)",
                 kept->predicted_us);
        algo_free(kept);
        *out = searched;
    } else {
        snprintf(how, nhow, "the executor's replay (stage 3's local search: %.3f us)",
                 searched->predicted_us);
        algo_free(searched);
        *out = kept;
    }
    return TC_OK;
}

/* The runtime limits the routing settles (lower_precheck), judged before
 * stages 2 and 3 spend their time on it. */
static int precheck(const algo *routing, coll_kind k, const synth_opts *o, tc_err *err)
{
    lower_opts lo;
    lower_opts_default(&lo);
    lo.for_reduction = coll_is_reduction(k);
    lo.instances = o->instances > 0 ? o->instances : 1;
    lo.runtime = o->runtime;
    return lower_precheck(routing, &lo, err);
}

int synth_alpha_bound(const topo *t, double chunk_bytes)
{
    /* GB/s = 1e3 bytes per us */
    for (int i = 0; i < t->nlinks; i++)
        if (chunk_bytes / (t->links[i].bw_gbps * 1e3) >= t->links[i].alpha_us)
            return 0;
    for (int i = 0; i < t->nswitches; i++)
        if (chunk_bytes / (t->switches[i].bw_gbps * 1e3) >= t->switches[i].alpha_us)
            return 0;
    for (int i = 0; i < t->nnics; i++)
        if (chunk_bytes / (t->nics[i].bw_gbps * 1e3) >= t->nics[i].alpha_us)
            return 0;
    return 1;
}

/* The other hierarchical AllGather: node blocks sent whole
 * (hier_route_blocks), its order and groups fixed by the composition and
 * timed as the executor will run them (contig_replay): stages 2 and 3
 * would only undo the grouping, which is the point of it. */
static int blocks_allgather(const sketch *s, const topo *t, double chunk, const route_opts *ro,
                            const synth_opts *o, algo **out, tc_err *err)
{
    algo *routing = NULL;
    route_opts q = *ro;
    q.quiet = 1;
    *out = NULL;
    int rc = hier_route_blocks(s, t, chunk, &q, &routing, NULL, err);
    if (rc == TC_OK)
        rc = precheck(routing, COLL_ALLGATHER, o, err);
    if (rc == TC_OK)
        rc = contig_replay(routing, t, chunk, out, err);
    algo_free(routing);
    return rc;
}

/* Is stage 1 hierarchical?  Forced on: *rc = TC_INPUT with err when the
 * cluster cannot be (hier_applies); by default, when it is large and can. */
static int use_hier(const sketch *s, const topo *t, const synth_opts *o, tc_err *err, int *rc)
{
    *rc = TC_OK;
    if (o->hierarchical < 0)
        return 0;
    if (o->hierarchical > 0) {
        *rc = hier_applies(s, t, err);
        return *rc == TC_OK;
    }
    return t->nnodes >= 2 && t->nranks >= SYNTH_HIER_RANKS && hier_applies(s, t, NULL) == TC_OK;
}

/* The algorithm kept lowered once more with k instances (lower.h,
 * Instances), carrying its own copy of t; NULL where that lowering fails
 * (the size is no multiple of the k-fold chunks, a runtime limit). */
static prog *lower_also(const algo *a, const topo *t, const lower_opts *lo1, int k)
{
    lower_opts lo = *lo1;
    lo.instances = k;
    lo.notes = NULL;
    tc_err e;
    tc_err_clear(&e);
    prog *p = lower_algo(a, t, &lo, &e);
    topo *tc = p ? topo_clone(t) : NULL;
    if (!tc) {
        prog_free(p);
        return NULL;
    }
    prog_set_topo(p, tc);
    return p;
}

/* The last steps on the algorithm kept (consumed): its figures into st,
 * the lowering, the topology copy. */
static int finish(const sketch *s, const topo *t, const synth_opts *o, coll_kind k,
                  long long size, long long chunk, algo *final, prog **out, synth_stats *st,
                  tc_err *err)
{
    int rc;
    double t0;
    st->contig_us = final->predicted_us;
    st->nsends = final->nsends;
    st->groups = 0;
    for (int i = 0; i < final->nsends; i++)
        if (final->sends[i].group >= st->groups)
            st->groups = final->sends[i].group + 1;
    if (k == COLL_ALLREDUCE)
        progress(o, st->join == REVERSE_JOIN_BARRIER
                 ? "synth: allreduce: kept the barrier join, makespan %.3f us"
                 : "synth: allreduce: kept the pipeline join, makespan %.3f us",
                 st->contig_us, 0, 0);
    progress(o, "synth: stage 3 contiguity: %.3f s, makespan %.3f us, %.0f groups",
             st->contig_s, st->contig_us, (double)st->groups);

    lower_opts lo;
    lower_opts_default(&lo);
    lo.instances = o->instances > 0 ? o->instances : 1;
    lo.runtime = o->runtime;
    lo.size_bytes = size;
    char name[256];
    snprintf(name, sizeof name, "taccl %s %s on %s", coll_name(k), s->name ? s->name : "",
             t->name ? t->name : "");
    xml_fit_value(name);    /* the names may take more than the runtimes' 255 bytes */
    lo.name = name;
    t0 = now_s();
    prog *p = lower_with_notes(&final, t, (double)chunk, &lo, o, st, err);
    st->lower_s = now_s() - t0;
    rc = p ? check_stop(err) : TC_INPUT;
    topo *tc = rc == TC_OK ? topo_clone(t) : NULL;
    if (tc && o->also_instances > 1)
        st->also = lower_also(final, t, &lo, o->also_instances);
    algo_free(final);
    if (!tc) {
        prog_free(p);
        return rc != TC_OK ? rc : TC_INPUT;
    }
    prog_set_topo(p, tc);
    *out = p;
    return TC_OK;
}

/* The last steps on a winner built as a program (consumed): its name and
 * size as finish() gives a lowered one, the topology copy. */
static int finish_prog(const sketch *s, const topo *t, const synth_opts *o, coll_kind k,
                       prog *p, prog **out, synth_stats *st, tc_err *err)
{
    st->contig_us = p->predicted_us;
    if (!o->quiet)
        fprintf(stderr, "synth: kept %s: %s\n", st->cands[st->winner].label, st->winner_reason);
    snprintf(p->name, sizeof p->name, "taccl %s %s on %s (hier)", coll_name(k),
             s->name ? s->name : "", t->name ? t->name : "");
    xml_fit_value(p->name);
    int rc = check_stop(err);
    topo *tc = rc == TC_OK ? topo_clone(t) : NULL;
    if (!tc) {
        prog_free(p);
        return rc != TC_OK ? rc : TC_INPUT;
    }
    prog_set_topo(p, tc);
    *out = p;
    return TC_OK;
}

/* With a chunkup above 1, the routing of the same sketch at chunkup 1
 * (each chunk whole, so a MILP chunkup times smaller), found within a
 * quarter of the routing's time limit, into *out: route_solve seeds the
 * full MILP with it where stage 2 schedules it faster than the heuristic
 * routing (route.h, A COARSE SEED).  *out stays NULL if there is none or
 * it failed (the heuristic seeds alone then); TC_STOP on a stop request,
 * else TC_OK. */
static int coarse_routing(const sketch *s, const topo *t, coll_kind k, double chunk,
                          const route_opts *ro, const synth_opts *o, algo **out, tc_err *err)
{
    *out = NULL;
    if (s->chunkup <= 1)
        return TC_OK;
    sketch c = *s;
    c.chunkup = 1;
    route_opts q = *ro;
    q.coarse = NULL;
    if (q.time_limit_s > 0)
        q.time_limit_s /= 4;
    route_stats rs;
    tc_err e;
    double t0 = now_s();
    if (!o->quiet)
        fprintf(stderr, "synth: stage 1: routing at chunkup 1 first, to seed chunkup %d\n",
                s->chunkup);
    int rc = route_solve(&c, t, k, chunk * s->chunkup, &q, out, &rs, &e);
    if (rc == TC_STOP || lp_stop_requested()) {
        algo_free(*out);
        *out = NULL;
        return tc_err_set(err, TC_STOP, "%s", rc == TC_STOP ? e.msg : "interrupted");
    }
    if (rc != TC_OK)
        return TC_OK;
    if (!o->quiet)
        fprintf(stderr, "synth: stage 1: the routing at chunkup 1 (%s, %.3f s) offered as the "
                "seed of chunkup %d\n", lp_status_name(rs.status), now_s() - t0, s->chunkup);
    return TC_OK;
}

/* ------------------------------------------------------------ the candidates
 *
 * Every strategy below builds and adds what it built to the one list
 * (cands.h); none chooses between schedules (the latency-first screen only
 * asks cands_pick_us whether stage 3's MILP is worth running on it).
 * run_pipeline then keeps cands_pick's choice. */

#define LATENCY_SCREEN 1.25

/* Stage 2's and the ReduceScatter's makespans of one run of stages 2 and
 * 3: the figures synth_stats gives of the routing whose schedule is kept. */
typedef struct {
    double order_us, rs_us;
} run_figs;

/* One call: its settings, and what it has tried so far. */
typedef struct {
    const sketch *s;
    const topo *t;
    const synth_opts *o;
    coll_kind k;            /* the collective asked for */
    coll_kind routed;       /* what stage 1 routes: AllToAll, else the AllGather */
    long long size, chunk;
    double gap;             /* --gap or the sketch's; < 0: each stage's default */
    route_opts ro;          /* stage 1's options */
    int hier;               /* stage 1 is hierarchical (use_hier) */
    synth_stats *st;
    cand_list L;
    run_figs runs[SYNTH_MAX_CANDS];
    int nruns;
} pipeline;

/* Stage 3's options for this call (milp 0: its local search alone). */
static void contig_options(const pipeline *P, const synth_opts *o, int milp, contig_opts *co)
{
    contig_opts_default(co);
    co->time_limit_s = o->contig_time_s > 0 ? o->contig_time_s
                       : P->s->contig_time_s > 0 ? P->s->contig_time_s : 30;
    co->mip_gap = P->gap >= 0 ? P->gap : 0;
    co->quiet = o->quiet;
    co->solver_verbose = o->verbose;
    co->backend = o->backend;
    co->mem_limit_mb = o->mem_limit_mb;
    co->milp = milp;
}

/* "routing note; the join timed by ..." into buf. */
static const char *join_note(char *buf, size_t n, const char *note, const char *timed)
{
    snprintf(buf, n, "%s%sthe join timed by %s", note, *note ? "; " : "", timed);
    return buf;
}

/* AllReduce: stage 3 on the AllGather too, then each join of the two
 * solved phases added to the list. */
static int allreduce_joins(pipeline *P, const algo *ordered, const algo *rs, const char *rname,
                           int run, const contig_opts *co, const synth_opts *o,
                           const char *note, tc_err *err)
{
    double chunk = (double)P->chunk;
    algo *ag = NULL;
    progress(o, "synth: stage 3 reducescatter phase: %.3f us", rs->predicted_us, 0, 0);
    int rc = stage3(ordered, P->t, chunk, co, &ag, P->st, err);
    if (rc == TC_OK)
        progress(o, "synth: stage 3 allgather phase: %.3f us", ag->predicted_us, 0, 0);
    for (int j = 0; j < 2 && rc == TC_OK; j++) {
        algo *ar = NULL;
        char timed[96], buf[sizeof P->st->cands[0].note];
        rc = join_phases(rs, ag, (reverse_join)j, P->t, chunk, co, &ar, timed, sizeof timed,
                         err);
        if (rc != TC_OK)
            break;
        progress(o, j == REVERSE_JOIN_BARRIER
                 ? "synth: allreduce, allgather after the whole reducescatter (barrier): %.3f us"
                 : "synth: allreduce, each chunk's allgather once its sum is complete "
                   "(pipeline): %.3f us", ar->predicted_us, 0, 0);
        rc = cands_add(&P->L, rname, j, ar, run,
                       join_note(buf, sizeof buf, note, timed), err);
    }
    algo_free(ag);
    return rc;
}

/* Stage 3 on the ordered routing: the collective itself, or for the
 * reductions the reversal first (and for AllReduce the joins); what it
 * builds goes on the list under rname. */
static int stage3_cands(pipeline *P, const algo *ordered, const char *rname, int run,
                        const contig_opts *co, const synth_opts *o, const char *note,
                        tc_err *err)
{
    double chunk = (double)P->chunk;
    algo *out = NULL, *rs0 = NULL;
    if (P->k == COLL_ALLGATHER || P->k == COLL_ALLTOALL) {
        int rc = stage3(ordered, P->t, chunk, co, &out, P->st, err);
        return rc == TC_OK ? cands_add(&P->L, rname, -1, out, run, note, err) : rc;
    }
    /* ReduceScatter: the AllGather reversed, re-solved on the reversed
     * links; AllReduce: that, then the AllGather, joined both ways. */
    int rc = reverse_reducescatter(ordered, P->t, &rs0, err);
    if (rc == TC_OK) {
        progress(o, "synth: reverse: %.0f reduce sends, reversed makespan %.3f us",
                 (double)rs0->nsends, rs0->predicted_us, 0);
        rc = stage3(rs0, P->t, chunk, co, &out, P->st, err);
    }
    algo_free(rs0);
    if (rc != TC_OK)
        return rc;
    P->runs[run].rs_us = out->predicted_us;
    if (P->k == COLL_REDUCESCATTER)
        return cands_add(&P->L, rname, -1, out, run, note, err);
    rc = allreduce_joins(P, ordered, out, rname, run, co, o, note, err);
    algo_free(out);
    return rc;
}

/* Stages 2 and 3 on a routing (milp 0: stage 3's local search alone),
 * their schedules added to the list under rname with the note; the
 * stages' times and figures counted. */
static int stages_2_3(pipeline *P, const algo *routing, const char *rname, int milp,
                      const synth_opts *o, const char *note, tc_err *err)
{
    synth_stats *st = P->st;
    if (P->nruns >= SYNTH_MAX_CANDS)
        return tc_err_set(err, TC_INPUT, "synth: more than %d runs of stages 2 and 3",
                          SYNTH_MAX_CANDS);
    int run = P->nruns++;
    memset(&P->runs[run], 0, sizeof P->runs[run]);
    algo *ordered = NULL;
    order_opts oo;
    order_opts_init(&oo);
    order_result ores;
    double t0 = now_s();
    int rc = order_schedule(routing, P->t, (double)P->chunk, &oo, &ordered, &ores, err);
    double order_s = now_s() - t0;
    st->order_s += order_s;
    if (rc != TC_OK)
        return rc;
    P->runs[run].order_us = ores.makespan_us;
    order_result_free(&ores);
    progress(o, "synth: stage 2 ordering: %.3f s, makespan %.3f us", order_s,
             P->runs[run].order_us, 0);
    contig_opts co;
    contig_options(P, o, milp, &co);
    t0 = now_s();
    rc = stage3_cands(P, ordered, rname, run, &co, o, note, err);
    st->contig_s += now_s() - t0;
    algo_free(ordered);
    return rc == TC_OK ? check_stop(err) : rc;
}

/* A routing that is the call's stage 1 (the MILP's, the hierarchical one,
 * or the latency-first one when --route latency forces it): its figures
 * into st, the runtime limits judged, then stages 2 and 3.  routing is
 * consumed. */
static int main_routing(pipeline *P, const char *rname, algo *routing, const route_stats *rst,
                       double t0, const char *note, tc_err *err)
{
    synth_stats *st = P->st;
    st->route_s = now_s() - t0;
    st->route_us = rst->time_us;
    st->route_gap = rst->gap;
    st->route_fallback = rst->fallback;
    st->route_status = rst->status;
    progress(P->o, "synth: stage 1 routing: %.3f s, relaxed makespan %.3f us, gap %.4f",
             st->route_s, rst->time_us, rst->gap);
    int rc = precheck(routing, P->k, P->o, err);
    if (rc == TC_OK)
        rc = check_stop(err);
    if (rc == TC_OK)
        rc = stages_2_3(P, routing, rname, 1, P->o, note, err);
    algo_free(routing);
    return rc;
}

/* The routing MILP (seeded at chunkup 1 first where the sketch has a
 * chunkup above 1), then stages 2 and 3. */
static int try_milp(pipeline *P, tc_err *err)
{
    algo *coarse = NULL, *routing = NULL;
    route_stats rst;
    double t0 = now_s();
    int rc = coarse_routing(P->s, P->t, P->routed, (double)P->chunk, &P->ro, P->o, &coarse, err);
    if (rc == TC_OK) {
        P->ro.coarse = coarse;
        rc = route_solve(P->s, P->t, P->routed, (double)P->chunk, &P->ro, &routing, &rst, err);
        P->ro.coarse = NULL;
    }
    algo_free(coarse);
    if (rc != TC_OK) {
        P->st->route_s = now_s() - t0;
        return rc;
    }
    char note[128];
    snprintf(note, sizeof note, "the routing MILP (%s%s), then stages 2 and 3",
             lp_status_name(rst.status), rst.fallback ? ": its heuristic seed kept" : "");
    return main_routing(P, "milp", routing, &rst, t0, note, err);
}

/* Stage 1 on one node and rails between the nodes (hier.h), then stages 2
 * and 3. */
static int try_hier_rails(pipeline *P, tc_err *err)
{
    algo *routing = NULL;
    hier_stats hs;
    double t0 = now_s();
    int rc = hier_route(P->s, P->t, P->routed, (double)P->chunk, &P->ro, &routing, &hs, err);
    if (rc != TC_OK) {
        hier_stats_free(&hs);
        P->st->route_s = now_s() - t0;
        return rc;
    }
    route_stats rst = hs.node;
    int ring = hs.rails_ring;
    progress(P->o, ring ? "synth: hierarchical: one node routed, %.0f nodes joined by rings on "
                          "rails: %.0f sends"
                        : "synth: hierarchical: one node routed, %.0f nodes joined by direct "
                          "rails: %.0f sends", (double)P->t->nnodes, (double)hs.nsends, 0);
    hier_stats_free(&hs);
    char note[160];
    snprintf(note, sizeof note, "one node routed by the MILP (%s), the %d nodes joined by %s "
             "on rails, then stages 2 and 3", lp_status_name(rst.status), P->t->nnodes,
             ring ? "rings" : "direct hops");
    return main_routing(P, ring ? "hier-rings" : "hier-direct", routing, &rst, t0, note, err);
}

/* The latency-first routing forced (--route latency): the call's stage 1. */
static int try_latency_only(pipeline *P, tc_err *err)
{
    route_opts q = P->ro;
    q.latency = 1;
    route_stats rst;
    memset(&rst, 0, sizeof rst);
    rst.status = LP_UNSOLVED;
    rst.time_us = rst.gap = NAN;
    algo *routing = NULL;
    double t0 = now_s();
    int rc = route_heuristic(P->s, P->t, P->routed, (double)P->chunk, &q, &routing, err);
    if (rc != TC_OK) {
        P->st->route_s = now_s() - t0;
        return rc;
    }
    return main_routing(P, "latency-first", routing, &rst, t0,
                       "each chunk on its fewest-alpha tree, then stages 2 and 3", err);
}

/* The notes of entries from..end: note, then what each said already. */
static void prefix_notes(pipeline *P, int from, const char *note)
{
    for (int i = from; i < P->st->ncands; i++) {
        synth_cand *c = &P->st->cands[i];
        char old[sizeof c->note];
        snprintf(old, sizeof old, "%s", c->note);
        /* cut at the note's size where both do not fit */
        if (snprintf(c->note, sizeof c->note, "%s%s%s", note, *old ? "; " : "", old) < 0)
            c->note[0] = '\0';
    }
}

/* Stages 2 and 3 on the latency-first routing beside the MILP's: screened
 * by stage 3's local search alone (a fraction of the time), with the MILP
 * run on it only when that comes within LATENCY_SCREEN of the fastest so
 * far (a cost decision: the choice is still cands_pick's).  Quiet, as the
 * MILP's run said its stages already. */
static int latency_stages(pipeline *P, const algo *routing, tc_err *err)
{
    synth_opts qo = *P->o;
    qo.quiet = 1;
    double best = cands_pick_us(&P->L, NULL, 0);
    int from = P->st->ncands;
    int rc = stages_2_3(P, routing, "latency-first", 0, &qo, "", err);
    if (rc != TC_OK)
        return rc;
    double screen = cands_pick_us(&P->L, "latency-first", from);
    char note[240];
    if (!(screen < LATENCY_SCREEN * best)) {
        snprintf(note, sizeof note, "each chunk on its fewest-alpha tree, then stage 2 and stage "
                 "3's local search alone: not within %.2fx the fastest so far (%.3f us), so no "
                 "MILP", LATENCY_SCREEN, best);
        prefix_notes(P, from, note);
        return TC_OK;
    }
    cands_truncate(&P->L, from);
    P->nruns--;
    snprintf(note, sizeof note, "each chunk on its fewest-alpha tree, then stages 2 and 3 "
             "(screened by stage 3's local search at %.3f us, within %.2fx the fastest so far, "
             "%.3f us: so stage 3's MILP ran)", screen, LATENCY_SCREEN, best);
    return stages_2_3(P, routing, "latency-first", 1, &qo, note, err);
}

/* The latency-first routing beside the MILP's (--route auto at small
 * sizes, or best).  A routing the runtime limits refuse is a failed entry. */
static int try_latency_alt(pipeline *P, tc_err *err)
{
    route_opts q = P->ro;
    q.latency = 1;
    algo *routing = NULL;
    tc_err e2;
    tc_err_clear(&e2);
    double t0 = now_s();
    int from = P->st->ncands;
    int rc = route_heuristic(P->s, P->t, P->routed, (double)P->chunk, &q, &routing, err);
    if (rc != TC_OK)
        return rc;
    if (precheck(routing, P->k, P->o, &e2) != TC_OK) {
        algo_free(routing);
        if (!P->o->quiet)
            fprintf(stderr, "synth: latency-first routing skipped: %s\n", e2.msg);
        cands_none(&P->L, "latency-first", SYNTH_CAND_FAILED, "refused by the runtime limits: "
                   "%.200s", e2.msg);
        return TC_OK;
    }
    rc = latency_stages(P, routing, err);
    algo_free(routing);
    if (rc == TC_OK)
        progress(P->o, "synth: latency-first routing: makespan %.3f us (%.3f s)",
                 cands_pick_us(&P->L, "latency-first", from), now_s() - t0, 0);
    return rc;
}

/* The lowering's options for this call, as finish() sets them (no name). */
static void cand_lower_opts(const pipeline *P, lower_opts *lo)
{
    lower_opts_default(lo);
    lo->instances = P->o->instances > 0 ? P->o->instances : 1;
    lo->runtime = P->o->runtime;
    lo->size_bytes = P->size;
}

/* The packed trees with one tree per channel (pack_lanes): no stage 2 or
 * 3, the trees' own uncontended times, timed as the executor serves them
 * (contig_replay).  AllGather, and ReduceScatter reversed from it;
 * AllReduce has the stages' entry alone (its joins re-time both phases
 * and would drop the lanes). */
static int trees_lanes(pipeline *P, const algo *routing, const pack_stats *ps, tc_err *err)
{
    if (P->k != COLL_ALLGATHER && P->k != COLL_REDUCESCATTER) {
        cands_none(&P->L, "trees-lanes", SYNTH_CAND_SKIPPED, "one tree per channel: "
                   "AllGather and ReduceScatter only");
        return TC_OK;
    }
    algo *a = NULL, *rt = NULL;
    int rc = TC_OK;
    if (P->k == COLL_REDUCESCATTER)
        rc = reverse_reducescatter(routing, P->t, &a, err);
    else
        a = pack_copy(routing);
    if (rc == TC_OK) {
        pack_lanes(a);
        rc = contig_replay(a, P->t, (double)P->chunk, &rt, err);
    }
    if (rc != TC_OK) {
        algo_free(a);
        if (rc == TC_STOP)
            return rc;
        if (!P->o->quiet)
            fprintf(stderr, "synth: trees, one per channel, skipped: %s\n", err->msg);
        cands_none(&P->L, "trees-lanes", SYNTH_CAND_FAILED, "%.230s", err->msg);
        tc_err_clear(err);
        return check_stop(err);
    }
    a->predicted_us = rt->predicted_us;
    algo_free(rt);
    /* the channels the lanes take are only known lowered: a failed entry
     * where the runtime limits refuse them, not a failure of the call */
    lower_opts lo;
    cand_lower_opts(P, &lo);
    tc_err e2;
    tc_err_clear(&e2);
    prog *trial = lower_algo(a, P->t, &lo, &e2);
    if (!trial) {
        algo_free(a);
        if (!P->o->quiet)
            fprintf(stderr, "synth: trees, one per channel, skipped: %s\n", e2.msg);
        cands_none(&P->L, "trees-lanes", SYNTH_CAND_FAILED, "refused by the runtime limits: "
                   "%.200s", e2.msg);
        return check_stop(err);
    }
    prog_free(trial);
    char note[240];
    snprintf(note, sizeof note, "%d out-trees per rank packed for the least largest load "
             "(%.3f us; the cut bound's %.3f us), one tree per channel, timed as the "
             "executor serves them", ps->k, ps->load_us, ps->bound_us);
    progress(P->o, "synth: trees, one per channel: makespan %.3f us", a->predicted_us, 0, 0);
    return cands_add(&P->L, "trees-lanes", -1, a, -1, note, err);
}

/* The packed out-trees (pack.h) beside the MILP's routing: k = chunkup
 * trees per rank, then stages 2 and 3.  A packing that fails or that the
 * runtime limits refuse is a failed entry, not the call's failure. */
static int try_trees(pipeline *P, tc_err *err)
{
    if (P->routed != COLL_ALLGATHER) {
        cands_none(&P->L, "trees", SYNTH_CAND_SKIPPED, "out-trees per rank route an "
                   "AllGather; AllToAll is not one");
        return TC_OK;
    }
    pack_opts po;
    pack_opts_init(&po);
    po.quiet = P->o->quiet;
    pack_stats ps;
    algo *routing = NULL;
    tc_err e2;
    tc_err_clear(&e2);
    double t0 = now_s();
    int rc = pack_trees(P->s, P->t, (double)P->chunk, &po, &routing, &ps, &e2);
    if (rc == TC_OK && precheck(routing, P->k, P->o, &e2) != TC_OK)
        rc = TC_INPUT;
    if (rc != TC_OK) {
        algo_free(routing);
        if (!P->o->quiet)
            fprintf(stderr, "synth: trees skipped: %s\n", e2.msg);
        cands_none(&P->L, "trees", SYNTH_CAND_FAILED, "%.230s", e2.msg);
        return check_stop(err);
    }
    char note[240];
    snprintf(note, sizeof note, "%d out-trees per rank packed for the least largest load "
             "(%.3f us; the cut bound's %.3f us), then stage 2 and stage 3's local search", ps.k,
             ps.load_us, ps.bound_us);
    int from = P->st->ncands;
    /* stage 3's local search alone: the trees are chosen for their load,
     * and a contiguity MILP per call would double every synthesis's time */
    rc = stages_2_3(P, routing, "trees", 0, P->o, note, err);
    if (rc != TC_OK && rc != TC_STOP) {
        /* a strategy beside the MILP: its failure is an entry, not the call's */
        if (!P->o->quiet)
            fprintf(stderr, "synth: trees skipped: %s\n", err->msg);
        cands_none(&P->L, "trees", SYNTH_CAND_FAILED, "%.230s", err->msg);
        tc_err_clear(err);
        rc = check_stop(err);
    }
    if (rc == TC_OK)
        rc = trees_lanes(P, routing, &ps, err);
    algo_free(routing);
    if (rc == TC_OK)
        progress(P->o, "synth: trees: makespan %.3f us (%.3f s)",
                 cands_pick_us(&P->L, "trees", from), now_s() - t0, 0);
    return rc;
}

/* The node-blocks AllGather: the call's only strategy (--rails blocks,
 * forced: its failure is the call's), or beside the rings (a failure is a
 * failed entry).  Its stage figures are the rings' where they ran. */
static int try_blocks(pipeline *P, int forced, tc_err *err)
{
    synth_stats *st = P->st;
    const char *note = "each node gathers itself, then sends its block whole to every other "
                       "node; timed by the executor's replay";
    algo *b = NULL;
    tc_err e2;
    tc_err_clear(&e2);
    double t0 = now_s();
    int rc = blocks_allgather(P->s, P->t, (double)P->chunk, &P->ro, P->o, &b,
                              forced ? err : &e2);
    if (forced) {
        st->route_s = now_s() - t0;
        if (rc != TC_OK)
            return rc;
        st->route_status = LP_UNSOLVED;
        progress(P->o, "synth: hierarchical: node blocks sent whole: %.3f s, makespan %.3f us",
                 st->route_s, b->predicted_us, 0);
        return cands_add(&P->L, "hier-blocks", -1, b, -1, note, err);
    }
    st->contig_s += now_s() - t0;
    if (rc != TC_OK) {
        if (!P->o->quiet)
            fprintf(stderr, "synth: hierarchical: node blocks not built: %s\n", e2.msg);
        cands_none(&P->L, "hier-blocks", SYNTH_CAND_FAILED, "%.230s", e2.msg);
        return TC_OK;
    }
    progress(P->o, "synth: hierarchical: node blocks sent whole: makespan %.3f us (%.3f s; "
             "rings on rails %.3f us)", b->predicted_us, now_s() - t0,
             cands_pick_us(&P->L, NULL, 0));
    return cands_add(&P->L, "hier-blocks", -1, b, P->nruns - 1, note, err);
}

/* The channel counts try_hier_halving tries, every one (the time falls
 * while the pipeline's fill shrinks and rises once the NICs' alphas
 * outweigh it, but one channel is built without the pipeline's halves, so
 * the times need not fall from 1 to 2). */
static const int HALVING_CHANNELS[] = {1, 2, 4, 8, 16, 32};

/* --algo hier at `channels` (node_interleave as given), built and timed:
 * the program (its predicted_us its time in one pass) and in *us its time
 * as candidates are judged (tiled with --tiles); NULL with e set if the
 * target's limits or the size refuse it. */
static prog *hier_halving_at(pipeline *P, int channels, int interleave, double *us, tc_err *e)
{
    baseline_opts bo;
    baseline_opts_default(&bo);
    bo.channels = channels;
    bo.node_interleave = interleave;
    bo.target = P->o->runtime;
    bo.size_bytes = P->size;    /* its steps fit the runtimes' passes there */
    tc_err_clear(e);
    double us1 = NAN;
    prog *p = baseline_build("hier", P->t, P->k, &bo, e);
    if (p && baseline_size_bytes(p, P->t, P->size) != P->size) {
        tc_err_set(e, TC_INPUT, "%lld bytes are not whole elements in its %d chunks", P->size,
                   p->nchunksperloop);
        prog_free(p);
        return NULL;
    }
    if (!p)
        return NULL;
    p->size_bytes = P->size;
    prog *tp = P->o->tiles ? tile_prog(p, P->size, NULL, e) : NULL;
    if (ptime_run(p, P->t, P->size, &us1, e) != TC_OK || (P->o->tiles && !tp) ||
        ptime_run(tp ? tp : p, P->t, P->size, us, e) != TC_OK) {
        prog_free(p);
        p = NULL;
    }
    prog_free(tp);
    if (p)
        p->predicted_us = us1;   /* what a file records: its time in one pass */
    return p;
}

/* ReduceScatter and AllReduce on a hierarchical call: the rail-wise
 * recursive halving (and doubling) of baseline_hier.c (--algo hier), its
 * channels a pipeline of the node's reduction, the NICs and the node's
 * gather, as one more candidate, timed by the cost model (sched/ptime,
 * the program as written) at the channel counts HALVING_CHANNELS (up to
 * the first one the target's limits or the size refuse), the fastest
 * kept.  Why: the AllGather's rings reversed keep every NIC busy for the
 * bytes a ReduceScatter needs, but the node's reduction and the
 * rails overlap little (DGX-2 x8 at 1 GiB: the NICs busy 0.69 of the
 * ReduceScatter's time), where these channels keep the NICs busy from the
 * first channel's reduction to the last one's gather. */
static int try_hier_halving(pipeline *P, tc_err *err)
{
    const char *name = "hier-halving";
    if (P->k != COLL_REDUCESCATTER && P->k != COLL_ALLREDUCE)
        return TC_OK;
    if (P->o->instances > 1) {
        cands_none(&P->L, name, SYNTH_CAND_SKIPPED, "--instances %d: a baseline has its own "
                   "channels", P->o->instances);
        return TC_OK;
    }
    double t0 = now_s();
    prog *best = NULL;
    double best_us = 0;
    int best_k = 0, interleaved = 0;
    char tried[200] = "", why[240] = "";
    size_t nt = 0;
    for (size_t i = 0; i < sizeof HALVING_CHANNELS / sizeof *HALVING_CHANNELS; i++) {
        tc_err e;
        double us = NAN;   /* judged by (tiled with --tiles) */
        prog *p = hier_halving_at(P, HALVING_CHANNELS[i], 0, &us, &e);
        if (check_stop(err) != TC_OK) {
            prog_free(p);
            prog_free(best);
            return TC_STOP;
        }
        if (!p) {   /* more channels are refused alike (runtime limits, whole elements) */
            if (!best)
                snprintf(why, sizeof why, "%d channel(s): %.200s", HALVING_CHANNELS[i], e.msg);
            break;
        }
        if (nt < sizeof tried)
            nt += (size_t)snprintf(tried + nt, sizeof tried - nt, "%s%d: %.1f us",
                                   nt ? ", " : "", HALVING_CHANNELS[i], us);
        if (best && us >= best_us) {
            prog_free(p);
            continue;
        }
        prog_free(best);
        best = p;
        best_us = us;
        best_k = HALVING_CHANNELS[i];
    }
    if (!best) {
        P->st->baseline_s = now_s() - t0;
        if (!P->o->quiet)
            fprintf(stderr, "synth: hierarchical halving not built: %s\n", why);
        cands_none(&P->L, name, SYNTH_CAND_FAILED, "%.300s", why);
        return TC_OK;
    }
    /* the best channel count again with the node's reduction interleaved
     * (each tb sends a run, then reduces the one it gets): sooner where the
     * node's port feeds the NICs' first round (DGX H100 x16 AllReduce 1 GiB
     * 0.08 % faster), later where sends then wait on reductions (DGX-2 x2
     * AllReduce 1 GiB 4.6 % slower), so it is timed, not assumed */
    if (best_k > 1) {
        tc_err e;
        double us = NAN;
        prog *p = hier_halving_at(P, best_k, 1, &us, &e);
        if (check_stop(err) != TC_OK) {
            prog_free(p);
            prog_free(best);
            return TC_STOP;
        }
        if (p && nt < sizeof tried)
            nt += (size_t)snprintf(tried + nt, sizeof tried - nt, ", %d interleaved: %.1f us",
                                   best_k, us);
        if (p && us < best_us) {
            prog_free(best);
            best = p;
            best_us = us;
            interleaved = 1;
        } else {
            prog_free(p);
        }
    }
    char note[320];
    snprintf(note, sizeof note, "--algo hier --channels %d (node reduce%s, rails by recursive "
             "halving%s, node gather%s; the channels a pipeline): channels tried %s%s", best_k,
             interleaved ? " interleaved" : "",
             P->k == COLL_ALLREDUCE ? " and doubling" : "", P->k == COLL_ALLREDUCE ? "" : " not",
             tried, P->o->tiles ? " (in the runtimes' tile passes)" : "");
    P->st->baseline_s = now_s() - t0;
    progress(P->o, interleaved ? "synth: hierarchical halving: %.0f channels, the node's "
             "reduction interleaved, makespan %.3f us (%.3f s)" : "synth: hierarchical halving: "
             "%.0f channels, makespan %.3f us (%.3f s)", best_k, best_us, P->st->baseline_s);
    return cands_add_prog(&P->L, name, best, best_us, note, err);
}

/* The strategies this call tries, in order, each added to the list; the
 * ones it does not try are entries saying why. */
static int try_all(pipeline *P, tc_err *err)
{
    const synth_opts *o = P->o;
    int rc;
    if (P->hier && o->rails == SYNTH_RAILS_BLOCKS) {
        cands_none(&P->L, "hier-rings", SYNTH_CAND_SKIPPED, "--rails blocks");
        return try_blocks(P, 1, err);
    }
    if (P->hier) {
        if ((rc = try_hier_rails(P, err)) != TC_OK)
            return rc;
        if (P->k != COLL_ALLGATHER)
            cands_none(&P->L, "hier-blocks", SYNTH_CAND_SKIPPED, "node blocks are an "
                       "AllGather's: %s", P->k == COLL_ALLTOALL ? "AllToAll is not one"
                       : "the reductions reverse the rings");
        else if (o->rails == SYNTH_RAILS_RING)
            cands_none(&P->L, "hier-blocks", SYNTH_CAND_SKIPPED, "--rails ring");
        else
            rc = try_blocks(P, 0, err);
        if (rc == TC_OK)
            rc = try_hier_halving(P, err);
        return rc;
    }
    if (o->route == SYNTH_ROUTE_LATENCY) {
        cands_none(&P->L, "milp", SYNTH_CAND_SKIPPED, "--route latency");
        return try_latency_only(P, err);
    }
    if (o->route == SYNTH_ROUTE_TREES) {
        cands_none(&P->L, "milp", SYNTH_CAND_SKIPPED, "--route trees");
        cands_none(&P->L, "latency-first", SYNTH_CAND_SKIPPED, "--route trees");
        return try_trees(P, err);
    }
    if ((rc = try_milp(P, err)) != TC_OK)
        return rc;
    if (o->route == SYNTH_ROUTE_MILP)
        cands_none(&P->L, "latency-first", SYNTH_CAND_SKIPPED, "--route milp");
    else if (o->route == SYNTH_ROUTE_AUTO && !synth_alpha_bound(P->t, (double)P->chunk))
        cands_none(&P->L, "latency-first", SYNTH_CAND_SKIPPED, "--route auto: a %lld-byte "
                   "chunk costs at least its alpha somewhere, so the MILP's routing alone",
                   P->chunk);
    else
        rc = try_latency_alt(P, err);
    if (rc == TC_OK)
        rc = try_trees(P, err);
    return rc;
}

/* The entry of run `run` with join j, its time (0 if none). */
static double join_us(const pipeline *P, int run, int j)
{
    for (int i = 0; i < P->st->ncands; i++)
        if (P->L.run[i] == run && P->st->cands[i].join == j &&
            P->st->cands[i].state == SYNTH_CAND_OK)
            return P->st->cands[i].us;
    return 0;
}

/* 1 if some entry of routing r was tried (built or failed, not skipped). */
static int tried(const pipeline *P, const char *r)
{
    for (int i = 0; i < P->st->ncands; i++)
        if (!strcmp(P->st->cands[i].routing, r) && P->st->cands[i].state != SYNTH_CAND_SKIPPED)
            return 1;
    return 0;
}

/* synth_stats' figures of the entry kept, w, from the list: the stages of
 * its routing, its join, and which routings were tried. */
static void kept_figures(pipeline *P, int w)
{
    synth_stats *st = P->st;
    const synth_cand *c = &st->cands[w];
    int run = P->L.run[w];
    st->hierarchical = P->hier;
    st->order_us = run >= 0 ? P->runs[run].order_us : 0;
    st->rs_us = run >= 0 ? P->runs[run].rs_us : 0;
    st->join = c->join;
    st->barrier_us = c->join >= 0 ? join_us(P, run, REVERSE_JOIN_BARRIER) : 0;
    st->pipeline_us = c->join >= 0 ? join_us(P, run, REVERSE_JOIN_PIPELINE) : 0;
    st->latency_first = !strcmp(c->routing, "latency-first");
    st->hier_blocks = !strcmp(c->routing, "hier-blocks");
    st->hier_blocks_us = cands_pick_us(&P->L, "hier-blocks", 0);
    st->milp_us = tried(P, "latency-first") ? cands_pick_us(&P->L, "milp", 0) : 0;
    st->latency_us = cands_pick(&P->L, "milp", 0) >= 0
                     ? cands_pick_us(&P->L, "latency-first", 0) : 0;
}

/* The call's chunk size and stage 1's options into P; TC_INPUT for a size
 * the chunks or --instances do not divide. */
static int setup(pipeline *P, const sketch *s, const topo *t, const synth_opts *o,
                 synth_stats *st, tc_err *err)
{
    memset(P, 0, sizeof *P);
    P->s = s;
    P->t = t;
    P->o = o;
    P->st = st;
    P->k = pick_coll(s, o);
    /* ReduceScatter and AllReduce are built from a routed AllGather. */
    P->routed = P->k == COLL_ALLTOALL ? COLL_ALLTOALL : COLL_ALLGATHER;
    long long size = P->size = pick_size(s, o), chunk;
    if (sketch_chunk_bytes(s, t->nranks, t->dma_bytes, size, &chunk, err) != TC_OK) {
        tc_err_prefix(err, "size %lld", size);
        return TC_INPUT;
    }
    P->chunk = st->chunk_bytes = chunk;
    int inst = o->instances > 1 ? o->instances : 1;
    long long grain = sketch_chunk_grain(t->dma_bytes);
    if (inst > 1 && chunk % (grain * inst) != 0)
        return tc_err_set(err, TC_INPUT, "size %lld: --instances %d splits each %lld-byte chunk "
                          "into parts of %lld bytes, not whole %lld-byte %s", size, inst, chunk,
                          chunk / inst, grain, t->dma_bytes > 0 ? "DMA segments and elements"
                                                                : "elements");
    route_opts_init(&P->ro);
    P->ro.time_limit_s = o->route_time_s > 0 ? o->route_time_s
                         : s->route_time_s > 0 ? s->route_time_s : 60;
    /* the routing's objective is a relaxed makespan, an estimate stages 2
     * and 3 replace: proving its last 0.1 % can take the whole time limit
     * (torus 32x32: at 0.098 % after 2 s, still there after 60 s) */
    P->gap = o->mip_gap >= 0 ? o->mip_gap : s->mip_gap >= 0 ? s->mip_gap : -1;
    P->ro.mip_gap = P->gap >= 0 ? P->gap : SYNTH_ROUTE_GAP;
    P->ro.backend = o->backend;
    P->ro.quiet = o->quiet;
    P->ro.verbose = o->verbose;
    P->ro.mem_limit_mb = o->mem_limit_mb;
    int rc;
    P->hier = use_hier(s, t, o, err, &rc);
    if (rc == TC_OK && o->rails == SYNTH_RAILS_BLOCKS && (!P->hier || P->k != COLL_ALLGATHER))
        return tc_err_set(err, TC_INPUT,
                          "%s: --rails blocks needs a hierarchical allgather; this call is %s%s",
                          t->name, P->hier ? "" : "a flat ", coll_name(P->k));
    return rc;
}

/* tiles (taccl-synth's default on a GPU topology, --tiles): every built
 * entry timed as its lowered program runs once per tile pass, that time its
 * us (the choice is still cands_pick's).  An entry that does not lower or
 * tile keeps its time and says so.  tiles 0 (--steps):
 * timed as its lowered program runs (sched/ptime), for a list that holds
 * an entry built as a program, timed so: the stages' own estimate of a
 * routing can be below what its lowered program takes (DGX H100 x16
 * AllReduce at 1 GiB: 5383.8 us replayed, 5899.8 us lowered), and a
 * choice between the two kinds of time would favour the routing. */
static void judge_lowered(pipeline *P, int tiles)
{
    for (int i = 0; i < P->st->ncands; i++) {
        synth_cand *c = &P->st->cands[i];
        if (c->state != SYNTH_CAND_OK || !P->L.a[i])
            continue;
        lower_opts lo;
        cand_lower_opts(P, &lo);
        tc_err e;
        tc_err_clear(&e);
        double us = NAN;
        prog *p = lower_algo(P->L.a[i], P->t, &lo, &e);
        prog *tp = p && tiles ? tile_prog(p, P->size, NULL, &e) : NULL;
        int ok = (tp || (p && !tiles)) && ptime_run(tp ? tp : p, P->t, P->size, &us, &e) == TC_OK;
        /* the stages time the schedule's span; a run adds a call's latency */
        cost_proto pr = COST_SIMPLE;
        if (p)
            cost_proto_parse(p->proto, &pr);
        double span = c->us + cost_call_us(P->t, pr);
        prog_free(tp);
        prog_free(p);
        char old[sizeof c->note];
        snprintf(old, sizeof old, "%s", c->note);
        int n;
        if (ok && tiles)
            n = snprintf(c->note, sizeof c->note, "%s; %.3f us in one pass, %.3f us in the "
                         "runtimes' tile passes (judged by these)", old, span, us);
        else if (ok)
            n = snprintf(c->note, sizeof c->note, "%s; %.3f us as the stages timed it, %.3f us "
                         "as lowered (judged by this, as the programs built whole)", old, span,
                         us);
        else
            n = snprintf(c->note, sizeof c->note, "%s; not timed %s: %.120s", old,
                         tiles ? "in tile passes" : "lowered", e.msg);
        if (n < 0)
            c->note[0] = '\0';
        if (ok)
            c->us = us;
    }
}

static int run_pipeline(const sketch *s, const topo *t, const synth_opts *o, prog **out,
                        synth_stats *st, tc_err *err)
{
    memset(st, 0, sizeof *st);
    st->route_gap = st->contig_gap = NAN;
    st->route_status = st->contig_status = LP_UNSOLVED;
    st->join = -1;
    *out = NULL;
    pipeline P;
    int rc = setup(&P, s, t, o, st, err);
    cands_init(&P.L, st);
    if (rc == TC_OK)
        rc = try_all(&P, err);
    int progs = 0;
    for (int i = 0; i < st->ncands; i++)
        progs |= P.L.p[i] != NULL;
    if (rc == TC_OK && (o->tiles || progs))
        judge_lowered(&P, o->tiles);
    int w = rc == TC_OK ? cands_pick(&P.L, NULL, 0) : -1;
    if (rc == TC_OK && w < 0)
        rc = tc_err_set(err, TC_INPUT, "%s: no candidate schedule was built", t->name);
    if (rc != TC_OK) {
        cands_free(&P.L);
        return rc;
    }
    kept_figures(&P, w);
    if (P.L.p[w])
        return finish_prog(s, t, o, P.k, cands_keep_prog(&P.L, w), out, st, err);
    algo *final = cands_keep(&P.L, w);
    if (!o->quiet)
        fprintf(stderr, "synth: kept %s: %s\n", st->cands[w].label, st->winner_reason);
    return finish(s, t, o, P.k, P.size, P.chunk, final, out, st, err);
}

int synth_run(const sketch *s, const topo *t, const synth_opts *o, prog **out,
              synth_stats *st, tc_err *err)
{
    if (st)
        return run_pipeline(s, t, o, out, st, err);
    synth_stats local;
    int rc = run_pipeline(s, t, o, out, &local, err);
    prog_free(local.also);
    return rc;
}
