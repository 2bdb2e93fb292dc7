"""Typed configuration: one dataclass per stage, named presets, TOML files in
conf/, and `section.field=value` overrides from the command line.

Spark's own tuning (partitions, memory, AQE) stays in Spark conf: the `[spark]`
table of a conf file, `--conf key=value`, or spark-submit's flags.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field, fields, replace

from templatemine.html.page import PageConfig


@dataclass(frozen=True)
class ExtractConfig(PageConfig):
    """WARC -> PAGES, LINKS, PAGELETS (templatemine/tables/extract.py): the
    per-page parameters of `PageConfig` (k, shingles, page signature, URLs) and
    these."""

    max_payload_bytes: int = 10 * 1024 * 1024
    """Larger HTML payloads are not read: counted as `oversized`."""
    batch_records: int = 512
    """Records per Arrow batch sent from a Python task to Spark (bounds task memory)."""
    batch_text_chars: int = 64 * 1024 * 1024
    """...and characters of page text per batch: a batch is sent when either limit is reached."""
    fail_fast: bool = False
    """Stop the job at the first malformed record instead of counting it."""

    def page_config(self) -> PageConfig:
        return PageConfig(**{f.name: getattr(self, f.name) for f in fields(PageConfig)})


@dataclass(frozen=True)
class EvidenceConfig:
    """Evidence a shingle group needs beyond Definition 4 (templates/detect.py)."""

    enabled: bool = True
    """False: the paper's algorithm, literally."""
    min_site_support: float = 0.3
    """Fraction of the site's pages (in the collection) the template must be on."""
    support_of: str = "path"
    """What the support counts: "template" (pages with this shingle) or "path"
    (pages with any template at this template's DOM path, so that variants of one
    block, such as a footer with two release dates, add up)."""
    min_path_share: float = 0.0
    """Fraction of the template's pagelets at its most common DOM path (0: not
    required). Measured on the nine sites: without bridges 0.8 helped little; with
    them 0.8 costs 0.013 F1 (mean 0.919 vs 0.932) and a leave-one-site-out choice
    picks 0.0 for most sites."""
    min_distinct_pages: int = 2
    """Pages that are not near-duplicates of one another (dup_of) it must span."""
    min_resemblance: float = 0.0
    """Each of its pagelets must resemble the template's most common text at
    least this much (Jaccard of the shingle's word n-grams), section 3.2's
    "almost-identical": an equal shingle alone lets short pagelets that share
    a line collide (templates/detect.py `almost_identical`). 0 (the default):
    an equal shingle suffices. Measured at 0.5 (docs/pagelevel.md,
    "Almost-identical pagelets"): the collisions it removes are mostly per-page
    boilerplate that varies (previous/next links, bylines, sub-menus), so the
    site-level run on news/cleanportaleval falls 0.822 -> 0.806 and hybrid
    0.918 -> 0.913, while hybrid on sites/ gains 0.933 -> 0.937."""
    bridges: bool = True
    """Global mode: pages carrying a shingle may connect through one page of
    their site that does not (section 3.2: "possibly through the root of the site")."""


