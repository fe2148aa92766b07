/** Request bodies above this many bytes are refused with 413 before they are read whole. */
export const BODY_LIMIT_BYTES = 4096;
