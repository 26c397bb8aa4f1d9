// The board of a game the page has no renderer for (a plugin that ships none, a new game): drawn
// from the view alone, knowing no rules. The moves are buttons labelled from their fields; the
// game's state is shown as labelled values, nested maps and lists as nested lists, and a list of
// n×n plain values (n from 3 to 19, a board) as a grid. Where every offered move names a cell of
// that grid by one whole-number field (`{type: "mark", cell: 4}`), the grid's cells are the
// buttons of those moves too, so a board game is played on its board.
import { Float } from "../../lib/playhall.js";
import { h, maybeButton, moveButton } from "../ui.js";

/** A plain value as words: nothing as "–", a float by its number, anything else as JSON. */
function words(value) {
  if (value === null || value === undefined) return "–";
  if (value instanceof Float) return String(value.value);
  if (typeof value === "object") return JSON.stringify(value, (_, v) => (v instanceof Float ? v.value : v));
  return String(value);
}

const isPlain = (value) => value === null || value instanceof Float || typeof value !== "object";

/** A move as words: its type, then each other field as `name value`. */
export function moveLabel(move) {
  const fields = Object.entries(move).filter(([key]) => key !== "type");
  return [move.type, ...fields.map(([key, value]) => `${key} ${words(value)}`)].join(" · ");
}

/** The side of the square board `list` is (3 to 19), or 0 when it is not one. */
function side(list) {
  const n = Math.round(Math.sqrt(list.length));
  return n >= 3 && n <= 19 && n * n === list.length && list.every(isPlain) ? n : 0;
}

/** The field by which every offered move names a cell of a board of `size` cells, or null. */
function cellField(moves, size) {
  if (moves.length === 0) return null;
  const names = Object.keys(moves[0]).filter((key) => key !== "type");
  const fits = (move, key) => Number.isInteger(move[key]) && move[key] >= 0 && move[key] < size;
  const found = names.filter((key) => moves.every((m) => Object.keys(m).length === 2 && fits(m, key)));
  return found.length === 1 ? found[0] : null;
}

function grid(list, ctx, moves) {
  const n = side(list);
  const field = cellField(moves, list.length);
  const rows = [];
  for (let r = 0; r < n; r += 1) {
    const cells = [];
    for (let c = 0; c < n; c += 1) {
      const i = r * n + c;
      const move = field && moves.find((m) => m[field] === i);
      const label = move ? `${moveLabel(move)} (now ${words(list[i])})` : undefined;
      const props = { class: "generic-cell", title: label, "aria-label": label };
      cells.push(h("td", {}, maybeButton(ctx, move, props, list[i] === null ? "" : words(list[i]))));
    }
    rows.push(h("tr", {}, cells));
  }
  return h("table", { class: "generic-grid" }, h("tbody", {}, rows));
}

function shown(data, ctx, moves) {
  if (isPlain(data)) return h("span", { text: words(data) });
  if (Array.isArray(data)) {
    if (side(data)) return grid(data, ctx, moves);
    if (data.every(isPlain)) return h("span", { text: data.length ? data.map(words).join(", ") : "none" });
    return h(
      "ol",
      { start: 0 },
      data.map((item) => h("li", {}, shown(item, ctx, moves))),
    );
  }
  const entries = Object.entries(data);
  if (entries.length === 0) return h("span", { text: "none" });
  return h(
    "dl",
    { class: "generic-map" },
    entries.map(([key, item]) => [h("dt", { text: key }), h("dd", {}, shown(item, ctx, moves))]),
  );
}

export const GENERIC = {
  render: (view, ctx) => {
    const moves = (view.moves || []).filter((m) => !m.template);
    return h(
      "div",
      { class: "generic", "data-testid": "generic" },
      h("p", {
        class: "muted small",
        text: "This game has no board of its own on this page: its moves as buttons, its view as text.",
      }),
      h(
        "div",
        { class: "actions" },
        moves.map((m) => moveButton(ctx, m, moveLabel(m))),
      ),
      shown(view.state, ctx, moves),
    );
  },
  describe: (ev) => moveLabel(ev),
};
