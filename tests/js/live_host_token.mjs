// The JavaScript library's `hostToken` against a real server that takes the host site's tokens:
// `node --experimental-websocket tests/js/live_host_token.mjs WS_URL GOOD_TOKEN EXPIRED_TOKEN`.
// Two connections with the same member's token (one given as a function, one as a string) are
// one player who sees, on the second, the room made on the first; an expired token rejects
// `connect()` with `bad_host_token` and closes. Prints one JSON line; driven by
// tests/server/test_host_identity.py.

import assert from "node:assert/strict";

import { PlayhallConnection } from "../../clients/playhall_web/static/lib/playhall.js";

const [url, good, expired] = process.argv.slice(2);

let asked = 0;
const first = new PlayhallConnection(url, {
  hostToken: async () => {
    asked += 1;
    return good;
  },
});
const hello = await first.connect();
const { room } = await first.request("create", { game: "mantis", seats: 2 });

const second = new PlayhallConnection(url, { hostToken: good });
const again = await second.connect();

const third = new PlayhallConnection(url, { hostToken: expired });
const errors = [];
third.on("error", (e) => errors.push(e.code));
const refused = await third.connect().then(
  () => null,
  (err) => err,
);
assert.ok(refused !== null, "an expired host token was taken");

process.stdout.write(
  `${JSON.stringify({
    players: [hello.player, again.player],
    names: [hello.name, again.name],
    tokenGiven: "token" in hello,
    asked,
    roomSeenAgain: again.rooms.includes(room),
    refused: { code: refused.code, reason: refused.reason, state: third.state, errors },
  })}\n`,
);
first.close();
second.close();
