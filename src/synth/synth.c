/* synth.c — sketch + topology through the three stages to a program (see
 * synth.h).  Each stage's own module does the work; this file only chooses
 * the options, times the stages, reports progress and hands results on. */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sched/lower.h"
#include "../sched/xml.h"
#include "contig.h"
#include "hier.h"
#include "order.h"
#include "reverse.h"
#include "route.h"
#include "../util/mem.h"

void synth_opts_init(synth_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mip_gap = -1;
    o->instances = 1;
    o->backend = LP_GLPK;
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

static topo *copy_topo(const topo *t, tc_err *err)
{
    char *json = topo_to_json(t);
    if (!json) {
        tc_err_set(err, TC_INPUT, "%s: cannot copy the topology", t->name);
        return NULL;
    }
    topo *c = topo_parse(json, t->path && *t->path ? t->path : t->name, err);
    free(json);
    return c;
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
 * largest gap over the solves. */
static int stage3(const algo *in, const topo *t, double chunk, const contig_opts *co,
                  algo **out, synth_stats *st, tc_err *err)
{
    contig_stats cst;
    int rc = contig_solve(in, t, chunk, co, out, &cst, err);
    if (rc != TC_OK)
        return rc;
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
 * executor will run them), and
 * stage 3's local search from scratch (no MILP: the phases had theirs);
 * the faster of the two. */
static int join_phases(const algo *rs, const algo *ag, reverse_join j, const topo *t,
                       double chunk, const contig_opts *co, algo **out, tc_err *err)
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
        algo_free(kept);
        *out = searched;
    } else {
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
    lo.newer_executor = o->newer_executor;
    lo.unlimited = o->unlimited;
    return lower_precheck(routing, &lo, err);
}

/* Stages 2 and 3 on a routing: the order, then contiguity and
 * exact times; for the reductions the reversal, and for AllReduce the two
 * joins.  st gets the stages' figures; *out the algorithm kept. */
static int stages_2_3(const algo *routing, const sketch *s, const topo *t, coll_kind k, double chunk,
                      double gap, int milp, const synth_opts *o, algo **out, synth_stats *st,
                      tc_err *err)
{
    algo *ordered = NULL, *final = NULL;
    double t0;
    int rc;
    *out = NULL;
    order_opts oo;
    order_opts_init(&oo);
    order_result ores;
    t0 = now_s();
    rc = order_schedule(routing, t, chunk, &oo, &ordered, &ores, err);
    st->order_s = now_s() - t0;
    if (rc != TC_OK)
        return rc;
    st->order_us = ores.makespan_us;
    order_result_free(&ores);
    progress(o, "synth: stage 2 ordering: %.3f s, makespan %.3f us", st->order_s,
             st->order_us, 0);

    contig_opts co;
    contig_opts_default(&co);
    co.time_limit_s = o->contig_time_s > 0 ? o->contig_time_s
                      : s->contig_time_s > 0 ? s->contig_time_s : 30;
    co.mip_gap = gap >= 0 ? gap : 0;
    co.quiet = o->quiet;
    co.solver_verbose = o->verbose;
    co.backend = o->backend;
    co.mem_limit_mb = o->mem_limit_mb;
    co.milp = milp;
    t0 = now_s();
    if (k == COLL_ALLGATHER || k == COLL_ALLTOALL) {
        rc = stage3(ordered, t, chunk, &co, &final, st, err);
    } else {
        /* ReduceScatter: the AllGather reversed, re-solved on the reversed
         * links; AllReduce: that, then the AllGather, joined both ways. */
        algo *rs0 = NULL, *rs = NULL, *ag = NULL;
        rc = reverse_reducescatter(ordered, t, &rs0, err);
        if (rc == TC_OK) {
            progress(o, "synth: reverse: %.0f reduce sends, reversed makespan %.3f us",
                     (double)rs0->nsends, rs0->predicted_us, 0);
            rc = stage3(rs0, t, chunk, &co, &rs, st, err);
        }
        algo_free(rs0);
        if (rc == TC_OK)
            st->rs_us = rs->predicted_us;
        if (rc == TC_OK && k == COLL_REDUCESCATTER) {
            final = rs;
            rs = NULL;
        } else if (rc == TC_OK) {
            progress(o, "synth: stage 3 reducescatter phase: %.3f us", rs->predicted_us, 0, 0);
            rc = stage3(ordered, t, chunk, &co, &ag, st, err);
            if (rc == TC_OK)
                progress(o, "synth: stage 3 allgather phase: %.3f us", ag->predicted_us, 0, 0);
            for (int j = 0; j < 2 && rc == TC_OK; j++) {
                algo *ar = NULL;
                rc = join_phases(rs, ag, (reverse_join)j, t, chunk, &co, &ar, err);
                if (rc != TC_OK)
                    break;
                if (j == REVERSE_JOIN_BARRIER)
                    st->barrier_us = ar->predicted_us;
                else
                    st->pipeline_us = ar->predicted_us;
                progress(o, j == REVERSE_JOIN_BARRIER
                         ? "synth: allreduce, allgather after the whole reducescatter "
                           "(barrier): %.3f us"
                         : "synth: allreduce, each chunk's allgather once its sum is complete "
                           "(pipeline): %.3f us", ar->predicted_us, 0, 0);
                if (!final || ar->predicted_us < final->predicted_us - 1e-9) {
                    algo_free(final);
                    final = ar;
                    st->join = j;
                } else {
                    algo_free(ar);
                }
            }
            if (rc != TC_OK) {
                algo_free(final);
                final = NULL;
            }
        }
        algo_free(rs);
        algo_free(ag);
    }
    st->contig_s = now_s() - t0;
    algo_free(ordered);
    if (rc == TC_OK && (rc = check_stop(err)) != TC_OK)
        algo_free(final);
    if (rc != TC_OK)
        return rc;
    *out = final;
    return TC_OK;
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

#define LATENCY_SCREEN 1.25

/* The latency-first routing through stages 2 and 3 beside the MILP's
 * result *final: the faster kept (the MILP's on a tie), st's stage figures
 * from the one kept, the time of both stages counted.  A latency-first
 * routing the runtime limits refuse is skipped, said on stderr. */
static int latency_alternative(const sketch *s, const topo *t, coll_kind k, double chunk,
                               double gap, const route_opts *ro, const synth_opts *o,
                               algo **final, synth_stats *st, tc_err *err)
{
    coll_kind routed = k == COLL_ALLTOALL ? COLL_ALLTOALL : COLL_ALLGATHER;
    route_opts q = *ro;
    q.latency = 1;
    synth_opts qo = *o;
    qo.quiet = 1;
    synth_stats alt = *st;
    algo *routing = NULL, *lat = NULL;
    tc_err e2;
    tc_err_clear(&e2);
    st->milp_us = (*final)->predicted_us;
    int rc = route_heuristic(s, t, routed, chunk, &q, &routing, err);
    if (rc != TC_OK)
        return rc;
    if (precheck(routing, k, o, &e2) != TC_OK) {
        algo_free(routing);
        if (!o->quiet)
            fprintf(stderr, "synth: latency-first routing skipped: %s\n", e2.msg);
        return TC_OK;
    }
    alt.order_s = alt.contig_s = 0;
    alt.contig_solves = 0;
    /* screened by stage 3's local search (no MILP; a fraction of the
     * time): the MILP runs on it only when that comes within
     * LATENCY_SCREEN of the MILP routing's result */
    rc = stages_2_3(routing, s, t, k, chunk, gap, 0, &qo, &lat, &alt, err);
    double screen_s = alt.order_s + alt.contig_s;
    if (rc == TC_OK && lat->predicted_us < LATENCY_SCREEN * (*final)->predicted_us) {
        algo_free(lat);
        lat = NULL;
        alt.contig_solves = 0;
        rc = stages_2_3(routing, s, t, k, chunk, gap, 1, &qo, &lat, &alt, err);
    } else {
        alt.contig_solves = 0;      /* the screen ran no MILP */
        alt.order_s = 0;
        alt.contig_s = 0;
    }
    algo_free(routing);
    if (rc != TC_OK)
        return rc;
    st->latency_us = lat->predicted_us;
    double order_s = st->order_s + alt.order_s,
           contig_s = st->contig_s + alt.contig_s + screen_s;
    int solves = st->contig_solves + alt.contig_solves;
    if (lat->predicted_us < (*final)->predicted_us - 1e-9) {
        alt.latency_first = 1;
        alt.latency_us = st->latency_us;
        alt.milp_us = st->milp_us;
        *st = alt;
        algo_free(*final);
        *final = lat;
    } else {
        algo_free(lat);
    }
    st->order_s = order_s;
    st->contig_s = contig_s;
    st->contig_solves = solves;
    return TC_OK;
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
    topo *tc = p ? copy_topo(t, &e) : NULL;
    if (!tc) {
        prog_free(p);
        return NULL;
    }
    prog_set_topo(p, tc);
    return p;
}

/* The last steps on the algorithm kept (consumed): its figures into st,
 * the lowering, the topology copy.  Shared by the stages and the
 * node-blocks AllGather. */
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
    lo.newer_executor = o->newer_executor;
    lo.unlimited = o->unlimited;
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
    topo *tc = rc == TC_OK ? copy_topo(t, err) : NULL;
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

static int run_pipeline(const sketch *s, const topo *t, const synth_opts *o, prog **out,
                        synth_stats *st, tc_err *err)
{
    memset(st, 0, sizeof *st);
    st->route_gap = st->contig_gap = NAN;
    st->route_status = st->contig_status = LP_UNSOLVED;
    *out = NULL;
    coll_kind k = pick_coll(s, o);
    /* ReduceScatter and AllReduce are built from a routed AllGather. */
    coll_kind routed = k == COLL_ALLTOALL ? COLL_ALLTOALL : COLL_ALLGATHER;
    st->join = -1;
    long long size = pick_size(s, o), chunk;
    if (sketch_chunk_bytes(s, t->nranks, t->dma_bytes, size, &chunk, err) != TC_OK) {
        tc_err_prefix(err, "size %lld", size);
        return TC_INPUT;
    }
    st->chunk_bytes = chunk;
    int inst = o->instances > 1 ? o->instances : 1;
    long long grain = sketch_chunk_grain(t->dma_bytes);
    if (inst > 1 && chunk % (grain * inst) != 0)
        return tc_err_set(err, TC_INPUT, "size %lld: --instances %d splits each %lld-byte chunk "
                          "into parts of %lld bytes, not whole %lld-byte %s", size, inst, chunk,
                          chunk / inst, grain, t->dma_bytes > 0 ? "DMA segments and elements"
                                                                : "elements");

    route_opts ro;
    route_opts_init(&ro);
    ro.time_limit_s = o->route_time_s > 0 ? o->route_time_s
                      : s->route_time_s > 0 ? s->route_time_s : 60;
    /* the routing's objective is a relaxed makespan, an estimate stages 2
     * and 3 replace: proving its last 0.1 % can take the whole time limit
     * (torus 32x32: at 0.098 % after 2 s, still there after 60 s) */
    double gap = o->mip_gap >= 0 ? o->mip_gap : s->mip_gap >= 0 ? s->mip_gap : -1;
    ro.mip_gap = gap >= 0 ? gap : SYNTH_ROUTE_GAP;
    ro.backend = o->backend;
    ro.quiet = o->quiet;
    ro.verbose = o->verbose;
    ro.mem_limit_mb = o->mem_limit_mb;
    route_stats rst;
    algo *routing = NULL, *final = NULL;
    double t0 = now_s();
    int rc;
    int hier = use_hier(s, t, o, err, &rc);
    if (rc == TC_OK && o->rails == SYNTH_RAILS_BLOCKS && (!hier || k != COLL_ALLGATHER))
        return tc_err_set(err, TC_INPUT,
                          "%s: --rails blocks needs a hierarchical allgather; this call is %s%s",
                          t->name, hier ? "" : "a flat ", coll_name(k));
    if (hier && o->rails == SYNTH_RAILS_BLOCKS) {
        rc = blocks_allgather(s, t, (double)chunk, &ro, o, &final, err);
        st->route_s = now_s() - t0;
        if (rc != TC_OK)
            return rc;
        st->hierarchical = st->hier_blocks = 1;
        st->hier_blocks_us = final->predicted_us;
        st->route_status = LP_UNSOLVED;
        progress(o, "synth: hierarchical: node blocks sent whole: %.3f s, makespan %.3f us",
                 st->route_s, final->predicted_us, 0);
        return finish(s, t, o, k, size, chunk, final, out, st, err);
    }
    if (hier) {
        hier_stats hs;
        rc = hier_route(s, t, routed, (double)chunk, &ro, &routing, &hs, err);
        if (rc == TC_OK) {
            rst = hs.node;
            st->hierarchical = 1;
            progress(o, hs.rails_ring
                     ? "synth: hierarchical: one node routed, %.0f nodes joined by rings on "
                       "rails: %.0f sends"
                     : "synth: hierarchical: one node routed, %.0f nodes joined by direct "
                       "rails: %.0f sends", (double)t->nnodes, (double)hs.nsends, 0);
        }
        hier_stats_free(&hs);
    } else if (rc == TC_OK && o->route == SYNTH_ROUTE_LATENCY) {
        route_opts q = ro;
        q.latency = 1;
        memset(&rst, 0, sizeof rst);
        rst.status = LP_UNSOLVED;
        rst.time_us = rst.gap = NAN;
        rc = route_heuristic(s, t, routed, (double)chunk, &q, &routing, err);
        st->latency_first = 1;
    } else if (rc == TC_OK) {
        algo *coarse = NULL;
        rc = coarse_routing(s, t, routed, (double)chunk, &ro, o, &coarse, err);
        if (rc == TC_OK) {
            ro.coarse = coarse;
            rc = route_solve(s, t, routed, (double)chunk, &ro, &routing, &rst, err);
            ro.coarse = NULL;
        }
        algo_free(coarse);
    }
    st->route_s = now_s() - t0;
    if (rc != TC_OK)
        return rc;
    st->route_us = rst.time_us;
    st->route_gap = rst.gap;
    st->route_fallback = rst.fallback;
    st->route_status = rst.status;
    progress(o, "synth: stage 1 routing: %.3f s, relaxed makespan %.3f us, gap %.4f",
             st->route_s, rst.time_us, rst.gap);
    if ((rc = precheck(routing, k, o, err)) != TC_OK) {
        algo_free(routing);
        return rc;
    }
    if ((rc = check_stop(err)) != TC_OK) {
        algo_free(routing);
        return rc;
    }

    rc = stages_2_3(routing, s, t, k, (double)chunk, gap, 1, o, &final, st, err);
    algo_free(routing);
    if (rc != TC_OK)
        return rc;
    if (!hier && (o->route == SYNTH_ROUTE_BEST ||
                  (o->route == SYNTH_ROUTE_AUTO && synth_alpha_bound(t, (double)chunk)))) {
        t0 = now_s();
        rc = latency_alternative(s, t, k, (double)chunk, gap, &ro, o, &final, st, err);
        if (rc != TC_OK)
            return rc;
        progress(o, st->latency_first
                 ? "synth: latency-first routing kept: makespan %.3f us (MILP routing %.3f us; "
                   "%.3f s)"
                 : "synth: latency-first routing: makespan %.3f us, MILP routing kept "
                   "(%.3f us; %.3f s)", st->latency_us, st->milp_us, now_s() - t0);
    }
    if (k == COLL_ALLGATHER && st->hierarchical && o->rails != SYNTH_RAILS_RING) {
        algo *b = NULL;
        tc_err e2;
        tc_err_clear(&e2);
        t0 = now_s();
        if (blocks_allgather(s, t, (double)chunk, &ro, o, &b, &e2) == TC_OK) {
            st->hier_blocks_us = b->predicted_us;
            progress(o, "synth: hierarchical: node blocks sent whole: makespan %.3f us "
                     "(%.3f s; rings on rails %.3f us)", b->predicted_us, now_s() - t0,
                     final->predicted_us);
            if (b->predicted_us < final->predicted_us - 1e-9) {
                algo_free(final);
                final = b;
                b = NULL;
                st->hier_blocks = 1;
            }
        } else {
            if (!o->quiet)
                fprintf(stderr, "synth: hierarchical: node blocks not built: %s\n", e2.msg);
        }
        algo_free(b);
        st->contig_s += now_s() - t0;
    }
    return finish(s, t, o, k, size, chunk, final, out, st, err);
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
