/* test_units.c — figures with their unit (util/units): times to µs and
 * bandwidths to GB/s, exactly where the decimal allows; bits are an
 * eighth of bytes; anything without a known unit is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_bandwidths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
