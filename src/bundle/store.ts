/**
 * Installed bundles on disk (DESIGN §3.4, §6.4 `data_dir`):
 *
 * ```
 *  <dataDir>/bundles/
 *    installed.json                 { format: "vcp-installed/1", bundles: [{ bundle, version, digest,
 *                                     activated_at, signed_by }, …] }   activation order = chain order
 *    <bundle>/<digest hex>.vcpb     content-addressed artifacts (only active revisions are kept)
 * ```
 * Every file is written atomically: a temporary file in the same directory, fsync, rename, then
 * fsync of the directory, so a crash leaves either the old or the new file, never half of one. The
 * artifact is written before the index that names it.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { VcpError } from "../errors.js";
import { serializeArtifact, type VcpArtifact } from "./artifact.js";
import { BUNDLE_NAME, DIGEST } from "../model/names.js";

export const INDEX_FORMAT = "vcp-installed/1";

/** One active bundle as the index records it. */
export interface StoreEntry {
  bundle: string;
  version: string;
  digest: string;
  activated_at: string;
  signed_by: string | null;
}

/** A stored bundle as read back: the index entry and the artifact as parsed JSON (not yet verified). */
export interface StoredBundle {
  entry: StoreEntry;
  file: string;
  artifact: unknown;
}

export interface BundleStore {
  /** `<dataDir>/bundles`. */
  readonly dir: string;
  /** The active bundles in activation order; the caller re-verifies each artifact. */
  loadInstalled(): Promise<StoredBundle[]>;
  /** Persist `artifact` and make it the active revision of its bundle (moved to the end of the order). */
  activate(artifact: VcpArtifact, entry: StoreEntry): Promise<void>;
  /** Forget a bundle: index first, then its files. */
  remove(bundle: string): Promise<void>;
  /** The current index entries, in activation order. */
  entries(): Promise<StoreEntry[]>;
}

// SECURITY: names and digests from the index become path segments; only these shapes are accepted.
const EntrySchema = z
  .object({
    bundle: z.string().regex(BUNDLE_NAME.regex),
    version: z.string().max(256),
    digest: z.string().regex(DIGEST.regex),
    activated_at: z.string().max(64),
    signed_by: z.string().max(128).nullable(),
  })
  .strict();
const IndexSchema = z.object({ format: z.literal(INDEX_FORMAT), bundles: z.array(EntrySchema) }).strict();

/**
 * Open (lazily create) the bundle store under a data directory.
 *
 * @example
 * ```ts
 * const store = createBundleStore("./.vcp");
 * for (const { entry, artifact } of await store.loadInstalled()) verifyArtifact(artifact, { keyring });
 * ```
 */
export function createBundleStore(dataDir: string): BundleStore {
  const dir = join(dataDir, "bundles");
  const indexFile = join(dir, "installed.json");
  const artifactFile = (bundle: string, digest: string) => join(dir, bundle, `${digest.slice("sha256:".length)}.vcpb`);

  async function readIndex(): Promise<StoreEntry[]> {
    let text: string;
    try {
      text = await readFile(indexFile, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw corrupt(indexFile, `cannot be read: ${(err as Error).message}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw corrupt(indexFile, `is not JSON: ${(err as Error).message}`);
    }
    const parsed = IndexSchema.safeParse(raw);
    if (!parsed.success) throw corrupt(indexFile, parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "));
    const names = new Set<string>();
    for (const e of parsed.data.bundles) {
      if (names.has(e.bundle)) throw corrupt(indexFile, `bundle '${e.bundle}' is listed twice`);
      names.add(e.bundle);
    }
    return parsed.data.bundles;
  }

  async function writeIndex(entries: StoreEntry[]): Promise<void> {
    await writeAtomic(indexFile, `${JSON.stringify({ format: INDEX_FORMAT, bundles: entries }, null, 2)}\n`);
  }

  /** Delete revisions of `bundle` other than `keep` (best effort: leftovers are harmless). */
  async function prune(bundle: string, keep: string | undefined): Promise<void> {
    const files = await readdir(join(dir, bundle)).catch(() => [] as string[]);
    const keepName = keep === undefined ? undefined : `${keep.slice("sha256:".length)}.vcpb`;
    await Promise.all(files.filter((f) => f !== keepName).map((f) => rm(join(dir, bundle, f), { force: true }).catch(() => undefined)));
    if (keep === undefined) await rm(join(dir, bundle), { recursive: true, force: true }).catch(() => undefined);
  }

  return {
    dir,
    entries: readIndex,

    async loadInstalled() {
      const out: StoredBundle[] = [];
      for (const entry of await readIndex()) {
        const file = artifactFile(entry.bundle, entry.digest);
        let artifact: unknown;
        try {
          artifact = JSON.parse(await readFile(file, "utf8"));
        } catch (err) {
          throw corrupt(file, `the active revision of '${entry.bundle}' cannot be read: ${(err as Error).message}`);
        }
        out.push({ entry, file, artifact });
      }
      return out;
    },

    async activate(artifact, entry) {
      await mkdir(join(dir, artifact.manifest.bundle), { recursive: true });
      await writeAtomic(artifactFile(entry.bundle, entry.digest), serializeArtifact(artifact));
      const entries = (await readIndex()).filter((e) => e.bundle !== entry.bundle);
      entries.push({ ...entry });
      await writeIndex(entries);
      await prune(entry.bundle, entry.digest);
    },

    async remove(bundle) {
      const entries = await readIndex();
      if (!entries.some((e) => e.bundle === bundle)) return;
      await writeIndex(entries.filter((e) => e.bundle !== bundle));
      await prune(bundle, undefined);
    },
  };
}

/** Write `text` to `file` atomically: temporary file, fsync, rename, fsync of the directory. */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const dir = join(file, "..");
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(tmp, "wx", 0o644);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  // The rename is durable only once the directory entry is.
  const dirHandle = await open(dir, "r");
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

function corrupt(file: string, why: string): VcpError {
  return new VcpError("STORE_CORRUPT", `${file}: ${why}`, { file });
}
