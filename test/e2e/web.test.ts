/**
 * `muster web` in a real headless Chromium (the system's, driven by playwright-core): the tree arrives live,
 * a child's pane (a live terminal) and answer show, a question and a permission request are answered from the
 * page, a follow-up is sent, a child is cancelled behind a confirmation; and the guard refuses what it must (no token, a foreign Origin or Host, a
 * cross-site form post), before any routing, `/` included. Screenshots go to a temp folder, removed after the
 * run unless MUSTER_KEEP_WEB_SCREENSHOTS=1 (which says where it is); MUSTER_UPDATE_DOCS_SCREENSHOT=1 also copies
 * the permission view to docs/web.png.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { BIN, REPO, until, useSandbox } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import { type RawRequest, rawRequest } from "../helpers/http.js";

const sb = useSandbox("mt-web");
const tokenFile = path.join(sb.home, "tokens", "web-token");
// The main views as a person sees them, kept after the run only when asked for.
const shots = fs.mkdtempSync(path.join(os.tmpdir(), "muster-web-screens-"));
const keepShots = process.env.MUSTER_KEEP_WEB_SCREENSHOTS === "1";
const CHROMIUM = process.env.MUSTER_CHROMIUM ?? "/usr/bin/chromium";
// As with the container engines: a machine without Chromium skips the browser's tests, saying so; CI installs
// it (.ci/run), where its absence is a failure.
const noBrowser = !fs.existsSync(CHROMIUM) && !process.env.CI;
if (noBrowser)
  console.warn(
    `muster web: no Chromium at ${CHROMIUM} (apt-get install chromium): its browser tests are skipped`,
  );

let server: ChildProcess | undefined;
let port = 0;
let token = "";
let browser: Browser | undefined;
let stderr = "";

const request = (opts: RawRequest) => rawRequest(port, opts);

const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function spawnChild(args: string[]): Promise<string> {
  const r = await sb.run(["spawn", "--json", ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).id as string;
}

async function newPage(viewport = { width: 1200, height: 860 }): Promise<Page> {
  const context = await browser!.newContext({ viewport });
  const page = await context.newPage();
  // A child-supplied string that ran as script would open a dialog: none may.
  page.on("dialog", (d) => {
    throw new Error(`unexpected dialog: ${d.message()}`);
  });
  return page;
}

/** What the page's terminal shows, row by row, as xterm.js renders it. */
const terminalText = (page: Page): Promise<string> =>
  page.locator("[data-testid=terminal] .xterm-rows").innerText();

/** The tmux sessions the page's terminals opened on the sandbox's server. */
async function viewerSessions(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-sessions", "-F", "#{session_name}"], {
    reject: false,
  });
  return r.stdout.split("\n").filter((n) => n.startsWith("muster-view-"));
}

