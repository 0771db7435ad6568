import { describe, expect, it, vi } from "vitest";
import { flowKey } from "../../lib/job/flow-key.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import { grantKeyPlace, readFlowKeyState, takeKeyPlace } from "../../lib/store/flow-key-ops.ts";
import { onEveryBackend } from "../support/store-conformance.ts";

/**
 * Store conformance, a flow key's places (docs/architecture.md §20): what a place costs, whether
 * the key's state item exists yet or not. Both DynamoDB emulators, a table per test.
 */

/** The commands `run` sent through the store's document client, refused ones among them. */
async function commandsDuring(store: StoreContext, run: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const send = store.doc.send.bind(store.doc);
  const spy = vi.spyOn(store.doc, "send").mockImplementation(((command: Parameters<typeof send>[0]) => {
    sent.push(command.constructor.name);
    return send(command);
  }) as never);
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return sent;
}

onEveryBackend(({ setup }) => {
  describe("flow key places", () => {
    it("a key's first place creates its state; then a place taken or granted is one write, and a full key refuses", async () => {
      const { store, clock } = await setup();
      const fk = flowKey("t-places", "acme");
      // Never used: the update is refused (no item: read back on an emulator), then the put.
      const first = await commandsDuring(store, async () =>
        expect(await takeKeyPlace(store, fk, "j1", 2, clock.now())).toBe(true),
      );
      expect(first.filter((c) => c !== "GetCommand")).toEqual(["UpdateCommand", "PutCommand"]);
      // Used: one write each, taken or granted.
      expect(
        await commandsDuring(store, async () =>
          expect(await grantKeyPlace(store, fk, "j2", 2, clock.now())).toBe(true),
        ),
      ).toEqual(["UpdateCommand"]);
      expect(Object.keys((await readFlowKeyState(store, fk)).holders).sort()).toEqual(["j1", "j2"]);
      // Full: refused, nothing written; a job that holds one is still granted it by a take.
      expect(await takeKeyPlace(store, fk, "j3", 2, clock.now())).toBe(false);
      expect(await grantKeyPlace(store, fk, "j3", 2, clock.now())).toBe(false);
      expect(await takeKeyPlace(store, fk, "j1", 2, clock.now())).toBe(true);
      expect(Object.keys((await readFlowKeyState(store, fk)).holders).sort()).toEqual(["j1", "j2"]);
    });

    it("a never-used key's place can be granted, as taken", async () => {
      const { store, clock } = await setup();
      const fk = flowKey("t-places", "fresh");
      expect(await grantKeyPlace(store, fk, "j1", 1, clock.now())).toBe(true);
      expect(await grantKeyPlace(store, fk, "j2", 1, clock.now())).toBe(false);
      expect(Object.keys((await readFlowKeyState(store, fk)).holders)).toEqual(["j1"]);
    });
  });
});
