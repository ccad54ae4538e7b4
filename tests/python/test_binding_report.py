"""test_binding_report.py - fusetile.report: the HTML page of a schedule from Python (the library's ft_report_html, as `fusetile report`), its embedded JSON against evaluate() and simulate(), the file it writes, and its errors.

Run by tests/cli/test_python.sh (make check) with PYTHONPATH=BUILDDIR/python.
"""
import json
import os
import re
import tempfile
import unittest

import fusetile

SRC = os.environ.get("FT_SRCDIR") or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VEC = os.path.join(SRC, "tests", "vectors")
KPU = os.path.join(SRC, "targets", "kpu.cfg")
PROB = os.path.join(VEC, "N-named-mlp.problem.json")
SOL = os.path.join(VEC, "N-named-mlp.solution.json")
QUICK = dict(time_limit=0.5, threads=1)


def data(page):
    """The page's JSON document."""
    blocks = re.findall(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert len(blocks) == 1, len(blocks)
    return json.loads(blocks[0])


class TestReport(unittest.TestCase):
    def test_page_matches_evaluate_and_simulate(self):
        page = fusetile.report(PROB, SOL, strategies="rules", **QUICK)
        self.assertTrue(page.startswith("<!DOCTYPE html>"), page[:40])
        d = data(page)
        ev = fusetile.evaluate(PROB, SOL)
        sim = fusetile.simulate(PROB, SOL)
        self.assertEqual(d["total"], ev["total"])
        self.assertEqual([g["latency"] for g in d["subgraphs"]], [g["latency"] for g in ev["subgraphs"]])
        self.assertEqual([g["layers"] for g in d["subgraphs"]], [g["op_names"] for g in ev["subgraphs"]])
        self.assertEqual(d["simulation"]["total_simulated"], sim["total_simulated"])
        self.assertEqual(d["subgraphs"][-1]["end"], sum(g["simulated"] for g in sim["subgraphs"]))
        self.assertEqual(d["schedule"]["path"], SOL)
        self.assertEqual(d["problem"]["path"], PROB)
        self.assertEqual([s["name"] for s in d["strategies"]], ["rules"])
        self.assertIsNone(d["target"])
        self.assertEqual(d["time_unit"], "cost units")
        self.assertEqual(page.count(">not yet computed for this target</p>"), 2)
        self.assertNotRegex(page, r'(src|href)\s*=\s*"?(https?:)?//')

    def test_target_and_search(self):
        """No schedule: the search's, on the target; its row is this schedule."""
        t = fusetile.load_target(KPU)
        page = fusetile.report(fusetile.load_problem(PROB), target=t, strategies="search", **QUICK)
        d = data(page)
        self.assertEqual(d["schedule"]["source"], "search")
        self.assertEqual(d["target"]["name"], "kpu")
        self.assertEqual(d["time_unit"], "cycles")
        self.assertEqual(len(d["strategies"]), 1)
        self.assertEqual(d["strategies"][0]["source"], "this schedule")
        self.assertEqual(d["strategies"][0]["total"], d["total"])
        rf = d["roofline"]
        for g in d["subgraphs"]:
            if g["intensity"] and g["throughput"]:
                self.assertLessEqual(g["throughput"], min(rf["compute_roof"], rf["data_roof"] * g["intensity"]) * (1 + 1e-9))

    def test_names_escaped(self):
        """Layer names with markup stay text: escaped in the page, whole in its JSON."""
        with open(PROB) as f:
            d = json.load(f)
        evil = '</script><b class="x">&amp;\'</b>'
        d["op_names"] = [evil + str(i) for i in range(len(d["op_names"]))]
        page = fusetile.report(fusetile.problem_from_dict(d), SOL, strategies="none", **QUICK)
        self.assertNotIn("<b class=", page)
        self.assertEqual(page.count("</script>"), 2)  # the data's and the script's own
        got = data(page)
        self.assertEqual([n for g in got["subgraphs"] for n in g["layers"]], d["op_names"])

    def test_writes_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.html")
            with open(out, "w") as f:
                f.write("previous")
            page = fusetile.report(PROB, SOL, path=out, strategies="none", **QUICK)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), page)
            self.assertEqual(sorted(os.listdir(tmp)), ["r.html"])  # no temporary file left
            with self.assertRaises(fusetile.InputError) as cm:
                fusetile.report(PROB, SOL, path=tmp, strategies="none", **QUICK)  # a directory
            self.assertIn(tmp, str(cm.exception))

    def test_progress_and_stop(self):
        """progress sees the phases; an exception from it stops the report, which writes nothing."""
        seen = []
        fusetile.report(PROB, SOL, strategies="rules,patterns", progress=seen.append, **QUICK)
        self.assertTrue(seen, "progress was never called")
        self.assertEqual({d["what"] for d in seen}, {"report"})
        self.assertTrue(all(d["total"] == 4 and 0 <= d["done"] <= 4 for d in seen), seen[:3])  # evaluation, replay, 2 strategies

        class Stop(Exception):
            pass

        def stop(d):
            raise Stop("stop at %d" % d["done"])

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.html")
            with self.assertRaises(Stop):
                fusetile.report(PROB, strategies="search", path=out, progress=stop, time_limit=5, threads=1)
            self.assertEqual(os.listdir(tmp), [])

    def test_errors(self):
        with self.assertRaises(fusetile.InvalidScheduleError) as cm:
            fusetile.report(os.path.join(VEC, "X-oom.problem.json"), os.path.join(VEC, "X-oom.solution.json"),
                            strategies="none", **QUICK)
        self.assertEqual(cm.exception.reason, "oom")
        with self.assertRaises(fusetile.UsageError):
            fusetile.report(PROB, SOL, strategies="rules,bogus", **QUICK)
        with self.assertRaises(fusetile.UsageError):
            fusetile.report(PROB, SOL, time_limit=0)
        with self.assertRaises(TypeError):
            fusetile.report(PROB, 42)
        with self.assertRaises(fusetile.InputError):
            fusetile.report(os.path.join(VEC, "no-such.problem.json"))


if __name__ == "__main__":
    unittest.main()
