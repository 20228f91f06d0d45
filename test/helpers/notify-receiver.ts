/** A notification receiver on a free port of 127.0.0.1, for the tests of `muster notify`: it keeps what it got. */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Starts a receiver: `/hang…` paths are held open and never answered. */
export async function receiver() {
  const got: Received[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => {
      body += d.toString();
    });
    req.on("end", () => {
      got.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.url?.startsWith("/hang")) held.push(res);
      else res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    got,
    held,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof receiver>>;

/** The webhook notices that reached path `p`, parsed. */
export const hooks = (rx: Receiver, p: string) =>
  rx.got.filter((g) => g.path === p).map((g) => JSON.parse(g.body) as Record<string, string>);
