"""test_binding_notebook.py - the fusetile Python package in a notebook: Ctrl-C during schedule/simulate (KeyboardInterrupt within a second, the best schedule attached), progress callbacks and the default reporter, results with seconds and to_rows() (pandas when installed), simulate's effects-off replays as `fusetile simulate --json`, targets from dicts and with_(), and sweeps.

Run by tests/cli/test_python.sh (make check) with PYTHONPATH=BUILDDIR/python:
    PYTHONPATH=python /usr/bin/python3 tests/python/run.py --suite binding
"""
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import fusetile

SRC = os.environ.get("FT_SRCDIR") or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VEC = os.path.join(SRC, "tests", "vectors")
TARGETS = os.path.join(SRC, "targets")
B5 = os.path.join(SRC, "benchmarks", "mlsys-2026-5.json")  # not at its bound within a minute
E = os.path.join(VEC, "E-mlp-fused.problem.json")
PN = os.path.join(VEC, "N-named-mlp.problem.json")
SN = os.path.join(VEC, "N-named-mlp.solution.json")
KPU = os.path.join(TARGETS, "kpu.cfg")
H100 = os.path.join(TARGETS, "gpu-h100.cfg")

EVAL_COLUMNS = ["subgraph", "label", "ops", "w [elements]", "h [elements]", "k [elements]", "tiles", "steps",
                "compute_bound_steps", "memory_bound_steps", "peak_working_set [elements]", "loaded [elements]",
                "written [elements]", "compute_time [cost units]", "memory_time [cost units]", "latency [cost units]",
                "share [%]"]
SIM_COLUMNS = ["subgraph", "label", "ops", "w [elements]", "h [elements]", "k [elements]", "steps",
               "simulated [cost units]", "analytic [cost units]", "difference [cost units]", "relative_difference",
               "peak_occupancy [elements]", "channel_busy [%]", "compute_busy [%]", "accounted_for_by"]


_SAVED_SIGINT = None


def setUpModule():
    # Python raises KeyboardInterrupt on SIGINT only when it installed its
    # handler at startup, which it does not when SIGINT was ignored then (a
    # test run started in the background by a non-interactive shell): put
    # the handler a terminal or notebook has in place for these tests
    global _SAVED_SIGINT
    _SAVED_SIGINT = signal.signal(signal.SIGINT, signal.default_int_handler)


def tearDownModule():
    signal.signal(signal.SIGINT, _SAVED_SIGINT)


