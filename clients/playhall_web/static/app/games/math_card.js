// Math Magic Card duel: deck choice, lanes with their expressions and values, assertion areas,
// legends, the hand (each card with the moves the view offers for it) and pending choices.
import { deckComposer, h, moveButton, movesWhere, seatName } from "../ui.js";

const AREA_TITLES = { left: "left public assertions", right: "right public assertions" };

/** What an open choice asks of the seat it waits for, by its `kind`. */
const CHOICE_ASKS = {
  hand_limit: "Your hand is over the limit of 7 cards: choose a card to discard.",
  search: "Choose the card to take from your deck.",
  opponent_discard: "Your opponent makes you discard: choose a card from your hand.",
  optional_discard: "You may discard a card: choose one, or decline.",
  swap: "Choose the two values to swap.",
  move_assertion: "Choose a public assertion to move and whose private area it goes to.",
  rearrange: "Choose how the operators move round, or leave them.",
};

/** The moves that answer an open choice (shown with its question, not in the hand). */
const ANSWERS = new Set(["choose", "decline", "swap", "move_assertion", "rearrange"]);

/** An assertion area by name as a person reads it: `left`, `right`, `private0`, `private1`, or a
 * move's `private` (the area of `seat`, the seat moving). */
function areaName(view, name, seat = view.you) {
  if (AREA_TITLES[name]) return AREA_TITLES[name];
  const owner = name === "private" ? seat : Number(String(name).slice("private".length));
  return `${seatName(view, owner)}'s private assertions`;
}

function card(view, id) {
  return (view.state.pool || {})[id] || { name: id, formula: id, kind: "?", colour: "", text: "" };
}

function frac(pair) {
  if (!pair) return "—";
  const [n, d] = pair;
  return d === 1 ? `${n}` : `${n}/${d}`;
}

/** "public lane" / "lane 0 · alice": lanes 0-1 are seat 0's, 2 public, 3-4 seat 1's. */
function laneName(view, index) {
  if (index === 2) return "public lane";
  return `lane ${index} · ${seatName(view, index < 2 ? 0 : 1)}`;
}

function tile(view, id, extra = {}) {
  const c = card(view, id);
  const kindClass = `k-${String(c.kind).replace(/[^a-z_]/g, "")}`;
  return h(
    "span",
    {
      class: `mcard ${kindClass} ${extra.cls || ""}`.trim(),
      title: `${c.name} (${c.kind}): ${c.text || ""}`,
      data: { card: id },
    },
    h("span", { class: "formula", text: extra.hidden ? "?" : c.formula }),
    h("span", { class: "cname", text: extra.hidden ? "face down" : c.name }),
    c.vp ? h("span", { class: "vp", text: `VP ${c.vp}/DP ${c.dp}` }) : null,
  );
}

function slot(view, entry, i) {
  const kind = i % 2 === 0 ? "value" : "operator";
  if (!entry)
    return h(
      "li",
      { class: `slot empty ${kind}`, title: `empty ${kind} slot` },
      kind === "value" ? "□" : "○",
    );
  if (entry.part === "value")
    return h("li", { class: "slot fn-value", title: "value half of a function card" }, "f(·)");
  return h("li", { class: `slot owner-${entry.owner}` }, tile(view, entry.card));
}

function assertionList(view, name) {
  const entries = view.state.areas[name] || [];
  return h(
    "div",
    { class: `areas area-${name}` },
    h("span", {
      class: "label",
      text: areaName(view, name),
    }),
    entries.length
      ? entries.map((e) =>
          h(
            "span",
            { class: `owner-${e.owner}` },
            tile(view, e.card),
            "under" in e
              ? h(
                  "span",
                  { class: "under" },
                  " over ",
                  e.under ? tile(view, e.under) : tile(view, "", { hidden: true }),
                )
              : null,
          ),
        )
      : h("span", { class: "muted", text: "none" }),
  );
}

