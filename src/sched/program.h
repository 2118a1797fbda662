/* program.h — an MSCCL schedule in memory.
 *
 * The XML schema (docs/design.md §8) as plain data: an <algo> of <gpu>s, each with
 * threadblocks (<tb>) of numbered <step>s.  Offsets and counts are in chunks;
 * a chunk is size_bytes / nchunksperloop bytes of its buffer.  Besides the
 * MSCCL attributes the program may carry our extensions: the topology it was
 * made for, the size it was made for and a predicted time, so that a file
 * written by this project runs with no other argument.
 *
 * Build with prog_new() and the prog_add_* setters, or read one with
 * prog_read_xml() (sched/xml.h); release with prog_free(). */
#ifndef TC_PROGRAM_H
#define TC_PROGRAM_H

#include "../model/collective.h"
#include "../model/runtime.h"
#include "../model/topo.h"
#include "../util/err.h"

typedef enum { BUF_I, BUF_O, BUF_S, BUF_NONE } buf_kind;

typedef enum {
    ST_S,       /* send src */
    ST_R,       /* dst = recv */
    ST_RCS,     /* dst = recv, send it on */
    ST_RRS,     /* send (recv + src) */
    ST_RRC,     /* dst = recv + src */
    ST_RRCS,    /* dst = recv + src, send it on */
    ST_CPY,     /* dst = src */
    ST_RE,      /* dst = dst + src */
    ST_NOP,     /* carries one dependency */
    ST_COUNT
} step_type;

typedef struct {
    int s;              /* step number, 0..n-1 in order */
    step_type type;
    buf_kind srcbuf;
    int srcoff;
    buf_kind dstbuf;
    int dstoff;
    int cnt;
    int depid;          /* tb id this step waits for, -1 = none */
    int deps;           /* step of that tb, -1 = none */
    int hasdep;         /* 1 if some step depends on this one (or an earlier one) */
    int line;           /* source line in the XML, 0 if built in memory */
} prog_step;

/* The largest chunk offset (srcoff, dstoff) both runtimes hold: they
 * check an offset against its buffer as an int, then store it in an
 * int16_t (mscclTransmission; reductionSrcOffsets), so a larger one wraps
 * negative and the step addresses memory before its buffer. */
#define PROG_MAX_OFFSET 32767

typedef struct {
    int id;
    int send;           /* peer rank this tb sends to, -1 = none */
    int recv;           /* peer rank this tb receives from, -1 = none */
    int chan;
    int nsteps;
    int cap;
    prog_step *steps;
    int line;
} prog_tb;

typedef struct {
    int id;
    int i_chunks, o_chunks, s_chunks;
    int ntbs;
    int cap;
    prog_tb *tbs;
    int line;
} prog_gpu;

