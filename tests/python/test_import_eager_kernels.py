"""test_import_eager_kernels.py - tools/eager_kernels.py: a profile's batch-norm and max-pool kernels matched to the layers' shapes in call order (a kernels file, tools' rows for `fusetile calibrate`), and a model whose kernel count differs from its layers' skipped with a line on stderr."""

import csv
import io
import os
import subprocess
import sys
import tempfile
import unittest

SRCDIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(SRCDIR, "tools", "eager_kernels.py")
BN = "void at::native::batch_norm_transform_input_kernel<c10::BFloat16>"
POOL = "void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::BFloat16, int>"


class TestEagerKernels(unittest.TestCase):
    def run_on(self, rows):
        with tempfile.TemporaryDirectory() as d:
            prof = os.path.join(d, "model_kernels.tsv")
            with open(prof, "w") as f:
                f.write("model\tbatch\tindex\tkernel_name\tus\n")
                for i, (b, name, us) in enumerate(rows):
                    f.write(f"resnet18\t{b}\t{i}\t{name}\t{us}\n")
            p = subprocess.run([sys.executable, SCRIPT, prof, "--models", "resnet18"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return list(csv.DictReader(io.StringIO(p.stdout), delimiter="\t")), p.stderr

    def test_shapes_in_call_order(self):
        # resnet18: 20 batch norms (the stem's first: 64 channels of 112 x 112) and one max pool
        rows, _ = self.run_on([(2, BN, 7.0 + i) for i in range(20)] + [(2, POOL, 5.2), (2, "Memset (Device)", 1.0)])
        self.assertEqual(len(rows), 21)
        first = rows[0]
        self.assertEqual((first["kind"], first["batch"], first["rows"], first["cols"], first["us"]),
                         ("batch_norm", "2", str(2 * 112 * 112), "64", "7.0"))
        pool = [r for r in rows if r["kind"] == "max_pool2d"][0]
        self.assertEqual((pool["rows"], pool["cols"], pool["out_rows"]), (str(2 * 112 * 112), "64", str(2 * 56 * 56)))
        self.assertEqual(rows[19]["cols"], "512")   # the last batch norm: layer4's 512 channels

    def test_count_mismatch_skipped(self):
        rows, err = self.run_on([(1, BN, 3.0)] * 3 + [(1, POOL, 5.2)])
        self.assertEqual([r["kind"] for r in rows], ["max_pool2d"])
        self.assertIn("resnet18 b1: 3 batch_norm kernels, 20 layers: skipped", err)


if __name__ == "__main__":
    unittest.main()
