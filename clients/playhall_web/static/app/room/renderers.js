// The game renderers, found the way the server finds its games: the renderer of game `id` is the
// default export of app/games/<id>.js, loaded by `import()` the first time the game is seen, so a
// new game adds a file and no line here. A game without one (or whose module fails to load) is
// drawn by OUTLINE: its state as text and its moves as buttons, playable before it has a board.
import { h, moveButton } from "../ui.js";

/** For a game the page has no renderer for: its state as text and its moves as buttons. */
export const OUTLINE = {
  render: (view, ctx) =>
    h(
      "div",
      {},
      h("p", {
        class: "muted small",
        "data-testid": "outline",
        text: "This page has no board for this game yet: its moves and its state as text.",
      }),
      h(
        "div",
        { class: "actions" },
        (view.moves || []).filter((m) => !m.template).map((m) => moveButton(ctx, m, JSON.stringify(m))),
      ),
      h("pre", { class: "raw" }, JSON.stringify(view.state, null, 1)),
    ),
  describe: (ev) => JSON.stringify(ev),
};

/** A game id as the server names its game packages; nothing else becomes a module path. */
const GAME_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

const loading = new Map(); // game id -> Promise of its renderer
const loaded = new Map(); // game id -> its renderer, once the promise has settled

function usable(module, id) {
  const renderer = module && module.default;
  if (renderer && typeof renderer.render === "function" && typeof renderer.describe === "function") {
    return renderer;
  }
  console.error(`app/games/${id}.js has no default export with render and describe`);
  return OUTLINE;
}

/** The renderer of game `id` (a promise; loaded once, then shared). */
export function loadRenderer(id) {
  if (!loading.has(id)) {
    const found = GAME_ID.test(id)
      ? import(`../games/${id}.js`).then(
          (module) => usable(module, id),
          () => OUTLINE, // no file for this game: the browser has already logged the 404
        )
      : Promise.resolve(OUTLINE);
    loading.set(
      id,
      found.then((renderer) => {
        loaded.set(id, renderer);
        return renderer;
      }),
    );
  }
  return loading.get(id);
}

/** The renderer of game `id` if it has been loaded, else null (and it starts loading). */
export function loadedRenderer(id) {
  if (!loaded.has(id)) loadRenderer(id);
  return loaded.get(id) || null;
}
