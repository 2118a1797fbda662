/* bound_int.h — what bound.c takes from the rest of its part (not a
 * public API). */
#ifndef TC_BOUND_INT_H
#define TC_BOUND_INT_H

#include "bound.h"

#include <stddef.h>

/* The bandwidth bound of collective k over every cut of t (bound_exact.c):
 * 1 with *upb in us per byte of the larger per-rank buffer and why set;
 * 0 when skipped (AllToAll, too large) or unsolved, why saying which. */
int bound_exact_cut(const topo *t, coll_kind k, double *upb, char *why, size_t wsz);

#endif
