// runtime/tilegen.js held equal to tilegen (Python), field for field, with node's own test
// runner: `node --test runtime/test/`. The golden boards (tests/golden/tilegen.json, from
// the frozen tables whose rows tests/golden/tilegen-rows.json exports) always run; the
// fresh sample that tests/test_tilegen_js.py generates runs when TILEGEN_JS_SAMPLE names
// it (that test fails when this one skips).

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  classifyDeadlock, dailyBoard, dailySeed, deriveAt, fnv1a64, Game, generateBoard, generateRow,
  Pcg32, resolveBoard,
} from '../tilegen.js';
import { buildGraph } from '../tile/layout.js';
import { leastTools } from '../tile/rescue.js';

const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

/** sha256 of the canonical JSON (keys sorted, no spaces): the protocol's digests (§7). */
function digest(obj) {
  const canon = (v) => {
    if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
    if (v && typeof v === 'object') {
      return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return createHash('sha256').update(canon(obj)).digest('hex');
}

/** Every record field equal (null for null), and no field more or less. */
function assertRecord(got, want, where) {
  const wantKeys = Object.keys(want).filter((k) => k !== 'gen_ms').sort();
  assert.deepEqual(Object.keys(got).sort(), wantKeys, `${where}: record fields`);
  for (const k of wantKeys) assert.equal(got[k], want[k], `${where}: ${k}`);
}

/** Play a click sequence with the runtime rules; returns the game (won or not). */
function replay(result, clicks) {
  const { board, prm } = result.kernel;
  const game = new Game(board, { slotRule: prm.SLOT_RULE, lanes: prm.N_LANES,
    budgets: [0, 0, 0] });
  for (const p of clicks) {
    assert.ok(game.legal(p), `click ${p} is legal`);
    game.click(p);
  }
  return game;
}

test('the stream primitives give the protocol reference values (§1, §7)', () => {
  const r = new Pcg32(42n, 54n);
  assert.deepEqual([r.next(), r.next(), r.next(), r.next()],
    [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293]);
  assert.equal(fnv1a64('a'), 0xaf63dc4c8601ec8cn);
  assert.equal(fnv1a64('beijing:1:1'), 14323768753098000001n);
  assert.equal(deriveAt('tilegen:beijing:1:1', 0), 11821669524437222257n);
  assert.equal(fnv1a64('2026-01-01:daily:beijing'), 11961325612859096164n);
  const layout = new Pcg32(14323768753098000001n, 1442695040888963407n);
  assert.deepEqual([layout.next(), layout.next(), layout.next()],
    [453450163, 2809558607, 709795194]);
});

test('the 64-bit step on uint32 halves equals BigInt arithmetic', () => {
  const M = (1n << 64n) - 1n;
  for (const [seed, seq] of [[0n, 0n], [M, M], [123456789n, 8n], [1n << 63n, 5n]]) {
    const fast = new Pcg32(seed, seq);
    let state = 0n;
    const inc = ((seq << 1n) | 1n) & M;
    const step = () => { state = (state * 6364136223846793005n + inc) & M; };
    step();
    state = (state + seed) & M;
    step();
    for (let i = 0; i < 200; i++) {
      const old = state;
      step();
      const x = Number((((old >> 18n) ^ old) >> 27n) & 0xffffffffn);
      const rot = Number(old >> 59n);
      const want = ((x >>> rot) | (x << ((32 - rot) & 31))) >>> 0;
      assert.equal(fast.next(), want);
      assert.equal(fast.state, state);
    }
    assert.ok([1, 2, 3, 7, 1000, 2 ** 31 + 1].every((b) => fast.bounded(b) < b));
  }
});

test('the golden boards: ids, elements, digests and every record field', () => {
  const tables = readJson(repo('tests/golden/tilegen-rows.json'));
  const gold = readJson(repo('tests/golden/tilegen.json')).boards;
  assert.equal(gold.length, 12);
  for (const g of gold) {
    const [city, level, revision] = g.row.split(':').map((x, i) => (i ? Number(x) : x));
    const r = generateBoard(city, level, { index: g.index, revision }, tables);
    const where = `${g.row} board ${g.index}`;
    assert.equal(r.board.boardId, g.board_id, where);
    assert.deepEqual(r.board.elementIds, g.element_ids, where);
    assert.equal(digest(r.board.pieces), g.piece_digest, `${where}: pieces`);
    assert.equal(digest(r.board.overlapGraph), g.graph_digest, `${where}: graph`);
    assertRecord(r.record, g.record, where);
    if (r.witness) assert.ok(replay(r, r.witness).won, `${where}: witness wins`);
  }
});

test('the graph of a moved board is rebuilt from positions (buildGraph)', () => {
  const b = { T: 2, layer: Int32Array.of(1, 2), x: Int32Array.of(0, 10), y: Int32Array.of(0, 10),
    depth: new Int32Array(2), occ: { lo: new Uint32Array(2), hi: new Uint32Array(2) } };
  assert.equal(buildGraph(b, 56), 1);
  assert.deepEqual(b.occList, [[1], []]);
  b.x[1] = 50; // overlap 6 x 46 < 1/5 of the box: no edge
  assert.equal(buildGraph(b, 56), 0);
});

const samplePath = process.env.TILEGEN_JS_SAMPLE;

test('a fresh sample from Python: every board, record and witness', {
  skip: samplePath ? false : 'TILEGEN_JS_SAMPLE is not set (tests/test_tilegen_js.py sets it)',
}, () => {
  const sample = readJson(samplePath);
  const rows = new Map(sample.rows.map((r) => [r.sampleId, r]));
  assert.ok(sample.boards.length >= 100, 'the sample is not a token one');
  const exits = new Set();
  const rules = new Set();
  for (const s of sample.boards) {
    const row = rows.get(s.sampleId);
    const which = s.which.seed !== undefined ? { seed: BigInt(s.which.seed) } : s.which;
    const { seed, index, closing } = resolveBoard(row, which);
    const r = generateRow(row, seed, index, closing);
    const where = `${s.sampleId} ${JSON.stringify(s.which)}`;
    assert.deepEqual(r.board, s.board, `${where}: BoardState`);
    assertRecord(r.record, s.record, where);
    assert.deepEqual(r.witness, s.witness, `${where}: witness`);
    if (r.witness) assert.ok(replay(r, r.witness).won, `${where}: witness wins`);
    else assert.notEqual(r.record.tool_free_solvable, 'yes', where);
    exits.add(r.exit);
    rules.add(row.slotRule);
  }
  assert.deepEqual([...exits].sort(), ['failed_gates', 'failed_layout', 'met']);
  assert.deepEqual([...rules].sort(), ['block_at_full', 'lose_on_full']);
  for (const d of sample.deadlocks) { // the class after every click of a scripted run
    const row = rows.get(d.sampleId);
    const { seed, index, closing } = resolveBoard(row, {});
    const r = generateRow(row, seed, index, closing);
    const game = new Game(r.kernel.board, { slotRule: row.prm.SLOT_RULE, lanes: row.prm.N_LANES,
      budgets: [row.prm.BUDGET_REMOVE, row.prm.BUDGET_SHUFFLE, row.prm.BUDGET_UNDO] });
    game.reset(true);
    d.clicks.forEach((p, j) => {
      game.click(p);
      assert.equal(classifyDeadlock(game, row.prm), d.classes[j], `${d.sampleId} click ${j + 1}`);
    });
  }
  for (const d of sample.deadlocks_made) { // boards that need tools: soft deadlocks too
    const T = d.elem.length;
    const covList = Array.from({ length: T }, () => []);
    d.occ.forEach((occ, p) => occ.forEach((q) => covList[q].push(p)));
    const board = { T, elem: Int32Array.from(d.elem), occList: d.occ, covList };
    const game = new Game(board, { slotRule: d.slotRule, lanes: d.lanes, budgets: [1, 1, 1] });
    game.reset(true);
    d.clicks.forEach((p, j) => {
      assert.ok(game.legal(p));
      game.click(p);
      assert.equal(classifyDeadlock(game, { DFS_CAP: d.cap }), d.classes[j],
        `${JSON.stringify(d.elem)} click ${j + 1}`);
    });
  }
  for (const c of sample.rescue) { // boards that need tools: answer and node count
    const board = { T: c.elem.length, elem: c.elem, occList: c.occ };
    const got = leastTools(board, { slotRule: c.slotRule, lanes: c.lanes }, c.cap);
    assert.deepEqual(got, { answer: c.answer, nodes: c.nodes }, JSON.stringify(c));
  }
});

const packPath = process.env.TILEGEN_JS_PACK;
const rowsPath = process.env.TILEGEN_JS_ROWS;

/** docs/tilegen-js.md, "Board pack": the keys and types a runtime may rely on. */
function checkPackSchema(pack) {
  assert.equal(pack.format, 'tilegen-board-pack');
  assert.equal(pack.version, 1);
  assert.equal(typeof pack.generatorVersion, 'string');
  assert.equal(typeof pack.metricVersion, 'number');
  assert.match(pack.tableHash, /^[0-9a-f]{64}$/);
  assert.ok(Array.isArray(pack.boards) && pack.boards.length > 0);
  for (const b of pack.boards) {
    assert.deepEqual(Object.keys(b).sort(), ['boardState', 'graphDigest', 'key', 'metrics',
      'pieceDigest', 'record', 'revision', 'seed', 'witness']);
    assert.match(b.key, /^[a-z_]+:\d+:\d+$/);
    assert.match(b.seed, /^\d+$/);
    assert.equal(b.boardState.seed, b.seed);
    assert.ok(b.witness === null || b.witness.every((id) => /^piece_\d{4}$/.test(id)));
    for (const k of ['boardId', 'cityId', 'levelId', 'revision', 'seed', 'elementIds',
      'pieces', 'overlapGraph', 'returnLanes']) assert.ok(k in b.boardState, k);
    for (const p of b.boardState.pieces) {
      assert.deepEqual(Object.keys(p).sort(), ['anchor', 'elementId', 'height', 'id', 'layer',
        'removed', 'rotation', 'width', 'x', 'y']);
    }
    assert.equal(digest(b.boardState.pieces), b.pieceDigest);
    assert.equal(digest(b.boardState.overlapGraph), b.graphDigest);
    assert.equal(typeof b.metrics.simulatedPassRate, 'number');
  }
}

test('the board pack: its schema, and every board rebuilt and its witness won in JS', {
  skip: packPath && rowsPath ? false : 'TILEGEN_JS_PACK / TILEGEN_JS_ROWS are not set',
}, () => {
  const pack = readJson(packPath);
  const tables = readJson(rowsPath);
  checkPackSchema(pack);
  assert.equal(pack.tableHash, tables.tableHash);
  for (const b of pack.boards) {
    const [city, level, revision] = b.key.split(':').map((x, i) => (i ? Number(x) : x));
    const r = generateBoard(city, level, { revision }, tables);
    assert.deepEqual(r.board, b.boardState, b.key);
    assertRecord(r.record, b.record, b.key);
    const ids = r.witness && r.witness.map((p) => r.board.pieces[p].id);
    assert.deepEqual(ids, b.witness, `${b.key}: witness`);
    if (r.witness) assert.ok(replay(r, r.witness).won, `${b.key}: witness wins`);
  }
});

const dailyPath = process.env.TILEGEN_JS_DAILY;

test('the daily seed is the design vector', () => {
  assert.equal(dailySeed('2026-01-01', 'beijing'), 11961325612859096164n);
});

test('daily boards: every one rebuilt from the exported tables, record for record', {
  skip: dailyPath && rowsPath ? false : 'TILEGEN_JS_DAILY / TILEGEN_JS_ROWS are not set',
}, () => {
  const tables = readJson(rowsPath);
  const boards = readJson(dailyPath);
  assert.ok(tables.daily && boards.length > 0);
  for (const b of boards) {
    const r = dailyBoard(b.city, b.date, tables);
    assert.equal(r.board.seed, b.seed, `${b.city} ${b.date}: seed`);
    assert.deepEqual(r.board, b.boardState, `${b.city} ${b.date}`);
    assertRecord(r.record, b.record, `${b.city} ${b.date}`);
  }
  assert.throws(() => dailyBoard('beijing', '2026-1-1', tables), /YYYY-MM-DD/);
});
