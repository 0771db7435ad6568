import { flowLimitNamed } from "../job/flow.ts";
import { climbedRate, halvedRate } from "../job/flow-adaptive.ts";
import { flowKeyFields, limitKeyOf } from "../job/flow-key.ts";
import { errorFields, jobFields } from "../observability/log.ts";
import type { FlowPass, KeyThrottle } from "../services/flow-service.ts";
import { climbKeyRate, coolKey } from "../store/flow-cool-ops.ts";
import { readFlowKeyState } from "../store/flow-key-ops.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { FlowDeps } from "./flow-deps.ts";

/** How long an adapted rate's reason may be, as GET /keys/{kind}/{key} shows it. */
const REASON_CHARS = 200;

/**
 * A partner's back-pressure on one of a job's flow keys (docs/guide/flow-control.md, "Limits that
 * adapt"): the key of the limit the handler named (its kind's first when it named none) cools until
 * `now + delaySeconds`, and an adaptive rate drops to half its rate in force in the same write.
 * reads: the key's state, for its rate in force, only when the limit's rate adapts.
 * result: true when the job has a key under that limit (cooled now, or already cooling longer);
 * false when it has none (the caller cools the queue instead, as for a kind without flow control).
 */
export async function coolJobKey(
  deps: FlowDeps,
  msg: JobMessage,
  now: number,
  throttle: KeyThrottle,
): Promise<boolean> {
  const flow = deps.registry.get(msg.kind)?.flow;
  if (!flow) return false;
  let limit = flowLimitNamed(flow, throttle.limit);
  if (!limit) {
    deps.log.warn("a handler named a flow limit its kind doesn't declare; its first limit cools", {
      ...jobFields(msg),
      limit: throttle.limit,
    });
    limit = flowLimitNamed(flow, undefined);
  }
  const fk = limit && limitKeyOf(msg, limit);
  if (!limit || !fk) return false;
  const until = now + throttle.delaySeconds * 1000;
  const { rate } = limit.settings;
  if (!rate?.adaptive) {
    await coolKey(deps.store, fk, until);
    return true;
  }
  const { adaptedRate } = await readFlowKeyState(deps.store, fk);
  const current = halvedRate(rate, adaptedRate?.current);
  const reason = `${throttle.reason} (job ${msg.id})`.slice(0, REASON_CHARS);
  if (await coolKey(deps.store, fk, until, { current, since: now, reason }))
    deps.log.info("a partner's back-pressure halved a flow key's rate", {
      ...jobFields(msg),
      ...flowKeyFields(fk),
      rate: current,
    });
  return true;
}

/**
 * A run that ended done climbs each adaptive rate its delivery found below its limit (the gate's
 * FlowPass.adapted) by one step: one write per such key, none for a key at its declared rate.
 * Never throws: a climb not written is made by the key's next good run.
 */
export async function climbAfterRun(
  deps: FlowDeps,
  pass: FlowPass | undefined,
  msg: JobMessage,
  now: number,
) {
  const flow = deps.registry.get(msg.kind)?.flow;
  await Promise.all(
    (pass?.adapted ?? []).map(async ({ key, limit: name, current }) => {
      const rate = flowLimitNamed(flow, name)?.settings.rate;
      if (!rate?.adaptive) return;
      await climbKeyRate(deps.store, key, current, climbedRate(rate, current), now).catch((error: unknown) =>
        deps.log.warn("could not climb a flow key's adapted rate", {
          ...jobFields(msg),
          ...flowKeyFields(key),
          ...errorFields(error),
        }),
      );
    }),
  );
}
