/* rules.c - rule-based fusion (the rules strategy): source layers, a table of vertical fusion rules (conv+bn+relu, residual add chains, linear+gelu, dw+pw), horizontal fusion of projections that read one tensor. */
/*
 * The algorithm, after TensorRT's layer fusion (NVIDIA TensorRT Developer
 * Guide, "Types of Fusions": vertical conv/bias/activation fusion,
 * element-wise fusion, horizontal fusion of layers that take the same
 * input) and TVM's rule-based operator fusion (Chen et al., "TVM: An
 * Automated End-to-End Optimizing Compiler for Deep Learning", OSDI 2018,
 * section 3: a complex op fused with the element-wise ops that follow it):
 *
 *  1. Source layers.  The importer lowers one model layer to several ops
 *     that share its name up to a lowering suffix ("layer1.0.conv1/im2col"
 *     and "layer1.0.conv1": docs/LOWERING.md).  Ops whose source names
 *     (ft_op_source_name) agree and that are linked by a tensor form one
 *     layer; an op without a name is a layer of its own.  A layer's class
 *     comes from its canonical op (op_kinds: "conv2d", "relu", "add"), or
 *     from the op type when the problem has no kinds (MatMul: linear;
 *     Pointwise of one input: activation; of more: add).  A conv2d layer
 *     with a MatMul is a dense conv (a pointwise conv when that MatMul is
 *     all of it: 1x1, stride 1), without one a depthwise conv (lowered to
 *     a Pointwise op).  batch_norm after a conv or linear is folded into it
 *     at import (LOWERING.md); the fold shows in the name of the conv's
 *     output tensor, which is the batch_norm's node name ("conv1" writes
 *     "bn1"), and matches a rule's bn element.
 *  2. Vertical rules.  Layers are visited in topological order; the first
 *     rule of RULES whose elements match a chain starting at the layer
 *     takes the chain.  A chain grows from its tail to the tail's only
 *     consumer layer: every tensor the tail's ops produce and something
 *     outside the tail reads is read by that one layer alone and is no
 *     graph output (single consumer); the next layer holds no Layout op
 *     (no reshape or layout between; a conv's own im2col is part of the
 *     conv's layer), and an add element needs two distinct inputs (the
 *     residual joins there) and joins only the chain of its main branch:
 *     the input produced deepest in the graph (longest path from a graph
 *     input), the shallower shortcut being the residual (ResNet's
 *     downsample conv stays conv+bn).  Optional elements are skipped when
 *     they do not match.  Layers no rule takes stay alone.
 *  3. Horizontal fusion.  Groups led by a linear or matmul layer whose
 *     left operand comes from one tensor (through the layer's own Layout
 *     ops) are merged, up to FT_RULES_MAX_HORIZONTAL, each merge refused
 *     when it would make the quotient graph cyclic (ft__merge_cycles).
 *  4. ft__grouping_repair numbers the groups; it splits nothing here (each
 *     group is connected and the quotient acyclic by construction).
 *
 * Labels: a rule's group is "PARTS NAME", PARTS the elements that matched
 * ("conv+bn+add+relu", "conv+bn+add" when the optional relu was absent),
 * NAME the first layer's source name; a lone layer is "KIND NAME"; a
 * horizontal group "horizontal NAME+NAME+...".
 */
#include "strategy/rules.h"
#include "core/uf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layer classes (bits: a pointwise conv is also a conv, gelu also an
 * activation). */
enum {
    C_CONV = 1,    /* conv2d with a MatMul (dense or grouped) */
    C_DW = 2,      /* conv2d without one (depthwise, a Pointwise op) */
    C_PW = 4,      /* conv2d that is one MatMul (1x1, stride 1) */
    C_LINEAR = 8,  /* linear, matmul, bmm; a MatMul without a kind */
    C_BN = 16,     /* batch_norm (not folded) */
    C_ACT = 32,    /* an activation; a one-input Pointwise without a kind */
    C_GELU = 64,   /* gelu */
    C_ADD = 128    /* add of two distinct tensors; a Pointwise of more inputs without a kind */
};

typedef struct elem {
    unsigned cls;  /* classes that match (C_BN: also a bn folded into the tail) */
    int optional;
} elem;

typedef struct rule {
    const char *name;
    int n;
    elem e[FT_RULES_MAX_CHAIN];
} rule;

#define REQ(c) {(c), 0}
#define OPT(c) {(c), 1}
#define ANYCONV (C_CONV | C_DW)

