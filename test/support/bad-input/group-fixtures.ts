import { waitFor } from "../wait.ts";

/**
 * The groups the group rows of the bad-input suite count on (group-cases.ts and the files it
 * gathers), made before the rows run, and the marks that let the suite check a refused request
 * wrote nothing.
 */

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Json = any;
export type JsonCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Json }>;

/** Group ids the rows use. The suite's stack starts empty, so fixed ids are fresh on every run. */
export const GROUPS = {
  /** Ran to succeeded before the rows: can't be cancelled. */
  succeeded: "bi-succeeded",
  /** Sealed, its one child delayed an hour: stays sealed for the whole suite. */
  sealed: "bi-sealed",
  /** Open: takes the valid additions. */
  open: "bi-open",
  /** Open, and only ever sent refused additions: must stay empty. */
  untouched: "bi-untouched",
  /** Open, sealed twice by the rows. */
  sealTwice: "bi-seal-twice",
  /** Open, sealed by Invoke twice. */
  sealInvoke: "bi-seal-invoke",
  /** Open, cancelled twice by the rows. */
  cancelTwice: "bi-cancel-twice",
  /** Created by the rows (201), then again (200 duplicate), then with another body (409). */
  duplicate: "bi-duplicate",
  /** Never exists: a well-formed id no group has. */
  missing: "bi-no-such-group",
} as const;

/** Requests refused whole carry this in every child: afterwards no item in the table may hold it. */
export const REFUSED_MARKER = "bad-input refused child";
/** Ids of creates that were refused: no item of theirs may exist. */
export const REFUSED_GROUP_IDS = [
  "bi-refused-mixed",
  "bi-refused-unique",
  "bi-refused-1001",
  "bi-refused-on-complete",
  "bi-refused-invoke",
] as const;

export const echo = (payload: unknown = 1) => ({ kind: "echo", payload });
export const marked = (i: number) => echo({ tag: REFUSED_MARKER, i });
/** partner-call wants `{ orderId: string }`: this one's issue is at `payload.orderId`. */
export const badChild = { kind: "partner-call", payload: { orderId: 5, tag: REFUSED_MARKER } };
export const onComplete = { kind: "echo" };

/** Creates the groups the rows count on; the succeeded one runs its child and completion job first. */
export async function prepareGroupFixtures(call: JsonCall): Promise<void> {
  const create = async (body: object) => {
    const r = await call("POST", "/groups", body);
    if (r.status !== 201) throw new Error(`fixture group not created: ${r.status} ${JSON.stringify(r.body)}`);
  };
  const open = { children: [], onComplete, sealed: false };
  await Promise.all([
    create({ id: GROUPS.succeeded, children: [echo("fixture")], onComplete }),
    create({ id: GROUPS.sealed, children: [{ kind: "echo", delaySeconds: 3600 }], onComplete }),
    create({ id: GROUPS.open, ...open }),
    create({ id: GROUPS.untouched, ...open }),
    create({ id: GROUPS.sealTwice, ...open }),
    create({ id: GROUPS.sealInvoke, ...open }),
    create({ id: GROUPS.cancelTwice, ...open }),
  ]);
  await waitFor(
    async () => (await call("GET", `/groups/${GROUPS.succeeded}`)).body.status === "succeeded",
    "the fixture group to succeed",
  );
}
