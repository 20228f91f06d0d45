/** The bundled agent a new child runs when none is named and $MUSTER_AGENT is unset. */
export const DEFAULT_AGENT = "mock";

/** The agent a new child runs when the call names none: $MUSTER_AGENT, else DEFAULT_AGENT. */
export const defaultAgent = (env: NodeJS.ProcessEnv): string => env.MUSTER_AGENT || DEFAULT_AGENT;
