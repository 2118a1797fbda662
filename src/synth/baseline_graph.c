/* baseline_graph.c — NCCL's channels over all ranks from its graph dump
 * (model/nccl_graph.h), as NCCL connects one node's channels across nodes.
 *
 * Sources (NVIDIA/nccl 5067397, restated, not copied):
 *   src/init.cc:1280            comm->nChannels = min(tree, ring channels);
 *   src/graph/connect.cc:42-63  a node's ring enters at intra[0] and leaves at
 *                               intra[R-1]; a tree channel is the chain
 *                               intra[0] -> intra[1] -> ..., intra[0] the
 *                               node's head (treeToParent), the children's
 *                               heads attached at intra[child0Index] /
 *                               intra[child1Index] by pattern;
 *   src/graph/connect.cc:95-113 connectRings: node n's last GPU sends to node
 *                               n+1's first (ring order node by node);
 *   src/graph/connect.cc:138-176 connectTrees: the double binary tree over
 *                               nodes (ncclGetDtree), a node's head taking as
 *                               parent the parent node's child0 or child1 GPU
 *                               by which child it is;
 *   src/graph/connect.cc:70-73,447-460 every channel duplicated: channel
 *                               c + nChannels is channel c again, its tree the
 *                               second tree of the pair;
 *   src/graph/rings.cc:29-74    ncclBuildRings: a ring follows next[] from a
 *                               rank through every rank back to it;
 *   src/graph/trees.cc          ncclGetBtree / ncclGetDtree. */
#include "baseline_int.h"

#include <stdlib.h>
#include <string.h>
#include "../util/mem.h"

int bl_graph_channels(const nccl_graph *g)
{
    int G = g->ring.nchannels;
    if (g->tree.present && g->tree.nchannels < G)
        G = g->tree.nchannels;
    return G;
}

void bl_graph_rings(const topo *t, const nccl_graph *g, baseline_rings *out)
{
    int n = t->nranks, R = t->ranks_per_node, G = bl_graph_channels(g);
    out->nrings = out->ndisjoint = G;
    out->nranks = n;
    out->order = xmalloc((size_t)G * n * sizeof *out->order);
    for (int k = 0; k < G; k++)
        for (int u = 0; u < t->nnodes; u++)
            for (int i = 0; i < R; i++)
                out->order[(size_t)k * n + (size_t)u * R + i] = u * R + g->ring.gpu[(size_t)k * R + i];
}

/* ncclGetBtree's parent of x among n and which child of it x is (0: the
 * smaller side). */
static int btree_up(int n, int x, int *ctype)
{
    *ctype = 0;
    if (x == 0)
        return -1;
    int bit = 1;
    while (bit < n && !(bit & x))
        bit <<= 1;
    int up = (x ^ bit) | (bit << 1);
    if (up >= n)
        up = x ^ bit;
    *ctype = x < up ? 0 : 1;
    return up;
}

/* ncclGetDtree's parent of node u in tree `which` (0: the binary tree; 1:
 * it mirrored for an even count, shifted by one for an odd one). */
static int dtree_up(int n, int which, int u, int *ctype)
{
    if (which == 0)
        return btree_up(n, u, ctype);
    if (n % 2) {
        int p = btree_up(n, (u - 1 + n) % n, ctype);
        return p < 0 ? -1 : (p + 1) % n;
    }
    int p = btree_up(n, n - 1 - u, ctype);
    return p < 0 ? -1 : n - 1 - p;
}

int bl_graph_tree(const topo *t, const nccl_graph *g, int j, int *parent)
{
    int R = t->ranks_per_node, N = t->nnodes, G = bl_graph_channels(g);
    const nccl_graph_set *s = g->tree.present ? &g->tree : &g->ring;
    int pattern = g->tree.present ? g->tree.pattern : NCCL_PATTERN_TREE;
    const int *intra = s->gpu + (size_t)(j % G) * R;
    int which = (j / G) % 2;
    int child_at[2] = {pattern == NCCL_PATTERN_TREE ? 0 : 1,
                       pattern == NCCL_PATTERN_SPLIT_TREE ? 1 : 0};
    for (int u = 0; u < N; u++) {
        for (int i = 1; i < R; i++)
            parent[u * R + intra[i]] = u * R + intra[i - 1];
        int ctype, p = dtree_up(N, which, u, &ctype);
        parent[u * R + intra[0]] = p < 0 ? -1 : p * R + intra[child_at[ctype]];
    }
    return g->tree.present;
}
