/* lp.c — the LP/MILP wrapper (see lp.h): the problem object and
 * lp_solve(), in front of two backends.
 *
 * The problem lives in our own arrays (columns, rows in compressed row form)
 * until lp_solve(), which copies it into a fresh glp_prob (or Cbc_Model),
 * runs the solver, copies the solution back and deletes the solver's copy.
 * Keeping the model on our side makes argument errors values instead of
 * GLPK's fatal xerror() (duplicate indices, bad bounds and names abort the
 * process inside GLPK), lets an incumbent be checked against the real rows
 * (glp_ios_heur_sol checks only integrality), and lets a second backend,
 * CBC, take the same arrays.
 *
 * This file: the problem's arrays and their setters and getters, the stop
 * flag, and lp_solve() with what both backends need (the incumbent checked
 * against every bound and row, the clock, the objective and row activities
 * of a solution, the one-line description of the outcome).  Each backend
 * has its own file, so each holds one solver's API and quirks: lp_glpk.c
 * (GLPK, in this process; also lp_write, which uses GLPK's LP writer) and
 * lp_cbc.c (CBC, in a child process). */
#include "lp_int.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../util/mem.h"

#define LP_FEAS_TOL 1e-6        /* incumbent check: bound/row/integrality slack */
#define LP_NAME_MAX 255         /* GLPK's limit on symbolic names */

/* ------------------------------------------------------------ memory */

static char *xstrdup_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (n > LP_NAME_MAX)
        n = LP_NAME_MAX;
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    /* GLPK rejects control characters in names (fatally). */
    for (char *c = d; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '_';
    return d;
}

/* New capacity >= need (doubling), or 0 when *cap already suffices. */
static int new_cap(int cap, int need)
{
    if (need <= cap)
        return 0;
    long long nc = cap ? cap : 16;
    while (nc < need)
        nc *= 2;
    return nc > INT_MAX ? INT_MAX : (int)nc;
}

static void reserve_cols(lp *p, int need)
{
    int nc = new_cap(p->cap_cols, need);
    if (!nc)
        return;
    p->clb = xrealloc(p->clb, (size_t)nc * sizeof *p->clb);
    p->cub = xrealloc(p->cub, (size_t)nc * sizeof *p->cub);
    p->cobj = xrealloc(p->cobj, (size_t)nc * sizeof *p->cobj);
    p->cint = xrealloc(p->cint, (size_t)nc * sizeof *p->cint);
    p->cname = xrealloc(p->cname, (size_t)nc * sizeof *p->cname);
    p->cap_cols = nc;
}

/* Row arrays hold `need` rows; rstart holds need + 1 entries. */
static void reserve_rows(lp *p, int need)
{
    int nc = new_cap(p->cap_rows, need);
    if (!nc)
        return;
    p->rlb = xrealloc(p->rlb, (size_t)nc * sizeof *p->rlb);
    p->rub = xrealloc(p->rub, (size_t)nc * sizeof *p->rub);
    p->rname = xrealloc(p->rname, (size_t)nc * sizeof *p->rname);
    p->rstart = xrealloc(p->rstart, ((size_t)nc + 1) * sizeof *p->rstart);
    p->cap_rows = nc;
}

static void reserve_nz(lp *p, int need)
{
    int nc = new_cap(p->cap_nz, need);
    if (!nc)
        return;
    p->ridx = xrealloc(p->ridx, (size_t)nc * sizeof *p->ridx);
    p->rval = xrealloc(p->rval, (size_t)nc * sizeof *p->rval);
    p->cap_nz = nc;
}