function lane(view, k) {
  const st = view.state;
  return h(
    "div",
    { class: `lane${k === 2 ? " public" : ""}`, data: { lane: k } },
    h("span", { class: "label", text: `${laneName(view, k)} = ${frac(st.lane_values[k])}` }),
    h(
      "ol",
      { class: "slots" },
      st.lanes[k].map((e, i) => slot(view, e, i)),
    ),
  );
}

function playerLine(view, seat) {
  const st = view.state;
  const p = st.players[seat];
  const legends = [...st.legends[seat], ...st.rainbow[seat]];
  const est = st.estimate ? ` · VP now ${st.estimate.vp[seat]}` : "";
  return h(
    "div",
    { class: `mc-player${st.turn && st.turn.seat === seat ? " turn" : ""}`, data: { seat } },
    h("strong", {}, st.turn && st.turn.seat === seat ? "▶ " : "", seatName(view, seat)),
    ` · PVP ${p.pvp}${est} · hand ${p.hand_size} · deck ${p.deck_size} · discard ${p.discard.length}`,
    h(
      "span",
      { class: "legends" },
      " · legends: ",
      legends.length ? legends.map((id) => tile(view, id)) : "none",
    ),
  );
}

/** A position as the view gives it: `[lane, slot]`, or `[area, index]` in an assertion area. */
function position(view, [where, i]) {
  if (typeof where === "number") return `${laneName(view, where)} slot ${i + 1}`;
  return `${areaName(view, where)} card ${i + 1}`;
}

/** A readable label for one move (the move itself is sent as the view gave it). */
function label(view, m) {
  const name = (id) => card(view, id).name;
  const pos = (p) => position(view, p);
  switch (m.type) {
    case "set_value":
      return `value → ${laneName(view, m.lane)}`;
    case "set_operator":
      return `operator → ${laneName(view, m.lane)}`;
    case "set_function":
      return `operator-value → ${laneName(view, m.lane)}`;
    case "assert":
      return `assert in ${areaName(view, m.area)}${m.under ? ` over ${name(m.under)}` : ""}`;
    case "function_calc":
      return `calculate ${pos(m.input)} → ${pos(m.output)}`;
    case "function_effect":
      return "use its effect";
    case "legend":
      return m.replace === undefined
        ? "place as legend"
        : `legend, replacing ${name(view.state.legends[view.you][m.replace])}`;
    case "use":
      return "use (discard; opponent discards)";
    case "choose":
      return "choose";
    case "move_value":
      return `move value ${pos(m.from)} → ${laneName(view, m.lane)}`;
    case "swap":
      return `swap ${pos(m.a)} ↔ ${pos(m.b)}`;
    case "move_assertion":
      return `move ${name(view.state.areas[m.area][m.index].card)} (${m.area}) → ${seatName(view, m.to)}'s private area`;
    case "rearrange":
      return m.cycle.length ? `rearrange ${m.cycle.map(pos).join(" → ")}` : "leave the operators";
    case "decline":
      return "decline";
    case "end_turn":
      return "End turn";
    case "resign":
      return "Resign";
    case "pick_deck":
      return `deck “${m.deck}”`;
    default:
      return m.type;
  }
}

