"""`tablectl report`: the shift report of a table from its journal.

    tablectl report --from 2026-12-01 --to 2026-12-02 [--table T] [--csv | --json | --html]
        [--config FILE | --state-dir DIR | --sim [--game NAME]] [--close-after N]

For the table and for each dealer (who opened the rounds): rounds, rounds an hour (the dealer's
time only, pace.py), handle by bet type, paid, the actual win and hold %, the theoretical win
(exact edges, edges.py) and the difference, voids, faults by kind, and the rating sessions.
Text by default; `--json` the whole report; `--csv` the sections as CSV blocks; `--html` one
page that prints on A4, with the chart of rounds an hour. Reads the journal only (read-only).
Times are UTC; a date alone is its midnight (`--from 2026-12-01 --to 2026-12-02`: that day).
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.analytics.pace import PaceReader, iso
from controller.analytics.ratings import CLOSE_AFTER
from controller.journal.log import Journal

#: Rating sessions the HTML page lists (the highest theoretical win first), so a day fits one A4 page.
HTML_SESSIONS = 12


def parse_time(text: str, flag: str) -> float:
    """'2026-12-01', '2026-12-01T08:00', '2026-12-01 08:00:00Z' -> seconds (UTC)."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{flag} {text!r}: a date or a date and time, such as 2026-12-01 or 2026-12-01T08:00"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def build(
    journal: Journal,
    start: float,
    end: float,
    *,
    table: str | None,
    game: str,
    cache_dir: Path | None,
    close_after: int = CLOSE_AFTER,
) -> dict[str, Any]:
    """The report of [start, end] from `journal` (a table's, read-only)."""
    from controller.analytics.source import ratings_window

    reader, ratings = ratings_window(journal, start, end, cache_dir=cache_dir, close_after=close_after)
    pace = reader.pace(start, end, round_times=False)
    voids, faults = _per_dealer_stops(reader, start, end)
    dealers = {}
    for name in sorted({*pace["dealers"], *ratings.by_dealer, *voids, *faults}):
        p = pace["dealers"].get(name, {"rounds": 0, "seconds": 0.0, "rounds_per_hour": None})
        money = ratings.money(name) if name in ratings.by_dealer else None
        dealers[name] = {
            "rounds": p["rounds"],
            "dealer_s": p["seconds"],
            "rounds_per_hour": p["rounds_per_hour"],
            "money": money,
            "voids": voids.get(name, 0),
            "faults": dict(sorted(faults.get(name, Counter()).items())),
        }
    return {
        "table": table,
        "game": game,
        "from": iso(start),
        "to": iso(end),
        "pace": {k: v for k, v in pace.items() if k not in ("round_times", "dealers")},
        "money": ratings.money(),
        "edges": sorted(set(ratings.notes.values())),
        "dealers": dealers,
        "sessions": ratings.sessions(),
    }


def _per_dealer_stops(reader: PaceReader, start: float, end: float) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """Voids and faults (by kind) of each dealer's rounds in the window."""
    voids: Counter[str] = Counter()
    faults: dict[str, Counter[str]] = {}
    for r in reader.rounds.values():
        if r.voided is not None and start <= r.voided <= end:
            voids[r.dealer or "unknown"] += 1
    for f in reader.faults:
        if start <= f.start <= end:
            during = reader.rounds.get(f.round) if f.round is not None else None
            name = (during.dealer or "unknown") if during is not None else "between rounds"
            faults.setdefault(name, Counter())[f.code] += 1
    return voids, faults


# -- the forms ------------------------------------------------------------------------------------


def as_json(report: dict[str, Any]) -> str:
    """One line of JSON (the C encoder: a quarter's thousands of sessions in a blink; `| jq` to read)."""
    return json.dumps(report)


