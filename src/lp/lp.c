/* lp.c — the LP/MILP wrapper over GLPK and CBC (see lp.h).
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
 * MILP path without presolve (or with an incumbent): glp_simplex on the
 * root LP, then glp_intopt from that basis with a callback that (a) offers
 * the incumbent once, at the first GLP_IHEUR request, and (b) records the
 * best active node's bound so a time-limited run still reports a proven
 * bound.  The wall-clock limit covers both calls: glp_intopt gets what the
 * root LP left.  The callback also serves a stop request
 * (glp_ios_terminate), and glp_error_hook turns GLPK's fatal errors (its
 * memory limit among them) into an error value instead of an abort.
 *
 * CBC path: the rows are transposed into the compressed columns
 * Cbc_loadProblem takes; a MILP runs CbcMain1 (Cbc_solve) with parameters
 * passed as its command-line words, a pure LP only CLP's initialSolve, so
 * the two are read back through different status calls.  Both run in a
 * child process (see the CBC section below for why). */
#include "lp.h"

#include <coin/Cbc_C_Interface.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../util/mem.h"

#define LP_FEAS_TOL 1e-6        /* incumbent check: bound/row/integrality slack */
#define LP_NAME_MAX 255         /* GLPK's limit on symbolic names */

struct lp {
    char *name;
    int minimize;
    double obj0;
    /* columns */
    int ncols, cap_cols;
    double *clb, *cub, *cobj;
    char *cint;
    char **cname;
    /* rows: coefficients of row i are ridx/rval[rstart[i] .. rstart[i+1]) */
    int nrows, cap_rows;
    double *rlb, *rub;
    char **rname;
    int *rstart;
    int nnz, cap_nz;
    int *ridx;
    double *rval;
    /* first argument error, "" if none */
    char broken[256];
    /* last solution */
    int has_sol;
    double *x;                  /* [ncols] */
    double *ract;               /* [nrows] */
};

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
static volatile sig_atomic_t stop_flag;

void lp_request_stop(void)
{
    stop_flag = 1;
}

int lp_stop_requested(void)
{
    return stop_flag != 0;
}

void lp_clear_stop(void)
{
    stop_flag = 0;
}

static int stopped(const lp *p, lp_result *r, tc_err *err)
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Milliseconds left of the budget for GLPK's tm_lim (INT_MAX = none). */
static int ms_left(const lp_opts *o, double t0)
{
    if (!(o->time_limit_s > 0))
        return INT_MAX;
    double left = o->time_limit_s - (now_s() - t0);
    if (left <= 0)
        return 0;
    double ms = ceil(left * 1e3);
    return ms >= INT_MAX ? INT_MAX : (int)ms;
}

static double objective_of(const lp *p, const double *x)
{
    double s = p->obj0;
    for (int j = 0; j < p->ncols; j++)
        s += p->cobj[j] * x[j];
    return s;
}

static void row_activities(const lp *p, const double *x, double *act)
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
} ios_info;

static void ios_callback(glp_tree *T, void *info)
{
    ios_info *I = info;
    if (stop_flag) {
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

static void use_incumbent(lp *p, const double *x1, lp_result *r)
{
    memcpy(p->x, x1 + 1, (size_t)p->ncols * sizeof *p->x);
    row_activities(p, p->x, p->ract);
    p->has_sol = 1;
    r->objective = objective_of(p, p->x);
}

static double rel_gap(double obj, double bound)
{
    return fabs(obj - bound) / (fabs(obj) + 1e-9);
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
        if (stop_flag)
            return stopped(p, r, err);
        if (!s.ok)
            return fail(r, err, "simplex (root LP)", s.glp_ret);
        if (s.status != LP_OPTIMAL) {
            if ((s.status == LP_TIME_LIMIT || s.status == LP_FEASIBLE) && x1) {
                /* Out of time in the root LP: the incumbent is the answer. */
                r->status = LP_FEASIBLE;
                r->incumbent_used = 1;
                use_incumbent(p, x1, r);
            } else {
                r->status = s.status == LP_FEASIBLE ? LP_TIME_LIMIT : s.status;
            }
            return TC_OK;
        }
        r->best_bound = glp_get_obj_val(P);
    }
    ios_info I = {x1, 0, 0, 0, 0, 0, 0};
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
    if (I.stopped || stop_flag)
        return stopped(p, r, err);
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
            use_incumbent(p, x1, r);
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
            r->gap = rel_gap(r->objective, r->best_bound);
        }
    }
    return TC_OK;
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

