/* fuzz_topo.c — libFuzzer target for the topology loader (topo_parse).
 *
 * Every input is parsed as a topology file.  A topology that loads must
 * also survive what the tools do with it next: it is written back with
 * topo_to_json(), which must parse again and write the very same text (the
 * executor re-reads the copy embedded in a schedule); its routes are asked
 * for every pair of ranks (small topologies), and its lower-bound model is
 * computed with GLPK as taccl-run does for every run (tiny topologies). */
#include "fuzz_common.h"

#include "bound/bound.h"
#include "model/topo.h"
#include "model/cost.h"

/* Round trip: the written form parses and writes identically. */
static void check_round_trip(const topo *t)
{
    char *json = topo_to_json(t);
    if (!json)
        abort();
    tc_err err;
    tc_err_clear(&err);
    topo *back = topo_parse(json, "(written back)", &err);
    if (!back) {
        fprintf(stderr, "fuzz: topo_to_json output does not load: %s\n", err.msg);
        abort();
    }
    char *again = topo_to_json(back);
    if (!again || strcmp(json, again) != 0) {
        fprintf(stderr, "fuzz: topo_to_json is not stable across a round trip\n");
        abort();
    }
    free(again);
    topo_free(back);
    free(json);
}

static void check_routes(const topo *t)
{
    if (t->nranks > 64)
        return;
    for (int a = 0; a < t->nranks; a++)
        for (int b = 0; b < t->nranks; b++) {
            topo_route r = topo_route_of(t, a, b);
            if (r.kind != ROUTE_NONE && !(cost_hop_us(&r, 1e6) >= 0))
                abort();
        }
}

static void check_bound(const topo *t)
{
    if (t->nranks > 8)
        return;
    bound_model b;
    tc_err err;
    tc_err_clear(&err);
    for (int k = 0; k < COLL_COUNT; k++)
        if (bound_compute(t, (coll_kind)k, &b, &err) == TC_OK && !(bound_time_us(&b, 1e6) >= 0))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    tc_err err;
    tc_err_clear(&err);
    topo *t = topo_parse(text, "fuzz.json", &err);
    if (!t) {
        fuzz_expect_input_error(&err, "topo_parse");
    } else {
        check_round_trip(t);
        check_routes(t);
        check_bound(t);
        topo_free(t);
    }
    free(text);
    return 0;
}
