// The game log: a line per event, the room's own events (seats, ready, start, the end) described
// here and the game's by its renderer. The server keeps the room's recent events (`history`):
// the log is filled from there when the room is opened (after a reload too) and whenever the
// page catches up by a snapshot, and from each update's events in between.
import { h, seatName } from "../ui.js";

/** The most lines the log keeps. */
const KEPT = 300;

/** A log line for an event of the room itself, or undefined for the game's own events. */
export function describeRoomEvent(ev, view) {
  const who = (s) => seatName(view, s);
  switch (ev.type) {
    case "joined":
      return `${ev.name} sits down in seat ${ev.seat + 1}`;
    case "left":
      return ev.reason
        ? `${who(ev.seat)} left the game (${ev.reason === "timeout" ? "out of time" : "resigned"})`
        : `${ev.name} leaves seat ${ev.seat + 1}`;
    case "stand_in":
      return `the server's bot plays for ${who(ev.seat)} (${ev.reason}) until they move again`;
    case "took_back":
      return `${who(ev.seat)} plays for themselves again`;
    case "renamed":
      return `seat ${ev.seat + 1} is now called ${ev.name}`;
    case "ready":
      return `${who(ev.seat)} is ${ev.ready ? "ready" : "not ready"}`;
    case "bot_added":
      return `a bot takes seat ${ev.seat + 1}`;
    case "started":
      return "the game starts";
    case "rematch":
      return "a rematch was asked for";
    case "game_over":
    case "game_end":
      return "game over";
    default:
      return undefined;
  }
}

/** The log's lines, each with the room version whose events it tells. */
export function createLog() {
  const el = h("ol", { class: "log", "data-testid": "log", "aria-label": "game log" });
  let lines = []; // {version, text}, oldest first

  function show() {
    while (lines.length > KEPT) lines.shift();
    el.replaceChildren(...lines.map(({ version, text }) => h("li", { text, data: { version } })));
    el.scrollTop = el.scrollHeight;
  }

  return {
    el,
    /** The lines of one version's events, as they arrive. */
    add(version, texts) {
      if (!texts.length) return;
      for (const text of texts) {
        lines.push({ version, text });
        el.append(h("li", { text, data: { version } }));
      }
      while (el.children.length > KEPT) el.firstChild.remove();
      if (lines.length > KEPT) lines = lines.slice(-KEPT);
      el.scrollTop = el.scrollHeight;
    },
    /** The server's history up to `upTo` replaces what the log held until then; lines of
     * later versions (updates that arrived while it was asked for) stay after it. */
    replace(upTo, history) {
      lines = [...history, ...lines.filter((line) => line.version > upTo)];
      show();
    },
  };
}
