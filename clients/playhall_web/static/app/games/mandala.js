// Mandala (standard and solo): mountains, fields, rivers, cups and the hand; Master Yoga's
// automatic steps with a countdown to the view's deadline.
import { chip, countdown, h, moveButton, movesWhere, plural, seatName } from "../ui.js";

const SIDES = ["left", "right"];

function playerName(view, i) {
  const p = view.state.players[i];
  return p.seat === null || p.seat === undefined ? p.name : seatName(view, p.seat);
}

function counts(dict, colours) {
  const shown = colours.filter((c) => dict[c] > 0);
  return shown.length
    ? shown.map((c) => chip(c, { count: dict[c] }))
    : h("span", { class: "muted", text: "none" });
}

function river(p) {
  return h(
    "ol",
    { class: "river", "aria-label": "river" },
    [0, 1, 2, 3, 4, 5].map((i) =>
      h(
        "li",
        { class: "space" },
        h("span", { class: "space-n", text: i + 1 }),
        p.river[i] ? chip(p.river[i]) : "·",
      ),
    ),
  );
}

function playerPanel(view, i) {
  const st = view.state;
  const p = st.players[i];
  const mine = st.you === i;
  return h(
    "section",
    {
      class: `panel mandala-player${st.turn === i ? " turn" : ""}${mine ? " mine" : ""}`,
      data: { player: i },
    },
    h("h3", {}, st.turn === i ? h("span", { class: "turn-mark", text: "▶ " }) : null, playerName(view, i)),
    river(p),
    h(
      "p",
      {},
      `hand ${p.hand_count} · cup ${p.cup_count}`,
      p.score !== undefined ? ` · score ${p.score}` : "",
    ),
    p.cup ? h("p", { class: "cup" }, "cup: ", counts(p.cup, st.colours)) : null,
  );
}

function mandalaBox(view, ctx, m) {
  const st = view.state;
  const md = st.mandalas[m];
  const resolving = st.resolution && st.resolution.mandala === m;
  const me = st.you === null || st.you === undefined ? 0 : st.you;
  const field = (i) =>
    h(
      "div",
      { class: "field", data: { player: i } },
      h("span", { class: "label", text: `${playerName(view, i)}'s field (${md.field_sizes[i]})` }),
      counts(md.fields[i], st.colours),
    );
  const pile = ({ colour, count }) => {
    const take = movesWhere(view, (x) => x.type === "choose" && x.colour === colour && resolving)[0];
    const body = [chip(colour, { count, big: true })];
    return take
      ? moveButton(ctx, take, [...body, " take"], { cls: "take", title: `take the ${colour} cards` })
      : h("span", { class: "pile" }, body);
  };
  return h(
    "section",
    { class: `panel mandala-board${resolving ? " resolving" : ""}`, data: { mandala: m } },
    h("h3", { text: `${SIDES[m]} mandala${resolving ? " — resolving" : ""}` }),
    field(1 - me),
    h(
      "div",
      { class: "mountain", "aria-label": "mountain" },
      h("span", { class: "label", text: "mountain" }),
      md.mountain.length ? md.mountain.map(pile) : h("span", { class: "muted", text: "empty" }),
    ),
    field(me),
  );
}

/** The hand, one row per colour with the actions the view offers for it. */
function handPanel(view, ctx) {
  const st = view.state;
  const p = st.players[st.you];
  if (!p || !p.hand) return null;
  const rows = st.colours
    .filter((c) => p.hand[c] > 0)
    .map((colour) => {
      const of = (pred) => movesWhere(view, (m) => m.colour === colour && pred(m));
      const group = (label, moves, text, title) =>
        moves.length
          ? h(
              "span",
              { class: "group", data: { kind: moves[0].type } },
              h("span", { class: "label", text: label }),
              moves.map((m) => moveButton(ctx, m, text(m), { title: title(m) })),
            )
          : null;
      // A count says what it counts: "2 cards" on the button, the whole move in its title.
      const cards = (m) => plural(m.count, "card");
      return h(
        "li",
        { class: "hand-row", data: { colour } },
        chip(colour, { count: p.hand[colour], big: true }),
        group(
          "mountain:",
          of((m) => m.type === "mountain"),
          (m) => SIDES[m.mandala],
          (m) => `play a ${colour} card to the ${SIDES[m.mandala]} mountain`,
        ),
        SIDES.map((side, k) =>
          group(
            `${side} field:`,
            of((m) => m.type === "field" && m.mandala === k),
            cards,
            (m) => `play ${plural(m.count, `${colour} card`)} to your ${side} field`,
          ),
        ),
        group(
          "discard:",
          of((m) => m.type === "discard"),
          cards,
          (m) => `discard ${plural(m.count, `${colour} card`)} and draw as many`,
        ),
      );
    });
  return h(
    "section",
    { class: "panel hand" },
    h("h3", { text: "Your hand" }),
    h("ul", { class: "hand-rows" }, rows),
  );
}

