// How the page finds a game's renderer (clients/playhall_web/static/app/room/renderers.js): the
// module app/games/<id>.js by the game's id, loaded once; the outline for a game without one.

import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { test } from "node:test";

import {
  loadedRenderer,
  loadRenderer,
  OUTLINE,
} from "../../clients/playhall_web/static/app/room/renderers.js";

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
    assert.notEqual(renderer, OUTLINE, id);
    assert.equal(typeof renderer.render, "function", id);
    assert.equal(typeof renderer.describe, "function", id);
    assert.ok(statSync(new URL(`server/playhall/games/${id}/`, ROOT)).isDirectory(), id);
  }
});

test("a game without a renderer file is drawn as an outline", async () => {
  assert.equal(loadedRenderer("no_such_game"), null); // not loaded yet: the room shows "loading…"
  assert.equal(await loadRenderer("no_such_game"), OUTLINE);
  assert.equal(loadedRenderer("no_such_game"), OUTLINE);
});

test("an id that is not a game's name is never a module path", async () => {
  for (const id of ["../games/mantis", "./mantis", "mantis.js", "https://example.org/x", ""]) {
    assert.equal(await loadRenderer(id), OUTLINE, id);
  }
});
