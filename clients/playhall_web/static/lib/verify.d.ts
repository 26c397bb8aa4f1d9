// Types of verify.js: checking a game record with WebCrypto (PROTOCOL.md section 18).

import type { GameRecord } from "./messages.js";

/** What only the replay through the game's engine checks (`playhall verify`), which this library
 * cannot: the engines are the server's. */
export const NOT_CHECKED: readonly string[];

/** Where a record stops holding. */
export interface RecordFailure {
  /** "record", "fair", "outcome", or the step: "step 12 (version 13, move)". */
  where: string;
  /** The field there: "secret", "contributions[0]", "hash", "time", "final_hash"... */
  field: string;
  /** What does not hold, for people. */
  reason: string;
  /** The step's index in `steps` when a step is at fault. */
  step: number | null;
  /** `${where}, ${field}: ${reason}`. */
  message: string;
}

export interface RecordReport {
  /** Every check made held. */
  ok: boolean;
  /** The checks that held, a line each. */
  checked: string[];
  /** What did not hold, in the order found. */
  failures: RecordFailure[];
  /** What only the engine's replay checks. */
  notChecked: string[];
  /** The room's key (hex), made from the revealed secret and contributions; null if it cannot be. */
  key: string | null;
  /** All of it for people: "ok    ...", "not checked ...", "FAIL  ...". */
  lines: string[];
}

export interface VerifyOptions {
  /** The commitment (hex) this client saw before the game. */
  seenCommitment?: string;
  /** The seat this client played and the bytes it sent with `ready` (none: an empty one). */
  own?: { seat: number; entropy?: Uint8Array | null };
}

/** Check a game record (the `record` request's, or `playhall export`'s JSON parsed) with
 * WebCrypto: everything but the engine's replay. Rejects only where WebCrypto is missing. */
export function verifyRecord(record: GameRecord | unknown, options?: VerifyOptions): Promise<RecordReport>;

/** SHA-256("playhall/commit/v1" || lp(room id) || secret). */
export function commitmentOf(roomId: string, secret: Uint8Array): Promise<Uint8Array>;

/** The room's key from its secret and the seats' contributions in seat order (null: none). */
export function roomKey(
  secret: Uint8Array,
  roomId: string,
  contributions: ReadonlyArray<Uint8Array | null>,
): Promise<Uint8Array>;
