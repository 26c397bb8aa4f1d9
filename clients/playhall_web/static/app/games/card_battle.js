// Card Battle: pick or compose a deck from the template, then watch the paced battle, each
// turn replayed from its events (draws, attacks, deaths, direct hits).
import { countdown, deckComposer, h, moveButton, movesWhere, seatName } from "../ui.js";

const ICON = { goblin: "G", skeleton: "S", archer: "A", wizard: "W", knight: "K" };

function cardBox(card, hit) {
  const state = card.active ? "active" : "waiting";
  return h(
    "li",
    {
      class: `bcard ${state}${card.attacked ? " attacked" : ""}${hit ? ` ${hit.kind}` : ""}`,
      data: { card: card.id },
      title: `${card.name}: ${state}`,
    },
    h("span", { class: "icon", text: ICON[card.name] || "?" }),
    h("span", { class: "name", text: card.name }),
    h("span", { class: "stats", text: `♥${card.hp}/${card.max_hp} ⚔${card.attack} ⚡${card.speed}` }),
    h("span", { class: "state", text: card.active ? (card.attacked ? "attacked" : "ready") : "waiting" }),
    hit && hit.text ? h("span", { class: "hit-text", text: hit.text }) : null,
  );
}

function playerRow(view, seat, frame) {
  const st = view.state;
  const p = st.players[seat];
  const hit = (id) => (frame.hits || {})[`${seat}:${id}`];
  const deck = p.deck
    ? `${p.deck.ready || "own deck"} (${p.deck.deck_type}, ${p.deck.strategy})`
    : p.submitted
      ? "deck in (hidden)"
      : "choosing a deck…";
  const hpPct = Math.max(0, Math.min(100, (100 * p.hp) / st.rules.start_hp));
  return h(
    "section",
    {
      class: `panel cb-player${seat === view.you ? " mine" : ""}${(frame.hits || {})[`${seat}:player`] ? " hit" : ""}`,
      data: { seat },
    },
    h("h3", { text: seatName(view, seat) }),
    h(
      "div",
      { class: "hp" },
      h("div", { class: "hp-bar", style: `width:${hpPct}%` }),
      h("span", { class: "hp-text", text: `HP ${p.hp} / ${st.rules.start_hp}` }),
    ),
    h("p", { class: "small", text: `mana ${p.mana}/${p.max_mana} · deck ${p.deck_left} left · ${deck}` }),
    h(
      "ol",
      { class: "bfield", "aria-label": "field" },
      p.field.length
        ? p.field.map((c) => cardBox(c, hit(c.id)))
        : h("li", { class: "muted", text: "empty field" }),
    ),
  );
}

function deckSummary(cards) {
  const counts = {};
  for (const c of cards) counts[c] = (counts[c] || 0) + 1;
  return Object.entries(counts)
    .map(([c, n]) => `${n} ${c}`)
    .join(", ");
}

/** The composer: 20 card slots, a deck type and a strategy, kept in ctx.memo across renders. */
function composer(view, ctx, template) {
  const rules = view.state.rules;
  const memo = ctx.memo;
  if (!memo.cards) memo.cards = [...Object.values(rules.ready_decks)[0].cards];
  memo.deck_type ||= Object.keys(rules.deck_types)[0];
  memo.strategy ||= rules.strategies[0];
  const select = (label, value, choices, set) =>
    h(
      "label",
      {},
      label,
      " ",
      h(
        "select",
        { on: { change: (e) => set(e.target.value) } },
        choices.map((c) => h("option", { value: c, selected: c === value, text: c })),
      ),
    );
  const names = Object.keys(rules.card_types);
  const cost = memo.cards.reduce((sum, c) => sum + rules.card_types[c].cost, 0);
  const setter = (key) => (v) => {
    memo[key] = v;
  };
  const slots = h(
    "ol",
    { class: "deck-slots" },
    memo.cards.map((card, i) =>
      h(
        "li",
        {},
        select(`${i + 1}`, card, names, (v) => (memo.cards[i] = v)),
      ),
    ),
  );
  return deckComposer(
    ctx,
    `${rules.deck_size} cards, drawn in this order (total cost ${cost}).`,
    [
      slots,
      select("deck type", memo.deck_type, Object.keys(rules.deck_types), setter("deck_type")),
      select("strategy", memo.strategy, rules.strategies, setter("strategy")),
    ],
    () => ({
      type: template.type,
      cards: [...memo.cards],
      deck_type: memo.deck_type,
      strategy: memo.strategy,
    }),
  );
}

function deckStep(view, ctx) {
  const st = view.state;
  const picks = movesWhere(view, (m) => m.type === "pick_deck");
  const template = (view.moves || []).find((m) => m.template);
  const status = st.players
    .map((p) => `${seatName(view, p.seat)}: ${p.submitted ? "deck in" : "choosing"}`)
    .join(" · ");
  if (!picks.length && !template) return h("p", { class: "status-line", text: status });
  return h(
    "div",
    { class: "deck-step" },
    h("p", { class: "status-line", text: status }),
    h(
      "section",
      { class: "panel" },
      h("h3", { text: "Pick a ready-made deck" }),
      h(
        "ul",
        { class: "deck-list" },
        picks.map((m) => {
          const d = st.rules.ready_decks[m.deck];
          return h(
            "li",
            {},
            moveButton(ctx, m, d.title || m.deck),
            h("span", { class: "small", text: ` ${d.deck_type}, ${d.strategy}: ${deckSummary(d.cards)}` }),
          );
        }),
      ),
    ),
    template ? composer(view, ctx, template) : null,
  );
}

