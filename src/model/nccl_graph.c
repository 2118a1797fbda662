/* nccl_graph.c — NCCL's graph dump (NCCL_GRAPH_DUMP_FILE) read and checked
 * against a topology (contract and format in nccl_graph.h).
 *
 * Sources (file:line at NVIDIA/nccl 5067397, BSD-3-Clause; restated, not
 * copied): src/graph/search.cc:891-925 (a channel's nets and GPUs, dev read
 * base 16, the rank attribute preferred), 928-956 (a graph's attributes;
 * the channels listed), src/graph/xml.cc:1236-1243 (version 1 only),
 * src/include/graph.h:160-171 (patterns, graph ids). */
#include "nccl_graph.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../util/mem.h"
#include "topo_nccl_int.h"

#define LOCAL_ID_MASK 0x00ffffffffffffffLL  /* NCCL_TOPO_ID_LOCAL_ID_MASK, topo.h:89 */

typedef struct {
    const char *label;
    const topo *t;
    int R;          /* GPUs per node */
    int nics;       /* NICs per node */
    tc_err *err;
} gctx;

static int fail_at(gctx *c, xmlNodePtr at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(gctx *c, xmlNodePtr at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = topo_nccl_vfail(c->err, c->label, at, fmt, ap);
    va_end(ap);
    return rc;
}

static int is_elem(xmlNodePtr n)
{
    return n->type == XML_ELEMENT_NODE;
}

const char *nccl_graph_pattern_name(int p)
{
    switch (p) {
    case NCCL_PATTERN_BALANCED_TREE: return "BALANCED_TREE";
    case NCCL_PATTERN_SPLIT_TREE: return "SPLIT_TREE";
    case NCCL_PATTERN_TREE: return "TREE";
    case NCCL_PATTERN_RING: return "RING";
    case NCCL_PATTERN_NVLS: return "NVLS";
    case NCCL_PATTERN_COLLNET_DIRECT: return "COLLNET_DIRECT";
    default: return "?";
    }
}

/* An attribute's value (NULL if absent) into buf. */
static const char *attr(xmlNodePtr n, const char *name, char *buf, size_t cap)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v)
        return NULL;
    snprintf(buf, cap, "%s", (const char *)v);
    xmlFree(v);
    return buf;
}

/* A required integer attribute (decimal, or hex with "0x" when hex is
 * allowed).  0, or -1 with the message set. */
static int attr_int(gctx *c, xmlNodePtr n, const char *name, int hex, long long *v)
{
    char buf[128];
    const char *s = attr(n, name, buf, sizeof buf);
    if (!s)
        return fail_at(c, n, "no %s attribute", name), -1;
    int is_hex = hex && (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
    char *end;
    errno = 0;
    long long x = is_hex ? (long long)strtoull(s + 2, &end, 16) : strtoll(s, &end, 10);
    if (end == s + (is_hex ? 2 : 0) || *end || errno || x < 0)
        return fail_at(c, n, "%s=\"%s\" is not a non-negative integer", name, s), -1;
    *v = x;
    return 0;
}

static int attr_real(gctx *c, xmlNodePtr n, const char *name, double *v)
{
    char buf[128];
    const char *s = attr(n, name, buf, sizeof buf);
    if (!s)
        return fail_at(c, n, "no %s attribute", name), -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !(x >= 0))
        return fail_at(c, n, "%s=\"%s\" is not a non-negative number", name, s), -1;
    *v = x;
    return 0;
}

/* One <channel>: its GPUs (local index) into gpu[0..R), nets into net[2].
 * used_tree: 1 for a ring or tree graph (every GPU of the node once). */
