// PlayhallConnection's bookkeeping with a scripted socket in place of the network: which
// requests go out when (hello, sync on a gap and after a failed diff, re-sends after a drop),
// and what the mirrors hold. tests/js/live_game.mjs drives the same class against the real
// server (tests/server/test_js_library.py).

import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";

import {
  decodeFrame,
  encode,
  Float,
  PlayhallConnection,
  PlayhallError,
} from "../../clients/playhall_web/static/lib/playhall.js";

/** A WebSocket stand-in: records what the library sends; the test plays the server. */
class ScriptedSocket {
  static all = [];

  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closed = null;
    ScriptedSocket.all.push(this);
    queueMicrotask(() => this.onopen?.());
  }

  send(frame) {
    this.sent.push(decodeFrame(frame));
  }

  close(code, reason) {
    this.closed = { code, reason };
  }

  /** The server sends a message. */
  push(message) {
    this.onmessage({ data: encode(message).buffer });
  }

  /** The server closes the connection. */
  drop(code, reason = "") {
    this.onclose({ code, reason });
  }

  last(type) {
    return this.sent.filter((m) => m.t === type).at(-1);
  }

  reply(request, fields = {}) {
    this.push({ t: "ok", re: request.id, ...fields });
  }
}

async function until(predicate, what, ms = 2000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => {
      setTimeout(resolve, 1);
    });
  }
}

const HELLO = {
  player: "p1",
  name: "ann",
  protocol: 1,
  server: "playhall/test",
  rooms: [],
  limits: { max_frame: 65536, rate: new Float(40), burst: 80 },
};
const VIEW = {
  room: "r1",
  status: "playing",
  you: 0,
  moves: [{ type: "score" }],
  state: { turn: 0, scores: [0, 0] },
};

async function connected(options = {}) {
  ScriptedSocket.all = [];
  const conn = new PlayhallConnection("ws://test/", {
    WebSocket: ScriptedSocket,
    backoff: { initial: 1, max: 4 },
    ...options,
  });
  const first = conn.connect();
  await until(() => ScriptedSocket.all[0]?.last("hello"), "hello");
  const ws = ScriptedSocket.all[0];
  ws.reply(ws.last("hello"), { ...HELLO, token: "p1.secret" });
  await first;
  return { conn, ws };
}

function snapshot(ws, version = 2, view = VIEW) {
  ws.push({
    t: "snapshot",
    room: "r1",
    version,
    view: structuredClone(view),
    presence: [true, true],
    events: [],
  });
}

let open = [];
afterEach(() => {
  for (const conn of open) conn.close();
  open = [];
});
async function start(options) {
  const made = await connected(options);
  open.push(made.conn);
  return made;
}

