/**
 * import() of a file or package whose name is not written out in the code (a user's backend module). The CLI's
 * commands that need no package run from a code-cached CommonJS bundle (scripts/bundle.mjs, util/code-cache.ts),
 * compiled by `vm.Script`, which cannot import by itself: there this module is bin/muster.js's own import(), as
 * is each import() of a package named in the code (the build routes those; a literal name also lets a
 * self-contained bundle, a far host's, take the package in). Everywhere else it is plain import().
 */
export function importModule<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
