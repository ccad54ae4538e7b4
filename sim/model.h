/* model.h - the SystemC model of the simulator (C++ only, behind sim.h): a slow-memory channel, a fast memory, a compute engine and the controller that replays a schedule.
 *
 * The three resource modules are passive targets in the TLM loosely-timed
 * style: the controller calls them through sc_ports bound to their
 * interfaces (channel_if, memory_if, compute_if) with the time at which it
 * issues a request, and each module answers from its own state: when a
 * transfer or a computation ends (queues and busy-until times), which slices
 * are already resident, how full the fast memory is.  The controller is the
 * one process (an SC_THREAD): it replays a step, then waits in SystemC time
 * until the step ends, so sc_time_stamp() is always the end of the last
 * step.  See sim/README.md for the model and the time mapping.
 *
 * Time: the kernel runs at 1 fs resolution and one cost unit is 1e9 fs
 * (shown as 1 us).  Modules compute in integer fs (fs_t).
 */
#ifndef FT_SIM_MODEL_H
#define FT_SIM_MODEL_H

#include <systemc>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fusetile.h"
#include "trace.h"

namespace ftsim {

/* ------------------------------------------------------------------ time */

/* A point or a span of simulated time, in fs (the kernel's resolution). */
typedef std::uint64_t fs_t;

/* One cost unit of SPEC.md in fs. */
constexpr double FS_PER_UNIT = 1e9;

/* Largest span that to_fs accepts: a quarter of what 64 bits hold, so that
 * sums of a few spans cannot wrap (about 4.6e9 cost units). */
constexpr double MAX_SPAN_UNITS = 4.6e9;

/* Message of the std::overflow_error thrown when a time passes 2^64 fs. */
extern const char *const CLOCK_EXHAUSTED;

/* A span of `units` cost units in whole fs (rounded to nearest).  Throws
 * std::overflow_error beyond MAX_SPAN_UNITS or for a value that is not a
 * finite non-negative number. */
fs_t to_fs(double units);

/* fs to cost units. */
inline double to_units(fs_t fs) { return (double)fs / FS_PER_UNIT; }

/* ------------------------------------------------- helpers of the model */

/* printf into a std::string (at most 511 characters). */
std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* Division rounding up for positive operands. */
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
/* Elements of a region. */
inline std::int64_t region_elems(const ft_region &r) { return (r.r1 - r.r0) * (r.c1 - r.c0); }
/* Whether two regions are the same. */
inline bool region_eq(const ft_region &a, const ft_region &b)
{
    return a.r0 == b.r0 && a.r1 == b.r1 && a.c0 == b.c0 && a.c1 == b.c1;
}

/* ------------------------------------------------------------- failures */

/* The schedule is invalid: thrown by the controller (plan checks and
 * replay) with what SPEC's validation would report, and where. */
struct Invalid : std::runtime_error {
    int reason;          /* enum ft_reason */
    int sg;              /* subgraph, or -1 */
    std::int64_t tile;   /* tile, or -1 */
    std::int64_t step;   /* step within the subgraph, or -1 */
    fs_t time;           /* simulated time since the run's start */
    Invalid(int reason_, const std::string &msg, int sg_ = -1, std::int64_t tile_ = -1, std::int64_t step_ = -1, fs_t time_ = 0)
        : std::runtime_error(msg), reason(reason_), sg(sg_), tile(tile_), step(step_), time(time_) {}
};

/* ------------------------------------------------------------ interfaces */

/* A slow-memory channel: one queue, transfers served in issue order at
 * `bandwidth` elements per cost unit, each moving data no earlier than the
 * transfer latency after its issue (requests are pipelined: the latency of
 * a transfer queued behind others is hidden). */
struct channel_if : virtual sc_core::sc_interface {
    /* Queue a transfer of `elems` elements issued at time `issue`, taking
     * elems x `scale` / bandwidth (scale != 1: a write on a shared channel
     * whose write bandwidth differs).  Returns its end; *start receives the
     * time its data starts moving (issue + latency, or when the transfers
     * queued before it have ended). */
    virtual fs_t transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale = 1.0) = 0;
    /* Total time spent moving data since the last reset. */
    virtual fs_t busy() const = 0;
};

/* The fast memory: capacity, whole tensors kept resident from the previous
 * subgraph, output buffers of the current one, and the (tensor, region)
 * slices of the current step. */
