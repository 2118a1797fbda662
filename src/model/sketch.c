/* sketch.c — read, validate and answer questions about communication
 * sketches (see sketch.h; the format is documented in sketches/README.md).
 *
 * TACCL's keys, read with TACCL's meaning (taccl/cli/common.py
 * parse_and_get_topo, taccl/routing.py):
 *   nnodes                      required integer >= 1
 *   intranode_sketch            optional, default {"strategy": "none"}
 *     strategy                  "switch" | "none" | "maxmin" | "minmax"
 *     switches                  "switch" only: [[local ranks], ...], each >= 2
 *                               distinct ranks; two switches are disjoint or
 *                               the same set (TACCL asserts it)
 *     switch_hyperedge_strategy "switch" only: one "uc-min"|"uc-max" per switch
 *   internode_sketch            only when nnodes > 1; absent = no restriction
 *     strategy                  "relay"
 *     internode_conn            {"<sender>": [receivers]} | "fully-connected"
 *                               | "direct-map" (local i -> local i): who may
 *                               send to whom on OTHER nodes, every node pair
 *     gpus_to_sender_rev_map    optional {"<sender>": [origins]}: the chunks of
 *                               each origin leave the node only through the
 *                               senders listing it; every rank must be listed
 *     enforce_ordering          optional bool (needs the rev map): a sender's
 *                               own chunks cross before those it relays
 *   symmetry_offsets            optional [[offset, size], ...], global ranks,
 *                               1 <= offset < size
 *   hyperparameters             optional {"input_chunkup": 1..64}
 * Ours: collective (any coll_parse spelling), input_size (bytes of the larger
 * per-rank buffer, a positive integer or a size_parse string), topology
 * (informational path), solver {backend "glpk"|"cbc", time_limit_s: seconds
 * or {"route": s, "contig": s}, mip_gap: 0 <= g < 1}, name, description,
 * source, and notes (a string or strings) in every object.  Unknown or
 * repeated keys are errors, so a typo never passes.
 *
 * TACCL's own limits we do not keep: a multi-node sketch without
 * internode_sketch is accepted (no restriction), and the senders of an
 * explicit internode_conn may have different numbers of receivers (TACCL
 * needs equal counts only to split one NIC's beta evenly; our topology
 * models the NICs).
 *
 * Errors are TC_INPUT "LABEL:LINE: KEY: what".  The line is found by walking
 * the raw text along the key's path, so a key that occurs in many objects is
 * placed correctly; sketch_check() keeps the text for that reason.  The
 * walker, the error context, the UTF-8 check, the syntax-error excerpt and
 * the file reader are src/util/jsonin's, shared with the topology loader. */
#include "sketch.h"
#include "../util/mem.h"

#include "../util/jsonin.h"
#include "../util/size.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SK_MAX_RANK 65535           /* local ranks fit the topology's limit */
#define SK_MAX_CHUNKUP 64
#define SK_MAX_NODES 65536
#define SK_MAX_FILE (16L << 20)
#define SK_MAX_NAME 200
#define SK_MAX_TIME_S 1e7
#define SK_MAX_SIZE (1LL << 53)
#define SK_MAX_GROUP (1 << 20)

/* How sketch files are read, and their message conventions. */
static const jsonin_doc SKETCH_DOC = {
    "sketch", SK_MAX_FILE,
    JSONIN_KEYS_QUOTED | JSONIN_GOT_VALUE | JSONIN_AFTER_BOM | JSONIN_NEAR_AHEAD |
        JSONIN_READ_TERSE};

struct sketch_priv {
    char *text;                 /* the source text, for locating keys */
    long long *conn_keys;       /* sorted sender << 16 | receiver (SK_CONN_MAP) */
    long long *via_keys;        /* sorted origin << 16 | sender */
};

/* ---------------------------------------------------------------- memory */

static void *xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        tc_oom();
    return p;
}


/* ---------------------------------------------------------- field readers */

/* An optional string of 1..maxlen bytes without control characters. */
static int read_string(jsonin_ctx *c, const cJSON *obj, const char *key, size_t maxlen,
                       const char **out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    int rc = TC_OK;
    *out = NULL;
    if (!it)
        return TC_OK;
    jsonin_push_key(c, key, 0);
    if (!cJSON_IsString(it) || !it->valuestring[0]) {
        rc = jsonin_fail(c, "expected a non-empty string, got %s", jsonin_got(c, it, g, sizeof g));
    } else if (maxlen && strlen(it->valuestring) > maxlen) {
        rc = jsonin_fail(c, "expected at most %zu bytes, got %zu", maxlen, strlen(it->valuestring));
    } else if ((rc = jsonin_check_control(c, it->valuestring, "")) == TC_OK) {
        *out = it->valuestring;
    }
    jsonin_pop(c);
    return rc;
}

/* Optional "notes": a string or an array of strings. */
static int read_notes(jsonin_ctx *c, const cJSON *obj)
{
    const cJSON *notes;
    return jsonin_read_notes(c, obj, 0, &notes);
}

/* An optional number in (lo, hi) — lo excluded when `open_lo`, else included;
 * hi excluded.  *out untouched when absent. */
static int read_number(jsonin_ctx *c, const cJSON *obj, const char *key, double lo, int open_lo,
                       double hi, const char *want, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    char g[64];
    if (!it)
        return TC_OK;
    jsonin_push_key(c, key, 0);
    int rc = TC_OK;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
        (open_lo ? !(it->valuedouble > lo) : !(it->valuedouble >= lo)) ||
        !(it->valuedouble < hi))
        rc = jsonin_fail(c, "expected %s, got %s", want, jsonin_got(c, it, g, sizeof g));
    else
        *out = it->valuedouble;
    jsonin_pop(c);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The array at the top of the path: at least `min` distinct local ranks.
 * `what` names the list in messages ("switch", "sender's list"). */
static int read_rank_list(jsonin_ctx *c, const cJSON *arr, int min, const char *what, int **out,
                          int *n)
{
    char g[64];
    *out = NULL;
    *n = 0;
    int size = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (!cJSON_IsArray(arr) || size < min)
        return jsonin_fail(c, "expected an array of at least %d local rank%s, got %s", min,
                           min == 1 ? "" : "s",
                           cJSON_IsArray(arr) ? "[]" : jsonin_got(c, arr, g, sizeof g));
    int *r = xalloc((size_t)size * sizeof *r);
    int i = 0, rc = TC_OK;
    for (const cJSON *e = arr->child; e && rc == TC_OK; e = e->next, i++) {
        jsonin_push_index(c, i);
        rc = jsonin_read_rank(c, e, SK_MAX_RANK, &r[i]);
        jsonin_pop(c);
    }
    if (rc == TC_OK) {
        int *sorted = xalloc((size_t)size * sizeof *sorted);
        memcpy(sorted, r, (size_t)size * sizeof *r);
        qsort(sorted, (size_t)size, sizeof *sorted, cmp_int);
        for (int k = 1; k < size && rc == TC_OK; k++)
            if (sorted[k] == sorted[k - 1]) {
                int first = -1;
                for (int j = 0; j < size; j++)
                    if (r[j] == sorted[k]) {
                        if (first >= 0) {
                            jsonin_push_index(c, j);
                            rc = jsonin_fail(c, "local rank %d listed twice in this %s", r[j],
                                             what);
                            jsonin_pop(c);
                            break;
                        }
                        first = j;
                    }
            }
        free(sorted);
    }
    if (rc != TC_OK) {
        free(r);
        return rc;
    }
    *out = r;
    *n = size;
    return TC_OK;
}

