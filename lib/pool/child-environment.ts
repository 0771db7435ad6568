/**
 * The only names a child takes from the pool's environment. Everything else stays with the pool:
 * the task's AWS credentials and credential endpoint, ECS's metadata endpoints, skyforge's own
 * settings, and, locally, whatever the developer's shell holds (AWS_PROFILE, tokens). An allowlist,
 * not a blocklist: a secret under a name nobody thought of is withheld too. A kind that needs a
 * setting names it in its `env`.
 */
export const INHERITED_NAMES = ["PATH", "HOME", "LANG", "TZ", "TMPDIR"] as const;

/** A child's own writable directory and its PATH, when it runs as a user of its own (child-users.ts). */
export interface ChildHome {
  home: string;
  path?: string | undefined;
}

/**
 * A child's whole environment: the allowlisted names from the pool's, HOME and TMPDIR pointed at
 * the child's own directory and PATH cut to what its user can search when it has one, then the
 * kind's `env` over them.
 */
export function childEnvironment(
  poolEnv: Readonly<Record<string, string | undefined>>,
  kindEnv: Readonly<Record<string, string>>,
  own?: ChildHome,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_NAMES) {
    const value = poolEnv[name];
    if (value !== undefined) env[name] = value;
  }
  if (own) {
    env.HOME = own.home;
    env.TMPDIR = own.home;
    if (own.path !== undefined) env.PATH = own.path;
  }
  return { ...env, ...kindEnv };
}
