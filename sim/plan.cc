/* plan.cc - the controller's reading of a schedule before the replay (Controller::plan): every rule that needs no simulated time, checked in SPEC 2's order, then each subgraph's roles, tile grid, write-backs and buffers. */
#include "model.h"

#include <algorithm>

namespace ftsim {

/* Union-find over tensors, for the connectivity rule: the simulator's own,
 * not sched/core/uf.h, so that the cross-check of ft_schedule_validate
 * shares no code with it (sim/README.md, "What is independent"). */
static int uf_find(std::vector<int> &par, int x)
{
    while (par[(size_t)x] != x) {
        par[(size_t)x] = par[(size_t)par[(size_t)x]];
        x = par[(size_t)x];
    }
    return x;
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Read the whole schedule before replaying it, as a controller loading a
 * program would: check every rule that needs no simulated time (in the
 * order of SPEC 2, so that a schedule breaking several rules gets the same
 * reason as from ft_schedule_validate), asking the engine about
 * granularities and the fast memory about retention; then work out each
 * subgraph's roles, tile grid, write-backs (SPEC 3's "written", from the
 * subgraphs that follow) and output buffers. */
void Controller::plan(Job &job)
{
    const ft_problem *p = job.p;
    const ft_schedule *s = job.s;
    const char *n = s->name ? s->name : "schedule";
    const int ns = s->nsubgraphs, nops = p->nops, nt = p->ntensors;

    const struct { int len; const char *field; } lens[] = {
        {s->len_granularities, "granularities"}, {s->len_retain, "tensors_to_retain"},
        {s->len_orders, "traversal_orders"}, {s->len_latencies, "subgraph_latencies"}};
    for (const auto &l : lens)
        if (l.len >= 0 && l.len != ns)
            throw Invalid(FT_R_LENGTH_MISMATCH, fmt("%s: %s has %d entries, subgraphs has %d", n, l.field, l.len, ns));
    if (ns == 0)
        throw Invalid(FT_R_OP_NOT_COVERED, fmt("%s: subgraphs is empty; op 0 is in no subgraph", n));

    std::vector<int> seen((size_t)nops, -1);
    std::vector<unsigned char> covered((size_t)nops, 0);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (g->nops == 0)
            throw Invalid(FT_R_EMPTY_SUBGRAPH, fmt("%s: subgraphs[%d] is empty", n, i), i);
        for (int j = 0; j < g->nops; j++) {
            int o = g->ops[j];
            if (o < 0 || o >= nops)
                throw Invalid(FT_R_OP_OUT_OF_RANGE, fmt("%s: subgraphs[%d][%d] is op %d, out of range (%d ops)", n, i, j, o, nops), i);
            if (seen[(size_t)o] == i)
                throw Invalid(FT_R_REPEATED_OP, fmt("%s: subgraphs[%d][%d]: op %d is listed twice", n, i, j, o), i);
            seen[(size_t)o] = i;
            covered[(size_t)o] = 1;
        }
    }
    for (int o = 0; o < nops; o++)
        if (!covered[(size_t)o])
            throw Invalid(FT_R_OP_NOT_COVERED, fmt("%s: op %d is in no subgraph: the controller would never run it", n, o));

