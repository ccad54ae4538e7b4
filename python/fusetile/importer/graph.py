"""graph.py - the model graph: buffers (N-d values) and nodes (ops on them), and its JSON form (docs/MODEL_GRAPH.md)."""

import json

FORMAT = "fusetile-model-graph"
VERSION = 1

BUFFER_KINDS = ("input", "weight", "activation", "output")


class Ref:
    """A reference to a buffer inside a node's raw arguments (before canonicalisation)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Ref({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Ref) and other.name == self.name

    def __hash__(self):
        return hash(("Ref", self.name))


class Buffer:
    """One value of the model: a graph input, a weight, or a node's output.

    shape is a tuple of ints (() for a scalar), dtype a torch-style name
    ("float32"), kind one of BUFFER_KINDS, producer the name of the node
    that writes it (None for inputs and weights).
    """

    __slots__ = ("name", "shape", "dtype", "kind", "producer")

    def __init__(self, name, shape, dtype="float32", kind="activation", producer=None):
        self.name = name
        self.shape = tuple(int(d) for d in shape) if shape is not None else None
        self.dtype = dtype
        self.kind = kind
        self.producer = producer

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def to_json(self):
        return {"shape": list(self.shape) if self.shape is not None else None,
                "dtype": self.dtype, "kind": self.kind, "producer": self.producer}


class Node:
    """One op of the model.

    Before canonicalisation `op` is the syntactic form ("torch.add",
    "Tensor.relu_", "nn.Conv2d", "onnx.Relu") and `args`/`kwargs` hold the
    raw call with Ref for buffers; canonicalisation sets `op` to the
    canonical name, `inputs` to the tensor operands in canonical order and
    `attrs` to the canonical attributes.  `source` records where it came
    from: "form", "fx_node", "module" (module path), "onnx_node".
    `module_obj` is the nn.Module of a call_module node (not serialised).
    """

    __slots__ = ("name", "op", "inputs", "outputs", "attrs", "source", "args", "kwargs", "module_obj")

    def __init__(self, name, op, inputs=(), outputs=(), attrs=None, source=None, args=(), kwargs=None,
                 module_obj=None):
        self.name = name
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.attrs = dict(attrs or {})
        self.source = dict(source or {})
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.module_obj = module_obj

    @property
    def form(self):
        """The syntactic form the node was written in ("torch.relu", "onnx.Relu")."""
        return self.source.get("form", self.op)

    def display_name(self):
        """The layer's source name: the module path of a module call, else the node name."""
        return self.source.get("module") or self.name

    def to_json(self, graph):
        out = {"name": self.name, "op": self.op, "inputs": list(self.inputs), "outputs": list(self.outputs),
               "shape": None, "dtype": None, "attrs": _jsonable(self.attrs), "source": dict(self.source)}
        if self.outputs and self.outputs[0] in graph.buffers:
            b = graph.buffers[self.outputs[0]]
            out["shape"] = list(b.shape) if b.shape is not None else None
            out["dtype"] = b.dtype
        return out


class Graph:
    """A model graph: buffers by name, nodes in topological order, graph inputs and outputs.

    model names what was imported ("torchvision:resnet18"), frontend how
    ("fx" or "onnx"), notes lists what the importer changed on the way
    (constant folding, fallbacks).
    """

    def __init__(self, model="", frontend=""):
        self.model = model
        self.frontend = frontend
        self.buffers = {}
        self.nodes = []
        self.inputs = []
        self.outputs = []
        self.notes = []

    def add_buffer(self, name, shape, dtype="float32", kind="activation", producer=None):
        """Add a buffer (replacing one of the same name) and return it."""
        b = Buffer(name, shape, dtype, kind, producer)
        self.buffers[name] = b
        return b

    def node_map(self):
        """Nodes by name."""
        return {n.name: n for n in self.nodes}

    def consumers(self):
        """Buffer name -> list of the nodes that read it, in node order."""
        users = {name: [] for name in self.buffers}
        for n in self.nodes:
            for i in n.inputs:
                if n not in users.setdefault(i, []):
                    users[i].append(n)
        return users

    def op_counts(self):
        """Canonical op -> number of nodes, most frequent first (ties by name)."""
        counts = {}
        for n in self.nodes:
            counts[n.op] = counts.get(n.op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def mark_kinds(self):
        """Set each buffer's kind from the graph: input, weight, output or activation."""
        outs = set(self.outputs)
        ins = set(self.inputs)
        for b in self.buffers.values():
            if b.name in ins:
                b.kind = "input"
            elif b.producer is None:
                b.kind = "weight"
            elif b.name in outs:
                b.kind = "output"
            else:
                b.kind = "activation"

    def to_json(self, problem_dtype=None):
        """The graph as a JSON-ready dict (docs/MODEL_GRAPH.md)."""
        used = set(self.inputs) | set(self.outputs)
        for n in self.nodes:
            used.update(n.inputs)
            used.update(n.outputs)
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": self.model,
            "frontend": self.frontend,
            "dtype": problem_dtype,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "op_counts": self.op_counts(),
            "notes": list(self.notes),
            "nodes": [n.to_json(self) for n in self.nodes],
            "buffers": {name: b.to_json() for name, b in self.buffers.items() if name in used},
        }

    def dumps(self, problem_dtype=None):
        """The graph as JSON text: one node or buffer a line."""
        d = self.to_json(problem_dtype)
        head = {k: v for k, v in d.items() if k not in ("nodes", "buffers")}
        lines = ["{"]
        for k, v in head.items():
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
        lines.append('  "nodes": [')
        lines.append(",\n".join("    " + json.dumps(n) for n in d["nodes"]))
        lines.append("  ],")
        lines.append('  "buffers": {')
        lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in d["buffers"].items()))
        lines.append("  }")
        lines.append("}")
        return "\n".join(lines) + "\n"


