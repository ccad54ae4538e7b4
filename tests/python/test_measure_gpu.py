"""test_measure_gpu.py - tools/measure_gpu.py: without a CUDA GPU one line and exit status 2; --device cpu --quick writes the five TSV files in the measured-hardware formats, and the five extra sets theirs; problem files checked; --budget-s and SIGTERM cut a run short keeping what was measured."""

import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

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
# The extra sets' files: models.tsv and energy.tsv as in the H100 files.
EXTRA_HEADERS = {
    "env.tsv": "key\tvalue",
    "odd_gemm.tsv": "M\tN\tK\tsource\tus_stream\tus_graph\tus_sync\ttflops_graph",
    "models.tsv": "model\tbatch\tus_eager\tus_cudagraph\tus_compiled\tcompile_s\tparams",
    "conv.tsv": "model\tlayer\tuses\tbatch\tin_ch\tout_ch\tkh\tkw\tstride\tpad\tdilation\tgroups\tbias\tin_h"
                "\tin_w\tout_h\tout_w\tus_stream\tus_graph",
    "energy.tsv": "kind\tM_or_op\tN_or_elements\tK\tus_per_op\tJ_per_op\tavg_W\tJ_per_op_above_idle\tidle_W",
    "model_kernels.tsv": "model\tbatch\tindex\tkernel_name\tus",
}
# Columns that are not numbers; every other column parses as a float, or is
# "-" where the CPU test mode measures nothing (CUDA graphs, torch.compile,
# energy).
TEXT_COLUMNS = {"op", "problem", "type", "key", "value", "source", "model", "layer", "kernel_name", "kind",
                "M_or_op"}
CPU_MISSING = {"us_graph", "us_cudagraph", "us_compiled", "us_compiled_graph", "compile_s", "sum_op_graph_us",
               "tflops_graph", "J_per_op", "avg_W", "J_per_op_above_idle", "idle_W"}

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


