// Microseconds per attempt of generateBoard in node, per row, on audit boards 0 .. N-1 as
// the audit runs them (their closing work included): total time / sum of attempts_used,
// median over rounds after a warm-up round. Usage (benchmarks/tilegen_js.py runs it):
//   node runtime/bench.mjs ROWS.json KEY[,KEY...] BOARDS ROUNDS
// prints one JSON object per key.

import { readFileSync } from 'node:fs';
import { generateRow, resolveBoard } from './tilegen.js';

const [rowsPath, keys, boards = '32', rounds = '5'] = process.argv.slice(2);
const tables = JSON.parse(readFileSync(rowsPath, 'utf8'));
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const key of keys.split(',')) {
  const row = tables.rows.find((r) => r.key === key);
  if (!row) throw new Error(`no row ${key}`);
  const jobs = [...Array(Number(boards)).keys()].map((i) => resolveBoard(row, { index: i }));
  const per = [];
  let attempts = 0;
  for (let round = 0; round <= Number(rounds); round++) {
    const t0 = process.hrtime.bigint();
    attempts = 0;
    for (const j of jobs) attempts += generateRow(row, j.seed, j.index, j.closing).attemptsUsed;
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    if (round > 0) per.push(us / attempts); // round 0 warms the JIT up
  }
  console.log(JSON.stringify({ key, attempts, js_us_per_attempt: median(per) }));
}
