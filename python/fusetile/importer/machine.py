"""machine.py - the machine a problem is written for: the default abstract machine or a target file (libconfig subset reader), scaled to --dtype; base costs from throughput."""

import re

from .errors import ImportFailure

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1}
DEFAULT_DTYPE = "bf16"


class Machine:
    """Capacity, bandwidth, native tile and throughput of a machine, per element of `element_bytes` bytes.

    A target file's figures are in bytes and per cycle; the default machine
    is written the same way (DEFAULT).  for_dtype() gives the figures in
    elements of another size.
    """

    def __init__(self, name, element_bytes, capacity_bytes, read_bandwidth, native_w, native_h,
                 matmul_macs_per_cycle, pointwise_elements_per_cycle, source="default"):
        self.name = name
        self.element_bytes = element_bytes
        self.capacity_bytes = capacity_bytes
        self.read_bandwidth = read_bandwidth
        self.native_w = native_w
        self.native_h = native_h
        self.macs = matmul_macs_per_cycle
        self.pointwise = pointwise_elements_per_cycle
        self.source = source

    def for_dtype(self, dtype):
        """The problem-level figures for elements of `dtype` (a DTYPE_BYTES key).

        capacity = floor(capacity_bytes / bytes) elements; bandwidth =
        read_bandwidth / bytes elements per cycle; the throughputs scale by
        element_bytes / bytes (a datapath of fixed width in bytes: int8 on a
        bf16 machine does twice the MACs per cycle, fp32 half).
        """
        b = DTYPE_BYTES[dtype]
        scale = self.element_bytes / b
        return Scaled(self, dtype, b, int(self.capacity_bytes // b), self.read_bandwidth / b,
                      self.macs * scale, self.pointwise * scale)


class Scaled:
    """A Machine's figures for one element size; base_matmul / base_pointwise give the costs."""

    def __init__(self, machine, dtype, element_bytes, capacity, bandwidth, macs, pointwise):
        self.machine = machine
        self.dtype = dtype
        self.element_bytes = element_bytes
        self.capacity = capacity
        self.bandwidth = bandwidth
        self.macs = macs
        self.pointwise = pointwise
        self.native_w = machine.native_w
        self.native_h = machine.native_h

    def base_matmul(self):
        """Cycles of one native MatMul step: nw x nh outputs over native k = nw (SPEC section 4)."""
        return tidy(self.native_w * self.native_h * self.native_w / self.macs)

    def base_pointwise(self, factor=1.0):
        """Cycles of one native tile of a Pointwise or Layout op that reads `factor` elements per output."""
        return tidy(self.native_w * self.native_h * factor / self.pointwise)


def tidy(x):
    """A cost as an int when it is one, else rounded to 6 decimals; never below 1e-6."""
    x = max(round(x, 6), 1e-6)
    return int(x) if x == int(x) else x


# The default abstract machine: the contest's native tile (128 x 128), the
# capacity and bandwidth of the public benchmark mlsys-2026-13 (600000
# elements, 50 elements per cost unit) at 2 bytes per element, and
# throughputs that give a native MatMul step 4096 units and a one-input
# Pointwise tile 128, in the range of the contest's base costs.
DEFAULT = Machine("default", 2, 1_200_000, 100.0, 128, 128, 512.0, 128.0)


def load_target(path):
    """The Machine of a target file (targets/*.cfg); a contest target gives DEFAULT.

    Reads the settings the problem needs: element_bytes,
    fast_memory.capacity_bytes, slow_memory.read_bandwidth,
    compute.native_granularity.{w,h}, compute.matmul_macs_per_cycle,
    compute.pointwise_elements_per_cycle.  ImportFailure "FILE:LINE: ..."
    for unreadable files, syntax errors and missing or ill-typed settings.
    """
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ImportFailure(path, f"cannot read: {e.strerror or e}", "check the --target path") from None
    cfg = parse_libconfig(text, path)
    if _get(cfg, "contest", path, bool, required=False, default=False):
        return Machine("contest", DEFAULT.element_bytes, DEFAULT.capacity_bytes, DEFAULT.read_bandwidth,
                       DEFAULT.native_w, DEFAULT.native_h, DEFAULT.macs, DEFAULT.pointwise, source=path)
    name = _get(cfg, "name", path, str)
    eb = _get(cfg, "element_bytes", path, int)
    cap = _get(cfg, "fast_memory.capacity_bytes", path, int)
    bw = _get(cfg, "slow_memory.read_bandwidth", path, float)
    w = _get(cfg, "compute.native_granularity.w", path, int)
    h = _get(cfg, "compute.native_granularity.h", path, int)
    macs = _get(cfg, "compute.matmul_macs_per_cycle", path, float)
    pw = _get(cfg, "compute.pointwise_elements_per_cycle", path, float)
    for key, v in (("element_bytes", eb), ("fast_memory.capacity_bytes", cap), ("slow_memory.read_bandwidth", bw),
                   ("compute.native_granularity.w", w), ("compute.native_granularity.h", h),
                   ("compute.matmul_macs_per_cycle", macs), ("compute.pointwise_elements_per_cycle", pw)):
        if v <= 0:
            raise ImportFailure(f"{path}:{cfg.line(key)}", f"{key} is {v}, must be positive", "see targets/README.md")
    return Machine(name, eb, cap, bw, w, h, macs, pw, source=path)


def _get(cfg, key, path, typ, required=True, default=None):
    if key not in cfg.values:
        if not required:
            return default
        raise ImportFailure(f"{path}:{cfg.group_line(key)}", f"missing required setting {key}",
                            "see targets/README.md for the settings")
    v = cfg.values[key]
    if typ is float and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if typ is int and isinstance(v, bool) or not isinstance(v, typ):
        raise ImportFailure(f"{path}:{cfg.line(key)}", f"{key} must be {_typename(typ)}, not {_typename(type(v))}",
                            "see targets/README.md")
    return v


def _typename(t):
    return {int: "an integer", float: "a number", str: "a string", bool: "a boolean"}.get(t, t.__name__)


class Config:
    """Parsed libconfig settings: values and line numbers by dotted path."""

    def __init__(self):
        self.values = {}
        self.lines = {}

    def line(self, key):
        return self.lines.get(key, 0)

    def group_line(self, key):
        parts = key.split(".")
        while len(parts) > 1:
            parts.pop()
            g = ".".join(parts)
            if g in self.lines:
                return self.lines[g]
        return 0


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>\#[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)(?:LL|L)?)
  | (?P<name>[A-Za-z*][-A-Za-z0-9_*]*)
  | (?P<punct>[=:;,{}()\[\]])
""", re.X | re.S)


def parse_libconfig(text, path="config"):
    """Parse libconfig text (settings, groups, arrays, lists, strings, numbers, booleans, comments).

    Returns a Config whose values map dotted setting paths to Python
    values (groups are flattened; arrays and lists become Python lists).
    ImportFailure "PATH:LINE: syntax error ..." on malformed text.
    """
    tokens, line, pos = [], 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ImportFailure(f"{path}:{line}", "syntax error (not libconfig syntax)", "see targets/README.md")
        kind = m.lastgroup
        val = m.group(kind)
        if kind == "nl":
            line += 1
        elif kind == "comment":
            line += val.count("\n")
        elif kind != "ws":
            tokens.append((kind, val, line))
        pos = m.end()
    cfg = Config()
    p = _Parser(tokens, path, cfg)
    p.settings("", end=None)
    return cfg


class _Parser:
    def __init__(self, tokens, path, cfg):
        self.t = tokens
        self.i = 0
        self.path = path
        self.cfg = cfg

    def fail(self, what, line=None):
        if line is None:
            line = self.t[min(self.i, len(self.t) - 1)][2] if self.t else 0
        raise ImportFailure(f"{self.path}:{line}", f"syntax error ({what})", "see targets/README.md")

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None, 0)

    def take(self, val=None):
        tok = self.peek()
        if tok[0] is None or (val is not None and tok[1] != val):
            self.fail(f"expected '{val}'" if val else "unexpected end")
        self.i += 1
        return tok

    def settings(self, prefix, end):
        while True:
            kind, val, line = self.peek()
            if kind is None:
                if end is not None:
                    self.fail(f"missing '{end}'")
                return
            if end is not None and val == end:
                self.i += 1
                return
            if kind != "name":
                self.fail("expected a setting name")
            self.i += 1
            key = f"{prefix}.{val}" if prefix else val
            sep = self.take()
            if sep[1] not in ("=", ":"):
                self.fail("expected '=' or ':'")
            self.cfg.lines[key] = line
            if self.peek()[1] == "{":
                self.i += 1
                self.settings(key, "}")
            else:
                self.cfg.values[key] = self.value()
            if self.peek()[1] in (";", ","):
                self.i += 1

    def value(self):
        kind, val, line = self.take()
        if kind == "string":
            s = _unescape(val[1:-1])
            while self.peek()[0] == "string":
                s += _unescape(self.take()[1][1:-1])
            return s
        if kind == "number":
            v = val.rstrip("L")
            if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", v):
                return int(v, 16)
            if re.fullmatch(r"[-+]?\d+", v):
                return int(v)
            return float(v)
        if kind == "name" and val.lower() in ("true", "false"):
            return val.lower() == "true"
        if val in ("[", "("):
            close = "]" if val == "[" else ")"
            out = []
            while self.peek()[1] != close:
                if self.peek()[1] == "{":
                    self.fail("groups inside lists are not read by the importer")
                out.append(self.value())
                if self.peek()[1] == ",":
                    self.i += 1
            self.i += 1
            return out
        self.fail(f"unexpected '{val}'", line)


def _unescape(s):
    return s.encode().decode("unicode_escape") if "\\" in s else s
