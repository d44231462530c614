import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';
import { apiError, KubeApiError, readBody, type KubeRest, type Query } from './kube-rest.js';

/** An object as the API server sends it; only its metadata is read here. */
export interface KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** A collection of one resource: `/api/v1` + `secrets`, `/apis/kagent.dev/v1alpha2` + `agents`. */
export interface Collection {
  apiPath: string;
  plural: string;
}

export interface ListWatchOptions<T> {
  collection: Collection;
  /** The namespaces to watch, each with a list and a watch of its own; empty: the whole cluster. */
  namespaces?: readonly string[];
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * What the cache keeps of an object, made as it arrives (a Secret of 15 KB becomes the few fields
   * read from it); undefined keeps nothing, as if the object were gone. Called in arrival order.
   */
  transform: (object: KubeObject) => T | undefined;
  /** Objects per list page (the API server's `limit`); default 500. */
  pageSize?: number;
  /** The first wait before watching again after a failure, doubled per failure up to maxBackoffMs; defaults 1 s and 30 s. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long the API server keeps one watch open before it ends it (it is then resumed); default 300 s. */
  watchSeconds?: number;
  /** Told about each failure of a list or a watch (then retried). */
  onError?: (message: string) => void;
}

/** A change of the cache: an object stored (added or changed), or one removed. */
export interface WatchChange<T> {
  type: 'upsert' | 'delete';
  namespace: string;
  name: string;
  value: T;
}

export interface ListWatchStats {
  objects: number;
  /** Lists after the first of each namespace: a watch too old to resume (410 Gone), or a failed list. */
  relists: number;
  /** Bytes of every list page and watch stream received from the API server. */
  bytesRead: number;
}

interface Entry<T> {
  resourceVersion: string;
  value: T;
}

/** One namespace's (or the cluster's) list and watch. */
interface Loop {
  namespace: string | undefined;
  /** Listed, and the watch from the list's resourceVersion answered. */
  watching: boolean;
  lists: number;
}

const WATCH_GONE = Symbol('gone');
/** One list page from an API server that does not answer is given up after this long (and listed again). */
const LIST_PAGE_TIMEOUT_MS = 60_000;

/**
 * A label-selected list + watch of one resource, as client-go's reflector does it: list (paged),
 * watch from the list's resourceVersion with bookmarks, on a broken watch watch again from the last
 * resourceVersion seen (backing off 1 s doubling to 30 s), on 410 Gone list again. The cache holds
 * what `transform` made of each object, not the object. Each namespace given gets its own list and
 * watch (a service account allowed only those namespaces cannot list cluster-wide).
 *
 * client-node's ListWatch caches whole objects, stops at the first error and neither pages nor
 * counts bytes, hence this small loop on the client's KubeConfig credentials.
 */
export class ListWatch<T> {
  private readonly cache = new Map<string, Entry<T>>();
  private readonly listeners = new Set<(change: WatchChange<T>) => void>();
  private readonly syncWaiters = new Set<() => void>();
  private loops: Loop[] = [];
  private running: Promise<void>[] = [];
  private abort: AbortController | undefined;
  private relists = 0;
  private bytesRead = 0;

  constructor(
    private readonly rest: () => Promise<KubeRest>,
    private readonly options: ListWatchOptions<T>,
  ) {}

  /** Starts listing and watching; a second call while running does nothing. */
  start(): void {
    if (this.abort) return;
    const abort = new AbortController();
    this.abort = abort;
    const namespaces = this.options.namespaces?.length ? [...new Set(this.options.namespaces)] : [undefined];
    this.loops = namespaces.map((namespace) => ({ namespace, watching: false, lists: 0 }));
    this.running = this.loops.map((loop) => this.run(loop, abort.signal));
  }

  /** Ends every request at once (an abort, not a wait for the server) and resolves when the loops have. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await Promise.all(this.running);
    this.abort = undefined;
    this.running = [];
    for (const wake of this.syncWaiters) wake();
  }

  /** Every namespace listed and its watch answering. */
  get synced(): boolean {
    return this.loops.length > 0 && this.loops.every((loop) => loop.watching);
  }

