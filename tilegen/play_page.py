"""A self-contained page where a designer plays one tile-match board (decision 193): the
board's data and the runtime's rules (runtime/tile/*.js, bundled by ``boardcore.jsbundle``)
are in the page; nothing is fetched. The audit report links it under each board it draws;
``tilegen generate --play FILE`` writes one.
"""

from __future__ import annotations

import html
import json

from boardcore.jsbundle import RUNTIME, bundle

from .export import row_json
from .witness import witness

CSS = """
body{font-family:system-ui,sans-serif;margin:1rem 1.5rem;color:#222;max-width:62rem}
h1{font-size:1.3rem;margin:.2rem 0}p{margin:.3rem 0;max-width:48rem}
.facts{color:#444;font-size:.9rem}
#play{display:flex;gap:1.2rem;align-items:flex-start;flex-wrap:wrap;margin-top:.6rem}
#board{position:relative;background:#f3f1ea;border:1px solid #ccc;border-radius:6px}
.piece{position:absolute;border:1px solid #fff;border-radius:5px;color:#111;font-weight:700;
font-size:15px;opacity:.45;cursor:default;padding:0;box-shadow:1px 1px 2px rgba(0,0,0,.35)}
.piece.free{opacity:1;border:2px dashed #111}
.piece.legal{border:2px solid #111;cursor:pointer}.piece.legal:hover{outline:3px solid #000}
.lane{position:absolute;border:2px dashed #999;border-radius:5px}
.row{display:flex;gap:.3rem;align-items:center;margin:.3rem 0}
.cell{display:inline-block;width:34px;height:34px;border:1px solid #888;border-radius:4px;
text-align:center;line-height:34px;font-weight:700;background:#fff;vertical-align:top}
.label{width:5.5rem;font-size:.85rem;color:#444}
button{font-size:.9rem;padding:.25rem .55rem}
#status{font-weight:600;margin:.5rem 0}#status.won{color:#1a7f37}#status.lost{color:#b42318}
#log{white-space:pre-wrap;font-size:.8rem;color:#555;min-height:4rem}
#frames{border:1px solid #bbb;border-radius:6px;padding:.4rem .6rem;margin:.4rem 0}
.side{min-width:20rem;flex:1}
table.legend{border-collapse:collapse;font-size:.8rem}
table.legend td{padding:1px 6px}
"""


def _facts(rec: dict) -> str:
    runs = rec["tool_free_runs"]
    sure = ("" if rec["tool_free_solvable"] != "yes" else
            " The exhaustive search found a tool-free win (step through it below).")
    return (f"Exit {rec['exit']} after {rec['attempts_used']} attempt(s). In the audit's "
            f"simulation {rec['tool_free_wins']} of {runs} scripted tool-free runs won "
            f"({rec['tool_free_pass_rate']:.1%}) and {rec['tool_assist_wins']} of "
            f"{rec['tool_assist_runs']} runs with tools ({rec['tool_assist_pass_rate']:.1%})."
            f"{sure}")


def _slot_words(rule: str) -> str:
    if rule == "lose_on_full":
        return ("The slot has 7 cells, and under this table's rule (lose_on_full) a 7th piece "
                "may only enter to complete a triple.")
    return "The slot holds 7 pieces; when it is full only a piece completing a triple enters."


def page(result, title: str) -> str:
    """The play page of a generated board (``generate.GenerationResult``)."""
    b = result.board
    plan = b.plan
    rules = plan.rules
    line = witness(b.elem, b.occ, rules.slot_rule, rules.dfs_node_cap)
    data = {"row": row_json(plan), "board": b.as_json(), "record": result.record,
            "witness": None if line is None else [b.pieces[p].id for p in line]}
    data["record"] = {**result.record, "stream_seed": str(result.record["stream_seed"])}
    legend = "".join(f"<tr><td><b>{chr(65 + i)}</b></td><td>{html.escape(e)}</td></tr>"
                     for i, e in enumerate(b.element_ids))
    strategies = "".join(f'<option value="{i}">{n}</option>'
                         for i, n in enumerate(("match-first", "slot-build", "risk-averse")))
    script = bundle(RUNTIME / "play" / "tile_page.js").replace("</", "<\\/")
    blob = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="facts">Board {html.escape(b.board_id)} ({plan.total_pieces} pieces,
{plan.element_count} elements, {plan.layers} layer(s), slot rule
{html.escape(rules.slot_rule)}). {html.escape(_facts(result.record))}</p>
<p>Click a piece with a solid dark outline to send it to the slot; three of a kind vanish.
Faded pieces are covered; a dashed outline means uncovered, but the slot has no room for it.
{_slot_words(rules.slot_rule)} Remove moves the first three slot pieces to the bypass, Undo
puts the last piece back on a return lane (the dashed boxes under the board), Shuffle mixes
the pieces left on the board.</p>
<div id="play"><div><div id="board" aria-label="board"></div>
<div class="row"><span class="label">Slot</span><span id="slot"></span></div>
<div class="row"><span class="label">Bypass</span><span id="bypass"></span></div></div>
<div class="side"><div id="status" role="status"></div><div id="deadlock"></div>
<div class="row"><button id="restart">Restart</button><button id="tool-remove"></button>
<button id="tool-shuffle"></button><button id="tool-undo"></button></div>
<div class="row">Watch <select id="strategy" aria-label="strategy">{strategies}</select>
<label><input type="checkbox" id="assisted"> with tools</label>
<button id="watch">Watch its run</button></div>
<div class="row"><button id="witness">Step through a winning line</button></div>
<div id="frames" hidden><div id="frame-note"></div><div class="row"><button id="prev">Back
</button><button id="next">Next step</button><button id="end">Last step</button>
<button id="back">Back to my game</button></div></div>
<div id="log" aria-label="what happened"></div>
<p class="facts">Letters name the elements, in the order the generator chose them:</p>
<table class="legend">{legend}</table>
<p class="facts">"Watch" replays the first simulated run of the strategy on this board, the
very run the audit counted. Your Shuffles draw from the page's own stream, so they differ
from the simulation's.</p></div></div>
<script type="application/json" id="board-data">{blob}</script>
<script>{script}</script>
</body></html>
"""
