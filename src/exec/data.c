/* data.c — the executor's buffers, seeded inputs, kernels and postcondition
 * check (see data.h).
 *
 * Values are typed consistently: an i32 run only ever stores and loads
 * int32_t (or its unsigned twin) and an f32 run only float, so the kernels
 * can use plain typed loops that the compiler vectorises.  bf16 and f16
 * are stored as their 16-bit patterns; a reduction step decodes both
 * operands, adds them exactly (in double: two 16-bit values always sum
 * exactly there) and rounds the sum once to the type, to nearest, ties to
 * even, as a GPU's __hadd does: so the order of the steps shows in the
 * result, and replicas reduced in different orders can differ.  Inputs come from
 * a splitmix64 stream keyed by (seed, rank, chunk): element e of a chunk is
 * mix(key + (e + 1) * golden), so any element can be recomputed alone. */
/* madvise(MADV_HUGEPAGE) is a Linux extension: ask for it explicitly. */
#ifdef __linux__
#define _DEFAULT_SOURCE 1
#endif
#include "data.h"
#include "../util/mem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define GOLDEN 0x9e3779b97f4a7c15ULL
#define BLOCK 8192          /* elements per block in the check */
#define VEC 64              /* fixed inner trip count so loops vectorise */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t chunk_key(unsigned seed, int rank, int chunk)
{
    uint64_t k = mix64((uint64_t)seed + GOLDEN);
    k = mix64(k ^ ((uint64_t)(uint32_t)rank * 0xd6e8feb86659fd93ULL));
    return mix64(k ^ ((uint64_t)(uint32_t)chunk * 0xa0761d6478bd642fULL + 1));
}

/* --- 16-bit floating point ------------------------------------------------ */

/* The formats: p significant bits, the exponent of the least normal, the
 * largest finite value, the exponent bias and mantissa bits of the code,
 * the least subnormal and its inverse.  The conversions work on the bits of
 * a double (every value of both formats is a normal double): libm's frexp,
 * ldexp and nearbyint per element made a bf16 run several times slower
 * than an i32 one. */
typedef struct {
    int p, emin;
    double max;
    int bias, mbits;
    uint16_t inf, nan;
    double sub, inv_sub;        /* the least subnormal, its inverse */
} half_fmt;

static const half_fmt BF16 = {8, -126, 0x1.fep127, 127, 7, 0x7f80, 0x7fc0, 0x1p-133, 0x1p133};
static const half_fmt F16 = {11, -14, 65504.0, 15, 10, 0x7c00, 0x7e00, 0x1p-24, 0x1p24};

static const half_fmt *fmt_of(sim_dtype t)
{
    return t == DT_BF16 ? &BF16 : &F16;
}

/* The biased exponent field of a double (0: zero or subnormal). */
static inline int dexp(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (int)((b >> 52) & 0x7ff);
}

