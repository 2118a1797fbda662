/* test_lp.c — the LP/MILP wrapper: known optima, infeasible and unbounded
 * models, time limits, incumbent seeding, argument errors, quiet output,
 * stop requests and memory limits.
 * Every model with a known answer is solved by both backends (GLPK, CBC),
 * and random small MILPs check that the two agree on the optimum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "lp/lp.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-6 * (1 + fabs((double)(b))))

static const lp_backend backends[] = {LP_GLPK, LP_CBC};
#define NBACKENDS 2

static void opts_for(lp_opts *o, lp_backend b)
{
    lp_opts_init(o);
    o->backend = b;
}

/* max 3x + 2y  s.t.  x + y <= 4,  x + 3y <= 6,  0 <= x <= 3,  y >= 0:
 * optimum x = 3, y = 1, objective 11. */
static lp *small_lp(void)
{
    lp *p = lp_new("small");
    int x = lp_add_col(p, "x", 0, 3, 3, 0);
    int y = lp_add_col(p, "y", 0, INFINITY, 2, 0);
    int c[] = {x, y};
    double a[] = {1, 1}, b[] = {1, 3};
    lp_add_row(p, "r1", -INFINITY, 4, 2, c, a);
    lp_add_row(p, "r2", -INFINITY, 6, 2, c, b);
    lp_set_minimize(p, 0);
    return p;
}

static void test_small_lp(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
    for (int presolve = 0; presolve <= 1; presolve++) {
        lp *p = small_lp();
        lp_opts o;
        opts_for(&o, backends[b]);
        o.presolve = presolve;
        lp_result r;
        tc_err e;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(r.objective, 11);
        NEAR(r.best_bound, 11);
        NEAR(lp_value(p, 0), 3);
        NEAR(lp_value(p, 1), 1);
        NEAR(lp_row_value(p, 0), 4);
        assert_true(r.gap == 0);
        assert_true(r.seconds >= 0);
        assert_int_equal(r.incumbent_used, -1);
        assert_true(isnan(lp_value(p, 2)));     /* out of range */
        lp_free(p);
    }
}

/* The simplex variants and the interior-point method agree; an infeasible
 * model under LP_INTERIOR falls back to the simplex, which says so. */
static void test_methods(void **state)
{
    (void)state;
    lp_method m[] = {LP_PRIMAL, LP_DUAL, LP_INTERIOR};
    for (int i = 0; i < 3; i++) {
        lp *p = small_lp();
        lp_opts o;
        lp_opts_init(&o);
        o.method = m[i];
        lp_result r;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        assert_true(fabs(r.objective - 11) < 1e-6);
        assert_true(fabs(lp_value(p, 0) - 3) < 1e-6);
        lp_free(p);

        p = lp_new("infeasible");
        int x = lp_add_col(p, "x", 0, INFINITY, 1, 0);
        double one = 1;
        lp_add_row(p, "lo", 2, INFINITY, 1, &x, &one);
        lp_add_row(p, "hi", -INFINITY, 1, 1, &x, &one);
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_INFEASIBLE);
        assert_true(isnan(lp_value(p, x)));
        lp_free(p);
    }
}

/* Knapsack max 8a + 11b + 6c + 4d s.t. 5a + 7b + 4c + 3d <= 14, binary:
 * LP relaxation 22 (a = b = 1, c = 1/2), integer optimum 21 (b, c, d). */
static lp *knapsack(void)
{
    lp *p = lp_new("knapsack");
    double v[] = {8, 11, 6, 4}, w[] = {5, 7, 4, 3};
    int c[4];
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        c[i] = lp_add_col(p, names[i], 0, 1, v[i], 1);
    lp_add_row(p, "weight", -INFINITY, 14, 4, c, w);
    lp_set_minimize(p, 0);
    return p;
}

