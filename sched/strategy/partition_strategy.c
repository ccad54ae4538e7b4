/* partition_strategy.c - partitioning of a fused graph (the partition strategy): resource-constrained merging, layer-based blocks, and edge-cut minimisation with METIS. */
/*
 * Each partitioner takes the groups of rule-based fusion (rules.c) as its
 * vertices and returns a coarser partition of the ops; each result goes
 * through ft__grouping_repair (grouping.c), so groups are connected and
 * the quotient graph acyclic whatever the heuristic did.
 *
 *  - Resource-constrained (ft__partition_fit), the greedy merging of
 *    Halide's and TVM's fusion passes bounded by on-chip memory as in
 *    Zheng et al., "Chimera: An Analytical Optimizing Framework for
 *    Effective Compute-intensive Operators Fusion", HPCA 2023 (fuse while
 *    the data moved per tile fits the fast memory): producer-consumer
 *    tensors in decreasing size (the largest saving of slow-memory traffic
 *    first); the two groups around one are merged when the merged group's
 *    footprint fits the capacity or is no larger than the larger of the
 *    two groups' own (on a machine whose capacity is below one op's native
 *    tile, an epilogue still joins its producer: the merged group needs a
 *    smaller tile no more than that producer alone), it has at most
 *    FT_PART_MAX_GROUP_OPS ops, and no path leaves it and comes back
 *    (ft__merge_cycles).  Passes repeat until none merges (at most
 *    FT_PART_MAX_PASSES).
 *    The footprint (ft__footprint) is SPEC 4's working set of one step at
 *    native granularity, each boundary tensor once at its largest slice:
 *    an estimate, since the pass table then picks the real tiles (a
 *    smaller one shrinks every slice) and what is retained.
 *  - Layer-based (ft__partition_layers): one group per residual block or
 *    transformer layer, named by the module path's block prefix
 *    ("layer1.0", "encoder.layers.3": ft__block_prefix), the layers
 *    before the first block a stem, those after the last a head (the
 *    grouping of Goyal et al.'s layer-wise pipelining and of GPipe,
 *    Huang et al., NeurIPS 2019, which cut models at layer boundaries).
 *  - Edge-cut (ft__partition_metis): multilevel k-way partitioning,
 *    Karypis and Kumar, "A Fast and High Quality Multilevel Scheme for
 *    Partitioning Irregular Graphs", SIAM J. Sci. Comput. 1998, through
 *    METIS 5's METIS_PartGraphKway: vertices are the fused groups weighted
 *    by their compute, edges the tensors between them weighted by their
 *    elements (the traffic a cut costs).  METIS balances compute and
 *    minimises the cut, but knows nothing of direction: a part may be
 *    disconnected or depend on another both ways, which the repair splits
 *    (components, then cycles broken in topological fashion: grouping.c).
 *    Weights are scaled so each kind sums to at most FT_METIS_WEIGHT_SUM
 *    (METIS's 32-bit idx_t); the seed is fixed, so results repeat.
 *    METIS's initial partitioning bisects recursively and, when parts
 *    come close to vertices, reaches empty graphs: it then prints to
 *    stdout ("Cannot bisect a graph with 0 vertices"), which a library
 *    must not.  Measured on generated problems (80 seeds, two families):
 *    with compute weights it happens from 1 part per 2 groups on, with
 *    equal weights only near 1 part per group.  So parts above
 *    1 per FT_METIS_MIN_PER_PART groups are cut to that (more parts than
 *    groups: a part per group, without METIS), and compute weights are
 *    used only up to 1 part per FT_METIS_WEIGHTED_PER_PART groups
 *    (tests/unit/test_rules.c checks that nothing is printed).
 */
#include "strategy/rules.h"

#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ estimates */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Contract: rules.h.  The rule's factors (ft__dim_units, whole k-steps)
 * multiplied in the order this weight has always had: ft__op_compute's
 * order moves its last bit, and so, at times, METIS's integer weights. */
