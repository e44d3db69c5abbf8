// minesweeper.js: the player-facing rules of one minegen board, for the game's runtime and
// the play page (minegen/play_page.py). No imports, no dependencies: node 20 and browsers.
//
// The board is the JSON `minegen.play_data.board_data` writes: width, height, mines and
// fog as [x, y] cells, the opening R0, the solver's settings. Cells are flat row-major
// indices c = y * width + x inside; the exported functions speak [x, y].
//
// Rules (SPEC §4, §5; A4 fog), one reading shared with the Python side:
// - numbers: mines in the 8-neighbourhood (defined on every cell).
// - the game opens with R0 (spawn 3x3 + its zero-flood closure, SPEC §4 stage 3).
// - reveal(c): a mine loses; else c opens and a zero cascade follows: an opened non-fog
//   0-cell opens its 8 neighbours, repeated (SPEC §5 operator 1). A fog cell opens like
//   any other but shows no number and never cascades (fog is never 0: A4 safe_nonzero).
//   A cascade opens a wrongly flagged cell too (a 0 proves it safe) and drops its flag.
//   Fog cells are not opened by their neighbours: they are dug one by one (SPEC §6 F3).
// - a fog cell is visibly fog and known safe: it cannot be flagged.
// - win: every safe cell (fog included) is open; lose: a mine is dug.
// - hint(board, revealed): the difficulty-tier solver of minegen/_kernels/tiers.py run
//   from the player's open cells (R = revealed, K = {}): which closed safe cells each tier
//   opens and which mines it marks, by the tier whose closure first reaches them; a guess
//   is forced when no tier opens any closed cell and the board is not cleared. The
//   schedule is the Python one (docs/design.md "Difficulty tiers"): tier t starts from
//   tier t-1's fixpoint and repeats {close under every rule below t; one pass of rule t
//   over one snapshot} until a pass deduces nothing; once every safe cell is open the
//   tiers above F1's (solver_rules) are not run. Player flags are never read: the solver
//   deduces its own mines.

export const TIER_NAMES = Object.freeze(['cascade', 'single', 'subset', 'global', 'enumerate']);
export const Status = Object.freeze({ PLAYING: 'playing', WON: 'won', LOST: 'lost' });

const DX8 = [-1, 0, 1, -1, 1, -1, 0, 1];
const DY8 = [-1, -1, -1, 0, 0, 1, 1, 1];

function rowMajor(board, cells, extra) {
  const out = [];
  for (const c of [...cells].sort((a, b) => a - b)) {
    const xy = [c % board.width, Math.floor(c / board.width)];
    out.push(extra ? [...xy, extra(c)] : xy);
  }
  return out;
}

/** The board of `data` (play_data.board_data): typed grids, neighbours, numbers, R0.
 * Throws on a malformed board or a fog cell that is a mine or a 0 (A4 safe_nonzero). */
export function makeBoard(data) {
  const { width, height } = data;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`bad board size ${width} x ${height}`);
  }
  const n = width * height;
  const index = ([x, y]) => {
    if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= width ||
        y >= height) {
      throw new RangeError(`cell [${x}, ${y}] is off the ${width} x ${height} board`);
    }
    return y * width + x;
  };
  const mine = new Uint8Array(n);
  const fog = new Uint8Array(n);
  for (const xy of data.mines) mine[index(xy)] = 1;
  for (const xy of data.fog) fog[index(xy)] = 1;
  const nb = [];
  const num = new Int8Array(n);
  for (let c = 0; c < n; c++) {
    const x = c % width;
    const y = (c - x) / width;
    const list = [];
    for (let j = 0; j < 8; j++) {
      const xx = x + DX8[j];
      const yy = y + DY8[j];
      if (xx >= 0 && yy >= 0 && xx < width && yy < height) list.push(yy * width + xx);
    }
    nb.push(Int32Array.from(list));
    num[c] = list.reduce((s, v) => s + mine[v], 0);
  }
  let mineCount = 0;
  for (let c = 0; c < n; c++) {
    mineCount += mine[c];
    if (fog[c] && (mine[c] || num[c] === 0)) {
      throw new RangeError(`fog cell ${c} is a mine or a 0 (A4: fog is safe and numbered)`);
    }
  }
  const solver = data.solver ?? {};
  return Object.freeze({
    width, height, n, mine, fog, num, nb, mineCount, safeCount: n - mineCount,
    opening: Int32Array.from(data.opening.map(index)),
    spawn: data.spawn ? index(data.spawn) : -1,
    f1Tier: solver.f1_tier ?? 2,
    enumCap: solver.enum_cap ?? 24,
    index,
  });
}

