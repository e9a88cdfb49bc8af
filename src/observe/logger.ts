/**
 * The operational logger (pino): what `vcp-hooks serve` and the HTTP server log, separate from the
 * audit log, and redacting. The only module of src/ that imports pino: the sandbox workers never load
 * it (they log through the `Logger` interface of ./events.ts, and the host forwards their lines).
 */
import { pino, type DestinationStream, type Logger as PinoLogger, type LevelWithSilent } from "pino";
import { createRedactor, REDACTED } from "../audit/redact.js";
import { DEFAULTS } from "../config/defaults.js";
import { IDENTIFIER } from "../model/names.js";

export type { PinoLogger as OperationalLogger };

/** The pino levels a `--log-level` or `log_level` may name. */
export const LOG_LEVELS: readonly LevelWithSilent[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * Credential keys redacted whatever `redactKeys` says: a configured list that leaves them out must not
 * put a bearer token in a log line.
 */
const ALWAYS_REDACTED = ["authorization", "token"];

export interface OperationalLoggerOptions {
  /** Default "info". */
  level?: LevelWithSilent;
  /** Keys to redact (plus `authorization` and `token`, always); default DEFAULTS.redact_keys. */
  redactKeys?: readonly string[];
  /** Strings in log fields are cut to this many characters after redaction; default 4096. */
  maxStringLength?: number;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
  /** Fields on every line (e.g. `{ svc: "vcp-hooks" }`); pid and hostname are not added. */
  base?: Record<string, unknown>;
}

/**
 * The operational logger: configured keys are censored by pino's own path redaction at the top level
 * and one level down, and everywhere by the redactor, which also removes secret shapes from every
 * string field and from the message.
 *
 * @example
 * ```ts
 * const log = createOperationalLogger({ level: "info" });
 * log.info({ headers: { authorization: "Bearer abc" } }, "request"); // authorization: "[REDACTED]"
 * ```
 */
export function createOperationalLogger(options: OperationalLoggerOptions = {}): PinoLogger {
  const keys = [...new Set([...(options.redactKeys ?? DEFAULTS.redact_keys), ...ALWAYS_REDACTED])];
  const redact = createRedactor({ keys, maxStringLength: options.maxStringLength ?? 4096 });
  // pino paths only take identifier-like keys; the redactor covers the rest.
  const paths = keys.filter((k) => IDENTIFIER.regex.test(k)).flatMap((k) => [k, `*.${k}`]);
  const config = {
    level: options.level ?? "info",
    base: options.base ?? null,
    redact: { paths, censor: REDACTED },
    // The redactor (formatters.log, below) already made every Error plain data — its type, message,
    // stack, own fields and whole `cause` chain (audit/redact.ts). pino's own err serializer, which runs
    // after it, would see a plain object: name it "Object" and fold the causes into one message.
    serializers: { err: (err: unknown) => err },
    formatters: {
      // SECURITY: every structured field passes through the redactor before serialization.
      log: (object: Record<string, unknown>) => redact(object) as Record<string, unknown>,
    },
    hooks: {
      logMethod(this: PinoLogger, args: unknown[], method: (...a: unknown[]) => void): void {
        // SECURITY: messages and their interpolation arguments are redacted (and cut) too.
        const safe = args.map((a) => (typeof a === "string" ? redact(a) : a));
        method.apply(this, safe);
      },
    },
  };
  return options.destination ? pino(config as never, options.destination) : pino(config as never);
}
