/* trace_int.h - internals shared by the trace writer's files (trace.c: the API and the window; trace_file.c: output files; trace_json.c: Chrome JSON; trace_vcd.c: VCD and the GTKWave save file); not installed. */
#ifndef FT_TRACE_INT_H
#define FT_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fusetile/io.h"
#include "fusetile/trace.h"

/* ------------------------------------------------------------ output files (trace_file.c) */

/* An output file of the trace (fusetile/io.h's rules: a temporary file
 * renamed into place at the end, or a character device in place). */
typedef struct tfile {
    ft_out o;  /* o.path: the path as named; o.f: where to write */
    char *buf;  /* stdio buffer, freed after the close */
    int err;    /* errno of the first failed write, 0 if none */
    int64_t bytes; /* written so far */
} tfile;

/* printf into err (errlen bytes; nothing when err is NULL). */
void ft__trace_put_err(char *err, size_t errlen, const char *fmt, ...);
/* malloc'd copy of s, or NULL. */
char *ft__trace_strdup(const char *s);
/* Open an output at path (ft_out_open).  FT_OK, FT_EINPUT (message names
 * path: refused, or the OS error) or FT_ENOMEM. */
int ft__tfile_open(tfile *tf, const char *path, char *err, size_t errlen);
void ft__tfile_write(tfile *tf, const char *s, size_t n);
void ft__tfile_puts(tfile *tf, const char *s);
void ft__tfile_printf(tfile *tf, const char *fmt, ...);
/* Flush, fsync and close (ft_out_close; the temporary stays).  FT_OK or
 * FT_EINPUT. */
int ft__tfile_close(tfile *tf, char *err, size_t errlen);
/* Remove the temporary (closing it first if open) and free everything. */
void ft__tfile_discard(tfile *tf);
/* Rename the closed temporary into place (ft_out_commit).  FT_OK or
 * FT_EINPUT. */
int ft__tfile_commit(tfile *tf, char *err, size_t errlen);
/* Shortest decimal text (up to 17 digits) that reads back as exactly x;
 * x finite.  buf: 40 bytes. */
const char *ft__trace_num(char *buf, size_t len, double x);

/* ------------------------------------------------------------ Chrome JSON state */

typedef struct lane {
    int fam;    /* FAM_* of trace_json.c */
    int unit;   /* compute unit (compute lanes), else 0 */
    int number; /* 1 for the first lane of its family (and unit) */
    int tid;
    double end; /* latest end of a span on it */
} lane;

typedef struct chrome {
    tfile out;
    int nevents; /* events written (for the separators) */
    lane *lanes;
    int nlanes, lanecap, next_tid;
    int split_writes;          /* writes go to "write channel" lanes */
    /* the tensors the current step loads and writes, for its step span */
    int acc_sg;
    int64_t acc_step;
    int *acc_load, *acc_write;
    int nacc_load, nacc_write, acc_cap;
} chrome;

/* ------------------------------------------------------------ VCD state */

/* One pending value change; key = arrival sequence << VCD_SIG_BITS | signal. */
typedef struct vchange {
    int64_t t; /* ticks */
    uint64_t key;
    int64_t v; /* busy signals: +1/-1; others: the new value */
} vchange;

#define VCD_SIG_BITS 12 /* signals per VCD at most 2^12: FT_TRACE_MAX_UNITS + 5 fit */

typedef struct vsig {
    const char *scope; /* scope under "fusetile" */
    char ref[24];      /* variable name */
    char id[4];        /* identifier code */
    int width;         /* 1: wire; else an integer of this many bits */
    int busy;          /* 1: the value is (count > 0) of +1/-1 changes */
    int real;          /* 1: a VCD real, the value holding a double's bits (the power) */
} vsig;

