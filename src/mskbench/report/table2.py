"""The report's Table II: the leaderboard as HTML, laid out as ``mskbench leaderboard`` prints it."""

from __future__ import annotations

from mskbench.catalog import FAMILIES
from mskbench.report import data as D
from mskbench.report.html import esc


def leaderboard_table(board: dict[str, dict], task_counts: dict[str, str], privileged=None) -> str:
    """Table II as HTML: metric rows, a column per method (the paper's shaded), row best in bold; the privileged
    methods (``privileged``; None: by name, :func:`mskbench.eval.leaderboard.privileged_columns`) after the
    others, marked †. As ``mskbench leaderboard`` prints it (:func:`mskbench.eval.leaderboard.format_leaderboard`):
    a success rate, robustness score or coverage over fewer tasks than the suite's says over how many,
    "(2 of 22)", and only the values over the most tasks compete for bold; beside SR, the share of successful episodes that then fell."""
    from mskbench.eval.leaderboard import (AVERAGED_CAPTION, PRIVILEGED_CAPTION, averaged_note, best_marks,
                                           fell_cell, privileged_columns, robustness_counts)

    methods, marked = privileged_columns(board, privileged)

    def label(name: str, key: str) -> str:
        n = task_counts.get(key)
        return f"{name} ({n})" if n is not None else name

    def td(m: str, text: str, bold: bool = False, note: str = "") -> str:
        cls = (["paper"] if m.endswith(" (paper)") else []) + (["best"] if bold else [])
        extra = f' <span class="of">{esc(note.strip())}</span>' if note else ""
        return f'<td class="{" ".join(cls)}">{esc(text)}{extra}</td>'

    def cells(values: list[float | None], key: str, counts: list) -> list[str]:
        shown = [None if v is None else f"{v:.2f}" for v in values]
        marks = best_marks([None if x is None else float(x) for x in shown], counts)
        return [td(m, "—" if x is None else x, bold, "" if x is None else averaged_note(n, key))
                for m, x, bold, n in zip(methods, shown, marks, counts)]

    head = "<th>Group</th><th>Metric</th>" + "".join(
        f'<th class="{"paper" if m.endswith(" (paper)") else ""}">{esc(m)}{" †" * (m in marked)}</th>'
        for m in methods)
    rows = []
    noted = False
    for i, fam in enumerate((*FAMILIES, "all")):
        name = label("Average" if fam == "all" else fam.capitalize(), fam)
        group = "SR (%) ↑" if i == 0 else ""
        row = cells([board[m]["success_rate"][fam] for m in methods], fam,
                    [(board[m].get("tasks_averaged") or {}).get(fam) for m in methods])
        noted = noted or any('class="of"' in c for c in row)
        rows.append(f'<tr data-row="sr-{fam}"><td class="group">{group}</td><td class="l">{esc(name)}</td>'
                    + "".join(row) + "</tr>")
    rows.append('<tr data-row="fell-after-success"><td class="group">Then fell (%)</td><td class="l">of successes'
                "</td>" + "".join(td(m, fell_cell(board[m].get("fell_after_success"))) for m in methods) + "</tr>")
    for i, kind in enumerate((*D.SWEEP_TYPES, "average")):
        group = "Robust. ↑" if i == 0 else ""
        row = cells([board[m]["robustness"][kind] for m in methods], kind,
                    [robustness_counts(board[m], kind) for m in methods])
        noted = noted or any('class="of"' in c for c in row)
        rows.append(f'<tr data-row="robustness-{kind}"><td class="group">{group}</td><td class="l">'
                    f'{esc(kind.capitalize())}</td>' + "".join(row) + "</tr>")
    covs = [board[m]["coverage"] for m in methods]
    marks = best_marks([k / n if n else None for k, n in covs], [n for _k, n in covs])
    rows.append('<tr data-row="coverage"><td class="group">Coverage ↑</td><td class="l">SR &gt; 0</td>'
                + "".join(td(m, f"{k}/{n}", bold, averaged_note(n, "all"))
                          for m, (k, n), bold in zip(methods, covs, marks)) + "</tr>")
    notes = ([AVERAGED_CAPTION] if noted else []) + ([PRIVILEGED_CAPTION] if marked else [])
    caption = "; ".join(["Full-suite leaderboard (Table II)", *map(esc, notes)])
    return (f'<table class="leaderboard" id="leaderboard"><caption>{caption}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
