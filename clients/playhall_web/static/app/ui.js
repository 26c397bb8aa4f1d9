// Small DOM helpers shared by the lobby, the room and every game renderer.
// No framework: each screen is rebuilt from the view with these functions.

/** Build an element. props: class, text, title, on: {event: fn}, data: {key: value}, and any
 * other attribute (false/null/undefined leave it out, true sets it empty). */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === "data") for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    else if (key === "value") el.value = value;
    else if (key === "checked") el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Colour names to a short label, so a colour is never shown by its hue alone. */
const COLOUR_LABELS = {
  red: "R",
  orange: "O",
  yellow: "Y",
  green: "G",
  blue: "B",
  purple: "Pu",
  pink: "Pk",
};

export function colourLabel(colour) {
  return COLOUR_LABELS[colour] || String(colour).slice(0, 2);
}

/** A coloured chip with its letter; `count` is shown after it when given. */
export function chip(colour, { count, big = false, extra = "" } = {}) {
  const label = count === undefined ? colour : `${count} ${colour}`;
  return h(
    "span",
    { class: `chip c-${colour}${big ? " big" : ""} ${extra}`.trim(), title: label, "aria-label": label },
    colourLabel(colour),
    count === undefined ? null : h("span", { class: "n", "aria-hidden": "true" }, `×${count}`),
  );
}

/** A stable key for a move (field order does not matter). */
export function moveKey(move) {
  return JSON.stringify(move, Object.keys(move).sort());
}

/** The view's own moves matching `pred` (the only moves the page ever offers). */
export function movesWhere(view, pred) {
  return (view.moves || []).filter((m) => !m.template && pred(m));
}

export function findMove(view, pred) {
  return movesWhere(view, pred)[0] || null;
}

/** One `type` listener on `root` for every descendant matching `selector`, drawn now or later
 * (TodoMVC's `$delegate`): `handler(matched, event)`. Returns a function that removes it. */
export function delegate(root, selector, type, handler) {
  const listener = (event) => {
    const matched = event.target instanceof Element ? event.target.closest(selector) : null;
    if (matched && root.contains(matched)) handler(matched, event);
  };
  root.addEventListener(type, listener);
  return () => root.removeEventListener(type, listener);
}

/** A real <button> for `move`, one of the view's moves: it carries the move's key in
 * `data-move`, and the room's board sends the move when it is clicked (room/board.js). */
export function moveButton(ctx, move, label, { cls = "", title } = {}) {
  return h(
    "button",
    {
      type: "button",
      class: `move ${cls}`.trim(),
      title,
      disabled: !ctx.canMove,
      data: { move: moveKey(move) },
    },
    label,
  );
}

/** A board element that is a button for `move` when it is offered (sent as `moveButton`'s is),
 * a plain box otherwise. */
export function maybeButton(ctx, move, props, ...children) {
  if (!move) return h("div", props, ...children);
  const cls = `${props.class || ""} playable`.trim();
  return h(
    "button",
    {
      ...props,
      class: cls,
      type: "button",
      disabled: !ctx.canMove,
      data: { ...(props.data || {}), move: moveKey(move) },
    },
    ...children,
  );
}

export function section(title, ...children) {
  return h("section", { class: "panel" }, h("h3", { text: title }), ...children);
}

/** "alice" / "Bot 1" / "seat 2" for a seat index, with "(you)" for the viewer. */
export function seatName(view, seat) {
  if (seat === null || seat === undefined) return "nobody";
  const s = (view.seats || [])[seat];
  const name = (s && s.name) || `seat ${seat + 1}`;
  return seat === view.you ? `${name} (you)` : name;
}

export function plural(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

/** True when the user asked for reduced motion: replays are skipped. */
export function reducedMotion() {
  return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

export function pause(ms) {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

/** Plain number (floats arrive wrapped by the codec; strings stay strings). */
export function num(value) {
  if (value === null || value === undefined) return value;
  if (typeof value === "object" && "valueOf" in value) return Number(value.valueOf());
  return value;
}

export function formatScore(value) {
  const v = num(value);
  return typeof v === "number" && !Number.isInteger(v) ? v.toFixed(2) : String(v);
}

/** Seconds until a server deadline, kept current by the room's clock tick (room/clocks.js). */
export function countdown(ctx, deadline) {
  const left = Math.max(0, ctx.secondsTo(deadline));
  return h("span", { class: "secs", data: { deadline: String(num(deadline)) } }, `${left.toFixed(1)} s`);
}

/** A folding "compose your own deck" form around `body`: `intro` says what a deck needs,
 * `deck()` builds the move to send. `ctx.memo.open` keeps it open across redraws. */
export function deckComposer(ctx, intro, body, deck) {
  const toggle = () => {
    ctx.memo.open = !ctx.memo.open;
  };
  return h(
    "details",
    { class: "panel composer", open: ctx.memo.open },
    h("summary", { on: { click: toggle } }, "Compose your own deck"),
    h("p", { class: "small", text: intro }),
    body,
    h(
      "button",
      {
        type: "button",
        class: "move primary",
        disabled: !ctx.canMove,
        on: { click: () => ctx.play(deck()) },
      },
      "Submit this deck",
    ),
  );
}
