/* measured.h - measured kernel times (the TSV formats of
 * targets/measured/h100/README.md: gemm, pointwise, graph_ops, graphs) and
 * the cost model's prediction of each measured row on a target.
 *
 * A row is timed as one CUDA graph replay, at least `replay_interval`
 * after the one before (replays run back to back): `run_overhead` once, then one
 * kernel after another, each kernel one op alone in a subgraph (its launch
 * overhead included) at the granularity the model finds fastest for it
 * (ft_kernel_time).  A gemm row is one MatMul [M,K] x [K,N]; a pointwise
 * row one op of `ninputs` inputs on `elements` elements (add3: two adds,
 * as measured); a graph_ops row one op of a contest problem, a graphs row
 * every op of one, a Pointwise op of n >= 2 inputs as n - 1 adds (as the
 * measuring script runs them).  Installed as fusetile_measured.h.
 */
#ifndef FUSETILE_MEASURED_H
#define FUSETILE_MEASURED_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "fusetile/fusetile.h"
#include "fusetile/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FT_MEAS_MAX_ROWS, FT_MEAS_MAX_KERNELS (fusetile/limits.h): most rows of a
 * measured file, most kernels of one row. */

typedef enum ft_meas_format {
    FT_MEAS_GEMM = 0,      /* M N K ... us_graph */
    FT_MEAS_POINTWISE = 1, /* op ninputs elements ... us_graph */
    FT_MEAS_GRAPH_OPS = 2, /* problem op type out_w out_h K ninputs ... us_graph */
    FT_MEAS_GRAPHS = 3,    /* problem ops ... us_cudagraph */
    FT_MEAS_MODELS = 4,    /* model batch ... us_cudagraph: a whole network as
                            * PyTorch's eager mode runs it, one kernel per
                            * op_kernels group of the problem DIR/MODEL-bBATCH.json
                            * (`fusetile import --as eager`) */
    FT_MEAS_ENERGY = 5,    /* kind M_or_op N_or_elements K us_per_op J_per_op ...:
                            * energy per op (targets/measured/h100/energy.tsv):
                            * a gemm row as FT_MEAS_GEMM's, a pointwise row
                            * (copy, add, add3, relu, gelu) as FT_MEAS_POINTWISE's;
                            * measured_us is us_per_op, measured_j J_per_op */
    FT_MEAS_CONV = 6,      /* model layer batch in_ch out_ch kh kw stride groups
                            * in_h in_w out_h out_w ... us_graph: one convolution
                            * (torch's conv2d on a channels-first tensor,
                            * targets/measured/h100-c/conv.tsv) as the eager
                            * lowering runs it: cuDNN's transposes of the input
                            * and the weight to channels-last, the implicit GEMM
                            * (im2col and MatMul, one kernel) and the transpose
                            * back; a depthwise one as PyTorch's own kernel */
    FT_MEAS_KERNELS = 7    /* kind rows cols out_rows ... us: one kernel of
                            * PyTorch's eager mode as a profiler timed it alone
                            * (targets/measured/h100-c/eager_kernels.tsv):
                            * batch_norm (the transform, a Pointwise op on rows x
                            * cols) or max_pool2d (a Layout op, rows x cols in,
                            * out_rows x cols out); no run overhead, no replay
                            * interval (bare) */
} ft_meas_format;

/* One measured row and the kernels the model times for it. */
typedef struct ft_meas_row {
    int line;              /* line in the file (the header is line 1) */
    char *label;           /* "gemm 128x256x64", "relu 4096", "mlsys-2026-5 op 3", "mlsys-2026-5",
                            * "resnet18 b32" */
    char *problem;         /* graph_ops, graphs: the problem's name; models: the
                            * model's ("resnet18"); else NULL */
    double measured_us;    /* us_graph (us_cudagraph for graphs), > 0 */
    int nkernels;
    ft_problem **kernels;  /* one-op problems, as measured (before a target is applied) */
    int **tensors;         /* per kernel, the row's ids of its tensors (inputs, then
                            * output; ids 0 .. ntensors - 1): which kernels of a
                            * replay share data (ft_meas_predict); NULL: none do */
    int ntensors;
    int batch;             /* models: the batch; else 0 */
    double measured_j;     /* energy: J_per_op, > 0; else 0 */
    int bare;              /* 1: the kernels' own time, as a profiler reports it: no
                            * run overhead and no replay interval (FT_MEAS_KERNELS) */
} ft_meas_row;

typedef struct ft_measured {
    char *path;
    ft_meas_format format;
    int nrows;
    ft_meas_row *rows;
} ft_measured;

/* Name of a format ("gemm", "pointwise", "graph_ops", "graphs", "models"). */
const char *ft_meas_format_name(ft_meas_format f);