/* ------------------------------------------------------------ CBC */

/* COIN-OR's infinity is DBL_MAX. */
static double coin_bound(double v)
{
    return v == INFINITY ? DBL_MAX : v == -INFINITY ? -DBL_MAX : v;
}

/* A Cbc_Model holding p: our rows transposed into the compressed columns
 * Cbc_loadProblem takes.  Columns keep CBC's default names (C0000000, ...):
 * Cbc_setMIPStartI hands the start over by name, so names must be unique,
 * which ours need not be.  The objective constant stays on our side. */
static Cbc_Model *build_cbc(const lp *p)
{
    int n = p->ncols, m = p->nrows;
    CoinBigIndex *start = xcalloc((size_t)n + 1, sizeof *start);
    int *fill = xcalloc((size_t)n + 1, sizeof *fill);
    int *index = xmalloc((size_t)(p->nnz ? p->nnz : 1) * sizeof *index);
    double *value = xmalloc((size_t)(p->nnz ? p->nnz : 1) * sizeof *value);
    double *clb = xmalloc((size_t)n * sizeof *clb), *cub = xmalloc((size_t)n * sizeof *cub);
    double *rlb = xmalloc((size_t)(m ? m : 1) * sizeof *rlb);
    double *rub = xmalloc((size_t)(m ? m : 1) * sizeof *rub);
    for (int k = 0; k < p->nnz; k++)
        fill[p->ridx[k] + 1]++;
    for (int j = 0; j < n; j++) {
        fill[j + 1] += fill[j];
        start[j + 1] = fill[j + 1];
        clb[j] = coin_bound(p->clb[j]);
        cub[j] = coin_bound(p->cub[j]);
    }
    for (int i = 0; i < m; i++) {
        rlb[i] = coin_bound(p->rlb[i]);
        rub[i] = coin_bound(p->rub[i]);
        for (int k = p->rstart[i]; k < p->rstart[i + 1]; k++) {
            int at = fill[p->ridx[k]]++;
            index[at] = i;
            value[at] = p->rval[k];
        }
    }
    Cbc_Model *M = Cbc_newModel();
    Cbc_setProblemName(M, p->name);
    Cbc_loadProblem(M, n, m, start, index, value, clb, cub, p->cobj, rlb, rub);
    for (int j = 0; j < n; j++)
        if (p->cint[j])
            Cbc_setInteger(M, j);
    Cbc_setObjSense(M, p->minimize ? 1 : -1);
    free(start);
    free(fill);
    free(index);
    free(value);
    free(clb);
    free(cub);
    free(rlb);
    free(rub);
    return M;
}

/* CBC runs in a child process (fork), for three reasons: CBC 2.10.8
 * (Debian 12) can crash — a SIGSEGV in CglPreProcess::postProcess when its
 * time limit stops a search begun from a MIP start (measured on a routing
 * MILP stopped after 0.05 s: 21 crashes in 40 runs) — and a crash must not
 * take the caller with it; CBC puts its own SIGINT handler in place and
 * does not stop before its root node is done, so a stop request is served
 * by killing the child; and a memory limit can be set on the child alone
 * (setrlimit RLIMIT_AS, on top of what the process already maps).  The
 * child solves, writes a cbc_out and the solution into a pipe and exits;
 * the parent reads them, waits for it and builds the result as for an
 * in-process solve.  The child is single-threaded like the parent ("threads
 * 0") and computes exactly what an in-process solve would.
 *
 * CBC and CLP write through C stdio to stdout, which the CLIs keep for
 * their results (--json).  Log level 0 (Cbc_setLogLevel, and "-log 0 -slog
 * 0" for CbcMain1) silences their logs, but not everything: Cbc_solve
 * printf()s a caught CoinError to stdout whatever the level.  So the child
 * points its fd 1 at /dev/null, or with opts.verbose at stderr (the C
 * interface cannot give CBC's message handler another FILE). */
