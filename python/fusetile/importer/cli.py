"""cli.py - `python3 -m fusetile.importer` (and `fusetile import`): options, the summary lines on stderr, the atomic write."""

import argparse
import errno
import os
import stat
import sys
import tempfile
import time

from .errors import ImportFailure

PROG = "fusetile import"

HELP = """\
usage: fusetile import MODEL [--input-shape 1x3x224x224]... [--dtype bf16|fp16|fp32|int8]
                       [--target T.cfg] [--graph-only] [--frontend auto|fx|onnx]
                       [--batch-split N] [--group-split N] [--as compiler|eager]
                       [-o OUT.json] [--quiet]

Imports a PyTorch or ONNX model and writes a scheduling problem in the
contest's format (SPEC section 1), with op_names, op_kinds and tensor_names,
or with --graph-only the model graph (docs/MODEL_GRAPH.md).  The lowering
rules and their approximations are in docs/LOWERING.md.

MODEL is one of
  torchvision:NAME      a torchvision.models constructor, weights=None (nothing is
                        downloaded; weights are never read, so none are initialised)
  FILE.py:CALLABLE      CALLABLE() returns an nn.Module (its `input_shapes`
                        attribute, when it has one, gives the default shapes)
  FILE.onnx             an ONNX model
  FILE.json             a model graph written by --graph-only

  --input-shape S   the shape of one model input, sizes joined by x; once per input,
                    in order (default: 1x3x224x224 for torchvision models)
  --dtype D         element type of the problem (default bf16): sizes are in
                    elements of D; with a target, capacity = capacity_bytes / bytes(D),
                    bandwidth = read_bandwidth x slow_memory.efficiency / bytes(D),
                    base costs scaled by bytes(D) / element_bytes
  --target T.cfg    machine and base costs from a target file (targets/*.cfg), read
                    and applied by the C library (ft_target_apply: base costs in
                    cycles from native w, h and k, the throughputs, their
                    efficiencies and kind_cost); needs the Python binding, which
                    make builds when configure finds python3-dev (default: the
                    contest-like machine of docs/LOWERING.md)
  --graph-only      write the model graph, not the problem
  --frontend F      auto (default): torch.fx, falling back to an ONNX export when
                    the model cannot be traced; fx or onnx: only that one
  --batch-split N   batched products (attention) with at most N batch elements
                    become one MatMul per element; larger ones are folded (default 1)
  --group-split N   grouped convolutions with at most N groups become one GEMM per
                    group; more groups are folded into one GEMM (default 4)
  --as L            compiler (default): batch norm folded into its convolution, each
                    convolution an im2col Layout and a MatMul; eager: the kernels
                    PyTorch's eager mode runs on CUDA, each op its own (batch norm
                    as three, cuDNN's transposes around a convolution, views free),
                    a convolution's im2col and MatMul one kernel (implicit GEMM);
                    the kernels go in "op_kernels" (docs/LOWERING.md)
  -o, --output OUT  write there, atomically (default: stdout)
  -q, --quiet       no summary lines on stderr
  --help            this text

On stderr: the graph's ops per canonical op, then (without --graph-only)
the problem's ops per type and what the lowering did.  Errors are one line,
"fusetile import: NODE (OP): MESSAGE (hint: ...)".
Exit status: 0 written, 2 bad input, unsupported model or unwritable output.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ImportFailure("", message, "try 'fusetile import --help'")


def _parser():
    from .lower import BATCH_SPLIT, GROUP_SPLIT, LOWERINGS
    from .machine import DEFAULT_DTYPE, DTYPE_BYTES
    from .pipeline import FRONTENDS
    p = _Parser(prog=PROG, add_help=False)
    p.add_argument("model", nargs="?")
    p.add_argument("--input-shape", action="append", default=[])
    p.add_argument("--dtype", default=DEFAULT_DTYPE, choices=sorted(DTYPE_BYTES))
    p.add_argument("--target")
    p.add_argument("--graph-only", action="store_true")
    p.add_argument("--frontend", default="auto", choices=FRONTENDS)
    p.add_argument("--batch-split", type=_count, default=BATCH_SPLIT)
    p.add_argument("--group-split", type=_count, default=GROUP_SPLIT)
    p.add_argument("--as", dest="as_", default="compiler", choices=LOWERINGS)
    p.add_argument("-o", "--output")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("-h", "--help", action="store_true")
    return p


def _count(v):
    if not v.isdigit() or int(v) < 1:
        raise argparse.ArgumentTypeError(f"'{v}' is not a positive integer")
    return int(v)


def main(argv=None):
    """Run the importer on argv (default sys.argv[1:]); returns the exit status (0 or 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _run(argv)
    except ImportFailure as e:
        _err(e.line())
        return 2
    except KeyboardInterrupt:
        _err("interrupted")
        return 2
    except Exception as e:  # noqa: BLE001 - one line, never a traceback, unless asked
        if os.environ.get("FUSETILE_IMPORT_DEBUG"):
            raise
        msg = str(e).strip().splitlines()
        _err(f"internal error: {type(e).__name__}: {msg[0] if msg else ''} "
             "(hint: FUSETILE_IMPORT_DEBUG=1 shows the traceback; please report it with the model)")
        return 2


def _err(text):
    sys.stderr.write(f"{PROG}: {' '.join(text.split())}\n")


def _run(argv):
    args = _parser().parse_args(argv)
    if args.help:
        sys.stdout.write(HELP)
        return 0
    if not args.model:
        raise ImportFailure("", "needs MODEL", "try 'fusetile import --help'")
    if args.output == "":
        raise ImportFailure("-o", "needs a file name", "")
    if args.output == "-":
        args.output = None  # standard output
    from . import source
    shapes = [source.parse_shape(s) for s in args.input_shape] or None
    from .machine import DEFAULT, load_target
    machine = load_target(args.target) if args.target else DEFAULT
    scaled = None if args.graph_only else machine.for_dtype(args.dtype)
    if args.output:
        _check_writable(args.output, _inputs(args))

    log = (lambda text: None) if args.quiet else _err
    import warnings
    from .errors import FallbackWarning
    from .pipeline import import_graph
    with warnings.catch_warnings():   # the note on stderr says it (log)
        warnings.simplefilter("ignore", FallbackWarning)
        g = import_graph(args.model, shapes, args.frontend, log)
    counts = g.op_counts()
    log(f"graph: {', '.join(f'{n} {op}' for op, n in counts.items())} ({len(g.nodes)} nodes, {g.frontend})")
    if args.graph_only:
        text = g.dumps(args.dtype)
    else:
        from .lower import Options, lower
        p, stats = lower(g, scaled, Options(args.batch_split, args.group_split, args.as_))
        extra = importer_field(args.model, g, scaled, machine)
        text = p.dumps(extra)
        c = p.counts()
        kern = p.op_kernels()
        log(f"problem: {len(p.types)} ops ({c['MatMul']} MatMul, {c['Pointwise']} Pointwise, {c['Layout']} Layout), "
            f"{len(p.rows)} tensors; {args.dtype} on {machine.name}: capacity {scaled.capacity}, "
            f"bandwidth {scaled.bandwidth:g}, native {scaled.native_w}x{scaled.native_h}, "
            f"base costs MatMul {scaled.base_matmul()}, Pointwise {scaled.base_pointwise()} per input"
            + "".join(f", {kind} x{f:g}" for kind, f in getattr(scaled, "kind_cost", {}).items())
            + (f"; {max(kern) + 1 if kern else 0} kernels as PyTorch runs them" if kern is not None else ""))
        if stats:
            log("lowering: " + ", ".join(f"{n} {what}" for what, n in sorted(stats.items(), key=lambda kv: -kv[1])))
    write_atomic(args.output, text, _inputs(args))
    return 0


def importer_field(model, g, scaled, machine):
    """The problem's extra fields: "importer" (model, frontend, dtype, element_bytes, machine) and, for a
    target, "imported_for" ({"target": its name, "file": its path}, machine.load_target)."""
    extra = {"importer": {"model": model, "frontend": g.frontend, "dtype": scaled.dtype,
                          "element_bytes": scaled.element_bytes, "machine": machine.name}}
    if getattr(machine, "imported_for", None):
        extra["imported_for"] = dict(machine.imported_for)
    return extra


def _inputs(args):
    """The files the command reads, as (role, path): the model file and the target file."""
    out = []
    model = args.model or ""
    if ":" in model and not os.path.exists(model):
        model = model.rsplit(":", 1)[0]  # FILE.py:CALLABLE (torchvision:NAME names no file)
    if model and os.path.isfile(model):
        out.append(("model", model))
    if args.target:
        out.append(("target", args.target))
    return out


# How long an output waits for a process to open a FIFO for reading, and how
# often it looks (seconds); the C library's FT_OUT_FIFO_WAIT_MS and _POLL_MS.
FIFO_WAIT_S = 2.0
FIFO_POLL_S = 0.01


def _output_kind(path, inputs):
    """Apply the output rules (docs/OUTPUTS.md) to path: ("new" | "regular", the file a rename replaces) or ("stream", path) for a character device or FIFO written in place; ImportFailure for a refusal."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "new", path
    except OSError as e:
        raise ImportFailure(path, f"cannot write: {e.strerror}", "") from None
    dest = path
    link = stat.S_ISLNK(st.st_mode)
    if link:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ImportFailure(path, "is a dangling symbolic link; refusing to write through it", "") from None
        except OSError as e:
            raise ImportFailure(path, f"cannot write: {e.strerror}", "") from None
        dest = os.path.realpath(path)
    if stat.S_ISREG(st.st_mode):
        for role, p in inputs:
            try:
                ist = os.stat(p)
            except OSError:
                continue
            if (ist.st_dev, ist.st_ino) == (st.st_dev, st.st_ino):
                same = "" if p == path else f" ({p})"
                raise ImportFailure(path, f"is the {role} input{same}; refusing to overwrite it", "")
        return "regular", dest
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return "stream", path
    if stat.S_ISDIR(st.st_mode):
        raise ImportFailure(path, "cannot write: Is a directory", "")
    what = "a socket" if stat.S_ISSOCK(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) else "not a regular file"
    raise ImportFailure(path, f"is {'a symbolic link to ' if link else ''}{what}; refusing to write to it",
                        "outputs are regular files, character devices, FIFOs or - for standard output")


def _check_writable(path, inputs=()):
    kind, path = _output_kind(path, inputs)
    if kind == "stream":
        return
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise ImportFailure(path, "cannot write: no such directory", "create the directory first")
    if not os.access(d, os.W_OK):
        raise ImportFailure(path, "cannot write: the directory is not writable", "pick another -o")


def _write_stream(path, text):
    """Write text in place to a character device or FIFO (never replaced); a FIFO nobody reads is refused after FIFO_WAIT_S."""
    waited = 0.0
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise ImportFailure(path, f"cannot write: {e.strerror}", "") from None
            if waited >= FIFO_WAIT_S:
                raise ImportFailure(path, f"is a FIFO that no process reads (waited {FIFO_WAIT_S:g} s); refusing to block on it",
                                    "") from None
            time.sleep(FIFO_POLL_S)
            waited += FIFO_POLL_S
    try:
        os.set_blocking(fd, True)
        data = text.encode()
        while data:
            data = data[os.write(fd, data):]
    except OSError as e:
        raise ImportFailure(path, f"write failed: {e.strerror or e}", "") from None
    finally:
        os.close(fd)


def write_atomic(path, text, inputs=()):
    """Write text to path under the output rules of docs/OUTPUTS.md (stdout when path is None).

    A new name or a regular file (also through a symbolic link, which stays)
    is written through a temporary file in the same directory, fsynced and
    renamed into place, and the directory fsynced; on failure the temporary
    file is removed and ImportFailure raised, an existing file left as it
    was.  A character device or FIFO is written in place; a directory,
    socket, block device or one of the inputs ((role, path) pairs) is
    refused.
    """
    if not path:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as e:
            raise ImportFailure("standard output", e.strerror or str(e), "") from None
        return
    kind, dest = _output_kind(path, inputs)
    if kind == "stream":
        _write_stream(path, text)
        return
    d = os.path.dirname(os.path.abspath(dest))
    fd, tmp = None, None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=os.path.basename(dest) + ".fusetile-tmp.", suffix="")
        if kind == "regular":
            os.fchmod(fd, stat.S_IMODE(os.stat(dest).st_mode))
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "w") as f:
            fd = None
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
        tmp = None
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
        finally:
            os.close(dfd)
    except OSError as e:
        raise ImportFailure(path, f"cannot write: {e.strerror or e}", "check the path and free space") from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
