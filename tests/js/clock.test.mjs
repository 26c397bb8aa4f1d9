// The page's per-seat clocks (clients/playhall_web/static/app/room/clocks.js): a seat's time left
// from the view's `clock`, counted on from the server time `at` only while the seat's clock runs.

import assert from "node:assert/strict";
import { test } from "node:test";

import { mmss, secondsLeft } from "../../clients/playhall_web/static/app/room/clocks.js";

const clock = { kind: "fischer", remaining_ms: [5000, 3000], running: [0], at: 100 };

test("a running clock counts down from at, a stopped one does not", () => {
  assert.equal(secondsLeft(clock, 0, 102), 3);
  assert.equal(secondsLeft(clock, 1, 102), 3);
  assert.equal(secondsLeft(clock, 1, 500), 3);
});

test("time left never goes below zero", () => {
  assert.equal(secondsLeft(clock, 0, 200), 0);
});

test("no clock, or a game not started yet, shows nothing", () => {
  assert.equal(secondsLeft(null, 0, 100), null);
  assert.equal(secondsLeft({ ...clock, remaining_ms: null, at: null }, 0, 100), null);
});

test("mm:ss rounds up to the whole second still left", () => {
  assert.equal(mmss(0), "00:00");
  assert.equal(mmss(0.2), "00:01");
  assert.equal(mmss(61.2), "01:02");
  assert.equal(mmss(600), "10:00");
});
