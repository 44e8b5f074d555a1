"""Plotly figure specifications as plain dicts. They travel in a ``data-figure`` attribute and are
drawn by ``assets/gamut.js`` with the one shared plotly.js, themed for light or dark palette."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.render import chart_text
from scoring.numbers import number

Figure = dict[str, Any]
SCORE_AXIS = "Gamut score (points, −100 to 100)"
COLOURS = ("#3f6ad8", "#e07b00", "#2a9d5b", "#c2185b", "#7b61c9", "#8d6e63")
_LEGEND = {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0}
_MARGIN = {"l": 10, "r": 20, "t": 30, "b": 50}


def _clean(values: Sequence[Any], digits: int = 2) -> list[float | None]:
    return [None if (f := number(v)) is None else round(f, digits) for v in values]


def _err(values: Sequence[Any], lo: Sequence[Any], hi: Sequence[Any]) -> dict[str, Any]:
    plus: list[float | None] = []
    minus: list[float | None] = []
    for v, a, b in zip(_clean(values), _clean(lo), _clean(hi), strict=True):
        ok = v is not None and a is not None and b is not None
        plus.append(round(b - v, 2) if ok else None)  # type: ignore[operator]
        minus.append(round(v - a, 2) if ok else None)  # type: ignore[operator]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
            "thickness": 1.5, "width": 4}  # fmt: skip


def _layout(x_title: str, y_title: str, n_rows: int, **extra: Any) -> dict[str, Any]:
    return {
        "height": int(140 + 26 * max(n_rows, 1)),
        "margin": dict(_MARGIN),
        "xaxis": {"title": {"text": x_title}, "zeroline": True, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "autorange": "reversed"},
        "legend": _LEGEND,
        "hovermode": "closest",
        **extra,
    }


def _points(name: str, x: list[Any], y: list[Any], i: int, **more: Any) -> dict[str, Any]:
    """A trace of markers, coloured by its place ``i``, hovering "label: x" by default."""
    return {
        "type": "scatter",
        "mode": "markers",
        "name": chart_text(name),
        "x": x,
        "y": y,
        "hovertemplate": "%{y}: %{x:.1f}<extra>" + chart_text(name) + "</extra>",
        **more,
        "marker": {"size": 9, "color": COLOURS[i % len(COLOURS)], **more.get("marker", {})},
    }


def dot_ci(
    labels: Sequence[Any],
    series: Sequence[tuple[str, Sequence[Any], Sequence[Any], Sequence[Any]]],
    *,
    x_title: str = SCORE_AXIS,
    y_title: str = "Model",
    keys: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
) -> Figure:
    """Scores as dots with 95% CI whiskers, one row per label (escaped here for plotly), one trace
    per series (name, values, lo, hi). ``keys``: a filter value per trace (its
    ``legendgroup``), and ``ids``: a row id per label (each point's ``customdata``), so that a
    page's filters can hide them."""
    y = [chart_text(lbl) for lbl in labels]
    data = []
    for i, (name, values, lo, hi) in enumerate(series):
        extra: dict[str, Any] = {"orientation": "h", "error_x": _err(values, lo, hi)}
        if keys is not None:
            extra["legendgroup"] = keys[i]
        if ids is not None:
            extra["customdata"] = list(ids)
        data.append(_points(name, _clean(values), y, i, **extra))
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
    z_scale = {"zmid": 0} if zrange is None else {"zmin": zrange[0], "zmax": zrange[1]}
    trace = {
        "type": "heatmap",
        "x": [chart_text(v) for v in x],
        "y": [chart_text(v) for v in y],
        "z": [_clean(row) for row in z],
        "colorscale": "RdBu",
        "reversescale": True,
        **z_scale,
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
    layout = _layout(x_title, y_title, len(y))
    layout["xaxis"]["side"] = "top"
    layout["margin"]["t"] = 80
    if cell is not None:
        layout["width"] = 260 + cell * max(len(x), 1)
        layout["height"] = 130 + cell * max(len(y), 1)
        layout["autosize"] = False
    return {"data": [trace], "layout": layout}


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
    line = {
        "type": "scatter",
        "mode": "lines",
        "x": [v for a, b in zip(lx, rx, strict=True) for v in (a, b, None)],
        "y": [v for lbl in y for v in (lbl, lbl, None)],
        "showlegend": False,
        "hoverinfo": "skip",
        "line": {"color": "#9e9e9e", "width": 3},
    }
    return {
        "data": [
            line,
            _points(left_name, lx, y, 0, marker={"size": 11}),
            _points(right_name, rx, y, 1, marker={"size": 11, "symbol": "diamond"}),
        ],
        "layout": _layout(x_title, "Model", len(labels)),
    }


def scatter(
    series: Sequence[tuple[str, Sequence[Any], Sequence[Any], Sequence[Any]]],
    *,
    x_title: str,
    y_title: str = SCORE_AXIS,
    x_format: str = ",.1f",
) -> Figure:
    """Points, one trace per series (name, x values, y values, a label per point, shown on
    hover with both values, x in the d3 format ``x_format``). A point without both values is
    left out."""
    data = []
    for i, (name, xs, ys, labels) in enumerate(series):
        kept = [
            (x, y, chart_text(lbl))
            for x, y, lbl in zip(_clean(xs, 6), _clean(ys), labels, strict=True)
            if x is not None and y is not None
        ]
        hover = (
            f"%{{text}}<br>%{{x:{x_format}}} · %{{y:.1f}} points<extra>{chart_text(name)}</extra>"
        )
        x, y, text = ([p[k] for p in kept] for k in range(3))
        data.append(_points(name, x, y, i, text=text, hovertemplate=hover,
                            marker={"size": 10, "opacity": 0.85}))  # fmt: skip
    return {
        "data": data,
        "layout": {
            "height": 420,
            "margin": _MARGIN,
            "xaxis": {"title": {"text": x_title}, "automargin": True, "zeroline": False},
            "yaxis": {"title": {"text": y_title}, "automargin": True, "zeroline": True},
            "legend": _LEGEND,
            "showlegend": len(series) > 1,
            "hovermode": "closest",
        },
    }
