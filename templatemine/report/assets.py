"""The report's inline CSS and JavaScript (no CDN, nothing fetched: the report
opens offline). Kept as Python strings so that they ship inside the wheel.

The viewer script resolves each template pagelet's `dom_path` in the page
shown in the sandboxed iframe and shades it. Paths are those of
html/pagelets.py: `/html/body/div[2]/ul[1]`, where `tag[i]` is the i-th element
child with that tag, and `text()[i]` is the i-th *run* of text directly inside
a split element: a maximal sequence of non-element children (comments do not
break a run) whose text is not blank (blank as Python's str.split() has it,
which is not JavaScript's trim()). A text run is wrapped in a <span> so that
it can be shaded like an element. What was shaded is mirrored into the parent's
DOM (#viewer-status, #viewer-legend) so that a test, or a user, can read it
without reaching into the iframe.
"""

CSS = """
:root { --fg:#1d232b; --muted:#5b6573; --line:#d8dde4; --accent:#2f6db5; --tmpl:#d9822b; --content:#4a8f5c; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif; color:var(--fg); }
header { padding:16px 24px; background:#f3f5f8; border-bottom:1px solid var(--line); }
header h1 { margin:0 0 4px; font-size:20px; }
header p { margin:0; color:var(--muted); }
nav { padding:6px 24px; border-bottom:1px solid var(--line); }
nav a { margin-right:14px; color:var(--accent); text-decoration:none; }
section { padding:8px 24px 20px; border-bottom:1px solid var(--line); }
h2 { font-size:17px; margin:14px 0 8px; }
.note { color:var(--muted); font-size:12.5px; max-width:70em; }
.grid { display:flex; flex-wrap:wrap; gap:24px; align-items:flex-start; }
table { border-collapse:collapse; font-size:13px; }
th, td { padding:3px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; }
tbody tr:hover { background:#f6f8fb; }
code, .mono { font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:12px; }
svg text { font-family:system-ui,"DejaVu Sans",sans-serif; }
.plot { max-width:760px; width:100%; }
#viewer-controls { display:flex; flex-wrap:wrap; gap:12px; align-items:center; margin:6px 0; }
#viewer-select { max-width:60em; }
#viewer-status { font-weight:600; }
#viewer-status[data-state=error] { color:#b3261e; }
#viewer-legend { list-style:none; padding:0; margin:6px 0; display:flex; flex-wrap:wrap; gap:6px 14px; font-size:12.5px; }
#viewer-legend .sw { display:inline-block; width:12px; height:12px; margin-right:5px; vertical-align:-1px; border-radius:2px; }
body.viewer-only > :not(#viewer) { display:none; }
#viewer-frame { width:100%; height:900px; border:1px solid var(--line); background:#fff; }
"""

# injected into the viewed page (the iframe) by the viewer script
FRAME_CSS = """
[data-tm-c] { position:relative !important; outline:2px solid var(--tm-c) !important; outline-offset:-1px;
  background-color:var(--tm-bg) !important; }
[data-tm-c]::after { content:attr(data-tm-label); position:absolute; right:0; top:0; z-index:2147483647;
  font:600 10px/1.3 ui-monospace,"DejaVu Sans Mono",monospace; color:#fff; background:var(--tm-c);
  padding:0 3px; white-space:nowrap; pointer-events:none; opacity:.92; }
[data-tm-inline]::after { position:static; margin-left:4px; }
html.tm-hide [data-tm-c] { visibility:hidden !important; }
"""

