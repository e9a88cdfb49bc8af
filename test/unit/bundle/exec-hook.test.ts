import { describe, expect, test } from "vitest";
import { isExecHook, validateExecHook, type ExecHookContext } from "../../../src/bundle/exec-hook.js";
import { VcpError } from "../../../src/errors.js";

const SHA = "a".repeat(64);
const ok: ExecHookContext = { trust: "system", signed: true, scope: "deployment", config: { enabled: true, shell: false }, file: "guard.vcpb" };
const hook = (exec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ name: "guard", event: "BeforeTool", exec, ...extra });

function refused(fn: () => unknown): VcpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected a refusal");
}

describe("validateExecHook", () => {
  test("a pinned absolute command from a signed system bundle passes", () => {
    expect(validateExecHook(hook({ command: "/opt/hooks/guard.sh", sha256: SHA, args: ["--strict"] }), 0, ok)).toEqual({
      name: "guard",
      exec: { command: "/opt/hooks/guard.sh", sha256: SHA, args: ["--strict"] },
    });
    expect(isExecHook(hook({}))).toBe(true);
    expect(isExecHook({ name: "x", action: "y" })).toBe(false);
  });

  test.each([
    ["exec disabled", { config: { enabled: false, shell: false } }, "EXEC_DISABLED", "exec.enabled is off"],
    ["unsigned", { signed: false }, "EXEC_NOT_ALLOWED", "not signed"],
    ["deployment trust", { trust: "deployment" as const }, "EXEC_NOT_ALLOWED", "trust is deployment"],
    ["session registration", { scope: "session" as const }, "EXEC_NOT_ALLOWED", "per session"],
  ])("%s ⇒ %s", (_name, over, code, text) => {
    const err = refused(() => validateExecHook(hook({ command: "/opt/hooks/guard.sh", sha256: SHA }), 3, { ...ok, ...over }));
    expect(err.code).toBe(code);
    expect(err.message).toContain("hooks[3] 'guard'");
    expect(err.message).toContain(text);
  });

  test.each([
    ["a short hash", { command: "/opt/h.sh", sha256: "abc" }, "hooks[0].exec.sha256"],
    ["a relative command", { command: "hooks/h.sh", sha256: SHA }, "hooks[0].exec.command: must be an absolute path"],
    ["a relative cwd", { command: "/opt/h.sh", sha256: SHA, cwd: "work" }, "hooks[0].exec.cwd: must be an absolute path"],
    ["an unknown field", { command: "/opt/h.sh", sha256: SHA, env: {} }, "unknown field(s): env"],
    ["a command line in command", { command: "/usr/bin/python3 -u /opt/h.py", sha256: SHA }, "looks like a command line"],
  ])("%s ⇒ INVALID_BUNDLE naming the field", (_name, exec, text) => {
    const err = refused(() => validateExecHook(hook(exec), 0, ok));
    expect(err.code).toBe("INVALID_BUNDLE");
    expect(err.message).toContain(text);
  });

  test("both action and exec ⇒ INVALID_BUNDLE", () => {
    expect(refused(() => validateExecHook(hook({ command: "/opt/h.sh", sha256: SHA }, { action: "x" }), 0, ok)).message).toContain("hooks[0].action");
  });

  test("a shell string needs exec.shell", () => {
    const h = hook({ command: "jq -r .tool_name | grep -q rm", sha256: SHA, shell: true });
    expect(refused(() => validateExecHook(h, 0, ok)).code).toBe("EXEC_SHELL_DISABLED");
    expect(validateExecHook(h, 0, { ...ok, config: { enabled: true, shell: true } }).exec.shell).toBe(true);
  });
});
