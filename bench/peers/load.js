// The load generator of bench/peers/run.py: R rooms of two players on a peer's server, each
// player on its own connection made by the peer's official client library, moving as soon as
// it is its turn (bench/moves.py's duel workload). Connects every room first, prints "ready",
// then plays for WARMUP + SECONDS and prints one line of JSON: the moves sent in the measured
// window, the latencies (from sending a move to receiving the update it caused) of the updates
// received in it, and this process's own CPU seconds over it.
//
//   node load.js colyseus|bgio|floor PORT ROOMS WARMUP SECONDS [API_PORT]   (bgio's lobby)
import { Client as ColyseusClient } from "@colyseus/sdk";
import { createRequire } from "node:module";
import WebSocket from "ws";

import { Duel } from "./bgio_game.js";

// boardgame.io's entry points are CommonJS folders, which an ES module cannot import by name.
const require = createRequire(import.meta.url);
const { Client: BgioClient, LobbyClient } = require("boardgame.io/client");
const { SocketIO } = require("boardgame.io/multiplayer");

const [peer, port, rooms, warmup, seconds, apiPort] = process.argv.slice(2);
// After the window the players stop moving but stay connected this long, so the moves still
// in flight are answered without the server also handling every disconnect (loadgen.LINGER).
const LINGER = 1000;
// Rooms set up at once: the peers' matchmaking is HTTP, one request per seat.
const SETUP_BATCH = 25;
// The floor's rooms are numbered by the load generator (floor_server.py makes a room when its
// first seat connects).
let floorRooms = 0;
const MOVE = new Uint8Array([0x6d]); // binary, as Playhall's clients send their frames

function opened(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

// A room: two seats, each a function (onUpdate) => send, where the peer calls
// onUpdate(turn, count) on every state its client sees and send() makes the seat's move.
const PEERS = {
  async colyseus() {
    const client = new ColyseusClient(`ws://127.0.0.1:${port}`);
    const a = await client.create("duel");
    const b = await client.joinById(a.roomId);
    return [a, b].map((room) => (onUpdate) => {
      room.onStateChange((state) => onUpdate(state.turn, state.count));
      onUpdate(room.state.turn, room.state.count);
      return () => room.send("move");
    });
  },
  async bgio() {
    const server = `http://127.0.0.1:${port}`;
    const lobby = new LobbyClient({ server: `http://127.0.0.1:${apiPort}` });
    const { matchID } = await lobby.createMatch("duel", { numPlayers: 2 });
    const seats = [];
    for (const playerID of ["0", "1"]) {
      const { playerCredentials } = await lobby.joinMatch("duel", matchID, {
        playerID,
        playerName: playerID,
      });
      seats.push((onUpdate) => {
        const client = BgioClient({
          game: Duel,
          numPlayers: 2,
          // Websocket from the start, as the other servers' clients connect (socket.io would
          // otherwise begin with HTTP long-polling and upgrade).
          multiplayer: SocketIO({ server, socketOpts: { transports: ["websocket"] } }),
          matchID,
          playerID,
          credentials: playerCredentials,
          debug: false,
        });
        client.subscribe((state) => {
          if (state) onUpdate(Number(state.ctx.currentPlayer), state.G.count);
        });
        client.start();
        return () => client.moves.move();
      });
    }
    return seats;
  },
  async floor() {
    const room = floorRooms++;
    const sockets = await Promise.all([0, 1].map((seat) => opened(`ws://127.0.0.1:${port}/${room}/${seat}`)));
    return sockets.map((ws) => (onUpdate) => {
      ws.on("message", (data) => {
        const [turn, count] = String(data).split(" ");
        onUpdate(Number(turn), Number(count));
      });
      onUpdate(0, 0); // seat 0 moves first; the server sends nothing before the first move
      return () => ws.send(MOVE);
    });
  },
};

const stats = { moves: 0, lat: [] };
let measureFrom = Infinity;
let stopAt = Infinity;
let playing = false;

// One player on its seat (seatOf, from PEERS): returns its move(), which moves if it may.
function player(seat, seatOf) {
  let turn = -1;
  let count = 0;
  let sentAt = null;
  let sentCount = -1;
  const move = () => {
    if (!playing || turn !== seat || sentAt !== null) return;
    const now = performance.now();
    if (now >= stopAt) return;
    sentAt = now;
    sentCount = count;
    if (now >= measureFrom) stats.moves += 1;
    send();
  };
  const send = seatOf((newTurn, newCount) => {
    turn = newTurn;
    count = newCount;
    if (sentAt !== null && count > sentCount) {
      const now = performance.now();
      if (now >= measureFrom) stats.lat.push(now - sentAt);
      sentAt = null;
    }
    move();
  });
  return move;
}

const players = [];
for (let done = 0; done < Number(rooms); done += SETUP_BATCH) {
  const batch = Math.min(SETUP_BATCH, Number(rooms) - done);
  const seats = await Promise.all(Array.from({ length: batch }, PEERS[peer]));
  for (const room of seats) room.forEach((seatOf, seat) => players.push(player(seat, seatOf)));
}

process.stdout.write("ready\n");
const start = performance.now();
measureFrom = start + Number(warmup) * 1000;
stopAt = measureFrom + Number(seconds) * 1000;
playing = true;
for (const move of players) move();
let cpuFrom = null;
setTimeout(() => {
  cpuFrom = process.cpuUsage();
}, measureFrom - start);
setTimeout(() => {
  const cpu = process.cpuUsage(cpuFrom);
  setTimeout(() => {
    const lat = stats.lat.map((ms) => Math.round(ms * 1000) / 1000); // to the microsecond
    const line = JSON.stringify({ moves: stats.moves, lat, cpu: (cpu.user + cpu.system) / 1e6 });
    // Exit once the line is written: a pipe's writes are asynchronous in node.
    process.stdout.write(`${line}\n`, () => process.exit(0));
  }, LINGER);
}, stopAt - start);
