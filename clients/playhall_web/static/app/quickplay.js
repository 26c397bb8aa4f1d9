// The lobby's "Play now" panel: quick play (the server's `seek`). Pick a game, the seat counts
// you accept and whether bots may fill the table after a wait; the server seats you at the open
// table nearest to starting, or opens one, and the page opens that room (its game starts when
// the table is full). Leaving the room before it starts gives the seat back.
import { h } from "./ui.js";

/** Seconds a table you open waits for people before bots take its empty seats. */
const BOTS_AFTER_S = 30;

export function drawPlayNow(root, app, state) {
  const games = app.games.filter((g) => g.max_seats > 1);
  if (!games.length) {
    root.replaceChildren();
    return;
  }
  const game = games.find((g) => g.id === state.game) || games[0];
  state.game = game.id;
  const counts = [];
  for (let n = Math.max(2, game.min_seats); n <= game.max_seats; n++) counts.push(n);
  if (!counts.includes(state.low)) state.low = counts[0];
  if (!counts.includes(state.high) || state.high < state.low) state.high = counts[counts.length - 1];
  const redraw = () => drawPlayNow(root, app, state);
  const countSelect = (id, key) =>
    h(
      "select",
      {
        id,
        on: {
          change: (e) => {
            state[key] = Number(e.target.value);
            if (state.low > state.high) state[key === "low" ? "high" : "low"] = state[key];
            redraw();
          },
        },
      },
      counts.map((n) => h("option", { value: String(n), text: String(n), selected: n === state[key] })),
    );
  const play = async () => {
    const fields = { game: game.id, seats: [state.low, state.high] };
    if (state.bots) fields.bots_after = BOTS_AFTER_S;
    state.busy = true;
    redraw();
    try {
      const reply = await app.conn.request("seek", fields);
      await app.openRoom(reply.room);
    } catch (err) {
      app.message(`Play now: ${err.reason || err.message}`, "error");
    } finally {
      state.busy = false;
      if (root.isConnected) redraw();
    }
  };
  root.replaceChildren(
    h(
      "section",
      { class: "panel play-now", "data-testid": "play-now" },
      h("h2", { text: "Play now" }),
      h(
        "div",
        { class: "field-row" },
        h("label", { for: "quick-game", text: "game" }),
        h(
          "select",
          {
            id: "quick-game",
            on: {
              change: (e) => {
                state.game = e.target.value;
                redraw();
              },
            },
          },
          games.map((g) => h("option", { value: g.id, text: g.title, selected: g.id === game.id })),
        ),
      ),
      counts.length > 1
        ? h(
            "div",
            { class: "field-row" },
            h("label", { for: "quick-low", text: "players" }),
            countSelect("quick-low", "low"),
            h("span", { text: "to" }),
            countSelect("quick-high", "high"),
          )
        : null,
      h(
        "div",
        { class: "field-row" },
        h("input", {
          id: "quick-bots",
          type: "checkbox",
          checked: Boolean(state.bots),
          on: {
            change: (e) => {
              state.bots = e.target.checked;
            },
          },
        }),
        h("label", { for: "quick-bots", text: `bots fill empty seats after ${BOTS_AFTER_S} s` }),
      ),
      h(
        "button",
        { type: "button", class: "primary", disabled: Boolean(state.busy), on: { click: play } },
        state.busy ? "Finding a table…" : "Play now",
      ),
      h("p", {
        class: "help",
        text: "A seat at the table nearest to starting, or a new one others join; the game starts when it is full.",
      }),
    ),
  );
}
