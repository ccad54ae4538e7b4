"""test_measure_gpu.py - tools/measure_gpu.py: without a CUDA GPU one line and exit status 2; --device cpu --quick writes the five TSV files in the measured-hardware formats; problem files checked."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(SRCDIR, "tools", "measure_gpu.py")

# The header lines of the H100 measurements (targets/measured/h100/*.tsv),
# copied here so that the test needs only this project.
HEADERS = {
    "env.tsv": "key\tvalue",
    "gemm.tsv": "M\tN\tK\tus_stream\tus_graph\tus_sync\ttflops_stream",
    "pointwise.tsv": "op\tninputs\telements\tus_stream\tus_graph\tgbps_stream",
    "graph_ops.tsv": "problem\top\ttype\tout_w\tout_h\tK\tninputs\tus_stream\tus_graph",
    "graphs.tsv": "problem\tops\tus_eager_stream\tus_cudagraph\tus_compiled\tus_compiled_graph\tcompile_s"
                  "\tsum_op_graph_us",
}
# Columns that are not numbers; every other column parses as a float, or is
# "-" where the CPU test mode measures nothing (CUDA graphs, torch.compile).
TEXT_COLUMNS = {"op", "problem", "type", "key", "value"}
CPU_MISSING = {"us_graph", "us_cudagraph", "us_compiled", "us_compiled_graph", "compile_s", "sum_op_graph_us"}

# A small problem with every op kind: a MatMul, a 3-input Pointwise (two
# adds), a same-shape Layout (a copy), a reshaping Layout (a gather), a
# 1-input Pointwise (relu); its ops are listed out of dependency order.
MIXED = {
    "widths": [32, 16, 16, 16, 16, 16, 8, 8],
    "heights": [8, 32, 8, 8, 8, 8, 32, 32],
    "op_types": ["Pointwise", "MatMul", "Pointwise", "Layout", "Layout"],
    "inputs": [[6], [0, 1], [2, 3, 2], [4], [5]],
    "outputs": [[7], [2], [4], [5], [6]],
    "base_costs": [1, 1, 1, 1, 1],
    "fast_memory_capacity": 100000,
    "slow_memory_bandwidth": 10,
    "native_granularity": [8, 8],
}


def load_script():
    spec = importlib.util.spec_from_file_location("measure_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def have_torch():
    try:
        __import__("torch")
    except Exception:   # noqa: BLE001
        return False
    return True


def run_script(*argv, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True, env=e, timeout=300)
    return r.returncode, r.stdout, r.stderr


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[-1] == "", f"{path}: does not end with a newline"
    return lines[0], [line.split("\t") for line in lines[1:-1]]


class NoGpu(unittest.TestCase):
    """Without CUDA (hidden with CUDA_VISIBLE_DEVICES, or no torch at all): one line, exit status 2, no files."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def one_line(self, rc, out, err):
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertFalse(os.path.exists(self.out), "wrote something")
        return lines[0]

    def test_no_cuda_gpu(self):
        line = self.one_line(*run_script("-o", self.out, env={"CUDA_VISIBLE_DEVICES": ""}))
        self.assertRegex(line, r"^measure_gpu\.py: no CUDA GPU found \(torch .*\); nothing measured$")

    def test_no_torch(self):
        shim = os.path.join(self.tmp.name, "shim", "torch")
        os.makedirs(shim)
        with open(os.path.join(shim, "__init__.py"), "w") as f:
            f.write("raise ImportError(\"No module named 'torch' (test shim)\")\n")
        line = self.one_line(*run_script("-o", self.out, env={"PYTHONPATH": os.path.dirname(shim)}))
        self.assertEqual(line, "measure_gpu.py: no CUDA GPU found (torch not importable: "
                               "No module named 'torch' (test shim)); nothing measured")

    def test_bad_arguments(self):
        for argv in (["--sets", "gemm,bogus"], ["--reps", "0"], ["--gemm-sizes", "128,x"], ["--device", "tpu"]):
            rc, out, err = run_script("-o", self.out, *argv)
            self.assertEqual(rc, 2, argv)
            self.assertIn("measure_gpu.py: error: argument", err, argv)
            self.assertFalse(os.path.exists(self.out))

    def test_help(self):
        rc, out, err = run_script("--help")
        self.assertEqual(rc, 0, err)
        for word in ("--device", "--problems", "--quick", "--sets", "Exit status"):
            self.assertIn(word, out)


