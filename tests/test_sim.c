/* test_sim.c — the executor: step semantics, postconditions, aliasing,
 * deadlocks, FIFO capacity, the alpha-beta timing with shared resources,
 * the chip/cluster device rules, f32 replica identity and scale.
 *
 * Schedules and topologies are built by hand here.  Build with
 * -DSIM_ISOLATED to link without src/model/topo.c (simple stand-ins below;
 * model/cost.c is still linked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/sim.h"
#include "sched/ptime.h"

#ifdef SIM_ISOLATED
/* Stand-ins for topo.c with the documented behaviour. */
void topo_free(topo *t) { (void)t; }
int topo_node_of(const topo *t, int rank)
{
    return (rank < 0 || rank >= t->nranks) ? -1 : rank / t->ranks_per_node;
}
int topo_chip_of(const topo *t, int rank)
{
    if (t->kind != TOPO_CHIP)
        return rank;
    return topo_node_of(t, rank) * t->chips_per_node +
           (rank % t->ranks_per_node) / t->clusters_per_chip;
}
int topo_cluster_of(const topo *t, int rank)
{
    return t->kind == TOPO_CHIP ? (rank % t->ranks_per_node) % t->clusters_per_chip : 0;
}
topo_route topo_route_of(const topo *t, int a, int b)
{
    topo_route r = {ROUTE_NONE, -1, -1, -1, -1, 0, 0, 0};
    if (a == b) {
        r.kind = ROUTE_SELF;
        r.bw_gbps = t->copy_gbps;
        return r;
    }
    for (int i = 0; i < t->nlinks; i++)
        if (t->links[i].src == a && t->links[i].dst == b) {
            r.kind = ROUTE_LINK;
            r.link = i;
            r.alpha_us = t->links[i].alpha_us;
            r.bw_gbps = t->links[i].bw_gbps;
            return r;
        }
    for (int s = 0; s < t->nswitches; s++) {
        int ha = 0, hb = 0;
        for (int k = 0; k < t->switches[s].nranks; k++) {
            ha |= t->switches[s].ranks[k] == a;
            hb |= t->switches[s].ranks[k] == b;
        }
        if (ha && hb) {
            r.kind = ROUTE_SWITCH;
            r.sw = s;
            r.alpha_us = t->switches[s].alpha_us;
            r.bw_gbps = t->switches[s].bw_gbps;
            return r;
        }
    }
    if (t->nic_of_rank && topo_node_of(t, a) != topo_node_of(t, b) && t->nic_of_rank[a] >= 0 &&
        t->nic_of_rank[b] >= 0) {
        r.kind = ROUTE_NIC;
        r.nic_src = t->nic_of_rank[a];
        r.nic_dst = t->nic_of_rank[b];
        r.alpha_us = t->nics[r.nic_src].alpha_us;
        r.bw_gbps = t->nics[r.nic_src].bw_gbps;
    }
    return r;
}
#endif

/* ------------------------------------------------------------ topologies */

static topo *tp_new(const char *name, int nnodes, int rpn)
{
    topo *t = calloc(1, sizeof *t);
    t->name = strdup(name);
    t->path = strdup("");
    t->nnodes = nnodes;
    t->ranks_per_node = rpn;
    t->nranks = nnodes * rpn;
    t->kind = TOPO_GPU;
    t->chips_per_node = rpn;
    t->clusters_per_chip = 1;
    t->copy_gbps = 1000;
    t->reduce_gbps = 1000;
    return t;
}

static void tp_link(topo *t, int a, int b, double alpha, double bw, int mult)
{
    t->links = realloc(t->links, (size_t)(t->nlinks + 1) * sizeof *t->links);
    t->links[t->nlinks++] = (topo_link){a, b, alpha, bw, mult};
}

static void tp_full(topo *t, double alpha, double bw)
{
    for (int a = 0; a < t->nranks; a++)
        for (int b = 0; b < t->nranks; b++)
            if (a != b)
                tp_link(t, a, b, alpha, bw, 1);
}

static void tp_switch(topo *t, const int *ranks, int n, double alpha, double bw)
{
    t->switches = realloc(t->switches, (size_t)(t->nswitches + 1) * sizeof *t->switches);
    topo_switch *s = &t->switches[t->nswitches++];
    s->nranks = n;
    s->ranks = malloc((size_t)n * sizeof *s->ranks);
    memcpy(s->ranks, ranks, (size_t)n * sizeof *s->ranks);
    s->alpha_us = alpha;
    s->bw_gbps = bw;
}

static void tp_nic(topo *t, int node, const int *ranks, int n, double alpha, double bw)
{
    if (!t->nic_of_rank) {
        t->nic_of_rank = malloc((size_t)t->nranks * sizeof(int));
        for (int r = 0; r < t->nranks; r++)
            t->nic_of_rank[r] = -1;
    }
    t->nics = realloc(t->nics, (size_t)(t->nnics + 1) * sizeof *t->nics);
    topo_nic *x = &t->nics[t->nnics];
    x->node = node;
    x->nranks = n;
    x->ranks = malloc((size_t)n * sizeof *x->ranks);
    memcpy(x->ranks, ranks, (size_t)n * sizeof *x->ranks);
    x->alpha_us = alpha;
    x->bw_gbps = bw;
    for (int i = 0; i < n; i++)
        t->nic_of_rank[ranks[i]] = t->nnics;
    t->nnics++;
}

static void tp_free(topo *t)
{
    free(t->name);
    free(t->path);
    free(t->links);
    for (int i = 0; i < t->nswitches; i++)
        free(t->switches[i].ranks);
    free(t->switches);
    for (int i = 0; i < t->nnics; i++)
        free(t->nics[i].ranks);
    free(t->nics);
    free(t->nic_of_rank);
    free(t);
}

static topo *tp_ring(int n, double alpha, double bw)
{
    topo *t = tp_new("ring", 1, n);
    for (int r = 0; r < n; r++)
        tp_link(t, r, (r + 1) % n, alpha, bw, 1);
    return t;
}

static topo *tp_fully(int n)
{
    topo *t = tp_new("full", 1, n);
    tp_full(t, 0.7, 50);
    return t;
}

/* ------------------------------------------------------------ running */

typedef struct {
    int rc;
    sim_result r;
    hazard_list hz;
    tc_err err;
} outcome;

static outcome run_opts(const prog *p, const topo *t, long long size, int data, sim_dtype dt,
                        int inplace, unsigned seed)
{
    outcome o;
    memset(&o, 0, sizeof o);
    sim_opts so = {.size_bytes = size, .dtype = dt, .data = data, .inplace = inplace, .seed = seed};
    o.rc = sim_run(p, t, &so, &o.r, &o.hz, &o.err);
    sim_result_free(&o.r);  /* the per-resource tallies: test_time_resource_tally */
    return o;
}

static outcome run_data(const prog *p, const topo *t, long long size, int inplace)
{
    return run_opts(p, t, size, 1, DT_I32, inplace, 1);
}

static outcome run_timing(const prog *p, const topo *t, long long size)
{
    return run_opts(p, t, size, 0, DT_I32, 0, 1);
}

static int find_hz(const outcome *o, hazard_kind k)
{
    for (int i = 0; i < o->hz.n; i++)
        if (o->hz.v[i].kind == k)
            return i;
    return -1;
}

static void assert_verified(outcome *o)
{
    if (o->rc != TC_OK || !o->r.verified) {
        fprintf(stderr, "rc %d err '%s' completed %d verified %d wrong %lld\n", o->rc,
                o->err.msg, o->r.completed, o->r.verified, o->r.wrong_elems);
        for (int i = 0; i < o->hz.n; i++)
            fprintf(stderr, "  hazard %s: %s\n", hazard_kind_name(o->hz.v[i].kind),
                    o->hz.v[i].msg);
    }
    assert_int_equal(o->rc, TC_OK);
    assert_int_equal(o->r.completed, 1);
    assert_int_equal(o->hz.n, 0);
    assert_int_equal(o->r.wrong_elems, 0);
    assert_int_equal(o->r.verified, 1);
}

