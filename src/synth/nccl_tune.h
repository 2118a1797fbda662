/* nccl_tune.h — NCCL's tuning model: which algorithm, protocol, channel
 * count and chunk size NCCL picks for one collective call.
 *
 * `taccl-synth --algo nccl` builds the schedule NCCL would run; this module
 * answers "what would NCCL choose" from a description of the communicator
 * (ranks, nodes, GPU generation, the channels its topology search found and
 * their bandwidths).  Every constant and rule is NCCL's own, from
 * NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel: base and hardware
 * latencies, the per-protocol bandwidth refinements, the LL/LL128 caps per
 * GPU generation; ncclTopoGetAlgoTime: the tree correction factors and the
 * ring plateau), src/enqueue.cc (topoGetAlgoInfo: fewer channels for small
 * calls by thread thresholds; the chunk size per protocol) and
 * src/include/device.h, comm.h, collectives.h and src/init.cc (NCCL_STEPS,
 * thread counts and thresholds, buffer sizes).  docs/formats.md lists them.
 *
 * What is not modelled, and so never chosen: NVLS, CollNet and PAT (they
 * need NVLink SHARP, a SHARP network, or one GPU per node), PCI-only nodes
 * (every bundled GPU machine is NVLink inside a node), and the tuner
 * plugins.  Multi-node figures are NCCL's for an Intel host CPU. */
#ifndef TC_NCCL_TUNE_H
#define TC_NCCL_TUNE_H

#include "../model/collective.h"
#include "../model/cost.h"
#include "../model/topo.h"

typedef enum { NCCL_TREE, NCCL_RING, NCCL_NALGO } nccl_algo;

/* The communicator as NCCL's tuning model sees it. */
typedef struct {
    int nranks, nnodes;
    topo_arch arch;         /* TOPO_ARCH_UNKNOWN is taken as Volta */
    int nchannels;          /* ring channels after NCCL's duplication */
    double bw_intra;        /* GB/s per channel inside a node */
    double bw_inter;        /* GB/s per channel between nodes (on two nodes
                               NCCL's ring runs at the lower of the two, its
                               tree inside a node at most twice bw_inter) */
    int only_proto;         /* 1 + a cost_proto: the only protocol enabled (as
                               NCCL_PROTO=P: src/graph/tuning.cc turns the
                               others off); 0 = every protocol NCCL offers */
} nccl_comm;

/* One call's choice. */
typedef struct {
    nccl_algo algo;
    cost_proto proto;
    int nchannels;          /* channels used for this call */
    long long chunk_bytes;  /* data bytes of a chunk (a ring step's block) */
    long long slice_bytes;  /* data bytes of a slice: what moves as one piece */
    double time_us;         /* NCCL's own estimate of the chosen pair */
    double table_us[NCCL_NALGO][COST_NPROTO];   /* every estimate; < 0 = not available */
} nccl_choice;

const char *nccl_algo_name(nccl_algo a);    /* "tree", "ring" */

/* NCCL's estimate (lat + bytes / bw, us) of algorithm a with protocol p
 * for collective k on `bytes` (the larger per-rank buffer, as NCCL's
 * nBytes); < 0 when NCCL does not offer the pair (tree for anything but
 * AllReduce; AllToAll, which NCCL runs as point-to-point). */
double nccl_time_us(const nccl_comm *c, coll_kind k, nccl_algo a, cost_proto p, long long bytes);

/* NCCL's pick for collective k (not AllToAll) on `bytes`: the fastest
 * estimate (among c->only_proto's when set), then the channel count and
 * chunk size for it.  Returns 0, or -1 when nothing is available (k is
 * AllToAll, or the one protocol allowed is not offered). */
int nccl_choose(const nccl_comm *c, coll_kind k, long long bytes, nccl_choice *out);

/* NCCL's point-to-point plan for one peer's `bytes` (AllToAll): LL up to
 * its P2P LL threshold, else Simple; chunk = the P2P chunk size for the
 * hop (NVLink inside a node, the network between nodes). */
cost_proto nccl_p2p_proto(long long bytes);
long long nccl_p2p_chunk_bytes(int across_nodes, long long bytes, cost_proto p);

#endif
