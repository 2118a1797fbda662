/* tcassert.c — the failure path of TC_ASSERT (tcassert.h). */
#include "tcassert.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void tcassert_fail(const char *cond, const char *file, int line)
{
    fflush(stdout);
    fprintf(stderr, "%s:%d: internal invariant failed: %s (a bug in taccl, not in the input)\n",
            file, line, cond);
    abort();
}