static void test_small_milp(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
    for (int presolve = 0; presolve <= 1; presolve++) {
        lp *p = knapsack();
        assert_true(lp_is_mip(p));
        lp_opts o;
        opts_for(&o, backends[b]);
        o.presolve = presolve;
        lp_result r;
        tc_err e;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(r.objective, 21);
        NEAR(lp_value(p, 0), 0);
        NEAR(lp_value(p, 1), 1);
        NEAR(lp_value(p, 2), 1);
        NEAR(lp_value(p, 3), 1);
        for (int j = 0; j < 4; j++)                 /* integer columns: exact */
            assert_true(lp_value(p, j) == floor(lp_value(p, j)));
        NEAR(lp_row_value(p, 0), 14);
        assert_true(r.gap < 1e-9);
        NEAR(r.best_bound, 21);
        assert_true(r.nodes >= 0);
        lp_free(p);
    }
}

static void test_infeasible(void **state)
{
    (void)state;
    /* LP: x >= 2 and x <= 1 as rows. */
    for (int b = 0; b < NBACKENDS; b++)
    for (int presolve = 0; presolve <= 1; presolve++) {
        lp *p = lp_new("infeasible-lp");
        int x = lp_add_col(p, "x", -INFINITY, INFINITY, 1, 0);
        double one = 1;
        lp_add_row(p, "lo", 2, INFINITY, 1, &x, &one);
        lp_add_row(p, "hi", -INFINITY, 1, 1, &x, &one);
        lp_opts o;
        opts_for(&o, backends[b]);
        o.presolve = presolve;
        lp_result r;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_INFEASIBLE);
        assert_true(isnan(lp_value(p, x)));
        assert_non_null(strstr(r.msg, "infeasible"));
        lp_free(p);
    }
    /* MILP whose relaxation is feasible but has no integer point: 2x = 1. */
    for (int b = 0; b < NBACKENDS; b++)
    for (int presolve = 0; presolve <= 1; presolve++) {
        lp *p = lp_new("infeasible-milp");
        int x = lp_add_col(p, "x", 0, 10, 1, 1);
        double two = 2;
        lp_add_row(p, "half", 1, 1, 1, &x, &two);
        lp_opts o;
        opts_for(&o, backends[b]);
        o.presolve = presolve;
        lp_result r;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_INFEASIBLE);
        assert_true(isnan(lp_value(p, x)));
        lp_free(p);
    }
}

static void test_unbounded(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
    for (int is_int = 0; is_int <= 1; is_int++)
        for (int presolve = 0; presolve <= 1; presolve++) {
            lp *p = lp_new("unbounded");
            int x = lp_add_col(p, "x", 0, INFINITY, 1, is_int);
            int y = lp_add_col(p, "y", 0, INFINITY, 0, is_int);
            int c[] = {x, y};
            double a[] = {1, -1};
            lp_add_row(p, "r", -INFINITY, 1, 2, c, a);  /* x - y <= 1 */
            lp_set_minimize(p, 0);                       /* max x */
            lp_opts o;
            opts_for(&o, backends[b]);
            o.presolve = presolve;
            lp_result r;
            assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
            assert_int_equal(r.status, LP_UNBOUNDED);
            lp_free(p);
        }
}

/* A market-split instance (Cornuejols & Dawande): 5 rows, 40 binaries,
 * minimise the total slack.  Far beyond GLPK in a fraction of a second.
 * inc (if not NULL) receives a feasible point: all x = 0.  With `planted`
 * the right-hand sides are a * x* for a hidden x*, which plant (if not NULL)
 * receives: a zero-slack optimum GLPK does not find by itself quickly. */
