/**
 * Ctrl-C for the CLI: one SIGINT listener, installed by bin/muster.js before the CLI loads. A command with
 * something to wind down (a wait reports what settled, the demo removes its children) takes the interrupt
 * while it runs; otherwise the process ends at once with 130, the exit-code table's "interrupted" — also when
 * Ctrl-C comes before the command got that far (rather than dying of the signal, as Node would).
 */
const takers: (() => void)[] = [];
let installed = false;

export function installInterrupt(): void {
  if (installed) return;
  installed = true;
  process.on("SIGINT", () => {
    // Each taker hears Ctrl-C once; another Ctrl-C goes to the next one, or ends the process.
    const take = takers.pop();
    if (take) take();
    else process.exit(130);
  });
}

/** Routes the next Ctrl-C to fn until the returned release is called. */
export function takeInterrupt(fn: () => void): () => void {
  installInterrupt();
  takers.push(fn);
  return () => {
    const i = takers.lastIndexOf(fn);
    if (i >= 0) takers.splice(i, 1);
  };
}
