"""test_import_eager.py - `fusetile import --as eager`: batch norm kept (with its statistics kernels), cuDNN's transposes around a convolution, each op its own kernel, a convolution's im2col and MatMul one kernel (op_kernels), and the default lowering unchanged."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch.nn as nn

import support
from fusetile.importer.errors import ImportFailure
from fusetile.importer.lower import Options


class ConvBnRelu(nn.Module):
    """conv 3x3 -> batch norm -> relu -> + input -> global average pool -> flatten (a view, free)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        y = self.relu(self.bn(self.conv(x)))
        return self.pool(y + x).flatten(1)


def lowered(as_):
    return support.problem(support.graph(ConvBnRelu, (2, 8, 6, 6)), as_=as_)


class Depthwise(nn.Module):
    """a depthwise 3x3 convolution of stride 2 (PyTorch's own kernel, no cuDNN transposes)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, 2, 1, groups=8, bias=False)

    def forward(self, x):
        return self.conv(x)


class TestEager(unittest.TestCase):
    def test_kernel_classes_have_kinds_of_their_own(self):
        d, _ = lowered("eager")
        # cuDNN's transposes are classes of their own (a target times them apart from the GEMM)
        self.assertEqual(d["op_kinds"][:5], ["nchw_to_nhwc", "conv2d", "nchw_to_nhwc", "conv2d", "nhwc_to_nchw"])

    def test_depthwise_is_one_kernel_without_transposes(self):
        d, _ = support.problem(support.graph(Depthwise, (2, 8, 6, 6)), as_="eager")
        self.assertEqual(d["op_names"], ["conv/window", "conv"])
        self.assertEqual(d["op_kinds"], ["conv2d", "depthwise_conv2d"])
        self.assertEqual(d["op_kernels"], [0, 0])

    def test_eager_keeps_batch_norm_and_groups_kernels(self):
        d, stats = lowered("eager")
        self.assertEqual(d["op_names"], ["conv/to_nhwc", "conv/im2col", "conv/weight_to_nhwc", "conv", "conv/to_nchw",
                                         "bn/copy", "bn/invstd", "bn", "relu", "add", "pool"])
        self.assertEqual(d["op_types"], ["Layout", "Layout", "Layout", "MatMul", "Layout",
                                         "Pointwise", "Pointwise", "Pointwise", "Pointwise", "Pointwise", "Layout"])
        # im2col and the MatMul share kernel 1 (implicit GEMM); cuDNN's transposes of the input, the
        # weight and the output, batch norm's three kernels, relu, add and the pool one each; the view is free
        self.assertEqual(d["op_kernels"], [0, 1, 2, 1, 3, 4, 5, 6, 7, 8, 9])
        self.assertEqual(stats["batch_norm kept as its own kernel (--as eager)"], 1)
        shape = lambda o: (d["heights"][d["outputs"][o][0]], d["widths"][d["outputs"][o][0]])  # noqa: E731
        # the transposes keep the shape (72 x 8 channels-last, 72 x 8 weights); batch norm's
        # statistics kernels run on its 8 channels; the transform reads the conv's output
        self.assertEqual([shape(o) for o in (0, 2, 4, 5, 6, 7)], [(72, 8), (72, 8), (72, 8), (1, 8), (1, 8), (72, 8)])
        self.assertEqual(d["inputs"][7], d["outputs"][4])
        self.assertEqual(d["inputs"][1], d["outputs"][0])   # im2col reads the transposed input

    def test_default_folds_batch_norm_and_has_no_kernels(self):
        d, stats = lowered("compiler")
        self.assertNotIn("op_kernels", d)
        self.assertEqual(d["op_kinds"], ["conv2d", "conv2d", "relu", "add", "adaptive_avg_pool2d"])
        self.assertEqual(stats["batch_norm folded into conv2d"], 1)

    def test_unknown_lowering(self):
        with self.assertRaises(ImportFailure) as e:
            Options(as_="inductor")
        self.assertIn("'inductor' is not one of compiler, eager", str(e.exception))

    def test_cli_writes_op_kernels_the_library_reads(self):
        fusetile = support.fusetile_binary()
        env = dict(os.environ, PYTHONPATH=os.path.join(support.SRCDIR, "python"))
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "m.py")
            with open(model, "w") as f:
                f.write("import torch.nn as nn\n"
                        "class M(nn.Module):\n"
                        "    input_shapes = [(1, 8, 6, 6)]\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.conv = nn.Conv2d(8, 8, 3, 1, 1, bias=False)\n"
                        "        self.bn = nn.BatchNorm2d(8)\n"
                        "    def forward(self, x):\n"
                        "        return self.bn(self.conv(x)).relu()\n")
            out = os.path.join(tmp, "p.json")
            r = subprocess.run([sys.executable, "-m", "fusetile.importer", model + ":M", "--as", "eager", "-o", out],
                               capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("8 kernels as PyTorch runs them", r.stderr)
            with open(out) as f:
                d = json.load(f)
            self.assertEqual(d["op_kernels"], [0, 1, 2, 1, 3, 4, 5, 6, 7])
            bad = subprocess.run([sys.executable, "-m", "fusetile.importer", model + ":M", "--as", "fused"],
                                 capture_output=True, text=True, env=env)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--as", bad.stderr)
            if fusetile:   # the library reads op_kernels and checks it
                r = subprocess.run([fusetile, "schedule", out, "--time-limit", "0.2", "-o", os.path.join(tmp, "s.json")],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                d["op_kernels"][1] = 17
                with open(out, "w") as f:
                    json.dump(d, f)
                r = subprocess.run([fusetile, "schedule", out, "--time-limit", "0.2"], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2)
                self.assertIn("op_kernels[1] is 17, out of range (0 to 8)", r.stderr)


if __name__ == "__main__":
    unittest.main()
