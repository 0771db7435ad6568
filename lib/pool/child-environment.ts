/**
 * What a child inherits from the pool's environment: everything but the task's AWS credentials and
 * skyforge's own settings. A child program (an operator's, in any language) gets no access to the
 * table or the queues through the pool; a kind that needs settings names them in its `env`.
 */
const WITHHELD = [/^AWS_/, /^ECS_/, /^SKYFORGE_/];

export function childEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !WITHHELD.some((p) => p.test(name))));
}
