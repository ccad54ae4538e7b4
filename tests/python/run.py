"""run.py - run the importer's unittest suite (test_import_*.py here) and end with "importer: N passed, M failed".

usage: PYTHON run.py [FUSETILE]   (FUSETILE: the program the end-to-end tests run)
"""

import os
import sys
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if len(sys.argv) > 1:
        os.environ["FT_FUSETILE"] = os.path.abspath(sys.argv[1])
    sys.path.insert(0, HERE)
    warnings.simplefilter("ignore")
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_import_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"importer: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