static void assert_wrong_data(outcome *o)
{
    assert_int_equal(o->rc, TC_OK);
    assert_int_equal(o->r.completed, 1);
    assert_int_equal(o->r.verified, 0);
    assert_true(o->r.wrong_elems > 0);
    assert_true(find_hz(o, HZ_WRONG_DATA) >= 0);
}

static void assert_time(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fabs(want))
        fprintf(stderr, "time %.15g, expected %.15g\n", got, want);
    assert_true(fabs(got - want) <= 1e-9 * fabs(want));
}

/* Set hasdep on every step something depends on (the runtime needs it). */
static void mark_hasdep(prog *p)
{
    for (int r = 0; r < p->ngpu; r++)
        for (int t = 0; t < p->gpus[r].ntbs; t++)
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++) {
                const prog_step *st = &p->gpus[r].tbs[t].steps[s];
                if (st->depid >= 0)
                    p->gpus[r].tbs[st->depid].steps[st->deps].hasdep = 1;
            }
}

#define ADD(tb, type, sb, so, db, dof, cnt) prog_add_step(tb, type, sb, so, db, dof, cnt, -1, -1)
#define ADDD(tb, type, sb, so, db, dof, cnt, di, ds) prog_add_step(tb, type, sb, so, db, dof, cnt, di, ds)
#define MOD(a, n) ((((a) % (n)) + (n)) % (n))

/* ------------------------------------------------------------ schedules */

/* Ring AllGather, k chunks per rank moved as one cnt-k step.  nocpy: send
 * o[r] and skip the copy (correct only in place, where o[r] is the input).
 * bug: the last rank's final receive lands one rank's slice off. */
static prog *ring_allgather_k(int n, int k, int nocpy, int bug)
{
    prog *p = prog_new("ring-ag", COLL_ALLGATHER, n, n * k);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, k, n * k, 0);
        prog_tb *tb = prog_add_tb(g, MOD(r + 1, n), MOD(r - 1, n), 0);
        if (nocpy)
            ADD(tb, ST_S, BUF_O, r * k, BUF_NONE, -1, k);
        else
            ADD(tb, ST_S, BUF_I, 0, BUF_NONE, -1, k);
        for (int s = 1; s <= n - 2; s++)
            ADD(tb, ST_RCS, BUF_NONE, -1, BUF_O, MOD(r - s, n) * k, k);
        int last = MOD(r - (n - 1), n);
        if (bug && r == n - 1)
            last = MOD(last + 1, n);
        ADD(tb, ST_R, BUF_NONE, -1, BUF_O, last * k, k);
        if (!nocpy) {
            prog_tb *c = prog_add_tb(&p->gpus[r], -1, -1, 0);
            ADD(c, ST_CPY, BUF_I, 0, BUF_O, r * k, k);
        }
    }
    return p;
}

static prog *ring_allgather(int n, int nocpy, int bug)
{
    return ring_allgather_k(n, 1, nocpy, bug);
}

/* Ring AllReduce, C = n: ReduceScatter by s, rrs..., rrcs (chunk c ends
 * on rank c), then AllGather by rcs..., r. */
static prog *ring_allreduce(int n)
{
    prog *p = prog_new("ring-ar", COLL_ALLREDUCE, n, n);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, n, n, 0);
        prog_tb *tb = prog_add_tb(g, MOD(r + 1, n), MOD(r - 1, n), 0);
        ADD(tb, ST_S, BUF_I, MOD(r - 1, n), BUF_NONE, -1, 1);
        for (int k = 1; k <= n - 2; k++)
            ADD(tb, ST_RRS, BUF_I, MOD(r - 1 - k, n), BUF_NONE, -1, 1);
        ADD(tb, ST_RRCS, BUF_I, r, BUF_O, r, 1);
        for (int j = 0; j <= n - 3; j++)
            ADD(tb, ST_RCS, BUF_NONE, -1, BUF_O, MOD(r - 1 - j, n), 1);
        ADD(tb, ST_R, BUF_NONE, -1, BUF_O, MOD(r + 1, n), 1);
    }
    return p;
}

/* Direct AllToAll, one chunk per pair; bug: rank 1 sends the wrong chunk to rank 0. */
static prog *direct_alltoall(int n, int bug)
{
    prog *p = prog_new("a2a", COLL_ALLTOALL, n, n);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, n, n, 0);
        for (int q = 0; q < n; q++) {
            if (q == r)
                continue;
            prog_tb *tb = prog_add_tb(g, q, q, 0);
            int off = (bug && r == 1 && q == 0) ? 1 : q;
            ADD(tb, ST_S, BUF_I, off, BUF_NONE, -1, 1);
            ADD(tb, ST_R, BUF_NONE, -1, BUF_O, q, 1);
        }
        prog_tb *c = prog_add_tb(g, -1, -1, 0);
        ADD(c, ST_CPY, BUF_I, r, BUF_O, r, 1);
    }
    return p;
}

/* Direct ReduceScatter: rank r sums chunk r of everyone into o[0] (or, with
 * into_input, into its own i[r], which is o[0] only in place); bug: rank 0
 * sends rank 1 the wrong chunk. */
static prog *direct_reducescatter(int n, int into_input, int bug)
{
    prog *p = prog_new("rs", COLL_REDUCESCATTER, n, n);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, n, 1, 0);
        int j = 0;
        for (int q = 0; q < n; q++) {
            if (q == r)
                continue;
            prog_tb *tb = prog_add_tb(g, q, q, 0);
            int off = (bug && r == 0 && q == 1) ? 2 : q;
            ADD(tb, ST_S, BUF_I, off, BUF_NONE, -1, 1);
            buf_kind db = into_input ? BUF_I : BUF_O;
            int dof = into_input ? r : 0;
            buf_kind sb = (j == 0 || into_input) ? BUF_I : BUF_O;
            int sof = (j == 0 || into_input) ? r : 0;
            ADDD(tb, ST_RRC, sb, sof, db, dof, 1, j > 0 ? j - 1 : -1, j > 0 ? 1 : -1);
            j++;
        }
    }
    mark_hasdep(p);
    return p;
}

/* AllReduce as ReduceScatter then AllGather, direct, C = n.  in_input:
 * work in i only (the output only in place); bug: rank 0's last receive
 * lands in the wrong chunk. */
static prog *rs_ag_allreduce(int n, int in_input, int bug)
{
    prog *p = prog_new("rsag", COLL_ALLREDUCE, n, n);
    buf_kind ob = in_input ? BUF_I : BUF_O;
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, n, n, 0);
        int j = 0, last = n - 2;
        for (int q = 0; q < n; q++) {
            if (q == r)
                continue;
            prog_tb *tb = prog_add_tb(g, q, q, 0);
            ADD(tb, ST_S, BUF_I, q, BUF_NONE, -1, 1);
            buf_kind sb = (j == 0) ? BUF_I : ob;
            ADDD(tb, ST_RRC, sb, r, ob, r, 1, j > 0 ? j - 1 : -1, j > 0 ? 1 : -1);
            ADDD(tb, ST_S, ob, r, BUF_NONE, -1, 1, j < last ? last : -1, j < last ? 1 : -1);
            int dof = q;
            if (bug && r == 0 && j == last)
                dof = MOD(q + 1, n) == 0 ? MOD(q + 2, n) : MOD(q + 1, n);
            ADD(tb, ST_R, BUF_NONE, -1, ob, dof, 1);
            j++;
        }
    }
    mark_hasdep(p);
    return p;
}

/* AllReduce by direct cyclic reduction, C = 1: shuffle k sends everyone's
 * input to rank r - k, and each rank adds what arrives in the order
 * r+1, r+2, ...: replicas sum in different orders. */