function phaseLine(view, ctx) {
  const st = view.state;
  if (st.phase === "over") return "game over";
  if (st.phase === "yoga") {
    return h(
      "span",
      { class: "countdown" },
      `Master Yoga plays the ${st.yoga_next} mandala`,
      view.deadline ? [" in ", countdown(ctx, view.deadline)] : "",
    );
  }
  const who = playerName(view, st.turn);
  if (st.phase === "resolve")
    return `${SIDES[st.resolution.mandala]} mandala resolving: ${who} chooses a colour`;
  return `${who}'s action`;
}

function render(view, ctx) {
  const st = view.state;
  return h(
    "div",
    { class: "mandala" },
    h(
      "p",
      { class: "status-line" },
      phaseLine(view, ctx),
      ` · deck ${st.deck_count} · discard ${st.discard_count}${st.reshuffled ? " · reshuffled: the next completed mandala is the last" : ""}`,
    ),
    h(
      "div",
      { class: "mandala-boards" },
      [0, 1].map((m) => mandalaBox(view, ctx, m)),
    ),
    handPanel(view, ctx),
    h(
      "div",
      { class: "mandala-players" },
      st.players.map((_, i) => playerPanel(view, i)),
    ),
  );
}

function describe(ev, view) {
  const who = (i) => (view.state ? playerName(view, i) : `player ${i + 1}`);
  const side = (m) => `${SIDES[m]}`;
  switch (ev.type) {
    case "mountain":
      return `${who(ev.player)} plays ${ev.colour} to the ${side(ev.mandala)} mountain`;
    case "field":
      return `${who(ev.player)} plays ${plural(ev.count, ev.colour)} to their ${side(ev.mandala)} field`;
    case "discard":
      return `${who(ev.player)} discards ${ev.count} ${ev.colour}`;
    case "draw":
      return `${who(ev.player)} draws ${ev.count}`;
    case "drawn":
      return `you drew ${ev.cards.join(", ")}`;
    case "reshuffle":
      return `the discard pile becomes the deck (${ev.deck_count}): the next completed mandala is the last`;
    case "yoga_draw":
      return `Master Yoga draws ${ev.colour} → ${ev.to} (${side(ev.mandala)})${ev.completes ? ", completing it" : ""}`;
    case "complete":
      return `the ${side(ev.mandala)} mandala is complete; ${who(ev.first_chooser)} chooses first`;
    case "take":
      return `${who(ev.player)} takes ${ev.count} ${ev.colour}: ${ev.river} to the river, ${ev.cup} to the cup${ev.discarded ? `, ${ev.discarded} discarded` : ""}`;
    case "mountain_discarded":
      return `nobody had field cards: the ${side(ev.mandala)} mountain is discarded`;
    case "refill":
      return `the ${side(ev.mandala)} mountain gets ${ev.cards.length || ev.cards} new cards`;
    case "cards_exhausted":
      return "no cards left to draw: the game ends";
    default:
      return null;
  }
}

/** The winners as indices into the outcome's scores: in solo an empty `winners` is Master Yoga's
 * win (player 1, who has no seat), unless nobody played the game to an end (abandoned, or closed
 * by the server's operator). */
function winners(view) {
  const o = view.outcome;
  if (!o || o.winners.length || !view.state || view.state.mode !== "solo") return null;
  return o.reason === "abandoned" || o.reason === "closed_by_operator" ? [] : [1];
}

export default { render, describe, winners };
