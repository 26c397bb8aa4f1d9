// The JavaScript library's diff applier against the protocol's diff vectors, all of them, with
// exact types (protocol/playhall_protocol/vectors/diff.json).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { applyDiff, DiffError } from "../../clients/playhall_web/static/lib/diff.js";
import { canonical, fromTyped, loadVectors, toTyped } from "./typed.mjs";

const vectors = loadVectors("diff.json");

describe("diff vectors: cases", () => {
  for (const c of vectors.cases) {
    test(c.name, () => {
      const ops = fromTyped(c.ops);
      const result = applyDiff(fromTyped(c.old), ops);
      assert.deepEqual(canonical(toTyped(result)), canonical(c.new));
      // The diff itself is left as it was: values were copied out of it.
      assert.deepEqual(toTyped(ops), c.ops);
    });
  }
});

describe("diff vectors: invalid", () => {
  for (const c of vectors.invalid) {
    test(c.name, () => {
      assert.throws(() => applyDiff(fromTyped(c.old), fromTyped(c.ops)), DiffError);
    });
  }
});

describe("diff: JavaScript traps", () => {
  test("an inherited key is not a key of the map", () => {
    assert.throws(() => applyDiff({ a: 1 }, [["del", ["constructor"]]]), DiffError);
    assert.throws(() => applyDiff({ a: 1 }, [["set", ["toString", "x"], 1]]), DiffError);
  });
  test('a path through an inherited "__proto__" cannot reach Object.prototype', () => {
    assert.throws(() => applyDiff({ a: 1 }, [["set", ["__proto__", "polluted"], true]]), DiffError);
    assert.equal({}.polluted, undefined);
  });
  test('"__proto__" is set as an own key, the prototype is untouched', () => {
    const view = applyDiff({}, [["set", ["__proto__"], { polluted: true }]]);
    assert.equal(Object.getPrototypeOf(view), Object.prototype);
    assert.deepEqual(Object.keys(view), ["__proto__"]);
    assert.equal({}.polluted, undefined);
  });
  test("a numeric string does not index an array, a fractional number neither", () => {
    assert.throws(() => applyDiff({ l: [1] }, [["set", ["l", "0"], 2]]), DiffError);
    assert.throws(() => applyDiff({ l: [1, 2] }, [["set", ["l", 0.5], 2]]), DiffError);
  });
});
