/* supertile.c - the super tiling strategy (MLIR/IREE-style tile-and-fuse): every op whose footprint does not fit the fast memory is tiled and its producers fused into its tile loop while the fused tile fits. */
/*
 * Source: the super tiling of MLIR-based compilers, IREE's tile-and-fuse
 * of linalg ops as issue 12 describes it: a post-order DFS over the
 * data-flow graph that tiles every op whose footprint does not fit the fast
 * memory and fuses its producers into the same tile loop; fuse groups (ops
 * of one pattern always fused together, tiled only at their bottom op,
 * their footprint taken from the group's inputs); the tiling factor refined
 * until the tile fits.
 *
 * On SPEC's model a tile loop is a subgraph and its tile the granularity
 * w x h x k.  The algorithm as built:
 *
 *  1. Fuse groups.  Ops lowered from one source layer (the same ft_op.name
 *     before '/': "conv1/im2col" and "conv1") are joined along their
 *     producer-consumer edges, each join kept only while the group stays
 *     convex (no path leaves it and comes back: the quotient graph stays
 *     acyclic).  A fuse group is one unit from then on: tiled only at its
 *     bottom (the tile grid covers its k-loop and epilogue outputs, SPEC 4),
 *     its footprint that of its boundary inputs and of the outputs that
 *     leave it.  A fuse group that fits no tile is broken into its ops; an
 *     op that fits no tile is an error (FT_EINVALID).
 *  2. Post-order DFS over the fuse groups from the graph outputs (ascending
 *     tensor index, producers in input order), iterative: each group is
 *     visited after all of its producers.
 *  3. Visit F.  Its whole footprint (every tensor it touches at full size:
 *     the footprint at the whole tile) fits the capacity: F runs whole, at
 *     the largest granularity the model allows, and fuses nothing.  Else F
 *     is tiled: its tile starts at the whole tile clipped to native and is
 *     refined by halving (k down to FT_SUPERTILE_K_FLOOR, then the larger
 *     of w and h, then k down to 1) until its footprint fits.
 *  4. A tiled loop fuses the loops of its producers, in its ops' input
 *     order and again after each fusion (so a fused producer's producers
 *     follow), when the merged loop stays convex, has at most
 *     FT_SUPERTILE_MAX_GROUP_OPS ops, and its footprint at the loop's tile
 *     still fits (k may be halved for it down to FT_SUPERTILE_MIN_FUSE_K:
 *     a k slice pays no padding; w and h do not change in a fusion).
 *  5. Each group is checked over every step at its tile (ft__score, as
 *     ft_evaluate walks it: a Layout's rounding can make a later tile larger
 *     than the first), refined further while it does not fit, and broken
 *     into its ops if no tile fits (test_supertile_exact_check).
 *
 * The two known flaws of that design, fixed here:
 *
 *  (a) An op that feeds two consumers and was fused into one of them was
 *      not tiled for the other: the other read its output whole, never
 *      produced tile by tile, and overflowed the fast memory.  Here a
 *      producer whose output is also consumed outside the loop it would
 *      join is fused only when that loop can write the output tile by tile
 *      for those consumers (its tile then counts in the loop's footprint:
 *      the written context).  SPEC forbids that for an operand of a fused
 *      MatMul (an upstream op, FT_R_FUSED_OPERAND_ESCAPES), so such a
 *      producer keeps its own tile loop, which writes its output for every
 *      consumer, each reading it in its own tiles (try_fuse;
 *      test_supertile_shared_producer).
 *  (b) A fused tile's footprint was the largest footprint of its ops taken
 *      one by one.  The loop nest holds more at once -- the producer's tile
 *      inputs, the consumer's other operands and every output that leaves
 *      the loop -- and less elsewhere: an intermediate is ephemeral, and a
 *      producer under a k-loop MatMul computes a k slice, not a tile.
 *      Here the footprint is the working set of the fused loop's steps
 *      (ft__st_footprint, supertile_footprint.c), so a fusion that the
 *      one-by-one measure accepts but the nest overflows is refused, and
 *      one that the nest holds though an op alone would not fit is made
 *      (test_supertile_footprint_nesting).
 *
 * Output: an ft_partition (groups numbered in the topological order of
 * their first ops, labelled "supertile NAME" or "untiled NAME" by the
 * source names, ft_subgraph_label) and the tile of each group.
 */
#include "strategy/supertile.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state of one run.  Groups (fuse groups and tile loops) are named by
 * the id of one of their ops, so per-group arrays are indexed by op id. */
