/* fuzz_graph.c - libFuzzer harness of the model importer's graph reader (python/fusetile/importer: pipeline._from_json, behind `fusetile import FILE.json`), in CPython embedded: any bytes load as a graph or raise ImportFailure with one line; any other exception is the importer's "internal error" and a finding.  A loaded graph written back (Graph.dumps) loads again to the same text.  It covers the reader and its checks (stages 3 to 5 on a JSON graph), not the lowering, which needs torch. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fuzz.h"

#ifndef FT_SRCDIR
#define FT_SRCDIR "."
#endif

/* The check, in Python: setup(srcdir) makes the package importable
 * without the C extension (a bare `fusetile` package over the source
 * tree's directory, with the two classes the importer's errors.py takes
 * from the package, Error and FallbackWarning, as the built-in classes
 * they derive from: no class is made here that the interpreter would not
 * free at exit) and returns a scratch file; check(data, path) runs the
 * reader on data written there. */
static const char code[] =
    "import os, sys, tempfile, types\n"
    "def setup(srcdir):\n"
    "    pkg = types.ModuleType('fusetile')\n"
    "    pkg.__path__ = [os.path.join(srcdir, 'python', 'fusetile')]\n"
    "    pkg.Error, pkg.FallbackWarning = Exception, UserWarning\n"   /* what importer/errors.py takes */
    "    sys.modules['fusetile'] = pkg\n"
    "    global pipeline, source, ImportFailure\n"
    "    from fusetile.importer import pipeline, source\n"
    "    from fusetile.importer.errors import ImportFailure\n"
    "    fd, path = tempfile.mkstemp(prefix='ft-fuzz-graph.', suffix='.json')\n"
    "    os.close(fd)\n"
    "    return path\n"
    "def read(path):\n"
    "    try:\n"
    "        return pipeline._from_json(source.parse_model(path))\n"
    "    except ImportFailure as e:\n"
    "        line = e.line()\n"
    "        if not line or '\\n' in line:\n"
    "            raise AssertionError('ImportFailure with a message of %d lines: %r' % (line.count('\\n') + 1, line))\n"
    "        return None\n"
    "def check(data, path):\n"
    "    with open(path, 'wb') as f:\n"
    "        f.write(data)\n"
    "    g = read(path)\n"
    "    if g is None:\n"
    "        return\n"
    "    text = g.dumps()\n"
    "    with open(path, 'w') as f:\n"
    "        f.write(text)\n"
    "    g2 = read(path)\n"
    "    if g2 is None or g2.dumps() != text:\n"
    "        raise AssertionError('the graph written back does not read back the same:\\n' + text)\n";

static PyObject *check_fn, *scratch;

/* LeakSanitizer's suppressions for this harness (read by the sanitizer
 * runtime at exit): every block CPython allocates.  The harness runs
 * Python code only (no C of fusetile's), and the importer's shape stage
 * imports torch, whose module objects the leak checker cannot trace back
 * to a root (they are held from torch's own C++ state); a leak among them
 * is not the reader's.  Findings here are exceptions, not leaks. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpython3\n";
}

/* At exit: remove the scratch file.  The interpreter is not finalized:
 * Py_FinalizeEx leaves CPython's own blocks unreferenced, which a leak
 * checker would blame on the harness; left running, they stay reachable.
 * (Nor is its garbage collected here: by then other exit handlers, torch's
 * among them, have freed what the collector would read.) */
static void finish(void)
{
    const char *path = scratch ? PyUnicode_AsUTF8(scratch) : NULL;
    if (path)
        remove(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (check_fn)
        return 0;
    /* Under AddressSanitizer, every Python object from malloc
     * (PYTHONMALLOC=malloc): pymalloc's arenas are mmap'd, where
     * LeakSanitizer does not look for the pointers that keep blocks alive.
     * Not under valgrind, which then blames CPython's own code for
     * uninitialised reads (pymalloc hides them). */
    PyPreConfig preconfig;
    PyPreConfig_InitIsolatedConfig(&preconfig);
#if defined(__SANITIZE_ADDRESS__)
    preconfig.allocator = PYMEM_ALLOCATOR_MALLOC;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    preconfig.allocator = PYMEM_ALLOCATOR_MALLOC;
#endif
#endif
    PyStatus pre = Py_PreInitialize(&preconfig);
    if (PyStatus_Exception(pre))
        FZ_FAIL("cannot start Python: %s", pre.err_msg ? pre.err_msg : "?");
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);   /* no environment, no user site: the same run everywhere */
    config.install_signal_handlers = 0;
    PyStatus status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
        FZ_FAIL("cannot start Python: %s", status.err_msg ? status.err_msg : "?");
    PyObject *globals = PyDict_New();
    if (!globals || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) != 0)
        FZ_FAIL("Python: cannot make the globals");
    PyObject *r = PyRun_String(code, Py_file_input, globals, globals);
    if (!r) {
        PyErr_Print();
        FZ_FAIL("Python: the check does not compile");
    }
    Py_DECREF(r);
    const char *srcdir = getenv("FT_SRCDIR");
    PyObject *setup = PyDict_GetItemString(globals, "setup");
    scratch = setup ? PyObject_CallFunction(setup, "s", srcdir && *srcdir ? srcdir : FT_SRCDIR) : NULL;
    if (!scratch) {
        PyErr_Print();
        FZ_FAIL("Python: setup failed (is FT_SRCDIR the source tree?)");
    }
    check_fn = PyDict_GetItemString(globals, "check");
    Py_XINCREF(check_fn);
    Py_DECREF(globals);
    if (!check_fn)
        FZ_FAIL("Python: no check function");
    atexit(finish);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!check_fn)
        LLVMFuzzerInitialize(NULL, NULL);
    PyObject *r = PyObject_CallFunction(check_fn, "y#O", (const char *)data, (Py_ssize_t)size, scratch);
    if (!r) {
        PyErr_Print();
        FZ_FAIL("the graph reader raised an exception other than ImportFailure (above)");
    }
    Py_DECREF(r);
    return 0;
}