typedef struct {
    int ok;                     /* the child got this far */
    int status, secondary, nodes;
    int abandoned, optimal, infeasible, lp_primal_infeasible, unbounded, time_up;
    int has_x;                  /* ncols solution values follow */
    double bound;               /* Cbc_getBestPossibleObjValue */
} cbc_out;

/* The child's output: verbose, stdout onto stderr; else both to /dev/null
 * (the C++ runtime's last words on an exception included: the parent
 * reports). */
static void output_to(int verbose)
{
    fflush(stdout);
    if (verbose) {
        dup2(2, 1);
        return;
    }
    int null = open("/dev/null", O_WRONLY);
    if (null < 0)
        return;
    dup2(null, 1);
    dup2(null, 2);
    close(null);
}

/* Take x (n values) as the solution: integer columns rounded (CBC leaves
 * them within its tolerance, GLPK's MIP values are exact), row activities
 * and objective recomputed from the model. */
static void take_solution(lp *p, const double *x, lp_result *r)
{
    for (int j = 0; j < p->ncols; j++)
        p->x[j] = p->cint[j] ? floor(x[j] + 0.5) : x[j];
    row_activities(p, p->x, p->ract);
    p->has_sol = 1;
    r->objective = objective_of(p, p->x);
}

static int cbc_fail(lp_result *r, tc_err *err, const lp *p, const char *why)
{
    r->status = LP_UNSOLVED;
    snprintf(r->msg, sizeof r->msg, "CBC failed on '%.40s': %s", p->name, why);
    return tc_err_set(err, TC_INPUT, "%s", r->msg);
}

/* Pure LP: Cbc_solve hands it straight to CLP (no time limit reaches it). */
static int cbc_lp_result(lp *p, const cbc_out *c, const double *x, lp_result *r, tc_err *err)
{
    if (c->optimal && x) {
        take_solution(p, x, r);
        r->status = LP_OPTIMAL;
        r->best_bound = r->objective;
        r->gap = 0;
    } else if (c->lp_primal_infeasible) {
        r->status = LP_INFEASIBLE;
    } else if (c->infeasible) {
        /* For an LP this also means dual infeasible: primal unbounded. */
        r->status = LP_UNBOUNDED;
    } else {
        return cbc_fail(r, err, p, c->abandoned ? "numerical difficulties in CLP"
                                                : "CLP stopped without a result");
    }
    return TC_OK;
}

/* The incumbent x1 replaces the solution when there is none or it is better. */
static void keep_better_incumbent(lp *p, const double *x1, lp_result *r)
{
    double inc = objective_of(p, x1 + 1);
    double tol = 1e-9 * (1 + fabs(inc));
    if (!p->has_sol || (p->minimize ? inc < r->objective - tol : inc > r->objective + tol)) {
        use_incumbent(p, x1, r);
        if (r->status != LP_OPTIMAL)
            r->status = LP_FEASIBLE;
    }
}

/* MILP: CbcMain1's branch-and-cut.  x1 is the checked incumbent or NULL. */
static int cbc_mip_result(lp *p, const cbc_out *c, const double *best, const double *x1,
                          lp_result *r, tc_err *err)
{
    int st = c->status, sec = c->secondary;
    r->nodes = c->nodes;
    if (x1)
        r->incumbent_used = 1;
    if (st == 2 || c->abandoned)
        return cbc_fail(r, err, p, "numerical difficulties");
    if (isfinite(c->bound) && fabs(c->bound) < 1e300)
        r->best_bound = c->bound + p->obj0;
    if (best) {
        take_solution(p, best, r);
        r->status = c->optimal ? LP_OPTIMAL : LP_FEASIBLE;
    } else if (sec == 7 || c->unbounded) {
        r->status = LP_UNBOUNDED;
    } else if (st == 0 && c->infeasible) {
        r->status = LP_INFEASIBLE;
    } else if (st == 1 || c->time_up) {
        r->status = LP_TIME_LIMIT;
    } else {
        char why[80];
        snprintf(why, sizeof why, "no result (status %d, secondary %d)", st, sec);
        return cbc_fail(r, err, p, why);
    }
    /* The incumbent is checked feasible: if CBC stopped before it looked at
     * it, ended with something worse, or called the model infeasible (CBC
     * also says so when nothing beats the cutoff a MIP start sets), the
     * incumbent is the answer, as on the GLPK path. */
    if (x1 && r->status != LP_UNBOUNDED)
        keep_better_incumbent(p, x1, r);
    if (r->status == LP_OPTIMAL) {
        if (!isfinite(r->best_bound) || sec != 2)
            r->best_bound = r->objective;
    }
    if ((r->status == LP_OPTIMAL || r->status == LP_FEASIBLE) && isfinite(r->best_bound)) {
        if (p->minimize ? r->best_bound > r->objective : r->best_bound < r->objective)
            r->best_bound = r->objective;
        r->gap = rel_gap(r->objective, r->best_bound);
    }
    return TC_OK;
}

