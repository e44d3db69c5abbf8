// What generateBoard and dailyBoard take (runtime/tilegen.js), checked as `tilegen
// generate` checks its command line, with the very message texts: the city as a TEXT
// value, the level and revision in tilegen/cli.py's LEVEL and REVISION domains
// (boardcore/domains.py Number), the seed and index as seed_value / index_value read them,
// the date as TEXT and then boardcore/dates.py parse_date. A string is read as the command
// line reads its text (Python's int(): surrounding spaces, a sign, `_` between digits,
// 0x / 0o / 0b for a seed); a Number or BigInt as the text String() writes of it. The
// message is the command line's one-line refusal without `tilegen: generate: argument X: `
// and ` (see ... --help)`: tests/test_tilegen_js.py walks every input with hostile values
// and compares the two. Refusing is better than a board made of another value under the
// asked one's id. Only JavaScript can give a Number past 2^53 - 1 (maybe another integer
// rounded) or a value of another type: those are refused (TypeError) in words of their own.

import { exactInteger } from '../rng.js';

export const SEED_END = 1n << 64n; // seeds are uint64: [0, 2^64)
// audit board indices are int64 (the block [i, i + 1) must fit): [-1, MAX_INDEX)
export const MAX_INDEX = (1n << 63n) - 1n;
export const LEVEL_MAX = 2 ** 31 - 1; // tilegen/cli.py LEVEL and REVISION: [1, 2^31 - 1]
// exactly YYYY-MM-DD, ASCII digits: another ISO form of the same day would change the seed
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
// what Python's str.isprintable() refuses beyond ASCII (repr escapes it)
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}]/u;
// Python's str.isspace(): what str.strip() takes for a space (int() takes the ASCII ones
// but \x1c-\x1f)
const SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
const DIGIT = /\p{Nd}/u;
const MAX_STR_DIGITS = 4300; // Python's default limit on a decimal int's digits
const DECIMAL = /^[ \t\n\v\f\r]*([+-]?)([0-9]+(?:_[0-9]+)*)[ \t\n\v\f\r]*$/;
const PREFIXED = new RegExp('^[ \\t\\n\\v\\f\\r]*([+-]?)(?:0([xob])_?([0-9a-f]+(?:_[0-9a-f]+)*)'
  + '|(0+(?:_0+)*|[1-9][0-9]*(?:_[0-9]+)*))[ \\t\\n\\v\\f\\r]*$', 'i');

/** Python's repr() of a string, for messages that quote one as tilegen's do. */
export function pyRepr(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c < 0x7f || !UNPRINTABLE.test(ch)) out += ch;
    else if (c <= 0xff) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return out + quote;
}

/** A Unicode decimal digit's value: digits come in runs of ten from a zero. */
function digitValue(ch) {
  let c = ch.codePointAt(0);
  let k = 0;
  while (DIGIT.test(String.fromCodePoint(c - 1))) { c -= 1; k += 1; }
  return k % 10;
}

/**
 * Python's int(text, base) for base 10 or 0 (0x, 0o, 0b or decimal) as a BigInt; null
 * where Python raises ValueError. As CPython: spaces and Unicode decimal digits are read
 * as their ASCII forms first, any other non-ASCII character fails.
 */
export function pyInt(text, base) {
  let s = '';
  for (const ch of text) {
    if (ch.codePointAt(0) < 0x7f) s += ch;
    else if (SPACE.test(ch)) s += ' ';
    else if (DIGIT.test(ch)) s += String(digitValue(ch));
    else s += '?';
  }
  if (base === 10) {
    const m = DECIMAL.exec(s);
    if (!m || m[2].replace(/_/g, '').length > MAX_STR_DIGITS) return null;
    return BigInt(m[1] + m[2].replace(/_/g, ''));
  }
  const m = PREFIXED.exec(s);
  if (!m) return null;
  const kind = (m[2] || '').toLowerCase();
  const digits = (m[3] ?? m[4]).replace(/_/g, '');
  if (kind === 'o' ? /[^0-7]/.test(digits) : kind === 'b' ? /[^01]/.test(digits)
    : kind === '' ? /[^0-9]/.test(digits) || digits.length > MAX_STR_DIGITS : false) {
    return null;
  }
  const v = BigInt(kind ? `0${kind}${digits}` : digits);
  return m[1] === '-' ? -v : v;
}

/** Python's str.strip(). */
function pyStrip(text) {
  const chars = [...text];
  let a = 0;
  let b = chars.length;
  while (a < b && SPACE.test(chars[a])) a += 1;
  while (b > a && SPACE.test(chars[b - 1])) b -= 1;
  return chars.slice(a, b).join('');
}

/** The text a command line would hold for `value`, or a JS-only TypeError. */
function textOf(value, what) {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  throw new TypeError(`${what} must be a string, a Number or a BigInt, got ${typeof value}`);
}

/** An integer as seed_value / index_value read one: a string as Python's int(text, base),
 * a Number only when it is a safe integer (exactInteger), a BigInt as it is. */
function integerOf(value, what, base) {
  if (typeof value !== 'string') {
    if (typeof value === 'number' || typeof value === 'bigint') return exactInteger(value, what);
    throw new TypeError(`${what} must be a BigInt, a safe integer Number or a string, got `
      + `${typeof value}`);
  }
  const v = pyInt(value, base);
  if (v === null) throw new TypeError(`not an integer: ${pyRepr(value)}`);
  return v;
}