/** The hand: each card with the moves offered for it; other moves in an actions row. */
function hand(view, ctx) {
  const st = view.state;
  const me = st.players[view.you];
  if (!me) return null;
  const byCard = new Map();
  const other = [];
  const inHand = (x) => x.type !== "pick_deck" && x.type !== "resign" && !ANSWERS.has(x.type);
  for (const m of movesWhere(view, inHand)) {
    if (m.card) {
      if (!byCard.has(m.card)) byCard.set(m.card, []);
      byCard.get(m.card).push(m);
    } else other.push(m);
  }
  const ids = [...new Set(me.hand || [])];
  const handList = h(
    "ul",
    { class: "mc-hand" },
    ids.map((id) => {
      const n = me.hand.filter((x) => x === id).length;
      return h(
        "li",
        { class: "hand-card" },
        tile(view, id),
        n > 1 ? h("span", { class: "n", text: `×${n}` }) : null,
        h(
          "span",
          { class: "card-moves" },
          (byCard.get(id) || []).map((m) => moveButton(ctx, m, label(view, m))),
        ),
      );
    }),
  );
  const onBoard = [...byCard].filter(([id]) => !ids.includes(id));
  return h(
    "section",
    { class: "panel" },
    h("h3", { text: `Your hand (${me.hand_size})` }),
    handList,
    onBoard.length
      ? h(
          "div",
          { class: "board-moves" },
          onBoard.map(([id, ms]) =>
            h(
              "div",
              {},
              tile(view, id),
              ms.map((m) => moveButton(ctx, m, label(view, m))),
            ),
          ),
        )
      : null,
    other.length
      ? h(
          "div",
          { class: "actions" },
          other.map((m) =>
            moveButton(ctx, m, label(view, m), { cls: m.type === "end_turn" ? "primary" : "" }),
          ),
        )
      : null,
  );
}

/** An open choice: the seat it waits for gets what it asks and its answers together, at the
 * top of the board; everyone else a line saying whom the game waits for. */
function pendingPanel(view, ctx) {
  const p = view.state.pending;
  if (!p) return null;
  const what = `${p.kind.replaceAll("_", " ")}${p.source ? ` (${card(view, p.source).name})` : ""}`;
  if (p.seat !== view.you)
    return h("p", { class: "pending", role: "status" }, `Waiting for ${seatName(view, p.seat)}: ${what}`);
  const answers = movesWhere(view, (m) => ANSWERS.has(m.type));
  return h(
    "section",
    { class: "panel pending mine", "data-testid": "choice" },
    h("h3", { text: `Your choice: ${what}` }),
    h("p", { role: "status", text: CHOICE_ASKS[p.kind] || "Choose one:" }),
    h(
      "div",
      { class: "actions" },
      answers.map((m) =>
        moveButton(ctx, m, m.type === "choose" ? ["choose ", tile(view, m.card)] : label(view, m)),
      ),
    ),
  );
}

/** Deck building: ready-made decks, or a deck composed from the pool by counts. */
function deckStep(view, ctx) {
  const st = view.state;
  const status = st.players
    .map((p, s) => `${seatName(view, s)}: ${p.deck_in ? "deck in" : "building"}`)
    .join(" · ");
  const picks = movesWhere(view, (m) => m.type === "pick_deck");
  const template = (view.moves || []).find((m) => m.template);
  const memo = ctx.memo;
  if (!memo.counts) {
    memo.counts = {};
    for (const id of Object.values(st.ready_decks)[0] || []) memo.counts[id] = (memo.counts[id] || 0) + 1;
  }
  const total = Object.values(memo.counts).reduce((a, b) => a + b, 0);
  const counts = h(
    "ul",
    { class: "pool" },
    Object.keys(st.pool).map((id) => {
      const change = (e) => {
        memo.counts[id] = Math.max(0, Number(e.target.value) || 0);
        ctx.redraw();
      };
      const input = h("input", {
        type: "number",
        min: 0,
        max: 60,
        value: memo.counts[id] || 0,
        "aria-label": `copies of ${card(view, id).name}`,
        on: { change },
      });
      return h("li", {}, h("label", {}, tile(view, id), " ", input));
    }),
  );
  const rules = `${st.deck_rules.min}–${st.deck_rules.max} cards; the assertion cards' VP may not exceed the deck size`;
  const composer = template
    ? deckComposer(ctx, `${rules}. Now: ${total}.`, counts, () => ({
        type: "submit_deck",
        cards: Object.entries(memo.counts).flatMap(([id, n]) => Array(n).fill(id)),
      }))
    : null;
  return h(
    "div",
    { class: "deck-step" },
    h("p", { class: "status-line", text: status }),
    picks.length
      ? h(
          "section",
          { class: "panel" },
          h("h3", { text: "Pick a ready-made deck" }),
          picks.map((m) => moveButton(ctx, m, label(view, m))),
        )
      : null,
    composer,
  );
}

