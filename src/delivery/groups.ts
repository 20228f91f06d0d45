import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { withFileLock } from "../util/lock.js";

/** An explicit completion group: delivered together once sealed and every member's turn is terminal. */
export interface Group {
  v: 1;
  groupId: string;
  members: { id: string; turnId: string }[];
  sealed: boolean;
  createdAt: string;
}

export const GROUP_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const MAX_GROUP_MEMBERS = 32;
export const MAX_GROUPS = 512;

export function assertGroupId(groupId: string): string {
  if (!GROUP_ID.test(groupId)) {
    throw new MusterError(
      "invalid_argument",
      `invalid group id ${JSON.stringify(groupId)}: 1–128 characters, [A-Za-z0-9] then [A-Za-z0-9._:-]`,
    );
  }
  return groupId;
}

// Group ids may hold ':' and '.', never '/': safe as file names once validated.
const groupFile = (dir: string, groupId: string) => path.join(dir, `${assertGroupId(groupId)}.json`);

export function listGroups(dir: string): Group[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".json") && !n.startsWith("."));
  } catch {
    return [];
  }
  return names
    .map((n) => readJsonIfExists<Group>(path.join(dir, n)))
    .filter((g): g is Group => g !== undefined);
}

/**
 * Removes the groups none of whose members `exists` any more (every child of it was removed): they can
 * deliver nothing, so they no longer count toward the limit. Returns how many went.
 */
export async function pruneGroups(dir: string, exists: (childId: string) => boolean): Promise<number> {
  let removed = 0;
  for (const g of listGroups(dir)) {
    if (g.members.some((mb) => exists(mb.id))) continue;
    const file = groupFile(dir, g.groupId);
    await withFileLock(file, () => {
      // Read again under the lock: a spawn may have joined it meanwhile.
      const now = readJsonIfExists<Group>(file);
      if (!now || now.members.some((mb) => exists(mb.id))) return;
      fs.rmSync(file, { force: true });
      removed += 1;
    });
  }
  return removed;
}

/**
 * Adds a member under the group's lock; a sealed or full group, or one group too many, is refused. At the
 * limit, groups whose members are all gone (`exists`) are pruned first.
 */
export async function addGroupMember(
  dir: string,
  groupId: string,
  member: { id: string; turnId: string },
  exists: (childId: string) => boolean = () => true,
): Promise<void> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = groupFile(dir, groupId);
  if (!fs.existsSync(file) && listGroups(dir).length >= MAX_GROUPS) await pruneGroups(dir, exists);
  await withFileLock(file, () => {
    const g = readJsonIfExists<Group>(file);
    if (!g && listGroups(dir).length >= MAX_GROUPS) {
      throw new MusterError(
        "limit_reached",
        `this primary already has ${MAX_GROUPS} groups with children in them; remove finished children (muster rm, muster gc) to free their groups`,
        { next: { action: "reuse_group" } },
      );
    }
    if (g?.sealed)
      throw new MusterError("limit_reached", `group "${groupId}" is sealed: it takes no new members`);
    if (g && g.members.length >= MAX_GROUP_MEMBERS) {
      throw new MusterError("limit_reached", `group "${groupId}" already has ${MAX_GROUP_MEMBERS} members`);
    }
    const next: Group = g ?? {
      v: 1,
      groupId,
      members: [],
      sealed: false,
      createdAt: new Date().toISOString(),
    };
    next.members.push(member);
    writeJsonAtomic(file, next);
  });
}

/** Undoes addGroupMember for a spawn that failed after it. */
export async function removeGroupMember(dir: string, groupId: string, id: string): Promise<void> {
  const file = groupFile(dir, groupId);
  await withFileLock(file, () => {
    const g = readJsonIfExists<Group>(file);
    if (!g) return;
    g.members = g.members.filter((m) => m.id !== id);
    if (g.members.length === 0 && !g.sealed) fs.rmSync(file, { force: true });
    else writeJsonAtomic(file, g);
  });
}

/** Seals a group: from now on it takes no members, and it is ready once every member has settled. */
export async function sealGroup(dir: string, groupId: string): Promise<Group> {
  const file = groupFile(dir, groupId);
  return withFileLock(file, () => {
    const g = readJsonIfExists<Group>(file);
    if (!g) throw new MusterError("not_found", `unknown group "${groupId}"`);
    if (!g.sealed) {
      g.sealed = true;
      writeJsonAtomic(file, g);
    }
    return g;
  });
}

/** Removes a group whole (a best-of run undone: none of its children stays). */
export async function dropGroup(dir: string, groupId: string): Promise<void> {
  const file = groupFile(dir, groupId);
  await withFileLock(file, () => fs.rmSync(file, { force: true }));
}
