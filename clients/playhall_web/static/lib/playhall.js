// Playhall's JavaScript client library: the protocol layer of a web client, with no dependency
// on any page. Plain ES modules, no build step; the msgpack codec underneath is the vendored
// @msgpack/msgpack 3.1.3. The protocol is protocol/PROTOCOL.md; this is a thin mirror of it.
//
//   import { PlayhallConnection, defaultUrl, Float } from "./lib/playhall.js";
//   const conn = new PlayhallConnection(defaultUrl(), { token, name });
//   conn.on("status", ({ state }) => ...);      // "connecting" | "open" | "reconnecting" | "closed"
//   conn.on("hello", (reply) => save(conn.token));
//   conn.on("view", ({ room, mirror, kind, events }) => draw(mirror.view));
//   conn.on("event", ({ room, version, event }) => log(event));
//   conn.on("presence" | "chat" | "lobby" | "left" | "error", ...);
//   await conn.connect();                        // the first hello; reconnects by itself later
//   const games = (await conn.request("games")).games;
//   const { room } = await conn.request("create", { game: "mantis", seats: 2 });
//   await conn.move(room, conn.rooms.get(room).view.moves[0]);   // version and mid filled in
//
// Requests resolve with the `ok` map and reject with a PlayhallError (`code`, `reason`,
// `reply`). While the connection is down they wait; after a reconnect the library says hello
// with the token, syncs every room it views from the version it holds, and re-sends the
// unanswered requests that are safe to repeat (a move with its `mid`). `conn.rooms` maps a room
// id to its RoomMirror {version, view, presence, chat, seat}, kept up to date from snapshots and
// diffs; a gap or a diff that does not apply brings a `sync`.
//
// `await verifyRecord(record)` checks a finished room's game record (`conn.request("record",
// { room })`'s `record`) with WebCrypto: everything but the engine's replay (verify.js).
//
// Values: msgpack ints are numbers (BigInt beyond 2^53-1), floats are Float objects (f.value,
// or any arithmetic); send a whole float as new Float(1). Undefined fields are left out.

export { CodecError, Float, decode, decodeFrame, encode, encodeFrame, toNumber } from "./codec.js";
export { DiffError, applyDiff, copyValue } from "./diff.js";
export { Emitter } from "./emitter.js";
export {
  PROTOCOL_VERSIONS,
  PlayhallConnection,
  PlayhallError,
  RESENDABLE,
  RoomMirror,
  defaultUrl,
} from "./connection.js";
export { NOT_CHECKED, commitmentOf, roomKey, verifyRecord } from "./verify.js";
