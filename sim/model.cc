/* model.cc - the SystemC modules of the simulator: channel, fast memory, compute engine, and the controller that checks and replays a schedule. */
#include "model.h"

#include <algorithm>
#include <cstdarg>
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

/* printf into a std::string */
static std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static std::string fmt(const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

const char *const CLOCK_EXHAUSTED =
    "the simulated clock of this process is exhausted (2^64 fs, about 1.8e10 cost units over all runs); replay in a new process";

fs_t to_fs(double units)
{
    if (!(units >= 0) || units > MAX_SPAN_UNITS)
        throw std::overflow_error(fmt("a span of %.17g cost units is outside the simulator's clock (0 to %.3g units at 1 fs resolution)",
                                      units, MAX_SPAN_UNITS));
    return (fs_t)std::llround(units * FS_PER_UNIT);
}

static inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
static inline std::int64_t region_elems(const ft_region &r) { return (r.r1 - r.r0) * (r.c1 - r.c0); }
static inline bool region_eq(const ft_region &a, const ft_region &b)
{
    return a.r0 == b.r0 && a.r1 == b.r1 && a.c0 == b.c0 && a.c1 == b.c1;
}

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

/* ------------------------------------------------------------ BusyQueue */

void BusyQueue::reset(fs_t now, double rate)
{
    rate_ = rate;
    free_at_ = now;
    period_start_ = now;
    period_work_ = 0;
    busy_ = 0;
}

fs_t BusyQueue::serve(double work, fs_t issue, fs_t *start)
{
    if (issue >= free_at_) { /* idle: a new busy period starts */
        period_start_ = issue;
        period_work_ = 0;
        *start = issue;
    } else {
        *start = free_at_;
    }
    period_work_ += work;
    fs_t end;
    if (__builtin_add_overflow(period_start_, to_fs(period_work_ / rate_), &end))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    if (end < *start)
        end = *start;
    busy_ += end - *start;
    free_at_ = end;
    return end;
}

/* -------------------------------------------------------------- Channel */

Channel::Channel(sc_module_name name) : sc_core::sc_module(name) {}

void Channel::reset(double bandwidth, double latency, fs_t now)
{
    q_.reset(now, bandwidth);
    latency_ = to_fs(latency);
}

fs_t Channel::transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale)
{
    fs_t at;
    if (__builtin_add_overflow(issue, latency_, &at))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    return q_.serve(scale == 1.0 ? (double)elems : (double)elems * scale, at, start);
}

/* ----------------------------------------------------------- FastMemory */

FastMemory::FastMemory(sc_module_name name) : sc_core::sc_module(name) {}

void FastMemory::reset(const ft_problem *p)
{
    p_ = p;
    capacity_ = p->capacity;
    whole_.assign((size_t)p->ntensors, 0);
    whole_list_.clear();
    whole_elems_ = buf_elems_ = slice_elems_ = 0;
    cur_.clear();
    prev_.clear();
}

bool FastMemory::can_retain(const unsigned char *produced, int t) const
{
    return t >= 0 && t < p_->ntensors && produced[t];
}

void FastMemory::begin_subgraph(const std::int64_t *buf, int nbuf)
{
    buf_elems_ = 0;
    for (int i = 0; i < nbuf; i++)
        buf_elems_ += buf[i];
    cur_.clear();
    prev_.clear();
    slice_elems_ = 0;
}

std::int64_t FastMemory::step(const ft_slice *need, int n, std::vector<ft_slice> *loads)
{
    cur_.swap(prev_);
    cur_.clear();
    slice_elems_ = 0;
    for (int i = 0; i < n; i++) {
        const ft_slice &s = need[i];
        if (whole_[(size_t)s.tensor])
            continue; /* the whole tensor is here */
        bool dup = false;
        for (const ft_slice &c : cur_)
            if (c.tensor == s.tensor && region_eq(c.region, s.region)) {
                dup = true;
                break;
            }
        if (dup)
            continue;
        cur_.push_back(s);
        slice_elems_ += region_elems(s.region);
        bool held = false;
        for (const ft_slice &q : prev_)
            if (q.tensor == s.tensor && region_eq(q.region, s.region)) {
                held = true;
                break;
            }
        if (!held)
            loads->push_back(s);
    }
    return whole_elems_ + buf_elems_ + slice_elems_;
}