static int read_channel(gctx *c, xmlNodePtr ch, int k, int whole, int *gpu, int *net)
{
    int ng = 0, nn = 0;
    int *seen = xcalloc((size_t)c->R, sizeof *seen);
    int rc = 0;
    net[0] = net[1] = -1;
    for (xmlNodePtr s = ch->children; s && !rc; s = s->next) {
        if (!is_elem(s))
            continue;
        const char *nm = (const char *)s->name;
        long long dev;
        if (!strcmp(nm, "net")) {
            if (attr_int(c, s, "dev", 1, &dev) < 0) {
                rc = -1;
                break;
            }
            long long local = dev & LOCAL_ID_MASK;
            if (nn == 2) {
                rc = fail_at(c, s, "channel %d names a third NIC; NCCL names the one a channel "
                             "enters by and the one it leaves by", k);
            } else if (c->nics == 0) {
                rc = fail_at(c, s, "dev=%lld: %s has no NIC", local, c->t->name);
            } else if (local >= c->nics) {
                rc = fail_at(c, s, "dev=%lld: a node of %s has %d NIC%s (dev 0..%d)", local,
                             c->t->name, c->nics, c->nics == 1 ? "" : "s", c->nics - 1);
            } else {
                net[nn++] = (int)local;
            }
        } else if (!strcmp(nm, "gpu")) {
            char buf[64];
            long long g;
            const char *what;
            if (attr(s, "rank", buf, sizeof buf)) {
                if (attr_int(c, s, "rank", 0, &g) < 0) {
                    rc = -1;
                    break;
                }
                what = "rank";
                if (g >= c->t->nranks) {
                    rc = fail_at(c, s, "rank=%lld: %s has %d ranks", g, c->t->name,
                                 c->t->nranks);
                    break;
                }
                if (g >= c->R) {
                    rc = fail_at(c, s, "rank=%lld is not on the first node of %s (ranks 0..%d); "
                                 "the graph must come from the node holding rank 0, ranks "
                                 "numbered node by node", g, c->t->name, c->R - 1);
                    break;
                }
            } else {
                if (attr_int(c, s, "dev", 1, &dev) < 0) {
                    rc = -1;
                    break;
                }
                what = "dev";
                g = dev & LOCAL_ID_MASK;
                if (g >= c->R) {
                    rc = fail_at(c, s, "dev=%lld: a node of %s has %d GPUs (dev 0..%d)", g,
                                 c->t->name, c->R, c->R - 1);
                    break;
                }
            }
            if (whole && ng >= c->R) {
                rc = fail_at(c, s, "channel %d lists more GPUs than a node of %s has (%d)", k,
                             c->t->name, c->R);
            } else if (whole && seen[g]) {
                rc = fail_at(c, s, "%s=%lld: channel %d lists GPU %lld twice; a ring or tree "
                             "channel visits every GPU of the node once", what, g, k, g);
            } else {
                seen[g] = 1;
                if (ng < c->R)
                    gpu[ng] = (int)g;
                ng++;
            }
        } else {
            rc = fail_at(c, s, "not an element of a <channel> (net or gpu)");
        }
    }
    if (!rc && nn == 1)
        rc = fail_at(c, ch, "channel %d names one NIC; NCCL names two (in, out) or none", k);
    if (!rc && whole && ng < c->R) {
        int miss = 0;
        while (miss < c->R && seen[miss])
            miss++;
        rc = fail_at(c, ch, "channel %d lists %d of the %d GPUs of a node of %s (GPU %d "
                     "missing); a ring or tree channel visits every GPU of the node once", k, ng,
                     c->R, c->t->name, miss);
    }
    free(seen);
    return rc ? -1 : 0;
}

/* Consecutive GPUs of a ring or tree channel must reach each other inside
 * the node (a link or a switch); a ring's last GPU reaches its first (one
 * node) or the next node's first GPU through their NICs (several). */
static int check_hops(gctx *c, xmlNodePtr ch, int k, int is_ring, const int *gpu)
{
    const topo *t = c->t;
    int R = c->R;
    for (int i = 0; i + 1 < R || (is_ring && i + 1 == R && (R > 1 || t->nnodes > 1)); i++) {
        int a = gpu[i], b = gpu[(i + 1) % R];
        int across = i + 1 == R && t->nnodes > 1;
        if (across)
            b += R;     /* the next node's first GPU */
        if (topo_route_of(t, a, b).kind != ROUTE_NONE)
            continue;
        if (across)
            fail_at(c, ch, "channel %d: its last GPU %d and the next node's first GPU %d have "
                    "no NIC in %s to join the nodes", k, a, gpu[0], t->name);
        else
            fail_at(c, ch, "channel %d: GPUs %d and %d follow each other in it, but %s has no "
                    "link or switch between them", k, a, b, t->name);
        return -1;
    }
    return 0;
}

static void set_free(nccl_graph_set *s)
{
    free(s->gpu);
    free(s->net);
    memset(s, 0, sizeof *s);
}

