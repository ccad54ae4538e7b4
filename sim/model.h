/* model.h - the SystemC model of the simulator (C++ only, behind sim.h): a slow-memory channel, a fast memory, a compute engine and the controller that replays a schedule.
 *
 * The three resource modules are passive targets in the TLM loosely-timed
 * style: the controller calls them through sc_ports bound to their
 * interfaces (channel_if, memory_if, compute_if) with the time at which it
 * issues a request, and each module answers from its own state: when a
 * transfer or a computation ends (queues and busy-until times), which slices
 * are already resident, how full the fast memory is.  The controller is the
 * one process (an SC_THREAD): it replays a subgraph's steps ahead of the
 * kernel's clock (temporal decoupling with a subgraph quantum), then waits
 * in SystemC time until the subgraph ends, so sc_time_stamp() is the end of
 * the last subgraph; the launch overhead is a wait of its own.  Runs of
 * like k-steps go through the fast memory and the queues in one go (each
 * module repeats a step: repeat()).  See sim/README.md for the model, the
 * runs ("Speed") and the time mapping.
 *
 * Time: the kernel runs at 1 fs resolution and one cost unit is 1e9 fs
 * (shown as 1 us).  Modules compute in integer fs (fs_t).
 */
#ifndef FT_SIM_MODEL_H
#define FT_SIM_MODEL_H

#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fusetile/fusetile.h"
#include "fusetile/trace.h"

/* The cost model's shared rules (sched/cost/shared_rules.h, the one header of sched/ that sim/ includes: the units' waves and
 * their share of the bandwidths, the bandwidths the steps see), called
 * here as in the analytic model so that the two cannot drift apart. */
extern "C" {
#include "../sched/cost/shared_rules.h" /* the cost rules the simulator shares with the library */
}

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

/* A slow-memory channel (with a shared cache: the cache's port to the
 * units): a queue per compute unit (a lane), transfers served in issue
 * order on their lane, each moving data no earlier than the transfer
 * latency after its issue (requests are pipelined: the latency of a
 * transfer queued behind others is hidden).  The units of a wave of
 * `share` tiles use the channel together: each lane moves data at
 * bandwidth / share (ft__rates_share, ft_timing's units). */
struct channel_if : virtual sc_core::sc_interface {
    /* Queue on lane `lane` (the compute unit; 0 with one unit) a transfer
     * of `elems` elements issued at time `issue`, taking elems x `scale` /
     * (bandwidth / share) (scale != 1: a write on a shared channel whose
     * write bandwidth differs; share: the tiles of the issuing tile's
     * wave).  Returns its end; *start receives the time its data starts
     * moving (issue + latency, or when the transfers queued before it on
     * the lane have ended). */
    virtual fs_t transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale = 1.0, int lane = 0, std::int64_t share = 1) = 0;
    /* Time spent moving data since the last reset, each transfer's weighted
     * by its share of the bandwidth (1 / share): the whole channel's busy
     * time. */
    virtual fs_t busy() const = 0;
    /* A step of lane `lane` starts: its transfers from now on are the ones
     * repeat() copies (the like steps of the controller's runs). */
    virtual void mark(int lane) = 0;
    /* Whether the transfers on `lane` since mark() give the same spans when
     * issued again d later: there were none, or the lane was idle when the
     * first of them was issued and is idle again d after that. */
    virtual bool can_repeat(int lane, fs_t d) const = 0;
    /* The transfers since mark() issued again n times, each copy d later
     * than the one before (can_repeat(lane, d) holds): the lane's times
     * move n d on, its busy time and the channel's grow n times the step's;
     * the last copy is the marked step from now on.  Throws
     * std::overflow_error past the clock's end. */
    virtual void repeat(int lane, std::int64_t n, fs_t d) = 0;
};

/* How a tensor's slices move from one step to the next: dr rows down and
 * dc columns right. */