double ft__rough_compute(const ft_problem *p, int o)
{
    const ft_op *op = &p->ops[o];
    const ft_tensor *O = &p->tensors[op->output];
    double w = op->base_cost * ft__dim_units(O->height, p->native_h, FT_DIM_SPATIAL) * ft__dim_units(O->width, p->native_w, FT_DIM_SPATIAL);
    return op->type == FT_OP_MATMUL ? w * (double)ft__ceil_div(op->k, ft_native_k(p)) : w;
}

/* Slice of input i of op o that one native step needs (SPEC 4), given
 * whether o is an upstream op (its output feeds a MatMul of the group). */
static int64_t input_slice(const ft_problem *p, int o, int i, int upstream)
{
    const ft_op *op = &p->ops[o];
    const ft_tensor *O = &p->tensors[op->output], *X = &p->tensors[op->inputs[i]];
    int64_t h = min64(p->native_h, O->height), w = min64(p->native_w, O->width);
    if (op->type == FT_OP_MATMUL) {
        int64_t k = upstream ? op->k : min64(ft_native_k(p), op->k);
        return i == 0 ? h * k : k * w;
    }
    if (op->type == FT_OP_LAYOUT) /* the proportional region of a tile */
        return min64(X->height, ft__ceil_div(h * X->height, O->height)) * min64(X->width, ft__ceil_div(w * X->width, O->width));
    return min64(p->native_h, X->height) * min64(p->native_w, X->width);
}

