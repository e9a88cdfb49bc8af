/**
 * Reading a file a user pointed `build`, `sign`, `verify` or `import` at: a manifest, an entry module
 * and everything it imports, a `.system/hooks/` YAML file, a `.vcpb`, a keyring or key, an agent's
 * hook configuration. Such a path may name a FIFO (a read waits for a writer: forever, in a build), a
 * device (`/dev/zero` never ends), a socket, a directory, or a huge, possibly sparse file that costs
 * gigabytes to read and parse (a 600 MB module took 2 GB of RSS in the CLI alone, then crashed). Every
 * such read goes through here, and the rule is one:
 *
 *   open without blocking (O_NONBLOCK: a FIFO with no writer opens at once; O_NOCTTY: a terminal
 *   never becomes ours) ─▶ fstat the descriptor (the object that will be read, not whatever the path
 *   names a moment later) ─▶ not a regular file, or larger than its bound ─▶ INPUT_FILE_REFUSED
 *   naming the path, before a byte is read ─▶ else read exactly the size fstat gave
 *
 * Symlinks are followed: the checks apply to the file a link resolves to (pnpm and `npm link` make a
 * policy's node_modules of links, and a regular file is harmless wherever it lives). Where the
 * directory itself is untrusted (`build --from repo-yaml` of a cloned repository) the callers also
 * require the resolved path to lie inside it: {@link assertInside}.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { sep } from "node:path";
import { VcpError } from "../errors.js";

/** Bounds on what one file may hold, bytes; each names what the file is, far above any real one. */
export const INPUT_FILE_BYTES = Object.freeze({
  /** One module esbuild reads (an entry, a file it imports, a package's file). */
  source: 16 * 1024 * 1024,
  /** All modules of one build together. */
  sourceTotal: 64 * 1024 * 1024,
  /** `policy.yaml`. */
  manifest: 4 * 1024 * 1024,
  /** A `.vcpb` (its code is bounded by limits.bundle_bytes, 5 MiB by default, then JSON-escaped). */
  artifact: 64 * 1024 * 1024,
  /** A keyring file, a PEM key. */
  key: 1024 * 1024,
  /** An agent's hook configuration (`import`). */
  config: 4 * 1024 * 1024,
  /** One `.system/hooks/*.yaml`: a hook definition is a few hundred bytes. */
  hookYaml: 256 * 1024,
});

/** Why a file is not read: its kind, or its size against the bound; undefined when it may be. */
function refusal(st: Stats, maxBytes: number): { rule: string; kind: string; size?: number } | undefined {
  if (!st.isFile()) {
    const kind = st.isFIFO() ? "a FIFO (named pipe)" : st.isCharacterDevice() ? "a character device" : st.isBlockDevice() ? "a block device" : st.isSocket() ? "a socket" : st.isDirectory() ? "a directory" : "not a file";
    return { kind, rule: `is ${kind}, not a regular file` };
  }
  if (st.size > maxBytes) return { kind: "file", size: st.size, rule: `is ${st.size} bytes; at most ${maxBytes} bytes are read` };
  return undefined;
}

function refused(path: string, what: string, maxBytes: number, why: { rule: string; kind: string; size?: number }): VcpError {
  return new VcpError("INPUT_FILE_REFUSED", `${path}: ${what} ${why.rule}; nothing was read`, {
    file: path,
    what,
    kind: why.kind,
    ...(why.size !== undefined ? { size: why.size } : {}),
    limit: maxBytes,
  });
}

// SECURITY: O_NONBLOCK so that opening a FIFO cannot wait for a writer; harmless on regular files.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The bytes of `path`, refused with `INPUT_FILE_REFUSED` (naming the path, `what` it is, its kind or
 * size and the bound) unless it is a regular file of at most `maxBytes`. Errors of `open` itself
 * (ENOENT, EACCES…) are thrown as they are, for the caller's own message.
 *
 * @example
 * ```ts
 * const text = (await readInputFile("policies/guard/policy.yaml", INPUT_FILE_BYTES.manifest, "the manifest")).toString("utf8");
 * ```
 */
export async function readInputFile(path: string, maxBytes: number, what: string): Promise<Buffer> {
  const handle = await open(path, OPEN_FLAGS);
  try {
    const st = await handle.stat();
    const why = refusal(st, maxBytes);
    if (why !== undefined) throw refused(path, what, maxBytes, why);
    // Exactly the size fstat gave: a file that grows meanwhile is read as it was, never past the bound.
    const bytes = Buffer.alloc(st.size);
    let offset = 0;
    while (offset < st.size) {
      const { bytesRead } = await handle.read(bytes, offset, st.size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return bytes.subarray(0, offset);
  } finally {
    await handle.close();
  }
}

/** {@link readInputFile} for synchronous callers (the `import` command). */
export function readInputFileSync(path: string, maxBytes: number, what: string): Buffer {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const st = fstatSync(fd);
    const why = refusal(st, maxBytes);
    if (why !== undefined) throw refused(path, what, maxBytes, why);
    const bytes = Buffer.alloc(st.size);
    let offset = 0;
    while (offset < st.size) {
      const n = readSync(fd, bytes, offset, st.size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return bytes.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}

/**
 * Check `path` as {@link readInputFile} would, without reading it, for a reader that is not ours
 * (esbuild reads the modules it bundles); resolves with its size. The file could in principle be
 * swapped between this check and that read: doing so takes write access to the directory during the
 * build, which already decides what gets built.
 */
export async function checkInputFile(path: string, maxBytes: number, what: string): Promise<number> {
  const handle = await open(path, OPEN_FLAGS);
  try {
    const st = await handle.stat();
    const why = refusal(st, maxBytes);
    if (why !== undefined) throw refused(path, what, maxBytes, why);
    return st.size;
  } finally {
    await handle.close();
  }
}

/**
 * `path` with every symlink resolved, refused with `INPUT_FILE_REFUSED` unless it lies inside `root`
 * (itself a real path): for files of an untrusted directory, whose links must not carry a build out
 * of it. Errors of `realpath` (ENOENT…) are thrown as they are.
 */
export function assertInside(path: string, root: string, what: string): string {
  const real = realpathSync(path);
  // SECURITY: compared on real paths, so neither `..` nor a link (nor a link to a link) leaves `root`.
  if (real === root || real.startsWith(root + sep)) return real;
  throw new VcpError("INPUT_FILE_REFUSED", `${path}: ${what} resolves to ${real}, outside ${root}; nothing was read`, { file: path, what, kind: "outside", resolved: real, root });
}