/* 2^k, for k in the normal range. */
static inline double dpow2(int k)
{
    uint64_t b = (uint64_t)(k + 1023) << 52;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* x rounded to the format: to nearest, ties to even (as nearbyint in the
 * default rounding mode), subnormals kept, overflow to infinity.  Adding and
 * subtracting c = 1.5 * 2^(52 + k) rounds x to a multiple of the quantum
 * 2^k at x: x + c lies in [2^(52+k), 2^(53+k)), where a double's spacing is
 * 2^k, and c is an even multiple of it.  A double subnormal x takes the
 * slow path. */
static double half_round(const half_fmt *f, double x)
{
    if (x == 0 || isnan(x) || isinf(x))
        return x;
    int be = dexp(x);
    if (be == 0) {
        int e;
        frexp(x, &e);
        int lead = e - 1 < f->emin ? f->emin : e - 1;
        double q = ldexp(1.0, lead - (f->p - 1));
        double r = nearbyint(x / q) * q;
        return fabs(r) > f->max ? copysign(INFINITY, x) : r;
    }
    int lead = be - 1023 < f->emin ? f->emin : be - 1023;
    double c = 1.5 * dpow2(52 + lead - (f->p - 1));
    double r = (x + c) - c;
    if (r == 0)
        r = copysign(0.0, x);
    return fabs(r) > f->max ? copysign(INFINITY, x) : r;
}

/* The code of a value the format holds exactly (half_round's result): its
 * top mantissa bits, or a multiple of the least subnormal. */
static uint16_t half_encode(const half_fmt *f, double r)
{
    uint16_t sign = signbit(r) ? (uint16_t)0x8000 : 0;
    double a = fabs(r);
    if (isnan(r))
        return f->nan;
    if (isinf(r))
        return (uint16_t)(sign | f->inf);
    if (a == 0)
        return sign;
    int e = dexp(a) - 1023;
    if (e < f->emin)
        return (uint16_t)(sign | (uint16_t)(a * f->inv_sub));
    uint64_t b;
    memcpy(&b, &a, sizeof b);
    uint16_t m = (uint16_t)((b >> (52 - f->mbits)) & ((1u << f->mbits) - 1));
    return (uint16_t)(sign | (uint16_t)((e + f->bias) << f->mbits) | m);
}

static double half_decode(const half_fmt *f, uint16_t h)
{
    int sign = h >> 15, be = (h >> f->mbits) & (0x7fff >> f->mbits);
    unsigned m = h & ((1u << f->mbits) - 1);
    double v;
    if (be == (0x7fff >> f->mbits))
        v = m ? NAN : INFINITY;
    else if (be == 0)
        v = (double)m * f->sub;
    else {
        uint64_t b = ((uint64_t)(be - f->bias + 1023) << 52) | ((uint64_t)m << (52 - f->mbits));
        memcpy(&v, &b, sizeof v);
    }
    return sign ? -v : v;
}

/* d[i] = round(a[i] + b[i]), element by element (operands may overlap:
 * each element is read before it is written). */
static void add_half(sim_dtype t, uint16_t *d, const uint16_t *a, const uint16_t *b, long long n)
{
    const half_fmt *f = fmt_of(t);
    for (long long i = 0; i < n; i++) {
        double x = half_decode(f, a[i]), y = half_decode(f, b[i]);
        d[i] = half_encode(f, half_round(f, x + y));
    }
}

/* bf16: as f32, exponent in [-20, 20], 7 random mantissa bits; f16: exponent
 * in [-8, 4] and 10 bits, so that a sum over 1024 ranks stays finite. */
static inline uint16_t half_value(sim_dtype t, uint64_t h)
{
    const half_fmt *f = fmt_of(t);
    int lo = t == DT_BF16 ? -20 : -8, span = t == DT_BF16 ? 41 : 13;
    uint32_t sign = (uint32_t)(h >> 63);
    int e = lo + (int)((((h >> 24) & 0xffffffffu) * (uint64_t)span) >> 32);
    uint32_t m = (uint32_t)(h & ((1u << f->mbits) - 1));
    return (uint16_t)(sign << 15 | (uint32_t)(e + f->bias) << f->mbits | m);
}

/* i32: uniform in [-2^20, 2^20]. */
static inline int32_t i32_value(uint64_t h)
{
    uint64_t span = (1u << 21) + 1;
    return (int32_t)((((h >> 32) * span) >> 32)) - (1 << 20);
}

/* f32: sign * (1 + u) * 2^e, e uniform in [-20, 20], u with 23 random bits. */
static inline float f32_value(uint64_t h)
{
    uint32_t sign = (uint32_t)(h >> 63);
    uint32_t e = (uint32_t)((((h >> 24) & 0xffffffffu) * 41u) >> 32);   /* 0..40 */
    uint32_t bits = (sign << 31) | ((127u + e - 20u) << 23) | (uint32_t)(h & 0x7fffffu);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

void data_input(sim_dtype t, unsigned seed, int rank, int chunk, long long e0, long long n,
                void *out)
{
    uint64_t key = chunk_key(seed, rank, chunk);
    uint64_t s = key + (uint64_t)(e0 + 1) * GOLDEN;
    if (t == DT_I32) {
        int32_t *o = out;
        for (long long i = 0; i < n; i++, s += GOLDEN)
            o[i] = i32_value(mix64(s));
    } else if (t == DT_F32) {
        float *o = out;
        for (long long i = 0; i < n; i++, s += GOLDEN)
            o[i] = f32_value(mix64(s));
    } else {
        uint16_t *o = out;
        for (long long i = 0; i < n; i++, s += GOLDEN)
            o[i] = half_value(t, mix64(s));
    }
}

void data_poison(sim_dtype t, void *p, long long n)
{
    if (t == DT_I32) {
        int32_t *o = p;
        for (long long i = 0; i < n; i++)
            o[i] = (int32_t)DATA_POISON;
    } else if (t != DT_F32) {
        uint16_t *o = p;    /* 0x7fba: a NaN in bf16 and in f16 */
        for (long long i = 0; i < n; i++)
            o[i] = (uint16_t)(DATA_POISON >> 16);
    } else {
        uint32_t bits = DATA_POISON;
        float f;
        memcpy(&f, &bits, 4);
        float *o = p;
        for (long long i = 0; i < n; i++)
            o[i] = f;
    }
}

/* --- kernels -------------------------------------------------------------- */

static void add_i32(uint32_t *restrict d, const uint32_t *restrict a,
                    const uint32_t *restrict b, long long n)
{
    long long i = 0;
    for (; i + VEC <= n; i += VEC)
        for (int k = 0; k < VEC; k++)
            d[i + k] = a[i + k] + b[i + k];
    for (; i < n; i++)
        d[i] = a[i] + b[i];
}

static void acc_i32(uint32_t *restrict d, const uint32_t *restrict a, long long n)
{
    long long i = 0;
    for (; i + VEC <= n; i += VEC)
        for (int k = 0; k < VEC; k++)
            d[i + k] = a[i + k] + d[i + k];
    for (; i < n; i++)
        d[i] = a[i] + d[i];
}

static void add_f32(float *restrict d, const float *restrict a, const float *restrict b,
                    long long n)
{
    long long i = 0;
    for (; i + VEC <= n; i += VEC)
        for (int k = 0; k < VEC; k++)
            d[i + k] = a[i + k] + b[i + k];
    for (; i < n; i++)
        d[i] = a[i] + b[i];
}

static void acc_f32(float *restrict d, const float *restrict a, long long n)
{
    long long i = 0;
    for (; i + VEC <= n; i += VEC)
        for (int k = 0; k < VEC; k++)
            d[i + k] = a[i + k] + d[i + k];
    for (; i < n; i++)
        d[i] = a[i] + d[i];
}

/* Element-wise loop for overlapping operands that are not exactly equal
 * (only racy or self-overlapping schedules get here). */
static void add_overlap(sim_dtype t, unsigned char *d, const unsigned char *a,
                        const unsigned char *b, long long n)
{
    for (long long i = 0; i < n; i++) {
        if (t == DT_I32) {
            uint32_t x = ((const uint32_t *)a)[i], y = ((const uint32_t *)b)[i];
            ((uint32_t *)d)[i] = x + y;
        } else {
            float x = ((const float *)a)[i], y = ((const float *)b)[i];
            ((float *)d)[i] = x + y;
        }
    }
}

static int overlaps(const void *p, const void *q, long long bytes)
{
    const unsigned char *a = p, *b = q;
    return a < b + bytes && b < a + bytes;
}

void data_reduce(sim_dtype t, void *dst, const void *a, const void *b, long long n)
{
    long long bytes = 4 * n;
    if (n <= 0)
        return;
    if (t == DT_BF16 || t == DT_F16)
        add_half(t, dst, a, b, n);
    else if (dst == b && !overlaps(dst, a, bytes)) {
        if (t == DT_I32)
            acc_i32(dst, a, n);
        else
            acc_f32(dst, a, n);
    } else if (dst == a && !overlaps(dst, b, bytes)) {
        /* a + b == b + a exactly in both types */
        if (t == DT_I32)
            acc_i32(dst, b, n);
        else
            acc_f32(dst, b, n);
    } else if (!overlaps(dst, a, bytes) && !overlaps(dst, b, bytes)) {
        if (t == DT_I32)
            add_i32(dst, a, b, n);
        else
            add_f32(dst, a, b, n);
    } else {
        add_overlap(t, dst, a, b, n);
    }
}

/* --- buffers -------------------------------------------------------------- */

#define HUGE_ALIGN (2u << 20)

/* Large buffers are 2 MiB aligned and, on Linux, backed by huge pages where
 * the kernel allows: first touch then faults 512x less often and the copies
 * miss the TLB less. */
static void *buffer_alloc(size_t bytes)
{
    if (bytes < HUGE_ALIGN)
        return malloc(bytes ? bytes : 1);
    size_t len = (bytes + HUGE_ALIGN - 1) / HUGE_ALIGN * HUGE_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, HUGE_ALIGN, len) != 0)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

double data_bytes_needed(const prog *p, int inplace, long long chunk_bytes)
{
    double total = 0;
    for (int r = 0; r < p->ngpu; r++) {
        layout l = layout_of(p, r, inplace);
        total += (double)l.nslots * (double)chunk_bytes;
    }
    return total;
}

static int check_shapes(const prog *p, tc_err *err)
{
    int in, out;
    if (p->ngpus != p->ngpu)
        return tc_err_set(err, TC_INPUT, "ngpus = %d but the schedule has %d <gpu> elements",
                          p->ngpus, p->ngpu);
    if (coll_shape(p->coll, p->ngpus, p->nchunksperloop, &in, &out, err) != TC_OK)
        return TC_INPUT;
    for (int r = 0; r < p->ngpu; r++) {
        const prog_gpu *g = &p->gpus[r];
        if ((g->i_chunks != 0 && g->i_chunks != in) || (g->o_chunks != 0 && g->o_chunks != out))
            return tc_err_set(err, TC_INPUT,
                              "rank %d: i_chunks %d, o_chunks %d, but %s over %d ranks with %d "
                              "chunks needs %d and %d (or 0)",
                              r, g->i_chunks, g->o_chunks, coll_name(p->coll), p->ngpus,
                              p->nchunksperloop, in, out);
        if (g->s_chunks < 0)
            return tc_err_set(err, TC_INPUT, "rank %d: s_chunks %d is negative", r, g->s_chunks);
    }
    return TC_OK;
}

/* Seed the input slots of rank r and poison every other slot. */
static void fill_rank(data_space *d, const prog *p, int r)
{
    const layout *l = &d->lay[r];
    int in = prog_buf_len(p, r, BUF_I);
    char *is_input = calloc((size_t)l->nslots + 1, 1);
    if (!is_input)
        tc_oom();
    for (int c = 0; c < in; c++) {
        int slot = layout_slot(l, BUF_I, c);
        if (slot < 0)
            continue;
        is_input[slot] = 1;
        data_input(d->dtype, d->seed, r, c, 0, d->elems, data_slot(d, r, slot));
    }
    for (int s = 0; s < l->nslots; s++)
        if (!is_input[s])
            data_poison(d->dtype, data_slot(d, r, s), d->elems);
    free(is_input);
}

int data_fits(const prog *p, int inplace, long long chunk_bytes, tc_err *err)
{
    double need = data_bytes_needed(p, inplace, chunk_bytes);
    if (need > (double)DATA_MAX_BYTES)
        return tc_err_set(err, TC_INPUT, "needs %.1f GiB of buffers; run timing-only (--no-data)",
                          need / (double)(1LL << 30));
    return TC_OK;
}

int data_init(data_space *d, const prog *p, const sim_opts *o, long long chunk_bytes,
              tc_err *err)
{
    memset(d, 0, sizeof *d);
    int es = runtime_dtype_bytes(o->dtype);
    if (chunk_bytes % es != 0)
        return tc_err_set(err, TC_INPUT,
                          "chunk size %lld bytes (size %lld / %d chunks) is not a multiple of "
                          "the %d-byte %s element",
                          chunk_bytes, o->size_bytes, p->nchunksperloop, es,
                          runtime_dtype_name(o->dtype));
    if (check_shapes(p, err) != TC_OK)
        return TC_INPUT;
    if (data_fits(p, o->inplace, chunk_bytes, err) != TC_OK)
        return TC_INPUT;
    d->nranks = p->ngpu;
    d->chunk_bytes = chunk_bytes;
    d->elems = chunk_bytes / es;
    d->dtype = o->dtype;
    d->seed = o->seed;
    d->lay = calloc((size_t)d->nranks + 1, sizeof *d->lay);
    d->mem = calloc((size_t)d->nranks + 1, sizeof *d->mem);
    if (!d->lay || !d->mem) {
        data_free(d);
        return tc_err_set(err, TC_INPUT, "out of memory allocating buffers for %d ranks",
                          p->ngpu);
    }
    for (int r = 0; r < d->nranks; r++) {
        d->lay[r] = layout_of(p, r, o->inplace);
        size_t bytes = (size_t)d->lay[r].nslots * (size_t)chunk_bytes;
        d->mem[r] = buffer_alloc(bytes);
        if (!d->mem[r]) {
            data_free(d);
            return tc_err_set(err, TC_INPUT,
                              "out of memory allocating %.1f GiB of buffers; run timing-only "
                              "(--no-data)",
                              data_bytes_needed(p, o->inplace, chunk_bytes) /
                                  (double)(1LL << 30));
        }
        fill_rank(d, p, r);
    }
    return TC_OK;
}

void data_free(data_space *d)
{
    if (d->mem)
        for (int r = 0; r < d->nranks; r++)
            free(d->mem[r]);
    free(d->mem);
    free(d->lay);
    memset(d, 0, sizeof *d);
}

/* --- postcondition -------------------------------------------------------- */

typedef struct {
    long long count;        /* wrong elements */
    int rank, j;            /* first wrong place (smallest rank, chunk, element) */
    long long e;
    char got[40], expect[40];
    int src_rank, src_chunk;
} wrong_log;

void data_format(sim_dtype t, const void *p, char *out, size_t n)
{
    if (t == DT_I32) {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(out, n, "%d", (int)v);
    } else if (t != DT_F32) {
        uint16_t v;
        memcpy(&v, p, 2);
        snprintf(out, n, "%.5g (0x%04x)", half_decode(fmt_of(t), v), (unsigned)v);
    } else {
        float v;
        memcpy(&v, p, 4);
        snprintf(out, n, "%.9g", (double)v);
    }
}

static int earlier(const wrong_log *w, int rank, int j, long long e)
{
    if (w->count == 0)
        return 1;
    if (rank != w->rank)
        return rank < w->rank;
    if (j != w->j)
        return j < w->j;
    return e < w->e;
}

static void log_wrong(wrong_log *w, sim_dtype t, int rank, int j, long long e, const void *got,
                      const char *expect, int src_rank, int src_chunk)
{
    if (earlier(w, rank, j, e)) {
        w->rank = rank;
        w->j = j;
        w->e = e;
        data_format(t, got, w->got, sizeof w->got);
        snprintf(w->expect, sizeof w->expect, "%s", expect);
        w->src_rank = src_rank;
        w->src_chunk = src_chunk;
    }
    w->count++;
}

typedef struct {
    int nkeys;
    int *start;         /* [nkeys + 1] */
    int *rank, *j;      /* holders, grouped by key */
} holders;

/* Group every (rank, output chunk) by the source it must hold: for the
 * reductions the input chunk index, else (source rank, input chunk). */
static int group_holders(const prog *p, int in, int out, holders *h)
{
    int n = p->ngpu, C = p->nchunksperloop, red = coll_is_reduction(p->coll);
    h->nkeys = red ? in : n * in;
    size_t np = (size_t)n * (size_t)out;
    h->start = calloc((size_t)h->nkeys + 2, sizeof *h->start);
    h->rank = malloc((np + 1) * sizeof *h->rank);
    h->j = malloc((np + 1) * sizeof *h->j);
    int *key = malloc((np + 1) * sizeof *key);
    if (!h->start || !h->rank || !h->j || !key)
        tc_oom();
    for (int r = 0; r < n; r++)
        for (int j = 0; j < out; j++) {
            int sr, sc;
            coll_out_source(p->coll, n, C, r, j, &sr, &sc);
            int k = red ? sc : sr * in + sc;
            key[(size_t)r * out + j] = k;
            h->start[k + 1]++;
        }
    for (int k = 0; k < h->nkeys; k++)
        h->start[k + 1] += h->start[k];
    int *fill = malloc(((size_t)h->nkeys + 1) * sizeof *fill);
    if (!fill)
        tc_oom();
    memcpy(fill, h->start, (size_t)h->nkeys * sizeof *fill);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < out; j++) {
            int k = key[(size_t)r * out + j];
            int at = fill[k]++;
            h->rank[at] = r;
            h->j[at] = j;
        }
    free(fill);
    free(key);
    return 0;
}

