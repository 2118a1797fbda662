/* hazard.h — a list of problems found in a schedule, each tied to a place.
 *
 * The checks (static, race, simulation) append here; the CLI prints the
 * first few and exits 1 if any error is present.  A warning (a race or an
 * uninitialized read among steps whose data never reaches the result) is
 * reported but does not fail the run unless the user asks (--strict).  Every message is one line and
 * says which rank/tb/step and why, e.g.
 *   "rank 3 tb 1 step 4: srcoff+cnt = 9 exceeds the i buffer (8 chunks)". */
#ifndef TC_HAZARD_H
#define TC_HAZARD_H

typedef enum {
    HZ_BOUNDS,          /* offset+cnt beyond a buffer, bad buffer, cnt < 1 */
    HZ_LIMIT,           /* a runtime limit: steps per tb, cnt, depid, channels */
    HZ_CONNECTION,      /* two tbs on one (channel, peer); tb peer out of range */
    HZ_PAIRING,         /* send/recv count or order mismatch on a connection */
    HZ_DEPENDENCY,      /* dep on a missing step, or no later hasdep */
    HZ_UNINIT,          /* reads/sends a chunk nothing has written yet */
    HZ_RACE,            /* two tbs touch one chunk unordered, one writes */
    HZ_DEADLOCK,        /* execution cannot proceed */
    HZ_DEVICE,          /* a device rule: DMA granularity, no route */
    HZ_WRONG_DATA,      /* the postcondition does not hold */
    HZ_LOAD,            /* the target runtime's loader refuses the file */
    HZ_FUSION,          /* re steps the runtimes fuse into a different operation */
    HZ_COUNT
} hazard_kind;

typedef struct {
    hazard_kind kind;
    int rank, tb, step;     /* -1 where not applicable */
    long line;              /* the file's line it is about, when no rank/tb/
                               step says it (0: derive it from those) */
    int warning;            /* 1: confined to steps whose data never reaches
                               the result (dead traffic): the collective is
                               still performed */
    char msg[512];          /* complete one-line message, place included */
} hazard;

typedef struct {
    int n, cap;
    hazard *v;
} hazard_list;

/* Append a hazard; the message is prefixed with "rank R tb T step S: " for
 * the parts that are >= 0. */
void hazard_add(hazard_list *l, hazard_kind kind, int rank, int tb, int step,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

void hazard_list_free(hazard_list *l);

/* Append every hazard of `from` to `to`, in order; `from` is left empty. */
void hazard_list_move(hazard_list *to, hazard_list *from);

/* Hazards from index `from` on that are not warnings. */
int hazard_errors(const hazard_list *l, int from);

/* The hazard a failed verdict is stated by: a loader's refusal (the file
 * never runs), else the wrong result itself if the postcondition failed
 * (the root symptom), else the first error; NULL if there is no error. */
const hazard *hazard_verdict(const hazard_list *l);

/* Short name of a kind, for JSON: "bounds", "limit", "connection", ... */
const char *hazard_kind_name(hazard_kind k);

#endif
