/* heap.h — the binary min-heap, one implementation for every element type.
 *
 * The simulator's event queue, the ordering stage's pick of the next send,
 * the contiguity stage's requests, the lowering's causal order and the
 * latency bound's Dijkstra all need "give me the smallest": this header
 * writes that once, as typed code (a macro, so the hot loops keep plain
 * struct copies and an inlinable comparison instead of memcpy and a
 * function pointer).
 *
 *   TC_HEAP_DEFINE(prefix, type, ctx_type, less)
 *
 * defines, for an array v of n elements (the caller owns the storage and
 * makes room for one more before a push, e.g. with xgrow):
 *
 *   static void prefix_push(type *v, int *n, type x, ctx_type ctx);
 *   static type prefix_pop(type *v, int *n, ctx_type ctx);    (*n > 0)
 *
 * where less(ctx, const type *a, const type *b) says a comes strictly
 * before b.  With a total order (ties broken down to a unique key, or
 * equal elements identical) the order of pops is fully determined, so the
 * programs' output does not depend on this implementation. */
#ifndef TC_HEAP_H
#define TC_HEAP_H

#include <assert.h>

#define TC_HEAP_DEFINE(prefix, type, ctx_type, less)                            \
    static void prefix##_push(type *v, int *n, type x, ctx_type ctx)            \
    {                                                                           \
        int i = (*n)++;                                                         \
        while (i > 0) {                                                         \
            int up = (i - 1) / 2;                                               \
            if (!less(ctx, &x, &v[up]))                                         \
                break;                                                          \
            v[i] = v[up];                                                       \
            i = up;                                                             \
        }                                                                       \
        v[i] = x;                                                               \
    }                                                                           \
                                                                                \
    static type prefix##_pop(type *v, int *n, ctx_type ctx)                     \
    {                                                                           \
        assert(*n > 0);                                                         \
        type top = v[0], last = v[--(*n)];                                      \
        int i = 0;                                                              \
        for (;;) {                                                              \
            int c = 2 * i + 1;                                                  \
            if (c >= *n)                                                        \
                break;                                                          \
            if (c + 1 < *n && less(ctx, &v[c + 1], &v[c]))                      \
                c++;                                                            \
            if (!less(ctx, &v[c], &last))                                       \
                break;                                                          \
            v[i] = v[c];                                                        \
            i = c;                                                              \
        }                                                                       \
        if (*n > 0)                                                             \
            v[i] = last;                                                        \
        return top;                                                             \
    }

#endif