/** The zero-flood closure of `starts` (flat cells): each reached non-fog 0-cell adds its
 * 8 neighbours (SPEC §4 stage 2 closure; §5 operator 1). Returns a Uint8Array mask. */
export function zeroClosure(board, starts) {
  const seen = new Uint8Array(board.n);
  const stack = [];
  for (const c of starts) {
    if (!seen[c]) {
      seen[c] = 1;
      stack.push(c);
    }
  }
  while (stack.length) {
    const c = stack.pop();
    if (board.mine[c] || board.fog[c] || board.num[c] !== 0) continue;
    for (const v of board.nb[c]) {
      if (!seen[v]) {
        seen[v] = 1;
        stack.push(v);
      }
    }
  }
  return seen;
}

/** A new game: R0 open, no flags, playing. */
export function newGame(board) {
  const revealed = new Uint8Array(board.n);
  for (const c of board.opening) revealed[c] = 1;
  let openCount = 0;
  for (let c = 0; c < board.n; c++) openCount += revealed[c];
  const game = {
    board, revealed, flagged: new Uint8Array(board.n), status: Status.PLAYING,
    exploded: -1, openCount,
  };
  if (openCount === board.safeCount) game.status = Status.WON;
  return game;
}

/** Dig [x, y]. Returns the cells it opened, row-major ([] for a no-op: the game is over, the
 * cell is open or flagged). Digging a mine sets status LOST and `exploded`. */
export function reveal(game, x, y) {
  const b = game.board;
  const c = b.index([x, y]);
  if (game.status !== Status.PLAYING || game.revealed[c] || game.flagged[c]) return [];
  if (b.mine[c]) {
    game.status = Status.LOST;
    game.exploded = c;
    return [];
  }
  const reach = zeroClosure(b, [c]);
  const opened = [];
  for (let v = 0; v < b.n; v++) {
    if (reach[v] && !game.revealed[v]) {
      game.revealed[v] = 1;
      game.flagged[v] = 0;
      opened.push(v);
    }
  }
  game.openCount += opened.length;
  if (game.openCount === b.safeCount) game.status = Status.WON;
  return rowMajor(b, opened);
}

/** Flag or unflag a closed non-fog cell while playing; returns whether it is flagged. */
export function toggleFlag(game, x, y) {
  const b = game.board;
  const c = b.index([x, y]);
  if (game.status === Status.PLAYING && !game.revealed[c] && !b.fog[c]) {
    game.flagged[c] ^= 1;
  }
  return game.flagged[c] === 1;
}

/** What the player sees at [x, y]: 'closed', 'flag', 'fog' (closed fog: known safe),
 * 'fog-open' (open, number hidden), 'open' (its number is board.num), and once the game
 * is lost 'mine', 'exploded' and 'wrong-flag'. A won game shows its mines as 'flag'. */
export function cellView(game, x, y) {
  const b = game.board;
  const c = b.index([x, y]);
  if (game.revealed[c]) return b.fog[c] ? 'fog-open' : 'open';
  if (game.status === Status.LOST) {
    if (c === game.exploded) return 'exploded';
    if (b.mine[c]) return game.flagged[c] ? 'flag' : 'mine';
    if (game.flagged[c]) return 'wrong-flag';
  }
  if (game.status === Status.WON && b.mine[c]) return 'flag';
  if (game.flagged[c]) return 'flag';
  return b.fog[c] ? 'fog' : 'closed';
}

// ------------------------------------------------------------------------ the tier solver

/** The tier solver's state from the open cells `revealed` (a Uint8Array mask): `opened` /
 * `known` hold 1 + the tier whose closure opened / marked the cell (0: neither). The true
 * layout is read only through numbers of open cells and the mine count (tier 3). */
