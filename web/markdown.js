// A child's answer as Markdown, built from DOM nodes: every piece of its text becomes a text node, never
// markup, so an answer cannot inject into the page. The common subset agents write: headings, paragraphs,
// fenced code, lists, quotes, rules, and inline code, bold, italic and links (http and https only).

/** Inline spans of one line of text: code, bold, italic, links; the rest is text. */
function inline(text) {
  const out = [];
  const re =
    /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > at) out.push(document.createTextNode(text.slice(at, m.index)));
    at = m.index + m[0].length;
    if (m[1] !== undefined) out.push(node("code", m[1]));
    else if (m[2] !== undefined || m[3] !== undefined) out.push(node("strong", m[2] ?? m[3]));
    else if (m[4] !== undefined || m[5] !== undefined) out.push(node("em", m[4] ?? m[5]));
    else out.push(link(m[6], m[7]));
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}

function node(tag, text) {
  const e = document.createElement(tag);
  e.textContent = text;
  return e;
}

/** A link only to http(s); anything else (javascript:, data:, a relative path) stays text. */
function link(label, href) {
  let url;
  try {
    url = new URL(href);
  } catch {
    return document.createTextNode(`${label} (${href})`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return document.createTextNode(`${label} (${href})`);
  const a = node("a", label);
  a.setAttribute("href", url.href);
  a.setAttribute("rel", "noopener noreferrer");
  a.setAttribute("target", "_blank");
  return a;
}

function withInline(tag, text) {
  const e = document.createElement(tag);
  e.append(...inline(text));
  return e;
}

const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)\s*$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;

/** The answer as a fragment of DOM nodes. */
export function renderMarkdown(text) {
  const root = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      const pre = document.createElement("pre");
      pre.className = "md-code";
      pre.append(node("code", body.join("\n")));
      root.append(pre);
      continue;
    }
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      root.append(withInline(`h${Math.min(heading[1].length + 3, 6)}`, heading[2]));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      root.append(document.createElement("hr"));
      i += 1;
      continue;
    }
    const list = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : null;
    if (list) {
      const ul = document.createElement(list === BULLET ? "ul" : "ol");
      while (i < lines.length && list.test(lines[i])) ul.append(withInline("li", list.exec(lines[i++])[1]));
      root.append(ul);
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(QUOTE.exec(lines[i++])[1]);
      const q = document.createElement("blockquote");
      q.append(renderMarkdown(quoted.join("\n")));
      root.append(q);
      continue;
    }
    // A paragraph: lines up to a blank line or another block; its line breaks are kept (agents mean them).
    const para = [];
    while (
      i < lines.length &&
      lines[i].trim() !== "" &&
      !FENCE.test(lines[i]) &&
      !HEADING.test(lines[i]) &&
      !BULLET.test(lines[i]) &&
      !NUMBERED.test(lines[i]) &&
      !QUOTE.test(lines[i])
    )
      para.push(lines[i++]);
    root.append(withInline("p", para.join("\n")));
  }
  return root;
}