/** The status of a WebSocket upgrade to the terminal path with these headers (101 when it opens). */
function upgradeStatus(id: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/children/${id}/terminal`, {
      headers: { host: `127.0.0.1:${port}`, ...headers },
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("error", (e) => {
      if (!/Unexpected server response/.test(e.message)) reject(e);
    });
  });
}

beforeAll(async () => {
  // A small ACP agent (test/fixtures/acp-agent.mjs) whose tool call asks permission through muster.
  fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
  fs.writeFileSync(
    path.join(sb.cwd, ".muster", "agents", "acp-echo.md"),
    `---\ndescription: an ACP agent\nrunner: acp\ncommand: ${JSON.stringify([process.execPath, path.join(REPO, "test", "fixtures", "acp-agent.mjs")])}\n---\n`,
  );
  server = spawn(process.execPath, [BIN, "web", "--listen", "127.0.0.1:0", "--token-file", tokenFile], {
    cwd: sb.cwd,
    // Terminal sockets pinged every half second: a socket that stops answering goes within a second.
    env: { ...sb.env, MUSTER_WEB_HEARTBEAT_MS: "500" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  server.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const m = await until(() => /http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)/.exec(stderr), 15_000).catch(
    (e: Error) => {
      throw new Error(`${e.message}; the server said: ${stderr}`);
    },
  );
  port = Number(m[1]);
  token = m[2]!;
  if (!noBrowser) browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  if (keepShots) console.log(`muster web: screenshots kept in ${shots}`);
  else fs.rmSync(shots, { recursive: true, force: true });
});

describe("muster web: the guard, before any routing", () => {
  it("prints the URL with the token once, and writes the token file for the owner alone", () => {
    expect(stderr.match(/\?token=/g)).toHaveLength(1);
    expect(fs.readFileSync(tokenFile, "utf8").trim()).toBe(token);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
  });

  it("refuses a request without the token (/ included), a foreign Origin or Host, a form post", async () => {
    for (const p of ["/", "/app.js", "/api/children", "/api/events", "/nope"])
      expect((await request({ path: p })).status, p).toBe(401);
    expect((await request({ path: "/?token=wrong" })).status).toBe(401);
    expect((await request({ path: "/api/children", headers: { cookie: "muster_token=wrong" } })).status).toBe(
      401,
    );
    expect((await request({ path: "/", headers: { ...auth(), origin: "http://evil.example" } })).status).toBe(
      403,
    );
    expect((await request({ path: "/", headers: { ...auth(), host: `evil.example:${port}` } })).status).toBe(
      403,
    );
    // A form's content type is refused even with the right token and no Origin.
    const form = await request({
      path: "/api/children/x/cancel",
      method: "POST",
      headers: { ...auth(), "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    });
    expect(form.status).toBe(415);
    // With the token: the page, its assets, nothing from the disk by path.
    expect((await request({ path: "/", headers: auth() })).status).toBe(200);
    for (const p of ["/../package.json", "/app.js/../../package.json", "/%2e%2e/package.json", "/web/app.js"])
      expect((await request({ path: p, headers: auth() })).status, p).toBe(404);
    // No state change on GET.
    expect((await request({ path: "/api/children/x/cancel", headers: auth() })).status).toBe(405);
  });

  it("a terminal's WebSocket passes the same guard: no token, a foreign Origin or Host is refused", async () => {
    const id = await spawnChild(["--name", "guarded", "kept\nmock: sleep=0"]);
    expect(await upgradeStatus(id, {})).toBe(401);
    expect(await upgradeStatus(id, { cookie: "muster_token=wrong" })).toBe(401);
    expect(await upgradeStatus(id, { ...auth(), origin: "http://evil.example" })).toBe(403);
    expect(await upgradeStatus(id, { ...auth(), host: `evil.example:${port}` })).toBe(403);
    // Only the terminal's path upgrades.
    expect(await upgradeStatus("x/../../api/events", auth())).toBe(404);
    expect(await upgradeStatus(id, auth())).toBe(101);
  });

  it("a terminal socket that stops answering pings is closed and its viewer ended; one that answers stays", async () => {
    const id = await spawnChild(["--name", "pinged", "kept\nmock: sleep=0"]);
    const open = (autoPong: boolean) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/children/${id}/terminal`, {
          headers: { host: `127.0.0.1:${port}`, ...auth() },
          autoPong,
        });
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      });
    const before = (await viewerSessions()).length;
    const silent = await open(false);
    const closed = new Promise((r) => silent.once("close", r));
    const live = await open(true);
    await until(async () => (await viewerSessions()).length >= before + 1 || undefined, 15_000);
    await closed;
    // The silent one's viewer went with it; the one that answers is open, its viewer running.
    await until(async () => (await viewerSessions()).length === before + 1 || undefined, 15_000);
    expect(live.readyState).toBe(WebSocket.OPEN);
    live.close();
    await until(async () => (await viewerSessions()).length === before || undefined, 15_000);
  });

  it("trades a page load's ?token= for an HttpOnly SameSite=Strict cookie and drops it from the address", async () => {
    const r = await request({ path: `/?token=${encodeURIComponent(token)}&x=1` });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/?x=1");
    expect(r.headers["set-cookie"]?.[0]).toBe(`muster_token=${token}; HttpOnly; SameSite=Strict; Path=/`);
    // The API takes the token in a header or the cookie, never in the URL.
    expect((await request({ path: `/api/children?token=${token}` })).status).toBe(401);
  });

  it.skipIf(noBrowser)(
    "a cross-site form post from another page in the browser is refused and changes nothing",
    async () => {
      const id = await spawnChild(["--name", "target", "kept\nmock: sleep=0"]);
      // The attacker's page: another origin (another port), a form that posts to the web server on load.
      const evil = http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(
          `<form id="f" method="POST" action="http://127.0.0.1:${port}/api/children/${id}/cancel" enctype="text/plain"><input name='{"a":"' value='"}'></form><script>document.getElementById("f").submit()</script>`,
        );
      });
      await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
      const page = await newPage();
      try {
        // The victim has the cookie: the page was opened with the token in this browser first.
        await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
        const evilPort = (evil.address() as { port: number }).port;
        const answered = page.waitForResponse((r) => r.url().includes("/cancel"));
        await page.goto(`http://127.0.0.1:${evilPort}/`);
        const res = await answered;
        expect([401, 403]).toContain(res.status());
        expect((await sb.json(["status", id])).data.status).not.toMatch(/closed|lost/);
      } finally {
        await page.context().close();
        await new Promise((r) => evil.close(r));
      }
    },
  );
});