/** A uint64 seed (tilegen/cli.py seed_value: decimal or 0x hex) as a BigInt. */
export function seedValue(seed) {
  const v = integerOf(seed, 'the seed', 0);
  if (v < 0n || v >= SEED_END) throw new RangeError(`must be in [0, 2^64), got ${v}`);
  return v;
}

/**
 * An audit board index (-1: the production board) in [-1, 2^63 - 1) (index_value).
 * Returned as a Number when it is safe, else as the BigInt (the record's `seed_index` then
 * is that BigInt: a Number would round it).
 */
export function indexValue(index) {
  const v = integerOf(index, 'the index', 10);
  if (v < -1n) throw new RangeError(`must be >= -1 (-1: the production board), got ${v}`);
  if (v >= MAX_INDEX) throw new RangeError(`must be < 2^63 - 1 (int64 board indices), got ${v}`);
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** A level or revision id in [1, 2^31 - 1] (LEVEL, REVISION: boardcore Number), a Number. */
export function levelValue(value, what = 'the level') {
  const text = textOf(value, what);
  const v = pyInt(pyStrip(text), 10); // Number.__call__: str(text).strip(), then int()
  if (v === null || v < 1n || v > BigInt(LEVEL_MAX)) {
    throw new RangeError(`must be an integer in [1, ${LEVEL_MAX}]; got ${pyRepr(text)}`);
  }
  return Number(v);
}

/** A TEXT value (boardcore/domains.py): any text but an empty or blank one. */
export function textValue(value, what) {
  const text = textOf(value, what);
  if (!pyStrip(text)) throw new RangeError('must not be empty');
  return text;
}

/**
 * `text` if it is a calendar date written YYYY-MM-DD (boardcore/dates.py parse_date, `what`
 * naming the value); else TypeError (not a string) or RangeError, with parse_date's message
 * (the reason in brackets is Python's date.fromisoformat's, checked year, month, day).
 */
export function parseDate(text, what = 'date') {
  if (typeof text !== 'string') {
    throw new TypeError(`${what} ${String(text)}: write the date as YYYY-MM-DD, e.g. 2026-01-01`);
  }
  if (!DATE.test(text)) {
    throw new RangeError(`${what} ${pyRepr(text)}: write the date as YYYY-MM-DD, e.g. 2026-01-01`);
  }
  const [y, m, d] = text.split('-').map(Number);
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  const why = y < 1 ? `year ${y} is out of range` : m < 1 || m > 12 ? 'month must be in 1..12'
    : d < 1 || d > days ? 'day is out of range for month' : null;
  if (why) throw new RangeError(`${what} ${text}: not a calendar date (${why})`);
  return text;
}

const given = (v) => v !== undefined && v !== null;

/** The city as `tilegen generate CITY` takes it: TEXT, then a city the tables have. */
export function cityValue(cityId, tables) {
  if (!given(cityId)) throw new TypeError('the following arguments are required: city');
  const city = textValue(cityId, 'the city');
  const cities = [...new Set(tables.rows.map((r) => r.cityId))].sort();
  if (!cities.includes(city)) {
    throw new RangeError(`unknown city ${pyRepr(city)}; known cities: ${cities.join(', ')}`);
  }
  return city;
}

/**
 * The row, seed choice and level of generateBoard's inputs, checked in the command line's
 * order (its parser's, then cmd_generate's): `{ row, seed, index }`, the seed or index
 * checked (undefined or null: not given), the row the exported one of (city, level,
 * revision).
 */
export function boardInputs(cityId, levelId, which, tables) {
  const w = which ?? {};
  if (!given(cityId)) throw new TypeError('the following arguments are required: city');
  textValue(cityId, 'the city');
  const level = given(levelId) ? levelValue(levelId) : null;
  const revision = given(w.revision) ? levelValue(w.revision, 'the revision') : 1;
  if (given(w.seed) && given(w.index)) throw new Error('give a seed or an index, not both');
  const seed = given(w.seed) ? seedValue(w.seed) : null;
  const index = given(w.index) ? indexValue(w.index) : null;
  if (level === null) throw new TypeError('give the LEVEL (or --daily DATE for the city\'s daily board)');
  const city = cityValue(cityId, tables);
  const row = tables.rows.find((r) => r.key === `${city}:${level}:${revision}`);
  if (!row) {
    const have = new Map();
    for (const r of tables.rows.filter((x) => x.cityId === city)) {
      have.set(r.revision, [...(have.get(r.revision) ?? []), r.levelId]);
    }
    const known = [...have.keys()].sort((a, b) => a - b).map((rev) => `revision ${rev}: levels `
      + `${have.get(rev).sort((a, b) => a - b).join(', ')}`).join('; ');
    throw new RangeError(`no preset for ${city} level ${level} revision ${revision}; ${city} `
      + `has ${known}`);
  }
  return { row, seed, index };
}

/** dailyBoard's inputs as `tilegen generate CITY --daily DATE` checks them: the city and
 * the date as TEXT, the date (parse_date), then the city the tables have. */
export function dailyInputs(cityId, date, tables) {
  if (!given(cityId)) throw new TypeError('the following arguments are required: city');
  textValue(cityId, 'the city');
  if (!given(date)) parseDate(date, '--daily'); // only JavaScript leaves it out: its words
  const text = parseDate(textValue(date, 'the date'), '--daily');
  return { city: cityValue(cityId, tables), date: text };
}
