"""test_binding.py - the fusetile Python package: problems, schedules and targets (loading, conversions, info, names) and every error of loading.

Run by tests/cli/test_python.sh (make check) with PYTHONPATH=BUILDDIR/python:
    PYTHONPATH=python /usr/bin/python3 -m unittest discover -s tests/python -p 'test_binding*.py'
"""
import json
import os
import tempfile
import unittest

import fusetile

SRC = os.environ.get("FT_SRCDIR") or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VEC = os.path.join(SRC, "tests", "vectors")


def vec(name):
    return os.path.join(VEC, name)


P1A = vec("ex1A.problem.json")
S1A = vec("ex1A.solution.json")
PN = vec("N-named-mlp.problem.json")
SN = vec("N-named-mlp.solution.json")
SPLIT = vec("E2-mlp-split.solution.json")
KPU = os.path.join(SRC, "targets", "kpu.cfg")
CONTEST = os.path.join(SRC, "targets", "contest.cfg")


def small_problem(**extra):
    d = {"widths": [8, 8], "heights": [8, 8], "inputs": [[0]], "outputs": [[1]], "base_costs": [10],
         "op_types": ["Pointwise"], "fast_memory_capacity": 1000, "slow_memory_bandwidth": 2,
         "native_granularity": [8, 8]}
    d.update(extra)
    return d


class TmpDir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assertError(self, cls, needle, fn, *args, **kw):
        """fn(*args, **kw) raises cls whose message contains needle; returns it."""
        with self.assertRaises(cls) as cm:
            fn(*args, **kw)
        self.assertIn(needle, str(cm.exception))
        self.assertEqual(cm.exception.message, str(cm.exception))
        return cm.exception


class TestModule(unittest.TestCase):
    def test_module_exports(self):
        for name in fusetile.__all__:
            self.assertTrue(hasattr(fusetile, name), name)
        self.assertRegex(fusetile.__version__, r"^\d+\.\d+\.\d+$")
        self.assertEqual(fusetile.LABEL_MAX, 256)

    def test_error_classes(self):
        self.assertTrue(issubclass(fusetile.Error, Exception))
        for c in (fusetile.InputError, fusetile.InvalidScheduleError, fusetile.UsageError):
            self.assertTrue(issubclass(c, fusetile.Error))
        self.assertTrue(issubclass(fusetile.UsageError, ValueError))
        e = fusetile.Error("x")   # raised from Python: the attributes exist
        self.assertIsNone(e.reason)
        self.assertIsNone(e.subgraph)

    def test_objects_not_constructible(self):
        for c in (fusetile.Problem, fusetile.Schedule, fusetile.Target):
            with self.assertRaises(TypeError):
                c()

    def test_contest_time_limit(self):
        self.assertEqual(fusetile.contest_time_limit(5), 2.0)
        self.assertEqual(fusetile.contest_time_limit(200), 120.0)
        with self.assertRaises(TypeError):
            fusetile.contest_time_limit("5")


