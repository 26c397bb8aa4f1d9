// The seats: who sits where, whose turn it is, ready marks, stand-ins, who left the game, who is
// here, and a slot for each seat's clock.
import { h } from "../ui.js";
import { showClocks } from "./clocks.js";

/** Seats that left the game: the outcome's `left`, or the game's own (Mantis plays on). */
export function seatsLeft(v) {
  const fromState = v.state && Array.isArray(v.state.left) ? v.state.left : [];
  return new Set([...((v.outcome && v.outcome.left) || []), ...fromState]);
}

function seatItem(v, s, i, here, gone) {
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
    h("span", { class: "clock", "data-clock": i }),
  );
}

export function createSeats() {
  const el = h("ul", { class: "seats", "data-testid": "seats", "aria-label": "seats" });
  return {
    el,
    /** `presence[i]`: seat i's player is connected; `now`: the server's time, for the clocks. */
    draw(v, presence, now) {
      const left = seatsLeft(v);
      el.replaceChildren(...v.seats.map((s, i) => seatItem(v, s, i, presence[i], left.has(i))));
      showClocks(el, v.clock, now);
    },
  };
}
