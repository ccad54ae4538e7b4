"""test_import_api.py - fusetile.import_model from Python: in-memory modules (never changed), the Problem it returns, FallbackWarning, its errors (fusetile.Error), imported_for."""

import json
import os
import unittest
import warnings

from support import SRCDIR, run_cli  # noqa: F401 - support puts the package on sys.path

import torch
import torch.nn as nn
import torch.nn.functional as F

import fusetile
from fusetile.importer import ImportFailure, import_graph, to_problem

KPU = os.path.join(SRCDIR, "targets", "kpu.cfg")
NO_BINDING = "the binding's C extension fusetile._fusetile is not built (a Problem needs it)"
HAS_BINDING = getattr(fusetile, "_fusetile", None) is not None


class MLP(nn.Module):
    """Linear - GELU - Linear with a LayerNorm before it and a residual add."""

    def __init__(self, d=64, hidden=256):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class HandAttention(nn.Module):
    """Single-head softmax attention with separate q, k, v projections."""

    def __init__(self, d=32):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.scale = d ** -0.5

    def forward(self, x):
        a = torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) * self.scale, dim=-1)
        return self.o(a @ self.v(x))


class MHA(nn.Module):
    """nn.MultiheadAttention as self-attention, then a LayerNorm."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.attn(x, x, x, need_weights=False)[0])


class DataDependent(nn.Module):
    """Control flow on a value: torch.fx refuses it, the ONNX export keeps the branch the input takes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return torch.relu(y)
        return torch.sigmoid(y)


def _state(m):
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


