/* fuzz_sketch.c — libFuzzer target for the sketch loader (sketch_parse)
 * and its judgement against a topology (sketch_check).
 *
 * A sketch means something only next to the topology it is for, so the
 * bundled topologies are loaded once at start-up (from the directory in
 * $TACCL_FUZZ_TOPOLOGIES, default "topologies"; the harness's only state,
 * read-only after LLVMFuzzerInitialize).  Each input is parsed as a sketch;
 * one that loads is checked against the topology its "topology" key names,
 * or against every bundled topology of at most 64 ranks when it names none
 * of them; one that passes a check has its accessors exercised the way the
 * synthesizer uses them (relay matrix, sender lists, symmetries, chunk
 * arithmetic). */
#include "fuzz_common.h"

#include <dirent.h>

#include "model/sketch.h"
#include "model/topo.h"

enum { MAX_TOPOS = 64 };

typedef struct {
    char key[300];      /* "topologies/NAME.json", as sketches spell it */
    topo *t;
} known_topo;

static known_topo topos[MAX_TOPOS];
static int ntopos;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("TACCL_FUZZ_TOPOLOGIES");
    if (!dir)
        dir = "topologies";
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_sketch: cannot open %s (set TACCL_FUZZ_TOPOLOGIES)\n", dir);
        abort();
    }
    struct dirent *e;
    while ((e = readdir(d)) && ntopos < MAX_TOPOS) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        tc_err err;
        topo *t = topo_load(path, &err);
        if (!t)
            continue;
        snprintf(topos[ntopos].key, sizeof topos[ntopos].key, "topologies/%s", e->d_name);
        topos[ntopos++].t = t;
    }
    closedir(d);
    if (ntopos == 0) {
        fprintf(stderr, "fuzz_sketch: no topology loaded from %s\n", dir);
        abort();
    }
    return 0;
}

/* What the synthesizer reads from a sketch that passed sketch_check. */
static void exercise(const sketch *s, const topo *t)
{
    int rpn = t->ranks_per_node;
    unsigned char *m = malloc((size_t)rpn * (size_t)rpn);
    int *senders = malloc(sizeof *senders * (size_t)rpn);
    if (!m || !senders)
        abort();
    sketch_internode_matrix(s, rpn, m);
    for (int o = 0; o < rpn; o++) {
        int n = sketch_senders_of(s, rpn, o, senders);
        for (int k = 0; k < n; k++)
            if (senders[k] < 0 || senders[k] >= rpn || !sketch_leaves_via(s, rpn, o, senders[k]))
                abort();
    }
    for (int k = 0; k < s->nsym; k++)
        for (int r = 0; r < t->nranks; r++) {
            int img = sketch_sym_rank(s, r, k);
            if (img < 0 || img >= t->nranks)
                abort();
        }
    long long cb;
    tc_err err;
    if (s->input_size > 0)
        sketch_chunk_bytes(s, t->nranks, t->dma_bytes, s->input_size, &cb, &err);
    free(senders);
    free(m);
}

static void judge(const sketch *s, const topo *t)
{
    tc_err err;
    tc_err_clear(&err);
    if (sketch_check(s, t, &err) == TC_OK)
        exercise(s, t);
    else
        fuzz_expect_input_error(&err, "sketch_check");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    tc_err err;
    tc_err_clear(&err);
    sketch *s = sketch_parse(text, "fuzz.json", &err);
    if (!s) {
        fuzz_expect_input_error(&err, "sketch_parse");
    } else {
        int named = 0;
        for (int i = 0; i < ntopos; i++)
            if (strcmp(s->topology, topos[i].key) == 0) {
                judge(s, topos[i].t);
                named = 1;
            }
        for (int i = 0; !named && i < ntopos; i++)
            if (topos[i].t->nranks <= 64)
                judge(s, topos[i].t);
        sketch_free(s);
    }
    free(text);
    return 0;
}