void FastMemory::end_subgraph(const int *retained, int n)
{
    for (int t : whole_list_)
        whole_[(size_t)t] = 0;
    whole_list_.clear();
    whole_elems_ = 0;
    for (int i = 0; i < n; i++) {
        int t = retained[i];
        if (whole_[(size_t)t])
            continue;
        whole_[(size_t)t] = 1;
        whole_list_.push_back(t);
        whole_elems_ += ft_tensor_size(p_, t);
    }
    buf_elems_ = slice_elems_ = 0;
    cur_.clear();
    prev_.clear();
}

void FastMemory::usage(std::int64_t *whole, std::int64_t *buffers, std::int64_t *slices) const
{
    *whole = whole_elems_;
    *buffers = buf_elems_;
    *slices = slice_elems_;
}

/* -------------------------------------------------------- ComputeEngine */

ComputeEngine::ComputeEngine(sc_module_name name) : sc_core::sc_module(name) {}

void ComputeEngine::reset(const ft_problem *p, ft_compute_model model, fs_t now)
{
    p_ = p;
    nw_ = p->native_w;
    nh_ = p->native_h;
    nk_ = ft_native_k(p);
    larger_ = p->allow_larger != 0;
    model_ = model;
    q_.reset(now, 1.0);
}

int ComputeEngine::check_granularity(std::int64_t w, std::int64_t h, std::int64_t k, std::string *why) const
{
    const std::int64_t v[3] = {w, h, k}, lim[3] = {nw_, nh_, nk_};
    static const char *name[3] = {"w", "h", "k"};
    static const char *what[3] = {"tile width", "tile height", "k-slice"};
    for (int d = 0; d < 3; d++) {
        if (v[d] < 1) {
            *why = fmt("%s = %lld is below 1", name[d], (long long)v[d]);
            return FT_R_GRANULARITY_BELOW_ONE;
        }
        if (v[d] > lim[d] && !larger_) {
            *why = fmt("%s = %lld is above native %lld: the compute engine cannot run a %s larger than its native %s", name[d],
                       (long long)v[d], (long long)lim[d], what[d], d == 1 ? "height" : "width");
            return FT_R_GRANULARITY_ABOVE_NATIVE;
        }
    }
    return FT_R_NONE;
}

/* The compute rule is the library's own (ft_op_compute): the simulator
 * replays time, not the arithmetic of one op's cost.  It applies it with
 * the role the controller derived itself, so a wrong role in either shows
 * as a difference. */
double ComputeEngine::op_cost(ft_role role, const ft_active &a) const
{
    ft_active x = a;
    x.role = role;
    return ft_op_compute(p_, model_, &x);
}

fs_t ComputeEngine::run(double cost, fs_t issue, fs_t *start)
{
    return q_.serve(cost, issue, start);
}

/* ----------------------------------------------------------- Controller */

Controller::Controller(sc_module_name name)
    : sc_core::sc_module(name), channel("channel"), write_channel("write_channel"), memory("memory"), engine("engine")
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
        job.end = now_fs();
        job.done = true;
        job_ = nullptr;
    }
}

/* Union-find over tensors, for the connectivity rule. */
static int uf_find(std::vector<int> &par, int x)
{
    while (par[(size_t)x] != x) {
        par[(size_t)x] = par[(size_t)par[(size_t)x]];
        x = par[(size_t)x];
    }
    return x;
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Read the whole schedule before replaying it, as a controller loading a
 * program would: check every rule that needs no simulated time (in the
 * order of SPEC 2, so that a schedule breaking several rules gets the same
 * reason as from ft_schedule_validate), asking the engine about
 * granularities and the fast memory about retention; then work out each
 * subgraph's roles, tile grid, write-backs (SPEC 3's "written", from the
 * subgraphs that follow) and output buffers. */
