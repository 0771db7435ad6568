import { describe, expectTypeOf, it } from "vitest";
import type { BusiestKeys as ClientBusiestKeys, BusyKey as ClientBusyKey } from "../../client/index.ts";
import type {
  BusiestKeys as ConsoleBusiestKeys,
  BusyKey as ConsoleBusyKey,
} from "../../console/api-shapes.d.ts";
import type { BusiestKeys, BusyKey, FlowKeyView } from "../../lib/job/flow-views.ts";
import type { FlowService } from "../../lib/services/flow-service.ts";

// Checked by `npm run typecheck` (expectTypeOf is a compile-time assertion): GET /keys' answer is
// declared once, in lib/job/flow-views.ts, and what the engine answers is what the client and the
// console read.
describe("a busy flow key is declared once", () => {
  it("the engine's answer, the client's and the console's are one type", () => {
    expectTypeOf<Awaited<ReturnType<FlowService["busiestKeys"]>>>().toEqualTypeOf<BusiestKeys>();
    expectTypeOf<Awaited<ReturnType<FlowService["keyView"]>>>().toEqualTypeOf<FlowKeyView>();
    expectTypeOf<ClientBusyKey>().toEqualTypeOf<BusyKey>();
    expectTypeOf<ClientBusiestKeys>().toEqualTypeOf<BusiestKeys>();
    expectTypeOf<ConsoleBusyKey>().toEqualTypeOf<BusyKey>();
    expectTypeOf<ConsoleBusiestKeys>().toEqualTypeOf<BusiestKeys>();
  });
});
