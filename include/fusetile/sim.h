/* sim.h - C API of the fusetile simulator: a SystemC model of the slow memory channel, the fast memory, the compute
 * engine and a controller that replays schedules step by step.
 *
 * Conventions (as leveldb's c.h and rocksdb's c.h):
 *  - Opaque handles; no C++ type crosses this header.
 *  - Functions return an int code from enum ft_code (fusetile.h) and keep a
 *    one-line message on the handle (ft_sim_errmsg).  Every function catches
 *    C++ exceptions and turns them into FT_EINPUT with the exception's text.
 *  - SystemC elaborates once per process: the first ft_sim_new builds the
 *    model; every handle and every ft_sim_run reuses it, one run at a time
 *    (the simulator is not thread-safe).  Each run starts the simulated
 *    clock at 0 (SystemC's time, wound back between runs: sim/clock.h);
 *    results are relative to each run's start.
 *  - The simulator decides residency, reuse, occupancy, transfer and
 *    compute times from its own state.  It takes from libfusetile only the
 *    problem and schedule models and the data flow of each step (which
 *    regions each active op computes and needs: ft_walk), never the
 *    analytic figures (compute, memory, latency, loaded flags, working set).
 */
#ifndef FT_SIM_H
#define FT_SIM_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdint.h>

#include "fusetile/fusetile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ft_sim ft_sim;

/* Options of one replay; ft_sim_opts_init sets the defaults. */
typedef struct ft_sim_opts {
    ft_compute_model model;   /* default FT_COMPUTE_NATIVE */
    const char *trace_json;   /* Chrome trace output path, or NULL */
    const char *trace_vcd;    /* VCD output path, or NULL */
    int analytic;             /* 1 (default): also evaluate the schedule with
                                 ft_evaluate for the cross-check; 0: skip it
                                 (the analytic fields are then NaN) */
    /* What the traces say (trace.h); the defaults give the contest's. */
    const char *trace_gtkw;   /* GTKWave save file listing the VCD's signals
                                 (needs trace_vcd; ft_trace_gtkw_path gives
                                 the usual name), or NULL (default) */
    const char *target;       /* target name in the traces; NULL (default):
                                 "contest" */
    double clock_hz;          /* > 0: the problem's cost unit is one cycle of
                                 this clock (ft_target.clock_hz) and traces
                                 show real time; 0 (default): cost units */
    int64_t window_first;     /* with window_count > 0, the traces hold only
                                 the steps window_first .. window_first +
                                 window_count - 1 of the replay (counted from
                                 0 over all subgraphs); the replay and its
                                 results are whole */
    int64_t window_count;     /* 0 (default): every step */
    int trace_detail;         /* ft_trace_detail (trace.h): FT_TRACE_DETAIL_WAVES
                                 (0, default: spans per subgraph and tile,
                                 counters at most FT_TRACE_COUNTER_SAMPLES
                                 samples per track) or FT_TRACE_DETAIL_STEPS
                                 (every step and transfer) */
    int64_t trace_warn_bytes; /* a trace file past this size is named on
                                 stderr once; 0 (default): FT_TRACE_WARN_BYTES;
                                 negative: never */
    ft_progress_fn progress;  /* called about every 2^18 steps of the
                                 replay, then of the analytic evaluation,
                                 with the work done and the total (the
                                 schedule's steps, twice with the analytic
                                 side); nonzero stops the run (FT_EINPUT,
                                 "interrupted").  NULL (default): none */
    void *progress_ctx;       /* its first argument */
} ft_sim_opts;

/* Fill *o with the defaults above. */
void ft_sim_opts_init(ft_sim_opts *o);

/* Per-subgraph results of a replay. */
typedef struct ft_sim_sg {
    double simulated;          /* simulated latency, cost units */
    double analytic;           /* ft_evaluate's latency (for the cross-check) */
    int64_t steps;
    int64_t peak_occupancy;    /* elements in fast memory at the fullest */
    double channel_busy;       /* fraction of the subgraph's time the channel moved data (with
                                  separate read and write channels, the busier one's; with
                                  several units, each transfer weighted by its share of the
                                  bandwidth; with a shared cache, the cache's port) */
    double compute_busy;       /* fraction of the subgraph's time the engine computed (with
                                  several units, the mean over all of them) */
    /* with an energy model (ft_energy, a target's energy group; else 0): */
    int64_t loaded, written;   /* elements the replay moved from and to slow memory */
    double energy;             /* joules from the replay: the energy rule on the elements
                                  it moved, its own footprint (plan) and simulated
                                  latency, and the subgraph's MACs and Pointwise elements */
    double energy_analytic;    /* ft_evaluate's (NaN when not run) */
} ft_sim_sg;

typedef struct ft_sim_result {
    int nsubgraphs;
    ft_sim_sg *sg;
    double total_simulated;
    double total_analytic;
    double energy_simulated;   /* joules, the subgraphs' ft_sim_sg.energy summed (0 without
                                  an energy model) */
    double energy_analytic;    /* ft_evaluate's total (NaN when not run) */
    int64_t steps;             /* steps replayed */
    /* when the replay failed with FT_EINVALID: */
    int reason;                /* enum ft_reason */
    int fail_sg;
    int64_t fail_tile, fail_step;
    double fail_time;          /* simulated time of the failure, cost units */
    /* FT_R_NONE when ft_evaluate accepted the schedule (or was not run),
     * else the reason it gave; its latencies are then NaN. */
    int analytic_reason;
} ft_sim_result;

