/* fuzz_common.h — what the three libFuzzer targets share.
 *
 * Each target hands one input to a loader and then holds the library to
 * its contract for bad input: a loader either returns a value or fails with
 * TC_INPUT and a non-empty one-line message; it never crashes, exits or
 * leaks (AddressSanitizer and UndefinedBehaviorSanitizer are on).  A broken
 * contract calls abort() so libFuzzer records the input as a crash. */
#ifndef TC_FUZZ_COMMON_H
#define TC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* The input as a NUL-terminated string (the loaders read text). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A failed load must say why: TC_INPUT, one line, not empty. */
static inline void fuzz_expect_input_error(const tc_err *e, const char *what)
{
    if (e->code != TC_INPUT || !e->msg[0] || strchr(e->msg, '\n')) {
        fprintf(stderr, "fuzz: %s failed without a proper message: code %d, \"%s\"\n", what,
                e->code, e->msg);
        abort();
    }
}

#endif
