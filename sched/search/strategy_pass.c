/* strategy_pass.c - the grouping strategies as passes of the scheduler: their names, the dispatch, a strategy's partition made into groups a plan can cost (checked, repaired, unfit groups split, labelled by source names), and super tiling's partition made into a schedule. */
#include "strategy/patterns.h"
#include "strategy/rules.h"
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A strategy (strategy.h) answers with a partition of the ops.  The pass
 * table (search.c) turns it into a schedule the same way for every
 * strategy, so that they differ only in their grouping:
 *
 *   1. the partition is checked (ft__partition_check: groups connected,
 *      quotient acyclic); one that fails is repaired (ft__grouping_repair)
 *      rather than dropped, since the check guards a strategy's bug, not
 *      the user's input;
 *   2. a group whose ops fit no granularity together (nothing retained,
 *      its outputs written: ft__partition_group_cost is INF; strategies
 *      judge fit by an estimate, ft__footprint) is split into chunks that
 *      fit, in topological order (split_unfit), as a designer would split
 *      a fused kernel that does not fit;
 *   3. search.c costs the groups (each at its best granularity and
 *      traversal, group.c and tiling.c) with optimal retention (retain.c);
 *      no recomputation, which is the search's own move.
 *
 * Labels: the strategy's label of the group, then the source layers of its
 * ops (ft_op_source_name, in op order, each once), so that a report names the
 * model's layers: "conv+bn+relu layer1.0.conv1: layer1.0.conv1, layer1.0.bn1,
 * layer1.0.relu".
 */

typedef int (*strategy_fn)(const ft_problem *, const ft_strategy_opts *, ft_partition *, ft_status *);

static const struct {
    const char *name;
    strategy_fn run; /* NULL: the search itself */
} strategies[FT_STRATEGY_COUNT] = {
    [FT_STRATEGY_SEARCH] = {"search", NULL},
    [FT_STRATEGY_PATTERNS] = {"patterns", ft__strategy_patterns},
    [FT_STRATEGY_RULES] = {"rules", ft__strategy_rules},
    [FT_STRATEGY_PARTITION] = {"partition", ft__strategy_partition},
    [FT_STRATEGY_SUPERTILE] = {"supertile", ft__strategy_supertile},
};

const char *ft_strategy_name(ft_strategy s)
{
    return (unsigned)s < FT_STRATEGY_COUNT ? strategies[s].name : NULL;
}

static const char *const methods[] = {"auto", "fit", "layers", "metis"};

const char *ft_partition_method_name(ft_partition_method m)
{
    return (unsigned)m < sizeof methods / sizeof *methods ? methods[m] : NULL;
}

int ft_partition_method_parse(const char *name, ft_partition_method *m, ft_status *st)
{
    for (size_t i = 0; name && i < sizeof methods / sizeof *methods; i++)
        if (strcmp(name, methods[i]) == 0) {
            *m = (ft_partition_method)i;
            return FT_OK;
        }
    return ft__fail(st, FT_EINPUT, 0, "unknown partition method '%s' (expected auto, fit, layers or metis)", name ? name : "(null)");
}

int ft_strategy_parse(const char *name, ft_strategy *s, ft_status *st)
{
    for (int i = 0; name && i < FT_STRATEGY_COUNT; i++)
        if (strcmp(name, strategies[i].name) == 0) {
            *s = (ft_strategy)i;
            return FT_OK;
        }
    return ft__fail(st, FT_EINPUT, 0, "unknown strategy '%s' (expected search, patterns, rules, partition or supertile)",
                    name ? name : "(null)");
}

int ft_strategy_parse_starts(const char *list, unsigned *mask, ft_status *st)
{
    if (!list || !*list)
        return ft__fail(st, FT_EINPUT, 0, "start-from list is empty (expected strategies separated by commas, all or none)");
    if (strcmp(list, "all") == 0 || strcmp(list, "none") == 0) {
        *mask = list[0] == 'a' ? FT_STRATEGY_ALL_STARTS : 0;
        return FT_OK;
    }
    unsigned m = 0;
    for (const char *a = list; *a;) {
        size_t len = strcspn(a, ",");
        int found = 0;
        for (int k = 1; k < FT_STRATEGY_COUNT && !found; k++)
            if (strlen(strategies[k].name) == len && strncmp(a, strategies[k].name, len) == 0) {
                m |= 1u << k;
                found = 1;
            }
        if (!found)
            return ft__fail(st, FT_EINPUT, 0, "start-from: '%.*s' is not a grouping strategy (patterns, rules, partition, supertile)",
                            (int)(len > 64 ? 64 : len), a);
        a += len + (a[len] == ',');
    }
    *mask = m;
    return FT_OK;
}

