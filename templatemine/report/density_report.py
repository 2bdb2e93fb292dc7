"""OUT/density/: Kohlschütter's densitometric analysis of a run (issue 4, item 5).

"A densitometric analysis of web template content" (WWW 2009 poster) on the
pagelets of OUT, written as DEST (default OUT/density/):
- density.html: Figure 1 (tokens per rounded text density, the measured bars
  split into template and other tokens, and the fitted mixture of eq. (1)),
  Table 1 (the ten terms most typical of each class, eq. (2)) and a few lines
  on the class boundary and the fit; self-contained (inline SVG and CSS);
- density.png: the same chart as a picture (typicality.Canvas, no plotting
  library);
- density.json: the numbers.

Spark does the corpus-wide work with built-in functions only: the density of
each pagelet (gather.density_columns, the fold of density.py), the histogram
per density bin and template flag, and the document frequency of each term in
pi1 (density <= 8) and pi2 (>= 9); only the histogram (at most MAX_BIN bins x 2)
and the terms above the minimum document frequency reach the driver, where the
fit and the ratios (typicality.py) are computed.

A pagelet is template when clean removes it (or would): detect's site-level
templates and the page-level model's judgement together, the set report.html
counts (gather.removed_members); with neither, none is.

The three files are written into a temporary folder beside DEST, which is then
renamed to DEST (the previous DEST set aside first and deleted after): a reader
sees the old report or the new one, never a mix, though between the two renames
DEST briefly does not exist. Since the old DEST is deleted, DEST must be a
density report already (nothing but FILES in it), empty or new, and neither OUT
nor a folder holding OUT (check_dest).
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from templatemine.report import typicality as T
from templatemine.report.assets import CSS
from templatemine.report.density import MAX_BIN, WRAP_WIDTH
from templatemine.report.gather import density_columns, removed_members
from templatemine.report.render import (CONTENT_COLOR, REPORT_CSP, TEMPLATE_COLOR, _nice_max, _short_num, esc,
                                        fmt_int, fmt_pct)
from templatemine.tables.output import path_exists, require_tables

DENSITY_DIR = "density"
FILES = ("density.html", "density.png", "density.json")
# Python's re \w (typicality.TERM_PATTERN) in Java: letters, numbers, underscore. Not Java's
# (?U)\w, which also takes combining marks and only decimal digits (Hindi's vowel signs and a
# decomposed "é" split words in Python and not in Spark; "²" the other way round)
SPARK_TERM_PATTERN = r"[\p{L}\p{N}_]+"
FIT_COLOR, CLASS1_COLOR, CLASS2_COLOR, NORMAL_COLOR = "#1d232b", "#2f6db5", "#7b52ab", "#8a8f98"
# the poster's numbers, shown beside ours
PAPER = {"modes": [2, 12], "r2": 0.998, "rmse": 0.0021, "boundary": 8, "min_doc_freq": 100, "n_terms": 2938,
         "c1_share_of_terms": 0.20, "c2_share_of_terms": 0.427, "normal_dominates": [5, 10],
         "low_density_template_share": 0.63}


# ---------------------------------------------------------------- Spark: DataFrame -> DataFrame


def template_members(spark: SparkSession, out: str) -> DataFrame | None:
    """(page_key, ordinal, template_id) of the pagelets clean removes, as
    report.html marks them (a density report counting detect's templates alone
    said 18.3% template tokens where clean removed 22.5%, and "detect has not
    run" on a run the page-level model judged alone); None when nothing marks any."""
    has_templates = all(path_exists(spark, f"{out}/{t}") for t in ("templates", "template_pagelets"))
    return removed_members(spark, out, has_templates)


def marked_pagelets(spark: SparkSession, out: str, members: DataFrame | None) -> DataFrame:
    """(page_key, ordinal, text, is_template) of OUT/pagelets; template when
    `members` (template_members) holds the pagelet."""
    pagelets = spark.read.parquet(f"{out}/pagelets").select("page_key", "ordinal", "text")
    if members is None:
        return pagelets.withColumn("is_template", F.lit(False))
    marks = members.select("page_key", "ordinal", F.lit(True).alias("is_template"))
    return pagelets.join(marks, ["page_key", "ordinal"], "left") \
        .withColumn("is_template", F.coalesce("is_template", F.lit(False)))


def density_blocks(marked: DataFrame, width: int = WRAP_WIDTH, max_bin: int = MAX_BIN) -> DataFrame:
    """(page_key, text, is_template, tokens, bin): each pagelet with tokens, its
    rounded BlockFusion density (section 2: rho = [rho(b)], density_bin's
    rounding, pooled above max_bin)."""
    tokens, density = density_columns(F.col("text"), width)
    return marked.select("page_key", "text", "is_template", tokens.alias("tokens"), density.alias("density")) \
        .where("tokens > 0") \
        .select("page_key", "text", "is_template", "tokens",
                F.least(F.floor(F.col("density") + 0.5).cast("int"), F.lit(max_bin)).alias("bin"))


def density_histogram(blocks: DataFrame) -> dict[int, tuple[int, int]]:
    """{bin: (other tokens, template tokens)}: Figure 1's measured curve, split."""
    hist: dict[int, list[int]] = {}
    for r in blocks.groupBy("bin", "is_template").agg(F.sum("tokens").alias("tokens")).collect():
        hist.setdefault(r["bin"], [0, 0])[1 if r["is_template"] else 0] += int(r["tokens"])
    return {b: (v[0], v[1]) for b, v in sorted(hist.items())}


def term_doc_freqs(blocks: DataFrame, boundary: int = T.PARTITION_BOUNDARY) -> DataFrame:
    """(term, w1, w2, w12): of each lower-cased \\w+ term, the documents (pages)
    having it in a pi1 block (bin <= boundary), in a pi2 block, and in either
    (w1u2), section 3."""
    part = F.when(F.col("bin") <= boundary, 1).otherwise(2)
    occurrences = blocks.select("page_key", part.alias("part"), F.explode(
        F.regexp_extract_all(F.lower("text"), F.lit(SPARK_TERM_PATTERN), 0)).alias("term")).distinct()
    per_page = occurrences.groupBy("term", "page_key").agg(
        F.max((F.col("part") == 1).cast("int")).alias("in1"), F.max((F.col("part") == 2).cast("int")).alias("in2"))
    return per_page.groupBy("term").agg(F.sum("in1").cast("long").alias("w1"), F.sum("in2").cast("long").alias("w2"),
                                        F.count("*").alias("w12"))


def typicality_in_spark(freqs: DataFrame, n_docs: int, min_df: int, boundary: int,
                        top: int = T.TOP_TERMS) -> T.TypicalityTable:
    """typicality.typicality_table with eq. (2) evaluated in Spark: only the
    counts and the `top` terms of each sign reach the driver, however many
    terms a crawl has (a web-scale vocabulary above the threshold is millions)."""
    eps = (F.log((F.col("w2") + 1) / (F.col("w1") + 1)) / math.log(n_docs + 1)).alias("epsilon")
    scored = freqs.select("term", "w1", "w2", "w12", eps).persist()
    try:
        counts = scored.agg(F.count("*").alias("n"), F.sum((F.col("epsilon") <= -T.TYPICAL).cast("long")).alias("c1"),
                            F.sum((F.col("epsilon") >= T.TYPICAL).cast("long")).alias("c2")).first()

        def rows(frame) -> list[T.TermRow]:
            return [T.TermRow(r["term"], int(r["w1"]), int(r["w2"]), int(r["w12"]),
                              T.term_typicality(int(r["w1"]), int(r["w2"]), n_docs)) for r in frame.collect()]

        top_c1 = rows(scored.where(F.col("epsilon") < 0).orderBy("epsilon", "term").limit(top))
        top_c2 = rows(scored.where(F.col("epsilon") > 0).orderBy(F.desc("epsilon"), "term").limit(top))
    finally:
        scored.unpersist()
    return T.TypicalityTable(n_docs=n_docs, min_doc_freq=min_df, boundary=boundary, n_terms=int(counts["n"]),
                             n_c1=int(counts["c1"] or 0), n_c2=int(counts["c2"] or 0), top_c1=top_c1, top_c2=top_c2)


# ---------------------------------------------------------------- gathering


@dataclass
class DensityData:
    """What the density report shows, as plain Python data (bounded in size)."""
    out: str
    has_templates: bool  # detect or the page-level model marked pagelets (template_members)
    histogram: dict[int, tuple[int, int]]  # bin -> (other tokens, template tokens)
    n_docs: int
    typicality: T.TypicalityTable
    fit: T.MixtureFit | None = None  # eq. (1)
    fit_two_betas: T.MixtureFit | None = None  # without the normal, for comparison
    generated_utc: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def gather_density(spark: SparkSession, out: str, *, min_doc_freq: int | None = None,
                   boundary: int = T.PARTITION_BOUNDARY, progress: Callable[[str], None] | None = None
                   ) -> DensityData:
    """The Spark aggregates of OUT and the fits on the driver."""
    say = progress or (lambda _m: None)
    out = out.rstrip("/")
    started = time.time()
    require_tables(spark, out, ("pagelets",), "density")
    members = template_members(spark, out)
    blocks = density_blocks(marked_pagelets(spark, out, members)).persist()
    try:
        say("density: histogram of tokens per text density")
        hist = density_histogram(blocks)
        n_docs = blocks.select("page_key").distinct().count()
        min_df = min_doc_freq if min_doc_freq is not None else T.default_min_doc_freq(max(n_docs, 1))
        say(f"density: term document frequencies in pi1 / pi2 ({n_docs:,} pages, w1u2 >= {min_df})")
        table = typicality_in_spark(term_doc_freqs(blocks, boundary).where(F.col("w12") >= min_df),
                                    max(n_docs, 1), min_df, boundary)
    finally:
        blocks.unpersist()
    aggregated = time.time()
    say("density: fitting eq. (1)")
    tokens = {b: c + t for b, (c, t) in hist.items()}
    data = DensityData(out=out, has_templates=members is not None, histogram=hist, n_docs=n_docs,
                       typicality=table,
                       fit=T.fit_mixture(tokens, max_bin=MAX_BIN, boundary=boundary),
                       fit_two_betas=T.fit_mixture(tokens, with_normal=False, max_bin=MAX_BIN, boundary=boundary),
                       generated_utc=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
    data.timings = {"spark_s": round(aggregated - started, 2), "fit_s": round(time.time() - aggregated, 2)}
    return data


# ---------------------------------------------------------------- numbers


def density_numbers(data: DensityData) -> dict:
    """density.json: every number the page shows, and the poster's beside them."""
    hist = data.histogram
    total = sum(c + t for c, t in hist.values())
    tmpl = sum(t for _, t in hist.values())
    boundary = data.typicality.boundary

    def share(keep) -> dict:
        n = sum(c + t for b, (c, t) in hist.items() if keep(b))
        nt = sum(t for b, (_, t) in hist.items() if keep(b))
        return {"tokens": n, "template_tokens": nt, "share_of_tokens": n / total if total else None,
                "template_share": nt / n if n else None}

    fit = data.fit
    return {
        "out": data.out, "generated_utc": data.generated_utc, "has_templates": data.has_templates,
        "wrap_width": WRAP_WIDTH, "max_bin": MAX_BIN, "x_norm": T.X_NORM,
        "histogram": [{"bin": b, "tokens": c + t, "template_tokens": t, "other_tokens": c}
                      for b, (c, t) in sorted(hist.items())],
        "totals": {"pages": data.n_docs, "tokens": total, "template_tokens": tmpl,
                   "template_share": tmpl / total if total else None},
        "partitions": {"boundary": boundary, "pi1": share(lambda b: b <= boundary),
                       "pi2": share(lambda b: b > boundary), "density_le_5": share(lambda b: b <= 5)},
        "measured_modes": T.measured_modes({b: c + t for b, (c, t) in hist.items()}, boundary),
        "fit": fit.to_json() if fit else None,
        "fit_two_betas": data.fit_two_betas.to_json() if data.fit_two_betas else None,
        "class_crossing": T.class_crossing(fit) if fit else None,
        "normal_dominates": _normal_dominates(fit),
        "fit_padding": _fit_padding(fit, hist),
        "typicality": data.typicality.to_json(),
        "paper": PAPER, "timings": data.timings,
    }


def _normal_dominates(fit: T.MixtureFit | None) -> list[int] | None:
    span = T.normal_dominates(fit) if fit else None
    return list(span) if span else None


def _fit_padding(fit: T.MixtureFit | None, hist: dict[int, tuple[int, int]]) -> list[int] | None:
    """The empty bins fitted to reach the poster's axis (typicality.fit_bins)."""
    span = T.padded_bins(fit, {b: c + t for b, (c, t) in hist.items()}) if fit else None
    return list(span) if span else None


# ---------------------------------------------------------------- the chart (SVG and PNG)


@dataclass
class Chart:
    """Figure 1's layout, shared by the SVG and the PNG: bars per bin (template
    tokens under other tokens) and the fitted curves, in tokens."""
    bins: list[int]
    template: list[int]
    other: list[int]
    curves: list[tuple[str, str, list[float]]]  # (name, colour, tokens per bin)
    width: int = 760
    height: int = 340
    left: int = 70
    right: int = 16
    top: int = 34
    bottom: int = 46

    @property
    def ymax(self) -> float:
        highest = [t + o for t, o in zip(self.template, self.other)] + [v for _, _, ys in self.curves for v in ys]
        return _nice_max(max(highest, default=1))

    @property
    def plot_w(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, i: float) -> float:
        """Left edge of the i-th bin (i + 0.5: its centre)."""
        return self.left + self.plot_w * i / max(len(self.bins), 1)

    def y(self, value: float) -> float:
        return self.top + self.plot_h * (1 - value / self.ymax)

    def label_step(self) -> int:
        return max(1, math.ceil(len(self.bins) / 20))


def density_chart(data: DensityData) -> Chart:
    fit = data.fit
    bins = fit.bins if fit else sorted(data.histogram)
    hist = data.histogram
    chart = Chart(bins=bins, template=[hist.get(b, (0, 0))[1] for b in bins],
                  other=[hist.get(b, (0, 0))[0] for b in bins], curves=[])
    if fit:
        fitted_tokens = sum(sum(hist.get(b, (0, 0))) for b in fit.bins)
        comp = fit.components()
        for key, name, color in (("class1", "class 1 (beta)", CLASS1_COLOR), ("normal", "normal", NORMAL_COLOR),
                                 ("class2", "class 2 (beta)", CLASS2_COLOR), ("fit", "complete fit", FIT_COLOR)):
            if key != "normal" or fit.weights["normal"] > 0:
                chart.curves.append((name, color, [float(v) * fitted_tokens for v in comp[key]]))
    return chart


def _bin_name(b: int) -> str:
    return f"\u2265{b}" if b == MAX_BIN else str(b)


def chart_svg(chart: Chart, title: str) -> str:
    c = chart
    parts = [f'<svg class="plot" viewBox="0 0 {c.width} {c.height}" role="img" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="16" font-size="13" font-weight="600">{esc(title)}</text>']
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = c.y(frac * c.ymax)
        parts.append(f'<line x1="{c.left}" y1="{y:.1f}" x2="{c.width - c.right}" y2="{y:.1f}" stroke="#e3e6ea"/>'
                     f'<text x="{c.left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="#666">'
                     f'{esc(_short_num(frac * c.ymax))}</text>')
    bw = c.x(1) - c.x(0)
    for i, b in enumerate(c.bins):
        x, base = c.x(i), c.y(0)
        tip = f"density {_bin_name(b)}: {fmt_int(c.template[i])} template tokens, {fmt_int(c.other[i])} other"
        for value, color in ((c.template[i], TEMPLATE_COLOR), (c.other[i], CONTENT_COLOR)):
            top = base - (c.y(0) - c.y(value))
            if value > 0:
                parts.append(f'<rect x="{x + 1:.1f}" y="{top:.1f}" width="{max(bw - 2, 1):.1f}" '
                             f'height="{base - top:.1f}" fill="{color}" opacity="0.85"><title>{esc(tip)}</title></rect>')
            base = top
        if i % c.label_step() == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{c.y(0) + 14:.1f}" font-size="10" text-anchor="middle" '
                         f'fill="#444">{esc(_bin_name(b))}</text>')
    for name, color, ys in c.curves:
        pts = " ".join(f"{c.x(i + 0.5):.1f},{c.y(v):.1f}" for i, v in enumerate(ys))
        width = 2.2 if name == "complete fit" else 1.6
        dash = "" if name == "complete fit" else ' stroke-dasharray="5 3"'
        parts.append(f'<polyline class="curve" data-name="{esc(name)}" points="{pts}" fill="none" stroke="{color}" '
                     f'stroke-width="{width}"{dash}/>')
    parts.append(f'<line x1="{c.left}" y1="{c.y(0):.1f}" x2="{c.width - c.right}" y2="{c.y(0):.1f}" stroke="#999"/>')
    parts.append(f'<text x="{c.left + c.plot_w / 2:.1f}" y="{c.height - 8}" font-size="11" text-anchor="middle">'
                 f'text density (tokens per line, wrapped at {WRAP_WIDTH} characters, rounded)</text>')
    parts.append(f'<text x="12" y="{c.top + c.plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {c.top + c.plot_h / 2:.1f})">tokens</text>')
    for k, (name, color) in enumerate(_legend(c)):
        lx, ly = c.width - c.right - 150, c.top + 4 + k * 15
        parts.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{lx + 14}" y="{ly + 9}" font-size="11">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _legend(c: Chart) -> list[tuple[str, str]]:
    return [("template tokens", TEMPLATE_COLOR), ("other tokens", CONTENT_COLOR)] + [(n, col) for n, col, _ in c.curves]


def chart_png(chart: Chart, title: str, scale: int = 2) -> bytes:
    """The chart drawn on a typicality.Canvas, `scale` pixels per SVG unit."""
    c, s = chart, scale
    rgb = T.hex_color
    canvas = T.Canvas(c.width * s, c.height * s)
    canvas.text(0, 4 * s, title, scale=s)
    for frac in (0, 0.25, 0.5, 0.75, 1):
        y = c.y(frac * c.ymax) * s
        canvas.rect(c.left * s, y, (c.width - c.right) * s, y + 1, (227, 230, 234))
        canvas.text((c.left - 4) * s, y - 3 * s, _short_num(frac * c.ymax), (102, 102, 102), s, "end")
    bw = c.x(1) - c.x(0)
    for i, b in enumerate(c.bins):
        base = c.y(0)
        for value, color in ((c.template[i], TEMPLATE_COLOR), (c.other[i], CONTENT_COLOR)):
            top = base - (c.y(0) - c.y(value))
            if value > 0:
                canvas.rect((c.x(i) + 1) * s, top * s, (c.x(i) + max(bw - 1, 2)) * s, base * s, rgb(color))
            base = top
        if i % c.label_step() == 0:
            canvas.text((c.x(i) + bw / 2) * s, (c.y(0) + 5) * s, _bin_name(b).replace("\u2265", ">"),
                        (68, 68, 68), s, "middle")
    for name, color, ys in c.curves:
        pts = [(c.x(i + 0.5) * s, c.y(v) * s) for i, v in enumerate(ys)]
        canvas.polyline(pts, rgb(color), width=(3 if name == "complete fit" else 2) * s // 2 + 1)
    canvas.rect(c.left * s, c.y(0) * s, (c.width - c.right) * s, c.y(0) * s + s, (153, 153, 153))
    canvas.text((c.left + c.plot_w / 2) * s, (c.height - 14) * s, "text density (tokens per line, rounded)",
                scale=s, anchor="middle")
    canvas.text(4 * s, (c.top - 12) * s, "tokens", scale=s)
    for k, (name, color) in enumerate(_legend(c)):
        lx, ly = (c.width - c.right - 150) * s, (c.top + 4 + k * 15) * s
        canvas.rect(lx, ly, lx + 10 * s, ly + 10 * s, rgb(color))
        canvas.text(lx + 14 * s, ly + 2 * s, name, scale=s)
    return canvas.png()


# ---------------------------------------------------------------- the page


def _f(x, digits: int = 3) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _fixed(x, digits: int) -> str:
    """x to `digits` places; "undefined" where it is (R\u00b2 of a histogram whose bins
    all hold the same tokens is 0/0, null in density.json: the page failed on it)."""
    return "undefined" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def summary_text(numbers: dict) -> str:
    """The lines under the chart: boundary, modes, fit quality, against the poster."""
    fit, parts = numbers["fit"], numbers["partitions"]
    if not numbers["totals"]["tokens"]:
        return ('<p class="note">No pagelet of this run holds a token: there is nothing to split at the '
                'poster\'s class boundary (section 3), no mode to measure and nothing to fit.</p>')
    b = parts["boundary"]
    text = [f'Tokens are split at the poster\'s class boundary (section 3): \u03c01 = density \u2264 {b} '
            f'({_partition_text(parts["pi1"], numbers["totals"]["tokens"])}) and \u03c02 = density \u2265 {b + 1} '
            f'({_partition_text(parts["pi2"])}). Measured modes: {_modes_text(numbers["measured_modes"])} '
            f'(poster: 2 and 12).']
    if fit:
        m = fit["modes"]
        crossing, dom = numbers["class_crossing"], numbers["normal_dominates"]
        text.append(
            f'The fit of eq. (1) (two betas and a normal, densities / {fit["x_norm"]:g}) reaches '
            f'<b>R\u00b2 = {_fixed(fit["r2"], 4)}</b>, RMSE = {_fixed(fit["rmse"], 4)} (poster: 0.998, 0.0021); '
            f'class 1 has its mode at {_f(m["class1"])} and {fmt_pct(fit["weights"]["class1"])} of the tokens, '
            f'class 2 at {_f(m["class2"])} with {fmt_pct(fit["weights"]["class2"])}, the normal transition '
            f'{fmt_pct(fit["weights"]["normal"])} around {_f(m["normal"])}. '
            + (f'Class 2 overtakes class 1 at density {crossing:.1f}. ' if crossing is not None else '')
            + (f'The normal dominates the contiguous stretch {dom[0]} \u2264 density \u2264 {dom[1]} around its '
               f'peak (poster: 5 to 10).' if dom else
               'The normal dominates no stretch around its peak (there a beta carries more tokens, or the normal '
               f'under {fmt_pct(T.NEGLIGIBLE_SHARE)} of them).')
            + ('' if _between(m["normal"], m["class1"], m["class2"]) else
               ' Here the normal does not lie between the two classes\' modes: it models part of a class, not '
               'the transition the poster reads into it; read the components with care.'))
        pad = numbers.get("fit_padding")
        if pad:
            text.append(f'Density {pad[0]}\u2013{pad[1]} holds no tokens here; it is fitted as measured zeros so '
                        f'that the fit spans the poster\'s axis (to {T.FIT_MIN_LAST_BIN}) and R\u00b2 and RMSE '
                        f'cover the bins his do. The zeros are easy to predict: they raise R\u00b2 above what '
                        f'the measured bins alone would give.')
        two = numbers["fit_two_betas"]
        if two:
            text.append(f'Two betas without the normal: R\u00b2 = {_fixed(two["r2"], 4)}, '
                        f'RMSE = {_fixed(two["rmse"], 4)}.')
    else:
        text.append("No tokens: nothing was fitted.")
    return "".join(f'<p class="note">{t}</p>' for t in text)


def _partition_text(part: dict, total: int | None = None) -> str:
    """"41.0% of the 1,234 tokens, 63.0% of them in template pagelets", or "no tokens"."""
    if not part["tokens"]:
        return "no tokens"
    of_all = f' of the {fmt_int(total)} tokens' if total is not None else ''
    return f'{fmt_pct(part["share_of_tokens"])}{of_all}, {fmt_pct(part["template_share"])} of them template'


def _modes_text(modes: dict) -> str:
    return " and ".join(f'{"none" if modes[k] is None else modes[k]} in {name}'
                        for k, name in (("pi1", "\u03c01"), ("pi2", "\u03c02")))


def _between(x, a, b) -> bool:
    return None not in (x, a, b) and min(a, b) <= x <= max(a, b)


def _fit_table(numbers: dict) -> str:
    rows = []
    for key in ("fit", "fit_two_betas"):
        f = numbers.get(key)
        if not f:
            continue
        rows.append("<tr>" + "".join(f'<td class="n">{v}</td>' if i else f"<td>{v}</td>" for i, v in enumerate([
            esc(f["model"]), _fixed(f["r2"], 4), _fixed(f["rmse"], 5), _f(f["c"]), _f(f["d"]), _f(f["a1"], 4),
            _f(f["b1"], 4), _f(f["a2"], 4), _f(f["b2"], 4), _f(f["mu"]), _f(f["sigma"]),
            f'{f["bins"][0]}\u2013{f["bins"][-1]}'])) + "</tr>")
    head = "".join(f'<th class="n">{h}</th>' if i else f"<th>{h}</th>" for i, h in enumerate(
        ["model", "R\u00b2", "RMSE", "c", "d", "a1", "b1", "a2", "b2", "\u03bc", "\u03c3", "bins"]))
    return f'<table id="fit-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _terms_table(rows: list[dict], label: str, table_id: str) -> str:
    body = "".join(f'<tr><td class="n">{i}</td><td>{esc(r["term"])}</td><td class="n">{r["epsilon"]:+.2f}</td>'
                   f'<td class="n">{fmt_int(r["w1"])}</td><td class="n">{fmt_int(r["w2"])}</td></tr>'
                   for i, r in enumerate(rows, 1))
    if not body:
        body = '<tr><td colspan="5" class="note">no term</td></tr>'
    return (f'<div><h3>{esc(label)}</h3><table id="{table_id}"><thead><tr><th class="n">rank</th><th>term</th>'
            f'<th class="n">\u03b5</th><th class="n">w1</th><th class="n">w2</th></tr></thead><tbody>{body}'
            f'</tbody></table></div>')


def render_density_html(numbers: dict, chart: Chart) -> str:
    ty = numbers["typicality"]
    n = ty["n_terms"]
    b = ty["boundary"]
    body = [
        f'<header><h1>Text density and term typicality</h1><p><code>{esc(numbers["out"])}</code> \u00b7 generated '
        f'{esc(numbers["generated_utc"])}</p></header>',
        '<section id="figure1"><h2>Tokens per text density (Kohlsch\u00fctter 2009, Figure 1)</h2>',
        chart_svg(chart, "Tokens by text density of their pagelet, with the fit of eq. (1)"),
        summary_text(numbers),
        '<p class="note">Template tokens are those of the pagelets clean removes (or would): detect\'s site-level '
        'templates with the page-level model\'s judgement, as report.html counts them.</p>'
        if numbers["has_templates"] else
        '<p class="note">Neither detect nor the page-level model has run on OUT: no token counts as template.</p>',
        _fit_table(numbers) if numbers["fit"] else "",
        '<p class="note">Density is BlockFusion\'s (tokens per wrapped line, the last line left out when there are '
        'more), per pagelet; c, d and 1 &minus; c weigh the betas and the normal (\u03bc, \u03c3 on densities / 36), '
        'each integrated over its rounded-density bin. The poster\'s normal term &phi;(e x + f) is the same curve '
        'with one redundant parameter. The chart as a picture: <a href="density.png">density.png</a>; the numbers: '
        '<a href="density.json">density.json</a>.</p></section>',
        '<section id="table1"><h2>Term typicality (Table 1)</h2>',
        f'<p class="note">\u03b5(t) = log<sub>N+1</sub>((w2(t) + 1) / (w1(t) + 1)), eq. (2): w1, w2 the numbers of '
        f'pages having the term in a pagelet of density \u2264 {b} (\u03c01) and \u2265 {b + 1} (\u03c02), N = '
        f'{fmt_int(ty["n_docs"])} pages; terms are lower-cased \\w+ words with w1\u222a2 \u2265 '
        f'{fmt_int(ty["min_doc_freq"])} (the poster: 100 on 356,437 pages; 1% of the pages here when fewer than '
        f'10,000). Of the {fmt_int(n)} terms, {fmt_int(ty["n_c1"])} ({fmt_pct(ty["n_c1"] / n if n else None)}) have '
        f'\u03b5 \u2264 \u22120.05 (C1) and {fmt_int(ty["n_c2"])} ({fmt_pct(ty["n_c2"] / n if n else None)}) '
        f'\u03b5 \u2265 +0.05 (C2); the poster: 20% and 42.7% of 2,938.</p><div class="grid">',
        _terms_table(ty["top_c1"], "\u03c01: typical of class 1 (low density)", "terms-c1"),
        _terms_table(ty["top_c2"], "\u03c02: typical of class 2 (high density)", "terms-c2"),
        "</div></section>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{REPORT_CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{esc("templatemine density: " + numbers["out"])}</title><style>{CSS}</style></head><body>'
            + "".join(body) + "</body></html>\n")


# ---------------------------------------------------------------- writing


def _fs(spark: SparkSession, path: str):
    """(FileSystem, Path class) of `path`; on local disk the raw file system,
    so no .crc files land beside the report."""
    jvm = spark.sparkContext._jvm
    Path = jvm.org.apache.hadoop.fs.Path
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    fs = Path(path).getFileSystem(conf)
    if fs.getScheme() == "file":  # LocalFileSystem or a subclass (Hive's ProxyLocalFileSystem): checksummed
        fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf).getRawFileSystem()
    return fs, Path


class DestError(ValueError):
    """A DEST the density report will not replace (the command says so, exit 2)."""


def _resolved(spark: SparkSession, path: str) -> tuple[str, str]:
    """(scheme://authority, absolute normalised path) of PATH, as Hadoop
    qualifies it (relative to the JVM's working directory), symbolic links
    resolved on local disk: for telling whether one path lies within another."""
    fs, Path = _fs(spark, path)
    uri = fs.makeQualified(Path(path)).toUri()
    where, p = f"{uri.getScheme()}://{uri.getAuthority() or ''}", str(uri.getPath() or "/")
    return where, os.path.realpath(p) if str(uri.getScheme()) == "file" else posixpath.normpath(p)


def _within(inner: tuple[str, str], outer: tuple[str, str]) -> bool:
    """Whether `inner` is `outer` or lies in it (both from _resolved)."""
    return inner[0] == outer[0] and (inner[1] == outer[1] or inner[1].startswith(outer[1].rstrip("/") + "/"))


def check_dest(spark: SparkSession, dest: str, out: str | None = None) -> None:
    """Raise DestError unless replacing DEST deletes at most an older density
    report: DEST must be new, an empty folder, or a folder of FILES only, and
    neither OUT nor a folder holding OUT. `--dest OUT` deleted the run
    (pagelets, pages, templates), `--dest .` or `~` as much (found in review)."""
    if out is not None:
        d, o = _resolved(spark, dest), _resolved(spark, out)
        if _within(o, d):
            raise DestError(f"{dest}: {'is OUT' if d == o else 'holds OUT'} ({out}); the density report replaces "
                            f"its folder as a whole: give a folder of its own (default OUT/{DENSITY_DIR})")
    fs, Path = _fs(spark, dest)
    target = Path(dest)
    if not fs.exists(target):
        return
    if not fs.getFileStatus(target).isDirectory():
        raise DestError(f"{dest}: is a file, not a density report's folder; not replaced")
    others = sorted(str(st.getPath().getName()) for st in fs.listStatus(target)
                    if not st.isFile() or str(st.getPath().getName()) not in FILES)
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        raise DestError(f"{dest}: holds {shown}, so it is not a density report ({', '.join(FILES)}) and is not "
                        f"replaced; give a new or empty folder")


def write_folder_atomically(spark: SparkSession, dest: str, files: dict[str, bytes], out: str | None = None) -> None:
    """Write `files` into DEST.tmp-*, set an existing DEST aside as DEST.old-*,
    rename the temporary folder to DEST, then delete the old one. A reader sees
    the old report or the new one, never a mix; but a folder cannot be replaced
    in one step through Hadoop's FileSystem, so between the two renames DEST
    briefly does not exist. DEST is checked (check_dest) after the files are
    written and before anything is moved, as it is the old DEST that is deleted.
    On a failure the temporary folder is removed and the old DEST put back,
    whether a rename returned False or raised (a Py4J error, an interrupt
    between the two renames: found in review)."""
    fs, Path = _fs(spark, dest)
    tag = uuid.uuid4().hex[:8]
    tmp, old, target = Path(f"{dest}.tmp-{tag}"), Path(f"{dest}.old-{tag}"), Path(dest)
    had_old = False
    try:
        for name, data in files.items():
            stream = fs.create(Path(f"{dest}.tmp-{tag}/{name}"), True)
            try:
                stream.write(bytearray(data))
            finally:
                stream.close()
        check_dest(spark, dest, out)
        had_old = bool(fs.exists(target))
        if had_old and not fs.rename(target, old):
            raise OSError(f"could not set {dest} aside")
        if not fs.rename(tmp, target):
            if had_old and not fs.rename(old, target):
                raise OSError(f"could not move {dest}.tmp-{tag} to {dest}, nor put the previous report back: "
                              f"it is in {dest}.old-{tag}")
            raise OSError(f"could not move {dest}.tmp-{tag} to {dest}")
    except BaseException:
        if had_old:
            _put_back_quietly(fs, old, target)
        _delete_quietly(fs, tmp)
        raise
    if had_old:
        fs.delete(old, True)


def _put_back_quietly(fs, old, target) -> None:
    """Rename the set-aside `old` back to `target` if it was moved and nothing
    took its place, without hiding the error being raised."""
    try:
        if fs.exists(old) and not fs.exists(target):
            fs.rename(old, target)
    except Exception:  # noqa: BLE001 - the caller re-raises the error that matters
        pass


def _delete_quietly(fs, path) -> None:
    """Remove `path` (recursively) if it is there, without hiding the error being raised."""
    try:
        if fs.exists(path):
            fs.delete(path, True)
    except Exception:  # noqa: BLE001 - the caller re-raises the error that matters
        pass


def run_density(spark: SparkSession, out: str, dest: str | None = None,
                progress: Callable[[str], None] | None = print, *, min_doc_freq: int | None = None,
                boundary: int = T.PARTITION_BOUNDARY) -> dict:
    """Write DEST (default OUT/density/) with density.html, density.png and
    density.json for the run in OUT; returns density.json's numbers and, under
    "paths", the three files. DestError (a ValueError) for a DEST that is not
    a density report's folder (check_dest), before any Spark work."""
    out = out.rstrip("/") or "/"
    dest = (dest or f"{out}/{DENSITY_DIR}").rstrip("/") or "/"
    started = time.time()
    check_dest(spark, dest, out)  # before the Spark work, and again before anything is moved
    data = gather_density(spark, out, min_doc_freq=min_doc_freq, boundary=boundary, progress=progress)
    numbers = density_numbers(data)
    chart = density_chart(data)
    html = render_density_html(numbers, chart)
    png = chart_png(chart, "Tokens by text density, with the fit of eq. (1)")
    write_folder_atomically(spark, dest, {"density.html": html.encode("utf-8"), "density.png": png,
                                          "density.json": json.dumps(numbers, indent=2).encode("utf-8")},
                            out)
    numbers["paths"] = {name.split(".")[1]: f"{dest}/{name}" for name in FILES}
    if progress:
        fit = numbers["fit"]
        progress(f"density: {dest}/ ({fmt_int(numbers['totals']['tokens'])} tokens, "
                 + (f"R^2 {_fixed(fit['r2'], 4)}, " if fit else "") + f"{numbers['typicality']['n_terms']} terms, "
                 f"{time.time() - started:.1f}s)")
    return numbers
