/* safe_write.h - the one writer of fusetile's output files: the output rules of docs/OUTPUTS.md (atomic replacement, symbolic links written through, character devices in place, other kinds and the command's inputs refused); not installed. */
#ifndef FT_SAFE_WRITE_H
#define FT_SAFE_WRITE_H

#include <stdio.h>

#include "fusetile.h"

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
 *  - a file the command read as input (ft__out_protect; the same device
 *    and inode, so also under another name or a hard link): refused.
 * A refusal or a failure is one message naming the path, and the file
 * there is left as it was. */

/* Most outputs open at once in one process (ft__out_open); one more is
 * refused with a message naming this limit. */
#define FT_OUT_MAX_OPEN 32

/* Most input files one process protects (ft__out_protect); one more is
 * refused with a message naming this limit. */
#define FT_OUT_MAX_INPUTS 64

/* How long an output waits for a process to open a FIFO for reading
 * before it refuses it, and how often it looks, in milliseconds. */
#define FT_OUT_FIFO_WAIT_MS 2000
#define FT_OUT_FIFO_POLL_MS 10

/* Tries at a fresh temporary name (PATH.fusetile-tmp.PID.N) before
 * ft__out_open gives up. */
#define FT_OUT_TMP_TRIES 100

/* An output being written: write to f; then ft__out_commit or
 * ft__out_abort, exactly once. */
typedef struct ft__out {
    FILE *f;     /* the temporary file, or the device or FIFO written in place */
    char *path;  /* the path as named, for messages */
    char *dest;  /* the file the rename replaces (path, or a symbolic
                    link's final target); NULL when written in place */
    char *tmp;   /* the temporary file; NULL when written in place or
                    after the rename */
    int slot;    /* index in the signal clean-up table plus one, 0: none */
    int mode;    /* permission bits the new file gets; -1: the umask's */
} ft__out;

/* Check path against the output rules without writing: FT_OK when an
 * output there would be written (a new name, a regular file, a link to
 * one, or with regular_only = 0 a character device or a FIFO, which is
 * not opened: a reader would see the end of its input), else FT_EINPUT with
 * one line naming the path ("P: is a FIFO; refusing to write to it ...",
 * "P: is the problem input; refusing to overwrite it").  Commands call it
 * before a long run, and on a database path (regular_only = 1: SQLite
 * writes only regular files). */
int ft__out_check(const char *path, int regular_only, ft_status *st);

/* Open an output at path under the rules: FT_OK with o->f open for
 * writing (a temporary file beside the destination, or the device in
 * place); FT_EINPUT (refused, or the OS error naming path) or FT_ENOMEM
 * with nothing left behind and *o cleared. */
int ft__out_open(ft__out *o, const char *path, ft_status *st);

/* Close an output without moving it into place: flush, fsync and close
 * the file, every error checked (a write that failed on the way is
 * reported here too).  FT_OK (ft__out_commit then renames it; nothing
 * to do for a device), or FT_EINPUT naming the path with the temporary
 * file removed and *o released.  Lets a writer of several files close
 * them all before it commits any. */
int ft__out_close(ft__out *o, ft_status *st);

/* Finish an output: ft__out_close when still open, then rename the
 * temporary file over the destination and fsync its directory.  FT_OK, or
 * FT_EINPUT with the OS error naming the path, the temporary file removed
 * and the previous file kept.  *o is released either way. */
int ft__out_commit(ft__out *o, ft_status *st);

/* Drop an output: close and remove the temporary file (the destination is
 * untouched) and release *o.  Harmless on a cleared or released *o. */
void ft__out_abort(ft__out *o);

/* Write the NUL-terminated text to path under the output rules (open,
 * write, commit).  FT_OK, FT_ENOMEM, or FT_EINPUT naming the file. */
int ft__write_atomic(const char *text, const char *path, ft_status *st);

/* Protect an input file from this process's outputs: any later output
 * whose file is the same (device and inode) as path is refused with "OUT:
 * is the ROLE input; refusing to overwrite it".  role ("problem",
 * "schedule", ...) must stay valid while protected (a literal); path is
 * copied.  A path that does not exist, or is not a regular file, is not
 * recorded.  FT_OK, FT_ENOMEM, or FT_EINPUT past FT_OUT_MAX_INPUTS.  Not
 * thread-safe: call it before writers start. */
int ft__out_protect(const char *path, const char *role, ft_status *st);

/* Forget every protected input (ft__out_protect) and free the copies. */
void ft__out_unprotect_all(void);

/* Remove the temporary file of every output open now; async-signal-safe,
 * for a SIGINT or SIGTERM handler that then ends the process. */
void ft__out_signal_cleanup(void);

#endif
