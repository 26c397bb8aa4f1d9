// The seats: who sits where, whose turn it is, ready marks, stand-ins, who left the game, who is
// here (and, for an absent player the game waits for, a countdown to the server's bot standing
// in), a slot for each seat's clock, and who is watching.
import { h } from "../ui.js";
import { showClocks, showStandIns } from "./clocks.js";

/** Seats that left the game: the outcome's `left`, or the game's own (Mantis plays on). */
export function seatsLeft(v) {
  const fromState = v.state && Array.isArray(v.state.left) ? v.state.left : [];
  return new Set([...((v.outcome && v.outcome.left) || []), ...fromState]);
}

/** For an absent player the game waits for: when the server's bot stands in (presence's
 * `stand_in_at`), counted down by the room's tick. */
function standInDue(v, i, at) {
  if (at === null || at === undefined || v.status !== "playing" || !(v.to_act || []).includes(i)) return null;
  return h("span", {
    class: "tag away-due",
    "data-testid": "stand-in-due",
    data: { standInAt: Number(at) },
    title: "they are away: if they do not come back by then, the server's bot plays for them",
  });
}

function seatItem(v, s, i, here, gone, standInAt) {
  const empty = !s.bot && !s.player;
  const acting = (v.to_act || []).includes(i);
  return h(
    "li",
    {
      class: `seat${acting ? " acting" : ""}${i === v.you ? " mine" : ""}${empty ? " empty" : ""}`,
      data: { seat: i },
    },
    h("span", { class: "turn-mark", text: acting ? "▶" : "", title: acting ? "to act" : null }),
    h("span", { class: "seat-n", text: `${i + 1}` }),
    h("span", { class: "seat-name", text: empty ? "empty seat" : s.name }),
    i === v.you ? h("span", { class: "tag you", text: "you" }) : null,
    s.bot ? h("span", { class: "tag", text: "bot" }) : null,
    !empty && v.status === "waiting"
      ? h("span", { class: `tag${s.ready ? " ok" : ""}`, text: s.ready ? "✓ ready" : "not ready" })
      : null,
    s.stand_in
      ? h("span", {
          class: "tag stand-in",
          "data-testid": "stand-in",
          title: "the server's bot plays this seat until its player moves again",
          text: `stand-in (${s.stand_in})`,
        })
      : null,
    gone ? h("span", { class: "tag gone", "data-testid": "left-game", text: "left the game" }) : null,
    !empty && !s.bot
      ? h("span", { class: `presence ${here ? "on" : "off"}`, text: here ? "● here" : "○ away" })
      : null,
    here ? null : standInDue(v, i, standInAt),
    h("span", { class: "clock", "data-clock": i }),
  );
}

/** "Watching: abe, zoe" (the names the server sends, and how many more there are). */
function watchingText(watching, watchers) {
  if (!watching) return "";
  const more = watching - watchers.length;
  return `Watching: ${watchers.join(", ")}${more > 0 ? `${watchers.length ? " and " : ""}${more} more` : ""}`;
}

export function createSeats() {
  const list = h("ul", { class: "seats", "data-testid": "seats", "aria-label": "seats" });
  const watchersEl = h("p", { class: "watchers muted small", "data-testid": "watchers" });
  const el = h("div", { class: "seats-box" }, list, watchersEl);
  return {
    el,
    /** `presence`: the mirror's (seat i's player is connected, when a stand-in is due, who
     * watches); `now`: the server's time, for the clocks and countdowns. */
    draw(v, presence, now) {
      const left = seatsLeft(v);
      const here = presence.presence || [];
      const due = presence.standInAt || [];
      list.replaceChildren(...v.seats.map((s, i) => seatItem(v, s, i, here[i], left.has(i), due[i])));
      watchersEl.textContent = watchingText(presence.watching || 0, presence.watchers || []);
      showClocks(list, v.clock, now);
      showStandIns(list, now);
    },
  };
}