/* A map key naming a local rank: decimal digits, no leading zero. */
static int rank_key(const char *k, int *out)
{
    size_t n = strlen(k);
    if (n == 0 || n > 5 || (n > 1 && k[0] == '0') || strspn(k, "0123456789") != n)
        return -1;
    int v = atoi(k);
    if (v > SK_MAX_RANK)
        return -1;
    *out = v;
    return 0;
}

/* ------------------------------------------------------------ the parser */

static const char *const top_keys[] = {
    "name", "description", "source", "notes", "topology", "collective", "input_size",
    "nnodes", "intranode_sketch", "internode_sketch", "symmetry_offsets",
    "hyperparameters", "solver"};
static const char *const intra_keys[] = {"strategy", "switches", "switch_hyperedge_strategy",
                                         "notes"};
static const char *const inter_keys[] = {"strategy", "internode_conn", "gpus_to_sender_rev_map",
                                         "enforce_ordering", "notes"};
static const char *const hyper_keys[] = {"input_chunkup", "notes"};
static const char *const solver_keys[] = {"backend", "time_limit_s", "mip_gap", "notes"};
static const char *const time_keys[] = {"route", "contig", "notes"};
#define NKEYS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const intra_names[] = {"none", "switch", "minmax", "maxmin"};
static const char *const uc_names[] = {"uc-min", "uc-max"};
static const char *const conn_names[] = {"none", "map", "fully-connected", "direct-map"};
static const char *const backend_names[] = {"glpk", "cbc"};

const char *sketch_intra_name(sketch_intra k)
{
    return (unsigned)k < 4 ? intra_names[k] : "unknown";
}

const char *sketch_uc_name(sketch_uc k)
{
    return (unsigned)k < 2 ? uc_names[k] : "unknown";
}

const char *sketch_conn_name(sketch_conn k)
{
    return (unsigned)k < 4 ? conn_names[k] : "unknown";
}

const char *sketch_backend_name(sketch_backend k)
{
    return (unsigned)k < 2 ? backend_names[k] : "unknown";
}

/* The required "strategy" of obj, one of names[0..n-1] (exact spelling). */
static int read_strategy(jsonin_ctx *c, const cJSON *obj, const char *const *names, int n,
                         const char *list, int *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "strategy");
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, "strategy", 0);
    if (!it) {
        rc = jsonin_fail(c, "missing: expected %s", list);
    } else {
        int k = -1;
        for (int i = 0; i < n && cJSON_IsString(it); i++)
            if (strcmp(names[i], it->valuestring) == 0)
                k = i;
        if (k < 0)
            rc = jsonin_fail(c, "unknown strategy %s (expected %s)", jsonin_got(c, it, g, sizeof g),
                             list);
        else
            *out = k;
    }
    jsonin_pop(c);
    return rc;
}

/* Two switches are disjoint or the same set; the same set needs the same uc. */
static int check_switch_overlap(jsonin_ctx *c, const sketch *s, int i, int j)
{
    const sketch_switch *a = &s->switches[i], *b = &s->switches[j];
    int common = -1, ncommon = 0;
    for (int x = 0; x < a->nranks; x++)
        for (int y = 0; y < b->nranks; y++)
            if (a->ranks[x] == b->ranks[y]) {
                ncommon++;
                if (common < 0)
                    common = a->ranks[x];
            }
    if (ncommon == 0)
        return TC_OK;
    int rc = TC_OK;
    if (ncommon != a->nranks || ncommon != b->nranks) {
        jsonin_push_key(c, "switches", 0);
        jsonin_push_index(c, j);
        rc = jsonin_fail(c, "shares local rank %d with switches[%d] but is not the same set: "
                            "switches must be disjoint or identical", common, i);
        jsonin_pop(c);
        jsonin_pop(c);
    } else if (a->uc != b->uc) {
        jsonin_push_key(c, "switch_hyperedge_strategy", 0);
        jsonin_push_index(c, j);
        rc = jsonin_fail(c, "switches[%d] is the same switch as switches[%d], which is %s", j, i,
                         sketch_uc_name(a->uc));
        jsonin_pop(c);
        jsonin_pop(c);
    }
    return rc;
}

static int parse_switches(jsonin_ctx *c, const cJSON *intra, sketch *s)
{
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(intra, "switches");
    const cJSON *uc = cJSON_GetObjectItemCaseSensitive(intra, "switch_hyperedge_strategy");
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, "switches", 0);
    if (!sw)
        rc = jsonin_fail(c, "missing: strategy \"switch\" needs a list of switches "
                            "(each a list of local ranks)");
    else if (!cJSON_IsArray(sw) || cJSON_GetArraySize(sw) < 1)
        rc = jsonin_fail(c, "expected a non-empty array of switches (each a list of local ranks), "
                            "got %s", cJSON_IsArray(sw) ? "[]" : jsonin_got(c, sw, g, sizeof g));
    if (rc == TC_OK) {
        int n = cJSON_GetArraySize(sw), i = 0;
        s->switches = xalloc((size_t)n * sizeof *s->switches);
        for (const cJSON *e = sw->child; e && rc == TC_OK; e = e->next, i++) {
            jsonin_push_index(c, i);
            rc = read_rank_list(c, e, 2, "switch", &s->switches[i].ranks,
                                &s->switches[i].nranks);
            jsonin_pop(c);
            if (rc == TC_OK)
                s->nswitches++;
        }
    }
    jsonin_pop(c);
    if (rc != TC_OK)
        return rc;
    jsonin_push_key(c, "switch_hyperedge_strategy", 0);
    if (!uc)
        rc = jsonin_fail(c, "missing: give one of \"uc-min\", \"uc-max\" per switch");
    else if (!cJSON_IsArray(uc))
        rc = jsonin_fail(c, "expected an array of \"uc-min\" | \"uc-max\", got %s",
                         jsonin_got(c, uc, g, sizeof g));
    else if (cJSON_GetArraySize(uc) != s->nswitches)
        rc = jsonin_fail(c, "has %d entr%s but switches has %d: give one strategy per switch",
                         cJSON_GetArraySize(uc), cJSON_GetArraySize(uc) == 1 ? "y" : "ies",
                         s->nswitches);
    int i = 0;
    for (const cJSON *e = uc ? uc->child : NULL; e && rc == TC_OK; e = e->next, i++) {
        jsonin_push_index(c, i);
        if (cJSON_IsString(e) && strcmp(e->valuestring, "uc-min") == 0)
            s->switches[i].uc = SK_UC_MIN;
        else if (cJSON_IsString(e) && strcmp(e->valuestring, "uc-max") == 0)
            s->switches[i].uc = SK_UC_MAX;
        else
            rc = jsonin_fail(c, "unknown switch hyperedge strategy %s (expected \"uc-min\" or "
                                "\"uc-max\")", jsonin_got(c, e, g, sizeof g));
        jsonin_pop(c);
    }
    jsonin_pop(c);
    for (int a = 0; a < s->nswitches && rc == TC_OK; a++)
        for (int b = a + 1; b < s->nswitches && rc == TC_OK; b++)
            rc = check_switch_overlap(c, s, a, b);
    return rc;
}

