// Layout of one tile-match board (docs/tile-draw-protocol.md §4-§5; docs/tilegen.md,
// "Layout space" and "Overlap"): element selection, the draws of one attempt, the
// overlap graph with depths, the layout checks V1-V5 and the board invariants. A port of
// tilegen/_kernels/layout.py, draw for draw; the node test holds both equal.
//
// A board is a struct of arrays over pieces in piece order (layer ascending, then deal
// order): elem (selection index), layer (1 = bottom), ac / ar (anchor column, row), x, y,
// rot, depth. The graph is `occ`: occ.lo[p] / occ.hi[p] hold bit q (q < 32 / q - 32) iff
// piece q occludes piece p; `occList[p]` lists the occluders, `covList[p]` the pieces p
// occludes (ascending).

export const CATEGORY_COUNT = 5; // landmark, food, culture, item, nature (pass 1 order)
export const BP = 10000;
const OVERLAP_NUM = 1; // 05 §6.2: overlap >= 1/5 of the lower piece's box
const OVERLAP_DEN = 5;

export const Reason = Object.freeze({
  NONE: 0, CLICKABLE_RATIO: 1, TRIPLE_CHAINS: 2, DIRECT_TRIPLE: 3, NEAR_SURFACE: 4,
  SAME_LAYER_CLUSTER: 5, TOOL_FREE_LOW: 6, TOOL_FREE_HIGH: 7, TOOL_ASSIST_LOW: 8,
});

export const Defect = Object.freeze({
  NONE: 0, LAYER_COUNTS: 1, TWO_ON_ONE_ANCHOR: 2, BOX_OUTSIDE_GRID: 3, BOX_ON_LANE: 4,
  EDGE_NOT_DOWNWARD: 5, TURNS_NOT_T: 6, LITERAL_OPENING_FAIL: 7, SLOT_OVERFLOW: 8,
  CATEGORY_COVERAGE: 9, ELEMENT_COUNTS: 10, REPLAY_DIFFERS: 11,
});

// ----------------------------------------------------------------------------- selection

function pick(stream, cats, weights, cat, chosen) {
  let count = 0;
  let total = 0;
  let only = -1;
  for (let i = 0; i < cats.length; i++) {
    if ((cat < 0 || cats[i] === cat) && !chosen.includes(i)) {
      count++;
      total += weights[i];
      only = i;
    }
  }
  if (count === 0) return -1;
  if (count > 1) {
    const r = stream.bounded(total);
    let acc = 0;
    for (let i = 0; i < cats.length; i++) {
      if ((cat < 0 || cats[i] === cat) && !chosen.includes(i)) {
        acc += weights[i];
        if (acc > r) {
          only = i;
          break;
        }
      }
    }
  }
  chosen.push(only);
  return only;
}

/** Protocol §4: city element indices in selection order (pass 1 by category, pass 2). */
export function selectElements(stream, cats, weights, E) {
  const chosen = [];
  for (let cat = 0; cat < CATEGORY_COUNT; cat++) {
    if (chosen.length < E) pick(stream, cats, weights, cat, chosen);
  }
  while (chosen.length < E) {
    if (pick(stream, cats, weights, -1, chosen) < 0) break;
  }
  return chosen;
}

/** 05 §9.2: when E >= the non-empty categories, every one of them is represented. */
export function coversCategories(sel, cats, E) {
  const present = new Set(cats);
  if (E < present.size) return true;
  const got = new Set(sel.slice(0, E).map((i) => cats[i]));
  for (const c of present) if (!got.has(c)) return false;
  return true;
}

// ----------------------------------------------------------------------------- draws

