/* propose.h — sketches proposed from a topology, for a plan (`taccl-synth
 * --plan`; after the user's own sketches, unless --no-propose).
 *
 * TACCL leaves "which sketch for which size" to the user; these are the
 * patterns its published sketches follow, derived from the machine:
 *   - inside a node: the node's switch as one hyperedge, uc-max for small
 *     sizes (many connections, few hops) and uc-min for large ones (few
 *     connections, less contention); a node of links has no intra-node
 *     sketch;
 *   - between nodes: each GPU through its own NIC to the same GPU of the
 *     next node where every GPU has one; where a NIC serves a group of
 *     GPUs, the group's last GPU sends for the group to the first GPU of
 *     the same group on the other node (TACCL's dgx2-sk-1); one NIC for the
 *     whole node: its first GPU sends to its second on the other node
 *     (TACCL's ndv2-sk-1); and where a NIC serves a group, also every GPU
 *     to the same GPU of the other nodes with its own chunks (rails
 *     through the shared NIC: every GPU's port then takes NIC traffic,
 *     which the bound asks for at large sizes: DGX-2 x2 AllGather at
 *     1 GiB 0.982 of the bound with chunkup 2, against 0.950 for the
 *     group pattern, whose non-receiving GPUs take everything through
 *     the switch), and rails to any GPU of the same group on the other
 *     nodes at chunkup 2 (the NICs' spare capacity then takes some chunks
 *     a second time, straight to a GPU a relay of its node would
 *     otherwise serve: route.h, SPARE NICS; DGX-2 x2 ReduceScatter at
 *     1 GiB 0.982 of the bound, against 0.975 for rails);
 *   - symmetry from the node structure: the nodes are copies (rotate by a
 *     node) and, on a switch with a regular NIC layout, the NIC groups are
 *     too (rotate by a group);
 *   - input_chunkup 1 for small sizes, 1, 2 and 4 for large, and 8 on a
 *     node of links (TACCL ships chunkup variants of its sketches; at
 *     1 GiB a smaller chunk shortens the pipeline's fill and drain:
 *     ndv2-x2-sk-1 0.976 of the bound with chunkup 4, 0.987 with 8).
 * Then the packed trees (synth/pack, `--route trees`: no MILP, seconds):
 * a sketch that restricts nothing (nnodes and chunkup alone), so the trees
 * may take any NIC pair and every GPU's switch port and NIC, at chunkup
 * 1, 2, 4, 8 and 16 while ranks x chunkup <= PROPOSE_TREES_CHUNKS (below
 * PROPOSE_TREES_RANKS ranks), for
 * the anchors from 16 MiB, first (the MILP sketches after them take the
 * budget's rest).  Why: the bound on several NVSwitch nodes asks every
 * GPU to take a share of its data through its NIC (DGX H100 x2: 450 GB/s
 * port + 50 GB/s NIC), which the relay patterns above forbid, and the
 * routing MILP does not leave its seed within its limit there (DGX H100
 * x4 AllGather at 1 GiB: the plan's pick 2717.6 us where the flat trees
 * take 2401.4); a node of links whose in-links are 1:1:2:2 (DGX-1) needs
 * 7 x chunkup divisible by 6 for equal shares, and powers of two only
 * come near: 0.933 of the bound at chunkup 2 and 4, 0.982 at 16 (alpha as
 * latency).
 * Each proposal is checked against the topology (sketch_check); one whose
 * symmetry does not hold is kept without it. */
#ifndef TC_PROPOSE_H
#define TC_PROPOSE_H

#include "../model/topo.h"

#define PROPOSE_MAX 13

/* The packed-trees proposals' chunks per collective at most: ranks x
 * chunkup (the trees and their lowering grow with it). */
#define PROPOSE_TREES_CHUNKS 128
/* ... and on fewer ranks than this (from SYNTH_HIER_RANKS, 64, a sketch's
 * stage 1 is hierarchical, which the trees are not part of) */
#define PROPOSE_TREES_RANKS 64

typedef struct {
    char name[96];          /* e.g. "dgx2-x2-uc-min-cup2": a safe file name
                               (file_safe_name), distinct within a proposal */
    char *json;             /* the sketch (malloc'd), as a file would hold it */
    int small;              /* for anchors up to 64 KiB */
    int large;              /* for anchors from 1 MiB */
    int trees;              /* the packed trees alone (--route trees), for
                               anchors from 16 MiB */
} proposal;

/* Up to PROPOSE_MAX proposals for collective-agnostic sketches of t (the
 * plan sets the collective); returns how many.  trees: also the packed
 * trees' (a plan whose range holds an anchor from 16 MiB, of a collective
 * that is a tree's).  Free with proposals_free. */
int propose_sketches(const topo *t, int trees, proposal *out);
void proposals_free(proposal *p, int n);

#endif
