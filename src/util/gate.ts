/**
 * At most `width` tasks at once; the rest wait their turn in arrival order. A waiter's own clock (a
 * command's timeout) starts when it is let through, so a queue behind a burst is not mistaken for a hang.
 */
export class Gate {
  private running = 0;
  private readonly waiting: Array<{ go: () => void; fail: (e: Error) => void }> = [];

  constructor(readonly width: number) {
    if (!Number.isInteger(width) || width < 1)
      throw new RangeError(`gate width must be a whole number ≥ 1, not ${width}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.width) await new Promise<void>((go, fail) => this.waiting.push({ go, fail }));
    else this.running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter: `running` stays counted for it.
      const next = this.waiting.shift();
      if (next) next.go();
      else this.running--;
    }
  }

  /** Ends every task still waiting with `error` (what is behind a hung resource would only hang too). */
  failWaiting(error: Error): void {
    for (const w of this.waiting.splice(0)) w.fail(error);
  }

  /** Tasks let through and not yet ended, and tasks waiting. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
