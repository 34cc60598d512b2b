import { useCallback, useEffect, useReducer, useRef, useState } from 'react';
import type { Outcome } from '../api/outcome.js';
import { initialResourceState, resourceReducer, type ResourceState } from './resource-state.js';

/**
 * Loads one thing for a page and keeps its ResourceState: reloads when `key` changes or on
 * `reload()`, retries a 202 by itself after the planned delay, aborts what is in flight when the
 * page changes.
 */
export function useResource<T>(key: string, load: (signal: AbortSignal) => Promise<Outcome<T>>): { state: ResourceState<T>; reload: () => void } {
  const [state, dispatch] = useReducer(resourceReducer<T>, undefined, initialResourceState<T>);
  const [round, setRound] = useState(0);
  const loadRef = useRef(load);
  const loadedKey = useRef<string | undefined>(undefined);
  useEffect(() => {
    loadRef.current = load;
  });

  useEffect(() => {
    const controller = new AbortController();
    dispatch({ type: 'load', fresh: loadedKey.current !== key });
    loadedKey.current = key;
    loadRef.current(controller.signal).then(
      (outcome) => {
        if (!controller.signal.aborted) dispatch({ type: 'outcome', outcome });
      },
      (error: Error) => {
        if (!controller.signal.aborted) dispatch({ type: 'outcome', outcome: { kind: 'network', message: error.message } });
      },
    );
    return () => controller.abort();
  }, [key, round]);

  // A scope being prepared is asked again after its delay, without anybody clicking.
  const retryIn = state.phase === 'preparing' ? state.retryInMs : undefined;
  const attempt = state.phase === 'preparing' ? state.attempt : undefined;
  useEffect(() => {
    if (retryIn === undefined) return undefined;
    const timer = setTimeout(() => setRound((r) => r + 1), retryIn);
    return () => clearTimeout(timer);
  }, [retryIn, attempt]);

  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { state, reload };
}
