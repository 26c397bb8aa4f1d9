// The duel on Colyseus (bench/peers/run.py): a room of two seats whose state is whose turn it
// is and how many moves were made. A move is accepted when it comes from the seat whose turn it
// is and flips the turn; the state lives in the room's memory only and is stored nowhere (unlike
// Playhall's, which is written to Redis before the move is acknowledged).
//
//   node colyseus_server.js PORT
import { Room, Server } from "@colyseus/core";
import { schema, t } from "@colyseus/schema";
import { WebSocketTransport } from "@colyseus/ws-transport";

// turn: the seat to move (0 or 1), NOBODY until both seats are taken.
const NOBODY = 2;
const DuelState = schema({ turn: t.uint8(), count: t.uint32() }, "DuelState");

class Duel extends Room {
  maxClients = 2;
  // No patch timer: the move's patch goes out as soon as the move is applied (broadcastPatch
  // below), as Playhall's update does. Colyseus's default is a patch every 50 ms, which would
  // cap a room at 20 moves a second.
  patchRate = null;

  onCreate() {
    this.state = new DuelState({ turn: NOBODY, count: 0 });
    this.onMessage("move", (client) => {
      if (client.userData.seat !== this.state.turn) return; // out of turn: ignored
      this.state.turn = 1 - this.state.turn;
      this.state.count += 1;
      this.broadcastPatch();
    });
  }

  onJoin(client) {
    // Seats in the order of joining: the creator is seat 0.
    client.userData = { seat: this.clients.length - 1 };
    if (this.clients.length === 2) {
      this.state.turn = 0;
      this.broadcastPatch();
    }
  }
}

const server = new Server({ transport: new WebSocketTransport(), greet: false });
server.define("duel", Duel);
await server.listen(Number(process.argv[2]), "127.0.0.1");
