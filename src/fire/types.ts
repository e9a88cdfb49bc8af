/*
 * What a VCP chain is fired with (`runtime.fire`), and the command lane's deployment settings the
 * profile fire path reads.
 */
import type { HookType } from "../model/hook-type.js";
import type { Constitution } from "../model/constitution.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import type { HookEventMap } from "../model/events.js";
import type { Principal } from "../registry/index.js";
import type { HookRef } from "../pipeline/index.js";

export interface FireInput<T extends HookType = HookType> {
  /**
   * The session id, or a SessionInfo. For an open session only the id is read: hooks get the
   * session's own HookInput.session (`{ id, created_at, updated_at, state, metadata }`), the same as
   * in its pipeline chains. For a session never opened hooks get what is given (`{ id }` for an id).
   */
  session: SessionInfo | string;
  context: VcpContext;
  constitution: Constitution;
  event: HookEventMap[T];
  /** Run only these hooks of the chain (the periodic scheduler fires one hook per timer). */
  hooks?: readonly HookRef[];
  /**
   * Who fires (DESIGN §6.5): a client principal may fire only in an open session it owns; any other
   * session is SESSION_NOT_FOUND. Absent: the embedding application, which may fire for any session id.
   */
  principal?: Principal;
  /**
   * Whose `session` id is meant (ids are per owner): for operators and the embedding application;
   * a client always fires in its own sessions. Absent: see `Pipeline.keyOf`.
   */
  owner?: string | null;
}

/** The command lane's settings: `RuntimeOptions.exec` with its defaults (vcp.yaml `exec`). */
export interface ExecDeployment {
  readonly enabled: boolean;
  readonly shell: boolean;
  readonly env_allow: readonly string[];
  readonly wrapper?: readonly string[];
  readonly max_output_bytes: number;
}
