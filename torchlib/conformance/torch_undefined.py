"""Inputs on which torch's result is undefined, in whole or in part: the fuzz pass
(fuzz.py) does not compare those elements, since no implementation can give torch's value.

Each rule is one function, named after what torch does, registered for the functions it
covers in `RULES`; it returns (one mask per output, reason) for the elements torch leaves
undefined, (None, reason) when the whole result is, or None when the input is an ordinary one.
A rule is written only after reading torch's kernel and reproducing the behaviour; its
docstring says where in torch it comes from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torchlib.conformance.spec import Call

Undefined = tuple[list[torch.Tensor] | None, str] | None


def torch_undefined(key: str, the_call: Call, expected: Any) -> Undefined:
    """The rule's answer for the function `key` on this call (None: compare everything)."""
    rule = RULES.get(key)
    return rule(key, the_call, expected) if rule is not None else None


def polynomial_at_nan(key: str, the_call: Call, expected: Any) -> Undefined:
    """The orthogonal polynomials (aten/src/ATen/native/Math.h): for degree n >= 2 the CPU
    kernel declares `T r;` and runs `for (k = ...; k <= n && !std::isnan(q); k++) r = ...;`
    with q starting at a multiple of x (1 - x for Laguerre), then returns r. At x = NaN the
    loop never runs and r is returned uninitialized: whatever the register or stack held (0,
    6.9e-310, 1.9e28, ... seen in torch 2.13). No implementation can give that value, so such
    elements are not compared (ours give NaN, the polynomial's value at NaN); the others are."""
    if not isinstance(expected, torch.Tensor) or len(the_call.args) < 2:
        return None
    x, n = (torch.as_tensor(v, dtype=expected.dtype) for v in the_call.args[:2])
    degree = torch.where(torch.isnan(n) | (n.abs() >= 2.0**63), -1.0, n.trunc())  # static_cast<int64_t>
    looped = degree >= 2
    if "hermite" in key:  # above this degree the kernel returns NaN before its loop
        looped &= degree <= (512 if expected.dtype == torch.float64 else 128)
    mask = torch.broadcast_to(torch.isnan(x) & looped, expected.shape)
    if bool(mask.any()):
        return [mask], "torch returns an uninitialized variable for x = NaN and degree >= 2 (Math.h: its loop stops at NaN before setting r)"
    return None


def sort_with_nan(key: str, the_call: Call, expected: Any) -> Undefined:
    """mode and unique_dim (aten/src/ATen/native/cpu/TensorCompareKernel.cpp, Unique.cpp) sort
    with std::sort and a `<` comparator, which NaN breaks (not a strict weak order: undefined
    behaviour in C++). In practice libstdc++'s insertion sort leaves each NaN in place and
    moves the numbers around it, so equal values end up apart: mode([nan, 1, nan, 1]) is NaN,
    unique_dim([2, nan, 2, inf, nan, -inf, 2], 0) returns 2 three times. A mode slice holding
    NaN is not compared (the other slices are); a unique_dim input holding NaN not at all (the
    number of rows differs). Ours: NaN sorted after every number, equal to nothing."""
    if not the_call.args or not isinstance(the_call.args[0], torch.Tensor) or not the_call.args[0].is_floating_point():
        return None
    x = the_call.args[0]
    if x.dim() == 0 or not bool(torch.isnan(x).any()):
        return None  # (a 0-d mode is the element itself)
    name = key.removeprefix("aten_")
    why = f"torch's {name} sorts NaN with `<` (not a strict weak order: std::sort's result is undefined)"
    if key == "aten_unique_dim":
        return None, why
    dim = the_call.args[1] if len(the_call.args) > 1 else the_call.kwargs.get("dim", -1)
    keepdim = the_call.args[2] if len(the_call.args) > 2 else the_call.kwargs.get("keepdim", False)
    mask = torch.isnan(x).any(dim, keepdim=keepdim)
    return [mask, mask], why


def add_relu_of_nan(key: str, the_call: Call, expected: Any) -> Undefined:
    """_add_relu (add_clamp_kernel, aten/src/ATen/native/cpu/BinaryOpsKernel.cpp) clamps a + alpha*b
    to [0, max] with vector max/min in whole vector blocks (a NaN stays NaN) and with std::min /
    std::max in the scalar loop over the tail (a NaN becomes 0): with AVX512, a NaN sum at
    position 16 of 17 elements gives 0, at position 15 NaN. The value at a NaN sum depends on the
    element's position modulo the vector width, so those elements are not compared (ours: NaN,
    relu's answer); +-inf sums are (torch gives max and 0 in both loops, and so do we)."""
    if not isinstance(expected, torch.Tensor) or len(the_call.args) < 2:
        return None
    alpha = the_call.kwargs.get("alpha", the_call.args[2] if len(the_call.args) > 2 else 1)
    total = torch.add(torch.as_tensor(the_call.args[0]), torch.as_tensor(the_call.args[1]), alpha=alpha)
    mask = torch.broadcast_to(torch.isnan(total), expected.shape)
    if bool(mask.any()):
        return [mask], "torch's _add_relu turns a NaN sum into NaN in its vector loop and 0 in its scalar tail (position-dependent)"
    return None