def as_text(report: dict[str, Any]) -> str:
    p, m = report["pace"], report["money"]
    lines = [
        f"Shift report: table {report['table'] or '-'} ({report['game']}), {report['from']} to {report['to']}",
        f"  rounds {p['rounds']}, rounds an hour {_num(p['rounds_per_hour'])} over {_hms(p['dealer_s'])} of dealing",
        "  phases: " + ", ".join(f"{k} {_hms(v)}" for k, v in p["phases"].items()),
        f"  shuffles {p['shuffles']['count']} ({_hms(p['shuffles']['seconds'])}), faults {p['faults']['count']} "
        f"({_hms(p['faults']['seconds'])}), voids {p['voids']}, breaks {_hms(p['idle_s'])}",
    ]
    if p["faults"]["by_kind"]:
        lines.append("  faults by kind: " + ", ".join(f"{k} {v}" for k, v in p["faults"]["by_kind"].items()))
    lines += [
        "  handle: "
        + (", ".join(f"{k} {v}" for k, v in m["handle"].items()) or "none")
        + f" (total {m['handle_total']})",
        f"  paid {m['paid']}, win {m['actual_win']}, hold {_num(m['hold_percent'])}%, theoretical win "
        f"{m['theoretical_win']:.2f}, actual - theoretical {m['actual_minus_theoretical']:.2f}, "
        f"house take {m['house_take']}",
        "Dealers:",
    ]
    for name, d in report["dealers"].items():
        money = d["money"] or {}
        lines.append(
            f"  {name}: rounds {d['rounds']}, rounds an hour {_num(d['rounds_per_hour'])}, handle "
            f"{money.get('handle_total', 0)}, win {money.get('actual_win', 0)}, theoretical "
            f"{money.get('theoretical_win', 0):.2f}, voids {d['voids']}, faults {sum(d['faults'].values())}"
        )
    lines.append(f"Rating sessions: {len(report['sessions'])}")
    for s in report["sessions"]:
        who = f"place {s['place']}" + (f" ({s['player']})" if s["player"] else "")
        lines.append(
            f"  {who}: {s['status']}, {s['rounds']} rounds, {_hms(s['time_s'])}, handle {sum(s['handle'].values())}, "
            f"side bets {s['side_bet_mix_percent']}%, net {s['player_net']}, theoretical win {s['theoretical_win']:.2f}"
        )
    for note in report["edges"]:
        lines.append(f"Edges: {note}")
    return "\n".join(lines)


