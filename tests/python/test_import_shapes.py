"""test_import_shapes.py - stage 4: output shapes from torch on meta tensors, broadcasting, and the checks against recorded shapes."""

import unittest

import support
from fusetile.importer import shapes
from fusetile.importer.errors import ImportFailure


def run(buffers, nodes, inputs, outputs):
    g = support.hand_graph(buffers, nodes, inputs, outputs)
    shapes.propagate_shapes(g)
    return g


class TestBroadcast(unittest.TestCase):
    def test_rules(self):
        self.assertEqual(shapes.broadcast([(4, 1, 8), (3, 1)]), (4, 3, 8))
        self.assertEqual(shapes.broadcast([(5,), (2, 1), ()]), (2, 5))
        self.assertEqual(shapes.broadcast([(1, 12, 1, 7), (2, 1, 6, 1)]), (2, 12, 6, 7))
        self.assertIsNone(shapes.broadcast([(4, 3), (5,)]))
        self.assertIsNone(shapes.broadcast([(2, 3, 4), (3, 3, 4)]))

    def test_add_broadcasts_and_fills_unknown_shapes(self):
        g = run({"a": ((4, 1, 8), "input"), "b": ((3, 1), "weight"), "c": (None, "activation")},
                [("add", "add", ["a", "b"], ["c"], {})], ["a"], ["c"])
        self.assertEqual(g.buffers["c"].shape, (4, 3, 8))

    def test_add_mismatch_names_node_and_shapes(self):
        with self.assertRaises(ImportFailure) as cm:
            run({"a": ((4, 3), "input"), "b": ((5,), "weight"), "c": (None, "activation")},
                [("add_1", "add", ["a", "b"], ["c"], {})], ["a"], ["c"])
        line = cm.exception.line()
        self.assertTrue(line.startswith("add_1 (add): shape mismatch: add of [4, 3] and [5]: "), line)
        self.assertIn("cannot be broadcast", line)
        self.assertIn("(hint: ", line)

    def test_recorded_shape_disagrees(self):
        with self.assertRaises(ImportFailure) as cm:
            run({"a": ((4, 3), "input"), "c": ((4, 4), "activation")},
                [("r", "relu", ["a"], ["c"], {})], ["a"], ["c"])
        self.assertIn("the op gives [4, 3] but c is recorded as [4, 4]", cm.exception.line())


