/* hier.c — hierarchical routing: one node's routing MILP composed with rails
 * between nodes (see hier.h for the construction and why).
 *
 * The work is three walks: pick each local rank's rail (sender, receiver),
 * route one node with the sketch's intra-node keys, then lay every chunk of
 * the cluster over the node routing and the rails.  The node routing is
 * indexed per node chunk (origin, index) so each composed chunk copies its
 * sends in the order route_solve gave them (a hop after the hop feeding it). */
#include "hier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/cost.h"
#include "../util/mem.h"

void hier_stats_free(hier_stats *hs)
{
    if (!hs)
        return;
    free(hs->sender);
    free(hs->receiver);
    hs->sender = hs->receiver = NULL;
}

/* s(g): g itself if g's chunks may leave through g and g has an allowed
 * pair, else the lowest such rank; -1 if none (or none with a NIC). */
static int rail_sender(const sketch *s, const topo *t, int g)
{
    int rpn = t->ranks_per_node;
    if (sketch_leaves_via(s, rpn, g, g) && t->nic_of_rank[g] >= 0)
        return g;
    for (int x = 0; x < rpn; x++)
        if (sketch_leaves_via(s, rpn, g, x) && t->nic_of_rank[x] >= 0)
            return x;
    return -1;
}

/* r for sender x: x itself if the sketch lets x reach x, else the lowest
 * allowed receiver with a NIC; -1 if none. */
static int rail_receiver(const sketch *s, const topo *t, int x)
{
    int rpn = t->ranks_per_node;
    if (sketch_internode_ok(s, rpn, x, x) && t->nic_of_rank[x] >= 0)
        return x;
    for (int r = 0; r < rpn; r++)
        if (sketch_internode_ok(s, rpn, x, r) && t->nic_of_rank[r] >= 0)
            return r;
    return -1;
}

/* Fill sender/receiver for every local rank; TC_INPUT naming the first
 * rank without a rail. */
static int pick_rails(const sketch *s, const topo *t, int *sender, int *receiver, tc_err *err)
{
    for (int g = 0; g < t->ranks_per_node; g++) {
        int x = rail_sender(s, t, g);
        int r = x >= 0 ? rail_receiver(s, t, x) : -1;
        if (x < 0 || r < 0)
            return tc_err_set(err, TC_INPUT,
                              "%s: hierarchical synthesis: local rank %d's chunks have no rank "
                              "with a NIC to %s the node through (sketch %s)",
                              t->name, g, x < 0 ? "leave" : "enter", s->name);
        sender[g] = x;
        receiver[g] = r;
    }
    return TC_OK;
}

int hier_applies(const sketch *s, const topo *t, tc_err *err)
{
    if (t->nnodes < 2)
        return tc_err_set(err, TC_INPUT,
                          "%s: hierarchical synthesis needs a cluster of at least 2 nodes "
                          "(this topology has 1)", t->name);
    int rpn = t->ranks_per_node;
    int *a = xcalloc((size_t)rpn, sizeof *a), *b = xcalloc((size_t)rpn, sizeof *b);
    int rc = pick_rails(s, t, a, b, err);
    free(a);
    free(b);
    return rc;
}

/* The sketch for one node: the intra-node keys of s, no inter-node keys,
 * and the symmetries that act within a node.  Shares s's strings and
 * arrays (never freed through the copy); syms is the caller's room. */
static sketch node_sketch(const sketch *s, int rpn, sketch_sym *syms)
{
    sketch ns = *s;
    ns.nnodes = 1;
    ns.has_internode = 0;
    ns.conn = SK_CONN_NONE;
    ns.nconn = 0;
    ns.conn_pairs = NULL;
    ns.has_via = 0;
    ns.nvia = 0;
    ns.via = NULL;
    ns.enforce_ordering = 0;
    ns.nsym = 0;
    for (int i = 0; i < s->nsym; i++)
        if (s->sym[i].size > 0 && s->sym[i].size <= rpn && rpn % s->sym[i].size == 0)
            syms[ns.nsym++] = s->sym[i];
    ns.sym = syms;
    return ns;
}