int ft__strategy_check_files(const ft_search_opts *o, ft_status *st)
{
    int rc = FT_OK;
    for (int i = 0; i < o->npattern_files && rc == FT_OK; i++) {
        ft_patlib lib = {0};
        rc = ft__patlib_load(&lib, o->pattern_files[i], st);
        ft__patlib_free(&lib);
    }
    return rc;
}

/* Label of group g: "LABEL NOTE: a, b, c" (LABEL: the strategy's, else
 * "group G"; longer than FT_STRATEGY_HEAD_MAX bytes: cut, ending "...";
 * NOTE: split_note's, why the group was split off the strategy's;
 * a, b, c: the source layers of its ops, each once, in op
 * order), cut at FT_STRATEGY_LABEL_MAX bytes with ", ... (+N)" counting
 * the ops whose layers were left out.  NULL on OOM. */
static char *group_label(const ft_problem *p, const ft_partition *part, int g, const char *note)
{
    char buf[FT_STRATEGY_LABEL_MAX], src[FT_RULES_LABEL];
    const char *head = part->label && part->label[g] ? part->label[g] : NULL;
    int len = !head                                  ? snprintf(buf, sizeof buf, "group %d%s:", g, note)
              : strlen(head) <= FT_STRATEGY_HEAD_MAX ? snprintf(buf, sizeof buf, "%s%s:", head, note)
                                                     : snprintf(buf, sizeof buf, "%.*s...%s:", FT_STRATEGY_HEAD_MAX - 3, head, note);
    int start = len < (int)sizeof buf ? len : (int)sizeof buf - 1, names = 0, left = 0;
    for (int i = 0; i < p->nops; i++) {
        int o = p->topo[i];
        if (part->gid[o] != g)
            continue;
        if (p->ops[o].name)
            ft_op_source_name(p->ops[o].name, src, sizeof src);
        else
            snprintf(src, sizeof src, "op %d", o);
        /* listed already: the list is " a, b, c" after `start` */
        size_t sl = strlen(src);
        int seen = 0;
        for (const char *q = buf + start; !seen && (q = strstr(q, src)); q += sl)
            seen = q[-1] == ' ' && (q[sl] == ',' || q[sl] == '\0');
        if (seen)
            continue;
        /* room for this name and a closing ", ... (+N)" */
        if (!left && len + (int)sl + 2 + 24 < (int)sizeof buf) {
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s %s", names ? "," : "", src);
            names++;
        } else {
            left++;
        }
    }
    if (left)
        snprintf(buf + len, sizeof buf - (size_t)len, ", ... (+%d)", left);
    return ft__strdup(buf);
}

/* Whether op o reads or writes a tensor that an op of gid group g touches
 * (SPEC 2's connection, shared inputs included). */
static int touches(const ft_problem *p, const int *gid, int g, int o)
{
    const ft_op *O = &p->ops[o];
    for (int k = 0; k <= O->ninputs; k++) {
        const ft_tensor *T = &p->tensors[k < O->ninputs ? O->inputs[k] : O->output];
        if (T->producer >= 0 && T->producer != o && gid[T->producer] == g)
            return 1;
        for (int c = 0; c < T->nconsumers; c++)
            if (T->consumers[c] != o && gid[T->consumers[c]] == g)
                return 1;
    }
    return 0;
}

/* Why a group of the final partition was split off a strategy's group
 * (split_unfit), named in its label (split_note). */
enum { SPLIT_NONE = 0, SPLIT_UNFIT, SPLIT_SLOW };

static const char *split_note(unsigned char why)
{
    return why == SPLIT_UNFIT ? " (split: fits no tiling)" : why == SPLIT_SLOW ? " (split: not costed in its time share)" : "";
}

/* Whether group g of gid (ops[0..m)) fits some tiling alone, nothing
 * retained (ft__partition_group_cost < INF), judged within `slice`
 * seconds (and the deadline).  A group that fits only small tiles walks
 * many steps; a check cut short counts as unfit, *slow set, so that the
 * group is split rather than leave no time to cost the others. */
