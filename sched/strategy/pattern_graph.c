/* pattern_graph.c - the source nodes the pattern-library tiler matches on: a problem's ops collapsed by source layer (patterns.c's top comment, step 1). */
#include "strategy/patterns.h"

#include <stdlib.h>
#include <string.h>

/* Kind of op o: its canonical kind, or its type name when it has none. */
static const char *op_kind(const ft_op *op)
{
    if (op->kind && op->kind[0])
        return op->kind;
    return op->type == FT_OP_MATMUL ? "matmul" : op->type == FT_OP_POINTWISE ? "pointwise" : "layout";
}

/* Whether ops of `kind` are commutative in their inputs (slots matched as
 * a multiset).  "pointwise" is a Pointwise op of a problem without kinds:
 * its cost does not depend on the order of its inputs. */
static int is_commutative(const char *kind)
{
    static const char *const comm[] = {"add", "mul", "maximum", "minimum", "max", "min", "eq", "ne",
                                       "logical_and", "logical_or", "logical_xor", "bitwise_and",
                                       "bitwise_or", "bitwise_xor", "pointwise"};
    for (size_t i = 0; i < sizeof comm / sizeof *comm; i++)
        if (strcmp(kind, comm[i]) == 0)
            return 1;
    return 0;
}

/* Length of the layer part of an op name: the name less every trailing
 * "/SUFFIX" that lowering adds (docs/LOWERING.md: im2col, window, groupK,
 * weights, groups, placeK, batchK, lhsK, rhs, broadcast, layout). */
static size_t layer_len(const char *name)
{
    static const char *const suffix[] = {"im2col", "window", "group", "weights", "groups", "place",
                                         "batch",  "lhs",    "rhs",   "broadcast", "layout"};
    size_t len = strlen(name);
    for (;;) {
        size_t slash = len;
        while (slash > 0 && name[slash - 1] != '/')
            slash--;
        if (slash == 0)
            return len;
        size_t end = len;
        while (end > slash && name[end - 1] >= '0' && name[end - 1] <= '9')
            end--;
        int known = 0;
        for (size_t i = 0; i < sizeof suffix / sizeof *suffix && !known; i++)
            known = strlen(suffix[i]) == end - slash && memcmp(name + slash, suffix[i], end - slash) == 0;
        if (!known)
            return len;
        len = slash - 1;
    }
}

/* Whether ops a and b come from one source layer (same kind, same layer). */
static int same_layer(const ft_op *a, const ft_op *b)
{
    if (!a->name || !b->name || !a->name[0] || !b->name[0] || strcmp(op_kind(a), op_kind(b)) != 0)
        return 0;
    size_t la = layer_len(a->name), lb = layer_len(b->name);
    return la == lb && memcmp(a->name, b->name, la) == 0;
}

/* Append op `o`'s outside operands to node v's input slots, an inner
 * producer's operands in place of the tensor it makes (depth first). */
static void collect_inputs(ft_pgraph *G, int v, int o, unsigned char *done, int *nin)
{
    const ft_op *op = &G->p->ops[o];
    done[o] = 1;
    for (int k = 0; k < op->ninputs; k++) {
        int t = op->inputs[k], pr = G->p->tensors[t].producer;
        if (pr >= 0 && G->of[pr] == v) {
            if (!done[pr])
                collect_inputs(G, v, pr, done, nin);
            continue;
        }
        int dup = 0;
        for (int s = G->v[v].in0; s < G->v[v].in0 + *nin && !dup; s++)
            dup = G->in_t[s] == t;
        if (!dup) {
            G->in_t[G->v[v].in0 + *nin] = t;
            G->in_src[G->v[v].in0 + *nin] = pr >= 0 ? G->of[pr] : -1;
            (*nin)++;
        }
    }
}

void ft__pgraph_free(ft_pgraph *G)
{
    ft__free(G->v);
    ft__free(G->node_ops);
    ft__free(G->of);
    ft__free(G->in_t);
    ft__free(G->in_src);
    ft__free(G->succ);
    ft__free(G->rank);
    ft__free(G->pos);
    memset(G, 0, sizeof *G);
}

/* Ranks of G's nodes in a topological order (Kahn); -1 if the node graph
 * has a cycle.  deg is scratch of G->n ints. */
static int graph_rank(ft_pgraph *G, int *deg)
{
    int n = G->n, head = 0, tail = 0;
    memset(deg, 0, sizeof(int) * (size_t)n);
    for (int v = 0; v < n; v++)
        for (int s = 0; s < G->v[v].nsucc; s++)
            deg[G->succ[G->v[v].succ0 + s]]++;
    int *queue = G->rank; /* filled as a queue, then turned into ranks */
    for (int v = 0; v < n; v++)
        if (!deg[v])
            queue[tail++] = v;
    while (head < tail) {
        int v = queue[head++];
        for (int s = 0; s < G->v[v].nsucc; s++)
            if (--deg[G->succ[G->v[v].succ0 + s]] == 0)
                queue[tail++] = G->succ[G->v[v].succ0 + s];
    }
    if (tail < n)
        return -1;
    for (int i = 0; i < n; i++)
        deg[queue[i]] = i;
    memcpy(G->rank, deg, sizeof(int) * (size_t)n);
    return 0;
}

