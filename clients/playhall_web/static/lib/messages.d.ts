// Types of the protocol's messages (PROTOCOL.md sections 3 to 6), as the codec decodes them:
// ints are numbers (BigInt beyond 2^53-1), floats are Floats. Types only: there is no
// messages.js. A server may add fields (clients ignore what they do not know), so every map
// here may hold more than it lists.

import type { Float, Int, Value } from "./codec.js";
import type { DiffOp } from "./diff.js";

/** A map of the protocol: plain object, string keys. */
export type WireMap = { [key: string]: Value };

// -- section 3: hello -------------------------------------------------------------------------

export interface HelloFields {
  protocol: number | number[];
  /** The player token from an earlier hello. */
  token?: string;
  /** Instead of `token`: the host site's signed token (a JWT) naming a member of it. */
  host_token?: string;
  name?: string;
}

export interface Limits {
  max_frame: Int;
  rate: Float;
  burst: Int;
}

export interface HelloReply {
  player: string;
  name: string;
  protocol: number;
  server: string;
  rooms: string[];
  limits: Limits;
  public_url?: string;
  /** Only for a new player (never for a host token): store it. */
  token?: string;
}

// -- section 4: requests and their replies ----------------------------------------------------

export interface GameOption {
  name: string;
  default: Value;
  kind: "bool" | "int" | "str";
  help: string;
  choices?: Value[];
  min?: Int;
  max?: Int;
}

export interface GameInfo {
  id: string;
  title: string;
  min_seats: number;
  max_seats: number;
  options: GameOption[];
  seats_by_option: { [option: string]: { [choice: string]: [number, number] } };
}

export interface RoomSummary {
  room: string;
  game: string;
  title: string;
  status: "waiting" | "playing";
  seats: number;
  taken: number;
  players: (string | null)[];
  options: WireMap;
  created: Float;
}

export interface RoomsPage {
  rooms: RoomSummary[];
  next: string | null;
}

export interface ChatLine {
  room: string;
  player: string;
  name: string;
  seat: number | null;
  text: string;
  at: Float;
}

/** Each request type's fields and its `ok` reply (without `t` and `re`). */
export interface Requests {
  ping: { fields: Record<string, never>; reply: { time: Float } };
  games: { fields: Record<string, never>; reply: { games: GameInfo[] } };
  rooms: { fields: { game?: string; limit?: number; after?: string }; reply: RoomsPage };
  "lobby.watch": { fields: { game?: string }; reply: RoomsPage };
  "lobby.unwatch": { fields: Record<string, never>; reply: Record<string, never> };
  create: {
    fields: {
      game: string;
      seats: number;
      options?: WireMap;
      private?: boolean;
      sit?: boolean;
      /** Default: true for a public room, false for a private one. */
      rated?: boolean;
    };
    reply: { room: string; code: string | null; seat: number | null; version: Int };
  };
  join: {
    fields: { room?: string; code?: string; seat?: number; watch?: boolean };
    reply: { room: string; seat: number | null; version: Int; chat: ChatLine[] };
  };
  leave: { fields: { room: string }; reply: { room: string } };
  ready: {
    /** `entropy`: up to 64 bytes, this seat's contribution to the deal (PROTOCOL.md section 16). */
    fields: { room: string; ready?: boolean; entropy?: Uint8Array };
    reply: { room: string; status: string };
  };
  start: { fields: { room: string }; reply: { room: string; status: string } };
  bot: { fields: { room: string; seat: number }; reply: { room: string; seat: number } };
  chat: { fields: { room: string; text: string }; reply: Record<string, never> };
  move: {
    fields: { room: string; version: Int; mid: string | number; move: Move };
    reply: { room: string; version: Int };
  };
  sync: {
    fields: { room: string; version?: Int };
    reply: { room: string; seat: number | null; version: Int; caught_up: "diffs" | "snapshot" };
  };
  rematch: { fields: { room: string }; reply: { room: string } };
  resign: { fields: { room: string }; reply: { room: string; version: Int } };
  /** A finished room's game record; refused (`wrong_status`) before the end. */
  record: { fields: { room: string }; reply: { record: GameRecord } };
  games_played: {
    fields: { player?: string; limit?: number; after?: string };
    reply: { games: PlayedGame[]; next?: string };
  };
  profile: { fields: { player?: string }; reply: Profile };
  seek: {
    fields: {
      game: string;
      /** [fewest, most] seats accepted. */
      seats: [number, number];
      options?: WireMap;
      /** [lowest, highest] rating of the table's opener accepted. */
      rating?: [number, number];
      /** Seconds after which a table this seek opens gets bots; also: bots accepted. */
      bots_after?: number;
    };
    reply: {
      room: string;
      seat: number | null;
      version: Int;
      chat?: ChatLine[];
      seats: number;
      opened: boolean;
    };
  };
  cancel_seek: { fields: Record<string, never>; reply: { room: string | null } };
  leaderboard: {
    fields: { game: string; limit?: number; after?: string };
    reply: { game: string; players: LeaderboardEntry[]; next?: string };
  };
}

