/* test_size.c — byte sizes as users write them (util/size): powers of
 * 1024 in either case with B or iB, and a lower-case b refused as bits with
 * a hint that names the byte spelling; 0 and sizes past 2^62 bytes refused
 * with a hint naming the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "util/size.h"

static void test_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        long long v;
    } ok[] = {{"1048576", 1048576}, {"64K", 65536}, {"64k", 65536}, {"16M", 16 << 20},
              {"16MB", 16 << 20}, {"16MiB", 16 << 20}, {"1G", 1LL << 30}, {"2TiB", 2LL << 40},
              {"100B", 100}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        long long v = 0;
        assert_int_equal(size_parse(ok[i].s, &v), 0);
        assert_true(v == ok[i].v);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"16Mb", "16Mib", "1gb", "100b", "1GIB", "1e6", "0", "",
                                      "-1", "16 MB", "1Q", "99999999999T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long long v = -7;
        assert_int_equal(size_parse(bad[i], &v), -1);
        assert_true(v == -7);
    }
}

/* Why a string is refused, so a message names the rule: the form, zero, or
 * past 2^62 bytes (also a number past the range of unsigned long long). */
static void test_status(void **state)
{
    (void)state;
    long long v = -7;
    assert_int_equal(size_check("1.5G", &v), SIZE_NOT_A_SIZE);
    assert_int_equal(size_check("-1", &v), SIZE_NOT_A_SIZE);
    assert_int_equal(size_check("16Mb", &v), SIZE_NOT_A_SIZE);
    assert_int_equal(size_check("0", &v), SIZE_ZERO);
    assert_int_equal(size_check("0K", &v), SIZE_ZERO);
    assert_int_equal(size_check("99999999999T", &v), SIZE_TOO_LARGE);
    assert_int_equal(size_check("99999999999999999999999", &v), SIZE_TOO_LARGE);
    assert_int_equal(size_check("4194305T", &v), SIZE_TOO_LARGE);
    assert_true(v == -7);
    assert_int_equal(size_check("4194304T", &v), SIZE_OK);
    assert_true(v == SIZE_MAX_BYTES);
}

static void test_hint(void **state)
{
    (void)state;
    char b[128];
    assert_string_equal(size_hint("16Mb", b, sizeof b),
                        "; 'b' is bits: write 16MB or 16MiB for bytes");
    assert_string_equal(size_hint("1gb", b, sizeof b), "; 'b' is bits: write 1GB or 1GiB for bytes");
    assert_string_equal(size_hint("100b", b, sizeof b), "; 'b' is bits: write 100B for bytes");
    assert_string_equal(size_hint("1e6", b, sizeof b), "");
    assert_string_equal(size_hint("1Qb", b, sizeof b), "");
    assert_string_equal(size_hint(NULL, b, sizeof b), "");
    /* spelled as a size but out of range: the rule it broke */
    assert_string_equal(size_hint("0", b, sizeof b), "; a size is at least 1 byte");
    assert_string_equal(size_hint("0K", b, sizeof b), "; a size is at least 1 byte");
    assert_string_equal(size_hint("99999999999T", b, sizeof b),
                        "; the largest size is 2^62 bytes (4 EiB)");
    assert_string_equal(size_hint("99999999999999999999", b, sizeof b),
                        "; the largest size is 2^62 bytes (4 EiB)");
    assert_string_equal(size_hint("4611686018427387905", b, sizeof b),
                        "; the largest size is 2^62 bytes (4 EiB)");
    long long v = 0;
    assert_int_equal(size_parse("4611686018427387904", &v), 0);
    assert_true(v == 1LL << 62);
    assert_int_equal(size_parse("4194304T", &v), 0);
    assert_true(v == 1LL << 62);
    assert_int_equal(size_parse("4194305T", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
