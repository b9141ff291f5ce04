"""The report page: one self-contained ``index.html`` (styles, scripts and figures inline).

The page needs no server and no network: its styles and scripts are inline, every figure is an
inline ``<svg>`` (the same drawing as the PNG and SVG files beside it), and a Content-Security-
Policy forbids any request except files beside it (video links). Two small inline scripts:

* the first, in ``<head>``, records every script error, unhandled promise rejection, failed
  resource load and ``console.error`` call in ``<pre id="js-errors" data-count="N">``, so a
  headless browser's ``--dump-dom`` shows whether the page ran cleanly;
* the last, at the end of ``<body>``, checks that every ``<figure class="report-figure">`` holds a
  drawn SVG (non-zero size, at least one shape) and writes the counts into
  ``<div id="report-status" data-figures="N" data-rendered="K" data-errors="E">``, and marks
  each figure ``data-rendered="yes"`` or ``"no"``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class FigureOut:
    """A drawn figure: ``slug`` names its files ``figures/<slug>.png|svg`` and its element id."""

    slug: str
    title: str
    caption: str
    svg: str | None = None


@dataclass
class Section:
    """One section of the page: what it shows (``about``), its figures and tables, and ``missing``
    (what could not be shown and how to get it)."""

    key: str
    title: str
    paper: str
    about: str
    figures: list[FigureOut] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    html_extra: str = ""

    @property
    def status(self) -> str:
        """``complete`` (something shown, nothing missing), ``partial`` or ``missing`` (nothing shown)."""
        shown = bool(self.figures or self.tables or self.html_extra)
        if not shown:
            return "missing"
        return "partial" if self.missing else "complete"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, caption: str = "", cls: str = "",
          raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (cells already HTML)."""
    def cell(v: object) -> str:
        return str(v) if raw else esc(v)

    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f'<table class="{esc(cls)}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


_CSS = """
:root { --fg: #1b1f24; --muted: #5b6570; --line: #d9dee3; --accent: #1f5fa8; --warn: #8a5a00;
        --warnbg: #fff6e0; --paper: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--fg); }
header { padding: 18px 28px 10px; border-bottom: 1px solid var(--line); background: #fbfcfd; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header .meta { color: var(--muted); font-size: 12.5px; }
header code, .meta code { font-size: 12px; }
nav { padding: 6px 28px; border-bottom: 1px solid var(--line); font-size: 13px; position: sticky; top: 0;
      background: #fff; z-index: 2; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; white-space: nowrap; }
nav a.missing { color: var(--muted); }
main { padding: 8px 28px 40px; max-width: 1400px; }
section { margin: 18px 0 28px; }
section h2 { font-size: 18px; margin: 0 0 4px; border-bottom: 1px solid var(--line); padding-bottom: 3px; }
section h2 .paper { font-size: 12px; color: var(--muted); font-weight: normal; margin-left: 8px; }
p.about { color: var(--muted); margin: 4px 0 10px; max-width: 1000px; }
p.lead { font-size: 15px; margin: 10px 0 4px; max-width: 1100px; }
p.absent { color: var(--muted); margin: 4px 0 8px; max-width: 1100px; }
#not-in-report { margin-top: 28px; }
#not-in-report section { margin: 10px 0 14px; }
#not-in-report h3 { font-size: 15px; margin: 0 0 4px; }
#not-in-report h3 .paper { font-size: 12px; color: var(--muted); font-weight: normal; margin-left: 8px; }
table.leaderboard td span.of { color: var(--muted); font-weight: normal; font-size: 11.5px; }
.missing-note { background: var(--warnbg); color: var(--warn); border-left: 3px solid #e0a800; padding: 5px 10px;
                margin: 6px 0; font-size: 13px; max-width: 1100px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 12.5px; }
caption { text-align: left; font-weight: 600; padding: 3px 0; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; }
th { background: #f6f8fa; }
td:first-child, th:first-child, td.l { text-align: left; }
table.leaderboard td.group { font-weight: 600; text-align: left; }
table.leaderboard th.paper, table.leaderboard td.paper { background: var(--paper); color: #333; }
td.best { font-weight: 700; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
figure.report-figure { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: 8px; background: #fff;
                       max-width: 100%; }
figure.report-figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: var(--muted); max-width: 720px; margin-top: 4px; }
figcaption .files a { margin-right: 8px; }
#js-errors { display: none; }
#js-errors[data-count]:not([data-count="0"]) { display: block; background: #fde8e8; color: #8a1111; padding: 8px; }
ul.videos li { margin: 4px 0; }
.norm dt { font-weight: 600; margin-top: 4px; }
.norm dd { margin: 0 0 0 16px; color: var(--muted); }
"""