/* The node routing indexed by node chunk: sends of chunk c are
 * idx[start[c] .. start[c + 1]), in the routing's order. */
typedef struct {
    const algo *a;
    int *start, *idx;
} chunk_index;

static void index_chunks(const algo *a, chunk_index *ci)
{
    int nc = a->nranks * a->chunks_per_rank;
    ci->a = a;
    ci->start = xcalloc((size_t)nc + 1, sizeof *ci->start);
    ci->idx = xcalloc((size_t)(a->nsends > 0 ? a->nsends : 1), sizeof *ci->idx);
    for (int i = 0; i < a->nsends; i++)
        ci->start[a->sends[i].origin * a->chunks_per_rank + a->sends[i].index + 1]++;
    for (int c = 0; c < nc; c++)
        ci->start[c + 1] += ci->start[c];
    int *fill = xcalloc((size_t)nc, sizeof *fill);
    for (int i = 0; i < a->nsends; i++) {
        int c = a->sends[i].origin * a->chunks_per_rank + a->sends[i].index;
        ci->idx[ci->start[c] + fill[c]++] = i;
    }
    free(fill);
}

static void index_free(chunk_index *ci)
{
    free(ci->start);
    free(ci->idx);
}

/* Composition state: the cluster algo being built, and per rank the time
 * the current chunk arrives there (uncontended: one hop cost per hop). */
typedef struct {
    const topo *t;
    double chunk;
    algo *out;
    double *at;         /* [nranks] arrival of the current chunk, < 0: not there */
} compose;

static void hop(compose *c, int origin, int index, int src, int dst)
{
    topo_route rt = topo_route_of(c->t, src, dst);
    double t0 = c->at[src] > 0 ? c->at[src] : 0;
    double t1 = t0 + cost_hop_us(&rt, c->chunk);
    algo_add_send(c->out, origin, index, src, dst, t0, t1);
    c->at[dst] = t1;
}

/* Copy node chunk nc's whole tree into node `node`. */
static void node_tree(compose *c, const chunk_index *ci, int nc, int node, int origin, int index)
{
    int rpn = c->t->ranks_per_node;
    for (int p = ci->start[nc]; p < ci->start[nc + 1]; p++) {
        const algo_send *s = &ci->a->sends[ci->idx[p]];
        hop(c, origin, index, node * rpn + s->src, node * rpn + s->dst);
    }
}

/* Copy the path of node chunk nc from its origin to local `to` into node
 * `node` (the hops of its tree on that path, origin first). */
static void node_path(compose *c, const chunk_index *ci, int nc, int to, int node, int origin,
                      int index)
{
    int rpn = c->t->ranks_per_node, n = ci->start[nc + 1] - ci->start[nc];
    int *path = xcalloc((size_t)(n > 0 ? n : 1), sizeof *path), len = 0;
    for (int v = to; len < n;) {
        int found = -1;
        for (int p = ci->start[nc]; p < ci->start[nc + 1]; p++)
            if (ci->a->sends[ci->idx[p]].dst == v)
                found = ci->idx[p];
        if (found < 0)
            break;
        path[len++] = found;
        v = ci->a->sends[found].src;
    }
    while (len-- > 0) {
        const algo_send *s = &ci->a->sends[path[len]];
        hop(c, origin, index, node * rpn + s->src, node * rpn + s->dst);
    }
    free(path);
}

/* Does local r reach every other local rank of a node in one hop (a link
 * or a switch)? */
static int reaches_all(const topo *t, int r)
{
    for (int b = 0; b < t->ranks_per_node; b++) {
        topo_route rt = topo_route_of(t, r, b);
        if (b != r && rt.kind != ROUTE_LINK && rt.kind != ROUTE_SWITCH)
            return 0;
    }
    return 1;
}

/* Spread chunk (origin, index) from local r over node `node` by a binomial
 * tree (the holders double each round: local r + i sends to r + i + 2^t),
 * when every local pair has a direct route (a switch): the chunk reaches
 * all R - 1 others in ceil(log2 R) rounds instead of R - 1 sends in a row
 * out of r, the same sends in all, so the last chunk's spreading is no
 * longer a tail of R - 1 transfers.  Else the node tree of (r, index). */
