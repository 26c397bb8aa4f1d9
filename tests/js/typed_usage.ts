// A small program against the package's TypeScript declarations, imported by the package's
// name as a bot or a page would: `npm run typecheck` (tsc, no output) fails if the
// declarations and their use disagree. Lines marked @ts-expect-error must stay errors.

import {
  applyDiff,
  decodeFrame,
  encode,
  Float,
  PlayhallConnection,
  PlayhallError,
  toNumber,
  verifyRecord,
  type DiffOp,
  type GameInfo,
  type HelloReply,
  type RecordReport,
  type RoomView,
} from "playhall-client";

export async function play(url: string, fetchToken: () => Promise<string>): Promise<void> {
  const conn = new PlayhallConnection(url, { hostToken: fetchToken, name: "typed" });
  conn.on("status", ({ state }) => {
    const known: "idle" | "connecting" | "open" | "reconnecting" | "closed" = state;
    void known;
  });
  conn.on("error", ({ code, reason }) => console.warn(code.toUpperCase(), reason));
  const hello: HelloReply = await conn.connect();
  const rate: number = toNumber(hello.limits.rate);
  void rate;

  const games: GameInfo[] = (await conn.request("games")).games;
  const { room, code } = await conn.request("create", { game: games[0].id, seats: 2, private: true });
  const joinCode: string | null = code;
  void joinCode;
  // @ts-expect-error `seats` is required by create
  void conn.request("create", { game: "mantis" });

  conn.on("view", ({ mirror, kind }) => {
    const view: RoomView | null = mirror.view;
    if (view === null || kind === "update") return;
    const status: "waiting" | "playing" | "finished" = view.status;
    void status;
    if (view.you !== null && view.to_act.includes(view.you)) {
      void conn.move(room, view.moves[0]).then(({ version }) => console.warn(version));
    }
  });
  try {
    await conn.request("start", { room });
  } catch (err) {
    if (err instanceof PlayhallError) console.warn(err.code, err.reason, err.version);
  }

  const { record } = await conn.request("record", { room });
  const report: RecordReport = await verifyRecord(record, {
    seenCommitment: record.fair.commitment,
    own: { seat: 0, entropy: new Uint8Array(16) },
  });
  if (!report.ok) console.warn(report.failures.map((f) => `${f.where} ${f.field}`).join("; "));
  // @ts-expect-error `own` names a seat
  void verifyRecord(record, { own: { entropy: new Uint8Array(16) } });

  const ops: DiffOp[] = [
    ["set", ["state", "turn"], 1],
    ["len", ["moves"], 0],
  ];
  const view = applyDiff({ state: { turn: 0 }, moves: [] }, ops);
  void view;
  const frame = decodeFrame(encode({ t: "ping", id: 1, half: new Float(0.5) }));
  void frame;
  conn.close();
}
