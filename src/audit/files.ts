import { createReadStream } from "node:fs";
import { open, readdir, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/*
 * Rotation naming. The live file is always `<path>`; when it would exceed rotate_bytes it is renamed
 * to the next free `<path>.NNNNNN` (six digits, more if ever needed) and a new `<path>` is started
 * whose first record's `prev` is the last hash of the renamed file:
 *
 *   audit.jsonl.000001   seq 1 … 812      (oldest)
 *   audit.jsonl.000002   seq 813 … 1630
 *   audit.jsonl          seq 1631 …       (live)
 *
 * Reading a log in order = the numbered segments ascending, then `<path>`.
 */

const SEGMENT_SUFFIX = /^\.(\d{6,})$/;

/** `<path>.NNNNNN` for segment number `n`. */
export function segmentPath(path: string, n: number): string {
  return `${path}.${String(n).padStart(6, "0")}`;
}

/** The rotated segments of `path`, oldest first, with their numbers. Missing directory ⇒ none. */
export async function listSegments(path: string): Promise<Array<{ n: number; path: string }>> {
  const dir = dirname(path);
  const base = basename(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const out: Array<{ n: number; path: string }> = [];
  for (const name of names) {
    if (!name.startsWith(base)) continue;
    const match = SEGMENT_SUFFIX.exec(name.slice(base.length));
    if (match) out.push({ n: Number(match[1]), path: join(dir, name) });
  }
  return out.sort((a, b) => a.n - b.n);
}

/** Whether `path` itself names a rotated segment (`….NNNNNN`). */
export function isSegmentPath(path: string): boolean {
  return /\.\d{6,}$/.test(path);
}

/** `file` opened for reading, or null when it does not exist (a log not written yet). */
export async function openIfExists(file: string): Promise<FileHandle | null> {
  try {
    return await open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Fill `buf` from `position` (short reads retried); returns the bytes read (less only at end of file). */
export async function readFully(fh: FileHandle, buf: Buffer, position: number): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/** Lines of a file, each with whether its newline was there (a streaming split on byte 10). */
export async function* readLines(file: string): AsyncGenerator<{ text: string; terminated: boolean }> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    let buf: Buffer = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let nl: number;
    while ((nl = buf.indexOf(10)) >= 0) {
      yield { text: buf.subarray(0, nl).toString("utf8"), terminated: true };
      buf = buf.subarray(nl + 1);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length > 0) yield { text: rest.toString("utf8"), terminated: false };
}

/** fsync a directory so a created, renamed or deleted entry survives a power loss. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (err) {
    // Some filesystems refuse fsync on a directory; the data itself is synced already.
    if ((err as NodeJS.ErrnoException).code !== "EINVAL" && (err as NodeJS.ErrnoException).code !== "EISDIR") throw err;
  } finally {
    await handle.close();
  }
}
