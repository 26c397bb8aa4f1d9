// The room's header: the game's title, the room's id, status and options, the link to the game's
// rules, a private room's join code and shareable link (links.js), changing your name, and the
// way back to the lobby (which says first that leaving a room before its game starts gives the
// seat away).
import { h } from "../ui.js";
import { optionsText } from "../options.js";
import { rulesLink, shareBox } from "../links.js";

/** `app`: the page (games, message, rename, conn); `leave()`: what the lobby button does. */
export function createHead({ app, room, leave }) {
  const el = h("header", { class: "room-head" });
  let shown = null;
  let confirmLeave = false;
  let renaming = null; // the name form while it is open: kept across redraws (typed text stays)
  const redraw = () => shown && draw(shown);

  /** Your name, and a form to change it (`rename`: every seat you hold shows the new one). */
  function nameControl() {
    if (renaming) return renaming;
    const open = () => {
      renaming = renameForm();
      redraw();
      renaming.querySelector("input").focus();
    };
    return h(
      "span",
      { class: "your-name" },
      "You are ",
      h("strong", { "data-testid": "my-name", text: app.conn.name || "" }),
      " ",
      h(
        "button",
        { type: "button", class: "quiet", "data-testid": "rename", on: { click: open } },
        "Change name",
      ),
    );
  }

  function renameForm() {
    const input = h("input", {
      id: "room-name",
      type: "text",
      maxlength: 32,
      value: app.conn.name || "",
      autocomplete: "nickname",
    });
    const close = () => {
      renaming = null;
      redraw();
    };
    const submit = async (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name || (await app.rename(name)) !== null) close();
    };
    return h(
      "form",
      { class: "inline rename", on: { submit } },
      h("label", { for: "room-name", text: "Your name" }),
      input,
      h("button", { type: "submit", class: "primary" }, "Save name"),
      h("button", { type: "button", class: "quiet", on: { click: close } }, "Cancel"),
    );
  }

  /** The way out. Before the game starts, leaving gives your seat up: that is said, and
   * asked, first. Once it has started you keep your seat. */
  function leaveControl(v) {
    const seated = v.you !== null && v.you !== undefined;
    const label = v.status === "playing" && seated ? "Lobby (keep my seat)" : "Leave room";
    const ask = (on) => () => {
      confirmLeave = on;
      redraw();
    };
    if (!(seated && v.status === "waiting")) {
      return h(
        "button",
        { type: "button", class: "quiet", "data-testid": "to-lobby", on: { click: leave } },
        label,
      );
    }
    if (!confirmLeave) {
      return h(
        "button",
        { type: "button", class: "quiet", "data-testid": "to-lobby", on: { click: ask(true) } },
        "Leave room…",
      );
    }
    return h(
      "div",
      { class: "confirm leave-confirm", role: "alert", "data-testid": "leave-confirm" },
      h("p", {
        text:
          `The game has not started: leaving gives up your seat (seat ${v.you + 1}) to whoever ` +
          "joins next, and clears everyone's ready. To play here again you would join again.",
      }),
      h("button", { type: "button", class: "danger", on: { click: leave } }, "Leave and give up my seat"),
      " ",
      h("button", { type: "button", on: { click: ask(false) } }, "Stay"),
    );
  }

  function share(code) {
    return h(
      "div",
      { class: "share" },
      h("span", {}, "Private room · code ", h("strong", { "data-testid": "join-code", text: code })),
      shareBox(app.conn, room, code, app.message),
    );
  }

  function draw(v) {
    if (shown && shown.status !== v.status) confirmLeave = false;
    shown = v;
    const game = app.games.find((g) => g.id === v.game);
    const title = (game || {}).title || v.game;
    const opts = optionsText(v.options, game);
    // Said only where it can hold: a game with a bot in a seat is never rated.
    const rated = v.rated && !v.seats.some((s) => s.bot) ? " · rated" : "";
    el.replaceChildren(
      ...[
        h(
          "h2",
          {},
          title,
          h("span", {
            class: "muted small",
            text: ` room ${room} · ${v.status}${opts ? ` · ${opts}` : ""}${rated}`,
          }),
          " ",
          rulesLink(v.game),
        ),
        v.code ? share(v.code) : null,
        h("div", { class: "head-actions" }, nameControl(), leaveControl(v)),
      ].filter(Boolean),
    );
  }

  return { el, draw, redraw };
}
