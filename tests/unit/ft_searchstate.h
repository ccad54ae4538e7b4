/* ft_searchstate.h - a search state set up by hand, for the unit tests of the search's internals (sched/search): ft__choose_tiling, ft__neighbour_merge and the like called directly. */
#ifndef FT_SEARCHSTATE_H
#define FT_SEARCHSTATE_H

#include "search/search.h"

/* Set up S (options *o, reset to their defaults; context X) over p, as
 * search.c sets up a thread's state but without the shared part (so
 * ft__offer must not be called): p's scorer under `model`, the scratch
 * buffers, the deadline far off.  Fails the test when out of memory.
 * Release with ftt_search_free. */
void ftt_search_init(search *S, sctx *X, const ft_problem *p, ft_search_opts *o, ft_compute_model model);

/* Release what ftt_search_init and the calls since (the memo) hold. */
void ftt_search_free(search *S, sctx *X);

#endif
