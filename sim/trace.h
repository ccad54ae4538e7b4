/* trace.h - trace sinks of the simulator: Chrome trace JSON (Perfetto) and VCD, in simulated time.
 *
 * Plain C (usable from the SystemC model's C++ and from tests).  Times are
 * in the cost model's units (one unit is shown as one microsecond in the
 * Chrome trace; VCD uses a 1 fs timescale with one unit = 1e9 fs, the same
 * mapping as the simulator's SystemC clock).  The simulator calls
 * ft_trace_span() for every step, transfer and compute span and
 * ft_trace_occupancy() whenever the fast memory's occupancy changes, in
 * non-decreasing time order per unit; ft_trace_close() writes the files.
 */
#ifndef FT_TRACE_H
#define FT_TRACE_H

#include <stdint.h>

#include "fusetile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ft_trace ft_trace;

/* What a span is; each kind has its own thread in the Chrome trace:
 * steps on "controller", loads and writes on "slow-memory channel" (on a
 * target with separate channels, writes on "write channel"), compute on
 * "compute engine". */
typedef enum ft_trace_kind {
    FT_TRACE_STEP = 0,
    FT_TRACE_LOAD = 1,
    FT_TRACE_WRITE = 2,
    FT_TRACE_COMPUTE = 3
} ft_trace_kind;

typedef struct ft_trace_event {
    ft_trace_kind kind;
    double start, end;   /* simulated time, cost units, start <= end */
    int sg;              /* subgraph index */
    int64_t tile;        /* tile index */
    int64_t step;        /* step index within the subgraph */
    int64_t kstep;       /* k-step within the tile */
    int tensor;          /* LOAD/WRITE: the tensor; otherwise -1 */
    ft_region region;    /* LOAD/WRITE: rows [r0,r1) x cols [c0,c1) */
    int64_t elems;       /* LOAD/WRITE: elements moved; COMPUTE/STEP: 0 */
} ft_trace_event;

/* Open a trace writing Chrome JSON to json_path and/or VCD to vcd_path
 * (either may be NULL; both NULL is allowed and records nothing).
 * `target` names the process in the Chrome trace; `capacity` is the fast
 * memory's size (elements) for the occupancy counter's metadata.  Returns
 * FT_OK with *out set, FT_EINPUT (a file cannot be created; message in
 * err, naming the path) or FT_ENOMEM.  Files are written as events arrive
 * or at close; a partial file is never left under the final name (write to
 * PATH.tmp.PID, rename at close). */
int ft_trace_open(ft_trace **out, const char *json_path, const char *vcd_path, const char *target, double capacity,
                  char *err, size_t errlen);

/* Name the trace's subgraphs and tensors after problem p and schedule s
 * (call it before the first span or occupancy; the simulator does).  When
 * p has op names (ft_op.name), span names say the subgraph's label
 * (ft_subgraph_label) where they would say "sg N" ("compute
 * layer1.0.conv1+bn1+relu tile 3 k 1"), every span's args add "label",
 * otherData adds "subgraph_labels", and the VCD header adds a line
 * "$comment subgraph N LABEL $end" per subgraph; when p has tensor names,
 * loads and writes are named after them ("load x[0:64, 0:128]") and add
 * "tensor_name" to their args.  Without names nothing changes.  Returns
 * FT_OK (also when t, p or s is NULL), FT_ENOMEM, or FT_EINPUT when events
 * were already recorded or names were already set (the trace then fails at
 * close). */
int ft_trace_set_names(ft_trace *t, const ft_problem *p, const ft_schedule *s);

/* Record a span.  Strings are generated from the numbers (tensor names are
 * "T<index>" unless ft_trace_set_names named them) and escaped by the
 * writer. */
void ft_trace_span(ft_trace *t, const ft_trace_event *e);

/* Record that fast-memory occupancy is `elems` from time `time` on. */
void ft_trace_occupancy(ft_trace *t, double time, int64_t elems);

/* Finish both files (closing JSON brackets, final VCD timestamp at
 * end_time), rename them into place and free t.  Returns FT_OK or
 * FT_EINPUT with a message in err.  t may be NULL. */
int ft_trace_close(ft_trace *t, double end_time, char *err, size_t errlen);

/* Drop a trace without writing its files (on a failed simulation the
 * temporary files are removed).  t may be NULL. */
void ft_trace_abort(ft_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* FT_TRACE_H */
