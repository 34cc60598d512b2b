import type { ReactNode } from 'react';
import type { ResourceState } from '../state/resource-state.js';
import { visibleData } from '../state/resource-state.js';

interface Props<T> {
  state: ResourceState<T>;
  reload: () => void;
  /** What is loaded, for the messages ("the report", "your API keys"). */
  what: string;
  children: (data: T) => ReactNode;
  /** Shown instead of children when the data is there but empty. */
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
}

/** One place for every phase of a loaded thing: loading, prepared, unavailable, failed, empty, shown. */
export function ResourceView<T>({ state, reload, what, children, isEmpty, empty }: Props<T>) {
  const data = visibleData(state);
  if (data !== undefined) {
    return (
      <div aria-busy={state.phase === 'loading'}>
        {isEmpty?.(data) ? <div className="empty">{empty ?? `Nothing here yet.`}</div> : children(data)}
      </div>
    );
  }
  switch (state.phase) {
    case 'loading':
      return (
        <p className="state state-loading" role="status">
          Loading {what}…
        </p>
      );
    case 'preparing':
      return (
        <div className="state state-preparing" role="status" data-state="preparing">
          <p>
            <strong>Being prepared.</strong> This is the first request for {what}; its first figures are being computed. The page asks
            again by itself in about {Math.round(state.retryInMs / 1000)} seconds.
          </p>
          <button type="button" className="secondary" onClick={reload}>
            Check now
          </button>
        </div>
      );
    case 'unavailable':
      return (
        <div className="state state-unavailable" role="alert" data-state="unavailable">
          <p>
            <strong>Temporarily unavailable.</strong> {state.message} Please try again.
          </p>
          <button type="button" onClick={reload}>
            Try again
          </button>
        </div>
      );
    case 'error':
      return (
        <div className="state state-error" role="alert" data-state="error">
          <p>
            <strong>Could not load {what}.</strong> {state.message}
          </p>
          <button type="button" className="secondary" onClick={reload}>
            Reload
          </button>
        </div>
      );
    case 'signed-out':
      return null;
    case 'ready':
      return null;
  }
}
