/* mpp_main.c — taccl-run's path for an MSCCL++ plan: pick the topology,
 * run, print, write the trace and routes.
 *
 * Why in exec and not in the CLI: taccl-run.c's own code stays a format
 * test and a call (several engineers change that file); everything a plan
 * run does after the command line is parsed lives here, beside the
 * interpreter it drives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../model/collective.h"
#include "mpp_int.h"
#include "mpp_text.h"

int mpp_is_plan_file(const char *path)
{
    /* only a regular file is opened: a FIFO is the XML reader's to refuse,
     * never waited on */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[4097];
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = '\0';
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        i++;
    if (i >= n || head[i] != '{') {
        fclose(f);
        return 0;
    }
    /* A JSON object: read it whole and look for the top-level "gpus" key. */
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0) {
        fclose(f);
        return 0;
    }
    char *buf = malloc((size_t)len + 1);
    if (!buf) {
        fclose(f);
        return 0;
    }
    size_t got = fread(buf, 1, (size_t)len, f);
    buf[got] = '\0';
    fclose(f);
    int yes = mpp_sniff(buf);
    free(buf);
    return yes;
}

static int fail(const mpp_cli *c, const mpp_plan *p, const topo *t, const char *msg)
{
    fprintf(stderr, "taccl-run: %s\n", msg);
    if (c->json) {
        char *j = mpp_report_json(NULL, p, t, c->file, msg);
        printf("%s\n", j);
        free(j);
    }
    return TC_INPUT;
}

int mpp_cli_main(const mpp_cli *c)
{
    char msg[1400];
    if (c->refused_flag) {
        snprintf(msg, sizeof msg, "%s: %s", c->file, c->refused_flag);
        return fail(c, NULL, NULL, msg);
    }
    tc_err err;
    tc_err_clear(&err);
    mpp_plan *p = mpp_read(c->file, &err);
    if (!p)
        return fail(c, NULL, NULL, err.msg);
    topo *t = c->topo_path ? topo_load(c->topo_path, &err) : mpp_default_topo(p);
    if (!t) {
        int rc = fail(c, p, NULL, c->topo_path ? err.msg : "cannot build the default topology");
        mpp_free(p);
        return rc;
    }
    int rc;
    if (t->nranks != p->nranks) {
        snprintf(msg, sizeof msg, "%s: gpus: topology %s has %d ranks but the plan has %d", c->file,
                 t->name, t->nranks, p->nranks);
        rc = fail(c, p, t, msg);
        goto done;
    }
    if (c->run.strict && topo_warnings(t) > 0) {
        snprintf(msg, sizeof msg, "%s (--strict)", topo_warning(t, 0));
        rc = fail(c, p, t, msg);
        goto done;
    }
    for (int i = 0; i < topo_warnings(t) && !c->quiet && !t->is_default; i++)
        fprintf(stderr, "taccl-run: warning: %s\n", topo_warning(t, i));
    if (mpp_switch_ok(p, t, c->run.dtype, &err) != TC_OK) {
        snprintf(msg, sizeof msg, "%s: %s", c->file, err.msg);
        rc = fail(c, p, t, msg);
        goto done;
    }
    mpp_opts o = c->run;
    bound_model bound;
    tc_err berr;
    int ck = mpp_coll(p);
    if (ck >= 0 && bound_compute(t, (coll_kind)ck, &bound, &berr) == TC_OK)
        o.bound = &bound;
    if (c->sweep_lo > 0) {
        if (c->trace_to || c->routes_to) {
            rc = fail(c, p, t, c->trace_to ? "--trace: one run at one size; it does not go with --sweep"
                                            : "--routes: one run at one size; it does not go with --sweep");
            goto done;
        }
        rc = mpp_sweep(stdout, p, t, &o, c->sweep_lo, c->sweep_hi, c->json, c->file, &err);
        if (rc == TC_INPUT) {
            snprintf(msg, sizeof msg, "%s: %s", c->file, err.msg);
            fail(c, p, t, msg);
        } else if (rc == TC_WRONG) {
            fprintf(stderr, "taccl-run: %s: some sizes did not verify (see the table)\n", c->file);
        }
        goto done;
    }
    o.record = c->trace_to || c->routes_to;
    mpp_report r;
    rc = mpp_run(p, t, &o, &r, &err);
    if (rc != TC_OK) {
        snprintf(msg, sizeof msg, "%s: --size: %s", c->file, err.msg);
        rc = fail(c, p, t, msg);
        mpp_report_free(&r);
        goto done;
    }
    rc = r.verified ? TC_OK : TC_WRONG;
    tc_err werr;
    tc_err_clear(&werr);
    int wrc = TC_OK;
    if (c->trace_to)
        wrc = mpp_trace_write(&r, p, c->trace_to, &werr);
    if (wrc == TC_OK && c->routes_to)
        wrc = mpp_routes_write(&r, p, t, c->routes_to, &werr);
    if (c->json) {
        char *j = mpp_report_json(&r, p, t, c->file, wrc ? werr.msg : NULL);
        printf("%s\n", j);
        free(j);
    } else if (!c->quiet) {
        mpp_report_print(stdout, &r, p, t, c->file, 10);
        if (!o.bound)
            printf("bound     none: %s\n", ck < 0 ? "no collective to bound" : berr.msg);
    }
    if (!r.verified) {
        const hazard *h = hazard_verdict(&r.hz);
        fprintf(stderr, "taccl-run: %s: %s\n", c->file, h ? h->msg : r.hz.n ? r.hz.v[0].msg :
                "did not finish");
    }
    if (wrc != TC_OK) {
        fprintf(stderr, "taccl-run: %s\n", werr.msg);
        rc = TC_INPUT;
    }
    mpp_report_free(&r);
done:
    topo_free(t);
    mpp_free(p);
    return rc;
}

int mpp_judge_text(const char *json, const char *label, const topo *t, long long size_bytes,
                   int mode, int data, mpp_text_result *res, tc_err *err)
{
    mpp_plan *p = mpp_parse(json, label, err);
    if (!p)
        return TC_INPUT;
    int rc = TC_OK;
    if (t->nranks != p->nranks)
        rc = tc_err_set(err, TC_INPUT, "%s: topology %s has %d ranks but the plan has %d",
                        label, t->name, t->nranks, p->nranks);
    else if (mpp_round_size(p, size_bytes) != size_bytes)
        rc = tc_err_set(err, TC_INPUT, "%s: %lld bytes is not a whole number of the plan's "
                        "chunks", label, size_bytes);
    mpp_opts o;
    mpp_opts_default(&o);
    o.size_bytes = size_bytes;
    o.data = data;
    o.mode = mode;
    if (rc == TC_OK)
        rc = mpp_switch_ok(p, t, o.dtype, err);
    if (rc == TC_OK) {
        mpp_report r;
        rc = mpp_run(p, t, &o, &r, err);
        if (rc == TC_OK) {
            res->time_us = r.time_us;
            res->verified = r.verified && r.finished;
        }
        mpp_report_free(&r);
    }
    mpp_free(p);
    return rc;
}
