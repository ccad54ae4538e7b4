/* tcldicts.c - the Tcl binding's results as dicts: problems, ops, tensors, targets, subgraphs, evaluations and simulations, one function per dict. */
#define _POSIX_C_SOURCE 200809L
#include "fttcl.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

static Tcl_Obj *int_list(const int *a, int n)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewIntObj(a[i]));
    return l;
}

static Tcl_Obj *wide_list(const int64_t *a, int64_t n)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    for (int64_t i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, Tcl_NewWideIntObj((Tcl_WideInt)a[i]));
    return l;
}

Tcl_Obj *fttcl_wide(int64_t x)
{
    return Tcl_NewWideIntObj((Tcl_WideInt)x);
}

/* dict set d key v (d unshared). */
void fttcl_put(Tcl_Obj *d, const char *key, Tcl_Obj *v)
{
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj(key, -1), v);
}

Tcl_Obj *fttcl_str(const char *s)
{
    return Tcl_NewStringObj(s ? s : "", -1);
}

static double rel_diff(double sim, double ana)
{
    if (isnan(sim) || isnan(ana))
        return INFINITY;
    double d = fabs(sim - ana), m = fabs(ana);
    return d == 0 ? 0 : m > 0 ? d / m : INFINITY;
}

static Tcl_Obj *native_dict(const ft_problem *p)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "w", fttcl_wide(p->native_w));
    fttcl_put(d, "h", fttcl_wide(p->native_h));
    fttcl_put(d, "k", fttcl_wide(ft_native_k(p)));
    fttcl_put(d, "larger", Tcl_NewBooleanObj(p->allow_larger));
    return d;
}

const char *const fttcl_overlap_names[] = {"step", "none", "pipeline", NULL};

/* The timing terms (ft_timing); write_bandwidth 0 is the read bandwidth. */
static Tcl_Obj *timing_dict(const ft_problem *p)
{
    const ft_timing *t = &p->timing;
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "write_bandwidth", Tcl_NewDoubleObj(t->write_bandwidth));
    fttcl_put(d, "transfer_latency", Tcl_NewDoubleObj(t->transfer_latency));
    fttcl_put(d, "launch_overhead", Tcl_NewDoubleObj(t->launch_overhead));
    fttcl_put(d, "overlap", fttcl_str(fttcl_overlap_names[t->overlap]));
    fttcl_put(d, "duplex", Tcl_NewBooleanObj(t->duplex));
    return d;
}

/* Whether some op of p has a name (op_names), kind (op_kinds: which = 1)
 * or some tensor a name (tensor_names: which = 2). */
static int has_names(const ft_problem *p, int which)
{
    int n = which == 2 ? p->ntensors : p->nops;
    for (int i = 0; i < n; i++)
        if (which == 2 ? p->tensors[i].name != NULL : (which ? p->ops[i].kind : p->ops[i].name) != NULL)
            return 1;
    return 0;
}

/* `p info` op_names, op_kinds or tensor_names (which as for has_names). */
static Tcl_Obj *names_list(const ft_problem *p, int which)
{
    Tcl_Obj *l = Tcl_NewListObj(0, NULL);
    int n = which == 2 ? p->ntensors : p->nops;
    for (int i = 0; i < n; i++)
        Tcl_ListObjAppendElement(NULL, l, fttcl_str(which == 2 ? p->tensors[i].name : which ? p->ops[i].kind : p->ops[i].name));
    return l;
}

/* Add "label" (ft_subgraph_label) to a subgraph's dict when p has op names. */
static void put_label(Tcl_Obj *d, const ft_problem *p, const ft_subgraph *g)
{
    if (!has_names(p, 0))
        return;
    char *label = ft_subgraph_label(p, g);
    fttcl_put(d, "label", fttcl_str(label));
    free(label);
}

/* `p info`: the problem's sizes and graph. */
Tcl_Obj *fttcl_problem_info_dict(const ft_problem *p)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "name", fttcl_str(p->name));
    fttcl_put(d, "ntensors", Tcl_NewIntObj(p->ntensors));
    fttcl_put(d, "nops", Tcl_NewIntObj(p->nops));
    fttcl_put(d, "capacity", Tcl_NewDoubleObj(p->capacity));
    fttcl_put(d, "bandwidth", Tcl_NewDoubleObj(p->bandwidth));
    fttcl_put(d, "native", native_dict(p));
    fttcl_put(d, "timing", timing_dict(p));
    fttcl_put(d, "inputs", int_list(p->graph_inputs, p->ngraph_inputs));
    fttcl_put(d, "outputs", int_list(p->graph_outputs, p->ngraph_outputs));
    fttcl_put(d, "topo", int_list(p->topo, p->nops));
    /* the problem file's optional names, when it has them */
    static const char *const names_key[] = {"op_names", "op_kinds", "tensor_names"};
    for (int which = 0; which < 3; which++)
        if (has_names(p, which))
            fttcl_put(d, names_key[which], names_list(p, which));
    return d;
}

