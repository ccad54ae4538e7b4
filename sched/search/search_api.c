/* search_api.c - scheduler options and the contest time limits. */
#include "cost/cost.h"

#include <string.h>

void ft_search_opts_init(ft_search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = FT_COMPUTE_NATIVE;
    o->time_limit = 10;
    o->seed = 1;
    o->strategy = FT_STRATEGY_SEARCH;
    o->start_from = FT_STRATEGY_ALL_STARTS;
}

double ft_contest_time_limit(int nops)
{
    if (nops <= 5)
        return 2;
    if (nops <= 20)
        return 5;
    if (nops <= 40)
        return 15;
    if (nops <= 70)
        return 30;
    if (nops <= 110)
        return 60;
    return 120;
}