class TestProblem(TmpDir):
    def test_load(self):
        p = fusetile.load_problem(P1A)
        self.assertEqual((p.name, p.nops, p.ntensors), (P1A, 2, 3))
        self.assertIn("2 ops, 3 tensors", repr(p))

    def test_load_pathlike_and_bytes(self):
        import pathlib
        self.assertEqual(fusetile.load_problem(pathlib.Path(P1A)).nops, 2)
        self.assertEqual(fusetile.load_problem(os.fsencode(P1A)).nops, 2)

    def test_info(self):
        d = fusetile.load_problem(P1A).info()
        self.assertEqual(d["name"], P1A)
        self.assertEqual((d["nops"], d["ntensors"], d["capacity"], d["bandwidth"]), (2, 3, 35000.0, 10.0))
        self.assertEqual(d["native"], {"w": 128, "h": 128, "k": 128, "larger": False})
        self.assertEqual(d["timing"], {"write_bandwidth": 0.0, "transfer_latency": 0.0, "launch_overhead": 0.0,
                                       "overlap": "step", "duplex": False})
        self.assertEqual((d["inputs"], d["outputs"], d["topo"]), ([0], [2], [0, 1]))
        self.assertEqual(d["ops"][0], {"index": 0, "type": "Pointwise", "inputs": [0], "output": 1,
                                       "base_cost": 1000.0, "k": 0, "name": None, "kind": None})
        self.assertEqual(d["tensors"][1], {"index": 1, "width": 128, "height": 128, "size": 16384, "producer": 0,
                                           "consumers": [1], "name": None})
        self.assertIsNone(d["op_names"])
        self.assertIsNone(d["op_kinds"])
        self.assertIsNone(d["tensor_names"])

    def test_info_names(self):
        d = fusetile.load_problem(PN).info()
        self.assertEqual(d["op_names"], ["encoder.layer1.fc1", "encoder.layer1.act", "encoder.layer1.fc2"])
        self.assertEqual(d["op_kinds"], ["linear", "gelu", "linear"])
        self.assertEqual(d["tensor_names"][0], "x")
        self.assertEqual(d["ops"][1]["name"], "encoder.layer1.act")
        self.assertEqual(d["ops"][1]["kind"], "gelu")
        self.assertEqual(d["tensors"][5]["name"], "y")
        self.assertEqual(d["ops"][0]["k"], 128)

    def test_to_dict_roundtrip(self):
        p = fusetile.load_problem(PN)
        d = p.to_dict()
        self.assertEqual(d["op_names"][2], "encoder.layer1.fc2")
        self.assertEqual(d["native_granularity"], [128, 128])
        q = fusetile.problem_from_dict(d)
        self.assertEqual(q.name, "<dict>")
        self.assertEqual(q.to_dict(), d)
        self.assertEqual(q.to_json(), p.to_json())
        self.assertEqual(json.loads(p.to_json()), d)

    def test_from_json(self):
        p = fusetile.problem_from_json(json.dumps(small_problem(op_names=["relu"])), name="mine")
        self.assertEqual(p.name, "mine")
        self.assertEqual(p.info()["op_names"], ["relu"])
        with self.assertRaises(TypeError):
            fusetile.problem_from_json(b"{}")

    def test_write(self):
        path = os.path.join(self.tmp, "p.json")
        fusetile.load_problem(PN).write(path)
        self.assertEqual(fusetile.load_problem(path).info()["op_kinds"], ["linear", "gelu", "linear"])
        self.assertError(fusetile.InputError, "nodir", fusetile.load_problem(P1A).write,
                         os.path.join(self.tmp, "nodir", "p.json"))

    def test_clone(self):
        p = fusetile.load_problem(PN)
        c = p.clone()
        del p
        self.assertEqual(c.info()["op_names"][0], "encoder.layer1.fc1")

    def test_immutable(self):
        p = fusetile.load_problem(P1A)
        with self.assertRaises(AttributeError):
            p.nops = 3
        with self.assertRaises(AttributeError):
            p.extra = 1

    def test_bounds(self):
        p = fusetile.load_problem(P1A)
        self.assertEqual(p.lower_bound(), {"compute_model": "native", "bound": 3276.8, "compute": 1100.0,
                                           "memory": 3276.8})
        self.assertEqual(p.capacity_bound("op")["bound"], 3276.8)
        self.assertError(fusetile.UsageError, "compute_model is 'fast', must be native or op", p.lower_bound, "fast")
        with self.assertRaises(TypeError):
            p.capacity_bound(compute_model=1)

    def test_label(self):
        p = fusetile.load_problem(PN)
        self.assertEqual(p.label([0, 1, 2]), "encoder.layer1.fc1+act+fc2")
        self.assertEqual(p.label((2,)), "encoder.layer1.fc2")
        self.assertEqual(p.label([]), "")
        self.assertEqual(fusetile.load_problem(P1A).label([1, 0]), "1,0")
        self.assertEqual(p.label([0, 9]), "0,9")   # out of range: the indices
        with self.assertRaises(TypeError):
            p.label([0, "1"])
        with self.assertRaises(TypeError):
            p.label(3)
        self.assertError(fusetile.UsageError, "label(): ops[1] is out of range", p.label, [0, 2 ** 40])
        self.assertError(fusetile.UsageError, "label(): ops[0] is out of range", p.label, [-2 ** 70])

    def test_label_limit(self):
        names = ["m.%s" % (c * 200) for c in "abc"]
        p = fusetile.problem_from_dict(dict(fusetile.load_problem(PN).to_dict(), op_names=names))
        label = p.label([0, 1, 2])
        self.assertEqual(len(label.encode()), fusetile.LABEL_MAX)
        self.assertTrue(label.startswith("m." + "a" * 200 + "+" + "b" * 10))
        self.assertTrue(label.endswith("..."))

    # --- errors
    def test_bad_path(self):
        missing = os.path.join(self.tmp, "nope.json")
        e = self.assertError(fusetile.InputError, missing + ": cannot open", fusetile.load_problem, missing)
        self.assertEqual((e.kind, e.code, e.reason, e.subgraph, e.tile, e.step), ("input", 2, None, None, None, None))

    def test_bad_json(self):
        path = self.write("trunc.json", '{"widths": [1, 2],')
        self.assertError(fusetile.InputError, "trunc.json:1:", fusetile.load_problem, path)
        self.assertError(fusetile.InputError, "not valid JSON", fusetile.problem_from_json, "{")
        self.assertError(fusetile.InputError, "NUL", fusetile.problem_from_json, "{\0}")

    def test_bad_field(self):
        self.assertError(fusetile.InputError, "<dict>: missing field widths", fusetile.problem_from_dict, {})
        d = small_problem(fast_memory_capacity=-1)
        self.assertError(fusetile.InputError, "fast_memory_capacity is -1, must be positive", fusetile.problem_from_dict, d)
        self.assertError(fusetile.InputError, "base_costs[0] is a string, must be a number", fusetile.problem_from_dict,
                         small_problem(base_costs=["x"]))
        self.assertError(fusetile.InputError, "<dict>: problem: Out of range float values are not JSON compliant",
                         fusetile.problem_from_dict, small_problem(slow_memory_bandwidth=float("nan")))

    def test_limits(self):
        # the library's named limits (include/fusetile/limits.h) apply here too
        self.assertError(fusetile.InputError, "<dict>: heights[0]: 4294967297 elements, the limit is 4294967296 (FT_MAX_DIM)",
                         fusetile.problem_from_dict, small_problem(heights=[4294967297, 4294967297]))
        big = os.path.join(self.tmp, "big.json")
        with open(big, "wb") as f:
            f.truncate((16 << 20) + 1)
        self.assertError(fusetile.InputError, "big.json: 16777217 bytes, the limit is 16777216 (FT_MAX_PROBLEM_BYTES)",
                         fusetile.load_problem, big)

    def test_bad_names(self):
        self.assertError(fusetile.InputError, "<dict>: op_names[0]: expected a string, got an integer",
                         fusetile.problem_from_dict, small_problem(op_names=[3]))
        self.assertError(fusetile.InputError, "tensor_names has 1 entries, expected 2 (one per tensor)",
                         fusetile.problem_from_dict, small_problem(tensor_names=["x"]))
        path = os.path.join(VEC, "bad", "op-names-not-string.json")
        self.assertError(fusetile.InputError, path + ": op_names[1]: expected a string, got an integer",
                         fusetile.load_problem, path)

    def test_bad_vectors(self):
        for f in sorted(os.listdir(os.path.join(VEC, "bad"))):
            path = os.path.join(VEC, "bad", f)
            with self.assertRaises(fusetile.InputError, msg=f) as cm:
                fusetile.load_problem(path)
            self.assertIn(f, str(cm.exception))

    def test_wrong_types(self):
        for bad in (3, None, ["a"]):
            with self.assertRaises(TypeError):
                fusetile.load_problem(bad)
            with self.assertRaises(TypeError):
                fusetile.problem_from_dict(bad)
        with self.assertRaises(TypeError):
            fusetile.problem_from_dict({"widths": {1, 2}})   # not JSON serialisable
        with self.assertRaises(TypeError):
            fusetile.evaluate(3, S1A)


