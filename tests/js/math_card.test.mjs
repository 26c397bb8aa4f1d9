// Math card's log lines and move labels (clients/playhall_web/static/app/games/math_card.js), from
// events and moves as the server sends them (docs/games/math_card.md, "Events" and "Moves").

import assert from "node:assert/strict";
import { test } from "node:test";

import mathCard, { moveLabel } from "../../clients/playhall_web/static/app/games/math_card.js";

const view = {
  you: 0,
  seats: [{ name: "alice" }, { name: "Bot 1" }],
  state: {
    pool: { 100001: { name: "Doubling" }, "000005": { name: "Five" } },
    areas: { left: [], right: [], private0: [], private1: [] },
    legends: [[], []],
  },
};

test("a pvp event reads its change and its new total (the server sends `change` and `pvp`)", () => {
  assert.equal(
    mathCard.describe({ type: "pvp", seat: 0, change: 2, pvp: 3 }, view),
    "alice (you): PVP +2, now 3",
  );
  assert.equal(mathCard.describe({ type: "pvp", seat: 1, change: -1, pvp: 0 }, view), "Bot 1: PVP -1, now 0");
});

test("positions in assertion areas are named as areas, not as lanes", () => {
  const calc = { type: "function_calc", card: "100001", input: ["private0", 0], output: [2, 2] };
  const text = moveLabel(view, calc);
  assert.equal(text, "calculate alice (you)'s private assertions card 1 → public lane slot 3");
  assert.doesNotMatch(text, /lane private|lane left|lane right/);
  assert.equal(
    moveLabel(view, { ...calc, input: ["left", 1], output: ["private1", 0] }),
    "calculate left public assertions card 2 → Bot 1's private assertions card 1",
  );
  const logged = mathCard.describe({ ...calc, seat: 1, output: ["right", 0], cards: [] }, view);
  assert.equal(
    logged,
    "Bot 1 calculates with Doubling: alice (you)'s private assertions card 1 → right public assertions card 1",
  );
});

test("an assertion names the area it goes to", () => {
  assert.equal(
    moveLabel(view, { type: "assert", card: "000005", area: "private" }),
    "assert in alice (you)'s private assertions",
  );
  assert.equal(
    mathCard.describe({ type: "assert", seat: 1, card: "000005", area: "private" }, view),
    "Bot 1 asserts Five in Bot 1's private assertions",
  );
});
