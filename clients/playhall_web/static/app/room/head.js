// The room's header: the game's title, the room's id, status and options, a private room's join
// code and shareable link, and the way back to the lobby.
import { h, optionsText } from "../ui.js";

/** `app`: the page (games, message); `leave()`: what the lobby button does. */
export function createHead({ app, room, leave }) {
  const el = h("header", { class: "room-head" });

  function share(code) {
    const link = `${location.origin}${location.pathname}#room=${encodeURIComponent(room)}&code=${encodeURIComponent(code)}`;
    const linkInput = h("input", {
      type: "text",
      readonly: true,
      value: link,
      "data-testid": "share-link",
      "aria-label": "link to this room",
    });
    const copy = async () => {
      linkInput.select();
      try {
        await navigator.clipboard.writeText(link);
        app.message("Link copied.");
      } catch {
        if (document.execCommand) document.execCommand("copy");
      }
    };
    return h(
      "div",
      { class: "share" },
      h("span", {}, "Private room · code ", h("strong", { "data-testid": "join-code", text: code })),
      linkInput,
      h("button", { type: "button", on: { click: copy } }, "Copy link"),
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
