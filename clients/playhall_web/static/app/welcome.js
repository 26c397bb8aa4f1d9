// The first screen of someone who arrives by a room's link without a name of their own yet: what
// to call them at the table. The name is remembered by the page (localStorage), so it is asked
// once; the lobby and the room can change it later.
import { h } from "./ui.js";

/** Show the question in `root`; resolves with the name typed (trimmed), or with the name the
 * server gave (`current`) when they go on without typing one. */
export function askName(root, current) {
  return new Promise((resolve) => {
    const input = h("input", {
      id: "arrival-name",
      type: "text",
      maxlength: 32,
      required: true,
      placeholder: current,
      autocomplete: "nickname",
    });
    const submit = (e) => {
      e.preventDefault();
      resolve(input.value.trim() || current);
    };
    root.replaceChildren(
      h(
        "section",
        { class: "panel welcome", "data-testid": "ask-name" },
        h("h2", { text: "Your name at the table" }),
        h("p", { text: "You were invited to a game. The other players see this name beside your seat." }),
        h(
          "form",
          { class: "inline", on: { submit } },
          h("label", { for: "arrival-name", text: "Your name" }),
          input,
          h("button", { type: "submit", class: "primary" }, "Go to the table"),
        ),
      ),
    );
    input.focus();
  });
}