static lp *market_split_planted(double *inc, int planted, double *plant)
{
    lp *p = lp_new("market-split");
    enum { M = 5, N = 40 };
    unsigned s = 12345;
    int a[M][N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            s = s * 1103515245u + 12345u;
            a[i][j] = (int)((s >> 16) % 100);
        }
    int x[N], sp[M], sm[M], star[N];
    for (int j = 0; j < N; j++) {
        s = s * 1103515245u + 12345u;
        star[j] = (int)((s >> 16) & 1);
    }
    char name[32];
    for (int j = 0; j < N; j++) {
        snprintf(name, sizeof name, "x%d", j);
        x[j] = lp_add_col(p, name, 0, 1, 0, 1);
    }
    for (int i = 0; i < M; i++) {
        snprintf(name, sizeof name, "sp%d", i);
        sp[i] = lp_add_col(p, name, 0, INFINITY, 1, 0);
        snprintf(name, sizeof name, "sm%d", i);
        sm[i] = lp_add_col(p, name, 0, INFINITY, 1, 0);
    }
    for (int i = 0; i < M; i++) {
        int cols[N + 2];
        double vals[N + 2];
        int sum = 0, hit = 0;
        for (int j = 0; j < N; j++) {
            cols[j] = x[j];
            vals[j] = a[i][j];
            sum += a[i][j];
            hit += a[i][j] * star[j];
        }
        int rhs = planted ? hit : sum / 2;
        cols[N] = sp[i];
        vals[N] = 1;
        cols[N + 1] = sm[i];
        vals[N + 1] = -1;
        snprintf(name, sizeof name, "split%d", i);
        lp_add_row(p, name, rhs, rhs, N + 2, cols, vals);
        if (inc) {              /* all x = 0: the slack takes the whole rhs */
            for (int j = 0; j < N; j++)
                inc[x[j]] = 0;
            inc[sp[i]] = rhs;
            inc[sm[i]] = 0;
        }
        if (plant) {
            for (int j = 0; j < N; j++)
                plant[x[j]] = star[j];
            plant[sp[i]] = plant[sm[i]] = 0;
        }
    }
    return p;
}

static lp *market_split(double *inc)
{
    return market_split_planted(inc, 0, NULL);
}

static void test_time_limit(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
    for (int presolve = 0; presolve <= 1; presolve++) {
        lp *p = market_split(NULL);
        lp_opts o;
        opts_for(&o, backends[b]);
        o.presolve = presolve;
        o.time_limit_s = 0.3;
        lp_result r;
        tc_err e;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_true(r.status == LP_TIME_LIMIT || r.status == LP_FEASIBLE);
        assert_true(r.seconds < 2.0);
        if (r.status == LP_FEASIBLE) {
            assert_true(isfinite(r.objective));
            assert_true(r.best_bound <= r.objective + 1e-9);
            double slack = 0;                           /* objective = total slack */
            for (int i = 0; i < 5; i++)
                slack += lp_value(p, 40 + 2 * i) + lp_value(p, 41 + 2 * i);
            NEAR(slack, r.objective);
            assert_true(r.gap >= 0);
        } else {
            assert_true(isnan(lp_value(p, 0)));
        }
        lp_free(p);
    }
}

static void incumbent_case(lp_backend backend)
{
    tc_err e;
    lp_result r;
    lp_opts o;

    /* The optimum as incumbent: accepted, result still proven optimal. */
    lp *p = knapsack();
    double best[] = {0, 1, 1, 1};
    opts_for(&o, backend);
    o.incumbent = best;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
    assert_int_equal(r.incumbent_used, 1);
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(r.objective, 21);

    /* Over the weight limit (a + b + c = 16 > 14): rejected, with the row. */
    double heavy[] = {1, 1, 1, 0};
    o.incumbent = heavy;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
    assert_int_equal(r.incumbent_used, 0);
    assert_non_null(strstr(r.msg, "rejected"));
    assert_non_null(strstr(r.msg, "weight"));
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(r.objective, 21);

    /* Not integral: rejected. */
    double frac[] = {0.5, 1, 0, 0};
    o.incumbent = frac;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
    assert_int_equal(r.incumbent_used, 0);
    assert_non_null(strstr(r.msg, "not integral"));
    lp_free(p);

    /* A hard model under a time limit: the seed guarantees a solution at
     * least as good as itself. */
    double inc[50];
    p = market_split(inc);
    assert_int_equal(lp_ncols(p), 50);
    double inc_obj = 0;
    for (int i = 0; i < 5; i++)
        inc_obj += inc[40 + 2 * i];
    opts_for(&o, backend);
    o.incumbent = inc;
    o.time_limit_s = 0.3;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
    assert_int_equal(r.incumbent_used, 1);
    assert_int_equal(r.status, LP_FEASIBLE);
    assert_true(r.objective <= inc_obj + 1e-9);
    assert_true(isfinite(lp_value(p, 0)));
    double obj = 0;
    for (int i = 0; i < 5; i++)
        obj += lp_value(p, 40 + 2 * i) + lp_value(p, 41 + 2 * i);
    NEAR(obj, r.objective);
    assert_true(r.best_bound <= r.objective + 1e-9);
    assert_true(r.gap > 0);
    assert_true(r.seconds < 2.0);
    lp_free(p);

    /* The planted zero-slack optimum as incumbent: it meets the root LP
     * bound of 0, so the solver proves it optimal within the limit. */
    double plant[50];
    p = market_split_planted(NULL, 1, plant);
    o.incumbent = plant;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
    assert_int_equal(r.incumbent_used, 1);
    assert_int_equal(r.status, LP_OPTIMAL);
    assert_true(fabs(r.objective) < 1e-9);
    for (int j = 0; j < 40; j++)
        NEAR(lp_value(p, j), plant[j]);
    lp_free(p);
}

