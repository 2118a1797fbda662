/* size.c — parse and print byte sizes (see size.h). */
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

int size_parse(const char *s, long long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (strcasecmp(end, "") == 0 || strcasecmp(end, "B") == 0 ||
                  strcasecmp(end, "iB") == 0))
        end += 0;
    else if (!shift && (strcasecmp(end, "") == 0 || strcasecmp(end, "B") == 0))
        end += 0;
    else
        return -1;
    if (v == 0 || v > (1ULL << (62 - shift)))
        return -1;
    *out = (long long)(v << shift);
    return 0;
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
