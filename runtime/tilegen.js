// tilegen.js: the tile-match generator for the game's runtime (docs/tilegen.md; the draw
// order of docs/tile-draw-protocol.md). `generateBoard(cityId, levelId, which, tables)`
// builds the very board and metric record tilegen's Python kernels build: the same
// element selection, layout draws, attempt loop (05 §8, §15), overlap graph, scripted
// runs, gates and exits, the exhaustive search and the diagnostics. `tables` is the JSON
// that `tilegen export-tables` writes (the module does not read TOML). No dependencies:
// node 20 and browsers; BigInt for the seeds.

import { deriveAt, fnv1a64, Pcg32 } from './rng.js';
import {
  boardInputs, dailyInputs, indexValue, parseDate, seedValue,
} from './tile/inputs.js';
import {
  buildGraph, coversCategories, Defect, drawLayout, layoutChecks, layoutDefect, Reason,
  selectElements, BP,
} from './tile/layout.js';
import { batch, gameRules, playRun, toolOrder } from './tile/runs.js';
import { Game, SLOT_RULES } from './tile/rules.js';
import { leastTools } from './tile/rescue.js';
import {
  diagBudget, diagnoseRun, Memo, searchBoard, solve, Solvable, SOLVABLE_NAMES,
} from './tile/search.js';

export { Game, Tool, TOOL_NAMES } from './tile/rules.js';
export { Strategy, STRATEGY_NAMES, ties, chooseClick, policyTool, playRun } from './tile/runs.js';
export { classifyDeadlock } from './tile/deadlock.js';
export { fnv1a64, deriveAt, exactInteger, Pcg32 } from './rng.js';

export const LAYOUT_SEQ = 1442695040888963407n;
export const MAX_ATTEMPTS = 50;
export const METRIC_VERSION = 1;
export const GENERATOR_VERSION = 'tilegen-0.1.0';
export const Close = Object.freeze({ SEARCH: 1, DIAGNOSE: 2 });
const EXIT_NAMES = ['met', 'failed_gates', 'failed_layout'];
const REASON_NAMES = Object.keys(Reason).map((k) => k.toLowerCase());
const DEFECT_NAMES = Object.keys(Defect);
const MAX_LAYERS = 4;
const TOOLS_TO_WIN_NAMES = ['0', '1', '2', '3', 'more', 'unknown']; // -1: unknown

/** The exported row of (city, level, revision) in `tables`; throws as `tilegen generate`
 * refuses (an unknown city, a level or revision outside its domain or not in the tables). */
export function findRow(tables, cityId, levelId, revision = 1) {
  return boardInputs(cityId, levelId, { revision }, tables).row;
}

// What the runtime refuses, as tilegen refuses it, with the very message texts: the checks
// live in ./tile/inputs.js (generateBoard, dailyBoard, resolveBoard and generateRow go
// through them); tests/test_tilegen_js.py walks every input against the command line.
export {
  MAX_INDEX, SEED_END, indexValue, levelValue, parseDate, seedValue,
} from './tile/inputs.js';

/**
 * Seed, index and closing work of a board (protocol §2; batch.closing_of). `which`: `{}`,
 * `{ index }` or `{ seed }` (undefined or null: not given). Throws on a bad seed or index
 * (seedValue, indexValue) rather than make another board.
 */
export function resolveBoard(row, which = {}) {
  const given = (v) => v !== undefined && v !== null;
  if (given(which.seed) && given(which.index)) {
    throw new Error('give a seed or an index, not both');
  }
  if (given(which.seed)) {
    return { seed: seedValue(which.seed), index: null, closing: Close.SEARCH | Close.DIAGNOSE };
  }
  const index = indexValue(given(which.index) ? which.index : -1);
  const i = BigInt(index);
  const seed = i === -1n ? fnv1a64(row.key) : deriveAt(`tilegen:${row.key}`, i);
  const sampled = i === -1n || i % BigInt(row.diagnoseEvery) === 0n;
  return { seed, index, closing: Close.SEARCH | (sampled ? Close.DIAGNOSE : 0) };
}

