/* lp_glpk.c — the GLPK backend of lp_solve() (see lp.h), and lp_write().
 *
 * The problem is copied into a fresh glp_prob for each solve and deleted
 * after it.  A pure LP goes to glp_simplex (or glp_interior, with
 * opts.method LP_INTERIOR).
 *
 * MILP path without presolve (or with an incumbent): glp_simplex on the
 * root LP, then glp_intopt from that basis with a callback that (a) offers
 * the incumbent once, at the first GLP_IHEUR request, and (b) records the
 * best active node's bound so a time-limited run still reports a proven
 * bound.  The wall-clock limit covers both calls: glp_intopt gets what the
 * root LP left.  The callback also serves a stop request
 * (glp_ios_terminate), and glp_error_hook turns GLPK's fatal errors (its
 * memory limit among them) into an error value instead of an abort.
 *
 * Kept apart from CBC's backend (lp_cbc.c): the two share only the problem
 * arrays and the helpers in lp.c. */
#include "lp_int.h"

#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

/* ------------------------------------------------------------ GLPK problem */

static int glp_bound_type(double lb, double ub)
{
    int lo = isfinite(lb), hi = isfinite(ub);
    if (lo && hi)
        return lb == ub ? GLP_FX : GLP_DB;
    if (lo)
        return GLP_LO;
    if (hi)
        return GLP_UP;
    return GLP_FR;
}

static double fin(double v)
{
    return isfinite(v) ? v : 0.0;
}

/* The matrix triplets handed to glp_load_matrix; the caller owns them so
 * that a GLPK fatal error (a jump out of glp_load_matrix) cannot leak them. */
typedef struct {
    int *ia, *ja;
    double *ar;
} triplets;

static void triplets_free(triplets *t)
{
    free(t->ia);
    free(t->ja);
    free(t->ar);
    t->ia = t->ja = NULL;
    t->ar = NULL;
}

static glp_prob *build_glpk(const lp *p, triplets *tr)
{
    glp_prob *P = glp_create_prob();
    glp_set_prob_name(P, p->name);
    glp_set_obj_dir(P, p->minimize ? GLP_MIN : GLP_MAX);
    glp_set_obj_coef(P, 0, p->obj0);
    if (p->nrows > 0)
        glp_add_rows(P, p->nrows);
    if (p->ncols > 0)
        glp_add_cols(P, p->ncols);
    for (int i = 0; i < p->nrows; i++) {
        glp_set_row_bnds(P, i + 1, glp_bound_type(p->rlb[i], p->rub[i]), fin(p->rlb[i]),
                         fin(p->rub[i]));
        if (p->rname[i] && p->rname[i][0])
            glp_set_row_name(P, i + 1, p->rname[i]);
    }
    for (int j = 0; j < p->ncols; j++) {
        glp_set_col_bnds(P, j + 1, glp_bound_type(p->clb[j], p->cub[j]), fin(p->clb[j]),
                         fin(p->cub[j]));
        glp_set_obj_coef(P, j + 1, p->cobj[j]);
        if (p->cint[j])
            glp_set_col_kind(P, j + 1, GLP_IV);
        if (p->cname[j] && p->cname[j][0])
            glp_set_col_name(P, j + 1, p->cname[j]);
    }
    if (p->nnz > 0) {
        int *ia = tr->ia = xrealloc(NULL, (size_t)(p->nnz + 1) * sizeof *ia);
        int *ja = tr->ja = xrealloc(NULL, (size_t)(p->nnz + 1) * sizeof *ja);
        double *ar = tr->ar = xrealloc(NULL, (size_t)(p->nnz + 1) * sizeof *ar);
        for (int i = 0; i < p->nrows; i++)
            for (int k = p->rstart[i]; k < p->rstart[i + 1]; k++) {
                ia[k + 1] = i + 1;
                ja[k + 1] = p->ridx[k] + 1;
                ar[k + 1] = p->rval[k];
            }
        glp_load_matrix(P, p->nnz, ia, ja, ar);
        triplets_free(tr);
    }
    return P;
}

/* ------------------------------------------------------------ solving */

