/* trace.c - the simulator's trace sinks: Chrome trace JSON (Perfetto) and VCD (GTKWave), streamed in simulated time.
 *
 * Both files are written to PATH.tmp.PID as events arrive and renamed into
 * place by ft_trace_close; traces/README.md documents the formats.
 *
 * Chrome trace.  Every event is written when it arrives (the JSON array has
 * no order requirement).  Spans go to "lanes": a lane is one tid whose X
 * events never overlap.  Each kind has a home lane (steps: controller,
 * loads: slow-memory channel, compute: compute engine).  Writes share the
 * slow-memory channel until the first time a transfer overlaps another
 * there (a target with separate read and write channels); from then on
 * writes go to a "write channel" lane.  A span that fits no existing lane
 * of its family opens an overflow lane ("compute engine #2", ...), so the
 * per-thread non-overlap holds whatever the simulator does.  Fit is
 * first-fit on the lane's latest end time.
 *
 * VCD.  A span contributes +1 at its start and -1 at its end to its unit's
 * busy count; occupancy contributes its new value.  The simulator promises
 * non-decreasing start times per unit (loads, writes, compute, occupancy),
 * but not across units, and an end lies in the future of its arrival, so
 * changes are kept in a pending buffer.  The watermark W is the smallest
 * latest start over the four units (nothing is final before each unit has
 * reported once): no future change can be earlier than W, so when the
 * buffer fills, every pending change before W is sorted and written out.  If the buffer is still more than half full after
 * that (a unit that stays silent holds W back), its contents are sorted and
 * spilled as a run to an unlinked scratch file next to the VCD, and the
 * rest of the trace is merged from the runs at close (an external merge
 * sort).  Memory stays bounded either way.  Changes at one timestamp are
 * netted: a signal is written only if its value at the end of the
 * timestamp differs from the last value written.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Pending VCD changes held in memory before a flush or a spill (entries of
 * 24 bytes).  A variable so that the unit test can shrink it. */
#ifndef FT_TRACE_VCD_BUFFER
#define FT_TRACE_VCD_BUFFER (1u << 18)
#endif
static size_t vcd_buffer_cap = FT_TRACE_VCD_BUFFER;

#define STDIO_BUFFER (1u << 20) /* stdio buffer of each output file */
#define FS_PER_UNIT 1e9         /* VCD: one cost unit = 1e9 fs (1 us) */
#define MERGE_MEMORY (1u << 20) /* entries read ahead by all runs together at close */

/* ------------------------------------------------------------ output files */

/* A file written to tmp and renamed to path at the end. */
typedef struct tfile {
    char *path; /* final path (copy) */
    char *tmp;  /* path.tmp.PID */
    FILE *f;
    char *buf;  /* stdio buffer, freed after fclose */
    int err;    /* errno of the first failed write, 0 if none */
} tfile;

static void put_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Create path.tmp.PID for writing.  FT_OK, FT_EINPUT (message names path
 * and the OS error) or FT_ENOMEM. */
static int tfile_open(tfile *tf, const char *path, char *err, size_t errlen)
{
    struct stat sb;
    size_t n = strlen(path) + 32;

    memset(tf, 0, sizeof *tf);
    if (path[0] == '\0') {
        put_err(err, errlen, "trace: empty output path");
        return FT_EINPUT;
    }
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        put_err(err, errlen, "%s: cannot write: %s", path, strerror(EISDIR));
        return FT_EINPUT;
    }
    tf->path = dupstr(path);
    tf->tmp = malloc(n);
    tf->buf = malloc(STDIO_BUFFER);
    if (!tf->path || !tf->tmp || !tf->buf) {
        put_err(err, errlen, "%s: out of memory", path);
        return FT_ENOMEM;
    }
    snprintf(tf->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    tf->f = fopen(tf->tmp, "wb");
    if (!tf->f) {
        int e = errno;
        put_err(err, errlen, "%s: cannot write: %s (creating %s)", path, strerror(e), tf->tmp);
        return FT_EINPUT;
    }
    setvbuf(tf->f, tf->buf, _IOFBF, STDIO_BUFFER);
    return FT_OK;
}

static void tfile_write(tfile *tf, const char *s, size_t n)
{
    if (n && fwrite(s, 1, n, tf->f) != n && !tf->err)
        tf->err = errno ? errno : EIO;
}

static void tfile_puts(tfile *tf, const char *s)
{
    tfile_write(tf, s, strlen(s));
}

static void tfile_printf(tfile *tf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(tf->f, fmt, ap) < 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    va_end(ap);
}