/** generateBoard(cityId, levelId, {seed | index | revision}, tables) (05 §18); every input
 * checked as `tilegen generate` checks it (./tile/inputs.js boardInputs), first. */
export function generateBoard(cityId, levelId, which, tables) {
  const { row, seed, index: i } = boardInputs(cityId, levelId, which, tables);
  const { seed: s, index, closing } = resolveBoard(row, { seed, index: i });
  return generateRow(row, s, index, closing);
}

function gateExcess(stats, prm) {
  const runs = 3 * prm.RUNS;
  const low = prm.TF_MIN * runs - BP * stats.TF_WINS;
  const high = BP * stats.TF_WINS - prm.TF_MAX * runs;
  const assist = prm.TA_MIN * runs - BP * stats.TA_WINS;
  return { low: low > 0, high: high > 0, assist: assist > 0,
    dist: Math.max(low, 0) + Math.max(high, 0) + Math.max(assist, 0) };
}

function defectError(code, row, seed) {
  return new Error(`tilegen defect ${DEFECT_NAMES[code]} on ${row.key} seed ${seed}`);
}

/** The daily seed of a city on a date (05 §12.1): FNV-1a-64 of `${date}:daily:${cityId}`;
 * throws on a date that is not a calendar date written YYYY-MM-DD (parseDate). */
export function dailySeed(date, cityId) {
  return fnv1a64(`${parseDate(date)}:daily:${cityId}`);
}

/**
 * The daily board of `cityId` on `date` (YYYY-MM-DD, UTC), as `tilegen generate CITY --daily
 * DATE` makes it: the preset `tables.daily` names (its level for the city; the city's highest
 * revision of it) with seed `dailySeed(date, cityId)` and all the closing work.
 */
export function dailyBoard(cityId, date, tables) {
  const { city, date: day } = dailyInputs(cityId, date, tables); // as tilegen generate --daily
  if (!tables.daily) throw new Error('the exported tables have no daily setting (daily.toml)');
  const levelId = tables.daily.cities[city] ?? tables.daily.levelId;
  const rows = tables.rows.filter((r) => r.cityId === city && r.levelId === levelId);
  if (!rows.length) throw new Error(`no row of ${city} level ${levelId} in the tables`);
  const row = rows.reduce((a, b) => (b.revision > a.revision ? b : a));
  return generateRow(row, dailySeed(day, city), null, Close.SEARCH | Close.DIAGNOSE);
}

/** The attempt loop (attempt.generate_tile_boards) for one seed; `index`: the audit board
 * index, or null for a hand-given seed. Both are checked as resolveBoard checks them: a seed
 * outside [0, 2^64) would be another board under this one's id. */
