/* cands.c — the candidate list of one synthesis (cands.h): entries added in
 * the order tried, the one rule that keeps the fastest, the reason it gives,
 * and the record as JSON.
 *
 * Why here and not in synth.c: the choice used to be spread over the
 * strategies (each compared itself with the schedule kept so far and set a
 * flag); with every comparison in cands_pick, the strategies only build,
 * and what was tried is reported as it was decided. */
#include "cands.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reverse.h"

void cands_init(cand_list *L, synth_stats *st)
{
    memset(L, 0, sizeof *L);
    L->st = st;
    memset(st->cands, 0, sizeof st->cands);
    st->ncands = 0;
    st->winner = -1;
    st->winner_reason[0] = '\0';
}

/* The next free entry, labelled; NULL if the list is full. */
static synth_cand *next_entry(cand_list *L, const char *routing, int join)
{
    synth_stats *st = L->st;
    if (st->ncands >= SYNTH_MAX_CANDS)
        return NULL;
    synth_cand *c = &st->cands[st->ncands];
    memset(c, 0, sizeof *c);
    snprintf(c->routing, sizeof c->routing, "%s", routing);
    if (join >= 0)
        snprintf(c->label, sizeof c->label, "%s/%s", routing,
                 reverse_join_name((reverse_join)join));
    else
        snprintf(c->label, sizeof c->label, "%s", routing);
    c->join = join;
    c->us = NAN;
    L->a[st->ncands] = NULL;
    L->p[st->ncands] = NULL;
    L->run[st->ncands] = -1;
    return c;
}

int cands_add(cand_list *L, const char *routing, int join, algo *a, int run, const char *note,
              tc_err *err)
{
    synth_cand *c = next_entry(L, routing, join);
    if (!c) {
        algo_free(a);
        return tc_err_set(err, TC_INPUT, "synth: more than %d candidate schedules",
                          SYNTH_MAX_CANDS);
    }
    c->state = SYNTH_CAND_OK;
    c->us = a->predicted_us;
    snprintf(c->note, sizeof c->note, "%s", note ? note : "");
    L->a[L->st->ncands] = a;
    L->run[L->st->ncands] = run;
    L->st->ncands++;
    return TC_OK;
}

int cands_add_prog(cand_list *L, const char *routing, prog *p, double us, const char *note,
                   tc_err *err)
{
    synth_cand *c = next_entry(L, routing, -1);
    if (!c) {
        prog_free(p);
        return tc_err_set(err, TC_INPUT, "synth: more than %d candidate schedules",
                          SYNTH_MAX_CANDS);
    }
    c->state = SYNTH_CAND_OK;
    c->us = us;
    snprintf(c->note, sizeof c->note, "%s", note ? note : "");
    L->p[L->st->ncands] = p;
    L->st->ncands++;
    return TC_OK;
}

void cands_none(cand_list *L, const char *routing, synth_cand_state state, const char *fmt, ...)
{
    synth_cand *c = next_entry(L, routing, -1);
    if (!c)
        return;
    c->state = state;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->note, sizeof c->note, fmt, ap);
    va_end(ap);
    L->st->ncands++;
}

int cands_pick(const cand_list *L, const char *routing, int from)
{
    const synth_cand *c = L->st->cands;
    int w = -1;
    for (int i = from > 0 ? from : 0; i < L->st->ncands; i++) {
        if (c[i].state != SYNTH_CAND_OK || (routing && strcmp(c[i].routing, routing)))
            continue;
        if (w < 0 || c[i].us < c[w].us - CANDS_TIE_US)
            w = i;
    }
    return w;
}

double cands_pick_us(const cand_list *L, const char *routing, int from)
{
    int w = cands_pick(L, routing, from);
    return w >= 0 ? L->st->cands[w].us : 0;
}

void cands_truncate(cand_list *L, int n)
{
    for (int i = n; i < L->st->ncands; i++) {
        algo_free(L->a[i]);
        prog_free(L->p[i]);
        L->a[i] = NULL;
        L->p[i] = NULL;
    }
    if (n < L->st->ncands)
        L->st->ncands = n;
}

/* Why entry w was kept, into st->winner_reason. */
static void say_why(synth_stats *st, int w)
{
    const synth_cand *c = st->cands;
    int next = -1, built = 0;
    for (int i = 0; i < st->ncands; i++) {
        if (c[i].state != SYNTH_CAND_OK)
            continue;
        built++;
        if (i != w && (next < 0 || c[i].us < c[next].us))
            next = i;
    }
    size_t n = sizeof st->winner_reason;
    if (next < 0)
        snprintf(st->winner_reason, n, "the only candidate built (%d tried or considered)",
                 st->ncands);
    else if (c[next].us - c[w].us <= CANDS_TIE_US)
        snprintf(st->winner_reason, n, "tied with %s (%.3f us) within %g us: an entry replaces "
                 "the one kept only when faster by more than that", c[next].label, c[next].us,
                 CANDS_TIE_US);
    else
        snprintf(st->winner_reason, n, "the fastest of %d built: %.3f us; next %s at %.3f us",
                 built, c[w].us, c[next].label, c[next].us);
}

/* Entry w kept: the record says so and why, every other schedule freed
 * (the caller has taken w's). */
static void kept(cand_list *L, int w)
{
    L->st->winner = w;
    say_why(L->st, w);
    cands_free(L);
}

algo *cands_keep(cand_list *L, int w)
{
    if (w < 0 || w >= L->st->ncands || !L->a[w])
        return NULL;
    algo *a = L->a[w];
    L->a[w] = NULL;
    kept(L, w);
    return a;
}

prog *cands_keep_prog(cand_list *L, int w)
{
    if (w < 0 || w >= L->st->ncands || !L->p[w])
        return NULL;
    prog *p = L->p[w];
    L->p[w] = NULL;
    kept(L, w);
    return p;
}

void cands_free(cand_list *L)
{
    for (int i = 0; i < SYNTH_MAX_CANDS; i++) {
        algo_free(L->a[i]);
        prog_free(L->p[i]);
        L->a[i] = NULL;
        L->p[i] = NULL;
    }
}

static const char *state_name(synth_cand_state s)
{
    return s == SYNTH_CAND_OK ? "ok" : s == SYNTH_CAND_FAILED ? "failed" : "skipped";
}

void synth_cands_json(const synth_stats *st, struct cJSON *obj)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, "candidates");
    for (int i = 0; i < st->ncands; i++) {
        const synth_cand *c = &st->cands[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "label", c->label);
        cJSON_AddStringToObject(e, "routing", c->routing);
        if (c->join >= 0)
            cJSON_AddStringToObject(e, "join", reverse_join_name((reverse_join)c->join));
        else
            cJSON_AddNullToObject(e, "join");
        cJSON_AddStringToObject(e, "status", state_name(c->state));
        if (c->state == SYNTH_CAND_OK && isfinite(c->us))
            cJSON_AddNumberToObject(e, "predicted_us", c->us);
        else
            cJSON_AddNullToObject(e, "predicted_us");
        cJSON_AddStringToObject(e, "note", c->note);
        cJSON_AddBoolToObject(e, "winner", i == st->winner);
        cJSON_AddItemToArray(arr, e);
    }
    if (st->winner >= 0 && st->winner < st->ncands) {
        cJSON_AddStringToObject(obj, "winner", st->cands[st->winner].label);
        cJSON_AddStringToObject(obj, "winner_reason", st->winner_reason);
    } else {
        cJSON_AddNullToObject(obj, "winner");
        cJSON_AddNullToObject(obj, "winner_reason");
    }
}
