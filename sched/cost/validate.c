/* validate.c - schedule rules of SPEC section 2 and the per-subgraph tensor sets of SPEC section 3. */
#include "cost/cost.h"
#include "core/uf.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static int sg_retains(const ft_subgraph *g, int t)
{
    for (int j = 0; j < g->nretain; j++)
        if (g->retain[j] == t)
            return 1;
    return 0;
}

static const int *sg_ops(const void *ctx, int j, int *n)
{
    const ft_subgraph *g = &((const ft_schedule *)ctx)->sg[j];
    *n = g->nops;
    return g->ops;
}

int ft_tensor_written(const ft_problem *p, const ft_schedule *s, int sg, int t)
{
    if (sg < 0 || sg >= s->nsubgraphs || t < 0 || t >= p->ntensors ||
        !(ft__ops_use(p, s->sg[sg].ops, s->sg[sg].nops, t) & FT_USE_PRODUCES))
        return 0;
    return ft__written_rule(p, t, sg, sg_retains(&s->sg[sg], t), s->nsubgraphs, sg_ops, s);
}

void ft__sg_tensors(const ft_problem *p, const ft_schedule *s, int sg, unsigned char *produced,
                    unsigned char *written, unsigned char *retained, unsigned char *resident)
{
    size_t n = (size_t)p->ntensors;
    memset(produced, 0, n);
    memset(written, 0, n);
    memset(retained, 0, n);
    memset(resident, 0, n);
    const ft_subgraph *g = &s->sg[sg];
    /* s passed ft_schedule_validate's op and retain checks (the walker's
     * schedules) or the ones before its availability check (validation's
     * own call): every op and retained tensor is in range */
    assert(sg >= 0 && sg < s->nsubgraphs);
    for (int j = 0; j < g->nops; j++) {
        assert(g->ops[j] >= 0 && g->ops[j] < p->nops);
        produced[p->ops[g->ops[j]].output] = 1;
    }
    for (int j = 0; j < g->nretain; j++) {
        assert(g->retain[j] >= 0 && g->retain[j] < p->ntensors);
        retained[g->retain[j]] = 1;
    }
    if (sg > 0)
        for (int j = 0; j < s->sg[sg - 1].nretain; j++) {
            assert(s->sg[sg - 1].retain[j] >= 0 && s->sg[sg - 1].retain[j] < p->ntensors);
            resident[s->sg[sg - 1].retain[j]] = 1;
        }
    for (int j = 0; j < g->nops; j++) {
        int t = p->ops[g->ops[j]].output;
        written[t] = (unsigned char)ft_tensor_written(p, s, sg, t);
    }
}

/* Contract: cost.h.  Nodes: positions 0..n-1 of ops[], then tensor t at
 * n + t; only the nodes of the ops' tensors are set. */
int ft__first_unconnected(const ft_problem *p, const int *ops, int n, int *par)
{
    for (int j = 0; j < n; j++) {
        const ft_op *op = &p->ops[ops[j]];
        ft__uf_make(par, j);
        ft__uf_make(par, n + op->output);
        for (int k = 0; k < op->ninputs; k++)
            ft__uf_make(par, n + op->inputs[k]);
    }
    for (int j = 0; j < n; j++) {
        const ft_op *op = &p->ops[ops[j]];
        ft__uf_union(par, j, n + op->output);
        for (int k = 0; k < op->ninputs; k++)
            ft__uf_union(par, j, n + op->inputs[k]);
    }
    for (int j = 1; j < n; j++)
        if (ft__uf_find(par, j) != ft__uf_find(par, 0))
            return j;
    return -1;
}

