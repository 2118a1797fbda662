/* collective.c — chunk-level definitions of the four collectives (see .h). */
#include "collective.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *names[COLL_COUNT] = {"allgather", "alltoall", "reducescatter", "allreduce"};

const char *coll_name(coll_kind k)
{
    return (k >= 0 && k < COLL_COUNT) ? names[k] : "unknown";
}

int coll_parse(const char *s, coll_kind *out)
{
    char buf[32];
    size_t n = 0;
    if (!s)
        return -1;
    /* Compare with '_' and '-' removed so every common spelling matches. */
    for (; *s && n + 1 < sizeof buf; s++)
        if (*s != '_' && *s != '-')
            buf[n++] = (char)tolower((unsigned char)*s);
    if (*s)
        return -1;
    buf[n] = '\0';
    for (int k = 0; k < COLL_COUNT; k++)
        if (strcmp(buf, names[k]) == 0) {
            *out = (coll_kind)k;
            return 0;
        }
    return -1;
}

int coll_is_reduction(coll_kind k)
{
    return k == COLL_REDUCESCATTER || k == COLL_ALLREDUCE;
}

int coll_shape(coll_kind k, int n, int C, int *in_chunks, int *out_chunks, tc_err *err)
{
    if (n < 1)
        return tc_err_set(err, TC_INPUT, "ngpus: must be at least 1, got %d", n);
    if (C < 1)
        return tc_err_set(err, TC_INPUT, "nchunksperloop: must be at least 1, got %d", C);
    if (k != COLL_ALLREDUCE && C % n != 0)
        return tc_err_set(err, TC_INPUT,
                          "nchunksperloop: %s over %d ranks needs a multiple of %d, got %d",
                          coll_name(k), n, n, C);
    switch (k) {
    case COLL_ALLGATHER:
        *in_chunks = C / n;
        *out_chunks = C;
        break;
    case COLL_REDUCESCATTER:
        *in_chunks = C;
        *out_chunks = C / n;
        break;
    default:
        *in_chunks = C;
        *out_chunks = C;
        break;
    }
    return TC_OK;
}

void coll_out_source(coll_kind k, int n, int C, int r, int j, int *src_rank, int *src_chunk)
{
    int per = C / n;
    switch (k) {
    case COLL_ALLGATHER:
        *src_rank = j / per;
        *src_chunk = j % per;
        break;
    case COLL_ALLTOALL:
        /* Input chunk (dst*per + m) of rank src lands at output (src*per + m) of dst. */
        *src_rank = j / per;
        *src_chunk = r * per + j % per;
        break;
    case COLL_REDUCESCATTER:
        *src_rank = -1;
        *src_chunk = r * per + j;
        break;
    default:
        *src_rank = -1;
        *src_chunk = j;
        break;
    }
}

int coll_in_dests(coll_kind k, int n, int C, int origin, int index, int *dst_rank,
                  int *out_index)
{
    int per = C / n;
    switch (k) {
    case COLL_ALLGATHER:
        for (int r = 0; r < n; r++) {
            dst_rank[r] = r;
            out_index[r] = origin * per + index;
        }
        return n;
    case COLL_ALLTOALL:
        dst_rank[0] = index / per;
        out_index[0] = origin * per + index % per;
        return 1;
    case COLL_REDUCESCATTER:
        dst_rank[0] = index / per;
        out_index[0] = index % per;
        return 1;
    default:
        for (int r = 0; r < n; r++) {
            dst_rank[r] = r;
            out_index[r] = index;
        }
        return n;
    }
}

void coll_inplace_alias(coll_kind k, int n, int C, int r, int *in_at_out, int *out_at_in)
{
    *in_at_out = -1;
    *out_at_in = -1;
    if (k == COLL_ALLGATHER)
        *in_at_out = r * (C / n);
    else if (k == COLL_REDUCESCATTER)
        *out_at_in = r * (C / n);
    else
        *in_at_out = 0;
}

double coll_busbw_factor(coll_kind k, int n)
{
    if (n <= 1)
        return 0.0;
    if (k == COLL_ALLREDUCE)
        return 2.0 * (n - 1) / n;
    return (double)(n - 1) / n;
}

double coll_algbw_gbps(coll_kind k, double size_bytes, double time_us)
{
    (void)k; /* every collective's S is the larger per-rank buffer */
    if (time_us <= 0)
        return 0.0;
    return size_bytes / (time_us * 1e-6) / 1e9;
}
