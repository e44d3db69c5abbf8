// The game's rules on one board (docs/tilegen.md, "Game rules" and "Tools"; decisions
// 58-60, 103, 107): what the runtime needs to play a board and what the scripted players
// play. One reading of the rules, used by the simulated runs (runs.js) and by the play
// page; the node test holds the runs equal to Python's, run by run.
//
// - A piece is clickable iff it is on the board (a return lane included) and no piece on
//   the board occludes it; a piece on a lane has no occluder and occludes nothing.
// - A click is legal iff the slot holds < 7 pieces (< 6 under lose_on_full) or the piece's
//   element has exactly 2 in the slot. The piece goes right after the last slot piece of
//   its element (else at the end); three of one element vanish at once.
// - After a click only, the bypass return loop: repeatedly the first bypass piece whose
//   element is in the slot (or any, once the board is empty) and whose return is legal by
//   the click's test goes back to the slot and resolves.
// - Tools: Remove (bypass empty, slot non-empty) moves the first min(3, n) slot pieces to
//   the bypass; Shuffle (board non-empty) is a forward Fisher-Yates over the element ids
//   of the on-board pieces in ascending piece index; Undo (slot non-empty, a free lane)
//   moves the last-inserted slot piece to the first free lane.

export const SLOT_CAP = 7;
export const BYPASS_CAP = 3;
export const Tool = Object.freeze({ REMOVE: 0, SHUFFLE: 1, UNDO: 2 });
export const TOOL_NAMES = Object.freeze(['remove', 'shuffle', 'undo']);
export const SLOT_RULES = Object.freeze(['block_at_full', 'lose_on_full']);

/** Slot count below which any clickable piece may be clicked (decision 58). */
export function legalCap(slotRule) {
  return slotRule === 1 ? SLOT_CAP - 1 : SLOT_CAP;
}

const ctz = (x) => 31 - Math.clz32(x & -x);

export class Game {
  /**
   * board: { T, elem, occList, covList } (layout.js); rules: { slotRule (0 / 1),
   * budgets: [remove, shuffle, undo], lanes }. `reset()` starts a game.
   */
  constructor(board, rules) {
    this.board = board;
    this.T = board.T;
    this.E = 1 + Math.max(...board.elem);
    this.cap = legalCap(rules.slotRule);
    this.budgets = rules.budgets.slice();
    this.nLanes = rules.lanes;
    const T = this.T;
    this.elem = new Int32Array(T);
    this.onb = new Uint8Array(T);
    this.undone = new Uint8Array(T);
    this.blockers = new Int32Array(T); // on-board grid pieces occluding p
    this.clk = new Uint8Array(T); // 1: clickable
    this.cnt = new Int32Array(this.E + 64); // pieces of element e in the slot (0 .. 2)
    this.vcnt = new Int32Array(this.E + 64); // clickable pieces of element e
    this.tieBuf = new Int32Array(T); // bestTies' result
    this.slot = new Int32Array(SLOT_CAP + 1);
    this.seq = new Int32Array(SLOT_CAP + 1);
    this.byp = new Int32Array(BYPASS_CAP);
    this.lanes = new Int32Array(this.nLanes);
    this.left = new Int32Array(3);
    this.uses = new Int32Array(3);
    this.reset(false);
  }

  /** A new game; `tools`: with the row's budgets (else none). */
  reset(tools) {
    const b = this.board;
    for (let p = 0; p < this.T; p++) {
      this.elem[p] = b.elem[p];
      this.onb[p] = 1;
      this.undone[p] = 0;
      this.blockers[p] = b.occList[p].length;
    }
    this.cnt.fill(0);
    this.vcnt.fill(0);
    this.clkLo = 0; // the clickable pieces as a mask: pieces 0-31, 32-63
    this.clkHi = 0;
    for (let p = 0; p < this.T; p++) {
      this.clk[p] = 0;
      if (this.blockers[p] === 0) this._setClk(p);
    }
    this.lanes.fill(-1);
    for (let t = 0; t < 3; t++) {
      this.left[t] = tools ? this.budgets[t] : 0;
      this.uses[t] = 0;
    }
    this.slotN = 0;
    this.bypN = 0;
    this.removed = 0; // pieces eliminated
    this.onBoard = this.T;
    this.clicks = 0;
    this.peak = 0;
    this.number = 0; // insertion number of the next slot piece
    this.stuck = false; // reached a state with no legal click
  }

