import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type GroupStatus,
  type GroupTransition,
  groupStatuses,
  isGroupTransitionLegal,
} from "../../lib/job/group-status.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import {
  cancelGroup,
  cancelGroupTransitions,
  expireGroup,
  expireGroupTransitions,
} from "../../lib/store/group-end-ops.ts";
import type { GroupItem, SliceItem } from "../../lib/store/group-item.ts";
import {
  beginCompletion,
  beginCompletionTransitions,
  failGroup,
  failGroupTransitions,
  finishGroup,
  finishGroupTransitions,
  markSliceDone,
  putGroup,
  putGroupTransitions,
  sealGroup,
  sealGroupTransitions,
} from "../../lib/store/group-ops.ts";
import { getGroup, listSlices } from "../../lib/store/group-read-ops.ts";
import { groupKey, sliceKey } from "../../lib/store/keys.ts";
import { putSlice, recordChild } from "../../lib/store/slice-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";

/**
 * The group lifecycle as the store enforces it (docs/architecture.md §15): each group write declares
 * its edges; this suite holds the declarations against the state map, then runs each write from every
 * start (no item, and each status) and checks it takes only declared edges, and each of them. It runs
 * on both DynamoDB emulators, since completion rests on set semantics (ADD, contains, size).
 */
const starts: readonly (GroupStatus | "missing")[] = ["missing", ...groupStatuses];
type Operation = (store: StoreContext, item: GroupItem) => Promise<unknown>;

let next = 0;
function groupIn(clock: ManualClock, status: GroupStatus): GroupItem {
  const id = `g${next++}`;
  return {
    ...groupKey(id),
    id,
    status,
    failure: "terminate",
    onComplete: { kind: "echo", payload: "null" },
    slices: 1,
    size: 1,
    doneSlices: new Set([0]),
    createdAt: clock.now(),
    sealBy: clock.now() - 1,
    completionJobId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
  };
}

const plan = (s: StoreContext) => ({
  slices: 1,
  completionJobId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
  outcome: "succeeded" as const,
  counts: { done: 1, dead: 0, cancelled: 0 },
  checkAt: s.clock.now() + 60_000,
});

const operations: Record<string, { declared: readonly GroupTransition[]; run: Operation[] }> = {
  putGroup: { declared: putGroupTransitions, run: [(s, g) => putGroup(s, g)] },
  sealGroup: { declared: sealGroupTransitions, run: [(s, g) => sealGroup(s, g.id, s.clock.now())] },
  expireGroup: { declared: expireGroupTransitions, run: [(s, g) => expireGroup(s, g.id, s.clock.now())] },
  failGroup: { declared: failGroupTransitions, run: [(s, g) => failGroup(s, g.id, { id: "c", error: "x" })] },
  beginCompletion: {
    declared: beginCompletionTransitions,
    run: [(s, g) => beginCompletion(s, g.id, plan(s))],
  },
  finishGroup: {
    declared: finishGroupTransitions,
    run: [(s, g) => finishGroup(s, g.id, "succeeded", 1), (s, g) => finishGroup(s, g.id, "failed", 1)],
  },
  cancelGroup: { declared: cancelGroupTransitions, run: [(s, g) => cancelGroup(s, g.id, s.clock.now())] },
};
const key = ([from, to]: GroupTransition) => `${from}→${to}`;

describe("group transitions: declarations", () => {
  it.each(Object.entries(operations))(
    "%s declares only edges of the group state map",
    (_name, { declared }) => {
      for (const edge of declared) expect(isGroupTransitionLegal(edge), key(edge)).toBe(true);
    },
  );
});

