// The Playhall wire codec (PROTOCOL.md section 1) on the vendored @msgpack/msgpack 3.1.3.
//
// JavaScript has one number type; the protocol tells ints from floats. So:
//   msgpack int   <-> number when a safe integer (|n| <= 2^53-1), else BigInt (up to uint64/int64)
//   msgpack float <-> Float (a wrapper: f.value; valueOf() lets arithmetic use it)
//   nil <-> null, bool <-> boolean, str <-> string, bin <-> Uint8Array, array <-> Array,
//   map <-> plain object with own enumerable string keys.
// A plain number that is not a safe integer (0.5, 1e300, NaN, Infinity) is written as a float64;
// to write a whole float (1.0) wrap it: new Float(1). Fields whose value is undefined are left
// out of a map (the protocol refuses nil for an optional field: leave it out).
//
// Encoding writes every int in its smallest form and every float as float64, like the server.
// Decoding is strict, as the server is (vectors/codec.json "invalid_frames"): one map per frame,
// str keys only, each once per map, valid UTF-8, no extension types (the timestamp included),
// nesting <= 32.
// The library's Encoder and Decoder are subclassed, overriding methods that are private in its
// TypeScript sources: the vendored version is pinned exactly (vendor/msgpack/README.md).

import { Encoder } from "./vendor/msgpack/Encoder.mjs";
import { Decoder } from "./vendor/msgpack/Decoder.mjs";
import { ExtensionCodec } from "./vendor/msgpack/ExtensionCodec.mjs";

/** A msgpack float64. Decoded floats are always Floats; wrap a number to send it as a float. */
export class Float {
  constructor(value) {
    this.value = Number(value);
    Object.freeze(this);
  }
  valueOf() {
    return this.value;
  }
  toString() {
    return String(this.value);
  }
  toJSON() {
    return this.value;
  }
}

/** A number for display or arithmetic: a Float's value, a number as it is, a BigInt as a
 * (possibly rounded) number. */
export function toNumber(x) {
  if (x instanceof Float) return x.value;
  if (typeof x === "bigint") return Number(x);
  return x;
}

/** A frame the codec refuses (not one strict msgpack map, or a value it cannot write). */
export class CodecError extends Error {
  constructor(message) {
    super(message);
    this.name = "CodecError";
  }
}

export const MAX_DEPTH = 32;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function intOf(big) {
  return big >= -SAFE && big <= SAFE ? Number(big) : big;
}

function wellFormed(s) {
  return typeof s.isWellFormed === "function" ? s.isWellFormed() : !/\p{Surrogate}/u.test(s);
}

/** Refuses every extension type, the built-in timestamp (-1) included. */
class NoExtensions extends ExtensionCodec {
  decode(_data, type) {
    throw new CodecError(`extension type ${type} is not allowed`);
  }
  tryToEncode() {
    return null;
  }
}
const NO_EXTENSIONS = new NoExtensions();

// A map key: a str, and one the map does not hold yet (a key twice in one map is a bad frame).
// The library calls it as the decoder's method, so `this.stack.top()` is the map being read.
function strKey(key) {
  if (typeof key !== "string") throw new CodecError(`a map key must be a str, not ${typeof key}`);
  if (Object.hasOwn(this.stack.top().map, key)) {
    throw new CodecError(`the key ${JSON.stringify(key)} appears twice in one map`);
  }
  return key;
}