def pool_backward_of_other_planes(key: str, the_call: Call, expected: Any) -> Undefined:
    """avg_pool2d_backward / avg_pool3d_backward with a grad_output whose batch or channel sizes
    differ from self's: torch's kernel loops over self's planes and reads grad_output's without
    a check (garbage such as 3.96e-16 for the planes grad_output does not have). Not a valid
    input; we raise, naming both shapes."""
    if len(the_call.args) < 2 or not all(isinstance(t, torch.Tensor) for t in the_call.args[:2]):
        return None
    grad, self = the_call.args[:2]
    n = 2 if key == "aten_avg_pool2d_backward" else 3
    if grad.dim() != self.dim() or grad.shape[:-n] != self.shape[:-n]:
        return None, (f"grad_output {list(grad.shape)} and self {list(self.shape)} differ in batch or channels: torch does not "
                      "check and reads grad_output past its end for the missing planes")  # fmt: skip
    return None


def eig_of_nan(key: str, the_call: Call, expected: Any) -> Undefined:
    """linalg_eig / linalg_eigvals of a matrix holding NaN: MKL's geev rejects it in its balancing
    step ("Intel oneMKL ERROR: Parameter 3 was incorrect on entry to DGEBAL", info < 0), which
    torch does not check: it returns whatever the output buffers hold (finite numbers for a NaN
    matrix; the float32 kernel segfaults instead). No value is computed, so none is compared
    (ours: NaN eigenvalues, as for a matrix holding inf, where torch's kernel works)."""
    if the_call.args and isinstance(the_call.args[0], torch.Tensor) and bool(torch.isnan(the_call.args[0]).any()):
        return None, "MKL's geev rejects a matrix holding NaN (info < 0, unchecked by torch): torch returns its buffers' contents"
    return None


def resize_grown(key: str, the_call: Call, expected: Any) -> Undefined:
    """resize / resize_as (resize_, aten/src/ATen/native/Resize.cpp) reuse the input's storage and
    grow it with `storage.set_nbytes` / a new allocation that is not filled: the result's first
    numel(input) elements (row-major) are the input's, the ones past them are uninitialised
    memory (whatever the allocator hands back). Those are not compared (ours: zeros); the
    others are."""
    if not the_call.args or not isinstance(the_call.args[0], torch.Tensor) or not isinstance(expected, torch.Tensor):
        return None
    mask = (torch.arange(expected.numel()) >= the_call.args[0].numel()).reshape(expected.shape)
    if bool(mask.any()):
        return [mask], "torch's resize leaves the elements past the input's count uninitialised (storage grown, not filled)"
    return None


def pow_exponent_by_position(key: str, the_call: Call, expected: Any) -> Undefined:
    """pow.Tensor_Scalar of a float32 tensor (pow_tensor_scalar_optimized_kernel,
    aten/src/ATen/native/cpu/PowKernel.cpp) takes the exponent as float in its vector loop and as
    double in its scalar loop over the tail: with an exponent float32 cannot hold, 2.0000000882
    is 2 in whole vector blocks (pow(-1, e) = 1) and not an integer in the tail (NaN). On AVX512,
    -ones(17) ** e is 1 at positions 0-15 and NaN at 16; a 5-element tensor is all tail. The
    elements where the two exponents give values farther apart than float32's tolerance depend on
    their position modulo the vector width, so they are not compared (ours: the float32
    exponent, the vector loop's answer); the others are."""
    if len(the_call.args) < 2 or not isinstance(the_call.args[0], torch.Tensor) or not isinstance(expected, torch.Tensor):
        return None
    x, e = the_call.args[0], the_call.args[1]
    if x.dtype != torch.float32 or isinstance(e, bool) or not isinstance(e, float):
        return None
    e32 = float(torch.tensor(e, dtype=torch.float32))
    if e32 == e:
        return None
    tail, vector = torch.pow(x.double(), e).float(), torch.pow(x.double(), e32).float()
    # float32's default tolerance: the elements where the two exponents differ by more (NaN against a number)
    mask = torch.broadcast_to(~torch.isclose(tail, vector, rtol=1.3e-6, atol=1e-5, equal_nan=True), expected.shape)
    if bool(mask.any()):
        return [mask], "torch's float32 pow takes the exponent as float in its vector loop and as double in its tail (position-dependent)"
    return None


