/* sim.cc - the C API of the simulator (sim.h): opaque handles, int codes, messages on the handle; no exception crosses it. */
#include "fusetile/sim.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "clock.h"
#include "model.h"
#include "fusetile/trace.h"

/* The handle: the model is the process's (ftsim::model()); a handle keeps
 * only its last message. */
struct ft_sim {
    std::string msg;
};

namespace {

/* Target name shown in traces when the options give none: the contest's
 * abstract machine. */
const char CONTEST_NAME[] = "contest";

/* Set while a replay runs: the kernel cannot run two at once. */
bool running = false;

/* Owns an open trace: aborted (its files removed) unless closed. */
struct TraceGuard {
    ft_trace *t = nullptr;
    ~TraceGuard() { ft_trace_abort(t); }
};

void result_reset(ft_sim_result *r)
{
    std::memset(r, 0, sizeof *r);
    r->reason = FT_R_NONE;
    r->fail_sg = -1;
    r->fail_tile = -1;
    r->fail_step = -1;
    r->analytic_reason = FT_R_NONE;
    r->total_analytic = NAN;
}

/* The options' progress callback seen from the analytic evaluation: its
 * steps come after the replay's. */
struct AnalyticProgress {
    const ft_sim_opts *o;
    std::int64_t offset;
};

int analytic_progress(void *ctx, std::int64_t done, std::int64_t total)
{
    const AnalyticProgress *a = static_cast<const AnalyticProgress *>(ctx);
    return a->o->progress(a->o->progress_ctx, a->offset + done, a->offset + total);
}

/* Run ft_evaluate for the analytic column of *r (reporting progress
 * through o's callback after the replay's `replayed` steps).  Returns FT_OK,
 * FT_EINPUT when the callback stopped it (message in *msg), or FT_ENOMEM
 * (an invalid schedule is recorded in analytic_reason). */
int fill_analytic(const ft_problem *p, const ft_schedule *s, const ft_sim_opts *o, std::int64_t replayed, ft_sim_result *r,
                  std::string *msg)
{
    ft_eval e;
    ft_status st;
    AnalyticProgress ap = {o, replayed};
    int rc = ft_evaluate_progress(p, s, o->model, o->progress ? analytic_progress : NULL, &ap, &e, &st);
    if (rc == FT_ENOMEM)
        return FT_ENOMEM;
    if (rc == FT_EINPUT) {
        *msg = st.msg;
        return FT_EINPUT;
    }
    if (rc != FT_OK) {
        r->analytic_reason = st.reason ? st.reason : FT_R_NONE;
        return FT_OK;
    }
    for (int i = 0; i < r->nsubgraphs && i < e.nsubgraphs; i++) {
        r->sg[i].analytic = e.sg[i].latency;
        r->sg[i].energy_analytic = e.sg[i].energy;
    }
    r->total_analytic = e.total;
    r->energy_analytic = e.energy;
    ft_eval_free(&e);
    return FT_OK;
}

}  // namespace

