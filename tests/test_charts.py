"""The inline SVG charts (``pipeline.reports.svg``) where a page clipped or misdrew them:
turned row names that passed the chart's left edge, and a line drawn between categories."""

from __future__ import annotations

import html as html_lib
import re


def test_turned_labels_stay_inside_the_chart_and_categories_get_points():
    """Long row names turned under the axis start at or right of the view's left edge
    (the page clipped them before); a series of categories draws its points, no line."""
    import math as _m

    from pipeline.reports.svg import ROTATE, Series, _text_width, line_chart

    names = [f"{c} (dailies from 2026-02-01)" for c in ("bangkok", "beijing", "istanbul",
                                                        "seoul", "singapore", "tokyo")]
    svg = line_chart(ns="t", title="t", xlabel="x", ylabel="y", xs=range(6), xticks=names,
                     series=[Series("D", [0, 2, 1, 0, 3, 1], "#000", joined=False),
                             Series("threshold", [0] * 6, "#f00", marker="none")])
    x0, _, w, _ = map(float, re.search(r'viewBox="([^"]+)"', svg).group(1).split())
    assert x0 < 0 and f'width="{w:g}"' in svg
    turned = re.findall(r'<text transform="translate\(([\d.]+) [\d.]+\) rotate\(-55\)" '
                        r'text-anchor="end">([^<]+)</text>', svg)
    assert [html_lib.unescape(t) for _, t in turned] == names
    for x, text in turned:
        assert float(x) - _text_width(html_lib.unescape(text)) * _m.cos(_m.radians(ROTATE)) \
            >= x0 - 1e-9, text
    assert 'polyline points' in svg and 'data-series="D"/>' not in svg
    assert svg.count('<polyline') == 1  # the threshold's alone
    assert len(re.findall(r'<circle [^>]*data-series="D"', svg)) == 6