describe.skipIf(noBrowser)("muster web in a browser", () => {
  it("shows children live, a pane and an answer; answers a question; sends a follow-up; cancels after confirming", async () => {
    const page = await newPage();
    try {
      await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
      // The token left the address bar for a cookie the page script cannot read.
      expect(page.url()).toBe(`http://127.0.0.1:${port}/`);
      expect(await page.evaluate(() => document.cookie)).toBe("");
      await page.getByTestId("conn").filter({ hasText: "live" }).waitFor();
      const before = await page.getByTestId("child").count();

      // Two children spawned after the page loaded appear without a reload.
      const a = await spawnChild([
        "--name",
        "alpha",
        "first task <img src=x onerror=alert(1)>\nmock: sleep=1 tools=2",
      ]);
      const b = await spawnChild(["--name", "beta", "second task\nmock: sleep=1"]);
      await until(async () => (await page.getByTestId("child").count()) === before + 2, 20_000);
      await page.locator(`[data-id="${b}"]`).getByText("beta").waitFor();
      await until(
        async () =>
          (await page.locator(`[data-id="${a}"] [data-testid=state]`).textContent()) === "waiting-input",
        30_000,
      );
      await page.screenshot({ path: path.join(shots, "tree.png"), fullPage: true });

      // Open alpha: its pane as a live terminal (read-only) and its answer, the child's markup shown as
      // text, never run.
      await page.locator(`[data-id="${a}"]`).click();
      await page.getByTestId("term-state").filter({ hasText: "live · read-only" }).waitFor();
      await until(async () => (await terminalText(page)).includes("first task"), 20_000);
      await until(
        async () => (await page.getByTestId("result").textContent())?.includes("Task: first task <img"),
        20_000,
      );
      expect(await page.locator("#detail-pane img").count()).toBe(0);
      await page.screenshot({ path: path.join(shots, "child.png"), fullPage: true });

      // A follow-up: a second turn runs in the same child.
      await page.getByTestId("send-text").fill("follow-up please\nmock: sleep=0.5");
      await page.getByTestId("send").click();
      await page.getByTestId("msg").filter({ hasText: "sent" }).waitFor();
      await until(async () => (await page.getByTestId("turn").count()) === 2, 30_000);
      await until(
        async () => (await page.getByTestId("result").textContent())?.includes("Task: follow-up please"),
        30_000,
      );

      // A question from a child (muster ask) is answered from the page, and the child goes on.
      const asker = await spawnChild([
        "--agent",
        "command",
        "--name",
        "asker",
        "task",
        "--",
        "sh",
        "-c",
        'a=$(muster ask "Which branch?" --choices main,dev) && echo "got $a"',
        "sh",
      ]);
      const q = page.locator(`[data-testid=request]`).filter({ hasText: "Which branch?" });
      await q.waitFor({ timeout: 20_000 });
      await page.screenshot({ path: path.join(shots, "inbox.png"), fullPage: true });
      await q.getByRole("button", { name: "dev" }).click();
      await q.waitFor({ state: "detached", timeout: 20_000 });
      await until(async () => (await sb.json(["status", asker])).data.lastOutcome === "completed", 30_000);
      await page.locator(`[data-id="${asker}"]`).click();
      await until(async () => (await page.getByTestId("result").textContent())?.includes("got dev"), 20_000);

      // A permission request from an ACP agent's tool call: Allow in the page, and the child goes on.
      const permDir = path.join(sb.cwd, "..", "perm-work");
      fs.mkdirSync(permDir, { recursive: true });
      const asking = await spawnChild(["--agent", "acp-echo", "--cwd", permDir, "ask permission"]);
      const p = page.locator("[data-testid=request]").filter({ hasText: "echo ok > perm.txt" });
      await p.waitFor({ timeout: 30_000 });
      expect(await p.textContent()).toMatch(/^permission from acp-echo/);
      await page.screenshot({ path: path.join(shots, "permission.png"), fullPage: true });
      await p.getByTestId("allow").click();
      await p.waitFor({ state: "detached", timeout: 20_000 });
      await until(async () => (await sb.json(["status", asking])).data.lastOutcome === "completed", 30_000);
      expect((await sb.json(["result", asking])).data.text).toMatch(/^permission granted \(ok\)/);
      expect(fs.readFileSync(path.join(permDir, "perm.txt"), "utf8")).toBe("ok");

      // Cancel asks first; "Keep it" keeps it, "Yes, cancel" cancels.
      await page.locator(`[data-id="${b}"]`).click();
      await page.getByTestId("cancel").click();
      await page.getByRole("button", { name: "Keep it" }).click();
      expect(await page.getByTestId("cancel-yes").isVisible()).toBe(false);
      await page.getByTestId("cancel").click();
      await page.getByTestId("cancel-yes").click();
      await page.getByTestId("msg").filter({ hasText: "cancelled" }).waitFor();
      await until(async () => /closed|lost/.test((await sb.json(["status", b])).data.status), 30_000);
      await until(async () => await page.getByTestId("cancel").isDisabled(), 20_000);

      if (process.env.MUSTER_UPDATE_DOCS_SCREENSHOT)
        fs.copyFileSync(path.join(shots, "permission.png"), path.join(REPO, "docs", "web.png"));
    } finally {
      await page.context().close();
    }
  }, 180_000);

  it("a child's terminal is read-only until Take input; then a typed line reaches the child", async () => {
    const id = await spawnChild(["--name", "typist", "ready for keys\nmock: sleep=0"]);
    await until(async () => (await sb.json(["status", id])).data.lastOutcome === "completed", 30_000);
    const page = await newPage();
    try {
      await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
      await page.locator(`[data-id="${id}"]`).click();
      await page.getByTestId("term-state").filter({ hasText: "live · read-only" }).waitFor();
      await until(async () => (await terminalText(page)).includes("ready for keys"), 20_000);
      // Keys typed read-only go nowhere: had they reached the pane, this line would be the next turn.
      await page.getByTestId("terminal").click();
      await page.keyboard.type("dropped line");
      await page.keyboard.press("Enter");
      await page.getByTestId("take-input").check();
      await page.getByTestId("term-state").filter({ hasText: "your keys go to the child" }).waitFor();
      await page.getByTestId("terminal").click();
      await page.keyboard.type("typed in the page");
      await page.keyboard.press("Enter");
      await until(async () => (await sb.json(["status", id])).data.turns === 2, 30_000);
      await until(async () => (await sb.json(["status", id])).data.lastOutcome === "completed", 30_000);
      const r = await sb.json(["result", id]);
      expect(r.data.text).toContain("Task: typed in the page");
      expect(r.data.text).not.toContain("dropped line");
      await until(async () => (await terminalText(page)).includes("typed in the page"), 20_000);
      await page.screenshot({ path: path.join(shots, "terminal.png"), fullPage: true });
      // The viewer had a tmux session of its own, which the person attached to muster's session never sees.
      expect(await viewerSessions()).toHaveLength(1);
    } finally {
      await page.context().close();
    }
    // Closing the page ends the viewer and its session; the child runs on.
    await until(async () => (await viewerSessions()).length === 0, 20_000);
    expect((await sb.json(["status", id])).data.status).toBe("idle");
  }, 90_000);

  it("answers render as Markdown (links only to http(s)); a worktree child's diff; workflow runs and their steps; usage totals", async () => {
    const repo = makeRepo(path.join(sb.cwd, "..", "web-repo"));
    const answer = [
      "# Heading here",
      "",
      "Some **bold** and `code`, a [safe link](https://example.com/x) and a [bad one](javascript:alert(1)).",
      "",
      "- one",
      "- two <script>alert(2)</script>",
      "",
      "```",
      "<img src=x onerror=alert(3)>",
      "```",
    ].join("\n");
    const md = await spawnChild([
      ...["--agent", "command", "--name", "marked", "--isolation", "worktree", "--cwd", repo.dir, "task"],
      ...["--", "sh", "-c", 'printf "added\\n" > added.txt; printf "%s\\n" "$1"', "sh", answer],
    ]);
    await until(async () => (await sb.json(["status", md])).data.lastOutcome === "completed", 30_000);
    const flow = path.join(sb.cwd, "..", "web-flow.toml");
    fs.writeFileSync(
      flow,
      'name = "webflow"\n[[steps]]\nid = "first"\nagent = "mock"\nprompt = "step one\\nmock: sleep=0.5"\n[[steps]]\nid = "second"\nagent = "mock"\nprompt = "step two"\nneeds = ["first"]\n',
    );
    const page = await newPage();
    try {
      await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
      await page.getByTestId("conn").filter({ hasText: "live" }).waitFor();
      // The run starts after the page is open: it appears, its steps settle, and a step opens its child.
      const run = sb.json(["workflow", "run", flow, "--keep"], { timeout: 90_000 });
      const row = page.getByTestId("run").filter({ hasText: "webflow" });
      await row.waitFor({ timeout: 30_000 });
      expect((await run).exitCode).toBe(0);
      await row.getByTestId("run-state").filter({ hasText: "completed" }).waitFor({ timeout: 20_000 });
      expect(await row.getByTestId("step").allTextContents()).toEqual(["first", "second"]);
      await row.getByTestId("step").filter({ hasText: "second" }).click();
      await until(
        async () => (await page.getByTestId("result").textContent())?.includes("Task: step two"),
        20_000,
      );

      // The tree's usage in the header counts every child.
      const views = (await sb.json(["ls"])).data.children as unknown[];
      await until(
        async () =>
          (await page.getByTestId("totals").textContent())?.startsWith(`${views.length} children · $`),
        20_000,
      );

      await page.locator(`[data-id="${md}"]`).click();
      const result = page.getByTestId("result");
      await result.locator("h4").filter({ hasText: "Heading here" }).waitFor();
      expect(await result.locator("strong").textContent()).toBe("bold");
      expect(await result.locator("a").count()).toBe(1);
      expect(await result.locator("a").getAttribute("href")).toBe("https://example.com/x");
      expect(await result.textContent()).toContain("bad one (javascript:alert(1))");
      expect(await result.locator("li").allTextContents()).toEqual(["one", "two <script>alert(2)</script>"]);
      expect(await result.locator("pre code").textContent()).toBe("<img src=x onerror=alert(3)>");
      expect(await page.locator("#detail-pane img, #detail-pane script").count()).toBe(0);
      await page.getByTestId("raw").click();
      expect(await result.textContent()).toContain("# Heading here");
      await page.getByTestId("raw").click();
      // Its worktree's diff against the HEAD it started from.
      await until(async () => (await page.getByTestId("diff").textContent())?.includes("+added"), 20_000);
      expect(await page.locator("[data-testid=diff] .add").allTextContents()).toContain("+added\n");
      await page.screenshot({ path: path.join(shots, "markdown-diff.png"), fullPage: true });
    } finally {
      await page.context().close();
    }
  }, 120_000);

  it("on a phone-width screen an open child takes the screen, with a way back", async () => {
    const page = await newPage({ width: 390, height: 844 });
    try {
      await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
      const first = page.getByTestId("child").first();
      await first.waitFor();
      await first.click();
      await page.getByTestId("detail").waitFor();
      expect(await page.locator("#list-pane").isVisible()).toBe(false);
      // Nothing wider than the screen: no sideways scrolling of the page.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: path.join(shots, "phone-child.png"), fullPage: true });
      await page.getByRole("button", { name: "← All children" }).click();
      expect(await page.locator("#list-pane").isVisible()).toBe(true);
    } finally {
      await page.context().close();
    }
  }, 60_000);
});
