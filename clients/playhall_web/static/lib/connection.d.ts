// Types of connection.js: a Playhall connection that keeps itself going (PROTOCOL.md sections
// 2, 3, 5, 8, 9 and 14).

import type { Int } from "./codec.js";
import { Emitter } from "./emitter.js";
import type {
  ChatLine,
  ChatPush,
  GameEvent,
  HelloReply,
  Limits,
  LobbyPush,
  Move,
  RequestType,
  Requests,
  RoomSummary,
  RoomView,
  WireMap,
} from "./messages.js";

/** The protocol versions this library speaks. */
export const PROTOCOL_VERSIONS: number[];

/** Requests that are harmless to send again after a drop (PROTOCOL.md section 9). */
export const RESENDABLE: Set<string>;

/** A refused request: `code` as in PROTOCOL.md section 10 (or a game's own), `reason` for
 * people, `reply` the whole error map. Client-side codes: `disconnected`, `closed`,
 * `bad_request`, `not_viewing`; `bad_host_token` also when a `hostToken` function failed. */
export class PlayhallError extends Error {
  constructor(code: string, reason: string, reply?: WireMap | null);
  name: "PlayhallError";
  code: string;
  reason: string;
  reply: WireMap | null;
  /** The room's version, on refused moves. */
  version: Int | undefined;
}

/** What this connection knows of one room it views. Read-only for the page. */
export class RoomMirror {
  constructor(room: string);
  readonly room: string;
  /** The version of `view`, null while there is none. */
  version: Int | null;
  view: RoomView | null;
  presence: boolean[];
  chat: ChatLine[];
  /** The join code this connection used or was given. */
  code: string | null;
  syncing: boolean;
  /** This player's seat, null when watching. */
  readonly seat: number | null;
}

/** The websocket URL of the server a page was loaded from (the page's own folder). */
export function defaultUrl(location?: { protocol: string; host: string; pathname: string }): string;

/** The host site's signed token, a function giving a fresh one, or a promise of one. */
export type HostToken = string | (() => string | Promise<string>);

/** What a WebSocket class must offer: the browser's, Node's (22 and later), or `ws`'s. */
export interface WebSocketLike {
  binaryType: string;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export interface ConnectionOptions {
  /** The stored player token, or null for a new player. */
  token?: string | null;
  /** Instead of a player token: the host site's token, asked afresh for every hello. */
  hostToken?: HostToken | null;
  /** Display name, sent with every hello. */
  name?: string;
  /** The WebSocket class to use; the global one by default. */
  WebSocket?: new (url: string) => WebSocketLike;
  /** Reconnect pauses in ms: `initial` doubling to `max` (50 and 2000). */
  backoff?: { initial?: number; max?: number };
  /** How often a `rate_limited` request is sent again before it fails (5). */
  rateRetries?: number;
  /** How often a move refused `store_failed`, `overloaded` or `draining` is sent again, with its mid (8). */
  moveRetries?: number;
}

export type ConnectionState = "idle" | "connecting" | "open" | "reconnecting" | "closed";

/** The events a connection emits, with their payloads. */
export interface ConnectionEvents {
  [name: string]: unknown;
  status: { state: ConnectionState; attempt?: number; delay?: number; code?: number; reason?: string };
  hello: HelloReply;
  view: { room: string; mirror: RoomMirror; kind: "snapshot" | "update"; events: GameEvent[] };
  event: { room: string; version: Int; event: GameEvent };
  presence: { room: string; presence: boolean[]; mirror: RoomMirror | undefined };
  chat: ChatPush;
  lobby: { rooms: RoomSummary[]; push: LobbyPush | null };
  left: { room: string };
  error: { code: string; reason: string; room?: string };
  /** Every message the server sends, as decoded. */
  message: WireMap;
}

export class PlayhallConnection extends Emitter<ConnectionEvents> {
  constructor(url: string, options?: ConnectionOptions);
  readonly url: string;
  /** The player token (from the last hello reply that gave one). */
  token: string | null;
  hostToken: HostToken | null;
  name: string | undefined;
  readonly state: ConnectionState;
  /** The player id, once a hello was answered. */
  readonly player: string | null;
  readonly limits: Limits | null;
  /** The hello reply's `rooms`: where this player holds a seat. */
  readonly helloRooms: string[];
  readonly serverVersion: string | null;
  /** The hello reply's `public_url`, or null. */
  readonly publicUrl: string | null;
  /** A mirror of every room this connection views. */
  readonly rooms: Map<string, RoomMirror>;
  /** The watched lobby's rooms by id: the watch's page, kept up to date by `lobby` pushes (one
   * that says `more` has the listing read again, which replaces it). */
  readonly lobby: Map<string, RoomSummary>;
  /** The server's clock minus this one, in seconds. */
  readonly clockOffset: number;
  readonly attempt: number;

  /** Connect (and keep reconnecting). Resolves with the first hello reply. */
  connect(): Promise<HelloReply>;
  /** Close for good: no reconnect; waiting requests fail with `closed`. */
  close(): void;
  /** Send a request: resolves with the `ok` map, rejects with a PlayhallError. */
  request<K extends RequestType>(
    type: K,
    fields?: Requests[K]["fields"],
    options?: { resend?: boolean },
  ): Promise<Requests[K]["reply"]>;
  /** A move at the mirror's version, with a fresh `mid` kept for every retry of it. */
  move(
    room: string,
    move: Move,
    options?: { mid?: string; version?: Int },
  ): Promise<Requests["move"]["reply"]>;
  /** The server's clock now, in Unix seconds. */
  serverNow(): number;
  /** The watched lobby's rooms in the server's order: waiting first, then newest first. */
  lobbyList(): RoomSummary[];
}
