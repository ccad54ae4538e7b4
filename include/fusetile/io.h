/* io.h - fusetile's files (public API, installed as <fusetile/io.h>): the one writer of its output files under the output rules of docs/OUTPUTS.md (atomic replacement, symbolic links written through, character devices in place, other kinds and the command's inputs refused), bounded reading of an input file, and libconfig texts read without libconfig's leaks. */
#ifndef FT_IO_H
#define FT_IO_H

#include "fusetile/api.h"
FT_API_BEGIN

#include <stdio.h>

#include "fusetile/fusetile.h"

/* The output rules (docs/OUTPUTS.md), applied to the path an output names:
 *  - a new name or an existing regular file: written to a temporary file
 *    beside it (PATH.fusetile-tmp.PID.N, created exclusively), flushed,
 *    fsynced and closed with every error checked, then renamed over PATH
 *    and the directory fsynced; an existing file keeps its permission bits.
 *    The file is the previous one or the complete new one at every moment;
 *  - a symbolic link: written through: the link stays, and the file it
 *    finally names gets these rules (a regular file is replaced
 *    atomically in its own directory); a dangling link is refused;
 *  - a character device (/dev/null, a terminal) or a FIFO (a pipe, as
 *    /dev/stdout on a pipe or the shell's >(...)): written in place, never
 *    replaced, truncated or removed; a FIFO that no process reads is
 *    refused after FT_OUT_FIFO_WAIT_MS instead of blocking for ever;
 *  - a directory, socket or block device: refused;
 *  - a file the command read as input (ft_out_protect; the same device
 *    and inode, so also under another name or a hard link): refused.
 * A refusal or a failure is one message naming the path, and the file
 * there is left as it was. */

/* Most outputs open at once in one process (ft_out_open); one more is
 * refused with a message naming this limit. */
#define FT_OUT_MAX_OPEN 32

/* Most input files one process protects (ft_out_protect); one more is
 * refused with a message naming this limit. */
#define FT_OUT_MAX_INPUTS 64

/* How long an output waits for a process to open a FIFO for reading
 * before it refuses it, and how often it looks, in milliseconds. */
#define FT_OUT_FIFO_WAIT_MS 2000
#define FT_OUT_FIFO_POLL_MS 10

/* Tries at a fresh temporary name (PATH.fusetile-tmp.PID.N) before
 * ft_out_open gives up. */
#define FT_OUT_TMP_TRIES 100

/* An output being written: write to f; then ft_out_commit or
 * ft_out_abort, exactly once. */
typedef struct ft_out {
    FILE *f;     /* the temporary file, or the device or FIFO written in place */
    char *path;  /* the path as named, for messages */
    char *dest;  /* the file the rename replaces (path, or a symbolic
                    link's final target); NULL when written in place */
    char *tmp;   /* the temporary file; NULL when written in place or
                    after the rename */
    int slot;    /* index in the signal clean-up table plus one, 0: none */
    int mode;    /* permission bits the new file gets; -1: the umask's */
} ft_out;

/* Check path against the output rules without writing: FT_OK when an
 * output there would be written (a new name, a regular file, a link to
 * one, or with regular_only = 0 a character device or a FIFO, which is
 * not opened: a reader would see the end of its input), else FT_EINPUT with
 * one line naming the path ("P: is a FIFO; refusing to write to it ...",
 * "P: is the problem input; refusing to overwrite it").  Commands call it
 * before a long run, and on a database path (regular_only = 1: SQLite
 * writes only regular files). */
int ft_out_check(const char *path, int regular_only, ft_status *st);

/* Open an output at path under the rules: FT_OK with o->f open for
 * writing (a temporary file beside the destination, or the device in
 * place); FT_EINPUT (refused, or the OS error naming path) or FT_ENOMEM
 * with nothing left behind and *o cleared. */
int ft_out_open(ft_out *o, const char *path, ft_status *st);

/* Close an output without moving it into place: flush, fsync and close
 * the file, every error checked (a write that failed on the way is
 * reported here too).  FT_OK (ft_out_commit then renames it; nothing
 * to do for a device), or FT_EINPUT naming the path with the temporary
 * file removed and *o released.  Lets a writer of several files close
 * them all before it commits any. */
int ft_out_close(ft_out *o, ft_status *st);

/* Finish an output: ft_out_close when still open, then rename the
 * temporary file over the destination and fsync its directory.  FT_OK, or
 * FT_EINPUT with the OS error naming the path, the temporary file removed
 * and the previous file kept.  *o is released either way. */
int ft_out_commit(ft_out *o, ft_status *st);

/* Drop an output: close and remove the temporary file (the destination is
 * untouched) and release *o.  Harmless on a cleared or released *o. */
void ft_out_abort(ft_out *o);

/* Write the NUL-terminated text to path under the output rules (open,
 * write, commit).  FT_OK, FT_ENOMEM, or FT_EINPUT naming the file. */
int ft_write_atomic(const char *text, const char *path, ft_status *st);

/* Protect an input file from this process's outputs: any later output
 * whose file is the same (device and inode) as path is refused with "OUT:
 * is the ROLE input; refusing to overwrite it".  role ("problem",
 * "schedule", ...) must stay valid while protected (a literal); path is
 * copied.  A path that does not exist, or is not a regular file, is not
 * recorded.  FT_OK, FT_ENOMEM, or FT_EINPUT past FT_OUT_MAX_INPUTS.  Not
 * thread-safe: call it before writers start. */
int ft_out_protect(const char *path, const char *role, ft_status *st);

/* Forget every protected input (ft_out_protect) and free the copies. */
void ft_out_unprotect_all(void);

/* Remove the temporary file of every output open now; async-signal-safe,
 * for a SIGINT or SIGTERM handler that then ends the process. */
void ft_out_signal_cleanup(void);

/* Read the file at path into a malloc'd, NUL-terminated buffer (*out, released with ft_free), refusing a file of more than max bytes (a regular file at
 * once, before reading; a pipe when the bytes read pass max) with FT_EINPUT
 * "PATH: N bytes, the limit is MAX (LIMIT_NAME)". */
int ft_read_file_max(const char *path, long long max, const char *limit_name, char **out, ft_status *st);

/* Most levels of groups, lists and arrays one libconfig text (a target or
 * a sweep file) may nest (ft_cfg_read). */
#define FT_CFG_MAX_DEPTH 64

struct config_t;

/* Parse the libconfig text `text` (a target or sweep file; `name` names it
 * in messages) into cfg, which the caller has config_init'ed and
 * config_destroy's whatever the result.  The text is first read by a
 * scanner that mirrors libconfig 1.5's (sched/core/cfgtext.c) and refuses, with
 * "NAME:LINE: message", what libconfig would leak memory on (a string
 * literal where its grammar allows none), what it would silently drop (a
 * string or a comment left open at the end), @include, and nesting deeper
 * than FT_CFG_MAX_DEPTH.  FT_OK, FT_ENOMEM, or FT_EINPUT with
 * "NAME:LINE: message (not libconfig syntax)" for libconfig's own errors. */
int ft_cfg_read(struct config_t *cfg, const char *text, const char *name, ft_status *st);


FT_API_END

#endif