struct memory_if : virtual sc_core::sc_interface {
    /* Whether the memory may keep tensor t resident after the subgraph ends:
     * only a tensor the subgraph produces (produced[t] != 0) can stay. */
    virtual bool can_retain(const unsigned char *produced, int t) const = 0;
    /* A subgraph starts: reserve its output buffers (`nbuf` sizes, in
     * elements).  Slices of an earlier subgraph are gone. */
    virtual void begin_subgraph(const std::int64_t *buf, int nbuf) = 0;
    /* A step needs these slices of boundary inputs (duplicates allowed).
     * The memory drops slices of whole resident tensors and duplicates,
     * keeps slices the previous step of the subgraph held (same tensor, same
     * region), evicts the rest, and appends to *loads the slices it has to
     * fetch.  Returns the occupancy in elements during the step; the caller
     * compares it with capacity(). */
    virtual std::int64_t step(const ft_slice *need, int n, std::vector<ft_slice> *loads) = 0;
    /* The subgraph ends: its slices and buffers go; the `n` retained
     * tensors stay whole, as the only resident ones. */
    virtual void end_subgraph(const int *retained, int n) = 0;
    /* Capacity in elements. */
    virtual double capacity() const = 0;
    /* Whether tensor t is resident whole. */
    virtual bool resident(int t) const = 0;
    /* What the occupancy of the last step is made of, in elements: whole
     * resident tensors, output buffers, slices. */
    virtual void usage(std::int64_t *whole, std::int64_t *buffers, std::int64_t *slices) const = 0;
};

/* The compute engine: native granularity, padding and the compute model. */
struct compute_if : virtual sc_core::sc_interface {
    /* 0 when the engine can run tiles of w x h with k-slices of k, else the
     * ft_reason why not (granularity below one or above native), with the
     * detail in *why. */
    virtual int check_granularity(std::int64_t w, std::int64_t h, std::int64_t k, std::string *why) const = 0;
    /* Cost units of computing `a`'s region of its op in role `role` (SPEC 4:
     * padding of spatial dimensions to native tiles, proportional
     * reduction, depth). */
    virtual double op_cost(ft_role role, const ft_active &a) const = 0;
    /* Queue a computation of `cost` units issued at `issue`; returns its end,
     * *start its start. */
    virtual fs_t run(double cost, fs_t issue, fs_t *start) = 0;
    /* Total time spent computing since the last reset. */
    virtual fs_t busy() const = 0;
};

/* ------------------------------------------------------------- modules */

/* A server with a FIFO queue: items are served back to back in issue
 * order, an item of `work` taking work / rate cost units.  Within one busy
 * period, end times come from the work accumulated since the period began,
 * divided and rounded to fs once, so rounding never accumulates across the
 * items of a period (a step's transfers take exactly (loaded + written) /
 * bandwidth, as SPEC 4 adds them). */
class BusyQueue {
public:
    /* Empty queue at time `now`, serving `rate` work per cost unit. */
    void reset(fs_t now, double rate);
    /* Serve `work` issued at `issue`; returns the end, *start the start. */
    fs_t serve(double work, fs_t issue, fs_t *start);
    /* Time spent serving since reset. */
    fs_t busy() const { return busy_; }

private:
    double rate_ = 1;
    fs_t free_at_ = 0;       /* end of the last item */
    fs_t period_start_ = 0;  /* start of the current busy period */
    double period_work_ = 0; /* work served in it */
    fs_t busy_ = 0;
};

class Channel : public sc_core::sc_module, public channel_if {
public:
    explicit Channel(sc_core::sc_module_name name);
    /* A run starts at `now`; bandwidth in elements per cost unit, latency
     * in cost units. */
    void reset(double bandwidth, double latency, fs_t now);
    fs_t transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale = 1.0) override;
    fs_t busy() const override { return q_.busy(); }

private:
    BusyQueue q_;  /* work in elements, rate = bandwidth */
    fs_t latency_ = 0;
};

class FastMemory : public sc_core::sc_module, public memory_if {
public:
    explicit FastMemory(sc_core::sc_module_name name);
    /* A run starts: empty memory of `capacity` elements for a problem's tensors. */
    void reset(const ft_problem *p);
    bool can_retain(const unsigned char *produced, int t) const override;
    void begin_subgraph(const std::int64_t *buf, int nbuf) override;
    std::int64_t step(const ft_slice *need, int n, std::vector<ft_slice> *loads) override;
    void end_subgraph(const int *retained, int n) override;
    double capacity() const override { return capacity_; }
    bool resident(int t) const override { return t >= 0 && (size_t)t < whole_.size() && whole_[(size_t)t]; }
    void usage(std::int64_t *whole, std::int64_t *buffers, std::int64_t *slices) const override;

private:
    const ft_problem *p_ = nullptr;
    double capacity_ = 0;
    std::vector<unsigned char> whole_;  /* per tensor: resident whole */
    std::vector<int> whole_list_;
    std::int64_t whole_elems_ = 0, buf_elems_ = 0, slice_elems_ = 0;
    std::vector<ft_slice> cur_, prev_;  /* slices of this step and of the previous one */
};

