// Types of diff.js: view diffs (PROTOCOL.md section 7).

import type { Value } from "./codec.js";

/** One step of a path: a map key or an array index. */
export type PathStep = string | number;
/** One diff operation. */
export type DiffOp = ["set", PathStep[], Value] | ["del", PathStep[]] | ["len", PathStep[], number];

/** A diff that does not apply to the view it was given. */
export class DiffError extends Error {
  constructor(message: string);
  name: "DiffError";
}

/** A deep copy of a decoded value. */
export function copyValue<T>(value: T): T;

/** The view after `ops`, applied in order; the view given may be changed. Throws DiffError. */
export function applyDiff<V = Value>(view: V, ops: readonly DiffOp[]): V;
