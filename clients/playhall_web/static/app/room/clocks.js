// The room's clocks: each seat's time left (mm:ss beside the seat) from the view's `clock`, the
// countdowns to an absent player's stand-in (`[data-stand-in-at]`, made by seats.js), and the
// board's countdowns to a server deadline (`.secs[data-deadline]`, made by ui.js's
// `countdown`), all counted in the server's time.

/** A seat's time left in seconds from the view's `clock`: the server measured `remaining_ms`
 * at its time `at`; a running clock has gone on since (`now` is the server's time now). */
export function secondsLeft(clock, seat, now) {
  if (!clock || !clock.remaining_ms) return null;
  const ms = Number(clock.remaining_ms[seat]);
  const running = (clock.running || []).includes(seat);
  return Math.max(0, ms / 1000 - (running && clock.at !== null ? now - Number(clock.at) : 0));
}

export function mmss(seconds) {
  const s = Math.ceil(seconds);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** Fills a seat's clock slot: mm:ss, with a text cue for a running clock and for low time. */
function showClock(el, clock, now) {
  const seat = Number(el.dataset.clock);
  const left = secondsLeft(clock, seat, now);
  if (left === null) {
    el.replaceChildren();
    return;
  }
  const running = (clock.running || []).includes(seat);
  const low = running && left <= Math.min(10, Number(clock.clock_ms) / 4000);
  el.className = `clock${running ? " running" : ""}${low ? " low" : ""}`;
  el.dataset.seconds = left.toFixed(1);
  el.title = running ? "this clock is running" : "this clock is stopped";
  el.textContent = `${low ? "⚠ low " : running ? "⏳ " : ""}${mmss(left)}`;
}

/** Every seat clock slot (`[data-clock]`) under `root`, from `clock` at server time `now`. */
export function showClocks(root, clock, now) {
  for (const el of root.querySelectorAll(".clock[data-clock]")) showClock(el, clock, now);
}

/** Every countdown to an absent player's stand-in under `root`, at server time `now`. */
export function showStandIns(root, now) {
  for (const el of root.querySelectorAll("[data-stand-in-at]")) {
    const left = Number(el.dataset.standInAt) - now;
    el.textContent = left > 0 ? `away: bot plays for them in ${mmss(left)}` : "away: bot plays for them now";
  }
}

/** Every countdown under `root`, at server time `now`. */
export function showCountdowns(root, now) {
  for (const el of root.querySelectorAll(".secs[data-deadline]")) {
    const left = Math.max(0, Number(el.dataset.deadline) - now);
    el.textContent = `${left.toFixed(1)} s`;
  }
}
