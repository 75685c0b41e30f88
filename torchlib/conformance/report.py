"""The conformance report: a function x dtype matrix of passed, expected-failure, failed and
skipped samples, as markdown (terminal), a self-contained HTML page, or JSON."""

from __future__ import annotations

import dataclasses
import html
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from torchlib.conformance.engine import FAILED, PASSED, SKIPPED, XFAIL, XPASS, JobResult

LEGEND = "✅ all run samples pass · 🟡 expected failures (xN) · ❌ unexpected failures (FN) or passes (UN) · ⬜ every sample skipped (sN) · blank: dtype not supported"


@dataclasses.dataclass
class Report:
    """Everything the writers need: the results and what the harness knew of the table."""

    results: list[JobResult]
    dtypes: list[str]  # column order
    functions: dict[str, tuple[str, ...]]  # function key -> ATen overloads, the rows in order
    untested: dict[str, str]  # function key -> why it is not run
    problems: list[str]  # table problems (missing / stale entries, unknown OpInfos)
    missing: list[str] = dataclasses.field(default_factory=list)  # functions without an entry
    seconds: float = 0.0
    max_samples: int | None = None
    figures: dict[str, int] = dataclasses.field(default_factory=dict)  # Harness.figures()

    def cell(self, function: str, dtype: str) -> JobResult | None:
        return self._cells.get((function, dtype))

    def __post_init__(self) -> None:
        self._cells = {(r.function, r.dtype): r for r in self.results}

    def totals(self) -> Counter:
        counts: Counter = Counter()
        for r in self.results:
            for s in r.samples:
                counts[s.outcome] += 1
            if r.error:
                counts["job errors"] += 1
        return counts

    @property
    def ok(self) -> bool:
        return not self.problems and not self.unreached() and all(r.ok for r in self.results)

    def unreached(self) -> list[str]:
        """Cells ("function dtype") run on every sample that got none (route "aten" or
        "pre_dispatch" found no call to their overloads): a gap in the table. A bounded run
        (max_samples) checks this by routing alone (`--coverage`, test_every_cell_gets_samples)."""
        if self.max_samples is not None:
            return []
        return [f"{r.function} {r.dtype}" for r in self.results if not r.samples and not r.error]

    def problem_lines(self) -> list[str]:
        lines = list(self.problems)
        lines += [f"{c}: no sample of its OpInfos reaches it; name other OpInfos or give samples of its own" for c in self.unreached()]
        for r in self.results:
            lines += r.problems()
        return lines

    def summary(self) -> str:
        t = self.totals()
        run = sum(1 for f in self.functions if any(self.cell(f, d) for d in self.dtypes))
        parts = [
            f"{len(self.functions)} functions ({run} run, {len(self.untested)} not tested by reason)",
            f"{len(self.results)} function x dtype cells",
            f"samples: {t[PASSED]} passed, {t[XFAIL]} expected failures, {t[FAILED]} failed, "
            f"{t[XPASS]} unexpected passes, {t[SKIPPED]} skipped",
        ]
        if t["job errors"]:
            parts.append(f"{t['job errors']} cells could not make their samples")
        if self.problems:
            parts.append(f"{len(self.problems)} table problems")
        if self.figures:
            f = self.figures
            parts.append(f"table: {f['XFail rules']} XFail rules on {f['functions with XFails']} functions, "
                         f"{f['TorchLessAccurate rules']} TorchLessAccurate rules on {f['functions with TorchLessAccurate']}")
        scope = "all samples" if self.max_samples is None else f"at most {self.max_samples} samples per OpInfo and dtype"
        parts.append(f"{scope}, {self.seconds:.0f} s")
        return "; ".join(parts)


def _status(r: JobResult) -> tuple[str, str]:
    """(css class, short text without the symbol) of one cell."""
    passed, xfail, skipped = r.count(PASSED), r.count(XFAIL), r.count(SKIPPED)
    failed, xpass = r.count(FAILED), r.count(XPASS)
    extras = "".join(
        f" {label}{n}" for label, n in (("F", failed), ("U", xpass), ("x", xfail), ("s", skipped)) if n
    )
    if r.error:
        return "fail", "error"
    if failed or xpass:
        return "fail", f"{passed}{extras}"
    if xfail:
        return "xfail", f"{passed}{extras}"
    if passed:
        return "pass", f"{passed}{extras}"
    return "skip", extras.strip() or "no samples"


_SYMBOL = {"pass": "✅", "xfail": "🟡", "fail": "❌", "skip": "⬜"}


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