struct SliceMove {
    int tensor;
    std::int64_t dr, dc;
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
    /* The next n steps need the last step's slices (those step() kept:
     * whole resident tensors and duplicates dropped) moved on each step:
     * tensor moves[i].tensor's slices by moves[i], the others not at all.
     * The memory answers for all of them at once: each tensor's slices
     * moving alike, every one of the steps keeps the same of its step
     * before's slices (those that a slice moved on one step equals) and
     * loads the others, and holds as much.  Appends to *loads the slices
     * the first of them loads (the later ones load the same, moved on) and
     * returns the occupancy during each (the last step's); the last of
     * them is the last step from then on. */
    virtual std::int64_t repeat(std::int64_t n, const SliceMove *moves, int nmoves, std::vector<ft_slice> *loads) = 0;
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
    /* Queue on compute unit `unit` (0 with one unit) a step's computation:
     * its ops' `cost` units plus the step overhead (ft_timing: every step
     * pays it), issued at `issue`; returns its end, *start its start.
     * Each unit computes one step at a time, in issue order. */
    virtual fs_t run(double cost, fs_t issue, fs_t *start, int unit = 0) = 0;
    /* Time spent computing since the last reset, summed over the units. */
    virtual fs_t busy() const = 0;
    /* mark, can_repeat, repeat: as channel_if's, for unit `unit`'s
     * computations. */
    virtual void mark(int unit) = 0;
    virtual bool can_repeat(int unit, fs_t d) const = 0;
    virtual void repeat(int unit, std::int64_t n, fs_t d) = 0;
};

/* The shared cache between the units and the slow memory (ft_timing's
 * cache_capacity and cache_bandwidth).  The units' transfers go to the
 * cache, whose port the channels model at the cache's bandwidth; behind it
 * the slow memory moves each subgraph's footprint, unless the footprint
 * fits the capacity (warm: it stays in the cache between runs, as in a
 * benchmark replayed back to back). */
struct cache_if : virtual sc_core::sc_interface {
    /* A subgraph whose slow-memory footprint is `reads` elements to load and
     * `writes` to write back (each tensor whole and once) starts at `at`.
     * Returns when the slow memory has moved that footprint through the
     * cache, the earliest end of the subgraph: `at` without a cache or when
     * reads + writes fit its capacity; else after the reads at the slow
     * memory's read bandwidth, then the writes at its write bandwidth. */
    virtual fs_t fill(std::int64_t reads, std::int64_t writes, fs_t at) = 0;
    /* Whether there is a cache. */
    virtual bool present() const = 0;
    /* Time the slow memory behind the cache spent moving data since the
     * last reset. */
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
    /* The same at `rate` work per cost unit from now on: a rate other than
     * the current one starts a new busy period when the last item ends (or
     * at `issue` when idle). */
    fs_t serve(double work, fs_t issue, fs_t *start, double rate);
    /* Time spent serving since reset. */
    fs_t busy() const { return busy_; }
    /* A step starts: the items served from now on are the ones repeat()
     * copies. */
    void mark()
    {
        mark_busy_ = busy_;
        mark_used_ = false;
    }
    /* Whether the items since mark() end the same when issued again d
     * later: there were none, or the queue was idle when the first came
     * (a busy period started with it, so nothing before it counts) and is
     * idle again d after it. */
    bool can_repeat(fs_t d) const { return !mark_used_ || (mark_idle_ && free_at_ - mark_issue_ <= d); }
    /* The items since mark() served again n times, each copy issued d after
     * the one before (can_repeat(d) holds): the ends, the busy period and
     * the mark move n d on, the busy time grows n times the step's.
     * Returns the step's busy time.  Throws std::overflow_error past the
     * clock's end. */
    fs_t repeat(std::int64_t n, fs_t d);

private:
    /* work / rate in fs, rounded once (to_fs), from a memo of the last
     * SPAN_MEMO answers */
    fs_t span(double work);
    static constexpr int SPAN_MEMO = 4;
    struct Span {
        double work = -1, rate = 0; /* -1: empty (work is never negative) */
        fs_t fs = 0;
    };
    Span memo_[SPAN_MEMO];
    int memo_next_ = 0;
    double rate_ = 1;
    fs_t free_at_ = 0;       /* end of the last item */
    fs_t period_start_ = 0;  /* start of the current busy period */
    double period_work_ = 0; /* work served in it */
    fs_t busy_ = 0;
    /* the step that repeat() copies (mark) */
    fs_t mark_busy_ = 0;     /* busy time before it */
    fs_t mark_issue_ = 0;    /* its first item's issue */
    bool mark_used_ = false; /* it has an item */
    bool mark_idle_ = false; /* the queue was idle at its first item */
};

