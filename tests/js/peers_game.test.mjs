// The duel that bench/peers runs on boardgame.io (bench/peers/bgio_game.js; run.py says how it
// is measured): the game's own definition, checked without installing boardgame.io, which only
// the benchmark does. The Colyseus room (colyseus_server.js) is parsed and linted by ESLint.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Duel } from "../../bench/peers/bgio_game.js";

test("a move counts one and the turn passes after it", () => {
  const G = Duel.setup();
  assert.deepEqual(G, { count: 0 });
  Duel.moves.move.move({ G });
  Duel.moves.move.move({ G });
  assert.equal(G.count, 2);
  assert.deepEqual(Duel.turn, { minMoves: 1, maxMoves: 1 });
});

test("the move is applied by the server only, so the client times the server's update", () => {
  assert.equal(Duel.moves.move.client, false);
  assert.equal(Duel.minPlayers, 2);
  assert.equal(Duel.maxPlayers, 2);
});
