// The table's controls: sitting down, bots, ready, start, rematch, resign (with a confirm step),
// the "your turn" mark (announced to screen readers when it becomes this seat's turn), the
// stand-in hint, and "watching" for a spectator.
import { h } from "../ui.js";
import { seatsLeft } from "./seats.js";

/** 16 random bytes: this player's contribution to the room's deal, sent with "ready" (PROTOCOL.md,
 * "Fair deals"), so the server alone cannot choose the cards. The room's memo keeps the last one
 * sent, for the check at the end (room/verified.js). */
function contribution() {
  return crypto.getRandomValues(new Uint8Array(16));
}

function button(label, onClick, cls = null) {
  return h("button", { type: "button", class: cls, on: { click: onClick } }, label);
}

/** `app`: the page (openRoom); `act(kind, fields)`: a request for this room, null if refused;
 * `memo`: the room's scratch state (`confirmResign` survives redraws); `player()`: this
 * connection's player id. */
export function createControls({ app, room, act, memo, player }) {
  const el = h("div", { class: "controls", "data-testid": "controls" });
  const announceEl = h("p", { class: "sr-only", "aria-live": "polite" });
  let wasMyTurn = false;
  let shown = null;

  function waiting(v, seated, empties) {
    if (!seated)
      return empties.map((i) => button(`Sit in seat ${i + 1}`, () => app.openRoom(room, { seat: i })));
    const ready = v.seats[v.you].ready;
    return [
      ...empties.map((i) => button(`Bot in seat ${i + 1}`, () => act("bot", { seat: i }))),
      ready
        ? button("Not ready", () => act("ready", { ready: false }))
        : button(
            "Ready",
            () => act("ready", { ready: true, entropy: (memo.entropy = contribution()) }),
            "primary",
          ),
      v.creator === player() && !empties.length ? button("Start now", () => act("start")) : null,
    ];
  }

  function finished(v, seated) {
    if (seated && v.rematch) return button("Go to the rematch", () => app.openRoom(v.rematch), "primary");
    if (seated) {
      const rematch = async () => {
        const r = await act("rematch");
        if (r) app.openRoom(r.room);
      };
      return button("Rematch", rematch, "primary");
    }
    return v.rematch ? button("Watch the rematch", () => app.openRoom(v.rematch, { watch: true })) : null;
  }

  /** Resign, with a confirm step: leaves the game being played (`resign`), keeping the seat. */
  function resignControl() {
    const ask = (confirming) => () => {
      memo.confirmResign = confirming;
      draw(shown);
    };
    if (!memo.confirmResign) return button("Resign…", ask(true), "quiet");
    const resign = async () => {
      memo.confirmResign = false;
      await act("resign");
    };
    return h(
      "span",
      { class: "confirm" },
      button("Yes, resign", resign, "danger"),
      " ",
      button("Keep playing", ask(false)),
    );
  }

  function draw(v) {
    shown = v;
    const seated = v.you !== null && v.you !== undefined;
    const empties = v.seats.map((s, i) => (!s.bot && !s.player ? i : -1)).filter((i) => i >= 0);
    const items = [];
    if (v.status === "waiting") items.push(...waiting(v, seated, empties));
    if (v.status === "finished") items.push(finished(v, seated));
    if (!seated) items.push(h("span", { class: "tag", text: "watching" }));
    const inGame = seated && v.status === "playing" && !seatsLeft(v).has(v.you);
    if (inGame && v.seats[v.you].stand_in)
      items.push(
        h("span", {
          class: "hint",
          "data-testid": "stand-in-hint",
          text: `The server's bot is playing for you (${v.seats[v.you].stand_in}): any move takes your seat back.`,
        }),
      );
    if (inGame) items.push(resignControl());
    const myTurn = seated && v.status === "playing" && (v.to_act || []).includes(v.you);
    if (myTurn)
      items.unshift(h("span", { class: "tag turn", "data-testid": "your-turn", text: "▶ your turn" }));
    // Announced to screen readers when it becomes this seat's turn (not on every redraw).
    if (myTurn !== wasMyTurn) announceEl.textContent = myTurn ? "Your turn" : "";
    wasMyTurn = myTurn;
    // Every draw rebuilds the controls: a control that had the keyboard focus (Ready, say, while
    // someone joins) gives it to its successor with the same label, so Enter still works.
    const had = el.contains(document.activeElement) ? document.activeElement.textContent : null;
    el.replaceChildren(...items.filter(Boolean));
    if (had !== null) [...el.querySelectorAll("button")].find((b) => b.textContent === had)?.focus();
  }

  return { el, announceEl, draw };
}