class Channel : public sc_core::sc_module, public channel_if {
public:
    explicit Channel(sc_core::sc_module_name name);
    /* A run starts at `now` with `lanes` lanes (the compute units);
     * bandwidth in elements per cost unit, latency in cost units. */
    void reset(double bandwidth, double latency, fs_t now, int lanes = 1);
    fs_t transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale = 1.0, int lane = 0, std::int64_t share = 1) override;
    fs_t busy() const override { return busy_; }
    void mark(int lane) override;
    bool can_repeat(int lane, fs_t d) const override { return lanes_.at((size_t)lane).can_repeat(d); }
    void repeat(int lane, std::int64_t n, fs_t d) override;

private:
    fs_t mark_busy_ = 0;  /* the channel's busy time at the last mark */
    double bandwidth_ = 1;
    std::vector<BusyQueue> lanes_;  /* work in elements, rate = the lane's share of the bandwidth */
    std::int64_t share_ = -1;       /* the share last asked of ft__rates_share (-1: none) */
    double share_rate_ = 1;         /* ... and the lane's bandwidth it gave */
    fs_t latency_ = 0;
    fs_t busy_ = 0;
};

class FastMemory : public sc_core::sc_module, public memory_if {
public:
    explicit FastMemory(sc_core::sc_module_name name);
    /* A run starts: empty memory of `capacity` elements for a problem's tensors. */
    void reset(const ft_problem *p);
    bool can_retain(const unsigned char *produced, int t) const override;
    void begin_subgraph(const std::int64_t *buf, int nbuf) override;
    std::int64_t step(const ft_slice *need, int n, std::vector<ft_slice> *loads) override;
    std::int64_t repeat(std::int64_t n, const SliceMove *moves, int nmoves, std::vector<ft_slice> *loads) override;
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
    /* A run starts at `now` for problem p under `model`, on `units`
     * compute units. */
    void reset(const ft_problem *p, ft_compute_model model, fs_t now, int units = 1);
    int check_granularity(std::int64_t w, std::int64_t h, std::int64_t k, std::string *why) const override;
    double op_cost(ft_role role, const ft_active &a) const override;
    fs_t run(double cost, fs_t issue, fs_t *start, int unit = 0) override;
    fs_t busy() const override;
    void mark(int unit) override { q_.at((size_t)unit).mark(); }
    bool can_repeat(int unit, fs_t d) const override { return q_.at((size_t)unit).can_repeat(d); }
    void repeat(int unit, std::int64_t n, fs_t d) override { q_.at((size_t)unit).repeat(n, d); }

private:
    std::int64_t nw_ = 1, nh_ = 1, nk_ = 1;
    bool larger_ = false;
    const ft_problem *p_ = nullptr;
    ft_compute_model model_ = FT_COMPUTE_NATIVE;
    double step_overhead_ = 0;
    std::vector<BusyQueue> q_;  /* per unit: work in cost units, rate 1 */
    /* per op: its last cost and what it was computed from (op_cost) */
    struct Memo {
        bool valid = false;
        ft_role role = FT_ROLE_EPILOGUE;
        unsigned char row_kind = 0, col_kind = 0;
        std::int64_t rows = 0, cols = 0, depth = 0;
        double cost = 0;
    };
    mutable std::vector<Memo> memo_;
};

class SharedCache : public sc_core::sc_module, public cache_if {
public:
    explicit SharedCache(sc_core::sc_module_name name);
    /* A run starts at `now` for problem p: its cache (none when
     * timing.cache_capacity is 0) and its slow memory's bandwidths. */
    void reset(const ft_problem *p, fs_t now);
    fs_t fill(std::int64_t reads, std::int64_t writes, fs_t at) override;
    bool present() const override { return capacity_ > 0; }
    fs_t busy() const override { return slow_.busy(); }

private:
    double capacity_ = 0;          /* elements */
    const ft_problem *p_ = nullptr; /* the run's problem (its cache's resident part) */
    double read_bw_ = 1, write_bw_ = 1;  /* the slow memory's */
    BusyQueue slow_;               /* the slow memory behind the cache */
};