/* The vertical rules, tried in this order at each layer (longer before
 * shorter); the `rules` strategy of docs/STRATEGIES.md:
 *   dw+pw             depthwise then pointwise conv (MobileNet's
 *                     separable conv), with their bn, activation and the
 *                     pointwise conv's residual add
 *   conv+bn+add+relu  a residual block's last conv, its bn, the residual
 *                     add and its relu (ResNet; relu optional: MobileNetV2)
 *   conv+add+relu     the same without a bn
 *   conv+bn+relu, conv+relu, conv+bn
 *   linear+bn+relu    (a BatchNorm1d head)
 *   linear+add        a transformer's output projection and its residual
 *   linear+gelu       a transformer's feed-forward expansion
 *   linear+act        the same with another activation
 *   add+relu          the element-wise chain on a residual whose producers
 *                     went elsewhere */
static const rule RULES[] = {
    {"dw+pw", 7, {REQ(C_DW), OPT(C_BN), OPT(C_ACT), REQ(C_PW), OPT(C_BN), OPT(C_ADD), OPT(C_ACT)}},
    {"conv+bn+add+relu", 4, {REQ(ANYCONV), REQ(C_BN), REQ(C_ADD), OPT(C_ACT)}},
    {"conv+add+relu", 3, {REQ(ANYCONV), REQ(C_ADD), OPT(C_ACT)}},
    {"conv+bn+relu", 3, {REQ(ANYCONV), REQ(C_BN), REQ(C_ACT)}},
    {"conv+relu", 2, {REQ(ANYCONV), REQ(C_ACT)}},
    {"conv+bn", 2, {REQ(ANYCONV), REQ(C_BN)}},
    {"linear+bn+relu", 3, {REQ(C_LINEAR), REQ(C_BN), REQ(C_ACT)}},
    {"linear+add", 4, {REQ(C_LINEAR), OPT(C_BN), REQ(C_ADD), OPT(C_ACT)}},
    {"linear+gelu", 2, {REQ(C_LINEAR), REQ(C_GELU)}},
    {"linear+act", 2, {REQ(C_LINEAR), REQ(C_ACT)}},
    {"add+relu", 2, {REQ(C_ADD), REQ(C_ACT)}},
};
#define NRULES ((int)(sizeof RULES / sizeof RULES[0]))

/* Canonical activations (docs/MODEL_GRAPH.md's element-wise unary ops
 * that models use after a conv or linear). */
static const char *const ACTIVATIONS[] = {"relu", "relu6", "hardtanh", "clamp", "gelu", "silu", "sigmoid", "tanh",
                                          "hardswish", "hardsigmoid", "leaky_relu", "elu", "softplus", "mish"};

/* One source layer. */
typedef struct layer {
    int head, last;   /* first and last op in p->topo */
    unsigned cls;
    int has_layout;   /* a Layout op among its ops */
    int folded_bn;    /* a batch_norm was folded into it at import */
    int next;         /* the only layer reading its outputs, or -1 */
    int group;        /* fusion group, -1 while none */
    const char *kind; /* canonical op of its last op, or NULL */
    char name[FT_RULES_LABEL];
} layer;

typedef struct fuser {
    const ft_problem *p;
    int nl, ng;
    int *lay;         /* op -> layer */
    int *depth;       /* op -> ops on the longest path from a graph input to it */
    layer *L;         /* nl layers in topological order */
    int *gid;         /* op -> group */
    char **label;     /* group labels (nl at most) */
} fuser;

/* ------------------------------------------------------------ names */

/* Contract: rules.h. */
size_t ft__block_prefix(const char *name)
{
    size_t start = 0;
    for (size_t i = 0;; i++) {
        char c = name[i];
        if (c == '.' || c == '/' || c == '\0') {
            int digits = i > start;
            for (size_t j = start; j < i && digits; j++)
                digits = name[j] >= '0' && name[j] <= '9';
            if (digits && start > 0)
                return i;
            if (c == '\0')
                return 0;
            start = i + 1;
        }
    }
}

/* Whether name a, with '.' and '/' read as '_', occurs in b so read (the
 * FX node name of a module path: "layer1.0.conv1" in "layer1_0_conv1"). */
static int name_in(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    for (size_t s = 0; s + na <= nb; s++) {
        size_t i = 0;
        for (; i < na; i++) {
            char x = a[i] == '.' || a[i] == '/' ? '_' : a[i], y = b[s + i] == '.' || b[s + i] == '/' ? '_' : b[s + i];
            if (x != y)
                break;
        }
        if (i == na)
            return 1;
    }
    return 0;
}

