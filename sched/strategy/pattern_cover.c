/* pattern_cover.c - the set cover of the pattern-library tiler: blocks of overlapping matches, each solved once per structure by memoised backtracking (patterns.c's top comment, step 3). */
#include "strategy/patterns.h"

#include <stdlib.h>
#include <string.h>

/* One block: cn nodes (local 0..cn-1), cm matches (local, in the global
 * order: largest first); match k covers mnodes[moff[k] .. moff[k+1]);
 * node v is in matches nm[noff[v] .. noff[v+1]) (ascending). */
typedef struct block {
    int cn, cm;
    int *moff, *mnodes, *nm, *noff;
    int largest;         /* nodes in its largest match */
} block;

/* A memoised state: the free set (keys[key .. key + words)) and its best
 * answer: covered nodes, tiles, and the choice (a local match, or -1: no
 * tile at the most constrained node). */
typedef struct entry {
    size_t key;
    int cov, tiles, choice;
} entry;

/* The backtracking state of one block. */
typedef struct solver {
    const block *B;
    unsigned char *in;   /* node is free (in R) */
    int *avail;          /* live matches per node (all their nodes free) */
    int *dead;           /* per match: its nodes taken out of R */
    int *dropped, ndropped; /* nodes dropped with no live match, a stack */
    uint64_t *R;         /* R as a bitset */
    int words, rcount;
    uint64_t *keys;
    size_t nkeys, keycap;
    entry *ent;
    int nent, entcap;
    int *tab, tabcap;    /* open addressing over ent (-1: empty) */
    long states;
    int greedy, oom;
} solver;

/* Hash of the bitset words w[0..n). */
static uint64_t hash_words(const uint64_t *w, int n)
{
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (int i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
    }
    return h;
}

/* Memo entry of the current R, or NULL. */
static entry *memo_find(const solver *S)
{
    if (!S->tabcap)
        return NULL;
    size_t mask = (size_t)S->tabcap - 1;
    for (size_t i = (size_t)hash_words(S->R, S->words) & mask;; i = (i + 1) & mask) {
        int k = S->tab[i];
        if (k < 0)
            return NULL;
        if (memcmp(S->keys + S->ent[k].key, S->R, sizeof(uint64_t) * (size_t)S->words) == 0)
            return &S->ent[k];
    }
}

/* Insert entry k into the table (room assured). */
static void memo_link(solver *S, int k)
{
    size_t mask = (size_t)S->tabcap - 1;
    size_t i = (size_t)hash_words(S->keys + S->ent[k].key, S->words) & mask;
    while (S->tab[i] >= 0)
        i = (i + 1) & mask;
    S->tab[i] = k;
}

/* Store the answer for the current R; sets S->oom on failure. */
static void memo_store(solver *S, int cov, int tiles, int choice)
{
    if (S->nent == S->entcap) {
        int cap = S->entcap ? 2 * S->entcap : 64;
        entry *ne = ft__realloc(S->ent, sizeof *ne * (size_t)cap);
        if (!ne) {
            S->oom = 1;
            return;
        }
        S->ent = ne;
        S->entcap = cap;
    }
    if (S->nkeys + (size_t)S->words > S->keycap) {
        size_t cap = S->keycap ? 2 * S->keycap : 64 * (size_t)S->words;
        uint64_t *nk = ft__realloc(S->keys, sizeof *nk * cap);
        if (!nk) {
            S->oom = 1;
            return;
        }
        S->keys = nk;
        S->keycap = cap;
    }
    if (2 * (S->nent + 1) > S->tabcap) {
        int cap = S->tabcap ? 2 * S->tabcap : 128;
        int *nt = ft__malloc(sizeof(int) * (size_t)cap);
        if (!nt) {
            S->oom = 1;
            return;
        }
        ft__free(S->tab);
        S->tab = nt;
        S->tabcap = cap;
        for (int i = 0; i < cap; i++)
            nt[i] = -1;
        for (int k = 0; k < S->nent; k++)
            memo_link(S, k);
    }
    memcpy(S->keys + S->nkeys, S->R, sizeof(uint64_t) * (size_t)S->words);
    S->ent[S->nent] = (entry){S->nkeys, cov, tiles, choice};
    S->nkeys += (size_t)S->words;
    memo_link(S, S->nent++);
}

