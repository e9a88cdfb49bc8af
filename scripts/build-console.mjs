// Builds the operator console (console/ → dist/console): app.js bundled by esbuild from
// console/src/main.ts, plus index.html and style.css copied as they are. No CDN, no runtime fetch
// outside the server: everything the page loads is one of these files (and favicon.svg).
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { build } from "esbuild";

const out = "dist/console";
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["console/src/main.ts"],
  outfile: `${out}/app.js`,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome110", "firefox115", "safari16"],
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
});
for (const file of ["index.html", "style.css", "favicon.svg"]) copyFileSync(`console/${file}`, `${out}/${file}`);
