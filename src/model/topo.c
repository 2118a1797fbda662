/* topo.c — read, validate, index and write topologies (see topo.h).
 *
 * A topology file describes ONE node in local rank indices (0 ..
 * ranks_per_node-1); the loader replicates it `nodes` times into global ranks
 * (global = node * ranks_per_node + local).  The format, all keys:
 *
 *   {
 *     "name": "ndv2-x2",                    required, non-empty, <= 200 bytes
 *     "description": "...",                 optional string
 *     "notes": "..." | ["...", ...],        optional, allowed in EVERY object
 *     "is_default": true,                   optional; only topo_default() sets it
 *     "nodes": 2,                           required integer >= 1
 *     "ranks_per_node": 8,                  required integer >= 1
 *     "alpha_mode": "hold" | "delay",       optional, default "hold": a hop
 *               holds its link, ports or NICs for alpha + s / B; "delay":
 *               for s / B only, and arrives alpha after that (alpha as pure
 *               latency, TE-CCL's model; model/cost.h)
 *     "runtime_latency": "none" | "nccl" | "rccl",  optional, default
 *               "none": on a GPU device, the runtime's own latencies added
 *               to the hops': NCCL's (RCCL's) per-step latency of the
 *               protocol on every hop, as latency only, and its base
 *               latency once per call (model/cost.h, "Runtime latency")
 *     "arbitration": "ready" | "reserve",   optional, default "ready": a
 *               transfer starts only when every resource it needs is free
 *               now and otherwise waits, so no resource idles while a
 *               transfer that could use it is ready; "reserve": it books
 *               them from the first instant all are free, idle until then
 *               (model/cost.h)
 *     "fabric": "fat-tree" | "rails",       optional, default "fat-tree":
 *               every NIC reaches every other node's NICs; "rails": NIC i
 *               of a node (its i-th in "nics") reaches NIC i of the other
 *               nodes only
 *     "collnet": {"reductions": ["sum"], "dtypes": ["f32"],
 *                 "allgather": false, "reducescatter": false,
 *                 "source": "..."}     optional (GPU devices): the network
 *               between the nodes reduces (SHARP) and NCCL runs CollNet on
 *               it; allgather/reducescatter: its plugin offers those too
 *               (topo.h, topo_collnet)
 *     "device": {"kind": "gpu"}             optional, default gpu; a GPU
 *               device may name its generation, "arch": "volta", "ampere",
 *               "hopper" or "blackwell" (NCCL's tuning model keys on it, no
 *               hop cost depends on it); or
 *               {"kind": "chip", "chips_per_node": 4, "clusters_per_chip": 2,
 *                "dma_bytes": 256, "source": "..."}
 *               (chip: ranks_per_node must be chips_per_node * clusters_per_chip;
 *                local rank = chip * clusters_per_chip + cluster; dma_bytes
 *                optional, default 0 = none)
 *     "local": {"copy_gbps": 450, "reduce_gbps": 300, "source": "..."},  required
 *     "links": [ {"pairs": [[0, 1], [0, 2]], "alpha_us": 0.7,
 *                 "bandwidth_gbps": 50, "multiplicity": 1,
 *                 "bidirectional": true, "source": "..."} ],          optional
 *     "switches": [ {"ranks": [0, 1, 2], "alpha_us": 0.35,
 *                    "bandwidth_gbps": 125, "source": "...",
 *                    "nvls": {"bandwidth_gbps": 100, "alpha_us": 0.7,
 *                             "reductions": ["sum"], "dtypes": ["f32"],
 *                             "source": "..."}} ],                optional
 *               (nvls, optional: the switch reduces and multicasts,
 *                NVLink SHARP; topo.h's topo_nvls says what the figures
 *                mean; reductions from sum, avg, max; dtypes from i32,
 *                f32, bf16, f16; bandwidth at most the switch's own)
 *     "nics": [ {"ranks": [0, 1], "alpha_us": 2.6,
 *                "bandwidth_gbps": 12.5, "source": "..."} ]           optional
 *   }
 *
 * Units: alpha_us in microseconds (0 .. 1e6), bandwidth_gbps (and the local
 * copy_gbps, reduce_gbps) in GB/s = 1e9 bytes/s (1e-6 .. 1e6); a hop moving
 * s bytes costs alpha + s / B.  Instead of each, the key without its unit
 * ("alpha", "bandwidth", "copy", "reduce") takes a string with the unit:
 * "2.6 us", "700 ns", "25 GB/s", "200 Gb/s" (util/units.h: the number in
 * decimal, no sign, hexadecimal, inf or nan); a bare number there is an
 * error, and so is giving both spellings.
 * multiplicity (integer >= 1, default 1) is how many transfers a link carries
 * at once per direction.  bidirectional (default true) lists both directions
 * of every pair.  Every object that holds figures (device of kind chip, local,
 * each link, switch and NIC entry) should carry "source": where the figures come
 * from, or a text starting with "assumed"; one that does not loads with a
 * warning (topo_warning), which the CLIs print and --strict makes an
 * error.  Unknown or repeated keys are
 * errors, so typos are never silently ignored.  Also rejected: a directed link
 * pair given twice, a link from a rank to itself, a rank listed twice in one
 * switch or NIC, a rank in two NICs, a switch of fewer than two ranks, and
 * several nodes without any NIC.  A rank may belong to several switches.
 *
 * Limits: at most 65536 ranks in all, 4194304 directed links (and as many
 * switch ports) after replication, 64 MiB of file.
 *
 * Errors are TC_INPUT with "LABEL:LINE: FIELD: what".  The line is found by
 * walking the raw text along the field's path (links -> 2nd element ->
 * "bandwidth_gbps"), not by searching for the key name, so a key that
 * occurs in many objects is still placed correctly; for a missing key it is
 * the line of the object that lacks it.  Syntax errors give "LABEL:LINE:COL".
 * That machinery, and the file reader, are src/util/jsonin's, shared with
 * the sketch loader.
 *
 * In the struct, elements are ordered node by node, and within a node in
 * file order (a bidirectional pair a,b gives a->b then b->a).  topo_to_json()
 * writes node 0 back in local indices, links as one direction per pair
 * ("bidirectional": false) grouped by consecutive equal figures, so parsing
 * its output yields an equal struct with the same sources and notes.
 *
 * Routes are answered from an index built at load time: per rank, its
 * outgoing links sorted by destination (the fastest one per destination),
 * and per rank the ascending list of switches it belongs to. */
#include "topo.h"
#include "topo_int.h"
#include "topo_nccl.h"

#include "../util/jsonin.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"
#include "../util/tcassert.h"
#include "../util/units.h"
#include "runtime.h"

#define TOPO_MAX_RANKS 65536
#define TOPO_MAX_LINKS (1 << 22)
#define TOPO_MAX_MULT 65536
#define TOPO_MAX_DMA (1 << 30)
#define TOPO_MAX_FILE (64L << 20)
#define TOPO_MAX_NAME 200
#define TOPO_MIN_GBPS 1e-6
#define TOPO_MAX_GBPS 1e6
#define TOPO_MAX_ALPHA_US 1e6
#define TOPO_REF_BYTES 1e6      /* "fastest" = lowest cost for 1 MB */

/* How topology files are read, and their message conventions. */
static const jsonin_doc TOPO_DOC = {"topology", TOPO_MAX_FILE, 0};


/* ---------------------------------------------------------------- memory */

static struct topo_priv *priv_new(void)
{
    struct topo_priv *pv = xcalloc(1, sizeof *pv);
    pv->description = pv->notes = -1;
    pv->device_source = pv->device_notes = -1;
    pv->local_source = pv->local_notes = -1;
    pv->collnet_source = pv->collnet_notes = -1;
    return pv;
}

/* Keep a copy of s in the string pool; returns its index (-1 for NULL). */
static int pool_add(struct topo_priv *pv, const char *s)
{
    if (!s)
        return -1;
    if (pv->nstrs == pv->capstrs) {
        pv->capstrs = pv->capstrs ? 2 * pv->capstrs : 16;
        pv->strs = xrealloc(pv->strs, (size_t)pv->capstrs * sizeof *pv->strs);
    }
    pv->strs[pv->nstrs] = xstrdup(s);
    return pv->nstrs++;
}

const char *topo_pool_get(const struct topo_priv *pv, int i)
{
    return (pv && i >= 0 && i < pv->nstrs) ? pv->strs[i] : NULL;
}

/* The route index (build_index), freed. */
static void index_free(struct topo_priv *pv)
{
    free(pv->adj_start);
    free(pv->adj_dst);
    free(pv->adj_link);
    free(pv->sw_start);
    free(pv->sw_list);
}

static void priv_free(struct topo_priv *pv)
{
    if (!pv)
        return;
    index_free(pv);
    for (int i = 0; i < pv->nstrs; i++)
        free(pv->strs[i]);
    free(pv->strs);
    free(pv->link_source);
    free(pv->link_notes);
    free(pv->switch_source);
    free(pv->switch_notes);
    free(pv->nvls_source);
    free(pv->nvls_notes);
    free(pv->nic_source);
    free(pv->warn);
    free(pv->nic_notes);
    free(pv);
}

