// What runtime/tilegen.js refuses: seeds, audit board indices and dates tilegen (Python)
// refuses, with tilegen's very messages (refused-inputs.json, which tests/test_tilegen_js.py
// holds Python to), and the values only JavaScript can get wrong (a Number past 2^53 - 1,
// a string). The boundary values tilegen takes are taken; the boards Python makes of them
// are rebuilt when TILEGEN_JS_BOUNDARY names them (tests/test_tilegen_js.py sets it).

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  Close, dailyBoard, dailySeed, deriveAt, fnv1a64, generateBoard, generateRow, indexValue,
  parseDate, Pcg32, resolveBoard, seedValue,
} from '../tilegen.js';
import { splitmix64 } from '../rng.js';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));
const REFUSED = readJson(here('./refused-inputs.json')).refused;
const TABLES = readJson(here('../../tests/golden/tilegen-rows.json')); // no daily: null
const ROW = TABLES.rows.find((r) => r.key === 'beijing:1:1');
const ALL = Close.SEARCH | Close.DIAGNOSE;

/** `fn()` throws an error of class `type` whose message is exactly `message`. */
function refuses(fn, type, message, where) {
  assert.throws(fn, (e) => {
    assert.equal(e.constructor, type, `${where}: ${e.constructor.name}: ${e.message}`);
    assert.equal(e.message, message, where);
    return true;
  });
}

/** The JS value of a refused-inputs.json entry. */
const valueOf = (e) => (e.js === 'bigint' ? BigInt(e.text) : e.js === 'number'
  ? Number(e.text) : e.text);

test('refused-inputs.json: every entry is refused by every entry point, with tilegen\'s message',
  () => {
    const seen = new Set();
    for (const e of REFUSED) {
      const v = valueOf(e);
      const where = `${e.what} ${e.js ?? ''} ${JSON.stringify(e.text)}`;
      if (e.js === 'number') assert.equal(String(v), e.text, `${where}: written as JS writes it`);
      // a wrong integer is a range error; a non-integer or a non-date a type or range error
      const type = e.message.startsWith('not an integer') ? TypeError : RangeError;
      seen.add(e.what);
      if (e.what === 'seed') {
        refuses(() => seedValue(v), type, e.message, where);
        refuses(() => resolveBoard(ROW, { seed: v }), type, e.message, where);
        refuses(() => generateBoard('beijing', 1, { seed: v }, TABLES), type, e.message, where);
        refuses(() => generateRow(ROW, v, null, ALL), type, e.message, where);
      } else if (e.what === 'index') {
        refuses(() => indexValue(v), type, e.message, where);
        refuses(() => resolveBoard(ROW, { index: v }), type, e.message, where);
        refuses(() => generateBoard('beijing', 1, { index: v }, TABLES), type, e.message, where);
        refuses(() => generateRow(ROW, 1n, v, ALL), type, e.message, where);
      } else {
        // before the tables are read (tilegen's board_of too): these tables have no daily
        refuses(() => dailyBoard('beijing', v, TABLES), RangeError, e.message, where);
        if (e.message.startsWith('--daily ')) { // parse_date's (not the TEXT domain's)
          refuses(() => parseDate(v, '--daily'), RangeError, e.message, where);
          // parse_date's own name for the value: `date`
          const plain = e.message.replace(/^--daily /, 'date ');
          refuses(() => parseDate(v), RangeError, plain, where);
          refuses(() => dailySeed(v, 'beijing'), RangeError, plain, where);
        }
      }
    }
    assert.deepEqual([...seen].sort(), ['date', 'index', 'seed']);
  });