static prog *cyclic_allreduce(int n)
{
    prog *p = prog_new("cyclic", COLL_ALLREDUCE, n, 1);
    for (int r = 0; r < n; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 1, 0);
        prog_tb *c = prog_add_tb(g, -1, -1, 0);
        ADD(c, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
        for (int k = 1; k < n; k++) {
            prog_tb *tb = prog_add_tb(&p->gpus[r], MOD(r - k, n), MOD(r + k, n), 0);
            ADD(tb, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
            ADDD(tb, ST_RRC, BUF_O, 0, BUF_O, 0, 1, k - 1, k == 1 ? 0 : 1);
        }
    }
    mark_hasdep(p);
    return p;
}

/* 3-rank chain AllReduce, C = 1: 0 -> 1 -> 2 reduces, 2 -> 1 -> 0 returns.
 * use_rrcs: rank 1 and 2 use rrcs (rank 1 into scratch) instead of rrs and
 * rrc + s. */
static prog *chain_allreduce(int use_rrcs)
{
    prog *p = prog_new("chain", COLL_ALLREDUCE, 3, 1);
    prog_gpu *g0 = prog_add_gpu(p, 1, 1, 0);
    prog_tb *t0 = prog_add_tb(g0, 1, 1, 0);
    ADD(t0, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    ADD(t0, ST_R, BUF_NONE, -1, BUF_O, 0, 1);

    prog_gpu *g1 = prog_add_gpu(p, 1, 1, use_rrcs ? 1 : 0);
    prog_tb *a = prog_add_tb(g1, 2, 0, 0);
    if (use_rrcs)
        ADD(a, ST_RRCS, BUF_I, 0, BUF_S, 0, 1);
    else
        ADD(a, ST_RRS, BUF_I, 0, BUF_NONE, -1, 1);
    prog_tb *b = prog_add_tb(&p->gpus[1], 0, 2, 0);
    ADD(b, ST_RCS, BUF_NONE, -1, BUF_O, 0, 1);

    prog_gpu *g2 = prog_add_gpu(p, 1, 1, 0);
    prog_tb *t2 = prog_add_tb(g2, 1, 1, 0);
    if (use_rrcs) {
        ADD(t2, ST_RRCS, BUF_I, 0, BUF_O, 0, 1);
    } else {
        ADD(t2, ST_RRC, BUF_I, 0, BUF_O, 0, 1);
        ADD(t2, ST_S, BUF_O, 0, BUF_NONE, -1, 1);
    }
    return p;
}

/* 2-rank AllReduce with a scratch receive and a local re: o = i; then
 * (after the receive, via a nop when with_nop) o += s. */
static prog *re_allreduce(int with_nop)
{
    prog *p = prog_new("re", COLL_ALLREDUCE, 2, 1);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 1, 1);
        prog_tb *x = prog_add_tb(g, 1 - r, 1 - r, 0);
        ADD(x, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
        ADD(x, ST_R, BUF_NONE, -1, BUF_S, 0, 1);
        prog_tb *l = prog_add_tb(&p->gpus[r], -1, -1, 0);
        ADD(l, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
        if (with_nop)
            ADDD(l, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 1);
        ADD(l, ST_RE, BUF_S, 0, BUF_O, 0, 1);
    }
    mark_hasdep(p);
    return p;
}

/* One transfer per entry of (src, dst) pairs, each on its own tb and
 * channel; a 2-chunk AllGather shape, timing only. */
static prog *transfers(int n, const int (*pairs)[2], int npairs, int cnt)
{
    prog *p = prog_new("xfers", COLL_ALLGATHER, n, n * cnt);
    for (int r = 0; r < n; r++)
        prog_add_gpu(p, cnt, n * cnt, 0);
    for (int k = 0; k < npairs; k++) {
        int a = pairs[k][0], b = pairs[k][1];
        prog_tb *s = prog_add_tb(&p->gpus[a], b, -1, k);
        ADD(s, ST_S, BUF_I, 0, BUF_NONE, -1, cnt);
        prog_tb *d = prog_add_tb(&p->gpus[b], -1, a, k);
        ADD(d, ST_R, BUF_NONE, -1, BUF_O, a * cnt, cnt);
    }
    return p;
}

/* ------------------------------------------------------------ step semantics */

static void test_send_recv_copy(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = ring_allgather(2, 0, 0);
    outcome o = run_data(p, t, 2 * 4096, 0);
    assert_verified(&o);
    assert_int_equal(o.r.transfers, 2);
    assert_true(o.r.bytes_moved == 2 * 4096.0);
    assert_true(o.r.bytes_local == 2 * 4096.0);
    assert_int_equal(o.r.chunk_bytes, 4096);
    assert_int_equal(o.r.steps_run, 6);
    assert_int_equal(o.r.replicas_identical, -1);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_rcs_forwards(void **state)
{
    (void)state;
    topo *t = tp_fully(3);
    prog *p = ring_allgather(3, 0, 0);
    outcome o = run_data(p, t, 3 * 1024, 0);
    assert_verified(&o);
    assert_int_equal(o.r.transfers, 6);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_rrs_rrc_rcs_chain(void **state)
{
    (void)state;
    topo *t = tp_fully(3);
    prog *p = chain_allreduce(0);
    for (int dt = 0; dt < 2; dt++) {
        outcome o = run_opts(p, t, 4096, 1, dt ? DT_F32 : DT_I32, 0, 7);
        assert_verified(&o);
        assert_int_equal(o.r.replicas_identical, 1);
        assert_int_equal(o.r.transfers, 4);
        hazard_list_free(&o.hz);
    }
    prog_free(p);
    tp_free(t);
}

static void test_rrcs_writes_and_sends(void **state)
{
    (void)state;
    topo *t = tp_fully(3);
    prog *p = chain_allreduce(1);
    outcome o = run_data(p, t, 4096, 0);
    assert_verified(&o);
    assert_int_equal(o.r.transfers, 4);
    hazard_list_free(&o.hz);
    /* rank 2's rrcs is the only writer of its o[0]: point it at the wrong
     * local operand and the result must be caught. */
    p->gpus[2].tbs[0].steps[0].srcbuf = BUF_O;
    o = run_data(p, t, 4096, 0);
    assert_wrong_data(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_ring_allreduce_rrs_rrcs(void **state)
{
    (void)state;
    topo *t = tp_ring(5, 0.5, 25);
    prog *p = ring_allreduce(5);
    for (int inplace = 0; inplace < 2; inplace++)
        for (int dt = 0; dt < 2; dt++) {
            outcome o = run_opts(p, t, 5 * 4096, 1, dt ? DT_F32 : DT_I32, inplace, 11);
            assert_verified(&o);
            assert_int_equal(o.r.replicas_identical, 1);    /* each chunk summed once */
            assert_int_equal(o.r.transfers, 5 * 8);
            hazard_list_free(&o.hz);
        }
    /* 2(p-1) hops of one chunk each, plus the p-2 reductions on the way */
    outcome o = run_timing(p, t, 5 * 4096);
    double hop = 0.5 + 4096 / 25e3, red = 4096 / 1000e3;
    assert_time(o.r.time_us, 8 * hop + 4 * red);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_multi_chunk_steps(void **state)
{
    (void)state;
    topo *t = tp_ring(4, 0.5, 25);
    prog *p = ring_allgather_k(4, 3, 0, 0);
    outcome o = run_data(p, t, 12 * 1024, 0);
    assert_verified(&o);
    assert_true(o.r.bytes_moved == 4.0 * 3 * 3 * 1024);
    hazard_list_free(&o.hz);
    prog_free(p);
    p = ring_allgather_k(4, 3, 0, 1);
    o = run_data(p, t, 12 * 1024, 0);
    assert_wrong_data(&o);
    assert_int_equal(o.r.wrong_elems, 2 * 3 * 256);  /* one slice poison, one overwritten */
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_re_and_nop(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = re_allreduce(1);
    outcome o = run_data(p, t, 1 << 16, 0);
    assert_verified(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    /* Without the nop the re runs as soon as the copy ends, before the
     * receive: it reads the poisoned scratch. */
    p = re_allreduce(0);
    o = run_data(p, t, 1 << 16, 0);
    assert_wrong_data(&o);
    assert_int_equal(o.r.wrong_elems, 2 * (1 << 14));
    hazard_list_free(&o.hz);
    /* in f32 the poison is a NaN, and NaN never passes */
    o = run_opts(p, t, 1 << 16, 1, DT_F32, 0, 1);
    assert_wrong_data(&o);
    assert_int_equal(o.r.wrong_elems, 2 * (1 << 14));
    assert_non_null(strstr(o.hz.v[find_hz(&o, HZ_WRONG_DATA)].msg, "got nan"));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ postconditions */

static void test_allgather_post(void **state)
{
    (void)state;
    topo *t = tp_ring(5, 0.5, 25);
    prog *p = ring_allgather(5, 0, 0);
    outcome o = run_data(p, t, 5 * 2048, 0);
    assert_verified(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    p = ring_allgather(5, 0, 1);
    o = run_data(p, t, 5 * 2048, 0);
    assert_wrong_data(&o);
    /* rank 4's last receive went to o[1] instead of o[0]: o[0] stays poison */
    const hazard *h = &o.hz.v[find_hz(&o, HZ_WRONG_DATA)];
    assert_int_equal(h->rank, 4);
    assert_non_null(strstr(h->msg, "rank 4 o[0] element 0: got 2142952365 expected"));
    assert_non_null(strstr(h->msg, "(input chunk 0 of rank 0)"));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_alltoall_post(void **state)
{
    (void)state;
    topo *t = tp_fully(4);
    prog *p = direct_alltoall(4, 0);
    outcome o = run_data(p, t, 4 * 1024, 0);
    assert_verified(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    p = direct_alltoall(4, 1);
    o = run_data(p, t, 4 * 1024, 0);
    assert_wrong_data(&o);
    /* rank 0's o[1] holds rank 1's input chunk 1 instead of chunk 0 */
    assert_non_null(strstr(o.hz.v[find_hz(&o, HZ_WRONG_DATA)].msg,
                           "rank 0 o[1] element 0"));
    assert_int_equal(o.r.wrong_elems, 256);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_reducescatter_post(void **state)
{
    (void)state;
    topo *t = tp_fully(4);
    prog *p = direct_reducescatter(4, 0, 0);
    for (int dt = 0; dt < 2; dt++) {
        outcome o = run_opts(p, t, 4 * 4096, 1, dt ? DT_F32 : DT_I32, 0, 3);
        assert_verified(&o);
        assert_int_equal(o.r.replicas_identical, -1);
        hazard_list_free(&o.hz);
    }
    prog_free(p);
    p = direct_reducescatter(4, 0, 1);
    outcome o = run_data(p, t, 4 * 4096, 0);
    assert_wrong_data(&o);
    assert_non_null(strstr(o.hz.v[find_hz(&o, HZ_WRONG_DATA)].msg,
                           "(sum of input chunk 1 over all ranks)"));
    assert_int_equal(o.r.wrong_elems, 1024);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_allreduce_post(void **state)
{
    (void)state;
    topo *t = tp_fully(4);
    prog *p = rs_ag_allreduce(4, 0, 0);
    outcome o = run_data(p, t, 4 * 4096, 0);
    assert_verified(&o);
    assert_int_equal(o.r.replicas_identical, 1);
    hazard_list_free(&o.hz);
    prog_free(p);
    p = rs_ag_allreduce(4, 0, 1);
    o = run_data(p, t, 4 * 4096, 0);
    assert_wrong_data(&o);
    assert_int_equal(o.hz.v[find_hz(&o, HZ_WRONG_DATA)].rank, 0);
    assert_int_equal(o.r.replicas_identical, 0);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ in place */

static void test_inplace_allgather(void **state)
{
    (void)state;
    topo *t = tp_ring(4, 0.5, 25);
    prog *p = ring_allgather(4, 1, 0);      /* sends o[r], no copy */
    outcome o = run_data(p, t, 4 * 1024, 1);
    assert_verified(&o);
    hazard_list_free(&o.hz);
    o = run_data(p, t, 4 * 1024, 0);        /* out of place o[r] is poison */
    assert_wrong_data(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_inplace_allreduce(void **state)
{
    (void)state;
    topo *t = tp_fully(4);
    prog *p = rs_ag_allreduce(4, 1, 0);     /* works in i only */
    outcome o = run_data(p, t, 4 * 1024, 1);
    assert_verified(&o);
    assert_int_equal(o.r.replicas_identical, 1);
    hazard_list_free(&o.hz);
    o = run_data(p, t, 4 * 1024, 0);
    assert_wrong_data(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_inplace_reducescatter(void **state)
{
    (void)state;
    topo *t = tp_fully(3);
    prog *p = direct_reducescatter(3, 1, 0); /* sums into i[r] */
    outcome o = run_data(p, t, 3 * 1024, 1);
    assert_verified(&o);
    hazard_list_free(&o.hz);
    o = run_data(p, t, 3 * 1024, 0);
    assert_wrong_data(&o);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* Both ranks send their only chunk and overwrite it with the sum while the
 * peer has not consumed it yet: correct only if the send kept the data as
 * of the send (copy-on-write). */
static void test_send_keeps_data_as_sent(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = prog_new("ar2", COLL_ALLREDUCE, 2, 1);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 1, 0);
        prog_tb *tb = prog_add_tb(g, 1 - r, 1 - r, 0);
        ADD(tb, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
        ADD(tb, ST_RRC, BUF_I, 0, BUF_O, 0, 1);
    }
    for (int inplace = 0; inplace < 2; inplace++)
        for (int slow = 0; slow < 2; slow++) {
            t->reduce_gbps = slow ? 1 : 0;  /* with and without reduce time */
            outcome o = run_data(p, t, 1 << 14, inplace);
            assert_verified(&o);
            hazard_list_free(&o.hz);
        }
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ deadlock and FIFO */

static void test_deadlock_both_receive_first(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = prog_new("dl", COLL_ALLGATHER, 2, 2);
    for (int r = 0; r < 2; r++) {
        prog_gpu *g = prog_add_gpu(p, 1, 2, 0);
        prog_tb *tb = prog_add_tb(g, 1 - r, 1 - r, 0);
        ADD(tb, ST_R, BUF_NONE, -1, BUF_O, 1 - r, 1);
        ADD(tb, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    }
    outcome o = run_data(p, t, 2048, 0);
    assert_int_equal(o.rc, TC_OK);
    assert_int_equal(o.r.completed, 0);
    assert_int_equal(o.r.verified, 0);
    assert_int_equal(o.hz.n, 1);
    assert_int_equal(o.hz.v[0].kind, HZ_DEADLOCK);
    assert_string_equal(o.hz.v[0].msg,
                        "deadlock: rank 0 tb 0 step 0 (r from rank 1 chan 0) waits for a send "
                        "that never comes; rank 1 tb 0 step 0 (r from rank 0 chan 0) waits for "
                        "a send that never comes");
    assert_int_equal(o.hz.v[0].rank, 0);
    assert_int_equal(o.hz.v[0].step, 0);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* Rank 0 sends nsend times on chan 0, then (after them) once on chan 1;
 * rank 1 first waits for the chan-1 message, then receives on chan 0. */
static prog *fifo_prog(int nsend)
{
    prog *p = prog_new("fifo", COLL_ALLGATHER, 2, 2);
    prog_gpu *g0 = prog_add_gpu(p, 1, 2, 0);
    prog_tb *a = prog_add_tb(g0, 1, -1, 0);
    for (int k = 0; k < nsend; k++)
        ADD(a, ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    prog_tb *b = prog_add_tb(&p->gpus[0], 1, -1, 1);
    ADDD(b, ST_S, BUF_I, 0, BUF_NONE, -1, 1, 0, nsend - 1);
    prog_gpu *g1 = prog_add_gpu(p, 1, 2, 0);
    prog_tb *c = prog_add_tb(g1, -1, 0, 1);
    ADD(c, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
    prog_tb *d = prog_add_tb(&p->gpus[1], -1, 0, 0);
    ADDD(d, ST_NOP, BUF_NONE, -1, BUF_NONE, -1, 0, 0, 0);
    for (int k = 0; k < nsend; k++)
        ADD(d, ST_R, BUF_NONE, -1, BUF_O, 0, 1);
    mark_hasdep(p);
    return p;
}

static void test_fifo_capacity(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = fifo_prog(8);
    outcome o = run_timing(p, t, 2048);
    assert_int_equal(o.r.completed, 1);
    assert_int_equal(o.r.verified, 1);
    assert_int_equal(o.hz.n, 0);
    hazard_list_free(&o.hz);
    prog_free(p);

    p = fifo_prog(9);
    o = run_timing(p, t, 2048);
    assert_int_equal(o.r.completed, 0);
    assert_int_equal(o.r.verified, 0);
    assert_int_equal(o.hz.n, 1);
    assert_int_equal(o.hz.v[0].kind, HZ_DEADLOCK);
    const char *m = o.hz.v[0].msg;
    assert_non_null(strstr(m, "rank 0 tb 0 step 8 (s to rank 1 chan 0) waits for a full FIFO"));
    assert_non_null(strstr(m, "rank 0 tb 1 step 0 (s) waits for tb 0 step 8"));
    assert_non_null(strstr(m, "rank 1 tb 0 step 0 (r from rank 0 chan 1) waits for a send that "
                              "never comes"));
    assert_non_null(strstr(m, "rank 1 tb 1 step 0 (nop) waits for tb 0 step 0"));
    assert_int_equal(o.r.steps_run, 8);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ timing */

static void test_time_one_transfer(void **state)
{
    (void)state;
    topo *t = tp_new("pair", 1, 2);
    tp_link(t, 0, 1, 0.7, 50, 1);
    const int pairs[][2] = {{0, 1}};
    prog *p = transfers(2, pairs, 1, 1);
    outcome o = run_timing(p, t, 2 << 20);
    assert_int_equal(o.r.completed, 1);
    assert_int_equal(o.r.verified, 1);
    assert_time(o.r.time_us, 0.7 + 1048576 / 50e3);
    assert_int_equal(o.r.transfers, 1);
    assert_true(o.r.bytes_moved == 1048576.0);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* The program's protocol times every hop (hand-computed from NCCL's
 * figures: an NVLink hop's alpha x 0.6/3.4 and bandwidth x 0.5 under LL,
 * x 1.9/3.4 and x 0.92 under LL128; a NIC's alpha x 2.7/14 under LL, x 4/14
 * under LL128). */
static void test_time_protocols(void **state)
{
    (void)state;
    topo *t = tp_new("pair", 2, 2);
    tp_link(t, 0, 1, 0.7, 50, 1);
    tp_link(t, 2, 3, 0.7, 50, 1);
    const int nic0[] = {0, 1}, nic1[] = {2, 3};
    tp_nic(t, 0, nic0, 2, 1.4, 10);
    tp_nic(t, 1, nic1, 2, 1.4, 10);
    const int link[][2] = {{0, 1}}, net[][2] = {{0, 2}};
    const double mb = 1048576;
    const struct {
        const char *proto;
        const int (*pairs)[2];
        double want;
    } c[] = {
        {"Simple", link, 0.7 + mb / 50e3},
        {"LL", link, 0.7 * 0.6 / 3.4 + mb / 25e3},
        {"LL128", link, 0.7 * 1.9 / 3.4 + mb / 46e3},
        {"LL", net, 1.4 * 2.7 / 14 + mb / 5e3},
        {"LL128", net, 1.4 * 4.0 / 14 + mb / 9.2e3},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        prog *p = transfers(4, c[k].pairs, 1, 1);
        snprintf(p->proto, sizeof p->proto, "%s", c[k].proto);
        outcome o = run_timing(p, t, 4 << 20);
        assert_int_equal(o.r.completed, 1);
        assert_time(o.r.time_us, c[k].want);
        hazard_list_free(&o.hz);
        prog_free(p);
    }
    tp_free(t);
}

/* Run p for its time, assert it is want and that the synthesizer's timer
 * (sched/ptime) agrees. */
static void assert_timed(const prog *p, const topo *t, long long size, double want)
{
    outcome o = run_timing(p, t, size);
    assert_int_equal(o.r.completed, 1);
    assert_time(o.r.time_us, want);
    double us = 0;
    tc_err e;
    assert_int_equal(ptime_run(p, t, size, &us, &e), 0);
    assert_time(us, o.r.time_us);
    hazard_list_free(&o.hz);
}

/* "arbitration": a transfer waiting for one busy resource does not keep
 * another idle where the topology says "ready".  Two nodes of four ranks,
 * a NIC per pair: 0->4 holds NIC {0,1}'s egress and NIC {4,5}'s ingress;
 * 2->4 must wait for that ingress; 3->6 needs only NIC {2,3}'s egress,
 * which 2->4 would hold.  By default ("ready") 3->6 takes the idle egress
 * at once and 2->4 follows at h: 2 hops.  "reserve": 2->4 books the egress
 * for [h, 2h] and 3->6 follows it: 3 hops.  The synthesizer's timer
 * agrees in both. */
static void test_time_arbitration(void **state)
{
    (void)state;
    topo *t = tp_new("arb", 2, 4);
    const int n0[] = {0, 1}, n1[] = {2, 3}, n2[] = {4, 5}, n3[] = {6, 7};
    tp_nic(t, 0, n0, 2, 1.4, 10);
    tp_nic(t, 0, n1, 2, 1.4, 10);
    tp_nic(t, 1, n2, 2, 1.4, 10);
    tp_nic(t, 1, n3, 2, 1.4, 10);
    const int pairs[][2] = {{0, 4}, {2, 4}, {3, 6}};
    prog *p = transfers(8, pairs, 3, 1);
    double h = 1.4 + 65536 / 10e3;
    for (int ready = 0; ready <= 1; ready++) {
        t->arb_reserve = !ready;
        assert_timed(p, t, 8 * 65536, ready ? 2 * h : 3 * h);
    }
    /* alpha as a delay: the same order, each hold s / B */
    t->alpha_delay = 1;
    double hold = 65536 / 10e3;
    for (int ready = 0; ready <= 1; ready++) {
        t->arb_reserve = !ready;
        assert_timed(p, t, 8 * 65536, (ready ? 2 : 3) * hold + 1.4);
    }
    prog_free(p);
    tp_free(t);
}

/* Transfers waiting for a resource get it oldest request first, not by
 * rank.  One switch, ranks 0..4, every hop `one`: 1->0 holds 0's in port
 * from 0; 3->0 asks at 0 and waits; 4->2 lands at `one` and 2 relays it
 * to 0, asking at `one` as 0's in port frees; 0 relays that to 3.  Oldest
 * first: 3->0 in [one, 2 one], 2->0 after it, 0->3 in [3 one, 4 one]: 4
 * hops, as stage 2 plans and as "reserve" books.  Served by rank, 2->0
 * would jump the queue (3 hops). */
static void test_time_oldest_first(void **state)
{
    (void)state;
    topo *t = tp_new("queue", 1, 5);
    const int members[] = {0, 1, 2, 3, 4};
    tp_switch(t, members, 5, 0.35, 125);
    double one = 0.35 + 65536 / 125e3;
    prog *p = prog_new("queue", COLL_ALLGATHER, 5, 5);
    for (int r = 0; r < 5; r++)
        prog_add_gpu(p, 1, 5, 0);
    ADD(prog_add_tb(&p->gpus[1], 0, -1, 0), ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    ADD(prog_add_tb(&p->gpus[0], -1, 1, 0), ST_R, BUF_NONE, -1, BUF_O, 1, 1);
    ADD(prog_add_tb(&p->gpus[3], 0, -1, 0), ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    ADD(prog_add_tb(&p->gpus[0], -1, 3, 0), ST_R, BUF_NONE, -1, BUF_O, 3, 1);
    ADD(prog_add_tb(&p->gpus[4], 2, -1, 0), ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    ADD(prog_add_tb(&p->gpus[2], 0, 4, 0), ST_RCS, BUF_NONE, -1, BUF_O, 4, 1);
    ADD(prog_add_tb(&p->gpus[0], 3, 2, 0), ST_RCS, BUF_NONE, -1, BUF_O, 4, 1);
    ADD(prog_add_tb(&p->gpus[3], -1, 0, 0), ST_R, BUF_NONE, -1, BUF_O, 4, 1);
    for (int reserve = 0; reserve <= 1; reserve++) {
        t->arb_reserve = reserve;
        assert_timed(p, t, 5 * 65536, 4 * one);
    }
    prog_free(p);
    tp_free(t);
}

/* The run tallies, per resource, the time its transfers held it and the
 * bytes through it; an observer sees every step and transfer. */
typedef struct {
    int steps, xfers, recvs;
    double last_end;
} seen;

static void see_step(void *ctx, int rank, int tb, int step, step_type type, double t0, double t1)
{
    (void)rank, (void)tb, (void)step, (void)type;
    seen *s = ctx;
    s->steps++;
    assert_true(t0 <= t1);
}

static void see_xfer(void *ctx, const sim_xfer_event *x)
{
    seen *s = ctx;
    assert_int_equal(x->id, s->xfers);
    s->xfers++;
    assert_true(x->t_req <= x->t_start && x->t_start < x->t_end);
    s->last_end = x->t_end;
}

static void see_recv(void *ctx, long long id, int rank, int tb, int step, double t)
{
    (void)rank, (void)tb, (void)step, (void)t;
    seen *s = ctx;
    assert_true(id < s->xfers);
    s->recvs++;
}

static void test_time_resource_tally(void **state)
{
    (void)state;
    const int pairs[][2] = {{0, 1}, {0, 1}};
    prog *p = transfers(2, pairs, 2, 1);
    topo *t = tp_new("pair", 1, 2);
    tp_link(t, 0, 1, 0.7, 50, 1);
    seen sn = {0};
    sim_observer ob = {&sn, see_step, see_xfer, see_recv};
    sim_opts so = {.size_bytes = 2 * 65536, .obs = &ob};
    sim_result r;
    hazard_list hz = {0};
    tc_err e;
    assert_int_equal(sim_run(p, t, &so, &r, &hz, &e), 0);
    double one = 0.7 + 65536 / 50e3;
    assert_int_equal(r.nres, 1);
    assert_time(r.res_busy_us[0], 2 * one);
    assert_true(r.res_bytes[0] == 2 * 65536.0);
    assert_int_equal(sn.xfers, 2);
    assert_int_equal(sn.recvs, 2);
    assert_int_equal(sn.steps, 4);
    assert_time(sn.last_end, r.time_us);
    sim_result_free(&r);
    hazard_list_free(&hz);
    prog_free(p);
    tp_free(t);
}

static void test_time_link_multiplicity(void **state)
{
    (void)state;
    const int pairs[][2] = {{0, 1}, {0, 1}};
    prog *p = transfers(2, pairs, 2, 1);
    double one = 0.7 + 65536 / 50e3;
    for (int mult = 1; mult <= 2; mult++) {
        topo *t = tp_new("pair", 1, 2);
        tp_link(t, 0, 1, 0.7, 50, mult);
        outcome o = run_timing(p, t, 2 * 65536);
        assert_int_equal(o.r.completed, 1);
        assert_time(o.r.time_us, mult == 1 ? 2 * one : one);
        hazard_list_free(&o.hz);
        tp_free(t);
    }
    prog_free(p);
}

/* "alpha_mode": "delay": a transfer holds the link for bytes / B and lands
 * alpha later, so two on one link end one hold apart (not one hop apart),
 * the link is busy for the holds alone, a chain of hops still pays each
 * alpha, data still checks, and the
 * synthesizer's timer (sched/ptime) agrees with the executor. */
static void test_time_alpha_delay(void **state)
{
    (void)state;
    const int pairs[][2] = {{0, 1}, {0, 1}};
    prog *p = transfers(2, pairs, 2, 1);
    topo *t = tp_new("pair", 1, 2);
    tp_link(t, 0, 1, 0.7, 50, 1);
    t->alpha_delay = 1;
    double hold = 65536 / 50e3;
    sim_opts so = {.size_bytes = 2 * 65536};
    sim_result r;
    hazard_list hz = {0};
    tc_err e;
    assert_int_equal(sim_run(p, t, &so, &r, &hz, &e), 0);
    assert_time(r.time_us, 2 * hold + 0.7);
    assert_time(r.res_busy_us[0], 2 * hold);
    double us = 0;
    assert_int_equal(ptime_run(p, t, 2 * 65536, &us, &e), 0);
    assert_time(us, r.time_us);
    sim_result_free(&r);
    hazard_list_free(&hz);
    prog_free(p);
    tp_free(t);

    t = tp_ring(4, 0.7, 50);
    t->alpha_delay = 1;
    p = ring_allgather_k(4, 2, 0, 0);
    outcome o = run_data(p, t, 8 * 4096, 0);
    assert_verified(&o);
    assert_int_equal(ptime_run(p, t, 8 * 4096, &us, &e), 0);
    outcome ot = run_timing(p, t, 8 * 4096);
    assert_time(us, ot.r.time_us);
    t->alpha_delay = 0;
    outcome oh = run_timing(p, t, 8 * 4096);
    /* a ring forwards what it received: a chain of hops pays every alpha
     * in both modes (3 hops of 8 KiB) */
    assert_time(ot.r.time_us, 3 * (0.7 + 8192 / 50e3));
    assert_time(oh.r.time_us, ot.r.time_us);
    hazard_list_free(&o.hz);
    hazard_list_free(&ot.hz);
    hazard_list_free(&oh.hz);
    prog_free(p);
    tp_free(t);
}

static void test_time_switch_ports(void **state)
{
    (void)state;
    topo *t = tp_new("switch", 1, 3);
    const int members[] = {0, 1, 2};
    tp_switch(t, members, 3, 0.35, 125);
    double one = 0.35 + 65536 / 125e3;
    const int into_one[][2] = {{0, 2}, {1, 2}};   /* share rank 2's in port */
    const int out_of_one[][2] = {{0, 1}, {0, 2}}; /* share rank 0's out port */
    const int disjoint[][2] = {{0, 1}, {1, 2}};   /* 0 out, 1 in / 1 out, 2 in */
    const int(*cases[3])[2] = {into_one, out_of_one, disjoint};
    const double want[3] = {2 * one, 2 * one, one};
    for (int k = 0; k < 3; k++) {
        prog *p = transfers(3, cases[k], 2, 1);
        outcome o = run_timing(p, t, 3 * 65536);
        assert_int_equal(o.r.completed, 1);
        assert_time(o.r.time_us, want[k]);
        hazard_list_free(&o.hz);
        prog_free(p);
    }
    tp_free(t);
}

static void test_time_nic_sharing(void **state)
{
    (void)state;
    const int pairs[][2] = {{0, 2}, {1, 3}};
    prog *p = transfers(4, pairs, 2, 1);
    double one = 2.6 + 65536 / 12.5e3;
    for (int per_rank = 0; per_rank < 2; per_rank++) {
        topo *t = tp_new("two-nodes", 2, 2);
        tp_link(t, 0, 1, 0.7, 50, 1);
        tp_link(t, 1, 0, 0.7, 50, 1);
        tp_link(t, 2, 3, 0.7, 50, 1);
        tp_link(t, 3, 2, 0.7, 50, 1);
        if (per_rank) {
            for (int r = 0; r < 4; r++)
                tp_nic(t, r / 2, &r, 1, 2.6, 12.5);
        } else {
            const int n0[] = {0, 1}, n1[] = {2, 3};
            tp_nic(t, 0, n0, 2, 2.6, 12.5);
            tp_nic(t, 1, n1, 2, 2.6, 12.5);
        }
        outcome o = run_timing(p, t, 4 * 65536);
        assert_int_equal(o.r.completed, 1);
        assert_time(o.r.time_us, per_rank ? one : 2 * one);
        hazard_list_free(&o.hz);
        tp_free(t);
    }
    prog_free(p);
}

static void test_time_ring_allgather(void **state)
{
    (void)state;
    int n = 8;
    long long size = 8 << 20;
    topo *t = tp_ring(n, 0.5, 25);
    prog *p = ring_allgather(n, 0, 0);
    outcome o = run_data(p, t, size, 0);
    assert_verified(&o);
    assert_time(o.r.time_us, (n - 1) * (0.5 + (double)(size / n) / 25e3));
    hazard_list_free(&o.hz);
    /* timing-only gives the same time */
    o = run_timing(p, t, size);
    assert_time(o.r.time_us, (n - 1) * (0.5 + (double)(size / n) / 25e3));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_time_local_steps(void **state)
{
    (void)state;
    /* re_allreduce: cpy (copy bw) then, after the receive, re (reduce bw) */
    topo *t = tp_fully(2);
    t->copy_gbps = 100;
    t->reduce_gbps = 20;
    prog *p = re_allreduce(1);
    long long c = 1 << 20;
    outcome o = run_timing(p, t, c);
    double recv_end = 0.7 + c / 50e3;       /* > copy time c / 100e3 */
    assert_time(o.r.time_us, recv_end + c / 20e3);
    assert_true(o.r.bytes_local == 4.0 * c);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* Rank 0 sends its chunk to rank 1, which reduces it into o (rrc), after
 * `copy_first` a local copy of its input in the same tb. */
static prog *send_then_rrc(int copy_first)
{
    prog *p = prog_new("rrc", COLL_ALLREDUCE, 2, 1);
    for (int r = 0; r < 2; r++)
        prog_add_gpu(p, 1, 1, 0);
    ADD(prog_add_tb(&p->gpus[0], 1, -1, 0), ST_S, BUF_I, 0, BUF_NONE, -1, 1);
    prog_tb *tb = prog_add_tb(&p->gpus[1], -1, 0, 0);
    if (copy_first)
        ADD(tb, ST_CPY, BUF_I, 0, BUF_O, 0, 1);
    ADD(tb, ST_RRC, BUF_I, 0, BUF_O, 0, 1);
    return p;
}

/* A receive that reduces reduces as the data lands, a slice (1 MiB under
 * Simple) at a time, as the runtimes' primitives do: a 4 MiB rrc over a
 * 50 GB/s link ends one slice's reduction after the last byte where the
 * reduction is faster than the link, and at the first byte plus the whole
 * reduction where it is slower; a tb that reaches the step after the data
 * landed reduces it all then.  The synthesizer's timer agrees. */
static void test_time_reduce_streams(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    long long c = 4 << 20, slice = 1 << 20;
    double landed = 0.7 + c / 50e3;
    prog *p = send_then_rrc(0);
    t->reduce_gbps = 100;
    assert_timed(p, t, c, landed + slice / 100e3);
    t->reduce_gbps = 20;
    assert_timed(p, t, c, 0.7 + c / 20e3);
    /* a transfer smaller than a slice: the whole reduction after it */
    t->reduce_gbps = 100;
    assert_timed(p, t, 64 << 10, 0.7 + (64 << 10) / 50e3 + (64 << 10) / 100e3);
    prog_free(p);
    /* the tb copies first (c / 10 GB/s, beyond the landing), then reduces */
    p = send_then_rrc(1);
    t->copy_gbps = 10;
    assert_timed(p, t, c, c / 10e3 + c / 100e3);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ device model */

static topo *chip_topo(void)
{
    topo *t = tp_new("chips", 1, 4);
    t->kind = TOPO_CHIP;
    t->chips_per_node = 2;
    t->clusters_per_chip = 2;
    tp_full(t, 1.0, 100);
    return t;
}

static void test_chip_cluster_syncs(void **state)
{
    (void)state;
    topo *t = chip_topo();
    /* rank = chip * 2 + cluster */
    const int cluster_only[][2] = {{0, 1}};
    const int chip_only[][2] = {{0, 2}};
    const int both[][2] = {{0, 3}};
    const int all[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 3}};
    struct {
        const int (*pairs)[2];
        int n;
        long long chip, cluster;
    } cases[] = {{cluster_only, 1, 0, 1}, {chip_only, 1, 1, 0}, {both, 1, 1, 1}, {all, 4, 3, 2}};
    for (int k = 0; k < 4; k++) {
        prog *p = transfers(4, cases[k].pairs, cases[k].n, 1);
        outcome o = run_timing(p, t, 4 * 256);
        assert_int_equal(o.r.completed, 1);
        assert_int_equal(o.r.chip_syncs, cases[k].chip);
        assert_int_equal(o.r.cluster_syncs, cases[k].cluster);
        hazard_list_free(&o.hz);
        prog_free(p);
    }
    /* a GPU topology counts none */
    t->kind = TOPO_GPU;
    prog *p = transfers(4, all, 4, 1);
    outcome o = run_timing(p, t, 4 * 256);
    assert_int_equal(o.r.chip_syncs, 0);
    assert_int_equal(o.r.cluster_syncs, 0);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_dma_rule(void **state)
{
    (void)state;
    topo *t = chip_topo();
    t->dma_bytes = 256;
    /* 2 ranks' worth of a 4-rank AllGather shape with 4 chunks per rank of
     * 128 bytes: i has 4 chunks, o 16 */
    prog *p = prog_new("dma", COLL_ALLGATHER, 4, 16);
    for (int r = 0; r < 4; r++)
        prog_add_gpu(p, 4, 16, 0);
    prog_tb *s = prog_add_tb(&p->gpus[1], 0, -1, 0);
    ADD(s, ST_S, BUF_I, 0, BUF_NONE, -1, 2);        /* 256 B at 0: fine */
    ADD(s, ST_S, BUF_I, 2, BUF_NONE, -1, 2);        /* 256 B at 256: fine */
    ADD(s, ST_S, BUF_I, 1, BUF_NONE, -1, 3);        /* 384 B at 128: wrong */
    prog_tb *d = prog_add_tb(&p->gpus[0], -1, 1, 0);
    ADD(d, ST_R, BUF_NONE, -1, BUF_O, 4, 2);
    ADD(d, ST_R, BUF_NONE, -1, BUF_O, 6, 2);
    ADD(d, ST_R, BUF_NONE, -1, BUF_O, 4, 3);        /* 384 B at 512: wrong size */
    outcome o = run_timing(p, t, 16 * 128);
    assert_int_equal(o.rc, TC_OK);
    assert_int_equal(o.r.completed, 1);
    assert_int_equal(o.r.verified, 0);
    assert_int_equal(o.hz.n, 2);
    assert_int_equal(o.hz.v[0].kind, HZ_DEVICE);
    assert_string_equal(o.hz.v[0].msg, "rank 0 tb 0 step 2: DMA moves 384 bytes at offset 512; "
                                       "the device moves whole 256-byte aligned segments");
    assert_string_equal(o.hz.v[1].msg, "rank 1 tb 0 step 2: DMA moves 384 bytes at offset 128; "
                                       "the device moves whole 256-byte aligned segments");
    hazard_list_free(&o.hz);
    /* without the two bad steps: no hazard */
    p->gpus[1].tbs[0].nsteps = 2;
    p->gpus[0].tbs[0].nsteps = 2;
    o = run_timing(p, t, 16 * 128);
    assert_int_equal(o.hz.n, 0);
    assert_int_equal(o.r.verified, 1);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_no_route(void **state)
{
    (void)state;
    topo *t = tp_new("island", 1, 2);   /* no links at all */
    const int pairs[][2] = {{0, 1}};
    prog *p = transfers(2, pairs, 1, 1);
    outcome o = run_timing(p, t, 2048);
    assert_int_equal(o.rc, TC_OK);
    assert_int_equal(o.r.completed, 0);
    assert_int_equal(o.r.verified, 0);
    int k = find_hz(&o, HZ_DEVICE);
    assert_true(k >= 0);
    assert_non_null(strstr(o.hz.v[k].msg, "rank 0"));
    assert_non_null(strstr(o.hz.v[k].msg, "rank 1"));
    assert_non_null(strstr(o.hz.v[k].msg, "island"));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ f32 replicas */

static void test_f32_replicas(void **state)
{
    (void)state;
    topo *t = tp_fully(4);
    prog *cyc = cyclic_allreduce(4);
    prog *rsag = rs_ag_allreduce(4, 0, 0);
    int differed = 0;
    for (unsigned seed = 1; seed <= 5; seed++) {
        outcome o = run_opts(cyc, t, 4096, 1, DT_F32, 0, seed);
        assert_verified(&o);
        assert_true(o.r.max_rel_err <= 5 * ldexp(1.0, -24));
        if (o.r.replicas_identical == 0)
            differed = 1;
        hazard_list_free(&o.hz);
        o = run_opts(rsag, t, 4 * 4096, 1, DT_F32, 0, seed);
        assert_verified(&o);
        assert_int_equal(o.r.replicas_identical, 1);
        hazard_list_free(&o.hz);
        /* i32 is exact: even the cyclic order gives identical replicas */
        o = run_opts(cyc, t, 4096, 1, DT_I32, 0, seed);
        assert_verified(&o);
        assert_int_equal(o.r.replicas_identical, 1);
        hazard_list_free(&o.hz);
    }
    assert_true(differed);
    prog_free(cyc);
    prog_free(rsag);
    tp_free(t);
}

/* ------------------------------------------------------------ errors and robustness */

static void test_input_errors(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = ring_allgather(2, 0, 0);
    outcome o = run_timing(p, t, 0);
    assert_int_equal(o.rc, TC_INPUT);
    o = run_timing(p, t, 1001);
    assert_int_equal(o.rc, TC_INPUT);
    assert_non_null(strstr(o.err.msg, "1001"));
    o = run_data(p, t, 2 * 6, 0);               /* 6-byte chunks */
    assert_int_equal(o.rc, TC_INPUT);
    assert_non_null(strstr(o.err.msg, "6 bytes"));
    assert_int_equal(o.r.steps_run, 0);
    o = run_data(p, t, 24LL << 30, 0);          /* 2 ranks x 3 slots x 12 GiB */
    assert_int_equal(o.rc, TC_INPUT);
    assert_non_null(strstr(o.err.msg, "72.0 GiB"));
    assert_non_null(strstr(o.err.msg, "--no-data"));
    o = run_timing(p, t, 24LL << 30);           /* fine without data */
    assert_int_equal(o.rc, TC_OK);
    assert_int_equal(o.r.verified, 1);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_bad_program_no_crash(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    prog *p = ring_allgather(2, 0, 0);
    p->gpus[0].tbs[0].steps[1].dstoff = 7;      /* o has 2 chunks */
    p->gpus[1].tbs[1].steps[0].depid = 5;       /* no such tb */
    p->gpus[1].tbs[0].recv = 9;                 /* no such rank */
    outcome o = run_data(p, t, 2048, 0);
    assert_int_equal(o.rc, TC_OK);
    assert_int_equal(o.r.completed, 0);
    assert_int_equal(o.r.verified, 0);
    assert_int_equal(o.r.steps_run, 0);
    assert_true(find_hz(&o, HZ_BOUNDS) >= 0);
    assert_true(find_hz(&o, HZ_DEPENDENCY) >= 0);
    assert_true(find_hz(&o, HZ_CONNECTION) >= 0);
    assert_non_null(strstr(o.hz.v[find_hz(&o, HZ_BOUNDS)].msg, "rank 0 tb 0 step 1: dst"));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

static void test_pairing_mismatch(void **state)
{
    (void)state;
    topo *t = tp_fully(2);
    const int pairs[][2] = {{0, 1}};
    prog *p = transfers(2, pairs, 1, 1);
    ADD(&p->gpus[0].tbs[0], ST_S, BUF_I, 0, BUF_NONE, -1, 1);  /* one send too many */
    outcome o = run_timing(p, t, 2048);
    assert_int_equal(o.r.completed, 1);
    assert_int_equal(o.r.verified, 0);
    int k = find_hz(&o, HZ_PAIRING);
    assert_true(k >= 0);
    assert_non_null(strstr(o.hz.v[k].msg, "never received"));
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

/* ------------------------------------------------------------ scale */

static void test_scale_timing_only(void **state)
{
    (void)state;
    int n = 256;
    long long size = (long long)n << 20;
    topo *t = tp_ring(n, 0.5, 25);
    prog *p = ring_allgather(n, 0, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    outcome o = run_timing(p, t, size);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double wall = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    assert_int_equal(o.r.completed, 1);
    assert_int_equal(o.r.verified, 1);
    assert_int_equal(o.r.steps_run, (long long)n * (n + 1));
    assert_time(o.r.time_us, (n - 1) * (0.5 + (double)(size / n) / 25e3));
    assert_true(wall < 2.0);
    hazard_list_free(&o.hz);
    prog_free(p);
    tp_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_recv_copy),
        cmocka_unit_test(test_rcs_forwards),
        cmocka_unit_test(test_rrs_rrc_rcs_chain),
        cmocka_unit_test(test_rrcs_writes_and_sends),
        cmocka_unit_test(test_ring_allreduce_rrs_rrcs),
        cmocka_unit_test(test_multi_chunk_steps),
        cmocka_unit_test(test_re_and_nop),
        cmocka_unit_test(test_allgather_post),
        cmocka_unit_test(test_alltoall_post),
        cmocka_unit_test(test_reducescatter_post),
        cmocka_unit_test(test_allreduce_post),
        cmocka_unit_test(test_inplace_allgather),
        cmocka_unit_test(test_inplace_allreduce),
        cmocka_unit_test(test_inplace_reducescatter),
        cmocka_unit_test(test_send_keeps_data_as_sent),
        cmocka_unit_test(test_deadlock_both_receive_first),
        cmocka_unit_test(test_fifo_capacity),
        cmocka_unit_test(test_time_one_transfer),
        cmocka_unit_test(test_time_link_multiplicity),
        cmocka_unit_test(test_time_alpha_delay),
        cmocka_unit_test(test_time_arbitration),
        cmocka_unit_test(test_time_oldest_first),
        cmocka_unit_test(test_time_reduce_streams),
        cmocka_unit_test(test_time_switch_ports),
        cmocka_unit_test(test_time_nic_sharing),
        cmocka_unit_test(test_time_ring_allgather),
        cmocka_unit_test(test_time_local_steps),
        cmocka_unit_test(test_chip_cluster_syncs),
        cmocka_unit_test(test_dma_rule),
        cmocka_unit_test(test_no_route),
        cmocka_unit_test(test_f32_replicas),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_bad_program_no_crash),
        cmocka_unit_test(test_pairing_mismatch),
        cmocka_unit_test(test_scale_timing_only),
        cmocka_unit_test(test_time_protocols),
        cmocka_unit_test(test_time_resource_tally),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