void topo_free(topo *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->path);
    free(t->links);
    if (t->switches)
        for (int i = 0; i < t->nswitches; i++)
            free(t->switches[i].ranks);
    free(t->switches);
    if (t->nics)
        for (int i = 0; i < t->nnics; i++)
            free(t->nics[i].ranks);
    free(t->nics);
    free(t->nic_of_rank);
    priv_free(t->priv);
    free(t);
}

/* ---------------------------------------------------------- field readers */

/* Optional (or required) string; *out points into the cJSON tree. */
static int read_string(jsonin_ctx *c, const cJSON *obj, const char *key,
                       int required, size_t maxlen, const char **out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    int rc = TC_OK;
    *out = NULL;
    jsonin_push_key(c, key, 0);
    if (!it) {
        if (required)
            rc = jsonin_fail(c, "missing: expected a non-empty string");
    } else if (!cJSON_IsString(it) || !it->valuestring) {
        rc = jsonin_fail(c, "expected a string, got %s",
                         jsonin_got(c, it, g, sizeof g));
    } else if (it->valuestring[0] == '\0') {
        rc = jsonin_fail(c, "expected a non-empty string, got \"\"");
    } else if (maxlen && strlen(it->valuestring) > maxlen) {
        rc = jsonin_fail(c, "expected a string of at most %zu bytes, got %zu bytes",
                         maxlen, strlen(it->valuestring));
    } else if ((rc = jsonin_check_control(c, it->valuestring,
                                           JSONIN_CONTROL_HINT)) == TC_OK) {
        *out = it->valuestring;
    }
    jsonin_pop(c);
    return rc;
}

/* The "source" of an object with figures, kept in the pool.  Missing is
 * not an error (a user's first topology may not have them yet) but a
 * warning naming the field, kept in pv (topo_warning). */
static int read_source(jsonin_ctx *c, const cJSON *obj, struct topo_priv *pv,
                       int *out)
{
    const char *s;
    *out = -1;
    if (!cJSON_GetObjectItemCaseSensitive(obj, "source")) {
        tc_err w;
        jsonin_ctx wc = *c;
        wc.err = &w;
        jsonin_push_key(&wc, "source", 0);
        jsonin_fail(&wc, "missing: these figures do not say where they come from (give a "
                         "\"source\", or one starting with \"assumed\")");
        pv->warn = xgrow(pv->warn, &pv->capwarn, pv->nwarn + 1, sizeof *pv->warn);
        pv->warn[pv->nwarn++] = pool_add(pv, w.msg);
        return TC_OK;
    }
    int rc = read_string(c, obj, "source", 1, 0, &s);
    if (rc == TC_OK)
        *out = pool_add(pv, s);
    return rc;
}

/* Optional "notes": a string or an array of strings, kept as JSON text. */
static int read_notes(jsonin_ctx *c, const cJSON *obj, struct topo_priv *pv,
                      int *out)
{
    const cJSON *it;
    int rc = jsonin_read_notes(c, obj, 1, &it);
    *out = -1;
    if (rc == TC_OK && it) {
        char *txt = cJSON_PrintUnformatted(it);
        if (!txt)
            tc_oom();
        *out = pool_add(pv, txt);
        cJSON_free(txt);
    }
    return rc;
}

/* A required finite number, > 0 if `positive` (a bandwidth), else >= 0 (a
 * latency), within the figures a machine can have: a bandwidth of
 * TOPO_MIN_GBPS..TOPO_MAX_GBPS GB/s (1 KB/s to 1 PB/s), a latency of at most
 * TOPO_MAX_ALPHA_US (one second).  Beyond them times overflow into
 * infinities and the MILPs' coefficients span more than a solver resolves. */
static int read_number(jsonin_ctx *c, const cJSON *obj, const char *key,
                       int positive, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *want = positive ? "a number > 0" : "a number >= 0";
    double lo = positive ? TOPO_MIN_GBPS : 0, hi = positive ? TOPO_MAX_GBPS : TOPO_MAX_ALPHA_US;
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, key, 0);
    if (!it)
        rc = jsonin_fail(c, "missing: expected %s", want);
    else if (!cJSON_IsNumber(it))
        rc = jsonin_fail(c, "expected %s, got %s", want,
                         jsonin_got(c, it, g, sizeof g));
    else if (!isfinite(it->valuedouble))
        rc = jsonin_fail(c, "expected %s, got %s (out of range)", want,
                         jsonin_got(c, it, g, sizeof g));
    else if (positive ? !(it->valuedouble > 0) : !(it->valuedouble >= 0))
        rc = jsonin_fail(c, "expected %s, got %s", want,
                         jsonin_got(c, it, g, sizeof g));
    else if (it->valuedouble < lo || it->valuedouble > hi)
        rc = jsonin_fail(c, "expected %s in %g..%g %s, got %s", positive ? "a bandwidth" : "a latency",
                         lo, hi, positive ? "GB/s" : "us", jsonin_got(c, it, g, sizeof g));
    else
        *out = it->valuedouble;
    jsonin_pop(c);
    return rc;
}

/* A latency or bandwidth under either of two keys: `key` (the unit in its
 * name, "alpha_us": a number) or `plain` ("alpha": a string with its unit,
 * "2.6 us"; units.h).  Exactly one must be there; a bare number under
 * `plain` is refused, since it has no unit. */
static int read_figure(jsonin_ctx *c, const cJSON *obj, const char *key, const char *plain,
                       int positive, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, plain);
    if (!it && !cJSON_GetObjectItemCaseSensitive(obj, key)) {
        jsonin_push_key(c, key, 0);
        int rc = jsonin_fail(c, "missing: expected \"%s\" (a number, %s) or \"%s\" (with its unit, "
                             "such as %s)", key, positive ? "GB/s" : "microseconds", plain,
                             positive ? "\"25 GB/s\"" : "\"2.6 us\"");
        jsonin_pop(c);
        return rc;
    }
    if (!it)
        return read_number(c, obj, key, positive, out);
    const char *eg = positive ? "\"25 GB/s\" or \"200 Gb/s\"" : "\"2.6 us\" or \"700 ns\"";
    double v = 0, lo = positive ? TOPO_MIN_GBPS : 0, hi = positive ? TOPO_MAX_GBPS : TOPO_MAX_ALPHA_US;
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, plain, 0);
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        rc = jsonin_fail(c, "give %s or %s, not both", plain, key);
    else if (cJSON_IsNumber(it))
        rc = jsonin_fail(c, "a bare number has no unit: write a string such as %s, or use \"%s\" "
                         "(%s), got %s", eg, key, positive ? "GB/s" : "microseconds",
                         jsonin_got(c, it, g, sizeof g));
    else if (!cJSON_IsString(it) ||
             (positive ? units_bw_gbps(it->valuestring, &v) : units_time_us(it->valuestring, &v)))
        rc = jsonin_fail(c, "expected a %s with its unit, such as %s, got %s%s",
                         positive ? "bandwidth" : "latency", eg, jsonin_got(c, it, g, sizeof g),
                         cJSON_IsString(it) ? units_hint(it->valuestring) : "");
    else if (positive ? !(v > 0) : !(v >= 0))
        rc = jsonin_fail(c, "expected a %s %s 0, got %s", positive ? "bandwidth" : "latency",
                         positive ? ">" : ">=", jsonin_got(c, it, g, sizeof g));
    else if (v < lo || v > hi)
        rc = jsonin_fail(c, "expected a %s in %g..%g %s, got %s", positive ? "bandwidth" : "latency",
                         lo, hi, positive ? "GB/s" : "us", jsonin_got(c, it, g, sizeof g));
    else
        *out = v;
    jsonin_pop(c);
    return rc;
}

/* An integer in lo..hi; when absent, `dflt` if not required. */
static int read_int(jsonin_ctx *c, const cJSON *obj, const char *key, int required,
                    int lo, int hi, int dflt, int *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, key, 0);
    if (!it) {
        if (required)
            rc = jsonin_fail(c, "missing: expected an integer in %d..%d", lo, hi);
        else
            *out = dflt;
    } else if (!jsonin_is_int_in(it, lo, hi)) {
        int big = cJSON_IsNumber(it) && !(it->valuedouble <= hi);
        rc = jsonin_fail(c, "expected an integer in %d..%d, got %s%s", lo, hi,
                         jsonin_got(c, it, g, sizeof g), big ? " (too large)" : "");
    } else {
        *out = (int)it->valuedouble;
    }
    jsonin_pop(c);
    return rc;
}

/* ------------------------------------------------------------ the parser */

/* One direction of a link of node 0, with where it was written. */
typedef struct {
    int a, b;
    int entry, pair, reverse;
    double alpha, bw;
    int mult, source, notes;
} llink;

