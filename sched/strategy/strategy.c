/* strategy.c - what every grouping strategy shares: releasing a partition and checking one (groups connected, quotient graph acyclic). */
#include "strategy/strategy.h"


#include <stdlib.h>
#include <string.h>

void ft_partition_free(ft_partition *part)
{
    if (!part)
        return;
    if (part->label)
        for (int g = 0; g < part->ngroups; g++)
            ft__free(part->label[g]);
    ft__free(part->label);
    ft__free(part->gid);
    memset(part, 0, sizeof *part);
}

int ft__partition_acyclic(const ft_problem *p, const int *gid, int ng)
{
    int n = p->nops, head = 0, tail = 0, rc = -1;
    int *indeg = ft__calloc((size_t)ng + 1, sizeof(int)), *start = ft__calloc((size_t)ng + 2, sizeof(int));
    int *member = ft__malloc(sizeof(int) * ((size_t)n + 1)), *queue = ft__malloc(sizeof(int) * ((size_t)ng + 1));
    if (!indeg || !start || !member || !queue)
        goto out;
    /* an edge per (producer, consumer input slot) across groups */
    for (int o = 0; o < n; o++) {
        start[gid[o] + 2]++;
        for (int k = 0; k < p->ops[o].ninputs; k++) {
            int pr = p->tensors[p->ops[o].inputs[k]].producer;
            indeg[gid[o]] += pr >= 0 && gid[pr] != gid[o];
        }
    }
    for (int g = 0; g < ng; g++)
        start[g + 2] += start[g + 1];
    for (int o = 0; o < n; o++)
        member[start[gid[o] + 1]++] = o;
    for (int g = 0; g < ng; g++)
        if (!indeg[g])
            queue[tail++] = g;
    while (head < tail) {
        int g = queue[head++];
        for (int i = start[g]; i < start[g + 1]; i++) {
            int t = p->ops[member[i]].output;
            const ft_tensor *T = &p->tensors[t];
            for (int c = 0; c < T->nconsumers; c++) {
                const ft_op *C = &p->ops[T->consumers[c]];
                int h = gid[T->consumers[c]];
                for (int k = 0; k < C->ninputs && h != g; k++)
                    if (C->inputs[k] == t && --indeg[h] == 0)
                        queue[tail++] = h;
            }
        }
    }
    rc = tail == ng;
out:
    ft__free(indeg);
    ft__free(start);
    ft__free(member);
    ft__free(queue);
    return rc;
}

int ft__partition_check(const ft_problem *p, const ft_partition *part, ft_status *st)
{
    int n = p->nops, ng = part->ngroups;
    if (part->nops != n || !part->gid || ng < 1 || ng > n)
        return ft__fail(st, FT_EINVALID, FT_R_LENGTH_MISMATCH, "partition: %d ops and %d groups for a problem of %d ops",
                        part->nops, ng, n);
    int *size = ft__calloc((size_t)ng, sizeof(int)), *ops = ft__malloc(sizeof(int) * (size_t)n);
    int rc = FT_OK;
    if (!size || !ops) {
        rc = ft__fail(st, FT_ENOMEM, 0, "partition: out of memory");
        goto out;
    }
    for (int o = 0; o < n && rc == FT_OK; o++)
        if (part->gid[o] < 0 || part->gid[o] >= ng)
            rc = ft__fail(st, FT_EINVALID, FT_R_OP_OUT_OF_RANGE, "partition: op %d: group %d is not in 0..%d", o,
                          part->gid[o], ng - 1);
        else
            size[part->gid[o]]++;
    for (int g = 0; g < ng && rc == FT_OK; g++) {
        int m = 0;
        for (int o = 0; o < n; o++)
            if (part->gid[o] == g)
                ops[m++] = o;
        if (m == 0)
            rc = ft__fail(st, FT_EINVALID, FT_R_EMPTY_SUBGRAPH, "partition: group %d is empty", g);
        else if (!ft__connected(p, ops, m))
            rc = ft__fail(st, FT_EINVALID, FT_R_NOT_CONNECTED, "partition: group %d (%s) is not connected through its tensors",
                          g, part->label && part->label[g] ? part->label[g] : "no label");
    }
    if (rc == FT_OK) {
        int a = ft__partition_acyclic(p, part->gid, ng);
        if (a < 0)
            rc = ft__fail(st, FT_ENOMEM, 0, "partition: out of memory");
        else if (!a)
            rc = ft__fail(st, FT_EINVALID, FT_R_OP_BEFORE_PRODUCER, "partition: the groups' quotient graph has a cycle");
    }
out:
    ft__free(size);
    ft__free(ops);
    return rc;
}
