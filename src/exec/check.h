/* check.h — static hazards: what the MSCCL runtimes would hang or corrupt on
 * but never check themselves, found before anything runs.
 *
 * Checked: buffer names and offset+cnt within the <gpu>'s buffer sizes
 * (cnt >= 1 except nop); step numbers 0..n-1 in order; tb ids dense from 0;
 * runtime limits (steps per tb, cnt, depid, channels); tb peers in range and
 * not the rank itself; at most one tb per (chan, send peer) and per (chan,
 * recv peer) on a rank; per connection (chan, A->B) the number of sending
 * steps of A equals the number of receiving steps of B and the k-th of each
 * agree on cnt; a step that sends/receives belongs to a tb with that peer;
 * dependencies name an existing tb and step, and that step or a later one in
 * its tb has hasdep="1"; ngpus matches the <gpu> elements and the
 * collective's buffer shapes (collective.h).  Nothing here needs data. */
#ifndef TC_CHECK_H
#define TC_CHECK_H

#include "../sched/program.h"
#include "hazard.h"

typedef struct {
    int max_steps_per_tb;   /* legacy runtime 256, newer executor 64 */
    int max_cnt;            /* cnt must be < 72 */
    int max_depid;          /* 127 */
    int max_channels;       /* 32 */
} check_limits;

void check_limits_default(check_limits *l, int newer_executor);

/* Append every static hazard of p to out; return how many were added. */
int check_program(const prog *p, const check_limits *lim, hazard_list *out);

#endif
