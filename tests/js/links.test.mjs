// Where the page's links and its websocket point: the page's own address, a proxy's sub-path
// kept, or the server's public URL; and when a share link cannot be opened by a friend.

import assert from "node:assert/strict";
import { test } from "node:test";

import { defaultUrl } from "../../clients/playhall_web/static/lib/playhall.js";
import {
  isLoopback,
  roomLink,
  shareBase,
  shareWarning,
} from "../../clients/playhall_web/static/app/links.js";

const at = (href) => new URL(href);

test("the websocket is the page's own folder, a proxy's sub-path included", () => {
  assert.equal(defaultUrl(at("http://127.0.0.1:8765/")), "ws://127.0.0.1:8765/");
  assert.equal(defaultUrl(at("http://127.0.0.1:8765/#room=ab")), "ws://127.0.0.1:8765/");
  assert.equal(defaultUrl(at("https://games.example.org/play/")), "wss://games.example.org/play/");
  assert.equal(
    defaultUrl(at("https://games.example.org/play/index.html?x=1#room=ab")),
    "wss://games.example.org/play/",
  );
});

test("a share link keeps the page's address and sub-path, or uses the public URL", () => {
  const page = at("https://games.example.org/play/#room=old");
  assert.equal(shareBase(page, null), "https://games.example.org/play/");
  assert.equal(
    roomLink(shareBase(page, null), "r1", "ABC DEF"),
    "https://games.example.org/play/#room=r1&code=ABC%20DEF",
  );
  assert.equal(
    roomLink(shareBase(at("http://127.0.0.1:8765/"), "https://club.example/play/"), "r1"),
    "https://club.example/play/#room=r1",
  );
});

test("a loopback page without a public URL warns that a friend cannot open the link", () => {
  for (const host of [
    "http://127.0.0.1:8765/",
    "http://localhost:8765/",
    "http://[::1]:8765/",
    "http://127.1.2.3/",
    "http://game.localhost/",
  ]) {
    const warning = shareWarning(at(host), null);
    assert.match(warning ?? "", /cannot open it/, host);
    assert.match(warning, /--host 0\.0\.0\.0/);
  }
  assert.match(shareWarning(at("http://127.0.0.1:8765/"), null), /same port, 8765/);
  assert.match(shareWarning(at("http://localhost/"), null), /same port, 80\)/);
  assert.equal(shareWarning(at("http://127.0.0.1:8765/"), "https://club.example/play/"), null);
  assert.equal(shareWarning(at("http://192.168.1.20:8765/"), null), null);
  assert.equal(shareWarning(at("https://games.example.org/play/"), null), null);
  assert.equal(isLoopback("127.0.0.1.example.org"), false);
  assert.equal(isLoopback("localhostess"), false);
});
