"""test_binding_target_names.py - shipped targets by name in the Python binding: load_target("kpu") and target="gpu-h100-sm" find targets/NAME.cfg (ft_target_find), $FUSETILE_TARGETS comes first, an unknown name says where it looked and lists the shipped names.

Run by tests/cli/test_python.sh (make check) with PYTHONPATH=BUILDDIR/python:
    PYTHONPATH=python /usr/bin/python3 -m unittest discover -s tests/python -p 'test_binding*.py'
"""
import os
import shutil
import tempfile
import unittest

import fusetile

SRC = os.environ.get("FT_SRCDIR") or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TARGETS = os.path.join(SRC, "targets")
P1A = os.path.join(SRC, "tests", "vectors", "ex1A.problem.json")
S1A = os.path.join(SRC, "tests", "vectors", "ex1A.solution.json")


class TestTargetNames(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self._env = os.environ.pop("FUSETILE_TARGETS", None)
        self._cwd = os.getcwd()
        os.chdir(self.tmp)  # no targets/ here: the name is found in the shipped directory

    def tearDown(self):
        os.chdir(self._cwd)
        os.environ.pop("FUSETILE_TARGETS", None)
        if self._env is not None:
            os.environ["FUSETILE_TARGETS"] = self._env
        self._tmp.cleanup()

    def test_name(self):
        for name in ("kpu", "kpu.cfg"):
            t = fusetile.load_target(name)
            self.assertEqual(t.name, "kpu")
            self.assertEqual(os.path.realpath(t.path), os.path.realpath(os.path.join(TARGETS, "kpu.cfg")))

    def test_target_argument(self):
        by_name = fusetile.evaluate(P1A, S1A, target="gpu-h100-sm")
        by_path = fusetile.evaluate(P1A, S1A, target=os.path.join(TARGETS, "gpu-h100-sm.cfg"))
        self.assertEqual(by_name["total"], by_path["total"])

    def test_search_path_first(self):
        mine = os.path.join(self.tmp, "mine")
        os.mkdir(mine)
        shutil.copy(os.path.join(TARGETS, "kpu.cfg"), os.path.join(mine, "gpu-h100.cfg"))
        os.environ["FUSETILE_TARGETS"] = "/nonexistent:" + mine
        t = fusetile.load_target("gpu-h100")
        self.assertEqual((t.name, t.path), ("kpu", os.path.join(mine, "gpu-h100.cfg")))

    def test_unknown(self):
        with self.assertRaises(fusetile.InputError) as cm:
            fusetile.load_target("kpu2")
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("kpu2: no such file or shipped target (looked in ./, "), msg)
        self.assertIn("; shipped targets: contest, example, gpu-h100, gpu-h100-sm, gpu-h200, kpu, kpu-chip, tpu-v5e, "
                      "tpu-v5e-chip; give a path or a name", msg)


if __name__ == "__main__":
    unittest.main()
