/** The local process control, where backend plugins written before places had names import it. */
export { localHostControl } from "../place/local/host-control.js";
