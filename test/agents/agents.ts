/**
 * The real agents the suite drives (issue 26 item 4), one entry each: which npm package and version,
 * how to start it non-interactively against the fake model server, how its hook settings look, and
 * which of its tools are the shell and the file write. Adding an agent is one entry here (plus, if it
 * speaks a model API the fake does not know yet, that API in fake-model.ts).
 *
 * This file is also read by scripts/test-agents.mjs (through Node's type stripping) to install the
 * pinned CLIs before the tests enter their network namespace: keep it free of relative imports other
 * than `import type`.
 */

/** A user's own command hook, as a line of the agent's settings. */
export interface HookLine {
  readonly event: string;
  readonly command: string;
  /** Tool-name matcher; absent: the event's every occurrence. */
  readonly matcher?: string;
}

/** The `hooks` object of an agent's settings: event → matcher groups. */
export type HooksBlock = Readonly<Record<string, readonly unknown[]>>;

/** Paths of one agent run. */
export interface RunDirs {
  /** The agent's HOME: its user settings live here. */
  readonly home: string;
  /** The project: the agent's working directory. */
  readonly project: string;
  /** Directories outside the project the agent must be able to reach (so its own checks do not refuse first). */
  readonly outside: readonly string[];
}

export interface Agent {
  /** Also the vcp-hooks profile it is served by. */
  readonly id: string;
  readonly package: string;
  readonly version: string;
  /** argv that starts the installed CLI, given its npm install prefix and the Node to run JS with. */
  command(prefix: string, node: string): string[];
  /** `vcp-hooks hook --dialect` and `vcp-hooks import <dialect>`. */
  readonly dialect: string;
  /** The example policy for this agent (policies/<dir>). */
  readonly policy: string;
  /** Every hook event the pinned CLI knows (read from its bundle); the suite wires each one. */
  readonly events: readonly string[];
  /** Events whose matcher is a tool name. */
  readonly toolEvents: readonly string[];
  /** The event before a tool runs (the guard's event) and the one after. */
  readonly preTool: string;
  readonly postTool: string;
  /** The event on each user prompt. */
  readonly promptEvent: string;
  /** The shell tool as the model calls it; `hookTool` when hooks see another name (their matchers use it). */
  readonly shell: { readonly tool: string; readonly hookTool?: string; input(command: string): Record<string, unknown> };
  /** The file-write tool; absent when the agent offers none the fake model can call (the write case is skipped). */
  readonly write?: { readonly tool: string; input(path: string, content: string): Record<string, unknown> };
  /** The adapter's exit code when it refuses an event (`--on-error` block): 2, or 0 where the agent reads the deny from stdout (Copilot). */
  readonly refusalExit?: 0 | 2;
  /**
   * What the agent tells the model when it denies a tool because its pre-tool hook failed (exit 1) on its
   * own, without any switch of ours; absent where a failing hook lets the tool run.
   */
  readonly failedHookDenies?: string;
  /** A variable the agent documents for its hooks, holding the project directory; absent when it documents none. */
  readonly projectDirVar?: string;
  /**
   * The user settings file (relative to HOME) holding `hooks`. The adapter's block comes from vcp-hooks
   * itself (src/tooling/agent-settings.ts, what `init --profile` and `import` write); a user's own hooks
   * from `hooksOf`.
   */
  settings(hooks: HooksBlock): { readonly path: string; readonly json: Record<string, unknown> };
  /** A user's own command hooks in this agent's settings format. */
  hooksOf(lines: readonly HookLine[]): HooksBlock;
  /** A command hook's stdout that adds `text` to the model's context; absent: Claude Code's `hookSpecificOutput.additionalContext`. */
  contextAnswer?(event: string, text: string): Record<string, unknown>;
  /** Environment knobs: the fake model's URL, a fake key, nothing sent anywhere else (`prefix`: the install prefix). */
  env(modelUrl: string, prefix: string): Record<string, string>;
  /** Arguments of one non-interactive run of `prompt` (`modelUrl` for agents configured by flags). */
  args(prompt: string, dirs: RunDirs, modelUrl: string): string[];
  /** The agent's final text from its stdout (JSON output mode). */
  finalText(stdout: string): string | undefined;
}