static int parse_intranode(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *intra = cJSON_GetObjectItemCaseSensitive(root, "intranode_sketch");
    int rc, k = 0;
    if (!intra)
        return TC_OK;
    jsonin_push_key(c, "intranode_sketch", 0);
    if ((rc = jsonin_want_object(c, intra)) ||
        (rc = jsonin_check_keys(c, intra, intra_keys, NKEYS(intra_keys))) ||
        (rc = read_notes(c, intra)) ||
        (rc = read_strategy(c, intra, intra_names, 4,
                            "\"switch\", \"none\", \"maxmin\" or \"minmax\"", &k)))
        goto out;
    s->intra = (sketch_intra)k;
    if (s->intra == SK_INTRA_SWITCH) {
        rc = parse_switches(c, intra, s);
    } else {
        const char *extra[] = {"switches", "switch_hyperedge_strategy"};
        for (int i = 0; i < 2 && rc == TC_OK; i++)
            if (cJSON_GetObjectItemCaseSensitive(intra, extra[i])) {
                jsonin_push_key(c, extra[i], 0);
                rc = jsonin_fail(c, "only allowed with strategy \"switch\" (this one is \"%s\")",
                                 sketch_intra_name(s->intra));
                jsonin_pop(c);
            }
    }
out:
    jsonin_pop(c);
    return rc;
}

/* An object {"<local rank>": [local ranks]}; calls add(s, key, value, at)
 * for each list element.  `what` names the lists. */
typedef void (*pair_fn)(sketch *s, int key, int value, int at);

static int parse_rank_map(jsonin_ctx *c, const cJSON *map, const char *what, sketch *s, pair_fn add)
{
    char g[64];
    if (cJSON_GetArraySize(map) < 1)
        return jsonin_fail(c, "expected at least one \"<local rank>\": [local ranks] entry, "
                              "got {}");
    for (const cJSON *it = map->child; it; it = it->next) {
        int nth = jsonin_nth_key(map, it), key = -1;
        jsonin_push_map_key(c, it->string, nth);
        int rc = TC_OK;
        if (rank_key(it->string, &key) != 0)
            rc = jsonin_fail(c, "expected a local rank as the key (a decimal integer like \"3\", "
                                "at most %d)", SK_MAX_RANK);
        else if (nth > 0)
            rc = jsonin_fail(c, "local rank %d given twice", key);
        int *list = NULL, n = 0;
        if (rc == TC_OK && !cJSON_IsArray(it))
            rc = jsonin_fail(c, "expected an array of local ranks, got %s",
                             jsonin_got(c, it, g, sizeof g));
        if (rc == TC_OK)
            rc = read_rank_list(c, it, 1, what, &list, &n);
        for (int i = 0; i < n && rc == TC_OK; i++)
            add(s, key, list[i], i);
        free(list);
        if (rc != TC_OK)
            return rc;
        jsonin_pop(c);
    }
    return TC_OK;
}

static void add_conn(sketch *s, int sender, int receiver, int at)
{
    s->conn_pairs[s->nconn++] = (sketch_conn_pair){sender, receiver, at};
}

static void add_via(sketch *s, int sender, int origin, int at)
{
    s->via[s->nvia++] = (sketch_via){sender, origin, at};
}

