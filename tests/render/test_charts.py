"""The chart library: one model, an SVG that is safe to put in a page and a PNG fit for a mail,
both placing the same things in the same spots."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from pbem.render.charts import (
    HEIGHT, TONES, WIDTH, Bar, Chart, Marker, Reference, Series, Tick, chart_png, chart_svg, frame, moving_average,
)

SVG = "{http://www.w3.org/2000/svg}"
SWINGS = tuple((float(move), float(50 + 45 * ((move * 7) % 11 - 5) / 5)) for move in range(1, 31))


def winning_chances(**changes: object) -> Chart:
    chart = Chart(
        title="Winning chances", x_label="Move", y_label="Anna's chance to win", y_range=(0, 100),
        series=(Series(SWINGS, label="Anna"),), references=(Reference(50, "50%"),), y_suffix="%",
        markers=(Marker(4, "1", SWINGS[3][1]), Marker(17, "2", SWINGS[16][1]), Marker(25, "3")),
        description="Anna's chance to win after every roll; her three worst decisions marked.")
    return Chart(**{**chart.__dict__, **changes})  # type: ignore[arg-type]


def parsed(chart: Chart) -> ET.Element:
    return ET.fromstring(chart_svg(chart))


def picture(chart: Chart, width: int = WIDTH, height: int = HEIGHT) -> Image.Image:
    return Image.open(io.BytesIO(chart_png(chart, width, height))).convert("RGB")


def near(image: Image.Image, at: tuple[float, float], colour: tuple[int, int, int], reach: int = 2) -> bool:
    """Whether a pixel within ``reach`` of ``at`` has ``colour``."""
    x, y = round(at[0]), round(at[1])
    return any(image.getpixel((x + dx, y + dy)) == colour
               for dx in range(-reach, reach + 1) for dy in range(-reach, reach + 1))


def test_the_svg_is_xml_with_a_title_and_a_description_and_nothing_from_outside() -> None:
    svg = chart_svg(winning_chances())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert root[0].tag == f"{SVG}title" and root[0].text == "Winning chances"
    assert root[1].tag == f"{SVG}desc" and root[1].text.startswith("Anna's chance")
    assert "url(" not in svg and "<!" not in svg
    for element in root.iter():
        assert element.tag.removeprefix(SVG) not in ("script", "image", "foreignObject", "a", "use", "style")
        for name in element.attrib:
            assert not name.startswith("on") and "href" not in name, (element.tag, name)


@pytest.mark.parametrize("hostile", ['</title><script>alert("x")</script>', "A & B <b>", "x\x00y\x1b]z'\""])
def test_hostile_labels_are_text_in_the_svg(hostile: str) -> None:
    chart = winning_chances(title=hostile, x_label=hostile, y_label=hostile, description=hostile,
                            series=(Series(SWINGS, label=hostile),), markers=(Marker(3, hostile, 40),),
                            references=(Reference(50, hostile),))
    root = parsed(chart)
    assert not list(root.iter(f"{SVG}script"))
    assert not list(root.iter(f"{SVG}b"))
    clean = hostile.replace("\x00", "").replace("\x1b", "")
    assert root.find(f"{SVG}title").text == clean
    assert root.find(f"{SVG}desc").text == clean
    texts = ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]
    assert any(clean.startswith(text.rstrip("…")) for text in texts)
    picture(chart)  # the PNG draws the same texts without complaint


def test_the_png_opens_with_the_size_asked_for() -> None:
    for width, height in ((WIDTH, HEIGHT), (480, 240)):
        png = chart_png(winning_chances(), width, height)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        image = Image.open(io.BytesIO(png))
        image.load()
        assert image.size == (width, height)
        assert set(image.info) <= {"transparency"}, "no metadata"


def test_points_map_into_the_plot_area_and_values_off_the_range_onto_its_edge() -> None:
    chart = winning_chances(series=(Series(SWINGS + ((31.0, 130.0), (32.0, -20.0))),))
    plot = frame(chart)
    assert plot.x_range == (1.0, 32.0) and plot.y_range == (0, 100)
    assert plot.point(1, 0) == (plot.left, plot.bottom)
    assert plot.point(32, 100) == (plot.right, plot.top)
    assert plot.y(130) == plot.top and plot.y(-20) == plot.bottom
    assert plot.y(50) == pytest.approx((plot.top + plot.bottom) / 2)
    svg_points = [tuple(map(float, pair.split(",")))
                  for pair in parsed(chart).find(f"{SVG}polyline").get("points").split()]
    for x, y in svg_points:
        assert plot.left <= x <= plot.right and plot.top <= y <= plot.bottom
    assert svg_points[0] == pytest.approx(plot.point(*SWINGS[0]), abs=0.05)
    image = picture(chart)
    for x, y in SWINGS[::5]:
        assert near(image, plot.point(x, y), TONES["primary"]), (x, y)


def test_the_png_scales_the_plot_to_its_size() -> None:
    chart = winning_chances()
    small = frame(chart, 480, 240)
    image = picture(chart, 480, 240)
    for x, y in SWINGS[::7]:
        assert near(image, small.point(x, y), TONES["primary"])


def test_markers_are_in_both_pictures_at_their_x_with_their_labels() -> None:
    chart = winning_chances()
    plot = frame(chart)
    groups = [group for group in parsed(chart).iter(f"{SVG}g") if group.get("class") == "marker"]
    assert ["".join(group.find(f"{SVG}text").itertext()) for group in groups] == ["1", "2", "3"]
    rings = [group.find(f"{SVG}circle") for group in groups]
    assert float(rings[0].get("cx")) == pytest.approx(plot.x(4), abs=0.05)
    assert float(rings[0].get("cy")) == pytest.approx(plot.y(SWINGS[3][1]), abs=0.05)
    assert rings[2] is None, "a marker without y is a line and a label only"
    image = picture(chart)
    red = TONES["bad"]
    for marker in chart.markers[:2]:
        assert marker.y is not None
        x, y = plot.point(marker.x, marker.y)
        assert near(image, (x + 6, y), red) and near(image, (x - 6, y), red), marker
    assert not near(image, plot.point(10, 95), red, reach=1)


def test_no_markers_no_marks() -> None:
    chart = winning_chances(markers=())
    assert not [group for group in parsed(chart).iter(f"{SVG}g") if group.get("class") == "marker"]
    assert TONES["bad"] not in {colour for _, colour in picture(chart).getcolors(256) or ()}


def test_a_moving_average_is_the_trailing_mean_drawn_dashed() -> None:
    points = ((1.0, 10.0), (2.0, 20.0), (3.0, 30.0), (4.0, 0.0))
    assert moving_average(points, 2) == ((1.0, 10.0), (2.0, 15.0), (3.0, 25.0), (4.0, 15.0))
    chart = Chart(title="PR", x_label="Match", y_label="PR", y_range=(0, 40),
                  series=(Series(points, label="PR", style="points", moving_average=2, average_label="mean"),))
    root = parsed(chart)
    dots = [group for group in root.iter(f"{SVG}g") if group.get("class") == "series points"]
    assert len(dots[0].findall(f"{SVG}circle")) == 4
    average = next(line for line in root.iter(f"{SVG}polyline") if line.get("class") == "moving-average")
    assert average.get("stroke-dasharray")
    plot = frame(chart)
    assert average.get("points").split()[1] == "{:.1f},{:.1f}".format(*plot.point(2, 15))
    legend = [group for group in root.iter(f"{SVG}g") if group.get("class") == "legend"]
    assert [group.find(f"{SVG}text").text for group in legend] == ["PR", "mean"]
    assert legend[0].find(f"{SVG}circle") is not None, "points show as a dot"
    assert legend[1].find(f"{SVG}line").get("stroke-dasharray"), "the average as a dashed line"


def test_bars_each_have_a_slot_and_their_label_under_it() -> None:
    chart = Chart(title="Games", x_label="", y_label="games", y_range=(0, 10),
                  bars=(Bar("won", 7, "good"), Bar("lost", 3, "bad")))
    plot = frame(chart)
    bars = [rect for rect in parsed(chart).iter(f"{SVG}rect") if rect.get("class") == "bar"]
    assert [float(bar.get("height")) for bar in bars] == pytest.approx(
        [plot.bottom - plot.y(7), plot.bottom - plot.y(3)], abs=0.1)
    assert {"won", "lost"} <= {text.text for text in parsed(chart).iter(f"{SVG}text")}
    image = picture(chart)
    assert image.getpixel((round(plot.x(0)), round(plot.y(5)))) == TONES["good"]
    assert image.getpixel((round(plot.x(1)), round(plot.y(2)))) == TONES["bad"]
    assert image.getpixel((round(plot.x(1)), round(plot.y(5)))) != TONES["bad"]


def test_ticks_given_by_the_caller_replace_the_numbering() -> None:
    chart = winning_chances(x_ticks=(Tick(1, "Jan"), Tick(30, "Feb")), y_ticks=(Tick(0, "none"), Tick(100, "all")))
    texts = {text.text for text in parsed(chart).iter(f"{SVG}text")}
    assert {"Jan", "Feb", "none", "all"} <= texts and "50%" in texts  # the reference's label stays
    assert "20%" not in texts
    assert {"0%", "20%", "100%"} <= {text.text for text in parsed(winning_chances()).iter(f"{SVG}text")}


def test_the_same_chart_gives_the_same_svg_and_pixels() -> None:
    assert chart_svg(winning_chances()) == chart_svg(winning_chances())
    assert picture(winning_chances()).tobytes() == picture(winning_chances()).tobytes()


@pytest.mark.parametrize("last", [1, 2, 3])
def test_a_short_x_axis_counts_in_whole_numbers(last: int) -> None:
    """The x axes count moves, rated results and matches: a rating list with one result, or a
    game of two moves, is numbered 0, 1 (…), never 0, 0.2, 0.4 (nor 0.2 in German mails for 0,2)."""
    chart = winning_chances(series=(Series(tuple((float(x), 50.0) for x in range(last + 1))),), markers=(),
                            x_range=(0, last))
    texts = [text.text or "" for text in parsed(chart).iter(f"{SVG}text")]
    numbers = {label for label in texts if label.replace(".", "").isdigit()}
    assert numbers == {str(x) for x in range(last + 1)}


def test_labels_of_reference_lines_squeezed_together_never_overlap() -> None:
    """A novice's PR of 125 stretches the PR chart's axis so far that the bands' bounds (2.5
    apart) lie a few pixels from each other: a label that would overlap the one above it is
    left out (its line stays), in both pictures; on the usual axis every label is drawn."""
    bands = tuple(Reference(bound, f"band {bound}") for bound in (0.0, 2.5, 5.0, 7.5, 12.5, 17.5, 22.5))
    for top, all_drawn in ((25.0, True), (130.0, False)):
        chart = Chart(title="PR", x_label="match", y_label="PR", y_range=(0, top), references=bands,
                      series=(Series(((1.0, 10.0),)),))
        labels = [text for text in parsed(chart).iter(f"{SVG}text") if (text.text or "").startswith("band")]
        heights = sorted(float(text.get("y", 0)) for text in labels)
        assert (len(labels) == len(bands)) is all_drawn and labels
        assert all(lower - upper >= 11 for upper, lower in zip(heights, heights[1:])), heights
        assert len(parsed(chart).findall(f".//{SVG}g[@class='reference']")) == len(bands)
