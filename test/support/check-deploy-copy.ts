import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { checkDeploy } from "../../scripts/deploy/check-deploy.ts";
import { ensurePlatform } from "../../scripts/deploy/sst-program.ts";
import { copyProject, type ProjectCopy, projectRoot } from "./project-copy.ts";

/** The stage a broken-on-purpose case runs on (one stage is enough to see a failure). */
export const ciStage = [{ stage: "ci", dev: false }] as const;

export interface CheckDeployCopy {
  /** The file's copy of the project (after its beforeAll). */
  readonly dir: string;
  /** Replaces `from` (which must be there) by `to` in one file of the copy, until `restore()`. */
  edit(file: string, from: string, to: string): void;
  /** Puts every edited file back as it was. */
  restore(): void;
  /** check:deploy's failures for the ci stage after one edit (the copy restored after). */
  failuresAfter(file: string, from: string, to: string): Promise<string[]>;
  failuresAfterEdits(edits: readonly [file: string, from: string, to: string][]): Promise<string[]>;
}

/**
 * A copy of the project for one test file of the offline deploy proof, with its edits: each file
 * of cases breaks its own copy, so the files run beside each other (each SST program run is seconds
 * of CPU, and one file of twenty of them was the suite's longest by minutes).
 */
export function useCheckDeployCopy(prefix: string): CheckDeployCopy {
  let copy: ProjectCopy | undefined;
  const originals = new Map<string, string>();
  beforeAll(() => {
    ensurePlatform(projectRoot);
    copy = copyProject(prefix, { deploy: true });
  }, 180_000);
  afterAll(() => copy?.remove());

  const dirOf = () => {
    if (!copy) throw new Error("the project copy is made in beforeAll");
    return copy.dir;
  };
  const edit = (file: string, from: string, to: string) => {
    const path = join(dirOf(), file);
    const source = readFileSync(path, "utf8");
    if (!source.includes(from)) throw new Error(`${file} no longer contains ${from}`);
    // A second edit of one file keeps the first's original, so the copy is restored whole.
    if (!originals.has(path)) originals.set(path, source);
    writeFileSync(path, source.replace(from, to));
  };
  const restore = () => {
    for (const [path, source] of originals) writeFileSync(path, source);
    originals.clear();
  };
  const failuresAfterEdits = async (edits: readonly [file: string, from: string, to: string][]) => {
    for (const [file, from, to] of edits) edit(file, from, to);
    try {
      const [report] = await checkDeploy(dirOf(), ciStage);
      return report?.failures ?? [];
    } finally {
      restore();
    }
  };
  return {
    get dir() {
      return dirOf();
    },
    edit,
    restore,
    failuresAfter: (file, from, to) => failuresAfterEdits([[file, from, to]]),
    failuresAfterEdits,
  };
}
