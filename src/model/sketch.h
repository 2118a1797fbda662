/* sketch.h — a communication sketch: the designer's guidance for synthesis.
 *
 * TACCL's sketch format, read as TACCL reads it so its published sketches
 * load unchanged, plus a few keys of ours (the collective, the size, the
 * solver).  A sketch says which ranks share a switch and how the routing
 * MILP should treat it (uc-min / uc-max), which local ranks may send to
 * which local ranks of OTHER nodes (the relay), through which sender each
 * rank's chunks must leave its node, which rotations of the ranks are
 * symmetries, and into how many pieces each chunk is cut.  See
 * sketches/README.md for the file format and sketch.c for every rule.
 *
 * Ranks in a sketch are LOCAL (0 .. ranks_per_node-1) except in
 * symmetry_offsets, which act on global ranks (node * ranks_per_node +
 * local), as in TACCL.
 *
 * Use: sketch_load() or sketch_parse(), then sketch_check() against the
 * topology it will be synthesized for (that is where rank ranges, node
 * counts, NICs, switches, symmetries and the size are judged), then read the
 * fields and the accessors below.  The accessors assume a sketch that passed
 * sketch_check() for a topology with `rpn` ranks per node.  The struct is
 * plain data: a CLI may overwrite coll/has_coll, input_size and the solver
 * fields with its flags and call sketch_check() again.  Free with
 * sketch_free(). */
#ifndef TC_SKETCH_H
#define TC_SKETCH_H

#include "../util/err.h"
#include "collective.h"
#include "topo.h"

/* intranode_sketch.strategy.  MINMAX / MAXMIN are TACCL's load-balancing
 * objectives (time + 0.01 * largest link load, time - 0.01 * smallest). */
typedef enum { SK_INTRA_NONE, SK_INTRA_SWITCH, SK_INTRA_MINMAX, SK_INTRA_MAXMIN } sketch_intra;

/* switch_hyperedge_strategy: uc-min adds +0.01 * (used switch connections)
 * to the routing objective (collapses toward a ring: large data), uc-max
 * subtracts it (keeps many connections: small data). */
typedef enum { SK_UC_MIN, SK_UC_MAX } sketch_uc;

/* internode_sketch.internode_conn. */
typedef enum {
    SK_CONN_NONE,   /* no internode_sketch: every (sender, receiver) pair allowed */
    SK_CONN_MAP,    /* {"<sender>": [receivers]}: exactly the listed pairs */
    SK_CONN_FULL,   /* "fully-connected": every local i to every local j */
    SK_CONN_DIRECT  /* "direct-map": local i to local i only */
} sketch_conn;

typedef enum { SK_SOLVER_GLPK, SK_SOLVER_CBC } sketch_backend;

typedef struct {
    int nranks;
    int *ranks;         /* local ranks, file order */
    sketch_uc uc;
} sketch_switch;

/* One allowed inter-node pair of an explicit internode_conn. */
typedef struct {
    int sender, receiver;   /* local ranks */
    int at;                 /* index in the sender's receiver list (messages) */
} sketch_conn_pair;

/* One gpus_to_sender_rev_map entry: chunks of `origin` may leave via `sender`. */
typedef struct {
    int sender, origin;     /* local ranks */
    int at;                 /* index in the sender's list (messages) */
} sketch_via;

/* symmetry_offsets entry: rank r maps to
 * (r % size + offset) % size + (r / size) * size. */
typedef struct {
    int offset, size;
} sketch_sym;

