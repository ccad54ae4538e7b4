"""errors.py - the importer's one error type, its one-line message format, and its warning."""

from .. import Error as _Error
from .. import FallbackWarning  # noqa: F401 - the importer's warning (fusetile.FallbackWarning)


class ImportFailure(_Error):
    """An import that cannot go on: bad input, an unsupported model, a broken graph.

    A fusetile.Error (kind "import", code 2), as every error of the
    binding is.

    `where` names the place: an FX node name with its op ("relu_1 (torch.relu)"),
    an ONNX node name with its op_type, an option ("--input-shape") or a file.
    `message` says what is wrong; `hint` what to do about it (may be empty).
    str() gives "WHERE: MESSAGE (hint: HINT)"; the command line prefixes
    "fusetile import: " and exits with status 2.
    """

    def __init__(self, where, message, hint=""):
        self.where = where
        self.message = message
        self.hint = hint
        super().__init__(self.line())
        self.kind, self.code = "import", 2

    def line(self):
        """The message as one line, without the "fusetile import: " prefix."""
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return " ".join(text.split())


def node_where(name, op):
    """The `where` of an error about a graph node: "NAME (OP)", or NAME alone when op is empty."""
    return f"{name} ({op})" if op else name


def warn_fallback(text):
    """warnings.warn(text, FallbackWarning), attributed to the first caller outside the fusetile package (the user's line)."""
    import os
    import sys
    import warnings
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(0), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame, level = frame.f_back, level + 1
    warnings.warn(text, FallbackWarning, stacklevel=level)
