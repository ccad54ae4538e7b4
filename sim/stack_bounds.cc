/* stack_bounds.cc - gives the sanitizers back the calling thread's stack after a SystemC run: SystemC 2.3.4 tells AddressSanitizer of each coroutine switch, but names the main coroutine's stack (NULL, 0), so that after sc_start() returns ASan believes the thread runs on an empty stack and LeakSanitizer scans none of it (and reports what only that stack still points to as lost). */
#include "stack_bounds.h"

#include <pthread.h>

#include <cstddef>

/* The sanitizers' fiber-switch interface (<sanitizer/common_interface_defs.h>),
 * weak so that an uninstrumented build links without it and skips the work. */
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, std::size_t size) __attribute__((weak));
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, std::size_t *size_old)
    __attribute__((weak));
}

namespace ftsim {

void restore_stack_bounds()
{
    if (!__sanitizer_start_switch_fiber || !__sanitizer_finish_switch_fiber)
        return;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    void *bottom = nullptr;
    std::size_t size = 0;
    const bool known = pthread_attr_getstack(&attr, &bottom, &size) == 0 && bottom && size;
    pthread_attr_destroy(&attr);
    if (!known)
        return;
    /* a "switch" from this stack to itself: ASan records its bounds again;
     * the thread's fake stack (detect_stack_use_after_return), which the
     * callers' frames may be on, is handed over and back, not destroyed */
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, bottom, size);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
}

}  // namespace ftsim