function solveTiers(b, revealed) {
  const { n, nb, fog, num } = b;
  const opened = new Int8Array(n);
  const known = new Int8Array(n);
  let nOpen = 0;
  let nKnown = 0;
  const pending = [];
  for (let c = 0; c < n; c++) {
    if (revealed[c]) {
      if (b.mine[c]) throw new RangeError(`cell ${c} is open and a mine`);
      opened[c] = 1;
      nOpen += 1;
      pending.push(c);
    }
  }
  // tier 0 from the pending cells: cascade from open non-fog 0-cells, fog next to R opens
  const flood = (mark) => {
    while (pending.length) {
      const c = pending.pop();
      const zero = !fog[c] && num[c] === 0;
      for (const v of nb[c]) {
        if (!opened[v] && (zero || fog[v])) {
          opened[v] = mark;
          nOpen += 1;
          pending.push(v);
        }
      }
    }
  };
  // opens `safe`, marks `mines` (new ones only), closes tier 0; returns how many were new
  const apply = (safe, mines, mark) => {
    let fresh = 0;
    for (const c of safe) {
      if (opened[c]) continue;
      if (b.mine[c]) throw new Error(`the solver opened a mine at ${c} (unsound)`);
      opened[c] = mark;
      nOpen += 1;
      pending.push(c);
      fresh += 1;
    }
    for (const c of mines) {
      if (known[c]) continue;
      if (!b.mine[c]) throw new Error(`the solver marked safe cell ${c} a mine (unsound)`);
      known[c] = mark;
      nKnown += 1;
      fresh += 1;
    }
    flood(mark);
    return fresh;
  };
  // constraints of the snapshot: open non-fog cells x with U(x) (closed, not fog, not in K)
  // non-empty and r(x) = number - |N8(x) in K|
  const constraints = () => {
    const out = [];
    for (let c = 0; c < n; c++) {
      if (!opened[c] || fog[c]) continue;
      const u = [];
      let r = num[c];
      for (const v of nb[c]) {
        if (known[v]) r -= 1;
        else if (!opened[v] && !fog[v]) u.push(v);
      }
      if (r < 0 || r > u.length) throw new Error(`inconsistent number at cell ${c}`);
      if (u.length) out.push({ c, u, r });
    }
    return out;
  };
  const single = () => {
    const safe = [];
    const mines = [];
    for (const { u, r } of constraints()) {
      if (r === 0) safe.push(...u);
      else if (r === u.length) mines.push(...u);
    }
    return [safe, mines];
  };
  const subset = () => {
    const safe = [];
    const mines = [];
    const facts = constraints();
    const at = new Map(facts.map((f) => [f.c, f]));
    for (const fx of facts) {
      const x0 = fx.c % b.width;
      const y0 = (fx.c - x0) / b.width;
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) {
          const xx = x0 + dx;
          const yy = y0 + dy;
          if ((dx === 0 && dy === 0) || xx < 0 || yy < 0 || xx >= b.width || yy >= b.height) {
            continue;
          }
          const fy = at.get(yy * b.width + xx);
          if (!fy || fy.u.length <= fx.u.length || !fx.u.every((v) => fy.u.includes(v))) {
            continue; // U(x) must be a proper subset of U(y)
          }
          const d = fy.u.filter((v) => !fx.u.includes(v));
          const dm = fy.r - fx.r;
          if (dm < 0 || dm > d.length) throw new Error(`inconsistent pair ${fx.c}, ${fy.c}`);
          if (dm === 0) safe.push(...d);
          else if (dm === d.length) mines.push(...d);
        }
      }
    }
    return [safe, mines];
  };
  const globalCount = () => {
    const all = [];
    for (let c = 0; c < n; c++) if (!opened[c] && !known[c] && !fog[c]) all.push(c);
    const r = b.mineCount - nKnown;
    if (r < 0 || r > all.length) throw new Error('inconsistent mine count');
    if (all.length && r === 0) return [all, []];
    if (all.length && r === all.length) return [[], all];
    return [[], []];
  };
  const enumerate = () => {
    const safe = [];
    const mines = [];
    const facts = constraints();
    const parent = new Map(); // union-find over frontier cells, joined by shared facts
    const find = (v) => {
      while (parent.get(v) !== v) v = parent.get(v);
      return v;
    };
    for (const { u } of facts) {
      for (const v of u) if (!parent.has(v)) parent.set(v, v);
      for (const v of u.slice(1)) parent.set(find(v), find(u[0]));
    }
    const groups = new Map(); // root -> { cells, facts }
    for (const v of parent.keys()) {
      const root = find(v);
      if (!groups.has(root)) groups.set(root, { cells: [], facts: [] });
      groups.get(root).cells.push(v);
    }
    for (const f of facts) groups.get(find(f.u[0])).facts.push(f);
    for (const { cells, facts: on } of groups.values()) {
      if (cells.length > b.enumCap) continue; // left alone (tier4_capped_cells)
      const [s, m] = enumerateComponent(cells, on);
      safe.push(...s);
      mines.push(...m);
    }
    return [safe, mines];
  };
  const passes = [null, single, subset, globalCount, enumerate];
  const closeBelow = (t, mark) => {
    flood(mark);
    for (;;) {
      let fresh = 0;
      for (let rule = 1; rule < t; rule++) fresh += apply(...passes[rule](), mark);
      if (fresh === 0) return;
    }
  };
  for (let t = 0; t < TIER_NAMES.length; t++) {
    const mark = t + 1;
    for (;;) {
      closeBelow(t, mark);
      if (t === 0) break;
      if (apply(...passes[t](), mark) === 0) break;
    }
    if (nOpen === b.safeCount && t >= b.f1Tier) break; // higher tiers could only mark mines
  }
  return { opened, known };
}

