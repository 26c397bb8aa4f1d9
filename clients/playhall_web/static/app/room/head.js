// The room's header: the game's title, the room's id, status and options, the link to the game's
// rules, a private room's join code and shareable link (links.js), and the way back to the lobby.
import { h, optionsText } from "../ui.js";
import { rulesLink, shareBox } from "../links.js";

/** `app`: the page (games, message); `leave()`: what the lobby button does. */
export function createHead({ app, room, leave }) {
  const el = h("header", { class: "room-head" });

  function share(code) {
    return h(
      "div",
      { class: "share" },
      h("span", {}, "Private room · code ", h("strong", { "data-testid": "join-code", text: code })),
      shareBox(app.conn, room, code, app.message),
    );
  }

  return {
    el,
    draw(v) {
      const title = (app.games.find((g) => g.id === v.game) || {}).title || v.game;
      const opts = optionsText(v.options);
      el.replaceChildren(
        ...[
          h(
            "h2",
            {},
            title,
            h("span", {
              class: "muted small",
              text: ` room ${room} · ${v.status}${opts ? ` · ${opts}` : ""}`,
            }),
            " ",
            rulesLink(v.game),
          ),
          v.code ? share(v.code) : null,
          h(
            "button",
            { type: "button", class: "quiet", "data-testid": "to-lobby", on: { click: leave } },
            v.status === "playing" && v.you !== null ? "Lobby (keep my seat)" : "Leave room",
          ),
        ].filter(Boolean),
      );
    },
  };
}