static Cbc_Model *cbc_model(const lp *p, const lp_opts *o, double t0, const double *x1, int mip)
{
    Cbc_Model *M = build_cbc(p);
    const char *lev = o->verbose ? "1" : "0";
    Cbc_setLogLevel(M, o->verbose ? 1 : 0);
    if (!mip)
        return M;
    Cbc_setParameter(M, "log", lev);
    Cbc_setParameter(M, "slog", lev);
    /* 0 = no worker threads: branch-and-cut runs in this thread, in the
     * same order every time ("threads 1" would start one worker in CBC's
     * non-deterministic parallel mode). */
    Cbc_setParameter(M, "threads", "0");
    /* opts.time_limit_s is wall clock; CBC counts CPU time by default. */
    Cbc_setParameter(M, "timeMode", "elapsed");
    if (o->time_limit_s > 0) {
        double left = o->time_limit_s - (now_s() - t0);
        Cbc_setMaximumSeconds(M, left > 1e-3 ? left : 1e-3);
    }
    if (o->mip_gap > 0)
        Cbc_setAllowableFractionGap(M, o->mip_gap);
    if (x1) {
        int *idx = xmalloc((size_t)p->ncols * sizeof *idx);
        for (int j = 0; j < p->ncols; j++)
            idx[j] = j;
        Cbc_setMIPStartI(M, p->ncols, idx, x1 + 1);
        free(idx);
    }
    return M;
}

static int write_all_fd(int fd, const void *buf, size_t n)
{
    const char *b = buf;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read n bytes; 1 done, 0 the pipe ended first, -1 a stop was requested. */
static int read_all_fd(int fd, void *buf, size_t n)
{
    char *b = buf;
    while (n > 0) {
        if (stop_flag)
            return -1;
        ssize_t k = read(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        b += k;
        n -= (size_t)k;
    }
    return 1;
}

/* Bytes mapped by this process now (/proc/self/statm), 0 if unknown. */
static unsigned long long mapped_bytes(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    long ps = sysconf(_SC_PAGESIZE);
    return pages * (unsigned long long)(ps > 0 ? ps : 4096);
}

/* The child: solve, report, exit (never returns). */
static void cbc_child(lp *p, const lp_opts *o, double t0, const double *x1, int mip, int fd)
{
    signal(SIGINT, SIG_IGN);        /* the parent decides; CBC may set its own */
    /* CBC 2.10.8 can crash here (see solve_cbc); the parent reports it, so
     * the child dies plainly instead of through a sanitizer's report */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    if (o->mem_limit_mb > 0) {
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = (rlim_t)(mapped_bytes() + ((unsigned long long)o->mem_limit_mb << 20));
        setrlimit(RLIMIT_AS, &rl);
    }
    output_to(o->verbose);
    Cbc_Model *M = cbc_model(p, o, t0, x1, mip);
    Cbc_solve(M);
    cbc_out c;
    memset(&c, 0, sizeof c);
    c.ok = 1;
    c.status = Cbc_status(M);
    c.secondary = Cbc_secondaryStatus(M);
    c.nodes = Cbc_getNodeCount(M);
    c.abandoned = Cbc_isAbandoned(M);
    c.optimal = Cbc_isProvenOptimal(M);
    c.infeasible = Cbc_isProvenInfeasible(M);
    c.lp_primal_infeasible = !mip && Cbc_isInitialSolveProvenPrimalInfeasible(M);
    c.unbounded = mip && Cbc_isContinuousUnbounded(M);
    c.time_up = mip && Cbc_isSecondsLimitReached(M);
    c.bound = mip ? Cbc_getBestPossibleObjValue(M) : NAN;
    const double *x = mip ? Cbc_bestSolution(M) : c.optimal ? Cbc_getColSolution(M) : NULL;
    c.has_x = x != NULL;
    fflush(stdout);
    int bad = write_all_fd(fd, &c, sizeof c) != 0 ||
              (x && write_all_fd(fd, x, (size_t)p->ncols * sizeof *x) != 0);
    /* What only the child still holds, it frees: its model and its copy of
     * the incumbent (the parent frees its own).  A leak checker that follows
     * forked children (valgrind) would otherwise report them at _exit, and
     * under --error-exitcode change the child's exit status, which the parent
     * would take for a failed solve. */
    Cbc_deleteModel(M);
    free((double *)x1);
    _exit(bad ? 3 : 0);
}

/* Wait for the child; on a stop request kill it first.  Returns its wait
 * status. */
static int reap(pid_t pid, int kill_it)
{
    if (kill_it)
        kill(pid, SIGKILL);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR)
            return 0;
        if (stop_flag && !kill_it) {
            kill(pid, SIGKILL);
            kill_it = 1;
        }
    }
    return ws;
}

