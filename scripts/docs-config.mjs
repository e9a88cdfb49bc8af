// Writes docs/config.md from the config schema (run after `npm run build`: it reads dist/).
import { mkdirSync, writeFileSync } from "node:fs";
import { renderConfigReference } from "../dist/src/server/config-reference.js";

mkdirSync("docs", { recursive: true });
writeFileSync("docs/config.md", renderConfigReference());
console.log("wrote docs/config.md");