/** Protocol §5: one attempt's draws; returns the board (struct of arrays). */
export function drawLayout(stream, row) {
  const { prm, ppe, layerCounts, anchors } = row;
  const T = prm.T;
  const J = prm.JITTER;
  const R = prm.ROT_MAX;
  const pitch = prm.PITCH;
  const pool = [];
  for (let i = 0; i < ppe.length; i++) for (let k = 0; k < ppe[i]; k++) pool.push(i);
  for (let j = 0; j < T - 1; j++) {
    const t = j + stream.bounded(T - j);
    const e = pool[j];
    pool[j] = pool[t];
    pool[t] = e;
  }
  const b = emptyBoard(T);
  let p = 0;
  for (let l = 0; l < layerCounts.length; l++) {
    const n = layerCounts[l];
    const A = anchors.map((_, i) => i); // a fresh row-major list for every layer
    for (let j = 0; j < n; j++) {
      const t = j + stream.bounded(A.length - j);
      const a = A[j];
      A[j] = A[t];
      A[t] = a;
    }
    for (let j = 0; j < n; j++, p++) {
      const [c, r] = anchors[A[j]];
      const dx = stream.bounded(2 * J + 1) - J;
      const dy = stream.bounded(2 * J + 1) - J;
      const rot = stream.bounded(2 * R + 1) - R;
      b.elem[p] = pool[p];
      b.layer[p] = l + 1;
      b.ac[p] = c;
      b.ar[p] = r;
      b.x[p] = J + c * pitch + dx;
      b.y[p] = J + r * pitch + dy;
      b.rot[p] = rot;
    }
  }
  return b;
}

export function emptyBoard(T) {
  const a = () => new Int32Array(T);
  return { T, elem: a(), layer: a(), ac: a(), ar: a(), x: a(), y: a(), rot: a(), depth: a(),
    occ: { lo: new Uint32Array(T), hi: new Uint32Array(T) }, occList: [], covList: [] };
}

// ----------------------------------------------------------------------------- graph

/** 05 §6.2 for equal square boxes, layers aside (layout.occludes). */
export function occludes(ax, ay, bx, by, size) {
  const x0 = Math.max(ax, bx);
  const x1 = Math.min(ax, bx) + size;
  const y0 = Math.max(ay, by);
  const y1 = Math.min(ay, by) + size;
  if (x1 <= x0 || y1 <= y0) return false;
  if (OVERLAP_DEN * (x1 - x0) * (y1 - y0) < OVERLAP_NUM * size * size) return false;
  const q1 = Math.floor(size / 4);
  const q3 = Math.floor((3 * size) / 4);
  return Math.min(x1, bx + q3) > Math.max(x0, bx + q1)
    && Math.min(y1, by + q3) > Math.max(y0, by + q1);
}

/** The overlap graph and the depths (layout.build_graph); returns the edge count. */
export function buildGraph(b, size) {
  const T = b.T;
  let edges = 0;
  b.occList = [];
  b.covList = Array.from({ length: T }, () => []);
  for (let p = 0; p < T; p++) {
    const list = [];
    for (let q = 0; q < T; q++) {
      if (b.layer[q] > b.layer[p] && occludes(b.x[q], b.y[q], b.x[p], b.y[p], size)) {
        list.push(q);
        b.covList[q].push(p);
        edges++;
      }
    }
    b.occList.push(list);
    b.occ.lo[p] = 0;
    b.occ.hi[p] = 0;
    for (const q of list) {
      if (q < 32) b.occ.lo[p] |= 1 << q;
      else b.occ.hi[p] |= 1 << (q - 32);
    }
  }
  const order = [...Array(T).keys()].sort((p, q) => b.layer[q] - b.layer[p] || p - q);
  for (const p of order) { // occluders sit on strictly higher layers: top layer first
    let d = 0;
    for (const q of b.occList[p]) d = Math.max(d, b.depth[q] + 1);
    b.depth[p] = d;
  }
  return edges;
}

// ----------------------------------------------------------------------------- checks

function closureSize(b, pieces) {
  const K = new Set();
  let grown = true;
  while (grown) {
    grown = false;
    for (const p of pieces) {
      if (!K.has(p) && b.occList[p].every((q) => K.has(q))) {
        K.add(p);
        grown = true;
      }
    }
  }
  return K.size;
}

