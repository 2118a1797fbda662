/* size.h — byte sizes as people write them: "1048576", "64K", "1MB", "1GiB".
 *
 * K, M, G, T (either case, with optional B or iB) are powers of 1024, as
 * nccl-tests' sizes are; a plain number is bytes.  A lower-case b is bits
 * ("16Mb"), never bytes: refused, and size_hint() says what to write.
 * Used by the CLIs and the sketch loader so every place accepts the same
 * spellings. */
#ifndef TC_SIZE_H
#define TC_SIZE_H

/* The largest size accepted: 2^62 bytes (4194304T), so that sums and
 * doublings of sizes stay in a long long. */
#define SIZE_MAX_BYTES (1LL << 62)

/* Parse s into *out (> 0).  Returns 0, or -1 if s is not a size. */
int size_parse(const char *s, long long *out);

/* What size_parse made of s, so a message can name the rule broken. */
typedef enum {
    SIZE_OK = 0,
    SIZE_NOT_A_SIZE,    /* not digits with an optional K/M/G/T[B|iB] or B */
    SIZE_ZERO,          /* a size, but 0 */
    SIZE_TOO_LARGE      /* a size, but above SIZE_MAX_BYTES */
} size_status;

/* As size_parse, saying why a string was refused (*out set only on SIZE_OK). */
size_status size_check(const char *s, long long *out);

/* For a string size_parse() refused: "" or a hint to append to the
 * message, e.g. "; 'b' is bits: write 16MB or 16MiB for bytes", or, for a
 * size spelled right but out of range, "; a size is at least 1 byte" or
 * "; the largest size is 2^62 bytes (4 EiB)". */
const char *size_hint(const char *s, char *buf, int len);

/* Format n bytes compactly ("1 KiB", "256 MiB", "1000 B") into buf. */
const char *size_format(long long n, char *buf, int len);

#endif
