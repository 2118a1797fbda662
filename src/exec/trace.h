/* trace.h — what a run did, as a Chrome/Perfetto trace.
 *
 * A trace is a sim_observer (sim.h): hand trace_observer() to the run, then
 * trace_write() the JSON trace-event file that ui.perfetto.dev and
 * chrome://tracing open.  It has a process per rank with a track per
 * threadblock (an event per step, named by its type), a "resources"
 * process with a track per link direction, switch port and NIC direction
 * (one per lane where a link has several; an event per transfer it
 * carried, with chunks, bytes, peer and protocol), and a flow arrow from
 * each send to the receive that took it.  Times are µs, as the executor's.
 * The same record also gives the routes the run used, as a Graphviz graph. */
#ifndef TC_TRACE_H
#define TC_TRACE_H

#include "../model/topo.h"
#include "../sched/program.h"
#include "../util/err.h"
#include "sim.h"

typedef struct trace trace;

/* A trace of p running on t (both must outlive it). */
trace *trace_new(const prog *p, const topo *t);
void trace_free(trace *tr);

/* The observer that fills tr. */
const sim_observer *trace_observer(trace *tr);

/* Write the trace to path atomically (util/file).  TC_INPUT on error. */
int trace_write(const trace *tr, const char *path, tc_err *err);

/* Write the routes the run used as a Graphviz digraph to path (atomically):
 * ranks grouped by node, an edge per pair of ranks that exchanged data,
 * labelled with its transfers and bytes, coloured by how it travels (link,
 * switch, NIC) and as thick as its share of the bytes.  TC_INPUT on error. */
int trace_write_dot(const trace *tr, const char *path, tc_err *err);

#endif