describe("PlayhallConnection", () => {
  test("hello carries the protocol, token and name; the reply sets the player", async () => {
    const { conn, ws } = await start({ token: "old.token", name: "ann" });
    const hello = ws.sent[0];
    assert.deepEqual(
      { t: hello.t, protocol: hello.protocol, token: hello.token, name: hello.name },
      { t: "hello", protocol: [1], token: "old.token", name: "ann" },
    );
    assert.equal(conn.state, "open");
    assert.equal(conn.player, "p1");
    assert.equal(conn.token, "p1.secret");
  });

  test("requests made before the hello wait for it, in order", async () => {
    ScriptedSocket.all = [];
    const conn = new PlayhallConnection("ws://test/", { WebSocket: ScriptedSocket });
    open.push(conn);
    const games = conn.request("games");
    const rooms = conn.request("rooms", { game: "mantis" });
    conn.connect();
    await until(() => ScriptedSocket.all[0]?.last("hello"), "hello");
    const ws = ScriptedSocket.all[0];
    assert.deepEqual(
      ws.sent.map((m) => m.t),
      ["hello"],
    );
    ws.reply(ws.last("hello"), HELLO);
    await until(() => ws.last("rooms"), "the waiting requests");
    assert.deepEqual(ws.sent.map((m) => m.t).slice(0, 3), ["hello", "games", "rooms"]);
    ws.reply(ws.last("games"), { games: [] });
    ws.push({ t: "error", re: ws.last("rooms").id, code: "bad_message", reason: "nope" });
    assert.deepEqual((await games).games, []);
    await assert.rejects(rooms, (err) => err instanceof PlayhallError && err.code === "bad_message");
  });

  test("a snapshot then an update from the held version: the diff is applied", async () => {
    const { conn, ws } = await start();
    const seen = [];
    conn.on("event", ({ event }) => seen.push(event.type));
    snapshot(ws);
    ws.push({
      t: "update",
      room: "r1",
      from: 2,
      to: 3,
      diff: [
        ["set", ["state", "turn"], 1],
        ["set", ["moves"], []],
      ],
      events: [{ type: "flip" }],
    });
    const mirror = conn.rooms.get("r1");
    assert.equal(mirror.version, 3);
    assert.equal(mirror.view.state.turn, 1);
    assert.deepEqual(mirror.view.moves, []);
    assert.deepEqual(seen, ["flip"]);
    // One it already has is ignored.
    ws.push({ t: "update", room: "r1", from: 2, to: 3, diff: [["set", ["state", "turn"], 7]], events: [] });
    assert.equal(mirror.view.state.turn, 1);
    assert.equal(ws.last("sync"), undefined);
  });

  test("a gap brings one sync with the held version", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    ws.push({ t: "update", room: "r1", from: 3, to: 4, diff: [], events: [] });
    ws.push({ t: "update", room: "r1", from: 4, to: 5, diff: [], events: [] });
    const syncs = ws.sent.filter((m) => m.t === "sync");
    assert.equal(syncs.length, 1);
    assert.equal(syncs[0].room, "r1");
    assert.equal(syncs[0].version, 2);
    assert.equal(conn.rooms.get("r1").version, 2);
  });

  test("a diff that does not apply drops the view and syncs without a version", async () => {
    const { conn, ws } = await start();
    const errors = [];
    conn.on("error", (e) => errors.push(e.code));
    snapshot(ws);
    ws.push({ t: "update", room: "r1", from: 2, to: 3, diff: [["del", ["nope"]]], events: [] });
    const mirror = conn.rooms.get("r1");
    assert.equal(mirror.view, null);
    assert.equal(mirror.version, null);
    assert.deepEqual(errors, ["diff_failed"]);
    const sync = ws.last("sync");
    assert.equal(sync.room, "r1");
    assert.equal(Object.hasOwn(sync, "version"), false);
    snapshot(ws, 3, { ...VIEW, status: "finished" });
    assert.equal(mirror.view.status, "finished");
  });

  test("after close 1012: reconnect, hello with the token, sync, re-send the move with its mid", async () => {
    const { conn, ws } = await start();
    const states = [];
    conn.on("status", ({ state }) => states.push(state));
    snapshot(ws);
    const move = conn.move("r1", { type: "score" });
    const chat = conn.request("chat", { room: "r1", text: "hi" });
    const sentMove = ws.last("move");
    assert.equal(sentMove.version, 2);
    ws.drop(1012, "server restarting");
    await assert.rejects(chat, (err) => err.code === "disconnected");
    await until(() => ScriptedSocket.all[1]?.last("hello"), "the second hello");
    const ws2 = ScriptedSocket.all[1];
    assert.equal(ws2.last("hello").token, "p1.secret");
    assert.equal(ws2.sent.length, 1); // nothing before the hello's reply
    ws2.reply(ws2.last("hello"), HELLO);
    assert.deepEqual(ws2.sent.map((m) => m.t).slice(1, 3), ["sync", "move"]);
    assert.deepEqual({ ...ws2.last("sync") }, { t: "sync", id: ws2.last("sync").id, room: "r1", version: 2 });
    const again = ws2.last("move");
    assert.equal(again.mid, sentMove.mid);
    assert.equal(again.version, 2);
    ws2.reply(again, { room: "r1", version: 3 });
    assert.equal((await move).version, 3);
    assert.deepEqual(states, ["reconnecting", "open"]);
  });

  test("close 1009 is a client bug: no reconnect, waiting requests fail", async () => {
    const { conn, ws } = await start();
    const pending = conn.request("games");
    ws.drop(1009, "too big");
    await assert.rejects(pending, (err) => err.code === "closed");
    assert.equal(conn.state, "closed");
    await new Promise((resolve) => {
      setTimeout(resolve, 20);
    });
    assert.equal(ScriptedSocket.all.length, 1);
  });

  test("rate_limited is retried with the same fields", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    const move = conn.move("r1", { type: "score" }, { mid: "m-7" });
    const first = ws.last("move");
    ws.push({ t: "error", re: first.id, code: "rate_limited", reason: "slow down" });
    await until(() => ws.sent.filter((m) => m.t === "move").length === 2, "the retry");
    const second = ws.last("move");
    assert.equal(second.mid, "m-7");
    assert.notEqual(second.id, first.id);
    ws.reply(second, { room: "r1", version: 3 });
    assert.equal((await move).version, 3);
  });

  test("a move refused store_failed, overloaded or draining is sent again with its mid", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    const move = conn.move("r1", { type: "score" }, { mid: "m-8" });
    for (const [index, code] of ["store_failed", "overloaded", "draining"].entries()) {
      const sent = ws.last("move");
      ws.push({ t: "error", re: sent.id, code, reason: "not now" });
      await until(() => ws.sent.filter((m) => m.t === "move").length === index + 2, "a retry");
    }
    const last = ws.last("move");
    assert.equal(last.mid, "m-8");
    ws.reply(last, { room: "r1", version: 3 });
    assert.equal((await move).version, 3);
  });

  test("the connection's own sync refused draining is asked again", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    ws.push({ t: "update", room: "r1", from: 7, to: 8, diff: [], events: [] }); // a gap
    await until(() => ws.last("sync"), "a sync");
    const first = ws.last("sync");
    ws.push({ t: "error", re: first.id, code: "draining", reason: "moving" });
    await until(() => ws.sent.filter((m) => m.t === "sync").length === 2, "the sync again");
    assert.equal(ws.last("sync").room, "r1");
    assert.equal(conn.rooms.get("r1").syncing, true);
  });

  test("a move refused for what it is (illegal_move) is not sent again", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    const move = conn.move("r1", { type: "score" });
    ws.push({ t: "error", re: ws.last("move").id, code: "illegal_move", reason: "no" });
    await assert.rejects(move, (err) => err.code === "illegal_move");
    assert.equal(ws.sent.filter((m) => m.t === "move").length, 1);
  });

  /** A connection whose first hello is out and unanswered, with the error codes it emits. */
  async function helloOut(options) {
    ScriptedSocket.all = [];
    const conn = new PlayhallConnection("ws://test/", { WebSocket: ScriptedSocket, ...options });
    open.push(conn);
    const errors = [];
    conn.on("error", (e) => errors.push(e.code));
    const first = conn.connect();
    await until(() => ScriptedSocket.all[0]?.last("hello"), "hello");
    return { conn, errors, first, ws: ScriptedSocket.all[0] };
  }

  /** Refuse the last hello with `code` and `retryAfter` (seconds); resolves with the ms until
   * the next hello. */
  async function refusedFor(ws, code, reason, retryAfter) {
    const refused = ws.last("hello");
    const at = Date.now();
    ws.push({ t: "error", re: refused.id, code, reason, retry_after: new Float(retryAfter) });
    await until(() => ws.last("hello").id !== refused.id, `the hello after ${code}`);
    return Date.now() - at;
  }

  test("a refused token: hello again as a new player", async () => {
    const { conn, errors, first, ws } = await helloOut({ token: "bad.token" });
    ws.push({ t: "error", re: ws.last("hello").id, code: "bad_token", reason: "unknown token" });
    const again = ws.last("hello");
    assert.equal(Object.hasOwn(again, "token"), false);
    ws.reply(again, { ...HELLO, token: "p1.new" });
    await first;
    assert.equal(conn.token, "p1.new");
    assert.deepEqual(errors, ["bad_token"]);
  });

  test("a host token goes in every hello instead of the player token; a function is asked each time", async () => {
    let asked = 0;
    const hostToken = async () => `site.jwt.${++asked}`;
    const { ws } = await start({ token: "old.token", hostToken });
    assert.equal(ws.sent[0].host_token, "site.jwt.1");
    assert.equal(Object.hasOwn(ws.sent[0], "token"), false);
    ws.drop(1012, "server restarting");
    await until(() => ScriptedSocket.all[1]?.last("hello"), "the second hello");
    assert.equal(ScriptedSocket.all[1].last("hello").host_token, "site.jwt.2");
  });

  test("a refused host token: the connection closes and connect() rejects", async () => {
    const { conn, errors, first, ws } = await helloOut({ hostToken: "expired.jwt" });
    assert.equal(ws.last("hello").host_token, "expired.jwt");
    ws.push({ t: "error", re: ws.last("hello").id, code: "bad_host_token", reason: "expired" });
    await assert.rejects(first, (err) => err.code === "bad_host_token");
    assert.equal(conn.state, "closed");
    assert.deepEqual(errors, ["bad_host_token"]);
  });

  test("a hello refused for a while (rate_limited, store_failed) is said again on the same socket", async () => {
    const { conn, errors, first, ws } = await helloOut({ backoff: { initial: 1, max: 4 } });
    const refused = ws.last("hello");
    ws.push({ t: "error", re: refused.id, code: "store_failed", reason: "Redis is unreachable" });
    await until(() => ws.last("hello").id !== refused.id, "the hello said again");
    // The server's retry_after is waited out before the next one.
    const waited = await refusedFor(ws, "rate_limited", "too many new players", 0.15);
    assert.ok(waited >= 140, `said again after ${waited} ms`);
    ws.reply(ws.last("hello"), { ...HELLO, token: "p1.new" });
    await first;
    assert.equal(conn.state, "open");
    assert.equal(ScriptedSocket.all.length, 1);
    assert.deepEqual(errors, ["store_failed", "rate_limited"]);
  });

  test("a refused hello waits its retry_after spread upwards, so clients refused together part", async () => {
    const { first, ws } = await helloOut({ backoff: { initial: 1, max: 4 } });
    const random = Math.random;
    Math.random = () => 0.999; // the most a pause may be spread: a fifth over retry_after
    try {
      const waited = await refusedFor(ws, "store_failed", "Redis is unreachable", 0.2);
      // (a timer never fires early: 200 ms without the spread, about 240 with it)
      assert.ok(waited >= 230, `said again after ${waited} ms`);
    } finally {
      Math.random = random;
    }
    ws.reply(ws.last("hello"), { ...HELLO, token: "p1.new" });
    await first;
  });

  test("the lobby mirror: watch reply, pushes, order, and watching again after a reconnect", async () => {
    const { conn, ws } = await start();
    const room = (id, status, created) => ({ room: id, game: "mantis", status, created: new Float(created) });
    const watch = conn.request("lobby.watch", { game: "mantis" });
    ws.reply(ws.last("lobby.watch"), { rooms: [room("a", "playing", 1), room("b", "waiting", 2)] });
    await watch;
    ws.push({ t: "lobby", rooms: [room("c", "waiting", 3)] });
    ws.push({ t: "lobby", removed: ["b"] });
    assert.deepEqual(
      conn.lobbyList().map((r) => r.room),
      ["c", "a"],
    );
    ws.drop(1006);
    await until(() => ScriptedSocket.all[1]?.last("hello"), "the second hello");
    const ws2 = ScriptedSocket.all[1];
    ws2.reply(ws2.last("hello"), HELLO);
    assert.equal(ws2.last("lobby.watch").game, "mantis");
  });

  test("a lobby push saying more reads the listing again, which replaces the mirror", async () => {
    const { conn, ws } = await start();
    const room = (id, created) => ({
      room: id,
      game: "mantis",
      status: "waiting",
      created: new Float(created),
    });
    const watch = conn.request("lobby.watch", { game: "mantis" });
    const first = ws.last("lobby.watch");
    ws.reply(first, { rooms: [room("a", 1), room("b", 2)] });
    await watch;
    ws.push({ t: "lobby", rooms: [room("c", 3)] });
    assert.equal(ws.last("lobby.watch").id, first.id); // no "more": nothing asked
    // "b" left while the server could not tell: the push does not name it.
    ws.push({ t: "lobby", rooms: [room("c", 3), room("a", 1)], more: true });
    const again = ws.last("lobby.watch");
    assert.notEqual(again.id, first.id);
    assert.equal(again.game, "mantis");
    ws.reply(again, { rooms: [room("c", 3), room("a", 1)] });
    await until(() => !conn.lobby.has("b"), "the mirror read again");
    assert.deepEqual(
      conn.lobbyList().map((r) => r.room),
      ["c", "a"],
    );
  });

  test("a private room's spectator syncs with the code after a reconnect; a player without", async () => {
    const { conn, ws } = await start();
    const join = conn.request("join", { code: "ABC123", watch: true });
    snapshot(ws, 2, { ...VIEW, you: null, moves: [] });
    ws.reply(ws.last("join"), { room: "r1", seat: null, version: 2, chat: [] });
    await join;
    assert.equal(conn.rooms.get("r1").code, "ABC123");
    ws.push({
      t: "snapshot",
      room: "r2",
      version: 3,
      view: { ...VIEW, room: "r2" },
      presence: [],
      events: [],
    });
    const seated = conn.request("join", { room: "r2", code: "XYZ789" });
    ws.reply(ws.last("join"), { room: "r2", seat: 0, version: 3, chat: [] });
    await seated;
    ws.drop(1012);
    await until(() => ScriptedSocket.all[1]?.last("hello"), "the second hello");
    const ws2 = ScriptedSocket.all[1];
    ws2.reply(ws2.last("hello"), HELLO);
    const syncs = ws2.sent
      .filter((m) => m.t === "sync")
      .map(({ room, version, code }) => ({ room, version, code }));
    assert.deepEqual(syncs, [
      { room: "r1", version: 2, code: "ABC123" },
      { room: "r2", version: 3, code: undefined },
    ]);
  });

  test("the mirror keeps presence: who is here, who watches, when a stand-in is due", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    const due = new Float(1800000000.5);
    ws.push({
      t: "presence",
      room: "r1",
      presence: [true, false],
      watching: 2,
      watchers: ["abe", "zoe"],
      stand_in_at: [null, due],
    });
    const mirror = conn.rooms.get("r1");
    assert.deepEqual(mirror.presence, [true, false]);
    assert.equal(mirror.watching, 2);
    assert.deepEqual(mirror.watchers, ["abe", "zoe"]);
    assert.equal(Number(mirror.standInAt[1]), 1800000000.5);
    assert.equal(mirror.standInAt[0], null);
  });

  test("the clock offset comes from the ping with the shortest round trip", async () => {
    const { conn, ws } = await start();
    const pings = () => ws.sent.filter((m) => m.t === "ping");
    await until(() => pings().length === 1, "the first ping");
    // A slow first answer (the page was busy): its midpoint is off by a lot.
    await new Promise((resolve) => {
      setTimeout(resolve, 120);
    });
    ws.reply(pings()[0], { time: new Float(Date.now() / 1000 + 100) });
    await until(() => pings().length === 2, "the second ping", 3000);
    ws.reply(pings()[1], { time: new Float(Date.now() / 1000 + 5) });
    await until(() => Math.abs(conn.clockOffset - 5) < 0.05, "the offset of the quick ping");
    await until(() => pings().length === 3, "the third ping", 3000);
    await new Promise((resolve) => {
      setTimeout(resolve, 120);
    });
    ws.reply(pings()[2], { time: new Float(Date.now() / 1000 - 50) });
    assert.ok(Math.abs(conn.clockOffset - 5) < 0.05, `kept ${conn.clockOffset}`);
  });

  test("a reconnect's hello says no name: it would undo a rename made elsewhere", async () => {
    const { ws } = await start({ name: "ann" });
    assert.equal(ws.last("hello").name, "ann");
    ws.drop(1006);
    await until(() => ScriptedSocket.all[1]?.last("hello"), "the second hello");
    const again = ScriptedSocket.all[1].last("hello");
    assert.equal(again.token, "p1.secret");
    assert.equal(Object.hasOwn(again, "name"), false);
  });

  test("a handshake that fails with an error and no close is retried (Node's WebSocket)", async () => {
    const { ws } = await start();
    ws.drop(1006);
    await until(() => ScriptedSocket.all[1], "the second socket");
    const failing = ScriptedSocket.all[1];
    failing.readyState = 0;
    failing.onerror?.({});
    await until(() => ScriptedSocket.all[2]?.last("hello"), "a third socket saying hello");
  });

  test("leave drops the mirror; a move without a view is refused here", async () => {
    const { conn, ws } = await start();
    snapshot(ws);
    const leave = conn.request("leave", { room: "r1" });
    ws.reply(ws.last("leave"), { room: "r1" });
    await leave;
    assert.equal(conn.rooms.has("r1"), false);
    await assert.rejects(conn.move("r1", { type: "score" }), (err) => err.code === "not_viewing");
  });
});