static void spread(compose *c, const chunk_index *ci, int switched, int r, int node, int origin,
                   int index)
{
    int rpn = c->t->ranks_per_node, k = c->out->chunks_per_rank;
    if (!switched) {
        node_tree(c, ci, r * k + index % k, node, origin, index);
        return;
    }
    for (int step = 1; step < rpn; step *= 2)
        for (int i = 0; i < step && i + step < rpn; i++)
            hop(c, origin, index, node * rpn + (r + i) % rpn, node * rpn + (r + i + step) % rpn);
}

/* Does every local rank reach every other in one hop (a link or a
 * switch)? */
static int node_switched(const topo *t)
{
    for (int r = 0; r < t->ranks_per_node; r++)
        if (!reaches_all(t, r))
            return 0;
    return 1;
}

/* AllGather: every chunk over its origin node's tree, then both ways round
 * the ring of nodes on its rail, each node spreading it from the receiver
 * (spread: a binomial tree on a switched node; measured at 1 GiB, the
 * bound ratio of DGX-2 x8 went from 0.845 to 0.917, DGX H100 x16 from
 * 0.902 to 0.935, against the node tree, a star out of the receiver whose
 * last chunk was a tail of R - 1 transfers). */
static void compose_allgather(compose *c, const chunk_index *ci, const int *sender,
                              const int *receiver)
{
    const topo *t = c->t;
    int rpn = t->ranks_per_node, N = t->nnodes, k = c->out->chunks_per_rank;
    int switched = node_switched(t);
    for (int n = 0; n < N; n++)
        for (int g = 0; g < rpn; g++)
            for (int j = 0; j < k; j++) {
                int o = n * rpn + g, x = sender[g], r = receiver[g];
                for (int v = 0; v < t->nranks; v++)
                    c->at[v] = -1;
                c->at[o] = 0;
                node_tree(c, ci, g * k + j, n, o, j);
                int fwd = N / 2, back = N - 1 - fwd;
                for (int dir = 0; dir < 2; dir++) {
                    int prev = n, steps = dir == 0 ? fwd : back;
                    for (int h = 1; h <= steps; h++) {
                        int m = dir == 0 ? (n + h) % N : (n - h + N) % N;
                        hop(c, o, j, prev * rpn + x, m * rpn + r);
                        spread(c, ci, switched, r, m, o, j);
                        prev = m;
                    }
                }
            }
}

/* The distinct rail senders s(g), in local order: the ranks through which
 * whole node blocks leave (compose_blocks). */
static int rail_list(const int *sender, int rpn, int *rail)
{
    int R = 0;
    for (int g = 0; g < rpn; g++) {
        int seen = 0;
        for (int q = 0; q < R; q++)
            seen |= rail[q] == sender[g];
        if (!seen)
            rail[R++] = sender[g];
    }
    return R;
}

/* Add one transfer of node n's whole block (every local origin, every
 * index) from a to b in [t0, t1), all of it one group. */
static void block_send(compose *c, int n, int a, int b, double t0, double t1, int group)
{
    int rpn = c->t->ranks_per_node, k = c->out->chunks_per_rank;
    for (int h = 0; h < rpn; h++)
        for (int j = 0; j < k; j++)
            algo_add_send(c->out, n * rpn + h, j, a, b, t0, t1)->group = group;
}

/* AllGather by node blocks: every node first gathers itself (each chunk
 * over its node tree), so each local rank holds the node's block, whose
 * chunks are contiguous in the output.  Then node n sends that block whole
 * to every other node m = n + d: offset d goes through rail sender
 * x = rail[(d - 1) % R] to (m, r(x)), in round (d - 1) / R, so in one round
 * each rail's senders and receivers are matched one to one; node m
 * hands the block out from (m, r(x)): one hop to each local rank on a
 * switched node, else over the node tree of (r(x), 0); each hop one
 * transfer.  One alpha per block per hop instead of one per chunk:
 * on N nodes a NIC sends about (N - 1) / R transfers where the rings send
 * N - 1. */