function largestGroup(b, pieces) {
  let best = 0;
  const rest = [...pieces];
  while (rest.length) {
    const comp = [rest.shift()];
    for (let i = 0; i < comp.length; i++) {
      const p = comp[i];
      for (let k = rest.length - 1; k >= 0; k--) {
        const q = rest[k];
        if (Math.abs(b.ac[p] - b.ac[q]) <= 1 && Math.abs(b.ar[p] - b.ar[q]) <= 1) {
          comp.push(q);
          rest.splice(k, 1);
        }
      }
    }
    best = Math.max(best, comp.length);
  }
  return best;
}

/** 05 §10.2, §11.2 (layout.layout_checks): the check vector of a drawn board. */
export function layoutChecks(b, prm) {
  const T = b.T;
  const E = prm.E;
  let clickable = 0;
  let edges = 0;
  let maxDepth = 0;
  for (let p = 0; p < T; p++) {
    if (b.occList[p].length === 0) clickable++;
    edges += b.occList[p].length;
    maxDepth = Math.max(maxDepth, b.depth[p]);
  }
  let chains = 0;
  let direct = 0;
  let nearOk = 1;
  let clusterOk = 1;
  for (let e = 0; e < E; e++) {
    const mine = [];
    for (let p = 0; p < T; p++) if (b.elem[p] === e) mine.push(p);
    if (closureSize(b, mine) >= 3) chains++;
    if (mine.filter((p) => b.occList[p].length === 0).length >= 3) direct++;
    if (!mine.some((p) => b.depth[p] <= prm.NEAR_DEPTH)) nearOk = 0;
    for (const layer of new Set(mine.map((p) => b.layer[p]))) {
      const same = mine.filter((p) => b.layer[p] === layer);
      if (same.length >= prm.CLUSTER_SIZE && largestGroup(b, same) >= prm.CLUSTER_SIZE) {
        clusterOk = 0;
      }
    }
  }
  const ok = [
    BP * clickable >= prm.CLICK_MIN * T ? 1 : 0,
    chains >= 2 ? 1 : 0,
    prm.LEVEL_ID !== 1 || direct >= 1 ? 1 : 0,
    nearOk,
    clusterOk,
  ];
  const fails = ok.filter((v) => v === 0).length;
  const firstFail = fails ? ok.indexOf(0) + 1 : Reason.NONE; // Reason 1..5 = V1..V5
  return { clickable, chains, direct, maxDepth, edges, ok, fails, firstFail };
}

/** Decision 123 (layout.layout_defect): the first violated board invariant, else 0. */
export function layoutDefect(b, prm, layerCounts, laneXs) {
  const T = b.T;
  const s = prm.PIECE;
  let total = 0;
  for (let l = 1; l <= layerCounts.length; l++) {
    let n = 0;
    for (let p = 0; p < T; p++) if (b.layer[p] === l) n++;
    if (n !== layerCounts[l - 1]) return Defect.LAYER_COUNTS;
    total += n;
  }
  if (total !== T || layerCounts.length !== prm.L) return Defect.LAYER_COUNTS;
  for (let p = 0; p < T; p++) {
    for (let q = p + 1; q < T; q++) {
      if (b.layer[p] === b.layer[q] && b.ac[p] === b.ac[q] && b.ar[p] === b.ar[q]) {
        return Defect.TWO_ON_ONE_ANCHOR;
      }
    }
  }
  for (let p = 0; p < T; p++) {
    if (b.x[p] < 0 || b.y[p] < 0 || b.x[p] + s > prm.GRID_W || b.y[p] + s > prm.GRID_H) {
      return Defect.BOX_OUTSIDE_GRID;
    }
  }
  const ly = prm.LANE_Y;
  for (let p = 0; p < T; p++) {
    for (const lx of laneXs) {
      if (Math.min(b.x[p], lx) + s > Math.max(b.x[p], lx)
        && Math.min(b.y[p], ly) + s > Math.max(b.y[p], ly)) return Defect.BOX_ON_LANE;
    }
  }
  for (let p = 0; p < T; p++) {
    for (const q of b.occList[p]) if (b.layer[q] <= b.layer[p]) return Defect.EDGE_NOT_DOWNWARD;
  }
  return Defect.NONE;
}
