"""lower.py - lowering a canonical model graph to a contest problem: one rule per canonical op (docs/LOWERING.md).

Buffers become 2-D tensors through views (views.py): feature maps
channels-last ([N*H*W rows, C cols]), everything else row-major (rows =
every dimension but the last).  Data-movement ops make no op: their result
is a *virtual* buffer, a chain of ops over a materialised source, and a
consumer that needs it gets the source's tensor itself when the chain is
the identity in its view, else one Layout op from the source.  Graph inputs
and weights have no producer, so their layout is free: each is
materialised in the layout its first consumer asks for.
"""

from collections import Counter

from . import canonical as C
from .errors import ImportFailure, node_where
from .problem import Problem
from .views import View, chain_is_identity, dim_last, equivalent, last_dims, nchw, prod, rowmajor

BATCH_SPLIT = 1   # batched products of at most this many batch elements become one MatMul each; more: folded
GROUP_SPLIT = 4   # grouped convolutions of at most this many groups become one GEMM per group; more: folded

NCHW_OPS = {"conv2d", "batch_norm"} | C.POOLING
INHERIT_OPS = C.ELEMENTWISE_BINARY | C.ELEMENTWISE_UNARY | {"dropout", "identity"}


# --as eager's op kinds of kernels that are no canonical op's own: cuDNN's transposes of a
# convolution's operands to channels-last and of its output back, and PyTorch's depthwise
# convolution (a target times each kind as a class: compute.kind_cost, docs/DEVICE.md)
TO_NHWC, TO_NCHW, DEPTHWISE = "nchw_to_nhwc", "nhwc_to_nchw", "depthwise_conv2d"
LOWERINGS = ("compiler", "eager")   # `fusetile import --as`: the default, and PyTorch's own kernels


class Options:
    """Lowering choices: batch_split (BATCH_SPLIT), group_split (GROUP_SPLIT) and as_ (LOWERINGS).

    as_ "eager" lowers the model as PyTorch's eager mode runs it: batch
    norm is not folded into its convolution (a Pointwise op of its own),
    and the problem gets "op_kernels", the kernel each op belongs to (a
    convolution's im2col Layout and its MatMul share one: cuDNN's implicit
    GEMM never writes the patch matrix).
    """

    def __init__(self, batch_split=BATCH_SPLIT, group_split=GROUP_SPLIT, as_="compiler"):
        if as_ not in LOWERINGS:
            raise ImportFailure("--as", f"'{as_}' is not one of {', '.join(LOWERINGS)}", "")
        self.batch_split = batch_split
        self.group_split = group_split
        self.eager = as_ == "eager"


def lower(g, machine, options=None):
    """Lower canonical graph g for `machine` (machine.py: a Scaled or TargetScaled); returns (Problem, stats).

    stats counts what the rules did ("batch_norm folded", "Layout for data
    movement", ...).  The problem passes Problem.check.  ImportFailure for
    an op the rules cannot express (a convolution with a computed weight).
    """
    lw = _Lowering(g, machine, options or Options())
    lw.run()
    return lw.p, lw.stats