# -- markdown ---------------------------------------------------------------------------------------
def to_markdown(report: Report) -> str:
    out = ["# OpInfo conformance", "", report.summary(), "", LEGEND, ""]
    out.append("| function | " + " | ".join(report.dtypes) + " |")
    out.append("|---|" + "---|" * len(report.dtypes))
    for function, aten in report.functions.items():
        if function in report.untested or function in report.missing:
            cells = ["not tested" if function in report.untested else "❌ no entry"] + [""] * (len(report.dtypes) - 1)
        else:
            cells = []
            for d in report.dtypes:
                r = report.cell(function, d)
                css, text = _status(r) if r else ("", "")
                cells.append(f"{_SYMBOL[css]} {text}" if r else "")
        out.append(f"| {function} | " + " | ".join(cells) + " |")
    problems = report.problem_lines()
    if problems:
        out += ["", f"## Unexpected results ({len(problems)})", ""]
        out += [f"- {_first_line(p, 400)}" for p in problems[:200]]
        if len(problems) > 200:
            out.append(f"- ... and {len(problems) - 200} more")
    xfails = _expected_failures(report)
    if xfails:
        out += ["", "## Expected failures", ""]
        for (function, reason), (dtypes, n) in xfails.items():
            out.append(f"- {function} [{', '.join(dtypes)}] ({n} samples): {reason}")
    if report.untested:
        out += ["", "## Not tested", ""]
        out += [f"- {f}: {reason}" for f, reason in report.untested.items()]
    return "\n".join(out) + "\n"


def _expected_failures(report: Report) -> dict[tuple[str, str], tuple[list[str], int]]:
    grouped: dict[tuple[str, str], tuple[list[str], int]] = {}
    for r in report.results:
        for s in r.samples:
            if s.outcome == XFAIL:
                dtypes, n = grouped.get((r.function, s.message), ([], 0))
                if r.dtype not in dtypes:
                    dtypes.append(r.dtype)
                grouped[(r.function, s.message)] = (dtypes, n + 1)
    return grouped


