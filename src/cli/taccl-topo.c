/* taccl-topo — make a topology JSON from the machine's own description,
 * and show what a topology holds.
 *
 * Why a third tool: describing the cluster is a user's first step, and
 * every GPU machine writes its own description in NCCL's format
 * (NCCL_TOPO_DUMP_FILE; RCCL the same with xGMI).  `taccl-topo import`
 * reads such a dump and writes our topology JSON, every figure derived by
 * NCCL's or RCCL's rules (src/model/topo_nccl.h; docs/topo-import.md).
 *
 * `taccl-topo show` prints a topology (a JSON, or a dump imported on the
 * way) as a user checks it: ranks and nodes, every link, switch and NIC
 * with its figures and source, each NIC's rail (its index in its node), and
 * the lower bound of each collective at 1 MiB and 1 GiB (src/bound).
 *
 * This file only parses the command line, prints and writes: the importer
 * is src/model/topo_nccl.c.  Exit 0 done; 2 the input or a flag cannot be
 * used (one line on stderr, nothing written). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bound/bound.h"
#include "model/collective.h"
#include "model/topo.h"
#include "model/topo_nccl.h"
#include "util/args.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/paths.h"
#include "util/tcassert.h"

/* The options: one table (util/args.h) drives parsing, the usage, --help
 * and which option goes with which command. */
enum { M_IMPORT = 1, M_SHOW = 2, M_BOTH = M_IMPORT | M_SHOW };

typedef struct {
    const char *file;               /* the one positional argument */
    int npos;
    unsigned long long seen;
    const char *out;
    int nodes;
    topo_nccl_opts o;
} tcli;

static const args_word_def FABRICS[] = {
    {"rails", TOPO_NCCL_FABRIC_RAILS}, {"fat-tree", TOPO_NCCL_FABRIC_FAT_TREE}, {NULL, 0}};

static const args_opt OPTS[] = {
    {.name = "--output", .alias = "-o", .value = "TOPO.json", .field = offsetof(tcli, out),
     .modes = M_IMPORT, .usage = "-o TOPO.json",
     .help = "import: where to write (written whole or not at all)"},
    {.name = "--name", .value = "NAME", .field = offsetof(tcli, o.name), .modes = M_BOTH,
     .help = "topology name (default: the dump's file name)"},
    {.name = "--nodes", .value = "N", .parse = args_count, .field = offsetof(tcli, nodes),
     .hi = 4096, .expect = "an integer 1..4096", .modes = M_BOTH,
     .help = "nodes of this machine (default: the dump's hosts, host_hash)"},
    {.name = "--fabric", .value = "F", .parse = args_word, .words = FABRICS,
     .field = offsetof(tcli, o.fabric), .modes = M_BOTH, .usage = "--fabric rails|fat-tree",
     .help = "the network between nodes: fat-tree (default: every NIC\n"
             "reaches every other node's NICs) or rails (NIC i of every\n"
             "node on rail i, reaching only rail i; no PXN relay, so a\n"
             "ring needs two GPUs of a node on one NIC)"},
    {.name = "--gpu", .value = "G", .field = offsetof(tcli, o.gpu), .modes = M_BOTH,
     .usage = "--gpu v100|a100|h100|b200|mi250|mi300x",
     .help = "the GPU model, for a file with no <gpu> elements"},
    {.name = "--nvlink", .value = "SPEC", .field = offsetof(tcli, o.nvlink), .modes = M_BOTH,
     .usage = "--nvlink switch:N|mesh:N|cube-mesh|none",
     .help = "the GPU links, for a file with none: switch:N (N NVLinks per\n"
             "GPU into NVSwitch), mesh:N (N links between every pair),\n"
             "cube-mesh (DGX-1/NDv2 hybrid cube-mesh), none (PCI only)"},
    {.name = "--net", .value = "BW", .field = offsetof(tcli, o.net), .modes = M_BOTH,
     .help = "NIC bandwidth with its unit, e.g. 200Gb/s: for NICs the file\n"
             "gives no speed, or to override it"},
    {.name = NULL}};

static const args_mode MODES[] = {
    {M_IMPORT, "import", "import DUMP.xml -o TOPO.json"},
    {M_SHOW, "show", "show TOPO.json|DUMP.xml"},
    {0, NULL, NULL}};

