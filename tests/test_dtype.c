/* test_dtype.c — the element types of a data run: bf16 and f16 reduction
 * steps round the exact sum once to nearest, ties to even (a GPU's
 * __hadd), overflow to infinity, keep subnormals and carry a NaN; the
 * type table's names and sizes; what each runtime reduces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "exec/data.h"

static uint16_t add16(sim_dtype t, uint16_t a, uint16_t b)
{
    uint16_t d;
    data_reduce(t, &d, &a, &b, 1);
    return d;
}

static void test_bf16_rounds_to_nearest_even(void **state)
{
    (void)state;
    /* 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1 */
    assert_int_equal(add16(DT_BF16, 0x3f80, 0x3b80), 0x3f80);
    /* (1 + 2^-7) + 2^-8: halfway again, to 1 + 2^-6 (even mantissa) */
    assert_int_equal(add16(DT_BF16, 0x3f81, 0x3b80), 0x3f82);
    /* just above halfway rounds up: 1 + 2^-8 + 2^-16 */
    uint16_t a = add16(DT_BF16, 0x3f80, 0x3b80);
    assert_int_equal(add16(DT_BF16, a, 0x3780), 0x3f80);  /* 2^-16 alone: below half */
    assert_int_equal(add16(DT_BF16, 0x3f80, 0x3b81), 0x3f81);  /* 2^-8 (1 + 2^-7): above */
    /* exact sums stay exact; signs */
    assert_int_equal(add16(DT_BF16, 0x3f80, 0x3f80), 0x4000);          /* 1 + 1 = 2 */
    assert_int_equal(add16(DT_BF16, 0x3f80, 0xbf80), 0x0000);          /* 1 - 1 = +0 */
    assert_int_equal(add16(DT_BF16, 0xbf80, 0xbf80), 0xc000);          /* -2 */
    /* the largest finite plus half its ulp ties to the even neighbour: inf */
    assert_int_equal(add16(DT_BF16, 0x7f7f, 0x7aff), 0x7f7f);          /* < 2^119, half ulp */
    assert_int_equal(add16(DT_BF16, 0x7f7f, 0x7b00), 0x7f80);          /* = 2^119 */
    /* a poisoned operand (0x7fba, a NaN) gives a NaN */
    uint16_t n = add16(DT_BF16, 0x7fba, 0x3f80);
    assert_int_equal(n & 0x7f80, 0x7f80);
    assert_int_not_equal(n & 0x007f, 0);
}

static void test_f16_rounds_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(add16(DT_F16, 0x3c00, 0x1000), 0x3c00);  /* 1 + 2^-11: tie, to 1 */
    assert_int_equal(add16(DT_F16, 0x3c01, 0x1000), 0x3c02);  /* tie, to the even one */
    assert_int_equal(add16(DT_F16, 0x3c00, 0x3c00), 0x4000);
    /* 65504 + 8 stays, 65504 + 16 is the tie with 65536: infinity */
    assert_int_equal(add16(DT_F16, 0x7bff, 0x4800), 0x7bff);
    assert_int_equal(add16(DT_F16, 0x7bff, 0x4c00), 0x7c00);
    assert_int_equal(add16(DT_F16, 0xfbff, 0xcc00), 0xfc00);
    /* subnormals: 2^-24 + 2^-24, and the least normal from two subnormals */
    assert_int_equal(add16(DT_F16, 0x0001, 0x0001), 0x0002);
    assert_int_equal(add16(DT_F16, 0x0200, 0x0200), 0x0400);
    uint16_t n = add16(DT_F16, 0x7fba, 0x3c00);
    assert_int_equal(n & 0x7c00, 0x7c00);
    assert_int_not_equal(n & 0x03ff, 0);
}

/* An oracle written from the formats' definitions with libm (frexp, ldexp,
 * nearbyint), against which the executor's bit-level conversions are checked
 * on every code pair's neighbourhood: p significant bits, least normal
 * exponent emin, mantissa bits mb, bias. */
typedef struct { int p, emin, mb, bias; double max; } fmt;
static const fmt FB = {8, -126, 7, 127, 0x1.fep127}, FH = {11, -14, 10, 15, 65504.0};

static double ref_decode(const fmt *f, uint16_t h)
{
    int be = (h >> f->mb) & (0x7fff >> f->mb);
    double m = h & ((1u << f->mb) - 1), v;
    if (be == (0x7fff >> f->mb))
        v = m != 0 ? NAN : INFINITY;
    else
        v = be == 0 ? ldexp(m, f->emin - f->mb) : ldexp(1.0 + m / (1u << f->mb), be - f->bias);
    return (h >> 15) ? -v : v;
}

