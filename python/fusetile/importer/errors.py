"""errors.py - the importer's one error type and its one-line message format."""


class ImportFailure(Exception):
    """An import that cannot go on: bad input, an unsupported model, a broken graph.

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

    def line(self):
        """The message as one line, without the "fusetile import: " prefix."""
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return " ".join(text.split())


def node_where(name, op):
    """The `where` of an error about a graph node: "NAME (OP)", or NAME alone when op is empty."""
    return f"{name} ({op})" if op else name