class TestSchedule(TmpDir):
    def test_load(self):
        s = fusetile.load_schedule(SPLIT)
        self.assertEqual((s.name, s.nsubgraphs), (SPLIT, 2))
        self.assertIn("2 subgraphs", repr(s))
        self.assertEqual(s.subgraphs()[0], {"index": 0, "ops": [0, 1], "granularity": [128, 128, 128], "retain": [],
                                            "order": None, "reported": 0.0})

    def test_to_dict_roundtrip(self):
        s = fusetile.load_schedule(SPLIT)
        d = s.to_dict()
        self.assertEqual(d["subgraphs"], [[0, 1], [2]])
        t = fusetile.schedule_from_dict(d)
        self.assertEqual(t.name, "<dict>")
        self.assertEqual(t.to_dict(), d)
        self.assertEqual(json.loads(s.to_json()), d)
        self.assertEqual(fusetile.schedule_from_json(s.to_json()).to_dict(), d)

    def test_write(self):
        path = os.path.join(self.tmp, "s.json")
        fusetile.load_schedule(SPLIT).write(path)
        self.assertEqual(fusetile.load_schedule(path).nsubgraphs, 2)
        self.assertError(fusetile.InputError, "nodir", fusetile.load_schedule(SPLIT).write,
                         os.path.join(self.tmp, "nodir", "s.json"))

    def test_order(self):
        s = fusetile.load_schedule(vec("ex4B.solution.json"))
        self.assertEqual(s.subgraphs()[0]["order"], [0, 1, 3, 2])

    def test_errors(self):
        missing = os.path.join(self.tmp, "nope.json")
        self.assertError(fusetile.InputError, "cannot open", fusetile.load_schedule, missing)
        self.assertError(fusetile.InputError, "not valid JSON", fusetile.schedule_from_json, "[")
        self.assertError(fusetile.InputError, "missing field granularities", fusetile.schedule_from_dict,
                         {"subgraphs": [[0]], "tensors_to_retain": [[]]})
        self.assertError(fusetile.InputError, "granularities[0][1] must be an integer", fusetile.schedule_from_dict,
                         {"subgraphs": [[0]], "granularities": [[1, "x", 1]], "tensors_to_retain": [[]]})
        for bad in (3, None):
            with self.assertRaises(TypeError):
                fusetile.load_schedule(bad)
            with self.assertRaises(TypeError):
                fusetile.schedule_from_dict(bad)
        with self.assertRaises(TypeError):
            fusetile.evaluate(P1A, 3.5)


