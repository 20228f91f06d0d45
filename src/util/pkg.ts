import { fileURLToPath } from "node:url";

/** The installed package's root (dist/util/pkg.js → ../..). */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
