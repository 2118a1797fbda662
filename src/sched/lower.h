/* lower.h — turn an abstract algorithm (timed chunk sends) into an MSCCL program.
 *
 * The synthesizer says which chunk crosses which (src, dst) pair and when
 * (algo.h); the runtimes need buffers, threadblocks, steps and
 * dependencies (sched/program.h).  This module decides all of them so that
 * the program does what the algorithm does, in the order it does it:
 *
 * Buffers (out of place: inplace="0" outofplace="1").  An input chunk
 * (origin, index) is i[index] at its origin; at every destination the
 * collective names (coll_in_dests) it lands in o[out_index]; at a rank that
 * only relays it, in a scratch slot s[k] allocated in order of arrival.
 * Where the collective keeps a chunk on its own origin (AllGather's own
 * chunk, AllToAll's chunk to itself) one `cpy` i->o per contiguous run runs
 * in a local tb (send=-1 recv=-1) of its own, so it never delays a send.
 * nchunksperloop C: AllGather n * chunks_per_rank; AllToAll, ReduceScatter
 * and AllReduce chunks_per_rank (algo.h: chunks_per_rank counts *input*
 * chunks per rank, and coll_shape gives AllGather C/n inputs, the others C).
 *
 * Reductions (ReduceScatter, AllReduce).  A send's `index` names the input
 * chunk whose partial sum moves; `origin` is ignored.  A send with
 * reduce=1 carries the sender's current partial of that chunk (its input if
 * it has received none, else its accumulation slot); the receiver adds it
 * into its own copy with `rrc`: the first contribution reads its input
 * (src=i[index]) and writes the accumulation slot (o at the chunk's final
 * owner; at every rank for AllReduce; scratch at a ReduceScatter relay),
 * later ones accumulate in place, serialized by dependencies.  AllReduce
 * sends with reduce=0 (the AllGather phase) move the finished o[index] to
 * the receiver's o[index].  ReduceScatter sends with reduce=0 and
 * AllGather/AllToAll sends with reduce=1 are refused.  A final owner that
 * receives nothing (one rank) gets a cpy i->o.
 *
 * Order.  Sends that belong together (same src, dst and group >= 0) form
 * one transfer.  Transfers are put in a causal order (a transfer after
 * the ones that brought it its data; on one connection, in t_send order
 * and never more than 8 sends ahead of the receives, the runtime's FIFO;
 * the receives of one partial sum on one rank in t_arrive order; ties by
 * time, then input order), and each rank performs its operations in that
 * order: sends ranked at t_send, receives at t_arrive.  On one connection
 * the k-th send thus pairs with the k-th receive, and no dependency ever
 * points forward, so the program cannot deadlock.  The executor serves a
 * resource in the order transfers ask for it, so each send also waits
 * (a dependency, with a nop if it needs two) for the same rank's previous
 * send through the same switch out port or NIC; a forward is fused into
 * rcs/rrcs only when the schedule sends it the moment it arrives.
 *
 * Threadblocks.  Per rank: one tb per (channel, send peer) and one per
 * (channel, recv peer); then a receiving tb (from q) and a sending tb (to
 * q') on the same channel are merged into one tb (recv=q send=q') when
 * chunks it receives are forwarded to q' and by nothing else, and their
 * operations do not overlap in time (so merging cannot delay either),
 * greedily by the number of such forwards; in a merged tb a receive
 * immediately followed by the forward of exactly the slots it wrote
 * becomes one `rcs` (`rrcs` for a reduction).  A receive whose data other
 * tbs also read is never fused: they would wait for the forward's
 * transfer too.  Every other ordering is a dependency: per chunk slot the
 * last writer and the readers since are tracked, so a step waits for the
 * step that wrote what it reads (read after write), and a write waits for
 * earlier writes and reads of its slots (write after write/read), when
 * those are in another tb.  A step with several dependencies gets one
 * `nop` per extra dependency right before it; the depended-on steps get
 * hasdep=1.  Tb ids per instance: by channel, the local tb first, then by
 * recv peer and send peer (-1 last); when a rank has more than 128 tbs,
 * the depended-on ones first so that they fit depid <= 127.
 *
 * Channels.  Sends on one (src, dst) that overlap in time (a link with
 * multiplicity > 1, or a relaxed schedule) go on different channels
 * (interval colouring, lowest channel first) so they can run at once.
 * More than 32 peers of a rank are spread over channel blocks: the ring
 * offsets ((dst - src) mod n) that some connection uses, in ascending order,
 * 32 to a block, keeping at most 32 tbs with a send peer and 32 with a recv
 * peer per channel (a rank talking to few peers far apart needs one block).  A connection whose steps would exceed
 * the steps-per-tb limit is cut into consecutive slices on further
 * channels, each slice's first send waiting for the previous slice's last.
 *
 * Contiguity.  A transfer's chunks are ordered by their source slot and
 * become one step with cnt > 1 where they are contiguous in the source
 * buffer, in the destination buffer (scratch is allocated contiguously, so
 * only o and i can break it) and, for reductions, in the local operand.
 * At an origin that also keeps its chunk in o (AllGather) a transfer may
 * read the chunk from o (after the cpy) instead of i when that gives fewer
 * runs.  A transfer that still is not contiguous is either
 *  - split into maximal contiguous runs, each one step on the same
 *    connection (one alpha each), or
 *  - staged: its sources are gathered into contiguous scratch by local
 *    `cpy` steps in the sending tb, it travels as one step into contiguous
 *    scratch, and local steps in the receiving tb put it in place (`cpy`
 *    into o; for a reduction `re` into the accumulation slot, or, for a
 *    first contribution, `re` of the receiver's input into the staged
 *    partial, which then is the accumulation slot);
 * whichever costs less: (runs - 1) alphas of the route against the copied
 * (reduced) bytes at the topology's copy (reduce) bandwidth.  Staging needs
 * size_bytes and a topology to weigh this; without them transfers split.
 * cnt is at most 71 (runs are cut there; larger groups are never staged).
 *
 * Instances (k > 1).  The whole program is replicated k times; instance j
 * uses channels j*B .. j*B+B-1 (B the channels of one instance) and tbs
 * j*T .. j*T+T-1, and handles 1/k of every chunk: nchunksperloop, i, o and
 * s are k times larger.  Chunk X of a buffer maps to, with P the chunks of
 * one rank's block (C/n; C for AllReduce), X' = (X / P) * P * k + j * P +
 * X % P (blocked within each rank's block, so the collective's layout
 * holds), and scratch s[X] to s[j * S + X] (S the rank's scratch of one
 * instance).  Runs are therefore also cut at block boundaries.
 *
 * Limits (check.h, the runtime's entry in model/runtime.c): at most 256
 * steps per tb (64 for the newer executor, none with RT_UNLIMITED), cnt <
 * 72, depid <= 127, <= 32 channels, <= 32 tbs with a send (recv) peer per
 * channel and rank, and at most 4095 XML elements a rank makes the
 * runtimes' parser store (1 <algo>, every <gpu>, its tbs and steps:
 * parser_nodes).  What slicing and peer blocks
 * cannot fit is refused with TC_INPUT naming the limit.
 *
 * Output is deterministic: the same algorithm and options give the same
 * program, byte for byte once written. */
