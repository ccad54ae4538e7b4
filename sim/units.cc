/* units.cc - the compute units of a whole device in the replay (model.h): the wave scheduler that gives a subgraph's tiles to the units, and the queue that hands the units' trace records to the trace in time order. */
#include "model.h"

#include <algorithm>

namespace ftsim {

/* ---------------------------------------------------------------- Waves */

void Waves::begin(const ft_problem *p, std::int64_t ntiles, fs_t t)
{
    p_ = p;
    pipeline_ = p->timing.overlap == FT_OVERLAP_PIPELINE;
    ntiles_ = ntiles;
    units_n_ = ft__units(p);
    share_ = 1;
    used_ = 0;
    start_ = t;
    barrier_ = 0;
    /* a unit's state for each unit the subgraph can use */
    size_t n = (size_t)std::min<std::int64_t>(units_n_, std::max<std::int64_t>(ntiles, 1));
    units_.resize(n);
    for (UnitClock &u : units_) {
        u.next = u.c_prev = u.c_prev2 = u.end = t;
        u.pending.clear();
        u.pending_share = 1;
        u.tile = u.step = u.kstep = -1;
    }
}

int Waves::tile(std::int64_t pos, bool *opened)
{
    const int unit = (int)(pos % units_n_);
    *opened = pos > 0 && unit == 0;
    if (*opened) {
        /* the previous wave is over when its slowest tile is */
        fs_t last = start_;
        for (int u = 0; u < used_; u++)
            last = std::max(last, pipeline_ ? units_[(size_t)u].c_prev : units_[(size_t)u].next);
        if (pipeline_) {
            if (units_n_ > 1)
                barrier_ = last; /* with one unit its engine orders the steps */
        } else {
            for (int u = 0; u < used_; u++)
                units_[(size_t)u].next = last;
        }
    }
    if (unit >= used_)
        used_ = unit + 1;
    share_ = ft__wave_size(p_, ntiles_, pos);
    return unit;
}

fs_t Waves::horizon() const
{
    if (used_ == 0)
        return start_;
    fs_t h = ~(fs_t)0;
    for (int u = 0; u < used_; u++)
        h = std::min(h, pipeline_ ? units_[(size_t)u].c_prev2 : units_[(size_t)u].next);
    return h;
}

fs_t Waves::end() const
{
    fs_t e = start_;
    for (int u = 0; u < used_; u++)
        e = std::max(e, units_[(size_t)u].end);
    return e;
}

/* ----------------------------------------------------------- TraceQueue */

void TraceQueue::begin(ft_trace *t, int units)
{
    t_ = t;
    direct_ = units <= 1;
    seq_ = 0;
    items_.clear();
    occ_.assign((size_t)(units > 1 ? units : 1), 0);
}

void TraceQueue::new_subgraph()
{
    std::fill(occ_.begin(), occ_.end(), 0);
}

void TraceQueue::span(const ft_trace_event &e)
{
    if (!t_)
        return;
    if (direct_) {
        ft_trace_span(t_, &e);
        return;
    }
    items_.push_back(Item{e.start, seq_++, -1, 0, e});
}

void TraceQueue::occupancy(double time, int unit, std::int64_t elems)
{
    if (!t_)
        return;
    if (direct_) {
        ft_trace_occupancy(t_, time, elems);
        return;
    }
    Item it{time, seq_++, unit, elems, ft_trace_event()};
    items_.push_back(it);
}

void TraceQueue::emit(const Item &it)
{
    if (it.unit < 0) {
        ft_trace_span(t_, &it.ev);
        return;
    }
    occ_[(size_t)it.unit] = it.elems;
    ft_trace_occupancy(t_, it.start, *std::max_element(occ_.begin(), occ_.end()));
}

void TraceQueue::release(double upto)
{
    if (!t_ || direct_)
        return;
    /* the records to hand over, in time order, records that start together
     * in the order they came */
    auto due = std::partition(items_.begin(), items_.end(), [upto](const Item &it) { return it.start <= upto; });
    std::sort(items_.begin(), due, [](const Item &a, const Item &b) { return a.start < b.start || (a.start == b.start && a.seq < b.seq); });
    for (auto it = items_.begin(); it != due; ++it)
        emit(*it);
    items_.erase(items_.begin(), due);
    ft_trace_sync(t_, upto);
}

void TraceQueue::flush()
{
    if (!t_ || direct_ || items_.empty())
        return;
    double last = 0;
    for (const Item &it : items_)
        last = std::max(last, it.start);
    release(last);
}

}  // namespace ftsim