class Problems(unittest.TestCase):
    """Problem files: read, checked, ordered; errors name the file and the field."""

    @classmethod
    def setUpClass(cls):
        cls.m = load_script()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def fails(self, doc, want):
        path = self.write("p.json", doc)
        with self.assertRaises(self.m.UsageError) as cm:
            self.m.load_problem(path)
        self.assertEqual(str(cm.exception), f"{path}: {want}")

    def test_order_and_names(self):
        pr = self.m.load_problem(self.write("mixed.problem.json", MIXED))
        self.assertEqual(pr.name, "mixed")
        self.assertEqual(pr.order, [1, 2, 3, 4, 0])
        self.assertEqual([pr.op_k(o) for o in range(5)], [0, 32, 0, 0, 0])
        names = [p.name for p in self.m.find_problems([os.path.join(SRCDIR, "benchmarks")])]
        self.assertIn("example_problem", names)
        self.assertEqual(names, sorted(names))

    def test_errors(self):
        self.fails("{\"widths\": [1,", "not JSON: Expecting value: line 1 column 15 (char 14)")
        self.fails({k: v for k, v in MIXED.items() if k != "heights"}, "missing field 'heights'")
        self.fails(dict(MIXED, widths=[32, 16, 16, 16, 16, 16, 8, 0]), "widths[7]: must be positive, got 0")
        self.fails(dict(MIXED, op_types=["Pointwise", "MatMul", "Pointwise", "Layout", "Conv"]),
                   "op_types[4]: unknown op type \"Conv\" (expected MatMul, Pointwise, Layout)")
        self.fails(dict(MIXED, inputs=[[6], [1, 0], [2, 3, 2], [4], [5]]),
                   "inputs[1]: MatMul op 1: L 32x16 @ R 8x32 does not give 8x16")
        self.fails(dict(MIXED, inputs=[[6], [0, 1], [2, 3, 2], [4], [5, 4]]),
                   "inputs[4]: Layout op 4 has 2 inputs, needs exactly 1 [X]")
        self.fails(dict(MIXED, inputs=[[6], [0, 1], [2, 3, 9], [4], [5]]),
                   "inputs[2][2]: tensor 9 out of range (0..7)")
        self.fails(dict(MIXED, outputs=[[7], [2], [4], [5], [2]]),
                   "outputs[4]: tensor 2 is also produced by op 1")
        self.fails(dict(MIXED, inputs=[[6], [0, 1], [2, 5, 2], [4], [5]]),
                   "inputs[2]: op 2 is on a cycle (2 -> 3 -> 2)")

    def test_bad_file_exits_2(self):
        if not have_torch():
            self.skipTest("no torch")
        path = self.write("bad.json", dict(MIXED, outputs=[[7], [2], [4], [5]]))
        out = os.path.join(self.tmp.name, "out")
        rc, _, err = run_script("--device", "cpu", "--sets", "graphs", "--problems", path, "-o", out)
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.splitlines(), [f"measure_gpu.py: {path}: outputs has 4 entries, op_types 5"])
        self.assertFalse(os.path.exists(out))

    def test_problem_function(self):
        if not have_torch():
            self.skipTest("no torch")
        import torch
        m = self.m
        args = m.parse_args(["--device", "cpu", "--quick"])
        dev = m.Device(torch, "cpu", args)
        pr = m.load_problem(self.write("mixed.json", MIXED))
        run, xs = m.problem_function(dev, pr)
        self.assertEqual([tuple(x.shape) for x in xs], [(8, 32), (32, 16), (8, 16)])
        (out,) = run(*xs)
        t2 = xs[0] @ xs[1]
        t4 = t2 + xs[2] + t2
        t6 = t4[torch.arange(32) // 4][:, torch.arange(8) * 2]
        self.assertTrue(torch.allclose(out, torch.relu(t6)))


@unittest.skipUnless(have_torch(), "no torch: --device cpu needs it")
class CpuQuick(unittest.TestCase):
    """--device cpu --quick: the five files, their headers, their cells, the problems' ops."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        probs = os.path.join(cls.tmp.name, "problems")
        os.makedirs(probs)
        shutil.copy(os.path.join(SRCDIR, "benchmarks", "example_problem.json"), probs)
        with open(os.path.join(probs, "mixed.json"), "w") as f:
            json.dump(MIXED, f)
        cls.problems = {}
        for name in os.listdir(probs):
            with open(os.path.join(probs, name)) as f:
                cls.problems[name[:-5]] = json.load(f)
        cls.out = os.path.join(cls.tmp.name, "out")
        cls.rc, cls.stdout, cls.stderr = run_script(
            "--device", "cpu", "--quick", "--reps", "1", "--warmup", "1", "--target-ms", "0.05",
            "--gemm-sizes", "16,32", "--pointwise-sizes", "2^10,4096", "--problems", probs, "-o", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, name):
        header, rows = read_tsv(os.path.join(self.out, name))
        self.assertEqual(header, HEADERS[name])
        cols = header.split("\t")
        for i, row in enumerate(rows, 2):
            self.assertEqual(len(row), len(cols), f"{name}:{i}: {row}")
            for col, cell in zip(cols, row):
                if col in TEXT_COLUMNS:
                    continue
                if col in CPU_MISSING:
                    self.assertEqual(cell, "-", f"{name}:{i}: {col}")
                else:
                    self.assertGreaterEqual(float(cell), 0.0, f"{name}:{i}: {col}")
        return [dict(zip(cols, row)) for row in rows]

    def test_ran(self):
        self.assertEqual(self.rc, 0, self.stderr)
        self.assertEqual(self.stdout, "")
        self.assertEqual(sorted(os.listdir(self.out)), sorted(HEADERS), "stray or missing files")
        self.assertIn("measure_gpu.py: gemm 8/8: M=32 N=32 K=32", self.stderr)
        self.assertIn("measure_gpu.py: wrote ", self.stderr)

    def test_env(self):
        env = {r["key"]: r["value"] for r in self.table("env.tsv")}
        self.assertEqual(env["device"], "cpu")
        self.assertEqual(env["dtype"], "float32")
        self.assertIn("test mode", env["note"])
        for key in ("gpu", "torch", "date", "python", "settings", "command"):
            self.assertTrue(env[key], key)

    def test_gemm(self):
        rows = self.table("gemm.tsv")
        self.assertEqual([(r["M"], r["N"], r["K"]) for r in rows],
                         [(m, n, k) for m in ("16", "32") for n in ("16", "32") for k in ("16", "32")])

    def test_pointwise(self):
        rows = self.table("pointwise.tsv")
        want = [(op, str(n), str(e)) for e in (1024, 4096)
                for op, n in (("relu", 1), ("gelu", 1), ("add", 2), ("add3", 3), ("copy", 1))]
        self.assertEqual([(r["op"], r["ninputs"], r["elements"]) for r in rows], want)

    def test_graph_ops(self):
        rows = self.table("graph_ops.tsv")
        seen = {}
        for r in rows:
            p = self.problems.get(r["problem"])
            self.assertIsNotNone(p, f"no problem {r['problem']}")
            o = int(r["op"])
            self.assertTrue(0 <= o < len(p["op_types"]), r)
            out = p["outputs"][o][0]
            ins = p["inputs"][o]
            k = p["widths"][ins[0]] if p["op_types"][o] == "MatMul" else 0
            self.assertEqual((r["type"], int(r["out_w"]), int(r["out_h"]), int(r["K"]), int(r["ninputs"])),
                             (p["op_types"][o], p["widths"][out], p["heights"][out], k, len(ins)))
            seen.setdefault(r["problem"], []).append(o)
        self.assertEqual(seen, {name: list(range(len(p["op_types"]))) for name, p in self.problems.items()})

    def test_graphs(self):
        rows = self.table("graphs.tsv")
        self.assertEqual({(r["problem"], int(r["ops"])) for r in rows},
                         {(name, len(p["op_types"])) for name, p in self.problems.items()})


class WriteTsv(unittest.TestCase):
    """A file is replaced whole or not at all."""

    def test_atomic(self):
        m = load_script()
        with tempfile.TemporaryDirectory() as d:
            m.write_tsv(d, "gemm", [(1, 2, 3, "4.000", "-", "5.0", "0.0")])
            with self.assertRaises(TypeError):
                m.write_tsv(d, "gemm", [BadRow()])
            self.assertEqual(os.listdir(d), ["gemm.tsv"])
            header, rows = read_tsv(os.path.join(d, "gemm.tsv"))
            self.assertEqual(header, HEADERS["gemm.tsv"])
            self.assertEqual(rows, [["1", "2", "3", "4.000", "-", "5.0", "0.0"]])


class BadRow:
    """A row whose cells cannot be listed: write_tsv fails half way."""

    def __iter__(self):
        raise TypeError("bad row")


if __name__ == "__main__":
    unittest.main()