class TestTarget(TmpDir):
    def test_load(self):
        t = fusetile.load_target(KPU)
        self.assertEqual((t.name, t.path, t.contest), ("kpu", KPU, False))
        d = t.info()
        self.assertEqual(d["native_w"], 32)
        self.assertIn("double_buffering", d)
        self.assertEqual((d["units"], d["step_overhead"], d["shared_cache_capacity_bytes"]), (1, 0.0, 0))
        chip = fusetile.load_target(os.path.join(os.path.dirname(KPU), "kpu-chip.cfg")).info()
        self.assertEqual((chip["units"], chip["matmul_efficiency"], chip["shared_cache_capacity_bytes"]), (16, 0.9, 16777216))
        self.assertEqual((d["run_overhead"], d["replay_interval"], d["kind_cost"]), (0.0, 0.0, {}))
        gpu = fusetile.load_target(os.path.join(os.path.dirname(KPU), "gpu-h100.cfg")).info()
        self.assertGreater(gpu["run_overhead"], 0)
        self.assertGreater(gpu["replay_interval"], 0)
        self.assertEqual(list(gpu["kind_cost"]), ["gelu", "nchw_to_nhwc", "nhwc_to_nchw", "depthwise_conv2d", "batch_norm",
                                                 "max_pool2d"])
        self.assertGreater(gpu["kind_cost"]["gelu"], 1)
        self.assertTrue(t.describe().startswith("kpu: clock "))
        self.assertIn("kpu", repr(t))

    def test_energy(self):
        # a target's energy group: joules and watts per subgraph and in total
        gpu = os.path.join(os.path.dirname(KPU), "gpu-h100.cfg")
        s = fusetile.schedule(PN, time_limit=0.5, target=gpu)[0]
        d = fusetile.evaluate(PN, s, target=gpu)
        self.assertGreater(d["energy_j"], 0)
        self.assertAlmostEqual(sum(g["energy_j"] for g in d["subgraphs"]), d["energy_j"], delta=1e-12 * d["energy_j"])
        self.assertTrue(all(g["power_w"] > 0 for g in d["subgraphs"]))
        self.assertGreater(d["power_w"], 0)
        # the simulator's own account beside the analytic one
        r = fusetile.simulate(PN, s, target=gpu)
        self.assertAlmostEqual(r["energy_analytic_j"], d["energy_j"], delta=1e-12 * d["energy_j"])
        self.assertGreater(r["energy_j"], 0)
        self.assertTrue(all(g["energy_j"] > 0 and g["energy_analytic_j"] > 0 for g in r["subgraphs"]))
        # none without the group (the contest target has none)
        self.assertNotIn("energy_j", fusetile.evaluate(PN, SN, target=CONTEST))
        self.assertIn("energy_j", fusetile.evaluate(PN, fusetile.schedule(PN, time_limit=0.5, target=KPU)[0], target=KPU))

    def test_objective(self):
        # schedule(objective=...): energy no more joules than latency's
        # schedule, which is no slower; the evaluation says the objective
        gpu = os.path.join(os.path.dirname(KPU), "gpu-h100.cfg")
        res = {ob: fusetile.schedule(PN, time_limit=1, threads=1, target=gpu, objective=ob, progress=False)[1]
               for ob in ("latency", "energy", "edp")}
        for ob, d in res.items():
            self.assertEqual(d["objective"], ob)
            self.assertGreaterEqual(d["objective_ratio"], 1)
            self.assertLessEqual(d["objective_bound"], d["objective_value"])
        self.assertEqual(res["energy"]["objective_value"], res["energy"]["energy_j"])
        self.assertLessEqual(res["energy"]["energy_j"], res["latency"]["energy_j"] * (1 + 1e-9))
        self.assertLessEqual(res["latency"]["total"], res["energy"]["total"] * (1 + 1e-9))
        self.assertEqual(res["latency"]["objective_value"], res["latency"]["total"])
        with self.assertRaisesRegex(fusetile.UsageError, "objective is 'speed'"):
            fusetile.schedule(PN, time_limit=0.5, target=gpu, objective="speed")
        with self.assertRaisesRegex(fusetile.InputError, "objective energy needs the machine's energy model"):
            fusetile.schedule(PN, time_limit=0.5, target=CONTEST, objective="energy")

    def test_contest(self):
        t = fusetile.load_target(CONTEST)
        self.assertTrue(t.contest)
        self.assertEqual(set(t.info()), {"path", "name", "description", "contest"})
        p = fusetile.apply_target(P1A, t)
        self.assertEqual(p.to_json(), fusetile.load_problem(P1A).to_json())

    def test_apply(self):
        p = fusetile.load_problem(PN)
        q = fusetile.apply_target(p, KPU)
        info = q.info()
        self.assertEqual(info["native"]["w"], 32)
        self.assertEqual(info["timing"]["overlap"], "pipeline")
        self.assertNotEqual(info["ops"][0]["base_cost"], 1000.0)
        self.assertEqual(info["op_names"], p.info()["op_names"])        # names survive
        kept = p.with_target(fusetile.load_target(KPU), keep_costs=True)
        self.assertEqual(kept.info()["ops"][0]["base_cost"], 1000.0)
        self.assertEqual(p.info()["native"]["w"], 128)                 # p itself unchanged

    def test_errors(self):
        missing = os.path.join(self.tmp, "nope.cfg")
        self.assertError(fusetile.InputError, missing + ": cannot open", fusetile.load_target, missing)
        cfg = self.write("typo.cfg", 'name = "t";\ncontest = true;\ncontst = 1;\n')
        e = self.assertError(fusetile.InputError, "typo.cfg:3: unknown setting contst (did you mean contest?)", fusetile.load_target, cfg)
        self.assertEqual(e.kind, "input")
        cfg = self.write("syntax.cfg", 'name = "t"\n')
        self.assertError(fusetile.InputError, "syntax.cfg:", fusetile.load_target, cfg)
        with self.assertRaises(TypeError):
            fusetile.apply_target(P1A, None)
        with self.assertRaises(TypeError):
            fusetile.apply_target(P1A, 3)
        with self.assertRaises(TypeError):
            fusetile.load_problem(P1A).with_target(KPU)   # the method takes a Target
        with self.assertRaises(TypeError):
            fusetile.evaluate(P1A, S1A, target=3)
        self.assertError(fusetile.InputError, "cannot open", fusetile.evaluate, P1A, S1A, target=missing)


