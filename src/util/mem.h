/* mem.h — allocation that never returns NULL.
 *
 * Out of memory is the one failure the library does not carry up as a
 * value: these print "taccl: out of memory" and abort.  A zero size is
 * rounded up to one byte so callers never see NULL for an empty array. */
#ifndef TC_MEM_H
#define TC_MEM_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);

#endif