/* Contract: rules.h.  in[o]: 1 = in the group, 2 = also upstream. */
int64_t ft__footprint(const ft_problem *p, const int *ops, int n, int *in, int64_t *best)
{
    for (int j = 0; j < n; j++)
        in[ops[j]] = 1;
    /* a native tile of each output that leaves the group (counted while
     * every member is still marked 1) */
    int64_t total = 0;
    for (int j = 0; j < n; j++)
        if (ft__output_leaves(p, ops[j], in, 1)) {
            const ft_tensor *T = &p->tensors[p->ops[ops[j]].output];
            total += min64(p->native_w, T->width) * min64(p->native_h, T->height);
        }
    /* upstream ops: a consumer in the group is a MatMul or upstream (a
     * fixed point: the ops may come in any order) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int j = 0; j < n; j++) {
            const ft_tensor *T = &p->tensors[p->ops[ops[j]].output];
            for (int q = 0; q < T->nconsumers && in[ops[j]] == 1; q++) {
                int c = T->consumers[q];
                if (in[c] && (in[c] == 2 || p->ops[c].type == FT_OP_MATMUL)) {
                    in[ops[j]] = 2;
                    changed = 1;
                }
            }
        }
    }
    for (int j = 0; j < n; j++) {
        int o = ops[j];
        const ft_op *op = &p->ops[o];
        for (int i = 0; i < op->ninputs; i++) {
            int t = op->inputs[i], pr = p->tensors[t].producer;
            if (pr >= 0 && in[pr])
                continue;
            int64_t s = input_slice(p, o, i, in[o] == 2);
            if (s > best[t]) {
                total += s - best[t];
                best[t] = s;
            }
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < p->ops[ops[j]].ninputs; i++)
            best[p->ops[ops[j]].inputs[i]] = 0;
    for (int j = 0; j < n; j++)
        in[ops[j]] = 0;
    return total;
}

/* ------------------------------------------------------------ shared steps */

/* Relabel every group of part: its label (a prefix, may be empty), the
 * label of the first group of `in` it holds (in p->topo) and " +N" for the
 * N others: "part 3: conv+bn+relu layer1.0.conv1 +2".  Groups of in lie
 * in one group of part each.  -1 on OOM (part unchanged). */
static int describe(const ft_problem *p, const ft_partition *in, ft_partition *part)
{
    int G = part->ngroups, ok;
    int *head = ft__malloc(sizeof(int) * ((size_t)G + 1)), *count = ft__calloc((size_t)G + 1, sizeof(int));
    unsigned char *seen = ft__calloc((size_t)in->ngroups + 1, 1);
    char **label = ft__calloc((size_t)G + 1, sizeof(char *));
    ok = head && count && seen && label;
    for (int h = 0; ok && h < G; h++)
        head[h] = -1;
    for (int i = 0; ok && i < p->nops; i++) {
        int o = p->topo[i], g = in->gid[o], h = part->gid[o];
        if (seen[g])
            continue;
        seen[g] = 1;
        if (head[h] < 0)
            head[h] = g;
        count[h]++;
    }
    for (int h = 0; ok && h < G; h++) {
        const char *prefix = part->label[h] ? part->label[h] : "", *first = in->label[head[h]] ? in->label[head[h]] : "";
        if ((ok = (label[h] = ft__malloc(FT_RULES_LABEL)) != NULL)) {
            int cut = FT_RULES_LABEL - 16 - (int)strlen(prefix);
            if (count[h] > 1)
                snprintf(label[h], FT_RULES_LABEL, "%s%.*s +%d", prefix, cut > 0 ? cut : 0, first, count[h] - 1);
            else
                snprintf(label[h], FT_RULES_LABEL, "%s%.*s", prefix, cut > 0 ? cut : 0, first);
        }
    }
    ft__free(head);
    ft__free(count);
    ft__free(seen);
    if (!ok) {
        ft__labels_free(label, G);
        return -1;
    }
    ft__labels_free(part->label, G);
    part->label = label;
    return 0;
}

/* Finish *out from gid (nops entries, taken) and a label per group (ng
 * entries, taken): repaired with in's groups kept whole (grouping.c),
 * then, when `detail`, described (describe).  On failure both are freed
 * and *out zeroed. */
static int finish(const ft_problem *p, const ft_partition *in, int *gid, int ng, char **label, int detail, ft_partition *out,
                  ft_status *st)
{
    ft_partition part = {p->nops, gid, ng, label};
    int rc = ft__grouping_repair(p, &part, in, st);
    if (rc == FT_OK && detail && describe(p, in, &part))
        rc = ft__fail(st, FT_ENOMEM, 0, "partition labels: out of memory");
    if (rc != FT_OK) {
        ft__free(part.gid);
        ft__labels_free(part.label, part.ngroups);
        memset(out, 0, sizeof *out);
        return rc;
    }
    *out = part;
    return FT_OK;
}

/* ------------------------------------------------------------ resource-constrained */

/* A producer-consumer pair across groups: the tensor's elements, the
 * producer's topological position, the two ops. */
typedef struct link {
    int64_t size;
    int pos, from, to;
} link;

static int link_cmp(const void *x, const void *y)
{
    const link *a = x, *b = y;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return a->pos != b->pos ? (a->pos < b->pos ? -1 : 1) : (a->to > b->to) - (a->to < b->to);
}

/* Contract: rules.h. */
int ft__partition_fit(const ft_problem *p, const ft_partition *in, ft_partition *out, ft_status *st)
{
    int n = p->nops, G = in->ngroups, nl = 0, rc = FT_ENOMEM;
    size_t n1 = (size_t)n + 1, G1 = (size_t)G + 1, nlinks = 1;
    for (int o = 0; o < n; o++)
        nlinks += (size_t)p->tensors[p->ops[o].output].nconsumers;
    int *gid = ft__malloc(sizeof(int) * n1), *next = ft__malloc(sizeof(int) * n1), *buf = ft__malloc(sizeof(int) * n1);
    int *head = ft__malloc(sizeof(int) * G1), *tail = ft__malloc(sizeof(int) * G1), *size = ft__calloc(G1, sizeof(int));
    int *inset = ft__calloc(n1, sizeof(int));
    int64_t *best = ft__calloc((size_t)p->ntensors + 1, sizeof(int64_t)), *fpg = ft__malloc(sizeof(int64_t) * G1);
    link *links = ft__malloc(sizeof(link) * nlinks);
    ft__reach R;
    memset(&R, 0, sizeof R);
    char **label = NULL;
    memset(out, 0, sizeof *out);
    if (!gid || !next || !buf || !head || !tail || !size || !inset || !best || !fpg || !links || ft__reach_init(&R, p))
        goto done;
    /* member lists, in topological order */
    for (int g = 0; g < G; g++)
        head[g] = tail[g] = -1;
    for (int i = 0; i < n; i++) {
        int o = p->topo[i], g = gid[o] = in->gid[o];
        next[o] = -1;
        if (tail[g] >= 0)
            next[tail[g]] = o;
        else
            head[g] = o;
        tail[g] = o;
        size[g]++;
    }
    for (int g = 0; g < G; g++) {
        int m = 0;
        for (int o = head[g]; o >= 0; o = next[o])
            buf[m++] = o;
        fpg[g] = ft__footprint(p, buf, m, inset, best);
    }
    for (int o = 0; o < n; o++) {
        const ft_tensor *T = &p->tensors[p->ops[o].output];
        for (int q = 0; q < T->nconsumers; q++)
            if (gid[T->consumers[q]] != gid[o])
                links[nl++] = (link){T->width * T->height, R.pos[o], o, T->consumers[q]};
    }
    qsort(links, (size_t)nl, sizeof(link), link_cmp);
    for (int pass = 0, merged = 1; pass < FT_PART_MAX_PASSES && merged; pass++) {
        merged = 0;
        for (int e = 0; e < nl; e++) {
            int a = gid[links[e].from], b = gid[links[e].to], m = 0;
            if (a == b || size[a] + size[b] > FT_PART_MAX_GROUP_OPS)
                continue;
            for (int o = head[a]; o >= 0; o = next[o])
                buf[m++] = o;
            for (int o = head[b]; o >= 0; o = next[o])
                buf[m++] = o;
            int64_t fp = ft__footprint(p, buf, m, inset, best);
            if (((double)fp > p->capacity && fp > (fpg[a] > fpg[b] ? fpg[a] : fpg[b])) || ft__merge_cycles(&R, p, gid, a, b, buf, m))
                continue;
            if (R.pos[head[b]] < R.pos[head[a]]) { /* keep the id of the group that starts first */
                int t = a;
                a = b;
                b = t;
            }
            for (int o = head[b]; o >= 0; o = next[o])
                gid[o] = a;
            next[tail[a]] = head[b];
            tail[a] = tail[b];
            size[a] += size[b];
            fpg[a] = fp;
            head[b] = tail[b] = -1;
            size[b] = 0;
            merged = 1;
        }
    }
    if (!(label = ft__calloc(G1, sizeof(char *))))
        goto done;
    rc = finish(p, in, gid, G, label, 1, out, st);
    gid = NULL;
done:
    ft__free(gid);
    ft__free(next);
    ft__free(buf);
    ft__free(head);
    ft__free(tail);
    ft__free(size);
    ft__free(inset);
    ft__free(best);
    ft__free(fpg);
    ft__free(links);
    ft__reach_free(&R);
    return rc == FT_ENOMEM && !out->gid ? ft__fail(st, FT_ENOMEM, 0, "resource-constrained partition: out of memory") : rc;
}

/* ------------------------------------------------------------ layer-based */

/* Contract: rules.h. */
int ft__partition_layers(const ft_problem *p, const ft_partition *in, ft_partition *out, int *nblocks, ft_status *st)
{
    int n = p->nops, G = in->ngroups, ng = 0, nkeys = 0, rc = FT_ENOMEM;
    size_t G1 = (size_t)G + 1;
    int *newg = ft__malloc(sizeof(int) * G1), *order = ft__malloc(sizeof(int) * G1), *keyof = ft__malloc(sizeof(int) * G1);
    int *gid = ft__malloc(sizeof(int) * ((size_t)n + 1));
    char (*name)[FT_RULES_LABEL] = ft__malloc(sizeof *name * G1);
    char **label = ft__calloc(G1, sizeof(char *));
    memset(out, 0, sizeof *out);
    if (!newg || !order || !keyof || !gid || !name || !label)
        goto done;
    /* groups in the order of their first ops, each with its block prefix */
    int m = 0, lastkeyed = -1;
    for (int g = 0; g < G; g++)
        newg[g] = -1;
    for (int i = 0; i < n; i++) {
        int o = p->topo[i], g = in->gid[o];
        if (newg[g] != -1)
            continue;
        newg[g] = -2;
        ft_op_source_name(p->ops[o].name, name[g], sizeof name[g]);
        name[g][ft__block_prefix(name[g])] = '\0'; /* "" when none */
        if (name[g][0])
            lastkeyed = m;
        order[m++] = g;
    }
    /* one new group per prefix; runs of groups without one between them */
    for (int j = 0, run = -1; j < m; j++) {
        int g = order[j], k = 0;
        if (!name[g][0]) {
            if (run < 0) {
                char buf[FT_RULES_LABEL];
                if (lastkeyed < 0)
                    snprintf(buf, sizeof buf, "model");
                else if (j > lastkeyed)
                    snprintf(buf, sizeof buf, "head");
                else if (nkeys == 0)
                    snprintf(buf, sizeof buf, "stem");
                else
                    snprintf(buf, sizeof buf, "between %s", in->label && in->label[g] ? in->label[g] : "groups");
                if (!(label[ng] = ft__strdup(buf)))
                    goto done;
                run = ng++;
            }
            newg[g] = run;
            continue;
        }
        run = -1;
        while (k < nkeys && strcmp(name[order[keyof[k]]], name[g]) != 0)
            k++;
        if (k == nkeys) {
            char buf[FT_RULES_LABEL];
            snprintf(buf, sizeof buf, "block %s", name[g]);
            keyof[nkeys++] = j;
            if (!(label[ng] = ft__strdup(buf)))
                goto done;
            newg[g] = ng++;
        } else
            newg[g] = newg[order[keyof[k]]];
    }
    for (int o = 0; o < n; o++)
        gid[o] = newg[in->gid[o]];
    if (nblocks)
        *nblocks = nkeys;
    rc = finish(p, in, gid, ng, label, 0, out, st);
    gid = NULL;
    label = NULL;
done:
    ft__free(newg);
    ft__free(order);
    ft__free(keyof);
    ft__free(gid);
    ft__free(name);
    ft__labels_free(label, G);
    return rc == FT_ENOMEM && !out->gid ? ft__fail(st, FT_ENOMEM, 0, "layer-based partition: out of memory") : rc;
}

/* ------------------------------------------------------------ METIS */

/* An edge of the group graph in one direction, with its elements. */
typedef struct arc {
    int a, b;
    int64_t w;
} arc;

static int arc_cmp(const void *x, const void *y)
{
    const arc *s = x, *t = y;
    return s->a != t->a ? (s->a > t->a) - (s->a < t->a) : (s->b > t->b) - (s->b < t->b);
}

/* Divisor that brings a sum of weights to at most FT_METIS_WEIGHT_SUM. */
static double weight_scale(double sum)
{
    return sum > FT_METIS_WEIGHT_SUM ? sum / FT_METIS_WEIGHT_SUM : 1.0;
}

/* Scaled METIS weight of w: at least 1. */
static idx_t scaled(double w, double scale)
{
    double v = w / scale;
    return v < 1 ? 1 : (idx_t)v;
}

/* part[g] for each of the G groups of in: METIS_PartGraphKway of the group
 * graph into nparts (2 <= nparts <= G / FT_METIS_MIN_PER_PART), vertices
 * weighted by compute when there are FT_METIS_WEIGHTED_PER_PART groups
 * or more per part, else all alike.  FT_OK, FT_ENOMEM or FT_EINPUT. */
static int metis_parts(const ft_problem *p, const ft_partition *in, idx_t nparts, idx_t *part, ft_status *st)
{
    int n = p->nops, G = in->ngroups, na = 0, rc = FT_ENOMEM;
    size_t G1 = (size_t)G + 1, narcs = 1;
    for (int o = 0; o < n; o++)
        narcs += 2 * (size_t)p->tensors[p->ops[o].output].nconsumers;
    arc *arcs = ft__malloc(sizeof(arc) * narcs);
    int *seen = ft__malloc(sizeof(int) * G1);
    idx_t *xadj = ft__calloc(G1 + 1, sizeof(idx_t)), *adj = ft__malloc(sizeof(idx_t) * narcs);
    idx_t *adjw = ft__malloc(sizeof(idx_t) * narcs), *vw = ft__malloc(sizeof(idx_t) * G1);
    double *work = ft__calloc(G1, sizeof(double));
    if (!arcs || !seen || !xadj || !adj || !adjw || !vw || !work)
        goto done;
    /* arcs both ways per tensor and reading group (a tensor that several
     * ops of one group read counts once) */
    for (int g = 0; g < G; g++)
        seen[g] = -1;
    double esum = 0, vsum = 0;
    for (int o = 0; o < n; o++) {
        int a = in->gid[o], t = p->ops[o].output;
        const ft_tensor *T = &p->tensors[t];
        work[a] += ft__rough_compute(p, o);
        for (int q = 0; q < T->nconsumers; q++) {
            int b = in->gid[T->consumers[q]];
            if (b == a || seen[b] == t)
                continue;
            seen[b] = t;
            arcs[na++] = (arc){a, b, T->width * T->height};
            arcs[na++] = (arc){b, a, T->width * T->height};
            esum += 2.0 * (double)(T->width * T->height);
        }
    }
    qsort(arcs, (size_t)na, sizeof(arc), arc_cmp);
    /* CSR, parallel arcs summed */
    double es = weight_scale(esum);
    idx_t ne = 0;
    for (int e = 0; e < na; e++) {
        int64_t w = arcs[e].w;
        while (e + 1 < na && arcs[e + 1].a == arcs[e].a && arcs[e + 1].b == arcs[e].b)
            w += arcs[++e].w;
        adj[ne] = arcs[e].b;
        adjw[ne++] = scaled((double)w, es);
        xadj[arcs[e].a + 1] = ne;
    }
    for (int g = 0; g < G; g++) {
        if (xadj[g + 1] < xadj[g]) /* no arc from g: its range is empty */
            xadj[g + 1] = xadj[g];
        vsum += work[g];
    }
    double vs = weight_scale(vsum);
    for (int g = 0; g < G; g++)
        vw[g] = scaled(work[g], vs);
    idx_t nv = G, ncon = 1, cut = 0, opts[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_SEED] = 1;
    idx_t *vweights = (int64_t)nparts * FT_METIS_WEIGHTED_PER_PART <= G ? vw : NULL;
    int mr = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vweights, NULL, adjw, &nparts, NULL, NULL, opts, &cut, part);
    if (mr == METIS_OK)
        rc = FT_OK;
    else if (mr != METIS_ERROR_MEMORY)
        rc = ft__fail(st, FT_EINPUT, 0, "partition: METIS_PartGraphKway failed (METIS code %d) on %d groups into %d parts", mr, G,
                      (int)nparts);
done:
    ft__free(arcs);
    ft__free(seen);
    ft__free(xadj);
    ft__free(adj);
    ft__free(adjw);
    ft__free(vw);
    ft__free(work);
    return rc;
}

