"""The per-page step of DOM-level distillation (graph/dom.py), without Spark."""

import pandas as pd

from templatemine.graph.dom import PAGE_ROOT, leaf_path, segment_page
from templatemine.graph.mdl import segment


def test_leaf_path_is_the_pagelet_path_then_the_link():
    assert leaf_path("/html/body/div[2]/ul[1]", 7) == (
        PAGE_ROOT, "/html", "/html/body", "/html/body/div[2]", "/html/body/div[2]/ul[1]", "link:7")
    assert leaf_path(None, 3) == (PAGE_ROOT, "link:3")  # a link in no pagelet hangs from the page
    # ...and so under pandas 3, where applyInPandas hands a null string over as NaN (found in review)
    assert leaf_path(float("nan"), 3) == (PAGE_ROOT, "link:3")
    pdf = pd.DataFrame({"page_key": [1, 1], "link_ordinal": [0, 1], "dst_page_key": [100, 101],
                        "dom_path": pd.array([None, "/html/body/ul[1]"], dtype="str"), "h": [1.0, 0.0]})
    assert len(segment_page(pdf, delta=0.05)) == 2


def _page(blocks):
    rows, i = [], 0
    for path, scores in blocks:
        for h in scores:
            rows.append({"page_key": 1, "link_ordinal": i, "dst_page_key": 100 + i, "dom_path": path, "h": h})
            i += 1
    return pd.DataFrame(rows)


def test_a_mixed_hub_pools_its_relevant_list_and_not_its_menu():
    menu = ("/html/body/nav[1]", [0.0] * 12)
    good = ("/html/body/main[1]/ul[1]", [0.9, 1.1, 1.0, 1.3, 0.8, 0.0, 1.2])  # one link not yet rated
    other = ("/html/body/main[1]/ul[2]", [0.0] * 10)
    out = segment_page(_page([menu, good, other]), delta=0.05)
    by_block = out.groupby("frontier")["h"].agg(["min", "max", "count"])
    pooled = by_block.loc["/html/body/main[1]/ul[1]"]
    # every link of the relevant list, the unrated one too, gets the list's total: authority diffuses there
    assert pooled["count"] == 7 and pooled["min"] == pooled["max"] == sum(good[1])
    assert out.loc[out["frontier"] != "/html/body/main[1]/ul[1]", "h"].max() == 0.0  # menus stay at zero
    assert out["expanded"].sum() >= 1 and len(out) == 29


def test_frontier_bits_keep_an_even_list_whole():
    # the knife edge of graph/mdl.py: seven links at 1.0 and one at 1.7 split apart on 0.04 bits
    paths = [("page", "/ul", f"link:{i}") for i in range(8)] + [("page", "/nav", f"link:{i}") for i in range(8, 20)]
    scores = [1.0] * 7 + [1.7] + [0.0] * 12
    assert "/ul" not in segment(paths, scores, 0.05).frontier
    assert "/ul" in segment(paths, scores, 0.05, node_bits=1.0).frontier
