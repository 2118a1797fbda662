/* run.c — judge one schedule and report the verdict (see run.h).
 *
 * Order matters: the static check runs first and, if it finds anything,
 * nothing is executed (a structurally broken schedule would only produce
 * confusing follow-on errors).  Otherwise the ordering checks and the
 * simulator run once per buffer mode, and the first mode's timing is the
 * one reported. */
#include "run.h"

#include "../model/cost.h"
#include "../util/mem.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../util/size.h"
#include "data.h"
#include "rtdep.h"
#include "../sched/tile.h"

void run_opts_default(run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dtype = DT_I32;
    o->data = 1;
    o->seed = 1;
    o->mode = -1;
    o->target = RT_ANY;
    o->tiles = -1;
}

int run_tiles(const run_opts *o, const topo *t)
{
    return o->tiles < 0 ? t->kind == TOPO_GPU && VARIANT_DEFAULT_TILES : o->tiles != 0;
}

long long run_default_size(const prog *p)
{
    long long unit = (long long)(p->nchunksperloop > 0 ? p->nchunksperloop : 1) * 4;
    long long want = 1 << 20;
    return (want + unit - 1) / unit * unit;
}

static void pick_modes(const prog *p, const run_opts *o, run_report *r)
{
    r->nmodes = 0;
    if (o->mode == 0 || o->mode == 1) {
        r->modes[r->nmodes++] = o->mode;
        return;
    }
    if (runtime_get(o->target)->inplace_only) {
        /* the legacy runtime reads inplace alone: a file serves calls of
         * that mode only (microsoft/msccl src/graph/tuning.cc) */
        r->modes[r->nmodes++] = p->inplace ? 1 : 0;
        r->legacy_inplace_only = p->inplace && p->outofplace;
        return;
    }
    if (p->outofplace || !p->inplace)
        r->modes[r->nmodes++] = 0;
    if (p->inplace)
        r->modes[r->nmodes++] = 1;
}

int run_schedule(const prog *p, const topo *t, const run_opts *o, run_report *r, tc_err *err)
{
    memset(r, 0, sizeof *r);
    if (o->size_bytes > 0)
        r->size_bytes = o->size_bytes;
    else if (p->size_bytes > 0) {
        r->size_bytes = p->size_bytes;
        r->size_from_file = 1;
    } else
        r->size_bytes = run_default_size(p);
    pick_modes(p, o, r);

    check_limits lim;
    check_limits_for(&lim, o->target);
    if (o->bound) {
        r->has_bound = 1;
        r->bound_us = bound_time_us(o->bound, (double)r->size_bytes);
        r->floor_us = bound_floor_us(o->bound, (double)r->size_bytes);
        if (run_tiles(o, t))
            r->passes_us = bound_passes_us(o->bound, (double)r->size_bytes);
    }
    r->static_ok = check_program(p, &lim, &r->hz) == 0;
    for (int i = 0; i < r->hz.n; i++)
        r->refused |= r->hz.v[i].kind == HZ_LOAD;
    if (!r->static_ok)
        return TC_OK;

    /* The ordering checks of every mode first (they share one graph, freed
     * before the simulator runs); each mode's hazards are then listed
     * before its run's, mode by mode. */
    hazard_list race_hz[2] = {{0}};
    /* from here on, every wait as the runtimes number it (exec/rtdep.h) */
    prog *resolved = rtdep_resolve(p, &r->waits_moved);
    if (resolved)
        p = resolved;
    prog *tiled = NULL;
    if (o->tiles > 0 && t->kind != TOPO_GPU) {
        prog_free(resolved);
        return tc_err_set(err, TC_INPUT, "--tiles: the MSCCL runtimes' tile loop is a GPU "
                          "runtime's; topology %s is a chip/cluster device", t->name);
    }
    /* buffers too large to move data in are said before the passes, which
     * would otherwise be refused first for their size (data.c's words) */
    for (int m = 0; o->data && m < r->nmodes && p->nchunksperloop > 0 &&
                    r->size_bytes % p->nchunksperloop == 0; m++) {
        if (data_fits(p, r->modes[m], r->size_bytes / p->nchunksperloop, err) != TC_OK) {
            prog_free(resolved);
            return TC_INPUT;
        }
    }
    if (run_tiles(o, t)) {
        tiled = tile_prog(p, r->size_bytes, &r->tile, err);
        if (!tiled) {
            prog_free(resolved);
            return TC_INPUT;
        }
        r->tiled = 1;
    }
    race_graph *rg = race_graph_new(p);
    for (int m = 0; m < r->nmodes; m++)
        race_check_graph(rg, r->modes[m], 0, &race_hz[m], &r->race[m]);
    race_graph_free(rg);
    int ok = 1;
    /* the dead steps' operations in the passes (sched/tile.h) */
    long long *tmap = tiled ? tile_step_map(p, &r->tile) : NULL;
    char *tdead = tiled ? xcalloc((size_t)r->tile.ops + 1, 1) : NULL;
    for (int m = 0; m < r->nmodes; m++) {
        int before = r->hz.n;
        hazard_list_move(&r->hz, &race_hz[m]);
        if (tiled && r->race[m].dead)
            for (long long i = 0; i < r->tile.ops; i++)
                tdead[i] = r->race[m].dead[tmap[i]];
        sim_opts so = {
            .size_bytes = r->size_bytes,
            .dtype = o->dtype,
            .data = o->data,
            .inplace = r->modes[m],
            .seed = o->seed,
            .dead = !r->race[m].dead ? NULL : tiled ? tdead : r->race[m].dead,
            .obs = m == 0 && !tiled ? o->obs : NULL,
        };
        int rc = sim_run(tiled ? tiled : p, t, &so, &r->res[m], &r->hz, err);
        if (rc != TC_OK) {
            for (int k = m + 1; k < r->nmodes; k++)
                hazard_list_free(&race_hz[k]);
            free(tmap);
            free(tdead);
            prog_free(tiled);
            prog_free(resolved);
            return rc;
        }
        int bad = o->strict ? r->hz.n - before : hazard_errors(&r->hz, before);
        if (bad > 0 || !r->res[m].verified)
            ok = 0;
    }
    r->verified = ok;
    free(tmap);
    free(tdead);
    prog_free(tiled);
    prog_free(resolved);
    return TC_OK;
}

