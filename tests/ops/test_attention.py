import pytest
import torch
import torch.nn.functional as F

from graph_builder import GraphBuilder, op, types
from torchlib.ops import attention as at
from torchlib.testing import check_function, run_model, run_traced, trace

TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-7, 1e-7), torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2)}
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def sdpa(*args, **kwargs):
    return at.aten_scaled_dot_product_attention(*args, **kwargs)


def check(args, kwargs, dtype):
    """Against torch's own op, eager and traced; the traced graph declares torch's dtype and shape.
    bfloat16 is checked traced only, entering and leaving the graph as float32: onnxruntime's
    Python API can neither take nor return bfloat16 arrays."""
    expected = torch.ops.aten.scaled_dot_product_attention(*args, **kwargs)
    rtol, atol = TOL[dtype]
    if dtype == torch.bfloat16:
        bf16 = [isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args]

        def wrapped(*a):
            a = [op.Cast(x, to=types.BFLOAT16.onnx) if b else x for x, b in zip(a, bf16)]
            y = sdpa(*a, **kwargs)
            assert y.dtype is types.BFLOAT16
            return op.Cast(y, to=types.FLOAT.onnx)

        got = run_traced(wrapped, *(a.float() if b else a for a, b in zip(args, bf16)))
        torch.testing.assert_close(got, expected.float(), rtol=rtol, atol=atol)
        return
    check_function(sdpa, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    model, _, _ = trace(sdpa, args, kwargs)
    (declared,) = model.graph.output
    assert types.from_onnx(declared.type.tensor_type.elem_type) == types.from_torch(expected.dtype)
    assert [d.dim_value for d in declared.type.tensor_type.shape.dim] == list(expected.shape)


def qkv(dtype, batch=(2, 4), q_len=5, kv_len=7, head_dim=8, v_dim=6, kv_heads=None):
    kv_batch = batch if kv_heads is None else (*batch[:-1], kv_heads)
    return (torch.randn(*batch, q_len, head_dim).to(dtype), torch.randn(*kv_batch, kv_len, head_dim).to(dtype),
            torch.randn(*kv_batch, kv_len, v_dim).to(dtype))  # fmt: skip


def fully_masked_row(mask):
    mask = mask.clone()
    mask[..., 1, :] = False if mask.dtype == torch.bool else float("-inf")
    return mask


def lowest_masked_row(keep: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    keep[0] = False
    return torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, torch.finfo(dtype).min)


MASKS = {
    "none": lambda dtype, L, S: None,
    "bool_2d": lambda dtype, L, S: torch.rand(L, S) > 0.3,
    "bool_4d": lambda dtype, L, S: torch.rand(2, 4, L, S) > 0.3,
    "bool_broadcast_rows": lambda dtype, L, S: torch.rand(2, 1, 1, S) > 0.3,
    "bool_row": lambda dtype, L, S: torch.rand(1, S) > 0.3,
    "bool_fully_masked_row": lambda dtype, L, S: fully_masked_row(torch.rand(L, S) > 0.3),
    "float_2d": lambda dtype, L, S: torch.randn(L, S).to(dtype),
    "float_3d": lambda dtype, L, S: torch.randn(4, L, S).to(dtype),
    "float_fully_masked_row": lambda dtype, L, S: fully_masked_row(torch.randn(L, S).to(dtype)),
    # transformers' masks: 0 / finfo.min, a left-padded row masked everywhere (torch: uniform
    # weights there; onnxruntime reads float32's lowest as -inf and would give zeros)
    "finfo_min_masked_row": lambda dtype, L, S: lowest_masked_row(torch.rand(L, S) > 0.3, dtype),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_masks(dtype, mask, is_causal):
    q, k, v = qkv(dtype)
    attn_mask = MASKS[mask](dtype, 5, 7)
    if attn_mask is None or not is_causal:
        check((q, k, v, attn_mask, 0.0, is_causal), {}, dtype)
        return
    # torch's op rejects a mask with is_causal=True (only its fused CPU kernel takes both, and
    # combines them); the function combines them as that kernel and ONNX Attention do
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    combined = attn_mask & causal if attn_mask.dtype == torch.bool else attn_mask.masked_fill(~causal, float("-inf"))
    expected = torch.ops.aten.scaled_dot_product_attention(q, k, v, combined)
    rtol, atol = TOL[dtype]
    if dtype != torch.bfloat16:
        check_function(sdpa, (q, k, v, attn_mask, 0.0, True), expected=expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("q_len, kv_len", [(5, 7), (7, 5), (6, 6), (1, 4)])
def test_sdpa_causal_lengths(dtype, q_len, kv_len):
    q, k, v = qkv(dtype, q_len=q_len, kv_len=kv_len)
    check((q, k, v, None, 0.0, True), {}, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_scale(dtype, scale):
    q, k, v = qkv(dtype)
    check((q, k, v), {"scale": scale}, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_sdpa_gqa(dtype, is_causal, kv_heads):
    q, k, v = qkv(dtype, batch=(2, 4), q_len=6, kv_len=6, kv_heads=kv_heads)
    mask = torch.rand(6, 6) > 0.3
    check((q, k, v, None, 0.0, is_causal), {"enable_gqa": True}, dtype)
    check((q, k, v, mask), {"enable_gqa": True}, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("batch", [(), (3,), (2, 3, 2)], ids=["2d", "3d", "5d"])
def test_sdpa_other_ranks(dtype, batch):
    q, k, v = qkv(dtype, batch=batch)
    check((q, k, v), {}, dtype)
    check((q, k, v, None, 0.0, True), {}, dtype)
    check((q, k, v, torch.rand(*batch, 5, 7) > 0.2), {}, dtype)


def test_sdpa_broadcast_batch_and_heads():
    q = torch.randn(2, 4, 5, 8)
    k, v = torch.randn(1, 1, 7, 8), torch.randn(1, 1, 7, 6)
    check((q, k, v), {}, torch.float32)


@pytest.mark.parametrize("shapes", [((0, 2, 3, 4), (0, 2, 5, 4)), ((1, 2, 0, 4), (1, 2, 5, 4)), ((1, 2, 3, 4), (1, 2, 0, 4))],
                         ids=["batch", "q_len", "kv_len"])  # fmt: skip
def test_sdpa_empty(shapes):
    q_shape, kv_shape = shapes
    q, k, v = torch.randn(q_shape), torch.randn(kv_shape), torch.randn(kv_shape)
    check((q, k, v), {}, torch.float32)


def test_sdpa_float32_mask_with_float16_inputs():
    q, k, v = qkv(torch.float16)
    check((q, k, v, torch.randn(5, 7)), {}, torch.float16)


def test_sdpa_dropout_takes_the_decomposition_with_a_dropout():
    q, k, v = qkv(torch.float32)
    y = sdpa(q, k, v, None, 1.0)  # p = 1 drops every weight: zeros, as torch gives
    torch.testing.assert_close(y, torch.zeros_like(y))


def test_sdpa_uses_onnx_attention_for_4d_float():
    q, k, v = qkv(torch.float32)
    model, _, _ = trace(sdpa, (q, k, v, torch.rand(5, 7) > 0.3, 0.0, False))
    assert [n.op_type for n in model.graph.node if n.op_type == "Attention"] == ["Attention"]
    model, _, _ = trace(sdpa, qkv(torch.float64))
    assert "Attention" not in [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("dims", [["b", 4, "l", 8], ["b", "h", "l", "e"]])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sdpa_dynamic_shapes(dims, dtype):
    q, k, v = qkv(dtype, q_len=5, kv_len=5, v_dim=8)
    mask = torch.rand(5, 5) > 0.3
    g = GraphBuilder()
    elem = types.from_torch(dtype)
    inputs = [g.input(name, elem, dims) for name in ("q", "k", "v")]
    m = g.input("m", types.BOOL, ["l", "l"])
    with g:
        y1 = sdpa(*inputs, None, 0.0, True)
        y2 = sdpa(*inputs, m)
    names = (g.output(y1, "y1").name, g.output(y2, "y2").name)
    got = run_model(g.to_model(), {"q": q.numpy(), "k": k.numpy(), "v": v.numpy(), "m": mask.numpy()}, names)
    torch.testing.assert_close(got[0], F.scaled_dot_product_attention(q, k, v, is_causal=True))
    torch.testing.assert_close(got[1], F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


# -- regression (issue 13): broadcasting ranks, float16 accumulation, float64 scale ---------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("is_causal", [False, True])
def test_rank3_query_with_rank4_key_value(dtype, is_causal):
    # torch broadcasts a (heads, L, E) query against (N, heads, S, E) keys; the transpose assumed rank 3
    q, k, v = torch.randn(3, 5, 8, dtype=dtype), torch.randn(2, 3, 7, 8, dtype=dtype), torch.randn(2, 3, 7, 8, dtype=dtype)
    check((q, k, v), {"is_causal": is_causal}, dtype)


def test_float16_accumulates_in_float32():
    # (2, 8, 128, 64) inputs x3: error against float64 0.046 before (float16 accumulation), torch's 0.0043
    q, k, v = (torch.randn(2, 8, 128, 64) * 3 for _ in range(3))
    half = [t.half() for t in (q, k, v)]
    reference = F.scaled_dot_product_attention(*[t.double() for t in half])
    ours = (sdpa(*half).double() - reference).abs().max().item()
    theirs = (F.scaled_dot_product_attention(*half).double() - reference).abs().max().item()
    assert ours <= 1.5 * theirs, (ours, theirs)


def test_float64_scale_survives_onnxruntime_fusion():
    # onnxruntime fuses a scalar Mul next to MatMul into FusedMatMul with a float32 alpha
    q, k, v = (torch.randn(2, 3, 4, 8, dtype=torch.float64) for _ in range(3))
    expected = F.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3], scale=0.3)
    torch.testing.assert_close(run_traced(sdpa, q, k[:, :, :3], v[:, :, :3], scale=0.3), expected, rtol=1e-12, atol=1e-12)
    q3 = q[0]
    expected = F.scaled_dot_product_attention(q3, k, v)  # the decomposed path
    torch.testing.assert_close(run_traced(sdpa, q3, k, v), expected, rtol=1e-12, atol=1e-12)
