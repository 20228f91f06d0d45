/** The bundled agent a new child runs when none is named and $MUSTER_AGENT is unset. */
import { SETTINGS, setting } from "../base/settings/resolve.js";
export const DEFAULT_AGENT: string = SETTINGS.agent.default;

/** The agent a new child runs when the call names none: $MUSTER_AGENT, else DEFAULT_AGENT. */
export const defaultAgent = (env: NodeJS.ProcessEnv): string => setting(env, "agent");