void run_variant_set_free(run_variant_set *s)
{
    for (int v = 0; v < VAR_COUNT; v++)
        topo_free(s->t[v]);
    memset(s, 0, sizeof *s);
}

static void variant_set_for(run_variant_set *s, const topo *t)
{
    if (s->base == t)
        return;
    run_variant_set_free(s);
    s->base = t;
    for (int v = 0; v < VAR_COUNT; v++) {
        tc_err e;
        s->ok[v] = variant_applies(t, (variant_id)v) &&
                   variant_topo(t, (variant_id)v, &s->t[v], &e) == TC_OK;
    }
}

/* p's time on t, timing only, in the runtimes' passes or not; < 0 if it
 * does not complete. */
static double time_only(const prog *p, const topo *t, long long size, int mode, int tiles)
{
    prog *tp = NULL;
    tc_err e;
    if (tiles && tile_needed(p, size) && !(tp = tile_prog(p, size, NULL, &e)))
        return -1;
    sim_opts so = {.size_bytes = size, .dtype = DT_I32, .data = 0, .inplace = mode};
    sim_result res;
    memset(&res, 0, sizeof res);
    hazard_list hz = {0};
    double us = -1;
    if (sim_run(tp ? tp : p, t, &so, &res, &hz, &e) == TC_OK && res.completed)
        us = res.time_us;
    sim_result_free(&res);
    hazard_list_free(&hz);
    prog_free(tp);
    return us;
}

void run_variants(const prog *p, const topo *t, const run_opts *o, long long size, int mode,
                  double us_known, run_variant_set *set, variant_times *vt)
{
    variant_set_for(set, t);
    long long moved;
    prog *resolved = rtdep_resolve(p, &moved);
    const prog *q = resolved ? resolved : p;
    for (int v = 0; v < VAR_COUNT; v++) {
        vt->us[v] = -1;
        if (!set->ok[v] || v == VAR_NCCL_EST)  /* a plan's figure, not a timing */
            continue;
        int tiles = variant_tiles((variant_id)v);
        if (v == VAR_DEFAULT || v == VAR_PASSES) {
            /* the two timings are one program where no chunk takes two
             * tiles nor a step two operations (sched/tile.h) */
            if (us_known >= 0 && (tiles == run_tiles(o, t) || !tile_needed(q, size))) {
                vt->us[v] = us_known;
                continue;
            }
        } else {
            tiles = variant_tiles(VAR_DEFAULT);
        }
        double us = time_only(q, set->t[v] ? set->t[v] : t, size, mode, tiles);
        vt->us[v] = us < 0 ? -1 : us;
    }
    prog_free(resolved);
}

void run_report_free(run_report *r)
{
    hazard_list_free(&r->hz);
    for (int m = 0; m < 2; m++) {
        race_stats_free(&r->race[m]);
        sim_result_free(&r->res[m]);
    }
}

const hazard *run_report_verdict(const run_report *r)
{
    const hazard *h = hazard_verdict(&r->hz);
    if (!h && r->hz.n)
        h = &r->hz.v[0];    /* --strict: a warning failed the run */
    return h;
}

static const char *verdict_msg(const run_report *r)
{
    const hazard *h = run_report_verdict(r);
    return h ? h->msg : "postcondition does not hold";
}

int run_report_warnings(const run_report *r)
{
    return r->hz.n - hazard_errors(&r->hz, 0);
}

double run_report_time_us(const run_report *r)
{
    for (int m = 0; m < r->nmodes; m++)
        if (r->res[m].completed)
            return r->res[m].time_us;
    return -1;
}

static const char *mode_name(int m)
{
    return m ? "in-place" : "out-of-place";
}

/* ------------------------------------------------------------ utilisation */

/* A resource's share of the run: its busy time over its lanes times the
 * makespan. */
static double res_share(const topo *t, const sim_result *s, int k)
{
    double lanes = cost_res_lanes(t, k);
    return s->time_us > 0 && lanes > 0 ? s->res_busy_us[k] / (lanes * s->time_us) : 0.0;
}

