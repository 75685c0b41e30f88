"""Schema -> Python signature: names, `*`, annotations and defaults, on tricky schemas and on every
schema of native_functions.yaml (against torch's own schema parser)."""

import inspect
import math

import pytest
import torch

from codegen import native, signature
from graph_builder import types


def sig(func: str) -> signature.PySignature:
    return signature.signature(native.parse_schema(func))


def as_python(func: str):
    """The stub function for a schema, compiled."""
    s = sig(func)
    source = signature.format_bracketed("", "def f(", s.items(), f") -> {s.returns}:") + "\n    pass\n"
    namespace: dict = {}
    exec("\n".join(signature.import_lines(source)) + "\n" + source, namespace)
    return namespace["f"]


def params(func: str) -> dict[str, signature.Param]:
    return {p.py_name: p for p in sig(func).params}


@pytest.mark.parametrize(
    "func, expected",
    [
        ("relu(Tensor self) -> Tensor", "(self)"),
        ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "(self, other, *, alpha=1)"),
        ("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", "(self, other, alpha=1)"),
        ("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", "(self, indices)"),
        (
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
            "(self, other, *, alpha=1, out)",
        ),
        ("std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
         "(self, dim=None, *, correction=None, keepdim=False)"),
        ("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0) -> Tensor",
         "(input, weight, bias=None, stride=(1,), padding=(0,))"),
        ("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0) -> Tensor",
         "(self, kernel_size, stride=(), padding=(0, 0))"),
        ('mse(Tensor self, str reduction="mean", float p=inf, int dim=-1) -> Tensor',
         '(self, reduction="mean", p=math.inf, dim=-1)'),
        ("sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
         "(self, dim, keepdim=False, *, dtype=None)"),
        ("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]", "(self, split_sizes, dim=0)"),
        ("randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None) -> Tensor",
         "(high, size, *, dtype=INT64, layout=None)"),
        ("mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor", "(self, target, reduction=1)"),
        ("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
         '(self, *, memory_format="contiguous_format")'),
        ("norm(Tensor self, int[1] dim=[-2,-1], float eps=1, Scalar beta=1.0) -> Tensor", "(self, dim=(-2, -1), eps=1.0, beta=1.0)"),
    ],
)
def test_signature_text(func, expected):
    assert sig(func).text() == expected


def test_annotations_follow_the_documented_mapping():
    p = params(
        "f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int e, SymInt f, int[] g, SymInt[2] h, float i, "
        "Scalar j, Scalar? k, bool l, str m, ScalarType n, ScalarType? o, Layout? p, Device? q, "
        "MemoryFormat? r, Generator? s, Dimname t, Dimname[1] u, float[]? v, Tensor(a!) w) -> Tensor"
    )
    assert {name: q.annotation for name, q in p.items()} == {
        "a": "TTensor", "b": "TTensor | None", "c": "Sequence[TTensor]", "d": "Sequence[TTensor | None]",
        "e": "int", "f": "int", "g": "Sequence[int]", "h": "Sequence[int]", "i": "float", "j": "float",
        "k": "float | None", "l": "bool", "m": "str", "n": "DType", "o": "DType | None", "p": "Any",
        "q": "Any", "r": "Any", "s": "Any", "t": "str", "u": "Sequence[str]", "v": "Sequence[float] | None",
        "w": "TTensor",
    }  # fmt: skip


@pytest.mark.parametrize(
    "func, returns",
    [
        ("f(Tensor self) -> Tensor", "TTensor"),
        ("f(Tensor self) -> (Tensor, Tensor)", "tuple[TTensor, TTensor]"),
        ("f(Tensor(a!) self) -> ()", "None"),
        ("f(Tensor self) -> Tensor[]", "Sequence[TTensor]"),
        ("f(Tensor self) -> SymInt", "int"),
        ("f(Tensor self) -> Scalar", "float"),
    ],
)
def test_return_annotations(func, returns):
    assert sig(func).returns == returns


def test_keywords_are_escaped_with_a_trailing_underscore():
    fn = as_python("f(Tensor self, Scalar from, Scalar to, float lambda=0.5, bool is=False) -> Tensor")
    assert list(inspect.signature(fn).parameters) == ["self", "from_", "to", "lambda_", "is_"]
    assert signature.python_name("match") == "match"  # a soft keyword is a valid name


def test_defaults_are_python_values():
    p = params(
        'f(Tensor self, float p=inf, float q=-inf, str s="mean", str t=\'"\\\'\\\\\', int[1] dim=[], '
        "int[1] one=1, SymInt[3] three=0, int[] pair=[0,1], Scalar alpha=1, Scalar beta=0.5, "
        "ScalarType? dtype=None, bool keepdim=True) -> Tensor"
    )
    assert p["p"].default == math.inf and p["q"].default == -math.inf
    assert p["s"].default == "mean"
    assert p["t"].default == "\"'\\"
    assert p["dim"].default == () and p["one"].default == (1,) and p["three"].default == (0, 0, 0)
    assert p["pair"].default == (0, 1)
    assert p["alpha"].default == 1 and type(p["alpha"].default) is int
    assert p["beta"].default == 0.5
    assert p["dtype"].default is None and p["keepdim"].default is True


