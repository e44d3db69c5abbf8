// The tile-match play page (tilegen/play_page.py writes it; decision 193): a designer plays
// one audited board with the very rules the node tests hold equal to Python, watches a
// scripted player, or steps through the search's winning line. The board's data sits in
// the page (<script id="board-data">); nothing is fetched.

import { Pcg32 } from '../rng.js';
import { buildGraph, emptyBoard } from '../tile/layout.js';
import { Game, Tool, TOOL_NAMES, SLOT_CAP } from '../tile/rules.js';
import { playRun, STRATEGY_NAMES, toolOrder, gameRules } from '../tile/runs.js';
import { classifyDeadlock, DEADLOCK_WORDS } from '../tile/deadlock.js';

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#bab0ac', '#86bcb6', '#d37295', '#8cd17d', '#b6992d'];
const PLAYER_STREAM = 6; // the page's Shuffle draws from initseq 8k + 6 (unused by the runs)

const data = JSON.parse(document.getElementById('board-data').textContent);
const { row, board: state, record } = data;
const prm = row.prm;
const letter = (e) => String.fromCharCode(65 + e);
const $ = (id) => document.getElementById(id);

/** The kernel board of the BoardState, its graph rebuilt from the positions. */
function kernelBoard() {
  const b = emptyBoard(state.pieces.length);
  state.pieces.forEach((p, i) => {
    b.elem[i] = state.elementIds.indexOf(p.elementId);
    b.layer[i] = p.layer;
    b.x[i] = p.x;
    b.y[i] = p.y;
    b.ac[i] = p.anchor[0];
    b.ar[i] = p.anchor[1];
  });
  buildGraph(b, prm.PIECE);
  const got = {};
  b.occList.forEach((occ, p) => occ.forEach((q) => {
    (got[state.pieces[q].id] ||= []).push(state.pieces[p].id);
  }));
  for (const k of Object.keys(got)) got[k].sort();
  const canon = (g) => JSON.stringify(Object.keys(g).sort().map((k) => [k, g[k]]));
  const same = canon(got) === canon(state.overlapGraph);
  if (!same) throw new Error('the overlap graph rebuilt here differs from the board file');
  return b;
}

const board = kernelBoard();
const attempt = record.returned_attempt;
let game;
let stream;
let log = [];
let frames = null; // a recorded run or witness being stepped through
let frameAt = 0;

/** What the page draws: the live game, or a frame of a recorded run. */
function snapshot(g, note) {
  return { elem: Array.from(g.elem), onb: Array.from(g.onb), clk: Array.from(g.clk),
    lanes: Array.from(g.lanes), slot: Array.from(g.slot.subarray(0, g.slotN)),
    byp: Array.from(g.byp.subarray(0, g.bypN)), left: Array.from(g.left),
    removed: g.removed, clicks: g.clicks, note };
}

function restart() {
  game = new Game(board, gameRules(prm));
  game.reset(true);
  stream = new Pcg32(BigInt(state.seed), BigInt(8 * attempt + PLAYER_STREAM));
  log = ['New game: the row\'s tool budgets, Remove ' + prm.BUDGET_REMOVE + ', Shuffle '
    + prm.BUDGET_SHUFFLE + ', Undo ' + prm.BUDGET_UNDO + '.'];
  frames = null;
  render();
}

/** One action in words; `elem`: the pieces' elements at the time (a Shuffle moves them). */
function describe(ev, elem) {
  const id = (p) => `${state.pieces[p].id} (${letter(elem[p])})`;
  if (ev.kind === 'click') {
    return `clicked ${id(ev.piece)}${ev.lane >= 0 ? ` from lane ${ev.lane + 1}` : ''}`
      + (ev.elim >= 0 ? `: three ${letter(ev.elim)} matched` : '');
  }
  if (ev.kind === 'return') {
    return `${id(ev.piece)} came back from the bypass`
      + (ev.elim >= 0 ? `: three ${letter(ev.elim)} matched` : '');
  }
  return ev.kind;
}

