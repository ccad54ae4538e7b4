/* clock.cc - the SystemC kernel's clock wound back to 0 between replays (clock.h): SystemC time only grows, 2^64 fs (about 1.8e10 cost units at 1 fs per 1e-9 unit) for the whole process, so without this the replays of one process (fusetile simulate --target makes one per timing effect, a sweep or the Python binding many) share that clock and a later one runs out of it. */
#include "clock.h"

#include <systemc>

namespace {

/* SystemC (2.3 and 3.0) offers no call to set the kernel's time: it lives
 * in the private member sc_simcontext::m_curr_time.  An explicit template
 * instantiation may name a private member (C++17 [temp.spec]/6), which
 * lets this file take a pointer to it without changing SystemC; a SystemC
 * that renames the member fails to build here, never silently. */
template <typename Tag, typename Tag::type Member>
struct Expose {
    friend typename Tag::type member_of(Tag) { return Member; }
};

struct CurrTime {
    typedef sc_core::sc_time sc_core::sc_simcontext::*type;
    friend type member_of(CurrTime);
};

template struct Expose<CurrTime, &sc_core::sc_simcontext::m_curr_time>;

}  // namespace

namespace ftsim {

/* Contract: clock.h. */
std::uint64_t clock_now()
{
    return sc_core::sc_time_stamp().value();
}

/* Contract: clock.h. */
bool rewind_clock()
{
    sc_core::sc_simcontext *c = sc_core::sc_get_curr_simcontext();
    if (c->time_stamp() == sc_core::SC_ZERO_TIME)
        return true;
    /* idle: between two sc_start() calls that returned on starvation, the
     * kernel holds no runnable process and no delta or timed event, so no
     * time it keeps refers to the clock but the clock itself */
    if (c->get_status() != sc_core::SC_PAUSED || sc_core::sc_pending_activity(c))
        return false;
    c->*member_of(CurrTime()) = sc_core::SC_ZERO_TIME;
    return true;
}

}  // namespace ftsim
