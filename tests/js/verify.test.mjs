// The JavaScript record verifier (clients/playhall_web/static/lib/verify.js) on a real game record:
// tests/js/record-mantis.json, a three-seat Mantis game a real server played (alice, bob who
// resigned at once, a server bot), as `playhall export` wrote it; alice sent 00 01 … 0f with
// `ready`. The record holds; each field tampered with that the library can check is caught, at
// its step and field; what only the engine's replay could tell is said to be unchecked. The
// same verifier on a freshly played record, beside the Python one: tests/server/test_verify_record.py.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { decode, encode, Float, verifyRecord } from "../../clients/playhall_web/static/lib/playhall.js";

const RECORD = JSON.parse(readFileSync(new URL("./record-mantis.json", import.meta.url), "utf8"));
const ALICE = Uint8Array.from({ length: 16 }, (_, i) => i);

function copy() {
  return structuredClone(RECORD);
}

function indexOf(record, kind) {
  return record.steps.findIndex((s) => s.kind === kind);
}

function otherHex(hex) {
  return (hex[0] === "0" ? "1" : "0") + hex.slice(1);
}

test("the played record holds, with alice's contribution and the commitment she saw", async () => {
  const report = await verifyRecord(RECORD, {
    seenCommitment: RECORD.fair.commitment,
    own: { seat: 0, entropy: ALICE },
  });
  assert.equal(report.ok, true, report.lines.join("\n"));
  assert.equal(report.checked.length, 4);
  assert.match(report.checked[1], /2 of 3 seats' contributions \(seat 0's the one this client sent\)/);
  assert.match(
    report.checked[3],
    /"target_reached" agrees with the game's last step, step 14 \(version 15, bot_move\)/,
  );
  assert.match(report.key, /^[0-9a-f]{64}$/);
  assert.ok(report.lines.some((l) => l.startsWith("not checked (needs the game's engine): each move legal")));
});

test("the record as the wire carries it (floats as Floats) holds too", async () => {
  const wire = decode(
    encode(JSON.parse(JSON.stringify(RECORD), (k, v) => (k === "time" ? new Float(v) : v))),
  );
  assert.ok(wire.steps[0].time instanceof Float);
  assert.equal((await verifyRecord(wire)).ok, true);
});

test("a time whose JSON lost its fraction (17.0 read back as 17) is still hashed as a float", async () => {
  const record = copy();
  const step = record.steps[0];
  step.time = Math.floor(step.time);
  // Its hash no longer matches (the time changed), but the report says so at that step, not "not a time".
  const report = await verifyRecord(record);
  assert.deepEqual(
    [report.failures[0].where, report.failures[0].field],
    ["step 0 (version 1, create)", "hash"],
  );
});

/** Set `field` of step `index` (or of the first step of kind `index`) to `value(old)`; returns the index. */
function onStep(index, field, value) {
  return (record) => {
    const i = typeof index === "number" ? index : indexOf(record, index);
    record.steps[i][field] = value(record.steps[i][field]);
    return i;
  };
}

/** [what is changed, how (returns the changed step's index, if a step), where (null: that step), field]. */
const TAMPERS = [
  ["a move", onStep("move", "move", () => ({ type: "fly" })), null, "hash"],
  ["a time", onStep(7, "time", (t) => t + 0.25), null, "hash"],
  ["a time moved back", onStep(7, "time", (t) => t - 3600), null, "time"],
  ["a seat", onStep(7, "seat", () => 2), null, "hash"],
  ["a seat that is none", onStep(3, "seat", () => 3), null, "seat"],
  ["a version", onStep(4, "version", () => 9), null, "version"],
  ["a kind", onStep(5, "kind", () => "move"), null, "hash"],
  ["a move id", onStep(7, "mid", () => "forged"), null, "hash"],
  ["a hash", onStep(2, "hash", otherHex), null, "hash"],
  ["the final hash", (r) => (r.final_hash = otherHex(r.final_hash)), "record", "final_hash"],
  ["the secret", (r) => (r.fair.secret = otherHex(r.fair.secret)), "fair", "secret"],
  ["the commitment", (r) => (r.fair.commitment = otherHex(r.fair.commitment)), "fair", "secret"],
  ["the room id", (r) => (r.room = `${r.room}x`), "fair", "secret"],
  [
    "alice's contribution",
    (r) => (r.fair.contributions[0] = otherHex(r.fair.contributions[0])),
    "fair",
    "contributions[0]",
  ],
  ["a contribution too many", (r) => r.fair.contributions.push(null), "fair", "contributions"],
  ["a contribution too long", (r) => (r.fair.contributions[1] = "00".repeat(65)), "fair", "contributions[1]"],
  ["a seat too many", (r) => r.seats.push({ name: "x", bot: false }), "fair", "contributions"],
  ["the outcome's reason", (r) => (r.outcome.reason = "resignation"), "outcome", "reason"],
  ["abandoned", (r) => (r.outcome.reason = "abandoned"), "outcome", "reason"],
  ["who left", (r) => delete r.outcome.left, "outcome", "left"],
  ["a winner who left", (r) => (r.outcome.winners = [1]), "outcome", "winners"],
  ["a winner who is no seat", (r) => (r.outcome.winners = [3]), "outcome", "winners"],
  ["the format version", (r) => (r.format_version = 2), "record", "format_version"],
];