typedef struct st_state {
    const ft_problem *p;
    ft__scorer scorer;       /* exact checks (native compute model); its
                                stop hook asks stop (st_scorer_stop) */
    int (*stop)(void *);     /* the caller's clock (ft_strategy_opts.stop) */
    void *stop_ctx;
    int *pos;                /* op -> topological position */
    ft_st_scratch sc;        /* footprint context */
    int *fg;                 /* fuse group of each op */
    int *gid;                /* tile loop of each op */
    ft_supertile_tile *tile; /* tile of each loop */
    int *fail_round;         /* per loop: the round a fusion with it last failed */
    int round;               /* fusions made so far (a failed fusion is retried after one) */
    int *list, *list2;       /* op lists: a visited group, a merged loop */
    int *mark, markv;        /* reachability marks of the convexity check */
    int *queue;              /* the convexity check's walk (nops) */
} st_state;

/* The ops of groups a and b of grp (b may equal a) in topological order
 * into out; returns their count. */
static int members(const st_state *s, const int *grp, int a, int b, int *out)
{
    int n = 0;
    for (int i = 0; i < s->p->nops; i++) {
        int o = s->p->topo[i];
        if (grp[o] == a || grp[o] == b)
            out[n++] = o;
    }
    return n;
}

/* Whether groups a and b of grp together are convex: no path leaves them
 * through other ops and comes back.  Then merging them keeps the quotient
 * graph acyclic (it is acyclic before). */
static int convex(st_state *s, const int *grp, int a, int b)
{
    const ft_problem *p = s->p;
    const int *pos = s->pos;
    int n = members(s, grp, a, b, s->queue), last = 0, head = 0, tail = n;
    for (int j = 0; j < n; j++)
        last = pos[s->queue[j]] > last ? pos[s->queue[j]] : last;
    s->markv++;
    /* forward from the members; nothing past the last member leads back */
    while (head < tail) {
        int from = s->queue[head++], outside = grp[from] != a && grp[from] != b;
        const ft_tensor *T = &p->tensors[p->ops[from].output];
        for (int q = 0; q < T->nconsumers; q++) {
            int c = T->consumers[q];
            if (grp[c] == a || grp[c] == b) {
                if (outside)
                    return 0; /* a path left and came back */
                continue;
            }
            if (pos[c] > last || s->mark[c] == s->markv)
                continue;
            s->mark[c] = s->markv;
            s->queue[tail++] = c;
        }
    }
    return 1;
}

/* Whether ops q and o come from one source layer: both named, the same
 * name up to its first '/'. */
static int same_layer(const ft_problem *p, int q, int o)
{
    const char *a = p->ops[q].name, *b = p->ops[o].name;
    if (!a || !b || !*a || !*b)
        return 0;
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    return la == lb && strncmp(a, b, la) == 0;
}

/* Put every op of group `from` of grp into group `to`. */
static void relabel(const st_state *s, int *grp, int from, int to)
{
    for (int o = 0; o < s->p->nops; o++)
        if (grp[o] == from)
            grp[o] = to;
}

/* The error of an op of p that fits no tile: FT_EINVALID, FT_R_OOM. */
static int op_fits_no_tile(const ft_problem *p, int o, ft_status *st)
{
    return ft__fail(st, FT_EINVALID, FT_R_OOM, "%s: supertile: op %d%s%s does not fit fast_memory_capacity %.17g at any tile",
                    p->name ? p->name : "problem", o, p->ops[o].name ? " " : "", p->ops[o].name ? p->ops[o].name : "", p->capacity);
}

/* Step 1: fuse groups into s->fg, each checked to fit its smallest tile
 * (broken into its ops if not).  FT_OK, FT_EINVALID (an op fits no tile)
 * or FT_ENOMEM. */
static int fuse_groups(st_state *s, ft_status *st)
{
    const ft_problem *p = s->p;
    for (int o = 0; o < p->nops; o++)
        s->fg[o] = o;
    for (int i = 0; i < p->nops; i++) {
        int o = p->topo[i];
        for (int k = 0; k < p->ops[o].ninputs; k++) {
            int q = p->tensors[p->ops[o].inputs[k]].producer;
            if (q >= 0 && s->fg[q] != s->fg[o] && same_layer(p, q, o) && convex(s, s->fg, s->fg[q], s->fg[o]))
                relabel(s, s->fg, s->fg[o], s->fg[q]);
        }
    }
    for (int pass = 0; pass < 2; pass++) /* fuse groups, then the ops of those broken up */
        for (int f = 0; f < p->nops; f++) {
            if (s->fg[f] != f)
                continue;
            int n = members(s, s->fg, f, f, s->list);
            ft_supertile_tile t = {1, 1, 1, 0};
            int64_t fp = ft__st_footprint(p, &s->sc, s->list, n, &t);
            if (fp < 0)
                return ft__fail(st, FT_ENOMEM, 0, "out of memory");
            if (fp != FT_SUPERTILE_ESCAPES && (double)fp <= p->capacity)
                continue;
            if (n == 1)
                return op_fits_no_tile(p, f, st);
            for (int j = 0; j < n; j++)
                s->fg[s->list[j]] = s->list[j];
        }
    return FT_OK;
}