void Controller::plan(Job &job)
{
    const ft_problem *p = job.p;
    const ft_schedule *s = job.s;
    const char *n = s->name ? s->name : "schedule";
    const int ns = s->nsubgraphs, nops = p->nops, nt = p->ntensors;

    const struct { int len; const char *field; } lens[] = {
        {s->len_granularities, "granularities"}, {s->len_retain, "tensors_to_retain"},
        {s->len_orders, "traversal_orders"}, {s->len_latencies, "subgraph_latencies"}};
    for (const auto &l : lens)
        if (l.len >= 0 && l.len != ns)
            throw Invalid(FT_R_LENGTH_MISMATCH, fmt("%s: %s has %d entries, subgraphs has %d", n, l.field, l.len, ns));
    if (ns == 0)
        throw Invalid(FT_R_OP_NOT_COVERED, fmt("%s: subgraphs is empty; op 0 is in no subgraph", n));

    std::vector<int> seen((size_t)nops, -1);
    std::vector<unsigned char> covered((size_t)nops, 0);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (g->nops == 0)
            throw Invalid(FT_R_EMPTY_SUBGRAPH, fmt("%s: subgraphs[%d] is empty", n, i), i);
        for (int j = 0; j < g->nops; j++) {
            int o = g->ops[j];
            if (o < 0 || o >= nops)
                throw Invalid(FT_R_OP_OUT_OF_RANGE, fmt("%s: subgraphs[%d][%d] is op %d, out of range (%d ops)", n, i, j, o, nops), i);
            if (seen[(size_t)o] == i)
                throw Invalid(FT_R_REPEATED_OP, fmt("%s: subgraphs[%d][%d]: op %d is listed twice", n, i, j, o), i);
            seen[(size_t)o] = i;
            covered[(size_t)o] = 1;
        }
    }
    for (int o = 0; o < nops; o++)
        if (!covered[(size_t)o])
            throw Invalid(FT_R_OP_NOT_COVERED, fmt("%s: op %d is in no subgraph: the controller would never run it", n, o));

    /* Op order: an input made inside the subgraph must be made by an op
     * that runs before; and the ops must hang together through tensors. */
    std::vector<int> pos((size_t)nops, -1), par((size_t)nt);
    for (int t = 0; t < nt; t++)
        par[(size_t)t] = t;
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++)
            pos[(size_t)g->ops[j]] = j;
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int pr = p->tensors[op->inputs[k]].producer;
                if (pr >= 0 && pos[(size_t)pr] > j)
                    throw Invalid(FT_R_OP_BEFORE_PRODUCER,
                                  fmt("%s: subgraphs[%d][%d]: op %d runs before op %d (position %d) has produced its input tensor %d", n, i, j,
                                      g->ops[j], pr, pos[(size_t)pr], op->inputs[k]),
                                  i);
            }
        }
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++)
                par[(size_t)uf_find(par, op->inputs[k])] = uf_find(par, op->output);
        }
        int root = uf_find(par, p->ops[g->ops[0]].output);
        for (int j = 1; j < g->nops; j++)
            if (uf_find(par, p->ops[g->ops[j]].output) != root)
                throw Invalid(FT_R_NOT_CONNECTED,
                              fmt("%s: subgraphs[%d]: op %d (position %d) is not connected to op %d through the subgraph's tensors", n, i,
                                  g->ops[j], j, g->ops[0]),
                              i);
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            pos[(size_t)g->ops[j]] = -1;
            par[(size_t)op->output] = op->output;
            for (int k = 0; k < op->ninputs; k++)
                par[(size_t)op->inputs[k]] = op->inputs[k];
        }
    }

    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        std::string why;
        int r = engine->check_granularity(g->w, g->h, g->k, &why);
        if (r != FT_R_NONE)
            throw Invalid(r, fmt("%s: granularities[%d]: %s", n, i, why.c_str()), i);
    }

    produced_.assign((size_t)nt, 0);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 1;
        for (int j = 0; j < g->nretain; j++) {
            int t = g->retain[j];
            if (!memory->can_retain(produced_.data(), t))
                throw Invalid(FT_R_RETAIN_NOT_PRODUCED,
                              t < 0 || t >= nt
                                  ? fmt("%s: tensors_to_retain[%d][%d] is tensor %d, out of range (%d tensors)", n, i, j, t, nt)
                                  : fmt("%s: tensors_to_retain[%d][%d]: tensor %d is not produced by subgraph %d, so the fast memory has nothing "
                                        "of it to keep",
                                        n, i, j, t, i),
                              i);
        }
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 0;
    }

    /* Roles (SPEC 3) and tile grid (SPEC 4) of every subgraph.  The
     * simulator keeps its own copy of these rules and of the "written"
     * rule below, on purpose: it is the independent check of the library's
     * (sched/cost.c), and a shared mistake would agree with itself.  The
     * cost-model vectors hold both to the same answers. */
    plans_.assign((size_t)ns, SgPlan());
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        SgPlan &pl = plans_[(size_t)i];
        pl.role.assign((size_t)g->nops, FT_ROLE_EPILOGUE);
        std::vector<unsigned char> feeds((size_t)g->nops, 0);
        std::int64_t wg = 0, hg = 0, nk = 1;
        for (int j = g->nops - 1; j >= 0; j--) {
            const ft_op *op = &p->ops[g->ops[j]];
            int t = op->output;
            for (int m = j + 1; m < g->nops && !feeds[(size_t)j]; m++) {
                const ft_op *c = &p->ops[g->ops[m]];
                if ((c->type == FT_OP_MATMUL || feeds[(size_t)m]) && in_list(c->inputs, c->ninputs, t))
                    feeds[(size_t)j] = 1;
            }
            ft_role r = feeds[(size_t)j] ? FT_ROLE_UPSTREAM : op->type == FT_OP_MATMUL ? FT_ROLE_KLOOP : FT_ROLE_EPILOGUE;
            pl.role[(size_t)j] = r;
            if (r == FT_ROLE_UPSTREAM)
                continue;
            wg = std::max(wg, p->tensors[t].width);
            hg = std::max(hg, p->tensors[t].height);
            if (r == FT_ROLE_KLOOP)
                nk = std::max(nk, ceil_div(op->k, g->k));
        }
        pl.ntx = ceil_div(wg, g->w);
        pl.nty = ceil_div(hg, g->h);
        pl.nk = nk;
        std::int64_t tiles, steps;
        if (__builtin_mul_overflow(pl.ntx, pl.nty, &tiles) || __builtin_mul_overflow(tiles, pl.nk, &steps))
            throw std::overflow_error(fmt("%s: subgraph %d has more steps than 64 bits count", n, i));
    }
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        if (!g->order)
            continue;
        const SgPlan &pl = plans_[(size_t)i];
        std::int64_t ntiles = pl.ntx * pl.nty;
        if (g->norder != ntiles)
            throw Invalid(FT_R_BAD_TRAVERSAL,
                          fmt("%s: traversal_orders[%d] has %lld entries, subgraph %d has %lld tiles (%lld x %lld)", n, i, (long long)g->norder,
                              i, (long long)ntiles, (long long)pl.nty, (long long)pl.ntx),
                          i);
        std::vector<unsigned char> hit((size_t)ntiles, 0);
        for (std::int64_t j = 0; j < ntiles; j++) {
            std::int64_t t = g->order[j];
            if (t < 0 || t >= ntiles)
                throw Invalid(FT_R_BAD_TRAVERSAL,
                              fmt("%s: traversal_orders[%d][%lld] is tile %lld, out of range (%lld tiles)", n, i, (long long)j, (long long)t,
                                  (long long)ntiles),
                              i);
            if (hit[(size_t)t])
                throw Invalid(FT_R_BAD_TRAVERSAL,
                              fmt("%s: traversal_orders[%d][%lld]: tile %lld is listed twice", n, i, (long long)j, (long long)t), i);
            hit[(size_t)t] = 1;
        }
    }

    /* Where each tensor is, subgraph after subgraph: graph inputs start in
     * slow memory; written outputs join them; retained ones are resident in
     * the next subgraph only.  Write-backs follow SPEC 3's "written". */
    std::vector<std::vector<int>> prod_in((size_t)nt), cons_in((size_t)nt);
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            std::vector<int> &pv = prod_in[(size_t)op->output];
            if (pv.empty() || pv.back() != i)
                pv.push_back(i);
            for (int k = 0; k < op->ninputs; k++) {
                std::vector<int> &cv = cons_in[(size_t)op->inputs[k]];
                if (cv.empty() || cv.back() != i)
                    cv.push_back(i);
            }
        }
    }
    auto written = [&](int i, int t) {
        if (p->tensors[t].nconsumers == 0)
            return true; /* graph output */
        const std::vector<int> &pv = prod_in[(size_t)t], &cv = cons_in[(size_t)t];
        auto np = std::upper_bound(pv.begin(), pv.end(), i);
        int next_prod = np == pv.end() ? ns : *np;
        for (auto c = std::upper_bound(cv.begin(), cv.end(), i); c != cv.end(); ++c) {
            if (*c >= next_prod)
                return false; /* made again before that load: no write needed */
            if (*c == i + 1 && in_list(s->sg[i].retain, s->sg[i].nretain, t))
                continue; /* resident there */
            return true;
        }
        return false;
    };
    std::vector<unsigned char> in_slow((size_t)nt, 0);
    for (int t = 0; t < nt; t++)
        in_slow[(size_t)t] = p->tensors[t].producer < 0;
    for (int i = 0; i < ns; i++) {
        const ft_subgraph *g = &s->sg[i];
        SgPlan &pl = plans_[(size_t)i];
        const ft_subgraph *prev = i > 0 ? &s->sg[i - 1] : nullptr;
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 1;
        for (int j = 0; j < g->nops; j++) {
            const ft_op *op = &p->ops[g->ops[j]];
            for (int k = 0; k < op->ninputs; k++) {
                int t = op->inputs[k];
                if (produced_[(size_t)t] || in_slow[(size_t)t] || (prev && in_list(prev->retain, prev->nretain, t)))
                    continue;
                throw Invalid(FT_R_TENSOR_UNAVAILABLE,
                              fmt("%s: subgraphs[%d][%d]: op %d needs tensor %d, which is neither in slow memory nor resident (no earlier "
                                  "subgraph wrote or retained it)",
                                  n, i, j, g->ops[j], t),
                              i);
            }
        }
        for (int j = 0; j < g->nops; j++) {
            int t = p->ops[g->ops[j]].output;
            bool w = written(i, t), r = in_list(g->retain, g->nretain, t);
            if (pl.role[(size_t)j] == FT_ROLE_UPSTREAM && (w || r))
                throw Invalid(FT_R_FUSED_OPERAND_ESCAPES,
                              fmt("%s: subgraphs[%d][%d]: tensor %d (output of op %d) feeds a fused MatMul in subgraph %d and is computed "
                                  "piecewise there, so it cannot also be %s",
                                  n, i, j, t, g->ops[j], i,
                                  r ? "retained" : p->tensors[t].nconsumers ? "written (a later subgraph loads it)" : "written (it is a graph output)"),
                              i);
            const ft_tensor *T = &p->tensors[t];
            if (w)
                pl.written.push_back(t);
            if (r)
                pl.buffers.push_back(T->width * T->height);
            else if (w)
                pl.buffers.push_back(std::min(g->w, T->width) * std::min(g->h, T->height));
        }
        for (int j = 0; j < g->nops; j++)
            produced_[(size_t)p->ops[g->ops[j]].output] = 0;
        for (int t : pl.written)
            in_slow[(size_t)t] = 1;
    }

    /* The walker that supplies each step's data flow needs a schedule that
     * passes libfusetile's validation; after the checks above it must. */
    ft_status st;
    if (ft_schedule_validate(p, s, &st) != FT_OK)
        throw Invalid(st.reason ? st.reason : FT_R_NONE,
                      fmt("%s (the simulator's own checks passed this schedule; ft_schedule_validate did not)", st.msg));
}