VIEWER_JS = r"""
(function () {
  "use strict";
  var PALETTE = ["#d9822b", "#2f6db5", "#b83280", "#2a9d8f", "#7b52ab", "#c0392b", "#5a8f29", "#b8860b",
                 "#1f77b4", "#8c564b", "#e377c2", "#17becf"];
  var data = JSON.parse(document.getElementById("viewer-data").textContent);
  var pages = data.pages;
  var sel = document.getElementById("viewer-select");
  var frame = document.getElementById("viewer-frame");
  var status = document.getElementById("viewer-status");
  var legend = document.getElementById("viewer-legend");
  var hide = document.getElementById("viewer-hide");
  var info = document.getElementById("viewer-page");
  if (!pages.length) { status.textContent = "no page could be sampled"; status.dataset.state = "empty"; return; }

  pages.forEach(function (p, i) {
    var o = document.createElement("option");
    o.value = String(i);
    o.textContent = i + ": " + p.site + " \u2014 " + (p.title || p.url) + " (" + p.template_pagelets.length + ")";
    sel.appendChild(o);
  });

  function rgba(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  // the children of `node` that form its k-th non-blank text run (1-based), or null. Blank is the
  // extractor's: nothing but Python's str.split() whitespace (str.isspace()), not trim()'s, which
  // strips U+FEFF and keeps \x1c-\x1f and \x85 (found in review)
  function textRun(node, k) {
    var runs = 0, run = [], text = "";
    function close() {
      var r = null;
      if (run.length && /[^\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/.test(text)) {
        runs += 1; if (runs === k) r = run;
      }
      run = []; text = "";
      return r;
    }
    for (var c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1) { var r = close(); if (r) return r; }
      else { run.push(c); if (c.nodeType === 3) text += c.data; }
    }
    return close();
  }

  // an element, or {run: [nodes]} for a text run, or null
  function resolve(doc, path) {
    var steps = path.split("/").filter(Boolean), node = doc.documentElement;
    if (!steps.length || steps[0].replace(/\[\d+\]$/, "").toLowerCase() !== node.localName.toLowerCase()) return null;
    for (var s = 1; s < steps.length; s++) {
      var m = /^(.+?)(?:\[(\d+)\])?$/.exec(steps[s]);
      var tag = m[1].toLowerCase(), want = m[2] ? parseInt(m[2], 10) : 1;
      if (tag === "text()") return s === steps.length - 1 ? (function (r) { return r ? {run: r} : null; })(textRun(node, want)) : null;
      var found = null, seen = 0;
      for (var c = node.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName.toLowerCase() === tag && ++seen === want) { found = c; break; }
      }
      if (!found) return null;
      node = found;
    }
    return node;
  }

  function mark(doc, target, color, label) {
    var el = target;
    if (target.run) {
      el = doc.createElement("span");
      el.setAttribute("data-tm-run", "");
      target.run[0].parentNode.insertBefore(el, target.run[0]);
      target.run.forEach(function (n) { el.appendChild(n); });
    }
    el.setAttribute("data-tm-c", "");
    // a short inline element (a link, a text run) gets its label after it, not over it
    if ((doc.defaultView.getComputedStyle(el).display || "inline") === "inline") el.setAttribute("data-tm-inline", "");
    el.setAttribute("data-tm-label", label);
    el.style.setProperty("--tm-c", color);
    el.style.setProperty("--tm-bg", rgba(color, 0.22));
  }

  function shade(i) {
    var p = pages[i], doc = frame.contentDocument;
    if (!doc || !doc.documentElement) { fail(i, "the page's document is not reachable from the report"); return; }
    var style = doc.createElement("style");
    style.textContent = data.frame_css;
    (doc.head || doc.documentElement).appendChild(style);
    var colors = {}, order = [], perTemplate = {}, shaded = 0, matched = 0, unresolved = [], mismatched = [];
    p.template_pagelets.forEach(function (t) {
      if (!(t.template_id in colors)) { colors[t.template_id] = PALETTE[order.length % PALETTE.length]; order.push(t.template_id); }
    });
    // resolve every path before changing the tree: wrapping a text run must not shift later text()[i] lookups
    var targets = p.template_pagelets.map(function (t) { return resolve(doc, t.dom_path); });
    p.template_pagelets.forEach(function (t, j) {
      if (!targets[j]) { unresolved.push(t.dom_path); return; }
      // the region must hold the pagelet's text (the tables' prefix of it), whitespace aside
      var have = (targets[j].run ? targets[j].run.map(function (n) { return n.nodeType === 3 ? n.data : ""; }).join("")
                  : targets[j].textContent).replace(/\s+/g, "");
      if (have.indexOf((t.text || "").replace(/\s+/g, "")) === 0) matched += 1; else mismatched.push(t.dom_path);
      mark(doc, targets[j], colors[t.template_id], "T" + (order.indexOf(t.template_id) + 1) + " " + t.template_id);
      shaded += 1;
      perTemplate[t.template_id] = (perTemplate[t.template_id] || 0) + 1;
    });
    doc.documentElement.classList.toggle("tm-hide", hide.checked);
    var shown = order.filter(function (id) { return perTemplate[id]; });
    status.dataset.state = unresolved.length || mismatched.length ? "partial" : "done";
    status.dataset.page = String(i);
    status.dataset.url = p.url;
    status.dataset.expected = String(p.template_pagelets.length);
    status.dataset.shaded = String(shaded);
    status.dataset.unresolved = String(unresolved.length);
    status.dataset.textMatched = String(matched);
    status.dataset.templateIds = shown.join(" ");
    status.textContent = "shaded " + shaded + " of " + p.template_pagelets.length + " template pagelets, " +
      shown.length + " template(s)" + (unresolved.length ? "; not found in the page: " + unresolved.join(", ") : "") +
      (mismatched.length ? "; text differs from the pagelet's at: " + mismatched.join(", ") : "");
    legend.textContent = "";
    order.forEach(function (id, k) {
      var li = document.createElement("li"), sw = document.createElement("span");
      li.dataset.templateId = id;
      li.dataset.shaded = String(perTemplate[id] || 0);
      sw.className = "sw"; sw.style.background = colors[id];
      li.appendChild(sw);
      var t = data.templates[id] || {};
      li.appendChild(document.createTextNode("T" + (k + 1) + " " + id + " \u00d7" + (perTemplate[id] || 0) +
        (t.n_pages ? ", on " + t.n_pages + " pages" : "") + (t.sample_text ? ": \u201c" + t.sample_text.slice(0, 60) + "\u201d" : "")));
      legend.appendChild(li);
    });
  }

  function fail(i, why) {
    status.dataset.state = "error"; status.dataset.page = String(i); status.textContent = why;
  }

  function show(i) {
    var p = pages[i];
    sel.value = String(i);
    status.dataset.state = "loading";
    status.textContent = "loading\u2026";
    info.textContent = "";
    var a = document.createElement("a");
    a.href = p.url; a.textContent = p.url; a.rel = "noreferrer";
    info.appendChild(a);
    info.appendChild(document.createTextNode("  \u00b7 " + p.n_pagelets + " pagelets, " + p.template_pagelets.length +
      " template pagelets, template share of tokens " +
      (p.template_token_fraction == null ? "unknown" : (100 * p.template_token_fraction).toFixed(1) + "%")));
    frame.onload = function () { shade(i); };
    frame.srcdoc = p.html;
  }

  function fromHash() {
    // page=INDEX or page=URL, the URL escaped or as stored (it may hold & and %XX itself:
    // everything after "page=" up to a trailing "&only" is the value)
    var m = /(?:^#|&)page=(.*?)(?:&only)?$/.exec(location.hash);
    if (!m) return null;
    var raw = m[1], v = raw;
    try { v = decodeURIComponent(raw); } catch (e) { v = raw; }  // a stray % is no reason to stop the viewer
    if (/^\d+$/.test(v) && +v < pages.length) return +v;
    for (var i = 0; i < pages.length; i++) if (pages[i].url === v || pages[i].url === raw) return i;
    return -1;
  }

  sel.addEventListener("change", function () { location.hash = "page=" + sel.value; });
  hide.addEventListener("change", function () {
    var doc = frame.contentDocument;
    if (doc && doc.documentElement) doc.documentElement.classList.toggle("tm-hide", hide.checked);
  });
  window.addEventListener("hashchange", function () { var i = fromHash(); if (i !== null && i >= 0) show(i); });
  // "#page=N&only": the viewer alone (screenshots: a headless browser captures the top of the page)
  var only = /(?:^#|&)only(?:&|$)/.test(location.hash);
  if (only) document.body.classList.add("viewer-only");
  var first = fromHash();
  if (first === -1) { fail(-1, "page " + location.hash.slice(1) + " is not among the sampled pages"); return; }
  show(first === null ? 0 : first);
  if (first !== null && !only) document.getElementById("viewer").scrollIntoView();
})();
"""
