/**
 * Attribution, sibling of attacker-revisions-frame-busy-bundle: the attacker's bundle crashes the
 * host next to a busy innocent bundle, is removed and installed again under the same name (the same
 * code: a fresh load ends whatever probation the first crash put it on), and crashes again. The
 * innocent bundle is then the only bundle that was running during both crashes.
 *
 * Must hold: the innocent bundle is never quarantined and keeps serving; the attacker is.
 */
import type { Scenario } from "../scenario.js";
import { runFramingAttempt } from "./attacker-revisions-frame-busy-bundle.js";

export const scenario: Scenario = {
  id: "attacker-reinstall-frames-busy-bundle",
  category: "attribution",
  title: "an attacker's bundle removed and reinstalled under the same name crashes the host twice next to a busy bundle",
  expected: "the busy innocent bundle is never quarantined and keeps serving; the reinstalled attacker is quarantined",
  run: () => runFramingAttempt("reinstall"),
};
