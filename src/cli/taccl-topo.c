/* taccl-topo — make a topology JSON from the machine's own description.
 *
 * Why a third tool: describing the cluster is a user's first step, and
 * every GPU machine writes its own description in NCCL's format
 * (NCCL_TOPO_DUMP_FILE; RCCL the same with xGMI).  `taccl-topo import`
 * reads such a dump and writes our topology JSON, every figure derived by
 * NCCL's or RCCL's rules (src/model/topo_nccl.h; docs/topo-import.md).
 *
 * This file only parses the command line and writes the result: the
 * importer is src/model/topo_nccl.c.  Exit 0 written; 2 the input or a
 * flag cannot be used (one line on stderr, nothing written). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/topo_nccl.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/paths.h"

static const char usage[] =
    "usage: taccl-topo import DUMP.xml -o TOPO.json [--name NAME] [--nodes N]\n"
    "                  [--gpu v100|a100|h100|b200|mi250|mi300x]\n"
    "                  [--nvlink switch:N|mesh:N|cube-mesh|none] [--net BW]\n";

static const char help[] =
    "Read an NCCL or RCCL topology dump (NCCL_TOPO_DUMP_FILE) or topology file\n"
    "(NCCL_TOPO_FILE) and write the topology JSON taccl-synth and taccl-run read.\n"
    "Every figure comes from NCCL's (RCCL's) own rules and its \"source\" names the\n"
    "rule (file:line@commit) and the dump's field (docs/topo-import.md).\n"
    "\n"
    "  -o TOPO.json     where to write (written whole or not at all)\n"
    "  --name NAME      topology name (default: the dump's file name)\n"
    "  --nodes N        nodes of this machine (default: the dump's hosts, host_hash)\n"
    "  --gpu G          the GPU model, for a file with no <gpu> elements\n"
    "  --nvlink SPEC    the GPU links, for a file with none: switch:N (N NVLinks per\n"
    "                   GPU into NVSwitch), mesh:N (N links between every pair),\n"
    "                   cube-mesh (DGX-1/NDv2 hybrid cube-mesh), none (PCI only)\n"
    "  --net BW         NIC bandwidth with its unit, e.g. 200Gb/s: for NICs the file\n"
    "                   gives no speed, or to override it\n"
    "\n"
    "A partial file is refused with one line naming what is missing and the option\n"
    "that supplies it; a malformed one with FILE:LINE: element: problem. Exit 0\n"
    "written, 2 unusable input or flag (nothing written).\n";

static int bad(const char *fmt, const char *v)
{
    fprintf(stderr, "taccl-topo: ");
    fprintf(stderr, fmt, v);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static int cmd_import(int argc, char **argv)
{
    topo_nccl_opts o;
    topo_nccl_opts_init(&o);
    const char *in = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "-o") || !strcmp(a, "--name") || !strcmp(a, "--nodes") ||
                    !strcmp(a, "--gpu") || !strcmp(a, "--nvlink") || !strcmp(a, "--net");
        if (takes && !v) return bad("%s needs a value", a);
        if (takes) i++;
        if (!strcmp(a, "-o")) out = v;
        else if (!strcmp(a, "--name")) o.name = v;
        else if (!strcmp(a, "--gpu")) o.gpu = v;
        else if (!strcmp(a, "--nvlink")) o.nvlink = v;
        else if (!strcmp(a, "--net")) o.net = v;
        else if (!strcmp(a, "--nodes")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > 4096) return bad("--nodes: expected 1..4096, got '%s'", v);
            o.nodes = (int)n;
        } else if (a[0] == '-' && a[1]) return bad("unknown option %s", a);
        else if (in) return bad("one dump only, got a second: %s", a);
        else in = a;
    }
    if (!in) return bad("%s", "import needs a DUMP.xml");
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

int main(int argc, char **argv)
{
    if (argc < 2) return bad("%s", "a command is needed: import");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        (argc > 2 && !strcmp(argv[1], "import") &&
         (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))) {
        printf("%s\n%s", usage, help);
        return 0;
    }
    if (!strcmp(argv[1], "import")) return cmd_import(argc - 2, argv + 2);
    return bad("unknown command '%s' (import)", argv[1]);
}
