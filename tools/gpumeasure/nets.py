"""nets.py - gpumeasure's torchvision sets: models.tsv (whole models: eager, one CUDA graph, torch.compile), model_kernels.tsv (each model's kernels from torch.profiler) and conv.tsv (each model's distinct convolutions run alone by cuDNN); models built with weights=None."""

import gc
import importlib
import time
import warnings

from .common import KERNEL_NAME_CHARS, MISSING, PROGRESS_EVERY, SkipSet, UsageError, clean, first_line, fmt, log, warn
from .env import compile_state


def open_torchvision(names, option):
    """torchvision, once every name is one of its models (a callable in torchvision.models); UsageError
    naming the option otherwise, or when torchvision cannot be imported."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torchvision
    except Exception as e:   # noqa: BLE001 - missing or broken: the sets that need it cannot run
        raise UsageError(f"{option}: torchvision is not importable ({first_line(e)})")
    for name in names:
        if name.startswith("_") or not callable(getattr(torchvision.models, name, None)):
            raise UsageError(f"{option}: torchvision {torchvision.__version__} has no model '{name}'")
    return torchvision


def build_model(dev, tv, name):
    """torchvision.models.NAME(weights=None) on the device in its element type, in eval mode: built on the
    device directly where torch can (torch.device as a context manager), else on the CPU and moved."""
    ctor = getattr(tv.models, name)
    model = None
    if dev.cuda:
        try:
            with dev.torch.device(dev.dev):
                model = ctor(weights=None)
        except Exception:   # noqa: BLE001 - an older torch (torch.device is no context manager), or else
            model = None    # the CPU build below, which says what is wrong if anything is
    if model is None:
        model = ctor(weights=None)
    return model.to(device=dev.dev, dtype=dev.dtype).eval()


def release(dev):
    """Free what the last model or tensors left: the garbage, then the CUDA cache."""
    gc.collect()
    if dev.cuda:
        dev.torch.cuda.empty_cache()


def measure_models(dev, args, out):
    """models.tsv's rows into out (a TsvRows): each model of --models at each batch of --model-batches,
    input batch x 3 x S x S (S = --image-size) from randn: us_eager (dev.per_call of one forward),
    us_cudagraph (the forward in one CUDA graph, replayed), us_compiled and compile_s (torch.compile's
    default mode, compiled afresh for each batch; '-' with --no-compile or on the CPU), params. A
    model or a figure that fails (out of memory, capture) gets '-' cells and a warning."""
    torch = dev.torch
    tv = open_torchvision(args.models, "--models")
    total = len(args.models) * len(args.model_batches)
    compiling = compile_state(dev, args).startswith("torch.compile")
    done = 0
    for name in args.models:
        if args.budget.stop("models", done, total):
            return
        model = params = None
        try:
            t0 = time.perf_counter()
            model = build_model(dev, tv, name)
            params = sum(p.numel() for p in model.parameters())
            log(args, f"models: {name}: built in {time.perf_counter() - t0:.1f} s ({params} parameters)")
        except Exception as e:   # noqa: BLE001 - a model that cannot be built: '-' rows
            warn(f"models: {name}: building it failed ({type(e).__name__}: {first_line(e)}); its rows are '-'")
        for batch in args.model_batches:
            if args.budget.stop("models", done, total):
                return
            done += 1
            log(args, f"models {done}/{total}: {name} batch {batch}")
            cells = [None, None, None, None]
            if model is not None:
                cells = model_figures(dev, args, name, model, batch, compiling)
            us_eager, us_graph, us_compiled, compile_s = cells
            out.add((name, batch, fmt(us_eager, 1), fmt(us_graph, 1), fmt(us_compiled, 1), fmt(compile_s, 1),
                     MISSING if params is None else params))
            release(dev)
        model = None
        release(dev)
        torch.manual_seed(0)


def model_figures(dev, args, name, model, batch, compiling):
    """[us_eager, us_cudagraph, us_compiled, compile_s] of one model at one batch; None where not measured."""
    torch = dev.torch
    what = f"models: {name} batch {batch}"
    figures = [None, None, None, None]
    try:
        x = dev.randn((batch, 3, args.image_size, args.image_size))
    except Exception as e:   # noqa: BLE001
        warn(f"{what}: the input: {type(e).__name__}: {first_line(e)}; its row is '-'")
        return figures
    try:
        figures[0] = dev.per_call(lambda: model(x))
    except Exception as e:   # noqa: BLE001
        warn(f"{what}: eager: {type(e).__name__}: {first_line(e)}; us_eager written as '-'")
        release(dev)
    if dev.cuda and figures[0] is not None:
        try:
            figures[1] = dev.per_replay(lambda: model(x))
        except Exception as e:   # noqa: BLE001
            warn(f"{what}: CUDA graph: {type(e).__name__}: {first_line(e)}; us_cudagraph written as '-'")
            release(dev)
    if compiling and figures[0] is not None:
        try:
            import torch._dynamo
            torch._dynamo.reset()
            compiled = torch.compile(model)
            log(args, f"{what}: compiling")
            dev.sync()
            t0 = time.perf_counter()
            compiled(x)
            dev.sync()
            figures[3] = time.perf_counter() - t0
            figures[2] = dev.per_call(lambda: compiled(x))
        except Exception as e:   # noqa: BLE001
            warn(f"{what}: torch.compile: {type(e).__name__}: {first_line(e)}; us_compiled and compile_s "
                 "written as '-'")
            figures[2] = figures[3] = None
        compiled = None
    return figures


def profile_forward(dev, model, x):
    """[(kernel name, us)] of one forward under torch.profiler, in start order: on the GPU its kernels
    (and memory copies and sets: every event the GPU ran, less user annotations); on the CPU the
    top-level operators."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.cuda else [])
    with profile(activities=activities) as prof:
        model(x)
        dev.sync()
    events = prof.events()
    if dev.cuda:
        picked = [e for e in events if str(e.device_type).endswith("CUDA")
                  and not getattr(e, "is_user_annotation", False)]
    else:
        picked = [e for e in events if str(e.device_type).endswith("CPU") and e.cpu_parent is None
                  and not e.is_async and not e.name.startswith("[")]
    picked.sort(key=lambda e: e.time_range.start)
    return [(e.name, e.time_range.elapsed_us()) for e in picked]


