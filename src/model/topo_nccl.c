/* topo_nccl.c — an NCCL/RCCL topology dump read into our topology JSON
 * (contract in topo_nccl.h, rules and sources in docs/topo-import.md).
 *
 * Why this shape: libxml2 builds the tree (with line numbers for every
 * message), one walk collects the GPUs and NICs with their place in the
 * PCI tree, and the figures are derived afterwards, each by one small rule
 * function that restates NCCL's (or RCCL's) rule and names it.  The JSON is
 * built with cJSON and checked by topo_parse() before it is returned, so
 * what taccl-topo writes is always a topology our loader accepts.
 *
 * Sources cited below (file:line@commit):
 *   NCCL  = github.com/NVIDIA/nccl  at 5067397 (BSD-3-Clause)
 *   RCCL  = github.com/ROCm/rccl    at 0cbce2a (BSD-3-Clause)
 * No code of theirs is copied; their figures are restated. */
#include "topo_nccl.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../util/mem.h"
#include "../util/tcassert.h"
#include "../util/units.h"
#include "topo.h"
#include "topo_nccl_int.h"

#define NCCL_AT "@NVIDIA/nccl 5067397"
#define RCCL_AT "@ROCm/rccl 0cbce2a"

/* ------------------------------------------------------------------ rules */

/* NVLink GB/s per link by sm: NCCL src/graph/topo.h:19-24 (SMxx_NVLINK_BW)
 * chosen by ncclTopoNVLinkBw, topo.h:274-281: sm >= 100 40.1, >= 90 20.6,
 * == 86 12.0, >= 80 20.0, >= 70 20.0, >= 60 18.0, else the sm 80 figure. */
double topo_nccl_nvlink_bw(int sm)
{
    return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 80 ? 20.0
         : sm >= 70 ? 20.0 : sm >= 60 ? 18.0 : 20.0;
}

/* NCCL's intra-node speed arrays of sm 90 and sm 100, fastest first
 * (search.cc:1057, 1063). */
static const double SM90_SPEEDS[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0,
                                     3.0};
static const double SM100_SPEEDS[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0,
                                      20.0, 19.0, 18.0};

int topo_nccl_nvls_graph(int sm, int ngpus, double gpu_gbps, double *bw_intra, double *bw_inter)
{
    *bw_intra = *bw_inter = 0;
    if (sm < 90 || ngpus < 2 || !(gpu_gbps > 0))
        return 0;
    const double *sp = sm >= 100 ? SM100_SPEEDS : SM90_SPEEDS;
    int ns = sm >= 100 ? (int)(sizeof SM100_SPEEDS / sizeof *sp)
                       : (int)(sizeof SM90_SPEEDS / sizeof *sp);
    /* every GPU carries each channel once each way, its own channel's
     * twice (ncclTopoSearchTryNvls) */
    int i = 0;
    while (i < ns && (ngpus + 1) * sp[i] > gpu_gbps + 1e-9)
        i++;
    if (i == ns)
        return 0;
    *bw_intra = sp[i];
    /* on one node no inter-node path constrains bwInter: pass 2 raises it
     * while below twice bwIntra and a faster speed is left */
    while (i > 0 && sp[i] < 2 * *bw_intra)
        i--;
    *bw_inter = sp[i];
    return ngpus;
}

/* The inter-node speed arrays of sm 90 and sm 100, fastest first
 * (search.cc:1058-1059, 1064-1065). */
