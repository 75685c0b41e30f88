"""Models with complex tensors and spectral ops exported end to end and checked against torch
eager in onnxruntime at float32 tolerance: a spectrogram front end, an FFT convolution, rotary
embeddings with torch.polar, and complex graph inputs and outputs."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import torchlib
from graph_builder.ir import COMPLEX_KEY
from torchlib.exporter.export import ExportError

ATOL, RTOL = 1e-5, 1.3e-6  # float32: an output passes when within either


def only(outputs):
    """The single output of result(...), whether it comes as a list or as the tensor itself."""
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


def assert_matches(result, *args):
    diffs = result.verify(*args)
    assert diffs
    for d in diffs:
        assert d.ok(ATOL, RTOL), d
    assert result.diagnostics == []


class Spectrogram(nn.Module):
    """STFT -> power -> log-mel (a matmul with a mel filter bank)."""

    def __init__(self, n_fft=400, hop=160, n_mels=16):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, n_mels, generator=torch.Generator().manual_seed(0)))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs() ** 2
        return torch.log(torch.matmul(power.transpose(-1, -2), self.mel).clamp_min(1e-10))


class FFTConv(nn.Module):
    """Linear convolution through the FFT: irfft(rfft(x) * rfft(k))."""

    def forward(self, x, k):
        n = x.shape[-1] + k.shape[-1] - 1
        return torch.fft.irfft(torch.fft.rfft(x, n=n) * torch.fft.rfft(k, n=n), n=n)


class Rotary(nn.Module):
    """LLaMA-style rotary embeddings: torch.polar angles, complex multiply, back to real."""

    def __init__(self, dim=16, seq=12):
        super().__init__()
        freqs = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("angles", torch.outer(torch.arange(seq).float(), freqs))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        freqs_cis = torch.polar(torch.ones_like(self.angles), self.angles)
        xc = torch.view_as_complex(self.proj(x).reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs_cis).flatten(-2)


def test_spectrogram_front_end():
    audio = torch.randn(2, 1600, generator=torch.Generator().manual_seed(1))
    result = torchlib.export(Spectrogram().eval(), (audio,))
    assert_matches(result, audio)
    assert "DFT" in _op_types(result.model_proto.graph)  # (inside the If that sends inputs holding inf/NaN to the exact path)


def _op_types(graph) -> set[str]:
    """Every node's op type, If branches and loop bodies included."""
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attribute in node.attribute:
            if attribute.g.node:
                types |= _op_types(attribute.g)
    return types


def test_spectrogram_with_dynamic_batch():
    # (a dynamic signal length does not export: torch.export's own guard on stft's frame count
    # is violated for some lengths, "1 % (1 + samples // 160) != 0")
    audio = torch.randn(2, 1600, generator=torch.Generator().manual_seed(2))
    result = torchlib.export(Spectrogram().eval(), (audio,), dynamic_shapes={"audio": {0: torch.export.Dim("batch")}})
    more = torch.randn(3, 1600, generator=torch.Generator().manual_seed(3))
    assert_matches(result, more)


def test_fft_convolution():
    g = torch.Generator().manual_seed(0)
    x, k = torch.randn(3, 100, generator=g), torch.randn(3, 9, generator=g)
    result = torchlib.export(FFTConv(), (x, k))
    assert_matches(result, x, k)
    expected = torch.stack([torch.nn.functional.conv1d(x[i].view(1, 1, -1), k[i].flip(0).view(1, 1, -1), padding=8).view(-1) for i in range(3)])
    torch.testing.assert_close(only(result(x, k)), expected, atol=1e-4, rtol=1e-4)


def test_rotary_embeddings_with_polar():
    torch.manual_seed(0)
    x = torch.randn(2, 12, 16)
    assert_matches(torchlib.export(Rotary().eval(), (x,)), x)


class RotaryMovedToDevice(Rotary):
    """Llama 4's rotary step: the complex frequencies moved to the activations' device first, which
    torch.export records as `aten::_assert_tensor_metadata` on a complex tensor."""

    def forward(self, x):
        freqs_cis = torch.polar(torch.ones_like(self.angles), self.angles).to(x.device)
        xc = torch.view_as_complex(self.proj(x).reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs_cis).flatten(-2)


def test_complex_tensor_metadata_assertion():
    torch.manual_seed(0)
    x = torch.randn(2, 12, 16)
    result = torchlib.export(RotaryMovedToDevice().eval(), (x,))
    assert "aten._assert_tensor_metadata.default" in str(result.exported_program.graph)
    assert_matches(result, x)