/* Take node u out of R: every live match holding it dies. */
static void take(solver *S, int u)
{
    const block *B = S->B;
    S->in[u] = 0;
    S->R[u >> 6] &= ~(1ULL << (u & 63));
    S->rcount--;
    for (int j = B->noff[u]; j < B->noff[u + 1]; j++) {
        int m = B->nm[j];
        if (S->dead[m]++ == 0)
            for (int i = B->moff[m]; i < B->moff[m + 1]; i++)
                S->avail[B->mnodes[i]]--;
    }
}

/* Put node u back into R (the inverse of take). */
static void give(solver *S, int u)
{
    const block *B = S->B;
    for (int j = B->noff[u]; j < B->noff[u + 1]; j++) {
        int m = B->nm[j];
        if (--S->dead[m] == 0)
            for (int i = B->moff[m]; i < B->moff[m + 1]; i++)
                S->avail[B->mnodes[i]]++;
    }
    S->in[u] = 1;
    S->R[u >> 6] |= 1ULL << (u & 63);
    S->rcount++;
}

/* The most constrained free node: fewest live matches, then lowest index. */
static int pick(const solver *S)
{
    int v = -1;
    for (int i = 0; i < S->B->cn; i++)
        if (S->in[i] && (v < 0 || S->avail[i] < S->avail[v]))
            v = i;
    return v;
}

/* Take every free node with no live match out of R (pushed on dropped). */
static void drop_dead(solver *S)
{
    for (int i = 0; i < S->B->cn; i++)
        if (S->in[i] && S->avail[i] == 0) {
            S->dropped[S->ndropped++] = i;
            take(S, i);
        }
}

/* Best cover of R: *cov nodes covered by *tiles tiles. */
static void solve(solver *S, int *cov, int *tiles)
{
    const block *B = S->B;
    *cov = *tiles = 0;
    if (S->rcount == 0 || S->oom)
        return;
    const entry *e = memo_find(S);
    if (e) {
        *cov = e->cov;
        *tiles = e->tiles;
        return;
    }
    if (++S->states >= FT_PATTERNS_MAX_STATES)
        S->greedy = 1;
    int v = pick(S), bc = -1, bt = 0, choice = -1, c, t;
    if (S->avail[v] == 0) {
        int base = S->ndropped;
        drop_dead(S);
        solve(S, &bc, &bt);
        while (S->ndropped > base)
            give(S, S->dropped[--S->ndropped]);
    } else {
        /* every free node has a live match: all of R may be covered, by
         * no fewer tiles than R's size over the largest match's */
        int bound = S->rcount, fewest = (S->rcount + B->largest - 1) / B->largest;
        for (int j = B->noff[v]; j < B->noff[v + 1]; j++) {
            int m = B->nm[j];
            if (S->dead[m])
                continue;
            for (int i = B->moff[m]; i < B->moff[m + 1]; i++)
                take(S, B->mnodes[i]);
            solve(S, &c, &t);
            for (int i = B->moff[m + 1] - 1; i >= B->moff[m]; i--)
                give(S, B->mnodes[i]);
            c += B->moff[m + 1] - B->moff[m];
            t++;
            if (c > bc || (c == bc && t < bt)) {
                bc = c;
                bt = t;
                choice = m;
            }
            if ((bc == bound && bt <= fewest) || S->greedy)
                break;
        }
        if (bc < bound && !S->greedy) { /* leave v uncovered */
            take(S, v);
            solve(S, &c, &t);
            give(S, v);
            if (c > bc || (c == bc && t < bt)) {
                bc = c;
                bt = t;
                choice = -1;
            }
        }
    }
    memo_store(S, bc, bt, choice);
    *cov = bc;
    *tiles = bt;
}

/* Solve block B; sol gets the chosen local matches, *nsol their count.
 * 0, or -1 on OOM. */
