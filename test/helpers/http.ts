/** One raw HTTP request to a server on 127.0.0.1, headers as given (a test of what a server refuses). */
import * as http from "node:http";

export interface RawRequest {
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export function rawRequest(
  port: number,
  opts: RawRequest,
  defaultPath = "/",
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: opts.path ?? defaultPath,
        method: opts.method ?? "GET",
        headers: opts.headers,
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
