import type { AdaptedRate } from "../job/flow-adaptive.ts";
import type { FlowKey } from "../job/flow-key.ts";
import { attributeBefore, attributeEquals, attributeMissing } from "./conditions.ts";
import { conditionalUpdate, type StoreContext, wonRace } from "./context.ts";
import { or, Update } from "./expression.ts";
import { flowKeyStateKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/**
 * A flow key's cool-down and, for an adaptive rate, its rate in force (docs/architecture.md §20),
 * both kept on the key's state item beside its places (lib/store/flow-key-ops.ts). The rate in force
 * (`adaptedRate`) is absent while the key runs at its declared rate: a key that never adapts costs
 * nothing more.
 */

/**
 * coolKey — a throttle raised for a key: its jobs wait until `until`, other keys run on. With
 * `adapted` (a throttle on an adaptive rate), the key's rate in force drops to it in the same write.
 * condition: the key isn't already cooling past `until`: a later cool-down is never shortened by an
 *   earlier one, and throttles met at once (runs that shared a partner's 429) halve the rate once.
 * result: true when this write cooled the key.
 */
export function coolKey(
  ctx: StoreContext,
  fk: FlowKey,
  until: number,
  adapted?: AdaptedRate,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "coolKey",
      flowKeyStateKey(fk),
      (e) => {
        const update = stampFormat(
          new Update(e).set("coolUntil", until).setIfAbsent("holders", {}),
          "flowKey",
        );
        if (adapted) update.set("adaptedRate", adapted);
        return { update, condition: or(attributeMissing("coolUntil"), attributeBefore("coolUntil", until)) };
      },
      { readCurrent: false },
    ),
  );
}

/**
 * climbKeyRate — a run of an adapted key ended done: its rate in force climbs to `to`, or back to the
 * declared rate (`to` undefined: the attribute goes).
 * input: the key, the rate in force the run's delivery read (`from`), the next one, now.
 * condition: the rate in force is still `from`: of runs that end together, one climbs (one step per
 *   round of runs, as AIMD's additive increase), and none undoes a throttle that landed meanwhile.
 * result: true when it climbed.
 */
export function climbKeyRate(
  ctx: StoreContext,
  fk: FlowKey,
  from: number,
  to: number | undefined,
  now: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "climbKeyRate",
      flowKeyStateKey(fk),
      (e) => {
        const update = new Update(e);
        if (to === undefined) update.remove("adaptedRate");
        else update.set("adaptedRate.current", to).set("adaptedRate.since", now);
        return { update, condition: attributeEquals("adaptedRate.current", from) };
      },
      { readCurrent: false },
    ),
  );
}
