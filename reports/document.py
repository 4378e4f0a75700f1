"""One report, two renderings: a self-contained HTML page and a Markdown twin.

A report is an ordered list of sections; each holds paragraphs (plain
text, but for Markdown's **bold** and `code`), tables (pandas DataFrames)
and matplotlib figures. `write(out_dir)` renders
`report.html` (figures embedded as base64 PNG, no network resources),
`report.md` (figures as PNG files beside it) and the PNG files themselves.
Library code never touches pyplot's global state: figures are created with
`matplotlib.figure.Figure` by the plot functions and handed in here.
"""
from __future__ import annotations

import base64
import html
import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..analysis.runio import write_all_atomic


@dataclass
class _Figure:
    name: str
    caption: str
    png: bytes


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)  # str | pd.DataFrame | _Figure

    def text(self, paragraph: str) -> "Section":
        self.blocks.append(paragraph)
        return self

    def table(self, frame: pd.DataFrame, caption: str = "") -> "Section":
        self.blocks.append((frame, caption))
        return self

    def figure(self, fig: Figure, caption: str, name: str | None = None) -> "Section":
        buffer = io.BytesIO()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        missing = []
        for warning in caught:  # a card name in a script the font lacks: said in the caption, not as a warning a line
            glyph = re.match(r"Glyph (\d+) .*missing from font", str(warning.message))
            if glyph:
                missing.append(chr(int(glyph[1])))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        if missing:
            caption += f" (its font has no {' '.join(dict.fromkeys(missing))}, drawn as boxes: the tables show them)"
        slug = name or re.sub(r"[^a-z0-9]+", "_", caption.lower()).strip("_")[:40] or "figure"
        self.blocks.append(_Figure(slug, caption, buffer.getvalue()))
        return self


