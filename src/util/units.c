/* units.c — parse figures written with their unit (see units.h). */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The number at the start of s and the unit after it (spaces skipped on
 * both sides of the unit); -1 if there is no finite number. */
static int split(const char *s, double *v, const char **unit, size_t *ulen)
{
    if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
        return -1;
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (errno || end == s || !isfinite(*v))
        return -1;
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
