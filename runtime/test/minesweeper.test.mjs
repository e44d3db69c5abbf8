// The Minesweeper rules of runtime/minesweeper.js held equal to the Python side, board by
// board and state by state. The fixture (minegen.play_data.fixture) is written by
// tests/test_minesweeper_js.py; its path comes in MINEGEN_MS_FIXTURE (required: without it
// this file fails, it never skips). Per board: the numbers, the opening R0 as the zero
// closure of the spawn, every dig's cascade of a scripted play, the hint (cells per tier,
// mines per tier, guess forced, cleared) of every state, and the win / loss rules.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  cellView, hint, makeBoard, newGame, reveal, Status, TIER_NAMES, toggleFlag, zeroClosure,
} from '../minesweeper.js';

const path = process.env.MINEGEN_MS_FIXTURE;

test('the fixture path is given in MINEGEN_MS_FIXTURE', () => {
  assert.ok(path, 'set MINEGEN_MS_FIXTURE to a fixture from minegen.play_data.fixture');
});

const fixture = path ? JSON.parse(readFileSync(path, 'utf8')) : { boards: [], tier_names: [] };
const label = (d) => {
  const r = d.record;
  return `board (${r.level_index}, ${r.node_depth}) #${r.seed_index}`;
};
const xyOf = (board, c) => [c % board.width, Math.floor(c / board.width)];
const cellsOf = (board, mask) => {
  const out = [];
  for (let c = 0; c < board.n; c++) if (mask[c]) out.push(xyOf(board, c));
  return out;
};

test('the fixture holds boards and the tier names are the Python ones', () => {
  assert.equal(fixture.format, 1);
  assert.ok(fixture.boards.length > 0, 'the fixture has no board');
  assert.deepEqual([...TIER_NAMES], fixture.tier_names);
});

for (const entry of fixture.boards) {
  const data = entry.data;
  const name = label(data);

  test(`${name}: numbers and the opening are Python's`, () => {
    const board = makeBoard(data);
    assert.deepEqual([...board.num], entry.numbers);
    const spawn = [];
    const [sx, sy] = data.spawn;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) spawn.push(board.index([sx + dx, sy + dy]));
    }
    assert.deepEqual(cellsOf(board, zeroClosure(board, spawn)), data.opening);
  });

  test(`${name}: every dig and every hint of the play equal Python's`, () => {
    const board = makeBoard(data);
    const game = newGame(board);
    assert.equal(entry.steps[0].kind, 'start');
    for (const [i, step] of entry.steps.entries()) {
      step.clicks.forEach(([x, y], k) => {
        assert.deepEqual(reveal(game, x, y), step.opened[k], `step ${i}, dig [${x}, ${y}]`);
      });
      const got = hint(board, game.revealed);
      const want = step.hint;
      assert.deepEqual(got.safe, want.safe, `step ${i}: safe cells and tiers`);
      assert.deepEqual(got.mines, want.mines, `step ${i}: marked mines and tiers`);
      assert.deepEqual(got.byTier, want.by_tier, `step ${i}: cells per tier`);
      assert.equal(got.guessForced, want.guess_forced, `step ${i}: guess forced`);
      assert.equal(got.cleared, want.cleared, `step ${i}: cleared`);
      assert.equal(game.status, want.cleared ? Status.WON : Status.PLAYING, `step ${i}`);
    }
  });

  test(`${name}: digging every safe cell wins, a flag guards, a mine loses`, () => {
    const board = makeBoard(data);
    const won = newGame(board);
    for (let c = 0; c < board.n; c++) {
      if (!board.mine[c]) reveal(won, ...xyOf(board, c));
    }
    assert.equal(won.status, Status.WON);
    assert.equal(won.openCount, board.safeCount);
    assert.equal(hint(board, won.revealed).cleared, true);

    // a cascade opens a wrongly flagged neighbour of a 0 and drops the flag
    const flagged = newGame(board);
    const zero = [...Array(board.n).keys()].find((c) => !flagged.revealed[c] &&
      !board.mine[c] && !board.fog[c] && board.num[c] === 0);
    if (zero !== undefined) {
      const v = board.nb[zero].find((u) => !flagged.revealed[u] && !board.fog[u]);
      assert.equal(toggleFlag(flagged, ...xyOf(board, v)), true);
      const opened = reveal(flagged, ...xyOf(board, zero));
      assert.ok(opened.some(([x, y]) => board.index([x, y]) === v));
      assert.equal(flagged.flagged[v], 0);
      assert.equal(cellView(flagged, ...xyOf(board, v)), 'open');
    }

    const lost = newGame(board);
    if (lost.status === Status.WON) { // the opening clears the board: nothing to dig
      for (const [x, y] of data.mines) assert.deepEqual(reveal(lost, x, y), []);
      assert.equal(lost.status, Status.WON);
      return;
    }
    const [mx, my] = data.mines[0]; // (a board with closed safe cells has mines)
    assert.equal(toggleFlag(lost, mx, my), true);
    assert.deepEqual(reveal(lost, mx, my), []); // a flagged cell is not dug
    assert.equal(lost.status, Status.PLAYING);
    assert.equal(toggleFlag(lost, mx, my), false);
    reveal(lost, mx, my);
    assert.equal(lost.status, Status.LOST);
    assert.equal(cellView(lost, mx, my), 'exploded');
    const [ox, oy] = data.opening[0];
    assert.deepEqual(reveal(lost, ox, oy), []); // the game is over
    for (const [fx, fy] of data.fog) {
      assert.equal(toggleFlag(newGame(board), fx, fy), false, 'fog is known safe');
      assert.equal(cellView(newGame(board), fx, fy), 'fog');
    }
  });
}