class TestRules(unittest.TestCase):
    def one(self, op, in_shapes, attrs, kinds=None):
        names = [f"i{k}" for k in range(len(in_shapes))]
        bufs = {n: (s, (kinds or ["input"] * len(names))[k]) for k, (n, s) in enumerate(zip(names, in_shapes))}
        bufs["o"] = (None, "activation")
        g = run(bufs, [("n", op, names, ["o"], attrs)], names[:1], ["o"])
        return g.buffers["o"].shape

    def test_conv2d(self):
        conv = {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1, 1, 1], "dilation": [1, 1], "groups": 1,
                "in_channels": 16, "out_channels": 32}
        self.assertEqual(self.one("conv2d", [(2, 16, 10, 12), (32, 16, 3, 3)], conv, ["input", "weight"]), (2, 32, 5, 6))
        dw = dict(conv, groups=16, out_channels=16)
        self.assertEqual(self.one("conv2d", [(2, 16, 10, 12), (16, 1, 3, 3)], dw, ["input", "weight"]), (2, 16, 5, 6))
        with self.assertRaises(ImportFailure) as cm:
            self.one("conv2d", [(2, 8, 10, 12), (32, 16, 3, 3)], conv, ["input", "weight"])
        self.assertIn("n (conv2d): shape mismatch: conv2d of [2, 8, 10, 12] and [32, 16, 3, 3]: ", cm.exception.line())

    def test_matmul_broadcasts_batch(self):
        self.assertEqual(self.one("matmul", [(2, 1, 5, 7), (3, 7, 4)], {}), (2, 3, 5, 4))
        self.assertEqual(self.one("matmul", [(7,), (3, 7, 4)], {}), (3, 4))
        self.assertEqual(self.one("matmul", [(3, 5, 7), (7,)], {}), (3, 5))
        with self.assertRaises(ImportFailure) as cm:
            self.one("matmul", [(5, 7), (6, 4)], {})
        self.assertIn("mat1 and mat2 shapes cannot be multiplied (5x7 and 6x4)", cm.exception.line())

    def test_linear(self):
        attrs = {"in_features": 8, "out_features": 5, "weight_layout": "out_in"}
        self.assertEqual(self.one("linear", [(2, 3, 8), (5, 8)], attrs, ["input", "weight"]), (2, 3, 5))
        with self.assertRaises(ImportFailure):
            self.one("linear", [(2, 3, 7), (5, 8)], attrs, ["input", "weight"])

    def test_pooling(self):
        mp = {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1, 1, 1], "dilation": [1, 1], "ceil_mode": False}
        self.assertEqual(self.one("max_pool2d", [(1, 64, 112, 112)], mp), (1, 64, 56, 56))
        ceil = dict(mp, padding=[0, 0, 0, 0], ceil_mode=True)
        self.assertEqual(self.one("max_pool2d", [(1, 8, 10, 10)], ceil), (1, 8, 5, 5))
        self.assertEqual(self.one("adaptive_avg_pool2d", [(1, 8, 7, 7)], {"output_size": [1, 1]}), (1, 8, 1, 1))

    def test_reductions_and_movement(self):
        self.assertEqual(self.one("mean", [(2, 3, 4, 5)], {"dims": [2, 3], "keepdim": False}), (2, 3))
        self.assertEqual(self.one("sum", [(2, 3, 4, 5)], {"dims": [1], "keepdim": True}), (2, 1, 4, 5))
        self.assertEqual(self.one("permute", [(2, 3, 4, 5)], {"dims": [0, 2, 3, 1]}), (2, 4, 5, 3))
        self.assertEqual(self.one("transpose", [(2, 3, 4)], {"dim0": 0, "dim1": 2}), (4, 3, 2))
        self.assertEqual(self.one("reshape", [(2, 3, 4)], {"shape": [6, 4]}), (6, 4))
        self.assertEqual(self.one("pad", [(2, 3)], {"pads": [[0, 1], [2, 3]], "mode": "constant", "value": 0}), (3, 8))
        self.assertEqual(self.one("expand", [(2, 1, 4)], {"shape": [5, 2, 3, 4]}), (5, 2, 3, 4))
        with self.assertRaises(ImportFailure) as cm:
            self.one("reshape", [(2, 3, 4)], {"shape": [5, 5]})
        self.assertIn("invalid for input of size 24", cm.exception.line())

    def test_cat_and_split(self):
        self.assertEqual(self.one("cat", [(2, 3, 4), (2, 5, 4)], {"dim": 1}), (2, 8, 4))
        with self.assertRaises(ImportFailure):
            self.one("cat", [(2, 3, 4), (3, 5, 4)], {"dim": 1})
        g = run({"x": ((2, 10), "input"), "a": (None, "activation"), "b": (None, "activation")},
                [("s", "split", ["x"], ["a", "b"], {"dim": 1, "sizes": [4, 6], "squeeze": False})], ["x"], ["a", "b"])
        self.assertEqual((g.buffers["a"].shape, g.buffers["b"].shape), ((2, 4), (2, 6)))

    def test_getitem(self):
        idx = [["slice", 0, 2, 1], ["int", 1], ["new"], ["slice", 1, 8, 3]]
        self.assertEqual(self.one("getitem", [(2, 4, 8)], {"index": idx}), (2, 1, 3))

    def test_traced_shapes_match_rules(self):
        # the FX frontend records meta shapes; stage 4 recomputes each and agrees
        import torch.nn as nn

        class M(nn.Module):
            def forward(self, x, y):
                return (x + y).softmax(-1).transpose(1, 2).reshape(2, -1)
        g = support.graph(M, (2, 3, 1, 4), (5, 1))
        self.assertEqual(g.buffers[g.outputs[0]].shape, (2, 60))


if __name__ == "__main__":
    unittest.main()
