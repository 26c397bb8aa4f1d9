// A helper of the node scripts that drive the JavaScript library against a real server
// (live_game.mjs, private_spectator.mjs): waiting for a connection's room views to pass a test.

/** Resolves once `predicate()` holds, checked now and after every `view` event of `conn`;
 * rejects after `ms` milliseconds, naming `what` was awaited. */
export function untilView(conn, predicate, what, ms = 10000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    const check = () => {
      if (predicate()) {
        clearTimeout(timer);
        stop();
        resolve();
      }
    };
    const stop = conn.on("view", check);
    check();
  });
}