static const args_spec SPEC = {
    .tool = "taccl-topo",
    .opts = OPTS,
    .modes = MODES,
    .pos = offsetof(tcli, file),
    .npos = offsetof(tcli, npos),
    .max_pos = 1,
    .too_many = "one file only, got a second: %s",
    .about =
    "Read an NCCL or RCCL topology dump (NCCL_TOPO_DUMP_FILE) or topology file\n"
    "(NCCL_TOPO_FILE) and write the topology JSON taccl-synth and taccl-run read.\n"
    "Every figure comes from NCCL's (RCCL's) own rules and its \"source\" names the\n"
    "rule (file:line@commit) and the dump's field (docs/topo-import.md).\n"
    "\n",
    .after =
    "\n"
    "show prints a topology: ranks and nodes; every link, switch and NIC with its\n"
    "bandwidth, alpha and source; each NIC's rail (its index within its node); the\n"
    "lower bound of every collective at 1 MiB and 1 GiB (the import options apply\n"
    "to a dump given to show).\n"
    "\n"
    "A partial file is refused with one line naming what is missing and the option\n"
    "that supplies it; a malformed one with FILE:LINE: element: problem. Exit 0\n"
    "written, 2 unusable input or flag (nothing written).\n"};

static int bad(const char *fmt, const char *v)
{
    fprintf(stderr, "taccl-topo: ");
    fprintf(stderr, fmt, v);
    char *usage = args_usage(&SPEC);
    fprintf(stderr, "\n%s", usage);
    free(usage);
    return 2;
}

/* argv after the command: the table's options for `mode` into c; 0, or 2
 * said. */
static int parse_opts(int argc, char **argv, unsigned mode, tcli *c)
{
    memset(c, 0, sizeof *c);
    topo_nccl_opts_init(&c->o);
    tc_err err;
    int rc = args_parse(&SPEC, argc, argv, c, &c->seen, &err);
    if (rc == TC_OK)
        rc = args_check_mode(&SPEC, c->seen, mode, &err);
    if (rc != TC_OK)
        return bad("%s", err.msg);
    if (!c->file)
        return bad("%s", "a file is needed (DUMP.xml, or TOPO.json for show)");
    if (c->nodes)
        c->o.nodes = c->nodes;
    return 0;
}

