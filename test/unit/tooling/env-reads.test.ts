// What a migrated script reads from its environment (issue 26 item 3): the scan `import` warns from.
import { describe, expect, test } from "vitest";
import { envReads } from "../../../src/tooling/import/env-reads.js";

describe("envReads", () => {
  test.each([
    ["node", "const a = process.env.API_URL; const b = process.env['TOKEN_2']; process.env?.OPT;", ["API_URL", "OPT", "TOKEN_2"]],
    ["python", "import os\nx = os.environ['PY_A']\ny = os.environ.get(\"PY_B\")\nz = os.getenv('PY_C')\n", ["PY_A", "PY_B", "PY_C"]],
    ["ruby / perl / go / rust / deno / bun", "ENV['RB'] ENV.fetch(\"RB2\") $ENV{PL} os.Getenv(\"GO\") std::env::var(\"RS\") Deno.env.get('DN') Bun.env.BN", ["BN", "DN", "GO", "PL", "RB", "RB2", "RS"]],
    ["a shell script: UPPER_CASE reads it does not assign, not the shell's own", "#!/usr/bin/env bash\nOUT=/tmp\nexport LEVEL=1\nread -r LINE\nfor ITEM in a; do :; done\necho \"$OUT $LEVEL $LINE $ITEM ${CLAUDE_PROJECT_DIR} ${MISSING:-x} $IFS $PWD $RANDOM $BASH_SOURCE $1 $lower\"\n", ["CLAUDE_PROJECT_DIR", "MISSING"]],
    ["a non-shell file: $X is not a read", "#!/usr/bin/env python3\nprint('$NOT_A_READ')\n", []],
  ])("%s", (_name, text, expected) => {
    expect(envReads(text)).toEqual(expected);
  });

  test("a shell-string hook is scanned as shell", () => {
    expect(envReads('echo "$DEPLOY_ENV" >> /tmp/x', true)).toEqual(["DEPLOY_ENV"]);
  });
});
