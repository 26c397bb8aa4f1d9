// The room screen: seats with presence (and room for a clock each), the table's controls
// (seats, bots, ready, start, leave, rematch), the game's board drawn by its renderer, the game
// log fed by events, the outcome, and the chat with its history.
import { formatScore, h, moveButton, optionsText, pause, reducedMotion, seatName } from "./ui.js";
import mantis from "./games/mantis.js";
import mandragora from "./games/mandragora.js";
import mandala from "./games/mandala.js";
import cardBattle from "./games/card_battle.js";
import mathCard from "./games/math_card.js";

const RENDERERS = { mantis, mandragora, mandala, card_battle: cardBattle, math_card: mathCard };

/** For a game the page has no renderer for: its state as text and its moves as buttons. */
const OUTLINE = {
  render: (view, ctx) =>
    h(
      "div",
      {},
      h(
        "div",
        { class: "actions" },
        (view.moves || []).filter((m) => !m.template).map((m) => moveButton(ctx, m, JSON.stringify(m))),
      ),
      h("pre", { class: "raw" }, JSON.stringify(view.state, null, 1)),
    ),
  describe: (ev) => JSON.stringify(ev),
};

/** What a refused request means for the person at the page. */
const REFUSALS = {
  stale: "The game moved on before your move arrived: look again and choose.",
  not_your_turn: "It is not your turn.",
  rate_limited: "Too many actions at once: wait a moment and try again.",
  illegal_move: "That move is not allowed now.",
  game_over: "The game is over.",
  disconnected: "The connection dropped before the server answered: try again.",
  wrong_status: "Not possible at this point of the game.",
};

export function refusalText(err) {
  const reason = err.reason || err.message || String(err);
  const known = REFUSALS[err.code];
  return known ? `${known} (${reason})` : `Refused: ${reason}${err.code ? ` [${err.code}]` : ""}`;
}

/** Copies plain data, keeping other objects (the codec's Float) as they are. */
function clone(value) {
  if (Array.isArray(value)) return value.map(clone);
  if (value && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]));
  }
  return value;
}

