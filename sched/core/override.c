/* override.c - replace a problem's machine parameters (capacity, bandwidth, native granularity, units), checked. */
#include "core/core.h"

#include <math.h>

/* A number override: 0 keeps, else it must be positive and finite. */
static int check_real(const char *name, double v, ft_status *st)
{
    if (v == 0 || (isfinite(v) && v > 0))
        return FT_OK;
    char b[FT_NUMBUF];
    return ft__fail(st, FT_EINPUT, 0, "%s is %s, must be a positive number", name, ft_format_double(b, v));
}

static int check_native(const char *name, int64_t v, ft_status *st)
{
    if (v >= 0 && v <= FT_OVERRIDE_MAX_NATIVE)
        return FT_OK;
    return ft__fail(st, FT_EINPUT, 0, "%s is %lld, must be an integer from 1 to %lld", name, (long long)v,
                    (long long)FT_OVERRIDE_MAX_NATIVE);
}

int ft_problem_override(ft_problem *p, const ft_override *o, ft_status *st)
{
    ft_status_clear(st);
    int rc;
    if ((rc = check_real("capacity", o->capacity, st)) || (rc = check_real("bandwidth", o->bandwidth, st)) ||
        (rc = check_native("native width", o->native_w, st)) || (rc = check_native("native height", o->native_h, st)) ||
        (rc = check_native("native k", o->native_k, st)))
        return rc;
    if (o->units < 0 || o->units > FT_MAX_UNITS)
        return ft__fail(st, FT_EINPUT, 0, "units is %d, must be an integer from 1 to %d", o->units, FT_MAX_UNITS);
    if (o->capacity > 0)
        p->capacity = o->capacity;
    if (o->bandwidth > 0) {
        if (p->timing.write_bandwidth > 0)
            p->timing.write_bandwidth *= o->bandwidth / p->bandwidth;
        p->bandwidth = o->bandwidth;
    }
    if (o->native_w > 0)
        p->native_w = o->native_w;
    if (o->native_h > 0)
        p->native_h = o->native_h;
    if (o->native_k > 0)
        p->native_k = o->native_k;
    if (o->units > 0)
        p->timing.units = o->units;
    return ft_problem_finish(p, st);
}
