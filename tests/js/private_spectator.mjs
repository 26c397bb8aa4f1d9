// A spectator of a private room stays in across reconnects, through the JavaScript library over
// a real server: `node --experimental-websocket tests/js/private_spectator.mjs WS_URL MODE`.
// A player makes a private Mantis room against a server bot; a second connection joins it with
// the code alone (the seats are full: it watches). MODE "drop": the spectator's socket is
// closed under it. MODE "restart": the script prints "joined" and waits for a line on stdin
// (the driving test restarts the server meanwhile). Then the player moves, and the spectator's
// mirror must reach that version by itself. Prints one JSON line; exits non-zero on failure.
// Driven by tests/server/test_js_library.py.

import assert from "node:assert/strict";
import { createInterface } from "node:readline";

import { PlayhallConnection } from "../../clients/playhall_web/static/lib/playhall.js";
import { untilView } from "./views.mjs";

const [url, mode] = process.argv.slice(2);
// Node does not count a WebSocket still connecting as keeping the process alive: while both
// connections are between a restart and their next handshake, nothing else would.
const alive = setInterval(() => {}, 1000);

const player = new PlayhallConnection(url, { name: "host" });
await player.connect();
const { room, code } = await player.request("create", { game: "mantis", seats: 2, private: true });
await player.request("bot", { room, seat: 1 });
await player.request("start", { room });

const friend = new PlayhallConnection(url, { name: "friend" });
const states = [];
friend.on("status", ({ state }) => states.push(state));
const errors = [];
friend.on("error", (e) => errors.push(e));
await friend.connect();
const joined = await friend.request("join", { code });
assert.equal(joined.seat, null);
const seen = friend.rooms.get(room);
assert.equal(seen.code, code);

if (mode === "drop") {
  friend._ws.close(4001, "test drop");
} else {
  process.stdout.write("joined\n");
  const lines = createInterface({ input: process.stdin });
  await new Promise((resolve) => {
    lines.once("line", resolve);
  });
  lines.close();
}

const mine = player.rooms.get(room);
await untilView(player, () => mine.view && mine.view.moves.length > 0, "my turn");
const { version } = await player.move(room, mine.view.moves[0]);
await untilView(
  friend,
  () => seen.version !== null && seen.version >= version,
  "the spectator to see the move",
  20000, // through a reconnect, after a server restart
);
assert.equal(seen.view.you, null);
assert.ok(friend.rooms.has(room));
player.close();
friend.close();
clearInterval(alive);
process.stdout.write(`${JSON.stringify({ room, version, states, errors })}\n`);