static int solve_block(const block *B, int *sol, int *nsol, ft_pat_stats *stats)
{
    solver S;
    memset(&S, 0, sizeof S);
    S.B = B;
    S.words = (B->cn + 63) / 64;
    S.in = ft__malloc((size_t)B->cn);
    S.avail = ft__malloc(sizeof(int) * (size_t)B->cn);
    S.dead = ft__calloc((size_t)B->cm, sizeof(int));
    S.dropped = ft__malloc(sizeof(int) * (size_t)B->cn);
    S.R = ft__calloc((size_t)S.words, sizeof(uint64_t));
    int rc = -1;
    *nsol = 0;
    if (!S.in || !S.avail || !S.dead || !S.dropped || !S.R)
        goto out;
    for (int v = 0; v < B->cn; v++) {
        S.in[v] = 1;
        S.R[v >> 6] |= 1ULL << (v & 63);
        S.avail[v] = B->noff[v + 1] - B->noff[v];
    }
    S.rcount = B->cn;
    int cov, tiles;
    solve(&S, &cov, &tiles);
    /* replay the memoised choices from the full set */
    while (S.rcount > 0 && !S.oom) {
        const entry *e = memo_find(&S);
        if (!e)
            break; /* not reached: every state on the best path was stored */
        if (e->choice >= 0) {
            int m = e->choice;
            sol[(*nsol)++] = m;
            for (int i = B->moff[m]; i < B->moff[m + 1]; i++)
                take(&S, B->mnodes[i]);
        } else {
            int v = pick(&S);
            if (S.avail[v] == 0)
                drop_dead(&S);
            else
                take(&S, v);
        }
    }
    if (stats) {
        stats->states += S.states;
        stats->greedy += S.greedy;
    }
    rc = S.oom ? -1 : 0;
out:
    ft__free(S.in);
    ft__free(S.avail);
    ft__free(S.dead);
    ft__free(S.dropped);
    ft__free(S.R);
    ft__free(S.keys);
    ft__free(S.ent);
    ft__free(S.tab);
    return rc;
}

/* ------------------------------------------------------------ blocks */

/* A block's structure signature, reused when another block has it. */
typedef struct solved {
    uint64_t hash;
    int sig, nsig;       /* in the signature arena */
    int sol, nsol;       /* chosen local matches, in the solution arena */
} solved;

int ft__ivec_reserve(ft_ivec *a, int more)
{
    if (a->n + more <= a->cap)
        return 0;
    int cap = a->cap ? a->cap : 256;
    while (cap < a->n + more)
        cap *= 2;
    int *nv = ft__realloc(a->v, sizeof(int) * (size_t)cap);
    if (!nv)
        return -1;
    a->v = nv;
    a->cap = cap;
    return 0;
}