typedef struct vcd {
    tfile out;
    int power;                 /* a power signal (power.watts, last) */
    int hold;                  /* the power's changes are still to come: nothing is final */
    int nsig;
    vsig *sig;
    int64_t *cur, *outv;       /* per signal: value in the open group, value last written */
    unsigned char *dirty;      /* per signal: changed in the open group */
    int *dirty_list;
    int ndirty;
    double ticks_per_unit;     /* ticks per cost unit */
    const char *timescale;     /* "1 fs", "1 ps", ... */
    vchange *pend;
    size_t npend;
    uint64_t seq;
    int nwm;                   /* units bounding the watermark: step, load, write, occupancy, compute units */
    int64_t *unit_last;        /* latest start (ticks) per unit, -1 before the first */
    /* spilled runs */
    FILE *spill;
    char *spill_path;
    int64_t *run_off;
    size_t *run_len;
    size_t nruns, runcap;
    int64_t spill_end;
    /* writer state */
    int header;                /* the header is written */
    int dumped;                /* $dumpvars written */
    int64_t origin;            /* time of $dumpvars */
    int64_t last_time;         /* last timestamp written */
    int64_t end_ticks;         /* the final timestamp (ft__vcd_end) */
    int group_open;
    int64_t group_t;
} vcd;

/* Watermark units of the VCD. */
enum { WM_STEP, WM_LOAD, WM_WRITE, WM_OCC, WM_UNIT0 };

/* ------------------------------------------------------------ the default detail (trace.c) */

/* A tile's spans of one track merged (FT_TRACE_DETAIL_WAVES): from the
 * first span's start to the last one's end. */
typedef struct merged {
    int open;
    ft_trace_event ev;   /* kind, sg, tile (the first), unit; start and end of the merge; elems summed */
    int64_t last_tile;   /* the highest tile merged */
    int64_t first_g;     /* replay step of the first span */
    int64_t count;       /* spans merged */
    double busy;         /* their durations summed */
} merged;

/* One sampling period of the counters: FT_TRACE_COUNTER_SAMPLES at most
 * per track. */
typedef struct period {
    int64_t index;       /* replay step / period length; -1 before the first */
    int has_occ;         /* an occupancy change arrived in it */
    double occ_time;     /* the first change's time */
    int64_t occ_max;     /* the fullest */
    int has_span;        /* a load or write arrived in it */
    double t0, t1;       /* earliest start, latest end of its loads and writes */
    double busy[2];      /* loads', writes' durations summed */
} period;

/* ------------------------------------------------------------ the handle */

struct ft_trace {
    int has_json, has_vcd, has_gtkw;
    chrome c;
    vcd v;
    tfile gtkw;
    tfile xlate;               /* the translate filter file beside the save file */
    int has_xlate;
    char *target;
    double capacity;
    double clock_hz;           /* 0: cost units */
    double us_per_unit;        /* Chrome trace microseconds per cost unit */
    int units, duplex;
    int have_occ;
    int64_t last_occ;          /* last occupancy written */
    int failed;                /* a sticky error; msg holds it */
    char msg[512];
    int started;               /* a span or occupancy arrived (names are fixed) */
    /* ft_trace_set_names: labels (NULL: no op names), tensor names
     * (entries NULL when unnamed), per subgraph the name after its ops,
     * the schedule's label and the op list (ops[op_off[i] .. op_off[i+1])) */
    char **labels;
    int nlabels;
    char **tensor_names;
    int ntensor_names;
    int nsg;
    char **sg_names, **sg_sched;
    int *ops, *op_off;
    /* replay steps: spans come subgraph by subgraph; a subgraph's steps
     * are numbered from sg_base */
    int cur_sg;
    int64_t sg_base, cur_steps;
    /* the window */
    int windowed;
    int64_t win_first, win_count;
    int win_open;              /* something in the window was written */
    int last_in;               /* the latest span was in the window */
    int win_sg;                /* subgraph of the latest span written */
    double win_t0, win_t1;     /* first and last time written (cost units) */
    int pend_occ;              /* an occupancy change waits for its step's first span */
    double pend_time;
    int64_t pend_elems;
    /* the default detail: spans merged per tile (slots: step, load,
     * write, compute unit 0 ..), counters sampled per period */
    int waves;                 /* FT_TRACE_DETAIL_WAVES and no window */
    merged *slot;
    int nslot;
    period per;
    int64_t per_len;           /* steps per period */
    int64_t span_len;          /* steps a merged span covers at least (whole tiles) */
    int64_t expect_steps;      /* ft_trace_expect_steps, 0: unknown */
    int64_t warn_bytes;        /* < 0: never */
    int warned;
    int64_t warn_next;         /* replay step of the next size check */
    int busy_shown;            /* a channel busy sample was written; the latest end it covers */
    double busy_end;
    int raw_occ_seen;          /* the latest occupancy reported (written at close) */
    double raw_occ_time;
    int64_t raw_occ;
    /* the power track (ft_trace_config.power): the levels ft_trace_power
     * recorded, written at close */
    int power;
    double *pw;                /* start, end, watts per level */
    size_t npw, pwcap;
};

