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
 * NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) is modelled on
 * one node, where NCCL runs it for AllReduce, AllGather and ReduceScatter
 * (tuning.cc:293-316, 424-426; enqueue.cc:2004-2008, 2085-2090: across
 * nodes it needs CollNet), and NVLSTree (NVLS inside each node, trees
 * between the nodes) for AllReduce on several nodes (tuning.cc:301-323,
 * 427-428, 502); docs/nvls.md.  PAT (AllGather and ReduceScatter with one
 * GPU per node, tuning.cc:215-223, 302-304, 337, 429-433) too.
 * CollNet (CollNetDirect, CollNetChain, and NVLS across nodes: a network
 * that reduces, SHARP) where the topology declares one ("collnet"),
 * from the CollNet graphs as nccl_collnet_graphs() restates NCCL's search
 * for them (tuning.cc:305-306, 338-349, 351-373, 418-423, 503-509).
 * What is not modelled, and so never chosen: PCI-only nodes (every bundled GPU machine is NVLink inside a node), and
 * the tuner plugins.  Multi-node figures are NCCL's for an Intel host CPU. */
#ifndef TC_NCCL_TUNE_H
#define TC_NCCL_TUNE_H

#include "../model/collective.h"
#include "../model/cost.h"
#include "../model/topo.h"

typedef enum {
    NCCL_TREE, NCCL_RING, NCCL_NVLS, NCCL_NVLS_TREE, NCCL_PAT,
    NCCL_COLLNET_DIRECT, NCCL_COLLNET_CHAIN, NCCL_NALGO
} nccl_algo;

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
    int nvls_graph_channels;    /* NVLS graph's channels (search.cc:1126-1137:
                                   one per GPU on one node, one per GPU with
                                   its own NIC across nodes); 0 = no NVLS */
    double nvls_bw_intra;       /* its bwIntra and bwInter (GB/s per channel) */
    double nvls_bw_inter;
    int nvls_channels;          /* comm->nvlsChannels: the CTAs an NVLS call
                                   runs (nvls.cc:155-157, 202-238) */
    /* CollNet (a network that reduces: NCCL_COLLNET_ENABLE=1 and a CollNet
     * plugin; topo.h's topo_collnet).  0 = off: CollNetDirect and
     * CollNetChain are not offered, nor NVLS across nodes (tuning.cc:
     * 503-506).  On, the graphs init.cc:1189-1206 searches: */
    int collnet;
    int collnet_ag, collnet_rs; /* the plugin's iallgather / ireducescatter */
    int collnet_heads;          /* comm->collNetHeadsNum: a node's heads, one
                                   GPU per CollNet NIC (coll_net.cc:1705-1727) */
    int nvswitch;               /* an NVSwitch joins a node's GPUs (nvsCount
                                   > 0: CollNetDirect needs it, tuning.cc:509) */
    int cd_channels;            /* CollNetDirect's graph: channels (one per
                                   head, at most 8), bwIntra, bwInter */
    double cd_bw_intra, cd_bw_inter;
    int cc_channels;            /* CollNetChain's: the ring's channels */
    double cc_bw_intra, cc_bw_inter;
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

/* "tree", "ring", "nvls", "nvlstree", "pat", "collnetdirect", "collnetchain" */
const char *nccl_algo_name(nccl_algo a);

/* NCCL's NVLS graph on one node of `ngpus` GPUs of generation `arch`,
 * each with `links` NVLinks to the NVSwitch: its bwIntra, the fastest
 * speed of NCCL's intra-node speed array whose channels (one per GPU,
 * twice on the channel's head GPU) fit the GPU's NVLink bandwidth as NCCL
 * counts it (links x SM90/SM100_NVLINK_BW), and its bwInter, which pass 2
 * raises while below twice bwIntra (search.cc:410-440, 1057-1067,
 * 1160-1175, 1255-1280).  0 when NCCL has no NVLS there (before Hopper,
 * fewer than 2 GPUs, or no speed fits). */
int nccl_nvls_graph(topo_arch arch, int ngpus, int links, double *bw_intra, double *bw_inter);

