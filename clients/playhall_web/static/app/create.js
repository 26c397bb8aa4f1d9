// The lobby's "Create a room" form: the game, its options as the server's `games` list describes
// them (labels, value labels, durations in minutes and seconds, only the options that apply to
// the choices made), the clock as a preset (blitz, rapid, a day per move) or set by hand, the
// seat count the options allow, and private or not.
import { h } from "./ui.js";
import {
  applies,
  CLOCK_OPTIONS,
  CLOCK_PRESETS,
  clockPreset,
  seatsText,
  SPECTATOR_DELAY,
  valueText,
} from "./options.js";
import { rulesLink } from "./links.js";

/** Seat range for a game given the chosen options. seats_by_option names the ranges of some
 * choices (Mandala: solo takes [1, 1]); another choice takes what those leave at the ends of the
 * game's range (Mandala standard: 2). */
function seatRange(game, options) {
  let [lo, hi] = [game.min_seats, game.max_seats];
  for (const [name, byChoice] of Object.entries(game.seats_by_option || {})) {
    const mine = byChoice[String(options[name])];
    if (mine) return mine;
    for (const [a, b] of Object.values(byChoice)) {
      if (a === lo && b < hi) lo = b + 1;
      else if (b === hi && a > lo) hi = a - 1;
    }
  }
  return [lo, hi];
}

/** The clock's options set by hand, in the page's words (the server's help texts speak of the
 * options' names, which the form does not show). */
const CLOCK_WORDS = {
  clock: [
    "kind",
    "per turn: a time for each turn; Fischer: a bank of time per seat, which gains the increment with each of its moves",
  ],
  clock_ms: ["time", "for each turn (per turn), or each seat's bank at the start (Fischer)"],
  increment_ms: ["increment", "what a seat's bank gains with each of its moves"],
  on_timeout: [
    "on timeout",
    "a bot plays: the server's bot moves for the seat until its player acts again; the seat forfeits: it leaves the game",
  ],
};

/** The clock options a preset sets; the form shows them only for a clock set by hand. */
const PRESET_OPTIONS = new Set(["clock", "clock_ms", "increment_ms"]);

/** A labelled control, with a help line and anything `more` (the game's rules link) beside it. */
function row(id, label, input, help, ...more) {
  return h(
    "div",
    { class: "field-row" },
    h("label", { for: id, text: label }),
    input,
    ...more,
    help ? h("span", { class: "help", text: help }) : null,
  );
}

/** A duration option (`unit: "ms"`) in minutes and seconds (seconds alone for one of a minute
 * at most); the seconds box is `#opt-<name>`, the minutes box `#opt-<name>-min`. */
function durationInput(opt, value, set) {
  const id = `opt-${opt.name}`;
  const ms = Number(value);
  const withMinutes = opt.max === undefined || opt.max > 60_000;
  const minutes = withMinutes ? Math.floor(ms / 60_000) : 0;
  const seconds = (ms - minutes * 60_000) / 1000;
  const boxes = {};
  const change = () => {
    const min = withMinutes ? Number(boxes.min.value) || 0 : 0;
    set(Math.round((min * 60 + (Number(boxes.s.value) || 0)) * 1000));
  };
  boxes.s = h("input", {
    id,
    type: "number",
    min: 0,
    max: withMinutes ? 59.9 : opt.max / 1000,
    step: 0.1,
    value: String(seconds),
    "aria-label": `${opt.label || opt.name}: seconds`,
    on: { change },
  });
  if (withMinutes)
    boxes.min = h("input", {
      id: `${id}-min`,
      type: "number",
      min: 0,
      max: opt.max === undefined ? undefined : Math.floor(opt.max / 60_000),
      value: String(minutes),
      "aria-label": `${opt.label || opt.name}: minutes`,
      on: { change },
    });
  return h(
    "span",
    { class: "duration" },
    withMinutes ? [boxes.min, h("span", { text: " min " })] : null,
    boxes.s,
    h("span", { text: " s" }),
  );
}

function optionInput(opt, value, set) {
  const id = `opt-${opt.name}`;
  let input;
  if (opt.kind === "bool") {
    input = h("input", {
      id,
      type: "checkbox",
      checked: value,
      on: { change: (e) => set(e.target.checked) },
    });
  } else if (opt.choices) {
    input = h(
      "select",
      { id, on: { change: (e) => set(e.target.value) } },
      opt.choices.map((c) =>
        h("option", { value: String(c), selected: String(c) === String(value), text: valueText(opt, c) }),
      ),
    );
  } else if (opt.kind === "int" && opt.unit === "ms") {
    input = durationInput(opt, value, set);
  } else if (opt.kind === "int") {
    input = h("input", {
      id,
      type: "number",
      min: opt.min,
      max: opt.max,
      value,
      on: { change: (e) => set(Number(e.target.value)) },
    });
  } else {
    input = h("input", { id, type: "text", value, on: { change: (e) => set(e.target.value) } });
  }
  const [label, help] = CLOCK_WORDS[opt.name] || [opt.label || opt.name, opt.help];
  return row(id, label, input, help);
}