class ComputeEngine : public sc_core::sc_module, public compute_if {
public:
    explicit ComputeEngine(sc_core::sc_module_name name);
    /* A run starts at `now` for problem p under `model`. */
    void reset(const ft_problem *p, ft_compute_model model, fs_t now);
    int check_granularity(std::int64_t w, std::int64_t h, std::int64_t k, std::string *why) const override;
    double op_cost(ft_role role, const ft_active &a) const override;
    fs_t run(double cost, fs_t issue, fs_t *start) override;
    fs_t busy() const override { return q_.busy(); }

private:
    std::int64_t nw_ = 1, nh_ = 1, nk_ = 1;
    bool larger_ = false;
    const ft_problem *p_ = nullptr;
    ft_compute_model model_ = FT_COMPUTE_NATIVE;
    BusyQueue q_;  /* work in cost units, rate 1 */
};

/* Per-subgraph figures of a replay. */
struct SgResult {
    fs_t simulated = 0;
    std::int64_t steps = 0;
    std::int64_t peak = 0;
    fs_t channel_busy = 0, compute_busy = 0;  /* the busier channel's, with separate channels */
};

/* One replay for the controller. */
struct Job {
    const ft_problem *p = nullptr;
    const ft_schedule *s = nullptr;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    ft_trace *trace = nullptr;   /* NULL: no trace */
    /* results */
    std::vector<SgResult> sg;
    std::int64_t steps = 0;
    fs_t start = 0, end = 0;     /* kernel times of the run */
    bool done = false;
    bool invalid = false;        /* the schedule is invalid: see failure */
    Invalid failure{FT_R_NONE, ""};
    bool error = false;          /* anything else went wrong: see message */
    int error_code = FT_EINPUT;
    std::string message;
};

class Controller : public sc_core::sc_module {
public:
    sc_core::sc_port<channel_if> channel;        /* reads; writes too unless duplex */
    sc_core::sc_port<channel_if> write_channel;  /* writes when the timing is duplex */
    sc_core::sc_port<memory_if> memory;
    sc_core::sc_port<compute_if> engine;

    SC_HAS_PROCESS(Controller);
    explicit Controller(sc_core::sc_module_name name);

    /* Hand over a job; the process starts it at the next delta cycle. */
    void submit(Job *job);

private:
    void process();
    void replay(Job &job);
    void plan(Job &job);
    void run_subgraph(Job &job, int sg, fs_t t_start);

    sc_core::sc_event job_ev_;
    Job *job_ = nullptr;

    /* Per-run state, sized on plan(). */
    struct SgPlan {
        std::vector<ft_role> role;       /* per position in the op list */
        std::int64_t ntx = 0, nty = 0, nk = 0;
        std::vector<int> written;        /* outputs written to slow memory */
        std::vector<std::int64_t> buffers;  /* output buffer sizes */
    };
    std::vector<SgPlan> plans_;
    std::vector<unsigned char> produced_;  /* per tensor, current subgraph */
    std::vector<unsigned char> written_;   /* per tensor, current subgraph */
    std::vector<unsigned char> executed_;  /* per op */
    std::vector<ft_role> op_role_;         /* per op, current subgraph */
    std::vector<ft_slice> needs_, loads_, writes_, pending_;
    /* Queue `ws` (write-backs issued at `at`) on the write channel (or the
     * shared one); returns the last one's end (`at` when there are none). */
    fs_t issue_writes(Job &job, const std::vector<ft_slice> &ws, fs_t at, struct ft_trace_event &ev);
};

/* The process's model: built on first use (SystemC elaborates once per
 * process), reused by every run. */
struct Model {
    Channel channel;
    Channel write_channel;
    FastMemory memory;
    ComputeEngine engine;
    Controller controller;
    Model();
};

/* The model, building it on the first call (the kernel's time resolution
 * is set to 1 fs first; SystemC's banner is off and its reports become
 * exceptions).  Throws on failure, and again with the same message on every
 * later call (SystemC cannot elaborate a second time). */
Model &model();

/* Run one job to completion: reset the modules for job.p, submit the job
 * and let the kernel run until the controller is idle again.  Throws std::runtime_error if the kernel stops
 * before the job is done. */
void run_job(Job &job);

}  // namespace ftsim

#endif /* FT_SIM_MODEL_H */
