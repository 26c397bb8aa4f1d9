// Mantis: tanks as coloured card stacks, the top card's back, score piles, steal targets.
import { chip, findMove, h, moveButton, plural, seatName } from "../ui.js";

function parseCard(card) {
  const [face, back] = card.split(":");
  return { face, back: back.split(",") };
}

function backChips(colours) {
  return h(
    "span",
    { class: "back", title: `back: ${colours.join(", ")}` },
    colours.map((c) => chip(c)),
  );
}

/** A tank: one stack per face colour, its count, and the card backs inside it. */
function tank(cards, threatened) {
  const stacks = new Map();
  for (const card of cards) {
    const { face } = parseCard(card);
    if (!stacks.has(face)) stacks.set(face, []);
    stacks.get(face).push(card);
  }
  if (!stacks.size) return h("p", { class: "muted", text: "empty tank" });
  return h(
    "ul",
    { class: "tank", "aria-label": "tank" },
    [...stacks].map(([face, group]) =>
      h(
        "li",
        {
          class: `stack c-${face}${threatened.has(face) ? " at-risk" : ""}`,
          title: `${group.length} ${face}${threatened.has(face) ? " (may match the top card)" : ""}`,
          data: { colour: face, count: group.length },
        },
        chip(face, { big: true }),
        h("span", { class: "count", text: `×${group.length}` }),
      ),
    ),
  );
}

function flipText(last, view) {
  const who = seatName(view, last.seat);
  const into = seatName(view, last.into);
  const where = {
    scored: `${who} scored ${last.count}`,
    stolen: `${who} stole ${last.count} into their tank`,
    to_tank: `no match: into ${into}'s tank`,
  }[last.result];
  return where;
}

function render(view, ctx) {
  const st = view.state;
  const top = st.top_back || [];
  const threatened = new Set(top);
  const scoreMove = findMove(view, (m) => m.type === "score");
  const head = h(
    "div",
    { class: "mantis-pile panel" },
    h("h3", { text: "Draw pile" }),
    top.length
      ? h(
          "div",
          { class: "card back-card" },
          h("span", { class: "muted", text: "top card's back" }),
          backChips(top),
        )
      : h("p", { text: "empty" }),
    h("p", { text: `${plural(st.cards_left, "card")} left · target ${st.target}` }),
    top.length
      ? h("p", {
          class: "small muted",
          text: "Dashed stacks have a colour of the top card's back: they may match.",
        })
      : null,
    scoreMove ? moveButton(ctx, scoreMove, "Score: flip for my tank", { cls: "primary" }) : null,
    st.last
      ? h(
          "div",
          { class: "last-flip" },
          h("span", { text: `Last flip (${seatName(view, st.last.seat)}, ${st.last.action}): ` }),
          chip(parseCard(st.last.card).face, { big: true }),
          backChips(parseCard(st.last.card).back),
          h("span", { text: ` — ${flipText(st.last, view)}` }),
        )
      : null,
  );
  const seats = st.tanks.map((cards, seat) => {
    const steal = findMove(view, (m) => m.type === "steal" && m.target === seat);
    return h(
      "section",
      {
        class: `panel mantis-seat${st.turn === seat ? " turn" : ""}${seat === view.you ? " mine" : ""}`,
        data: { seat },
      },
      h(
        "h3",
        {},
        st.turn === seat ? h("span", { class: "turn-mark", "aria-label": "to move", text: "▶ " }) : null,
        seatName(view, seat),
      ),
      h(
        "p",
        { class: "pile" },
        h("span", { class: "pile-stack", "aria-hidden": "true" }),
        `score pile: ${st.scores[seat]} / ${st.target}`,
      ),
      tank(cards, threatened),
      steal ? moveButton(ctx, steal, `Steal from ${seatName(view, seat)}`) : null,
    );
  });
  return h("div", { class: "mantis" }, head, h("div", { class: "mantis-seats" }, seats));
}

function describe(ev, view) {
  const who = (s) => seatName(view, s);
  switch (ev.type) {
    case "flip":
      return `${who(ev.seat)} ${ev.action === "steal" ? `tries to steal from ${who(ev.target)}` : "scores"}: flips ${ev.colour}`;
    case "scored":
      return `${who(ev.seat)} puts ${ev.count} ${ev.colour} on their score pile (now ${ev.pile})`;
    case "stolen":
      return `${who(ev.seat)} steals ${ev.count} ${ev.colour} from ${who(ev.from)}`;
    case "to_tank":
      return `no match: the card goes into ${who(ev.seat)}'s tank`;
    case "extra_turn":
      return `${who(ev.seat)} plays again`;
    default:
      return null;
  }
}

export default { render, describe };
