"""sets.py - gpumeasure's timed sets: gemm.tsv, pointwise.tsv, graph_ops.tsv (every op of every problem alone), graphs.tsv (whole problems, eager, in a CUDA graph and through torch.compile) and odd_gemm.tsv (odd, misaligned and real-layer GEMM shapes)."""

import time

from .common import PROGRESS_EVERY, POINTWISE_NINPUTS, first_line, fmt, log, warn
from .env import compile_state
from .ops import problem_function, problem_steps
from .shapes import odd_gemm_shapes


def measure_gemm(dev, args):
    """gemm.tsv's rows: every M, N, K of --gemm-sizes, each timed three ways."""
    torch = dev.torch
    sizes = args.gemm_sizes
    configs = [(m, n, k) for m in sizes for n in sizes for k in sizes]
    rows = []
    for i, (m, n, k) in enumerate(configs, 1):
        if args.budget.stop("gemm", i - 1, len(configs)):
            break
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
    """A function that runs the element-wise op once on new random tensors of n elements."""
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
    """pointwise.tsv's rows: every op of --pointwise-ops on every size of --pointwise-sizes."""
    configs = [(op, n) for n in args.pointwise_sizes for op in args.pointwise_ops]
    rows = []
    for i, (op, n) in enumerate(configs, 1):
        if args.budget.stop("pointwise", i - 1, len(configs)):
            break
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
        if args.budget.stop("graph_ops", i, total):
            break
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
    """graphs.tsv's rows: each problem run whole (eager, one CUDA graph, torch.compile)."""
    rows = []
    for i, pr in enumerate(problems, 1):
        if args.budget.stop("graphs", i - 1, len(problems)):
            break
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


def measure_odd_gemm(dev, args, out):
    """odd_gemm.tsv's rows into out (a TsvRows): every shape of odd_gemm_shapes timed three ways as in
    gemm.tsv, tflops_graph = 2MNK / us_graph; a shape that fails (out of memory) gets '-' cells and a
    warning; a progress line every PROGRESS_EVERY rows."""
    torch = dev.torch
    shapes = odd_gemm_shapes(args)
    log(args, f"odd_gemm: {len(shapes)} shapes ({sum('random' in s[3].split(',') for s in shapes)} random)")
    for i, (m, n, k, source) in enumerate(shapes, 1):
        if args.budget.stop("odd_gemm", i - 1, len(shapes)):
            break
        if i == 1 or i % PROGRESS_EVERY == 0 or i == len(shapes):
            log(args, f"odd_gemm {i}/{len(shapes)}: M={m} N={n} K={k} ({source})")
        us_stream = us_graph = us_sync = None
        try:
            a, b = dev.randn((m, k)), dev.randn((k, n))

            def call():
                return torch.matmul(a, b)
            us_stream = dev.per_call(call)
            us_graph = dev.per_replay(call)
            us_sync = dev.sync_wall(call)
        except Exception as e:   # noqa: BLE001 - out of memory, a capture failure: '-' cells, go on
            warn(f"odd_gemm: M={m} N={n} K={k}: {type(e).__name__}: {first_line(e)}; the failed cells written as '-'")
        finally:
            a = b = None
        tflops = None if us_graph is None else 2.0 * m * n * k / us_graph / 1e6
        out.add((m, n, k, source, fmt(us_stream, 3), fmt(us_graph, 3), fmt(us_sync, 1), fmt(tflops, 1)))
