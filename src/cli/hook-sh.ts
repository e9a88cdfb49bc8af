/**
 * `vcp-hooks hook --print-sh` (issue 26 item 5): the drop-in adapter as a POSIX `sh` script that speaks
 * the same protocol with `curl`, for agents where Node's start-up (most of the Node adapter's cost per
 * event, bench/adapter.ts) matters. What it shares with the Node adapter (hook.ts), and how:
 *
 *   server URL, token, token file   the same options and variables (VCP_SERVER, --token-env, VCP_TOKEN_FILE)
 *   the route                       POST …/events/<Event>?answer=native: the native JSON as the body,
 *                                   X-VCP-Exit-Code, the guard and X-VCP-Stderr as headers, so the
 *                                   script parses no JSON but the server's error message
 *   the agent's hook environment    the same header, from the same table (tooling/hook-env.ts)
 *   --on-error auto                 the same guard file (hook-guard.ts: same path, FNV-1a name, format),
 *                                   read and written by the script; the same tool events when none
 *   rendering                       probed from hook.ts's renderAnswer/renderFailure per dialect: a
 *                                   dialect whose answers the script cannot render (ai-memory's envelope
 *                                   and daemon) is refused by the script, naming the Node adapter
 *
 * The tables are baked in when the script is written: regenerate it after upgrading vcp-hooks.
 * An answer runs one process, curl: its `$(…)` is the script's only fork (every other subshell or
 * command would cost one more process per event; test/cli/hook/sh-adapter.test.ts counts them). `od`
 * runs only to encode a hook variable that holds characters outside printable ASCII,
 * `mkdir`/`mv`/`date` only when the guard changed.
 */
import { HOOK_ENV_LIMITS, hookEnvNames } from "../tooling/hook-env.js";
import { isToolEvent } from "../tooling/guard-events.js";
import { DEFAULT_TIMEOUT_MS, DIALECTS, PROFILE_OF, renderAnswer, renderFailure, type Dialect } from "./hook.js";

/** How the script renders a dialect's answers; undefined when it cannot (the script refuses the dialect). */
type Style = "json" | "repo-yaml";

/**
 * The rendering of `dialect`, read from the Node adapter's own functions (one rule in one place): the
 * script knows two forms, and a dialect renders as one of them or is not offered.
 *
 * @example
 * ```ts
 * shStyleOf("claude");    // "json"
 * shStyleOf("ai-memory"); // undefined: one decision line from an envelope, which the script cannot read
 * ```
 */
export function shStyleOf(dialect: Dialect): Style | undefined {
  const same = (a: { stdout: string; stderr: string; exitCode: number }, b: { stdout: string; stderr: string; exitCode: number }) => a.stdout === b.stdout && a.stderr === b.stderr && a.exitCode === b.exitCode;
  const answer = (exit: 0 | 2) => renderAnswer(dialect, { native: { k: "v" }, exit_code: exit, stderr: "why" });
  const failure = (mode: "block" | "warn" | "allow") => renderFailure(dialect, mode, "X");
  const warnAndAllow = same(failure("warn"), { stdout: "", stderr: "vcp-hooks hook: X (on-error=warn)\n", exitCode: 1 }) && same(failure("allow"), { stdout: "", stderr: "", exitCode: 0 });
  if (!warnAndAllow) return undefined;
  const ok0 = { stdout: '{"k":"v"}\n', stderr: "why\n", exitCode: 0 } as const;
  if (same(answer(0), ok0) && same(answer(2), ok0) && same(failure("block"), { stdout: "", stderr: "vcp-hooks unavailable: X\n", exitCode: 2 })) return "json";
  const blocked = { stdout: '{"error":"blocked_by_policy","logs":[{"level":"error","message":"vcp-hooks unavailable: X"}]}\n', stderr: "vcp-hooks hook: X\n", exitCode: 2 } as const;
  if (same(answer(0), ok0) && same(answer(2), { ...ok0, exitCode: 2 }) && same(failure("block"), blocked)) return "repo-yaml";
  return undefined;
}

/** Single-quoted for sh. */
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The printable ASCII characters in order: a character's code is 32 + its position (the FNV-1a loop). */
const ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");

