/* lp.h — the project's one LP/MILP wrapper (GLPK and CBC backends).
 *
 * Shaped like GLPK itself: an opaque problem built by setters, solved, then
 * read.  Columns and rows are numbered from 0 in the order they were added.
 * The problem is kept in our own arrays and handed to the solver only in
 * lp_solve(), so the same object can be solved again (after changing
 * bounds or objective) and another backend can sit behind the same calls.
 *
 *   lp *p = lp_new("mcf");
 *   int x = lp_add_col(p, "x", 0, INFINITY, 1.0, 0);     // 0 <= x, cost 1
 *   int y = lp_add_col(p, "y", 0, 1, 2.0, 1);            // binary
 *   int c[] = {x, y}; double v[] = {1, 1};
 *   lp_add_row(p, "cover", 1, INFINITY, 2, c, v);         // x + y >= 1
 *   lp_opts o; lp_opts_init(&o); lp_result r;
 *   if (lp_solve(p, &o, &r, &err) == TC_OK && r.status == LP_OPTIMAL)
 *       use(lp_value(p, x));
 *   lp_free(p);
 *
 * Bounds: -INFINITY / INFINITY mean none; lb == ub fixes a column or makes
 * a row an equality.  A row's coefficients may name a column twice (they are
 * summed) and may contain zeros (dropped).  Invalid arguments (NaN, lb > ub,
 * an unknown column, non-integral bounds on an integer column) make the
 * setter return -1 and mark the problem broken: lp_solve() then fails with
 * TC_INPUT and the first such message, so callers building large models need
 * not check every call.
 *
 * Solving (GLPK): a problem without integer columns is solved by glp_simplex
 * (primal or dual simplex, GLPK's scaling; LP presolve when opts.presolve),
 * or by glp_interior when opts.method is LP_INTERIOR.  With
 * integer columns, glp_intopt: with opts.presolve and no incumbent GLPK's
 * MIP presolver solves the root itself; otherwise glp_simplex solves the root
 * LP first and branch-and-cut starts from its basis.  An incumbent (a value
 * per column) is checked here against every bound, row and integrality
 * (tolerance 1e-6 scaled) — GLPK's glp_ios_heur_sol checks only integrality
 * — and, if feasible, given to GLPK once at the root through
 * glp_ios_heur_sol in the branch-and-cut callback; the presolver is then
 * off, because GLPK's callback sees the presolved columns otherwise.
 *
 * GLPK's terminal output is silenced through the msg_lev field of each
 * call's parameters and glp_term_out, restored after the call.  A hook
 * (glp_term_hook) is installed for the duration of the call and removed
 * (glp_term_hook(NULL, NULL)) after it, so a hook the caller installed
 * itself is reset: with opts.verbose it passes the messages to stderr;
 * without, it keeps the text of a fatal error (which GLPK prints whatever
 * the settings) for the error message, so nothing reaches stdout.  The
 * same goes for GLPK's error hook and memory limit (glp_error_hook,
 * glp_mem_limit): set for the call, reset after it.  This module keeps no
 * global state of its own but the stop flag (below).
 *
 * Solving (CBC, opts.backend = LP_CBC: Debian's coinor-libcbc, through its C
 * interface): the arrays are loaded into a fresh Cbc_Model per call, in a
 * child process (fork) that sends the outcome and the solution back
 * through a pipe and exits.  A problem without integer columns goes
 * straight to CLP's simplex (no time limit reaches it); with integer
 * columns, CBC's branch-and-cut with its own presolve, cuts and heuristics
 * (opts.presolve, cuts, heuristics and method are GLPK's knobs and do not
 * apply), single-threaded ("threads 0"), with a wall-clock time limit and
 * opts.mip_gap as its allowable fraction gap.  The incumbent, checked as
 * above, becomes CBC's MIP start; if CBC ends without a solution or with a
 * worse one, the incumbent is returned (LP_FEASIBLE).  Integer columns are
 * rounded to exact integers; row activities and the objective (with its
 * constant) are computed here from the solution.
 *
 * Why a child process: CBC 2.10.8 (Debian 12) crashes (SIGSEGV in
 * CglPreProcess::postProcess) when its time limit stops a search begun
 * from a MIP start — measured here on a routing MILP stopped after 0.05 s,
 * 21 crashes in 40 runs — and then only the child dies: lp_solve fails
 * with TC_INPUT ("CBC failed ...: crashed (signal 11)"), which the
 * synthesizer's stages answer with their heuristic incumbent.  A stop
 * request kills the child at once (CBC's own SIGINT handling waits for its
 * root node).  opts.mem_limit_mb bounds the child's address space
 * (RLIMIT_AS: what the process maps when it starts, plus the limit); a
 * child that dies under it is reported as out of memory
 * (lp_result.out_of_memory).
 *
 * CBC and CLP log to stdout: with log level 0 they are silent, and the
 * child also points its fd 1 at /dev/null (one printf in CBC's C interface
 * ignores the level); with opts.verbose at stderr instead, so the log lands
 * there.  The caller's stdout is untouched.
 *
 * Results are deterministic for a given problem and options (GLPK is
 * deterministic, CBC runs single-threaded), except when a time limit cuts a
 * solve short. */
