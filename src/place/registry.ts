/**
 * Places by name. `local` is always there; another place (an SSH host, a container, a test's namespace)
 * registers a factory, from muster itself or from a module named by MUSTER_BACKEND_MODULE. The core asks
 * for a place only by the name a child recorded, so it never imports a concrete one.
 */
import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import type { PodRequest } from "../base/pod-request.js";
import { localPlace } from "./local/index.js";
import { LOCAL_PLACE, type Place } from "./place.js";

/** What a place is made from: its name as registered and the caller's environment. */
export type PlaceFactory = (ctx: { name: string; env: NodeJS.ProcessEnv }) => Place;

// `local`, or a kind and a target: `ssh:build1`, `ns:sandbox-1`.
const NAME = /^[a-z][a-z0-9-]{0,31}(:[A-Za-z0-9][A-Za-z0-9._@-]{0,127})?$/;
const factories = new Map<string, PlaceFactory>([[LOCAL_PLACE, () => localPlace]]);
const made = new Map<string, Place>([[LOCAL_PLACE, localPlace]]);

/** The kind of a place name: `ssh` of `ssh:build1`, `local` of `local`. */
export const placeKind = (name: string): string => name.split(":")[0]!;

/** Makes places of a kind available (`kind` alone, or `kind:target` names); registering again replaces it. */
export function registerPlace(kind: string, factory: PlaceFactory): void {
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(kind))
    throw new MusterError("invalid_argument", `place kind ${JSON.stringify(kind)} is not [a-z][a-z0-9-]*`);
  factories.set(kind, factory);
  for (const n of [...made.keys()]) if (placeKind(n) === kind) made.delete(n);
}

export const placeKinds = (): string[] => [...factories.keys()].sort();

/** A child as choosing a host weighs it: where it runs and its status. */
export interface PlacedChild {
  place: string;
  status: string;
}

/**
 * What `on` names (`spawn --on`, MCP `on`, a workflow step's or a profile's `on`): one host, `any`, or a
 * list of hosts to choose from; given the children as they are now, it answers with a place name.
 */
export type HostChooser = (
  on: readonly string[],
  env: NodeJS.ProcessEnv,
  children: () => Promise<readonly PlacedChild[]>,
) => Promise<string>;

let hostChooser: HostChooser | undefined;

/** Makes `on` work: the SSH place registers its chooser (mux/builtin.ts). */
export function registerHostChooser(chooser: HostChooser): void {
  hostChooser = chooser;
}

/** The place `on` names; a clear error where no kind of place with hosts is loaded. */
export function placeOn(
  on: readonly string[],
  env: NodeJS.ProcessEnv,
  children: () => Promise<readonly PlacedChild[]>,
): Promise<string> {
  if (!hostChooser)
    throw new MusterError(
      "unsupported",
      `on ${on.join(",")}: no place with hosts is available here (kinds: ${placeKinds().join(", ")})`,
    );
  if (on.length === 0) throw new MusterError("invalid_argument", "on names no host");
  return hostChooser(on, env, children);
}

/** What a place made for one child (its own container) is made from, besides what the caller asked for. */
export interface ChildPlaceContext {
  /** The child's id: the place is `<kind>:<id>`. */
  id: string;
  env: NodeJS.ProcessEnv;
  /** The child's working directory here (a container mounts it). */
  cwd: string;
  runner: string;
  /** Whether the child works in a worktree of its own (then its work comes as a bundle, not a mount). */
  worktree: boolean;
  /** The primary that owns it. */
  primary: string;
}

/**
 * How a place made for one child is asked for: a container (the call's request over its profile's), or a
 * Pod (`on: k8s[:<context>]`).
 */
export type ChildPlaceRequest =
  | { kind: "container"; req: ContainerRequest; profile: ContainerRequest | undefined }
  | { kind: "k8s"; on: string; profile: PodRequest | undefined };

/** Makes the place of one child (`<kind>:<id>`) from its request. */
export type ChildPlaceMaker = (request: ChildPlaceRequest, ctx: ChildPlaceContext) => Place | Promise<Place>;

const childMakers = new Map<string, ChildPlaceMaker>();

/**
 * A name `on` gives that stands for a place made per child (a cluster a user named: `muster hosts add <name>
 * --k8s`): its request, with the child's profile's own fields under the entry's; undefined for other names.
 */
export type NamedPlaceResolver = (
  name: string,
  env: NodeJS.ProcessEnv,
  profileK8s: PodRequest | undefined,
) => ChildPlaceRequest | undefined;

const namedResolvers: NamedPlaceResolver[] = [];

/** Makes named per-child places work (mux/builtin.ts registers the clusters' resolver). */
export function registerNamedPlace(resolver: NamedPlaceResolver): void {
  namedResolvers.push(resolver);
}

/** The per-child place `name` stands for, if a registered resolver knows it. */
export function namedChildPlace(
  name: string,
  env: NodeJS.ProcessEnv,
  profileK8s: PodRequest | undefined,
): ChildPlaceRequest | undefined {
  for (const r of namedResolvers) {
    const found = r(name, env, profileK8s);
    if (found) return found;
  }
  return undefined;
}

/** Makes a kind of one-child place available (mux/builtin.ts registers `container` and `k8s`). */
export function registerChildPlace(kind: ChildPlaceRequest["kind"], maker: ChildPlaceMaker): void {
  childMakers.set(kind, maker);
}

/**
 * The place of a new child in a container or Pod of its own, kept under its name (`<kind>:<id>`) for this
 * process; a clear error where no such place is loaded.
 */
export async function placeForChild(request: ChildPlaceRequest, ctx: ChildPlaceContext): Promise<Place> {
  const maker = childMakers.get(request.kind);
  if (!maker)
    throw new MusterError(
      "unsupported",
      `${request.kind}: no such place is available here (kinds: ${placeKinds().join(", ")})`,
    );
  const p = await maker(request, ctx);
  made.set(p.name, p);
  return p;
}

/** Checks a place name as a user or a registry entry gives it. */
export function checkPlaceName(name: string): string {
  if (!NAME.test(name))
    throw new MusterError(
      "invalid_argument",
      `place ${JSON.stringify(name).slice(0, 80)} is not "local" or <kind>:<target> (letters, digits, . _ @ -)`,
    );
  return name;
}

/** The place called `name`, made on first use and kept; a clear error when its kind is not registered. */
export function placeOf(name: string, env: NodeJS.ProcessEnv): Place {
  const have = made.get(name);
  if (have) return have;
  const factory = factories.get(placeKind(checkPlaceName(name)));
  if (!factory)
    throw new MusterError(
      "unsupported",
      `place "${name}" is not available here (kinds: ${placeKinds().join(", ")}); a place from outside muster is registered by a module in MUSTER_BACKEND_MODULE`,
    );
  const p = factory({ name, env });
  made.set(name, p);
  return p;
}
