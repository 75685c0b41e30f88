"""codegen: keeps torchlib in step with PyTorch (native_functions.yaml) and ONNX (onnx.defs).

    python -m codegen aten                 typed stubs for ATen overloads without a function
    python -m codegen opset [--opset 23]   the typed `op` namespace of graph_builder
    python -m codegen check                registered functions match their ATen schemas;
                                           generated files are up to date
    python -m codegen coverage [--json]    which ATen overloads have functions

Modules: native (the YAML through torchgen), signature (schema -> Python signature), aten,
onnx_opset, check, coverage, files (headers and writing). See codegen/README.md.
"""
