/* trace.h - trace sinks of the simulator: Chrome trace JSON (Perfetto), VCD and a GTKWave save file, in simulated time.
 *
 * Plain C (usable from the SystemC model's C++ and from tests).  Events
 * carry times in the cost model's units.  On a target with a clock
 * (ft_trace_config.clock_hz > 0) one cost unit is one cycle and the files
 * show real time: the Chrome trace's microseconds are cycles / clock_hz x
 * 1e6, the VCD's timescale is the coarsest of 1 s, 1 ms, ..., 1 fs in which
 * a cycle lasts at least 100 ticks.  Without a clock (the contest target)
 * the files keep cost units and say so: one unit is shown as one
 * microsecond in the Chrome trace and as 1e9 fs in the VCD (the simulator's
 * SystemC clock).  The simulator calls ft_trace_span() for every step,
 * transfer, compute and subgraph span and ft_trace_occupancy() at every
 * step's start, in non-decreasing time order per unit and subgraph by
 * subgraph (ft_trace_sync() says when every unit has moved on);
 * ft_trace_close() writes the files.  traces/README.md documents
 * the formats.
 *
 * Detail: by default (FT_TRACE_DETAIL_WAVES) a trace keeps what a person
 * can look at: one span per subgraph and, per track, one span per tile
 * (the k-steps of a tile merged; consecutive tiles merged too while they
 * cover fewer than ceil(steps / FT_TRACE_WAVE_SPANS) steps; the tiles of a
 * wave each on their unit), and counters (fast-memory occupancy, channel busy) at most
 * FT_TRACE_COUNTER_SAMPLES samples per track.  FT_TRACE_DETAIL_STEPS (or a
 * window) writes every step, transfer and occupancy change.  A trace that
 * grows past ft_trace_config.warn_bytes says so on stderr, once.
 */
#ifndef FT_TRACE_H
#define FT_TRACE_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdint.h>

#include "fusetile/fusetile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ft_trace ft_trace;

/* What a span is; each kind has its own threads in the Chrome trace:
 * steps on "controller", loads and writes on "slow-memory channel" (with
 * separate channels: loads on "read channel", writes on "write channel"),
 * compute on "compute engine" ("compute unit N" with several units),
 * subgraphs on "subgraphs". */
typedef enum ft_trace_kind {
    FT_TRACE_STEP = 0,
    FT_TRACE_LOAD = 1,
    FT_TRACE_WRITE = 2,
    FT_TRACE_COMPUTE = 3,
    FT_TRACE_SUBGRAPH = 4 /* a whole subgraph (its launch overhead included), reported after its last step */
} ft_trace_kind;

typedef struct ft_trace_event {
    ft_trace_kind kind;
    double start, end;   /* simulated time, cost units, start <= end */
    int sg;              /* subgraph index */
    int64_t tile;        /* tile index (SUBGRAPH: -1) */
    int64_t step;        /* step index within the subgraph, from 0 (SUBGRAPH: -1) */
    int64_t kstep;       /* k-step within the tile (SUBGRAPH: -1) */
    int tensor;          /* LOAD/WRITE: the tensor; otherwise -1 */
    ft_region region;    /* LOAD/WRITE: rows [r0,r1) x cols [c0,c1) */
    int64_t elems;       /* LOAD/WRITE: elements moved; otherwise 0 */
    int unit;            /* COMPUTE: the compute unit, 0 .. units - 1; otherwise 0 */
} ft_trace_event;

/* FT_TRACE_MAX_UNITS (fusetile/limits.h): most compute units a trace shows. */

/* How much a trace writes (ft_trace_config.detail). */
typedef enum ft_trace_detail {
    FT_TRACE_DETAIL_WAVES = 0, /* default: spans per subgraph and per tile, counters sampled */
    FT_TRACE_DETAIL_STEPS = 1  /* every step, transfer, compute and occupancy change */
} ft_trace_detail;

/* What a trace writes and how; ft_trace_config_init sets the defaults
 * (zero, NULL and one unit: the contest target's trace). */
typedef struct ft_trace_config {
    const char *json_path;  /* Chrome trace JSON, or NULL */
    const char *vcd_path;   /* VCD, or NULL */
    const char *gtkw_path;  /* GTKWave save file for the VCD (needs vcd_path), or NULL;
                               ft_trace_gtkw_path gives the usual name */
    const char *target;     /* target name: the Chrome trace's process, the VCD's comment;
                               NULL: "fusetile" */
    double capacity;        /* fast-memory capacity (elements), for the metadata */
    double clock_hz;        /* > 0: one cost unit is one cycle of this clock and the files
                               show real time; 0: cost units */
    int units;              /* compute units, 1 .. FT_TRACE_MAX_UNITS: the VCD has a busy
                               signal unit0 .. unitN-1 for each, the Chrome trace a thread */
    int duplex;             /* 1: the target reads and writes on separate channels */
    int64_t window_first;   /* with window_count > 0: only the steps window_first ..
                               window_first + window_count - 1 of the replay (counted from 0
                               over all subgraphs, in the order they arrive) are written */
    int64_t window_count;   /* 0: every step */
    int detail;             /* ft_trace_detail; a window writes every step of it */
    int64_t warn_bytes;     /* a file that grows (or is bound to grow) past this many bytes
                               is named on stderr once, with how to trace less;
                               0: FT_TRACE_WARN_BYTES; negative: never */
    int power;              /* 1: a power track (the target has an energy model): the Chrome
                               trace's "power" counter (args "watts") and the VCD's
                               power.watts (a real), from the levels ft_trace_power
                               records; the VCD is then held (spilled) until the close */
} ft_trace_config;

