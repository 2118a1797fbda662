/* mpp.h — MSCCL++ execution plans (the JSON that MSCCL++'s executor loads):
 * read one, run it on the device model and judge it.
 *
 * Why here and not in sched/xml: taccl-run's judge of an MSCCL XML file is
 * exec/run.c over sched/program.h's two-sided steps; an MSCCL++ plan is
 * one-sided (puts into peers' buffers ordered by semaphores, packets that
 * carry their own flags), so it has its own reader and interpreter and
 * shares the topology, cost model, seeded data, hazard list and bound.
 * docs/mscclpp.md is the format (with MSCCL++ file:line citations); the
 * reader refuses, exit 2, everything MSCCL++'s parser refuses or crashes on
 * (docs/mscclpp.md sections 1-7) and names the JSON path of the problem. */
#ifndef TC_MPP_H
#define TC_MPP_H

#include <stdio.h>

#include "../bound/bound.h"
#include "../model/topo.h"
#include "../util/err.h"
#include "hazard.h"
#include "sim.h"

typedef struct mpp_plan mpp_plan;

/* 1 if text is a JSON object with a top-level "gpus" key (an MSCCL++ plan),
 * judged by content: the first non-space byte is '{' and "gpus" is a key. */
int mpp_sniff(const char *text);

/* Read and check a plan; NULL with err (TC_INPUT) "FILE: json.path: what". */
mpp_plan *mpp_read(const char *path, tc_err *err);
mpp_plan *mpp_parse(const char *text, const char *label, tc_err *err);
void mpp_free(mpp_plan *p);

int mpp_nranks(const mpp_plan *p);
const char *mpp_name(const mpp_plan *p);
const char *mpp_collective(const mpp_plan *p);
/* 1 if the plan has switch (NVLS) channels. */
int mpp_uses_switch(const mpp_plan *p);
/* The collective as taccl knows it; -1 if it has no postcondition here
 * ("test", "sendrecv", "broadcast", ...). */
int mpp_coll(const mpp_plan *p);

/* The topology a plan runs on when none is given: one node of n ranks on
 * one switch with H100/NVSwitch figures (MSCCL++'s switch channels need a
 * switch; memory and port channels run over it too).  is_default set. */
topo *mpp_default_topo(const mpp_plan *p);

typedef struct {
    long long size_bytes;   /* larger per-rank buffer; 0 = default (1 MiB rounded) */
    sim_dtype dtype;
    int data;               /* 0: timing only */
    int bytewise;           /* timing only: bookkeeping per 16-byte granule as with data,
                             * not per run (the reference tests compare the runs against) */
    unsigned seed;
    int mode;               /* -1: the plan's own "inplace"; 0 out of place; 1 in place */
    int strict;
    int record;             /* keep the events (--trace, --routes) */
    const bound_model *bound;
} mpp_opts;

void mpp_opts_default(mpp_opts *o);

/* Whether t can run p's switch (multimem, NVLS) operations: every switch
 * channel's ranks on one switch of t that reduces and multicasts (topo.h,
 * topo_nvls) and, when p reduces there (glres), sums elements of type dt.
 * TC_OK (also for a plan without switch channels), else TC_INPUT with one
 * line naming the rank, channel and topology.  mpp_run checks it too. */
int mpp_switch_ok(const mpp_plan *p, const topo *t, sim_dtype dt, tc_err *err);

/* One op instance or one transfer as the run did it (for --trace/--routes). */
typedef struct {
    int rank, tb;           /* op: its block; transfer: rank = src, tb = dst */
    int is_xfer;
    int op;                 /* mpp_optype */
    int route;              /* transfer: topo_route_kind */
    double t0, t1;
    long long bytes;
} mpp_event;

typedef struct {
    long long size_bytes, in_bytes, out_bytes, chunk_bytes;
    int inplace;
    int has_post;           /* the collective has a postcondition here */
    int data;
    int verified;
    int finished;           /* every block ran to its end */
    double time_us;
    double call_us;         /* of it, the runtime's latency of the call (model/cost.h) */
    long long wrong_elems;
    int replicas_identical; /* data checked, AllReduce: 1 every rank's output equals rank 0's
                             * bit for bit, 0 not; -1 not judged (data.h) */
    sim_dtype dtype;
    long long ops_run;
    long long bytes_moved;
    int has_bound;
    double bound_us;
    double floor_us;        /* AllReduce: the partial-sums floor (bound_floor_us; 0 = none) */
    hazard_list hz;
    int nev, cap_ev;
    mpp_event *ev;
} mpp_report;

/* Run p on t.  TC_OK when it ran to a verdict (r->verified), TC_INPUT when
 * it cannot run at that size (err). */
int mpp_run(const mpp_plan *p, const topo *t, const mpp_opts *o, mpp_report *r, tc_err *err);
void mpp_report_free(mpp_report *r);

/* The default size: 1 MiB rounded up to what the plan's chunks divide. */
long long mpp_default_size(const mpp_plan *p);

/* `size` rounded up to a whole number of chunks of whole quanta (the
 * buffer_alignment and 16-byte vectors) of the plan's largest buffer. */
long long mpp_round_size(const mpp_plan *p, long long size);

void mpp_report_print(FILE *f, const mpp_report *r, const mpp_plan *p, const topo *t,
                      const char *file, int max_hazards);
char *mpp_report_json(const mpp_report *r, const mpp_plan *p, const topo *t, const char *file,
                      const char *error);

/* Every power-of-two size in [lo, hi] (rounded up to what the chunks
 * divide), a table or a JSON object with "rows".  TC_OK all verified,
 * TC_WRONG some did not, TC_INPUT none could run. */
int mpp_sweep(FILE *f, const mpp_plan *p, const topo *t, const mpp_opts *o, long long lo,
              long long hi, int json, const char *file, tc_err *err);

/* A Chrome/Perfetto trace of r's events; a Graphviz graph of its transfers. */
int mpp_trace_write(const mpp_report *r, const mpp_plan *p, const char *path, tc_err *err);
int mpp_routes_write(const mpp_report *r, const mpp_plan *p, const topo *t, const char *path,
                     tc_err *err);

/* ------------------------------------------------------------ taccl-run */

/* 1 if the file at path is an MSCCL++ plan by its content (mpp_sniff on
 * its first bytes); 0 if not or unreadable (the XML reader then says why). */
int mpp_is_plan_file(const char *path);

/* What taccl-run's command line gives a plan run. */
typedef struct {
    const char *file;
    const char *topo_path;
    const char *trace_to, *routes_to;
    const char *refused_flag;   /* a flag given that plans do not take, or NULL */
    long long sweep_lo, sweep_hi;
    int json, quiet;
    mpp_opts run;
} mpp_cli;

/* taccl-run PLAN.json: read, run, report; the exit code (0 verified, 1
 * runs but wrong, 2 unusable).  Prints the report on stdout (or one JSON
 * object with json) and a one-line failure on stderr. */
int mpp_cli_main(const mpp_cli *c);

#endif
