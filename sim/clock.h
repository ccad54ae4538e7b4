/* clock.h - the SystemC kernel's clock wound back to 0 between replays, so that each replay has the whole simulated clock (2^64 fs) to itself (clock.cc; C++ only, behind sim.h). */
#ifndef FT_SIM_CLOCK_H
#define FT_SIM_CLOCK_H

#include <cstdint>

namespace ftsim {

/* Wind the kernel's clock of this process back to 0 before a replay, when
 * it has moved on and the kernel is idle: elaborated, not running, and
 * with nothing pending (no process runnable, no event notified, no timed
 * event: sc_start() has returned on starvation).  Results and traces are
 * relative to a replay's start, so nothing a caller reads changes; what
 * changes is that the replay can run for the whole of 2^64 fs (about
 * 1.8e10 cost units) instead of what the replays before it left.
 * Returns true when the clock is at 0 afterwards (wound back, or already
 * there), false when the kernel is not idle (the clock is left alone).
 * Must be called outside sc_start(). */
bool rewind_clock();

/* The kernel's clock now, in fs. */
std::uint64_t clock_now();

}  // namespace ftsim

#endif /* FT_SIM_CLOCK_H */