/**
 * The script's text. `events(profile)` lists a profile's events (the tool events among them are baked in).
 *
 * @example
 * ```ts
 * process.stdout.write(shAdapterText("0.1.0", (p) => Object.keys(getProfile(p).events)));
 * ```
 */
export function shAdapterText(version: string, events: (profile: string) => readonly string[]): string {
  const rows: string[] = [];
  const toolEvents: string[] = [];
  const unsupported: string[] = [];
  for (const dialect of DIALECTS) {
    const style = shStyleOf(dialect);
    if (style === undefined) {
      unsupported.push(dialect);
      continue;
    }
    const profile = PROFILE_OF[dialect];
    rows.push(`    ${dialect}) profile=${profile} default_timeout_ms=${DEFAULT_TIMEOUT_MS[dialect]} style=${style} env_names=${shq(hookEnvNames(profile).join(" "))} ;;`);
    for (const event of events(profile)) if (isToolEvent(profile, event)) toolEvents.push(`${profile}:${event}`);
  }
  return TEMPLATE.replaceAll("@{", "${")
    .replaceAll("@@VERSION@@", version)
    .replaceAll("@@DIALECTS@@", DIALECTS.filter((d) => !unsupported.includes(d)).join("|"))
    .replaceAll("@@UNSUPPORTED@@", unsupported.length > 0 ? unsupported.join("|") : "''")
    .replace("@@PROFILE_ROWS@@", rows.join("\n"))
    .replace("@@TOOL_EVENTS@@", toolEvents.length > 0 ? toolEvents.map(shq).join("|") : "''")
    .replace("@@ASCII@@", shq(ASCII))
    .replaceAll("@@HEADER_BYTES@@", String(HOOK_ENV_LIMITS.headerBytes))
    .replaceAll("@@VALUE_BYTES@@", String(HOOK_ENV_LIMITS.valueBytes))
    .replace("@@CR@@", "\r")
    .replace("@@TAB@@", "\t")
    .replace("@@NEL@@", "\u0085")
    .replace("@@LS@@", "\u2028")
    .replace("@@PS@@", "\u2029");
}