/* Total list elements of a rank map (for allocation). */
static int map_total(const cJSON *map)
{
    int n = 0;
    for (const cJSON *it = map->child; it; it = it->next)
        n += cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
    return n;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* First index of keys[0..n-1] (sorted) that is >= v. */
static int lower_bound(const long long *keys, int n, long long v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (keys[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int has_key(const long long *keys, int n, long long v)
{
    int i = lower_bound(keys, n, v);
    return i < n && keys[i] == v;
}

/* Does the explicit map give `sender` any receiver? */
static int map_has_sender(const sketch *s, int sender)
{
    int i = lower_bound(s->priv->conn_keys, s->nconn, (long long)sender << 16);
    return i < s->nconn && (s->priv->conn_keys[i] >> 16) == sender;
}

static int parse_conn(jsonin_ctx *c, const cJSON *inter, sketch *s)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(inter, "internode_conn");
    char g[64];
    int rc = TC_OK;
    jsonin_push_key(c, "internode_conn", 0);
    if (!it) {
        rc = jsonin_fail(c, "missing: expected {\"<sender>\": [receivers]}, \"fully-connected\" "
                            "or \"direct-map\"");
    } else if (cJSON_IsString(it)) {
        if (strcmp(it->valuestring, "fully-connected") == 0)
            s->conn = SK_CONN_FULL;
        else if (strcmp(it->valuestring, "direct-map") == 0)
            s->conn = SK_CONN_DIRECT;
        else
            rc = jsonin_fail(c, "unknown connection strategy %s (expected \"fully-connected\", "
                                "\"direct-map\" or {\"<sender>\": [receivers]})",
                             jsonin_got(c, it, g, sizeof g));
    } else if (cJSON_IsObject(it)) {
        s->conn = SK_CONN_MAP;
        s->conn_pairs = xalloc((size_t)map_total(it) * sizeof *s->conn_pairs);
        rc = parse_rank_map(c, it, "sender's receiver list", s, add_conn);
        if (rc == TC_OK) {
            long long *k = s->priv->conn_keys = xalloc((size_t)s->nconn * sizeof *k);
            for (int i = 0; i < s->nconn; i++)
                k[i] = (long long)s->conn_pairs[i].sender << 16 | s->conn_pairs[i].receiver;
            qsort(k, (size_t)s->nconn, sizeof *k, cmp_ll);
        }
    } else {
        rc = jsonin_fail(c, "expected {\"<sender>\": [receivers]}, \"fully-connected\" or "
                            "\"direct-map\", got %s", jsonin_got(c, it, g, sizeof g));
    }
    jsonin_pop(c);
    return rc;
}

static int parse_via(jsonin_ctx *c, const cJSON *inter, sketch *s)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(inter, "gpus_to_sender_rev_map");
    char g[64];
    int rc = TC_OK;
    if (!it)
        return TC_OK;
    jsonin_push_key(c, "gpus_to_sender_rev_map", 0);
    if (!cJSON_IsObject(it)) {
        rc = jsonin_fail(c, "expected {\"<sender>\": [local ranks whose chunks leave through it]}, "
                            "got %s", jsonin_got(c, it, g, sizeof g));
    } else {
        s->has_via = 1;
        s->via = xalloc((size_t)map_total(it) * sizeof *s->via);
        rc = parse_rank_map(c, it, "sender's list", s, add_via);
    }
    /* With an explicit internode_conn a sender must have receivers. */
    for (int i = 0; i < s->nvia && rc == TC_OK && s->conn == SK_CONN_MAP; i++)
        if (!map_has_sender(s, s->via[i].sender)) {
            char key[16];
            snprintf(key, sizeof key, "%d", s->via[i].sender);
            jsonin_push_map_key(c, key, 0);
            rc = jsonin_fail(c, "local rank %d sends to no other node in internode_conn, so no "
                                "chunk can leave through it", s->via[i].sender);
            jsonin_pop(c);
        }
    if (rc == TC_OK) {
        long long *k = s->priv->via_keys = xalloc((size_t)s->nvia * sizeof *k);
        for (int i = 0; i < s->nvia; i++)
            k[i] = (long long)s->via[i].origin << 16 | s->via[i].sender;
        qsort(k, (size_t)s->nvia, sizeof *k, cmp_ll);
    }
    jsonin_pop(c);
    return rc;
}

static int parse_internode(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *inter = cJSON_GetObjectItemCaseSensitive(root, "internode_sketch");
    int rc, k = 0, eo = 0;
    if (!inter)
        return TC_OK;
    jsonin_push_key(c, "internode_sketch", 0);
    if ((rc = jsonin_want_object(c, inter)) ||
        (rc = jsonin_check_keys(c, inter, inter_keys, NKEYS(inter_keys))) ||
        (rc = read_notes(c, inter)))
        goto out;
    if (s->nnodes == 1) {
        rc = jsonin_fail(c, "a sketch of one node (nnodes 1) has no inter-node traffic: remove "
                            "internode_sketch");
        goto out;
    }
    static const char *const relay[] = {"relay"};
    if ((rc = read_strategy(c, inter, relay, 1, "\"relay\"", &k)) || (rc = parse_conn(c, inter, s)) ||
        (rc = parse_via(c, inter, s)))
        goto out;
    s->has_internode = 1;
    if ((rc = jsonin_read_bool(c, inter, "enforce_ordering", 0, &eo)) || !eo)
        goto out;
    if (!s->has_via) {
        jsonin_push_key(c, "enforce_ordering", 0);
        rc = jsonin_fail(c, "needs gpus_to_sender_rev_map (it orders a sender's own chunks "
                            "before the ones it relays for the ranks listed there)");
        jsonin_pop(c);
    } else {
        s->enforce_ordering = 1;
    }
out:
    jsonin_pop(c);
    return rc;
}

static int parse_symmetry(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *sym = cJSON_GetObjectItemCaseSensitive(root, "symmetry_offsets");
    char g[64];
    int rc = TC_OK;
    if (!sym)
        return TC_OK;
    jsonin_push_key(c, "symmetry_offsets", 0);
    if (!cJSON_IsArray(sym)) {
        rc = jsonin_fail(c, "expected an array of [offset, group_size] pairs, got %s",
                         jsonin_got(c, sym, g, sizeof g));
    } else {
        s->sym = xalloc((size_t)cJSON_GetArraySize(sym) * sizeof *s->sym);
        int i = 0;
        for (const cJSON *e = sym->child; e && rc == TC_OK; e = e->next, i++) {
            jsonin_push_index(c, i);
            if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) {
                rc = jsonin_fail(c, "expected [offset, group_size], got %s",
                                 jsonin_got(c, e, g, sizeof g));
            } else {
                const cJSON *off = e->child, *size = off->next;
                jsonin_push_index(c, 1);
                if (!jsonin_is_int_in(size, 2, SK_MAX_GROUP))
                    rc = jsonin_fail(c, "expected a group size (an integer in 2..%d), got %s",
                                     SK_MAX_GROUP, jsonin_got(c, size, g, sizeof g));
                jsonin_pop(c);
                jsonin_push_index(c, 0);
                if (rc == TC_OK && !jsonin_is_int_in(off, 1, size->valuedouble - 1))
                    rc = jsonin_fail(c,
                                     "expected an offset in 1..%d (a rotation within groups of %d;"
                                     " 0 or a multiple of the group size maps every rank to "
                                     "itself), got %s",
                                     (int)size->valuedouble - 1, (int)size->valuedouble,
                                     jsonin_got(c, off, g, sizeof g));
                jsonin_pop(c);
                if (rc == TC_OK)
                    s->sym[s->nsym++] =
                        (sketch_sym){(int)off->valuedouble, (int)size->valuedouble};
            }
            jsonin_pop(c);
        }
    }
    jsonin_pop(c);
    return rc;
}

static int parse_hyper(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "hyperparameters");
    char g[64];
    int rc;
    if (!h)
        return TC_OK;
    jsonin_push_key(c, "hyperparameters", 0);
    if (!(rc = jsonin_want_object(c, h)) &&
        !(rc = jsonin_check_keys(c, h, hyper_keys, NKEYS(hyper_keys))) &&
        !(rc = read_notes(c, h))) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(h, "input_chunkup");
        jsonin_push_key(c, "input_chunkup", 0);
        if (k && !jsonin_is_int_in(k, 1, SK_MAX_CHUNKUP))
            rc = jsonin_fail(c, "expected an integer in 1..%d (pieces each chunk is cut "
                                "into), got %s%s", SK_MAX_CHUNKUP, jsonin_got(c, k, g, sizeof g),
                             cJSON_IsNumber(k) && k->valuedouble > SK_MAX_CHUNKUP ? " (too large)"
                                                                                  : "");
        else if (k)
            s->chunkup = (int)k->valuedouble;
        jsonin_pop(c);
    }
    jsonin_pop(c);
    return rc;
}

static int parse_solver(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "solver");
    char g[64];
    int rc;
    if (!sv)
        return TC_OK;
    jsonin_push_key(c, "solver", 0);
    if ((rc = jsonin_want_object(c, sv)) ||
        (rc = jsonin_check_keys(c, sv, solver_keys, NKEYS(solver_keys))) ||
        (rc = read_notes(c, sv)))
        goto out;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(sv, "backend");
    if (b) {
        jsonin_push_key(c, "backend", 0);
        if (cJSON_IsString(b) && strcasecmp(b->valuestring, "glpk") == 0)
            s->backend = SK_SOLVER_GLPK;
        else if (cJSON_IsString(b) && strcasecmp(b->valuestring, "cbc") == 0)
            s->backend = SK_SOLVER_CBC;
        else
            rc = jsonin_fail(c, "unknown backend %s (expected \"glpk\" or \"cbc\")",
                             jsonin_got(c, b, g, sizeof g));
        jsonin_pop(c);
        if (rc)
            goto out;
    }
    const char *want_t = "a time limit in seconds (a number > 0 and < 1e7)";
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(sv, "time_limit_s");
    if (tl && cJSON_IsObject(tl)) {
        jsonin_push_key(c, "time_limit_s", 0);
        if (!(rc = jsonin_check_keys(c, tl, time_keys, NKEYS(time_keys))) &&
            !(rc = read_notes(c, tl)) &&
            !(rc = read_number(c, tl, "route", 0, 1, SK_MAX_TIME_S, want_t, &s->route_time_s)))
            rc = read_number(c, tl, "contig", 0, 1, SK_MAX_TIME_S, want_t, &s->contig_time_s);
        jsonin_pop(c);
    } else if (tl) {
        double v = 0;
        const char *w = "a time limit in seconds (a number > 0 and < 1e7) or {\"route\": s, "
                        "\"contig\": s}";
        if (!(rc = read_number(c, sv, "time_limit_s", 0, 1, SK_MAX_TIME_S, w, &v)))
            s->route_time_s = s->contig_time_s = v;
    }
    if (rc == TC_OK)
        rc = read_number(c, sv, "mip_gap", 0, 0, 1, "a relative gap 0 <= g < 1", &s->mip_gap);
