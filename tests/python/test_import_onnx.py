"""test_import_onnx.py - the ONNX path: a PyTorch model exported to ONNX lowers to the same problem as its FX trace."""

import os
import tempfile
import unittest
import warnings

import support
import models
from fusetile.importer import source


def torchvision(name):
    return lambda: source.build_module(source.parse_model("torchvision:" + name))


class TestEquivalence(unittest.TestCase):
    """Same op count, same op types and the same tensor shapes, op by op (as multisets: the order may differ).

    The normalisations that make them equal: batch_norm after a convolution
    is folded by the lowering (FX) and by the exporter's constant folding
    (ONNX); ONNX's MatMul+Add, the erf and tanh GELU patterns and
    Sigmoid*x are folded back into linear, gelu and silu, Sqrt then Div(1, .) into rsqrt (canonical.onnx_idioms).
    """

    def same(self, factory, *shapes):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fx = support.graph(factory, *shapes, frontend="fx")
            ox = support.graph(factory, *shapes, frontend="onnx")
        self.assertEqual((fx.frontend, ox.frontend), ("fx", "onnx"))
        pf, _ = support.problem(fx)
        po, _ = support.problem(ox)
        self.assertEqual(len(pf["op_types"]), len(po["op_types"]))
        self.assertEqual(support.signature(pf), support.signature(po))
        return pf, po

    def test_resnet18(self):
        pf, po = self.same(torchvision("resnet18"), (1, 3, 224, 224))
        self.assertEqual(len(pf["op_types"]), 68)
        # the module paths survive the export: the ONNX node names carry them
        self.assertIn("layer1.0.conv1", po["op_names"])
        self.assertIn("layer1.0.conv1/im2col", po["op_names"])

    def test_transformer_encoder_layer(self):
        self.same(models.encoder_layer, (1, 64, 256))

    def test_bert_layer(self):
        self.same(models.BertLayer, (1, 128, 768))

    def test_gpt2_block(self):
        self.same(models.GPT2Block, (1, 128, 768))

    def test_llama_block(self):
        # a narrow, short copy: the same ops (RMSNorm, rotary embedding, grouped-query attention, SwiGLU) as the
        # 2048-wide, 2048-token default, exported in a second
        pf, _ = self.same(lambda: models.LlamaBlock(dim=256, n_heads=8, n_kv_heads=2, hidden=704, seq=64), (1, 64, 256))
        self.assertEqual(len(pf["op_types"]), 53)

    def test_shufflenet_through_onnx(self):
        self.same(torchvision("shufflenet_v2_x1_0"), (1, 3, 224, 224))


class Rsqrt(models.nn.Module):
    """torch.rsqrt: ONNX has no Rsqrt, the export writes Sqrt then Div(1, .)."""

    def forward(self, x):
        return x * models.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class TestIdioms(unittest.TestCase):
    def test_rsqrt(self):
        """Sqrt+Div(1, .) folds back into rsqrt: one node and one Pointwise, as in FX."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ox = support.graph(Rsqrt, (4, 16), frontend="onnx")
            fx = support.graph(Rsqrt, (4, 16), frontend="fx")
        self.assertEqual(ox.op_counts().get("rsqrt"), 1)
        self.assertNotIn("sqrt", ox.op_counts())
        self.assertNotIn("div", ox.op_counts())
        self.assertEqual([n.source.get("onnx_idiom") for n in ox.nodes if n.op == "rsqrt"], ["Sqrt+Div"])
        pf, po = support.problem(fx)[0], support.problem(ox)[0]
        self.assertEqual(support.signature(pf), support.signature(po))
        self.assertEqual(po["op_types"].count("Pointwise"), 4)   # pow, add, rsqrt, the product


class TestOnnxFile(unittest.TestCase):
    def test_file_with_initializers_and_input_shape(self):
        import torch
        m = models.MLP().eval()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(m, torch.zeros(256, 512), path, opset_version=13, input_names=["x"],
                                  dynamic_axes={"x": {0: "batch"}})
            rc, out, err = support.run_cli(path, "--input-shape", "64x512", "-o", os.path.join(d, "p.json"))
            self.assertEqual(rc, 0, err)
            self.assertIn("graph: 3 linear, 1 gelu, 1 relu (5 nodes, onnx)", err)
            d_ = support.load(os.path.join(d, "p.json"))
            self.assertEqual([(t, ins, out) for t, ins, out, _, _, _ in support.ops(d_)], [
                ("MatMul", [(64, 512), (512, 1024)], (64, 1024)), ("Pointwise", [(64, 1024)], (64, 1024)),
                ("MatMul", [(64, 1024), (1024, 1024)], (64, 1024)), ("Pointwise", [(64, 1024)], (64, 1024)),
                ("MatMul", [(64, 1024), (1024, 256)], (64, 256))])
            self.assertEqual(d_["op_names"][0], "fc1")
            # without --input-shape the dynamic batch cannot be resolved
            rc, out, err = support.run_cli(path)
            self.assertEqual(rc, 2)
            self.assertIn("input x has no static shape", err)


if __name__ == "__main__":
    unittest.main()