def measure_model_kernels(dev, args, out):
    """model_kernels.tsv's rows into out (a TsvRows): for each model of --models at each batch of
    --model-batches, the kernels of one forward (after two unprofiled ones) as torch.profiler saw them,
    index from 0 in start order, names cut to KERNEL_NAME_CHARS characters. torch.profiler failing on,
    or recording nothing of, the first forward: SkipSet (a warning, no file); a forward that fails later
    (the model, out of memory, the profiler): its rows left out, with a warning."""
    try:
        importlib.import_module("torch.profiler")
    except Exception as e:   # noqa: BLE001
        raise SkipSet(f"torch.profiler is not importable ({first_line(e)})")
    tv = open_torchvision(args.models, "--models")
    total = len(args.models) * len(args.model_batches)
    done = 0
    profiled = 0
    for name in args.models:
        if args.budget.stop("model_kernels", done, total):
            break
        try:
            model = build_model(dev, tv, name)
        except Exception as e:   # noqa: BLE001
            warn(f"model_kernels: {name}: building it failed ({type(e).__name__}: {first_line(e)}); left out")
            done += len(args.model_batches)
            continue
        for batch in args.model_batches:
            if args.budget.stop("model_kernels", done, total):
                return
            done += 1
            what = f"model_kernels {done}/{total}: {name} batch {batch}"
            try:
                x = dev.randn((batch, 3, args.image_size, args.image_size))
                for _ in range(2):
                    model(x)
                dev.sync()
            except Exception as e:   # noqa: BLE001 - out of memory, a model that fails: left out
                warn(f"{what}: {type(e).__name__}: {first_line(e)}; left out")
                x = None
                release(dev)
                continue
            try:
                kernels = profile_forward(dev, model, x)
            except Exception as e:   # noqa: BLE001 - the profiler itself
                if profiled == 0:
                    raise SkipSet(f"torch.profiler failed on {name} batch {batch} "
                                  f"({type(e).__name__}: {first_line(e)})")
                warn(f"{what}: torch.profiler: {type(e).__name__}: {first_line(e)}; left out")
                continue
            finally:
                x = None
            if profiled == 0 and not kernels:
                raise SkipSet(f"torch.profiler recorded no kernels of {name} batch {batch}")
            profiled += 1
            log(args, f"{what}: {len(kernels)} kernels, {sum(us for _, us in kernels):.0f} us")
            for i, (kname, us) in enumerate(kernels):
                out.add((name, batch, i, clean(kname)[:KERNEL_NAME_CHARS] or MISSING, fmt(us, 3)))
        model = None
        release(dev)