export function generateRow(row, seed, index, closing) {
  seed = seedValue(seed);
  if (index !== null) index = indexValue(index);
  const prm = row.prm;
  const E = prm.E;
  const stream = new Pcg32(seed, LAYOUT_SEQ);
  const sel = selectElements(stream, row.cityCategories, row.cityWeights, E);
  if (!coversCategories(sel, row.cityCategories, E)) {
    throw defectError(Defect.CATEGORY_COVERAGE, row, seed);
  }
  const rej = [0, 0, 0, 0, 0, 0, 0, 0];
  let firstValid = -1;
  let raw = null;
  let best = null; // { k, board, checks, stats, lost }
  let bestValid = false;
  let bestFails = 1 << 30;
  let bestClick = -1;
  let bestDist = Infinity;
  let met = false;
  let k = 0;
  for (k = 1; k <= MAX_ATTEMPTS; k++) {
    const board = drawLayout(stream, row);
    buildGraph(board, prm.PIECE);
    const defect = layoutDefect(board, prm, row.layerCounts, row.laneXs);
    if (defect) throw defectError(defect, row, seed);
    const lay = layoutChecks(board, prm);
    for (let i = 0; i < 5; i++) rej[i] += 1 - lay.ok[i];
    if (lay.fails > 0) {
      if (firstValid < 0 && (lay.fails < bestFails
        || (lay.fails === bestFails && lay.clickable > bestClick))) {
        bestFails = lay.fails;
        bestClick = lay.clickable;
        best = { k, board, lay };
      }
      continue;
    }
    const sim = batch(board, prm, seed, k);
    if (sim.defect) throw defectError(sim.defect, row, seed);
    const g = gateExcess(sim.stats, prm);
    rej[5] += g.low ? 1 : 0;
    rej[6] += g.high ? 1 : 0;
    rej[7] += g.assist ? 1 : 0;
    if (firstValid < 0) {
      firstValid = k;
      raw = [sim.stats.TF_WINS, sim.stats.TA_WINS];
    }
    if (!bestValid || g.dist < bestDist) {
      bestValid = true;
      bestDist = g.dist;
      best = { k, board, lay, sim };
    }
    if (g.dist === 0) {
      met = true;
      break;
    }
  }
  const attempts = Math.min(k, MAX_ATTEMPTS);
  let sim = best.sim;
  if (!bestValid) { // a failed_layout board is simulated now
    sim = batch(best.board, prm, seed, best.k);
    if (sim.defect) throw defectError(sim.defect, row, seed);
  }
  const stats = { ...sim.stats };
  const b = best.board;
  const sb = searchBoard(b.elem, b.occ.lo, b.occ.hi, b.T, prm.SLOT_RULE);
  const memo = new Memo(prm.DFS_CAP);
  let solvable = -1;
  let nodes = 0;
  let witness = null;
  if (closing & Close.SEARCH) {
    memo.clear();
    const r = solve(sb, 0, 0, 0, -1, prm.DFS_CAP, memo);
    solvable = r.res;
    nodes = r.nodes;
    witness = r.res === Solvable.YES ? r.line : null;
  }
  const diagnosed = (closing & Close.DIAGNOSE) !== 0;
  let variants = null;
  let toolsToWin = null;
  if (diagnosed) {
    diagnoseLost(b, prm, sim.lost, best.k, seed, stats, sb, memo, row);
    variants = ruleVariants(b, prm, seed, best.k, row);
    if (solvable === Solvable.YES) toolsToWin = 0;
    else if (solvable !== Solvable.NO) toolsToWin = -1;
    else toolsToWin = leastTools(b, gameRules(prm), prm.DFS_CAP).answer;
  }
  const g = gateExcess(stats, prm);
  let reason = Reason.NONE;
  if (!met) {
    if (best.lay.fails > 0) reason = best.lay.firstFail;
    else if (g.low) reason = Reason.TOOL_FREE_LOW;
    else if (g.high) reason = Reason.TOOL_FREE_HIGH;
    else reason = Reason.TOOL_ASSIST_LOW;
  }
  const out = {
    attempts, exit: met ? 0 : (bestValid ? 1 : 2), reason, rej, firstValid, raw,
    returned: best.k, lay: best.lay, stats, solvable, nodes, diagnosed, variants, toolsToWin,
    gates: { clickable: best.lay.ok[0] === 1, toolFree: !(g.low || g.high), toolAssist: !g.assist },
  };
  const record = makeRecord(row, seed, index, sel, out);
  return {
    board: boardState(row, seed, sel, b), record, exit: record.exit, ok: record.ok,
    failureReason: record.failure_reason, attemptsUsed: record.attempts_used, witness,
    kernel: { board: b, prm, row, seed, attempt: best.k },
  };
}