/* A switch or NIC of node 0. */
typedef struct {
    int *ranks;
    int n;
    double alpha, bw;
    int source, notes;
    topo_nvls nvls;             /* switch: its "nvls" object, if any */
    int nvls_source, nvls_notes;
} lgroup;

typedef struct {
    jsonin_ctx c;
    topo *t;
    struct topo_priv *pv;
    int rpn;
    llink *ll;
    int nll, capll;
    lgroup *sw;
    int nsw;
    lgroup *nic;
    int nnic;
    int *stamp;             /* [rpn]: duplicate detection within one list */
    int stampval;
} pstate;

static void pstate_free(pstate *ps)
{
    free(ps->ll);
    for (int i = 0; i < ps->nsw; i++)
        free(ps->sw[i].ranks);
    free(ps->sw);
    for (int i = 0; i < ps->nnic; i++)
        free(ps->nic[i].ranks);
    free(ps->nic);
    free(ps->stamp);
}

/* A local rank 0..rpn-1. */
static int read_rank(pstate *ps, const cJSON *it, int *out)
{
    return jsonin_read_rank(&ps->c, it, ps->rpn - 1, out);
}

/* "ranks": at least `min` distinct local ranks.  `what` names the owner. */
static int read_ranks(pstate *ps, const cJSON *obj, int min, const char *what,
                      int **out, int *n)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "ranks");
    char g[64];
    int rc = TC_OK;
    *out = NULL;
    *n = 0;
    jsonin_push_key(c, "ranks", 0);
    int size = it && cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
    if (!it) {
        rc = jsonin_fail(c, "missing: expected an array of local ranks");
    } else if (!cJSON_IsArray(it) || size < min) {
        rc = jsonin_fail(c, "expected an array of at least %d local rank%s, got %s",
                         min, min == 1 ? "" : "s", jsonin_got(c, it, g, sizeof g));
    } else {
        int *r = xmalloc((size_t)size * sizeof *r);
        int i = 0;
        ps->stampval++;
        for (const cJSON *e = it->child; e; e = e->next, i++) {
            jsonin_push_index(c, i);
            rc = read_rank(ps, e, &r[i]);
            if (rc == TC_OK && ps->stamp[r[i]] == ps->stampval)
                rc = jsonin_fail(c, "local rank %d listed twice in this %s",
                                 r[i], what);
            jsonin_pop(c);
            if (rc != TC_OK)
                break;
            ps->stamp[r[i]] = ps->stampval;
        }
        if (rc == TC_OK) {
            *out = r;
            *n = size;
        } else {
            free(r);
        }
    }
    jsonin_pop(c);
    return rc;
}

static const char *const top_keys[] = {
    "name", "description", "notes", "is_default", "nodes", "ranks_per_node",
    "alpha_mode", "runtime_latency", "arbitration", "fabric", "collnet", "device", "local",
    "links", "switches", "nics"};
static const char *const gpu_keys[] = {"kind", "arch", "source", "notes"};
static const char *const chip_keys[] = {
    "kind", "chips_per_node", "clusters_per_chip", "dma_bytes", "source",
    "notes"};
static const char *const local_keys[] = {
    "copy_gbps", "reduce_gbps", "copy", "reduce", "source", "notes"};
static const char *const link_keys[] = {
    "pairs", "alpha_us", "bandwidth_gbps", "alpha", "bandwidth", "multiplicity",
    "bidirectional", "source", "notes"};
static const char *const group_keys[] = {
    "ranks", "alpha_us", "bandwidth_gbps", "alpha", "bandwidth", "source", "notes"};
static const char *const switch_keys[] = {
    "ranks", "alpha_us", "bandwidth_gbps", "alpha", "bandwidth", "source", "notes", "nvls"};
static const char *const collnet_keys[] = {
    "reductions", "dtypes", "allgather", "reducescatter", "source", "notes"};
static const char *const nvls_keys[] = {
    "alpha_us", "bandwidth_gbps", "alpha", "bandwidth", "reductions", "dtypes", "source",
    "notes"};
#define NKEYS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* device.arch spellings, indexed by topo_arch. */
static const char *const arch_names[] = {"unknown", "volta", "ampere", "hopper",
                                         "blackwell"};
#define NARCH NKEYS(arch_names)

const char *topo_arch_name(topo_arch a)
{
    return (int)a > 0 && (int)a < NARCH ? arch_names[a] : arch_names[0];
}

/* The optional "arch" of a GPU device: one of the names after "unknown". */
static int read_arch(jsonin_ctx *c, const cJSON *dev, topo_arch *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(dev, "arch");
    char g[64];
    *out = TOPO_ARCH_UNKNOWN;
    if (!it)
        return TC_OK;
    if (cJSON_IsString(it) && it->valuestring)
        for (int a = 1; a < NARCH; a++)
            if (strcmp(it->valuestring, arch_names[a]) == 0) {
                *out = (topo_arch)a;
                return TC_OK;
            }
    jsonin_push_key(c, "arch", 0);
    int rc = jsonin_fail(c, "expected one of \"volta\", \"ampere\", \"hopper\", "
                            "\"blackwell\", got %s", jsonin_got(c, it, g, sizeof g));
    jsonin_pop(c);
    return rc;
}

/* An optional top-level key whose value is one of two words: *second is
 * 1 where it is the second, 0 where it is absent or the first. */
static int read_choice(jsonin_ctx *c, const cJSON *root, const char *key, const char *first,
                       const char *second, int *is_second)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    char g[64];
    *is_second = 0;
    if (!it)
        return TC_OK;
    if (cJSON_IsString(it) && it->valuestring &&
        (strcmp(it->valuestring, first) == 0 || strcmp(it->valuestring, second) == 0)) {
        *is_second = strcmp(it->valuestring, second) == 0;
        return TC_OK;
    }
    jsonin_push_key(c, key, 0);
    int rc = jsonin_fail(c, "expected \"%s\" or \"%s\", got %s", first, second,
                         jsonin_got(c, it, g, sizeof g));
    jsonin_pop(c);
    return rc;
}

/* "runtime_latency": "none", "nccl" or "rccl" (absent: none). */
static int read_rtlat(jsonin_ctx *c, const cJSON *root, topo_rtlat *out)
{
    static const char *const names[] = {"none", "nccl", "rccl"};
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "runtime_latency");
    char g[64];
    *out = TOPO_RTLAT_NONE;
    if (!it)
        return TC_OK;
    for (int i = 0; cJSON_IsString(it) && it->valuestring && i < NKEYS(names); i++)
        if (strcmp(it->valuestring, names[i]) == 0) {
            *out = (topo_rtlat)i;
            return TC_OK;
        }
    jsonin_push_key(c, "runtime_latency", 0);
    int rc = jsonin_fail(c, "expected \"none\", \"nccl\" or \"rccl\", got %s",
                         jsonin_got(c, it, g, sizeof g));
    jsonin_pop(c);
    return rc;
}

