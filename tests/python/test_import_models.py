"""test_import_models.py - real models end to end: torchvision's, a BERT-style encoder layer, a GPT-2-style block and a LLaMA-style block, imported, scheduled, evaluated and simulated."""

import os
import subprocess
import tempfile
import time
import unittest
import warnings

import support
from support import run_cli

MODELS = os.path.join(support.HERE, "models.py")

# model -> (graph nodes, problem ops) as imported by this version: a change here is a change of the importer
EXPECTED = {
    "torchvision:resnet18": (69, 68),
    "torchvision:mobilenet_v2": (153, 104),
    "torchvision:efficientnet_b0": (240, 210),
    "torchvision:convnext_tiny": (184, 141),
    "torchvision:swin_t": (477, 280),
    "torchvision:vit_b_16": (405, 213),
    "torchvision:shufflenet_v2_x1_0": (245, 180),
    f"{MODELS}:bert_layer": (28, 19),
    f"{MODELS}:gpt2_block": (28, 18),
    f"{MODELS}:llama_block": (58, 53),
}


def check_problem(test, d):
    """Every size an integer >= 1, every list of the right length, every op's shapes as SPEC section 1 wants."""
    nt, no = len(d["widths"]), len(d["op_types"])
    test.assertEqual(len(d["heights"]), nt)
    test.assertEqual(len(d["tensor_names"]), nt)
    for k in ("inputs", "outputs", "base_costs", "op_names", "op_kinds"):
        test.assertEqual(len(d[k]), no, k)
    test.assertTrue(all(isinstance(v, int) and v >= 1 for v in d["widths"] + d["heights"]))
    test.assertTrue(all(isinstance(s, str) and s for s in d["op_names"] + d["op_kinds"] + d["tensor_names"]))
    test.assertTrue(all(c > 0 for c in d["base_costs"]))
    produced = [o[0] for o in d["outputs"]]
    test.assertEqual(len(set(produced)), no)
    for t, ins, out, _, name, _ in support.ops(d):
        if t == "MatMul":
            (l, r), o = ins, out
            test.assertEqual((l[0], r[1], l[1]), (o[0], o[1], r[0]), name)
        elif t == "Pointwise":
            test.assertTrue(all(i == out for i in ins), name)
        else:
            test.assertEqual(t, "Layout")
            test.assertEqual(len(ins), 1, name)


def run_fusetile(test, *argv):
    """Run ./fusetile ARGV; asserts exit 0 and returns its stdout."""
    r = subprocess.run([support.fusetile_binary(), *argv], capture_output=True, text=True, timeout=300)
    test.assertEqual(r.returncode, 0, f"fusetile {' '.join(argv)}: {r.stderr}")
    return r.stdout


def schedule_evaluate_simulate(test, prob, target=None):
    """Schedule PROB (1 s), evaluate and simulate the schedule, on TARGET if given: the evaluated and simulated
    totals agree, or (on a target with timing effects) every difference is accounted for by a named effect."""
    topts = ["--target", target] if target else []
    sched = prob + ".schedule.json"
    run_fusetile(test, "schedule", prob, "--time-limit", "1", "--threads", "1", "-q", "-o", sched, *topts)
    ev = support.json.loads(run_fusetile(test, "evaluate", prob, sched, "--json", *topts))
    test.assertGreaterEqual(ev["total"], ev["lower_bound"])
    sim = run_fusetile(test, "simulate", prob, sched, *topts)
    if target is None:
        test.assertRegex(sim, r"(?m)^agreement +yes")
    else:
        test.assertRegex(sim, r"(?m)^agreement +yes( \(|: .*every (subgraph's )?difference accounted for)")
    return ev


class TestRealModels(unittest.TestCase):
    def test_models(self):
        """Each model imports to the expected graph and problem; with ./fusetile built, its problem is scheduled,
        evaluated and simulated with agreement (resnet18 also on each bundled target)."""
        fusetile = support.fusetile_binary()
        for spec, (nodes, nops) in EXPECTED.items():
            with self.subTest(model=spec), warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
                warnings.simplefilter("ignore")
                t = time.time()
                g = support.pipeline.import_graph(spec)
                d, _ = support.problem(g)
                check_problem(self, d)
                self.assertEqual(g.frontend, "fx")
                self.assertEqual((len(g.nodes), len(d["op_types"])), (nodes, nops))
                self.assertLess(time.time() - t, 20)
                if not fusetile:
                    continue
                prob = os.path.join(tmp, "p.json")
                with open(prob, "w") as f:
                    support.json.dump(d, f)
                ev = schedule_evaluate_simulate(self, prob)
                self.assertGreaterEqual(len(ev["subgraphs"]), 1)
                if spec == "torchvision:resnet18":
                    for target in ("kpu", "gpu-h100-sm", "tpu-v5e"):
                        with self.subTest(target=target):
                            schedule_evaluate_simulate(self, prob, os.path.join(support.SRCDIR, "targets", target + ".cfg"))

    def test_resnet18_graph_only_summary(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "g.json")
            rc, _, err = run_cli("torchvision:resnet18", "--graph-only", "-o", out)
            self.assertEqual(rc, 0, err)
            line = err.splitlines()[0]
            for want in ("20 conv2d", "20 batch_norm", "17 relu", "8 add"):
                self.assertIn(want, line)
            self.assertTrue(line.startswith("fusetile import: graph: "), line)
            g = support.load(out)
            self.assertEqual(g["format"], "fusetile-model-graph")
            counts = {op: n for op, n in g["op_counts"].items()}
            self.assertEqual({k: counts[k] for k in ("conv2d", "batch_norm", "relu", "add")},
                             {"conv2d": 20, "batch_norm": 20, "relu": 17, "add": 8})
            conv = [n for n in g["nodes"] if n["source"].get("module") == "layer1.0.conv1"][0]
            self.assertEqual(conv["op"], "conv2d")
            self.assertEqual(conv["shape"], [1, 64, 56, 56])
            self.assertEqual(conv["attrs"]["kernel"], [3, 3])
            self.assertEqual(g["buffers"]["layer1.0.conv1.weight"]["kind"], "weight")
            self.assertEqual(g["buffers"]["x"]["kind"], "input")
            self.assertEqual(g["buffers"][g["outputs"][0]]["kind"], "output")
            # a model graph file is a MODEL too, and lowers as the model did
            rc, out1, _ = run_cli(out, "-q")
            rc2, out2, _ = run_cli("torchvision:resnet18", "-q")
            self.assertEqual((rc, rc2), (0, 0))
            a, b = support.json.loads(out1), support.json.loads(out2)
            self.assertEqual(support.signature(a), support.signature(b))


class TestCommand(unittest.TestCase):
    """python3 -m fusetile.importer as a process: start-up included."""

    def test_module_entry_point(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(support.SRCDIR, "python"))
        import sys
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "p.json")
            t = time.time()
            r = subprocess.run([sys.executable, "-m", "fusetile.importer", "torchvision:resnet18", "-o", out],
                               capture_output=True, text=True, env=env, timeout=120)
            wall = time.time() - t
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("problem: 68 ops (21 MatMul, 25 Pointwise, 22 Layout)", r.stderr)
            self.assertLess(wall, 15)    # about 3 s on an idle machine
            r = subprocess.run([sys.executable, "-m", "fusetile.importer", "--help"], capture_output=True, text=True,
                               env=env, timeout=60)
            self.assertEqual(r.returncode, 0)
            self.assertTrue(r.stdout.startswith("usage: fusetile import MODEL"))


if __name__ == "__main__":
    unittest.main()
