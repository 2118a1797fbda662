/* mem.c — allocation that aborts on out of memory (see mem.h). */
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>

static void *checked(void *p)
{
    if (!p) {
        fputs("taccl: out of memory\n", stderr);
        abort();
    }
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
