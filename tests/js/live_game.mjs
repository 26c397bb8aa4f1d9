// Plays a whole Mantis game against a server bot through the JavaScript library, over a real
// websocket to a real server: `node --experimental-websocket tests/js/live_game.mjs WS_URL`.
// On the way it drops its own connection mid-game (the library must reconnect, say hello with
// the token, sync the room and go on) and checks the mirror against a fresh snapshot. Prints one
// JSON line with what happened; exits non-zero on any failure. Driven by
// tests/server/test_js_library.py.

import assert from "node:assert/strict";

import {
  decodeFrame,
  Float,
  PlayhallConnection,
  PlayhallError,
} from "../../clients/playhall_web/static/lib/playhall.js";
import { untilView } from "./views.mjs";

/** The platform's WebSocket, noting every move request sent. */
const sentMoves = [];
class Recording extends WebSocket {
  send(frame) {
    const message = decodeFrame(frame);
    if (message.t === "move") sentMoves.push(message);
    super.send(frame);
  }
}

const url = process.argv[2];
const conn = new PlayhallConnection(url, { name: "node", WebSocket: Recording });
const states = [];
conn.on("status", ({ state }) => states.push(state));
const errors = [];
conn.on("error", (e) => errors.push(e));
let events = 0;
conn.on("event", () => {
  events += 1;
});

function until(predicate, what) {
  return untilView(conn, predicate, what);
}

const hello = await conn.connect();
assert.equal(typeof hello.token, "string");
assert.ok(hello.limits.rate instanceof Float);
const games = (await conn.request("games")).games;
assert.ok(games.some((g) => g.id === "mantis"));

const created = await conn.request("create", { game: "mantis", seats: 2, private: true });
const room = created.room;
// Three groups of five symbols from an alphabet without look-alikes (PROTOCOL.md §4 create).
assert.match(created.code, /^[2-9A-HJKMNP-Z]{5}-[2-9A-HJKMNP-Z]{5}-[2-9A-HJKMNP-Z]{5}$/);
const mirror = conn.rooms.get(room);
assert.equal(mirror.code, created.code);
assert.equal(mirror.seat, 0);
await conn.request("bot", { room, seat: 1 });
await conn.request("start", { room });

try {
  await conn.move(room, { type: "no_such_move" });
  assert.fail("a bad move was accepted");
} catch (err) {
  assert.ok(err instanceof PlayhallError);
  // bad_move on its turn; not_your_turn or stale while the bot is moving
  assert.ok(["bad_move", "not_your_turn", "stale"].includes(err.code), err.code);
  assert.equal(typeof err.version, "number");
}

let moves = 0;
let dropped = false;
while (mirror.view.status !== "finished") {
  await until(
    () => mirror.view && (mirror.view.status === "finished" || mirror.view.moves.length > 0),
    "my turn",
  );
  if (mirror.view.status === "finished") break;
  const move = mirror.view.moves[0];
  if (!dropped) {
    // Drop the socket right after the move left: its reply is lost with the connection and the
    // library must send it again with the same mid after reconnecting.
    dropped = true;
    const sent = conn.move(room, move);
    conn._ws.close(4001, "test drop");
    const reply = await sent;
    assert.equal(typeof reply.version, "number");
    // Sent twice, the second time on the new connection, with the same mid and version.
    const last = sentMoves.slice(-2);
    assert.equal(last.length, 2);
    assert.equal(last[0].mid, last[1].mid);
    assert.equal(last[0].version, last[1].version);
    assert.notEqual(last[0].id, last[1].id);
  } else {
    await conn.move(room, move);
  }
  moves += 1;
}

// The mirror built from diffs equals a fresh snapshot of the same version.
const kept = JSON.stringify(mirror.view);
const version = mirror.version;
const check = new PlayhallConnection(url, { token: conn.token });
await check.connect();
await check.request("sync", { room });
const fresh = check.rooms.get(room);
assert.equal(fresh.version, version);
assert.equal(JSON.stringify(fresh.view), kept);
check.close();
conn.close();
assert.ok(states.includes("reconnecting") && states.at(-1) === "closed", states.join(","));
// The result, read by tests/server/test_js_library.py.
process.stdout.write(
  `${JSON.stringify({ room, moves, version, events, states, errors, outcome: mirror.view.outcome })}\n`,
);
