/* lp_int.h — what lp.c and its two backends share (not a public API; the
 * API is lp.h).
 *
 * lp.c holds the problem object, its setters and getters, the stop flag
 * and lp_solve(), which checks the problem and the incumbent and hands the
 * arrays to one backend: lp_glpk.c (GLPK, in this process) or lp_cbc.c (CBC,
 * in a child process).  Each backend fills lp_result and the solution
 * arrays of the problem with the helpers below. */
#ifndef TC_LP_INT_H
#define TC_LP_INT_H

#include "lp.h"

#include <signal.h>

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

/* The stop request (see lp.h): set from a signal handler, so nothing but a
 * volatile sig_atomic_t. */
extern volatile sig_atomic_t lp_stop_flag;

/* The result of a solve a stop request ended: TC_STOP, "interrupted". */
int lp_stopped(const lp *p, lp_result *r, tc_err *err);

/* Monotonic clock, in seconds: the time limit counts from lp_solve's start. */
double lp_now_s(void);
/* Objective (with its constant) and row activities of a solution x. */
double lp_objective_of(const lp *p, const double *x);
void lp_row_activities(const lp *p, const double *x, double *act);
/* Take the checked incumbent x1 (1-based) as the solution. */
void lp_use_incumbent(lp *p, const double *x1, lp_result *r);
/* |obj - bound| / (|obj| + 1e-9), as lp_result.gap */
double lp_rel_gap(double obj, double bound);

/* The backends: solve p (it has columns; mip: it has integer columns) from
 * start time t0 with the checked incumbent x1 (1-based) or NULL, as
 * lp_solve() describes.  TC_OK with r->status, or an error in err. */
int lp_glpk_solve(lp *p, const lp_opts *o, double t0, const double *x1, int mip, lp_result *r,
                  tc_err *err);
int lp_cbc_solve(lp *p, const lp_opts *o, double t0, const double *x1, int mip, lp_result *r,
                 tc_err *err);

#endif