static int cmd_import(int argc, char **argv)
{
    tcli c;
    if (parse_opts(argc, argv, M_IMPORT, &c)) return 2;
    const char *in = c.file, *out = c.out;
    topo_nccl_opts o = c.o;
    if (!out) return bad("%s", "import needs -o TOPO.json");
    tc_err err;
    tc_err_clear(&err);
    const char *ins[1] = {in};
    if (path_check_output(out, ins, 1, &err)) {
        fprintf(stderr, "taccl-topo: %s\n", err.msg);
        return 2;
    }
    char *json = topo_nccl_import(in, &o, &err);
    if (!json) {
        fprintf(stderr, "taccl-topo: %s\n", err.msg);
        return 2;
    }
    size_t n = strlen(json);
    json = xrealloc(json, n + 2);
    json[n++] = '\n';
    json[n] = 0;
    int rc = file_write_atomic(out, json, n, &err);
    free(json);
    if (rc) {
        fprintf(stderr, "taccl-topo: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A JSON array of ints or of pairs, printed compactly. */
static void print_list(const cJSON *a)
{
    const cJSON *x;
    int first = 1;
    cJSON_ArrayForEach(x, a) {
        if (cJSON_IsArray(x) && cJSON_GetArraySize(x) == 2)
            printf("%s%d->%d", first ? "" : " ", (int)cJSON_GetArrayItem(x, 0)->valuedouble,
                   (int)cJSON_GetArrayItem(x, 1)->valuedouble);
        else if (cJSON_IsNumber(x))
            printf("%s%d", first ? "" : " ", (int)x->valuedouble);
        first = 0;
    }
}

/* A JSON array of strings, comma-separated. */
static void print_names(const cJSON *a)
{
    const cJSON *x;
    int first = 1;
    cJSON_ArrayForEach(x, a) {
        printf("%s%s", first ? "" : ",", cJSON_IsString(x) ? x->valuestring : "?");
        first = 0;
    }
}

static void print_group(const char *what, int i, const cJSON *e, const char *key, int rail)
{
    printf("  %s %d: ", what, i);
    print_list(cJSON_GetObjectItemCaseSensitive(e, key));
    printf("  %g GB/s%s, alpha %g us", jnum(e, "bandwidth_gbps"),
           !strcmp(what, "switch") ? " per port" : "", jnum(e, "alpha_us"));
    if (rail >= 0) printf(", rail %d", rail);
    printf("\n      source: %s\n", jstr(e, "source"));
    const cJSON *nv = cJSON_GetObjectItemCaseSensitive(e, "nvls");
    if (nv) {
        printf("      nvls (in-switch reduction and multicast): %g GB/s per port, alpha %g us, "
               "reductions ", jnum(nv, "bandwidth_gbps"), jnum(nv, "alpha_us"));
        print_names(cJSON_GetObjectItemCaseSensitive(nv, "reductions"));
        printf(", dtypes ");
        print_names(cJSON_GetObjectItemCaseSensitive(nv, "dtypes"));
        printf("\n      nvls source: %s\n", jstr(nv, "source"));
    }
}

/* What a topology holds, as a user checks it. */
static int cmd_show(int argc, char **argv)
{
    tcli c;
    if (parse_opts(argc, argv, M_SHOW, &c)) return 2;
    const char *in = c.file;
    topo_nccl_opts o = c.o;
    tc_err err;
    tc_err_clear(&err);
    topo *t = NULL;
    size_t len = strlen(in);
    if (len > 4 && !strcmp(in + len - 4, ".xml")) {
        char *json = topo_nccl_import(in, &o, &err);
        if (json) t = topo_parse(json, in, &err);
        free(json);
    } else {
        t = topo_load(in, &err);
    }
    if (!t) {
        fprintf(stderr, "taccl-topo: %s\n", err.msg);
        return 2;
    }
    char *text = topo_to_json(t);
    cJSON *j = cJSON_Parse(text);
    free(text);
    TC_ASSERT(j);
    printf("topology  %s: %d node(s) x %d ranks = %d ranks, %s, arch %s\n", t->name, t->nnodes,
           t->ranks_per_node, t->nranks, t->kind == TOPO_GPU ? "gpu" : "chip",
           topo_arch_name(t->arch));
    printf("local     copy %g GB/s, reduce %g GB/s\n", t->copy_gbps, t->reduce_gbps);
    if (t->rt_latency != TOPO_RTLAT_NONE)
        printf("runtime   %s's latencies on top of the hops' alpha: %g us a step over NVLink, "
               "%g over the network (Simple), %g us a call\n",
               t->rt_latency == TOPO_RTLAT_RCCL ? "RCCL" : "NCCL",
               topo_nccl_latency(TOPO_NCCL_HW_NVLINK, TOPO_NCCL_SIMPLE,
                                 t->rt_latency == TOPO_RTLAT_RCCL),
               topo_nccl_latency(TOPO_NCCL_HW_NET, TOPO_NCCL_SIMPLE,
                                 t->rt_latency == TOPO_RTLAT_RCCL),
               topo_nccl_base_latency(TOPO_NCCL_SIMPLE));
    const cJSON *e;
    int i = 0;
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(j, "links");
    const cJSON *sws = cJSON_GetObjectItemCaseSensitive(j, "switches");
    printf("links     %s\n", cJSON_GetArraySize(links) ? "(node 0's, one direction each)" : "none");
    cJSON_ArrayForEach(e, links) print_group("link group", i++, e, "pairs", -1);
    i = 0;
    printf("switches  %s\n", cJSON_GetArraySize(sws) ? "(node 0's)" : "none");
    cJSON_ArrayForEach(e, sws) print_group("switch", i++, e, "ranks", -1);
    i = 0;
    printf("nics      %d per node%s\n",
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "nics")),
           t->rails ? " (NIC i of every node is on rail i)" : "");
    if (t->nnodes > 1)
        printf("fabric    %s\n", t->rails ? "rails: a NIC reaches only its own rail of the other "
               "nodes" : "fat-tree: every NIC reaches every other node's NICs");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "nics")) {
        print_group("nic", i, e, "ranks", i);
        i++;
    }
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(j, "collnet");
    if (cn) {
        printf("collnet   the network reduces (NCCL's CollNet, SHARP; --algo nccl weighs it%s): "
               "reductions ", t->nnodes > 1 ? "" : " from two nodes on");
        print_names(cJSON_GetObjectItemCaseSensitive(cn, "reductions"));
        printf(", dtypes ");
        print_names(cJSON_GetObjectItemCaseSensitive(cn, "dtypes"));
        printf(", allgather %s, reducescatter %s\n      source: %s\n",
               t->collnet.allgather ? "yes" : "no", t->collnet.reducescatter ? "yes" : "no",
               jstr(cn, "source"));
    }
    cJSON_Delete(j);
    printf("bounds    lower bound (us)       1 MiB         1 GiB\n");
    for (int k = 0; k < COLL_COUNT; k++) {
        bound_model b;
        tc_err be;
        tc_err_clear(&be);
        if (bound_compute(t, (coll_kind)k, &b, &be))
            printf("  %-14s n/a: %s\n", coll_name((coll_kind)k), be.msg);
        else
            printf("  %-14s %20.3f %13.3f\n", coll_name((coll_kind)k),
                   bound_time_us(&b, 1048576.0), bound_time_us(&b, 1073741824.0));
    }
    topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return bad("%s", "a command is needed: import or show");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        (argc > 2 && (!strcmp(argv[1], "import") || !strcmp(argv[1], "show")) &&
         (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))) {
        char *help = args_help(&SPEC);
        fputs(help, stdout);
        free(help);
        return 0;
    }
    /* argv + 1: the command stands where args_parse skips a program's name */
    if (!strcmp(argv[1], "import")) return cmd_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "show")) return cmd_show(argc - 1, argv + 1);
    return bad("unknown command '%s' (import, show)", argv[1]);
}
