// No imports: the child-side fast path (cli/child-commands.ts) uses this too.

/** Offset of the first byte that does not begin or continue a valid UTF-8 sequence (for the message). */
export function invalidUtf8At(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    const c1 = b[i + 1] ?? 0;
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF are invalid too.
    const badSecond =
      (c === 0xe0 && c1 < 0xa0) ||
      (c === 0xed && c1 > 0x9f) ||
      (c === 0xf0 && c1 < 0x90) ||
      (c === 0xf4 && c1 > 0x8f);
    if (n === 0 || badSecond) return i;
    for (let k = 1; k <= n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}
