import { useState } from 'react';
import type { RequestOptions } from '../api/api-client.js';
import { useServices } from './services.js';

/**
 * A button that downloads a reporting route's CSV (format=csv) with the owner's ID token in the
 * header (api.download), hands the file to the browser and says how it went. `what` names the
 * data in the message of a 202 ("This series is being prepared…").
 */
export function CsvDownload({ path, query, fallbackName, what, label }: { path: string; query: RequestOptions['query']; fallbackName: string; what: string; label: string }) {
  const { api } = useServices();
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const download = async () => {
    setBusy(true);
    setMessage('Preparing the download…');
    try {
      const outcome = await api.download(path, { query: { ...query, format: 'csv' }, fallbackName });
      if (outcome.kind === 'ok') {
        const url = URL.createObjectURL(outcome.data.blob);
        const link = document.createElement('a');
        link.href = url;
        link.download = outcome.data.filename;
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10_000);
        setMessage(`Downloaded ${outcome.data.filename}.`);
      } else if (outcome.kind === 'preparing') {
        setMessage(`This ${what} is being prepared; try the download again in a minute.`);
      } else if (outcome.kind === 'unavailable' || outcome.kind === 'network') {
        setMessage('The download is temporarily unavailable. Please try again.');
      } else if (outcome.kind === 'problem') {
        setMessage(`The download failed: ${outcome.problem.detail ?? outcome.problem.title ?? `HTTP ${outcome.status}`}`);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="download">
      <button type="button" onClick={() => void download()} disabled={busy}>
        {label}
      </button>
      <span role="status">{message}</span>
    </div>
  );
}