/* Load a measured TSV file.  Its format is told by its header's columns;
 * graph_ops and graphs rows name contest problems, read from
 * problems_dir/NAME.json (problems_dir may be NULL for gemm and pointwise
 * files); a graph_ops row's type, out_w, out_h, K and ninputs must match
 * that op of the problem.  A models row (model, batch) reads the problem
 * problems_dir/MODEL-bBATCH.json (ft_meas_model_problem) and runs one
 * kernel per group of its op_kernels (ft_kernel_of_ops; each op its own
 * kernel when it has none), the kernels in the order of their first ops.  Returns FT_OK with *out (free with
 * ft_measured_free), or FT_EINPUT with one line "FILE:LINE: column: ..."
 * (a missing column: "FILE:1: ..."), or FT_ENOMEM. */
int ft_measured_load(const char *path, const char *problems_dir,
                     ft_measured **out, ft_status *st);

/* The file name (no directory) of a models row's problem, MODEL-bBATCH.json,
 * into buf (n bytes); FT_EINPUT when model is not a name (empty, longer
 * than 200 bytes, or with a character other than letters, digits, '_',
 * '-' and '.'), or batch is not positive. */
int ft_meas_model_problem(const char *model, long long batch, char *buf,
                          size_t n, ft_status *st);

/* Release m and everything it owns.  NULL is a no-op. */
void ft_measured_free(ft_measured *m);

/* FT_KERNEL_MAX_SPLIT, FT_KERNEL_MAX_INPUTS (fusetile/limits.h): most
 * split-K slices of a GEMM kernel, most inputs of a kernel. */

/* A new one-op problem (a kernel): an op of type "MatMul", "Pointwise" or
 * "Layout" and kind `kind` (op_kinds) with nin inputs; tensors 0..nin-1
 * are its inputs and nin its output, w[i] x h[i] elements each.  Its
 * capacity, bandwidth, native granularity and base cost are placeholders
 * a target replaces.  FT_OK with *out, FT_EINPUT (bad extents, nin not 1
 * to FT_KERNEL_MAX_INPUTS), FT_ENOMEM. */
int ft_kernel_new(ft_problem **out, const char *type, const char *kind,
                  int nin, const int64_t *w, const int64_t *h, ft_status *st);

/* A new kernel problem that runs ops[0..nops-1] of problem p (1 to
 * FT_KERNEL_MAX_OPS ops whose outputs, all but one, only the others read:
 * a convolution's im2col Layout and its MatMul) fused as one subgraph: its
 * tensors are the ops' inputs that none of them makes, in order of first
 * use, then the one output, then the tensors made and used inside (never
 * in slow memory); its ops in p's topological order, the one making the
 * output last, with their types and kinds (op_kinds, else the type) and names (op_names).
 * Capacity, bandwidth, native granularity and base costs are placeholders
 * a target replaces (as ft_kernel_new's).  ids (room for
 * FT_KERNEL_MAX_OPS * FT_KERNEL_MAX_INPUTS + 1 entries) gets p's indices of
 * the kernel's inputs then its output (a measured row's tensor ids).
 * FT_OK with *out, FT_EINPUT (an op out of range, two outputs, too many
 * ops), FT_ENOMEM. */
int ft_kernel_of_ops(const ft_problem *p, const int *ops, int nops,
                     ft_problem **out, int *ids, ft_status *st);

/* How a kernel runs: its granularity, and for a MatMul split along K into
 * `split` slices (1: not split) the granularity of the add of the slices'
 * partial sums; streamk 1: a MatMul not split, run stream-K (its tiles'
 * k-iterations spread evenly over the units, docs/DEVICE.md). */
typedef struct ft_kernel_choice {
    int64_t w, h, k;
    int split;
    int64_t add_w, add_h, add_k;
    int streamk;
} ft_kernel_choice;

/* The model's time in cycles of kernel k (from ft_kernel_new or a row) on
 * target t, a real target (not the contest one): t is applied to a copy of
 * k and the op timed alone in one subgraph (launch overhead included) at
 * every candidate granularity (the native one times powers of two from
 * 1/8 to 8 along w and h, up to the op's extents; k-slices from a
 * quarter to 8 native ones, up to K; none above native unless the
 * target allows larger granularities), candidates in order of a lower bound
 * on their time, cut once the bound reaches the best time.  A MatMul is
 * also timed split along K into 2, 4, ... FT_KERNEL_MAX_SPLIT slices (each
 * at least one native k-slice deep), as GEMM libraries run one whose M x N
 * fills too few units: the MatMul of the slices stacked along M plus the
 * add of their partial sums as the kernel's last pass (its launch not
 * paid twice).  On a target with execution.streamk_overhead, a kernel
 * that is one MatMul whose tiles at the chosen granularity make more than
 * one wave, the last one partial, is also timed stream-K (ft_kernel_choice
 * streamk): the data-parallel form's time past its launch scaled by the
 * fractional over the whole waves (tiles / units over their ceiling), not
 * below the lower bound of the candidates' order, plus the overhead (the
 * fix-up of the tiles shared by two units).  The fastest form is
 * kept and written to *chosen (may be NULL).  With `fixed` (may be NULL)
 * only that form is timed: how calibration re-times a kernel as a
 * target's settings move.  Returns FT_OK, FT_EINPUT when nothing fits the
 * fast memory (the message names the kernel), FT_ENOMEM. */