/* `p ops`: one op. */
Tcl_Obj *fttcl_op_dict(const ft_problem *p, int o)
{
    const ft_op *op = &p->ops[o];
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "index", Tcl_NewIntObj(o));
    fttcl_put(d, "type", fttcl_str(ft_op_type_name(op->type)));
    fttcl_put(d, "inputs", int_list(op->inputs, op->ninputs));
    fttcl_put(d, "output", Tcl_NewIntObj(op->output));
    fttcl_put(d, "base_cost", Tcl_NewDoubleObj(op->base_cost));
    fttcl_put(d, "k", fttcl_wide(op->k));
    if (op->name)
        fttcl_put(d, "name", fttcl_str(op->name));
    if (op->kind)
        fttcl_put(d, "kind", fttcl_str(op->kind));
    return d;
}

/* `p tensors`: one tensor. */
Tcl_Obj *fttcl_tensor_dict(const ft_problem *p, int t)
{
    const ft_tensor *x = &p->tensors[t];
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "index", Tcl_NewIntObj(t));
    fttcl_put(d, "width", fttcl_wide(x->width));
    fttcl_put(d, "height", fttcl_wide(x->height));
    fttcl_put(d, "size", fttcl_wide(ft_tensor_size(p, t)));
    fttcl_put(d, "producer", Tcl_NewIntObj(x->producer));
    fttcl_put(d, "consumers", int_list(x->consumers, x->nconsumers));
    if (x->name)
        fttcl_put(d, "name", fttcl_str(x->name));
    return d;
}

/* `t info`: every setting of the target file.  Contest targets have only
 * the fields marked 0 in `machine`. */
enum { F_STR, F_BOOL, F_INT, F_DBL };
static const struct target_field {
    const char *key;
    int type;
    size_t off;
    int machine;
} target_fields[] = {
    {"path", F_STR, offsetof(ft_target, path), 0},
    {"name", F_STR, offsetof(ft_target, name), 0},
    {"description", F_STR, offsetof(ft_target, description), 0},
    {"contest", F_BOOL, offsetof(ft_target, contest), 0},
    {"clock_hz", F_DBL, offsetof(ft_target, clock_hz), 1},
    {"element_bytes", F_INT, offsetof(ft_target, element_bytes), 1},
    {"capacity_bytes", F_INT, offsetof(ft_target, capacity_bytes), 1},
    {"read_bandwidth", F_DBL, offsetof(ft_target, read_bandwidth), 1},
    {"write_bandwidth", F_DBL, offsetof(ft_target, write_bandwidth), 1},
    {"transfer_latency", F_DBL, offsetof(ft_target, transfer_latency), 1},
    {"separate_channels", F_BOOL, offsetof(ft_target, separate_channels), 1},
    {"native_w", F_INT, offsetof(ft_target, native_w), 1},
    {"native_h", F_INT, offsetof(ft_target, native_h), 1},
    {"native_k", F_INT, offsetof(ft_target, native_k), 1},
    {"allow_larger_granularity", F_BOOL, offsetof(ft_target, allow_larger_granularity), 1},
    {"pointwise_unpadded", F_BOOL, offsetof(ft_target, pointwise_unpadded), 1},
    {"matmul_macs_per_cycle", F_DBL, offsetof(ft_target, matmul_macs_per_cycle), 1},
    {"pointwise_elements_per_cycle", F_DBL, offsetof(ft_target, pointwise_elements_per_cycle), 1},
    {"launch_overhead", F_DBL, offsetof(ft_target, launch_overhead), 1},
    {"double_buffering", F_BOOL, offsetof(ft_target, double_buffering), 1},
    {"units", F_INT, offsetof(ft_target, units), 1},
    {"slow_memory_efficiency", F_DBL, offsetof(ft_target, memory_efficiency), 1},
    {"matmul_efficiency", F_DBL, offsetof(ft_target, matmul_efficiency), 1},
    {"pointwise_efficiency", F_DBL, offsetof(ft_target, pointwise_efficiency), 1},
    {"step_overhead", F_DBL, offsetof(ft_target, step_overhead), 1},
    {"tile_overhead", F_DBL, offsetof(ft_target, tile_overhead), 1},
    {"matmul_tile_overhead", F_DBL, offsetof(ft_target, matmul_tile_overhead), 1},
    {"shared_cache_capacity_bytes", F_INT, offsetof(ft_target, cache_capacity_bytes), 1},
    {"shared_cache_partitions", F_INT, offsetof(ft_target, cache_partitions), 1},
    {"shared_cache_bandwidth", F_DBL, offsetof(ft_target, cache_bandwidth), 1},
    {"shared_cache_resident_bytes", F_DBL, offsetof(ft_target, cache_resident_bytes), 1},
    {"register_file_bytes", F_INT, offsetof(ft_target, register_file_bytes), 1},
    {"accumulator_bytes", F_INT, offsetof(ft_target, accumulator_bytes), 1},
    {"misaligned_efficiency", F_DBL, offsetof(ft_target, misaligned_efficiency), 1},
    {"aligned_elements", F_INT, offsetof(ft_target, aligned_elements), 1},
    {"split_overhead", F_DBL, offsetof(ft_target, split_overhead), 1},
    {"conv_efficiency", F_DBL, offsetof(ft_target, conv_efficiency), 1},
    {"conv_small_channels", F_INT, offsetof(ft_target, conv_small_channels), 1},
    {"conv_small_efficiency", F_DBL, offsetof(ft_target, conv_small_efficiency), 1},
    {"streamk_overhead", F_DBL, offsetof(ft_target, streamk_overhead), 1},
    {"run_overhead", F_DBL, offsetof(ft_target, run_overhead), 1},
    {"replay_interval", F_DBL, offsetof(ft_target, replay_interval), 1},
};

