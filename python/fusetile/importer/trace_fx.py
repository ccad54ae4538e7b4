"""trace_fx.py - stage 1 (PyTorch): symbolic trace with torch.fx, shapes specialised through meta tensors.

The tracer is torch.fx's, with two changes:

- is_leaf_module is True only for modules that have a canonical op
  (canonical.LEAF_MODULES: Conv2d, Linear, BatchNorm2d, ReLU, ...), and
  only when the module does not override that class's forward (so
  torchvision's LayerNorm2d, a LayerNorm with a permuting forward, is traced
  through).  nn.MultiheadAttention, nn.TransformerEncoderLayer, containers
  and user blocks are traced through; so is F.multi_head_attention_forward,
  and so are the functions registered with torch.fx.wrap (torchvision's
  shifted_window_attention, stochastic_depth, ...).
- every proxy carries a meta tensor (node.meta["val"]): the op is run on
  the meta device as it is recorded, so `x.shape`, `x.size()`, `x.dim()`,
  `len(x)`, unpacking and control flow on sizes see real numbers.  The graph
  is specialised to the example input shapes, which is what a scheduling
  problem needs.  Control flow on tensor *values* still fails (TraceError).
"""

import contextlib

from .errors import ImportFailure, node_where

VAL = "val"            # node.meta key: the meta tensor (or tuple of them)
PATH = "module_path"   # node.meta key: module path of the enclosing module call

_CONCRETE_ATTRS = {"shape", "dtype", "ndim", "device", "is_nested", "is_cuda", "is_sparse", "is_quantized",
                   "layout", "requires_grad", "is_meta", "is_mkldnn"}
_CONCRETE_METHODS = {"size", "dim", "numel", "nelement", "element_size", "is_contiguous", "is_floating_point",
                     "is_complex", "get_device", "stride", "ndimension", "has_names", "storage_offset"}


def trace_module(model, example_inputs, leaf_types):
    """Trace `model` (an nn.Module on the meta device) called on `example_inputs` (meta tensors).

    leaf_types are the module classes kept as single call_module nodes.
    Returns (fx.Graph, root) where root is the wrapper module the graph's
    get_attr and call_module targets refer to (paths start with "model.";
    buffers.graph_from_fx strips that prefix).  Every node has meta["val"] and
    meta["module_path"].  Raises ImportFailure naming the node when an op
    fails on its inputs' shapes (a shape mismatch), and lets torch.fx's
    TraceError through when the model cannot be traced (control flow on
    values): the caller may then fall back to ONNX.
    """
    import torch
    import torch.fx as fx
    from torch.fx import _symbolic_trace as st

    root = _wrap_root(model, len(example_inputs))
    tracer = _MetaTracer(leaf_types, list(example_inputs))
    saved = list(st._wrapped_fns_to_patch)
    st._wrapped_fns_to_patch.clear()
    try:
        with torch.no_grad():
            graph = tracer.trace(root)
    finally:
        st._wrapped_fns_to_patch[:] = saved
    return graph, root


def _wrap_root(model, ninputs):
    """A module whose forward takes exactly `ninputs` tensors and calls model with them.

    The placeholders take the names of model.forward's first parameters;
    optional parameters after them keep their defaults (no placeholders).
    """
    import inspect
    import torch.nn as nn
    try:
        sig = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        sig = []
    params = [p for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params[:ninputs]]
    if sig:
        required = sum(1 for p in params if p.default is p.empty)
        varargs = any(p.kind == p.VAR_POSITIONAL for p in sig)
        if ninputs < required or (ninputs > len(params) and not varargs):
            want = f"{required}" if required == len(params) or varargs else f"{required} to {len(params)}"
            raise ImportFailure("--input-shape", f"{ninputs} input shape{'s' if ninputs != 1 else ''} for a model "
                                f"whose forward takes {want} input{'s' if want != '1' else ''} "
                                f"({', '.join(p.name for p in params)})",
                                "give one --input-shape per model input")
    if len(names) < ninputs or len(set(names)) != len(names) or "self" in names or "model" in names:
        names = [f"input_{i}" for i in range(ninputs)]
    arglist = ", ".join(names)
    src = f"def forward(self, {arglist}):\n    return self.model({arglist})\n"
    scope = {}
    exec(compile(src, "<fusetile-import-root>", "exec"), scope)
    cls = type("ImportRoot", (nn.Module,), {"forward": scope["forward"]})
    root = cls()
    root.model = model
    return root


def _meta(x):
    """x with every real tensor moved to the meta device (Parameters become plain tensors)."""
    import torch
    if isinstance(x, torch.Tensor):
        return x if x.is_meta else x.detach().to("meta")
    if isinstance(x, (list, tuple)):
        vals = [_meta(v) for v in x]
        return type(x)(vals) if not hasattr(x, "_fields") else type(x)(*vals)
    if isinstance(x, dict):
        return {k: _meta(v) for k, v in x.items()}
    return x


def _has_tensor(x):
    import torch
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    if isinstance(x, dict):
        return any(_has_tensor(v) for v in x.values())
    return False


@contextlib.contextmanager
def _untraced():
    """Run real module code inside a trace: the original nn.Module __call__ and __getattr__."""
    import torch.nn as nn
    from torch.fx import _symbolic_trace as st
    call, getattr_ = nn.Module.__call__, nn.Module.__getattr__
    nn.Module.__call__, nn.Module.__getattr__ = st._orig_module_call, st._orig_module_getattr
    try:
        yield
    finally:
        nn.Module.__call__, nn.Module.__getattr__ = call, getattr_


