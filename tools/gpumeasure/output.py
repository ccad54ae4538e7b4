"""output.py - gpumeasure's TSV files: the header line of the measured-hardware format, then the rows, written atomically."""

import os
import tempfile

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