function describeRoomEvent(ev, view) {
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

/** What an outcome's reason means, for the reasons every game may end with. */
const REASONS = {
  resignation: "resignation: a player left the game",
  timeout: "timeout: a player ran out of time",
  abandoned: "abandoned: nobody played or watched it for a long time",
};

/** Seats that left the game: the outcome's `left`, or the game's own (Mantis plays on). */
function seatsLeft(v) {
  const fromState = v.state && Array.isArray(v.state.left) ? v.state.left : [];
  return new Set([...((v.outcome && v.outcome.left) || []), ...fromState]);
}

/** A seat's time left in seconds from the view's `clock`: the server measured `remaining_ms`
 * at its time `at`; a running clock has gone on since (`now` is the server's time now). */
export function secondsLeft(clock, seat, now) {
  if (!clock || !clock.remaining_ms) return null;
  const ms = Number(clock.remaining_ms[seat]);
  const running = (clock.running || []).includes(seat);
  return Math.max(0, ms / 1000 - (running && clock.at !== null ? now - Number(clock.at) : 0));
}

export function mmss(seconds) {
  const s = Math.ceil(seconds);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** Fills a seat's clock slot: mm:ss, with a text cue for a running clock and for low time. */
function showClock(el, clock, now) {
  const seat = Number(el.dataset.clock);
  const left = secondsLeft(clock, seat, now);
  if (left === null) return el.replaceChildren();
  const running = (clock.running || []).includes(seat);
  const low = running && left <= Math.min(10, Number(clock.clock_ms) / 4000);
  el.className = `clock${running ? " running" : ""}${low ? " low" : ""}`;
  el.dataset.seconds = left.toFixed(1);
  el.title = running ? "this clock is running" : "this clock is stopped";
  el.textContent = `${low ? "⚠ low " : running ? "⏳ " : ""}${mmss(left)}`;
}

/** Name for a score's index: a seat, or a non-seat player of the game (Master Yoga). */
function scoreName(view, i) {
  if (i < view.seats.length) return seatName(view, i);
  const players = view.state && view.state.players;
  return (players && players[i] && players[i].name) || `player ${i + 1}`;
}

export function showRoom(app, root, room, history) {
  const conn = app.conn;
  const renderer = () => (view() ? RENDERERS[view().game] || OUTLINE : null);
  if (!app.logs.has(room)) app.logs.set(room, []);
  if (!app.memos.has(room)) app.memos.set(room, {});
  const log = app.logs.get(room);
  const memo = app.memos.get(room);
  let busy = false;
  let animating = 0; // bumped by every update: a newer one stops an older animation
  let lastView = null;

  const mirror = () => conn.rooms.get(room);
  const view = () => (mirror() ? mirror().view : null);

  const headEl = h("header", { class: "room-head" });
  const announceEl = h("p", { class: "sr-only", "aria-live": "polite" });
  let wasMyTurn = false;
  const seatsEl = h("ul", { class: "seats", "data-testid": "seats", "aria-label": "seats" });
  const controlsEl = h("div", { class: "controls", "data-testid": "controls" });
  const outcomeEl = h("div", { "data-testid": "outcome-slot" });
  const boardEl = h("div", { class: "board", "data-testid": "board", "aria-live": "off" });
  const logEl = h("ol", { class: "log", "data-testid": "log", "aria-label": "game log" });
  const chatEl = h("ol", { class: "chat-lines", "data-testid": "chat-lines", "aria-live": "polite" });
  const chatInput = h("input", {
    type: "text",
    maxlength: 500,
    "aria-label": "chat message",
    placeholder: "say something",
  });

  const ctxFor = (frameView) => ({
    canMove: !frameView && !busy && conn.state === "open" && (view() || {}).status === "playing",
    play,
    memo,
    redraw: draw,
    secondsTo: (deadline) => Number(deadline) - conn.serverNow(),
  });

  async function play(move) {
    if (busy) return;
    busy = true;
    drawBoard();
    try {
      await conn.move(room, move);
    } catch (err) {
      app.message(refusalText(err), "error");
    } finally {
      busy = false;
      draw();
    }
  }

  async function act(kind, fields = {}) {
    try {
      return await conn.request(kind, { room, ...fields });
    } catch (err) {
      app.message(refusalText(err), "error");
      return null;
    }
  }

  function drawHead(v) {
    const code = v.code;
    const link = code
      ? `${location.origin}${location.pathname}#room=${encodeURIComponent(room)}&code=${encodeURIComponent(code)}`
      : null;
    const linkInput = link
      ? h("input", {
          type: "text",
          readonly: true,
          value: link,
          "data-testid": "share-link",
          "aria-label": "link to this room",
        })
      : null;
    const copy = async () => {
      linkInput.select();
      try {
        await navigator.clipboard.writeText(link);
        app.message("Link copied.");
      } catch {
        document.execCommand && document.execCommand("copy");
      }
    };
    const title = (app.games.find((g) => g.id === v.game) || {}).title || v.game;
    const opts = optionsText(v.options);
    headEl.replaceChildren(
      ...[
        h(
          "h2",
          {},
          title,
          h("span", { class: "muted small", text: ` room ${room} · ${v.status}${opts ? ` · ${opts}` : ""}` }),
        ),
        code
          ? h(
              "div",
              { class: "share" },
              h("span", {}, "Private room · code ", h("strong", { "data-testid": "join-code", text: code })),
              linkInput,
              h("button", { type: "button", on: { click: copy } }, "Copy link"),
            )
          : null,
        h(
          "button",
          { type: "button", class: "quiet", "data-testid": "to-lobby", on: { click: leave } },
          v.status === "playing" && v.you !== null ? "Lobby (keep my seat)" : "Leave room",
        ),
      ].filter(Boolean),
    );
  }

  async function leave() {
    await act("leave");
    app.openLobby();
  }

  function drawSeats(v) {
    const presence = (mirror() && mirror().presence) || [];
    const left = seatsLeft(v);
    seatsEl.replaceChildren(
      ...v.seats.map((s, i) => {
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
          left.has(i)
            ? h("span", { class: "tag gone", "data-testid": "left-game", text: "left the game" })
            : null,
          !empty && !s.bot
            ? h("span", {
                class: `presence ${presence[i] ? "on" : "off"}`,
                text: presence[i] ? "● here" : "○ away",
              })
            : null,
          h("span", { class: "clock", "data-clock": i }),
        );
      }),
    );
    for (const el of seatsEl.querySelectorAll(".clock")) showClock(el, v.clock, conn.serverNow());
  }

  function drawControls(v) {
    const seated = v.you !== null && v.you !== undefined;
    const empties = v.seats.map((s, i) => (!s.bot && !s.player ? i : -1)).filter((i) => i >= 0);
    const items = [];
    if (v.status === "waiting") {
      if (!seated) {
        for (const i of empties)
          items.push(
            h(
              "button",
              { type: "button", on: { click: () => app.openRoom(room, { seat: i }) } },
              `Sit in seat ${i + 1}`,
            ),
          );
      } else {
        for (const i of empties)
          items.push(
            h(
              "button",
              { type: "button", on: { click: () => act("bot", { seat: i }) } },
              `Bot in seat ${i + 1}`,
            ),
          );
        const ready = v.seats[v.you].ready;
        items.push(
          h(
            "button",
            {
              type: "button",
              class: ready ? "" : "primary",
              on: { click: () => act("ready", { ready: !ready }) },
            },
            ready ? "Not ready" : "Ready",
          ),
        );
        if (v.creator === conn.player && !empties.length)
          items.push(h("button", { type: "button", on: { click: () => act("start") } }, "Start now"));
      }
    }
    if (v.status === "finished" && seated) {
      items.push(
        v.rematch
          ? h(
              "button",
              { type: "button", class: "primary", on: { click: () => app.openRoom(v.rematch) } },
              "Go to the rematch",
            )
          : h(
              "button",
              {
                type: "button",
                class: "primary",
                on: {
                  click: async () => {
                    const r = await act("rematch");
                    if (r) app.openRoom(r.room);
                  },
                },
              },
              "Rematch",
            ),
      );
    } else if (v.status === "finished" && v.rematch) {
      items.push(
        h(
          "button",
          { type: "button", on: { click: () => app.openRoom(v.rematch, { watch: true }) } },
          "Watch the rematch",
        ),
      );
    }
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
    controlsEl.replaceChildren(...items.filter(Boolean));
  }

  /** Resign, with a confirm step: leaves the game being played (`resign`), keeping the seat. */
  function resignControl() {
    const ask = (confirming) => () => {
      memo.confirmResign = confirming;
      drawControls(view());
    };
    if (!memo.confirmResign)
      return h("button", { type: "button", class: "quiet", on: { click: ask(true) } }, "Resign…");
    const resign = async () => {
      memo.confirmResign = false;
      await act("resign");
    };
    return h(
      "span",
      { class: "confirm" },
      h("button", { type: "button", class: "danger", on: { click: resign } }, "Yes, resign"),
      " ",
      h("button", { type: "button", on: { click: ask(false) } }, "Keep playing"),
    );
  }

  function drawOutcome(v) {
    const o = v.outcome;
    if (!o) return outcomeEl.replaceChildren();
    const winners = new Set(o.winners);
    const verdict = o.winners.length
      ? `${o.winners.map((i) => scoreName(v, i)).join(" and ")} ${o.winners.length > 1 ? "win" : "wins"}`
      : v.seats.length === 1
        ? "Master Yoga wins"
        : "a draw";
    outcomeEl.replaceChildren(
      h(
        "section",
        { class: "panel outcome", "data-testid": "outcome", role: "status" },
        h("h3", { text: `Game over: ${verdict}` }),
        h("p", { class: "small", text: `(${REASONS[o.reason] || String(o.reason).replaceAll("_", " ")})` }),
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
      ),
    );
  }

  function drawBoard(frame) {
    const v = frame ? frame.view : view();
    const r = renderer();
    if (!v || !r) return boardEl.replaceChildren(h("p", { class: "muted", text: "loading…" }));
    if (!v.state) {
      boardEl.replaceChildren(
        h("p", {
          class: "muted",
          text: v.status === "waiting" ? "Waiting for every seat to be filled and ready." : "",
        }),
      );
      return;
    }
    let node;
    try {
      node = r.render(v, ctxFor(frame), frame || {});
    } catch (err) {
      console.error("renderer failed", err);
      node = h("pre", { class: "raw" }, JSON.stringify(v.state, null, 1));
    }
    boardEl.replaceChildren(node);
    boardEl.dataset.frame = frame ? "animating" : "final";
    restoreFocus();
  }

  // Keyboard play: the board is redrawn after every change, so the control that had the focus is
  // remembered by its move and focused again once it is back and enabled; if that move is gone,
  // the first move offered takes the focus. Focusing anything outside the board forgets it.
  let focusKey = null;
  const keyOf = (el) => el.dataset.move || el.id || null;
  const onFocusIn = (e) => {
    focusKey = boardEl.contains(e.target) ? keyOf(e.target) : null;
  };
  function restoreFocus() {
    if (!focusKey || boardEl.contains(document.activeElement)) return;
    const controls = [...boardEl.querySelectorAll("[data-move], [id]")].filter((el) => !el.disabled);
    const again = controls.find((el) => keyOf(el) === focusKey) || controls.find((el) => el.dataset.move);
    if (again) again.focus();
  }

  function draw() {
    const v = view();
    document.body.classList.toggle("offline", conn.state !== "open");
    if (!v) return drawBoard();
    root.dataset.game = v.game;
    drawHead(v);
    drawSeats(v);
    drawControls(v);
    drawOutcome(v);
    drawBoard();
    lastView = { ...v, state: clone(v.state) };
  }

  function addLog(lines) {
    for (const text of lines) {
      log.push(text);
      logEl.append(h("li", { text }));
    }
    while (log.length > 300) log.shift();
    while (logEl.children.length > 300) logEl.firstChild.remove();
    logEl.scrollTop = logEl.scrollHeight;
  }

  function addChat(line) {
    const who = line.seat === null || line.seat === undefined ? `${line.name} (watching)` : line.name;
    chatEl.append(h("li", {}, h("strong", { text: `${who}: ` }), line.text));
    chatEl.scrollTop = chatEl.scrollHeight;
  }

  async function animate(prev, v, events) {
    const r = renderer();
    const token = ++animating;
    const frames = r && r.frames && !reducedMotion() ? r.frames(prev, v, events) : [];
    for (const frame of frames) {
      if (token !== animating) return;
      drawBoard(frame);
      await pause(r.frameMs || 120);
    }
    if (token === animating) draw();
  }

  const onView = ({ room: id, events, kind }) => {
    if (id !== room) return;
    const v = view();
    if (!v) return draw();
    const r = renderer();
    const lines = (events || [])
      .map((ev) => describeRoomEvent(ev, v) ?? (r ? r.describe(ev, v) : null))
      .filter(Boolean);
    addLog(lines);
    const prev = lastView;
    if (kind === "update" && events && events.length && r && r.frames && prev && prev.state) {
      lastView = { ...v, state: clone(v.state) };
      drawHead(v);
      drawSeats(v);
      drawControls(v);
      drawOutcome(v);
      animate(prev, v, events);
    } else {
      animating++;
      draw();
    }
  };
  const onPresence = ({ room: id }) => id === room && view() && drawSeats(view());
  const onChat = (line) => line.room === room && addChat(line);
  const onStatus = () => draw();
  const onLeft = ({ room: id }) => id === room && app.screen && app.screen.room === room && draw();
  const listeners = { view: onView, presence: onPresence, chat: onChat, status: onStatus, left: onLeft };
  for (const [name, fn] of Object.entries(listeners)) conn.on(name, fn);
  document.addEventListener("focusin", onFocusIn);

  const tick = setInterval(() => {
    for (const el of boardEl.querySelectorAll(".secs[data-deadline]")) {
      const left = Math.max(0, Number(el.dataset.deadline) - conn.serverNow());
      el.textContent = `${left.toFixed(1)} s`;
    }
    const v = view();
    if (v) for (const el of seatsEl.querySelectorAll(".clock")) showClock(el, v.clock, conn.serverNow());
  }, 200);

  root.append(
    h(
      "div",
      { class: "room", "data-testid": "room", data: { room } },
      headEl,
      announceEl,
      h(
        "div",
        { class: "room-grid" },
        h(
          "div",
          { class: "room-main" },
          h("div", { class: "table-bar" }, seatsEl, controlsEl),
          outcomeEl,
          boardEl,
        ),
        h(
          "aside",
          { class: "room-side" },
          h("section", { class: "panel" }, h("h3", { text: "Game log" }), logEl),
          h(
            "section",
            { class: "panel chat" },
            h("h3", { text: "Chat" }),
            chatEl,
            h(
              "form",
              {
                class: "inline",
                on: {
                  submit: async (e) => {
                    e.preventDefault();
                    const text = chatInput.value.trim();
                    if (!text) return;
                    if (await act("chat", { text })) chatInput.value = "";
                  },
                },
              },
              chatInput,
              h("button", { type: "submit" }, "Send"),
            ),
          ),
        ),
      ),
    ),
  );
  for (const text of log) logEl.append(h("li", { text }));
  for (const line of history) addChat(line);
  draw();

  return {
    kind: "room",
    room,
    refresh: draw,
    play,
    /** For tests and debugging: the move keys the board offers right now. */
    offered: () => [...boardEl.querySelectorAll("[data-move]")].map((el) => el.dataset.move),
    stop: () => {
      clearInterval(tick);
      animating++;
      for (const [name, fn] of Object.entries(listeners)) conn.off(name, fn);
      document.removeEventListener("focusin", onFocusIn);
    },
  };
}
