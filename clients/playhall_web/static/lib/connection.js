// A Playhall connection that keeps itself going (PROTOCOL.md sections 2, 3, 5, 8, 9 and 14):
// requests matched to replies by id, `hello` with the player token, a mirror of every room the
// connection views ({version, view, presence, chat}) kept up to date from snapshots and diffs,
// `sync` with the held version on a gap and without one when a diff does not apply, reconnection
// with backoff after any close (1012 included) followed by `hello` (said again after a pause when
// refused for a while: rate_limited, store_failed), a `sync` of every room and
// the re-sending of unanswered requests that are safe to repeat (a move keeps its `mid`).
// No dependency on any page: it needs a WebSocket class (the browser's, or one passed in).

import { CodecError, decodeFrame, encodeFrame } from "./codec.js";
import { applyDiff, DiffError } from "./diff.js";
import { Emitter } from "./emitter.js";

export const PROTOCOL_VERSIONS = [1];

/** Requests that are harmless to send again after a drop (PROTOCOL.md section 9). Not: create
 * (a second room), chat (said twice), bot and start (refused the second time). */
/** Refusals of a move (or of the connection's own sync) that say nothing about it (PROTOCOL.md
 * section 10): sent again. */
const MOVE_AGAIN = new Set(["store_failed", "overloaded", "draining"]);

export const RESENDABLE = new Set([
  "move",
  "join",
  "sync",
  "leave",
  "ready",
  "rematch",
  "games",
  "rooms",
  "ping",
  "lobby.watch",
  "lobby.unwatch",
]);

/** Refusals of a hello that say nothing about the hello itself: it is said again later. */
const HELLO_AGAIN = new Set(["rate_limited", "store_failed", "internal"]);

const MAX_ID = Number.MAX_SAFE_INTEGER;
// A pause before trying again (a reconnect, a hello said again) is spread by up to this share
// of it: the clients of a server process that died, or refused together while Redis is away,
// would otherwise all come back at the same instants, in waves on the balancer and the servers.
const JITTER = 0.2;

/** `delay` times a factor drawn between 1 - JITTER and 1 + JITTER. */
function spread(delay) {
  return delay * (1 - JITTER + 2 * JITTER * Math.random());
}

/** The pushes this library handles, and the method for each. */
const PUSHES = {
  snapshot: "_snapshot",
  update: "_update",
  presence: "_presence",
  chat: "_chat",
  lobby: "_lobbyPush",
};
const CHAT_KEPT = 200;

/** A refused request: `code` as in PROTOCOL.md section 10 (or a game's own), `reason` for
 * people, `reply` the whole error map (`version` on refused moves). Client-side codes:
 * `disconnected` (dropped, not safe to resend), `closed` (close() was called),
 * `bad_request` (the fields cannot be encoded), `not_viewing` (a move in a room without a
 * view). */
export class PlayhallError extends Error {
  constructor(code, reason, reply = null) {
    super(`${code}: ${reason}`);
    this.name = "PlayhallError";
    this.code = code;
    this.reason = reason;
    this.reply = reply;
    this.version = reply && Object.hasOwn(reply, "version") ? reply.version : undefined;
  }
}

/** What this connection knows of one room it views. Read-only for the page. */
export class RoomMirror {
  constructor(room) {
    this.room = room;
    this.version = null; // the version of `view`, null while there is none
    this.view = null; // the room view (PROTOCOL.md section 6)
    this.presence = [];
    this.watching = 0; // people viewing without a seat (the last presence push)
    this.watchers = []; // the names of the first of them
    this.standInAt = []; // per seat: server time (Unix s) an absent player's stand-in is due, or null
    this.chat = []; // the join reply's history, then every chat push
    this.code = null; // the join code this connection used or was given
    this.syncing = false;
  }

  /** This player's seat, null when watching. */
  get seat() {
    return this.view ? this.view.you : null;
  }
}

/** The websocket URL of the server a page was loaded from: the page's own folder (behind a
 * proxy that serves the page under /play/, the websocket is /play/ too). */