out:
    jsonin_pop(c);
    return rc;
}

static int parse_size(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "input_size");
    char g[64];
    long long v = 0;
    if (!it)
        return TC_OK;
    int ok =
        (jsonin_is_int_in(it, 1, (double)SK_MAX_SIZE) && (v = (long long)it->valuedouble, 1)) ||
        (cJSON_IsString(it) && size_parse(it->valuestring, &v) == 0 && v <= SK_MAX_SIZE);
    if (!ok) {
        jsonin_push_key(c, "input_size", 0);
        char hint[128] = "";
        if (cJSON_IsString(it))
            size_hint(it->valuestring, hint, sizeof hint);
        if ((cJSON_IsString(it) && size_parse(it->valuestring, &v) == 0) ||
            (jsonin_is_int_in(it, 1, 1e300) && it->valuedouble > (double)SK_MAX_SIZE) ||
            (cJSON_IsString(it) && strstr(hint, "2^62")))
            snprintf(hint, sizeof hint, "; the largest input_size is 2^53 bytes (8 PiB)");
        int rc = jsonin_fail(c, "expected a size in bytes (a positive integer, or a string like "
                                "\"1MB\" or \"64K\"; K, M, G are powers of 1024), got %s%s",
                             jsonin_got(c, it, g, sizeof g), hint);
        jsonin_pop(c);
        return rc;
    }
    s->input_size = v;
    return TC_OK;
}

/* "dir/ndv2-x2-sk-1.json" -> "ndv2-x2-sk-1". */
static char *base_name(const char *label)
{
    const char *b = strrchr(label, '/');
    b = b ? b + 1 : label;
    size_t n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".json") == 0)
        n -= 5;
    char *r = xalloc(n + 1);
    memcpy(r, b, n);
    return r;
}

static int parse_top(jsonin_ctx *c, const cJSON *root, sketch *s)
{
    char g[64];
    int rc;
    if (!cJSON_IsObject(root))
        return jsonin_fail(c, "expected a JSON object describing a sketch, got %s",
                           jsonin_got(c, root, g, sizeof g));
    if ((rc = jsonin_check_keys(c, root, top_keys, NKEYS(top_keys))) || (rc = read_notes(c, root)))
        return rc;
    const char *name, *topology, *text;
    if ((rc = read_string(c, root, "name", SK_MAX_NAME, &name)) ||
        (rc = read_string(c, root, "topology", 4096, &topology)) ||
        (rc = read_string(c, root, "description", 0, &text)) ||
        (rc = read_string(c, root, "source", 0, &text)))
        return rc;
    s->name = name ? xstrdup(name) : base_name(c->label);
    s->topology = xstrdup(topology ? topology : "");

    const cJSON *nn = cJSON_GetObjectItemCaseSensitive(root, "nnodes");
    jsonin_push_key(c, "nnodes", 0);
    if (!nn)
        rc = jsonin_fail(c, "missing: expected the number of nodes (an integer >= 1)");
    else if (!jsonin_is_int_in(nn, 1, SK_MAX_NODES))
        rc = jsonin_fail(c, "expected an integer in 1..%d, got %s", SK_MAX_NODES,
                         jsonin_got(c, nn, g, sizeof g));
    else
        s->nnodes = (int)nn->valuedouble;
    jsonin_pop(c);
    if (rc)
        return rc;

    const cJSON *co = cJSON_GetObjectItemCaseSensitive(root, "collective");
    if (co) {
        jsonin_push_key(c, "collective", 0);
        if (!cJSON_IsString(co) || coll_parse(co->valuestring, &s->coll) != 0)
            rc = jsonin_fail(c,
                             "unknown collective %s (expected allgather, alltoall, reducescatter "
                             "or allreduce)",
                             jsonin_got(c, co, g, sizeof g));
        else
            s->has_coll = 1;
        jsonin_pop(c);
        if (rc)
            return rc;
    }
    if ((rc = parse_size(c, root, s)) || (rc = parse_intranode(c, root, s)) ||
        (rc = parse_internode(c, root, s)) || (rc = parse_symmetry(c, root, s)) ||
        (rc = parse_hyper(c, root, s)) || (rc = parse_solver(c, root, s)))
        return rc;
    return TC_OK;
}

/* ------------------------------------------------------ text and files */

void sketch_free(sketch *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nswitches; i++)
        free(s->switches[i].ranks);
    free(s->switches);
    free(s->conn_pairs);
    free(s->via);
    free(s->sym);
    free(s->path);
    free(s->name);
    free(s->topology);
    if (s->priv) {
        free(s->priv->text);
        free(s->priv->conn_keys);
        free(s->priv->via_keys);
        free(s->priv);
    }
    free(s);
}

sketch *sketch_parse(const char *text, const char *label, tc_err *err)
{
    if (!label)
        label = "sketch";
    const char *body;
    cJSON *root = jsonin_parse(text, label, &SKETCH_DOC, &body, err);
    if (!root)
        return NULL;
    sketch *s = xalloc(sizeof *s);
    s->priv = xalloc(sizeof *s->priv);
    s->priv->text = xstrdup(body);
    s->path = xstrdup(label);
    s->intra = SK_INTRA_NONE;
    s->conn = SK_CONN_NONE;
    s->chunkup = 1;
    s->backend = SK_SOLVER_GLPK;
    s->mip_gap = -1;
    jsonin_ctx c;
    jsonin_ctx_init(&c, label, body, SKETCH_DOC.flags, err);
    int rc = parse_top(&c, root, s);
    cJSON_Delete(root);
    if (rc != TC_OK) {
        sketch_free(s);
        return NULL;
    }
    return s;
}

sketch *sketch_load(const char *path, tc_err *err)
{
    char *buf = jsonin_read_file(path, &SKETCH_DOC, err);
    if (!buf)
        return NULL;
    sketch *s = sketch_parse(buf, path, err);
    free(buf);
    return s;
}