/* Step 4's fusion of loop P into loop g (P produces for g): 1 made, 0 not,
 * -1 OOM. */
static int try_fuse(st_state *s, int g, int P)
{
    const ft_problem *p = s->p;
    if (!convex(s, s->gid, g, P))
        return 0;
    int n = members(s, s->gid, g, P, s->list2);
    if (n > FT_SUPERTILE_MAX_GROUP_OPS)
        return 0;
    ft_supertile_tile t = s->tile[g], whole;
    ft__st_whole(p, s->list2, n, &whole);
    for (;;) {
        int64_t fp = ft__st_footprint(p, &s->sc, s->list2, n, &t);
        if (fp < 0)
            return -1;
        /* flaw (a): P's output would feed a fused MatMul here and is needed
         * outside too; P keeps its own loop, which writes it for all */
        if (fp == FT_SUPERTILE_ESCAPES)
            return 0;
        if ((double)fp <= p->capacity)
            break;
        int64_t kk = t.k < whole.k ? t.k : whole.k;
        if (kk <= FT_SUPERTILE_MIN_FUSE_K)
            return 0;
        t.k = (kk + 1) / 2 > FT_SUPERTILE_MIN_FUSE_K ? (kk + 1) / 2 : FT_SUPERTILE_MIN_FUSE_K;
    }
    for (int j = 0; j < n; j++)
        s->gid[s->list2[j]] = g;
    s->tile[g] = t;
    s->round++;
    return 1;
}

/* Step 4: fuse producers' loops into tiled loop g until none more fuses.
 * 0, or -1 on OOM. */
static int fuse_producers(st_state *s, int g)
{
    const ft_problem *p = s->p;
    for (;;) {
        int n = members(s, s->gid, g, g, s->list), fused = 0;
        for (int j = 0; j < n && !fused; j++) {
            const ft_op *op = &p->ops[s->list[j]];
            for (int k = 0; k < op->ninputs && !fused; k++) {
                int q = p->tensors[op->inputs[k]].producer;
                if (q < 0 || s->gid[q] == g || s->fail_round[s->gid[q]] == s->round)
                    continue;
                int P = s->gid[q], r = try_fuse(s, g, P);
                if (r < 0)
                    return -1;
                if (r)
                    fused = 1;
                else
                    s->fail_round[P] = s->round;
            }
        }
        if (!fused)
            return 0;
    }
}

/* Step 3's tile of ops[] (a fuse group, or an op of a group broken up):
 * the largest granularity the model allows when its whole footprint fits
 * (tiled 0), else that refined until the footprint fits (tiled 1; every
 * fuse group and op fits its smallest tile, step 1).  0, or -1 on OOM. */
static int start_tile(st_state *s, const int *ops, int n, ft_supertile_tile *t)
{
    const ft_problem *p = s->p;
    ft_supertile_tile whole;
    ft__st_whole(p, ops, n, &whole);
    *t = whole;
    t->k = t->k > 0 ? t->k : 1;
    int64_t fp = ft__st_footprint(p, &s->sc, ops, n, t);
    *t = whole;
    ft__st_clip(p, t);
    if (fp < 0)
        return -1;
    if (fp != FT_SUPERTILE_ESCAPES && (double)fp <= p->capacity)
        return 0;
    t->tiled = 1;
    return ft__st_refine(p, &s->sc, ops, n, t) < 0 ? -1 : 0;
}

/* Step 3: visit fuse group f (its loop is still f): its tile, then, when
 * tiled, step 4.  0, or -1 on OOM. */
static int visit(st_state *s, int f)
{
    int n = members(s, s->fg, f, f, s->list);
    if (start_tile(s, s->list, n, &s->tile[f]))
        return -1;
    return s->tile[f].tiled ? fuse_producers(s, f) : 0;
}

/* Step 2: post-order DFS over the fuse groups from the graph outputs,
 * visiting each.  0, or -1 on OOM. */