def check_table(test, out, name, header_want, text_filled):
    """Check out/name in the CPU test mode's form: its header is header_want,
    every row has a cell per column, a measured column holds "-" where the CPU
    measures nothing (CPU_MISSING) and a number >= 0 elsewhere; with
    text_filled, a text column is non-empty with no outer blanks.  Returns the
    rows as dicts by column."""
    header, rows = read_tsv(os.path.join(out, name))
    test.assertEqual(header, header_want)
    cols = header.split("\t")
    for i, row in enumerate(rows, 2):
        test.assertEqual(len(row), len(cols), f"{name}:{i}: {row}")
        for col, cell in zip(cols, row):
            if col in TEXT_COLUMNS:
                if text_filled:
                    test.assertTrue(cell and cell.strip() == cell, f"{name}:{i}: {col}")
            elif col in CPU_MISSING:
                test.assertEqual(cell, "-", f"{name}:{i}: {col}")
            else:
                test.assertGreaterEqual(float(cell), 0.0, f"{name}:{i}: {col}")
    return [dict(zip(cols, row)) for row in rows]


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

    def test_bad_extra_arguments(self):
        """The extra sets' options, parsed in this process: exit status 2, the last line says which."""
        m = load_script()
        for argv in (["--sets", "odd_gemm,bogus"], ["--odd-gemm-count", "0"], ["--odd-gemm-range", "16,20"],
                     ["--odd-gemm-range", "4,64"], ["--odd-gemm-max-flop", "-1"], ["--model-batches", "1,x"],
                     ["--conv-batches", "0"], ["--models", "resnet18,res net"], ["--energy-gemms", "64x64"],
                     ["--energy-ops", "copy,tanh"], ["--energy-seconds", "0"], ["--budget-s", "-1"],
                     ["--image-size", "0"], ["--seed", "-1"], ["--checkpoint-s", "inf"]):
            err = io.StringIO()
            with self.assertRaises(SystemExit) as cm, contextlib.redirect_stderr(err):
                m.parse_args(argv)
            self.assertEqual(cm.exception.code, 2, argv)
            self.assertRegex(err.getvalue().splitlines()[-1], f"^measure_gpu\\.py: error: argument {argv[0]}: ")

    def test_unknown_inputs(self):
        """A model torchvision lacks, a missing problem file: one line, exit status 2, nothing written."""
        if not have_torch():
            self.skipTest("no torch")
        try:
            __import__("torchvision")
        except Exception:   # noqa: BLE001
            self.skipTest("no torchvision")
        m = load_script()
        for argv, want in ((["--sets", "models", "--models", "resnet18,bogus"],
                            r"^measure_gpu\.py: --models: torchvision \S+ has no model 'bogus'$"),
                           (["--sets", "env,conv", "--conv-models", "nope"],
                            r"^measure_gpu\.py: --conv-models: torchvision \S+ has no model 'nope'$"),
                           (["--sets", "odd_gemm", "--odd-gemm-problems", "/nonexistent.problem.json"],
                            r"^measure_gpu\.py: /nonexistent\.problem\.json: --odd-gemm-problems: no such file")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = m.main(["--device", "cpu", "-o", self.out] + argv)
            self.assertEqual(rc, 2, err.getvalue())
            self.assertEqual(len(err.getvalue().splitlines()), 1, err.getvalue())
            self.assertRegex(err.getvalue().strip(), want)
            self.assertFalse(os.path.exists(self.out))

    def test_help(self):
        rc, out, err = run_script("--help")
        self.assertEqual(rc, 0, err)
        for word in ("--device", "--problems", "--quick", "--sets", "Exit status", "--budget-s", "--odd-gemm-count",
                     "--models", "--conv-models", "--energy-seconds", "model_kernels"):
            self.assertIn(word, out)

    def test_set_lists(self):
        m = load_script()
        self.assertEqual(m.parse_args([]).sets, ["env", "gemm", "pointwise", "graph_ops", "graphs"])
        self.assertEqual(m.parse_args(["--sets", "all"]).sets, ["env", "gemm", "pointwise", "graph_ops", "graphs"])
        self.assertEqual(m.parse_args(["--sets", "extra"]).sets,
                         ["odd_gemm", "models", "conv", "energy", "model_kernels"])
        self.assertEqual(len(m.parse_args(["--sets", "everything"]).sets), 10)
        self.assertEqual(m.parse_args(["--sets", "model_kernels,energy,env,odd_gemm"]).sets,
                         ["env", "odd_gemm", "energy", "model_kernels"])
        a = m.parse_args(["--quick"])
        self.assertEqual((a.models, a.model_batches, a.conv_models, a.odd_gemm_count), (["resnet18"], [1],
                                                                                        ["resnet18"], 20))
        a = m.parse_args(["--energy-gemms", "1x2x3,4X5X6", "--odd-gemm-range", "8,16", "--models", "a,b,a"])
        self.assertEqual((a.energy_gemms, a.odd_gemm_range, a.models), ([(1, 2, 3), (4, 5, 6)], (8, 16), ["a", "b"]))
        self.assertEqual(len(m.parse_args([]).energy_gemms), 13)
        self.assertEqual(m.parse_args([]).energy_sizes, [2 ** 20, 2 ** 22, 2 ** 24, 2 ** 26, 2 ** 28])


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
        return check_table(self, self.out, name, HEADERS[name], text_filled=False)

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


class OddGemmShapes(unittest.TestCase):
    """odd_gemm's shapes: the random ones, the example problems', the real layers', merged and shuffled."""

    @classmethod
    def setUpClass(cls):
        cls.m = load_script()
        cls.args = cls.m.parse_args([])
        cls.shapes = cls.m.odd_gemm_shapes(cls.args)

    def test_random(self):
        rand = [s for s in self.shapes if "random" in s[3].split(",")]
        self.assertEqual(len(rand), 300)
        odd = [s for s in rand if s[1] % 8 or s[2] % 8]
        self.assertEqual(len(odd), 100)
        for m, n, k, _ in rand:
            self.assertTrue(16 <= min(m, n, k) and max(m, n, k) <= 16384, (m, n, k))
            if (m, n, k, "random") not in odd:
                self.assertEqual((m % 8, n % 8, k % 8), (0, 0, 0))

    def test_sources_and_caps(self):
        self.assertEqual(len({s[:3] for s in self.shapes}), len(self.shapes), "a shape twice")
        self.assertTrue(all(2 * m * n * k <= 2e12 for m, n, k, _ in self.shapes))
        sources = {src for s in self.shapes for src in s[3].split(",")}
        for want in ("bert_layer", "gpt2_block", "resnet18", "gpt2.lm_head.t128", "llama7b.ffn_down.t1",
                     "d768.ffn_up.t197", "resnet.stem7x7.b32"):
            self.assertIn(want, sources)
        by_shape = {s[:3]: s[3].split(",") for s in self.shapes}
        self.assertIn("gpt2.lm_head.t128", by_shape[(128, 50257, 768)])
        self.assertIn("resnet.stem7x7.b1", by_shape[(12544, 64, 147)])
        self.assertIn("resnet18", by_shape[(12544, 64, 147)])      # examples/resnet18.problem.json's stem
        self.assertIn("llama7b.ffn_down.t2048", by_shape[(2048, 4096, 11008)])

    def test_seeded_order(self):
        again = self.m.odd_gemm_shapes(self.m.parse_args([]))
        self.assertEqual(again, self.shapes)
        other = self.m.odd_gemm_shapes(self.m.parse_args(["--seed", "1"]))
        self.assertNotEqual(other, self.shapes)
        # shuffled: the first 60 rows already mix random and named shapes
        head = [s[3] for s in self.shapes[:60]]
        self.assertTrue(any(h == "random" for h in head) and any("random" not in h for h in head))

    def test_cap_and_problems(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mixed.problem.json")
            with open(path, "w") as f:
                json.dump(MIXED, f)
            args = self.m.parse_args(["--odd-gemm-count", "7", "--odd-gemm-range", "16,64",
                                      "--odd-gemm-max-flop", "1e5", "--odd-gemm-problems", d])
            shapes = self.m.odd_gemm_shapes(args)
        self.assertTrue(all(2 * m * n * k <= 1e5 for m, n, k, _ in shapes))
        self.assertIn((8, 16, 32, "mixed"), shapes)          # MIXED's MatMul: [8,16] = [8,32] @ [32,16]
        self.assertEqual(sum("random" in s[3] for s in shapes), 7)


class EnergyCells(unittest.TestCase):
    """energy.tsv's arithmetic, as in the H100 file."""

    def test_cells(self):
        m = load_script()
        self.assertEqual(m.energy_cells(0.6, 64000, 300.0, 100.0),
                         ("9.375", "4.687500e-03", "500.0", "3.750000e-03", "100.0"))
        self.assertEqual(m.energy_cells(0.6, 64000, None, None), ("9.375", "-", "-", "-", "-"))
        # the H100 file's first row: avg_W = J_per_op / us_per_op, less idle_W x the time above idle
        us, j, w, above, idle = m.energy_cells(5.599e-6 * 6400, 6400, 2.870910e-03 * 6400, 121.3)
        self.assertEqual((us, idle), ("5.599", "121.3"))
        self.assertAlmostEqual(float(w), 512.7, delta=0.1)   # the file's us_per_op is rounded
        self.assertAlmostEqual(float(above), 2.191856e-03, places=6)


@unittest.skipUnless(have_torch(), "no torch: --device cpu needs it")
class CpuExtra(unittest.TestCase):
    """--device cpu --quick --sets env,extra: the extra sets' files, their headers, rows and cells."""

    @classmethod
    def setUpClass(cls):
        try:
            __import__("torchvision")
        except Exception:   # noqa: BLE001
            raise unittest.SkipTest("no torchvision")
        cls.tmp = tempfile.TemporaryDirectory()
        probs = os.path.join(cls.tmp.name, "problems")
        os.makedirs(probs)
        shutil.copy(os.path.join(SRCDIR, "examples", "resnet18.problem.json"), probs)
        with open(os.path.join(probs, "mixed.problem.json"), "w") as f:
            json.dump(MIXED, f)
        cls.out = os.path.join(cls.tmp.name, "out")
        cls.argv = ["--device", "cpu", "--quick", "--reps", "1", "--warmup", "1", "--target-ms", "0.05",
                    "--sets", "env,extra", "--odd-gemm-count", "5", "--odd-gemm-range", "16,64",
                    "--odd-gemm-max-flop", "1e7", "--odd-gemm-problems", probs, "--models", "resnet18",
                    "--model-batches", "1,2", "--image-size", "32", "--conv-models", "resnet18",
                    "--conv-batches", "1,2", "--energy-gemms", "64x64x64,30x50x70", "--energy-sizes", "4096",
                    "--energy-ops", "copy,gelu", "--energy-seconds", "0.01", "--checkpoint-s", "0.001"]
        cls.rc, cls.stdout, cls.stderr = run_script(*cls.argv, "-o", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, name):
        return check_table(self, self.out, name, EXTRA_HEADERS[name], text_filled=True)

    def test_ran(self):
        self.assertEqual(self.rc, 0, self.stderr)
        self.assertEqual(self.stdout, "")
        self.assertEqual(sorted(os.listdir(self.out)), sorted(EXTRA_HEADERS), "stray or missing files")
        for line in ("measure_gpu.py: odd_gemm 1/", "measure_gpu.py: models 2/2: resnet18 batch 2",
                     "measure_gpu.py: conv: resnet18: 11 distinct convolutions in 20 calls",
                     "measure_gpu.py: energy 4/4: pointwise gelu on 4096 elements",
                     "measure_gpu.py: odd_gemm: checkpoint: wrote "):
            self.assertIn(line, self.stderr)
        self.assertNotIn("warning", self.stderr)

    def test_env(self):
        env = {r["key"]: r["value"] for r in self.table("env.tsv")}
        self.assertEqual(env["device"], "cpu")
        self.assertNotIn("budget", env["settings"])
        self.assertNotIn("truncated", env["settings"])

    def test_odd_gemm(self):
        rows = self.table("odd_gemm.tsv")
        m = load_script()
        args = m.parse_args(self.argv[:self.argv.index("--odd-gemm-problems") + 2])
        want = [(str(a), str(b), str(c), src) for a, b, c, src in m.odd_gemm_shapes(args)]
        self.assertEqual([(r["M"], r["N"], r["K"], r["source"]) for r in rows], want)
        self.assertEqual(sum(r["source"] == "random" for r in rows), 5)
        self.assertIn(("8", "16", "32", "mixed"), want)
        self.assertIn(("1", "1000", "512", "resnet18,resnet18.fc.b1"), want)

    def test_models(self):
        rows = self.table("models.tsv")
        self.assertEqual([(r["model"], r["batch"], r["params"]) for r in rows],
                         [("resnet18", "1", "11689512"), ("resnet18", "2", "11689512")])

    def test_model_kernels(self):
        rows = self.table("model_kernels.tsv")
        for batch in ("1", "2"):
            mine = [r for r in rows if (r["model"], r["batch"]) == ("resnet18", batch)]
            self.assertGreater(len(mine), 20, batch)
            self.assertEqual([int(r["index"]) for r in mine], list(range(len(mine))))
            self.assertEqual(mine[0]["kernel_name"], "aten::conv2d")
            self.assertTrue(all(len(r["kernel_name"]) <= 120 for r in mine))
        self.assertEqual(len(rows), len([r for r in rows if r["batch"] in ("1", "2")]))

    def test_conv(self):
        rows = self.table("conv.tsv")
        self.assertEqual(len(rows), 22)                       # resnet18: 11 distinct convolutions x 2 batches
        self.assertEqual(rows[0]["layer"], "conv1")
        self.assertEqual([r["batch"] for r in rows[:4]], ["1", "2", "1", "2"])
        for batch in ("1", "2"):
            self.assertEqual(sum(int(r["uses"]) for r in rows if r["batch"] == batch), 20)
        stem = rows[0]
        self.assertEqual([stem[c] for c in ("in_ch", "out_ch", "kh", "kw", "stride", "pad", "dilation", "groups",
                                            "bias", "in_h", "in_w", "out_h", "out_w")],
                         ["3", "64", "7", "7", "2", "3", "1", "1", "0", "32", "32", "16", "16"])
        for r in rows:
            k, s, p, d = int(r["kh"]), int(r["stride"]), int(r["pad"]), int(r["dilation"])
            self.assertEqual(int(r["out_h"]), (int(r["in_h"]) + 2 * p - d * (k - 1) - 1) // s + 1, r)

    def test_energy(self):
        rows = self.table("energy.tsv")
        self.assertEqual([(r["kind"], r["M_or_op"], r["N_or_elements"], r["K"]) for r in rows],
                         [("gemm", "64", "64", "64"), ("gemm", "30", "50", "70"), ("pointwise", "copy", "4096", "0"),
                          ("pointwise", "gelu", "4096", "0")])
        self.assertTrue(all(float(r["us_per_op"]) > 0 for r in rows))


@unittest.skipUnless(have_torch(), "no torch: --device cpu needs it")
class CutShort(unittest.TestCase):
    """--budget-s and SIGTERM: the set under way keeps its rows, later sets are not started, env.tsv says so."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def test_budget(self):
        m = load_script()
        budget = sys.modules["gpumeasure.budget"].Budget
        calls = []

        def passed(self):      # spent from the fifth look on: env, odd_gemm and two rows start
            calls.append(1)
            return len(calls) > 4
        argv = ["--device", "cpu", "--quick", "--reps", "1", "--warmup", "0", "--target-ms", "0.01",
                "--sets", "env,odd_gemm,energy", "--odd-gemm-count", "9", "--odd-gemm-range", "16,64",
                "--odd-gemm-max-flop", "1e5", "--budget-s", "100"]
        total = len(m.odd_gemm_shapes(m.parse_args(argv)))
        err = io.StringIO()
        handler = signal.getsignal(signal.SIGTERM)
        try:
            with mock.patch.object(budget, "passed", passed), contextlib.redirect_stderr(err):
                rc = m.main(argv + ["-o", self.out])
        finally:
            signal.signal(signal.SIGTERM, handler)
        self.assertEqual(rc, 0, err.getvalue())
        self.assertEqual(sorted(os.listdir(self.out)), ["env.tsv", "odd_gemm.tsv"])
        _, rows = read_tsv(os.path.join(self.out, "odd_gemm.tsv"))
        self.assertEqual(len(rows), 2)
        env = dict(read_tsv(os.path.join(self.out, "env.tsv"))[1])
        self.assertTrue(env["settings"].endswith(f", budget_s 100, truncated: odd_gemm 2/{total} rows; "
                                                 "energy not started"), env["settings"])
        self.assertIn(f"measure_gpu.py: warning: odd_gemm: truncated (2/{total} rows): the --budget-s 100 s budget "
                      "is spent", err.getvalue())
        self.assertIn("measure_gpu.py: warning: energy: truncated (not started)", err.getvalue())

    def test_sigterm(self):
        argv = [sys.executable, SCRIPT, "--device", "cpu", "--reps", "1", "--warmup", "0", "--target-ms", "0.01",
                "--sets", "env,odd_gemm,models", "--odd-gemm-count", "5000", "--odd-gemm-range", "16,2048",
                "--odd-gemm-max-flop", "1e6", "--checkpoint-s", "1000", "-o", self.out]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = []
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:
                line = p.stderr.readline()
                if not line:
                    break
                seen.append(line)
                if "odd_gemm 50/" in line:
                    p.send_signal(signal.SIGTERM)
                    break
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        err = "".join(seen) + err
        self.assertEqual(p.returncode, 1, err)
        last = err.splitlines()[-1]
        got = re.fullmatch(r"measure_gpu\.py: interrupted while measuring odd_gemm; the files written before are "
                           r"whole; wrote the (\d+) rows of odd_gemm measured so far to .*odd_gemm\.tsv", last)
        self.assertIsNotNone(got, last)
        _, rows = read_tsv(os.path.join(self.out, "odd_gemm.tsv"))
        self.assertEqual(len(rows), int(got.group(1)))
        self.assertGreaterEqual(len(rows), 49)
        self.assertLess(len(rows), 1000)
        self.assertEqual(sorted(os.listdir(self.out)), ["env.tsv", "odd_gemm.tsv"])
        env = dict(read_tsv(os.path.join(self.out, "env.tsv"))[1])
        self.assertTrue(env["settings"].endswith(f"truncated: odd_gemm interrupted after {len(rows)} rows"),
                        env["settings"])


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

    def test_rows_as_they_go(self):
        """TsvRows: the file is rewritten with the rows so far when every_s has passed, and at write()."""
        m = load_script()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "models.tsv")
            rows = m.TsvRows(d, "models", 1000.0)
            rows.add(("resnet18", 1, "1.0", "-", "-", "-", 5))
            self.assertFalse(os.path.exists(path))
            self.assertEqual(rows.write(), path)
            self.assertEqual(read_tsv(path)[1], [["resnet18", "1", "1.0", "-", "-", "-", "5"]])
            seen = []
            rows = m.TsvRows(d, "models", 0.0, seen.append)
            for b in (1, 2):
                rows.add(("m", b, "1.0", "-", "-", "-", 5))
                self.assertEqual(len(read_tsv(path)[1]), b)
            self.assertEqual(len(rows), 2)
            self.assertEqual(seen[-1], f"models: checkpoint: wrote {path} (2 rows so far)")
            self.assertEqual(sorted(os.listdir(d)), ["models.tsv"])


class BadRow:
    """A row whose cells cannot be listed: write_tsv fails half way."""

    def __iter__(self):
        raise TypeError("bad row")


if __name__ == "__main__":
    unittest.main()