/** A finished game as a player's history keeps it (`games_played`, a profile's `recent`). */
export interface PlayedGame {
  room: string;
  game: string;
  /** When it ended, Unix seconds. */
  at: Float;
  seats: {
    player: string | null;
    name: string | null;
    bot: boolean;
    /** A stand-in was playing this seat when the game ended. */
    stand_in?: boolean;
    /** In a rated game: the shown rating before and after it. */
    rating?: [number, number];
  }[];
  outcome: Outcome | null;
  rated: boolean;
  private: boolean;
}

/** A player's rating in one game. */
export interface Rating {
  /** round(60 * mu): 1500 to start. */
  rating: number;
  mu: Float;
  /** The uncertainty now (it grows without rated games). */
  sigma: Float;
  games: number;
  provisional: boolean;
}

export interface Profile {
  player: string;
  name: string;
  /** Game id -> games won, lost, drawn, and the rating once there is a rated game. */
  games: { [game: string]: { w: number; l: number; d: number; rating?: Rating } };
  recent: PlayedGame[];
}

export interface LeaderboardEntry extends Rating {
  player: string;
  name: string;
}

export type RequestType = keyof Requests;

/** An `error` reply (section 10): `code`, `reason`, and for some codes more (`version`,
 * `retry_after`; a `create` of unknown outcome's `room` and `join_code`). */
export interface ErrorReply {
  t: "error";
  re?: number;
  code: string;
  reason: string;
  version?: Int;
  retry_after?: Float;
  room?: string;
  join_code?: string;
}

// -- section 5: pushes ------------------------------------------------------------------------

/** A game event: a map with a `type`; its other fields are on the game's page. */
export interface GameEvent {
  type: string;
  [field: string]: Value;
}

export interface Snapshot {
  t: "snapshot";
  room: string;
  version: Int;
  view: RoomView;
  presence: boolean[];
  events: GameEvent[];
}

export interface Update {
  t: "update";
  room: string;
  from: Int;
  to: Int;
  diff: DiffOp[];
  events: GameEvent[];
}

export interface Presence {
  t: "presence";
  room: string;
  presence: boolean[];
  watching: number;
}

export interface ChatPush extends ChatLine {
  t: "chat";
}

export interface LobbyPush {
  t: "lobby";
  rooms?: RoomSummary[];
  removed?: string[];
  more?: boolean;
}

export type Push = Snapshot | Update | Presence | ChatPush | LobbyPush;

// -- section 6: the room view -----------------------------------------------------------------

export interface SeatView {
  player: string | null;
  name: string | null;
  bot: boolean;
  ready: boolean;
  stand_in: "timeout" | "away" | null;
}

export interface Outcome {
  winners: number[];
  scores: (Int | Float | string)[];
  reason: string;
  left?: number[];
}

export interface Clock {
  kind: "turn" | "fischer";
  clock_ms: Int;
  increment_ms: Int;
  on_timeout: "bot" | "forfeit";
  at: Float | null;
  remaining_ms: Int[] | null;
  running: number[];
}

/** A move as the view offers it (usually with a `type`); its shape is on the game's page. */
export type Move = WireMap;

export interface RoomView {
  room: string;
  game: string;
  status: "waiting" | "playing" | "finished";
  options: WireMap;
  private: boolean;
  /** Whether a game played here counts for its players' ratings. */
  rated: boolean;
  code: string | null;
  creator: string;
  seats: SeatView[];
  you: number | null;
  to_act: number[];
  moves: Move[];
  /** The game's view for you; its shape is on the game's page. */
  state: WireMap | null;
  outcome: Outcome | null;
  deadline: Float | null;
  clock: Clock | null;
  rematch: string | null;
  rematch_of: string | null;
  /** The fair deal's material: the commitment from the start, the rest revealed at the end. */
  fair: FairMaterial;
}

/** PROTOCOL.md section 16: hex strings; `secret` and `contributions` null until the game ends. */
export interface FairMaterial {
  commitment: string;
  secret: string | null;
  /** One per seat; null for a seat that gave none. */
  contributions: (string | null)[] | null;
}

/** One stored change of a room in its game record (PROTOCOL.md section 17). */
export interface RecordStep {
  version: Int;
  kind: string;
  seat: number | null;
  move: Value;
  mid: string | Int | null;
  /** Unix seconds (a plain number once read back from JSON). */
  time: Float | number;
  hash: string;
}

/** A finished room's whole history (PROTOCOL.md section 17, schemas/record-1.json). */
export interface GameRecord {
  format: "playhall-record";
  format_version: 1;
  server: string;
  room: string;
  game: string;
  title: string;
  options: WireMap;
  seats: { name: string | null; bot: boolean }[];
  created: Float | number;
  rematch_of: string | null;
  fair: { commitment: string; secret: string; contributions: (string | null)[] };
  steps: RecordStep[];
  outcome: Outcome;
  final_hash: string;
}