describe("each field tampered with is caught where it was changed", () => {
  for (const [name, tamper, where, field] of TAMPERS) {
    test(name, async () => {
      const record = copy();
      const changed = tamper(record);
      const report = await verifyRecord(record, { own: { seat: 0, entropy: ALICE } });
      assert.equal(report.ok, false);
      const first = report.failures[0];
      if (where === null) {
        const step = record.steps[changed];
        assert.equal(first.where, `step ${changed} (version ${step.version}, ${step.kind})`);
        assert.equal(first.step, changed);
      } else {
        assert.equal(first.where, where);
      }
      assert.equal(first.field, field, first.message);
      assert.equal(first.message, `${first.where}, ${first.field}: ${first.reason}`);
      assert.ok(report.lines.includes(`FAIL  ${first.message}`));
    });
  }
});

test("what only the engine tells is not caught, and the report says it was not checked", async () => {
  const record = copy();
  record.outcome.scores = [0, 0, 99]; // the scores the moves reach are the engine's to say
  record.fair.contributions[1] = otherHex(record.fair.contributions[1]); // another seat's: only the key changes
  record.options.target = 99; // the options go into the engine's setup only
  const report = await verifyRecord(record, { own: { seat: 0, entropy: ALICE } });
  assert.equal(report.ok, true);
  assert.equal(report.notChecked.length, 3);
  assert.ok(report.notChecked.some((line) => line.includes("winners and scores")));
});

test("a changed step is named at that step alone: the steps after it still chain", async () => {
  const record = copy();
  record.steps[9].time += 1;
  const report = await verifyRecord(record);
  assert.deepEqual(
    report.failures.map((f) => [f.step, f.field]),
    [[9, "hash"]],
  );
});

test("not a record at all", async () => {
  for (const bad of [null, [], "x", { format: "playhall-record", format_version: 1 }]) {
    const report = await verifyRecord(bad);
    assert.equal(report.ok, false);
    assert.equal(report.failures.length, 1);
    assert.equal(report.failures[0].where, "record");
  }
});

/** Every place in `value`: the map keys and list indices down to each leaf. */
function paths(value, path = []) {
  if (value === null || typeof value !== "object") return [path];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return [path, ...entries.flatMap(([key, item]) => paths(item, [...path, key]))];
}

test("any field replaced by a value of any JSON kind gives a report, never an exception", async () => {
  const odd = [null, 0, -1, 1.5, true, "x", "", [], {}, [[1]], { a: {} }];
  const kinds = new Map(RECORD.steps.map((s, i) => [s.kind, i]));
  const sampled = paths(RECORD).filter(
    (p) => p.length && (p[0] !== "steps" || p.length < 2 || [...kinds.values()].includes(p[1])),
  );
  const covered = new Set(["format", "format_version", "room", "fair", "steps", "final_hash"]);
  for (const path of sampled) {
    for (const value of odd) {
      const record = copy();
      let place = record;
      for (const key of path.slice(0, -1)) place = place[key];
      place[path[path.length - 1]] = structuredClone(value);
      const report = await verifyRecord(record, { own: { seat: 0, entropy: ALICE } });
      assert.equal(
        report.lines.length,
        report.checked.length + report.notChecked.length + report.failures.length,
      );
      // "" for the bot's contribution is null's meaning: none (the same key). Bob's contribution
      // changed (to another or to none) changes only the key: the engine's replay would tell.
      const same =
        JSON.stringify(record) === JSON.stringify(RECORD) ||
        (path.join() === "fair,contributions,2" && value === "");
      const onlyTheKey = path.join() === "fair,contributions,1" && (value === null || value === "");
      if (covered.has(path[0]) && !same && !onlyTheKey)
        assert.equal(report.ok, false, `${path.join(".")} = ${JSON.stringify(value)}`);
    }
  }
});