int sketch_fail_at(const sketch *s, const char *key, tc_err *err, const char *fmt, ...)
{
    char what[512], path[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s", key ? key : "");
    jsonin_ctx c;
    jsonin_ctx_init(&c, s->path, s->priv ? s->priv->text : NULL, SKETCH_DOC.flags, err);
    int depth = 0;
    for (char *k = path, *dot; *k; k = dot + 1) {
        dot = strchr(k, '.');
        if (dot)
            *dot = '\0';
        jsonin_push_key(&c, k, 0);
        depth++;
        if (!dot)
            break;
    }
    int rc = jsonin_fail(&c, "%s", what);
    while (depth-- > 0)
        jsonin_pop(&c);
    return rc;
}

/* ------------------------------------------------------------ accessors */

int sketch_internode_ok(const sketch *s, int rpn, int sender, int receiver)
{
    if (!s || sender < 0 || receiver < 0 || sender >= rpn || receiver >= rpn)
        return 0;
    switch (s->conn) {
    case SK_CONN_NONE:
    case SK_CONN_FULL:
        return 1;
    case SK_CONN_DIRECT:
        return sender == receiver;
    case SK_CONN_MAP:
        return has_key(s->priv->conn_keys, s->nconn, (long long)sender << 16 | receiver);
    }
    return 0;
}

void sketch_internode_matrix(const sketch *s, int rpn, unsigned char *m)
{
    for (int a = 0; a < rpn; a++)
        for (int b = 0; b < rpn; b++)
            m[(size_t)a * (size_t)rpn + (size_t)b] = (unsigned char)sketch_internode_ok(s, rpn, a, b);
}

int sketch_leaves_via(const sketch *s, int rpn, int origin, int sender)
{
    if (!s || origin < 0 || sender < 0 || origin >= rpn || sender >= rpn)
        return 0;
    if (s->has_via)
        return has_key(s->priv->via_keys, s->nvia, (long long)origin << 16 | sender);
    return s->conn == SK_CONN_MAP ? map_has_sender(s, sender) : 1;
}

int sketch_senders_of(const sketch *s, int rpn, int origin, int *out)
{
    int n = 0;
    for (int k = 0; k < rpn; k++)
        if (sketch_leaves_via(s, rpn, origin, k))
            out[n++] = k;
    return n;
}

int sketch_sym_rank(const sketch *s, int rank, int which)
{
    if (!s || which < 0 || which >= s->nsym || rank < 0)
        return -1;
    int size = s->sym[which].size, off = s->sym[which].offset;
    return (rank % size + off) % size + (rank / size) * size;
}

long long sketch_chunk_grain(int dma_bytes)
{
    long long a = dma_bytes > 0 ? dma_bytes : 1, b = 4;
    while (b) {     /* lcm(a, 4) = a * 4 / gcd(a, 4) */
        long long r = a % b;
        a = b;
        b = r;
    }
    return (dma_bytes > 0 ? dma_bytes : 1) * 4 / a;
}

int sketch_chunk_bytes(const sketch *s, int nranks, int dma_bytes, long long bytes,
                       long long *chunk_bytes, tc_err *err)
{
    long long chunks = (long long)nranks * s->chunkup;
    long long unit = chunks * sketch_chunk_grain(dma_bytes);
    if (nranks < 1 || bytes < 1)
        return tc_err_set(err, TC_INPUT, "%lld bytes over %d ranks: nothing to move", bytes,
                          nranks);
    if (bytes % unit != 0) {
        char dma[96] = ", each a whole number of 4-byte elements";
        if (dma_bytes > 0)
            snprintf(dma, sizeof dma, ", each a whole number of %d-byte DMA segments and of "
                     "4-byte elements", dma_bytes);
        return tc_err_set(err, TC_INPUT, "%lld bytes is not a multiple of %lld: %s over %d "
                          "ranks with input_chunkup %d moves %lld equal chunks%s", bytes, unit,
                          s->has_coll ? coll_name(s->coll) : "each collective", nranks,
                          s->chunkup, chunks, dma);
    }
    if (chunk_bytes)
        *chunk_bytes = bytes / chunks;
    return TC_OK;
}

/* ---------------------------------------------------------------- check */

typedef struct {
    jsonin_ctx c;
    const sketch *s;
    const topo *t;
    int rpn;
} chk;

/* "ranks 0..3" style list for messages: "[0, 1, 2, 3]", shortened. */
static const char *rank_list_str(const int *r, int n, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && used + 16 < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "", r[i]);
    snprintf(buf + used, len - used, "%s]", used + 16 >= len ? ", ..." : "");
    return buf;
}

static int check_local(chk *k, int r)
{
    if (r < k->rpn)
        return TC_OK;
    return jsonin_fail(&k->c,
                       "local rank %d does not exist: topology %s has %d ranks per node (0..%d)", r,
                       k->t->name, k->rpn, k->rpn - 1);
}

/* Sketch switches: ranks in range, and all ports of one topology switch. */
static int check_switches(chk *k)
{
    const sketch *s = k->s;
    const topo *t = k->t;
    int rc = TC_OK;
    jsonin_push_key(&k->c, "intranode_sketch", 0);
    jsonin_push_key(&k->c, "switches", 0);
    for (int i = 0; i < s->nswitches && rc == TC_OK; i++) {
        const sketch_switch *sw = &s->switches[i];
        jsonin_push_index(&k->c, i);
        for (int j = 0; j < sw->nranks && rc == TC_OK; j++) {
            jsonin_push_index(&k->c, j);
            rc = check_local(k, sw->ranks[j]);
            jsonin_pop(&k->c);
        }
        int found = 0;
        for (int q = 0; q < t->nswitches && rc == TC_OK && !found; q++) {
            const topo_switch *ts = &t->switches[q];
            int all = ts->nranks > 0 && ts->ranks[0] < k->rpn;  /* node 0's switches */
            for (int j = 0; j < sw->nranks && all; j++) {
                int in = 0;
                for (int m = 0; m < ts->nranks && !in; m++)
                    in = ts->ranks[m] == sw->ranks[j];
                all = in;
            }
            found = all;
        }
        if (rc == TC_OK && !found) {
            char b[128];
            rc = jsonin_fail(&k->c, "local ranks %s are not all ports of one switch of topology %s "
                                    "(it has %d switch%s per node)",
                             rank_list_str(sw->ranks, sw->nranks, b, sizeof b), t->name,
                             t->nswitches / t->nnodes, t->nswitches / t->nnodes == 1 ? "" : "es");
        }
        jsonin_pop(&k->c);
    }
    jsonin_pop(&k->c);
    jsonin_pop(&k->c);
    return rc;
}

static int has_nic(const chk *k, int local)
{
    return k->t->nic_of_rank && k->t->nic_of_rank[local] >= 0;
}

static int need_nic(chk *k, int local, const char *role)
{
    if (has_nic(k, local))
        return TC_OK;
    return jsonin_fail(&k->c, "local rank %d has no NIC in topology %s, so it cannot %s", local,
                              k->t->name, role);
}

