// The duel on boardgame.io's server (bench/peers/run.py): its socket.io transport on PORT and
// its lobby API (matches made and seats taken over HTTP) on API_PORT, with its default storage,
// InMemory (the process's memory: the match's state and its log of moves are kept there and
// written nowhere else).
//
//   node bgio_server.js PORT API_PORT
import { createRequire } from "node:module";

import { Duel } from "./bgio_game.js";

// boardgame.io's entry points are CommonJS folders, which an ES module cannot import by name.
const { Server } = createRequire(import.meta.url)("boardgame.io/server");

// Only node clients connect (no Origin header), so no browser origin is allowed.
const server = Server({ games: [Duel], origins: [] });
// The lobby API on a port of its own (lobbyConfig): served on the game's port, its routes are
// not found, as the socket.io transport makes that port's HTTP server before they are added.
await server.run({ port: Number(process.argv[2]), lobbyConfig: { apiPort: Number(process.argv[3]) } });
