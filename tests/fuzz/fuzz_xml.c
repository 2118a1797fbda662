/* fuzz_xml.c — libFuzzer target for the MSCCL XML reader (prog_parse_xml)
 * and what taccl-run does with a schedule that loads.
 *
 * Each input is parsed as a schedule.  One that loads is written back with
 * prog_to_xml(), which, when it accepts the program, must produce a file
 * the reader loads again; then the static check runs, and a small schedule
 * that passes it is executed as taccl-run would (ordering checks, the
 * simulator with real data at the smallest size, the postcondition) on the
 * topology it carries or on the default one.  "Small" keeps each execution
 * within libFuzzer's time and memory limits; the limits of the tools
 * themselves are the corpus tests' business (tests/bad). */
#include "fuzz_common.h"

#include "exec/data.h"
#include "exec/run.h"
#include "sched/xml.h"

static void check_write_back(const prog *p)
{
    xml_write_opts wo = {.runtime = RT_ANY, .embed_topology = p->topo != NULL};
    tc_err err;
    tc_err_clear(&err);
    char *text = prog_to_xml(p, &wo, &err);
    if (!text)
        return; /* the writer refuses what the runtimes could not load: fine */
    prog *back = prog_parse_xml(text, strlen(text), "(written back)", &err);
    if (!back) {
        fprintf(stderr, "fuzz: prog_to_xml output does not load: %s\n", err.msg);
        abort();
    }
    prog_free(back);
    free(text);
}

static long long total_steps(const prog *p)
{
    long long n = 0;
    for (int g = 0; g < p->ngpu; g++)
        for (int t = 0; t < p->gpus[g].ntbs; t++)
            n += p->gpus[g].tbs[t].nsteps;
    return n;
}

static void execute(const prog *p)
{
    if (p->ngpus > 64 || p->nchunksperloop < 1 || p->nchunksperloop > 4096 ||
        total_steps(p) > 20000)
        return;
    run_opts o;
    run_opts_default(&o);
    o.size_bytes = 4LL * p->nchunksperloop;
    if (data_bytes_needed(p, 0, 4) > 64e6 || data_bytes_needed(p, 1, 4) > 64e6)
        return;
    topo *own = NULL;
    const topo *t = p->topo;
    if (!t)
        t = own = topo_default(p->ngpus);
    if (t->nranks == p->ngpus) {
        run_report r;
        tc_err err;
        tc_err_clear(&err);
        if (run_schedule(p, t, &o, &r, &err) != TC_OK)
            fuzz_expect_input_error(&err, "run_schedule");
        run_report_free(&r);
    }
    topo_free(own);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tc_err err;
    tc_err_clear(&err);
    prog *p = prog_parse_xml((const char *)data, size, "fuzz.xml", &err);
    if (!p) {
        fuzz_expect_input_error(&err, "prog_parse_xml");
        return 0;
    }
    check_write_back(p);
    execute(p);
    prog_free(p);
    return 0;
}