@dataclass(frozen=True)
class DetectConfig(EvidenceConfig):
    """PAGES, LINKS, PAGELETS -> templates (templates/stage.py): the evidence of
    `EvidenceConfig` and these."""

    mode: str = "auto"
    """global (Fig. 5), local (Fig. 4), auto (local below local_max_pages pages),
    etdm (Alarte et al.: menu-linked complete subdigraphs and equal top-down
    mapping, templates/etdm.py), or etdm+global (both detectors' templates removed)."""
    local_max_pages: int = 50
    """auto: collections with fewer pages use the local algorithm."""
    cc_algorithm: str = "two_phase"
    """GraphFrames' connected components algorithm: two_phase (large-star /
    small-star, converges in O(log n) rounds on DataFrames), randomized_contraction,
    or graphx (Pregel: as many supersteps as the diameter). Without GraphFrames'
    jars, two_phase runs templatemine's DataFrame large-star/small-star and any
    other value min-label propagation (templates/components.py); measured at
    94,500 synthetic pages: 5 rounds, 171 s, 4.3 GB shuffled against 20 rounds,
    357 s, 13.9 GB (scripts/detect_cost.py, docs/scaling.md)."""
    cc_broadcast_threshold: int = -1
    """-1: no manual broadcast of high-degree components, AQE handles the skew
    (graphframes-py 0.12 documents it as much faster and recommended); the giant
    group of a web-wide pagelet ("Home") is exactly that skew."""
    cc_checkpoint_interval: int = 2
    """Checkpoint every N rounds (truncates lineage; GraphFrames' default)."""
    cc_in_memory_max_edges: int = 1_000_000
    """Figure 5 step 4 as the paper states it, for the groups it suits: a
    shingle whose group G_s has at most this many edges gets its components
    computed in memory (groups hash-partitioned, scipy per partition, one task
    each); larger groups (the web-wide "Home | Share" bar) go to the
    distributed connected components above. 0: every group distributed.
    Measured in docs/scaling.md (scripts/bench)."""
    checkpoint_dir: str = ""
    """Reliable checkpoints of connected components; "" means OUT/_checkpoints."""
    merge_equal_carriers: bool = True
    """Figure 5 steps 3-5 once per *carrier class*: shingles carried by exactly
    the same pages have the same group G_s (the same vertices, so the same
    template links, bridges and components), so the self-join and the
    components run for one shingle of each class and the result is copied to
    the others, template keys recomputed per shingle: the same tables as
    without it (a Spark test holds them equal). A site's menu, footer and
    header sit on the same pages: at 10,000 synthetic pages in real markup
    14,481 shingle groups fall into 4,160 classes, and detect alone on the same
    tables took 81.6 s instead of 96.7 (docs/scaling.md). False: every shingle
    joined on its own, as the paper words it."""
    etdm_n: int = 4
    """etdm, Algorithm 1: size of the complete subdigraph sought (the paper found 4)."""
    etdm_equality: str = "loose"
    """etdm: the equality relation of Definition 3.2, a preset (structure, loose,
    default, strict, strictest) or features "tag,id,class,attrs,children,position,text".
    Measured on the nine sites (docs/etdm.md, 2026-11-28): loose (tag + text)
    0.923 F1, strict 0.920, strictest 0.921, default 0.900, structure 0.884."""
    etdm_min_overlap: float = 0.0
    """etdm, Algorithm 2: a CS page whose mapping keeps less than this share of
    the template's nodes is skipped as another layout (0: every CS page refines
    the template, as in the paper)."""
    etdm_menu_first: bool = True
    """etdm, Algorithm 1: explore the key page's links of highest link density first."""
    etdm_max_templates: int = 3
    """etdm: key pages (so templates) per site at most."""
    etdm_shape_depth: int = 3
    """etdm: depth at which pagelet DOM paths are cut to compare page shapes."""
    etdm_min_shape_share: float = 0.1
    """etdm: a page shape gets its own key page if it has this share of the site's pages."""


@dataclass(frozen=True)
class CleanConfig:
    """templates -> clean_pages, clean_links, wet/ (templates/stage.py, clean/)."""

    wet: bool = True
    """Also write the clean text as WET files (WARC conversion records)."""
    wet_pages_per_file: int = 20_000
    """Records per WET file (Common Crawl's WET files hold some 20-40 thousand)."""
    report: bool = True
    """After cleaning, write OUT/report.html (templatemine/report/): counts, per-site table, page viewer."""


