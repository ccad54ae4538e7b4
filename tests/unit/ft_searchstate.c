/* ft_searchstate.c - a search state set up by hand, for the unit tests of the search's internals (ft_searchstate.h). */
#include "ft_testutil.h"

#include "ft_searchstate.h"

#include <stdlib.h>
#include <string.h>

/* Contract: ft_searchstate.h. */
void ftt_search_init(search *S, sctx *X, const ft_problem *p, ft_search_opts *o, ft_compute_model model)
{
    ft_search_opts_init(o);
    memset(S, 0, sizeof *S);
    S->p = p;
    S->o = o;
    S->deadline = 1e18;
    assert_int_equal(ft__search_scorer_init(S, model), 0);
    S->produced = calloc((size_t)p->ntensors + 1, 1);
    S->uses = calloc((size_t)p->ntensors + 1, 1);
    S->topo_pos = malloc(sizeof(int) * ((size_t)p->nops + 1));
    assert_non_null(S->produced);
    assert_non_null(S->uses);
    assert_non_null(S->topo_pos);
    S->best = INF;
    S->rng = 1;
    for (int i = 0; i < p->nops; i++)
        S->topo_pos[p->topo[i]] = i;
    assert_int_equal(ft__sctx_alloc(X, p->ntensors), 0);
}

/* Contract: ft_searchstate.h. */
void ftt_search_free(search *S, sctx *X)
{
    ft__scorer_free(&S->sc);
    ft__memo_free(S);
    free(S->keybuf);
    free(S->produced);
    free(S->uses);
    free(S->topo_pos);
    ft__sctx_free(X);
}