test('the issue\'s cases: 2^53 as an index, 2^64 and -1 as seeds, impossible dates', () => {
  const unsafe = (n, what) => `not a safe integer: ${n} (a Number past 2^53 - 1 may be another `
    + `integer rounded; give ${what} as a BigInt)`;
  refuses(() => generateBoard('beijing', 1, { index: 2 ** 53 }, TABLES), TypeError,
    unsafe(2 ** 53, 'the index'), 'index 2^53 as a Number');
  refuses(() => generateBoard('beijing', 1, { index: 2 ** 53 + 2 }, TABLES), TypeError,
    unsafe(2 ** 53 + 2, 'the index'), 'index 2^53 + 2 as a Number');
  refuses(() => generateBoard('beijing', 1, { seed: 2n ** 64n }, TABLES), RangeError,
    'must be in [0, 2^64), got 18446744073709551616', 'seed 2^64');
  refuses(() => generateBoard('beijing', 1, { seed: 2 ** 64 }, TABLES), TypeError,
    unsafe(2 ** 64, 'the seed'), 'seed 2^64 as a Number');
  refuses(() => generateBoard('beijing', 1, { seed: -1n }, TABLES), RangeError,
    'must be in [0, 2^64), got -1', 'seed -1');
  for (const date of ['2026-02-30', '2026-13-01', '0000-00-00']) {
    assert.throws(() => dailyBoard('beijing', date, TABLES), RangeError, date);
  }
});

test('JavaScript-only refusals: unsafe Numbers, strings and other types; seed with index', () => {
  const unsafe = (n, what) => `not a safe integer: ${n} (a Number past 2^53 - 1 may be another `
    + `integer rounded; give ${what} as a BigInt)`;
  for (const n of [2 ** 53, -(2 ** 53), 2 ** 63, 2 ** 64, 1e21, -1e300]) {
    refuses(() => seedValue(n), TypeError, unsafe(n, 'the seed'), `seed ${n}`);
    refuses(() => indexValue(n), TypeError, unsafe(n, 'the index'), `index ${n}`);
  }
  for (const [v, shown] of [[true, 'boolean'], [{}, 'object'], [[1], 'object'],
    [Symbol('s'), 'symbol']]) {
    refuses(() => resolveBoard(ROW, { seed: v }), TypeError,
      `the seed must be a BigInt, a safe integer Number or a string, got ${shown}`,
      `seed ${shown}`);
    refuses(() => resolveBoard(ROW, { index: v }), TypeError,
      `the index must be a BigInt, a safe integer Number or a string, got ${shown}`,
      `index ${shown}`);
  }
  for (const [v, shown] of [[null, 'null'], [undefined, 'undefined']]) {
    refuses(() => dailyBoard('beijing', v, TABLES), TypeError,
      `--daily ${shown}: write the date as YYYY-MM-DD, e.g. 2026-01-01`, `date ${shown}`);
  }
  // a string is read as the command line reads its text (tests/test_tilegen_js.py walks
  // the rest against tilegen itself)
  assert.equal(resolveBoard(ROW, { seed: '12' }).seed, 12n);
  assert.equal(resolveBoard(ROW, { seed: '0x10' }).seed, 16n);
  assert.equal(resolveBoard(ROW, { index: ' 7 ' }).index, 7);
  refuses(() => resolveBoard(ROW, { index: '0x10' }), TypeError, "not an integer: '0x10'",
    'index 0x10');
  refuses(() => dailyBoard('beijing', 20260101, TABLES), RangeError,
    "--daily '20260101': write the date as YYYY-MM-DD, e.g. 2026-01-01", 'date 20260101');
  refuses(() => generateBoard('beijing', 1, { revision: 0 }, TABLES), RangeError,
    "must be an integer in [1, 2147483647]; got '0'", 'revision 0');
  refuses(() => resolveBoard(ROW, { seed: 1n, index: 1 }), Error,
    'give a seed or an index, not both', 'seed and index');
  // the stream primitives take what Python's take (ints, mod 2^64), but no rounded Number
  refuses(() => deriveAt('tilegen:beijing:1:1', 2 ** 53), TypeError, unsafe(2 ** 53, 'the index'),
    'deriveAt');
  refuses(() => new Pcg32(2 ** 60, 1n), TypeError, unsafe(2 ** 60, 'initstate'), 'Pcg32 state');
  refuses(() => new Pcg32(1n, 2.5), TypeError, "not an integer: '2.5'", 'Pcg32 sequence');
  refuses(() => splitmix64('1'), TypeError, "x must be a BigInt or a safe integer Number, got "
    + "string '1'", 'splitmix64');
});

