/* test_propose.c — the sketches a plan proposes from a topology
 * (plan/propose.h): on a node of links whose GPUs share NICs (MI250 x2), the
 * rails patterns beside the relays, each GPU crossing with its own chunks to
 * the same GPU of the other node; none where a node has one NIC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fixtures.h"
#include "plan/propose.h"

/* The proposal whose name ends in suffix, or NULL. */
static const proposal *find(const proposal *p, int n, const char *suffix)
{
    size_t ls = strlen(suffix);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(p[i].name);
        if (l >= ls && !strcmp(p[i].name + l - ls, suffix))
            return &p[i];
    }
    return NULL;
}

/* Its internode_conn and gpus_to_sender_rev_map are i -> [i] for every
 * local rank i of R, and its chunkup is cup. */
static void assert_rails(const proposal *p, int R, int cup)
{
    cJSON *j = cJSON_Parse(p->json);
    assert_non_null(j);
    cJSON *inter = cJSON_GetObjectItem(j, "internode_sketch");
    cJSON *conn = cJSON_GetObjectItem(inter, "internode_conn");
    cJSON *rev = cJSON_GetObjectItem(inter, "gpus_to_sender_rev_map");
    assert_non_null(conn);
    assert_non_null(rev);
    for (int i = 0; i < R; i++) {
        char k[16];
        snprintf(k, sizeof k, "%d", i);
        cJSON *c = cJSON_GetObjectItem(conn, k), *r = cJSON_GetObjectItem(rev, k);
        assert_int_equal(cJSON_GetArraySize(c), 1);
        assert_int_equal(cJSON_GetArrayItem(c, 0)->valueint, i);
        assert_int_equal(cJSON_GetArraySize(r), 1);
        assert_int_equal(cJSON_GetArrayItem(r, 0)->valueint, i);
    }
    cJSON *hp = cJSON_GetObjectItem(j, "hyperparameters");
    assert_int_equal(cJSON_GetObjectItem(hp, "input_chunkup")->valueint, cup);
    cJSON_Delete(j);
}

static void test_mi250_rails(void **state)
{
    (void)state;
    topo *t = fx_topo("mi250-x2");
    proposal p[PROPOSE_MAX];
    int n = propose_sketches(t, 1, p);
    assert_true(n > 0 && n <= PROPOSE_MAX);
    const proposal *r4 = find(p, n, "-rails-cup4"), *r8 = find(p, n, "-rails-cup8");
    assert_non_null(r4);
    assert_non_null(r8);
    assert_rails(r4, t->ranks_per_node, 4);
    assert_rails(r8, t->ranks_per_node, 8);
    /* the relay patterns stay */
    assert_non_null(find(p, n, "-cup8"));
    /* each loads and fits the machine */
    for (int i = 0; i < n; i++) {
        tc_err e;
        sketch *s = sketch_parse(p[i].json, p[i].name, &e);
        assert_non_null(s);
        assert_int_equal(sketch_check(s, t, &e), TC_OK);
        sketch_free(s);
    }
    proposals_free(p, n);
    topo_free(t);
}

/* One NIC a node (NDv2 x2): no GPU has a NIC of its own to cross by. */
static void test_one_nic_no_rails(void **state)
{
    (void)state;
    topo *t = fx_topo("ndv2-x2");
    proposal p[PROPOSE_MAX];
    int n = propose_sketches(t, 1, p);
    assert_null(find(p, n, "-rails-cup4"));
    assert_null(find(p, n, "-rails-cup8"));
    proposals_free(p, n);
    topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mi250_rails),
        cmocka_unit_test(test_one_nic_no_rails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
