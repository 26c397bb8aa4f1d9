// Room options as people read them, from the server's `games` list alone (PROTOCOL.md section 4):
// each option's `label`, its `unit` (`"ms"`: a duration, shown in days, hours, minutes and
// seconds), only where it applies (its `when`), and what particular values mean (its
// `value_labels`); plus the clock presets the create form offers. No DOM here: the node tests
// import it as it is.

/** The clock options every game accepts (PROTOCOL.md section 6), summed up in one phrase. */
export const CLOCK_OPTIONS = new Set(["clock", "clock_ms", "increment_ms", "on_timeout"]);

/** The spectator delay every room has (PROTOCOL.md section 6): said only when there is one. */
export const SPECTATOR_DELAY = "spectator_delay";

/** The clock presets of the create form: the clock options each one sets. */
export const CLOCK_PRESETS = [
  { id: "none", label: "no clock", options: { clock: "none" } },
  {
    id: "blitz",
    label: "blitz: 3 min + 2 s a move",
    options: { clock: "fischer", clock_ms: 180_000, increment_ms: 2_000 },
  },
  {
    id: "rapid",
    label: "rapid: 10 min + 5 s a move",
    options: { clock: "fischer", clock_ms: 600_000, increment_ms: 5_000 },
  },
  { id: "day", label: "a day per move", options: { clock: "turn", clock_ms: 86_400_000 } },
];

/** The preset that `options` amount to, or "custom"; a setting the clock's kind does not use is
 * not compared (a room without a clock is "none" whatever its `clock_ms`). */
export function clockPreset(options) {
  const kind = options.clock || "none";
  const same = (preset, name) => num(options[name]) === preset.options[name];
  const found = CLOCK_PRESETS.find(
    (p) =>
      p.options.clock === kind &&
      (kind === "none" || (same(p, "clock_ms") && (kind !== "fischer" || same(p, "increment_ms")))),
  );
  return found ? found.id : "custom";
}

function describedOptions(game) {
  return new Map(((game && game.options) || []).map((o) => [o.name, o]));
}

function num(value) {
  if (value !== null && typeof value === "object" && "valueOf" in value) return Number(value.valueOf());
  return value;
}

/** Whether option `opt` (a `games` entry's option) changes anything under the chosen `options`:
 * every option its `when` names holds one of the listed choices (a missing one: its default is
 * looked up by the caller, so pass the options with defaults filled in). */
export function applies(opt, options) {
  return Object.entries(opt.when || {}).every(([name, choices]) =>
    choices.map(String).includes(String(options[name])),
  );
}

/** A duration in milliseconds as people say it: "3 min", "1 min 30 s", "2.5 s", "1 day", "0 s". */
export function formatDuration(ms) {
  let left = Math.max(0, Number(num(ms)) || 0);
  const parts = [];
  for (const [size, unit] of [
    [86_400_000, "day"],
    [3_600_000, "h"],
    [60_000, "min"],
  ]) {
    const n = Math.floor(left / size);
    if (n) parts.push(unit === "day" ? `${n} day${n === 1 ? "" : "s"}` : `${n} ${unit}`);
    left -= n * size;
  }
  if (left || !parts.length) parts.push(`${Number((left / 1000).toFixed(3))} s`);
  return parts.join(" ");
}

/** One option's value as people read it: its value label, a duration, a unit, yes/no. */
export function valueText(opt, value) {
  const v = num(value);
  const labels = opt.value_labels || {};
  if (String(v) in labels) return labels[String(v)];
  if (opt.unit === "ms") return formatDuration(v);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number" && !Number.isInteger(v))
    return `${v.toFixed(2)}${opt.unit ? ` ${opt.unit}` : ""}`;
  return `${v}${opt.unit ? ` ${opt.unit}` : ""}`;
}

/** The clock of `options` in one phrase: "no clock", "blitz: 3 min + 2 s a move",
 * "1 min per turn", "5 min + 3 s a move". */
export function clockText(options) {
  const kind = options.clock || "none";
  if (kind === "none") return "no clock";
  const preset = CLOCK_PRESETS.find((p) => p.id === clockPreset(options));
  if (preset) return preset.label;
  const time = formatDuration(options.clock_ms);
  return kind === "turn" ? `${time} per turn` : `${time} + ${formatDuration(options.increment_ms)} a move`;
}

/** A room's options as the lobby and the room's header list them: the game's own options that
 * apply, "label: value" each, then the clock in one phrase and, with a clock, what its running out
 * does, then a spectator delay if the room has one. `game` is the room's game from the `games` list (without it, names and raw values). */
export function optionsText(options, game) {
  const opts = options || {};
  const byName = describedOptions(game);
  const parts = [];
  for (const [name, value] of Object.entries(opts)) {
    if (CLOCK_OPTIONS.has(name) || name === SPECTATOR_DELAY) continue;
    const opt = byName.get(name);
    if (!opt) parts.push(`${name}: ${num(value)}`);
    else if (applies(opt, opts)) parts.push(`${opt.label || name}: ${valueText(opt, value)}`);
  }
  if ("clock" in opts) {
    parts.push(clockText(opts));
    const timeout = byName.get("on_timeout");
    if (opts.clock !== "none" && "on_timeout" in opts)
      parts.push(`on timeout: ${timeout ? valueText(timeout, opts.on_timeout) : opts.on_timeout}`);
  }
  const delay = Number(num(opts[SPECTATOR_DELAY]) || 0);
  if (delay > 0) parts.push(`spectators see the game ${delay} step${delay === 1 ? "" : "s"} behind`);
  return parts.join(" · ");
}

/** A game's seat counts as people read them: "2–6", or "2" when it takes one count. */
export function seatsText(game) {
  return game.min_seats === game.max_seats ? `${game.min_seats}` : `${game.min_seats}–${game.max_seats}`;
}