void Controller::replay(Job &job)
{
    const ft_problem *p = job.p;
    const ft_schedule *s = job.s;
    plan(job);
    produced_.assign((size_t)p->ntensors, 0);
    written_.assign((size_t)p->ntensors, 0);
    executed_.assign((size_t)p->nops, 0);
    op_role_.assign((size_t)p->nops, FT_ROLE_EPILOGUE);
    job.sg.assign((size_t)s->nsubgraphs, SgResult());
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
    const fs_t rd_busy0 = channel->busy(), wr_busy0 = write_channel->busy(), cp_busy0 = engine->busy();
    SgResult &res = job.sg[(size_t)sg];
    auto close = [&](fs_t t_end) { /* the subgraph's figures up to t_end */
        res.simulated = t_end - t_start;
        res.channel_busy = std::max(channel->busy() - rd_busy0, write_channel->busy() - wr_busy0);
        res.compute_busy = engine->busy() - cp_busy0;
    };

    ft_walk *wp = nullptr;
    ft_status st;
    int rc = ft_walk_begin(p, s, sg, job.model, &wp, &st);
    if (rc == FT_ENOMEM)
        throw std::bad_alloc();
    if (rc != FT_OK)
        throw std::runtime_error(st.msg);
    std::unique_ptr<ft_walk, WalkDeleter> walk(wp);

    /* The launch overhead passes before the first step. */
    const ft_timing &tm = p->timing;
    if (tm.launch_overhead > 0)
        wait(sc_time::from_value(to_fs(tm.launch_overhead)));
    const fs_t t_begin = now_fs();
    /* double buffering: compute ends of the two previous steps (the next
     * step's loads go out when the older one's buffer frees), the latest
     * end seen, and the previous step's write-backs, still to issue */
    fs_t c_prev = t_begin, c_prev2 = t_begin, sg_end = t_begin;
    pending_.clear();

    ft_step step;
    while (ft_walk_next(walk.get(), &step)) {
        const fs_t t0 = tm.overlap == FT_OVERLAP_PIPELINE ? c_prev2 : now_fs();
        const double rel0 = tr ? to_units(t0 - job.start) : 0;

        /* What the active ops read: slices of tensors from outside the
         * subgraph (tensors made inside are ephemeral and never reach the
         * fast memory). */
        needs_.clear();
        auto need = [&](int t, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
            if (produced_[(size_t)t])
                return;
            const ft_tensor *T = &p->tensors[t];
            ft_slice sl;
            sl.tensor = t;
            sl.region.r0 = std::max<std::int64_t>(r0, 0);
            sl.region.r1 = std::min(r1, T->height);
            sl.region.c0 = std::max<std::int64_t>(c0, 0);
            sl.region.c1 = std::min(c1, T->width);
            if (sl.region.r0 < sl.region.r1 && sl.region.c0 < sl.region.c1)
                needs_.push_back(sl);
        };
        for (int a = 0; a < step.nactive; a++) {
            const ft_active &act = step.acts[a];
            const ft_op *op = &p->ops[act.op];
            const ft_role role = op_role_[(size_t)act.op];
            if (act.role != role)
                throw std::logic_error(fmt("subgraph %d, step %lld: the walker and the simulator disagree on the role of op %d", sg,
                                           (long long)step.index, act.op));
            executed_[(size_t)act.op] = 1;
            const ft_region &r = act.region;
            if (op->type == FT_OP_MATMUL) {
                std::int64_t k0 = role == FT_ROLE_KLOOP ? act.ks0 : 0, k1 = role == FT_ROLE_KLOOP ? act.ks1 : op->k;
                need(op->inputs[0], r.r0, r.r1, k0, k1);
                need(op->inputs[1], k0, k1, r.c0, r.c1);
            } else if (op->type == FT_OP_LAYOUT) {
                /* SPEC 4's Layout rule: output rows [r0, r1) of H(O) read
                 * input rows [floor(r0 H(X) / H(O)), ceil(r1 H(X) / H(O))),
                 * columns likewise.  The simulator keeps its own copy of
                 * this rule, on purpose, as of the roles (plan): it checks
                 * the library's (sched/walk.c). */
                const ft_tensor &O = p->tensors[op->output], &X = p->tensors[op->inputs[0]];
                need(op->inputs[0], scale_down(r.r0, X.height, O.height), scale_up(r.r1, X.height, O.height),
                     scale_down(r.c0, X.width, O.width), scale_up(r.c1, X.width, O.width));
            } else {
                for (int i = 0; i < op->ninputs; i++)
                    need(op->inputs[i], r.r0, r.r1, r.c0, r.c1);
            }
        }

        loads_.clear();
        std::int64_t occ = memory->step(needs_.data(), (int)needs_.size(), &loads_);
        if (occ > res.peak)
            res.peak = occ;
        if ((double)occ > memory->capacity()) {
            std::int64_t whole, buffers, slices;
            memory->usage(&whole, &buffers, &slices);
            close(t0);
            char tbuf[FT_NUMBUF];
            throw Invalid(FT_R_OOM,
                          fmt("%s: at simulated time %s, subgraph %d, tile %lld (row %lld, col %lld), step %lld (k-step %lld): fast-memory "
                              "occupancy %lld (resident %lld, output buffers %lld, slices %lld) exceeds fast_memory_capacity %.17g",
                              s->name ? s->name : "schedule", ft_format_double(tbuf, to_units(t0 - job.start)), sg, (long long)step.tile,
                              (long long)step.tile_row, (long long)step.tile_col, (long long)step.index, (long long)step.kstep,
                              (long long)occ, (long long)whole, (long long)buffers, (long long)slices, memory->capacity()),
                          sg, step.tile, step.index, t0 - job.start);
        }
        if (tr) /* every step (the writer drops repeats): a trace window starts with it */
            ft_trace_occupancy(tr, rel0, occ);

        struct ft_trace_event ev = {};
        ev.sg = sg;
        ev.tile = step.tile;
        ev.step = step.index;
        ev.kstep = step.kstep;
        fs_t start, r_end = t0;
        ev.kind = FT_TRACE_LOAD;
        for (const ft_slice &l : loads_) {
            std::int64_t elems = region_elems(l.region);
            fs_t e = channel->transfer(elems, t0, &start);
            r_end = std::max(r_end, e);
            if (tr) {
                ev.start = to_units(start - job.start);
                ev.end = to_units(e - job.start);
                ev.tensor = l.tensor;
                ev.region = l.region;
                ev.elems = elems;
                ft_trace_span(tr, &ev);
            }
        }
        /* Write-backs: an output leaves when its op finishes the tile. */
        writes_.clear();
        for (int a = 0; a < step.nactive; a++) {
            const ft_active &act = step.acts[a];
            const ft_op *op = &p->ops[act.op];
            const ft_role role = op_role_[(size_t)act.op];
            if (!written_[(size_t)op->output])
                continue;
            if (!((role == FT_ROLE_KLOOP && act.ks1 == op->k) || (role == FT_ROLE_EPILOGUE && step.kstep == pl.nk - 1)))
                continue;
            writes_.push_back(ft_slice{op->output, act.region});
        }
        double cost = 0;
        for (int a = 0; a < step.nactive; a++)
            cost += engine->op_cost(op_role_[(size_t)step.acts[a].op], step.acts[a]);

        /* When the compute goes out and when the step ends, by overlap mode:
         *  STEP (SPEC 4): loads, write-backs and compute all at t0; the step
         *    ends when the last of them ends;
         *  NONE: compute after the loads, write-backs after the compute;
         *  PIPELINE: loads at t0 (when the buffer of two steps back frees),
         *    compute once they are in and the engine is free, write-backs when
         *    it ends (issued with the next step, so the channel sees requests
         *    in time order); the controller moves on to the next step's
         *    issue time, the previous compute's end. */
        fs_t c_issue = tm.overlap == FT_OVERLAP_STEP ? t0 : r_end, w_end = t0;
        if (tm.overlap == FT_OVERLAP_STEP)
            w_end = issue_writes(job, writes_, t0, ev);
        else if (tm.overlap == FT_OVERLAP_PIPELINE) {
            w_end = issue_writes(job, pending_, c_prev, ev);
            pending_.swap(writes_);
        }
        fs_t c_end = engine->run(cost, c_issue, &start);
        if (tm.overlap == FT_OVERLAP_NONE)
            w_end = issue_writes(job, writes_, c_end, ev);
        const fs_t c_start = start;
        if (tr) {
            ev.kind = FT_TRACE_COMPUTE;
            ev.tensor = -1;
            ev.region = ft_region{0, 0, 0, 0};
            ev.elems = 0;
            ev.start = to_units(c_start - job.start);
            ev.end = to_units(c_end - job.start);
            ft_trace_span(tr, &ev);
        }
        fs_t end = std::max(std::max(r_end, w_end), c_end), step_start = t0, resume = end;
        if (tm.overlap == FT_OVERLAP_PIPELINE) {
            /* steps overlap: the step span is its compute */
            step_start = c_start;
            end = c_end;
            sg_end = std::max(sg_end, std::max(std::max(r_end, w_end), c_end));
            c_prev2 = c_prev;
            c_prev = c_end;
            resume = c_prev2;
        }
        if (resume > now_fs())
            wait(sc_time::from_value(resume - now_fs()));
        if (tr) {
            ev.kind = FT_TRACE_STEP;
            ev.start = to_units(step_start - job.start);
            ev.end = to_units(end - job.start);
            ft_trace_span(tr, &ev);
        }
        res.steps++;
        job.steps++;
    }
    if (tm.overlap == FT_OVERLAP_PIPELINE) {
        /* the last step's write-backs, then the subgraph ends with its last
         * transfer or computation */
        struct ft_trace_event ev = {};
        ev.sg = sg;
        ev.tile = step.tile;
        ev.step = step.index;
        ev.kstep = step.kstep;
        sg_end = std::max(sg_end, issue_writes(job, pending_, c_prev, ev));
        pending_.clear();
        if (sg_end > now_fs())
            wait(sc_time::from_value(sg_end - now_fs()));
    }

    memory->end_subgraph(g->retain, g->nretain);
    for (int j = 0; j < g->nops; j++)
        produced_[(size_t)p->ops[g->ops[j]].output] = 0;
    for (int t : pl.written)
        written_[(size_t)t] = 0;
    close(now_fs());
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

fs_t Controller::issue_writes(Job &job, const std::vector<ft_slice> &ws, fs_t at, struct ft_trace_event &ev)
{
    const ft_timing &tm = job.p->timing;
    const double wb = tm.write_bandwidth > 0 ? tm.write_bandwidth : job.p->bandwidth;
    /* a shared channel moves a written element in 1 / write bandwidth */
    const double scale = tm.duplex || wb == job.p->bandwidth ? 1.0 : job.p->bandwidth / wb;
    fs_t end = at, start;
    ev.kind = FT_TRACE_WRITE;
    for (const ft_slice &w : ws) {
        std::int64_t elems = region_elems(w.region);
        fs_t e = tm.duplex ? write_channel->transfer(elems, at, &start) : channel->transfer(elems, at, &start, scale);
        end = std::max(end, e);
        if (job.trace) {
            ev.start = to_units(start - job.start);
            ev.end = to_units(e - job.start);
            ev.tensor = w.tensor;
            ev.region = w.region;
            ev.elems = elems;
            ft_trace_span(job.trace, &ev);
        }
    }
    return end;
}

/* ---------------------------------------------------------------- Model */

Model::Model()
    : channel("channel"), write_channel("write_channel"), memory("fast_memory"), engine("compute_engine"), controller("controller")
{
    controller.channel(channel);
    controller.write_channel(write_channel);
    controller.memory(memory);
    controller.engine(engine);
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
    m.channel.reset(job.p->bandwidth, tm.transfer_latency, now);
    m.write_channel.reset(tm.write_bandwidth > 0 ? tm.write_bandwidth : job.p->bandwidth, tm.transfer_latency, now);
    m.memory.reset(job.p);
    m.engine.reset(job.p, job.model, now);
    job.done = false;
    m.controller.submit(&job);
    sc_core::sc_start();
    if (!job.done)
        throw std::runtime_error("the SystemC kernel stopped before the replay ended");
}

}  // namespace ftsim
