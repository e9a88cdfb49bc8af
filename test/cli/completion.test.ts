// `vcp-hooks completion bash`: the script, sourced in a real bash, completes commands and their options.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { cli } from "./helpers.js";

const run = promisify(execFile);

async function complete(script: string, words: string[]): Promise<string[]> {
  const bash = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _vcp_hooks; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run("bash", ["-c", bash], { cwd: "/" });
  return stdout.split("\n").filter(Boolean);
}

describe("vcp-hooks completion", () => {
  test("bash completes every command of the help and each command's options", async () => {
    const script = (await cli(["completion", "bash"])).stdout;
    const help = (await cli(["--help"])).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    expect(commands.length).toBeGreaterThan(10);
    expect(await complete(script, ["vcp-hooks", ""])).toEqual(expect.arrayContaining(commands));
    expect(await complete(script, ["vcp-hooks", "se"])).toEqual(["serve"]);
    expect(await complete(script, ["vcp-hooks", "serve", "--tr"])).toEqual(["--trust-key"]);
    expect(await complete(script, ["vcp-hooks", "push", "--se"])).toEqual(["--server"]);
  });

  test("zsh gets the same function through bashcompinit; an unknown shell is a usage error", async () => {
    const zsh = await cli(["completion", "zsh"]);
    expect(zsh.stdout).toMatch(/^autoload -U \+X bashcompinit && bashcompinit\n/);
    expect(zsh.stdout).toContain("complete -F _vcp_hooks vcp-hooks");
    const fish = await cli(["completion", "fish"]);
    expect(fish.code).toBe(2);
    expect(fish.stderr).toContain("'fish' is not a supported shell");
  });
});