static void test_incumbent(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
        incumbent_case(backends[b]);
}

/* Subset sum with a zero objective: ten primes, pick some summing to 50.
 * The root LP is fractional, many subsets are optimal, and the solver has
 * no reason to leave the incumbent it was given: the answer is the
 * incumbent exactly — not what it finds on its own, which the first solve
 * checks. */
static void test_incumbent_taken(void **state)
{
    (void)state;
    const double a[10] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31};
    const double inc[10] = {1, 1, 0, 1, 0, 0, 0, 0, 0, 1};       /* 3 + 5 + 11 + 31 */
    for (int b = 0; b < NBACKENDS; b++) {
        lp *p = lp_new("subset-sum");
        int c[10];
        for (int j = 0; j < 10; j++)
            c[j] = lp_add_col(p, NULL, 0, 1, 0, 1);
        lp_add_row(p, "fifty", 50, 50, 10, c, a);
        lp_opts o;
        opts_for(&o, backends[b]);
        lp_result r;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(lp_row_value(p, 0), 50);
        int same = 1;
        for (int j = 0; j < 10; j++)
            same &= lp_value(p, j) == inc[j];
        assert_false(same);
        o.incumbent = inc;
        o.presolve = 0;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.incumbent_used, 1);
        assert_int_equal(r.status, LP_OPTIMAL);
        for (int j = 0; j < 10; j++)
            if (lp_value(p, j) != inc[j])
                fail_msg("%s: column %d is %g, the incumbent's %g",
                         backends[b] == LP_CBC ? "CBC" : "GLPK", j, lp_value(p, j), inc[j]);
        lp_free(p);
    }
}

/* Equalities, free and negative columns, an objective constant, both
 * senses: min 2x + 3y - z + 10 s.t. x + y + z = 6, x - y = 1, z <= 2,
 * x, y >= 0, z free: z = 2, then x + y = 4, x = y + 1: x = 2.5, y = 1.5,
 * objective 5 + 4.5 - 2 + 10 = 17.5.  Maximising 2x + 3y - z + 10 under
 * the same rows with z >= -3 instead: z = -3, x + y = 9, x = 5, y = 4,
 * objective 10 + 12 + 3 + 10 = 35. */
