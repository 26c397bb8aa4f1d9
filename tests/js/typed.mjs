// The vectors' typed JSON notation (protocol/playhall_protocol/vectors/*.json, "notation") to
// and from the values of the JavaScript library, so every comparison is exact about types.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { Float, isPlainObject } from "../../clients/playhall_web/static/lib/codec.js";

const VECTORS = new URL("../../protocol/playhall_protocol/vectors/", import.meta.url);

export function loadVectors(name) {
  return JSON.parse(readFileSync(fileURLToPath(new URL(name, VECTORS)), "utf8"));
}

export function hexToBytes(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function floatOf(x) {
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  if (x === "-0.0") return -0;
  if (x === "nan") return NaN;
  return x;
}

/** A typed value as the library's value: ints as numbers (BigInt beyond 2^53-1), floats as
 * Float, maps as plain objects with their keys in the listed order. */
export function fromTyped(typed) {
  const [kind, x] = typed;
  switch (kind) {
    case "nil":
      return null;
    case "bool":
      return x;
    case "int": {
      const big = BigInt(x);
      return big >= -BigInt(Number.MAX_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(big)
        : big;
    }
    case "float":
      return new Float(floatOf(x));
    case "str":
      return x;
    case "bin":
      return hexToBytes(x);
    case "array":
      return x.map(fromTyped);
    case "map": {
      const out = {};
      for (const [k, v] of x) {
        if (k[0] !== "str") throw new Error("vectors have str keys only");
        Object.defineProperty(out, k[1], {
          value: fromTyped(v),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      throw new Error(`unknown typed kind ${kind}`);
  }
}

/** The library's value in the typed notation, refusing anything that is not one of its kinds
 * (so a float decoded as a number, or a Date, fails the comparison). */
export function toTyped(value) {
  if (value === null) return ["nil"];
  if (typeof value === "boolean") return ["bool", value];
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`a plain number that is not an int: ${value}`);
    return ["int", String(value)];
  }
  if (typeof value === "bigint") {
    if (value >= -BigInt(Number.MAX_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new Error(`a safe int decoded as a BigInt: ${value}`);
    }
    return ["int", String(value)];
  }
  if (value instanceof Float) {
    const v = value.value;
    if (Object.is(v, -0)) return ["float", "-0.0"];
    if (v === Infinity) return ["float", "inf"];
    if (v === -Infinity) return ["float", "-inf"];
    return ["float", v];
  }
  if (typeof value === "string") return ["str", value];
  if (value instanceof Uint8Array) return ["bin", bytesToHex(value)];
  if (Array.isArray(value)) return ["array", value.map(toTyped)];
  if (isPlainObject(value)) {
    return ["map", Object.keys(value).map((k) => [["str", k], toTyped(value[k])])];
  }
  throw new Error(`not a protocol value: ${Object.prototype.toString.call(value)}`);
}

/** Typed values compared with map key order ignored (it carries no meaning). */
export function canonical(typed) {
  const [kind, x] = typed;
  if (kind === "array") return ["array", x.map(canonical)];
  if (kind === "map") {
    const pairs = x.map(([k, v]) => [k, canonical(v)]);
    pairs.sort((a, b) => (a[0][1] < b[0][1] ? -1 : a[0][1] > b[0][1] ? 1 : 0));
    return ["map", pairs];
  }
  if (kind === "float" && typeof x === "number") return ["float", x];
  return typed;
}
