// The consent editor (console-core): the draft (categories, purposes, notice) and its experience
// (translations side by side, Google Consent Mode, cookies, theme), a live preview with the real SDK v2, and
// publishing, which says first whether visitors will be asked again (the draft's consentHash against the
// latest version's) and what differs from the latest version. A Viewer sees it all read-only.
import { useEffect, useMemo, useRef, useState, type FormEvent, type RefObject } from 'react';
import { useMutation, useQuery } from 'urql';
import { lazyComponent } from '../components/lazy';
import { ErrorState, QueryState } from '../components/states';
import { ConsentEditorDocument, PublishConsentDocument, SaveConsentDraftDocument, type ConsentEditorQuery } from '../graphql/generated';
import { useCan } from '../lib/context';
import { differences, draftInput, formFromDraft, stable, type DraftForm, type Experience } from '../lib/consent-model';
import type { ScreenProps } from '../lib/screen';
import { DraftEditor } from './consent-draft';
import { ExperienceEditor } from './consent-experience';

const Preview = lazyComponent(() => import('./consent-preview'), 'Loading the preview…');

type Configuration = ConsentEditorQuery['consentConfiguration'];

export default function ConsentEditor({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const [result, refetch] = useQuery({ query: ConsentEditorDocument, variables: { projectId }, requestPolicy: 'cache-and-network' });
  return (
    <section aria-labelledby="screen-title" className="consent-editor">
      <h1 id="screen-title">Consent</h1>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) => <Editor projectId={projectId} configuration={data.consentConfiguration} />}
      </QueryState>
    </section>
  );
}

type Tab = 'draft' | 'experience';

function Editor({ projectId, configuration }: { projectId: string; configuration: Configuration }) {
  const canEdit = useCan('ADMIN');
  const saved = useMemo(() => formFromDraft(configuration.draft), [configuration.draft]);
  const savedExperience = configuration.experience as Experience;
  const [form, setForm] = useState<DraftForm>(saved);
  const [experience, setExperience] = useState<Experience>(savedExperience);
  // A new server state (after a save, or another operator's change on refetch) replaces the form.
  useEffect(() => setForm(saved), [saved]);
  useEffect(() => setExperience(savedExperience), [savedExperience]);
  const [tab, setTab] = useState<Tab>('draft');
  const draftDirty = stable(draftInput(form)) !== stable(draftInput(saved));
  const experienceDirty = stable(experience) !== stable(savedExperience);

  const [saving, save] = useMutation(SaveConsentDraftDocument);
  const publishDialog = useRef<HTMLDialogElement>(null);
  const saveDraft = async (event: FormEvent) => {
    event.preventDefault();
    await save({ projectId, input: draftInput(form) });
  };

  return (
    <div className="editor-grid">
      <div className="editor-main">
        {!canEdit && (
          <p className="note" role="note">
            You are a Viewer in this organization: you can read the configuration but not change or publish it.
          </p>
        )}
        {/* Saving and publishing side by side, at the top and in sight while the long form scrolls. */}
        <div className="editor-actions" role="region" aria-label="Save and publish">
          <StatusBadge configuration={configuration} />
          <span className="break" aria-hidden="true" />
          {canEdit && tab === 'draft' && (
            <>
              <button type="submit" form="draft-form" className="primary" disabled={!draftDirty || saving.fetching}>
                {saving.fetching ? 'Saving…' : 'Save draft'}
              </button>
              <button type="button" disabled={!draftDirty} onClick={() => setForm(saved)}>
                Discard changes
              </button>
            </>
          )}
          {canEdit && (
            <button type="button" className="primary" disabled={!configuration.hasUnpublishedChanges || draftDirty || experienceDirty} onClick={() => publishDialog.current?.showModal()}>
              Publish…
            </button>
          )}
          <span role="status">
            {draftDirty || experienceDirty ? 'Unsaved changes: save or discard them before publishing.' : saving.data && !saving.error ? 'Draft saved.' : ''}
          </span>
        </div>
        <PublishPanel projectId={projectId} configuration={configuration} canPublish={canEdit} dialog={publishDialog} />
        <div className="tabs" role="tablist" aria-label="Editor sections">
          {(['draft', 'experience'] as const).map((t) => (
            <button key={t} type="button" role="tab" id={`tab-${t}`} aria-controls={`panel-${t}`} aria-selected={tab === t} tabIndex={tab === t ? 0 : -1} onClick={() => setTab(t)}
              onKeyDown={(e) => {
                if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                  const next = t === 'draft' ? 'experience' : 'draft';
                  setTab(next);
                  document.getElementById(`tab-${next}`)?.focus();
                }
              }}>
              {t === 'draft' ? 'Purposes and notice' : 'Experience'}
              {(t === 'draft' ? draftDirty : experienceDirty) ? ' •' : ''}
            </button>
          ))}
        </div>
        <div role="tabpanel" id="panel-draft" aria-labelledby="tab-draft" hidden={tab !== 'draft'}>
          <form id="draft-form" onSubmit={saveDraft} aria-label="Draft">
            <DraftEditor form={form} onChange={setForm} readOnly={!canEdit} />
            <ErrorState title="Saving the draft failed" error={saving.error} />
          </form>
        </div>
        <div role="tabpanel" id="panel-experience" aria-labelledby="tab-experience" hidden={tab !== 'experience'}>
          <ExperienceEditor projectId={projectId} form={form} draftDirty={draftDirty} experience={experience} saved={savedExperience} onChange={setExperience} readOnly={!canEdit} />
        </div>
      </div>
      <aside className="editor-preview" aria-label="Live preview">
        <Preview projectId={projectId} form={form} experience={experience} version={configuration.draftConsentHash} />
      </aside>
    </div>
  );
}

