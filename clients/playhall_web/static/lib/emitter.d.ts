// Types of emitter.js: a small event emitter.

/** Events by name, each with its payload's type. */
export type EventMap = { [name: string]: unknown };

export class Emitter<Events extends EventMap = EventMap> {
  /** Call `listener(payload)` on every `name` event; returns a function that stops it. */
  on<K extends keyof Events & string>(name: K, listener: (payload: Events[K]) => void): () => void;
  off<K extends keyof Events & string>(name: K, listener: (payload: Events[K]) => void): void;
  /** Like `on` for the next event only. */
  once<K extends keyof Events & string>(name: K, listener: (payload: Events[K]) => void): () => void;
  emit<K extends keyof Events & string>(name: K, payload: Events[K]): void;
}
