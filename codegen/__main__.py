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
    from codegen import coverage, decomposed, native
    from torchlib.exporter.export import decomposition_table

    registry = torchlib.get_registry()
    overloads = native.load()
    names = set(registry.names())
    missing = [o.qualified_name for o in overloads if o.qualified_name not in names]
    routes = decomposed.routes(missing, decomposition_table(registry))
    if args.op:
        where = {e.name: f"{e.function.__module__}.{e.function.__qualname__}" for e in registry.items() if not e.complex}
        wanted = {o.qualified_name for name in args.op for o in coverage.matching(name, overloads)}
        measured = {n: decomposed.measure(n, r) for n, r in routes.items() if n in wanted}
        print("\n".join(coverage.describe_op(name, overloads, where, measured) for name in args.op))
        return 0
    if args.nodes:
        listed = set(coverage.coverage(overloads, names)[args.missing]["missing"]) if args.missing != "none" else set()
        routes = {n: decomposed.measure(n, r) if n in listed else r for n, r in routes.items()}
    report = coverage.coverage(overloads, names, routes)
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
