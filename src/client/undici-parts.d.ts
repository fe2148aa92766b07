// petinv imports only the parts of undici it uses (see src/client/undici.ts); these give them undici's own types.
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}

declare module 'undici/lib/handler/unwrap-handler.js' {
  import type { Dispatcher } from 'undici';
  /** undici's adapter from the current handler API to the one its core calls (onConnect, onHeaders, ...). */
  export default class UnwrapHandler {
    constructor(handler: Dispatcher.DispatchHandler);
  }
}