Tcl_Obj *fttcl_target_info_dict(const ft_target *t)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    const char *base = (const char *)t;
    for (size_t i = 0; i < sizeof target_fields / sizeof target_fields[0]; i++) {
        const struct target_field *f = &target_fields[i];
        if (f->machine && t->contest)
            continue;
        const void *v = base + f->off;
        Tcl_Obj *o = f->type == F_STR    ? fttcl_str(*(char *const *)v)
                     : f->type == F_BOOL ? Tcl_NewBooleanObj(*(const int *)v)
                     : f->type == F_INT  ? fttcl_wide(*(const int64_t *)v)
                                         : Tcl_NewDoubleObj(*(const double *)v);
        fttcl_put(d, f->key, o);
    }
    if (!t->contest) { /* the slow memory's read and write shares as applied; compute.kind_cost */
        double re, we;
        ft_target_memory_efficiencies(t, &re, &we);
        fttcl_put(d, "slow_memory_read_efficiency", Tcl_NewDoubleObj(re));
        fttcl_put(d, "slow_memory_write_efficiency", Tcl_NewDoubleObj(we));
        Tcl_Obj *k = Tcl_NewDictObj();
        for (int i = 0; i < t->nkind_costs; i++)
            fttcl_put(k, t->kind_names[i], Tcl_NewDoubleObj(t->kind_costs[i]));
        fttcl_put(d, "kind_cost", k);
    }
    return d;
}

/* `s subgraphs`: one subgraph of a schedule. */
Tcl_Obj *fttcl_subgraph_dict(const ft_problem *p, const ft_schedule *s, int i)
{
    const ft_subgraph *g = &s->sg[i];
    Tcl_Obj *d = Tcl_NewDictObj(), *gran = Tcl_NewDictObj();
    fttcl_put(gran, "w", fttcl_wide(g->w));
    fttcl_put(gran, "h", fttcl_wide(g->h));
    fttcl_put(gran, "k", fttcl_wide(g->k));
    fttcl_put(d, "index", Tcl_NewIntObj(i));
    fttcl_put(d, "ops", int_list(g->ops, g->nops));
    fttcl_put(d, "granularity", gran);
    fttcl_put(d, "retain", int_list(g->retain, g->nretain));
    fttcl_put(d, "order", g->order ? wide_list(g->order, g->norder) : Tcl_NewObj());
    fttcl_put(d, "reported", g->has_reported ? Tcl_NewDoubleObj(g->reported) : Tcl_NewObj());
    put_label(d, p, g);
    if (g->label) /* the strategy's group (ft_subgraph.label) */
        fttcl_put(d, "group", fttcl_str(g->label));
    return d;
}

