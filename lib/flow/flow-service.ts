import { flowLimitsOf } from "../job/flow.ts";
import { limitKeyOf } from "../job/flow-key.ts";
import { errorFields, jobFields } from "../observability/log.ts";
import { TatMemory } from "../rate-limit/tat-memory.ts";
import type {
  FlowPass,
  FlowService,
  KeyThrottle,
  ParkableJob,
  RunEndForFlow,
} from "../services/flow-service.ts";
import { freeKeyPlaces } from "../store/flow-key-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";
import { busiestKeys } from "./busiest-keys.ts";
import { climbAfterRun, coolJobKey } from "./flow-adapt.ts";
import type { FlowDeps, FlowRoomDeps } from "./flow-deps.ts";
import { passFlowGate } from "./flow-gate.ts";
import { healParkedKeys } from "./flow-heal.ts";
import { lookAfterParkingAll, parkIfKeyFull } from "./flow-park.ts";
import { handPlaceOn, leaveKeyPlace } from "./hand-over.ts";
import { HandOverTurns } from "./hand-over-turns.ts";
import { flowKeyView } from "./key-view.ts";

/**
 * Flow control per key (docs/architecture.md §20): the engine's one door to it. The producer, the
 * delivery pipeline, the reaper and the API each call it once at their stage; nothing else in lib/
 * imports a file of lib/flow/.
 */
export class Flow implements FlowService {
  private readonly deps: FlowRoomDeps;
  /** The rates' buckets' last tats this process saw: a start's reservation tries the right form first. */
  private readonly tats = new TatMemory();

  constructor(deps: FlowDeps) {
    this.deps = { ...deps, handOvers: new HandOverTurns() };
  }

  parkIfKeyFull(planned: readonly ParkableJob[]) {
    return parkIfKeyFull(this.deps, planned);
  }

  lookAfterParkingAll(parked: readonly ParkableJob[], sent: readonly ParkableJob[]) {
    return lookAfterParkingAll(this.deps, parked, sent);
  }

  gate(msg: JobMessage, hide: (seconds: number) => Promise<void>) {
    return passFlowGate(this.deps, msg, hide, this.tats);
  }

  async releasePlace({ places }: FlowPass, jobId: string) {
    await Promise.all(
      (places ?? []).map((place) => freeKeyPlaces(this.deps.store, place.key, { [jobId]: place.since })),
    );
  }

  leavePlace(job: JobItem) {
    return leaveKeyPlace(this.deps, job);
  }

  async leavePlacesToWait(msg: JobMessage) {
    await Promise.all(
      flowLimitsOf(this.deps.registry.get(msg.kind)?.flow).map((limit) => {
        const fk = limitKeyOf(msg, limit);
        return fk === undefined ? undefined : handPlaceOn(this.deps, fk, limit, msg.id, true);
      }),
    );
  }

  /** A flow key cools down as a queue would, alone: the job's message is sent afresh with the delay. */
  async coolKey(msg: JobMessage, now: number, throttle: KeyThrottle) {
    if (!(await coolJobKey(this.deps, msg, now, throttle))) return false;
    await this.deps.transport.send({ message: msg, delaySeconds: throttle.delaySeconds });
    return true;
  }

  async learnFromRun(pass: FlowPass | undefined, msg: JobMessage, now: number, end: RunEndForFlow) {
    try {
      if (end.retryAfter) await coolJobKey(this.deps, msg, now, end.retryAfter);
      if (end.done) await climbAfterRun(this.deps, pass, msg, now);
    } catch (error) {
      this.deps.log.warn("could not cool a flow key after a RetryAfterError", {
        ...jobFields(msg),
        ...errorFields(error),
      });
    }
  }

  heal(budgetMs?: number) {
    return healParkedKeys(this.deps, budgetMs);
  }

  keyView(kind: string, key: string, limit?: string) {
    return flowKeyView(this.deps, kind, key, limit);
  }

  busiestKeys(queue: string, limit: number) {
    return busiestKeys(this.deps, queue, limit);
  }
}