def conv_configs(dev, model, size):
    """The distinct Conv2d calls of one forward at batch 1 on a size x size input, in first-call order:
    [(config, the first module's name, calls)]; config = (in_ch, out_ch, kh, kw, stride, padding,
    dilation, groups, bias, in_h, in_w, out_h, out_w) (stride, padding and dilation as the module has them)."""
    torch = dev.torch
    found = {}
    hooks = []

    def hook_for(name):
        def hook(mod, inputs, output):
            x = inputs[0]
            key = (mod.in_channels, mod.out_channels, mod.kernel_size[0], mod.kernel_size[1], tuple_or(mod.stride),
                   tuple_or(mod.padding), tuple_or(mod.dilation), mod.groups, mod.bias is not None,
                   int(x.shape[2]), int(x.shape[3]), int(output.shape[2]), int(output.shape[3]))
            if key in found:
                found[key][1] += 1
            else:
                found[key] = [name, 1]
        return hook
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            hooks.append(mod.register_forward_hook(hook_for(name)))
    try:
        model(dev.randn((1, 3, size, size)))
    finally:
        for h in hooks:
            h.remove()
    return [(key, layer, uses) for key, (layer, uses) in found.items()]


def tuple_or(v):
    """A module's stride, padding or dilation: a tuple stays one, a string ('same') stays a string."""
    return tuple(v) if isinstance(v, (tuple, list)) else v


def pair_cell(v):
    """A stride, padding or dilation cell: 2 for (2, 2), 2x1 for (2, 1), a string as it is."""
    if isinstance(v, tuple):
        return str(v[0]) if len(set(v)) == 1 else "x".join(map(str, v))
    return str(v)


def conv_call(dev, config, batch):
    """A function running one configuration's convolution (torch.nn.functional.conv2d, channels first)
    on new random input, weight and bias, at this batch."""
    torch = dev.torch
    in_ch, out_ch, kh, kw, stride, pad, dil, groups, bias, in_h, in_w = config[:11]
    x = dev.randn((batch, in_ch, in_h, in_w))
    w = dev.randn((out_ch, in_ch // groups, kh, kw))
    b = dev.randn((out_ch,)) if bias else None
    return lambda: torch.nn.functional.conv2d(x, w, b, stride, pad, dil, groups)


def measure_conv(dev, args, out):
    """conv.tsv's rows into out (a TsvRows): first each model of --conv-models is built and run once at
    batch 1 to collect its distinct convolutions (conv_configs); then each is timed at each batch of
    --conv-batches (us_stream, us_graph), a configuration another model already has reusing its figures.
    A model that fails is left out, a convolution that fails gets '-' cells, each with a warning."""
    tv = open_torchvision(args.conv_models, "--conv-models")
    plan = []
    for m, name in enumerate(args.conv_models):
        if args.budget.passed():
            args.budget.cut("conv", f"convolutions of {m}/{len(args.conv_models)} models collected",
                            args.budget.reason())
            break
        model = None
        try:
            model = build_model(dev, tv, name)
            configs = conv_configs(dev, model, args.image_size)
            log(args, f"conv: {name}: {len(configs)} distinct convolutions in {sum(c[2] for c in configs)} calls")
        except Exception as e:   # noqa: BLE001
            warn(f"conv: {name}: collecting its convolutions failed ({type(e).__name__}: {first_line(e)}); "
                 "left out")
            configs = []
        model = None
        release(dev)
        plan += [(name, c) for c in configs]
    rows = [(name, c, batch) for name, c in plan for batch in args.conv_batches]
    cache = {}
    for i, (name, (config, layer, uses), batch) in enumerate(rows, 1):
        if args.budget.stop("conv", i - 1, len(rows)):
            break
        if i == 1 or i % PROGRESS_EVERY == 0 or i == len(rows):
            log(args, f"conv {i}/{len(rows)}: {name} {layer} batch {batch}")
        key = (config, batch)
        if key not in cache:
            us_stream = us_graph = None
            try:
                call = conv_call(dev, config, batch)
                us_stream = dev.per_call(call)
                us_graph = dev.per_replay(call)
            except Exception as e:   # noqa: BLE001
                warn(f"conv: {name} {layer} batch {batch}: {type(e).__name__}: {first_line(e)}; "
                     "the failed cells written as '-'")
                release(dev)
            finally:
                call = None
            cache[key] = (us_stream, us_graph)
        us_stream, us_graph = cache[key]
        in_ch, out_ch, kh, kw, stride, pad, dil, groups, bias, in_h, in_w, out_h, out_w = config
        out.add((name, layer, uses, batch, in_ch, out_ch, kh, kw, pair_cell(stride), pair_cell(pad),
                 pair_cell(dil), groups, int(bias), in_h, in_w, out_h, out_w, fmt(us_stream, 3), fmt(us_graph, 3)))
