/* test_units.c — figures with their unit (util/units): times to µs and
 * bandwidths to GB/s, exactly where the decimal allows; bits are an
 * eighth of bytes; anything without a known unit is refused, and so is a
 * number that is not plain decimal (a sign, hexadecimal, inf, nan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/units.h"

static void test_times(void **state)
{
    (void)state;
    double us = -1;
    assert_int_equal(units_time_us("2.6 us", &us), 0);
    assert_true(us == 2.6);
    assert_int_equal(units_time_us("700 ns", &us), 0);
    assert_true(us == 700 / 1e3);
    assert_int_equal(units_time_us("1.5ms", &us), 0);
    assert_true(us == 1500);
    assert_int_equal(units_time_us("3 \xc2\xb5s", &us), 0);
    assert_true(us == 3);
    assert_int_equal(units_time_us("2 s ", &us), 0);
    assert_true(us == 2e6);
    us = -1;
    static const char *const bad[] = {"2.6", "2.6 usec", "us", "-1 us", "inf us", "", "2.6 US"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(units_time_us(bad[i], &us), -1);
    assert_int_equal(units_time_us(NULL, &us), -1);
    assert_true(us == -1);
}

static void test_bandwidths(void **state)
{
    (void)state;
    double g = -1;
    assert_int_equal(units_bw_gbps("25 GB/s", &g), 0);
    assert_true(g == 25);
    assert_int_equal(units_bw_gbps("200 Gb/s", &g), 0);
    assert_true(g == 25);
    assert_int_equal(units_bw_gbps("100 Gbps", &g), 0);
    assert_true(g == 12.5);
    assert_int_equal(units_bw_gbps("2.4 TB/s", &g), 0);
    assert_true(g == 2400);
    assert_int_equal(units_bw_gbps("500MB/s", &g), 0);
    assert_true(g == 0.5);
    g = -1;
    static const char *const bad[] = {"25", "25 GB", "25 gb/s", "25 GiB/s", "GB/s", "25 XB/s", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(units_bw_gbps(bad[i], &g), -1);
    assert_true(g == -1);
}

/* One rule for the number in every figure and in units_number: "0x10 us"
 * was read as 16 us by strtod while "+1 us" was refused. */
static void test_decimal_only(void **state)
{
    (void)state;
    double v = -1;
    static const char *const bad[] = {"0x10 us", "0X10 us", "0x1p3 us", "+1 us", "-1 us",
                                      "inf us", "INF us", "nan us", "1e999 us", "e3 us", ". us",
                                      " 1 us"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(units_time_us(bad[i], &v), -1);
        assert_true(v == -1);
    }
    assert_int_equal(units_bw_gbps("0x19 GB/s", &v), -1);
    assert_int_equal(units_bw_gbps("+25 GB/s", &v), -1);
    assert_true(v == -1);
    /* what the rule takes: digits, a point and fraction, an exponent */
    assert_int_equal(units_time_us(".5 us", &v), 0);
    assert_true(v == 0.5);
    assert_int_equal(units_time_us("5. us", &v), 0);
    assert_true(v == 5);
    assert_int_equal(units_time_us("2.5e-1us", &v), 0);
    assert_true(v == 0.25);
    assert_int_equal(units_time_us("1E3 ns", &v), 0);
    assert_true(v == 1);
    /* the reason named, or none where the unit is the problem */
    assert_non_null(strstr(units_hint("0x10 us"), "hexadecimal"));
    assert_non_null(strstr(units_hint("+1 us"), "without '+'"));
    assert_non_null(strstr(units_hint("inf us"), "inf and nan"));
    assert_non_null(strstr(units_hint("NaN us"), "inf and nan"));
    assert_non_null(strstr(units_hint("1e999 us"), "out of range"));
    assert_string_equal(units_hint("2.6 usec"), "");
    assert_string_equal(units_hint("2.6"), "");
    assert_string_equal(units_hint(NULL), "");
    /* the same rule with no unit (taccl-synth's --time-limit, --gap, ...) */
    assert_int_equal(units_number("20", &v), 0);
    assert_true(v == 20);
    assert_int_equal(units_number("1e-3", &v), 0);
    assert_true(v == 1e-3);
    static const char *const bad_number[] = {"", "0x10", "+4", "-4", "inf", "nan", "1e308x",
                                             "4 ", " 4", "1e999", "4s"};
    v = -1;
    for (size_t i = 0; i < sizeof bad_number / sizeof bad_number[0]; i++)
        assert_int_equal(units_number(bad_number[i], &v), -1);
    assert_int_equal(units_number(NULL, &v), -1);
    assert_true(v == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_bandwidths),
        cmocka_unit_test(test_decimal_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
