import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A policy directory in a fresh temp dir: `files` maps relative paths to contents. */
export function policyDir(files: Record<string, string>, prefix = "vcp-policy-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

export function copyDir(dir: string, prefix = "vcp-policy-copy-"): string {
  const to = join(mkdtempSync(join(tmpdir(), prefix)), "nested", "elsewhere");
  cpSync(dir, to, { recursive: true });
  return to;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A manifest with hooks `{name, action}` (pre_inject, priority 50, timeout 1000). */
export function policyYaml(bundle: string, hooks: Array<{ name: string; action: string; type?: string }>, extra = ""): string {
  const lines = [`bundle: ${bundle}`, "version: 1.0.0", "trust: deployment", extra, "hooks:"].filter((l) => l !== "");
  for (const h of hooks) {
    lines.push(`  - name: ${h.name}`, `    type: ${h.type ?? "pre_inject"}`, `    action: ${h.action}`, "    priority: 50", "    timeout_ms: 1000");
  }
  return `${lines.join("\n")}\n`;
}

/** A TypeScript policy that imports a local helper and `import type`s from vcp-hooks. */
export const TS_POLICY: Record<string, string> = {
  "src/index.ts": `import type { HookInput, HookResult } from "vcp-hooks";
import { redact } from "./redact";

export function stripPii(input: HookInput): HookResult {
  const context = input.context as Record<string, unknown>;
  const note = typeof context["note"] === "string" ? redact(context["note"]) : undefined;
  return note === undefined ? { status: "continue" } : { status: "modify", modified_context: { ...context, note } };
}
`,
  "src/redact.ts": `const EMAIL = /[\\w.+-]+@[\\w-]+\\.[\\w.]+/g;
export function redact(text: string): string {
  return text.replace(EMAIL, "[email]");
}
`,
};