#: Records errors before anything else runs (first thing in <head>).
_ERROR_HOOK = """
(function () {
  var errors = [];
  function note(msg) {
    errors.push(String(msg));
    var el = document.getElementById('js-errors');
    if (el) { el.textContent = errors.join('\\n'); el.setAttribute('data-count', String(errors.length)); }
  }
  window.__reportErrors = errors;
  window.__reportNote = note;
  window.addEventListener('error', function (e) {
    if (e.target && e.target !== window && (e.target.src || e.target.href)) {
      note('resource failed to load: ' + (e.target.src || e.target.href));
    } else {
      note('error: ' + (e.message || e.type) + ' at ' + (e.filename || '?') + ':' + (e.lineno || '?'));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (e) { note('unhandled rejection: ' + e.reason); });
  document.addEventListener('securitypolicyviolation', function (e) {
    note('blocked by the content security policy: ' + e.blockedURI);
  });
  var original = console.error;
  console.error = function () {
    note('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
})();
"""

#: Checks the figures once the page is laid out (last thing in <body>).
_FIGURE_CHECK = """
(function () {
  var figures = document.querySelectorAll('figure.report-figure');
  var rendered = 0;
  figures.forEach(function (fig) {
    var svg = fig.querySelector('svg');
    var ok = false;
    if (svg) {
      var box = svg.getBoundingClientRect();
      var shapes = svg.querySelectorAll('path, rect, image, text, use, line, polygon, polyline').length;
      ok = box.width > 0 && box.height > 0 && shapes > 0;
    }
    fig.setAttribute('data-rendered', ok ? 'yes' : 'no');
    if (ok) { rendered += 1; } else { window.__reportNote('figure ' + fig.id + ' did not render'); }
  });
  var status = document.getElementById('report-status');
  status.setAttribute('data-figures', String(figures.length));
  status.setAttribute('data-rendered', String(rendered));
  status.setAttribute('data-errors', String(window.__reportErrors.length));
  status.setAttribute('data-checked', 'yes');
  status.textContent = rendered + ' of ' + figures.length + ' figures rendered; ' +
    window.__reportErrors.length + ' script error(s)';
})();
"""

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data: file: 'self'; "
        "media-src file: 'self'; font-src data:")


def figure_html(fig: FigureOut) -> str:
    files = (f'<span class="files"><a href="figures/{esc(fig.slug)}.png">PNG</a>'
             f'<a href="figures/{esc(fig.slug)}.svg">SVG</a></span>')
    return (f'<figure class="report-figure" id="fig-{esc(fig.slug)}" data-slug="{esc(fig.slug)}">{fig.svg or ""}'
            f'<figcaption><strong>{esc(fig.title)}.</strong> {esc(fig.caption)} {files}</figcaption></figure>')


def section_html(s: Section, heading: str = "h2") -> str:
    """A section: its title, what it shows, its figures and tables, then what it lacks (its notes) —
    or, for a section with nothing to show, its notes alone."""
    parts = [f'<section id="{esc(s.key)}" data-status="{s.status}">',
             f'<{heading}>{esc(s.title)}<span class="paper">{esc(s.paper)}</span></{heading}>']
    if s.status != "missing":
        parts.append(f'<p class="about">{esc(s.about)}</p>')
        if s.figures:
            parts.append('<div class="figures">' + "".join(figure_html(f) for f in s.figures) + "</div>")
        if s.html_extra:
            parts.append(s.html_extra)
        parts += s.tables
    parts += [f'<div class="missing-note" data-section="{esc(s.key)}">{esc(m)}</div>' for m in s.missing]
    parts.append("</section>")
    return "\n".join(parts)


def page(title: str, meta_html: str, sections: Sequence[Section], lead_html: str = "") -> str:
    """The whole page: header (``meta_html`` already HTML), a table of contents of the sections with
    something to show, an overview (``lead_html``, already HTML: what was measured; then, once, the
    sections with nothing to show), those sections, and at the end "Not in this report": each section
    with nothing to show and what it needs."""
    shown = [s for s in sections if s.status != "missing"]
    absent = [s for s in sections if s.status == "missing"]
    nav = "".join(f'<a href="#{esc(s.key)}" class="{s.status}">{esc(s.title)}</a>' for s in shown)
    overview = f'<p class="lead">{lead_html}</p>' if lead_html else ""
    if absent:
        nav += f'<a href="#not-in-report" class="missing">Not in this report ({len(absent)})</a>'
        names = ", ".join(esc(s.title) for s in absent)
        overview += (f'<p class="absent">Not in this report: {names} — <a href="#not-in-report">what each '
                     "needs</a>.</p>")
    body = "\n".join(section_html(s) for s in shown)
    if absent:
        body += ('\n<div id="not-in-report"><h2>Not in this report</h2><p class="about">These sections have no '
                 "data in what this report was built from; each says what it needs.</p>\n"
                 + "\n".join(section_html(s, "h3") for s in absent) + "\n</div>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<script>{_ERROR_HOOK}</script>
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="mskbench report">
<title>{esc(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
<div class="meta">{meta_html}</div>
<div class="meta" id="report-status" data-checked="no">figures not checked (scripts off?)</div>
<pre id="js-errors" data-count="0"></pre>
</header>
<nav>{nav}</nav>
<main>
<section id="overview">{overview}</section>
{body}
</main>
<script>{_FIGURE_CHECK}</script>
</body>
</html>
"""