/** sim.diagnose_lost: replay each lost tool-free run recorded, and diagnose it. */
function diagnoseLost(b, prm, lost, k, seed, stats, sb, memo, row) {
  memo.clear();
  const budgetEnd = diagBudget(memo, prm);
  const game = new Game(b, gameRules(prm));
  game.defect = 0;
  for (const { strategy, state } of lost) {
    const stream = new Pcg32(seed, BigInt(8 * k + strategy));
    stream.restore(state);
    const path = [];
    playRun(game, strategy, false, toolOrder(prm), stream, path);
    if (game.defect) throw defectError(game.defect, row, seed);
    if (game.won) throw defectError(Defect.REPLAY_DIFFERS, row, seed);
    diagnoseRun(sb, prm, path, game.clicks, memo, budgetEnd, stats);
  }
}

/** attempt._variants: the other slot rule, and each tool alone, on the same streams. */
function ruleVariants(b, prm, seed, k, row) {
  const run = (p, modes) => {
    const r = batch(b, p, seed, k, modes);
    if (r.defect) throw defectError(r.defect, row, seed);
    return r.stats;
  };
  const alt = run({ ...prm, SLOT_RULE: 1 - prm.SLOT_RULE }, 3);
  const only = ['BUDGET_REMOVE', 'BUDGET_SHUFFLE', 'BUDGET_UNDO'].map((keep) => {
    const p = { ...prm, BUDGET_REMOVE: 0, BUDGET_SHUFFLE: 0, BUDGET_UNDO: 0 };
    p[keep] = prm[keep];
    return run(p, 2).TA_WINS;
  });
  return { altTf: alt.TF_WINS, altTa: alt.TA_WINS, only };
}

/** BoardState (05 §4.3) as tilegen's Board.as_json writes it. */
export function boardState(row, seed, sel, b) {
  const names = sel.map((i) => row.cityElements[i]);
  const id = (p) => `piece_${String(p + 1).padStart(4, '0')}`;
  const size = row.prm.PIECE;
  const pieces = [];
  const graph = {};
  for (let p = 0; p < b.T; p++) {
    pieces.push({ id: id(p), elementId: names[b.elem[p]], layer: b.layer[p], x: b.x[p],
      y: b.y[p], width: size, height: size, rotation: b.rot[p], removed: false,
      anchor: [b.ac[p], b.ar[p]] });
    for (const q of b.occList[p]) (graph[id(q)] ||= []).push(id(p));
  }
  const overlapGraph = {};
  for (const k of Object.keys(graph).sort()) overlapGraph[k] = graph[k].sort();
  return {
    boardId: `${row.cityId}-${row.levelId}-${seed}`, cityId: row.cityId, levelId: row.levelId,
    revision: row.revision, seed: String(seed), elementIds: names, pieces, overlapGraph,
    returnLanes: row.laneXs.map((x) => ({ x, y: row.prm.LANE_Y, width: size, height: size })),
  };
}

const share = (num, den) => num / den;
const meanOrNull = (num, den) => (den > 0 ? num / den : null);