/* Milliseconds left of the budget for GLPK's tm_lim (INT_MAX = none). */
static int ms_left(const lp_opts *o, double t0)
{
    if (!(o->time_limit_s > 0))
        return INT_MAX;
    double left = o->time_limit_s - (lp_now_s() - t0);
    if (left <= 0)
        return 0;
    double ms = ceil(left * 1e3);
    return ms >= INT_MAX ? INT_MAX : (int)ms;
}

/* GLPK's terminal output during a call: with verbose, to stderr (stdout
 * stays clean for output); else only a fatal error's text arrives (GLPK
 * turns its output on for it), kept here for the error message. */
typedef struct {
    int verbose;
    char text[200];
} term_sink;

static int term_hook(void *info, const char *s)
{
    term_sink *k = info;
    if (k->verbose)
        fputs(s, stderr);
    if (!k->text[0] && s[0] && s[0] != '\n') {
        snprintf(k->text, sizeof k->text, "%s", s);
        k->text[strcspn(k->text, "\n")] = '\0';
    }
    return 1;
}

typedef struct {
    const double *x1;       /* incumbent, 1-based, or NULL */
    int offered;
    int accepted;
    int have_bound;
    double bound;
    int nodes;
    int stopped;            /* terminated on a stop request */
    const lp_opts *o;       /* for the progress hook */
    double t0, last;        /* the solve's start, the last progress report */
} ios_info;

/* Tell o->progress where the search is, at most every progress_every_s. */
static void ios_progress(glp_tree *T, ios_info *I)
{
    const lp_opts *o = I->o;
    if (!o || !o->progress)
        return;
    double now = lp_now_s();
    double every = o->progress_every_s > 0 ? o->progress_every_s : 2;
    if (now - I->last < every)
        return;
    I->last = now;
    glp_prob *P = glp_ios_get_prob(T);
    int st = glp_mip_status(P);
    lp_progress at = {now - I->t0,
                      st == GLP_FEAS || st == GLP_OPT ? glp_mip_obj_val(P) : NAN,
                      I->have_bound ? I->bound : NAN, I->nodes};
    o->progress(o->progress_ctx, &at);
}

static void ios_callback(glp_tree *T, void *info)
{
    ios_info *I = info;
    if (lp_stop_flag) {
        I->stopped = 1;
        glp_ios_terminate(T);
        return;
    }
    int reason = glp_ios_reason(T);
    if (reason == GLP_IHEUR && I->x1 && !I->offered) {
        I->offered = 1;
        I->accepted = glp_ios_heur_sol(T, I->x1) == 0;
    }
    if (reason == GLP_ISELECT || reason == GLP_IBINGO || reason == GLP_IHEUR) {
        int best = glp_ios_best_node(T);
        /* a node not solved yet has the bound -DBL_MAX: no bound */
        double b = best ? glp_ios_node_bound(T, best) : NAN;
        if (isfinite(b) && fabs(b) < 1e300) {
            I->bound = b;
            I->have_bound = 1;
        }
        int a, n, t;
        glp_ios_tree_size(T, &a, &n, &t);
        I->nodes = t;
    }
    ios_progress(T, I);
}

static const char *glpk_code_name(int ret)
{
    switch (ret) {
    case GLP_EBADB: return "invalid initial basis";
    case GLP_ESING: return "singular basis matrix";
    case GLP_ECOND: return "ill-conditioned basis matrix";
    case GLP_EBOUND: return "invalid bounds";
    case GLP_EFAIL: return "solver failure";
    case GLP_EITLIM: return "iteration limit";
    case GLP_EROOT: return "root LP optimum not provided";
    case GLP_ESTOP: return "stopped";
    default: return "unexpected return code";
    }
}

/* Outcome of one glp_simplex call. */
typedef struct {
    int ok;             /* 0: numerical failure, ret in glp_ret */
    int glp_ret;
    lp_status status;
} simplex_out;