/* The resources that carried anything, busiest share first (ties: lower
 * number); returns how many, into a new array. */
static int busiest(const topo *t, const sim_result *s, int **out)
{
    int n = 0;
    *out = xmalloc(((size_t)s->nres + 1) * sizeof **out);
    for (int k = 0; k < s->nres; k++)
        if (s->res_busy_us[k] > 0)
            (*out)[n++] = k;
    for (int i = 1; i < n; i++)     /* insertion sort: stable, n is small */
        for (int j = i; j > 0 && res_share(t, s, (*out)[j]) > res_share(t, s, (*out)[j - 1]); j--) {
            int x = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = x;
        }
    return n;
}

/* "busiest   out port of rank 3 (switch 0) 97.1 % (12.4 of 12.8 us, 3.1 MB); ..." */
static void print_busiest(FILE *f, const topo *t, const sim_result *s)
{
    int *ord, n = busiest(t, s, &ord);
    for (int i = 0; i < n && i < 3; i++) {
        char name[128];
        cost_res_name(t, ord[i], name, sizeof name);
        fprintf(f, "%s%s: %.1f %% busy (%.3f us over %d lane%s, %.3g MB)\n",
                i ? "          " : "busiest   ", name, 100 * res_share(t, s, ord[i]),
                s->res_busy_us[ord[i]], cost_res_lanes(t, ord[i]),
                cost_res_lanes(t, ord[i]) == 1 ? "" : "s", s->res_bytes[ord[i]] / 1e6);
    }
    free(ord);
}

static cJSON *resources_json(const topo *t, const sim_result *s)
{
    static const char *const kinds[] = {"link", "port_out", "port_in", "nic_out", "nic_in"};
    cJSON *a = cJSON_CreateArray();
    int *ord, n = busiest(t, s, &ord);
    for (int i = 0; i < n; i++) {
        int k = ord[i];
        char name[128];
        cost_res_name(t, k, name, sizeof name);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "kind", kinds[cost_res_kind_of(t, k)]);
        cJSON_AddNumberToObject(o, "lanes", cost_res_lanes(t, k));
        cJSON_AddNumberToObject(o, "busy_us", s->res_busy_us[k]);
        cJSON_AddNumberToObject(o, "share", res_share(t, s, k));
        cJSON_AddNumberToObject(o, "bytes", s->res_bytes[k]);
        cJSON_AddItemToArray(a, o);
    }
    free(ord);
    return a;
}

static void print_topology(FILE *f, const topo *t)
{
    if (t->is_default) {
        fprintf(f, "topology  default: %d ranks fully connected, assumed figures "
                   "(timing indicative only; pass --topo)\n", t->nranks);
        return;
    }
    fprintf(f, "topology  %s: %d node%s x %d ranks", t->name, t->nnodes,
            t->nnodes == 1 ? "" : "s", t->ranks_per_node);
    if (t->kind == TOPO_CHIP)
        fprintf(f, " (chip device: %d chip%s x %d cluster%s per node)", t->chips_per_node,
                t->chips_per_node == 1 ? "" : "s", t->clusters_per_chip,
                t->clusters_per_chip == 1 ? "" : "s");
    fprintf(f, "\n");
}

