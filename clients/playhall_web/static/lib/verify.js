// Checking a game record (PROTOCOL.md section 18, "Verifying a record") with WebCrypto
// (`crypto.subtle`): what can be checked without a game engine. The revealed secret against the
// commitment, one contribution per seat and the key made of them (and, when given, the commitment
// this client saw before the game and the contribution it sent), every step's version, seat, time
// and hash (each step's from the stored hash before it, so a changed step is named where it is),
// `final_hash`, and the outcome against the steps that ended the game.
//
// What it cannot check: the rule engines are the server's, in Python, so no move is replayed here.
// That every move was legal and made in turn, that a server bot's move was its own choice, and that
// the outcome (its winners and scores) is the one the moves reach, is `playhall verify`'s
// (PROTOCOL.md). A contribution changed in the record changes only the key, so it is caught here
// only for the client's own seat (`own`). Failures carry the same `where` and `field` as the Python
// verifier's (protocol/playhall_protocol/recordcheck.py), which makes the same checks.

import { encode, Float } from "./codec.js";

const FORMAT = "playhall-record";
const FORMAT_VERSION = 1;
const SECRET_BYTES = 32;
const MAX_CONTRIBUTION = 64;
const COMMIT_LABEL = "playhall/commit/v1";
const KEY_LABEL = "playhall/key/v1";
const CHAIN_LABEL = "playhall/record/v1";
const STEP_FIELDS = ["version", "kind", "seat", "move", "mid", "time"];
const GAME_STEPS = new Set(["move", "bot_move", "auto", "leave_game"]);
const ENDING_STEPS = new Set([...GAME_STEPS, "abandon"]);
const LEAVE_REASONS = ["resignation", "timeout"];
const UTF8 = new TextEncoder();

/** What the replay through the game's engine would check, which this library cannot. */
export const NOT_CHECKED = Object.freeze([
  "each move legal and made by a seat whose turn it was, replayed through the game's engine from the key",
  "each server bot's move the bot's own choice",
  "the outcome's winners and scores the ones the moves reach",
]);

/** Where a record stops holding: `where` ("step 12 (version 13, move)", "fair", "outcome",
 * "record"), `field`, `reason` for people, `step` (the index in `steps`) when a step is at fault. */
class Diverged extends Error {
  constructor(where, field, reason, step = null) {
    super(`${where}, ${field}: ${reason}`);
    this.name = "Diverged";
    this.where = where;
    this.field = field;
    this.reason = reason;
    this.step = step;
  }
}

function stepName(index, step) {
  if (step !== null && typeof step === "object") {
    return `step ${index} (version ${String(step.version)}, ${String(step.kind)})`;
  }
  return `step ${index}`;
}

function atStep(index, step, field, reason) {
  return new Diverged(stepName(index, step), field, reason, index);
}

function subtle() {
  const found = globalThis.crypto && globalThis.crypto.subtle;
  if (!found) {
    throw new Error("no WebCrypto here (a browser offers crypto.subtle only to https and localhost pages)");
  }
  return found;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function u32(n) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

/** `lp(x)`: x's length as 4 big-endian bytes, then x. */
function lp(bytes) {
  return concat(u32(bytes.length), bytes);
}

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes from lowercase or uppercase hex; null when `text` is not hex (or not `size` bytes). */
function fromHex(text, size = null) {
  if (typeof text !== "string" || text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return size === null || out.length === size ? out : null;
}

function hexField(where, field, value, size = null) {
  const bytes = fromHex(value, size);
  if (bytes === null) {
    throw new Diverged(
      where,
      field,
      `not ${size === null ? "bytes" : `${size} bytes`} in hex: ${JSON.stringify(value)}`,
    );
  }
  return bytes;
}

async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

async function hmacSha256(key, message) {
  const imported = await subtle().importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle().sign("HMAC", imported, message));
}

function equalBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v) => Number.isInteger(v);

/** `commitment = SHA-256("playhall/commit/v1" || lp(room id) || secret)` (PROTOCOL.md section 16). */
export async function commitmentOf(roomId, secret) {
  return sha256(concat(UTF8.encode(COMMIT_LABEL), lp(UTF8.encode(roomId)), secret));
}

/** The room's key: HMAC-SHA256 of the secret over the label, the room id and the seats'
 * contributions in seat order (null: the seat gave none). */
export async function roomKey(secret, roomId, contributions) {
  const parts = [UTF8.encode(KEY_LABEL), lp(UTF8.encode(roomId)), u32(contributions.length)];
  for (const c of contributions) parts.push(lp(c || new Uint8Array(0)));
  return hmacSha256(secret, concat(...parts));
}

