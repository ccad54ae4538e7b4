/* model.cc - the controller's replay of a schedule on the SystemC model (model.h), the process-wide model and one run of it. */
#include "model.h"
#include "stack_bounds.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

using sc_core::sc_module_name;
using sc_core::sc_time;

/* libsystemc's own main() refers to sc_main; fusetile drives the kernel
 * with sc_start() from ft_sim_run and never calls it.  Weak, so that a
 * SystemC program that links the simulator keeps its own. */
extern "C" __attribute__((weak)) int sc_main(int, char **)
{
    return 0;
}

namespace ftsim {

/* floor(a m / n) and ceil(a m / n) for a, m >= 0, n > 0, exact (a m may
 * pass 64 bits): the two ends of a Layout op's input range. */
static inline std::int64_t scale_down(std::int64_t a, std::int64_t m, std::int64_t n)
{
    unsigned __int128 x = (unsigned __int128)a * (unsigned __int128)m;
    return (std::int64_t)(x / (unsigned __int128)n);
}
static inline std::int64_t scale_up(std::int64_t a, std::int64_t m, std::int64_t n)
{
    unsigned __int128 x = (unsigned __int128)a * (unsigned __int128)m;
    return x == 0 ? 0 : (std::int64_t)((x - 1) / (unsigned __int128)n + 1);
}

/* Whether the transfers `ts` move the element counts `elems`, in order. */
static inline bool same_elems(const std::vector<ft_slice> &ts, const std::vector<std::int64_t> &elems)
{
    if (ts.size() != elems.size())
        return false;
    for (size_t i = 0; i < ts.size(); i++)
        if (region_elems(ts[i].region) != elems[i])
            return false;
    return true;
}

/* Steps between two calls of a job's progress callback (as ft_evaluate). */
static const std::int64_t PROGRESS_EVERY = (std::int64_t)1 << 18;

/* ----------------------------------------------------------- Controller */

Controller::Controller(sc_module_name name)
    : sc_core::sc_module(name), channel("channel"), write_channel("write_channel"), memory("memory"), engine("engine"), cache("cache")
{
    SC_THREAD(process);
}

void Controller::submit(Job *job)
{
    job_ = job;
    job_ev_.notify(sc_core::SC_ZERO_TIME);
}

static inline fs_t now_fs() { return sc_core::sc_time_stamp().value(); }

void Controller::process()
{
    for (;;) {
        while (!job_)
            wait(job_ev_);
        Job &job = *job_;
        job.start = now_fs();
        ahead_ = job.start;
        try {
            replay(job);
        } catch (const sc_core::sc_unwind_exception &) {
            throw; /* the kernel is killing this process */
        } catch (const Invalid &e) {
            job.invalid = true;
            job.failure = e;
        } catch (const std::bad_alloc &) {
            job.error = true;
            job.error_code = FT_ENOMEM;
            job.message = "out of memory";
        } catch (const std::exception &e) {
            job.error = true;
            job.error_code = FT_EINPUT;
            job.message = e.what();
        }
        /* a replay that stops inside a subgraph ends where the units had
         * synced to (the kernel's clock has not moved there yet) */
        job.end = std::max(now_fs(), ahead_);
        job.done = true;
        job_ = nullptr;
    }
}

void Controller::replay(Job &job)
{
    const ft_problem *p = job.p;
    const ft_schedule *s = job.s;
    plan(job);
    /* the step count is closed-form: refuse a replay over FT_MAX_STEPS
     * before its first step, as ft_evaluate does */
    std::int64_t nsteps = 0;
    ft_status st;
    int src = ft_schedule_steps(p, s, &nsteps, &st);
    if (src != FT_OK)
        throw std::runtime_error(st.msg);
    job.total_steps = nsteps * job.progress_parts;
    ft_trace_expect_steps(job.trace, nsteps);
    produced_.assign((size_t)p->ntensors, 0);
    written_.assign((size_t)p->ntensors, 0);
    executed_.assign((size_t)p->nops, 0);
    op_role_.assign((size_t)p->nops, FT_ROLE_EPILOGUE);
    job.sg.assign((size_t)s->nsubgraphs, SgResult());
    tq_.begin(job.trace, (int)ft__units(p));
    {
        ft__rates r;
        ft__step_rates(p, &r);
        /* a shared channel moves a written element in 1 / write bandwidth */
        write_scale_ = p->timing.duplex || r.wb == r.rb ? 1.0 : r.rb / r.wb;
    }
    for (int i = 0; i < s->nsubgraphs; i++)
        run_subgraph(job, i, now_fs());
    for (int o = 0; o < p->nops; o++)
        if (!executed_[(size_t)o])
            throw Invalid(FT_R_OP_NOT_COVERED,
                          fmt("%s: op %d never ran (no step of any subgraph computed a region of it)", s->name ? s->name : "schedule", o), -1,
                          -1, -1, now_fs() - job.start);
    if (job.trace)
        ft_trace_occupancy(job.trace, to_units(now_fs() - job.start), 0);
}

namespace {
/* ft_walk handle owned for the length of a subgraph */
struct WalkDeleter {
    void operator()(ft_walk *w) const { ft_walk_free(w); }
};
}  // namespace

void Controller::run_subgraph(Job &job, int sg, fs_t t_start)
{
    const ft_problem *p = job.p;
    const ft_schedule *s = job.s;
    const ft_subgraph *g = &s->sg[sg];
    const SgPlan &pl = plans_[(size_t)sg];
    ft_trace *tr = job.trace;

    for (int j = 0; j < g->nops; j++) {
        produced_[(size_t)p->ops[g->ops[j]].output] = 1;
        op_role_[(size_t)g->ops[j]] = pl.role[(size_t)j];
    }
    for (int t : pl.written)
        written_[(size_t)t] = 1;
    memory->begin_subgraph(pl.buffers.data(), (int)pl.buffers.size());
    cur_.p = p;
    cur_.sg = sg;
    cur_.pl = &pl;
    cur_.res = &job.sg[(size_t)sg];
    cur_.res->fp_reads = pl.footprint_reads;
    cur_.res->fp_writes = pl.footprint_writes;
    cur_.t_start = t_start;
    cur_.rd_busy0 = channel->busy();
    cur_.wr_busy0 = write_channel->busy();
    cur_.cp_busy0 = engine->busy();
    last_.valid = false;
    last_.pending = 0;

    ft_walk *wp = nullptr;
    ft_status st;
    int rc = ft_walk_begin(p, s, sg, job.model, &wp, &st);
    if (rc == FT_ENOMEM)
        throw std::bad_alloc();
    if (rc != FT_OK)
        throw std::runtime_error(st.msg);
    std::unique_ptr<ft_walk, WalkDeleter> walk(wp);
    /* the data flow only: the walker's slices and costs are not read */
    ft_walk_flow_only(wp);

    /* The launch overhead passes before the first step. */
    const ft_timing &tm = p->timing;
    if (tm.launch_overhead > 0)
        wait(sc_time::from_value(to_fs(tm.launch_overhead)));
    const fs_t t_begin = now_fs();
    /* Behind a shared cache the slow memory moves the subgraph's footprint
     * unless it fits: the subgraph cannot end before that. */
    const fs_t fill_end = cache->fill(pl.footprint_reads, pl.footprint_writes, t_begin);
    /* The tiles go to the units in waves.  Each unit keeps its own time:
     * the units of a wave are replayed one after the other, each from the
     * wave's start (the modules answer for any future time, as in TLM's
     * temporal decoupling); the kernel's clock moves on when no later step
     * can start before (sync).  One unit: every tile is a wave, and the
     * steps run as on the contest's machine.  A unit with double buffering
     * issues a step's loads when the compute of its step two before ends
     * (its buffer frees), the compute when they are in and the unit is
     * free, the write-backs when the compute ends (queued with the unit's
     * next step, so its lane serves requests in time order). */
    waves_.begin(p, pl.ntx * pl.nty, t_begin);
    tq_.new_subgraph();

    ft_step step;
    int unit = 0;
    std::int64_t pos = -1; /* the tile's traversal position */
    struct ft_trace_event ev = {}; /* the step's trace records */
    /* runs of like steps (like_steps): in a subgraph of k-loop MatMuls and
     * their epilogue, without a trace */
    const bool runs = pl.like_runs && !tr;
    while (ft_walk_next(walk.get(), &step)) {
        if (step.kstep == 0) {
            bool opened;
            unit = waves_.tile(++pos, &opened);
            if (opened)
                sync(job, waves_.horizon());
        }
        /* one pass over the active ops: what they read (slices of tensors
         * from outside the subgraph: tensors made inside are ephemeral and
         * never reach the fast memory), what they write back (an output
         * leaves when its op finishes the tile) and what they cost */
        needs_.clear();
        writes_.clear();
        double cost = 0;
        for (int a = 0; a < step.nactive; a++) {
            const ft_active &act = step.acts[a];
            const ft_op *op = &p->ops[act.op];
            const ft_role role = op_role_[(size_t)act.op];
            if (act.role != role)
                throw std::logic_error(fmt("subgraph %d, step %lld: the walker and the simulator disagree on the role of op %d", sg,
                                           (long long)step.index, act.op));
            executed_[(size_t)act.op] = 1;
            const ft_region &r = act.region;
            cost += engine->op_cost(role, act);
            if (written_[(size_t)op->output] &&
                ((role == FT_ROLE_KLOOP && act.ks1 == op->k) || (role == FT_ROLE_EPILOGUE && step.kstep == pl.nk - 1)))
                writes_.push_back(ft_slice{op->output, r});
            if (op->type == FT_OP_MATMUL) {
                std::int64_t k0 = role == FT_ROLE_KLOOP ? act.ks0 : 0, k1 = role == FT_ROLE_KLOOP ? act.ks1 : op->k;
                need(op->inputs[0], r.r0, r.r1, k0, k1);
                need(op->inputs[1], k0, k1, r.c0, r.c1);
            } else if (op->type == FT_OP_LAYOUT) {
                /* SPEC 4's Layout rule: output rows [r0, r1) of H(O) read
                 * input rows [floor(r0 H(X) / H(O)), ceil(r1 H(X) / H(O))),
                 * columns likewise.  The simulator keeps its own copy of
                 * this rule, on purpose, as of the roles (plan): it checks
                 * the library's (sched/cost/walk.c). */
                const ft_tensor &O = p->tensors[op->output], &X = p->tensors[op->inputs[0]];
                need(op->inputs[0], scale_down(r.r0, X.height, O.height), scale_up(r.r1, X.height, O.height),
                     scale_down(r.c0, X.width, O.width), scale_up(r.c1, X.width, O.width));
            } else {
                for (int i = 0; i < op->ninputs; i++)
                    need(op->inputs[i], r.r0, r.r1, r.c0, r.c1);
            }
        }
        const StepAt at{step.tile, step.tile_row, step.tile_col, step.index, step.kstep};
        finish_step(job, at, unit, cost + ft__tile_extra(p, pl.matmul, step.kstep, pl.nk), ev);
        if (runs && step.kstep + 2 < pl.nk)
            ft_walk_skip(wp, like_steps(job, step, unit, ev));
    }
    flush_like();
    if (tm.overlap == FT_OVERLAP_PIPELINE) {
        /* each unit's last write-backs */
        for (int u = 0; u < waves_.used(); u++) {
            UnitClock &uc = waves_.unit(u);
            struct ft_trace_event ev = {};
            ev.sg = sg;
            ev.tile = uc.tile;
            ev.step = uc.step;
            ev.kstep = uc.kstep;
            uc.end = std::max(uc.end, issue_writes(job, uc.pending, uc.c_prev, ev, u, uc.pending_share));
            uc.pending.clear();
        }
    }
    /* The subgraph ends with its last wave, and not before the slow memory
     * behind the cache has moved its footprint. */
    const fs_t sg_end = std::max(waves_.end(), fill_end);
    tq_.flush();
    if (sg_end > now_fs())
        wait(sc_time::from_value(sg_end - now_fs()));

    memory->end_subgraph(g->retain, g->nretain);
    for (int j = 0; j < g->nops; j++)
        produced_[(size_t)p->ops[g->ops[j]].output] = 0;
    for (int t : pl.written)
        written_[(size_t)t] = 0;
    close_sg(now_fs());
    if (tr) { /* the whole subgraph, launch overhead included */
        struct ft_trace_event ev = {};
        ev.kind = FT_TRACE_SUBGRAPH;
        ev.sg = sg;
        ev.tile = ev.step = ev.kstep = -1;
        ev.tensor = -1;
        ev.start = to_units(t_start - job.start);
        ev.end = to_units(now_fs() - job.start);
        ft_trace_span(tr, &ev);
    }
}

void Controller::close_sg(fs_t t_end)
{
    SgResult &res = *cur_.res;
    res.simulated = t_end - cur_.t_start;
    res.channel_busy = std::max(channel->busy() - cur_.rd_busy0, write_channel->busy() - cur_.wr_busy0);
    res.compute_busy = (engine->busy() - cur_.cp_busy0) / (fs_t)ft__units(cur_.p);
}

void Controller::finish_step(Job &job, const StepAt &at, int unit, double compute, struct ft_trace_event &ev)
{
    const ft_timing &tm = job.p->timing;
    UnitClock &uc = waves_.unit(unit);
    const fs_t t0 = tm.overlap == FT_OVERLAP_PIPELINE ? uc.c_prev2 : uc.next;
    loads_.clear();
    const std::int64_t occ = memory->step(needs_.data(), (int)needs_.size(), &loads_);
    take_occupancy(job, at, t0, occ);
    if (job.trace) /* every step (the writer drops repeats): a trace window starts with it */
        tq_.occupancy(to_units(t0 - job.start), unit, occ);
    time_steps(job, at, unit, compute, 1, ev);
}

void Controller::take_occupancy(Job &job, const StepAt &at, fs_t t0, std::int64_t occ)
{
    SgResult &res = *cur_.res;
    if (occ > res.peak)
        res.peak = occ;
    if ((double)occ <= memory->capacity())
        return;
    const ft_schedule *s = job.s;
    std::int64_t whole, buffers, slices;
    memory->usage(&whole, &buffers, &slices);
    flush_like();
    close_sg(t0);
    char tbuf[FT_NUMBUF];
    throw Invalid(FT_R_OOM,
                  fmt("%s: at simulated time %s, subgraph %d, tile %lld (row %lld, col %lld), step %lld (k-step %lld): fast-memory "
                      "occupancy %lld (resident %lld, output buffers %lld, slices %lld) exceeds fast_memory_capacity %.17g",
                      s->name ? s->name : "schedule", ft_format_double(tbuf, to_units(t0 - job.start)), cur_.sg, (long long)at.tile,
                      (long long)at.row, (long long)at.col, (long long)at.index, (long long)at.kstep, (long long)occ, (long long)whole,
                      (long long)buffers, (long long)slices, memory->capacity()),
                  cur_.sg, at.tile, at.index, t0 - job.start);
}

void Controller::time_steps(Job &job, const StepAt &at, int unit, double compute, std::int64_t n, struct ft_trace_event &ev)
{
    const ft_timing &tm = job.p->timing;
    /* Overlap STEP or NONE without a trace: every step of a unit starts
     * with the unit's lanes and engine idle (it starts when the last of its
     * step before ended), so a step that makes the same requests as the
     * unit's step before, from that step's end, ends the same span later;
     * the modules repeat such steps in one go (flush_like). */
    const bool repeatable = !job.trace && tm.overlap != FT_OVERLAP_PIPELINE;
    /* the energy account: the n steps' transfers, each making these requests */
    for (const ft_slice &l : loads_)
        cur_.res->loaded += n * region_elems(l.region);
    for (const ft_slice &w : writes_)
        cur_.res->written += n * region_elems(w.region);
    for (std::int64_t i = 0; i < n;) {
        StepAt ai = at;
        ai.index += i;
        ai.kstep += i;
        if (repeatable && last_.valid && last_.unit == unit && last_.share == waves_.share() && last_.compute == compute &&
            waves_.unit(unit).next - last_.t0 == last_.d && same_elems(loads_, last_.loads) && same_elems(writes_, last_.writes)) {
            repeat_steps(job, ai, unit, n - i);
            return;
        }
        flush_like();
        one_step(job, ai, unit, compute, ev, repeatable);
        i++;
    }
}

void Controller::repeat_steps(Job &job, const StepAt &at, int unit, std::int64_t n)
{
    UnitClock &uc = waves_.unit(unit);
    const fs_t d = last_.d;
    for (std::int64_t done = 0; done < n;) {
        std::int64_t k = n - done;
        if (job.progress) /* up to the next call of the progress callback */
            k = std::min(k, PROGRESS_EVERY - (job.steps & (PROGRESS_EVERY - 1)));
        fs_t move, end;
        if (__builtin_mul_overflow((fs_t)k, d, &move) || __builtin_add_overflow(uc.next, move, &end))
            throw std::overflow_error(CLOCK_EXHAUSTED);
        last_.t0 = end - d;
        last_.pending += k;
        uc.next = end;
        uc.end = std::max(uc.end, end);
        done += k;
        StepAt last = at;
        last.index += done - 1;
        last.kstep += done - 1;
        uc.tile = last.tile;
        uc.step = last.index;
        uc.kstep = last.kstep;
        cur_.res->steps += k - 1;
        job.steps += k - 1;
        count_step(job, last);
    }
}

void Controller::one_step(Job &job, const StepAt &at, int unit, double compute, struct ft_trace_event &ev, bool repeatable)
{
    const ft_timing &tm = job.p->timing;
    ft_trace *tr = job.trace;
    const std::int64_t share = waves_.share();
    UnitClock &uc = waves_.unit(unit);
    const fs_t t0 = tm.overlap == FT_OVERLAP_PIPELINE ? uc.c_prev2 : uc.next;
    if (repeatable) {
        channel->mark(unit);
        write_channel->mark(unit);
        engine->mark(unit);
    }
    if (tr) /* without a trace, ev's spans are never read */
        ev = ft_trace_event{};
    ev.sg = cur_.sg;
    ev.tile = at.tile;
    ev.step = at.index;
    ev.kstep = at.kstep;
    fs_t start, r_end = t0;
    ev.kind = FT_TRACE_LOAD;
    for (const ft_slice &l : loads_)
        r_end = std::max(r_end, move(job, channel.operator->(), l, t0, 1.0, unit, share, ev));

    /* When the compute goes out and when the step ends, by overlap mode:
     *  STEP (SPEC 4): loads, write-backs and compute all at t0; the step
     *    ends when the last of them ends;
     *  NONE: compute after the loads, write-backs after the compute;
     *  PIPELINE: loads at t0 (when the unit's buffer of two steps back
     *    frees), compute once they are in, the unit is free and the
     *    previous wave's computing is over, write-backs when it ends
     *    (issued with the unit's next step); the unit's next step issues
     *    at its previous compute's end. */
    fs_t c_issue = tm.overlap == FT_OVERLAP_STEP ? t0 : r_end, w_end = t0;
    if (tm.overlap == FT_OVERLAP_STEP) {
        w_end = issue_writes(job, writes_, t0, ev, unit, share);
    } else if (tm.overlap == FT_OVERLAP_PIPELINE) {
        w_end = issue_writes(job, uc.pending, uc.c_prev, ev, unit, uc.pending_share);
        uc.pending = writes_; /* a copy: a run's steps make the same write-backs (none) */
        uc.pending_share = share;
        c_issue = std::max(c_issue, waves_.barrier());
    }
    /* the engine adds the step overhead (the tile's is in `compute`) */
    fs_t c_end = engine->run(compute, c_issue, &start, unit);
    if (tm.overlap == FT_OVERLAP_NONE)
        w_end = issue_writes(job, writes_, c_end, ev, unit, share);
    const fs_t c_start = start;
    if (tr) {
        ev.kind = FT_TRACE_COMPUTE;
        ev.tensor = -1;
        ev.region = ft_region{0, 0, 0, 0};
        ev.elems = 0;
        ev.unit = unit;
        ev.start = to_units(c_start - job.start);
        ev.end = to_units(c_end - job.start);
        tq_.span(ev);
        ev.unit = 0;
    }
    fs_t end = std::max(std::max(r_end, w_end), c_end), step_start = t0;
    uc.end = std::max(uc.end, end);
    if (tm.overlap == FT_OVERLAP_PIPELINE) {
        /* steps overlap: the step span is its compute */
        step_start = c_start;
        end = c_end;
        uc.c_prev2 = uc.c_prev;
        uc.c_prev = c_end;
    } else {
        uc.next = end;
    }
    uc.tile = at.tile;
    uc.step = at.index;
    uc.kstep = at.kstep;
    if (tr) {
        ev.kind = FT_TRACE_STEP;
        ev.start = to_units(step_start - job.start);
        ev.end = to_units(end - job.start);
        tq_.span(ev);
    }
    if (repeatable) {
        /* the step the next ones may repeat: its requests and its span */
        const fs_t d = end - t0;
        last_.valid = channel->can_repeat(unit, d) && write_channel->can_repeat(unit, d) && engine->can_repeat(unit, d);
        last_.unit = unit;
        last_.share = share;
        last_.compute = compute;
        last_.t0 = t0;
        last_.d = d;
        last_.loads.clear();
        for (const ft_slice &l : loads_)
            last_.loads.push_back(region_elems(l.region));
        last_.writes.clear();
        for (const ft_slice &w : writes_)
            last_.writes.push_back(region_elems(w.region));
    }
    count_step(job, at);
}

void Controller::count_step(Job &job, const StepAt &at)
{
    cur_.res->steps++;
    job.steps++;
    if (job.progress && (job.steps & (PROGRESS_EVERY - 1)) == 0) {
        flush_like(); /* the modules as if every step had gone through them */
        if (job.progress(job.progress_ctx, job.steps, job.total_steps))
            throw std::runtime_error(fmt("%s: simulation interrupted in subgraph %d at step %lld", job.s->name ? job.s->name : "schedule",
                                         cur_.sg, (long long)at.index));
    }
}

void Controller::flush_like()
{
    if (last_.pending == 0)
        return;
    const std::int64_t n = last_.pending;
    last_.pending = 0;
    channel->repeat(last_.unit, n, last_.d);
    write_channel->repeat(last_.unit, n, last_.d);
    engine->repeat(last_.unit, n, last_.d);
}

std::int64_t Controller::like_steps(Job &job, const ft_step &step, int unit, struct ft_trace_event &ev)
{
    const ft_problem *p = job.p;
    const SgPlan &pl = *cur_.pl;
    const std::int64_t a = step.kstep, gk = job.s->sg[cur_.sg].k;
    /* In a subgraph of k-loop MatMuls and their epilogue (plan), the
     * k-steps of a tile between two where something changes are alike:
     * the same k-loop ops active (each with a whole k-slice, not its
     * last), no epilogue, no write-back, the same compute; each needs its
     * operands' slices at the next k-slice, the left operand's moved one
     * k-slice right, the right one's one k-slice down.  The next k-steps up
     * to the first where an op takes its last k-slice, or the tile's last,
     * are such a run; the controller works out their needs itself, from
     * this step's active ops (the walker skips them: ft_walk_skip). */
    std::int64_t b = pl.nk - 1;
    run_acts_.clear();
    moves_.clear();
    bool movable = true; /* each tensor's slices move alike, within the tensor */
    double cost = 0;
    for (int i = 0; i < step.nactive; i++) {
        const ft_active &act = step.acts[i];
        const ft_op *op = &p->ops[act.op];
        if (act.role != FT_ROLE_KLOOP || act.ks0 != a * gk || act.ks1 != std::min(op->k, act.ks0 + gk))
            return 0; /* not a k-step as the controller reads it: the walker's steps go on */
        if (act.ks1 == op->k)
            continue; /* its last k-slice: inactive from the next k-step on */
        b = std::min(b, ceil_div(op->k, gk) - 1);
        run_acts_.push_back(act);
        cost += engine->op_cost(FT_ROLE_KLOOP, act); /* its k-slices keep their depth: the same cost */
        const int l = op->inputs[0], r = op->inputs[1];
        movable = movable && p->tensors[l].width >= op->k && p->tensors[r].height >= op->k && add_move(l, 0, gk) && add_move(r, gk, 0);
    }
    const std::int64_t n = b - a - 1;
    for (std::int64_t i = 1; i <= n; i++) {
        const std::int64_t ks = a + i, s0 = ks * gk, s1 = s0 + gk;
        const StepAt at{step.tile, step.tile_row, step.tile_col, step.index + i, ks};
        const double compute = cost + ft__tile_extra(p, pl.matmul, ks, pl.nk);
        if (i >= 2 && movable) {
            /* the rest of the run: the fast memory answers for all of its
             * steps at once (each needs the step before's slices moved on
             * one k-slice), and they make the same requests */
            loads_.clear();
            writes_.clear();
            UnitClock &uc = waves_.unit(unit);
            const fs_t t0 = job.p->timing.overlap == FT_OVERLAP_PIPELINE ? uc.c_prev2 : uc.next;
            take_occupancy(job, at, t0, memory->repeat(n - i + 1, moves_.data(), (int)moves_.size(), &loads_));
            time_steps(job, at, unit, compute, n - i + 1, ev);
            break;
        }
        needs_.clear();
        writes_.clear();
        for (const ft_active &act : run_acts_) {
            const ft_op *op = &p->ops[act.op];
            const ft_region &r = act.region;
            need(op->inputs[0], r.r0, r.r1, s0, s1);
            need(op->inputs[1], s0, s1, r.c0, r.c1);
        }
        finish_step(job, at, unit, compute, ev);
    }
    return n > 0 ? n : 0;
}

bool Controller::add_move(int t, std::int64_t dr, std::int64_t dc)
{
    for (const SliceMove &m : moves_)
        if (m.tensor == t)
            return m.dr == dr && m.dc == dc;
    moves_.push_back(SliceMove{t, dr, dc});
    return true;
}

void Controller::sync(Job &job, fs_t t)
{
    /* The kernel's clock moves once per subgraph (run_subgraph's wait at
     * its end): the units run ahead of it within the subgraph (TLM's
     * temporal decoupling with a subgraph quantum), so no context switch
     * is paid per wave.  The trace records before t go out now. */
    ahead_ = std::max(ahead_, t);
    if (job.trace)
        tq_.release(to_units(t - job.start));
}

fs_t Controller::issue_writes(Job &job, const std::vector<ft_slice> &ws, fs_t at, struct ft_trace_event &ev, int unit, std::int64_t share)
{
    const ft_timing &tm = job.p->timing;
    fs_t end = at;
    ev.kind = FT_TRACE_WRITE;
    for (const ft_slice &w : ws)
        end = std::max(end, tm.duplex ? move(job, write_channel.operator->(), w, at, 1.0, unit, share, ev)
                                      : move(job, channel.operator->(), w, at, write_scale_, unit, share, ev));
    return end;
}

fs_t Controller::move(Job &job, channel_if *ch, const ft_slice &sl, fs_t at, double scale, int unit, std::int64_t share,
                      struct ft_trace_event &ev)
{
    fs_t start;
    const std::int64_t elems = region_elems(sl.region);
    const fs_t end = ch->transfer(elems, at, &start, scale, unit, share);
    if (job.trace) {
        ev.start = to_units(start - job.start);
        ev.end = to_units(end - job.start);
        ev.tensor = sl.tensor;
        ev.region = sl.region;
        ev.elems = elems;
        tq_.span(ev);
    }
    return end;
}

/* ---------------------------------------------------------------- Model */

Model::Model()
    : channel("channel"), write_channel("write_channel"), memory("fast_memory"), engine("compute_engine"), cache("shared_cache"),
      controller("controller")
{
    controller.channel(channel);
    controller.write_channel(write_channel);
    controller.memory(memory);
    controller.engine(engine);
    controller.cache(cache);
}

/* SystemC reports: errors become exceptions (caught by the C API),
 * warnings and information are dropped (they would land in the output). */
static void report_handler(const sc_core::sc_report &rep, const sc_core::sc_actions &)
{
    if (rep.get_severity() >= sc_core::SC_ERROR)
        throw std::runtime_error(std::string("SystemC: ") + rep.get_msg_type() + ": " + rep.get_msg());
}

Model &model()
{
    static Model *m = nullptr;
    static std::string failed; /* why the one attempt to build it failed */
    if (!m) {
        if (!failed.empty())
            throw std::runtime_error(failed);
        try {
            setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
            sc_core::sc_report_handler::set_handler(report_handler);
            sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
            m = new Model();
        } catch (const std::bad_alloc &) {
            failed = "out of memory while building the SystemC model";
            throw;
        } catch (const std::exception &e) {
            /* SystemC cannot elaborate twice: later calls get the same error */
            failed = e.what();
            throw;
        }
    }
    return *m;
}

void run_job(Job &job)
{
    Model &m = model();
    const fs_t now = now_fs();
    const ft_timing &tm = job.p->timing;
    /* the steps' transfers go to the slow memory, or to the shared cache
     * in front of it, one lane per unit (ft__step_rates) */
    ft__rates r;
    ft__step_rates(job.p, &r);
    const int units = (int)ft__units(job.p);
    m.channel.reset(r.rb, tm.transfer_latency, now, units);
    m.write_channel.reset(r.wb, tm.transfer_latency, now, units);
    m.memory.reset(job.p);
    m.engine.reset(job.p, job.model, now, units);
    m.cache.reset(job.p, now);
    job.done = false;
    m.controller.submit(&job);
    /* back on this thread's own stack, ASan must know it again, also when
     * sc_start() throws */
    struct Restore {
        ~Restore() { restore_stack_bounds(); }
    } restore;
    sc_core::sc_start();
    if (!job.done)
        throw std::runtime_error("the SystemC kernel stopped before the replay ended");
}

}  // namespace ftsim