def pinv_of_rounding_noise(key: str, the_call: Call, expected: Any) -> Undefined:
    """linalg_pinv (aten/src/ATen/native/BatchLinearAlgebra.cpp: svd, then 1/s for s > max(atol,
    rtol * s_max)) of a matrix with singular values below the dtype's rounding noise of the
    largest, max(m, n) * eps * s_max, when the cutoff lets them through: LAPACK computes such a
    singular value only to within that noise (its absolute error bound), so its reciprocal, and
    with it the whole result, is the noise of that SVD's rounding (6.8e14 in torch against 3e15
    in float64 for rcond = 1e-15 on float32). No implementation can give torch's value; the
    result is not compared. Ordinary cutoffs (the default rtol is exactly that noise floor)
    discard those values and are compared."""
    if not the_call.args or not isinstance(the_call.args[0], torch.Tensor) or not the_call.args[0].is_floating_point():
        return None
    a = the_call.args[0]
    if a.dim() < 2 or a.numel() == 0 or not bool(torch.isfinite(a).all()):
        return None
    m, n = a.shape[-2:]
    eps = torch.finfo(a.dtype).eps
    kwargs = the_call.kwargs
    f64 = torch.float64
    if key in ("aten_linalg_pinv", "aten_linalg_pinv_rcond_tensor"):
        rcond = the_call.args[1] if len(the_call.args) > 1 else kwargs.get("rcond")
        atol, rtol = torch.zeros((), dtype=f64), torch.as_tensor(rcond, dtype=f64)
    else:
        atol = torch.as_tensor(kwargs.get("atol") or 0.0, dtype=f64)
        given = kwargs.get("rtol")
        rtol = torch.as_tensor(given if given is not None else (0.0 if bool((atol > 0).all()) else eps * max(m, n)), dtype=f64)
    s = torch.linalg.svdvals(a.double())
    s_max = s[..., :1]
    noise = max(m, n) * eps * s_max
    cutoff = torch.maximum(atol, rtol * s_max)
    if bool(((s < noise) & (cutoff < noise)).any()):
        return None, "singular values below the dtype's rounding noise pass the cutoff: their reciprocals are the SVD's rounding noise"
    return None


def roi_of_missing_image(key: str, the_call: Call, expected: Any) -> Undefined:
    """roi_align, roi_pool, ps_roi_align and ps_roi_pool (torchvision/csrc/ops/cpu/*_kernel.cpp)
    read the image of each box at `input + roi_batch_ind * channels * height * width` with
    `roi_batch_ind = offset_rois[0]` unchecked: a box whose batch index is not an image of the
    input reads memory past the input (or raises, when that memory is unmapped). Not a valid
    input, so not compared (ours: onnxruntime's Gather raises, naming the index)."""
    if len(the_call.args) < 2 or not all(isinstance(t, torch.Tensor) for t in the_call.args[:2]):
        return None
    images, rois = the_call.args[:2]
    if rois.dim() != 2 or rois.numel() == 0:
        return None
    index = rois[:, 0].to(torch.int64)
    if bool(((index < 0) | (index >= images.shape[0])).any()):
        return None, f"a box's batch index is not an image of the input ({images.shape[0]} images): torchvision reads past it"
    return None


_POLYNOMIALS = [f"aten_special_{name}" for name in (
    *(f"{s}chebyshev_polynomial_{k}" for s in ("", "shifted_") for k in "tuvw"),
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")]  # fmt: skip

RULES: dict[str, Callable[[str, Call, Any], Undefined]] = {
    **dict.fromkeys(_POLYNOMIALS, polynomial_at_nan),
    **dict.fromkeys(["aten_mode", "aten_unique_dim"], sort_with_nan),
    **dict.fromkeys(["aten__add_relu", "aten__add_relu_scalar"], add_relu_of_nan),
    **dict.fromkeys(["aten_avg_pool2d_backward", "aten_avg_pool3d_backward"], pool_backward_of_other_planes),
    **dict.fromkeys(["aten_linalg_eig", "aten_linalg_eigvals", "aten__linalg_eigvals"], eig_of_nan),
    **dict.fromkeys(["aten_resize", "aten_resize_as"], resize_grown),
    "aten_pow_tensor_scalar": pow_exponent_by_position,
    **dict.fromkeys([f"torchvision_{name}" for name in ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool")],
                    roi_of_missing_image),
    **dict.fromkeys(["aten_linalg_pinv", "aten_linalg_pinv_rcond_tensor", "aten_linalg_pinv_atol_rtol_tensor",
                     "aten_linalg_pinv_atol_rtol_float"], pinv_of_rounding_noise),
}
