/* clock.c - the library's one clock for deadlines (ft__now_s: seconds on the monotonic clock). */
#include "core/core.h"

#include <time.h>

/* Contract: core.h. */
double ft__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