describe("PlayhallConnection and odd pushes", () => {
  test("unknown push types are ignored, inherited names included", async () => {
    const { conn, ws } = await start();
    const errors = [];
    conn.on("error", (e) => errors.push(e.code));
    for (const t of ["nope", "constructor", "toString", "__proto__"]) ws.push({ t, room: "r1" });
    assert.deepEqual(errors, []);
    assert.equal(conn.state, "open");
  });

  /** A create refused with an unknown outcome naming `room` (and `extra`): the create's
   * promise, and the join the library sends to find out. */
  async function unknownCreate(conn, ws, fields, room, extra = {}) {
    const made = conn.request("create", { game: "mantis", seats: 2, ...fields });
    await until(() => ws.last("create"), "the create");
    ws.push({
      t: "error",
      re: ws.last("create").id,
      code: "store_failed",
      reason: "unknown outcome",
      room,
      ...extra,
    });
    await until(() => ws.last("join"), "the join");
    return { made, join: ws.last("join") };
  }

  test("a create whose outcome is unknown joins the room it names: made, it resolves", async () => {
    const { conn, ws } = await start();
    const code = "K7QXM4PAZR2DHNW";
    const { made, join } = await unknownCreate(conn, ws, { private: true }, "r1", { join_code: code });
    assert.deepEqual({ ...join }, { t: "join", id: join.id, room: "r1" });
    snapshot(ws, 1, { ...VIEW, status: "waiting" });
    ws.reply(join, { room: "r1", seat: 0, version: 1, chat: [] });
    assert.deepEqual({ ...(await made) }, { t: "ok", room: "r1", code, seat: 0, version: 1 });
    assert.equal(conn.rooms.get("r1").code, code);
  });

  test("a create whose outcome is unknown and whose room was not made rejects", async () => {
    const { conn, ws } = await start();
    const { made, join } = await unknownCreate(conn, ws, { sit: false }, "r2");
    assert.deepEqual({ ...join }, { t: "join", id: join.id, room: "r2", watch: true });
    ws.push({ t: "error", re: join.id, code: "no_such_room", reason: "no room 'r2'" });
    await assert.rejects(
      made,
      (err) => err instanceof PlayhallError && err.code === "store_failed" && err.reply.room === "r2",
    );
  });
});