static void compose_blocks(compose *c, const chunk_index *ci, const int *sender,
                           const int *receiver)
{
    const topo *t = c->t;
    int rpn = t->ranks_per_node, N = t->nnodes, k = c->out->chunks_per_rank;
    int *rail = xcalloc((size_t)rpn, sizeof *rail), R = rail_list(sender, rpn, rail);
    int switched = node_switched(t);
    double gathered = 0, bytes = c->chunk * rpn * k;
    for (int n = 0; n < N; n++)
        for (int g = 0; g < rpn; g++)
            for (int j = 0; j < k; j++) {
                for (int v = 0; v < t->nranks; v++)
                    c->at[v] = -1;
                c->at[n * rpn + g] = 0;
                node_tree(c, ci, g * k + j, n, n * rpn + g, j);
                for (int v = n * rpn; v < (n + 1) * rpn; v++)
                    gathered = c->at[v] > gathered ? c->at[v] : gathered;
            }
    int group = 0;
    for (int n = 0; n < N; n++)
        for (int d = 1; d < N; d++) {
            int x = rail[(d - 1) % R], r = receiver[x], m = (n + d) % N;
            topo_route rt = topo_route_of(t, n * rpn + x, m * rpn + r);
            double step = cost_hop_us(&rt, bytes);
            double t0 = gathered + ((d - 1) / R) * step, t1 = t0 + step;
            block_send(c, n, n * rpn + x, m * rpn + r, t0, t1, group++);
            for (int v = m * rpn; v < (m + 1) * rpn; v++)
                c->at[v] = -1;
            c->at[m * rpn + r] = t1;
            if (switched) {
                /* one hop to each local, one after the other out of r,
                 * starting with the next rank so the receivers are
                 * spread: the other ranks' out ports hand out their own
                 * rails' blocks meanwhile (a binomial tree here, or in
                 * the last round only, measured slower: 0.779 and 0.900
                 * of the bound on DGX H100 x128 against 0.912) */
                double h0 = t1;
                for (int q = 1; q < rpn; q++) {
                    int b = m * rpn + (r + q) % rpn;
                    topo_route hr = topo_route_of(t, m * rpn + r, b);
                    double h1 = h0 + cost_hop_us(&hr, bytes);
                    block_send(c, n, m * rpn + r, b, h0, h1, group++);
                    h0 = h1;
                }
                continue;
            }
            int nc = r * k;
            for (int p = ci->start[nc]; p < ci->start[nc + 1]; p++) {
                const algo_send *s = &ci->a->sends[ci->idx[p]];
                int a = m * rpn + s->src, b = m * rpn + s->dst;
                topo_route hr = topo_route_of(t, a, b);
                double h0 = c->at[a] > 0 ? c->at[a] : 0, h1 = h0 + cost_hop_us(&hr, bytes);
                block_send(c, n, a, b, h0, h1, group++);
                c->at[b] = h1;
            }
        }
    free(rail);
}

/* AllToAll: inside the node the node path; to another node the path to
 * the sender, one hop to the receiver there, the path on to the rank. */
static void compose_alltoall(compose *c, const chunk_index *ci, const int *sender,
                             const int *receiver)
{
    const topo *t = c->t;
    int rpn = t->ranks_per_node, n_all = t->nranks;
    int k = c->out->chunks_per_rank / n_all;
    for (int o = 0; o < n_all; o++) {
        int n = o / rpn, g = o % rpn, x = sender[g], r = receiver[g];
        for (int d = 0; d < n_all; d++) {
            int m = d / rpn, h = d % rpn;
            if (d == o)
                continue;
            for (int j = 0; j < k; j++) {
                int index = d * k + j;
                for (int v = 0; v < n_all; v++)
                    c->at[v] = -1;
                c->at[o] = 0;
                if (m == n) {
                    node_path(c, ci, g * rpn * k + h * k + j, h, n, o, index);
                    continue;
                }
                if (x != g)
                    node_path(c, ci, g * rpn * k + x * k + j, x, n, o, index);
                hop(c, o, index, n * rpn + x, m * rpn + r);
                if (r != h)
                    node_path(c, ci, r * rpn * k + h * k + j, h, m, o, index);
            }
        }
    }
}

