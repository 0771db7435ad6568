import { createHash } from "node:crypto";
import { encodeTime } from "ulid";
import { ClientError } from "../errors.ts";
import { GroupId } from "../job/group-schemas.ts";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * A ULID whose random half is a hash: the same group, membership and time always give the same id. A
 * retried create (or a repair) writes the same jobs again instead of new ones, and every write of
 * a job is conditional on its item, so nothing runs twice (docs/architecture.md §15).
 */
function derivedUlid(time: number, seed: string): string {
  const digest = createHash("sha256").update(seed).digest();
  let random = "";
  for (let i = 0; i < 16; i++) random += CROCKFORD[(digest[i] ?? 0) % 32];
  return encodeTime(time, 10) + random;
}

export const childJobId = (groupId: string, createdAt: number, slice: number, position: number) =>
  derivedUlid(createdAt, `${groupId}/child/${slice}/${position}`);

export const completionJobId = (groupId: string, createdAt: number) =>
  derivedUlid(createdAt, `${groupId}/completion`);

/**
 * The id of the group a job's handler creates for `step`: one per (job, step), so a handler retried
 * after it created its group gets the same group back.
 */
export function nestedGroupId(parentJobId: string, step: string): string {
  const id = `${parentJobId}.${step}`;
  if (!GroupId.safeParse(id).success) {
    throw new ClientError(
      "validation_error",
      `group step "${step.slice(0, 80)}" must be letters, digits, '_', '-', '.' or ':'`,
    );
  }
  return id;
}
