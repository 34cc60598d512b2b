import { useState } from 'react';

/** Copies `text` to the clipboard and says so (to screen readers too). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [message, setMessage] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setMessage('Copied to the clipboard.');
    } catch {
      setMessage('Copying is not allowed here: select the text and copy it yourself.');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span className="copy-status" role="status">
        {message}
      </span>
    </>
  );
}