/** The clock: a preset, or "set by hand" (then the clock's own options follow). */
function clockRow(formState, game, redraw) {
  const preset = formState.customClock ? "custom" : clockPreset(formState.options);
  const choose = (e) => {
    const chosen = CLOCK_PRESETS.find((p) => p.id === e.target.value);
    formState.customClock = !chosen;
    if (chosen) Object.assign(formState.options, chosen.options);
    else if (formState.options.clock === "none") formState.options.clock = "fischer";
    redraw();
  };
  if (!game.options.some((o) => o.name === "clock")) return null;
  return row(
    "create-clock",
    "clock",
    h(
      "select",
      { id: "create-clock", on: { change: choose } },
      [...CLOCK_PRESETS, { id: "custom", label: "set by hand…" }].map((p) =>
        h("option", { value: p.id, selected: p.id === preset, text: p.label }),
      ),
    ),
  );
}

/** Draws the form into `el` again, the focus kept on the control (by id) that had it. */
export function drawCreateForm(el, app, formState) {
  const focused = el.contains(document.activeElement) ? document.activeElement.id : "";
  el.replaceChildren(createForm(app, formState, () => drawCreateForm(el, app, formState)));
  const again = focused && document.getElementById(focused);
  if (again) again.focus();
}

function createForm(app, formState, redraw) {
  const games = app.games;
  if (!games.length) return h("p", { class: "muted", text: "loading games…" });
  const game = games.find((g) => g.id === formState.game) || games[0];
  formState.game = game.id;
  if (!formState.options || formState.optionsFor !== game.id) {
    formState.options = Object.fromEntries(game.options.map((o) => [o.name, o.default]));
    formState.optionsFor = game.id;
  }
  const range = seatRange(game, formState.options);
  formState.seats = Math.min(range[1], Math.max(range[0], formState.seats || range[0]));
  const custom = formState.customClock || clockPreset(formState.options) === "custom";
  const shown = game.options.filter(
    (opt) => applies(opt, formState.options) && (custom || !PRESET_OPTIONS.has(opt.name)),
  );
  const submit = async (e) => {
    e.preventDefault();
    const fields = { game: game.id, seats: formState.seats, options: formState.options };
    if (formState.private) fields.private = true;
    try {
      const reply = await app.conn.request("create", fields);
      await app.openRoom(reply.room, { code: reply.code || undefined });
    } catch (err) {
      app.message(`Could not create the room: ${err.reason || err.message}`, "error");
    }
  };
  // A choice may show or hide other options (`when`) and change the seats: the form is drawn
  // again. A number changes neither, and typing on from minutes to seconds keeps its place.
  const input = (opt) =>
    optionInput(opt, formState.options[opt.name], (v) => {
      formState.options[opt.name] = v;
      if (opt.choices || opt.kind === "bool") redraw();
    });
  return h(
    "form",
    { class: "panel create", "data-testid": "create-form", on: { submit } },
    h("h2", { text: "Create a room" }),
    row(
      "create-game",
      "game",
      h(
        "select",
        {
          id: "create-game",
          on: {
            change: (e) => {
              formState.game = e.target.value;
              redraw();
            },
          },
        },
        games.map((g) =>
          h("option", {
            value: g.id,
            selected: g.id === game.id,
            text: `${g.title} (${seatsText(g)})`,
          }),
        ),
      ),
      null,
      rulesLink(game.id, `Rules of ${game.title}`),
    ),
    shown.filter((opt) => !CLOCK_OPTIONS.has(opt.name) && opt.name !== SPECTATOR_DELAY).map(input),
    clockRow(formState, game, redraw),
    shown.filter((opt) => CLOCK_OPTIONS.has(opt.name)).map(input),
    shown.filter((opt) => opt.name === SPECTATOR_DELAY).map(input),
    row(
      "create-seats",
      "seats",
      range[0] === range[1]
        ? h("output", { id: "create-seats", text: String(range[0]) })
        : h(
            "select",
            {
              id: "create-seats",
              on: {
                change: (e) => {
                  formState.seats = Number(e.target.value);
                },
              },
            },
            Array.from({ length: range[1] - range[0] + 1 }, (_, i) => range[0] + i).map((n) =>
              h("option", { value: String(n), selected: n === formState.seats, text: String(n) }),
            ),
          ),
    ),
    row(
      "create-private",
      "private",
      h("input", {
        id: "create-private",
        type: "checkbox",
        checked: formState.private,
        on: {
          change: (e) => {
            formState.private = e.target.checked;
          },
        },
      }),
      "not listed; friends join with its code or link",
    ),
    h("button", { type: "submit", class: "primary", "data-testid": "create" }, "Create and sit down"),
  );
}