// The script. `@{` stands for sh's `${` (this is a template-free raw string); @@NAME@@ are the tables.
const TEMPLATE = String.raw`#!/bin/sh
# vcp-hooks hook as a POSIX sh script: written by 'vcp-hooks hook --print-sh' (vcp-hooks @@VERSION@@).
# The same protocol, options and --on-error rules as 'vcp-hooks hook', with curl. Regenerate it after
# upgrading vcp-hooks rather than editing it (its tables come from that version). Limits: docs/sh-adapter.md.
#
#   usage: vcp-hook.sh <Event> --dialect @@DIALECTS@@
#            [--server URL] [--token-env NAME] [--token-file PATH] [--on-error auto|warn|block|allow] [--timeout-ms N]

NL='
'
CR='@@CR@@'
TAB='@@TAB@@'
# Word splitting and no pathname expansion, whatever the agent's environment holds.
IFS=" $TAB$NL"
set -f
NEL='@@NEL@@'
LS='@@LS@@'
PS='@@PS@@'
ASCII=@@ASCII@@
DEFAULT_SERVER=http://127.0.0.1:8787
MAX_BYTES=16777216

# ── the tables of vcp-hooks @@VERSION@@ ──────────────────────────────────────────────────────────────
dialect_row() {
  profile=
  case $1 in
@@PROFILE_ROWS@@
  esac
}
is_tool_event() {
  case $profile:$1 in
    @@TOOL_EVENTS@@) return 0 ;;
  esac
  return 1
}

# ── characters, with builtins only (a subshell or a command costs a process per event) ─────────────

# The code of the printable ASCII character $1 in char_code; 1 for any other character.
ascii_code() {
  pre=@{ASCII%%"$1"*}
  [ "$pre" != "$ASCII" ] || return 1
  char_code=$((@{#pre} + 32))
}
# The low $1 hexadecimal digits of the number $2 in hex_digits (two's complement when negative).
to_hex() {
  hex_digits=
  shift_by=$((($1 - 1) * 4))
  while [ "$shift_by" -ge 0 ]; do
    digit=$((($2 >> shift_by) & 15))
    case $digit in 10) digit=a ;; 11) digit=b ;; 12) digit=c ;; 13) digit=d ;; 14) digit=e ;; 15) digit=f ;; esac
    hex_digits=$hex_digits$digit
    shift_by=$((shift_by - 4))
  done
}
# $1 percent-encoded (RFC 3986: every character but A-Za-z0-9-._~/ as %XX) in encoded; 1 when it holds
# a character outside printable ASCII (the caller encodes those bytes with od).
percent_encode() {
  rest=$1
  encoded=
  while [ -n "$rest" ]; do
    c=@{rest%"@{rest#?}"}
    rest=@{rest#?}
    case $c in
      [A-Za-z0-9._~/-]) encoded=$encoded$c ;;
      *) ascii_code "$c" || return 1; to_hex 2 "$char_code"; encoded=$encoded%$hex_digits ;;
    esac
  done
}

# ── what a failure becomes (--on-error) ─────────────────────────────────────────────────────────────

# One line of text without control characters (paths and server text go to the agent's log).
one_line() {
  clean=$1
  case $clean in
    *[[:cntrl:]]*)
      out=
      while [ -n "$clean" ]; do
        c=@{clean%"@{clean#?}"}
        clean=@{clean#?}
        case $c in [[:cntrl:]]) out="$out?" ;; *) out=$out$c ;; esac
      done
      clean=$out
      ;;
  esac
}

# SECURITY: "Bearer <token>" in a message becomes "Bearer [REDACTED]", as the Node adapter's scrubber does
# (its other secret shapes are not matched here: docs/sh-adapter.md).
redact_bearer() {
  case $clean in *[Bb][Ee][Aa][Rr][Ee][Rr][[:space:]]*) ;; *) return ;; esac
  rest=$clean
  out=
  while :; do
    case $rest in *[Bb][Ee][Aa][Rr][Ee][Rr][[:space:]]*) ;; *) break ;; esac
    pre=@{rest%%[Bb][Ee][Aa][Rr][Ee][Rr][[:space:]]*}
    rest=@{rest#"$pre"}
    word=@{rest%"@{rest#??????}"}
    rest=@{rest#??????}
    case $pre in *[A-Za-z0-9_]) out=$out$pre$word; continue ;; esac
    space=@{rest%%[![:space:]]*}
    after=@{rest#"$space"}
    secret=@{after%%[!A-Za-z0-9._~+/-]*}
    if [ -z "$secret" ]; then out=$out$pre$word; continue; fi
    after=@{after#"$secret"}
    pad=@{after%%[!=]*}
    rest=@{after#"$pad"}
    out="$out$pre$word [REDACTED]"
  done
  clean=$out$rest
}

# The guard file of (server, profile), as the Node adapter names it (hook-guard.ts); 1 when none can be named.
guard_path() {
  if [ -n "@{XDG_CACHE_HOME-}" ] && [ "@{XDG_CACHE_HOME#/}" != "$XDG_CACHE_HOME" ]; then
    cache=$XDG_CACHE_HOME/vcp-hooks
  elif [ -n "@{HOME-}" ]; then
    cache=$HOME/.cache/vcp-hooks
  else
    return 1
  fi
  # A URL the file's JSON would have to escape is not named (the Node adapter's URL parser escapes it).
  case $href in *[\"\\]*) return 1 ;; esac
  # FNV-1a 64 of "<server href>\n<profile>", in 64-bit shell arithmetic (wrapping as the C types do).
  [ $((1 << 62)) -gt 0 ] || return 1
  h=-3750763034362895579
  fnv_text "$href" || return 1
  h=$(( (h ^ 10) * 1099511628211 ))
  fnv_text "$profile" || return 1
  to_hex 16 "$h"
  guard_file=$cache/guard-$hex_digits.json
}
fnv_text() {
  s=$1
  while [ -n "$s" ]; do
    c=@{s%"@{s#?}"}
    s=@{s#?}
    ascii_code "$c" || return 1
    h=$(( (h ^ char_code) * 1099511628211 ))
  done
}

# The guard facts stored for (server, profile): sets known_revisions and known_events ("A","B"); 1 when none.
read_guard() {
  guard_path || return 1
  [ -f "$guard_file" ] && [ ! -L "$guard_file" ] || return 1
  doc=
  IFS= read -r doc < "$guard_file" 2>/dev/null || [ -n "$doc" ] || return 1
  case $doc in
    '{"format":1,"server":"'"$href"'","profile":"'"$profile"'",'*'"guard":{"revisions":"'*) ;;
    *) return 1 ;;
  esac
  g=@{doc#*'"guard":{"revisions":"'}
  known_revisions=@{g%%'"'*}
  case $g in *'"fail_closed_events":['*']}}') ;; *) return 1 ;; esac
  known_events=@{g#*'"fail_closed_events":['}
  known_events=@{known_events%%']'*}
  [ -n "$known_revisions" ]
}

# Store the guard of a successful answer when it changed (as the Node adapter does: atomically, 0600).
write_guard() {
  revisions=$1
  events=
  list=$2
  while [ -n "$list" ]; do
    e=@{list%%,*}
    case $e in ''|*[!A-Za-z0-9_:.-]*) return 0 ;; esac
    events=$events@{events:+,}'"'$e'"'
    case $list in *,*) list=@{list#*,} ;; *) list= ;; esac
  done
  case $revisions in ''|*[!0-9a-f]*) return 0 ;; esac
  if read_guard && [ "$known_revisions" = "$revisions" ] && [ "$known_events" = "$events" ]; then return 0; fi
  guard_path || return 0
  dir=@{guard_file%/*}
  tmp=$guard_file.$$.sh.tmp
  (
    umask 077
    mkdir -p "$dir" 2>/dev/null
    set -C
    printf '{"format":1,"server":"%s","profile":"%s","written_at":"%s","guard":{"revisions":"%s","fail_closed_events":[%s]}}\n' \
      "$href" "$profile" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" "$revisions" "$events" > "$tmp" && mv -f "$tmp" "$guard_file"
  ) 2>/dev/null || rm -f "$tmp" 2>/dev/null
  return 0
}

# --on-error for this event: mode, and under auto the reason (hook-guard.ts decideFailure).
decide() {
  decision_why=
  if [ "$on_error" != auto ]; then mode=$on_error; return; fi
  if [ -z "$event" ] || [ -z "$profile" ]; then mode=warn; decision_why="the event is unknown"; return; fi
  if [ -n "$href" ] && read_guard; then
    case ",$known_events," in
      *',"'"$event"'",'*) mode=block; decision_why="$event is guarded by a fail_closed hook in the last plan seen from this server" ;;
      *) mode=warn; decision_why="no fail_closed hook guards $event in the last plan seen from this server" ;;
    esac
  elif is_tool_event "$event"; then
    mode=block; decision_why="$event runs before a tool and no plan of this server is known yet"
  else
    mode=warn; decision_why="$event is not a tool event and no plan of this server is known yet"
  fi
}

# Answer a failure by --on-error and exit (renderFailure of hook.ts).
fail() {
  one_line "$1"
  redact_bearer
  why=$clean
  decide
  if [ -n "$decision_why" ]; then why="$why (on-error=auto: $decision_why)"; mode_said=1; else mode_said=; fi
  case $mode in
    allow) exit 0 ;;
    block)
      if [ "$style" = repo-yaml ]; then
        json=$why
        case $json in *[\\\"]*)
          out=
          while [ -n "$json" ]; do
            c=@{json%"@{json#?}"}
            json=@{json#?}
            case $c in \\|\") out=$out\\$c ;; *) out=$out$c ;; esac
          done
          json=$out ;;
        esac
        printf '{"error":"blocked_by_policy","logs":[{"level":"error","message":"vcp-hooks unavailable: %s"}]}\n' "$json"
        printf 'vcp-hooks hook: %s\n' "$why" >&2
      else
        printf 'vcp-hooks unavailable: %s\n' "$why" >&2
      fi
      exit 2 ;;
    *)
      if [ -n "$mode_said" ]; then printf 'vcp-hooks hook: %s\n' "$why" >&2; else printf 'vcp-hooks hook: %s (on-error=warn)\n' "$why" >&2; fi
      exit 1 ;;
  esac
}

# ── arguments ───────────────────────────────────────────────────────────────────────────────────────

usage() {
  cat <<'USAGE'
usage: vcp-hook.sh <Event> --dialect @@DIALECTS@@ [options]

The POSIX sh form of 'vcp-hooks hook' (curl): reads one event JSON from stdin, asks the server's
profile route, prints the agent's native answer. Options as 'vcp-hooks hook':
  --server URL        vcp-hooks server (default: VCP_SERVER, else http://127.0.0.1:8787)
  --token-env NAME    variable holding the client token (default VCP_CLIENT_TOKEN)
  --token-file PATH   read the token from this file (default: VCP_TOKEN_FILE when the variable is unset)
  --on-error MODE     auto (default) | warn | block | allow
  --timeout-ms N      request deadline (default 10000)
Not here: --record, --daemon, --embedded, --write-shim, and the @@UNSUPPORTED@@ dialect(s): use 'vcp-hooks hook'.
USAGE
}

event= event_raw= dialect= server_raw= server_given= token_env=VCP_CLIENT_TOKEN token_file= token_file_from= on_error=auto on_error_raw= timeout_raw= bad= positionals=0
while [ $# -gt 0 ]; do
  opt=$1
  shift
  has=
  case $opt in --*=*) val=@{opt#*=}; opt=@{opt%%=*}; has=1 ;; esac
  case $opt in
    --dialect|--server|--token-env|--token-file|--on-error|--timeout-ms)
      if [ -z "$has" ]; then
        if [ $# -eq 0 ]; then bad="option '$opt <value>' argument missing"; break; fi
        val=$1
        shift
      fi
      case $opt in
        --dialect) dialect=$val ;;
        --server) server_raw=$val; server_given=1 ;;
        --token-env) token_env=$val ;;
        --token-file) token_file=$val; token_file_from=--token-file ;;
        --on-error) on_error_raw=$val ;;
        --timeout-ms) timeout_raw=$val ;;
      esac ;;
    -h|--help) usage; exit 0 ;;
    --record|--daemon|--embedded|--bundle|--keyring|--allow-unsigned|--write-shim|--out|--json|--print-sh)
      bad="$opt is not supported by the sh adapter: use 'vcp-hooks hook'"; break ;;
    -*) bad="unknown option '$opt'"; break ;;
    *)
      positionals=$((positionals + 1))
      if [ "$positionals" -eq 1 ]; then event=$opt; event_raw=$opt; else bad="one event expected, got $event_raw $opt"; break; fi ;;
  esac
done
case $on_error_raw in
  '') ;;
  auto|warn|block|allow) on_error=$on_error_raw ;;
  *) bad=@{bad:-"--on-error must be auto, warn, block or allow, not '$on_error_raw'"} ;;
esac
# An event name as the Node adapter takes it: [A-Za-z][A-Za-z0-9_:.-]{0,127}.
case $event in
  [A-Za-z]*) case $event in *[!A-Za-z0-9_:.-]*) event= ;; esac; [ @{#event} -le 128 ] || event= ;;
  *) event= ;;
esac

dialect_row "$dialect"
style=@{style:-json}
[ -n "$server_given" ] || server_raw=@{VCP_SERVER-$DEFAULT_SERVER}

# The server URL as the Node adapter's URL parser normalizes the common forms (scheme and host in lower
# case, the default port dropped, an empty path "/"): the guard file is named after it.
href= origin=
normalize_server() {
  case $server_raw in
    [Hh][Tt][Tt][Pp]://*) scheme=http ;;
    [Hh][Tt][Tt][Pp][Ss]://*) scheme=https ;;
    *) return 1 ;;
  esac
  rest=@{server_raw#*://}
  authority=@{rest%%[/?#]*}
  path=@{rest#"$authority"}
  path=@{path%%#*}
  path=@{path%%\?*}
  [ -n "$authority" ] || return 1
  case $authority in *[[:space:][:cntrl:]]*) return 1 ;; esac
  host=$authority port=
  case $authority in
    *\]*|*@*) ;;
    *:*) host=@{authority%:*}; port=@{authority##*:} ;;
  esac
  case $host in *[A-Z]*) host=$(printf '%s' "$host" | tr 'A-Z' 'a-z') ;; esac
  case $scheme:$port in http:80|https:443|*:) port= ;; esac
  origin=$scheme://$host@{port:+:$port}
  href=$origin@{path:-/}
}

if [ -z "$bad" ]; then
  if [ -n "$timeout_raw" ]; then
    case $timeout_raw in
      ''|*[!0-9]*) bad="--timeout-ms must be an integer from 1 to 600000, not '$timeout_raw'" ;;
      *) if [ @{#timeout_raw} -gt 6 ] || [ "$timeout_raw" -lt 1 ] || [ "$timeout_raw" -gt 600000 ]; then bad="--timeout-ms must be an integer from 1 to 600000, not '$timeout_raw'"; fi ;;
    esac
  fi
fi
if ! normalize_server; then
  href=
  if [ -z "$bad" ]; then
    if [ -n "$server_given" ]; then bad="--server must be an http(s) URL, not '$server_raw'"; else bad="VCP_SERVER must be an http(s) URL, not '$server_raw'"; fi
  fi
fi
if [ -z "$bad" ]; then
  case $token_env in
    [A-Za-z_]*) case $token_env in *[!A-Za-z0-9_]*) bad="--token-env must name an environment variable, not '$token_env'" ;; esac ;;
    *) bad="--token-env must name an environment variable, not '$token_env'" ;;
  esac
fi
if [ -z "$bad" ] && [ "$token_file_from" = --token-file ] && [ -z "$token_file" ]; then bad="--token-file must name a file"; fi
if [ -z "$bad" ]; then
  if [ -z "$dialect" ]; then
    bad="--dialect is required (@@DIALECTS@@)"
  elif [ -z "$profile" ]; then
    case $dialect in
      @@UNSUPPORTED@@) bad="--dialect $dialect is not supported by the sh adapter: use 'vcp-hooks hook'" ;;
      *) bad="--dialect must be one of @@DIALECTS@@, not '$dialect'" ;;
    esac
  elif [ "$positionals" -eq 0 ]; then
    bad="no event: give it as the first argument (e.g. 'vcp-hook.sh BeforeTool --dialect gemini')"
  elif [ -z "$event" ]; then
    bad="'$event_raw' is not an event name"
  fi
fi
if [ -n "$bad" ]; then
  [ -n "$dialect" ] && [ -n "$profile" ] || event=
  fail "bad arguments: $bad; see 'vcp-hook.sh --help'"
fi
timeout_ms=@{timeout_raw:-$default_timeout_ms}

# ── the request ─────────────────────────────────────────────────────────────────────────────────────

# The client token: the variable, unless --token-file is given; VCP_TOKEN_FILE when neither is.
eval "token=\@{$token_env-}"
if [ "$token_file_from" != --token-file ] && [ -z "$token" ] && [ -n "@{VCP_TOKEN_FILE-}" ]; then
  token_file=$VCP_TOKEN_FILE
  token_file_from=VCP_TOKEN_FILE
fi
if [ -n "$token_file_from" ]; then
  if [ ! -e "$token_file" ] && [ ! -L "$token_file" ]; then fail "$token_file_from $token_file: cannot read it (ENOENT)"; fi
  [ -f "$token_file" ] || fail "$token_file_from $token_file: not a regular file"
  [ -r "$token_file" ] || fail "$token_file_from $token_file: cannot read it (EACCES)"
  token=
  while IFS= read -r l || [ -n "$l" ]; do
    token="$token$l$NL"
    [ @{#token} -le 4096 ] || fail "$token_file_from $token_file: larger than a token file may be (4096)"
  done < "$token_file"
  token=@{token#"@{token%%[![:space:]]*}"}
  token=@{token%"@{token##*[![:space:]]}"}
  [ -n "$token" ] || fail "$token_file_from $token_file: the file is empty"
  case $token in *[[:space:][:cntrl:]]*) fail "$token_file_from $token_file: a token is one word; the file holds whitespace or control characters inside it" ;; esac
fi
case $token in *[[:space:][:cntrl:]]*) fail "$token_env: a token is one word; the variable holds whitespace or control characters" ;; esac

# The agent's hook environment (tooling/hook-env.ts): the dialect's documented variables that are set.
hook_env=
for name in $env_names; do
  eval "isset=\@{$name+x}"
  [ -n "$isset" ] || continue
  eval "value=\$$name"
  [ @{#value} -le @@VALUE_BYTES@@ ] || fail "the agent's hook environment cannot be sent: $name is @{#value} bytes, more than @@VALUE_BYTES@@"
  case $value in
    *[!A-Za-z0-9._~/-]*)
      if percent_encode "$value"; then
        value=$encoded
      else
        value=$(printf '%s' "$value" | od -An -v -tx1 | tr -s ' \n' '%%')
        value=@{value%\%}
      fi ;;
  esac
  hook_env=$hook_env@{hook_env:+&}$name=$value
done
[ @{#hook_env} -le @@HEADER_BYTES@@ ] || fail "the agent's hook environment cannot be sent: the agent's hook environment is @{#hook_env} bytes encoded, more than @@HEADER_BYTES@@"

path_event=$event
case $path_event in *:*)
  out=
  while [ -n "$path_event" ]; do
    c=@{path_event%"@{path_event#?}"}
    path_event=@{path_event#?}
    case $c in :) out=$out%3A ;; *) out=$out$c ;; esac
  done
  path_event=$out ;;
esac
base=$href
case $base in */) ;; *) base=$base/ ;; esac
ms=$((timeout_ms % 1000))
case @{#ms} in 1) ms=00$ms ;; 2) ms=0$ms ;; esac

# SECURITY: the token and the hook environment go to curl on a descriptor, never on its command line.
# No proxy (curl would honour http_proxy; the Node adapter connects directly), no ~/.curlrc (-q).
# The event streams from stdin (-T -, chunked) so that --max-time bounds reading it too: a stdin the
# agent never closes ends by --timeout-ms, as the Node adapter's hard stop does.
# GNUTLS_NO_IMPLICIT_INIT=1: a curl built on OpenSSL still loads GnuTLS (through librtmp), whose library
# constructor would set up its crypto on every start (~10% of curl's start-up) for nothing; a curl that
# uses GnuTLS for TLS initializes it itself (curl_global_init), so https is unchanged.
headers=
[ -z "$token" ] || headers="authorization: Bearer $token"
[ -z "$hook_env" ] || headers="$headers@{headers:+$NL}x-vcp-hook-env: $hook_env"
max_time=$((timeout_ms / 1000)).$ms
ask() {
  if [ -n "$headers" ]; then
    answer=$(GNUTLS_NO_IMPLICIT_INIT=1 curl -q -sS --noproxy '*' -X POST "$@" -H 'content-type: application/json' -H 'accept: application/json' -H 'expect:' \
      -H @/dev/fd/3 --max-time "$max_time" --max-filesize $MAX_BYTES -D - \
      "@{base}v1/profiles/$profile/events/$path_event?answer=native" 2>/dev/null 3<<HEADERS
$headers
HEADERS
    )
  else
    answer=$(GNUTLS_NO_IMPLICIT_INIT=1 curl -q -sS --noproxy '*' -X POST "$@" -H 'content-type: application/json' -H 'accept: application/json' -H 'expect:' \
      --max-time "$max_time" --max-filesize $MAX_BYTES -D - \
      "@{base}v1/profiles/$profile/events/$path_event?answer=native" 2>/dev/null)
  fi
}
ask -T -
rc=$?
case $rc in
  55|56)
    # The connection failed while the event was going out: a server that refused it early (a body over
    # its limit) closed it before curl read the answer. The same request without the event: a server
    # that refuses a guarded event answers its block (exit code 2) again, and only that is taken.
    [ "$timeout_ms" -le 2000 ] || max_time=2
    ask --data-binary ''
    case $?:$answer in
      0:*"$NL"x-vcp-exit-code:' '2"$CR"*) rc=0 ;;
    esac ;;
esac
case $rc in
  0) ;;
  7) fail "$origin unreachable: ECONNREFUSED" ;;
  6) fail "$origin unreachable: ENOTFOUND" ;;
  28) fail "no answer from $origin within $timeout_ms ms" ;;
  52) fail "$origin closed the connection without a complete answer" ;;
  1|8) fail "$origin did not answer HTTP/1.1" ;;
  55|56) fail "$origin unreachable: ECONNRESET" ;;
  63) fail "the server's answer is larger than $MAX_BYTES bytes" ;;
  26) fail "stdin could not be read" ;;
  127) fail "curl is not installed (the sh adapter needs it; or use 'vcp-hooks hook')" ;;
  *) fail "$origin unreachable: curl exit $rc" ;;
esac

# ── the answer ──────────────────────────────────────────────────────────────────────────────────────

case $answer in
  HTTP/1.[01]' '[0-9][0-9][0-9]*"$CR$NL$CR$NL"*) ;;
  *) fail "$origin did not answer HTTP/1.1" ;;
esac
head=@{answer%%"$CR$NL$CR$NL"*}
body=@{answer#*"$CR$NL$CR$NL"}
status=@{head#HTTP/1.? }
status=@{status%"@{status#???}"}
header() {
  case $head in
    *"$NL$1:"*) value=@{head#*"$NL$1:"}; value=@{value%%"$CR"*}; value=@{value# } ;;
    *) value=; return 1 ;;
  esac
}
server_message() {
  said=
  case $body in *'"error":{'*'"message":"'*) ;; *) return ;; esac
  code=
  case $body in *'"code":"'*) code=@{body#*'"code":"'}; code=@{code%%'"'*} ;; esac
  message=@{body#*'"message":"'}
  message=@{message%%'","details"'*}
  message=@{message%%'"}'*}
  said="@{code:+$code: }$message"
}
case $status in
  4??)
    server_message
    hint=
    [ "$status" != 401 ] || [ -n "$token" ] || hint=" (no token was sent: set $token_env, or pass --token-file)"
    fail "$origin refused the event: $status@{said:+ $said}$hint" ;;
  2??) ;;
  *)
    server_message
    fail "$origin answered $status@{said:+: $said}" ;;
esac
header x-vcp-exit-code
exit_code=$value
case $exit_code in
  0|1|2) ;;
  *) fail "$origin answered $status without { native, exit_code }: is --server a vcp-hooks server with profiles?" ;;
esac
case $body in
  '{'*'}') ;;
  *) fail "$origin answered $status with a body that is not JSON" ;;
esac
# What this answer says of the plan's fail_closed guards, for the next failure (an older server says nothing).
if header x-vcp-guard-revisions; then
  revisions=$value
  header x-vcp-fail-closed-events
  write_guard "$revisions" "$value"
fi

# stderr first (as the Node adapter writes it): the answer's X-VCP-Stderr, percent-decoded.
if header x-vcp-stderr && [ -n "$value" ]; then
  s=$value
  fmt=
  while :; do
    case $s in *%??*) ;; *) break ;; esac
    pre=@{s%%\%*}
    s=@{s#*%}
    hex=@{s%"@{s#??}"}
    s=@{s#??}
    case $hex in *[!0-9A-Fa-f]*) fmt="$fmt$pre%%$hex"; continue ;; esac
    n=$((0x$hex))
    fmt="$fmt$pre\\$((n / 64))$((n / 8 % 8))$((n % 8))"
  done
  printf -- "$fmt$s\n" >&2
fi
# JSON leaves NEL, LINE and PARAGRAPH SEPARATOR raw; readers that split lines on them would cut the answer.
for sep in "$NEL" "$LS" "$PS"; do
  while :; do
    case $body in
      *"$sep"*)
        case $sep in "$NEL") escaped='\u0085' ;; "$LS") escaped='\u2028' ;; *) escaped='\u2029' ;; esac
        body=@{body%%"$sep"*}$escaped@{body#*"$sep"} ;;
      *) break ;;
    esac
  done
done
printf '%s\n' "$body"
if [ "$style" = repo-yaml ] && [ "$exit_code" = 2 ]; then exit 2; fi
exit 0
`;
