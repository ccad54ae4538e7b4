/* stack_bounds.h - restore_stack_bounds: the sanitizers' record of the calling thread's stack, put right after a SystemC run (stack_bounds.cc says why). */
#ifndef FT_SIM_STACK_BOUNDS_H
#define FT_SIM_STACK_BOUNDS_H

namespace ftsim {

/* Tell AddressSanitizer and LeakSanitizer again where the calling thread's
 * stack is (pthread_getattr_np).  Call on the thread that ran sc_start(),
 * after it returns or throws.  Does nothing in a build without the
 * sanitizers, or when the stack's bounds cannot be found. */
void restore_stack_bounds();

}  // namespace ftsim

#endif
