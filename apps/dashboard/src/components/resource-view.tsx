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
        <StateNotice phase="preparing" role="status" action="Check now" secondary onAction={reload}>
          <strong>Being prepared.</strong> This is the first request for {what}; its first figures are being computed. The page asks
          again by itself in about {Math.round(state.retryInMs / 1000)} seconds.
        </StateNotice>
      );
    case 'unavailable':
      return (
        <StateNotice phase="unavailable" role="alert" action="Try again" onAction={reload}>
          <strong>Temporarily unavailable.</strong> {state.message} Please try again.
        </StateNotice>
      );
    case 'error':
      return (
        <StateNotice phase="error" role="alert" action="Reload" secondary onAction={reload}>
          <strong>Could not load {what}.</strong> {state.message}
        </StateNotice>
      );
    case 'signed-out':
      return null;
    case 'ready':
      return null;
  }
}

interface StateNoticeProps {
  phase: 'preparing' | 'unavailable' | 'error';
  role: 'status' | 'alert';
  /** The button's label; `secondary` styles it as the less prominent action. */
  action: string;
  secondary?: boolean;
  onAction: () => void;
  children: ReactNode;
}

/** A phase that is not the data: its message and the one button that loads again. */
function StateNotice({ phase, role, action, secondary, onAction, children }: StateNoticeProps) {
  return (
    <div className={`state state-${phase}`} role={role} data-state={phase}>
      <p>{children}</p>
      <button type="button" className={secondary ? 'secondary' : undefined} onClick={onAction}>
        {action}
      </button>
    </div>
  );
}