@unittest.skipUnless(HAS_BINDING, NO_BINDING)
class TestImportModel(unittest.TestCase):
    """import_model(module, inputs) returns a Problem and leaves the module as it was."""

    def imported(self, module, *inputs, **kw):
        """Import module; check it still computes the same output with the same weights, device and mode."""
        torch.manual_seed(0)
        training = [m.training for m in module.modules()]
        with torch.no_grad():
            before = module(*inputs)
        state = _state(module)
        device = next(module.parameters()).device
        p = fusetile.import_model(module, inputs, **kw)
        self.assertIsInstance(p, fusetile.Problem)
        self.assertEqual([m.training for m in module.modules()], training)
        self.assertEqual(next(module.parameters()).device, device)
        after_state = module.state_dict()
        self.assertEqual(list(after_state), list(state))
        for k, v in state.items():
            self.assertTrue(torch.equal(after_state[k], v), k)
        with torch.no_grad():
            after = module(*inputs)
        self.assertTrue(torch.equal(before, after))
        return p

    def test_resnet18(self):
        import torchvision
        m = torchvision.models.resnet18().eval()
        p = self.imported(m, torch.randn(1, 3, 224, 224))
        info = p.info()
        self.assertEqual(info["nops"], 68)
        self.assertTrue(info["op_names"][0].startswith("conv1"))   # conv1/im2col: the layer's name
        self.assertEqual(info["op_kinds"][0], "conv2d")
        # the same problem as `fusetile import torchvision:resnet18`
        rc, out, err = run_cli("torchvision:resnet18", "-q")
        self.assertEqual(rc, 0, err)
        cli = json.loads(out)
        d = p.to_dict()
        for key in ("widths", "heights", "inputs", "outputs", "base_costs", "op_types", "op_names", "op_kinds"):
            self.assertEqual(d[key], cli[key], key)

    def test_mlp_layer_norm_gelu(self):
        m = MLP().eval()
        p = self.imported(m, torch.randn(8, 64))
        kinds = p.info()["op_kinds"]
        for k in ("layer_norm", "linear", "gelu", "add"):
            self.assertIn(k, kinds)

    def test_training_mode_kept(self):
        m = MLP()   # train mode: the import traces an eval copy
        self.imported(m, torch.randn(8, 64))
        self.assertTrue(m.training)

    def test_hand_written_attention(self):
        p = self.imported(HandAttention().eval(), torch.randn(1, 16, 32))
        kinds = p.info()["op_kinds"]
        self.assertIn("softmax", kinds)
        self.assertIn("matmul", kinds)
        self.assertEqual(kinds.count("linear"), 4)

    def test_multihead_attention(self):
        p = self.imported(MHA().eval(), torch.randn(1, 16, 32))
        kinds = p.info()["op_kinds"]
        self.assertIn("softmax", kinds)
        self.assertIn("layer_norm", kinds)

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_cuda_module_stays_on_its_device(self):
        self.imported(MLP().eval().cuda(), torch.randn(8, 64, device="cuda"))
        with self.assertWarns(fusetile.FallbackWarning):   # the ONNX export runs on the module's device
            self.imported(DataDependent().eval().cuda(), torch.ones(4, 16, device="cuda"))
        fusetile.import_model(DataDependent().eval().cuda(), ((4, 16),))

    def test_shapes_instead_of_tensors(self):
        a = fusetile.import_model(MLP().eval(), ((8, 64),)).to_dict()
        b = fusetile.import_model(MLP().eval(), (torch.randn(8, 64),)).to_dict()
        self.assertEqual(a["widths"], b["widths"])
        self.assertEqual(a["op_types"], b["op_types"])

    def test_path(self):
        p = fusetile.import_model(os.path.join(SRCDIR, "tests", "python", "models.py") + ":mlp")
        self.assertEqual(p.info()["op_kinds"], ["linear", "relu", "linear", "gelu", "linear"])

    def test_target(self):
        p = fusetile.import_model(MLP().eval(), (torch.randn(8, 64),), target=KPU)
        self.assertEqual(p.info()["capacity"], fusetile.load_target(KPU).info()["capacity_bytes"] // 2)

    def test_fallback_warns(self):
        m = DataDependent().train()
        m.fc.eval()   # mixed modes, kept as they are (the ONNX export runs the module itself in eval mode)
        with self.assertWarns(fusetile.FallbackWarning) as cm:
            p = self.imported(m, torch.ones(4, 16))
        self.assertIn("data-dependent control flow", str(cm.warning))
        self.assertIn("only the branch those inputs take is kept", str(cm.warning))
        self.assertEqual(cm.filename, __file__)   # the caller's line, not the importer's
        self.assertTrue(issubclass(fusetile.FallbackWarning, UserWarning))
        self.assertTrue(issubclass(fusetile.FallbackWarning, fusetile.FusetileWarning))
        self.assertEqual(len(p.info()["op_kinds"]), 2)

    def test_onnx_frontend_warns_of_one_branch(self):
        with self.assertWarns(fusetile.FallbackWarning) as cm:
            self.imported(DataDependent().eval(), torch.ones(4, 16), frontend="onnx")
        self.assertIn("kept one branch of data-dependent control flow", str(cm.warning))
        with warnings.catch_warnings():
            warnings.simplefilter("error", fusetile.FallbackWarning)
            fusetile.import_model(MLP().eval(), (torch.randn(8, 64),), frontend="onnx")

    def test_no_warning_without_fallback(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fusetile.import_model(MLP().eval(), (torch.randn(8, 64),))

    def test_errors_are_fusetile_errors(self):
        self.assertTrue(issubclass(ImportFailure, fusetile.Error))
        with self.assertRaises(fusetile.Error) as cm:
            fusetile.import_model(MLP().eval(), (torch.randn(8, 63),))
        self.assertIn("shape mismatch", str(cm.exception))
        self.assertEqual(cm.exception.code, 2)
        with self.assertRaises(fusetile.Error):
            fusetile.import_model("torchvision:no_such_model")
        with self.assertRaises(fusetile.Error):
            fusetile.import_model(MLP(), (torch.randn(8, 64),), dtype="fp8")
        with self.assertRaises(fusetile.Error):
            fusetile.import_model(MLP(), (torch.randn(8, 64), torch.randn(8, 64)))   # one input too many
        with self.assertRaises(fusetile.Error):
            fusetile.import_model(MLP(), ("8x64",))
        with self.assertRaises(TypeError):
            fusetile.import_model(3, (torch.randn(8, 64),))
        with self.assertRaises(TypeError):
            fusetile.import_model(MLP(), "8x64")
        with self.assertRaises(TypeError):
            fusetile.import_model(MLP(), (torch.randn(8, 64),), target=3)


class TestImportGraph(unittest.TestCase):
    """import_graph takes a module too; a single leaf module is the whole model."""

    def test_leaf_modules(self):
        for module, shape, op in [(nn.Linear(4, 4), (2, 4), "linear"), (nn.Conv2d(3, 8, 3), (1, 3, 16, 16), "conv2d"),
                                  (nn.LayerNorm(8), (2, 8), "layer_norm"), (nn.BatchNorm2d(3), (1, 3, 4, 4), "batch_norm")]:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                g = import_graph(module, [shape])
            self.assertEqual([n.op for n in g.nodes], [op])
            self.assertEqual(g.frontend, "fx")

    def test_module_not_moved(self):
        m = nn.Linear(4, 4)
        w = m.weight.detach().clone()
        import_graph(m, [(2, 4)])
        self.assertFalse(m.weight.is_meta)
        self.assertTrue(torch.equal(m.weight, w))

    def test_bad_model(self):
        with self.assertRaises(TypeError):
            import_graph(object(), [(2, 4)])
        with self.assertRaises(fusetile.Error):
            import_graph(nn.Linear(4, 4), None)

    def test_module_that_cannot_be_copied(self):
        class NoCopy(nn.Linear):
            def __deepcopy__(self, memo):
                raise RuntimeError("no copies")

        with self.assertRaises(fusetile.Error) as cm:
            import_graph(NoCopy(4, 4), [(2, 4)], frontend="fx")
        self.assertIn("cannot copy the module", str(cm.exception))


@unittest.skipUnless(HAS_BINDING, NO_BINDING)
class TestImportedFor(unittest.TestCase):
    """A problem imported for a target names it: "imported_for": {"target": NAME, "file": PATH}."""

    def test_to_problem(self):
        g = import_graph(MLP().eval(), [(8, 64)])
        d, _ = to_problem(g, target=KPU)
        self.assertEqual(d["imported_for"], {"target": "kpu", "file": KPU})
        d, _ = to_problem(g)
        self.assertNotIn("imported_for", d)

    def test_cli(self):
        model = os.path.join(SRCDIR, "tests", "python", "models.py") + ":mlp"
        rc, out, err = run_cli(model, "--target", KPU, "-q")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["imported_for"], {"target": "kpu", "file": KPU})
        rc, out, err = run_cli(model, "-q")
        self.assertNotIn("imported_for", json.loads(out))
        # the C library reads such a problem
        fusetile.problem_from_json(out.replace("{", '{"imported_for": {"target": "kpu", "file": "x"},', 1))


if __name__ == "__main__":
    unittest.main()