function onPiece(p) {
  if (frames || !game.legal(p)) return;
  for (const ev of game.click(p, [])) log.push(describe(ev, game.elem));
  render();
}

function onTool(tool) {
  if (frames || !game.usable(tool)) return;
  if (tool === Tool.REMOVE) game.remove();
  else if (tool === Tool.SHUFFLE) game.shuffle(stream);
  else game.undo();
  log.push(`used ${TOOL_NAMES[tool]}`);
  render();
}

/** Record a strategy's first simulated run of the returned attempt, frame by frame. */
function watch() {
  const s = Number($('strategy').value);
  const tools = $('assisted').checked;
  const g = new Game(board, gameRules(prm));
  const run = new Pcg32(BigInt(state.seed), BigInt(8 * attempt + 3 * (tools ? 1 : 0) + s));
  g.reset(tools);
  frames = [snapshot(g, `${STRATEGY_NAMES[s]}, ${tools ? 'with' : 'without'} tools: the start`
    + ' of run 1 of the simulation')];
  playRun(g, s, tools, toolOrder(prm), run, null, (ev) => {
    const note = ev.kind === 'won' ? 'won: every piece matched'
      : ev.kind === 'lost' ? 'lost: no legal click and no tool left' : describe(ev, g.elem);
    if (ev.kind === 'return') { // a return belongs to the click before it: one frame
      const last = frames[frames.length - 1];
      frames[frames.length - 1] = snapshot(g, `${last.note}; ${note}`);
    } else frames.push(snapshot(g, note));
  });
  frameAt = 0;
  render();
}

function witness() {
  if (!data.witness) return;
  const g = new Game(board, gameRules(prm));
  g.reset(false);
  frames = [snapshot(g, 'the search\'s winning line: start')];
  data.witness.forEach((id, n) => {
    const p = state.pieces.findIndex((x) => x.id === id);
    const evs = g.click(p, []);
    frames.push(snapshot(g, `click ${n + 1} of ${data.witness.length}: `
      + evs.map((ev) => describe(ev, g.elem)).join('; ')));
  });
  frames[frames.length - 1].note += g.won ? ' — won' : ' — NOT won (report this)';
  frameAt = 0;
  render();
}

function status(g) {
  if (g.won) return `Won in ${g.clicks} clicks.`;
  const legal = g.legalClicks().length;
  if (legal > 0) {
    return `Playing: ${legal} piece(s) can be clicked; slot ${g.slotN} of ${SLOT_CAP}`
      + `${g.bypN ? `, bypass ${g.bypN}` : ''}.`;
  }
  const any = [Tool.REMOVE, Tool.SHUFFLE, Tool.UNDO].some((t) => g.usable(t));
  return any ? 'Stuck: no piece can go into the slot. Use a tool, or restart.'
    : 'Lost: no piece can go into the slot and no tool is left.';
}

