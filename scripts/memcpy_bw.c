/* memcpy_bw.c — plain memcpy bandwidth, the yardstick for the executor's
 * data mode.  usage: memcpy_bw TOTAL_BYTES PIECE_BYTES
 * Copies TOTAL_BYTES in PIECE_BYTES pieces between two buffers much larger
 * than the caches (so, like the executor, it streams through memory), three
 * times, and prints the median: "memcpy_gbps X seconds Y" (this machine is
 * shared and noisy; the median of three damps that). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: memcpy_bw TOTAL_BYTES PIECE_BYTES\n");
        return 2;
    }
    long long total = atoll(argv[1]), piece = atoll(argv[2]);
    long long span = 16 * piece;            /* walk 16 pieces before reusing memory */
    if (span < (256LL << 20))
        span = 256LL << 20;
    span = span / piece * piece;
    char *a = malloc((size_t)span), *b = malloc((size_t)span);
    if (!a || !b || piece <= 0 || total <= 0) {
        fprintf(stderr, "memcpy_bw: bad sizes or out of memory\n");
        return 2;
    }
    memset(a, 1, (size_t)span);
    memset(b, 2, (size_t)span);
    double dts[3];
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        long long off = 0;
        for (long long done = 0; done < total; done += piece) {
            memcpy(b + off, a + off, (size_t)piece);
            off = (off + piece) % span;
        }
        dts[rep] = now() - t0;
    }
    /* median of three */
    double lo = dts[0] < dts[1] ? dts[0] : dts[1], hi = dts[0] < dts[1] ? dts[1] : dts[0];
    double dt = dts[2] < lo ? lo : dts[2] > hi ? hi : dts[2];
    printf("memcpy_gbps %.3f seconds %.4f check %d\n", total / dt / 1e9, dt, b[span - 1]);
    free(a);
    free(b);
    return 0;
}
