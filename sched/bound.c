/* bound.c - the lower bound of SPEC section 5: max(total compute, compulsory traffic / bandwidth), with a target's timing terms. */
#include "internal.h"

double ft_lower_bound(const ft_problem *p, ft_compute_model model, double *compute, double *memory)
{
    double c = 0;
    for (int o = 0; o < p->nops; o++) {
        const ft_op *op = &p->ops[o];
        const ft_tensor *O = &p->tensors[op->output];
        double x = op->base_cost * (double)ft__ceil_div(O->width, p->native_w) * (double)ft__ceil_div(O->height, p->native_h);
        if (op->type == FT_OP_MATMUL)
            x *= (double)op->k / (model == FT_COMPUTE_OP ? (double)op->k : (double)ft_native_k(p));
        c += x;
    }
    int64_t reads = 0, writes = 0;
    for (int t = 0; t < p->ntensors; t++) {
        if (p->tensors[t].producer < 0)
            reads += ft_tensor_size(p, t);
        else if (p->tensors[t].nconsumers == 0)
            writes += ft_tensor_size(p, t);
    }
    /* the compulsory traffic as one step's transfers: at least the time
     * ft_step_time gives it (latency once, bandwidths as the machine has
     * them), and every subgraph pays the launch overhead: there is one */
    double m;
    ft_step_time(p, 0, reads, writes, &m);
    if (compute)
        *compute = c;
    if (memory)
        *memory = m;
    /* without overlap a step's compute and transfers add up */
    double b = p->timing.overlap == FT_OVERLAP_NONE ? c + m : c > m ? c : m;
    return b + ft__sg_fixed(p);
}
