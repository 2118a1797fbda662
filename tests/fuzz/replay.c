/* replay.c — run a fuzz target's entry point over files, without libFuzzer.
 *
 * Linked with one tests/fuzz/fuzz_<x>.c and the ordinary (unsanitized or
 * sanitized) library, it feeds each file named on the command line to
 * LLVMFuzzerTestOneInput once, so `make check` keeps the fuzz targets
 * compiling and replays the bad-input corpus and every crash the fuzzer
 * ever found through them (tests/cli/test_bad.sh).  A target that finds its
 * contract broken aborts, so a non-zero exit names the file on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    unsigned char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return NULL;
    }
    *n = len;
    return b;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        size_t n = 0;
        unsigned char *b = slurp(argv[i], &n);
        if (!b) {
            fprintf(stderr, "replay: cannot read %s\n", argv[i]);
            return 2;
        }
        fprintf(stderr, "replay: %s\n", argv[i]);
        LLVMFuzzerTestOneInput(b, n);
        free(b);
    }
    printf("replay: %d input%s, contract held\n", argc - 1, argc == 2 ? "" : "s");
    return 0;
}
