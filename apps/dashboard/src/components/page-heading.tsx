import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A page's h1. It takes the focus when the page opens (after navigating, a screen reader and a
 * keyboard user start at the new page, not at the link they left), and names the tab.
 */
export function PageHeading({ children, title }: { children: ReactNode; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} – Weave dashboard`;
    ref.current?.focus({ preventScroll: false });
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}