def as_csv(report: dict[str, Any]) -> str:
    """Sections as CSV blocks, each under a `# section` line."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    p, m = report["pace"], report["money"]
    w.writerow(["# table"])
    w.writerow(["table", "game", "from", "to", "rounds", "rounds_per_hour", "dealer_s", "shuffles", "faults", "voids",
                "handle_total", "paid", "actual_win", "hold_percent", "theoretical_win", "actual_minus_theoretical",
                "house_take"])  # fmt: skip
    w.writerow([report["table"] or "", report["game"], report["from"], report["to"], p["rounds"],
                p["rounds_per_hour"], p["dealer_s"], p["shuffles"]["count"], p["faults"]["count"], p["voids"],
                m["handle_total"], m["paid"], m["actual_win"], m["hold_percent"], m["theoretical_win"],
                m["actual_minus_theoretical"], m["house_take"]])  # fmt: skip
    w.writerow(["# handle by bet type"])
    w.writerow(["bet", "handle"])
    for bet, amount in m["handle"].items():
        w.writerow([bet, amount])
    w.writerow(["# faults by kind"])
    w.writerow(["kind", "count"])
    for kind, n in p["faults"]["by_kind"].items():
        w.writerow([kind, n])
    w.writerow(["# dealers"])
    w.writerow(["dealer", "rounds", "rounds_per_hour", "dealer_s", "handle_total", "actual_win", "theoretical_win",
                "voids", "faults"])  # fmt: skip
    for name, d in report["dealers"].items():
        money = d["money"] or {}
        w.writerow([name, d["rounds"], d["rounds_per_hour"], d["dealer_s"], money.get("handle_total", 0),
                    money.get("actual_win", 0), money.get("theoretical_win", 0), d["voids"],
                    sum(d["faults"].values())])  # fmt: skip
    from controller.analytics.export import sessions_csv

    out.write("# rating sessions\n")
    out.write(sessions_csv(report["sessions"], table=report["table"]))
    return out.getvalue()


def chart_svg(points: list[dict[str, Any]], width: int = 640, height: int = 200) -> str:
    """Rounds an hour over the shift: a bar a point, one axis (rounds an hour), labelled; the
    hours written under the bars."""
    left, bottom, top = 44, 22, 10
    top_value = max([p["rounds_per_hour"] or 0 for p in points] + [1])
    scale = _nice(top_value)
    inner_w, inner_h = width - left - 6, height - top - bottom
    bar = inner_w / max(len(points), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="Rounds an hour over the shift">',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + inner_h}" stroke="#000"/>',
        f'<text x="10" y="{top + inner_h / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 10 {top + inner_h / 2})">rounds an hour</text>',
    ]
    for i in range(5):
        v = scale * i / 4
        y = top + inner_h - inner_h * i / 4
        parts.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#000"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{v:g}</text>')
    every = max(1, len(points) // 12)
    for i, p in enumerate(points):
        x = left + i * bar
        value = p["rounds_per_hour"] or 0
        h = inner_h * value / scale
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{top + inner_h - h:.1f}" width="{max(bar - 2, 1):.1f}" height="{h:.1f}" '
            f'fill="#3a6ea5"><title>{html.escape(p["from"])}: {value:g} rounds an hour</title></rect>'
        )
        if i % every == 0:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{height - 6}" font-size="10" text-anchor="middle">'
                f"{html.escape(p['from'][11:16])}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _nice(value: float) -> float:
    for step in (10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if value <= step:
            return float(step)
    return float(int(value) + 1)


def as_html(report: dict[str, Any]) -> str:
    """One page, A4 (portrait), print-ready: the figures, the chart, a table per section."""
    p, m = report["pace"], report["money"]
    e = html.escape

    def table(head: list[str], rows: list[list[Any]]) -> str:
        th = "".join(f"<th>{e(h)}</th>" for h in head)
        trs = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"

    summary = table(
        ["rounds", "rounds/h", "dealing", "shuffles", "faults", "voids", "handle", "paid", "win", "hold %", "theo",
         "win - theo"],
        [[p["rounds"], _num(p["rounds_per_hour"]), _hms(p["dealer_s"]), p["shuffles"]["count"], p["faults"]["count"],
          p["voids"], m["handle_total"], m["paid"], m["actual_win"], _num(m["hold_percent"]),
          f"{m['theoretical_win']:.2f}", f"{m['actual_minus_theoretical']:.2f}"]],
    )  # fmt: skip
    phases = table(list(p["phases"]), [[_hms(v) for v in p["phases"].values()]])
    handle = table(["bet", "handle"], [[k, v] for k, v in m["handle"].items()])
    faults = table(["fault", "count"], [[k, v] for k, v in p["faults"]["by_kind"].items()] or [["none", 0]])
    dealers = table(
        ["dealer", "rounds", "rounds/h", "handle", "win", "theo", "voids", "faults"],
        [[name, d["rounds"], _num(d["rounds_per_hour"]), (d["money"] or {}).get("handle_total", 0),
          (d["money"] or {}).get("actual_win", 0), f"{(d['money'] or {}).get('theoretical_win', 0):.2f}", d["voids"],
          sum(d["faults"].values())] for name, d in report["dealers"].items()],
    )  # fmt: skip
    shown = sorted(report["sessions"], key=lambda s: -s["theoretical_win"])[:HTML_SESSIONS]
    sessions = table(
        ["place", "player", "opened", "status", "rounds", "time", "handle", "side %", "net", "theo"],
        [[s["place"], s["player"] or "", s["opened"][11:19], s["status"], s["rounds"], _hms(s["time_s"]),
          sum(s["handle"].values()), s["side_bet_mix_percent"], s["player_net"], f"{s['theoretical_win']:.2f}"]
         for s in shown],
    )  # fmt: skip
    more = len(report["sessions"]) - len(shown)
    if more > 0:
        sessions += f"<p class=note>and {more} more sessions (tablectl report --csv or --json lists every one)</p>"
    notes = "".join(f"<p class=note>{e(n)}</p>" for n in report["edges"])
    title = f"Shift report: table {report['table'] or '-'} ({report['game']})"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
@page {{ size: A4 portrait; margin: 10mm; }}
body {{ font: 8.5pt/1.25 sans-serif; margin: 0 auto; max-width: 190mm; color: #000; }}
h1 {{ font-size: 12pt; margin: 0 0 1mm; }} h2 {{ font-size: 9.5pt; margin: 2.5mm 0 1mm; }}
table {{ border-collapse: collapse; width: 100%; }} th, td {{ border: 0.2mm solid #999; padding: 0.4mm 1mm; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }} .note {{ font-size: 7.5pt; margin: 1mm 0 0; }}
.cols {{ display: flex; gap: 3mm; }} .cols > div {{ flex: 1; }} svg {{ max-height: 52mm; }}
</style></head><body>
<h1>{e(title)}</h1><p>{e(report["from"])} to {e(report["to"])} (UTC)</p>
{summary}
<h2>Rounds an hour over the shift (the dealer's time; shuffles, faults and breaks apart)</h2>
{chart_svg(p["chart"])}
<div class=cols><div><h2>Phases</h2>{phases}</div><div><h2>Handle by bet type</h2>{handle}</div><div><h2>Faults by kind</h2>{faults}</div></div>
<h2>Dealers</h2>{dealers}
<h2>Rating sessions ({len(report["sessions"])}; the highest theoretical win first)</h2>{sessions}
{notes}
</body></html>
"""  # noqa: E501


def _hms(secs: float) -> str:
    s = round(secs)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