void run_report_print(FILE *f, const run_report *r, const prog *p, const topo *t,
                      const run_opts *o, const char *file, int max_hazards)
{
    long long steps = 0, tbs = 0;
    for (int g = 0; g < p->ngpu; g++) {
        tbs += p->gpus[g].ntbs;
        for (int b = 0; b < p->gpus[g].ntbs; b++)
            steps += p->gpus[g].tbs[b].nsteps;
    }
    char sz[64];
    fprintf(f, "schedule  %s: %s, %d ranks, %d chunk%s per loop, %d channel%s, %lld tbs, %lld steps, "
            "protocol %s\n", file, coll_name(p->coll), p->ngpus, p->nchunksperloop,
            p->nchunksperloop == 1 ? "" : "s", p->nchannels, p->nchannels == 1 ? "" : "s", tbs, steps,
            p->proto);
    print_topology(f, t);
    const runtime_info *ri = runtime_get(o->target);
    if (!ri->has_loader)
        fprintf(f, "loader    none (--target %s: simulated beyond the runtimes' limits)\n",
                ri->name);
    else if (o->target != RT_ANY)
        fprintf(f, "loader    %s%s\n", ri->label,
                p->target == o->target ? ", the file's target" : "");
    fprintf(f, "size      %s per rank (%lld B per chunk)%s, %s, %s\n",
            size_format(r->size_bytes, sz, sizeof sz),
            r->size_bytes / (p->nchunksperloop > 0 ? p->nchunksperloop : 1),
            r->size_from_file ? " from the file" : "", runtime_dtype_name(o->dtype),
            o->data ? "data moved and checked" : "timing only (data not checked)");
    if (!r->verified) {
        const char *first = verdict_msg(r);
        fprintf(f, "result    FAILED: %s\n", first);
        int shown = 0, errs = hazard_errors(&r->hz, 0);
        for (int i = 0; i < r->hz.n && shown < max_hazards; i++)
            if (!r->hz.v[i].warning && r->hz.v[i].msg != first) {
                fprintf(f, "          %s\n", r->hz.v[i].msg);
                shown++;
            }
        if (errs - (errs > 0) > shown)
            fprintf(f, "          ... and %d more\n", errs - (errs > 0) - shown);
        if (!r->static_ok)
            return;
    } else {
        fprintf(f, "result    %s (%s)\n", o->data ? "verified" : "completed",
                r->nmodes == 2 ? "out-of-place and in-place" : mode_name(r->modes[0]));
    }
    int nwarn = run_report_warnings(r), wshown = 0;
    for (int i = 0; i < r->hz.n && wshown < max_hazards; i++)
        if (r->hz.v[i].warning)
            fprintf(f, "%s%s\n", wshown++ ? "          " : "warning   ", r->hz.v[i].msg);
    if (nwarn > wshown)
        fprintf(f, "          ... and %d more warnings\n", nwarn - wshown);
    if (r->legacy_inplace_only)
        fprintf(f, "modes     msccl (the legacy runtime) reads only inplace=\"1\", not "
                   "outofplace: it runs this file for in-place calls only, so only those are run\n");
    if (r->waits_moved > 0)
        fprintf(f, "waits     %lld released later than the step they name, or dropped: the "
                   "runtimes count a nop only if it carries a dependency, publish progress only "
                   "after a step with hasdep=1 and drop a tb's trailing nops; run as they do\n",
                r->waits_moved);
    if (r->tiled) {
        fprintf(f, "tiles     the runtimes' passes: %d of %lld bytes per chunk of %lld, at most "
                   "%d chunk%s an operation: %d operations for %d steps\n",
                r->tile.passes, r->tile.chunk_bytes / r->tile.passes, r->tile.chunk_bytes,
                r->tile.max_count, r->tile.max_count == 1 ? "" : "s", r->tile.ops,
                r->tile.steps);
        if (r->tile.passes != r->tile.runtime_passes)
            fprintf(f, "          (the runtime makes %d passes, its last tile shorter; %d equal "
                       "tiles of whole elements here)\n", r->tile.runtime_passes,
                    r->tile.passes);
    }
    for (int m = 0; m < r->nmodes; m++) {
        const sim_result *s = &r->res[m];
        if (!s->completed)
            continue;
        double algbw = coll_algbw_gbps(p->coll, (double)r->size_bytes, s->time_us);
        fprintf(f, "time      %.3f us  algbw %.3f GB/s  busbw %.3f GB/s  (%s, %lld transfers)\n",
                s->time_us, algbw, algbw * coll_busbw_factor(p->coll, p->ngpus),
                mode_name(r->modes[m]), s->transfers);
        if (s->call_us > 0)
            fprintf(f, "          of which %.1f us the runtime's base latency of a call "
                       "(runtime_latency %s)\n", s->call_us,
                    t->rt_latency == TOPO_RTLAT_RCCL ? "rccl" : "nccl");
        if (r->has_bound && o->bound)
            fprintf(f, "bound     %.3f us lower bound, ratio %.3f (1.0 = optimal); latency %.3f us: %s; "
                       "bandwidth %.3f us: %s%s\n",
                    r->bound_us, s->time_us > 0 ? r->bound_us / s->time_us : 0.0,
                    o->bound->latency_us, o->bound->latency_why,
                    o->bound->us_per_byte * (double)r->size_bytes, o->bound->bandwidth_why,
                    o->bound->call_us > 0 ? "; the larger of the two plus a call's base latency "
                                            "(the least of any protocol)" : "");
        if (r->passes_us > 0)
            fprintf(f, "passes    %.3f us lower bound in the runtimes' tile passes, ratio %.3f: "
                       "%s\n", r->passes_us, s->time_us > 0 ? r->passes_us / s->time_us : 0.0,
                    o->bound->passes_why);
        if (r->has_bound && o->bound && o->bound->ps_us_per_byte > 0) {
            double fl = bound_floor_us(o->bound, (double)r->size_bytes);
            fprintf(f, "floor     %.3f us partial-sums floor, ratio %.3f (what schedules that "
                       "add partial sums of the same elements live under, not a bound): %s\n",
                    fl, s->time_us > 0 ? fl / s->time_us : 0.0, o->bound->ps_why);
        }
        if (s->nres > 0)
            print_busiest(f, t, s);
        if (t->kind == TOPO_CHIP)
            fprintf(f, "syncs     ChipSync %lld  ClusterSync %lld\n", s->chip_syncs,
                    s->cluster_syncs);
        if (s->replicas_identical >= 0 && o->data)
            fprintf(f, "replicas  %s\n", s->replicas_identical ? "bit-identical"
                                                              : "differ (reduction order differs by rank)");
        const race_stats *rs = &r->race[m];
        if (rs->live_checked && rs->dead_steps > 0)
            fprintf(f, "dead      %lld of %lld steps carry data that never reaches the result: "
                       "%.1f %% of bytes moved, %.1f %% of transfer time\n",
                    rs->dead_steps, rs->steps,
                    s->bytes_moved > 0 ? 100.0 * s->dead_bytes / s->bytes_moved : 0.0,
                    s->xfer_us > 0 ? 100.0 * s->dead_xfer_us / s->xfer_us : 0.0);
        if (rs->live_checked && rs->live_partial)
            fprintf(f, "note      dead-traffic slice stopped at its budget (%lld comparisons and "
                       "search steps): steps it did not prove dead count as live\n", rs->live_work);
        if (!rs->checked)
            fprintf(f, "note      race check skipped: %s\n", rs->skipped_why);
        break; /* the first completed mode's figures stand for the run */
    }
}