static void free_holders(holders *h)
{
    free(h->start);
    free(h->rank);
    free(h->j);
}

static const unsigned char *out_elem(const data_space *d, int r, int j, long long e)
{
    int slot = layout_slot(&d->lay[r], BUF_O, j);
    return data_slot(d, r, slot) + (size_t)e * (size_t)runtime_dtype_bytes(d->dtype);
}

/* AllGather / AllToAll: every holder must equal the source bit for bit. */
static void check_copies(const data_space *d, const holders *h, int in, void *expect,
                         wrong_log *w)
{
    size_t es = (size_t)runtime_dtype_bytes(d->dtype);
    for (int k = 0; k < h->nkeys; k++) {
        int sr = k / in, sc = k % in;
        for (long long e0 = 0; e0 < d->elems; e0 += BLOCK) {
            long long m = d->elems - e0 < BLOCK ? d->elems - e0 : BLOCK;
            data_input(d->dtype, d->seed, sr, sc, e0, m, expect);
            for (int x = h->start[k]; x < h->start[k + 1]; x++) {
                const unsigned char *got = out_elem(d, h->rank[x], h->j[x], e0);
                if (memcmp(got, expect, (size_t)m * es) == 0)
                    continue;
                for (long long i = 0; i < m; i++) {
                    const unsigned char *g = got + es * i, *ex = (unsigned char *)expect + es * i;
                    if (memcmp(g, ex, es) == 0)
                        continue;
                    char es[40];
                    data_format(d->dtype, ex, es, sizeof es);
                    log_wrong(w, d->dtype, h->rank[x], h->j[x], e0 + i, g, es, sr, sc);
                }
            }
        }
    }
}