static simplex_out run_simplex(glp_prob *P, const lp_opts *o, int presolve, int tm_ms)
{
    simplex_out out = {1, 0, LP_UNSOLVED};
    glp_smcp s;
    glp_init_smcp(&s);
    s.msg_lev = o->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    s.presolve = presolve ? GLP_ON : GLP_OFF;
    s.meth = o->method == LP_DUAL ? GLP_DUALP : GLP_PRIMAL;
    if (tm_ms < INT_MAX)
        s.tm_lim = tm_ms > 0 ? tm_ms : 1;
    int ret = glp_simplex(P, &s);
    if (ret == GLP_ESING || ret == GLP_ECOND || ret == GLP_EBADB) {
        /* One retry from a fresh basis, without presolve. */
        glp_std_basis(P);
        s.presolve = GLP_OFF;
        ret = glp_simplex(P, &s);
    }
    out.glp_ret = ret;
    switch (ret) {
    case 0:
        switch (glp_get_status(P)) {
        case GLP_OPT: out.status = LP_OPTIMAL; break;
        case GLP_NOFEAS: out.status = LP_INFEASIBLE; break;
        case GLP_UNBND: out.status = LP_UNBOUNDED; break;
        case GLP_FEAS: out.status = LP_FEASIBLE; break;
        default: out.ok = 0; break;
        }
        break;
    case GLP_ETMLIM:
        out.status = glp_get_status(P) == GLP_FEAS ? LP_FEASIBLE : LP_TIME_LIMIT;
        break;
    case GLP_ENOPFS:
        out.status = LP_INFEASIBLE;
        break;
    case GLP_ENODFS:
        /* The presolver found no dual feasible point: primal unbounded or
         * infeasible.  Tell which without presolve. */
        glp_std_basis(P);
        return run_simplex(P, o, 0, tm_ms);
    default:
        out.ok = 0;
        break;
    }
    return out;
}

static void copy_lp_solution(lp *p, glp_prob *P)
{
    for (int j = 0; j < p->ncols; j++)
        p->x[j] = glp_get_col_prim(P, j + 1);
    for (int i = 0; i < p->nrows; i++)
        p->ract[i] = glp_get_row_prim(P, i + 1);
    p->has_sol = 1;
}

static void copy_mip_solution(lp *p, glp_prob *P)
{
    for (int j = 0; j < p->ncols; j++)
        p->x[j] = glp_mip_col_val(P, j + 1);
    for (int i = 0; i < p->nrows; i++)
        p->ract[i] = glp_mip_row_val(P, i + 1);
    p->has_sol = 1;
}

static int fail(lp_result *r, tc_err *err, const char *what, int ret)
{
    r->status = LP_UNSOLVED;
    snprintf(r->msg, sizeof r->msg, "GLPK %s failed: %s", what, glpk_code_name(ret));
    return tc_err_set(err, TC_INPUT, "%s", r->msg);
}

/* Interior point; 1 if it reached an optimum (solution copied), else 0. */
static int try_interior(lp *p, glp_prob *P, const lp_opts *o, lp_result *r)
{
    glp_iptcp ip;
    glp_init_iptcp(&ip);
    ip.msg_lev = o->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    if (p->nrows == 0 || glp_interior(P, &ip) != 0 || glp_ipt_status(P) != GLP_OPT)
        return 0;
    for (int j = 0; j < p->ncols; j++)
        p->x[j] = glp_ipt_col_prim(P, j + 1);
    for (int i = 0; i < p->nrows; i++)
        p->ract[i] = glp_ipt_row_prim(P, i + 1);
    p->has_sol = 1;
    r->status = LP_OPTIMAL;
    r->objective = r->best_bound = glp_ipt_obj_val(P);
    r->gap = 0;
    return 1;
}

static int solve_pure_lp(lp *p, glp_prob *P, const lp_opts *o, double t0, lp_result *r,
                         tc_err *err)
{
    if (o->method == LP_INTERIOR && try_interior(p, P, o, r))
        return TC_OK;
    simplex_out s = run_simplex(P, o, o->presolve, ms_left(o, t0));
    if (!s.ok)
        return fail(r, err, "simplex", s.glp_ret);
    r->status = s.status;
    if (s.status == LP_OPTIMAL || s.status == LP_FEASIBLE) {
        copy_lp_solution(p, P);
        r->objective = glp_get_obj_val(P);
        if (s.status == LP_OPTIMAL) {
            r->best_bound = r->objective;
            r->gap = 0;
        }
    }
    return TC_OK;
}

