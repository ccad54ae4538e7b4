"""output.py - gpumeasure's TSV files: the header line of the measured-hardware format, then the rows, written atomically (write_tsv), at once or as a set goes (TsvRows)."""

import os
import tempfile
import time

from .common import HEADERS, UMASK


def write_tsv(directory, name, rows):
    """DIR/NAME.tsv: the header line, then the rows; atomically (a temporary file, then os.replace)."""
    path = os.path.join(directory, name + ".tsv")
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~UMASK)   # mkstemp makes it 0600; a plain file's mode instead
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write("\t".join(HEADERS[name]) + "\n")
            for row in rows:
                f.write("\t".join(str(c) for c in row) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


class TsvRows:
    """The rows of one set as they are measured: DIR/NAME.tsv is written (atomically, write_tsv) when the
    set ends (write) and, on the way, every every_s seconds at most with the rows so far (add), so that a
    run killed in the middle of a long set keeps most of it."""

    def __init__(self, directory, name, every_s, log=None):
        self.directory = directory
        self.name = name
        self.every_s = every_s
        self.log = log                # log(msg): a progress line, or None
        self.rows = []
        self.last = time.monotonic()
        self.written = None           # the path, once written

    def add(self, row):
        """One more row; the file is rewritten if every_s seconds have passed since it last was."""
        self.rows.append(row)
        if time.monotonic() - self.last >= self.every_s:
            self.write()
            if self.log:
                self.log(f"{self.name}: checkpoint: wrote {self.written} ({len(self.rows)} rows so far)")

    def write(self):
        """DIR/NAME.tsv with the rows so far; its path."""
        self.written = write_tsv(self.directory, self.name, self.rows)
        self.last = time.monotonic()
        return self.written

    def __len__(self):
        return len(self.rows)
