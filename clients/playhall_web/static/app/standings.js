// The lobby's "Standings" panel: a game's leaderboard (the server's `leaderboard`: established
// ratings only, best first) and a player's record (`profile`: ratings, games won, lost and
// drawn per game, recent games). Yours is shown first; a name on the leaderboard shows theirs.
import { h } from "./ui.js";

/** Places on the leaderboard shown. */
const TOP = 10;
/** The outcome reasons of a game the server ended without a result (PROTOCOL.md, the view's `outcome`). */
const NO_RESULT = new Set(["abandoned", "closed_by_operator"]);

function title(app, id) {
  const g = app.games.find((x) => x.id === id);
  return g ? g.title : id;
}

function ratingText(r) {
  return `${r.rating}${r.provisional ? "?" : ""}`;
}

function resultText(game, player) {
  const mine = game.seats.findIndex((s) => s.player === player);
  const outcome = game.outcome || {};
  // The server ended it (nobody played it, or an operator closed it): nobody won or lost.
  if (NO_RESULT.has(outcome.reason)) return outcome.reason.replaceAll("_", " ");
  // A one-seat game nobody won was lost to the game itself (Mandala solo: Master Yoga).
  if (!(outcome.winners || []).length) return game.seats.length === 1 ? "lost" : "draw";
  return outcome.winners.includes(mine) ? "won" : "lost";
}

function gameRow(app, game, player) {
  const mine = game.seats.findIndex((s) => s.player === player);
  const others = game.seats.filter((_, i) => i !== mine).map((s) => s.name || "bot");
  const rating = mine >= 0 ? game.seats[mine].rating : undefined;
  return h(
    "li",
    { class: "played" },
    h("span", { text: `${title(app, game.game)} vs ${others.join(", ") || "solo"}` }),
    h("span", { class: `result r-${resultText(game, player)}`, text: resultText(game, player) }),
    rating ? h("span", { class: "small", text: `${rating[0]} → ${rating[1]}` }) : null,
    h("span", { class: "small muted", text: new Date(game.at * 1000).toLocaleString() }),
  );
}

function profileView(app, profile) {
  const games = Object.entries(profile.games);
  return h(
    "div",
    { class: "profile", "data-testid": "profile" },
    h("h3", { text: profile.name }),
    games.length
      ? h(
          "ul",
          { class: "record" },
          games.map(([id, g]) =>
            h(
              "li",
              { data: { game: id } },
              h("strong", { text: title(app, id) }),
              ` ${g.w} won · ${g.l} lost · ${g.d} drawn · `,
              g.rating ? `rating ${ratingText(g.rating)}` : "unrated",
            ),
          ),
        )
      : h("p", { class: "muted", text: "no finished games yet" }),
    profile.recent.length
      ? h(
          "ul",
          { class: "recent" },
          profile.recent.map((g) => gameRow(app, g, profile.player)),
        )
      : null,
    games.some(([, g]) => g.rating && g.rating.provisional)
      ? h("p", { class: "help", text: "? = provisional: on the leaderboard after a few more rated games" })
      : null,
  );
}

export function drawStandings(root, app, state) {
  const games = app.games.filter((g) => g.max_seats > 1);
  if (!games.length) return;
  state.game = state.game || games[0].id;
  const boardEl = h("ol", { class: "leaderboard", "data-testid": "leaderboard" });
  const profileEl = h("div");
  const showProfile = async (player) => {
    try {
      const profile = await app.conn.request("profile", player ? { player } : {});
      profileEl.replaceChildren(profileView(app, profile));
    } catch (err) {
      if (err.code !== "closed") app.message(`Record: ${err.reason || err.message}`, "error");
    }
  };
  const showBoard = async () => {
    let board;
    try {
      board = await app.conn.request("leaderboard", { game: state.game, limit: TOP });
    } catch (err) {
      if (err.code !== "closed") app.message(`Leaderboard: ${err.reason || err.message}`, "error");
      return;
    }
    boardEl.replaceChildren(
      ...(board.players.length
        ? board.players.map((p) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "quiet", on: { click: () => showProfile(p.player) } },
                p.name,
              ),
              h("span", { text: ` ${ratingText(p)} · ${p.games} games` }),
            ),
          )
        : [h("li", { class: "muted", text: "no established ratings yet" })]),
    );
  };
  root.replaceChildren(
    h(
      "section",
      { class: "panel standings", "data-testid": "standings" },
      h("h2", { text: "Standings" }),
      h(
        "div",
        { class: "field-row" },
        h("label", { for: "board-game", text: "leaderboard" }),
        h(
          "select",
          {
            id: "board-game",
            on: {
              change: (e) => {
                state.game = e.target.value;
                showBoard();
              },
            },
          },
          games.map((g) => h("option", { value: g.id, text: g.title, selected: g.id === state.game })),
        ),
      ),
      boardEl,
      h("button", { type: "button", on: { click: () => showProfile() } }, "My record"),
      profileEl,
    ),
  );
  showBoard();
  showProfile();
}
