// Types of codec.js: the Playhall wire codec (PROTOCOL.md section 1).

/** A msgpack float64. Decoded floats are always Floats; wrap a number to send it as a float. */
export class Float {
  constructor(value: number | Float);
  readonly value: number;
  valueOf(): number;
  toString(): string;
  toJSON(): number;
}

/** A msgpack int: a number when it is a safe integer, else a BigInt (up to 64 bits). */
export type Int = number | bigint;

/** Any value a frame carries. Maps are plain objects with string keys. */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | Float
  | string
  | Uint8Array
  | Value[]
  | { [key: string]: Value };

/** A frame the codec refuses (not one strict msgpack map, or a value it cannot write). */
export class CodecError extends Error {
  constructor(message: string);
  name: "CodecError";
}

/** How deep a frame may nest (the frame's map itself is depth 1). */
export const MAX_DEPTH: 32;

/** A number for display or arithmetic: a Float's value, a number as it is, a BigInt as a
 * (possibly rounded) number. */
export function toNumber(x: number | bigint | Float): number;
export function toNumber<T>(x: T): T;

/** Any value as msgpack bytes. Throws CodecError for what msgpack cannot hold. */
export function encode(value: unknown): Uint8Array;

/** One msgpack value from bytes, strictly. Throws CodecError. */
export function decode(bytes: ArrayBufferLike | ArrayBufferView): Value;

/** A protocol frame: exactly one map, nested at most `MAX_DEPTH` deep. Throws CodecError. */
export function decodeFrame(bytes: ArrayBufferLike | ArrayBufferView): { [key: string]: Value };

/** A protocol frame from a map (a request). Throws CodecError. */
export function encodeFrame(message: object): Uint8Array;

/** Whether `v` is a plain object (a msgpack map). */
export function isPlainObject(v: unknown): v is { [key: string]: unknown };
