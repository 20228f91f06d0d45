// The session drivers are each CLI's descriptor's (registry.ts); this path stays for the child host.
export { sessionDriver } from "./registry.js";