/* CollNet's graphs as NCCL's search finds them on a node of `ngpus` GPUs
 * of generation c->arch with `heads` NICs, each local to one GPU (net_gbps,
 * the slower of the NIC and its PCIe path to the GPU), each GPU's NVLinks gpu_gbps as
 * NCCL counts them, its ring graph `ring_channels` channels (after the
 * search's duplication): CollNetDirect one channel per head (at most 8,
 * NCCL_MAX_DIRECT_ARITY + 1), the head exchanging with every other GPU at
 * bwIntra / (ngpus - 1) (ncclTopoSearchTryCollnetDirect); CollNetChain the
 * ring's channel count as chains from a NIC through the node's GPUs (the
 * tree pattern).  Speeds: NCCL's inter-node array; pass 1 one speed for
 * bwIntra and bwInter, the fastest a NIC (shared by the channels on it)
 * and the NVLinks carry; then the channel duplication (search.cc:
 * 1036-1049) and pass 2, bwIntra raised while below twice bwInter and the
 * NVLinks still carry it (search.cc:1278-1281).  Fills c's cd_* and cc_*;
 * a graph NCCL would not find gets 0 channels. */
void nccl_collnet_graphs(nccl_comm *c, int ngpus, int heads, double gpu_gbps, double net_gbps,
                         int ring_channels);

/* comm->nvlsChannels for arch on nnodes nodes (nvls.cc:155-157, 202-238). */
int nccl_nvls_channels(topo_arch arch, int nnodes);

/* NCCL's NVLS chunk size (NCCL_NVLS_CHUNKSIZE default, nvls.cc:160). */
#define NCCL_NVLS_CHUNK_BYTES (128 * 1024)

/* NCCL's estimate (lat + bytes / bw, us) of algorithm a with protocol p
 * for collective k on `bytes` (the larger per-rank buffer, as NCCL's
 * nBytes); < 0 when NCCL does not offer the pair (tree for anything but
 * AllReduce; AllToAll, which NCCL runs as point-to-point). */
double nccl_time_us(const nccl_comm *c, coll_kind k, nccl_algo a, cost_proto p, long long bytes);

/* NCCL's pick for collective k (not AllToAll) on `bytes`: the fastest
 * estimate (among c->only_proto's when set), then the channel count and
 * chunk size for it.  Returns 0, or -1 when nothing is available (k is
 * AllToAll, or the one protocol allowed is not offered).  nccl_choose_ex
 * leaves out the algorithms of `skip` (bits 1u << nccl_algo; their
 * estimates stay in table_us): NCCL's best choice among those an output
 * can hold (MSCCL XML no switch operations; NVLSTree written on two
 * nodes only).  PAT's pick uses the channels NCCL's scheduler spreads the
 * call over and PAT's chunk (below). */
int nccl_choose(const nccl_comm *c, coll_kind k, long long bytes, nccl_choice *out);
int nccl_choose_ex(const nccl_comm *c, coll_kind k, long long bytes, unsigned skip,
                   nccl_choice *out);

/* How many of `nchannels` channels NCCL's scheduler spreads one call of
 * `bytes` (the larger per-rank buffer) over: its traffic (one rank's send
 * bytes times nranks for AllGather and ReduceScatter, 2 for AllReduce), at
 * least 32 KiB, is shared by the channels in cells of 32 KiB of traffic, so
 * a small call takes fewer (enqueue.cc:91-102, 585-618, 655-702).  Used for
 * PAT, which no thread threshold thins. */
int nccl_sched_channels(coll_kind k, int nranks, int nchannels, long long bytes);

/* PAT's chunk (enqueue.cc:2295-2298): one Simple buffer step (512 KiB),
 * halved down to 64 KiB while nchannels x chunk x 32 (AllGather) or x 16
 * (ReduceScatter) exceeds `bytes`. */
long long nccl_pat_chunk_bytes(coll_kind k, int nchannels, long long bytes);

/* PAT's aggregation, postFreq: how many ranks' pieces one buffer step
 * carries to a peer (collectives.h:531-535, 800-804): the largest power of
 * two a, at most nranks / 2, reached by doubling while chunk_bytes /
 * (channel_bytes x a) >= 2, where channel_bytes is one rank's share of the
 * channel (1 when it is larger than half the chunk). */
int nccl_pat_agg(long long chunk_bytes, long long channel_bytes, int nranks);

/* NCCL's point-to-point plan for one peer's `bytes` (AllToAll): LL up to
 * its P2P LL threshold, else Simple; chunk = the P2P chunk size for the
 * hop (NVLink inside a node, the network between nodes). */
cost_proto nccl_p2p_proto(long long bytes);
long long nccl_p2p_chunk_bytes(int across_nodes, long long bytes, cost_proto p);

#endif