/* Per-subgraph figures of a replay. */
struct SgResult {
    fs_t simulated = 0;
    std::int64_t steps = 0;
    std::int64_t peak = 0;
    fs_t channel_busy = 0;  /* the busier channel's, with separate channels */
    fs_t compute_busy = 0;  /* with several units, their mean */
    std::int64_t loaded = 0;   /* elements the steps replayed loaded from slow memory */
    std::int64_t written = 0;  /* ... and wrote back to it (the energy account) */
    std::int64_t fp_reads = 0, fp_writes = 0;  /* the plan's footprint (SgPlan) */
};

/* ------------------------------------------------------------- units */

/* Where one compute unit stands in the replay of a subgraph. */
struct UnitClock {
    fs_t next = 0;               /* overlap STEP and NONE: when its next step starts */
    fs_t c_prev = 0, c_prev2 = 0;  /* PIPELINE: compute ends of its last two steps */
    fs_t end = 0;                /* the end of the last thing it did */
    std::vector<ft_slice> pending;  /* PIPELINE: its last step's write-backs, not issued yet */
    std::int64_t pending_share = 1; /* ... the wave size of that step */
    std::int64_t tile = -1, step = -1, kstep = -1;  /* its last step */
};

/* The wave scheduler of ft_timing's units: a subgraph's tiles go to the
 * units in waves of `units` tiles, in traversal order; the tile at
 * position pos runs on unit pos mod units and moves data at its wave's
 * share of the bandwidths (ft__wave_size tiles share them); a wave ends
 * when its slowest tile ends.  With one unit every tile is a wave. */
class Waves {
public:
    /* A subgraph of `ntiles` tiles of p starts at `t` (after its launch
     * overhead). */
    void begin(const ft_problem *p, std::int64_t ntiles, fs_t t);
    /* The tile at traversal position `pos` comes next (positions in
     * order).  Returns its unit.  When it opens a wave after the first,
     * the previous wave is over: overlap STEP and NONE: every unit's next
     * step starts when the wave's last step ends; PIPELINE (the units keep
     * their pipelines across waves): no compute of the new wave starts
     * before the last compute of the previous one (barrier()); and *opened
     * is set. */
    int tile(std::int64_t pos, bool *opened);
    /* Tiles of the current wave: the units that share the bandwidths. */
    std::int64_t share() const { return share_; }
    /* The state of unit u (0 .. units - 1). */
    UnitClock &unit(int u) { return units_[(size_t)u]; }
    /* PIPELINE with several units: no compute of the current wave starts
     * before this; else 0. */
    fs_t barrier() const { return barrier_; }
    /* No step issued from now on starts (nor issues anything) before this
     * time: the units' next step times (PIPELINE: the compute ends that
     * free their buffers). */
    fs_t horizon() const;
    /* The latest end over the units (at least the subgraph's start). */
    fs_t end() const;
    /* Units that ran a tile of the subgraph so far. */
    int used() const { return used_; }

private:
    const ft_problem *p_ = nullptr;
    bool pipeline_ = false;
    std::int64_t ntiles_ = 0, units_n_ = 1, share_ = 1;
    int used_ = 0;
    fs_t start_ = 0, barrier_ = 0;
    std::vector<UnitClock> units_;
};

/* The trace records of a replay on several units, held until no later
 * record can start before them and then handed to the trace in time order
 * (the trace wants each kind's spans in time order, ft_trace_span; the
 * units of a wave are replayed one after the other, each from the wave's
 * start).  With one unit records go straight to the trace. */
class TraceQueue {
public:
    /* A run with trace t (NULL: none) on `units` units. */
    void begin(ft_trace *t, int units);
    /* A subgraph starts: every unit's fast memory is empty. */
    void new_subgraph();
    /* Record a span (ft_trace_span). */
    void span(const ft_trace_event &e);
    /* Unit `unit`'s fast memory holds `elems` from `time` on; the trace
     * shows the fullest unit's occupancy (ft_trace_occupancy). */
    void occupancy(double time, int unit, std::int64_t elems);
    /* Hand over the records that start at or before `upto` (cost units
     * since the run's start), in time order, and tell the trace that no
     * later record starts before it (ft_trace_sync). */
    void release(double upto);
    /* Hand over every record held (a subgraph ends). */
    void flush();

private:
    struct Item {
        double start;
        std::uint64_t seq;   /* arrival order, for records that start together */
        int unit;            /* occupancy: the unit; span: -1 */
        std::int64_t elems;  /* occupancy */
        ft_trace_event ev;   /* span */
    };
    void emit(const Item &it);
    ft_trace *t_ = nullptr;
    bool direct_ = true;
    std::uint64_t seq_ = 0;
    std::vector<Item> items_;
    std::vector<std::int64_t> occ_;  /* per unit: its fast memory's occupancy */
};

