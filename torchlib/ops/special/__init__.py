"""Special functions, one module per family. ONNX has no operator for most of them: they are
written as the series, recurrences and rational approximations of torch's own CPU kernels
(Cephes), with the same operations in the same order, in the input's floating dtype.
Importing this package registers them all."""

from torchlib.ops.special import bessel, erf, gamma, igamma, misc, polynomials  # noqa: F401
