// The outcome panel at a game's end: who won, why the game ended, who left it, and the scores.
import { formatScore, h, seatName } from "../ui.js";

/** What an outcome's reason means, for the reasons every game may end with. */
const REASONS = {
  resignation: "resignation: a player left the game",
  timeout: "timeout: a player ran out of time",
  abandoned: "abandoned: nobody played or watched it for a long time",
  closed_by_operator: "closed by the server's operator",
};

/** Name for a score's index: a seat, or a non-seat player of the game (Master Yoga). */
function scoreName(view, i) {
  if (i < view.seats.length) return seatName(view, i);
  const players = view.state && view.state.players;
  return (players && players[i] && players[i].name) || `player ${i + 1}`;
}

/** `renderer.winners(view)`, where the game has it, reads a winner that has no seat (Master Yoga):
 * indices into `scores`; otherwise the outcome's `winners` say it all. */
function panel(v, o, renderer, linkReplay) {
  const won = (renderer && renderer.winners ? renderer.winners(v) : null) || o.winners;
  const winners = new Set(won);
  const verdict = won.length
    ? `${won.map((i) => scoreName(v, i)).join(" and ")} ${won.length > 1 ? "win" : "wins"}`
    : "a draw";
  return h(
    "section",
    { class: "panel outcome", "data-testid": "outcome", role: "status" },
    h("h3", { text: `Game over: ${verdict}` }),
    h("p", { class: "small", text: `(${REASONS[o.reason] || String(o.reason).replaceAll("_", " ")})` }),
    linkReplay
      ? h(
          "p",
          {},
          h("a", {
            href: `#replay=${encodeURIComponent(v.room)}`,
            "data-testid": "replay-link",
            text: "Replay this game step by step",
          }),
        )
      : null,
    o.left && o.left.length
      ? h("p", { class: "small", text: `Left the game: ${o.left.map((i) => seatName(v, i)).join(", ")}` })
      : null,
    h(
      "table",
      {},
      h(
        "tbody",
        {},
        (o.scores || []).map((score, i) =>
          h(
            "tr",
            { class: winners.has(i) ? "winner" : "" },
            h("th", { text: scoreName(v, i) }),
            h("td", { text: formatScore(score) }),
            h("td", { text: winners.has(i) ? "★ winner" : "" }),
          ),
        ),
      ),
    ),
  );
}

/** `linkReplay`: the panel links to the game's replay (not on the replay itself). */
export function createOutcome({ linkReplay = true } = {}) {
  const el = h("div", { "data-testid": "outcome-slot" });
  return {
    el,
    /** `renderer`: the game's, or null while it loads. */
    draw(v, renderer) {
      if (v.outcome) el.replaceChildren(panel(v, v.outcome, renderer, linkReplay));
      else el.replaceChildren();
    },
  };
}
