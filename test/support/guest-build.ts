/**
 * Guest (hook action) code for tests, built the way `vcp-hooks build` builds a policy bundle. The
 * one implementation lives in bench/lib/guest-build.ts (bench/ compiles into dist/, so the benches
 * can use it at run time); tests reuse it under their historical names.
 */
export { buildGuestFile as buildGuest, buildGuestText as buildGuestSource } from "../../bench/lib/guest-build.js";
