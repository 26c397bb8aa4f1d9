// The lobby: your name, your games (the server's `my_rooms`: the game, the other players, the
// status and whose turn it is, private rooms included), joining by code, creating a room with
// the game's own options and seat counts, and the live room list (lobby.watch), filterable by
// game.
import { h, optionsText } from "./ui.js";
import { rulesLink } from "./links.js";

/** How often the lobby asks for your games again while it is shown. */
const MINE_EVERY_MS = 10_000;

function gameTitle(app, id) {
  const g = app.games.find((x) => x.id === id);
  return g ? g.title : id;
}

/** Seat range for a game given the chosen options. seats_by_option names the ranges of some
 * choices (Mandala: solo takes [1, 1]); another choice takes what those leave at the ends of the
 * game's range (Mandala standard: 2). */
function seatRange(game, options) {
  let [lo, hi] = [game.min_seats, game.max_seats];
  for (const [name, byChoice] of Object.entries(game.seats_by_option || {})) {
    const mine = byChoice[String(options[name])];
    if (mine) return mine;
    for (const [a, b] of Object.values(byChoice)) {
      if (a === lo && b < hi) lo = b + 1;
      else if (b === hi && a > lo) hi = a - 1;
    }
  }
  return [lo, hi];
}

function optionInput(opt, value, set) {
  const id = `opt-${opt.name}`;
  let input;
  if (opt.kind === "bool") {
    input = h("input", {
      id,
      type: "checkbox",
      checked: value,
      on: { change: (e) => set(e.target.checked) },
    });
  } else if (opt.choices) {
    input = h(
      "select",
      { id, on: { change: (e) => set(e.target.value) } },
      opt.choices.map((c) =>
        h("option", { value: String(c), selected: String(c) === String(value), text: String(c) }),
      ),
    );
  } else if (opt.kind === "int") {
    input = h("input", {
      id,
      type: "number",
      min: opt.min,
      max: opt.max,
      value,
      on: { change: (e) => set(Number(e.target.value)) },
    });
  } else {
    input = h("input", { id, type: "text", value, on: { change: (e) => set(e.target.value) } });
  }
  return h(
    "div",
    { class: "field-row" },
    h("label", { for: id, text: opt.name }),
    input,
    h("span", { class: "help", text: opt.help }),
  );
}

function createForm(app, formState, redraw) {
  const games = app.games;
  if (!games.length) return h("p", { class: "muted", text: "loading games…" });
  const game = games.find((g) => g.id === formState.game) || games[0];
  formState.game = game.id;
  if (!formState.options || formState.optionsFor !== game.id) {
    formState.options = Object.fromEntries(game.options.map((o) => [o.name, o.default]));
    formState.optionsFor = game.id;
  }
  const range = seatRange(game, formState.options);
  formState.seats = Math.min(range[1], Math.max(range[0], formState.seats || range[0]));
  const submit = async (e) => {
    e.preventDefault();
    const fields = { game: game.id, seats: formState.seats, options: formState.options };
    if (formState.private) fields.private = true;
    try {
      const reply = await app.conn.request("create", fields);
      await app.openRoom(reply.room, { code: reply.code || undefined });
    } catch (err) {
      app.message(`Could not create the room: ${err.reason || err.message}`, "error");
    }
  };
  return h(
    "form",
    { class: "panel create", "data-testid": "create-form", on: { submit } },
    h("h2", { text: "Create a room" }),
    h(
      "div",
      { class: "field-row" },
      h("label", { for: "create-game", text: "game" }),
      h(
        "select",
        {
          id: "create-game",
          on: {
            change: (e) => {
              formState.game = e.target.value;
              redraw();
            },
          },
        },
        games.map((g) =>
          h("option", {
            value: g.id,
            selected: g.id === game.id,
            text: `${g.title} (${g.min_seats}–${g.max_seats})`,
          }),
        ),
      ),
      rulesLink(game.id, `Rules of ${game.title}`),
    ),
    game.options.map((opt) =>
      optionInput(opt, formState.options[opt.name], (v) => {
        formState.options[opt.name] = v;
        redraw();
      }),
    ),
    h(
      "div",
      { class: "field-row" },
      h("label", { for: "create-seats", text: "seats" }),
      range[0] === range[1]
        ? h("output", { id: "create-seats", text: String(range[0]) })
        : h(
            "select",
            {
              id: "create-seats",
              on: {
                change: (e) => {
                  formState.seats = Number(e.target.value);
                },
              },
            },
            Array.from({ length: range[1] - range[0] + 1 }, (_, i) => range[0] + i).map((n) =>
              h("option", { value: String(n), selected: n === formState.seats, text: String(n) }),
            ),
          ),
    ),
    h(
      "div",
      { class: "field-row" },
      h("label", { for: "create-private", text: "private" }),
      h("input", {
        id: "create-private",
        type: "checkbox",
        checked: formState.private,
        on: {
          change: (e) => {
            formState.private = e.target.checked;
          },
        },
      }),
      h("span", { class: "help", text: "not listed; friends join with its code or link" }),
    ),
    h("button", { type: "submit", class: "primary", "data-testid": "create" }, "Create and sit down"),
  );
}

function roomRow(app, r) {
  const seats = (r.players || []).map((p) => p || "·").join(", ");
  const opts = optionsText(r.options);
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

  const drawList = () => {
    const rooms = conn.lobbyList().filter((r) => !filter || r.game === filter);
    listEl.replaceChildren(
      ...(rooms.length
        ? rooms.map((r) => roomRow(app, r))
        : [h("li", { class: "muted", text: "no open rooms — create one" })]),
    );
  };
  const drawForm = () => formEl.replaceChildren(createForm(app, formState, drawForm));
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
    placeholder: "e.g. 3FA9C2",
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
    ),
  );
  drawForm();
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
