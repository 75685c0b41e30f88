"""python -m torchlib {demo, export, conformance, genai, import, import-conformance} ..."""

from __future__ import annotations

import sys

USAGE = """usage: python -m torchlib COMMAND [args]

commands:
  demo          export the built-in CNN and GPT-style decoder, verify them in onnxruntime
  export        export MODULE:FACTORY to an ONNX file (--verify to compare with torch)
  conformance   run the OpInfo conformance harness and write its report
  genai         write onnxruntime-genai's folder (model.onnx, genai_config.json, tokenizer) for a
                Hugging Face model folder
  import        import an ONNX file as a torch.export program (.pt2); lists what cannot be imported
  import-conformance  run onnx's node tests through the importer and print the pass rate
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "demo":
        from torchlib.exporter.cli import demo_main

        return demo_main(rest)
    if command == "export":
        from torchlib.exporter.cli import export_main

        return export_main(rest)
    if command == "genai":
        from torchlib.genai.cli import genai_main

        return genai_main(rest)
    if command == "conformance":
        from torchlib.conformance import main as conformance_main

        return conformance_main(rest)
    if command == "import":
        from torchlib.importer.cli import import_main

        return import_main(rest)
    if command == "import-conformance":
        from torchlib.importer.cli import conformance_main as import_conformance_main

        return import_conformance_main(rest)
    print(f"unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