static void test_equality_lp(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++) {
        lp *p = lp_new("equalities");
        int x = lp_add_col(p, "x", 0, INFINITY, 2, 0);
        int y = lp_add_col(p, "y", 0, INFINITY, 3, 0);
        int z = lp_add_col(p, "z", -INFINITY, 2, -1, 0);
        lp_set_obj_const(p, 10);
        int c[] = {x, y, z};
        double all[] = {1, 1, 1}, diff[] = {1, -1};
        lp_add_row(p, "sum", 6, 6, 3, c, all);
        lp_add_row(p, "diff", 1, 1, 2, c, diff);
        lp_opts o;
        opts_for(&o, backends[b]);
        lp_result r;
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(r.objective, 17.5);
        NEAR(r.best_bound, 17.5);
        NEAR(lp_value(p, x), 2.5);
        NEAR(lp_value(p, y), 1.5);
        NEAR(lp_value(p, z), 2);
        NEAR(lp_row_value(p, 0), 6);
        NEAR(lp_row_value(p, 1), 1);

        assert_int_equal(lp_set_col_bounds(p, z, -3, INFINITY), 0);
        lp_set_minimize(p, 0);
        assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(r.objective, 35);
        NEAR(lp_value(p, x), 5);
        NEAR(lp_value(p, y), 4);
        NEAR(lp_value(p, z), -3);
        lp_free(p);
    }
}

/* Random small MILPs (bounded general integers and continuous columns,
 * rows of every kind, both senses): both backends reach the same status
 * and, when optimal, the same objective, and each one's solution satisfies
 * its rows. */
static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static lp *random_milp(unsigned seed)
{
    unsigned s = seed;
    lp *p = lp_new("random");
    int n = 4 + (int)(rnd(&s) % 8), m = 2 + (int)(rnd(&s) % 6);
    for (int j = 0; j < n; j++) {
        int is_int = rnd(&s) % 3 != 0;
        double lb = -(double)(rnd(&s) % 3), ub = lb + 1 + (double)(rnd(&s) % 6);
        double obj = (double)(rnd(&s) % 21) - 10;
        lp_add_col(p, NULL, lb, ub, is_int ? obj : obj / 2, is_int);
    }
    for (int i = 0; i < m; i++) {
        int cols[16];
        double vals[16];
        int k = 0;
        for (int j = 0; j < n; j++)
            if (rnd(&s) % 2) {
                cols[k] = j;
                vals[k++] = (double)(rnd(&s) % 13) - 6;
            }
        double rhs = (double)(rnd(&s) % 15) - 4;
        switch (rnd(&s) % 3) {
        case 0: lp_add_row(p, NULL, -INFINITY, rhs, k, cols, vals); break;
        case 1: lp_add_row(p, NULL, rhs - 3, INFINITY, k, cols, vals); break;
        default: lp_add_row(p, NULL, rhs - 2, rhs + 2, k, cols, vals); break;
        }
    }
    lp_set_obj_const(p, (double)(rnd(&s) % 7));
    lp_set_minimize(p, (int)(rnd(&s) % 2));
    return p;
}

static void test_backends_agree(void **state)
{
    (void)state;
    int optimal = 0, infeasible = 0;
    for (unsigned seed = 1; seed <= 60; seed++) {
        lp_result r[NBACKENDS];
        for (int b = 0; b < NBACKENDS; b++) {
            lp *p = random_milp(seed);
            lp_opts o;
            opts_for(&o, backends[b]);
            tc_err e;
            assert_int_equal(lp_solve(p, &o, &r[b], &e), TC_OK);
            if (r[b].status == LP_OPTIMAL)
                for (int i = 0; i < lp_nrows(p); i++) {
                    double a = lp_row_value(p, i);
                    assert_true(isfinite(a));
                }
            lp_free(p);
        }
        if (r[0].status != r[1].status || (r[0].status == LP_OPTIMAL &&
            fabs(r[0].objective - r[1].objective) > 1e-6 * (1 + fabs(r[0].objective))))
            fail_msg("seed %u: GLPK %s %.9g, CBC %s %.9g", seed, lp_status_name(r[0].status),
                     r[0].objective, lp_status_name(r[1].status), r[1].objective);
        optimal += r[0].status == LP_OPTIMAL;
        infeasible += r[0].status == LP_INFEASIBLE;
    }
    assert_true(optimal >= 10);     /* the generator makes both kinds */
    assert_true(infeasible >= 3);
}

