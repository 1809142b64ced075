"""A dependency-free line plot written as SVG (the benchmarks' figures; no matplotlib needed)."""

from pathlib import Path

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def line_plot(path, series, *, title, xlabel, ylabel, log_y=False, width=560, height=360):
    """``series``: {label: (xs, ys)}; writes ``path`` (an .svg file)."""
    import math

    left, right, top, bottom = 70, 150, 30, 45
    xs_all = [x for xs, _ in series.values() for x in xs]
    ys_all = [y for _, ys in series.values() for y in ys if not log_y or y > 0]
    fy = (lambda v: math.log10(v)) if log_y else (lambda v: v)
    x0, x1 = min(xs_all), max(xs_all)
    y0, y1 = fy(min(ys_all)), fy(max(ys_all))
    if y1 == y0:
        y1 = y0 + 1.0
    if x1 == x0:
        x1 = x0 + 1.0

    def px(x):
        return left + (x - x0) / (x1 - x0) * (width - left - right)

    def py(y):
        return top + (1 - (fy(y) - y0) / (y1 - y0)) * (height - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2 - 60}" y="18" font-size="13">{title}</text>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
           f'y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{(width - right) / 2}" y="{height - 8}">{xlabel}</text>',
           f'<text x="12" y="{top - 8}">{ylabel}{" (log)" if log_y else ""}</text>']
    for k in range(5):
        xv = x0 + k * (x1 - x0) / 4
        yv = y0 + k * (y1 - y0) / 4
        label_y = 10 ** yv if log_y else yv
        out.append(f'<text x="{px(xv) - 12}" y="{height - bottom + 15}">{xv:.3g}</text>')
        out.append(f'<text x="8" y="{top + (1 - k / 4) * (height - top - bottom) + 4}">'
                   f'{label_y:.3g}</text>')
    for i, (label, (xs, ys)) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys) if not log_y or y > 0)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>')
        for x, y in zip(xs, ys):
            if not log_y or y > 0:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>')
        ly = top + 15 + 18 * i
        out.append(f'<line x1="{width - right + 10}" y1="{ly}" x2="{width - right + 30}" '
                   f'y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 35}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")