@dataclass(frozen=True)
class PageLevelConfig:
    """Page-level template detection (templatemine/pagelevel/): which pages are
    judged by the model, the model, and how its scores become decisions."""

    mode: str = "auto"
    """site: the site-level detection only (detect's templates); page: the
    model only, every page on its own; hybrid: site-level templates removed
    first, then the model on what remains; auto: per site, hybrid when the run
    holds at least `min_site_pages` pages of the site, page otherwise. In hybrid
    and auto, a site of fewer than `train_min_site_pages` pages is judged page
    (stage.page_modes)."""
    min_site_pages: int = 10
    """auto: fewer pages than this in the run and a site is judged page by page
    (site-level detection needs a template on several linked pages)."""
    model: str = ""
    """A model directory (`templatemine train`'s output, or one of its versions);
    "" is the model shipped in the package (pagelevel/default_model.json); "run"
    trains one on this run's own site-level labels first (the seed's plan: learn
    from the site-level results of the crawl, then judge its small sites), saved
    under OUT/model/ and in pagelevel.json, the shipped one used if they cannot
    train every band."""
    smoothing: float = 0.5
    """c of the regularised isotonic regression: the cost of one more section."""
    smooth: bool = True
    """False: the raw classifier, each node on its own (no monotonicity)."""
    penalty: str = "sections"
    """What c is charged for: "sections" (connected regions of equal smoothed
    score, the O(k n) DP) or "values" (distinct smoothed scores, the seed's
    slide as written, an exact O(k^2 n) DP in numpy only, which makes page
    mode take 1.7 times as long per page: pagelevel/isotonic.py, docs/pagelevel.md)."""
    grid: float = 0.05
    """Scores rounded to this grid before smoothing, none carried across the threshold
    (at most 1/grid + 3 values: the DP's k); from 0.01 to 1."""
    threshold: float = 0.5
    """A node is template when its smoothed templateness is at least this."""
    pu: bool = True
    """Correct the site-level labels' false negatives (Elkan & Noto; pagelevel/model.py)."""
    unlikely: bool = True
    """Page and hybrid modes: remove the subtrees of unlikely candidates (class, id or
    role words of comment threads, "related" boxes, share bars: Readability's rule,
    pagelevel/features.py UNLIKELY_CANDIDATES), per-page boilerplate the site-level
    labels never call template; measured in docs/pagelevel.md."""
    article: bool = True
    """Page and hybrid modes: remove the text outside the page's article (Readability's
    top candidate and the siblings it joins, and the <h1>: pagelevel/features.py
    `_article`) when the article holds at least half of the words the model keeps
    and 500 characters; measured in docs/pagelevel.md."""
    site_labels: bool = True
    """Hybrid mode: a node the site-level run labelled content is judged as such:
    Elkan & Noto's probability of template for an example known to be unlabelled,
    (1 - k) / k * g / (1 - g), instead of g / k (pagelevel/model.py
    `PageModel.templateness`); measured in docs/pagelevel.md."""
    pu_min_held_templates: int = 100
    """train: a band's k is the mean score of its held-out template nodes; with fewer
    of them than this it is not estimated and the band is left uncorrected (k = 1).
    A band whose few templates the classifier cannot learn gets k near 0, and p / k
    would call every node of the band template."""
    bands: str = "0,5,50"
    """train: subtree-token lower bounds of the size bands, one classifier each."""
    reg_param: float = 0.01
    """train: L2 regularisation of the logistic regressions."""
    holdout: float = 0.2
    """train: share of labelled nodes held out (by page) to estimate k and report accuracy."""
    seed: int = 7
    """train: seed of the hold-out split."""
    train_max_pages: int = 20_000
    """train: at most this many labelled pages per output, sampled by page hash
    (the logistic regressions need thousands of nodes, not a crawl's billions)."""
    train_min_site_pages: int = 2
    """train: only sites with at least this many pages in an output give labels. On
    a one-page site no template can repeat (Definition 4), so the site-level run
    labels every node of it content, its header and footer too: the seed's false
    negatives at their worst, and with `site_weights` each such site weighs as
    much as a large one. 1 keeps every site."""
    site_weights: bool = True
    """train: weigh nodes so that every site counts the same within a size band (else
    every node does, and the large documentation sites outvote the news sites).
    Measured (scripts/eval_pagelevel.py): scrapinghub page mode 0.810 with, 0.782 without."""

    def scoring(self):
        from templatemine.pagelevel.model import Scoring

        return Scoring(self.smoothing, self.smooth, self.grid, self.threshold, self.pu, self.unlikely, self.article,
                       self.site_labels, self.penalty)


