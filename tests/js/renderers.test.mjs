// How the page finds a game's renderer (clients/playhall_web/static/app/room/renderers.js): the
// module app/games/<id>.js by the game's id, loaded once; the generic renderer for a game without
// one, and its move labels.

import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { test } from "node:test";

import { moveLabel } from "../../clients/playhall_web/static/app/room/generic.js";
import {
  GENERIC,
  loadedRenderer,
  loadRenderer,
} from "../../clients/playhall_web/static/app/room/renderers.js";
import { Float } from "../../clients/playhall_web/static/lib/playhall.js";

const ROOT = new URL("../../", import.meta.url);
const GAMES = new URL("clients/playhall_web/static/app/games/", ROOT);
const renderers = readdirSync(GAMES)
  .filter((name) => name.endsWith(".js"))
  .map((name) => name.slice(0, -3));

test("a game's renderer is its module under app/games, loaded once", async () => {
  assert.ok(renderers.includes("mantis"));
  const { default: mantis } = await import(new URL("mantis.js", GAMES));
  const first = loadRenderer("mantis");
  assert.equal(loadRenderer("mantis"), first);
  assert.equal(await first, mantis);
  assert.equal(loadedRenderer("mantis"), mantis);
});

test("every renderer file draws and describes, and is named after a game of the server", async () => {
  for (const id of renderers) {
    const renderer = await loadRenderer(id);
    assert.notEqual(renderer, GENERIC, id);
    assert.equal(typeof renderer.render, "function", id);
    assert.equal(typeof renderer.describe, "function", id);
    assert.ok(statSync(new URL(`server/playhall/games/${id}/`, ROOT)).isDirectory(), id);
  }
});

test("a game without a renderer file is drawn by the generic renderer", async () => {
  assert.equal(loadedRenderer("no_such_game"), null); // not loaded yet: the room shows "loading…"
  assert.equal(await loadRenderer("no_such_game"), GENERIC);
  assert.equal(loadedRenderer("no_such_game"), GENERIC);
});

test("an id that is not a game's name is never a module path", async () => {
  for (const id of ["../games/mantis", "./mantis", "mantis.js", "https://example.org/x", ""]) {
    assert.equal(await loadRenderer(id), GENERIC, id);
  }
});

test("the generic renderer labels a move by its type and fields, values as words", () => {
  assert.equal(moveLabel({ type: "mark", cell: 4 }), "mark · cell 4");
  assert.equal(moveLabel({ type: "pass" }), "pass");
  const label = moveLabel({ type: "bid", amount: new Float(1.5), to: null, cards: [1, 2] });
  assert.equal(label, "bid · amount 1.5 · to – · cards [1,2]");
  assert.equal(GENERIC.describe({ type: "blast", cell: 4, mine_of: 1 }), "blast · cell 4 · mine_of 1");
});
