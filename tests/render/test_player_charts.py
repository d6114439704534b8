"""The player's page's charts in both languages (pbem.render.player_charts)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pbem.render.charts import chart_svg
from pbem.render.player_charts import pr_chart, rating_chart, records_chart
from pbem.render.templating import environment
from pbem.render.views import FormatRecord, PRPoint, RatingHistory, RatingStep

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("language", ["en", "de"])
def test_no_fixed_text_of_the_charts_is_cut_short(language: str) -> None:
    """The charts' own words (titles, axes, legends, bands) fit whole: "PR (je niedriger, desto
    besser)" was cut to "PR (je niedriger, desto besse…"."""
    words = environment().get_template(f"{language}/web.txt").make_module({"language": language})
    charts = (
        pr_chart((PRPoint("2026-11-28", "Ben", 8.0, "advanced", 8.0, None),), "Anna", words),
        records_chart((FormatRecord("match", 3, 2, 1, 0),), "Anna", words),
        rating_chart(RatingHistory("match", 1500.0, (RatingStep("2026-11-28", 1510.0),)), "Anna", words),
    )
    for chart in charts:
        texts = [text.text or "" for text in ET.fromstring(chart_svg(chart)).iter(f"{SVG}text")]
        assert not [text for text in texts if text.endswith("…")], texts