extern "C" {

void ft_sim_opts_init(ft_sim_opts *o)
{
    o->model = FT_COMPUTE_NATIVE;
    o->trace_json = NULL;
    o->trace_vcd = NULL;
    o->analytic = 1;
    o->trace_gtkw = NULL;
    o->target = NULL;
    o->clock_hz = 0;
    o->window_first = 0;
    o->window_count = 0;
    o->trace_detail = FT_TRACE_DETAIL_WAVES;
    o->trace_warn_bytes = 0;
    o->progress = NULL;
    o->progress_ctx = NULL;
}

int ft_sim_new(ft_sim **out, const char **err)
{
    static char errbuf[512];
    *out = NULL;
    try {
        ftsim::model();
        *out = new ft_sim();
        if (err)
            *err = "";
        return FT_OK;
    } catch (const std::bad_alloc &) {
        if (err)
            *err = "out of memory";
        return FT_ENOMEM;
    } catch (const std::exception &e) {
        std::snprintf(errbuf, sizeof errbuf, "cannot build the simulator: %s", e.what());
    } catch (...) {
        std::snprintf(errbuf, sizeof errbuf, "cannot build the simulator: unknown exception");
    }
    if (err)
        *err = errbuf;
    return FT_EINPUT;
}

int ft_sim_run(ft_sim *sim, const ft_problem *p, const ft_schedule *s, const ft_sim_opts *o, ft_sim_result *r)
{
    if (!sim || !r)
        return FT_EINPUT;
    result_reset(r);
    if (!p || !s) {
        sim->msg = "ft_sim_run: no problem or no schedule";
        return FT_EINPUT;
    }
    if (running) {
        sim->msg = "ft_sim_run: another replay is running in this process";
        return FT_EINPUT;
    }
    ft_sim_opts defaults;
    ft_sim_opts_init(&defaults);
    if (!o)
        o = &defaults;
    try {
        sim->msg.clear();
        TraceGuard trace;
        char err[512] = "";
        if (o->trace_json || o->trace_vcd) {
            ft_trace_config tc;
            ft_trace_config_init(&tc);
            tc.json_path = o->trace_json;
            tc.vcd_path = o->trace_vcd;
            tc.gtkw_path = o->trace_gtkw;
            tc.target = o->target ? o->target : CONTEST_NAME;
            tc.capacity = p->capacity;
            tc.clock_hz = o->clock_hz;
            tc.duplex = p->timing.duplex != 0;
            tc.units = p->timing.units > 1 ? p->timing.units : 1; /* a VCD signal and a thread per compute unit */
            tc.window_first = o->window_first;
            tc.window_count = o->window_count;
            tc.detail = o->trace_detail;
            tc.warn_bytes = o->trace_warn_bytes;
            tc.power = p->energy.on; /* a power track from the energy account */
            int rc = ft_trace_open_config(&trace.t, &tc, err, sizeof err);
            if (rc != FT_OK) {
                trace.t = NULL;
                sim->msg = err[0] ? err : "cannot open the trace files";
                return rc == FT_ENOMEM ? FT_ENOMEM : FT_EINPUT;
            }
            if (ft_trace_set_names(trace.t, p, s) == FT_ENOMEM)
                throw std::bad_alloc();
        }

        ftsim::Job job;
        job.p = p;
        job.s = s;
        job.model = o->model;
        job.trace = trace.t;
        job.progress = o->progress;
        job.progress_ctx = o->progress_ctx;
        job.progress_parts = o->analytic ? 2 : 1;
        /* each replay has the whole clock: SystemC time only grows, so
         * the replays before this one would otherwise leave it less of
         * the 2^64 fs (clock.h) */
        ftsim::rewind_clock();
        running = true;
        try {
            ftsim::run_job(job);
        } catch (...) {
            running = false;
            throw;
        }
        running = false;
        if (job.error) {
            sim->msg = job.message;
            return job.error_code;
        }

        r->nsubgraphs = s->nsubgraphs;
        r->sg = static_cast<ft_sim_sg *>(std::calloc((size_t)s->nsubgraphs + 1, sizeof *r->sg));
        if (!r->sg)
            throw std::bad_alloc();
        ftsim::fs_t sg_start = 0; /* the subgraphs run back to back from the replay's start */
        ksum energy = {0, 0}; /* summed as ft_evaluate sums its subgraphs' joules */
        /* under a power limit: the subgraphs' times at the clock that fits,
         * summed as ft_evaluate sums its subgraphs' latencies */
        int stretched = 0;
        ksum limited = {0, 0};
        for (int i = 0; i < s->nsubgraphs; i++) {
            ft_sim_sg *g = &r->sg[i];
            g->analytic = NAN;
            if ((size_t)i >= job.sg.size())
                continue;
            const ftsim::SgResult &q = job.sg[(size_t)i];
            g->simulated = ftsim::to_units(q.simulated);
            const ftsim::fs_t sg_end = sg_start + q.simulated;
            g->steps = q.steps;
            g->peak_occupancy = q.peak;
            g->channel_busy = q.simulated ? (double)q.channel_busy / (double)q.simulated : 0.0;
            g->compute_busy = q.simulated ? (double)q.compute_busy / (double)q.simulated : 0.0;
            g->energy_analytic = NAN;
            if (!p->energy.on)
                continue;
            /* the energy account: the ops' work (their MACs and elements),
             * the replay's own traffic, footprint and latency */
            ft__energy_counts c;
            if (ft__sg_energy_counts(p, s, i, &c))
                throw std::bad_alloc();
            g->loaded = q.loaded;
            g->written = q.written;
            c.loaded = (double)q.loaded;
            c.written = (double)q.written;
            c.fp_read = (double)q.fp_reads;
            c.fp_write = (double)q.fp_writes;
            c.latency = g->simulated;
            /* under a power limit the replay's time at the clock that fits
             * (the rule ft_evaluate applies, from the replay's own counts) */
            c.latency = ft__power_latency(p, &c);
            stretched |= c.latency != g->simulated;
            g->simulated = c.latency;
            ksum_add(&limited, g->simulated);
            g->energy = ft__energy(p, &c);
            ksum_add(&energy, g->energy);
            /* the power track: the subgraph's average power over its span
             * (the replay's, at the full clock: under a power limit the
             * level is the average at the lowered clock, so the track's
             * integral falls short of the joules by the stretch) */
            ft_trace_power(trace.t, ftsim::to_units(sg_start), ftsim::to_units(sg_end), ft_energy_watts(p, g->energy, g->simulated));
            sg_start = sg_end;
        }
        r->energy_simulated = ksum_value(&energy);
        r->energy_analytic = NAN;
        r->steps = job.steps;
        const double replayed_total = ftsim::to_units(job.end - job.start);
        r->total_simulated = stretched && job.sg.size() == (size_t)s->nsubgraphs ? ksum_value(&limited) : replayed_total;
        if (o->analytic) {
            std::string amsg;
            int arc = fill_analytic(p, s, o, job.steps, r, &amsg);
            if (arc == FT_ENOMEM)
                throw std::bad_alloc();
            if (arc != FT_OK) {
                sim->msg = amsg;
                return arc;
            }
        }

        if (job.invalid) {
            r->reason = job.failure.reason;
            r->fail_sg = job.failure.sg;
            r->fail_tile = job.failure.tile;
            r->fail_step = job.failure.step;
            r->fail_time = ftsim::to_units(job.failure.time);
            sim->msg = job.failure.what();
            return FT_EINVALID;
        }
        if (trace.t && o->window_count > 0 && o->window_first >= job.steps) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "trace window: step %lld is past the replay's last step (%lld steps: 0 to %lld)",
                          (long long)o->window_first, (long long)job.steps, (long long)job.steps - 1);
            sim->msg = buf;
            return FT_EINPUT;
        }
        ft_trace *t = trace.t;
        trace.t = NULL;
        /* the trace shows the replay at the full clock */
        if (t && ft_trace_close(t, replayed_total, err, sizeof err) != FT_OK) {
            sim->msg = err[0] ? err : "cannot write the trace files";
            return FT_EINPUT;
        }
        return FT_OK;
    } catch (const std::bad_alloc &) {
        sim->msg = "out of memory";
        return FT_ENOMEM;
    } catch (const std::exception &e) {
        sim->msg = e.what();
    } catch (...) {
        sim->msg = "unknown exception in the simulator";
    }
    return FT_EINPUT;
}

const char *ft_sim_errmsg(const ft_sim *sim)
{
    return sim ? sim->msg.c_str() : "no simulator handle";
}

void ft_sim_result_free(ft_sim_result *r)
{
    if (!r)
        return;
    std::free(r->sg);
    r->sg = NULL;
    r->nsubgraphs = 0;
}

void ft_sim_free(ft_sim *sim)
{
    delete sim;
}

}  // extern "C"