/* i32 reductions: exact wrap-around sums. */
static void check_sums_i32(const data_space *d, const holders *h, uint32_t *ref, uint32_t *tmp,
                           wrong_log *w)
{
    for (int k = 0; k < h->nkeys; k++) {
        if (h->start[k] == h->start[k + 1])
            continue;
        for (long long e0 = 0; e0 < d->elems; e0 += BLOCK) {
            long long m = d->elems - e0 < BLOCK ? d->elems - e0 : BLOCK;
            memset(ref, 0, (size_t)m * 4);
            for (int q = 0; q < d->nranks; q++) {
                data_input(DT_I32, d->seed, q, k, e0, m, tmp);
                acc_i32(ref, tmp, m);
            }
            for (int x = h->start[k]; x < h->start[k + 1]; x++) {
                const unsigned char *got = out_elem(d, h->rank[x], h->j[x], e0);
                if (memcmp(got, ref, (size_t)m * 4) == 0)
                    continue;
                for (long long i = 0; i < m; i++) {
                    if (memcmp(got + 4 * i, &ref[i], 4) == 0)
                        continue;
                    char es[40];
                    data_format(DT_I32, &ref[i], es, sizeof es);
                    log_wrong(w, DT_I32, h->rank[x], h->j[x], e0 + i, got + 4 * i, es, -1, k);
                }
            }
        }
    }
}

