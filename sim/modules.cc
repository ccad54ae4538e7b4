/* modules.cc - the resource modules of the simulator (model.h): the busy queue they share, the slow-memory channel and its lanes, the fast memory, the compute engine and its units, the shared cache; and the model's time conversion. */
#include "model.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

using sc_core::sc_module_name;

namespace ftsim {

/* Contract: model.h. */
std::string fmt(const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

const char *const CLOCK_EXHAUSTED =
    "the replay runs past the simulator's clock: 2^64 fs at 1 fs resolution, about 1.8e10 cost units for one replay (docs/LIMITS.md)";

fs_t to_fs(double units)
{
    if (!(units >= 0) || units > MAX_SPAN_UNITS)
        throw std::overflow_error(fmt("a span of %.17g cost units is outside the simulator's clock (0 to %.3g units at 1 fs resolution)",
                                      units, MAX_SPAN_UNITS));
    /* llround's rounding (half away from zero), without its call: x is
     * below 2^63, so the truncation t is its floor, and x - t is exact
     * (t is x itself from 2^53 on, where every double is whole) */
    const double x = units * FS_PER_UNIT;
    const std::int64_t t = (std::int64_t)x; /* signed: converts both ways in one instruction */
    return (fs_t)t + (x - (double)t >= 0.5);
}

/* ------------------------------------------------------------ BusyQueue */

void BusyQueue::reset(fs_t now, double rate)
{
    rate_ = rate;
    free_at_ = now;
    period_start_ = now;
    period_work_ = 0;
    busy_ = 0;
    mark_busy_ = 0;
    mark_used_ = false;
    for (Span &m : memo_)
        m = Span();
    memo_next_ = 0;
}

fs_t BusyQueue::span(double work)
{
    /* runs of like steps ask for the same spans: the last few answers are
     * kept, keyed by the work and the rate they were computed from, so a
     * span is divided and rounded once per kind, with the same result */
    for (int i = 0; i < SPAN_MEMO; i++)
        if (memo_[i].work == work && memo_[i].rate == rate_)
            return memo_[i].fs;
    Span &m = memo_[memo_next_];
    memo_next_ = (memo_next_ + 1) % SPAN_MEMO;
    m.fs = to_fs(work / rate_); /* throws before the entry is filled */
    m.work = work;
    m.rate = rate_;
    return m.fs;
}

fs_t BusyQueue::repeat(std::int64_t n, fs_t d)
{
    const fs_t step = busy_ - mark_busy_;
    if (n <= 0 || !mark_used_)
        return step;
    fs_t move, busy, at;
    if (__builtin_mul_overflow((fs_t)n, d, &move) || __builtin_add_overflow(free_at_, move, &at) ||
        __builtin_mul_overflow((fs_t)n, step, &busy))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    /* each copy starts a busy period of its own (can_repeat): the last
     * one's start, end and work are the marked step's moved on */
    free_at_ = at;
    period_start_ += move;
    mark_issue_ += move;
    busy_ += busy;
    mark_busy_ = busy_ - step;
    return step;
}

fs_t BusyQueue::serve(double work, fs_t issue, fs_t *start)
{
    if (!mark_used_) { /* the marked step's first item */
        mark_used_ = true;
        mark_issue_ = issue;
        mark_idle_ = issue >= free_at_;
    }
    if (issue >= free_at_) { /* idle: a new busy period starts */
        period_start_ = issue;
        period_work_ = 0;
        *start = issue;
    } else {
        *start = free_at_;
    }
    period_work_ += work;
    fs_t end;
    if (__builtin_add_overflow(period_start_, span(period_work_), &end))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    if (end < *start)
        end = *start;
    busy_ += end - *start;
    free_at_ = end;
    return end;
}

fs_t BusyQueue::serve(double work, fs_t issue, fs_t *start, double rate)
{
    if (rate != rate_) {
        /* rounding restarts with the rate: a new busy period from when the
         * queue frees (the items before keep their ends) */
        rate_ = rate;
        period_start_ = issue > free_at_ ? issue : free_at_;
        period_work_ = 0;
    }
    return serve(work, issue, start);
}

/* -------------------------------------------------------------- Channel */

Channel::Channel(sc_module_name name) : sc_core::sc_module(name) {}

void Channel::reset(double bandwidth, double latency, fs_t now, int lanes)
{
    bandwidth_ = bandwidth;
    lanes_.resize((size_t)(lanes > 1 ? lanes : 1));
    for (BusyQueue &q : lanes_)
        q.reset(now, bandwidth);
    latency_ = to_fs(latency);
    busy_ = 0;
    mark_busy_ = 0;
    share_ = -1;
}

void Channel::mark(int lane)
{
    lanes_.at((size_t)lane).mark();
    mark_busy_ = busy_;
}

void Channel::repeat(int lane, std::int64_t n, fs_t d)
{
    const fs_t step = busy_ - mark_busy_;
    lanes_.at((size_t)lane).repeat(n, d);
    fs_t add;
    if (n <= 0)
        return;
    if (__builtin_mul_overflow((fs_t)n, step, &add))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    busy_ += add;
    mark_busy_ = busy_ - step;
}

fs_t Channel::transfer(std::int64_t elems, fs_t issue, fs_t *start, double scale, int lane, std::int64_t share)
{
    fs_t at;
    if (__builtin_add_overflow(issue, latency_, &at))
        throw std::overflow_error(CLOCK_EXHAUSTED);
    /* the lane's share of the bandwidth: the cost model's rule (asked
     * again only when the share changes) */
    if (share != share_) {
        ft__rates whole = {bandwidth_, bandwidth_, 0}, mine;
        ft__rates_share(&whole, share, &mine);
        share_ = share;
        share_rate_ = mine.rb;
    }
    BusyQueue &q = lanes_.at((size_t)lane);
    const fs_t busy0 = q.busy();
    fs_t end = q.serve(scale == 1.0 ? (double)elems : (double)elems * scale, at, start, share_rate_);
    busy_ += share > 1 ? (q.busy() - busy0) / (fs_t)share : q.busy() - busy0;
    return end;
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

/* Whether v has slice s: the same tensor, the same region (the reuse
 * rule's test). */
static bool has_slice(const std::vector<ft_slice> &v, const ft_slice &s)
{
    for (const ft_slice &q : v)
        if (q.tensor == s.tensor && region_eq(q.region, s.region))
            return true;
    return false;
}

std::int64_t FastMemory::step(const ft_slice *need, int n, std::vector<ft_slice> *loads)
{
    cur_.swap(prev_);
    cur_.clear();
    slice_elems_ = 0;
    for (int i = 0; i < n; i++) {
        const ft_slice &s = need[i];
        if (whole_[(size_t)s.tensor] || has_slice(cur_, s))
            continue; /* the whole tensor is here, or a duplicate */
        cur_.push_back(s);
        slice_elems_ += region_elems(s.region);
        if (!has_slice(prev_, s))
            loads->push_back(s);
    }
    return whole_elems_ + buf_elems_ + slice_elems_;
}

/* Slice c moved on n steps: by n times its tensor's move in moves (none:
 * it stays). */
static ft_slice moved(const ft_slice &c, const SliceMove *moves, int nmoves, std::int64_t n)
{
    ft_slice x = c;
    for (int i = 0; i < nmoves; i++)
        if (moves[i].tensor == c.tensor) {
            x.region.r0 += n * moves[i].dr;
            x.region.r1 += n * moves[i].dr;
            x.region.c0 += n * moves[i].dc;
            x.region.c1 += n * moves[i].dc;
            break;
        }
    return x;
}

std::int64_t FastMemory::repeat(std::int64_t n, const SliceMove *moves, int nmoves, std::vector<ft_slice> *loads)
{
    const std::int64_t occ = whole_elems_ + buf_elems_ + slice_elems_;
    if (n <= 0)
        return occ;
    /* the first of them: each slice moved on once; it keeps the last
     * step's slices it needs (the reuse rule), and so does every later one
     * of its step before, each tensor's slices moving alike */
    for (const ft_slice &c : cur_) {
        const ft_slice x = moved(c, moves, nmoves, 1);
        if (!has_slice(cur_, x))
            loads->push_back(x);
    }
    /* the last of them: the slices moved on n times, of the same sizes */
    for (ft_slice &c : cur_)
        c = moved(c, moves, nmoves, n);
    return occ;
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

void ComputeEngine::reset(const ft_problem *p, ft_compute_model model, fs_t now, int units)
{
    p_ = p;
    nw_ = p->native_w;
    nh_ = p->native_h;
    nk_ = ft_native_k(p);
    larger_ = p->allow_larger != 0;
    model_ = model;
    step_overhead_ = p->timing.step_overhead;
    q_.resize((size_t)(units > 1 ? units : 1));
    for (BusyQueue &q : q_)
        q.reset(now, 1.0);
    memo_.assign((size_t)p->nops, Memo());
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
    /* the rule reads the region's sizes, not where it lies (SPEC 4): the
     * op's last answer is reused while its region and k slice keep their
     * sizes and kinds (most steps of a subgraph) */
    const std::int64_t rows = a.region.r1 - a.region.r0, cols = a.region.c1 - a.region.c0, depth = a.ks1 - a.ks0;
    Memo &m = memo_[(size_t)a.op];
    if (m.valid && m.role == role && m.rows == rows && m.cols == cols && m.depth == depth && m.row_kind == a.row_kind &&
        m.col_kind == a.col_kind)
        return m.cost;
    ft_active x = a;
    x.role = role;
    m.cost = ft_op_compute(p_, model_, &x);
    m.valid = true;
    m.role = role;
    m.rows = rows;
    m.cols = cols;
    m.depth = depth;
    m.row_kind = a.row_kind;
    m.col_kind = a.col_kind;
    return m.cost;
}

fs_t ComputeEngine::run(double cost, fs_t issue, fs_t *start, int unit)
{
    return q_.at((size_t)unit).serve(cost + step_overhead_, issue, start);
}

fs_t ComputeEngine::busy() const
{
    fs_t b = 0;
    for (const BusyQueue &q : q_)
        b += q.busy();
    return b;
}

/* ---------------------------------------------------------- SharedCache */

SharedCache::SharedCache(sc_module_name name) : sc_core::sc_module(name) {}

void SharedCache::reset(const ft_problem *p, fs_t now)
{
    ft__rates own;
    ft__rates_init(p, &own);
    capacity_ = p->timing.cache_capacity;
    p_ = p;
    read_bw_ = own.rb;
    write_bw_ = own.wb;
    slow_.reset(now, read_bw_);
}

fs_t SharedCache::fill(std::int64_t reads, std::int64_t writes, fs_t at)
{
    /* the share that misses (ft__cache_miss_share): 0 when the footprint
     * is warm (it stays in the cache between runs), else the part beyond
     * the cache's resident part */
    double miss = capacity_ > 0 ? ft__cache_miss_share(p_, (double)reads + (double)writes) : 0;
    if (miss <= 0)
        return at;
    fs_t start, end = slow_.serve(miss * (double)reads, at, &start, read_bw_);
    return slow_.serve(miss * (double)writes, end, &start, write_bw_);
}

}  // namespace ftsim