/* One <graph>: kept in g->ring / g->tree by id, checked either way. */
static int read_graph(gctx *c, xmlNodePtr gr, nccl_graph *g)
{
    long long id, pattern, nch, crossnic = 0;
    double si = 0, se = 0;
    if (attr_int(c, gr, "id", 0, &id) < 0 || attr_int(c, gr, "pattern", 0, &pattern) < 0 ||
        attr_int(c, gr, "nchannels", 0, &nch) < 0)
        return -1;
    char buf[32];
    if (attr(gr, "crossnic", buf, sizeof buf) && attr_int(c, gr, "crossnic", 0, &crossnic) < 0)
        return -1;
    if (pattern < NCCL_PATTERN_BALANCED_TREE || pattern > NCCL_PATTERN_COLLNET_DIRECT)
        return fail_at(c, gr, "pattern=\"%lld\": NCCL's patterns are 1 (BALANCED_TREE), 2 "
                       "(SPLIT_TREE), 3 (TREE), 4 (RING), 5 (NVLS), 6 (COLLNET_DIRECT)", pattern);
    int listed = 0;
    for (xmlNodePtr s = gr->children; s; s = s->next)
        if (is_elem(s)) {
            if (strcmp((const char *)s->name, "channel"))
                return fail_at(c, s, "not an element of a <graph> (channel)");
            listed++;
        }
    if (nch != listed)
        return fail_at(c, gr, "nchannels=\"%lld\", but %d <channel> element%s listed", nch,
                       listed, listed == 1 ? " is" : "s are");
    if (nch > 64)
        return fail_at(c, gr, "nchannels=\"%lld\": NCCL searches at most 64 channels "
                       "(MAXCHANNELS)", nch);
    int is_ring = id == 0, is_tree = id == 1;
    if (is_ring && pattern != NCCL_PATTERN_RING)
        return fail_at(c, gr, "pattern=\"%lld\": graph 0 is the ring graph, pattern 4 (RING)",
                       pattern);
    if (is_tree && pattern > NCCL_PATTERN_TREE)
        return fail_at(c, gr, "pattern=\"%lld\": graph 1 is the tree graph, pattern 1, 2 or 3 "
                       "(BALANCED_TREE, SPLIT_TREE, TREE)", pattern);
    nccl_graph_set *set = is_ring ? &g->ring : is_tree ? &g->tree : NULL;
    if (set && set->line)
        return fail_at(c, gr, "id=\"%lld\": a second graph %lld (the first at line %d)", id, id,
                       set->line);
    if (set && nch > 0 && (attr_real(c, gr, "speedintra", &si) < 0 ||
                           attr_real(c, gr, "speedinter", &se) < 0))
        return -1;
    int R = c->R;
    int *gpu = xcalloc((size_t)(nch ? nch : 1) * R, sizeof *gpu);
    int *net = xcalloc((size_t)(nch ? nch : 1) * 2, sizeof *net);
    int k = 0;
    for (xmlNodePtr s = gr->children; s; s = s->next) {
        if (!is_elem(s))
            continue;
        if (read_channel(c, s, k, set != NULL, gpu + (size_t)k * R, net + (size_t)k * 2) < 0 ||
            (set && check_hops(c, s, k, is_ring, gpu + (size_t)k * R) < 0)) {
            free(gpu);
            free(net);
            return -1;
        }
        k++;
    }
    if (!set) {
        g->others += nch > 0;
        free(gpu);
        free(net);
        return 0;
    }
    set->line = (int)xmlGetLineNo(gr);
    set->present = nch > 0;
    set->pattern = (int)pattern;
    set->nchannels = (int)nch;
    set->crossnic = (int)crossnic;
    set->speed_intra = si;
    set->speed_inter = se;
    set->gpu = gpu;
    set->net = net;
    return 0;
}

/* The graph of a parsed document (freed here). */
static nccl_graph *from_doc(xmlDocPtr doc, const char *label, const topo *t, tc_err *err)
{
    gctx c = {label, t, t->ranks_per_node, 0, err};
    for (int x = 0; x < t->nnics; x++)
        c.nics += t->nics[x].node == 0;
    nccl_graph *g = xcalloc(1, sizeof *g);
    g->label = xstrdup(label);
    g->ranks_per_node = c.R;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    int rc = 0;
    long long version;
    if (!root || strcmp((const char *)root->name, "graphs")) {
        rc = tc_err_set(err, TC_INPUT, "%s:%ld: %s: the root element is not <graphs> (an NCCL "
                        "graph file, NCCL_GRAPH_DUMP_FILE)", label, root ? xmlGetLineNo(root) : 0L,
                        root ? (const char *)root->name : "xml");
    } else if (attr_int(&c, root, "version", 0, &version) < 0) {
        rc = -1;
    } else if (version != 1) {
        rc = fail_at(&c, root, "version=\"%lld\": NCCL reads version 1 only", version);
    } else {
        for (xmlNodePtr s = root->children; s && !rc; s = s->next) {
            if (!is_elem(s))
                continue;
            if (strcmp((const char *)s->name, "graph"))
                rc = fail_at(&c, s, "not an element of <graphs> (graph)");
            else
                rc = read_graph(&c, s, g);
        }
        if (!rc && !g->ring.present)
            rc = tc_err_set(err, TC_INPUT, "%s:%ld: graphs: no ring graph (<graph id=\"0\"> "
                            "with channels): nothing to build NCCL's channels from", label,
                            xmlGetLineNo(root));
    }
    xmlFreeDoc(doc);
    if (rc) {
        nccl_graph_free(g);
        return NULL;
    }
    return g;
}

nccl_graph *nccl_graph_parse(const char *text, size_t len, const char *label, const topo *t,
                             tc_err *err)
{
    xmlDocPtr doc = topo_nccl_xml_parse(text, len, label, err);
    return doc ? from_doc(doc, label, t, err) : NULL;
}

nccl_graph *nccl_graph_load(const char *path, const topo *t, tc_err *err)
{
    xmlDocPtr doc = topo_nccl_xml_load(path, err);
    return doc ? from_doc(doc, path, t, err) : NULL;
}

void nccl_graph_free(nccl_graph *g)
{
    if (!g)
        return;
    set_free(&g->ring);
    set_free(&g->tree);
    free(g->label);
    free(g);
}