/* "partial_sums_floor_us" and "partial_sums_ratio" (floor over time_us)
 * into j: null when there is no floor (not an AllReduce) or no time. */
static void floor_json(cJSON *j, double floor_us, double time_us)
{
    if (floor_us > 0 && time_us > 0) {
        cJSON_AddNumberToObject(j, "partial_sums_floor_us", floor_us);
        cJSON_AddNumberToObject(j, "partial_sums_ratio", floor_us / time_us);
    } else {
        cJSON_AddNullToObject(j, "partial_sums_floor_us");
        cJSON_AddNullToObject(j, "partial_sums_ratio");
    }
}

static cJSON *bound_json(const bound_model *b)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "latency_us", b->latency_us);
    cJSON_AddNumberToObject(m, "us_per_byte", b->us_per_byte);
    cJSON_AddStringToObject(m, "latency_why", b->latency_why);
    cJSON_AddStringToObject(m, "bandwidth_why", b->bandwidth_why);
    if (b->ps_us_per_byte > 0) {
        cJSON_AddNumberToObject(m, "partial_sums_us_per_byte", b->ps_us_per_byte);
        cJSON_AddStringToObject(m, "partial_sums_why", b->ps_why);
    }
    return m;
}

static cJSON *hazards_json(const hazard_list *hz, int max)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < hz->n && i < max; i++) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "kind", hazard_kind_name(hz->v[i].kind));
        cJSON_AddNumberToObject(h, "rank", hz->v[i].rank);
        cJSON_AddNumberToObject(h, "tb", hz->v[i].tb);
        cJSON_AddNumberToObject(h, "step", hz->v[i].step);
        cJSON_AddStringToObject(h, "message", hz->v[i].msg);
        cJSON_AddBoolToObject(h, "warning", hz->v[i].warning);
        cJSON_AddItemToArray(a, h);
    }
    return a;
}

/* Dead traffic of the first completed mode, or null if not computed. */
static cJSON *dead_json(const run_report *r, const sim_result *s)
{
    const race_stats *rs = NULL;
    for (int m = 0; m < r->nmodes && !rs; m++)
        if (&r->res[m] == s)
            rs = &r->race[m];
    if (!s || !rs || !rs->live_checked)
        return cJSON_CreateNull();
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "steps", (double)rs->dead_steps);
    cJSON_AddNumberToObject(d, "steps_total", (double)rs->steps);
    cJSON_AddNumberToObject(d, "transfers", (double)s->dead_transfers);
    cJSON_AddNumberToObject(d, "bytes", s->dead_bytes);
    cJSON_AddNumberToObject(d, "bytes_share", s->bytes_moved > 0 ? s->dead_bytes / s->bytes_moved : 0);
    cJSON_AddNumberToObject(d, "time_share", s->xfer_us > 0 ? s->dead_xfer_us / s->xfer_us : 0);
    cJSON_AddBoolToObject(d, "complete", !rs->live_partial);
    return d;
}