#ifndef TC_LP_H
#define TC_LP_H

#include "../util/err.h"

typedef struct lp lp;

typedef enum {
    LP_GLPK = 0,
    LP_CBC = 1          /* COIN-OR CBC (CLP for pure LPs) */
} lp_backend;

typedef enum {
    LP_UNSOLVED = 0,    /* lp_solve() not run, or it failed */
    LP_OPTIMAL,         /* proven optimal (MILP: within opts.mip_gap, see gap) */
    LP_FEASIBLE,        /* a solution, not proven optimal (time limit) */
    LP_INFEASIBLE,      /* no solution exists (MILP: not even fractional, or
                           branch-and-cut proved none is integral) */
    LP_UNBOUNDED,       /* objective unbounded (MILP: its LP relaxation is) */
    LP_TIME_LIMIT       /* time limit reached before any solution */
} lp_status;

typedef enum {
    LP_PRIMAL = 0,      /* primal simplex (default) */
    LP_DUAL = 1,        /* dual simplex, falling back to primal if it fails */
    LP_INTERIOR = 2     /* pure LPs: GLPK's interior-point method (much faster on
                           large sparse flow LPs; ignores the time limit; its
                           optimum is exact only to about 1e-8 relative); if it
                           does not reach an optimum, the primal simplex decides.
                           MILPs solve their root LP by the primal simplex. */
} lp_method;

/* Where a long solve is, for a progress line: wall seconds so far, the
 * best solution's objective and the proven bound (NAN while unknown), and
 * branch-and-bound nodes so far (0 if unknown). */
typedef struct {
    double seconds;
    double incumbent, bound;
    int nodes;
} lp_progress;

typedef struct {
    double time_limit_s;        /* wall-clock limit for the whole solve; <= 0 = none */
    double mip_gap;             /* relative gap at which branch-and-cut stops; 0 = prove */
    int presolve;               /* 1 = use GLPK's presolver (default 1) */
    int verbose;                /* 1 = the solver's messages on stderr (default 0) */
    int cuts;                   /* 1 = GLPK's cuts (Gomory, MIR, cover, clique); default 0 */
    int heuristics;             /* 1 = feasibility pump + proximity search; default 0 */
    lp_method method;           /* simplex variant for LPs and the root LP; default primal */
    lp_backend backend;         /* default LP_GLPK */
    const double *incumbent;    /* NULL, or one value per column to seed a MILP */
    int mem_limit_mb;           /* at most this many MiB for the solver, else lp_solve
                                   fails with TC_INPUT and r.out_of_memory: GLPK's
                                   glp_mem_limit (what GLPK allocates), CBC's child
                                   process's address space on top of the parent's;
                                   0 = no limit (default) */
    /* Optional: called every progress_every_s seconds (default 2) of a MILP
     * solve, from GLPK's branch-and-cut or while a CBC child runs (GLPK's
     * simplex has no callback: a long root LP is silent until it ends). */
    void (*progress)(void *ctx, const lp_progress *at);
    void *progress_ctx;
    double progress_every_s;
} lp_opts;

