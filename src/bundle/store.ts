/**
 * Installed bundles on disk (DESIGN §3.4, §6.4 `data_dir`):
 *
 * ```
 *  <dataDir>/bundles/
 *    installed.json                 { format: "vcp-installed/1", bundles: [{ bundle, version, digest,
 *                                     activated_at, signed_by }, …] }   activation order = chain order
 *    <bundle>/<digest hex>.vcpb     content-addressed artifacts: the active revision and the ones
 *                                   before it that revisions.json lists
 *    <bundle>/revisions.json        { format: "vcp-revisions/1", revisions: [entry, …] } newest first,
 *                                   at most KEPT_REVISIONS (what an operator can compare or roll back to)
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
export const REVISIONS_FORMAT = "vcp-revisions/1";
/** Revisions kept per bundle, the active one included: the older ones are what a roll back can return to. */
export const KEPT_REVISIONS = 5;

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
  /** The kept revisions of a bundle, newest (the active one) first; [] for a bundle not installed. */
  revisions(bundle: string): Promise<StoreEntry[]>;
  /** A kept revision's artifact as parsed JSON (not yet verified), or undefined when it is not kept. */
  revisionArtifact(bundle: string, digest: string): Promise<unknown>;
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
const RevisionsSchema = z.object({ format: z.literal(REVISIONS_FORMAT), revisions: z.array(EntrySchema).max(KEPT_REVISIONS) }).strict();

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
  const revisionsFile = (bundle: string) => join(dir, bundle, "revisions.json");

  /**
   * The kept revisions of a bundle, newest first. A data directory written before revisions were kept
   * (or a damaged revisions.json: it is only history) gives the active entry alone.
   */
  async function readRevisions(bundle: string, active: StoreEntry | undefined): Promise<StoreEntry[]> {
    let parsed: z.infer<typeof RevisionsSchema> | undefined;
    try {
      const result = RevisionsSchema.safeParse(JSON.parse(await readFile(revisionsFile(bundle), "utf8")));
      if (result.success) parsed = result.data;
    } catch {
      parsed = undefined;
    }
    const list = (parsed?.revisions ?? []).filter((e) => e.bundle === bundle);
    if (active === undefined) return list;
    return [active, ...list.filter((e) => e.digest !== active.digest)].slice(0, KEPT_REVISIONS);
  }

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

  /** Delete the artifacts of `bundle` other than the `keep` digests (best effort: leftovers are harmless); none kept: the whole directory. */
  async function prune(bundle: string, keep: readonly string[]): Promise<void> {
    const files = await readdir(join(dir, bundle)).catch(() => [] as string[]);
    const keepNames = new Set([...keep.map((d) => `${d.slice("sha256:".length)}.vcpb`), "revisions.json"]);
    await Promise.all(files.filter((f) => !keepNames.has(f)).map((f) => rm(join(dir, bundle, f), { force: true }).catch(() => undefined)));
    if (keep.length === 0) await rm(join(dir, bundle), { recursive: true, force: true }).catch(() => undefined);
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
      const index = await readIndex();
      const previous = index.find((e) => e.bundle === entry.bundle);
      const entries = index.filter((e) => e.bundle !== entry.bundle);
      entries.push({ ...entry });
      await writeIndex(entries);
      // History after the index: a crash in between loses at most the history line, never the active revision.
      const kept = await readRevisions(entry.bundle, previous);
      const revisions = [{ ...entry }, ...kept.filter((e) => e.digest !== entry.digest)].slice(0, KEPT_REVISIONS);
      await writeAtomic(revisionsFile(entry.bundle), `${JSON.stringify({ format: REVISIONS_FORMAT, revisions }, null, 2)}\n`);
      await prune(entry.bundle, revisions.map((e) => e.digest));
    },

    async remove(bundle) {
      const entries = await readIndex();
      if (!entries.some((e) => e.bundle === bundle)) return;
      await writeIndex(entries.filter((e) => e.bundle !== bundle));
      await prune(bundle, []);
    },

    async revisions(bundle) {
      const active = (await readIndex()).find((e) => e.bundle === bundle);
      return active === undefined ? [] : readRevisions(bundle, active);
    },

    async revisionArtifact(bundle, digest) {
      const active = (await readIndex()).find((e) => e.bundle === bundle);
      // SECURITY: only a digest the history lists becomes a path (the schema checked its shape).
      if (active === undefined || !(await readRevisions(bundle, active)).some((e) => e.digest === digest)) return undefined;
      try {
        return JSON.parse(await readFile(artifactFile(bundle, digest), "utf8")) as unknown;
      } catch {
        return undefined;
      }
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
