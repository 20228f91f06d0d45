import { describe, expect, it } from "vitest";
import { cookieValue, isLoopback, ownAuthorities, refuse } from "../../src/util/http-guard.js";
import { parseListen } from "../../src/util/http-listen.js";

const at = { host: "127.0.0.1", port: 7421 };
const T = "s3cret-token";
const ok = { host: "127.0.0.1:7421", authorization: `Bearer ${T}` };

describe("what every HTTP request passes before routing", () => {
  it("a loopback server answers to its loopback names on its port, nothing else", () => {
    expect([...ownAuthorities(at)].sort()).toEqual(["127.0.0.1:7421", "[::1]:7421", "localhost:7421"]);
    expect(refuse(ok, at, T)).toBeUndefined();
    expect(refuse({ ...ok, host: "localhost:7421" }, at, T)).toBeUndefined();
    for (const host of ["evil.example.com:7421", "127.0.0.1:7422", "127.0.0.1", undefined])
      expect(refuse({ ...ok, host }, at, T)?.status, String(host)).toBe(403);
  });

  it("an Origin must be this server's own http origin", () => {
    expect(refuse({ ...ok, origin: "http://127.0.0.1:7421" }, at, T)).toBeUndefined();
    expect(refuse({ ...ok, origin: "http://localhost:7421" }, at, T)).toBeUndefined();
    for (const origin of [
      "http://evil.example.com",
      "https://127.0.0.1:7421",
      "null",
      "http://127.0.0.1:7421/x",
    ])
      expect(refuse({ ...ok, origin }, at, T)?.status, origin).toBe(403);
  });

  it("the token, as a Bearer credential, exactly", () => {
    for (const authorization of [undefined, "", `Bearer ${T}x`, `Bearer ${T.slice(1)}`, `Basic ${T}`, T])
      expect(refuse({ ...ok, authorization }, at, T)?.status, String(authorization)).toBe(401);
    expect(refuse({ ...ok, authorization: `bearer ${T}` }, at, T)).toBeUndefined();
  });

  it("the token as the muster_token cookie (the web page's); a wrong Bearer is not rescued by a cookie", () => {
    const noAuth = { host: ok.host };
    expect(refuse({ ...noAuth, cookie: `muster_token=${T}` }, at, T)).toBeUndefined();
    expect(refuse({ ...noAuth, cookie: `a=1; muster_token=${T}; b=2` }, at, T)).toBeUndefined();
    for (const cookie of [`muster_token=${T}x`, `other=${T}`, `xmuster_token=${T}`, "muster_token="])
      expect(refuse({ ...noAuth, cookie }, at, T)?.status, cookie).toBe(401);
    expect(refuse({ ...ok, authorization: "Bearer wrong", cookie: `muster_token=${T}` }, at, T)?.status).toBe(
      401,
    );
    // Host and Origin are checked first, cookie or not.
    expect(refuse({ host: "evil.example.com:7421", cookie: `muster_token=${T}` }, at, T)?.status).toBe(403);
    expect(
      refuse({ ...noAuth, origin: "http://evil.example.com", cookie: `muster_token=${T}` }, at, T)?.status,
    ).toBe(403);
    expect(cookieValue(" a=1 ;b= 2", "b")).toBe("2");
    expect(cookieValue(undefined, "b")).toBeUndefined();
  });

  it("listen addresses: host:port, IPv6 in brackets; loopback told apart", () => {
    expect(parseListen("127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseListen("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    for (const bad of ["7421", "host:", ":80", "a b:1", "h:70000"])
      expect(() => parseListen(bad), bad).toThrow();
    expect([
      isLoopback("127.0.0.1"),
      isLoopback("127.3.2.1"),
      isLoopback("::1"),
      isLoopback("localhost"),
    ]).toEqual([true, true, true, true]);
    expect([isLoopback("0.0.0.0"), isLoopback("192.0.2.1"), isLoopback("example.com")]).toEqual([
      false,
      false,
      false,
    ]);
  });
});
