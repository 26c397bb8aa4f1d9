// The duel as a boardgame.io game (bench/peers/run.py), shared by its server and its clients as
// boardgame.io requires: G counts the moves, a turn is one move (maxMoves 1), so the turn passes
// to the other seat after each. boardgame.io itself refuses a move from a seat whose turn it is
// not. `client: false`: the move is not applied optimistically on the client, so a client sees
// it only once the server has applied it and sent the update (what the benchmark times).
export const Duel = {
  name: "duel",
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ count: 0 }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    move: {
      move: ({ G }) => {
        G.count += 1;
      },
      client: false,
    },
  },
};
