// The JavaScript library's codec against the protocol's codec vectors, all of them, exact bytes
// and exact types (protocol/playhall_protocol/vectors/codec.json).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  CodecError,
  decode,
  decodeFrame,
  encode,
  encodeFrame,
  Float,
  toNumber,
} from "../../clients/playhall_web/static/lib/codec.js";
import { bytesToHex, fromTyped, hexToBytes, loadVectors, toTyped } from "./typed.mjs";

const vectors = loadVectors("codec.json");

describe("codec vectors: cases (both directions, exact)", () => {
  for (const c of vectors.cases) {
    test(`encode ${c.name}`, () => {
      assert.equal(bytesToHex(encode(fromTyped(c.value))), c.hex);
    });
    test(`decode ${c.name}`, () => {
      assert.deepEqual(toTyped(decode(hexToBytes(c.hex))), c.value);
    });
  }
});

describe("codec vectors: decode_only", () => {
  for (const c of vectors.decode_only) {
    test(c.name, () => {
      assert.deepEqual(toTyped(decode(hexToBytes(c.hex))), c.value);
    });
  }
});

describe("codec vectors: invalid_frames are refused", () => {
  for (const c of vectors.invalid_frames) {
    test(c.name, () => {
      assert.throws(() => decodeFrame(hexToBytes(c.hex)), CodecError);
    });
  }
});

describe("codec vectors: accepted_frames", () => {
  for (const c of vectors.accepted_frames) {
    test(c.name, () => {
      const frame = decodeFrame(hexToBytes(c.hex));
      assert.equal(bytesToHex(encodeFrame(frame)), c.hex);
    });
  }
});

describe("codec: JavaScript values", () => {
  test("undefined fields are left out of a map", () => {
    assert.equal(bytesToHex(encode({ a: 1, seat: undefined })), bytesToHex(encode({ a: 1 })));
  });
  test("undefined outside a map is refused, not written as nil", () => {
    assert.throws(() => encode([undefined]), CodecError);
    assert.throws(() => encode(undefined), CodecError);
  });
  test("a safe integer is an int, a Float is a float64, any other number a float64", () => {
    assert.equal(bytesToHex(encode(1)), "01");
    assert.equal(bytesToHex(encode(new Float(1))), "cb3ff0000000000000");
    assert.equal(bytesToHex(encode(0.5)), "cb3fe0000000000000");
    assert.equal(bytesToHex(encode(2 ** 40)), "cf0000010000000000");
    assert.equal(bytesToHex(encode(-0)), "00");
  });
  test("a decoded float keeps arithmetic working", () => {
    const f = decode(hexToBytes("cb41dac095c4154ece"));
    assert.ok(f instanceof Float);
    assert.equal(f * 1000, 1795315472332.9348);
    assert.equal(toNumber(f), 1795315472.3329349);
    assert.equal(JSON.stringify({ f }), '{"f":1795315472.3329349}');
  });
  test("BigInts: smallest form inside the safe range, refused beyond 64 bits", () => {
    assert.equal(bytesToHex(encode(5n)), "05");
    assert.throws(() => encode(1n << 64n), CodecError);
    assert.throws(() => encode(-(1n << 63n) - 1n), CodecError);
  });
  test("objects that are not plain maps are refused", () => {
    assert.throws(() => encode(new Date(0)), CodecError);
    assert.throws(() => encode(new Map([["a", 1]])), CodecError);
  });
  test("a lone surrogate is not UTF-8 and is refused", () => {
    assert.throws(() => encode("\ud83c"), CodecError);
  });
  test("a leading byte-order mark is kept", () => {
    assert.equal(decode(hexToBytes("a3efbbbf")), "\ufeff");
  });
  test('a "__proto__" key is refused, not turned into a prototype', () => {
    assert.throws(() => decode(hexToBytes("81a95f5f70726f746f5f5f80")), CodecError);
  });
});