/* Branch-and-cut from the root.  x1 is the checked incumbent or NULL. */
static int solve_mip(lp *p, glp_prob *P, const lp_opts *o, double t0, const double *x1,
                     lp_result *r, tc_err *err)
{
    int use_presolver = o->presolve && !x1;
    if (!use_presolver) {
        simplex_out s = run_simplex(P, o, o->presolve, ms_left(o, t0));
        if (lp_stop_flag)
            return lp_stopped(p, r, err);
        if (!s.ok)
            return fail(r, err, "simplex (root LP)", s.glp_ret);
        if (s.status != LP_OPTIMAL) {
            if ((s.status == LP_TIME_LIMIT || s.status == LP_FEASIBLE) && x1) {
                /* Out of time in the root LP: the incumbent is the answer. */
                r->status = LP_FEASIBLE;
                r->incumbent_used = 1;
                lp_use_incumbent(p, x1, r);
            } else {
                r->status = s.status == LP_FEASIBLE ? LP_TIME_LIMIT : s.status;
            }
            return TC_OK;
        }
        r->best_bound = glp_get_obj_val(P);
    }
    ios_info I = {x1, 0, 0, 0, 0, 0, 0, o, t0, lp_now_s()};
    glp_iocp c;
    glp_init_iocp(&c);
    c.msg_lev = o->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    c.presolve = use_presolver ? GLP_ON : GLP_OFF;
    c.mip_gap = o->mip_gap > 0 ? o->mip_gap : 0.0;
    c.cb_func = ios_callback;
    c.cb_info = &I;
    if (o->cuts) {
        c.gmi_cuts = GLP_ON;
        c.mir_cuts = GLP_ON;
        c.cov_cuts = GLP_ON;
        c.clq_cuts = GLP_ON;
    }
    if (o->heuristics) {
        c.fp_heur = GLP_ON;
        c.ps_heur = GLP_ON;
    }
    int tm = ms_left(o, t0);
    if (tm < INT_MAX)
        c.tm_lim = tm > 0 ? tm : 1;
    int ret = glp_intopt(P, &c);
    if (I.stopped || lp_stop_flag)
        return lp_stopped(p, r, err);
    r->nodes = I.nodes;
    if (I.have_bound)
        r->best_bound = I.bound;
    if (x1)
        r->incumbent_used = 1;
    int mst = glp_mip_status(P);
    switch (ret) {
    case 0:
    case GLP_EMIPGAP:
    case GLP_ETMLIM:
        if (mst == GLP_OPT || mst == GLP_FEAS) {
            copy_mip_solution(p, P);
            r->objective = glp_mip_obj_val(P);
            if (ret == 0 && mst == GLP_OPT) {
                r->status = LP_OPTIMAL;
                r->best_bound = r->objective;
            } else {
                r->status = ret == GLP_EMIPGAP ? LP_OPTIMAL : LP_FEASIBLE;
            }
        } else if (mst == GLP_NOFEAS) {
            r->status = LP_INFEASIBLE;
        } else if (x1) {
            /* Time ran out before GLPK looked at the incumbent. */
            r->status = LP_FEASIBLE;
            lp_use_incumbent(p, x1, r);
        } else {
            r->status = ret == GLP_ETMLIM ? LP_TIME_LIMIT : LP_INFEASIBLE;
        }
        break;
    case GLP_ENOPFS:
        r->status = LP_INFEASIBLE;
        break;
    case GLP_ENODFS: {
        /* Relaxation unbounded or infeasible: ask the simplex which. */
        simplex_out s = run_simplex(P, o, 0, ms_left(o, t0));
        if (!s.ok)
            return fail(r, err, "simplex (root LP)", s.glp_ret);
        r->status = s.status == LP_OPTIMAL || s.status == LP_FEASIBLE ? LP_UNBOUNDED : s.status;
        break;
    }
    default:
        return fail(r, err, "branch-and-cut", ret);
    }
    if (r->status == LP_OPTIMAL || r->status == LP_FEASIBLE) {
        if (isfinite(r->best_bound)) {
            /* A node bound can sit past the incumbent by tolerance. */
            if (p->minimize ? r->best_bound > r->objective : r->best_bound < r->objective)
                r->best_bound = r->objective;
            r->gap = lp_rel_gap(r->objective, r->best_bound);
        }
    }
    return TC_OK;
}

