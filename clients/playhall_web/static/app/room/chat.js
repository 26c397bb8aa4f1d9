// The room's chat: the lines so far (the join reply's history, then every chat push) and a form
// to say something.
import { h } from "../ui.js";

/** `say(text)`: sends a line, resolving truthy once the server took it (the input is cleared). */
export function createChat({ say }) {
  const lines = h("ol", { class: "chat-lines", "data-testid": "chat-lines", "aria-live": "polite" });
  const input = h("input", {
    type: "text",
    maxlength: 500,
    "aria-label": "chat message",
    placeholder: "say something",
  });
  const submit = async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if (await say(text)) input.value = "";
  };
  const el = h(
    "section",
    { class: "panel chat" },
    h("h3", { text: "Chat" }),
    lines,
    h("form", { class: "inline", on: { submit } }, input, h("button", { type: "submit" }, "Send")),
  );
  return {
    el,
    add(line) {
      const who = line.seat === null || line.seat === undefined ? `${line.name} (watching)` : line.name;
      lines.append(h("li", {}, h("strong", { text: `${who}: ` }), line.text));
      lines.scrollTop = lines.scrollHeight;
    },
  };
}
