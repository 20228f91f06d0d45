// A parent whose environment has no UTF-8 locale (Claude Code's MCP servers can start that way): tmux then
// prints each tab of a -F format as "_", and spawn could not read the pane id it answered.
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

describe("tmux without a UTF-8 locale", () => {
  const sb = useSandbox("mt-locale");

  it("spawn --wait completes when LANG, LC_ALL and LC_CTYPE are unset", async () => {
    // sb.run merges opts.env over the sandbox's env: undefined unsets a variable.
    const unset = { LANG: undefined, LC_ALL: undefined, LC_CTYPE: undefined, LANGUAGE: undefined };
    const r = await sb.json(["spawn", "--wait", "--timeout", "60", "say hi"], { env: unset });
    expect(r.data.results?.[0]?.status, `${JSON.stringify(r.data)} ${r.stderr}`).toBe("completed");
  });
});