function render(view, ctx, frame = {}) {
  const st = view.state;
  const me = view.you === null || view.you === undefined ? 0 : view.you;
  const turnLine =
    st.phase === "deck"
      ? null
      : h(
          "p",
          { class: "status-line" },
          `Battle turn ${st.turn}`,
          st.phase === "battle"
            ? [
                ` · next turn (${st.next_turn_mana} mana)`,
                view.deadline ? [" in ", countdown(ctx, view.deadline)] : "",
              ]
            : " · over",
          frame.caption ? h("span", { class: "caption", text: ` · ${frame.caption}` }) : null,
        );
  return h(
    "div",
    { class: "card-battle" },
    st.phase === "deck" ? deckStep(view, ctx) : turnLine,
    playerRow(view, 1 - me, frame),
    playerRow(view, me, frame),
  );
}

/** Replays a battle turn from the previous view: one frame per draw, attack, death and hit. */
function frames(prev, view, events) {
  if (
    !prev ||
    !prev.state ||
    !prev.state.players ||
    !events.some((e) => e.type === "attack" || e.type === "direct_hit" || e.type === "draw")
  )
    return [];
  const rules = view.state.rules;
  const players = prev.state.players.map((p) => ({ ...p, field: p.field.map((c) => ({ ...c })) }));
  const out = [];
  const snap = (hits, caption) =>
    out.push({
      view: {
        ...view,
        moves: [],
        state: {
          ...view.state,
          players: players.map((p) => ({ ...p, field: p.field.map((c) => ({ ...c })) })),
        },
      },
      hits,
      caption,
    });
  const find = (seat, id) => players[seat].field.find((c) => c.id === id);
  for (const ev of events) {
    if (ev.type === "turn_start") {
      for (const p of players) Object.assign(p, { mana: ev.mana, max_mana: ev.mana });
    } else if (ev.type === "draw") {
      const deck = view.state.players[ev.seat].deck;
      const base = rules.card_types[ev.name];
      const bonus = (deck && rules.deck_types[deck.deck_type]) || {};
      const hp = base.hp + (bonus.hp || 0);
      players[ev.seat].field.splice(ev.slot, 0, {
        id: ev.card,
        name: ev.name,
        cost: base.cost,
        hp,
        max_hp: hp,
        attack: base.attack + (bonus.attack || 0),
        speed: base.speed + (bonus.speed || 0),
        active: ev.active,
        attacked: false,
      });
      players[ev.seat].mana = ev.mana_left;
      snap(
        { [`${ev.seat}:${ev.card}`]: { kind: "drawn", text: ev.free ? "free" : `−${ev.cost} mana` } },
        `${seatName(view, ev.seat)} draws ${ev.name}`,
      );
    } else if (ev.type === "attack") {
      const target = find(ev.target_seat, ev.target);
      if (target) target.hp = ev.hp_after;
      const attacker = find(ev.seat, ev.card);
      if (attacker) attacker.attacked = true;
      snap(
        {
          [`${ev.seat}:${ev.card}`]: { kind: "attacking" },
          [`${ev.target_seat}:${ev.target}`]: { kind: "hurt", text: `−${ev.damage}` },
        },
        `${seatName(view, ev.seat)}'s ${attacker ? attacker.name : "card"} hits for ${ev.damage}`,
      );
    } else if (ev.type === "death") {
      players[ev.seat].field = players[ev.seat].field.filter((c) => c.id !== ev.card);
    } else if (ev.type === "direct_hit") {
      players[ev.target_seat].hp = ev.hp_after;
      snap(
        { [`${ev.seat}:${ev.card}`]: { kind: "attacking" }, [`${ev.target_seat}:player`]: { kind: "hurt" } },
        `${seatName(view, ev.target_seat)} takes ${ev.damage} directly`,
      );
    }
  }
  return out;
}

/** "Bot 1's wizard": a card by its seat and deck position (decks are public in the battle). */
function cardName(view, seat, id) {
  const p = view.state && view.state.players[seat];
  const name = p && p.deck ? p.deck.cards[id] : `card ${id + 1}`;
  return `${seatName(view, seat)}'s ${name}`;
}

function describe(ev, view) {
  const who = (s) => seatName(view, s);
  switch (ev.type) {
    case "deck_submitted":
      return `${who(ev.seat)} has chosen a deck`;
    case "deck_accepted":
      return `your deck is in: ${ev.deck.ready || "your own"} (${ev.deck.deck_type}, ${ev.deck.strategy})`;
    case "decks_revealed":
      return "both decks are in: the battle begins";
    case "turn_start":
      return `— turn ${ev.turn}: ${ev.mana} mana —`;
    case "draw":
      return `${who(ev.seat)} draws ${ev.name}${ev.free ? " (free)" : ""} into slot ${ev.slot + 1}`;
    case "attack":
      return `${cardName(view, ev.seat, ev.card)} hits ${cardName(view, ev.target_seat, ev.target)} for ${ev.damage} (HP left ${ev.hp_after})`;
    case "death":
      return `${who(ev.seat)}'s ${ev.name} is destroyed`;
    case "direct_hit":
      return `${cardName(view, ev.seat, ev.card)} hits ${who(ev.target_seat)} for ${ev.damage} (HP ${ev.hp_after})`;
    default:
      return null;
  }
}

export default { render, describe, frames, frameMs: 110 };
