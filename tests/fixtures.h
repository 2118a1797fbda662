/* fixtures.h — what several unit tests load: the bundled topologies and
 * sketches, found under $TACCL_ROOT (default: the current directory), each
 * a test failure naming the file when it does not load or does not fit. */
#ifndef TC_TEST_FIXTURES_H
#define TC_TEST_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

#include "model/sketch.h"
#include "model/topo.h"

static inline const char *fx_root(void)
{
    const char *r = getenv("TACCL_ROOT");
    return r && *r ? r : ".";
}

/* topologies/NAME.json */
static inline topo *fx_topo(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/topologies/%s.json", fx_root(), name);
    tc_err e;
    topo *t = topo_load(path, &e);
    if (!t)
        fail_msg("cannot load %s: %s", path, e.msg);
    return t;
}

/* topologies/NAME.json without its runtime latency (model/cost.h,
 * "Runtime latency"): for the tests that hand-compute times from the hops'
 * alpha and bandwidth alone; the runtime latency has tests of its own. */
static inline topo *fx_topo_bare(const char *name)
{
    topo *t = fx_topo(name);
    t->rt_latency = TOPO_RTLAT_NONE;
    return t;
}

/* sketches/NAME.json, checked against t */
static inline sketch *fx_sketch(const char *name, const topo *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/sketches/%s.json", fx_root(), name);
    tc_err e;
    sketch *s = sketch_load(path, &e);
    if (!s)
        fail_msg("cannot load %s: %s", path, e.msg);
    if (sketch_check(s, t, &e) != TC_OK)
        fail_msg("%s does not fit %s: %s", path, t->name, e.msg);
    return s;
}

#endif