/* One replay for the controller. */
struct Job {
    const ft_problem *p = nullptr;
    const ft_schedule *s = nullptr;
    ft_compute_model model = FT_COMPUTE_NATIVE;
    ft_trace *trace = nullptr;   /* NULL: no trace */
    ft_progress_fn progress = nullptr; /* called every PROGRESS_EVERY steps */
    void *progress_ctx = nullptr;
    int progress_parts = 1;            /* the callback's total is the steps times this */
    std::int64_t total_steps = 0;      /* the progress callback's total (set by replay) */
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
    sc_core::sc_port<cache_if> cache;

    SC_HAS_PROCESS(Controller);
    explicit Controller(sc_core::sc_module_name name);

    /* Hand over a job; the process starts it at the next delta cycle. */
    void submit(Job *job);

private:
    void process();
    void replay(Job &job);
    void plan(Job &job);
    void run_subgraph(Job &job, int sg, fs_t t_start);
    /* Nothing from now on starts before `t`: the trace records before it
     * go out, and the units' clock (ahead_) moves on to it; the kernel's
     * clock follows at the subgraph's end. */
    void sync(Job &job, fs_t t);

    sc_core::sc_event job_ev_;
    Job *job_ = nullptr;

    /* Per-run state, sized on plan(). */
    struct SgPlan {
        std::vector<ft_role> role;       /* per position in the op list */
        std::int64_t ntx = 0, nty = 0, nk = 0;
        int matmul = 0;                  /* it has a MatMul: its tiles pay the MatMul tile overhead */
        std::vector<int> written;        /* outputs written to slow memory */
        std::vector<std::int64_t> buffers;  /* output buffer sizes */
        /* the slow-memory footprint (each tensor whole and once): inputs
         * neither made here nor resident, and written outputs */
        std::int64_t footprint_reads = 0, footprint_writes = 0;
        /* no op feeds a MatMul in it (every role k-loop or epilogue): the
         * k-steps of a tile run alike between two where an op takes its
         * last k-slice (like_steps) */
        bool like_runs = false;
    };
    std::vector<SgPlan> plans_;
    std::vector<unsigned char> produced_;  /* per tensor, current subgraph */
    std::vector<unsigned char> written_;   /* per tensor, current subgraph */
    std::vector<unsigned char> executed_;  /* per op */
    std::vector<ft_role> op_role_;         /* per op, current subgraph */
    std::vector<ft_slice> needs_, loads_, writes_;
    std::vector<ft_active> run_acts_;  /* like_steps: the active ops of a run */
    std::vector<SliceMove> moves_;     /* ... and how their slices move */
    fs_t ahead_ = 0;  /* the latest time the units synced to (sync): the kernel's clock catches up at the subgraph's end */
    double write_scale_ = 1.0;  /* a written element's work on the shared channel (issue_writes) */
    Waves waves_;
    TraceQueue tq_;
    /* Queue `ws` (write-backs issued at `at` by unit `unit`, in a wave of
     * `share` tiles) on the write channel (or the shared one); returns the
     * last one's end (`at` when there are none). */
    fs_t issue_writes(Job &job, const std::vector<ft_slice> &ws, fs_t at, struct ft_trace_event &ev, int unit, std::int64_t share);
    /* Queue the transfer of slice sl on channel ch, issued at `at` by unit
     * `unit` in a wave of `share` tiles, each element `scale` of the
     * channel's work, and give the trace its span (of ev's kind); returns
     * its end. */
    fs_t move(Job &job, channel_if *ch, const ft_slice &sl, fs_t at, double scale, int unit, std::int64_t share, struct ft_trace_event &ev);

