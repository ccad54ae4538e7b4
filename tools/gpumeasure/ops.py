"""ops.py - gpumeasure's ops as torch functions (MatMul, Pointwise as relu or n-1 adds, Layout as a copy or a gather) and a whole problem as one function, one kernel per op."""


def op_function(dev, kind, in_shapes, out_shape):
    """The op as a function of its input tensors: MatMul, Pointwise (relu or n-1 adds), Layout (copy or gather)."""
    torch = dev.torch
    if kind == "MatMul":
        return torch.matmul
    if kind == "Pointwise":
        if len(in_shapes) == 1:
            return torch.relu

        def add_all(*xs):
            acc = xs[0] + xs[1]
            for x in xs[2:]:
                acc = acc + x
            return acc
        return add_all
    # Layout: output row i reads input row floor(i * Hx / Ho); columns alike.
    in_h, in_w = in_shapes[0]
    out_h, out_w = out_shape
    if (in_h, in_w) == (out_h, out_w):
        return torch.clone
    rows = torch.div(torch.arange(out_h, device=dev.dev) * in_h, out_h, rounding_mode="floor").view(out_h, 1)
    cols = torch.div(torch.arange(out_w, device=dev.dev) * in_w, out_w, rounding_mode="floor").view(1, out_w)
    return lambda x: x[rows, cols]


def problem_steps(dev, pr):
    """(function, input tensor indices, output tensor index) per op, in the problem's topological order."""
    steps = {}
    for o in pr.order:
        shapes = [pr.shape(t) for t in pr.inputs[o]]
        fn = op_function(dev, pr.op_types[o], shapes, pr.shape(pr.outputs[o]))
        steps[o] = (fn, tuple(pr.inputs[o]), pr.outputs[o])
    return steps


def problem_function(dev, pr):
    """The whole problem as fn(*graph_inputs) -> graph outputs, one kernel per op (n-1 for an n-input add)."""
    steps = problem_steps(dev, pr)
    produced = set(pr.outputs)
    consumed = {t for ins in pr.inputs for t in ins}
    graph_inputs = [t for t in range(len(pr.widths)) if t not in produced]
    graph_outputs = [t for t in range(len(pr.widths)) if t not in consumed]
    last_use = {}
    for pos, o in enumerate(pr.order):
        for t in pr.inputs[o]:
            last_use[t] = pos
    free_after = [[] for _ in pr.order]
    for t, pos in last_use.items():
        if t not in graph_outputs:
            free_after[pos].append(t)
    plan = [(steps[o][0], steps[o][1], steps[o][2], tuple(free_after[pos])) for pos, o in enumerate(pr.order)]
    outputs = tuple(graph_outputs)

    def run(*xs):
        vals = dict(zip(graph_inputs, xs))
        for fn, ins, out, free in plan:
            vals[out] = fn(*[vals[t] for t in ins])
            for t in free:
                del vals[t]
        return tuple(vals[t] for t in outputs)

    return run, [dev.randn(pr.shape(t)) for t in graph_inputs]
