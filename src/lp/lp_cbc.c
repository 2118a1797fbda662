/* lp_cbc.c — the CBC backend of lp_solve() (see lp.h): COIN-OR CBC through
 * its C interface, in a child process.
 *
 * CBC path: the rows are transposed into the compressed columns
 * Cbc_loadProblem takes; a MILP runs CbcMain1 (Cbc_solve) with parameters
 * passed as its command-line words, a pure LP only CLP's initialSolve, so
 * the two are read back through different status calls.  Both run in a
 * child process (see the comment above cbc_out for why).  Kept apart from
 * GLPK's backend (lp_glpk.c): the two share only the problem arrays and the
 * helpers in lp.c. */
#include "lp_int.h"

#include <coin/Cbc_C_Interface.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../util/mem.h"

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
    lp_row_activities(p, p->x, p->ract);
    p->has_sol = 1;
    r->objective = lp_objective_of(p, p->x);
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
    double inc = lp_objective_of(p, x1 + 1);
    double tol = 1e-9 * (1 + fabs(inc));
    if (!p->has_sol || (p->minimize ? inc < r->objective - tol : inc > r->objective + tol)) {
        lp_use_incumbent(p, x1, r);
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
        r->gap = lp_rel_gap(r->objective, r->best_bound);
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
        double left = o->time_limit_s - (lp_now_s() - t0);
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
        if (lp_stop_flag)
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

/* Wait until the child's answer can be read, telling o->progress the
 * time every progress_every_s meanwhile (CBC's search runs in the child,
 * so only the clock is known here). */
static void await_answer(int fd, const lp_opts *o, double t0)
{
    if (!o->progress)
        return;
    double every = o->progress_every_s > 0 ? o->progress_every_s : 2;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        int k = poll(&pf, 1, (int)(every * 1000));
        if (k != 0 || lp_stop_flag) {
            if (k < 0 && errno == EINTR && !lp_stop_flag)
                continue;
            return;
        }
        lp_progress at = {lp_now_s() - t0, NAN, NAN, 0};
        o->progress(o->progress_ctx, &at);
    }
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
static void cbc_child(lp *p, const lp_opts *o, double t0, const double *x1, int mip, int fd,
                      pid_t parent)
{
    /* The child dies with its parent, however the parent ends (SIGKILL
     * included, which no handler of the parent's sees): otherwise it is
     * re-parented and burns a core until its time limit.  If the parent is
     * already gone, the death signal was armed too late: leave now. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(4);
    signal(SIGINT, SIG_IGN);        /* the parent decides; CBC may set its own */
    signal(SIGTERM, SIG_DFL);       /* the parent's stop handlers are not the child's */
    signal(SIGHUP, SIG_DFL);
    /* CBC 2.10.8 can crash here (see lp_cbc_solve); the parent reports it, so
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
        if (lp_stop_flag && !kill_it) {
            kill(pid, SIGKILL);
            kill_it = 1;
        }
    }
    return ws;
}

int lp_cbc_solve(lp *p, const lp_opts *o, double t0, const double *x1, int mip,
                 lp_result *r, tc_err *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return cbc_fail(r, err, p, "cannot create a pipe for the solver process");
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return cbc_fail(r, err, p, "cannot start the solver process");
    }
    if (pid == 0) {
        close(fds[0]);
        cbc_child(p, o, t0, x1, mip, fds[1], parent);
    }
    close(fds[1]);
    cbc_out c;
    memset(&c, 0, sizeof c);
    double *x = NULL;
    await_answer(fds[0], o, t0);
    int got = read_all_fd(fds[0], &c, sizeof c);
    if (got == 1 && c.has_x) {
        x = xmalloc((size_t)(p->ncols ? p->ncols : 1) * sizeof *x);
        got = read_all_fd(fds[0], x, (size_t)p->ncols * sizeof *x);
    }
    close(fds[0]);
    int ws = reap(pid, got < 0 || lp_stop_flag);
    if (got < 0 || lp_stop_flag) {
        free(x);
        return lp_stopped(p, r, err);
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
