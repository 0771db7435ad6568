import type { BadExpect } from "./case.ts";

/** The HTTP answers the rows expect, by name. (An Invoke row answers 200 even when refused: its own.) */
export const ok: BadExpect = { status: 200 };
export const created: BadExpect = { status: 201 };
export const invalid: BadExpect = { status: 400, code: "validation_error" };
export const unknownKind: BadExpect = { status: 400, code: "unknown_kind" };
export const notFound: BadExpect = { status: 404, code: "not_found" };
export const conflict: BadExpect = { status: 409, code: "conflict" };
/** A lone surrogate in a path can't be decoded as UTF-8: a 400 or a 404, never a 500. */
export const missingOrInvalid: BadExpect = { status: [400, 404] };
