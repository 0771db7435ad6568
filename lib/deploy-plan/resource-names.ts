/** Resource ids for infra: one spelling, shared by queues, workers, alarms and scaling. */
/** "my-queue" → "MyQueue"; a leading digit gets a "Q" so the id still starts with a capital. */
export function pascalCase(name: string): string {
  const joined = name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
  return /^[A-Z]/.test(joined) ? joined : `Q${joined}`;
}
