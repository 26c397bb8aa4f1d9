// The lobby: your name, your games (the server's `my_rooms`: the game, the other players, the
// status and whose turn it is, private rooms included), joining by code, "Play now" (quick
// play), creating a room with the game's own options and seat counts, the live room list
// (lobby.watch), filterable by game, and the standings (a leaderboard and a player's record).
import { h } from "./ui.js";
import { drawCreateForm } from "./create.js";
import { drawPlayNow } from "./quickplay.js";
import { drawStandings } from "./standings.js";
import { optionsText } from "./options.js";

/** How often the lobby asks for your games again while it is shown. */
const MINE_EVERY_MS = 10_000;

function gameTitle(app, id) {
  const g = app.games.find((x) => x.id === id);
  return g ? g.title : id;
}

function roomRow(app, r) {
  const seats = (r.players || []).map((p) => p || "·").join(", ");
  const opts = optionsText(
    r.options,
    app.games.find((g) => g.id === r.game),
  );
  const free = r.taken < r.seats && r.status === "waiting";
  return h(
    "li",
    { class: "room-row", data: { room: r.room, game: r.game } },
    h("span", { class: "room-game", text: r.title || gameTitle(app, r.game) }),
    h("span", { class: `room-status s-${r.status}`, text: `${r.status} · ${r.taken}/${r.seats}` }),
    h("span", { class: "room-players", text: seats }),
    opts ? h("span", { class: "room-opts small", text: opts }) : null,
    h(
      "span",
      { class: "room-actions" },
      free ? h("button", { type: "button", on: { click: () => app.openRoom(r.room) } }, "Join") : null,
      h("button", { type: "button", on: { click: () => app.openRoom(r.room, { watch: true }) } }, "Watch"),
    ),
  );
}

/** Whose turn it is in one of your rooms, said for you. */
function turnText(r) {
  if (r.status === "waiting") return `waiting for players · ${r.taken}/${r.seats}`;
  if (r.status === "finished") return "finished";
  if (r.you !== null && r.to_act.includes(r.you)) return "your turn";
  const names = r.to_act.map((seat) => r.players[seat] || `seat ${seat + 1}`);
  return names.length ? `${names.join(" and ")}'s turn` : "playing";
}

function myRoomRow(app, r) {
  const others = r.players
    .map((name, seat) => (seat === r.you ? null : name || "empty seat"))
    .filter((name) => name !== null);
  const mine = r.status === "playing" && r.you !== null && r.to_act.includes(r.you);
  return h(
    "li",
    { class: `room-row mine${mine ? " my-turn" : ""}`, data: { room: r.room, game: r.game } },
    h("span", { class: "room-game", text: r.title || gameTitle(app, r.game) }),
    h("span", { class: `room-status s-${r.status}`, text: turnText(r) }),
    h("span", { class: "room-players", text: others.length ? `with ${others.join(", ")}` : "solo" }),
    r.private ? h("span", { class: "tag", text: "private" }) : null,
    h(
      "span",
      { class: "room-actions" },
      h(
        "button",
        { type: "button", class: mine ? "primary" : null, on: { click: () => app.openRoom(r.room) } },
        r.status === "finished" ? "Open" : "Resume",
      ),
    ),
  );
}

