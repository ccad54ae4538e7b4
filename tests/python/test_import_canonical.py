"""test_import_canonical.py - the canonical table: every form it lists, traced or loaded, becomes its canonical op."""

import unittest
import warnings

import support  # noqa: F401 - sets the import path
import forms
from fusetile.importer import buffers, canonical, load_onnx, pipeline


def fx_module(expr, mod, param):
    """A module class whose forward(x, y=None) evaluates expr (self.m = mod, self.w a parameter of shape param)."""
    import operator
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    names = {"torch": torch, "nn": nn, "F": F, "operator": operator}

    class Snippet(nn.Module):
        def __init__(self):
            super().__init__()
            if mod:
                self.m = eval(mod, names)
            if param:
                self.w = nn.Parameter(torch.randn(param))

        def forward(self, x, y=None):
            return eval(expr, names, {"x": x, "y": y, "self": self})
    return Snippet


def onnx_model(op, spec):
    """A two-node ONNX model: the node under test on inputs X (Y) and constants, then a Relu per output."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    shapes, consts, attrs = spec[0], spec[1], spec[2]
    nout = spec[3] if len(spec) > 3 else 1
    inputs, names, inits, k = [], [], [], 0
    for pos in range(len(shapes) + len(consts)):
        if pos in consts:
            kind, val = consts[pos][0], consts[pos][1]
            name = f"c{pos}"
            if kind == "weight":
                dt = np.bool_ if len(consts[pos]) > 2 else np.float32
                inits.append(numpy_helper.from_array(np.zeros(val, dtype=dt), name))
            else:
                floaty = isinstance(val, float) or (isinstance(val, list) and val and isinstance(val[0], float))
                inits.append(numpy_helper.from_array(np.array(val, dtype=np.float32 if floaty else np.int64), name))
            names.append(name)
        else:
            name = "XYZ"[k]
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shapes[k]))
            names.append(name)
            k += 1
    outs = [f"out{i}" for i in range(nout)]
    nodes = [helper.make_node(op, names, outs, name=f"n_{op}", **attrs)]
    nodes += [helper.make_node("Relu", [o], [o + "_r"], name=f"relu{i}") for i, o in enumerate(outs)]
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info(o + "_r", TensorProto.FLOAT, None) for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class TestTable(unittest.TestCase):
    def test_forms_are_unique_and_inverse(self):
        n = sum(len(f) for f in canonical.TABLE.values())
        self.assertEqual(n, len(canonical.FORMS))
        for op, fs in canonical.TABLE.items():
            for f in fs:
                self.assertEqual(canonical.FORMS[f], op)

    def test_every_form_has_a_snippet(self):
        fx = sorted(f for f in canonical.FORMS if not f.startswith("onnx."))
        onnx_ = sorted(f[5:] for f in canonical.FORMS if f.startswith("onnx."))
        self.assertEqual(fx, sorted(forms.FX))
        self.assertEqual(onnx_, sorted(forms.ONNX))

    def test_op_classes_cover_the_table(self):
        classes = (canonical.ELEMENTWISE_BINARY | canonical.ELEMENTWISE_UNARY | canonical.ROWWISE |
                   canonical.POOLING | canonical.REDUCTIONS | canonical.DATA_MOVEMENT |
                   {"conv2d", "linear", "matmul", "bmm", "batch_norm", "cat"})
        self.assertEqual(classes, set(canonical.TABLE))

    def test_leaf_modules_are_the_nn_forms(self):
        names = {"nn." + c.__name__ for c in canonical.leaf_modules()}
        self.assertEqual(names, {f for f in canonical.FORMS if f.startswith("nn.")})

    def test_unknown_form_is_unsupported(self):
        g = support.hand_graph({"x": ((2, 3), "input"), "y": ((2, 3), "activation")},
                               [("c", "torch.cumsum", ["x"], ["y"], {})], ["x"], ["y"])
        g.frontend = "fx"
        with self.assertRaises(support.pipeline.ImportFailure) as cm:
            canonical.canonicalise(g)
        self.assertIn("c (torch.cumsum): unsupported op", cm.exception.line())


class TestFxForms(unittest.TestCase):
    """Each FX form, written in PyTorch and traced, gives a node of its canonical op."""

    def test_fx_forms(self):
        for form, (expr, shapes, mod, param) in forms.FX.items():
            with self.subTest(form=form), warnings.catch_warnings():
                warnings.simplefilter("ignore")   # F.sigmoid and F.tanh are deprecated forms
                g = support.graph(fx_module(expr, mod, param), *shapes)
                ops = [n.op for n in g.nodes]
                self.assertIn(canonical.FORMS[form], ops, f"{form}: {expr} gave {ops}")
                for n in g.nodes:   # the recorded form is in the table (an alias of the same function at worst)
                    self.assertEqual(canonical.FORMS[n.source["form"]], n.op)

    def test_in_place_forms_are_the_same_op(self):
        for a, b in (("Tensor.add_", "torch.add"), ("Tensor.relu_", "F.relu"), ("Tensor.mul_", "operator.mul")):
            self.assertEqual(canonical.FORMS[a], canonical.FORMS[b])


class TestOnnxForms(unittest.TestCase):
    """Each ONNX op type, in a one-node model, gives a node of its canonical op."""

    def test_onnx_forms(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for op, spec in forms.ONNX.items():
                with self.subTest(op=op):
                    om = load_onnx.prepare(onnx_model(op, spec))
                    g = pipeline._finish(buffers.graph_from_onnx(om, "t"))
                    self.assertIn(canonical.FORMS["onnx." + op], [n.op for n in g.nodes])


class TestAttributes(unittest.TestCase):
    """Canonical attributes of the main compute ops, from each frontend."""

    def test_conv2d_attributes(self):
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Conv2d(4, 8, (3, 5), stride=2, padding=(1, 2), dilation=1, groups=2)

            def forward(self, x):
                return self.c(x)
        g = support.graph(M, (1, 4, 9, 11))
        n = g.nodes[0]
        self.assertEqual(n.op, "conv2d")
        self.assertEqual(n.attrs, {"kernel": [3, 5], "stride": [2, 2], "padding": [1, 2, 1, 2], "dilation": [1, 1],
                                   "groups": 2, "in_channels": 4, "out_channels": 8})
        self.assertEqual(n.source["module"], "c")
        self.assertEqual(n.inputs, ["x", "c.weight", "c.bias"])

    def test_getitem_index_is_normalised(self):
        g = support.graph(fx_module("torch.relu(x[:, 1, ..., None, 2:7:2])", None, None), (2, 4, 6, 8))
        n = [n for n in g.nodes if n.op == "getitem"][0]
        self.assertEqual(n.attrs["index"], [["slice", 0, 2, 1], ["int", 1], ["slice", 0, 6, 1], ["new"],
                                            ["slice", 2, 7, 2]])
        self.assertEqual(g.buffers[n.outputs[0]].shape, (2, 6, 1, 3))

    def test_split_sizes(self):
        g = support.graph(fx_module("torch.relu(x.chunk(3, -1)[2])", None, None), (2, 4, 6, 8))
        n = [n for n in g.nodes if n.op == "split"][0]
        self.assertEqual(n.attrs, {"dim": 3, "sizes": [3, 3, 2], "squeeze": False})

    def test_scalar_operand_is_an_attribute(self):
        g = support.graph(fx_module("x * 0.5", None, None), (2, 3))
        self.assertEqual(g.nodes[0].inputs, ["x"])
        self.assertEqual(g.nodes[0].attrs["scalar"], 0.5)


if __name__ == "__main__":
    unittest.main()
