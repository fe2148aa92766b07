// petinv imports only the parts of undici it uses (see src/client/undici.ts); these give them undici's own types.
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}
