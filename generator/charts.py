"""Plotly figure specifications as plain dicts. They travel in a ``data-figure`` attribute and are
drawn by ``assets/gamut.js`` with the one shared plotly.js, themed for light or dark palette."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from generator.render import chart_text

Figure = dict[str, Any]
SCORE_AXIS = "Gamut score (points, −100 to 100)"
COLOURS = ("#3f6ad8", "#e07b00", "#2a9d5b", "#c2185b", "#7b61c9", "#8d6e63")


def _clean(values: Sequence[Any], digits: int = 2) -> list[float | None]:
    out: list[float | None] = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            out.append(None)
            continue
        out.append(None if math.isnan(f) else round(f, digits))
    return out


def _err(values: Sequence[Any], lo: Sequence[Any], hi: Sequence[Any]) -> dict[str, Any]:
    plus, minus = [], []
    for v, lo_v, hi_v in zip(_clean(values), _clean(lo), _clean(hi), strict=True):
        ok = v is not None and lo_v is not None and hi_v is not None
        plus.append(round(hi_v - v, 2) if ok else None)  # type: ignore[operator]
        minus.append(round(v - lo_v, 2) if ok else None)  # type: ignore[operator]
    return {
        "type": "data",
        "symmetric": False,
        "array": plus,
        "arrayminus": minus,
        "thickness": 1.5,
        "width": 4,
    }


def _height(n_rows: int) -> int:
    return int(140 + 26 * max(n_rows, 1))


def _layout(x_title: str, y_title: str, n_rows: int, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "height": _height(n_rows),
        "margin": {"l": 10, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": x_title}, "zeroline": True, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "autorange": "reversed"},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def dot_ci(
    labels: Sequence[Any],
    series: Sequence[tuple[str, Sequence[Any], Sequence[Any], Sequence[Any]]],
    *,
    x_title: str = SCORE_AXIS,
    y_title: str = "Model",
    keys: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
) -> Figure:
    """Scores as dots with 95% CI whiskers, one row per label, one trace per series.

    Args:
        labels: row labels (escaped here for plotly).
        series: (name, values, lo, hi) per trace.
        x_title: the score axis title, with its unit.
        y_title: the category axis title.
        keys: a filter value per trace (its ``legendgroup``), so a page's filters can hide it.
        ids: a row id per label (each point's ``customdata``), for the same purpose.
    """
    y = [chart_text(lbl) for lbl in labels]
    data = []
    for i, (name, values, lo, hi) in enumerate(series):
        extra: dict[str, Any] = {}
        if keys is not None:
            extra["legendgroup"] = keys[i]
        if ids is not None:
            extra["customdata"] = list(ids)
        data.append(
            {
                **extra,
                "type": "scatter",
                "mode": "markers",
                "orientation": "h",
                "name": chart_text(name),
                "x": _clean(values),
                "y": y,
                "error_x": _err(values, lo, hi),
                "marker": {"size": 9, "color": COLOURS[i % len(COLOURS)]},
                "hovertemplate": "%{y}: %{x:.1f}<extra>" + chart_text(name) + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": _layout(x_title, y_title, len(labels), showlegend=len(series) > 1),
    }


def heatmap(
    x: Sequence[Any],
    y: Sequence[Any],
    z: Sequence[Sequence[Any]],
    *,
    x_title: str,
    y_title: str = "Model",
    z_title: str = "Gamut (points)",
    decimals: int = 1,
    zrange: tuple[float, float] | None = None,
    cell: int | None = None,
) -> Figure:
    """A labelled heatmap, values printed with ``decimals`` decimals; blue is high.

    ``zrange`` fixes the colour range (e.g. -1 to 1 for correlations); otherwise it is
    centred on zero. ``cell`` (pixels) gives square cells of that size and a fixed plot size
    instead of the page's full width, for small matrices.
    """
    data = [
        {
            "type": "heatmap",
            "x": [chart_text(v) for v in x],
            "y": [chart_text(v) for v in y],
            "z": [_clean(row) for row in z],
            "colorscale": "RdBu",
            "reversescale": True,
            "zmid": 0,
            "texttemplate": f"%{{z:.{decimals}f}}",
            "hovertemplate": f"%{{y}} · %{{x}}: %{{z:.{decimals}f}}<extra></extra>",
            "colorbar": {
                "title": {"text": chart_text(z_title), "side": "right"},
                "thickness": 14,
                "outlinewidth": 0,
            },
            "xgap": 1,
            "ygap": 1,
        }
    ]
    if zrange is not None:
        data[0].pop("zmid")
        data[0]["zmin"], data[0]["zmax"] = zrange
    layout = _layout(x_title, y_title, len(y))
    layout["xaxis"]["side"] = "top"
    layout["margin"]["t"] = 80
    if cell is not None:
        layout["width"] = 260 + cell * max(len(x), 1)
        layout["height"] = 130 + cell * max(len(y), 1)
        layout["autosize"] = False
    return {"data": data, "layout": layout}


def dumbbell(
    labels: Sequence[Any],
    left: Sequence[Any],
    right: Sequence[Any],
    *,
    left_name: str,
    right_name: str,
    x_title: str = SCORE_AXIS,
) -> Figure:
    """Two scores per row joined by a line (e.g. multimodal and text-only)."""
    y = [chart_text(lbl) for lbl in labels]
    lx, rx = _clean(left), _clean(right)
    seg_x: list[float | None] = []
    seg_y: list[str | None] = []
    for a, b, lbl in zip(lx, rx, y, strict=True):
        seg_x += [a, b, None]
        seg_y += [lbl, lbl, None]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": seg_x,
            "y": seg_y,
            "showlegend": False,
            "hoverinfo": "skip",
            "line": {"color": "#9e9e9e", "width": 3},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": chart_text(left_name),
            "x": lx,
            "y": y,
            "marker": {"size": 11, "color": COLOURS[0]},
            "hovertemplate": "%{y}: %{x:.1f}<extra>" + chart_text(left_name) + "</extra>",
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": chart_text(right_name),
            "x": rx,
            "y": y,
            "marker": {"size": 11, "color": COLOURS[1], "symbol": "diamond"},
            "hovertemplate": "%{y}: %{x:.1f}<extra>" + chart_text(right_name) + "</extra>",
        },
    ]
    return {"data": data, "layout": _layout(x_title, "Model", len(labels))}


def scatter(
    series: Sequence[tuple[str, Sequence[Any], Sequence[Any], Sequence[Any]]],
    *,
    x_title: str,
    y_title: str = SCORE_AXIS,
    x_format: str = ",.1f",
    x_log: bool = False,
) -> Figure:
    """Points, one trace per series (name, x values, y values, a label per point, shown on
    hover with both values). A point without both values is left out.

    ``x_format``: the d3 format of x in the hover text; ``x_log``: a logarithmic x axis (for
    costs spanning orders of magnitude).
    """
    data = []
    for i, (name, xs, ys, labels) in enumerate(series):
        kept = [
            (x, y, chart_text(lbl))
            for x, y, lbl in zip(_clean(xs, 6), _clean(ys), labels, strict=True)
            if x is not None and y is not None
        ]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": chart_text(name),
                "x": [p[0] for p in kept],
                "y": [p[1] for p in kept],
                "text": [p[2] for p in kept],
                "marker": {"size": 10, "color": COLOURS[i % len(COLOURS)], "opacity": 0.85},
                "hovertemplate": f"%{{text}}<br>%{{x:{x_format}}} · %{{y:.1f}} points<extra>"
                + chart_text(name)
                + "</extra>",
            }
        )
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "automargin": True, "zeroline": False}
    if x_log:
        xaxis["type"] = "log"
    return {
        "data": data,
        "layout": {
            "height": 420,
            "margin": {"l": 10, "r": 20, "t": 30, "b": 50},
            "xaxis": xaxis,
            "yaxis": {"title": {"text": y_title}, "automargin": True, "zeroline": True},
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
            "showlegend": len(series) > 1,
            "hovermode": "closest",
        },
    }