describe.each(dynamoBackends)("group store operations on $name", (factory) => {
  const client = clientOn(factory);
  let store: StoreContext;
  const clock = new ManualClock();
  beforeAll(async () => {
    store = createStoreContext(client(), await freshTable(client(), "groups"), clock);
  });

  it.each(Object.entries(operations))("%s takes only the edges it declares", async (name, op) => {
    const taken = new Set<string>();
    for (const from of starts) {
      for (const run of op.run) {
        const item = groupIn(clock, from === "missing" ? "open" : from);
        if (from !== "missing") await store.doc.send(new PutCommand({ TableName: store.table, Item: item }));
        await run(store, item).catch(() => undefined);
        const after = (await getGroup(store, item.id))?.status;
        if (after === undefined || (from !== "missing" && after === from)) continue;
        const edge: GroupTransition = [from, after];
        expect(op.declared.map(key), `${name} took ${key(edge)}`).toContain(key(edge));
        taken.add(key(edge));
      }
    }
    // putGroup writes whatever status it is given: its sealed edge is taken by a sealed create.
    const expected = op.declared.map(key).filter((k) => !(name === "putGroup" && k === "missing→sealed"));
    expect([...taken].sort()).toEqual(expected.sort());
  });

  // A group from before slices spread keeps them in its own partition; a newer one spreads them.
  it.each([
    { layout: "in the group's own partition", n: undefined },
    { layout: "spread over 3 partitions", n: 3 },
  ])(
    "a child is recorded once, whatever repeats ($layout): a second record of any status changes nothing",
    async ({ n }) => {
      const g = `r-${n ?? "own"}`;
      const member = (s: number, p: number) => ({ g, s, p, ...(n === undefined ? {} : { n }) });
      const slice: SliceItem = {
        ...sliceKey(g, 5, n),
        groupId: g,
        slice: 5,
        ids: ["a", "b"],
        createdAt: 0,
        expiresAt: 1,
      };
      expect(slice.pk).toBe(n === undefined ? `group#${g}` : `gslice#${g}#2`);
      expect(await putSlice(store, slice)).toBe(true);
      expect(await putSlice(store, { ...slice, ids: ["other"] })).toBe(false);
      const first = await recordChild(store, member(5, 1), "done");
      expect(first.recorded).toBe(true);
      for (const status of ["done", "dead", "cancelled"] as const) {
        const again = await recordChild(store, member(5, 1), status);
        expect(again).toMatchObject({ recorded: false, slice: { done: new Set([1]) } });
        expect(again.slice?.dead).toBeUndefined();
      }
      expect((await recordChild(store, member(5, 0), "dead")).slice).toMatchObject({
        done: new Set([1]),
        dead: new Set([0]),
      });
      expect(await recordChild(store, member(9, 0), "done")).toEqual({
        recorded: false,
        slice: undefined,
      });
      // Read back through the group's layout: the one slice, wherever its partition is.
      const group = { id: g, slices: 10, ...(n === undefined ? {} : { slicePartitions: n }) };
      const read = await listSlices(store, group, 0, 100);
      expect(read.slices.map((x) => x.slice)).toEqual([5]);
    },
  );

  it("completion begins once: only when sealed and every slice is done, and only for one caller", async () => {
    const group: GroupItem = { ...groupIn(clock, "sealed"), slices: 2, doneSlices: undefined };
    await putGroup(store, group);
    expect(await beginCompletion(store, group.id, { ...plan(store), slices: 2 })).toBeUndefined();
    await markSliceDone(store, group.id, 0, 0);
    await markSliceDone(store, group.id, 0, 0); // a retried write adds nothing
    expect(await beginCompletion(store, group.id, { ...plan(store), slices: 2 })).toBeUndefined();
    await markSliceDone(store, group.id, 1, 0);
    const racers = await Promise.all(
      Array.from({ length: 5 }, () => beginCompletion(store, group.id, { ...plan(store), slices: 2 })),
    );
    expect(racers.filter(Boolean)).toHaveLength(1);
    const empty: GroupItem = { ...groupIn(clock, "sealed"), slices: 0, size: 0, doneSlices: undefined };
    await putGroup(store, empty);
    expect((await beginCompletion(store, empty.id, { ...plan(store), slices: 0 }))?.status).toBe(
      "completing",
    );
  });
});
