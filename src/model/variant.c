/* variant.c — the model variants' table and how each is applied (see
 * variant.h).  A variant that changes the topology edits the topology's own
 * JSON (topo_to_json) and loads it again, so the changed machine passes the
 * loader's checks like any file. */
#include "variant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../util/tcassert.h"
#include "topo_nccl.h"

static const variant_info VARIANTS[VAR_COUNT] = {
    [VAR_DEFAULT] = {"default", "the model as the topology states it"},
#if VARIANT_DEFAULT_TILES
    [VAR_PASSES] = {"steps", "the program once, each step one transfer of its whole cnt chunks "
                             "(no tile passes)"},
#else
    [VAR_PASSES] = {"tiles", "the MSCCL runtimes' tile passes (taccl-run --tiles)"},
#endif
    [VAR_DELAY] = {"delay", "alpha as latency only (alpha_mode delay)"},
    [VAR_PORTS] = {"ports", "switch ports not shared: each switch a link per pair of its ranks"},
    [VAR_RTLAT] = {"rt-lat", "the runtime's latency the other way: without it where the "
                             "topology has it, NCCL's where it has none"},
    [VAR_NCCL_EST] = {"nccl-est", "NCCL's time its own estimate of the pick no output holds "
                                  "(would_run); a schedule's its default"},
};

const variant_info *variant_get(variant_id v)
{
    TC_ASSERT(v >= 0 && v < VAR_COUNT);
    return &VARIANTS[v];
}

int variant_tiles(variant_id v)
{
    return (v == VAR_PASSES) != (VARIANT_DEFAULT_TILES != 0);
}

int variant_judges(variant_id v)
{
    return !(v == VAR_PASSES && VARIANT_DEFAULT_TILES);
}

int variant_beats(double x_default, double x_worst)
{
    return x_default > 1.0 + 1e-9 && x_worst >= 1.0 - VARIANT_TIE;
}

int variant_applies(const topo *t, variant_id v)
{
    if (v == VAR_PORTS)
        return t->nswitches > 0;
    if (v == VAR_PASSES || v == VAR_RTLAT || v == VAR_NCCL_EST)
        return t->kind == TOPO_GPU;
    return 1;
}

/* ports: every pair of node 0 that travels through a switch gets a link
 * of its own at that switch's figures (one direction per entry, so that a
 * pair already linked one way is not listed twice); the switches go. */
static void edit_ports(const topo *t, cJSON *j)
{
    cJSON *links = cJSON_GetObjectItem(j, "links");
    int rpn = t->ranks_per_node;
    for (int a = 0; a < rpn; a++)
        for (int b = 0; b < rpn; b++) {
            if (a == b)
                continue;
            topo_route r = topo_route_of(t, a, b);
            if (r.kind != ROUTE_SWITCH)
                continue;
            cJSON *o = cJSON_CreateObject();
            cJSON *pairs = cJSON_AddArrayToObject(o, "pairs");
            int ab[2] = {a, b};
            cJSON_AddItemToArray(pairs, cJSON_CreateIntArray(ab, 2));
            cJSON_AddNumberToObject(o, "alpha_us", r.alpha_us);
            cJSON_AddNumberToObject(o, "bandwidth_gbps", r.bw_gbps);
            cJSON_AddFalseToObject(o, "bidirectional");
            cJSON_AddStringToObject(o, "source", "model variant ports: the switch's figures");
            cJSON_AddItemToArray(links, o);
        }
    cJSON_ReplaceItemInObject(j, "switches", cJSON_CreateArray());
}

/* rt-lat: the topology's "runtime_latency" taken away, or NCCL's set. */
static void edit_rtlat(const topo *t, cJSON *j)
{
    cJSON_DeleteItemFromObject(j, "runtime_latency");
    if (t->rt_latency == TOPO_RTLAT_NONE)
        cJSON_AddStringToObject(j, "runtime_latency", "nccl");
}

int variant_topo(const topo *t, variant_id v, topo **out, tc_err *err)
{
    *out = NULL;
    if (v != VAR_DELAY && v != VAR_PORTS && v != VAR_RTLAT)
        return TC_OK;
    char *text = topo_to_json(t);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!j)
        return tc_err_set(err, TC_INPUT, "model variant %s: topology %s could not be written "
                          "back", VARIANTS[v].name, t->name);
    if (v == VAR_DELAY) {
        cJSON_DeleteItemFromObject(j, "alpha_mode");
        cJSON_AddStringToObject(j, "alpha_mode", "delay");
    } else if (v == VAR_PORTS) {
        edit_ports(t, j);
    } else {
        edit_rtlat(t, j);
    }
    char *edited = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    char label[256];
    snprintf(label, sizeof label, "%s (model variant %s)", t->name, VARIANTS[v].name);
    *out = topo_parse(edited, label, err);
    free(edited);
    return *out ? TC_OK : TC_INPUT;
}

int variant_ratio_range(const variant_times *ref, const variant_times *sched, double *lo,
                        double *hi)
{
    int n = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int v = 0; v < VAR_COUNT; v++) {
        if (!variant_judges((variant_id)v) || ref->us[v] < 0 || sched->us[v] <= 0)
            continue;
        double x = ref->us[v] / sched->us[v];
        *lo = fmin(*lo, x);
        *hi = fmax(*hi, x);
        n++;
    }
    /* a range without the default's ratio in it is no range */
    return ref->us[VAR_DEFAULT] < 0 || sched->us[VAR_DEFAULT] <= 0 ? 0 : n;
}