class PlayhallEncoder extends Encoder {
  constructor() {
    super({ extensionCodec: NO_EXTENSIONS, ignoreUndefined: true, maxDepth: 1000 });
  }
  clone() {
    return new PlayhallEncoder();
  }
  doEncode(object, depth) {
    if (object instanceof Float) {
      this.writeU8(0xcb);
      this.writeF64(object.value);
    } else if (typeof object === "bigint") {
      if (object >= -SAFE && object <= SAFE) {
        this.encodeNumber(Number(object));
      } else if (object > SAFE && object <= U64_MAX) {
        this.writeU8(0xcf);
        this.writeBigUint64(object);
      } else if (object < -SAFE && object >= I64_MIN) {
        this.writeU8(0xd3);
        this.writeBigInt64(object);
      } else {
        throw new CodecError(`int out of the 64-bit range: ${object}`);
      }
    } else if (object === undefined) {
      throw new CodecError("undefined is not a value (leave the field out, or use null for nil)");
    } else if (typeof object === "number" && Number.isSafeInteger(object)) {
      this.encodeNumber(object === 0 ? 0 : object); // -0 as an int is 0
    } else if (
      object !== null &&
      typeof object === "object" &&
      !Array.isArray(object) &&
      !ArrayBuffer.isView(object) &&
      !isPlainObject(object)
    ) {
      throw new CodecError(`cannot encode ${Object.prototype.toString.call(object)}`);
    } else {
      super.doEncode(object, depth);
    }
  }
  encodeString(object) {
    if (!wellFormed(object)) throw new CodecError("a str with a lone surrogate is not UTF-8");
    super.encodeString(object);
  }
}

class PlayhallDecoder extends Decoder {
  constructor() {
    super({ extensionCodec: NO_EXTENSIONS, mapKeyConverter: strKey, keyDecoder: null });
  }
  clone() {
    return new PlayhallDecoder();
  }
  readF32() {
    return new Float(super.readF32());
  }
  readF64() {
    return new Float(super.readF64());
  }
  readU64() {
    return intOf(super.readU64AsBigInt());
  }
  readI64() {
    return intOf(super.readI64AsBigInt());
  }
  decodeUtf8String(byteLength, headerOffset) {
    const start = this.pos + headerOffset;
    if (this.bytes.byteLength < start + byteLength) throw new RangeError("Insufficient data");
    let text;
    try {
      text = UTF8.decode(this.bytes.subarray(start, start + byteLength));
    } catch {
      throw new CodecError("invalid UTF-8 in a str");
    }
    this.pos = start + byteLength;
    return text;
  }
  decodeBinary(byteLength, headOffset) {
    return super.decodeBinary(byteLength, headOffset).slice(); // not a view of the frame
  }
}

export function isPlainObject(v) {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function depthOf(value, limit) {
  // Iterative, so a hostile frame cannot overflow the stack: [node, depth] pairs.
  const todo = [[value, 1]];
  let deepest = 0;
  while (todo.length) {
    const [node, depth] = todo.pop();
    if (depth > limit) return depth;
    if (depth > deepest) deepest = depth;
    const items = Array.isArray(node) ? node : Object.values(node);
    for (const item of items) {
      if (Array.isArray(item) || isPlainObject(item)) todo.push([item, depth + 1]);
    }
  }
  return deepest;
}

const encoder = new PlayhallEncoder();
const decoder = new PlayhallDecoder();

/** `work()`, with whatever the library throws turned into a CodecError. */
function strictly(work) {
  try {
    return work();
  } catch (err) {
    if (err instanceof CodecError) throw err;
    throw new CodecError(String(err && err.message ? err.message : err));
  }
}

/** Any value as msgpack bytes (a Uint8Array). Throws CodecError for what msgpack cannot hold. */
export function encode(value) {
  return strictly(() => encoder.encode(value));
}

/** One msgpack value from bytes, strictly (str keys, valid UTF-8, no extensions, no trailing
 * bytes). Throws CodecError. */
export function decode(bytes) {
  return strictly(() => decoder.decode(bytes));
}

/** A protocol frame: exactly one map, nested at most 32 deep (the map itself is depth 1). */
export function decodeFrame(bytes) {
  const value = decode(bytes);
  if (!isPlainObject(value)) throw new CodecError("a frame must be one msgpack map");
  if (depthOf(value, MAX_DEPTH) > MAX_DEPTH) {
    throw new CodecError(`nested deeper than ${MAX_DEPTH}`);
  }
  return value;
}

/** A protocol frame from a map (a request). */
export function encodeFrame(message) {
  if (!isPlainObject(message)) throw new CodecError("a frame must be one map");
  return encode(message);
}