static int parse_device(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    topo *t = ps->t;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    char g[64];
    int rc;
    t->kind = TOPO_GPU;
    t->arch = TOPO_ARCH_UNKNOWN;
    t->chips_per_node = t->ranks_per_node;
    t->clusters_per_chip = 1;
    t->dma_bytes = 0;
    if (!dev)
        return TC_OK;
    jsonin_push_key(c, "device", 0);
    if (!cJSON_IsObject(dev)) {
        rc = jsonin_fail(c, "expected an object such as {\"kind\": \"gpu\"}, got %s",
                         jsonin_got(c, dev, g, sizeof g));
        jsonin_pop(c);
        return rc;
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(dev, "kind");
    jsonin_push_key(c, "kind", 0);
    if (!kind)
        rc = jsonin_fail(c, "missing: expected \"gpu\" or \"chip\"");
    else if (!cJSON_IsString(kind) || (strcmp(kind->valuestring, "gpu") != 0 &&
                                       strcmp(kind->valuestring, "chip") != 0))
        rc = jsonin_fail(c, "expected \"gpu\" or \"chip\", got %s",
                         jsonin_got(c, kind, g, sizeof g));
    else
        rc = TC_OK;
    jsonin_pop(c);
    if (rc != TC_OK) {
        jsonin_pop(c);
        return rc;
    }
    int chip = strcmp(kind->valuestring, "chip") == 0;
    int chips = 0, clusters = 0, dma = 0;
    if (chip) {
        if ((rc = jsonin_check_keys(c, dev, chip_keys, NKEYS(chip_keys))) ||
            (rc = read_int(c, dev, "chips_per_node", 1, 1, TOPO_MAX_RANKS, 0,
                           &chips)) ||
            (rc = read_int(c, dev, "clusters_per_chip", 1, 1, TOPO_MAX_RANKS, 0,
                           &clusters)) ||
            (rc = read_int(c, dev, "dma_bytes", 0, 0, TOPO_MAX_DMA, 0, &dma)) ||
            (rc = read_source(c, dev, ps->pv, &ps->pv->device_source))) {
            jsonin_pop(c);
            return rc;
        }
    } else {
        const char *s = NULL;
        if ((rc = jsonin_check_keys(c, dev, gpu_keys, NKEYS(gpu_keys))) ||
            (rc = read_arch(c, dev, &t->arch)) ||
            (rc = read_string(c, dev, "source", 0, 0, &s))) {
            jsonin_pop(c);
            return rc;
        }
        ps->pv->device_source = pool_add(ps->pv, s);
    }
    rc = read_notes(c, dev, ps->pv, &ps->pv->device_notes);
    jsonin_pop(c);
    if (rc != TC_OK || !chip)
        return rc;
    long long want = (long long)chips * clusters;
    if (want != t->ranks_per_node) {
        jsonin_push_key(c, "ranks_per_node", 0);
        rc = jsonin_fail(c, "expected device.chips_per_node * "
                            "device.clusters_per_chip = %lld for a chip "
                            "device, got %d", want, t->ranks_per_node);
        jsonin_pop(c);
        return rc;
    }
    t->kind = TOPO_CHIP;
    t->chips_per_node = chips;
    t->clusters_per_chip = clusters;
    t->dma_bytes = dma;
    return TC_OK;
}

static int parse_local(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(root, "local");
    int rc;
    jsonin_push_key(c, "local", 0);
    if (!loc)
        rc = jsonin_fail(c, "missing: expected {\"copy_gbps\": ..., "
                            "\"reduce_gbps\": ..., \"source\": ...}");
    else if ((rc = jsonin_want_object(c, loc)) ||
             (rc = jsonin_check_keys(c, loc, local_keys, NKEYS(local_keys))) ||
             (rc = read_figure(c, loc, "copy_gbps", "copy", 1, &ps->t->copy_gbps)) ||
             (rc = read_figure(c, loc, "reduce_gbps", "reduce", 1, &ps->t->reduce_gbps)) ||
             (rc = read_source(c, loc, ps->pv, &ps->pv->local_source)))
        ;
    else
        rc = read_notes(c, loc, ps->pv, &ps->pv->local_notes);
    jsonin_pop(c);
    return rc;
}

static void add_llink(pstate *ps, const llink *l)
{
    if (ps->nll == ps->capll) {
        ps->capll = ps->capll ? 2 * ps->capll : 64;
        ps->ll = xrealloc(ps->ll, (size_t)ps->capll * sizeof *ps->ll);
    }
    ps->ll[ps->nll++] = *l;
}

/* The pairs of one link entry; `proto` carries its figures. */
static int parse_pairs(pstate *ps, const cJSON *entry, llink *proto, int bidir)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(entry, "pairs");
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, "pairs", 0);
    if (!pairs)
        rc = jsonin_fail(c, "missing: expected an array of [a, b] local rank pairs");
    else if (!cJSON_IsArray(pairs) || !pairs->child)
        rc = jsonin_fail(c, "expected a non-empty array of [a, b] local rank pairs, "
                            "got %s", jsonin_got(c, pairs, g, sizeof g));
    int j = 0;
    for (const cJSON *p = rc ? NULL : pairs->child; p; p = p->next, j++) {
        jsonin_push_index(c, j);
        int a = 0, b = 0;
        if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2) {
            rc = jsonin_fail(c, "expected a pair [a, b] of local ranks, got %s",
                             jsonin_got(c, p, g, sizeof g));
        } else {
            jsonin_push_index(c, 0);
            rc = read_rank(ps, p->child, &a);
            jsonin_pop(c);
            if (rc == TC_OK) {
                jsonin_push_index(c, 1);
                rc = read_rank(ps, p->child->next, &b);
                jsonin_pop(c);
            }
            if (rc == TC_OK && a == b)
                rc = jsonin_fail(c, "a link from local rank %d to itself", a);
        }
        if (rc == TC_OK && ps->nll + 2 > TOPO_MAX_LINKS)
            rc = jsonin_fail(c, "too many links (the limit is %d directed links)",
                             TOPO_MAX_LINKS);
        jsonin_pop(c);
        if (rc != TC_OK)
            break;
        llink l = *proto;
        l.a = a;
        l.b = b;
        l.pair = j;
        l.reverse = 0;
        add_llink(ps, &l);
        if (bidir) {
            l.a = b;
            l.b = a;
            l.reverse = 1;
            add_llink(ps, &l);
        }
    }
    jsonin_pop(c);
    return rc;
}

/* qsort has no context argument: sort (key, index) records instead. */
typedef struct {
    long long key;
    int idx;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *p = x, *q = y;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

/* No directed pair may be given twice; report the earliest repetition. */
static int check_duplicate_links(pstate *ps)
{
    if (ps->nll < 2)
        return TC_OK;
    keyed *k = xmalloc((size_t)ps->nll * sizeof *k);
    for (int i = 0; i < ps->nll; i++)
        k[i] = (keyed){(long long)ps->ll[i].a * ps->rpn + ps->ll[i].b, i};
    qsort(k, (size_t)ps->nll, sizeof *k, cmp_keyed);
    /* Within a run of equal pairs, indices ascend: the run's first element
     * is the original and its second the first repetition. */
    int first = -1, dup = -1;
    for (int i = 1; i < ps->nll; i++)
        if (k[i].key == k[i - 1].key && (i < 2 || k[i - 2].key != k[i].key) &&
            (dup < 0 || k[i].idx < dup)) {
            dup = k[i].idx;
            first = k[i - 1].idx;
        }
    free(k);
    if (dup < 0)
        return TC_OK;
    const llink *d = &ps->ll[dup], *f = &ps->ll[first];
    jsonin_ctx *c = &ps->c;
    jsonin_push_key(c, "links", 0);
    jsonin_push_index(c, d->entry);
    jsonin_push_key(c, "pairs", 0);
    jsonin_push_index(c, d->pair);
    int rc = jsonin_fail(c, "duplicate link %d -> %d%s: already given by "
                            "links[%d].pairs[%d]%s",
                         d->a, d->b, d->reverse ? " (the reverse of this "
                                                  "bidirectional pair)" : "",
                         f->entry, f->pair,
                         f->reverse ? " (bidirectional)" : "");
    c->depth -= 4;
    return rc;
}

static int parse_links(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    char g[64];
    int rc = TC_OK;
    if (!links)
        return TC_OK;
    jsonin_push_key(c, "links", 0);
    if (!cJSON_IsArray(links)) {
        rc = jsonin_fail(c, "expected an array of link objects, got %s",
                         jsonin_got(c, links, g, sizeof g));
        jsonin_pop(c);
        return rc;
    }
    int e = 0;
    for (const cJSON *it = links->child; it && rc == TC_OK; it = it->next, e++) {
        jsonin_push_index(c, e);
        llink proto = {0};
        int bidir = 1;
        proto.entry = e;
        if (!cJSON_IsObject(it))
            rc = jsonin_fail(c, "expected a link object, got %s",
                             jsonin_got(c, it, g, sizeof g));
        else if ((rc = jsonin_check_keys(c, it, link_keys, NKEYS(link_keys))) ||
                 (rc = read_figure(c, it, "alpha_us", "alpha", 0, &proto.alpha)) ||
                 (rc = read_figure(c, it, "bandwidth_gbps", "bandwidth", 1, &proto.bw)) ||
                 (rc = read_int(c, it, "multiplicity", 0, 1, TOPO_MAX_MULT, 1,
                                       &proto.mult)) ||
                 (rc = jsonin_read_bool(c, it, "bidirectional", 1, &bidir)) ||
                 (rc = read_source(c, it, ps->pv, &proto.source)) ||
                 (rc = read_notes(c, it, ps->pv, &proto.notes)))
            ;
        else
            rc = parse_pairs(ps, it, &proto, bidir);
        jsonin_pop(c);
    }
    jsonin_pop(c);
    if (rc == TC_OK)
        rc = check_duplicate_links(ps);
    if (rc == TC_OK && (long long)ps->nll * ps->t->nnodes > TOPO_MAX_LINKS) {
        jsonin_push_key(c, "links", 0);
        rc = jsonin_fail(c, "%d directed links per node over %d nodes exceed the "
                            "limit of %d", ps->nll, ps->t->nnodes, TOPO_MAX_LINKS);
        jsonin_pop(c);
    }
    return rc;
}

/* A non-empty array of distinct names under `key` of obj, each one `parse`
 * accepts (runtime.h's reductions or element types): their bits. */
static int read_name_set(jsonin_ctx *c, const cJSON *obj, const char *key, const char *what,
                         int (*parse)(const char *, int *, tc_err *), unsigned *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    int rc = TC_OK;
    *out = 0;
    jsonin_push_key(c, key, 0);
    if (!it) {
        rc = jsonin_fail(c, "missing: expected a non-empty array of %s names", what);
    } else if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) < 1) {
        rc = jsonin_fail(c, "expected a non-empty array of %s names, got %s", what,
                         jsonin_got(c, it, g, sizeof g));
    } else {
        int i = 0;
        for (const cJSON *e = it->child; e && rc == TC_OK; e = e->next, i++) {
            int v = 0;
            tc_err perr;
            jsonin_push_index(c, i);
            if (!cJSON_IsString(e) || !e->valuestring)
                rc = jsonin_fail(c, "expected a %s name, got %s", what,
                                 jsonin_got(c, e, g, sizeof g));
            else if (parse(e->valuestring, &v, &perr) != TC_OK)
                rc = jsonin_fail(c, "%s", perr.msg);
            else if (*out & (1u << v))
                rc = jsonin_fail(c, "%s \"%s\" listed twice", what, e->valuestring);
            else
                *out |= 1u << v;
            jsonin_pop(c);
        }
    }
    jsonin_pop(c);
    return rc;
}

