/** US dollars for people: three significant digits below $1 ($0.000423), cents above ($12.34); no float noise. */
export function formatUsd(usd: number): string {
  if (!Number.isFinite(usd)) return "$?";
  if (usd === 0) return "$0";
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${Number(usd.toPrecision(3))}`;
}
