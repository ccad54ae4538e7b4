"""run.py - run a Python unittest suite of tests/python and end with "NAME: N passed, M failed" (", K skipped" after it when K > 0, and before it one line "skip: REASON (N tests: ...)" for each reason given for a skip; the convention of tests/run-checks): the importer's (test_import_*.py, the default), the GPU measuring script's (test_measure_*.py) or the Python binding's (test_binding*.py, with the build's python/ on PYTHONPATH).

usage: PYTHON run.py [--suite importer|measure|binding] [FUSETILE]   (FUSETILE: the program the importer's end-to-end tests run)
"""

import os
import sys
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = {"importer": "test_import_*.py", "measure": "test_measure_*.py", "binding": "test_binding*.py"}


def main():
    argv = sys.argv[1:]
    suite_name = "importer"
    if argv[:1] == ["--suite"]:
        if len(argv) < 2 or argv[1] not in SUITES:
            print(f"run.py: --suite needs one of {', '.join(SUITES)}", file=sys.stderr)
            return 2
        suite_name = argv[1]
        argv = argv[2:]
    if argv:
        os.environ["FT_FUSETILE"] = os.path.abspath(argv[0])
    sys.path.insert(0, HERE)
    warnings.simplefilter("ignore")
    suite = unittest.defaultTestLoader.discover(HERE, pattern=SUITES[suite_name], top_level_dir=HERE)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    # one "skip:" line a reason, naming (some of) its tests
    reasons = {}
    for test, reason in result.skipped:
        name = test.id().split(".", 1)[-1]
        reasons.setdefault(" ".join(str(reason).split()) or "no reason given", []).append(name)
    for reason, names in reasons.items():
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        print(f"skip: {reason} ({len(names)} test{'s' if len(names) > 1 else ''}: {shown})")
    skipped = f", {len(result.skipped)} skipped" if result.skipped else ""
    print(f"{suite_name}: {passed} passed, {failed} failed{skipped}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