double data_value(sim_dtype t, const void *p, long long i)
{
    if (t == DT_F32)
        return ((const float *)p)[i];
    return half_decode(fmt_of(t), ((const uint16_t *)p)[i]);
}

/* (data.h) u = 2^-24 f32, 2^-8 bf16, 2^-11 f16: each of at most n steps
 * rounds once. */
int data_sum_close(sim_dtype t, int nranks, double got, double ref, double mag)
{
    int p = t == DT_F32 ? 24 : fmt_of(t)->p, emin = t == DT_F32 ? -126 : fmt_of(t)->emin;
    double ulp_factor = (double)(nranks + 1) * ldexp(1.0, -p);
    double tiny = (double)(nranks + 1) * ldexp(1.0, emin - p);
    return !isnan(got) && fabs(got - ref) <= ulp_factor * mag + tiny + 1e-30;
}

/* Floating-point reductions: data_sum_close against the double reference. */
static void check_sums_float(const data_space *d, const holders *h, double *ref, double *mag,
                             void *tmp, wrong_log *w, double *max_rel)
{
    sim_dtype t = d->dtype;
    for (int k = 0; k < h->nkeys; k++) {
        if (h->start[k] == h->start[k + 1])
            continue;
        for (long long e0 = 0; e0 < d->elems; e0 += BLOCK) {
            long long m = d->elems - e0 < BLOCK ? d->elems - e0 : BLOCK;
            for (long long i = 0; i < m; i++)
                ref[i] = mag[i] = 0;
            for (int q = 0; q < d->nranks; q++) {
                data_input(t, d->seed, q, k, e0, m, tmp);
                for (long long i = 0; i < m; i++) {
                    double v = data_value(t, tmp, i);
                    ref[i] += v;
                    mag[i] += fabs(v);
                }
            }
            size_t es = (size_t)runtime_dtype_bytes(t);
            for (int x = h->start[k]; x < h->start[k + 1]; x++) {
                const unsigned char *got = out_elem(d, h->rank[x], h->j[x], e0);
                for (long long i = 0; i < m; i++) {
                    double g = data_value(t, got, i);
                    double diff = fabs(g - ref[i]);
                    if (data_sum_close(t, d->nranks, g, ref[i], mag[i])) {
                        if (mag[i] > 0 && diff / mag[i] > *max_rel)
                            *max_rel = diff / mag[i];
                        continue;
                    }
                    char want[40];
                    snprintf(want, sizeof want, "%.9g", ref[i]);
                    log_wrong(w, t, h->rank[x], h->j[x], e0 + i, got + es * i, want, -1, k);
                }
            }
        }
    }
}

