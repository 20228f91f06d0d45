// JSON config text: comments blanked for reading, and where a file that does not parse goes wrong (V8's
// messages name a position only sometimes: "Unexpected token 'x', "…" is not valid JSON" has none).

const WS = new Set([" ", "\t", "\n", "\r"]);

/**
 * JSON text with // and /* *\/ comments and trailing commas turned into spaces (strings kept, newlines
 * kept): every offset still points where it did in the file, so an error names the file's own line.
 */
export function stripJsonComments(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (c === "/" && text[i + 1] === "/") {
      let j = i;
      while (j < text.length && text[j] !== "\n" && text[j] !== "\r") j++;
      out += " ".repeat(j - i);
      i = j - 1;
    } else if (c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2);
      const end = close < 0 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\r\n]/g, " ");
      i = end - 1;
    } else out += c;
  }
  // A comma whose next non-space is a closing bracket (strings skipped, so one inside a string stays).
  let res = "";
  for (let i = 0; i < out.length; i++) {
    const c = out[i]!;
    if (c === '"') {
      const end = stringEnd(out, i);
      res += out.slice(i, end);
      i = end - 1;
    } else if (c === ",") {
      let j = i + 1;
      while (j < out.length && WS.has(out[j]!)) j++;
      res += out[j] === "}" || out[j] === "]" ? " " : c;
    } else res += c;
  }
  return res;
}

/** The offset just past the string starting at `i` (a quote), or the end of the text when unterminated. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
  return Math.min(j + 1, text.length);
}

/** 1-based line and column of `offset` (CRLF, LF or CR ends a line). */
export function lineCol(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split(/\r\n|\r|\n/);
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * Where strict JSON `text` first goes wrong and what was expected there; undefined when it is valid.
 * Iterative (an explicit stack), so a deeply nested hostile file cannot overflow the call stack.
 */
export function jsonErrorAt(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  const stack: ("{" | "[")[] = [];
  const ws = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const fail = (reason: string) => ({
    offset: i,
    reason: i >= text.length ? `${reason}, got the end` : reason,
  });
  const string = (): string | undefined => {
    i++;
    for (;;) {
      if (i >= text.length) return "unterminated string";
      const c = text[i]!;
      if (c === '"') {
        i++;
        return undefined;
      }
      if (c === "\\") {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return "bad escape in a string";
        i = ESCAPE.lastIndex;
      } else if (c.charCodeAt(0) < 0x20) return "control character (a raw line break?) in a string";
      else i++;
    }
  };
  // After a value: a comma or the closing bracket of the container, or the end of the text.
  const afterValue = (): { offset: number; reason: string } | "value" | "key" | "done" => {
    for (;;) {
      ws();
      const top = stack.at(-1);
      if (top === undefined) return i >= text.length ? "done" : fail("unexpected text after the end");
      const close = top === "{" ? "}" : "]";
      if (text[i] === close) {
        stack.pop();
        i++;
        continue;
      }
      if (text[i] !== ",") return fail(`expected ',' or '${close}'`);
      i++;
      return top === "{" ? "key" : "value";
    }
  };
  let want: "value" | "key" | "firstKey" | "firstValue" = "value";
  for (;;) {
    ws();
    if (want === "key" || want === "firstKey") {
      if (want === "firstKey" && text[i] === "}") {
        stack.pop();
        i++;
      } else {
        if (text[i] !== '"') return fail("expected a double-quoted property name");
        const bad = string();
        if (bad) return fail(bad);
        ws();
        if (text[i] !== ":") return fail("expected ':' after the property name");
        i++;
        want = "value";
        continue;
      }
    } else if (want === "firstValue" && text[i] === "]") {
      stack.pop();
      i++;
    } else {
      const c = text[i];
      if (c === "{" || c === "[") {
        stack.push(c);
        i++;
        want = c === "{" ? "firstKey" : "firstValue";
        continue;
      }
      if (c === '"') {
        const bad = string();
        if (bad) return fail(bad);
      } else {
        const lit = ["true", "false", "null"].find((w) => text.startsWith(w, i));
        NUMBER.lastIndex = i;
        if (lit) i += lit.length;
        else if (NUMBER.test(text)) i = NUMBER.lastIndex;
        else return fail("expected a value");
      }
    }
    const next = afterValue();
    if (next === "done") return undefined;
    if (typeof next === "object") return next;
    want = next;
  }
}
