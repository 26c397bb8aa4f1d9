// Applying a room-view diff (PROTOCOL.md section 7), checked against vectors/diff.json.
//
// A path step is checked by type, never coerced: a str steps into a map by an own key, an int
// (a number that is an integer, never a bool, a Float or a numeric string) into an array by
// index. JavaScript objects would let obj[0] mean obj["0"] and would find inherited keys such as
// "constructor": the walk refuses both. Keys are set with defineProperty, so a "__proto__" key is
// an ordinary own key. Values are deep-copied in: nothing set by one op is shared with another
// op, the diff or the caller.

import { Float, isPlainObject } from "./codec.js";

/** A diff that does not apply: the view may be half-changed; drop it and sync for a snapshot. */
export class DiffError extends Error {
  constructor(message) {
    super(message);
    this.name = "DiffError";
  }
}

function isIndex(step) {
  return typeof step === "number" && Number.isInteger(step);
}

function setKey(map, key, value) {
  Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A deep copy of a decoded value (maps, arrays, bin copied; scalars and Floats shared). */
export function copyValue(value) {
  if (Array.isArray(value)) return value.map(copyValue);
  if (value instanceof Uint8Array) return value.slice();
  if (isPlainObject(value)) {
    const out = {};
    for (const key of Object.keys(value)) setKey(out, key, copyValue(value[key]));
    return out;
  }
  return value; // null, boolean, number, bigint, string, Float (immutable)
}

function walk(node, steps, count) {
  for (let i = 0; i < count; i++) {
    const step = steps[i];
    if (isPlainObject(node) && typeof step === "string" && Object.hasOwn(node, step)) {
      node = node[step];
    } else if (Array.isArray(node) && isIndex(step) && step >= 0 && step < node.length) {
      node = node[step];
    } else {
      throw new DiffError(`path step ${i} (${describe(step)}) does not exist`);
    }
  }
  return node;
}

function describe(step) {
  if (step instanceof Float) return `float ${step.value}`;
  try {
    return JSON.stringify(step);
  } catch {
    return String(step);
  }
}

/** Apply `ops` to `view` in place and return the new view (a new object only when an op
 * replaced the root). Throws DiffError on the first op that does not apply. */
export function applyDiff(view, ops) {
  if (!Array.isArray(ops)) throw new DiffError("a diff is an array of ops");
  for (let n = 0; n < ops.length; n++) {
    const op = ops[n];
    if (!Array.isArray(op) || op.length < 2 || typeof op[0] !== "string" || !Array.isArray(op[1])) {
      throw new DiffError(`op ${n} is not [name, path, ...]`);
    }
    const [name, path] = op;
    if (name === "set" && op.length === 3) {
      if (path.length === 0) {
        view = copyValue(op[2]);
        continue;
      }
      const parent = walk(view, path, path.length - 1);
      const key = path[path.length - 1];
      if (isPlainObject(parent) && typeof key === "string") {
        setKey(parent, key, copyValue(op[2]));
      } else if (Array.isArray(parent) && isIndex(key) && key >= 0 && key <= parent.length) {
        parent[key] = copyValue(op[2]);
      } else {
        throw new DiffError(`op ${n}: cannot set ${describe(key)} there`);
      }
    } else if (name === "del" && op.length === 2 && path.length > 0) {
      const parent = walk(view, path, path.length - 1);
      const key = path[path.length - 1];
      if (!isPlainObject(parent) || typeof key !== "string" || !Object.hasOwn(parent, key)) {
        throw new DiffError(`op ${n}: no key ${describe(key)} to delete`);
      }
      delete parent[key];
    } else if (name === "len" && op.length === 3 && isIndex(op[2])) {
      const target = walk(view, path, path.length);
      if (!Array.isArray(target) || op[2] < 0 || op[2] > target.length) {
        throw new DiffError(`op ${n}: cannot cut to length ${op[2]}`);
      }
      target.length = op[2];
    } else {
      throw new DiffError(`op ${n}: not a valid ${describe(name)} op`);
    }
  }
  return view;
}