    /* Op order: an input made inside the subgraph must be made by an op
     * that runs before; and the ops must hang together through tensors. */
    std::vector<int> pos((size_t)nops, -1), par((size_t)nt);
    for (int t = 0; t < nt; t++)
        par[(size_t)t] = t;
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++)
            pos[(size_t)g->ops[j]] = j;
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int pr = p->tensors[op->inputs[k]].producer;
                if (pr >= 0 && pos[(size_t)pr] > j)
                    throw Invalid(FT_R_OP_BEFORE_PRODUCER,
                                  fmt("%s: subgraphs[%d][%d]: op %d runs before op %d (position %d) has produced its input tensor %d", n, i, j,
                                      g->ops[j], pr, pos[(size_t)pr], op->inputs[k]),
                                  i);
            }
        }
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++)
                par[(size_t)uf_find(par, op->inputs[k])] = uf_find(par, op->output);
        }
        int root = uf_find(par, p->ops[g->ops[0]].output);
        for (int j = 1; j < g->nops; j++)
            if (uf_find(par, p->ops[g->ops[j]].output) != root)
                throw Invalid(FT_R_NOT_CONNECTED,
                              fmt("%s: subgraphs[%d]: op %d (position %d) is not connected to op %d through the subgraph's tensors", n, i,
                                  g->ops[j], j, g->ops[0]),
                              i);
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            pos[(size_t)g->ops[j]] = -1;
            par[(size_t)op->output] = op->output;
            for (int k = 0; k < op->ninputs; k++)
                par[(size_t)op->inputs[k]] = op->inputs[k];
        }
    }

    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        std::string why;
        int r = engine->check_granularity(g->w, g->h, g->k, &why);
        if (r != FT_R_NONE)
            throw Invalid(r, fmt("%s: granularities[%d]: %s", n, i, why.c_str()), i);
    }

    produced_.assign((size_t)nt, 0);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 1;
        for (int j = 0; j < g->nretain; j++) {
            int t = g->retain[j];
            if (!memory->can_retain(produced_.data(), t))
                throw Invalid(FT_R_RETAIN_NOT_PRODUCED,
                              t < 0 || t >= nt
                                  ? fmt("%s: tensors_to_retain[%d][%d] is tensor %d, out of range (%d tensors)", n, i, j, t, nt)
                                  : fmt("%s: tensors_to_retain[%d][%d]: tensor %d is not produced by subgraph %d, so the fast memory has nothing "
                                        "of it to keep",
                                        n, i, j, t, i),
                              i);
            if (ft__units(p) > 1)
                throw Invalid(FT_R_RETAIN_ON_UNITS, fmt(FT_RETAIN_ON_UNITS_MSG, n, i, j, t, (long long)ft__units(p)), i);
        }
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 0;
    }

    /* Roles (SPEC 3) and tile grid (SPEC 4) of every subgraph.  The
     * simulator keeps its own copy of these rules and of the "written"
     * rule below, on purpose: it is the independent check of the library's
     * (sched/cost/cost.c), and a shared mistake would agree with itself.  The
     * cost-model vectors hold both to the same answers. */
    plans_.assign((size_t)ns, SgPlan());
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        SgPlan &pl = plans_[(size_t)i];
        pl.role.assign((size_t)g->nops, FT_ROLE_EPILOGUE);
        std::vector<unsigned char> feeds((size_t)g->nops, 0);
        std::int64_t wg = 0, hg = 0, nk = 1;
        for (int j = g->nops - 1; j >= 0; j--) {
            const ft_op *op = &p->ops[g->ops[j]];
            int t = op->output;
            pl.matmul |= op->type == FT_OP_MATMUL;
            for (int m = j + 1; m < g->nops && !feeds[(size_t)j]; m++) {
                const ft_op *c = &p->ops[g->ops[m]];
                if ((c->type == FT_OP_MATMUL || feeds[(size_t)m]) && in_list(c->inputs, c->ninputs, t))
                    feeds[(size_t)j] = 1;
            }
            ft_role r = feeds[(size_t)j] ? FT_ROLE_UPSTREAM : op->type == FT_OP_MATMUL ? FT_ROLE_KLOOP : FT_ROLE_EPILOGUE;
            pl.role[(size_t)j] = r;
            if (r == FT_ROLE_UPSTREAM)
                continue;
            wg = std::max(wg, p->tensors[t].width);
            hg = std::max(hg, p->tensors[t].height);
            if (r == FT_ROLE_KLOOP)
                nk = std::max(nk, ceil_div(op->k, g->k));
        }
        pl.like_runs = std::find(pl.role.begin(), pl.role.end(), FT_ROLE_UPSTREAM) == pl.role.end();
        pl.ntx = ceil_div(wg, g->w);
        pl.nty = ceil_div(hg, g->h);
        pl.nk = nk;
        std::int64_t tiles, steps;
        if (__builtin_mul_overflow(pl.ntx, pl.nty, &tiles) || __builtin_mul_overflow(tiles, pl.nk, &steps))
            throw std::overflow_error(fmt("%s: subgraph %d has more steps than 64 bits count", n, i));
    }
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!g->order)
            continue;
        const SgPlan &pl = plans_[(size_t)i];
        std::int64_t ntiles = pl.ntx * pl.nty;
        if (g->norder != ntiles)
            throw Invalid(FT_R_BAD_TRAVERSAL,
                          fmt("%s: traversal_orders[%d] has %lld entries, subgraph %d has %lld tiles (%lld x %lld)", n, i, (long long)g->norder,
                              i, (long long)ntiles, (long long)pl.nty, (long long)pl.ntx),
                          i);
        std::vector<unsigned char> hit((size_t)ntiles, 0);
        for (std::int64_t j = 0; j < ntiles; j++) {
            std::int64_t t = g->order[j];
            if (t < 0 || t >= ntiles)
                throw Invalid(FT_R_BAD_TRAVERSAL,
                              fmt("%s: traversal_orders[%d][%lld] is tile %lld, out of range (%lld tiles)", n, i, (long long)j, (long long)t,
                                  (long long)ntiles),
                              i);
            if (hit[(size_t)t])
                throw Invalid(FT_R_BAD_TRAVERSAL,
                              fmt("%s: traversal_orders[%d][%lld]: tile %lld is listed twice", n, i, (long long)j, (long long)t), i);
            hit[(size_t)t] = 1;
        }
    }

    /* Where each tensor is, subgraph after subgraph: graph inputs start in
     * slow memory; written outputs join them; retained ones are resident in
     * the next subgraph only.  Write-backs follow SPEC 3's "written". */
    std::vector<std::vector<int>> prod_in((size_t)nt), cons_in((size_t)nt);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            std::vector<int> &pv = prod_in[(size_t)op->output];
            if (pv.empty() || pv.back() != i)
                pv.push_back(i);
            for (int k = 0; k < op->ninputs; k++) {
                std::vector<int> &cv = cons_in[(size_t)op->inputs[k]];
                if (cv.empty() || cv.back() != i)
                    cv.push_back(i);
            }
        }
    }
    auto written = [&](int i, int t) {
        if (p->tensors[t].nconsumers == 0)
            return true; /* graph output */
        const std::vector<int> &pv = prod_in[(size_t)t], &cv = cons_in[(size_t)t];
        auto np = std::upper_bound(pv.begin(), pv.end(), i);
        int next_prod = np == pv.end() ? ns : *np;
        for (auto c = std::upper_bound(cv.begin(), cv.end(), i); c != cv.end(); ++c) {
            if (*c >= next_prod)
                return false; /* made again before that load: no write needed */
            if (*c == i + 1 && in_list(s->sg[i].retain, s->sg[i].nretain, t))
                continue; /* resident there */
            return true;
        }
        return false;
    };
    std::vector<unsigned char> in_slow((size_t)nt, 0);
    std::vector<int> counted((size_t)nt, 0); /* subgraph + 1 that counted tensor t's footprint */
    for (int t = 0; t < nt; t++)
        in_slow[(size_t)t] = p->tensors[t].producer < 0;
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        SgPlan &pl = plans_[(size_t)i];
        const ft_subgraph *prev = i > 0 ? &s->sg[i - 1] : nullptr;
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 1;
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int t = op->inputs[k];
                if (produced_[(size_t)t] || in_slow[(size_t)t] || (prev && in_list(prev->retain, prev->nretain, t)))
                    continue;
                throw Invalid(FT_R_TENSOR_UNAVAILABLE,
                              fmt("%s: subgraphs[%d][%d]: op %d needs tensor %d, which is neither in slow memory nor resident (no earlier "
                                  "subgraph wrote or retained it)",
                                  n, i, j, g->ops[j], t),
                              i);
            }
        }
        for (int j = 0; j < g->nops; j++) {
            int t = p->ops[g->ops[j]].output;
            bool w = written(i, t), r = in_list(g->retain, g->nretain, t);
            if (pl.role[(size_t)j] == FT_ROLE_UPSTREAM && (w || r))
                throw Invalid(FT_R_FUSED_OPERAND_ESCAPES,
                              fmt("%s: subgraphs[%d][%d]: tensor %d (output of op %d) feeds a fused MatMul in subgraph %d and is computed "
                                  "piecewise there, so it cannot also be %s",
                                  n, i, j, t, g->ops[j], i,
                                  r ? "retained" : p->tensors[t].nconsumers ? "written (a later subgraph loads it)" : "written (it is a graph output)"),
                              i);
            const ft_tensor *T = &p->tensors[t];
            if (w)
                pl.written.push_back(t);
            if (r)
                pl.buffers.push_back(T->width * T->height);
            else if (w)
                pl.buffers.push_back(std::min(g->w, T->width) * std::min(g->h, T->height));
        }
        /* The footprint in slow memory, for a shared cache: each tensor
         * loaded from or written to slow memory, whole and once. */
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int t = op->inputs[k];
                if (produced_[(size_t)t] || (prev && in_list(prev->retain, prev->nretain, t)) || counted[(size_t)t] == i + 1)
                    continue;
                counted[(size_t)t] = i + 1;
                pl.footprint_reads += ft_tensor_size(p, t);
            }
        }
        for (int t : pl.written)
            pl.footprint_writes += ft_tensor_size(p, t);
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 0;
        for (int t : pl.written)
            in_slow[(size_t)t] = 1;
    }

    /* The walker that supplies each step's data flow needs a schedule that
     * passes libfusetile's validation; after the checks above it must. */
    ft_status st;
    if (ft_schedule_validate(p, s, &st) != FT_OK)
        throw Invalid(st.reason ? st.reason : FT_R_NONE,
                      fmt("%s (the simulator's own checks passed this schedule; ft_schedule_validate did not)", st.msg));
}

}  // namespace ftsim