export function showLobby(app, root) {
  const conn = app.conn;
  const formState = { private: false };
  let filter = "";
  const listEl = h("ul", { class: "room-list", "data-testid": "room-list", "aria-live": "polite" });
  const formEl = h("div");
  const resumeEl = h("div");
  const playNowEl = h("div");
  const playNowState = {};
  const standingsEl = h("div");
  const standingsState = {};

  const drawList = () => {
    const rooms = conn.lobbyList().filter((r) => !filter || r.game === filter);
    listEl.replaceChildren(
      ...(rooms.length
        ? rooms.map((r) => roomRow(app, r))
        : [h("li", { class: "muted", text: "no open rooms — create one" })]),
    );
  };
  const drawForm = () => drawCreateForm(formEl, app, formState);
  let mine = [];
  const drawResume = () => {
    resumeEl.replaceChildren(
      mine.length
        ? h(
            "section",
            { class: "panel resume", "data-testid": "resume" },
            h("h2", { text: "Your games" }),
            h(
              "ul",
              { class: "room-list", "data-testid": "my-rooms" },
              mine.map((r) => myRoomRow(app, r)),
            ),
          )
        : "",
    );
  };
  /** Your games as the server has them now: asked when the lobby opens, on every reconnect,
   * when the page comes back into view, and every few seconds while it is shown (they are not
   * pushed: whose turn it is changes in rooms this page does not view). */
  const loadMine = async () => {
    try {
      mine = (await conn.request("my_rooms")).rooms;
    } catch (err) {
      if (err.code !== "closed") app.message(`Your games: ${err.reason || err.message}`, "error");
      return;
    }
    drawResume();
  };
  const watch = async () => {
    try {
      await conn.request("lobby.watch", filter ? { game: filter } : {});
    } catch (err) {
      if (err.code !== "closed") app.message(`Room list: ${err.reason || err.message}`, "error");
    }
    drawList();
  };

  const nameInput = h("input", {
    id: "name",
    type: "text",
    maxlength: 32,
    value: app.storedName() || conn.name || "",
    autocomplete: "nickname",
  });
  const codeInput = h("input", {
    id: "join-code",
    type: "text",
    maxlength: 64,
    placeholder: "e.g. K7QXM-4PAZR-2DHNW",
    autocomplete: "off",
  });
  const filterSelect = h(
    "select",
    {
      id: "filter",
      on: {
        change: (e) => {
          filter = e.target.value;
          watch();
        },
      },
    },
    h("option", { value: "", text: "all games" }),
    app.games.map((g) => h("option", { value: g.id, text: g.title })),
  );

  root.append(
    h(
      "div",
      { class: "lobby", "data-testid": "lobby" },
      h(
        "section",
        { class: "panel who" },
        h(
          "form",
          {
            class: "inline",
            on: {
              submit: (e) => {
                e.preventDefault();
                const n = nameInput.value.trim();
                if (n) app.rename(n);
              },
            },
          },
          h("label", { for: "name", text: "Your name" }),
          nameInput,
          h("button", { type: "submit" }, "Save name"),
        ),
        h(
          "form",
          {
            class: "inline",
            on: {
              submit: (e) => {
                e.preventDefault();
                const c = codeInput.value.trim();
                if (c) app.openRoom(undefined, { code: c });
              },
            },
          },
          h("label", { for: "join-code", text: "Join code" }),
          codeInput,
          h("button", { type: "submit" }, "Join private room"),
        ),
      ),
      resumeEl,
      playNowEl,
      h(
        "div",
        { class: "lobby-cols" },
        formEl,
        h(
          "section",
          { class: "panel rooms" },
          h("h2", { text: "Open rooms" }),
          h("div", { class: "field-row" }, h("label", { for: "filter", text: "show" }), filterSelect),
          listEl,
        ),
      ),
      standingsEl,
    ),
  );
  drawForm();
  drawPlayNow(playNowEl, app, playNowState);
  drawStandings(standingsEl, app, standingsState);
  loadMine();
  const onLobby = () => drawList();
  conn.on("lobby", onLobby);
  const onVisible = () => {
    if (!document.hidden) loadMine();
  };
  document.addEventListener("visibilitychange", onVisible);
  const every = setInterval(() => {
    if (!document.hidden && conn.state === "open") loadMine();
  }, MINE_EVERY_MS);
  watch();
  return {
    kind: "lobby",
    refresh: () => {
      loadMine();
      watch();
    },
    stop: () => {
      conn.off("lobby", onLobby);
      document.removeEventListener("visibilitychange", onVisible);
      clearInterval(every);
    },
  };
}
