/** Types of the artifact records a front end shows, re-exported so front ends import only the core. */
export type { MusterEvent, Usage } from "../artifacts/events.js";
