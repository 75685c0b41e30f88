"""python -m codegen {aten,opset,check,coverage}: see codegen/README.md."""

from __future__ import annotations

import json
import sys

from codegen.commands import parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from codegen import files

    if args.command in ("aten", "opset"):
        from codegen import aten, onnx_opset

        if args.command == "aten":
            produced, command = aten.generate_current(), aten.COMMAND
        else:
            produced, command = onnx_opset.generate(args.opset), onnx_opset.command(args.opset)
        root = args.root or files.ROOT
        changed = files.write(produced, command, root)
        lines = sum(text.count("\n") for text in produced.values())
        print(f"{len(produced)} files, {lines} lines; {len(changed)} changed" + "".join(f"\n  {c}" for c in changed))
        return 0
    if args.command == "check":
        from codegen import check

        problems, notes = check.run()
        for note in notes:
            print("note:", note, end="\n\n")
        for problem in problems:
            print(problem, end="\n\n")
        if problems:
            print(f"{len(problems)} problem(s)")
            return 1
        print("OK: every registered function matches its schema; generated files are up to date"
              + (f" ({len(notes)} note(s) on the installed torch)" if notes else ""))
        return 0
    import torchlib
    from codegen import coverage, native

    registry = torchlib.get_registry()
    if args.op:
        where = {e.name: f"{e.function.__module__}.{e.function.__qualname__}" for e in registry.items() if not e.complex}
        print("\n".join(coverage.describe_op(name, native.load(), where) for name in args.op))
        return 0
    report = coverage.coverage(native.load(), registry.names())
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(coverage.format_report(report, args.missing))
        from codegen import check

        for note in check.torch_notes():  # the installed torch is not the one the stubs are of
            print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