test('the boundary values tilegen takes are taken, a Number and a BigInt alike', () => {
  const key = `tilegen:${ROW.key}`;
  const production = { seed: fnv1a64(ROW.key), index: -1, closing: ALL };
  assert.deepEqual(resolveBoard(ROW, {}), production);
  assert.deepEqual(resolveBoard(ROW, { index: -1n }), production);
  assert.deepEqual(resolveBoard(ROW, { seed: null, index: null }), production);
  assert.deepEqual(resolveBoard(ROW, { index: 7n }), resolveBoard(ROW, { index: 7 }));
  assert.deepEqual(resolveBoard(ROW, { index: 32n }), { seed: deriveAt(key, 32), index: 32,
    closing: ALL }); // a multiple of diagnoseEvery (16): diagnosed, as batch.closing_of
  const safe = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(resolveBoard(ROW, { index: safe }), { seed: deriveAt(key, BigInt(safe)),
    index: safe, closing: Close.SEARCH });
  for (const i of [2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 2n]) { // kept a BigInt: exact
    assert.deepEqual(resolveBoard(ROW, { index: i }), { seed: deriveAt(key, i), index: i,
      closing: i % 16n === 0n ? ALL : Close.SEARCH }, `index ${i}`);
  }
  assert.notEqual(deriveAt(key, 2n ** 53n + 1n), deriveAt(key, 2n ** 53n));
  for (const s of [0, 0n, 2n ** 64n - 1n, Number.MAX_SAFE_INTEGER]) {
    assert.deepEqual(resolveBoard(ROW, { seed: s }), { seed: BigInt(s), index: null,
      closing: ALL }, `seed ${s}`);
  }
  for (const d of ['2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31', '2026-12-31']) {
    assert.equal(parseDate(d, '--daily'), d);
    assert.equal(dailySeed(d, 'beijing'), fnv1a64(`${d}:daily:beijing`));
  }
  const r = generateBoard('beijing', 1, { index: 2n ** 63n - 2n }, TABLES);
  assert.equal(r.record.seed_index, 2n ** 63n - 2n);
  assert.equal(r.record.is_production, false);
  assert.equal(r.board.seed, String(deriveAt(key, 2n ** 63n - 2n)));
});

const boundaryPath = process.env.TILEGEN_JS_BOUNDARY;
const rowsPath = process.env.TILEGEN_JS_ROWS;

test('boundary boards made by Python: the same BoardState and record in JS', {
  skip: boundaryPath && rowsPath ? false : 'TILEGEN_JS_BOUNDARY / TILEGEN_JS_ROWS are not set',
}, () => {
  const tables = readJson(rowsPath);
  const boards = readJson(boundaryPath);
  assert.ok(boards.length > 0);
  for (const b of boards) {
    const where = JSON.stringify(b.which);
    const v = b.which.text === undefined ? undefined : valueOf(b.which);
    const r = b.which.what === 'date' ? dailyBoard(b.city, v, tables)
      : generateBoard(b.city, b.level, { [b.which.what]: v }, tables);
    assert.deepEqual(r.board, b.boardState, `${where}: BoardState`);
    const want = b.record; // seed_index and stream_seed written as decimal text (exact)
    assert.deepEqual(Object.keys(r.record).sort(), Object.keys(want).sort(), where);
    for (const k of Object.keys(want)) {
      const got = k === 'seed_index' || k === 'stream_seed' ? r.record[k] === null ? null
        : String(r.record[k]) : r.record[k];
      assert.equal(got, want[k], `${where}: ${k}`);
    }
    if (typeof r.record.seed_index === 'number') {
      assert.ok(Number.isSafeInteger(r.record.seed_index), `${where}: a safe Number`);
    }
  }
});
