// Writes dist/build-info.json after `tsc`: the commit the build came from, for `vcp-hooks version`.
// A packed tarball has no .git, so the commit has to be recorded when the package is built.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";

function git(...args) {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

// A container build has no .git; its Dockerfile passes the commit in VCP_BUILD_COMMIT.
const fromEnv = process.env.VCP_BUILD_COMMIT || null;
const commit = fromEnv ?? git("rev-parse", "HEAD");
const dirty = fromEnv === null && commit !== null && git("status", "--porcelain", "--untracked-files=no") !== "";
mkdirSync("dist", { recursive: true });
writeFileSync("dist/build-info.json", `${JSON.stringify({ commit, dirty, built_at: new Date().toISOString() }, null, 2)}\n`);
