// Shared by the benchmark scripts: percentiles, rounding and a wall clock in ms comparable across processes.

/** The p-th percentile (nearest rank) of xs. */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

export const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Milliseconds since the epoch with sub-ms precision (timestamps written by other processes compare to it). */
export const now = () => performance.timeOrigin + performance.now();
