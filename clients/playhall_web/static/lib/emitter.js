// A small event emitter: on/off/once/emit. A listener that throws is reported (reportError in a
// browser, console.error elsewhere) and never stops the emitter or the other listeners.

function report(err) {
  if (typeof globalThis.reportError === "function") globalThis.reportError(err);
  else console.error(err);
}

export class Emitter {
  #listeners = new Map();

  /** Call `listener(payload)` on every `name` event; returns a function that stops it. */
  on(name, listener) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(listener);
    return () => this.off(name, listener);
  }

  off(name, listener) {
    this.#listeners.get(name)?.delete(listener);
  }

  /** Like `on` for the next event only. */
  once(name, listener) {
    const stop = this.on(name, (payload) => {
      stop();
      listener(payload);
    });
    return stop;
  }

  emit(name, payload) {
    const listeners = this.#listeners.get(name);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(payload);
      } catch (err) {
        report(err);
      }
    }
  }
}