/* Route one node of t with the node sketch of s. */
static int route_node(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                      const route_opts *o, algo **node, route_stats *st, tc_err *err)
{
    tc_err e2;
    tc_err_clear(&e2);
    topo *nt = topo_one_node(t, err);
    if (!nt)
        return TC_INPUT;
    sketch_sym *syms = xcalloc((size_t)(s->nsym > 0 ? s->nsym : 1), sizeof *syms);
    sketch ns = node_sketch(s, t->ranks_per_node, syms);
    /* symmetries that do not hold on one node are dropped, not fatal */
    if (sketch_check(&ns, nt, &e2) != TC_OK)
        ns.nsym = 0;
    int rc = sketch_check(&ns, nt, err);
    if (rc == TC_OK)
        rc = route_solve(&ns, nt, k, chunk_bytes, o, node, st, err);
    if (rc == TC_INPUT)
        tc_err_prefix(err, "hierarchical synthesis, routing one node");
    free(syms);
    topo_free(nt);
    return rc;
}

/* hier_route (blocks 0) and hier_route_blocks (blocks 1, AllGather). */
static int route_mode(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
                      const route_opts *o, int blocks, algo **out, hier_stats *hs,
                      tc_err *err)
{
    hier_stats local;
    if (!hs)
        hs = &local;
    memset(hs, 0, sizeof *hs);
    *out = NULL;
    if (k != COLL_ALLGATHER && k != COLL_ALLTOALL)
        return tc_err_set(err, TC_INPUT, "hierarchical routing is for allgather and alltoall");
    if (hier_applies(s, t, err) != TC_OK)
        return TC_INPUT;
    int rpn = t->ranks_per_node;
    hs->sender = xcalloc((size_t)rpn, sizeof *hs->sender);
    hs->receiver = xcalloc((size_t)rpn, sizeof *hs->receiver);
    pick_rails(s, t, hs->sender, hs->receiver, err);  /* hier_applies: it succeeds */
    hs->rails_ring = k == COLL_ALLGATHER && !blocks;
    hs->blocks = blocks;

    algo *node = NULL;
    int rc = route_node(s, t, k, chunk_bytes, o, &node, &hs->node, err);
    if (rc != TC_OK) {
        if (hs == &local)
            hier_stats_free(hs);
        return rc;
    }
    int kk = s->chunkup > 0 ? s->chunkup : 1;
    compose c = {t, chunk_bytes, NULL, xcalloc((size_t)t->nranks, sizeof(double))};
    c.out = algo_new(k, t->nranks, k == COLL_ALLGATHER ? kk : t->nranks * kk);
    chunk_index ci;
    index_chunks(node, &ci);
    if (blocks)
        compose_blocks(&c, &ci, hs->sender, hs->receiver);
    else if (k == COLL_ALLGATHER)
        compose_allgather(&c, &ci, hs->sender, hs->receiver);
    else
        compose_alltoall(&c, &ci, hs->sender, hs->receiver);
    index_free(&ci);
    free(c.at);
    c.out->predicted_us = node->predicted_us;
    algo_free(node);
    hs->nsends = c.out->nsends;
    if (hs == &local)
        hier_stats_free(hs);
    *out = c.out;
    return TC_OK;
}

int hier_route(const sketch *s, const topo *t, coll_kind k, double chunk_bytes,
               const route_opts *o, algo **out, hier_stats *hs, tc_err *err)
{
    return route_mode(s, t, k, chunk_bytes, o, 0, out, hs, err);
}

int hier_route_blocks(const sketch *s, const topo *t, double chunk_bytes, const route_opts *o,
                      algo **out, hier_stats *hs, tc_err *err)
{
    return route_mode(s, t, COLL_ALLGATHER, chunk_bytes, o, 1, out, hs, err);
}