class TestImportModel(unittest.TestCase):
    """import_model's error paths when the importer cannot be loaded (stand-ins
    in sys.modules; the real importer is run by tests/python/test_import_api.py,
    in the importer's suite, which needs torch)."""

    def with_importer(self, module):
        import sys
        key = "fusetile.importer"
        saved = sys.modules.get(key, "absent")
        sys.modules[key] = module
        self.addCleanup(lambda: sys.modules.pop(key, None) if saved == "absent" else sys.modules.__setitem__(key, saved))

    def test_importer_missing(self):
        self.with_importer(None)     # as if python/fusetile/importer/ did not exist
        with self.assertRaises(fusetile.Error) as cm:
            fusetile.import_model(object(), ())
        self.assertIn("the importer (fusetile.importer) is not available", str(cm.exception))
        self.assertEqual(cm.exception.kind, "missing")

    def test_torch_missing(self):
        import types

        class NoTorch(types.ModuleType):
            def __getattr__(self, name):
                raise ModuleNotFoundError("No module named 'torch'", name="torch")

        self.with_importer(NoTorch("fusetile.importer"))
        with self.assertRaises(fusetile.Error) as cm:
            fusetile.import_model(object(), ())
        self.assertIn("import_model needs PyTorch", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, ImportError)


if __name__ == "__main__":
    unittest.main()
