import { closeSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Crash attribution (DESIGN §4.1). A fatal V8 error (`'1'.repeat(2**28).split('')`) aborts the
 * sandbox host process without running any JavaScript, so "who was running?" must already be on
 * disk when it happens. Each worker thread owns one fixed-size slot file and overwrites it in place
 * around every hook call:
 *
 * ```
 *  codeDir/slots/g<generation>-t<threadId>.slot      (SLOT_BYTES, space padded)
 *  "<taskId> I <hook>"   the worker is inside the action of <hook> for supervisor task <taskId>
 *  "<taskId> C"          the worker runs chain code between hooks (predicates, result parsing)
 *  "<taskId> X <hook>"   isolated-vm reported a catastrophic error in <hook>; the host kills itself
 *  "<taskId> L"          the worker runs a bundle's top-level code (loadBundle)
 * ```
 *
 * A positional `writeSync` costs ≈1–2 µs and lands in the page cache before the syscall returns, so
 * it survives the death of the process (not of the machine, which would take the supervisor too).
 * After a crash the supervisor reads every slot of the dead generation; records whose task id is no
 * longer pending are stale and ignored.
 */
export const SLOT_BYTES = 128;

export type SlotPhase = "I" | "C" | "X" | "L";

export interface SlotRecord {
  taskId: number;
  phase: SlotPhase;
  hook?: string;
}

/** Worker side: one open file descriptor and one reused buffer, nothing allocated per write. */
export class SlotWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(SLOT_BYTES, 0x20);

  constructor(slotDir: string, generation: number, threadId: number) {
    this.fd = openSync(join(slotDir, slotFileName(generation, threadId)), "w");
    writeSync(this.fd, this.buffer, 0, SLOT_BYTES, 0);
  }

  write(taskId: number, phase: SlotPhase, hook?: string): void {
    const buffer = this.buffer;
    buffer.fill(0x20);
    // Hook names match [a-z0-9_-]{1,64} (spec §6.2.2), so the record always fits and never has a space.
    buffer.write(hook === undefined ? `${taskId} ${phase}` : `${taskId} ${phase} ${hook}`, 0, SLOT_BYTES - 1, "latin1");
    writeSync(this.fd, buffer, 0, SLOT_BYTES, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

export function slotFileName(generation: number, threadId: number): string {
  return `g${generation}-t${threadId}.slot`;
}

/** Supervisor side: every readable record of one host generation. */
export function readSlots(slotDir: string, generation: number): SlotRecord[] {
  const prefix = `g${generation}-t`;
  const records: SlotRecord[] = [];
  let names: string[];
  try {
    names = readdirSync(slotDir);
  } catch {
    return records;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".slot")) continue;
    let text: string;
    try {
      text = readFileSync(join(slotDir, name), "latin1").trim();
    } catch {
      continue;
    }
    const record = parseSlot(text);
    if (record !== undefined) records.push(record);
  }
  return records;
}

export function parseSlot(text: string): SlotRecord | undefined {
  const [id, phase, hook] = text.split(" ");
  const taskId = Number(id);
  if (!Number.isSafeInteger(taskId) || (phase !== "I" && phase !== "C" && phase !== "X" && phase !== "L")) return undefined;
  return hook === undefined || hook === "" ? { taskId, phase } : { taskId, phase, hook };
}
