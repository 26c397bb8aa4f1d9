// Room options as people read them (clients/playhall_web/static/app/options.js): labels, units and
// value labels from the `games` list, only the options that apply, the clock in one phrase, and
// the create form's clock presets.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  applies,
  clockPreset,
  formatDuration,
  optionsText,
  seatsText,
} from "../../clients/playhall_web/static/app/options.js";

// As the server's `games` describes them (server/playhall/rooms/clocks.py and the games' engines).
const CLOCK_OPTIONS = [
  {
    name: "clock",
    label: "clock",
    choices: ["none", "turn", "fischer"],
    value_labels: { none: "no clock", turn: "per turn", fischer: "Fischer" },
  },
  { name: "clock_ms", label: "time", unit: "ms", when: { clock: ["turn", "fischer"] } },
  { name: "increment_ms", label: "increment", unit: "ms", when: { clock: ["fischer"] } },
  {
    name: "on_timeout",
    label: "on timeout",
    when: { clock: ["turn", "fischer"] },
    value_labels: { bot: "a bot plays", forfeit: "the seat forfeits" },
  },
];
const MANTIS = {
  id: "mantis",
  options: [
    { name: "target", label: "target score", value_labels: { 0: "the rules' (10, or 15 with 2 players)" } },
    ...CLOCK_OPTIONS,
  ],
};
const MANDALA = {
  id: "mandala",
  options: [
    {
      name: "mode",
      label: "mode",
      value_labels: { standard: "two players", solo: "solo against Master Yoga" },
    },
    { name: "yoga", label: "Master Yoga's choice", when: { mode: ["solo"] } },
    { name: "yoga_delay_ms", label: "Master Yoga's pause", unit: "ms", when: { mode: ["solo"] } },
    ...CLOCK_OPTIONS,
  ],
};
const NO_CLOCK = { clock: "none", clock_ms: 120000, increment_ms: 5000, on_timeout: "bot" };

test("durations read as people say them", () => {
  assert.equal(formatDuration(0), "0 s");
  assert.equal(formatDuration(800), "0.8 s");
  assert.equal(formatDuration(1500), "1.5 s");
  assert.equal(formatDuration(90_000), "1 min 30 s");
  assert.equal(formatDuration(180_000), "3 min");
  assert.equal(formatDuration(86_400_000), "1 day");
  assert.equal(formatDuration(2 * 86_400_000 + 3_600_000), "2 days 1 h");
});

test("an option applies only under the choices its `when` names", () => {
  const [, yoga] = MANDALA.options;
  assert.equal(applies(yoga, { mode: "standard" }), false);
  assert.equal(applies(yoga, { mode: "solo" }), true);
  assert.equal(applies(MANDALA.options[0], {}), true);
});

test("a two-player Mandala lists no solo settings, a solo one lists them with labels and units", () => {
  const standard = { mode: "standard", yoga: "full", yoga_delay_ms: 800, ...NO_CLOCK };
  assert.equal(optionsText(standard, MANDALA), "mode: two players · no clock");
  assert.equal(
    optionsText({ ...standard, mode: "solo" }, MANDALA),
    "mode: solo against Master Yoga · Master Yoga's choice: full · Master Yoga's pause: 0.8 s · no clock",
  );
});

test("a spectator delay is said only when the room has one", () => {
  assert.equal(
    optionsText({ target: 12, ...NO_CLOCK, spectator_delay: 0 }, MANTIS),
    "target score: 12 · no clock",
  );
  assert.equal(
    optionsText({ target: 12, ...NO_CLOCK, spectator_delay: 3 }, MANTIS),
    "target score: 12 · no clock · spectators see the game 3 steps behind",
  );
});

test("Mantis's target 0 says what it means instead of 0", () => {
  assert.equal(
    optionsText({ target: 0, ...NO_CLOCK }, MANTIS),
    "target score: the rules' (10, or 15 with 2 players) · no clock",
  );
  assert.equal(optionsText({ target: 12, ...NO_CLOCK }, MANTIS), "target score: 12 · no clock");
});

test("a clock in one phrase, its settings only where its kind uses them", () => {
  const turn = { target: 12, clock: "turn", clock_ms: 1500, increment_ms: 5000, on_timeout: "bot" };
  assert.equal(optionsText(turn, MANTIS), "target score: 12 · 1.5 s per turn · on timeout: a bot plays");
  const fischer = {
    ...turn,
    clock: "fischer",
    clock_ms: 300_000,
    increment_ms: 3_000,
    on_timeout: "forfeit",
  };
  assert.equal(
    optionsText(fischer, MANTIS),
    "target score: 12 · 5 min + 3 s a move · on timeout: the seat forfeits",
  );
  const blitz = { ...fischer, clock_ms: 180_000, increment_ms: 2_000 };
  assert.equal(
    optionsText(blitz, MANTIS),
    "target score: 12 · blitz: 3 min + 2 s a move · on timeout: the seat forfeits",
  );
});

test("the presets are recognised from the options, a clock's unused settings aside", () => {
  assert.equal(clockPreset(NO_CLOCK), "none");
  assert.equal(clockPreset({ clock: "fischer", clock_ms: 600_000, increment_ms: 5_000 }), "rapid");
  assert.equal(clockPreset({ clock: "turn", clock_ms: 86_400_000, increment_ms: 5_000 }), "day");
  assert.equal(clockPreset({ clock: "turn", clock_ms: 86_400_000 + 1 }), "custom");
  assert.equal(clockPreset({ clock: "fischer", clock_ms: 180_000, increment_ms: 3_000 }), "custom");
});

test("without the game's description: names and values as they are", () => {
  assert.equal(optionsText({ target: 15 }, undefined), "target: 15");
  assert.equal(optionsText(undefined, MANTIS), "");
});

test("a game's seat counts read as a range, or one number when it takes one", () => {
  assert.equal(seatsText({ min_seats: 2, max_seats: 6 }), "2–6");
  assert.equal(seatsText({ min_seats: 2, max_seats: 2 }), "2");
});