class _Lowering:
    def __init__(self, g, machine, opts):
        self.g = g
        self.p = Problem(machine, kernels=opts.eager)
        self.opts = opts
        self.mat = {}       # buffer -> (tensor, View or ("explicit", rows, cols))
        self.virt = {}      # buffer -> (source buffer, [(op, attrs)], last node)
        self.cache = {}
        self.stats = Counter()
        self.users = g.consumers()
        self.producer = {o: n for n in g.nodes for o in n.outputs}
        self.fam = {}
        self.has_images = any(n.op in NCHW_OPS for n in g.nodes)
        self.disp = _display_names(g)

    # ------------------------------------------------------------ driver
    def run(self):
        for n in self.g.nodes:
            op = n.op
            if op in C.DATA_MOVEMENT:
                self._data_movement(n)
            elif op == "conv2d":
                self._conv2d(n)
            elif op == "linear":
                self._linear(n)
            elif op in ("matmul", "bmm"):
                self._matmul(n)
            elif op == "batch_norm":
                self._batch_norm(n)
            elif op in C.ROWWISE:
                self._rowwise(n)
            elif op in C.ELEMENTWISE_BINARY or op in C.ELEMENTWISE_UNARY:
                self._elementwise(n)
            elif op in C.POOLING:
                self._pool(n)
            elif op in C.REDUCTIONS:
                self._reduce(n)
            elif op == "cat":
                self._cat(n)
            else:
                raise ImportFailure(node_where(n.name, op), "no lowering rule", "see docs/LOWERING.md")
        for o in self.g.outputs:   # a graph output in any layout will do; a virtual one needs its tensor
            b = self.g.buffers[o]
            if b.producer is None:
                self.stats["graph output that is a model input or weight: left out"] += 1
            elif o not in self.mat:
                self.request(o, self.natural(o), self._out_name(o), "output")
        self.p.prune()
        self.p.set_costs()
        self.p.check()

    def family(self, b):
        """"nchw" when a 4-d buffer is a channels-first feature map laid out channels-last, else "rowmajor".

        Graph inputs are when the model has convolutions, batch_norm or
        pooling; the outputs of those ops are; an element-wise op's output is when a same-shape operand is; a
        data-movement result is when the channels-last view of it is the
        identity on its source's tensor (a permute to NHWC and back costs
        nothing); a concatenation's is when one of its parts is.  Decided when
        first asked, in graph order.
        """
        if b in self.fam:
            return self.fam[b]
        buf = self.g.buffers[b]
        f = "rowmajor"
        if len(buf.shape) == 4:
            n = self.producer.get(b)
            if n is None:   # a graph input is an image when the model has convolutions, batch_norm or pooling
                f = "nchw" if self.has_images and b in self.g.inputs else "rowmajor"
            elif n.op in NCHW_OPS:
                f = "nchw"
            elif b in self.virt:
                src, chain, _ = self.virt[b]
                stid, sview = self.materialize(src)
                if isinstance(sview, View) and chain_is_identity(self.shape(src), sview, chain, buf.shape, nchw()):
                    f = "nchw"
            elif n.op == "cat":   # channels-last when one of the parts is
                if any(self.family(i) == "nchw" for i in n.inputs):
                    f = "nchw"
            elif n.op in INHERIT_OPS:   # as the first operand of the output's shape, weights last
                same = [i for i in n.inputs if self.g.buffers[i].shape == buf.shape]
                same.sort(key=lambda i: self.g.buffers[i].kind == "weight")
                if same and self.family(same[0]) == "nchw":
                    f = "nchw"
        self.fam[b] = f
        return f

    def natural(self, b):
        """The view a buffer is laid out in when nothing asks otherwise."""
        shape = self.g.buffers[b].shape
        return nchw() if len(shape) == 4 and self.family(b) == "nchw" else rowmajor(len(shape))

    def _out_name(self, b):
        n = self.producer.get(b)
        return self.disp[n.name] if n else b

    # ----------------------------------------------------------- requests
    def shape(self, b):
        return self.g.buffers[b].shape

    def is_free(self, b):
        return b not in self.mat and b not in self.virt and self.g.buffers[b].producer is None

    def materialize(self, b):
        """(tensor, view) of a buffer that has a tensor; a free one gets its natural view."""
        if b not in self.mat:
            v = self.natural(b)
            r, c = v.shape2d(self.shape(b))
            self.mat[b] = (self.p.tensor(r, c, b), v)
        return self.mat[b]

    def request(self, b, view, user, kind):
        """A tensor holding buffer b laid out as `view` (a Layout op when b's tensor is laid out otherwise)."""
        key = (b, view.key())
        if key in self.cache:
            return self.cache[key]
        shape = self.shape(b)
        r, c = view.shape2d(shape)
        if b in self.mat:
            tid, v0 = self.mat[b]
            if isinstance(v0, View) and equivalent(shape, v0, view):
                out = tid
            else:
                out = self.p.layout(tid, r, c, 1, f"{user}/layout", kind, f"{b}@{r}x{c}")
                self.stats["Layout to another view of a tensor"] += 1
        elif b in self.virt:
            src, chain, last = self.virt[b]
            stid, sview = self.materialize(src)
            if isinstance(sview, View) and chain_is_identity(self.shape(src), sview, chain, shape, view):
                out = stid
                self.stats["data movement without a copy (identity view)"] += 1
            else:
                out = self.p.layout(stid, r, c, 1, self.disp[last.name], last.op, b)
                self.stats["Layout for data movement"] += 1
        else:
            out = self.p.tensor(r, c, b)
            self.mat[b] = (out, view)
        self.cache[key] = out
        return out

    def request_2d(self, b, rows, cols, user, kind, tag=""):
        """A rows x cols tensor standing for buffer b: b itself when its row-major 2-D form is rows x cols, else a Layout from b's tensor (a slice, a broadcast, a fold)."""
        nat = rowmajor(len(self.shape(b)))
        if nat.shape2d(self.shape(b)) == (rows, cols) and not tag:
            return self.request(b, nat, user, kind)
        key = (b, ("2d", rows, cols, tag))
        if key in self.cache:
            return self.cache[key]
        if self.is_free(b) and self.g.buffers[b].kind == "weight" and prod(self.shape(b)) == rows * cols and not tag:
            out = self.p.tensor(rows, cols, b)
            self.mat[b] = (out, ("explicit", rows, cols))
        else:
            src = self.virt[b][0] if b in self.virt else b
            stid, _ = self.materialize(src)
            if self.p.shape(stid) == (rows, cols) and b not in self.virt and not tag:
                out = stid
            else:
                out = self.p.layout(stid, rows, cols, 1, f"{user}/{tag or 'layout'}", kind, f"{user}/{tag or b}")
                self.stats["Layout for an operand of another shape (slice, broadcast, fold)"] += 1
        self.cache[key] = out
        return out

    def weight(self, b, rows, cols, user, kind):
        """Weight b as a rows x cols tensor (its layout is free on first use)."""
        return self.request_2d(b, rows, cols, user, kind)

    def emit_concat(self, parts, rows, cols, name, kind, out_name):
        """Concatenation: each part through a Layout to rows x cols, then one Pointwise op of them all."""
        placed = []
        for j, t in enumerate(parts):
            if self.p.shape(t) == (rows, cols):
                placed.append(t)
            else:
                placed.append(self.p.layout(t, rows, cols, 1, f"{name}/place{j}", kind, f"{name}/place{j}"))
                self.stats["Layout placing a concatenated part"] += 1
        if len(placed) == 1:
            return placed[0]
        return self.p.pointwise(placed, rows, cols, 1, name, kind, out_name)

    # -------------------------------------------------------------- rules
    def _data_movement(self, n):
        x = n.inputs[0]
        src, chain = (self.virt[x][0], list(self.virt[x][1])) if x in self.virt else (x, [])
        if n.op == "split":
            start = 0
            for o, size in zip(n.outputs, n.attrs["sizes"]):
                part = {"dim": n.attrs["dim"], "start": start, "size": size, "squeeze": n.attrs.get("squeeze", False)}
                self.virt[o] = (src, chain + [("split_part", part)], n)
                start += size
            return
        self.virt[n.outputs[0]] = (src, chain + [(n.op, n.attrs)], n)

    def _conv2d(self, n):
        a = n.attrs
        x, w = n.inputs[0], n.inputs[1]
        out = n.outputs[0]
        N, Cin, H, W = self.shape(x)
        _, Cout, Ho, Wo = self.shape(out)
        kh, kw = a["kernel"]
        g = a["groups"]
        name = self.disp[n.name]
        if self.g.buffers[w].kind != "weight":
            raise ImportFailure(node_where(n.name, n.op), "a convolution whose weight is computed is not supported",
                                "the weight must be a parameter")
        X = self.request(x, nchw(), name, n.op)
        depthwise = g > 1 and g == Cin and Cout % Cin == 0
        identity_window = kh == 1 and kw == 1 and a["stride"] == [1, 1] and not any(a["padding"])
        # --as eager: cuDNN on a channels-first tensor transposes it to channels-last first, a
        # strided kernel of its own (kind TO_NHWC); a depthwise convolution runs PyTorch's own
        # kernel and a 1x1 stride-1 one a plain GEMM on the channels-first tensor, with no
        # transposes (targets/measured/h100-c/model_kernels.tsv)
        cudnn = self.opts.eager and not depthwise and not (g == 1 and identity_window)
        if cudnn:
            X = self.p.layout(X, N * H * W, Cin, 1, f"{name}/to_nhwc", TO_NHWC, f"{name}/to_nhwc")
            self.stats["conv2d input and weight transposed to channels-last by kernels of their own (--as eager)"] += 1
        rows = N * Ho * Wo
        if g == 1:
            K = Cin * kh * kw
            if identity_window:
                L = X
                self.stats["conv2d 1x1 stride 1: the feature map is the GEMM operand"] += 1
            else:
                L = self.p.layout(X, rows, K, 1, f"{name}/im2col", n.op, f"{name}/im2col")
                self.stats["conv2d im2col Layout"] += 1
            R = self.weight(w, K, Cout, name, n.op)
            if cudnn:
                R = self.p.layout(R, K, Cout, 1, f"{name}/weight_to_nhwc", TO_NHWC, f"{name}/weight_to_nhwc")
            O = self.p.matmul(L, R, name, n.op, out)
            if L is not X:
                self.p.same_kernel(L, O)
        elif depthwise:
            kind = DEPTHWISE if self.opts.eager else n.op
            W0 = X
            if (Ho, Wo) != (H, W) or Cout != Cin:   # the gather of the windows: its own kind, not the class's
                X = self.p.layout(X, rows, Cout, 1, f"{name}/window", n.op, f"{name}/window")
                self.stats["depthwise conv2d window Layout"] += 1
            O = self.p.pointwise([X], rows, Cout, kh * kw, name, kind, out)
            if X is not W0:
                self.p.same_kernel(X, O)   # one kernel (a no-op without op_kernels)
            self.stats["depthwise conv2d as Pointwise"] += 1
        elif g <= self.opts.group_split:
            cg, og = Cin // g, Cout // g
            K = cg * kh * kw
            parts = []
            for j in range(g):
                L = self.p.layout(X, rows, K, 1, f"{name}/im2col{j}", n.op, f"{name}/im2col{j}")
                R = self.p.tensor(K, og, f"{w}[{j}]")
                parts.append(self.p.matmul(L, R, f"{name}/group{j}", n.op, f"{name}/group{j}"))
                self.p.same_kernel(L, parts[-1])
            O = self.emit_concat(parts, rows, Cout, name, n.op, out)
            self.stats["grouped conv2d split into one GEMM per group"] += 1
        else:
            cg, og = Cin // g, Cout // g
            K = cg * kh * kw
            L = self.p.layout(X, rows * g, K, 1, f"{name}/im2col", n.op, f"{name}/im2col")
            Wt = self.weight(w, Cin * kh * kw, og, name, n.op)
            R = self.p.layout(Wt, K, og, 1, f"{name}/weights", n.op, f"{name}/weights")
            Of = self.p.matmul(L, R, f"{name}/groups", n.op, f"{name}/groups")
            self.p.same_kernel(L, Of)
            O = self.p.layout(Of, rows, Cout, 1, name, n.op, out)
            self.stats["grouped conv2d folded into one GEMM"] += 1
        if cudnn:   # and the output back to channels-first
            O = self.p.layout(O, rows, Cout, 1, f"{name}/to_nchw", TO_NCHW, f"{name}/to_nchw")
            self.stats["conv2d output transposed back to channels-first by a kernel of its own (--as eager)"] += 1
        self.mat[out] = (O, nchw())

    def _linear(self, n):
        a = n.attrs
        x, w = n.inputs[0], n.inputs[1]
        out = n.outputs[0]
        name = self.disp[n.name]
        xs = self.shape(x)
        L = self.request(x, rowmajor(len(xs)), name, n.op)
        R = self.weight(w, a["in_features"], a["out_features"], name, n.op)
        O = self.p.matmul(L, R, name, n.op, out)
        self.mat[out] = (O, rowmajor(len(self.shape(out))))

    def _matmul(self, n):
        a_buf, b_buf = n.inputs[0], n.inputs[1]
        out = n.outputs[0]
        name = self.disp[n.name]
        xa, xb = list(self.shape(a_buf)), list(self.shape(b_buf))
        xa2 = [1] + xa if len(xa) == 1 else xa
        xb2 = xb + [1] if len(xb) == 1 else xb
        M, K, N = xa2[-2], xa2[-1], xb2[-1]
        Ba, Bb = prod(xa2[:-2]), prod(xb2[:-2])
        oshape = self.shape(out)
        B = prod(oshape) // (M * N)
        oview = rowmajor(len(oshape)) if len(xb) > 1 else View(range(len(oshape)), len(oshape))
        if Bb == 1:
            L = self.request(a_buf, rowmajor(len(xa)), name, n.op) if Ba == B and len(xa) > 1 else \
                self.request_2d(a_buf, B * M, K, name, n.op, "lhs" if Ba != B else "")
            R = self.request_2d(b_buf, K, N, name, n.op)
            O = self.p.matmul(L, R, name, n.op, out)
        elif B <= self.opts.batch_split:
            parts = []
            for i in range(B):
                L = self.request_2d(a_buf, M, K, name, n.op, f"lhs{i}")
                R = self.request_2d(b_buf, K, N, name, n.op, f"rhs{i}")
                parts.append(self.p.matmul(L, R, f"{name}/batch{i}", n.op, f"{name}/batch{i}"))
            O = self.emit_concat(parts, B * M, N, name, n.op, out)
            self.stats["batched product split into one MatMul per batch element"] += 1
        else:
            L = self.request(a_buf, rowmajor(len(xa)), name, n.op) if Ba == B else \
                self.request_2d(a_buf, B * M, K, name, n.op, "lhs")
            R = self.request_2d(b_buf, K, N, name, n.op, "rhs")
            O = self.p.matmul(L, R, name, n.op, out)
            self.stats["batched product folded into one MatMul"] += 1
        self.mat[out] = (O, oview)

    def _batch_norm(self, n):
        x, out = n.inputs[0], n.outputs[0]
        prod_node = self.producer.get(x)
        if self.opts.eager:   # PyTorch's eager mode runs batch norm as kernels of its own
            self.stats["batch_norm kept as its own kernel (--as eager)"] += 1
            shape = self.shape(x)
            C = shape[1] if len(shape) > 1 else shape[0]
            name = self.disp[n.name]
            # eval mode on CUDA (at::native): a copy of the per-channel statistics and
            # their inverse standard deviation, each a kernel on C elements, then the
            # transform of the input
            stats = self.p.tensor(1, C, f"{name}/statistics")
            copied = self.p.pointwise([stats], 1, C, 1, f"{name}/copy", n.op, f"{name}/copy")
            self.p.pointwise([copied], 1, C, 1, f"{name}/invstd", n.op, f"{name}/invstd")
            self._elementwise(n)
            return
        if (prod_node is not None and prod_node.op in ("conv2d", "linear") and x in self.mat
                and len(self.users.get(x, [])) == 1 and x not in self.g.outputs):
            tid, view = self.mat[x]
            self.p.tnames[tid] = out
            self.mat[out] = (tid, view)
            self.stats[f"batch_norm folded into {prod_node.op}"] += 1
            return
        self._elementwise(n)

    def _rowwise(self, n):
        x, out = n.inputs[0], n.outputs[0]
        rank = len(self.shape(x))
        if n.op == "layer_norm":
            view = last_dims(rank, len(n.attrs["normalized_shape"]))
        else:
            view = dim_last(rank, n.attrs["dim"]) if rank else rowmajor(0)
        X = self.request(x, view, self.disp[n.name], n.op)
        r, c = self.p.shape(X)
        O = self.p.pointwise([X], r, c, 1, self.disp[n.name], n.op, out)
        self.mat[out] = (O, view)
        if len(n.inputs) > 1:
            self.stats["per-channel weights folded into their op"] += 1

    def _elementwise(self, n):
        out = n.outputs[0]
        oshape = self.shape(out)
        view = self.natural(out)
        rows, cols = view.shape2d(oshape)
        name = self.disp[n.name]
        ins = []
        for b in n.inputs:
            bs = self.shape(b)
            if tuple(bs) == tuple(oshape):
                ins.append(self.request(b, view, name, n.op))
            elif self.g.buffers[b].kind == "weight":
                self.stats["broadcast weight folded into its op"] += 1
            else:
                ins.append(self.request_2d(b, rows, cols, name, n.op, "broadcast"))
                self.stats["broadcast operand through a Layout"] += 1
        if not ins:
            raise ImportFailure(node_where(n.name, n.op), "every operand is a broadcast weight",
                                "the op computes a constant; fold it before importing")
        uniq = list(dict.fromkeys(ins))
        O = self.p.pointwise(uniq, rows, cols, len(uniq), name, n.op, out)
        self.mat[out] = (O, view)

    def _pool(self, n):
        x, out = n.inputs[0], n.outputs[0]
        N, C, H, W = self.shape(x)
        _, _, Ho, Wo = self.shape(out)
        if n.op.startswith("adaptive"):
            factor = -(-H // Ho) * -(-W // Wo)
        else:
            factor = n.attrs["kernel"][0] * n.attrs["kernel"][1]
        X = self.request(x, nchw(), self.disp[n.name], n.op)
        O = self.p.layout(X, N * Ho * Wo, C, factor, self.disp[n.name], n.op, out)
        self.mat[out] = (O, nchw())

    def _reduce(self, n):
        x, out = n.inputs[0], n.outputs[0]
        X = self.request(x, self.natural(x), self.disp[n.name], n.op)
        view = self.natural(out)
        r, c = view.shape2d(self.shape(out))
        factor = prod(self.shape(x)) / max(1, prod(self.shape(out)))
        if factor == 1 and self.p.shape(X) == (r, c):
            self.mat[out] = (X, view)
            return
        O = self.p.layout(X, r, c, factor, self.disp[n.name], n.op, out)
        self.mat[out] = (O, view)

    def _cat(self, n):
        out = n.outputs[0]
        view = self.natural(out)
        r, c = view.shape2d(self.shape(out))
        name = self.disp[n.name]
        if len(n.inputs) == 1:
            self.virt[out] = (n.inputs[0], [("identity", {})], n) if n.inputs[0] not in self.virt else \
                (self.virt[n.inputs[0]][0], self.virt[n.inputs[0]][1] + [("identity", {})], n)
            return
        parts = []
        for j, b in enumerate(n.inputs):
            bview = view if len(self.shape(b)) == len(self.shape(out)) else self.natural(b)
            parts.append(self.request(b, bview, name, n.op))
        O = self.emit_concat(parts, r, c, name, n.op, out)
        self.mat[out] = (O, view)
        self.stats["cat as Layouts into one Pointwise"] += 1


def _display_names(g):
    """Node name -> its layer's source name: the module path when one node has it, else scope/node."""
    count = Counter(n.source.get("module") for n in g.nodes if n.source.get("module"))
    out = {}
    for n in g.nodes:
        m = n.source.get("module")
        if m and count[m] == 1:
            out[n.name] = m
        elif g.frontend == "onnx":
            name = n.name
            if name.startswith("/model/"):
                name = name[len("/model/"):]
            out[n.name] = name.lstrip("/") or n.name
        else:
            scope = n.source.get("scope") or m
            out[n.name] = f"{scope}/{n.name}" if scope else n.name
    return out
