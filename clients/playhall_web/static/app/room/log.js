// The game log: a line per event, the room's own events (seats, ready, start, the end) described
// here and the game's by its renderer. The lines are kept per room by the page (`app.logs`), so
// leaving for the lobby and coming back shows them again.
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

/** `lines`: the room's kept lines, shown at once and added to by `add`. */
export function createLog(lines) {
  const el = h("ol", { class: "log", "data-testid": "log", "aria-label": "game log" });
  for (const text of lines) el.append(h("li", { text }));
  return {
    el,
    add(more) {
      for (const text of more) {
        lines.push(text);
        el.append(h("li", { text }));
      }
      while (lines.length > KEPT) lines.shift();
      while (el.children.length > KEPT) el.firstChild.remove();
      el.scrollTop = el.scrollHeight;
    },
  };
}