static void test_argument_errors(void **state)
{
    (void)state;
    tc_err e;
    lp_result r;
    lp *p = lp_new("bad");
    int x = lp_add_col(p, "x", 0, 1, 1, 0);
    assert_int_equal(x, 0);
    assert_int_equal(lp_add_col(p, "upside-down", 2, 1, 0, 0), -1);
    assert_int_equal(lp_add_col(p, "later", 0, 1, 0, 0), 1);      /* still usable */
    int bad = 7;
    double one = 1;
    assert_int_equal(lp_add_row(p, "r", 0, 1, 1, &bad, &one), -1);
    assert_int_equal(lp_solve(p, NULL, &r, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "upside-down"));                /* the first error */
    assert_int_equal(r.status, LP_UNSOLVED);
    lp_free(p);

    p = lp_new("int-bounds");
    assert_int_equal(lp_add_col(p, "n", 0.5, 3, 1, 1), -1);
    assert_int_equal(lp_solve(p, NULL, &r, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "non-integral"));
    lp_free(p);

    p = lp_new("nan");
    x = lp_add_col(p, "x", 0, 1, 1, 0);
    double nan = NAN;
    assert_int_equal(lp_add_row(p, "r", 0, 1, 1, &x, &nan), -1);
    assert_int_equal(lp_solve(p, NULL, &r, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "not finite"));
    lp_free(p);

    p = small_lp();
    lp_opts o;
    lp_opts_init(&o);
    o.backend = (lp_backend)7;
    assert_int_equal(lp_solve(p, &o, &r, &e), TC_INPUT);
    assert_non_null(strstr(e.msg, "unknown LP backend"));
    assert_int_equal(r.status, LP_UNSOLVED);
    lp_free(p);
}

/* Coefficients naming a column twice are summed; zeros are dropped. */
static void test_duplicates_and_resolve(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++) {
    lp_opts o;
    opts_for(&o, backends[b]);
    lp *p = lp_new("dup");
    int x = lp_add_col(p, "x", 0, INFINITY, -1, 0);     /* min -x = max x */
    int c[] = {x, x, x};
    double v[] = {1, 1, 0};
    lp_add_row(p, "2x<=6", -INFINITY, 6, 3, c, v);
    assert_int_equal(lp_nnz(p), 1);
    lp_result r;
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(lp_value(p, x), 3);
    /* Change a row bound and the objective, solve again. */
    assert_int_equal(lp_set_row_bounds(p, 0, -INFINITY, 10), 0);
    assert_true(isnan(lp_value(p, x)));                 /* old solution forgotten */
    assert_int_equal(lp_set_obj(p, x, -2), 0);
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    NEAR(lp_value(p, x), 5);
    NEAR(r.objective, -10);
    assert_int_equal(lp_set_col_bounds(p, x, 0, 1), 0);
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    NEAR(lp_value(p, x), 1);
    lp_free(p);
    }
}

/* An empty model and a model with columns but no rows. */
static void test_trivial(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++) {
    lp_opts o;
    opts_for(&o, backends[b]);
    lp_result r;
    lp *p = lp_new("empty");
    lp_set_obj_const(p, 4);
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(r.objective, 4);
    lp_free(p);

    p = lp_new("norows");
    lp_add_col(p, "x", 1, 5, 2, 1);
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(lp_value(p, 0), 1);
    NEAR(r.objective, 2);
    lp_free(p);

    p = lp_new("norows-lp");                    /* max 3 - x, no rows */
    lp_add_col(p, "x", -1, 5, -1, 0);
    lp_set_obj_const(p, 3);
    lp_set_minimize(p, 0);
    assert_int_equal(lp_solve(p, &o, &r, NULL), TC_OK);
    assert_int_equal(r.status, LP_OPTIMAL);
    NEAR(lp_value(p, 0), -1);
    NEAR(r.objective, 4);
    lp_free(p);
    }
}

