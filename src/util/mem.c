/* mem.c — allocation that aborts on out of memory (see mem.h). */
#include "mem.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void tc_oom(void)
{
    fputs("taccl: out of memory\n", stderr);
    abort();
}

static void *checked(void *p)
{
    if (!p)
        tc_oom();
    return p;
}

void *xmalloc(size_t n)
{
    return checked(malloc(n ? n : 1));
}

void *xcalloc(size_t n, size_t size)
{
    return checked(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t n)
{
    return checked(realloc(p, n ? n : 1));
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

void *xgrow(void *base, int *cap, int need, size_t size)
{
    assert(need >= 0 && size > 0 && *cap >= 0);
    if (need <= *cap)
        return base;
    long long ncap = *cap > 0 ? *cap : 4;
    while (ncap < need)
        ncap *= 2;
    if (ncap > INT_MAX)
        ncap = need;
    char *nb = xrealloc(base, (size_t)ncap * size);
    memset(nb + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
    *cap = (int)ncap;
    return nb;
}
