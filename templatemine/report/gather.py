"""OUT/report.html from a run's tables: the Spark side of the report.

Only bounded aggregates reach the driver, so the report costs the same on a
crawl of millions of pages as on the samples (apart from Spark's scans):
- per-site rows for the `max_sites` largest sites, and one totals row;
- a histogram of pages per template (power-of-two bins) and the `top_templates`
  templates on most pages;
- the text-density histogram (at most MAX_BIN + 1 bins x 2), folded in Spark
  with higher-order functions, no Python UDF (density.py is the reference);
- the page viewer's sample: up to `per_site` pages from each of the largest
  sites, at most `max_pages`, with their template pagelets; their HTML is read
  back from the WARC records on the driver (`html_at`: a seek per record).

The report is written through Hadoop's FileSystem (local, hdfs://, s3a://) to a
temporary file that is then renamed over OUT/report.html, so a reader never sees
half a report.
"""

from __future__ import annotations

import time
from collections import defaultdict
from datetime import datetime, timezone
from typing import Callable

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from templatemine.report.density import MAX_BIN, WRAP_WIDTH
from templatemine.report.render import ReportData, SiteRow, ViewerPage, render_report
from templatemine.tables.output import RunOutput, path_exists, require_tables
from templatemine.templates.stage import current_judgement, no_members, removed_pagelets

REPORT = "report.html"
NO_SITE = "(no site)"
MODEL_TEMPLATE = "page-level model"  # the viewer's name for the pagelets the model removed (no template_id)
MAX_PER_SITE = 12


def density_columns(text: Column, width: int = WRAP_WIDTH) -> tuple[Column, Column]:
    """(tokens, density) of a pagelet's text, as density.wrap computes them:
    a greedy word wrap folded over the words with `aggregate`, in the JVM."""
    words = F.filter(F.split(text, r"\s+"), lambda w: F.length(w) > 0)
    init = F.struct(F.lit(0).alias("cur"), F.lit(0).alias("lines"), F.lit(0).alias("last"),
                    F.lit(0).alias("tokens"))

    def step(acc, word):
        n = F.length(word)
        first = F.struct(n.alias("cur"), F.lit(1).alias("lines"), F.lit(1).alias("last"),
                         (acc["tokens"] + 1).alias("tokens"))
        same = F.struct((acc["cur"] + 1 + n).alias("cur"), acc["lines"].alias("lines"),
                        (acc["last"] + 1).alias("last"), (acc["tokens"] + 1).alias("tokens"))
        new = F.struct(n.alias("cur"), (acc["lines"] + 1).alias("lines"), F.lit(1).alias("last"),
                       (acc["tokens"] + 1).alias("tokens"))
        return F.when(acc["cur"] == 0, first).when(acc["cur"] + 1 + n <= width, same).otherwise(new)

    w = F.aggregate(words, init, step)
    density = F.when(w["lines"] > 1, (w["tokens"] - w["last"]) / (w["lines"] - 1)).otherwise(
        w["tokens"].cast("double"))
    return w["tokens"], density


def _site(col: str = "site") -> Column:
    return F.coalesce(F.col(col), F.lit(NO_SITE)).alias("site")


class _FS:
    """Hadoop FileSystem of OUT, through the session's JVM; text goes through
    RunOutput's reader and writer, the ones the stages' manifests use."""

    def __init__(self, spark: SparkSession, out: str):
        jvm = spark.sparkContext._jvm
        self.Path = jvm.org.apache.hadoop.fs.Path
        self.fs = self.Path(out).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        self.text = RunOutput(spark, out, "report")

    def read_json(self, path: str) -> dict | None:
        return self.text.read_json(path)

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self.Path(path)))

    def write_atomically(self, path: str, text: str) -> None:
        self.text.replace_text(path, text)


