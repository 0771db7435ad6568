import { ConfigError } from "../errors.ts";

/** A cluster-wide token bucket: `capacity` tokens of burst, refilled continuously. */
export interface RateLimitScope<Name extends string = string> {
  scope: Name;
  /** Burst: how many tokens a full bucket holds. A whole number, since requests take whole tokens. */
  capacity: number;
  refillPerSecond: number;
}

/** Scope names become part of a DynamoDB key (`rate#<scope>`), so keep them short and plain. */
const SCOPE_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** Throws on the first bad declaration, naming it; a typo here should fail at startup, not at 3 am. */
export function validateRateLimitScopes(list: readonly RateLimitScope[]): void {
  const seen = new Set<string>();
  for (const s of list) {
    if (!SCOPE_NAME.test(s.scope)) {
      throw new ConfigError(`rate-limit scope "${s.scope}": name must match ${SCOPE_NAME}`);
    }
    if (seen.has(s.scope)) throw new ConfigError(`rate-limit scope "${s.scope}" is declared twice`);
    seen.add(s.scope);
    if (!Number.isInteger(s.capacity) || s.capacity < 1) {
      throw new ConfigError(
        `rate-limit scope "${s.scope}": capacity must be a positive integer, got ${s.capacity}`,
      );
    }
    if (!Number.isFinite(s.refillPerSecond) || s.refillPerSecond <= 0) {
      throw new ConfigError(
        `rate-limit scope "${s.scope}": refillPerSecond must be a positive number, got ${s.refillPerSecond}`,
      );
    }
  }
}
