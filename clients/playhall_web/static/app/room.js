// The room screen, wired from its parts in room/: the header (head.js), the seats with presence
// and clocks (seats.js, clocks.js), the table's controls (controls.js), the outcome (outcome.js)
// and the finished game's record checked (verified.js),
// the game's board drawn by its renderer (board.js, renderers.js), the game log fed by events
// (log.js, from the server's history of the room), the chat with its history (chat.js) and
// the alerts that it is your turn (attention.js). This module holds what ties them together:
// the room's connection events, sending moves and requests, and replaying an update's frames.
import { copyValue } from "../lib/playhall.js";
import { h, pause, reducedMotion } from "./ui.js";
import { createAttention } from "./room/attention.js";
import { createBoard } from "./room/board.js";
import { createChat } from "./room/chat.js";
import { showClocks, showCountdowns, showStandIns } from "./room/clocks.js";
import { createControls } from "./room/controls.js";
import { createHead } from "./room/head.js";
import { createLog, describeRoomEvent } from "./room/log.js";
import { createOutcome } from "./room/outcome.js";
import { createVerification } from "./room/verified.js";
import { loadedRenderer, loadRenderer } from "./room/renderers.js";
import { createSeats } from "./room/seats.js";

/** What a refused request means for the person at the page. */
const REFUSALS = {
  stale: "The game moved on before your move arrived: look again and choose.",
  not_your_turn: "It is not your turn.",
  rate_limited: "Too many actions at once: wait a moment and try again.",
  illegal_move: "That move is not allowed now.",
  game_over: "The game is over.",
  disconnected: "The connection dropped before the server answered: try again.",
  wrong_status: "Not possible at this point of the game.",
};

export function refusalText(err) {
  const reason = err.reason || err.message || String(err);
  const known = REFUSALS[err.code];
  return known ? `${known} (${reason})` : `Refused: ${reason}${err.code ? ` [${err.code}]` : ""}`;
}