/* Neither backend prints anything on stdout unless verbose (the CLIs write
 * results there, --json included): every kind of solve, fd 1 captured in a
 * file that must stay empty.  Verbose output goes to stderr: with verbose,
 * fd 2 is captured too and must not be empty (CBC's log is written to
 * stdout by CBC itself and redirected by the wrapper). */
static off_t file_size(int fd)
{
    return lseek(fd, 0, SEEK_END);
}

static void quiet_solves(lp_backend b, int verbose)
{
    lp_opts o;
    opts_for(&o, b);
    o.verbose = verbose;
    lp_result r;
    lp *p = knapsack();
    lp_solve(p, &o, &r, NULL);
    o.presolve = 0;
    lp_solve(p, &o, &r, NULL);
    double best[] = {0, 1, 1, 1};
    o.incumbent = best;
    lp_solve(p, &o, &r, NULL);
    o.incumbent = NULL;
    lp_free(p);
    p = small_lp();                             /* pure LP */
    lp_solve(p, &o, &r, NULL);
    lp_free(p);
    p = lp_new("unbounded");                    /* LP and MILP, unbounded */
    int x = lp_add_col(p, "x", 0, INFINITY, -1, 0);
    double one = 1;
    lp_add_row(p, "r", 1, INFINITY, 1, &x, &one);
    lp_solve(p, &o, &r, NULL);
    lp_free(p);
    p = lp_new("infeasible-milp");
    x = lp_add_col(p, "x", 0, 10, 1, 1);
    double two = 2;
    lp_add_row(p, "half", 1, 1, 1, &x, &two);
    lp_solve(p, &o, &r, NULL);
    lp_free(p);
    p = market_split(NULL);                     /* cut short by the limit */
    o.time_limit_s = 0.05;
    lp_solve(p, &o, &r, NULL);
    lp_free(p);
}

static void test_quiet(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++)
        for (int verbose = 0; verbose <= 1; verbose++) {
            fflush(stdout);
            fflush(stderr);
            char out_path[] = "/tmp/test_lp_out_XXXXXX", err_path[] = "/tmp/test_lp_err_XXXXXX";
            int out = mkstemp(out_path), errf = mkstemp(err_path);
            assert_true(out >= 0 && errf >= 0);
            int saved_out = dup(1), saved_err = dup(2);
            dup2(out, 1);
            if (verbose)
                dup2(errf, 2);
            quiet_solves(backends[b], verbose);
            fflush(stdout);
            fflush(stderr);
            dup2(saved_out, 1);
            dup2(saved_err, 2);
            close(saved_out);
            close(saved_err);
            off_t out_size = file_size(out), err_size = file_size(errf);
            close(out);
            close(errf);
            unlink(out_path);
            unlink(err_path);
            assert_int_equal((int)out_size, 0);
            if (verbose)
                assert_true(err_size > 0);
        }
}

static void test_write(void **state)
{
    (void)state;
    char path[] = "/tmp/test_lp_write_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    lp *p = knapsack();
    tc_err e;
    assert_int_equal(lp_write(p, path, &e), TC_OK);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "weight"));
    assert_non_null(strstr(buf, "Maximize"));
    assert_int_equal(lp_write(p, "/nonexistent-dir/x.lp", &e), TC_INPUT);
    lp_free(p);
}

static void on_alarm(int sig)
{
    (void)sig;
    lp_request_stop();
}

/* A stop request (here from a timer's signal handler, as taccl-synth's
 * SIGINT handler does) ends a long solve promptly with TC_STOP, on both
 * backends; a request made before the call stops it at once. */
static void test_stop_request(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    for (int b = 0; b < NBACKENDS; b++) {
        lp *p = market_split(NULL);
        lp_opts o;
        opts_for(&o, backends[b]);
        o.time_limit_s = 30;
        lp_result r;
        tc_err e;
        lp_clear_stop();
        struct itimerval it = {{0, 0}, {0, 300000}};   /* 0.3 s */
        setitimer(ITIMER_REAL, &it, NULL);
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_STOP);
        assert_true(lp_stop_requested());
        assert_string_equal(e.msg, "interrupted");
        assert_int_equal(r.status, LP_UNSOLVED);
        if (!(r.seconds < 3))
            fail_msg("%s took %.2f s to stop", backends[b] == LP_CBC ? "CBC" : "GLPK",
                     r.seconds);
        /* still set: the next solve does not start */
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_STOP);
        lp_clear_stop();
        assert_false(lp_stop_requested());
        lp_free(p);
        p = small_lp();
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        lp_free(p);
    }
    sigaction(SIGALRM, &old, NULL);
}

