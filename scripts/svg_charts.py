"""Small SVG charts for the case-study scripts: grouped bars and step curves on a log axis.

Plain text with rounded coordinates and no timestamps, so that the same numbers give the same
bytes and a page's `--check` can compare its images as it compares its tables. Only the standard
library: the machines that run the checks need nothing more than Python.
"""

import math

WIDTH, HEIGHT = 720, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 30, 50
# Colour-blind-safe (Okabe and Ito).
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]


def _number(value):
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _text(x, y, body, anchor="middle", size=12, extra=""):
    return (f'<text x="{_number(x)}" y="{_number(y)}" font-size="{size}" '
            f'text-anchor="{anchor}"{extra}>{body}</text>')


def _line(x1, y1, x2, y2, style='stroke="#999"'):
    return (f'<line x1="{_number(x1)}" y1="{_number(y1)}" x2="{_number(x2)}" '
            f'y2="{_number(y2)}" {style}/>')


def _frame(title, body):
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">\n'
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>\n'
            + _text(WIDTH / 2, 18, title, size=14) + "\n")
    return head + "\n".join(body) + "\n</svg>\n"


class LogAxis:
    """Maps values in [low, high] onto pixels [start, end] logarithmically."""

    def __init__(self, low, high, start, end):
        self.low, self.high, self.start, self.end = low, high, start, end

    def __call__(self, value):
        value = min(max(value, self.low), self.high)
        share = math.log(value / self.low) / math.log(self.high / self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self, values):
        return [v for v in values if self.low <= v <= self.high]


class LinearAxis(LogAxis):
    """Maps values in [low, high] onto pixels [start, end] linearly."""

    def __call__(self, value):
        value = min(max(value, self.low), self.high)
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)


def _legend(names, styles, top=TOP + 10):
    body = []
    x = WIDTH - RIGHT + 15
    for i, (name, style) in enumerate(zip(names, styles)):
        y = top + 18 * i
        body.append(_line(x, y - 4, x + 22, y - 4, style))
        body.append(_text(x + 28, y, name, anchor="start", size=11))
    return body


def grouped_bars(title, y_label, groups, series, values, y_ticks, references=(), log=True):
    """Bars of values[group][series] on a y axis from y_ticks[0] to y_ticks[-1] (log or linear);
    references: (value, label) drawn as dashed lines across the plot."""
    y = (LogAxis if log else LinearAxis)(y_ticks[0], y_ticks[-1], HEIGHT - BOTTOM, TOP)
    plot_width = WIDTH - LEFT - RIGHT
    slot = plot_width / len(groups)
    bar = slot * 0.8 / len(series)
    body = [_line(LEFT, y.start, WIDTH - RIGHT, y.start, 'stroke="#333"'),
            _line(LEFT, y.start, LEFT, y.end, 'stroke="#333"'),
            _text(18, (y.start + y.end) / 2, y_label, extra=' transform="rotate(-90 18 '
                  f'{_number((y.start + y.end) / 2)})"')]
    for tick in y.ticks(y_ticks):
        body.append(_line(LEFT - 4, y(tick), WIDTH - RIGHT, y(tick), 'stroke="#ddd"'))
        body.append(_text(LEFT - 8, y(tick) + 4, _number(tick), anchor="end", size=11))
    for g, group in enumerate(groups):
        x0 = LEFT + g * slot + slot * 0.1
        body.append(_text(LEFT + (g + 0.5) * slot, y.start + 18, group, size=11))
        for s in range(len(series)):
            value = values[g][s]
            top = y(value)
            body.append(f'<rect x="{_number(x0 + s * bar)}" y="{_number(top)}" '
                        f'width="{_number(bar - 2)}" height="{_number(y.start - top)}" '
                        f'fill="{COLOURS[s]}"><title>{group}, {series[s]}: '
                        f'{_number(value)}</title></rect>')
    styles = [f'stroke="{COLOURS[s]}" stroke-width="8"' for s in range(len(series))]
    # Labels right of the plot, each at least a line below the one above it.
    label_y = -math.inf
    for value, label in sorted(references, key=lambda r: -r[0]):
        body.append(_line(LEFT, y(value), WIDTH - RIGHT, y(value),
                          'stroke="#000" stroke-dasharray="5,4"'))
        label_y = max(y(value) + 4, label_y + 12)
        body.append(_text(WIDTH - RIGHT + 6, label_y, label, anchor="start", size=10))
    return _frame(title, body + _legend(series, styles))


def ccdf(title, x_label, curves, x_ticks, y_floor, marks=()):
    """Complementary CDFs, log x and log y: curves are (name, sorted values, colour, dashed);
    marks are (x, label) drawn as vertical dotted lines."""
    x = LogAxis(x_ticks[0], x_ticks[-1], LEFT, WIDTH - RIGHT)
    y = LogAxis(y_floor, 1.0, HEIGHT - BOTTOM, TOP)
    body = [_line(x.start, y.start, x.end, y.start, 'stroke="#333"'),
            _line(x.start, y.start, x.start, y.end, 'stroke="#333"'),
            _text((x.start + x.end) / 2, HEIGHT - 12, x_label),
            _text(18, (y.start + y.end) / 2, "share of flows slower",
                  extra=f' transform="rotate(-90 18 {_number((y.start + y.end) / 2)})"')]
    for tick in x.ticks(x_ticks):
        body.append(_line(x(tick), y.start, x(tick), y.end, 'stroke="#eee"'))
        body.append(_text(x(tick), y.start + 16, _number(tick), size=11))
    decade = 1.0
    while decade >= y_floor:
        body.append(_line(x.start, y(decade), x.end, y(decade), 'stroke="#eee"'))
        body.append(_text(x.start - 6, y(decade) + 4, f"{decade:g}", anchor="end", size=11))
        decade /= 10
    for value, label in marks:
        body.append(_line(x(value), y.start, x(value), y.end,
                          'stroke="#000" stroke-dasharray="2,3"'))
        body.append(_text(x(value) + 3, y.end + 10, label, anchor="start", size=10))
    styles = []
    for name, values, colour, dashed in curves:
        style = (f'stroke="{COLOURS[colour]}" fill="none" '
                 f'stroke-width="1.5"' + (' stroke-dasharray="6,3"' if dashed else ""))
        styles.append(style)
        body.append(f'<polyline {style} points="{_ccdf_points(values, x, y, y_floor)}"/>')
    return _frame(title, body + _legend([c[0] for c in curves], styles))


def _ccdf_points(values, x, y, y_floor):
    """The curve's corners where it moves by a pixel or more: a few hundred points, not one
    per flow, so that the file stays small."""
    n = len(values)
    points, last = [], None
    for i, value in enumerate(values):
        share = max((n - i - 1) / n, y_floor)
        point = (round(x(value), 1), round(y(share), 1))
        if last is None or abs(point[0] - last[0]) >= 1 or abs(point[1] - last[1]) >= 1 \
                or i == n - 1:
            points.append(point)
            last = point
    return " ".join(f"{_number(px)},{_number(py)}" for px, py in points)