export function showRoom(app, root, room, history) {
  const conn = app.conn;
  if (!app.memos.has(room)) app.memos.set(room, {});
  const memo = app.memos.get(room);
  let busy = false;
  let animating = 0; // bumped by every update: a newer one stops an older animation
  let lastView = null;

  const mirror = () => conn.rooms.get(room);
  const view = () => (mirror() ? mirror().view : null);
  let stopped = false;
  let loading = null; // the game whose renderer is being loaded for this screen
  /** The game's renderer, or null while its module loads (the room is drawn again then). */
  const renderer = () => {
    const v = view();
    if (!v) return null;
    const found = loadedRenderer(v.game);
    if (!found && loading !== v.game) {
      loading = v.game;
      loadRenderer(v.game).then(() => {
        if (!stopped) draw();
      });
    }
    return found;
  };
  // The view as drawn, for the next update's replay to start from: the mirror's own state is
  // changed in place by diffs, so its state is copied.
  const keep = (v) => ({ ...v, state: copyValue(v.state) });

  async function play(move) {
    if (busy) return;
    busy = true;
    drawBoard();
    try {
      await conn.move(room, move);
    } catch (err) {
      app.message(refusalText(err), "error");
    } finally {
      busy = false;
      draw();
    }
  }

  async function act(kind, fields = {}) {
    try {
      return await conn.request(kind, { room, ...fields });
    } catch (err) {
      app.message(refusalText(err), "error");
      return null;
    }
  }

  async function leave() {
    await act("leave");
    app.openLobby();
  }

  const head = createHead({ app, room, leave });
  const seats = createSeats();
  const controls = createControls({ app, room, act, memo, player: () => conn.player });
  const outcome = createOutcome();
  const verification = createVerification({
    room,
    fetchRecord: async () => (await conn.request("record", { room })).record,
    memo,
  });
  const board = createBoard({ play });
  const log = createLog();
  const chat = createChat({ say: (text) => act("chat", { text }) });
  const gameTitle = (v) => (app.games.find((g) => g.id === v.game) || {}).title || v.game;
  const attention = createAttention({
    describe: () => (view() ? `${gameTitle(view())}: it is your turn (room ${room}).` : "It is your turn."),
  });

  /** The log's lines for `events` of a version, as the view `v` names the seats. */
  const describe = (events, v) => {
    const r = renderer();
    return (events || [])
      .map((ev) => describeRoomEvent(ev, v) ?? (r ? r.describe(ev, v) : null))
      .filter(Boolean);
  };

  /** The game log from the server's history of the room (what this page missed, or all of it
   * after a reload): asked when the room opens and whenever the page catches up by a snapshot. */
  async function loadHistory() {
    let reply;
    try {
      reply = await conn.request("history", { room });
    } catch (err) {
      if (err.code !== "closed") app.message(`Game log: ${err.reason || err.message}`, "error");
      return;
    }
    if (stopped || !view()) return;
    await loadRenderer(view().game); // the game's events are described by its renderer
    const v = view();
    if (stopped || !v) return;
    const lines = reply.log.flatMap((entry) =>
      describe(entry.events, v).map((text) => ({ version: entry.version, text })),
    );
    log.replace(reply.version, lines);
  }

  const ctxFor = (frameView) => ({
    canMove: !frameView && !busy && conn.state === "open" && (view() || {}).status === "playing",
    play,
    memo,
    redraw: draw,
    secondsTo: (deadline) => Number(deadline) - conn.serverNow(),
  });

  function drawBoard(frame) {
    board.draw(frame ? frame.view : view(), renderer(), ctxFor(frame), frame);
  }

  /** Everything but the board, which an update's replay draws frame by frame. */
  function drawTable(v) {
    root.dataset.game = v.game;
    head.draw(v);
    seats.draw(v, mirror() || {}, conn.serverNow());
    controls.draw(v);
    attention.update(v);
    outcome.draw(v, renderer());
    verification.draw(v);
  }

  function draw() {
    const v = view();
    document.body.classList.toggle("offline", conn.state !== "open");
    if (!v) {
      drawBoard();
      return;
    }
    drawTable(v);
    drawBoard();
    lastView = keep(v);
  }

  async function animate(prev, v, events) {
    const r = renderer();
    const token = ++animating;
    const frames = r && r.frames && !reducedMotion() ? r.frames(prev, v, events) : [];
    for (const frame of frames) {
      if (token !== animating) return;
      drawBoard(frame);
      await pause(r.frameMs || 120);
    }
    if (token === animating) draw();
  }

  const onView = ({ room: id, events, kind }) => {
    if (id !== room) return;
    const v = view();
    if (!v) {
      draw();
      return;
    }
    const r = renderer();
    if (kind === "snapshot") loadHistory();
    else log.add(mirror().version, describe(events, v));
    const prev = lastView;
    if (kind === "update" && events && events.length && r && r.frames && prev && prev.state) {
      lastView = keep(v);
      drawTable(v);
      animate(prev, v, events);
    } else {
      animating++;
      draw();
    }
  };
  const onPresence = ({ room: id }) => {
    if (id === room && view()) seats.draw(view(), mirror(), conn.serverNow());
  };
  const onChat = (line) => {
    if (line.room === room) chat.add(line);
  };
  const onStatus = () => draw();
  const onLeft = ({ room: id }) => {
    if (id === room && app.screen && app.screen.room === room) draw();
  };
  const listeners = { view: onView, presence: onPresence, chat: onChat, status: onStatus, left: onLeft };
  for (const [name, fn] of Object.entries(listeners)) conn.on(name, fn);

  const tick = setInterval(() => {
    const now = conn.serverNow();
    showCountdowns(board.el, now);
    const v = view();
    if (v) showClocks(seats.el, v.clock, now);
    showStandIns(seats.el, now);
  }, 200);

  root.append(
    h(
      "div",
      { class: "room", "data-testid": "room", data: { room } },
      head.el,
      controls.announceEl,
      h(
        "div",
        { class: "room-grid" },
        h(
          "div",
          { class: "room-main" },
          h("div", { class: "table-bar" }, seats.el, controls.el),
          outcome.el,
          verification.el,
          board.el,
        ),
        h(
          "aside",
          { class: "room-side" },
          h("section", { class: "panel" }, h("h3", { text: "Game log" }), log.el),
          chat.el,
          attention.el,
        ),
      ),
    ),
  );
  for (const line of history) chat.add(line);
  draw();
  loadHistory();

  return {
    kind: "room",
    room,
    refresh: draw,
    play,
    /** For tests and debugging: the move keys the board offers right now. */
    offered: board.offered,
    /** For tests: the alerts given for your turns ("sound", "notification"). */
    alerts: attention.sent,
    stop: () => {
      stopped = true;
      attention.stop();
      clearInterval(tick);
      animating++;
      for (const [name, fn] of Object.entries(listeners)) conn.off(name, fn);
      board.stop();
    },
  };
}