def removed_members(spark: SparkSession, out: str, has_templates: bool) -> DataFrame | None:
    """(page_key, ordinal, template_id) of the pagelets clean removes (or would):
    the site-level templates and the page-level model's judgement together, as
    clean combines them (templates/stage.removed_pagelets), so that counts,
    density plots and the viewer's shading agree with clean_pages (template_id
    null: the model's). None when neither has run (`has_templates`: OUT holds
    templates and template_pagelets). The density report marks the same set."""
    judged = current_judgement(spark, out)
    if not has_templates and judged is None:
        return None
    site_level = spark.read.parquet(f"{out}/template_pagelets") \
        if path_exists(spark, f"{out}/template_pagelets") else no_members(spark)
    return removed_pagelets(site_level, judged).dropDuplicates(["page_key", "ordinal"])


def gather_report(spark: SparkSession, out: str, *, max_sites: int = 100, per_site: int = 3, max_pages: int = 60,
                  top_templates: int = 20, max_page_chars: int = 1_500_000,
                  progress: Callable[[str], None] | None = None) -> ReportData:
    """Everything the report shows, as plain Python data (bounded in size)."""
    say = progress or (lambda _m: None)
    out = out.rstrip("/")
    require_tables(spark, out, ("pages",), "report")
    fs = _FS(spark, out)
    has = {name: fs.exists(f"{out}/{name}") for name in ("pages", "pagelets", "templates", "template_pagelets", "clean_pages")}
    manifest = fs.read_json(f"{out}/manifest.json") or {}
    data = ReportData(out=out, manifest=manifest, generated_utc=datetime.now(timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC"))
    if not has["pages"]:
        return data
    read = lambda name: spark.read.parquet(f"{out}/{name}")  # noqa: E731
    pages = read("pages").select("page_key", _site(), "url", "title", "warc_file", "warc_offset", "n_pagelets")
    pagelets = read("pagelets") if has["pagelets"] else None
    data.has_templates = has["templates"] and has["template_pagelets"]
    members = removed_members(spark, out, data.has_templates)

    say("report: per-site aggregates")
    site_pages = pages.groupBy("site").agg(F.count("*").alias("pages"))
    if members is not None:  # clean run or not
        site_pages = site_pages.join(members.select("page_key").distinct().join(pages.select("page_key", "site"),
                                                                               "page_key")
                                     .groupBy("site").agg(F.count("*").alias("pages_with_templates")), "site", "left")
    if has["clean_pages"]:
        per_page = read("clean_pages").select(_site(), "template_token_fraction")
        site_pages = site_pages.join(per_page.groupBy("site").agg(
            F.avg("template_token_fraction").alias("mean_template_fraction")), "site", "left")
    marked = None
    if pagelets is not None:
        marked = pagelets.select("page_key", "ordinal", "n_tokens", "text")
        if members is not None:
            marked = marked.join(members.select("page_key", "ordinal", F.lit(True).alias("is_template")),
                                 ["page_key", "ordinal"], "left")
        else:
            marked = marked.withColumn("is_template", F.lit(None).cast("boolean"))
        marked = marked.withColumn("is_template", F.coalesce("is_template", F.lit(False)))
        tokens = marked.join(pages.select("page_key", "site"), "page_key").groupBy("site").agg(
            F.sum("n_tokens").alias("tokens"),
            F.sum(F.when(F.col("is_template"), F.col("n_tokens")).otherwise(0)).alias("template_tokens"),
            F.sum(F.col("is_template").cast("long")).alias("template_pagelets"))
        site_pages = site_pages.join(tokens, "site", "left")
    if members is not None:
        site_templates = members.join(pages.select("page_key", "site"), "page_key").groupBy("site").agg(
            F.countDistinct("template_id").alias("templates"))
        site_pages = site_pages.join(site_templates, "site", "left")
    site_pages = site_pages.persist()
    try:
        data.sites = [_site_row(r) for r in site_pages.orderBy(F.desc("pages"), "site").limit(max_sites).collect()]
        totals = site_pages.agg(F.count("*").alias("n_sites"), *[F.sum(c).alias(c) for c in site_pages.columns
                                                                   if c not in ("site", "mean_template_fraction")]
                                ).first().asDict()
    finally:
        site_pages.unpersist()
    data.n_sites = totals.pop("n_sites") or 0
    if has["clean_pages"]:
        totals["mean_template_fraction"] = read("clean_pages").agg(F.avg("template_token_fraction")).first()[0]
    if members is not None:
        totals["templates"] = members.where(F.col("template_id").isNotNull()).select("template_id").distinct().count()
    data.totals = _site_row({"site": "", **totals})

    if data.has_templates:
        say("report: templates")
        templates = read("templates")
        hist = templates.select(F.floor(F.log2(F.greatest(F.col("n_pages"), F.lit(1)))).cast("int").alias("b")) \
            .groupBy("b").count().orderBy("b").collect()
        data.pages_per_template = [(2 ** r["b"], 2 ** (r["b"] + 1) - 1, r["count"]) for r in hist]
        data.top_templates = [
            {"template_id": str(r["template_id"]), "n_pages": r["n_pages"], "n_sites": r["n_sites"],
             "dom_path": r["dom_path"], "sample_text": r["sample_text"]}
            for r in templates.select("template_id", "n_pages", "n_sites",
                                      F.element_at("dom_paths", 1).alias("dom_path"), "sample_text")
            .orderBy(F.desc("n_pages"), "template_id").limit(top_templates).collect()]

    if marked is not None:
        say("report: text density")
        n_tokens, density = density_columns(F.col("text"))
        rows = marked.select(n_tokens.alias("tokens"), density.alias("density"), "is_template").where("tokens > 0") \
            .groupBy(F.least(F.floor(F.col("density") + 0.5).cast("int"), F.lit(MAX_BIN)).alias("b"), "is_template") \
            .agg(F.sum("tokens").alias("tokens")).collect()
        hist: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for r in rows:
            hist[r["b"]][1 if r["is_template"] else 0] += r["tokens"]
        data.density = {b: (v[0], v[1]) for b, v in sorted(hist.items())}

    say("report: page viewer sample")
    _viewer_sample(data, pages, pagelets, members, has, read, per_site, max_pages, max_page_chars)
    return data


def _site_row(r) -> SiteRow:
    get = (r if isinstance(r, dict) else r.asDict()).get
    return SiteRow(site=get("site"), pages=int(get("pages") or 0),
                   pages_with_templates=int(get("pages_with_templates") or 0), templates=int(get("templates") or 0),
                   template_pagelets=int(get("template_pagelets") or 0), tokens=int(get("tokens") or 0),
                   template_tokens=int(get("template_tokens") or 0),
                   mean_template_fraction=get("mean_template_fraction"))


def sample_pages(pages: DataFrame, per_page: DataFrame | None, sites: list[str], per_site: int,
                 max_pages: int) -> list:
    """Up to `per_site` pages of each site in `sites` (in that order), at most
    `max_pages`: pages with template pagelets first, then by a hash of the
    page key, so the choice is deterministic and not biased to URL order."""
    if not sites or max_pages <= 0:
        return []
    cand = pages.where(F.col("site").isin(sites))
    if per_page is not None:
        cand = cand.join(per_page, "page_key", "left")
    else:
        cand = cand.withColumn("n_template_pagelets", F.lit(0))
    order = Window.partitionBy("site").orderBy(
        F.desc((F.coalesce("n_template_pagelets", F.lit(0)) > 0).cast("int")),
        F.xxhash64("page_key"), "page_key")
    chosen = cand.withColumn("rank", F.row_number().over(order)).where(F.col("rank") <= per_site).collect()
    position = {s: i for i, s in enumerate(sites)}
    chosen.sort(key=lambda r: (position[r["site"]], r["rank"]))
    return chosen[:max_pages]


def _viewer_sample(data: ReportData, pages, pagelets, members, has, read, per_site, max_pages,
                   max_page_chars) -> None:
    from templatemine.html.record import html_at
    from templatemine.report.viewer import viewer_html

    per_page = read("clean_pages").select("page_key", "n_template_pagelets", "template_token_fraction") \
        if has["clean_pages"] else None
    sites = [s.site for s in data.sites][: max(1, -(-max_pages // max(1, per_site)))]
    # few sites (one site's crawl): more pages of each, up to MAX_PER_SITE
    per_site = max(per_site, min(MAX_PER_SITE, max_pages // max(1, len(sites))))
    chosen = sample_pages(pages, per_page, sites, per_site, max_pages)
    if not chosen:
        return
    # the chosen pages' keys as a literal filter (at most max_pages of them), which Parquet's scans
    # take; a broadcast join with a createDataFrame of them was a Python job of its own, which AQE
    # left running when no page had a template pagelet (an empty side ends the join): the run then
    # stopped Spark under it, and a --quiet run printed a crashed worker's or an accumulator's error
    keys = sorted({r["page_key"] for r in chosen})
    by_page: dict[int, list[dict]] = defaultdict(list)
    if members is not None and pagelets is not None:
        chosen_only = F.col("page_key").isin(keys)
        rows = members.where(chosen_only).join(
            pagelets.where(chosen_only).select("page_key", "ordinal", "dom_path", "dom_label", "n_tokens",
                                               F.substring("text", 1, 160).alias("text")),
            ["page_key", "ordinal"]).collect()
        for r in sorted(rows, key=lambda r: (r["page_key"], r["ordinal"])):
            by_page[r["page_key"]].append({
                "ordinal": r["ordinal"], "dom_path": r["dom_path"], "dom_label": r["dom_label"],
                "template_id": MODEL_TEMPLATE if r["template_id"] is None else str(r["template_id"]),
                "n_tokens": r["n_tokens"], "text": r["text"]})
    # the HTML, a seek per record, grouped by file
    offsets: dict[str, list[int]] = defaultdict(list)
    for r in chosen:
        if r["warc_file"] is not None and r["warc_offset"] is not None:
            offsets[r["warc_file"]].append(r["warc_offset"])
    html: dict[tuple[str, int], str] = {}
    errors: dict[tuple[str, int], str] = {}
    for warc_file, offs in offsets.items():
        got, why = html_at(warc_file, sorted(set(offs)))
        html.update({(warc_file, o): h for o, h in got.items()})
        errors.update({(warc_file, o): e for o, e in why.items()})
    for r in chosen:
        key = (r["warc_file"], r["warc_offset"])
        if key not in html:
            data.unreadable.append((r["url"], errors.get(key, "no WARC record")))
            continue
        page_html = viewer_html(html[key])
        if len(page_html) > max_page_chars:
            data.unreadable.append((r["url"], f"page larger than {max_page_chars:,} characters, left out"))
            continue
        data.viewer_pages.append(ViewerPage(
            url=r["url"], site=r["site"], title=r["title"] or "", html=page_html, n_pagelets=r["n_pagelets"] or 0,
            # unknown (no clean_pages: a report after detect, or a re-detect) is null, which the
            # viewer says; it read 0.0% beside the template pagelets it shaded (found in review)
            template_token_fraction=(None if per_page is None or r["template_token_fraction"] is None
                                     else float(r["template_token_fraction"])),
            template_pagelets=by_page.get(r["page_key"], [])))
    ids = sorted({t["template_id"] for p in data.viewer_pages for t in p.template_pagelets} - {MODEL_TEMPLATE})
    if ids and has["templates"]:
        for r in read("templates").where(F.col("template_id").isin([int(i) for i in ids])).select(
                "template_id", "n_pages", F.substring("sample_text", 1, 120).alias("sample_text")).collect():
            data.viewer_templates[str(r["template_id"])] = {"n_pages": r["n_pages"], "sample_text": r["sample_text"]}


def write_report(spark: SparkSession, out: str, progress: Callable[[str], None] | None = None) -> str:
    """Gather OUT's aggregates, render, and write OUT/report.html atomically;
    returns the report's path."""
    started = time.time()
    data = gather_report(spark, out, progress=progress)
    data.gather_s = round(time.time() - started, 2)
    path = f"{out.rstrip('/')}/{REPORT}"
    _FS(spark, out).write_atomically(path, render_report(data))
    if progress:
        progress(f"report: {path} ({len(data.viewer_pages)} pages in the viewer, {time.time() - started:.1f}s)")
    return path