static int replicas_identical(const data_space *d, int out)
{
    size_t bytes = (size_t)out * (size_t)d->chunk_bytes;
    if (out <= 0)
        return 1;
    const unsigned char *base0 = out_elem(d, 0, 0, 0);
    for (int r = 1; r < d->nranks; r++)
        if (memcmp(out_elem(d, r, 0, 0), base0, bytes) != 0)
            return 0;
    return 1;
}

int data_check(const data_space *d, const prog *p, sim_result *r, hazard_list *hz)
{
    int in, out;
    r->wrong_elems = 0;
    r->max_rel_err = 0;
    r->replicas_identical = -1;
    if (coll_shape(p->coll, d->nranks, p->nchunksperloop, &in, &out, NULL) != TC_OK)
        return 0;
    holders h;
    group_holders(p, in, out, &h);
    wrong_log w;
    memset(&w, 0, sizeof w);
    void *a = malloc(BLOCK * sizeof(double));
    void *b = malloc(BLOCK * sizeof(double));
    void *c = malloc(BLOCK * sizeof(double));
    if (!a || !b || !c)
        tc_oom();
    if (!coll_is_reduction(p->coll))
        check_copies(d, &h, in, a, &w);
    else if (d->dtype == DT_I32)
        check_sums_i32(d, &h, a, b, &w);
    else
        check_sums_float(d, &h, a, b, c, &w, &r->max_rel_err);
    free(a);
    free(b);
    free(c);
    free_holders(&h);
    if (p->coll == COLL_ALLREDUCE)
        r->replicas_identical = replicas_identical(d, out);
    r->wrong_elems = w.count;
    if (w.count == 0)
        return 1;
    char src[96];
    if (w.src_rank >= 0)
        snprintf(src, sizeof src, "input chunk %d of rank %d", w.src_chunk, w.src_rank);
    else
        snprintf(src, sizeof src, "sum of input chunk %d over all ranks", w.src_chunk);
    char more[64] = "";
    if (w.count > 1)
        snprintf(more, sizeof more, "; %lld wrong elements in all", w.count);
    hazard_add(hz, HZ_WRONG_DATA, -1, -1, -1, "rank %d o[%d] element %lld: got %s expected %s (%s)%s",
               w.rank, w.j, w.e, w.got, w.expect, src, more);
    hz->v[hz->n - 1].rank = w.rank;
    return 0;
}