@dataclass(frozen=True)
class DistillConfig:
    """Link analysis over a run's tables (templatemine/graph/): `distill`,
    `related` and `priority`."""

    root_max: int = 200
    """Kleinberg's t: at most this many root pages (clean text matching the query),
    chosen by page-key hash when more match."""
    in_links: int = 50
    """Kleinberg's d: at most this many pages linking to one root page join the base set."""
    intrinsic: bool = True
    """Keep links between pages of one host. Kleinberg dropped them; a crawl of a few
    sites (../shared/corpora/sites) has no others, so they are kept by default."""
    max_iter: int = 50
    """HITS iterations at most (the MDL iteration too)."""
    tol: float = 1e-6
    """Stop when the authority vector moves less than this (L1) in one iteration."""
    top: int = 10
    """Hubs and authorities printed per configuration."""
    mdl_a: float = 0.8
    """Chakrabarti 2001: the top a fraction of positive hub scores are kept..."""
    mdl_e: float = 0.05
    """...to within a multiplicative error e (the discretisation of the MDL code)."""
    mdl_node_bits: float = 1.0
    """Bits to describe one more frontier node (graph/mdl.py "Frontier bits"): without
    them a list of near-equal scores flips between pooled and split and the iteration cycles."""
    template_weight: float = 0.1
    """crawl_priority: weight of one template citing a URL, against 1 per content-citing page."""


@dataclass(frozen=True)
class Config:
    extract: ExtractConfig = ExtractConfig()
    detect: DetectConfig = DetectConfig()
    clean: CleanConfig = CleanConfig()
    distill: DistillConfig = DistillConfig()
    pagelevel: PageLevelConfig = PageLevelConfig()
    spark: dict = field(default_factory=dict)
    """Spark conf applied when templatemine builds the session."""


LOCAL = Config(spark={
    "spark.sql.shuffle.partitions": "8",
    "spark.databricks.delta.snapshotPartitions": "8",  # nightly: Delta's log replay (50 tasks by default)
    "spark.driver.memory": "4g",
})
TEST = replace(LOCAL, spark={
    "spark.sql.shuffle.partitions": "2",
    "spark.databricks.delta.snapshotPartitions": "2",  # Delta's log replay: 50 tasks per read by default
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # one session runs the whole suite: the status store would keep the plans of 1000
    # SQL executions (iterative HITS plans are long); a fresh-clone run ran out of heap
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.driver.memory": "3g",
})
CLUSTER = Config(spark={"spark.sql.shuffle.partitions": "2000"})
PRESETS = {"local": LOCAL, "test": TEST, "cluster": CLUSTER}


_SECTIONS = ("extract", "detect", "clean", "distill", "pagelevel")


def _coerce(value, target_type):
    """`value` (a `--set` string, or a TOML file's typed value) as the setting's
    type; a value of another type is refused (a TOML `k = 3.7` ran as if k were 4,
    `bands = [0, 5, 50]` failed hours later in train)."""
    if isinstance(value, str) and target_type is not str:
        if target_type is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"not a boolean: {value!r}")
        value = target_type(value)
    elif target_type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)  # TOML's 1 for 1.0
    if type(value) is not target_type:
        kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(target_type, target_type)
        raise ValueError(f"not {kind}: {value!r}")
    if target_type is float and not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    return value


def parse_bands(spec: str) -> tuple[int, ...]:
    """pagelevel.bands ("0,5,50"): the size bands' lower bounds, ascending from 0."""
    try:
        lowers = tuple(int(b) for b in spec.split(","))
    except ValueError:
        lowers = ()
    if not lowers or lowers[0] != 0 or list(lowers) != sorted(set(lowers)):
        raise ValueError(f"pagelevel.bands must be integers, ascending and starting at 0 (\"0,5,50\"), got {spec!r}")
    return lowers


# Settings with a fixed set of values: checked when the config loads, before Spark
# starts, since the stages read them after extract (a typo of detect.mode failed an
# hour into a run) or not at all (a misspelt cc_algorithm silently ran the slower
# fallback). The stages' own constants: templates/stage.py, pagelevel/stage.py.
CHOICES = {
    ("detect", "mode"): ("auto", "global", "local", "etdm", "etdm+global"),
    ("detect", "cc_algorithm"): ("two_phase", "randomized_contraction", "graphx"),
    ("detect", "support_of"): ("path", "template"),
    ("pagelevel", "mode"): ("auto", "site", "page", "hybrid"),
    ("pagelevel", "penalty"): ("sections", "values"),
}