static int parse_dtype_name(const char *s, int *v, tc_err *err)
{
    rt_dtype d;
    int rc = runtime_dtype_parse(s, &d, err);
    *v = (int)d;
    return rc;
}

static int parse_redop_name(const char *s, int *v, tc_err *err)
{
    for (int i = 0; i < RED_COUNT; i++)
        if (!strcmp(s, runtime_redop_name((rt_redop)i))) {
            *v = i;
            return TC_OK;
        }
    return tc_err_set(err, TC_INPUT, "expected sum, avg or max, got '%s'", s);
}

/* A switch's optional "nvls" object (topo.h, topo_nvls): in-switch
 * reduction and multicast, at most the switch's port bandwidth. */
static int parse_nvls(jsonin_ctx *c, struct topo_priv *pv, const cJSON *sw, lgroup *gr)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(sw, "nvls");
    char g[64];
    int rc = TC_OK;
    gr->nvls_source = gr->nvls_notes = -1;
    if (!it)
        return TC_OK;
    jsonin_push_key(c, "nvls", 0);
    topo_nvls *nv = &gr->nvls;
    if (!cJSON_IsObject(it))
        rc = jsonin_fail(c, "expected an object {\"bandwidth_gbps\": ..., \"alpha_us\": ..., "
                         "\"reductions\": [...], \"dtypes\": [...], \"source\": ...}, got %s",
                         jsonin_got(c, it, g, sizeof g));
    else if ((rc = jsonin_check_keys(c, it, nvls_keys, NKEYS(nvls_keys))) ||
             (rc = read_figure(c, it, "alpha_us", "alpha", 0, &nv->alpha_us)) ||
             (rc = read_figure(c, it, "bandwidth_gbps", "bandwidth", 1, &nv->bw_gbps)) ||
             (rc = read_name_set(c, it, "reductions", "reduction", parse_redop_name,
                                 &nv->redops)) ||
             (rc = read_name_set(c, it, "dtypes", "element type", parse_dtype_name,
                                 &nv->dtypes)) ||
             (rc = read_source(c, it, pv, &gr->nvls_source)) ||
             (rc = read_notes(c, it, pv, &gr->nvls_notes)))
        ;
    else if (nv->bw_gbps > gr->bw) {
        jsonin_push_key(c, cJSON_GetObjectItemCaseSensitive(it, "bandwidth") ? "bandwidth"
                                                                               : "bandwidth_gbps", 0);
        rc = jsonin_fail(c, "%g GB/s exceeds the switch's port bandwidth %g GB/s: multimem "
                         "traffic crosses the same ports", nv->bw_gbps, gr->bw);
        jsonin_pop(c);
    } else {
        nv->on = 1;
    }
    jsonin_pop(c);
    return rc;
}

/* The optional top-level "collnet" object (topo.h, topo_collnet): the
 * network between the nodes reduces and NCCL runs CollNet on it.  Only a
 * GPU device's fabric has one (NCCL's). */
static int parse_collnet(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "collnet");
    topo_collnet *cn = &ps->t->collnet;
    char g[64];
    int rc = TC_OK;
    if (!it)
        return TC_OK;
    jsonin_push_key(c, "collnet", 0);
    if (!cJSON_IsObject(it))
        rc = jsonin_fail(c, "expected an object {\"reductions\": [...], \"dtypes\": [...], "
                         "\"allgather\": false, \"reducescatter\": false, \"source\": ...}, "
                         "got %s", jsonin_got(c, it, g, sizeof g));
    else if (ps->t->kind != TOPO_GPU)
        rc = jsonin_fail(c, "a reducing network (NCCL's CollNet) belongs to a GPU device's "
                         "fabric, not a chip/cluster device's");
    else if ((rc = jsonin_check_keys(c, it, collnet_keys, NKEYS(collnet_keys))) ||
             (rc = read_name_set(c, it, "reductions", "reduction", parse_redop_name,
                                 &cn->redops)) ||
             (rc = read_name_set(c, it, "dtypes", "element type", parse_dtype_name,
                                 &cn->dtypes)) ||
             (rc = jsonin_read_bool(c, it, "allgather", 0, &cn->allgather)) ||
             (rc = jsonin_read_bool(c, it, "reducescatter", 0, &cn->reducescatter)) ||
             (rc = read_source(c, it, ps->pv, &ps->pv->collnet_source)) ||
             (rc = read_notes(c, it, ps->pv, &ps->pv->collnet_notes)))
        ;
    else
        cn->on = 1;
    jsonin_pop(c);
    return rc;
}

/* "switches" or "nics": arrays of {ranks, alpha_us, bandwidth_gbps, ...}. */
static int parse_groups(pstate *ps, const cJSON *root, const char *key,
                        int min, const char *what, lgroup **out, int *nout)
{
    jsonin_ctx *c = &ps->c;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    char g[64];
    int rc = TC_OK;
    if (!arr)
        return TC_OK;
    jsonin_push_key(c, key, 0);
    if (!cJSON_IsArray(arr)) {
        rc = jsonin_fail(c, "expected an array of %s objects, got %s", what,
                         jsonin_got(c, arr, g, sizeof g));
        jsonin_pop(c);
        return rc;
    }
    int size = cJSON_GetArraySize(arr);
    *out = xcalloc((size_t)size, sizeof **out);
    int e = 0, is_sw = !strcmp(key, "switches");
    for (const cJSON *it = arr->child; it && rc == TC_OK; it = it->next, e++) {
        lgroup *gr = &(*out)[e];
        jsonin_push_index(c, e);
        if (!cJSON_IsObject(it))
            rc = jsonin_fail(c, "expected a %s object, got %s", what,
                             jsonin_got(c, it, g, sizeof g));
        else if ((rc = is_sw ? jsonin_check_keys(c, it, switch_keys, NKEYS(switch_keys))
                             : jsonin_check_keys(c, it, group_keys, NKEYS(group_keys))) ||
                 (rc = read_figure(c, it, "alpha_us", "alpha", 0, &gr->alpha)) ||
                 (rc = read_figure(c, it, "bandwidth_gbps", "bandwidth", 1, &gr->bw)) ||
                 (rc = read_source(c, it, ps->pv, &gr->source)) ||
                 (rc = read_notes(c, it, ps->pv, &gr->notes)) ||
                 (is_sw && (rc = parse_nvls(c, ps->pv, it, gr))))
            ;
        else
            rc = read_ranks(ps, it, min, what, &gr->ranks, &gr->n);
        jsonin_pop(c);
        *nout = e + 1;
    }
    jsonin_pop(c);
    return rc;
}

static int parse_switches(pstate *ps, const cJSON *root)
{
    int rc = parse_groups(ps, root, "switches", 2, "switch", &ps->sw, &ps->nsw);
    if (rc != TC_OK)
        return rc;
    long long ports = 0;
    for (int i = 0; i < ps->nsw; i++)
        ports += ps->sw[i].n;
    if (ports * ps->t->nnodes > TOPO_MAX_LINKS) {
        jsonin_push_key(&ps->c, "switches", 0);
        rc = jsonin_fail(&ps->c, "%lld switch ports per node over %d nodes exceed "
                                 "the limit of %d", ports, ps->t->nnodes,
                         TOPO_MAX_LINKS);
        jsonin_pop(&ps->c);
    }
    return rc;
}

static int parse_nics(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    int rc = parse_groups(ps, root, "nics", 1, "NIC", &ps->nic, &ps->nnic);
    if (rc != TC_OK)
        return rc;
    int *owner = xmalloc((size_t)ps->rpn * sizeof *owner);
    for (int r = 0; r < ps->rpn; r++)
        owner[r] = -1;
    for (int j = 0; j < ps->nnic && rc == TC_OK; j++)
        for (int i = 0; i < ps->nic[j].n && rc == TC_OK; i++) {
            int r = ps->nic[j].ranks[i];
            if (owner[r] >= 0) {
                jsonin_push_key(c, "nics", 0);
                jsonin_push_index(c, j);
                jsonin_push_key(c, "ranks", 0);
                jsonin_push_index(c, i);
                rc = jsonin_fail(c, "local rank %d already belongs to nics[%d] "
                                    "(a rank has at most one NIC)", r,
                                 owner[r]);
                c->depth -= 4;
            }
            owner[r] = j;
        }
    free(owner);
    if (rc == TC_OK && ps->t->nnodes > 1 && ps->nnic == 0) {
        jsonin_push_key(c, "nics", 0);
        rc = jsonin_fail(c, "a topology of %d nodes needs at least one NIC (none "
                            "given), or no rank could reach another node",
                         ps->t->nnodes);
        jsonin_pop(c);
    }
    return rc;
}

