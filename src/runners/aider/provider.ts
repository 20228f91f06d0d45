/**
 * Aider's provider errors. Aider prints no structured error: it prints litellm's exception text
 * (`litellm.<Class>: <Provider>Exception - <the provider's message or body>`), then one of its own fixed
 * explanations (aider/exceptions.py), then "Retrying in N seconds..." while it retries. The litellm class says
 * what the HTTP status was; the provider's words inside say whether a 429 is a spent quota.
 */
import { classifyProvider, classifyText, type ProviderError } from "../common/provider-error.js";

/** The first line of a litellm exception as aider prints it, with its class. */
export const LITELLM_ERROR = /^litellm\.([A-Za-z]+(?:Error|Exception|Timeout))\b/;

/** The litellm classes that stand for one HTTP status (litellm/exceptions.py sets each one's status_code). */
const CLASS_STATUS: Record<string, number> = {
  RateLimitError: 429,
  AuthenticationError: 401,
  ServiceUnavailableError: 503,
};

/**
 * Aider's own explanations (aider/exceptions.py `ExInfo.description`, and get_ex_info's special cases), printed
 * on the line after litellm's text. They are not the provider's words: "down or overloaded" is said for a 500 too.
 */
export const AIDER_EXPLANATIONS = new Set([
  "The API provider is not able to authenticate you. Check your API key.",
  "The API provider's servers are down or overloaded.",
  "The API provider has refused the request due to a safety policy about the content.",
  "The API provider was unable to fetch one or more images.",
  "Permission was denied. Check your API key and/or credentials.",
  "The API provider has rate limited you. Try again later or check your quotas.",
  "The API provider timed out without returning a response. They may be down or overloaded.",
  "Insufficient credits with the API provider. Please add credits.",
  "OpenRouter or the upstream API provider is down, overloaded or rate limiting your requests.",
]);

/**
 * The provider error in one litellm exception aider printed (its lines joined: aider's console wraps long text),
 * or undefined when it is none of the four (a 500, a bad request, a connection error).
 */
export function aiderProviderError(text: string, now = Date.now()): ProviderError | undefined {
  const m = LITELLM_ERROR.exec(text);
  if (!m) return undefined;
  const cls = m[1]!;
  // What follows the class: litellm's own prefix and the provider's message, which may quote its JSON body.
  const said = text.slice(m[0].length).replace(/^:\s*/, "");
  // A 403 is a refused credential, as for the other CLIs (permission_denied).
  const e =
    cls === "PermissionDeniedError"
      ? classifyProvider({ status: 403, codes: ["permission_denied"], message: text }, now)
      : classifyText(said, CLASS_STATUS[cls], now);
  return e && { ...e, message: text.slice(0, 2000) };
}
