// A bot that plays any Playhall game from its legal moves, over the protocol (PROTOCOL.md
// section 14), with the JavaScript client library under Node (20.10 or later: its WebSocket).
//
//   node --experimental-websocket js_bot.mjs ws://127.0.0.1:8765/ --game mantis
//   node --experimental-websocket js_bot.mjs ws://127.0.0.1:8765/ --room ROOM
//
// It knows no rules: whenever the view says it is its turn, it sends one of the moves the view
// lists (not a template, which needs a payload, nor a resignation). Prints the outcome as JSON.

import { parseArgs } from "node:util";

import { PlayhallConnection } from "../../clients/playhall_web/static/lib/playhall.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { game: { type: "string" }, room: { type: "string" }, seats: { type: "string", default: "2" } },
});
const conn = new PlayhallConnection(positionals[0], { name: "js-bot" });
await conn.connect();

let room = values.room;
const seats = Number(values.seats);
if (room === undefined) {
  // A new room; the server's bots take the other seats.
  room = (await conn.request("create", { game: values.game, seats })).room;
  for (let seat = 1; seat < seats; seat += 1) await conn.request("bot", { room, seat });
} else {
  await conn.request("join", { room });
}
await conn.request("ready", { room, ready: true });

let sent = null; // the version a move was last sent at: wait for a newer one before the next
const outcome = await new Promise((resolve, reject) => {
  const consider = () => {
    const mirror = conn.rooms.get(room);
    const view = mirror && mirror.view;
    if (!view) return;
    if (view.status === "finished") return resolve(view.outcome);
    if (!(view.to_act || []).includes(view.you) || sent === mirror.version) return;
    const moves = view.moves.filter((m) => !m.template);
    const playable = moves.filter((m) => m.type !== "resign");
    const choices = playable.length > 0 ? playable : moves;
    sent = mirror.version;
    conn.move(room, choices[Math.floor(Math.random() * choices.length)]).catch((err) => {
      // stale: the room moved on first (an automatic step); its new view brings another turn.
      if (err.code !== "stale") reject(err);
    });
  };
  conn.on("view", ({ room: changed }) => changed === room && consider());
  consider();
});
conn.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
