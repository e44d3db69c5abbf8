// The scripted players (docs/tilegen.md, "Simulated players"; decision 61) and the batch of
// one attempt (tilegen/_kernels/sim.py `batch`): three strategies x R runs, tool-free and
// tool-assisted, on the streams of docs/tile-draw-protocol.md §3 and §6.

import { Pcg32 } from '../rng.js';
import { Defect } from './layout.js';
import { Game, SLOT_CAP, BYPASS_CAP, Tool } from './rules.js';

export const Strategy = Object.freeze({ MATCH_FIRST: 0, SLOT_BUILD: 1, RISK_AVERSE: 2 });
export const STRATEGY_NAMES = Object.freeze(['match-first', 'slot-build', 'risk-averse']);
export const OPENING_CLICKS = 5;

// the stats of one attempt, named as codes.S (TF: tool-free runs, TA: tool-assisted)
export const STAT_NAMES = Object.freeze([
  'TF_WINS', 'TF_WINS_MATCH_FIRST', 'TF_WINS_SLOT_BUILD', 'TF_WINS_RISK_AVERSE', 'TA_WINS',
  'TF_CLICKS_WON', 'TF_PEAK_SUM', 'TF_FAIL_STEP_SUM', 'TF_OPEN_LITERAL', 'TA_STUCK',
  'USES_REMOVE', 'USES_SHUFFLE', 'USES_UNDO', 'TF_DOOMED_5', 'TF_UNKNOWN_5', 'TF_SOFT',
  'TF_DOOM_STEP_SUM', 'TF_DOOMED_LOSSES',
]);

export function zeroStats() {
  return Object.fromEntries(STAT_NAMES.map((n) => [n, 0]));
}

/** The legal clicks with the strategy's best key, ascending piece index (Game.bestTies). */
export function ties(game, strategy) {
  return Array.from(game.tieBuf.subarray(0, game.bestTies(strategy)));
}

/** The strategy's click: the tied piece bounded(#ties) picks (no draw for one); -1: none. */
export function chooseClick(game, strategy, stream) {
  const n = game.bestTies(strategy);
  if (n === 0) return -1;
  return n === 1 ? game.tieBuf[0] : game.tieBuf[stream.bounded(n)];
}

/** The first available tool of `order` (Tool ids), -1 when none (decision 60). */
export function policyTool(game, order) {
  for (const t of order) if (game.usable(t)) return t;
  return -1;
}

/**
 * One run on `game` (reset here) drawing from `stream`. `rec` (tool-free diagnostics):
 * arrays filled with the state after each click j (path: off-board pieces, undoAt: the
 * last-inserted slot piece, remSlot: the first min(3, n) slot pieces). `onStep(event)`:
 * called per action (the play page's "watch a strategy"). Returns the game.
 */
export function playRun(game, strategy, tools, order, stream, rec = null, onStep = null) {
  game.reset(tools);
  if (rec) rec.push({ off: [], undo: -1, rem: [] });
  for (;;) {
    if (game.won) {
      if (onStep) onStep({ kind: 'won' });
      return game;
    }
    let pick = chooseClick(game, strategy, stream);
    if (pick < 0) {
      game.stuck = true;
      while (pick < 0) {
        const tool = policyTool(game, order);
        if (tool < 0) break;
        let lane = -1;
        if (tool === Tool.REMOVE) game.remove();
        else if (tool === Tool.SHUFFLE) game.shuffle(stream);
        else lane = game.undo();
        if (onStep) onStep({ kind: ['remove', 'shuffle', 'undo'][tool], lane });
        pick = chooseClick(game, strategy, stream);
      }
      if (pick < 0) {
        if (onStep) onStep({ kind: 'lost' });
        return game;
      }
    }
    if (onStep) for (const ev of game.click(pick, [])) onStep(ev);
    else game.click(pick);
    if (game.slotN > SLOT_CAP || game.bypN > BYPASS_CAP) {
      game.defect = Defect.SLOT_OVERFLOW;
      return game;
    }
    if (rec && game.clicks <= game.T) {
      const rem = [];
      for (let i = 0; i < Math.min(3, game.slotN); i++) rem.push(game.slot[i]);
      rec.push({ off: game.offBoard(), undo: game.lastInserted(), rem });
    }
  }
}

/** Rules of a row for `Game` (prm: the exported parameter vector by name). */
export function gameRules(prm) {
  return { slotRule: prm.SLOT_RULE, lanes: prm.N_LANES,
    budgets: [prm.BUDGET_REMOVE, prm.BUDGET_SHUFFLE, prm.BUDGET_UNDO] };
}

export function toolOrder(prm) {
  return [prm.ORDER_0, prm.ORDER_1, prm.ORDER_2];
}

/**
 * The runs of attempt k (sim.batch) for the modes of the bit mask `modes` (1: tool-free,
 * 2: tool-assisted) on stream (seed, 8k + 3 mode + s). Returns { stats, lost, defect }:
 * `lost` lists the lost tool-free runs as { strategy, state } (the stream before the run),
 * in run order, for the diagnostics.
 */
export function batch(board, prm, seed, k, modes = 3) {
  const stats = zeroStats();
  const lost = [];
  const game = new Game(board, gameRules(prm));
  game.defect = 0;
  const order = toolOrder(prm);
  const R = prm.RUNS;
  for (let mode = 0; mode < 2; mode++) {
    if (!(modes & (1 << mode))) continue;
    for (let s = 0; s < 3; s++) {
      const stream = new Pcg32(seed, BigInt(8 * k + 3 * mode + s));
      for (let r = 0; r < R; r++) {
        const before = mode === 0 ? stream.snapshot() : null;
        playRun(game, s, mode === 1, order, stream);
        if (game.defect) return { stats, lost, defect: game.defect };
        if (mode === 1) {
          stats.TA_WINS += game.won ? 1 : 0;
          stats.TA_STUCK += game.stuck ? 1 : 0;
          stats.USES_REMOVE += game.uses[0];
          stats.USES_SHUFFLE += game.uses[1];
          stats.USES_UNDO += game.uses[2];
          continue;
        }
        stats.TF_PEAK_SUM += game.peak;
        if (game.won) {
          stats.TF_WINS += 1;
          stats[['TF_WINS_MATCH_FIRST', 'TF_WINS_SLOT_BUILD', 'TF_WINS_RISK_AVERSE'][s]] += 1;
          stats.TF_CLICKS_WON += game.clicks;
          if (game.clicks !== board.T) return { stats, lost, defect: Defect.TURNS_NOT_T };
        } else {
          stats.TF_FAIL_STEP_SUM += game.clicks;
          if (game.clicks <= OPENING_CLICKS) {
            stats.TF_OPEN_LITERAL += 1;
            return { stats, lost, defect: Defect.LITERAL_OPENING_FAIL };
          }
          lost.push({ strategy: s, state: before });
        }
      }
    }
  }
  return { stats, lost, defect: Defect.NONE };
}
