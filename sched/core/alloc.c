/* alloc.c - the library's allocation hook (ft_set_allocator): every heap allocation of sched/ and of jansson goes through ft__malloc, ft__calloc, ft__realloc and ft__free. */
#include "core/core.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *sys_malloc(size_t n, void *ud)
{
    (void)ud;
    return malloc(n);
}

static void *sys_realloc(void *ptr, size_t n, void *ud)
{
    (void)ud;
    return realloc(ptr, n);
}

static void sys_free(void *ptr, void *ud)
{
    (void)ud;
    free(ptr);
}

static const ft_allocator sys_allocator = {sys_malloc, sys_realloc, sys_free, NULL};

/* The allocator in use (a copy of the caller's); ft_set_allocator's
 * contract forbids changing it while another thread is inside fusetile. */
static ft_allocator cur = {sys_malloc, sys_realloc, sys_free, NULL};

/* Allocations this thread has seen fail (ft__alloc_failures). */
static _Thread_local unsigned long failures;

unsigned long ft__alloc_failures(void)
{
    return failures;
}

/* ptr, counting a NULL as a failure. */
static void *counted(void *ptr)
{
    if (!ptr)
        failures++;
    return ptr;
}

/* jansson's allocation functions while a hook is installed: they take no
 * user data, so they call through the current allocator. */
static void *json_hook_malloc(size_t n) { return ft__malloc(n); }
static void json_hook_free(void *ptr) { ft__free(ptr); }

int ft_set_allocator(const ft_allocator *a)
{
    if (a && (!a->malloc_fn || !a->realloc_fn || !a->free_fn))
        return FT_EINPUT;
    cur = a ? *a : sys_allocator;
    if (a)
        json_set_alloc_funcs(json_hook_malloc, json_hook_free);
    else
        json_set_alloc_funcs(malloc, free);
    return FT_OK;
}

void ft_free(void *ptr)
{
    ft__free(ptr);
}

void *ft__malloc(size_t n)
{
    return counted(cur.malloc_fn(n ? n : 1, cur.ud));
}

void *ft__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return counted(NULL);
    size_t bytes = n * size;
    void *ptr = counted(cur.malloc_fn(bytes ? bytes : 1, cur.ud));
    if (ptr)
        memset(ptr, 0, bytes);
    return ptr;
}

void *ft__realloc(void *ptr, size_t n)
{
    if (!ptr)
        return ft__malloc(n);
    return counted(cur.realloc_fn(ptr, n ? n : 1, cur.ud));
}

void ft__free(void *ptr)
{
    if (ptr)
        cur.free_fn(ptr, cur.ud);
}

char *ft__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = ft__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
