"""Run the default test suite and the demo on one combination of torch, onnx, onnxruntime,
numpy and Python, in a venv built for it from the package registry.

    python tools/compat.py --torch 2.11.0
    python tools/compat.py --torch 2.10.0 --onnxruntime 1.22.0 --onnx 1.18.0 --numpy 1.26.4
    python tools/compat.py --torch 2.14.1 --python /path/to/python3.12
    python tools/compat.py --torch 2.12.1 --tests "tests/ops tests/codegen -k 'not slow_thing'"

--tests runs a part of the suite instead (pytest arguments, as one string): the summary line
names them, so a table row says what ran.

torch is always pinned (pip never picks a torch here). onnx, onnxruntime and numpy are pinned
when given, else pip picks them for that torch (within pyproject.toml's bounds). The test tools
follow constraints.txt; its torch/onnx/onnxruntime/numpy pins are left out. The project is
installed editable from this checkout, so a cached venv always tests the code in front of you.

On a terminal a bar follows the test run (pytest's own percentage); --no-progress hides it.

Venvs are kept under --cache (default $TORCHLIB_COMPAT_CACHE or ~/.cache/torchlib-compat), one per
combination; a second run reuses it. Delete them there when done (a CUDA build of torch is
several GB). The last line printed is the summary for the support table (docs/supported_versions.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's graph_builder.progress

from graph_builder.progress import progress  # noqa: E402

STACK = ("torch", "onnx", "onnxruntime", "numpy")
# built for one torch release each: their constraints.txt pins (the pinned torch's) are left out too,
# pip picks the one that matches the torch under test
TORCH_TIED = ("torchvision",)
# left out too when --numpy is given: ml_dtypes 0.6 needs numpy 2, pip picks one for numpy 1.26
NUMPY_TIED = ("ml_dtypes",)
VERSIONS = (
    "import json, platform, numpy, onnx, onnxruntime, torch; "
    "print(json.dumps({'python': platform.python_version(), 'torch': torch.__version__, 'onnx': onnx.__version__, "
    "'onnxruntime': onnxruntime.__version__, 'numpy': numpy.__version__}))"
)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", shlex.join(cmd), flush=True)
    return subprocess.run(cmd, **kwargs)


def _venv(args: argparse.Namespace, py_version: str) -> Path:
    name = f"py{py_version}-torch{args.torch}"
    for package, flag in (("onnx", "onnx"), ("onnxruntime", "ort"), ("numpy", "np")):
        if getattr(args, package):
            name += f"-{flag}{getattr(args, package)}"
    return Path(args.cache).expanduser() / name


def _constraints_without_stack(numpy_given: bool) -> str:
    """constraints.txt less the pins of the stack under test (and of the packages tied to it), as a temporary file."""
    left_out = STACK + TORCH_TIED + (NUMPY_TIED if numpy_given else ())
    lines = [line for line in (ROOT / "constraints.txt").read_text().splitlines()
             if re.split(r"[=<>!~ ]", line.strip(), maxsplit=1)[0].lower() not in left_out]
    handle = tempfile.NamedTemporaryFile("w", suffix="-constraints.txt", delete=False)
    handle.write("\n".join(lines) + "\n")
    handle.close()
    return handle.name


def _run_tests(cmd: list[str], show_progress: bool, **kwargs) -> subprocess.CompletedProcess:
    """Run pytest, reading its output as it comes to move a bar to the percentage it prints at
    the end of each line of dots ("[ 42%]"); stderr is merged into stdout."""
    print("+", shlex.join(cmd), flush=True)
    lines = []
    with progress(total=100, desc="tests", unit="%", enabled=show_progress) as bar, \
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if done := re.search(r"\[\s*(\d+)%\]\s*$", line):
                bar.update(int(done.group(1)) - bar.n)
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(lines), "")


def _counts(output: str) -> dict[str, int]:
    """pytest's closing line ("12 failed, 11790 passed, 40 skipped, 30 xfailed in 300.1s")."""
    closing = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line) and " in " in line]
    if not closing:
        return {}
    return {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)", closing[-1])}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch", required=True, help="exact torch version, e.g. 2.11.0")
    parser.add_argument("--onnx", help="exact onnx version (default: pip's pick)")
    parser.add_argument("--onnxruntime", help="exact onnxruntime version (default: pip's pick)")
    parser.add_argument("--numpy", help="exact numpy version (default: pip's pick)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the venv is made from (default: this one)")
    parser.add_argument("--cache", default=os.environ.get("TORCHLIB_COMPAT_CACHE", "~/.cache/torchlib-compat"), help="where the venvs are kept")
    parser.add_argument("--workers", default="2", help="pytest -n (default 2)")
    parser.add_argument("--junit", help="also write pytest's JUnit XML here (to list the failures)")
    parser.add_argument("--tests", help="pytest arguments for a part of the suite, as one string (default: the whole default suite)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar for the test run (it shows only on a terminal)")
    args = parser.parse_args(argv)

    py_version = subprocess.run([args.python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                check=True, capture_output=True, text=True).stdout.strip()
    venv = _venv(args, py_version)
    python = str(venv / "bin" / "python")
    if not venv.exists():
        _run([args.python, "-m", "venv", str(venv)], check=True)
    pins = [f"torch=={args.torch}"] + [f"{p}=={getattr(args, p)}" for p in STACK[1:] if getattr(args, p)]
    constraints = _constraints_without_stack(numpy_given=bool(args.numpy))
    try:
        _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", constraints,
              *pins, "-e", f"{ROOT}[test,bench]"], check=True)
    finally:
        os.unlink(constraints)
    versions = json.loads(subprocess.run([python, "-c", VERSIONS], check=True, capture_output=True, text=True).stdout)
    if not versions["torch"].startswith(args.torch):
        print(f"compat: asked for torch {args.torch}, the venv has {versions['torch']}", file=sys.stderr)
        return 2

    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    pytest = [python, "-m", "pytest", "-n", args.workers, "-p", "no:cacheprovider"]
    if args.junit:
        pytest.append(f"--junitxml={args.junit}")
    if args.tests:
        pytest += shlex.split(args.tests)
    tests = _run_tests(pytest, not args.no_progress, cwd=ROOT, env=env)
    print(tests.stdout[-8000:])
    demo = _run([python, "-m", "torchlib", "demo"], cwd=ROOT, env=env, capture_output=True, text=True)
    print(demo.stdout[-2000:], demo.stderr[-2000:], sep="\n")

    counts = _counts(tests.stdout)
    stack = ", ".join(f"{k} {versions[k]}" for k in ("python", *STACK))
    figures = ", ".join(f"{n} {k}" for k, n in counts.items()) or f"pytest exited {tests.returncode} without a summary"
    command = shlex.join(["python", "tools/compat.py", *argv])
    print(f"compat {datetime.date.today()}: {stack}: {figures}; demo {'ok' if demo.returncode == 0 else 'FAILED'} ({command})")
    return 0 if tests.returncode == 0 and demo.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