/* Create a simulator handle (elaborating the SystemC model on first use).
 * FT_OK with *out set, or FT_ENOMEM / FT_EINPUT (message in *err if err is
 * not NULL, as a static string). */
int ft_sim_new(ft_sim **out, const char **err);

/* Replay schedule s of problem p with options o (NULL: the defaults).
 * Fills *r whatever the outcome (release it with ft_sim_result_free):
 * r->sg has an entry per subgraph, filled for the subgraphs replayed (all of
 * them on success; on an overflow, the failing one up to the failure), and the analytic side comes from ft_evaluate unless
 * o->analytic is 0.  Returns FT_OK; FT_EINVALID when the simulator finds
 * the schedule invalid on its own (r->reason, fail_* and the message say
 * where; e.g. the fast memory overflows); FT_EINPUT for a NULL argument, a
 * trace file that cannot be written (or a trace of a machine of more than
 * FT_TRACE_MAX_UNITS units), a trace clock or window out of range
 * (a window that starts past the replay's last step included), a subgraph
 * whose step count overflows
 * 64 bits, a schedule of more than FT_MAX_STEPS steps (refused before the
 * replay, as ft_evaluate does), a run the progress callback stopped, a replay that would run past the simulated clock
 * (2^64 fs, about 1.8e10 cost units for the one replay, whatever ran
 * before it in the process; docs/LIMITS.md) or a SystemC error;
 * FT_ENOMEM.  The trace files are written only on FT_OK. */
int ft_sim_run(ft_sim *sim, const ft_problem *p, const ft_schedule *s, const ft_sim_opts *o, ft_sim_result *r);

/* Message of the handle's last failure ("" after a success).  Never NULL;
 * valid until the next call on the handle. */
const char *ft_sim_errmsg(const ft_sim *sim);

/* Release what ft_sim_run allocated in *r (the struct is the caller's).
 * NULL is a no-op. */
void ft_sim_result_free(ft_sim_result *r);

/* Release a handle (the SystemC model stays for the process's other
 * handles).  NULL is a no-op. */
void ft_sim_free(ft_sim *sim);

/* ------------------------------------------------- the cross-check explained */

/* Largest relative difference between simulated and analytic latencies
 * that counts as agreement (SPEC.md: 1e-9). */
#define FT_SIM_AGREE_REL 1e-9

/* Number of timing effects a replay can turn off (transfer latency, write
 * bandwidth, separate channels, launch overhead, double buffering, units,
 * shared cache, cache floor, step overhead, tile overhead, MatMul tile
 * overhead, partial residency, power limit). */
#define FT_SIM_NEFFECTS 13

/* |sim - ana| / |ana|: 0 when equal, infinity when either is NaN or ana
 * is 0 and they differ. */
double ft_sim_rel_diff(double sim, double ana);

/* Whether replay r agrees with its analytic side (ft_evaluate accepted the
 * schedule and the relative difference is at most FT_SIM_AGREE_REL) in
 * subgraph sg, or in total for sg = -1. */
int ft_sim_agrees(const ft_sim_result *r, int sg);

/* The same for the replay's energy account (ft_sim_sg.energy against
 * energy_analytic; the totals for sg = -1), with an energy model: equal
 * wherever the latencies are, since the energy rule takes the latency. */
int ft_sim_energy_agrees(const ft_sim_result *r, int sg);

/* One replay with timing effects turned off. */
typedef struct ft_sim_variant {
    const char *turned_off;    /* the effect's name, or "all effects" (static) */
    int ok;                    /* 1: the replay succeeded (r is filled) */
    char error[256];           /* why not, one line ("" when ok) */
    ft_sim_result r;
} ft_sim_variant;

/* The replays of ft_sim_effects_run: one per effect p has, then one with
 * all of them off (none when p has no effect, as on the contest target). */
typedef struct ft_sim_effects {
    int nvar;
    ft_sim_variant var[FT_SIM_NEFFECTS + 1];
} ft_sim_effects;

/* The replays ft_sim_effects_run makes for p: one per timing effect p has
 * and one with all of them off; 0 when p has none. */
int ft_sim_effects_count(const ft_problem *p);

/* Replay s on copies of p with each timing effect of p turned off in turn,
 * as the target file would with that setting changed (double buffering off:
 * a step loads, computes, writes; units off: one unit; shared cache off: no
 * cache; cache floor off: a cache every subgraph fits), then with all of
 * them off, into *rep (release with ft_sim_effects_free).  Only o's model,
 * progress and progress_ctx are used (o may be NULL); the progress counts
 * the replays together (the steps of ft_sim_effects_count(p) replays in
 * all, each as ft_sim_run counts them); the replays write no trace.  A replay that fails is kept with ok 0 and its error.  FT_OK;
 * FT_EINPUT when the progress callback stopped a replay (*rep is then
 * empty); FT_ENOMEM. */
int ft_sim_effects_run(ft_sim *sim, const ft_problem *p, const ft_schedule *s, const ft_sim_opts *o, ft_sim_effects *rep);

/* What accounts for the difference in subgraph sg (-1: the total) of
 * replay r, into buf (n bytes): "" when they agree, the effects whose
 * removal alone brings agreement ("double buffering, units"), "the effects
 * together" when only removing them all does, "nothing" otherwise.
 * Returns 1 when accounted for (or agreeing), else 0. */
int ft_sim_accounted(const ft_sim_result *r, const ft_sim_effects *rep, int sg, char *buf, size_t n);

/* Release the replays of *rep (the struct is the caller's).  NULL is a
 * no-op. */
void ft_sim_effects_free(ft_sim_effects *rep);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FT_SIM_H */