static int solve_cbc(lp *p, const lp_opts *o, double t0, const double *x1, int mip,
                     lp_result *r, tc_err *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return cbc_fail(r, err, p, "cannot create a pipe for the solver process");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return cbc_fail(r, err, p, "cannot start the solver process");
    }
    if (pid == 0) {
        close(fds[0]);
        cbc_child(p, o, t0, x1, mip, fds[1]);
    }
    close(fds[1]);
    cbc_out c;
    memset(&c, 0, sizeof c);
    double *x = NULL;
    int got = read_all_fd(fds[0], &c, sizeof c);
    if (got == 1 && c.has_x) {
        x = xmalloc((size_t)(p->ncols ? p->ncols : 1) * sizeof *x);
        got = read_all_fd(fds[0], x, (size_t)p->ncols * sizeof *x);
    }
    close(fds[0]);
    int ws = reap(pid, got < 0 || stop_flag);
    if (got < 0 || stop_flag) {
        free(x);
        return stopped(p, r, err);
    }
    int rc;
    if (got == 1 && c.ok && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        rc = mip ? cbc_mip_result(p, &c, x, x1, r, err) : cbc_lp_result(p, &c, x, r, err);
    } else {
        char why[160];
        int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
        r->out_of_memory = o->mem_limit_mb > 0 && sig != 0;
        if (r->out_of_memory) {
            r->status = LP_UNSOLVED;
            snprintf(r->msg, sizeof r->msg, "CBC exceeded its memory limit of %d MiB on '%.40s' "
                     "(%d columns, %d rows, %d nonzeros; its process ended by signal %d)",
                     o->mem_limit_mb, p->name, p->ncols, p->nrows, p->nnz, sig);
            free(x);
            return tc_err_set(err, TC_INPUT, "%s", r->msg);
        }
        if (sig)
            snprintf(why, sizeof why, "crashed (signal %d)", sig);
        else
            snprintf(why, sizeof why, "the solver process ended without a result");
        rc = cbc_fail(r, err, p, why);
    }
    free(x);
    return rc;
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
    double t0 = now_s();
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
    glpk_guard guard;
    if (stop_flag)
        rc = stopped(p, r, err);
    else if (p->ncols == 0)
        rc = solve_empty(p, r);
    else if (o->backend == LP_CBC)
        rc = solve_cbc(p, o, t0, x1, mip, r, err);
    else
        rc = solve_glpk(p, o, t0, x1, mip, &guard, r, err);
    free(x1);
    if (r->status == LP_OPTIMAL && !isfinite(r->best_bound))
        r->best_bound = r->objective;
    if (r->status == LP_OPTIMAL && !isfinite(r->gap))
        r->gap = 0;
    r->seconds = now_s() - t0;
    if (rc == TC_OK)
        describe(p, r, keep_msg);
    return rc;
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