# Settings with a range, checked when the config loads for the same reason:
# (section, name) -> (lowest, highest, highest excluded), None for no bound
RANGES = {
    ("extract", "k"): (1, None, False),
    # counts and sizes: 0 made every task fail inside Spark ("ngram and rows must be
    # >= 1"), or every page `oversized` in a run that reported success (found in review)
    **{("extract", name): (1, None, False) for name in (
        "shingle_ngram", "shingle_rows", "dup_ngram", "dup_rows", "max_payload_bytes", "batch_records",
        "batch_text_chars")},
    # shares of a site's pages or of a template's pagelets: 30 (for 30%) kept no template
    **{("detect", name): (0.0, 1.0, False) for name in (
        "min_site_support", "min_path_share", "min_resemblance", "etdm_min_overlap", "etdm_min_shape_share")},
    ("detect", "min_distinct_pages"): (1, None, False),
    ("detect", "local_max_pages"): (0, None, False),
    ("detect", "cc_in_memory_max_edges"): (0, None, False),
    ("detect", "etdm_n"): (2, None, False),  # a complete subdigraph of one page is no menu
    ("detect", "etdm_max_templates"): (1, None, False),
    ("detect", "etdm_shape_depth"): (1, None, False),
    ("clean", "wet_pages_per_file"): (1, None, False),
    ("pagelevel", "min_site_pages"): (1, None, False),
    ("pagelevel", "pu_min_held_templates"): (0, None, False),
    ("pagelevel", "train_max_pages"): (1, None, False),
    ("pagelevel", "train_min_site_pages"): (1, None, False),
    ("pagelevel", "reg_param"): (0.0, None, False),
    ("pagelevel", "threshold"): (0.0, 1.0, False),
    # the DP holds nodes x (1/grid + 3) values: grid 0 (no rounding) made that
    # nodes x distinct scores, 695 MB for a 9,333-node page (found in review)
    ("pagelevel", "grid"): (0.01, 1.0, False),
    ("pagelevel", "smoothing"): (0.0, None, False),
    ("pagelevel", "holdout"): (0.0, 1.0, True),  # 1 would leave nothing to train on
}


def _check_choice(section: str, name: str, value) -> None:
    if (section, name) in CHOICES and value not in CHOICES[(section, name)]:
        raise ValueError(f"not one of {', '.join(CHOICES[(section, name)])}: {value!r}")
    low, high, open_high = RANGES.get((section, name), (None, None, False))
    if (low is not None and value < low) or (high is not None and (value >= high if open_high else value > high)):
        upto = "any" if high is None else f"{high}, {'excluded' if open_high else 'included'}"
        raise ValueError(f"{value!r} is out of range (from {low} to {upto})")
    if (section, name) == ("pagelevel", "bands"):
        parse_bands(value)
    if (section, name) == ("detect", "etdm_equality"):
        from templatemine.templates.etdm import Equality

        Equality.parse(value)  # a preset or known features, else ValueError naming them


def _apply(section, values: dict, where: str, section_name: str = ""):
    known = {f.name: f for f in fields(section)}
    updates = {}
    for name, value in values.items():
        if name not in known:
            raise ValueError(f"{where}: unknown setting {name!r} (known: {', '.join(sorted(known))})")
        target = type(getattr(section, name))
        try:
            updates[name] = _coerce(value, target)
            _check_choice(section_name, name, updates[name])
        except ValueError as exc:
            raise ValueError(f"{where}: {section_name}.{name}: {exc}") from None
    return replace(section, **updates)


