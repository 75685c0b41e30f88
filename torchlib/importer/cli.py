"""`python -m torchlib import model.onnx -o model.pt2`: import an ONNX file and save it as a
torch.export program (torch.export.save); `python -m torchlib import-conformance`: the rate on
onnx's node tests.

Before importing, every node (subgraphs included) is checked: the ops without a converter (and
without an ONNX function body to expand) are printed, each with its count and node names, and the
command exits with 2. Nothing is dropped silently.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict

import onnx
import torch

from torchlib.importer.registry import all_nodes


def unsupported_ops(model: onnx.ModelProto) -> dict[tuple[str, str, int], list[str]]:
    """(domain, op type, opset) -> node names, for each op the importer has no converter for and
    that has no ONNX function body to expand."""
    from torchlib.importer import registry
    from torchlib.importer.converter import _schema

    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    local = {(f.domain, f.name) for f in model.functions}
    missing: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    graphs = [model.graph] + [onnx.helper.make_graph(list(f.node), f.name, [], []) for f in model.functions]
    for graph in graphs:
        for node in all_nodes(graph):
            domain = "" if node.domain == "ai.onnx" else node.domain
            opset = opsets.get(domain, 1)
            if registry.lookup(domain, node.op_type, opset) or (domain, node.op_type) in local:
                continue
            schema = _schema(node.op_type, opset, domain)
            if schema is not None and (schema.has_function or schema.has_context_dependent_function):
                continue
            missing[(domain or "ai.onnx", node.op_type, opset)].append(node.name or "(unnamed)")
    return dict(missing)


def example_inputs(model: onnx.ModelProto, size: int,
                    fixed: dict[str, int] | None = None) -> tuple[tuple[torch.Tensor, ...], list[dict[int, object]]]:
    """Random inputs from the graph's declared types (symbolic dims set to `size`), and for each
    input the dims to keep dynamic (the symbolic ones). A symbolic dim named in `fixed` takes
    that value and stays static (a name that only stands for a constant, like onnxruntime-genai's
    kv_cache_dim)."""
    fixed = fixed or {}
    from torchlib.importer.converter import torch_dtype

    initialized = {t.name for t in model.graph.initializer}
    args, dynamic = [], []
    for value in model.graph.input:
        if value.name in initialized:
            continue
        tensor_type = value.type.tensor_type
        dtype = torch_dtype(tensor_type.elem_type, f"graph input {value.name!r}")
        dims = [d.dim_value if d.HasField("dim_value") else fixed.get(d.dim_param, size) for d in tensor_type.shape.dim]
        dyn: dict[int, object] = {i: torch.export.Dim.AUTO for i, d in enumerate(tensor_type.shape.dim)
                                  if not d.HasField("dim_value") and d.dim_param not in fixed}
        if dtype.is_floating_point:
            args.append(torch.randn(dims, dtype=dtype))
        elif dtype == torch.bool:
            args.append(torch.ones(dims, dtype=dtype))
        else:
            args.append(torch.zeros(dims, dtype=dtype))
        dynamic.append(dyn)
    return tuple(args), dynamic


def import_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchlib import",
                                     description="import an ONNX model as a torch.export program (.pt2)")
    parser.add_argument("model", help="the .onnx file (external data next to it)")
    parser.add_argument("-o", "--output", help="the .pt2 file to write (default: the model's name with .pt2)")
    parser.add_argument("--size", type=int, default=2, help="the value given to symbolic dims in the example inputs")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                        help="give the symbolic dim NAME the fixed value VALUE (repeatable), e.g. kv_cache_dim=64")
    parser.add_argument("--static", action="store_true", help="export with static shapes (no dynamic dims)")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks")
    ns = parser.parse_args(argv)
    fixed = {}
    for item in ns.dim:
        name, _, value = item.partition("=")
        if not value.isdigit():
            parser.error(f"--dim {item!r}: expected NAME=VALUE with a non-negative integer VALUE")
        fixed[name] = int(value)
    from torchlib.importer import OnnxImportError, import_onnx

    model = onnx.load(ns.model, load_external_data=False)
    missing = unsupported_ops(model)
    if missing:
        print(f"cannot import {ns.model}: {sum(len(v) for v in missing.values())} nodes of {len(missing)} ops have "
              "no converter:", file=sys.stderr)
        for (domain, op, opset), names in sorted(missing.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
            print(f"  {domain}:{op} (opset {opset}) x{len(names)}: {shown}", file=sys.stderr)
        return 2
    try:
        gm = import_onnx(ns.model)
        args, dynamic = example_inputs(model, ns.size, fixed)
        shapes = None if ns.static or not any(dynamic) else tuple(dynamic)
        program = torch.export.export(gm, args, dynamic_shapes=shapes)
    except OnnxImportError as e:
        if ns.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        if ns.debug:
            raise
        print(f"error: the model imported, but torch.export could not capture it: {type(e).__name__}: "
              f"{str(e).splitlines()[0] if str(e) else ''}\n  (try --static; --debug shows the traceback)",
              file=sys.stderr)
        return 3
    output = ns.output or os.path.splitext(ns.model)[0] + ".pt2"
    torch.export.save(program, output)
    params = sum(p.numel() for p in gm.parameters())
    print(f"wrote {output}: {len(gm.graph.nodes)} FX nodes, {params:,} parameters, "
          f"{len(program.graph.nodes)} nodes in the exported program")
    return 0


def conformance_main(argv: list[str]) -> int:
    from torchlib.importer.node_tests import main

    return main(argv)