/* Fill *c with the defaults above. */
void ft_trace_config_init(ft_trace_config *c);

/* Open a trace as *c says (every path may be NULL; none at all is allowed
 * and records nothing).  Returns FT_OK with *out set, FT_EINPUT (a file
 * cannot be created, two paths name the same file, a save file without a
 * VCD, a unit count, clock or window out of range; message in err, naming
 * the path or the field) or FT_ENOMEM.  Files are written as events arrive
 * or at close; a partial file is never left under the final name (write to
 * PATH.tmp.PID, rename at close). */
int ft_trace_open_config(ft_trace **out, const ft_trace_config *c, char *err, size_t errlen);

/* ft_trace_open_config with the defaults but json_path, vcd_path, target
 * and capacity (the trace of the contest target). */
int ft_trace_open(ft_trace **out, const char *json_path, const char *vcd_path, const char *target, double capacity,
                  char *err, size_t errlen);

/* The GTKWave translate filter file next to the save file gtkw_path: its
 * name with a final ".gtkw" replaced by ".subgraphs.txt" (appended when it
 * does not end in ".gtkw").  Each line is a subgraph index and its label;
 * the save file shows controller.subgraph through it.  The trace writes it
 * with the save file.  Returns a malloc'd string, or NULL when out of
 * memory. */
char *ft_trace_translate_path(const char *gtkw_path);

/* Tell the trace how many replay steps are to come (the simulator does,
 * before the first span): the default detail's counters sample in periods
 * of ceil(steps / FT_TRACE_COUNTER_SAMPLES) steps, its spans cover at least
 * ceil(steps / FT_TRACE_WAVE_SPANS) steps (whole tiles), and the size
 * warning extrapolates from the steps done.  Without it periods are one
 * step and spans one tile.
 * t may be NULL. */
void ft_trace_expect_steps(ft_trace *t, int64_t steps);

/* The GTKWave save file next to vcd_path: its name with a final ".vcd"
 * replaced by ".gtkw" (".gtkw" appended when it does not end in ".vcd").
 * Returns a malloc'd string the caller frees, or NULL when out of memory. */
char *ft_trace_gtkw_path(const char *vcd_path);

/* Name the trace's subgraphs and tensors after problem p and schedule s
 * (call it before the first span or occupancy; the simulator does).
 * Subgraph spans are named after their ops: each op's source name
 * (ft_op.name without the importer's lowering suffix) or "op N", each
 * once, joined by '+' with dotted prefixes shared with the name before
 * elided, a long list cut with a count ("a+b+... (+12 ops)"); their args
 * list the ops and the schedule's label (ft_subgraph.label) when it has
 * one.  Steps list the tensors they load and write by name ("tensor N"
 * when unnamed).  When p has op names (ft_op.name), span names say the
 * subgraph's label (ft_subgraph_label) where they would say "sg N"
 * ("compute layer1.0.conv1+bn1+relu tile 3 k 1"), every span's args add
 * "label", otherData adds "subgraph_labels", and the VCD header adds a line
 * "$comment subgraph N LABEL $end" per subgraph; when p has tensor names,
 * loads and writes are named after them ("load x[0:64, 0:128]") and add
 * "tensor_name" to their args.  Returns FT_OK (also when t, p or s is
 * NULL), FT_ENOMEM, or FT_EINPUT when events were already recorded or names
 * were already set (the trace then fails at close). */
int ft_trace_set_names(ft_trace *t, const ft_problem *p, const ft_schedule *s);

/* Record a span.  Strings are generated from the numbers (tensor names are
 * "T<index>" in span names unless ft_trace_set_names named them) and
 * escaped by the writer.  Outside the window a span is checked but not
 * written; a subgraph span is written when one of its steps is in the
 * window, cut to the window's time. */
void ft_trace_span(ft_trace *t, const ft_trace_event *e);

/* Record that fast-memory occupancy is `elems` from time `time` on (the
 * simulator reports it at each step's start, before the step's spans, and
 * 0 at the end; a repeated value is written once). */
void ft_trace_occupancy(ft_trace *t, double time, int64_t elems);

/* Promise that no span or occupancy change recorded from now on starts
 * before `time` (cost units): the VCD writer may then write out the
 * changes before it although some unit (a compute unit with no work, the
 * write channel) has reported nothing lately, instead of holding them or
 * spilling them to disk.  A record that breaks the promise fails the trace.
 * The simulator calls it as its units move on together (a replay on
 * several units).  t may be NULL. */
void ft_trace_sync(ft_trace *t, double time);

/* Record that the device draws `watts` (W, >= 0) from `start` to `end`
 * (cost units), for the power track of a trace opened with
 * ft_trace_config.power (the simulator gives each subgraph's average power
 * from its energy account, after the replay and before ft_trace_close).
 * Levels come in time order (a start before the previous level's end, a
 * level out of range or a trace without a power track fails the trace).
 * At close the track is written: each level from its start (cut to the
 * window), 0 W in a gap between levels and from the last level's end, so
 * that the track's integral over time is the joules of the levels.  t may
 * be NULL. */
void ft_trace_power(ft_trace *t, double start, double end, double watts);

/* Finish the files (closing JSON brackets, final VCD timestamp at end_time
 * or, with a window, at the end of its last span; the save file), rename
 * them into place and free t.  Returns FT_OK or FT_EINPUT with a message
 * in err.  t may be NULL. */
int ft_trace_close(ft_trace *t, double end_time, char *err, size_t errlen);

/* Drop a trace without writing its files (on a failed simulation the
 * temporary files are removed).  t may be NULL. */
void ft_trace_abort(ft_trace *t);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_TRACE_H */
