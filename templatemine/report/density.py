"""Text density of a block (Kohlschütter 2009; Kohlschütter & Nejdl 2008).

Kohlschütter's densitometric analysis ("A densitometric analysis of web
template content", WWW 2009 poster, Figure 1) relates the tokens of a text block
to the "area" the block occupies when its text is word-wrapped at a fixed line
width w_max, and histograms the *tokens* of a corpus by rounded density: low
density (few words per line: menus, link lists, footers) is mostly template,
high density (running sentences) mostly content, two modes near 2 and 12.

The density is BlockFusion's (Kohlschütter & Nejdl, CIKM 2008, the poster's
reference [3]): tokens per wrapped line, where the last line, usually partial,
is left out when there is more than one line:

    density = tokens(lines 1..n-1) / (n - 1)   if n > 1
            = tokens                           if n = 1

Here a block is a pagelet (Definition 2 of Bar-Yossef & Rajagopalan), a token
a whitespace-separated word, and wrapping is greedy at WRAP_WIDTH = 80
characters (a word longer than the line sits on a line of its own).

This module is the reference: the report computes the same fold in Spark
(templatemine/report/gather.py, `density_columns`), tested to agree with it.
"""

from __future__ import annotations

import math
from typing import Iterable, NamedTuple

WRAP_WIDTH = 80
MAX_BIN = 40  # densities above are pooled in the last bin (the poster's axis ends at 25)


class Wrapped(NamedTuple):
    tokens: int
    lines: int
    last_line_tokens: int

    @property
    def density(self) -> float:
        if self.lines > 1:
            return (self.tokens - self.last_line_tokens) / (self.lines - 1)
        return float(self.tokens)


def wrap(text: str, width: int = WRAP_WIDTH) -> Wrapped:
    """Greedy word wrap, counting instead of building the lines."""
    current = lines = last = tokens = 0
    for word in text.split():
        n = len(word)
        if current == 0:
            current, lines, last = n, 1, 1
        elif current + 1 + n <= width:
            current, last = current + 1 + n, last + 1
        else:
            current, lines, last = n, lines + 1, 1
        tokens += 1
    return Wrapped(tokens, lines, last)


def text_density(text: str, width: int = WRAP_WIDTH) -> float:
    return wrap(text, width).density


def density_bin(density: float, max_bin: int = MAX_BIN) -> int:
    """The poster's rounding, half up (as Spark's `round`), capped at `max_bin`."""
    return min(int(math.floor(density + 0.5)), max_bin)


def density_histogram(blocks: Iterable[tuple[str, bool]], width: int = WRAP_WIDTH,
                      max_bin: int = MAX_BIN) -> dict[int, tuple[int, int]]:
    """{bin: (non-template tokens, template tokens)} over (text, is_template)
    blocks: what the report's Spark job aggregates, for small inputs and tests."""
    hist: dict[int, list[int]] = {}
    for text, is_template in blocks:
        w = wrap(text, width)
        if w.tokens:
            slot = hist.setdefault(density_bin(w.density, max_bin), [0, 0])
            slot[1 if is_template else 0] += w.tokens
    return {b: (v[0], v[1]) for b, v in sorted(hist.items())}
