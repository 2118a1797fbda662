/* data.h — the executor's real data: every rank's chunk slots, the seeded
 * inputs, the element kernels and the final postcondition check.
 *
 * Each rank owns one byte array of layout_of(p, rank, inplace).nslots
 * chunks (layout.h decides what aliases what).  Input chunk c of rank r,
 * element e, holds a value computed from (seed, r, c, e) by a counter-based
 * hash, so the check can recompute every expected value without keeping a
 * copy of the inputs.  Every other slot starts poisoned (0x7fbadbad, which is
 * also a signalling NaN as f32), so a schedule that reads a chunk nobody
 * wrote produces a visibly wrong result (0x7fba, a NaN, in bf16 and f16).
 * The check compares each output element with what the collective promises
 * (collective.h): AllGather and AllToAll bit for bit; i32 sums exactly
 * (wrap-around); f32, bf16 and f16 sums against a double-precision
 * reference within (n+1) * u * sum|x_i|, u the type's unit roundoff. */
#ifndef TC_DATA_H
#define TC_DATA_H

#include "layout.h"
#include "sim.h"

#define DATA_POISON 0x7fbadbadu
#define DATA_MAX_BYTES (16LL << 30)   /* refuse to allocate more than 16 GiB */

typedef struct {
    int nranks;
    long long chunk_bytes;
    long long elems;        /* elements per chunk (4 bytes i32/f32, 2 bf16/f16) */
    sim_dtype dtype;
    unsigned seed;
    layout *lay;            /* [nranks] */
    unsigned char **mem;    /* [nranks]: lay[r].nslots * chunk_bytes bytes */
} data_space;

/* Total bytes the buffers of p take at this chunk size. */
double data_bytes_needed(const prog *p, int inplace, long long chunk_bytes);

/* TC_OK when those buffers fit DATA_MAX_BYTES, else TC_INPUT saying how
 * many GiB they need. */
int data_fits(const prog *p, int inplace, long long chunk_bytes, tc_err *err);

/* Allocate, seed and poison every rank's slots.  TC_INPUT with err set when
 * the element size does not divide the chunk, the shapes do not match the
 * collective, or the buffers would exceed DATA_MAX_BYTES / memory. */
int data_init(data_space *d, const prog *p, const sim_opts *o, long long chunk_bytes,
              tc_err *err);

void data_free(data_space *d);

/* Address of slot `slot` of rank `rank`. */
static inline unsigned char *data_slot(const data_space *d, int rank, int slot)
{
    return d->mem[rank] + (size_t)slot * (size_t)d->chunk_bytes;
}

/* dst[i] = a[i] + b[i] for n elements (i32 wraps around; f32 IEEE single;
 * bf16 and f16 the exact sum rounded once to nearest, ties to even).
 * dst may be a or b exactly (element-wise in place). */
void data_reduce(sim_dtype t, void *dst, const void *a, const void *b, long long n);

/* The seeded input values: elements e0 .. e0+n-1 of input chunk `chunk` of
 * rank `rank`, written to out (runtime_dtype_bytes(t) bytes each). */
void data_input(sim_dtype t, unsigned seed, int rank, int chunk, long long e0, long long n,
                void *out);

/* Fill n elements of type t at p with the poison (0x7fbadbad as i32/f32,
 * 0x7fba, a NaN, as bf16/f16). */
void data_poison(sim_dtype t, void *p, long long n);

/* Element i of a floating-point array of type t (f32, bf16, f16) as a double. */
double data_value(sim_dtype t, const void *p, long long i);

/* Element `p` of type t as text for a message ("12", "1.5 (0x3fc0)"). */
void data_format(sim_dtype t, const void *p, char *out, size_t n);

/* Whether `got`, a floating-point sum of type t over nranks inputs reduced
 * in any order, is within the tolerance of its double reference `ref`
 * (sum) with `mag` the sum of the inputs' magnitudes: (n+1) * u * mag plus
 * (n+1) half quanta of the type's subnormals, u its unit roundoff. */
int data_sum_close(sim_dtype t, int nranks, double got, double ref, double mag);

/* Check the postcondition of p's collective on the final buffers.  Fills
 * r->wrong_elems, r->max_rel_err and r->replicas_identical (AllReduce: 1 if
 * every rank's output bytes equal rank 0's, else 0; other collectives -1);
 * appends one HZ_WRONG_DATA naming the first wrong element if any.
 * Returns 1 if the data is correct, 0 if not. */
int data_check(const data_space *d, const prog *p, sim_result *r, hazard_list *hz);

#endif