/* ------------------------------------------------- the struct and index */

typedef struct {
    int src, dst, link;
    double cost;
} adjent;

static int cmp_adjent(const void *x, const void *y)
{
    const adjent *p = x, *q = y;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->cost != q->cost)
        return p->cost < q->cost ? -1 : 1;
    return (p->link > q->link) - (p->link < q->link);
}

static double hop_cost(double alpha, double bw)
{
    return bw > 0 ? alpha + TOPO_REF_BYTES / (bw * 1e3) : INFINITY;
}

/* Per-rank sorted adjacency (fastest link per destination) and per-rank
 * switch lists.  Ignores elements naming ranks out of range. */
static void build_index(topo *t)
{
    struct topo_priv *pv = t->priv;
    int n = t->nranks;
    adjent *tmp = xmalloc((size_t)t->nlinks * sizeof *tmp);
    int m = 0;
    for (int i = 0; i < t->nlinks; i++) {
        const topo_link *l = &t->links[i];
        if (l->src < 0 || l->src >= n || l->dst < 0 || l->dst >= n)
            continue;
        tmp[m++] = (adjent){l->src, l->dst, i, hop_cost(l->alpha_us, l->bw_gbps)};
    }
    qsort(tmp, (size_t)m, sizeof *tmp, cmp_adjent);
    pv->adj_start = xcalloc((size_t)n + 1, sizeof *pv->adj_start);
    pv->adj_dst = xmalloc((size_t)m * sizeof *pv->adj_dst);
    pv->adj_link = xmalloc((size_t)m * sizeof *pv->adj_link);
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (i > 0 && tmp[i].src == tmp[i - 1].src && tmp[i].dst == tmp[i - 1].dst)
            continue;
        pv->adj_dst[k] = tmp[i].dst;
        pv->adj_link[k] = tmp[i].link;
        pv->adj_start[tmp[i].src + 1]++;
        k++;
    }
    for (int r = 0; r < n; r++)
        pv->adj_start[r + 1] += pv->adj_start[r];
    free(tmp);

    int *last = xmalloc((size_t)n * sizeof *last);
    int *fill = xmalloc((size_t)n * sizeof *fill);
    pv->sw_start = xcalloc((size_t)n + 1, sizeof *pv->sw_start);
    for (int r = 0; r < n; r++)
        last[r] = -1;
    for (int j = 0; j < t->nswitches; j++)
        for (int i = 0; i < t->switches[j].nranks; i++) {
            int r = t->switches[j].ranks[i];
            if (r >= 0 && r < n && last[r] != j) {
                last[r] = j;
                pv->sw_start[r + 1]++;
            }
        }
    for (int r = 0; r < n; r++) {
        pv->sw_start[r + 1] += pv->sw_start[r];
        fill[r] = pv->sw_start[r];
        last[r] = -1;
    }
    pv->sw_list = xmalloc((size_t)pv->sw_start[n] * sizeof *pv->sw_list);
    for (int j = 0; j < t->nswitches; j++)
        for (int i = 0; i < t->switches[j].nranks; i++) {
            int r = t->switches[j].ranks[i];
            if (r >= 0 && r < n && last[r] != j) {
                last[r] = j;
                pv->sw_list[fill[r]++] = j;
            }
        }
    free(last);
    free(fill);
}

/* Replicate node 0 (in ps) over every node of ps->t. */
static void expand(pstate *ps)
{
    topo *t = ps->t;
    struct topo_priv *pv = ps->pv;
    int nn = t->nnodes, rpn = t->ranks_per_node;

    t->nlinks = ps->nll * nn;
    t->links = xmalloc((size_t)t->nlinks * sizeof *t->links);
    for (int node = 0; node < nn; node++)
        for (int i = 0; i < ps->nll; i++) {
            const llink *l = &ps->ll[i];
            t->links[node * ps->nll + i] = (topo_link){
                l->a + node * rpn, l->b + node * rpn, l->alpha, l->bw, l->mult};
        }
    pv->nlinks0 = ps->nll;
    pv->link_source = xmalloc((size_t)ps->nll * sizeof(int));
    pv->link_notes = xmalloc((size_t)ps->nll * sizeof(int));
    for (int i = 0; i < ps->nll; i++) {
        pv->link_source[i] = ps->ll[i].source;
        pv->link_notes[i] = ps->ll[i].notes;
    }

    t->nswitches = ps->nsw * nn;
    t->switches = xcalloc((size_t)t->nswitches, sizeof *t->switches);
    for (int node = 0; node < nn; node++)
        for (int j = 0; j < ps->nsw; j++) {
            const lgroup *g = &ps->sw[j];
            topo_switch *s = &t->switches[node * ps->nsw + j];
            s->nranks = g->n;
            s->ranks = xmalloc((size_t)g->n * sizeof *s->ranks);
            for (int i = 0; i < g->n; i++)
                s->ranks[i] = g->ranks[i] + node * rpn;
            s->alpha_us = g->alpha;
            s->bw_gbps = g->bw;
            s->nvls = g->nvls;
        }
    pv->nswitches0 = ps->nsw;
    pv->switch_source = xmalloc((size_t)ps->nsw * sizeof(int));
    pv->switch_notes = xmalloc((size_t)ps->nsw * sizeof(int));
    pv->nvls_source = xmalloc((size_t)ps->nsw * sizeof(int));
    pv->nvls_notes = xmalloc((size_t)ps->nsw * sizeof(int));
    for (int j = 0; j < ps->nsw; j++) {
        pv->switch_source[j] = ps->sw[j].source;
        pv->switch_notes[j] = ps->sw[j].notes;
        pv->nvls_source[j] = ps->sw[j].nvls_source;
        pv->nvls_notes[j] = ps->sw[j].nvls_notes;
    }

    t->nnics = ps->nnic * nn;
    t->nics = xcalloc((size_t)t->nnics, sizeof *t->nics);
    t->nic_of_rank = xmalloc((size_t)t->nranks * sizeof *t->nic_of_rank);
    for (int r = 0; r < t->nranks; r++)
        t->nic_of_rank[r] = -1;
    for (int node = 0; node < nn; node++)
        for (int j = 0; j < ps->nnic; j++) {
            const lgroup *g = &ps->nic[j];
            int idx = node * ps->nnic + j;
            topo_nic *s = &t->nics[idx];
            s->node = node;
            s->nranks = g->n;
            s->ranks = xmalloc((size_t)g->n * sizeof *s->ranks);
            for (int i = 0; i < g->n; i++) {
                s->ranks[i] = g->ranks[i] + node * rpn;
                t->nic_of_rank[s->ranks[i]] = idx;
            }
            s->alpha_us = g->alpha;
            s->bw_gbps = g->bw;
        }
    pv->nnics0 = ps->nnic;
    pv->nic_source = xmalloc((size_t)ps->nnic * sizeof(int));
    pv->nic_notes = xmalloc((size_t)ps->nnic * sizeof(int));
    for (int j = 0; j < ps->nnic; j++) {
        pv->nic_source[j] = ps->nic[j].source;
        pv->nic_notes[j] = ps->nic[j].notes;
    }
}

