/* cmd_import.c - `fusetile import`: run the Python model importer (python/fusetile/importer) with the configured Python that has torch. */
/* realpath */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by the Makefile on the cli objects: the Python that imports torch
 * (configure's PYTHON_TORCH, empty when there is none), the importer's
 * directories in the build tree (where make puts the binding's C extension,
 * fusetile/_fusetile*.so, which --target needs, with copies of the .py
 * files when it is not the source tree), in the source tree and after
 * `make install` (the .py files and the extension), and the installed
 * program's directory. */
#ifndef FT_PYTHON_TORCH
#define FT_PYTHON_TORCH ""
#endif
#ifndef FT_PYTHON_BUILDDIR
#define FT_PYTHON_BUILDDIR ""
#endif
#ifndef FT_PYTHON_SRCDIR
#define FT_PYTHON_SRCDIR ""
#endif
#ifndef FT_PYTHON_INSTDIR
#define FT_PYTHON_INSTDIR ""
#endif
#ifndef FT_BINDIR
#define FT_BINDIR ""
#endif

static const char import_help[] =
    "usage: fusetile import MODEL [--input-shape 1x3x224x224]... [--dtype bf16|fp16|fp32|int8]\n"
    "                       [--target T.cfg] [--graph-only] [--frontend auto|fx|onnx]\n"
    "                       [--batch-split N] [--group-split N] [--as compiler|eager]\n"
    "                       [-o OUT.json] [--quiet]\n"
    "\n"
    "Imports a PyTorch or ONNX model and writes a scheduling problem in the\n"
    "contest's format (SPEC section 1), with op_names, op_kinds and tensor_names,\n"
    "or with --graph-only the model graph (docs/MODEL_GRAPH.md).  The lowering\n"
    "rules and their approximations are in docs/LOWERING.md.  The importer is\n"
    "Python (python/fusetile/importer), run with the Python 3 that configure\n"
    "found with torch, or the one FUSETILE_PYTHON names.\n"
    "\n"
    "MODEL is one of\n"
    "  torchvision:NAME      a torchvision.models constructor, weights=None (nothing is\n"
    "                        downloaded; weights are never read, so none are initialised)\n"
    "  FILE.py:CALLABLE      CALLABLE() returns an nn.Module (its `input_shapes`\n"
    "                        attribute, when it has one, gives the default shapes)\n"
    "  FILE.onnx             an ONNX model\n"
    "  FILE.json             a model graph written by --graph-only\n"
    "\n"
    "  --input-shape S   the shape of one model input, sizes joined by x; once per input,\n"
    "                    in order (default: 1x3x224x224 for torchvision models)\n"
    "  --dtype D         element type of the problem (default bf16): sizes are in\n"
    "                    elements of D; with a target, capacity = capacity_bytes / bytes(D),\n"
    "                    bandwidth = read_bandwidth x slow_memory.efficiency / bytes(D),\n"
    "                    base costs scaled by bytes(D) / element_bytes\n"
    "  --target T.cfg    machine and base costs from a target file, or a shipped target's\n"
    "                    name (kpu, gpu-h100; docs/TARGETS.md), read\n"
    "                    and applied by the C library (ft_target_apply: base costs in\n"
    "                    cycles from native w, h and k, the throughputs, their\n"
    "                    efficiencies and kind_cost); needs the Python binding, which\n"
    "                    make builds when configure finds python3-dev (default: the\n"
    "                    contest-like machine of docs/LOWERING.md)\n"
    "  --graph-only      write the model graph, not the problem\n"
    "  --frontend F      auto (default): torch.fx, falling back to an ONNX export when\n"
    "                    the model cannot be traced; fx or onnx: only that one\n"
    "  --batch-split N   batched products (attention) with at most N batch elements\n"
    "                    become one MatMul per element; larger ones are folded (default 1)\n"
    "  --group-split N   grouped convolutions with at most N groups become one GEMM per\n"
    "                    group; more groups are folded into one GEMM (default 4)\n"
    "  --as L            compiler (default): batch norm folded into its convolution, each\n"
    "                    convolution an im2col Layout and a MatMul; eager: the kernels\n"
    "                    PyTorch's eager mode runs on CUDA, each op its own (batch norm\n"
    "                    as three, cuDNN's transposes around a convolution, views free),\n"
    "                    a convolution's im2col and MatMul one kernel (implicit GEMM);\n"
    "                    the kernels go in \"op_kernels\" (docs/LOWERING.md)\n"
    "  -o, --output OUT  write there, atomically (default: stdout)\n"
    "  -q, --quiet       no summary lines on stderr\n"
    "  --help            this text\n"
    "\n"
    "On stderr: the graph's ops per canonical op, then (without --graph-only)\n"
    "the problem's ops per type and what the lowering did.  Errors are one line,\n"
    "\"fusetile import: NODE (OP): MESSAGE (hint: ...)\".\n"
    "Exit status: 0 written, 2 bad input, unsupported model or unwritable output.\n";

/* Messages of this command read like the importer's own ("fusetile import: ..."). */
static void import_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void import_error(const char *fmt, ...)
{
    va_list ap;
    fputs("fusetile import: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* 1 when DIR holds the importer package (DIR/fusetile/importer/__main__.py). */
static int has_importer(const char *dir)
{
    char path[PATH_MAX];
    struct stat sb;
    if (!dir || !*dir)
        return 0;
    if (snprintf(path, sizeof path, "%s/fusetile/importer/__main__.py", dir) >= (int)sizeof path)
        return 0;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* 1 when this program is the installed one (it runs from FT_BINDIR). */
static int running_installed(void)
{
    char exe[PATH_MAX], bindir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || !*FT_BINDIR || !realpath(FT_BINDIR, bindir))
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return strcmp(exe, bindir) == 0;
}

int cmd_import(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(import_help, stdout);
            return EXIT_OK;
        }
    }
    const char *python = getenv("FUSETILE_PYTHON");
    if (!python || !*python)
        python = FT_PYTHON_TORCH;
    if (!*python) {
        import_error("no Python 3 with torch was found when fusetile was configured "
                     "(hint: install python3-torch, python3-torchvision and python3-onnx and rerun ./configure, "
                     "or set FUSETILE_PYTHON)");
        return EXIT_USAGE;
    }
    /* for a program run from the build tree, the build tree's python/ (the
     * binding's extension beside the .py files; without the extension a
     * build tree that is not the source tree has no .py files there), then
     * the source tree's; for the installed program, the installed copy; the
     * others as a fallback */
    const char *dirs[3] = {FT_PYTHON_BUILDDIR, FT_PYTHON_SRCDIR, FT_PYTHON_INSTDIR};
    if (running_installed()) {
        dirs[0] = FT_PYTHON_INSTDIR;
        dirs[1] = FT_PYTHON_BUILDDIR;
        dirs[2] = FT_PYTHON_SRCDIR;
    }
    const char *dir = NULL;
    for (int i = 0; i < 3 && !dir; i++)
        if (has_importer(dirs[i]))
            dir = dirs[i];
    if (!dir) {
        import_error("cannot find the importer's Python files in %s, %s or %s "
                     "(hint: run 'make install', or run fusetile from its build tree)", dirs[0], dirs[1], dirs[2]);
        return EXIT_USAGE;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(dir) + (old && *old ? strlen(old) + 1 : 0) + 1;
    char *path = malloc(len);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!path || !args) {
        import_error("out of memory");
        free(path);
        free(args);
        return EXIT_USAGE;
    }
    snprintf(path, len, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    if (setenv("PYTHONPATH", path, 1) != 0) {
        import_error("cannot set PYTHONPATH: %s", strerror(errno));
        free(path);
        free(args);
        return EXIT_USAGE;
    }
    free(path);
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "fusetile.importer";
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    args[argc + 2] = NULL;
    fflush(NULL);
    if (strchr(python, '/'))
        execv(python, args);
    else
        execvp(python, args);
    import_error("cannot run %s: %s (hint: install python3-torch, or point FUSETILE_PYTHON at a Python 3 "
                 "that has torch)", python, strerror(errno));
    free(args);
    return EXIT_USAGE;
}
