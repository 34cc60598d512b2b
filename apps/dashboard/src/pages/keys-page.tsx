import { useEffect, useRef, useState, type FormEvent } from 'react';
import { problemMessage } from '../api/outcome.js';
import type { ApiKey, ApiKeyList, CreatedApiKey } from '../api/types.js';
import { CopyButton } from '../components/copy-button.js';
import { Dialog } from '../components/dialog.js';
import { PageHeading } from '../components/page-heading.js';
import { ResourceView } from '../components/resource-view.js';
import { useServices } from '../components/services.js';
import { formatUtc } from '../format/time.js';
import { useResource } from '../state/use-resource.js';

/** The key for a person: its name and, when known, the end of its secret. */
const keyLabel = (key: Pick<ApiKey, 'name' | 'last4'>) => `${key.name ?? 'Unnamed key'}${key.last4 ? ` (…${key.last4})` : ''}`;

export function KeysPage() {
  const { api } = useServices();
  const [round, setRound] = useState(0);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  // After the secret is hidden, the form is back and its heading takes the focus (once it is rendered).
  const [focusForm, setFocusForm] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [notice, setNotice] = useState('');
  const listHeading = useRef<HTMLHeadingElement>(null);
  // After a revoke the row's button is gone: the focus goes to the list and its notice, not to
  // the top of the page. (This effect runs after the dialog's own focus return.)
  useEffect(() => {
    if (notice) listHeading.current?.focus();
  }, [notice]);
  const { state, reload } = useResource<ApiKeyList>(`keys:${round}`, (signal) => api.request<ApiKeyList>('/agent/keys', { signal }));

  return (
    <>
      <PageHeading title="API keys">API keys</PageHeading>
      <p>
        Your backend sends an API key with every request for recommendations and reports. A live key reports live traffic, a test key
        test traffic. Keep keys in secret storage or environment variables, never in code or in a browser.
      </p>
      {created ? (
        <NewKeySecret
          created={created}
          onDone={() => {
            setCreated(null);
            setFocusForm(true);
          }}
        />
      ) : (
        <CreateKeyForm
          focusHeading={focusForm}
          onCreated={(key) => {
            setFocusForm(false);
            setCreated(key);
            setRound((n) => n + 1);
          }}
        />
      )}
      <section aria-labelledby="list-heading">
        <h2 id="list-heading" tabIndex={-1} ref={listHeading}>
          Your keys
        </h2>
        <p role="status" className="message-ok">
          {notice}
        </p>
        <ResourceView
          state={state}
          reload={reload}
          what="your API keys"
          isEmpty={(list) => list.items.length === 0}
          empty={<p>No API keys yet. Create one above.</p>}
        >
          {(list) => (
            <div className="table-scroll">
              <table data-testid="keys">
                <caption className="visually-hidden">API keys, newest first, revoked keys included</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Key</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((key) => (
                    <tr key={key.key_id} data-key-id={key.key_id} data-revoked={key.revoked_at ? 'true' : 'false'}>
                      <th scope="row">{key.name ?? <em>Unnamed (made by operations)</em>}</th>
                      <td>{key.mode === 'live' ? 'Live' : 'Test'}</td>
                      <td>
                        {key.last4 ? (
                          <code>…{key.last4}</code>
                        ) : (
                          // A key made before the last four characters were kept: they are filled in at its next use.
                          <span data-testid="last4-unknown" title="Not known yet: shown after the key's next use">
                            —<span className="visually-hidden"> not known yet; shown after the key&apos;s next use</span>
                          </span>
                        )}
                      </td>
                      <td>
                        <time dateTime={key.created_at}>{formatUtc(key.created_at)}</time>
                      </td>
                      <td>{key.last_used_at ? <time dateTime={key.last_used_at}>{formatUtc(key.last_used_at)}</time> : 'Never'}</td>
                      <td>
                        {key.revoked_at ? (
                          <>
                            Revoked <time dateTime={key.revoked_at}>{formatUtc(key.revoked_at)}</time>
                          </>
                        ) : (
                          'Active'
                        )}
                      </td>
                      <td>
                        {key.revoked_at ? null : (
                          <button type="button" className="danger" onClick={() => setRevoking(key)} aria-label={`Revoke ${keyLabel(key)}`}>
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </ResourceView>
      </section>
      <RevokeDialog
        apiKey={revoking}
        onClose={(result) => {
          setRevoking(null);
          if (result) {
            setNotice(result);
            setRound((n) => n + 1);
          }
        }}
      />
    </>
  );
}

function CreateKeyForm({ onCreated, focusHeading }: { onCreated: (key: CreatedApiKey) => void; focusHeading: boolean }) {
  const { api } = useServices();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focusHeading) heading.current?.focus();
  }, [focusHeading]);
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('test');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const outcome = await api.request<CreatedApiKey>('/agent/keys', { method: 'POST', body: { name: name.trim(), mode } });
      if (outcome.kind === 'ok') {
        setName('');
        onCreated(outcome.data);
      } else if (outcome.kind === 'problem') {
        // The API's detail says it all (for the 409: how many keys, and to revoke one first).
        setError(problemMessage(outcome.problem));
      } else if (outcome.kind === 'unavailable' || outcome.kind === 'network') {
        setError('The key could not be created right now (service temporarily unavailable). Please try again.');
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-key-heading">
      <h2 id="create-key-heading" tabIndex={-1} ref={heading}>
        Create a key
      </h2>
      <form onSubmit={(event) => void submit(event)} className="key-form">
        <label htmlFor="key-name">Name</label>
        <input
          id="key-name"
          name="name"
          required
          maxLength={64}
          value={name}
          onChange={(event) => setName(event.target.value)}
          aria-describedby="key-name-hint"
          autoComplete="off"
        />
        <p id="key-name-hint" className="hint">
          1 to 64 characters, e.g. “production backend”.
        </p>
        <fieldset>
          <legend>Mode</legend>
          <label>
            <input type="radio" name="mode" value="test" checked={mode === 'test'} onChange={() => setMode('test')} /> Test (test traffic)
          </label>
          <label>
            <input type="radio" name="mode" value="live" checked={mode === 'live'} onChange={() => setMode('live')} /> Live (real traffic)
          </label>
        </fieldset>
        <button type="submit" disabled={busy}>
          Create key
        </button>
        {error ? (
          <p role="alert" className="message-error">
            {error}
          </p>
        ) : null}
      </form>
    </section>
  );
}

function NewKeySecret({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.key_id]);
  return (
    <section aria-labelledby="secret-heading" className="secret" data-testid="new-key">
      <h2 id="secret-heading" tabIndex={-1} ref={heading}>
        Your new key “{created.name}”
      </h2>
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> Only its last four characters are kept for the list.
      </p>
      <label htmlFor="new-key-secret">API key ({created.mode})</label>
      <div className="secret-row">
        <input id="new-key-secret" readOnly value={created.api_key} onFocus={(event) => event.target.select()} spellCheck={false} />
        <CopyButton text={created.api_key} label="Copy key" />
      </div>
      <button type="button" className="secondary" onClick={onDone}>
        I have stored it — hide it
      </button>
    </section>
  );
}

function RevokeDialog({ apiKey, onClose }: { apiKey: ApiKey | null; onClose: (result?: string) => void }) {
  const { api } = useServices();
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    if (!apiKey) return;
    setBusy(true);
    setError('');
    try {
      const outcome = await api.request<void>(`/agent/keys/${encodeURIComponent(apiKey.key_id)}`, { method: 'DELETE' });
      if (outcome.kind === 'ok') onClose(`Revoked ${keyLabel(apiKey)}. It is refused everywhere within a second.`);
      else if (outcome.kind === 'problem') setError(problemMessage(outcome.problem));
      else if (outcome.kind === 'unavailable' || outcome.kind === 'network') setError('The key could not be revoked right now. Please try again.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={apiKey !== null}
      title={apiKey ? `Revoke ${keyLabel(apiKey)}?` : 'Revoke key?'}
      onCancel={() => {
        setError('');
        onClose();
      }}
      actions={
        <>
          <button
            type="button"
            className="secondary"
            autoFocus
            onClick={() => {
              setError('');
              onClose();
            }}
          >
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => void revoke()} disabled={busy}>
            Revoke key
          </button>
        </>
      }
    >
      <p>Every request with this key is refused from now on (within a second). This cannot be undone; create a new key if you need one.</p>
      {error ? (
        <p role="alert" className="message-error">
          {error}
        </p>
      ) : null}
    </Dialog>
  );
}