/* Flush and close (the temporary stays).  FT_OK or FT_EINPUT. */
static int tfile_close(tfile *tf, char *err, size_t errlen)
{
    int rc = FT_OK;
    if (!tf->f)
        return FT_OK;
    if (fflush(tf->f) != 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    if (fclose(tf->f) != 0 && !tf->err)
        tf->err = errno ? errno : EIO;
    tf->f = NULL;
    if (tf->err) {
        put_err(err, errlen, "%s: write failed: %s", tf->path, strerror(tf->err));
        rc = FT_EINPUT;
    }
    return rc;
}

/* Remove the temporary (closing it first if open) and free everything. */
static void tfile_discard(tfile *tf)
{
    if (tf->f)
        fclose(tf->f);
    tf->f = NULL;
    if (tf->tmp)
        remove(tf->tmp);
    free(tf->path);
    free(tf->tmp);
    free(tf->buf);
    memset(tf, 0, sizeof *tf);
}

/* Rename the closed temporary into place.  FT_OK or FT_EINPUT. */
static int tfile_commit(tfile *tf, char *err, size_t errlen)
{
    if (rename(tf->tmp, tf->path) != 0) {
        int e = errno;
        put_err(err, errlen, "%s: cannot rename %s into place: %s", tf->path, tf->tmp, strerror(e));
        return FT_EINPUT;
    }
    free(tf->tmp);
    tf->tmp = NULL; /* nothing left to remove */
    return FT_OK;
}

/* ------------------------------------------------------------ formatting */

/* Shortest decimal text (up to 17 digits) that reads back as exactly x;
 * x finite.  Integers below 2^53 print without exponent.  buf: 40 bytes. */
static const char *fmt_num(char *buf, size_t len, double x)
{
    if (x == 0)
        return "0";
    if (fabs(x) < 9007199254740992.0 && x == (double)(int64_t)x) {
        snprintf(buf, len, "%" PRId64, (int64_t)x);
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    for (char *p = buf; *p; p++) /* a locale with a decimal comma */
        if (*p == ',')
            *p = '.';
    return buf;
}

/* Write s as a JSON string (quotes included): ", \ and control characters
 * escaped, invalid UTF-8 replaced by U+FFFD so the file stays valid JSON. */
static void emit_string(tfile *tf, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    char esc[8];

    tfile_write(tf, "\"", 1);
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        tfile_write(tf, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            tfile_write(tf, esc, 2);
            p++;
        } else if (c < 0x20) {
            const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b"
                                : c == '\f' ? "\\f" : NULL;
            if (named)
                tfile_puts(tf, named);
            else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                tfile_puts(tf, esc);
            }
            p++;
        } else {
            /* a UTF-8 sequence: copy it if well-formed, else U+FFFD */
            int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
            int ok = n > 0;
            uint32_t cp = n == 4 ? c & 7u : n == 3 ? c & 15u : c & 31u;
            for (int i = 1; ok && i < n; i++) {
                if ((p[i] & 0xC0) != 0x80)
                    ok = 0;
                else
                    cp = (cp << 6) | (p[i] & 0x3Fu);
            }
            if (ok && ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                       (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
                ok = 0;
            if (ok) {
                tfile_write(tf, (const char *)p, (size_t)n);
                p += n;
            } else {
                tfile_puts(tf, "\\ufffd");
                p++;
            }
        }
    }
    tfile_write(tf, "\"", 1);
}

/* ------------------------------------------------------------ the handle */

/* Lane families of the Chrome trace, in display order. */
enum { FAM_CTRL, FAM_CHAN, FAM_WCHAN, FAM_COMP, FAM_COUNT };
static const char *const fam_name[FAM_COUNT] = {"controller", "slow-memory channel", "write channel",
                                                "compute engine"};

typedef struct lane {
    int fam;
    int number; /* 1 for the family's first lane */
    int tid;
    double end; /* latest end of a span on it */
} lane;

/* VCD signals and the units whose start times bound the watermark. */
enum { SIG_CHAN = 0, SIG_COMP = 1, SIG_OCC = 2 };
enum { U_LOAD, U_WRITE, U_COMP, U_OCC, U_COUNT };

/* One pending value change; key = arrival sequence << 2 | signal. */
typedef struct vchange {
    int64_t t; /* fs */
    uint64_t key;
    int64_t v; /* busy: +1/-1; occupancy: the new value */
} vchange;

/* A spilled run being merged at close. */
typedef struct vrun {
    int64_t off;  /* next file offset to read */
    size_t left;  /* entries not yet read */
    vchange *buf; /* read-ahead */
    size_t n, i;
} vrun;

typedef struct vcd {
    tfile out;
    vchange *pend;
    size_t npend;
    uint64_t seq;
    int64_t unit_last[U_COUNT]; /* latest start (fs) per unit, -1 before the first */
    /* spilled runs */
    FILE *spill;
    char *spill_path;
    int64_t *run_off;
    size_t *run_len;
    size_t nruns, runcap;
    int64_t spill_end;
    /* writer state */
    int header;        /* the header is written (vcd_begin) */
    int dumped;        /* $dumpvars written */
    int64_t last_time; /* last timestamp written */
    int group_open;
    int64_t group_t;
    int64_t nchan, ncomp, occ; /* values inside the open group */
    int64_t out_chan, out_comp, out_occ; /* values last written */
} vcd;

struct ft_trace {
    int has_json, has_vcd;
    tfile json;
    int nevents; /* JSON events written (for the separators) */
    lane *lanes;
    int nlanes, lanecap, next_tid;
    int split_writes; /* writes go to "write channel" lanes */
    vcd v;
    char *target;
    double capacity;
    int have_occ;
    int64_t last_occ;
    int failed; /* a sticky error; msg holds it */
    char msg[512];
    /* ft_trace_set_names: subgraph labels (NULL: the problem has no op
     * names) and tensor names (entries NULL when unnamed) */
    char **labels;
    int nlabels;
    char **tensor_names;
    int ntensor_names;
    int started; /* a span or occupancy arrived (names are fixed) */
};

static void trace_fail(ft_trace *t, const char *fmt, ...)
{
    va_list ap;
    if (t->failed)
        return;
    t->failed = 1;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
}

/* Path named in messages about the event stream. */
static const char *trace_name(const ft_trace *t)
{
    return t->has_json ? t->json.path : t->v.out.path;
}

static const char *kind_word(ft_trace_kind k)
{
    switch (k) {
    case FT_TRACE_STEP:
        return "step";
    case FT_TRACE_LOAD:
        return "load";
    case FT_TRACE_WRITE:
        return "write";
    case FT_TRACE_COMPUTE:
        return "compute";
    }
    return "?";
}

/* ------------------------------------------------------------ Chrome JSON */

static void chrome_sep(ft_trace *t)
{
    tfile_puts(&t->json, t->nevents++ ? ",\n" : "\n");
}

static void chrome_lane_meta(ft_trace *t, const lane *l)
{
    char name[64];
    if (l->number == 1)
        snprintf(name, sizeof name, "%s", fam_name[l->fam]);
    else
        snprintf(name, sizeof name, "%s #%d", fam_name[l->fam], l->number);
    chrome_sep(t);
    tfile_printf(&t->json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":", l->tid);
    emit_string(&t->json, name);
    tfile_puts(&t->json, "}}");
    chrome_sep(t);
    tfile_printf(&t->json,
                 "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                 l->tid, (l->fam + 1) * 1000 + l->number);
}

/* Add a lane; returns its index or -1 (out of memory, t->failed set). */
static int lane_add(ft_trace *t, int fam, int tid)
{
    int number = 1;
    if (t->nlanes == t->lanecap) {
        int cap = t->lanecap ? 2 * t->lanecap : 8;
        lane *nl = realloc(t->lanes, (size_t)cap * sizeof *nl);
        if (!nl) {
            trace_fail(t, "%s: out of memory", trace_name(t));
            return -1;
        }
        t->lanes = nl;
        t->lanecap = cap;
    }
    for (int i = 0; i < t->nlanes; i++)
        if (t->lanes[i].fam == fam)
            number++;
    lane *l = &t->lanes[t->nlanes];
    l->fam = fam;
    l->number = number;
    l->tid = tid;
    l->end = -HUGE_VAL;
    chrome_lane_meta(t, l);
    return t->nlanes++;
}

/* The lane for a span of kind k starting at `start`: first fit among the
 * kind's lanes, else a new overflow lane.  Writes share the slow-memory
 * channel until one overlaps it (or a load finds no room there): from then
 * on writes have lanes of their own ("write channel"). */
static int lane_pick(ft_trace *t, ft_trace_kind k, double start)
{
    int fam = k == FT_TRACE_STEP ? FAM_CTRL : k == FT_TRACE_COMPUTE ? FAM_COMP : FAM_CHAN;
    if (k == FT_TRACE_WRITE && t->split_writes)
        fam = FAM_WCHAN;
    for (int i = 0; i < t->nlanes; i++)
        if (t->lanes[i].fam == fam && t->lanes[i].end <= start)
            return i;
    if (fam == FAM_CHAN) {
        t->split_writes = 1;
        if (k == FT_TRACE_WRITE)
            return lane_pick(t, k, start);
    }
    return lane_add(t, fam, t->next_tid++);
}

/* The label of subgraph sg (ft_trace_set_names), or NULL. */
static const char *sg_label(const ft_trace *t, int sg)
{
    return t->labels && sg >= 0 && sg < t->nlabels ? t->labels[sg] : NULL;
}

/* The name of tensor x, or NULL. */
static const char *tensor_label(const ft_trace *t, int x)
{
    return t->tensor_names && x >= 0 && x < t->ntensor_names ? t->tensor_names[x] : NULL;
}

static void chrome_span(ft_trace *t, const ft_trace_event *e)
{
    char name[FT_LABEL_MAX + 160], a[40], b[40], where[FT_LABEL_MAX + 16], tname[40];
    const char *label = sg_label(t, e->sg), *tensor = tensor_label(t, e->tensor);
    int li = lane_pick(t, e->kind, e->start);
    if (li < 0)
        return;
    lane *l = &t->lanes[li];
    if (e->end > l->end)
        l->end = e->end;

    /* "sg 3", or the subgraph's label when the problem names its ops */
    if (label)
        snprintf(where, sizeof where, "%s", label);
    else
        snprintf(where, sizeof where, "sg %d", e->sg);
    switch (e->kind) {
    case FT_TRACE_STEP:
        snprintf(name, sizeof name, "step %" PRId64 " (%s tile %" PRId64 " k %" PRId64 ")", e->step, where, e->tile,
                 e->kstep);
        break;
    case FT_TRACE_LOAD:
    case FT_TRACE_WRITE:
        if (!tensor) {
            snprintf(tname, sizeof tname, "T%d", e->tensor);
            tensor = tname;
        }
        snprintf(name, sizeof name, "%s %.*s[%" PRId64 ":%" PRId64 ", %" PRId64 ":%" PRId64 "]", kind_word(e->kind),
                 FT_LABEL_MAX, tensor, e->region.r0, e->region.r1, e->region.c0, e->region.c1);
        tensor = tensor_label(t, e->tensor);
        break;
    case FT_TRACE_COMPUTE:
        snprintf(name, sizeof name, "compute %s tile %" PRId64 " k %" PRId64, where, e->tile, e->kstep);
        break;
    }
    chrome_sep(t);
    tfile_puts(&t->json, "{\"name\":");
    emit_string(&t->json, name);
    tfile_puts(&t->json, ",\"cat\":");
    emit_string(&t->json, kind_word(e->kind));
    tfile_printf(&t->json,
                 ",\"ph\":\"X\",\"ts\":%s,\"dur\":%s,\"pid\":1,\"tid\":%d,\"args\":{\"sg\":%d,\"tile\":%" PRId64
                 ",\"step\":%" PRId64 ",\"kstep\":%" PRId64,
                 fmt_num(a, sizeof a, e->start), fmt_num(b, sizeof b, e->end - e->start), l->tid, e->sg, e->tile,
                 e->step, e->kstep);
    if (e->kind == FT_TRACE_LOAD || e->kind == FT_TRACE_WRITE)
        tfile_printf(&t->json,
                     ",\"tensor\":%d,\"region\":{\"r0\":%" PRId64 ",\"r1\":%" PRId64 ",\"c0\":%" PRId64
                     ",\"c1\":%" PRId64 "},\"elems\":%" PRId64,
                     e->tensor, e->region.r0, e->region.r1, e->region.c0, e->region.c1, e->elems);
    if (label) {
        tfile_puts(&t->json, ",\"label\":");
        emit_string(&t->json, label);
    }
    if (tensor && (e->kind == FT_TRACE_LOAD || e->kind == FT_TRACE_WRITE)) {
        tfile_puts(&t->json, ",\"tensor_name\":");
        emit_string(&t->json, tensor);
    }
    tfile_puts(&t->json, "}}");
}

static void chrome_counter(ft_trace *t, double time, int64_t elems)
{
    char a[40];
    chrome_sep(t);
    tfile_printf(&t->json,
                 "{\"name\":\"fast memory\",\"ph\":\"C\",\"ts\":%s,\"pid\":1,\"args\":{\"elements\":%" PRId64 "}}",
                 fmt_num(a, sizeof a, time), elems);
}

static void chrome_begin(ft_trace *t)
{
    tfile_puts(&t->json, "{\"traceEvents\":[");
    chrome_sep(t);
    tfile_puts(&t->json, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    emit_string(&t->json, t->target);
    tfile_puts(&t->json, "}}");
    t->next_tid = 1;
    lane_add(t, FAM_CTRL, t->next_tid++);
    lane_add(t, FAM_CHAN, t->next_tid++);
    lane_add(t, FAM_COMP, t->next_tid++);
}

static void chrome_end(ft_trace *t, double end_time)
{
    char a[40], b[40];
    tfile_puts(&t->json, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":");
    emit_string(&t->json, "fusetile " FT_VERSION);
    tfile_puts(&t->json, ",\"target\":");
    emit_string(&t->json, t->target);
    tfile_printf(&t->json, ",\"fast_memory_capacity\":%s,\"end_time\":%s,\"time_unit\":",
                 isfinite(t->capacity) ? fmt_num(a, sizeof a, t->capacity) : "null",
                 fmt_num(b, sizeof b, end_time));
    emit_string(&t->json, "1 cost unit = 1 us");
    if (t->labels) {
        tfile_puts(&t->json, ",\"subgraph_labels\":[");
        for (int i = 0; i < t->nlabels; i++) {
            tfile_puts(&t->json, i ? "," : "");
            emit_string(&t->json, t->labels[i]);
        }
        tfile_puts(&t->json, "]");
    }
    tfile_puts(&t->json, "}}\n");
}

/* ------------------------------------------------------------ VCD */

static void vcd_begin(ft_trace *t);

static int vchange_cmp(const void *pa, const void *pb)
{
    const vchange *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static void vcd_bits(tfile *tf, int64_t value, char id)
{
    char s[72];
    uint64_t u = (uint64_t)value;
    int n = 0;
    char digits[64];
    do {
        digits[n++] = (char)('0' + (u & 1));
        u >>= 1;
    } while (u);
    s[0] = 'b';
    for (int i = 0; i < n; i++)
        s[1 + i] = digits[n - 1 - i];
    s[1 + n] = ' ';
    s[2 + n] = id;
    s[3 + n] = '\n';
    tfile_write(tf, s, (size_t)n + 4);
}

/* Write the group at v->group_t: $dumpvars first if not yet written. */
static void vcd_close_group(vcd *v)
{
    int chan = v->nchan > 0, comp = v->ncomp > 0;
    tfile *tf = &v->out;
    if (!v->group_open)
        return;
    v->group_open = 0;
    if (!v->dumped) {
        int at0 = v->group_t == 0;
        tfile_puts(tf, "#0\n$dumpvars\n");
        tfile_puts(tf, at0 && chan ? "1!\n" : "0!\n");
        tfile_puts(tf, at0 && comp ? "1\"\n" : "0\"\n");
        vcd_bits(tf, at0 ? v->occ : 0, '#');
        tfile_puts(tf, "$end\n");
        v->dumped = 1;
        v->last_time = 0;
        v->out_chan = at0 && chan;
        v->out_comp = at0 && comp;
        v->out_occ = at0 ? v->occ : 0;
        if (at0)
            return;
    }
    if (chan == v->out_chan && comp == v->out_comp && v->occ == v->out_occ)
        return;
    tfile_printf(tf, "#%" PRId64 "\n", v->group_t);
    if (chan != v->out_chan)
        tfile_puts(tf, chan ? "1!\n" : "0!\n");
    if (comp != v->out_comp)
        tfile_puts(tf, comp ? "1\"\n" : "0\"\n");
    if (v->occ != v->out_occ)
        vcd_bits(tf, v->occ, '#');
    v->out_chan = chan;
    v->out_comp = comp;
    v->out_occ = v->occ;
    v->last_time = v->group_t;
}

/* Apply one change in time order. */
static void vcd_apply(vcd *v, const vchange *c)
{
    if (v->group_open && c->t != v->group_t)
        vcd_close_group(v);
    v->group_open = 1;
    v->group_t = c->t;
    switch ((int)(c->key & 3)) {
    case SIG_CHAN:
        v->nchan += c->v;
        break;
    case SIG_COMP:
        v->ncomp += c->v;
        break;
    default:
        v->occ = c->v;
        break;
    }
}

static int64_t vcd_watermark(const vcd *v)
{
    int64_t w = INT64_MAX;
    for (int u = 0; u < U_COUNT; u++)
        if (v->unit_last[u] < w)
            w = v->unit_last[u];
    return w;
}

/* Append the sorted pending buffer to the spill file as a run. */
static void vcd_spill(ft_trace *t)
{
    vcd *v = &t->v;
    if (!v->spill) {
        size_t n = strlen(v->out.path) + 40;
        v->spill_path = malloc(n);
        if (!v->spill_path) {
            trace_fail(t, "%s: out of memory", v->out.path);
            return;
        }
        snprintf(v->spill_path, n, "%s.spill.tmp.%ld", v->out.path, (long)getpid());
        v->spill = fopen(v->spill_path, "w+b");
        if (!v->spill) {
            trace_fail(t, "%s: cannot create scratch file %s: %s", v->out.path, v->spill_path, strerror(errno));
            return;
        }
        remove(v->spill_path); /* unlinked: it vanishes with the process */
    }
    if (v->nruns == v->runcap) {
        size_t cap = v->runcap ? 2 * v->runcap : 16;
        int64_t *no = realloc(v->run_off, cap * sizeof *no);
        if (no)
            v->run_off = no;
        size_t *nl = realloc(v->run_len, cap * sizeof *nl);
        if (nl)
            v->run_len = nl;
        if (!no || !nl) {
            trace_fail(t, "%s: out of memory", v->out.path);
            return;
        }
        v->runcap = cap;
    }
    if (fseeko(v->spill, (off_t)v->spill_end, SEEK_SET) != 0 ||
        fwrite(v->pend, sizeof *v->pend, v->npend, v->spill) != v->npend) {
        trace_fail(t, "%s: cannot write scratch file %s: %s", v->out.path, v->spill_path, strerror(errno));
        return;
    }
    v->run_off[v->nruns] = v->spill_end;
    v->run_len[v->nruns] = v->npend;
    v->nruns++;
    v->spill_end += (int64_t)(v->npend * sizeof *v->pend);
    v->npend = 0;
}

/* The buffer is full: write out what precedes the watermark; spill if that
 * frees less than half. */
static void vcd_make_room(ft_trace *t)
{
    vcd *v = &t->v;
    qsort(v->pend, v->npend, sizeof *v->pend, vchange_cmp);
    if (v->nruns == 0) {
        int64_t w = vcd_watermark(v);
        size_t i = 0;
        while (i < v->npend && v->pend[i].t < w)
            vcd_apply(v, &v->pend[i++]);
        vcd_close_group(v); /* nothing later can share its timestamp */
        memmove(v->pend, v->pend + i, (v->npend - i) * sizeof *v->pend);
        v->npend -= i;
        if (v->npend <= vcd_buffer_cap / 2)
            return;
    }
    vcd_spill(t);
}

static void vcd_push(ft_trace *t, int64_t time, int sig, int64_t value)
{
    vcd *v = &t->v;
    if (t->failed)
        return;
    if (v->dumped && time <= v->last_time) {
        trace_fail(t, "%s: event at %.17g out of time order (time %.17g was already written)", v->out.path,
             (double)time / FS_PER_UNIT, (double)v->last_time / FS_PER_UNIT);
        return;
    }
    if (v->npend == vcd_buffer_cap) {
        vcd_begin(t);
        vcd_make_room(t);
        if (t->failed)
            return;
    }
    vchange *c = &v->pend[v->npend++];
    c->t = time;
    c->key = v->seq++ << 2 | (uint64_t)sig;
    c->v = value;
}

/* Read the next chunk of run r.  0 or -1 (t->failed set). */
static int vrun_fill(ft_trace *t, vrun *r, size_t chunk)
{
    vcd *v = &t->v;
    size_t n = r->left < chunk ? r->left : chunk;
    if (fseeko(v->spill, (off_t)r->off, SEEK_SET) != 0 || fread(r->buf, sizeof *r->buf, n, v->spill) != n) {
        trace_fail(t, "%s: cannot read scratch file %s: %s", v->out.path, v->spill_path,
             errno ? strerror(errno) : "short read");
        return -1;
    }
    r->off += (int64_t)(n * sizeof *r->buf);
    r->left -= n;
    r->n = n;
    r->i = 0;
    return 0;
}

static int vrun_less(const vrun *a, const vrun *b)
{
    return vchange_cmp(&a->buf[a->i], &b->buf[b->i]) < 0;
}

static void heap_down(vrun **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && vrun_less(h[l], h[m]))
            m = l;
        if (l + 1 < n && vrun_less(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        vrun *x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

/* Close: write every pending change in time order (merging spilled runs). */
static void vcd_drain(ft_trace *t)
{
    vcd *v = &t->v;
    qsort(v->pend, v->npend, sizeof *v->pend, vchange_cmp);
    if (v->nruns == 0) {
        for (size_t i = 0; i < v->npend; i++)
            vcd_apply(v, &v->pend[i]);
        v->npend = 0;
        vcd_close_group(v);
        return;
    }
    vcd_spill(t);
    if (t->failed)
        return;
    size_t k = v->nruns, chunk = MERGE_MEMORY / k;
    if (chunk < 64)
        chunk = 64;
    if (chunk > 8192)
        chunk = 8192;
    vrun *runs = calloc(k, sizeof *runs);
    vrun **heap = calloc(k, sizeof *heap);
    size_t nh = 0;
    if (!runs || !heap) {
        trace_fail(t, "%s: out of memory", v->out.path);
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        runs[i].off = v->run_off[i];
        runs[i].left = v->run_len[i];
        runs[i].buf = malloc(chunk * sizeof *runs[i].buf);
        if (!runs[i].buf) {
            trace_fail(t, "%s: out of memory", v->out.path);
            goto out;
        }
        if (runs[i].left == 0)
            continue;
        if (vrun_fill(t, &runs[i], chunk) != 0)
            goto out;
        heap[nh++] = &runs[i];
    }
    for (size_t i = nh; i-- > 0;)
        heap_down(heap, nh, i);
    while (nh > 0) {
        vrun *r = heap[0];
        vcd_apply(v, &r->buf[r->i++]);
        if (r->i == r->n) {
            if (r->left == 0) {
                heap[0] = heap[--nh];
            } else if (vrun_fill(t, r, chunk) != 0)
                goto out;
        }
        heap_down(heap, nh, 0);
    }
    vcd_close_group(v);
out:
    if (runs)
        for (size_t i = 0; i < k; i++)
            free(runs[i].buf);
    free(runs);
    free(heap);
}

/* s inside a VCD $comment: a comment ends at the token $end, so keep it
 * printable ASCII without '$' ('$' becomes '_', other bytes '?'). */
static void vcd_comment_text(tfile *tf, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char c = *p < 0x20 || *p >= 0x7F ? '?' : *p == '$' ? '_' : (char)*p;
        tfile_write(tf, &c, 1);
    }
}

/* The VCD header, written when the first change or the close arrives (so
 * that ft_trace_set_names can add the subgraph labels). */
static void vcd_begin(ft_trace *t)
{
    tfile *tf = &t->v.out;
    if (t->v.header)
        return;
    t->v.header = 1;
    tfile_puts(tf, "$version fusetile " FT_VERSION " $end\n$comment target ");
    vcd_comment_text(tf, t->target);
    tfile_puts(tf, " $end\n");
    for (int i = 0; t->labels && i < t->nlabels; i++) {
        tfile_printf(tf, "$comment subgraph %d ", i);
        vcd_comment_text(tf, t->labels[i]);
        tfile_puts(tf, " $end\n");
    }
    tfile_puts(tf, "$timescale 1 fs $end\n"
                   "$scope module fusetile $end\n"
                   "$var wire 1 ! channel_busy $end\n"
                   "$var wire 1 \" compute_busy $end\n"
                   "$var integer 64 # occupancy $end\n"
                   "$upscope $end\n"
                   "$enddefinitions $end\n");
}

static void vcd_end(ft_trace *t, int64_t end_fs)
{
    vcd *v = &t->v;
    vcd_begin(t);
    vcd_drain(t);
    if (t->failed)
        return;
    if (!v->dumped) { /* no change at all: the initial values */
        v->group_open = 1;
        v->group_t = 0;
        vcd_close_group(v);
    }
    if (end_fs > v->last_time)
        tfile_printf(&v->out, "#%" PRId64 "\n", end_fs);
}

static void vcd_free(vcd *v)
{
    if (v->spill)
        fclose(v->spill);
    free(v->spill_path);
    free(v->pend);
    free(v->run_off);
    free(v->run_len);
    v->spill = NULL;
    v->spill_path = NULL;
    v->pend = NULL;
    v->run_off = NULL;
    v->run_len = NULL;
}

/* Cost units to fs; -1 if t is negative, not finite or too large. */
static int64_t to_fs(double t)
{
    if (!(t >= 0) || t * FS_PER_UNIT >= 9.2e18)
        return -1;
    return (int64_t)llround(t * FS_PER_UNIT);
}

/* ------------------------------------------------------------ public API */

static void trace_free(ft_trace *t)
{
    tfile_discard(&t->json);
    tfile_discard(&t->v.out);
    vcd_free(&t->v);
    free(t->lanes);
    free(t->target);
    for (int i = 0; t->labels && i < t->nlabels; i++)
        free(t->labels[i]);
    free(t->labels);
    for (int i = 0; t->tensor_names && i < t->ntensor_names; i++)
        free(t->tensor_names[i]);
    free(t->tensor_names);
    free(t);
}

int ft_trace_open(ft_trace **out, const char *json_path, const char *vcd_path, const char *target, double capacity,
                  char *err, size_t errlen)
{
    int rc;
    *out = NULL;
    put_err(err, errlen, "%s", "");
    if (json_path && vcd_path && strcmp(json_path, vcd_path) == 0) {
        put_err(err, errlen, "%s: the JSON trace and the VCD file would be the same file", json_path);
        return FT_EINPUT;
    }
    ft_trace *t = calloc(1, sizeof *t);
    if (!t) {
        put_err(err, errlen, "trace: out of memory");
        return FT_ENOMEM;
    }
    t->target = dupstr(target ? target : "fusetile");
    t->capacity = capacity;
    if (!t->target) {
        free(t);
        put_err(err, errlen, "trace: out of memory");
        return FT_ENOMEM;
    }
    if (json_path) {
        rc = tfile_open(&t->json, json_path, err, errlen);
        if (rc != FT_OK) {
            trace_free(t);
            return rc;
        }
        t->has_json = 1;
    }
    if (vcd_path) {
        rc = tfile_open(&t->v.out, vcd_path, err, errlen);
        if (rc == FT_OK && !(t->v.pend = malloc(vcd_buffer_cap * sizeof *t->v.pend))) {
            put_err(err, errlen, "%s: out of memory", vcd_path);
            rc = FT_ENOMEM;
        }
        if (rc != FT_OK) {
            trace_free(t);
            return rc;
        }
        t->has_vcd = 1;
    }
    if (t->has_json)
        chrome_begin(t);
    for (int u = 0; u < U_COUNT; u++)
        t->v.unit_last[u] = -1;
    if (t->failed) {
        put_err(err, errlen, "%s", t->msg);
        trace_free(t);
        return FT_ENOMEM;
    }
    *out = t;
    return FT_OK;
}

int ft_trace_set_names(ft_trace *t, const ft_problem *p, const ft_schedule *s)
{
    if (!t || !p || !s)
        return FT_OK;
    if (t->started || t->labels || t->tensor_names) {
        trace_fail(t, "%s: ft_trace_set_names after the first event or twice", trace_name(t));
        return FT_EINPUT;
    }
    int named = 0, tnamed = 0;
    for (int o = 0; o < p->nops; o++)
        named |= p->ops[o].name != NULL;
    for (int x = 0; x < p->ntensors; x++)
        tnamed |= p->tensors[x].name != NULL;
    if (named && s->nsubgraphs > 0) {
        if (!(t->labels = calloc((size_t)s->nsubgraphs, sizeof *t->labels)))
            goto oom;
        t->nlabels = s->nsubgraphs;
        for (int i = 0; i < s->nsubgraphs; i++)
            if (!(t->labels[i] = ft_subgraph_label(p, &s->sg[i])))
                goto oom;
    }
    if (tnamed) {
        if (!(t->tensor_names = calloc((size_t)p->ntensors, sizeof *t->tensor_names)))
            goto oom;
        t->ntensor_names = p->ntensors;
        for (int x = 0; x < p->ntensors; x++)
            if (p->tensors[x].name && !(t->tensor_names[x] = dupstr(p->tensors[x].name)))
                goto oom;
    }
    return FT_OK;
oom:
    trace_fail(t, "%s: out of memory", trace_name(t));
    return FT_ENOMEM;
}

void ft_trace_span(ft_trace *t, const ft_trace_event *e)
{
    if (!t || t->failed || !(t->has_json || t->has_vcd))
        return;
    t->started = 1;
    if (e->kind < FT_TRACE_STEP || e->kind > FT_TRACE_COMPUTE) {
        trace_fail(t, "%s: span of unknown kind %d", trace_name(t), (int)e->kind);
        return;
    }
    if (!(e->start >= 0) || !isfinite(e->end) || !(e->end >= e->start)) {
        trace_fail(t, "%s: %s span (sg %d tile %" PRId64 " step %" PRId64 ") has start %.17g and end %.17g", trace_name(t),
             kind_word(e->kind), e->sg, e->tile, e->step, e->start, e->end);
        return;
    }
    if (t->has_json)
        chrome_span(t, e);
    if (t->has_vcd && e->kind != FT_TRACE_STEP) {
        int64_t s = to_fs(e->start), f = to_fs(e->end);
        int unit = e->kind == FT_TRACE_LOAD ? U_LOAD : e->kind == FT_TRACE_WRITE ? U_WRITE : U_COMP;
        int sig = e->kind == FT_TRACE_COMPUTE ? SIG_COMP : SIG_CHAN;
        if (s < 0 || f < 0) {
            trace_fail(t, "%s: time %.17g is beyond the VCD time range", t->v.out.path, e->end);
            return;
        }
        if (s < t->v.unit_last[unit]) {
            trace_fail(t, "%s: %s span (sg %d tile %" PRId64 " step %" PRId64 ") starts at %.17g, before the previous one",
                 t->v.out.path, kind_word(e->kind), e->sg, e->tile, e->step, e->start);
            return;
        }
        t->v.unit_last[unit] = s;
        if (s != f) { /* an empty span changes nothing */
            vcd_push(t, s, sig, 1);
            vcd_push(t, f, sig, -1);
        }
    }
}

void ft_trace_occupancy(ft_trace *t, double time, int64_t elems)
{
    if (!t || t->failed || !(t->has_json || t->has_vcd))
        return;
    t->started = 1;
    if (!(time >= 0) || !isfinite(time) || elems < 0) {
        trace_fail(t, "%s: occupancy %" PRId64 " at time %.17g is out of range", trace_name(t), elems, time);
        return;
    }
    if (t->have_occ && elems == t->last_occ)
        return;
    t->have_occ = 1;
    t->last_occ = elems;
    if (t->has_json)
        chrome_counter(t, time, elems);
    if (t->has_vcd) {
        int64_t s = to_fs(time);
        if (s < 0) {
            trace_fail(t, "%s: time %.17g is beyond the VCD time range", t->v.out.path, time);
            return;
        }
        if (s < t->v.unit_last[U_OCC]) {
            trace_fail(t, "%s: occupancy change at %.17g arrives after one at %.17g", t->v.out.path, time,
                 (double)t->v.unit_last[U_OCC] / FS_PER_UNIT);
            return;
        }
        t->v.unit_last[U_OCC] = s;
        vcd_push(t, s, SIG_OCC, elems);
    }
}

int ft_trace_close(ft_trace *t, double end_time, char *err, size_t errlen)
{
    int rc = FT_OK;
    put_err(err, errlen, "%s", "");
    if (!t)
        return FT_OK;
    int64_t end_fs = 0;
    if (!t->failed && (t->has_json || t->has_vcd) && (!isfinite(end_time) || end_time < 0))
        trace_fail(t, "%s: end time %.17g is out of range", trace_name(t), end_time);
    if (!t->failed && t->has_vcd && (end_fs = to_fs(end_time)) < 0)
        trace_fail(t, "%s: time %.17g is beyond the VCD time range", t->v.out.path, end_time);
    if (!t->failed && t->has_vcd)
        vcd_end(t, end_fs);
    if (!t->failed && t->has_json)
        chrome_end(t, end_time);
    if (t->failed) {
        put_err(err, errlen, "%s", t->msg);
        rc = FT_EINPUT;
    }
    if (rc == FT_OK && t->has_json)
        rc = tfile_close(&t->json, err, errlen);
    if (rc == FT_OK && t->has_vcd)
        rc = tfile_close(&t->v.out, err, errlen);
    if (rc == FT_OK && t->has_json)
        rc = tfile_commit(&t->json, err, errlen);
    if (rc == FT_OK && t->has_vcd)
        rc = tfile_commit(&t->v.out, err, errlen);
    trace_free(t); /* removes whatever temporary is left */
    return rc;
}

void ft_trace_abort(ft_trace *t)
{
    if (t)
        trace_free(t);
}
