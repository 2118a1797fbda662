/* size.c — parse and print byte sizes (see size.h). */
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_status size_check(const char *s, long long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return SIZE_NOT_A_SIZE;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int overflow = errno == ERANGE;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (!(strcmp(end, "") == 0 || strcmp(end, "B") == 0 || (shift && strcmp(end, "iB") == 0)))
        return SIZE_NOT_A_SIZE;
    if (overflow || v > ((unsigned long long)SIZE_MAX_BYTES >> shift))
        return SIZE_TOO_LARGE;
    if (v == 0)
        return SIZE_ZERO;
    *out = (long long)(v << shift);
    return SIZE_OK;
}

int size_parse(const char *s, long long *out)
{
    return size_check(s, out) == SIZE_OK ? 0 : -1;
}

const char *size_hint(const char *s, char *buf, int len)
{
    buf[0] = '\0';
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || s[n - 1] != 'b' || !isdigit((unsigned char)s[0]))
        return buf;
    size_t d = 0;
    while (d < n && isdigit((unsigned char)s[d]))
        d++;
    char prefix = d < n - 1 ? (char)toupper((unsigned char)s[d]) : '\0';
    if (prefix && !strchr("KMGT", prefix))
        return buf;
    if (prefix)
        snprintf(buf, (size_t)len, "; 'b' is bits: write %.*s%cB or %.*s%ciB for bytes", (int)d, s,
                 prefix, (int)d, s, prefix);
    else
        snprintf(buf, (size_t)len, "; 'b' is bits: write %.*sB for bytes", (int)d, s);
    return buf;
}

const char *size_format(long long n, char *buf, int len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    long long v = n;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, (size_t)len, "%lld %s", v, units[u]);
    return buf;
}
