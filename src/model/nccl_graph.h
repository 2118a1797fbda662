/* nccl_graph.h — the rings and trees NCCL built, read from the file
 * NCCL_GRAPH_DUMP_FILE makes it write (the format NCCL_GRAPH_FILE reads).
 *
 * Why: `taccl-synth --algo nccl` reconstructs NCCL's channels from the
 * topology; a user whose NCCL has run on the machine can give the channels
 * it really built instead (`--graph GRAPH.xml`), so "x NCCL" is against
 * what their NCCL runs.
 *
 * The format (NVIDIA/nccl 5067397, src/graph/search.cc:891-1032, written by
 * ncclTopoGetXmlFromGraphs, read by ncclTopoGetGraphFromXml; version check
 * src/graph/xml.cc:1236-1243):
 *   <graphs version="1">
 *     <graph id= pattern= crossnic= nchannels= speedintra= speedinter=
 *            latencyinter= typeintra= typeinter= samechannels=>
 *       <channel> [<net dev=/>] <gpu dev= [rank=]/>... [<net dev=/>] </channel>
 *   </graph>...</graphs>
 * One node's view: graph id 0 is the ring graph, 1 the tree graph (others:
 * CollNet, NVLS; src/include/graph.h:171).  A channel lists the node's GPUs
 * in ring (chain) order, with the NIC it enters by first and the NIC it
 * leaves by last when the job spans nodes (sjeaugey, NVIDIA/nccl issue
 * 915).  A gpu's `rank` attribute, when present, is its NCCL rank; else
 * `dev` is its device (search.cc:908-921).  dev is hexadecimal with "0x"
 * since NCCL 2.21.5 (written "%#lx", read base 16), decimal before: a
 * value with "0x" is read as hex, any other as decimal.  The system id in
 * dev's top 8 bits (NCCL_TOPO_ID, src/graph/topo.h:89-93) is dropped.
 *
 * Checked against a topology: every GPU index and rank within one node of
 * it (our topology numbers a node's GPUs as NCCL ranks them, topo-import.md),
 * a ring or tree channel listing each GPU of the node exactly once, a net
 * dev within the node's NICs (NIC i of our node = NCCL's net dev i), two
 * nets or none per channel, nchannels equal to the channels listed, the
 * ring graph's pattern RING and the tree graph's a tree pattern.  A
 * refusal is TC_INPUT, "FILE:LINE: element: what" (the element or the
 * attribute at fault). */
#ifndef TC_NCCL_GRAPH_H
#define TC_NCCL_GRAPH_H

#include "../util/err.h"
#include "topo.h"

/* NCCL_TOPO_PATTERN_* (src/include/graph.h:160-169). */
enum {
    NCCL_PATTERN_BALANCED_TREE = 1,
    NCCL_PATTERN_SPLIT_TREE = 2,
    NCCL_PATTERN_TREE = 3,
    NCCL_PATTERN_RING = 4,
    NCCL_PATTERN_NVLS = 5,
    NCCL_PATTERN_COLLNET_DIRECT = 6
};

/* One graph (ring or tree) as read. */
typedef struct {
    int present;            /* a <graph> with this id and at least one channel */
    int pattern;
    int nchannels;
    int crossnic;
    double speed_intra, speed_inter;    /* GB/s per channel, NCCL's bwIntra/bwInter */
    int line;               /* of its <graph> */
    int *gpu;               /* [nchannels * ranks_per_node]: local GPU at each position */
    int *net;               /* [nchannels * 2]: NIC entered by, left by; -1 none */
} nccl_graph_set;

typedef struct {
    char *label;            /* the file's name, for notes */
    int ranks_per_node;
    nccl_graph_set ring;    /* graph id 0 */
    nccl_graph_set tree;    /* graph id 1 */
    int others;             /* other graphs with channels (CollNet, NVLS): checked, unused */
} nccl_graph;

/* Read path and check it against t.  NULL with err set on failure. */
nccl_graph *nccl_graph_load(const char *path, const topo *t, tc_err *err);
/* The same from text in memory; label names it in messages. */
nccl_graph *nccl_graph_parse(const char *text, size_t len, const char *label, const topo *t,
                             tc_err *err);
void nccl_graph_free(nccl_graph *g);

/* "RING", "TREE", "SPLIT_TREE", "BALANCED_TREE", "NVLS", "COLLNET_DIRECT",
 * or "?" */
const char *nccl_graph_pattern_name(int pattern);

#endif