def graph_from_json(d, where="graph"):
    """Build a canonical Graph from the dict of a model graph JSON file.

    Raises ImportFailure (naming `where` and the field) when the format or a
    field is wrong: every name a string, every shape a list of integers (or
    null), attrs and source objects, and every buffer a node or the graph
    names listed under "buffers".
    """
    from .errors import ImportFailure

    def bad(field, what):
        return ImportFailure(where, f"malformed model graph: {field} {what}", "see docs/MODEL_GRAPH.md for the format")

    def get(obj, key, field, kind, default=None, required=True):
        if key not in obj:
            if required:
                raise bad(field, "is missing")
            return default
        v = obj[key]
        if kind is str and not isinstance(v, str):
            raise bad(field, "must be a string")
        if kind is list and not isinstance(v, list):
            raise bad(field, "must be a list")
        if kind is dict and not isinstance(v, dict):
            raise bad(field, "must be an object")
        return v

    def names(obj, key, field):
        v = get(obj, key, field, list)
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise bad(f"{field}[{i}]", "must be a string (a buffer's name)")
        return v

    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ImportFailure(where, f"not a model graph (\"format\" is not \"{FORMAT}\")",
                            "write one with 'fusetile import MODEL --graph-only'")
    model = d.get("model", where)
    frontend = d.get("frontend", "json")
    g = Graph(model=model if isinstance(model, str) else where, frontend=frontend if isinstance(frontend, str) else "json")
    for name, b in get(d, "buffers", "buffers", dict).items():
        f = f"buffers[{name!r}]"
        if not isinstance(b, dict):
            raise bad(f, "must be an object")
        shape = get(b, "shape", f + ".shape", None)
        if shape is not None and (not isinstance(shape, list) or
                                  not all(isinstance(x, int) and not isinstance(x, bool) for x in shape)):
            raise bad(f + ".shape", "must be a list of integers or null")
        dtype = get(b, "dtype", f + ".dtype", str, "float32", False)
        kind = get(b, "kind", f + ".kind", str, "activation", False)
        if kind not in BUFFER_KINDS:
            raise bad(f + ".kind", f"is {kind!r}, not one of {', '.join(BUFFER_KINDS)}")
        producer = b.get("producer")
        if producer is not None and not isinstance(producer, str):
            raise bad(f + ".producer", "must be a node's name or null")
        g.add_buffer(name, shape, dtype, kind, producer)
    for i, n in enumerate(get(d, "nodes", "nodes", list)):
        f = f"nodes[{i}]"
        if not isinstance(n, dict):
            raise bad(f, "must be an object")
        node = Node(get(n, "name", f + ".name", str), get(n, "op", f + ".op", str), names(n, "inputs", f + ".inputs"),
                    names(n, "outputs", f + ".outputs"), get(n, "attrs", f + ".attrs", dict, {}, False),
                    get(n, "source", f + ".source", dict, {}, False))
        for field, refs in ((".inputs", node.inputs), (".outputs", node.outputs)):
            for j, r in enumerate(refs):
                if r not in g.buffers:
                    raise bad(f"{f}{field}[{j}]", f"names {r!r}, which \"buffers\" does not list")
        g.nodes.append(node)
    g.inputs = list(names(d, "inputs", "inputs"))
    g.outputs = list(names(d, "outputs", "outputs"))
    for field, refs in (("inputs", g.inputs), ("outputs", g.outputs)):
        for j, r in enumerate(refs):
            if r not in g.buffers:
                raise bad(f"{field}[{j}]", f"names {r!r}, which \"buffers\" does not list")
    notes = d.get("notes", [])
    g.notes = [str(x) for x in notes] if isinstance(notes, list) else []
    return g


def _jsonable(v):
    """Attributes as JSON values: tuples become lists, other objects their repr."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return str(v)
        return v
    return repr(v)