def _form_for_error(kind, target, root):
    from .buffers import fx_form
    try:
        module = root.get_submodule(target) if kind == "call_module" else None
        return fx_form(kind, target, module)
    except Exception:  # noqa: BLE001 - only for a message
        return str(target)


def _name_for_error(name):
    return name[len("model_"):] if name.startswith("model_") else name


def _make_classes():
    import torch
    import torch.fx as fx
    import torch.nn.functional as F

    trace_through = {F.multi_head_attention_forward}

    class MetaProxy(fx.Proxy):
        """A Proxy that answers size questions from its meta tensor."""

        def _val(self):
            return self.node.meta.get(VAL)

        def __getattr__(self, k):
            v = self.node.meta.get(VAL)
            if isinstance(v, torch.Tensor) and (k in _CONCRETE_ATTRS or k in _CONCRETE_METHODS):
                return getattr(v, k)
            return super().__getattr__(k)

        def __len__(self):
            v = self._val()
            if v is None:
                raise fx.proxy.TraceError(f"len() of {self.node.name}, whose value is unknown")
            return len(v)

        def __iter__(self):
            v = self._val()
            if isinstance(v, (list, tuple)):
                return iter([self[i] for i in range(len(v))])
            if isinstance(v, torch.Tensor) and v.dim() > 0:
                return iter([self[i] for i in range(v.shape[0])])
            return self.tracer.iter(self)

        def __setitem__(self, index, value):
            import operator
            self.tracer.create_proxy("call_function", operator.setitem, (self, index, value), {})

        def __bool__(self):
            v = self._val()
            if isinstance(v, torch.Tensor) or v is None:
                return self.tracer.to_bool(self)
            return bool(v)

        @classmethod
        def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
            if orig_method in trace_through:
                saved = F.has_torch_function
                F.has_torch_function = lambda *a, **k: False
                try:
                    return orig_method(*(args or ()), **(kwargs or {}))
                finally:
                    F.has_torch_function = saved
            return super().__torch_function__(orig_method, types, args, kwargs)

    class MetaTracer(fx.Tracer):
        def __init__(self, leaf_types, example_inputs):
            super().__init__()
            self.leaf_types = tuple(leaf_types)
            self.examples = example_inputs
            self.nplaceholders = 0
            self.paths = []

        def is_leaf_module(self, m, qualname):
            for cls in self.leaf_types:
                if isinstance(m, cls) and type(m).forward is cls.forward:
                    return True
            return False

        def call_module(self, m, forward, args, kwargs):
            self.paths.append(self.path_of_module(m))
            try:
                return super().call_module(m, forward, args, kwargs)
            finally:
                self.paths.pop()

        def proxy(self, node):
            return MetaProxy(node, self)

        def to_bool(self, obj):
            raise fx.proxy.TraceError(
                f"control flow depends on the value of {obj.node.name} (data-dependent control flow)")

        def iter(self, obj):
            raise fx.proxy.TraceError(f"{obj.node.name} is iterated but its length is unknown")

        def meta_of(self, node):
            if VAL in node.meta:
                return node.meta[VAL]
            if node.op == "get_attr":
                obj = self.root
                with _untraced():
                    for part in node.target.split("."):
                        obj = getattr(obj, part)
                node.meta[VAL] = _meta(obj)
                node.meta[PATH] = self.paths[-1] if self.paths else ""
                return node.meta[VAL]
            return None

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
            node = proxy.node
            node.meta[PATH] = self.paths[-1] if self.paths else ""
            if kind == "placeholder":
                i = self.nplaceholders
                self.nplaceholders += 1
                node.meta[VAL] = self.examples[i] if i < len(self.examples) else None
                return proxy
            if kind == "get_attr":
                self.meta_of(node)
                return proxy
            if kind == "output":
                return proxy
            margs = fx.node.map_arg(node.args, self.meta_of)
            mkwargs = fx.node.map_arg(node.kwargs, self.meta_of)
            margs, mkwargs = _meta(margs), _meta(mkwargs)
            try:
                with _untraced():
                    if kind == "call_function":
                        val = target(*margs, **mkwargs)
                    elif kind == "call_method":
                        val = getattr(margs[0], target)(*margs[1:], **mkwargs)
                    else:  # call_module
                        val = self.root.get_submodule(target).forward(*margs, **mkwargs)
            except Exception as e:  # noqa: BLE001 - any failure of the op on its shapes
                where = node_where(_name_for_error(node.name), _form_for_error(kind, target, self.root))
                if isinstance(e, NotImplementedError) or "Meta" in str(e):
                    raise ImportFailure(where, f"the op cannot run on the meta device: {_first_line(e)}",
                                        "the ONNX path (--frontend onnx) runs it for real") from None
                shapes = []
                fx.node.map_aggregate((margs, mkwargs), lambda a: shapes.append(list(a.shape))
                                      if isinstance(a, torch.Tensor) else None)
                ins = " and ".join(str(s) for s in shapes)
                raise ImportFailure(where, f"shape mismatch: {'operands ' + ins + ': ' if ins else ''}{_first_line(e)}",
                                    "check --input-shape against what the model expects") from None
            if kind == "call_function" and target is _setitem():
                val = margs[0]    # the updated tensor: a node to fold (constant) or to refuse (in place)
            if not _has_tensor(val):
                # a size, a flag: specialise on it, as the shapes are
                self.graph.erase_node(node)
                return val
            node.meta[VAL] = val
            return proxy

    return MetaProxy, MetaTracer


def _setitem():
    import operator
    return operator.setitem


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


class _Lazy:
    cls = None


def _MetaTracer(leaf_types, examples):
    if _Lazy.cls is None:
        _Lazy.cls = _make_classes()[1]
    return _Lazy.cls(leaf_types, examples)