    /* The subgraph being replayed (run_subgraph sets it). */
    struct Current {
        const ft_problem *p = nullptr;
        int sg = 0;
        const SgPlan *pl = nullptr;
        SgResult *res = nullptr;
        fs_t t_start = 0;                           /* before its launch overhead */
        fs_t rd_busy0 = 0, wr_busy0 = 0, cp_busy0 = 0;  /* the modules' busy times then */
    } cur_;
    /* Where a step lies in its subgraph. */
    struct StepAt {
        std::int64_t tile, row, col, index, kstep;
    };
    /* The last step that went through the modules, which the steps after
     * it may repeat (finish_step: overlap STEP or NONE, no trace). */
    struct Last {
        bool valid = false;          /* the modules can repeat it */
        int unit = 0;
        std::int64_t share = 0;      /* its wave's tiles */
        double compute = 0;          /* its ops' cost with the tile overhead */
        std::vector<std::int64_t> loads, writes;  /* its transfers' elements, in issue order */
        fs_t t0 = 0;                 /* the start of the last step like it */
        fs_t d = 0;                  /* its span, start to end */
        std::int64_t pending = 0;    /* steps like it since, not yet repeated by the modules */
    } last_;
    /* The needs of a step: tensor t's region [r0, r1) x [c0, c1), clipped
     * to the tensor, appended to needs_ unless the subgraph makes t or the
     * region is empty. */
    void need(int t, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1)
    {
        if (produced_[(size_t)t])
            return;
        const ft_tensor *T = &cur_.p->tensors[t];
        r0 = std::max<std::int64_t>(r0, 0);
        r1 = std::min(r1, T->height);
        c0 = std::max<std::int64_t>(c0, 0);
        c1 = std::min(c1, T->width);
        if (r0 < r1 && c0 < c1) /* built in place: no copy of a slice just written */
            needs_.push_back(ft_slice{t, ft_region{r0, r1, c0, c1}});
    }
    /* A step of unit `unit` at `at`, its needs in needs_ and its
     * write-backs in writes_, computing `compute` units (its ops' cost and
     * the tile overhead): the fast memory takes the needs, then
     * time_steps. */
    void finish_step(Job &job, const StepAt &at, int unit, double compute, struct ft_trace_event &ev);
    /* The fast memory holds `occ` elements in the step at `at`, starting at
     * t0: the subgraph's peak, and oom (Invalid) past the capacity. */
    void take_occupancy(Job &job, const StepAt &at, fs_t t0, std::int64_t occ);
    /* n steps of unit `unit` from `at` on (the next k-steps of its tile),
     * each loading slices of the sizes in loads_, writing back writes_ and
     * computing `compute`: the loads, write-backs and compute go out as
     * the overlap mode says, the unit's clock moves on, the trace gets the
     * records (one_step).  Steps that make the same requests as the step
     * before them on their unit, from that step's end, only move the clock
     * (repeat_steps); the modules repeat them later (flush_like). */
    void time_steps(Job &job, const StepAt &at, int unit, double compute, std::int64_t n, struct ft_trace_event &ev);
    /* One step through the modules (time_steps); `repeatable`: mark it, so
     * that the steps after it may repeat it (last_). */
    void one_step(Job &job, const StepAt &at, int unit, double compute, struct ft_trace_event &ev, bool repeatable);
    /* n steps from `at` like last_ and each starting at the end of the one
     * before: the unit's clock moves n spans on, the modules catch up in
     * flush_like. */
    void repeat_steps(Job &job, const StepAt &at, int unit, std::int64_t n);
    /* moves_ moves tensor t's slices by (dr, dc); false when it moves them
     * otherwise already. */
    bool add_move(int t, std::int64_t dr, std::int64_t dc);
    /* The modules repeat the steps finish_step left to them. */
    void flush_like();
    /* A step is done: count it, and call the job's progress callback every
     * PROGRESS_EVERY steps (throws when it asks to stop). */
    void count_step(Job &job, const StepAt &at);
    /* After step `step` (unit `unit`) of a subgraph with like_runs: replay
     * the run of k-steps like it that follows in its tile (their needs
     * worked out here, from step's active ops) through finish_step, and
     * return how many (0: none; the walker skips them). */
    std::int64_t like_steps(Job &job, const ft_step &step, int unit, struct ft_trace_event &ev);
    /* The current subgraph's figures up to t_end. */
    void close_sg(fs_t t_end);
};

/* The process's model: built on first use (SystemC elaborates once per
 * process), reused by every run. */
struct Model {
    Channel channel;
    Channel write_channel;
    FastMemory memory;
    ComputeEngine engine;
    SharedCache cache;
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
