/**
 * import() of a package or a file by name. The CLI's commands that need no package run from a code-cached
 * CommonJS bundle (scripts/bundle.mjs, util/code-cache.ts), compiled by `vm.Script`, which cannot import by
 * itself: there this module is replaced by bin/muster.js's own import(). Everywhere else it is plain import().
 * Each import() in code that bundle includes goes through here (the bundle's build refuses any other).
 */
export function importModule<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