static int fits(search *S, sctx *x, const int *gid, int g, int *ops, int m, double slice, int *slow)
{
    double deadline = S->deadline, end = ft__now_s() + slice;
    cfg c;
    if (end < deadline)
        S->deadline = end;
    int ok = ft__partition_group_cost(S, x, gid, g, ops, m, &c) < INF;
    *slow = !ok && S->timed_out;
    S->deadline = deadline;
    S->timed_out = 0; /* set again by ft__out_of_time past the deadline */
    return ok;
}

/* The time slice of one fit check when `left` checks remain:
 * FT_STRATEGY_CHECK_SHARE of the time left, shared equally. */
static double check_slice(const search *S, int left)
{
    double t = S->deadline - ft__now_s();
    return t > 0 ? FT_STRATEGY_CHECK_SHARE * t / (left > 0 ? left : 1) : 0;
}

/* Every op of members[0..m) in group h but the first becomes a group of
 * its own, numbered from next, split off strategy group g for why[h]'s
 * reason; returns the next free group number. */
static int to_singles(int *gid, const int *members, int m, int h, int g, unsigned char *why, int *origin, int next)
{
    for (int i = 0, kept = 0; i < m; i++)
        if (gid[members[i]] == h && kept++) {
            origin[next] = g;
            why[next] = why[h];
            gid[members[i]] = next++;
        }
    return next;
}

/* Split every group of part that fits no tiling alone (fits) into chunks:
 * its ops in topological order, each joining the current chunk when it
 * touches it and the chunk's estimated working set (ft__footprint, no
 * real costing: that can take seconds on a large group) stays within the
 * capacity, else starting the next; a chunk that then fits no tiling
 * either becomes single ops.  Each chunk is connected; chunks of
 * consecutive positions keep the quotient acyclic (an edge between two
 * chunks goes forward, and a path out of the group and back would be a
 * cycle of the old quotient).  singles: every group of two or more ops
 * becomes single ops unchecked, as not costed in time.  New groups keep
 * the old label; why[h]
 * (nops + 1 entries) says why group h was split off (SPLIT_*).  FT_OK or
 * FT_ENOMEM. */
static int split_unfit(search *S, sctx *x, ft_partition *part, int singles, unsigned char *why, ft_status *st)
{
    const ft_problem *p = S->p;
    int n = p->nops, ng = part->ngroups, next = ng, rc = FT_OK;
    int *ops = ft__malloc(sizeof(int) * ((size_t)n + 1)), *members = ft__malloc(sizeof(int) * ((size_t)n + 1));
    int *origin = ft__malloc(sizeof(int) * ((size_t)n + 1)); /* new group -> old */
    int *in = ft__calloc((size_t)n + 1, sizeof(int));
    int64_t *best = ft__calloc((size_t)p->ntensors + 1, sizeof(int64_t));
    if (!ops || !members || !origin || !in || !best)
        rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
    memset(why, SPLIT_NONE, (size_t)n + 1);
    for (int g = 0; g < ng && rc == FT_OK; g++) {
        int m = 0, slow = 0;
        for (int i = 0; i < n; i++)
            if (part->gid[p->topo[i]] == g)
                members[m++] = p->topo[i];
        memcpy(ops, members, sizeof(int) * (size_t)m);
        /* past the deadline a check costs a tiling search (milliseconds)
         * for nothing: the groups left are split unchecked, as when
         * `singles` asks it (thousands of groups would take seconds) */
        if (!singles && m >= 2 && ft__now_s() > S->deadline)
            singles = 1;
        if (m < 2 || (!singles && fits(S, x, part->gid, g, ops, m, check_slice(S, ng - g), &slow)))
            continue;
        if (singles) {
            why[g] = SPLIT_SLOW;
            next = to_singles(part->gid, members, m, g, g, why, origin, next);
            continue;
        }
        /* every member but the first leaves g, then joins the chunk `cur`
         * or starts the next */
        int first = next, cur = g, q = 1;
        for (int i = 1; i < m; i++)
            part->gid[members[i]] = -1;
        ops[0] = members[0];
        for (int i = 1; i < m; i++) {
            int o = members[i];
            ops[q] = o;
            if (touches(p, part->gid, cur, o) && (double)ft__footprint(p, ops, q + 1, in, best) <= p->capacity) {
                part->gid[o] = cur;
                q++;
                continue;
            }
            origin[next] = g;
            cur = next++;
            part->gid[o] = cur;
            ops[0] = o;
            q = 1;
        }
        why[g] = slow ? SPLIT_SLOW : SPLIT_UNFIT;
        for (int h = first; h < next; h++)
            why[h] = why[g];
        /* chunks that still fit nothing (or were not judged in time):
         * single ops */
        for (int h = g, left = next - first + 1; h < next; h = h == g ? first : h + 1, left--) {
            int k = 0, cut = 0;
            for (int i = 0; i < m; i++)
                if (part->gid[members[i]] == h)
                    ops[k++] = members[i];
            if (k < 2 || fits(S, x, part->gid, h, ops, k, check_slice(S, left + ng - g - 1), &cut))
                continue;
            why[h] = cut ? SPLIT_SLOW : why[h];
            next = to_singles(part->gid, members, m, h, g, why, origin, next);
        }
    }
    if (rc == FT_OK && next > ng && part->label) {
        char **label = ft__realloc(part->label, sizeof(char *) * (size_t)next);
        if (!label) {
            rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        } else {
            part->label = label;
            for (int g = ng; g < next; g++)
                label[g] = NULL;
            part->ngroups = next; /* so that ft_partition_free sees them all */
            for (int g = ng; g < next && rc == FT_OK; g++)
                if (label[origin[g]] && !(label[g] = ft__strdup(label[origin[g]])))
                    rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        }
    }
    if (rc == FT_OK)
        part->ngroups = next;
    ft__free(origin);
    ft__free(ops);
    ft__free(members);
    ft__free(in);
    ft__free(best);
    return rc;
}

