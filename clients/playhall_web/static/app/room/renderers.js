// The game renderers, found the way the server finds its games: the renderer of game `id` is the
// default export of app/games/<id>.js, loaded by `import()` the first time the game is seen, so a
// new game adds a file and no line here (a game plugin's own renderer is served at that path by
// the server). A game without one (or whose module fails to load) is drawn by GENERIC
// (./generic.js): from the view and its moves alone, playable before it has a board.
import { GENERIC } from "./generic.js";

export { GENERIC };

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
  return GENERIC;
}

/** The renderer of game `id` (a promise; loaded once, then shared). */
export function loadRenderer(id) {
  if (!loading.has(id)) {
    const found = GAME_ID.test(id)
      ? import(`../games/${id}.js`).then(
          (module) => usable(module, id),
          () => GENERIC, // no file for this game: the browser has already logged the 404
        )
      : Promise.resolve(GENERIC);
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
