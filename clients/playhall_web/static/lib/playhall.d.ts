// Types of playhall.js, the package's entry: Playhall's JavaScript client library.

export { CodecError, Float, decode, decodeFrame, encode, encodeFrame, toNumber } from "./codec.js";
export type { Int, Value } from "./codec.js";
export { DiffError, applyDiff, copyValue } from "./diff.js";
export type { DiffOp, PathStep } from "./diff.js";
export { Emitter } from "./emitter.js";
export type { EventMap } from "./emitter.js";
export {
  PROTOCOL_VERSIONS,
  PlayhallConnection,
  PlayhallError,
  RESENDABLE,
  RoomMirror,
  defaultUrl,
} from "./connection.js";
export type {
  ConnectionEvents,
  ConnectionOptions,
  ConnectionState,
  HostToken,
  WebSocketLike,
} from "./connection.js";
export { NOT_CHECKED, commitmentOf, roomKey, verifyRecord } from "./verify.js";
export type { RecordFailure, RecordReport, VerifyOptions } from "./verify.js";
export type * from "./messages.js";