/* Build G from p: one node per source layer (merge = 1) or per op (merge
 * = 0).  0, 1 when the merged graph has a cycle (G freed), -1 on OOM. */
static int build(ft_pgraph *G, const ft_problem *p, int merge)
{
    int n = p->nops, nslots = 0, nsucc = 0, rc = -1;
    memset(G, 0, sizeof *G);
    G->p = p;
    int *par = ft__malloc(sizeof(int) * ((size_t)n + 1)), *first = ft__malloc(sizeof(int) * ((size_t)n + 1));
    int *stamp = ft__malloc(sizeof(int) * ((size_t)n + 1));
    unsigned char *done = ft__calloc((size_t)n + 1, 1);
    G->of = ft__malloc(sizeof(int) * ((size_t)n + 1));
    G->node_ops = ft__malloc(sizeof(int) * ((size_t)n + 1));
    for (int o = 0; o < n; o++)
        nslots += p->ops[o].ninputs;
    G->in_t = ft__malloc(sizeof(int) * ((size_t)nslots + 1));
    G->in_src = ft__malloc(sizeof(int) * ((size_t)nslots + 1));
    for (int t = 0; t < p->ntensors; t++)
        nsucc += p->tensors[t].nconsumers;
    G->succ = ft__malloc(sizeof(int) * ((size_t)nsucc + 1));
    G->v = ft__calloc((size_t)n + 1, sizeof *G->v);
    G->rank = ft__malloc(sizeof(int) * ((size_t)n + 1));
    G->pos = ft__malloc(sizeof(int) * ((size_t)n + 1));
    if (!par || !first || !stamp || !done || !G->of || !G->node_ops || !G->in_t || !G->in_src || !G->succ || !G->v ||
        !G->rank || !G->pos)
        goto out;
    for (int i = 0; i < n; i++)
        G->pos[p->topo[i]] = i;
    for (int o = 0; o < n; o++)
        ft__uf_make(par, o);
    for (int o = 0; o < n && merge; o++)
        for (int k = 0; k < p->ops[o].ninputs; k++) {
            int pr = p->tensors[p->ops[o].inputs[k]].producer;
            if (pr >= 0 && same_layer(&p->ops[pr], &p->ops[o]))
                ft__uf_union(par, pr, o);
        }
    /* nodes numbered by their first op in p->topo; ops listed in that order */
    for (int o = 0; o < n; o++)
        first[o] = -1;
    G->n = 0;
    for (int i = 0; i < n; i++) {
        int r = ft__uf_find(par, p->topo[i]);
        if (first[r] < 0)
            first[r] = G->n++;
        G->of[p->topo[i]] = first[r];
        G->v[first[r]].nops++;
    }
    for (int v = 1; v < G->n; v++)
        G->v[v].op0 = G->v[v - 1].op0 + G->v[v - 1].nops;
    for (int v = 0; v < G->n; v++)
        G->v[v].nops = 0;
    for (int i = 0; i < n; i++) {
        ft_snode *V = &G->v[G->of[p->topo[i]]];
        G->node_ops[V->op0 + V->nops++] = p->topo[i];
    }
    /* kinds, flags, input slots, consumers */
    nslots = nsucc = 0;
    for (int o = 0; o < n; o++)
        stamp[o] = -1;
    for (int v = 0; v < G->n; v++) {
        ft_snode *V = &G->v[v];
        const int *ops = G->node_ops + V->op0;
        V->kind = op_kind(&p->ops[ops[0]]);
        V->comm = (unsigned char)is_commutative(V->kind);
        V->all_pw = V->all_layout = 1;
        V->in0 = nslots;
        V->succ0 = nsucc;
        for (int j = V->nops - 1; j >= 0; j--) {
            const ft_op *op = &p->ops[ops[j]];
            V->has_mm |= op->type == FT_OP_MATMUL;
            V->all_pw &= op->type == FT_OP_POINTWISE;
            V->all_layout &= op->type == FT_OP_LAYOUT;
            if (!done[ops[j]])
                collect_inputs(G, v, ops[j], done, &V->nin);
            const ft_tensor *T = &p->tensors[op->output];
            V->gout |= T->nconsumers == 0;
            for (int c = 0; c < T->nconsumers; c++) {
                int w = G->of[T->consumers[c]];
                if (w != v && stamp[w] != v) {
                    stamp[w] = v;
                    G->succ[nsucc++] = w;
                }
            }
        }
        nslots += V->nin;
        V->nsucc = nsucc - V->succ0;
    }
    rc = graph_rank(G, stamp) ? 1 : 0;
out:
    ft__free(par);
    ft__free(first);
    ft__free(stamp);
    ft__free(done);
    if (rc)
        ft__pgraph_free(G);
    return rc;
}

int ft__pgraph_build(ft_pgraph *G, const ft_problem *p)
{
    int rc = build(G, p, 1);
    if (rc > 0) /* merged layers form a cycle: one node per op (a DAG) */
        rc = build(G, p, 0);
    return rc ? -1 : 0;
}