const jsonField = (stdout: string, field: string): string | undefined => {
  try {
    const value: unknown = (JSON.parse(stdout) as Record<string, unknown>)[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
};

/** Claude Code 2.1.332 (a native binary; its npm postinstall links the platform package's executable). */
const claudeCode: Agent = {
  id: "claude-code",
  package: "@anthropic-ai/claude-code",
  version: "2.1.332",
  command: (prefix) => [`${prefix}/node_modules/@anthropic-ai/claude-code/bin/claude.exe`],
  dialect: "claude",
  policy: "claude-safe-shell",
  // The hook event list of the 2.1.332 bundle (`["PreToolUse","PostToolUse",…,"PreSkillShellCommand"]`).
  events: [
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit", "UserPromptExpansion",
    "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
    "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated",
    "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
    "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay", "PreSkillShellCommand",
  ],
  toolEvents: ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"],
  preTool: "PreToolUse",
  postTool: "PostToolUse",
  promptEvent: "UserPromptSubmit",
  shell: { tool: "Bash", input: (command) => ({ command, description: "run it" }) },
  write: { tool: "Write", input: (file_path, content) => ({ file_path, content }) },
  projectDirVar: "CLAUDE_PROJECT_DIR",
  settings: (hooks) => ({ path: ".claude/settings.json", json: { hooks } }),
  hooksOf: (lines) => group(lines, (l) => ({ type: "command", command: l.command, timeout: 15 })),
  env: (modelUrl) => ({
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-fake-vcp-hooks-e2e",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  }),
  // Bash and Write are pre-approved and the directories outside the project added, so that Claude
  // Code's own permission checks would let every call through: whatever refuses is the hook.
  args: (prompt, dirs) => ["-p", prompt, "--output-format", "json", "--allowedTools", "Bash,Write", ...dirs.outside.flatMap((d) => ["--add-dir", d])],
  finalText: (stdout) => jsonField(stdout, "result"),
};

/** Gemini CLI 0.61.0 (a Node bundle). */
const geminiCli: Agent = {
  id: "gemini-cli",
  package: "@google/gemini-cli",
  version: "0.61.0",
  command: (prefix, node) => [node, `${prefix}/node_modules/@google/gemini-cli/bundle/gemini.js`],
  dialect: "gemini",
  policy: "gemini-safe-shell",
  // HookEventName of the 0.61.0 bundle.
  events: ["BeforeTool", "AfterTool", "BeforeAgent", "Notification", "AfterAgent", "SessionStart", "SessionEnd", "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection"],
  toolEvents: ["BeforeTool", "AfterTool"],
  preTool: "BeforeTool",
  postTool: "AfterTool",
  promptEvent: "BeforeAgent",
  shell: { tool: "run_shell_command", input: (command) => ({ command }) },
  write: { tool: "write_file", input: (file_path, content) => ({ file_path, content }) },
  projectDirVar: "GEMINI_PROJECT_DIR",
  settings: (hooks) => ({
    path: ".gemini/settings.json",
    json: {
      // With GOOGLE_GEMINI_BASE_URL alone Gemini CLI picks its "gateway" auth, which non-interactive
      // mode refuses ("Invalid auth method selected"): name the API-key auth, the base URL still applies.
      security: { auth: { selectedType: "gemini-api-key" } },
      hooksConfig: { enabled: true },
      hooks,
    },
  }),
  hooksOf: (lines) => group(lines, (l) => ({ type: "command", name: "user-hook", command: l.command, timeout: 15_000 })),
  env: (modelUrl) => ({
    GOOGLE_GEMINI_BASE_URL: modelUrl,
    GEMINI_API_KEY: "fake-gemini-key-vcp-hooks-e2e",
    // Headless runs in a fresh directory: trust it (else project settings and hooks are ignored).
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  }),
  // yolo approves every tool call and --include-directories lets its file tools reach outside the
  // project: whatever refuses is the hook.
  args: (prompt, dirs) => ["-p", prompt, "--output-format", "json", "--approval-mode", "yolo", ...dirs.outside.flatMap((d) => ["--include-directories", d])],
  finalText: (stdout) => jsonField(stdout, "response"),
};

/**
 * OpenAI Codex 0.171.0 (a native binary in the platform package). Offline against the fake's Responses
 * API through a model provider given by `-c` overrides; `--dangerously-bypass-hook-trust` runs the
 * hooks of ~/.codex/hooks.json without the interactive review, and approvals and the sandbox are off so
 * that whatever refuses is the hook. Its shell tool is `exec_command` (`{cmd}`), which hooks see as
 * tool_name `Bash` with `{command}`. With a model it has no metadata for, Codex offers no apply_patch
 * tool, so the write case does not apply; Codex documents no project-directory variable for hooks.
 */
const codex: Agent = {
  id: "codex",
  package: "@openai/codex",
  version: "0.171.0",
  command: (prefix) => [`${prefix}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex`],
  dialect: "codex",
  policy: "codex-safe-shell",
  // The hook events of the 0.171.0 binary (its bundled `<event>.command.input` schemas).
  events: ["PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop", "Interrupt"],
  toolEvents: ["PreToolUse", "PermissionRequest", "PostToolUse"],
  preTool: "PreToolUse",
  postTool: "PostToolUse",
  promptEvent: "UserPromptSubmit",
  shell: { tool: "exec_command", hookTool: "Bash", input: (command) => ({ cmd: command }) },
  settings: (hooks) => ({ path: ".codex/hooks.json", json: { hooks } }),
  hooksOf: (lines) => group(lines, (l) => ({ type: "command", command: l.command, timeout: 15 })),
  env: () => ({ VCP_FAKE_OPENAI_KEY: "sk-fake-vcp-hooks-e2e" }),
  args: (prompt, _dirs, modelUrl) => [
    "exec", "--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
    "-c", 'model_provider="fake"',
    "-c", `model_providers.fake={ name = "fake", base_url = "${modelUrl}/v1", wire_api = "responses", env_key = "VCP_FAKE_OPENAI_KEY" }`,
    "-m", "gpt-fake", prompt,
  ],
  // `codex exec` prints only the final message on stdout (progress goes to stderr).
  finalText: (stdout) => stdout.trim().split("\n").at(-1),
};

/**
 * GitHub Copilot CLI 1.0.102 (a native binary in the platform package; it unpacks its JS package into
 * `$COPILOT_CACHE_HOME/pkg` on first start, which the install's `--version` check does under the prefix,
 * so runs reuse it). Offline through BYOK: `COPILOT_OFFLINE=true` and an Anthropic provider at the fake.
 * Hooks are user-level (`~/.copilot/hooks/*.json`): Copilot skips a repository's `.github/hooks/` in
 * `-p` mode unless the folder is trusted. `--allow-all-tools` and `--add-dir` let every call through its
 * own checks: whatever refuses is the hook. Its payloads carry no event name (a user hook is told its
 * event by an argument) and it gives hooks `COPILOT_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`).
 */
const copilot: Agent = {
  id: "copilot",
  package: "@github/copilot",
  version: "1.0.102",
  command: (prefix) => [`${prefix}/node_modules/@github/copilot-linux-x64/copilot`],
  dialect: "copilot",
  policy: "copilot-safe-shell",
  // HookType of the 1.0.102 SDK (copilot-sdk/generated/rpc.d.ts in its package).
  events: [
    "preToolUse", "preMcpToolCall", "postToolUse", "postToolUseFailure", "userPromptSubmitted", "userPromptTransformed", "sessionStart", "sessionEnd",
    "postResult", "prePRDescription", "errorOccurred", "agentStop", "subagentStart", "subagentStop", "preCompact", "permissionRequest", "notification",
  ],
  toolEvents: ["preToolUse", "preMcpToolCall", "postToolUse", "postToolUseFailure", "permissionRequest"],
  preTool: "preToolUse",
  postTool: "postToolUse",
  promptEvent: "userPromptSubmitted",
  shell: { tool: "bash", input: (command) => ({ command, description: "run it" }) },
  write: { tool: "create", input: (path, file_text) => ({ path, file_text }) },
  // The adapter's deny for Copilot is JSON on stdout at exit 0 (the references say a failed hook is skipped).
  refusalExit: 0,
  // …but 1.0.102 denies the tool when a preToolUse hook exits 1: 'Denied by preToolUse hook from "<file>" (hook errored)'.
  failedHookDenies: "hook errored",
  projectDirVar: "COPILOT_PROJECT_DIR",
  settings: (hooks) => ({ path: ".copilot/hooks/vcp-hooks.json", json: { version: 1, hooks } }),
  // Copilot lists hooks directly (no matcher groups; preToolUse takes no matcher) and sends no event
  // name on stdin: the user's command gets its event as its argument.
  hooksOf: (lines) => {
    const out: Record<string, unknown[]> = {};
    for (const l of lines) (out[l.event] ??= []).push({ type: "command", bash: `${l.command} ${l.event}`, timeoutSec: 15 });
    return out;
  },
  // 1.0.102 reads a top-level additionalContext (not hookSpecificOutput) on the prompt event.
  contextAnswer: (_event, text) => ({ additionalContext: text }),
  env: (modelUrl, prefix) => ({
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_TYPE: "anthropic",
    COPILOT_PROVIDER_BASE_URL: modelUrl,
    COPILOT_PROVIDER_API_KEY: "sk-ant-fake-vcp-hooks-e2e",
    COPILOT_MODEL: "claude-sonnet-4.5",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_CACHE_HOME: `${prefix}/.cache/copilot`,
  }),
  args: (prompt, dirs) => ["-p", prompt, "--output-format", "json", "--allow-all-tools", "--no-ask-user", ...dirs.outside.flatMap((d) => ["--add-dir", d])],
  // JSONL events: the text of the last assistant message.
  finalText: (stdout) => {
    let text: string | undefined;
    for (const line of stdout.split("\n")) {
      try {
        const event = JSON.parse(line) as { type?: unknown; data?: { content?: unknown } };
        if (event.type === "assistant.message" && typeof event.data?.content === "string" && event.data.content !== "") text = event.data.content;
      } catch {
        // not an event line
      }
    }
    return text;
  },
};

/** Settings `hooks` object: per event, one matcher group per hook line, in order. */
function group(lines: readonly HookLine[], entry: (l: HookLine) => Record<string, unknown>): HooksBlock {
  const out: Record<string, unknown[]> = {};
  for (const l of lines) (out[l.event] ??= []).push({ ...(l.matcher !== undefined ? { matcher: l.matcher } : {}), hooks: [entry(l)] });
  return out;
}

export const AGENTS: readonly Agent[] = [claudeCode, geminiCli, codex, copilot];

/** `${VCP_AGENTS_CACHE:-/var/cache/vcp-hooks-agents}`: installed CLIs, outside the clone, kept between runs. */
export function agentsCache(env: NodeJS.ProcessEnv = process.env): string {
  return env["VCP_AGENTS_CACHE"] || "/var/cache/vcp-hooks-agents";
}

/** The install prefix of one pinned agent (keyed by version, so a new pin installs beside the old). */
export function installPrefix(agent: Agent, env: NodeJS.ProcessEnv = process.env): string {
  return `${agentsCache(env)}/${agent.id}@${agent.version}`;
}