static int dfs(st_state *s)
{
    const ft_problem *p = s->p;
    size_t cap = (size_t)p->ngraph_outputs + 1;
    for (int o = 0; o < p->nops; o++)
        cap += (size_t)p->ops[o].ninputs;
    int *stack = ft__malloc(sizeof(int) * cap), top = 0, rc = 0;
    unsigned char *state = ft__calloc((size_t)p->nops + 1, 1); /* 0 new, 1 producers pushed, 2 visited */
    if (!stack || !state)
        rc = -1;
    for (int r = 0; !rc && r < p->ngraph_outputs; r++) {
        int root = p->tensors[p->graph_outputs[r]].producer;
        if (root < 0 || state[s->fg[root]])
            continue; /* an unused graph input, or visited */
        stack[top++] = s->fg[root];
        while (!rc && top > 0) {
            int f = stack[top - 1];
            if (state[f] == 2) {
                top--;
            } else if (state[f] == 1) {
                top--;
                state[f] = 2;
                rc = visit(s, f);
            } else {
                state[f] = 1;
                int n = members(s, s->fg, f, f, s->list);
                /* pushed last input first, so the first input is visited first */
                for (int j = n - 1; j >= 0; j--) {
                    const ft_op *op = &p->ops[s->list[j]];
                    for (int k = op->ninputs - 1; k >= 0; k--) {
                        int q = p->tensors[op->inputs[k]].producer;
                        if (q >= 0 && s->fg[q] != f && !state[s->fg[q]])
                            stack[top++] = s->fg[q];
                    }
                }
            }
        }
    }
    ft__free(stack);
    ft__free(state);
    return rc;
}

/* Step 5 for ops[] at *t: refine t until every step fits.  1 fits, 0 no
 * tile does. */
static int settle(st_state *s, const int *ops, int n, ft_supertile_tile *t)
{
    ft_supertile_tile whole;
    ft__st_whole(s->p, ops, n, &whole);
    while (!ft__st_fits_exactly(&s->scorer, &s->sc, ops, n, t)) {
        /* out of time: the caller checks the loop (and splits it) */
        if (s->stop && s->stop(s->stop_ctx))
            return 1;
        if (!ft__st_halve(t, whole.k))
            return 0;
    }
    return 1;
}

/* Step 5 for every loop: settled, or broken into its ops (each at its own
 * tile, ft__st_refine then settle).  FT_OK, FT_EINVALID or FT_ENOMEM. */
static int settle_all(st_state *s, ft_status *st)
{
    const ft_problem *p = s->p;
    unsigned char *done = ft__calloc((size_t)p->nops + 1, 1);
    if (!done)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    int rc = FT_OK;
    for (int i = 0; i < p->nops && rc == FT_OK; i++) {
        int g = s->gid[p->topo[i]];
        if (done[g])
            continue;
        done[g] = 1;
        int n = members(s, s->gid, g, g, s->list);
        if (settle(s, s->list, n, &s->tile[g]))
            continue;
        for (int j = 0; j < n && rc == FT_OK; j++) {
            int o = s->list[j];
            s->gid[o] = o;
            done[o] = 1;
            if (start_tile(s, &o, 1, &s->tile[o]))
                rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
            else if (!settle(s, &o, 1, &s->tile[o]))
                rc = op_fits_no_tile(p, o, st);
        }
    }
    ft__free(done);
    return rc;
}

/* The partition and tiles of the final loops into *out and *tiles (tiles
 * may be NULL): ids in the topological order of the loops' first ops.
 * FT_OK or FT_ENOMEM (then nothing is kept). */