char *run_report_json(const run_report *r, const prog *p, const topo *t, const run_opts *o,
                      const char *file, const char *error)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", file ? file : "");
    /* the verdict as it is: an output that could not be written is said in
     * `error` beside it, not by calling a verified run unverified */
    cJSON_AddBoolToObject(j, "verified", r && r->verified);
    const sim_result *s = NULL;
    if (r)
        for (int m = 0; m < r->nmodes && !s; m++)
            if (r->res[m].completed)
                s = &r->res[m];
    if (p) {
        cJSON_AddStringToObject(j, "collective", coll_name(p->coll));
        cJSON_AddNumberToObject(j, "ngpus", p->ngpus);
        cJSON_AddNumberToObject(j, "nchunksperloop", p->nchunksperloop);
        cJSON_AddStringToObject(j, "proto", p->proto);
    } else {
        cJSON_AddNullToObject(j, "collective");
        cJSON_AddNullToObject(j, "ngpus");
    }
    if (r && p) {
        cJSON_AddNumberToObject(j, "size_bytes", (double)r->size_bytes);
        cJSON_AddNumberToObject(j, "chunk_bytes",
                                (double)(r->size_bytes / (p->nchunksperloop > 0 ? p->nchunksperloop : 1)));
    } else
        cJSON_AddNullToObject(j, "size_bytes");
    cJSON_AddStringToObject(j, "dtype", runtime_dtype_name(o ? o->dtype : DT_I32));
    cJSON_AddStringToObject(j, "loader", runtime_get(o ? o->target : RT_ANY)->loader);
    if (r) {
        cJSON_AddBoolToObject(j, "refused", r->refused);
        cJSON_AddNumberToObject(j, "waits_moved", (double)r->waits_moved);
    }
    if (r && r->tiled) {
        cJSON *tl = cJSON_AddObjectToObject(j, "tiles");
        cJSON_AddNumberToObject(tl, "passes", r->tile.passes);
        cJSON_AddNumberToObject(tl, "runtime_passes", r->tile.runtime_passes);
        cJSON_AddNumberToObject(tl, "tile_bytes", (double)(r->tile.chunk_bytes / r->tile.passes));
        cJSON_AddNumberToObject(tl, "max_count", r->tile.max_count);
        cJSON_AddNumberToObject(tl, "operations", r->tile.ops);
        cJSON_AddNumberToObject(tl, "steps", r->tile.steps);
    } else if (r) {
        cJSON_AddNullToObject(j, "tiles");
    }
    int checked_data = 0;
    if (r)
        for (int m = 0; m < r->nmodes; m++)
            checked_data |= r->res[m].data_checked;
    cJSON_AddBoolToObject(j, "data_checked", checked_data);
    cJSON *modes = cJSON_AddArrayToObject(j, "modes");
    if (r)
        for (int m = 0; m < r->nmodes; m++)
            cJSON_AddItemToArray(modes, cJSON_CreateString(r->modes[m] ? "inplace" : "outofplace"));
    if (t) {
        cJSON_AddStringToObject(j, "topology", t->name ? t->name : "");
        cJSON_AddBoolToObject(j, "topology_default", t->is_default);
    } else
        cJSON_AddNullToObject(j, "topology");
    if (s && p) {
        double algbw = coll_algbw_gbps(p->coll, (double)r->size_bytes, s->time_us);
        cJSON_AddNumberToObject(j, "time_us", s->time_us);
        cJSON_AddNumberToObject(j, "call_us", s->call_us);
        cJSON_AddNumberToObject(j, "algbw_gbps", algbw);
        cJSON_AddNumberToObject(j, "busbw_gbps", algbw * coll_busbw_factor(p->coll, p->ngpus));
        cJSON_AddNumberToObject(j, "chip_syncs", (double)s->chip_syncs);
        cJSON_AddNumberToObject(j, "cluster_syncs", (double)s->cluster_syncs);
        if (s->replicas_identical >= 0 && o && o->data)
            cJSON_AddBoolToObject(j, "replicas_identical", s->replicas_identical);
        else
            cJSON_AddNullToObject(j, "replicas_identical");
        cJSON_AddNumberToObject(j, "transfers", (double)s->transfers);
        cJSON_AddNumberToObject(j, "steps_run", (double)s->steps_run);
        cJSON_AddNumberToObject(j, "bytes_moved", s->bytes_moved);
        if (t && s->nres > 0)
            cJSON_AddItemToObject(j, "resources", resources_json(t, s));
        cJSON_AddNumberToObject(j, "wrong_elements", (double)s->wrong_elems);
        cJSON_AddNumberToObject(j, "exec_seconds", s->wall_exec_s);
        if (r->has_bound) {
            cJSON_AddNumberToObject(j, "lower_bound_us", r->bound_us);
            cJSON_AddNumberToObject(j, "lower_bound_call_us", o && o->bound ? o->bound->call_us : 0);
            cJSON_AddNumberToObject(j, "bound_ratio", s->time_us > 0 ? r->bound_us / s->time_us : 0);
        } else {
            cJSON_AddNullToObject(j, "lower_bound_us");
            cJSON_AddNullToObject(j, "bound_ratio");
        }
        if (r->passes_us > 0) {
            cJSON_AddNumberToObject(j, "lower_bound_passes_us", r->passes_us);
            cJSON_AddNumberToObject(j, "bound_passes_ratio",
                                    s->time_us > 0 ? r->passes_us / s->time_us : 0);
        } else {
            cJSON_AddNullToObject(j, "lower_bound_passes_us");
            cJSON_AddNullToObject(j, "bound_passes_ratio");
        }
        floor_json(j, r->floor_us, s->time_us);
    } else {
        const char *keys[] = {"time_us", "algbw_gbps", "busbw_gbps", "chip_syncs",
                              "cluster_syncs", "replicas_identical", "lower_bound_us",
                              "bound_ratio", "partial_sums_floor_us", "partial_sums_ratio"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            cJSON_AddNullToObject(j, keys[k]);
    }
    if (r && r->static_ok) {
        int checked = 1;
        for (int m = 0; m < r->nmodes; m++)
            checked &= r->race[m].checked;
        cJSON_AddBoolToObject(j, "race_checked", checked);
    }
    if (o && o->bound)
        cJSON_AddItemToObject(j, "lower_bound_model", bound_json(o->bound));
    if (r) {
        cJSON_AddItemToObject(j, "hazards", hazards_json(&r->hz, 100));
        cJSON_AddNumberToObject(j, "warnings", run_report_warnings(r));
        cJSON_AddItemToObject(j, "dead_traffic", dead_json(r, s));
    }
    if (error)
        cJSON_AddStringToObject(j, "error", error);
    else if (r && !r->verified)
        cJSON_AddStringToObject(j, "error", verdict_msg(r));
    else
        cJSON_AddNullToObject(j, "error");
    char *out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return out;
}

