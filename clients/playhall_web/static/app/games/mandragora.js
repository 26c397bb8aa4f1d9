// Mandragora Mania: the ten areas with their stacks, sowing shown landing by landing.
import { findMove, h, maybeButton, seatName } from "../ui.js";

// Where each area sits on the board (grid row, first column of two), as in the rules' drawing:
// bases 9 (top left) and 0 (bottom right), 8 7 6 on top, 2 4 in the middle, 1 3 5 below.
const PLACE = {
  9: [1, 1],
  8: [1, 3],
  7: [1, 5],
  6: [1, 7],
  2: [2, 4],
  4: [2, 6],
  1: [3, 3],
  3: [3, 5],
  5: [3, 7],
  0: [3, 9],
};

function owner(view, area) {
  const st = view.state;
  const name = (seat) => ((view.seats || [])[seat] || {}).name || `seat ${seat + 1}`;
  if (st.bases.includes(area)) return `${name(st.bases.indexOf(area))}'s base`;
  const mine = st.selectable.map((areas) => areas.includes(area));
  if (mine[0] && mine[1]) return "shared";
  return `${name(mine[0] ? 0 : 1)}'s`;
}

function piece(code, st) {
  return h("span", { class: `piece p-${code}`, title: st.piece_names[code], text: code });
}

function areaBox(view, ctx, area, highlight) {
  const st = view.state;
  const stack = st.areas[area];
  const move = findMove(view, (m) => m.type === "sow" && m.area === area);
  const isBase = st.bases.includes(area);
  const [row, col] = PLACE[area];
  const label = `area ${area}, ${owner(view, area)}, ${stack.length} pieces${move ? ": sow" : ""}`;
  return maybeButton(
    ctx,
    move,
    {
      class: `area${isBase ? " base" : ""}${highlight === area ? " landing" : ""}`,
      style: `grid-row:${row};grid-column:${col} / span 2`,
      "aria-label": label,
      data: { area },
    },
    h("span", { class: "area-name", text: `${isBase ? "Base " : ""}${area}` }),
    h("span", { class: "area-owner", text: owner(view, area) }),
    h(
      "span",
      { class: "stack-pieces" },
      stack.map((code) => piece(code, st)),
    ),
    h("span", { class: "count", text: `${stack.length}` }),
  );
}

function render(view, ctx, frame = {}) {
  const st = view.state;
  const values = (seat) =>
    Object.entries(st.values[seat])
      .map(([code, pts]) => `${code} ${st.piece_names[code]} ${pts}`)
      .join(" · ");
  const status =
    st.turn === null
      ? "game over"
      : `${seatName(view, st.turn)} to sow${st.chain ? ` (extra turn ${st.chain})` : ""}`;
  return h(
    "div",
    { class: "mandragora" },
    h(
      "p",
      { class: "status-line" },
      `${status} · scores: ${seatName(view, 0)} ${st.scores[0]}, ${seatName(view, 1)} ${st.scores[1]} · pattern ${st.pattern}`,
    ),
    h(
      "div",
      { class: "mg-board", role: "group", "aria-label": "board" },
      Object.keys(PLACE).map((a) => areaBox(view, ctx, Number(a), frame.highlight)),
    ),
    h(
      "p",
      { class: "muted small" },
      `${seatName(view, 0)} sows from 1, 3, 5 (and 2, 4) towards base 0; ${seatName(view, 1)} from 6, 7, 8 (and 2, 4) towards base 9. ` +
        `Values for ${seatName(view, 0)}: ${values(0)}. For ${seatName(view, 1)}: ${values(1)}.`,
    ),
  );
}

/** Intermediate boards of one update: the stack picked up, then each piece as it lands. */
function frames(prev, view, events) {
  if (!prev || !prev.state || !prev.state.areas || !events.some((e) => e.type === "sow")) return [];
  const areas = prev.state.areas.map((stack) => [...stack]);
  const scores = [...prev.state.scores];
  const out = [];
  const snap = (highlight) =>
    out.push({
      view: {
        ...view,
        moves: [],
        state: { ...view.state, areas: areas.map((s) => [...s]), scores: [...scores] },
      },
      highlight,
    });
  for (const ev of events) {
    if (ev.type === "sow") {
      areas[ev.area] = [];
      snap(ev.area);
    } else if (ev.type === "land") {
      areas[ev.area].push(ev.piece);
      snap(ev.area);
    } else if (ev.type === "score") {
      scores[ev.seat] = ev.total;
    }
  }
  return out;
}

function describe(ev, view) {
  const who = (s) => seatName(view, s);
  switch (ev.type) {
    case "sow":
      return `${who(ev.seat)} sows ${ev.count} from area ${ev.area}`;
    case "land":
      return null;
    case "score":
      return `${who(ev.seat)} scores ${ev.points} (${ev.piece}), total ${ev.total}`;
    case "extra_turn":
      return `last piece in the base: ${who(ev.seat)} moves again`;
    case "game_end":
      return `${who(ev.stuck)} cannot move: the game ends`;
    default:
      return null;
  }
}

export default { render, describe, frames, frameMs: 140 };