def load_config(preset: str | None = None, path: str | None = None, overrides: list[str] = (),
                given: set[str] | None = None) -> Config:
    """A preset, then a TOML file's `[extract]`, `[detect]`, `[clean]`, `[distill]`,
    `[pagelevel]` and `[spark]` tables, then `section.field=value` overrides (e.g. `extract.k=4`).
    The preset is PRESET, else the file's `preset = "..."`, else local; a PRESET
    the file contradicts is an error (one of the two would be ignored).
    `given`, a set, gets the `section.name` settings the file and the overrides
    give (not the preset's), from this one read of the file: a command that
    changes a default must not override what the user wrote."""
    data: dict = {}
    if path is not None:  # `--config ""` (an unset variable) was no file at all, silently
        data = _read_toml(path)
    named = data.pop("preset", None)
    # `--preset ""` or a file's `preset = ""` / `preset = []` silently meant local (found in review)
    if preset is not None and (not isinstance(preset, str) or not preset.strip()):
        raise ValueError(f"--preset {preset!r}: not a preset name (known: {', '.join(PRESETS)})")
    if named is not None and (not isinstance(named, str) or not named.strip()):
        raise ValueError(f"--config {path}: preset = {named!r} is not a preset name (known: {', '.join(PRESETS)})")
    if preset is not None and named is not None and preset != named:
        raise ValueError(f"--preset {preset} but {path} says preset = {named!r}: drop one")
    preset = preset if preset is not None else named if named is not None else "local"
    if preset not in PRESETS:
        raise ValueError(f"{path + ': ' if named else ''}unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    config = PRESETS[preset]
    if path is not None:
        for section in (*_SECTIONS, "spark"):  # `extract = 3` was an AttributeError's traceback
            if not isinstance(data.get(section, {}), dict):
                raise ValueError(f"{path}: {section} must be a table ([{section}]), not {data[section]!r}")
        for section in _SECTIONS:
            if given is not None:
                given.update(f"{section}.{name}" for name in data.get(section, {}))
            config = replace(config, **{section: _apply(getattr(config, section), data.pop(section, {}), path,
                                                         section)})
        config = replace(config, spark={**config.spark, **_spark_conf(data.pop("spark", {}), path)})
        if data:
            raise ValueError(f"{path}: unknown sections {sorted(data)}")
    for item in overrides:
        section, name, value = _override(item)
        config = replace(config, **{section: _apply(getattr(config, section), {name: value}, "--set", section)})
        if given is not None:
            given.add(f"{section}.{name}")
    return config


def _read_toml(path: str) -> dict:
    """The --config file's tables; every failure one ValueError naming the file
    (a missing file, a UTF-16 one and a TOML error did not). A leading UTF-8 BOM
    (Windows editors) is accepted."""
    if not path.strip():
        raise ValueError(f"--config {path!r}: empty file name")
    try:
        with open(path, "rb") as fh:  # read once: a FIFO too
            raw = fh.read()
    except OSError as exc:
        raise ValueError(f"--config {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"--config {path}: not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}; "
                         f"UTF-16? save it as UTF-8)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message has the line, not the file; "FILE: " as the
        raise ValueError(f"{path}: {exc}") from None  # file's other errors (a bad value, an unknown section)


def _override(item: str) -> tuple[str, str, str]:
    key, sep, value = item.partition("=")
    key, value = key.strip(), value.strip()  # --set "extract.k = 4"
    section, dot, name = key.partition(".")
    if not sep or not dot or section not in _SECTIONS:
        raise ValueError(f"override {item!r} is not of the form SECTION.NAME=VALUE ({', '.join(_SECTIONS)})")
    return section, name, value


def _spark_conf(table: dict, path: str, prefix: str = "") -> dict[str, str]:
    """A conf file's `[spark]` table as Spark conf strings. An unquoted dotted key
    (`spark.sql.shuffle.partitions = 8`) is a nested table in TOML: its parts are
    joined again (before, it became one key `spark` that Spark ignored). A list
    is refused: Spark conf values are strings."""
    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_spark_conf(value, path, f"{name}."))
        elif isinstance(value, list):
            raise ValueError(f"{path}: spark.{name}: a list is not a Spark conf value: {value!r}")
        else:
            out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def to_dict(config: Config) -> dict:
    return dataclasses.asdict(config)


def config_path(name: str) -> str | None:
    """conf/NAME.toml of a source checkout, if there is one."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conf", f"{name}.toml")
    return here if os.path.exists(here) else None