  /** Resolves true once synced, or false after `timeoutMs` (or once stopped). */
  async whenSynced(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.synced && this.abort) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.syncWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.syncWaiters.add(done);
      });
    }
    return this.synced;
  }

  get(namespace: string, name: string): T | undefined {
    return this.cache.get(key(namespace, name))?.value;
  }

  values(): IterableIterator<T> {
    return (function* (cache) {
      for (const entry of cache.values()) yield entry.value;
    })(this.cache);
  }

  /** Called after each change of the cache; returns the unsubscribe. */
  onChange(listener: (change: WatchChange<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get stats(): ListWatchStats {
    return { objects: this.cache.size, relists: this.relists, bytesRead: this.bytesRead };
  }

  private async run(loop: Loop, signal: AbortSignal): Promise<void> {
    const first = this.options.backoffMs ?? 1_000;
    const max = this.options.maxBackoffMs ?? 30_000;
    let resourceVersion = '';
    let delay = first;
    while (!signal.aborted) {
      try {
        if (!resourceVersion) resourceVersion = await this.list(loop, signal);
        const outcome = await this.watch(loop, resourceVersion, signal, (seen) => (resourceVersion = seen), () => (delay = first));
        if (outcome === WATCH_GONE) {
          this.setWatching(loop, false);
          resourceVersion = '';
        } else if (outcome < 1_000) {
          // A watch the server ends after its timeout is resumed at once; one that ends at once, not in a loop.
          await pause(signal, delay);
        }
      } catch (error) {
        if (signal.aborted) break;
        this.setWatching(loop, false);
        if (error instanceof KubeApiError && error.code === 410) {
          resourceVersion = '';
          continue;
        }
        this.options.onError?.(`${this.describe(loop)}: ${(error as Error).message}; again in ${delay / 1000}s`);
        await pause(signal, delay);
        delay = Math.min(delay * 2, max);
      }
    }
    this.setWatching(loop, false);
  }

  /**
   * Lists the namespace page by page, storing each object as it arrives; objects the cache holds
   * that the list no longer has are removed at the end. Answers the list's resourceVersion.
   */
  private async list(loop: Loop, signal: AbortSignal): Promise<string> {
    if (loop.lists++ > 0) this.relists++;
    const rest = await this.rest();
    const seen = new Set<string>();
    let next: string | undefined;
    let resourceVersion: string;
    do {
      const query: Query = { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, limit: this.options.pageSize ?? 500, continue: next };
      const within = AbortSignal.any([signal, AbortSignal.timeout(LIST_PAGE_TIMEOUT_MS)]);
      const { value: page, bytes } = await rest.json<{ metadata: { resourceVersion: string; continue?: string }; items: KubeObject[] }>('GET', this.path(loop), query, within);
      this.bytesRead += bytes;
      for (const item of page.items ?? []) {
        seen.add(key(item.metadata.namespace ?? '', item.metadata.name));
        this.store(item);
      }
      next = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion;
    } while (next && !signal.aborted);
    // Stopped mid-list, what the list lacks is not known to be gone.
    if (signal.aborted) return '';
    for (const [id, entry] of this.cache) {
      const [namespace, name] = split(id);
      if (!seen.has(id) && (loop.namespace === undefined || loop.namespace === namespace)) this.remove(namespace, name, entry);
    }
    return resourceVersion;
  }

  /**
   * Watches from `resourceVersion` until the stream ends: answers WATCH_GONE when the API server
   * no longer has that version (410), else how long the watch lasted (ms).
   */
  private async watch(loop: Loop, resourceVersion: string, signal: AbortSignal, seen: (resourceVersion: string) => void, connected: () => void): Promise<number | typeof WATCH_GONE> {
    const rest = await this.rest();
    const seconds = this.options.watchSeconds ?? 300;
    const query: Query = {
      watch: 1,
      resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: seconds,
      labelSelector: this.options.labelSelector,
      fieldSelector: this.options.fieldSelector,
    };
    // A connection that died without a word (no FIN) would hold the loop for good: past the server's own timeout it is given up.
    const giveUp = AbortSignal.any([signal, AbortSignal.timeout((seconds + 30) * 1000)]);
    const started = Date.now();
    const response = await rest.open('GET', this.path(loop), query, giveUp);
    if (response.statusCode !== 200) throw apiError(response.statusCode ?? 0, await readBody(response));
    this.setWatching(loop, true);
    connected();
    const gone = await this.events(response, giveUp, (event) => {
      if (event.type === 'ERROR') {
        const status = event.object as { code?: number; message?: string };
        if (status.code === 410) return true;
        throw new KubeApiError(status.code ?? 500, status.message ?? 'the watch answered an error');
      }
      if (event.type === 'ADDED' || event.type === 'MODIFIED') this.store(event.object);
      else if (event.type === 'DELETED') this.drop(event.object);
      if (event.object.metadata?.resourceVersion) seen(event.object.metadata.resourceVersion);
      return false;
    });
    return gone ? WATCH_GONE : Date.now() - started;
  }

  /** Reads the watch's events (one JSON object a line) as they arrive; true when `handle` says the watch is gone. */
  private async events(response: IncomingMessage, signal: AbortSignal, handle: (event: { type: string; object: KubeObject }) => boolean): Promise<boolean> {
    const decoder = new StringDecoder('utf8');
    let pending = '';
    try {
      for await (const chunk of response) {
        this.bytesRead += (chunk as Buffer).length;
        pending += decoder.write(chunk as Buffer);
        let end: number;
        while ((end = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, end).trim();
          pending = pending.slice(end + 1);
          if (line && handle(JSON.parse(line) as { type: string; object: KubeObject })) {
            response.destroy();
            return true;
          }
        }
      }
    } catch (error) {
      // Stopped, or past the deadline: the end of this watch; anything else (a reset connection) is a failure.
      if (!signal.aborted) throw error;
    }
    return false;
  }

  private store(object: KubeObject): void {
    const namespace = object.metadata.namespace ?? '';
    const id = key(namespace, object.metadata.name);
    const resourceVersion = object.metadata.resourceVersion ?? '';
    const held = this.cache.get(id);
    if (held && held.resourceVersion === resourceVersion && resourceVersion !== '') return;
    const value = this.options.transform(object);
    if (value === undefined) {
      if (held) this.remove(namespace, object.metadata.name, held);
      return;
    }
    this.cache.set(id, { resourceVersion, value });
    this.emit({ type: 'upsert', namespace, name: object.metadata.name, value });
  }

  private drop(object: KubeObject): void {
    const namespace = object.metadata.namespace ?? '';
    const held = this.cache.get(key(namespace, object.metadata.name));
    if (held) this.remove(namespace, object.metadata.name, held);
  }

  private remove(namespace: string, name: string, entry: Entry<T>): void {
    this.cache.delete(key(namespace, name));
    this.emit({ type: 'delete', namespace, name, value: entry.value });
  }

  private emit(change: WatchChange<T>): void {
    for (const listener of this.listeners) listener(change);
  }

  private setWatching(loop: Loop, watching: boolean): void {
    if (loop.watching === watching) return;
    loop.watching = watching;
    for (const wake of this.syncWaiters) wake();
  }

  private path(loop: Loop): string {
    const { apiPath, plural } = this.options.collection;
    return loop.namespace === undefined ? `${apiPath}/${plural}` : `${apiPath}/namespaces/${encodeURIComponent(loop.namespace)}/${plural}`;
  }

  private describe(loop: Loop): string {
    const where = loop.namespace === undefined ? 'every namespace' : `namespace ${loop.namespace}`;
    return `the watch of ${this.options.collection.plural} in ${where}`;
  }
}

function pause(signal: AbortSignal, ms: number): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => undefined);
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function split(id: string): [string, string] {
  const at = id.indexOf('/');
  return [id.slice(0, at), id.slice(at + 1)];
}