static int check_subgraph_ops(const ft_problem *p, const ft_schedule *s, int i, int *seen, ft_status *st)
{
    const char *n = s->name ? s->name : "schedule";
    const ft_subgraph *g = &s->sg[i];
    if (g->nops == 0)
        return ft__fail(st, FT_EINVALID, FT_R_EMPTY_SUBGRAPH, "%s: subgraphs[%d] is empty", n, i);
    for (int j = 0; j < g->nops; j++) {
        int o = g->ops[j];
        if (o < 0 || o >= p->nops)
            return ft__fail(st, FT_EINVALID, FT_R_OP_OUT_OF_RANGE, "%s: subgraphs[%d][%d] is op %d, out of range (%d ops)", n, i, j, o, p->nops);
        if (seen[o] == i + 1)
            return ft__fail(st, FT_EINVALID, FT_R_REPEATED_OP, "%s: subgraphs[%d][%d]: op %d is listed twice", n, i, j, o);
        seen[o] = i + 1;
    }
    return FT_OK;
}

static int check_order_and_connectivity(const ft_problem *p, const ft_schedule *s, int i, int *pos, int *par, ft_status *st)
{
    const char *n = s->name ? s->name : "schedule";
    const ft_subgraph *g = &s->sg[i];
    /* pos[o] = position of op o in this subgraph, or -1 */
    for (int j = 0; j < g->nops; j++) {
        /* check_subgraph_ops passed: ops in range, none twice, and pos is
         * all -1 again after the previous subgraph */
        assert(g->ops[j] >= 0 && g->ops[j] < p->nops && pos[g->ops[j]] == -1);
        pos[g->ops[j]] = j;
    }
    int rc = FT_OK;
    for (int j = 0; j < g->nops && !rc; j++) {
        const ft_op *op = &p->ops[g->ops[j]];
        for (int k = 0; k < op->ninputs; k++) {
            int pr = p->tensors[op->inputs[k]].producer;
            if (pr >= 0 && pos[pr] > j) {
                rc = ft__fail(st, FT_EINVALID, FT_R_OP_BEFORE_PRODUCER,
                              "%s: subgraphs[%d][%d]: op %d is listed before op %d (position %d), which produces its input tensor %d",
                              n, i, j, g->ops[j], pr, pos[pr], op->inputs[k]);
                break;
            }
        }
    }
    /* the ops hang together through the subgraph's tensors */
    int u = rc ? -1 : ft__first_unconnected(p, g->ops, g->nops, par);
    if (u > 0)
        rc = ft__fail(st, FT_EINVALID, FT_R_NOT_CONNECTED,
                      "%s: subgraphs[%d]: op %d (position %d) is not connected to op %d through the subgraph's tensors", n, i, g->ops[u], u,
                      g->ops[0]);
    for (int j = 0; j < g->nops; j++)
        pos[g->ops[j]] = -1;
    return rc;
}