/* A fatal GLPK error (its memory limit, or anything else GLPK would abort
 * the process for) jumps back to solve_glpk through glp_error_hook.  The
 * guard lives in the caller's frame, so what the hooks write into it is
 * well defined after the jump. */
typedef struct {
    jmp_buf back;
    term_sink sink;
    triplets tr;        /* freed after a jump */
} glpk_guard;

static void on_glpk_error(void *info)
{
    longjmp(((glpk_guard *)info)->back, 1);
}

static int glpk_fatal(const lp *p, const lp_opts *o, const term_sink *k, lp_result *r,
                      tc_err *err)
{
    r->status = LP_UNSOLVED;
    r->out_of_memory = o->mem_limit_mb > 0 && strstr(k->text, "memory") != NULL;
    if (r->out_of_memory)
        snprintf(r->msg, sizeof r->msg, "GLPK exceeded its memory limit of %d MiB on '%.40s' "
                 "(%d columns, %d rows, %d nonzeros)", o->mem_limit_mb, p->name, p->ncols,
                 p->nrows, p->nnz);
    else
        snprintf(r->msg, sizeof r->msg, "GLPK failed on '%.40s': %.150s", p->name,
                 k->text[0] ? k->text : "fatal error");
    return tc_err_set(err, TC_INPUT, "%s", r->msg);
}

/* Build, solve and delete a GLPK problem.  GLPK's terminal output, error
 * hook and memory limit are set for the call and reset after it (after a
 * fatal error glp_free_env resets them, with everything GLPK held). */
static int solve_glpk(lp *p, const lp_opts *o, double t0, const double *x1, int mip,
                      glpk_guard *g, lp_result *r, tc_err *err)
{
    g->sink.verbose = o->verbose;
    g->sink.text[0] = '\0';
    glp_term_hook(term_hook, &g->sink);
    int old_out = glp_term_out(o->verbose ? GLP_ON : GLP_OFF);
    g->tr = (triplets){NULL, NULL, NULL};
    if (setjmp(g->back)) {
        triplets_free(&g->tr);
        glp_free_env();
        return glpk_fatal(p, o, &g->sink, r, err);
    }
    glp_error_hook(on_glpk_error, g);
    if (o->mem_limit_mb > 0)
        glp_mem_limit(o->mem_limit_mb);
    glp_prob *P = build_glpk(p, &g->tr);
    glp_scale_prob(P, GLP_SF_AUTO);
    int rc = mip ? solve_mip(p, P, o, t0, x1, r, err) : solve_pure_lp(p, P, o, t0, r, err);
    glp_delete_prob(P);
    if (o->mem_limit_mb > 0)
        glp_mem_limit(INT_MAX);
    glp_error_hook(NULL, NULL);
    glp_term_out(old_out);
    glp_term_hook(NULL, NULL);
    return rc;
}

/* The GLPK backend (lp_int.h): solve_glpk with its guard in this frame, the
 * caller's, as the guard needs. */
int lp_glpk_solve(lp *p, const lp_opts *o, double t0, const double *x1, int mip, lp_result *r,
                  tc_err *err)
{
    glpk_guard guard;
    return solve_glpk(p, o, t0, x1, mip, &guard, r, err);
}

int lp_write(const lp *p, const char *path, tc_err *err)
{
    if (!p || !path)
        return tc_err_set(err, TC_INPUT, "lp_write: no problem or path");
    if (p->broken[0])
        return tc_err_set(err, TC_INPUT, "LP model '%s' is invalid: %s", p->name, p->broken);
    triplets tr = {NULL, NULL, NULL};
    glp_prob *P = build_glpk(p, &tr);
    int old_out = glp_term_out(GLP_OFF);
    int ret = glp_write_lp(P, NULL, path);
    glp_term_out(old_out);
    glp_delete_prob(P);
    if (ret != 0)
        return tc_err_set(err, TC_INPUT, "%s: cannot write the LP model", path);
    return TC_OK;
}
