"""test_import_errors.py - every error: one line naming the node (or option, or file), a hint, exit status 2; nothing half-written."""

import os
import tempfile
import unittest
import warnings

import support
from support import run_cli
from fusetile.importer.errors import ImportFailure

MODELS = os.path.join(support.HERE, "models.py")


def onnx_file(path, nodes, inputs, outputs, inits=()):
    """Write an ONNX model of Relu/Add nodes given as (name, op, inputs, outputs)."""
    from onnx import TensorProto, helper
    made = [helper.make_node(op, ins, outs, name=name) for name, op, ins, outs in nodes]
    g = helper.make_graph(made, "g", [helper.make_tensor_value_info(i, TensorProto.FLOAT, [2, 3]) for i in inputs],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, 3]) for o in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


class CliCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def fails(self, *argv, want):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rc, out, err = run_cli(*argv)
        self.assertEqual(rc, 2, err)
        lines = err.strip().splitlines()
        self.assertTrue(lines, "no message")
        last = lines[-1]
        self.assertTrue(last.startswith("fusetile import: "), last)
        self.assertIn(want, last)
        self.assertIn("(hint: ", last)
        self.assertEqual(out, "")
        return last


class TestErrors(CliCase):
    def test_unsupported_op_names_the_fx_node(self):
        last = self.fails(f"{MODELS}:unsupported", "--frontend", "fx", want="cumsum (torch.cumsum): unsupported op")
        self.assertIn("docs/MODEL_GRAPH.md", last)

    def test_unsupported_op_after_the_onnx_fallback(self):
        last = self.fails(f"{MODELS}:unsupported", want="cumsum (torch.cumsum): unsupported op")
        self.assertIn("the ONNX fallback failed too: /model/CumSum (onnx.CumSum): unsupported op", last)

    def test_shape_mismatch_names_the_node_and_shapes(self):
        last = self.fails(f"{MODELS}:mismatch", want="add (operator.add): shape mismatch: operands [4, 8] and [4, 16]")
        self.assertIn("hint: check --input-shape", last)

    def test_wrong_input_shape_for_the_model(self):
        self.fails("torchvision:resnet18", "--input-shape", "1x4x64x64",
                   want="conv1 (nn.Conv2d): shape mismatch: operands [1, 4, 64, 64]")

    def test_input_shape_count(self):
        self.fails("torchvision:resnet18", "--input-shape", "1x3x64x64", "--input-shape", "1x3x64x64",
                   want="--input-shape: 2 input shapes for a model whose forward takes 1 input (x)")

    def test_bad_input_shape(self):
        for bad in ("1x3xfoo", "0x3", "", "1,3", "x"):
            with self.subTest(shape=bad):
                self.fails("torchvision:resnet18", "--input-shape", bad, want=f"--input-shape: '{bad}' is not a shape")

    def test_cycle(self):
        path = os.path.join(self.dir, "cycle.onnx")
        onnx_file(path, [("a", "Relu", ["b_out"], ["a_out"]), ("b", "Add", ["X", "a_out"], ["b_out"])], ["X"], ["b_out"])
        self.fails(path, want="cycle:")

    def test_missing_producer(self):
        path = os.path.join(self.dir, "missing.onnx")
        onnx_file(path, [("a", "Relu", ["X"], ["a_out"]), ("b", "Add", ["a_out", "ghost"], ["b_out"])], ["X"], ["b_out"])
        self.fails(path, want="b (onnx.Add): missing producer: input ghost")

    def test_missing_producer_in_a_model_graph(self):
        g = support.hand_graph({"x": ((2, 3), "input"), "y": ((2, 3), "activation")},
                               [("r", "relu", ["ghost"], ["y"], {})], ["x"], ["y"])
        with self.assertRaises(ImportFailure) as cm:
            support.validate.toposort(g)
        self.assertIn("r (relu): missing producer: operand ghost", cm.exception.line())

    def test_model_graph_over_the_byte_limit(self):
        from fusetile.importer.limits import MAX_GRAPH_BYTES
        path = os.path.join(self.dir, "big.json")
        with open(path, "wb") as f:
            f.truncate(MAX_GRAPH_BYTES + 1)   # sparse: refused before it is read
        self.fails(path, "--graph-only", "-o", os.path.join(self.dir, "g.json"),
                   want=f"big.json: {MAX_GRAPH_BYTES + 1} bytes, the limit is {MAX_GRAPH_BYTES} (FT_MAX_GRAPH_BYTES)")
        self.assertEqual(os.listdir(self.dir), ["big.json"])

    def test_graph_limit_matches_the_header(self):
        import re
        from fusetile.importer.limits import MAX_GRAPH_BYTES
        with open(os.path.join(support.SRCDIR, "include", "fusetile", "limits.h")) as f:
            m = re.search(r"^#define FT_MAX_GRAPH_BYTES \(\(long long\)(\d+) << (\d+)\)", f.read(), re.M)
        self.assertIsNotNone(m, "FT_MAX_GRAPH_BYTES not found in include/fusetile/limits.h")
        self.assertEqual(MAX_GRAPH_BYTES, int(m.group(1)) << int(m.group(2)))

    def test_unreadable_files(self):
        self.fails(os.path.join(self.dir, "nope.onnx"), want="nope.onnx: cannot read: No such file")
        self.fails(os.path.join(self.dir, "nope.py") + ":f", want="nope.py: cannot read")
        garbage = os.path.join(self.dir, "garbage.onnx")
        with open(garbage, "wb") as f:
            f.write(b"\x00\x01 not a protobuf at all \xff" * 10)
        self.fails(garbage, want="garbage.onnx: not an ONNX model")
        self.fails(f"{MODELS}:no_such_callable", want="defines no callable 'no_such_callable'")

    def test_unknown_model_and_usage(self):
        self.fails("torchvision:resnet_nope", want="unknown torchvision model 'resnet_nope'")
        self.fails("model.h5", want="model.h5: unknown kind of model")
        self.fails(want="needs MODEL")
        self.fails("torchvision:resnet18", "--dtype", "fp8", want="--dtype")
        self.fails("torchvision:resnet18", "--bogus", want="unrecognized arguments: --bogus")
        last = self.fails("torchvision:resnet18", "--target", os.path.join(self.dir, "t.cfg"),
                          want="t.cfg: cannot open: No such file")
        self.assertIn("check the --target path", last)

    def test_bad_target(self):
        cfg = os.path.join(self.dir, "t.cfg")
        with open(cfg, "w") as f:
            f.write('name = "t";\ncontest = false;\nclock_hz = 1e9;\nelement_bytes = "two";\n')
        self.fails("torchvision:resnet18", "--target", cfg, want="t.cfg:4: element_bytes must be an integer")
        with open(cfg, "w") as f:   # the C library's reader: unknown names are errors
            f.write('name = "t";\ncontest = false;\ncontst = true;\n')
        self.fails("torchvision:resnet18", "--target", cfg, want="t.cfg:3: unknown setting contst (did you mean contest?)")

    def test_target_without_the_binding(self):
        """Without the binding's C extension, --target stops with one line naming it; without --target the
        importer still works."""
        import shutil
        import subprocess
        import sys
        pkg = os.path.join(self.dir, "fusetile")
        shutil.copytree(os.path.join(support.SRCDIR, "python", "fusetile"), pkg,
                        ignore=shutil.ignore_patterns("*.so", "*.o", "*.d", "*.c", "*.h", "__pycache__"))
        env = dict(os.environ, PYTHONPATH=self.dir)
        out = os.path.join(self.dir, "p.json")
        cfg = os.path.join(support.SRCDIR, "targets", "kpu.cfg")
        r = subprocess.run([sys.executable, "-m", "fusetile.importer", f"{MODELS}:mlp", "--target", cfg, "-o", out],
                           env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertRegex(r.stderr, r"^fusetile import: --target: needs the Python binding's C extension "
                                   r"fusetile\._fusetile, which .* cannot import from .*\(hint: make builds it")
        self.assertFalse(os.path.exists(out))
        r = subprocess.run([sys.executable, "-m", "fusetile.importer", f"{MODELS}:mlp", "-q", "-o", out],
                           env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertTrue(os.path.exists(out))

    def test_unwritable_output(self):
        self.fails("torchvision:resnet18", "-o", os.path.join(self.dir, "nodir", "p.json"),
                   want="cannot write: no such directory")


class TestAtomicOutput(CliCase):
    def test_failure_leaves_the_old_file_and_no_temporary(self):
        out = os.path.join(self.dir, "p.json")
        with open(out, "w") as f:
            f.write("old")
        self.fails(f"{MODELS}:mismatch", "-o", out, want="shape mismatch")
        with open(out) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(self.dir), ["p.json"])

    def test_success_replaces_the_file(self):
        out = os.path.join(self.dir, "p.json")
        with open(out, "w") as f:
            f.write("old")
        rc, _, err = run_cli(f"{MODELS}:mlp", "-o", out, "-q")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(support.load(out)["op_types"], ["MatMul", "Pointwise", "MatMul", "Pointwise", "MatMul"])
        self.assertEqual(os.listdir(self.dir), ["p.json"])


class TestFallback(unittest.TestCase):
    def test_data_dependent_control_flow_goes_through_onnx(self):
        import models
        notes = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = support.graph(models.DataDependent, (8, 64), frontend="auto", log=notes.append)
        self.assertEqual(g.frontend, "onnx")
        self.assertEqual(len(notes), 1)
        self.assertIn("data-dependent control flow", notes[0])
        self.assertIn("importing through an ONNX export instead", notes[0])
        with self.assertRaises(ImportFailure) as cm:
            support.graph(models.DataDependent, (8, 64), frontend="fx")
        self.assertIn("torch.fx cannot trace the model", cm.exception.line())

    def test_built_module_is_the_same_every_run(self):
        # a model the importer builds (FILE.py:CALLABLE) has the same weights
        # every time, so the branch the export keeps does not change between
        # runs; the caller's generator is left as it was
        import torch
        from fusetile.importer import source
        src = source.parse_model(f"{MODELS}:data_dependent")
        torch.manual_seed(123)
        expected = torch.rand(1)
        torch.manual_seed(123)
        a = source.build_module(src).state_dict()
        b = source.build_module(src).state_dict()
        self.assertTrue(all(torch.equal(a[k], b[k]) for k in a))
        self.assertTrue(torch.equal(torch.rand(1), expected))

    def test_onnx_frontend_notes_the_branch_kept(self):
        rc, _, err = run_cli(f"{MODELS}:data_dependent", "--frontend", "onnx")
        self.assertEqual(rc, 0, err)
        self.assertIn("note: " + MODELS + ":data_dependent: the ONNX export kept one branch of data-dependent "
                      "control flow, the one the example inputs take (Converting a tensor to a Python boolean", err)
        rc, _, err = run_cli(f"{MODELS}:mlp", "--frontend", "onnx")
        self.assertNotIn("kept one branch", err)


if __name__ == "__main__":
    unittest.main()
