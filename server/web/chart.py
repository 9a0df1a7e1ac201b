"""The picture of the tiers over time: one stacked bar per week (hot, warm, cold), the week's moves beneath."""

from __future__ import annotations

from html import escape

from tiers.browse import Week

COLOURS = {"hot": "#d9480f", "warm": "#f59f00", "cold": "#1c7ed6"}
_W, _H, _TOP, _BAR_H, _MOVES_H = 720, 300, 20, 190, 50


def tiers_svg(weeks: list[Week]) -> str:
    """An inline SVG (no script, no outside asset) of `weeks`, with a text title per bar for the exact figures."""
    if not weeks:
        return ""
    n = len(weeks)
    slot = (_W - 60) / n
    bar = max(slot * 0.7, 4)
    most = max(max(sum(w.counts.values()) for w in weeks), 1)
    most_moves = max(max((sum(w.moves.values()) for w in weeks), default=0), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" role="img" class="chart" '
        'aria-label="records per tier, week by week, and the moves of each week">'
    ]
    base = _TOP + _BAR_H
    parts.append(f'<text x="0" y="{_TOP - 6}" class="axis">{most} in all</text>')
    parts.append(f'<line x1="50" y1="{base}" x2="{_W}" y2="{base}" stroke="#999"/>')
    for i, week in enumerate(weeks):
        x = 55 + i * slot
        y = float(base)
        for tier in ("cold", "warm", "hot"):
            count = week.counts.get(tier, 0)
            height = _BAR_H * count / most
            y -= height
            if count:
                parts.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{height:.1f}" fill="{COLOURS[tier]}">'
                    f"<title>week of {week.start:%Y-%m-%d}: {count} {tier}</title></rect>"
                )
        moved = sum(week.moves.values())
        if moved:
            height = _MOVES_H * moved / most_moves
            what = ", ".join(f"{k.replace('>', ' → ')}: {v}" for k, v in sorted(week.moves.items()))
            parts.append(
                f'<rect x="{x:.1f}" y="{base + 8:.1f}" width="{bar:.1f}" height="{height:.1f}" fill="#868e96">'
                f"<title>week of {week.start:%Y-%m-%d}: {escape(what)}</title></rect>"
            )
        if i % max(n // 6, 1) == 0 or i == n - 1:
            parts.append(f'<text x="{x:.1f}" y="{_H - 4}" class="axis">{week.start:%b %d}</text>')
    legend_x = _W - 250
    for j, tier in enumerate(("hot", "warm", "cold")):
        parts.append(f'<rect x="{legend_x + j * 70}" y="2" width="12" height="12" fill="{COLOURS[tier]}"/>')
        parts.append(f'<text x="{legend_x + j * 70 + 16}" y="12" class="axis">{tier}</text>')
    parts.append(f'<text x="0" y="{base + 24}" class="axis">moves</text>')
    parts.append("</svg>")
    return "".join(parts)
