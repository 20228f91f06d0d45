/**
 * `node dist/place/k8s/exec-main.js <context|-> <namespace> <pod> <container> [--tty] -- <argv…>`: argv run in
 * a Pod's container through the API's exec (as `kubectl exec -i` would, with no kubectl needed), this
 * process's stdin and stdout joined to it. The Pod place's mirror link runs through it, and a person's
 * terminal (`--tty`: raw mode, resizes follow). Exits with the command's exit code, 255 when the API refused
 * or could not be reached (its one line on stderr).
 */
import { apiSaid, exitCodeOf, k8s, kubeConfig } from "./client.js";

async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf("--");
  const head = dash < 0 ? argv : argv.slice(0, dash);
  const command = dash < 0 ? [] : argv.slice(dash + 1);
  const tty = head.includes("--tty");
  const [context, namespace, pod, container] = head.filter((a) => a !== "--tty");
  if (!context || !namespace || !pod || !container || command.length === 0) {
    process.stderr.write(
      "usage: exec-main.js <context|-> <namespace> <pod> <container> [--tty] -- <argv…>\n",
    );
    return 2;
  }
  const kc = await kubeConfig(process.env, context === "-" ? undefined : context);
  const { Exec } = await k8s();
  if (tty && process.stdin.isTTY) process.stdin.setRawMode(true);
  return new Promise<number>((resolve) => {
    let code: number | undefined;
    new Exec(kc)
      .exec(
        namespace,
        pod,
        container,
        command,
        process.stdout,
        tty ? null : process.stderr,
        process.stdin,
        tty,
        (s) => {
          code = exitCodeOf(s);
        },
      )
      .then((ws) => {
        ws.on("close", () => resolve(code ?? 255));
      })
      .catch((e: unknown) => {
        process.stderr.write(`pod ${pod}: ${apiSaid(e)}\n`);
        resolve(255);
      });
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (process.stdin.isTTY) process.stdin.setRawMode(false);
    process.exit(code);
  },
  (e: Error) => {
    process.stderr.write(`${e.message}\n`);
    process.exit(255);
  },
);
