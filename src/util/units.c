/* units.c — parse figures written with their unit (see units.h). */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Length of the decimal number at the start of s (units.h: digits, an
 * optional point and fraction, an optional exponent), 0 if there is none.
 * An 'e' not followed by digits is not part of the number. */
static size_t decimal_len(const char *s)
{
    size_t i = 0, digits = 0;
    while (isdigit((unsigned char)s[i]))
        i++, digits++;
    if (s[i] == '.')
        for (i++; isdigit((unsigned char)s[i]); i++)
            digits++;
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (isdigit((unsigned char)s[j])) {
            while (isdigit((unsigned char)s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

/* The decimal number at the start of s into *v and its length into *len;
 * -1 if there is none, or it is hexadecimal (strtod reads further than the
 * decimal rule does: "0x10"), or it is out of a double's range. */
static int leading_number(const char *s, double *v, size_t *len)
{
    if (!s || !(*len = decimal_len(s)))
        return -1;
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (errno || end != s + *len || !isfinite(*v))
        return -1;
    return 0;
}

/* The number at the start of s and the unit after it (spaces skipped on
 * both sides of the unit); -1 if there is no decimal number. */
static int split(const char *s, double *v, const char **unit, size_t *ulen)
{
    size_t len;
    if (leading_number(s, v, &len))
        return -1;
    const char *end = s + len;
    while (*end == ' ')
        end++;
    size_t n = strlen(end);
    while (n > 0 && end[n - 1] == ' ')
        n--;
    *unit = end;
    *ulen = n;
    return 0;
}

static int is(const char *unit, size_t n, const char *want)
{
    return strlen(want) == n && strncmp(unit, want, n) == 0;
}

int units_time_us(const char *s, double *us)
{
    double v;
    const char *u;
    size_t n;
    if (split(s, &v, &u, &n))
        return -1;
    if (is(u, n, "us") || is(u, n, "\xc2\xb5s"))
        *us = v;
    else if (is(u, n, "ns"))
        *us = v / 1e3;
    else if (is(u, n, "ms"))
        *us = v * 1e3;
    else if (is(u, n, "s"))
        *us = v * 1e6;
    else
        return -1;
    return 0;
}

int units_bw_gbps(const char *s, double *gbps)
{
    double v;
    const char *u;
    size_t n;
    if (split(s, &v, &u, &n) || n == 0)
        return -1;
    double scale = 1e-9;                /* bytes per second -> GB/s */
    const char *p = strchr("KMGT", u[0]);
    if (u[0] && p) {
        static const double prefix[] = {1e3, 1e6, 1e9, 1e12};
        scale = prefix[p - "KMGT"] / 1e9;
        u++;
        n--;
    }
    double bits;
    if (is(u, n, "B/s"))
        bits = 0;
    else if (is(u, n, "b/s") || is(u, n, "bps"))
        bits = 1;
    else
        return -1;
    *gbps = bits ? v * scale / 8 : v * scale;
    return 0;
}

int units_number(const char *s, double *v)
{
    size_t len;
    double x;
    if (leading_number(s, &x, &len) || s[len] != '\0')
        return -1;
    *v = x;
    return 0;
}

const char *units_hint(const char *s)
{
    if (!s)
        return "";
    if (*s == '+')
        return "; write the number without '+'";
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return "; hexadecimal is not accepted: write the number in decimal";
    if (strncasecmp(s, "inf", 3) == 0 || strncasecmp(s, "nan", 3) == 0)
        return "; inf and nan are not accepted: write a decimal number";
    size_t len = decimal_len(s);
    if (len) {
        errno = 0;
        double v = strtod(s, NULL);
        if (errno == ERANGE || !isfinite(v))
            return "; the number is out of range";
    }
    return "";
}