int ft_schedule_validate(const ft_problem *p, const ft_schedule *s, ft_status *st)
{
    const char *n = s->name ? s->name : "schedule";
    ft_status_clear(st);
    int ns = s->nsubgraphs;
    struct { int len; const char *f; } lens[] = {{s->len_granularities, "granularities"}, {s->len_retain, "tensors_to_retain"},
                                                 {s->len_orders, "traversal_orders"}, {s->len_latencies, "subgraph_latencies"}};
    for (int i = 0; i < 4; i++)
        if (lens[i].len >= 0 && lens[i].len != ns)
            return ft__fail(st, FT_EINVALID, FT_R_LENGTH_MISMATCH, "%s: %s has %d entries, subgraphs has %d", n, lens[i].f, lens[i].len, ns);
    if (ns == 0)
        return ft__fail(st, FT_EINVALID, FT_R_OP_NOT_COVERED, "%s: subgraphs is empty; op 0 is in no subgraph", n);
    size_t scratch = (size_t)p->nops + (size_t)p->ntensors + 1;
    int *seen = ft__calloc((size_t)p->nops + 1, sizeof(int));
    int *pos = ft__malloc(sizeof(int) * ((size_t)p->nops + 1));
    int *par = ft__malloc(sizeof(int) * scratch * 2);
    unsigned char *bits = ft__calloc((size_t)p->ntensors * 4 + 4, 1);
    int rc = FT_OK;
    if (!seen || !pos || !par || !bits) {
        rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
        goto done;
    }
    int *covered = par + scratch; /* reuse: per-op "in some subgraph" */
    memset(covered, 0, sizeof(int) * (size_t)p->nops);
    for (int i = 0; i < ns && !rc; i++) {
        rc = check_subgraph_ops(p, s, i, seen, st);
        if (!rc)
            for (int j = 0; j < s->sg[i].nops; j++)
                covered[s->sg[i].ops[j]] = 1;
    }
    for (int o = 0; o < p->nops && !rc; o++)
        if (!covered[o])
            rc = ft__fail(st, FT_EINVALID, FT_R_OP_NOT_COVERED, "%s: op %d is in no subgraph", n, o);
    for (int o = 0; o < p->nops; o++)
        pos[o] = -1;
    for (int i = 0; i < ns && !rc; i++)
        rc = check_order_and_connectivity(p, s, i, pos, par, st);
    for (int i = 0; i < ns && !rc; i++) {
        const ft_subgraph *g = &s->sg[i];
        int64_t v[3] = {g->w, g->h, g->k}, lim[3] = {p->native_w, p->native_h, ft_native_k(p)};
        static const char *dn[3] = {"w", "h", "k"};
        for (int d = 0; d < 3 && !rc; d++) {
            if (v[d] < 1)
                rc = ft__fail(st, FT_EINVALID, FT_R_GRANULARITY_BELOW_ONE, "%s: granularities[%d][%d]: %s = %lld is below 1", n, i, d, dn[d],
                              (long long)v[d]);
            else if (v[d] > lim[d] && !p->allow_larger)
                rc = ft__fail(st, FT_EINVALID, FT_R_GRANULARITY_ABOVE_NATIVE, "%s: granularities[%d][%d]: %s = %lld is above native %lld", n,
                              i, d, dn[d], (long long)v[d], (long long)lim[d]);
        }
    }
    for (int i = 0; i < ns && !rc; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nretain && !rc; j++) {
            int t = g->retain[j];
            if (t < 0 || t >= p->ntensors)
                rc = ft__fail(st, FT_EINVALID, FT_R_RETAIN_NOT_PRODUCED, "%s: tensors_to_retain[%d][%d] is tensor %d, out of range (%d tensors)",
                              n, i, j, t, p->ntensors);
            else if (!(ft__ops_use(p, g->ops, g->nops, t) & FT_USE_PRODUCES))
                rc = ft__fail(st, FT_EINVALID, FT_R_RETAIN_NOT_PRODUCED,
                              "%s: tensors_to_retain[%d][%d]: tensor %d is not produced by subgraph %d", n, i, j, t, i);
            else if (ft__units(p) > 1)
                rc = ft__fail(st, FT_EINVALID, FT_R_RETAIN_ON_UNITS, FT_RETAIN_ON_UNITS_MSG, n, i, j, t, (long long)ft__units(p));
        }
    }
    for (int i = 0; i < ns && !rc; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!g->order)
            continue;
        int64_t ntx, nty, nk;
        if (ft__sg_grid(p, g, NULL, &ntx, &nty, &nk)) {
            rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
            break;
        }
        /* granularities passed (>= 1) and tensors are non-empty */
        assert(ntx >= 1 && nty >= 1 && nk >= 1);
        int64_t ntiles = ntx * nty;
        if (g->norder != ntiles) {
            rc = ft__fail(st, FT_EINVALID, FT_R_BAD_TRAVERSAL, "%s: traversal_orders[%d] has %lld entries, subgraph %d has %lld tiles (%lld x %lld)",
                          n, i, (long long)g->norder, i, (long long)ntiles, (long long)nty, (long long)ntx);
            break;
        }
        unsigned char *hit = ft__calloc((size_t)ntiles + 1, 1);
        if (!hit) {
            rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
            break;
        }
        for (int64_t j = 0; j < ntiles; j++) {
            int64_t t = g->order[j];
            if (t < 0 || t >= ntiles) {
                rc = ft__fail(st, FT_EINVALID, FT_R_BAD_TRAVERSAL, "%s: traversal_orders[%d][%lld] is tile %lld, out of range (%lld tiles)", n, i,
                              (long long)j, (long long)t, (long long)ntiles);
                break;
            }
            if (hit[t]) {
                rc = ft__fail(st, FT_EINVALID, FT_R_BAD_TRAVERSAL, "%s: traversal_orders[%d][%lld]: tile %lld is listed twice", n, i,
                              (long long)j, (long long)t);
                break;
            }
            hit[t] = 1;
        }
        ft__free(hit);
    }
    /* availability: a boundary input is a graph input, resident, or produced earlier */
    unsigned char *produced = bits, *written = bits + p->ntensors, *retained = bits + 2 * p->ntensors, *resident = bits + 3 * p->ntensors;
    unsigned char *made = ft__calloc((size_t)p->ntensors + 1, 1); /* produced by some earlier subgraph */
    if (!made && !rc)
        rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
    for (int i = 0; i < ns && !rc; i++) {
        const ft_subgraph *g = &s->sg[i];
        ft__sg_tensors(p, s, i, produced, written, retained, resident);
        for (int j = 0; j < g->nops && !rc; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int t = op->inputs[k];
                assert(t >= 0 && t < p->ntensors); /* the problem's checks */
                if (produced[t] || resident[t] || p->tensors[t].producer < 0 || made[t])
                    continue;
                rc = ft__fail(st, FT_EINVALID, FT_R_TENSOR_UNAVAILABLE,
                              "%s: subgraphs[%d][%d]: op %d needs tensor %d, which is neither in slow memory nor resident (its producer, op %d, "
                              "runs in no earlier subgraph)",
                              n, i, j, g->ops[j], t, p->tensors[t].producer);
                break;
            }
        }
        if (rc)
            break;
        /* fused operands never leave: upstream outputs are neither written nor retained */
        ft_role *roles = ft__malloc(sizeof(ft_role) * (size_t)g->nops);
        if (!roles) {
            rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
            break;
        }
        int64_t a, b, c;
        if (ft__sg_grid(p, g, roles, &a, &b, &c)) {
            ft__free(roles);
            rc = ft__fail(st, FT_ENOMEM, 0, "%s: out of memory", n);
            break;
        }
        for (int j = 0; j < g->nops && !rc; j++) {
            int t = p->ops[g->ops[j]].output;
            if (roles[j] == FT_ROLE_UPSTREAM && (written[t] || retained[t]))
                rc = ft__fail(st, FT_EINVALID, FT_R_FUSED_OPERAND_ESCAPES,
                              "%s: subgraphs[%d][%d]: tensor %d (output of op %d) feeds a fused MatMul in subgraph %d, so it cannot also be %s", n, i,
                              j, t, g->ops[j], i, retained[t] ? "retained" : (p->tensors[t].nconsumers ? "written (a later subgraph loads it)" : "written (it is a graph output)"));
        }
        ft__free(roles);
        for (int j = 0; j < g->nops; j++)
            made[p->ops[g->ops[j]].output] = 1;
    }
    ft__free(made);
done:
    ft__free(seen);
    ft__free(pos);
    ft__free(par);
    ft__free(bits);
    return rc;
}

/* Contract: cost.h. */
int ft__connected(const ft_problem *p, const int *ops, int n)
{
    if (n <= 1)
        return 1;
    int *par = ft__malloc(sizeof(int) * ((size_t)n + (size_t)p->ntensors));
    int ok = par && ft__first_unconnected(p, ops, n, par) < 0;
    ft__free(par);
    return ok;
}
