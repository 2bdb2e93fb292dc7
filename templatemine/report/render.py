"""The run report as one self-contained HTML file, from plain Python data.

No pyspark here: `ReportData` is what templatemine/report/gather.py collects
(bounded aggregates only), `render_report` turns it into HTML with inline SVG
plots, inline CSS and a small inline script (templatemine/report/assets.py). The
report loads nothing: a Content-Security-Policy in its <head> forbids every
fetch, so it opens offline and a crawled page shown in the viewer cannot call
home.

Sections follow what the papers report:
- per site: pages, the fraction of pages that carry template pagelets (the
  measure of Bar-Yossef & Rajagopalan's Table 2, there per query) and the share
  of tokens in template pagelets;
- pages per template (how widely a template is stamped, their section 5);
- tokens by text density (Kohlschütter 2009, Figure 1), split into template and
  non-template tokens;
- a page viewer shading a page's template pagelets with their template ids, as
  Alarte et al.'s tool displays the template it extracts (section 5).
"""

from __future__ import annotations

import html as _html
import json
import math
from dataclasses import dataclass, field
from typing import Sequence

from templatemine.report.assets import CSS, FRAME_CSS, VIEWER_JS
from templatemine.report.density import MAX_BIN, WRAP_WIDTH

REPORT_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data:; font-src data:; frame-src 'self' about: data:")
TEMPLATE_COLOR, CONTENT_COLOR, BAR_COLOR = "#d9822b", "#4a8f5c", "#2f6db5"


@dataclass
class SiteRow:
    site: str
    pages: int
    pages_with_templates: int = 0
    templates: int = 0
    template_pagelets: int = 0
    tokens: int = 0
    template_tokens: int = 0
    mean_template_fraction: float | None = None  # clean_pages' per-page fraction, averaged

    @property
    def template_page_share(self) -> float:
        return self.pages_with_templates / self.pages if self.pages else 0.0

    @property
    def template_token_share(self) -> float:
        return self.template_tokens / self.tokens if self.tokens else 0.0


@dataclass
class ViewerPage:
    url: str
    site: str
    title: str
    html: str  # viewer_html(): inert, scripts stripped
    n_pagelets: int
    template_token_fraction: float | None  # None: unknown (no clean_pages)
    template_pagelets: list[dict]  # {ordinal, dom_path, dom_label, template_id (str), n_tokens, text}


@dataclass
class ReportData:
    out: str
    manifest: dict
    sites: list[SiteRow] = field(default_factory=list)  # the largest sites, pages descending
    totals: SiteRow | None = None  # over all sites (site = number of sites)
    n_sites: int = 0
    has_templates: bool = False
    pages_per_template: list[tuple[int, int, int]] = field(default_factory=list)  # (lo, hi, templates)
    top_templates: list[dict] = field(default_factory=list)  # template_id (str), n_pages, n_sites, dom_path, sample_text
    density: dict[int, tuple[int, int]] = field(default_factory=dict)  # bin -> (content tokens, template tokens)
    viewer_pages: list[ViewerPage] = field(default_factory=list)
    viewer_templates: dict[str, dict] = field(default_factory=dict)  # template_id -> {n_pages, sample_text}
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # sampled pages not read back: (url, why)
    generated_utc: str = ""
    gather_s: float | None = None


def aliased_note(links: dict, fmt=str) -> str:
    """", of them N written to its http/https twin and M written to a URL
    that redirects to it", for the extract summary's `links` (the report and
    the CLI); "" where there are none."""
    parts = [f"{fmt(n)} written to {what}" for n, what in (
        (links.get("internal_resolved_by_twin"), "its http/https twin"),
        (links.get("internal_resolved_by_redirect"), "a URL that redirects to it")) if n]
    return f", of them {' and '.join(parts)}" if parts else ""


def esc(value) -> str:
    return _html.escape("" if value is None else str(value), quote=True)


def fmt_int(n) -> str:
    return "" if n is None else f"{int(n):,}"


def fmt_pct(x) -> str:
    return "" if x is None else f"{100 * x:.1f}%"