/* ------------------------------------------------------------------ sweep */

/* Round size up to a whole number of 4-byte elements per chunk; in the
 * runtimes' passes (tiles) also to a chunk the runtime's own pass count
 * splits into equal tiles (sched/tile.h tile_round_size). */
static long long sweep_size(const prog *p, long long size, int tiles)
{
    if (tiles)
        return tile_round_size(p, size);
    long long unit = (long long)(p->nchunksperloop > 0 ? p->nchunksperloop : 1) * 4;
    return (size + unit - 1) / unit * unit;
}

/* The row's first completed mode (0 out of place, 1 in place), or -1. */
static int sweep_mode(const run_report *r)
{
    for (int m = 0; m < r->nmodes; m++)
        if (r->res[m].completed)
            return r->modes[m];
    return -1;
}

/* vt's times by variant name (null: not timed), or NULL without vt. */
static cJSON *variants_json(const variant_times *vt)
{
    cJSON *v = cJSON_CreateObject();
    for (int i = 0; i < VAR_COUNT; i++) {
        if (i == VAR_NCCL_EST)      /* NCCL's side of a plan's ratio only */
            continue;
        if (vt->us[i] >= 0)
            cJSON_AddNumberToObject(v, variant_get((variant_id)i)->name, vt->us[i]);
        else
            cJSON_AddNullToObject(v, variant_get((variant_id)i)->name);
    }
    return v;
}

static cJSON *sweep_row_json(const prog *p, const run_report *r, const run_opts *o, int data,
                             const variant_times *vt)
{
    cJSON *row = cJSON_CreateObject();
    double t = run_report_time_us(r);
    double algbw = t > 0 ? coll_algbw_gbps(p->coll, (double)r->size_bytes, t) : 0;
    long long wrong = 0;
    for (int m = 0; m < r->nmodes; m++)
        wrong += r->res[m].wrong_elems;
    cJSON_AddNumberToObject(row, "size_bytes", (double)r->size_bytes);
    cJSON_AddNumberToObject(row, "count",
                            (double)(r->size_bytes / runtime_dtype_bytes(o->dtype)));
    cJSON_AddStringToObject(row, "type", runtime_dtype_name(o->dtype));
    cJSON_AddStringToObject(row, "redop", coll_is_reduction(p->coll) ? "sum" : "none");
    if (t >= 0) {
        cJSON_AddNumberToObject(row, "time_us", t);
        cJSON_AddNumberToObject(row, "algbw_gbps", algbw);
        cJSON_AddNumberToObject(row, "busbw_gbps", algbw * coll_busbw_factor(p->coll, p->ngpus));
    } else {
        cJSON_AddNullToObject(row, "time_us");
        cJSON_AddNullToObject(row, "algbw_gbps");
        cJSON_AddNullToObject(row, "busbw_gbps");
    }
    cJSON_AddNumberToObject(row, "wrong", (double)wrong);
    cJSON_AddBoolToObject(row, "data_checked", data);
    if (r->has_bound && t > 0) {
        cJSON_AddNumberToObject(row, "lower_bound_us", r->bound_us);
        cJSON_AddNumberToObject(row, "bound_ratio", r->bound_us / t);
    } else {
        cJSON_AddNullToObject(row, "lower_bound_us");
        cJSON_AddNullToObject(row, "bound_ratio");
    }
    floor_json(row, r->floor_us, t);
    if (vt)
        cJSON_AddItemToObject(row, "variants", variants_json(vt));
    cJSON_AddBoolToObject(row, "verified", r->verified);
    if (!r->verified)
        cJSON_AddStringToObject(row, "error", verdict_msg(r));
    return row;
}

static void sweep_row_text(FILE *f, const prog *p, const run_report *r, const run_opts *o, int data,
                           const variant_times *vt)
{
    double t = run_report_time_us(r);
    double algbw = t > 0 ? coll_algbw_gbps(p->coll, (double)r->size_bytes, t) : 0;
    long long wrong = 0;
    for (int m = 0; m < r->nmodes; m++)
        wrong += r->res[m].wrong_elems;
    char wr[32];
    if (data)
        snprintf(wr, sizeof wr, "%lld", wrong);
    else
        snprintf(wr, sizeof wr, "n/a");
    fprintf(f, "%12lld %12lld %5s %6s %12.2f %9.3f %9.3f %7s", r->size_bytes,
            r->size_bytes / runtime_dtype_bytes(o->dtype), runtime_dtype_nccl(o->dtype),
            coll_is_reduction(p->coll) ? "sum" : "none",
            t, algbw, algbw * coll_busbw_factor(p->coll, p->ngpus), wr);
    if (r->has_bound && t > 0)
        fprintf(f, " %12.2f %6.3f", r->bound_us, r->bound_us / t);
    else
        fprintf(f, " %12s %6s", "-", "-");
    if (o->variants) {
        /* every variant but the default, whose time is the row's */
        fprintf(f, " ");
        for (int i = 1; i < VAR_COUNT; i++) {
            if (i == VAR_NCCL_EST)
                continue;
            if (vt && vt->us[i] >= 0)
                fprintf(f, " %s %.2f", variant_get((variant_id)i)->name, vt->us[i]);
            else
                fprintf(f, " %s -", variant_get((variant_id)i)->name);
        }
    }
    if (!r->verified)
        fprintf(f, "  FAILED: %s", verdict_msg(r));
    else if (!data)
        fprintf(f, "  timing only (buffers too large to check)");
    fprintf(f, "\n");
}