  clickable(p) {
    return this.clk[p] === 1;
  }

  _setClk(p) {
    this.clk[p] = 1;
    this.vcnt[this.elem[p]]++;
    if (p < 32) this.clkLo |= 1 << p;
    else this.clkHi |= 1 << (p - 32);
  }

  _clearClk(p) {
    this.clk[p] = 0;
    this.vcnt[this.elem[p]]--;
    if (p < 32) this.clkLo &= ~(1 << p);
    else this.clkHi &= ~(1 << (p - 32));
  }

  legal(p) {
    return this.clk[p] === 1 && (this.slotN < this.cap || this.cnt[this.elem[p]] === 2);
  }

  /**
   * The legal clicks with the best key of `strategy` (0 match-first: [c = 2]; 1
   * slot-build: c; 2 risk-averse: (-D', min(3, c + v)) ranked as 4c + min(3, c + v); c the
   * element's slot count, v its clickable pieces; decision 61) into `tieBuf` in ascending
   * piece index; returns their number (0: no legal click).
   */
  bestTies(strategy) {
    const { elem, cnt, vcnt, tieBuf } = this;
    const full = this.slotN >= this.cap;
    let best = -1;
    let n = 0;
    let m = this.clkLo;
    let base = 0;
    for (;;) {
      if (m === 0) {
        if (base === 32) break;
        m = this.clkHi;
        base = 32;
        continue;
      }
      const p = base + ctz(m);
      m &= m - 1;
      const c = cnt[elem[p]];
      if (full && c !== 2) continue;
      let k;
      if (strategy === 0) k = c === 2 ? 1 : 0;
      else if (strategy === 1) k = c;
      else k = 4 * c + Math.min(3, c + vcnt[elem[p]]);
      if (k > best) {
        best = k;
        n = 0;
      }
      if (k === best) tieBuf[n++] = p;
    }
    return n;
  }

  /** Ascending piece indices of the legal clicks. */
  legalClicks() {
    const out = [];
    for (let p = 0; p < this.T; p++) if (this.legal(p)) out.push(p);
    return out;
  }

  get won() {
    return this.removed === this.T;
  }

  /** The first free lane, -1 when none. */
  freeLane() {
    for (let i = 0; i < this.nLanes; i++) if (this.lanes[i] < 0) return i;
    return -1;
  }

  /** Whether a tool with budget left can be used now (decision 60). */
  usable(tool) {
    if (this.left[tool] <= 0) return false;
    if (tool === Tool.REMOVE) return this.bypN === 0 && this.slotN > 0;
    if (tool === Tool.SHUFFLE) return this.onBoard > 0;
    return this.slotN > 0 && this.freeLane() >= 0;
  }

  /**
   * Click piece p (legal). `events` (optional array) receives {kind, piece, lane, elim}
   * per action in order: the click, then each bypass return. Returns `events`.
   */
  click(p, events = null) {
    this.onb[p] = 0;
    this._clearClk(p);
    this.onBoard--;
    let lane = -1;
    if (this.undone[p]) {
      for (let i = 0; i < this.nLanes; i++) {
        if (this.lanes[i] === p) {
          this.lanes[i] = -1;
          lane = i;
        }
      }
    } else {
      for (const q of this.board.covList[p]) {
        if (--this.blockers[q] === 0) this._setClk(q); // q was never clicked: on the board
      }
    }
    this.clicks++;
    const elim = this._join(p);
    if (events) events.push({ kind: 'click', piece: p, lane, elim });
    for (;;) { // the bypass return loop (decision 59)
      let at = -1;
      for (let i = 0; i < this.bypN; i++) {
        const c = this.cnt[this.elem[this.byp[i]]];
        if ((c >= 1 || this.onBoard === 0) && (this.slotN < this.cap || c === 2)) {
          at = i;
          break;
        }
      }
      if (at < 0) break;
      const q = this.byp[at];
      for (let i = at + 1; i < this.bypN; i++) this.byp[i - 1] = this.byp[i];
      this.bypN--;
      const e = this._join(q);
      if (events) events.push({ kind: 'return', piece: q, lane: -1, elim: e });
    }
    if (this.slotN > this.peak) this.peak = this.slotN;
    return events;
  }