def test_generated_defaults_evaluate_to_the_same_values():
    func = (
        'f(Tensor self, float p=inf, str s="mean", str t=\'"\\\'\\\\\', int[1] dim=[], SymInt[2] stride=1, '
        "ScalarType? dtype=long, MemoryFormat memory_format=contiguous_format, int reduction=Mean) -> Tensor"
    )
    fn = as_python(func)
    got = {k: v.default for k, v in inspect.signature(fn).parameters.items() if k != "self"}
    assert got == {k: v.default for k, v in params(func).items() if k != "self"}
    assert got["dtype"] is types.INT64


@pytest.mark.parametrize(
    "func, value, equal",
    [
        ("f(Tensor self, *, Scalar alpha=1) -> Tensor", 1.0, True),
        ("f(Tensor self, *, Scalar alpha=1) -> Tensor", 1, True),
        ("f(Tensor self, *, Scalar alpha=1) -> Tensor", 2, False),
        ("f(Tensor self, int[1] stride=1) -> Tensor", 1, True),
        ("f(Tensor self, int[1] stride=1) -> Tensor", (1,), True),
        ("f(Tensor self, int[1] stride=1) -> Tensor", [1], True),
        ("f(Tensor self, int[2] stride=1) -> Tensor", (1, 1), True),
        ("f(Tensor self, int[2] stride=1) -> Tensor", 1, True),
        ("f(Tensor self, int[2] stride=1) -> Tensor", (1,), False),
        ("f(Tensor self, int[1] dim=[]) -> Tensor", (), True),
        ("f(Tensor self, int[1] dim=[]) -> Tensor", None, False),
        ("f(Tensor self, str? rounding_mode=None) -> Tensor", None, True),
        ("f(Tensor self, str? rounding_mode=None) -> Tensor", "floor", False),
        ('f(Tensor self, str reduce="mean") -> Tensor', "mean", True),
        ("f(Tensor self, bool keepdim=False) -> Tensor", False, True),
        ("f(Tensor self, bool keepdim=False) -> Tensor", 0, False),
        ("f(Tensor self, *, ScalarType? dtype=None) -> Tensor", None, True),
        ("f(Tensor self, *, ScalarType? dtype=long) -> Tensor", types.INT64, True),
        ("f(Tensor self, *, ScalarType? dtype=long) -> Tensor", types.INT32, False),
        ("f(Tensor self, *, ScalarType? dtype=long) -> Tensor", torch.int64, False),
        ("f(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", None, True),
        ("f(Tensor self, *, MemoryFormat memory_format=contiguous_format) -> Tensor", torch.contiguous_format, True),
        ("f(Tensor self, *, MemoryFormat memory_format=contiguous_format) -> Tensor", "contiguous_format", True),
        ("f(Tensor self, *, Layout? layout=None) -> Tensor", None, True),
        ("f(Tensor self, float p=inf) -> Tensor", float("inf"), True),
        ("f(Tensor self, float p=inf) -> Tensor", 2.0, False),
        ("f(Tensor self, int reduction=Mean) -> Tensor", 1, True),
    ],
)
def test_defaults_equal(func, value, equal):
    schema = native.parse_schema(func)
    arg = schema.arguments.flat_all[-1]
    p = signature.signature(schema).params[-1]
    assert signature.defaults_equal(p, arg.type, value) is equal


def test_dimname_reads_as_str():
    schema = native.parse_schema("f(Tensor self, Dimname[1] dim, Dimname? name=None) -> Tensor")
    assert [str(a.type) for a in schema.arguments.flat_all] == ["Tensor", "str[1]", "str?"]


def _torch_default(value):
    """torch._C's parsed default, in the form signature.default_value gives."""
    if isinstance(value, list):
        return tuple(value)
    return value


# torch._C gives c10 enum values for these defaults.
_ENUM_DEFAULTS = {("ScalarType", 4): types.INT64, ("MemoryFormat", 0): "contiguous_format"}


def test_every_yaml_schema_maps_like_torchs_parser():
    """Names, order, keyword-only markers and defaults for every overload of native_functions.yaml,
    against torch._C.parse_schema; and the generated signatures compile."""
    mismatches = []
    sources = []
    for o in native.load():
        ours = signature.signature(o.schema)
        theirs = torch._C.parse_schema("aten::" + o.func).arguments
        if [p.name for p in ours.params] != [a.name for a in theirs]:
            mismatches.append(f"{o.name}: names {[p.name for p in ours.params]}")
            continue
        for p, a in zip(ours.params, theirs):
            if p.kwarg_only != a.kwarg_only:
                mismatches.append(f"{o.name}: {p.name} keyword-only {p.kwarg_only}")
            if a.default_value is None:  # no default, or a None default: torch does not tell
                continue
            want = _torch_default(a.default_value)
            if isinstance(want, int):
                want = _ENUM_DEFAULTS.get((p.type.rstrip("?"), want), want)
            if not p.has_default or not signature._same(p.default, want):
                mismatches.append(f"{o.name}: {p.name} default {p.default!r}, torch {a.default_value!r}")
        sources.append(signature.format_bracketed("", f"def f{len(sources)}(", ours.items(), f") -> {ours.returns}:") + "\n    pass\n")
    assert not mismatches, "\n".join(mismatches)
    compile("\n".join(sources), "signatures", "exec")
    assert len(sources) > 2000
