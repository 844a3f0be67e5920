// Type declarations of slmactor-client (index.js). Reply shapes: clients/PROTOCOL.md §10.

export declare const PROTOCOL_VERSION: 1;
/** Milliseconds the first tells wait for the connection to a daemon whose socket exists. */
export declare const CONNECT_WAIT_MS: number;

/** No reply from the daemon within the deadline and retries (not running, or wedged). */
export declare class DaemonUnavailable extends Error {}

/** The daemon answered with an error reply (codes: clients/PROTOCOL.md §5). */
export declare class RequestFailed extends Error {
  readonly code: number;
  readonly codeName: string;
  readonly reason: string;
  /** BUSY: the daemon's hint of how long to wait before resending (ms; 0 = none). */
  readonly retryMs: number;
}

/** `$SLMACTOR_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/slmactor`, else `/tmp/slmactor-<uid>`. */
export declare function defaultRuntimeDir(): string;

export interface ClientOptions {
  /** The daemon's runtime directory (default: defaultRuntimeDir()). */
  runtimeDir?: string;
  /** The project root every message is about (resolved to an absolute path). */
  project?: string;
  /** Milliseconds per ask attempt (2500). */
  timeout?: number;
  /** Ask attempts (3). */
  retries?: number;
  /** Tells queued locally before they are dropped (10000). */
  tellHwm?: number;
}

export interface AskOptions {
  timeout?: number;
  retries?: number;
  /** false: leave the client's project out (the daemon-wide kinds ping and status). */
  withProject?: boolean;
}

export interface Counters {
  calls: number;
  errors: number;
  redundant: number;
}

export interface Run {
  runId: string;
  task: string;
  /** The run id was live and was started over (counters, files and failures cleared). */
  restarted: boolean;
  counters: Counters;
}

export interface Advice {
  runId: string;
  tool: string;
  message: string;
  args: string;
  language: string;
  model: string;
  /** A repair rule matched this failure. */
  found: boolean;
  /** The rule is confident enough to apply without asking the model. */
  apply: boolean;
  ruleId: string;
  /** The repaired arguments when the rule transforms them ("" otherwise). */
  newArgs: string;
  /** `newArgs` when `apply`, else "": the arguments to retry with. */
  repairedArgs: string;
  /** Advice for the model when there is no mechanical repair. */
  guidance: string;
  reason: string;
  confidence: number;
  fingerprint: string;
  raw: Record<string, unknown>;
}

export interface Resolution {
  fingerprint: string;
  learned: Record<string, unknown> | null;
  transform: string | null;
  bound: boolean;
  raw: Record<string, unknown>;
}

export interface Block {
  text: string;
  tokens: number;
  budget: number;
  /** Tokens per section: working, semantic, episodic, procedural, ... */
  sections: Record<string, number>;
}

export interface RecallHit {
  id: string;
  score: number;
  query: string;
  summary: string;
  success: boolean;
  why: string;
  episode: Record<string, unknown>;
}

export interface Finished {
  runId: string;
  accepted: boolean;
  success: boolean;
  /** Failures by who resolved them: memory, llm, retry, human, other, unresolved. */
  tally: Record<string, number>;
  duplicate: boolean;
  raw: Record<string, unknown>;
}

export interface ToolCall {
  path?: string;
  /** The call's arguments: JSON text, or a value sent as JSON. */
  args?: unknown;
  command?: string;
  ok?: boolean;
  error?: string;
  key?: string;
  /** Epoch seconds of the call (default: when the daemon applies it). */
  at?: number;
}

export interface BlockOptions {
  runId?: string;
  role?: string;
  files?: string[];
  tags?: string[];
  budget?: number;
  language?: string;
  model?: string;
}

export declare class Client {
  constructor(options?: ClientOptions);
  readonly ctlPath: string;
  readonly eventsPath: string;
  readonly project: string;
  readonly clientId: string;
  /** Tells this client could not hand to ZeroMQ (daemon down or queue full). */
  readonly dropped: number;
  /** Sequence number of the last tell sent. */
  readonly lastSeq: number;

  ask(kind: string, fields?: Record<string, unknown>, options?: AskOptions): Promise<any>;
  ping(actor?: string): Promise<Record<string, unknown>>;
  status(): Promise<Record<string, any>>;

  /** A fire-and-forget message; false when it had to be dropped. Never blocks or throws. */
  tell(kind: string, fields?: Record<string, unknown>): boolean;
  recordTool(runId: string, tool: string, call?: ToolCall): boolean;
  focus(runId: string, paths: Iterable<string>): boolean;
  fail(runId: string, failure?: { key?: string; tool?: string; path?: string; message?: string }): boolean;
  resolve(runId: string, key: string, how?: { resolution?: string; resolvedBy?: string }): boolean;
  decide(runId: string, text: string): boolean;
  summarize(runId: string, text: string): boolean;

  startRun(task?: string, options?: { runId?: string; role?: string; keep?: boolean }): Promise<Run>;
  onFailure(runId: string, tool: string, message: string,
            options?: { args?: unknown; language?: string; model?: string }): Promise<Advice>;
  resolved(advice: Advice, options?: { fixedArgs?: unknown; resolution?: string }): Promise<Resolution>;
  memoryBlock(task?: string, options?: BlockOptions & { sections?: false }): Promise<string>;
  memoryBlock(task: string, options: BlockOptions & { sections: true }): Promise<Block>;
  recall(task: string, options?: { files?: string[]; n?: number; language?: string; model?: string;
                                    successOnly?: boolean; explain?: boolean }): Promise<RecallHit[]>;
  remember(subject: string, text: string,
           options?: { kind?: string; sources?: string[] }): Promise<Record<string, unknown>>;
  finishRun(runId: string, report?: Record<string, unknown> | null,
            options?: { success?: boolean; summary?: string; model?: string; language?: string;
                        wait?: boolean; timeout?: number }): Promise<Finished>;
  /** Wait (at most `timeout` ms, default 2000) until the daemon confirms every tell sent so far;
   *  what stays unconfirmed is counted in `dropped`. Call before close() after a burst. */
  flush(options?: { timeout?: number }): Promise<{ applied: number; caughtUp: boolean; unconfirmed: number }>;
  close(): void;
}