  /** Piece q joins the slot; returns the element eliminated (-1: none). */
  _join(q) {
    const e = this.elem[q];
    let elim = -1;
    if (this.cnt[e] === 2) { // the two in the slot vanish with the arriving piece
      let j = 0;
      for (let i = 0; i < this.slotN; i++) {
        if (this.elem[this.slot[i]] !== e) {
          this.slot[j] = this.slot[i];
          this.seq[j] = this.seq[i];
          j++;
        }
      }
      this.slotN = j;
      this.cnt[e] = 0;
      this.removed += 3;
      elim = e;
    } else {
      let pos = this.slotN;
      if (this.cnt[e] === 1) {
        for (let i = 0; i < this.slotN; i++) if (this.elem[this.slot[i]] === e) pos = i + 1;
        for (let i = this.slotN; i > pos; i--) {
          this.slot[i] = this.slot[i - 1];
          this.seq[i] = this.seq[i - 1];
        }
      }
      this.slot[pos] = q;
      this.seq[pos] = this.number;
      this.slotN++;
      this.cnt[e]++;
    }
    this.number++;
    return elim;
  }

  /** Remove: the first min(3, n) slot pieces go to the bypass. */
  remove() {
    const k = Math.min(3, this.slotN);
    for (let i = 0; i < k; i++) {
      this.byp[i] = this.slot[i];
      this.cnt[this.elem[this.slot[i]]]--;
    }
    for (let i = k; i < this.slotN; i++) {
      this.slot[i - k] = this.slot[i];
      this.seq[i - k] = this.seq[i];
    }
    this.slotN -= k;
    this.bypN = k;
    this._spend(Tool.REMOVE);
  }

  /** Shuffle: Fisher-Yates over the on-board pieces' elements, drawing from `stream`. */
  shuffle(stream) {
    const idx = [];
    for (let p = 0; p < this.T; p++) if (this.onb[p]) idx.push(p);
    const n = idx.length;
    for (let j = 0; j < n - 1; j++) {
      const t = j + stream.bounded(n - j);
      const x = this.elem[idx[j]];
      this.elem[idx[j]] = this.elem[idx[t]];
      this.elem[idx[t]] = x;
    }
    this.vcnt.fill(0);
    for (let p = 0; p < this.T; p++) this.vcnt[this.elem[p]] += this.clk[p];
    this._spend(Tool.SHUFFLE);
  }

  /** Undo: the last-inserted slot piece goes to the first free lane; returns the lane. */
  undo() {
    let j = 0;
    for (let i = 1; i < this.slotN; i++) if (this.seq[i] > this.seq[j]) j = i;
    const piece = this.slot[j];
    for (let i = j + 1; i < this.slotN; i++) {
      this.slot[i - 1] = this.slot[i];
      this.seq[i - 1] = this.seq[i];
    }
    this.slotN--;
    this.cnt[this.elem[piece]]--;
    const lane = this.freeLane();
    this.lanes[lane] = piece;
    this.onb[piece] = 1;
    this.undone[piece] = 1;
    this._setClk(piece);
    this.onBoard++;
    this._spend(Tool.UNDO);
    return lane;
  }

  _spend(tool) {
    this.left[tool]--;
    this.uses[tool]++;
  }

  /** The last-inserted slot piece (Undo's candidate), -1 for an empty slot. */
  lastInserted() {
    let last = -1;
    for (let i = 0; i < this.slotN; i++) {
      if (last < 0 || this.seq[i] > this.seq[last]) last = i;
    }
    return last < 0 ? -1 : this.slot[last];
  }

  /** Pieces off the board (clicked, not back on a lane) as a list, ascending. */
  offBoard() {
    const out = [];
    for (let p = 0; p < this.T; p++) if (!this.onb[p]) out.push(p);
    return out;
  }
}
