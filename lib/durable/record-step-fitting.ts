import { DurableMisuseError, ItemTooLarge } from "../errors.ts";
import type { StoreContext } from "../store/context.ts";
import { type RecordStepResult, recordStep } from "../store/step-ops.ts";
import type { StepRecord } from "../store/step-record.ts";

/**
 * A step's record, written under the run's fence (recordStep). A write DynamoDB refuses for the item's
 * size would be refused on every attempt: a DurableMisuseError naming the step ends the job dead now,
 * instead of a retry that meets the same refusal (and whose finalize may not fit either: that one
 * ends the job through endOversized).
 */
export async function recordStepFitting(
  store: StoreContext,
  jobId: string,
  fence: string,
  name: string,
  record: StepRecord,
  mapExists: boolean,
  version?: string,
): Promise<RecordStepResult> {
  try {
    return await recordStep(store, jobId, fence, name, record, mapExists, version);
  } catch (err) {
    if (err instanceof ItemTooLarge)
      throw new DurableMisuseError(`step "${name}" was not recorded: ${err.message}`);
    throw err;
  }
}