/* Record the first argument error; later calls keep it. */
static int mark_broken(lp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int mark_broken(lp *p, const char *fmt, ...)
{
    if (p && !p->broken[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->broken, sizeof p->broken, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void forget_solution(lp *p)
{
    p->has_sol = 0;
}

/* ------------------------------------------------------------ stopping */

/* The stop request (see lp.h): set from a signal handler, so nothing but a
 * volatile sig_atomic_t. */
volatile sig_atomic_t lp_stop_flag;

void lp_request_stop(void)
{
    lp_stop_flag = 1;
}

int lp_stop_requested(void)
{
    return lp_stop_flag != 0;
}

void lp_clear_stop(void)
{
    lp_stop_flag = 0;
}

int lp_stopped(const lp *p, lp_result *r, tc_err *err)
{
    r->status = LP_UNSOLVED;
    snprintf(r->msg, sizeof r->msg, "%.40s: interrupted", p->name);
    return tc_err_set(err, TC_STOP, "interrupted");
}

/* ------------------------------------------------------------ building */

void lp_opts_init(lp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit_s = 0;
    o->mip_gap = 0;
    o->presolve = 1;
    o->verbose = 0;
    o->backend = LP_GLPK;
    o->incumbent = NULL;
    o->progress_every_s = 2;
}

void lp_progress_stderr(void *ctx, const lp_progress *at)
{
    char b[200];
    int n = snprintf(b, sizeof b, "%s: %.1f s", ctx ? (const char *)ctx : "lp", at->seconds);
    if (isfinite(at->incumbent))
        n += snprintf(b + n, sizeof b - (size_t)n, ", incumbent %.6g", at->incumbent);
    if (isfinite(at->bound))
        n += snprintf(b + n, sizeof b - (size_t)n, ", bound %.6g", at->bound);
    if (isfinite(at->incumbent) && isfinite(at->bound))
        n += snprintf(b + n, sizeof b - (size_t)n, ", gap %.3g%%",
                      100 * fabs(at->incumbent - at->bound) / (fabs(at->incumbent) + 1e-9));
    if (at->nodes > 0)
        snprintf(b + n, sizeof b - (size_t)n, ", %d nodes", at->nodes);
    fprintf(stderr, "%s\n", b);
}

lp *lp_new(const char *name)
{
    lp *p = xrealloc(NULL, sizeof *p);
    memset(p, 0, sizeof *p);
    p->name = xstrdup_or_null(name ? name : "lp");
    p->minimize = 1;
    p->rstart = xrealloc(NULL, sizeof *p->rstart);
    p->rstart[0] = 0;
    return p;
}

void lp_free(lp *p)
{
    if (!p)
        return;
    for (int j = 0; j < p->ncols; j++)
        free(p->cname[j]);
    for (int i = 0; i < p->nrows; i++)
        free(p->rname[i]);
    free(p->name);
    free(p->clb);
    free(p->cub);
    free(p->cobj);
    free(p->cint);
    free(p->cname);
    free(p->rlb);
    free(p->rub);
    free(p->rname);
    free(p->rstart);
    free(p->ridx);
    free(p->rval);
    free(p->x);
    free(p->ract);
    free(p);
}

static int bad_bounds(double lb, double ub)
{
    return isnan(lb) || isnan(ub) || lb > ub || lb == INFINITY || ub == -INFINITY;
}

static int integral_or_inf(double v)
{
    return isinf(v) || v == floor(v);
}

static const char *col_label(const lp *p, int j, char *buf, size_t n)
{
    if (j >= 0 && j < p->ncols && p->cname[j])
        snprintf(buf, n, "column %d '%s'", j, p->cname[j]);
    else
        snprintf(buf, n, "column %d", j);
    return buf;
}

static const char *row_label(const lp *p, int i, char *buf, size_t n)
{
    if (i >= 0 && i < p->nrows && p->rname[i])
        snprintf(buf, n, "row %d '%s'", i, p->rname[i]);
    else
        snprintf(buf, n, "row %d", i);
    return buf;
}

int lp_add_col(lp *p, const char *name, double lb, double ub, double obj, int is_int)
{
    if (!p)
        return -1;
    if (bad_bounds(lb, ub))
        return mark_broken(p, "column '%s': invalid bounds [%g, %g]", name ? name : "?", lb,
                           ub);
    if (!isfinite(obj))
        return mark_broken(p, "column '%s': objective coefficient %g is not finite",
                           name ? name : "?", obj);
    if (is_int && (!integral_or_inf(lb) || !integral_or_inf(ub)))
        return mark_broken(p, "column '%s': integer column with non-integral bounds [%g, %g]",
                           name ? name : "?", lb, ub);
    if (p->ncols == INT_MAX - 1)
        return mark_broken(p, "too many columns");
    int j = p->ncols;
    reserve_cols(p, j + 1);
    p->clb[j] = lb;
    p->cub[j] = ub;
    p->cobj[j] = obj;
    p->cint[j] = is_int ? 1 : 0;
    p->cname[j] = xstrdup_or_null(name);
    p->ncols = j + 1;
    forget_solution(p);
    return j;
}

/* Sort (index, value) pairs of one row by index, merge duplicates, drop zeros.
 * Small rows use insertion sort; large ones qsort. */
typedef struct {
    int j;
    double v;
} lp_entry;

static int cmp_entry(const void *a, const void *b)
{
    const lp_entry *x = a, *y = b;
    return (x->j > y->j) - (x->j < y->j);
}

int lp_add_row(lp *p, const char *name, double lb, double ub, int n, const int *cols,
               const double *vals)
{
    if (!p)
        return -1;
    if (bad_bounds(lb, ub))
        return mark_broken(p, "row '%s': invalid bounds [%g, %g]", name ? name : "?", lb, ub);
    if (n < 0 || (n > 0 && (!cols || !vals)))
        return mark_broken(p, "row '%s': %d coefficients without arrays", name ? name : "?",
                           n);
    for (int k = 0; k < n; k++) {
        if (cols[k] < 0 || cols[k] >= p->ncols)
            return mark_broken(p, "row '%s': unknown column %d (there are %d)",
                               name ? name : "?", cols[k], p->ncols);
        if (!isfinite(vals[k]))
            return mark_broken(p, "row '%s': coefficient %g of column %d is not finite",
                               name ? name : "?", vals[k], cols[k]);
    }
    if (p->nrows == INT_MAX - 1 || p->nnz > INT_MAX - 1 - n)
        return mark_broken(p, "too many rows or coefficients");
    lp_entry *e = xrealloc(NULL, (size_t)(n ? n : 1) * sizeof *e);
    for (int k = 0; k < n; k++) {
        e[k].j = cols[k];
        e[k].v = vals[k];
    }
    qsort(e, (size_t)n, sizeof *e, cmp_entry);
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (m > 0 && e[m - 1].j == e[k].j)
            e[m - 1].v += e[k].v;
        else
            e[m++] = e[k];
    }
    int i = p->nrows;
    reserve_rows(p, i + 1);
    reserve_nz(p, p->nnz + m);
    for (int k = 0; k < m; k++) {
        if (e[k].v == 0.0)
            continue;
        p->ridx[p->nnz] = e[k].j;
        p->rval[p->nnz] = e[k].v;
        p->nnz++;
    }
    free(e);
    p->rlb[i] = lb;
    p->rub[i] = ub;
    p->rname[i] = xstrdup_or_null(name);
    p->rstart[i + 1] = p->nnz;
    p->nrows = i + 1;
    forget_solution(p);
    return i;
}

void lp_set_minimize(lp *p, int minimize)
{
    if (p) {
        p->minimize = minimize ? 1 : 0;
        forget_solution(p);
    }
}

int lp_set_obj(lp *p, int col, double coef)
{
    if (!p)
        return -1;
    if (col < 0 || col >= p->ncols)
        return mark_broken(p, "objective: unknown column %d", col);
    if (!isfinite(coef))
        return mark_broken(p, "objective: coefficient %g of column %d is not finite", coef, col);
    p->cobj[col] = coef;
    forget_solution(p);
    return 0;
}

int lp_set_obj_const(lp *p, double c)
{
    if (!p)
        return -1;
    if (!isfinite(c))
        return mark_broken(p, "objective: constant %g is not finite", c);
    p->obj0 = c;
    forget_solution(p);
    return 0;
}

int lp_set_col_bounds(lp *p, int col, double lb, double ub)
{
    char b[300];
    if (!p)
        return -1;
    if (col < 0 || col >= p->ncols)
        return mark_broken(p, "bounds: unknown column %d", col);
    if (bad_bounds(lb, ub))
        return mark_broken(p, "%s: invalid bounds [%g, %g]", col_label(p, col, b, sizeof b), lb,
                           ub);
    if (p->cint[col] && (!integral_or_inf(lb) || !integral_or_inf(ub)))
        return mark_broken(p, "%s: integer column with non-integral bounds [%g, %g]",
                           col_label(p, col, b, sizeof b), lb, ub);
    p->clb[col] = lb;
    p->cub[col] = ub;
    forget_solution(p);
    return 0;
}

int lp_set_row_bounds(lp *p, int row, double lb, double ub)
{
    char b[300];
    if (!p)
        return -1;
    if (row < 0 || row >= p->nrows)
        return mark_broken(p, "bounds: unknown row %d", row);
    if (bad_bounds(lb, ub))
        return mark_broken(p, "%s: invalid bounds [%g, %g]", row_label(p, row, b, sizeof b), lb,
                           ub);
    p->rlb[row] = lb;
    p->rub[row] = ub;
    forget_solution(p);
    return 0;
}

int lp_ncols(const lp *p) { return p ? p->ncols : 0; }
int lp_nrows(const lp *p) { return p ? p->nrows : 0; }
int lp_nnz(const lp *p) { return p ? p->nnz : 0; }

int lp_is_mip(const lp *p)
{
    if (!p)
        return 0;
    for (int j = 0; j < p->ncols; j++)
        if (p->cint[j])
            return 1;
    return 0;
}

double lp_value(const lp *p, int col)
{
    if (!p || !p->has_sol || col < 0 || col >= p->ncols)
        return NAN;
    return p->x[col];
}

double lp_row_value(const lp *p, int row)
{
    if (!p || !p->has_sol || row < 0 || row >= p->nrows)
        return NAN;
    return p->ract[row];
}

const char *lp_status_name(lp_status s)
{
    switch (s) {
    case LP_UNSOLVED: return "unsolved";
    case LP_OPTIMAL: return "optimal";
    case LP_FEASIBLE: return "feasible";
    case LP_INFEASIBLE: return "infeasible";
    case LP_UNBOUNDED: return "unbounded";
    case LP_TIME_LIMIT: return "time limit, no solution";
    }
    return "?";
}

const char *lp_backend_name(lp_backend b)
{
    return b == LP_GLPK ? "GLPK" : b == LP_CBC ? "CBC" : "?";
}

/* ------------------------------------------------------------ solving */

double lp_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double lp_objective_of(const lp *p, const double *x)
{
    double s = p->obj0;
    for (int j = 0; j < p->ncols; j++)
        s += p->cobj[j] * x[j];
    return s;
}

void lp_row_activities(const lp *p, const double *x, double *act)
{
    for (int i = 0; i < p->nrows; i++) {
        double s = 0;
        for (int k = p->rstart[i]; k < p->rstart[i + 1]; k++)
            s += p->rval[k] * x[p->ridx[k]];
        act[i] = s;
    }
}

static int outside(double v, double lb, double ub)
{
    return v < lb - LP_FEAS_TOL * (1 + fabs(lb)) || v > ub + LP_FEAS_TOL * (1 + fabs(ub));
}

/* Check the caller's incumbent; on success fill x1 (1-based, integers rounded,
 * continuous values clipped to their bounds) and return 1; else write why. */
static int check_incumbent(const lp *p, const double *inc, double *x1, char *why, size_t n)
{
    char b[300];
    for (int j = 0; j < p->ncols; j++) {
        double v = inc[j];
        if (!isfinite(v)) {
            snprintf(why, n, "%s has value %g", col_label(p, j, b, sizeof b), v);
            return 0;
        }
        if (outside(v, p->clb[j], p->cub[j])) {
            snprintf(why, n, "%s = %g is outside its bounds [%g, %g]",
                     col_label(p, j, b, sizeof b), v, p->clb[j], p->cub[j]);
            return 0;
        }
        if (p->cint[j]) {
            double r = floor(v + 0.5);
            if (fabs(v - r) > LP_FEAS_TOL) {
                snprintf(why, n, "%s = %g is not integral", col_label(p, j, b, sizeof b), v);
                return 0;
            }
            v = r;
        }
        if (v < p->clb[j])
            v = p->clb[j];
        if (v > p->cub[j])
            v = p->cub[j];
        x1[j + 1] = v;
    }
    for (int i = 0; i < p->nrows; i++) {
        double s = 0;
        for (int k = p->rstart[i]; k < p->rstart[i + 1]; k++)
            s += p->rval[k] * x1[p->ridx[k] + 1];
        if (outside(s, p->rlb[i], p->rub[i])) {
            snprintf(why, n, "%s: activity %g is outside [%g, %g]",
                     row_label(p, i, b, sizeof b), s, p->rlb[i], p->rub[i]);
            return 0;
        }
    }
    return 1;
}

void lp_use_incumbent(lp *p, const double *x1, lp_result *r)
{
    memcpy(p->x, x1 + 1, (size_t)p->ncols * sizeof *p->x);
    lp_row_activities(p, p->x, p->ract);
    p->has_sol = 1;
    r->objective = lp_objective_of(p, p->x);
}

double lp_rel_gap(double obj, double bound)
{
    return fabs(obj - bound) / (fabs(obj) + 1e-9);
}

static int solve_empty(lp *p, lp_result *r)
{
    for (int i = 0; i < p->nrows; i++)
        if (outside(0.0, p->rlb[i], p->rub[i])) {
            r->status = LP_INFEASIBLE;
            return TC_OK;
        }
    r->status = LP_OPTIMAL;
    r->objective = r->best_bound = p->obj0;
    r->gap = 0;
    for (int i = 0; i < p->nrows; i++)
        p->ract[i] = 0;
    p->has_sol = 1;
    return TC_OK;
}

static void describe(const lp *p, lp_result *r, const char *note)
{
    int n = snprintf(r->msg, sizeof r->msg, "%s: %s (%d columns, %d rows", p->name,
                     lp_status_name(r->status), p->ncols, p->nrows);
    if (n < 0 || (size_t)n >= sizeof r->msg)
        return;
    if (isfinite(r->objective))
        n += snprintf(r->msg + n, sizeof r->msg - (size_t)n, "; objective %.9g", r->objective);
    if ((size_t)n < sizeof r->msg && isfinite(r->best_bound) && r->gap > 0)
        n += snprintf(r->msg + n, sizeof r->msg - (size_t)n, ", bound %.9g, gap %.3g%%",
                      r->best_bound, 100 * r->gap);
    if ((size_t)n < sizeof r->msg)
        n += snprintf(r->msg + n, sizeof r->msg - (size_t)n, ", %.3f s)", r->seconds);
    if ((size_t)n < sizeof r->msg && note[0])
        snprintf(r->msg + n, sizeof r->msg - (size_t)n, "; %.200s", note);
}

int lp_solve(lp *p, const lp_opts *o, lp_result *r, tc_err *err)
{
    lp_opts defaults;
    lp_result dummy;
    if (!r)
        r = &dummy;
    memset(r, 0, sizeof *r);
    r->status = LP_UNSOLVED;
    r->objective = r->best_bound = r->gap = NAN;
    r->incumbent_used = -1;
    if (!o) {
        lp_opts_init(&defaults);
        o = &defaults;
    }
    if (!p)
        return tc_err_set(err, TC_INPUT, "lp_solve: no problem");
    forget_solution(p);
    if (p->broken[0]) {
        snprintf(r->msg, sizeof r->msg, "%.40s: %.200s", p->name, p->broken);
        return tc_err_set(err, TC_INPUT, "LP model '%s' is invalid: %s", p->name, p->broken);
    }
    if (o->backend != LP_GLPK && o->backend != LP_CBC)
        return tc_err_set(err, TC_INPUT, "unknown LP backend %d", (int)o->backend);
    if (isnan(o->time_limit_s) || isnan(o->mip_gap) || o->mip_gap < 0 || o->mem_limit_mb < 0)
        return tc_err_set(err, TC_INPUT, "LP options: invalid time limit, MIP gap or memory limit");
    double t0 = lp_now_s();
    p->x = xrealloc(p->x, (size_t)(p->ncols ? p->ncols : 1) * sizeof *p->x);
    p->ract = xrealloc(p->ract, (size_t)(p->nrows ? p->nrows : 1) * sizeof *p->ract);
    int mip = lp_is_mip(p);

    /* The incumbent: checked here, since GLPK trusts it blindly (and CBC's
     * MIP start fills in only what it is not given). */
    double *x1 = NULL;
    if (o->incumbent) {
        char why[400];
        x1 = xrealloc(NULL, (size_t)(p->ncols + 1) * sizeof *x1);
        x1[0] = 0;
        if (!mip) {
            r->incumbent_used = 0;
            snprintf(r->msg, sizeof r->msg, "incumbent ignored: '%s' has no integer columns",
                     p->name);
            free(x1);
            x1 = NULL;
        } else if (!check_incumbent(p, o->incumbent, x1, why, sizeof why)) {
            r->incumbent_used = 0;
            snprintf(r->msg, sizeof r->msg, "incumbent rejected: %.200s", why);
            free(x1);
            x1 = NULL;
        }
    }
    char keep_msg[sizeof r->msg];
    memcpy(keep_msg, r->msg, sizeof keep_msg);
    r->msg[0] = '\0';

    int rc;
    if (lp_stop_flag)
        rc = lp_stopped(p, r, err);
    else if (p->ncols == 0)
        rc = solve_empty(p, r);
    else if (o->backend == LP_CBC)
        rc = lp_cbc_solve(p, o, t0, x1, mip, r, err);
    else
        rc = lp_glpk_solve(p, o, t0, x1, mip, r, err);
    free(x1);
    if (r->status == LP_OPTIMAL && !isfinite(r->best_bound))
        r->best_bound = r->objective;
    if (r->status == LP_OPTIMAL && !isfinite(r->gap))
        r->gap = 0;
    r->seconds = lp_now_s() - t0;
    if (rc == TC_OK)
        describe(p, r, keep_msg);
    return rc;
}
