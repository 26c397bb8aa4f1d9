// The board: the game's renderer draws the view (or a replay frame) into it, and one delegated
// click handler sends the move of whichever `[data-move]` control was clicked, looked up among
// the moves of the view drawn, so the page only ever sends a move the server offered. Keyboard
// play keeps its place across redraws (see `restoreFocus`).
import { delegate, h, moveKey } from "../ui.js";

/** What the board says while a view has no game to draw. */
function noBoard(v) {
  if (v.status === "waiting") return "Waiting for every seat to be filled and ready.";
  const delay = Number((v.options || {}).spectator_delay || 0);
  if (v.status === "playing" && v.you === null && delay > 0)
    return `Spectators see this game ${delay} step${delay === 1 ? "" : "s"} behind: its board shows here once they have been played.`;
  return "";
}

/** `play(move)`: sends one of the view's moves. */
export function createBoard({ play }) {
  const el = h("div", { class: "board", "data-testid": "board", "aria-live": "off", tabindex: "-1" });
  let drawn = null; // the view the board shows: its moves are the ones the controls stand for

  const stopClicks = delegate(el, "[data-move]", "click", (control) => {
    if (control.disabled || !drawn) return;
    const key = control.dataset.move;
    const move = (drawn.moves || []).find((m) => !m.template && moveKey(m) === key);
    if (move) play(move);
  });

  // Every draw rebuilds the board, so the control that had the focus is remembered by its move
  // (or id) and focused again once it is back and enabled; if that move is gone, the first move
  // offered takes the focus. Focusing anything outside the board forgets it. A focus lost because
  // its control went away (the Ready button once the game starts) lands on the board too: on the
  // first move offered, else on the board itself, until a move is offered. A person who clicked
  // somewhere else keeps their place.
  let focusKey = null;
  let lastFocused = null;
  const keyOf = (node) => node.dataset.move || node.id || null;
  const onFocusIn = (e) => {
    lastFocused = e.target;
    focusKey = el.contains(e.target) && e.target !== el ? keyOf(e.target) : null;
  };
  document.addEventListener("focusin", onFocusIn);
  function restoreFocus() {
    const active = document.activeElement;
    const onBoard = active === el;
    if (!onBoard && el.contains(active)) return;
    const lost = (!active || active === document.body) && !(lastFocused && lastFocused.isConnected);
    if (!focusKey && !lost && !onBoard) return;
    const controls = [...el.querySelectorAll("[data-move], [id]")].filter((node) => !node.disabled);
    const again =
      (focusKey && controls.find((node) => keyOf(node) === focusKey)) ||
      controls.find((node) => node.dataset.move);
    if (again) again.focus();
    else if (lost) el.focus();
  }

  function note(text) {
    drawn = null;
    el.replaceChildren(h("p", { class: "muted", text }));
  }

  function show(v, renderer, ctx, frame) {
    let node;
    try {
      node = renderer.render(v, ctx, frame || {});
    } catch (err) {
      console.error("renderer failed", err);
      node = h("pre", { class: "raw" }, JSON.stringify(v.state, null, 1));
    }
    drawn = v;
    el.replaceChildren(node);
    el.dataset.frame = frame ? "animating" : "final";
    restoreFocus();
  }

  return {
    el,
    /** Draws `v` with `renderer` (null while it loads); `frame` is a replay frame, if one. */
    draw(v, renderer, ctx, frame) {
      if (!v || !renderer) note("loading…");
      else if (!v.state) note(noBoard(v));
      else show(v, renderer, ctx, frame);
    },
    /** The move keys the board offers right now. */
    offered: () => [...el.querySelectorAll("[data-move]")].map((node) => node.dataset.move),
    stop() {
      stopClicks();
      document.removeEventListener("focusin", onFocusIn);
    },
  };
}
