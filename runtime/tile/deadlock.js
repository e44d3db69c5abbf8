// classifyDeadlock (05 §14; search.classify_deadlock, codes.Deadlock): the deadlock class
// of a resting state of a game. The four classes partition the states not won: hard (no
// legal click); none (a click is legal and a tool-free win is still possible); soft (a
// click is legal, no tool-free win is left, and one Undo or one Remove makes one possible
// again); deep (a click is legal, no tool-free win is left, and no single Undo or Remove
// brings one back). An UNKNOWN search answer (node cap) counts as not doomed.

import { bypPush, Memo, searchBoard, solve, Solvable, undoBoard } from './search.js';
import { Tool } from './rules.js';

const NO_BUDGET = Number.MAX_SAFE_INTEGER;

/** The class of the state of `game` (rules.js Game) under the row's node cap. */
export function classifyDeadlock(game, prm) {
  const T = game.T;
  if (game.legalClicks().length === 0) return 'hard';
  const occLo = new Uint32Array(T);
  const occHi = new Uint32Array(T);
  let lo = 0;
  let hi = 0;
  for (let p = 0; p < T; p++) {
    if (!game.onb[p]) {
      if (p < 32) lo |= 1 << p;
      else hi |= 1 << (p - 32);
    }
    if (game.undone[p]) continue; // a piece on a lane has no edge
    for (const q of game.board.occList[p]) {
      if (game.undone[q]) continue;
      if (q < 32) occLo[p] |= 1 << q;
      else occHi[p] |= 1 << (q - 32);
    }
  }
  lo >>>= 0;
  hi >>>= 0;
  const sb = searchBoard(game.elem, occLo, occHi, T, game.cap === 6 ? 1 : 0);
  let code = 0;
  for (let i = 0; i < game.bypN; i++) code = bypPush(code, i, game.byp[i]);
  const memo = new Memo(prm.DFS_CAP);
  if (solve(sb, lo, hi, code, -1, prm.DFS_CAP, memo).res !== Solvable.NO) return 'none';
  const u = game.left[Tool.UNDO] > 0 && game.freeLane() >= 0 ? game.lastInserted() : -1;
  if (u >= 0) {
    const ulo = u < 32 ? (lo & ~(1 << u)) >>> 0 : lo;
    const uhi = u < 32 ? hi : (hi & ~(1 << (u - 32))) >>> 0;
    const cap = Math.min(prm.DFS_CAP, NO_BUDGET);
    if (solve(undoBoard(sb, u), ulo, uhi, code, u, cap, memo).res === Solvable.YES) {
      return 'soft';
    }
  }
  if (game.left[Tool.REMOVE] > 0 && game.bypN === 0) {
    let rem = 0;
    for (let i = 0; i < Math.min(3, game.slotN); i++) rem = bypPush(rem, i, game.slot[i]);
    if (rem !== 0 && solve(sb, lo, hi, rem, -1, prm.DFS_CAP, memo).res === Solvable.YES) {
      return 'soft';
    }
  }
  return 'deep';
}

/** Each class in a designer's words (the play page says the class with these). */
export const DEADLOCK_WORDS = {
  none: 'a tool-free win is still possible',
  soft: 'a click is legal, but no tool-free win is left; one Undo or one Remove would make '
    + 'a win possible again',
  deep: 'a click is legal, but no tool-free win is left, and no single Undo or Remove '
    + 'brings one back',
  hard: 'no click is legal: play cannot go on without a tool',
};
