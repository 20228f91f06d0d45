import type { Command } from "commander";

const HELP = `
The page shows the tree of children live, a child's turns, answer and pane text, the
questions and permission requests waiting on you (answer, allow, deny), a follow-up box
and cancel. The URL with a random token is printed once on stderr (and the token written
to --token-file); the page trades it for a cookie. Requests without the token, naming
another Host or coming from another Origin are refused. From a phone or another machine,
use an SSH tunnel (ssh -L 7420:127.0.0.1:7420 host), not an open port. See docs/web.md.`;

interface WebFlags {
  primary?: string;
  listen?: string;
  tokenFile?: string;
  allowRemote?: boolean;
}

/** `muster web`: watch and answer children from a browser. */
export function registerWeb(program: Command): void {
  program
    .command("web")
    .summary("watch and answer children from a browser (a local web page)")
    .description(
      "Serve a web page over this primary's children on loopback until Ctrl-C; the children keep running.",
    )
    .option("--primary <id>", "act for this primary (default: MUSTER_PRIMARY, else this directory's)")
    .option("--listen <host:port>", "where to listen (default 127.0.0.1:7420; port 0: any free one)")
    .option("--token-file <file>", "also write the token here (mode 0600)")
    .option("--allow-remote", "allow an address other machines can reach (prints a warning)")
    .addHelpText("after", HELP)
    .action(async (flags: WebFlags) => {
      // The server and its feed load only for `muster web`.
      const { serveWeb, DEFAULT_WEB_LISTEN } = await import("../../web/server.js");
      await serveWeb(
        {
          listen: flags.listen ?? DEFAULT_WEB_LISTEN,
          ...(flags.tokenFile ? { tokenFile: flags.tokenFile } : {}),
          ...(flags.allowRemote ? { allowRemote: true } : {}),
          ...(flags.primary ? { primary: flags.primary } : {}),
        },
        (line) => process.stderr.write(`${line}\n`),
      );
    });
}