typedef struct prog {
    char name[256];
    char proto[16];         /* Simple | LL | LL128 */
    int nchannels;
    int nchunksperloop;
    int ngpus;
    coll_kind coll;
    int inplace;            /* 1: may run in place */
    int outofplace;         /* 1: may run out of place */
    long long min_bytes, max_bytes;
    /* As the file spelled it, for the runtimes' loader checks (exec/check.h);
     * "" and 0 for a program built in memory. */
    char coll_attr[64];     /* the coll attribute verbatim (an excerpt if long) */
    unsigned attrs;         /* PROG_HAS_* bits: optional <algo> attributes present */
    int ngpu;               /* number of <gpu> elements present */
    int gpu_cap;
    prog_gpu *gpus;
    /* Extensions (absent in files from other tools). */
    topo *topo;             /* owned; NULL if the file carries none */
    long long size_bytes;   /* size the schedule was made for, 0 = unknown */
    runtime target;         /* runtime it was written for (<taccl target>):
                               RT_ANY when none is said */
    double predicted_us;    /* synthesizer's predicted time, < 0 = none */
    int nvls_channels;      /* > 0: NCCL's NVLS schedule (the switch reduces
                               and multicasts) over this many threadblocks
                               per rank, written only as an MSCCL++ plan of
                               switch operations (sched/mpp_nvls.c); the
                               steps are its data flow through the GPUs
                               alone, which no runtime runs for it */
    int nvls_nodes;         /* with nvls_channels: > 1 the schedule spans this
                               many nodes of ngpus / nvls_nodes ranks each
                               (hier-nvls: the switch inside each node, the
                               rails across nodes); 0 or 1 one node */
    int nvls_pieces;        /* hier-nvls: pieces each threadblock pipelines
                               its slice in (0 or 1: one) */
    int allpairs_pieces;    /* > 0: the all-pairs ReduceScatter (every rank
                               puts each peer's block into that peer's
                               scratch in this many pieces, the owner's
                               reducers sum each piece from every peer in
                               one multi-source reduce), written only as an
                               MSCCL++ plan (sched/mpp_allpairs.c); the
                               steps are its data flow as direct's */
    int allpairs_reducers;  /* with allpairs_pieces: reducer threadblocks
                               per rank */
    char *path;             /* file it was read from, or NULL */
    int line;               /* line of <algo> in that file, 0 if built in memory */
    /* What the runtimes' own XML tokenizer refuses (microsoft/msccl
     * src/graph/xml.cc, the same code in msccl-executor): the first line of
     * each, 0 if absent (the reader itself accepts all of them). */
    struct {
        long decl;          /* <?...?>: an XML declaration or instruction */
        long tab;           /* a tab (or other text) between elements */
        long split_tag;     /* a tag spread over lines */
        long single_quote;  /* a value in single quotes */
        long many_attrs;    /* an element with more than 16 attributes */
        long tab_in_tag;    /* a tab inside a tag (the tokenizer fails) */
        long eq_space;      /* a blank beside '=' (misread or refused) */
        long entity;        /* '&' in a value (taken literally, not decoded) */
        long leading_zero;  /* an integer with a leading zero (read as octal) */
    } syntax;
    int size_line;          /* line of the <taccl> giving size_bytes, else 0 */
} prog;

/* The elements a rank of p makes the parser store (1 + ngpu + its tbs and
 * steps), the largest over ranks; *worst_rank (may be NULL) which rank. */
long long prog_parser_nodes(const prog *p, int *worst_rank);

/* The steps of every threadblock of every rank. */
long long prog_steps_total(const prog *p);

/* Whether p is written only as an MSCCL++ plan by a writer of its own (NVLS's
 * switch operations, the all-pairs ReduceScatter): its steps are a stand-in
 * for its data flow, which no MSCCL runtime runs and the cost model of
 * sched/ptime does not time; the executor's run of its plan does. */
int prog_mpp_only(const prog *p);

enum {
    PROG_HAS_NAME = 1,
    PROG_HAS_OUTOFPLACE = 2,
    PROG_HAS_MINBYTES = 4,
    PROG_HAS_MAXBYTES = 8,
};

prog *prog_new(const char *name, coll_kind coll, int ngpus, int nchunksperloop);
void prog_free(prog *p);

/* Setters: each returns a pointer into p valid until the next add of the
 * same level.  Ids are assigned densely in call order. */
prog_gpu *prog_add_gpu(prog *p, int i_chunks, int o_chunks, int s_chunks);
prog_tb *prog_add_tb(prog_gpu *g, int send, int recv, int chan);
prog_step *prog_add_step(prog_tb *tb, step_type type, buf_kind srcbuf, int srcoff,
                         buf_kind dstbuf, int dstoff, int cnt, int depid, int deps);

/* The line in the file of the most precise place that exists among step
 * `step` of tb `tb` (an index) of rank `rank`, that tb, that rank's <gpu>
 * and <algo> (-1: not that precise), or 0 if p was not read from a file. */