/* internode_conn and gpus_to_sender_rev_map against the topology. */
static int check_internode(chk *k)
{
    const sketch *s = k->s;
    int rc = TC_OK;
    char key[16];
    jsonin_push_key(&k->c, "internode_sketch", 0);
    jsonin_push_key(&k->c, "internode_conn", 0);
    if (s->conn == SK_CONN_FULL || s->conn == SK_CONN_DIRECT) {
        for (int r = 0; r < k->rpn && rc == TC_OK; r++)
            if (!has_nic(k, r))
                rc = jsonin_fail(&k->c,
                                 "\"%s\" includes local rank %d, which has no NIC in topology %s",
                                 sketch_conn_name(s->conn), r, k->t->name);
    }
    for (int i = 0; i < s->nconn && rc == TC_OK; i++) {
        const sketch_conn_pair *p = &s->conn_pairs[i];
        snprintf(key, sizeof key, "%d", p->sender);
        jsonin_push_map_key(&k->c, key, 0);
        if (!(rc = check_local(k, p->sender)) && !(rc = need_nic(k, p->sender, "send to another node"))) {
            jsonin_push_index(&k->c, p->at);
            if (!(rc = check_local(k, p->receiver)))
                rc = need_nic(k, p->receiver, "receive from another node");
            jsonin_pop(&k->c);
        }
        jsonin_pop(&k->c);
    }
    jsonin_pop(&k->c);
    if (s->has_via && rc == TC_OK) {
        jsonin_push_key(&k->c, "gpus_to_sender_rev_map", 0);
        for (int i = 0; i < s->nvia && rc == TC_OK; i++) {
            snprintf(key, sizeof key, "%d", s->via[i].sender);
            jsonin_push_map_key(&k->c, key, 0);
            if (!(rc = check_local(k, s->via[i].sender))) {
                jsonin_push_index(&k->c, s->via[i].at);
                rc = check_local(k, s->via[i].origin);
                jsonin_pop(&k->c);
            }
            jsonin_pop(&k->c);
        }
        for (int r = 0; r < k->rpn && rc == TC_OK; r++) {
            int i = lower_bound(s->priv->via_keys, s->nvia, (long long)r << 16);
            if (i >= s->nvia || (s->priv->via_keys[i] >> 16) != r)
                rc = jsonin_fail(&k->c, "local rank %d is in no sender's list: every rank's chunks "
                                        "must leave the node through some sender", r);
        }
        jsonin_pop(&k->c);
    }
    jsonin_pop(&k->c);
    return rc;
}

