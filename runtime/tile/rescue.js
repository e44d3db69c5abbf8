// The least tools that rescue a board (decision 195; tilegen/_kernels/rescue.py, ported
// move for move: the same state, move order, DEAD memo and node count, so the same answer
// and the same UNKNOWN past the cap). Tools: Remove and Undo at any resting state, k of
// them in all; Shuffle is a draw, not a plan, and is not counted.

export const MAX_TOOLS = 3;
export const MORE = MAX_TOOLS + 1;
export const UNKNOWN = -1;
const SLOT_CAP = 7;

/** The state's memo key: with no tool left the slot's order no longer matters. */
function keyOf(s) {
  let k = `${s.mask.join(',')}|${s.lanes.join(',')}|${s.byp.join(',')}`;
  if (s.left > 0) k += `|${s.slot.join(',')}|${s.rank.join(',')}|${s.left}`;
  return k;
}

function copy(s) {
  return { mask: s.mask.slice(), lanes: s.lanes.slice(), slot: s.slot.slice(),
    rank: s.rank.slice(), byp: s.byp.slice(), left: s.left, next: 0 };
}

const has = (m, p) => (p < 32 ? (m[0] >>> p) & 1 : (m[1] >>> (p - 32)) & 1) === 1;
// a 64-bit piece mask as [pieces 0-31, pieces 32-63]
const set = (m, p) => {
  if (p < 32) m[0] = (m[0] | (1 << p)) >>> 0;
  else m[1] = (m[1] | (1 << (p - 32))) >>> 0;
};
const clear = (m, p) => {
  if (p < 32) m[0] = (m[0] & ~(1 << p)) >>> 0;
  else m[1] = (m[1] & ~(1 << (p - 32))) >>> 0;
};

function dropSlot(s, i) {
  const r = s.rank[i];
  s.slot.splice(i, 1);
  s.rank.splice(i, 1);
  for (let j = 0; j < s.rank.length; j++) if (s.rank[j] > r) s.rank[j]--;
}

function count(s, elem, e) {
  let c = 0;
  for (const q of s.slot) if (elem[q] === e) c++;
  return c;
}

function join(s, elem, q) {
  const e = elem[q];
  if (count(s, elem, e) === 2) {
    for (let i = s.slot.length - 1; i >= 0; i--) if (elem[s.slot[i]] === e) dropSlot(s, i);
    return;
  }
  let pos = s.slot.length;
  for (let i = 0; i < s.slot.length; i++) if (elem[s.slot[i]] === e) pos = i + 1;
  s.slot.splice(pos, 0, q);
  s.rank.splice(pos, 0, s.slot.length - 1);
}

function click(s, elem, T, cap, p) {
  set(s.mask, p);
  clear(s.lanes, p);
  join(s, elem, p);
  let moved = true;
  while (moved) {
    moved = false;
    const empty = s.mask.every((w, i) => w === full(T)[i]);
    for (let i = 0; i < s.byp.length; i++) {
      const b = s.byp[i];
      const c = count(s, elem, elem[b]);
      if ((c >= 1 || empty) && (s.slot.length < cap || c === 2)) {
        s.byp.splice(i, 1);
        join(s, elem, b);
        moved = true;
        break;
      }
    }
  }
}

function full(T) {
  return [T >= 32 ? 0xffffffff : (2 ** T - 1) >>> 0, T <= 32 ? 0 : (2 ** (T - 32) - 1) >>> 0];
}

const popcount = (m) => {
  let n = 0;
  for (const w of m) for (let x = w; x !== 0; x &= x - 1) n++;
  return n;
};

/**
 * rescue.least_tools: board { T, elem, occList }, rules { slotRule, lanes }, node cap.
 * Returns { answer: 1 .. MAX_TOOLS | MORE | UNKNOWN, nodes }.
 */
export function leastTools(board, rules, cap) {
  const { T, elem, occList } = board;
  const capLegal = rules.slotRule === 1 ? SLOT_CAP - 1 : SLOT_CAP;
  const f = full(T);
  const dead = new Set();
  const size = memoSize(cap);
  let nodes = 0;
  for (let k = 1; k <= MAX_TOOLS; k++) {
    const stk = [{ mask: [0, 0], lanes: [0, 0], slot: [], rank: [], byp: [], left: k, next: 0 }];
    nodes++;
    while (stk.length) {
      const s = stk[stk.length - 1];
      const mv = s.next;
      if (mv > T + 1) {
        if ((dead.size + 1) * 2 > size) dead.clear();
        dead.add(keyOf(s));
        stk.pop();
        continue;
      }
      s.next = mv + 1;
      let ok = false;
      if (mv < T) {
        const on = !has(s.mask, mv);
        // a lane piece has no occluder; a grid piece's occluders are off the board or on lanes
        const free = (q) => has(s.mask, q) || has(s.lanes, q);
        if (on && (has(s.lanes, mv) || occList[mv].every(free))) {
          ok = s.slot.length < capLegal || count(s, elem, elem[mv]) === 2;
        }
      } else if (s.left > 0 && s.slot.length > 0) {
        ok = mv === T ? s.byp.length === 0 : popcount(s.lanes) < rules.lanes;
      }
      if (!ok) continue;
      const c = copy(s);
      if (mv < T) click(c, elem, T, capLegal, mv);
      else if (mv === T) {
        const n = Math.min(3, c.slot.length);
        c.byp = c.slot.slice(0, n);
        for (let i = 0; i < n; i++) dropSlot(c, 0);
        c.left--;
      } else {
        let j = 0;
        for (let i = 0; i < c.slot.length; i++) if (c.rank[i] > c.rank[j]) j = i;
        const u = c.slot[j];
        dropSlot(c, j);
        clear(c.mask, u);
        set(c.lanes, u);
        c.left--;
      }
      if (c.mask[0] === f[0] && c.mask[1] === f[1] && c.slot.length === 0 && c.byp.length === 0) {
        return { answer: k, nodes };
      }
      if (dead.has(keyOf(c))) continue;
      if (nodes >= cap) return { answer: UNKNOWN, nodes };
      nodes++;
      stk.push(c);
    }
  }
  return { answer: MORE, nodes };
}

/** rescue.make_table's size: the clear-on-fill rule of the Python table. */
function memoSize(cap) {
  const need = (cap + 80) * 2 + 1;
  let size = 1024;
  while (size < need) size *= 2;
  return size;
}