@dataclass
class Report:
    title: str
    sections: list[Section] = field(default_factory=list)
    on_section: Callable[[str], None] | None = field(default=None, repr=False)  # told each section's title

    def section(self, title: str) -> Section:
        if self.on_section:
            self.on_section(title)
        section = Section(title)
        self.sections.append(section)
        return section

    def figures(self) -> list[_Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, _Figure)]

    def to_markdown(self) -> str:
        lines = [f"# {_literal(self.title)}", ""]
        for section in self.sections:
            lines += [f"## {_literal(section.title)}", ""]
            for block in section.blocks:
                if isinstance(block, str):
                    lines += [_markdown_paragraph(block), ""]
                elif isinstance(block, _Figure):
                    caption = _markdown_paragraph(block.caption)
                    lines += [f"![{caption}]({block.name}.png)", "", f"*{caption}*", ""]
                else:
                    frame, caption = block
                    if caption:
                        lines += [f"**{_markdown_paragraph(caption)}**", ""]
                    lines += [_markdown_table(frame), ""]
        return "\n".join(lines)

    def to_html(self) -> str:
        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{html.escape(self.title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
        ]
        for section in self.sections:
            parts.append(f"<h2>{html.escape(section.title)}</h2>")
            for block in section.blocks:
                if isinstance(block, str):
                    parts.append(f"<p>{_inline(block)}</p>")
                elif isinstance(block, _Figure):
                    data = base64.b64encode(block.png).decode("ascii")
                    parts.append(
                        f"<figure><img alt='{html.escape(block.caption)}' src='data:image/png;base64,{data}'>"
                        f"<figcaption>{_inline(block.caption)}</figcaption></figure>"
                    )
                else:
                    frame, caption = block
                    if caption:
                        parts.append(f"<p><b>{_inline(caption)}</b></p>")
                    # without the columns' own name, which pandas would print as a header cell of its own
                    parts.append(frame.rename_axis(columns=None).to_html(index=False, border=0, classes="t",
                                                                         na_rep="", float_format=significant))
        parts.append("</body></html>")
        return "\n".join(parts)

    def write(self, out_dir: str | os.PathLike) -> Path:
        """Write report.html, report.md and the figures; return the HTML path.

        All files are written under temporary names and renamed once all are
        written, so a reader never sees half a report, nor a new report.md
        beside an old report.html after a full disk. The figures of an earlier report in the
        folder that this one does not have are removed (only those its
        report.md showed), so that none is taken for this report's.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        earlier = _figure_files(out / "report.md")
        write_all_atomic({**{out / f"{fig.name}.png": fig.png for fig in self.figures()},
                          out / "report.md": self.to_markdown(), out / "report.html": self.to_html()})
        for name in earlier - {f"{fig.name}.png" for fig in self.figures()}:
            (out / name).unlink(missing_ok=True)
        return out / "report.html"


def _figure_files(markdown: Path) -> set[str]:
    """The PNG files a report.md written by `Report.write` shows (none if
    there is no such file): names as `Section.figure` makes them."""
    try:
        text = markdown.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return set()
    return set(re.findall(r"^!\[.*\]\(([a-z0-9_]+\.png)\)$", text, flags=re.MULTILINE))


def percent(share: float, decimals: int = 1) -> str:
    """A share in percent (no sign) with `decimals` decimals, or more where a
    share that is not 0 (or 1) would round to 0 (or 100): two significant
    digits of its distance from there, so that an interval's bound of 0.000038
    reads 0.0038, not 0.0 as if the rate were certain."""
    p = 100 * share
    gap = min(p, 100 - p)
    if 0 < gap < 0.5 * 10.0 ** -decimals:
        decimals = 1 - math.floor(math.log10(gap))
    return f"{p:.{decimals}f}"


def _given(x) -> bool:
    return x is not None and bool(np.isfinite(x))


def percent_text(share, decimals: int = 1) -> str:
    """A lone share as the reports write one, the sign after a space:
    "12.5 %"; "n/a" where there is none (None or not finite)."""
    return f"{percent(share, decimals)} %" if _given(share) else "n/a"


def percent_ci(rate, low, high, decimals: int = 1) -> str:
    """A rate with its interval as every report writes one: "50.0 % [48.6,
    51.4]", the sign once after the rate and the bounds in the same unit
    without it; `decimals` as in `percent`, for all three. The interval is
    left off where a bound is missing (None or not finite)."""
    interval = f" [{percent(low, decimals)}, {percent(high, decimals)}]" if _given(low) and _given(high) else ""
    return percent_text(rate, decimals) + interval


def _inline(text: str) -> str:
    """Plain text as HTML, but for the Markdown the reports write in it:
    **bold** and `code`."""
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(text))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def significant(value: float) -> str:
    """A number as every report's tables and texts give it: 4 significant digits (a small bound, 0.0001921, is not 0)."""
    return f"{value:.4g}"


def _literal(text: str) -> str:
    """Text the HTML twin shows as it is (a design's title, a card's name, a table cell) made literal in
    Markdown too: its emphasis, code and tag characters escaped (an underscore only at a word's edge, where
    it would start emphasis: km_25 stays as written)."""
    return re.sub(r"[*`|]|<(?=[A-Za-z/!?])|(?<!\w)_|_(?!\w)", lambda m: "\\" + m[0], text)


def _markdown_paragraph(text: str) -> str:
    """A paragraph in Markdown as _inline shows it in HTML: its **bold** and `code` kept, any other
    emphasis or tag character (in a design's title, say) literal."""
    return "".join(part if part.startswith("`") else
                   re.sub(r"<(?=[A-Za-z/!?])|(?<![*\s])\*(?!\*)|(?<!\*)\*(?![*\s])|(?<!\w)_|_(?!\w)",
                          lambda m: "\\" + m[0], part)
                   for part in re.split(r"(`[^`]+`)", text))


def _markdown_table(frame: pd.DataFrame) -> str:
    def cell(v):
        if isinstance(v, float):
            return "" if pd.isna(v) else significant(v)
        return _literal(str(v))

    header = "| " + " | ".join(_literal(str(c)) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])



_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table.t{border-collapse:collapse;margin:.5em 0 1.5em}"
    "table.t td,table.t th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
    "figure{margin:1em 0}img{max-width:100%}figcaption{color:#555;font-size:90%}"
)