def _nice_max(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above `value`."""
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 5, 10):
        if m * exp >= value - 1e-12:
            return m * exp
    return 10 * exp


# ---------------------------------------------------------------- SVG plots


def svg_hbars(items: Sequence[tuple[str, float]], *, max_value: float | None = None, value_fmt=fmt_pct,
              title: str = "", color: str = BAR_COLOR, width: int = 720) -> str:
    """Horizontal bars, one per (label, value), top to bottom."""
    if not items:
        return ""
    row, label_w, top = 20, 230, 28 if title else 8
    vmax = max_value if max_value is not None else _nice_max(max(v for _, v in items))
    plot_w = width - label_w - 70
    h = top + row * len(items) + 24
    parts = [f'<svg class="plot" viewBox="0 0 {width} {h}" role="img" xmlns="http://www.w3.org/2000/svg">']
    if title:
        parts.append(f'<text x="0" y="16" font-size="13" font-weight="600">{esc(title)}</text>')
    for i, (label, value) in enumerate(items):
        y = top + i * row
        w = 0 if vmax <= 0 else max(0.0, min(1.0, value / vmax)) * plot_w
        short = label if len(label) <= 34 else label[:33] + "\u2026"
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" font-size="12" text-anchor="end">{esc(short)}'
                     f'<title>{esc(label)}</title></text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" fill="{color}">'
                     f'<title>{esc(label)}: {esc(value_fmt(value))}</title></rect>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="11" fill="#333">'
                     f'{esc(value_fmt(value))}</text>')
    base = top + row * len(items)
    parts.append(f'<line x1="{label_w}" y1="{top}" x2="{label_w}" y2="{base}" stroke="#999"/>')
    for frac in (0, 0.5, 1):
        x = label_w + frac * plot_w
        parts.append(f'<text x="{x:.1f}" y="{base + 16}" font-size="10" text-anchor="middle" fill="#666">'
                     f'{esc(value_fmt(frac * vmax))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_histogram(bins: Sequence[tuple[str, Sequence[float]]], series: Sequence[tuple[str, str]], *,
                  title: str = "", x_label: str = "", y_label: str = "", width: int = 720,
                  height: int = 260) -> str:
    """Vertical bars, stacked by series: bins are (label, values per series),
    series (name, colour). Bin labels are thinned out when they would crowd."""
    if not bins:
        return ""
    left, right, top, bottom = 64, 10, 30 if title else 10, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(v) for _, v in bins]
    vmax = _nice_max(max(totals) if totals else 1)
    bw = plot_w / len(bins)
    parts = [f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" xmlns="http://www.w3.org/2000/svg">']
    if title:
        parts.append(f'<text x="0" y="16" font-size="13" font-weight="600">{esc(title)}</text>')
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = top + plot_h * (1 - frac)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#e3e6ea"/>')
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="#666">'
                     f'{esc(_short_num(frac * vmax))}</text>')
    step = max(1, math.ceil(len(bins) / 24))
    for i, (label, values) in enumerate(bins):
        x = left + i * bw
        y = top + plot_h
        tip = f"{label}: " + ", ".join(f"{name} {fmt_int(v)}" for (name, _), v in zip(series, values))
        for (name, color), v in zip(series, values):
            hgt = plot_h * v / vmax if vmax else 0
            y -= hgt
            if hgt > 0:
                parts.append(f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{max(bw - 2, 1):.1f}" height="{hgt:.1f}" '
                             f'fill="{color}"><title>{esc(tip)}</title></rect>')
        if i % step == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{top + plot_h + 14}" font-size="10" '
                         f'text-anchor="middle" fill="#444">{esc(label)}</text>')
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" stroke="#999"/>')
    if x_label:
        parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="11" text-anchor="middle">'
                     f'{esc(x_label)}</text>')
    if y_label:
        parts.append(f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
                     f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">{esc(y_label)}</text>')
    if len(series) > 1:
        lx = width - right - 150
        for k, (name, color) in enumerate(series):
            parts.append(f'<rect x="{lx}" y="{top + 4 + k * 16}" width="10" height="10" fill="{color}"/>'
                         f'<text x="{lx + 14}" y="{top + 13 + k * 16}" font-size="11">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short_num(v: float) -> str:
    v = float(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}" if v != int(v) else str(int(v))


def bin_label(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}\u2013{hi}"


# ---------------------------------------------------------------- sections


def _table(headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], table_id: str = "") -> str:
    """headers: (name, numeric); cells are already escaped HTML."""
    head = "".join(f'<th class="n">{esc(h)}</th>' if num else f"<th>{esc(h)}</th>" for h, num in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if num else f"<td>{c}</td>"
                                    for c, (_, num) in zip(r, headers)) + "</tr>" for r in rows)
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def stage_rows(manifest: dict) -> list[tuple[str, str, str, float | None]]:
    """(stage, run id / mode, step, seconds) from OUT/manifest.json."""
    rows: list[tuple[str, str, str, float | None]] = []
    timings = manifest.get("timings") or {}
    names = {"read_parse_s": "read + parse", "tables_s": "tables", "counts_s": "counts", "total_s": "total"}
    for key, value in timings.items():
        rows.append(("extract", manifest.get("run_id", ""), names.get(key, key), value))
    for stage, info in (manifest.get("stages") or {}).items():
        label = info.get("run_id", "") + (f" ({info['mode']})" if info.get("mode") else "")
        for key, value in (info.get("timings") or {}).items():
            rows.append((stage, label, names.get(key, key), value))
    return rows


def run_section(data: ReportData) -> str:
    m = data.manifest or {}
    rec = m.get("records") or {}
    counts: dict[str, int] = dict(m.get("rows") or {})
    for info in (m.get("stages") or {}).values():
        counts.update(info.get("rows") or {})
    parts = ['<section id="run"><h2>Run</h2>']
    if not m:
        parts.append('<p class="note">OUT/manifest.json was not found: no counts or timings.</p></section>')
        return "".join(parts)
    accounted = rec.get("accounted")
    parts.append(f'<p>{fmt_int(rec.get("read"))} records read from {len(m.get("inputs") or [])} file(s), every one '
                 f'accounted for: <b>{"yes" if accounted else "NO"}</b>. Extract run <code>{esc(m.get("run_id"))}'
                 f'</code>, started {esc(m.get("started_utc"))}.</p>')
    twice = rec.get("counted_twice") or []
    if twice:  # what made `accounted` false
        parts.append('<p class="note">Counted twice (two rows name one record): ' + ", ".join(
            f'<code>{esc(t.get("warc_file"))}</code> at offset {t.get("warc_offset")}' for t in twice) + ".</p>")
    parts.append('<div class="grid">')
    outcomes = sorted((rec.get("by_outcome") or {}).items(), key=lambda kv: -kv[1])
    parts.append(_table([("record outcome", False), ("records", True)],
                        [(esc(k), fmt_int(v)) for k, v in outcomes], "outcomes"))
    parts.append(_table([("table", False), ("rows", True)], [(esc(k), fmt_int(v)) for k, v in counts.items()],
                        "table-rows"))
    stages = stage_rows(m)
    parts.append(_table([("stage", False), ("run", False), ("step", False), ("seconds", True)],
                        [(esc(s), f"<code>{esc(r)}</code>", esc(step), "" if sec is None else f"{sec:.2f}")
                         for s, r, step, sec in stages], "timings"))
    parts.append("</div>")
    totals = [(s, sec) for s, _, step, sec in stages if step == "total" and sec is not None]
    if data.gather_s is not None:
        totals.append(("report", data.gather_s))
    if totals:
        parts.append(svg_hbars(totals, value_fmt=lambda v: f"{v:.1f} s", title="Wall time per stage"))
    links = m.get("links") or {}
    if links.get("internal"):
        parts.append(f'<p class="note">Internal links resolving to a crawled page: {fmt_int(links.get("internal_resolved"))}'
                     f' of {fmt_int(links["internal"])} ({fmt_pct(links.get("internal_resolved_share"))})'
                     + aliased_note(links, fmt_int) + '.</p>')
    parts.append("</section>")
    return "".join(parts)


def sites_section(data: ReportData) -> str:
    parts = ['<section id="sites"><h2>Sites</h2>']
    if not data.sites:
        return parts[0] + '<p class="note">No pages.</p></section>'
    if data.has_templates:
        bars = [(s.site, s.template_token_share) for s in data.sites[:30]]
        parts.append(svg_hbars(bars, max_value=1.0, color=TEMPLATE_COLOR,
                               title="Share of tokens in template pagelets, per site"
                                     + (" (30 largest sites)" if len(data.sites) > 30 else "")))
    headers = [("site", False), ("pages", True), ("pages with templates", True), ("templates", True),
               ("template pagelets", True), ("template share of tokens", True),
               ("mean template share per page", True)]

    def cells(s: SiteRow, name: str) -> list[str]:
        return [name, fmt_int(s.pages), f"{fmt_int(s.pages_with_templates)} ({fmt_pct(s.template_page_share)})",
                fmt_int(s.templates), fmt_int(s.template_pagelets), fmt_pct(s.template_token_share),
                fmt_pct(s.mean_template_fraction)]

    rows = [cells(s, esc(s.site)) for s in data.sites]
    if data.totals is not None:
        rows.append([f"<b>all sites ({fmt_int(data.n_sites)})</b>"] + [f"<b>{c}</b>" for c in cells(data.totals, "")[1:]])
    parts.append(_table(headers, rows, "site-table"))
    shown = f"the {len(data.sites)} largest of {fmt_int(data.n_sites)} sites" if data.n_sites > len(data.sites) \
        else f"all {fmt_int(data.n_sites)} site(s)"
    parts.append(
        f'<p class="note">{shown}, by pages. "Pages with templates" is the measure of Bar-Yossef &amp; '
        'Rajagopalan\'s Table 2 (there per query: on average 43% of a base set\'s pages carry template pagelets). '
        '"Template share of tokens" counts the tokens of all template pagelets over all tokens of the site\'s '
        'pagelets; "mean template share per page" averages clean_pages.template_token_fraction (node level in '
        'the etdm modes). Here every count is of what clean removed: "templates" are those with a removed pagelet '
        'on the site\'s pages (a site-level template on pages the page-level model judged alone is not removed, '
        'so the total can be under the Run table\'s templates found). A template found on several sites counts '
        'once per site; the total counts it once.</p>')
    parts.append("</section>")
    return "".join(parts)


def templates_section(data: ReportData) -> str:
    parts = ['<section id="templates"><h2>Templates</h2>']
    if not data.has_templates:
        return parts[0] + '<p class="note">No templates table in OUT (detect has not run).</p></section>'
    if data.pages_per_template:
        # every power-of-two bin from the first to the last, empty ones too, so the x axis stays a scale
        have = {lo: n for lo, _, n in data.pages_per_template}
        lo, last = min(have), max(have)
        bins = []
        while lo <= last:
            bins.append((bin_label(lo, 2 * lo - 1), (have.get(lo, 0),)))
            lo *= 2
        parts.append(svg_histogram(bins, [("templates", BAR_COLOR)], title="Pages per template",
                                   x_label="pages carrying the template (bins double)", y_label="templates"))
    else:
        parts.append('<p class="note">No template was found.</p>')
    if data.top_templates:
        rows = [(f"<code>{esc(t['template_id'])}</code>", fmt_int(t.get("n_pages")), fmt_int(t.get("n_sites")),
                 f"<code>{esc(t.get('dom_path'))}</code>", esc((t.get("sample_text") or "")[:120]))
                for t in data.top_templates]
        parts.append(_table([("template_id", False), ("pages", True), ("sites", True), ("first DOM path", False),
                             ("sample text", False)], rows, "top-templates"))
        parts.append(f'<p class="note">The {len(data.top_templates)} templates on most pages.</p>')
    parts.append("</section>")
    return "".join(parts)


def density_section(data: ReportData) -> str:
    parts = ['<section id="density"><h2>Text density</h2>']
    if not data.density:
        return parts[0] + '<p class="note">No pagelet text.</p></section>'
    bins = [(f"\u2265{b}" if b == MAX_BIN else str(b), data.density.get(b, (0, 0))[::-1])
            for b in range(0, max(data.density) + 1)]
    series = [("template tokens", TEMPLATE_COLOR), ("other tokens", CONTENT_COLOR)] if data.has_templates \
        else [("template tokens", TEMPLATE_COLOR), ("tokens", CONTENT_COLOR)]
    parts.append(svg_histogram(bins, series, title="Tokens by text density of their pagelet",
                               x_label=f"text density: tokens per line, wrapped at {WRAP_WIDTH} characters (rounded)",
                               y_label="tokens", height=300))
    tmpl = sum(t for _, t in data.density.values())
    total = sum(c + t for c, t in data.density.values())
    low = sum(c + t for b, (c, t) in data.density.items() if b <= 5)
    low_t = sum(t for b, (_, t) in data.density.items() if b <= 5)
    parts.append(
        f'<p class="note">Kohlschütter (WWW 2009, Figure 1) finds two modes, near density 2 (navigation, '
        f'boilerplate) and 12 (running text), and most tokens of density \u2264 5 in frequent templates (63%). '
        f'Here: {fmt_int(total)} tokens, {fmt_pct(tmpl / total if total else 0)} in template pagelets; '
        f'{fmt_pct(low / total if total else 0)} at density \u2264 5, of which '
        f'{fmt_pct(low_t / low if low else 0)} in template pagelets. Density is BlockFusion\'s '
        f'(tokens per wrapped line, the last line left out), per pagelet.</p>')
    parts.append("</section>")
    return "".join(parts)


def _finite(value):
    """`value` with NaN and infinities as None: json.dumps writes them as NaN and
    Infinity, which JSON.parse refuses, and the viewer would show nothing."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _script_json(value) -> str:
    """JSON safe inside <script>: no `<` at all, so no `</script>` or `<!--`;
    strict JSON (no NaN)."""
    return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False) \
        .replace("<", "\\u003c") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def viewer_section(data: ReportData) -> str:
    n = len(data.viewer_pages)
    parts = [
        '<section id="viewer"><h2>Page viewer</h2>',
        f'<p class="note">{n} sampled page(s) (a few per site, chosen deterministically), shown with scripts '
        'removed, in a sandbox, loading nothing. Template pagelets are shaded and labelled T<i>n</i> '
        '<i>template_id</i>. Open a page directly with <code>report.html#page=INDEX</code> or '
        '<code>#page=URL</code>.</p>',
        '<div id="viewer-controls"><select id="viewer-select" aria-label="page"></select>'
        '<label><input type="checkbox" id="viewer-hide"> hide template pagelets</label></div>',
        '<div id="viewer-page" class="note"></div>',
        '<div id="viewer-status" data-state="loading">loading\u2026</div>',
        '<ul id="viewer-legend"></ul>',
        '<iframe id="viewer-frame" title="page viewer" sandbox="allow-same-origin" referrerpolicy="no-referrer">'
        '</iframe>',
    ]
    if data.unreadable:
        items = "".join(f"<li>{esc(u)}: {esc(why)}</li>" for u, why in data.unreadable[:20])
        parts.append(f'<details class="note"><summary>{len(data.unreadable)} sampled page(s) could not be read back '
                     f'from their WARC record</summary><ul>{items}</ul></details>')
    payload = {
        "frame_css": FRAME_CSS,
        "templates": data.viewer_templates,
        "pages": [{"url": p.url, "site": p.site, "title": p.title, "html": p.html, "n_pagelets": p.n_pagelets,
                   "template_token_fraction": p.template_token_fraction,
                   "template_pagelets": p.template_pagelets} for p in data.viewer_pages],
    }
    parts.append(f'<script type="application/json" id="viewer-data">{_script_json(payload)}</script>')
    parts.append(f"<script>{VIEWER_JS}</script></section>")
    return "".join(parts)


def render_report(data: ReportData) -> str:
    title = f"templatemine report: {data.out}"
    body = [
        f'<header><h1>templatemine run report</h1><p><code>{esc(data.out)}</code> \u00b7 generated '
        f'{esc(data.generated_utc)}' + (f" in {data.gather_s:.1f} s" if data.gather_s is not None else "")
        + "</p></header>",
        '<nav><a href="#run">Run</a><a href="#sites">Sites</a><a href="#templates">Templates</a>'
        '<a href="#density">Text density</a><a href="#viewer">Page viewer</a></nav>',
        run_section(data), sites_section(data), templates_section(data), density_section(data),
        viewer_section(data),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{REPORT_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        + "".join(body) + "</body></html>\n"
    )