typedef struct sketch {
    char *path;             /* label it was read from */
    char *name;             /* "name", else the file's base name without .json */
    char *topology;         /* "topology" (informational path), "" if absent */
    int nnodes;

    sketch_intra intra;
    int nswitches;
    sketch_switch *switches;

    int has_internode;      /* internode_sketch given (strategy "relay") */
    sketch_conn conn;
    int nconn;
    sketch_conn_pair *conn_pairs;   /* SK_CONN_MAP only, file order */
    int has_via;            /* gpus_to_sender_rev_map given */
    int nvia;
    sketch_via *via;        /* file order */
    int enforce_ordering;   /* a sender's own chunks cross before relayed ones */

    int nsym;
    sketch_sym *sym;
    int chunkup;            /* hyperparameters.input_chunkup, default 1 */

    int has_coll;           /* "collective" given */
    coll_kind coll;
    long long input_size;   /* bytes of the larger per-rank buffer; 0 = not given */

    sketch_backend backend;     /* default GLPK */
    double route_time_s;        /* stage 1 time limit, 0 = not given */
    double contig_time_s;       /* stage 3 time limit, 0 = not given */
    double mip_gap;             /* relative gap, < 0 = not given */

    struct sketch_priv *priv;   /* PRIVATE to sketch.c */
} sketch;

/* Read a sketch file.  On failure NULL, err = TC_INPUT "PATH:LINE: KEY: what". */
sketch *sketch_load(const char *path, tc_err *err);

/* Same from text; `label` names the source in messages. */
sketch *sketch_parse(const char *text, const char *label, tc_err *err);

/* Judge the sketch against the topology it is for: node count, local ranks
 * in range, switches that are switches of the topology, relay pairs between
 * ranks that have NICs, every rank covered by the sender map, symmetries
 * that are symmetries of the topology and of the sketch, and input_size
 * (when given) a whole number of chunks.  TC_OK or TC_INPUT. */
int sketch_check(const sketch *s, const topo *t, tc_err *err);

/* The bytes every chunk must be a multiple of: whole 4-byte elements (the
 * executor's data and the runtimes' kernels work on them) and, with
 * dma_bytes > 0, whole DMA segments: lcm(4, dma_bytes). */
long long sketch_chunk_grain(int dma_bytes);

/* The chunk arithmetic behind input_size: a collective over `nranks` ranks
 * with chunkup k moves nranks * k chunks per loop of bytes / (nranks * k)
 * bytes each, each a multiple of sketch_chunk_grain(dma_bytes).
 * Sets *chunk_bytes and returns TC_OK, or TC_INPUT with a message saying
 * which multiple is needed (no file prefix: callers add where the size came
 * from). */
int sketch_chunk_bytes(const sketch *s, int nranks, int dma_bytes, long long bytes,
                       long long *chunk_bytes, tc_err *err);

void sketch_free(sketch *s);

/* For a fault found after loading (synthesis finding that a key leaves
 * some chunk no route): fill err with "PATH:LINE: KEY: what", KEY a dotted
 * path of object keys such as "internode_sketch.internode_conn" and LINE
 * where the file has it (as far as the file has the path: the enclosing
 * object's line when the key is absent).  Returns TC_INPUT. */
int sketch_fail_at(const sketch *s, const char *key, tc_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* May a chunk cross from local rank `sender` of one node to local rank
 * `receiver` of another node?  1 or 0. */
int sketch_internode_ok(const sketch *s, int rpn, int sender, int receiver);

/* Fill m[sender * rpn + receiver] (rpn * rpn bytes) with sketch_internode_ok. */
void sketch_internode_matrix(const sketch *s, int rpn, unsigned char *m);

/* May chunks that start on local rank `origin` leave the node through local
 * rank `sender`?  Without a rev map: any rank that has an allowed inter-node
 * pair.  1 or 0. */
int sketch_leaves_via(const sketch *s, int rpn, int origin, int sender);

/* The senders `origin`'s chunks may leave through, ascending, into out[]
 * (room for rpn); returns how many. */
int sketch_senders_of(const sketch *s, int rpn, int origin, int *out);

/* Symmetry `which` (index into s->sym) applied once to global `rank`;
 * -1 if `which` is out of range or rank < 0. */
int sketch_sym_rank(const sketch *s, int rank, int which);

const char *sketch_intra_name(sketch_intra k);   /* "none", "switch", ... */
const char *sketch_uc_name(sketch_uc k);         /* "uc-min", "uc-max" */
const char *sketch_conn_name(sketch_conn k);     /* "none", "map", "fully-connected", "direct-map" */
const char *sketch_backend_name(sketch_backend k);  /* "glpk", "cbc" */

#endif