static const double SM90_SPEEDS_INTER[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                           15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
static const double SM100_SPEEDS_INTER[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                            30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                            6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

/* Before sm 90 (search.cc:1052-1053). */
static const double SPEEDS_INTER[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                      7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};

int topo_nccl_inter_speeds(int sm, const double **speeds)
{
    if (sm >= 100) {
        *speeds = SM100_SPEEDS_INTER;
        return (int)(sizeof SM100_SPEEDS_INTER / sizeof *SM100_SPEEDS_INTER);
    }
    if (sm >= 90) {
        *speeds = SM90_SPEEDS_INTER;
        return (int)(sizeof SM90_SPEEDS_INTER / sizeof *SM90_SPEEDS_INTER);
    }
    *speeds = SPEEDS_INTER;
    return (int)(sizeof SPEEDS_INTER / sizeof *SPEEDS_INTER);
}

int topo_nccl_nvls_graph_net(int sm, int ngpus, double gpu_gbps, double net_gbps,
                             double *bw_intra, double *bw_inter)
{
    *bw_intra = *bw_inter = 0;
    if (sm < 90 || ngpus < 2 || !(gpu_gbps > 0) || !(net_gbps > 0))
        return 0;
    const double *sp = sm >= 100 ? SM100_SPEEDS_INTER : SM90_SPEEDS_INTER;
    int ns = sm >= 100 ? (int)(sizeof SM100_SPEEDS_INTER / sizeof *sp)
                       : (int)(sizeof SM90_SPEEDS_INTER / sizeof *sp);
    /* pass 1: one speed for bwIntra and bwInter, the fastest not above
     * the GPU-NIC path (search.cc:1166-1171), lowered until a NIC carries
     * it and every GPU's NVLinks its channels, each once and the head's
     * twice (search.cc:1247-1251, 410-440) */
    int i = 0;
    while (i < ns && (sp[i] > net_gbps + 1e-9 || (ngpus + 1) * sp[i] > gpu_gbps + 1e-9))
        i++;
    if (i == ns)
        return 0;
    *bw_intra = sp[i];
    /* pass 2: bwInter raised while below twice bwIntra and a NIC still
     * carries the faster speed (search.cc:1274-1277, 736) */
    while (i > 0 && sp[i] < 2 * *bw_intra && sp[i - 1] <= net_gbps + 1e-9)
        i--;
    *bw_inter = sp[i];
    return 1;
}

double topo_nccl_nvls_eff(int sm)
{
    return sm >= 100 ? 0.74 : sm >= 90 ? 0.85 : 0.0;
}

/* RCCL src/misc/archinfo.cc:35-52 (convertGcnArchToGcnArchName): the old
 * numeric gcn values 906, 908, 910, 940, 941, 942 name gfx906, gfx908,
 * gfx90a, gfx940, gfx941, gfx942. */
const char *topo_nccl_gcn_name(const char *gcn)
{
    static const char *const map[][2] = {{"906", "gfx906"}, {"908", "gfx908"},
        {"910", "gfx90a"}, {"940", "gfx940"}, {"941", "gfx941"}, {"942", "gfx942"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(gcn, map[i][0])) return map[i][1];
    return gcn;
}

/* xGMI GB/s per link by gcn: RCCL src/graph/topo.h:31-33 (VEGA 24,
 * MI200 36, GFX94X 48) chosen by ncclTopoXGMISpeed, topo.h:258-265:
 * gfx90a 36, gfx94* 48, anything else 24. */
double topo_nccl_xgmi_bw(const char *gcn)
{
    const char *g = topo_nccl_gcn_name(gcn);
    if (!strncmp(g, "gfx90a", 6)) return 36.0;
    if (!strncmp(g, "gfx94", 5)) return 48.0;
    return 24.0;
}

/* PCI: NCCL src/graph/topo.cc:545-557 (kvDictPciGen: per-lane speed in
 * 100 Mb/s, 2.5 GT/s 15 ... 64 GT/s 480, unknown 60) and topo.cc:651-657
 * (width 0 counts as 16; GB/s = width x speed / 80). */
int topo_nccl_pci_bw(const char *speed, int width, double *gbps)
{
    static const struct { const char *s; int v; } gen[] = {
        {"2.5 GT/s", 15}, {"5 GT/s", 30}, {"8 GT/s", 60}, {"16 GT/s", 120},
        {"32 GT/s", 240}, {"2.5 GT/s PCIe", 15}, {"5.0 GT/s PCIe", 30},
        {"8.0 GT/s PCIe", 60}, {"16.0 GT/s PCIe", 120}, {"32.0 GT/s PCIe", 240},
        {"64.0 GT/s PCIe", 480}};
    int v = 60, known = 0;
    for (size_t i = 0; speed && i < sizeof gen / sizeof gen[0]; i++)
        if (!strcmp(speed, gen[i].s)) { v = gen[i].v; known = 1; break; }
    if (width == 0) width = 16;
    *gbps = width * v / 80.0;
    return known ? 0 : -1;
}

/* NIC: NCCL src/graph/topo.cc:416-418: speed is Mb/s; <= 0 (some NICs say
 * -1) counts as 10000; GB/s = speed / 8000. */
double topo_nccl_net_bw(long mbps)
{
    return (mbps <= 0 ? 10000 : mbps) / 8000.0;
}

/* Ring-step hardware latencies (us), LL / LL128 / Simple.
 * NCCL src/graph/tuning.cc:158-172 (hwLatencies, Ring row of NVLINK, PCI,
 * NET); RCCL src/graph/tuning.cc:75-81 (tuning_model_0, its default, Ring
 * row; RCCL counts xGMI as its NVLINK class). */
static const double NCCL_LAT[3][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
static const double RCCL_LAT[3][3] = {{0.8, 2.2, 3.6}, {2.2, 2.2, 5.7}, {9.5, 19.8, 15.1}};

double topo_nccl_latency(topo_nccl_hw hw, topo_nccl_proto p, int amd)
{
    TC_ASSERT(hw >= 0 && hw <= 2 && p >= 0 && p <= 2);
    return amd ? RCCL_LAT[hw][p] : NCCL_LAT[hw][p];
}

/* NCCL src/graph/tuning.cc:149-151 at 5067397 (ncclTunerConstantsDefaults,
 * baseLatencies, Ring row): LL 6.6, LL128 14, Simple 8.4 us. */
double topo_nccl_base_latency(topo_nccl_proto p)
{
    static const double RING_BASE[3] = {6.6, 14.0, 8.4};
    TC_ASSERT(p >= 0 && p <= 2);
    return RING_BASE[p];
}

double topo_nccl_nvls_latency(int several_nodes)
{
    return TOPO_NCCL_NVLS_HWLAT_NVLINK + (several_nodes ? TOPO_NCCL_NVLS_HWLAT_NET : 0);
}

static const char *const PROTO_NAME[3] = {"LL", "LL128", "Simple"};
static const char *const HW_NAME[3] = {"NVLINK", "PCI", "NET"};

/* A hop's alpha as imported, by hardware class: the figures the bundled
 * machines assume (TE-CCL's NVLink alpha, teccl/topologies/ndv2.py, for
 * NVLink, xGMI and PCI; its InfiniBand alpha, teccl/topologies/dgx2.py,
 * for the network), so that an imported machine and its bundled twin time
 * alike.  NCCL's per-step latency is not the hop's: the imported topology
 * says "runtime_latency", which adds it (model/cost.h). */
static const double HOP_ALPHA_US[3] = {0.7, 0.7, 2.6};

/* "alpha: assumed 0.7 us ...; NCCL hwLat[NVLINK][Ring][Simple] 3.4 us (file:lines@commit)
 * is the runtime's latency" */
static const char *lat_source(char *buf, size_t n, topo_nccl_hw hw, topo_nccl_proto p, int amd)
{
    snprintf(buf, n, "alpha: assumed %g us, the bundled machines' figure (TE-CCL's %s alpha); "
             "%s hwLat[%s][Ring][%s] %g us (%s) is the runtime's per-step latency "
             "(runtime_latency), not the hop's", HOP_ALPHA_US[hw],
             hw == TOPO_NCCL_HW_NET ? "InfiniBand" : "NVLink", amd ? "RCCL" : "NCCL", HW_NAME[hw],
             PROTO_NAME[p], topo_nccl_latency(hw, p, amd),
             amd ? "src/graph/tuning.cc:75-81" RCCL_AT : "src/graph/tuning.cc:158-172" NCCL_AT);
    return buf;
}

/* ------------------------------------------------------------ GPU models */

/* What --gpu names and what a dump's sm/gcn implies for local copy/reduce:
 * the HBM (or GDDR) peak of the part, from its vendor datasheet. */
typedef struct {
    const char *opt;        /* --gpu name, or NULL (sm/gcn only) */
    int sm;                 /* NVIDIA: compute capability x10; 0 AMD */
    const char *gcn;        /* AMD: normal gcn name; NULL NVIDIA */
    const char *part;
    double mem_gbps;
    const char *mem_src;
} gpu_model;

static const gpu_model MODELS[] = {
    {NULL, 60, NULL, "P100", 732, "NVIDIA Tesla P100 datasheet: 732 GB/s HBM2"},
    {"v100", 70, NULL, "V100", 900, "NVIDIA V100 datasheet: 900 GB/s HBM2"},
    {"a100", 80, NULL, "A100 40GB", 1555, "NVIDIA A100 datasheet: 1,555 GB/s (40GB)"},
    {NULL, 86, NULL, "A40", 696, "NVIDIA A40 datasheet: 696 GB/s GDDR6"},
    {NULL, 89, NULL, "L40S", 864, "NVIDIA L40S datasheet: 864 GB/s GDDR6"},
    {"h100", 90, NULL, "H100 SXM5", 3350, "NVIDIA H100 datasheet: 3.35 TB/s (SXM5)"},
    {"b200", 100, NULL, "B200", 8000, "NVIDIA DGX B200 datasheet: 8 TB/s per GPU"},
    {NULL, 0, "gfx906", "MI50/MI60", 1024, "AMD Instinct MI50 datasheet: 1 TB/s HBM2"},
    {NULL, 0, "gfx908", "MI100", 1228.8, "AMD Instinct MI100 datasheet: 1.2288 TB/s HBM2"},
    {"mi250", 0, "gfx90a", "MI250X", 3276.8,
     "AMD Instinct MI250X datasheet: 3.2768 TB/s HBM2e (per OAM module of two GCDs)"},
    {"mi300x", 0, "gfx942", "MI300X", 5300, "AMD Instinct MI300X datasheet: 5.3 TB/s HBM3"},
};
#define NMODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

/* The model for sm (the highest entry not above it) or gcn (exact name,
 * gfx94x as gfx942). */
static const gpu_model *model_of(int sm, const char *gcn)
{
    const gpu_model *best = NULL;
    for (int i = 0; i < NMODELS; i++) {
        const gpu_model *m = &MODELS[i];
        if (gcn) {
            if (m->gcn && (!strcmp(m->gcn, gcn) ||
                           (!strncmp(gcn, "gfx94", 5) && !strcmp(m->gcn, "gfx942"))))
                return m;
        } else if (m->sm && m->sm <= sm) {
            best = m;
        }
    }
    return best;
}

static const char *arch_of(int sm)
{
    return sm >= 100 ? "blackwell" : sm >= 90 ? "hopper" : sm >= 80 ? "ampere"
         : sm >= 70 ? "volta" : NULL;
}

/* ----------------------------------------------------------- the dump */

typedef struct {
    char busid[32];
    int line;           /* line of <gpu>, or of its <pci> if none */
    int host;
    xmlNodePtr cpu, pci, gpu;   /* gpu NULL: a partial file's bare PCI GPU */
    int sm;             /* 0 if AMD or unknown */
    char gcn[32];       /* "" if NVIDIA */
    long rank;          /* rank attribute, -1 none */
    double pci_bw;
    int pci_known;
    char pci_speed[32];
    int pci_width;
    int local;          /* index within its host after ordering */
} dgpu;

typedef struct {
    char name[64];
    int line;
    int host;
    xmlNodePtr cpu, pci;    /* pci: the NIC's PCI device, NULL if under a cpu */
    long mbps;          /* -2: a partial file's bare PCI NIC, no speed */
    long coll;          /* the dump's coll="1": a CollNet device (0 absent) */
    long dev;
    char busid[32];
} dnic;

typedef struct {
    const char *label;
    const topo_nccl_opts *o;
    tc_err *err;
    dgpu *g;
    int ng, capg;
    dnic *n;
    int nn, capn;
    char **hosts;
    int nhosts, caphosts;
    int amd;
} ictx;

static int fail_at(ictx *c, xmlNodePtr at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int topo_nccl_vfail(tc_err *err, const char *label, xmlNodePtr at, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (at)
        return tc_err_set(err, TC_INPUT, "%s:%ld: %s: %s", label, xmlGetLineNo(at),
                          (const char *)at->name, msg);
    return tc_err_set(err, TC_INPUT, "%s: %s", label, msg);
}

static int fail_at(ictx *c, xmlNodePtr at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = topo_nccl_vfail(c->err, c->label, at, fmt, ap);
    va_end(ap);
    return rc;
}

/* Attribute as a malloc'd string, NULL if absent. */
static char *attr(xmlNodePtr n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) return NULL;
    char *s = xstrdup((const char *)v);
    xmlFree(v);
    return s;
}

/* Integer attribute: 0 and *v set, 1 absent, -1 not an integer (message
 * set). */
static int attr_long(ictx *c, xmlNodePtr n, const char *name, long *v)
{
    char *s = attr(n, name);
    if (!s) return 1;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 0);
    int bad = end == s || *end || errno;
    if (bad) fail_at(c, n, "%s=\"%s\" is not an integer", name, s);
    free(s);
    if (bad) return -1;
    *v = x;
    return 0;
}

static int is_elem(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static int host_index(ictx *c, const char *hash)
{
    const char *h = hash ? hash : "";
    for (int i = 0; i < c->nhosts; i++)
        if (!strcmp(c->hosts[i], h)) return i;
    c->hosts = xgrow(c->hosts, &c->caphosts, c->nhosts + 1, sizeof *c->hosts);
    c->hosts[c->nhosts] = xstrdup(h);
    return c->nhosts++;
}

/* A PCI class: "0x03...." display (GPU), "0x12...." processing accelerator
 * (AMD Instinct), "0x02...." network. */
static int class_is(const char *cls, const char *prefix)
{
    return cls && !strncmp(cls, prefix, strlen(prefix));
}

static int copy_busid(ictx *c, xmlNodePtr n, const char *what, char *out)
{
    char *b = attr(n, what);
    if (!b) return fail_at(c, n, "no %s attribute", what);
    if (strlen(b) >= 32) {
        free(b);
        return fail_at(c, n, "%s is too long", what);
    }
    for (char *p = b; *p; p++) *p = (char)tolower((unsigned char)*p);
    strcpy(out, b);
    free(b);
    return 0;
}

static int add_gpu(ictx *c, xmlNodePtr pci, xmlNodePtr gpu, xmlNodePtr cpu, int host)
{
    c->g = xgrow(c->g, &c->capg, c->ng + 1, sizeof *c->g);
    dgpu *d = &c->g[c->ng];
    memset(d, 0, sizeof *d);
    d->host = host;
    d->cpu = cpu;
    d->pci = pci;
    d->gpu = gpu;
    d->rank = -1;
    d->line = (int)xmlGetLineNo(gpu ? gpu : pci);
    if (copy_busid(c, pci, "busid", d->busid)) return TC_INPUT;
    char *sp = attr(pci, "link_speed");
    long w = 16;
    int r = attr_long(c, pci, "link_width", &w);
    if (r < 0) { free(sp); return TC_INPUT; }
    d->pci_known = topo_nccl_pci_bw(sp, (int)w, &d->pci_bw) == 0;
    snprintf(d->pci_speed, sizeof d->pci_speed, "%s", sp ? sp : "");
    d->pci_width = (int)w;
    free(sp);
    if (gpu) {
        long sm = 0, rank = -1;
        if (attr_long(c, gpu, "rank", &rank) < 0) return TC_INPUT;
        d->rank = rank;
        char *gcn = attr(gpu, "gcn");
        if (gcn) {
            const char *nm = topo_nccl_gcn_name(gcn);
            if (strlen(nm) >= sizeof d->gcn) {
                free(gcn);
                return fail_at(c, gpu, "gcn is too long");
            }
            strcpy(d->gcn, nm);
            free(gcn);
            /* An AMD dump's sm is a CU count, not a compute capability. */
        } else {
            r = attr_long(c, gpu, "sm", &sm);
            if (r < 0) return TC_INPUT;
            if (r > 0 || sm <= 0)
                return fail_at(c, gpu, "no sm (NVIDIA) or gcn (AMD) attribute: the GPU's "
                                       "generation is unknown");
            d->sm = (int)sm;
        }
    }
    c->ng++;
    return 0;
}

static int add_net(ictx *c, xmlNodePtr net, xmlNodePtr pci, xmlNodePtr cpu, int host)
{
    c->n = xgrow(c->n, &c->capn, c->nn + 1, sizeof *c->n);
    dnic *d = &c->n[c->nn];
    memset(d, 0, sizeof *d);
    d->host = host;
    d->cpu = cpu;
    d->pci = pci;
    d->line = (int)xmlGetLineNo(net);
    d->dev = c->nn;
    if (net == pci) {           /* a bare PCI NIC of a partial file */
        d->mbps = -2;
        if (copy_busid(c, pci, "busid", d->busid)) return TC_INPUT;
        snprintf(d->name, sizeof d->name, "%s", d->busid);
    } else {
        char *nm = attr(net, "name");
        snprintf(d->name, sizeof d->name, "%s", nm ? nm : "");
        free(nm);
        long v = 0;
        int r = attr_long(c, net, "speed", &v);
        if (r < 0) return TC_INPUT;
        d->mbps = r > 0 ? 0 : v;
        r = attr_long(c, net, "dev", &d->dev);
        if (r < 0) return TC_INPUT;
        r = attr_long(c, net, "coll", &d->coll);
        if (r < 0) return TC_INPUT;
        if (r > 0) d->coll = 0;
        if (pci && copy_busid(c, pci, "busid", d->busid)) return TC_INPUT;
    }
    c->nn++;
    return 0;
}

/* Depth-first over the tree, remembering the enclosing <cpu>, its host and
 * the nearest <pci>. */
static int walk(ictx *c, xmlNodePtr n, xmlNodePtr cpu, int host, xmlNodePtr pci)
{
    for (xmlNodePtr k = n->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (is_elem(k, "cpu")) {
            char *hh = attr(k, "host_hash");
            int h = host_index(c, hh);
            free(hh);
            if (walk(c, k, k, h, NULL)) return TC_INPUT;
        } else if (is_elem(k, "pci")) {
            if (!cpu) return fail_at(c, k, "not inside a <cpu>");
            char *cls = attr(k, "class");
            xmlNodePtr gpu = NULL, nic = NULL;
            for (xmlNodePtr s = k->children; s; s = s->next) {
                if (is_elem(s, "gpu") && gpu) {
                    free(cls);
                    return fail_at(c, s, "a second <gpu> under one <pci> (partitions of one GPU, "
                                         "mlopart) is not supported");
                }
                if (is_elem(s, "gpu")) gpu = s;
                if (is_elem(s, "nic")) nic = s;
            }
            int r = 0;
            if (gpu || class_is(cls, "0x03") || class_is(cls, "0x12"))
                r = add_gpu(c, k, gpu, cpu, host);
            else if (class_is(cls, "0x02") && !nic)
                r = add_net(c, k, k, cpu, host);
            free(cls);
            if (r || walk(c, k, cpu, host, k)) return TC_INPUT;
        } else if (is_elem(k, "gpu")) {
            if (!pci || k->parent != pci) return fail_at(c, k, "not inside a <pci>");
        } else if (is_elem(k, "nic")) {
            if (!cpu) return fail_at(c, k, "not inside a <cpu>");
            for (xmlNodePtr s = k->children; s; s = s->next)
                if (is_elem(s, "net") && add_net(c, s, pci, cpu, host)) return TC_INPUT;
        } else if (!is_elem(k, "nvlink") && !is_elem(k, "xgmi")) {
            if (walk(c, k, cpu, host, pci)) return TC_INPUT;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ NIC choice */

/* How far a GPU is from a NIC in the PCI tree, NCCL's path types coarsely:
 * 1 a PCI switch in common (PIX/PXB), 2 the same CPU (PHB), 3 another CPU
 * of the host (SYS). */
static int pci_dist(const dgpu *g, const dnic *n)
{
    if (n->pci) {
        for (xmlNodePtr a = g->pci; a && a != g->cpu; a = a->parent)
            for (xmlNodePtr b = n->pci; b && b != n->cpu; b = b->parent)
                if (a == b) return 1;
    }
    return g->cpu == n->cpu ? 2 : 3;
}

static int mirror_bits(int v, int pow2)
{
    int out = 0;
    for (int f = 1, b = pow2 / 2; f < pow2; f <<= 1, b >>= 1)
        if (v & f) out |= b;
    return out;
}

/* NCCL's choice of a GPU's NIC for channel 0 (src/graph/topo.cc:1943-1972
 * ncclTopoGetLocal, 2039-2076 ncclTopoGetLocalNetType): the GPU's local
 * NICs are those at the best path from it; the GPUs sharing them are those
 * at the best path from the first; the NIC is local NIC number
 * (GPU dev mod sharing GPUs), bit-mirrored when the local NIC count is a
 * power of two.  Path type here is pci_dist (bandwidth along the path is
 * not compared).  Returns the NIC index, -1 if the host has none. */
static int nic_of_gpu(const ictx *c, int gi, int host_gpus[], int nhg)
{
    const dgpu *g = &c->g[gi];
    int best = 99, nloc = 0, loc[256];
    for (int i = 0; i < c->nn; i++) {
        if (c->n[i].host != g->host) continue;
        int d = pci_dist(g, &c->n[i]);
        if (d < best) { best = d; nloc = 0; }
        if (d == best && nloc < 256) loc[nloc++] = i;
    }
    if (!nloc) return -1;
    int gbest = 99, ngpu = 0;
    for (int k = 0; k < nhg; k++) {
        int d = pci_dist(&c->g[host_gpus[k]], &c->n[loc[0]]);
        if (d < gbest) { gbest = d; ngpu = 0; }
        if (d == gbest) ngpu++;
    }
    int dev = g->local;
    int net = dev % (ngpu ? ngpu : 1);
    if ((nloc & (nloc - 1)) == 0) net = mirror_bits(net, nloc);
    return loc[net % nloc];
}

/* ------------------------------------------------------------ output */

typedef struct {
    double bw;
    int bidir;
    char src[1024];
    cJSON *pairs;
} lgroup;

static double r6(double v)
{
    return (double)(long long)(v * 1e6 + 0.5) / 1e6;
}

/* NCCL's NVLS on an NVSwitch joining all rpn GPUs of compute capability
 * sm with `port` GB/s of NVLink each: the switch's "nvls" object (topo.h,
 * docs/nvls.md), the multimem bandwidth per port that NCCL's NVLS graph
 * books on a GPU ((n + 1) channels at its bwIntra) times nvlsEfficiency;
 * nothing before sm 90 or when the switch leaves a GPU out. */
static void add_nvls(cJSON *sw, int sm, int nmem, int rpn, double port, double alpha)
{
    double bi, be;
    if (nmem != rpn || !topo_nccl_nvls_graph(sm, nmem, port, &bi, &be))
        return;
    double eff = topo_nccl_nvls_eff(sm), bw = (nmem + 1) * bi * eff;
    if (bw > port)
        bw = port;
    cJSON *nv = cJSON_AddObjectToObject(sw, "nvls");
    cJSON_AddNumberToObject(nv, "bandwidth_gbps", r6(bw));
    cJSON_AddNumberToObject(nv, "alpha_us", alpha);
    cJSON *red = cJSON_AddArrayToObject(nv, "reductions");
    cJSON_AddItemToArray(red, cJSON_CreateString("sum"));
    cJSON *dt = cJSON_AddArrayToObject(nv, "dtypes");
    static const char *const types[] = {"i32", "f32", "bf16", "f16"};
    for (int i = 0; i < 4; i++)
        cJSON_AddItemToArray(dt, cJSON_CreateString(types[i]));
    char src[640];
    snprintf(src, sizeof src, "NCCL rule: NVLS on sm >= 90 with an NVSwitch (src/graph/search.cc:1124"
             NCCL_AT "); its NVLS graph books %d channels at bwIntra %g GB/s on every GPU's %g GB/s, "
             "twice on the head (search.cc:410-440,1057-1067), times nvlsEfficiency %g "
             "(src/graph/tuning.cc:139-144): (%d + 1) x %g x %g = %g GB/s; sum of i32, f32, f16, "
             "bf16 (ncclNvlsSupported, src/include/device.h:587-600); alpha: the switch's; assumed: "
             "multicast supported (NCCL asks the driver, src/transport/nvls.cc:265-275; a dump does "
             "not record it)", nmem, bi, port, eff, nmem, bi, eff, r6(bw));
    cJSON_AddStringToObject(nv, "source", src);
}

static int cmp_gpu(const void *a, const void *b)
{
    const dgpu *x = a, *y = b;
    if (x->host != y->host) return x->host - y->host;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return strcmp(x->busid, y->busid);
}

static int gpu_by_busid(const ictx *c, int host, const char *busid)
{
    for (int i = 0; i < c->ng; i++)
        if (c->g[i].host == host && !strcmp(c->g[i].busid, busid)) return i;
    return -1;
}

static const char *const CUBE_DOUBLE[] = {"0-1", "0-4", "1-3", "2-3", "2-6", "4-5", "5-7", "6-7"};
static const char *const CUBE_SINGLE[] = {"0-2", "0-3", "1-2", "1-5", "3-7", "4-6", "4-7", "5-6"};

static void add_note(cJSON *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(cJSON *notes, const char *fmt, ...)
{
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(notes, cJSON_CreateString(b));
}

static cJSON *int_pair(int a, int b)
{
    cJSON *p = cJSON_CreateArray();
    cJSON_AddItemToArray(p, cJSON_CreateNumber(a));
    cJSON_AddItemToArray(p, cJSON_CreateNumber(b));
    return p;
}

/* Everything after the walk: order, checks for partial files, figures. */
static char *build(ictx *c, xmlNodePtr root)
{
    const topo_nccl_opts *o = c->o;
    cJSON *out = NULL, *notes = cJSON_CreateArray();
    double *e = NULL, *port = NULL;
    int *port_n = NULL;
    char *text = NULL;
    lgroup *lg = NULL;
    int nlg = 0, caplg = 0;

    if (c->ng == 0) {
        fail_at(c, root, "no GPU: neither a <gpu> element nor a <pci> of class 0x03 or 0x12");
        goto done;
    }
    /* A partial file: GPUs known only as PCI devices. */
    const gpu_model *forced = NULL;
    if (o->gpu) {
        for (int i = 0; i < NMODELS; i++)
            if (MODELS[i].opt && !strcmp(MODELS[i].opt, o->gpu)) forced = &MODELS[i];
        if (!forced) {
            tc_err_set(c->err, TC_INPUT, "--gpu %s: unknown (v100, a100, h100, b200, mi250, mi300x)",
                       o->gpu);
            goto done;
        }
    }
    int partial = 0;
    for (int i = 0; i < c->ng; i++) {
        if (c->g[i].gpu) continue;
        partial = 1;
        if (!forced) {
            xmlNodePtr at = c->g[i].pci;
            fail_at(c, at, "GPU %s has no <gpu> element (a partial topology file: no sm or gcn, "
                           "no NVLink): give --gpu v100|a100|h100|b200|mi250|mi300x and "
                           "--nvlink switch:N|mesh:N|cube-mesh|none", c->g[i].busid);
            goto done;
        }
        c->g[i].sm = forced->sm;
        snprintf(c->g[i].gcn, sizeof c->g[i].gcn, "%s", forced->gcn ? forced->gcn : "");
    }
    for (int i = 0; i < c->nn; i++) {
        if (c->n[i].mbps != -2 || o->net) continue;
        fail_at(c, c->n[i].pci, "NIC %s has no <nic><net> element, so no speed (a partial "
                                "topology file): give --net BW, e.g. --net 200Gb/s", c->n[i].busid);
        goto done;
    }
    if (forced && !partial) {
        fail_at(c, c->g[0].gpu, "--gpu given, but the dump names its GPUs (sm or gcn): --gpu is "
                                "for a file with no <gpu> elements");
        goto done;
    }
    /* One GPU generation. */
    for (int i = 1; i < c->ng; i++)
        if (c->g[i].sm != c->g[0].sm || strcmp(c->g[i].gcn, c->g[0].gcn)) {
            fail_at(c, c->g[i].gpu ? c->g[i].gpu : c->g[i].pci,
                    "GPU %s is of another generation than GPU %s: mixed GPUs are not supported",
                    c->g[i].busid, c->g[0].busid);
            goto done;
        }
    c->amd = c->g[0].gcn[0] != 0;
    int sm = c->g[0].sm;
    const char *gcn = c->g[0].gcn;

    /* Order: by host, then rank attribute, then bus id; all hosts alike. */
    qsort(c->g, (size_t)c->ng, sizeof *c->g, cmp_gpu);
    int rpn = 0;
    for (int i = 0; i < c->ng; i++) if (c->g[i].host == 0) rpn++;
    for (int h = 0; h < c->nhosts; h++) {
        int cnt = 0;
        for (int i = 0; i < c->ng; i++)
            if (c->g[i].host == h) c->g[i].local = cnt++;
        if (cnt != rpn) {
            tc_err_set(c->err, TC_INPUT, "%s: host %d (host_hash %s) has %d GPUs, host 0 has %d: "
                       "every node must be alike", c->label, h, c->hosts[h], cnt, rpn);
            goto done;
        }
    }
    int nodes = c->nhosts;
    if (o->nodes > 0) {
        if (c->nhosts > 1 && o->nodes != c->nhosts) {
            tc_err_set(c->err, TC_INPUT, "%s: --nodes %d, but the dump lists %d hosts (host_hash)",
                       c->label, o->nodes, c->nhosts);
            goto done;
        }
        nodes = o->nodes;
    }
    /* host 0's GPUs, in local order */
    int *hg = xcalloc((size_t)rpn, sizeof *hg);
    for (int i = 0, k = 0; i < c->ng; i++) if (c->g[i].host == 0) hg[k++] = i;

    const gpu_model *m = forced ? forced : model_of(sm, c->amd ? gcn : NULL);
    /* a hop's own alpha: the bundled machines' assumed figures; NCCL's
     * per-step latencies are the runtime's (runtime_latency below) */
    double lat_nv = HOP_ALPHA_US[TOPO_NCCL_HW_NVLINK], lat_pci = HOP_ALPHA_US[TOPO_NCCL_HW_PCI];
    double lat_net = HOP_ALPHA_US[TOPO_NCCL_HW_NET];
    double per_link = c->amd ? topo_nccl_xgmi_bw(gcn) : topo_nccl_nvlink_bw(sm);
    char rule[512];
    if (c->amd)
        snprintf(rule, sizeof rule, "RCCL rule: xGMI %g GB/s per link for gcn %s "
                 "(src/graph/topo.h:31-33,258-265" RCCL_AT "; old numeric gcn names by "
                 "src/misc/archinfo.cc:35-52), times the link count (src/graph/topo.cc:592-594)",
                 per_link, gcn);
    else
        snprintf(rule, sizeof rule, "NCCL rule: NVLink %g GB/s per link for sm %d "
                 "(src/graph/topo.h:19-24,274-281" NCCL_AT "), times the link count, "
                 "NVSwitch ports summed into one switch (src/graph/topo.cc:813-858)", per_link, sm);

    /* Directed GPU->GPU bandwidth and switch ports, host 0. */
    e = xcalloc((size_t)rpn * (size_t)rpn, sizeof *e);
    port = xcalloc((size_t)rpn, sizeof *port);
    port_n = xcalloc((size_t)rpn, sizeof *port_n);
    int first_line = 0, nlinkel = 0, ncpu_links = 0, nself = 0, self_line = 0;
    for (int k = 0; k < rpn; k++) {
        dgpu *g = &c->g[hg[k]];
        if (!g->gpu) continue;
        for (xmlNodePtr l = g->gpu->children; l; l = l->next) {
            int nv = is_elem(l, "nvlink"), xg = is_elem(l, "xgmi");
            if (!nv && !xg) continue;
            if (nv && c->amd) { fail_at(c, l, "<nvlink> on an AMD GPU (gcn)"); goto done_hg; }
            if (xg && !c->amd) { fail_at(c, l, "<xgmi> on an NVIDIA GPU (sm)"); goto done_hg; }
            long cnt = 0;
            int r = attr_long(c, l, "count", &cnt);
            if (r < 0) goto done_hg;
            if (r > 0 || cnt <= 0) { fail_at(c, l, "no count > 0"); goto done_hg; }
            char *tc = attr(l, "tclass");
            if (!tc) { fail_at(c, l, "no tclass attribute"); goto done_hg; }
            if (!first_line) first_line = (int)xmlGetLineNo(l);
            nlinkel++;
            if (class_is(tc, "0x03") || class_is(tc, "0x12")) {
                char tb[32];
                free(tc);
                if (copy_busid(c, l, "target", tb)) goto done_hg;
                int t = gpu_by_busid(c, 0, tb);
                if (t < 0) { fail_at(c, l, "target %s is no GPU of this host", tb); goto done_hg; }
                if (c->g[t].local == k) {
                    nself++;    /* e.g. Azure's NC A100 v4 file: no path to another GPU */
                    if (!self_line) self_line = (int)xmlGetLineNo(l);
                    continue;
                }
                e[k * rpn + c->g[t].local] += (double)cnt * per_link;
            } else if (!strcmp(tc, "0x068001")) {
                free(tc);
                ncpu_links++;   /* NVLink to a CPU (POWER9): no CPU in our model */
            } else {
                free(tc);       /* NVSwitch (0x068000) or an unseen one (VMs: a bridge) */
                port[k] += (double)cnt * per_link;
                port_n[k] += (int)cnt;
            }
        }
    }
    if (nself)
        add_note(notes, "%d <nvlink>/<xgmi> element(s) target their own GPU (first at line %d): "
                 "ignored, they join no two GPUs", nself, self_line);
    if (ncpu_links)
        add_note(notes, "%d NVLink(s) to a CPU ignored: the model has no CPU", ncpu_links);

    /* --nvlink for a file that has none. */
    if (partial || o->nvlink) {
        if (nlinkel && o->nvlink) {
            tc_err_set(c->err, TC_INPUT, "%s: --nvlink given, but the dump has its own <nvlink>/<xgmi> "
                       "elements (line %d)", c->label, first_line);
            goto done_hg;
        }
        if (!o->nvlink) {
            tc_err_set(c->err, TC_INPUT, "%s: no <nvlink> or <xgmi> element (a partial topology file): "
                       "give --nvlink switch:N|mesh:N|cube-mesh|none", c->label);
            goto done_hg;
        }
        int nl = 0;
        char tail = 0;
        if (sscanf(o->nvlink, "switch:%d%c", &nl, &tail) == 1 && nl > 0) {
            for (int k = 0; k < rpn; k++) { port[k] = nl * per_link; port_n[k] = nl; }
        } else if (sscanf(o->nvlink, "mesh:%d%c", &nl, &tail) == 1 && nl > 0) {
            for (int a = 0; a < rpn; a++)
                for (int b = 0; b < rpn; b++)
                    if (a != b) e[a * rpn + b] = nl * per_link;
        } else if (!strcmp(o->nvlink, "cube-mesh")) {
            if (rpn != 8) {
                tc_err_set(c->err, TC_INPUT, "--nvlink cube-mesh needs 8 GPUs per node, the dump has %d",
                           rpn);
                goto done_hg;
            }
            for (int d = 0; d < 2; d++)
                for (int i = 0; i < 8; i++) {
                    int a = (d ? CUBE_SINGLE : CUBE_DOUBLE)[i][0] - '0';
                    int b = (d ? CUBE_SINGLE : CUBE_DOUBLE)[i][2] - '0';
                    e[a * rpn + b] = e[b * rpn + a] = (d ? 1 : 2) * per_link;
                }
        } else if (strcmp(o->nvlink, "none")) {
            tc_err_set(c->err, TC_INPUT, "--nvlink %s: expected switch:N, mesh:N, cube-mesh or none",
                       o->nvlink);
            goto done_hg;
        }
        add_note(notes, "assumed (--nvlink %s): the file lists no NVLink/xGMI", o->nvlink);
    }
    if (forced)
        add_note(notes, "assumed (--gpu %s): the file names no GPU model; sm %d%s%s", o->gpu,
                 forced->sm, forced->gcn ? ", gcn " : "", forced->gcn ? forced->gcn : "");

    char base[256];
    {
        const char *s = strrchr(c->label, '/');
        s = s ? s + 1 : c->label;
        snprintf(base, sizeof base, "%s", s);
        char *dot = strrchr(base, '.');
        if (dot && dot != base) *dot = 0;
    }
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "name", o->name ? o->name : base);
    char desc[512], gen[40];
    if (c->amd) snprintf(gen, sizeof gen, "gcn %s", gcn);
    else snprintf(gen, sizeof gen, "sm %d", sm);
    snprintf(desc, sizeof desc, "imported by taccl-topo from %s: %d %s GPU(s) per node (%s)",
             base, rpn, m ? m->part : "unknown", gen);
    cJSON_AddStringToObject(out, "description", desc);
    cJSON_AddNumberToObject(out, "nodes", nodes);
    cJSON_AddNumberToObject(out, "ranks_per_node", rpn);
    cJSON_AddStringToObject(out, "runtime_latency", c->amd ? "rccl" : "nccl");
    int fat_tree = o->fabric != TOPO_NCCL_FABRIC_RAILS;
    if (nodes > 1 && !fat_tree)
        cJSON_AddStringToObject(out, "fabric", "rails");
    cJSON *dev = cJSON_AddObjectToObject(out, "device");
    cJSON_AddStringToObject(dev, "kind", "gpu");
    char src[1024];
    if (!c->amd && arch_of(sm)) {
        cJSON_AddStringToObject(dev, "arch", arch_of(sm));
        if (forced)
            snprintf(src, sizeof src, "assumed (--gpu %s): sm %d, compute capability %d.%d; the "
                     "file's GPUs (first at line %d) name no model", o->gpu, sm, sm / 10, sm % 10,
                     c->g[hg[0]].line);
        else
            snprintf(src, sizeof src, "dump: <gpu sm=\"%d\"> (line %d): compute capability %d.%d",
                     sm, c->g[hg[0]].line, sm / 10, sm % 10);
    } else if (c->amd) {
        snprintf(src, sizeof src, "%s gcn %s (line %d): AMD %s; our format names no AMD "
                 "generation, so --algo nccl uses NCCL's model with generation unknown, not RCCL's",
                 forced ? "assumed (--gpu)" : "dump: <gpu>", gcn, c->g[hg[0]].line,
                 m ? m->part : gcn);
    } else {
        snprintf(src, sizeof src, "dump: <gpu> sm=\"%d\" (line %d): no generation our format names",
                 sm, c->g[hg[0]].line);
    }
    cJSON_AddStringToObject(dev, "source", src);
    cJSON *loc = cJSON_AddObjectToObject(out, "local");
    double mem = m ? m->mem_gbps : 900;
    cJSON_AddNumberToObject(loc, "copy_gbps", r6(mem / 2));
    cJSON_AddNumberToObject(loc, "reduce_gbps", r6(mem / 3));
    snprintf(src, sizeof src, "assumed from the GPU model (%s): %s; a copy reads and writes every "
             "byte (half of it), a reduce reads two operands and writes one (a third)",
             m ? m->part : "unknown: V100's figure", m ? m->mem_src : "900 GB/s");
    cJSON_AddStringToObject(loc, "source", src);

    /* Links: unordered pairs, bidirectional when both ways agree. */
    const char *what = c->amd ? "<xgmi>" : "<nvlink>";
    for (int a = 0; a < rpn; a++)
        for (int b = 0; b < rpn; b++) {
            if (a == b) continue;
            double ab = e[a * rpn + b], ba = e[b * rpn + a];
            if (ab <= 0) continue;
            int bidir = ab == ba;
            if (bidir && b < a) continue;
            int gi = -1;
            for (int i = 0; i < nlg; i++)
                if (lg[i].bw == ab && lg[i].bidir == bidir) gi = i;
            if (gi < 0) {
                lg = xgrow(lg, &caplg, nlg + 1, sizeof *lg);
                gi = nlg++;
                lg[gi].bw = ab;
                lg[gi].bidir = bidir;
                lg[gi].pairs = cJSON_CreateArray();
                char tmp[256], at[64] = "";
                if (!o->nvlink) snprintf(at, sizeof at, ", first at line %d", first_line);
                snprintf(lg[gi].src, sizeof lg[gi].src, "%s; %s: %g link(s) each way (%s %s%s); %s",
                         rule, o->nvlink ? "assumed" : "dump", ab / per_link,
                         o->nvlink ? "--nvlink" : what, o->nvlink ? o->nvlink : "count, target a GPU",
                         at, lat_source(tmp, sizeof tmp, TOPO_NCCL_HW_NVLINK, TOPO_NCCL_SIMPLE, c->amd));
            }
            cJSON_AddItemToArray(lg[gi].pairs, int_pair(a, b));
        }
    cJSON *links = cJSON_CreateArray();
    for (int i = 0; i < nlg; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddItemToObject(l, "pairs", lg[i].pairs);
        lg[i].pairs = NULL;
        cJSON_AddNumberToObject(l, "alpha_us", lat_nv);
        cJSON_AddNumberToObject(l, "bandwidth_gbps", r6(lg[i].bw));
        cJSON_AddBoolToObject(l, "bidirectional", lg[i].bidir);
        cJSON_AddStringToObject(l, "source", lg[i].src);
        cJSON_AddItemToArray(links, l);
    }
    cJSON_AddItemToObject(out, "links", links);

    /* Switches: the NVSwitch ports, then PCI if some pair has no path. */
    cJSON *sws = cJSON_CreateArray();
    int *on_sw = xcalloc((size_t)rpn, sizeof *on_sw);
    {
        double lo = 0, hi = 0;
        int nmem = 0;
        for (int k = 0; k < rpn; k++)
            if (port[k] > 0) {
                if (!nmem || port[k] < lo) lo = port[k];
                if (!nmem || port[k] > hi) hi = port[k];
                nmem++;
            }
        if (nmem >= 2) {
            cJSON *s = cJSON_CreateObject();
            cJSON *rk = cJSON_AddArrayToObject(s, "ranks");
            for (int k = 0; k < rpn; k++)
                if (port[k] > 0) { cJSON_AddItemToArray(rk, cJSON_CreateNumber(k)); on_sw[k] = 1; }
            cJSON_AddNumberToObject(s, "alpha_us", lat_nv);
            cJSON_AddNumberToObject(s, "bandwidth_gbps", r6(lo));
            char tmp[256], at[64];
            if (o->nvlink) snprintf(at, sizeof at, "--nvlink %s", o->nvlink);
            else snprintf(at, sizeof at, "%s tclass not a GPU's, first at line %d", what, first_line);
            snprintf(src, sizeof src, "%s; %s: %d link(s) per GPU into NVSwitch (%s)%s; %s", rule,
                     o->nvlink ? "assumed" : "dump", (int)(lo / per_link + 0.5), at,
                     hi > lo ? "; the GPUs differ, the smallest is taken" : "",
                     lat_source(tmp, sizeof tmp, TOPO_NCCL_HW_NVLINK, TOPO_NCCL_SIMPLE, c->amd));
            cJSON_AddStringToObject(s, "source", src);
            add_nvls(s, c->amd ? 0 : sm, nmem, rpn, lo, lat_nv);
            cJSON_AddItemToArray(sws, s);
            if (hi > lo)
                add_note(notes, "NVSwitch ports differ between GPUs (%g to %g GB/s): the switch "
                         "takes the smallest", lo, hi);
        }
    }
    int need_pci = 0;
    for (int a = 0; a < rpn && !need_pci; a++)
        for (int b = 0; b < rpn; b++)
            if (a != b && e[a * rpn + b] <= 0 && !(on_sw[a] && on_sw[b])) { need_pci = 1; break; }
    if (need_pci) {
        double lo = 0;
        int lo_k = 0;
        for (int k = 0; k < rpn; k++)
            if (!k || c->g[hg[k]].pci_bw < lo) { lo = c->g[hg[k]].pci_bw; lo_k = k; }
        const dgpu *g = &c->g[hg[lo_k]];
        cJSON *s = cJSON_CreateObject();
        cJSON *rk = cJSON_AddArrayToObject(s, "ranks");
        for (int k = 0; k < rpn; k++) cJSON_AddItemToArray(rk, cJSON_CreateNumber(k));
        cJSON_AddNumberToObject(s, "alpha_us", lat_pci);
        cJSON_AddNumberToObject(s, "bandwidth_gbps", r6(lo));
        char tmp[256];
        lat_source(tmp, sizeof tmp, TOPO_NCCL_HW_PCI, TOPO_NCCL_SIMPLE, c->amd);
        snprintf(src, sizeof src, "NCCL rule: PCI GB/s = link_width x per-lane speed / 80 "
                 "(src/graph/topo.cc:545-557,651-657" NCCL_AT "); dump: <pci busid=\"%s\" "
                 "link_speed=\"%s\" link_width=\"%d\"> (line %ld), the narrowest GPU link%s; some "
                 "GPU pairs have no NVLink/xGMI path, so every GPU shares one PCI switch (the "
                 "CPU-to-CPU link is not modelled); %s", g->busid, g->pci_speed, g->pci_width,
                 xmlGetLineNo(g->pci), g->pci_known ? "" : " (speed unknown: NCCL's Gen3 fallback)",
                 tmp);
        cJSON_AddStringToObject(s, "source", src);
        cJSON_AddItemToArray(sws, s);
    }
    free(on_sw);
    cJSON_AddItemToObject(out, "switches", sws);

    /* NICs of host 0 with the GPUs NCCL gives them. */
    double net_override = 0;
    if (o->net) {
        if (units_bw_gbps(o->net, &net_override) || net_override <= 0) {
            tc_err_set(c->err, TC_INPUT, "--net %s: expected a bandwidth with its unit, e.g. 200Gb/s",
                       o->net);
            goto done_hg;
        }
    }
    int *nic_of = xcalloc((size_t)rpn, sizeof *nic_of);
    int any_nic = 0;
    for (int k = 0; k < rpn; k++) {
        nic_of[k] = nic_of_gpu(c, hg[k], hg, rpn);
        if (nic_of[k] >= 0) any_nic = 1;
    }
    cJSON *nics = cJSON_AddArrayToObject(out, "nics");
    int unused = 0, huge = 0;
    /* NICs in the order of the lowest rank each serves; unused ones counted. */
    int *norder = xcalloc((size_t)c->nn + 1, sizeof *norder), nord = 0;
    for (int k = 0; k < rpn; k++) {
        int i = nic_of[k], seen = 0;
        if (i < 0) continue;
        for (int j = 0; j < nord; j++) seen |= norder[j] == i;
        if (!seen) norder[nord++] = i;
    }
    for (int i = 0; i < c->nn; i++) {
        int used = 0;
        for (int j = 0; j < nord; j++) used |= norder[j] == i;
        if (c->n[i].host == 0 && !used) unused++;
    }
    for (int j = 0; j < nord; j++) {
        int i = norder[j];
        cJSON *rk = cJSON_CreateArray();
        int cnt = 0;
        for (int k = 0; k < rpn; k++)
            if (nic_of[k] == i) { cJSON_AddItemToArray(rk, cJSON_CreateNumber(k)); cnt++; }
        TC_ASSERT(cnt > 0);
        const dnic *d = &c->n[i];
        if (net_override <= 0 && d->mbps > 3200000) huge++;
        double bw = net_override > 0 ? net_override : topo_nccl_net_bw(d->mbps);
        cJSON *n = cJSON_CreateObject();
        cJSON_AddItemToObject(n, "ranks", rk);
        cJSON_AddNumberToObject(n, "alpha_us", lat_net);
        cJSON_AddNumberToObject(n, "bandwidth_gbps", r6(bw));
        char tmp[256];
        lat_source(tmp, sizeof tmp, TOPO_NCCL_HW_NET, TOPO_NCCL_SIMPLE, c->amd);
        char bws[400];
        if (net_override > 0)
            snprintf(bws, sizeof bws, "assumed (--net %s)%s", o->net,
                     d->mbps == -2 ? ": the file gives no speed" : ", overriding the dump's speed");
        else
            snprintf(bws, sizeof bws, "NCCL rule: GB/s = speed in Mb/s / 8000, speed <= 0 or "
                     "absent as 10000 (src/graph/topo.cc:416-418" NCCL_AT "); dump: <net name=\"%s\" "
                     "speed=\"%ld\"> (line %d)", d->name, d->mbps, d->line);
        snprintf(src, sizeof src, "%s; GPUs by NCCL's local-NIC rule, closest in the PCI tree "
                 "(src/graph/topo.cc:1943-1972,2039-2076" NCCL_AT "); %s", bws, tmp);
        cJSON_AddStringToObject(n, "source", src);
        cJSON_AddItemToArray(nics, n);
    }
    /* every NIC a CollNet device: NCCL marks them so where a CollNet
     * plugin is loaded (topo.cc:1846-1848, coll_net.h:87-89), so the
     * network reduces: the "collnet" object, assuming NCCL_COLLNET_ENABLE=1
     * (off by default; a dump does not record it) and the least the plugin
     * must reduce for --algo nccl (NCCL asks it at run time) */
    int coll = nord > 0;
    for (int j = 0; j < nord; j++)
        coll &= c->n[norder[j]].coll == 1;
    if (coll && nodes > 1) {
        cJSON *cn = cJSON_CreateObject();
        const char *red[] = {"sum"}, *dt[] = {"f32"};
        cJSON_AddItemToObject(cn, "reductions", cJSON_CreateStringArray(red, 1));
        cJSON_AddItemToObject(cn, "dtypes", cJSON_CreateStringArray(dt, 1));
        cJSON_AddFalseToObject(cn, "allgather");
        cJSON_AddFalseToObject(cn, "reducescatter");
        snprintf(src, sizeof src, "NCCL rule: a <net coll=\"1\"> is a device of a loaded "
                 "CollNet plugin (src/graph/topo.cc:1846-1848, src/include/coll_net.h:87-89"
                 NCCL_AT "); dump: every NIC coll=\"1\" (first at line %d); assumed: "
                 "NCCL_COLLNET_ENABLE=1 (NCCL's default is off), and the plugin reduces sum of "
                 "f32 and offers no AllGather or ReduceScatter (NCCL asks it at run time, "
                 "collNetSupportMatrix; a dump records neither)", c->n[norder[0]].line);
        cJSON_AddStringToObject(cn, "source", src);
        cJSON_AddItemToObject(out, "collnet", cn);
        add_note(notes, "every NIC is a CollNet device (coll=\"1\"): \"collnet\" declares the "
                 "network reduces, as NCCL runs it with NCCL_COLLNET_ENABLE=1; delete it for "
                 "NCCL's default (CollNet off)");
    } else if (coll) {
        add_note(notes, "every NIC is a CollNet device (coll=\"1\"), but one node has no "
                 "network to reduce in: no \"collnet\" (--nodes N for several)");
    }
    free(nic_of);
    free(norder);
    if (huge)
        add_note(notes, "%d NIC(s) give a speed above 3.2 Tb/s; NCCL reads it as Mb/s as written, "
                 "and so does this import: if the NIC's plugin reports another unit, give --net",
                 huge);
    if (unused) add_note(notes, "%d NIC(s) serve no GPU by NCCL's channel-0 choice and are left out",
                         unused);
    if (nodes > 1 && !any_nic) {
        tc_err_set(c->err, TC_INPUT, "%s: %d nodes, but the dump lists no NIC (<net>) to join them",
                   c->label, nodes);
        goto done_hg;
    }
    if (c->nhosts > 1)
        add_note(notes, "%d hosts (host_hash) read as %d nodes; the figures are host 0's",
                 c->nhosts, c->nhosts);
    if (nodes > 1 && fat_tree)
        add_note(notes, "fabric fat-tree (%s): between nodes every NIC reaches every other "
                 "node's NICs at the NICs' figures, a non-blocking network",
                 o->fabric ? "--fabric fat-tree" : "the default; --fabric rails for a "
                 "rail-optimised one");
    else if (nodes > 1)
        add_note(notes, "fabric rails (--fabric rails): NIC i of every node is on rail i and "
                 "reaches only NIC i of the other nodes, at the NICs' figures; a transfer "
                 "between GPUs of two rails has no route (NCCL's PXN relay is not modelled)");
    else if (o->fabric)
        add_note(notes, "--fabric %s: one node, no network between nodes to describe",
                 fat_tree ? "fat-tree" : "rails");
    add_note(notes, "alphas are NCCL's (RCCL's) Simple ring-step latencies: our cost model takes a "
             "topology's alpha as Simple's and scales it for LL and LL128 (src/model/cost.h)");
    cJSON_AddItemToObject(out, "notes", notes);
    notes = NULL;

    text = cJSON_Print(out);
    {
        tc_err e2;
        tc_err_clear(&e2);
        topo *t = topo_parse(text, c->label, &e2);
        if (!t) {
            tc_err_set(c->err, TC_INPUT, "%s: the imported topology does not load: %s", c->label,
                       e2.msg);
            free(text);
            text = NULL;
        }
        topo_free(t);
    }
done_hg:
    free(hg);
done:
    for (int i = 0; i < nlg; i++) cJSON_Delete(lg[i].pairs);
    free(lg);
    free(e);
    free(port);
    free(port_n);
    cJSON_Delete(out);
    cJSON_Delete(notes);
    return text;
}

/* The first error libxml2 reports (later ones follow from it), with the
 * element being parsed when it came. */
typedef struct {
    int line;
    char elem[64];
    char msg[400];
} first_err;

static void keep_first(void *ctx, xmlErrorPtr xe)
{
    first_err *fe = ctx;
    if (!xe || fe->msg[0] || xe->level < XML_ERR_ERROR) return;
    fe->line = xe->line;
    snprintf(fe->msg, sizeof fe->msg, "%s", xe->message ? xe->message : "not well-formed XML");
    size_t n = strlen(fe->msg);
    while (n && (fe->msg[n - 1] == '\n' || fe->msg[n - 1] == ' ')) fe->msg[--n] = 0;
    xmlParserCtxtPtr px = xe->ctxt;
    if (px && px->name) snprintf(fe->elem, sizeof fe->elem, "%s", (const char *)px->name);
}

void topo_nccl_opts_init(topo_nccl_opts *o)
{
    memset(o, 0, sizeof *o);
}

xmlDocPtr topo_nccl_xml_parse(const char *text, size_t len, const char *label, tc_err *err)
{
    if (len > (size_t)1 << 30) {
        tc_err_set(err, TC_INPUT, "%s: larger than 1 GiB", label);
        return NULL;
    }
    first_err fe = {0, "", ""};
    xmlStructuredErrorFunc old_s = xmlStructuredError;
    void *old_sctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(&fe, keep_first);
    xmlParserCtxtPtr px = xmlNewParserCtxt();
    if (!px) {
        xmlSetStructuredErrorFunc(old_sctx, old_s);
        tc_err_set(err, TC_INPUT, "%s: out of memory", label);
        return NULL;
    }
    xmlDocPtr doc = xmlCtxtReadMemory(px, text, (int)len, label, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                      XML_PARSE_BIG_LINES);
    xmlSetStructuredErrorFunc(old_sctx, old_s);
    if (!doc) {
        if (!fe.line && !fe.msg[0]) snprintf(fe.msg, sizeof fe.msg, "not well-formed XML");
        tc_err_set(err, TC_INPUT, "%s:%d: %s: %s", label, fe.line, fe.elem[0] ? fe.elem : "xml",
                   fe.msg);
    }
    xmlFreeParserCtxt(px);
    return doc;
}

char *topo_nccl_import_mem(const char *text, size_t len, const char *label,
                           const topo_nccl_opts *o, tc_err *err)
{
    topo_nccl_opts def;
    if (!o) { topo_nccl_opts_init(&def); o = &def; }
    xmlDocPtr doc = topo_nccl_xml_parse(text, len, label, err);
    if (!doc)
        return NULL;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    char *res = NULL;
    ictx c;
    memset(&c, 0, sizeof c);
    c.label = label;
    c.o = o;
    c.err = err;
    if (!root || !is_elem(root, "system")) {
        tc_err_set(err, TC_INPUT, "%s:%ld: %s: the root element is not <system> (an NCCL/RCCL "
                   "topology file)", label, root ? xmlGetLineNo(root) : 0L,
                   root ? (const char *)root->name : "xml");
    } else if (walk(&c, root, NULL, 0, NULL) == 0) {
        if (c.nhosts == 0) host_index(&c, "");
        res = build(&c, root);
    }
    for (int i = 0; i < c.nhosts; i++) free(c.hosts[i]);
    free(c.hosts);
    free(c.g);
    free(c.n);
    xmlFreeDoc(doc);
    return res;
}

char *topo_nccl_read_file(const char *path, size_t *len, tc_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tc_err_set(err, TC_INPUT, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) buf = xrealloc(buf, cap *= 2);
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        tc_err_set(err, TC_INPUT, "%s: cannot read", path);
        return NULL;
    }
    *len = n;
    return buf;
}

xmlDocPtr topo_nccl_xml_load(const char *path, tc_err *err)
{
    size_t n = 0;
    char *buf = topo_nccl_read_file(path, &n, err);
    xmlDocPtr doc = buf ? topo_nccl_xml_parse(buf, n, path, err) : NULL;
    free(buf);
    return doc;
}

char *topo_nccl_import(const char *path, const topo_nccl_opts *o, tc_err *err)
{
    size_t n = 0;
    char *buf = topo_nccl_read_file(path, &n, err);
    if (!buf)
        return NULL;
    char *res = topo_nccl_import_mem(buf, n, path, o, err);
    free(buf);
    return res;
}