/* `s evaluate`: one subgraph's analytic figures. */
static Tcl_Obj *eval_sg_dict(const ft_problem *p, const ft_schedule *s, const ft_sg_result *r, int i)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *grid = Tcl_NewDictObj();
    fttcl_put(grid, "ntx", fttcl_wide(r->ntx));
    fttcl_put(grid, "nty", fttcl_wide(r->nty));
    fttcl_put(grid, "nk", fttcl_wide(r->nk));
    fttcl_put(d, "index", Tcl_NewIntObj(i));
    fttcl_put(d, "latency", Tcl_NewDoubleObj(r->latency));
    fttcl_put(d, "steps", fttcl_wide(r->steps));
    fttcl_put(d, "grid", grid);
    fttcl_put(d, "compute_time", Tcl_NewDoubleObj(r->compute_time));
    fttcl_put(d, "memory_time", Tcl_NewDoubleObj(r->memory_time));
    fttcl_put(d, "compute_bound_steps", fttcl_wide(r->compute_bound_steps));
    fttcl_put(d, "memory_bound_steps", fttcl_wide(r->memory_bound_steps));
    fttcl_put(d, "peak_working_set", fttcl_wide(r->peak_working_set));
    fttcl_put(d, "loaded", fttcl_wide(r->loaded));
    fttcl_put(d, "written", fttcl_wide(r->written));
    if (p->energy.on) { /* a target's energy group */
        fttcl_put(d, "energy_j", Tcl_NewDoubleObj(r->energy));
        fttcl_put(d, "power_w", Tcl_NewDoubleObj(ft_energy_watts(p, r->energy, r->latency)));
    }
    put_label(d, p, &s->sg[i]);
    return d;
}

/* `s evaluate`: the whole evaluation. */
Tcl_Obj *fttcl_eval_dict(const ft_problem *p, const ft_schedule *s, const ft_eval *e)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *sgs = Tcl_NewListObj(0, NULL);
    for (int i = 0; i < e->nsubgraphs; i++)
        Tcl_ListObjAppendElement(NULL, sgs, eval_sg_dict(p, s, &e->sg[i], i));
    fttcl_put(d, "model", fttcl_str(ft_compute_model_name(e->model)));
    fttcl_put(d, "total", Tcl_NewDoubleObj(e->total));
    if (p->energy.on) {
        fttcl_put(d, "energy_j", Tcl_NewDoubleObj(e->energy));
        fttcl_put(d, "power_w", Tcl_NewDoubleObj(ft_energy_watts(p, e->energy, e->total)));
    }
    fttcl_put(d, "lower_bound", Tcl_NewDoubleObj(e->lower_bound));
    fttcl_put(d, "ratio", Tcl_NewDoubleObj(e->lower_bound > 0 ? e->total / e->lower_bound : 0.0));
    fttcl_put(d, "subgraphs", sgs);
    return d;
}

/* `s simulate`: one subgraph's simulated and analytic figures. */
static Tcl_Obj *sim_sg_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_sg *q, int i)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    fttcl_put(d, "index", Tcl_NewIntObj(i));
    fttcl_put(d, "simulated", Tcl_NewDoubleObj(q->simulated));
    fttcl_put(d, "analytic", Tcl_NewDoubleObj(q->analytic));
    fttcl_put(d, "difference", Tcl_NewDoubleObj(q->simulated - q->analytic));
    fttcl_put(d, "steps", fttcl_wide(q->steps));
    fttcl_put(d, "peak_occupancy", fttcl_wide(q->peak_occupancy));
    fttcl_put(d, "channel_busy", Tcl_NewDoubleObj(q->channel_busy));
    fttcl_put(d, "compute_busy", Tcl_NewDoubleObj(q->compute_busy));
    put_label(d, p, &s->sg[i]);
    return d;
}

/* `s simulate`: the whole replay and its cross-check. */
Tcl_Obj *fttcl_sim_dict(const ft_problem *p, const ft_schedule *s, const ft_sim_result *r, ft_compute_model model)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *sgs = Tcl_NewListObj(0, NULL);
    int agree = r->analytic_reason == FT_R_NONE && rel_diff(r->total_simulated, r->total_analytic) <= AGREE_REL;
    for (int i = 0; i < r->nsubgraphs; i++) {
        Tcl_ListObjAppendElement(NULL, sgs, sim_sg_dict(p, s, &r->sg[i], i));
        if (rel_diff(r->sg[i].simulated, r->sg[i].analytic) > AGREE_REL)
            agree = 0;
    }
    fttcl_put(d, "model", fttcl_str(ft_compute_model_name(model)));
    fttcl_put(d, "total_simulated", Tcl_NewDoubleObj(r->total_simulated));
    fttcl_put(d, "total_analytic", Tcl_NewDoubleObj(r->total_analytic));
    fttcl_put(d, "difference", Tcl_NewDoubleObj(r->total_simulated - r->total_analytic));
    fttcl_put(d, "agree", Tcl_NewBooleanObj(agree));
    fttcl_put(d, "steps", fttcl_wide(r->steps));
    fttcl_put(d, "analytic_reason", fttcl_str(ft_reason_name(r->analytic_reason)));
    fttcl_put(d, "subgraphs", sgs);
    return d;
}