/* Record the first error (t->msg); later ones are dropped. */
void ft__trace_fail(ft_trace *t, const char *fmt, ...);
/* Path named in messages about the event stream. */
const char *ft__trace_name(const ft_trace *t);
/* "step", "load", "write", "compute", "subgraph". */
const char *ft__trace_kind_word(ft_trace_kind k);
/* The label of subgraph sg (op names), the tensor's name, or NULL. */
const char *ft__trace_sg_label(const ft_trace *t, int sg);
const char *ft__trace_tensor_name(const ft_trace *t, int x);

/* trace_json.c: the Chrome trace.  begin: header and the standing lanes;
 * span: one X event (g: its replay step, for step spans); subgraph: the
 * span of subgraph e->sg (clipped: cut to the window); counter: an
 * occupancy change; end: metadata and brackets (end_time in cost units). */
void ft__json_begin(ft_trace *t);
void ft__json_span(ft_trace *t, const ft_trace_event *e, int64_t g);
void ft__json_subgraph(ft_trace *t, const ft_trace_event *e, int clipped, int64_t first_step, int64_t steps);
void ft__json_counter(ft_trace *t, double time, int64_t elems);
/* The power counter: `watts` from `time` on. */
void ft__json_power(ft_trace *t, double time, double watts);
/* The default detail: a tile's merged spans (step: on the controller,
 * compute: on its unit) and a period's channel busy fractions. */
void ft__json_merged(ft_trace *t, const merged *m);
void ft__json_busy(ft_trace *t, double time, double load, double write);
void ft__json_end(ft_trace *t, double end_time);
void ft__json_free(chrome *c);

/* trace_vcd.c: the VCD.  init: signals, buffers, timescale (FT_OK or
 * FT_ENOMEM); order: check that a span or occupancy change (kind -1) of
 * its unit does not go back in time and advance the watermark (0, or -1
 * with t->failed set); span, occupancy, position (subgraph and step
 * signals): queue changes; end: write everything (end_time in cost
 * units); gtkw: write the save file; free: release. */
int ft__vcd_init(ft_trace *t);
int ft__vcd_order(ft_trace *t, int kind, int unit, double start, const ft_trace_event *e);
/* Every unit has reached `time` (cost units): the watermark may pass it
 * though a unit has been silent (ft_trace_sync). */
void ft__vcd_sync(ft_trace *t, double time);
void ft__vcd_span(ft_trace *t, const ft_trace_event *e, int64_t g);
void ft__vcd_occupancy(ft_trace *t, double time, int64_t elems);
void ft__vcd_position(ft_trace *t, double time, int sg, int64_t g);
/* The power signal is `watts` from `time` on (cost units; called at close,
 * in time order). */
void ft__vcd_power(ft_trace *t, double time, double watts);
void ft__vcd_end(ft_trace *t, double end_time);
void ft__vcd_gtkw(ft_trace *t);
/* The translate filter file: "INDEX LABEL" per subgraph. */
void ft__vcd_translate(ft_trace *t);
void ft__vcd_free(vcd *v);
/* Cost units to ticks; -1 if negative, not finite or too large. */
int64_t ft__vcd_ticks(const vcd *v, double units);

#endif /* FT_TRACE_INT_H */