/* Contract: rules.h. */
int ft__partition_metis(const ft_problem *p, const ft_partition *in, int parts, ft_partition *out, ft_status *st)
{
    int n = p->nops, G = in->ngroups, rc = FT_ENOMEM;
    size_t G1 = (size_t)G + 1;
    int nparts = parts < 1 ? 1 : parts > G ? G : parts;
    if (nparts < G && nparts > G / FT_METIS_MIN_PER_PART)
        nparts = G / FT_METIS_MIN_PER_PART > 1 ? G / FT_METIS_MIN_PER_PART : 1;
    idx_t *part = ft__calloc(G1, sizeof(idx_t));
    int *gid = ft__malloc(sizeof(int) * ((size_t)n + 1));
    char **label = NULL;
    memset(out, 0, sizeof *out);
    if (!part || !gid)
        goto done;
    if (nparts == G)
        for (int g = 0; g < G; g++)
            part[g] = g;
    else if (nparts > 1 && (rc = metis_parts(p, in, nparts, part, st)) != FT_OK)
        goto done;
    if (!(label = ft__calloc((size_t)nparts + 1, sizeof(char *)))) {
        rc = FT_ENOMEM;
        goto done;
    }
    for (int k = 0; k < nparts; k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "part %d: ", k);
        if (!(label[k] = ft__strdup(buf))) {
            ft__labels_free(label, nparts);
            rc = FT_ENOMEM;
            goto done;
        }
    }
    for (int o = 0; o < n; o++)
        gid[o] = (int)part[in->gid[o]];
    rc = finish(p, in, gid, nparts, label, 1, out, st);
    gid = NULL;