#ifndef TC_LOWER_H
#define TC_LOWER_H

#include "../model/topo.h"
#include "algo.h"
#include "../util/err.h"
#include "program.h"

/* What the lowering made of one send, for a caller that wants to time the
 * program it got (the synthesizer re-times its prediction with these). */
typedef struct {
    int run;                /* the contiguous run of its transfer it travels in:
                               0 for a transfer kept whole or staged, r for the
                               r-th piece of a split one */
    double pre_us;          /* staging: the sender's local copy of this chunk
                               into contiguous scratch before the transfer */
    double post_us;         /* staging: the receiver's local reduction of this
                               chunk (and copy into place) before it can be sent
                               on */
    double place_us;        /* staging: the receiver's local copy of this chunk
                               into place; later sends read the staging slot, so
                               it delays only the chunk's final place */
} lower_note;

typedef struct {
    const char *name;       /* <algo name>; NULL = "taccl-<collective>-<n>" */
    const char *proto;      /* Simple | LL | LL128; NULL = Simple */
    int instances;          /* k >= 1 (0 = 1) */
    runtime runtime;        /* whose limits to respect (default RT_MSCCL;
                               RT_UNLIMITED: none, for simulation only) */
    long long size_bytes;   /* size to record (0 = none); must be a multiple
                               of the resulting nchunksperloop.  Also what
                               weighs splitting against staging (above) */
    lower_note *notes;      /* NULL, or a->nsends entries to fill in: what
                               became of each send (all zero when every
                               transfer went whole) */
    int for_reduction;      /* lower_precheck: the routing is the AllGather a
                               ReduceScatter or AllReduce is built from (its
                               reversed sends pair differently: the tbs bound
                               falls back to one tb per peer one way) */
} lower_opts;

void lower_opts_default(lower_opts *o);

/* The limits routing a (one send per hop, as stage 1 gives it) settles
 * before stages 2 and 3 run (lower_limits.c): its peer blocks x o's
 * instances within MAXCHANNELS, and each rank's tbs (one per send peer and
 * recv peer, paired at best) x instances within the loader's tbs per GPU
 * (legacy 216, newer executor 1024), and the tbs others wait on (a recv
 * peer whose chunks go on to several ranks) x instances within depid 127.
 * TC_OK (always for a runtime with no loader: RT_UNLIMITED), or
 * TC_INPUT naming the limit and the --instances that would fit. */
int lower_precheck(const algo *a, const lower_opts *o, tc_err *err);

/* Lower `a` for topology `t` (which may be NULL; when given, every send
 * must have a route in it and the algorithm may not have more ranks).
 * Returns a new program (prog_free), recording predicted_us =
 * a->predicted_us and size_bytes; the topology is not attached (the
 * caller may attach a copy with prog_set_topo).  On failure returns NULL
 * with err set: TC_INPUT for an algorithm that cannot be lowered (bad
 * ranks or indices, a chunk sent before it arrives or never delivered, an
 * unsupported reduce flag) or a runtime limit that cannot be met. */
prog *lower_algo(const algo *a, const topo *t, const lower_opts *o, tc_err *err);

#endif