/** A step's time as hashed: a float64 always, however it was spelled (JSON writes 17.0 as 17). */
function timeOf(step) {
  const at = step.time;
  if (at instanceof Float) return at;
  return typeof at === "number" && Number.isFinite(at) ? new Float(at) : null;
}

function checkFormat(record) {
  if (!isMap(record)) throw new Diverged("record", "format", "a game record is a JSON object");
  if (record.format !== FORMAT || record.format_version !== FORMAT_VERSION) {
    throw new Diverged(
      "record",
      "format_version",
      `not a ${FORMAT} record of format version ${FORMAT_VERSION}`,
    );
  }
  const kinds = {
    room: "str",
    seats: "list",
    fair: "dict",
    steps: "list",
    outcome: "dict",
    final_hash: "str",
  };
  for (const [name, kind] of Object.entries(kinds)) {
    const value = record[name];
    const fits =
      kind === "str" ? typeof value === "string" : kind === "list" ? Array.isArray(value) : isMap(value);
    if (!fits) throw new Diverged("record", name, `missing, or not a ${kind}`);
  }
  return `format: ${FORMAT} version ${FORMAT_VERSION}, room ${record.room}`;
}

async function checkFair(record, report, options) {
  const fair = record.fair;
  const shown = hexField("fair", "commitment", fair.commitment, 32);
  const secret = hexField("fair", "secret", fair.secret, SECRET_BYTES);
  if (!equalBytes(await commitmentOf(record.room, secret), shown)) {
    throw new Diverged(
      "fair",
      "secret",
      "the secret (with the room id) does not hash to the commitment shown before the game: " +
        "the secret or the commitment was changed",
    );
  }
  if (options.seenCommitment !== undefined && options.seenCommitment !== fair.commitment) {
    throw new Diverged("fair", "commitment", "not the commitment this client saw before the game");
  }
  const seats = record.seats.length;
  const given = fair.contributions;
  if (!Array.isArray(given) || given.length !== seats) {
    throw new Diverged("fair", "contributions", `not one per seat (${seats} seats)`);
  }
  const contributions = given.map((value, seat) => {
    if (value === null) return null;
    const bytes = hexField("fair", `contributions[${seat}]`, value);
    if (bytes.length > MAX_CONTRIBUTION) {
      throw new Diverged(
        "fair",
        `contributions[${seat}]`,
        `${bytes.length} bytes, more than a seat may give (${MAX_CONTRIBUTION})`,
      );
    }
    return bytes;
  });
  const own = options.own;
  if (own) {
    const revealed = contributions[own.seat] || new Uint8Array(0);
    if (!equalBytes(revealed, own.entropy || new Uint8Array(0))) {
      throw new Diverged("fair", `contributions[${own.seat}]`, "not the contribution this client sent");
    }
  }
  report.key = toHex(await roomKey(secret, record.room, contributions));
  const count = contributions.filter((c) => c && c.length).length;
  return (
    `fair deal: the secret matches the commitment ${fair.commitment.slice(0, 16)}…; ` +
    `key ${report.key.slice(0, 16)}… made from it and ${count} of ${seats} seats' contributions` +
    (own ? ` (seat ${own.seat}'s the one this client sent)` : "") +
    (options.seenCommitment !== undefined ? "; the commitment the one this client saw before the game" : "")
  );
}

async function checkSteps(record) {
  const steps = record.steps;
  const seats = record.seats.length;
  const commitment = fromHex(record.fair.commitment, 32);
  if (commitment === null) throw new Diverged("fair", "commitment", "not hex: the chain cannot start");
  let previous = await sha256(concat(UTF8.encode(CHAIN_LABEL), lp(UTF8.encode(record.room)), commitment));
  let lastTime = null;
  for (const [index, step] of steps.entries()) {
    if (!isMap(step) || ![...STEP_FIELDS, "hash"].every((name) => Object.hasOwn(step, name))) {
      throw new Diverged(stepName(index, step), "step", "not a step with every field");
    }
    if (!isInt(step.version) || step.version !== index + 1) {
      throw atStep(index, step, "version", `${JSON.stringify(step.version)}, not ${index + 1}`);
    }
    if (typeof step.kind !== "string") {
      throw atStep(index, step, "kind", `${JSON.stringify(step.kind)} is not a kind of step`);
    }
    if (step.seat !== null && (!isInt(step.seat) || step.seat < 0 || step.seat >= seats)) {
      throw atStep(index, step, "seat", `${JSON.stringify(step.seat)} is not a seat of ${seats}`);
    }
    const at = timeOf(step);
    if (at === null) throw atStep(index, step, "time", `${JSON.stringify(step.time)} is not a time`);
    if (lastTime !== null && at.value < lastTime) {
      throw atStep(index, step, "time", `${at.value} is before the step before it (${lastTime})`);
    }
    lastTime = at.value;
    let fields;
    try {
      fields = encode([step.version, step.kind, step.seat, step.move, step.mid, at]);
    } catch (err) {
      throw atStep(index, step, "move", `cannot be hashed: ${err.message}`);
    }
    if (step.hash !== toHex(await sha256(concat(previous, fields)))) {
      throw atStep(
        index,
        step,
        "hash",
        "the step's fields (version, kind, seat, move, mid, time) do not hash, after the hash " +
          "before it, to the hash it carries: one of them or its hash was changed",
      );
    }
    previous = hexField(stepName(index, step), "hash", step.hash, 32);
  }
  if (record.final_hash !== toHex(previous))
    throw new Diverged("record", "final_hash", "not the last step's hash");
  return `steps: ${steps.length} steps, versions 1 to ${steps.length} in order, every hash chained`;
}