static int is_activation(const char *kind)
{
    for (size_t i = 0; i < sizeof ACTIVATIONS / sizeof ACTIVATIONS[0]; i++)
        if (strcmp(kind, ACTIVATIONS[i]) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ layers */

/* Class of layer Y (ops counted by the caller: nmm MatMuls, nops ops). */
static unsigned classify(const ft_problem *p, const layer *Y, int nmm, int nops)
{
    const ft_op *op = &p->ops[Y->last];
    int distinct = op->ninputs >= 2 && op->inputs[0] != op->inputs[1];
    if (!Y->kind) {
        if (op->type == FT_OP_MATMUL)
            return C_LINEAR;
        if (op->type == FT_OP_POINTWISE && !Y->has_layout)
            return distinct ? C_ADD : op->ninputs == 1 ? C_ACT : 0;
        return 0;
    }
    if (strcmp(Y->kind, "conv2d") == 0)
        return nmm == 0 ? C_DW : nops == 1 ? C_CONV | C_PW : C_CONV;
    if (strcmp(Y->kind, "linear") == 0 || strcmp(Y->kind, "matmul") == 0 || strcmp(Y->kind, "bmm") == 0)
        return nmm > 0 ? C_LINEAR : 0;
    if (Y->has_layout)
        return 0;
    if (strcmp(Y->kind, "batch_norm") == 0)
        return C_BN;
    if (strcmp(Y->kind, "add") == 0)
        return distinct ? C_ADD : 0;
    if (is_activation(Y->kind))
        return strcmp(Y->kind, "gelu") == 0 ? C_ACT | C_GELU : C_ACT;
    return 0;
}

/* Source layers of p into F (step 1 at the top).  -1 on OOM. */
static int build_layers(fuser *F)
{
    const ft_problem *p = F->p;
    int n = p->nops, rc = -1;
    size_t n1 = (size_t)n + 1;
    int *uf = ft__malloc(sizeof(int) * n1), *id = ft__malloc(sizeof(int) * n1);
    int *nops = ft__calloc(n1, sizeof(int)), *nmm = ft__calloc(n1, sizeof(int));
    char (*key)[FT_RULES_LABEL] = ft__malloc(sizeof *key * n1);
    F->lay = ft__malloc(sizeof(int) * n1);
    F->depth = ft__calloc(n1, sizeof(int));
    F->L = ft__calloc(n1, sizeof(layer));
    if (!uf || !id || !nops || !nmm || !key || !F->lay || !F->depth || !F->L)
        goto done;
    for (int o = 0; o < n; o++) {
        ft__uf_make(uf, o);
        id[o] = -1;
        ft_op_source_name(p->ops[o].name, key[o], sizeof key[o]);
    }
    for (int c = 0; c < n; c++)
        for (int i = 0; i < p->ops[c].ninputs; i++) {
            int o = p->tensors[p->ops[c].inputs[i]].producer;
            if (o >= 0 && key[o][0] && strcmp(key[o], key[c]) == 0) {
                ft__uf_union(uf, o, c);
            }
        }
    /* layer ids by first op in topological order */
    F->nl = 0;
    for (int i = 0; i < n; i++) {
        int o = p->topo[i], r = ft__uf_find(uf, o);
        if (id[r] < 0) {
            layer *Y = &F->L[F->nl];
            Y->head = o;
            Y->group = -1;
            Y->next = -1;
            if (p->ops[o].name)
                snprintf(Y->name, sizeof Y->name, "%s", key[o]);
            else
                snprintf(Y->name, sizeof Y->name, "op%d", o);
            id[r] = F->nl++;
        }
        for (int k = 0; k < p->ops[o].ninputs; k++) {
            int pr = p->tensors[p->ops[o].inputs[k]].producer;
            if (pr >= 0 && F->depth[pr] >= F->depth[o])
                F->depth[o] = F->depth[pr] + 1;
        }
        int l = F->lay[o] = id[r];
        F->L[l].last = o;
        F->L[l].has_layout |= p->ops[o].type == FT_OP_LAYOUT;
        nops[l]++;
        nmm[l] += p->ops[o].type == FT_OP_MATMUL;
    }
    /* the only reader of each layer's outputs (-2 while blocked) */
    for (int o = 0; o < n; o++) {
        layer *Y = &F->L[F->lay[o]];
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        if (T->nconsumers == 0)
            Y->next = -2;
        for (int q = 0; q < T->nconsumers && Y->next != -2; q++) {
            int m = F->lay[T->consumers[q]];
            if (m != F->lay[o])
                Y->next = Y->next == -1 || Y->next == m ? m : -2;
        }
    }
    for (int l = 0; l < F->nl; l++) {
        layer *Y = &F->L[l];
        if (Y->next < 0)
            Y->next = -1;
        Y->kind = p->ops[Y->last].kind;
        Y->cls = classify(p, Y, nmm[l], nops[l]);
        const char *tname = p->tensors[p->ops[Y->last].output].name;
        Y->folded_bn = (Y->cls & (C_CONV | C_DW | C_LINEAR)) && tname && p->ops[Y->last].name && !name_in(Y->name, tname);
    }
    rc = 0;
done:
    ft__free(uf);
    ft__free(id);
    ft__free(nops);
    ft__free(nmm);
    ft__free(key);
    return rc;
}

/* ------------------------------------------------------------ vertical */

/* The name a matched layer gives its rule's label for element class ecls. */
static const char *part_name(const layer *Y, unsigned ecls)
{
    if (ecls == C_PW)
        return "pw";
    if (Y->cls & C_DW)
        return "dw";
    if (Y->cls & C_CONV)
        return "conv";
    if (Y->cls & C_LINEAR)
        return Y->kind ? Y->kind : "linear";
    if (Y->cls & C_BN)
        return "bn";
    if (Y->cls & C_ADD)
        return "add";
    return Y->kind ? Y->kind : "act";
}

/* Append "+PART" (or PART when buf is empty) to buf (FT_RULES_LABEL
 * bytes), cut to fit. */
static void add_part(char *buf, const char *part)
{
    size_t len = strlen(buf), room = FT_RULES_LABEL - 1 - len, m = strlen(part);
    if (len && room) {
        buf[len++] = '+';
        room--;
    }
    if (m > room)
        m = room;
    memcpy(buf + len, part, m);
    buf[len + m] = '\0';
}

/* The layer an add layer l joins as its main branch: the producer of its
 * op's inputs deepest in the graph (the first input's on a tie); the
 * other inputs are the residual, the shortcut being the shallower path
 * (ResNet's identity or downsample conv, MobileNetV2's block input). */
static int main_branch(const fuser *F, int l)
{
    const ft_op *op = &F->p->ops[F->L[l].last];
    int best = -1;
    for (int i = 0; i < op->ninputs; i++) {
        int pr = F->p->tensors[op->inputs[i]].producer;
        if (pr >= 0 && (best < 0 || F->depth[pr] > F->depth[best]))
            best = pr;
    }
    return best >= 0 ? F->lay[best] : -1;
}

/* Whether rule r matches a chain from layer `anchor` (step 2 at the top):
 * 1 with the chain's layers in chain[0..*n-1] and the matched parts in
 * parts (FT_RULES_LABEL bytes), else 0. */
static int match(const fuser *F, const rule *r, int anchor, int *chain, int *n, char *parts)
{
    const layer *L = F->L;
    if (!(L[anchor].cls & r->e[0].cls))
        return 0;
    int tail = anchor, fold = L[anchor].folded_bn;
    *n = 0;
    chain[(*n)++] = anchor;
    parts[0] = '\0';
    add_part(parts, part_name(&L[anchor], r->e[0].cls));
    for (int i = 1; i < r->n; i++) {
        const elem *e = &r->e[i];
        int nx = L[tail].next;
        if (e->cls == C_BN && fold) {
            fold = 0;
            add_part(parts, "bn");
        } else if (nx >= 0 && L[nx].group < 0 && (L[nx].cls & e->cls) && (!(e->cls & C_ADD) || main_branch(F, nx) == tail)) {
            chain[(*n)++] = tail = nx;
            fold = L[nx].folded_bn;
            add_part(parts, part_name(&L[nx], e->cls));
        } else if (!e->optional)
            return 0;
    }
    return 1;
}

/* Step 2: every layer in a group; group ids and labels in F.  -1 on OOM. */
static int fuse_vertical(fuser *F)
{
    int chain[FT_RULES_MAX_CHAIN], n;
    char parts[FT_RULES_LABEL];
    F->ng = 0;
    for (int l = 0; l < F->nl; l++) {
        layer *Y = &F->L[l];
        if (Y->group >= 0)
            continue;
        int r = 0;
        while (r < NRULES && !match(F, &RULES[r], l, chain, &n, parts))
            r++;
        if (r == NRULES) {
            chain[0] = l;
            n = 1;
            snprintf(parts, sizeof parts, "%s", Y->kind ? Y->kind : ft_op_type_name(F->p->ops[Y->last].type));
        }
        char *label = ft__malloc(FT_RULES_LABEL);
        if (!label)
            return -1;
        /* a label past FT_RULES_LABEL is cut short: it only names the group */
        if (snprintf(label, FT_RULES_LABEL, "%.*s %s", FT_RULES_LABEL / 2, parts, Y->name) < 0)
            label[0] = '\0';
        F->label[F->ng] = label;
        for (int i = 0; i < n; i++)
            F->L[chain[i]].group = F->ng;
        F->ng++;
    }
    for (int o = 0; o < F->p->nops; o++)
        F->gid[o] = F->L[F->lay[o]].group;
    return 0;
}

/* ------------------------------------------------------------ horizontal */

/* The tensor a linear layer's left operand comes from (through the
 * layer's own Layout ops), or -1 when the layer is no linear. */
static int linear_source(const fuser *F, int l)
{
    const ft_problem *p = F->p;
    const layer *Y = &F->L[l];
    if (!(Y->cls & C_LINEAR) || p->ops[Y->last].type != FT_OP_MATMUL)
        return -1;
    int t = p->ops[Y->last].inputs[0], o;
    while ((o = p->tensors[t].producer) >= 0 && F->lay[o] == l && p->ops[o].type == FT_OP_LAYOUT)
        t = p->ops[o].inputs[0];
    return t;
}

/* Step 3: groups led by linears that read one tensor merged.  -1 on OOM. */
static int fuse_horizontal(fuser *F)
{
    const ft_problem *p = F->p;
    int rc = -1, ng = F->ng;
    int *lead = ft__malloc(sizeof(int) * ((size_t)ng + 1)), *ops = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    int *first = ft__malloc(sizeof(int) * ((size_t)p->ntensors + 1)), *next = ft__malloc(sizeof(int) * ((size_t)ng + 1));
    ft__reach R;
    memset(&R, 0, sizeof R);
    if (!lead || !ops || !first || !next || ft__reach_init(&R, p))
        goto done;
    for (int l = F->nl - 1; l >= 0; l--) /* each group's first layer */
        lead[F->L[l].group] = l;
    for (int t = 0; t < p->ntensors; t++)
        first[t] = -1;
    for (int g = ng - 1; g >= 0; g--) { /* lists of groups per source tensor, in group order */
        int t = linear_source(F, lead[g]);
        next[g] = t >= 0 ? first[t] : -1;
        if (t >= 0)
            first[t] = g;
    }
    for (int g = 0; g < ng; g++) {
        int t = linear_source(F, lead[g]);
        if (t < 0 || first[t] != g || next[g] < 0)
            continue;
        char names[FT_RULES_LABEL];
        snprintf(names, sizeof names, "%s", F->L[lead[g]].name);
        int joined = 1;
        for (int h = next[g]; h >= 0 && joined < FT_RULES_MAX_HORIZONTAL; h = next[h]) {
            int n = 0;
            for (int o = 0; o < p->nops; o++)
                if (F->gid[o] == g || F->gid[o] == h)
                    ops[n++] = o;
            if (ft__merge_cycles(&R, p, F->gid, g, h, ops, n))
                continue;
            for (int j = 0; j < n; j++)
                F->gid[ops[j]] = g;
            add_part(names, F->L[lead[h]].name);
            joined++;
        }
        if (joined > 1)
            snprintf(F->label[g], FT_RULES_LABEL, "horizontal %.*s", FT_RULES_LABEL - 12, names);
    }
    rc = 0;
done:
    ft__free(lead);
    ft__free(ops);
    ft__free(first);
    ft__free(next);
    ft__reach_free(&R);
    return rc;
}

/* ------------------------------------------------------------ entry points */

/* Contract: rules.h. */
int ft__rules_fuse(const ft_problem *p, ft_partition *out, ft_status *st)
{
    fuser F;
    memset(&F, 0, sizeof F);
    memset(out, 0, sizeof *out);
    F.p = p;
    size_t n1 = (size_t)p->nops + 1;
    F.gid = ft__malloc(sizeof(int) * n1);
    F.label = ft__calloc(n1, sizeof(char *));
    int rc;
    if (!F.gid || !F.label || build_layers(&F) || fuse_vertical(&F) || fuse_horizontal(&F)) {
        rc = ft__fail(st, FT_ENOMEM, 0, "rule-based fusion: out of memory");
    } else {
        ft_partition part = {p->nops, F.gid, F.ng, F.label};
        if ((rc = ft__grouping_repair(p, &part, NULL, st)) == FT_OK) {
            *out = part;
            F.gid = NULL;
            F.label = NULL;
        }
    }
    ft__free(F.gid);
    ft__labels_free(F.label, (int)n1);
    ft__free(F.lay);
    ft__free(F.depth);
    ft__free(F.L);
    return rc;
}

/* Contract: strategy.h.  Rule-based fusion, then resource-constrained
 * partitioning of the fused groups (ft__partition_fit). */
int ft__strategy_rules(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st)
{
    (void)o;
    return ft__rules_fuse(p, out, st);
}
