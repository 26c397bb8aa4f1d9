// The replay of a finished room (#replay=<id>): the game step by step, as one seat saw it, as a
// spectator saw it, or every seat's view side by side. The page has no engine: the server
// replays the room's record and sends each viewer's frames (the `replay` request: per step, the
// step, the events that viewer could see and its room view, as a diff from the step before),
// and each frame is drawn by the
// game's own renderer, with no move offered. Steps move with the buttons or the arrow keys.
import { applyDiff, copyValue } from "../lib/playhall.js";
import { h, seatName } from "./ui.js";
import { createBoard } from "./room/board.js";
import { describeRoomEvent } from "./room/log.js";
import { createOutcome } from "./room/outcome.js";
import { loadRenderer } from "./room/renderers.js";

const EVERY_SEAT = "all";
const SPECTATOR = "spectator";

/** What made a frame, in a line: "the game is set up", "alice: steal from Bob", ... */
function stepText(frame) {
  const step = frame.step;
  const v = frame.view;
  if (!step) return "the game is set up";
  const who = typeof step.seat === "number" ? seatName({ ...v, you: null }, step.seat) : "";
  if (step.kind === "auto") return "an automatic step";
  if (step.kind === "leave_game")
    return `${who} left the game (${step.move === "timeout" ? "out of time" : "resigned"})`;
  if (step.kind === "bot_move") return `${who} (bot) moved`;
  return `${who} moved`;
}

export function showReplay(app, root, room) {
  const conn = app.conn;
  const frames = new Map(); // viewer ("spectator" or a seat as text) -> its frames, once fetched
  let shown = SPECTATOR; // a seat as text, SPECTATOR or EVERY_SEAT
  let at = 0;
  let renderer = null;
  let stopped = false;
  const boards = [];

  const title = h("h2", { text: `Replay of room ${room}` });
  const status = h("p", { class: "muted", "data-testid": "replay-status", text: "loading the replay…" });
  const picker = h("select", { id: "replay-viewer", "data-testid": "replay-viewer" });
  const counter = h("output", { class: "replay-step", "data-testid": "replay-step" });
  const what = h("p", { "data-testid": "replay-what" });
  const events = h("ul", { class: "log", "data-testid": "replay-events" });
  const outcome = createOutcome({ linkReplay: false });
  const boardsEl = h("div", { class: "replay-boards", "data-testid": "replay-boards" });
  const button = (label, testid, go) =>
    h("button", { type: "button", "data-testid": testid, on: { click: () => move(go()) } }, label);
  const controls = h(
    "div",
    { class: "replay-controls" },
    button("« start", "replay-first", () => 0),
    button("◀ back", "replay-back", () => at - 1),
    counter,
    button("next ▶", "replay-next", () => at + 1),
    button("end »", "replay-last", () => Infinity),
  );

  const viewers = () => (shown === EVERY_SEAT ? seatsOf().map(String) : [shown]);
  const seatsOf = () => {
    const any = frames.values().next().value;
    return any ? any[0].view.seats.map((_, i) => i) : [];
  };
  const last = () => {
    const any = frames.get(viewers()[0]);
    return any ? any.length - 1 : 0;
  };

  async function fetchFrames(viewer) {
    if (frames.has(viewer)) return frames.get(viewer);
    const fields = { room };
    if (viewer !== SPECTATOR) fields.seat = Number(viewer);
    const reply = await conn.request("replay", fields);
    // The first frame carries its view, each later one the diff from the view before it.
    let view = null;
    const whole = reply.frames.map((frame) => {
      view = frame.view !== undefined ? frame.view : applyDiff(copyValue(view), frame.diff);
      return { ...frame, view };
    });
    frames.set(viewer, whole);
    return whole;
  }

  async function show(viewer) {
    shown = viewer;
    try {
      await Promise.all(viewers().map(fetchFrames));
    } catch (err) {
      status.textContent = `No replay of room ${room}: ${err.reason || err.message}`;
      return;
    }
    if (stopped) return;
    const game = frames.get(viewers()[0])[0].view.game;
    renderer = await loadRenderer(game);
    const known = app.games.find((g) => g.id === game);
    title.textContent = `Replay: ${known ? known.title : game} · room ${room}`;
    status.textContent = "";
    fillPicker();
    move(at);
  }

  function fillPicker() {
    const first = frames.get(viewers()[0])[0].view;
    const options = [
      [SPECTATOR, "a spectator"],
      ...first.seats.map((_, i) => [String(i), `seat ${i + 1}: ${seatName({ ...first, you: null }, i)}`]),
      [EVERY_SEAT, "every seat"],
    ];
    picker.replaceChildren(
      ...options.map(([value, label]) => h("option", { value, selected: value === shown, text: label })),
    );
  }

  function move(to) {
    at = Math.max(0, Math.min(last(), to));
    draw();
  }

  function draw() {
    const all = viewers().map((viewer) => frames.get(viewer)[at]);
    const head = all[0];
    counter.textContent = `step ${at} of ${last()}`;
    what.textContent = stepText(head);
    events.replaceChildren(
      ...all
        .flatMap((frame) => {
          // Every seat's events in one list name the seats alike (no "you"), so an event all
          // of them saw reads the same and is listed once.
          const v = all.length > 1 ? { ...frame.view, you: null } : frame.view;
          return (frame.events || []).map((ev) => describeRoomEvent(ev, v) ?? renderer.describe(ev, v));
        })
        .filter((text, j, texts) => text && texts.indexOf(text) === j) // every seat: an event once
        .map((text) => h("li", { text })),
    );
    outcome.draw(head.view, renderer);
    while (boards.length < all.length) boards.push(createBoard({ play: () => {} }));
    boardsEl.replaceChildren(
      ...all.map((frame, i) => {
        boards[i].draw(frame.view, renderer, { canMove: false, play: () => {}, memo: {}, redraw: draw });
        const label =
          frame.view.you === null
            ? "as a spectator"
            : `as ${seatName({ ...frame.view, you: null }, frame.view.you)}`;
        return h(
          "section",
          { class: "panel", "data-testid": "replay-board" },
          h("h3", { text: label }),
          boards[i].el,
        );
      }),
    );
  }

  const onKey = (e) => {
    if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT")) return;
    if (e.key === "ArrowRight") move(at + 1);
    else if (e.key === "ArrowLeft") move(at - 1);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(Infinity);
    else return;
    e.preventDefault();
  };
  document.addEventListener("keydown", onKey);
  picker.addEventListener("change", () => show(picker.value));

  root.append(
    h(
      "div",
      { class: "replay", "data-testid": "replay", data: { room } },
      h(
        "header",
        { class: "panel" },
        title,
        h("p", {}, h("a", { href: `#room=${encodeURIComponent(room)}`, text: "Back to the room" })),
        h("label", { for: "replay-viewer", text: "as seen by " }),
        picker,
        controls,
        what,
        status,
      ),
      outcome.el,
      boardsEl,
      h("section", { class: "panel" }, h("h3", { text: "This step" }), events),
    ),
  );
  show(SPECTATOR);

  return {
    kind: "replay",
    room,
    stop: () => {
      stopped = true;
      document.removeEventListener("keydown", onKey);
      for (const board of boards) board.stop();
    },
  };
}