int run_sweep(FILE *f, const prog *p, const topo *t, const run_opts *o, long long lo,
              long long hi, int json, const char *file, tc_err *err)
{
    if (lo <= 0 || hi < lo)
        return tc_err_set(err, TC_INPUT, "--sweep: need LO:HI with 0 < LO <= HI");
    cJSON *rows = cJSON_CreateArray();
    int all_ok = 1, rc = TC_OK, nrows = 0;
    long long last = 0;
    run_variant_set vset;
    memset(&vset, 0, sizeof vset);
    int tiles = run_tiles(o, t);
    for (long long size = lo; size <= hi; size *= 2) {
        /* A call runs at a whole number of elements per chunk: sizes that
         * round to one such size are one row, and a size that rounds past
         * HI is no row (nor is any after it). */
        long long served = sweep_size(p, size, tiles);
        if (served > hi)
            break;
        if (served == last) {
            if (size > hi / 2)
                break;
            continue;
        }
        last = served;
        run_opts ro = *o;
        ro.size_bytes = served;
        int data = o->data && data_bytes_needed(p, 0, ro.size_bytes / p->nchunksperloop) <=
                                  (double)RUN_SWEEP_DATA_MAX;
        ro.data = data;
        run_report r;
        rc = run_schedule(p, t, &ro, &r, err);
        if (rc == TC_OK && r.refused)   /* the loader's rules hold at no size */
            rc = tc_err_set(err, TC_INPUT, "%s", verdict_msg(&r));
        if (rc != TC_OK) {
            run_report_free(&r);
            break;
        }
        all_ok &= r.verified;
        if (!json && nrows == 0) {  /* after the first run: a refused file prints nothing */
            fprintf(f, "# %s: %s, %d ranks, topology %s%s\n",
                    file, coll_name(p->coll), p->ngpus, t->name,
                    t->is_default ? " (default, assumed figures)" : "");
            if (sweep_size(p, lo, tiles) != lo)
                fprintf(f, "# a call is a whole number of 4-byte elements in each of %d chunks: "
                           "a size runs rounded up to a multiple of %lld B, once however many "
                           "sizes round to it%s\n", p->nchunksperloop, sweep_size(p, 1, 0),
                        tiles ? "; in the runtimes' passes also to a chunk their pass count "
                                "splits into equal tiles" : "");
            fprintf(f, "#%11s %12s %5s %6s %12s %9s %9s %7s %12s %6s%s\n", "size(B)", "count",
                    "type", "redop", "time(us)", "algbw", "busbw", "#wrong", "bound(us)", "ratio",
                    o->variants ? "  time(us) under the model variants" : "");
        }
        nrows++;
        variant_times vt;
        int mode = sweep_mode(&r);
        if (o->variants && r.verified && mode >= 0)
            run_variants(p, t, &ro, served, mode, run_report_time_us(&r), &vset, &vt);
        const variant_times *vp = o->variants && r.verified && mode >= 0 ? &vt : NULL;
        if (json)
            cJSON_AddItemToArray(rows, sweep_row_json(p, &r, &ro, data, vp));
        else
            sweep_row_text(f, p, &r, &ro, data, vp);
        run_report_free(&r);
        if (size > hi / 2)
            break;
    }
    if (rc == TC_OK && nrows == 0)
        rc = tc_err_set(err, TC_INPUT, "--sweep %lld:%lld: no size in the range can be run: a "
                        "call is a whole number of 4-byte elements in each of %d chunks, a "
                        "multiple of %lld B (the nearest: %lld B)", lo, hi, p->nchunksperloop,
                        sweep_size(p, 1, 0), sweep_size(p, lo, tiles));
    if (rc == TC_OK && json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "file", file ? file : "");
        cJSON_AddStringToObject(j, "collective", coll_name(p->coll));
        cJSON_AddNumberToObject(j, "ngpus", p->ngpus);
        cJSON_AddStringToObject(j, "topology", t->name ? t->name : "");
        cJSON_AddBoolToObject(j, "topology_default", t->is_default);
        cJSON_AddBoolToObject(j, "verified", all_ok);
        if (o->bound)
            cJSON_AddItemToObject(j, "lower_bound_model", bound_json(o->bound));
        cJSON_AddItemToObject(j, "rows", rows);
        rows = NULL;
        if (all_ok)
            cJSON_AddNullToObject(j, "error");
        else
            cJSON_AddStringToObject(j, "error", "some sizes did not verify (see the rows)");
        char *out = cJSON_PrintUnformatted(j);
        fprintf(f, "%s\n", out);
        free(out);
        cJSON_Delete(j);
    }
    cJSON_Delete(rows);
    run_variant_set_free(&vset);
    if (rc != TC_OK)
        return rc;
    return all_ok ? TC_OK : TC_WRONG;
}