/** Where the configuration stands. A draft never published is not good news: a warning, not a green badge. */
function StatusBadge({ configuration }: { configuration: Configuration }) {
  const latest = configuration.latestVersion;
  const empty = !configuration.draft.purposes.length;
  const status = !latest
    ? empty
      ? 'Not published yet: add purposes, then publish'
      : 'Not published yet'
    : configuration.hasUnpublishedChanges
      ? `Version ${latest.number} is live; the draft differs`
      : `Version ${latest.number} is live and matches the draft`;
  return (
    <span className={`badge ${!latest || configuration.hasUnpublishedChanges ? 'warn' : 'ok'}`} data-status>
      {status}
    </span>
  );
}

function PublishPanel({ projectId, configuration, canPublish, dialog }: { projectId: string; configuration: Configuration; canPublish: boolean; dialog: RefObject<HTMLDialogElement | null> }) {
  const [publishing, publish] = useMutation(PublishConsentDocument);
  const latest = configuration.latestVersion;
  const reprompts = !latest || latest.consentHash !== configuration.draftConsentHash;
  const changes = differences(configuration.draft, configuration.experience, latest);
  const confirm = async () => {
    const result = await publish({ projectId });
    if (!result.error) dialog.current?.close();
  };
  const reprompt = (
    <p className={`reprompt ${reprompts ? 'warn' : 'ok'}`} data-reprompt={reprompts ? 'yes' : 'no'}>
      {!latest
        ? 'First version: every visitor will be asked.'
        : reprompts
          ? 'Visitors will be asked again: what they agree to changes (the consent hash changes).'
          : 'Visitors keep their choices: only branding or order changes (the consent hash stays the same).'}
    </p>
  );
  return (
    <div className="publish-panel card" aria-labelledby="publish-title">
      <h2 id="publish-title">Publish</h2>
      {!configuration.hasUnpublishedChanges && <p className="hint">{latest ? 'Nothing to publish: the draft matches the live version.' : 'Write your purposes and notice, save the draft, then publish.'}</p>}
      {configuration.hasUnpublishedChanges && reprompt}
      {latest && configuration.hasUnpublishedChanges && <ChangeList changes={changes} />}
      {publishing.data && !publishing.error && (
        <p role="status" className="ok-text">
          Version {publishing.data.publishConsent.version.number} published.
        </p>
      )}
      {canPublish && <ErrorState title="Publishing failed" error={publishing.error} />}
      {canPublish && (
      <dialog ref={dialog} aria-labelledby="publish-dialog-title">
        <h2 id="publish-dialog-title">Publish version {(latest?.number ?? 0) + 1}?</h2>
        {reprompt}
        {latest ? <ChangeList changes={changes} /> : <p>Sites with your key start showing this configuration at their next page load.</p>}
        <ErrorState title="Publishing failed" error={publishing.error} />
        <div className="row">
          <button type="button" className="primary" onClick={confirm} disabled={publishing.fetching} autoFocus>
            {publishing.fetching ? 'Publishing…' : 'Publish'}
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
      )}
    </div>
  );
}

function ChangeList({ changes }: { changes: ReturnType<typeof differences> }) {
  if (!changes.length) return <p>No difference in purposes, notice or experience from the latest version.</p>;
  return (
    <div className="changes">
      <p className="changes-title">Difference from the latest version:</p>
      <ul>
        {changes.map((change, i) => (
          <li key={i} className={`change ${change.kind}`}>
            <span className="badge">{change.kind}</span> {change.what}
            {change.detail ? `: ${change.detail}` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
