/* bound.c - the lower bound of SPEC section 5: max(total compute, compulsory traffic / bandwidth). */
#include "internal.h"

double ft_lower_bound(const ft_problem *p, ft_compute_model model, double *compute, double *memory)
{
    double c = 0;
    for (int o = 0; o < p->nops; o++) {
        const ft_op *op = &p->ops[o];
        const ft_tensor *O = &p->tensors[op->output];
        double x = op->base_cost * (double)ft__ceil_div(O->width, p->native_w) * (double)ft__ceil_div(O->height, p->native_h);
        if (op->type == FT_OP_MATMUL)
            x *= (double)op->k / (model == FT_COMPUTE_OP ? (double)op->k : (double)p->native_w);
        c += x;
    }
    int64_t elems = 0;
    for (int t = 0; t < p->ntensors; t++)
        if (p->tensors[t].producer < 0 || p->tensors[t].nconsumers == 0)
            elems += ft_tensor_size(p, t);
    double m = (double)elems / p->bandwidth;
    if (compute)
        *compute = c;
    if (memory)
        *memory = m;
    return c > m ? c : m;
}