static int near_eq(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static int same_route(const topo *t, const topo_route *a, const topo_route *b)
{
    if (a->kind != b->kind)
        return 0;
    if (a->kind == ROUTE_NONE || a->kind == ROUTE_SELF)
        return 1;
    if (a->kind == ROUTE_LINK && t->links[a->link].mult != t->links[b->link].mult)
        return 0;
    return near_eq(a->alpha_us, b->alpha_us) && near_eq(a->bw_gbps, b->bw_gbps);
}

static const char *route_str(const topo *t, const topo_route *r, char *buf, size_t n)
{
    static const char *const kinds[] = {"no route", "itself", "link", "switch", "NICs"};
    if (r->kind == ROUTE_NONE || r->kind == ROUTE_SELF)
        return kinds[r->kind];
    snprintf(buf, n, "%s %g us, %g GB/s", kinds[r->kind], r->alpha_us, r->bw_gbps);
    if (r->kind == ROUTE_LINK && t->links[r->link].mult > 1)
        snprintf(buf + strlen(buf), n - strlen(buf), " x%d", t->links[r->link].mult);
    return buf;
}

/* The symmetry map is a permutation of all ranks (each group rotated), and
 * TACCL ties the arrival times of every chunk at EVERY rank to those of its
 * image, so the permutation must map the whole machine and the sketch onto
 * themselves.  Each part is checked on its own elements (links, switch
 * pairs, NICs, allowed pairs, rev-map entries): a permutation that maps a
 * finite set into itself maps it onto itself, so the complement (no link,
 * not allowed, ...) is preserved too. */
typedef struct {
    chk *k;
    int which;
    char what[96];
} symck;

static int sym_of(const symck *y, int r)
{
    return sketch_sym_rank(y->k->s, r, y->which);
}

/* Node blocks map onto node blocks. */
static int sym_nodes(symck *y)
{
    const topo *t = y->k->t;
    int rpn = y->k->rpn;
    for (int a = 0; a < t->nranks; a++) {
        int first = a / rpn * rpn;
        if (sym_of(y, a) / rpn != sym_of(y, first) / rpn)
            return jsonin_fail(&y->k->c, "%s: ranks %d and %d are on one node but their images %d "
                                         "and %d are on different nodes", y->what, first, a,
                               sym_of(y, first), sym_of(y, a));
    }
    return TC_OK;
}

static int sym_route(symck *y, int a, int b)
{
    const topo *t = y->k->t;
    int sa = sym_of(y, a), sb = sym_of(y, b);
    topo_route ra = topo_route_of(t, a, b), rb = topo_route_of(t, sa, sb);
    if (same_route(t, &ra, &rb))
        return TC_OK;
    char x[96], z[96];
    return jsonin_fail(&y->k->c, "%s of topology %s: %d->%d (%s) maps to %d->%d (%s)", y->what,
                       t->name, a, b, route_str(t, &ra, x, sizeof x), sa, sb,
                       route_str(t, &rb, z, sizeof z));
}

/* Links and switch pairs keep their figures; NICs keep figures and sharing. */
static int sym_topology(symck *y)
{
    const topo *t = y->k->t;
    int rc = TC_OK;
    for (int i = 0; i < t->nlinks && rc == TC_OK; i++)
        rc = sym_route(y, t->links[i].src, t->links[i].dst);
    for (int i = 0; i < t->nswitches && rc == TC_OK; i++)
        for (int p = 0; p < t->switches[i].nranks && rc == TC_OK; p++)
            for (int q = 0; q < t->switches[i].nranks && rc == TC_OK; q++)
                if (p != q)
                    rc = sym_route(y, t->switches[i].ranks[p], t->switches[i].ranks[q]);
    if (t->nnodes < 2 || !t->nic_of_rank)
        return rc;
    for (int a = 0; a < t->nranks && rc == TC_OK; a++) {
        int sa = sym_of(y, a), na = t->nic_of_rank[a], ma = t->nic_of_rank[sa];
        if ((na < 0) != (ma < 0) ||
            (na >= 0 && (!near_eq(t->nics[na].alpha_us, t->nics[ma].alpha_us) ||
                         !near_eq(t->nics[na].bw_gbps, t->nics[ma].bw_gbps) ||
                         t->nics[na].nranks != t->nics[ma].nranks)))
            rc = jsonin_fail(&y->k->c,
                             "%s of topology %s: the NIC of rank %d differs from the NIC of "
                             "its image %d",
                             y->what, t->name, a, sa);
    }
    for (int i = 0; i < t->nnics && rc == TC_OK; i++) {
        const topo_nic *nic = &t->nics[i];
        for (int p = 1; p < nic->nranks && rc == TC_OK; p++) {
            int a = nic->ranks[0], b = nic->ranks[p];
            if (t->nic_of_rank[sym_of(y, a)] != t->nic_of_rank[sym_of(y, b)])
                rc = jsonin_fail(&y->k->c,
                                 "%s of topology %s: %d and %d share a NIC but %d and %d do "
                                 "not",
                                 y->what, t->name, a, b, sym_of(y, a), sym_of(y, b));
        }
    }
    return rc;
}

/* Is local set r[0..n) exactly a sketch switch of strategy uc? */
static int is_sketch_switch(const sketch *s, const int *r, int n, sketch_uc uc)
{
    for (int i = 0; i < s->nswitches; i++) {
        const sketch_switch *w = &s->switches[i];
        if (w->nranks != n || w->uc != uc)
            continue;
        int all = 1;
        for (int p = 0; p < n && all; p++) {
            int in = 0;
            for (int q = 0; q < n && !in; q++)
                in = w->ranks[q] == r[p];
            all = in;
        }
        if (all)
            return 1;
    }
    return 0;
}

/* Sketch switches, allowed inter-node pairs and the rev map are preserved. */
static int sym_sketch(symck *y)
{
    const sketch *s = y->k->s;
    const topo *t = y->k->t;
    int rpn = y->k->rpn, rc = TC_OK;
    for (int i = 0; i < s->nswitches && rc == TC_OK; i++) {
        const sketch_switch *w = &s->switches[i];
        int *img = xalloc((size_t)w->nranks * sizeof *img);
        for (int nd = 0; nd < t->nnodes && rc == TC_OK; nd++) {
            for (int p = 0; p < w->nranks; p++)
                img[p] = sym_of(y, nd * rpn + w->ranks[p]) % rpn;
            if (!is_sketch_switch(s, img, w->nranks, w->uc)) {
                char b[128];
                rc = jsonin_fail(&y->k->c,
                                 "%s of this sketch's switches: switches[%d] on node %d maps "
                                 "to local ranks %s, which are not a %s switch",
                                 y->what, i, nd, rank_list_str(img, w->nranks, b, sizeof b),
                                 sketch_uc_name(w->uc));
            }
        }
        free(img);
    }
    if (s->conn == SK_CONN_MAP || s->conn == SK_CONN_DIRECT) {
        int npairs = s->conn == SK_CONN_MAP ? s->nconn : rpn;
        for (int na = 0; na < t->nnodes && rc == TC_OK; na++)
            for (int nb = 0; nb < t->nnodes && rc == TC_OK; nb++)
                for (int i = 0; i < npairs && na != nb && rc == TC_OK; i++) {
                    int la = s->conn == SK_CONN_MAP ? s->conn_pairs[i].sender : i;
                    int lb = s->conn == SK_CONN_MAP ? s->conn_pairs[i].receiver : i;
                    int a = na * rpn + la, b = nb * rpn + lb;
                    int sa = sym_of(y, a), sb = sym_of(y, b);
                    if (!sketch_internode_ok(s, rpn, sa % rpn, sb % rpn))
                        rc = jsonin_fail(&y->k->c, "%s of this sketch's internode_conn: %d->%d "
                                                   "is allowed but %d->%d is not",
                                         y->what, a, b, sa, sb);
                }
    }
    for (int nd = 0; nd < t->nnodes && s->has_via && rc == TC_OK; nd++)
        for (int i = 0; i < s->nvia && rc == TC_OK; i++) {
            int o = nd * rpn + s->via[i].origin, snd = nd * rpn + s->via[i].sender;
            int so = sym_of(y, o), ss = sym_of(y, snd);
            if (!sketch_leaves_via(s, rpn, so % rpn, ss % rpn))
                rc = jsonin_fail(&y->k->c,
                                 "%s of this sketch's gpus_to_sender_rev_map: chunks of %d "
                                 "leave through %d but chunks of %d do not leave through %d",
                                 y->what, o, snd, so, ss);
        }
    return rc;
}

/* Each symmetry: groups divide the ranks, and the rank permutation maps
 * the topology and the sketch onto themselves. */
static int check_symmetry(chk *k)
{
    const sketch *s = k->s;
    int n = k->t->nranks, rc = TC_OK;
    jsonin_push_key(&k->c, "symmetry_offsets", 0);
    for (int i = 0; i < s->nsym && rc == TC_OK; i++) {
        int size = s->sym[i].size;
        jsonin_push_index(&k->c, i);
        if (size > n || n % size != 0) {
            jsonin_push_index(&k->c, 1);
            rc = jsonin_fail(&k->c, "group size %d does not divide the %d ranks of topology %s, so "
                                    "rank %d would map outside its group", size, n, k->t->name,
                                    size > n ? n - 1 : n - n % size);
            jsonin_pop(&k->c);
        } else {
            symck y = {.k = k, .which = i};
            snprintf(y.what, sizeof y.what, "rotation by %d within groups of %d is not a "
                     "symmetry", s->sym[i].offset, size);
            if (!(rc = sym_nodes(&y)) && !(rc = sym_topology(&y)))
                rc = sym_sketch(&y);
        }
        jsonin_pop(&k->c);
    }
    jsonin_pop(&k->c);
    return rc;
}

int sketch_check(const sketch *s, const topo *t, tc_err *err)
{
    if (!s || !t)
        return tc_err_set(err, TC_INPUT, "sketch check: no %s given", s ? "topology" : "sketch");
    chk k = {.s = s, .t = t, .rpn = t->ranks_per_node};
    jsonin_ctx_init(&k.c, s->path, s->priv ? s->priv->text : NULL, SKETCH_DOC.flags, err);
    int rc = TC_OK;
    if (s->nnodes != t->nnodes) {
        jsonin_push_key(&k.c, "nnodes", 0);
        rc = jsonin_fail(&k.c, "is %d but topology %s (%s) has %d node%s", s->nnodes, t->name,
                         t->path, t->nnodes, t->nnodes == 1 ? "" : "s");
        jsonin_pop(&k.c);
        return rc;
    }
    if (s->nswitches && (rc = check_switches(&k)))
        return rc;
    if (s->has_internode)
        rc = check_internode(&k);
    if (rc == TC_OK)
        rc = check_symmetry(&k);
    if (rc == TC_OK && (long long)t->nranks * s->chunkup > (1LL << 22)) {
        jsonin_push_key(&k.c, "hyperparameters", 0);
        jsonin_push_key(&k.c, "input_chunkup", 0);
        rc = jsonin_fail(&k.c, "%d x %d ranks makes %lld chunks per loop (the limit is %d)",
                         s->chunkup, t->nranks, (long long)t->nranks * s->chunkup, 1 << 22);
        jsonin_pop(&k.c);
        jsonin_pop(&k.c);
    }
    if (rc == TC_OK && s->input_size > 0) {
        tc_err e;
        tc_err_clear(&e);
        if (sketch_chunk_bytes(s, t->nranks, t->dma_bytes, s->input_size, NULL, &e) != TC_OK) {
            jsonin_push_key(&k.c, "input_size", 0);
            rc = jsonin_fail(&k.c, "%s", e.msg);
            jsonin_pop(&k.c);
        }
    }
    return rc;
}