/* A strategy's clock (ft_strategy_opts.stop): the search's deadline. */
static int strategy_stop(void *ctx)
{
    return ft__out_of_time(ctx);
}

int ft__strategy_groups(search *S, sctx *x, ft_strategy which, int singles, int *gid, ft_partition *part, ft_status *st)
{
    const ft_problem *p = S->p;
    const ft_search_opts *so = S->o;
    memset(part, 0, sizeof *part);
    if ((unsigned)which >= FT_STRATEGY_COUNT || !strategies[which].run)
        return ft__fail(st, FT_EINPUT, 0, "strategy %d is not a grouping strategy", (int)which);
    ft_strategy_opts o = {so->pattern_files, so->npattern_files, so->parts, so->partition, so->patterns_dir, strategy_stop, S};
    ft_partition raw = {0};
    unsigned char *why = ft__malloc((size_t)p->nops + 1);
    if (!why)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    int rc = strategies[which].run(p, &o, &raw, st);
    if (rc == FT_OK && ft__partition_check(p, &raw, st) != FT_OK) {
        ft_status_clear(st);
        rc = ft__grouping_repair(p, &raw, NULL, st);
    }
    if (rc == FT_OK)
        rc = split_unfit(S, x, &raw, singles, why, st);
    if (rc == FT_OK) {
        part->nops = p->nops;
        part->ngroups = raw.ngroups;
        part->label = ft__calloc((size_t)raw.ngroups + 1, sizeof(char *));
        for (int g = 0; part->label && g < raw.ngroups; g++)
            if (!(part->label[g] = group_label(p, &raw, g, split_note(why[g]))))
                break;
        part->gid = raw.gid;
        raw.gid = NULL;
        if (!part->label || (raw.ngroups && !part->label[raw.ngroups - 1]))
            rc = ft__fail(st, FT_ENOMEM, 0, "out of memory");
        else
            memcpy(gid, part->gid, sizeof(int) * (size_t)p->nops);
    }
    ft_partition_free(&raw);
    ft__free(why);
    if (rc != FT_OK)
        ft_partition_free(part);
    return rc;
}

int ft__supertile_schedule(const ft_problem *p, const ft_partition *part, const ft_supertile_tile *tiles, ft_schedule **out, ft_status *st)
{
    search S;
    plan P;
    *out = NULL;
    memset(&S, 0, sizeof S);
    S.p = p;
    if (ft__plan_from_partition(&S, part->gid, part->ngroups, &P))
        return ft__fail(st, FT_EINPUT, 0, "%s: supertile: the groups of the partition form a cycle (or out of memory)",
                        p->name ? p->name : "problem");
    for (int i = 0; i < P.ngroups; i++) {
        const ft_supertile_tile *t = &tiles[part->gid[P.g[i].ops[0]]];
        P.g[i].c = (cfg){t->w, t->h, t->k, ORD_RASTER};
    }
    ft_schedule *s = ft__plan_schedule(p, &P);
    ft__plan_free(&P);
    if (!s)
        return ft__fail(st, FT_ENOMEM, 0, "out of memory");
    for (int i = 0; i < s->nsubgraphs; i++)
        s->sg[i].has_reported = 0;
    s->len_latencies = -1;
    *out = s;
    return FT_OK;
}