/** The metric record (tilegen/record.py `columns`), field for field, without gen_ms. */
export function makeRecord(row, seed, index, sel, o) {
  const prm = row.prm;
  const per = prm.RUNS;
  const runs = 3 * per;
  const s = o.stats;
  const tf = share(s.TF_WINS, runs);
  const ta = share(s.TA_WINS, runs);
  const counts = row.layerCounts.concat(Array(MAX_LAYERS - row.layerCounts.length).fill(0));
  const diag = (v) => (o.diagnosed ? v : null);
  const v = o.variants;
  const rec = {
    metric_version: METRIC_VERSION, generator_version: GENERATOR_VERSION,
    city_id: row.cityId, level_id: row.levelId, revision: row.revision,
    seed_index: index, is_production: index === null ? seed === fnv1a64(row.key) : index === -1,
    stream_seed: String(seed), element_count: prm.E,
    pieces_per_element: row.piecesPerElementText, total_pieces: prm.T, layers: prm.L,
    density: row.density, target_pass_rate: row.targetPassRate,
  };
  counts.forEach((n, i) => { rec[`n_layer_${i + 1}`] = n; });
  Object.assign(rec, {
    window_cols: row.window[2], window_rows: row.window[3], runs_per_strategy: per,
    element_ids: sel.map((i) => row.cityElements[i]).join(','),
    attempts_used: o.attempts, exit: EXIT_NAMES[o.exit], ok: o.exit === 0,
    failure_reason: REASON_NAMES[o.reason],
    rej_clickable_ratio: o.rej[0], rej_triple_chains: o.rej[1], rej_direct_triple: o.rej[2],
    rej_near_surface: o.rej[3], rej_same_layer_cluster: o.rej[4], rej_tool_free_low: o.rej[5],
    rej_tool_free_high: o.rej[6], rej_tool_assist_low: o.rej[7],
    first_valid_attempt: o.firstValid,
    raw_tool_free_pass_rate: o.firstValid > 0 ? share(o.raw[0], runs) : null,
    raw_tool_assist_pass_rate: o.firstValid > 0 ? share(o.raw[1], runs) : null,
    returned_attempt: o.returned,
    initial_clickable: o.lay.clickable, initial_clickable_ratio: share(o.lay.clickable, prm.T),
    chain_elements: o.lay.chains, direct_triple_elements: o.lay.direct,
    max_depth: o.lay.maxDepth, edges: o.lay.edges,
    near_surface_ok: o.lay.ok[3] === 1, same_layer_cluster_ok: o.lay.ok[4] === 1,
    layout_valid: o.lay.fails === 0,
    tool_free_runs: runs, tool_free_wins: s.TF_WINS, tool_free_pass_rate: tf,
    pass_rate_match_first: share(s.TF_WINS_MATCH_FIRST, per),
    pass_rate_slot_build: share(s.TF_WINS_SLOT_BUILD, per),
    pass_rate_risk_averse: share(s.TF_WINS_RISK_AVERSE, per),
    simulated_pass_rate: tf, tool_assist_runs: runs, tool_assist_wins: s.TA_WINS,
    tool_assist_pass_rate: ta, tool_value: ta - tf,
    avg_turns_to_finish: meanOrNull(s.TF_CLICKS_WON, s.TF_WINS),
    avg_peak_slot_usage: share(s.TF_PEAK_SUM, runs),
    opening_stability: diag(share(s.TF_DOOMED_5, runs)),
    opening_fail_le5_literal: share(s.TF_OPEN_LITERAL, runs),
    opening_unknown: diag(share(s.TF_UNKNOWN_5, runs)),
    stuck_rate: share(s.TA_STUCK, runs),
    soft_deadlock_rate: diag(share(s.TF_SOFT, runs)),
    mean_fail_step: meanOrNull(s.TF_FAIL_STEP_SUM, runs - s.TF_WINS),
    mean_doom_step: diag(meanOrNull(s.TF_DOOM_STEP_SUM, s.TF_DOOMED_LOSSES)),
    uses_remove: share(s.USES_REMOVE, runs), uses_shuffle: share(s.USES_SHUFFLE, runs),
    uses_undo: share(s.USES_UNDO, runs),
    tool_free_solvable: SOLVABLE_NAMES.at(o.solvable), // -1 (no search): 'unknown', as Python
    dfs_nodes: o.nodes,
    tools_to_win: o.toolsToWin === null ? null : TOOLS_TO_WIN_NAMES.at(o.toolsToWin),
    gate_clickable: o.gates.clickable, gate_tool_free: o.gates.toolFree,
    gate_tool_assist: o.gates.toolAssist, diagnosed: o.diagnosed,
    alt_slot_rule: SLOT_RULES[1 - prm.SLOT_RULE],
    alt_slot_tool_free_pass_rate: v ? share(v.altTf, runs) : null,
    alt_slot_tool_assist_pass_rate: v ? share(v.altTa, runs) : null,
    remove_only_pass_rate: v ? share(v.only[0], runs) : null,
    shuffle_only_pass_rate: v ? share(v.only[1], runs) : null,
    undo_only_pass_rate: v ? share(v.only[2], runs) : null,
  });
  return rec;
}