static int ref_same(const fmt *f, uint16_t got, double x)
{
    if (isnan(x))
        return isnan(ref_decode(f, got));
    double r = x;
    if (x != 0 && !isinf(x)) {
        int e;
        frexp(x, &e);
        double q = ldexp(1.0, (e - 1 < f->emin ? f->emin : e - 1) - (f->p - 1));
        r = nearbyint(x / q) * q;
        if (fabs(r) > f->max)
            r = copysign(INFINITY, x);
    }
    double g = ref_decode(f, got);
    return g == r && signbit(g) == signbit(r);
}

static void test_random_sums_match_the_definition(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (int t = 0; t < 2; t++) {
        sim_dtype dt = t ? DT_F16 : DT_BF16;
        const fmt *f = t ? &FH : &FB;
        for (int i = 0; i < 1000000; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            uint16_t a = (uint16_t)s, b = (uint16_t)(s >> 16);
            if (i & 1)      /* near neighbours: the ties and carries */
                b = (uint16_t)((a ^ 0x8000 * (uint16_t)((s >> 40) & 1)) - (uint16_t)((s >> 32) & 0xff));
            uint16_t d = add16(dt, a, b);
            if (!ref_same(f, d, ref_decode(f, a) + ref_decode(f, b)))
                fail_msg("%s 0x%04x + 0x%04x = 0x%04x", t ? "f16" : "bf16", a, b, d);
        }
    }
}

/* The reduction order shows: (a + b) + c differs from a + (b + c). */
static void test_order_matters(void **state)
{
    (void)state;
    uint16_t one = 0x3f80, tiny = 0x3b80;    /* 1 and 2^-8 in bf16 */
    uint16_t left = add16(DT_BF16, add16(DT_BF16, one, tiny), tiny);
    uint16_t right = add16(DT_BF16, one, add16(DT_BF16, tiny, tiny));
    assert_int_equal(left, 0x3f80);          /* each 2^-8 is lost to the tie */
    assert_int_equal(right, 0x3f81);         /* 2^-7 is kept */
}

/* In place and over arrays, as the simulator calls it. */
static void test_arrays_in_place(void **state)
{
    (void)state;
    uint16_t d[3] = {0x3c00, 0x4000, 0x0001}, s[3] = {0x3c00, 0x3c00, 0x0001};
    data_reduce(DT_F16, d, d, s, 3);
    assert_int_equal(d[0], 0x4000);
    assert_int_equal(d[1], 0x4200);
    assert_int_equal(d[2], 0x0002);
}

/* Inputs: 2-byte elements, finite, and deterministic. */
static void test_inputs(void **state)
{
    (void)state;
    uint16_t a[64], b[64];
    for (int t = DT_BF16; t <= DT_F16; t++) {
        data_input((sim_dtype)t, 7, 3, 2, 0, 64, a);
        data_input((sim_dtype)t, 7, 3, 2, 0, 64, b);
        assert_memory_equal(a, b, sizeof a);
        uint16_t expmask = t == DT_BF16 ? 0x7f80 : 0x7c00;
        for (int i = 0; i < 64; i++)
            assert_int_not_equal(a[i] & expmask, expmask);
        /* element 10 alone is what it is in the run */
        data_input((sim_dtype)t, 7, 3, 2, 10, 1, b);
        assert_int_equal(b[0], a[10]);
    }
}

static void test_table(void **state)
{
    (void)state;
    rt_dtype t;
    tc_err e;
    assert_int_equal(runtime_dtype_parse("bf16", &t, &e), TC_OK);
    assert_int_equal(t, DT_BF16);
    assert_int_equal(runtime_dtype_bytes(t), 2);
    assert_string_equal(runtime_dtype_nccl(t), "bfloat16");
    assert_int_equal(runtime_dtype_parse("f64", &t, &e), TC_INPUT);
    assert_string_equal(e.msg, "expected i32, f32, bf16 or f16, got 'f64'");
    /* every runtime runs the four types; MSCCL++ only adds */
    for (int r = 0; r < RT_COUNT; r++)
        for (int d = 0; d < DT_COUNT; d++)
            assert_int_equal(runtime_reduces((runtime)r, (rt_dtype)d, RED_SUM, &e), TC_OK);
    assert_int_equal(runtime_reduces(RT_EXECUTOR, DT_BF16, RED_MAX, &e), TC_OK);
    assert_int_equal(runtime_reduces(RT_MSCCL, DT_F16, RED_AVG, &e), TC_OK);
    assert_int_equal(runtime_reduces(RT_MSCCLPP, DT_BF16, RED_AVG, &e), TC_INPUT);
    assert_string_equal(e.msg, "mscclpp (MSCCL++) does not reduce by avg (its reductions add: "
                               "sum only)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_rounds_to_nearest_even),
        cmocka_unit_test(test_f16_rounds_to_nearest_even),
        cmocka_unit_test(test_random_sums_match_the_definition),
        cmocka_unit_test(test_order_matters),
        cmocka_unit_test(test_arrays_in_place),
        cmocka_unit_test(test_inputs),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