int ft_kernel_time(const ft_problem *k, const ft_target *t,
                   const ft_kernel_choice *fixed, double *cycles,
                   ft_kernel_choice *chosen, ft_status *st);

/* ft_kernel_time with `occupied` elements (>= 0) of the shared cache held by
 * other kernels' data: the kernel's footprint stays warm only when it fits
 * the capacity less that (a footprint larger than the rest is timed cold:
 * moved at the slow memory's bandwidths).  occupied 0 is ft_kernel_time. */
int ft_kernel_time_shared(const ft_problem *k, const ft_target *t,
                          const ft_kernel_choice *fixed, double occupied,
                          double *cycles, ft_kernel_choice *chosen,
                          ft_status *st);

/* Predicted time of row r on target t in microseconds: the longer of
 * replay_interval and (run_overhead + the sum of its kernels' times),
 * over clock_hz.  The row is replayed over and
 * over, so what a kernel finds in the shared cache depends on the kernels
 * around it: a kernel's data stays warm only when its inputs' reuse window
 * fits the cache, that is the distinct tensors (r->tensors) of every kernel
 * from the one that last touched an input (in this replay or, cyclically,
 * the one before) to the kernel itself; the kernel is timed with the
 * cache's capacity less what the window's other tensors hold
 * (ft_kernel_time_shared).  fixed and chosen (each may be NULL) have
 * r->nkernels entries, as in ft_kernel_time.  Errors as ft_kernel_time. */
int ft_meas_predict(const ft_meas_row *r, const ft_target *t,
                    const ft_kernel_choice *fixed, ft_kernel_choice *chosen,
                    double *us, ft_status *st);

/* ft_meas_predict, and each kernel's time in microseconds (its launch
 * overhead included; run_overhead and replay_interval are the row's) into
 * kernel_us (r->nkernels entries; may be NULL). */
int ft_meas_predict_kernels(const ft_meas_row *r, const ft_target *t,
                            const ft_kernel_choice *fixed,
                            ft_kernel_choice *chosen, double *kernel_us,
                            double *us, ft_status *st);

/* Whether row i of m is held out of calibration: every third row (i % 3
 * == 2) of a gemm, pointwise or energy file; for graph_ops and graphs, the rows of
 * every third problem in name order (the public six: mlsys-2026-13 and
 * mlsys-2026-9), counting the problems m names; every models row (whole
 * networks check a model: calibration fits none). */
int ft_meas_held_out(const ft_measured *m, int i);

/* Error figures of n predictions against measurements (both > 0): mean
 * absolute percentage error |p - m| / m in percent, the geometric mean of
 * p / m, and the index of the largest relative error (-1 when n is 0). */
typedef struct ft_meas_stats {
    int n;
    double mape;
    double gmean;
    int worst;
} ft_meas_stats;

void ft_meas_stats_of(const double *pred, const double *meas, int n,
                      ft_meas_stats *out);

/* The energy in joules of kernel k (as for ft_kernel_time) run in form
 * `form` (a choice ft_kernel_time made) for `cycles` cycles on target t,
 * a real target with an energy group: the energy rule (ft_energy,
 * fusetile.h) on the form's work, traffic and footprint (a split-K form:
 * its MatMul's and its add's together) with one launch.  FT_OK, FT_EINPUT
 * (no energy group; a form that does not fit), FT_ENOMEM. */
int ft_kernel_energy(const ft_problem *k, const ft_target *t,
                     const ft_kernel_choice *form, double cycles,
                     double *joules, ft_status *st);

/* The figure row r is compared by, predicted on t into *pred and measured
 * into *meas: joules for an energy file's row (measured_j > 0:
 * ft_meas_predict_kernels, then ft_meas_predict_energy), else
 * microseconds (ft_meas_predict).  Errors as those. */
int ft_meas_predict_figure(const ft_meas_row *r, const ft_target *t,
                           double *pred, double *meas, ft_status *st);

/* Predicted energy of row r (an energy file's, or any row) on t in joules:
 * the sum of its kernels' ft_kernel_energy, each kernel in the form
 * forms[i] for kernel_us[i] microseconds (ft_meas_predict_kernels's
 * figures).  Errors as ft_kernel_energy. */
int ft_meas_predict_energy(const ft_meas_row *r, const ft_target *t,
                           const ft_kernel_choice *forms,
                           const double *kernel_us, double *joules,
                           ft_status *st);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif
