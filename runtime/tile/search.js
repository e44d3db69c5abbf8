// Exhaustive tool-free solvability and the search-based diagnostics (docs/tilegen.md,
// "Solvability" and "Diagnostics"; decisions 67, 107-109, 139, 140): a port of
// tilegen/_kernels/dfs.py, memo.py, search.py and diagnose.py that expands the same
// nodes in the same order and keeps the memo's observable rules (what it stores, when it
// clears), so node counts and UNKNOWN answers match too.
//
// A state is the set of pieces off the board (a 64-bit mask as two uint32: lo = pieces
// 0-31, hi = 32-63) and the bypass code (3 x 7 bits, piece + 1, first piece lowest; 0:
// empty). Slot counts are element masks c1 / c2 (1 / 2 pieces in the slot), E <= 31.

export const Solvable = Object.freeze({ NO: 0, YES: 1, UNKNOWN: 2 });
export const SOLVABLE_NAMES = Object.freeze(['no', 'yes', 'unknown']);
const Found = Object.freeze({ ABSENT: 0, DEAD: 1, WIN: 2, UNKNOWN: 3 });
const BYP_BITS = 7;
const UNDO_SHIFT = 21; // BYP_BITS * BYPASS_CAP
const STACK = 65; // MAX_PIECES + 1
const DIAG_BUDGET_CAPS = 10;
const SLOT_CAP = 7;
const OPENING_CLICKS = 5;

const ctz = (x) => 31 - Math.clz32(x & -x);

export function bypGet(byp, i) {
  return ((byp >>> (BYP_BITS * i)) & 127) - 1;
}

export function bypPush(byp, i, piece) {
  return byp | ((piece + 1) << (BYP_BITS * i));
}

function bypDrop(byp, i) {
  const low = byp & ((1 << (BYP_BITS * i)) - 1);
  const high = byp >>> (BYP_BITS * (i + 1));
  return low | (high << (BYP_BITS * i));
}

function tagOf(lo, hi, byp, undo) {
  if (undo >= 0 && ((undo < 32 ? lo >>> undo : hi >>> (undo - 32)) & 1) === 0) {
    return byp | ((undo + 1) << UNDO_SHIFT);
  }
  return byp;
}

/** memo.memo_size: the table the Python memo uses for a node cap (its clear-on-fill). */
export function memoSize(cap) {
  const need = (cap + STACK) * 2 + 1;
  let size = 1024;
  while (size < need) size *= 2;
  return size;
}

/** The memo: what the Python table answers, with the same clear-on-fill rule. */
export class Memo {
  constructor(cap) {
    this.size = memoSize(cap);
    this.map = new Map();
    this.nodes = 0; // expanded nodes of every search so far (the diagnostics' budget)
    this.searches = 0;
    this.unknowns = 0;
  }

  clear() {
    this.map.clear();
  }

  find(lo, hi, tag) {
    return this.map.get(`${lo}:${hi}:${tag}`) ?? Found.ABSENT;
  }

  store(lo, hi, tag, value) { // DEAD / WIN replace UNKNOWN; else an entry stays
    if ((this.map.size + 1) * 2 > this.size) this.map.clear();
    const k = `${lo}:${hi}:${tag}`;
    const cur = this.map.get(k);
    if (cur === undefined || cur === Found.UNKNOWN) this.map.set(k, value);
  }
}

/** The search's view of a board: elem, occ (lo / hi) and the legal cap. */
export function searchBoard(elem, occLo, occHi, T, slotRule) {
  return { elem, occLo, occHi, T, cap: slotRule === 1 ? SLOT_CAP - 1 : SLOT_CAP,
    fullLo: T >= 32 ? 0xffffffff : ((2 ** T) - 1) >>> 0,
    fullHi: T <= 32 ? 0 : ((2 ** (T - 32)) - 1) >>> 0 };
}

/** The board with piece u undone onto a lane (memo.undo_occ). */
export function undoBoard(sb, u) {
  const occLo = Uint32Array.from(sb.occLo);
  const occHi = Uint32Array.from(sb.occHi);
  for (let p = 0; p < sb.T; p++) {
    if (u < 32) occLo[p] &= ~(1 << u);
    else occHi[p] &= ~(1 << (u - 32));
  }
  occLo[u] = 0;
  occHi[u] = 0;
  return { ...sb, occLo, occHi };
}

function slotMasks(elem, lo, hi, byp) {
  let c1 = 0;
  let c2 = 0;
  const bump = (eb) => { // + 1 mod 3
    if (c2 & eb) c2 &= ~eb;
    else if (c1 & eb) { c1 &= ~eb; c2 |= eb; } else c1 |= eb;
  };
  for (let m = lo; m !== 0; m &= m - 1) bump(1 << elem[ctz(m)]);
  for (let m = hi; m !== 0; m &= m - 1) bump(1 << elem[32 + ctz(m)]);
  for (let i = 0; i < 3; i++) { // - 1 mod 3
    const b = bypGet(byp, i);
    if (b < 0) continue;
    const eb = 1 << elem[b];
    if (c2 & eb) { c2 &= ~eb; c1 |= eb; } else if (c1 & eb) c1 &= ~eb; else c2 |= eb;
  }
  return [c1, c2, popcount(c1) + 2 * popcount(c2)];
}

function popcount(x) {
  let n = 0;
  for (let m = x >>> 0; m !== 0; m &= m - 1) n++;
  return n;
}

/** dfs._returns: the bypass return loop on slot counts; [byp, c1, c2, total]. */
function returns(elem, c1, c2, byp, total, empty, cap) {
  let moved = true;
  while (moved && byp !== 0) {
    moved = false;
    for (let i = 0; i < 3; i++) {
      const b = bypGet(byp, i);
      if (b < 0) break;
      const eb = 1 << elem[b];
      const c = (c2 & eb) ? 2 : ((c1 & eb) ? 1 : 0);
      if ((c >= 1 || empty) && (total < cap || c === 2)) {
        byp = bypDrop(byp, i);
        if (c === 2) { c2 &= ~eb; total -= 2; } else if (c === 1) {
          c1 &= ~eb; c2 |= eb; total += 1;
        } else { c1 |= eb; total += 1; }
        moved = true;
        break;
      }
    }
  }
  return [byp, c1, c2, total];
}

/**
 * dfs.solve_on: is there a tool-free win from (lo, hi, byp)? `undo` only tags the memo
 * (the board already reflects it). Returns { res, nodes, line }: `line`, on YES found
 * without the memo's help below the start, is the winning clicks (piece indices).
 */
export function solve(sb, lo0, hi0, byp0, undo, cap, memo) {
  const { elem, occLo, occHi, fullLo, fullHi } = sb;
  const capLegal = sb.cap;
  const startTag = tagOf(lo0, hi0, byp0, undo);
  let res = -1;
  let nodes = 0;
  let line = null;
  if (lo0 === fullLo && hi0 === fullHi && byp0 === 0) {
    res = Solvable.YES;
    line = [];
  } else {
    const known = memo.find(lo0, hi0, startTag);
    if (known === Found.DEAD) res = Solvable.NO;
    else if (known === Found.WIN) res = Solvable.YES;
    else if (known === Found.UNKNOWN || cap < 1) res = Solvable.UNKNOWN;
  }
  if (res < 0) {
    const stk = [];
    let [c1, c2, total2] = slotMasks(elem, lo0, hi0, byp0);
    nodes = 1;
    let d = -1;
    let lo2 = lo0;
    let hi2 = hi0;
    let byp2 = byp0;
    let push = true;
    for (;;) {
      if (push) {
        d++;
        const onLo = (fullLo & ~lo2) >>> 0;
        const onHi = (fullHi & ~hi2) >>> 0;
        let mLo = 0;
        let mHi = 0;
        for (let m = onLo; m !== 0; m &= m - 1) {
          const p = ctz(m);
          if ((occLo[p] & onLo) === 0 && (occHi[p] & onHi) === 0
            && (total2 < capLegal || (c2 & (1 << elem[p])))) mLo |= 1 << p;
        }
        for (let m = onHi; m !== 0; m &= m - 1) {
          const p = 32 + ctz(m);
          if ((occLo[p] & onLo) === 0 && (occHi[p] & onHi) === 0
            && (total2 < capLegal || (c2 & (1 << elem[p])))) mHi |= 1 << (p - 32);
        }
        stk[d] = { lo: lo2, hi: hi2, byp: byp2, total: total2, c1, c2, mLo, mHi, pick: -1 };
        push = false;
      }
      if (d < 0) {
        res = Solvable.NO;
        break;
      }
      const row = stk[d];
      if (row.mLo === 0 && row.mHi === 0) { // exhausted: dead
        memo.store(row.lo, row.hi, tagOf(row.lo, row.hi, row.byp, undo), Found.DEAD);
        d--;
        continue;
      }
      let p;
      if (row.mLo !== 0) {
        p = ctz(row.mLo);
        row.mLo &= row.mLo - 1;
      } else {
        p = 32 + ctz(row.mHi);
        row.mHi &= row.mHi - 1;
      }
      row.pick = p;
      lo2 = p < 32 ? (row.lo | (1 << p)) >>> 0 : row.lo;
      hi2 = p < 32 ? row.hi : (row.hi | (1 << (p - 32))) >>> 0;
      c1 = row.c1;
      c2 = row.c2;
      total2 = row.total;
      const eb = 1 << elem[p];
      if (c2 & eb) { c2 &= ~eb; total2 -= 2; } else if (c1 & eb) {
        c1 &= ~eb; c2 |= eb; total2 += 1;
      } else { c1 |= eb; total2 += 1; }
      byp2 = row.byp;
      const full = lo2 === fullLo && hi2 === fullHi;
      if (byp2 !== 0) [byp2, c1, c2, total2] = returns(elem, c1, c2, byp2, total2, full, capLegal);
      let known;
      if (full && byp2 === 0) known = Found.WIN;
      else known = memo.find(lo2, hi2, tagOf(lo2, hi2, byp2, undo));
      if (known === Found.DEAD) continue;
      if (known === Found.WIN) { // every state on the line is winnable
        for (let j = 0; j <= d; j++) {
          memo.store(stk[j].lo, stk[j].hi, tagOf(stk[j].lo, stk[j].hi, stk[j].byp, undo),
            Found.WIN);
        }
        res = Solvable.YES;
        if (full && byp2 === 0) line = stk.slice(0, d + 1).map((r) => r.pick);
        break;
      }
      if (nodes >= cap) {
        res = Solvable.UNKNOWN;
        break;
      }
      nodes++;
      push = true;
    }
  }
  if (res === Solvable.UNKNOWN && nodes > 0) memo.store(lo0, hi0, startTag, Found.UNKNOWN);
  memo.searches++;
  memo.nodes += nodes;
  if (res === Solvable.UNKNOWN) memo.unknowns++;
  return { res, nodes, line };
}

/** dfs.budget_cap: the next search's cap under the diagnostics' shared node budget. */
function budgetCap(memo, cap, budgetEnd) {
  return Math.max(0, Math.min(cap, budgetEnd - memo.nodes));
}

function maskOf(pieces) {
  let lo = 0;
  let hi = 0;
  for (const p of pieces) {
    if (p < 32) lo |= 1 << p;
    else hi |= 1 << (p - 32);
  }
  return [lo >>> 0, hi >>> 0];
}

/** search._recoverable: does one Undo of `undo` or one Remove (`rem` code) give YES? */
function recoverable(sb, cap, budgetEnd, memo, lo, hi, byp, undo, rem) {
  if (undo >= 0) {
    const ub = undoBoard(sb, undo);
    const ulo = undo < 32 ? (lo & ~(1 << undo)) >>> 0 : lo;
    const uhi = undo < 32 ? hi : (hi & ~(1 << (undo - 32))) >>> 0;
    const r = solve(ub, ulo, uhi, byp, undo, budgetCap(memo, cap, budgetEnd), memo);
    if (r.res === Solvable.YES) return true;
  }
  if (rem !== 0 && byp === 0) {
    const r = solve(sb, lo, hi, rem, -1, budgetCap(memo, cap, budgetEnd), memo);
    if (r.res === Solvable.YES) return true;
  }
  return false;
}

/**
 * diagnose._diagnose on one lost tool-free run of n clicks whose recorded states are
 * `path[j]` = { off, undo, rem } after j clicks; adds to `stats` (the (diag) slots).
 */
export function diagnoseRun(sb, prm, path, n, memo, budgetEnd, stats) {
  const cap = prm.DFS_CAP;
  const at = (j) => maskOf(path[j].off);
  let doom = n + 1;
  let before = -1;
  for (let j = n; j >= 0; j--) {
    const [lo, hi] = at(j);
    const r = solve(sb, lo, hi, 0, -1, budgetCap(memo, cap, budgetEnd), memo);
    if (r.res !== Solvable.NO) {
      before = r.res;
      break;
    }
    doom = j;
  }
  if (doom <= n && (doom === 0 || before === Solvable.YES)) {
    stats.TF_DOOM_STEP_SUM += doom;
    stats.TF_DOOMED_LOSSES += 1;
  }
  if (n >= OPENING_CLICKS) {
    let r5;
    if (doom <= OPENING_CLICKS) r5 = Solvable.NO;
    else if (before === Solvable.YES || doom === OPENING_CLICKS + 1) r5 = before;
    else {
      const [lo, hi] = at(OPENING_CLICKS);
      r5 = solve(sb, lo, hi, 0, -1, budgetCap(memo, cap, budgetEnd), memo).res;
    }
    if (r5 === Solvable.NO) stats.TF_DOOMED_5 += 1;
    else if (r5 === Solvable.UNKNOWN) stats.TF_UNKNOWN_5 += 1;
  }
  const undoOk = prm.BUDGET_UNDO >= 1 && prm.N_LANES >= 1;
  const removeOk = prm.BUDGET_REMOVE >= 1;
  for (let j = Math.max(doom, 1); j < n; j++) {
    const u = undoOk ? path[j].undo : -1;
    let rem = 0;
    if (removeOk) path[j].rem.forEach((q, i) => { rem = bypPush(rem, i, q); });
    const [lo, hi] = at(j);
    if (recoverable(sb, cap, budgetEnd, memo, lo, hi, 0, u, rem)) {
      stats.TF_SOFT += 1;
      break;
    }
  }
}

export function diagBudget(memo, prm) {
  return memo.nodes + DIAG_BUDGET_CAPS * prm.DFS_CAP;
}
