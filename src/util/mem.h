/* mem.h — allocation that never returns NULL, and the one out-of-memory
 * policy.
 *
 * Out of memory is the one failure the library does not carry up as a
 * value (the loaders' size limits and the solvers' memory limit turn the
 * foreseeable cases into input errors first): every allocation failure
 * ends in tc_oom(), which prints "taccl: out of memory" and aborts.  A zero
 * size is rounded up to one byte so callers never see NULL for an empty
 * array. */
#ifndef TC_MEM_H
#define TC_MEM_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Print "taccl: out of memory" on stderr and abort. */
_Noreturn void tc_oom(void);

/* The growable array: make `base` (of *cap elements of `size` bytes) hold
 * at least `need` elements, doubling from 4; new elements are zeroed.
 * Returns the (possibly moved) array and updates *cap. */
void *xgrow(void *base, int *cap, int need, size_t size);

#endif