# -- HTML -------------------------------------------------------------------------------------------
_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
.summary { margin: .3em 0 1em; }
.totals span { display: inline-block; padding: .2em .6em; margin-right: .4em; border-radius: 4px; }
.totals .pass { background: #d4f4d4; } .totals .xfail { background: #fbeeb8; } .totals .fail { background: #f6c4c4; } .totals .skip { background: #e6e6e6; }
.verdict-ok { color: #1a7f37; } .verdict-bad { color: #c62828; }
.legend { color: #444; max-width: 60em; }
section, details { margin: 1em 0; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ddd; padding: 2px 6px; vertical-align: top; }
th { background: #f4f4f4; position: sticky; top: 0; z-index: 1; }
td.name { font-family: ui-monospace, monospace; max-width: 24em; }
td.name small { color: #777; font-family: system-ui, sans-serif; white-space: normal; }
td.pass { background: #d4f4d4; } td.xfail { background: #fbeeb8; } td.fail { background: #f6c4c4; }
td.skip { background: #e6e6e6; } td.none { background: #fff; } td.untested { background: #eee; color: #666; font-style: italic; }
td.cell { min-width: 6em; white-space: nowrap; }
details summary { cursor: pointer; }
details ul { white-space: normal; width: 46em; margin: .3em 0; padding-left: 1.2em; font-size: 12px; }
details li { margin-bottom: .4em; }
.msg { font-family: ui-monospace, monospace; white-space: pre-wrap; display: block; max-height: 12em; overflow: auto; background: #fff8; }
.sample { color: #555; }
.problems li { font-family: ui-monospace, monospace; white-space: pre-wrap; }
label { margin-left: 1em; }
"""

_SCRIPT = """
function filterRows(box) {
  document.querySelectorAll('tr.ok').forEach(r => { r.style.display = box.checked ? 'none' : ''; });
}
"""

_LABELS = {FAILED: "failed", XPASS: "unexpected pass", XFAIL: "expected failure", SKIPPED: "skipped"}


def to_html(report: Report) -> str:
    t = report.totals()
    e = html.escape
    rows = []
    for function, aten in report.functions.items():
        name = f'<td class="name">{e(function)}<br><small>{e(", ".join(a.removeprefix("aten::") for a in aten))}</small></td>'
        if function in report.untested:
            rows.append(f'<tr class="ok">{name}<td class="untested" colspan="{len(report.dtypes)}">not tested: {e(report.untested[function])}</td></tr>')
            continue
        cells, row_ok = [], True
        for d in report.dtypes:
            r = report.cell(function, d)
            if r is None:
                cells.append('<td class="cell none"></td>')
                continue
            css, text = _status(r)
            row_ok &= css == "pass"
            cells.append(f'<td class="cell {css}" title="{e(function)} {d}: {len(r.samples)} samples, {r.seconds:.1f} s">{_cell_details(r, text)}</td>')
        if function in report.missing:
            row_ok = False
            cells = [f'<td class="fail" colspan="{len(report.dtypes)}">no entry in the expectations table</td>']
        rows.append(f'<tr class="{"ok" if row_ok else "attention"}">{name}{"".join(cells)}</tr>')
    problems = report.problem_lines()
    sections = []
    if problems:
        items = "".join(f"<li>{e(p)}</li>" for p in problems[:1000])
        more = f"<li>... and {len(problems) - 1000} more</li>" if len(problems) > 1000 else ""
        sections.append(f'<details{" open" if len(problems) <= 20 else ""}><summary><b>Unexpected results ({len(problems)})</b></summary><ul class="problems">{items}{more}</ul></details>')
    xfails = _expected_failures(report)
    if xfails:
        items = "".join(f"<li><code>{e(f)}</code> [{e(', '.join(ds))}] ({n} samples): {e(reason)}</li>" for (f, reason), (ds, n) in xfails.items())
        sections.append(f"<details><summary><b>Expected failures ({len(xfails)} reasons)</b></summary><ul>{items}</ul></details>")
    header = "".join(f"<th>{e(d)}</th>" for d in report.dtypes)
    verdict = "every outcome as expected" if report.ok else "unexpected results"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>torchlib OpInfo conformance</title>
<style>{_CSS}</style><script>{_SCRIPT}</script></head>
<body>
<h1>torchlib OpInfo conformance: <span class="{"verdict-ok" if report.ok else "verdict-bad"}">{verdict}</span></h1>
<div class="summary">{e(report.summary())}</div>
<div class="totals">
<span class="pass">{t[PASSED]} passed</span>
<span class="xfail">{t[XFAIL]} expected failures</span>
<span class="fail">{t[FAILED]} failed, {t[XPASS]} unexpected passes</span>
<span class="skip">{t[SKIPPED]} skipped</span>
<label><input type="checkbox" onchange="filterRows(this)"> hide rows where every sample passes</label>
</div>
<p class="legend">Each cell counts the samples of one function and dtype: the number that passed (eager and traced),
then <b>F</b> failed, <b>U</b> passed although expected to fail, <b>x</b> expected failures, <b>s</b> skipped.
Green: all pass; yellow: expected failures; red: unexpected results; grey: all skipped; blank: the OpInfo does not
support the dtype. Click a cell for its failures and skips, each with the reason and the sample.</p>
<table><thead><tr><th>function</th>{header}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
{"".join(sections)}
</body></html>
"""


def _cell_details(r: JobResult, text: str) -> str:
    e = html.escape
    notable = [s for s in r.samples if s.outcome != PASSED]
    if not notable and not r.error:
        return e(text)
    items = [f'<li><b>error</b> <span class="msg">{e(r.error)}</span></li>'] if r.error else []
    for s in notable[:100]:
        modes = ", ".join(f"{m}: {_LABELS.get(o, o)}" for m, (o, _) in s.modes.items())
        items.append(
            f"<li><b>sample {s.index}</b> {e(_LABELS[s.outcome])}{f' ({e(modes)})' if modes else ''}"
            f'<span class="msg">{e(s.message)}</span><span class="sample">{e(s.description)}</span></li>'
        )
    if len(notable) > 100:
        items.append(f"<li>... {len(notable) - 100} more</li>")
    return f"<details><summary>{e(text)}</summary><ul>{''.join(items)}</ul></details>"


# -- JSON -------------------------------------------------------------------------------------------
def to_json(report: Report) -> str:
    data: dict[str, Any] = {
        "summary": report.summary(),
        "totals": dict(report.totals()),
        "problems": report.problems,
        "untested": report.untested,
        "functions": {k: list(v) for k, v in report.functions.items()},
        "results": [dataclasses.asdict(r) for r in report.results],
    }
    return json.dumps(data, indent=1)


def slowest(results: Sequence[JobResult], n: int = 15) -> list[str]:
    return [f"{r.seconds:7.1f} s  {r.function} {r.dtype} ({len(r.samples)} samples)" for r in sorted(results, key=lambda r: -r.seconds)[:n]]