static int parse_top(pstate *ps, const cJSON *root)
{
    jsonin_ctx *c = &ps->c;
    topo *t = ps->t;
    char g[64];
    const char *s;
    int rc;
    if (!cJSON_IsObject(root))
        return jsonin_fail(c, "expected a JSON object, got %s",
                           jsonin_got(c, root, g, sizeof g));
    if ((rc = jsonin_check_keys(c, root, top_keys, NKEYS(top_keys))) ||
        (rc = read_string(c, root, "name", 1, TOPO_MAX_NAME, &s)))
        return rc;
    t->name = xstrdup(s);
    if ((rc = read_string(c, root, "description", 0, 0, &s)))
        return rc;
    ps->pv->description = pool_add(ps->pv, s);
    if ((rc = read_notes(c, root, ps->pv, &ps->pv->notes)) ||
        (rc = jsonin_read_bool(c, root, "is_default", 0, &t->is_default)) ||
        (rc = read_int(c, root, "nodes", 1, 1, TOPO_MAX_RANKS, 0, &t->nnodes)) ||
        (rc = read_int(c, root, "ranks_per_node", 1, 1, TOPO_MAX_RANKS, 0,
                       &t->ranks_per_node)))
        return rc;
    long long nranks = (long long)t->nnodes * t->ranks_per_node;
    if (nranks > TOPO_MAX_RANKS) {
        jsonin_push_key(c, "nodes", 0);
        rc = jsonin_fail(c, "nodes * ranks_per_node = %lld ranks exceeds the "
                            "limit of %d", nranks, TOPO_MAX_RANKS);
        jsonin_pop(c);
        return rc;
    }
    t->nranks = (int)nranks;
    if ((rc = read_rtlat(c, root, &t->rt_latency)) ||
        (rc = read_choice(c, root, "alpha_mode", "hold", "delay", &t->alpha_delay)) ||
        (rc = read_choice(c, root, "arbitration", "ready", "reserve", &t->arb_reserve)) ||
        (rc = read_choice(c, root, "fabric", "fat-tree", "rails", &t->rails)))
        return rc;
    ps->rpn = t->ranks_per_node;
    ps->stamp = xcalloc((size_t)ps->rpn, sizeof *ps->stamp);
    if ((rc = parse_device(ps, root)) || (rc = parse_collnet(ps, root)) ||
        (rc = parse_local(ps, root)) ||
        (rc = parse_links(ps, root)) || (rc = parse_switches(ps, root)) ||
        (rc = parse_nics(ps, root)))
        return rc;
    expand(ps);
    build_index(t);
    return TC_OK;
}

topo *topo_parse(const char *text, const char *label, tc_err *err)
{
    if (!label)
        label = "topology";
    const char *parsed;
    cJSON *root = jsonin_parse(text, label, &TOPO_DOC, &parsed, err);
    if (!root)
        return NULL;
    pstate ps = {0};
    jsonin_ctx_init(&ps.c, label, parsed, TOPO_DOC.flags, err);
    ps.t = xcalloc(1, sizeof *ps.t);
    ps.pv = ps.t->priv = priv_new();
    ps.t->path = xstrdup(label);
    int rc = parse_top(&ps, root);
    pstate_free(&ps);
    cJSON_Delete(root);
    if (rc != TC_OK) {
        topo_free(ps.t);
        return NULL;
    }
    return ps.t;
}

topo *topo_load(const char *path, tc_err *err)
{
    char *buf = jsonin_read_file(path, &TOPO_DOC, err);
    if (!buf)
        return NULL;
    topo *t = topo_parse(buf, path, err);
    free(buf);
    return t;
}

/* ------------------------------------------------------------- default */

topo *topo_default(int nranks)
{
    if (nranks < 1 || (long long)nranks * (nranks - 1) > TOPO_MAX_LINKS)
        return NULL;
    topo *t = xcalloc(1, sizeof *t);
    struct topo_priv *pv = t->priv = priv_new();
    t->name = xstrdup("default-all-to-all");
    t->path = xstrdup("");
    t->nnodes = 1;
    t->ranks_per_node = t->nranks = nranks;
    t->kind = TOPO_GPU;
    t->chips_per_node = nranks;
    t->clusters_per_chip = 1;
    t->dma_bytes = 0;
    t->copy_gbps = 500;
    t->reduce_gbps = 500;
    t->is_default = 1;
    pv->description = pool_add(pv, "no topology given: one node whose ranks "
                               "are all linked directly; timing is only "
                               "indicative");
    pv->local_source = pool_add(pv, "assumed: 500 GB/s local copy and reduce, "
                                "a round HBM-class figure");
    int src = pool_add(pv, "assumed: 0.7 us, 50 GB/s per direction, like one "
                       "NDv2 double NVLink (TE-CCL's figures)");
    t->nlinks = nranks * (nranks - 1);
    t->links = xmalloc((size_t)t->nlinks * sizeof *t->links);
    pv->nlinks0 = t->nlinks;
    pv->link_source = xmalloc((size_t)t->nlinks * sizeof(int));
    pv->link_notes = xmalloc((size_t)t->nlinks * sizeof(int));
    int k = 0;
    for (int a = 0; a < nranks; a++)
        for (int b = 0; b < nranks; b++)
            if (a != b) {
                t->links[k] = (topo_link){a, b, 0.7, 50, 1};
                pv->link_source[k] = src;
                pv->link_notes[k] = -1;
                k++;
            }
    t->nic_of_rank = xmalloc((size_t)nranks * sizeof *t->nic_of_rank);
    for (int r = 0; r < nranks; r++)
        t->nic_of_rank[r] = -1;
    build_index(t);
    return t;
}

/* ------------------------------------------------------------ warnings */

int topo_warnings(const topo *t)
{
    return t && t->priv ? t->priv->nwarn : 0;
}

const char *topo_warning(const topo *t, int i)
{
    return i >= 0 && i < topo_warnings(t) ? topo_pool_get(t->priv, t->priv->warn[i]) : NULL;
}

/* --------------------------------------------------- hierarchy and routes */

int topo_node_of(const topo *t, int rank)
{
    if (!t || rank < 0 || rank >= t->nranks || t->ranks_per_node < 1)
        return -1;
    return rank / t->ranks_per_node;
}

int topo_chip_of(const topo *t, int rank)
{
    int node = topo_node_of(t, rank);
    if (node < 0)
        return -1;
    if (t->kind != TOPO_CHIP || t->clusters_per_chip < 1)
        return rank;
    int local = rank % t->ranks_per_node;
    return node * t->chips_per_node + local / t->clusters_per_chip;
}

int topo_cluster_of(const topo *t, int rank)
{
    if (topo_node_of(t, rank) < 0)
        return -1;
    if (t->kind != TOPO_CHIP || t->clusters_per_chip < 1)
        return 0;
    return (rank % t->ranks_per_node) % t->clusters_per_chip;
}

/* Index of the fastest link a -> b, or -1. */
static int find_link(const topo *t, int a, int b)
{
    const struct topo_priv *pv = t->priv;
    if (pv && pv->adj_start) {
        int lo = pv->adj_start[a], hi = pv->adj_start[a + 1];
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (pv->adj_dst[mid] < b)
                lo = mid + 1;
            else
                hi = mid;
        }
        return (lo < pv->adj_start[a + 1] && pv->adj_dst[lo] == b)
                   ? pv->adj_link[lo] : -1;
    }
    int best = -1;
    double bc = INFINITY;
    for (int i = 0; i < t->nlinks; i++) {
        const topo_link *l = &t->links[i];
        double c = hop_cost(l->alpha_us, l->bw_gbps);
        if (l->src == a && l->dst == b && (best < 0 || c < bc)) {
            best = i;
            bc = c;
        }
    }
    return best;
}

static int switch_has(const topo_switch *s, int r)
{
    for (int i = 0; i < s->nranks; i++)
        if (s->ranks[i] == r)
            return 1;
    return 0;
}

int topo_node_switch(const topo *t)
{
    int R = t->ranks_per_node;
    for (int s = 0; s < t->nswitches; s++) {
        const topo_switch *w = &t->switches[s];
        if (w->nranks != R)
            continue;
        int ok = 1;
        for (int i = 0; i < w->nranks && ok; i++)
            ok = w->ranks[i] >= 0 && w->ranks[i] < R;
        if (ok)
            return s;
    }
    return -1;
}

int topo_nvls_switch(const topo *t, const int *ranks, int n)
{
    for (int s = 0; t && s < t->nswitches; s++) {
        if (!t->switches[s].nvls.on)
            continue;
        int all = 1;
        for (int i = 0; i < n && all; i++)
            all = switch_has(&t->switches[s], ranks[i]);
        if (all)
            return s;
    }
    return -1;
}

/* Index of the fastest switch holding both a and b, or -1. */
static int find_switch(const topo *t, int a, int b)
{
    const struct topo_priv *pv = t->priv;
    int best = -1;
    double bc = INFINITY;
    if (pv && pv->sw_start) {
        int i = pv->sw_start[a], ie = pv->sw_start[a + 1];
        int j = pv->sw_start[b], je = pv->sw_start[b + 1];
        while (i < ie && j < je) {
            int sa = pv->sw_list[i], sb = pv->sw_list[j];
            if (sa < sb) {
                i++;
            } else if (sb < sa) {
                j++;
            } else {
                const topo_switch *s = &t->switches[sa];
                double c = hop_cost(s->alpha_us, s->bw_gbps);
                if (best < 0 || c < bc) {
                    best = sa;
                    bc = c;
                }
                i++;
                j++;
            }
        }
        return best;
    }
    for (int k = 0; k < t->nswitches; k++) {
        const topo_switch *s = &t->switches[k];
        double c = hop_cost(s->alpha_us, s->bw_gbps);
        if (switch_has(s, a) && switch_has(s, b) && (best < 0 || c < bc)) {
            best = k;
            bc = c;
        }
    }
    return best;
}

/* The runtime's per-step latency under Simple on a route of kind k
 * (model/cost.h, "Runtime latency"): 0 without one, or on a chip. */