done:
    ft__free(part);
    ft__free(gid);
    return rc == FT_ENOMEM && !out->gid ? ft__fail(st, FT_ENOMEM, 0, "METIS partition: out of memory") : rc;
}

/* ------------------------------------------------------------ the strategy */

/* Contract: strategy.h.  Rule-based fusion (rules.c), then: o->parts > 0,
 * METIS into that many parts; o->parts 0 (or o NULL), the layer-based
 * partition when the problem's names give two blocks or more (an imported
 * model), else METIS into as many parts as the resource-constrained
 * partition has groups. */
int ft__strategy_partition(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st)
{
    int parts = o ? o->parts : 0, nblocks = 0;
    memset(out, 0, sizeof *out);
    if (parts < 0)
        return ft__fail(st, FT_EINPUT, 0, "partition: parts is %d, must be 0 (chosen from the problem) or more", parts);
    ft_partition fused, alt;
    int rc = ft__rules_fuse(p, &fused, st);
    if (rc != FT_OK)
        return rc;
    ft_partition_method m = o ? o->method : FT_PARTITION_AUTO;
    if (m == FT_PARTITION_FIT) {
        rc = ft__partition_fit(p, &fused, out, st);
        parts = 0;
    } else if (m == FT_PARTITION_LAYERS) {
        rc = ft__partition_layers(p, &fused, out, &nblocks, st);
        parts = 0;
    } else if (m == FT_PARTITION_AUTO && parts == 0) {
        rc = ft__partition_layers(p, &fused, &alt, &nblocks, st);
        if (rc == FT_OK && nblocks < 2) {
            ft__free(alt.gid);
            ft__labels_free(alt.label, alt.ngroups);
            if ((rc = ft__partition_fit(p, &fused, &alt, st)) == FT_OK) {
                parts = alt.ngroups;
                ft__free(alt.gid);
                ft__labels_free(alt.label, alt.ngroups);
            }
        } else if (rc == FT_OK)
            *out = alt;
    }
    if (rc == FT_OK && m == FT_PARTITION_METIS && parts == 0 && (rc = ft__partition_fit(p, &fused, &alt, st)) == FT_OK) {
        parts = alt.ngroups;
        ft__free(alt.gid);
        ft__labels_free(alt.label, alt.ngroups);
    }
    if (rc == FT_OK && parts > 0)
        rc = ft__partition_metis(p, &fused, parts, out, st);
    ft__free(fused.gid);
    ft__labels_free(fused.label, fused.ngroups);
    return rc;
}