function render(view, ctx) {
  const st = view.state;
  if (st.phase === "deckbuild") return h("div", { class: "math-card" }, deckStep(view, ctx));
  const top = view.you === 1 ? [0, 1, 2, 3, 4] : [4, 3, 2, 1, 0];
  const opp = view.you === 1 ? 0 : 1;
  const me = 1 - opp;
  const t = st.turn;
  return h(
    "div",
    { class: "math-card" },
    h(
      "p",
      { class: "status-line" },
      t ? `Turn ${t.number}: ${seatName(view, t.seat)} · phase ${st.phase}` : `phase ${st.phase}`,
      st.estimate ? ` · public lane read from the ${st.estimate.public_direction}` : "",
    ),
    pendingPanel(view, ctx),
    h(
      "section",
      { class: "panel mc-board" },
      playerLine(view, opp),
      assertionList(view, `private${opp}`),
      top.map((k) => [
        k === 2 ? assertionList(view, "left") : null,
        lane(view, k),
        k === 2 ? assertionList(view, "right") : null,
      ]),
      assertionList(view, `private${me}`),
      playerLine(view, me),
    ),
    hand(view, ctx),
  );
}

function describe(ev, view) {
  const who = (s) => seatName(view, s);
  const name = (id) => (view.state ? card(view, id).name : id);
  switch (ev.type) {
    case "deck_in":
      return `${who(ev.seat)}'s deck is in`;
    case "first_player":
      return `${who(ev.seat)} goes first`;
    case "turn_start":
      return `— turn ${ev.number}: ${who(ev.seat)} —`;
    case "draw":
      return `you draw ${ev.cards.map(name).join(", ")}`;
    case "draw_count":
      return `${who(ev.seat)} draws ${ev.count}`;
    case "set_value":
    case "set_operator":
    case "set_function":
      return `${who(ev.seat)} sets ${name(ev.card)} in ${view.state ? laneName(view, ev.at[0]) : `lane ${ev.at[0]}`}`;
    case "assert":
      return `${who(ev.seat)} asserts ${ev.card ? name(ev.card) : "a puzzle"} in ${areaName(view, ev.area, ev.seat)}`;
    case "legend":
      return `${who(ev.seat)} places the legend ${name(ev.card)}`;
    case "discard":
      return `${name(ev.card)} goes to ${who(ev.seat)}'s discard pile`;
    case "pvp":
      return `${who(ev.seat)}: PVP ${ev.change < 0 ? "" : "+"}${ev.change}, now ${ev.pvp}`;
    case "choice":
      return `${who(ev.seat)} must answer: ${ev.kind.replace("_", " ")}`;
    case "end_turn":
      return `${who(ev.seat)} ends the turn`;
    case "resign":
      return `${who(ev.seat)} resigns`;
    case "search":
      return `you take ${name(ev.card)} from your deck`;
    case "function_calc":
      return `${who(ev.seat)} calculates with ${name(ev.card)}: ${view.state ? `${position(view, ev.input)} → ${position(view, ev.output)}` : ""}`;
    case "hand_limit":
      return `${who(ev.seat)} holds more than 7 cards and discards down to 7`;
    case "move_value":
    case "swap":
    case "rearrange":
    case "move_assertion":
    case "function_effect":
    case "use":
    case "declined":
    case "searched":
    case "search_failed":
    case "no_effect":
    case "extra_value":
      return `${ev.seat === undefined ? "" : `${who(ev.seat)}: `}${ev.type.replace("_", " ")}${ev.card ? ` (${name(ev.card)})` : ""}`;
    default:
      return null;
  }
}

export default { render, describe };

/** For the node tests: a move's label as its button shows it. */
export { label as moveLabel };