static double route_lat(const topo *t, topo_route_kind k)
{
    if (t->rt_latency == TOPO_RTLAT_NONE || t->kind == TOPO_CHIP)
        return 0;
    return topo_nccl_latency(k == ROUTE_NIC ? TOPO_NCCL_HW_NET : TOPO_NCCL_HW_NVLINK,
                             TOPO_NCCL_SIMPLE, t->rt_latency == TOPO_RTLAT_RCCL);
}

topo_route topo_route_of(const topo *t, int a, int b)
{
    topo_route r = {ROUTE_NONE, -1, -1, -1, -1, 0, 0, 0};
    if (!t || a < 0 || b < 0 || a >= t->nranks || b >= t->nranks)
        return r;
    if (a == b) {
        r.kind = ROUTE_SELF;
        r.bw_gbps = t->copy_gbps > 0 ? t->copy_gbps : INFINITY;
        return r;
    }
    int l = find_link(t, a, b);
    if (l >= 0) {
        r.kind = ROUTE_LINK;
        r.link = l;
        r.alpha_us = t->links[l].alpha_us;
        r.bw_gbps = t->links[l].bw_gbps;
        r.lat_us = route_lat(t, r.kind);
        return r;
    }
    int s = find_switch(t, a, b);
    if (s >= 0) {
        r.kind = ROUTE_SWITCH;
        r.sw = s;
        r.alpha_us = t->switches[s].alpha_us;
        r.bw_gbps = t->switches[s].bw_gbps;
        r.lat_us = route_lat(t, r.kind);
        return r;
    }
    if (t->nic_of_rank && topo_node_of(t, a) != topo_node_of(t, b)) {
        int na = t->nic_of_rank[a], nb = t->nic_of_rank[b];
        int per = t->nnodes > 0 ? t->nnics / t->nnodes : 0;     /* NICs node by node */
        if (t->rails && per > 0 && na >= 0 && nb >= 0 && na % per != nb % per)
            return r;   /* NICs of two rails */
        if (na >= 0 && nb >= 0 && na < t->nnics && nb < t->nnics) {
            const topo_nic *x = &t->nics[na], *y = &t->nics[nb];
            r.kind = ROUTE_NIC;
            r.nic_src = na;
            r.nic_dst = nb;
            r.alpha_us = x->alpha_us > y->alpha_us ? x->alpha_us : y->alpha_us;
            r.bw_gbps = x->bw_gbps < y->bw_gbps ? x->bw_gbps : y->bw_gbps;
            r.lat_us = route_lat(t, r.kind);
        }
    }
    return r;
}

/* ----------------------------------------------------------------- copies */

/* A copy of n elements of size sz (NULL for none). */
static void *dup_n(const void *p, size_t n, size_t sz)
{
    if (!p || n == 0)
        return NULL;
    void *q = xmalloc(n * sz);
    memcpy(q, p, n * sz);
    return q;
}

static struct topo_priv *priv_clone(const struct topo_priv *pv, int nranks)
{
    if (!pv)
        return NULL;
    struct topo_priv *c = xcalloc(1, sizeof *c);
    *c = *pv;
    c->adj_start = dup_n(pv->adj_start, pv->adj_start ? (size_t)nranks + 1 : 0, sizeof(int));
    size_t nadj = pv->adj_start ? (size_t)pv->adj_start[nranks] : 0;
    c->adj_dst = dup_n(pv->adj_dst, nadj, sizeof(int));
    c->adj_link = dup_n(pv->adj_link, nadj, sizeof(int));
    c->sw_start = dup_n(pv->sw_start, pv->sw_start ? (size_t)nranks + 1 : 0, sizeof(int));
    c->sw_list = dup_n(pv->sw_list, pv->sw_start ? (size_t)pv->sw_start[nranks] : 0,
                       sizeof(int));
    c->strs = pv->capstrs ? xcalloc((size_t)pv->capstrs, sizeof *c->strs) : NULL;
    for (int i = 0; i < pv->nstrs; i++)
        c->strs[i] = xstrdup(pv->strs[i]);
    c->link_source = dup_n(pv->link_source, (size_t)pv->nlinks0, sizeof(int));
    c->link_notes = dup_n(pv->link_notes, (size_t)pv->nlinks0, sizeof(int));
    c->switch_source = dup_n(pv->switch_source, (size_t)pv->nswitches0, sizeof(int));
    c->switch_notes = dup_n(pv->switch_notes, (size_t)pv->nswitches0, sizeof(int));
    c->nvls_source = dup_n(pv->nvls_source, (size_t)pv->nswitches0, sizeof(int));
    c->nvls_notes = dup_n(pv->nvls_notes, (size_t)pv->nswitches0, sizeof(int));
    c->nic_source = dup_n(pv->nic_source, (size_t)pv->nnics0, sizeof(int));
    c->nic_notes = dup_n(pv->nic_notes, (size_t)pv->nnics0, sizeof(int));
    c->warn = dup_n(pv->warn, (size_t)pv->capwarn, sizeof(int));
    return c;
}

topo *topo_clone(const topo *t)
{
    if (!t)
        return NULL;
    topo *c = xmalloc(sizeof *c);
    *c = *t;
    c->name = t->name ? xstrdup(t->name) : NULL;
    c->path = t->path ? xstrdup(t->path) : NULL;
    c->links = dup_n(t->links, (size_t)t->nlinks, sizeof *t->links);
    c->switches = dup_n(t->switches, (size_t)t->nswitches, sizeof *t->switches);
    for (int i = 0; i < t->nswitches; i++)
        c->switches[i].ranks = dup_n(t->switches[i].ranks, (size_t)t->switches[i].nranks,
                                     sizeof(int));
    c->nics = dup_n(t->nics, (size_t)t->nnics, sizeof *t->nics);
    for (int i = 0; i < t->nnics; i++)
        c->nics[i].ranks = dup_n(t->nics[i].ranks, (size_t)t->nics[i].nranks, sizeof(int));
    c->nic_of_rank = dup_n(t->nic_of_rank, (size_t)t->nranks, sizeof(int));
    c->priv = priv_clone(t->priv, t->nranks);
    TC_ASSERT(topo_sane(c));
    return c;
}

topo *topo_one_node(const topo *t, tc_err *err)
{
    /* node-major: node 0's links, switches and NICs come first, the same
     * count of each for every node (expand) */
    if (!t || t->nnodes < 1 || t->nlinks % t->nnodes || t->nswitches % t->nnodes ||
        t->nnics % t->nnodes) {
        tc_err_set(err, TC_INPUT, "%s: cannot take one node of the topology",
                   t && t->name ? t->name : "?");
        return NULL;
    }
    topo *c = topo_clone(t);
    if (c->nnodes == 1)
        return c;
    int keep_sw = c->nswitches / c->nnodes, keep_nic = c->nnics / c->nnodes;
    for (int i = keep_sw; i < c->nswitches; i++)
        free(c->switches[i].ranks);
    for (int i = keep_nic; i < c->nnics; i++)
        free(c->nics[i].ranks);
    c->nlinks /= c->nnodes;
    c->nswitches = keep_sw;
    c->nnics = keep_nic;
    c->nnodes = 1;
    c->nranks = c->ranks_per_node;
    if (c->priv) {
        index_free(c->priv);
        build_index(c);
    }
    TC_ASSERT(topo_sane(c));
    return c;
}

int topo_sane(const topo *t)
{
    if (!t || t->nranks != t->nnodes * t->ranks_per_node || t->nlinks < 0 ||
        t->nswitches < 0 || t->nnics < 0)
        return 0;
    for (int i = 0; i < t->nlinks; i++)
        if (t->links[i].src < 0 || t->links[i].src >= t->nranks || t->links[i].dst < 0 ||
            t->links[i].dst >= t->nranks || t->links[i].mult < 1)
            return 0;
    for (int j = 0; j < t->nswitches; j++)
        for (int i = 0; i < t->switches[j].nranks; i++)
            if (t->switches[j].ranks[i] < 0 || t->switches[j].ranks[i] >= t->nranks)
                return 0;
    for (int j = 0; j < t->nnics; j++)
        for (int i = 0; i < t->nics[j].nranks; i++)
            if (t->nics[j].ranks[i] < 0 || t->nics[j].ranks[i] >= t->nranks ||
                t->nics[j].node != topo_node_of(t, t->nics[j].ranks[i]))
                return 0;
    for (int r = 0; t->nic_of_rank && r < t->nranks; r++)
        if (t->nic_of_rank[r] < -1 || t->nic_of_rank[r] >= t->nnics)
            return 0;
    const struct topo_priv *pv = t->priv;
    if (pv && pv->adj_start)
        for (int r = 0; r < t->nranks; r++)
            for (int k = pv->adj_start[r]; k < pv->adj_start[r + 1]; k++)
                if (pv->adj_link[k] < 0 || pv->adj_link[k] >= t->nlinks ||
                    t->links[pv->adj_link[k]].src != r ||
                    t->links[pv->adj_link[k]].dst != pv->adj_dst[k])
                    return 0;
    return 1;
}