static int output(st_state *s, ft_partition *out, ft_supertile_tile **tiles, ft_status *st)
{
    const ft_problem *p = s->p;
    int n = p->nops, ng = 0;
    int *id = ft__malloc(sizeof(int) * ((size_t)n + 1));
    out->nops = n;
    out->gid = ft__malloc(sizeof(int) * ((size_t)n + 1));
    out->label = NULL;
    ft_supertile_tile *tl = ft__malloc(sizeof *tl * ((size_t)n + 1));
    if (!id || !out->gid || !tl)
        goto oom;
    for (int o = 0; o < n; o++)
        id[o] = -1;
    for (int i = 0; i < n; i++) {
        int g = s->gid[p->topo[i]];
        if (id[g] < 0) {
            tl[ng] = s->tile[g];
            id[g] = ng++;
        }
        out->gid[p->topo[i]] = id[g];
    }
    out->ngroups = ng;
    out->label = ft__calloc((size_t)ng + 1, sizeof(char *));
    if (!out->label)
        goto oom;
    for (int g = 0; g < n; g++) {
        if (id[g] < 0)
            continue;
        ft_subgraph sg;
        memset(&sg, 0, sizeof sg);
        sg.ops = s->list;
        sg.nops = members(s, s->gid, g, g, s->list);
        char *name = ft_subgraph_label(p, &sg);
        const char *kind = s->tile[g].tiled ? "supertile" : "untiled";
        size_t len = name ? strlen(kind) + strlen(name) + 2 : 0;
        out->label[id[g]] = name ? ft__malloc(len) : NULL;
        if (!out->label[id[g]]) {
            ft__free(name);
            goto oom;
        }
        snprintf(out->label[id[g]], len, "%s %s", kind, name);
        ft__free(name);
    }
    ft__free(id);
    if (tiles)
        *tiles = tl;
    else
        ft__free(tl);
    return FT_OK;
oom:
    ft__free(id);
    ft__free(tl);
    for (int g = 0; out->label && g < ng; g++)
        ft__free(out->label[g]);
    ft__free(out->label);
    ft__free(out->gid);
    memset(out, 0, sizeof *out);
    return ft__fail(st, FT_ENOMEM, 0, "out of memory");
}

/* Release what a run's state owns (not s itself). */
static void state_free(st_state *s)
{
    ft__scorer_free(&s->scorer);
    ft__free(s->pos);
    ft__st_scratch_free(&s->sc);
    ft__free(s->fg);
    ft__free(s->gid);
    ft__free(s->tile);
    ft__free(s->fail_round);
    ft__free(s->list);
    ft__free(s->list2);
    ft__free(s->mark);
    ft__free(s->queue);
}

/* The scorer's stop hook: the caller's clock of the run that holds it. */
static int st_scorer_stop(ft__scorer *sc)
{
    st_state *s = (st_state *)(void *)((char *)sc - offsetof(st_state, scorer));
    return s->stop && s->stop(s->stop_ctx);
}

/* ft__supertile_run under the caller's clock stop(ctx) (NULL: none). */
static int supertile_run(const ft_problem *p, ft_partition *out, ft_supertile_tile **tiles, int (*stop)(void *), void *ctx,
                         ft_status *st)
{
    st_state s;
    size_t n = (size_t)p->nops + 1;
    ft_status_clear(st);
    memset(out, 0, sizeof *out);
    if (tiles)
        *tiles = NULL;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.fg = ft__malloc(sizeof(int) * n);
    s.gid = ft__malloc(sizeof(int) * n);
    s.tile = ft__calloc(n, sizeof *s.tile);
    s.fail_round = ft__malloc(sizeof(int) * n);
    s.list = ft__malloc(sizeof(int) * n);
    s.list2 = ft__malloc(sizeof(int) * n);
    s.mark = ft__calloc(n, sizeof(int));
    s.queue = ft__malloc(sizeof(int) * n);
    s.pos = ft__malloc(sizeof(int) * n);
    int rc = FT_OK;
    if (!s.fg || !s.gid || !s.tile || !s.fail_round || !s.list || !s.list2 || !s.mark || !s.queue || !s.pos ||
        ft__scorer_init(&s.scorer, p, FT_COMPUTE_NATIVE) || ft__st_scratch_init(&s.sc, p))
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
    s.stop = stop;
    s.stop_ctx = ctx;
    if (rc == FT_OK)
        s.scorer.stop = st_scorer_stop;
    for (int i = 0; rc == FT_OK && i < p->nops; i++)
        s.pos[p->topo[i]] = i;
    if (rc == FT_OK)
        rc = fuse_groups(&s, st);
    if (rc == FT_OK) {
        for (int o = 0; o < p->nops; o++) {
            s.gid[o] = s.fg[o];
            s.fail_round[o] = -1;
        }
        if (dfs(&s))
            rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
    }
    if (rc == FT_OK)
        rc = settle_all(&s, st);
    if (rc == FT_OK)
        rc = output(&s, out, tiles, st);
    state_free(&s);
    return rc;
}

int ft__supertile_run(const ft_problem *p, ft_partition *out, ft_supertile_tile **tiles, ft_status *st)
{
    return supertile_run(p, out, tiles, NULL, NULL, st);
}

/* The strategy of the pass table (strategy.h): ft__supertile_run without
 * the tiles, under the caller's clock (o->stop); super tiling takes no
 * other options. */
int ft__strategy_supertile(const ft_problem *p, const ft_strategy_opts *o, ft_partition *out, ft_status *st)
{
    return supertile_run(p, out, NULL, o ? o->stop : NULL, o ? o->stop_ctx : NULL, st);
}
