/* rates.c - the rates a step moves data at and the step-time rule (SPEC section 8): ft_step_time, the bandwidths with and without the shared cache, their share per unit, and what a subgraph pays besides its steps (launch, pipeline fill and drain); shared with the simulator through shared_rules.h. */
#include "cost/cost.h"

/* ft_step_time with the overlap mode `overlap` in place of p's and read
 * and write bandwidths rb and wb. */
static double step_time(const ft_problem *p, ft_overlap overlap, double rb, double wb, double compute, int64_t loaded, int64_t written,
                        double *memory)
{
    const ft_timing *tm = &p->timing;
    /* with double buffering the steps' latencies hide behind the prefetch
     * (ft__sg_fixed charges the pipeline's fill once per subgraph) */
    double L = overlap == FT_OVERLAP_PIPELINE ? 0 : tm->transfer_latency;
    double mem, lat;
    if (overlap == FT_OVERLAP_NONE || tm->duplex) {
        double rd = loaded > 0 ? L + (double)loaded / rb : 0, wr = written > 0 ? L + (double)written / wb : 0;
        if (overlap == FT_OVERLAP_NONE) {
            mem = rd + wr;
            lat = rd + compute + wr;
        } else {
            mem = rd > wr ? rd : wr;
            lat = compute > mem ? compute : mem;
        }
    } else {
        /* SPEC: (loaded + written) / bandwidth, kept as one division */
        mem = wb == rb ? (double)(loaded + written) / rb : (double)loaded / rb + (double)written / wb;
        if (L > 0 && loaded + written > 0)
            mem += L;
        lat = compute > mem ? compute : mem;
    }
    if (overlap == FT_OVERLAP_PIPELINE && loaded > 0 && tm->transfer_latency > 0) {
        /* two buffers: a step's loads go out when the compute of the step
         * two before it ends, so in a run of like steps two of them take at
         * least latency + load time + compute */
        double fill = 0.5 * (tm->transfer_latency + (double)loaded / rb + compute);
        if (fill > lat)
            lat = fill;
    }
    if (memory)
        *memory = mem;
    return lat;
}

/* p's write bandwidth (timing's, else the read bandwidth). */
static double write_bw(const ft_problem *p)
{
    return p->timing.write_bandwidth > 0 ? p->timing.write_bandwidth : p->bandwidth;
}

double ft_step_time(const ft_problem *p, double compute, int64_t loaded, int64_t written, double *memory)
{
    return step_time(p, p->timing.overlap, p->bandwidth, write_bw(p), compute, loaded, written, memory);
}

double ft__step_time_at(const ft_problem *p, const ft__rates *r, double compute, int64_t loaded, int64_t written, double *memory)
{
    return step_time(p, p->timing.overlap, r->rb, r->wb, compute, loaded, written, memory);
}

void ft__rates_init(const ft_problem *p, ft__rates *r)
{
    r->rb = p->bandwidth;
    r->wb = write_bw(p);
    r->cached = 0;
}

void ft__step_rates(const ft_problem *p, ft__rates *r)
{
    ft__rates_init(p, r);
    if (p->timing.cache_capacity > 0) {
        r->rb = r->wb = p->timing.cache_bandwidth;
        r->cached = 1;
    }
}

void ft__fastest_rates(const ft_problem *p, ft__rates *r)
{
    ft__rates_init(p, r);
    if (p->timing.cache_capacity > 0) {
        if (p->timing.cache_bandwidth > r->rb)
            r->rb = p->timing.cache_bandwidth;
        if (p->timing.cache_bandwidth > r->wb)
            r->wb = p->timing.cache_bandwidth;
    }
}

void ft__rates_share(const ft__rates *whole, int64_t u, ft__rates *r)
{
    *r = *whole;
    if (u > 1) {
        r->rb = whole->rb / (double)u;
        r->wb = whole->wb / (double)u;
    }
}

double ft__sg_extra(const ft_problem *p, const ft__rates *r, int64_t loaded0, int64_t written_last, double compute_last)
{
    const ft_timing *tm = &p->timing;
    double x = tm->launch_overhead;
    if (tm->overlap != FT_OVERLAP_PIPELINE)
        return x;
    double exposed = (double)loaded0 / r->rb + (double)written_last / r->wb;
    x += tm->transfer_latency + (written_last > 0 ? tm->transfer_latency : 0);
    return x + (exposed < compute_last ? exposed : compute_last);
}

double ft__sg_single(const ft_problem *p, const ft__rates *r, int64_t loaded, int64_t written, double compute)
{
    return p->timing.launch_overhead + step_time(p, FT_OVERLAP_NONE, r->rb, r->wb, compute, loaded, written, NULL);
}

/* Contract: fusetile.h. */
void ft_roofline_peaks(const ft_problem *p, double *compute, double *data)
{
    ft__rates r;
    ft__fastest_rates(p, &r);
    if (compute)
        *compute = (double)ft__units(p);
    if (data)
        *data = p->timing.duplex ? r.rb + r.wb : r.rb > r.wb ? r.rb : r.wb;
}
