"""The com.microsoft ops (and ai.onnx RotaryEmbedding-23) through the importer against
onnxruntime's own CPU kernels: each test builds a one-node model, runs it in an onnxruntime
session (graph optimizations off, so the kernel itself runs) and through import_onnx on the same
random inputs.

Tolerances: float32 ops compare at rtol=atol=1e-5 (the kernels reduce in another order); ops
that reduce over a whole row or a K-long dot product (layer norms, MatMulNBits, attention) at
rtol=atol=1e-4."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto
from onnx import helper as h

from torchlib.importer import OnnxImportError, import_onnx

MS = "com.microsoft"
F32 = TensorProto.FLOAT


def _model(op: str, inputs: dict[str, np.ndarray | None], outputs: list[str], domain: str = MS,
           initializers: dict[str, np.ndarray] | None = None, opset: int = 21, **attrs: Any) -> onnx.ModelProto:
    """One `op` node; inputs given None are omitted (empty name); initializers are constants."""
    initializers = initializers or {}
    names = [n if v is not None or n in initializers else "" for n, v in inputs.items()]
    while names and not names[-1]:
        names.pop()
    node = h.make_node(op, names, outputs, domain=domain, **attrs)
    graph_inputs = [h.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                    for n, v in inputs.items() if v is not None]
    graph_outputs = [h.make_tensor_value_info(o, F32, None) for o in outputs if o]
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in initializers.items()]
    graph = h.make_graph([node], op, graph_inputs, graph_outputs, initializer=inits)
    opsets = [h.make_opsetid("", opset), h.make_opsetid(MS, 1)]
    return h.make_model(graph, opset_imports=opsets, ir_version=10)


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float, atol: float,
          outputs: list[int] | None = None) -> list[torch.Tensor]:
    want = _ort(model, feeds)
    gm = import_onnx(model)
    graph_inputs = [i.name for i in model.graph.input]
    with torch.no_grad():
        got = gm(*[torch.from_numpy(feeds[n]) for n in graph_inputs])
    got = list(got) if isinstance(got, tuple) else [got]
    for i in outputs if outputs is not None else range(len(want)):
        torch.testing.assert_close(got[i], torch.from_numpy(want[i]), rtol=rtol, atol=atol,
                                   msg=lambda m, i=i: f"output {i}: {m}")
    return got


def _randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("simplified", [False, True])
def test_skip_layer_norm(bias, simplified):
    x, skip, gamma = _randn(2, 5, 32), _randn(2, 5, 32, seed=1), _randn(32, seed=2)
    feeds = {"x": x, "skip": skip, "gamma": gamma}
    if not simplified:
        feeds["beta"] = _randn(32, seed=3)
    feeds["bias"] = _randn(32, seed=4) if bias else None  # type: ignore[assignment]
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    outputs = ["y", "", "inv", "sum"] if simplified else ["y", "mean", "inv", "sum"]
    model = _model(op, feeds, outputs, epsilon=1e-6)
    check(model, {k: v for k, v in feeds.items() if v is not None}, 1e-4, 1e-4)


def test_skip_simplified_refuses_mean():
    feeds = {"x": _randn(1, 2, 8), "skip": _randn(1, 2, 8), "gamma": _randn(8)}
    model = _model("SkipSimplifiedLayerNormalization", feeds, ["y", "mean"])
    with pytest.raises(OnnxImportError, match="output 1 \\(mean\\)"):
        import_onnx(model)


@pytest.mark.parametrize("domain", ["", MS])
def test_simplified_layer_norm(domain):
    """onnxruntime registers it in ai.onnx only; the com.microsoft spelling is compared with that."""
    feeds = {"x": _randn(2, 3, 16), "scale": _randn(16, seed=1)}
    want = _ort(_model("SimplifiedLayerNormalization", feeds, ["y", "inv"], domain="", epsilon=1e-5), feeds)
    gm = import_onnx(_model("SimplifiedLayerNormalization", feeds, ["y", "inv"], domain=domain, epsilon=1e-5))
    with torch.no_grad():
        got = gm(torch.from_numpy(feeds["x"]), torch.from_numpy(feeds["scale"]))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, torch.from_numpy(w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bias", [False, True])
def test_fast_gelu(bias):
    feeds = {"x": _randn(3, 40) * 3, "bias": _randn(40, seed=1) if bias else None}
    check(_model("FastGelu", feeds, ["y"]), {k: v for k, v in feeds.items() if v is not None}, 1e-5, 1e-5)


def test_bias_gelu():
    feeds = {"x": _randn(3, 40) * 3, "bias": _randn(40, seed=1)}
    check(_model("BiasGelu", feeds, ["y"]), feeds, 1e-5, 1e-5)


@pytest.mark.parametrize("alpha", [1.702, 1.0])
def test_quick_gelu(alpha):
    feeds = {"x": _randn(3, 40) * 3}
    check(_model("QuickGelu", feeds, ["y"], alpha=alpha), feeds, 1e-5, 1e-5)


@pytest.mark.parametrize(("a_shape", "b_shape", "attrs"), [
    ((3, 4), (4, 5), {}),
    ((2, 3, 4), (4, 5), {"alpha": 0.5}),
    ((2, 4, 3), (2, 5, 4), {"transA": 1, "transB": 1}),
    ((3, 2, 4), (2, 4, 5), {"transBatchA": 1}),
    ((4, 2, 3), (2, 5, 4), {"transBatchA": 1, "transA": 1, "transB": 1}),
    ((2, 3, 4), (5, 2, 4), {"transBatchB": 1, "transB": 1}),
    ((2, 3, 4), (4, 2, 5), {"transBatchB": 1}),
])  # fmt: skip
def test_fused_matmul(a_shape, b_shape, attrs):
    feeds = {"a": _randn(*a_shape), "b": _randn(*b_shape, seed=1)}
    check(_model("FusedMatMul", feeds, ["y"], **attrs), feeds, 1e-5, 1e-5)


def _quantize_nbits(w: np.ndarray, bits: int, block: int, rng: np.random.Generator,
                    zp_kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Random packed weights [N, blocks, blob], scales [N * blocks] and zero points of `zp_kind`
    (none, packed uint8, float): the op only reads them, so any values test it."""
    n, k = w.shape
    blocks = -(-k // block)
    q = rng.integers(0, 1 << bits, size=(n, blocks, block)).astype(np.uint8)
    per = 8 // bits
    packed = np.zeros((n, blocks, block // per), np.uint8)
    for i in range(per):
        packed |= q[..., i::per] << (i * bits)
    scales = rng.uniform(0.01, 0.1, size=n * blocks).astype(np.float32)
    if zp_kind == "none":
        return packed, scales, None
    if zp_kind == "float":
        return packed, scales, rng.uniform(0, (1 << bits) - 1, size=n * blocks).astype(np.float32)
    zq = rng.integers(0, 1 << bits, size=(n, -(-blocks // per) * per)).astype(np.uint8)
    zp = np.zeros((n, zq.shape[1] // per), np.uint8)
    for i in range(per):
        zp |= zq[:, i::per] << (i * bits)
    return packed, scales, zp.reshape(-1)


@pytest.mark.parametrize(("bits", "block", "k", "zp_kind", "bias"), [
    (4, 32, 64, "none", False),
    (4, 32, 96, "uint8", False),  # 3 blocks: the zero points' last byte is half used
    (4, 16, 80, "uint8", True),
    (4, 64, 100, "none", False),  # K not a multiple of block_size
    (4, 128, 256, "float", False),
    (8, 32, 64, "uint8", False),
    (2, 16, 64, "uint8", False),
])  # fmt: skip
def test_matmul_nbits(bits, block, k, zp_kind, bias):
    rng = np.random.default_rng(bits * 1000 + block + k)
    n = 24
    b, scales, zp = _quantize_nbits(np.zeros((n, k)), bits, block, rng, zp_kind)
    a = rng.standard_normal((2, 3, k)).astype(np.float32)
    feeds = {"a": a}
    inits = {"b": b, "scales": scales}
    inputs: dict[str, Any] = {"a": a, "b": None, "scales": None}
    if zp is not None:
        inits["zp"] = zp
        inputs["zp"] = None
    if bias:
        inputs.setdefault("zp", None)
        inputs["g_idx"] = None
        inits["bias"] = rng.standard_normal(n).astype(np.float32)
        inputs["bias"] = None
    model = _model("MatMulNBits", inputs, ["y"], initializers=inits, K=k, N=n, bits=bits, block_size=block,
                   accuracy_level=0)
    check(model, feeds, 1e-4, 1e-4)


def _gqa_model(b: int, s: int, n: int, nkv: int, hd: int, past: int, packed: bool, rotary: bool,
               elem: int = F32, **attrs: Any) -> tuple[onnx.ModelProto, list[str]]:
    f = lambda name, *shape: h.make_tensor_value_info(name, elem, list(shape))  # noqa: E731
    inputs = [f("query", b, s, (n + 2 * nkv) * hd if packed else n * hd)]
    names = ["query", "", ""] if packed else ["query", "key", "value"]
    if not packed:
        inputs += [f("key", b, s, nkv * hd), f("value", b, s, nkv * hd)]
    names += ["past_key", "past_value", "seqlens_k", "total_sequence_length"]
    inputs += [f("past_key", b, nkv, past, hd), f("past_value", b, nkv, past, hd),
               h.make_tensor_value_info("seqlens_k", TensorProto.INT32, [b]),
               h.make_tensor_value_info("total_sequence_length", TensorProto.INT32, [])]
    if rotary:
        names += ["cos_cache", "sin_cache"]
        inputs += [f("cos_cache", 64, hd // 2), f("sin_cache", 64, hd // 2)]
    node = h.make_node("GroupQueryAttention", names, ["out", "present_key", "present_value"], domain=MS,
                       num_heads=n, kv_num_heads=nkv, do_rotary=int(rotary), **attrs)
    outs = [h.make_tensor_value_info(o, elem, None) for o in node.output]
    graph = h.make_graph([node], "gqa", inputs, outs)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid(MS, 1)], ir_version=10)
    return model, [i.name for i in inputs]


GQA_CASES = {
    # name: (batch, seq, heads, kv heads, head size, past buffer, seqlens_k, total, packed, rotary, attrs)
    "prompt": (2, 5, 4, 2, 16, 0, [4, 4], 5, False, False, {}),
    "prompt_packed_rotary": (1, 6, 4, 1, 16, 0, [5], 6, True, True, {}),
    "prompt_rotary_interleaved": (2, 4, 2, 2, 32, 0, [3, 3], 4, False, True, {"rotary_interleaved": 1}),
    "decode_past": (2, 1, 4, 2, 16, 7, [7, 4], 8, False, False, {}),
    "decode_rotary": (3, 1, 4, 2, 16, 6, [6, 2, 5], 7, False, True, {}),
    "decode_shared_buffer": (2, 1, 4, 2, 16, 12, [7, 3], 8, False, True, {}),  # past buffer > total
    "decode_packed_rotary": (2, 1, 6, 2, 16, 5, [5, 3], 6, True, True, {}),
    "subsequent_prompt": (1, 3, 4, 2, 16, 5, [7], 8, False, True, {}),
    "local_window": (1, 8, 2, 1, 16, 0, [7], 8, False, False, {"local_window_size": 3}),
    "local_window_decode": (2, 1, 2, 1, 16, 9, [9, 6], 10, False, True, {"local_window_size": 4}),
    "softcap_scale": (2, 5, 4, 2, 16, 0, [4, 4], 5, False, False, {"softcap": 2.0, "scale": 0.3}),
    "smooth_softmax": (1, 1, 4, 2, 16, 4, [4], 5, False, False, {"smooth_softmax": 1}),
}


def _run_gqa_case(name: str, dtype: type, tol: float) -> None:
    b, s, n, nkv, hd, past, seqlens, total, packed, rotary, attrs = GQA_CASES[name]
    elem = F32 if dtype == np.float32 else TensorProto.FLOAT16
    model, names = _gqa_model(b, s, n, nkv, hd, past, packed, rotary, elem, **attrs)
    rng = np.random.default_rng(len(name))
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == elem:
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    feeds["seqlens_k"] = np.array(seqlens, np.int32)
    feeds["total_sequence_length"] = np.array(total, np.int32)
    if rotary:
        angles = np.arange(64)[:, None] * (10000 ** (-np.arange(hd // 2) / (hd // 2)))[None]
        feeds["cos_cache"], feeds["sin_cache"] = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    want = _ort(model, feeds)
    gm = import_onnx(model)
    with torch.no_grad():
        got = gm(*[torch.from_numpy(feeds[i]) for i in names])
    # every present slot is compared; the output row of a padded query (none here) would not be
    for i, (g, w) in enumerate(zip(got, want)):
        torch.testing.assert_close(g, torch.from_numpy(w), rtol=tol, atol=tol, msg=lambda m, i=i: f"output {i}: {m}")


@pytest.mark.parametrize("name", sorted(GQA_CASES))
def test_group_query_attention(name):
    _run_gqa_case(name, np.float32, 1e-4)


@pytest.mark.parametrize("name", ["prompt_packed_rotary", "decode_rotary", "local_window_decode"])
def test_group_query_attention_float16(name):
    """float16 in and out (both compute in float32 inside): within 2 units in the last place."""
    _run_gqa_case(name, np.float16, 2e-3)


def test_group_query_attention_refuses_what_it_does_not_compute():
    model, _ = _gqa_model(1, 1, 2, 1, 16, 4, False, False, qk_output=1)
    with pytest.raises(OnnxImportError, match="qk_output"):
        import_onnx(model)


def _rotary_caches(positions: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    angles = np.arange(positions)[:, None] * (10000 ** (-np.arange(half) / half))[None]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("layout", ["3d", "4d", "3d_partial", "offset"])
def test_rotary_embedding_ms(interleaved, layout):
    b, s, n, hd = 2, 5, 3, 16
    rd = 8 if layout == "3d_partial" else hd
    cos, sin = _rotary_caches(32, rd // 2)
    rng = np.random.default_rng(interleaved)
    x = rng.standard_normal((b, n, s, hd) if layout == "4d" else (b, s, n * hd)).astype(np.float32)
    pos = np.array([3], np.int64) if layout == "offset" else rng.integers(0, 32, size=(b, s)).astype(np.int64)
    feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
    attrs = {"interleaved": interleaved}
    if layout == "3d_partial":
        attrs.update(num_heads=n, rotary_embedding_dim=rd)
    check(_model("RotaryEmbedding", feeds, ["y"], **attrs), feeds, 1e-5, 1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("layout", ["3d", "4d", "4d_partial", "no_position_ids"])
def test_rotary_embedding_opset23(interleaved, layout):
    b, s, n, hd = 2, 5, 3, 16
    rd = 8 if layout == "4d_partial" else hd
    cos, sin = _rotary_caches(32, rd // 2)
    rng = np.random.default_rng(interleaved + 7)
    x = rng.standard_normal((b, s, n * hd) if layout == "3d" else (b, n, s, hd)).astype(np.float32)
    pos = rng.integers(0, 32, size=(b, s)).astype(np.int64)
    feeds: dict[str, Any] = {"x": x, "cos": cos, "sin": sin, "pos": pos}
    attrs: dict[str, Any] = {"interleaved": interleaved}
    if layout == "3d":
        attrs["num_heads"] = n
    if layout == "4d_partial":
        attrs["rotary_embedding_dim"] = rd
    if layout == "no_position_ids":
        feeds = {"x": x, "cos": cos[pos], "sin": sin[pos]}
    model = _model("RotaryEmbedding", feeds, ["y"], domain="", opset=23, **attrs)
    check(model, feeds, 1e-5, 1e-5)


def test_matmul_nbits_float16():
    """float16 activations and scales: both dequantize and multiply in float32, then round to
    float16 (within 2 units in the last place of outputs around 1)."""
    rng = np.random.default_rng(16)
    n, k, block = 24, 64, 32
    b, scales, zp = _quantize_nbits(np.zeros((n, k)), 4, block, rng, "uint8")
    a = rng.standard_normal((3, k)).astype(np.float16)
    inits = {"b": b, "scales": scales.astype(np.float16), "zp": zp}
    model = _model("MatMulNBits", {"a": a, "b": None, "scales": None, "zp": None}, ["y"], initializers=inits,
                   K=k, N=n, bits=4, block_size=block, accuracy_level=0)  # fmt: skip
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    want = _ort(model, {"a": a})[0]
    with torch.no_grad():
        got = import_onnx(model)(torch.from_numpy(a))
    torch.testing.assert_close(got, torch.from_numpy(want), rtol=2e-3, atol=2e-3)