/* A transportation-like LP of 60,000 columns: far more than 1 MiB for
 * either solver. */
static lp *big_lp(void)
{
    lp *p = lp_new("big");
    enum { S = 200, D = 300 };
    int *cols = malloc(D * sizeof *cols);
    double *ones = malloc(D * sizeof *ones);
    for (int i = 0; i < S; i++)
        for (int j = 0; j < D; j++)
            lp_add_col(p, NULL, 0, INFINITY, 1 + (i * 7 + j * 13) % 17, 0);
    for (int i = 0; i < S; i++) {
        for (int j = 0; j < D; j++) {
            cols[j] = i * D + j;
            ones[j] = 1;
        }
        lp_add_row(p, NULL, -INFINITY, 3 * D, D, cols, ones);
    }
    for (int j = 0; j < D; j++) {
        int c[S];
        double v[S];
        for (int i = 0; i < S; i++) {
            c[i] = i * D + j;
            v[i] = 1;
        }
        lp_add_row(p, NULL, 2, INFINITY, S, c, v);
    }
    free(cols);
    free(ones);
    return p;
}

/* A memory limit the solver exceeds is TC_INPUT saying so, with nothing
 * left behind: the same process solves again afterwards. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(UNDER_ASAN)
#define UNDER_ASAN 1
#endif

static void test_memory_limit(void **state)
{
    (void)state;
    for (int b = 0; b < NBACKENDS; b++) {
#ifdef UNDER_ASAN
        /* CBC's limit is RLIMIT_AS on its child, which ASan's shadow
         * memory always exceeds: only GLPK's is testable here */
        if (backends[b] == LP_CBC)
            continue;
#endif
        lp *p = big_lp();
        lp_opts o;
        opts_for(&o, backends[b]);
        o.mem_limit_mb = 1;
        lp_result r;
        tc_err e;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_INPUT);
        assert_int_equal(r.out_of_memory, 1);
        assert_int_equal(r.status, LP_UNSOLVED);
        assert_non_null(strstr(e.msg, "exceeded its memory limit of 1 MiB on 'big'"));
        assert_true(isnan(lp_value(p, 0)));
        /* without the limit (and afterwards, with GLPK's state freed) it solves */
        o.mem_limit_mb = 0;
        o.time_limit_s = 20;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_int_equal(r.out_of_memory, 0);
        assert_true(r.status == LP_OPTIMAL || r.status == LP_FEASIBLE);
        lp_free(p);
        p = small_lp();
        o.mem_limit_mb = 64;
        assert_int_equal(lp_solve(p, &o, &r, &e), TC_OK);
        assert_int_equal(r.status, LP_OPTIMAL);
        NEAR(r.objective, 11);
        lp_free(p);
    }
    lp_opts o;
    lp_opts_init(&o);
    o.mem_limit_mb = -1;
    lp *p = small_lp();
    tc_err e;
    assert_int_equal(lp_solve(p, &o, NULL, &e), TC_INPUT);
    lp_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_lp),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_small_milp),
        cmocka_unit_test(test_infeasible),
        cmocka_unit_test(test_unbounded),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_incumbent),
        cmocka_unit_test(test_incumbent_taken),
        cmocka_unit_test(test_equality_lp),
        cmocka_unit_test(test_backends_agree),
        cmocka_unit_test(test_argument_errors),
        cmocka_unit_test(test_duplicates_and_resolve),
        cmocka_unit_test(test_trivial),
        cmocka_unit_test(test_quiet),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_stop_request),
        cmocka_unit_test(test_memory_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