int ft__pattern_cover(int nnodes, int nmatches, const int *moff, const int *mnodes, const int *mpat,
                      unsigned char *chosen, ft_pat_stats *stats)
{
    int n = nnodes, rc = -1, nb = 0;
    memset(chosen, 0, (size_t)nmatches);
    int *par = ft__malloc(sizeof(int) * ((size_t)n + 1)), *blk = ft__malloc(sizeof(int) * ((size_t)n + 1));
    int *loc = ft__malloc(sizeof(int) * ((size_t)n + 1)), *cnt = ft__calloc((size_t)n + 2, sizeof(int));
    int *mblk = ft__malloc(sizeof(int) * ((size_t)nmatches + 1)), *mstart = ft__calloc((size_t)n + 2, sizeof(int));
    int *morder = ft__malloc(sizeof(int) * ((size_t)nmatches + 1));
    block B = {0};
    B.moff = ft__malloc(sizeof(int) * ((size_t)nmatches + 1));
    B.mnodes = ft__malloc(sizeof(int) * ((size_t)moff[nmatches] + 1));
    B.nm = ft__malloc(sizeof(int) * ((size_t)moff[nmatches] + 1));
    B.noff = ft__malloc(sizeof(int) * ((size_t)n + 2));
    int *sol = ft__malloc(sizeof(int) * ((size_t)nmatches + 1));
    ft_ivec sigs = {0}, sols = {0}, sig = {0};
    solved *done = NULL;
    int ndone = 0;
    if (!par || !blk || !loc || !cnt || !mblk || !mstart || !morder || !B.moff || !B.mnodes || !B.nm || !B.noff ||
        !sol || !(done = ft__malloc(sizeof *done * ((size_t)n + 1))))
        goto out;
    /* blocks: nodes linked by the matches they share */
    for (int v = 0; v < n; v++) {
        ft__uf_make(par, v);
        blk[v] = -1;
    }
    for (int k = 0; k < nmatches; k++)
        for (int i = moff[k] + 1; i < moff[k + 1]; i++)
            ft__uf_union(par, mnodes[moff[k]], mnodes[i]);
    for (int k = 0; k < nmatches; k++)
        for (int i = moff[k]; i < moff[k + 1]; i++)
            blk[mnodes[i]] = 0; /* in some match */
    for (int v = 0; v < n; v++)
        if (blk[v] == 0 || blk[v] > 0) {
            int r = ft__uf_find(par, v);
            if (r == v)
                blk[v] = ++nb; /* ids from 1 while numbering */
        }
    for (int v = 0; v < n; v++)
        if (blk[v] >= 0)
            blk[v] = blk[ft__uf_find(par, v)];
    for (int v = 0; v < n; v++)
        if (blk[v] > 0)
            loc[v] = cnt[--blk[v] + 1]++ ; /* blk now 0-based */
    /* matches of each block, in the global order */
    for (int k = 0; k < nmatches; k++) {
        mblk[k] = blk[mnodes[moff[k]]];
        mstart[mblk[k] + 1]++;
    }
    for (int b = 0; b < nb; b++)
        mstart[b + 1] += mstart[b];
    for (int k = 0; k < nmatches; k++)
        morder[mstart[mblk[k]]++] = k;
    for (int b = nb; b > 0; b--)
        mstart[b] = mstart[b - 1];
    mstart[0] = 0;
    if (stats)
        stats->blocks = nb;
    for (int b = 0; b < nb; b++) {
        /* the block in local numbering, and its signature */
        B.cn = cnt[b + 1];
        B.cm = mstart[b + 1] - mstart[b];
        B.moff[0] = 0;
        B.largest = 1;
        sig.n = 0;
        if (ft__ivec_reserve(&sig, 2 + 2 * B.cm + moff[nmatches]))
            goto out;
        sig.v[sig.n++] = B.cn;
        sig.v[sig.n++] = B.cm;
        memset(B.noff, 0, sizeof(int) * ((size_t)B.cn + 2));
        for (int j = 0; j < B.cm; j++) {
            int k = morder[mstart[b] + j], len = moff[k + 1] - moff[k];
            sig.v[sig.n++] = mpat[k];
            sig.v[sig.n++] = len;
            for (int i = 0; i < len; i++) {
                int v = loc[mnodes[moff[k] + i]];
                B.mnodes[B.moff[j] + i] = v;
                sig.v[sig.n++] = v;
                B.noff[v + 2]++;
            }
            B.moff[j + 1] = B.moff[j] + len;
            B.largest = len > B.largest ? len : B.largest;
        }
        for (int v = 0; v < B.cn; v++)
            B.noff[v + 2] += B.noff[v + 1];
        for (int j = 0; j < B.cm; j++)
            for (int i = B.moff[j]; i < B.moff[j + 1]; i++)
                B.nm[B.noff[B.mnodes[i] + 1]++] = j;
        uint64_t h = ft__hash_ints(sig.v, sig.n, 0);
        int found = -1, nsol = 0;
        for (int d = 0; d < ndone && found < 0; d++) /* linear: few distinct blocks */
            if (done[d].hash == h && done[d].nsig == sig.n &&
                memcmp(sigs.v + done[d].sig, sig.v, sizeof(int) * (size_t)sig.n) == 0)
                found = d;
        if (found >= 0) {
            nsol = done[found].nsol;
            memcpy(sol, sols.v + done[found].sol, sizeof(int) * (size_t)nsol);
        } else {
            if (solve_block(&B, sol, &nsol, stats) || ft__ivec_reserve(&sigs, sig.n) || ft__ivec_reserve(&sols, nsol))
                goto out;
            done[ndone++] = (solved){h, sigs.n, sig.n, sols.n, nsol};
            memcpy(sigs.v + sigs.n, sig.v, sizeof(int) * (size_t)sig.n);
            sigs.n += sig.n;
            memcpy(sols.v + sols.n, sol, sizeof(int) * (size_t)nsol);
            sols.n += nsol;
            if (stats)
                stats->solved++;
        }
        for (int i = 0; i < nsol; i++)
            chosen[morder[mstart[b] + sol[i]]] = 1;
    }
    rc = 0;
out:
    ft__free(par);
    ft__free(blk);
    ft__free(loc);
    ft__free(cnt);
    ft__free(mblk);
    ft__free(mstart);
    ft__free(morder);
    ft__free(B.moff);
    ft__free(B.mnodes);
    ft__free(B.nm);
    ft__free(B.noff);
    ft__free(sol);
    ft__free(done);
    ft__free(sigs.v);
    ft__free(sols.v);
    ft__free(sig.v);
    return rc;
}