def _sigint_default():
    """preexec_fn of a child that acts as a program started at a terminal: SIGINT at its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_in(seconds, sig=signal.SIGINT):
    """SIGINT to this process `seconds` from now (a timer thread)."""
    t = threading.Timer(seconds, os.kill, (os.getpid(), sig))
    t.daemon = True
    t.start()
    return t


class TestInterrupt(unittest.TestCase):
    def test_ctrl_c_schedule_keeps_best(self):
        # before: SIGINT at 2 s was handled when the 60 s search ended
        p = fusetile.load_problem(B5)
        seen = []
        t0 = time.monotonic()
        timer = kill_in(2.0)
        try:
            with self.assertRaises(KeyboardInterrupt) as cm:
                fusetile.schedule(p, time_limit=60, progress=seen.append)
        finally:
            timer.cancel()
        elapsed = time.monotonic() - t0
        self.assertLess(elapsed, 3.5, "KeyboardInterrupt came %.2f s after the start (SIGINT at 2 s)" % elapsed)
        e = cm.exception
        self.assertIsInstance(e.schedule, dict)
        self.assertIsInstance(e.evaluation, fusetile.Evaluation)
        self.assertGreater(e.evaluation["total"], 0)
        # the attached schedule is the best so far, valid: evaluate agrees
        again = fusetile.evaluate(p, e.schedule)
        self.assertAlmostEqual(again["total"], e.evaluation["total"], delta=1e-9 * again["total"])
        self.assertTrue(seen and all(d["what"] == "schedule" for d in seen))
        self.assertTrue({"elapsed", "limit", "fraction", "best", "bound", "evals", "pass", "threads"} <= set(seen[-1]))

    def test_ctrl_c_subprocess(self):
        # as a user at a terminal: SIGINT from outside, the process ends with
        # KeyboardInterrupt and prints the schedule it got
        code = ("import fusetile, sys\n"
                "try:\n"
                "    fusetile.schedule(%r, time_limit=60, progress=False)\n"
                "except KeyboardInterrupt as e:\n"
                "    print('interrupted', e.evaluation['total'], len(e.schedule['subgraphs']))\n"
                "    sys.exit(3)\n" % B5)
        env = dict(os.environ)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=_sigint_default)
        time.sleep(2.0)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertLess(time.monotonic() - t0, 1.5)
        self.assertEqual(proc.returncode, 3, err.decode())
        self.assertRegex(out.decode(), r"^interrupted [0-9.e+]+ [0-9]+$")

    def test_ctrl_c_simulate(self):
        # a replay of 268M steps (seconds even at the simulator's 60 M
        # steps a second, then its analytic side): SIGINT at 1 s ends it
        # within a second, through the simulator's progress callback
        d = {"widths": [65536, 65536], "heights": [65536, 65536], "inputs": [[0]], "outputs": [[1]], "base_costs": [10],
             "op_types": ["Pointwise"], "fast_memory_capacity": 1000, "slow_memory_bandwidth": 2,
             "native_granularity": [4, 4]}
        s = {"subgraphs": [[0]], "granularities": [[4, 4, 1]], "tensors_to_retain": [[]], "traversal_orders": [None]}
        seen = []
        t0 = time.monotonic()
        timer = kill_in(1.0)
        try:
            with self.assertRaises(KeyboardInterrupt):
                fusetile.simulate(d, s, progress=seen.append, effects=False)
        finally:
            timer.cancel()  # a replay that ended first leaves no SIGINT for the next test
        self.assertLess(time.monotonic() - t0, 2.5)
        self.assertTrue(seen and seen[-1]["what"] == "simulate" and seen[-1]["total"] == 2 * 268435456, seen[-1:])
        # the simulator is usable afterwards
        r = fusetile.simulate(os.path.join(VEC, "ex1A.problem.json"), os.path.join(VEC, "ex1A.solution.json"),
                              progress=False)
        self.assertTrue(r["agree"])

    def test_progress_exception_stops_search(self):
        class Enough(Exception):
            pass

        def progress(d):
            if d["elapsed"] > 0.5:
                raise Enough()

        t0 = time.monotonic()
        with self.assertRaises(Enough) as cm:
            fusetile.schedule(B5, time_limit=30, progress=progress)
        self.assertLess(time.monotonic() - t0, 2.5)
        self.assertIn("subgraphs", cm.exception.schedule)

    def test_progress_type(self):
        with self.assertRaises(TypeError):
            fusetile.schedule(E, time_limit=1, progress="yes")

    def test_no_output_when_not_interactive(self):
        # progress=None prints nothing when stderr is not a terminal
        code = "import fusetile; fusetile.schedule(%r, time_limit=1.5); print('done')" % B5
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stderr, b"")

    def test_progress_true_line(self):
        # progress=True forces the reporter: tqdm's bar or the stderr line
        code = ("import sys, fusetile\nsys.modules['tqdm'] = None\n"
                "fusetile.schedule(%r, time_limit=1.5, progress=True)" % B5)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertIn(b"fusetile: schedule:", r.stderr)
        self.assertIn(b"best", r.stderr)


class TestResults(unittest.TestCase):
    def check_rows(self, rows, columns, n):
        self.assertEqual(len(rows), n)
        for i, row in enumerate(rows):
            self.assertEqual(list(row), columns)
            self.assertEqual(row["subgraph"], i)
            for k, v in row.items():
                self.assertIsInstance(v, (int, float, str), k)

    def test_evaluate_rows_and_seconds(self):
        t = fusetile.load_target(KPU)
        s, ev = fusetile.schedule(E, time_limit=1, target=t, progress=False)
        self.assertIsInstance(ev, dict)
        self.assertEqual(ev["clock_hz"], 1e9)
        self.assertAlmostEqual(ev["total_seconds"], ev["total"] / 1e9)
        rows = ev.to_rows()
        self.check_rows(rows, EVAL_COLUMNS + ["latency [s]"], len(ev["subgraphs"]))
        self.assertAlmostEqual(sum(r["latency [s]"] for r in rows), ev["total_seconds"])
        self.assertAlmostEqual(sum(r["share [%]"] for r in rows), 100.0)
        self.assertEqual(ev.units["latency [s]"], "s")
        self.assertEqual(ev.units["latency [cost units]"], "cost units")
        self.assertIsNone(ev.units["tiles"])

    def test_contest_has_no_seconds(self):
        ev = fusetile.evaluate(PN, SN)
        self.assertEqual(ev["total"], fusetile.evaluate(PN, SN)["total"])  # dict access unchanged
        self.assertNotIn("total_seconds", ev)
        self.check_rows(ev.to_rows(), EVAL_COLUMNS, len(ev["subgraphs"]))
        # the names' labels, whole (the CLI's table cuts at 48 columns)
        self.assertEqual([r["label"] for r in ev.to_rows()], [g["label"] for g in ev["subgraphs"]])

    def test_simulate_as_cli_json(self):
        # simulate gives what `fusetile simulate --json` gives, from the same
        # library call (ft_sim_effects_run)
        t = fusetile.load_target(KPU)
        s, _ev = fusetile.schedule(E, time_limit=1, target=t, progress=False)
        r = fusetile.simulate(E, s, target=t, progress=False)
        self.assertAlmostEqual(r["total_seconds"], r["total_simulated"] / 1e9)
        self.assertFalse(r["agree"])
        self.assertTrue(r["accounted"])
        self.assertEqual(r["accounted_for_by"], "double buffering")
        names = [x["turned_off"] for x in r["effects_off"]]
        self.assertIn("double buffering", names)
        self.assertEqual(names[-1], "all effects")
        self.check_rows(r.to_rows(), SIM_COLUMNS + ["simulated [s]"], len(r["subgraphs"]))
        # the build's program beside python/fusetile (skipped without it)
        fusetile_bin = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(fusetile.__file__)))), "fusetile")
        if not (os.path.isfile(fusetile_bin) and os.access(fusetile_bin, os.X_OK)):
            self.skipTest("no fusetile program beside the package to compare with")
        with tempfile.TemporaryDirectory() as tmp:
            sp = os.path.join(tmp, "s.json")
            with open(sp, "w") as f:
                json.dump(s, f)
            out = subprocess.run([fusetile_bin, "simulate", E, sp, "--target", KPU, "--json"], capture_output=True,
                                 timeout=120).stdout
        cli = json.loads(out)
        for k in ("total_simulated", "total_analytic", "total_seconds", "accounted", "accounted_for_by"):
            self.assertEqual(r[k], cli[k], k)
        self.assertEqual([(x["turned_off"], x["total_simulated"]) for x in r["effects_off"]],
                         [(x["turned_off"], x["total_simulated"]) for x in cli["effects_off"]])
        self.assertEqual([g["accounted_for_by"] for g in r["subgraphs"]], [g["accounted_for_by"] for g in cli["subgraphs"]])

    def test_simulate_h100_seconds(self):
        t = fusetile.load_target(H100)
        s, ev = fusetile.schedule(E, time_limit=1, target=t, progress=False)
        r = fusetile.simulate(E, s, target=t, effects=False, progress=False)
        hz = t.info()["clock_hz"]
        self.assertAlmostEqual(r["total_seconds"], r["total_simulated"] / hz)
        self.assertEqual(r["effects_off"], [])
        self.assertGreater(r["total_seconds"], 0)

    def test_pandas(self):
        try:
            import pandas
        except ImportError:
            self.skipTest("pandas is not installed (to_rows() is checked without it)")
        ev = fusetile.evaluate(PN, SN)
        df = pandas.DataFrame(ev.to_rows())
        self.assertEqual(list(df.columns), EVAL_COLUMNS)
        self.assertEqual(len(df), len(ev["subgraphs"]))
        self.assertAlmostEqual(float(df["latency [cost units]"].sum()), ev["total"])


class TestTargets(unittest.TestCase):
    KPU_DICT = {
        "name": "mini", "description": "a made-up machine", "contest": False, "clock_hz": 1.0e9, "element_bytes": 2,
        "fast_memory": {"capacity_bytes": 262144},
        "slow_memory": {"read_bandwidth": 32.0, "write_bandwidth": 16.0, "transfer_latency": 100,
                        "separate_channels": True},
        "compute": {"native_granularity": {"w": 32, "h": 32, "k": 32}, "allow_larger_granularity": False,
                    "matmul_macs_per_cycle": 1024.0, "pointwise_elements_per_cycle": 32.0},
        "execution": {"launch_overhead": 200, "double_buffering": True},
    }

    def test_from_dict_same_as_file(self):
        a = fusetile.Target.from_dict(self.KPU_DICT)
        b = fusetile.load_target(KPU)
        ia, ib = a.info(), b.info()
        for k in ("clock_hz", "capacity_bytes", "read_bandwidth", "native_w", "matmul_macs_per_cycle", "launch_overhead"):
            self.assertEqual(ia[k], ib[k], k)
        self.assertEqual(fusetile.target(self.KPU_DICT).name, "mini")
        s, _ev = fusetile.schedule(E, time_limit=1, target=KPU, progress=False)
        self.assertEqual(fusetile.evaluate(E, s, target=self.KPU_DICT)["total"],
                         fusetile.evaluate(E, s, target=KPU)["total"])

    def test_from_dict_errors(self):
        d = dict(self.KPU_DICT, clock_hz=-1.0)
        with self.assertRaises(fusetile.InputError) as cm:
            fusetile.Target.from_dict(d)
        self.assertIn("clock_hz", str(cm.exception))
        with self.assertRaises(fusetile.InputError) as cm:
            fusetile.target(dict(self.KPU_DICT, clock_hx=1.0))
        self.assertIn("clock_hx", str(cm.exception))
        with self.assertRaises(TypeError):
            fusetile.Target.from_dict([1, 2])
        with self.assertRaises(TypeError):
            fusetile.Target.from_dict({"name": object()})

    def test_with(self):
        t = fusetile.load_target(KPU)
        base = fusetile.load_problem(PN).with_target(t).info()
        t2 = t.with_(capacity=base["capacity"] * 2, bandwidth=8.0, launch=0)
        self.assertEqual(t2.overrides, {"capacity": base["capacity"] * 2, "bandwidth": 8.0, "launch": 0.0})
        self.assertEqual(t.overrides, {})
        info = fusetile.load_problem(PN).with_target(t2).info()
        self.assertEqual(info["capacity"], base["capacity"] * 2)
        self.assertEqual(info["bandwidth"], 8.0)
        self.assertEqual(info["timing"]["launch_overhead"], 0.0)
        # chained, and the write bandwidth keeps its ratio (ft_problem_override)
        t3 = t2.with_(overlap="none", native=(16, 16))
        info3 = fusetile.load_problem(PN).with_target(t3).info()
        self.assertEqual(info3["timing"]["overlap"], "none")
        self.assertEqual((info3["native"]["w"], info3["native"]["h"]), (16, 16))
        self.assertEqual(info3["capacity"], base["capacity"] * 2)
        self.assertAlmostEqual(info["timing"]["write_bandwidth"] / info["bandwidth"],
                               base["timing"]["write_bandwidth"] / base["bandwidth"])
        s, _ev = fusetile.schedule(E, time_limit=1, target=KPU, progress=False)
        ev = fusetile.evaluate(E, s, target=fusetile.target(KPU, launch=0))
        ev0 = fusetile.evaluate(E, s, target=KPU)
        self.assertLess(ev["total"], ev0["total"])

    def test_with_errors(self):
        t = fusetile.load_target(KPU)
        with self.assertRaises(fusetile.UsageError):
            t.with_(capacitee=1)
        with self.assertRaises(fusetile.UsageError):
            t.with_(capacity=0)
        with self.assertRaises(fusetile.UsageError):
            t.with_(overlap="sometimes")
        with self.assertRaises(TypeError):
            t.with_(capacity="big")
        with self.assertRaises(TypeError):
            t.with_(4)
        with self.assertRaises(fusetile.UsageError):
            t.with_(native=(0, 16))


class TestSweep(unittest.TestCase):
    def test_sweep_dict_and_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "out.db")
            seen = []
            rows = fusetile.sweep({"problems": [E, PN], "capacity": [3000.0, 6000.0], "time_limit": 0.3}, db=db,
                                  jobs=2, progress=seen.append)
            self.assertEqual(len(rows), 4)
            self.assertEqual([r["idx"] for r in rows], [0, 1, 2, 3])
            self.assertTrue(all(r["status"] == "ok" and r["total"] > 0 for r in rows), rows)
            self.assertEqual(sorted({r["capacity"] for r in rows}), [3000.0, 6000.0])
            # a rerun keeps what is done
            again = fusetile.sweep({"problems": [E, PN], "capacity": [3000.0, 6000.0], "time_limit": 0.3}, db=db,
                                   progress=False)
            self.assertEqual([r["finished_at"] for r in again], [r["finished_at"] for r in rows])
            cfg = os.path.join(tmp, "s.cfg")
            with open(cfg, "w") as f:
                f.write('problems = ["%s"];\ntime_limit = 0.3;\nseed = [1, 2];\n' % E)
            rows = fusetile.sweep(cfg, jobs=1, progress=False)
            self.assertEqual(len(rows), 2)
            self.assertTrue(os.path.exists(os.path.join(tmp, "s.db")))

    def test_sweep_energy(self):
        # each row has the run's joules and watts: evaluate()'s on a target
        # with an energy group, None on the contest machine
        with tempfile.TemporaryDirectory() as tmp:
            kpu = os.path.join(SRC, "targets", "kpu.cfg")
            rows = fusetile.sweep({"problems": [E], "targets": [kpu, "none"], "strategy": "rules"},
                                  db=os.path.join(tmp, "e.db"), jobs=1, progress=False)
            self.assertEqual(len(rows), 2)
            on, off = rows
            self.assertTrue(on["energy_j"] > 0 and on["power_w"] > 0, on)
            self.assertIsNone(off["energy_j"])
            self.assertIsNone(off["power_w"])
            s, r = fusetile.schedule(E, target=kpu, strategy="rules", progress=False)
            self.assertEqual(r["total"], on["total"])
            self.assertAlmostEqual(r["energy_j"], on["energy_j"], delta=1e-12 * on["energy_j"])
            self.assertAlmostEqual(r["power_w"], on["power_w"], delta=1e-9 * on["power_w"])

    def test_sweep_ctrl_c(self):
        # SIGINT stops the workers (the pool's own handler) and raises
        # KeyboardInterrupt with the rows finished so far
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            kill_in(2.5)
            with self.assertRaises(KeyboardInterrupt) as cm:
                fusetile.sweep({"problems": [E, B5], "time_limit": [0.2, 30.0]}, db=os.path.join(tmp, "i.db"), jobs=2,
                               progress=False)
            self.assertLess(time.monotonic() - t0, 5.0)
            rows = cm.exception.rows
            self.assertTrue(rows and all(r["status"] == "ok" for r in rows), rows)
            self.assertLess(len(rows), 4)

    def test_sweep_errors(self):
        with self.assertRaises(fusetile.InputError) as cm:
            fusetile.sweep({"problems": ["/nonexistent.json"]}, db=os.devnull + ".x", progress=False)
        self.assertIn("nonexistent", str(cm.exception))
        with self.assertRaises(fusetile.UsageError):
            fusetile.sweep({"problems": [E]}, jobs=-1, progress=False)
        with self.assertRaises(TypeError):
            fusetile.sweep(3)


if __name__ == "__main__":
    unittest.main()
