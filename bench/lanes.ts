import type { AnyKind } from "../lib/job/kind.ts";
import { type DeliveryLane, deliveryLanes } from "../lib/job/lanes.ts";

/**
 * The delivery lanes a kind may declare (absent: "fenced"), as the engine names them
 * (lib/job/lanes.ts): the bench offers exactly those.
 */
export const LANES: readonly DeliveryLane[] = deliveryLanes;
export type Lane = DeliveryLane;

export const isLane = (value: string): value is Lane => (LANES as readonly string[]).includes(value);

/**
 * A bench-only copy of `kind` declaring `lane`; the app's own declaration is left as it is. The app's
 * validator judges the value (a DeclarationError when it refuses it).
 */
export function withLane(kind: AnyKind, lane: Lane): AnyKind {
  return { ...kind, lane };
}
