"""source.py - the MODEL argument: torchvision:NAME, FILE.py:CALLABLE, FILE.onnx or FILE.json, and the example input shapes."""

import contextlib
import os
import re

from .errors import ImportFailure

DEFAULT_IMAGE_SHAPE = (1, 3, 224, 224)
#: Seed of torch's generator while build_module constructs a model.
BUILD_SEED = 0

# torchvision models whose default input is not 1x3x224x224
_TORCHVISION_SHAPES = {
    "inception_v3": (1, 3, 299, 299),
}

_INIT_FUNCTIONS = ("normal_", "trunc_normal_", "uniform_", "kaiming_normal_", "kaiming_uniform_",
                   "xavier_uniform_", "xavier_normal_", "constant_", "zeros_", "ones_", "orthogonal_")


class ModelSource:
    """What MODEL names.

    kind is "torchvision", "python", "onnx" or "graph"; path the file (None
    for torchvision); name the torchvision model or the callable.
    """

    def __init__(self, spec, kind, path=None, name=None):
        self.spec = spec
        self.kind = kind
        self.path = path
        self.name = name


def parse_model(spec):
    """Classify the MODEL argument; ImportFailure when it names nothing usable.

    Files must exist and be readable here; what is inside is checked later.
    """
    if not spec:
        raise ImportFailure("MODEL", "empty model name",
                            "give torchvision:NAME, FILE.py:CALLABLE, FILE.onnx or a model graph FILE.json")
    if spec.startswith("torchvision:"):
        name = spec[len("torchvision:"):]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ImportFailure(spec, f"'{name}' is not a torchvision model name",
                                "e.g. torchvision:resnet18; see torchvision.models.list_models()")
        return ModelSource(spec, "torchvision", name=name)
    m = re.fullmatch(r"(.+\.py):([A-Za-z_][A-Za-z0-9_]*)", spec)
    if m:
        _check_readable(m.group(1))
        return ModelSource(spec, "python", path=m.group(1), name=m.group(2))
    if spec.endswith(".py"):
        raise ImportFailure(spec, "a Python file needs the callable to call",
                            f"write {spec}:NAME, NAME a function or class that returns an nn.Module")
    if spec.endswith(".onnx"):
        _check_readable(spec)
        return ModelSource(spec, "onnx", path=spec)
    if spec.endswith(".json"):
        _check_readable(spec)
        return ModelSource(spec, "graph", path=spec)
    raise ImportFailure(spec, "unknown kind of model",
                        "give torchvision:NAME, FILE.py:CALLABLE, FILE.onnx or a model graph FILE.json")


def _check_readable(path):
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:
        raise ImportFailure(path, f"cannot read: {e.strerror or e}",
                            "check the path and its permissions") from None


def parse_shape(text):
    """'1x3x224x224' -> (1, 3, 224, 224); ImportFailure naming --input-shape otherwise."""
    parts = text.lower().split("x") if text else []
    if not parts or not all(re.fullmatch(r"[0-9]+", p) for p in parts) or any(int(p) < 1 for p in parts):
        raise ImportFailure("--input-shape", f"'{text}' is not a shape",
                            "write positive sizes joined by x, e.g. 1x3x224x224")
    return tuple(int(p) for p in parts)


@contextlib.contextmanager
def skip_init():
    """Construct modules without running torch.nn.init: the importer reads shapes only, never values."""
    import torch.nn.init as init
    saved = {n: getattr(init, n) for n in _INIT_FUNCTIONS if hasattr(init, n)}
    try:
        for n in saved:
            setattr(init, n, _no_init)
        yield
    finally:
        for n, f in saved.items():
            setattr(init, n, f)


def _no_init(tensor, *args, **kwargs):
    return tensor


def build_module(src):
    """The nn.Module that src names, in eval mode.

    torchvision: torchvision.models.NAME(weights=None), built without weight
    initialisation (nothing is downloaded; values are never read).  python:
    FILE.py is run as a module and CALLABLE() must return an nn.Module.
    Both are built with torch's random generator seeded (BUILD_SEED; the
    caller's generator state is put back), so the weights, and with them the
    branch an ONNX export takes through data-dependent control flow, are the
    same on every run.  ImportFailure when that fails.
    """
    import torch
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(BUILD_SEED)
        return _build_module(src)


def _build_module(src):
    import torch
    if src.kind == "torchvision":
        import torchvision.models as tvm
        ctor = getattr(tvm, src.name, None)
        if ctor is None or not callable(ctor) or src.name.startswith("_"):
            raise ImportFailure(src.spec, f"unknown torchvision model '{src.name}'",
                                "e.g. resnet18, mobilenet_v2, vit_b_16; see torchvision.models")
        try:
            with skip_init():
                model = ctor(weights=None)
        except Exception as e:  # noqa: BLE001 - report what the constructor said
            raise ImportFailure(src.spec, f"torchvision.models.{src.name}(weights=None) failed: {_first_line(e)}",
                                "pick a classification model of torchvision.models") from None
    else:
        import importlib.util
        import sys
        modname = "_fusetile_import_" + re.sub(r"\W", "_", os.path.basename(src.path)[:-3])
        try:
            spec = importlib.util.spec_from_file_location(modname, src.path)
            mod = importlib.util.module_from_spec(spec)
            sys.path.insert(0, os.path.dirname(os.path.abspath(src.path)))
            try:
                spec.loader.exec_module(mod)
            finally:
                sys.path.pop(0)
        except Exception as e:  # noqa: BLE001
            raise ImportFailure(src.path, f"cannot run the file: {type(e).__name__}: {_first_line(e)}",
                                "the file must import cleanly with this Python") from None
        fn = getattr(mod, src.name, None)
        if fn is None or not callable(fn):
            raise ImportFailure(src.spec, f"{src.path} defines no callable '{src.name}'",
                                "name a function or class that returns an nn.Module")
        try:
            model = fn()
        except Exception as e:  # noqa: BLE001
            raise ImportFailure(src.spec, f"{src.name}() failed: {type(e).__name__}: {_first_line(e)}",
                                "the callable must take no arguments") from None
        if not isinstance(model, torch.nn.Module):
            raise ImportFailure(src.spec, f"{src.name}() returned {type(model).__name__}, not an nn.Module",
                                "return the model (an nn.Module instance)")
    model.eval()
    return model


def default_shapes(src, model):
    """The example input shapes when no --input-shape is given, or None when there is no default.

    torchvision: 1x3x224x224 (inception_v3: 299).  A module with an
    `input_shapes` attribute (a list of shapes) gives its own.
    """
    own = getattr(model, "input_shapes", None) if model is not None else None
    if own:
        return [tuple(int(d) for d in s) for s in own]
    if src.kind == "torchvision":
        return [_TORCHVISION_SHAPES.get(src.name, DEFAULT_IMAGE_SHAPE)]
    return None


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
