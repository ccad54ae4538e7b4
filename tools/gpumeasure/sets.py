"""sets.py - gpumeasure's timed sets: gemm.tsv, pointwise.tsv, graph_ops.tsv (every op of every problem alone) and graphs.tsv (whole problems, eager, in a CUDA graph and through torch.compile)."""

import time

from .common import POINTWISE_NINPUTS, first_line, fmt, log, warn
from .env import compile_state
from .ops import problem_function, problem_steps


def measure_gemm(dev, args):
    torch = dev.torch
    sizes = args.gemm_sizes
    configs = [(m, n, k) for m in sizes for n in sizes for k in sizes]
    rows = []
    for i, (m, n, k) in enumerate(configs, 1):
        log(args, f"gemm {i}/{len(configs)}: M={m} N={n} K={k}")
        a, b = dev.randn((m, k)), dev.randn((k, n))

        def call():
            return torch.matmul(a, b)
        us_stream = dev.per_call(call)
        us_graph = dev.per_replay(call)
        us_sync = dev.sync_wall(call)
        tflops = 2.0 * m * n * k / us_stream / 1e6
        rows.append((m, n, k, fmt(us_stream, 3), fmt(us_graph, 3), fmt(us_sync, 1), fmt(tflops, 1)))
    return rows


def pointwise_call(dev, op, n):
    torch = dev.torch
    xs = [dev.randn((n,)) for _ in range(POINTWISE_NINPUTS[op])]
    if op == "relu":
        return lambda: torch.relu(xs[0])
    if op == "gelu":
        return lambda: torch.nn.functional.gelu(xs[0])
    if op == "add":
        return lambda: xs[0] + xs[1]
    if op == "add3":
        return lambda: xs[0] + xs[1] + xs[2]
    out = torch.empty_like(xs[0])
    return lambda: out.copy_(xs[0])


def measure_pointwise(dev, args):
    configs = [(op, n) for n in args.pointwise_sizes for op in args.pointwise_ops]
    rows = []
    for i, (op, n) in enumerate(configs, 1):
        log(args, f"pointwise {i}/{len(configs)}: {op} on {n} elements")
        call = pointwise_call(dev, op, n)
        us_stream = dev.per_call(call)
        us_graph = dev.per_replay(call)
        nbytes = (POINTWISE_NINPUTS[op] + 1) * n * dev.elem_bytes
        rows.append((op, POINTWISE_NINPUTS[op], n, fmt(us_stream, 3), fmt(us_graph, 3),
                     fmt(nbytes / us_stream / 1000.0, 1)))
    return rows


def measure_graph_ops(dev, args, problems, op_graph_us):
    """graph_ops.tsv rows; op_graph_us[problem name] gets the ops' us_graph (None on the CPU)."""
    total = sum(len(pr.op_types) for pr in problems)
    rows = []
    i = 0
    for pr in problems:
        steps = problem_steps(dev, pr)
        graph_us = []
        for o in range(len(pr.op_types)):
            i += 1
            kind = pr.op_types[o]
            out = pr.outputs[o]
            log(args, f"graph_ops {i}/{total}: {pr.name} op {o} ({kind} {pr.widths[out]}x{pr.heights[out]})")
            fn, ins, _ = steps[o]
            tensors = {t: dev.randn(pr.shape(t)) for t in ins}
            operands = [tensors[t] for t in ins]

            def call():
                return fn(*operands)
            us_stream = dev.per_call(call)
            us_graph = dev.per_replay(call)
            graph_us.append(us_graph)
            rows.append((pr.name, o, kind, pr.widths[out], pr.heights[out], pr.op_k(o), len(ins),
                         fmt(us_stream, 3), fmt(us_graph, 3)))
        op_graph_us[pr.name] = graph_us
    return rows


def measure_op_graphs_only(dev, args, pr):
    """The ops' us_graph of one problem, for sum_op_graph_us when graph_ops is not measured."""
    if not dev.cuda:
        return [None] * len(pr.op_types)
    steps = problem_steps(dev, pr)
    out = []
    for o in range(len(pr.op_types)):
        log(args, f"graphs: {pr.name} op {o}/{len(pr.op_types)} alone, for sum_op_graph_us")
        fn, ins, _ = steps[o]
        tensors = {t: dev.randn(pr.shape(t)) for t in ins}
        operands = [tensors[t] for t in ins]
        out.append(dev.per_replay(lambda: fn(*operands)))
    return out


def measure_compiled(dev, args, pr, run, xs):
    """(us_compiled, us_compiled_graph, compile_s) of the problem through torch.compile; '-' cells on failure."""
    torch = dev.torch
    state = compile_state(dev, args)
    if not state.startswith("torch.compile"):
        return None, None, None
    try:
        import torch._dynamo
        torch._dynamo.reset()   # every problem is compiled afresh, not against another's cache
        compiled = torch.compile(run)
        log(args, f"graphs: {pr.name}: compiling")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        compiled(*xs)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        us_compiled = dev.per_call(lambda: compiled(*xs))
    except Exception as e:   # noqa: BLE001 - any compiler failure leaves '-' cells, with the reason
        warn(f"graphs: {pr.name}: torch.compile failed ({type(e).__name__}: {first_line(e)}); "
             "us_compiled, us_compiled_graph and compile_s written as '-'")
        return None, None, None
    try:
        us_compiled_graph = dev.per_replay(lambda: compiled(*xs))
    except Exception as e:   # noqa: BLE001
        warn(f"graphs: {pr.name}: capturing the compiled function in a CUDA graph failed "
             f"({type(e).__name__}: {first_line(e)}); us_compiled_graph written as '-'")
        us_compiled_graph = None
    return us_compiled, us_compiled_graph, compile_s


def measure_graphs(dev, args, problems, op_graph_us):
    rows = []
    for i, pr in enumerate(problems, 1):
        log(args, f"graphs {i}/{len(problems)}: {pr.name} ({len(pr.op_types)} ops)")
        run, xs = problem_function(dev, pr)
        us_eager = dev.per_call(lambda: run(*xs))
        us_cudagraph = None
        if dev.cuda:
            try:
                us_cudagraph = dev.per_replay(lambda: run(*xs))
            except Exception as e:   # noqa: BLE001
                warn(f"graphs: {pr.name}: CUDA graph capture failed ({type(e).__name__}: {first_line(e)}); "
                     "us_cudagraph written as '-'")
        us_compiled, us_compiled_graph, compile_s = measure_compiled(dev, args, pr, run, xs)
        graph_us = op_graph_us.get(pr.name)
        if graph_us is None:
            graph_us = measure_op_graphs_only(dev, args, pr)
        sum_graph = None if any(v is None for v in graph_us) else sum(graph_us)
        rows.append((pr.name, len(pr.op_types), fmt(us_eager, 3), fmt(us_cudagraph, 3), fmt(us_compiled, 3),
                     fmt(us_compiled_graph, 3), fmt(compile_s, 1), fmt(sum_graph, 3)))
    return rows
