import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VcpError } from "../errors.js";
import type { BundleCode } from "../sandbox-host/types.js";
import { digestFileStem, type BundleMeta } from "./protocol.js";
import { readSlots, type SlotRecord } from "./slots.js";
import { BUNDLE_NAME } from "../model/names.js";

const TRUST = new Set(["system", "deployment", "session"]);

/**
 * Owned directories not removed yet. A process that exits without closing its runtime (the one-shot
 * `hook --embedded` adapter at its deadline) still leaves no bundle code behind in the temporary
 * directory: the exit hook removes them, synchronously, as the host process is killed.
 */
const liveDirs = new Set<string>();
let exitHookInstalled = false;
function trackDir(dir: string): void {
  liveDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
  });
}

/**
 * The directory the sandbox host's workers read bundle code from, and the slot files they write
 * (slots.ts). Content-addressed: `<stem>.js` holds the code of one digest and never changes;
 * `<stem>.json` its metadata. Every file is written under a temporary name and renamed, so a worker
 * never reads half a file. The files of an unloaded revision stay (harmless, and a chain already in
 * flight may still need them on a cold worker); a temporary directory goes on {@link remove}.
 */
export class CodeStore {
  readonly dir: string;
  readonly slotDir: string;
  private readonly owned: boolean;
  private nextTmp = 1;

  /** `dir` undefined: a fresh temporary directory, owned (removed whole by {@link remove}). */
  constructor(dir: string | undefined) {
    this.owned = dir === undefined;
    this.dir = dir ?? mkdtempSync(join(tmpdir(), "vcp-sandbox-"));
    this.slotDir = join(this.dir, "slots");
    if (this.owned) trackDir(this.dir);
    mkdirSync(this.slotDir, { recursive: true });
    // Slots of a previous run in the same directory would alias generation numbers.
    for (const name of readdirSync(this.slotDir)) if (name.endsWith(".slot")) rmSync(join(this.slotDir, name), { force: true });
  }

  /**
   * What the workers need to know about a bundle, checked here because the sandbox is its own trust
   * boundary (a library caller may hand it anything): the digest becomes a file name and the trust
   * level selects the guest's capabilities. Runs once per load, never per chain.
   */
  static metaOf(bundle: BundleCode, codeBytesLimit: number): BundleMeta {
    const invalid = (why: string): VcpError =>
      new VcpError("INVALID_BUNDLE", `bundle ${String(bundle?.name)}: ${why}`, { bundle: bundle?.name, digest: bundle?.digest });
    if (typeof bundle?.name !== "string" || !BUNDLE_NAME.regex.test(bundle.name)) throw invalid(`name ${BUNDLE_NAME.rule}`);
    // SECURITY: the digest names files in the code directory; only sha256:<hex> or a plain token.
    if (typeof bundle.digest !== "string" || digestFileStem(bundle.digest) === undefined) {
      throw invalid("digest must be sha256:<hex> or a token of [A-Za-z0-9_-]");
    }
    if (typeof bundle.code !== "string") throw invalid("code must be a string");
    const bytes = Buffer.byteLength(bundle.code);
    if (bytes > codeBytesLimit) throw invalid(`code is ${bytes} bytes, over the limit of ${codeBytesLimit}`);
    // SECURITY: trust selects capabilities in the isolate (vcp.fetch for system only).
    if (!TRUST.has(bundle.trust)) throw invalid("trust must be system, deployment or session");
    return {
      name: bundle.name,
      digest: bundle.digest,
      trust: bundle.trust,
      ...(bundle.memoryMb !== undefined ? { memoryMb: bundle.memoryMb } : {}),
      ...(bundle.isolation !== undefined ? { isolation: bundle.isolation } : {}),
    };
  }

  /** Write a bundle's code and metadata. An existing `<stem>.js` must hold the same code (a digest names one content). */
  async put(bundle: BundleCode, meta: BundleMeta): Promise<void> {
    const stem = digestFileStem(bundle.digest)!;
    const codePath = join(this.dir, `${stem}.js`);
    const existing = await readFile(codePath, "utf8").catch(() => undefined);
    if (existing !== undefined && existing !== bundle.code) {
      throw new VcpError("INVALID_BUNDLE", `digest ${bundle.digest} is already stored with different code`, {
        bundle: bundle.name,
        digest: bundle.digest,
      });
    }
    const suffix = `.${process.pid}.${this.nextTmp++}.tmp`;
    if (existing === undefined) {
      await writeFile(codePath + suffix, bundle.code);
      await rename(codePath + suffix, codePath);
    }
    const metaPath = join(this.dir, `${stem}.json`);
    await writeFile(metaPath + suffix, JSON.stringify(meta));
    await rename(metaPath + suffix, metaPath);
  }

  /** Slot records of one host generation (the watchdog and crash attribution read them). */
  slots(generation: number): SlotRecord[] {
    return readSlots(this.slotDir, generation);
  }

  /** Forget the slots of a dead generation. Best effort: a leftover slot of a dead generation is never read again. */
  removeSlots(generation: number): void {
    const prefix = `g${generation}-t`;
    try {
      for (const name of readdirSync(this.slotDir)) if (name.startsWith(prefix)) unlinkSync(join(this.slotDir, name));
    } catch {
      // best effort
    }
  }

  /** On close: an owned directory goes whole; a caller's keeps its code (only the slots go). */
  remove(): void {
    liveDirs.delete(this.dir);
    if (this.owned) rmSync(this.dir, { recursive: true, force: true });
    else rmSync(this.slotDir, { recursive: true, force: true });
  }
}
