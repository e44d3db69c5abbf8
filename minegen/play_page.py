"""One self-contained HTML page to play one generated board (``write_page``).

Nothing is fetched: the rules (``runtime/minesweeper.js``, inlined into a ``<script
type="module">`` with the page's own few lines of UI after it) and the board
(``play_data.board_data``, inlined as JSON) travel in the file. A designer digs (click),
flags (right-click, or the flag-mode toggle), sees cascades and fog as the player sees it
(SPEC §5: fog is known safe and shows no number), a win / loss message, restarts, and with
the hint on sees which closed cells each difficulty tier of the solver opens, coloured by
tier, or "guess forced" when none does.

    minegen generate 3 0 --index 59 --play page.html
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from boardcore import assets, files

from .codes import Tier
from .board_lines import outcome
from .generate import Board
from .guesses import TIER_COLORS
from .play_data import board_data

JS_MODULE = assets.path("runtime", "minesweeper.js")

CSS = """
body { font: 15px/1.4 system-ui, sans-serif; margin: 16px 20px; color: #1d2330; }
h1 { font-size: 22px; margin: 0 0 2px; } h2 { font-size: 16px; margin: 14px 0 6px; }
.sub { color: #4a5568; margin: 0 0 12px; } code { font-size: 13px; }
main { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
#play { flex: none; width: var(--play); } aside { flex: 1; min-width: 280px; max-width: 420px; }
#status { padding: 8px 12px; border-radius: 6px; background: #eef2f7; margin-bottom: 8px;
  max-width: 600px; }
#status[data-status=won] { background: #d8f3dc; font-weight: 600; }
#status[data-status=lost] { background: #ffd6d6; font-weight: 600; }
.toolbar { display: flex; gap: 8px; align-items: center; margin-bottom: 8px;
  flex-wrap: wrap; }
.toolbar button { font: inherit; padding: 4px 10px; border-radius: 5px;
  border: 1px solid #8a94a6; background: #fff; cursor: pointer; }
.toolbar button[aria-pressed=true] { background: #1d3557; color: #fff; }
#counts { color: #4a5568; font-size: 14px; }
#board { display: grid; gap: 1px; background: #8a94a6; border: 2px solid #5a6478;
  width: max-content; user-select: none; }
.cell { width: var(--s); height: var(--s); padding: 0; border: 0; font: 700
  calc(var(--s) * 0.55) / 1 system-ui, sans-serif; background: #c5ceda; cursor: pointer;
  position: relative; color: #1d2330; display: inline-flex; align-items: center;
  justify-content: center; }
.cell[data-state=open], .cell[data-state=fog-open] { background: #f7f7f7; cursor: default; }
.cell[data-state=fog] { background: #a9a9a9; color: #eee; }
.cell[data-state=fog-open] { background: #dedede; color: #8a8a8a; }
.cell[data-state=mine] { background: #5d1010; color: #fff; }
.cell[data-state=exploded] { background: #e63946; color: #fff; }
.cell[data-state=wrong-flag] { background: #ffd6d6; }
.cell[data-spawn] { box-shadow: inset 0 0 0 2px #1d3557; }
.cell[data-sure] { box-shadow: inset 0 0 0 2px #7a1010; color: #7a1010; }
.cell small { position: absolute; right: 2px; bottom: 1px; font-size: 9px; color: #1d2330; }
.n1 { color: #1f4fd1; } .n2 { color: #2b7a0b; } .n3 { color: #c1121f; }
.n4 { color: #14213d; } .n5 { color: #7f1d1d; } .n6 { color: #0f766e; } .n7 { color: #000; }
.n8 { color: #555; }
#guess { margin-top: 8px; padding: 8px 12px; background: #fff3bf; border-radius: 6px;
  font-weight: 600; max-width: 600px; }
.key { display: flex; gap: 8px; align-items: flex-start; margin: 4px 0; }
.key .cell { flex: none; --s: 22px; cursor: default; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px;
  margin: 0; }
dt { color: #4a5568; } dd { margin: 0; overflow-wrap: anywhere; }
#hint-legend[data-off] .count { display: none; }
.cell[data-hint] { color: #1d2330; }
"""

UI = """
const DATA = JSON.parse(document.getElementById('board-data').textContent);
const board = makeBoard(DATA);
const $ = (id) => document.getElementById(id);
const grid = $('board');
const buttons = [];
let game = newGame(board);
let flagMode = false;
let showHint = false;
const GLYPH = { flag: '\\u2691', mine: '\\u25cf', exploded: '\\u2739', 'wrong-flag': '\\u2717',
  fog: '\\u2248', 'fog-open': '~', closed: '' };
const spawn = new Set();
for (let dy = -1; dy <= 1; dy++) {
  for (let dx = -1; dx <= 1; dx++) {
    spawn.add(board.index([DATA.spawn[0] + dx, DATA.spawn[1] + dy]));
  }
}
function act(x, y, flag) {
  if (flag) toggleFlag(game, x, y); else reveal(game, x, y);
  render();
}
for (let y = 0; y < board.height; y++) {
  for (let x = 0; x < board.width; x++) {
    const b = document.createElement('button');
    b.className = 'cell';
    b.dataset.x = x;
    b.dataset.y = y;
    if (spawn.has(board.index([x, y]))) b.dataset.spawn = '';
    b.addEventListener('click', () => act(x, y, flagMode));
    b.addEventListener('contextmenu', (e) => { e.preventDefault(); act(x, y, true); });
    grid.appendChild(b);
    buttons.push(b);
  }
}
const MESSAGES = {
  playing: 'Click a closed cell to dig it; right-click (or Flag mode) to flag a mine. ' +
    'Fog cells are safe but show no number.',
  won: 'You win: every safe cell is open.',
  lost: 'You dug a mine: game over. All mines are shown; press Restart to play again.',
};
function render() {
  const h = showHint && game.status === Status.PLAYING ? hint(board, game.revealed) : null;
  const tierAt = new Map((h ? h.safe : []).map(([x, y, t]) => [board.index([x, y]), t]));
  const sureAt = new Map((h ? h.mines : []).map(([x, y, t]) => [board.index([x, y]), t]));
  let flags = 0;
  buttons.forEach((b, c) => {
    const x = c % board.width;
    const y = (c - x) / board.width;
    const view = cellView(game, x, y);
    flags += game.flagged[c];
    b.dataset.state = view;
    b.className = 'cell';
    b.textContent = GLYPH[view] ?? '';
    if (view === 'open' && board.num[c] > 0) {
      b.textContent = board.num[c];
      b.classList.add('n' + board.num[c]);
    }
    const t = tierAt.get(c);
    b.style.background = t === undefined ? '' : TIER_COLORS[t];
    if (t === undefined) delete b.dataset.hint;
    else {
      b.dataset.hint = t;
      b.insertAdjacentHTML('beforeend', `<small>${t}</small>`);
    }
    if (sureAt.has(c) && view === 'closed') {
      b.dataset.sure = sureAt.get(c);
      b.textContent = '!';
      b.insertAdjacentHTML('beforeend', `<small>${sureAt.get(c)}</small>`);
    } else delete b.dataset.sure;
    b.setAttribute('aria-label', `cell ${x}, ${y}: ${view}`);
  });
  const status = $('status');
  status.dataset.status = game.status;
  status.textContent = MESSAGES[game.status];
  $('counts').textContent = `Mines ${board.mineCount} \\u00b7 flags placed ${flags} \\u00b7 ` +
    `safe cells still closed ${board.safeCount - game.openCount}`;
  $('guess').hidden = !(h && h.guessForced);
  const legend = $('hint-legend');
  if (h) delete legend.dataset.off; else legend.dataset.off = '';
  const now = (k) => `(${k} ${k === 1 ? 'cell' : 'cells'} now)`;
  (h ? h.byTier : []).forEach((k, t) => { $('count-' + t).textContent = now(k); });
  $('sure-count').textContent = h ? now(h.mines.length) : '';
}
$('restart').addEventListener('click', () => { game = newGame(board); render(); });
function toggle(id, label, on) {
  $(id).setAttribute('aria-pressed', String(on));
  $(id).textContent = `${label}: ${on ? 'on' : 'off'}`;
}
$('flag-mode').addEventListener('click', () => {
  flagMode = !flagMode;
  toggle('flag-mode', 'Flag mode', flagMode);
});
$('hint-toggle').addEventListener('click', () => {
  showHint = !showHint;
  toggle('hint-toggle', 'Hint', showHint);
  render();
});
render();
"""


def _key(state: str, glyph: str, text: str, style: str = "") -> str:
    return (f'<div class="key"><span class="cell" data-state="{state}" style="{style}">'
            f'{glyph}</span><span>{text}</span></div>')


def _legend(data: dict) -> str:
    s = data["solver"]
    rows = []
    for t in s["tiers"]:
        color = TIER_COLORS[Tier(t["tier"])]
        rows.append(_key("closed", f"<small>{t['tier']}</small>",
                         f"<b>Tier {t['tier']}: {html.escape(t['words'])}</b>: "
                         f"{html.escape(t['says'])}. <span class='count' id='count-{t['tier']}'>"
                         f"</span>", f"background:{color}"))
    rows.append(_key("closed", "!", "<b>Sure mine</b>: the tier shown proves a mine here (the "
                     "solver never opens it). <span class='count' id='sure-count'></span>",
                     "box-shadow: inset 0 0 0 2px #7a1010; color: #7a1010"))
    f1 = s["f1_tier"]
    return (f"<section id='hint-legend' data-off><h2>Hint: what the solver can open</h2>"
            f"<p>With the hint on, each closed cell the solver proves safe is coloured by "
            f"the weakest tier that opens it. Tiers 0 to {f1} are the solver behind the "
            f"board's inferability (solver rules {html.escape(data['record']['solver_rules'])}"
            f"); tiers above {f1} only grade difficulty.</p>{''.join(rows)}</section>")


def _about(data: dict, board: Board) -> str:
    r = data["record"]
    tier_words = {t["tier"]: t["words"] for t in data["solver"]["tiers"]}
    tier = (f"{r['tier']} ({tier_words[r['tier']]})" if r["tier"] in tier_words
            else "not computed")
    items = [
        ("Table row used", f"level {r['row_level']}, depth {r['row_depth']}"),
        ("Mines", r["mines"]), ("Safe cells", r["safe"]),
        ("Fog cells", f"{r['fog_cells']} ({r['fog_regions_achieved']} of "
                      f"{r['fog_regions_requested']} asked-for regions placed)"),
        ("F1 player opens without a guess",
         f"{r['inferability']:.1%} of safe cells (tiers 0–{data['solver']['f1_tier']}; "
         f"target {100 * r['inferability_target']:g}%)"),
        ("Without fog cells", f"{r['inferability_core']:.1%}"),
        ("Difficulty tier", tier),
        ("A guess even for tier 4", f"{r['guess_share']:.1%} of safe cells (no tier opens "
                                    "them)" if r["guess_share"] >= 0 else "not computed"),
        ("Generator outcome", outcome(board.record)),
        ("Stream seed", r["stream_seed"]),
        ("Make it again", f"<code>{html.escape(data['command'])}</code>"),
    ]
    body = "".join(f"<dt>{k}</dt><dd>{v if k == 'Make it again' else html.escape(str(v))}</dd>"
                   for k, v in items)
    return f"<section id='about'><h2>This board</h2><dl>{body}</dl></section>"


def page_html(board: Board) -> str:
    """The page of ``board`` (a string); the rules module is read from ``JS_MODULE``."""
    data = board_data(board)
    module = files.read_text(JS_MODULE, follow=True)  # shipped (a link in a checkout)
    if "</script" in module.lower() or "</script" in UI.lower():
        raise ValueError("the inlined script may not contain '</script'")
    blob = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    r = data["record"]
    title = (f"Minesweeper: level {r['level_index']}, depth {r['node_depth']}, "
             f"board {r['seed_index']}")
    size = min(30, max(16, 600 // board.width))
    colors = json.dumps({int(t): c for t, c in TIER_COLORS.items()})
    how = ("<section id='how'><h2>What the cells show</h2>"
           + _key("closed", "", "Closed: dig it (click) or flag it (right-click).")
           + _key("open", "<span class='n2'>2</span>", "Open: the number of mines around it.")
           + _key("fog", "&#8776;", "Fog, closed: known safe, dig it to open.")
           + _key("fog-open", "~", "Fog, open: its number stays hidden.")
           + _key("closed", "&#9873;", "Flag: your mark for a mine.")
           + _key("closed", "", "Start area (3 &times; 3): the game opens here, with its "
                  "zero cascade already open.", "box-shadow: inset 0 0 0 2px #1d3557")
           + "</section>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="sub">{board.width} &times; {board.height} cells &middot; {r['mines']} mines &middot;
{r['fog_cells']} fog cells &middot; made by <code>{html.escape(data['command'])}</code></p>
<main>
<section id="play" style="--play:{max(600, board.width * (size + 1) + 4)}px">
<div id="status" role="status" data-status="playing"></div>
<div class="toolbar"><button id="restart" type="button">Restart</button>
<button id="flag-mode" type="button" aria-pressed="false">Flag mode: off</button>
<button id="hint-toggle" type="button" aria-pressed="false">Hint: off</button>
<span id="counts"></span></div>
<div id="board" role="grid" style="--s:{size}px;grid-template-columns:repeat({board.width},
var(--s))"></div>
<p id="guess" hidden>Guess forced: no tier, up to tier 4 (every mine layout of each
frontier), can prove any closed cell safe. Whatever you dig next is a guess for every solver
here.</p>
{_about(data, board)}
</section>
<aside>{how}{_legend(data)}</aside>
</main>
<script type="application/json" id="board-data">{blob}</script>
<script type="module">
{module}
const TIER_COLORS = {colors};
{UI}
</script>
</body></html>
"""


def write_page(board: Board, path: Path | str) -> Path:
    """Write the page of ``board`` to ``path`` (UTF-8; ``boardcore.output``'s rules, as
    ``minegen generate --play``); returns the path."""
    from boardcore.output import write_file

    return write_file(path, page_html(board), "--play", "board.html")