int prog_line_of(const prog *p, int rank, int tb, int step);

/* Chunks of buffer b (i, o or s) on rank r as the runtime allocates it.
 * i and o: the count the <gpu> element gives, or, where it gives 0, the
 * collective's own size of that buffer.  0 means "not addressed": for an
 * in-place run msccl-tools rewrites every reference onto one buffer and
 * writes the other's count as 0, and the runtimes use the counts only to
 * bound offsets, so the call's buffers are still there at full size.
 * s: the count as given.  -1 for any other b. */
int prog_buf_len(const prog *p, int r, buf_kind b);

/* A copy of p that runs in place, written as msccl-tools writes an in-place
 * file: every reference to the buffer the runtime aliases into the other
 * (AllGather: i, inside o at r*C/n; ReduceScatter: o, inside i; AllReduce
 * and AllToAll: o, which is i) is rewritten onto that other buffer, and a
 * copy that thereby copies a chunk onto itself becomes a nop with the same
 * dependency (out of place it put a rank's own chunk in its output; in
 * place the chunk is already there, and a copy onto itself would race with
 * the sends reading it); the aliased buffer's count is written 0.  The
 * runtimes drop nops, so a step that waited for such a copy would wait for
 * a step that never signals: its wait moves to what the copy stood for (the
 * tb's last step before it that does something and the copy's own
 * dependencies; none when there are none, as for a rank's own chunk at the
 * start), one nop more per extra wait, steps renumbered, each step waited
 * for marked hasdep.  A copy that then waits for nothing is left out: the
 * runtimes do not count a nop without a dependency, so every later step of
 * its tb would publish a number one below its own (exec/rtdep.h).
 * inplace="1" outofplace="0"; no topology attached.
 * Whether it verifies in place is the executor's to say.  NULL only when
 * out of memory. */
prog *prog_inplace_copy(const prog *p);

/* 1 if p keeps what every program this project builds (the lowering, the
 * baselines) keeps — ids equal their index; each rank has its gpu; a
 * dependency names an existing tb and one of its steps, in its own tb only
 * an earlier one, and that step publishes (hasdep); offsets and counts are
 * not negative; a send or receive has its peer.  A file read from disk may
 * break any of it (the executor reports that); for TC_ASSERT only. */
int prog_sane(const prog *p);
/* Take ownership of t (replacing any topology already attached). */
void prog_set_topo(prog *p, topo *t);

/* Name tables shared by the reader, the writer and messages. */
const char *step_type_name(step_type t);   /* "s", "r", "rcs", ... */
int step_type_parse(const char *s, step_type *out);
const char *buf_name(buf_kind b);          /* "i", "o", "s", "" */
int buf_parse(const char *s, buf_kind *out);

/* What a step does, for the executor and the lowering (inline: the
 * executor asks for every step of millions). */
static inline int step_receives(step_type t)    /* r rcs rrs rrc rrcs */
{
    return t == ST_R || t == ST_RCS || t == ST_RRS || t == ST_RRC || t == ST_RRCS;
}

static inline int step_sends(step_type t)       /* s rcs rrs rrcs */
{
    return t == ST_S || t == ST_RCS || t == ST_RRS || t == ST_RRCS;
}

static inline int step_reduces(step_type t)     /* rrs rrc rrcs re */
{
    return t == ST_RRS || t == ST_RRC || t == ST_RRCS || t == ST_RE;
}

static inline int step_reads_src(step_type t)   /* s rrs rrc rrcs cpy re */
{
    return t == ST_S || t == ST_RRS || t == ST_RRC || t == ST_RRCS || t == ST_CPY || t == ST_RE;
}

static inline int step_writes_dst(step_type t)  /* r rcs rrc rrcs cpy re */
{
    return t == ST_R || t == ST_RCS || t == ST_RRC || t == ST_RRCS || t == ST_CPY || t == ST_RE;
}

#endif