export function defaultUrl(location = globalThis.location) {
  const folder = location.pathname.replace(/[^/]*$/, "") || "/";
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${folder}`;
}

function newMid() {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function lobbyOrder(a, b) {
  const waiting = (a.status === "waiting" ? 0 : 1) - (b.status === "waiting" ? 0 : 1);
  return waiting || Number(b.created) - Number(a.created);
}

export class PlayhallConnection extends Emitter {
  /**
   * @param {string} url the server's websocket URL (defaultUrl() on the page it served)
   * @param {object} options token (the stored player token, or null for a new player), hostToken
   *   (instead of a player token: the host site's signed token, or a function giving a fresh one,
   *   or a promise of one, for every hello; PROTOCOL.md section 3), name (display name, said by
   *   the first hello; `rename` changes it later), WebSocket (the class to use; the global one by
   *   default), backoff ({initial, max} in ms: 50 doubling to 2000, each pause spread by
   *   ±20 %), rateRetries (how often a `rate_limited` request is sent again before it fails:
   *   5), moveRetries (how often a move refused `store_failed`, `overloaded` or `draining` is
   *   sent again, with its mid, before it fails: 8, about 10 s)
   */
  constructor(url, options = {}) {
    super();
    this.url = url;
    this.token = options.token ?? null;
    this.hostToken = options.hostToken ?? null;
    this.name = options.name;
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.backoff = { initial: 50, max: 2000, ...(options.backoff ?? {}) };
    this.rateRetries = options.rateRetries ?? 5;
    this.moveRetries = options.moveRetries ?? 8;
    this.state = "idle";
    this.player = null;
    this.limits = null;
    this.helloRooms = [];
    this.serverVersion = null;
    this.publicUrl = null; // the hello reply's public_url: where players open the page
    this.rooms = new Map();
    this.lobby = new Map();
    this.clockOffset = 0; // server clock minus this clock, in seconds (from pings after each hello)
    this._clockRound = 0; // the hello whose pings measure it now
    this.attempt = 0;
    this._ws = null;
    this._nextId = 1;
    this._pending = new Map(); // id -> entry, sent on this socket
    this._queue = []; // entries waiting for an open connection
    this._timer = null;
    this._watching = null; // the lobby.watch fields to repeat after a reconnect
    this._firstHello = null;
  }

  // -- the page's API ----------------------------------------------------------------------------

  /** Connect (and keep reconnecting). Resolves with the first hello reply. */
  connect() {
    if (!this._firstHello) {
      this._firstHello = {};
      this._firstHello.promise = new Promise((resolve, reject) => {
        this._firstHello.resolve = resolve;
        this._firstHello.reject = reject;
      });
      this._setState("connecting");
      this._open();
    }
    return this._firstHello.promise;
  }

  /** Close for good: no reconnect; waiting requests fail with `closed`. */
  close() {
    if (this.state === "closed") return;
    clearTimeout(this._timer);
    const ws = this._ws;
    this._ws = null;
    if (ws) ws.close(1000, "bye");
    this._failAll("closed", "the connection was closed");
    this._setState("closed");
  }

  /** Send a request (PROTOCOL.md section 4): resolves with the `ok` map, rejects with a
   * PlayhallError. Waits while the connection is not open. */
  request(type, fields = {}, { resend = RESENDABLE.has(type) } = {}) {
    return new Promise((resolve, reject) => {
      if (this.state === "closed") {
        reject(new PlayhallError("closed", "the connection was closed"));
        return;
      }
      const entry = { type, fields, resolve, reject, resend, tries: 0 };
      if (this.state === "open") this._send(entry);
      else this._queue.push(entry);
    });
  }

  /** A move in a room this connection views, at the mirror's version, with a fresh `mid`
   * (kept for every retry of this move). */
  move(room, move, { mid = newMid(), version } = {}) {
    const at = version ?? this.rooms.get(room)?.version;
    if (at === null || at === undefined) {
      return Promise.reject(new PlayhallError("not_viewing", `no view of room ${room}`));
    }
    return this.request("move", { room, version: at, mid, move });
  }

  /** The server's clock now, in Unix seconds (for counting down to a view's `deadline`). */
  serverNow() {
    return Date.now() / 1000 + this.clockOffset;
  }

  /** The watched lobby's rooms in the server's order: waiting first, then newest first. */
  lobbyList() {
    return [...this.lobby.values()].sort(lobbyOrder);
  }

  // -- the socket --------------------------------------------------------------------------------

  _setState(state, details = {}) {
    this.state = state;
    this.emit("status", { state, ...details });
  }

  _open() {
    let ws;
    try {
      ws = new this.WebSocket(this.url);
    } catch (err) {
      this._closed(null, 1006, String(err));
      return;
    }
    ws.binaryType = "arraybuffer";
    this._ws = ws;
    ws.onopen = () => {
      if (this._ws === ws) this._hello();
    };
    ws.onmessage = (ev) => {
      if (this._ws === ws) this._received(ev.data);
    };
    ws.onclose = (ev) => this._closed(ws, ev.code, ev.reason);
    // A browser follows an error with a close; Node's WebSocket does not when the handshake
    // fails (a server restarting refuses the connection): an error before the socket opened
    // is taken as its close. A close that still comes is for a socket no longer in use.
    ws.onerror = () => {
      if (ws.readyState === 0) this._closed(ws, 1006, "connection failed");
    };
  }

  _closed(ws, code, reason) {
    if (ws !== this._ws || this.state === "closed") return;
    this._ws = null;
    // Unanswered requests: the ones safe to repeat go out again after the reconnect, first.
    const unanswered = [...this._pending.values()];
    this._pending.clear();
    const again = [];
    for (const entry of unanswered) {
      if (entry.type === "hello") continue;
      if (entry.resend) again.push(entry);
      else entry.reject(new PlayhallError("disconnected", "the connection dropped before the reply"));
    }
    this._queue = [...again, ...this._queue];
    for (const mirror of this.rooms.values()) mirror.syncing = false;
    if (code === 1009) {
      // A message of ours was too big: a client bug that reconnecting would repeat.
      this._failAll("closed", `closed by the server: ${code} ${reason}`);
      this._setState("closed", { code, reason });
      this._firstHello?.reject?.(new PlayhallError("closed", reason || "message too big"));
      return;
    }
    const slow = code === 1008 ? 4 : 1; // flooding: slow down before coming back
    const delay = this._nextBackoff() * slow;
    this._setState("reconnecting", { attempt: this.attempt, delay, code, reason });
    this._timer = setTimeout(() => {
      if (this.state === "reconnecting") this._open();
    }, spread(delay));
  }

  _failAll(code, reason) {
    const all = [...this._pending.values(), ...this._queue];
    this._pending.clear();
    this._queue = [];
    for (const entry of all) entry.reject(new PlayhallError(code, reason));
  }

  _send(entry) {
    const id = this._nextId;
    this._nextId = id >= MAX_ID ? 1 : id + 1;
    const message = { t: entry.type, id };
    for (const key of Object.keys(entry.fields)) {
      if (key !== "t" && key !== "id") message[key] = entry.fields[key];
    }
    let frame;
    try {
      frame = encodeFrame(message);
    } catch (err) {
      entry.reject(new PlayhallError("bad_request", err.message));
      return;
    }
    this._pending.set(id, entry);
    this._ws.send(frame);
  }

  _hello() {
    if (typeof this.hostToken !== "function") {
      this._sayHello(this.hostToken);
      return;
    }
    // A fresh token for every hello: a reconnect may come after the last one expired.
    const ws = this._ws;
    Promise.resolve()
      .then(() => this.hostToken())
      .then(
        (token) => {
          if (this._ws === ws) this._sayHello(token);
        },
        (err) => this._helloRefused(new PlayhallError("bad_host_token", `hostToken failed: ${err}`)),
      );
  }

  _sayHello(hostToken) {
    const fields = { protocol: PROTOCOL_VERSIONS };
    if (hostToken !== null) fields.host_token = hostToken;
    else if (this.token) fields.token = this.token;
    // The name given is said by the first hello (and by a new player's): a reconnect's would
    // rename the player back, undoing a rename made since on another connection.
    if (this.name && (this.player === null || (hostToken === null && !this.token))) fields.name = this.name;
    this._send({
      type: "hello",
      fields,
      resend: false,
      tries: 0,
      resolve: (reply) => this._helloed(reply),
      reject: (err) => {
        if (err.code === "bad_token" && this.token) {
          this.token = null;
          this.emit("error", { code: "bad_token", reason: err.reason });
          this._hello(); // as a new player
        } else if (err.code === "unsupported_version" || err.code === "bad_host_token") {
          this._helloRefused(err);
        } else if (HELLO_AGAIN.has(err.code)) {
          // Nothing wrong with the hello (too many new players from this address, Redis
          // away): say it again on this socket, after the server's retry_after if it gave one.
          this.emit("error", { code: err.code, reason: err.reason });
          this._helloLater(err.reply?.retry_after);
        } else {
          this.emit("error", { code: err.code, reason: err.reason });
        }
      },
    });
  }

  /** A hello that saying again cannot help: closed, and the first `connect()` rejected. */
  _helloRefused(err) {
    if (err.code === "bad_host_token") this.emit("error", { code: err.code, reason: err.reason });
    this.close();
    this._firstHello?.reject?.(err);
  }

  /** The next pause in ms of one backoff (doubling from `backoff.initial` to `backoff.max`,
   * started again by a successful hello). */
  _nextBackoff() {
    const delay = Math.min(this.backoff.initial * 2 ** this.attempt, this.backoff.max);
    this.attempt += 1;
    return delay;
  }

  _helloLater(retryAfter) {
    const ws = this._ws;
    // Spread as a reconnect's pause is, and never under the server's retry_after (spread
    // upwards: clients refused together, Redis away, are given the same one).
    const delay = Math.max(
      spread(this._nextBackoff()),
      1000 * (Number(retryAfter) || 0) * (1 + JITTER * Math.random()),
    );
    clearTimeout(this._timer);
    this._timer = setTimeout(() => {
      if (ws !== null && this._ws === ws) this._hello();
    }, delay);
  }

  _helloed(reply) {
    this.player = reply.player;
    this.name = reply.name;
    if (typeof reply.token === "string") this.token = reply.token;
    this.limits = reply.limits;
    this.helloRooms = reply.rooms;
    this.serverVersion = reply.server;
    this.publicUrl = reply.public_url ?? null; // the page's address as the server knows it
    this.attempt = 0;
    this._setState("open");
    this.emit("hello", reply);
    this._firstHello?.resolve?.(reply);
    // Catch up every room, watch the lobby again, then what waited or was left unanswered.
    for (const mirror of this.rooms.values()) this._resync(mirror, mirror.view !== null);
    if (this._watching !== null) {
      this.request("lobby.watch", this._watching).catch((err) => this._report(err));
    }
    const waiting = this._queue;
    this._queue = [];
    for (const entry of waiting) this._send(entry);
    this._measureClock();
  }

  /** The offset to the server's clock from a few pings after each hello, spaced out, keeping
   * the one with the shortest round trip (PROTOCOL.md, "Clocks"): a page still busy loading
   * when the first reply comes reads it late, and a late reading skews the midpoint. */
  _measureClock(tries = 3, spacing = 500) {
    const round = this._clockRound + 1;
    this._clockRound = round;
    let best = Infinity;
    const once = (left) => {
      const sent = Date.now() / 1000;
      this.request("ping", {}, { resend: false }).then(
        (reply) => {
          const now = Date.now() / 1000;
          if (this._clockRound !== round) return; // a newer hello measures afresh
          if (now - sent < best) {
            best = now - sent;
            this.clockOffset = Number(reply.time) - (sent + now) / 2;
          }
          if (left > 1) setTimeout(() => this.state === "open" && once(left - 1), spacing);
        },
        () => {},
      );
    };
    once(tries);
  }

  _report(err) {
    this.emit("error", { code: err.code ?? "error", reason: err.reason ?? String(err) });
  }

  // -- what the server sends ---------------------------------------------------------------------

  _received(data) {
    let message;
    try {
      message = decodeFrame(new Uint8Array(data));
    } catch (err) {
      if (!(err instanceof CodecError)) throw err;
      this.emit("error", { code: "bad_frame", reason: err.message });
      return;
    }
    this.emit("message", message);
    if (Object.hasOwn(message, "re")) {
      this._reply(message);
      return;
    }
    // A push type this library does not know is ignored, as the protocol says.
    const handler = Object.hasOwn(PUSHES, message.t) ? PUSHES[message.t] : null;
    if (handler === null) return;
    try {
      this[handler](message);
    } catch (err) {
      // A push not shaped as the protocol says: dropped, and said loudly (a server bug).
      console.error(err);
      this.emit("error", { code: "bad_message", reason: `${message.t}: ${err.message}` });
    }
  }

  _reply(message) {
    const entry = this._pending.get(message.re);
    if (!entry) {
      if (message.t === "error") this.emit("error", { code: message.code, reason: message.reason });
      return;
    }
    this._pending.delete(message.re);
    if (message.t === "ok") {
      this._answered(entry, message);
      entry.resolve(message);
      return;
    }
    const code = message.code;
    // A hello says itself again (_hello), however long the server asks it to wait. A move
    // refused for a reason that says nothing about it (its room's server busy, restarting or
    // moving to another process) is sent again with its mid: applied at most once.
    const again =
      code === "rate_limited"
        ? entry.type !== "hello" && entry.tries < this.rateRetries
        : entry.type === "move" && MOVE_AGAIN.has(code) && entry.tries < this.moveRetries;
    if (again) {
      entry.tries += 1;
      setTimeout(
        () => {
          if (this.state === "open") this._send(entry);
          else if (this.state !== "closed") this._queue.push(entry);
        },
        Math.min(100 * 2 ** entry.tries, 2000),
      );
      return;
    }
    if (entry.type === "create" && code === "store_failed" && typeof message.room === "string") {
      this._findCreated(entry, message);
      return;
    }
    entry.reject(new PlayhallError(code, message.reason, message));
  }

  /** A `create` whose outcome is unknown (`store_failed` naming the `room`, PROTOCOL.md section
   * 10). A room that was made at all was made whole, its creator seated unless they asked
   * `sit: false`: a `join` (watching, then) finds out. Made: the create resolves as its reply
   * would have (`room`, `code`, `seat`, `version`). Not made (`no_such_room`), or the join
   * cannot tell either: it rejects with the create's refusal, whose `room` may be joined later
   * (it is in the next hello's `rooms` if it was made). */
  _findCreated(entry, refusal) {
    const fields = { room: refusal.room };
    if (entry.fields.sit === false) fields.watch = true;
    this.request("join", fields, { resend: false }).then(
      (joined) => {
        const code = typeof refusal.join_code === "string" ? refusal.join_code : null;
        const mirror = this.rooms.get(joined.room);
        if (mirror && code !== null) mirror.code = code;
        entry.resolve({
          t: "ok",
          room: joined.room,
          code,
          seat: joined.seat,
          version: joined.version,
        });
      },
      () => entry.reject(new PlayhallError(refusal.code, refusal.reason, refusal)),
    );
  }

  /** What a reply changes in the mirrors. */
  _answered(entry, reply) {
    const { type, fields } = entry;
    if (type === "leave") {
      if (this.rooms.delete(fields.room)) this.emit("left", { room: fields.room });
    } else if (type === "join" || type === "create") {
      const mirror = this.rooms.get(reply.room);
      if (mirror) {
        if (type === "join" && Array.isArray(reply.chat)) mirror.chat = reply.chat.slice(-CHAT_KEPT);
        const code = type === "create" ? reply.code : fields.code;
        if (typeof code === "string") mirror.code = code;
      }
    } else if (type === "lobby.watch") {
      this._watching = { ...fields };
      this.lobby = new Map(reply.rooms.map((summary) => [summary.room, summary]));
      this.emit("lobby", { rooms: this.lobbyList(), push: null });
    } else if (type === "lobby.unwatch") {
      this._watching = null;
      this.lobby = new Map();
      this.emit("lobby", { rooms: [], push: null });
    }
  }

  _mirror(room) {
    let mirror = this.rooms.get(room);
    if (!mirror) {
      mirror = new RoomMirror(room);
      this.rooms.set(room, mirror);
    }
    return mirror;
  }

  _snapshot(message) {
    const mirror = this._mirror(message.room);
    mirror.view = message.view;
    mirror.version = message.version;
    mirror.presence = message.presence;
    this._changed(mirror, "snapshot", message.events ?? []);
  }

  _update(message) {
    const mirror = this.rooms.get(message.room);
    if (!mirror) return; // a room this connection stopped viewing
    if (mirror.version !== null && message.to <= mirror.version) return; // already have it
    if (mirror.version === null || message.from !== mirror.version) {
      if (!mirror.syncing) this._resync(mirror, mirror.view !== null); // a gap
      return;
    }
    try {
      mirror.view = applyDiff(mirror.view, message.diff);
    } catch (err) {
      if (!(err instanceof DiffError)) throw err;
      // The view may be half-changed: drop it and ask for a whole one.
      mirror.view = null;
      mirror.version = null;
      this.emit("error", { code: "diff_failed", reason: err.message, room: mirror.room });
      this._resync(mirror, false);
      return;
    }
    mirror.version = message.to;
    this._changed(mirror, "update", message.events);
  }

  _changed(mirror, kind, events) {
    this.emit("view", { room: mirror.room, mirror, kind, events });
    for (const event of events) {
      this.emit("event", { room: mirror.room, version: mirror.version, event });
    }
  }

  _resync(mirror, withVersion, tries = 0) {
    mirror.syncing = true;
    const fields = { room: mirror.room };
    if (withVersion && mirror.version !== null) fields.version = mirror.version;
    // A private room lets a spectator (no seat) in again on a new connection only with its
    // code: the one this connection joined with.
    if (mirror.code !== null && mirror.seat === null) fields.code = mirror.code;
    this.request("sync", fields).then(
      () => {
        mirror.syncing = false;
      },
      (err) => {
        // Refused for no fault of its own (the room's server busy, restarting, or the room
        // moving to another process): asked again, as a move is.
        if (MOVE_AGAIN.has(err.code) && tries < this.moveRetries && this.state !== "closed") {
          setTimeout(
            () => this._resync(mirror, withVersion, tries + 1),
            Math.min(100 * 2 ** (tries + 1), 2000),
          );
          return;
        }
        mirror.syncing = false;
        if (err.code === "no_such_room") {
          if (this.rooms.delete(mirror.room)) this.emit("left", { room: mirror.room });
        }
        this.emit("error", { code: err.code, reason: err.reason, room: mirror.room });
      },
    );
  }

  _presence(message) {
    const mirror = this.rooms.get(message.room);
    if (mirror) {
      mirror.presence = message.presence;
      mirror.watching = message.watching ?? 0;
      mirror.watchers = message.watchers ?? [];
      mirror.standInAt = message.stand_in_at ?? [];
    }
    this.emit("presence", { room: message.room, presence: message.presence, mirror });
  }

  _chat(message) {
    const mirror = this.rooms.get(message.room);
    if (mirror) {
      mirror.chat.push(message);
      if (mirror.chat.length > CHAT_KEPT) mirror.chat.splice(0, mirror.chat.length - CHAT_KEPT);
    }
    this.emit("chat", message);
  }

  _lobbyPush(message) {
    for (const summary of message.rooms ?? []) this.lobby.set(summary.room, summary);
    for (const room of message.removed ?? []) this.lobby.delete(room);
    this.emit("lobby", { rooms: this.lobbyList(), push: message });
    // More changed than the push names, or the server cannot tell what: the listing is read
    // again (PROTOCOL.md section 5), and its reply replaces the mirror.
    if (message.more === true && this._watching !== null) {
      this.request("lobby.watch", this._watching).catch((err) => this._report(err));
    }
  }
}
