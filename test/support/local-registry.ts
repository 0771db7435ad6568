import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";

/**
 * An npm registry on loopback that serves the packages installed in a project's node_modules: for a
 * test that runs `npm install` as a person would, from an empty folder, with no network. It holds
 * `names` and everything they need (dependencies, and the peers that aren't optional), each at the
 * version installed, found the way Node finds them from the package that needs them; a name it
 * doesn't hold is a 404, as the registry answers one that doesn't exist. Each tarball is the
 * installed folder (its own node_modules left out), packed when the registry starts, with its
 * sha512 in the packument, so npm checks what it downloads.
 */
export interface LocalRegistry {
  /** The registry's URL, for `npm_config_registry`. */
  url: string;
  /** Every package it serves, as `name@version`. */
  served: string[];
  close(): Promise<void>;
}

interface Served {
  manifest: Record<string, unknown>;
  tarball: Buffer;
}

/** The manifest fields npm reads from a packument's version to install it. */
const INSTALL_FIELDS = [
  "name",
  "version",
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "engines",
  "os",
  "cpu",
] as const;

export async function startLocalRegistry(
  projectRoot: string,
  names: readonly string[],
): Promise<LocalRegistry> {
  const packages = new Map<string, Map<string, Served>>();
  const pending: [from: string, name: string][] = names.map((name) => [projectRoot, name]);
  while (pending.length > 0) {
    const [from, name] = pending.shift() as [string, string];
    const dir = installedDir(from, name);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
    const version = manifest.version as string;
    const versions = packages.get(name) ?? new Map<string, Served>();
    packages.set(name, versions);
    if (versions.has(version)) continue;
    const tarball = execFileSync("tar", ["-czf", "-", "--exclude=./node_modules", "-C", dir, "."], {
      maxBuffer: 512 * 1024 * 1024,
    });
    versions.set(version, {
      manifest: Object.fromEntries(INSTALL_FIELDS.filter((f) => f in manifest).map((f) => [f, manifest[f]])),
      tarball,
    });
    const optionalPeers = (manifest.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    const needs = [
      ...Object.keys((manifest.dependencies ?? {}) as object),
      ...Object.keys((manifest.peerDependencies ?? {}) as object).filter((p) => !optionalPeers[p]?.optional),
    ];
    for (const dep of needs) pending.push([dir, dep]);
  }

  let url = "";
  const tarballPath = (name: string, version: string) => `/-/${encodeURIComponent(name)}-${version}.tgz`;
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0] as string);
    const tarball = /^\/-\/(.+)-(\d+\.\d+\.\d+[^/]*)\.tgz$/.exec(path);
    if (tarball) {
      const served = packages.get(tarball[1] as string)?.get(tarball[2] as string);
      if (!served) return void res.writeHead(404).end();
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(served.tarball);
    }
    const name = path.slice(1);
    const versions = packages.get(name);
    if (!versions) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    const packument = {
      name,
      "dist-tags": { latest: [...versions.keys()].sort(byVersion).at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, { manifest, tarball: bytes }]) => [
          version,
          {
            ...manifest,
            dist: {
              tarball: `${url}${tarballPath(name, version)}`,
              integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
            },
          },
        ]),
      ),
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    served: [...packages].flatMap(([name, versions]) => [...versions.keys()].map((v) => `${name}@${v}`)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A package's installed folder as Node finds it from `from`: the nearest node_modules up the tree. */
function installedDir(from: string, name: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "node_modules", name, "package.json");
    if (existsSync(manifest)) return dirname(realpathSync(manifest));
    if (dirname(dir) === dir) throw new Error(`${name} is not installed where ${from} could find it`);
  }
}

/** Semver order of plain versions (x.y.z; a prerelease after its release, which is enough here). */
function byVersion(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return a.length - b.length;
}
