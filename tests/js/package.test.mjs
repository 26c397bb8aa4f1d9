// The JavaScript library as an npm package (clients/playhall_web/static/lib/package.json): what
// `npm pack` would publish, that the package's name resolves through its `exports` to the very
// modules the page imports (one copy), and that its TypeScript entry declares what it exports.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as fromThePage from "../../clients/playhall_web/static/lib/playhall.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const LIB = join(ROOT, "clients/playhall_web/static/lib");

function filesUnder(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(LIB, join(entry.parentPath, entry.name)));
}

test("npm pack takes the library, its types, the vendored codec, README and LICENSE, nothing else", () => {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: LIB, encoding: "utf8" }),
  );
  const files = packed.files.map((f) => f.path).sort();
  const expected = [
    "LICENSE",
    "README.md",
    "package.json",
    ...readdirSync(LIB).filter((name) => name.endsWith(".js") || name.endsWith(".d.ts")),
    ...filesUnder(join(LIB, "vendor/msgpack")),
  ].sort();
  assert.deepEqual(files, expected);
  assert.ok(files.includes("playhall.d.ts") && files.includes("vendor/msgpack/Decoder.mjs"));
  assert.equal(packed.name, "playhall-client");
  assert.equal(readFileSync(join(LIB, "LICENSE"), "utf8"), readFileSync(join(ROOT, "LICENSE"), "utf8"));
});

test("the package's name resolves to the same modules the page imports", async () => {
  const byName = await import("playhall-client");
  assert.deepEqual(Object.keys(byName).sort(), Object.keys(fromThePage).sort());
  for (const name of Object.keys(byName)) assert.equal(byName[name], fromThePage[name], name);
  await assert.rejects(import("playhall-client/codec.js"), { code: "ERR_PACKAGE_PATH_NOT_EXPORTED" });
});

test("playhall.d.ts declares every value the entry exports, and no other", () => {
  const declared = readFileSync(join(LIB, "playhall.d.ts"), "utf8")
    .match(/^export \{[^}]*\}/gm)
    .flatMap((block) => block.slice("export {".length, -1).split(","))
    .map((name) => name.trim())
    .filter(Boolean);
  assert.deepEqual(declared.sort(), Object.keys(fromThePage).sort());
});