/** Tier 4 on one frontier component: [safe, mines], the cells safe (a mine) in every
 * assignment meeting all its facts. Depth-first, pruning a fact once its count exceeds r
 * or can no longer reach it. */
function enumerateComponent(cells, facts) {
  const k = cells.length;
  const slot = new Map(cells.map((v, i) => [v, i]));
  const touch = cells.map(() => []);
  const cnt = facts.map(() => 0);
  const left = facts.map((f) => f.u.length);
  facts.forEach((f, q) => f.u.forEach((v) => touch[slot.get(v)].push(q)));
  const seenSafe = new Uint8Array(k);
  const seenMine = new Uint8Array(k);
  const val = new Uint8Array(k);
  let solutions = 0;
  let both = 0;
  const ok = (i) => touch[i].every((q) => cnt[q] <= facts[q].r && cnt[q] + left[q] >= facts[q].r);
  const step = (i) => {
    if (both === k) return; // every cell can be either: nothing left to learn
    if (i === k) {
      solutions += 1;
      for (let p = 0; p < k; p++) {
        const was = seenSafe[p] && seenMine[p];
        if (val[p]) seenMine[p] = 1;
        else seenSafe[p] = 1;
        if (!was && seenSafe[p] && seenMine[p]) both += 1;
      }
      return;
    }
    for (const v of [0, 1]) {
      val[i] = v;
      for (const q of touch[i]) {
        left[q] -= 1;
        cnt[q] += v;
      }
      if (ok(i)) step(i + 1);
      for (const q of touch[i]) {
        left[q] += 1;
        cnt[q] -= v;
      }
    }
  };
  step(0);
  if (solutions === 0) throw new Error('inconsistent frontier component');
  const safe = cells.filter((_, p) => !seenMine[p]);
  const mines = cells.filter((_, p) => !seenSafe[p]);
  return [safe, mines];
}

/** The hint for the open cells `revealed` (a game's `revealed` mask): `safe` = closed safe
 * cells the solver opens, `mines` = mines it marks, both [x, y, tier] row-major; `byTier`
 * = safe cells per tier; `cleared` = no safe cell is closed; `guessForced` = not cleared
 * and no tier opens a closed cell. */
export function hint(board, revealed) {
  const { opened, known } = solveTiers(board, revealed);
  const safe = [];
  const mines = [];
  let closedSafe = board.safeCount;
  for (let c = 0; c < board.n; c++) {
    if (revealed[c]) closedSafe -= 1;
    else if (opened[c]) safe.push(c);
    if (known[c]) mines.push(c);
  }
  const byTier = TIER_NAMES.map(() => 0);
  for (const c of safe) byTier[opened[c] - 1] += 1;
  return {
    safe: rowMajor(board, safe, (c) => opened[c] - 1),
    mines: rowMajor(board, mines, (c) => known[c] - 1),
    byTier,
    cleared: closedSafe === 0,
    guessForced: closedSafe > 0 && safe.length === 0,
  };
}
