"""The error a failing node raises, shared by the exporter loop and the bodies of higher-order
ops (a module of its own so that neither imports the other for it)."""


class ExportError(RuntimeError):
    """A torchlib function failed on one node: names the op, the inputs and the user's line."""
