/* fusetile/gen.h - the problem generator of fusetile's public API: families of random problems like the contest's, small ones for exact solving and large ones for scale tests, and their one-op schedules (included by fusetile.h). */
#ifndef FUSETILE_GEN_H
#define FUSETILE_GEN_H

#include "fusetile/api.h"
FT_API_BEGIN

#include "fusetile/fusetile.h" /* ft_problem, ft_schedule, ft_status */

#ifdef __cplusplus
extern "C" {
#endif

/* Families of generated problems (ft_generate). */
typedef enum ft_gen_family {
    /* Like the contest's: MLP chains, attention blocks, residual diamonds,
     * shared weights, Pointwise ops of 1 to 3 inputs; sizes 100 to 4096
     * (some not multiples of 128), native granularity 128 x 128, contest
     * base costs and bandwidths, capacity below the largest op's native
     * tile working set; 10 to 150 ops unless nops says otherwise. */
    FT_GEN_CONTEST = 0,
    /* For exact solving: 1 to 8 ops (2 to 8 unless nops says otherwise),
     * native granularity 4 to 16, sizes 3 to 64 (odd ones included). */
    FT_GEN_SMALL = 1,
    /* The contest's mix at any op count (default 1000), sizes 128 to 512,
     * for scale tests. */
    FT_GEN_SCALE = 2
} ft_gen_family;

/* Name of a family ("contest", "small", "scale"); ft_gen_family_parse
 * reads one back: 0 and *out set, or -1. */
const char *ft_gen_family_name(ft_gen_family f);
int ft_gen_family_parse(const char *name, ft_gen_family *out);

/* Options of ft_generate; ft_gen_opts_init sets the defaults. */
typedef struct ft_gen_opts {
    ft_gen_family family;  /* default FT_GEN_CONTEST */
    int nops;              /* ops to generate, >= 1 (at most 8 for SMALL);
                              0 (default): drawn from the seed in the
                              family's range */
    uint64_t seed;         /* default 1; the same options give the same
                              problem on every machine */
} ft_gen_opts;

/* Fill *o with the defaults above. */
void ft_gen_opts_init(ft_gen_opts *o);

/* Generate a problem of o->family with o->nops ops from o->seed (its own
 * PRNG: deterministic, no global state).  The problem has passed
 * ft_problem_finish, and its capacity is tight: below the working set of
 * the largest op's native tile, but every op fits a smaller tile -- the
 * one-op schedule of ft_gen_oneop_schedule is valid under ft_evaluate
 * (checked here; the capacity is raised until it is).  Its name is
 * "generated-FAMILY-SEED-NOPS".  Returns FT_OK with a new problem in *out
 * (free with ft_problem_free), FT_EINPUT (bad options, message naming the
 * field) or FT_ENOMEM; *out is NULL on failure. */
int ft_generate(const ft_gen_opts *o, ft_problem **out, ft_status *st);

/* The one-op schedule of p: one subgraph per op in p->topo order, nothing
 * retained, raster order, each at the largest granularity [g, g, g]
 * (clipped to native w, h and k; g a power of two or the native size) whose
 * first step fits p's capacity, [1, 1, 1] when none does.  Returns FT_OK
 * with a new schedule in *out (free with ft_schedule_free), or FT_ENOMEM.
 * The schedule is not evaluated: ft_evaluate says whether it is valid. */
int ft_gen_oneop_schedule(const ft_problem *p, ft_schedule **out,
                          ft_status *st);

#ifdef __cplusplus
}
#endif

FT_API_END

#endif /* FUSETILE_GEN_H */