typedef struct {
    lp_status status;
    double objective;           /* of the solution found; NAN without one */
    double best_bound;          /* proven bound on the optimum (MILP); = objective
                                   for an optimal LP; NAN if unknown */
    double gap;                 /* |objective - best_bound| / (|objective| + 1e-9); 0 if
                                   optimal, NAN if unknown */
    double seconds;             /* wall-clock seconds spent in lp_solve */
    int incumbent_used;         /* -1 none given, 0 rejected (reason in msg), 1 given to
                                   the solver (CBC: as its MIP start) */
    int nodes;                  /* branch-and-bound nodes explored (0 for an LP) */
    int out_of_memory;          /* 1: the solver exceeded opts.mem_limit_mb (TC_INPUT) */
    char msg[256];              /* one line for a user: what happened */
} lp_result;

/* Stopping on request (SIGINT).  A signal handler may only set a flag of
 * type volatile sig_atomic_t, and it cannot reach any caller's data, so
 * this one flag is process state — the only piece in the project.  It lives
 * here because this is where a request must become the solvers' own
 * termination: GLPK's branch-and-cut callback calls glp_ios_terminate once
 * it is set (GLPK's simplex has no callback: a root LP runs to its end or
 * its time limit first); a CBC solve runs in a child process, which is
 * killed (see below).  lp_solve returns TC_STOP (err "interrupted") when the flag
 * is set before, during or right after a solve; long loops elsewhere (the
 * synthesizer's stages) poll lp_stop_requested() and return TC_STOP too.
 * lp_request_stop() is async-signal-safe. */
void lp_request_stop(void);
int lp_stop_requested(void);
void lp_clear_stop(void);

/* A progress hook that prints one line on stderr: "PREFIX: 4.0 s,
 * incumbent 541.8, bound 530.2, gap 2.1%, 1200 nodes" (what is known);
 * ctx is the prefix (a const char *). */
void lp_progress_stderr(void *ctx, const lp_progress *at);

/* Default options: no time limit, gap 0, presolve on, quiet, GLPK. */
void lp_opts_init(lp_opts *o);

/* A new empty problem (minimising).  Aborts only on out of memory. */
lp *lp_new(const char *name);
void lp_free(lp *p);

/* Add a column; returns its index, or -1 (problem marked broken).
 * name may be NULL.  is_int: integer column (lb, ub integral or infinite). */
int lp_add_col(lp *p, const char *name, double lb, double ub, double obj, int is_int);

/* Add a row lb <= sum vals[i] * x[cols[i]] <= ub; returns its index, or -1. */
int lp_add_row(lp *p, const char *name, double lb, double ub, int n, const int *cols,
               const double *vals);

void lp_set_minimize(lp *p, int minimize);     /* 1 minimise (default), 0 maximise */
int lp_set_obj(lp *p, int col, double coef);   /* 0, or -1 (broken) */
int lp_set_obj_const(lp *p, double c);         /* constant term of the objective */
int lp_set_col_bounds(lp *p, int col, double lb, double ub);
int lp_set_row_bounds(lp *p, int row, double lb, double ub);

int lp_ncols(const lp *p);
int lp_nrows(const lp *p);
int lp_nnz(const lp *p);
int lp_is_mip(const lp *p);

/* Solve.  TC_OK when the solver ran: the outcome (optimal, infeasible, time
 * limit...) is in r->status.  TC_INPUT when it could not: a broken problem,
 * an unavailable backend, a numerical failure of the solver, GLPK's memory
 * limit (opts.mem_limit_mb) exceeded or any other fatal GLPK error (caught
 * through glp_error_hook, after which all of GLPK's memory is released with
 * glp_free_env); err says why and r->status is LP_UNSOLVED.  TC_STOP when a
 * stop was requested (lp_request_stop).  o may be NULL (defaults). */
int lp_solve(lp *p, const lp_opts *o, lp_result *r, tc_err *err);

/* Value of a column in the last solution (MILP: the best integer one);
 * NAN if there is none or col is out of range. */
double lp_value(const lp *p, int col);

/* Row activity (sum of vals * x) in the last solution; NAN if none. */
double lp_row_value(const lp *p, int row);

/* Write the problem in CPLEX LP format (for debugging a model). */
int lp_write(const lp *p, const char *path, tc_err *err);

const char *lp_status_name(lp_status s);
const char *lp_backend_name(lp_backend b);     /* "GLPK", "CBC" */

#endif
