// The page: one connection, the lobby, the room and the replay screens, and the address bar as
// the route (#room=<id>, plus &code=<join code> for a private room's shareable link;
// #replay=<id> for a finished room's replay).
import { defaultUrl, PlayhallConnection } from "../lib/playhall.js";
import { h } from "./ui.js";
import { showLobby } from "./lobby.js";
import { showReplay } from "./replay.js";
import { showRoom } from "./room.js";
import { askName } from "./welcome.js";
import { loadRenderer } from "./room/renderers.js";

const TOKEN_KEY = "playhall.token";
const NAME_KEY = "playhall.name";

const app = {
  conn: null,
  games: [],
  screen: null, // {kind: "lobby"|"room", room?, stop()}
  memos: new Map(), // room id -> a renderer's scratch state (deck composers...)
  message,
  openRoom,
  openLobby,
  rename,
  storedName: () => localStorage.getItem(NAME_KEY) || "",
};

const main = document.getElementById("main");
const statusEl = document.querySelector('[data-testid="conn-status"]');
const messagesEl = document.getElementById("messages");

/** A short message for the user (refusals, errors); kind "error" is announced as an alert. */
function message(text, kind = "info") {
  const line = h(
    "p",
    { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status", "data-testid": "message" },
    text,
    h(
      "button",
      { type: "button", class: "quiet", "aria-label": "dismiss", on: { click: () => line.remove() } },
      "×",
    ),
  );
  messagesEl.append(line);
  while (messagesEl.children.length > 4) messagesEl.firstChild.remove();
  setTimeout(() => line.remove(), 8000);
}

function setStatus({ state }) {
  const conn = app.conn;
  statusEl.dataset.state = state;
  const text =
    {
      connecting: "connecting…",
      open: `connected as ${conn.name}`,
      reconnecting: "reconnecting…",
      closed: "disconnected (reload the page to connect again)",
    }[state] || state;
  statusEl.textContent = text;
  document.body.classList.toggle("offline", state !== "open");
}

function switchTo(screen) {
  if (app.screen && app.screen.stop) app.screen.stop();
  if (app.conn && app.conn.state === "open" && app.screen && app.screen.kind === "lobby") {
    app.conn.request("lobby.unwatch").catch(() => {});
  }
  main.replaceChildren();
  app.screen = screen;
}

function openLobby() {
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  switchTo({ kind: "lobby" });
  app.screen = showLobby(app, main);
}

/** Join (or create's follow-up) a room and show it; `code` for private rooms. */
async function openRoom(room, { code, seat, watch } = {}) {
  const fields = { room };
  if (code) fields.code = code;
  if (seat !== undefined) fields.seat = seat;
  if (watch) fields.watch = true;
  let reply;
  try {
    reply = await app.conn.request("join", fields);
  } catch (err) {
    message(`Could not open room ${room || code}: ${err.reason || err.message}`, "error");
    if (!app.screen || app.screen.kind !== "lobby") openLobby();
    return;
  }
  const id = reply.room;
  const hash = `#room=${encodeURIComponent(id)}${code ? `&code=${encodeURIComponent(code)}` : ""}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  if (app.screen && app.screen.kind === "room" && app.screen.room === id) {
    app.screen.refresh();
    return;
  }
  switchTo({ kind: "room", room: id });
  app.screen = showRoom(app, main, id, reply.chat || []);
}

/** Go by `name` from now on (`rename`: every seat this player holds shows it at once), and
 * remember it for the next visit. Resolves with the name in use, or null if refused. */
async function rename(name) {
  let reply;
  try {
    reply = await app.conn.request("rename", { name });
  } catch (err) {
    message(`Could not change your name: ${err.reason || err.message}`, "error");
    return null;
  }
  localStorage.setItem(NAME_KEY, reply.name);
  app.conn.name = reply.name; // said again with the hello of every reconnect
  setStatus({ state: app.conn.state });
  if (app.screen && app.screen.refresh) app.screen.refresh();
  return reply.name;
}

async function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const room = params.get("room");
  const code = params.get("code");
  const replay = params.get("replay");
  if (replay) {
    switchTo({ kind: "replay", room: replay });
    app.screen = showReplay(app, main, replay);
    return;
  }
  if (!room && !code) {
    openLobby();
    return;
  }
  // Someone who came by a link and has never said their name is asked first, so they do not
  // sit down as "Player-…".
  if (!app.storedName()) {
    switchTo({ kind: "welcome" });
    const name = await askName(main, app.conn.name);
    if (name === app.conn.name) localStorage.setItem(NAME_KEY, name);
    else await rename(name);
  }
  openRoom(room || undefined, { code: code || undefined });
}

async function connect() {
  const conn = new PlayhallConnection(defaultUrl(), {
    token: localStorage.getItem(TOKEN_KEY),
    name: localStorage.getItem(NAME_KEY) || undefined,
  });
  app.conn = conn;
  window.playhall = conn;
  conn.on("status", (s) => conn === app.conn && setStatus(s));
  conn.on("hello", () => {
    if (conn.token) localStorage.setItem(TOKEN_KEY, conn.token);
    if (app.screen && app.screen.refresh) app.screen.refresh();
  });
  conn.on("error", ({ code, reason }) => {
    if (code === "bad_token") localStorage.setItem(TOKEN_KEY, conn.token);
    else if (code !== "diff_failed") message(`${code}: ${reason}`, "error");
  });
  setStatus({ state: conn.state || "connecting" });
  try {
    await conn.connect();
  } catch (err) {
    message(`Cannot reach the server: ${err.reason || err.message}`, "error");
    return;
  }
  if (conn.token) localStorage.setItem(TOKEN_KEY, conn.token);
  app.games = (await conn.request("games")).games;
  // Each game's board, fetched now so that a room opens with it.
  for (const game of app.games) loadRenderer(game.id);
}

window.addEventListener("hashchange", route);
window.playhallPage = app;
await connect();
route();