function checkOutcome(record) {
  const outcome = record.outcome;
  const steps = record.steps.filter(isMap);
  const seats = record.seats.length;
  const reason = outcome.reason;
  const shown = JSON.stringify(reason);
  const ending = [];
  steps.forEach((s, i) => {
    if (ENDING_STEPS.has(s.kind)) ending.push([i, s]);
  });
  if (!ending.length)
    throw new Diverged("outcome", "reason", `${shown}, but no step of the game is recorded`);
  const [index, last] = ending[ending.length - 1];
  for (const name of ["winners", "left"]) {
    if (!Array.isArray(outcome[name] || [])) throw new Diverged("outcome", name, "not a list of seats");
    for (const seat of outcome[name] || []) {
      if (!isInt(seat) || seat < 0 || seat >= seats) {
        throw new Diverged("outcome", name, `${JSON.stringify(seat)} is not a seat of ${seats}`);
      }
    }
  }
  const lastStep = `${shown}, but the game's last step is ${stepName(index, last)}`;
  if ((reason === "abandoned") !== (last.kind === "abandon"))
    throw new Diverged("outcome", "reason", lastStep);
  const left = steps.filter((s) => s.kind === "leave_game").map((s) => s.seat);
  const sorted = (list) => JSON.stringify([...list].sort((a, b) => a - b));
  // An abandoned game's outcome names nobody, those who had left it included.
  if (reason !== "abandoned" && sorted(outcome.left || []) !== sorted(left)) {
    throw new Diverged(
      "outcome",
      "left",
      `${JSON.stringify(outcome.left || [])}, but the seats that left the game are ${JSON.stringify(left)}`,
    );
  }
  if ((outcome.winners || []).some((seat) => left.includes(seat))) {
    throw new Diverged("outcome", "winners", "a seat that left the game cannot win it");
  }
  if (LEAVE_REASONS.includes(reason) && (last.kind !== "leave_game" || last.move !== reason)) {
    throw new Diverged("outcome", "reason", lastStep);
  }
  return `outcome: ${shown} agrees with the game's last step, ${stepName(index, last)}`;
}

/**
 * Check a game record (the `record` request's reply, or `playhall export`'s JSON parsed) with
 * WebCrypto. Resolves with `{ ok, checked, failures, notChecked, key, lines }`: the checks that
 * held (a line each), what did not (`{ where, field, reason, step, message }`, in the order
 * found), what only the engine's replay checks, the room's key in hex (null when it cannot be
 * made), and all of it as lines for people.
 *
 * `options.seenCommitment`: the commitment (hex) this client saw before the game;
 * `options.own`: `{ seat, entropy }`, the seat this client played and the bytes it sent with
 * `ready` (none: an empty contribution).
 */
export async function verifyRecord(record, options = {}) {
  const report = { ok: false, checked: [], failures: [], notChecked: [...NOT_CHECKED], key: null, lines: [] };
  subtle(); // no WebCrypto: reject now, rather than report every check as failed
  const checks = [
    ["format", () => checkFormat(record)],
    ["fair", () => checkFair(record, report, options)],
    ["steps", () => checkSteps(record)],
    ["outcome", () => checkOutcome(record)],
  ];
  for (const [i, [name, check]] of checks.entries()) {
    try {
      report.checked.push(await check());
    } catch (caught) {
      // A shape no check foresaw is a failure too, never an exception.
      const err =
        caught instanceof Diverged ? caught : new Diverged("record", name, `cannot be read: ${caught}`);
      report.failures.push({
        where: err.where,
        field: err.field,
        reason: err.reason,
        step: err.step,
        message: err.message,
      });
      if (i === 0) break; // nothing else can be read
    }
  }
  report.ok = report.failures.length === 0;
  report.lines = [
    ...report.checked.map((line) => `ok    ${line}`),
    ...report.notChecked.map((line) => `not checked (needs the game's engine): ${line}`),
    ...report.failures.map((f) => `FAIL  ${f.message}`),
  ];
  return report;
}