class ComplexInOut(nn.Module):
    def __init__(self):
        super().__init__()
        # a complex buffer is stored as its real view
        self.register_buffer("phase", torch.polar(torch.ones(8), torch.linspace(0, math.pi, 8)))

    def forward(self, z, x):
        y = torch.fft.fft(z * x * self.phase, dim=-1, norm="ortho")
        return y, y.abs(), torch.view_as_real(y)


def test_complex_graph_inputs_and_outputs():
    g = torch.Generator().manual_seed(0)
    z, x = torch.randn(2, 8, dtype=torch.complex64, generator=g), torch.randn(2, 8, generator=g)
    batch = torch.export.Dim("batch")
    result = torchlib.export(ComplexInOut(), (z, x), dynamic_shapes={"z": {0: batch}, "x": {0: batch}})
    assert_matches(result, z, x)
    graph = result.model_proto.graph
    marked = {v.name: {p.key: p.value for p in v.metadata_props}.get(COMPLEX_KEY) for v in [*graph.input, *graph.output]}
    assert list(marked.values()) == ["complex64", None, "complex64", None, None]
    assert [d.dim_value or d.dim_param for d in graph.input[0].type.tensor_type.shape.dim] == ["batch", 8, 2]
    z5, x5 = torch.randn(5, 8, dtype=torch.complex64, generator=g), torch.randn(5, 8, generator=g)
    y, magnitude, view = result(z5, x5)
    assert y.dtype == torch.complex64 and y.shape == (5, 8)
    torch.testing.assert_close(y, ComplexInOut()(z5, x5)[0])


def test_complex128_model_computes_in_double():
    z = torch.randn(3, 30, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))

    class M(nn.Module):
        def forward(self, z):
            return torch.fft.ifft(torch.sqrt(z) * z.conj(), n=45)

    result = torchlib.export(M(), (z,))
    torch.testing.assert_close(only(result(z)), M()(z), rtol=1e-12, atol=1e-12)


def test_stft_istft_round_trip():
    class RoundTrip(nn.Module):
        def forward(self, x):
            window = torch.hann_window(64, device=x.device)
            spec = torch.stft(x, 64, 16, window=window, return_complex=True)
            return torch.istft(spec * 0.5, 64, 16, window=window, length=x.shape[-1])

    x = torch.randn(2, 500, generator=torch.Generator().manual_seed(0))
    result = torchlib.export(RoundTrip(), (x,))
    assert_matches(result, x)
    torch.testing.assert_close(only(result(x)), x * 0.5, atol=1e-5, rtol=1e-5)


def test_op_without_complex_variant_is_refused_by_name():
    class M(nn.Module):
        def forward(self, z):
            return torch.cumsum(z, 0) * 2

    with pytest.raises(ExportError, match="aten::cumsum has no complex variant"):
        torchlib.export(M(), (torch.randn(3, dtype=torch.complex64),))


def _real(x):
    return x.real if x.is_complex() else x


FFT_FUNCTIONS = {
    "fft": lambda x: torch.fft.fft(x, n=10, norm="ortho"), "ifft": lambda x: torch.fft.ifft(x),
    "rfft": lambda x: torch.fft.rfft(_real(x)), "irfft": lambda x: torch.fft.irfft(x, n=13),
    "hfft": lambda x: torch.fft.hfft(x, norm="forward"), "ihfft": lambda x: torch.fft.ihfft(_real(x)),
    "fft2": lambda x: torch.fft.fft2(x), "ifft2": lambda x: torch.fft.ifft2(x, s=(3, 7)),
    "rfft2": lambda x: torch.fft.rfft2(_real(x)), "irfft2": lambda x: torch.fft.irfft2(x),
    "hfft2": lambda x: torch.fft.hfft2(x), "ihfft2": lambda x: torch.fft.ihfft2(_real(x)),
    "fftn": lambda x: torch.fft.fftn(x, dim=(0, 2)), "ifftn": lambda x: torch.fft.ifftn(x),
    "rfftn": lambda x: torch.fft.rfftn(_real(x), norm="ortho"), "irfftn": lambda x: torch.fft.irfftn(x, s=(4, 4)),
    "hfftn": lambda x: torch.fft.hfftn(x), "ihfftn": lambda x: torch.fft.ihfftn(_real(x)),
    "fftshift": lambda x: torch.fft.fftshift(torch.fft.fft(x)), "ifftshift": lambda x: torch.fft.ifftshift(x, dim=-1),
}  # fmt: skip


class Apply(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
@pytest.mark.parametrize("name", list(FFT_FUNCTIONS))
def test_every_torch_fft_function_exports(name, dtype):
    x = torch.randn(2, 5, 6, dtype=dtype, generator=torch.Generator().manual_seed(0))
    assert_matches(torchlib.export(Apply(FFT_FUNCTIONS[name]), (x,)), x)