function render() {
  const snap = frames ? frames[frameAt] : snapshot(game, null);
  const scale = Math.min(1, 600 / row.boardW);
  const area = $('board');
  area.style.width = `${Math.round(row.boardW * scale)}px`;
  area.style.height = `${Math.round(row.boardH * scale)}px`;
  area.textContent = '';
  for (const lane of state.returnLanes) {
    const d = document.createElement('div');
    d.className = 'lane';
    Object.assign(d.style, { left: `${lane.x * scale}px`, top: `${lane.y * scale}px`,
      width: `${lane.width * scale}px`, height: `${lane.height * scale}px` });
    area.append(d);
  }
  state.pieces.forEach((piece, p) => {
    if (!snap.onb[p]) return;
    const lane = snap.lanes.indexOf(p);
    const box = lane >= 0 ? state.returnLanes[lane] : piece;
    const e = snap.elem[p];
    const d = document.createElement('button');
    // legal: clickable, and the slot has room (or the piece completes a triple)
    const legal = snap.clk[p] && (snap.slot.length < game.cap
      || snap.slot.filter((q) => snap.elem[q] === e).length === 2);
    d.className = `piece${snap.clk[p] ? ' free' : ''}${legal ? ' legal' : ''}`;
    d.dataset.piece = piece.id;
    d.dataset.clickable = snap.clk[p];
    d.dataset.legal = legal ? 1 : 0;
    d.textContent = letter(e);
    d.title = `${state.elementIds[e]}, layer ${piece.layer}, ${!snap.clk[p] ? 'covered'
      : legal ? 'clickable' : 'uncovered, but the slot is full'}`;
    Object.assign(d.style, { left: `${box.x * scale}px`, top: `${box.y * scale}px`,
      width: `${piece.width * scale}px`, height: `${piece.height * scale}px`,
      zIndex: lane >= 0 ? 10 : piece.layer, background: PALETTE[e % PALETTE.length] });
    d.disabled = !!frames || !legal;
    d.addEventListener('click', () => onPiece(p));
    area.append(d);
  });
  const cells = (id, pieces, n) => {
    const el = $(id);
    el.textContent = '';
    for (let i = 0; i < n; i++) {
      const c = document.createElement('span');
      c.className = 'cell';
      if (i < pieces.length) {
        const e = snap.elem[pieces[i]];
        c.textContent = letter(e);
        c.style.background = PALETTE[e % PALETTE.length];
        c.title = state.elementIds[e];
        c.dataset.piece = state.pieces[pieces[i]].id;
      }
      el.append(c);
    }
  };
  cells('slot', snap.slot, SLOT_CAP);
  cells('bypass', snap.byp, 3);
  for (const t of [Tool.REMOVE, Tool.SHUFFLE, Tool.UNDO]) {
    const b = $(`tool-${TOOL_NAMES[t]}`);
    const name = TOOL_NAMES[t];
    b.textContent = `${name[0].toUpperCase()}${name.slice(1)} (${snap.left[t]} left)`;
    b.disabled = !!frames || !game.usable(t);
  }
  $('frames').hidden = !frames;
  if (frames) {
    $('frame-note').textContent = `Step ${frameAt} of ${frames.length - 1}: ${snap.note}`;
    $('prev').disabled = frameAt === 0;
    $('next').disabled = frameAt === frames.length - 1;
  }
  const msg = frames ? 'Watching a recording: your game is paused (Back to my game).'
    : status(game);
  $('status').textContent = msg;
  const end = game.won ? 'won' : (/^Lost/.test(msg) ? 'lost' : '');
  $('status').className = frames ? '' : end;
  if (!frames && !game.won) { // after every move: the class and what it means (it partitions)
    const cls = classifyDeadlock(game, prm);
    $('deadlock').textContent = `Deadlock class: ${cls} (${DEADLOCK_WORDS[cls]}).`;
    $('deadlock').dataset.class = cls;
  } else {
    $('deadlock').textContent = '';
    delete $('deadlock').dataset.class;
  }
  $('log').hidden = !!frames;
  const shown = log.length > 8 ? `, the last 8 of ${log.length} lines` : '';
  $('log').textContent = `Your game so far${shown}:\n${log.slice(-8).join('\n')}`;
}

$('restart').addEventListener('click', restart);
$('tool-remove').addEventListener('click', () => onTool(Tool.REMOVE));
$('tool-shuffle').addEventListener('click', () => onTool(Tool.SHUFFLE));
$('tool-undo').addEventListener('click', () => onTool(Tool.UNDO));
$('watch').addEventListener('click', watch);
$('witness').addEventListener('click', witness);
$('witness').disabled = !data.witness;
$('prev').addEventListener('click', () => { frameAt--; render(); });
$('next').addEventListener('click', () => { frameAt++; render(); });
$('end').addEventListener('click', () => { frameAt = frames.length - 1; render(); });
$('back').addEventListener('click', () => { frames = null; render(); });
restart();
document.body.dataset.ready = '1';
